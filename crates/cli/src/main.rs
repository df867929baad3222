//! `coterie`: the one binary of the toolkit — certificates, party daemons, demos, link emulation.

mod demo_math;
mod mktfhe;
mod spdz;
mod threshold;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use coterie_net::netem::{LinkParams, Relay};
use coterie_net::{Error, Mesh, MeshOptions, TlsMesh, certs, commit};

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
    Certs {
        /// Number of parties.
        #[arg(long)]
        parties: usize,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
        /// Port of party 0; party i listens on base-port + i.
        #[arg(long, default_value_t = 47000)]
        base_port: u16,
    },
    /// Run one party of a protocol.
    Party {
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
    },
    /// Run a protocol with all parties on this machine.
    Demo {
        #[command(subcommand)]
        which: Demo,
    },
    /// User-space link emulation (latency, bandwidth) for benchmarks.
    Netem {
        #[command(subcommand)]
        cmd: Netem,
    },
    /// SPDZ preprocessing stores (coterie-spdz) that need no network.
    Spdz {
        #[command(subcommand)]
        cmd: SpdzCmd,
    },
    /// Client of the threshold decryption service: sends ciphertext files (CTLW format) to node 0
    /// over mutual TLS and prints one decrypted message per file.
    Decrypt {
        /// Party config of the nodes (for the CA and node 0's certificate name).
        #[arg(long)]
        config: PathBuf,
        /// Address of node 0's client listener.
        #[arg(long)]
        node: String,
        /// Client certificate (PEM), from `coterie certs-client`.
        #[arg(long)]
        cert: PathBuf,
        /// Client private key (PEM).
        #[arg(long)]
        key: PathBuf,
        /// Ciphertext files.
        files: Vec<PathBuf>,
    },
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

/// How much SPDZ material to make per party.
#[derive(clap::Args, Clone, Copy, Debug)]
struct SpdzAmounts {
    /// Beaver triples.
    #[arg(long, default_value_t = 1024)]
    triples: usize,
    /// Random bits.
    #[arg(long, default_value_t = 1024)]
    bits: usize,
    /// Random authenticated values (one per value opened over Z_2^k).
    #[arg(long, default_value_t = 1024)]
    randoms: usize,
    /// Input masks per input owner.
    #[arg(long, default_value_t = 64)]
    masks: usize,
}

impl From<SpdzAmounts> for spdz::Amounts {
    fn from(a: SpdzAmounts) -> Self {
        spdz::Amounts {
            triples: a.triples,
            bits: a.bits,
            randoms: a.randoms,
            masks: a.masks,
        }
    }
}

#[derive(Subcommand)]
enum SpdzCmd {
    /// INSECURE trusted dealer: one process makes every party's SPDZ_2k material (Z_2^64, s = 64)
    /// and writes one store per party to OUT/party-<i>. For tests and online benchmarks only.
    DealInsecure {
        /// Number of parties.
        #[arg(long)]
        parties: usize,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        amounts: SpdzAmounts,
    },
}

#[derive(Subcommand, Clone, Debug)]
enum Protocol {
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
    /// Threshold decryption node (seed 000): key generation on first start, a pool of gate
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
    },
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

#[derive(Subcommand)]
enum Demo {
    /// Local math demo (no network).
    Math {
        /// log2 of the ring dimension.
        #[arg(long, default_value_t = 12)]
        n: u32,
    },
    /// `echo` with N party processes over TLS on loopback.
    Echo {
        /// Number of parties.
        #[arg(long, default_value_t = 3)]
        parties: usize,
    },
    /// Threshold decryption among N party processes over TLS (paper parameters n = 1024,
    /// q = 2^64, p = 2); the SPDZ_2k material comes from the INSECURE dealer (demo only).
    Threshold {
        /// Number of parties.
        #[arg(long, default_value_t = 4)]
        parties: usize,
        /// Number of ciphertexts.
        #[arg(long, default_value_t = 8)]
        count: usize,
    },
    /// SPDZ_2k among N party processes over TLS: OT-based preprocessing into per-party stores,
    /// then a MAC-checked product of every party's input.
    Spdz {
        /// Number of parties.
        #[arg(long, default_value_t = 3)]
        parties: usize,
    },
    /// Multi-key TFHE (AKÖ, seed 003) among K party processes over TLS: joint key generation
    /// (the smallest Table 3 set for K parties), an 8-bit comparison on inputs of parties 0 and
    /// 1, joint decryption.
    Mktfhe {
        /// Number of parties.
        #[arg(long, default_value_t = 2)]
        parties: usize,
        /// Party 0's input.
        #[arg(long, default_value_t = 200)]
        x: u8,
        /// Party 1's input.
        #[arg(long, default_value_t = 77)]
        y: u8,
        /// Use the INSECURE toy parameter set (n = 32, N = 512; no security) for a fast run.
        #[arg(long)]
        insecure_toy: bool,
        /// Also decrypt by MPC rounding (coterie-threshold, no smudging noise), with OT-based
        /// SPDZ_2k preprocessing made for it.
        #[arg(long)]
        mpc_rounding: bool,
    },
    /// `sum` with N party processes over TLS on loopback.
    Sum {
        /// Number of parties.
        #[arg(long, default_value_t = 3)]
        parties: usize,
        /// Number of rounds.
        #[arg(long, default_value_t = 3)]
        rounds: u32,
    },
}

#[derive(Subcommand)]
enum Netem {
    /// One relay: listen, forward to target, delay and pace both directions.
    Relay {
        /// Listen address.
        #[arg(long)]
        listen: String,
        /// Target address.
        #[arg(long)]
        target: String,
        /// Round-trip time in ms (each direction gets half).
        #[arg(long, default_value_t = 0.0)]
        rtt_ms: f64,
        /// Bandwidth per direction in Mbit/s (0 = unlimited).
        #[arg(long, default_value_t = 0.0)]
        rate_mbit: f64,
    },
    /// Put a relay in front of every party of a config; write the config the parties should use
    /// (others dial the relay, the party listens on its original address); run until killed.
    Mesh {
        /// Original party config.
        #[arg(long)]
        config: PathBuf,
        /// Where to write the relayed config (written next to the original if relative paths).
        #[arg(long)]
        out: PathBuf,
        /// Round-trip time in ms.
        #[arg(long, default_value_t = 0.0)]
        rtt_ms: f64,
        /// Bandwidth per link direction in Mbit/s (0 = unlimited).
        #[arg(long, default_value_t = 0.0)]
        rate_mbit: f64,
        /// Host the relays listen on.
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
    },
    /// Measure the emulator: ping-pong round trip and bulk rate through one relay.
    Selfcheck {
        /// Round-trip time in ms.
        #[arg(long)]
        rtt_ms: f64,
        /// Bandwidth in Mbit/s (0 = unlimited).
        #[arg(long, default_value_t = 0.0)]
        rate_mbit: f64,
        /// Ping-pongs (median reported).
        #[arg(long, default_value_t = 50)]
        pings: usize,
        /// Bulk transfer size in MB.
        #[arg(long, default_value_t = 20)]
        bulk_mb: usize,
    },
}

fn main() -> ExitCode {
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
        Cmd::Certs {
            parties,
            out,
            base_port,
        } => {
            if parties < 2 {
                return Err("need at least 2 parties".into());
            }
            let pki = certs::generate_pki(parties).map_err(|e| e.to_string())?;
            let path = certs::write_pki(&out, &pki, &certs::loopback_addresses(parties, base_port))
                .map_err(|e| e.to_string())?;
            println!(
                "wrote CA, {parties} party keys and certificates, and {}",
                path.display()
            );
            Ok(())
        }
        Cmd::Party {
            config,
            id,
            key,
            cert,
            timeout_s,
            connect_s,
            protocol,
        } => {
            let opts = MeshOptions {
                timeout: Duration::from_secs(timeout_s),
                connect_deadline: Duration::from_secs(connect_s),
                ..MeshOptions::default()
            };
            let rt = runtime()?;
            rt.block_on(run_party(
                &config,
                id,
                cert.as_deref(),
                key.as_deref(),
                opts,
                protocol,
            ))
            .map_err(|e| format!("party {id}: {e}"))
        }
        Cmd::Demo { which } => match which {
            Demo::Math { n } => demo_math::run(n),
            Demo::Echo { parties } => demo(parties, &["echo"]),
            Demo::Sum { parties, rounds } => {
                demo(parties, &["sum", "--rounds", &rounds.to_string()])
            }
            Demo::Spdz { parties } => demo_spdz(parties),
            Demo::Threshold { parties, count } => demo_threshold(parties, count),
            Demo::Mktfhe {
                parties,
                x,
                y,
                insecure_toy,
                mpc_rounding,
            } => {
                let (xs, ys) = (x.to_string(), y.to_string());
                let mut args = vec!["mktfhe", "--x", &xs, "--y", &ys];
                if insecure_toy {
                    println!("INSECURE toy parameters (no security): a fast protocol run only");
                    args.push("--insecure-toy");
                }
                if mpc_rounding {
                    args.push("--mpc-rounding");
                }
                demo(parties, &args)
            }
        },
        Cmd::Netem { cmd } => netem(cmd),
        Cmd::Decrypt {
            config,
            node,
            cert,
            key,
            files,
        } => {
            let rt = runtime()?;
            let res = rt.block_on(threshold::client_decrypt(
                &config, &node, &cert, &key, &files,
            ))?;
            let mut failed = 0;
            for (f, r) in res {
                match r {
                    Ok(mu) => println!("{}: {mu}", f.display()),
                    Err(e) => {
                        failed += 1;
                        println!("{}: error: {e}", f.display())
                    }
                }
            }
            if failed > 0 {
                Err(format!("{failed} ciphertexts not decrypted"))
            } else {
                Ok(())
            }
        }
        Cmd::CertsClient { dir, name } => {
            let (c, k) = threshold::issue_client_cert(&dir, &name)?;
            println!("wrote {} and {}", c.display(), k.display());
            Ok(())
        }
        Cmd::ThresholdEncrypt {
            public_key,
            message,
            out,
        } => threshold::encrypt_file(&public_key, message, &out),
        Cmd::Spdz {
            cmd:
                SpdzCmd::DealInsecure {
                    parties,
                    out,
                    amounts,
                },
        } => {
            if parties < 2 {
                return Err("need at least 2 parties".into());
            }
            spdz::deal_insecure(&out, parties, amounts.into())
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())
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
    let mut mesh = TlsMesh::connect_with_config(config, id, cert, key, opts).await?;
    let t_conn = t0.elapsed();
    let n = mesh.n();
    let party_dir = |d: &Path| d.join(format!("party-{id}"));
    let summary = match protocol {
        Protocol::SpdzPrepOt { dir, amounts } => {
            spdz::prep_ot(&mut mesh, &party_dir(&dir), amounts.into())
                .await
                .map_err(|e| Error::Protocol(format!("SPDZ preprocessing: {e}")))?;
            "SPDZ_2k preprocessing done".to_string()
        }
        Protocol::ThresholdDemo { dir, count } => {
            threshold::party_demo(&mut mesh, &party_dir(&dir), count)
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
            mktfhe::party_demo(&mut mesh, x, y, dir.as_deref(), insecure_toy, mpc_rounding)
                .await
                .map_err(|e| Error::Protocol(format!("multi-key TFHE: {e}")))?;
            "multi-key TFHE demo done".to_string()
        }
        Protocol::Threshold {
            dir,
            pool,
            chunk,
            max_batch,
            client_listen,
            idle_exit_s,
        } => {
            let args = threshold::ServiceArgs {
                dir,
                pool,
                chunk,
                max_batch,
                client_listen,
                idle_exit_s,
            };
            threshold::run_node(&mut mesh, config, &args)
                .await
                .map_err(|e| Error::Protocol(format!("threshold node: {e}")))?
        }
        Protocol::SpdzDemo { dir, value } => {
            spdz::online_demo(&mut mesh, &party_dir(&dir), value.unwrap_or(id as u64 + 2))
                .await
                .map_err(|e| Error::Protocol(format!("SPDZ online: {e}")))?;
            "SPDZ_2k product done".to_string()
        }
        Protocol::Echo => {
            for j in (0..n).filter(|&j| j != id) {
                mesh.send(j, &format!("hello from {id} to {j}")).await?;
            }
            for j in (0..n).filter(|&j| j != id) {
                let m: String = mesh.recv(j).await?;
                if m != format!("hello from {j} to {id}") {
                    return Err(mesh.abort(&format!("party {j} sent {m:?}")).await);
                }
                mesh.send_tagged(j, 1, &m).await?;
            }
            for j in (0..n).filter(|&j| j != id) {
                let m: String = mesh.recv_tagged(j, 1).await?;
                if m != format!("hello from {id} to {j}") {
                    return Err(mesh.abort(&format!("party {j} echoed {m:?}")).await);
                }
            }
            format!("echo ok with {} peers", n - 1)
        }
        Protocol::Sum {
            value,
            rounds,
            crash_after,
        } => {
            let v = value.unwrap_or(id as u64 + 1);
            let mut sum = 0u64;
            for r in 0..rounds {
                if crash_after == Some(r) {
                    eprintln!("party {id}: crashing on purpose after {r} rounds");
                    std::process::exit(3);
                }
                let all: Vec<u64> = mesh.exchange_all_tagged(r, &v).await?;
                sum = all.iter().fold(0u64, |a, b| a.wrapping_add(*b));
            }
            // Every party checks that every other party computed the same sum.
            commit::check_consistent(&mut mesh, "coterie demo sum", &[sum]).await?;
            format!("sum = {sum}")
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

/// `demo threshold`: insecure-dealer material into per-party stores, then the decryption demo.
fn demo_threshold(parties: usize, count: usize) -> Result<(), String> {
    if parties < 2 {
        return Err("need at least 2 parties".into());
    }
    if count == 0 {
        return Err("need at least 1 ciphertext".into());
    }
    let dir = std::env::temp_dir().join(format!(
        "coterie-demo-threshold-{}-{}",
        std::process::id(),
        rand::random::<u64>()
    ));
    let stores = dir.join("stores");
    let res = threshold::demo_amounts(count)
        .and_then(|(triples, bits, randoms, masks)| {
            println!(
                "INSECURE dealer: one process makes every party's SPDZ_2k material \
                 ({triples} triples, {bits} bits, {randoms} randoms per party) — demo only"
            );
            spdz::deal_insecure(
                &stores,
                parties,
                spdz::Amounts {
                    triples,
                    bits,
                    randoms,
                    masks,
                },
            )
        })
        .and_then(|()| {
            demo_in(
                &dir.join("run"),
                parties,
                &[
                    "threshold-demo",
                    "--dir",
                    &stores.to_string_lossy(),
                    "--count",
                    &count.to_string(),
                ],
            )
        });
    let _ = std::fs::remove_dir_all(&dir);
    res
}

/// `demo spdz`: OT preprocessing, then the online product, in one scratch directory.
fn demo_spdz(parties: usize) -> Result<(), String> {
    if parties < 2 {
        return Err("need at least 2 parties".into());
    }
    let dir = std::env::temp_dir().join(format!(
        "coterie-demo-spdz-{}-{}",
        std::process::id(),
        rand::random::<u64>()
    ));
    let stores = dir.join("stores");
    let stores_s = stores.to_string_lossy().to_string();
    let res = demo_in(
        &dir.join("prep"),
        parties,
        &[
            "spdz-prep-ot",
            "--dir",
            &stores_s,
            "--triples",
            &parties.to_string(),
            "--bits",
            "0",
            "--randoms",
            "1",
            "--masks",
            "1",
        ],
    )
    .and_then(|()| {
        demo_in(
            &dir.join("online"),
            parties,
            &["spdz-demo", "--dir", &stores_s],
        )
    });
    let _ = std::fs::remove_dir_all(&dir);
    res
}

/// Starts `parties` party processes over TLS on loopback and prints their results.
fn demo(parties: usize, protocol: &[&str]) -> Result<(), String> {
    if parties < 2 {
        return Err("need at least 2 parties".into());
    }
    let dir = std::env::temp_dir().join(format!(
        "coterie-demo-{}-{}",
        std::process::id(),
        Instant::now().elapsed().as_nanos() ^ rand::random::<u64>() as u128
    ));
    let res = demo_in(&dir, parties, protocol);
    let _ = std::fs::remove_dir_all(&dir);
    res
}

fn demo_in(dir: &Path, parties: usize, protocol: &[&str]) -> Result<(), String> {
    let pki = certs::generate_pki(parties).map_err(|e| e.to_string())?;
    let addrs = certs::free_loopback_addresses(parties).map_err(|e| e.to_string())?;
    let config = certs::write_pki(dir, &pki, &addrs).map_err(|e| e.to_string())?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    println!(
        "{} parties over mutual TLS on loopback; config {}",
        parties,
        config.display()
    );
    let mut children = Vec::new();
    for i in 0..parties {
        let child = Command::new(&exe)
            .arg("party")
            .arg("--config")
            .arg(&config)
            .args([
                "--id",
                &i.to_string(),
                "--timeout-s",
                "20",
                "--connect-s",
                "30",
            ])
            .args(protocol)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start party {i}: {e}"))?;
        children.push(child);
    }
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut failed = Vec::new();
    for (i, mut c) in children.into_iter().enumerate() {
        loop {
            match c.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => {
                    let _ = c.kill();
                    break;
                }
            }
        }
        let out = c.wait_with_output().map_err(|e| e.to_string())?;
        print!("{}", String::from_utf8_lossy(&out.stdout));
        if !out.status.success() {
            eprint!("{}", String::from_utf8_lossy(&out.stderr));
            failed.push(i);
        }
    }
    if failed.is_empty() {
        println!("all {parties} parties succeeded");
        Ok(())
    } else {
        Err(format!("parties {failed:?} failed"))
    }
}

/// Link parameters for the emulator, calibrated on this machine (the relay's own cost is taken out
/// of the configured delay; see `coterie_net::netem`).
fn link(rtt_ms: f64, rate_mbit: f64) -> Result<LinkParams, String> {
    if !(rtt_ms.is_finite() && rtt_ms >= 0.0 && rate_mbit.is_finite() && rate_mbit >= 0.0) {
        return Err(format!(
            "invalid link: {rtt_ms} ms RTT, {rate_mbit} Mbit/s (both must be finite and >= 0)"
        ));
    }
    LinkParams::new(Duration::from_secs_f64(rtt_ms / 1e3), rate_mbit)
        .calibrated(201)
        .map_err(|e| format!("calibrating the link emulator: {e}"))
}

fn netem(cmd: Netem) -> Result<(), String> {
    match cmd {
        Netem::Relay {
            listen,
            target,
            rtt_ms,
            rate_mbit,
        } => {
            let p = link(rtt_ms, rate_mbit)?;
            let r = Relay::start(&listen, &target, p).map_err(|e| e.to_string())?;
            println!(
                "relay {} -> {target} ({rtt_ms} ms RTT, {rate_mbit} Mbit/s)",
                r.local_addr()
            );
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
        Netem::Mesh {
            config,
            out,
            rtt_ms,
            rate_mbit,
            host,
        } => {
            let p = link(rtt_ms, rate_mbit)?;
            let text = std::fs::read_to_string(&config).map_err(|e| e.to_string())?;
            let mut cf = coterie_net::ConfigFile::parse(&text).map_err(|e| e.to_string())?;
            let base = config
                .parent()
                .unwrap_or(Path::new("."))
                .canonicalize()
                .map_err(|e| e.to_string())?;
            let abs = |p: &mut Option<PathBuf>| {
                if let Some(x) = p.as_mut()
                    && x.is_relative()
                {
                    *x = base.join(&*x);
                }
            };
            abs(&mut cf.ca);
            let mut relays = Vec::new();
            for e in cf.parties.iter_mut() {
                abs(&mut e.cert);
                abs(&mut e.key);
                let real = e.listen.clone().unwrap_or_else(|| e.address.clone());
                let r = Relay::start(&format!("{host}:0"), &real, p).map_err(|e| e.to_string())?;
                e.address = r.local_addr().to_string();
                e.listen = Some(real);
                relays.push(r);
            }
            std::fs::write(&out, cf.to_toml().map_err(|e| e.to_string())?)
                .map_err(|e| e.to_string())?;
            println!(
                "relays up ({rtt_ms} ms RTT, {rate_mbit} Mbit/s); config {}",
                out.display()
            );
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
        Netem::Selfcheck {
            rtt_ms,
            rate_mbit,
            pings,
            bulk_mb,
        } => {
            let p = link(rtt_ms, rate_mbit)?;
            let r = coterie_net::netem::self_check(p, pings, bulk_mb << 20)
                .map_err(|e| e.to_string())?;
            let rtt_err = (r.rtt_measured - r.rtt_configured) / r.rtt_configured.max(1e-12);
            let rate_err = if r.rate_configured > 0.0 {
                (r.rate_measured - r.rate_configured) / r.rate_configured
            } else {
                0.0
            };
            let ok = rtt_err.abs() <= 0.05 && rate_err.abs() <= 0.05;
            println!(
                "{{\"rtt_ms_configured\": {:.3}, \"rtt_ms_measured\": {:.3}, \"rtt_ms_direct\": {:.4}, \"relay_overhead_us\": {:.1}, \"rtt_rel_err\": {:.4}, \"rate_mbit_configured\": {:.1}, \"rate_mbit_measured\": {:.2}, \"rate_rel_err\": {:.4}, \"within_5pct\": {}}}",
                r.rtt_configured * 1e3,
                r.rtt_measured * 1e3,
                r.rtt_direct * 1e3,
                r.overhead * 1e6,
                rtt_err,
                r.rate_configured / 1e6,
                r.rate_measured / 1e6,
                rate_err,
                ok
            );
            if ok {
                Ok(())
            } else {
                Err("emulator outside 5% of its configuration".into())
            }
        }
    }
}
