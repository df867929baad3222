//! # coterie-hss — homomorphic secret sharing from DDH
//!
//! The scheme of Boyle, Couteau, Gilboa, Ishai and Orrù, *Homomorphic Secret Sharing:
//! Optimizations and Applications* (CCS 2017), implemented from `shared/specs/seed004.md`
//! (§1–§4, §6). Two servers hold evaluation keys (additive shares of a 160-bit ElGamal key `c`)
//! and evaluate restricted-multiplication straight-line (RMS) programs on ElGamal-encoded inputs
//! **without talking to each other**; outputs are additive shares, and a wrong output is only
//! possible when **both** servers flag a possible failure (Las Vegas correctness, Def. 2.1).
//!
//! Modules:
//! * [`group`] — the conversion-friendly group `p = 2^1536 − 11510609`, `g = 2`, with the
//!   special-form reduction and fixed-base exponentiation; insecure toy groups for statistics.
//! * [`convert`] — `Convert*` (distributed discrete log) with the `1 0^d` pattern, word scan with
//!   the paper's lookup table, separated distinguished points, flags.
//! * [`scheme`] — keys, level-1/level-2 encodings, `Pair`, `Mult`, randomized `RandMult`,
//!   terminal multiplications (with the mod-β flag cancellation), large inputs, outputs.
//! * [`program`] — RMS programs and their builder, branching programs, formulas, threshold
//!   formulas, evaluation.
//! * [`esdh`] — ESDH ciphertext compression (public-key HSS, spec §4.3).
//! * [`leakage`] — leakage-absorbing pads (`MPair`, `MMult`) and the key-sharing against leakage.
//! * [`protocol`] — the two-party protocols over `coterie-net`: distributed key generation
//!   (Fig. 1's output, with a direct protocol in place of its generic 2PC), distributed
//!   generation of level-2 shares (Fig. 2) and leakage pads from two OTs, on a base
//!   1-out-of-n OT in this crate.
//!
//! ## Conventions (spec §11 decisions)
//! * Shares use the **difference convention** `x_0 = x_1 + x` everywhere (spec §2); outputs are
//!   reconstructed as `O_0 − O_1 mod β`.
//! * Shares are **integers** (not reduced mod `q`); `Pair` adds public power-of-two offsets to
//!   the exponents so that both are nonnegative (the offsets cancel in `h_0 / h_1`), the bounds
//!   being public functions of the program, so no inversion is needed.
//! * Key digits are little-endian: `c = Σ B^(i−1) c_i`.

#![warn(missing_docs)]

pub mod convert;
pub mod esdh;
pub mod group;
pub mod leakage;
pub mod program;
pub mod protocol;
pub mod scheme;

/// Version tag of every serialized type of this crate.
pub const FORMAT_VERSION: u16 = 1;

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
}

/// Result type of this crate.
pub type Result<T> = std::result::Result<T, Error>;
