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

#[cfg(test)]
mod tests {
    use super::*;
    use coterie_math::lwe::LweCiphertext as Lwe;

    #[test]
    fn codec_roundtrip_and_refusals() {
        let mut rng = rand::rng();
        let sk = [1i64, 0, 1, 1];
        let ct = LweCiphertext::encrypt_with_secret_key(&sk, 3, -100, 16, 2, &mut rng);
        let bytes = ct.to_bytes();
        assert_eq!(LweCiphertext::from_bytes(&bytes).unwrap(), ct);
        assert!(LweCiphertext::from_bytes(&bytes[..bytes.len() - 1]).is_err());
        let h = bytes.len() - (8 + 8 * 5); // envelope header
        let mut bad = bytes.clone();
        bad[8] = 2; // another format version
        assert!(LweCiphertext::from_bytes(&bad).is_err());
        let mut bad = bytes.clone();
        bad[h + 4..h + 8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(LweCiphertext::from_bytes(&bad).is_err());
        let mut bad = bytes.clone();
        bad[h + 8 + 7] = 0xff; // a_0 ≥ 2^16
        assert!(LweCiphertext::from_bytes(&bad).is_err());
        let p = Params::insecure_toy(4, 16, 2, 3).unwrap();
        assert!(ct.check(&p).is_ok());
        assert!(
            ct.check(&Params::insecure_toy(5, 16, 2, 3).unwrap())
                .is_err()
        );
        assert!(
            ct.check(&Params::insecure_toy(4, 16, 1, 3).unwrap())
                .is_err()
        );
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
        let b = Lwe::encrypt_body(&a, &sk, 3, -100, 16, 2);
        assert_eq!(b, 50054);
        let mut data = a.to_vec();
        data.push(b);
        let ct = Lwe::from_body_last(&data, 16, 2).unwrap();
        assert_eq!(ct.phase_with_secret_key(&sk), 49052);
    }
}
