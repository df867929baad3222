//! Negacyclic floating-point FFT over the discretized torus, on `tfhe-fft`.
//!
//! This is the product used by TFHE *evaluation* (external products, blind rotation): a torus
//! polynomial `a` in `T_q[X]/(X^N+1)`, `q = 2^32` or `2^64`, is multiplied by a polynomial `d`
//! with small signed integer coefficients (gadget digits). The torus coefficients are read as
//! centered signed integers, the integer product is computed in floating point and rounded back to
//! the nearest integer modulo `q`.
//!
//! **Not for key generation.** Seed 003 (AKÖ multi-key TFHE, §5.2 and test T10) requires exact
//! products when building blind-rotate keys; use [`crate::intpoly`] there.
//!
//! # How the negacyclic transform works
//!
//! `X^N + 1` splits over `C` at the odd powers of `ψ = e^{iπ/N}`. A real polynomial is determined
//! by its values at half of them (the others are the complex conjugates). With `h = N/2`, the
//! residue of `a` modulo `X^h - i` is `z(X) = Σ_{j<h} (a_j + i·a_{j+h}) X^j`; substituting
//! `X = ψ·W` turns `X^h - i` into `i·(W^h - 1)`, so multiplication modulo `X^h - i` becomes a
//! *cyclic* convolution of the twisted vectors `z_j·ψ^j`, which an FFT of size `h` diagonalises.
//! The inverse untwists by `ψ^{-j}/h`, and the real and imaginary parts of coefficient `j` are
//! the result coefficients `j` and `j+h`. We use `tfhe_fft::ordered::Plan` (standard order in the
//! Fourier domain) up to `N = 2048` (its largest size is 1024) and `tfhe_fft::unordered::Plan`
//! with a fixed base size of 1024 above, so the Fourier-domain order of a [`FourierPoly`]
//! depends only on `N`, never on the measured algorithm, and it can be serialized.
//!
//! # Error analysis
//!
//! Write `ε = 2^-53`. The FFT convolution of integer vectors `a`, `d` returns each coefficient
//! with an absolute error of about `c·ε·log2(N)·‖a‖₂·‖d‖₂` (a small constant `c`), rounded to
//! the nearest integer afterwards.
//!
//! * **u32 torus** ([`FftPlan::forward_torus_u32`]): the input is exact in `f64`. For a uniform
//!   `a` (`|a_j| ≤ 2^31`) and digits `|d_j| ≤ 2^9`, `‖a‖₂·‖d‖₂ ≈ N·2^40/3`, i.e. `2^49.4` at
//!   `N = 2048`, so the error before rounding is about `2^-3.6·c·log2(N)`, under one half: the
//!   rounded product is exact in practice. **Measured: error 0** at `N = 1024` and `2048`, for
//!   one product and for 8 accumulated products (tests `product_error_n1024`,
//!   `product_error_n2048`, `accumulated_products_n2048`); asserted bound
//!   [`U32_MAX_ERROR_BOUND`] = 16.
//! * **u64 torus, direct** ([`FftPlan::forward_torus_u64`]): the conversion of a 64-bit signed
//!   coefficient to `f64` already rounds it to 53 bits (error up to `2^10` per coefficient), and
//!   the product has magnitude up to `N·2^63·2^9`; both the input rounding (`≈ √N·2^10·2^9`
//!   standard deviation) and the FFT arithmetic (`≈ 2^-53·N·2^72/3`) give errors around
//!   `2^25 … 2^29` out of `2^64`. **Measured maxima: `2^26.1` (N = 1024), `2^27.3` (N = 2048),
//!   `2^27.1` (N = 4096), `2^28.3` (8 accumulated products, N = 2048)**, i.e. a relative
//!   error near `2^-36`; asserted bound [`U64_DIRECT_MAX_ERROR_BOUND`] = `2^32`. This is the usual
//!   TFHE trade-off and is fine for bootstrapping, but with `β = 2^-62` it is far above the key
//!   noise, which is why seed 003 forbids it in key generation.
//! * **u64 torus, split** ([`FftPlan::forward_torus_u64_split`]): the torus polynomial is split
//!   into three signed limbs of [`SPLIT_LIMB_BITS`] = 22 bits (`a = l0 + l1·2^22 + l2·2^44 mod
//!   2^64`, `|l_k| ≤ 2^21`); each limb is transformed and multiplied separately. The limb products
//!   are bounded by `N·2^21·2^9 ≤ 2^42` (`N ≤ 4096`), far below `2^53`, so each one rounds to the
//!   exact integer and the recombined product is exact modulo `2^64` in practice (**measured
//!   error 0** at `N = 1024, 2048, 4096` and for 8 accumulated products at 2048). It costs three forward and three backward transforms
//!   instead of one of each. A two-limb 32-bit split does *not* help: its high-limb product
//!   reaches `2^51` and its rounding error (a few units) is then multiplied by `2^32`.
use core::time::Duration;

use dyn_stack::{PodBuffer, PodStack};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use tfhe_fft::c64;
use tfhe_fft::ordered::{FftAlgo, Method};
use tfhe_fft::{ordered, unordered};

use crate::{Error, Result};

/// Smallest supported ring degree (`2^4`).
pub const MIN_RING_DEGREE: usize = 1 << 4;
/// Largest supported ring degree (`2^16`).
pub const MAX_RING_DEGREE: usize = 1 << 16;

/// Bits per limb of the three-limb split of a 64-bit torus polynomial
/// ([`FftPlan::forward_torus_u64_split`]).
pub const SPLIT_LIMB_BITS: u32 = 22;

/// Asserted bound on the maximal absolute error (in units of `2^-32`) of a u32-torus product by
/// a digit polynomial with `|d_j| ≤ 2^9` at `N ≤ 2048`, also for 8 accumulated products.
/// Measured maximum in the tests: 0.
pub const U32_MAX_ERROR_BOUND: u64 = 1 << 4;

/// Asserted bound on the maximal absolute error (in units of `2^-64`) of a *direct* u64-torus
/// product by a digit polynomial with `|d_j| ≤ 2^9` at `N ≤ 4096`, also for 8 accumulated
/// products at `N = 2048`. Measured maxima in the tests: `2^26.1 … 2^28.3`.
pub const U64_DIRECT_MAX_ERROR_BOUND: u64 = 1 << 32;

/// Forward FFT plan for the negacyclic ring `R[X]/(X^N+1)`, `N` a power of two in
/// [`MIN_RING_DEGREE`]`..=`[`MAX_RING_DEGREE`].
///
/// The plan is immutable and can be shared between threads; each thread brings its own
/// [`FftScratch`].
///
/// ```
/// use coterie_math::fft::FftPlan;
/// let plan = FftPlan::new(16).unwrap();
/// let mut scratch = plan.new_scratch();
/// let a: Vec<u32> = (0..16u32).map(|i| i << 20).collect();
/// let mut d = vec![0i64; 16];
/// d[1] = 1; // multiply by X
/// let (mut fa, mut fd, mut acc) = (plan.zero_fourier(), plan.zero_fourier(), plan.zero_fourier());
/// plan.forward_torus_u32(&a, &mut fa, &mut scratch);
/// plan.forward_i64(&d, &mut fd, &mut scratch);
/// acc.mul_acc(&fa, &fd);
/// let mut out = vec![0u32; 16];
/// plan.backward_add_torus_u32(&acc, &mut out, &mut scratch);
/// assert_eq!(out[0], a[15].wrapping_neg()); // X · X^15 = -1
/// assert_eq!(out[1..], a[..15]);
/// ```
#[derive(Clone)]
pub struct FftPlan {
    n: usize,
    plan: Inner,
    /// `ψ^j`, `j < N/2`.
    twist: Vec<c64>,
    /// `ψ^{-j} · 2/N`, `j < N/2` (the inverse twist with the FFT normalisation folded in).
    untwist: Vec<c64>,
}

impl core::fmt::Debug for FftPlan {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FftPlan").field("n", &self.n).finish()
    }
}

/// `tfhe-fft`'s ordered plans stop at size 1024 (`N = 2048`); above that we use an unordered
/// plan with a fixed base size of 1024, so the permuted order is a function of `N` alone.
#[derive(Clone)]
enum Inner {
    Ordered(ordered::Plan),
    Unordered(unordered::Plan),
}

/// Largest FFT size (`N/2`) of `tfhe-fft`'s ordered plans.
const MAX_ORDERED: usize = 1 << 10;

impl Inner {
    fn fft_scratch(&self) -> dyn_stack::StackReq {
        match self {
            Inner::Ordered(p) => p.fft_scratch(),
            Inner::Unordered(p) => p.fft_scratch(),
        }
    }
    #[inline]
    fn fwd(&self, buf: &mut [c64], stack: &mut PodStack) {
        match self {
            Inner::Ordered(p) => p.fwd(buf, stack),
            Inner::Unordered(p) => p.fwd(buf, stack),
        }
    }
    #[inline]
    fn inv(&self, buf: &mut [c64], stack: &mut PodStack) {
        match self {
            Inner::Ordered(p) => p.inv(buf, stack),
            Inner::Unordered(p) => p.inv(buf, stack),
        }
    }
}

/// Scratch memory for one thread using an [`FftPlan`]: allocated once, reused by every call.
pub struct FftScratch {
    mem: PodBuffer,
    tmp: Vec<c64>,
}

impl core::fmt::Debug for FftScratch {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FftScratch")
            .field("len", &self.tmp.len())
            .finish()
    }
}

/// A real polynomial of `R[X]/(X^N+1)` in the Fourier domain: `N/2` complex values (twisted;
/// standard order for `N ≤ 2048`, `tfhe-fft`'s unordered order with base size 1024 above, which
/// depends on `N` alone). Serializable; the decoder checks the degree and the length.
#[derive(Clone, Debug, PartialEq)]
pub struct FourierPoly {
    n: usize,
    data: Vec<c64>,
}

/// A 64-bit torus polynomial split into three 22-bit signed limbs, each in the Fourier domain
/// (see [`FftPlan::forward_torus_u64_split`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SplitFourierPoly {
    /// The limbs, least significant first.
    pub limbs: [FourierPoly; 3],
}

impl FourierPoly {
    /// The largest modulus among its values. The values of [`FftPlan::forward_i64`] are the
    /// polynomial's evaluations at `N/2` primitive `2N`-th roots of unity (the others are their
    /// conjugates), so for a real polynomial this is its canonical-embedding norm `‖a‖_can`.
    pub fn max_abs(&self) -> f64 {
        self.data.iter().map(|z| z.norm()).fold(0.0, f64::max)
    }
}

fn check_degree(n: usize) -> Result<()> {
    if !n.is_power_of_two() || !(MIN_RING_DEGREE..=MAX_RING_DEGREE).contains(&n) {
        return Err(Error::InvalidParameter(format!(
            "FFT ring degree {n} is not a power of two in [{MIN_RING_DEGREE}, {MAX_RING_DEGREE}]"
        )));
    }
    Ok(())
}

/// Rounds `x` to the nearest integer and reduces it modulo `2^64` (two's complement). Values whose
/// magnitude is at least `2^63` are reduced exactly from their binary representation; NaN and
/// infinities give 0.
#[inline]
pub fn f64_to_wrapping_u64(x: f64) -> u64 {
    const TWO_51: f64 = (1u64 << 51) as f64;
    const TWO_63: f64 = (1u64 << 63) as f64;
    // 1.5·2^52: adding and subtracting it rounds |x| < 2^51 to the nearest integer (ties to even)
    // without a call to `round` (no SSE4.1 on the baseline x86-64 target).
    const MAGIC: f64 = (3u64 << 51) as f64;
    if x.abs() < TWO_51 {
        return (((x + MAGIC) - MAGIC) as i64) as u64;
    }
    let r = x.round();
    if r.abs() < TWO_63 {
        return (r as i64) as u64;
    }
    let bits = r.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    if exp == 0x7ff {
        return 0;
    }
    let mant = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    // value = mant · 2^shift with shift ≥ 11 here (|r| ≥ 2^63).
    let shift = exp - 1075;
    let mag = if shift >= 64 { 0 } else { mant << shift };
    if bits >> 63 == 1 {
        mag.wrapping_neg()
    } else {
        mag
    }
}

/// The three signed 22-bit limbs of `x`: `x ≡ l0 + l1·2^22 + l2·2^44 (mod 2^64)`,
/// `l0, l1 ∈ [-2^21, 2^21)`, `l2 ∈ [-2^19, 2^19)`.
#[inline]
fn split3(x: u64) -> [i64; 3] {
    const B: u32 = SPLIT_LIMB_BITS;
    let l0 = ((x << (64 - B)) as i64) >> (64 - B);
    let x1 = x.wrapping_sub(l0 as u64) >> B;
    let l1 = ((x1 << (64 - B)) as i64) >> (64 - B);
    let x2 = x1.wrapping_sub(l1 as u64) >> B;
    // 64 - 2·22 = 20 bits remain.
    let l2 = ((x2 << 44) as i64) >> 44;
    [l0, l1, l2]
}

impl FftPlan {
    /// A plan for ring degree `n` (a power of two, `2^4 ..= 2^16`). Picks the fastest
    /// `tfhe-fft` algorithm by a short measurement (about 10 ms).
    pub fn new(n: usize) -> Result<Self> {
        Self::with_method(n, Method::Measure(Duration::from_millis(1)))
    }

    /// A plan for ring degree `n` with an explicit `tfhe-fft` method for the (base) FFT of size
    /// `min(N/2, 1024)` (e.g. a fixed algorithm, for reproducible timings).
    pub fn with_method(n: usize, method: Method) -> Result<Self> {
        check_degree(n)?;
        let h = n / 2;
        let plan = if h <= MAX_ORDERED {
            Inner::Ordered(ordered::Plan::new(h, method))
        } else {
            let base_algo: FftAlgo = ordered::Plan::new(MAX_ORDERED, method).algo();
            Inner::Unordered(unordered::Plan::new(
                h,
                unordered::Method::UserProvided {
                    base_algo,
                    base_n: MAX_ORDERED,
                },
            ))
        };
        let scale = 1.0 / h as f64;
        let mut twist = Vec::with_capacity(h);
        let mut untwist = Vec::with_capacity(h);
        for j in 0..h {
            let (s, c) = (core::f64::consts::PI * j as f64 / n as f64).sin_cos();
            twist.push(c64::new(c, s));
            untwist.push(c64::new(c * scale, -s * scale));
        }
        Ok(Self {
            n,
            plan,
            twist,
            untwist,
        })
    }

    /// The ring degree `N`.
    pub fn ring_degree(&self) -> usize {
        self.n
    }

    /// Fresh scratch memory for this plan (allocate once per thread, reuse).
    pub fn new_scratch(&self) -> FftScratch {
        FftScratch {
            mem: PodBuffer::new(self.plan.fft_scratch()),
            tmp: vec![c64::new(0.0, 0.0); self.n / 2],
        }
    }

    /// The zero polynomial in the Fourier domain (also an output buffer for the forward
    /// transforms).
    pub fn zero_fourier(&self) -> FourierPoly {
        FourierPoly {
            n: self.n,
            data: vec![c64::new(0.0, 0.0); self.n / 2],
        }
    }

    /// A zero [`SplitFourierPoly`] for this degree.
    pub fn zero_split(&self) -> SplitFourierPoly {
        SplitFourierPoly {
            limbs: [
                self.zero_fourier(),
                self.zero_fourier(),
                self.zero_fourier(),
            ],
        }
    }

    #[inline]
    fn forward_with(
        &self,
        out: &mut FourierPoly,
        scratch: &mut FftScratch,
        coeff: impl Fn(usize) -> f64,
    ) {
        assert_eq!(out.n, self.n, "FourierPoly degree does not match the plan");
        let h = self.n / 2;
        for (j, (z, w)) in out.data.iter_mut().zip(&self.twist).enumerate() {
            *z = c64::new(coeff(j), coeff(j + h)) * *w;
        }
        self.plan
            .fwd(&mut out.data, PodStack::new(&mut scratch.mem));
    }

    /// Forward transform of a 32-bit torus polynomial (coefficients read as centered `i32`,
    /// exact in `f64`).
    ///
    /// # Panics
    /// If `a.len() != N` or `out` has another degree.
    pub fn forward_torus_u32(&self, a: &[u32], out: &mut FourierPoly, scratch: &mut FftScratch) {
        assert_eq!(a.len(), self.n, "input length is not N");
        self.forward_with(out, scratch, |j| a[j] as i32 as f64);
    }

    /// Forward transform of a 64-bit torus polynomial (coefficients read as centered `i64` and
    /// rounded to 53 significant bits; see the module's error analysis).
    ///
    /// # Panics
    /// If `a.len() != N` or `out` has another degree.
    pub fn forward_torus_u64(&self, a: &[u64], out: &mut FourierPoly, scratch: &mut FftScratch) {
        assert_eq!(a.len(), self.n, "input length is not N");
        self.forward_with(out, scratch, |j| a[j] as i64 as f64);
    }

    /// Forward transform of a signed integer polynomial (gadget digits, small keys). Exact for
    /// `|a_j| ≤ 2^53`.
    ///
    /// # Panics
    /// If `a.len() != N` or `out` has another degree.
    pub fn forward_i64(&self, a: &[i64], out: &mut FourierPoly, scratch: &mut FftScratch) {
        assert_eq!(a.len(), self.n, "input length is not N");
        self.forward_with(out, scratch, |j| a[j] as f64);
    }

    /// Forward transform of a 64-bit torus polynomial split into three 22-bit signed limbs, so
    /// that products by small polynomials stay exact (see the module's error analysis).
    ///
    /// # Panics
    /// If `a.len() != N` or `out` has another degree.
    pub fn forward_torus_u64_split(
        &self,
        a: &[u64],
        out: &mut SplitFourierPoly,
        scratch: &mut FftScratch,
    ) {
        assert_eq!(a.len(), self.n, "input length is not N");
        for (k, limb) in out.limbs.iter_mut().enumerate() {
            self.forward_with(limb, scratch, |j| split3(a[j])[k] as f64);
        }
    }

    /// Inverse transform into `scratch.tmp`, untwisted and normalised: coefficient `j` is
    /// `tmp[j].re`, coefficient `j + N/2` is `tmp[j].im`.
    #[inline]
    fn backward_into_tmp(&self, acc: &FourierPoly, scratch: &mut FftScratch) {
        assert_eq!(acc.n, self.n, "FourierPoly degree does not match the plan");
        scratch.tmp.copy_from_slice(&acc.data);
        self.plan
            .inv(&mut scratch.tmp, PodStack::new(&mut scratch.mem));
        for (z, w) in scratch.tmp.iter_mut().zip(&self.untwist) {
            *z *= *w;
        }
    }

    /// Inverse transform of `acc`, each coefficient rounded to the nearest integer and **added**
    /// to the 32-bit torus polynomial `out` (modulo `2^32`). `acc` is left unchanged.
    ///
    /// # Panics
    /// If `out.len() != N` or `acc` has another degree.
    pub fn backward_add_torus_u32(
        &self,
        acc: &FourierPoly,
        out: &mut [u32],
        scratch: &mut FftScratch,
    ) {
        assert_eq!(out.len(), self.n, "output length is not N");
        self.backward_into_tmp(acc, scratch);
        let (lo, hi) = out.split_at_mut(self.n / 2);
        for ((z, o0), o1) in scratch.tmp.iter().zip(lo).zip(hi) {
            *o0 = o0.wrapping_add(f64_to_wrapping_u64(z.re) as u32);
            *o1 = o1.wrapping_add(f64_to_wrapping_u64(z.im) as u32);
        }
    }

    /// Inverse transform of `acc`, each coefficient rounded to the nearest integer and **added**
    /// to the 64-bit torus polynomial `out` (modulo `2^64`). `acc` is left unchanged.
    ///
    /// # Panics
    /// If `out.len() != N` or `acc` has another degree.
    pub fn backward_add_torus_u64(
        &self,
        acc: &FourierPoly,
        out: &mut [u64],
        scratch: &mut FftScratch,
    ) {
        assert_eq!(out.len(), self.n, "output length is not N");
        self.backward_into_tmp(acc, scratch);
        let (lo, hi) = out.split_at_mut(self.n / 2);
        for ((z, o0), o1) in scratch.tmp.iter().zip(lo).zip(hi) {
            *o0 = o0.wrapping_add(f64_to_wrapping_u64(z.re));
            *o1 = o1.wrapping_add(f64_to_wrapping_u64(z.im));
        }
    }

    /// Inverse transform of a split accumulator: each limb product is rounded to the nearest
    /// integer, the limbs are recombined (`c0 + c1·2^22 + c2·2^44`) and **added** to `out`
    /// modulo `2^64`. `acc` is left unchanged.
    ///
    /// # Panics
    /// If `out.len() != N` or `acc` has another degree.
    pub fn backward_add_torus_u64_split(
        &self,
        acc: &SplitFourierPoly,
        out: &mut [u64],
        scratch: &mut FftScratch,
    ) {
        assert_eq!(out.len(), self.n, "output length is not N");
        let h = self.n / 2;
        for (k, limb) in acc.limbs.iter().enumerate() {
            let shift = SPLIT_LIMB_BITS * k as u32;
            self.backward_into_tmp(limb, scratch);
            let (lo, hi) = out.split_at_mut(h);
            for ((z, o0), o1) in scratch.tmp.iter().zip(lo).zip(hi) {
                *o0 = o0.wrapping_add(f64_to_wrapping_u64(z.re) << shift);
                *o1 = o1.wrapping_add(f64_to_wrapping_u64(z.im) << shift);
            }
        }
    }

    /// Inverse transform of `acc`, each coefficient rounded to the nearest integer and
    /// **written** to `out` (saturating at the `i64` range). For integer products whose
    /// coefficients stay below `2^53` in magnitude.
    ///
    /// # Panics
    /// If `out.len() != N` or `acc` has another degree.
    pub fn backward_i64(&self, acc: &FourierPoly, out: &mut [i64], scratch: &mut FftScratch) {
        assert_eq!(out.len(), self.n, "output length is not N");
        self.backward_into_tmp(acc, scratch);
        let (lo, hi) = out.split_at_mut(self.n / 2);
        for ((z, o0), o1) in scratch.tmp.iter().zip(lo).zip(hi) {
            *o0 = z.re.round() as i64;
            *o1 = z.im.round() as i64;
        }
    }
}

impl FourierPoly {
    /// The ring degree `N` (the polynomial holds `N/2` complex values).
    pub fn ring_degree(&self) -> usize {
        self.n
    }

    /// The `N/2` complex values, standard order.
    pub fn as_slice(&self) -> &[c64] {
        &self.data
    }

    /// Sets every value to zero (reuse as an accumulator).
    pub fn set_zero(&mut self) {
        self.data.fill(c64::new(0.0, 0.0));
    }

    /// `self += a · b` (pointwise; a negacyclic product in the coefficient domain).
    ///
    /// # Panics
    /// If the degrees differ.
    #[inline]
    pub fn mul_acc(&mut self, a: &FourierPoly, b: &FourierPoly) {
        assert!(self.n == a.n && self.n == b.n, "FourierPoly degrees differ");
        for ((s, x), y) in self.data.iter_mut().zip(&a.data).zip(&b.data) {
            *s += *x * *y;
        }
    }

    /// `self = a · b` (pointwise).
    ///
    /// # Panics
    /// If the degrees differ.
    pub fn set_mul(&mut self, a: &FourierPoly, b: &FourierPoly) {
        assert!(self.n == a.n && self.n == b.n, "FourierPoly degrees differ");
        for ((s, x), y) in self.data.iter_mut().zip(&a.data).zip(&b.data) {
            *s = *x * *y;
        }
    }

    /// `self += other`.
    ///
    /// # Panics
    /// If the degrees differ.
    pub fn add_assign(&mut self, other: &FourierPoly) {
        assert_eq!(self.n, other.n, "FourierPoly degrees differ");
        for (s, x) in self.data.iter_mut().zip(&other.data) {
            *s += *x;
        }
    }
}

impl SplitFourierPoly {
    /// Sets every limb to zero.
    pub fn set_zero(&mut self) {
        for l in &mut self.limbs {
            l.set_zero();
        }
    }

    /// `self += a · d`, limb by limb (`a` split, `d` a small-coefficient polynomial).
    ///
    /// # Panics
    /// If the degrees differ.
    pub fn mul_acc(&mut self, a: &SplitFourierPoly, d: &FourierPoly) {
        for (s, x) in self.limbs.iter_mut().zip(&a.limbs) {
            s.mul_acc(x, d);
        }
    }
}

impl coterie_base::envelope::Versioned for FourierPoly {
    const TAG: [u8; 4] = *b"FFTp";
    /// Version 2: the format version moved from a field of the encoding into the envelope.
    const VERSION: u16 = 2;
}

coterie_base::versioned! {
    SplitFourierPoly => b"FFTs" v 1,
}

/// The serde form of [`FourierPoly`]; the format version is the envelope's
/// ([`FourierPoly::to_envelope`]) or that of the enclosing versioned type.
#[derive(Serialize, Deserialize)]
struct FourierPolyWire {
    n: u64,
    /// Interleaved `re, im` values, `N` of them.
    values: Vec<f64>,
}

impl FourierPoly {
    /// Largest postcard payload of a [`FourierPoly`] envelope: the degree and the value count
    /// (varints, at most 10 and 5 bytes) and `MAX_RING_DEGREE` values of 8 bytes.
    pub const MAX_ENVELOPE_PAYLOAD: usize = 15 + 8 * MAX_RING_DEGREE;

    /// Encodes in the one envelope (tag `FFTp`).
    ///
    /// # Errors
    /// Only if encoding fails, which it does not for a polynomial made by an [`FftPlan`].
    ///
    /// ```
    /// use coterie_math::fft::{FftPlan, FourierPoly};
    /// let plan = FftPlan::new(32).unwrap();
    /// let f = plan.zero_fourier();
    /// let bytes = f.to_envelope().unwrap();
    /// assert_eq!(FourierPoly::from_envelope(&bytes).unwrap(), f);
    /// assert!(FourierPoly::from_envelope(&bytes[..bytes.len() - 1]).is_err());
    /// ```
    pub fn to_envelope(&self) -> Result<Vec<u8>> {
        coterie_base::envelope::to_envelope(self)
            .map_err(|e| Error::Malformed(format!("FourierPoly: {e}")))
    }

    /// Decodes [`FourierPoly::to_envelope`] output, with a payload of at most
    /// [`FourierPoly::MAX_ENVELOPE_PAYLOAD`] bytes.
    ///
    /// # Errors
    /// [`Error::Malformed`] for a bad envelope (tag, version, length, trailing bytes), a degree
    /// out of range, a value count that does not match it, or a non-finite value.
    pub fn from_envelope(bytes: &[u8]) -> Result<Self> {
        coterie_base::envelope::from_envelope(bytes, Self::MAX_ENVELOPE_PAYLOAD)
            .map_err(|e| Error::Malformed(format!("FourierPoly: {e}")))
    }

    fn to_wire(&self) -> FourierPolyWire {
        FourierPolyWire {
            n: self.n as u64,
            values: self.data.iter().flat_map(|z| [z.re, z.im]).collect(),
        }
    }

    fn from_wire(w: FourierPolyWire) -> Result<Self> {
        let n = usize::try_from(w.n).map_err(|_| Error::Malformed("degree overflow".into()))?;
        check_degree(n).map_err(|e| Error::Malformed(e.to_string()))?;
        if w.values.len() != n {
            return Err(Error::Malformed(format!(
                "FourierPoly of degree {n} needs {n} values, got {}",
                w.values.len()
            )));
        }
        if w.values.iter().any(|v| !v.is_finite()) {
            return Err(Error::Malformed("FourierPoly value is not finite".into()));
        }
        let data = w
            .values
            .chunks_exact(2)
            .map(|p| c64::new(p[0], p[1]))
            .collect();
        Ok(Self { n, data })
    }
}

impl Serialize for FourierPoly {
    fn serialize<S: Serializer>(&self, s: S) -> core::result::Result<S::Ok, S::Error> {
        self.to_wire().serialize(s)
    }
}

impl<'de> Deserialize<'de> for FourierPoly {
    fn deserialize<D: Deserializer<'de>>(d: D) -> core::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        Self::from_wire(FourierPolyWire::deserialize(d)?).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intpoly;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    fn rand_u64s(rng: &mut ChaCha20Rng, n: usize) -> Vec<u64> {
        (0..n).map(|_| rng.next_u64()).collect()
    }

    fn rand_digits(rng: &mut ChaCha20Rng, n: usize, log_b: u32) -> Vec<i64> {
        let b = 1i64 << log_b;
        (0..n)
            .map(|_| (rng.next_u64() % (2 * b as u64 + 1)) as i64 - b)
            .collect()
    }

    /// Max |x - y| as signed differences modulo 2^64.
    fn max_err_u64(x: &[u64], y: &[u64]) -> u64 {
        x.iter()
            .zip(y)
            .map(|(a, b)| (a.wrapping_sub(*b) as i64).unsigned_abs())
            .max()
            .unwrap()
    }

    fn max_err_u32(x: &[u32], y: &[u32]) -> u64 {
        x.iter()
            .zip(y)
            .map(|(a, b)| u64::from((a.wrapping_sub(*b) as i32).unsigned_abs()))
            .max()
            .unwrap()
    }

    /// `max_abs` after `forward_i64` is the canonical norm: the largest `|a(ζ)|` over every
    /// primitive `2N`-th root `ζ`, by direct evaluation.
    #[test]
    fn max_abs_is_the_canonical_norm() {
        let mut rng = ChaCha20Rng::seed_from_u64(12);
        for n in [16usize, 64, 2048, 4096] {
            let plan = FftPlan::new(n).unwrap();
            let a = rand_digits(&mut rng, n, 20);
            let mut f = plan.zero_fourier();
            plan.forward_i64(&a, &mut f, &mut plan.new_scratch());
            let mut naive = 0f64;
            for k in 0..n {
                let theta = std::f64::consts::PI * (2 * k + 1) as f64 / n as f64;
                let (mut re, mut im) = (0.0, 0.0);
                for (j, &c) in a.iter().enumerate() {
                    let phi = theta * j as f64;
                    re += c as f64 * phi.cos();
                    im += c as f64 * phi.sin();
                }
                naive = naive.max(re.hypot(im));
            }
            assert!((f.max_abs() / naive - 1.0).abs() < 1e-9, "N = {n}");
        }
    }

    #[test]
    fn rejects_bad_degrees() {
        for n in [0, 1, 8, 24, 1 << 17] {
            assert!(FftPlan::new(n).is_err(), "n = {n}");
        }
    }

    #[test]
    fn wrapping_conversion() {
        assert_eq!(f64_to_wrapping_u64(-1.4), u64::MAX);
        assert_eq!(f64_to_wrapping_u64(2.4), 2);
        assert_eq!(f64_to_wrapping_u64(2.6), 3);
        assert_eq!(f64_to_wrapping_u64(-2.6), 3u64.wrapping_neg());
        assert_eq!(f64_to_wrapping_u64(2f64.powi(51) + 0.5), (1 << 51) + 1);
        assert_eq!(f64_to_wrapping_u64(2f64.powi(51) - 0.5), 1 << 51);
        assert_eq!(
            f64_to_wrapping_u64(-(2f64.powi(51)) - 1.0),
            ((1u64 << 51) + 1).wrapping_neg()
        );
        assert_eq!(f64_to_wrapping_u64(2f64.powi(53) + 2.0), (1 << 53) + 2);
        assert_eq!(f64_to_wrapping_u64(2f64.powi(64)), 0);
        assert_eq!(f64_to_wrapping_u64(2f64.powi(63)), 1 << 63);
        assert_eq!(f64_to_wrapping_u64(-(2f64.powi(63))), 1 << 63);
        assert_eq!(f64_to_wrapping_u64(3.0 * 2f64.powi(62)), 3 << 62);
        assert_eq!(
            f64_to_wrapping_u64(-3.0 * 2f64.powi(62)),
            (3u64 << 62).wrapping_neg()
        );
        assert_eq!(f64_to_wrapping_u64(5.0 * 2f64.powi(70)), 0);
        assert_eq!(f64_to_wrapping_u64(f64::NAN), 0);
        assert_eq!(f64_to_wrapping_u64(f64::INFINITY), 0);
    }

    #[test]
    fn split3_recombines() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let mut xs = rand_u64s(&mut rng, 1000);
        xs.extend([
            0,
            1,
            u64::MAX,
            1 << 63,
            (1 << 63) - 1,
            1 << 21,
            (1 << 21) - 1,
        ]);
        for x in xs {
            let [l0, l1, l2] = split3(x);
            assert!((-(1 << 21)..(1 << 21)).contains(&l0));
            assert!((-(1 << 21)..(1 << 21)).contains(&l1));
            assert!((-(1 << 19)..(1 << 19)).contains(&l2));
            let y = (l0 as u64)
                .wrapping_add((l1 as u64) << 22)
                .wrapping_add((l2 as u64) << 44);
            assert_eq!(x, y);
        }
    }

    #[test]
    fn roundtrip_all_degrees() {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        for log_n in 4..=16 {
            let n = 1usize << log_n;
            let plan = FftPlan::new(n).unwrap();
            let mut s = plan.new_scratch();
            let mut f = plan.zero_fourier();
            // i64 values below 2^40 come back exactly.
            let a: Vec<i64> = (0..n)
                .map(|_| (rng.next_u64() >> 24) as i64 - (1 << 39))
                .collect();
            plan.forward_i64(&a, &mut f, &mut s);
            let mut back = vec![0i64; n];
            plan.backward_i64(&f, &mut back, &mut s);
            assert_eq!(a, back, "i64 roundtrip at N = {n}");
            // u32 torus: exact.
            let t: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
            plan.forward_torus_u32(&t, &mut f, &mut s);
            let mut back = vec![0u32; n];
            plan.backward_add_torus_u32(&f, &mut back, &mut s);
            assert_eq!(t, back, "u32 roundtrip at N = {n}");
            // u64 split: exact.
            let t = rand_u64s(&mut rng, n);
            let mut sp = plan.zero_split();
            plan.forward_torus_u64_split(&t, &mut sp, &mut s);
            let mut back = vec![0u64; n];
            plan.backward_add_torus_u64_split(&sp, &mut back, &mut s);
            assert_eq!(t, back, "u64 split roundtrip at N = {n}");
            // u64 direct: within the 53-bit rounding of the input.
            plan.forward_torus_u64(&t, &mut f, &mut s);
            let mut back = vec![0u64; n];
            plan.backward_add_torus_u64(&f, &mut back, &mut s);
            let e = max_err_u64(&t, &back);
            assert!(e <= 1 << 14, "u64 roundtrip at N = {n}: error {e}");
        }
    }

    /// Measures the error of `count` accumulated products torus × digits (|d| ≤ 2^9) against
    /// the exact product; returns (u32 error, u64 direct error, u64 split error).
    fn product_errors(n: usize, count: usize, seed: u64) -> (u64, u64, u64) {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let plan = FftPlan::new(n).unwrap();
        let mut s = plan.new_scratch();
        let mut acc32 = plan.zero_fourier();
        let mut acc64 = plan.zero_fourier();
        let mut acc_split = plan.zero_split();
        let mut exact32 = vec![0u32; n];
        let mut exact64 = vec![0u64; n];
        let (mut fa, mut fd) = (plan.zero_fourier(), plan.zero_fourier());
        let mut fsplit = plan.zero_split();
        for _ in 0..count {
            let a = rand_u64s(&mut rng, n);
            let a32: Vec<u32> = a.iter().map(|&x| (x >> 32) as u32).collect();
            let d = rand_digits(&mut rng, n, 9);
            plan.forward_i64(&d, &mut fd, &mut s);
            plan.forward_torus_u32(&a32, &mut fa, &mut s);
            acc32.mul_acc(&fa, &fd);
            plan.forward_torus_u64(&a, &mut fa, &mut s);
            acc64.mul_acc(&fa, &fd);
            plan.forward_torus_u64_split(&a, &mut fsplit, &mut s);
            acc_split.mul_acc(&fsplit, &fd);
            intpoly::negacyclic_mul_small_add(&mut exact32, &d, &a32);
            intpoly::negacyclic_mul_small_add(&mut exact64, &d, &a);
        }
        let mut got32 = vec![0u32; n];
        plan.backward_add_torus_u32(&acc32, &mut got32, &mut s);
        let mut got64 = vec![0u64; n];
        plan.backward_add_torus_u64(&acc64, &mut got64, &mut s);
        let mut got_split = vec![0u64; n];
        plan.backward_add_torus_u64_split(&acc_split, &mut got_split, &mut s);
        (
            max_err_u32(&got32, &exact32),
            max_err_u64(&got64, &exact64),
            max_err_u64(&got_split, &exact64),
        )
    }

    #[test]
    fn product_error_n1024() {
        let (e32, e64, es) = product_errors(1024, 1, 10);
        eprintln!(
            "N=1024 one product: u32 err {e32}, u64 direct err 2^{:.1}, split err {es}",
            (e64 as f64).log2()
        );
        assert!(e32 <= U32_MAX_ERROR_BOUND);
        assert!(e64 <= U64_DIRECT_MAX_ERROR_BOUND);
        assert_eq!(es, 0);
    }

    #[test]
    fn product_error_n2048() {
        let (e32, e64, es) = product_errors(2048, 1, 11);
        eprintln!(
            "N=2048 one product: u32 err {e32}, u64 direct err 2^{:.1}, split err {es}",
            (e64 as f64).log2()
        );
        assert!(e32 <= U32_MAX_ERROR_BOUND);
        assert!(e64 <= U64_DIRECT_MAX_ERROR_BOUND);
        assert_eq!(es, 0);
    }

    #[test]
    fn product_error_n4096_u64() {
        let (_, e64, es) = product_errors(4096, 1, 12);
        eprintln!(
            "N=4096 one product: u64 direct err 2^{:.1}, split err {es}",
            (e64 as f64).log2()
        );
        assert!(e64 <= U64_DIRECT_MAX_ERROR_BOUND);
        assert_eq!(es, 0);
    }

    /// An external-product-like sum: (k+1)·ℓ = 2·4 = 8 products accumulated in the Fourier
    /// domain, one backward transform.
    #[test]
    fn accumulated_products_n2048() {
        let (e32, e64, es) = product_errors(2048, 8, 13);
        eprintln!(
            "N=2048 8 products: u32 err {e32}, u64 direct err 2^{:.1}, split err {es}",
            (e64 as f64).log2()
        );
        assert!(e32 <= U32_MAX_ERROR_BOUND);
        assert!(e64 <= U64_DIRECT_MAX_ERROR_BOUND);
        assert_eq!(es, 0);
    }

    #[test]
    fn monomial_product_is_exact_rotation() {
        let n = 64;
        let plan = FftPlan::new(n).unwrap();
        let mut s = plan.new_scratch();
        let t: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(0x9E37_79B9)).collect();
        for k in [0, 1, 17, 63] {
            let mut m = vec![0i64; n];
            m[k] = -1;
            let (mut ft, mut fm, mut acc) = (
                plan.zero_fourier(),
                plan.zero_fourier(),
                plan.zero_fourier(),
            );
            plan.forward_torus_u32(&t, &mut ft, &mut s);
            plan.forward_i64(&m, &mut fm, &mut s);
            acc.set_mul(&ft, &fm);
            let mut out = vec![0u32; n];
            plan.backward_add_torus_u32(&acc, &mut out, &mut s);
            let mut want = vec![0u32; n];
            intpoly::negacyclic_mul_small_add(&mut want, &m, &t);
            assert_eq!(out, want, "X^{k}");
        }
    }

    #[test]
    fn fourier_poly_wire_roundtrip_and_validation() {
        let plan = FftPlan::new(32).unwrap();
        let mut s = plan.new_scratch();
        let mut f = plan.zero_fourier();
        let a: Vec<i64> = (0..32).map(|i| i * 7 - 100).collect();
        plan.forward_i64(&a, &mut f, &mut s);
        let g = FourierPoly::from_wire(f.to_wire()).unwrap();
        assert_eq!(f, g);
        let wire = |n, len| FourierPolyWire {
            n,
            values: vec![0.0; len],
        };
        assert!(FourierPoly::from_wire(wire(32, 30)).is_err());
        assert!(FourierPoly::from_wire(wire(24, 24)).is_err());
        assert!(FourierPoly::from_wire(wire(1 << 20, 0)).is_err());
        let mut w = wire(16, 16);
        w.values[3] = f64::NAN;
        assert!(FourierPoly::from_wire(w).is_err());
        assert!(FourierPoly::from_wire(wire(16, 16)).is_ok());
    }

    #[test]
    fn fourier_poly_envelope_roundtrip_and_refusals() {
        use coterie_base::envelope::{self, Versioned};
        let plan = FftPlan::new(32).unwrap();
        let mut s = plan.new_scratch();
        let mut f = plan.zero_fourier();
        let a: Vec<i64> = (0..32).map(|i| i * 7 - 100).collect();
        plan.forward_i64(&a, &mut f, &mut s);
        let bytes = f.to_envelope().unwrap();
        assert_eq!(FourierPoly::from_envelope(&bytes).unwrap(), f);
        // A wrong format version (the old in-band `version` field is now the envelope's).
        let mut old = bytes.clone();
        old[8..10].copy_from_slice(&1u16.to_le_bytes());
        let e = FourierPoly::from_envelope(&old).unwrap_err().to_string();
        assert!(e.contains("version 1"), "{e}");
        // Every check of `from_wire` still runs behind the envelope.
        let seal = |w: &FourierPolyWire| {
            envelope::seal(FourierPoly::TAG, FourierPoly::VERSION, w).unwrap()
        };
        let bad = |n, len| FourierPolyWire {
            n,
            values: vec![0.0; len],
        };
        assert!(FourierPoly::from_envelope(&seal(&bad(32, 30))).is_err());
        assert!(FourierPoly::from_envelope(&seal(&bad(24, 24))).is_err());
        let mut nan = bad(16, 16);
        nan.values[0] = f64::INFINITY;
        assert!(FourierPoly::from_envelope(&seal(&nan)).is_err());
        assert!(FourierPoly::from_envelope(&seal(&bad(16, 16))).is_ok());
        // Bounded: a declared payload over the limit is refused before decoding.
        let mut huge = bytes.clone();
        huge[10..14].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(FourierPoly::from_envelope(&huge).is_err());
        // The largest polynomial fits the bound exactly as computed.
        let big = FourierPolyWire {
            n: MAX_RING_DEGREE as u64,
            values: vec![0.5; MAX_RING_DEGREE],
        };
        let env = seal(&big);
        assert!(env.len() - envelope::HEADER_LEN <= FourierPoly::MAX_ENVELOPE_PAYLOAD);
        assert!(FourierPoly::from_envelope(&env).is_ok());
        // Truncations and a split polynomial in its own envelope.
        for cut in 0..bytes.len() {
            assert!(FourierPoly::from_envelope(&bytes[..cut]).is_err());
        }
        let split = SplitFourierPoly {
            limbs: [f.clone(), f.clone(), f],
        };
        let env = envelope::to_envelope(&split).unwrap();
        assert_eq!(
            envelope::from_envelope::<SplitFourierPoly>(
                &env,
                3 * FourierPoly::MAX_ENVELOPE_PAYLOAD
            )
            .unwrap(),
            split
        );
        assert!(FourierPoly::from_envelope(&env).is_err()); // other tag
    }
}
