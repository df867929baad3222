//! The rings the engine computes over, behind one trait ([`Ring`]).
//!
//! * [`Z2k`]: SPDZ_2k (Cramer–Damgård–Escudero–Scholl–Xing, CRYPTO 2018). Values live in
//!   `Z_{2^k}`, shares and MAC shares in `Z_{2^{k+s}}`, the MAC key in `Z_{2^s}`. Elements are
//!   `u128`, so `k + s ≤ 128`; [`Z2k::spdz2k_64`] (`k = 64, s = 64`) and [`Z2k::spdz2k_32`]
//!   (`k = 32, s = 64`) are the named sets.
//! * [`Fp64`]: SPDZ over a prime field `F_p` with `p < 2^62`, word arithmetic (Barrett, from
//!   `coterie_math::modulus`). The fast path for 61-bit primes.
//! * [`FpBig`]: SPDZ over `F_p` for any prime up to [`MAX_PRIME_BITS`] bits (GMP through `rug`;
//!   GMP is the fastest big-integer option measured here, see `coterie_math::bigint`).
//!
//! A ring also fixes the fixed-width little-endian wire encoding of its elements; decoding checks
//! the length and the range, so a malformed element is an error, never a wrong value.

use std::fmt::Debug;

use coterie_math::bigint::{self, BigInt};
use coterie_math::modulus::Modulus;
use rand::Rng;
use rug::integer::Order;
use serde::{Deserialize, Serialize};
use zeroize::Zeroize;

use crate::{Error, Result};

/// Largest prime size supported by [`FpBig`], in bits.
pub const MAX_PRIME_BITS: u32 = 4096;

/// A serializable description of a ring, used to refuse material made for another ring.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum RingDescriptor {
    /// `Z_{2^k}` with MAC ring `Z_{2^{k+s}}`.
    Z2k {
        /// Value bits.
        k: u32,
        /// MAC statistical security bits.
        s: u32,
    },
    /// `F_p`, with `p` as little-endian bytes.
    Fp {
        /// The prime, little-endian.
        p: Vec<u8>,
    },
}

/// A ring for authenticated secret sharing. `Elem` is an element of the *share ring* (where shares
/// and MAC shares live: `Z_{2^{k+s}}` or `F_p`).
pub trait Ring: Clone + Debug + Send + Sync + 'static {
    /// An element of the share ring.
    type Elem: Clone + Debug + PartialEq + Default + Send + Sync + Zeroize + 'static;

    /// The descriptor of this ring (stored in preprocessing headers).
    fn descriptor(&self) -> RingDescriptor;
    /// Bytes of the fixed-width encoding of one element.
    fn elem_bytes(&self) -> usize;
    /// Zero.
    fn zero(&self) -> Self::Elem;
    /// The element `x` (reduced).
    fn embed_u64(&self, x: u64) -> Self::Elem;
    /// `a + b`.
    fn add(&self, a: &Self::Elem, b: &Self::Elem) -> Self::Elem;
    /// `a - b`.
    fn sub(&self, a: &Self::Elem, b: &Self::Elem) -> Self::Elem;
    /// `-a`.
    fn neg(&self, a: &Self::Elem) -> Self::Elem;
    /// `a · b`.
    fn mul(&self, a: &Self::Elem, b: &Self::Elem) -> Self::Elem;
    /// A uniform element of the share ring.
    fn random<G: Rng + ?Sized>(&self, rng: &mut G) -> Self::Elem;
    /// A uniform element of the MAC-key domain (`Z_{2^s}` embedded in `Z_{2^{k+s}}`, or `F_p`);
    /// also the domain of the MAC check's random coefficients.
    fn random_key<G: Rng + ?Sized>(&self, rng: &mut G) -> Self::Elem;
    /// Whether `a` is zero in the share ring.
    fn is_zero(&self, a: &Self::Elem) -> bool;
    /// The value-ring representative of a share-ring element (`a mod 2^k`, or `a` in `F_p`).
    fn to_value(&self, a: &Self::Elem) -> Self::Elem;
    /// Appends the fixed-width little-endian encoding of `a`.
    fn write(&self, a: &Self::Elem, out: &mut Vec<u8>);
    /// Decodes exactly [`Ring::elem_bytes`] bytes; out-of-range values are refused.
    fn read(&self, bytes: &[u8]) -> Result<Self::Elem>;
    /// `Some((k, s))` for `Z_{2^k}` rings, `None` for fields.
    fn power_of_two(&self) -> Option<(u32, u32)>;

    /// Encodes a slice with [`Ring::write`].
    fn encode(&self, xs: &[Self::Elem]) -> Vec<u8> {
        let mut out = Vec::with_capacity(xs.len() * self.elem_bytes());
        for x in xs {
            self.write(x, &mut out);
        }
        out
    }
    /// Decodes exactly `count` elements from `bytes` (length checked before anything else).
    fn decode(&self, bytes: &[u8], count: usize) -> Result<Vec<Self::Elem>> {
        let w = self.elem_bytes();
        if Some(bytes.len()) != count.checked_mul(w) {
            return Err(Error::Codec(format!(
                "expected {count} elements of {w} bytes, got {} bytes",
                bytes.len()
            )));
        }
        bytes.chunks_exact(w).map(|c| self.read(c)).collect()
    }
}

/// A prime field `F_p` (`p` odd): exponentiation, inverses and square roots on top of [`Ring`].
pub trait PrimeField: Ring {
    /// `p − 1`.
    fn p_minus_1(&self) -> BigInt;
    /// `a^e` for a public exponent `e ≥ 0` (variable time in `e`).
    fn pow(&self, a: &Self::Elem, e: &BigInt) -> Self::Elem;
    /// `a^{-1}`, or `None` for zero.
    fn inv(&self, a: &Self::Elem) -> Option<Self::Elem> {
        if self.is_zero(a) {
            return None;
        }
        let e = self.p_minus_1() - 1u32;
        Some(self.pow(a, &e))
    }
    /// A square root of `a` (Tonelli–Shanks; variable time, for public values), or `None` if
    /// `a` is not a square.
    fn sqrt(&self, a: &Self::Elem) -> Option<Self::Elem> {
        if self.is_zero(a) {
            return Some(self.zero());
        }
        let one = self.embed_u64(1);
        let minus_one = self.neg(&one);
        let pm1 = self.p_minus_1();
        let half: BigInt = pm1.clone() >> 1u32;
        if self.pow(a, &half) != one {
            return None;
        }
        let s = pm1.find_one(0)?;
        let q: BigInt = pm1.clone() >> s;
        // a quadratic non-residue (half of all elements are; give up after many tries)
        let z = (2u64..10_000)
            .map(|z| self.embed_u64(z))
            .find(|z| self.pow(z, &half) == minus_one)?;
        let mut m = s;
        let mut c = self.pow(&z, &q);
        let mut t = self.pow(a, &q);
        let q1: BigInt = (q + 1u32) >> 1u32;
        let mut r = self.pow(a, &q1);
        while t != one {
            // least i in (0, m) with t^(2^i) = 1
            let mut i = 0u32;
            let mut tt = t.clone();
            while tt != one {
                tt = self.mul(&tt, &tt);
                i += 1;
                if i >= m {
                    return None;
                }
            }
            let mut b = c.clone();
            for _ in 0..(m - i - 1) {
                b = self.mul(&b, &b);
            }
            m = i;
            c = self.mul(&b, &b);
            t = self.mul(&t, &c);
            r = self.mul(&r, &b);
        }
        Some(r)
    }
}

impl PrimeField for Fp64 {
    fn p_minus_1(&self) -> BigInt {
        BigInt::from(self.m.value() - 1)
    }
    fn pow(&self, a: &u64, e: &BigInt) -> u64 {
        // reduce the exponent modulo p − 1 (Fermat) so that it fits a word
        let pm1 = BigInt::from(self.m.value() - 1);
        let e = bigint::reduce(e, &pm1).ok().and_then(|e| e.to_u64());
        match e {
            Some(e) if *a != 0 => self.m.pow(*a, e),
            _ if *a == 0 => 0,
            _ => 1,
        }
    }
}

impl PrimeField for FpBig {
    fn p_minus_1(&self) -> BigInt {
        BigInt::from(&self.p - 1u32)
    }
    fn pow(&self, a: &BigElem, e: &BigInt) -> BigElem {
        match a.0.clone().pow_mod(e, &self.p) {
            Ok(x) => BigElem(x),
            Err(_) => self.zero(),
        }
    }
}

/// `Z_{2^k}` with shares in `Z_{2^{k+s}}` (SPDZ_2k); elements are `u128`, `k + s ≤ 128`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Z2k {
    k: u32,
    s: u32,
    mask: u128,
}

impl Z2k {
    /// `Z_{2^k}` with MAC parameter `s`; needs `1 ≤ k`, `1 ≤ s ≤ 64`, `k + s ≤ 128`.
    ///
    /// Security: a forged opening passes the SPDZ_2k MAC check with probability at most
    /// `2^{-s + log2(s+1)}` (SPDZ_2k, Theorem on Π_MACCheck).
    pub fn new(k: u32, s: u32) -> Result<Self> {
        if k == 0 || s == 0 || s > 64 || k + s > 128 {
            return Err(Error::Invalid(format!(
                "Z2k needs 1 <= k, 1 <= s <= 64, k + s <= 128 (k = {k}, s = {s})"
            )));
        }
        let bits = k + s;
        let mask = if bits == 128 {
            u128::MAX
        } else {
            (1u128 << bits) - 1
        };
        Ok(Self { k, s, mask })
    }
    /// SPDZ_2k over `Z_{2^64}` with `s = 64` (MAC ring `Z_{2^128}`): about 57 bits of statistical
    /// security per check (`s - log2(s+1)`), the setting of seed 000 §11.
    pub fn spdz2k_64() -> Self {
        Self {
            k: 64,
            s: 64,
            mask: u128::MAX,
        }
    }
    /// SPDZ_2k over `Z_{2^32}` with `s = 64` (MAC ring `Z_{2^96}`): about 57 bits of statistical
    /// security per check.
    pub fn spdz2k_32() -> Self {
        Self {
            k: 32,
            s: 64,
            mask: (1u128 << 96) - 1,
        }
    }
    /// Value bits `k`.
    pub fn k(&self) -> u32 {
        self.k
    }
    /// MAC parameter `s`.
    pub fn s(&self) -> u32 {
        self.s
    }
    /// `x mod 2^bits`.
    pub fn low_bits(x: u128, bits: u32) -> u128 {
        if bits >= 128 {
            x
        } else {
            x & ((1u128 << bits) - 1)
        }
    }
}

impl Ring for Z2k {
    type Elem = u128;
    fn descriptor(&self) -> RingDescriptor {
        RingDescriptor::Z2k {
            k: self.k,
            s: self.s,
        }
    }
    fn elem_bytes(&self) -> usize {
        (self.k + self.s).div_ceil(8) as usize
    }
    #[inline]
    fn zero(&self) -> u128 {
        0
    }
    #[inline]
    fn embed_u64(&self, x: u64) -> u128 {
        x as u128 & self.mask
    }
    #[inline]
    fn add(&self, a: &u128, b: &u128) -> u128 {
        a.wrapping_add(*b) & self.mask
    }
    #[inline]
    fn sub(&self, a: &u128, b: &u128) -> u128 {
        a.wrapping_sub(*b) & self.mask
    }
    #[inline]
    fn neg(&self, a: &u128) -> u128 {
        a.wrapping_neg() & self.mask
    }
    #[inline]
    fn mul(&self, a: &u128, b: &u128) -> u128 {
        a.wrapping_mul(*b) & self.mask
    }
    fn random<G: Rng + ?Sized>(&self, rng: &mut G) -> u128 {
        (((rng.next_u64() as u128) << 64) | rng.next_u64() as u128) & self.mask
    }
    fn random_key<G: Rng + ?Sized>(&self, rng: &mut G) -> u128 {
        Z2k::low_bits(rng.next_u64() as u128, self.s)
    }
    #[inline]
    fn is_zero(&self, a: &u128) -> bool {
        a & self.mask == 0
    }
    #[inline]
    fn to_value(&self, a: &u128) -> u128 {
        Z2k::low_bits(*a, self.k)
    }
    fn write(&self, a: &u128, out: &mut Vec<u8>) {
        out.extend_from_slice(&a.to_le_bytes()[..self.elem_bytes()]);
    }
    fn read(&self, bytes: &[u8]) -> Result<u128> {
        let w = self.elem_bytes();
        if bytes.len() != w {
            return Err(Error::Codec(format!(
                "Z2k element of {} bytes",
                bytes.len()
            )));
        }
        let mut b = [0u8; 16];
        b[..w].copy_from_slice(bytes);
        let x = u128::from_le_bytes(b);
        if x & !self.mask != 0 {
            return Err(Error::Codec("Z2k element out of range".into()));
        }
        Ok(x)
    }
    fn power_of_two(&self) -> Option<(u32, u32)> {
        Some((self.k, self.s))
    }
}

/// `F_p` for a prime `p < 2^62` with word arithmetic (the fast path).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fp64 {
    m: Modulus,
}

impl Fp64 {
    /// `F_p`; `p` must be a prime below `2^62`. MAC security per check is about `log2 p - 1`
    /// bits (SPDZ MAC check: forgery probability `2/p`); use at least 61-bit primes.
    pub fn new(p: u64) -> Result<Self> {
        if !coterie_math::primes::is_prime(p) {
            return Err(Error::Invalid(format!("{p} is not prime")));
        }
        let m = Modulus::new(p).map_err(|e| Error::Invalid(e.to_string()))?;
        Ok(Self { m })
    }
    /// The 61-bit Mersenne prime `2^61 - 1`.
    pub fn mersenne61() -> Self {
        // 2^61 - 1 is prime and below 2^62, so construction cannot fail.
        Self {
            m: Modulus::new((1u64 << 61) - 1).unwrap_or_else(|_| unreachable!()),
        }
    }
    /// The prime.
    pub fn p(&self) -> u64 {
        self.m.value()
    }
}

impl Ring for Fp64 {
    type Elem = u64;
    fn descriptor(&self) -> RingDescriptor {
        RingDescriptor::Fp {
            p: self.m.value().to_le_bytes().to_vec(),
        }
    }
    fn elem_bytes(&self) -> usize {
        8
    }
    fn zero(&self) -> u64 {
        0
    }
    fn embed_u64(&self, x: u64) -> u64 {
        self.m.reduce(x)
    }
    #[inline]
    fn add(&self, a: &u64, b: &u64) -> u64 {
        self.m.add(*a, *b)
    }
    #[inline]
    fn sub(&self, a: &u64, b: &u64) -> u64 {
        self.m.sub(*a, *b)
    }
    #[inline]
    fn neg(&self, a: &u64) -> u64 {
        self.m.neg(*a)
    }
    #[inline]
    fn mul(&self, a: &u64, b: &u64) -> u64 {
        self.m.mul(*a, *b)
    }
    fn random<G: Rng + ?Sized>(&self, rng: &mut G) -> u64 {
        let p = self.m.value();
        let bits = 64 - p.leading_zeros();
        let mask = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        loop {
            let x = rng.next_u64() & mask;
            if x < p {
                return x;
            }
        }
    }
    fn random_key<G: Rng + ?Sized>(&self, rng: &mut G) -> u64 {
        self.random(rng)
    }
    fn is_zero(&self, a: &u64) -> bool {
        *a == 0
    }
    fn to_value(&self, a: &u64) -> u64 {
        *a
    }
    fn write(&self, a: &u64, out: &mut Vec<u8>) {
        out.extend_from_slice(&a.to_le_bytes());
    }
    fn read(&self, bytes: &[u8]) -> Result<u64> {
        let b: [u8; 8] = bytes
            .try_into()
            .map_err(|_| Error::Codec(format!("F_p element of {} bytes", bytes.len())))?;
        let x = u64::from_le_bytes(b);
        if x >= self.m.value() {
            return Err(Error::Codec("F_p element out of range".into()));
        }
        Ok(x)
    }
    fn power_of_two(&self) -> Option<(u32, u32)> {
        None
    }
}

/// An element of [`FpBig`]: a GMP integer in `[0, p)`, whose limbs are wiped on drop.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BigElem(pub BigInt);

impl Zeroize for BigElem {
    fn zeroize(&mut self) {
        coterie_math::bigint::wipe(&mut self.0);
    }
}

impl Drop for BigElem {
    fn drop(&mut self) {
        self.zeroize();
    }
}

/// `F_p` for any prime `p` of 2 to [`MAX_PRIME_BITS`] bits, on GMP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FpBig {
    p: BigInt,
    bytes: usize,
}

impl FpBig {
    /// `F_p`; `p` must be a (probable) prime of at most [`MAX_PRIME_BITS`] bits. MAC security
    /// per check is about `log2 p - 1` bits.
    pub fn new(p: BigInt) -> Result<Self> {
        if p.significant_bits() > MAX_PRIME_BITS || !bigint::is_probable_prime(&p) {
            return Err(Error::Invalid(format!(
                "p must be a prime of at most {MAX_PRIME_BITS} bits"
            )));
        }
        let bytes = (p.significant_bits() as usize).div_ceil(8);
        Ok(Self { p, bytes })
    }
    /// The prime.
    pub fn p(&self) -> &BigInt {
        &self.p
    }
    fn reduce(&self, mut x: BigInt) -> BigElem {
        x %= &self.p;
        if x < 0 {
            x += &self.p;
        }
        BigElem(x)
    }
}

impl Ring for FpBig {
    type Elem = BigElem;
    fn descriptor(&self) -> RingDescriptor {
        RingDescriptor::Fp {
            p: self.p.to_digits::<u8>(Order::Lsf),
        }
    }
    fn elem_bytes(&self) -> usize {
        self.bytes
    }
    fn zero(&self) -> BigElem {
        BigElem(BigInt::new())
    }
    fn embed_u64(&self, x: u64) -> BigElem {
        self.reduce(BigInt::from(x))
    }
    fn add(&self, a: &BigElem, b: &BigElem) -> BigElem {
        let mut r = BigInt::from(&a.0 + &b.0);
        if r >= self.p {
            r -= &self.p;
        }
        BigElem(r)
    }
    fn sub(&self, a: &BigElem, b: &BigElem) -> BigElem {
        let mut r = BigInt::from(&a.0 - &b.0);
        if r < 0 {
            r += &self.p;
        }
        BigElem(r)
    }
    fn neg(&self, a: &BigElem) -> BigElem {
        if a.0 == 0 {
            self.zero()
        } else {
            BigElem(BigInt::from(&self.p - &a.0))
        }
    }
    fn mul(&self, a: &BigElem, b: &BigElem) -> BigElem {
        let mut r = BigInt::from(&a.0 * &b.0);
        r %= &self.p;
        BigElem(r)
    }
    fn random<G: Rng + ?Sized>(&self, rng: &mut G) -> BigElem {
        // p >= 2 is checked at construction, so random_below cannot fail.
        BigElem(bigint::random_below(rng, &self.p).unwrap_or_default())
    }
    fn random_key<G: Rng + ?Sized>(&self, rng: &mut G) -> BigElem {
        self.random(rng)
    }
    fn is_zero(&self, a: &BigElem) -> bool {
        a.0 == 0
    }
    fn to_value(&self, a: &BigElem) -> BigElem {
        a.clone()
    }
    fn write(&self, a: &BigElem, out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + self.bytes, 0);
        // a < p, so its digits fit in `bytes`.
        a.0.write_digits(&mut out[start..], Order::Lsf);
    }
    fn read(&self, bytes: &[u8]) -> Result<BigElem> {
        if bytes.len() != self.bytes {
            return Err(Error::Codec(format!(
                "F_p element of {} bytes",
                bytes.len()
            )));
        }
        let x = BigInt::from_digits(bytes, Order::Lsf);
        if x >= self.p {
            return Err(Error::Codec("F_p element out of range".into()));
        }
        Ok(BigElem(x))
    }
    fn power_of_two(&self) -> Option<(u32, u32)> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn z2k_arith_and_codec() {
        let r = Z2k::spdz2k_32();
        let a = (1u128 << 96) - 1;
        assert_eq!(r.add(&a, &1), 0);
        assert_eq!(r.neg(&1), a);
        assert_eq!(r.elem_bytes(), 12);
        let mut v = Vec::new();
        r.write(&a, &mut v);
        assert_eq!(r.read(&v).unwrap(), a);
        assert!(r.read(&[0u8; 11]).is_err());
        let r64 = Z2k::spdz2k_64();
        assert_eq!(r64.mul(&u128::MAX, &u128::MAX), 1);
        assert_eq!(r64.to_value(&u128::MAX), u64::MAX as u128);
        assert!(Z2k::new(64, 65).is_err());
        assert!(Z2k::new(100, 64).is_err());
        let r100 = Z2k::new(60, 40).unwrap();
        let mut b = vec![0u8; 13];
        b[12] = 0x10; // bit 100 set
        assert!(r100.read(&b).is_err());
    }

    #[test]
    fn fp_rings_agree() {
        let p = (1u64 << 61) - 1;
        let f = Fp64::new(p).unwrap();
        let g = FpBig::new(BigInt::from(p)).unwrap();
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
        for _ in 0..200 {
            let a = f.random(&mut rng);
            let b = f.random(&mut rng);
            let (ga, gb) = (BigElem(BigInt::from(a)), BigElem(BigInt::from(b)));
            assert_eq!(BigInt::from(f.mul(&a, &b)), g.mul(&ga, &gb).0);
            assert_eq!(BigInt::from(f.sub(&a, &b)), g.sub(&ga, &gb).0);
            assert_eq!(BigInt::from(f.add(&a, &b)), g.add(&ga, &gb).0);
            let mut v = Vec::new();
            g.write(&ga, &mut v);
            assert_eq!(g.read(&v).unwrap(), ga);
        }
        assert!(f.read(&p.to_le_bytes()).is_err());
        assert!(Fp64::new(p - 2).is_err());
        let mut pb = Vec::new();
        g.write(&BigElem(BigInt::from(p - 1)), &mut pb);
        pb[0] = 0xff; // p itself is 2^61-1 = ff..ff 1f
        assert!(g.read(&pb).is_err());
    }

    proptest::proptest! {
        /// Z_2^k ring operations against a GMP reference modulo 2^(k+s).
        #[test]
        fn z2k_matches_bigint_reference(a: u128, b: u128, k in 1u32..=64, s in 1u32..=64) {
            let r = Z2k::new(k, s).unwrap();
            let m: BigInt = BigInt::from(1) << (k + s);
            let (a, b) = (Z2k::low_bits(a, k + s), Z2k::low_bits(b, k + s));
            let (ba, bb) = (BigInt::from(a), BigInt::from(b));
            let red = |x: BigInt| -> u128 { bigint::reduce(&x, &m).unwrap().to_u128().unwrap() };
            proptest::prop_assert_eq!(r.add(&a, &b), red(ba.clone() + &bb));
            proptest::prop_assert_eq!(r.sub(&a, &b), red(ba.clone() - &bb));
            proptest::prop_assert_eq!(r.mul(&a, &b), red(ba.clone() * &bb));
            proptest::prop_assert_eq!(r.neg(&a), red(-ba));
            proptest::prop_assert_eq!(r.to_value(&a), Z2k::low_bits(a, k));
            let mut v = Vec::new();
            r.write(&a, &mut v);
            proptest::prop_assert_eq!(r.read(&v).unwrap(), a);
        }

        /// F_p (word and GMP) against a GMP reference for a 61-bit and a 255-bit prime.
        #[test]
        fn fp_matches_bigint_reference(a: u128, b: u128) {
            let p61 = (1u64 << 61) - 1;
            let f = Fp64::new(p61).unwrap();
            let (x, y) = ((a % p61 as u128) as u64, (b % p61 as u128) as u64);
            let bp = BigInt::from(p61);
            let red = |v: BigInt, m: &BigInt| -> BigInt { bigint::reduce(&v, m).unwrap() };
            proptest::prop_assert_eq!(BigInt::from(f.mul(&x, &y)), red(BigInt::from(x) * y, &bp));
            proptest::prop_assert_eq!(BigInt::from(f.sub(&x, &y)), red(BigInt::from(x) - y, &bp));
            let p255: BigInt = (BigInt::from(1) << 255u32) - 19u32;
            let g = FpBig::new(p255.clone()).unwrap();
            let xa = BigElem(red(BigInt::from(a) * BigInt::from(b), &p255));
            let ya = BigElem(red(BigInt::from(b) << 100u32, &p255));
            proptest::prop_assert_eq!(g.mul(&xa, &ya), BigElem(red(xa.0.clone() * &ya.0, &p255)));
            proptest::prop_assert_eq!(g.sub(&xa, &ya), BigElem(red(xa.0.clone() - &ya.0, &p255)));
            proptest::prop_assert_eq!(g.add(&xa, &ya), BigElem(red(xa.0.clone() + &ya.0, &p255)));
            proptest::prop_assert_eq!(g.neg(&xa), BigElem(red(-xa.0.clone(), &p255)));
        }
    }

    #[test]
    fn field_inverse_and_sqrt() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(9);
        // 2^61 − 1 ≡ 3 (mod 4); the 128-bit prime below ≡ 1 (mod 8) exercises Tonelli–Shanks
        let f = Fp64::mersenne61();
        let mut p: BigInt = (BigInt::from(1) << 127u32) + 1u32;
        while !(bigint::is_probable_prime(&p) && p.mod_u(8) == 1) {
            p += 8u32;
        }
        let g = FpBig::new(p).unwrap();
        for _ in 0..50 {
            let a = f.random(&mut rng);
            let sq = f.mul(&a, &a);
            let r = f.sqrt(&sq).unwrap();
            assert!(r == a || r == f.neg(&a));
            assert_eq!(f.mul(&a, &f.inv(&a).unwrap()), 1);
            let b = g.random(&mut rng);
            let sq = g.mul(&b, &b);
            let r = g.sqrt(&sq).unwrap();
            assert!(r == b || r == g.neg(&b));
            assert_eq!(g.mul(&b, &g.inv(&b).unwrap()).0, 1);
        }
        // −1 is not a square modulo a prime ≡ 3 (mod 4)
        assert!(f.sqrt(&f.neg(&1)).is_none());
        assert!(f.inv(&0).is_none());
    }

    #[test]
    fn big_elem_zeroize_keeps_value_valid() {
        let mut x = BigElem(BigInt::from(u128::MAX) * 12345);
        x.zeroize();
        assert_eq!(x.0, 0);
        x.0 += 5;
        assert_eq!(x.0, 5);
    }
}
