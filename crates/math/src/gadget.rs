//! Gadget decompositions.
//!
//! * [`SignedDecomposer`]: balanced base-`2^β` digits of torus words (`Z_{2^32}` or `Z_{2^64}`),
//!   rounded to the top `ℓ·β` bits, as TFHE's external product needs. Digits lie in
//!   `[-2^(β-1), 2^(β-1))` and are computed without secret-dependent branches;
//!   [`SignedDecomposer::decompose_zero_mean_into`] gives the zero-mean digits key switching uses.
//! * [`PowerOfTwoRnsDecomposer`]: the power-of-two gadget `g = (1, B, …, B^(ℓ-1))` over an RNS
//!   modulus `Q` (seed 001 §2.3; `ℓ = ⌈log_B Q⌉`, balanced digits), which needs the CRT
//!   reconstruction of every coefficient.
//! * [`rns_decompose`]: the RNS gadget of seed 002 §2.4, `h(a) = ([a]_{q_0}, …, [a]_{q_{L-1}})`
//!   with `g_i = (Q/q_i)·[(Q/q_i)^{-1}]_{q_i}`; each digit is lifted to every limb (optionally
//!   centered, which halves its norm).
//!
//! ```
//! use coterie_math::gadget::SignedDecomposer;
//! let d = SignedDecomposer::new(64, 8, 3).unwrap();
//! let x = 0x1234_5678_9abc_def0u64;
//! let digits = d.decompose(x);
//! assert_eq!(d.recompose(&digits), d.closest_representable(x));
//! assert!(digits.iter().all(|&v| (-128..128).contains(&v)));
//! ```

use crate::bigint::BigInt;
use crate::poly::{Poly, Representation};
use crate::{Error, Result};

/// Balanced power-of-two decomposition of torus words of `width` bits (32 or 64).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignedDecomposer {
    width: u32,
    base_log: u32,
    levels: u32,
}

impl SignedDecomposer {
    /// `width ∈ {32, 64}`, base `2^base_log`, `levels` digits, with `base_log·levels ≤ width`.
    pub fn new(width: u32, base_log: u32, levels: u32) -> Result<Self> {
        if width != 32 && width != 64 {
            return Err(Error::InvalidParameter(format!(
                "torus width {width} is not 32 or 64"
            )));
        }
        if base_log == 0 || levels == 0 || base_log * levels > width {
            return Err(Error::InvalidParameter(format!(
                "decomposition base 2^{base_log} with {levels} levels does not fit {width} bits"
            )));
        }
        Ok(SignedDecomposer {
            width,
            base_log,
            levels,
        })
    }

    /// Base log `β`.
    pub fn base_log(&self) -> u32 {
        self.base_log
    }

    /// Number of levels `ℓ`.
    pub fn levels(&self) -> u32 {
        self.levels
    }

    fn mask(&self) -> u64 {
        if self.width == 64 {
            u64::MAX
        } else {
            (1u64 << 32) - 1
        }
    }

    /// `x` rounded to the nearest multiple of `2^(width − ℓβ)` (mod `2^width`).
    #[inline]
    pub fn closest_representable(&self, x: u64) -> u64 {
        let shift = self.width - self.base_log * self.levels;
        if shift == 0 {
            return x & self.mask();
        }
        let rounded = (x & self.mask()).wrapping_add(1u64 << (shift - 1)) >> shift;
        (rounded << shift) & self.mask()
    }

    /// Digits `d_1 … d_ℓ` (index 0 = `d_1`, the most significant, weight `2^(width−β)`), with
    /// `Σ d_j·2^(width − jβ) ≡ closest_representable(x) (mod 2^width)`.
    #[inline]
    pub fn decompose(&self, x: u64) -> Vec<i64> {
        let mut out = vec![0i64; self.levels as usize];
        self.decompose_into(x, &mut out);
        out
    }

    /// [`SignedDecomposer::decompose`] into a caller buffer of `ℓ` digits.
    #[inline]
    pub fn decompose_into(&self, x: u64, out: &mut [i64]) {
        debug_assert_eq!(out.len(), self.levels as usize);
        let shift = self.width - self.base_log * self.levels;
        let mut state = self.closest_representable(x) >> shift;
        let b = self.base_log;
        let digit_mask = (1u64 << b) - 1;
        for j in (0..self.levels as usize).rev() {
            let d = state & digit_mask;
            state >>= b;
            // d ≥ 2^(β-1): use d − 2^β and carry one into the next digit (branch-free).
            let carry = d >> (b - 1);
            out[j] = d as i64 - ((carry << b) as i64);
            state += carry;
        }
    }

    /// `Σ d_j·2^(width − jβ) mod 2^width`.
    pub fn recompose(&self, digits: &[i64]) -> u64 {
        let mut acc = 0u64;
        for (j, &d) in digits.iter().enumerate() {
            let w = self.width - (j as u32 + 1) * self.base_log;
            acc = acc.wrapping_add((d as u64).wrapping_shl(w));
        }
        acc & self.mask()
    }
}

/// Power-of-two gadget over an RNS modulus `Q`: `g = (1, B, …, B^(ℓ−1))`, `B = 2^base_log`,
/// `ℓ = ⌈log_2 Q / base_log⌉`, balanced digits in `[-B/2, B/2)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PowerOfTwoRnsDecomposer {
    base_log: u32,
}

impl PowerOfTwoRnsDecomposer {
    /// Decomposer with base `2^base_log`, `1 ≤ base_log ≤ 62`.
    pub fn new(base_log: u32) -> Result<Self> {
        if !(1..=62).contains(&base_log) {
            return Err(Error::InvalidParameter(format!("gadget base 2^{base_log}")));
        }
        Ok(PowerOfTwoRnsDecomposer { base_log })
    }

    /// Gadget length `ℓ` for a modulus of `q_bits` bits (one extra level absorbs the carry of the
    /// balanced top digit when `q_bits` is a multiple of the base log).
    pub fn levels(&self, q_bits: u32) -> usize {
        q_bits.div_ceil(self.base_log) as usize
    }

    /// Decomposes `a` (coefficient representation) into `ℓ` polynomials with
    /// `Σ_l digit_l · B^l ≡ a (mod Q)`, in coefficient representation. The top digit absorbs the
    /// final carry modulo `Q`, so its coefficients lie in `[-B/2, B/2]` up to the wrap of `Q`.
    pub fn decompose(&self, a: &Poly) -> Result<Vec<Poly>> {
        if a.representation() != Representation::Coefficient {
            return Err(Error::Mismatch(
                "decomposition needs coefficient form".into(),
            ));
        }
        let ctx = a.context();
        let n = ctx.degree();
        let levels = self.levels(ctx.basis().bits());
        let base = 1i64 << self.base_log;
        let half = base / 2;
        let mut digits = vec![vec![0i64; n]; levels];
        let coeffs = a.to_bigints()?;
        for (c, x) in coeffs.into_iter().enumerate() {
            // x ∈ (-Q/2, Q/2]: peel balanced digits from the bottom.
            let mut v = x;
            for (l, digit_row) in digits.iter_mut().enumerate() {
                if l + 1 == levels {
                    // Whatever remains (|v| ≤ Q/B^(ℓ-1)/2 + 1) is the top digit.
                    let top = v
                        .to_i64()
                        .ok_or_else(|| Error::Malformed("top gadget digit out of range".into()))?;
                    digit_row[c] = top;
                    break;
                }
                // Low base_log bits (two's complement, so this is v mod B for negative v too).
                let r = v.to_i64_wrapping() & (base - 1);
                let d = if r >= half { r - base } else { r };
                digit_row[c] = d;
                v -= d;
                v >>= self.base_log;
            }
        }
        digits
            .iter()
            .map(|d| Poly::from_signed(ctx, d))
            .collect::<Result<Vec<_>>>()
    }

    /// The gadget vector `(1, B, …, B^(ℓ−1))` as big integers.
    pub fn gadget_vector(&self, q_bits: u32) -> Vec<BigInt> {
        (0..self.levels(q_bits))
            .map(|l| BigInt::from(1u32) << (self.base_log * l as u32))
            .collect()
    }
}

/// The RNS gadget decomposition `h(a) = ([a]_{q_0}, …, [a]_{q_{L−1}})` of seed 002 §2.4: digit `i`
/// is the residue of `a` modulo `q_i` read as an integer (in `[0, q_i)`, or in `(-q_i/2, q_i/2]`
/// with `centered`) and lifted to every limb. Input and output in coefficient representation.
pub fn rns_decompose(a: &Poly, centered: bool) -> Result<Vec<Poly>> {
    if a.representation() != Representation::Coefficient {
        return Err(Error::Mismatch(
            "decomposition needs coefficient form".into(),
        ));
    }
    let ctx = a.context();
    let n = ctx.degree();
    let mut out = Vec::with_capacity(ctx.limbs());
    for (i, qi) in ctx.moduli().iter().enumerate() {
        let src = a.limb(i);
        let mut digit = Poly::zero(ctx, Representation::Coefficient);
        for (k, qk) in ctx.moduli().iter().enumerate() {
            let dst = digit.limb_mut(k);
            if k == i && !centered {
                dst.copy_from_slice(src);
                continue;
            }
            for (d, &x) in dst.iter_mut().zip(src) {
                *d = if centered {
                    qk.reduce_i64(qi.center(x))
                } else {
                    qk.reduce(x)
                };
            }
        }
        debug_assert_eq!(digit.data().len(), n * ctx.limbs());
        out.push(digit);
    }
    Ok(out)
}

/// The RNS gadget vector `g_i = (Q/q_i)·[(Q/q_i)^{-1}]_{q_i}` (as integers below `Q`), so that
/// `Σ h(a)_i · g_i ≡ a (mod Q)`.
pub fn rns_gadget_vector(basis: &crate::rns::RnsBasis) -> Vec<BigInt> {
    let q = basis.product();
    basis
        .moduli()
        .iter()
        .map(|m| {
            let hat = BigInt::from(q / m.value());
            let hat_mod = crate::rns::bigint_mod_u64(&hat, m.value());
            let inv = m.inv(hat_mod).expect("moduli of a basis are coprime");
            hat * inv
        })
        .collect()
}

impl SignedDecomposer {
    /// Signed decomposition with **zero-mean** digits, the one key switching uses: like
    /// [`SignedDecomposer::decompose_into`] (digits of `closest_representable(x)`, carry on digits
    /// above `B/2`), except that a digit equal to `B/2` becomes `−B/2` (with a carry) only when
    /// the next more significant digit's top bit is set (TFHE-rs's balanced rule). Digits lie in
    /// `[−B/2, B/2]` (for the most significant digit, whose carry is dropped, the tie is broken
    /// by the input's parity) and, for uniform inputs, are symmetric: mean 0, mean square at most
    /// `(B² + 2)/12` (the ties move to the digit that lowers it: 0.88 of it for `B = 4`, 0.7 for
    /// `B = 2`), so the standard key-switching variance formula stays an upper bound.
    ///
    /// Why: with digits in `[−B/2, B/2)` (mean `−1/2`), a key-switching output carries a bias
    /// `½·Σ e_{i,l}` fixed by the key's noise — for one key it adds a `χ²₁`-distributed term
    /// worth `(1/4)/E[d²]` of the key-switching variance on average (1/6 for `B = 4`), which
    /// made the measured `V0` of some AKÖ key sets 20–50% above Eq. (14) (seed 003 T8).
    /// Branch-free.
    ///
    /// ```
    /// use coterie_math::gadget::SignedDecomposer;
    /// let d = SignedDecomposer::new(32, 4, 3).unwrap();
    /// let mut digits = [0i64; 3];
    /// d.decompose_zero_mean_into(0x8123_4567, &mut digits);
    /// assert_eq!(d.recompose(&digits), d.closest_representable(0x8123_4567));
    /// assert!(digits.iter().all(|v| (-8..=8).contains(v)));
    /// ```
    #[inline(always)]
    pub fn decompose_zero_mean_into(&self, x: u64, out: &mut [i64]) {
        debug_assert_eq!(out.len(), self.levels as usize);
        let b = self.base_log;
        let shift = self.width - b * self.levels;
        let mut state = self.closest_representable(x) >> shift;
        let digit_mask = (1u64 << b) - 1;
        // The most significant digit's carry is dropped (mod q), so its tie can go either way:
        // it is decided by the parity of the input's bits (uniform for uniform inputs).
        let top_tie = (u64::from((x & self.mask()).count_ones()) & 1) << (b - 1);
        for (j, o) in out.iter_mut().enumerate().rev() {
            let d = state & digit_mask;
            state >>= b;
            let next = if j == 0 { top_tie } else { state };
            let carry = (((d.wrapping_sub(1) | next) & d) >> (b - 1)) & 1;
            *o = d as i64 - ((carry << b) as i64);
            state += carry;
        }
    }
}

#[cfg(test)]
mod zero_mean_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn zero_mean_decomposition_recomposes(x in any::<u64>(), b in 1u32..=16, l in 1u32..=8, w in prop_oneof![Just(32u32), Just(64)]) {
            prop_assume!(b * l <= w);
            let d = SignedDecomposer::new(w, b, l).unwrap();
            let x = if w == 32 { x & 0xffff_ffff } else { x };
            let mut digits = vec![0i64; l as usize];
            d.decompose_zero_mean_into(x, &mut digits);
            let half = 1i64 << (b - 1);
            prop_assert!(digits.iter().all(|&v| -half <= v && v <= half));
            prop_assert_eq!(d.recompose(&digits), d.closest_representable(x));
            // Without a digit at ±B/2 there is no tie, and the plain digits are the same.
            if digits.iter().all(|&v| v.abs() != half) {
                prop_assert_eq!(&digits, &d.decompose(x));
            }
        }
    }

    /// A xorshift stream (statistics only; not a cryptographic generator).
    pub(super) fn xorshift(s: &mut u64) -> u64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s
    }

    #[test]
    fn zero_mean_decomposition_is_centered() {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        for (w, b, l) in [(32u32, 2u32, 5u32), (32, 3, 3), (64, 7, 2), (32, 1, 8)] {
            let dec = SignedDecomposer::new(w, b, l).unwrap();
            let mut d = vec![0i64; l as usize];
            let (mut sum, mut sq, count) = (0f64, 0f64, 20000);
            for _ in 0..count {
                let x = if w == 32 {
                    xorshift(&mut s) >> 32
                } else {
                    xorshift(&mut s)
                };
                dec.decompose_zero_mean_into(x, &mut d);
                assert_eq!(dec.recompose(&d), dec.closest_representable(x));
                let half = 1i64 << (b - 1);
                assert!(d.iter().all(|v| (-half..=half).contains(v)));
                sum += d.iter().sum::<i64>() as f64;
                sq += d.iter().map(|v| (v * v) as f64).sum::<f64>();
            }
            let n = (count * l as usize) as f64;
            let bb = 2f64.powi(b as i32);
            let ms = sq / n;
            // The plain rule's mean −1/2 gives mean²/E[d²] = 1/6 for B = 4, 1/22 for B = 8.
            let mean = sum / n;
            assert!(
                mean * mean / ms < 0.003,
                "B = 2^{b}, {l} levels: mean {mean}"
            );
            let r = ms / ((bb * bb + 2.0) / 12.0);
            assert!(
                (0.6..1.03).contains(&r),
                "B = 2^{b}: mean square {ms} ({r} of (B²+2)/12)"
            );
        }
    }
}

/// Limb `k` of digit `i` of the RNS gadget decomposition of `a` ([`rns_decompose`]), written to
/// `out` (`N` words) without allocating: the residue of `a` modulo `q_i`, read as an integer
/// (centered in `(-q_i/2, q_i/2]` with `centered`), reduced modulo `q_k`. Gadget products use it
/// to decompose one limb at a time straight into their NTT buffer.
///
/// ```
/// use coterie_math::gadget::{rns_decompose, rns_digit_limb};
/// use coterie_math::poly::{Poly, RingContext};
/// use coterie_math::primes::ntt_primes;
/// let ring = RingContext::new(16, &ntt_primes(30, 16, 3).unwrap()).unwrap();
/// let a = Poly::from_signed(&ring, &[5, -7, 1 << 20]).unwrap();
/// let full = rns_decompose(&a, true).unwrap();
/// let mut out = vec![0u64; 16];
/// rns_digit_limb(&a, 1, 2, true, &mut out).unwrap();
/// assert_eq!(&out[..], full[1].limb(2));
/// ```
pub fn rns_digit_limb(a: &Poly, i: usize, k: usize, centered: bool, out: &mut [u64]) -> Result<()> {
    if a.representation() != Representation::Coefficient {
        return Err(Error::Mismatch(
            "decomposition needs coefficient form".into(),
        ));
    }
    let ctx = a.context();
    if i >= ctx.limbs() || k >= ctx.limbs() || out.len() != ctx.degree() {
        return Err(Error::Mismatch(format!(
            "digit {i}, limb {k} of a {}-limb polynomial into {} words",
            ctx.limbs(),
            out.len()
        )));
    }
    let src = a.limb(i);
    if k == i {
        // Either lift is congruent to the limb itself modulo q_i.
        out.copy_from_slice(src);
        return Ok(());
    }
    let (qi, qk) = (&ctx.moduli()[i], &ctx.moduli()[k]);
    let (q_from, q_to) = (qi.value(), qk.value());
    if q_from < 2 * q_to {
        // Every lift is within one `q_k` of `[0, q_k)`: one compare and select per word
        // ([`crate::kernels::lift_residues`]), which vectorizes, instead of a 128-bit Barrett
        // reduction.
        crate::kernels::lift_residues(out, src, q_from, q_to, centered);
        return Ok(());
    }
    for (d, &x) in out.iter_mut().zip(src) {
        *d = if centered {
            qk.reduce_i64(qi.center(x))
        } else {
            qk.reduce(x)
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poly::RingContext;
    use crate::primes::ntt_primes;
    use proptest::prelude::*;

    /// The compare-and-select lift of [`rns_digit_limb`] (moduli within a factor of two) and its
    /// Barrett fallback (wider gaps) against the plain definition, centered and not, for moduli
    /// of 30 to 60 bits in one ring, on the residues where a lift changes (0, 1, the words around
    /// `q_i/2`, `q_i − 2`, `q_i − 1`, and the other moduli `q_k` and `q_k − 1`) and on random ones.
    #[test]
    fn digit_limbs_match_the_plain_lift() {
        let n = 64;
        let mut moduli = Vec::new();
        for bits in [30, 44, 45, 50, 60] {
            moduli.extend(ntt_primes(bits, n, 2).unwrap());
        }
        let ring = RingContext::new(n, &moduli).unwrap();
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut a = Poly::zero(&ring, Representation::Coefficient);
        for (l, &q) in moduli.iter().enumerate() {
            let special = [0, 1, q / 2 - 1, q / 2, q / 2 + 1, q / 2 + 2, q - 2, q - 1];
            let limb = a.limb_mut(l);
            for (j, x) in limb.iter_mut().enumerate() {
                *x = match special.get(j) {
                    Some(&v) => v,
                    None if j < 16 => moduli[j % moduli.len()].min(q - 1) - (j as u64 & 1),
                    None => zero_mean_tests::xorshift(&mut s) % q,
                };
            }
        }
        let mut out = vec![0u64; n];
        for centered in [false, true] {
            for i in 0..moduli.len() {
                for k in 0..moduli.len() {
                    rns_digit_limb(&a, i, k, centered, &mut out).unwrap();
                    let (qi, qk) = (&ring.moduli()[i], &ring.moduli()[k]);
                    for (j, (&x, &got)) in a.limb(i).iter().zip(&out).enumerate() {
                        let want = if k == i {
                            x
                        } else if centered {
                            qk.reduce_i64(qi.center(x))
                        } else {
                            qk.reduce(x)
                        };
                        assert_eq!(
                            got, want,
                            "digit {i} limb {k} word {j} (centered {centered})"
                        );
                    }
                }
            }
        }
    }

    proptest! {
        #[test]
        fn signed_decomposition_recomposes(x in any::<u64>(), b in 1u32..=16, l in 1u32..=8, w in prop_oneof![Just(32u32), Just(64)]) {
            prop_assume!(b * l <= w);
            let d = SignedDecomposer::new(w, b, l).unwrap();
            let x = if w == 32 { x & 0xffff_ffff } else { x };
            let digits = d.decompose(x);
            let half = 1i64 << (b - 1);
            prop_assert!(digits.iter().all(|&v| -half <= v && v < half));
            prop_assert_eq!(d.recompose(&digits), d.closest_representable(x));
            // Rounding error at most half a unit of the last level.
            let shift = w - b * l;
            let err = d.closest_representable(x).wrapping_sub(x) as i64;
            let err = if w == 32 { (err as i32) as i64 } else { err };
            if shift > 0 {
                prop_assert!(err.unsigned_abs() <= 1u64 << (shift - 1));
            } else {
                prop_assert_eq!(err, 0);
            }
        }
    }

    fn ctx() -> std::sync::Arc<RingContext> {
        RingContext::new(16, &ntt_primes(55, 16, 4).unwrap()).unwrap()
    }

    fn random_poly(c: &std::sync::Arc<RingContext>, seed: u64) -> Poly {
        let mut s = seed | 1;
        let mut data = vec![0u64; 16 * c.limbs()];
        for (i, m) in c.moduli().iter().enumerate() {
            for x in &mut data[i * 16..(i + 1) * 16] {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                *x = s % m.value();
            }
        }
        Poly::from_residues(c, Representation::Coefficient, data).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn power_of_two_rns_gadget(seed in any::<u64>(), base_log in prop_oneof![Just(34u32), Just(40), Just(46), Just(55), Just(20)]) {
            let c = ctx();
            let a = random_poly(&c, seed);
            let dec = PowerOfTwoRnsDecomposer::new(base_log).unwrap();
            let digits = dec.decompose(&a).unwrap();
            let g = dec.gadget_vector(c.basis().bits());
            prop_assert_eq!(digits.len(), g.len());
            let mut acc = Poly::zero(&c, Representation::Coefficient);
            for (d, gl) in digits.iter().zip(&g) {
                let mut t = d.clone();
                t.mul_scalar(gl);
                acc += &t;
            }
            prop_assert_eq!(&acc, &a);
            let half = BigInt::from(1u32) << (base_log - 1);
            for d in &digits[..digits.len() - 1] {
                prop_assert!(d.norm_inf().unwrap() <= half);
            }
        }

        #[test]
        fn rns_gadget(seed in any::<u64>(), centered in any::<bool>()) {
            let c = ctx();
            let a = random_poly(&c, seed);
            let digits = rns_decompose(&a, centered).unwrap();
            let g = rns_gadget_vector(c.basis());
            let mut acc = Poly::zero(&c, Representation::Coefficient);
            for (i, (d, gi)) in digits.iter().zip(&g).enumerate() {
                let bound = c.moduli()[i].value();
                let norm = d.norm_inf().unwrap();
                if centered {
                    prop_assert!(BigInt::from(&norm * 2u32) <= bound);
                } else {
                    prop_assert!(norm < bound);
                }
                let mut t = d.clone();
                t.mul_scalar(gi);
                acc += &t;
            }
            prop_assert_eq!(&acc, &a);
        }
    }

    #[test]
    fn parameters_validated() {
        assert!(SignedDecomposer::new(48, 8, 2).is_err());
        assert!(SignedDecomposer::new(32, 8, 5).is_err());
        assert!(SignedDecomposer::new(64, 0, 2).is_err());
        assert!(PowerOfTwoRnsDecomposer::new(0).is_err());
        // seed 001 Table 2: log q = 220 with log B = 46/40/34 gives ℓ = 5/6/7.
        for (b, l) in [(46u32, 5usize), (40, 6), (34, 7)] {
            assert_eq!(PowerOfTwoRnsDecomposer::new(b).unwrap().levels(220), l);
        }
    }
}
