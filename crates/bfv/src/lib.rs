//! # coterie-bfv
//!
//! Full-RNS BFV (Brakerski / Fan–Vercauteren) on coterie-math: the scheme that seed 001's
//! multi-key BFV and seed 002's generalized BFV build on.
//!
//! # Layers
//!
//! 1. **RLWE layer** — keys, gadget ciphertexts and gadget products, key switching. A
//!    [`SecretKey`] `s`, RLWE samples `(−a·s + e, a)`, the [`GadgetCiphertext`] of a message
//!    under a gadget ([`Decomposition::Rns`] or [`Decomposition::PowerOfTwo`]), the public
//!    [`eval::gadget_product`], and on it key switching ([`KeySwitchKey`] = a gadget encryption
//!    of the source key), relinearization and Galois automorphisms. Collective keys from shares
//!    over a common reference string are in [`multiparty`]. Nothing here depends on the
//!    plaintext modulus.
//! 2. **BFV** on top — ciphertexts of any number of parts over an ordered [`KeySet`] (single
//!    key: powers of `s`; multi-key: user ids), encryption (also with caller-supplied
//!    [`EncRandomness`]), decryption, the public [`eval::tensor`] and [`eval::scale_and_round`]
//!    (`mul_no_relin` is their composition), plaintext operations and modulus switching.
//! 3. **Plaintext modulus types** ([`PlaintextModulus`]) — a scalar `t` (`Δ = ⌊Q/t⌋`, SIMD
//!    batching when `t ≡ 1 mod 2N`) or MatriGear's cyclotomic `X^D − b`, `p = b^M + 1`
//!    (seed 002 §3: `Δ` a polynomial, decryption and the scale-and-round through the exact
//!    product by `X^D − b`, plaintexts as a small lift and a representative over `Z_p`). The
//!    modulus only enters through `Δ`, the scale-and-round numerator and the decryption rounding.
//!
//! | module | what it holds |
//! |---|---|
//! | [`params`] | parameter sets as values: HE-standard 128-bit sets N = 2^12…2^15, seed 001's set, MatriGear's Params I, II and III, the plaintext modulus type |
//! | [`context`] | per-level precomputation (rings, exact base extension, exact scale-and-round, Δ) |
//! | [`keys`] | secret (ternary / Gaussian), public keys, gadget ciphertexts / key switching keys, relinearization and Galois keys |
//! | [`matmul`] | seed 002's encrypted `d × d` matrix products: (shifted-)diagonal encodings, Algorithm 1 with `d − 1` rotation keys |
//! | [`multiparty`] | collective public, relinearization and Galois keys from shares over a common reference string |
//! | [`mk`] | seed 001's multi-key BFV: relinearization keys over a CRS, HomMul with CDKS19's two relinearizations, threshold decryption with smudging |
//! | [`reenc`] | seed 001's threshold proxy re-encryption: masking keys, re-encryption key shares, proxy shares, combination, decryption by the delegatee |
//! | [`mk_noise`] | seed 001's noise estimator (variance-based, checked against the measured noise and the failure points) |
//! | [`reenc_party`] | seed 001's parties over a `Mesh`: users, proxies, computing server, receiver; key generation, ReKeyGen, evaluation, threshold decryption and re-encryption as steps over owner-only state files |
//! | [`encoding`] | plaintexts, coefficient encoding (any `t`), SIMD batching (`t ≡ 1 mod 2N`), cyclotomic lifts |
//! | [`ciphertext`] | ciphertexts over a key set, add/sub/neg, plaintext ops, modulus switching |
//! | [`encrypt`] | encryption (public key, given randomness, symmetric), decryption |
//! | [`eval`] | tensor, scale-and-round, gadget product, multiplication, relinearization, rotations |
//! | [`noise`] | noise measurement (invariant noise, budget; the canonical norm for `X^D − b`) and noise bounds (worst case for `t`; the paper's lemmas for `X^D − b`) |
//! | [`serial`] | versioned, bounded serialization of keys, plaintexts and ciphertexts (polynomials packed at `log q` bits per coefficient) |
//! | [`slots`] | the `D` slots of a cyclotomic plaintext ring (Pack/Unpack) and their rotations `φ^r` |
//!
//! ```
//! use coterie_bfv::{Context, Params, Plaintext, SecretKey};
//! use coterie_math::prg::Csprng;
//! let ctx = Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap();
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
pub mod encrypt;
pub mod error;
pub mod eval;
pub mod keys;
pub mod matmul;
pub mod mk;
pub mod mk_noise;
pub mod multiparty;
pub mod noise;
pub mod params;
pub mod reenc;
pub mod reenc_party;
pub mod serial;
pub mod slots;

pub use ciphertext::{Ciphertext, KeySet, SeededCiphertext};
pub use context::Context;
pub use encoding::Plaintext;
pub use encrypt::EncRandomness;
pub use error::{Error, Result};
pub use eval::{Extended, Tensor, gadget_product, scale_and_round, tensor};
pub use keys::{
    Decomposition, GadgetCiphertext, GaloisKey, GaloisKeys, KeySwitchKey, PublicKey, RelinKey,
    SecretKey,
};
pub use params::{Params, PlaintextModulus, SecretDistribution};
