//! Randomized packing (seed 002 §5.2): `RandPack(m, s)` samples `μ ∈ R` from the discrete
//! Gaussian `D_{[Pack(m)]_R + P·Z^N, s·P}` on the coset of `Pack(m)` modulo `(X^D − b)R`, where
//! `P` is the negacyclic matrix of `X^D − b`. Every output folds and unpacks to `m`, and its
//! coefficients stay below `6(b+1)s` — the plaintexts that the proof of plaintext knowledge
//! ([`crate::popk`]) proves small.
//!
//! # Algorithm (§5.2, DERIVED)
//!
//! 1. `c` = the canonical lift of `Pack(m)`: degree `< D`, coefficients in `[0, p)`
//!    ([`Flag::Diag`]: `c = x`, a constant, since `Pack(x, …, x) = x`).
//! 2. `c' = c/(X^D − b) = −(1/p)·c·Σ_{k<M} b^{M−1−k} X^{kD}` (from `(X^D − b)·Σ_k b^{M−1−k}X^{kD}
//!    = X^N − b^M = −p` in `R`): coefficient `j + kD` of `c'` is `−c_j·b^{M−1−k}/p`, an exact
//!    rational, computed as `n_i + f_i` with `n_i = ⌊·⌋ ∈ Z` (big integers) and `f_i ∈ [0, 1)`.
//! 3. `k_i ← D_{Z, s, −f_i}` ([`sample_z_centered`]); `u_i = f_i + k_i`, so `u ~ D_{c' + Z^N, s}`;
//!    `w_i = k_i − n_i`.
//! 4. `μ = c + (X^D − b)·w = (X^D − b)·u`, computed exactly with big integers in `R` (`X^N = −1`),
//!    so `‖μ‖_∞ ≤ (b+1)·‖u‖_∞ < 6(b+1)s`.
//!
//! Under [`Flag::Diag`] `c'` lives on the multiples of `D`; only those positions are sampled
//! (the others of `u` stay 0), so `μ` is a polynomial in `X^D`: a diagonal plaintext.
//!
//! # The sampler and its tail cut
//!
//! [`sample_z_centered`] is rejection sampling in `f64`: a candidate is uniform on the integers
//! `x` with `|x − center| < 6s`, accepted with probability `exp(−π(x − center)²/s²)`. The cut at
//! `6s` removes a mass below `2^-161` per sample (Lemma 2 with `n = 1`, for `s` above the
//! smoothing parameter of `Z`, about 1), so the output bound `‖μ‖_∞ < 6(b+1)s` holds
//! **always**, not only with overwhelming probability. The acceptance probabilities carry the
//! relative error of `f64`'s `exp` (about `2^-52`): the output is close to the ideal discrete
//! Gaussian in that relative sense, not within `2^-128` statistical distance. That precision
//! matters for the simulation argument of the proof's zero knowledge, not for its correctness or
//! soundness. **It is not constant time**: the number of candidates drawn depends on the centre
//! (which depends on the secret `m`) and on the accepted value. The randomness of an encryption
//! (integer centre) uses coterie-math's constant-time [`coterie_math::sample::DiscreteGaussian`]
//! instead.

use coterie_bfv::Plaintext;
use coterie_math::bigint::{BigInt, wipe};
use rug::Assign;

use zeroize::Zeroize;

use crate::params::{Flag, ProtocolParams};
use crate::{Error, Result};

/// The tail cut of [`sample_z_centered`] and of the output bound, in units of the width `s`.
pub const TAIL: f64 = 6.0;

/// Largest width accepted by [`sample_z_centered`] and [`rand_pack`] (`2^40`).
pub const MAX_WIDTH: f64 = (1u64 << 40) as f64;

/// One sample of the discrete Gaussian `D_{Z, s, center}`, `Pr[x] ∝ exp(−π(x − center)²/s²)`,
/// cut to `|x − center| < 6s` ([`TAIL`]). Rejection sampling in `f64`; **not constant time**
/// (see the [module documentation](self)).
///
/// # Errors
/// [`Error::Invalid`] for a width outside `(0, 2^40]` or a centre that is not finite or has
/// absolute value `2^52` or more.
///
/// ```
/// use coterie_math::prg::Csprng;
/// use coterie_matrigear::randpack::sample_z_centered;
/// let mut rng = Csprng::new();
/// let x = sample_z_centered(&mut rng, 8.0, -0.25).unwrap();
/// assert!(((x as f64) + 0.25).abs() < 6.0 * 8.0);
/// ```
pub fn sample_z_centered<R: rand::CryptoRng + ?Sized>(
    rng: &mut R,
    s: f64,
    center: f64,
) -> Result<i64> {
    check_width(s)?;
    if !center.is_finite() || center.abs() >= (1u64 << 52) as f64 {
        return Err(Error::Invalid(format!(
            "discrete Gaussian centre {center} is not a finite value below 2^52"
        )));
    }
    let tau = TAIL * s;
    // Integers strictly inside (center − τ, center + τ).
    let mut lo = (center - tau).ceil();
    if lo - center <= -tau {
        lo += 1.0;
    }
    let mut hi = (center + tau).floor();
    if hi - center >= tau {
        hi -= 1.0;
    }
    let (lo, hi) = (lo as i64, hi as i64);
    if hi < lo {
        return Err(Error::Invalid(format!(
            "discrete Gaussian of width {s}: no integer within the tail cut"
        )));
    }
    let span = (hi - lo) as u64 + 1;
    let mask = u64::MAX >> span.leading_zeros();
    let scale = -std::f64::consts::PI / (s * s);
    loop {
        let r = rng.next_u64() & mask;
        if r >= span {
            continue;
        }
        let x = lo + r as i64;
        let d = x as f64 - center;
        let accept = (scale * d * d).exp();
        let coin = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        if coin < accept {
            return Ok(x);
        }
    }
}

fn check_width(s: f64) -> Result<()> {
    if !(s.is_finite() && s > 0.0 && s <= MAX_WIDTH) {
        return Err(Error::Invalid(format!(
            "Gaussian width {s} is outside (0, 2^40]"
        )));
    }
    Ok(())
}

/// The canonical lift (degree `< D`, coefficients in `[0, p)`) of `Pack(slots)` for `flag`:
/// `D` values under [`Flag::Any`]; one value, or `D` equal values, under [`Flag::Diag`].
fn canonical_lift(pp: &ProtocolParams, slots: &[BigInt], flag: Flag) -> Result<Vec<BigInt>> {
    let d = pp.slots();
    let p = pp.p();
    match flag {
        Flag::Any => {
            if slots.len() != d {
                return Err(Error::Invalid(format!(
                    "randomized packing needs D = {d} slot values, got {}",
                    slots.len()
                )));
            }
            Ok(Plaintext::encode_slots(pp.context(), slots)?.representative())
        }
        Flag::Diag => {
            let Some(x) = slots.first() else {
                return Err(Error::Invalid(
                    "a diagonal randomized packing needs a slot value".into(),
                ));
            };
            if slots.len() != 1 && slots.len() != d {
                return Err(Error::Invalid(format!(
                    "a diagonal randomized packing takes 1 or D = {d} values, got {}",
                    slots.len()
                )));
            }
            if slots.iter().any(|v| v != x) {
                return Err(Error::Invalid(
                    "a diagonal randomized packing needs all slot values equal".into(),
                ));
            }
            if *x < 0 || *x >= p {
                return Err(Error::Invalid("slot value outside [0, p)".into()));
            }
            let mut c = vec![BigInt::new(); d];
            c[0] = x.clone();
            Ok(c)
        }
    }
}

/// `RandPack(m, s)` (seed 002 §5.2): a lift `μ ∈ R` of `Pack(slots)` (its `N` signed
/// coefficients) sampled from the discrete Gaussian of width `s·P` on the coset
/// `[Pack(m)]_R + (X^D − b)R`, with `‖μ‖_∞ < 6(b+1)s` always. Under [`Flag::Diag`] `slots` is
/// one value or `D` equal values (others are refused), and `μ` is a polynomial in `X^D`.
///
/// The secret intermediate values are wiped; the sampler is not constant time (module
/// documentation).
///
/// # Errors
/// [`Error::Invalid`] for a wrong number of slot values, unequal values under `Diag`, a value
/// outside `[0, p)`, a width outside `(0, 2^40]`, or an output that does not fit the bound in
/// an `i128` (`6(b+1)s ≥ 2^126`).
///
/// ```
/// use coterie_bfv::Plaintext;
/// use coterie_math::bigint::BigInt;
/// use coterie_math::prg::Csprng;
/// use coterie_matrigear::{Flag, ProtocolParams, randpack::rand_pack};
/// let pp = ProtocolParams::insecure_toy_b(2, 4).unwrap();
/// let m: Vec<BigInt> = (1..=8).map(BigInt::from).collect();
/// let mu = rand_pack(&pp, &m, 8.0, Flag::Any, &mut Csprng::new()).unwrap();
/// assert!(mu.iter().all(|c| (c.unsigned_abs() as f64) < 6.0 * 133.0 * 8.0));
/// let lift: Vec<BigInt> = mu.iter().map(|&c| BigInt::from(c)).collect();
/// let pt = Plaintext::from_lift_wide(pp.context(), lift).unwrap();
/// assert_eq!(pt.decode_slots().unwrap(), m);
/// ```
pub fn rand_pack<R: rand::CryptoRng + ?Sized>(
    pp: &ProtocolParams,
    slots: &[BigInt],
    s: f64,
    flag: Flag,
    rng: &mut R,
) -> Result<Vec<i128>> {
    check_width(s)?;
    let d = pp.slots();
    let bound = TAIL * (pp.b() as f64 + 1.0) * s;
    if bound >= 2f64.powi(126) {
        return Err(Error::Invalid(format!(
            "randomized packing bound 6(b+1)s = 2^{:.1} does not fit 126 bits",
            bound.log2()
        )));
    }
    let mut c = canonical_lift(pp, slots, flag)?;
    let cols = match flag {
        Flag::Any => d,
        Flag::Diag => 1,
    };
    let mu = pack_coset(pp, &c, cols, bound, |_, _, f| sample_z_centered(rng, s, -f));
    for x in c.iter_mut() {
        wipe(x);
    }
    mu
}

/// The coset sample `μ = (X^D − b)·u`, `u_{j+kD} = f_{j,k} + k_{j,k}`, for the canonical lift
/// `c` of `Pack(m)` (only columns `j < cols` sampled), with `k_{j,k} = sample(j, k, f_{j,k})`.
fn pack_coset(
    pp: &ProtocolParams,
    c: &[BigInt],
    cols: usize,
    bound: f64,
    mut sample: impl FnMut(usize, usize, f64) -> Result<i64>,
) -> Result<Vec<i128>> {
    let (n, d, m) = (pp.degree(), pp.slots(), pp.m());
    let p = pp.p();
    let b = pp.b();
    // For column j and k = 0..M, f_{j,k} = r_{j,k}/p with r_{j,k} = (−c_j·b^{M−1−k}) mod p:
    // r_{j,M−1} = (−c_j) mod p and r_{j,k−1} = b·r_{j,k} mod p, whose quotient
    // q_{j,k} = ⌊b·r_{j,k}/p⌋ < b is all that μ needs of the big integers:
    //   μ_{j+kD} = k_{j,k−1} − b·k_{j,k} − q_{j,k}                 (1 ≤ k < M)
    //   μ_j      = −k_{j,M−1} − b·k_{j,0} − q_{j,0} − [c_j ≠ 0]    (X^N = −1)
    // (μ = (X^D − b)·u with u_i = f_i + k_i, and (r_{j,k−1} − b·r_{j,k})/p = −q_{j,k};
    // b·r_{j,0} = q_{j,0}·p + c_j because b^M ≡ −1.) Columns j ≥ cols (Diag) stay 0.
    let pbits = p.significant_bits();
    let shift = pbits.saturating_sub(62);
    let p_top = BigInt::from(&p >> shift).to_f64();
    let mut ks = vec![0i64; m];
    let mut qs = vec![0u64; m];
    let mut r = BigInt::new();
    let mut q = BigInt::new();
    let mut t = BigInt::new();
    let mut mu = vec![0i128; n];
    let mut failed = false;
    for (j, cj) in c.iter().enumerate().take(cols) {
        r.assign(&p - cj);
        if r == p {
            r.assign(0);
        }
        for k in (0..m).rev() {
            // f_{j,k} with 53 bits, from the top bits of r and p.
            let f = BigInt::from(&r >> shift).to_f64() / p_top;
            let f = if f >= 1.0 { 1.0 - f64::EPSILON } else { f };
            ks[k] = sample(j, k, f)?;
            r *= b;
            (&mut q, &mut t).assign(r.div_rem_ref(&p));
            std::mem::swap(&mut t, &mut r);
            // now r = b·r_old mod p (= r_{j,k−1}, or c_j for k = 0) and q = the quotient
            qs[k] = q.to_u64().unwrap_or(u64::MAX);
        }
        if r != *cj {
            failed = true;
        }
        let nonzero = i128::from(*cj != 0);
        let (bi, kq) = (i128::from(b), |k: usize| i128::from(ks[k]));
        mu[j] = -kq(m - 1) - bi * kq(0) - i128::from(qs[0]) - nonzero;
        for k in 1..m {
            mu[j + k * d] = kq(k - 1) - bi * kq(k) - i128::from(qs[k]);
        }
    }
    wipe(&mut r);
    wipe(&mut q);
    wipe(&mut t);
    ks.zeroize();
    qs.zeroize();
    if failed || mu.iter().any(|&v| (v.unsigned_abs() as f64) >= bound) {
        mu.zeroize();
        return Err(Error::Invalid(
            "randomized packing: inconsistent quotient chain or a coefficient at 6(b+1)s \
             (internal error)"
                .into(),
        ));
    }
    Ok(mu)
}

#[cfg(test)]
mod tests {
    use super::*;
    use coterie_bfv::params::MatriGearSet;
    use coterie_math::bigint::random_below;
    use coterie_math::prg::Csprng;

    fn unpack_lift(pp: &ProtocolParams, mu: &[i128]) -> Vec<BigInt> {
        let lift = mu.iter().map(|&c| BigInt::from(c)).collect();
        Plaintext::from_lift_wide(pp.context(), lift)
            .unwrap()
            .decode_slots()
            .unwrap()
    }

    fn check_set(pp: &ProtocolParams, s: f64, rng: &mut Csprng) {
        let (n, d) = (pp.degree(), pp.slots());
        let bound = 6.0 * (pp.b() as f64 + 1.0) * s;
        let p = pp.p();
        let m: Vec<BigInt> = (0..d).map(|_| random_below(rng, &p).unwrap()).collect();
        let mu = rand_pack(pp, &m, s, Flag::Any, rng).unwrap();
        assert_eq!(mu.len(), n);
        assert!(mu.iter().all(|c| (c.unsigned_abs() as f64) < bound));
        assert_eq!(unpack_lift(pp, &mu), m);
        // Diag: a polynomial in X^D, all slots equal; one value or D equal values.
        let x = random_below(rng, &p).unwrap();
        for given in [vec![x.clone()], vec![x.clone(); d]] {
            let mu = rand_pack(pp, &given, s, Flag::Diag, rng).unwrap();
            assert!(mu.iter().all(|c| (c.unsigned_abs() as f64) < bound));
            assert!(
                mu.iter().enumerate().all(|(i, &c)| i % d == 0 || c == 0),
                "not a polynomial in X^D"
            );
            assert_eq!(unpack_lift(pp, &mu), vec![x.clone(); d]);
        }
    }

    /// The naive reference of §5.2 with big integers: `c' = c/(X^D − b)` coefficient by
    /// coefficient (`−c_j·b^{M−1−k}/p = n + f`), `w = k − n`, `μ = c + (X^D − b)·w` in `R`.
    fn reference(
        pp: &ProtocolParams,
        c: &[BigInt],
        cols: usize,
        mut sample: impl FnMut(usize, usize, f64) -> i64,
    ) -> Vec<i128> {
        let (n, d, m) = (pp.degree(), pp.slots(), pp.m());
        let (p, b) = (pp.p(), BigInt::from(pp.b()));
        let mut w = vec![BigInt::new(); n];
        for k in 0..m {
            let mut bk = BigInt::from(1u32);
            for _ in 0..m - 1 - k {
                bk *= &b;
            }
            for (j, cj) in c.iter().enumerate().take(cols) {
                let num = -BigInt::from(cj * &bk);
                let (whole, rem) = num.div_rem_floor(p.clone());
                // rem/p with 60 bits of rem's and p's top
                let sh = p.significant_bits().saturating_sub(60);
                let f = BigInt::from(&rem >> sh).to_f64() / BigInt::from(&p >> sh).to_f64();
                w[j + k * d] = BigInt::from(sample(j, k, f)) - whole;
            }
        }
        (0..n)
            .map(|i| {
                let mut acc = -BigInt::from(&w[i] * &b);
                if i >= d {
                    acc += &w[i - d];
                } else {
                    acc -= &w[i + n - d];
                    acc += &c[i];
                }
                acc.to_i128().unwrap()
            })
            .collect()
    }

    /// The quotient-chain sampler equals the big-integer reference for the same samples `k`
    /// (a fixed function of the position) and passes the same `f`, on Toy-B and Params I/II at
    /// 128 and 1024 bits, both flags.
    #[test]
    fn fast_coset_equals_the_reference() {
        let mut rng = Csprng::new();
        let sets = [
            ProtocolParams::insecure_toy_b(2, 4).unwrap(),
            ProtocolParams::matrigear(MatriGearSet::II, 128, 2, 2).unwrap(),
            ProtocolParams::matrigear(MatriGearSet::II, 1024, 2, 2).unwrap(),
            ProtocolParams::matrigear(MatriGearSet::I, 1024, 2, 2).unwrap(),
        ];
        for pp in &sets {
            let p = pp.p();
            for flag in [Flag::Any, Flag::Diag] {
                let slots: Vec<BigInt> = match flag {
                    Flag::Any => (0..pp.slots())
                        .map(|_| random_below(&mut rng, &p).unwrap())
                        .collect(),
                    Flag::Diag => vec![random_below(&mut rng, &p).unwrap()],
                };
                let c = canonical_lift(pp, &slots, flag).unwrap();
                let cols = if flag == Flag::Any { pp.slots() } else { 1 };
                let k_of = |j: usize, k: usize| ((j * 31 + k * 17) % 13) as i64 - 6;
                let mut fs_fast = Vec::new();
                let fast = pack_coset(pp, &c, cols, f64::MAX, |j, k, f| {
                    fs_fast.push(((j, k), f));
                    Ok(k_of(j, k))
                })
                .unwrap();
                let mut fs_ref = std::collections::HashMap::new();
                let slow = reference(pp, &c, cols, |j, k, f| {
                    fs_ref.insert((j, k), f);
                    k_of(j, k)
                });
                assert_eq!(fast, slow, "{} {flag:?}", pp.context().params().name());
                for ((j, k), f) in fs_fast {
                    assert!((f - fs_ref[&(j, k)]).abs() < 1e-12, "f at ({j}, {k})");
                }
            }
        }
    }

    /// Spec §8 case 12 on Toy-B and on Params II / 128.
    #[test]
    fn unpack_of_rand_pack_is_the_message() {
        let mut rng = Csprng::new();
        let toy = ProtocolParams::insecure_toy_b(2, 4).unwrap();
        let w = toy.widths(Flag::Any);
        for s in [w.s1, 2.0 * w.s2, 1.5] {
            for _ in 0..5 {
                check_set(&toy, s, &mut rng);
            }
        }
        let ii = ProtocolParams::matrigear(MatriGearSet::II, 128, 2, 128).unwrap();
        check_set(&ii, ii.widths(Flag::Any).s1, &mut rng);
    }

    #[test]
    fn refusals() {
        let mut rng = Csprng::new();
        let pp = ProtocolParams::insecure_toy_b(2, 4).unwrap();
        let one = BigInt::from(1u32);
        let two = BigInt::from(2u32);
        let mut diag = vec![one.clone(); 8];
        assert!(rand_pack(&pp, &diag, 8.0, Flag::Diag, &mut rng).is_ok());
        diag[3] = two.clone();
        assert!(rand_pack(&pp, &diag, 8.0, Flag::Diag, &mut rng).is_err());
        assert!(rand_pack(&pp, &[one.clone(), two], 8.0, Flag::Diag, &mut rng).is_err());
        assert!(rand_pack(&pp, &[], 8.0, Flag::Diag, &mut rng).is_err());
        assert!(rand_pack(&pp, &vec![one.clone(); 7], 8.0, Flag::Any, &mut rng).is_err());
        assert!(rand_pack(&pp, &[pp.p()], 8.0, Flag::Diag, &mut rng).is_err());
        assert!(rand_pack(&pp, &[BigInt::from(-1)], 8.0, Flag::Diag, &mut rng).is_err());
        for s in [0.0, -1.0, f64::NAN, f64::INFINITY, 2f64.powi(41)] {
            assert!(rand_pack(&pp, std::slice::from_ref(&one), s, Flag::Diag, &mut rng).is_err());
        }
        assert!(sample_z_centered(&mut rng, 1.0, f64::NAN).is_err());
        assert!(sample_z_centered(&mut rng, 1.0, 2f64.powi(53)).is_err());
    }

    /// Moments of the sampler: mean `center`, variance `s²/(2π)` (exact for `s` well above the
    /// smoothing parameter of `Z`), over random centres; and a chi-square test of the histogram
    /// against the exact truncated distribution for one centre.
    #[test]
    fn sampler_moments_and_chi_square() {
        let mut rng = Csprng::new();
        let s = 8.0;
        let count = 100_000;
        let (mut sum, mut sum2) = (0.0f64, 0.0f64);
        for i in 0..count {
            let c = -((i % 97) as f64) / 97.0;
            let x = sample_z_centered(&mut rng, s, c).unwrap();
            let dlt = x as f64 - c;
            assert!(dlt.abs() < 6.0 * s);
            sum += dlt;
            sum2 += dlt * dlt;
        }
        let mean = sum / count as f64;
        let var = sum2 / count as f64 - mean * mean;
        let want = s * s / (2.0 * std::f64::consts::PI);
        // Standard errors: mean 0.01, variance 0.3%.
        assert!(mean.abs() < 0.06, "mean {mean}");
        assert!((var / want - 1.0).abs() < 0.02, "variance {var} vs {want}");

        let (s, c) = (4.0, -0.3);
        let lo = -24i64;
        let probs: Vec<f64> = (lo..=24)
            .map(|x| {
                let d = x as f64 - c;
                if d.abs() < 6.0 * s {
                    (-std::f64::consts::PI * d * d / (s * s)).exp()
                } else {
                    0.0
                }
            })
            .collect();
        let total: f64 = probs.iter().sum();
        let mut hist = vec![0u64; probs.len()];
        for _ in 0..count {
            let x = sample_z_centered(&mut rng, s, c).unwrap();
            hist[(x - lo) as usize] += 1;
        }
        // Bins with expected count ≥ 5; the rest pooled.
        let (mut chi2, mut df, mut pool_e, mut pool_o) = (0.0, 0usize, 0.0, 0.0);
        for (pr, &o) in probs.iter().zip(&hist) {
            let e = pr / total * count as f64;
            if e >= 5.0 {
                chi2 += (o as f64 - e).powi(2) / e;
                df += 1;
            } else {
                pool_e += e;
                pool_o += o as f64;
            }
        }
        if pool_e > 0.0 {
            chi2 += (pool_o - pool_e).powi(2) / pool_e;
            df += 1;
        }
        // df ≈ 16: mean 15, sd ≈ 5.5; 60 is far beyond any honest fluctuation.
        assert!(
            chi2 < 60.0,
            "chi-square {chi2} with {} degrees of freedom",
            df - 1
        );
    }
}
