//! `coterie party ...`: one party of a protocol over mutual TLS (`coterie_net::TlsMesh`); each
//! protocol is a library flow, wired here and its result printed.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Subcommand;
use coterie_net::{Error, Mesh, MeshOptions, TlsMesh};

use super::spdz::SpdzAmounts;

/// Arguments of `coterie party`.
#[derive(clap::Args)]
pub struct PartyArgs {
    /// Party config (TOML).
    #[arg(long)]
    config: PathBuf,
    /// This party's id.
    #[arg(long)]
    id: usize,
    /// Private key (PEM); default: the config's `key` entry for this party.
    #[arg(long)]
    key: Option<PathBuf>,
    /// Certificate (PEM); default: the config's `cert` entry for this party.
    #[arg(long)]
    cert: Option<PathBuf>,
    /// Receive timeout in seconds.
    #[arg(long, default_value_t = 30)]
    timeout_s: u64,
    /// Start-up deadline in seconds (all parties connected).
    #[arg(long, default_value_t = 60)]
    connect_s: u64,
    #[command(subcommand)]
    protocol: Protocol,
}

/// Runs `coterie party ...`.
pub fn run(a: PartyArgs) -> Result<(), String> {
    let opts = MeshOptions {
        timeout: Duration::from_secs(a.timeout_s),
        connect_deadline: Duration::from_secs(a.connect_s),
        ..MeshOptions::default()
    };
    let rt = super::runtime()?;
    let id = a.id;
    rt.block_on(run_party(
        &a.config,
        id,
        a.cert.as_deref(),
        a.key.as_deref(),
        opts,
        a.protocol,
    ))
    .map_err(|e| format!("party {id}: {e}"))
}

/// How a threshold service's all-to-all rounds travel (`coterie party ... threshold --relay`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relay {
    /// Every node sends to every node.
    Direct,
    /// Through node 0, authenticated end to end (`coterie_net::KingMesh`).
    King,
    /// The king from [`KING_FROM_NODES`] nodes on, direct below.
    Auto,
}

/// Where `--relay auto` switches to the king: the crossover measured on a 2-core machine with
/// every node on it, through coterie-net's event-loop link emulator at 1 ms (BENCHMARKS.md,
/// "Many parties": direct 5.1 / 6.7 / 8.0 ms against the king's 7.0 / 7.2 / 7.5 ms at 10 / 12 /
/// 14 nodes). On separate hosts each node works on cores of its own and a direct round has one
/// hop instead of two, so the crossover there is likely higher still.
pub const KING_FROM_NODES: usize = 14;

/// The protocols of `coterie party`.
#[derive(Subcommand, Clone, Debug)]
pub enum Protocol {
    /// Every party sends a greeting to every other party, which echoes it back.
    Echo,
    /// Every party contributes a value; all-to-all rounds; every party checks the sum.
    Sum {
        /// This party's value (default: id + 1).
        #[arg(long)]
        value: Option<u64>,
        /// Number of all-to-all rounds.
        #[arg(long, default_value_t = 3)]
        rounds: u32,
        /// Testing: exit abruptly (as if killed) after this many rounds.
        #[arg(long, hide = true)]
        crash_after: Option<u32>,
    },
    /// OT-based SPDZ_2k preprocessing (Z_2^64, s = 64) into this party's new store
    /// DIR/party-<id>, by coterie-spdz's `OtPrep` (maliciously secure with abort).
    SpdzPrepOt {
        /// Base directory of the stores.
        #[arg(long)]
        dir: PathBuf,
        #[command(flatten)]
        amounts: SpdzAmounts,
        /// Batches of triples in flight at once, each on a TLS mesh of its own between the
        /// parties (the same at every party): one lane computes while another's messages are on
        /// the wire. The default 3 lanes make 1.3x (loopback) to 1.6x (1 ms) the triples of one
        /// lane with two parties (BENCHMARKS.md, SPDZ section); `--lanes 1` runs one batch at a
        /// time on the parties' mesh alone.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=16))]
        lanes: u32,
        /// The OT extension (the same at every party): `ss4` (SoftSpokenOT, block size 4; 8,694
        /// bytes per triple per peer), `ss8` (7,445 bytes, about 1.6x the CPU time: for links
        /// where bandwidth, not CPU, limits), `ss2`, or `kos` (16,185 bytes).
        #[arg(long, default_value = "ss4")]
        ot_ext: coterie_spdz::ot_prep::OtExtension,
    },
    /// Threshold decryption (seed 000) on the SPDZ_2k store DIR/party-<id>: key generation inside
    /// the ABB, public LWE samples, COUNT encryptions of known messages, gate preprocessing, and
    /// decryption in the strict and the pipelined schedule, checked.
    ThresholdDemo {
        /// Base directory of the stores.
        #[arg(long)]
        dir: PathBuf,
        /// Number of ciphertexts.
        #[arg(long, default_value_t = 8)]
        count: usize,
    },
    /// Multi-key TFHE (AKÖ, seed 003): joint key generation among all parties, `x > y` on 8-bit
    /// inputs of parties 0 and 1 evaluated by party 0, joint decryption with smudged partial
    /// decryptions, checked against the plaintext.
    Mktfhe {
        /// Party 0's input (every party gets it only to check the result).
        #[arg(long, default_value_t = 200)]
        x: u8,
        /// Party 1's input (every party gets it only to check the result).
        #[arg(long, default_value_t = 77)]
        y: u8,
        /// Write this party's key material (versioned) under this directory.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Use the INSECURE toy parameter set (n = 32, N = 512; no security) for a fast run.
        #[arg(long)]
        insecure_toy: bool,
        /// Also decrypt by MPC rounding (coterie-threshold, no smudging noise), with OT-based
        /// SPDZ_2k preprocessing made for it.
        #[arg(long)]
        mpc_rounding: bool,
    },
    /// Threshold decryption node (seed 000): key generation on first start (or the import of an
    /// existing LWE key by the one node that holds it, `--import-key`), a pool of gate
    /// bundles kept topped up from the SPDZ_2k store DIR/party-<id> (made by `spdz-prep-ot`, or by
    /// the INSECURE `coterie spdz deal-insecure` for tests), and decryption of client requests
    /// (node 0 serves clients over mutual TLS and batches concurrent requests).
    Threshold {
        /// Base directory of the stores.
        #[arg(long)]
        dir: PathBuf,
        /// Gate bundles to keep ready.
        #[arg(long, default_value_t = 64)]
        pool: u64,
        /// Bundles made per preprocessing step.
        #[arg(long, default_value_t = 8)]
        chunk: u32,
        /// Largest batch of ciphertexts per decryption run.
        #[arg(long, default_value_t = 1024)]
        max_batch: usize,
        /// Node 0: where to serve clients (mutual TLS).
        #[arg(long, default_value = "127.0.0.1:47900")]
        client_listen: String,
        /// Node 0: stop all nodes after this many seconds without a client request (0: never).
        #[arg(long, default_value_t = 0)]
        idle_exit_s: u64,
        /// Serve this node's Prometheus metrics over plain HTTP at ADDR (`GET /metrics`), e.g.
        /// 127.0.0.1:9464; off by default. Unauthenticated: bind a loopback or private address.
        #[arg(long, value_name = "ADDR")]
        metrics: Option<String>,
        /// First start only, at the ONE node that holds an existing LWE secret key: import that
        /// key instead of generating one (the other nodes start without this option and learn
        /// who imports). FILE is a TFHE-rs 1.8 `core_crypto::LweSecretKey<Vec<u64>>` (bincode of
        /// the key or of `key.versionize()`, or `tfhe::safe_serialization::safe_serialize`) or
        /// coterie's raw key file (envelope tag `THlk`: the key's bits as little-endian u64
        /// words, `coterie_threshold::keys::lwe_key_file_to_bytes`); the format is detected. The
        /// key must be binary, of dimension 1024. WARNING: whoever held FILE (this holder
        /// included) can still decrypt everything under the key; destroy FILE after the import.
        /// Needs 1024 input masks per owner in the SPDZ_2k stores (`--masks 1024`). Refused when
        /// a key already exists (a key is never replaced).
        #[arg(long, value_name = "FILE")]
        import_key: Option<PathBuf>,
        /// First start only, at EVERY node: make no public key, only a key fingerprint of 16
        /// samples (720 random bits instead of 46,080; `coterie_threshold::keys::PublicKey`,
        /// "Key fingerprint"), for a service whose ciphertexts all come from elsewhere (the
        /// holder of an imported key, TFHE-rs). `threshold-encrypt` then refuses the node's
        /// public-key.bin. Every node must pass the same (else all abort).
        #[arg(long)]
        no_public_key: bool,
        /// How the nodes' all-to-all rounds travel: `direct` (every node to every node,
        /// n(n-1) messages per round), `king` (through node 0 with per-pair MAC tags,
        /// `coterie_net::KingMesh`: 2(n-1) messages, two hops), or `auto`: the king from 14 nodes
        /// on, where it was faster here (BENCHMARKS, issue 17). Every node must pass the same.
        #[arg(long, value_enum, default_value_t = Relay::Auto)]
        relay: Relay,
        /// Batches decrypted at once. 1: one at a time, on the nodes' one connection. L ≥ 2:
        /// each batch on one of L further connections between the nodes ("lanes"), beside the
        /// one that carries the coordinator's steps and the gate preprocessing, so that one
        /// batch's computing overlaps another's transfers and the next batch's store reads
        /// (BENCHMARKS, "The service's own path"). Every node must pass the same.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=16))]
        lanes: u32,
    },
    /// Multi-key BFV with threshold proxy re-encryption (seed 001): each party's role (user,
    /// proxy, server, receiver) comes from the config's roles; one step per run, the state kept
    /// in owner-only versioned files under DIR/party-<id> between steps.
    Reenc(super::reenc::ReencArgs),
    /// MatriGear (seed 002): HE-based SPDZ preprocessing over F_p into this party's store
    /// DIR/party-<id>/store — on the first run distributed key generation (passively secure) and
    /// the MAC key (with its proof of plaintext knowledge), then proven triples, random values
    /// and d×d matrix triples with authenticated shares.
    MatrigearPrep(super::matrigear::PrepCmd),
    /// MatriGear's online use: party 0's and party 1's d×d matrices (public demo inputs) are
    /// multiplied by one matrix triple from the store, opened, MAC-checked and compared with the
    /// plaintext product.
    MatrigearProduct(super::matrigear::ProductCmd),
    /// HSS applications (seed 004): the one-time setup between servers 0 and 1 (distributed key
    /// generation and leakage-absorbing pads; party 2, the client, idles), state in
    /// DIR/party-<id>/hss.state, public key published in the repository.
    HssSetup(super::hss::SetupCmd),
    /// HSS vote: servers 0 and 1 evaluate the majority (or threshold) of the uploads in the
    /// repository, each alone; party 2 combines their answers and re-runs after a failure.
    HssVote(super::hss::VoteCmd),
    /// HSS private RSS feed: party 2 registers encrypted interests, servers 0 and 1 filter the
    /// public records and send digests, party 2 parses them.
    HssFeed(super::hss::FeedCmd),
    /// HSS two-server PIR with boolean queries: party 2 sends its encrypted wanted attributes,
    /// servers 0 and 1 answer with syndromes over the public database, party 2 decodes.
    HssPir(super::hss::PirCmd),
    /// HSS correlated randomness (two parties): key generation, Beaver triples over Z_(2^n)
    /// from bilinear-form correlations, opened and checked (demo only).
    HssTriples(super::hss::TriplesCmd),
    /// HSS policy-based file system: servers 0 and 1 answer grant requests for a published file
    /// under its hidden policy, party 2 (a client with public attributes) opens it or is denied.
    HssFs(super::hss::FsCmd),
    /// Every party inputs a value; the product is computed with Beaver triples from the store
    /// DIR/party-<id>, opened and MAC-checked.
    SpdzDemo {
        /// Base directory of the stores.
        #[arg(long)]
        dir: PathBuf,
        /// This party's input (default: id + 2).
        #[arg(long)]
        value: Option<u64>,
    },
}

async fn run_party(
    config: &Path,
    id: usize,
    cert: Option<&Path>,
    key: Option<&Path>,
    opts: MeshOptions,
    protocol: Protocol,
) -> Result<(), Error> {
    let t0 = Instant::now();
    let mut mesh = TlsMesh::connect_with_config(config, id, cert, key, opts.clone()).await?;
    let t_conn = t0.elapsed();
    let n = mesh.n();
    let protocol = match protocol {
        Protocol::Threshold {
            dir,
            pool,
            chunk,
            max_batch,
            client_listen,
            idle_exit_s,
            metrics,
            import_key,
            no_public_key,
            relay,
            lanes,
        } => {
            let args = coterie_threshold::node::ServiceArgs {
                dir,
                pool,
                chunk,
                max_batch,
                client_listen,
                idle_exit_s,
            };
            let mut start = coterie_threshold::node::StartOptions::default();
            // the certificate and key the mesh uses serve the client listener and the statements
            start.cert = cert.map(Path::to_path_buf);
            start.key = key.map(Path::to_path_buf);
            start.no_public_key = no_public_key;
            if let Some(f) = import_key {
                eprintln!(
                    "party {id}: WARNING: importing the LWE key in {}: whoever held this file \
                     before (you included) can still decrypt everything encrypted under this key; \
                     the threshold service does not protect against them. Destroy the file after \
                     the import (e.g. shred -u).",
                    f.display()
                );
                start.import_key = Some(f);
            }
            // The node survives a lost peer: it reconnects with fresh meshes (the first is the
            // one connected above), so it owns them and closes the last itself.
            // With lanes, every connection also connects the lanes' meshes (after the parties
            // agree on their number): `lanes` further meshes beside the control mesh.
            let meshes = if lanes >= 2 { lanes + 1 } else { 1 };
            let mut first = Some(mesh);
            let (cert, key) = (cert.map(Path::to_path_buf), key.map(Path::to_path_buf));
            let connect = move || {
                let first = first.take();
                let (cert, key, opts) = (cert.clone(), key.clone(), opts.clone());
                async move {
                    let mut m = match first {
                        Some(m) => m,
                        None => {
                            TlsMesh::connect_with_config(
                                config,
                                id,
                                cert.as_deref(),
                                key.as_deref(),
                                opts.clone(),
                            )
                            .await?
                        }
                    };
                    let more = m
                        .connect_lanes(config, cert.as_deref(), key.as_deref(), &opts, meshes)
                        .await?;
                    Ok((m, more))
                }
            };
            let king = match relay {
                Relay::Direct => false,
                Relay::King => true,
                Relay::Auto => n >= KING_FROM_NODES,
            };
            if king {
                let mut connect = connect;
                let relayed = move || {
                    let direct = connect();
                    async move {
                        let (m, more) = direct.await?;
                        let mut lanes = Vec::with_capacity(more.len());
                        let m = coterie_net::KingMesh::new(m, 0).await?;
                        for l in more {
                            lanes.push(coterie_net::KingMesh::new(l, 0).await?);
                        }
                        Ok((m, lanes))
                    }
                };
                super::threshold::run_node(relayed, id, config, &args, metrics.as_deref(), &start)
                    .await
            } else {
                super::threshold::run_node(connect, id, config, &args, metrics.as_deref(), &start)
                    .await
            }
            .map_err(|e| Error::Protocol(format!("threshold node: {e}")))?;
            println!(
                "party {id}/{n}: threshold node stopped (connect {:.1} ms, total {:.1} ms)",
                t_conn.as_secs_f64() * 1e3,
                t0.elapsed().as_secs_f64() * 1e3
            );
            return Ok(());
        }
        other => other,
    };
    let summary = match run_protocol(&mut mesh, id, config, cert, key, &opts, protocol).await {
        Ok(s) => s,
        Err(e) => {
            // Every peer learns why this party stops (unless a peer's abort or departure is
            // the reason: then the mesh is poisoned already and nothing more is sent), instead
            // of seeing only its connection end.
            mesh.abort(&e.to_string()).await;
            return Err(e);
        }
    };
    let st = mesh.stats().clone();
    mesh.close().await?;
    println!(
        "party {id}/{n}: {summary} (connect {:.1} ms, total {:.1} ms, sent {} B, received {} B)",
        t_conn.as_secs_f64() * 1e3,
        t0.elapsed().as_secs_f64() * 1e3,
        st.total_sent(),
        st.total_received()
    );
    Ok(())
}

/// The protocols other than the threshold node (which owns its meshes), on the connected `mesh`:
/// returns the summary line.
async fn run_protocol(
    mesh: &mut TlsMesh,
    id: usize,
    config: &Path,
    cert: Option<&Path>,
    key: Option<&Path>,
    opts: &MeshOptions,
    protocol: Protocol,
) -> Result<String, Error> {
    let party_dir = |d: &Path| d.join(format!("party-{id}"));
    Ok(match protocol {
        Protocol::SpdzPrepOt {
            dir,
            amounts,
            lanes,
            ot_ext,
        } => {
            let extra = mesh.connect_lanes(config, cert, key, opts, lanes).await?;
            let progress = crate::progress::progress_bar(&format!("party {id}"));
            let r = coterie_spdz::flows::prep_ot_lanes(
                mesh,
                extra,
                &party_dir(&dir),
                amounts.into(),
                ot_ext,
                progress,
            )
            .await
            .map_err(|e| Error::Protocol(format!("SPDZ preprocessing: {e}")))?;
            let c: coterie_spdz::Counts = amounts.into();
            println!(
                "party {id}: {} triples, {} bits, {} randoms, {} masks per owner in {:.2} s ({} bytes sent)",
                c.triples, c.bits, c.randoms, c.masks_per_party, r.secs, r.bytes_sent
            );
            "SPDZ_2k preprocessing done".to_string()
        }
        Protocol::ThresholdDemo { dir, count } => {
            super::threshold::party_demo(mesh, &party_dir(&dir), count)
                .await
                .map_err(|e| Error::Protocol(format!("threshold decryption: {e}")))?;
            "threshold decryption demo done".to_string()
        }
        Protocol::Mktfhe {
            x,
            y,
            dir,
            insecure_toy,
            mpc_rounding,
        } => {
            let dir = dir.map(|d| party_dir(&d));
            super::mktfhe::party_demo(mesh, x, y, dir.as_deref(), insecure_toy, mpc_rounding)
                .await
                .map_err(|e| Error::Protocol(format!("multi-key TFHE: {e}")))?;
            "multi-key TFHE demo done".to_string()
        }
        Protocol::SpdzDemo { dir, value } => {
            let v = coterie_spdz::flows::online_demo(
                mesh,
                &party_dir(&dir),
                value.unwrap_or(id as u64 + 2),
            )
            .await
            .map_err(|e| Error::Protocol(format!("SPDZ online: {e}")))?;
            println!("party {id}: product of all inputs (mod 2^64) = {v} (MAC-checked)");
            "SPDZ_2k product done".to_string()
        }
        Protocol::Reenc(args) => super::reenc::party(mesh, &args)
            .await
            .map_err(|e| Error::Protocol(format!("seed 001 re-encryption: {e}")))?,
        Protocol::MatrigearPrep(args) => super::matrigear::prep(mesh, &args)
            .await
            .map_err(|e| Error::Protocol(format!("MatriGear preprocessing: {e}")))?,
        Protocol::MatrigearProduct(args) => super::matrigear::product(mesh, &args)
            .await
            .map_err(|e| Error::Protocol(format!("MatriGear product: {e}")))?,
        Protocol::HssSetup(args) => super::hss::setup(mesh, &args)
            .await
            .map_err(|e| Error::Protocol(format!("HSS setup: {e}")))?,
        Protocol::HssVote(args) => super::hss::vote(mesh, &args)
            .await
            .map_err(|e| Error::Protocol(format!("HSS vote: {e}")))?,
        Protocol::HssFeed(args) => super::hss::feed(mesh, &args)
            .await
            .map_err(|e| Error::Protocol(format!("HSS feed: {e}")))?,
        Protocol::HssPir(args) => super::hss::pir(mesh, &args)
            .await
            .map_err(|e| Error::Protocol(format!("HSS PIR: {e}")))?,
        Protocol::HssTriples(args) => super::hss::triples(mesh, &args)
            .await
            .map_err(|e| Error::Protocol(format!("HSS triples: {e}")))?,
        Protocol::HssFs(args) => super::hss::fs(mesh, &args)
            .await
            .map_err(|e| Error::Protocol(format!("HSS file system: {e}")))?,
        Protocol::Echo => {
            let peers = coterie_net::demo::echo(mesh).await?;
            format!("echo ok with {peers} peers")
        }
        Protocol::Sum {
            value,
            rounds,
            crash_after,
        } => {
            let v = value.unwrap_or(id as u64 + 1);
            if let Some(c) = crash_after.filter(|&c| c < rounds) {
                coterie_net::demo::sum_rounds(mesh, v, 0..c).await?;
                eprintln!("party {id}: crashing on purpose after {c} rounds");
                std::process::exit(3);
            }
            let sum = coterie_net::demo::sum(mesh, v, rounds).await?;
            format!("sum = {sum}")
        }
        Protocol::Threshold { .. } => {
            return Err(Error::Protocol(
                "the threshold node runs on its own path (run_party)".into(),
            ));
        }
    })
}
