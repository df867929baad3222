//! Seed 001 §9.5 / issue 13: the multi-key noise measured after each operation
//! ([`mk::noise_log2`], [`noise::phase_noise_log2`] for a merged threshold decryption,
//! `reenc::noise_budget` for a re-encryption) against the variance-based estimate of
//! [`MkNoiseEstimator`], and the decryption failure threshold found experimentally against the
//! one the estimator predicts.
//!
//! **Tolerance.** The estimate is `½·log2 V + log2 τ` with `τ` the tail factor of `2^-20`
//! (`κ = 20`), so the measured `log2 ‖e‖_∞` must lie **at or below the estimate and at most
//! [`TOL_BITS`] = 1.5 bits below it** (the largest of `n` Gaussian coefficients is typically
//! 0.6–0.8 bits below the `κ = 20` tail; measured gaps are 0.5–1.1 bits).
//!
//! **Operations** (seed001, Table 2's gadget, grouped relinearization on the fly, the paper's
//! σ = 2^20 smudging): fresh, HomAdd of k users, threshold decryption and re-encryption (N = 1,
//! 4) of the sum (smudging-dominated), a depth-5 chain (one product of two independent k-user
//! sums, then four squarings), threshold decryption and re-encryption (N = 2) at depth 5; for
//! k = 2 and 4 (CI) and 8 (ignored); plus the RNS gadget, ungrouped relinearization and
//! statistical smudging.
//!
//! **Failure thresholds** (small parameters, Gaussian secrets, t = 256): along a scan, the first
//! step at which decryption fails is within one step of the first step the estimator says
//! decryption typically fails ([`MkNoiseEstimator::typically_fails`]), and never before the
//! first step it says it may fail ([`MkNoiseEstimator::fails`]); every step after the first
//! failure fails too. Scans: the depth of a squaring chain (three moduli, ~19 bits a step), the
//! gadget base of one product (one bit a step) and the number of proxies of a re-encryption
//! (half a bit a step); ten seeds each and n = 4096 in an ignored test.

use coterie_bfv::encrypt::decrypt_multi_key;
use coterie_bfv::mk::{self, Relin, Smudging};
use coterie_bfv::mk_noise::MkNoiseEstimator;
use coterie_bfv::params::{SecretDistribution, moduli_for_bits};
use coterie_bfv::reenc::{self, rekey_gen};
use coterie_bfv::{Ciphertext, Context, Decomposition, Params, Plaintext, SecretKey};
use coterie_bfv::{noise, reenc::ReKeyShare};
use coterie_math::prg::Csprng;
use rand::Rng;

mod common;
use common::{Users, add_pt, negacyclic, rng};

/// How far (bits) the measured noise may lie below the estimate.
const TOL_BITS: f64 = 1.5;

/// The noise tests' helpers on [`Users`].
trait NoiseUsers {
    fn random_pt(&self, r: &mut Csprng) -> Vec<u64>;
    fn fresh_sum(&self, r: &mut Csprng) -> (Vec<Ciphertext>, Ciphertext, Vec<u64>);
    fn noise(&self, ct: &Ciphertext) -> f64;
    fn decrypts_to(&self, ct: &Ciphertext, m: &[u64]) -> bool;
}

impl NoiseUsers for Users {
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

/// Re-encrypts `ct` through `proxies` proxies to user 100: whether it decrypts to what `ct`
/// decrypts to, and its noise.
fn reencrypt(
    u: &Users,
    ct: &Ciphertext,
    proxies: usize,
    smudging: &Smudging,
    r: &mut Csprng,
) -> (bool, f64) {
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
    let ok = reenc::decrypt_reencrypted(&mks, &rct).unwrap()
        == decrypt_multi_key(ct, &u.keys()).unwrap();
    let budget = reenc::noise_budget(&mks, &rct).unwrap();
    // As mk::noise_log2: ‖e‖ = Q·‖v‖/t, budget = −1 − log2 ‖v‖.
    let q = MkNoiseEstimator::new(&u.ctx).unwrap().log_q();
    let noise = -1.0 - budget + q - (u.ctx.scalar_t().unwrap() as f64).log2();
    (ok, noise)
}

/// The noise of `ct` re-encrypted through `proxies` proxies, which must decrypt.
fn reenc_noise(
    u: &Users,
    ct: &Ciphertext,
    proxies: usize,
    smudging: &Smudging,
    r: &mut Csprng,
) -> f64 {
    let (ok, noise) = reencrypt(u, ct, proxies, smudging, r);
    assert!(ok, "re-encryption through {proxies} proxies");
    noise
}

/// Fresh, HomAdd, a depth-5 chain (an independent product, then four squarings), threshold
/// decryption and re-encryption on `ctx` for `k` users with Table 2's gadget; every measured
/// noise against the estimate.
fn chain(ctx: &Context, k: usize, seed: u8) {
    let mut r = rng(seed);
    let dec = mk::paper_decomposition(k).unwrap();
    let u = Users::new(ctx, &(1..=k as u64).collect::<Vec<_>>(), dec, 5, &mut r);
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

/// k = 8 on the paper's parameters (log B = 34, ℓ = 7): 81 tensor parts per product, about
/// 11 s at `--profile ci`: `cargo test --profile ci -p coterie-bfv --test mk_noise -- --ignored`.
#[test]
#[ignore = "about 11 s (k = 8): cargo test --profile ci -p coterie-bfv --test mk_noise -- --ignored"]
fn noise_after_each_operation_k8_seed001() {
    let ctx = Context::new(Params::seed001().unwrap()).unwrap();
    chain(&ctx, 8, 23);
}

/// The other gadgets and relinearization variants the estimator models (k = 2, seed001, one
/// product): the RNS gadget (grouped) and Table 2's power-of-two gadget ungrouped; threshold
/// decryption with statistical smudging (uniform, so the Gaussian tail over-estimates it by
/// about 1.5 bits: tolerance 2.5 bits there); and [`noise::phase_noise_log2`] agrees with
/// [`mk::noise_log2`].
#[test]
fn other_gadgets_statistical_smudging_and_the_phase_meter() {
    let ctx = Context::new(Params::seed001().unwrap()).unwrap();
    let est = MkNoiseEstimator::new(&ctx).unwrap();
    let mut r = rng(24);
    for (dec, grouped) in [
        (Decomposition::Rns, true),
        (mk::paper_decomposition(2).unwrap(), false),
    ] {
        let u = Users::new(&ctx, &[1, 2], dec, 5, &mut r);
        let (_, y, _) = u.fresh_sum(&mut r);
        let (_, w, _) = u.fresh_sum(&mut r);
        let z = mk::mul(
            &y,
            &w,
            &Relin::OnTheFly {
                keys: &u.rlks,
                grouped,
            },
        )
        .unwrap();
        let v = est.add(&est.fresh(), &est.fresh(), 2);
        let vz = est.mul(&v, &v, 2, false, dec, grouped).unwrap();
        check(
            &format!("product, {dec:?}, grouped {grouped}"),
            u.noise(&z),
            est.log2_inf(&vz),
        );
        // The phase meter: the same value from the phase, in either representation.
        let mut x = mk::phase(&y, &u.keys()).unwrap();
        let measured = noise::phase_noise_log2(&ctx, &x, y.level()).unwrap();
        assert_eq!(measured, u.noise(&y));
        x.to_ntt();
        assert_eq!(
            noise::phase_noise_log2(&ctx, &x, y.level()).unwrap(),
            measured
        );
        // A phase of another ring is an error, not a panic.
        let toy = common::toy(256);
        let sk = SecretKey::generate(&toy, &mut r);
        let pt = Plaintext::encode_coefficients(&toy, &[1]).unwrap();
        let c = mk::encrypt(&sk.public_key(&mut r), 1, &pt, &mut r).unwrap();
        let other = mk::phase(&c, &[(1, &sk)]).unwrap();
        assert!(noise::phase_noise_log2(&toy, &other, c.level()).unwrap() < 20.0);
        assert!(noise::phase_noise_log2(&ctx, &other, y.level()).is_err());
        if let Decomposition::Rns = dec {
            // Statistical smudging of 2^(noise + 40) per user.
            let noise_log2 = u.noise(&y).ceil() as u32;
            let smdg = Smudging::Statistical {
                lambda: 40,
                noise_log2,
            };
            let measured = threshold_noise(&u, &y, &smdg, &mut r);
            let e = est.log2_inf(&est.part_dec(&v, 2, &smdg));
            eprintln!(
                "threshold decryption, {smdg:?}: measured 2^{measured:.2}, estimate 2^{e:.2}"
            );
            assert!(measured <= e && e - measured <= 2.5, "{measured} vs {e}");
        }
    }
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

/// Where decryption starts to fail along a scan: the first failing step measured, and the first
/// step for which the estimator says decryption may fail ([`MkNoiseEstimator::fails`], the safe
/// side) and typically fails ([`MkNoiseEstimator::typically_fails`]).
#[derive(Debug)]
struct Threshold {
    measured: usize,
    safe: usize,
    typical: usize,
}

impl Threshold {
    /// Runs `step(i) -> (decrypts, estimate)` for `i = 0, 1, …` until all three are found and
    /// one more step has run past the measured failure, which must fail too.
    fn scan(what: &str, steps: usize, mut step: impl FnMut(usize) -> (bool, Noise)) -> Self {
        let (mut measured, mut safe, mut typical) = (None, None, None);
        for i in 0..steps {
            let (ok, noise) = step(i);
            let est = |f: bool| if f { "fails" } else { "decrypts" };
            if let Some(m) = measured {
                assert!(!ok, "{what}: step {i} decrypts after a failure at step {m}");
            }
            if !ok && measured.is_none() {
                measured = Some(i);
            }
            if safe.is_none() && noise.0 {
                safe = Some(i);
            }
            if typical.is_none() && noise.1 {
                typical = Some(i);
            }
            eprintln!(
                "  {what}, step {i}: {}; estimator: may fail {}, typically {}",
                est(!ok),
                est(noise.0),
                est(noise.1)
            );
            if matches!((measured, safe, typical), (Some(m), Some(_), Some(_)) if i > m) {
                break;
            }
        }
        let t = Threshold {
            measured: measured.expect("decryption fails within the scan"),
            safe: safe.expect("the estimator predicts a failure within the scan"),
            typical: typical.expect("the estimator predicts a failure within the scan"),
        };
        eprintln!("{what}: {t:?}");
        t
    }

    /// The typical prediction is within one step of the measured threshold, and the safe one
    /// is not after it.
    fn check(&self, what: &str) {
        assert!(
            self.measured.abs_diff(self.typical) <= 1 && self.safe <= self.measured,
            "{what}: {self:?}"
        );
    }
}

/// `(fails, typically_fails)` of the estimate, as [`Threshold::scan`] takes it.
type Noise = (bool, bool);

fn predict(est: &MkNoiseEstimator, noise: &coterie_bfv::mk_noise::Noise) -> Noise {
    (est.fails(noise), est.typically_fails(noise))
}

/// The failure depth of a chain (a two-user product, then squarings) on `ctx`.
fn failure_depth(ctx: &Context, dec: Decomposition, max: usize, seed: u8) -> Threshold {
    let mut r = rng(seed);
    let u = Users::new(ctx, &[1, 2], dec, 5, &mut r);
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
    let what = format!("log q = {:.0}, depth 1 + step", est.log_q());
    Threshold::scan(&what, max, |i| {
        if i > 0 {
            z = mk::mul(&z, &z, &relin).unwrap();
            mz = negacyclic(&mz, &mz, t);
            vz = est.mul(&vz, &vz, 2, true, dec, true).unwrap();
        }
        (u.decrypts_to(&z, &mz), predict(&est, &vz))
    })
}

/// The failure depth found experimentally agrees with the estimator's within one level, for
/// three moduli (n = 1024, log B = 20; each level adds about 19 bits).
#[test]
fn failure_depth_agrees_with_the_estimate() {
    let dec = Decomposition::PowerOfTwo { base_log: 20 };
    for (log_q, seed, depth) in [(75u32, 31u8, 3usize), (93, 32, 4), (112, 33, 5)] {
        let ctx = small(1024, log_q);
        let th = failure_depth(&ctx, dec, 7, seed);
        th.check(&format!("log q = {log_q}"));
        // The thresholds move with the modulus: one more level per ~19 bits.
        assert_eq!(th.measured + 1, depth, "log q = {log_q}");
    }
}

/// The first gadget base `2^(36 + step)` at which one product of two users' sums fails to
/// decrypt (`n`, `log q`): the relinearization noise doubles per step.
fn failure_gadget_base(n: usize, log_q: u32, seed: u8) -> Threshold {
    let ctx = small(n, log_q);
    let est = MkNoiseEstimator::new(&ctx).unwrap();
    let t = ctx.scalar_t().unwrap();
    let mut r = rng(seed);
    let what = format!("n = {n}, log q = {log_q}, log B = 36 + step");
    Threshold::scan(&what, 27, |i| {
        let dec = Decomposition::PowerOfTwo {
            base_log: 36 + i as u32,
        };
        let u = Users::new(&ctx, &[1, 2], dec, 5, &mut r);
        let (_, y, my) = u.fresh_sum(&mut r);
        let (_, w, mw) = u.fresh_sum(&mut r);
        let relin = Relin::OnTheFly {
            keys: &u.rlks,
            grouped: true,
        };
        let z = mk::mul(&y, &w, &relin).unwrap();
        let v = est.add(&est.fresh(), &est.fresh(), 2);
        let vz = est.mul(&v, &v, 2, false, dec, true).unwrap();
        if u.decrypts_to(&z, &negacyclic(&my, &mw, t)) {
            // Below the threshold the measured noise is also within the tolerance.
            check(
                &format!("  product, {dec:?}"),
                u.noise(&z),
                est.log2_inf(&vz),
            );
            (true, predict(&est, &vz))
        } else {
            (false, predict(&est, &vz))
        }
    })
}

/// A finer threshold (one bit of noise per step): the gadget base at which a product starts to
/// fail, n = 1024, log q = 70.
#[test]
fn failure_gadget_base_agrees_with_the_estimate() {
    failure_gadget_base(1024, 70, 41).check("gadget base");
}

/// The number of proxies `N = 2^step` at which re-encryption of a fresh two-user sum starts to
/// fail with the paper's smudging (σ = 2^20 per proxy, so half a bit of noise per step), on
/// `n = 1024` and a 34-bit modulus (`Δ/2 = 2^25`).
fn failure_proxies(seed: u8) -> Threshold {
    let ctx = small(1024, 34);
    let est = MkNoiseEstimator::new(&ctx).unwrap();
    let mut r = rng(seed);
    let u = Users::new(&ctx, &[1, 2], Decomposition::Rns, 5, &mut r);
    let (_, y, my) = u.fresh_sum(&mut r);
    assert!(u.decrypts_to(&y, &my));
    let v = est.add(&est.fresh(), &est.fresh(), 2);
    let smdg = Smudging::PaperSigma20;
    Threshold::scan("log q = 34, N = 2^step proxies", 11, |i| {
        let n = 1usize << i;
        let (ok, _) = reencrypt(&u, &y, n, &smdg, &mut r);
        (ok, predict(&est, &est.reenc(&v, n, &smdg)))
    })
}

/// The smudging width (number of proxies) at which re-encryption starts to fail.
#[test]
fn failure_proxies_agrees_with_the_estimate() {
    failure_proxies(51).check("proxies");
}

/// The thresholds above over ten seeds each, and the gadget-base threshold also at n = 4096:
/// the agreement is not luck. About 30 s at `--profile ci` (2 cores):
/// `cargo test --profile ci -p coterie-bfv --test mk_noise -- --ignored`.
#[test]
#[ignore = "about 30 s: cargo test --profile ci -p coterie-bfv --test mk_noise -- --ignored"]
fn failure_thresholds_over_many_seeds() {
    for seed in 100..110u8 {
        failure_gadget_base(1024, 70, seed).check(&format!("gadget base, seed {seed}"));
        failure_gadget_base(4096, 80, seed).check(&format!("gadget base n = 4096, seed {seed}"));
        failure_proxies(seed).check(&format!("proxies, seed {seed}"));
    }
}
