//! One module per subcommand: argument types (clap) and the wiring of library flows to a mesh,
//! a channel or the file system, with the printing.

pub mod certs;
pub mod decrypt;
pub mod demo;
pub mod hss;
pub mod math;
pub mod matrigear;
pub mod mktfhe;
pub mod netem;
pub mod party;
pub mod reenc;
pub mod spdz;
pub mod threshold;

/// The tokio runtime of the commands that talk to the network (two worker threads).
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())
}
