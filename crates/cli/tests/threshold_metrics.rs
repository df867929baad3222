//! The decryption nodes' Prometheus endpoint with real processes: 4 nodes (`coterie party ...
//! threshold --metrics ADDR`) on **insecure** dealer material, a client (`coterie decrypt`)
//! with a few good ciphertexts and a malformed one; node 0's and a follower's `/metrics` are
//! scraped over plain TCP before and after.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

mod common;
use common::{Nodes, coterie, run_ok as run};

const N: usize = 4;
/// Pool target; bundles are made one per step, so the pool never exceeds it.
const POOL: u64 = 4;

/// One HTTP/1.1 request over plain TCP: (status line, head, body).
fn http_get(addr: &str, path: &str) -> std::io::Result<(String, String, String)> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n")?;
    let mut out = Vec::new();
    s.read_to_end(&mut out)?;
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.lines().next().unwrap_or_default().to_string();
    Ok((status, head.to_string(), body.to_string()))
}

/// The samples of one scrape of `/metrics` (name with labels -> value), with the response
/// checked.
fn scrape(addr: &str) -> Result<HashMap<String, f64>, String> {
    let (status, head, body) = http_get(addr, "/metrics").map_err(|e| e.to_string())?;
    if status != "HTTP/1.1 200 OK"
        || !head.contains(
            "Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\n",
        )
        || !body.ends_with("# EOF\n")
    {
        return Err(format!("bad response: {head}\r\n\r\n{body}"));
    }
    Ok(body
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (k, v) = l.rsplit_once(' ')?;
            Some((k.to_string(), v.parse().ok()?))
        })
        .collect())
}

fn get(m: &HashMap<String, f64>, name: &str) -> f64 {
    *m.get(name)
        .unwrap_or_else(|| panic!("{name} missing in {m:?}"))
}

/// Scrapes `addr` until `ok` holds (the endpoint is up once the node's mesh is connected; the
/// metrics follow the node's events, which may come just after the client has its answers).
fn scrape_until(
    addr: &str,
    what: &str,
    ok: impl Fn(&HashMap<String, f64>) -> bool,
) -> HashMap<String, f64> {
    let t = Instant::now();
    loop {
        let m = scrape(addr);
        if let Ok(m) = &m
            && ok(m)
        {
            return m.clone();
        }
        assert!(
            t.elapsed() < Duration::from_secs(120),
            "{addr}: {what}: {m:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn material(m: &HashMap<String, f64>, kind: &str) -> f64 {
    get(
        m,
        &format!("coterie_threshold_material_left{{kind=\"{kind}\"}}"),
    )
}

#[test]
fn nodes_expose_pool_material_decryptions_and_refusals_as_metrics() {
    let dir = coterie_base::fsio::unique_temp_dir("coterie-thr-metrics");
    std::fs::create_dir_all(&dir).unwrap();
    // Below Linux's ephemeral range, and apart from threshold_service.rs's ports (base + 0..3
    // and base + 10) for the same process id.
    let base = 20000 + (std::process::id() % 600) * 20;
    let client = format!("127.0.0.1:{}", base + 8);
    let metrics: Vec<String> = (0..N)
        .map(|i| format!("127.0.0.1:{}", base + 11 + i as u32))
        .collect();
    let d = |p: &str| dir.join(p).to_string_lossy().to_string();
    common::threshold_pki(&dir, 4, base + 4, "m");
    // key generation: 1024 + 1024·45 bits; per bundle 2351 triples and 72 bits
    let bundles = 16;
    run(&[
        "spdz",
        "deal-insecure",
        "--parties",
        "4",
        "--out",
        &d("stores"),
        "--triples",
        &(2351 * bundles).to_string(),
        "--bits",
        &(common::keygen_material().0 + 72 * bundles).to_string(),
        "--randoms",
        &(common::keygen_material().1 + 1000).to_string(),
        "--masks",
        "0",
    ]);
    let cfg = dir.join("certs/party.toml");
    let _nodes = Nodes::new(
        (0..N)
            .map(|i| {
                let log = std::fs::File::create(dir.join(format!("node{i}.log"))).unwrap();
                let err = log.try_clone().unwrap();
                coterie()
                    .args(["party", "--config"])
                    .arg(&cfg)
                    .args(["--id", &i.to_string(), "--timeout-s", "10", "threshold"])
                    .arg("--dir")
                    .arg(dir.join("stores"))
                    .args(["--pool", &POOL.to_string(), "--chunk", "1"])
                    .args(["--client-listen", &client, "--metrics", &metrics[i]])
                    // the service's rounds through node 0 as king (the default from 8 nodes)
                    .args(["--relay", "king"])
                    .stdout(log)
                    .stderr(err)
                    .spawn()
                    .unwrap()
            })
            .collect(),
    );
    let watched = [0usize, 2];
    let full = |m: &HashMap<String, f64>| {
        m.get("coterie_threshold_pool_bundles_ready") == Some(&(POOL as f64))
            && m.get("coterie_threshold_serving") == Some(&1.0)
    };
    let before: Vec<_> = watched
        .iter()
        .map(|&i| scrape_until(&metrics[i], "pool topped up", full))
        .collect();
    for m in &before {
        assert_eq!(get(m, "coterie_threshold_key_ready"), 1.0);
        assert_eq!(get(m, "coterie_threshold_decryptions_total"), 0.0);
        assert_eq!(get(m, "coterie_threshold_pool_target_bundles"), POOL as f64);
    }

    // a few ciphertexts and a malformed one
    let msgs = [1u64, 0, 1];
    let mut files: Vec<PathBuf> = common::encrypt_files(&dir, &msgs, "m");
    let bad = dir.join("bad.ct");
    std::fs::write(&bad, b"CTLW but not really").unwrap();
    files.push(bad);
    let o = decrypt(&dir, &client, &files);
    let out = String::from_utf8_lossy(&o.stdout);
    for (f, m) in files.iter().zip(&msgs) {
        let want = format!("{}: {m}", f.display());
        assert!(out.lines().any(|l| l == want), "{want} not in {out}");
    }

    let want = msgs.len() as f64;
    for (k, &i) in watched.iter().enumerate() {
        let m = scrape_until(&metrics[i], "decryptions counted", |m| {
            m.get("coterie_threshold_decryptions_total") >= Some(&want)
                && m.get("coterie_threshold_pool_bundles_ready") == Some(&(POOL as f64))
        });
        assert_eq!(
            get(&m, "coterie_threshold_decryptions_total"),
            want,
            "node {i}"
        );
        let batches = get(&m, "coterie_threshold_batches_total");
        assert!(
            (1.0..=want).contains(&batches),
            "node {i}: {batches} batches"
        );
        let ready = get(&m, "coterie_threshold_pool_bundles_ready");
        let target = get(&m, "coterie_threshold_pool_target_bundles");
        assert!(
            (0.0..=target).contains(&ready),
            "node {i}: pool {ready} of {target}"
        );
        assert_eq!(
            get(&m, "coterie_threshold_pool_cursor"),
            get(&before[k], "coterie_threshold_pool_cursor") + want
        );
        // 5 random values per decryption; the top-up after it spends triples and bits
        let b = &before[k];
        assert!(
            material(&m, "randoms") <= material(b, "randoms") - 5.0 * want,
            "node {i}"
        );
        assert!(material(&m, "triples") < material(b, "triples"), "node {i}");
        assert!(material(&m, "bits") < material(b, "bits"), "node {i}");
        let malformed = get(
            &m,
            "coterie_threshold_requests_refused_total{reason=\"malformed\"}",
        );
        // node 0 refuses it before the other nodes see anything
        assert_eq!(malformed, if i == 0 { 1.0 } else { 0.0 }, "node {i}");
    }
    let (status, _, _) = http_get(&metrics[0], "/other").unwrap();
    assert!(status.starts_with("HTTP/1.1 404 "), "{status}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs the client (retrying while node 0's listener is not up).
fn decrypt(dir: &Path, client: &str, files: &[PathBuf]) -> Output {
    common::decrypt_retrying(dir, client, "m", &[], files, Duration::from_secs(60))
}
