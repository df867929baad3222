//! Vectorized slice kernels for modular arithmetic.
//!
//! The hot kernel of NTT-domain ring arithmetic is the pointwise product `out[i] = a[i]·b[i] mod q`.
//! x86 has no vector 64×64-bit multiplier, so a Barrett or Montgomery product in integer SIMD needs
//! a dozen 32-bit multiplies per lane. For primes `q < 2^50` there is a much cheaper route through
//! the FMA unit (four `f64` lanes per AVX2 instruction, eight per AVX-512F instruction):
//!
//! 1. convert `a, b < 2^50` to `f64` exactly (bit trick with `2^52`);
//! 2. `h = fl(a·b)` and `l = fma(a, b, −h)`, so `a·b = h + l` exactly (`|l| ≤ 2^47`);
//! 3. `k = round(h · fl(1/q))`, which is within `1.2` of `a·b/q`;
//! 4. `r = fma(−k, q, h) + l`: the exact value `h − k·q` is an integer of magnitude below `2^51`, so
//!    the FMA computes it without rounding, and the sum with `l` is exact too. Then `r = a·b − k·q`
//!    lies in `(−1.2q, 1.2q)`, and one conditional add and one conditional subtract of `q` give
//!    `[0, q)`.
//!
//! Every step is exact, so the result equals the integer remainder — the tests check this against
//! the scalar [`Modulus::mul`] on random and extreme inputs. Moduli of 50 bits or more, and machines
//! without AVX2+FMA, use the scalar Barrett product.
//!
//! The same algorithm runs in 512-bit vectors where the CPU has AVX-512F (checked at run time;
//! the project's machines differ: some have it, some do not). The masked add/subtract of AVX-512
//! replaces the compare-and-blend of the AVX2 path.

use crate::modulus::Modulus;

/// Largest modulus bit size served by the floating-point kernel.
pub const FP_KERNEL_MAX_BITS: u32 = 50;

/// Whether the AVX2+FMA kernel runs on this machine (checked once, then cached by `std`).
#[inline]
pub fn simd_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether the AVX-512F form of the kernel runs on this machine (checked once, then cached).
#[inline]
pub fn avx512_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `out[i] = a[i]·b[i] mod q` for reduced inputs. Panics if the lengths differ.
pub fn mul_mod(m: &Modulus, out: &mut [u64], a: &[u64], b: &[u64]) {
    assert!(
        out.len() == a.len() && a.len() == b.len(),
        "kernel length mismatch"
    );
    #[cfg(target_arch = "x86_64")]
    if m.bits() <= FP_KERNEL_MAX_BITS && simd_available() {
        // SAFETY: AVX2 and FMA were detected at run time; lengths are equal.
        unsafe { x86_dispatch(m, out, Src::Slices(Some(a), b), false) };
        return;
    }
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = m.mul(x, y);
    }
}

/// `a[i] = a[i]·b[i] mod q` for reduced inputs. Panics if the lengths differ.
pub fn mul_mod_assign(m: &Modulus, a: &mut [u64], b: &[u64]) {
    assert!(a.len() == b.len(), "kernel length mismatch");
    #[cfg(target_arch = "x86_64")]
    if m.bits() <= FP_KERNEL_MAX_BITS && simd_available() {
        // SAFETY: AVX2 and FMA were detected at run time; lengths are equal.
        unsafe { x86_dispatch(m, a, Src::Slices(None, b), false) };
        return;
    }
    for (x, &y) in a.iter_mut().zip(b) {
        *x = m.mul(*x, y);
    }
}

/// `acc[i] = (acc[i] + a[i]·b[i]) mod q` for reduced inputs: the NTT-domain multiply-accumulate
/// of gadget products, on the floating-point kernel for `q < 2^50` where AVX2+FMA exist, else
/// scalar. Panics if the lengths differ.
pub fn mul_acc_mod(m: &Modulus, acc: &mut [u64], a: &[u64], b: &[u64]) {
    assert!(
        acc.len() == a.len() && a.len() == b.len(),
        "kernel length mismatch"
    );
    #[cfg(target_arch = "x86_64")]
    if m.bits() <= FP_KERNEL_MAX_BITS && simd_available() {
        // SAFETY: AVX2 and FMA were detected at run time; lengths are equal.
        unsafe { x86_dispatch(m, acc, Src::Slices(Some(a), b), true) };
        return;
    }
    for ((o, &x), &y) in acc.iter_mut().zip(a).zip(b) {
        *o = m.add(*o, m.mul(x, y));
    }
}

/// `out[i] = a[i]·s mod q` for a scalar `s < q` and words `a[i] < 2^50` (not necessarily below
/// `q`: base conversion multiplies residues of one modulus by constants of another). Moduli of 50
/// bits or more take the scalar path, which accepts any words. Panics if the lengths differ.
pub fn mul_scalar_mod(m: &Modulus, out: &mut [u64], a: &[u64], s: u64) {
    assert!(out.len() == a.len(), "kernel length mismatch");
    #[cfg(target_arch = "x86_64")]
    if fp_path(m, s) {
        debug_assert!(a.iter().all(|&x| x < 1 << 50), "factor of 2^50 or more");
        // SAFETY: features detected by `fp_path`; lengths are equal.
        unsafe { x86_dispatch(m, out, Src::Scalar(a, s), false) };
        return;
    }
    for (o, &x) in out.iter_mut().zip(a) {
        *o = m.reduce_u128(x as u128 * s as u128);
    }
}

/// `acc[i] = (acc[i] + a[i]·s) mod q` for `acc[i] < q`, a scalar `s < q` and words `a[i] < 2^50`:
/// one multiply-accumulate step of an RNS inner product such as `Σ_i y_i·(Q/q_i) mod p`. Panics if
/// the lengths differ.
pub fn mul_scalar_acc_mod(m: &Modulus, acc: &mut [u64], a: &[u64], s: u64) {
    assert!(acc.len() == a.len(), "kernel length mismatch");
    #[cfg(target_arch = "x86_64")]
    if fp_path(m, s) {
        debug_assert!(a.iter().all(|&x| x < 1 << 50), "factor of 2^50 or more");
        // SAFETY: features detected by `fp_path`; lengths are equal.
        unsafe { x86_dispatch(m, acc, Src::Scalar(a, s), true) };
        return;
    }
    for (o, &x) in acc.iter_mut().zip(a) {
        *o = m.add(*o, m.reduce_u128(x as u128 * s as u128));
    }
}

/// `acc[i] += a[i] as f64 · c` for words `a[i] < 2^52` (exact conversion; one rounding in the
/// product and one in the sum, as the scalar expression). Words of 2^52 or more give wrong sums
/// on the vector path: callers check the bound. Panics if the lengths differ.
pub fn add_scaled_f64(acc: &mut [f64], a: &[u64], c: f64) {
    assert!(acc.len() == a.len(), "kernel length mismatch");
    #[cfg(target_arch = "x86_64")]
    if avx512_available() {
        // SAFETY: AVX-512F detected; lengths are equal.
        unsafe { x86_512::add_scaled(acc, a, c) };
        return;
    }
    for (s, &x) in acc.iter_mut().zip(a) {
        *s += x as f64 * c;
    }
}

/// `out[j]` = the residue `src[j] ∈ [0, q_from)` read as an integer (centered in
/// `(−q_from/2, q_from/2]` with `centered`) and reduced modulo `q_to`, for `q_from < 2·q_to`, odd
/// `q_from`: then a centered residue `x > ⌊q_from/2⌋` stands for `x − q_from`, whose residue
/// `x − q_from + q_to` lies in `(0, q_to)`, and any other `x` is already below `q_to`; an
/// uncentered `x ≥ q_to` needs one subtraction of `q_to`. The lift of the RNS gadget
/// decomposition ([`crate::gadget::rns_digit_limb`]). Runs in AVX-512F or AVX2 vectors where
/// the CPU has them (checked at run time), else in the same loop unvectorized. Panics if the
/// lengths differ; the bound on the moduli is the caller's to check (debug builds assert it).
pub fn lift_residues(out: &mut [u64], src: &[u64], q_from: u64, q_to: u64, centered: bool) {
    assert_eq!(out.len(), src.len(), "kernel length mismatch");
    debug_assert!(q_from < 2 * q_to && q_from % 2 == 1);
    #[inline(always)]
    fn body(out: &mut [u64], src: &[u64], q_from: u64, q_to: u64, centered: bool) {
        if centered {
            let (half, delta) = (q_from / 2, q_to.wrapping_sub(q_from));
            for (d, &x) in out.iter_mut().zip(src) {
                *d = if x > half { x.wrapping_add(delta) } else { x };
            }
        } else {
            for (d, &x) in out.iter_mut().zip(src) {
                *d = if x >= q_to { x - q_to } else { x };
            }
        }
    }
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx512f")]
        fn body_avx512(out: &mut [u64], src: &[u64], q_from: u64, q_to: u64, centered: bool) {
            body(out, src, q_from, q_to, centered)
        }
        #[target_feature(enable = "avx2")]
        fn body_avx2(out: &mut [u64], src: &[u64], q_from: u64, q_to: u64, centered: bool) {
            body(out, src, q_from, q_to, centered)
        }
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: AVX-512F was detected at run time.
            unsafe { body_avx512(out, src, q_from, q_to, centered) };
            return;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 was detected at run time.
            unsafe { body_avx2(out, src, q_from, q_to, centered) };
            return;
        }
    }
    body(out, src, q_from, q_to, centered)
}

/// Whether the floating-point kernels serve modulus `m` (and scalar `s`) on this machine.
#[inline]
fn fp_path(m: &Modulus, s: u64) -> bool {
    m.bits() <= FP_KERNEL_MAX_BITS && s < m.value() && simd_available()
}

/// Where the second factor of a product comes from.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
enum Src<'a> {
    /// `a[i]·b[i]`; `a = None` means the output itself.
    Slices(Option<&'a [u64]>, &'a [u64]),
    /// `a[i]·s`.
    Scalar(&'a [u64], u64),
}

/// Runs the widest FP kernel this machine has.
///
/// # Safety
/// AVX2 and FMA must be available; slice lengths must equal `out.len()`.
#[cfg(target_arch = "x86_64")]
unsafe fn x86_dispatch(m: &Modulus, out: &mut [u64], src: Src<'_>, acc: bool) {
    if avx512_available() {
        // SAFETY: AVX-512F detected; the caller guarantees the rest.
        unsafe { x86_512::kernel(m, out, src, acc) }
    } else {
        // SAFETY: the caller guarantees AVX2+FMA and the lengths.
        unsafe { x86::kernel(m, out, src, acc) }
    }
}

/// The AVX2+FMA form of [`mul_mod`] even where AVX-512F exists (for tests and benchmarks); falls
/// back to the scalar product where AVX2+FMA is missing or `q ≥ 2^50`.
pub fn mul_mod_avx2(m: &Modulus, out: &mut [u64], a: &[u64], b: &[u64]) {
    assert!(
        out.len() == a.len() && a.len() == b.len(),
        "kernel length mismatch"
    );
    #[cfg(target_arch = "x86_64")]
    if m.bits() <= FP_KERNEL_MAX_BITS && simd_available() {
        // SAFETY: AVX2 and FMA were detected at run time; lengths are equal.
        unsafe { x86::kernel(m, out, Src::Slices(Some(a), b), false) };
        return;
    }
    mul_mod_scalar(m, out, a, b);
}

/// Scalar reference of [`mul_mod`] (always the Barrett path), for tests and benchmarks.
pub fn mul_mod_scalar(m: &Modulus, out: &mut [u64], a: &[u64], b: &[u64]) {
    assert!(
        out.len() == a.len() && a.len() == b.len(),
        "kernel length mismatch"
    );
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = m.mul(x, y);
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Src;
    use std::arch::x86_64::*;

    const TWO_52: f64 = 4_503_599_627_370_496.0;
    const TWO_52_BITS: i64 = 0x4330_0000_0000_0000;

    /// `out[i] = a·b mod q` (`acc`: `out[i] = out[i] + a·b mod q`), four lanes at a time; `q < 2^50`,
    /// factors `< 2^50`, the second factor and `out` (with `acc`) `< q`.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA; every slice in `src` must have `out.len()` elements.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn kernel(
        m: &crate::modulus::Modulus,
        out: &mut [u64],
        src: Src<'_>,
        acc: bool,
    ) {
        let q = m.value();
        let n = out.len();
        let qf = _mm256_set1_pd(q as f64);
        let qinv = _mm256_set1_pd(1.0 / q as f64);
        let zero = _mm256_setzero_pd();
        let magic = _mm256_set1_pd(TWO_52);
        let magic_i = _mm256_set1_epi64x(TWO_52_BITS);
        let to_f64 =
            |x: __m256i| _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(x, magic_i)), magic);
        let out_ptr = out.as_mut_ptr();
        let (a_ptr, b_ptr, s) = match src {
            Src::Slices(a, b) => (
                a.map_or(out_ptr as *const u64, |a| a.as_ptr()),
                b.as_ptr(),
                None,
            ),
            Src::Scalar(a, s) => (a.as_ptr(), a.as_ptr(), Some(s)),
        };
        let sf = _mm256_set1_pd(s.unwrap_or(0) as f64);
        let chunks = n / 4;
        for i in 0..chunks {
            // SAFETY: 4·i + 3 < n for every chunk; unaligned loads/stores.
            let af = to_f64(unsafe { _mm256_loadu_si256(a_ptr.add(4 * i) as *const __m256i) });
            let bf = match s {
                Some(_) => sf,
                // SAFETY: as above.
                None => to_f64(unsafe { _mm256_loadu_si256(b_ptr.add(4 * i) as *const __m256i) }),
            };
            let h = _mm256_mul_pd(af, bf);
            let l = _mm256_fmsub_pd(af, bf, h);
            let k = _mm256_round_pd::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
                _mm256_mul_pd(h, qinv),
            );
            let r = _mm256_add_pd(_mm256_fnmadd_pd(k, qf, h), l);
            // r ∈ (−1.25q, 1.25q): add q where negative, then subtract q where ≥ q.
            let r = _mm256_add_pd(r, _mm256_and_pd(_mm256_cmp_pd::<_CMP_LT_OQ>(r, zero), qf));
            let mut r = _mm256_sub_pd(r, _mm256_and_pd(_mm256_cmp_pd::<_CMP_GE_OQ>(r, qf), qf));
            if acc {
                // SAFETY: as above.
                let o = to_f64(unsafe { _mm256_loadu_si256(out_ptr.add(4 * i) as *const __m256i) });
                let t = _mm256_add_pd(o, r);
                r = _mm256_sub_pd(t, _mm256_and_pd(_mm256_cmp_pd::<_CMP_GE_OQ>(t, qf), qf));
            }
            let ri = _mm256_xor_si256(_mm256_castpd_si256(_mm256_add_pd(r, magic)), magic_i);
            // SAFETY: as above.
            unsafe { _mm256_storeu_si256(out_ptr.add(4 * i) as *mut __m256i, ri) };
        }
        // SAFETY: j < n for every tail index.
        unsafe { super::tail(m, out_ptr, a_ptr, b_ptr, s, acc, 4 * chunks, n) };
    }
}

#[cfg(target_arch = "x86_64")]
mod x86_512 {
    use super::Src;
    use std::arch::x86_64::*;

    const TWO_52: f64 = 4_503_599_627_370_496.0;
    const TWO_52_BITS: i64 = 0x4330_0000_0000_0000;

    /// `acc[i] += a[i]·c` with `a[i] < 2^52` converted exactly (the 2^52 trick), eight lanes.
    ///
    /// # Safety
    /// The CPU must support AVX-512F; `acc` and `a` must have equal lengths.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn add_scaled(acc: &mut [f64], a: &[u64], c: f64) {
        let n = acc.len();
        let magic = _mm512_set1_pd(TWO_52);
        let magic_i = _mm512_set1_epi64(TWO_52_BITS);
        let cv = _mm512_set1_pd(c);
        let (acc_ptr, a_ptr) = (acc.as_mut_ptr(), a.as_ptr());
        let chunks = n / 8;
        for i in 0..chunks {
            // SAFETY: 8·i + 7 < n; unaligned loads/stores.
            unsafe {
                let x = _mm512_loadu_si512(a_ptr.add(8 * i) as *const __m512i);
                let xf = _mm512_sub_pd(_mm512_castsi512_pd(_mm512_or_si512(x, magic_i)), magic);
                let s = _mm512_loadu_pd(acc_ptr.add(8 * i));
                // multiply then add (no FMA): the same two roundings as the scalar tail
                _mm512_storeu_pd(acc_ptr.add(8 * i), _mm512_add_pd(s, _mm512_mul_pd(xf, cv)));
            }
        }
        for j in 8 * chunks..n {
            // SAFETY: j < n.
            unsafe { *acc_ptr.add(j) += *a_ptr.add(j) as f64 * c };
        }
    }

    /// AVX-512F form of `x86::kernel`: the same exact floating-point algorithm in eight lanes,
    /// with masked adds and subtracts for the corrections.
    ///
    /// # Safety
    /// The CPU must support AVX-512F; every slice in `src` must have `out.len()` elements.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn kernel(
        m: &crate::modulus::Modulus,
        out: &mut [u64],
        src: Src<'_>,
        acc: bool,
    ) {
        let q = m.value();
        let n = out.len();
        let qf = _mm512_set1_pd(q as f64);
        let qinv = _mm512_set1_pd(1.0 / q as f64);
        let zero = _mm512_setzero_pd();
        let magic = _mm512_set1_pd(TWO_52);
        let magic_i = _mm512_set1_epi64(TWO_52_BITS);
        let to_f64 =
            |x: __m512i| _mm512_sub_pd(_mm512_castsi512_pd(_mm512_or_si512(x, magic_i)), magic);
        let out_ptr = out.as_mut_ptr();
        let (a_ptr, b_ptr, s) = match src {
            Src::Slices(a, b) => (
                a.map_or(out_ptr as *const u64, |a| a.as_ptr()),
                b.as_ptr(),
                None,
            ),
            Src::Scalar(a, s) => (a.as_ptr(), a.as_ptr(), Some(s)),
        };
        let sf = _mm512_set1_pd(s.unwrap_or(0) as f64);
        let chunks = n / 8;
        for i in 0..chunks {
            // SAFETY: 8·i + 7 < n for every chunk; unaligned loads/stores.
            let af = to_f64(unsafe { _mm512_loadu_si512(a_ptr.add(8 * i) as *const __m512i) });
            let bf = match s {
                Some(_) => sf,
                // SAFETY: as above.
                None => to_f64(unsafe { _mm512_loadu_si512(b_ptr.add(8 * i) as *const __m512i) }),
            };
            let h = _mm512_mul_pd(af, bf);
            let l = _mm512_fmsub_pd(af, bf, h);
            let k = _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
                _mm512_mul_pd(h, qinv),
            );
            let r = _mm512_add_pd(_mm512_fnmadd_pd(k, qf, h), l);
            // r ∈ (−1.25q, 1.25q): add q where negative, then subtract q where ≥ q.
            let r = _mm512_mask_add_pd(r, _mm512_cmp_pd_mask::<_CMP_LT_OQ>(r, zero), r, qf);
            let mut r = _mm512_mask_sub_pd(r, _mm512_cmp_pd_mask::<_CMP_GE_OQ>(r, qf), r, qf);
            if acc {
                // SAFETY: as above.
                let o = to_f64(unsafe { _mm512_loadu_si512(out_ptr.add(8 * i) as *const __m512i) });
                let t = _mm512_add_pd(o, r);
                r = _mm512_mask_sub_pd(t, _mm512_cmp_pd_mask::<_CMP_GE_OQ>(t, qf), t, qf);
            }
            let ri = _mm512_xor_si512(_mm512_castpd_si512(_mm512_add_pd(r, magic)), magic_i);
            // SAFETY: as above.
            unsafe { _mm512_storeu_si512(out_ptr.add(8 * i) as *mut __m512i, ri) };
        }
        // SAFETY: j < n for every tail index.
        unsafe { super::tail(m, out_ptr, a_ptr, b_ptr, s, acc, 8 * chunks, n) };
    }
}

/// Scalar tail of the vector kernels, indices `from..n`.
///
/// # Safety
/// `out`, `a` and (unless `s` is given) `b` must be valid for `n` elements.
#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_arguments)]
unsafe fn tail(
    m: &Modulus,
    out: *mut u64,
    a: *const u64,
    b: *const u64,
    s: Option<u64>,
    acc: bool,
    from: usize,
    n: usize,
) {
    for j in from..n {
        // SAFETY: j < n.
        unsafe {
            let y = s.unwrap_or_else(|| *b.add(j));
            let p = m.reduce_u128(*a.add(j) as u128 * y as u128);
            *out.add(j) = if acc { m.add(*out.add(j), p) } else { p };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primes::ntt_primes;
    use proptest::prelude::*;

    fn check(q: u64, a: &[u64], b: &[u64]) {
        let m = Modulus::new(q).unwrap();
        let mut want = vec![0u64; a.len()];
        mul_mod_scalar(&m, &mut want, a, b);
        for (i, (&x, &y)) in a.iter().zip(b).enumerate() {
            assert_eq!(want[i] as u128, x as u128 * y as u128 % q as u128);
        }
        let mut got = vec![0u64; a.len()];
        mul_mod(&m, &mut got, a, b);
        assert_eq!(got, want, "q = {q}");
        let mut inplace = a.to_vec();
        mul_mod_assign(&m, &mut inplace, b);
        assert_eq!(inplace, want, "q = {q} (in place)");
        let mut avx2 = vec![0u64; a.len()];
        mul_mod_avx2(&m, &mut avx2, a, b);
        assert_eq!(avx2, want, "q = {q} (AVX2 form)");
        // multiply-accumulate onto reduced words, the largest among them
        let acc0: Vec<u64> = (0..a.len() as u64)
            .map(|i| {
                if i % 3 == 0 {
                    q - 1
                } else {
                    i.wrapping_mul(0x9e37_79b9) % q
                }
            })
            .collect();
        let mut acc = acc0.clone();
        mul_acc_mod(&m, &mut acc, a, b);
        for (i, ((&got, &c), &p)) in acc.iter().zip(&acc0).zip(&want).enumerate() {
            assert_eq!(
                got as u128,
                (c as u128 + p as u128) % q as u128,
                "q = {q} (accumulate, word {i})"
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn fp_kernel_is_exact(bits in 2u32..=62, seed in any::<u64>(), len in 0usize..67) {
            // A random odd modulus of the given size (the kernel does not need primality).
            let q = ((seed >> (64 - bits)) | (1u64 << (bits - 1)) | 1).max(3);
            let mut s = seed | 1;
            let mut next = || { s ^= s << 13; s ^= s >> 7; s ^= s << 17; s };
            let a: Vec<u64> = (0..len).map(|_| next() % q).collect();
            let b: Vec<u64> = (0..len).map(|_| next() % q).collect();
            check(q, &a, &b);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn scalar_kernels_are_exact(bits in 2u32..=62, seed in any::<u64>(), len in 0usize..67) {
            let q = ((seed >> (64 - bits)) | (1u64 << (bits - 1)) | 1).max(3);
            let m = Modulus::new(q).unwrap();
            let mut st = seed | 1;
            let mut next = || { st ^= st << 13; st ^= st >> 7; st ^= st << 17; st };
            // factors up to 2^50 (or 2^62 above the FP range), not necessarily below q
            let amax = if bits <= FP_KERNEL_MAX_BITS { 1u64 << 50 } else { 1 << 62 };
            let a: Vec<u64> = (0..len).map(|_| next() % amax).collect();
            let acc0: Vec<u64> = (0..len).map(|_| next() % q).collect();
            for s in [0, 1, q - 1, next() % q] {
                let want: Vec<u64> = a.iter().map(|&x| (x as u128 * s as u128 % q as u128) as u64).collect();
                let mut got = vec![0u64; len];
                mul_scalar_mod(&m, &mut got, &a, s);
                prop_assert_eq!(&got, &want, "q = {}, s = {}", q, s);
                let mut acc = acc0.clone();
                mul_scalar_acc_mod(&m, &mut acc, &a, s);
                let want_acc: Vec<u64> = acc0.iter().zip(&want).map(|(&x, &y)| ((x as u128 + y as u128) % q as u128) as u64).collect();
                prop_assert_eq!(acc, want_acc, "q = {}, s = {} (accumulate)", q, s);
            }
        }
    }

    #[test]
    fn scalar_kernel_extremes() {
        for bits in [30u32, 44, 49, 50] {
            for q in ntt_primes(bits, 1 << 10, 2).unwrap() {
                let m = Modulus::new(q).unwrap();
                let a = [
                    0,
                    1,
                    q - 1,
                    q,
                    (1 << 50) - 1,
                    (1 << 50) - 2,
                    q / 2,
                    (1 << 49) + 3,
                    7,
                ];
                for s in [0, 1, q - 1, q / 2] {
                    let mut got = [0u64; 9];
                    mul_scalar_mod(&m, &mut got, &a, s);
                    let mut acc = [q - 1; 9];
                    mul_scalar_acc_mod(&m, &mut acc, &a, s);
                    for i in 0..9 {
                        let w = (a[i] as u128 * s as u128 % q as u128) as u64;
                        assert_eq!(got[i], w, "q = {q}, a = {}, s = {s}", a[i]);
                        assert_eq!(acc[i], ((q - 1) as u128 + w as u128) as u64 % q);
                    }
                }
            }
        }
    }

    /// The AVX2 form of the scalar kernels, run directly (the dispatcher prefers AVX-512 where the
    /// test machine has it).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_scalar_kernels_are_exact() {
        if !simd_available() {
            return;
        }
        for q in ntt_primes(47, 1 << 10, 2).unwrap() {
            let m = Modulus::new(q).unwrap();
            let a: Vec<u64> = (0..37u64)
                .map(|i: u64| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % (1 << 50))
                .collect();
            let s = q / 3 + 5;
            let want: Vec<u64> = a
                .iter()
                .map(|&x| (x as u128 * s as u128 % q as u128) as u64)
                .collect();
            let mut got = vec![0u64; a.len()];
            // SAFETY: AVX2+FMA checked above; equal lengths.
            unsafe { super::x86::kernel(&m, &mut got, Src::Scalar(&a, s), false) };
            assert_eq!(got, want);
            let mut acc = vec![q - 1; a.len()];
            // SAFETY: as above.
            unsafe { super::x86::kernel(&m, &mut acc, Src::Scalar(&a, s), true) };
            for (x, w) in acc.iter().zip(&want) {
                assert_eq!(*x, ((q - 1) as u128 + *w as u128) as u64 % q);
            }
        }
    }

    #[test]
    fn add_scaled_matches_scalar() {
        for len in [0usize, 1, 7, 8, 9, 33] {
            let a: Vec<u64> = (0..len as u64)
                .map(|i| i.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 12)
                .collect();
            let mut got: Vec<f64> = (0..len).map(|i| i as f64 * 0.25).collect();
            let mut want = got.clone();
            add_scaled_f64(&mut got, &a, 1.0 / 1_099_511_627_689.0);
            for (w, &x) in want.iter_mut().zip(&a) {
                *w += x as f64 * (1.0 / 1_099_511_627_689.0);
            }
            assert_eq!(got, want, "len {len}");
        }
    }

    #[test]
    fn fp_kernel_extremes() {
        for bits in [30u32, 44, 49, 50] {
            for q in ntt_primes(bits, 1 << 10, 3).unwrap() {
                let vals = [0, 1, 2, q / 2, q / 2 + 1, q - 2, q - 1];
                let a: Vec<u64> = vals
                    .iter()
                    .flat_map(|&x| vals.iter().map(move |_| x))
                    .collect();
                let b: Vec<u64> = vals.iter().flat_map(|_| vals.iter().copied()).collect();
                check(q, &a, &b);
            }
        }
        // Largest 50-bit modulus, all-maximal inputs.
        let q = (1u64 << 50) - 1;
        check(q, &[q - 1; 9], &[q - 1; 9]);
    }
}

/// Lanes of [`cdt_count_below`]: the samples one scan of a cumulative table serves.
pub const CDT_LANES: usize = 64;

/// `1` if `a < b` for 64-bit words, else `0`, without branches.
#[inline(always)]
fn ct_lt_u64(a: u64, b: u64) -> u64 {
    (((!a) & b) | ((!(a ^ b)) & a.wrapping_sub(b))) >> 63
}

/// `1` if `(ah, al) < (bh, bl)` as 128-bit words, else `0`, without branches.
#[inline(always)]
fn ct_lt_u128_split(ah: u64, al: u64, bh: u64, bl: u64) -> u64 {
    let x = ah ^ bh;
    let eq_hi = 1 ^ ((x | x.wrapping_neg()) >> 63);
    ct_lt_u64(ah, bh) | (eq_hi & ct_lt_u64(al, bl))
}

#[inline(always)]
fn cdt_scan(
    table_hi: &[u64],
    table_lo: &[u64],
    r_hi: &[u64; CDT_LANES],
    r_lo: &[u64; CDT_LANES],
    below: &mut [u64; CDT_LANES],
) {
    for (&ch, &cl) in table_hi.iter().zip(table_lo) {
        for i in 0..CDT_LANES {
            below[i] += ct_lt_u128_split(r_hi[i], r_lo[i], ch, cl);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn cdt_scan_avx2(
    table_hi: &[u64],
    table_lo: &[u64],
    r_hi: &[u64; CDT_LANES],
    r_lo: &[u64; CDT_LANES],
    below: &mut [u64; CDT_LANES],
) {
    cdt_scan(table_hi, table_lo, r_hi, r_lo, below);
}

/// [`cdt_scan`] in AVX-512F mask registers: the 64 lanes stay in 16 vectors (high and low words)
/// and 8 counters for the whole scan, and each entry costs three unsigned compares, one mask OR
/// and one masked add per 8 lanes (`r < c` is `r_hi < c_hi`, or `r_hi = c_hi` and
/// `r_lo < c_lo`). Every lane is compared with every entry, whatever the words, so the work and
/// the memory accesses depend only on the table's length, as in [`cdt_scan`]. Against the
/// compiler's vectorization of the word formula it made the σ = 19.2 sampler at least 1.7x faster
/// (`crates/math/benches/sample.rs`, 2026-11-27).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn cdt_scan_avx512(
    table_hi: &[u64],
    table_lo: &[u64],
    r_hi: &[u64; CDT_LANES],
    r_lo: &[u64; CDT_LANES],
    below: &mut [u64; CDT_LANES],
) {
    use std::arch::x86_64::*;
    const V: usize = CDT_LANES / 8;
    let load = |w: &[u64], v: usize| -> __m512i {
        let mut a = [0u64; 8];
        a.copy_from_slice(&w[8 * v..8 * v + 8]);
        // SAFETY: `[u64; 8]` and `__m512i` have the same size, and every bit pattern is valid
        // for both.
        unsafe { std::mem::transmute::<[u64; 8], __m512i>(a) }
    };
    let rh: [__m512i; V] = core::array::from_fn(|v| load(r_hi, v));
    let rl: [__m512i; V] = core::array::from_fn(|v| load(r_lo, v));
    let mut acc: [__m512i; V] = core::array::from_fn(|v| load(below, v));
    let one = _mm512_set1_epi64(1);
    for (&ch, &cl) in table_hi.iter().zip(table_lo) {
        let ch = _mm512_set1_epi64(ch as i64);
        let cl = _mm512_set1_epi64(cl as i64);
        for v in 0..V {
            let lt_hi = _mm512_cmplt_epu64_mask(rh[v], ch);
            let eq_hi = _mm512_cmpeq_epu64_mask(rh[v], ch);
            let lt_lo = _mm512_mask_cmplt_epu64_mask(eq_hi, rl[v], cl);
            acc[v] = _mm512_mask_add_epi64(acc[v], lt_hi | lt_lo, acc[v], one);
        }
    }
    for (v, a) in acc.iter().enumerate() {
        // SAFETY: as above.
        let w = unsafe { std::mem::transmute::<__m512i, [u64; 8]>(*a) };
        below[8 * v..8 * v + 8].copy_from_slice(&w);
    }
}

/// The constant-time scan of a discrete Gaussian's cumulative table for [`CDT_LANES`] samples at
/// once: `below[i] += #{j : r_i < c_j}` for the 128-bit uniform words `r_i = (r_hi[i], r_lo[i])`
/// and the table entries `c_j = (table_hi[j], table_lo[j])`. Every lane is compared with every
/// entry with the same branch-free word operations, so the work and the memory accesses depend
/// only on the table's length; the lanes run in AVX-512F or AVX2 vectors where the CPU has them
/// (the same operations, so the same result). Panics if the table's halves differ in length.
pub fn cdt_count_below(
    table_hi: &[u64],
    table_lo: &[u64],
    r_hi: &[u64; CDT_LANES],
    r_lo: &[u64; CDT_LANES],
    below: &mut [u64; CDT_LANES],
) {
    assert_eq!(table_hi.len(), table_lo.len());
    #[cfg(target_arch = "x86_64")]
    {
        if avx512_available() {
            // SAFETY: the CPU supports AVX-512F (checked at run time just above).
            unsafe { cdt_scan_avx512(table_hi, table_lo, r_hi, r_lo, below) };
            return;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked at run time just above).
            unsafe { cdt_scan_avx2(table_hi, table_lo, r_hi, r_lo, below) };
            return;
        }
    }
    cdt_scan(table_hi, table_lo, r_hi, r_lo, below);
}

#[cfg(test)]
mod cdt_tests {
    use super::*;

    /// The split comparison agrees with `u128`'s on edge and random words, and the scan counts
    /// like the obvious loop on every path this CPU has.
    #[test]
    fn split_comparison_and_scan_match_u128() {
        let edges = [
            0u64,
            1,
            2,
            u64::MAX / 3,
            1 << 63,
            (1 << 63) + 1,
            u64::MAX - 1,
            u64::MAX,
        ];
        let mut words: Vec<u128> = Vec::new();
        for &h in &edges {
            for &l in &edges {
                words.push(((h as u128) << 64) | l as u128);
            }
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u128;
        for _ in 0..64 {
            x = x
                .wrapping_mul(0x2545_F491_4F6C_DD1D_0000_0000_0000_0001)
                .wrapping_add(12345);
            words.push(x);
        }
        for &a in &words {
            for &b in &words {
                let got = ct_lt_u128_split((a >> 64) as u64, a as u64, (b >> 64) as u64, b as u64);
                assert_eq!(got == 1, a < b, "{a:#x} < {b:#x}");
            }
        }
        let mut table: Vec<u128> = words.iter().step_by(3).copied().collect();
        table.sort_unstable();
        let hi: Vec<u64> = table.iter().map(|&c| (c >> 64) as u64).collect();
        let lo: Vec<u64> = table.iter().map(|&c| c as u64).collect();
        // Random lanes, then the 64 edge words (whose high words tie with table entries').
        for r in [
            words
                .iter()
                .rev()
                .take(CDT_LANES)
                .copied()
                .collect::<Vec<u128>>(),
            words[..CDT_LANES].to_vec(),
        ] {
            let mut r_hi = [0u64; CDT_LANES];
            let mut r_lo = [0u64; CDT_LANES];
            for (i, &v) in r.iter().enumerate() {
                r_hi[i] = (v >> 64) as u64;
                r_lo[i] = v as u64;
            }
            // A non-zero start: the scan adds to what `below` holds.
            let start: [u64; CDT_LANES] = core::array::from_fn(|i| i as u64 * 1000);
            let mut below = start;
            cdt_count_below(&hi, &lo, &r_hi, &r_lo, &mut below);
            let mut plain = start;
            cdt_scan(&hi, &lo, &r_hi, &r_lo, &mut plain);
            let mut paths = vec![("dispatch", below), ("portable", plain)];
            #[cfg(target_arch = "x86_64")]
            {
                if avx512_available() {
                    let mut b = start;
                    // SAFETY: the CPU supports AVX-512F (checked just above).
                    unsafe { cdt_scan_avx512(&hi, &lo, &r_hi, &r_lo, &mut b) };
                    paths.push(("avx512", b));
                }
                if std::arch::is_x86_feature_detected!("avx2") {
                    let mut b = start;
                    // SAFETY: the CPU supports AVX2 (checked just above).
                    unsafe { cdt_scan_avx2(&hi, &lo, &r_hi, &r_lo, &mut b) };
                    paths.push(("avx2", b));
                }
            }
            for (i, &v) in r.iter().enumerate() {
                let want = start[i] + table.iter().filter(|&&c| v < c).count() as u64;
                for (name, got) in &paths {
                    assert_eq!(got[i], want, "lane {i}, {name} path");
                }
            }
        }
    }
}
