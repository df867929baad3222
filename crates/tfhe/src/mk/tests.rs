//! Seed 003 §8 test cases T1–T5, T8–T11, T13 (T6 is in `tests/mk.rs`; T7 and T12 are
//! statistical/performance runs: `#[ignore]`d here and in `examples/mk_bench.rs`).
//! Keys are freshly generated per test from a recorded seed.

use coterie_math::gadget::SignedDecomposer;
use coterie_math::intpoly::{ExactMul64, negacyclic_mul_wrapping_u64};
use coterie_math::prg::Csprng;

use crate::ggsw::{ExternalProductBuffers, FourierGgswCiphertext, add_external_product_assign};
use crate::glwe::{
    GlweCiphertext, GlweSecretKey, decrypt_glwe_ciphertext, encrypt_glwe_ciphertext,
    extract_lwe_sample_from_glwe_ciphertext,
};
use crate::lwe::{
    LweCiphertext, LweSecretKey, decrypt_lwe_ciphertext, encrypt_lwe_ciphertext,
    keyswitch_lwe_ciphertext,
};
use crate::mk::decrypt::*;
use crate::mk::eval::*;
use crate::mk::keygen::*;
use crate::mk::params::{MkParams, two_sided_tail};
use crate::noise::NoiseSampler;
use crate::public_key::{ProductMethod, encrypt_constant_ggsw_with_public_key};
use crate::torus::Torus;

struct Local {
    params: MkParams,
    sks: Vec<MkSecretKey>,
    ek: MkEvaluationKey,
    server: MkServerKey,
}

fn local(params: &MkParams, k: usize, seed: u8, method: ProductMethod) -> Local {
    let mut rng = Csprng::insecure_from_seed_for_tests([seed; 32]);
    let crs = Crs { seed: [seed; 32] };
    let (sks, ek) = insecure_simulate_all_parties(params, k, &crs, method, &mut rng).unwrap();
    let server = MkServerKey::new(&ek).unwrap();
    Local {
        params: params.clone(),
        sks,
        ek,
        server,
    }
}

impl Local {
    fn keys(&self) -> Vec<&MkSecretKey> {
        self.sks.iter().collect()
    }
    /// Test-only `Z = Σ_p z^(p)`.
    fn z_sum(&self) -> Vec<i64> {
        let n = self.params.polynomial_size;
        let mut z = vec![0i64; n];
        for sk in &self.sks {
            for (a, b) in z.iter_mut().zip(sk.glwe_key().as_slice()) {
                *a += b.to_i64_centered();
            }
        }
        z
    }
    fn z_glwe(&self) -> GlweSecretKey<u64> {
        let z = self.z_sum().iter().map(|&x| x as u64).collect();
        GlweSecretKey::from_container(1, self.params.polynomial_size, z).unwrap()
    }
    fn s_concat(&self) -> LweSecretKey<u32> {
        LweSecretKey::from_container(
            self.sks
                .iter()
                .flat_map(|sk| sk.lwe_key().as_slice().to_vec())
                .collect(),
        )
    }
    fn encrypt(&self, slot: usize, bit: bool, rng: &mut Csprng) -> LweCiphertext<u32> {
        let c = self.sks[slot]
            .encrypt_bool_local(&self.params, bit, rng)
            .unwrap();
        embed(&c, slot, self.sks.len()).unwrap()
    }
    /// A "joint" fresh encryption: random masks in every slot (owner: the bit, others: 0).
    fn encrypt_joint(&self, owner: usize, bit: bool, rng: &mut Csprng) -> LweCiphertext<u32> {
        let noise = NoiseSampler::new(self.params.lwe_noise_std(), 32).unwrap();
        let parts: Vec<_> = self
            .sks
            .iter()
            .enumerate()
            .map(|(slot, sk)| {
                if slot == owner {
                    sk.encrypt_bool_local(&self.params, bit, rng).unwrap()
                } else {
                    let mut c = LweCiphertext::zero(self.params.lwe_dimension);
                    encrypt_lwe_ciphertext(sk.lwe_key(), &mut c, 0, &noise, rng);
                    c
                }
            })
            .collect();
        sum_local_encryptions(&parts).unwrap()
    }
}

fn variance(xs: &[f64]) -> f64 {
    xs.iter().map(|x| x * x).sum::<f64>() / xs.len() as f64
}

/// Errors `v − sign(v)·1/8` of all coefficients of a blind-rotation accumulator (each is
/// `±1/8` plus noise), decrypted with the test-only `Z`.
fn accumulator_errors(z: &GlweSecretKey<u64>, acc: &GlweCiphertext<u64>, out: &mut Vec<f64>) {
    let mut dec = vec![0u64; acc.poly_size()];
    decrypt_glwe_ciphertext(z, acc, &mut dec);
    for v in dec {
        let x = v.decode();
        out.push(x - 0.125 * x.signum());
    }
}

#[test]
fn t1_sign_and_lut_pinning() {
    let l = local(&MkParams::ako_k2(), 2, 1, ProductMethod::Exact);
    let mut ev = l.server.evaluator().unwrap();
    let kn = l.server.lwe_dimension();
    let keys = l.keys();
    // Trivial inputs: phases +1/8, −1/8, +3/8, 0 → output signs +, −, +, + (X^{−φ̃} convention).
    for (phase, want) in [(0.125, true), (-0.125, false), (0.375, true), (0.0, true)] {
        let c = LweCiphertext::trivial(kn, u32::encode(phase));
        let out = ev.bootstrap(&c).unwrap();
        let got = phase_with_all_keys(&keys, &out).decode();
        assert_eq!(got > 0.0, want, "phase {phase}: output {got}");
        assert!(
            (got.abs() - 0.125).abs() < 0.1,
            "phase {phase}: output {got}"
        );
        // Before key switching, under Z: φ̃ = 0 gives exactly the LUT value +1/8 (plus BR noise).
        let ext = ev.blind_rotate_extract(&c).unwrap().clone();
        let zk = l.z_glwe().as_lwe_key();
        let v = decrypt_lwe_ciphertext(&zk, &ext).decode();
        assert_eq!(v > 0.0, want, "pre-KS phase {phase}: {v}");
    }
    // Just below zero (one step of 1/2N) is on the negative side.
    let step = 1.0 / (2.0 * l.params.polynomial_size as f64);
    let c = LweCiphertext::trivial(kn, u32::encode(-step));
    let out = ev.bootstrap(&c).unwrap();
    assert!(!decrypt_bool_with_all_keys(&keys, &out));
}

#[test]
fn t2_primitive_round_trips() {
    let p = MkParams::ako_k2();
    let mut rng = Csprng::insecure_from_seed_for_tests([2; 32]);
    let sk = MkSecretKey::generate(&p, 0, &mut rng).unwrap();
    // LWE: |phase − μ| < 6α.
    for bit in [true, false] {
        let c = sk.encrypt_bool_local(&p, bit, &mut rng).unwrap();
        let ph = decrypt_lwe_ciphertext(sk.lwe_key(), &c).decode();
        let mu = if bit { 0.125 } else { -0.125 };
        assert!((ph - mu).abs() < 6.0 * p.lwe_noise_std());
    }
    // RLWE public-key share: b − a·z has every coefficient below 6β.
    let crs = Crs { seed: [2; 32] };
    let share = public_key_share(&p, &crs, &sk, &mut rng).unwrap();
    let mut ct = GlweCiphertext::<u64>::zero(1, p.polynomial_size);
    ct.as_mut_slice()[..p.polynomial_size].copy_from_slice(&crs.crp(&p));
    ct.body_mut().copy_from_slice(&share.body);
    let mut dec = vec![0u64; p.polynomial_size];
    decrypt_glwe_ciphertext(sk.glwe_key(), &ct, &mut dec);
    assert!(
        dec.iter()
            .all(|x| x.decode().abs() < 6.0 * p.glwe_noise_std())
    );
    // Gadget decomposition, Eq. (1): error ≤ 1/(2B^d), digits in [−B/2, B/2].
    let dec64 = SignedDecomposer::new(64, p.pbs_base_log, p.pbs_level).unwrap();
    let mut digits = vec![0i64; p.pbs_level as usize];
    let half = 1i64 << (p.pbs_base_log - 1);
    for _ in 0..1000 {
        let x = u64::random(&mut rng);
        dec64.decompose_into(x, &mut digits);
        assert!(digits.iter().all(|d| (-half..=half).contains(d)));
        let err = dec64.recompose(&digits).wrapping_sub(x) as i64;
        assert!(err.unsigned_abs() <= 1u64 << (63 - p.pbs_base_log * p.pbs_level));
    }
    // SampleExtract identity, noiseless: const(B − A·z) == extracted phase, exactly.
    let mut prep = sk.glwe_key().prepare().unwrap();
    let msg: Vec<u64> = (0..p.polynomial_size as u64).map(|i| i << 40).collect();
    let mut g = GlweCiphertext::zero(1, p.polynomial_size);
    encrypt_glwe_ciphertext(
        &mut prep,
        &mut g,
        &msg,
        &NoiseSampler::new(0.0, 64).unwrap(),
        &mut rng,
    );
    let mut l = LweCiphertext::zero(p.polynomial_size);
    extract_lwe_sample_from_glwe_ciphertext(&g, &mut l, 0);
    assert_eq!(
        decrypt_lwe_ciphertext(&sk.glwe_key().as_lwe_key(), &l),
        msg[0]
    );
    // Exact negacyclic product (ternary × 64-bit) equals the schoolbook reference bit for bit.
    let mul = ExactMul64::new(p.polynomial_size).unwrap();
    let mut r = vec![0i64; p.polynomial_size];
    coterie_math::sample::ternary(&mut rng, p.ternary_p, &mut r).unwrap();
    let r: Vec<u64> = r.iter().map(|&x| x as u64).collect();
    let b: Vec<u64> = (0..p.polynomial_size)
        .map(|_| u64::random(&mut rng))
        .collect();
    assert_eq!(
        mul.mul_u64(&r, &b),
        negacyclic_mul_wrapping_u64(&r, &b).unwrap()
    );
}

#[test]
fn t3_common_public_key() {
    for k in [2, 4] {
        let p = MkParams::ako(k).unwrap();
        let mut rng = Csprng::insecure_from_seed_for_tests([3; 32]);
        let crs = Crs { seed: [33; 32] };
        let sks: Vec<_> = (0..k)
            .map(|q| MkSecretKey::generate(&p, q, &mut rng).unwrap())
            .collect();
        let shares: Vec<_> = sks
            .iter()
            .map(|sk| public_key_share(&p, &crs, sk, &mut rng).unwrap())
            .collect();
        let pk = combine_public_key(&p, &crs, &shares).unwrap();
        let mut z = vec![0u64; p.polynomial_size];
        for sk in &sks {
            for (a, b) in z.iter_mut().zip(sk.glwe_key().as_slice()) {
                *a = a.wrapping_add(*b);
            }
        }
        let zk = GlweSecretKey::from_container(1, p.polynomial_size, z).unwrap();
        let mut dec = vec![0u64; p.polynomial_size];
        decrypt_glwe_ciphertext(&zk, pk.as_ciphertext(), &mut dec);
        // Integers on the 64-bit torus: |B − a·Z| ≤ 6·√k·β·2^64.
        let bound = 6.0 * (k as f64).sqrt() * p.glwe_noise_std() * 2f64.powi(64);
        assert!(
            dec.iter()
                .all(|x| (x.to_i64_centered() as f64).abs() <= bound)
        );
        // Repeated or unsorted parties are rejected.
        let mut bad = shares.clone();
        bad[1].party = 0;
        assert!(combine_public_key(&p, &crs, &bad).is_err());
    }
}

#[test]
fn t4_blind_rotate_key_is_rgsw_under_z() {
    let p = MkParams::ako_k2();
    let l = local(&p, 2, 4, ProductMethod::Exact);
    let (n_big, d) = (p.polynomial_size, p.pbs_level as usize);
    let z = l.z_glwe();
    let zc: Vec<i64> = l.z_sum();
    let k = 2.0;
    let mut errs = Vec::new();
    let mut dec = vec![0u64; n_big];
    for slot in 0..2 {
        for j in 0..4 {
            let g = &l.ek.bsk.ggsw[slot * p.lwe_dimension + j];
            let s = i64::from(l.sks[slot].lwe_key().as_slice()[j]);
            for row in 0..2 * d {
                decrypt_glwe_ciphertext(&z, &g.row(row), &mut dec);
                let lev = (row % d) as u32 + 1;
                let g_l = 1u64 << (64 - lev * p.pbs_base_log);
                for (i, v) in dec.iter().enumerate() {
                    // Rows 0..d: message s·g_l in the mask → phase −s·Z·g_l; rows d..2d: s·g_l
                    // in the body (coefficient 0).
                    let want = if row < d {
                        ((-s * zc[i]) as u64).wrapping_mul(g_l)
                    } else if i == 0 {
                        (s as u64).wrapping_mul(g_l)
                    } else {
                        0
                    };
                    errs.push(v.wrapping_sub(want).decode());
                }
            }
        }
    }
    let beta2 = p.glwe_noise_std().powi(2);
    let predicted = beta2 * (1.0 + 4.0 * p.ternary_p * k * n_big as f64);
    let ratio = variance(&errs) / predicted;
    assert!((0.85..1.15).contains(&ratio), "BK row noise ratio {ratio}");
}

#[test]
fn t5_keyswitch_key_aggregation() {
    let p = MkParams::ako_k2();
    let l = local(&p, 2, 5, ProductMethod::Exact);
    let s = l.s_concat();
    let zc = l.z_sum();
    let ksk = &l.ek.ksk;
    let row = ksk.output_dimension() + 1;
    let mut errs = Vec::new();
    for (r, chunk) in ksk.data.chunks_exact(row).enumerate() {
        let (i, lev) = (
            r / p.ks_level as usize,
            (r % p.ks_level as usize) as u32 + 1,
        );
        let c = LweCiphertext::from_container(chunk.to_vec()).unwrap();
        let want = (zc[i] as u32).wrapping_mul(1u32 << (32 - lev * p.ks_base_log));
        errs.push(decrypt_lwe_ciphertext(&s, &c).wrapping_sub(want).decode());
    }
    let ratio = variance(&errs) / (2.0 * p.lwe_noise_std().powi(2));
    assert!((0.9..1.1).contains(&ratio), "KS key noise ratio {ratio}");
}

/// Fresh bootstraps of random bits from random parties: (measured V0, predicted V0).
fn measured_v0(l: &Local, count: usize, seed: u8) -> (f64, f64) {
    let mut rng = Csprng::insecure_from_seed_for_tests([seed; 32]);
    let mut ev = l.server.evaluator().unwrap();
    let keys = l.keys();
    let k = l.sks.len();
    let mut errs = Vec::with_capacity(count);
    for i in 0..count {
        let bit = u32::random(&mut rng) & 1 == 1;
        let c = l.encrypt_joint(i % k, bit, &mut rng);
        let out = ev.bootstrap(&c).unwrap();
        let want = if bit { 0.125 } else { -0.125 };
        errs.push(phase_with_all_keys(&keys, &out).decode() - want);
    }
    (variance(&errs), l.params.noise_for(k, false).v0)
}

#[test]
fn t8_bootstrap_noise_small_sample() {
    // 300 bootstraps (relative std of the sample variance ≈ 8%): pass below 1.15·(1 + 3·8%).
    let l = local(&MkParams::ako_k2(), 2, 8, ProductMethod::Exact);
    let (m, c) = measured_v0(&l, 300, 80);
    let kappa_m = 0.125 / (2.0 * m + (1.0 + 2.0 * 520.0) / (48.0 * 1024f64.powi(2))).sqrt();
    eprintln!(
        "T8 (300): V0(m) {m:.3e}, V0(c) {c:.3e}, ratio {:.3}, κ(m) {kappa_m:.2}",
        m / c
    );
    assert!(m <= 1.15 * 1.24 * c, "V0(m)/V0(c) = {}", m / c);
}

/// T8 at full size (2000 bootstraps) for k = 2, 4, 8: V0(m) ≤ 1.15·V0(c). Slow (~3 min).
#[test]
#[ignore]
fn t8_bootstrap_noise_2000() {
    for k in [2, 4, 8] {
        let l = local(&MkParams::ako(k).unwrap(), k, 81, ProductMethod::Exact);
        let (m, c) = measured_v0(&l, 2000, 82);
        eprintln!("T8 k={k}: V0(m) {m:.3e}, V0(c) {c:.3e}, ratio {:.3}", m / c);
        assert!(m <= 1.15 * c, "k={k}: V0(m)/V0(c) = {}", m / c);
    }
}

/// Measured / predicted (Eq. 13 with the key's actual `‖Z‖²`) key-switching noise for `k`
/// parties, over `samples` key switches of noiseless inputs with uniform masks.
fn keyswitch_noise_ratio(k: usize, seed: u8, samples: usize) -> f64 {
    let p = MkParams::ako(k).unwrap();
    let l = local(&p, k, seed, ProductMethod::Exact);
    let s = l.s_concat();
    let zc: Vec<u32> = l.z_sum().iter().map(|&x| x as u32).collect();
    let zkey = LweSecretKey::from_container(zc);
    let mut rng = Csprng::insecure_from_seed_for_tests([seed ^ 0xff; 32]);
    let zero = NoiseSampler::new(0.0, 32).unwrap();
    let mut errs = Vec::new();
    let mut input = LweCiphertext::zero(p.polynomial_size);
    let mut out = LweCiphertext::zero(k * p.lwe_dimension);
    for _ in 0..samples {
        let mu = u32::random(&mut rng);
        encrypt_lwe_ciphertext(&zkey, &mut input, mu, &zero, &mut rng);
        keyswitch_lwe_ciphertext(&l.ek.ksk, &input, &mut out);
        errs.push(decrypt_lwe_ciphertext(&s, &out).wrapping_sub(mu).decode());
    }
    let nb = p.noise_for(k, false);
    let z2: f64 = l.z_sum().iter().map(|&x| (x * x) as f64).sum();
    let expected_z2 = 2.0 * p.ternary_p * k as f64 * p.polynomial_size as f64;
    let predicted = nb.ks_term + nb.ks_decomp * z2 / expected_z2;
    let ratio = variance(&errs) / predicted;
    eprintln!(
        "T9a k={k}: KS noise {:.3e}, predicted {predicted:.3e}, ratio {ratio:.3} (‖Z‖² {z2} vs 2pkN {expected_z2:.0})",
        variance(&errs)
    );
    ratio
}

#[test]
fn t9a_keyswitch_noise() {
    let ratio = keyswitch_noise_ratio(2, 9, 1500);
    assert!(
        (0.9..1.1).contains(&ratio),
        "KS noise ratio {ratio} (Eq. 13)"
    );
}

/// T9a and T9c for the other `N = 1024` sets (slow; reported by `bench/tfhe-mk.sh`).
#[test]
#[ignore]
fn t9_component_noise_k3_k5_k8() {
    for k in [3, 5, 8] {
        let r = keyswitch_noise_ratio(k, 94, 2000);
        let p = MkParams::ako(k).unwrap();
        let l = local(&p, k, 95, ProductMethod::Exact);
        let m = blind_rotation_variance(&l, 4, 96);
        let nb = p.noise_for(k, false);
        let c = nb.bk_term_corrected + nb.br_decomp;
        eprintln!(
            "T9c k={k}: BR variance {m:.3e}, Eq. 12 corrected {c:.3e}, ratio {:.3}",
            m / c
        );
        assert!((0.85..1.15).contains(&r), "k={k}: KS ratio {r}");
        assert!(m <= 1.15 * c, "k={k}: BR ratio {}", m / c);
    }
}

/// Lemma 1 (external-product noise) against the variance measured over `trials` products with
/// one key drawn from `seed`: returns (measured variance, Lemma 1 for that key with the 4/3 of
/// erratum 4 on the BK term, Lemma 1 without it, standard error of the measured variance).
fn external_product_noise(seed: u8, trials: usize) -> (f64, f64, f64, f64) {
    let p = MkParams::ako_k2();
    let mut rng = Csprng::insecure_from_seed_for_tests([seed; 32]);
    let crs = Crs { seed: [seed; 32] };
    let k = 2;
    let sks: Vec<_> = (0..k)
        .map(|q| MkSecretKey::generate(&p, q, &mut rng).unwrap())
        .collect();
    let shares: Vec<_> = sks
        .iter()
        .map(|sk| public_key_share(&p, &crs, sk, &mut rng).unwrap())
        .collect();
    let pk = combine_public_key(&p, &crs, &shares).unwrap();
    let n_big = p.polynomial_size;
    let mut z = vec![0u64; n_big];
    for sk in &sks {
        for (a, b) in z.iter_mut().zip(sk.glwe_key().as_slice()) {
            *a = a.wrapping_add(*b);
        }
    }
    let zk = GlweSecretKey::from_container(1, n_big, z).unwrap();
    let mut prep = zk.prepare().unwrap();
    let zero = NoiseSampler::new(0.0, 64).unwrap();
    let noise = NoiseSampler::new(p.glwe_noise_std(), 64).unwrap();
    let mut bufs = ExternalProductBuffers::new(1, n_big, p.pbs_base_log, p.pbs_level).unwrap();
    let mut per_trial = Vec::new();
    let mut dec = vec![0u64; n_big];
    for _ in 0..trials {
        let g = encrypt_constant_ggsw_with_public_key(
            &pk,
            1,
            p.pbs_base_log,
            p.pbs_level,
            p.ternary_p,
            &noise,
            &mut rng,
        )
        .unwrap();
        let fg = FourierGgswCiphertext::from_ggsw(&g).unwrap();
        let msg: Vec<u64> = (0..n_big).map(|_| u64::random(&mut rng) >> 3).collect();
        let mut c = GlweCiphertext::zero(1, n_big);
        encrypt_glwe_ciphertext(&mut prep, &mut c, &msg, &zero, &mut rng);
        let mut out = GlweCiphertext::zero(1, n_big);
        add_external_product_assign(&mut out, &fg, &c, &mut bufs);
        decrypt_glwe_ciphertext(&zk, &out, &mut dec);
        let errs: Vec<f64> = dec
            .iter()
            .zip(&msg)
            .map(|(d, m)| d.wrapping_sub(*m).decode())
            .collect();
        per_trial.push(variance(&errs));
    }
    // Lemma 1: BK term N·d·V_B·β²·(3 + 6pkN) + ε²(1 + 2pkN), with 2pkN = E‖Z‖² replaced by ‖Z‖²
    // of the key actually drawn (one key's ‖Z‖² is off its mean by about 1/√(2pkN) ≈ 5%, and
    // here the decomposition term ε²(1 + ‖Z‖²) is almost all of the variance).
    let (b, d) = (2f64.powi(p.pbs_base_log as i32), p.pbs_level as f64);
    let zn: f64 = zk
        .as_slice()
        .iter()
        .map(|&x| (x as i64 as f64).powi(2))
        .sum();
    let zn_mean = 2.0 * p.ternary_p * k as f64 * n_big as f64;
    assert!(
        (zn / zn_mean - 1.0).abs() < 0.3,
        "‖Z‖² = {zn} far from its mean {zn_mean}"
    );
    let bk =
        n_big as f64 * d * (b * b + 2.0) / 12.0 * p.glwe_noise_std().powi(2) * (3.0 + 3.0 * zn);
    let dec_term = (1.0 + zn) / (12.0 * b.powf(2.0 * d));
    let t = per_trial.len() as f64;
    let m = per_trial.iter().sum::<f64>() / t;
    let sd = (per_trial.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (t - 1.0)).sqrt();
    (m, 4.0 / 3.0 * bk + dec_term, bk + dec_term, sd / t.sqrt())
}

/// Lemma 1's external-product noise. Its decomposition term is an expected value, so the mean
/// of the per-product variances may exceed it by sampling error: the bound allows 5 standard
/// errors of that mean, estimated from the 256 products themselves (under 0.6% of the bound, so
/// an implementation 3% noisier than Lemma 1 fails; before, with one key's ‖Z‖² in place of its
/// mean, a key 5% below the mean hid as much).
#[test]
fn t9b_external_product_noise() {
    let (m, bound, plain, se) = external_product_noise(91, 256);
    assert!(se < 0.006 * plain, "standard error {se:.3e} too large");
    assert!(
        m <= bound + 5.0 * se,
        "Prod noise {m:.3e} vs {plain:.3e} (Lemma 1 for this key), standard error {se:.3e}"
    );
    assert!(m >= 0.5 * plain, "Prod noise {m:.3e} implausibly small");
}

/// The check above over 48 keys (seeds): how its margin holds (a statistics run).
#[test]
#[ignore = "statistics of the t9b check over 48 keys; a few seconds"]
fn t9b_external_product_noise_over_seeds() {
    let mut worst: f64 = 0.0;
    for seed in 1..=48u8 {
        let (m, bound, plain, se) = external_product_noise(seed, 256);
        let z = (m - bound) / se;
        eprintln!(
            "seed {seed}: ratio {:.4}, se {:.4}, (m − bound)/se = {z:.2}",
            m / plain,
            se / plain
        );
        assert!(se < 0.006 * plain, "seed {seed}: standard error");
        worst = worst.max(z);
        assert!(m <= bound + 5.0 * se, "seed {seed}");
    }
    eprintln!("largest excess over the bound: {worst:.2} standard errors");
}

/// Blind-rotation noise (all accumulator coefficients) of `rotations` rotations of fresh inputs.
fn blind_rotation_variance(l: &Local, rotations: usize, seed: u8) -> f64 {
    let mut rng = Csprng::insecure_from_seed_for_tests([seed; 32]);
    let z = l.z_glwe();
    let mut ev = l.server.evaluator().unwrap();
    let mut errs = Vec::new();
    for i in 0..rotations {
        let c = l.encrypt_joint(i % l.sks.len(), i % 3 == 0, &mut rng);
        let acc = ev.blind_rotate(&c).unwrap().clone();
        accumulator_errors(&z, &acc, &mut errs);
    }
    variance(&errs)
}

/// T9c. Prediction: Eq. (12) with the spec's corrected BK factor `(2 + 8pkN)` (erratum 4):
/// the paper's `(3 + 6pkN)` underestimates the BK term by up to 4/3, which this measurement
/// shows at `k = 4` (where the BK term is 60% of the blind-rotation noise: measured/paper ≈ 1.22,
/// measured/corrected ≈ 1.0). Eq. (14)'s V0 is dominated by key switching, so the tables are not
/// affected (< 0.3%).
#[test]
fn t9c_blind_rotation_noise() {
    for k in [2, 4] {
        let p = MkParams::ako(k).unwrap();
        let l = local(&p, k, 92, ProductMethod::Exact);
        let m = blind_rotation_variance(&l, 6, 93);
        let nb = p.noise_for(k, false);
        let c = nb.bk_term_corrected + nb.br_decomp;
        eprintln!(
            "T9c k={k}: BR variance {m:.3e}, Eq. 12 corrected {c:.3e} (ratio {:.3}), paper's \
             Eq. 12 {:.3e} (ratio {:.3})",
            m / c,
            nb.blind_rotation,
            m / nb.blind_rotation
        );
        assert!(m <= 1.15 * c && m >= 0.8 * c, "k={k}: BR ratio {}", m / c);
    }
}

/// T10 at small scale: two parties with the `k = 16` set (`N = 2048`, `β = 2^-62`, `B = 2^26`).
/// With the blind-rotate key built by f64 FFT products, the blind-rotation noise is orders of
/// magnitude above the exact key's; extrapolated to `k = 32` (BK term ∝ `k·n·(1 + 2pkN)`), the
/// fresh-bootstrap error rate is far from the design's `< 10⁻⁹` (paper: Err1 ≈ 4%).
/// Over three minutes on the 2-core CI box (two exact `k = 16` key sets): run by
/// `bench/tfhe-mk.sh` with the other statistical tests.
#[test]
#[ignore = "long: run by bench/tfhe-mk.sh"]
fn t10_fft_in_keygen_breaks_correctness() {
    let p = MkParams::ako_k16();
    let exact = local(&p, 2, 10, ProductMethod::Exact);
    let fft = local(&p, 2, 10, ProductMethod::F64FftInexact);
    let v_exact = blind_rotation_variance(&exact, 2, 100);
    let v_fft = blind_rotation_variance(&fft, 2, 100);
    let model = p.noise_for(2, false).blind_rotation;
    // Extrapolate the FFT excess to k = 32 parties with the k = 32 set.
    let p32 = MkParams::ako_k32();
    let grow = |pp: &MkParams, k: f64| {
        k * pp.lwe_dimension as f64 * (1.0 + 2.0 * pp.ternary_p * k * pp.polynomial_size as f64)
    };
    let excess32 = (v_fft - v_exact).max(0.0) * grow(&p32, 32.0) / grow(&p, 2.0)
        * 2f64.powi(2 * (p32.pbs_base_log as i32 - p.pbs_base_log as i32));
    let v0_32 = p32.noise().v0;
    let err1_fft = two_sided_tail(0.125 / (v0_32 + excess32).sqrt());
    eprintln!(
        "T10: BR variance exact {v_exact:.3e} (Eq. 12: {model:.3e}), FFT {v_fft:.3e}; \
         extrapolated k=32 Err1 with FFT keys {err1_fft:.2e} (exact: {:.1e})",
        p32.noise().err1
    );
    // With exact keys, what is left is the f64 FFT error of *evaluation* (64-bit coefficients,
    // B = 2^26; not in Eq. 12, spec O8): measured ≈ 1e-8 here, far below V0 ≈ 4.6e-4.
    assert!(v_exact < 1e-6, "exact key noise {v_exact:.3e}");
    assert!(v_fft > 100.0 * v_exact, "FFT key noise not visible");
    assert!(err1_fft > 1e-3, "extrapolated FFT error rate {err1_fft}");
    assert!(p32.noise().err1 < 1e-9);
    // And the FFT key still bootstraps at k = 2 (the failure needs many parties).
    let mut rng = Csprng::insecure_from_seed_for_tests([101; 32]);
    let mut ev = fft.server.evaluator().unwrap();
    let c = fft.encrypt(0, true, &mut rng);
    assert!(decrypt_bool_with_all_keys(
        &fft.keys(),
        &ev.bootstrap(&c).unwrap()
    ));
}

/// Dynamic variant on a global list of 4 parties (toy parameters for speed): subsets of
/// sizes 2, 3, 4, the wrong-key check, and a late join of a 5th party.
fn dynamic_variant(params: &MkParams, seed: u8) {
    let mut rng = Csprng::insecure_from_seed_for_tests([seed; 32]);
    let crs = Crs { seed: [seed; 32] };
    let mut sks: Vec<_> = (0..4)
        .map(|q| MkSecretKey::generate(params, q, &mut rng).unwrap())
        .collect();
    let mut pks: Vec<_> = sks
        .iter()
        .map(|sk| public_key_share(params, &crs, sk, &mut rng).unwrap())
        .collect();
    let mut dyns = Vec::new();
    let mut tmps = Vec::new();
    for sk in &sks {
        let (d, t) = dynamic_bootstrap_share(params, &crs, sk, &pks, &mut rng).unwrap();
        dyns.push(d);
        tmps.push(t);
    }
    let mut ksks: Vec<_> = sks
        .iter()
        .map(|sk| keyswitch_key_share(params, sk, &mut rng).unwrap())
        .collect();
    let check_subset = |subset: &[usize],
                        sks: &[MkSecretKey],
                        dyns: &[DynamicBootstrapShare],
                        ksks: &[KeySwitchKeyShare],
                        rng: &mut Csprng| {
        // Only S's material is handed over: parties outside S are never contacted.
        let d: Vec<_> = dyns.iter().filter(|x| subset.contains(&x.party)).collect();
        let ks: Vec<_> = ksks.iter().filter(|x| subset.contains(&x.party)).collect();
        let ek = dynamic_evaluation_key(params, subset, &d, &ks).unwrap();
        let server = MkServerKey::new(&ek).unwrap();
        assert_eq!(server.lwe_dimension(), subset.len() * params.lwe_dimension);
        let mut ev = server.evaluator().unwrap();
        let keys: Vec<&MkSecretKey> = subset.iter().map(|&q| &sks[q]).collect();
        let mut wrong = 0;
        let fresh = MkSecretKey::generate(params, 99, rng).unwrap();
        let mut bad_keys = keys.clone();
        bad_keys[0] = &fresh;
        let m = subset.len();
        for rep in 0..6 {
            for (x, y) in [(false, false), (false, true), (true, false), (true, true)] {
                let (sa, sb) = (rep % m, (rep + 1) % m);
                let a =
                    embed(&keys[sa].encrypt_bool_local(params, x, rng).unwrap(), sa, m).unwrap();
                let b =
                    embed(&keys[sb].encrypt_bool_local(params, y, rng).unwrap(), sb, m).unwrap();
                let c = ev.nand(&a, &b).unwrap();
                assert_eq!(
                    decrypt_bool_with_all_keys(&keys, &c),
                    !(x && y),
                    "S={subset:?}"
                );
                if decrypt_bool_with_all_keys(&bad_keys, &c) == (x && y) {
                    wrong += 1;
                }
            }
        }
        // A replaced key gives about half wrong answers (24 trials: 4..=20 with prob > 99.8%).
        assert!(
            (4..=20).contains(&wrong),
            "S={subset:?}: {wrong}/24 wrong with a bad key"
        );
    };
    for subset in [vec![0, 2], vec![1, 2, 3], vec![0, 1, 2, 3]] {
        check_subset(&subset, &sks, &dyns, &ksks, &mut rng);
    }
    // Late join of party 4: it publishes b^(4); the others extend with their stored r, r'.
    let newcomer = MkSecretKey::generate(params, 4, &mut rng).unwrap();
    let new_pk = public_key_share(params, &crs, &newcomer, &mut rng).unwrap();
    for ((sk, t), d) in sks.iter().zip(&tmps).zip(dyns.iter_mut()) {
        dynamic_extend_for_new_party(params, &crs, sk, t, d, &new_pk, &mut rng).unwrap();
        // Extending twice is refused.
        assert!(dynamic_extend_for_new_party(params, &crs, sk, t, d, &new_pk, &mut rng).is_err());
    }
    pks.push(new_pk);
    let (d, _) = dynamic_bootstrap_share(params, &crs, &newcomer, &pks, &mut rng).unwrap();
    dyns.push(d);
    ksks.push(keyswitch_key_share(params, &newcomer, &mut rng).unwrap());
    sks.push(newcomer);
    check_subset(&[0, 1, 2, 3, 4], &sks, &dyns, &ksks, &mut rng);
    check_subset(&[2, 4], &sks, &dyns, &ksks, &mut rng);
}

#[test]
fn t11_dynamic_variant_and_late_join_toy() {
    dynamic_variant(&MkParams::insecure_toy(4), 11);
}

/// T11 with the `k = 4` row's parameters (slow: ~1 min).
#[test]
#[ignore]
fn t11_dynamic_variant_and_late_join_k4_params() {
    dynamic_variant(&MkParams::ako_k4(), 12);
}

/// T13 (estimator reproduction) needs Sage and the lattice-estimator, which this machine does
/// not have; what is checked is that every set records the App. C figures quoted in the spec
/// (min over attacks, ≈ 100 bits) and that the toy set records none.
#[test]
fn t13_security_estimates_recorded() {
    for k in crate::mk::params::TABLE3_PARTIES {
        let p = MkParams::ako(k).unwrap();
        assert!((99.8..=101.2).contains(&p.security_bits), "k={k}");
    }
    assert_eq!(MkParams::ako_k2().security_bits, 99.9);
    assert_eq!(MkParams::ako_k4().security_bits, 99.8);
    assert_eq!(MkParams::ako_k128().security_bits, 101.2);
    assert_eq!(MkParams::insecure_toy(2).security_bits, 0.0);
}

#[test]
fn distributed_decryption_with_smudging() {
    let p = MkParams::ako_k2();
    let l = local(&p, 2, 14, ProductMethod::Exact);
    let mut rng = Csprng::insecure_from_seed_for_tests([140; 32]);
    let mut ev = l.server.evaluator().unwrap();
    let sigma = default_smudging_std(&p, 2);
    assert!(sigma > 0.0);
    assert!(smudged_failure_probability(&p, 2, sigma) <= 2f64.powi(-20) * 1.01);
    // The statistical guarantee is weak (module doc): well under 10 bits.
    let sd = smudging_statistical_distance_log2(6.0 * p.noise().v0.sqrt(), 2f64.sqrt() * sigma);
    assert!(sd > -10.0);
    for (x, y) in [(false, false), (false, true), (true, false), (true, true)] {
        let a = l.encrypt(0, x, &mut rng);
        let b = l.encrypt(1, y, &mut rng);
        let c = ev.nand(&a, &b).unwrap();
        let parts: Vec<_> = (0..2)
            .map(|slot| partial_decrypt(&l.sks[slot], slot, &c, sigma, &mut rng).unwrap())
            .collect();
        let (bit, _) = combine_partial_decryptions(&c, 2, &parts).unwrap();
        assert_eq!(bit, !(x && y));
        // The MPC-rounding form: round(4·(b' − ⟨a, s⟩)) mod 4 is 1 for true, 0 for false.
        let f = to_mpc_rounding_form(&c);
        assert_eq!(
            (f.modulus_log(), f.message_log(), f.mask().len()),
            (32, 2, 2 * p.lwe_dimension)
        );
        let mut acc = f.body();
        for (slot, sk) in l.sks.iter().enumerate() {
            let seg = sk.lwe_key_segment();
            for (a, s) in f.mask()[sk.segment_range(slot)].iter().zip(seg.iter()) {
                acc = acc.wrapping_sub(a.wrapping_mul(*s));
            }
        }
        let acc = acc & 0xffff_ffff;
        let m = ((acc + (1 << 29)) >> 30) & 3;
        assert_eq!(m, u64::from(!(x && y)));
    }
    let c = ev.trivial(true);
    let p0 = partial_decrypt(&l.sks[0], 0, &c, sigma, &mut rng).unwrap();
    assert!(combine_partial_decryptions(&c, 2, &[p0, p0]).is_err());
    assert!(partial_decrypt(&l.sks[0], 2, &c, sigma, &mut rng).is_err());
}

/// T7 (Experiment #1 style): `trials` trials at `k` parties — two fresh joint encryptions
/// bootstrapped (Err1: output phase off by ≥ 1/8), then the rounded blind-rotation phase `φ̃` of
/// `1/8 − c1' − c2'` checked in the symmetric interval of half-width 1/8 (Err2). Returns
/// `(Err1, Err2)`.
fn experiment_1(k: usize, trials: usize, seed: u8) -> (usize, usize) {
    let p = MkParams::ako(k).unwrap();
    let l = local(&p, k, seed, ProductMethod::Exact);
    let mut rng = Csprng::insecure_from_seed_for_tests([seed ^ 0x77; 32]);
    let mut ev = l.server.evaluator().unwrap();
    let keys = l.keys();
    let s = l.s_concat();
    let log2_2n = (2 * p.polynomial_size).trailing_zeros();
    let (mut e1, mut e2) = (0, 0);
    for i in 0..trials {
        let mut outs = Vec::new();
        let mut mus = Vec::new();
        for j in 0..2 {
            let bit = u32::random(&mut rng) & 1 == 1;
            let out = ev
                .bootstrap(&l.encrypt_joint((i + j) % k, bit, &mut rng))
                .unwrap();
            let mu = if bit { 0.125 } else { -0.125 };
            if (phase_with_all_keys(&keys, &out).decode() - mu).abs() >= 0.125 {
                e1 += 1;
            }
            outs.push(out);
            mus.push(mu);
        }
        let mut c = LweCiphertext::trivial(k * p.lwe_dimension, 1u32 << 29);
        c.sub_assign(&outs[0]);
        c.sub_assign(&outs[1]);
        let mut phi = c.body().mod_switch(log2_2n) as i64;
        for (a, b) in c.mask().iter().zip(s.as_slice()) {
            phi -= a.mod_switch(log2_2n) as i64 * i64::from(*b);
        }
        let two_n = 2 * p.polynomial_size as i64;
        let phi = phi.rem_euclid(two_n) as f64 / two_n as f64;
        let mut d = (phi - (0.125 - mus[0] - mus[1])).rem_euclid(1.0);
        if d > 0.5 {
            d -= 1.0;
        }
        if d.abs() >= 0.125 {
            e2 += 1;
        }
    }
    (e1, e2)
}

#[test]
fn t7_error_rates_small_sample() {
    // 50 trials at k = 2 in CI (the full 1000-trial runs are the ignored test and the bench).
    let (e1, e2) = experiment_1(2, 50, 70);
    assert_eq!(e1, 0);
    assert!(e2 <= 1);
}

/// T7 at full size: 1000 trials for k = 2, 3, 4, 5, 8; acceptance Err1 = 0 and Err2 ≤ 1.
/// Slow (~10 min; the same run is in `bench/tfhe-mk.sh`).
#[test]
#[ignore]
fn t7_error_rates_1000_trials() {
    for k in [2, 3, 4, 5, 8] {
        let (e1, e2) = experiment_1(k, 1000, 71);
        eprintln!("T7 k={k}: Err1 {e1}/2000, Err2 {e2}/1000");
        assert_eq!(e1, 0, "k={k}");
        assert!(e2 <= 1, "k={k}");
    }
}

/// T12 (performance report; the full table is `bench/tfhe-mk.sh`): key sizes equal the §5.2
/// formula exactly, and the bootstrapping time per party stays flat from k = 2 to k = 4 (the
/// cost is linear in k: within 2x per party — the k = 4 set has d = 3 gadget levels against
/// d = 2 at k = 2, so 1.5x is expected — which also allows for the load of a shared machine).
#[test]
#[ignore]
fn t12_performance_linear_in_k() {
    let mut per_party = Vec::new();
    for k in [2, 4] {
        let p = MkParams::ako(k).unwrap();
        let l = local(&p, k, 120, ProductMethod::Exact);
        assert_eq!(l.ek.size_bytes() as u64, p.key_bytes(k));
        let mut rng = Csprng::insecure_from_seed_for_tests([121; 32]);
        let c = l.encrypt_joint(0, true, &mut rng);
        let mut ev = l.server.evaluator().unwrap();
        let mut t: Vec<f64> = (0..100)
            .map(|_| {
                let s = std::time::Instant::now();
                ev.bootstrap(&c).unwrap();
                s.elapsed().as_secs_f64()
            })
            .collect();
        t.sort_by(f64::total_cmp);
        eprintln!("T12 k={k}: median tB {:.1} ms", t[50] * 1e3);
        per_party.push(t[50] / k as f64);
    }
    assert!(
        per_party[1] < 2.0 * per_party[0],
        "per-party cost {per_party:?}"
    );
}
