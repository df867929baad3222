//! The discretized torus `T_q = (1/q)Z/Z`, `q = 2^32` or `2^64`, as unsigned machine words.
//!
//! A torus value `x ∈ [-1/2, 1/2)` is stored as `round(x·q) mod q`; additions and products by
//! integers wrap. [`Torus`] is implemented for `u32` and `u64` only (sealed); its word arithmetic
//! (width, wrapping `+ - ·`, zero extension) is [`TorusWord`]'s, the one word trait of the crate
//! that the exact products of [`crate::intpoly`] take, so every torus type feeds them directly.

use crate::fft::f64_to_wrapping_u64;
use crate::intpoly::TorusWord;
use rand_core::CryptoRng;
use serde::Serialize;
use serde::de::DeserializeOwned;
use zeroize::Zeroize;

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

/// A machine word used as a discretized torus element (`u32`: `q = 2^32`, `u64`: `q = 2^64`).
///
/// ```
/// use coterie_math::torus::Torus;
/// let x = u32::encode(0.125);
/// assert_eq!(x, 1 << 29);
/// assert!((x.decode() - 0.125).abs() < 1e-9);
/// assert_eq!(u64::encode(-0.25), 3 << 62);
/// ```
pub trait Torus: sealed::Sealed + TorusWord + Ord + Zeroize + Serialize + DeserializeOwned {
    /// Zero.
    const ZERO: Self;
    /// Truncates a `u64` to this width.
    fn from_u64(x: u64) -> Self;
    /// `-self mod q`.
    fn wrapping_neg(self) -> Self;
    /// `x mod q` for a signed integer.
    #[inline]
    fn from_i64(x: i64) -> Self {
        Self::from_u64(x as u64)
    }
    /// The centered representative in `[-q/2, q/2)`, as `i64`.
    fn to_i64_centered(self) -> i64;
    /// The centered representative as `f64` (exact for `u32`, rounded to 53 bits for `u64`).
    fn to_f64_centered(self) -> f64;
    /// Nearest torus element to the real `x` (taken modulo 1).
    #[inline]
    fn encode(x: f64) -> Self {
        let frac = x - x.floor();
        Self::from_u64(f64_to_wrapping_u64(frac * 2f64.powi(Self::BITS as i32)))
    }
    /// The real representative in `[-1/2, 1/2)`.
    #[inline]
    fn decode(self) -> f64 {
        self.to_f64_centered() / 2f64.powi(Self::BITS as i32)
    }
    /// A uniform element.
    fn random<R: CryptoRng + ?Sized>(rng: &mut R) -> Self;
    /// `round(self · 2N / q) mod 2N` (modulus switch to `Z_{2N}`; `log2_2n ≤ BITS`).
    #[inline]
    fn mod_switch(self, log2_2n: u32) -> usize {
        let sh = Self::BITS - log2_2n;
        let x = self.to_u64();
        let r = if sh == 0 {
            x
        } else {
            (x >> sh).wrapping_add((x >> (sh - 1)) & 1)
        };
        (r & ((1u64 << log2_2n) - 1)) as usize
    }
}

impl Torus for u32 {
    const ZERO: Self = 0;
    #[inline]
    fn from_u64(x: u64) -> Self {
        x as u32
    }
    #[inline]
    fn wrapping_neg(self) -> Self {
        u32::wrapping_neg(self)
    }
    #[inline]
    fn to_i64_centered(self) -> i64 {
        i64::from(self as i32)
    }
    #[inline]
    fn to_f64_centered(self) -> f64 {
        f64::from(self as i32)
    }
    #[inline]
    fn random<R: CryptoRng + ?Sized>(rng: &mut R) -> Self {
        rng.next_u32()
    }
}

impl Torus for u64 {
    const ZERO: Self = 0;
    #[inline]
    fn from_u64(x: u64) -> Self {
        x
    }
    #[inline]
    fn wrapping_neg(self) -> Self {
        u64::wrapping_neg(self)
    }
    #[inline]
    fn to_i64_centered(self) -> i64 {
        self as i64
    }
    #[inline]
    fn to_f64_centered(self) -> f64 {
        (self as i64) as f64
    }
    #[inline]
    fn random<R: CryptoRng + ?Sized>(rng: &mut R) -> Self {
        rng.next_u64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_decode_and_mod_switch() {
        assert_eq!(u32::encode(0.5), 1 << 31);
        assert_eq!(u32::encode(-0.125), (1u32 << 29).wrapping_neg());
        assert!((u64::encode(0.3).decode() - 0.3).abs() < 1e-15);
        // 1/8 on 2N = 1024 is 128; rounding at the half.
        assert_eq!(u32::encode(0.125).mod_switch(10), 128);
        assert_eq!(((1u32 << 21) - 1).mod_switch(10), 0);
        assert_eq!((1u32 << 21).mod_switch(10), 1);
        assert_eq!(u32::MAX.mod_switch(10), 0);
        assert_eq!(u64::MAX.mod_switch(11), 0);
        assert_eq!((3u64 << 62).mod_switch(11), 1536);
    }
}
