//! The decryption **service** (not the protocol alone) at 4 nodes, optionally through an
//! emulated 1 ms / 1 Gbit/s link, with one batch at a time or several in flight on lanes.
//!
//! The nodes (`coterie_threshold::node::run_node_with_lanes`, as `coterie party … threshold`
//! runs them) are tasks of this process over loopback mutual TLS, each pair of nodes through one
//! relay of coterie-net's link emulator when `--link-ms` is above 0 (all lanes of a pair share
//! that emulated link); the material comes from the **insecure** dealer (benchmarks only). Each
//! round waits until node 0's pool is full again, then `--streams` clients at once each send
//! `--batch` ciphertexts over their own connection (one request per ciphertext, as `coterie
//! decrypt` does) and check every answer and statement; the round's rate is all ciphertexts over
//! the time until the last answer.
//!
//! `cargo run --release -p coterie-threshold --example threshold_service_bench -- [--lanes L]
//! [--max-batch M] [--streams S] [--batch B] [--rounds R] [--link-ms 1]`
//!
//! Prints one line per round (its time, rate and the cores the process kept busy: CPU time over
//! wall time) and a summary line over the rounds after the first (median and best rate, median
//! cores busy).

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use coterie_net::netem::LinkParams;
use coterie_net::{MeshOptions, certs};
use coterie_spdz::{Counts, Z2k};
use coterie_threshold::Params;
use coterie_threshold::keys::PublicKey;
use coterie_threshold::node::{
    NodeEvent, PK_NOISE_BITS, PK_SAMPLES, ServiceArgs, StartOptions, run_node_with_lanes,
};
use coterie_threshold::service::{Event, material_for};

const NODES: usize = 4;

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name} takes a number, not {v}"))
        })
        .unwrap_or(default)
}

/// What the nodes reported that the rounds need: node 0's address, its ready bundles, its runs.
#[derive(Default)]
struct Seen {
    addr: Option<String>,
    ready: u64,
    runs: Vec<(usize, u64)>,
    errors: Vec<String>,
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // the allocator policy of `coterie`'s binary, so the bench measures what a party runs
    coterie_math::buffers::keep_freed_heap();
    let args: Vec<String> = std::env::args().collect();
    let lanes: u32 = arg(&args, "--lanes", 1);
    let streams: usize = arg(&args, "--streams", 2);
    let batch: usize = arg(&args, "--batch", 300);
    let rounds: usize = arg(&args, "--rounds", 5);
    let max_batch: usize = arg(&args, "--max-batch", streams * batch);
    let link_ms: u64 = arg(&args, "--link-ms", 0);
    let pool = (streams * batch) as u64;
    let decryptions = pool as usize * (rounds + 2);

    let dir = coterie_base::fsio::unique_temp_dir("coterie-thr-service-bench");
    std::fs::create_dir_all(&dir).unwrap();
    // the material is about 0.5 GB per round: removed on every way out, panics included
    let _cleanup = RemoveOnDrop(dir.clone());
    let pki = certs::generate_pki(NODES).unwrap();
    let addrs = certs::free_loopback_addresses(NODES).unwrap();
    let config = certs::write_pki(&dir.join("certs"), &pki, &addrs).unwrap();
    let (cert, key) = certs::issue_client_cert(&dir.join("certs"), "bench-client").unwrap();
    let (triples, bits, randoms) =
        material_for(&Params::paper(), decryptions, PK_SAMPLES, PK_NOISE_BITS).unwrap();
    let t = Instant::now();
    coterie_spdz::tools::insecure_deal_counts_to_stores(
        &dir.join("stores"),
        Z2k::spdz2k_64(),
        NODES,
        Counts {
            triples,
            bits,
            randoms,
            masks_per_party: 0,
        },
        1 << 16,
    )
    .unwrap();
    let link = (link_ms > 0).then(|| {
        LinkParams::new(Duration::from_millis(link_ms), 1000.0)
            .calibrated(51)
            .unwrap()
    });
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "# threshold service, {NODES} nodes (tasks of one process, 2 worker threads), loopback TLS{}, INSECURE dealer material; {lanes} lane(s), batches of at most {max_batch}; {streams} stream(s) of {batch} per round; dealing {:.1} s; load {}",
        match &link {
            Some(l) =>
                format!(", every pair through an emulated {link_ms} ms / 1 Gbit/s link ({l:?})"),
            None => String::new(),
        },
        t.elapsed().as_secs_f64(),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );

    // The nodes' meshes: the control mesh and `lanes` more when lanes ≥ 2, all lanes of a pair
    // through the pair's one emulated link.
    let meshes = if lanes >= 2 { lanes as usize + 1 } else { 1 };
    let opts = MeshOptions {
        timeout: Duration::from_secs(60),
        ..MeshOptions::default()
    };
    let (groups, _relays) = coterie_net::local::tls_lanes(NODES, meshes, opts, link)
        .await
        .unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut nodes = Vec::new();
    for (id, mut ms) in groups.into_iter().enumerate() {
        let mut main = ms.remove(0);
        let node_args = ServiceArgs {
            dir: dir.join("stores"),
            pool,
            chunk: 8,
            max_batch,
            client_listen: "127.0.0.1:0".into(),
            idle_exit_s: 0,
        };
        let (config, seen, mut stop_rx) = (config.clone(), seen.clone(), stop_rx.clone());
        nodes.push(tokio::spawn(async move {
            let seen2 = seen.clone();
            let mut events = move |e: NodeEvent| {
                if id != 0 {
                    return;
                }
                let mut s = seen2.lock().unwrap();
                match e {
                    NodeEvent::Serving { addr } => s.addr = Some(addr),
                    NodeEvent::Pool { available, .. }
                    | NodeEvent::Service(Event::Prepared { available, .. }) => s.ready = available,
                    NodeEvent::Service(Event::Decrypted {
                        batch,
                        available,
                        micros,
                    }) => {
                        s.ready = available;
                        s.runs.push((batch, micros));
                    }
                    NodeEvent::Service(Event::Refused { reason, count }) => s
                        .errors
                        .push(format!("{count} refused: {}", reason.as_str())),
                    _ => {}
                }
            };
            let stop = async move {
                let _ = stop_rx.wait_for(|s| *s).await;
            };
            let r = run_node_with_lanes(
                &mut main,
                ms,
                &config,
                &node_args,
                &StartOptions::default(),
                &mut events,
                stop,
            )
            .await;
            if let Err(e) = &r {
                seen.lock().unwrap().errors.push(format!("node {id}: {e}"));
            }
            let _ = coterie_net::Mesh::close(main).await;
            r
        }));
    }
    let addr = wait(&seen, Duration::from_secs(300), |s| s.addr.clone()).await;
    let pk =
        PublicKey::from_bytes(&std::fs::read(dir.join("stores/party-0/public-key.bin")).unwrap())
            .unwrap();
    let msgs: Vec<u64> = (0..batch).map(|j| (j % 2) as u64).collect();
    let cts: Vec<Vec<u8>> = msgs
        .iter()
        .map(|&m| pk.encrypt(m, 1, &mut rand::rng()).unwrap().to_bytes())
        .collect();
    let mut rates = Vec::new();
    let mut busies = Vec::new();
    for round in 0..rounds {
        wait(&seen, Duration::from_secs(600), |s| {
            (s.ready >= pool).then_some(())
        })
        .await;
        let before = seen.lock().unwrap().runs.len();
        let cpu0 = cpu_seconds();
        let t = Instant::now();
        let tasks: Vec<_> = (0..streams)
            .map(|_| {
                let (config, addr, cert, key, cts) = (
                    config.clone(),
                    addr.clone(),
                    cert.clone(),
                    key.clone(),
                    cts.clone(),
                );
                tokio::spawn(async move { stream(&config, &addr, &cert, &key, cts).await })
            })
            .collect();
        for task in tasks {
            let got = task.await.unwrap();
            assert_eq!(
                got,
                msgs.iter().map(|&m| Ok(m)).collect::<Vec<_>>(),
                "a stream came back wrong"
            );
        }
        let dt = t.elapsed().as_secs_f64();
        let busy = (cpu_seconds() - cpu0) / dt;
        let rate = (streams * batch) as f64 / dt;
        rates.push(rate);
        // node 0's runs reported so far (a lane reports its run when it ends)
        let runs: Vec<String> = seen.lock().unwrap().runs[before..]
            .iter()
            .map(|(b, us)| format!("{b}:{:.1}ms", *us as f64 / 1e3))
            .collect();
        println!(
            "round {round}: {:.1} ms, {rate:.0} dec/s, cores busy {busy:.2}; node 0's runs reported meanwhile {}",
            dt * 1e3,
            runs.join(" ")
        );
        busies.push(busy);
    }
    // round 0 faults each node's buffers in: the summary is over the later rounds
    let later = if rates.len() > 1 { 1 } else { 0 };
    let mut sorted = rates[later..].to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut busy = busies[later..].to_vec();
    busy.sort_by(f64::total_cmp);
    println!(
        "summary: {lanes} lane(s), max batch {max_batch}, {streams}x{batch}, link {link_ms} ms: median {:.0} dec/s, best {:.0}, cores busy median {:.2} (rounds 1..{})",
        sorted[sorted.len() / 2],
        sorted[sorted.len() - 1],
        busy[busy.len() / 2],
        rates.len()
    );
    stop_tx.send(true).unwrap();
    for n in nodes {
        n.await.unwrap().unwrap();
    }
    let errors = seen.lock().unwrap().errors.clone();
    assert!(errors.is_empty(), "{errors:?}");
}

/// Removes its directory when dropped.
struct RemoveOnDrop(std::path::PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// This process's CPU time so far (user + system, all threads), from `/proc/self/stat` (0 where
/// that is not readable); clock ticks of 10 ms.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // the fields after the command name (which is in parentheses and may hold spaces)
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name
    (tick(11) + tick(12)) / 100.0
}

/// One client stream: its own connection, every ciphertext a request, every answer checked.
async fn stream(
    config: &Path,
    addr: &str,
    cert: &Path,
    key: &Path,
    cts: Vec<Vec<u8>>,
) -> Vec<Result<u64, String>> {
    let ch = coterie_threshold::client::connect(config, addr, cert, key)
        .await
        .unwrap();
    coterie_threshold::client::decrypt_over(ch, cts)
        .await
        .unwrap()
}

/// Polls `seen` until `f` gives a value (panics after `limit`).
async fn wait<T>(seen: &Mutex<Seen>, limit: Duration, f: impl Fn(&Seen) -> Option<T>) -> T {
    let t = Instant::now();
    loop {
        {
            let s = seen.lock().unwrap();
            if let Some(v) = f(&s) {
                return v;
            }
            assert!(s.errors.is_empty(), "{:?}", s.errors);
        }
        assert!(t.elapsed() < limit, "the service did not get there in time");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
