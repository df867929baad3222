//! # coterie-threshold
//!
//! Threshold decryption of LWE ciphertexts by MPC rounding, without noise flooding (seed 000:
//! Zyskind, Leibovich, Zarchy, Peikert, CCS '25), on the SPDZ_2k engine of coterie-spdz.
//!
//! * [`params`]: `(n, q = 2^k, p = 2^m)` and the digit split `(b, d, b')`; `round_p`.
//! * [`linmaps`]: the structured linear maps subset products → Sign / Carry / ModLTZ tables.
//! * [`plain`]: plaintext reference of every procedure (for tests and documentation).
//! * [`gates`]: gate preprocessing inside the ABB (PrepSubsetProds, PrepSign, PrepModLTZ),
//!   batched over many gates by multiplication depth.
//! * [`online`]: LTRand, Mod, ModLTZ and Π_Decrypt for batches of ciphertexts (strict schedule).
//! * [`keys`]: distributed key generation (binary, ternary) with public LWE samples, and import
//!   of an existing key from one holder.
//! * [`ciphertext`]: raw LWE ciphertexts with a versioned, bounded binary format.
#![warn(missing_docs)]

pub mod ciphertext;
mod error;
pub mod gates;
pub mod keys;
pub mod linmaps;
pub mod online;
pub mod params;
pub mod plain;

pub use ciphertext::LweCiphertext;
pub use error::{Error, Result};
pub use gates::{GateBundle, GatePool};
pub use keys::SharedKey;
pub use params::{LtParams, Params, round_p};
