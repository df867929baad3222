//! coterie-net: the party runtime every coterie protocol talks through.
//!
//! # Layers
//!
//! * **Meshes.** [`Mesh`] is the one interface of protocol code: typed, tagged send/receive,
//!   broadcast and all-to-all rounds between parties `0..n`, with framing ([`frame`]), size
//!   bounds, per-link sequence checks, timeouts and abort propagation ([`MeshOptions`]). A
//!   protocol is a function of `&mut impl Mesh`; it never opens sockets. Two implementations
//!   share the receive machinery: [`InMemoryMesh`] (all parties in one process, for tests and
//!   demos) and [`TlsMesh`] (TCP with mutual TLS 1.3 between processes or machines, configured by
//!   a TOML party config, [`config`]; [`local::tls_group`] runs a whole group on loopback).
//! * **Roles.** Parties of a config may carry a [`Role`] (`user`, `proxy`, `server`, `receiver`,
//!   `client`, `node` or a custom name); the [`Roster`] and [`TlsMesh`] list parties by role. A
//!   config without roles is a mesh of equals, as before. Roles are bound into the roster digest
//!   that parties compare at start-up, so parties holding different roles refuse each other.
//! * **Topologies.** [`topology`] runs an all-to-all step either over the full mesh (`n(n−1)`
//!   messages, one hop) or through a king ([`topology::Topology::Star`]: `2(n−1)` messages, two
//!   hops) that combines (e.g. sums shares of an opening) or forwards the values. The king is
//!   not trusted: use the star where its result is checked afterwards (SPDZ MAC checks).
//! * **Channels.** [`channel`]: servers that never talk to each other accept clients over the
//!   same mutual TLS and CA ([`ChannelServer`], [`connect_channel`]); a client may hold channels
//!   to several servers. The server learns the client's name from its certificate, issued by
//!   [`certs::issue_client_cert`]. Frames, bounds and timeouts are the mesh's.
//! * **Cheating tests.** [`TamperMesh`] ([`tamper`]) wraps any mesh and rewrites (raw or typed),
//!   replaces, drops or delays this party's outgoing messages by peer, tag and index. Tests of
//!   malicious parties use it; production code carries no cheat hooks.
//! * **Helpers.** [`commit`]: domain-separated hash commitments, a commit-then-open round and an
//!   echo check for point-to-point broadcasts. [`certs`]: a local CA, party and client
//!   certificates and a ready config (what `coterie certs` writes). [`netem`]: a user-space link
//!   emulator (latency and bandwidth) for benchmarks.
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
pub mod channel;
pub mod commit;
pub mod config;
pub mod demo;
mod error;
pub mod frame;
pub mod local;
mod memory;
mod mesh;
pub mod netem;
#[cfg(target_os = "linux")]
mod netem_hub;
pub mod relay;
pub mod role;
pub mod tamper;
mod tls;
pub mod topology;

pub use channel::{Channel, ChannelServer, connect_channel};
pub use config::{ConfigFile, PartyEntry, Roster};
pub use error::{Error, Result};
pub use frame::Blob;
pub use memory::InMemoryMesh;
pub use mesh::{Mesh, MeshOptions, Stats};
pub use relay::KingMesh;
pub use role::Role;
pub use tamper::TamperMesh;
pub use tls::{Identity, TlsMesh};

/// A party's index, `0..n`.
pub type PartyId = usize;
