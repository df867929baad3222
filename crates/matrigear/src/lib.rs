//! # coterie-matrigear
//!
//! MatriGear (Cha, Hwang, Min, Seo, Song; seed 002): SPDZ preprocessing over a prime field
//! `F_p` of 128 to 4096 bits by homomorphic encryption — a MAC key, scalar triples and `d × d`
//! matrix triples, every share authenticated — on coterie-bfv's generalized BFV (plaintext ring
//! `Z_p[X]/(X^D − b)`, `p = b^M + 1`) and its encrypted matrix product.
//!
//! | module | what it holds |
//! |---|---|
//! | [`params`] | protocol parameters: Table 2's sets, Toy-B, PoPK widths and repetitions, bounds, the §5.6 modulus check, the DDec smudging bound |
//! | [`randpack`] | randomized packing (§5.2): a discrete Gaussian on the coset `Pack(m) + (X^D − b)R`, both flags |
//! | [`popk`] | the n-party proof of plaintext knowledge Π_PoPK (§5.3): prover and verifier steps and the driver over a `Mesh` |
//!
//! Local math is plain functions on values; every protocol is a driver over a coterie-net
//! `Mesh` that calls them between sends and receives.
#![warn(missing_docs)]

pub mod comm;
pub mod ddec;
mod error;
pub mod flows;
pub mod keys;
pub mod params;
pub mod popk;
pub mod producer;
pub mod randpack;
pub mod triple;

pub use error::{Error, PopkCheck, Result};
pub use params::{Flag, ProtocolParams, Security};
