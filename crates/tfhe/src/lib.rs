//! coterie-tfhe: single-key TFHE and multi-key AKÖ TFHE (seed 003).
//!
//! # Layers (each uses only the ones above it)
//!
//! 1. **Entities** — data types and their encodings: the torus words ([`torus`], the one
//!    `coterie_math::torus::Torus`), LWE ciphertexts ([`lwe`]: the workspace's one
//!    `coterie_math::lwe::LweCiphertext`, which coterie-threshold also decrypts), GLWE and GGSW
//!    ciphertexts and keys ([`glwe`], [`ggsw`]), bootstrapping and key-switching keys.
//! 2. **Algorithms** — free functions named for what they do (TFHE-rs `core_crypto` style,
//!    buffers passed in): encryption, key switching (zero-mean digits of
//!    `coterie_math::gadget`), sample extraction, the external product on the Fourier engine
//!    ([`fourier`], with the gadget decomposition fused into the forward transform and checked
//!    against `coterie_math::gadget::SignedDecomposer`), blind rotation and programmable
//!    bootstrapping ([`bootstrap`]), public-key encryption ([`public_key`]).
//! 3. **Gates** — [`boolean`]: client/server keys, the one Boolean [`boolean::Gate`] list, gate
//!    and lookup-table bootstrapping.
//! 4. **Multi-key** — [`mk`]: AKÖ parameters, per-party keys, multi-key bootstrapping over the
//!    same algorithms and the same [`boolean::Gate`] list, distributed decryption, and the
//!    key-generation and decryption protocols over a `coterie_net::Mesh` (progress through a
//!    `coterie_base::progress::Progress` callback; cheating is tested by tampering with messages
//!    on a `coterie_net::TamperMesh`, with no hooks in the protocol).
//!
//! Everything stored or sent goes through [`serialization`]'s versioned, size-bounded encoding;
//! key files are written with `coterie_base::fsio`'s atomic durable writes.
//!
//! # Modules
//!
//! * [`torus`]: the discretized torus on `u32`/`u64` words.
//! * [`lwe`], [`glwe`], [`ggsw`]: keys and ciphertexts, encryption and decryption, key switching,
//!   sample extraction, external product and CMux (TFHE-rs `core_crypto`-style: entities and free
//!   functions named for what they do, buffers passed in).
//! * [`fourier`]: the negacyclic FFT engine on `tfhe-fft` (AVX-512 where the CPU has it), with
//!   the gadget decomposition fused into the forward transform.
//! * [`bootstrap`]: bootstrapping keys (coefficient and Fourier domain), blind rotation,
//!   programmable bootstrapping, lookup tables and message encoding.
//! * [`boolean`]: client/server keys, gate bootstrapping (NAND, AND, OR, NOR, XOR, XNOR, NOT) and
//!   lookup-table bootstrapping for 1–4 bit messages.
//! * [`public_key`]: GLWE public keys and public-key encryption (seed 003 `RLwePubEncr`,
//!   `RLweRevPubEncr`, GGSW rows from a public key).
//! * [`params`]: named parameter sets with their source and security estimate.
//! * [`noise`]: Gaussian noise and the standard TFHE variance formulas.
//! * [`serialization`]: versioned, size-bounded encoding of keys and ciphertexts.
//! * [`mk`]: AKÖ multi-key TFHE (seed 003): parameters, per-party key generation, multi-key
//!   bootstrapping with cost linear in the number of parties, distributed decryption, and the
//!   key-generation and decryption protocols over a `coterie_net::Mesh`.
//!
//! ```
//! use coterie_math::prg::Csprng;
//! use coterie_tfhe::boolean::{ClientKey, ServerKey};
//! use coterie_tfhe::params::TfheParams;
//! let mut rng = Csprng::new();
//! let params = TfheParams::insecure_toy_u32();
//! let ck = ClientKey::<u32>::generate(&params, &mut rng).unwrap();
//! let sk = ServerKey::new(&ck, &mut rng).unwrap();
//! let mut ev = sk.evaluator().unwrap();
//! let (a, b) = (ck.encrypt_bool(true, &mut rng), ck.encrypt_bool(true, &mut rng));
//! assert!(!ck.decrypt_bool(&ev.nand(&a, &b).unwrap()));
//! ```
#![warn(missing_docs)]

pub mod boolean;
pub mod bootstrap;
#[allow(unsafe_code)] // AVX-512 FFT kernels behind run-time checks, each block with its SAFETY note
pub mod fourier;
pub mod ggsw;
pub mod glwe;
pub mod lwe;
pub mod mk;
pub mod noise;
pub mod params;
pub mod public_key;
pub mod serialization;
pub mod torus;

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A parameter is out of range or inconsistent.
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// Decoded data is malformed, oversized or of an unknown version.
    #[error("malformed input: {0}")]
    Malformed(String),
    /// An error from coterie-math.
    #[error(transparent)]
    Math(#[from] coterie_math::Error),
    /// A party-runtime (network) error, including detected misbehaviour of a peer (a failed
    /// commitment opening, an inconsistent broadcast) and aborts.
    #[error(transparent)]
    Net(#[from] coterie_net::Error),
    /// A protocol check failed (e.g. the key-generation self-test decrypted wrongly).
    #[error("protocol check failed: {0}")]
    Protocol(String),
    /// File input/output.
    #[error("i/o: {0}")]
    Io(String),
    /// An internal invariant failed.
    #[error("internal error: {0}")]
    Internal(String),
}

/// Result type of this crate.
pub type Result<T> = core::result::Result<T, Error>;
