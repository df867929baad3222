//! MatriGear's protocols (seed 002 §5) with 2 parties over mutual TLS on loopback, plain and
//! through coterie-net's link emulator at 1 ms one way and 1 Gbit/s: the distributed key
//! generation (Table 3's keys), Init (the MAC key) and one batch of `d × d` matrix triples
//! (Tables 4 and 7), and scalar-triple throughput for every `log p`. Wall time per party
//! (the slower of the two), the phases of a batch, and the bytes each party sent. Run by
//! `bench/matrigear-prep.sh`; prints one JSON record per measurement (bench/lib.sh's format) on
//! stdout, progress on stderr.
//!
//! Usage: `matrigear_net [--nets loopback,emu] [--sets I,II] [--d 128] [--quick]
//!                       [--pairs 32] [--skip keygen,init,matrix,scalar]
//!                       [--log-ps 128,1024]`

use std::time::{Duration, Instant};

use coterie_base::Progress;
use coterie_bfv::params::MatriGearSet;
use coterie_math::prg::Csprng;
use coterie_matrigear::ProtocolParams;
use coterie_matrigear::keys::{EvalKeys, distributed_keygen, insecure_dealer_keys};
use coterie_matrigear::triple::{self, Phases};
use coterie_net::local::tls_group_with;
use coterie_net::netem::{LinkParams, plain_sleep_until};
use coterie_net::{Mesh, MeshOptions, TlsMesh};

fn record(imp: &str, op: &str, unit: &str, value: f64, params: &[(&str, String)]) {
    let p: Vec<String> = params
        .iter()
        .map(|(k, v)| {
            if v.parse::<f64>().is_ok() {
                format!("\"{k}\": {v}")
            } else {
                format!("\"{k}\": \"{v}\"")
            }
        })
        .collect();
    println!(
        "{{\"impl\": \"{imp}\", \"op\": \"{op}\", \"params\": {{{}}}, \"unit\": \"{unit}\", \"value\": {value}, \"samples\": 1}}",
        p.join(", ")
    );
}

async fn group(net: &str) -> (Vec<TlsMesh>, Vec<coterie_net::netem::Relay>) {
    let opts = MeshOptions {
        timeout: Duration::from_secs(1200),
        ..MeshOptions::default()
    };
    let link = (net == "emu").then(|| LinkParams::new(Duration::from_millis(2), 1000.0));
    let mut attempt = 0;
    loop {
        match tls_group_with(2, opts.clone(), link, plain_sleep_until).await {
            Ok(g) => break g,
            Err(e) if attempt < 3 => {
                attempt += 1;
                eprintln!("matrigear_net: mesh start-up failed ({e}); retrying");
            }
            Err(e) => panic!("mesh start-up: {e}"),
        }
    }
}

/// Runs `f(mesh)` for every party, each on a runtime of its own in its own thread (one worker),
/// as separate party processes would: with all parties on one shared runtime, a party blocked in
/// a long computation (MatMul) can hold a woken peer task in its worker's LIFO slot, which no
/// other worker may steal, and the peer's time then includes that computation.
fn run_isolated<T, F, Fut>(meshes: Vec<TlsMesh>, f: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(TlsMesh) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = T>,
{
    let handles: Vec<_> = meshes
        .into_iter()
        .map(|m| {
            let f = f.clone();
            std::thread::spawn(move || {
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .enable_all()
                    .build()
                    .expect("party runtime")
                    .block_on(f(m))
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("party thread"))
        .collect()
}

/// What one party measured in one run.
#[derive(Default, Clone, Copy)]
struct Meas {
    secs: f64,
    bytes: u64,
    phases: Phases,
    items: usize,
}

fn worst(ms: &[Meas]) -> Meas {
    let mut w = ms[0];
    for m in ms {
        if m.secs > w.secs {
            w = *m;
        }
    }
    w
}

fn set_name(set: MatriGearSet) -> &'static str {
    match set {
        MatriGearSet::I => "I",
        MatriGearSet::II => "II",
        MatriGearSet::III => "III",
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // The allocator policy of `coterie`'s binary, whose `party … matrigear-prep` runs the flows
    // measured here: freed per-flow buffers stay in the process instead of being faulted in
    // afresh.
    coterie_math::buffers::keep_freed_heap();
    let args: Vec<String> = std::env::args().collect();
    let get = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let quick = args.iter().any(|a| a == "--quick");
    let nets: Vec<String> = get("--nets")
        .unwrap_or_else(|| "loopback,emu".into())
        .split(',')
        .map(str::to_string)
        .collect();
    let sets: Vec<MatriGearSet> = get("--sets")
        .unwrap_or_else(|| "II,I".into())
        .split(',')
        .map(|s| match s {
            "I" => MatriGearSet::I,
            "II" => MatriGearSet::II,
            other => panic!("unknown set {other}"),
        })
        .collect();
    let d: usize = get("--d").map_or(128, |s| s.parse().expect("--d"));
    // scalar-triple proofs hold at most this many ciphertext pairs (memory: U ciphertexts)
    let pairs: usize = get("--pairs").map_or(32, |s| s.parse().expect("--pairs"));
    let skip = get("--skip").unwrap_or_default();
    let log_ps: Vec<u32> = if let Some(list) = get("--log-ps") {
        list.split(',')
            .map(|s| s.parse().expect("--log-ps"))
            .collect()
    } else if quick {
        vec![128, 1024]
    } else {
        vec![128, 256, 512, 1024, 2048, 4096]
    };
    for net in &nets {
        for &set in &sets {
            let name = set_name(set);
            let pp = ProtocolParams::matrigear(set, 128, 2, d).expect("parameters");
            let base = |extra: &[(&'static str, String)]| {
                let mut v = vec![
                    ("set", name.to_string()),
                    ("log_p", "128".to_string()),
                    ("d", d.to_string()),
                    ("net", net.clone()),
                    ("parties", "2".to_string()),
                ];
                v.extend_from_slice(extra);
                v
            };
            // Distributed key generation of pk, rlk and the d − 1 rotation keys.
            if !skip.contains("keygen") {
                eprintln!("matrigear_net: {net} {name}: distributed key generation, d = {d}");
                let pp2 = pp.clone();
                let (meshes, relays) = group(net).await;
                let res = run_isolated(meshes, move |mut mesh| {
                    let pp = pp2.clone();
                    async move {
                        let t = Instant::now();
                        let b = mesh.stats().total_sent();
                        let (k, _) = distributed_keygen(
                            &mut mesh,
                            &pp,
                            &mut Csprng::new(),
                            &Progress::none(),
                        )
                        .await
                        .expect("keygen");
                        let m = Meas {
                            secs: t.elapsed().as_secs_f64(),
                            bytes: mesh.stats().total_sent() - b,
                            ..Meas::default()
                        };
                        mesh.close().await.expect("close");
                        (m, k)
                    }
                });
                drop(relays);
                let ms: Vec<Meas> = res.iter().map(|(m, _)| *m).collect();
                let w = worst(&ms);
                record("coterie", "keygen_s", "s", w.secs, &base(&[]));
                record(
                    "coterie",
                    "keygen_bytes",
                    "bytes",
                    ms[0].bytes as f64,
                    &base(&[]),
                );
                let k: &EvalKeys = &res[0].1;
                record(
                    "coterie",
                    "setup_key_bytes",
                    "bytes",
                    k.to_bytes().len() as f64,
                    &base(&[]),
                );
            }
            // The parties' key shares for the rest: a dealer's (the protocols below do not
            // depend on how the shares came about; key generation's cost is measured above).
            let (keys, shares) = insecure_dealer_keys(&pp, &mut Csprng::new()).expect("dealer");
            let keys = std::sync::Arc::new(keys);
            let shares = std::sync::Arc::new(std::sync::Mutex::new(
                shares.into_iter().map(Some).collect::<Vec<_>>(),
            ));
            let pp2 = pp.clone();
            let keys2 = keys.clone();
            let do_init = !skip.contains("init");
            let do_matrix = !skip.contains("matrix");
            eprintln!("matrigear_net: {net} {name}: Init and one matrix batch, d = {d}");
            let (meshes, relays) = group(net).await;
            let res = run_isolated(meshes, move |mut mesh| {
                let key = shares.lock().expect("shares")[mesh.id()]
                    .take()
                    .expect("share");
                let (pp, keys) = (pp2.clone(), keys2.clone());
                async move {
                    let mut rng = Csprng::new();
                    let t = Instant::now();
                    let b = mesh.stats().total_sent();
                    let mac = triple::init_mac_key(&mut mesh, &pp, &keys, &mut rng)
                        .await
                        .expect("init");
                    let init = Meas {
                        secs: t.elapsed().as_secs_f64(),
                        bytes: mesh.stats().total_sent() - b,
                        ..Meas::default()
                    };
                    let mut batch = Meas::default();
                    if do_matrix {
                        let t = Instant::now();
                        let b = mesh.stats().total_sent();
                        let (m, ph) = triple::matrix_triples_with_phases(
                            &mut mesh, &pp, &keys, &key, &mac, &mut rng,
                        )
                        .await
                        .expect("matrix batch");
                        batch = Meas {
                            secs: t.elapsed().as_secs_f64(),
                            bytes: mesh.stats().total_sent() - b,
                            phases: ph,
                            items: m.len(),
                        };
                    }
                    mesh.close().await.expect("close");
                    (init, batch)
                }
            });
            drop(relays);
            if do_init {
                let w = worst(&res.iter().map(|r| r.0).collect::<Vec<_>>());
                record("coterie", "init_s", "s", w.secs, &base(&[]));
                for (i, r) in res.iter().enumerate() {
                    record(
                        "coterie",
                        &format!("init_bytes_p{i}"),
                        "bytes",
                        r.0.bytes as f64,
                        &base(&[]),
                    );
                }
            }
            if do_matrix {
                let w = worst(&res.iter().map(|r| r.1).collect::<Vec<_>>());
                let t = w.items.max(1) as f64;
                let extra = [("batch", w.items.to_string())];
                record("coterie", "matrix_batch_s", "s", w.secs, &base(&extra));
                record("coterie", "matrix_triple_s", "s", w.secs / t, &base(&extra));
                record(
                    "coterie",
                    "matrix_phase_popk_s",
                    "s",
                    w.phases.popk,
                    &base(&extra),
                );
                record(
                    "coterie",
                    "matrix_phase_he_s",
                    "s",
                    w.phases.he,
                    &base(&extra),
                );
                record(
                    "coterie",
                    "matrix_phase_ddec_s",
                    "s",
                    w.phases.ddec,
                    &base(&extra),
                );
                for (i, r) in res.iter().enumerate() {
                    record(
                        "coterie",
                        &format!("matrix_triple_bytes_p{i}"),
                        "bytes",
                        r.1.bytes as f64 / t,
                        &base(&extra),
                    );
                }
            }
            drop(keys);
            if skip.contains("scalar") {
                continue;
            }
            for &log_p in &log_ps {
                let dd = if set == MatriGearSet::II && log_p >= 2048 {
                    32
                } else {
                    2
                };
                let pp = ProtocolParams::matrigear(set, log_p, 2, dd).expect("parameters");
                eprintln!("matrigear_net: {net} {name}/{log_p}: scalar triples");
                let (keys, shares) = insecure_dealer_keys(&pp, &mut Csprng::new()).expect("dealer");
                let keys = std::sync::Arc::new(keys);
                let shares = std::sync::Arc::new(std::sync::Mutex::new(
                    shares.into_iter().map(Some).collect::<Vec<_>>(),
                ));
                let pp2 = pp.clone();
                let (meshes, relays) = group(net).await;
                let res = run_isolated(meshes, move |mut mesh| {
                    let key = shares.lock().expect("shares")[mesh.id()]
                        .take()
                        .expect("share");
                    let (pp, keys) = (pp2.clone(), keys.clone());
                    async move {
                        let mut rng = Csprng::new();
                        let mac = triple::init_mac_key(&mut mesh, &pp, &keys, &mut rng)
                            .await
                            .expect("init");
                        let t = Instant::now();
                        let b = mesh.stats().total_sent();
                        // one proof of the most pairs q allows (at most 256): V commitments
                        // amortized over U = 2k ciphertexts
                        let k = pp.max_scalar_pairs().min(pairs);
                        let (tr, ph) = triple::scalar_triples_with_phases(
                            &mut mesh, &pp, &keys, &key, &mac, k, &mut rng,
                        )
                        .await
                        .expect("triples");
                        let m = Meas {
                            secs: t.elapsed().as_secs_f64(),
                            bytes: mesh.stats().total_sent() - b,
                            phases: ph,
                            items: tr.len(),
                        };
                        mesh.close().await.expect("close");
                        m
                    }
                });
                drop(relays);
                let w = worst(&res);
                let params = vec![
                    ("set", name.to_string()),
                    ("log_p", log_p.to_string()),
                    ("net", net.clone()),
                    ("parties", "2".to_string()),
                    ("per_call", w.items.to_string()),
                ];
                record(
                    "coterie",
                    "scalar_triples_per_s",
                    "1/s",
                    w.items as f64 / w.secs,
                    &params,
                );
                record(
                    "coterie",
                    "scalar_phase_popk_s",
                    "s",
                    w.phases.popk,
                    &params,
                );
                record("coterie", "scalar_phase_he_s", "s", w.phases.he, &params);
                record(
                    "coterie",
                    "scalar_phase_ddec_s",
                    "s",
                    w.phases.ddec,
                    &params,
                );
                let bytes = res.iter().map(|m| m.bytes).max().unwrap_or(0);
                record(
                    "coterie",
                    "scalar_triple_bytes",
                    "bytes",
                    bytes as f64 / w.items.max(1) as f64,
                    &params,
                );
            }
        }
    }
}
