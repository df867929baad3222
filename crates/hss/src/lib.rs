//! # coterie-hss — homomorphic secret sharing from DDH
//!
//! The scheme of Boyle, Couteau, Gilboa, Ishai and Orrù, *Homomorphic Secret Sharing:
//! Optimizations and Applications* (CCS 2017), implemented from `shared/specs/seed004.md`
//! (§1–§4, §6). Two servers hold evaluation keys (additive shares of a 160-bit ElGamal key `c`)
//! and evaluate restricted-multiplication straight-line (RMS) programs on ElGamal-encoded inputs
//! **without talking to each other**; outputs are additive shares, and a wrong output is only
//! possible when **both** servers flag a possible failure (Las Vegas correctness, Def. 2.1).
//!
//! ## Layers
//!
//! Each layer uses only the ones above it; local math is separate from protocol flow
//! (ARCHITECTURE.md rule 1).
//!
//! 1. **Group** — [`group`]: the conversion-friendly group `p = 2^1536 − 11510609`, `g = 2`,
//!    with the special-form reduction and fixed-base exponentiation; insecure toy groups
//!    (`GroupId::InsecureToy*`) for statistics.
//! 2. **Conversion** — [`convert`]: `Convert*` (distributed discrete log) with the `1 0^d`
//!    pattern, word scan with the paper's lookup table, separated distinguished points, flags.
//! 3. **Scheme** — [`scheme`], plain functions on values, in four modules re-exported at
//!    `scheme::*`: `params` ([`scheme::Params`], Table 3 rows), `keys` ([`scheme::PublicKey`],
//!    [`scheme::EvalKey`], [`scheme::SecretKey`], [`scheme::insecure_keygen_trusted_dealer`]),
//!    `encrypt` ([`scheme::Encryptor`] for `L1(x)`, [`scheme::PreparedInput`], secret-key
//!    sharing [`scheme::share_l2_secret_key`]) and `evaluator` ([`scheme::Evaluator`]: `Pair`,
//!    `Mult`, `RandMult`, terminal multiplications, outputs; [`scheme::reconstruct`]). Beside
//!    it, the variants of the scheme: [`esdh`] (ESDH ciphertext compression, spec §4.3) and
//!    [`leakage`] (leakage-absorbing pads `MPair`/`MMult` and the key sharing against leakage).
//! 4. **Programs** — [`program`]: RMS programs and their builder, branching programs, formulas,
//!    threshold formulas, evaluated by one server on its [`scheme::Evaluator`].
//! 5. **Protocols** — [`protocol`]: the two-party flows over `coterie-net`'s `Mesh` —
//!    distributed key generation (Fig. 1's output, with a direct protocol in place of its generic
//!    2PC), distributed generation of level-2 shares (Fig. 2) and leakage pads from two OTs, on a
//!    base 1-out-of-n OT in this crate. The evaluation itself needs no protocol: the two servers
//!    never talk.
//! 6. **Applications** — [`apps`] (spec §6, paper §5): the public repository, majority and
//!    threshold votes (plain, or under leakage-absorbing pads), the private RSS feed, two-server
//!    PIR with boolean queries, bilinear-form, Beaver-triple, matrix and truth-table correlations
//!    (with `HssPrep`, a producer for coterie-spdz's engine), the policy-based file system, and
//!    the two servers' and the client's flows over a mesh ([`apps::service`]).
//!
//! Everything stored or sent (keys, `L1` inputs, share batches, programs, ESDH keys and
//! ciphertexts) implements `coterie_base::Versioned` and is encoded by [`scheme::to_bytes`] /
//! decoded by [`scheme::from_bytes`] in the coterie envelope, with a size bound; a decoded value
//! is then checked by its `validate` method.
//!
//! # Example
//!
//! A client shares two bits, the servers evaluate `x0·x1` separately, the client reconstructs:
//!
//! ```
//! use coterie_hss::program::{EvalOptions, ProgramBuilder, eval};
//! use coterie_hss::scheme::{Evaluator, Params, PreparedInput, insecure_keygen_trusted_dealer, reconstruct};
//! use coterie_math::bigint::BigInt;
//! use rand::SeedableRng;
//! let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(9); // insecure fixed seed
//! let (pk, ek0, ek1, _) =
//!     insecure_keygen_trusted_dealer(&Params::insecure_toy(4, 16, 10), &mut rng).unwrap();
//! let mut b = ProgramBuilder::new(2);
//! let x0 = b.load(0);
//! let y = b.mul(1, x0);
//! b.output(y, 2);
//! let prog = b.build();
//! let enc = pk.encryptor().unwrap();
//! let inputs: Vec<_> = [1, 1]
//!     .iter()
//!     .map(|&v| PreparedInput::new(&pk, &enc.encrypt(&pk, &BigInt::from(v), &mut rng), false).unwrap())
//!     .collect();
//! let mut e0 = Evaluator::new(&pk, &ek0, 0).unwrap();
//! let mut e1 = Evaluator::new(&pk, &ek1, 0).unwrap();
//! let o0 = eval(&mut e0, &prog, &inputs, None, EvalOptions::default()).unwrap();
//! let o1 = eval(&mut e1, &prog, &inputs, None, EvalOptions::default()).unwrap();
//! if !(o0.flagged && o1.flagged) {
//!     assert_eq!(reconstruct(&o0.outputs[0], &o1.outputs[0], &BigInt::from(2)).unwrap(), 1);
//! }
//! ```
//!
//! ## Conventions (spec §11 decisions)
//! * Shares use the **difference convention** `x_0 = x_1 + x` everywhere (spec §2); outputs are
//!   reconstructed as `O_0 − O_1 mod β`.
//! * Shares are **integers** (not reduced mod `q`); `Pair` adds public power-of-two offsets to
//!   the exponents so that both are nonnegative (the offsets cancel in `h_0 / h_1`), the bounds
//!   being public functions of the program, so no inversion is needed.
//! * Key digits are little-endian: `c = Σ B^(i−1) c_i`.

#![warn(missing_docs)]

pub mod apps;
pub mod convert;
pub mod esdh;
pub mod group;
pub mod leakage;
pub mod program;
pub mod protocol;
pub mod scheme;

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A parameter is outside its supported range.
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// Input from outside the process is malformed, oversized or of the wrong version.
    #[error("malformed input: {0}")]
    Malformed(String),
    /// A program is ill-formed (bad reference, magnitude bound exceeded, ...).
    #[error("invalid program: {0}")]
    Program(String),
    /// A two-party protocol failed (network error or a check).
    #[error("protocol failure: {0}")]
    Protocol(String),
    /// An error from the network layer.
    #[error(transparent)]
    Net(#[from] coterie_net::Error),
    /// An envelope or file error from the shared infrastructure (wrong tag or version,
    /// truncated or oversized input).
    #[error(transparent)]
    Base(#[from] coterie_base::Error),
}

/// Result type of this crate.
pub type Result<T> = std::result::Result<T, Error>;
