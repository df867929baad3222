//! Raw LWE ciphertexts `(a, b) ∈ Z_q^n × Z_q`, `q = 2^k`, `p = 2^m`, with `b = <a, s> + Δμ + e`,
//! `Δ = 2^{k-m}` (message in the top `m` bits; a padding bit, if any, is counted inside `m`).
//!
//! Binary format, version 1 (all integers little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 4 | magic `b"CTLW"` |
//! | 1 | format version (1) |
//! | 1 | `k` (`2..=64`) |
//! | 1 | `m` (`1..k`) |
//! | 1 | reserved, 0 |
//! | 4 | `n` (`1..=MAX_DIMENSION`) |
//! | 8 | `b` |
//! | 8·n | `a_0 .. a_{n-1}` |
//!
//! Every coefficient must be `< 2^k`; the length must be exact. The decoder checks the declared
//! size against the input before allocating.

use rand::Rng;

use crate::params::{MAX_DIMENSION, Params};
use crate::{Error, Result};

/// Magic bytes of the binary format.
pub const MAGIC: [u8; 4] = *b"CTLW";
/// Current format version.
pub const FORMAT_VERSION: u8 = 1;
const HEADER: usize = 12;

/// An LWE ciphertext over `Z_{2^k}` carrying a message modulo `2^m`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LweCiphertext {
    /// `k`, with `q = 2^k`.
    pub k: u32,
    /// `m`, with `p = 2^m`.
    pub m: u32,
    /// The mask `a` (length `n`).
    pub a: Vec<u64>,
    /// The body `b`.
    pub b: u64,
}

fn qmask(k: u32) -> u64 {
    if k >= 64 { u64::MAX } else { (1u64 << k) - 1 }
}

impl LweCiphertext {
    /// Checks that the ciphertext fits `params` (dimension, modulus, plaintext modulus, ranges).
    pub fn check(&self, params: &Params) -> Result<()> {
        if self.k != params.k || self.m != params.m {
            return Err(Error::Ciphertext(format!(
                "(k, m) = ({}, {}), expected ({}, {})",
                self.k, self.m, params.k, params.m
            )));
        }
        if self.a.len() != params.n {
            return Err(Error::Ciphertext(format!(
                "dimension {}, expected {}",
                self.a.len(),
                params.n
            )));
        }
        let mask = qmask(self.k);
        if self.b & !mask != 0 || self.a.iter().any(|x| x & !mask != 0) {
            return Err(Error::Ciphertext("coefficient not below q".into()));
        }
        Ok(())
    }

    /// Reads a ciphertext stored "mask then body" — the layout of TFHE-rs `core_crypto`'s
    /// `LweCiphertext` container (`a_0, …, a_{n-1}, b`, with `b = <a, s> + plaintext + e`) — over
    /// `q = 2^k` (`k = 64` for TFHE-rs' native modulus), carrying a message in the top `m` bits
    /// (a TFHE-rs padding bit counts inside `m`; strip it from the result). The key must be the same
    /// key's coefficients, imported with
    /// [`crate::keys::SharedKey::import_from_single_holder`]. Errors on a wrong length or a
    /// coefficient not below `q`, before anything is spent.
    pub fn from_body_last(data: &[u64], k: u32, m: u32) -> Result<Self> {
        if !(2..=64).contains(&k) || m == 0 || m >= k {
            return Err(Error::Ciphertext(format!("bad (k, m) = ({k}, {m})")));
        }
        let Some((&b, a)) = data.split_last() else {
            return Err(Error::Ciphertext("empty ciphertext".into()));
        };
        if a.is_empty() || a.len() > MAX_DIMENSION {
            return Err(Error::Ciphertext(format!(
                "dimension {} out of range",
                a.len()
            )));
        }
        let mask = qmask(k);
        if b & !mask != 0 || a.iter().any(|x| x & !mask != 0) {
            return Err(Error::Ciphertext("coefficient not below q".into()));
        }
        Ok(Self {
            k,
            m,
            a: a.to_vec(),
            b,
        })
    }

    /// Encodes in the binary format.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER + 8 + 8 * self.a.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&[FORMAT_VERSION, self.k as u8, self.m as u8, 0]);
        out.extend_from_slice(&(self.a.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.b.to_le_bytes());
        for x in &self.a {
            out.extend_from_slice(&x.to_le_bytes());
        }
        out
    }

    /// Decodes the binary format; any deviation is an error, never a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let err = |s: &str| Error::Ciphertext(s.to_string());
        if bytes.len() < HEADER + 8 {
            return Err(err("truncated header"));
        }
        if bytes[..4] != MAGIC {
            return Err(err("bad magic"));
        }
        if bytes[4] != FORMAT_VERSION {
            return Err(Error::Ciphertext(format!(
                "unsupported format version {}",
                bytes[4]
            )));
        }
        let (k, m) = (u32::from(bytes[5]), u32::from(bytes[6]));
        if !(2..=64).contains(&k) || m == 0 || m >= k || bytes[7] != 0 {
            return Err(err("bad (k, m) or reserved byte"));
        }
        let n = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize;
        if n == 0 || n > MAX_DIMENSION {
            return Err(Error::Ciphertext(format!("dimension {n} out of range")));
        }
        if bytes.len() != HEADER + 8 + 8 * n {
            return Err(Error::Ciphertext(format!(
                "length {} for dimension {n}",
                bytes.len()
            )));
        }
        let word = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&bytes[i..i + 8]);
            u64::from_le_bytes(w)
        };
        let b = word(HEADER);
        let a: Vec<u64> = (0..n).map(|i| word(HEADER + 8 + 8 * i)).collect();
        let mask = qmask(k);
        if b & !mask != 0 || a.iter().any(|x| x & !mask != 0) {
            return Err(err("coefficient not below q"));
        }
        Ok(Self { k, m, a, b })
    }

    /// Encrypts `mu ∈ [2^m]` under a plaintext secret key `sk` (coefficients as signed
    /// integers, e.g. binary or ternary) with the given noise `e`: `b = <a, sk> + 2^{k-m}·mu + e`
    /// with a uniform `a`. For tests, demos and benchmarks where one process knows the key.
    pub fn encrypt_with_secret_key<G: Rng + ?Sized>(
        sk: &[i64],
        mu: u64,
        e: i64,
        k: u32,
        m: u32,
        rng: &mut G,
    ) -> Self {
        let mask = qmask(k);
        let a: Vec<u64> = (0..sk.len()).map(|_| rng.next_u64() & mask).collect();
        let b = Self::body(&a, sk, mu, e, k, m);
        Self { k, m, a, b }
    }

    /// `b = <a, sk> + 2^{k-m}·mu + e mod 2^k`.
    pub fn body(a: &[u64], sk: &[i64], mu: u64, e: i64, k: u32, m: u32) -> u64 {
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
    pub fn modulus_switch_from(a: &[u64], b: u64, q: u64, k: u32, m: u32) -> Result<Self> {
        if q < 2 || !(2..=64).contains(&k) || m == 0 || m >= k {
            return Err(Error::Ciphertext("bad moduli for modulus switching".into()));
        }
        if a.len() > MAX_DIMENSION || b >= q || a.iter().any(|&x| x >= q) {
            return Err(Error::Ciphertext("coefficient not below q".into()));
        }
        let sw = |x: u64| -> u64 {
            // round(x·2^k/q) mod 2^k with 128-bit intermediates (x < q < 2^64, 2^k ≤ 2^64)
            let num = (u128::from(x) << k) + u128::from(q / 2);
            ((num / u128::from(q)) as u64) & qmask(k)
        };
        Ok(Self {
            k,
            m,
            a: a.iter().map(|&x| sw(x)).collect(),
            b: sw(b),
        })
    }

    /// The noisy phase `b - <a, sk> mod 2^k` under a plaintext key (the value whose rounding
    /// the threshold decryption computes).
    pub fn phase_with_secret_key(&self, sk: &[i64]) -> u64 {
        let mut acc = self.b;
        for (x, s) in self.a.iter().zip(sk) {
            acc = acc.wrapping_sub(x.wrapping_mul(*s as u64));
        }
        acc & qmask(self.k)
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
        let mut bad = bytes.clone();
        bad[4] = 2;
        assert!(LweCiphertext::from_bytes(&bad).is_err());
        let mut bad = bytes.clone();
        bad[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(LweCiphertext::from_bytes(&bad).is_err());
        let mut bad = bytes.clone();
        bad[HEADER + 8 + 7] = 0xff; // a_0 ≥ 2^16
        assert!(LweCiphertext::from_bytes(&bad).is_err());
        let p = Params::toy(4, 16, 2, 3).unwrap();
        assert!(ct.check(&p).is_ok());
        assert!(ct.check(&Params::toy(5, 16, 2, 3).unwrap()).is_err());
        assert!(ct.check(&Params::toy(4, 16, 1, 3).unwrap()).is_err());
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
            assert_eq!(
                crate::params::round_p(ct.phase_with_secret_key(&sk), 64, 2),
                mu
            );
        }
        assert!(LweCiphertext::modulus_switch_from(&[q], 0, q, 64, 2).is_err());
    }

    #[test]
    fn t7_plain_values() {
        let sk = [1i64, 0, 1, 1];
        let a = [1000u64, 20000, 3, 65535];
        let b = LweCiphertext::body(&a, &sk, 3, -100, 16, 2);
        assert_eq!(b, 50054);
        let ct = LweCiphertext {
            k: 16,
            m: 2,
            a: a.to_vec(),
            b,
        };
        assert_eq!(ct.phase_with_secret_key(&sk), 49052);
    }
}
