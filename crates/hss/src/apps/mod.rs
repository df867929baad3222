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
//!
//! The CLI runs every application as processes (`coterie party … hss-setup | hss-vote |
//! hss-feed | hss-pir | hss-triples | hss-fs`, `coterie hss upload | fs-setup | fs-publish`,
//! `coterie demo hss-vote | hss-feed | hss-pir | hss-triples | hss-fs`).
//!
//! # Security model
//!
//! The paper's: semi-honest servers that do not collude, 80-bit security on the 1536-bit group
//! with a 160-bit short-exponent ElGamal key under circular security (spec §2). `HssPrep`'s
//! triples are authenticated and sacrificed as coterie-spdz's OT producer's are, so a
//! malicious party is caught in the online phase; the HSS part that makes them is semi-honest.
//!
//! # Left out (and why)
//!
//! * Cryptographic capsules (§6.7): the paper describes a future direction (locality-`k` PRG
//!   expansion inside HSS) without a construction concrete enough to implement.
//! * PIR's unknown-bound mode (§6.4, `n = 1, 2, 4, …` with common subsampling): the client
//!   chooses `t` and re-runs with a larger one on a decoding error ([`pir`]).
//! * The file system ([`fs`], flows in [`service`]) has the data owner as the dealer of its own
//!   secret-key HSS keys (the paper's model); how attributes are certified, and policy updates
//!   and revocation, are outside the paper's outline (see the module); the owner hands the
//!   servers their headers and shares through their directories, not over the mesh.
//! * ESDH ciphertext compression ([`crate::esdh`]) is not wired into the applications' uploads:
//!   the votes' ciphertexts are the uncompressed `L1` encodings (and pads exclude compression,
//!   paper §5).
//! * `HssPrep` is a library producer benchmarked against `OtPrep` and tested on the SPDZ
//!   engine; it has no `coterie party` role that fills a store (it makes triples only, while the
//!   engine's online demo also needs input masks); `hss-triples` runs the correlation itself as
//!   processes.

pub mod correlated;
pub mod feed;
pub mod fs;
pub mod pir;
pub mod repo;
pub mod service;
pub mod vote;
