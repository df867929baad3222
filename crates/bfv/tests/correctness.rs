//! Decrypt(f(Enc(x))) = f(x) for random inputs, with the measured noise checked against the
//! worst-case bounds of `coterie_bfv::noise` after every operation.

use coterie_bfv::noise::{NoiseBounds, invariant_noise_log2};
use coterie_bfv::{Ciphertext, Context, Params, Plaintext, SecretKey};
use coterie_math::ntt::{automorphism_naive as automorphism, negacyclic_mul_naive as poly_mul};
use coterie_math::prg::Csprng;
use rand::Rng;

fn rng(tag: u8) -> Csprng {
    Csprng::insecure_from_seed_for_tests([tag; 32])
}

fn random_values(r: &mut Csprng, n: usize, t: u64) -> Vec<u64> {
    (0..n).map(|_| r.next_u64() % t).collect()
}

fn check_noise(sk: &SecretKey, ct: &Ciphertext, bound: f64, what: &str) -> f64 {
    let v = invariant_noise_log2(sk, ct).unwrap();
    // The fast (modulus-switched) decryption agrees with the exact one at the ciphertext's level.
    assert_eq!(
        sk.decrypt(ct).unwrap(),
        sk.decrypt_exact_at_level(ct).unwrap(),
        "{what}: fast and exact decryption differ"
    );
    assert!(
        v <= bound,
        "{what}: measured noise 2^{v:.1} above the bound 2^{bound:.1}"
    );
    eprintln!("{what}: noise 2^{v:.1}, bound 2^{bound:.1}");
    assert!(v < -1.0, "{what}: noise 2^{v:.1} too large to decrypt");
    v
}

#[test]
fn toy_coefficient_circuit_with_noise_bounds() {
    let ctx = Context::new(Params::insecure_toy(256, 256).unwrap()).unwrap();
    let mut r = rng(1);
    let sk = SecretKey::generate(&ctx, &mut r);
    let pk = sk.public_key(&mut r);
    let rlk = sk.relin_key(&mut r);
    let nb = NoiseBounds::new(&sk).unwrap();
    let n = ctx.degree();
    let t = ctx.scalar_t().unwrap();
    let (x, y) = (random_values(&mut r, n, t), random_values(&mut r, n, t));
    let cx = pk
        .encrypt(&Plaintext::encode_coefficients(&ctx, &x).unwrap(), &mut r)
        .unwrap();
    let cy = sk
        .encrypt_symmetric(&Plaintext::encode_coefficients(&ctx, &y).unwrap(), &mut r)
        .unwrap();
    let vx = check_noise(&sk, &cx, nb.fresh_public(), "fresh pk");
    let vy = check_noise(&sk, &cy, nb.fresh_symmetric(), "fresh sym");
    // add, sub, neg
    let s = cx.add(&cy).unwrap();
    let want: Vec<u64> = x.iter().zip(&y).map(|(a, b)| (a + b) % t).collect();
    assert_eq!(sk.decrypt(&s).unwrap().coefficients().unwrap(), &want[..]);
    check_noise(&sk, &s, nb.add(vx, vy), "add");
    let d = cx.sub(&cy).unwrap().neg();
    let want: Vec<u64> = x.iter().zip(&y).map(|(a, b)| (b + t - a) % t).collect();
    assert_eq!(sk.decrypt(&d).unwrap().coefficients().unwrap(), &want[..]);
    // plaintext ops
    let p = random_values(&mut r, n, t);
    let pp = Plaintext::encode_coefficients(&ctx, &p).unwrap();
    let m = cx.mul_plain(&pp).unwrap();
    assert_eq!(
        sk.decrypt(&m).unwrap().coefficients().unwrap(),
        &poly_mul(&x, &p, t)[..]
    );
    check_noise(&sk, &m, nb.mul_plain(vx, pp.norm_inf()), "mul_plain");
    let ap = cx.add_plain(&pp).unwrap().sub_plain(&pp).unwrap();
    assert_eq!(sk.decrypt(&ap).unwrap().coefficients().unwrap(), &x[..]);
    // product, unrelinearized and relinearized
    let xy = poly_mul(&x, &y, t);
    let c3 = cx.mul_no_relin(&cy).unwrap();
    assert_eq!(c3.len(), 3);
    assert_eq!(sk.decrypt(&c3).unwrap().coefficients().unwrap(), &xy[..]);
    let c2 = c3.relinearize(&rlk).unwrap();
    assert_eq!(sk.decrypt(&c2).unwrap().coefficients().unwrap(), &xy[..]);
    let top = ctx.max_level();
    let vm = check_noise(&sk, &c2, nb.mul(vx, vy, top).unwrap(), "mul");
    // Galois automorphism in coefficient encoding
    let g = 3;
    let gk = sk.galois_key(g, &mut r).unwrap();
    let rot = c2.apply_galois(&gk).unwrap();
    assert_eq!(
        sk.decrypt(&rot).unwrap().coefficients().unwrap(),
        &automorphism(&xy, g, t)[..]
    );
    let vr = check_noise(&sk, &rot, nb.rotate(vm, top).unwrap(), "galois");
    // modulus switching
    let ms = rot.mod_switch_to_next().unwrap();
    assert_eq!(ms.level(), top - 1);
    assert_eq!(
        sk.decrypt(&ms).unwrap().coefficients().unwrap(),
        &automorphism(&xy, g, t)[..]
    );
    check_noise(&sk, &ms, nb.mod_switch(vr, top).unwrap(), "mod switch");
    // One-step switch to the last prime.
    let ms0 = rot.mod_switch_to(0).unwrap();
    assert_eq!(
        sk.decrypt(&ms0).unwrap().coefficients().unwrap(),
        &automorphism(&xy, g, t)[..]
    );
    check_noise(&sk, &ms0, nb.mod_switch(vr, 1).unwrap(), "mod switch to 0");
    // Products at the lower level still work.
    let cy_low = cy.mod_switch_to(top - 1).unwrap();
    let low = ms.mul(&cy_low, &rlk).unwrap();
    let want = poly_mul(&automorphism(&xy, g, t), &y, t);
    assert_eq!(sk.decrypt(&low).unwrap().coefficients().unwrap(), &want[..]);
    assert!(ms.mul(&cy, &rlk).is_err(), "levels differ");
}

#[test]
fn toy_simd_rotations_and_row_swap() {
    let ctx = Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap();
    let mut r = rng(2);
    let sk = SecretKey::generate(&ctx, &mut r);
    let pk = sk.public_key(&mut r);
    let rlk = sk.relin_key(&mut r);
    let gks = sk.galois_keys(&[1, 5, -3], true, &mut r).unwrap();
    let n = ctx.degree();
    let h = n / 2;
    let t = ctx.scalar_t().unwrap();
    let (x, y) = (random_values(&mut r, n, t), random_values(&mut r, n, t));
    let cx = pk
        .encrypt(&Plaintext::encode_simd(&ctx, &x).unwrap(), &mut r)
        .unwrap();
    let cy = pk
        .encrypt(&Plaintext::encode_simd(&ctx, &y).unwrap(), &mut r)
        .unwrap();
    let prod = cx.mul(&cy, &rlk).unwrap();
    let want: Vec<u64> = x.iter().zip(&y).map(|(a, b)| a * b % t).collect();
    assert_eq!(sk.decrypt(&prod).unwrap().decode_simd().unwrap(), want);
    // Squaring (the operand-sharing path).
    let sq = cx.mul(&cx, &rlk).unwrap();
    let want_sq: Vec<u64> = x.iter().map(|a| a * a % t).collect();
    assert_eq!(sk.decrypt(&sq).unwrap().decode_simd().unwrap(), want_sq);
    for k in [1i64, 5, -3] {
        let rot = prod.rotate_rows(k, &gks).unwrap();
        let got = sk.decrypt(&rot).unwrap().decode_simd().unwrap();
        for row in 0..2 {
            for c in 0..h {
                let src = (c as i64 + k).rem_euclid(h as i64) as usize;
                assert_eq!(got[row * h + c], want[row * h + src], "k = {k}");
            }
        }
    }
    let sw = prod.swap_rows(&gks).unwrap();
    let got = sk.decrypt(&sw).unwrap().decode_simd().unwrap();
    assert_eq!(&got[..h], &want[h..]);
    assert_eq!(&got[h..], &want[..h]);
    assert!(prod.rotate_rows(2, &gks).is_err(), "no key for 2");
}

/// Seed 001's set: depth-5 circuit of products (a squaring chain mixed with fresh factors,
/// additions and automorphisms), noise checked against the bound after every product.
#[test]
fn seed001_depth5_circuit() {
    let ctx = Context::new(Params::seed001().unwrap()).unwrap();
    let mut r = rng(3);
    let sk = SecretKey::generate(&ctx, &mut r);
    let pk = sk.public_key(&mut r);
    let rlk = sk.relin_key(&mut r);
    let gk = sk.galois_key(5, &mut r).unwrap();
    let nb = NoiseBounds::new(&sk).unwrap();
    let n = ctx.degree();
    let t = ctx.scalar_t().unwrap();
    // Sparse-ish inputs keep the O(N^2) reference product affordable: few nonzero coefficients.
    let sparse = |r: &mut Csprng| {
        let mut v = vec![0u64; n];
        for _ in 0..4 {
            let i = (r.next_u64() % n as u64) as usize;
            v[i] = r.next_u64() % t;
        }
        v
    };
    let mut want = sparse(&mut r);
    let mut ct = pk
        .encrypt(
            &Plaintext::encode_coefficients(&ctx, &want).unwrap(),
            &mut r,
        )
        .unwrap();
    let mut v = check_noise(&sk, &ct, nb.fresh_public(), "fresh");
    let top = ctx.max_level();
    for depth in 1..=5 {
        let f = sparse(&mut r);
        let cf = pk
            .encrypt(&Plaintext::encode_coefficients(&ctx, &f).unwrap(), &mut r)
            .unwrap();
        let vf = nb.fresh_public();
        // ct ← σ_5(ct·f) + ct
        let prod = ct.mul(&cf, &rlk).unwrap();
        v = check_noise(&sk, &prod, nb.mul(v, vf, top).unwrap(), "depth mul");
        let rot = prod.apply_galois(&gk).unwrap();
        let vr = check_noise(&sk, &rot, nb.rotate(v, top).unwrap(), "depth rot");
        ct = rot.add(&ct).unwrap();
        let pf = poly_mul(&want, &f, t);
        let rf = automorphism(&pf, 5, t);
        want = rf.iter().zip(&want).map(|(a, b)| (a + b) % t).collect();
        // the add: bound by the sum of the two bounds
        v = check_noise(&sk, &ct, nb.add(vr, v + 0.0), &format!("depth {depth} add"));
        assert_eq!(
            sk.decrypt(&ct).unwrap().coefficients().unwrap(),
            &want[..],
            "depth {depth}"
        );
    }
}

/// Heavy: the largest HE-standard sets (keygen, encryption, a product and a rotation each), with
/// noise bounds. Run with `--ignored`.
#[test]
#[ignore]
fn he_standard_sets_heavy() {
    for params in [
        Params::he_std_128_n4096(65537).unwrap(),
        Params::he_std_128_n16384(65537).unwrap(),
        Params::he_std_128_n32768(65537).unwrap(),
    ] {
        let ctx = Context::new(params).unwrap();
        let mut r = rng(7);
        let sk = SecretKey::generate(&ctx, &mut r);
        let pk = sk.public_key(&mut r);
        let rlk = sk.relin_key(&mut r);
        let gks = sk.galois_keys(&[1], false, &mut r).unwrap();
        let nb = NoiseBounds::new(&sk).unwrap();
        let n = ctx.degree();
        let t = ctx.scalar_t().unwrap();
        let (x, y) = (random_values(&mut r, n, t), random_values(&mut r, n, t));
        let cx = pk
            .encrypt(&Plaintext::encode_simd(&ctx, &x).unwrap(), &mut r)
            .unwrap();
        let cy = pk
            .encrypt(&Plaintext::encode_simd(&ctx, &y).unwrap(), &mut r)
            .unwrap();
        let v = check_noise(&sk, &cx, nb.fresh_public(), "fresh");
        let mut ct = cx.mul(&cy, &rlk).unwrap();
        let mut want: Vec<u64> = x.iter().zip(&y).map(|(a, b)| a * b % t).collect();
        let mut v = check_noise(&sk, &ct, nb.mul(v, v, ctx.max_level()).unwrap(), "mul");
        let depth = ctx.max_level() / 2;
        for _ in 1..depth {
            ct = ct.mul(&cy, &rlk).unwrap();
            want = want.iter().zip(&y).map(|(a, b)| a * b % t).collect();
            v = check_noise(
                &sk,
                &ct,
                nb.mul(v, nb.fresh_public(), ctx.max_level()).unwrap(),
                "chain",
            );
        }
        let rot = ct.rotate_rows(1, &gks).unwrap();
        check_noise(&sk, &rot, nb.rotate(v, ctx.max_level()).unwrap(), "rotate");
        let got = sk.decrypt(&rot).unwrap().decode_simd().unwrap();
        let h = n / 2;
        for c in 0..h {
            assert_eq!(got[c], want[(c + 1) % h]);
        }
    }
}

#[test]
fn power_of_two_gadget_keys_within_noise_bounds() {
    use coterie_bfv::Decomposition;
    let ctx = Context::new(Params::insecure_toy(1024, 65537).unwrap()).unwrap();
    let mut r = rng(41);
    let sk = SecretKey::generate(&ctx, &mut r);
    let nb = NoiseBounds::new(&sk).unwrap();
    let t = ctx.scalar_t().unwrap();
    let top = ctx.max_level();
    let x = random_values(&mut r, 1024, t);
    let pk = sk.public_key(&mut r);
    let cx = pk
        .encrypt(&Plaintext::encode_simd(&ctx, &x).unwrap(), &mut r)
        .unwrap();
    let fresh = check_noise(&sk, &cx, nb.fresh_public(), "fresh");
    for base_log in [8u32, 20, 40] {
        let dec = Decomposition::PowerOfTwo { base_log };
        let rlk = sk.relin_key_with(dec, &mut r).unwrap();
        assert_eq!(
            rlk.key_switch_key().rows(),
            120usize.div_ceil(base_log as usize)
        );
        let sq = cx.mul(&cx, &rlk).unwrap();
        check_noise(
            &sk,
            &sq,
            nb.mul_with(fresh, fresh, top, dec).unwrap(),
            "mul 2^β",
        );
        let want: Vec<u64> = x.iter().map(|v| v * v % t).collect();
        assert_eq!(sk.decrypt(&sq).unwrap().decode_simd().unwrap(), want);
        // The top-level key serves lower levels too (the gadget B^i does not depend on Q_l).
        let low = cx.mod_switch_to(top - 1).unwrap();
        assert_eq!(
            sk.decrypt(&low.mul(&low, &rlk).unwrap())
                .unwrap()
                .decode_simd()
                .unwrap(),
            want
        );
        let gk = sk.galois_key_with(5, dec, &mut r).unwrap();
        let rot = cx.apply_galois(&gk).unwrap();
        let bound = log2_sum(fresh, nb.key_switch(top, dec).unwrap());
        check_noise(&sk, &rot, bound, "rotate 2^β");
    }
}

/// `log2(2^a + 2^b)`.
fn log2_sum(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    hi + (1.0 + (lo - hi).exp2()).log2()
}
