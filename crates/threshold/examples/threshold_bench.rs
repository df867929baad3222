//! Benchmark of coterie-threshold over loopback mutual TLS (optionally through the coterie-net
//! link emulator), with **insecure** dealer material (triples, bits, gate bundles): it measures
//! the online phase and the gate preprocessing protocol, not triple generation.
//!
//! `cargo run --profile bench -p coterie-threshold --example threshold_bench -- [--quick] [--out DIR]`
//!
//! * gate preprocessing (2 parties): PrepSign gates per second by input length 4..9, bytes sent
//!   per gate (paper Table 4), excluding triple and bit generation;
//! * online decryption with the paper's parameters (n, q, p) = (1024, 2^64, 2), b = 8: batched
//!   throughput and single-ciphertext latency for 2, 4, 8 and 16 parties (paper Tables 1, 2),
//!   and bytes sent per decryption per party.
//!
//! Each configuration runs on the bare loopback and at 1 ms round trip / 1 Gbit/s through the
//! link emulator. All parties share this machine's cores.
//!
//! Other modes: `--grid` (Tables 2 and 3), `--prep` (Tables 4 and 5), `--king-latency`
//! (single-ciphertext latency at 4/8/16 parties over the all-to-all mesh and through a king,
//! coterie-net's `KingMesh`: `threshold-king.{txt,json}`), and
//! `--probe PARTIES MODE [--batch B] [--reps R] [--king K] [--lanes L] [--loopback | --net-emu]`
//! (one configuration, R timed batches, 3 by default or 10 for single ciphertexts; MODE 0 strict batched checks, 1 pipelined, 2 strict-9; `--king K` relays every
//! exchange through party K; `--lanes L` keeps L batches in flight, each lane its own engine,
//! gate pool and TLS group, and prints the process CPU over the timed window), and
//! `--prep-gates A [GATES] [--lanes L] [--loopback]` (one row of Table 4, for profiling; `L`
//! batches of `GATES` in flight, each its own engines and TLS pair).
//!
//! The pipelined schedules hold the dealt gate bundles **down-cast**, as the service holds the
//! bundles its gate store hands out (43,648 B per bundle and party); `--full-width` keeps them as
//! whole 128-bit shares (78,112 B), as every run before 2026-11-26 did.

use std::time::{Duration, Instant};

use coterie_net::netem::{LinkParams, Relay};
use coterie_net::{KingMesh, Mesh, MeshOptions, TlsMesh};
use coterie_spdz::{Counts, Engine, InsecureDealer, Z2k};
use coterie_threshold::gates::{
    GatePool, ShareOps, insecure_deal_bundles, prep_bundles, prep_subset_prods,
};
use coterie_threshold::keys::SharedKey;
use coterie_threshold::linmaps::{subset_prods_to_modltz, subset_prods_to_signs_fast};
use coterie_threshold::online::decrypt;
use coterie_threshold::pipelined::{decrypt_pipelined, decrypt_strict_single_check};
use coterie_threshold::{LweCiphertext, Params, round_p};

/// Connects `n` parties over loopback mutual TLS, every link through coterie-net's link emulator
/// when `netem` is given (keep the relays alive as long as the meshes).
async fn tls_group(n: usize, netem: Option<LinkParams>) -> (Vec<TlsMesh>, Vec<Relay>) {
    let opts = MeshOptions {
        timeout: Duration::from_secs(600),
        max_frame: 64 << 20,
        connect_deadline: Duration::from_secs(10),
    };
    // A free port picked for a party can be taken by another socket before the party binds it
    // (a race of free_loopback_addresses): retry the whole group.
    for attempt in 0..4 {
        match coterie_net::local::tls_group(n, opts.clone(), netem).await {
            Ok(g) => return g,
            Err(e) if attempt < 3 => eprintln!("group set-up failed ({e}), retrying"),
            Err(e) => panic!("group set-up failed: {e}"),
        }
    }
    unreachable!()
}

/// `lanes` TLS groups of `n` parties, lane-major (`out[l][i]`: party `i`'s mesh of lane `l`).
/// One lane is [`tls_group`]. Several go through `coterie_net::local::tls_lanes`: with `netem`,
/// all lanes of a pair of parties share one relay and one emulated link, so the lanes together
/// get each pair's link bandwidth once, as one lane does.
async fn lane_groups(
    n: usize,
    lanes: usize,
    netem: Option<LinkParams>,
) -> (Vec<Vec<TlsMesh>>, Vec<Relay>) {
    if lanes == 1 {
        let (g, r) = tls_group(n, netem).await;
        return (vec![g], r);
    }
    let opts = MeshOptions {
        timeout: Duration::from_secs(600),
        max_frame: 64 << 20,
        connect_deadline: Duration::from_secs(10),
    };
    for attempt in 0..4 {
        match coterie_net::local::tls_lanes(n, lanes, opts.clone(), netem).await {
            Ok((parties, relays)) => {
                let mut out: Vec<Vec<TlsMesh>> = (0..lanes).map(|_| Vec::new()).collect();
                for lanes_of_party in parties {
                    for (l, m) in lanes_of_party.into_iter().enumerate() {
                        out[l].push(m);
                    }
                }
                return (out, relays);
            }
            Err(e) if attempt < 3 => eprintln!("lane set-up failed ({e}), retrying"),
            Err(e) => panic!("lane set-up failed: {e}"),
        }
    }
    unreachable!()
}

/// (gates/s, kB sent per gate by party 0)
async fn bench_prep(a: u32, gates: usize, netem: Option<LinkParams>) -> (f64, f64) {
    bench_prep_lanes(a, gates, netem, 1).await
}

/// [`bench_prep`] with `lanes` batches of `gates` gates in flight at once (every lane its own
/// engines and TLS pair, all lanes on one emulated link, [`lane_groups`], all starting
/// together): (gates/s over all lanes, from the earliest start to the latest end; kB sent per
/// gate by party 0).
async fn bench_prep_lanes(
    a: u32,
    gates: usize,
    netem: Option<LinkParams>,
    lanes: usize,
) -> (f64, f64) {
    let ring = Z2k::spdz2k_64();
    let mut rng = rand::rng();
    let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
    let c = Counts {
        triples: gates * ((1 << a) - a as usize - 1),
        bits: gates * a as usize,
        randoms: 0,
        masks_per_party: 0,
    };
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(2 * lanes));
    let mut hs = Vec::new();
    let (groups, relays) = lane_groups(2, lanes, netem).await;
    for meshes in groups {
        let preps = dealer.deal(c, &mut rng);
        for (mut mesh, prep) in meshes.into_iter().zip(preps) {
            let barrier = barrier.clone();
            hs.push(tokio::spawn(async move {
                let mut eng = Engine::new(prep);
                let ops = ShareOps(*eng.ring());
                let sent0 = mesh.stats().total_sent();
                barrier.wait().await;
                let t = Instant::now();
                let widths = vec![a; gates];
                let (sp, _) = prep_subset_prods(&mut eng, &mut mesh, &widths)
                    .await
                    .unwrap();
                let mut entries = 0usize;
                for (_, p) in &sp {
                    entries += if a == 9 {
                        subset_prods_to_modltz(&ops, p).len()
                    } else {
                        subset_prods_to_signs_fast(&ops, p).len()
                    };
                }
                let end = Instant::now();
                assert_eq!(entries, gates << a);
                let sent = mesh.stats().total_sent() - sent0;
                mesh.close().await.ok();
                (t, end, sent)
            }));
        }
    }
    let (mut first, mut last) = (None::<Instant>, None::<Instant>);
    let mut sent0 = 0u64;
    for (i, h) in hs.into_iter().enumerate() {
        let (t, end, s) = h.await.unwrap();
        first = Some(first.map_or(t, |f| f.min(t)));
        last = Some(last.map_or(end, |l| l.max(end)));
        if i == 0 {
            sent0 = s;
        }
    }
    drop(relays);
    let span = match (first, last) {
        (Some(f), Some(l)) => (l - f).as_secs_f64(),
        _ => f64::NAN,
    };
    (
        (lanes * gates) as f64 / span,
        sent0 as f64 / gates as f64 / 1000.0,
    )
}

/// Full gate bundles for the paper's parameters (8 Sign gates + 1 ModLTZ gate per decryption):
/// (seconds per 1000 decryptions, MB sent per party per 1000 decryptions).
async fn bench_bundles(count: usize, netem: Option<LinkParams>) -> (f64, f64) {
    let lt = Params::paper().lt().unwrap();
    let ring = Z2k::spdz2k_64();
    let mut rng = rand::rng();
    let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
    let c = Counts {
        triples: count * lt.mults_per_bundle(),
        bits: count * lt.bits_per_bundle(),
        randoms: 0,
        masks_per_party: 0,
    };
    let preps = dealer.deal(c, &mut rng);
    let (meshes, _relays) = tls_group(2, netem).await;
    let mut hs = Vec::new();
    for (mut mesh, prep) in meshes.into_iter().zip(preps) {
        hs.push(tokio::spawn(async move {
            let mut eng = Engine::new(prep);
            let sent0 = mesh.stats().total_sent();
            let t = Instant::now();
            let (b, _) = prep_bundles(&mut eng, &mut mesh, &lt, count, 0)
                .await
                .unwrap();
            let dt = t.elapsed().as_secs_f64();
            assert_eq!(b.len(), count);
            let sent = mesh.stats().total_sent() - sent0;
            mesh.close().await.ok();
            (dt, sent)
        }));
    }
    let mut worst = 0f64;
    let mut sent = 0;
    for (i, h) in hs.into_iter().enumerate() {
        let (dt, s) = h.await.unwrap();
        worst = worst.max(dt);
        if i == 0 {
            sent = s;
        }
    }
    (
        worst / count as f64 * 1000.0,
        sent as f64 / count as f64 * 1000.0 / 1e6,
    )
}

/// Online decryption: (seconds of each repetition's batch, bytes sent by party 0 per decryption);
/// with `king`, every exchange is relayed through that party ([`KingMesh`], key set-up not
/// timed). With `lanes` batches in flight, every party runs `lanes` independent engines
/// (own material, own gate pool, own mesh: a TLS group per lane, all lanes on one emulated
/// link when `netem` is given, [`lane_groups`]), all lanes starting each repetition together. Returns
/// the span of each repetition over all lanes (from the earliest start to the latest end) and
/// party 0's bytes per decryption over all lanes.
async fn bench_online(
    parties: usize,
    batch: usize,
    reps: usize,
    netem: Option<LinkParams>,
    mode: u8,
    king: Option<usize>,
    lanes: usize,
) -> (Vec<f64>, f64) {
    let p = Params::paper();
    let lt = p.lt().unwrap();
    let ring = Z2k::spdz2k_64();
    let mut rng = rand::rng();
    let dealer = InsecureDealer::insecure_new(ring, parties, &mut rng).unwrap();
    let total = batch * reps;
    let sk: Vec<i64> = (0..p.n)
        .map(|_| (rand::Rng::next_u64(&mut rng) & 1) as i64)
        .collect();
    let mut cts = Vec::with_capacity(total);
    let mut want = Vec::with_capacity(total);
    for j in 0..total {
        let mu = (j % 2) as u64;
        let e = (rand::Rng::next_u64(&mut rng) >> 10) as i64 - (1i64 << 53);
        cts.push(LweCiphertext::encrypt_with_secret_key(
            &sk, mu, e, 64, 1, &mut rng,
        ));
        want.push(mu);
    }
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(parties * lanes));
    let mut hs = Vec::new();
    let (groups, relays) = lane_groups(parties, lanes, netem).await;
    for meshes in groups {
        let preps = dealer.deal(
            Counts {
                triples: 0,
                bits: 0,
                randoms: 5 * total,
                masks_per_party: 0,
            },
            &mut rng,
        );
        let keys = SharedKey::insecure_deal(&dealer, &ring, &sk, &mut rng);
        let mut bundles = insecure_deal_bundles(&dealer, &ring, &lt, total, 0, &mut rng);
        if mode != 0 && !FULL_WIDTH.load(std::sync::atomic::Ordering::Relaxed) {
            // held as the service holds bundles from its gate store: down-cast to the widths
            // the per-value checks need (43,648 B per bundle, packed on push), not 128-bit
            // shares (78,112 B); the strict batched schedule (mode 0) needs the full width
            for b in bundles.iter_mut().flatten() {
                b.downcast = true;
            }
        }
        for (((mesh, prep), key), b) in meshes.into_iter().zip(preps).zip(keys).zip(bundles) {
            let run = OnlineParty {
                cts: cts.clone(),
                want: want.clone(),
                barrier: barrier.clone(),
                batch,
                mode,
                p,
            };
            hs.push(tokio::spawn(async move {
                let mut eng = Engine::new(prep);
                let mut pool = GatePool::new(lt);
                pool.push(b).unwrap();
                match king {
                    Some(k) => {
                        let mesh = KingMesh::new(mesh, k).await.unwrap();
                        run.run(mesh, &mut eng, &mut pool, &key).await
                    }
                    None => run.run(mesh, &mut eng, &mut pool, &key).await,
                }
            }));
        }
    }
    let mut spans: Vec<(Instant, Instant)> = Vec::new();
    let mut sent = 0;
    for (i, h) in hs.into_iter().enumerate() {
        let (t, s) = h.await.unwrap();
        if i % parties == 0 {
            sent += s;
        }
        if i == 0 {
            spans = t;
        } else {
            for (a, b) in spans.iter_mut().zip(t) {
                a.0 = a.0.min(b.0);
                a.1 = a.1.max(b.1);
            }
        }
    }
    drop(relays);
    let times: Vec<f64> = spans.iter().map(|(a, b)| (*b - *a).as_secs_f64()).collect();
    assert_eq!(round_p(0, 64, 1), 0);
    (times, sent as f64 / (total * lanes) as f64)
}

/// One party's part of [`bench_online`].
struct OnlineParty {
    cts: Vec<LweCiphertext>,
    want: Vec<u64>,
    barrier: std::sync::Arc<tokio::sync::Barrier>,
    batch: usize,
    mode: u8,
    p: Params,
}

impl OnlineParty {
    /// Decrypts every batch over `mesh`: (start and end of each batch, bytes sent).
    async fn run<M: Mesh>(
        self,
        mut mesh: M,
        eng: &mut Engine<Z2k, coterie_spdz::VecPrep<Z2k>>,
        pool: &mut GatePool,
        key: &SharedKey,
    ) -> (Vec<(Instant, Instant)>, u64) {
        let p = &self.p;
        let sent0 = mesh.stats().total_sent();
        let mut times = Vec::new();
        let mut cpu0 = 0.0;
        let batches = self
            .cts
            .chunks(self.batch)
            .zip(self.want.chunks(self.batch));
        for (sid, chunk) in batches.enumerate() {
            let sid = sid as u64;
            // every iteration starts at all parties together (a request reaching every node
            // at once); the latency is from the earliest start to the latest end
            self.barrier.wait().await;
            let t = Instant::now();
            if sid == 0 && mesh.id() == 0 {
                cpu0 = process_cpu_s();
            }
            let out = match self.mode {
                1 => decrypt_pipelined(eng, &mut mesh, p, key, chunk.0, pool, sid)
                    .await
                    .unwrap(),
                2 => decrypt_strict_single_check(eng, &mut mesh, p, key, chunk.0, pool, sid)
                    .await
                    .unwrap(),
                _ => decrypt(eng, &mut mesh, p, key, chunk.0, pool)
                    .await
                    .unwrap(),
            };
            times.push((t, Instant::now()));
            assert_eq!(out, chunk.1);
        }
        if mesh.id() == 0 {
            // every party has finished its last decryption once all pass this barrier
            self.barrier.wait().await;
            let window = times
                .first()
                .map_or(0.0, |(t, _)| t.elapsed().as_secs_f64());
            *TIMED_CPU.lock().unwrap() = (process_cpu_s() - cpu0, window);
        } else {
            self.barrier.wait().await;
        }
        let sent = mesh.stats().total_sent() - sent0;
        mesh.close().await.ok();
        (times, sent)
    }
}

/// `--netem-engine threads|loop`: the link emulator's engine for every emulated link
/// (coterie_net::netem::Engine; the threads engine unless named).
static ENGINE: std::sync::OnceLock<coterie_net::netem::Engine> = std::sync::OnceLock::new();

/// `--full-width`: hold the dealt bundles as whole 128-bit shares (78,112 B per bundle, as every
/// run before 2026-11-26 did) instead of down-cast as the service's gate store hands them out.
static FULL_WIDTH: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Process CPU time and wall time (seconds) from the first timed decryption of the last
/// [`bench_online`] call to the end of its last one (as seen by party 0).
static TIMED_CPU: std::sync::Mutex<(f64, f64)> = std::sync::Mutex::new((0.0, 0.0));

/// CPU time (user + system) of this process so far, in seconds (0 where /proc is missing).
fn process_cpu_s() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // fields after the command name (which may contain spaces) start at state, field 3
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 (1-based), i.e. 11 and 12 after the state field
    (ticks(11) + ticks(12)) / 100.0
}

/// Issue 17 item 2: single-ciphertext latency (pipelined, 5 rounds) at 4, 8 and 16 parties over
/// the all-to-all mesh and through a king (party 0), on the loopback and at 1 ms / 1 Gbit/s;
/// with the process's CPU time per decryption (all parties and the emulator's relay threads
/// share this process and its two worker threads) to tell a CPU-bound run from a
/// latency-bound one. Writes `threshold-king.txt` and `threshold-king.json` (one object per
/// line) to `out_dir`.
async fn king_table(quick: bool, out_dir: &str) {
    use coterie_net::netem::Engine;
    let reps = if quick { 7 } else { 21 };
    let one_ms = link_with(1, 1000.0, Engine::Threads);
    let one_ms_loop = link_with(1, 1000.0, Engine::EventLoop);
    // the emulator subtracts its calibrated own cost from the one-way delay: an overhead
    // measured on a busy machine above the real one shortens the emulated latency
    let overhead_us = one_ms.map_or(0.0, |l| l.overhead.as_secs_f64() * 1e6);
    let overhead_loop_us = one_ms_loop.map_or(0.0, |l| l.overhead.as_secs_f64() * 1e6);
    let mut text = String::new();
    let mut json = Vec::new();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let head = format!(
        "# single-ciphertext latency, pipelined (5 rounds), all-to-all vs king (party 0); {reps} reps, median and min; cpu = process CPU time per decryption over the timed window (user+sys, all parties and relays; 10 ms ticks), cores_busy = that CPU time / the window's wall time; 1 ms link: {one_ms:?} (calibrated relay overhead {overhead_us:.0} us; the same link run by the emulator's event loop: {overhead_loop_us:.0} us); load average at start: {}",
        load.trim()
    );
    println!("{head}");
    text.push_str(&head);
    text.push('\n');
    // the same 1 ms link run by each of the emulator's engines (coterie_net::netem::Engine),
    // one after the other in this run
    for (net, lp) in [
        ("loopback", None),
        ("1ms-1Gbit", one_ms),
        ("1ms-1Gbit-loop", one_ms_loop),
    ] {
        for parties in [4usize, 8, 16] {
            for (mesh, king) in [("all-to-all", None), ("king", Some(0usize))] {
                let n = parties as u64;
                let msgs = if king.is_some() {
                    2 * (n - 1)
                } else {
                    n * (n - 1)
                };
                let engine = match lp.map(|l| l.engine) {
                    None => "none",
                    Some(Engine::Threads) => "threads",
                    Some(Engine::EventLoop) => "loop",
                };
                let (mut t, bytes) = bench_online(parties, 1, reps, lp, 1, king, 1).await;
                let (cpu, wall) = *TIMED_CPU.lock().unwrap();
                let cpu_per_dec_ms = cpu / reps as f64 * 1e3;
                // cores kept busy over the timed window (it includes the barriers between
                // decryptions); 2 = both cores of this machine saturated
                let busy = cpu / wall.max(1e-9);
                let min = t.iter().cloned().fold(f64::MAX, f64::min) * 1e3;
                let med = median(&mut t) * 1e3;
                let line = format!(
                    "king net={net} parties={parties} mesh={mesh} msgs_per_round={msgs} median_ms={med:.2} min_ms={min:.2} cpu_ms_per_dec={cpu_per_dec_ms:.1} cores_busy={busy:.2} bytes_per_dec_party0={bytes:.0} samples_ms={:?}",
                    t.iter()
                        .map(|x| (x * 1e5).round() / 1e2)
                        .collect::<Vec<_>>()
                );
                println!("{line}");
                text.push_str(&line);
                text.push('\n');
                json.push(format!(
                    "{{\"bench\":\"king-latency\",\"net\":\"{net}\",\"engine\":\"{engine}\",\"mesh\":\"{mesh}\",\"schedule\":\"pipelined\",\"parties\":{parties},\"msgs_per_round\":{msgs},\"rounds\":5,\"median_ms\":{med:.3},\"min_ms\":{min:.3},\"cpu_ms_per_dec\":{cpu_per_dec_ms:.2},\"cores_busy\":{busy:.2},\"reps\":{reps},\"relay_overhead_us\":{:.1},\"bytes_per_dec_party0\":{bytes:.0},\"load\":\"{}\"}}",
                    lp.map_or(0.0, |l| l.overhead.as_secs_f64() * 1e6),
                    load.trim()
                ));
            }
        }
    }
    std::fs::create_dir_all(out_dir).ok();
    std::fs::write(format!("{out_dir}/threshold-king.txt"), &text).unwrap();
    std::fs::write(
        format!("{out_dir}/threshold-king.json"),
        format!("{}\n", json.join("\n")),
    )
    .unwrap();
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// OT-based triple generation (coterie-spdz `OtPrep`, 2 parties): triples per second,
/// set-up excluded, and MB sent per party per 1000 triples.
async fn bench_ot_triples(triples: usize, netem: Option<LinkParams>) -> (f64, f64) {
    use coterie_spdz::ot_prep::OtPrep;
    let (meshes, _relays) = tls_group(2, netem).await;
    let mut hs = Vec::new();
    for mut mesh in meshes {
        hs.push(tokio::spawn(async move {
            let mut p = OtPrep::setup(&mut mesh, Z2k::spdz2k_64()).await.unwrap();
            let sent0 = mesh.stats().total_sent();
            let t = Instant::now();
            let v = p
                .produce(
                    &mut mesh,
                    Counts {
                        triples,
                        ..Counts::default()
                    },
                )
                .await
                .unwrap();
            let dt = t.elapsed().as_secs_f64();
            drop(v);
            let sent = mesh.stats().total_sent() - sent0;
            mesh.close().await.ok();
            (dt, sent)
        }));
    }
    let mut worst = 0f64;
    let mut sent = 0;
    for (i, h) in hs.into_iter().enumerate() {
        let (dt, s) = h.await.unwrap();
        worst = worst.max(dt);
        if i == 0 {
            sent = s;
        }
    }
    (
        triples as f64 / worst,
        sent as f64 / triples as f64 * 1000.0 / 1e6,
    )
}

/// A link of `rtt_ms` round trip and `mbit` Mbit/s (0 = unlimited), read in chunks of up to
/// 64 KiB (fewer relay wake-ups with 16 parties on two cores), calibrated here (41 probes).
fn link(rtt_ms: u64, mbit: f64) -> Option<LinkParams> {
    link_with(rtt_ms, mbit, ENGINE.get().copied().unwrap_or_default())
}

/// [`link`] run by `engine`.
fn link_with(rtt_ms: u64, mbit: f64, engine: coterie_net::netem::Engine) -> Option<LinkParams> {
    Some(
        LinkParams {
            chunk: 64 * 1024,
            ..LinkParams::new(Duration::from_millis(rtt_ms), mbit)
        }
        .with_engine(engine)
        .calibrated(41)
        .unwrap(),
    )
}

/// Paper Tables 2 and 3 on this machine: pipelined schedule, 4/8/16 parties, 1/10/100 ms RTT,
/// 100 Mbit/s and 1 Gbit/s, every party in this process, links through coterie-net's emulator.
async fn grid(quick: bool, out_dir: &str) {
    let mut text = String::new();
    let mut json = Vec::new();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let engine = match ENGINE.get().copied().unwrap_or_default() {
        coterie_net::netem::Engine::Threads => "threads",
        coterie_net::netem::Engine::EventLoop => "loop",
    };
    let head = format!(
        "# coterie-threshold grid (pipelined, 5 rounds; insecure dealer material; link emulator engine: {engine}); load average at start: {}",
        load.trim()
    );
    println!("{head}");
    text.push_str(&head);
    text.push('\n');
    for parties in [4usize, 8, 16] {
        for rtt in [1u64, 10, 100] {
            for mbit in [100.0, 1000.0] {
                let link = link(rtt, mbit);
                // median of 11 single-ciphertext runs below 100 ms (5 before 2026-11-26)
                let reps = if quick || rtt == 100 { 3 } else { 11 };
                let (mut lat, _) = bench_online(parties, 1, reps, link, 1, None, 1).await;
                let lat_ms = median(&mut lat) * 1e3;
                // one batch in flight: larger batches at larger RTT amortize the 5 rounds (the
                // gate bundles are dealt per cell, ~80 kB per bundle per party in memory)
                let scale = match rtt {
                    1 => 1,
                    10 => 2,
                    _ => 3,
                };
                let batch = scale
                    * match (parties, quick) {
                        (4, false) => 1000,
                        (8, false) => 400,
                        (_, false) => 150,
                        (4, true) => 300,
                        _ => 100,
                    };
                let (t, bytes) = bench_online(parties, batch, 2, link, 1, None, 1).await;
                let best = t.iter().cloned().fold(f64::MAX, f64::min);
                let thr = batch as f64 / best;
                let line = format!(
                    "grid parties={parties} rtt_ms={rtt} mbit={mbit} latency_ms={lat_ms:.2} throughput_dec_s={thr:.0} batch={batch} bytes_per_dec_party0={bytes:.0}"
                );
                println!("{line}");
                text.push_str(&line);
                text.push('\n');
                json.push(format!(
                    "{{\"parties\":{parties},\"rtt_ms\":{rtt},\"mbit\":{mbit},\"engine\":\"{engine}\",\"latency_ms\":{lat_ms:.3},\"throughput_dec_s\":{thr:.1},\"batch\":{batch},\"bytes_per_dec_party0\":{bytes:.1}}}"
                ));
            }
        }
    }
    std::fs::create_dir_all(out_dir).ok();
    // the event-loop engine's grid is written beside the threads engine's, not over it
    let name = if engine == "loop" {
        "threshold-grid-loop"
    } else {
        "threshold-grid"
    };
    std::fs::write(format!("{out_dir}/{name}.txt"), &text).unwrap();
    std::fs::write(
        format!("{out_dir}/{name}.json"),
        format!("[\n{}\n]\n", json.join(",\n")),
    )
    .unwrap();
}

/// Paper Tables 4 and 5: gate preprocessing (2 parties, 1 ms, 1 Gbit/s) per input length,
/// cost per 1000 decryptions, and the same including OT-based triple generation.
async fn prep_tables(quick: bool, out_dir: &str) {
    let link = link(1, 1000.0);
    let lt = Params::paper().lt().unwrap();
    let mut text = String::new();
    let mut json = Vec::new();
    let mut log = |s: String, j: String| {
        println!("{s}");
        text.push_str(&s);
        text.push('\n');
        json.push(j);
    };
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    log(
        format!(
            "# gate preprocessing, 2 parties, 1 ms / 1 Gbit/s; load average {}",
            load.trim()
        ),
        format!("{{\"load\":\"{}\"}}", load.trim()),
    );
    for a in 4..=9u32 {
        let budget = if quick { 40_000 } else { 160_000 };
        let gates = (budget >> a).max(20);
        let (rate, kb) = bench_prep(a, gates, link).await;
        log(
            format!("table4 a={a} gates={gates} gates_per_s={rate:.0} kB_per_gate={kb:.2}"),
            format!(
                "{{\"table\":4,\"a\":{a},\"gates\":{gates},\"gates_per_s\":{rate:.1},\"kB_per_gate\":{kb:.3}}}"
            ),
        );
    }
    let count = if quick { 10 } else { 40 };
    let (secs, mb) = bench_bundles(count, link).await;
    log(
        format!("table5 gates-only s_per_1000_dec={secs:.2} MB_per_1000_dec_per_party={mb:.1}"),
        format!(
            "{{\"table\":5,\"what\":\"gates\",\"s_per_1000_dec\":{secs:.3},\"MB_per_1000_dec\":{mb:.2}}}"
        ),
    );
    let triples = if quick { 5_000 } else { 20_000 };
    let (tps, mb_per_1000_triples) = bench_ot_triples(triples, link).await;
    let per_dec = lt.mults_per_bundle() as f64;
    let ot_secs = per_dec * 1000.0 / tps;
    let ot_mb = mb_per_1000_triples * per_dec;
    log(
        format!(
            "table5 ot-triples triples={triples} triples_per_s={tps:.0} MB_per_1000_triples={mb_per_1000_triples:.2} => per 1000 decryptions ({per_dec} triples each): {ot_secs:.1} s, {ot_mb:.0} MB; total with gates {:.1} s",
            ot_secs + secs
        ),
        format!(
            "{{\"table\":5,\"what\":\"ot-triples\",\"triples_per_s\":{tps:.1},\"MB_per_1000_triples\":{mb_per_1000_triples:.3},\"s_per_1000_dec_triples\":{ot_secs:.2},\"MB_per_1000_dec_triples\":{ot_mb:.1},\"s_per_1000_dec_total\":{:.2}}}",
            ot_secs + secs
        ),
    );
    std::fs::create_dir_all(out_dir).ok();
    std::fs::write(format!("{out_dir}/threshold-prep.txt"), &text).unwrap();
    std::fs::write(
        format!("{out_dir}/threshold-prep.json"),
        format!("[\n{}\n]\n", json.join(",\n")),
    )
    .unwrap();
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let out_dir = args
        .iter()
        .position(|a| a == "--out")
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| "bench/results".into());
    if args.iter().any(|a| a == "--full-width") {
        FULL_WIDTH.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    if let Some(i) = args.iter().position(|a| a == "--netem-engine") {
        let e = match args.get(i + 1).map(String::as_str) {
            Some("threads") => coterie_net::netem::Engine::Threads,
            Some("loop") => coterie_net::netem::Engine::EventLoop,
            other => panic!("--netem-engine takes threads or loop, not {other:?}"),
        };
        ENGINE.set(e).unwrap();
    }
    let one_ms = LinkParams::new(Duration::from_millis(1), 1000.0)
        .with_engine(ENGINE.get().copied().unwrap_or_default())
        .calibrated(51)
        .ok();
    if args.iter().any(|a| a == "--grid") {
        grid(quick, &out_dir).await;
        return;
    }
    if args.iter().any(|a| a == "--king-latency") {
        king_table(quick, &out_dir).await;
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--prep-gates") {
        // one row of Table 4 (for profiling): `--prep-gates A [GATES]`
        let a: u32 = args[i + 1].parse().unwrap();
        let gates: usize = args
            .get(i + 2)
            .and_then(|g| g.parse().ok())
            .unwrap_or((160_000usize >> a).max(20));
        let lp = if args.iter().any(|a| a == "--loopback") {
            None
        } else {
            link(1, 1000.0)
        };
        let lanes: usize = args
            .iter()
            .position(|a| a == "--lanes")
            .map_or(1, |i| args[i + 1].parse().unwrap());
        let (rate, kb) = bench_prep_lanes(a, gates, lp, lanes).await;
        println!(
            "table4 a={a} gates={gates} lanes={lanes} gates_per_s={rate:.0} kB_per_gate={kb:.2} link={}",
            if lp.is_some() {
                "1ms-1Gbit"
            } else {
                "loopback"
            }
        );
        return;
    }
    if args.iter().any(|a| a == "--prep") {
        prep_tables(quick, &out_dir).await;
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--probe") {
        let parties: usize = args[i + 1].parse().unwrap();
        let mode: u8 = args[i + 2].parse().unwrap();
        let link = if args.iter().any(|a| a == "--loopback") {
            None
        } else if args.iter().any(|a| a == "--net-emu") {
            // coterie-net's default chunk (16 KiB), as the legacy tables use
            one_ms
        } else {
            link(1, 1000.0)
        };
        eprintln!("{link:?}");
        let batch: usize = args
            .iter()
            .position(|a| a == "--batch")
            .map_or(1, |i| args[i + 1].parse().unwrap());
        let king: Option<usize> = args
            .iter()
            .position(|a| a == "--king")
            .map(|i| args[i + 1].parse().unwrap());
        let lanes: usize = args
            .iter()
            .position(|a| a == "--lanes")
            .map_or(1, |i| args[i + 1].parse().unwrap());
        let reps: usize = args
            .iter()
            .position(|a| a == "--reps")
            .map_or(if batch > 1 { 3 } else { 10 }, |i| {
                args[i + 1].parse().unwrap()
            });
        let (mut t, bytes) = bench_online(parties, batch, reps, link, mode, king, lanes).await;
        println!(
            "bytes/dec party0 {bytes:.0}; dec/s {:.0} ({lanes} lane(s))",
            (batch * lanes) as f64 / t.iter().cloned().fold(f64::MAX, f64::min)
        );
        println!("{:?}", t);
        let (cpu, window) = *TIMED_CPU.lock().unwrap();
        println!(
            "median {:.3} ms; process CPU over the timed window: {:.2} cores busy of 2",
            median(&mut t) * 1e3,
            cpu / window.max(1e-9)
        );
        return;
    }
    let nets: Vec<(&str, Option<LinkParams>)> = vec![("loopback", None), ("1ms-1Gbit", one_ms)];
    let mut json = Vec::new();
    let mut text = String::new();
    let log = |s: String, text: &mut String| {
        println!("{s}");
        text.push_str(&s);
        text.push('\n');
    };
    log(
        format!(
            "# coterie-threshold benchmark ({} mode)",
            if quick { "quick" } else { "full" }
        ),
        &mut text,
    );
    for (net, lp) in &nets {
        for a in 4..=9u32 {
            let budget = if quick { 40_000 } else { 200_000 };
            let gates = (budget >> a).max(20);
            let (rate, kb) = bench_prep(a, gates, *lp).await;
            log(
                format!(
                    "prep net={net} parties=2 a={a} gates={gates} gates_per_s={rate:.0} kB_per_gate={kb:.2}"
                ),
                &mut text,
            );
            json.push(format!("{{\"bench\":\"prep\",\"net\":\"{net}\",\"parties\":2,\"a\":{a},\"gates\":{gates},\"gates_per_s\":{rate:.1},\"kB_per_gate\":{kb:.3}}}"));
        }
        let count = if quick { 10 } else { 50 };
        let (secs, mb) = bench_bundles(count, *lp).await;
        log(
            format!(
                "prep-bundles net={net} parties=2 bundles={count} s_per_1000_dec={secs:.2} MB_per_1000_dec={mb:.2}"
            ),
            &mut text,
        );
        json.push(format!("{{\"bench\":\"prep-bundles\",\"net\":\"{net}\",\"parties\":2,\"bundles\":{count},\"s_per_1000_dec\":{secs:.3},\"MB_per_1000_dec\":{mb:.3}}}"));
        for parties in [2usize, 4, 8, 16] {
            for (mode, pipelined) in [
                ("strict-batched-check", 0u8),
                ("strict-9", 2),
                ("pipelined", 1),
            ] {
                let batch = if quick || parties > 4 { 200 } else { 1000 };
                let (t, bytes) = bench_online(parties, batch, 2, *lp, pipelined, None, 1).await;
                let best = t.iter().cloned().fold(f64::MAX, f64::min);
                let thr = batch as f64 / best;
                log(
                    format!(
                        "online-throughput net={net} mode={mode} parties={parties} batch={batch} dec_per_s={thr:.0} bytes_per_dec_party0={bytes:.0}"
                    ),
                    &mut text,
                );
                json.push(format!("{{\"bench\":\"online-throughput\",\"net\":\"{net}\",\"mode\":\"{mode}\",\"parties\":{parties},\"batch\":{batch},\"dec_per_s\":{thr:.1},\"bytes_per_dec\":{bytes:.1}}}"));
                let reps = if quick { 10 } else { 30 };
                let (mut t, bytes1) = bench_online(parties, 1, reps, *lp, pipelined, None, 1).await;
                let med = median(&mut t) * 1000.0;
                log(
                    format!(
                        "online-latency net={net} mode={mode} parties={parties} median_ms={med:.3} bytes_single_dec_party0={bytes1:.0}"
                    ),
                    &mut text,
                );
                json.push(format!("{{\"bench\":\"online-latency\",\"net\":\"{net}\",\"mode\":\"{mode}\",\"parties\":{parties},\"median_ms\":{med:.4},\"bytes_per_dec\":{bytes1:.1}}}"));
            }
        }
    }
    std::fs::create_dir_all(&out_dir).ok();
    std::fs::write(format!("{out_dir}/threshold-bench.txt"), &text).unwrap();
    std::fs::write(
        format!("{out_dir}/threshold-bench.json"),
        format!("[\n{}\n]\n", json.join(",\n")),
    )
    .unwrap();
}
