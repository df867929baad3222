//! Keys, encodings and the core HSS algorithms (spec §2–§4.5, §4.8).
//!
//! * [`Params`] — group, key base `B ∈ {2, 4, 16}`, key length, pattern length `d`,
//!   fixed-base window `R`; [`Params::table3`] gives the paper's Table 3 rows.
//! * [`insecure_keygen_trusted_dealer`] — the paper's `Gen` run by one trusted party (tests and
//!   benchmarks; the distributed version is [`crate::protocol`]).
//! * [`Encryptor::encrypt`] — `Enc(pk, x)`: the level-1 encoding `L1(x) = (E(x), E(x·c_i)_i)`.
//! * [`Evaluator`] — one server's local evaluation: `Pair`, `PairConv`, `Mult`, `RandMult`,
//!   terminal multiplications, large inputs, outputs, with its failure flag `γ_b`.
//!
//! Level-2 shares are integers in the difference convention (`y_0 − y_1 = y`,
//! `(yc)_0 − (yc)_1 = y·c`). Each [`L2Share`] carries public bit bounds of its two shares; they
//! are functions of the program only, so both servers derive the same bounds, and `Pair` uses the
//! public offsets `2^bound` to make both exponents nonnegative:
//! `h_b = C^(y_b + 2^ky) · A^(2^kyc − (yc)_b)`, whose ratio is still `g^(x·y)` (the offsets
//! cancel). This avoids inversions and keeps exponents at about `ℓ + 2d` bits (spec §3.1).

mod encrypt;
mod evaluator;
mod keys;
mod params;

pub use encrypt::{
    Ciphertext, Encryptor, L1Input, PreparedCt, PreparedInput, ct_div, share_l2_secret_key,
};
pub use evaluator::{EvalStats, Evaluator, L2Share, reconstruct};
pub(crate) use keys::sample_key_shares;
pub use keys::{
    EvalKey, KeyLayout, PublicKey, SecretKey, insecure_keygen_trusted_dealer, serde_vec_bigint,
};
pub use params::Params;

use coterie_base::Versioned;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::Result;

/// Encodes a versioned value of this crate (keys, inputs, programs, share batches) in the
/// coterie envelope (`coterie_base::envelope`: magic, the type's tag and version, bounded
/// length, postcard payload).
///
/// # Example
///
/// ```
/// use coterie_hss::scheme::{EvalKey, Params, PublicKey, from_bytes, insecure_keygen_trusted_dealer, to_bytes};
/// use rand::SeedableRng;
/// let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(6); // insecure fixed seed
/// let (pk, ..) = insecure_keygen_trusted_dealer(&Params::insecure_toy(4, 16, 10), &mut rng).unwrap();
/// let bytes = to_bytes(&pk).unwrap();
/// assert_eq!(&bytes[..4], b"CTRE");
/// let back: PublicKey = from_bytes(&bytes).unwrap();
/// back.validate().unwrap();
/// assert!(from_bytes::<EvalKey>(&bytes).is_err()); // another type's tag
/// assert!(from_bytes::<PublicKey>(&bytes[..bytes.len() - 1]).is_err()); // truncated
/// ```
pub fn to_bytes<T: Versioned + Serialize>(v: &T) -> Result<Vec<u8>> {
    Ok(coterie_base::to_envelope(v)?)
}

/// Largest accepted payload for [`from_bytes`] (64 MiB).
pub const MAX_DECODE_BYTES: usize = 64 << 20;

/// Decodes what [`to_bytes`] wrote: checks the envelope (magic, tag, exact version, a payload
/// of at most [`MAX_DECODE_BYTES`], no trailing bytes) before decoding. Callers still run the
/// type's `validate` (group membership, sizes against the key).
pub fn from_bytes<T: Versioned + DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    Ok(coterie_base::from_envelope(bytes, MAX_DECODE_BYTES)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::group::Elem;
    use coterie_math::bigint::BigInt;
    use rand::SeedableRng;

    fn rng(seed: u64) -> rand_chacha::ChaCha20Rng {
        rand_chacha::ChaCha20Rng::seed_from_u64(seed)
    }

    #[test]
    fn serialization_round_trips_and_bounds() {
        let mut r = rng(15);
        let params = Params::insecure_toy(4, 16, 8);
        let (pk, ek0, _, _) = insecure_keygen_trusted_dealer(&params, &mut r).unwrap();
        let bytes = to_bytes(&pk).unwrap();
        let back: PublicKey = from_bytes(&bytes).unwrap();
        back.validate().unwrap();
        assert_eq!(back.h, pk.h);
        let enc = pk.encryptor().unwrap();
        let l1 = enc.encrypt(&pk, &BigInt::from(1), &mut r);
        let l1b: L1Input = from_bytes(&to_bytes(&l1).unwrap()).unwrap();
        l1b.validate(&pk).unwrap();
        let mut l1bad = l1b.clone();
        l1bad.digits.pop();
        assert!(l1bad.validate(&pk).is_err());
        let ekb: EvalKey = from_bytes(&to_bytes(&ek0).unwrap()).unwrap();
        assert_eq!(ekb.c_share, ek0.c_share);
        // Corrupt an element: must be an error, not a panic.
        let mut bad = back.clone();
        bad.h = Elem(vec![u64::MAX; 2]);
        assert!(bad.validate().is_err());
        // Another version or another type's tag: refused by the envelope.
        let v99 = coterie_base::envelope::seal(*b"HSpk", 99, &back).unwrap();
        assert!(from_bytes::<PublicKey>(&v99).is_err());
        assert!(from_bytes::<EvalKey>(&bytes).is_err());
        assert!(from_bytes::<PublicKey>(&bytes[..bytes.len() / 2]).is_err());
    }
}
