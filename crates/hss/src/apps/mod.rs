//! Applications of HSS (spec §6, paper §5) as library functions: each server's evaluation is a
//! plain function of its key and the public inputs, each client step a plain function of the two
//! servers' answers; the flows that move them over a [`coterie_net::Mesh`] are in [`service`].
//!
//! | module | application | spec |
//! |---|---|---|
//! | [`repo`] | the public repository clients upload ciphertexts to (a directory) | §6.1 |
//! | [`vote`] | majority and threshold votes, with or without leakage-absorbing pads | §6.1 |
//! | [`fs`] | policy-based file system: hidden DNF policies, file key `g^r` iff admitted | §6.2 |
//! | [`feed`] | private RSS feed: conjunction of interest tags per record, digests | §6.3 |
//! | [`pir`] | two-server PIR with boolean queries, syndrome decoding over F_(2^40) | §6.4 |
//! | [`correlated`] | bilinear-form and truth-table correlations, Beaver triples over Z_(2^n) | §6.5–§6.6 |
//! | [`service`] | the two servers and their clients over the mesh | §6.1–§6.4 |

pub mod correlated;
pub mod feed;
pub mod fs;
pub mod pir;
pub mod repo;
pub mod service;
pub mod vote;
