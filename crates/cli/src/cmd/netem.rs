//! `coterie netem ...`: user-space link emulation (coterie_net::netem) for benchmarks.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Subcommand;
use coterie_net::netem::{LinkParams, Relay, SelfCheck};

/// `coterie netem ...`.
#[derive(Subcommand)]
pub enum Netem {
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
        /// The emulator's engine: `threads` (two threads per direction) or `loop` (one
        /// event-loop thread; its connect to the target blocks it: for a loopback target).
        #[arg(long, default_value = "threads", value_parser = ["threads", "loop"])]
        engine: String,
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
        /// The emulator's engine: `threads` (two threads per direction of every link) or
        /// `loop` (one event-loop thread for every link: far less CPU with many parties on few
        /// cores; its connects to the parties block it, so for parties on this host).
        #[arg(long, default_value = "threads", value_parser = ["threads", "loop"])]
        engine: String,
    },
    /// Measure the emulator: one-way latency, ping-pong round trip and bulk rate through one
    /// relay, each against the configuration (within 5%, `SelfCheck::TOLERANCE`, or exit 1).
    Selfcheck {
        /// Round-trip time in ms.
        #[arg(long)]
        rtt_ms: f64,
        /// Bandwidth in Mbit/s (0 = unlimited).
        #[arg(long, default_value_t = 0.0)]
        rate_mbit: f64,
        /// One-way probes and ping-pongs, each (medians reported).
        #[arg(long, default_value_t = 50)]
        pings: usize,
        /// Bulk transfer size in MB (0: no rate measurement).
        #[arg(long, default_value_t = 20)]
        bulk_mb: usize,
        /// The emulator's engine: `threads` (two threads per direction, what `relay` and `mesh`
        /// run) or `loop` (one event-loop thread for every relay of a process, what the
        /// threshold benchmark's many-party rows can use).
        #[arg(long, default_value = "threads", value_parser = ["threads", "loop"])]
        engine: String,
    },
}

/// The engine of an `--engine` value (clap admits only `threads` and `loop`).
fn engine_named(name: &str) -> coterie_net::netem::Engine {
    if name == "loop" {
        coterie_net::netem::Engine::EventLoop
    } else {
        coterie_net::netem::Engine::Threads
    }
}

/// Link parameters for the emulator run by `engine`, calibrated on this machine through it (the
/// relay's own cost is taken out of the configured delay; see `coterie_net::netem`).
fn link_with(
    rtt_ms: f64,
    rate_mbit: f64,
    engine: coterie_net::netem::Engine,
) -> Result<LinkParams, String> {
    if !(rtt_ms.is_finite() && rtt_ms >= 0.0 && rate_mbit.is_finite() && rate_mbit >= 0.0) {
        return Err(format!(
            "invalid link: {rtt_ms} ms RTT, {rate_mbit} Mbit/s (both must be finite and >= 0)"
        ));
    }
    LinkParams::new(Duration::from_secs_f64(rtt_ms / 1e3), rate_mbit)
        .with_engine(engine)
        .calibrated(201)
        .map_err(|e| format!("calibrating the link emulator: {e}"))
}

/// Runs `coterie netem ...`.
pub fn run(cmd: Netem) -> Result<(), String> {
    match cmd {
        Netem::Relay {
            listen,
            target,
            rtt_ms,
            rate_mbit,
            engine,
        } => {
            let p = link_with(rtt_ms, rate_mbit, engine_named(&engine))?;
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
            engine,
        } => {
            let p = link_with(rtt_ms, rate_mbit, engine_named(&engine))?;
            let text = coterie_base::fsio::read_bounded(&config, 1 << 20)
                .map_err(|e| e.to_string())
                .and_then(|b| {
                    String::from_utf8(b).map_err(|e| format!("{}: {e}", config.display()))
                })?;
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
            let toml = cf.to_toml().map_err(|e| e.to_string())?;
            coterie_base::fsio::write_atomic(&out, toml.as_bytes()).map_err(|e| e.to_string())?;
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
            engine,
        } => {
            let p = link_with(rtt_ms, rate_mbit, engine_named(&engine))?;
            let r = coterie_net::netem::self_check(p, pings, bulk_mb << 20)
                .map_err(|e| e.to_string())?;
            let ok = r.within(SelfCheck::TOLERANCE);
            println!(
                "{{\"one_way_ms_configured\": {:.3}, \"one_way_ms_measured\": {:.3}, \"one_way_rel_err\": {:.4}, \"rtt_ms_configured\": {:.3}, \"rtt_ms_measured\": {:.3}, \"rtt_ms_direct\": {:.4}, \"relay_overhead_us\": {:.1}, \"rtt_rel_err\": {:.4}, \"rate_mbit_configured\": {:.1}, \"rate_mbit_measured\": {:.2}, \"rate_rel_err\": {:.4}, \"within_5pct\": {}}}",
                r.one_way_configured * 1e3,
                r.one_way_measured * 1e3,
                r.one_way_error(),
                r.rtt_configured * 1e3,
                r.rtt_measured * 1e3,
                r.rtt_direct * 1e3,
                r.overhead * 1e6,
                r.rtt_error(),
                r.rate_configured / 1e6,
                r.rate_measured / 1e6,
                r.rate_error(),
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
