//! # coterie-spdz
//!
//! The arithmetic black box (seed 000 §3, F_ABB) for a dishonest majority with abort:
//! authenticated additive secret sharing with information-theoretic MACs.
//!
//! * [`ring`]: the rings, behind one trait — `Z_{2^k}` with MAC ring `Z_{2^{k+s}}` (SPDZ_2k,
//!   Cramer–Damgård–Escudero–Scholl–Xing, CRYPTO 2018; `k = 32, 64`, `s = 64`) and `F_p` for
//!   primes up to 4096 bits (SPDZ; a word-size fast path for `p < 2^62`).
//! * [`engine`]: the online phase, generic over the ring: input, linear operations, Beaver
//!   multiplication, batched and truncated openings, random bits, MAC checks; runs over any
//!   coterie-net `Mesh`.
//! * [`prep`]: the [`Preprocessing`] trait the engine consumes, in-memory material, the
//!   **insecure** trusted dealer for tests and online benchmarks, and down-casting.
//! * [`ot`], [`ot_prep`]: SPDZ_2k preprocessing by oblivious transfer for any number of parties
//!   ([`OtPrep`]: Chou–Orlandi base OTs, KOS extension, Gilboa products with the combine step
//!   against selective failure, COPE authentication with its check, the sacrifice, random bits),
//!   secure with abort against a malicious dishonest majority as documented in [`ot_prep`].
//! * [`store`]: the per-party on-disk preprocessing store with a durable consumption cursor.
//! * [`tools`]: drivers for the command line (stores from the insecure dealer or from
//!   [`OtPrep`], with a progress bar on a terminal; an online demo).
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

pub mod engine;
mod error;
pub mod ot;
pub mod ot_prep;
pub mod prep;
pub mod ring;
pub mod store;
pub mod tools;

#[cfg(test)]
mod tests;

pub use engine::{Engine, PendingSingleCheck};
pub use error::{Error, Result};
pub use ot_prep::OtPrep;
pub use prep::{Counts, InputMask, InsecureDealer, Kind, Preprocessing, Share, Triple, VecPrep};
pub use ring::{BigElem, Fp64, FpBig, PrimeField, Ring, RingDescriptor, Z2k};
pub use store::PrepStore;
