//! # coterie-threshold
//!
//! Threshold decryption of LWE ciphertexts by MPC rounding, without noise flooding (seed 000:
//! Zyskind, Leibovich, Zarchy, Peikert, CCS '25), on the SPDZ_2k engine of coterie-spdz.
//!
//! # Layers (each uses only the ones above it)
//!
//! 1. **Parameters** — [`params`]: `(n, q = 2^k, p = 2^m)` and the digit split; the LWE
//!    ciphertexts themselves are the workspace's one type, `coterie_math::lwe::LweCiphertext`
//!    ([`ciphertext`]: its versioned envelope format, the TFHE-rs body-last import, modulus
//!    switching), so coterie-tfhe's outputs come in without a bridge.
//! 2. **Keys** — [`keys`]: distributed generation, import from one holder, key segments input
//!    by several parties (multi-key TFHE), public LWE samples.
//! 3. **Gates** — [`linmaps`], [`gates`]: Sign / ModLTZ gate preprocessing inside the ABB,
//!    with [`plain`] as the plaintext reference.
//! 4. **Online schedules** — [`online`] (strict), [`pipelined`] (5 rounds, and the strict
//!    9-round per-value-check schedule). Cheating parties are tested by tampering with their
//!    messages on a `coterie_net::TamperMesh`; no cheat hook lives in this crate.
//! 5. **Store** — [`store`]: the per-party gate store (bit-packed with `coterie_base::bits`,
//!    written with `coterie_base::fsio`'s atomic durable writes, a durable consumption cursor).
//! 6. **Service** — [`service`]: the decryption node (coordinator and followers, background
//!    gate top-up, batching), and [`demo`].
//! 7. **Flows** (what `coterie` runs) — [`node`]: a service node on its SPDZ_2k store (key
//!    generation or loading, gate pool, node 0's client listener) and the demo flow;
//!    [`client`]: the service's client protocol over `coterie_net::channel`;
//!    [`mk_rounding`]: flooding-free decryption of a multi-key TFHE ciphertext from each party's
//!    key segment.
//!
//! # Modules
//!
//! * [`params`]: `(n, q = 2^k, p = 2^m)` and the digit split `(b, d, b')`; `round_p`.
//! * [`linmaps`]: the structured linear maps subset products → Sign / Carry / ModLTZ tables.
//! * [`plain`]: plaintext reference of every procedure (for tests and documentation).
//! * [`gates`]: gate preprocessing inside the ABB (PrepSubsetProds, PrepSign, PrepModLTZ),
//!   batched over many gates by multiplication depth.
//! * [`online`]: LTRand, Mod, ModLTZ and Π_Decrypt for batches of ciphertexts (strict schedule).
//! * [`keys`]: distributed key generation (binary, ternary) with public LWE samples, and import
//!   of an existing key from one holder.
//! * [`ciphertext`]: the one LWE ciphertext type on 64-bit words, with a versioned, bounded
//!   binary format; modulus switching from any `q` to `2^k`.
//! * [`pipelined`]: Π_Decrypt with overlapped openings and checks (5 rounds instead of 15), and
//!   the strict 9-round schedule with per-value checks.
//! * [`store`]: per-party on-disk gate store with a durable consumption cursor.
//! * [`service`]: the decryption node behind `coterie party ... threshold` (coordinator and
//!   followers, background gate top-up, batching of concurrent requests).
//! * [`statement`]: the nodes' signed statements of each decryption, which let a client accept a
//!   result only when every node agrees (a lying node is named).
//! * [`demo`]: the self-checking end-to-end run behind `coterie demo threshold`.
//! * [`node`], [`client`], [`mk_rounding`]: the flows behind `coterie party ... threshold`,
//!   `coterie decrypt` / `threshold-encrypt` and `coterie party ... mktfhe --mpc-rounding`.
//!
//! Two parties, **toy** parameters, **insecure** dealer material (tests only):
//!
//! ```
//! use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
//! use coterie_spdz::{Counts, Engine, InsecureDealer, Z2k};
//! use coterie_threshold::gates::{GatePool, prep_bundles};
//! use coterie_threshold::keys::SharedKey;
//! use coterie_threshold::online::decrypt;
//! use coterie_threshold::{LweCiphertext, Params};
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let p = Params::insecure_toy(4, 16, 2, 3).unwrap(); // n = 4, q = 2^16, p = 4, b = 3
//! let lt = p.lt().unwrap();
//! let sk = [1i64, 0, 1, 1];
//! let mut rng = rand::rng();
//! let ct = LweCiphertext::encrypt_with_secret_key(&sk, 3, -100, 16, 2, &mut rng);
//! let ring = Z2k::new(16, 64).unwrap();
//! let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
//! let counts = Counts {
//!     triples: lt.mults_per_bundle(),
//!     bits: lt.bits_per_bundle(),
//!     randoms: 3,
//!     masks_per_party: 0,
//! };
//! let keys = SharedKey::insecure_deal(&dealer, &ring, &sk, &mut rng);
//! let mut tasks = Vec::new();
//! let parties = InMemoryMesh::group(2, MeshOptions::default());
//! for ((mut mesh, prep), key) in parties.into_iter().zip(dealer.deal(counts, &mut rng)).zip(keys) {
//!     let ct = ct.clone();
//!     tasks.push(tokio::spawn(async move {
//!         let mut eng = Engine::new(prep);
//!         let (bundles, _) = prep_bundles(&mut eng, &mut mesh, &lt, 1, 0).await?;
//!         let mut pool = GatePool::new(lt);
//!         pool.push(bundles)?;
//!         let mu = decrypt(&mut eng, &mut mesh, &p, &key, &[ct], &mut pool).await?;
//!         mesh.close().await.ok();
//!         Ok::<_, coterie_threshold::Error>(mu)
//!     }));
//! }
//! for t in tasks {
//!     assert_eq!(t.await.unwrap().unwrap(), vec![3]);
//! }
//! # });
//! ```
#![warn(missing_docs)]

pub mod ciphertext;
pub mod client;
pub mod demo;
mod error;
pub mod gates;
pub mod keys;
pub mod linmaps;
pub mod metrics;
pub mod mk_rounding;
pub mod node;
pub mod online;
pub mod params;
pub mod pipelined;
pub mod plain;
pub mod service;
pub mod statement;
pub mod store;
pub mod tfhers;

pub use ciphertext::LweCiphertext;
pub use error::{Error, Result};
pub use gates::{GateBundle, GatePool};
pub use keys::SharedKey;
pub use params::{LtParams, Params, round_p};
