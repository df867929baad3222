//! MatriGear's generalized BFV (seed 002 §3): plaintext ring `Z_p[X]/(X^D − b)`, `p = b^M + 1`.
//! Every homomorphic result is checked against a naive big-integer reference computed in
//! `Z_p[X]/(X^D − b)`; `M = 1` runs through the same code and is ordinary BFV with `t = p`.

use coterie_bfv::params::PlaintextModulus;
use coterie_bfv::{
    Ciphertext, Context, Decomposition, EncRandomness, Params, Plaintext, SecretKey,
};
use coterie_math::bigint::BigInt;
use coterie_math::prg::Csprng;
use rand::Rng;

struct Ring {
    d: usize,
    n: usize,
    b: BigInt,
    p: BigInt,
}

impl Ring {
    fn of(ctx: &Context) -> Ring {
        let pm = ctx.plaintext_modulus().clone();
        let PlaintextModulus::Cyclotomic { d, ref b, .. } = pm else {
            panic!("cyclotomic parameters expected")
        };
        Ring {
            d,
            n: ctx.degree(),
            b: b.clone(),
            p: pm.modulus(),
        }
    }

    fn reduce(&self, x: BigInt) -> BigInt {
        coterie_math::bigint::reduce(&x, &self.p).unwrap()
    }

    /// `X^e` in `Z_p[X]/(X^D − b)` as `(coefficient, index)`: `X^{2N} = 1`, `X^{qD + r} = b^q X^r`.
    fn monomial(&self, e: usize) -> (BigInt, usize) {
        let e = e % (2 * self.n);
        let (q, r) = (e / self.d, e % self.d);
        let c = self.b.clone().pow_mod(&BigInt::from(q), &self.p).unwrap();
        (c, r)
    }

    fn mul(&self, x: &[BigInt], y: &[BigInt]) -> Vec<BigInt> {
        let mut out = vec![BigInt::new(); self.d];
        for (i, a) in x.iter().enumerate() {
            for (j, c) in y.iter().enumerate() {
                let (m, k) = self.monomial(i + j);
                out[k] += BigInt::from(a * c) * m;
            }
        }
        out.into_iter().map(|v| self.reduce(v)).collect()
    }

    fn add(&self, x: &[BigInt], y: &[BigInt]) -> Vec<BigInt> {
        x.iter()
            .zip(y)
            .map(|(a, c)| self.reduce(BigInt::from(a + c)))
            .collect()
    }

    fn automorphism(&self, x: &[BigInt], g: usize) -> Vec<BigInt> {
        let mut out = vec![BigInt::new(); self.d];
        for (i, a) in x.iter().enumerate() {
            let (m, k) = self.monomial(i * g);
            out[k] += BigInt::from(a * &m);
        }
        out.into_iter().map(|v| self.reduce(v)).collect()
    }

    fn random(&self, r: &mut Csprng) -> Vec<BigInt> {
        (0..self.d)
            .map(|_| {
                let mut bytes = vec![0u8; self.p.significant_bits() as usize / 8 + 8];
                r.fill_bytes(&mut bytes);
                self.reduce(
                    coterie_math::bigint::from_le_bytes_bounded(&bytes, bytes.len()).unwrap(),
                )
            })
            .collect()
    }
}

fn run(params: Params, seed: u8) {
    let ctx = Context::new(params).unwrap();
    let ring = Ring::of(&ctx);
    let mut r = Csprng::insecure_from_seed_for_tests([seed; 32]);
    let sk = SecretKey::generate(&ctx, &mut r);
    let pk = sk.public_key(&mut r);
    let rlk = sk.relin_key(&mut r);
    let rlk2 = sk
        .relin_key_with(Decomposition::PowerOfTwo { base_log: 30 }, &mut r)
        .unwrap();
    let m = ctx.degree() / ring.d;
    // X → X^g with g ≡ 1 mod 2M is an automorphism of R/(X^D − b) (seed 002 §3.3).
    let g = (5usize.pow((m / 2).max(1) as u32)) % (2 * ctx.degree());
    let g = if m == 1 { 5 } else { g };
    let gk = sk.galois_key(g, &mut r).unwrap();

    let x = ring.random(&mut r);
    let y = ring.random(&mut r);
    let px = Plaintext::from_representative(&ctx, &x).unwrap();
    let py = Plaintext::from_representative(&ctx, &y).unwrap();
    // The lift is small and folds back.
    let b = ring.b.to_u64().unwrap();
    assert!(px.norm_inf() <= b / 2, "{} > b/2", px.norm_inf());
    assert!(py.norm_inf() <= b / 2, "{} > b/2", py.norm_inf());
    // Extreme representatives: 0, 1, p − 1, (p − 1)/2, (p + 1)/2 all lift within b/2.
    let pm1 = BigInt::from(&ring.p - 1u32);
    let edge = [
        BigInt::new(),
        BigInt::from(1u32),
        pm1.clone(),
        BigInt::from(&pm1 >> 1u32),
        BigInt::from(&pm1 >> 1u32) + 1u32,
    ];
    let pe = Plaintext::from_representative(&ctx, &edge).unwrap();
    assert!(pe.norm_inf() <= b / 2);
    assert_eq!(pe.representative()[..5], edge);
    assert_eq!(
        Plaintext::from_lift(&ctx, px.small_lift().unwrap()).unwrap(),
        px
    );
    assert_eq!(px.representative(), x);

    let cx = pk.encrypt(&px, &mut r).unwrap();
    let cy = sk.encrypt_symmetric(&py, &mut r).unwrap();
    assert_eq!(
        sk.decrypt(&cx).unwrap().representative(),
        x,
        "encrypt/decrypt"
    );
    assert_eq!(sk.decrypt(&cy).unwrap().representative(), y, "symmetric");
    // Encryption with given randomness is deterministic and decrypts.
    let rnd = EncRandomness::sample(&ctx, &mut r);
    let c1 = pk.encrypt_with(&px, &rnd).unwrap();
    assert_eq!(c1, pk.encrypt_with(&px, &rnd).unwrap());
    assert_eq!(sk.decrypt(&c1).unwrap(), px);

    let sum = ring.add(&x, &y);
    assert_eq!(
        sk.decrypt(&cx.add(&cy).unwrap()).unwrap().representative(),
        sum,
        "add"
    );
    assert_eq!(
        sk.decrypt(&cx.add_plain(&py).unwrap())
            .unwrap()
            .representative(),
        sum,
        "add_plain"
    );
    assert_eq!(
        sk.decrypt(&cx.add(&cy).unwrap().sub_plain(&py).unwrap())
            .unwrap()
            .representative(),
        x,
        "sub_plain"
    );
    let prod = ring.mul(&x, &y);
    assert_eq!(
        sk.decrypt(&cx.mul_plain(&py).unwrap())
            .unwrap()
            .representative(),
        prod,
        "mul_plain"
    );
    let c3 = cx.mul_no_relin(&cy).unwrap();
    assert_eq!(c3.len(), 3);
    assert_eq!(
        sk.decrypt(&c3).unwrap().representative(),
        prod,
        "mul_no_relin"
    );
    let cxy = c3.relinearize(&rlk).unwrap();
    assert_eq!(
        sk.decrypt(&cxy).unwrap().representative(),
        prod,
        "mul + relin (RNS)"
    );
    let cxy2 = cx.mul(&cy, &rlk2).unwrap();
    assert_eq!(
        sk.decrypt(&cxy2).unwrap().representative(),
        prod,
        "mul + relin (2^30)"
    );
    // A product by a lifted operand: the same words as the plain product, and it reuses the
    // lift for a second product.
    let lifted = cx.extended().unwrap();
    assert_eq!(
        cy.mul_extended(&lifted, &rlk).unwrap(),
        cy.mul(&cx, &rlk).unwrap()
    );
    assert_eq!(
        cxy.mul_extended(&lifted, &rlk).unwrap(),
        cxy.mul(&cx, &rlk).unwrap()
    );
    assert!(
        c3.mul_extended(&lifted, &rlk).is_err(),
        "a 3-part operand is refused"
    );
    assert!(c3.extended().is_err());
    // Depth 2.
    let cxyx = cxy.mul(&cx, &rlk).unwrap();
    assert_eq!(
        sk.decrypt(&cxyx).unwrap().representative(),
        ring.mul(&prod, &x),
        "depth 2"
    );
    // Rotation (Galois automorphism).
    let rot = cx.apply_galois(&gk).unwrap();
    assert_eq!(
        sk.decrypt(&rot).unwrap().representative(),
        ring.automorphism(&x, g),
        "automorphism X → X^{g}"
    );
    // A modulus switch keeps the plaintext.
    let low = cxy.mod_switch_to_next().unwrap();
    assert_eq!(
        sk.decrypt_exact_at_level(&low).unwrap().representative(),
        prod
    );
    // Serialization round trips.
    assert_eq!(Plaintext::from_bytes(&ctx, &px.to_bytes()).unwrap(), px);
    assert_eq!(Ciphertext::from_bytes(&ctx, &cxy.to_bytes()).unwrap(), cxy);
}

#[test]
fn cyclotomic_128_bit_p_matches_reference() {
    // N = 1024, M = 8, D = 128, p = 65340^8 + 1 (128-bit prime, 2048 | p − 1).
    run(Params::insecure_toy_cyclotomic(1024, 65340, 8).unwrap(), 1);
}

#[test]
fn cyclotomic_toy_b_matches_reference() {
    // Seed 002's Toy-B: N = 32, M = 4, D = 8, b = 132, p = 303595777.
    run(Params::insecure_toy_cyclotomic(32, 132, 4).unwrap(), 2);
}

#[test]
fn m_equal_one_is_ordinary_bfv() {
    // M = 1: X^N − b ≡ X^N + 1 (mod p), p = 12289 = b + 1: plain BFV with t = p through the
    // cyclotomic code path, checked against the negacyclic reference mod p.
    let params = Params::insecure_toy_cyclotomic(1024, 12288, 1).unwrap();
    run(params.clone(), 3);
    let ctx = Context::new(params).unwrap();
    let mut r = Csprng::insecure_from_seed_for_tests([4; 32]);
    let sk = SecretKey::generate(&ctx, &mut r);
    let rlk = sk.relin_key(&mut r);
    let x: Vec<i64> = (0..1024).map(|i| (i * 37 % 12289) as i64).collect();
    let y: Vec<i64> = (0..1024).map(|i| (i * i % 12289) as i64).collect();
    let big = |v: &[i64]| v.iter().map(|&c| BigInt::from(c)).collect::<Vec<_>>();
    let px = Plaintext::from_representative(&ctx, &big(&x)).unwrap();
    let py = Plaintext::from_representative(&ctx, &big(&y)).unwrap();
    let cx = sk.encrypt_symmetric(&px, &mut r).unwrap();
    let cy = sk.encrypt_symmetric(&py, &mut r).unwrap();
    let got = sk
        .decrypt(&cx.mul(&cy, &rlk).unwrap())
        .unwrap()
        .representative();
    // Negacyclic product mod p.
    let p = 12289i128;
    let mut want = vec![0i128; 1024];
    for i in 0..1024 {
        for j in 0..1024 {
            let v = x[i] as i128 * y[j] as i128;
            if i + j < 1024 {
                want[i + j] += v;
            } else {
                want[i + j - 1024] -= v;
            }
        }
    }
    let want: Vec<BigInt> = want.iter().map(|v| BigInt::from(v.rem_euclid(p))).collect();
    assert_eq!(got, want);
}

#[test]
fn cyclotomic_and_scalar_plaintexts_do_not_mix() {
    let cy = Context::new(Params::insecure_toy_cyclotomic(32, 132, 4).unwrap()).unwrap();
    assert!(Plaintext::encode_coefficients(&cy, &[1]).is_err());
    assert!(Plaintext::encode_simd(&cy, &[1]).is_err());
    let sc = Context::new(Params::insecure_toy(32, 257).unwrap()).unwrap();
    assert!(Plaintext::from_representative(&sc, &[BigInt::from(1)]).is_err());
    assert!(Plaintext::from_representative(&cy, &vec![BigInt::from(1); 9]).is_err());
    assert!(Plaintext::from_lift(&cy, vec![i64::MIN; 32]).is_err());
    assert!(Plaintext::from_lift(&cy, vec![1; 31]).is_err());
    let pt = Plaintext::from_representative(&cy, &[BigInt::from(5)]).unwrap();
    assert!(pt.coefficients().is_err());
    assert!(Plaintext::from_bytes(&sc, &pt.to_bytes()).is_err());
}

/// Seed 002 §6.2 Table 2 and §8 tests 1, 2 and 4: every named Params I (N = 2^14, log q = 426)
/// and II (N = 2^13, log q = 230) row validates (p = b^M + 1 prime, 2N | b^M) with the stated
/// size of p; the reference code's generator G of §6.4 satisfies G^((p−1)/(2M)) = b and gives a
/// root ξ with ξ^D = b, ξ^N = −1; Pack/Unpack round-trip with the small lift within b/2.
#[test]
fn matrigear_named_sets_generators_and_round_trips() {
    use coterie_bfv::params::{MATRIGEAR_LOG_P, MatriGearSet};
    use coterie_math::zp_ntt::SlotEncoder;
    let mut r = Csprng::insecure_from_seed_for_tests([9; 32]);
    for set in [MatriGearSet::I, MatriGearSet::II] {
        for bits in MATRIGEAR_LOG_P {
            let p = Params::matrigear(set, bits).unwrap();
            let pm = p.plaintext_modulus().clone();
            let PlaintextModulus::Cyclotomic { d, ref b, m } = pm else {
                panic!("cyclotomic expected")
            };
            assert_eq!(d * m, p.degree());
            let got = pm.modulus().significant_bits();
            // Params II at 4096 bits gives a 4095-bit p (65248^256 < 2^4096, seed 002 §6.2).
            assert!(
                got == bits || (got == 4095 && bits == 4096 && set == MatriGearSet::II),
                "{set:?} {bits}: {b}^{m} + 1 has {got} bits"
            );
            let log_q: u32 = p.moduli().iter().map(|q| 64 - q.leading_zeros()).sum();
            // I: the reference code's seven 61-bit primes; II: Table 2's log q = 230 in four.
            let want_q = if set == MatriGearSet::I { 427 } else { 230 };
            assert_eq!(log_q, want_q, "{set:?}");
            assert_eq!(p.moduli().len(), if set == MatriGearSet::I { 7 } else { 4 });
            let g = Params::matrigear_generator(set, bits).unwrap();
            let enc = SlotEncoder::with_generator(b, m, d, &g)
                .unwrap_or_else(|e| panic!("{set:?} {bits}: {e}"));
            assert_eq!(enc.modulus(), &pm.modulus());
            // A wrong generator is refused (G + 1 is not one for any row).
            assert!(SlotEncoder::with_generator(b, m, d, &(g + 1u32)).is_err());
            let slots: Vec<BigInt> = (0..d)
                .map(|_| {
                    let mut bytes = vec![0u8; bits as usize / 8 + 8];
                    r.fill_bytes(&mut bytes);
                    coterie_math::bigint::from_le_bytes_bounded(&bytes, bytes.len()).unwrap()
                        % enc.modulus()
                })
                .collect();
            let packed = enc.pack(&slots).unwrap();
            assert_eq!(enc.unpack(&packed).unwrap(), slots, "{set:?} {bits}");
        }
    }
    // Params III (Table 2; the moduli counts of §6.4): M = 1, N = D, b = p − 1, 2N | b.
    for (bits, log_n, primes) in [(128u32, 15u32, 12usize), (256, 16, 20), (512, 17, 37)] {
        let p = Params::matrigear(MatriGearSet::III, bits).unwrap();
        let pm = p.plaintext_modulus().clone();
        let PlaintextModulus::Cyclotomic { d, ref b, m } = pm else {
            panic!("cyclotomic expected")
        };
        assert_eq!((p.degree(), d, m), (1 << log_n, 1 << log_n, 1));
        assert_eq!(p.moduli().len(), primes);
        assert!(p.moduli().iter().all(|&q| q >> 60 == 1), "61-bit primes");
        assert_eq!(pm.modulus().significant_bits(), bits);
        assert_eq!(BigInt::from(b + 1u32), pm.modulus());
        assert!(b.is_divisible_2pow(log_n + 1), "2N | p − 1");
        assert!(p.security().starts_with("128-bit"));
    }
    assert!(matches!(
        Params::matrigear(MatriGearSet::III, 1024),
        Err(coterie_bfv::Error::Unsupported(_))
    ));
    assert!(matches!(
        Params::matrigear(MatriGearSet::III, 2048),
        Err(coterie_bfv::Error::InvalidParameter(_))
    ));
}

/// `M = 1` is ordinary BFV with `t = p`, bit for bit: with the same key and randomness, the
/// cyclotomic encryption of `m` (`Δ = −round(Q/p)` times the centered lift) is the scalar
/// encryption of `t − m` (`Δ = ⌊Q/t⌋` times `t − m`) when `round(Q/t) = ⌊Q/t⌋` and every `m`
/// lies in `(t/2, t)` (so the lift is `m − t`; for `m ≤ t/2` the two differ by `Q mod t`, the
/// scalar encoding's own offset); and products decrypt alike.
#[test]
fn m_equal_one_ciphertexts_are_scalar_bfv_ciphertexts() {
    use coterie_bfv::params::{SecretDistribution, moduli_for_bits};
    let n = 1024;
    let q = moduli_for_bits(n, 180).unwrap();
    let qq: BigInt = q.iter().fold(BigInt::from(1u32), |a, &x| a * x);
    // The first prime t ≡ 1 mod 2N with Q mod t < t/2 (so round(Q/t) = ⌊Q/t⌋).
    let t = (1..)
        .map(|k| k * 2 * n as u64 + 1)
        .find(|&t| {
            coterie_math::primes::is_prime(t) && BigInt::from(&qq % t) < t / 2 && t > 1 << 20
        })
        .unwrap();
    let s = SecretDistribution::Ternary;
    let scalar = Context::new(Params::custom("s", n, &q, t, 3.2, s, "insecure").unwrap()).unwrap();
    let pm = PlaintextModulus::Cyclotomic {
        d: n,
        b: BigInt::from(t - 1),
        m: 1,
    };
    let cyclo =
        Context::new(Params::custom_with("c", n, &q, pm, 3.2, s, "insecure").unwrap()).unwrap();
    let keys = |ctx: &Context| {
        let mut r = Csprng::insecure_from_seed_for_tests([31; 32]);
        let sk = SecretKey::generate(ctx, &mut r);
        let rlk = sk.relin_key(&mut r);
        (sk, rlk)
    };
    let ((ss, srlk), (cs, crlk)) = (keys(&scalar), keys(&cyclo));
    let upper = |v: u64| t / 2 + 1 + v % (t / 2 - 1);
    let x: Vec<u64> = (0..n as u64).map(|i| upper(i * 7919 + 3)).collect();
    let y: Vec<u64> = (0..n as u64).map(|i| upper(i * i + 11)).collect();
    let neg = |v: &[u64]| v.iter().map(|&c| (t - c) % t).collect::<Vec<_>>();
    let big = |v: &[u64]| v.iter().map(|&c| BigInt::from(c)).collect::<Vec<_>>();
    let enc_s = |v: &[u64], seed: u8| {
        let mut r = Csprng::insecure_from_seed_for_tests([seed; 32]);
        ss.encrypt_symmetric(&Plaintext::encode_coefficients(&scalar, v).unwrap(), &mut r)
            .unwrap()
    };
    let enc_c = |v: &[u64], seed: u8| {
        let mut r = Csprng::insecure_from_seed_for_tests([seed; 32]);
        let pt = Plaintext::from_representative(&cyclo, &big(v)).unwrap();
        cs.encrypt_symmetric(&pt, &mut r).unwrap()
    };
    let (sx, cx) = (enc_s(&neg(&x), 1), enc_c(&x, 1));
    for (a, b) in sx.parts().iter().zip(cx.parts()) {
        assert!(a.data() == b.data(), "Enc_c(m) = Enc_s(t − m)");
    }
    let (sy, cy) = (enc_s(&neg(&y), 2), enc_c(&y, 2));
    // (−x)(−y) = xy: both products decrypt to the same coefficients.
    let ps = ss.decrypt(&sx.mul(&sy, &srlk).unwrap()).unwrap();
    let pc = cs.decrypt(&cx.mul(&cy, &crlk).unwrap()).unwrap();
    assert_eq!(pc.representative(), ps.representative());
    assert_ne!(ps.representative(), vec![BigInt::new(); n]);
}

/// Params III end to end at 128 and 256 bits (512 behind `--ignored`): slots in two rows,
/// encryption, one product and the depth-2 chain, slot by slot mod p; wide plaintexts and
/// ciphertexts round-trip through their encodings.
#[test]
fn matrigear_params_iii_128_and_256() {
    params_iii(&[128, 256]);
}

/// Params III at 512 bits (N = 2^17, 37 primes: a 2.9 GB relinearization key, about a minute).
#[test]
#[ignore = "N = 2^17 with 37 primes: about a minute and 4 GB; run with --ignored"]
fn matrigear_params_iii_512() {
    params_iii(&[512]);
}

fn params_iii(rows: &[u32]) {
    use coterie_bfv::params::MatriGearSet;
    for &bits in rows {
        let ctx = Context::new(Params::matrigear(MatriGearSet::III, bits).unwrap()).unwrap();
        let ring = Ring::of(&ctx);
        let mut r = Csprng::insecure_from_seed_for_tests([40 + (bits / 128) as u8; 32]);
        let sk = SecretKey::generate(&ctx, &mut r);
        let pk = sk.public_key(&mut r);
        let rlk = sk.relin_key(&mut r);
        let (x, y) = (ring.random(&mut r), ring.random(&mut r));
        let px = Plaintext::encode_slots(&ctx, &x).unwrap();
        assert!(px.small_lift().is_err(), "a 128-bit lift does not fit i64");
        let half = BigInt::from(&ring.p >> 1u32);
        assert!(px.small_lift_wide().iter().all(|c| c.clone().abs() <= half));
        let back = Plaintext::from_bytes(&ctx, &px.to_bytes()).unwrap();
        assert_eq!(back, px, "III/{bits}: plaintext bytes");
        let cx = pk.encrypt(&px, &mut r).unwrap();
        let cy = pk
            .encrypt(&Plaintext::encode_slots(&ctx, &y).unwrap(), &mut r)
            .unwrap();
        let back = Ciphertext::from_bytes(&ctx, &cx.to_bytes()).unwrap();
        assert_eq!(back, cx, "III/{bits}: ciphertext bytes");
        depth_two(
            &ring,
            &sk,
            &rlk,
            (&cx, &x),
            (&cy, &y),
            &format!("III/{bits}"),
        );
        // A representative coefficient ≥ p, or one coefficient short, is refused on decoding.
        use coterie_bfv::serial::{PlaintextCoeffs, PlaintextWire};
        let bytes = px.to_bytes();
        let w: PlaintextWire =
            coterie_base::envelope::open(*b"BFVp", 1, &bytes, bytes.len()).unwrap();
        let PlaintextCoeffs::Representative(rep) = &w.coeffs else {
            panic!("a wide plaintext travels as its representative")
        };
        let width = (bits as usize).div_ceil(8);
        assert_eq!(rep.len(), ctx.degree() * width);
        let edited = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut bad = w.clone();
            let PlaintextCoeffs::Representative(rep) = &mut bad.coeffs else {
                unreachable!()
            };
            f(rep);
            Plaintext::from_bytes(&ctx, &coterie_base::to_envelope(&bad).unwrap())
        };
        assert!(edited(&|_| {}).is_ok());
        assert!(
            edited(&|r| r[..width].fill(0xff)).is_err(),
            "2^bits − 1 ≥ p"
        );
        assert!(edited(&|r| r.truncate(r.len() - width)).is_err());
    }
}

/// The slot maps through a named set's context: Pack, the small lift (‖·‖ ≤ b/2) and Unpack.
#[test]
fn matrigear_context_slots_round_trip() {
    use coterie_bfv::params::MatriGearSet;
    let mut r = Csprng::insecure_from_seed_for_tests([10; 32]);
    for (set, bits) in [
        (MatriGearSet::II, 128),
        (MatriGearSet::II, 4096),
        (MatriGearSet::I, 1024),
    ] {
        let ctx = Context::new(Params::matrigear(set, bits).unwrap()).unwrap();
        let ring = Ring::of(&ctx);
        let x = ring.random(&mut r);
        let slots = {
            let pt = Plaintext::from_representative(&ctx, &x).unwrap();
            pt.decode_slots().unwrap()
        };
        let pt = Plaintext::encode_slots(&ctx, &slots).unwrap();
        assert_eq!(pt.representative(), x, "{set:?} {bits}");
        assert!(pt.norm_inf() <= ring.b.to_u64().unwrap() / 2);
        // The reference code's slot order (§6.4): ξ = G^((p−1)/(2N)), slot i = x(ξ^(5^(i·M/2))).
        let g = Params::matrigear_generator(set, bits).unwrap();
        assert_eq!(ctx.params().slot_generator(), Some(g.clone()));
        let enc = ctx.slot_encoder().unwrap();
        let e = BigInt::from(&ring.p - 1u32) / (2 * ring.n as u64);
        assert_eq!(enc.xi(), &g.clone().pow_mod(&e, &ring.p).unwrap());
        for i in [0, 1, ring.d - 1] {
            let z = enc
                .xi()
                .clone()
                .pow_mod(&BigInt::from(enc.slot_exponents()[i]), &ring.p)
                .unwrap();
            let mut acc = BigInt::new();
            for c in x.iter().rev() {
                acc = ring.reduce(acc * &z + c);
            }
            assert_eq!(slots[i], acc, "{set:?} {bits}: slot {i}");
        }
        // A wrong generator is refused.
        let p = Params::matrigear(set, bits).unwrap();
        assert!(p.with_slot_generator(&(g + 1u32)).is_err());
    }
}

/// Seed 002 §8 test 6 on the real sets: for every Params I and II row, encryption, one product
/// and the depth-2 chain `Dec(Mul(Mul(ct1, ct2), ct1)) = m1²·m2`, slot by slot in `Z_p^D`.
#[test]
fn matrigear_sets_depth_two_every_row() {
    use coterie_bfv::params::{MATRIGEAR_LOG_P, MatriGearSet};
    for set in [MatriGearSet::II, MatriGearSet::I] {
        for (row, bits) in MATRIGEAR_LOG_P.into_iter().enumerate() {
            let ctx = Context::new(Params::matrigear(set, bits).unwrap()).unwrap();
            let ring = Ring::of(&ctx);
            let mut r = Csprng::insecure_from_seed_for_tests([20 + row as u8; 32]);
            let sk = SecretKey::generate(&ctx, &mut r);
            let pk = sk.public_key(&mut r);
            let rlk = sk.relin_key(&mut r);
            let (x, y) = (ring.random(&mut r), ring.random(&mut r));
            let enc = |v: &[BigInt], r: &mut Csprng| {
                pk.encrypt(&Plaintext::encode_slots(&ctx, v).unwrap(), r)
                    .unwrap()
            };
            let (cx, cy) = (enc(&x, &mut r), enc(&y, &mut r));
            let tag = format!("{set:?} {bits}");
            depth_two(&ring, &sk, &rlk, (&cx, &x), (&cy, &y), &tag);
        }
    }
}

/// Seed 002 §8 test 6 slot by slot in `Z_p^D`: `Dec(ct_x) = x`, `Dec(Mul(ct_x, ct_y)) = x·y` and
/// the depth-2 chain `Dec(Mul(Mul(ct_x, ct_y), ct_x)) = x²·y`.
fn depth_two(
    ring: &Ring,
    sk: &SecretKey,
    rlk: &coterie_bfv::RelinKey,
    (cx, x): (&Ciphertext, &[BigInt]),
    (cy, y): (&Ciphertext, &[BigInt]),
    tag: &str,
) {
    let dec = |c: &Ciphertext| sk.decrypt(c).unwrap().decode_slots().unwrap();
    let times = |a: &[BigInt], b: &[BigInt]| -> Vec<BigInt> {
        a.iter()
            .zip(b)
            .map(|(u, v)| ring.reduce(BigInt::from(u * v)))
            .collect()
    };
    assert_eq!(dec(cx), x, "{tag}: Enc/Dec");
    let cxy = cx.mul(cy, rlk).unwrap();
    let xy = times(x, y);
    assert_eq!(dec(&cxy), xy, "{tag}: Mul");
    assert_eq!(
        dec(&cxy.mul(cx, rlk).unwrap()),
        times(&xy, x),
        "{tag}: depth 2"
    );
}
