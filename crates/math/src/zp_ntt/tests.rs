//! Tests of the big-integer NTT and the slot maps against naive `O(D²)` references.

use super::*;
use crate::bigint::random_below;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

fn pm(base: &BigInt, e: u64, p: &BigInt) -> BigInt {
    pow_mod_u(base, e, p).unwrap()
}

fn random_vec(r: &mut ChaCha20Rng, n: usize, p: &BigInt) -> Vec<BigInt> {
    (0..n).map(|_| random_below(r, p).unwrap()).collect()
}

/// `Σ_k a_k ω^(jk)` for every `j`, by Horner (the `O(len²)` reference).
fn naive_ntt(a: &[BigInt], omega: &BigInt, p: &BigInt) -> Vec<BigInt> {
    (0..a.len())
        .map(|j| horner(a, &pm(omega, j as u64, p), p))
        .collect()
}

fn horner(f: &[BigInt], x: &BigInt, p: &BigInt) -> BigInt {
    let mut acc = BigInt::new();
    for c in f.iter().rev() {
        acc = (acc * x + c) % p;
    }
    if acc < 0 {
        acc += p;
    }
    acc
}

/// An element of order exactly `len` mod `p` (searching small bases).
fn root_of_unity(p: &BigInt, len: usize) -> BigInt {
    let pm1 = BigInt::from(p - 1u32);
    let cof = BigInt::from(&pm1 / len as u64);
    for g in 2u32.. {
        let z = pow_mod(&BigInt::from(g), &cof, p).unwrap();
        if len == 1 || pm(&z, len as u64 / 2, p) == pm1 {
            return z;
        }
    }
    unreachable!()
}

fn pow2_minus(k: u32, c: u64) -> BigInt {
    (BigInt::from(1) << k) - c
}

/// Params II at log p = 128 (seed002 Table 2): b = 2^16 − 196, M = 8; v2(p − 1) = 16.
fn p128() -> BigInt {
    slot_modulus(&pow2_minus(16, 196), 8, 2).unwrap()
}

/// Params II at log p = 1024: b = 2^16 − 28, M = 64; v2(p − 1) = 128.
fn p1024() -> BigInt {
    slot_modulus(&pow2_minus(16, 28), 64, 2).unwrap()
}

#[test]
fn ntt_matches_naive_evaluation() {
    let mut r = rng(1);
    let mut cases: Vec<(BigInt, usize)> = Vec::new();
    for k in 0..=8 {
        cases.push((BigInt::from(257), 1 << k));
    }
    for k in 0..=4 {
        cases.push((BigInt::from(17), 1 << k));
    }
    let (q128, q1024) = (p128(), p1024());
    assert_eq!(q128.significant_bits(), 128);
    assert_eq!(q1024.significant_bits(), 1024);
    for len in [2, 4, 8, 32, 64] {
        cases.push((q128.clone(), len));
    }
    for len in [4, 32, 128] {
        cases.push((q1024.clone(), len));
    }
    for (p, len) in cases {
        let omega = root_of_unity(&p, len);
        let ntt = CyclicNtt::new(&p, len, &omega).unwrap();
        assert_eq!(ntt.len(), len);
        let a = random_vec(&mut r, len, &p);
        let want = naive_ntt(&a, &omega, &p);
        let mut got = a.clone();
        ntt.forward(&mut got).unwrap();
        assert_eq!(
            got,
            want,
            "forward, p of {} bits, len {len}",
            p.significant_bits()
        );
        ntt.inverse(&mut got).unwrap();
        assert_eq!(got, a, "inverse, len {len}");
        // Unreduced and negative inputs are taken mod p.
        let shifted: Vec<BigInt> = a
            .iter()
            .enumerate()
            .map(|(i, x)| {
                if i % 2 == 0 {
                    BigInt::from(x - &p)
                } else {
                    BigInt::from(x + &p * 3u32)
                }
            })
            .collect();
        let mut got2 = shifted;
        ntt.forward(&mut got2).unwrap();
        assert_eq!(got2, want);
    }
}

/// Encoders for several sizes: Toy-A (ξ = 6), 257 = 2^8 + 1, Toy-B, a 128-bit and a 1024-bit
/// p of the form b^M + 1.
fn encoders() -> Vec<SlotEncoder> {
    vec![
        SlotEncoder::with_root(&BigInt::from(4), 2, 4, &BigInt::from(6)).unwrap(),
        SlotEncoder::new(&BigInt::from(2), 8, 16).unwrap(),
        SlotEncoder::new(&BigInt::from(2), 4, 2).unwrap(),
        SlotEncoder::new(&BigInt::from(132), 4, 8).unwrap(),
        SlotEncoder::new(&pow2_minus(16, 196), 8, 64).unwrap(),
        SlotEncoder::with_generator(&pow2_minus(16, 196), 8, 1 << 10, &BigInt::from(823_543))
            .unwrap(),
        SlotEncoder::with_generator(&pow2_minus(16, 28), 64, 128, &BigInt::from(5)).unwrap(),
    ]
}

fn slot_points(enc: &SlotEncoder) -> Vec<BigInt> {
    enc.slot_exponents()
        .iter()
        .map(|&e| pm(enc.xi(), e, enc.modulus()))
        .collect()
}

#[test]
fn toy_a_known_answers() {
    let enc = SlotEncoder::with_root(&BigInt::from(4), 2, 4, &BigInt::from(6)).unwrap();
    assert_eq!(enc.modulus(), &17);
    assert_eq!(enc.slot_exponents(), &[1, 5, 9, 13]);
    assert_eq!(slot_points(&enc), [6, 7, 11, 10].map(BigInt::from));
    let m = [1, 2, 3, 4].map(BigInt::from);
    let f = enc.pack(&m).unwrap();
    assert_eq!(f, [11, 13, 4, 9].map(BigInt::from));
    assert_eq!(enc.unpack(&f).unwrap(), m);
    // phi(lift) = lift(X^5) unpacks to the left rotation (2, 3, 4, 1).
    let lift = [3i64, 0, 0, 1, 2, -1, 1, 2];
    assert_eq!(enc.fold(&lift.map(BigInt::from)), f);
    assert_eq!(enc.galois_element(1), 5);
    let rotated = apply_galois(&lift.map(BigInt::from), 5, enc.degree());
    assert_eq!(
        enc.unpack(&enc.fold(&rotated)).unwrap(),
        [2, 3, 4, 1].map(BigInt::from)
    );
    // Pack(5, 5, 5, 5) = 5, with the diagonal lift 1 + X^4.
    assert_eq!(
        enc.pack(&[5; 4].map(BigInt::from)).unwrap(),
        [5, 0, 0, 0].map(BigInt::from)
    );
    assert_eq!(
        enc.fold(&[1, 0, 0, 0, 1, 0, 0, 0].map(BigInt::from)),
        [5, 0, 0, 0].map(BigInt::from)
    );
}

#[test]
fn unpack_is_evaluation_at_the_slot_points() {
    let mut r = rng(2);
    for enc in encoders() {
        let p = enc.modulus();
        let d = enc.slots();
        let points = slot_points(&enc);
        let mut distinct = points.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), d, "the D slot points are distinct");
        for z in &points {
            assert_eq!(
                &pm(z, d as u64, p),
                enc.b(),
                "slot points are roots of X^D − b"
            );
        }
        if d > 128 {
            continue; // the naive evaluation is quadratic
        }
        let f = random_vec(&mut r, d, p);
        let want: Vec<BigInt> = points.iter().map(|z| horner(&f, z, p)).collect();
        assert_eq!(enc.unpack(&f).unwrap(), want, "D = {d}, M = {}", enc.m());
    }
}

#[test]
fn pack_and_unpack_are_inverse() {
    let mut r = rng(3);
    for enc in encoders() {
        let p = enc.modulus();
        let m = random_vec(&mut r, enc.slots(), p);
        let f = enc.pack(&m).unwrap();
        assert_eq!(enc.unpack(&f).unwrap(), m);
        let mut g = f.clone();
        enc.unpack_in_place(&mut g).unwrap();
        enc.pack_in_place(&mut g).unwrap();
        assert_eq!(g, f);
    }
}

/// `f·g mod (X^D − b, p)` by the schoolbook product and [`SlotEncoder::fold`].
fn naive_mul(enc: &SlotEncoder, f: &[BigInt], g: &[BigInt]) -> Vec<BigInt> {
    let mut prod = vec![BigInt::new(); f.len() + g.len() - 1];
    for (i, a) in f.iter().enumerate() {
        for (j, b) in g.iter().enumerate() {
            prod[i + j] += BigInt::from(a * b);
        }
    }
    enc.fold(&prod)
}

#[test]
fn slots_multiply_pointwise() {
    let mut r = rng(4);
    for enc in encoders() {
        if enc.slots() > 128 {
            continue;
        }
        let p = enc.modulus();
        let f = random_vec(&mut r, enc.slots(), p);
        let g = random_vec(&mut r, enc.slots(), p);
        let fg = naive_mul(&enc, &f, &g);
        let (sf, sg) = (enc.unpack(&f).unwrap(), enc.unpack(&g).unwrap());
        let want: Vec<BigInt> = sf
            .iter()
            .zip(&sg)
            .map(|(a, b)| BigInt::from(a * b) % p)
            .collect();
        assert_eq!(enc.unpack(&fg).unwrap(), want);
        // Addition too.
        let sum: Vec<BigInt> = f.iter().zip(&g).map(|(a, b)| BigInt::from(a + b)).collect();
        let want: Vec<BigInt> = sf
            .iter()
            .zip(&sg)
            .map(|(a, b)| BigInt::from(a + b) % p)
            .collect();
        assert_eq!(enc.unpack(&sum).unwrap(), want);
    }
}

/// `f(X^k)` as a polynomial of degree `< 2N` (`X^(2N) = 1` in `Z_p[X]/(X^D − b)`).
fn apply_galois(f: &[BigInt], k: u64, n: usize) -> Vec<BigInt> {
    let two_n = 2 * n as u64;
    let mut out = vec![BigInt::new(); 2 * n];
    for (i, c) in f.iter().enumerate() {
        out[((i as u64 * k) % two_n) as usize] += c;
    }
    out
}

#[test]
fn galois_automorphism_rotates_left() {
    let mut r = rng(5);
    for enc in encoders() {
        let d = enc.slots();
        if d > 128 {
            continue;
        }
        let p = enc.modulus();
        let m = random_vec(&mut r, d, p);
        let f = enc.pack(&m).unwrap();
        for rot in [1, 2, d - 1, d / 2] {
            let k = enc.galois_element(rot);
            let g = enc.fold(&apply_galois(&f, k, enc.degree()));
            let mut want = m.clone();
            want.rotate_left(rot % d);
            assert_eq!(enc.unpack(&g).unwrap(), want, "rotation by {rot}, D = {d}");
        }
        assert_eq!(enc.galois_element(d), 1);
    }
}

/// seed002 §6.4: the reference generators `G` of Params I and II, `(log p, b, M, D, G)`.
fn reference_rows() -> Vec<(u32, BigInt, usize, usize, BigInt)> {
    let pw = |b: u32, e: u32| BigInt::from(Pow::pow(&BigInt::from(b), e));
    let n1 = 1usize << 14;
    let n2 = 1usize << 13;
    vec![
        (
            128,
            pow2_minus(64, 3072),
            n1 >> 13,
            1 << 13,
            BigInt::from(27),
        ),
        (256, pow2_minus(64, 64), n1 >> 12, 1 << 12, pw(5, 11)),
        (
            512,
            pow2_minus(64, 428),
            n1 >> 11,
            1 << 11,
            BigInt::from(27),
        ),
        (1024, pow2_minus(64, 8), n1 >> 10, 1 << 10, pw(3, 27)),
        (2048, pow2_minus(64, 22), n1 >> 9, 1 << 9, BigInt::from(5)),
        (4096, pow2_minus(64, 56), n1 >> 8, 1 << 8, pw(3, 43)),
        (128, pow2_minus(16, 196), n2 >> 10, 1 << 10, pw(7, 7)),
        (256, pow2_minus(16, 22), n2 >> 9, 1 << 9, pw(5, 17)),
        (512, pow2_minus(16, 72), n2 >> 8, 1 << 8, BigInt::from(5)),
        (1024, pow2_minus(16, 28), n2 >> 7, 1 << 7, BigInt::from(5)),
        (2048, pow2_minus(16, 190), n2 >> 6, 1 << 6, pw(5, 161)),
        (4095, pow2_minus(16, 288), n2 >> 5, 1 << 5, pw(3, 235)),
    ]
}

#[test]
fn reference_generators_of_every_table_2_row() {
    let mut r = rng(6);
    for (bits, b, m, d, g) in reference_rows() {
        let enc = SlotEncoder::with_generator(&b, m, d, &g).unwrap();
        let p = enc.modulus();
        assert_eq!(p.significant_bits(), bits);
        assert_eq!(&pm(enc.xi(), d as u64, p), &b);
        assert_eq!(pm(enc.xi(), (m * d) as u64, p), BigInt::from(p - 1u32));
        let msg = random_vec(&mut r, d, p);
        assert_eq!(
            enc.unpack(&enc.pack(&msg).unwrap()).unwrap(),
            msg,
            "row {bits}"
        );
    }
}

#[test]
fn root_search_finds_the_same_slot_points() {
    for (b, m, d, g) in [
        (pow2_minus(16, 28), 64, 128, BigInt::from(5)),
        (pow2_minus(16, 196), 8, 1 << 10, BigInt::from(823_543)),
    ] {
        let found = SlotEncoder::new(&b, m, d).unwrap();
        let reference = SlotEncoder::with_generator(&b, m, d, &g).unwrap();
        let mut a = slot_points(&found);
        let mut c = slot_points(&reference);
        a.sort();
        c.sort();
        assert_eq!(a, c, "different roots only permute the slots");
    }
}

#[test]
fn invalid_parameters_are_errors() {
    let b = |x: i64| BigInt::from(x);
    // Not powers of two, too small M or D.
    assert!(slot_modulus(&b(4), 3, 4).is_err());
    assert!(slot_modulus(&b(4), 2, 3).is_err());
    // M = 1 is allowed (ordinary BFV), but 2N = 8 does not divide p − 1 = 4.
    assert!(slot_modulus(&b(4), 1, 4).is_err());
    assert_eq!(slot_modulus(&b(16), 1, 8).unwrap(), 17);
    assert!(slot_modulus(&b(4), 2, 1).is_err());
    assert!(slot_modulus(&b(4), 0, 4).is_err());
    assert!(slot_modulus(&b(1), 2, 2).is_err());
    assert!(slot_modulus(&b(-4), 2, 2).is_err());
    // 65 = 8^2 + 1 is not prime.
    let e = slot_modulus(&b(8), 2, 2).unwrap_err();
    assert!(e.to_string().contains("not prime"), "{e}");
    // 37 = 6^2 + 1 is prime but 2N = 8 does not divide 36.
    let e = slot_modulus(&b(6), 2, 2).unwrap_err();
    assert!(e.to_string().contains("divide"), "{e}");
    // 17 = 4^2 + 1: 2N = 32 does not divide 16.
    assert!(slot_modulus(&b(4), 2, 8).is_err());
    // Too large a p: rejected before computing b^M.
    assert!(slot_modulus(&(BigInt::from(1) << 4096), 4, 2).is_err());
    assert!(SlotEncoder::new(&b(8), 2, 2).is_err());
    // Wrong roots and generators.
    assert!(SlotEncoder::with_root(&b(4), 2, 4, &b(3)).is_err());
    assert!(SlotEncoder::with_root(&b(4), 2, 4, &b(0)).is_err());
    // ξ = 2: 2^4 = 16 = −1 ≠ 4 mod 17.
    assert!(SlotEncoder::with_root(&b(4), 2, 4, &b(2)).is_err());
    let b512 = pow2_minus(16, 72);
    assert!(SlotEncoder::with_generator(&b512, 32, 256, &b(5)).is_ok());
    assert!(SlotEncoder::with_generator(&b512, 32, 256, &b(2)).is_err());
    assert!(SlotEncoder::with_generator(&b512, 32, 256, &b(0)).is_err());
    // Wrong lengths.
    let enc = SlotEncoder::with_root(&b(4), 2, 4, &b(6)).unwrap();
    assert!(enc.unpack(&[b(1), b(2)]).is_err());
    assert!(enc.pack(&[1; 5].map(BigInt::from)).is_err());
    assert!(enc.unpack_in_place(&mut []).is_err());
    // NTT plans.
    let p17 = b(17);
    assert!(CyclicNtt::new(&b(15), 2, &b(14)).is_err());
    assert!(CyclicNtt::new(&b(2), 1, &b(1)).is_err());
    assert!(CyclicNtt::new(&b(-17), 2, &b(16)).is_err());
    assert!(CyclicNtt::new(&p17, 3, &b(1)).is_err());
    assert!(CyclicNtt::new(&p17, 4, &b(16)).is_err()); // 16 has order 2
    assert!(CyclicNtt::new(&p17, 4, &b(0)).is_err());
    assert!(CyclicNtt::new(&p17, 4, &b(3)).is_err()); // order 16
    let ntt = CyclicNtt::new(&p17, 4, &b(4)).unwrap();
    assert!(ntt.forward(&mut [1; 3].map(BigInt::from)).is_err());
    assert!(ntt.inverse(&mut [1; 8].map(BigInt::from)).is_err());
}

/// `M = 1` (ordinary BFV, `X^N + 1` over `Z_p`): the two-row slot order, Pack/Unpack against
/// naive evaluation at `ξ^(e_i)`, products slot-wise, and `X ↦ X^5` rotating each row.
#[test]
fn m_one_is_ordinary_batching_in_two_rows() {
    let mut r = rng(11);
    // p = 17, N = D = 8 (2N = 16 | 16), and p = 12289, N = 1024 (p − 1 = 12·1024).
    for (b, d) in [(16u32, 8usize), (12288, 1024)] {
        let enc = SlotEncoder::new(&BigInt::from(b), 1, d).unwrap();
        let p = enc.modulus().clone();
        let two_n = 2 * d as u64;
        let e = enc.slot_exponents();
        assert_eq!(
            (e[0], e[1], e[d / 2], e[d / 2 + 1]),
            (1, 5, two_n - 1, two_n - 5)
        );
        let mut seen = e.to_vec();
        seen.sort_unstable();
        assert_eq!(seen, (0..d as u64).map(|i| 2 * i + 1).collect::<Vec<_>>());
        let f = random_vec(&mut r, d, &p);
        let slots = enc.unpack(&f).unwrap();
        let naive: Vec<BigInt> = slot_points(&enc)
            .iter()
            .map(|z| horner(&f, z, &p))
            .collect();
        assert_eq!(slots, naive);
        assert_eq!(enc.pack(&slots).unwrap(), f);
        // Products mod X^N + 1 are slot-wise.
        let g = random_vec(&mut r, d, &p);
        let mut fg = vec![BigInt::new(); d];
        for (i, x) in f.iter().enumerate() {
            for (j, y) in g.iter().enumerate() {
                let t = BigInt::from(x * y);
                if i + j < d {
                    fg[i + j] += t;
                } else {
                    fg[i + j - d] -= t;
                }
            }
        }
        let fg = enc.fold(&fg);
        let gs = enc.unpack(&g).unwrap();
        let want: Vec<BigInt> = slots
            .iter()
            .zip(&gs)
            .map(|(x, y)| BigInt::from(x * y) % &p)
            .collect();
        assert_eq!(enc.unpack(&fg).unwrap(), want);
        // X ↦ X^5 rotates each row of N/2 slots left by one.
        assert_eq!(enc.galois_element(1), 5);
        let rot = enc.unpack(&enc.fold(&apply_galois(&f, 5, d))).unwrap();
        let h = d / 2;
        for (i, v) in rot.iter().enumerate() {
            let (row, c) = (i / h, i % h);
            assert_eq!(v, &slots[row * h + (c + 1) % h]);
        }
    }
}

/// The 128-bit Montgomery maps equal the big-integer ones (every encoder with `p < 2^128` has
/// them; the 1024-bit one has not), and the word arithmetic is exact at the edges of a `p` just
/// below `2^128`.
#[test]
fn word_maps_match_big_integer_maps() {
    let mut r = rng(9);
    for enc in encoders() {
        let p = enc.modulus();
        assert_eq!(
            enc.fast.is_some(),
            p.significant_bits() <= 128,
            "{} bits",
            p.significant_bits()
        );
        if enc.fast.is_none() {
            continue;
        }
        for _ in 0..3 {
            let m = random_vec(&mut r, enc.slots(), p);
            let (mut fast, mut big) = (m.clone(), m.clone());
            enc.pack_in_place(&mut fast).unwrap();
            enc.pack_big(&mut big);
            assert_eq!(fast, big, "pack, D = {}", enc.slots());
            enc.unpack_in_place(&mut fast).unwrap();
            enc.unpack_big(&mut big);
            assert_eq!(fast, big, "unpack, D = {}", enc.slots());
            assert_eq!(fast, m);
        }
        // unreduced and negative inputs are taken mod p, as by the big-integer maps
        let odd: Vec<BigInt> = (0..enc.slots())
            .map(|i| BigInt::from(p * (i as u32 + 1)) - (i as i64 - 3))
            .collect();
        let (mut fast, mut big) = (odd.clone(), odd.clone());
        enc.unpack_in_place(&mut fast).unwrap();
        for x in big.iter_mut() {
            reduce(x, p);
        }
        enc.unpack_big(&mut big);
        assert_eq!(fast, big);
    }
    // p = 2^128 − 159 is prime: products and sums near p and near 2^128.
    let p = (BigInt::from(1u32) << 128u32) - 159u32;
    assert!(is_probable_prime(&p));
    let pw = p.to_u128().unwrap();
    let mont = Mont128::new(pw);
    let r_inv = (BigInt::from(1u32) << 128u32).invert(&p).unwrap();
    for (a, b) in [
        (pw - 1, pw - 1),
        (pw - 1, 1),
        (0, pw - 1),
        (1u128 << 127, pw - 2),
        (12345, 67890),
    ] {
        let want = BigInt::from(a) * BigInt::from(b) * &r_inv % &p;
        assert_eq!(BigInt::from(mont.mul(a, b)), want, "{a} · {b}");
        assert_eq!(BigInt::from(mont.add(a, b)), (BigInt::from(a) + b) % &p);
        let diff = (BigInt::from(a) - b) % &p;
        let diff = if diff < 0 { diff + &p } else { diff };
        assert_eq!(BigInt::from(mont.sub(a, b)), diff);
    }
}
