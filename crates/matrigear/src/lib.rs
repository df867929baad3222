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
//! | [`keys`] | F_KeyGen (§5.1): passively secure distributed key generation of pk, rlk and MatMul's `d − 1` rotation keys from additive secret shares; an insecure dealer for tests |
//! | [`ddec`] | Π_DDec (§5.4): distributed decryption into additive shares of the slots, smudged at the §9.13 scale, the openers alternating |
//! | [`triple`] | Π_Triple (§5.5): the MAC key (Diag proof), scalar triples, random values, batched `d × d` matrix triples, every share authenticated |
//! | [`producer`] | a coterie-spdz `Producer` over `F_p` (the engine and the crash-safe store take its material unchanged) with an owner-only state file |
//! | [`comm`] | the paper's communication formulas (Tables 3, 4) beside the exact payload this implementation sends |
//! | [`flows`] | what `coterie party … matrigear-prep` and `… matrigear-product` run |
//!
//! Local math is plain functions on values; every protocol is a driver over a coterie-net
//! `Mesh` that calls them between sends and receives.
//!
//! # Security
//!
//! Named parameter sets: Table 2's Params I (118-bit) and II (128-bit), as the paper estimates
//! them (Albrecht–Player–Scott estimator, uniform ternary secret); Toy-B is **insecure** and says
//! so in its name. The proof of plaintext knowledge, the MAC key, the triples and the distributed
//! decryption follow the paper's actively secure (dishonest-majority, with abort) flow; the key
//! generation is **passively secure** (the paper puts an actively secure setup out of scope). The
//! proof's sampler for non-integer centres is not constant time and works at `f64` precision
//! ([`randpack`]); the online MAC check catches any additive error a party introduces in the
//! distributed decryption.
//!
//! # Example: two parties, Toy-B
//!
//! ```
//! use coterie_matrigear::ProtocolParams;
//! use coterie_matrigear::producer::MatriGearProducer;
//! use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
//! use coterie_spdz::{Kind, Order, Producer};
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let mut tasks = Vec::new();
//! for mut mesh in InMemoryMesh::group(2, MeshOptions::default()) {
//!     tasks.push(tokio::spawn(async move {
//!         let pp = ProtocolParams::insecure_toy_b(2, 4).unwrap();
//!         // keys from an insecure dealer (tests only), then the proven MAC key
//!         let mut p = MatriGearProducer::insecure_setup_with_dealer(&mut mesh, pp, [1; 32])
//!             .await
//!             .unwrap();
//!         let order = Order::new().with(Kind::Triples, 8).with(Kind::MatrixTriples(4), 2);
//!         let prep = p.produce(&mut mesh, &order).await.unwrap();
//!         mesh.close().await.unwrap();
//!         prep
//!     }));
//! }
//! let mut preps = Vec::new();
//! for t in tasks {
//!     preps.push(t.await.unwrap());
//! }
//! coterie_spdz::verify::verify_material(&preps).unwrap(); // c = ab, C = AB, every MAC
//! # });
//! ```
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
