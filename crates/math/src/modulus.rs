//! Word-size modular arithmetic for moduli `2 ≤ q < 2^62`.
//!
//! [`Modulus`] precomputes a 128-bit Barrett constant `floor(2^128 / q)` so that any 128-bit value
//! (in particular a product of two reduced residues) is reduced with four word multiplications and
//! no division. For products by a *fixed* operand `w` (twiddles, CRT constants, key material used
//! many times) [`Modulus::shoup`] precomputes `floor(w · 2^64 / q)` and [`Modulus::mul_shoup`]
//! reduces with two multiplications (Shoup's trick).
//!
//! The bound `q < 2^62` keeps every intermediate below `2^64` in the lazy forms (values in
//! `[0, 4q)` fit in a word), which the RNS code relies on.
//!
//! ```
//! use coterie_math::modulus::Modulus;
//! let q = Modulus::new(0x3fff_ffff_ffe8_0001).unwrap(); // a 62-bit prime
//! let a = q.reduce(u64::MAX);
//! let b = q.mul(a, a);
//! assert_eq!(b as u128, (a as u128 * a as u128) % q.value() as u128);
//! let w = 12345;
//! let ws = q.shoup(w);
//! assert_eq!(q.mul_shoup(a, w, ws), q.mul(a, w));
//! ```

use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// Largest supported modulus bit size.
pub const MAX_MODULUS_BITS: u32 = 62;

/// A word-size modulus with precomputed Barrett constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "u64", into = "u64")]
pub struct Modulus {
    q: u64,
    /// `floor(2^128 / q)`, low word.
    ratio_lo: u64,
    /// `floor(2^128 / q)`, high word.
    ratio_hi: u64,
    /// `k = bits(q)`.
    k: u32,
    /// `floor(2^(2k) / q)` (at most `k + 1` bits), for [`Modulus::mul`].
    mu: u64,
}

impl TryFrom<u64> for Modulus {
    type Error = Error;
    fn try_from(q: u64) -> Result<Self> {
        Modulus::new(q)
    }
}

impl From<Modulus> for u64 {
    fn from(m: Modulus) -> u64 {
        m.q
    }
}

impl Modulus {
    /// Creates the modulus `q`; `2 ≤ q < 2^62`. It need not be prime (only [`Modulus::inv`] and
    /// NTT plans need primality).
    pub fn new(q: u64) -> Result<Self> {
        if !(2..1u64 << MAX_MODULUS_BITS).contains(&q) {
            return Err(Error::InvalidParameter(format!(
                "modulus {q} outside [2, 2^{MAX_MODULUS_BITS})"
            )));
        }
        // floor(2^128 / q) = floor((2^128 - 1) / q) unless q divides 2^128, i.e. q is a power of
        // two, where it is one more.
        let mut ratio = u128::MAX / q as u128;
        if q.is_power_of_two() {
            ratio += 1;
        }
        let k = 64 - q.leading_zeros();
        let mu = ((1u128 << (2 * k)) / q as u128) as u64;
        Ok(Modulus {
            q,
            ratio_lo: ratio as u64,
            ratio_hi: (ratio >> 64) as u64,
            k,
            mu,
        })
    }

    /// The modulus value `q`.
    #[inline(always)]
    pub fn value(&self) -> u64 {
        self.q
    }

    /// Bit size of `q`.
    pub fn bits(&self) -> u32 {
        64 - self.q.leading_zeros()
    }

    /// `a + b mod q` for reduced `a, b`.
    #[inline(always)]
    pub fn add(&self, a: u64, b: u64) -> u64 {
        debug_assert!(a < self.q && b < self.q);
        let s = a + b;
        s.min(s.wrapping_sub(self.q))
    }

    /// `a - b mod q` for reduced `a, b`.
    #[inline(always)]
    pub fn sub(&self, a: u64, b: u64) -> u64 {
        debug_assert!(a < self.q && b < self.q);
        let d = a.wrapping_sub(b);
        d.min(d.wrapping_add(self.q))
    }

    /// `-a mod q` for reduced `a`.
    #[inline(always)]
    pub fn neg(&self, a: u64) -> u64 {
        debug_assert!(a < self.q);
        // (q - a) when a != 0, else 0, without a branch.
        let d = self.q - a;
        d & (((a != 0) as u64).wrapping_neg())
    }

    /// Reduces any 128-bit value modulo `q` (Barrett with the 128-bit constant).
    #[inline(always)]
    pub fn reduce_u128(&self, x: u128) -> u64 {
        let x_lo = x as u64;
        let x_hi = (x >> 64) as u64;
        // Estimate floor(x * ratio / 2^128), ignoring the low word of x_lo * ratio_lo. The estimate
        // is at most 2 below the true quotient, so the remainder lies in [0, 3q) ⊂ [0, 2^64).
        let lo_lo_hi = ((x_lo as u128 * self.ratio_lo as u128) >> 64) as u64;
        let lo_hi = x_lo as u128 * self.ratio_hi as u128;
        let hi_lo = x_hi as u128 * self.ratio_lo as u128;
        let mid = lo_lo_hi as u128 + (lo_hi as u64) as u128 + (hi_lo as u64) as u128;
        let quot = x_hi
            .wrapping_mul(self.ratio_hi)
            .wrapping_add((lo_hi >> 64) as u64)
            .wrapping_add((hi_lo >> 64) as u64)
            .wrapping_add((mid >> 64) as u64);
        let r = x_lo.wrapping_sub(quot.wrapping_mul(self.q));
        let r = r.min(r.wrapping_sub(self.q));
        r.min(r.wrapping_sub(self.q))
    }

    /// Reduces a word modulo `q`.
    #[inline(always)]
    pub fn reduce(&self, x: u64) -> u64 {
        self.reduce_u128(x as u128)
    }

    /// Reduces a signed value modulo `q` into `[0, q)`.
    #[inline(always)]
    pub fn reduce_i64(&self, x: i64) -> u64 {
        let r = self.reduce(x.unsigned_abs());
        if x < 0 { self.neg(r) } else { r }
    }

    /// Reduces a signed 128-bit value modulo `q` into `[0, q)`.
    #[inline(always)]
    pub fn reduce_i128(&self, x: i128) -> u64 {
        let r = self.reduce_u128(x.unsigned_abs());
        if x < 0 { self.neg(r) } else { r }
    }

    /// `a · b mod q` for reduced `a, b < q` (three word multiplications: Barrett with the
    /// `k`-bit shift, `k = bits(q)`). Use [`Modulus::mul_any`] for unreduced operands.
    #[inline(always)]
    pub fn mul(&self, a: u64, b: u64) -> u64 {
        debug_assert!(a < self.q && b < self.q);
        let x = a as u128 * b as u128;
        // x < q^2 < 2^(2k); c < 2^(k+1); the estimate is at most 2 below floor(x/q), so the
        // remainder is below 3q < 2^64.
        let c = (x >> (self.k - 1)) as u64;
        let est = ((c as u128 * self.mu as u128) >> (self.k + 1)) as u64;
        let r = (x as u64).wrapping_sub(est.wrapping_mul(self.q));
        let r = r.min(r.wrapping_sub(self.q));
        r.min(r.wrapping_sub(self.q))
    }

    /// `a · b mod q` for any words `a, b`.
    #[inline(always)]
    pub fn mul_any(&self, a: u64, b: u64) -> u64 {
        self.reduce_u128(a as u128 * b as u128)
    }

    /// Shoup precomputation for a fixed multiplicand `w < q`: `floor(w · 2^64 / q)`.
    #[inline(always)]
    pub fn shoup(&self, w: u64) -> u64 {
        debug_assert!(w < self.q);
        (((w as u128) << 64) / self.q as u128) as u64
    }

    /// `a · w mod q` with `w_shoup = self.shoup(w)`; `a` may be any word.
    #[inline(always)]
    pub fn mul_shoup(&self, a: u64, w: u64, w_shoup: u64) -> u64 {
        let r = self.mul_shoup_lazy(a, w, w_shoup);
        r.min(r.wrapping_sub(self.q))
    }

    /// `a · w mod q` in the lazy range `[0, 2q)`.
    #[inline(always)]
    pub fn mul_shoup_lazy(&self, a: u64, w: u64, w_shoup: u64) -> u64 {
        let quot = ((a as u128 * w_shoup as u128) >> 64) as u64;
        a.wrapping_mul(w).wrapping_sub(quot.wrapping_mul(self.q))
    }

    /// `a^e mod q` by square-and-multiply (variable time in `e`; use for public exponents).
    pub fn pow(&self, a: u64, mut e: u64) -> u64 {
        let mut base = self.reduce(a);
        let mut acc = self.reduce(1);
        // (both reduced from here on)
        while e > 0 {
            if e & 1 == 1 {
                acc = self.mul(acc, base);
            }
            base = self.mul(base, base);
            e >>= 1;
        }
        acc
    }

    /// Inverse of `a` modulo `q` by the extended Euclidean algorithm, or an error when
    /// `gcd(a, q) ≠ 1`.
    pub fn inv(&self, a: u64) -> Result<u64> {
        let (mut r0, mut r1) = (self.q as i128, self.reduce(a) as i128);
        let (mut t0, mut t1) = (0i128, 1i128);
        while r1 != 0 {
            let quot = r0 / r1;
            (r0, r1) = (r1, r0 - quot * r1);
            (t0, t1) = (t1, t0 - quot * t1);
        }
        if r0 != 1 {
            return Err(Error::InvalidParameter(format!(
                "{a} is not invertible modulo {}",
                self.q
            )));
        }
        Ok(self.reduce_i128(t0))
    }

    /// Centered representative of a reduced `a`: the integer in `(-q/2, q/2]` congruent to `a`.
    #[inline(always)]
    pub fn center(&self, a: u64) -> i64 {
        debug_assert!(a < self.q);
        if a > self.q / 2 {
            a as i64 - self.q as i64
        } else {
            a as i64
        }
    }
}

/// `base^exp mod m` for any word-size modulus `m ≥ 1` (not only the primes of [`Modulus`]),
/// by square-and-multiply in 128-bit arithmetic: Galois elements `5^k mod 2N` and the like.
///
/// ```
/// assert_eq!(coterie_math::modulus::pow_mod_u64(5, 3, 16), 125 % 16);
/// assert_eq!(coterie_math::modulus::pow_mod_u64(7, 0, 1), 0);
/// ```
pub fn pow_mod_u64(base: u64, mut exp: u64, m: u64) -> u64 {
    let m = u128::from(m.max(1));
    let mut b = u128::from(base) % m;
    let mut r = 1u128 % m;
    while exp > 0 {
        if exp & 1 == 1 {
            r = r * b % m;
        }
        b = b * b % m;
        exp >>= 1;
    }
    r as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn moduli() -> impl Strategy<Value = u64> {
        prop_oneof![
            2u64..1000,
            (1u64 << 20)..(1u64 << 40),
            ((1u64 << 61) - 100)..(1u64 << 62),
            Just((1u64 << 62) - 1),
            Just(1u64 << 61),
        ]
    }

    proptest! {
        #[test]
        fn reduce_u128_matches_division(q in moduli(), x in any::<u128>()) {
            let m = Modulus::new(q).unwrap();
            prop_assert_eq!(m.reduce_u128(x) as u128, x % q as u128);
        }

        #[test]
        fn arithmetic_matches_reference(q in moduli(), a in any::<u64>(), b in any::<u64>()) {
            let m = Modulus::new(q).unwrap();
            let (a, b) = (a % q, b % q);
            let qq = q as u128;
            prop_assert_eq!(m.add(a, b) as u128, (a as u128 + b as u128) % qq);
            prop_assert_eq!(m.sub(a, b) as u128, (a as u128 + qq - b as u128) % qq);
            prop_assert_eq!(m.neg(a) as u128, (qq - a as u128) % qq);
            prop_assert_eq!(m.mul(a, b) as u128, (a as u128 * b as u128) % qq);
            prop_assert_eq!(m.mul(q - 1, q - 1) as u128, ((q - 1) as u128 * (q - 1) as u128) % qq);
            let bs = m.shoup(b);
            prop_assert_eq!(m.mul_shoup(a, b, bs) as u128, (a as u128 * b as u128) % qq);
            prop_assert!(m.mul_shoup_lazy(u64::MAX, b, bs) < 2 * q);
            let c = m.center(a);
            prop_assert!(2 * c.unsigned_abs() <= q);
            prop_assert_eq!(m.reduce_i64(c), a);
        }

        #[test]
        fn signed_reduction(q in moduli(), x in any::<i128>()) {
            let m = Modulus::new(q).unwrap();
            prop_assert_eq!(m.reduce_i128(x) as i128, x.rem_euclid(q as i128));
            let y = x as i64;
            prop_assert_eq!(m.reduce_i64(y) as i128, (y as i128).rem_euclid(q as i128));
        }

        #[test]
        fn inverse_and_pow(a in 1u64..u64::MAX) {
            let q = 0x3fff_ffff_ffe8_0001u64; // prime
            let m = Modulus::new(q).unwrap();
            let a = m.reduce(a);
            prop_assume!(a != 0);
            let ai = m.inv(a).unwrap();
            prop_assert_eq!(m.mul(a, ai), 1);
            // Fermat: a^(q-1) = 1.
            prop_assert_eq!(m.pow(a, q - 1), 1);
            prop_assert_eq!(m.pow(a, q - 2), ai);
        }
    }

    proptest! {
        #[test]
        fn mul_any_unreduced(q in moduli(), a in any::<u64>(), b in any::<u64>()) {
            let m = Modulus::new(q).unwrap();
            prop_assert_eq!(m.mul_any(a, b) as u128, (a as u128 * b as u128) % q as u128);
        }
    }

    #[test]
    fn rejects_bad_moduli() {
        assert!(Modulus::new(0).is_err());
        assert!(Modulus::new(1).is_err());
        assert!(Modulus::new(1 << 62).is_err());
        assert!(Modulus::new(12).unwrap().inv(4).is_err());
    }

    #[test]
    fn serde_validates() {
        let m = Modulus::new(65537).unwrap();
        let v: u64 = m.into();
        assert_eq!(Modulus::try_from(v).unwrap(), m);
        assert!(Modulus::try_from(u64::MAX).is_err());
    }
}
