//! The field `F_(2^40) = F_2[x] / (x^40 + x^5 + x^4 + x^3 + 1)` of the PIR syndrome code.
//!
//! An element is a polynomial of degree < 40 over `F_2`, stored in the low 40 bits of a `u64`
//! (bit `k` = coefficient of `x^k`). Addition (and subtraction) is XOR; multiplication is a
//! carry-less product (4-bit window, no `unsafe` and no CPU-specific instructions) followed by a
//! reduction that folds the high half twice with `x^40 ≡ x^5 + x^4 + x^3 + 1`.
//!
//! The modulus is the pentanomial `x^40 + x^5 + x^4 + x^3 + 1` (there is no irreducible
//! trinomial of degree 40: Swan's theorem rules out degrees divisible by 8). The unit tests prove
//! that it is irreducible (`x^(2^40) ≡ x`, and `gcd(x^(2^(40/p)) − x, f) = 1` for `p ∈ {2, 5}`)
//! and that `x` is primitive (`x^((2^40 − 1)/p) ≠ 1` for every prime `p` of
//! `2^40 − 1 = 3 · 5^2 · 11 · 17 · 31 · 41 · 61681`), so [`Gf40::ALPHA`]` = x` generates the
//! multiplicative group and `α^0, …, α^(2^40 − 2)` are distinct.
//!
//! For many products by one fixed element (the syndrome kernels), [`ConstMul`] holds the ten
//! 4-bit-window tables of that element, already reduced: a product is then 10 lookups and XORs.

use std::fmt;
use std::ops::{Add, AddAssign, Mul, MulAssign, Sub, SubAssign};

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The modulus `f = x^40 + x^5 + x^4 + x^3 + 1`, bit `k` = coefficient of `x^k`.
pub const MODULUS: u64 = (1 << 40) | 0b11_1001;

/// Mask of the 40 coefficient bits.
const MASK: u64 = (1 << 40) - 1;

/// Order of the multiplicative group, `2^40 − 1`.
pub const GROUP_ORDER: u64 = MASK;

/// An element of `F_(2^40)` (see the module docs). Serialized as its `u64` value, which must be
/// below `2^40`.
///
/// # Example
///
/// ```
/// use coterie_hss::apps::pir::Gf40;
/// let a = Gf40::new(0x12_3456_789a).unwrap();
/// let b = Gf40::new(5).unwrap();
/// assert_eq!(a + a, Gf40::ZERO); // characteristic 2
/// let inv = b.inv().unwrap();
/// assert_eq!(a * b * inv, a);
/// assert_eq!(Gf40::ALPHA.pow((1 << 40) - 1), Gf40::ONE); // the group order
/// assert!(Gf40::new(1 << 40).is_err()); // 41 bits: not a field element
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "u64", into = "u64")]
pub struct Gf40(u64);

impl Gf40 {
    /// Zero.
    pub const ZERO: Self = Self(0);
    /// One.
    pub const ONE: Self = Self(1);
    /// `α = x`, a primitive element (generator of the multiplicative group).
    pub const ALPHA: Self = Self(2);
    /// Number of bits of an element.
    pub const BITS: u32 = 40;

    /// The element with bit pattern `v`; `InvalidParameter` unless `v < 2^40`.
    pub fn new(v: u64) -> Result<Self> {
        if v > MASK {
            return Err(Error::InvalidParameter(format!(
                "{v} is not an element of F_(2^40) (it must be below 2^40)"
            )));
        }
        Ok(Self(v))
    }

    /// The element made of the low 40 bits of `v` (the rest is dropped).
    pub const fn from_low_bits(v: u64) -> Self {
        Self(v & MASK)
    }

    /// The bit pattern, below `2^40`.
    pub const fn value(self) -> u64 {
        self.0
    }

    /// Whether this is zero.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// A uniformly random element.
    pub fn random<R: Rng + ?Sized>(rng: &mut R) -> Self {
        Self(rng.next_u64() & MASK)
    }

    /// `self · x` (multiplication by [`Gf40::ALPHA`]): a shift and at most one reduction.
    #[inline]
    pub const fn mul_alpha(self) -> Self {
        let s = self.0 << 1;
        Self(if s >> 40 != 0 { s ^ MODULUS } else { s })
    }

    /// `self^e` (square and multiply; `0^0 = 1`).
    pub fn pow(self, mut e: u64) -> Self {
        let mut base = self;
        let mut acc = Self::ONE;
        while e != 0 {
            if e & 1 == 1 {
                acc *= base;
            }
            base *= base;
            e >>= 1;
        }
        acc
    }

    /// The inverse `self^(2^40 − 2)`, `None` for zero.
    pub fn inv(self) -> Option<Self> {
        (!self.is_zero()).then(|| self.pow(GROUP_ORDER - 1))
    }

    /// `α^e` for any `e` (reduced mod `2^40 − 1`); the PIR code's locator of position `e`.
    pub fn alpha_pow(e: u64) -> Self {
        Self::ALPHA.pow(e % GROUP_ORDER)
    }
}

/// The 4-bit window table of `a`: `a · u` (carry-less, below `2^43`) for `u < 16`.
#[inline]
fn window(a: u64) -> [u64; 16] {
    let mut t = [0u64; 16];
    for k in 1..16 {
        t[k] = (t[k >> 1] << 1) ^ if k & 1 == 1 { a } else { 0 };
    }
    t
}

/// Carry-less product of `a` (given by its [`window`] table) and `b < 2^40`, below `2^79`.
#[inline]
fn clmul_window(t: &[u64; 16], b: u64) -> u128 {
    let mut r: u128 = 0;
    for i in 0..10 {
        r ^= u128::from(t[((b >> (4 * i)) & 15) as usize]) << (4 * i);
    }
    r
}

/// Carry-less product of two elements (both below `2^40`), below `2^79`.
#[inline]
fn clmul(a: u64, b: u64) -> u128 {
    clmul_window(&window(a), b)
}

/// Multiplication by an element through its 16-entry window table: cheaper to build than a
/// [`ConstMul`], for a few products by the same element.
#[derive(Clone, Copy)]
pub(crate) struct WindowMul([u64; 16]);

impl WindowMul {
    /// The table of `a`.
    #[inline]
    pub(crate) fn new(a: Gf40) -> Self {
        Self(window(a.0))
    }
    /// `a · b`.
    #[inline]
    pub(crate) fn mul(&self, b: Gf40) -> Gf40 {
        Gf40(reduce(clmul_window(&self.0, b.0)))
    }
}

/// Reduces a product below `2^79` modulo [`MODULUS`].
#[inline]
fn reduce(p: u128) -> u64 {
    let lo = (p as u64) & MASK;
    let hi = (p >> 40) as u64; // < 2^39
    let r = lo ^ hi ^ (hi << 3) ^ (hi << 4) ^ (hi << 5); // < 2^44
    let hi2 = r >> 40; // < 2^4
    (r & MASK) ^ hi2 ^ (hi2 << 3) ^ (hi2 << 4) ^ (hi2 << 5)
}

impl Add for Gf40 {
    type Output = Self;
    #[inline]
    #[allow(clippy::suspicious_arithmetic_impl)] // addition in characteristic 2 is XOR
    fn add(self, o: Self) -> Self {
        Self(self.0 ^ o.0)
    }
}

impl AddAssign for Gf40 {
    #[inline]
    #[allow(clippy::suspicious_op_assign_impl)] // addition in characteristic 2 is XOR
    fn add_assign(&mut self, o: Self) {
        self.0 ^= o.0;
    }
}

impl Sub for Gf40 {
    type Output = Self;
    #[inline]
    #[allow(clippy::suspicious_arithmetic_impl)] // subtraction = addition = XOR
    fn sub(self, o: Self) -> Self {
        Self(self.0 ^ o.0)
    }
}

impl SubAssign for Gf40 {
    #[inline]
    #[allow(clippy::suspicious_op_assign_impl)] // subtraction = addition = XOR
    fn sub_assign(&mut self, o: Self) {
        self.0 ^= o.0;
    }
}

impl Mul for Gf40 {
    type Output = Self;
    #[inline]
    fn mul(self, o: Self) -> Self {
        Self(reduce(clmul(self.0, o.0)))
    }
}

impl MulAssign for Gf40 {
    #[inline]
    fn mul_assign(&mut self, o: Self) {
        *self = *self * o;
    }
}

impl std::iter::Sum for Gf40 {
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Self::ZERO, |a, b| a + b)
    }
}

impl TryFrom<u64> for Gf40 {
    type Error = Error;
    fn try_from(v: u64) -> Result<Self> {
        Self::new(v)
    }
}

impl From<Gf40> for u64 {
    fn from(v: Gf40) -> u64 {
        v.0
    }
}

impl fmt::Debug for Gf40 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Gf40({:#012x})", self.0)
    }
}

impl fmt::Display for Gf40 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#012x}", self.0)
    }
}

/// Multiplication by one fixed element `c`: ten reduced 4-bit-window tables
/// `T_k[u] = c · u · x^(4k) mod f` (1280 bytes), so `c · a` is ten lookups and XORs.
///
/// # Example
///
/// ```
/// use coterie_hss::apps::pir::{ConstMul, Gf40};
/// let c = Gf40::new(0xab_cdef_0123).unwrap();
/// let m = ConstMul::new(c);
/// let a = Gf40::new(987_654_321).unwrap();
/// assert_eq!(m.mul(a), c * a);
/// ```
#[derive(Clone)]
pub struct ConstMul {
    tables: [[u64; 16]; 10],
}

impl ConstMul {
    /// The tables of `c`.
    pub fn new(c: Gf40) -> Self {
        let mut tables = [[0u64; 16]; 10];
        // base = c · x^(4k)
        let mut base = c;
        for table in &mut tables {
            let b1 = base;
            let b2 = b1.mul_alpha();
            let b4 = b2.mul_alpha();
            let b8 = b4.mul_alpha();
            for (u, slot) in table.iter_mut().enumerate() {
                let mut v = 0;
                for (bit, bv) in [b1, b2, b4, b8].into_iter().enumerate() {
                    if (u >> bit) & 1 == 1 {
                        v ^= bv.0;
                    }
                }
                *slot = v;
            }
            base = b8.mul_alpha();
        }
        Self { tables }
    }

    /// `c · a`.
    #[inline]
    pub fn mul(&self, a: Gf40) -> Gf40 {
        let mut r = 0;
        for (i, t) in self.tables.iter().enumerate() {
            r ^= t[((a.0 >> (4 * i)) & 15) as usize];
        }
        Gf40(r)
    }
}

impl fmt::Debug for ConstMul {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ConstMul({:?})", Gf40(self.tables[0][1]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn rng(seed: u64) -> rand_chacha::ChaCha20Rng {
        rand_chacha::ChaCha20Rng::seed_from_u64(seed) // insecure fixed seed (tests)
    }

    /// Schoolbook reference: shift-and-add with a reduction after every shift.
    fn naive_mul(mut a: u64, mut b: u64) -> u64 {
        let mut r = 0;
        while b != 0 {
            if b & 1 == 1 {
                r ^= a;
            }
            b >>= 1;
            a <<= 1;
            if a >> 40 & 1 == 1 {
                a ^= MODULUS;
            }
        }
        r
    }

    /// Polynomial remainder over `F_2` (arbitrary `u128` polynomials).
    fn poly_rem(mut a: u128, b: u128) -> u128 {
        let db = 127 - b.leading_zeros();
        while a != 0 && 127 - a.leading_zeros() >= db {
            a ^= b << (127 - a.leading_zeros() - db);
        }
        a
    }

    fn poly_gcd(mut a: u128, mut b: u128) -> u128 {
        while b != 0 {
            let r = poly_rem(a, b);
            a = b;
            b = r;
        }
        a
    }

    /// `x^(2^k) mod f` by `k` squarings.
    fn frobenius_x(k: u32) -> Gf40 {
        let mut a = Gf40::ALPHA;
        for _ in 0..k {
            a = a * a;
        }
        a
    }

    #[test]
    fn modulus_is_irreducible() {
        // Rabin's test: f of degree 40 is irreducible iff x^(2^40) ≡ x mod f and
        // gcd(x^(2^(40/p)) − x, f) = 1 for the primes p | 40, i.e. p ∈ {2, 5}.
        assert_eq!(frobenius_x(40), Gf40::ALPHA);
        for p in [2u32, 5] {
            let h = (frobenius_x(40 / p) + Gf40::ALPHA).value();
            assert_eq!(poly_gcd(u128::from(MODULUS), u128::from(h)), 1, "p = {p}");
        }
        // The gcd helper does find common factors: gcd(x^40 + 1, x^20 + x) = x + 1.
        assert_eq!(poly_gcd((1 << 40) | 1, (1 << 20) | 2), 0b11);
    }

    #[test]
    fn alpha_is_primitive() {
        let primes = [3u64, 5, 11, 17, 31, 41, 61681];
        let mut prod = 1u64;
        for p in [3u64, 5, 5, 11, 17, 31, 41, 61681] {
            prod *= p;
        }
        assert_eq!(prod, GROUP_ORDER);
        assert_eq!(Gf40::ALPHA.pow(GROUP_ORDER), Gf40::ONE);
        for p in primes {
            assert_ne!(Gf40::ALPHA.pow(GROUP_ORDER / p), Gf40::ONE, "p = {p}");
        }
    }

    #[test]
    fn fast_mul_matches_schoolbook() {
        let mut r = rng(1);
        let edge = [
            0,
            1,
            2,
            MASK,
            MASK - 1,
            1 << 39,
            (1 << 39) | 1,
            0x55_5555_5555,
        ];
        for &a in &edge {
            for &b in &edge {
                assert_eq!((Gf40(a) * Gf40(b)).value(), naive_mul(a, b), "{a:x} {b:x}");
            }
        }
        for _ in 0..20_000 {
            let (a, b) = (Gf40::random(&mut r), Gf40::random(&mut r));
            assert_eq!((a * b).value(), naive_mul(a.0, b.0));
            assert!((a * b).value() <= MASK);
            assert_eq!(ConstMul::new(a).mul(b), a * b);
            assert_eq!(WindowMul::new(a).mul(b), a * b);
        }
        for _ in 0..1000 {
            let a = Gf40::random(&mut r);
            assert_eq!(a.mul_alpha(), a * Gf40::ALPHA);
        }
    }

    #[test]
    fn field_axioms() {
        let mut r = rng(2);
        for _ in 0..5000 {
            let (a, b, c) = (
                Gf40::random(&mut r),
                Gf40::random(&mut r),
                Gf40::random(&mut r),
            );
            assert_eq!(a + b, b + a);
            assert_eq!((a + b) + c, a + (b + c));
            assert_eq!(a * b, b * a);
            assert_eq!((a * b) * c, a * (b * c));
            assert_eq!(a * (b + c), a * b + a * c);
            assert_eq!(a + Gf40::ZERO, a);
            assert_eq!(a * Gf40::ONE, a);
            assert_eq!(a * Gf40::ZERO, Gf40::ZERO);
            assert_eq!(a - b, a + b);
            if !a.is_zero() {
                let inv = a.inv().unwrap();
                assert_eq!(a * inv, Gf40::ONE);
            }
            // Frobenius: (a + b)^2 = a^2 + b^2.
            assert_eq!((a + b).pow(2), a * a + b * b);
        }
        assert_eq!(Gf40::ZERO.inv(), None);
        assert_eq!(Gf40::ONE.inv(), Some(Gf40::ONE));
        assert_eq!(Gf40::ALPHA.pow(0), Gf40::ONE);
        assert_eq!(Gf40::alpha_pow(GROUP_ORDER + 3), Gf40::ALPHA.pow(3));
    }

    #[test]
    fn range_and_serde() {
        assert!(Gf40::new(MASK).is_ok());
        assert!(Gf40::new(MASK + 1).is_err());
        assert!(Gf40::try_from(u64::MAX).is_err());
        assert_eq!(Gf40::from_low_bits(u64::MAX).value(), MASK);
        let v = Gf40::new(0x12_3456_789a).unwrap();
        let bytes = postcard::to_allocvec(&v).unwrap();
        assert_eq!(postcard::from_bytes::<Gf40>(&bytes).unwrap(), v);
        let bad = postcard::to_allocvec(&(1u64 << 40)).unwrap();
        assert!(postcard::from_bytes::<Gf40>(&bad).is_err());
    }
}
