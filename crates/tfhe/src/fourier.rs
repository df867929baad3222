//! The negacyclic FFT used by bootstrapping, on `tfhe-fft`'s *unordered* plans.
//!
//! The transform is the one of [`coterie_math::fft`] (read its module doc for the math): a real
//! polynomial modulo `X^N + 1` is folded into `N/2` complex values `(a_j + i·a_{j+N/2})·ψ^j`,
//! `ψ = e^{iπ/N}`, and transformed by a cyclic FFT of size `N/2`. This module exists next to
//! `coterie_math::fft::FftPlan` because bootstrapping needs three things that type does not
//! offer: Fourier buffers as plain mutable slices (so accumulators and keys can live in one flat
//! allocation and an AVX-512 kernel can read them), the *unordered* plan (no permutation pass, as
//! TFHE-rs does; the order is consistent inside one process, and coterie never serializes
//! Fourier-domain data: keys are serialized in the coefficient domain), and the gadget
//! decomposition fused into the forward twist (no digit polynomials in memory).
//! Key *generation* goes through the same engine only where its products are exact (see
//! `crate::algorithms`).
//!
//! Engines are cached per ring degree ([`FourierEngine::get`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use dyn_stack::{PodBuffer, PodStack};
use tfhe_fft::c64;
use tfhe_fft::unordered::{Method, Plan};

use crate::torus::Torus;
use crate::{Error, Result};
use coterie_math::gadget::SignedDecomposer as Decomposer;

/// Most decomposition levels supported by the fused decomposition.
pub const MAX_LEVELS: usize = 64;

/// Smallest supported ring degree.
pub const MIN_POLY_SIZE: usize = 32;
/// Largest supported ring degree.
pub const MAX_POLY_SIZE: usize = 1 << 15;

/// Negacyclic FFT engine for one ring degree `N`: an unordered `tfhe-fft` plan of size `N/2` and
/// the twist tables.
pub struct FourierEngine {
    n: usize,
    plan: Plan,
    tw_re: Vec<f64>,
    tw_im: Vec<f64>,
    itw_re: Vec<f64>,
    itw_im: Vec<f64>,
    avx512: bool,
}

impl core::fmt::Debug for FourierEngine {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FourierEngine")
            .field("n", &self.n)
            .field("avx512", &self.avx512)
            .finish()
    }
}

/// Per-thread FFT scratch memory, allocated once and reused.
pub struct FourierScratch {
    mem: PodBuffer,
    state: Vec<u64>,
}

impl core::fmt::Debug for FourierScratch {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("FourierScratch")
    }
}

fn cache() -> &'static Mutex<HashMap<usize, Arc<FourierEngine>>> {
    static CACHE: OnceLock<Mutex<HashMap<usize, Arc<FourierEngine>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Whether this CPU runs the AVX-512 kernels (AVX-512 F/DQ and FMA), detected once.
pub fn cpu_has_avx512() -> bool {
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(detect_avx512)
}

fn detect_avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512dq")
            && std::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

impl FourierEngine {
    /// The shared engine for ring degree `n` (a power of two in
    /// [`MIN_POLY_SIZE`]`..=`[`MAX_POLY_SIZE`]); built (with a short timing of the FFT
    /// algorithms) on first use.
    ///
    /// ```
    /// let e = coterie_tfhe::fourier::FourierEngine::get(512).unwrap();
    /// assert_eq!(e.poly_size(), 512);
    /// ```
    pub fn get(n: usize) -> Result<Arc<FourierEngine>> {
        if !n.is_power_of_two() || !(MIN_POLY_SIZE..=MAX_POLY_SIZE).contains(&n) {
            return Err(Error::InvalidParameter(format!(
                "polynomial size {n} is not a power of two in [{MIN_POLY_SIZE}, {MAX_POLY_SIZE}]"
            )));
        }
        let mut map = cache()
            .lock()
            .map_err(|_| Error::Internal("FFT cache poisoned".into()))?;
        if let Some(e) = map.get(&n) {
            return Ok(e.clone());
        }
        let e = Arc::new(Self::new_uncached(n));
        map.insert(n, e.clone());
        Ok(e)
    }

    fn new_uncached(n: usize) -> Self {
        let h = n / 2;
        let plan = Plan::new(h, Method::Measure(Duration::from_millis(5)));
        let mut tw_re = Vec::with_capacity(h);
        let mut tw_im = Vec::with_capacity(h);
        let mut itw_re = Vec::with_capacity(h);
        let mut itw_im = Vec::with_capacity(h);
        let scale = 1.0 / h as f64;
        for j in 0..h {
            let (s, c) = (core::f64::consts::PI * j as f64 / n as f64).sin_cos();
            tw_re.push(c);
            tw_im.push(s);
            itw_re.push(c * scale);
            itw_im.push(-s * scale);
        }
        Self {
            n,
            plan,
            tw_re,
            tw_im,
            itw_re,
            itw_im,
            avx512: detect_avx512(),
        }
    }

    /// The ring degree `N`.
    pub fn poly_size(&self) -> usize {
        self.n
    }

    /// Number of complex values of one Fourier-domain polynomial (`N/2`).
    pub fn fourier_len(&self) -> usize {
        self.n / 2
    }

    /// Whether the AVX-512 kernels are used on this CPU.
    pub fn uses_avx512(&self) -> bool {
        self.avx512
    }

    /// Fresh scratch memory for this engine.
    pub fn new_scratch(&self) -> FourierScratch {
        FourierScratch {
            mem: PodBuffer::new(self.plan.fft_scratch()),
            state: vec![0; self.n],
        }
    }

    #[inline(always)]
    fn twist_into(&self, out: &mut [c64], re: impl Fn(usize) -> f64, im: impl Fn(usize) -> f64) {
        for (j, o) in out.iter_mut().enumerate() {
            let (a, b) = (re(j), im(j));
            let (c, s) = (self.tw_re[j], self.tw_im[j]);
            *o = c64::new(a * c - b * s, a * s + b * c);
        }
    }

    /// Forward transform of a polynomial with (small) signed integer coefficients into `out`
    /// (`N/2` values).
    ///
    /// # Panics
    /// If the lengths do not match `N` and `N/2`.
    pub fn forward_i64(&self, src: &[i64], out: &mut [c64], scratch: &mut FourierScratch) {
        let h = self.n / 2;
        assert!(src.len() == self.n && out.len() == h, "length mismatch");
        self.twist_into(out, |j| src[j] as f64, |j| src[j + h] as f64);
        self.plan.fwd(out, PodStack::new(&mut scratch.mem));
    }

    /// Forward transform of a torus polynomial read as centered integers (exact for `u32`; for
    /// `u64` each coefficient is rounded to 53 bits).
    ///
    /// # Panics
    /// If the lengths do not match `N` and `N/2`.
    pub fn forward_torus<T: Torus>(
        &self,
        src: &[T],
        out: &mut [c64],
        scratch: &mut FourierScratch,
    ) {
        let h = self.n / 2;
        assert!(src.len() == self.n && out.len() == h, "length mismatch");
        self.twist_into(
            out,
            |j| src[j].to_f64_centered(),
            |j| src[j + h].to_f64_centered(),
        );
        self.plan.fwd(out, PodStack::new(&mut scratch.mem));
    }

    /// Gadget-decomposes the torus polynomial `src` and writes the forward transforms of its `ℓ`
    /// digit polynomials to `out` (`ℓ·N/2` values, level `1` — the most significant — first).
    /// The digits never exist as polynomials: they are computed inside the twist loop.
    ///
    /// # Panics
    /// If the lengths do not match.
    pub fn forward_decomposed<T: Torus>(
        &self,
        src: &[T],
        dec: &Decomposer,
        out: &mut [c64],
        scratch: &mut FourierScratch,
    ) {
        let h = self.n / 2;
        let l = dec.levels() as usize;
        assert!(
            src.len() == self.n && out.len() == l * h && dec.levels() * dec.base_log() <= T::BITS,
            "length mismatch"
        );
        let state = &mut scratch.state;
        if self.avx512 {
            // SAFETY: the CPU supports the features (checked at engine construction).
            #[cfg(target_arch = "x86_64")]
            unsafe {
                decompose_twist_avx512(self, src, dec, out, state)
            };
        } else {
            decompose_twist(self, src, dec, out, state);
        }
        let stack = PodStack::new(&mut scratch.mem);
        for lev in out.chunks_exact_mut(h) {
            self.plan.fwd(lev, stack);
        }
    }

    /// Inverse transform of `buf` (destroyed), each coefficient rounded to the nearest integer
    /// and **added** to `out` modulo `q`.
    ///
    /// # Panics
    /// If the lengths do not match.
    pub fn backward_add_torus<T: Torus>(
        &self,
        buf: &mut [c64],
        out: &mut [T],
        scratch: &mut FourierScratch,
    ) {
        let h = self.n / 2;
        assert!(out.len() == self.n && buf.len() == h, "length mismatch");
        self.plan.inv(buf, PodStack::new(&mut scratch.mem));
        if self.avx512 {
            // SAFETY: the CPU supports the features (checked at engine construction).
            #[cfg(target_arch = "x86_64")]
            unsafe {
                untwist_add_avx512(self, buf, out)
            };
        } else {
            untwist_add(self, buf, out);
        }
    }

    /// Whether [`FourierEngine::to_split_layout`] reorders data (AVX-512 and `N/2` a multiple of
    /// 8): keys and digits in the split layout feed the shuffle-free external-product kernel.
    pub fn uses_split_layout(&self) -> bool {
        self.avx512 && (self.n / 2).is_multiple_of(8)
    }

    /// Reorders Fourier polynomials (whole multiples of 8 complex values) in place from
    /// interleaved `(re, im)` pairs to blocks of 8 real parts followed by their 8 imaginary
    /// parts, when [`FourierEngine::uses_split_layout`]; otherwise leaves `buf` unchanged.
    pub fn to_split_layout(&self, buf: &mut [c64]) {
        if !self.uses_split_layout() {
            return;
        }
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: uses_split_layout() implies the AVX-512 features were detected.
            unsafe { split_layout_avx512(buf) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        for block in buf.chunks_exact_mut(8) {
            let mut t = [0f64; 16];
            for (k, z) in block.iter().enumerate() {
                t[k] = z.re;
                t[8 + k] = z.im;
            }
            for (k, z) in block.iter_mut().enumerate() {
                *z = c64::new(t[2 * k], t[2 * k + 1]);
            }
        }
    }

    /// [`FourierEngine::matrix_product`] on operands in the split layout
    /// ([`FourierEngine::to_split_layout`]); `acc` is written interleaved (ready for
    /// [`FourierEngine::backward_add_torus`]). Falls back to the interleaved kernel when the
    /// split layout is not in use.
    ///
    /// # Panics
    /// If the lengths do not match.
    pub fn matrix_product_split(
        &self,
        acc: &mut [c64],
        dig: &[c64],
        mat: &[c64],
        rows: usize,
        cols: usize,
    ) {
        let h = self.n / 2;
        assert!(
            acc.len() == cols * h && dig.len() == rows * h && mat.len() == rows * cols * h,
            "length mismatch"
        );
        #[cfg(target_arch = "x86_64")]
        if self.uses_split_layout() {
            // SAFETY: features checked at construction; lengths checked above; h % 8 == 0.
            unsafe { matrix_product_avx512_split(acc, dig, mat, rows, cols, h) };
            return;
        }
        self.matrix_product(acc, dig, mat, rows, cols);
    }

    /// `acc[c] = Σ_r dig[r] · mat[r][c]` (pointwise, `c < cols`), where `dig` holds `rows`
    /// Fourier polynomials and `mat` is a row-major `rows × cols` matrix of Fourier polynomials
    /// (the body of an external product). `acc` is overwritten.
    ///
    /// # Panics
    /// If the lengths do not match.
    pub fn matrix_product(
        &self,
        acc: &mut [c64],
        dig: &[c64],
        mat: &[c64],
        rows: usize,
        cols: usize,
    ) {
        let h = self.n / 2;
        assert!(
            acc.len() == cols * h && dig.len() == rows * h && mat.len() == rows * cols * h,
            "length mismatch"
        );
        #[cfg(target_arch = "x86_64")]
        if self.avx512 && h.is_multiple_of(4) {
            // SAFETY: features checked at construction; the lengths were checked above and the
            // kernel reads/writes whole chunks of 4 complex values only.
            unsafe { matrix_product_avx512(acc, dig, mat, rows, cols, h) };
            return;
        }
        matrix_product_scalar(acc, dig, mat, rows, cols, h);
    }
}

/// The balanced decomposition of [`Decomposer`] (same digits, tested against it), rewritten as
/// passes over whole arrays so that the compiler vectorizes it: `state` first holds the rounded
/// top `ℓβ` bits of every coefficient, then each pass peels the least significant remaining
/// digit (with the carry into the next one) and writes that level's twisted digit polynomial.
#[inline(always)]
fn decompose_twist<T: Torus>(
    e: &FourierEngine,
    src: &[T],
    dec: &Decomposer,
    out: &mut [c64],
    state: &mut [u64],
) {
    let h = e.n / 2;
    let l = dec.levels();
    let b = dec.base_log();
    let kept = b * l;
    let shift = T::BITS - kept;
    let kept_mask = if kept == 64 {
        u64::MAX
    } else {
        (1u64 << kept) - 1
    };
    if shift == 0 {
        for (st, x) in state.iter_mut().zip(src) {
            *st = x.to_u64() & kept_mask;
        }
    } else {
        for (st, x) in state.iter_mut().zip(src) {
            let x = x.to_u64();
            *st = ((x >> shift) + ((x >> (shift - 1)) & 1)) & kept_mask;
        }
    }
    let digit_mask = (1u64 << b) - 1;
    let (s_lo, s_hi) = state.split_at_mut(h);
    let (tw_re, tw_im) = (&e.tw_re[..h], &e.tw_im[..h]);
    let half_b = b - 1;
    for lev in (0..l as usize).rev() {
        let o = &mut out[lev * h..(lev + 1) * h];
        for ((((o, s0), s1), &c), &s) in o
            .iter_mut()
            .zip(s_lo.iter_mut())
            .zip(s_hi.iter_mut())
            .zip(tw_re)
            .zip(tw_im)
        {
            let d0 = *s0 & digit_mask;
            let c0 = d0 >> half_b;
            *s0 = (*s0 >> b) + c0;
            let v0 = d0.wrapping_sub(c0 << b) as i64;
            let d1 = *s1 & digit_mask;
            let c1 = d1 >> half_b;
            *s1 = (*s1 >> b) + c1;
            let v1 = d1.wrapping_sub(c1 << b) as i64;
            let (a, bb) = (v0 as f64, v1 as f64);
            *o = c64::new(a * c - bb * s, a * s + bb * c);
        }
    }
}

/// AVX-512 form of [`decompose_twist`]: 8 coefficient pairs per step (explicit intrinsics; the
/// compiler does not vectorize the interleaved complex store by itself).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,fma,avx2")]
unsafe fn decompose_twist_avx512<T: Torus>(
    e: &FourierEngine,
    src: &[T],
    dec: &Decomposer,
    out: &mut [c64],
    state: &mut [u64],
) {
    use core::arch::x86_64::*;
    let h = e.n / 2;
    if !h.is_multiple_of(8) {
        decompose_twist(e, src, dec, out, state);
        return;
    }
    let l = dec.levels();
    let b = dec.base_log();
    let kept = b * l;
    let shift = T::BITS - kept;
    let kept_mask = if kept == 64 {
        u64::MAX
    } else {
        (1u64 << kept) - 1
    };
    if shift == 0 {
        for (st, x) in state.iter_mut().zip(src) {
            *st = x.to_u64() & kept_mask;
        }
    } else {
        for (st, x) in state.iter_mut().zip(src) {
            let x = x.to_u64();
            *st = ((x >> shift) + ((x >> (shift - 1)) & 1)) & kept_mask;
        }
    }
    let dmask = _mm512_set1_epi64(((1u64 << b) - 1) as i64);
    let vb = _mm_set_epi64x(0, i64::from(b));
    let vhalf = _mm_set_epi64x(0, i64::from(b - 1));
    let idx_lo = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
    let idx_hi = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
    let sp = state.as_mut_ptr() as *mut i64;
    let op = out.as_mut_ptr() as *mut f64;
    let (twr, twi) = (e.tw_re.as_ptr(), e.tw_im.as_ptr());
    for lev in (0..l as usize).rev() {
        let mut j = 0;
        while j < h {
            // SAFETY: j + 8 <= h; state has 2h = N entries; out has ℓ·h complex values and
            // lev < ℓ; the twist tables have h entries (all checked by the caller).
            unsafe {
                let s0 = _mm512_loadu_si512(sp.add(j) as *const _);
                let s1 = _mm512_loadu_si512(sp.add(j + h) as *const _);
                let d0 = _mm512_and_si512(s0, dmask);
                let d1 = _mm512_and_si512(s1, dmask);
                let c0 = _mm512_srl_epi64(d0, vhalf);
                let c1 = _mm512_srl_epi64(d1, vhalf);
                let n0 = _mm512_add_epi64(_mm512_srl_epi64(s0, vb), c0);
                let n1 = _mm512_add_epi64(_mm512_srl_epi64(s1, vb), c1);
                _mm512_storeu_si512(sp.add(j) as *mut _, n0);
                _mm512_storeu_si512(sp.add(j + h) as *mut _, n1);
                let v0 = _mm512_sub_epi64(d0, _mm512_sll_epi64(c0, vb));
                let v1 = _mm512_sub_epi64(d1, _mm512_sll_epi64(c1, vb));
                let a = _mm512_cvtepi64_pd(v0);
                let bb = _mm512_cvtepi64_pd(v1);
                let c = _mm512_loadu_pd(twr.add(j));
                let s = _mm512_loadu_pd(twi.add(j));
                let re = _mm512_fmsub_pd(a, c, _mm512_mul_pd(bb, s));
                let im = _mm512_fmadd_pd(a, s, _mm512_mul_pd(bb, c));
                let lo = _mm512_permutex2var_pd(re, idx_lo, im);
                let hi = _mm512_permutex2var_pd(re, idx_hi, im);
                let base = op.add(2 * (lev * h + j));
                _mm512_storeu_pd(base, lo);
                _mm512_storeu_pd(base.add(8), hi);
            }
            j += 8;
        }
    }
}

/// `round(x) mod 2^64` for a finite `x`, without branches (so that the loop vectorizes): the
/// mantissa is shifted by the unbiased exponent, rounding half away from zero when bits are
/// dropped, and the sign is applied by two's complement. Agrees with
/// [`coterie_math::fft::f64_to_wrapping_u64`] except on exact ties (tested), which FFT outputs
/// hit with probability zero. NaN/infinity are never produced by the transforms of bounded
/// inputs.
#[inline(always)]
pub fn f64_to_wrapping_u64_branchless(x: f64) -> u64 {
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let mant = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    // value = mant · 2^(exp − 1075).
    let e = exp - 1075;
    // Left shift (|x| ≥ 2^52): bits above 2^64 wrap away; shift ≥ 64 gives 0.
    let ls = e.clamp(0, 63) as u32;
    let left = if e > 63 { 0 } else { mant << ls };
    // Right shift with rounding (|x| < 2^52): shift by r = −e ∈ [1, 63]; r ≥ 54 gives 0.
    let r = (-e).clamp(1, 63) as u32;
    let right = ((mant >> (r - 1)) + 1) >> 1;
    let right = if -e > 54 { 0 } else { right };
    let mag = if e >= 0 { left } else { right };
    let neg = (bits >> 63).wrapping_neg();
    (mag ^ neg).wrapping_sub(neg)
}

#[inline(always)]
fn untwist_add<T: Torus>(e: &FourierEngine, buf: &[c64], out: &mut [T]) {
    let h = e.n / 2;
    let (lo, hi) = out.split_at_mut(h);
    for j in 0..h {
        let z = buf[j];
        let (c, s) = (e.itw_re[j], e.itw_im[j]);
        let re = z.re * c - z.im * s;
        let im = z.re * s + z.im * c;
        lo[j] = lo[j].wrapping_add(T::from_u64(f64_to_wrapping_u64_branchless(re)));
        hi[j] = hi[j].wrapping_add(T::from_u64(f64_to_wrapping_u64_branchless(im)));
    }
}

/// AVX-512 form of [`untwist_add`]: 8 complex values per step, with the branch-free rounding
/// of [`f64_to_wrapping_u64_branchless`] in vector form.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,fma,avx2")]
unsafe fn untwist_add_avx512<T: Torus>(e: &FourierEngine, buf: &[c64], out: &mut [T]) {
    use core::arch::x86_64::*;
    let h = e.n / 2;
    if !h.is_multiple_of(8) {
        untwist_add(e, buf, out);
        return;
    }
    #[inline(always)]
    fn round_wrap(x: __m512d) -> __m512i {
        // SAFETY: register-only AVX-512 F/DQ operations (the enclosing function enables them).
        unsafe {
            let bits = _mm512_castpd_si512(x);
            let exp = _mm512_and_si512(_mm512_srli_epi64::<52>(bits), _mm512_set1_epi64(0x7ff));
            let mant = _mm512_or_si512(
                _mm512_and_si512(bits, _mm512_set1_epi64((1i64 << 52) - 1)),
                _mm512_set1_epi64(1i64 << 52),
            );
            let e = _mm512_sub_epi64(exp, _mm512_set1_epi64(1075));
            // e ≥ 0: mant << e (counts ≥ 64 give 0).
            let left = _mm512_sllv_epi64(mant, e);
            // e < 0: (mant >> (−e − 1) + 1) >> 1 (counts ≥ 64 give 0).
            let r1 = _mm512_sub_epi64(_mm512_set1_epi64(1074), exp);
            let right = _mm512_srli_epi64::<1>(_mm512_add_epi64(
                _mm512_srlv_epi64(mant, r1),
                _mm512_set1_epi64(1),
            ));
            let ge = _mm512_cmpge_epi64_mask(e, _mm512_setzero_si512());
            let mag = _mm512_mask_blend_epi64(ge, right, left);
            let sign = _mm512_srai_epi64::<63>(bits);
            _mm512_sub_epi64(_mm512_xor_si512(mag, sign), sign)
        }
    }
    let idx_re = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
    let idx_im = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
    let bp = buf.as_ptr() as *const f64;
    let (itr, iti) = (e.itw_re.as_ptr(), e.itw_im.as_ptr());
    let mut lo_tmp = [0u64; 8];
    let mut hi_tmp = [0u64; 8];
    let (lo, hi) = out.split_at_mut(h);
    let mut j = 0;
    while j < h {
        // SAFETY: j + 8 <= h; buf has h complex values (2h f64); the tables have h entries.
        unsafe {
            let z0 = _mm512_loadu_pd(bp.add(2 * j));
            let z1 = _mm512_loadu_pd(bp.add(2 * j + 8));
            let zr = _mm512_permutex2var_pd(z0, idx_re, z1);
            let zi = _mm512_permutex2var_pd(z0, idx_im, z1);
            let c = _mm512_loadu_pd(itr.add(j));
            let s = _mm512_loadu_pd(iti.add(j));
            let re = _mm512_fmsub_pd(zr, c, _mm512_mul_pd(zi, s));
            let im = _mm512_fmadd_pd(zr, s, _mm512_mul_pd(zi, c));
            _mm512_storeu_si512(lo_tmp.as_mut_ptr() as *mut _, round_wrap(re));
            _mm512_storeu_si512(hi_tmp.as_mut_ptr() as *mut _, round_wrap(im));
        }
        for ((o, t), (p, u)) in lo[j..j + 8]
            .iter_mut()
            .zip(&lo_tmp)
            .zip(hi[j..j + 8].iter_mut().zip(&hi_tmp))
        {
            *o = o.wrapping_add(T::from_u64(*t));
            *p = p.wrapping_add(T::from_u64(*u));
        }
        j += 8;
    }
}

fn matrix_product_scalar(
    acc: &mut [c64],
    dig: &[c64],
    mat: &[c64],
    rows: usize,
    cols: usize,
    h: usize,
) {
    for (c, a) in acc.chunks_exact_mut(h).enumerate() {
        a.fill(c64::new(0.0, 0.0));
        for r in 0..rows {
            let d = &dig[r * h..(r + 1) * h];
            let m = &mat[(r * cols + c) * h..(r * cols + c + 1) * h];
            for ((s, x), y) in a.iter_mut().zip(d).zip(m) {
                *s += *x * *y;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,fma")]
unsafe fn matrix_product_avx512(
    acc: &mut [c64],
    dig: &[c64],
    mat: &[c64],
    rows: usize,
    cols: usize,
    h: usize,
) {
    use core::arch::x86_64::*;
    let accp = acc.as_mut_ptr() as *mut f64;
    let digp = dig.as_ptr() as *const f64;
    let matp = mat.as_ptr() as *const f64;
    let ones = _mm512_set1_pd(1.0);
    for c in 0..cols {
        let mut i = 0;
        while i < h {
            // Two accumulators: s1 = Σ d·g.re (both lanes), s2 = Σ swap(d)·g.im.
            let mut s1 = _mm512_setzero_pd();
            let mut s2 = _mm512_setzero_pd();
            for r in 0..rows {
                // SAFETY: r < rows, c < cols, i + 4 <= h: inside the checked lengths.
                unsafe {
                    let d = _mm512_loadu_pd(digp.add(2 * (r * h + i)));
                    let g = _mm512_loadu_pd(matp.add(2 * ((r * cols + c) * h + i)));
                    let g_re = _mm512_movedup_pd(g);
                    let g_im = _mm512_permute_pd::<0xFF>(g);
                    let d_sw = _mm512_permute_pd::<0x55>(d);
                    s1 = _mm512_fmadd_pd(d, g_re, s1);
                    s2 = _mm512_fmadd_pd(d_sw, g_im, s2);
                }
            }
            // real = s1.re − s2.re, imag = s1.im + s2.im.
            let res = _mm512_fmaddsub_pd(ones, s1, s2);
            // SAFETY: as above.
            unsafe { _mm512_storeu_pd(accp.add(2 * (c * h + i)), res) };
            i += 4;
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn split_layout_avx512(buf: &mut [c64]) {
    use core::arch::x86_64::*;
    let idx_re = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
    let idx_im = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
    for block in buf.chunks_exact_mut(8) {
        let p = block.as_mut_ptr() as *mut f64;
        // SAFETY: a block is 8 complex values = 16 f64.
        unsafe {
            let z0 = _mm512_loadu_pd(p);
            let z1 = _mm512_loadu_pd(p.add(8));
            _mm512_storeu_pd(p, _mm512_permutex2var_pd(z0, idx_re, z1));
            _mm512_storeu_pd(p.add(8), _mm512_permutex2var_pd(z0, idx_im, z1));
        }
    }
}

/// Shuffle-free kernel on split-layout operands: per block of 8 complex values and row, 4 loads
/// and 4 FMAs; the accumulators stay in registers over the rows.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,fma")]
unsafe fn matrix_product_avx512_split(
    acc: &mut [c64],
    dig: &[c64],
    mat: &[c64],
    rows: usize,
    cols: usize,
    h: usize,
) {
    use core::arch::x86_64::*;
    let accp = acc.as_mut_ptr() as *mut f64;
    let digp = dig.as_ptr() as *const f64;
    let matp = mat.as_ptr() as *const f64;
    let idx_lo = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
    let idx_hi = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
    for c in 0..cols {
        let mut i = 0;
        while i < h {
            let mut are = _mm512_setzero_pd();
            let mut aim = _mm512_setzero_pd();
            let mut bre = _mm512_setzero_pd();
            let mut bim = _mm512_setzero_pd();
            for r in 0..rows {
                // SAFETY: r < rows, c < cols, i + 8 <= h: inside the checked lengths (each block
                // of 8 complex values is 16 f64: 8 real parts, then 8 imaginary parts).
                unsafe {
                    let dp = digp.add(2 * (r * h + i));
                    let gp = matp.add(2 * ((r * cols + c) * h + i));
                    let dre = _mm512_loadu_pd(dp);
                    let dim = _mm512_loadu_pd(dp.add(8));
                    let gre = _mm512_loadu_pd(gp);
                    let gim = _mm512_loadu_pd(gp.add(8));
                    are = _mm512_fmadd_pd(dre, gre, are);
                    bre = _mm512_fmadd_pd(dim, gim, bre);
                    aim = _mm512_fmadd_pd(dre, gim, aim);
                    bim = _mm512_fmadd_pd(dim, gre, bim);
                }
            }
            let re = _mm512_sub_pd(are, bre);
            let im = _mm512_add_pd(aim, bim);
            // SAFETY: as above; the output is interleaved (8 complex values = 16 f64).
            unsafe {
                let op = accp.add(2 * (c * h + i));
                _mm512_storeu_pd(op, _mm512_permutex2var_pd(re, idx_lo, im));
                _mm512_storeu_pd(op.add(8), _mm512_permutex2var_pd(re, idx_hi, im));
            }
            i += 8;
        }
    }
}

#[cfg(test)]
mod tests;
