//! Wrapping inner products of 64-bit words with 128-bit words: `Σ_i a_i·v_i mod 2^128`.
//!
//! The 128-bit words come as split limbs `lo_i = v_i mod 2^64`, `hi_i = v_i >> 64` (two `u64`
//! slices), the layout of a key share over `Z_{2^128}`; [`dot_u64_u128_pair`] serves the common
//! case of two such vectors (value and MAC shares of an SPDZ key) against the same `a`, loading and
//! splitting `a` once.
//!
//! x86 has no vector 64×64-bit multiplier without AVX-512DQ/IFMA, so the vector paths split every
//! word into 32-bit halves, `a = a_l + 2^32 a_h`, `lo = l_l + 2^32 l_h`, `hi = h_l + 2^32 h_h`, and
//! use the 32×32→64-bit lane product (`vpmuludq`, AVX2 and AVX-512F):
//!
//! ```text
//! a·v mod 2^128 = a_l l_l + 2^32 (a_l l_h + a_h l_l)
//!               + 2^64 (a_h l_h + a_l h_l) + 2^96 (a_l h_h + a_h h_l)
//! ```
//!
//! where the last two terms only matter mod 2^64 and mod 2^32, so they go into plain wrapping lane
//! accumulators. The first two need exact sums: a lane keeps the wrapping sum `W` of its 64-bit
//! products and the exact sum `H` of their high halves `p >> 32`. Then the sum `L` of the low
//! halves is `(W − 2^32·H) mod 2^64` — exact, because `L < k·2^32 < 2^64` after `k < 2^32`
//! additions — and the exact sum is `L + 2^32·H`. A lane takes at most two products per element,
//! and the kernels fold their lanes into a `u128` every `BLOCK = 2^30` elements (`2^30` per lane
//! at most), far below that bound. Seven multiplies, six shifts and ten adds per vector of four
//! (AVX2) or eight (AVX-512F) elements.
//!
//! Those vector operations bind the kernel, while the scalar multiplier (`mul`, 64×64→128 bits)
//! stays idle; so each loop step also feeds a few elements through the scalar form (four per
//! eight vector elements on AVX-512F), which runs alongside. The tail that fills no step takes
//! the scalar path.
//!
//! The ISA is picked at run time (AVX-512F, else AVX2, else scalar); all paths give the same
//! result, the exact wrapping sum, which the tests check against [`dot_u64_u128_scalar`].

/// Elements per fold of the vector accumulators: at most `2^30` elements per lane, which keeps the
/// lane sums far below the bound of the module docs.
const BLOCK: usize = 1 << 30;

/// `Σ_i a_i·(hi_i·2^64 + lo_i) mod 2^128`: the naive reference, one wrapping `u128` product and
/// one wrapping `u128` sum per element. `None` if the three slices differ in length.
///
/// [`dot_u64_u128`] gives the same result faster; this form is the specification the vector
/// kernels are tested against.
///
/// # Example
/// ```
/// use coterie_math::dot::dot_u64_u128_scalar;
/// // 3·(2^64 + 5) + u64::MAX·7, wrapping mod 2^128
/// let want = 3u128 * ((1u128 << 64) + 5) + u128::from(u64::MAX) * 7;
/// assert_eq!(dot_u64_u128_scalar(&[3, u64::MAX], &[5, 7], &[1, 0]), Some(want));
/// assert_eq!(dot_u64_u128_scalar(&[1, 2], &[3], &[4, 5]), None);
/// ```
pub fn dot_u64_u128_scalar(a: &[u64], lo: &[u64], hi: &[u64]) -> Option<u128> {
    if lo.len() != a.len() || hi.len() != a.len() {
        return None;
    }
    Some(scalar(a, lo, hi))
}

/// `Σ_i a_i·(hi_i·2^64 + lo_i) mod 2^128` with the widest vector kernel of this machine
/// (AVX-512F, AVX2, or the scalar reference). `None` if the three slices differ in length.
///
/// # Example
/// ```
/// use coterie_math::dot::{dot_u64_u128, dot_u64_u128_scalar};
/// let a: Vec<u64> = (0..1024u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
/// let lo: Vec<u64> = (0..1024u64).map(|i| !i << 7).collect();
/// let hi: Vec<u64> = (0..1024u64).map(|i| i ^ 0xdead_beef_0000_0000).collect();
/// let fast = dot_u64_u128(&a, &lo, &hi);
/// assert!(fast.is_some());
/// assert_eq!(fast, dot_u64_u128_scalar(&a, &lo, &hi));
/// assert_eq!(dot_u64_u128(&a, &lo, &hi[1..]), None);
/// ```
pub fn dot_u64_u128(a: &[u64], lo: &[u64], hi: &[u64]) -> Option<u128> {
    if lo.len() != a.len() || hi.len() != a.len() {
        return None;
    }
    Some(dot_with(Isa::detect(), BLOCK, a, lo, hi))
}

/// The two inner products `(Σ_i a_i·v1_i, Σ_i a_i·v2_i) mod 2^128` of one 64-bit vector `a` with
/// two 128-bit vectors `v1 = (lo1, hi1)` and `v2 = (lo2, hi2)` (value and MAC shares of an SPDZ
/// key), in one pass that loads and splits `a` once. Equal to two calls of [`dot_u64_u128`].
/// `None` if the five slices differ in length.
///
/// # Example
/// ```
/// use coterie_math::dot::{dot_u64_u128_pair, dot_u64_u128_scalar};
/// let a: Vec<u64> = (1..=100u64).map(|i| i * 0x0123_4567_89ab_cdef).collect();
/// let (lo1, hi1): (Vec<u64>, Vec<u64>) = (0..100u64).map(|i| (!i, i << 60)).unzip();
/// let (lo2, hi2): (Vec<u64>, Vec<u64>) = (0..100u64).map(|i| (i * i, u64::MAX - i)).unzip();
/// let (v1, v2) = dot_u64_u128_pair(&a, &lo1, &hi1, &lo2, &hi2).unwrap();
/// assert_eq!(Some(v1), dot_u64_u128_scalar(&a, &lo1, &hi1));
/// assert_eq!(Some(v2), dot_u64_u128_scalar(&a, &lo2, &hi2));
/// assert_eq!(dot_u64_u128_pair(&a, &lo1, &hi1, &lo2[1..], &hi2), None);
/// ```
pub fn dot_u64_u128_pair(
    a: &[u64],
    lo1: &[u64],
    hi1: &[u64],
    lo2: &[u64],
    hi2: &[u64],
) -> Option<(u128, u128)> {
    let n = a.len();
    if [lo1, hi1, lo2, hi2].iter().any(|s| s.len() != n) {
        return None;
    }
    Some(dot_pair_with(Isa::detect(), BLOCK, a, [lo1, hi1, lo2, hi2]))
}

/// The instruction sets with a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Isa {
    Scalar,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Isa {
    /// The widest kernel this machine runs (`std` caches the feature checks).
    #[inline]
    fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Isa::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Isa::Avx2;
            }
        }
        Isa::Scalar
    }
}

/// The reference sum of equal-length slices.
#[inline]
fn scalar(a: &[u64], lo: &[u64], hi: &[u64]) -> u128 {
    a.iter().zip(lo).zip(hi).fold(0u128, |acc, ((&a, &l), &h)| {
        let v = u128::from(l) | (u128::from(h) << 64);
        acc.wrapping_add(u128::from(a).wrapping_mul(v))
    })
}

/// [`dot_u64_u128`] on kernel `isa` for equal-length slices, folding the vector lanes every
/// `block` elements (at most [`BLOCK`]; tests use small blocks). The caller
/// guarantees that the CPU supports `isa` (as [`Isa::detect`] reports).
fn dot_with(isa: Isa, block: usize, a: &[u64], lo: &[u64], hi: &[u64]) -> u128 {
    debug_assert!(lo.len() == a.len() && hi.len() == a.len());
    debug_assert!(block > 0 && block <= BLOCK);
    let mut total = 0u128;
    for ((a, lo), hi) in a.chunks(block).zip(lo.chunks(block)).zip(hi.chunks(block)) {
        let part = match isa {
            Isa::Scalar => scalar(a, lo, hi),
            // SAFETY: the caller guarantees AVX2 (detected at run time); the chunks have equal
            // lengths of at most `BLOCK` elements.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => unsafe { x86_256::dot(a, lo, hi) },
            // SAFETY: the caller guarantees AVX-512F (detected at run time); the chunks have
            // equal lengths of at most `BLOCK` elements.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => unsafe { x86_512::dot(a, lo, hi) },
        };
        total = total.wrapping_add(part);
    }
    total
}

/// [`dot_u64_u128_pair`] on kernel `isa` for equal-length slices `v = [lo1, hi1, lo2, hi2]`; as
/// [`dot_with`] otherwise.
fn dot_pair_with(isa: Isa, block: usize, a: &[u64], v: [&[u64]; 4]) -> (u128, u128) {
    debug_assert!(v.iter().all(|s| s.len() == a.len()));
    debug_assert!(block > 0 && block <= BLOCK);
    let (mut t1, mut t2) = (0u128, 0u128);
    for (j, a) in a.chunks(block).enumerate() {
        let r = j * block..j * block + a.len();
        let (lo1, hi1, lo2, hi2) = (
            &v[0][r.clone()],
            &v[1][r.clone()],
            &v[2][r.clone()],
            &v[3][r],
        );
        let (p1, p2) = match isa {
            Isa::Scalar => (scalar(a, lo1, hi1), scalar(a, lo2, hi2)),
            // SAFETY: the caller guarantees AVX2 (detected at run time); the slices have equal
            // lengths of at most `BLOCK` elements.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => unsafe { x86_256::dot_pair(a, lo1, hi1, lo2, hi2) },
            // SAFETY: the caller guarantees AVX-512F (detected at run time); the slices have
            // equal lengths of at most `BLOCK` elements.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => unsafe { x86_512::dot_pair(a, lo1, hi1, lo2, hi2) },
        };
        t1 = t1.wrapping_add(p1);
        t2 = t2.wrapping_add(p2);
    }
    (t1, t2)
}

/// The six lane accumulators of the vector kernels, stored lane by lane (see the module docs):
/// `w0`/`h0` the wrapping sum and the high-half sum of `a_l l_l` (weight 1), `w1`/`h1` those of
/// `a_l l_h` and `a_h l_l` (weight 2^32), `wq` the wrapping sum of `a_h l_h` and `a_l h_l`
/// (weight 2^64), `cq` the wrapping sum of `a_l h_h` and `a_h h_l` (weight 2^96).
#[cfg(target_arch = "x86_64")]
fn fold_lanes<const L: usize>(acc: [[u64; L]; 6]) -> u128 {
    let [w0, h0, w1, h1, wq, cq] = acc;
    let mut total = 0u128;
    for j in 0..L {
        // The low-half sums are below 2^64 (at most 2·2^30 additions of values below 2^32), so
        // they come back exactly from the wrapping sums; the shifts drop bits on purpose.
        let s0 = u128::from(w0[j].wrapping_sub(h0[j] << 32)) + (u128::from(h0[j]) << 32);
        let s1 = u128::from(w1[j].wrapping_sub(h1[j] << 32)) + (u128::from(h1[j]) << 32);
        let q = wq[j].wrapping_add(cq[j] << 32);
        total = total
            .wrapping_add(s0)
            .wrapping_add(s1 << 32)
            .wrapping_add(u128::from(q) << 64);
    }
    total
}

#[cfg(target_arch = "x86_64")]
mod x86_512 {
    use std::arch::x86_64::*;

    /// The accumulators of one 128-bit vector (see [`super::fold_lanes`]).
    #[derive(Clone, Copy)]
    struct Acc([__m512i; 6]);

    /// Eight words as two vectors whose low 32-bit halves are the words' low and high halves
    /// (`vpmuludq` reads only the low halves of its lanes).
    #[derive(Clone, Copy)]
    struct Split {
        lo: __m512i,
        hi: __m512i,
    }

    impl Split {
        /// Loads eight words and splits them. (A masked load at byte offset 4 could fetch the
        /// high halves without the shift, but measured slower: every such load splits a cache
        /// line.)
        #[inline]
        #[target_feature(enable = "avx512f")]
        fn load(c: &[u64; 8]) -> Self {
            // SAFETY: `[u64; 8]` and `__m512i` have the same size, and every bit pattern is valid
            // for both. (A plain copy: `_mm512_loadu_si512` is a `copy_nonoverlapping` into a
            // temporary, which spills the vector when debug assertions check its precondition.)
            let lo = unsafe { std::mem::transmute::<[u64; 8], __m512i>(*c) };
            let hi = _mm512_srli_epi64::<32>(lo);
            Split { lo, hi }
        }
    }

    impl Acc {
        #[inline]
        #[target_feature(enable = "avx512f")]
        fn new() -> Self {
            Acc([_mm512_setzero_si512(); 6])
        }

        /// Adds `a·(hi·2^64 + lo)` lane by lane: seven 32×32-bit products, three shifts, ten adds.
        #[inline]
        #[target_feature(enable = "avx512f")]
        fn step(&mut self, a: Split, lo: Split, hi: Split) {
            let [w0, h0, w1, h1, wq, cq] = &mut self.0;
            let p00 = _mm512_mul_epu32(a.lo, lo.lo);
            let p01 = _mm512_mul_epu32(a.lo, lo.hi);
            let p10 = _mm512_mul_epu32(a.hi, lo.lo);
            let p11 = _mm512_mul_epu32(a.hi, lo.hi);
            let q0 = _mm512_mul_epu32(a.lo, hi.lo);
            let x1 = _mm512_mul_epu32(a.lo, hi.hi);
            let x2 = _mm512_mul_epu32(a.hi, hi.lo);
            *w0 = _mm512_add_epi64(*w0, p00);
            *h0 = _mm512_add_epi64(*h0, _mm512_srli_epi64::<32>(p00));
            *w1 = _mm512_add_epi64(*w1, _mm512_add_epi64(p01, p10));
            *h1 = _mm512_add_epi64(
                *h1,
                _mm512_add_epi64(_mm512_srli_epi64::<32>(p01), _mm512_srli_epi64::<32>(p10)),
            );
            *wq = _mm512_add_epi64(*wq, _mm512_add_epi64(p11, q0));
            *cq = _mm512_add_epi64(*cq, _mm512_add_epi64(x1, x2));
        }

        #[target_feature(enable = "avx512f")]
        fn finish(self) -> u128 {
            let mut out = [[0u64; 8]; 6];
            for (o, v) in out.iter_mut().zip(self.0) {
                // SAFETY: `o` is 64 writable bytes; unaligned store.
                unsafe { _mm512_storeu_si512(o.as_mut_ptr().cast(), v) };
            }
            super::fold_lanes(out)
        }
    }

    /// Elements per loop step of [`dot`]: eight in the vector unit and four more through the
    /// scalar multiplier, which the vector kernel leaves idle. The kernel is bound by the two
    /// vector ports (23 operations per eight elements); the scalar form of an element costs about
    /// one operation there, so the two run side by side. (Four measured fastest of 2, 4, 5, 6 and
    /// 8 on an AVX-512 Xeon: about 0.36 ns against 0.42 ns per element with none.)
    const STEP: usize = 8 + 4;
    /// Elements per loop step of [`dot_pair`]: eight in the vector unit, two scalar (each of them
    /// two products; two measured fastest of 1, 2 and 3).
    const PAIR_STEP: usize = 8 + 2;

    /// Splits a loop step into its vector part and its scalar part.
    #[inline]
    fn split<const N: usize>(c: &[u64; N]) -> (&[u64; 8], &[u64]) {
        c.split_first_chunk::<8>()
            .expect("a step holds more than 8 elements")
    }

    /// `Σ a_i·v_i mod 2^128` for equal-length slices of at most `BLOCK` elements.
    ///
    /// # Safety
    /// The CPU must support AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn dot(a: &[u64], lo: &[u64], hi: &[u64]) -> u128 {
        let (ca, ra) = a.as_chunks::<STEP>();
        let ((cl, rl), (ch, rh)) = (lo.as_chunks::<STEP>(), hi.as_chunks::<STEP>());
        let mut sum = super::scalar(ra, rl, rh);
        let mut acc = Acc::new();
        for ((a, lo), hi) in ca.iter().zip(cl).zip(ch) {
            let ((av, a), (lv, lo), (hv, hi)) = (split(a), split(lo), split(hi));
            acc.step(Split::load(av), Split::load(lv), Split::load(hv));
            sum = sum.wrapping_add(super::scalar(a, lo, hi));
        }
        acc.finish().wrapping_add(sum)
    }

    /// The two sums of [`super::dot_u64_u128_pair`] for equal-length slices of at most `BLOCK`
    /// elements.
    ///
    /// # Safety
    /// The CPU must support AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn dot_pair(
        a: &[u64],
        lo1: &[u64],
        hi1: &[u64],
        lo2: &[u64],
        hi2: &[u64],
    ) -> (u128, u128) {
        let (ca, ra) = a.as_chunks::<PAIR_STEP>();
        let ((cl1, rl1), (ch1, rh1)) = (lo1.as_chunks::<PAIR_STEP>(), hi1.as_chunks::<PAIR_STEP>());
        let ((cl2, rl2), (ch2, rh2)) = (lo2.as_chunks::<PAIR_STEP>(), hi2.as_chunks::<PAIR_STEP>());
        let mut sum1 = super::scalar(ra, rl1, rh1);
        let mut sum2 = super::scalar(ra, rl2, rh2);
        let (mut acc1, mut acc2) = (Acc::new(), Acc::new());
        for ((((a, lo1), hi1), lo2), hi2) in ca.iter().zip(cl1).zip(ch1).zip(cl2).zip(ch2) {
            let ((av, a), (lv1, lo1), (hv1, hi1)) = (split(a), split(lo1), split(hi1));
            let ((lv2, lo2), (hv2, hi2)) = (split(lo2), split(hi2));
            let av = Split::load(av);
            acc1.step(av, Split::load(lv1), Split::load(hv1));
            acc2.step(av, Split::load(lv2), Split::load(hv2));
            sum1 = sum1.wrapping_add(super::scalar(a, lo1, hi1));
            sum2 = sum2.wrapping_add(super::scalar(a, lo2, hi2));
        }
        (
            acc1.finish().wrapping_add(sum1),
            acc2.finish().wrapping_add(sum2),
        )
    }
}

#[cfg(target_arch = "x86_64")]
mod x86_256 {
    use std::arch::x86_64::*;

    /// The accumulators of one 128-bit vector (see [`super::fold_lanes`]).
    #[derive(Clone, Copy)]
    struct Acc([__m256i; 6]);

    impl Acc {
        #[inline]
        #[target_feature(enable = "avx2")]
        fn new() -> Self {
            Acc([_mm256_setzero_si256(); 6])
        }

        /// Adds `a·(hi·2^64 + lo)` lane by lane, `a = al + 2^32·ah` (`al`'s high halves are
        /// ignored by the 32-bit products).
        #[inline]
        #[target_feature(enable = "avx2")]
        fn step(&mut self, al: __m256i, ah: __m256i, lo: __m256i, hi: __m256i) {
            let [w0, h0, w1, h1, wq, cq] = &mut self.0;
            let lh = _mm256_srli_epi64::<32>(lo);
            let hh = _mm256_srli_epi64::<32>(hi);
            let p00 = _mm256_mul_epu32(al, lo);
            let p01 = _mm256_mul_epu32(al, lh);
            let p10 = _mm256_mul_epu32(ah, lo);
            let p11 = _mm256_mul_epu32(ah, lh);
            let q0 = _mm256_mul_epu32(al, hi);
            let x1 = _mm256_mul_epu32(al, hh);
            let x2 = _mm256_mul_epu32(ah, hi);
            *w0 = _mm256_add_epi64(*w0, p00);
            *h0 = _mm256_add_epi64(*h0, _mm256_srli_epi64::<32>(p00));
            *w1 = _mm256_add_epi64(*w1, _mm256_add_epi64(p01, p10));
            *h1 = _mm256_add_epi64(
                *h1,
                _mm256_add_epi64(_mm256_srli_epi64::<32>(p01), _mm256_srli_epi64::<32>(p10)),
            );
            *wq = _mm256_add_epi64(*wq, _mm256_add_epi64(p11, q0));
            *cq = _mm256_add_epi64(*cq, _mm256_add_epi64(x1, x2));
        }

        #[target_feature(enable = "avx2")]
        fn finish(self) -> u128 {
            let mut out = [[0u64; 4]; 6];
            for (o, v) in out.iter_mut().zip(self.0) {
                // SAFETY: `o` is 32 writable bytes; unaligned store.
                unsafe { _mm256_storeu_si256(o.as_mut_ptr().cast(), v) };
            }
            super::fold_lanes(out)
        }
    }

    /// Loads four words (a plain copy: `_mm256_loadu_si256` is a `copy_nonoverlapping` into a
    /// temporary, which spills the vector when debug assertions check its precondition).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn load(c: &[u64; 4]) -> __m256i {
        // SAFETY: `[u64; 4]` and `__m256i` have the same size, and every bit pattern is valid
        // for both.
        unsafe { std::mem::transmute::<[u64; 4], __m256i>(*c) }
    }

    /// Elements per loop step of [`dot`]: four in the vector unit and four more through the
    /// scalar multiplier, which run side by side as in the AVX-512F kernel. (Four measured
    /// fastest of 0, 1, 2 and 4 on an AVX-512 Xeon running this kernel: 0.44 against 0.52 ns
    /// per element with none; machines with AVX2 only may prefer another split.)
    const STEP: usize = 4 + 4;
    /// Elements per loop step of [`dot_pair`]: four in the vector unit, two scalar (each of them
    /// two products).
    const PAIR_STEP: usize = 4 + 2;

    /// Splits a loop step into its vector part and its scalar part.
    #[inline]
    fn split<const N: usize>(c: &[u64; N]) -> (&[u64; 4], &[u64]) {
        c.split_first_chunk::<4>()
            .expect("a step holds more than 4 elements")
    }

    /// `Σ a_i·v_i mod 2^128` for equal-length slices of at most `BLOCK` elements.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn dot(a: &[u64], lo: &[u64], hi: &[u64]) -> u128 {
        let (ca, ra) = a.as_chunks::<STEP>();
        let ((cl, rl), (ch, rh)) = (lo.as_chunks::<STEP>(), hi.as_chunks::<STEP>());
        let mut sum = super::scalar(ra, rl, rh);
        let mut acc = Acc::new();
        for ((a, lo), hi) in ca.iter().zip(cl).zip(ch) {
            let ((av, a), (lv, lo), (hv, hi)) = (split(a), split(lo), split(hi));
            let av = load(av);
            acc.step(av, _mm256_srli_epi64::<32>(av), load(lv), load(hv));
            sum = sum.wrapping_add(super::scalar(a, lo, hi));
        }
        acc.finish().wrapping_add(sum)
    }

    /// The two sums of [`super::dot_u64_u128_pair`] for equal-length slices of at most `BLOCK`
    /// elements.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn dot_pair(
        a: &[u64],
        lo1: &[u64],
        hi1: &[u64],
        lo2: &[u64],
        hi2: &[u64],
    ) -> (u128, u128) {
        let (ca, ra) = a.as_chunks::<PAIR_STEP>();
        let ((cl1, rl1), (ch1, rh1)) = (lo1.as_chunks::<PAIR_STEP>(), hi1.as_chunks::<PAIR_STEP>());
        let ((cl2, rl2), (ch2, rh2)) = (lo2.as_chunks::<PAIR_STEP>(), hi2.as_chunks::<PAIR_STEP>());
        let mut sum1 = super::scalar(ra, rl1, rh1);
        let mut sum2 = super::scalar(ra, rl2, rh2);
        let (mut acc1, mut acc2) = (Acc::new(), Acc::new());
        for ((((a, lo1), hi1), lo2), hi2) in ca.iter().zip(cl1).zip(ch1).zip(cl2).zip(ch2) {
            let ((av, a), (lv1, lo1), (hv1, hi1)) = (split(a), split(lo1), split(hi1));
            let ((lv2, lo2), (hv2, hi2)) = (split(lo2), split(hi2));
            let av = load(av);
            let ah = _mm256_srli_epi64::<32>(av);
            acc1.step(av, ah, load(lv1), load(hv1));
            acc2.step(av, ah, load(lv2), load(hv2));
            sum1 = sum1.wrapping_add(super::scalar(a, lo1, hi1));
            sum2 = sum2.wrapping_add(super::scalar(a, lo2, hi2));
        }
        (
            acc1.finish().wrapping_add(sum1),
            acc2.finish().wrapping_add(sum2),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every kernel this machine runs.
    fn isas() -> Vec<Isa> {
        let mut v = vec![Isa::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                v.push(Isa::Avx2);
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                v.push(Isa::Avx512);
            }
        }
        v
    }

    /// A xorshift stream for test inputs.
    fn stream(seed: u64) -> impl FnMut() -> u64 {
        let mut s = seed | 1;
        move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        }
    }

    fn random_vecs(len: usize, seed: u64) -> [Vec<u64>; 5] {
        let mut next = stream(seed);
        std::array::from_fn(|_| (0..len).map(|_| next()).collect())
    }

    /// Words at the edges of the 32-bit split, mixed with random ones.
    fn edgy_vecs(len: usize, seed: u64) -> [Vec<u64>; 5] {
        const EDGES: [u64; 8] = [
            0,
            1,
            u32::MAX as u64,
            1 << 32,
            1 << 63,
            u64::MAX,
            u64::MAX - 1,
            0,
        ];
        let mut next = stream(seed);
        std::array::from_fn(|_| {
            (0..len)
                .map(|_| {
                    let r = next();
                    if r & 7 == 7 {
                        next()
                    } else {
                        EDGES[(r >> 3) as usize % 8]
                    }
                })
                .collect()
        })
    }

    /// Every kernel and the public functions against the reference, single and paired, with the
    /// production block and with a small block that folds the lanes many times.
    fn check_all(v: &[Vec<u64>; 5]) {
        let [a, lo1, hi1, lo2, hi2] = v;
        let want1 = dot_u64_u128_scalar(a, lo1, hi1).unwrap();
        let want2 = dot_u64_u128_scalar(a, lo2, hi2).unwrap();
        // The reference itself against the definition, element by element.
        let mut naive = 0u128;
        for i in 0..a.len() {
            let vi = (u128::from(hi1[i]) << 64) + u128::from(lo1[i]);
            naive = naive.wrapping_add(u128::from(a[i]).wrapping_mul(vi));
        }
        assert_eq!(want1, naive);
        let n = a.len();
        assert_eq!(dot_u64_u128(a, lo1, hi1), Some(want1), "len {n}");
        assert_eq!(
            dot_u64_u128_pair(a, lo1, hi1, lo2, hi2),
            Some((want1, want2)),
            "len {n}"
        );
        for isa in isas() {
            for block in [BLOCK, 8, 13, 24] {
                assert_eq!(dot_with(isa, block, a, lo1, hi1), want1, "{isa:?} len {n}");
                assert_eq!(dot_with(isa, block, a, lo2, hi2), want2, "{isa:?} len {n}");
                assert_eq!(
                    dot_pair_with(isa, block, a, [lo1, hi1, lo2, hi2]),
                    (want1, want2),
                    "{isa:?} pair len {n} block {block}"
                );
            }
        }
    }

    #[test]
    fn dot_matches_reference_on_random_inputs() {
        for len in (0..=70).chain([1024, 4096, 100_003]) {
            check_all(&random_vecs(len, 0x5eed ^ len as u64));
        }
    }

    #[test]
    fn dot_matches_reference_on_edge_words() {
        for len in (0..=70).chain([1024, 4096, 100_003]) {
            check_all(&edgy_vecs(len, 0xed9e ^ len as u64));
        }
    }

    #[test]
    fn dot_matches_reference_on_all_ones() {
        for len in (0..=70).chain([1024, 4096, 100_003]) {
            let v: [Vec<u64>; 5] = std::array::from_fn(|_| vec![u64::MAX; len]);
            check_all(&v);
            // (2^64 − 1)·(2^128 − 1) ≡ 1 − 2^64 (mod 2^128), summed len times.
            let one = 1u128.wrapping_sub(1 << 64);
            let want = one.wrapping_mul(len as u128);
            assert_eq!(dot_u64_u128(&v[0], &v[1], &v[2]), Some(want));
        }
    }

    #[test]
    fn dot_pair_equals_two_single_calls() {
        for len in [0, 1, 7, 8, 9, 33, 1024, 1031] {
            let [a, lo1, hi1, lo2, hi2] = random_vecs(len, 77 + len as u64);
            let got = dot_u64_u128_pair(&a, &lo1, &hi1, &lo2, &hi2);
            let want = dot_u64_u128(&a, &lo1, &hi1).zip(dot_u64_u128(&a, &lo2, &hi2));
            assert_eq!(got, want);
            assert!(got.is_some());
        }
    }

    #[test]
    fn dot_length_mismatch_is_none() {
        let [a, lo, hi, lo2, hi2] = random_vecs(16, 3);
        assert_eq!(dot_u64_u128(&a, &lo, &hi[..15]), None);
        assert_eq!(dot_u64_u128(&a, &lo[..15], &hi), None);
        assert_eq!(dot_u64_u128(&a[..15], &lo, &hi), None);
        assert_eq!(dot_u64_u128_scalar(&a, &lo, &hi[..15]), None);
        assert_eq!(dot_u64_u128_scalar(&a[..0], &lo, &hi), None);
        assert_eq!(dot_u64_u128_pair(&a, &lo, &hi, &lo2, &hi2[..15]), None);
        assert_eq!(dot_u64_u128_pair(&a, &lo, &hi, &lo2[..1], &hi2), None);
        assert_eq!(dot_u64_u128_pair(&a, &lo[..8], &hi, &lo2, &hi2), None);
        assert_eq!(dot_u64_u128_pair(&a[..8], &lo, &hi, &lo2, &hi2), None);
        assert_eq!(dot_u64_u128(&[], &[], &[]), Some(0));
        assert_eq!(dot_u64_u128_pair(&[], &[], &[], &[], &[]), Some((0, 0)));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn dot_detect_picks_the_widest_kernel() {
        let want = if std::arch::is_x86_feature_detected!("avx512f") {
            Isa::Avx512
        } else if std::arch::is_x86_feature_detected!("avx2") {
            Isa::Avx2
        } else {
            Isa::Scalar
        };
        assert_eq!(Isa::detect(), want);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn dot_fast_is_exact(len in 0usize..=300, seed in any::<u64>(), edgy in any::<bool>()) {
            let v = if edgy { edgy_vecs(len, seed) } else { random_vecs(len, seed) };
            let [a, lo1, hi1, lo2, hi2] = &v;
            let want1 = dot_u64_u128_scalar(a, lo1, hi1).unwrap();
            let want2 = dot_u64_u128_scalar(a, lo2, hi2).unwrap();
            prop_assert_eq!(dot_u64_u128(a, lo1, hi1), Some(want1));
            prop_assert_eq!(dot_u64_u128_pair(a, lo1, hi1, lo2, hi2), Some((want1, want2)));
            for isa in isas() {
                prop_assert_eq!(dot_with(isa, BLOCK, a, lo1, hi1), want1);
                prop_assert_eq!(dot_pair_with(isa, 16, a, [lo1, hi1, lo2, hi2]), (want1, want2));
            }
        }
    }
}
