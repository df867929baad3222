//! AKÖ multi-key TFHE (seed 003; Akın, Klemsa, Önen): `k` parties with independent keys,
//! Boolean circuits evaluated on ciphertexts under all their keys, bootstrapping cost linear in
//! `k`.
//!
//! * [`params`]: Table 3's parameter sets for 2…512 parties, the noise model (Eq. 14 as
//!   corrected in the spec), expected error rates and key sizes.
//! * [`keygen`]: key generation as plain per-party functions (static and dynamic variants) and
//!   the public combine functions; exact integer products throughout.
//! * [`eval`]: multi-key bootstrapping (concatenated LWE key, summed RLWE key, two-part
//!   accumulator, multi-key key switching) and the gates (the one [`crate::boolean::Gate`] list
//!   of single-key TFHE); the paper's blind-rotation sign error is fixed there.
//! * [`decrypt`]: distributed decryption (partial decryptions with smudging noise) and the form
//!   coterie-threshold's MPC rounding takes (flooding-free): the same LWE ciphertext type, with
//!   the message re-encoded.
//! * [`protocol`]: key generation and decryption over a [`coterie_net::Mesh`], with progress
//!   through a `coterie_base::progress::Progress` callback and versioned on-disk key material.
//! * [`demo`]: the demo flow behind `coterie party ... mktfhe` (key generation, `x > y` on two
//!   parties' inputs, joint decryption, checked).
//!
//! ```
//! use coterie_math::prg::Csprng;
//! use coterie_tfhe::mk::{keygen::*, eval::*, params::MkParams};
//! let mut rng = Csprng::new();
//! let params = MkParams::insecure_toy(2);
//! let crs = Crs { seed: [7; 32] };
//! let sks: Vec<_> = (0..2).map(|q| MkSecretKey::generate(&params, q, &mut rng).unwrap()).collect();
//! let pks: Vec<_> = sks.iter().map(|sk| public_key_share(&params, &crs, sk, &mut rng).unwrap()).collect();
//! let pk = combine_public_key(&params, &crs, &pks).unwrap();
//! let bsk: Vec<_> = sks.iter().map(|sk| bootstrap_key_share(&params, &pk, sk, &mut rng).unwrap()).collect();
//! let ksk: Vec<_> = sks.iter().map(|sk| keyswitch_key_share(&params, sk, &mut rng).unwrap()).collect();
//! let ek = combine_evaluation_key(&params, &bsk, &ksk).unwrap();
//! let server = MkServerKey::new(&ek).unwrap();
//! let mut ev = server.evaluator().unwrap();
//! let a = embed(&sks[0].encrypt_bool_local(&params, true, &mut rng).unwrap(), 0, 2).unwrap();
//! let b = embed(&sks[1].encrypt_bool_local(&params, true, &mut rng).unwrap(), 1, 2).unwrap();
//! let c = ev.nand(&a, &b).unwrap();
//! assert!(!decrypt_bool_with_all_keys(&[&sks[0], &sks[1]], &c));
//! ```

pub mod decrypt;
pub mod demo;
pub mod eval;
pub mod keygen;
pub mod params;
pub mod protocol;
pub mod wire;

#[cfg(test)]
mod tests;
