//! The LWE ciphertexts the threshold decryption takes: the workspace's one LWE ciphertext type,
//! [`coterie_math::lwe::LweCiphertext`], on 64-bit words over `Z_{2^k}` (`q = 2^k`, `k ≤ 64`)
//! carrying a message modulo `p = 2^m` in the top `m` bits: `b = <a, s> + Δμ + e`,
//! `Δ = 2^{k-m}` (a padding bit, if any, is counted inside `m`). The same type is what
//! coterie-tfhe bootstraps, so a multi-key TFHE output goes into the threshold engine without
//! a conversion of representation (coterie-tfhe's `mk::decrypt::to_mpc_rounding_form` only
//! re-encodes the message).
//!
//! Its versioned, bounded binary format (a `coterie_base` envelope tagged `b"LWEc"`) is
//! [`LweCiphertext::to_bytes`] / [`LweCiphertext::from_bytes`]; the TFHE-rs body-last import is
//! [`LweCiphertext::from_body_last`]; modulus switching from any `q` to `2^k` is
//! [`LweCiphertext::modulus_switch_from`]. A decryptor checks a ciphertext against its
//! [`Params`] with `ct.check(&params)` (the parameters convert into an
//! [`coterie_math::lwe::LweShape`]).
//!
//! ```
//! use coterie_threshold::{LweCiphertext, Params};
//! let p = Params::insecure_toy(4, 16, 2, 3).unwrap();
//! let ct = LweCiphertext::encrypt_with_secret_key(&[1, 0, 1, 1], 3, -100, 16, 2, &mut rand::rng());
//! assert!(ct.check(&p).is_ok());
//! let back = LweCiphertext::from_bytes(&ct.to_bytes()).unwrap();
//! assert_eq!(back, ct);
//! ```

use coterie_math::lwe::LweShape;

use crate::params::Params;

/// An LWE ciphertext over `Z_{2^k}` carrying a message modulo `2^m` (the one LWE type of the
/// workspace on 64-bit words).
pub type LweCiphertext = coterie_math::lwe::LweCiphertext<u64>;

impl From<&Params> for LweShape {
    fn from(p: &Params) -> Self {
        LweShape {
            dimension: p.n,
            modulus_log: p.k,
            message_log: p.m,
        }
    }
}

// The ciphertext itself (codec refusals, serde validation, arithmetic, modulus switching, the
// T7 plain values) is tested once, in `coterie_math::lwe`; here only what the threshold crate
// adds: the shape its `Params` give and the format through the re-export.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_give_the_shape() {
        let p = Params::insecure_toy(4, 16, 2, 3).unwrap();
        assert_eq!(
            LweShape::from(&p),
            LweShape {
                dimension: 4,
                modulus_log: 16,
                message_log: 2,
            }
        );
    }

    #[test]
    fn check_against_params_and_format_through_the_reexport() {
        let p = Params::insecure_toy(4, 16, 2, 3).unwrap();
        let sk = [1i64, 0, 1, 1];
        let ct = LweCiphertext::encrypt_with_secret_key(&sk, 3, -100, p.k, p.m, &mut rand::rng());
        assert!(ct.check(&p).is_ok());
        for (n, k, m) in [(5, 16, 2), (4, 16, 1), (4, 17, 2)] {
            let other = Params::insecure_toy(n, k, m, 3).unwrap();
            assert!(ct.check(&other).is_err(), "(n, k, m) = ({n}, {k}, {m})");
        }
        let back = LweCiphertext::from_bytes(&ct.to_bytes()).unwrap();
        assert_eq!(back, ct);
    }
}
