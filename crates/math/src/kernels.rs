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
        if avx512_available() {
            // SAFETY: AVX-512F was detected at run time; lengths are equal.
            unsafe { x86_512::mul_mod_fp512(m, out, Some(a), b) };
        } else {
            // SAFETY: AVX2 and FMA were detected at run time; lengths are equal.
            unsafe { x86::mul_mod_fp(m, out, Some(a), b) };
        }
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
        if avx512_available() {
            // SAFETY: AVX-512F was detected at run time; lengths are equal.
            unsafe { x86_512::mul_mod_fp512(m, a, None, b) };
        } else {
            // SAFETY: AVX2 and FMA were detected at run time; lengths are equal.
            unsafe { x86::mul_mod_fp(m, a, None, b) };
        }
        return;
    }
    for (x, &y) in a.iter_mut().zip(b) {
        *x = m.mul(*x, y);
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
        unsafe { x86::mul_mod_fp(m, out, Some(a), b) };
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
    use std::arch::x86_64::*;

    const TWO_52: f64 = 4_503_599_627_370_496.0;
    const TWO_52_BITS: i64 = 0x4330_0000_0000_0000;

    /// `out[i] = a[i]·b[i] mod q` (with `a = out` when `a` is `None`), `q < 2^50`, inputs `< q`.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA; `out`, `a` and `b` must have equal lengths.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn mul_mod_fp(
        m: &crate::modulus::Modulus,
        out: &mut [u64],
        a: Option<&[u64]>,
        b: &[u64],
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
        let a_ptr = a.map_or(out_ptr as *const u64, |a| a.as_ptr());
        let b_ptr = b.as_ptr();
        let chunks = n / 4;
        for i in 0..chunks {
            // SAFETY: 4·i + 3 < n for every chunk; unaligned loads/stores.
            let (ai, bi) = unsafe {
                (
                    _mm256_loadu_si256(a_ptr.add(4 * i) as *const __m256i),
                    _mm256_loadu_si256(b_ptr.add(4 * i) as *const __m256i),
                )
            };
            let af = to_f64(ai);
            let bf = to_f64(bi);
            let h = _mm256_mul_pd(af, bf);
            let l = _mm256_fmsub_pd(af, bf, h);
            let k = _mm256_round_pd::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
                _mm256_mul_pd(h, qinv),
            );
            let r = _mm256_add_pd(_mm256_fnmadd_pd(k, qf, h), l);
            // r ∈ (−1.2q, 1.2q): add q where negative, then subtract q where ≥ q.
            let r = _mm256_add_pd(r, _mm256_and_pd(_mm256_cmp_pd::<_CMP_LT_OQ>(r, zero), qf));
            let r = _mm256_sub_pd(r, _mm256_and_pd(_mm256_cmp_pd::<_CMP_GE_OQ>(r, qf), qf));
            let ri = _mm256_xor_si256(_mm256_castpd_si256(_mm256_add_pd(r, magic)), magic_i);
            // SAFETY: as above.
            unsafe { _mm256_storeu_si256(out_ptr.add(4 * i) as *mut __m256i, ri) };
        }
        for j in 4 * chunks..n {
            // SAFETY: j < n.
            unsafe { *out_ptr.add(j) = m.mul(*a_ptr.add(j), *b_ptr.add(j)) };
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86_512 {
    use std::arch::x86_64::*;

    const TWO_52: f64 = 4_503_599_627_370_496.0;
    const TWO_52_BITS: i64 = 0x4330_0000_0000_0000;

    /// AVX-512F form of `x86::mul_mod_fp`: the same exact floating-point algorithm in eight
    /// lanes; `q < 2^50`, inputs `< q`.
    ///
    /// # Safety
    /// The CPU must support AVX-512F; `out`, `a` and `b` must have equal lengths.
    #[target_feature(enable = "avx512f")]
    pub(crate) unsafe fn mul_mod_fp512(
        m: &crate::modulus::Modulus,
        out: &mut [u64],
        a: Option<&[u64]>,
        b: &[u64],
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
        let a_ptr = a.map_or(out_ptr as *const u64, |a| a.as_ptr());
        let b_ptr = b.as_ptr();
        let chunks = n / 8;
        for i in 0..chunks {
            // SAFETY: 8·i + 7 < n for every chunk; unaligned loads/stores.
            let (ai, bi) = unsafe {
                (
                    _mm512_loadu_si512(a_ptr.add(8 * i) as *const __m512i),
                    _mm512_loadu_si512(b_ptr.add(8 * i) as *const __m512i),
                )
            };
            let af = to_f64(ai);
            let bf = to_f64(bi);
            let h = _mm512_mul_pd(af, bf);
            let l = _mm512_fmsub_pd(af, bf, h);
            let k = _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
                _mm512_mul_pd(h, qinv),
            );
            let r = _mm512_add_pd(_mm512_fnmadd_pd(k, qf, h), l);
            // r ∈ (−1.2q, 1.2q): add q where negative, then subtract q where ≥ q.
            let r = _mm512_mask_add_pd(r, _mm512_cmp_pd_mask::<_CMP_LT_OQ>(r, zero), r, qf);
            let r = _mm512_mask_sub_pd(r, _mm512_cmp_pd_mask::<_CMP_GE_OQ>(r, qf), r, qf);
            let ri = _mm512_xor_si512(_mm512_castpd_si512(_mm512_add_pd(r, magic)), magic_i);
            // SAFETY: as above.
            unsafe { _mm512_storeu_si512(out_ptr.add(8 * i) as *mut __m512i, ri) };
        }
        for j in 8 * chunks..n {
            // SAFETY: j < n.
            unsafe { *out_ptr.add(j) = m.mul(*a_ptr.add(j), *b_ptr.add(j)) };
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
