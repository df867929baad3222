//! The one LWE ciphertext type of coterie: single- and multi-key TFHE (coterie-tfhe) and the
//! threshold decryption by MPC rounding (coterie-threshold) both use [`LweCiphertext`].
//!
//! Convention (as TFHE-rs `core_crypto`): a ciphertext is `(a_0, …, a_{n−1}, b)` with the body
//! **last** and `b = Σ a_i·s_i + μ + e`; the phase is `b − ⟨a, s⟩`. The words are elements of a
//! [`Torus`] (`u32` or `u64`) and the ciphertext modulus is `q = 2^k` with `k ≤ T::BITS`
//! ([`LweCiphertext::modulus_log`]; the native `k = T::BITS` for everything TFHE computes, a
//! smaller `k` for threshold ciphertexts over `Z_{2^k}`, whose words are then kept below `2^k`).
//! A ciphertext may also name the plaintext modulus `p = 2^m` of a message in its top `m` bits
//! ([`LweCiphertext::message_log`]; `0` where the encoding is not a power-of-two message space,
//! e.g. TFHE's Boolean `±1/8`).
//!
//! # Binary format (threshold ciphertext files and the decryption service)
//!
//! [`LweCiphertext::to_bytes`] / [`LweCiphertext::from_bytes`] (64-bit words) write one
//! [`coterie_base::envelope`] with tag [`LweCiphertext::TAG`] (`b"LWEc"`), version
//! [`LweCiphertext::VERSION`], and the payload (little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 1 | `k` (`2..=64`) |
//! | 1 | `m` (`1..k`) |
//! | 2 | reserved, 0 |
//! | 4 | `n` (`1..=MAX_LWE_DIMENSION`) |
//! | 8·n | `a_0 .. a_{n-1}` |
//! | 8 | `b` |
//!
//! Every word must be `< 2^k`; the length must be exact. The decoder checks the declared size
//! against the input before allocating.
//!
//! ```
//! use coterie_math::lwe::LweCiphertext;
//! let sk = [1i64, 0, 1, 1];
//! let mut rng = rand::rng();
//! let ct = LweCiphertext::encrypt_with_secret_key(&sk, 3, -100, 16, 2, &mut rng);
//! let back = LweCiphertext::from_bytes(&ct.to_bytes()).unwrap();
//! assert_eq!(back, ct);
//! assert_eq!(back.phase_with_secret_key(&sk), (3u64 << 14) - 100);
//! ```

use rand_core::Rng;
use serde::{Deserialize, Serialize};

use crate::torus::Torus;
use crate::{Error, Result};

/// Largest LWE dimension any decoder accepts (`2^18`: TFHE's `k·N` and the threshold
/// dimensions both fit).
pub const MAX_LWE_DIMENSION: usize = 1 << 18;

/// `2^k − 1` (all ones for `k = 64`).
#[inline]
fn qmask(k: u32) -> u64 {
    if k >= 64 { u64::MAX } else { (1u64 << k) - 1 }
}

/// An LWE ciphertext `(a_0, …, a_{n−1}, b)` over `Z_{2^k}`, `k ≤ T::BITS` (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "", try_from = "LweCiphertextWire<T>")]
pub struct LweCiphertext<T: Torus> {
    data: Vec<T>,
    modulus_log: u32,
    message_log: u32,
}

/// The unchecked serialized form of [`LweCiphertext`] (same fields, validated on the way in).
#[derive(Deserialize)]
#[serde(bound = "")]
struct LweCiphertextWire<T: Torus> {
    data: Vec<T>,
    modulus_log: u32,
    message_log: u32,
}

impl<T: Torus> TryFrom<LweCiphertextWire<T>> for LweCiphertext<T> {
    type Error = Error;
    fn try_from(w: LweCiphertextWire<T>) -> Result<Self> {
        if w.data.len() > MAX_LWE_DIMENSION + 1 {
            return Err(Error::Malformed(format!(
                "LWE ciphertext of {} words",
                w.data.len()
            )));
        }
        Self::from_parts(w.data, w.modulus_log, w.message_log)
    }
}

/// What a ciphertext must look like to be accepted by a decryptor: its dimension, ciphertext
/// modulus `2^k` and plaintext modulus `2^m` ([`LweCiphertext::check`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LweShape {
    /// The dimension `n`.
    pub dimension: usize,
    /// `k`, with `q = 2^k`.
    pub modulus_log: u32,
    /// `m`, with `p = 2^m`.
    pub message_log: u32,
}

impl<T: Torus> LweCiphertext<T> {
    /// The zero (trivial) ciphertext of dimension `n` over the native modulus `2^T::BITS`.
    ///
    /// ```
    /// let c = coterie_math::lwe::LweCiphertext::<u64>::zero(10);
    /// assert_eq!(c.dimension(), 10);
    /// ```
    pub fn zero(n: usize) -> Self {
        Self {
            data: vec![T::ZERO; n + 1],
            modulus_log: T::BITS,
            message_log: 0,
        }
    }

    /// The noiseless trivial encryption `(0, …, 0, μ)`.
    ///
    /// ```
    /// let c = coterie_math::lwe::LweCiphertext::trivial(4, 7u32);
    /// assert_eq!(c.body(), 7);
    /// ```
    pub fn trivial(n: usize, mu: T) -> Self {
        let mut c = Self::zero(n);
        c.data[n] = mu;
        c
    }

    /// A ciphertext from its raw words (mask then body) over the native modulus, e.g. the
    /// container of a TFHE-rs `LweCiphertext`.
    ///
    /// # Errors
    /// [`Error::Malformed`] for an empty container.
    ///
    /// ```
    /// let c = coterie_math::lwe::LweCiphertext::from_container(vec![1u32, 2, 3]).unwrap();
    /// assert_eq!((c.mask(), c.body()), (&[1u32, 2][..], 3));
    /// ```
    pub fn from_container(data: Vec<T>) -> Result<Self> {
        Self::from_parts(data, T::BITS, 0)
    }

    /// A ciphertext from its raw words (mask then body) over `Z_{2^k}` with a message modulus
    /// `2^m` (`m = 0`: unspecified).
    ///
    /// # Errors
    /// [`Error::Malformed`] for an empty container, `k` outside `1..=T::BITS`, `m ≥ k`, or a
    /// word not below `2^k`. (Decoders also bound the dimension by [`MAX_LWE_DIMENSION`].)
    ///
    /// ```
    /// use coterie_math::lwe::LweCiphertext;
    /// assert!(LweCiphertext::<u64>::from_parts(vec![1, 2, 3], 16, 2).is_ok());
    /// assert!(LweCiphertext::<u64>::from_parts(vec![1 << 16, 3], 16, 2).is_err());
    /// ```
    pub fn from_parts(data: Vec<T>, modulus_log: u32, message_log: u32) -> Result<Self> {
        if data.is_empty() {
            return Err(Error::Malformed(format!(
                "LWE ciphertext of {} words",
                data.len()
            )));
        }
        if modulus_log == 0 || modulus_log > T::BITS || message_log >= modulus_log {
            return Err(Error::Malformed(format!(
                "bad LWE moduli (k, m) = ({modulus_log}, {message_log})"
            )));
        }
        let mask = qmask(modulus_log);
        if modulus_log < T::BITS && data.iter().any(|x| x.to_u64() & !mask != 0) {
            return Err(Error::Malformed("coefficient not below q".into()));
        }
        Ok(Self {
            data,
            modulus_log,
            message_log,
        })
    }

    /// The raw words, mask then body.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// The raw words, mask then body, mutable. Writers keep them below `2^k`.
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data
    }

    /// The words (mask then body), consuming the ciphertext.
    pub fn into_container(self) -> Vec<T> {
        self.data
    }

    /// The dimension `n` (number of mask words).
    #[inline]
    pub fn dimension(&self) -> usize {
        self.data.len() - 1
    }

    /// `k`, with ciphertext modulus `q = 2^k`.
    #[inline]
    pub fn modulus_log(&self) -> u32 {
        self.modulus_log
    }

    /// `m`, with plaintext modulus `p = 2^m` (`0`: unspecified).
    #[inline]
    pub fn message_log(&self) -> u32 {
        self.message_log
    }

    /// The mask `a`.
    #[inline]
    pub fn mask(&self) -> &[T] {
        &self.data[..self.data.len() - 1]
    }

    /// The mask `a`, mutable.
    #[inline]
    pub fn mask_mut(&mut self) -> &mut [T] {
        let n = self.data.len() - 1;
        &mut self.data[..n]
    }

    /// The body `b`.
    #[inline]
    pub fn body(&self) -> T {
        self.data[self.data.len() - 1]
    }

    /// The body `b`, mutable.
    #[inline]
    pub fn body_mut(&mut self) -> &mut T {
        let n = self.data.len() - 1;
        &mut self.data[n]
    }

    /// Checks that the ciphertext has the dimension and moduli of `shape` (e.g. a threshold
    /// decryptor's parameters, which convert into an [`LweShape`]).
    ///
    /// # Errors
    /// [`Error::Mismatch`] naming what differs.
    ///
    /// ```
    /// use coterie_math::lwe::{LweCiphertext, LweShape};
    /// let c = LweCiphertext::<u64>::from_parts(vec![1, 2, 3], 16, 2).unwrap();
    /// let shape = LweShape { dimension: 2, modulus_log: 16, message_log: 2 };
    /// assert!(c.check(shape).is_ok());
    /// assert!(c.check(LweShape { message_log: 1, ..shape }).is_err());
    /// ```
    pub fn check(&self, shape: impl Into<LweShape>) -> Result<()> {
        let s = shape.into();
        if self.modulus_log != s.modulus_log || self.message_log != s.message_log {
            return Err(Error::Mismatch(format!(
                "(k, m) = ({}, {}), expected ({}, {})",
                self.modulus_log, self.message_log, s.modulus_log, s.message_log
            )));
        }
        if self.dimension() != s.dimension {
            return Err(Error::Mismatch(format!(
                "dimension {}, expected {}",
                self.dimension(),
                s.dimension
            )));
        }
        let mask = qmask(self.modulus_log);
        if self.modulus_log < T::BITS && self.data.iter().any(|x| x.to_u64() & !mask != 0) {
            return Err(Error::Mismatch("coefficient not below q".into()));
        }
        Ok(())
    }

    /// Reduces every word modulo `2^k` (a no-op for the native modulus).
    #[inline]
    fn reduce(&mut self) {
        if self.modulus_log < T::BITS {
            let mask = T::from_u64(qmask(self.modulus_log));
            for x in &mut self.data {
                *x = T::from_u64(x.to_u64() & mask.to_u64());
            }
        }
    }

    fn check_same(&self, o: &Self) {
        assert_eq!(self.data.len(), o.data.len(), "LWE dimensions differ");
        assert_eq!(self.modulus_log, o.modulus_log, "LWE moduli differ");
    }

    /// `self += o`.
    ///
    /// # Panics
    /// If the dimensions or moduli differ.
    ///
    /// ```
    /// use coterie_math::lwe::LweCiphertext;
    /// let mut c = LweCiphertext::trivial(2, 5u32);
    /// c.add_assign(&LweCiphertext::trivial(2, 7));
    /// assert_eq!(c.body(), 12);
    /// ```
    pub fn add_assign(&mut self, o: &Self) {
        self.check_same(o);
        for (x, y) in self.data.iter_mut().zip(&o.data) {
            *x = x.wrapping_add(*y);
        }
        self.reduce();
    }

    /// `self -= o`.
    ///
    /// # Panics
    /// If the dimensions or moduli differ.
    pub fn sub_assign(&mut self, o: &Self) {
        self.check_same(o);
        for (x, y) in self.data.iter_mut().zip(&o.data) {
            *x = x.wrapping_sub(*y);
        }
        self.reduce();
    }

    /// `self = −self`.
    pub fn neg_assign(&mut self) {
        for x in &mut self.data {
            *x = x.wrapping_neg();
        }
        self.reduce();
    }

    /// `self *= c` for an integer `c`.
    pub fn scalar_mul_assign(&mut self, c: i64) {
        let c = T::from_i64(c);
        for x in &mut self.data {
            *x = x.wrapping_mul(c);
        }
        self.reduce();
    }

    /// Adds the plaintext `μ` to the body.
    pub fn add_plaintext_assign(&mut self, mu: T) {
        let n = self.data.len() - 1;
        self.data[n] = self.data[n].wrapping_add(mu);
        self.reduce();
    }
}

/// Ciphertexts over `Z_{2^k}`, `k ≤ 64`, carrying a message modulo `2^m` in the top `m` bits
/// (`b = ⟨a, s⟩ + 2^{k−m}·μ + e`; a TFHE-rs padding bit, if any, counts inside `m`): the form
/// coterie-threshold decrypts, with its encoding helpers and its file format.
impl LweCiphertext<u64> {
    /// Tag of the binary format's envelope.
    pub const TAG: [u8; 4] = *b"LWEc";
    /// Version of the binary format.
    pub const VERSION: u16 = 1;
    const PAYLOAD_HEADER: usize = 8;

    fn check_km(k: u32, m: u32) -> Result<()> {
        if !(2..=64).contains(&k) || m == 0 || m >= k {
            return Err(Error::Malformed(format!("bad (k, m) = ({k}, {m})")));
        }
        Ok(())
    }

    /// Reads a ciphertext stored "mask then body" — the layout of TFHE-rs `core_crypto`'s
    /// `LweCiphertext` container (`a_0, …, a_{n-1}, b`, with `b = <a, s> + plaintext + e`) — over
    /// `q = 2^k` (`k = 64` for TFHE-rs' native modulus), carrying a message in the top `m` bits
    /// (a TFHE-rs padding bit counts inside `m`; strip it from the result). Errors on a wrong
    /// length or a coefficient not below `q`, before anything is spent.
    ///
    /// # Errors
    /// [`Error::Malformed`] as described.
    ///
    /// ```
    /// use coterie_math::lwe::LweCiphertext;
    /// let c = LweCiphertext::from_body_last(&[1, 2, 3], 16, 2).unwrap();
    /// assert_eq!((c.dimension(), c.body()), (2, 3));
    /// assert!(LweCiphertext::from_body_last(&[1 << 16, 3], 16, 2).is_err());
    /// ```
    pub fn from_body_last(data: &[u64], k: u32, m: u32) -> Result<Self> {
        Self::check_km(k, m)?;
        if data.len() < 2 || data.len() > MAX_LWE_DIMENSION + 1 {
            return Err(Error::Malformed(format!(
                "dimension {} out of range",
                data.len().saturating_sub(1)
            )));
        }
        Self::from_parts(data.to_vec(), k, m)
    }

    /// Encodes in the binary format (module doc).
    ///
    /// ```
    /// use coterie_math::lwe::LweCiphertext;
    /// let c = LweCiphertext::from_body_last(&[1, 2, 3], 16, 2).unwrap();
    /// assert_eq!(LweCiphertext::from_bytes(&c.to_bytes()).unwrap(), c);
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut p = Vec::with_capacity(Self::PAYLOAD_HEADER + 8 * self.data.len());
        p.extend_from_slice(&[self.modulus_log as u8, self.message_log as u8, 0, 0]);
        p.extend_from_slice(&(self.dimension() as u32).to_le_bytes());
        for x in &self.data {
            p.extend_from_slice(&x.to_le_bytes());
        }
        match coterie_base::envelope::seal_bytes(Self::TAG, Self::VERSION, &p) {
            Ok(b) => b,
            // The payload is at most 8·(n + 2) bytes, and a dimension is far below 2^29.
            Err(e) => unreachable!("LWE ciphertext payload over 4 GiB: {e}"),
        }
    }

    /// Decodes the binary format; any deviation is an error, never a panic.
    ///
    /// # Errors
    /// [`Error::Malformed`] for a bad envelope, bad moduli, a dimension out of range, a length
    /// that does not match it, or a word not below `2^k`.
    ///
    /// ```
    /// use coterie_math::lwe::LweCiphertext;
    /// assert!(LweCiphertext::from_bytes(b"CTLW").is_err());
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let max = Self::PAYLOAD_HEADER + 8 * (MAX_LWE_DIMENSION + 1);
        let p = coterie_base::envelope::open_bytes(Self::TAG, Self::VERSION, bytes, max)
            .map_err(|e| Error::Malformed(format!("LWE ciphertext: {e}")))?;
        if p.len() < Self::PAYLOAD_HEADER + 16 {
            return Err(Error::Malformed("truncated LWE ciphertext".into()));
        }
        let (k, m) = (u32::from(p[0]), u32::from(p[1]));
        Self::check_km(k, m)?;
        if p[2] != 0 || p[3] != 0 {
            return Err(Error::Malformed("reserved bytes not zero".into()));
        }
        let n = u32::from_le_bytes([p[4], p[5], p[6], p[7]]) as usize;
        if n == 0 || n > MAX_LWE_DIMENSION {
            return Err(Error::Malformed(format!("dimension {n} out of range")));
        }
        if p.len() != Self::PAYLOAD_HEADER + 8 * (n + 1) {
            return Err(Error::Malformed(format!(
                "length {} for dimension {n}",
                p.len()
            )));
        }
        let data: Vec<u64> = p[Self::PAYLOAD_HEADER..]
            .chunks_exact(8)
            .map(|w| {
                let mut b = [0u8; 8];
                b.copy_from_slice(w);
                u64::from_le_bytes(b)
            })
            .collect();
        Self::from_parts(data, k, m)
    }

    /// Encrypts `mu ∈ [2^m]` under a plaintext secret key `sk` (coefficients as signed
    /// integers, e.g. binary or ternary) with the given noise `e`: `b = <a, sk> + 2^{k-m}·mu + e`
    /// with a uniform `a`. For tests, demos and benchmarks where one process knows the key.
    ///
    /// # Panics
    /// If `(k, m)` is not `2 ≤ k ≤ 64`, `1 ≤ m < k`, or `sk` is empty.
    ///
    /// ```
    /// use coterie_math::lwe::LweCiphertext;
    /// let ct = LweCiphertext::encrypt_with_secret_key(&[1, 0, 1], 1, 5, 16, 1, &mut rand::rng());
    /// assert_eq!(ct.phase_with_secret_key(&[1, 0, 1]), (1 << 15) + 5);
    /// ```
    pub fn encrypt_with_secret_key<G: Rng + ?Sized>(
        sk: &[i64],
        mu: u64,
        e: i64,
        k: u32,
        m: u32,
        rng: &mut G,
    ) -> Self {
        assert!(
            Self::check_km(k, m).is_ok() && !sk.is_empty(),
            "bad (k, m) or empty key"
        );
        let mask = qmask(k);
        let mut data: Vec<u64> = Vec::with_capacity(sk.len() + 1);
        data.extend((0..sk.len()).map(|_| rng.next_u64() & mask));
        data.push(Self::encrypt_body(&data, sk, mu, e, k, m));
        Self {
            data,
            modulus_log: k,
            message_log: m,
        }
    }

    /// `b = <a, sk> + 2^{k-m}·mu + e mod 2^k`.
    ///
    /// ```
    /// use coterie_math::lwe::LweCiphertext;
    /// let b = LweCiphertext::encrypt_body(&[1000, 20000, 3, 65535], &[1, 0, 1, 1], 3, -100, 16, 2);
    /// assert_eq!(b, 50054);
    /// ```
    pub fn encrypt_body(a: &[u64], sk: &[i64], mu: u64, e: i64, k: u32, m: u32) -> u64 {
        let mut acc = 0u64;
        for (x, s) in a.iter().zip(sk) {
            acc = acc.wrapping_add(x.wrapping_mul(*s as u64));
        }
        acc = acc.wrapping_add(mu << (k - m)).wrapping_add(e as u64);
        acc & qmask(k)
    }

    /// Modulus switching of an LWE ciphertext over `Z_q` (any `q ≥ 2`, e.g. an NTT prime) to
    /// `Z_{2^k}`: every coefficient `x` becomes `round(x·2^k/q)` (seed 000 §16.3). This adds
    /// rounding noise of at most `1/2` per coefficient, i.e. at most `(1 + Σ|s_i|)/2` to the
    /// phase, which the caller must fit into the noise budget.
    ///
    /// # Errors
    /// [`Error::Malformed`] for bad moduli, an empty or oversized mask, or a coefficient not
    /// below `q`.
    ///
    /// ```
    /// use coterie_math::lwe::LweCiphertext;
    /// let c = LweCiphertext::modulus_switch_from(&[50], 25, 100, 8, 1).unwrap();
    /// assert_eq!((c.mask()[0], c.body()), (128, 64));
    /// ```
    pub fn modulus_switch_from(a: &[u64], b: u64, q: u64, k: u32, m: u32) -> Result<Self> {
        if q < 2 {
            return Err(Error::Malformed("bad moduli for modulus switching".into()));
        }
        Self::check_km(k, m)?;
        if a.is_empty() || a.len() > MAX_LWE_DIMENSION || b >= q || a.iter().any(|&x| x >= q) {
            return Err(Error::Malformed("coefficient not below q".into()));
        }
        let sw = |x: u64| -> u64 {
            // round(x·2^k/q) mod 2^k with 128-bit intermediates (x < q < 2^64, 2^k ≤ 2^64)
            let num = (u128::from(x) << k) + u128::from(q / 2);
            ((num / u128::from(q)) as u64) & qmask(k)
        };
        let data = a
            .iter()
            .chain(core::iter::once(&b))
            .map(|&x| sw(x))
            .collect();
        Ok(Self {
            data,
            modulus_log: k,
            message_log: m,
        })
    }

    /// The noisy phase `b - <a, sk> mod 2^k` under a plaintext key (the value whose rounding
    /// the threshold decryption computes).
    ///
    /// ```
    /// use coterie_math::lwe::LweCiphertext;
    /// let c = LweCiphertext::from_body_last(&[1000, 20000, 3, 65535, 50054], 16, 2).unwrap();
    /// assert_eq!(c.phase_with_secret_key(&[1, 0, 1, 1]), 49052);
    /// ```
    pub fn phase_with_secret_key(&self, sk: &[i64]) -> u64 {
        let mut acc = self.body();
        for (x, s) in self.mask().iter().zip(sk) {
            acc = acc.wrapping_sub(x.wrapping_mul(*s as u64));
        }
        acc & qmask(self.modulus_log)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codec_roundtrip_and_refusals() {
        let mut rng = rand::rng();
        let sk = [1i64, 0, 1, 1];
        let ct = LweCiphertext::encrypt_with_secret_key(&sk, 3, -100, 16, 2, &mut rng);
        let bytes = ct.to_bytes();
        assert_eq!(LweCiphertext::from_bytes(&bytes).unwrap(), ct);
        assert!(LweCiphertext::from_bytes(&bytes[..bytes.len() - 1]).is_err());
        let h = bytes.len() - (8 + 8 * 5); // envelope header
        // Another envelope version.
        let mut bad = bytes.clone();
        bad[8] ^= 3;
        assert!(LweCiphertext::from_bytes(&bad).is_err());
        let mut bad = bytes.clone();
        bad[h + 4..h + 8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(LweCiphertext::from_bytes(&bad).is_err());
        let mut bad = bytes.clone();
        bad[h + 8 + 7] = 0xff; // a_0 ≥ 2^16
        assert!(LweCiphertext::from_bytes(&bad).is_err());
        let mut bad = bytes.clone();
        bad[h + 1] = 16; // m = k
        assert!(LweCiphertext::from_bytes(&bad).is_err());
        let shape = LweShape {
            dimension: 4,
            modulus_log: 16,
            message_log: 2,
        };
        assert!(ct.check(shape).is_ok());
        assert!(
            ct.check(LweShape {
                dimension: 5,
                ..shape
            })
            .is_err()
        );
        assert!(
            ct.check(LweShape {
                message_log: 1,
                ..shape
            })
            .is_err()
        );
    }

    #[test]
    fn serde_validates() {
        let ct = LweCiphertext::<u64>::from_parts(vec![1, 2, 3], 16, 2).unwrap();
        let bytes = postcard::to_allocvec(&ct).unwrap();
        assert_eq!(
            postcard::from_bytes::<LweCiphertext<u64>>(&bytes).unwrap(),
            ct
        );
        let bad = LweCiphertext::<u64> {
            data: vec![1 << 20, 2, 3],
            modulus_log: 16,
            message_log: 2,
        };
        let bytes = postcard::to_allocvec(&bad).unwrap();
        assert!(postcard::from_bytes::<LweCiphertext<u64>>(&bytes).is_err());
        let empty = postcard::to_allocvec(&LweCiphertextWireOut::<u32> {
            data: vec![],
            modulus_log: 32,
            message_log: 0,
        })
        .unwrap();
        assert!(postcard::from_bytes::<LweCiphertext<u32>>(&empty).is_err());
    }

    #[derive(Serialize)]
    #[serde(bound = "")]
    struct LweCiphertextWireOut<T: Torus> {
        data: Vec<T>,
        modulus_log: u32,
        message_log: u32,
    }

    #[test]
    fn reduced_modulus_arithmetic_stays_below_q() {
        let mut a = LweCiphertext::<u64>::from_parts(vec![0xffff, 1], 16, 2).unwrap();
        let b = LweCiphertext::<u64>::from_parts(vec![1, 0xffff], 16, 2).unwrap();
        a.add_assign(&b);
        assert_eq!(a.as_slice(), &[0, 0]);
        a.sub_assign(&b);
        assert_eq!(a.as_slice(), &[0xffff, 1]);
        a.neg_assign();
        assert_eq!(a.as_slice(), &[1, 0xffff]);
    }

    #[test]
    fn modulus_switch_keeps_the_message() {
        use rand::RngExt;
        let mut rng = rand::rng();
        let q: u64 = 0xffff_ffff_0000_0001; // an NTT-friendly prime below 2^64
        let sk: Vec<i64> = (0..64).map(|_| rng.random_range(-1i64..=1)).collect();
        for mu in 0..4u64 {
            let a: Vec<u64> = (0..64).map(|_| rng.random_range(0..q)).collect();
            // b = <a, s> + mu·q/4 + e mod q, computed exactly
            let mut acc: i128 = 0;
            for (x, s) in a.iter().zip(&sk) {
                acc += i128::from(*x) * i128::from(*s);
            }
            acc += i128::from(mu) * i128::from(q / 4) + 1000;
            let b = acc.rem_euclid(i128::from(q)) as u64;
            let ct = LweCiphertext::modulus_switch_from(&a, b, q, 64, 2).unwrap();
            // round(phase / 2^62) mod 4
            let phase = ct.phase_with_secret_key(&sk);
            assert_eq!((phase.wrapping_add(1 << 61) >> 62) & 3, mu);
        }
        assert!(LweCiphertext::modulus_switch_from(&[q], 0, q, 64, 2).is_err());
    }

    #[test]
    fn t7_plain_values() {
        let sk = [1i64, 0, 1, 1];
        let a = [1000u64, 20000, 3, 65535];
        let b = LweCiphertext::encrypt_body(&a, &sk, 3, -100, 16, 2);
        assert_eq!(b, 50054);
        let mut data = a.to_vec();
        data.push(b);
        let ct = LweCiphertext::from_body_last(&data, 16, 2).unwrap();
        assert_eq!(ct.phase_with_secret_key(&sk), 49052);
    }
}
