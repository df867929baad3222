//! OT-extension comparison for the OT-based SPDZ_2k producer: 2 parties over the in-memory mesh
//! make the same number of triples with KOS and with SoftSpokenOT for k = 2, 4, 8 in one run, and
//! print bytes sent per triple by party 0 (from the mesh's byte counter, frames included, as
//! `bench/spdz.sh` counts) and triples/s (wall clock of party 0, both parties on this machine).
//!
//! The last column is the CPU time of the whole process (both parties, setup included) per
//! triple, from `/proc/self/stat`.
//!
//! `cargo run --profile ci -p coterie-spdz --example ot_ext_bench -- [triples] [repeats] [only]`
//! (defaults 2048 and 1; with several repeats the median triples/s is printed; `only` runs just
//! the extensions whose name contains it, e.g. `k=8` or `Kos`, for profiling).

use std::time::Instant;

use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
use coterie_spdz::ot_prep::OtExtension;
use coterie_spdz::{OtPrep, Z2k};

/// CPU seconds (user + system) of this process so far, from `/proc/self/stat` (Linux; 0 where
/// it cannot be read). Clock ticks are taken as 100 per second.
fn cpu_s() -> f64 {
    let Ok(st) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // fields after the command name (which ends with ')'): utime is field 14, stime 15
    let rest = st.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

/// Runs setup and `triples` triples with `ext`; returns (setup s, bytes/triple, triples/s) of
/// party 0.
async fn run(ext: OtExtension, triples: usize) -> (f64, f64, f64) {
    let mut tasks = Vec::new();
    for mut mesh in InMemoryMesh::group(2, MeshOptions::default()) {
        tasks.push(tokio::spawn(async move {
            let t0 = Instant::now();
            let mut p = OtPrep::setup_with(&mut mesh, Z2k::spdz2k_64(), ext)
                .await
                .expect("setup");
            let t1 = Instant::now();
            let b0 = mesh.stats().total_sent();
            let tr = p.triples(&mut mesh, triples).await.expect("triples");
            let t2 = Instant::now();
            let b1 = mesh.stats().total_sent();
            assert_eq!(tr.len(), triples);
            mesh.close().await.expect("close");
            (
                (t1 - t0).as_secs_f64(),
                (b1 - b0) as f64 / triples as f64,
                triples as f64 / (t2 - t1).as_secs_f64(),
            )
        }));
    }
    let mut res = Vec::new();
    for t in tasks {
        res.push(t.await.expect("task"));
    }
    res[0]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // the allocator policy of `coterie`'s binary, so the bench measures what a party runs
    coterie_math::buffers::keep_freed_heap();
    let args: Vec<String> = std::env::args().collect();
    let triples: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(2048);
    let repeats: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1).max(1);
    let exts = [
        OtExtension::Kos,
        OtExtension::SoftSpoken { k: 2 },
        OtExtension::SoftSpoken { k: 4 },
        OtExtension::SoftSpoken { k: 8 },
    ];
    println!("2 parties, in-memory mesh, Z_2^64 (s = 64), {triples} triples, {repeats} run(s)");
    println!(
        "{:<18} {:>14} {:>12} {:>10} {:>9} {:>16}",
        "extension", "bytes/triple", "vs Kos", "triples/s", "setup s", "CPU µs/triple"
    );
    let only = args.get(3).cloned().unwrap_or_default();
    let name = |ext: OtExtension| match ext {
        OtExtension::Kos => "Kos".to_string(),
        OtExtension::SoftSpoken { k } => format!("SoftSpoken k={k}"),
    };
    let mut kos_bytes = None;
    for ext in exts
        .into_iter()
        .filter(|&e| name(e).contains(only.as_str()))
    {
        let mut runs = Vec::new();
        let c0 = cpu_s();
        for _ in 0..repeats {
            runs.push(run(ext, triples).await);
        }
        let cpu_us = (cpu_s() - c0) * 1e6 / (repeats * triples) as f64;
        runs.sort_by(|a, b| a.2.total_cmp(&b.2));
        let (setup, bytes, tps) = runs[runs.len() / 2];
        let base = *kos_bytes.get_or_insert(bytes);
        let name = name(ext);
        println!(
            "{name:<18} {bytes:>14.0} {:>11.3}x {tps:>10.0} {setup:>9.3} {cpu_us:>16.0}",
            bytes / base
        );
    }
}
