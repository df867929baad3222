//! Samplers for lattice cryptography: uniform mod q, binary, ternary, centered binomial and
//! discrete Gaussian, as plain functions that fill slices from a cryptographic RNG.
//!
//! Every sampler is generic over `R: rand::CryptoRng + ?Sized`: pass a [`crate::prg::Csprng`] for
//! secrets, or a [`crate::prg::Xof`] for public randomness that must be reproducible. Signed values
//! are written as `i64`; mapping into Z_q or an RNS basis is the caller's job.
//!
//! # Constant time
//!
//! * [`uniform_binary`], [`ternary`], [`ternary_uniform`], [`centered_binomial`] and
//!   [`discrete_gaussian`] / [`DiscreteGaussian`] consume a fixed number of RNG words per output and
//!   have no branch and no memory access that depends on the values drawn: ternary compares one
//!   64-bit word against integer thresholds, the binomial sampler uses popcounts, the Gaussian
//!   sampler scans its *whole* cumulative table for every sample with branch-free 128-bit
//!   comparisons. Only the slice length and the (public) parameters shape the control flow.
//! * [`uniform_mod`] uses rejection sampling: the number of RNG words it consumes varies, but it
//!   depends only on rejected candidates, which are independent of every accepted output. This is
//!   the standard, acceptable leak (the expected number of draws per output is below 2).
//!
//! # The discrete Gaussian sampler
//!
//! `D_{Z,σ}(x) ∝ exp(-x²/(2σ²))` for `σ ∈ [0.5, 2^20]` (σ is the standard deviation parameter, not
//! the `s = σ√(2π)` width).
//!
//! * **Direct (σ ≤ 24): a constant-time cumulative distribution table (CDT).** The table holds
//!   `c_k = round(2^128 · P(|X| ≤ k))` for `k = 0..T`, `T = ⌈13.53 σ⌉`, computed once in exact
//!   fixed-point arithmetic (320 fractional bits, `exp` by Taylor series with argument reduction;
//!   σ is taken as the exact dyadic value of the `f64`). A sample draws a 128-bit `r`, counts
//!   `m = #{k : r ≥ c_k}` over the whole table, and applies a random sign. The cut at `T` keeps
//!   `exp(-T²/(2σ²)) ≤ 2^-132`, so the tail mass is below `2^-129`; rounding moves each
//!   probability by at most `2^-128`. Statistical distance from `D_{Z,σ}`:
//!   `Δ ≤ (T+1)·2^-129 + 2^-129`, i.e. below `2^-120` for every σ ≤ 24.
//! * **Large σ (smudging, up to 2^20): convolution.** `x = x_r + k·y` with `k = 4`,
//!   `y ← D_{Z,σ_y}` (recursively, the same construction) and `x_r ← D_{Z,σ_r}` (a CDT) where
//!   `σ_r² = σ² − k²σ_y²` is computed *exactly* (dyadic rationals), so the ideal result has width
//!   exactly σ. Given x, the conditional law of y is a discrete Gaussian of width
//!   `s = σ_r σ_y / σ` on Z; by Poisson summation the output probabilities are
//!   `ρ_σ(x)·(1 ± δ)` with `δ ≤ 2.0001·exp(−2π²s²)`. The construction keeps `s ≥ 2.2`, so
//!   `δ < 2^-136`. Each level therefore adds at most `2^-120` (its CDT) + `2^-135`; at σ = 2^20
//!   there are 8 levels plus the base table, and the total distance is below `2^-116`
//!   ([`DiscreteGaussian::statistical_distance_log2`] gives the exact bound for a given σ).
//!   Sampling cost is one comparison per table entry, summed over the tables: 1137 at σ = 2^20;
//!   64 samples share each scan of a table, compared in AVX-512F or AVX2 lanes where the CPU has
//!   them (`kernels::cdt_count_below`; 3–4x faster than one sample at a time here).
//! * **Tail:** no sample exceeds [`DiscreteGaussian::max_abs`] in absolute value; that is
//!   `⌈13.53σ⌉` (or less, where the table saturates) for σ ≤ 24, and at most `19σ` for the
//!   convolution (the bound adds the levels' cuts linearly).
//!
//! The tables are computed with `rug` integers (setup only; nothing secret touches them).
//!
//! ```
//! use coterie_math::prg::Csprng;
//! use coterie_math::sample::{centered_binomial, discrete_gaussian, ternary, uniform_mod};
//!
//! let mut rng = Csprng::new();
//! let mut e = vec![0i64; 1024];
//! discrete_gaussian(&mut rng, 3.2, &mut e).unwrap();
//! centered_binomial(&mut rng, 21, &mut e).unwrap();
//! ternary(&mut rng, 0.113546, &mut e).unwrap();
//! let mut a = vec![0u64; 1024];
//! uniform_mod(&mut rng, 65537, &mut a).unwrap();
//! ```

use rand::CryptoRng;
use rug::Integer;
use zeroize::Zeroize;

use crate::kernels::CDT_LANES;
use crate::{Error, Result};

/// `a < b` as 0/1, without branches (Hacker's Delight 2-12).
#[inline(always)]
fn ct_lt_u64(a: u64, b: u64) -> u64 {
    (((!a) & b) | ((!(a ^ b)) & a.wrapping_sub(b))) >> 63
}

/// `a < b` as 0/1 for 128-bit operands, without branches.
#[inline(always)]
fn ct_lt_u128(a: u128, b: u128) -> u128 {
    (((!a) & b) | ((!(a ^ b)) & a.wrapping_sub(b))) >> 127
}

/// Fills `out` with values uniform in `[0, q)` by rejection sampling: a candidate is a 64-bit word
/// masked to the bit length of `q - 1`, accepted if it is below `q` (so at most 2 draws per value on
/// average and no bias at all).
///
/// The loop count depends only on rejected candidates, never on the accepted values. This is also
/// the rule [`crate::prg::expand_uniform_mod`] uses, so it is part of the stable CRS format.
///
/// # Errors
///
/// [`Error::InvalidParameter`] if `q == 0`.
///
/// ```
/// use coterie_math::prg::Csprng;
/// let mut rng = Csprng::new();
/// let mut a = [0u64; 64];
/// coterie_math::sample::uniform_mod(&mut rng, 17, &mut a).unwrap();
/// assert!(a.iter().all(|&x| x < 17));
/// ```
pub fn uniform_mod<R: CryptoRng + ?Sized>(rng: &mut R, q: u64, out: &mut [u64]) -> Result<()> {
    if q == 0 {
        return Err(Error::InvalidParameter(
            "uniform_mod: q must be positive".into(),
        ));
    }
    let mask = u64::MAX.checked_shr((q - 1).leading_zeros()).unwrap_or(0);
    for o in out.iter_mut() {
        loop {
            let x = rng.next_u64() & mask;
            if x < q {
                *o = x;
                break;
            }
        }
    }
    Ok(())
}

/// Fills `out` with independent uniform bits in `{0, 1}` (64 outputs per RNG word).
///
/// ```
/// use coterie_math::prg::Csprng;
/// let mut s = [0i64; 100];
/// coterie_math::sample::uniform_binary(&mut Csprng::new(), &mut s);
/// assert!(s.iter().all(|&x| x == 0 || x == 1));
/// ```
pub fn uniform_binary<R: CryptoRng + ?Sized>(rng: &mut R, out: &mut [i64]) {
    for chunk in out.chunks_mut(64) {
        let mut w = rng.next_u64();
        for (i, o) in chunk.iter_mut().enumerate() {
            *o = ((w >> i) & 1) as i64;
        }
        w.zeroize();
    }
}

/// Writes `+1` if `r < t1`, `-1` if `t1 ≤ r < t2`, else `0`, without branches.
#[inline(always)]
fn ternary_from_word(r: u64, t1: u64, t2: u128) -> i64 {
    let plus = ct_lt_u64(r, t1);
    let below2 = ct_lt_u128(r as u128, t2) as u64;
    let minus = below2 - plus;
    plus as i64 - minus as i64
}

fn ternary_with_threshold<R: CryptoRng + ?Sized>(rng: &mut R, t1: u64, out: &mut [i64]) {
    let t2 = 2 * t1 as u128;
    for o in out.iter_mut() {
        let mut r = rng.next_u64();
        *o = ternary_from_word(r, t1, t2);
        r.zeroize();
    }
}

/// Fills `out` with ternary values: `P(+1) = P(-1) = p`, `P(0) = 1 - 2p`, in constant time.
///
/// Each output compares one uniform 64-bit word `r` against `t = ⌊p·2^64⌋` and `2t` without
/// branches, so the realised probabilities are `t/2^64`, within `2^-64` of `p`.
///
/// # Errors
///
/// [`Error::InvalidParameter`] unless `0 ≤ 2p ≤ 1`.
///
/// ```
/// use coterie_math::prg::Csprng;
/// let mut s = [0i64; 256];
/// // The AKÖ (seed 003) key distribution.
/// coterie_math::sample::ternary(&mut Csprng::new(), 0.113546, &mut s).unwrap();
/// assert!(s.iter().all(|&x| (-1..=1).contains(&x)));
/// ```
pub fn ternary<R: CryptoRng + ?Sized>(rng: &mut R, p: f64, out: &mut [i64]) -> Result<()> {
    if !(p.is_finite() && (0.0..=0.5).contains(&p)) {
        return Err(Error::InvalidParameter(format!(
            "ternary: need 0 <= 2p <= 1, got p = {p}"
        )));
    }
    // p·2^64 is exact in f64 (scaling by a power of two); the cast truncates.
    let t1 = (p * 18_446_744_073_709_551_616.0) as u64;
    ternary_with_threshold(rng, t1, out);
    Ok(())
}

/// Fills `out` with values uniform in `{-1, 0, 1}` (each within `2^-64` of 1/3), in constant time.
///
/// ```
/// use coterie_math::prg::Csprng;
/// let mut s = [0i64; 256];
/// coterie_math::sample::ternary_uniform(&mut Csprng::new(), &mut s);
/// assert!(s.iter().all(|&x| (-1..=1).contains(&x)));
/// ```
pub fn ternary_uniform<R: CryptoRng + ?Sized>(rng: &mut R, out: &mut [i64]) {
    ternary_with_threshold(rng, u64::MAX / 3, out);
}

/// Fills `out` with the centered binomial distribution `Σ_{i<η} (a_i − b_i)` (a_i, b_i uniform
/// bits): values in `[-η, η]`, variance `η/2`, in constant time (popcounts of masked words).
///
/// # Errors
///
/// [`Error::InvalidParameter`] unless `1 ≤ η ≤ 64`.
///
/// ```
/// use coterie_math::prg::Csprng;
/// let mut e = [0i64; 256];
/// coterie_math::sample::centered_binomial(&mut Csprng::new(), 21, &mut e).unwrap();
/// assert!(e.iter().all(|&x| x.abs() <= 21));
/// ```
pub fn centered_binomial<R: CryptoRng + ?Sized>(
    rng: &mut R,
    eta: u32,
    out: &mut [i64],
) -> Result<()> {
    if !(1..=64).contains(&eta) {
        return Err(Error::InvalidParameter(format!(
            "centered_binomial: need 1 <= eta <= 64, got {eta}"
        )));
    }
    let mask = u64::MAX >> (64 - eta);
    if eta <= 32 {
        for o in out.iter_mut() {
            let mut w = rng.next_u64();
            let a = (w & mask).count_ones() as i64;
            let b = ((w >> 32) & mask).count_ones() as i64;
            *o = a - b;
            w.zeroize();
        }
    } else {
        for o in out.iter_mut() {
            let mut w1 = rng.next_u64();
            let mut w2 = rng.next_u64();
            *o = (w1 & mask).count_ones() as i64 - (w2 & mask).count_ones() as i64;
            w1.zeroize();
            w2.zeroize();
        }
    }
    Ok(())
}

/// Fills `out` with samples of the discrete Gaussian `D_{Z,σ}`, `σ ∈ [0.5, 2^20]`, in constant
/// time. Builds the tables on each call (from about 0.1 ms at σ = 3.2 to a few ms at σ = 2^20):
/// keep a [`DiscreteGaussian`] to sample repeatedly with one σ.
///
/// # Errors
///
/// [`Error::InvalidParameter`] if σ is outside `[0.5, 2^20]`.
///
/// ```
/// use coterie_math::prg::Csprng;
/// let mut e = [0i64; 256];
/// coterie_math::sample::discrete_gaussian(&mut Csprng::new(), 3.2, &mut e).unwrap();
/// assert!(e.iter().all(|&x| x.abs() <= 44));
/// ```
pub fn discrete_gaussian<R: CryptoRng + ?Sized>(
    rng: &mut R,
    sigma: f64,
    out: &mut [i64],
) -> Result<()> {
    DiscreteGaussian::new(sigma)?.fill(rng, out);
    Ok(())
}

/// Working precision (fractional bits) of the table computation.
const PREC: u32 = 320;
/// Tail cut in units of σ: `exp(-τ²/2) ≤ 2^-132`.
const TAIL_TAU: f64 = 13.53;
/// Largest σ sampled directly from one table.
const DIRECT_MAX: f64 = 24.0;
/// Multiplier of the inner sample in the convolution `x = x_r + k·y`.
const CONV_K: i64 = 4;
/// Minimal conditional width `s = σ_r σ_y / σ` of a convolution step (smoothing: δ < 2^-136).
const CONV_S_MIN: f64 = 2.2;

/// An exact positive dyadic rational `num · 2^exp` (a variance σ²).
#[derive(Clone, Debug)]
struct Dyadic {
    num: Integer,
    exp: i32,
}

impl Dyadic {
    /// `σ²` for a positive normal `f64` σ, exactly.
    fn square_of(x: f64) -> Self {
        let bits = x.to_bits();
        let m = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
        let e = ((bits >> 52) & 0x7ff) as i32 - 1075;
        Self {
            num: Integer::from(m) * m,
            exp: 2 * e,
        }
    }

    /// `self − k²·other`, exactly.
    fn sub_scaled(&self, k: i64, other: &Dyadic) -> Self {
        let exp = self.exp.min(other.exp);
        let a = Integer::from(&self.num << (self.exp - exp) as u32);
        let b = Integer::from(&other.num << (other.exp - exp) as u32) * (k * k);
        Self { num: a - b, exp }
    }
}

/// `⌊exp(−y)·2^PREC⌉` (up to a few ulps) for `y = y_fix / 2^PREC ≥ 0`.
fn exp_neg_fixed(y_fix: &Integer) -> Integer {
    const RED: u32 = 10; // exp(-y) = exp(-y/2^RED)^(2^RED)
    let z = Integer::from(y_fix >> RED);
    let one = Integer::from(1) << PREC;
    let mut sum = one.clone();
    let mut term = one;
    let mut n: u32 = 1;
    loop {
        term *= &z;
        term >>= PREC;
        term /= n;
        if term == 0 {
            break;
        }
        if n % 2 == 1 {
            sum -= &term;
        } else {
            sum += &term;
        }
        n += 1;
    }
    for _ in 0..RED {
        sum.square_mut();
        sum >>= PREC;
    }
    sum
}

/// A constant-time cumulative distribution table for `D_{Z,σ}` with an exact dyadic σ².
#[derive(Clone, Debug)]
struct Cdt {
    /// `c_k = round(2^128 · P(|X| ≤ k))`, non-decreasing; entries that round to 2^128 are dropped,
    /// so `table.len()` is the largest magnitude the table can produce.
    table: Vec<u128>,
    /// The high and low 64-bit words of the entries, for the vectorized scan.
    hi: Vec<u64>,
    lo: Vec<u64>,
}

impl Cdt {
    fn new(var: &Dyadic, sigma_approx: f64) -> Self {
        let t = (TAIL_TAU * sigma_approx).ceil().max(1.0) as u64;
        // y_j · 2^PREC = j² · 2^PREC / (2σ²) = j² · 2^(PREC − 1 − exp) / num.
        let shift = PREC as i64 - 1 - var.exp as i64;
        let mut cum = Vec::with_capacity(t as usize + 1);
        let mut acc = Integer::new();
        for j in 0..=t {
            let jj = Integer::from(j) * j;
            let y = if shift >= 0 {
                (jj << shift as u32) / &var.num
            } else {
                jj / Integer::from(&var.num << (-shift) as u32)
            };
            let rho = exp_neg_fixed(&y);
            if j == 0 {
                acc += rho;
            } else {
                acc += rho * 2u32;
            }
            cum.push(acc.clone());
        }
        let total = acc;
        let half = Integer::from(&total >> 1);
        let mut table = Vec::with_capacity(t as usize);
        for c in cum.iter().take(t as usize) {
            let v = (Integer::from(c << 128u32) + &half) / &total;
            match v.to_u128() {
                Some(x) => table.push(x),
                None => break, // rounds to 2^128: nothing beyond can be drawn
            }
        }
        let hi = table.iter().map(|&c| (c >> 64) as u64).collect();
        let lo = table.iter().map(|&c| c as u64).collect();
        Self { table, hi, lo }
    }

    /// Largest magnitude this table produces.
    fn max_abs(&self) -> i64 {
        self.table.len() as i64
    }

    /// Upper bound on the statistical distance from the untruncated `D_{Z,σ}`.
    fn distance_bound(&self) -> f64 {
        (self.table.len() as f64 + 2.0) * 2f64.powi(-129)
    }

    /// Constant-time fill: for each output, a 128-bit word is compared with every table entry,
    /// [`CDT_LANES`] outputs per scan of the table ([`crate::kernels::cdt_count_below`]). The RNG
    /// is read as one word of signs per 64 outputs, then each output's high and low words.
    fn fill<R: CryptoRng + ?Sized>(&self, rng: &mut R, out: &mut [i64]) {
        let len = self.table.len() as u64;
        let mut r_hi = [0u64; CDT_LANES];
        let mut r_lo = [0u64; CDT_LANES];
        let mut below = [0u64; CDT_LANES];
        for chunk in out.chunks_mut(CDT_LANES) {
            let mut signs = rng.next_u64();
            for i in 0..chunk.len() {
                r_hi[i] = rng.next_u64();
                r_lo[i] = rng.next_u64();
            }
            below.fill(0);
            crate::kernels::cdt_count_below(&self.hi, &self.lo, &r_hi, &r_lo, &mut below);
            for (i, o) in chunk.iter_mut().enumerate() {
                // m = #{k : r ≥ c_k}
                let m = len - below[i];
                let s = (signs >> i) & 1;
                *o = (m ^ s.wrapping_neg()).wrapping_add(s) as i64;
            }
            signs.zeroize();
        }
        r_hi.zeroize();
        r_lo.zeroize();
        below.zeroize();
    }
}

/// One convolution level: `x = rem + k · (sample of the next level)`.
#[derive(Clone, Debug)]
struct Level {
    k: i64,
    rem: Cdt,
}

/// A discrete Gaussian sampler `D_{Z,σ}` for one σ ∈ [0.5, 2^20], with its tables precomputed;
/// constant time. See the [module documentation](self) for the construction and its statistical
/// distance.
///
/// ```
/// use coterie_math::prg::Csprng;
/// use coterie_math::sample::DiscreteGaussian;
///
/// let smudge = DiscreteGaussian::new(f64::from(1u32 << 20)).unwrap();
/// assert!(smudge.statistical_distance_log2() < -116.0);
/// let mut e = vec![0i64; 4096];
/// smudge.fill(&mut Csprng::new(), &mut e);
/// assert!(e.iter().all(|&x| x.abs() <= smudge.max_abs()));
/// ```
#[derive(Clone, Debug)]
pub struct DiscreteGaussian {
    sigma: f64,
    /// Outermost level first.
    levels: Vec<Level>,
    base: Cdt,
    max_abs: i64,
}

impl DiscreteGaussian {
    /// Smallest supported σ.
    pub const MIN_SIGMA: f64 = 0.5;
    /// Largest supported σ (smudging noise).
    pub const MAX_SIGMA: f64 = 1_048_576.0;

    /// Precomputes the tables for `D_{Z,σ}`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] if σ is not in `[0.5, 2^20]`.
    pub fn new(sigma: f64) -> Result<Self> {
        if !(sigma.is_finite() && (Self::MIN_SIGMA..=Self::MAX_SIGMA).contains(&sigma)) {
            return Err(Error::InvalidParameter(format!(
                "discrete Gaussian: sigma must be in [0.5, 2^20], got {sigma}"
            )));
        }
        let mut levels = Vec::new();
        let mut s = sigma;
        let mut var = Dyadic::square_of(s);
        while s > DIRECT_MAX {
            let k = CONV_K as f64;
            // Smallest σ_r with σ_r·σ_y/σ ≥ S_MIN, where σ_y = sqrt(σ² − σ_r²)/k (fixed point).
            let mut r = CONV_S_MIN * k;
            for _ in 0..16 {
                r = CONV_S_MIN * k * s / (s * s - r * r).sqrt();
            }
            r *= 1.0 + 1e-6;
            let sy = (s * s - r * r).sqrt() / k;
            let var_y = Dyadic::square_of(sy);
            let var_r = var.sub_scaled(CONV_K, &var_y);
            let r_exact = var_r.num.to_f64() * 2f64.powi(var_r.exp);
            let r_exact = r_exact.sqrt();
            // (Written so that a NaN also fails.)
            let smooth_enough = r_exact * sy / s >= CONV_S_MIN;
            if !smooth_enough {
                return Err(Error::InvalidParameter(format!(
                    "discrete Gaussian: no valid decomposition for sigma = {sigma}"
                )));
            }
            levels.push(Level {
                k: CONV_K,
                rem: Cdt::new(&var_r, r_exact),
            });
            s = sy;
            var = var_y;
        }
        let base = Cdt::new(&var, s);
        let mut max_abs = base.max_abs();
        for level in levels.iter().rev() {
            max_abs = level.rem.max_abs() + level.k * max_abs;
        }
        Ok(Self {
            sigma,
            levels,
            base,
            max_abs,
        })
    }

    /// The σ this sampler was built for.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// No sample is larger than this in absolute value (the tail cut).
    pub fn max_abs(&self) -> i64 {
        self.max_abs
    }

    /// Number of table comparisons per sample (a measure of cost).
    pub fn table_entries(&self) -> usize {
        self.base.table.len() + self.levels.iter().map(|l| l.rem.table.len()).sum::<usize>()
    }

    /// `log2` of a proven upper bound on the statistical distance between this sampler's output
    /// and the ideal `D_{Z,σ}` (table rounding + tail cuts + convolution smoothing error).
    pub fn statistical_distance_log2(&self) -> f64 {
        let conv = 2.0001 * (-2.0 * core::f64::consts::PI.powi(2) * CONV_S_MIN.powi(2)).exp();
        let total = self.base.distance_bound()
            + self
                .levels
                .iter()
                .map(|l| l.rem.distance_bound() + 2.0 * conv)
                .sum::<f64>();
        total.log2()
    }

    /// Fills `out` with independent samples, in constant time (a fixed number of RNG words and table
    /// comparisons per output).
    pub fn fill<R: CryptoRng + ?Sized>(&self, rng: &mut R, out: &mut [i64]) {
        self.base.fill(rng, out);
        let mut tmp = [0i64; 64];
        for level in self.levels.iter().rev() {
            for chunk in out.chunks_mut(64) {
                let t = &mut tmp[..chunk.len()];
                level.rem.fill(rng, t);
                for (o, &r) in chunk.iter_mut().zip(t.iter()) {
                    *o = r + level.k * *o;
                }
            }
        }
        tmp.zeroize();
    }

    /// One sample.
    pub fn sample<R: CryptoRng + ?Sized>(&self, rng: &mut R) -> i64 {
        let mut x = [0i64; 1];
        self.fill(rng, &mut x);
        x[0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prg::Csprng;

    /// The lane-batched fill returns exactly what the per-sample scan of the table returns from
    /// the same random words (the reference: one 128-bit comparison per entry and sample), for a
    /// direct table and a convolution level's, including a partial last chunk.
    #[test]
    fn batched_fill_matches_the_per_sample_scan() {
        for sigma in [3.2f64, 19.2, 9.7] {
            let cdt = Cdt::new(&Dyadic::square_of(sigma), sigma);
            for n in [1usize, 63, 64, 65, 200] {
                let mut a = Csprng::insecure_from_seed_for_tests([n as u8; 32]);
                let mut b = Csprng::insecure_from_seed_for_tests([n as u8; 32]);
                let mut got = vec![0i64; n];
                cdt.fill(&mut a, &mut got);
                let len = cdt.table.len() as u64;
                let mut want = vec![0i64; n];
                for chunk in want.chunks_mut(64) {
                    let signs = rand::Rng::next_u64(&mut b);
                    for (i, o) in chunk.iter_mut().enumerate() {
                        let hi = rand::Rng::next_u64(&mut b) as u128;
                        let r = (hi << 64) | rand::Rng::next_u64(&mut b) as u128;
                        let below: u64 = cdt.table.iter().map(|&c| ct_lt_u128(r, c) as u64).sum();
                        let m = len - below;
                        let s = (signs >> i) & 1;
                        *o = (m ^ s.wrapping_neg()).wrapping_add(s) as i64;
                    }
                }
                assert_eq!(got, want, "σ = {sigma}, n = {n}");
                assert_eq!(
                    rand::Rng::next_u64(&mut a),
                    rand::Rng::next_u64(&mut b),
                    "same RNG consumption"
                );
            }
        }
    }

    #[test]
    fn ct_lt_matches_lt() {
        let vals = [
            0u64,
            1,
            2,
            17,
            u64::MAX / 3,
            1 << 63,
            (1 << 63) + 1,
            u64::MAX - 1,
            u64::MAX,
        ];
        for &a in &vals {
            for &b in &vals {
                assert_eq!(ct_lt_u64(a, b), (a < b) as u64);
                let (a2, b2) = ((a as u128) << 64 | b as u128, (b as u128) << 64 | a as u128);
                assert_eq!(ct_lt_u128(a2, b2), (a2 < b2) as u128);
                assert_eq!(ct_lt_u128(a as u128, b2), ((a as u128) < b2) as u128);
            }
        }
    }

    #[test]
    fn ternary_word_mapping_is_exact() {
        let t1 = 1000u64;
        let t2 = 2000u128;
        assert_eq!(ternary_from_word(0, t1, t2), 1);
        assert_eq!(ternary_from_word(999, t1, t2), 1);
        assert_eq!(ternary_from_word(1000, t1, t2), -1);
        assert_eq!(ternary_from_word(1999, t1, t2), -1);
        assert_eq!(ternary_from_word(2000, t1, t2), 0);
        assert_eq!(ternary_from_word(u64::MAX, t1, t2), 0);
        // p = 1/2: never 0, t2 = 2^64.
        let h = 1u64 << 63;
        assert_eq!(ternary_from_word(u64::MAX, h, 2 * h as u128), -1);
        assert_eq!(ternary_from_word(h - 1, h, 2 * h as u128), 1);
        // p = 0: always 0.
        assert_eq!(ternary_from_word(0, 0, 0), 0);
    }

    #[test]
    fn parameter_validation() {
        let mut rng = Csprng::insecure_from_seed_for_tests([0; 32]);
        let mut o = [0i64; 4];
        let mut u = [0u64; 4];
        assert!(uniform_mod(&mut rng, 0, &mut u).is_err());
        assert!(uniform_mod(&mut rng, 1, &mut u).is_ok() && u == [0; 4]);
        assert!(uniform_mod(&mut rng, u64::MAX, &mut u).is_ok());
        assert!(ternary(&mut rng, -0.1, &mut o).is_err());
        assert!(ternary(&mut rng, 0.51, &mut o).is_err());
        assert!(ternary(&mut rng, f64::NAN, &mut o).is_err());
        assert!(ternary(&mut rng, 0.5, &mut o).is_ok() && o.iter().all(|&x| x != 0));
        assert!(ternary(&mut rng, 0.0, &mut o).is_ok() && o == [0; 4]);
        assert!(centered_binomial(&mut rng, 0, &mut o).is_err());
        assert!(centered_binomial(&mut rng, 65, &mut o).is_err());
        assert!(centered_binomial(&mut rng, 64, &mut o).is_ok());
        assert!(DiscreteGaussian::new(0.49).is_err());
        assert!(DiscreteGaussian::new(1_048_577.0).is_err());
        assert!(DiscreteGaussian::new(f64::INFINITY).is_err());
        assert!(DiscreteGaussian::new(0.5).is_ok());
    }

    #[test]
    fn cdt_matches_f64_reference() {
        // The exact table against an f64 computation of the same CDF (agreement to ~2^-50).
        let sigma = 3.2f64;
        let cdt = Cdt::new(&Dyadic::square_of(sigma), sigma);
        let rho = |x: f64| (-x * x / (2.0 * sigma * sigma)).exp();
        let total: f64 = (-60..=60).map(|x| rho(x as f64)).sum();
        let mut acc = rho(0.0) / total;
        for (k, &c) in cdt.table.iter().enumerate() {
            if k > 0 {
                acc += 2.0 * rho(k as f64) / total;
            }
            let got = c as f64 / 2f64.powi(128);
            assert!((got - acc).abs() < 1e-14, "k = {k}: {got} vs {acc}");
        }
        // Cut at ⌈13.53σ⌉ = 44, but entries whose CDF rounds to 2^128 (P(|X| > k) < 2^-129) are
        // dropped: the table saturates at 42.
        assert_eq!(cdt.max_abs(), 42);
    }

    #[test]
    fn decomposition_bounds() {
        for sigma in [0.5, 3.2, 19.2, 24.0, 24.5, 100.0, 1024.0, 1_048_576.0] {
            let g = DiscreteGaussian::new(sigma).unwrap();
            assert!(g.statistical_distance_log2() < -116.0, "σ = {sigma}");
            assert!(
                g.max_abs() as f64 <= 19.0 * sigma + 1.0,
                "σ = {sigma}: {}",
                g.max_abs()
            );
            assert!(
                g.max_abs() as f64 >= 12.0 * sigma - 1.0,
                "σ = {sigma}: {}",
                g.max_abs()
            );
        }
    }
}
