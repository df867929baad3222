//! coterie-net: the party runtime every coterie protocol talks through.
//!
//! * [`Mesh`]: typed send/receive, broadcast and all-to-all rounds between parties `0..n`, with
//!   framing, size bounds, timeouts and abort propagation. Protocols take `&mut impl Mesh`.
//! * [`InMemoryMesh`]: all parties in one process, for tests and demos.
//! * [`TlsMesh`]: TCP with mutual TLS 1.3 between processes or machines, configured by a TOML
//!   party config ([`config`]); certificates can be made with [`certs`].
//! * [`commit`]: domain-separated hash commitments and a commit-then-open round.
//! * [`netem`]: a user-space link emulator (latency and bandwidth) for benchmarks.
//! * [`TamperMesh`] ([`tamper`]): wraps any mesh and rewrites, replaces, drops or delays this
//!   party's outgoing messages, for cheating tests.
//!
//! ```
//! use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let meshes = InMemoryMesh::group(3, MeshOptions::default());
//! let mut tasks = Vec::new();
//! for mut m in meshes {
//!     tasks.push(tokio::spawn(async move {
//!         let all: Vec<u64> = m.exchange_all(&(m.id() as u64 + 1)).await?;
//!         m.close().await?;
//!         Ok::<u64, coterie_net::Error>(all.iter().sum())
//!     }));
//! }
//! for t in tasks {
//!     assert_eq!(t.await.unwrap().unwrap(), 6);
//! }
//! # });
//! ```
#![warn(missing_docs)]

pub mod certs;
pub mod commit;
pub mod config;
mod error;
pub mod frame;
pub mod local;
mod memory;
mod mesh;
pub mod netem;
pub mod tamper;
mod tls;
pub mod topology;

pub use config::{ConfigFile, PartyEntry, Roster};
pub use error::{Error, Result};
pub use frame::Blob;
pub use memory::InMemoryMesh;
pub use mesh::{Mesh, MeshOptions, Stats};
pub use tamper::TamperMesh;
pub use tls::{Identity, TlsMesh};

/// A party's index, `0..n`.
pub type PartyId = usize;
