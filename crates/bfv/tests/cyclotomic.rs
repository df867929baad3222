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
        let PlaintextModulus::Cyclotomic { d, b, .. } = pm else {
            panic!("cyclotomic parameters expected")
        };
        Ring {
            d,
            n: ctx.degree(),
            b: BigInt::from(b),
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
    assert_eq!(Plaintext::from_lift(&ctx, px.small_lift()).unwrap(), px);
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

/// Seed 002 §6.2 Table 2, Params I (N = 2^14, log q = 426) and II (N = 2^13, log q = 230):
/// every row validates (p = b^M + 1 prime, 2N | b^M) with the stated size of p.
#[test]
fn matrigear_table2_rows_validate() {
    use coterie_bfv::SecretDistribution;
    use coterie_bfv::params::moduli_for_bits;
    let rows_i: [(u32, u64); 6] = [
        (128, u64::MAX - (3072 - 1)),
        (256, u64::MAX - (64 - 1)),
        (512, u64::MAX - (428 - 1)),
        (1024, u64::MAX - (8 - 1)),
        (2048, u64::MAX - (22 - 1)),
        (4096, u64::MAX - (56 - 1)),
    ];
    let rows_ii: [(u32, u64); 6] = [
        (128, (1 << 16) - 196),
        (256, (1 << 16) - 22),
        (512, (1 << 16) - 72),
        (1024, (1 << 16) - 28),
        (2048, (1 << 16) - 190),
        (4096, (1 << 16) - 288),
    ];
    for (n, log_q, rows) in [(1usize << 14, 426, rows_i), (1 << 13, 230, rows_ii)] {
        let q = moduli_for_bits(n, log_q).unwrap();
        for (bits, b) in rows {
            let m = (bits as usize).div_ceil(64 - b.leading_zeros() as usize);
            let pm = PlaintextModulus::Cyclotomic { d: n / m, b, m };
            let p = Params::custom_with(
                "t2",
                n,
                &q,
                pm.clone(),
                3.2,
                SecretDistribution::Ternary,
                "",
            )
            .unwrap_or_else(|e| panic!("N = {n}, b = {b}, M = {m}: {e}"));
            let got = p.plaintext_modulus().modulus().significant_bits();
            // Params II at 4096 bits gives a 4095-bit p (65248^256 < 2^4096, seed 002 §6.2).
            assert!(
                got == bits || (got == 4095 && bits == 4096),
                "{b}^{m} + 1: {got} bits"
            );
        }
    }
}

/// Params II at |p| = 4096 (N = 2^13, D = 32, M = 256, b = 2^16 − 288): encryption, decryption
/// and one product with relinearization, against the reference.
#[test]
fn params_ii_4096_bit_p_encrypts_and_multiplies() {
    use coterie_bfv::SecretDistribution;
    use coterie_bfv::params::moduli_for_bits;
    let n = 1 << 13;
    let pm = PlaintextModulus::Cyclotomic {
        d: 32,
        b: (1 << 16) - 288,
        m: 256,
    };
    let params = Params::custom_with(
        "insecure-test-params-ii-4096",
        n,
        &moduli_for_bits(n, 230).unwrap(),
        pm,
        3.2,
        SecretDistribution::Ternary,
        "seed 002 Table 2, Params II, |p| = 4096 (128-bit per the paper); used here as a test",
    )
    .unwrap();
    let ctx = Context::new(params).unwrap();
    let ring = Ring::of(&ctx);
    let mut r = Csprng::insecure_from_seed_for_tests([5; 32]);
    let sk = SecretKey::generate(&ctx, &mut r);
    let pk = sk.public_key(&mut r);
    let rlk = sk.relin_key(&mut r);
    let x = ring.random(&mut r);
    let y = ring.random(&mut r);
    let cx = pk
        .encrypt(&Plaintext::from_representative(&ctx, &x).unwrap(), &mut r)
        .unwrap();
    let cy = pk
        .encrypt(&Plaintext::from_representative(&ctx, &y).unwrap(), &mut r)
        .unwrap();
    assert_eq!(sk.decrypt(&cx).unwrap().representative(), x);
    let prod = cx.mul(&cy, &rlk).unwrap();
    assert_eq!(
        sk.decrypt(&prod).unwrap().representative(),
        ring.mul(&x, &y)
    );
}
