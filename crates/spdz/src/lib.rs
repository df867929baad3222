//! # coterie-spdz
//!
//! The arithmetic black box (seed 000 §3, F_ABB) for a dishonest majority with abort:
//! authenticated additive secret sharing with information-theoretic MACs.
//!
//! ## Layers
//!
//! From the bottom up; each layer only uses the ones below it.
//!
//! 1. **Rings** ([`ring`]): one trait, [`Ring`], for `Z_{2^k}` with MAC ring `Z_{2^{k+s}}`
//!    (SPDZ_2k, Cramer–Damgård–Escudero–Scholl–Xing, CRYPTO 2018; `k = 32, 64`, `s = 64`) and
//!    `F_p` for primes up to 4096 bits (SPDZ; a word-size fast path for `p < 2^62`). A ring fixes
//!    the share ring, the MAC key space and the fixed-width wire encoding.
//! 2. **Shares** ([`prep`]): [`Share`] `(x_i, m_i)` with `Σ m_i = α·Σ x_i`, and the material
//!    built from them: [`Triple`], [`InputMask`], [`MatrixTriple`]. The kinds of material are
//!    one table ([`kind`]: [`Kind`], [`KINDS`]) giving each kind's name, file and element count.
//! 3. **Engine** ([`engine`]): the online phase, generic over the ring: input, linear
//!    operations, Beaver multiplication, batched and truncated openings, random bits, MAC
//!    checks, and authentication of plain shares; runs over any coterie-net `Mesh`.
//! 4. **Preprocessing trait** ([`Preprocessing`]): what the engine consumes, one party's source
//!    of fresh material that is never handed out twice. [`VecPrep`] (in memory), [`PrepStore`]
//!    (on disk) and [`prep::DowncastPrep`] implement it.
//! 5. **Producers** ([`producer`]): the [`Producer`] trait — one party's protocol that makes an
//!    [`Order`] of material under its MAC key share — with [`OtPrep`] (SPDZ_2k by oblivious
//!    transfer, [`ot`], [`softspoken`] and [`ot_prep`]; secure with abort against a malicious
//!    dishonest majority, argued in `docs/spdz-ot-security.md`) and the **insecure**
//!    [`InsecureSeededDealer`] / [`InsecureDealer`] for tests and online benchmarks. HE- and
//!    HSS-based producers implement the same trait in their crates and authenticate plain
//!    shares through an [`Authenticator`] ([`authenticate`]); [`verify`] checks any
//!    producer's output in tests.
//! 6. **Store** ([`store`]): the per-party on-disk [`PrepStore`], filled from any producer
//!    ([`producer::produce_into_store`]) and consumed by the engine, with a durable cursor: every
//!    item is marked used before it is used, so a crash never reuses one.
//!
//! [`tools`] holds the drivers the command line calls; [`wire`] the envelopes on the wire.
//!
//! ```
//! use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
//! use coterie_spdz::{Counts, Engine, InsecureDealer, Ring, Z2k};
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let ring = Z2k::spdz2k_64();
//! let mut rng = rand::rng();
//! let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
//! let counts = Counts { triples: 1, randoms: 1, masks_per_party: 1, ..Counts::default() };
//! let preps = dealer.deal(counts, &mut rng);
//! let mut tasks = Vec::new();
//! for (mut mesh, prep) in InMemoryMesh::group(2, MeshOptions::default()).into_iter().zip(preps) {
//!     tasks.push(tokio::spawn(async move {
//!         let mut e = Engine::new(prep);
//!         let me = mesh.id();
//!         let x = e.input(&mut mesh, 0, (me == 0).then_some(&[6u128][..]), 1).await?;
//!         let y = e.input(&mut mesh, 1, (me == 1).then_some(&[7u128][..]), 1).await?;
//!         let z = e.mul(&mut mesh, &x, &y).await?;
//!         let out = e.open_checked(&mut mesh, &z).await?;
//!         mesh.close().await?;
//!         Ok::<u128, coterie_spdz::Error>(out[0])
//!     }));
//! }
//! for t in tasks {
//!     assert_eq!(t.await.unwrap().unwrap(), 42);
//! }
//! # });
//! ```
#![warn(missing_docs)]

pub mod authenticate;
pub mod cope;
pub mod engine;
mod error;
pub mod flows;
pub mod kind;
pub mod ot;
pub mod ot_prep;
pub mod prep;
pub mod producer;
pub mod ring;
pub mod softspoken;
pub mod store;
pub mod tools;
mod vaes;
pub mod verify;
pub mod wire;

#[cfg(test)]
mod tests;

pub use authenticate::Authenticator;
pub use engine::{Engine, PendingSingleCheck};
pub use error::{Error, Result};
pub use kind::{KINDS, Kind, KindRow};
pub use ot_prep::{OtExtension, OtLanes, OtPrep};
pub use prep::{
    Counts, InputMask, InsecureDealer, MatrixTriple, Preprocessing, Share, Triple, VecPrep,
};
pub use producer::{InsecureSeededDealer, Order, Producer};
pub use ring::{BigElem, Fp64, FpBig, PrimeField, Ring, RingDescriptor, Z2k};
pub use store::PrepStore;
