//! Seed 001's party flow (`coterie_bfv::reenc_party`) over mutual TLS through coterie-net's link
//! emulator at the paper's LAN (10 Gbit/s, 0.5 ms) and WAN (72 Mbit/s, 72 ms) settings and on
//! plain loopback: the wall time and the bytes of ReKeyGen, threshold decryption and ReEnc,
//! beside the paper's communication estimates (seed 001 §7.1, Tables 5–7). Run by
//! `bench/mkbfv-net.sh`; prints one JSON record per measurement on stdout (bench/lib.sh's record
//! format), progress on stderr.
//!
//! Every party runs all five steps on one mesh; before each step all parties meet at a barrier
//! (one all-to-all exchange), and a step's time is the longest any party spent in it after the
//! barrier: the real exchange plus the computation done between the messages (PartDec, ReEnc
//! shares, combining), with all links working in parallel (the paper's estimate sends every
//! element one after the other). Bytes are mesh frames summed over all parties.
//!
//! Usage: `reenc_net [--quick] [--nets loopback,lan,wan] [--toy]`

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use coterie_base::Progress;
use coterie_bfv::mk::Smudging;
use coterie_bfv::reenc_party::{self as party, Config, Layout, PaperLink, ParamChoice, Report};
use coterie_net::local::{run_parties, tls_group_with};
use coterie_net::netem::{LinkParams, plain_sleep_until};
use coterie_net::{Mesh, MeshOptions};

const STEPS: [&str; 5] = ["keygen", "rekeygen", "evaluate", "decrypt", "reencrypt"];
const SEED: [u8; 32] = [7; 32];

/// Paper Table 5 (threshold decryption, Comm. LAN/WAN ms) by k.
const PAPER_DECRYPT: [(usize, f64, f64); 3] =
    [(2, 2.04, 290.0), (4, 4.75, 677.0), (8, 10.2, 1451.0)];
/// Paper Table 6 (ReKeyGen, Comm. WAN ms; the LAN row is blank in the source) by N.
const PAPER_REKEYGEN: [(usize, f64); 4] = [(1, 193.0), (2, 290.0), (4, 484.0), (8, 871.0)];
/// Paper Table 7 (ReEnc, Comm. LAN/WAN ms) by (k, N).
const PAPER_REENC: [(usize, usize, f64, f64); 12] = [
    (2, 1, 2.03, 290.0),
    (2, 2, 2.71, 387.0),
    (2, 4, 4.07, 580.0),
    (2, 8, 6.78, 967.0),
    (4, 1, 3.39, 484.0),
    (4, 2, 4.07, 580.0),
    (4, 4, 5.42, 774.0),
    (4, 8, 8.14, 1169.0),
    (8, 1, 6.10, 871.0),
    (8, 2, 6.78, 967.0),
    (8, 4, 8.14, 1161.0),
    (8, 8, 10.8, 1548.0),
];

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

/// The paper's model (`coterie_bfv::reenc_party::paper_comm_ms`) for `net`.
fn model_ms(elements: u64, net: &str) -> Option<f64> {
    let link = match net {
        "lan" => PaperLink::Lan,
        "wan" => PaperLink::Wan,
        _ => return None,
    };
    Some(party::paper_comm_ms(elements, 8192.0 * 220.0, link))
}

struct StepResult {
    /// The longest time any party spent in the step's metered phases (waiting, exchanging and
    /// computing between messages; loading state and checking the result excluded).
    ms: f64,
    /// Bytes sent by all parties, except the server's copies of the ciphertext to the proxies.
    bytes: u64,
    msgs: u64,
    /// Bytes of the server's copies of the ciphertext to the proxies (re-encryption).
    distribution_bytes: u64,
}

async fn run_one(
    k: usize,
    n: usize,
    link: Option<LinkParams>,
    params: ParamChoice,
) -> BTreeMap<&'static str, StepResult> {
    let opts = MeshOptions {
        timeout: Duration::from_secs(600),
        connect_deadline: Duration::from_secs(60),
        ..MeshOptions::default()
    };
    // Loopback start-up can lose a race for a port or a relay; try a fresh group a few times.
    let mut attempt = 0;
    let (meshes, relays) = loop {
        match tls_group_with(k + n + 2, opts.clone(), link, plain_sleep_until).await {
            Ok(g) => break g,
            Err(e) if attempt < 3 => {
                attempt += 1;
                eprintln!("reenc_net: mesh start-up failed ({e}); retrying");
            }
            Err(e) => panic!("mesh start-up failed {attempt} times: {e}"),
        }
    };
    let layout = Layout::standard(k, n).expect("layout");
    let base = coterie_base::fsio::unique_temp_dir("coterie-reenc-net");
    let b2 = base.clone();
    let per_party: Vec<Vec<(f64, Report)>> = run_parties(meshes, move |mut mesh| {
        let cfg = Config {
            layout: layout.clone(),
            params,
            smudging: Smudging::PaperSigma20,
            dir: b2.join(format!("party-{}", mesh.id())),
        };
        async move {
            let none = Progress::none();
            let mut out = Vec::new();
            for (i, s) in STEPS.iter().enumerate() {
                let _: Vec<u8> = mesh
                    .exchange_all_tagged(0x5245_00F0 + i as u32, &0u8)
                    .await
                    .expect("barrier");
                let t = Instant::now();
                let r = match *s {
                    "keygen" => party::keygen(&mut mesh, &cfg, &none).await,
                    "rekeygen" => party::rekeygen(&mut mesh, &cfg, &none).await,
                    "evaluate" => party::evaluate(&mut mesh, &cfg, &SEED, &none).await,
                    "decrypt" => party::decrypt(&mut mesh, &cfg, &SEED, &none).await,
                    _ => party::reencrypt(&mut mesh, &cfg, &SEED, &none).await,
                }
                .unwrap_or_else(|e| panic!("{s}: {e}"));
                out.push((t.elapsed().as_secs_f64() * 1e3, r));
            }
            mesh.close().await.expect("close");
            out
        }
    })
    .await;
    drop(relays);
    let _ = std::fs::remove_dir_all(&base);
    let mut res = BTreeMap::new();
    for (i, s) in STEPS.iter().enumerate() {
        let mut r = StepResult {
            ms: 0.0,
            bytes: 0,
            msgs: 0,
            distribution_bytes: 0,
        };
        for p in &per_party {
            r.ms = r.ms.max(p[i].1.phases.iter().map(|ph| ph.ms).sum::<f64>());
            for ph in &p[i].1.phases {
                if ph.phase == "ReEnc: ciphertext to the proxies" {
                    r.distribution_bytes += ph.sent;
                } else {
                    r.bytes += ph.sent;
                    r.msgs += ph.msgs_sent;
                }
            }
        }
        res.insert(*s, r);
    }
    res
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let toy = args.iter().any(|a| a == "--toy");
    let nets: Vec<String> = args
        .iter()
        .position(|a| a == "--nets")
        .and_then(|i| args.get(i + 1))
        .map_or("loopback,lan,wan".into(), |s| s.clone())
        .split(',')
        .map(str::to_string)
        .collect();
    let params = if toy {
        ParamChoice::InsecureToy
    } else {
        ParamChoice::Seed001
    };
    let ks: &[usize] = if quick { &[2, 4] } else { &[2, 4, 8] };
    let ns: &[usize] = if quick { &[1, 2] } else { &[1, 2, 4, 8] };
    for (a, b, c, d) in PAPER_REENC {
        if ks.contains(&a) && ns.contains(&b) {
            let p = [("k", a.to_string()), ("N", b.to_string())];
            let with = |net: &str| [p[0].clone(), p[1].clone(), ("net", net.to_string())];
            record("paper", "comm_reencrypt", "ms", c, &with("lan"));
            record("paper", "comm_reencrypt", "ms", d, &with("wan"));
        }
    }
    for (k, lan, wan) in PAPER_DECRYPT {
        if ks.contains(&k) {
            for (net, v) in [("lan", lan), ("wan", wan)] {
                record(
                    "paper",
                    "comm_decrypt",
                    "ms",
                    v,
                    &[("k", k.to_string()), ("net", net.into())],
                );
            }
        }
    }
    for (n, wan) in PAPER_REKEYGEN {
        if ns.contains(&n) {
            record(
                "paper",
                "comm_rekeygen",
                "ms",
                wan,
                &[("N", n.to_string()), ("net", "wan".into())],
            );
        }
    }
    for net in &nets {
        let link = match net.as_str() {
            "lan" => Some(LinkParams::new(Duration::from_millis(1), 10_000.0)),
            "wan" => Some(LinkParams::new(Duration::from_millis(144), 72.0)),
            "loopback" => None,
            other => panic!("unknown net '{other}' (loopback, lan, wan)"),
        };
        for &k in ks {
            for &n in ns {
                eprintln!("reenc_net: {net}, k = {k}, N = {n}");
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .expect("runtime");
                let r = rt.block_on(run_one(k, n, link, params));
                let p = |extra: &[(&'static str, String)]| -> Vec<(&'static str, String)> {
                    let mut v = vec![
                        ("k", k.to_string()),
                        ("N", n.to_string()),
                        ("net", net.clone()),
                    ];
                    v.extend(extra.iter().cloned());
                    v
                };
                // Elements the paper counts, and the ones this flow sends.
                let counts = [
                    (
                        "rekeygen",
                        (n as u64 + 1) * k as u64,
                        (n as u64 + 1) * k as u64,
                    ),
                    ("decrypt", 2 * k as u64 - 1, 2 * k as u64),
                    ("reencrypt", (k + n) as u64, (k + n + 1) as u64),
                ];
                for (step, paper_elems, our_elems) in counts {
                    let s = &r[step];
                    let extra = [
                        ("paper_elements", paper_elems.to_string()),
                        ("elements", our_elems.to_string()),
                        ("msgs", s.msgs.to_string()),
                    ];
                    record("coterie", &format!("net_{step}"), "ms", s.ms, &p(&extra));
                    record(
                        "coterie",
                        &format!("bytes_{step}"),
                        "bytes",
                        s.bytes as f64,
                        &p(&extra),
                    );
                    if let Some(m) = model_ms(our_elems, net) {
                        record("model", &format!("comm_{step}"), "ms", m, &p(&extra));
                    }
                }
                record(
                    "coterie",
                    "bytes_reenc_distribution",
                    "bytes",
                    r["reencrypt"].distribution_bytes as f64,
                    &p(&[("elements", (n * (k + 1)).to_string())]),
                );
                for step in ["keygen", "evaluate"] {
                    let s = &r[step];
                    record("coterie", &format!("net_{step}"), "ms", s.ms, &p(&[]));
                    record(
                        "coterie",
                        &format!("bytes_{step}"),
                        "bytes",
                        s.bytes as f64,
                        &p(&[]),
                    );
                }
            }
        }
    }
}
