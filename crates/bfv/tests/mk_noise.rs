//! Seed 001 §9.5 / issue 13: the multi-key noise measured after each operation
//! ([`mk::noise_log2`], [`noise::phase_noise_log2`]) against the variance-based estimate of
//! [`MkNoiseEstimator`], and the decryption failure threshold found experimentally against the
//! one the estimator predicts.
//!
//! Tolerance: the estimate is `½·log2 V + log2 τ` with `τ` the tail factor of `2^-20`
//! (`κ = 20`), so the measured `log2 ‖e‖_∞` must lie **at or below the estimate, and at most
//! [`TOL_BITS`] below it** (the largest of `n` Gaussian coefficients is typically 0.6–0.8 bits
//! below the `κ = 20` tail; the rest is the model's slack).
//!
//! The CI part runs k = 2 on the paper's parameters and the failure thresholds on small
//! parameters; k = 4 on the paper's parameters is `#[ignore]`d (see its doc comment).

use coterie_bfv::encrypt::decrypt_multi_key;
use coterie_bfv::mk::{self, MkCrs, MkRelinKey, Relin, Smudging};
use coterie_bfv::mk_noise::MkNoiseEstimator;
use coterie_bfv::params::{SecretDistribution, moduli_for_bits};
use coterie_bfv::reenc::{self, rekey_gen};
use coterie_bfv::{Ciphertext, Context, Decomposition, Params, Plaintext, PublicKey, SecretKey};
use coterie_bfv::{noise, reenc::ReKeyShare};
use coterie_math::prg::Csprng;
use rand::Rng;

mod common;
use common::{add_pt, negacyclic, rng};

/// How far (bits) the measured noise may lie below the estimate.
const TOL_BITS: f64 = 1.5;

struct Users {
    ctx: Context,
    ids: Vec<u64>,
    sks: Vec<SecretKey>,
    pks: Vec<PublicKey>,
    rlks: Vec<MkRelinKey>,
}

impl Users {
    fn new(ctx: &Context, k: usize, dec: Decomposition, r: &mut Csprng) -> Users {
        let crs = MkCrs::new(ctx, &[5; 32], dec).unwrap();
        let ids: Vec<u64> = (1..=k as u64).collect();
        let sks: Vec<SecretKey> = ids.iter().map(|_| SecretKey::generate(ctx, r)).collect();
        let pks = sks.iter().map(|s| s.public_key(r)).collect();
        let rlks = sks
            .iter()
            .zip(&ids)
            .map(|(s, &id)| MkRelinKey::generate(s, id, &crs, r).unwrap())
            .collect();
        Users {
            ctx: ctx.clone(),
            ids,
            sks,
            pks,
            rlks,
        }
    }

    fn keys(&self) -> Vec<(u64, &SecretKey)> {
        self.ids.iter().copied().zip(self.sks.iter()).collect()
    }

    fn random_pt(&self, r: &mut Csprng) -> Vec<u64> {
        let t = self.ctx.scalar_t().unwrap();
        (0..self.ctx.degree()).map(|_| r.next_u64() % t).collect()
    }

    /// The sum of one fresh encryption of a random plaintext per user, and its plaintext.
    fn fresh_sum(&self, r: &mut Csprng) -> (Vec<Ciphertext>, Ciphertext, Vec<u64>) {
        let t = self.ctx.scalar_t().unwrap();
        let mut cs = Vec::new();
        let mut m = vec![0u64; self.ctx.degree()];
        for (pk, &id) in self.pks.iter().zip(&self.ids) {
            let mi = self.random_pt(r);
            m = add_pt(&m, &mi, t);
            let pt = Plaintext::encode_coefficients(&self.ctx, &mi).unwrap();
            cs.push(mk::encrypt(pk, id, &pt, r).unwrap());
        }
        let mut sum = cs[0].clone();
        for c in &cs[1..] {
            sum = mk::add(&sum, c).unwrap();
        }
        (cs, sum, m)
    }

    fn noise(&self, ct: &Ciphertext) -> f64 {
        mk::noise_log2(ct, &self.keys()).unwrap()
    }

    fn decrypts_to(&self, ct: &Ciphertext, m: &[u64]) -> bool {
        decrypt_multi_key(ct, &self.keys())
            .unwrap()
            .coefficients()
            .unwrap()
            == m
    }
}

/// Asserts `est − TOL_BITS ≤ measured ≤ est` and prints the pair.
fn check(what: &str, measured: f64, est: f64) {
    eprintln!(
        "{what:<44} measured 2^{measured:6.2}  estimate 2^{est:6.2}  gap {:5.2}",
        est - measured
    );
    assert!(
        measured <= est && est - measured <= TOL_BITS,
        "{what}: measured 2^{measured:.2}, estimate 2^{est:.2}"
    );
}

/// The noise of a merged threshold decryption `c_0 + Σ_i m_i` of `ct` by all of `u`'s users.
fn threshold_noise(u: &Users, ct: &Ciphertext, smudging: &Smudging, r: &mut Csprng) -> f64 {
    let mut x = ct.parts()[0].clone();
    let mut parts = Vec::new();
    for (&id, sk) in u.ids.iter().zip(&u.sks) {
        let p = mk::part_dec(sk, id, ct, smudging, r).unwrap();
        x += p.poly();
        parts.push(p);
    }
    // The merged phase is the one Merge rounds.
    let m = mk::merge(ct, &parts).unwrap();
    assert_eq!(
        m,
        decrypt_multi_key(ct, &u.keys()).unwrap(),
        "threshold decryption"
    );
    noise::phase_noise_log2(&u.ctx, &x, ct.level()).unwrap()
}

/// The noise of `ct` re-encrypted through `proxies` proxies to user 100.
fn reenc_noise(
    u: &Users,
    ct: &Ciphertext,
    proxies: usize,
    smudging: &Smudging,
    r: &mut Csprng,
) -> f64 {
    let mut mks = Vec::new();
    let mut shares: Vec<Vec<ReKeyShare>> = vec![Vec::new(); proxies];
    for (&id, sk) in u.ids.iter().zip(&u.sks) {
        let (m, sh) = rekey_gen(sk, id, 100, proxies, r).unwrap();
        mks.push(m);
        for (j, s) in sh.into_iter().enumerate() {
            shares[j].push(s);
        }
    }
    let parts: Vec<_> = (0..proxies)
        .map(|j| reenc::reenc_share(j, 100, &shares[j], ct, smudging, r).unwrap())
        .collect();
    let rct = reenc::reenc_combine(ct, &parts).unwrap();
    assert_eq!(
        reenc::decrypt_reencrypted(&mks, &rct).unwrap(),
        decrypt_multi_key(ct, &u.keys()).unwrap()
    );
    let budget = reenc::noise_budget(&mks, &rct).unwrap();
    // As mk::noise_log2: ‖e‖ = Q·‖v‖/t, budget = −1 − log2 ‖v‖.
    let q = MkNoiseEstimator::new(&u.ctx).unwrap().log_q();
    -1.0 - budget + q - (u.ctx.scalar_t().unwrap() as f64).log2()
}

/// Fresh, HomAdd, a depth-5 chain (an independent product, then four squarings), threshold
/// decryption and re-encryption on `ctx` for `k` users with Table 2's gadget; every measured
/// noise against the estimate.
fn chain(ctx: &Context, k: usize, seed: u8) {
    let mut r = rng(seed);
    let dec = mk::paper_decomposition(k).unwrap();
    let u = Users::new(ctx, k, dec, &mut r);
    let est = MkNoiseEstimator::new(ctx).unwrap();
    let t = ctx.scalar_t().unwrap();
    let relin = Relin::OnTheFly {
        keys: &u.rlks,
        grouped: true,
    };
    let smdg = Smudging::PaperSigma20;
    eprintln!(
        "k = {k}, {dec:?}, log2(Δ/2) = {:.1}, tail τ = {:.2}",
        est.threshold_log2(),
        est.tail()
    );
    let (xs, y, my) = u.fresh_sum(&mut r);
    let (_, w, mw) = u.fresh_sum(&mut r);
    let v_fresh = est.fresh();
    let worst_fresh = xs.iter().map(|c| u.noise(c)).fold(f64::MIN, f64::max);
    check("fresh (largest of k)", worst_fresh, est.log2_inf(&v_fresh));
    let mut v = v_fresh;
    for parts in 2..=k {
        v = est.add(&v, &v_fresh, parts);
    }
    check(&format!("HomAdd of {k}"), u.noise(&y), est.log2_inf(&v));
    // Threshold decryption and re-encryption of the sum: the smudging dominates.
    check(
        "threshold decryption of the sum",
        threshold_noise(&u, &y, &smdg, &mut r),
        est.log2_inf(&est.part_dec(&v, k, &smdg)),
    );
    for n in [1usize, 4] {
        check(
            &format!("re-encryption of the sum, N = {n}"),
            reenc_noise(&u, &y, n, &smdg, &mut r),
            est.log2_inf(&est.reenc(&v, n, &smdg)),
        );
    }
    // Depth 1: y·w; depth 2..5: squarings.
    let mut z = mk::mul(&y, &w, &relin).unwrap();
    let mut mz = negacyclic(&my, &mw, t);
    let mut vz = est.mul(&v, &v, k, false, dec, true).unwrap();
    assert!(u.decrypts_to(&z, &mz));
    check("HomMul depth 1 (y·w)", u.noise(&z), est.log2_inf(&vz));
    for depth in 2..=5 {
        z = mk::mul(&z, &z, &relin).unwrap();
        mz = negacyclic(&mz, &mz, t);
        vz = est.mul(&vz, &vz, k, true, dec, true).unwrap();
        assert!(u.decrypts_to(&z, &mz), "depth {depth}");
        check(
            &format!("HomMul depth {depth} (square)"),
            u.noise(&z),
            est.log2_inf(&vz),
        );
    }
    eprintln!(
        "depth 5: budget {:.1} bits measured, {:.1} estimated",
        mk::noise_budget(&z, &u.keys()).unwrap(),
        est.threshold_log2() - est.log2_inf(&vz)
    );
    check(
        "threshold decryption at depth 5",
        threshold_noise(&u, &z, &smdg, &mut r),
        est.log2_inf(&est.part_dec(&vz, k, &smdg)),
    );
    check(
        "re-encryption at depth 5, N = 2",
        reenc_noise(&u, &z, 2, &smdg, &mut r),
        est.log2_inf(&est.reenc(&vz, 2, &smdg)),
    );
}

/// k = 2 on the paper's parameters (log B = 46, ℓ = 5).
#[test]
fn noise_after_each_operation_k2_seed001() {
    let ctx = Context::new(Params::seed001().unwrap()).unwrap();
    chain(&ctx, 2, 21);
}

/// k = 4 on the paper's parameters (log B = 40, ℓ = 6).
#[test]
fn noise_after_each_operation_k4_seed001() {
    let ctx = Context::new(Params::seed001().unwrap()).unwrap();
    chain(&ctx, 4, 22);
}

/// k = 8 on the paper's parameters (log B = 34, ℓ = 7): 64 tensor parts per product. Slower:
/// `cargo test --profile ci -p coterie-bfv --test mk_noise -- --ignored`.
#[test]
#[ignore = "slower (k = 8): cargo test --profile ci -p coterie-bfv --test mk_noise -- --ignored"]
fn noise_after_each_operation_k8_seed001() {
    let ctx = Context::new(Params::seed001().unwrap()).unwrap();
    chain(&ctx, 8, 23);
}

/// Small parameters (Gaussian secrets σ = 3.2 as seed 001, t = 256) with `log_q` bits of modulus.
fn small(n: usize, log_q: u32) -> Context {
    let q = moduli_for_bits(n, log_q).unwrap();
    let p = Params::custom(
        "mk-noise-small",
        n,
        &q,
        256,
        3.2,
        SecretDistribution::Gaussian,
        "insecure",
    )
    .unwrap();
    Context::new(p).unwrap()
}

/// The failure depth: squarings of a two-user product until decryption fails (the first failing
/// depth, up to `max`), measured and as the estimator predicts it (the first depth whose
/// estimate reaches `Δ/2`).
fn failure_depth(ctx: &Context, dec: Decomposition, max: usize, seed: u8) -> (usize, usize) {
    let mut r = rng(seed);
    let u = Users::new(ctx, 2, dec, &mut r);
    let est = MkNoiseEstimator::new(ctx).unwrap();
    let t = ctx.scalar_t().unwrap();
    let relin = Relin::OnTheFly {
        keys: &u.rlks,
        grouped: true,
    };
    let (_, y, my) = u.fresh_sum(&mut r);
    let (_, w, mw) = u.fresh_sum(&mut r);
    let v = est.add(&est.fresh(), &est.fresh(), 2);
    let mut z = mk::mul(&y, &w, &relin).unwrap();
    let mut mz = negacyclic(&my, &mw, t);
    let mut vz = est.mul(&v, &v, 2, false, dec, true).unwrap();
    let (mut measured, mut predicted) = (None, None);
    for depth in 1..=max {
        if depth > 1 {
            z = mk::mul(&z, &z, &relin).unwrap();
            mz = negacyclic(&mz, &mz, t);
            vz = est.mul(&vz, &vz, 2, true, dec, true).unwrap();
        }
        let ok = u.decrypts_to(&z, &mz);
        eprintln!(
            "  log q = {:.0}, depth {depth}: estimate 2^{:.1} vs Δ/2 = 2^{:.1}, {}",
            est.log_q(),
            est.log2_inf(&vz),
            est.threshold_log2(),
            if ok { "decrypts" } else { "FAILS" }
        );
        if predicted.is_none() && est.fails(&vz) {
            predicted = Some(depth);
        }
        if measured.is_none() && !ok {
            measured = Some(depth);
        }
        if measured.is_some() && predicted.is_some() {
            break;
        }
    }
    (
        measured.expect("decryption failed within the depth"),
        predicted.expect("the estimator predicts a failure within the depth"),
    )
}

/// The failure depth found experimentally agrees with the estimator's within one level, for
/// three moduli (n = 1024, log B = 20).
#[test]
fn failure_depth_agrees_with_the_estimate() {
    let dec = Decomposition::PowerOfTwo { base_log: 20 };
    for (log_q, seed) in [(75u32, 31u8), (93, 32), (112, 33)] {
        let ctx = small(1024, log_q);
        let (measured, predicted) = failure_depth(&ctx, dec, 7, seed);
        eprintln!("log q = {log_q}: fails at depth {measured}, predicted {predicted}");
        assert!(
            measured.abs_diff(predicted) <= 1,
            "log q = {log_q}: fails at depth {measured}, estimator says {predicted}"
        );
    }
}

/// A finer threshold: one product of two users' sums (n = 1024, log q = 70) with the gadget
/// base `2^β` growing one bit at a time; the relinearization noise doubles per step. The first
/// `β` at which decryption fails agrees with the estimator's within one step, and the next
/// step fails too.
#[test]
fn failure_gadget_base_agrees_with_the_estimate() {
    let ctx = small(1024, 70);
    let est = MkNoiseEstimator::new(&ctx).unwrap();
    let t = ctx.scalar_t().unwrap();
    let mut r = rng(41);
    let (mut measured, mut predicted) = (None, None);
    let mut after = Vec::new();
    for base_log in 36..=62u32 {
        let dec = Decomposition::PowerOfTwo { base_log };
        let u = Users::new(&ctx, 2, dec, &mut r);
        let (_, y, my) = u.fresh_sum(&mut r);
        let (_, w, mw) = u.fresh_sum(&mut r);
        let relin = Relin::OnTheFly {
            keys: &u.rlks,
            grouped: true,
        };
        let z = mk::mul(&y, &w, &relin).unwrap();
        let ok = u.decrypts_to(&z, &negacyclic(&my, &mw, t));
        let v = est.add(&est.fresh(), &est.fresh(), 2);
        let vz = est.mul(&v, &v, 2, false, dec, true).unwrap();
        let measured_noise = u.noise(&z);
        eprintln!(
            "  log B = {base_log}: measured 2^{measured_noise:.1}, estimate 2^{:.1}, Δ/2 = 2^{:.1}: {}",
            est.log2_inf(&vz),
            est.threshold_log2(),
            if ok { "decrypts" } else { "FAILS" }
        );
        if predicted.is_none() && est.fails(&vz) {
            predicted = Some(base_log);
        }
        if measured.is_some() {
            after.push(ok);
        }
        if measured.is_none() && !ok {
            measured = Some(base_log);
        }
        if measured.is_some() && predicted.is_some() && !after.is_empty() {
            break;
        }
    }
    let (measured, predicted) = (measured.unwrap(), predicted.unwrap());
    eprintln!("fails from log B = {measured}, predicted {predicted}");
    assert!(
        measured.abs_diff(predicted) <= 1,
        "fails from log B = {measured}, estimator says {predicted}"
    );
    assert_eq!(after, [false], "the step after the first failure fails too");
}
