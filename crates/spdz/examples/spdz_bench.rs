//! Online-phase benchmark of coterie-spdz: 2 parties over loopback mutual TLS (optionally through
//! the coterie-net link emulator), material from the **insecure** dealer (online phase only).
//!
//! `cargo run --profile bench -p coterie-spdz --example spdz_bench -- [--big N] [--netem] [--json PATH]`
//! `[--ot-only] [--ot-parties LIST] [--ot-triples N] [--ot-bits N] [--ot-ext kos,ss4,...]`
//! `[--ot-lanes L] [--ot-k 64|32] [--netem-engine threads|loop] [--netem-ms D] [--netem-mbit R]`
//! (the emulated link of `--netem`: `D` ms round trip, default 1, and `R` Mbit/s, default 1000)
//!
//! The OT part runs `OtPrep` (maliciously secure) once per listed OT extension (`kos`, or `ss<k>`
//! for SoftSpokenOT with block size `k`; default `ss4`, the producer's default) in the same run.
//! `--ot-lanes L` makes the triples on `L` lanes at once (see `run_ot`; default 1).
//! `--ot-k` picks the OT producer's ring, `Z_{2^64}` (default) or `Z_{2^32}`, both with
//! `s = 64` (random bits by XOR at 64, by square roots at 32).
//!
//! For each ring and batch size: Beaver multiplications per second (one `mul` call on the whole
//! batch, one opening round) and openings per second (one `open` call), each followed by one
//! batched MAC check, timed separately; bytes sent per party per operation.

use std::time::{Duration, Instant};

use coterie_net::local::tls_lanes;
use coterie_net::netem::{LinkParams, Relay};
use coterie_net::{Mesh, MeshOptions, TlsMesh};
use coterie_spdz::ot_prep::{OtExtension, OtLanes, OtPrep};
use coterie_spdz::{Counts, Engine, Fp64, FpBig, InsecureDealer, Ring, Z2k};
use rand::SeedableRng;

async fn tls_pair(netem: Option<LinkParams>) -> (Vec<TlsMesh>, Vec<Relay>) {
    tls_n(2, netem).await
}

fn mesh_opts() -> MeshOptions {
    MeshOptions {
        timeout: Duration::from_secs(600),
        max_frame: 64 << 20,
        ..MeshOptions::default()
    }
}

async fn tls_n(n: usize, netem: Option<LinkParams>) -> (Vec<TlsMesh>, Vec<Relay>) {
    coterie_net::local::tls_group(n, mesh_opts(), netem)
        .await
        .unwrap()
}

#[derive(Debug, Clone, Copy, Default)]
struct Times {
    mul_s: f64,
    mul_check_s: f64,
    open_s: f64,
    open_check_s: f64,
    mul_bytes: u64,
    open_bytes: u64,
}

async fn run_ring<R: Ring>(ring: R, batch: usize, reps: usize, netem: Option<LinkParams>) -> Times {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
    let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
    let counts = Counts {
        triples: batch * reps,
        bits: 0,
        randoms: batch * reps,
        masks_per_party: 0,
    };
    let preps = dealer.deal(counts, &mut rng);
    drop(dealer);
    let (meshes, relays) = tls_pair(netem).await;
    let mut tasks = Vec::new();
    for (mut mesh, prep) in meshes.into_iter().zip(preps) {
        tasks.push(tokio::spawn(async move {
            let mut e = Engine::new(prep);
            let r = e.ring().clone();
            // shares of public constants are enough to drive the protocol
            let xs: Vec<_> = (0..batch)
                .map(|i| e.constant(&r.embed_u64(i as u64 + 3)))
                .collect();
            let mut t = Vec::new();
            for _ in 0..reps {
                let b0 = mesh.stats().total_sent();
                let t0 = Instant::now();
                let z = e.mul(&mut mesh, &xs, &xs).await.unwrap();
                let t1 = Instant::now();
                e.check(&mut mesh).await.unwrap();
                let t2 = Instant::now();
                let b1 = mesh.stats().total_sent();
                let o = e.open(&mut mesh, &z).await.unwrap();
                let t3 = Instant::now();
                e.check(&mut mesh).await.unwrap();
                let t4 = Instant::now();
                let b2 = mesh.stats().total_sent();
                assert_eq!(o[5], r.to_value(&r.embed_u64(64)));
                t.push(Times {
                    mul_s: (t1 - t0).as_secs_f64(),
                    mul_check_s: (t2 - t1).as_secs_f64(),
                    open_s: (t3 - t2).as_secs_f64(),
                    open_check_s: (t4 - t3).as_secs_f64(),
                    mul_bytes: b1 - b0,
                    open_bytes: b2 - b1,
                });
            }
            mesh.close().await.unwrap();
            t
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.push(t.await.unwrap());
    }
    drop(relays);
    // median over repetitions of party 0
    let p0 = &all[0];
    let med = |f: &dyn Fn(&Times) -> f64| {
        let mut v: Vec<f64> = p0.iter().map(f).collect();
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    };
    Times {
        mul_s: med(&|t| t.mul_s),
        mul_check_s: med(&|t| t.mul_check_s),
        open_s: med(&|t| t.open_s),
        open_check_s: med(&|t| t.open_check_s),
        mul_bytes: p0[0].mul_bytes,
        open_bytes: p0[0].open_bytes,
    }
}

/// OT-based SPDZ_2k preprocessing over `ring`, `n` parties: set-up time, triples/s,
/// bits/s and bytes sent per triple and per bit by party 0 (from the mesh's byte counter).
///
/// With `lanes` > 1 the triples are made on that many lanes at once ([`OtPrep::lane`],
/// [`OtLanes`]), each lane its own TLS mesh ([`tls_lanes`]): through the emulator
/// all lanes of a pair of parties share one relay and one emulated link, so the lanes together
/// get each pair's link bandwidth once, as one lane does. Set-up time covers
/// all lanes; bits are split over the lanes too; bytes are summed over the lanes.
async fn run_ot(
    ring: Z2k,
    n: usize,
    triples: usize,
    bits: usize,
    netem: Option<LinkParams>,
    ext: OtExtension,
    lanes: usize,
) -> (f64, f64, f64, f64, f64) {
    let (per_party, relays): (Vec<Vec<TlsMesh>>, Vec<Relay>) = if lanes == 1 {
        let (meshes, relays) = tls_n(n, netem).await;
        (meshes.into_iter().map(|m| vec![m]).collect(), relays)
    } else {
        tls_lanes(n, lanes, mesh_opts(), netem).await.unwrap()
    };
    let mut tasks = Vec::new();
    for meshes in per_party {
        tasks.push(tokio::spawn(async move {
            let t0 = Instant::now();
            let mut it = meshes.into_iter();
            let mut mesh = it.next().unwrap();
            let p = OtPrep::setup_with(&mut mesh, ring, ext).await.unwrap();
            let mut ls = OtLanes::setup(p, it.collect()).await.unwrap();
            let sent =
                |m: &TlsMesh, ls: &OtLanes<TlsMesh>| m.stats().total_sent() + ls.extra_bytes_sent();
            let t1 = Instant::now();
            let b0 = sent(&mesh, &ls);
            let tr = ls.triples(&mut mesh, triples).await.unwrap();
            let t2 = Instant::now();
            let b1 = sent(&mesh, &ls);
            let bs = ls.bits(&mut mesh, bits).await.unwrap();
            let t3 = Instant::now();
            let b2 = sent(&mesh, &ls);
            let bits = bits.max(1);
            assert_eq!((tr.len(), bs.len()), (triples, bits));
            ls.close().await.unwrap();
            mesh.close().await.unwrap();
            (
                (t1 - t0).as_secs_f64(),
                triples as f64 / (t2 - t1).as_secs_f64(),
                (b1 - b0) as f64 / triples as f64,
                bits as f64 / (t3 - t2).as_secs_f64(),
                (b2 - b1) as f64 / bits as f64,
            )
        }));
    }
    let mut res = Vec::new();
    for t in tasks {
        res.push(t.await.unwrap());
    }
    drop(relays);
    res[0]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // the allocator policy of `coterie`'s binary, so the bench measures what a party runs
    coterie_math::buffers::keep_freed_heap();
    let args: Vec<String> = std::env::args().collect();
    let get = |k: &str| {
        args.iter()
            .position(|a| a == k)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let big: usize = get("--big")
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let netem = args.iter().any(|a| a == "--netem");
    let json = get("--json");
    let engine = match get("--netem-engine").as_deref() {
        None | Some("threads") => coterie_net::netem::Engine::Threads,
        Some("loop") => coterie_net::netem::Engine::EventLoop,
        Some(other) => {
            eprintln!("--netem-engine takes threads or loop, not {other:?}");
            std::process::exit(2);
        }
    };
    // the emulated link: 1 ms round trip and 1 Gbit/s unless --netem-ms / --netem-mbit say otherwise
    let ms: f64 = get("--netem-ms").map_or(1.0, |v| v.parse().expect("--netem-ms: a number"));
    let mbit: f64 =
        get("--netem-mbit").map_or(1000.0, |v| v.parse().expect("--netem-mbit: a number"));
    let link =
        netem.then(|| LinkParams::new(Duration::from_secs_f64(ms / 1e3), mbit).with_engine(engine));
    let mut rows = Vec::new();
    let ot_only = args.iter().any(|a| a == "--ot-only");
    let parties: Vec<usize> = get("--ot-parties")
        .map(|s| s.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![2]);
    let mut cases: Vec<(&str, usize, usize)> = Vec::new();
    if !ot_only {
        cases.push(("Z2^64 (s=64)", 10_000, 11));
        cases.push(("Z2^64 (s=64)", big, 3));
        cases.push(("Z2^32 (s=64)", 10_000, 11));
        cases.push(("F_p 61-bit", 10_000, 11));
        cases.push(("F_p 128-bit (GMP)", 10_000, 5));
    }
    for (name, batch, reps) in cases {
        let t = match name {
            "Z2^64 (s=64)" => run_ring(Z2k::spdz2k_64(), batch, reps, link).await,
            "Z2^32 (s=64)" => run_ring(Z2k::spdz2k_32(), batch, reps, link).await,
            "F_p 61-bit" => run_ring(Fp64::mersenne61(), batch, reps, link).await,
            _ => {
                let mut p = rug::Integer::from(1) << 127u32;
                p = (p + 12345u32).next_prime();
                run_ring(FpBig::new(p).unwrap(), batch, reps, link).await
            }
        };
        let b = batch as f64;
        let line = format!(
            "{name:18} batch {batch:>8}: mul {:>10.0}/s ({:.3} s, check {:.4} s, {:.1} B/mul sent) | open {:>10.0}/s ({:.3} s, check {:.4} s, {:.1} B/open sent) | mul+check {:>10.0}/s",
            b / t.mul_s,
            t.mul_s,
            t.mul_check_s,
            t.mul_bytes as f64 / b,
            b / t.open_s,
            t.open_s,
            t.open_check_s,
            t.open_bytes as f64 / b,
            b / (t.mul_s + t.mul_check_s),
        );
        println!("{line}");
        rows.push(format!(
            "{{\"ring\":\"{name}\",\"batch\":{batch},\"netem\":{},\"mul_per_s\":{:.1},\"mul_s\":{:.6},\"mul_check_s\":{:.6},\"mul_bytes_sent_per_party\":{},\"open_per_s\":{:.1},\"open_s\":{:.6},\"open_check_s\":{:.6},\"open_bytes_sent_per_party\":{}}}",
            netem,
            b / t.mul_s,
            t.mul_s,
            t.mul_check_s,
            t.mul_bytes,
            b / t.open_s,
            t.open_s,
            t.open_check_s,
            t.open_bytes
        ));
    }
    let ot_triples: usize = get("--ot-triples")
        .and_then(|s| s.parse().ok())
        .unwrap_or(4096);
    let ot_lanes: usize = get("--ot-lanes")
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
        .max(1);
    let ot_ring = match get("--ot-k").as_deref() {
        None | Some("64") => Z2k::spdz2k_64(),
        Some("32") => Z2k::spdz2k_32(),
        Some(other) => {
            eprintln!("--ot-k takes 64 or 32, not {other:?}");
            std::process::exit(2);
        }
    };
    let ring_name = format!("Z2^{} s=64", ot_ring.k());
    let ot_bits: usize = get("--ot-bits")
        .and_then(|s| s.parse().ok())
        .unwrap_or(1024);
    // the OT extensions to compare in the same run: `kos`, `ss<k>` (SoftSpokenOT, block size k)
    let exts: Vec<(String, OtExtension)> = get("--ot-ext")
        .unwrap_or_else(|| "ss4".into())
        .split(',')
        .map(|e| {
            let ext: OtExtension = e.parse().unwrap_or_else(|err| panic!("--ot-ext: {err}"));
            (e.to_string(), ext)
        })
        .collect();
    for &n in parties.iter().filter(|_| ot_triples > 0) {
        for (ext_name, ext) in &exts {
            let (setup, tps, bpt, bps, bpb) =
                run_ot(ot_ring, n, ot_triples, ot_bits, link, *ext, ot_lanes).await;
            println!(
                "OT SPDZ2k {ring_name}, {ext_name}, {n} parties, {ot_lanes} lane(s): setup {setup:.3} s | {ot_triples} triples: {tps:.0} triples/s, {bpt:.0} B sent/triple/party ({:.1} kbit; Multipars 14.9 kbit: {:.2}x) | {ot_bits} bits: {bps:.0} bits/s, {bpb:.0} B/bit/party",
                bpt * 8.0 / 1000.0,
                bpt * 8.0 / 1000.0 / 14.9
            );
            rows.push(format!(
            "{{\"ot_prep\":\"{ring_name}\",\"ot_ext\":\"{ext_name}\",\"lanes\":{ot_lanes},\"parties\":{n},\"netem\":{netem},\"setup_s\":{setup:.4},\"triples\":{ot_triples},\"triples_per_s\":{tps:.1},\"bytes_sent_per_triple_per_party\":{bpt:.1},\"bits\":{ot_bits},\"bits_per_s\":{bps:.1},\"bytes_sent_per_bit_per_party\":{bpb:.1}}}"
        ));
        }
    }
    if let Some(p) = json {
        std::fs::write(&p, format!("[\n{}\n]\n", rows.join(",\n"))).unwrap();
    }
}
