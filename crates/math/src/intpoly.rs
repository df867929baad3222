//! Exact integer negacyclic polynomial products in `Z[X]/(X^N+1)`, reduced modulo `2^32` or
//! `2^64` (wrapping arithmetic), for the places where floating-point FFT error is not allowed.
//!
//! Seed 003 (AKÖ multi-key TFHE, §5.2, test T10) builds blind-rotate keys from products `r·B`
//! and `r·a` of a ternary temporary key `r` with 64-bit torus polynomials, and requires them to
//! be **exact**: with `β = 2^-62`, FFT error dominates and about 4% of fresh bootstraps fail at
//! `k = 32`. This module offers three exact methods:
//!
//! * [`negacyclic_mul_wrapping`] — the schoolbook `O(N²)` reference;
//! * [`negacyclic_mul_small_add`] — small (ternary, digit) × torus in `O(N·w)`, `w` the number
//!   of nonzero small coefficients; multiplications by `±1` are plain additions/subtractions;
//! * [`ExactMul64`] — a general exact product via `tfhe-ntt`'s `native64` plans: the operands'
//!   residues modulo three 52-bit primes (AVX-512 IFMA) or five 32-bit primes are multiplied by
//!   NTT, and the CRT reconstruction of the full integer product (which has fewer bits than the
//!   prime product) is reduced modulo `2^64`. Operands can be transformed once
//!   ([`ExactMul64::prepare`]) and reused, which is what key generation needs: `B` and `a` are
//!   fixed, `r` changes. Also [`ExactMul64::mul_i64_exact`], the exact product of integer
//!   polynomials with `i64` coefficients as `i128`.
//!
//! Timing: the NTT path does the same work for every input (use it for secret operands); the
//! small × torus fast path skips zero coefficients, so its running time reveals how many
//! coefficients of the small operand are nonzero and where.
use std::sync::OnceLock;

use tfhe_ntt::{native64, native128};

use crate::{Error, Result};

/// A word of the discretized torus `Z/2^w` (`u32` or `u64`), with wrapping arithmetic.
pub trait TorusWord: Copy + Default + Eq + core::fmt::Debug + Send + Sync + 'static {
    /// Bit width `w`.
    const BITS: u32;
    /// `self + o mod 2^w`.
    fn wrapping_add(self, o: Self) -> Self;
    /// `self - o mod 2^w`.
    fn wrapping_sub(self, o: Self) -> Self;
    /// `self · o mod 2^w`.
    fn wrapping_mul(self, o: Self) -> Self;
    /// `x mod 2^w`.
    fn from_i64_wrapping(x: i64) -> Self;
    /// Zero-extension to 64 bits.
    fn to_u64(self) -> u64;
    /// `x mod 2^w`.
    fn from_u64_wrapping(x: u64) -> Self;
}

macro_rules! torus_word {
    ($t:ty) => {
        impl TorusWord for $t {
            const BITS: u32 = <$t>::BITS;
            #[inline(always)]
            fn wrapping_add(self, o: Self) -> Self {
                <$t>::wrapping_add(self, o)
            }
            #[inline(always)]
            fn wrapping_sub(self, o: Self) -> Self {
                <$t>::wrapping_sub(self, o)
            }
            #[inline(always)]
            fn wrapping_mul(self, o: Self) -> Self {
                <$t>::wrapping_mul(self, o)
            }
            #[inline(always)]
            fn from_i64_wrapping(x: i64) -> Self {
                x as $t
            }
            #[inline(always)]
            fn to_u64(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn from_u64_wrapping(x: u64) -> Self {
                x as $t
            }
        }
    };
}
torus_word!(u32);
torus_word!(u64);

fn check_same_len(a: usize, b: usize) -> Result<()> {
    if a != b {
        return Err(Error::Mismatch(format!(
            "polynomial lengths differ: {a} and {b}"
        )));
    }
    Ok(())
}

/// Schoolbook negacyclic product `a·b mod (X^N+1, 2^w)`; the reference for everything else.
/// `O(N²)`.
///
/// ```
/// use coterie_math::intpoly::negacyclic_mul_wrapping;
/// // (1 + X) · X = X + X², and X · X³ = X⁴ = -1 in Z[X]/(X^4+1)
/// let c = negacyclic_mul_wrapping(&[1u64, 1, 0, 0], &[0, 1, 0, 0]).unwrap();
/// assert_eq!(c, vec![0, 1, 1, 0]);
/// let c = negacyclic_mul_wrapping(&[0u32, 0, 0, 1], &[0, 1, 0, 0]).unwrap();
/// assert_eq!(c, vec![u32::MAX, 0, 0, 0]);
/// ```
pub fn negacyclic_mul_wrapping<T: TorusWord>(a: &[T], b: &[T]) -> Result<Vec<T>> {
    check_same_len(a.len(), b.len())?;
    let n = a.len();
    let mut c = vec![T::default(); n];
    for (i, &ai) in a.iter().enumerate() {
        for (j, &bj) in b.iter().enumerate() {
            let p = ai.wrapping_mul(bj);
            let k = i + j;
            if k < n {
                c[k] = c[k].wrapping_add(p);
            } else {
                c[k - n] = c[k - n].wrapping_sub(p);
            }
        }
    }
    Ok(c)
}

/// Schoolbook negacyclic product modulo `2^64` (see [`negacyclic_mul_wrapping`]).
pub fn negacyclic_mul_wrapping_u64(a: &[u64], b: &[u64]) -> Result<Vec<u64>> {
    negacyclic_mul_wrapping(a, b)
}

/// Schoolbook negacyclic product modulo `2^32` (see [`negacyclic_mul_wrapping`]).
pub fn negacyclic_mul_wrapping_u32(a: &[u32], b: &[u32]) -> Result<Vec<u32>> {
    negacyclic_mul_wrapping(a, b)
}

/// Schoolbook exact negacyclic product of integer polynomials, in `i128`; errors if a
/// coefficient of the result (or a partial sum) leaves the `i128` range.
pub fn negacyclic_mul_i64_schoolbook(a: &[i64], b: &[i64]) -> Result<Vec<i128>> {
    check_same_len(a.len(), b.len())?;
    let n = a.len();
    let mut c = vec![0i128; n];
    let overflow = || Error::InvalidParameter("exact product overflows i128".into());
    for (i, &ai) in a.iter().enumerate() {
        for (j, &bj) in b.iter().enumerate() {
            let p = i128::from(ai) * i128::from(bj);
            let k = i + j;
            if k < n {
                c[k] = c[k].checked_add(p).ok_or_else(overflow)?;
            } else {
                c[k - n] = c[k - n].checked_sub(p).ok_or_else(overflow)?;
            }
        }
    }
    Ok(c)
}

/// `out += small · t mod (X^N+1, 2^w)`, for a polynomial `small` with small signed coefficients
/// (ternary keys, gadget digits) and a torus polynomial `t`. Exact. `O(N·w)` with `w` the number
/// of nonzero coefficients of `small`; coefficients `±1` cost one addition/subtraction per term.
///
/// Variable time in the zero pattern of `small` (see the module doc).
///
/// # Panics
/// If the three lengths differ.
///
/// ```
/// use coterie_math::intpoly::negacyclic_mul_small_add;
/// let mut out = vec![0u64; 4];
/// negacyclic_mul_small_add(&mut out, &[0, -1, 0, 0], &[1, 2, 3, 4]);
/// // -X · (1 + 2X + 3X² + 4X³) = 4 - X - 2X² - 3X³
/// assert_eq!(out, vec![4, 1u64.wrapping_neg(), 2u64.wrapping_neg(), 3u64.wrapping_neg()]);
/// ```
pub fn negacyclic_mul_small_add<T: TorusWord>(out: &mut [T], small: &[i64], t: &[T]) {
    let n = t.len();
    assert_eq!(small.len(), n, "small polynomial length differs");
    assert_eq!(out.len(), n, "output length differs");
    for (i, &s) in small.iter().enumerate() {
        if s == 0 {
            continue;
        }
        // X^i · t: coefficients j < n - i land at i + j, the rest wrap with a sign flip.
        let (t_lo, t_hi) = t.split_at(n - i);
        let (o_lo, o_hi) = out.split_at_mut(i);
        match s {
            1 => {
                for (o, &x) in o_hi.iter_mut().zip(t_lo) {
                    *o = o.wrapping_add(x);
                }
                for (o, &x) in o_lo.iter_mut().zip(t_hi) {
                    *o = o.wrapping_sub(x);
                }
            }
            -1 => {
                for (o, &x) in o_hi.iter_mut().zip(t_lo) {
                    *o = o.wrapping_sub(x);
                }
                for (o, &x) in o_lo.iter_mut().zip(t_hi) {
                    *o = o.wrapping_add(x);
                }
            }
            _ => {
                let sw = T::from_i64_wrapping(s);
                for (o, &x) in o_hi.iter_mut().zip(t_lo) {
                    *o = o.wrapping_add(x.wrapping_mul(sw));
                }
                for (o, &x) in o_lo.iter_mut().zip(t_hi) {
                    *o = o.wrapping_sub(x.wrapping_mul(sw));
                }
            }
        }
    }
}

#[derive(Clone, Debug)]
enum Backend {
    /// Three 52-bit primes, needs AVX-512 IFMA at run time.
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    P52(native64::Plan52),
    /// Five 32-bit primes, portable.
    P32(native64::Plan32),
}

#[derive(Clone, Debug)]
enum Residues {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    P52([Vec<u64>; 3]),
    P32([Vec<u32>; 5]),
}

/// A polynomial transformed by [`ExactMul64::prepare`]: its residues modulo the plan's primes,
/// in NTT form. Reusable for any number of products with the same plan.
#[derive(Clone, Debug)]
pub struct PreparedPoly {
    n: usize,
    res: Residues,
}

/// Scratch memory for [`ExactMul64`] (allocate once per thread, reuse).
#[derive(Clone, Debug)]
pub struct ExactScratch {
    res: Residues,
    tmp: Vec<u64>,
}

/// Exact negacyclic products modulo `2^64` (and `2^32`) of ring degree `N` through
/// `tfhe-ntt`'s `native64` plans (CRT over three 52-bit or five 32-bit NTT primes; the prime
/// product exceeds the `N·2^128` bound of the integer product, so the result is exact).
///
/// ```
/// use coterie_math::intpoly::{negacyclic_mul_wrapping_u64, ExactMul64};
/// let m = ExactMul64::new(32).unwrap();
/// let a: Vec<u64> = (0..32u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
/// let b: Vec<u64> = (0..32u64).map(|i| u64::MAX - i).collect();
/// assert_eq!(m.mul_u64(&a, &b), negacyclic_mul_wrapping_u64(&a, &b).unwrap());
/// ```
#[derive(Debug)]
pub struct ExactMul64 {
    n: usize,
    backend: Backend,
    wide: OnceLock<Option<native128::Plan32>>,
}

impl Clone for ExactMul64 {
    fn clone(&self) -> Self {
        Self {
            n: self.n,
            backend: self.backend.clone(),
            wide: OnceLock::new(),
        }
    }
}

impl ExactMul64 {
    /// A plan for ring degree `n` (a power of two, `32 ..= 2^16`). Uses the 52-bit-prime
    /// backend when the CPU has AVX-512 IFMA, else the 32-bit-prime one.
    pub fn new(n: usize) -> Result<Self> {
        if !n.is_power_of_two() || !(32..=1 << 16).contains(&n) {
            return Err(Error::InvalidParameter(format!(
                "exact product ring degree {n} is not a power of two in [32, 65536]"
            )));
        }
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if let Some(p) = native64::Plan52::try_new(n) {
            return Ok(Self {
                n,
                backend: Backend::P52(p),
                wide: OnceLock::new(),
            });
        }
        let p = native64::Plan32::try_new(n).ok_or_else(|| {
            Error::InvalidParameter(format!("tfhe-ntt has no 32-bit plan for N = {n}"))
        })?;
        Ok(Self {
            n,
            backend: Backend::P32(p),
            wide: OnceLock::new(),
        })
    }

    /// The ring degree `N`.
    pub fn ring_degree(&self) -> usize {
        self.n
    }

    /// Which backend runs: `"native64-52bit-ifma"` or `"native64-32bit"`.
    pub fn backend_name(&self) -> &'static str {
        match self.backend {
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Backend::P52(_) => "native64-52bit-ifma",
            Backend::P32(_) => "native64-32bit",
        }
    }

    fn zero_residues(&self) -> Residues {
        let n = self.n;
        match self.backend {
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Backend::P52(_) => Residues::P52(core::array::from_fn(|_| vec![0u64; n])),
            Backend::P32(_) => Residues::P32(core::array::from_fn(|_| vec![0u32; n])),
        }
    }

    /// Fresh scratch memory for this plan.
    pub fn new_scratch(&self) -> ExactScratch {
        ExactScratch {
            res: self.zero_residues(),
            tmp: vec![0u64; self.n],
        }
    }

    fn fwd(&self, a: &[u64], res: &mut Residues) {
        match (&self.backend, res) {
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            (Backend::P52(p), Residues::P52([r0, r1, r2])) => p.fwd(a, r0, r1, r2),
            (Backend::P32(p), Residues::P32([r0, r1, r2, r3, r4])) => p.fwd(a, r0, r1, r2, r3, r4),
            #[allow(unreachable_patterns)]
            _ => unreachable!("residues built by this plan"),
        }
    }

    /// Transforms `b` once for repeated products ([`Self::mul_prepared`]).
    ///
    /// # Panics
    /// If `b.len() != N`.
    pub fn prepare(&self, b: &[u64]) -> PreparedPoly {
        assert_eq!(b.len(), self.n, "input length is not N");
        let mut res = self.zero_residues();
        self.fwd(b, &mut res);
        PreparedPoly { n: self.n, res }
    }

    /// `scratch.tmp = a · b mod (X^N+1, 2^64)`.
    fn mul_into_tmp(&self, a: &[u64], b: &PreparedPoly, scratch: &mut ExactScratch) {
        assert_eq!(a.len(), self.n, "input length is not N");
        assert_eq!(b.n, self.n, "prepared polynomial has another degree");
        self.fwd(a, &mut scratch.res);
        match (&self.backend, &mut scratch.res, &b.res) {
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            (Backend::P52(p), Residues::P52([r0, r1, r2]), Residues::P52([b0, b1, b2])) => {
                p.ntt_0().mul_assign_normalize(r0, b0);
                p.ntt_1().mul_assign_normalize(r1, b1);
                p.ntt_2().mul_assign_normalize(r2, b2);
                p.inv(&mut scratch.tmp, r0, r1, r2);
            }
            (
                Backend::P32(p),
                Residues::P32([r0, r1, r2, r3, r4]),
                Residues::P32([b0, b1, b2, b3, b4]),
            ) => {
                p.ntt_0().mul_assign_normalize(r0, b0);
                p.ntt_1().mul_assign_normalize(r1, b1);
                p.ntt_2().mul_assign_normalize(r2, b2);
                p.ntt_3().mul_assign_normalize(r3, b3);
                p.ntt_4().mul_assign_normalize(r4, b4);
                p.inv(&mut scratch.tmp, r0, r1, r2, r3, r4);
            }
            #[allow(unreachable_patterns)]
            _ => unreachable!("residues built by this plan"),
        }
    }

    /// `out = a · b mod (X^N+1, 2^64)`, exact, with `b` prepared. No allocation.
    ///
    /// # Panics
    /// If a length is not `N` or `b` was prepared for another degree.
    pub fn mul_prepared(
        &self,
        out: &mut [u64],
        a: &[u64],
        b: &PreparedPoly,
        scratch: &mut ExactScratch,
    ) {
        assert_eq!(out.len(), self.n, "output length is not N");
        self.mul_into_tmp(a, b, scratch);
        out.copy_from_slice(&scratch.tmp);
    }

    /// `out += a · b mod (X^N+1, 2^64)`, exact, with `b` prepared. No allocation.
    ///
    /// # Panics
    /// If a length is not `N` or `b` was prepared for another degree.
    pub fn mul_add_prepared(
        &self,
        out: &mut [u64],
        a: &[u64],
        b: &PreparedPoly,
        scratch: &mut ExactScratch,
    ) {
        assert_eq!(out.len(), self.n, "output length is not N");
        self.mul_into_tmp(a, b, scratch);
        for (o, &x) in out.iter_mut().zip(&scratch.tmp) {
            *o = o.wrapping_add(x);
        }
    }

    /// `a · b mod (X^N+1, 2^64)`, exact (allocating convenience form).
    ///
    /// # Panics
    /// If a length is not `N`.
    pub fn mul_u64(&self, a: &[u64], b: &[u64]) -> Vec<u64> {
        let pb = self.prepare(b);
        let mut s = self.new_scratch();
        let mut out = vec![0u64; self.n];
        self.mul_prepared(&mut out, a, &pb, &mut s);
        out
    }

    /// `a · b mod (X^N+1, 2^32)`, exact (computed modulo `2^64` and truncated).
    ///
    /// # Panics
    /// If a length is not `N`.
    pub fn mul_u32(&self, a: &[u32], b: &[u32]) -> Vec<u32> {
        let a64: Vec<u64> = a.iter().map(|&x| u64::from(x)).collect();
        let b64: Vec<u64> = b.iter().map(|&x| u64::from(x)).collect();
        self.mul_u64(&a64, &b64)
            .into_iter()
            .map(|x| x as u32)
            .collect()
    }

    /// Exact negacyclic product of integer polynomials with `i64` coefficients, as `i128`.
    /// Errors with `InvalidParameter` when the a-priori bound `N·max|a|·max|b|` reaches `2^127`
    /// (a result might not fit), and with `Mismatch` on a wrong length. Uses the 64-bit plan when
    /// the bound is below `2^63`, else `tfhe-ntt`'s `native128` plan (ten 32-bit primes).
    pub fn mul_i64_exact(&self, a: &[i64], b: &[i64]) -> Result<Vec<i128>> {
        check_same_len(a.len(), self.n)?;
        check_same_len(b.len(), self.n)?;
        let bits = |v: &[i64]| {
            let m = v.iter().map(|x| x.unsigned_abs()).max().unwrap_or(0);
            64 - m.leading_zeros()
        };
        let (ba, bb) = (bits(a), bits(b));
        if ba == 0 || bb == 0 {
            return Ok(vec![0; self.n]);
        }
        // |c_k| ≤ N · 2^ba · 2^bb  (strictly below; equality impossible for ba,bb-bit values).
        let bound_bits = ba + bb + self.n.trailing_zeros();
        if bound_bits <= 63 {
            let a64: Vec<u64> = a.iter().map(|&x| x as u64).collect();
            let b64: Vec<u64> = b.iter().map(|&x| x as u64).collect();
            return Ok(self
                .mul_u64(&a64, &b64)
                .into_iter()
                .map(|x| i128::from(x as i64))
                .collect());
        }
        if bound_bits > 127 {
            return Err(Error::InvalidParameter(format!(
                "exact i64 product may need {bound_bits} bits, more than i128 holds"
            )));
        }
        let plan = self
            .wide
            .get_or_init(|| native128::Plan32::try_new(self.n))
            .as_ref()
            .ok_or_else(|| {
                Error::InvalidParameter(format!("tfhe-ntt has no 128-bit plan for N = {}", self.n))
            })?;
        let a128: Vec<u128> = a.iter().map(|&x| i128::from(x) as u128).collect();
        let b128: Vec<u128> = b.iter().map(|&x| i128::from(x) as u128).collect();
        let mut prod = vec![0u128; self.n];
        plan.negacyclic_polymul(&mut prod, &a128, &b128);
        Ok(prod.into_iter().map(|x| x as i128).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A strategy for (log N, a, b): N from 16 (schoolbook / small path) or 32 (NTT) to 2048,
    /// coefficients random or extreme.
    fn word_u64() -> impl Strategy<Value = u64> {
        prop_oneof![
            4 => any::<u64>(),
            1 => prop::sample::select(vec![0u64, 1, u64::MAX, 1 << 63, (1 << 63) - 1, u64::MAX - 1]),
        ]
    }

    fn polys(min_log: u32, max_log: u32) -> impl Strategy<Value = (Vec<u64>, Vec<u64>)> {
        (min_log..=max_log).prop_flat_map(|log_n| {
            let n = 1usize << log_n;
            (
                prop::collection::vec(word_u64(), n),
                prop::collection::vec(word_u64(), n),
            )
        })
    }

    fn small_and_torus() -> impl Strategy<Value = (Vec<i64>, Vec<u64>)> {
        (4u32..=11).prop_flat_map(|log_n| {
            let n = 1usize << log_n;
            (
                prop::collection::vec(
                    prop_oneof![
                        6 => -1i64..=1,
                        2 => -512i64..=512,
                        1 => any::<i64>(),
                    ],
                    n,
                ),
                prop::collection::vec(word_u64(), n),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        #[test]
        fn ntt_u64_matches_schoolbook((a, b) in polys(5, 11)) {
            let m = ExactMul64::new(a.len()).unwrap();
            prop_assert_eq!(m.mul_u64(&a, &b), negacyclic_mul_wrapping_u64(&a, &b).unwrap());
        }

        #[test]
        fn ntt_u32_matches_schoolbook((a, b) in polys(5, 10)) {
            let a: Vec<u32> = a.iter().map(|&x| (x >> 17) as u32).collect();
            let b: Vec<u32> = b.iter().map(|&x| x as u32).collect();
            let m = ExactMul64::new(a.len()).unwrap();
            prop_assert_eq!(m.mul_u32(&a, &b), negacyclic_mul_wrapping_u32(&a, &b).unwrap());
        }

        #[test]
        fn small_path_matches_schoolbook((s, t) in small_and_torus(), init in any::<u64>()) {
            let n = t.len();
            let mut out = vec![init; n];
            negacyclic_mul_small_add(&mut out, &s, &t);
            let s_words: Vec<u64> = s.iter().map(|&x| x as u64).collect();
            let want = negacyclic_mul_wrapping_u64(&s_words, &t).unwrap();
            let want: Vec<u64> = want.iter().map(|x| x.wrapping_add(init)).collect();
            prop_assert_eq!(out, want);
            // And the u32 instance.
            let t32: Vec<u32> = t.iter().map(|&x| x as u32).collect();
            let mut out32 = vec![0u32; n];
            negacyclic_mul_small_add(&mut out32, &s, &t32);
            let s32: Vec<u32> = s.iter().map(|&x| x as u32).collect();
            prop_assert_eq!(out32, negacyclic_mul_wrapping_u32(&s32, &t32).unwrap());
        }

        #[test]
        fn prepared_accumulate_matches_schoolbook((a, b) in polys(5, 9), c in any::<u64>()) {
            let n = a.len();
            let m = ExactMul64::new(n).unwrap();
            let pb = m.prepare(&b);
            let mut s = m.new_scratch();
            let mut out = vec![c; n];
            m.mul_add_prepared(&mut out, &a, &pb, &mut s);
            m.mul_add_prepared(&mut out, &b, &pb, &mut s);
            let ab = negacyclic_mul_wrapping_u64(&a, &b).unwrap();
            let bb = negacyclic_mul_wrapping_u64(&b, &b).unwrap();
            let want: Vec<u64> = (0..n).map(|i| c.wrapping_add(ab[i]).wrapping_add(bb[i])).collect();
            prop_assert_eq!(out, want);
        }

        #[test]
        fn i64_exact_matches_schoolbook(
            (a, b) in (5u32..=9).prop_flat_map(|log_n| {
                let n = 1usize << log_n;
                let coef = prop_oneof![
                    any::<i64>().prop_map(|x| x >> 20),  // wide path (bound > 2^63)
                    (-1000i64..=1000),                   // narrow path
                    Just(-(1i64 << 43)), Just((1i64 << 43) - 1),
                ];
                (prop::collection::vec(coef.clone(), n), prop::collection::vec(coef, n))
            })
        ) {
            let m = ExactMul64::new(a.len()).unwrap();
            prop_assert_eq!(m.mul_i64_exact(&a, &b).unwrap(), negacyclic_mul_i64_schoolbook(&a, &b).unwrap());
        }
    }

    #[test]
    fn extreme_values_ntt_n2048() {
        // All coefficients at the extremes: the integer product reaches its N·2^128 bound.
        let n = 2048;
        let m = ExactMul64::new(n).unwrap();
        for (x, y) in [(u64::MAX, u64::MAX), (1 << 63, 1 << 63), (u64::MAX, 1)] {
            let a = vec![x; n];
            let b = vec![y; n];
            assert_eq!(
                m.mul_u64(&a, &b),
                negacyclic_mul_wrapping_u64(&a, &b).unwrap()
            );
        }
        // i64 extremes: i64::MIN everywhere overflows the a-priori i128 bound.
        let a = vec![i64::MIN; n];
        assert!(m.mul_i64_exact(&a, &a).is_err());
        let a = vec![i64::MIN >> 20; n];
        assert_eq!(
            m.mul_i64_exact(&a, &a).unwrap(),
            negacyclic_mul_i64_schoolbook(&a, &a).unwrap()
        );
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(ExactMul64::new(24).is_err());
        assert!(ExactMul64::new(16).is_err());
        assert!(ExactMul64::new(1 << 17).is_err());
        assert!(negacyclic_mul_wrapping_u64(&[1, 2], &[1]).is_err());
        let m = ExactMul64::new(32).unwrap();
        assert!(m.mul_i64_exact(&[0; 31], &[0; 32]).is_err());
    }
}
