//! Keys (spec §2, §4.1): the public key `pk = (h = g^c, (E(c_i))_i)`, the two servers'
//! evaluation keys (integer shares of `c` and of its digits, plus a common PRF key), the ElGamal
//! secret key, and the trusted-dealer key generation (the distributed one is
//! [`crate::protocol::dkg`]).

use coterie_math::bigint::{self, BigInt, wipe};
use rand::Rng;
use serde::{Deserialize, Serialize};
use zeroize::Zeroize;

use super::encrypt::{Ciphertext, Encryptor};
use super::params::Params;
use crate::group::{Elem, Group};
use crate::{Error, Result};

/// How the ElGamal key is assembled from its digits: `c ≡ Σ w_i c_i (mod q)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum KeyLayout {
    /// `w_i = B^(i−1)` (the standard base-B key).
    Base,
    /// Explicit weights (the information-theoretic key sharing against leakage, spec §4.7).
    Weights(#[serde(with = "serde_vec_bigint")] Vec<BigInt>),
}

/// The public key `pk = (G, g, h = g^c, (E(c_i))_i)`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PublicKey {
    /// Parameters.
    pub params: Params,
    /// `h = g^c`.
    pub h: Elem,
    /// Encryptions of the key digits `E(c_i)`.
    pub key_digits: Vec<Ciphertext>,
    /// Digit weights.
    pub layout: KeyLayout,
}

// Stored and sent in the coterie envelope as `HSpk` (an HSS public key).
coterie_base::versioned! {
    PublicKey => b"HSpk" v 1,
}

/// One server's evaluation key `ek_b`: integer shares of `c` and of each digit `c_i`
/// (difference convention), and the PRF key both servers share.
#[derive(Clone, Serialize, Deserialize)]
pub struct EvalKey {
    /// Server index `b ∈ {0, 1}`.
    pub party: u8,
    /// `<c>_b`.
    #[serde(with = "coterie_math::bigint::serde_bigint")]
    pub c_share: BigInt,
    /// `<c_i>_b`.
    #[serde(with = "serde_vec_bigint")]
    pub digit_shares: Vec<BigInt>,
    /// Common PRF key (output masks, RandMult bits).
    pub prf_key: [u8; 32],
}

// Stored and sent in the coterie envelope as `HSek` (one server's evaluation key).
coterie_base::versioned! {
    EvalKey => b"HSek" v 1,
}

impl core::fmt::Debug for EvalKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "EvalKey {{ party: {}, .. }}", self.party)
    }
}

impl Drop for EvalKey {
    fn drop(&mut self) {
        wipe(&mut self.c_share);
        for x in &mut self.digit_shares {
            wipe(x);
        }
        self.prf_key.zeroize();
    }
}

/// The ElGamal secret key (held by nobody in the distributed setting; tests and secret-key HSS).
#[derive(Clone)]
pub struct SecretKey {
    /// `c`.
    pub c: BigInt,
    /// Digits `c_i`.
    pub digits: Vec<u64>,
}

impl Drop for SecretKey {
    fn drop(&mut self) {
        wipe(&mut self.c);
        self.digits.zeroize();
    }
}

impl SecretKey {
    /// `Dec(E(m)) = C / A^c = g^m`.
    pub fn decrypt_to_group(&self, group: &Group, ct: &Ciphertext) -> Result<Elem> {
        let ac = group.pow(&ct.a, &self.c);
        Ok(group.mul(&ct.c, &group.inv(&ac)?))
    }
}

/// Samples `<c>`, `<c_i>` (integer shares masking by `stat_bits`) for a key `c` (any integer
/// representative) and its digits.
pub(crate) fn sample_key_shares<R: Rng + ?Sized>(
    params: &Params,
    digits: &[u64],
    c: &BigInt,
    rng: &mut R,
) -> (EvalKey, EvalKey) {
    let mask_bits = c.significant_bits().max(params.key_bits) + params.stat_bits;
    let mask_c = bigint::random_below(rng, &(BigInt::from(1) << mask_bits)).unwrap_or_default();
    let dig_bits = params.log_base + params.stat_bits;
    let mut d0 = Vec::with_capacity(digits.len());
    let mut d1 = Vec::with_capacity(digits.len());
    for &ci in digits {
        let r = bigint::random_below(rng, &(BigInt::from(1) << dig_bits)).unwrap_or_default();
        d0.push(BigInt::from(&r + ci));
        d1.push(r);
    }
    let mut prf_key = [0u8; 32];
    rng.fill_bytes(&mut prf_key);
    let ek0 = EvalKey {
        party: 0,
        c_share: BigInt::from(&mask_c + c),
        digit_shares: d0,
        prf_key,
    };
    let ek1 = EvalKey {
        party: 1,
        c_share: mask_c,
        digit_shares: d1,
        prf_key,
    };
    prf_key.zeroize();
    (ek0, ek1)
}

/// The paper's `Gen` run by a single **trusted dealer** (insecure against the dealer: it sees
/// the key): random base-`B` digits `c_i`, `c = Σ B^(i−1) c_i`, `h = g^c`, `E(c_i)`, and integer
/// shares `<c>`, `<c_i>` for the two servers. Use [`crate::protocol::dkg`] in deployments.
///
/// # Example
///
/// ```
/// use coterie_hss::group::Group;
/// use coterie_hss::scheme::{Params, insecure_keygen_trusted_dealer};
/// use rand::SeedableRng;
/// let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1); // fixed seed: insecure, tests only
/// let params = Params::insecure_toy(4, 16, 10);
/// let (pk, ek0, ek1, sk) = insecure_keygen_trusted_dealer(&params, &mut rng).unwrap();
/// pk.validate().unwrap();
/// // The servers hold integer shares of the key in the difference convention.
/// assert_eq!(ek0.c_share.clone() - &ek1.c_share, sk.c);
/// assert_eq!(pk.h, Group::new(params.group).g_pow(&sk.c));
/// ```
pub fn insecure_keygen_trusted_dealer<R: Rng + ?Sized>(
    params: &Params,
    rng: &mut R,
) -> Result<(PublicKey, EvalKey, EvalKey, SecretKey)> {
    params.check()?;
    let group = Group::new(params.group);
    let s = params.s();
    let b = params.base();
    let digits: Vec<u64> = (0..s).map(|_| rng.next_u64() % b).collect();
    let c = digits
        .iter()
        .rev()
        .fold(BigInt::new(), |acc, &ci| (acc << params.log_base) + ci);
    let h = group.g_pow(&c);
    let enc = Encryptor::new_raw(&group, &h)?;
    let key_digits = digits
        .iter()
        .map(|&ci| enc.encrypt_value(&BigInt::from(ci), rng))
        .collect();
    let (ek0, ek1) = sample_key_shares(params, &digits, &c, rng);
    let pk = PublicKey {
        params: *params,
        h,
        key_digits,
        layout: KeyLayout::Base,
    };
    Ok((pk, ek0, ek1, SecretKey { c, digits }))
}

impl PublicKey {
    /// The digit weights `w_i`.
    pub fn weights(&self) -> Vec<BigInt> {
        match &self.layout {
            KeyLayout::Base => (0..self.key_digits.len())
                .map(|i| BigInt::from(1) << (self.params.log_base * i as u32))
                .collect(),
            KeyLayout::Weights(w) => w.clone(),
        }
    }

    /// Bit bound of `Σ w_i` (for share bounds after a multiplication).
    pub fn weight_sum_bits(&self) -> u32 {
        let sum: BigInt = self.weights().iter().sum();
        sum.significant_bits()
    }

    /// Checks a deserialized public key: parameters, element validity and sizes.
    pub fn validate(&self) -> Result<()> {
        self.params.check()?;
        let group = Group::new(self.params.group);
        let expect = match &self.layout {
            KeyLayout::Base => self.params.s(),
            KeyLayout::Weights(w) => w.len(),
        };
        if self.key_digits.len() != expect || expect > 1 << 14 {
            return Err(Error::Malformed(
                "wrong number of key-digit ciphertexts".into(),
            ));
        }
        group.validate(&self.h)?;
        for ct in &self.key_digits {
            group.validate(&ct.a)?;
            group.validate(&ct.c)?;
        }
        Ok(())
    }

    /// Bits of the integer key shares `<c>_b` for this key layout.
    pub fn c_share_bits(&self) -> u32 {
        match self.layout {
            KeyLayout::Base => self.params.key_share_bits(),
            KeyLayout::Weights(_) => self.weight_sum_bits() + self.params.stat_bits + 1,
        }
    }

    /// Largest `A`-side pairing exponent for this key (covers explicit weights).
    pub fn a_table_bits(&self) -> u32 {
        self.params
            .a_table_bits()
            .max(self.c_share_bits() + 12)
            .max(self.weight_sum_bits() + self.params.conv_bits() + 12)
    }

    /// An encryptor (fixed-base tables for `g` and `h`).
    pub fn encryptor(&self) -> Result<Encryptor> {
        let group = Group::new(self.params.group);
        Encryptor::new_raw(&group, &self.h)
    }
}

/// Serde for `Vec<BigInt>` with a length bound.
pub mod serde_vec_bigint {
    use coterie_math::bigint::BigInt;
    use serde::de::{SeqAccess, Visitor};
    use serde::ser::SerializeSeq;
    use serde::{Deserializer, Serializer};

    /// Largest accepted vector length.
    pub const MAX_LEN: usize = 1 << 14;

    #[derive(serde::Serialize, serde::Deserialize)]
    struct W(#[serde(with = "coterie_math::bigint::serde_bigint")] BigInt);

    /// Serializes the vector.
    pub fn serialize<S: Serializer>(v: &[BigInt], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(v.len()))?;
        for x in v {
            seq.serialize_element(&W(x.clone()))?;
        }
        seq.end()
    }

    /// Deserializes at most [`MAX_LEN`] elements.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<BigInt>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Vec<BigInt>;
            fn expecting(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result {
                f.write_str("a bounded sequence of big integers")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::with_capacity(a.size_hint().unwrap_or(0).min(64));
                while let Some(W(x)) = a.next_element()? {
                    if out.len() >= MAX_LEN {
                        return Err(serde::de::Error::custom("too many big integers"));
                    }
                    out.push(x);
                }
                Ok(out)
            }
        }
        d.deserialize_seq(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn rng(seed: u64) -> rand_chacha::ChaCha20Rng {
        rand_chacha::ChaCha20Rng::seed_from_u64(seed)
    }

    #[test]
    fn elgamal_and_digits() {
        let mut r = rng(10);
        for lb in [1, 2, 4] {
            let params = Params::insecure_toy(lb, 16, 8);
            let (pk, _, _, sk) = insecure_keygen_trusted_dealer(&params, &mut r).unwrap();
            let g = Group::new(params.group);
            let c: BigInt = sk
                .digits
                .iter()
                .enumerate()
                .map(|(i, &d)| BigInt::from(d) << (lb * i as u32))
                .sum();
            assert_eq!(c, sk.c);
            assert_eq!(pk.h, g.g_pow(&sk.c));
            for (ct, &d) in pk.key_digits.iter().zip(&sk.digits) {
                assert_eq!(sk.decrypt_to_group(&g, ct).unwrap(), g.g_pow(&d.into()));
            }
            let enc = pk.encryptor().unwrap();
            for x in [0u32, 1] {
                let l1 = enc.encrypt(&pk, &x.into(), &mut r);
                assert_eq!(sk.decrypt_to_group(&g, &l1.x).unwrap(), g.g_pow(&x.into()));
                for (ct, &d) in l1.digits.iter().zip(&sk.digits) {
                    let want = g.g_pow(&BigInt::from(d * x as u64));
                    assert_eq!(sk.decrypt_to_group(&g, ct).unwrap(), want);
                }
            }
        }
    }
}
