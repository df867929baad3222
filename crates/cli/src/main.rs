//! `coterie`: the one binary of the toolkit — certificates, party daemons, demos, link emulation.
//!
//! The binary parses arguments, wires a library flow to a mesh (or a channel) and prints; one
//! module per subcommand under [`cmd`]. The protocol flows live in the library crates:
//! `coterie_net::demo` (echo, sum), `coterie_spdz::flows` (SPDZ_2k stores and demo),
//! `coterie_threshold::{node, client, mk_rounding}` (the decryption service, its client
//! protocol, multi-key decryption by MPC rounding) and `coterie_tfhe::mk::demo` (multi-key TFHE).

// The subcommands' doc comments are their `--help` text, where `<id>`, `<name>` and `<i>` are
// placeholders the user reads, not HTML; rustdoc would take them for unclosed tags.
#![allow(rustdoc::invalid_html_tags)]

mod cmd;
mod progress;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "coterie",
    version,
    about = "coterie: multi-party computation and threshold HE toolkit"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Write a local CA, per-party keys and certificates, and a party config for N parties on
    /// loopback ports.
    Certs(cmd::certs::CertsArgs),
    /// Run one party of a protocol.
    Party(cmd::party::PartyArgs),
    /// Run a protocol with all parties on this machine.
    Demo {
        #[command(subcommand)]
        which: cmd::demo::Demo,
    },
    /// User-space link emulation (latency, bandwidth) for benchmarks.
    Netem {
        #[command(subcommand)]
        cmd: cmd::netem::Netem,
    },
    /// SPDZ preprocessing stores (coterie-spdz) that need no network.
    Spdz {
        #[command(subcommand)]
        cmd: cmd::spdz::SpdzCmd,
    },
    /// Local steps of the HSS applications (seed 004), e.g. an input client's upload.
    Hss {
        #[command(subcommand)]
        cmd: cmd::hss::HssCmd,
    },
    /// Client of the threshold decryption service: sends ciphertext files (CTLW, or TFHE-rs
    /// ciphertexts converted to CTLW) to node 0 over mutual TLS and prints one decrypted message
    /// per file.
    Decrypt(cmd::decrypt::DecryptArgs),
    /// Issue a client certificate for the threshold decryption service with the CA that
    /// `coterie certs` wrote into DIR (writes DIR/client-<name>.crt and .key).
    CertsClient {
        /// Directory holding ca.crt and ca.key.
        #[arg(long)]
        dir: PathBuf,
        /// Client name.
        #[arg(long)]
        name: String,
    },
    /// Encrypt one bit under a threshold decryption service's public key (the node writes it to
    /// DIR/party-<id>/public-key.bin) into a CTLW ciphertext file.
    ThresholdEncrypt {
        /// Public key file.
        #[arg(long)]
        public_key: PathBuf,
        /// The bit.
        #[arg(long)]
        message: u64,
        /// Output file.
        #[arg(long)]
        out: PathBuf,
    },
}

fn main() -> ExitCode {
    // Freed per-batch buffers stay in the process for the next batch instead of being faulted in
    // afresh (coterie_math::buffers::keep_freed_heap; a fifth of the OT producer's CPU).
    coterie_math::buffers::keep_freed_heap();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("coterie: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.cmd {
        Cmd::Certs(args) => cmd::certs::certs(args),
        Cmd::Party(args) => cmd::party::run(args),
        Cmd::Demo { which } => cmd::demo::run(which),
        Cmd::Netem { cmd } => cmd::netem::run(cmd),
        Cmd::Spdz { cmd } => cmd::spdz::run(cmd),
        Cmd::Hss { cmd } => cmd::hss::run(cmd),
        Cmd::Decrypt(args) => cmd::decrypt::decrypt(args),
        Cmd::CertsClient { dir, name } => cmd::certs::certs_client(&dir, &name),
        Cmd::ThresholdEncrypt {
            public_key,
            message,
            out,
        } => cmd::decrypt::threshold_encrypt(&public_key, message, &out),
    }
}
