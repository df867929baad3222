//! # coterie-bfv
//!
//! Full-RNS BFV (Brakerski / Fan–Vercauteren) on coterie-math: the single-key scheme that seed
//! 001's multi-key BFV and seed 002's generalized BFV build on.
//!
//! | module | what it holds |
//! |---|---|
//! | [`params`] | parameter sets as values: HE-standard 128-bit sets N = 2^12…2^15, seed 001's set |
//! | [`context`] | per-level precomputation (rings, exact base extension, exact scale-and-round) |
//! | [`keys`] | secret (ternary / Gaussian), public, relinearization and Galois keys |
//! | [`encoding`] | plaintexts, coefficient encoding (any `t`), SIMD batching (`t ≡ 1 mod 2N`) |
//! | [`ciphertext`] | encryption, decryption, add/sub/neg, plaintext ops, product with relinearization, rotations, modulus switching |
//! | [`noise`] | noise measurement (invariant noise, budget) and worst-case noise bounds |
//! | [`serial`] | versioned, bounded serialization of keys, plaintexts and ciphertexts |
//!
//! ```
//! use coterie_bfv::{Context, Params, Plaintext, SecretKey};
//! use coterie_math::prg::Csprng;
//! let ctx = Context::new(Params::toy_insecure(256, 65537).unwrap()).unwrap();
//! let mut rng = Csprng::new();
//! let sk = SecretKey::generate(&ctx, &mut rng);
//! let pk = sk.public_key(&mut rng);
//! let rlk = sk.relin_key(&mut rng);
//! let x = pk.encrypt(&Plaintext::encode_simd(&ctx, &[3, 4]).unwrap(), &mut rng).unwrap();
//! let y = pk.encrypt(&Plaintext::encode_simd(&ctx, &[5, 6]).unwrap(), &mut rng).unwrap();
//! let z = x.mul(&y, &rlk).unwrap();
//! assert_eq!(&sk.decrypt(&z).unwrap().decode_simd().unwrap()[..2], &[15, 24]);
//! ```
#![warn(missing_docs)]

pub mod ciphertext;
pub mod context;
pub mod encoding;
pub mod error;
pub mod keys;
pub mod noise;
pub mod params;
pub mod serial;

pub use ciphertext::{Ciphertext, SeededCiphertext};
pub use context::Context;
pub use encoding::Plaintext;
pub use error::{Error, Result};
pub use keys::{GaloisKey, GaloisKeys, KeySwitchKey, PublicKey, RelinKey, SecretKey};
pub use params::{Params, SecretDistribution};
