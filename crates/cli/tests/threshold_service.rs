//! The threshold decryption service with real processes over loopback TLS: 4 nodes
//! (`coterie party ... threshold`) on **insecure** dealer material, a client
//! (`coterie decrypt`) with its own CA-issued certificate, results checked; then one node is
//! killed mid-batch (the others stay up, naming it, and the client's batch fails with an error
//! naming it), all are killed and restarted, and the restarted nodes must not reuse any gate
//! bundle and must decrypt correctly again. (Restarting the one node alone, while the others
//! wait for it: `threshold_restart.rs`.)

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{Nodes, coterie, run_ok as run};

const N: usize = 4;

fn start(dir: &Path, client: &str, idle_exit: u32, tag: &str) -> Nodes {
    let cfg = dir.join("certs/party.toml");
    let stores = dir.join("stores");
    Nodes(
        (0..N)
            .map(|i| {
                let log = std::fs::File::create(dir.join(format!("node{i}-{tag}.log"))).unwrap();
                let err = log.try_clone().unwrap();
                Some(
                    coterie()
                        .args(["party", "--config"])
                        .arg(&cfg)
                        .args(["--id", &i.to_string(), "--timeout-s", "10", "threshold"])
                        .arg("--dir")
                        .arg(&stores)
                        .args(["--pool", "8", "--chunk", "4", "--client-listen", client])
                        .args(["--idle-exit-s", &idle_exit.to_string()])
                        .stdout(log)
                        .stderr(err)
                        .spawn()
                        .unwrap(),
                )
            })
            .collect(),
    )
}

fn wait_exit(c: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let t = Instant::now();
    while t.elapsed() < limit {
        if let Ok(Some(s)) = c.try_wait() {
            return Some(s);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

fn encrypt(dir: &Path, msgs: &[u64], prefix: &str) -> Vec<PathBuf> {
    common::encrypt_files(dir, msgs, prefix)
}

fn client_cmd(dir: &Path, client: &str, files: &[PathBuf]) -> Command {
    let mut c = common::decrypt_cmd(dir, client, "t");
    c.args(files).stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

/// Runs the client (retrying while node 0's listener is not up) and returns its stdout lines.
fn decrypt(dir: &Path, client: &str, files: &[PathBuf]) -> Output {
    let t = Instant::now();
    loop {
        let o = client_cmd(dir, client, files).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        if err.contains("node 0 at") && t.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(200));
            continue;
        }
        return o;
    }
}

fn results(o: &Output, files: &[PathBuf]) -> Vec<String> {
    let out = String::from_utf8_lossy(&o.stdout);
    files
        .iter()
        .map(|f| {
            let p = format!("{}: ", f.display());
            out.lines()
                .find_map(|l| l.strip_prefix(&p).map(str::to_string))
                .unwrap_or_else(|| format!("missing in {out}"))
        })
        .collect()
}

/// Node `i`'s gate-store cursor (a durable counter file).
fn cursor(dir: &Path, i: usize) -> u64 {
    let p = dir.join(format!("stores/party-{i}/gates/cursor.bin"));
    coterie_base::fsio::read_counter(&p).unwrap().unwrap()
}

fn wait_for(path: &Path, limit: Duration) {
    let t = Instant::now();
    while !path.exists() {
        assert!(t.elapsed() < limit, "{} did not appear", path.display());
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn four_nodes_decrypt_for_a_client_survive_a_crash_and_never_reuse_a_gate() {
    let dir = coterie_base::fsio::unique_temp_dir("coterie-thr-service");
    std::fs::create_dir_all(&dir).unwrap();
    // Below Linux's ephemeral range (32768–60999): no outgoing connection can hold these ports.
    let base = 20000 + (std::process::id() % 600) * 20;
    let client = format!("127.0.0.1:{}", base + 10);
    let d = |p: &str| dir.join(p).to_string_lossy().to_string();
    common::threshold_pki(&dir, 4, base, "t");
    // key generation: 1024 + 64·40 bits; per bundle 2351 triples and 72 bits (paper parameters)
    run(&[
        "spdz",
        "deal-insecure",
        "--parties",
        "4",
        "--out",
        &d("stores"),
        "--triples",
        &(2351 * 100).to_string(),
        "--bits",
        &(common::keygen_material().0 + 72 * 100).to_string(),
        "--randoms",
        &(common::keygen_material().1 + 2000).to_string(),
        "--masks",
        "0",
    ]);

    // 1. four nodes, a client, known messages
    let mut nodes = start(&dir, &client, 0, "a");
    wait_for(
        &dir.join("stores/party-0/public-key.bin"),
        Duration::from_secs(60),
    );
    let msgs = [1u64, 0, 1, 1, 0, 0, 1, 0];
    let files = encrypt(&dir, &msgs, "a");
    let mut with_bad = files.clone();
    let bad = dir.join("bad.ct");
    std::fs::write(&bad, b"CTLW but not really").unwrap();
    with_bad.push(bad.clone());
    let o = decrypt(&dir, &client, &with_bad);
    let got = results(&o, &with_bad);
    for (g, m) in got.iter().zip(&msgs) {
        assert_eq!(g, &m.to_string(), "client output: {got:?}");
    }
    assert!(got[msgs.len()].contains("malformed"), "{got:?}");
    assert!(
        !o.status.success(),
        "a refused ciphertext makes the client fail"
    );

    // 2. kill node 2 while a batch (which first needs more gates) is in flight
    // 40 ciphertexts need 40 bundles: the coordinator tops up in steps of 4 first, so killing
    // node 2 right after the first top-up step lands inside the batch's preparation
    let files2 = encrypt(&dir, &[1; 40], "b");
    let log0 = dir.join("node0-a.log");
    let preps = || {
        std::fs::read_to_string(&log0)
            .unwrap_or_default()
            .matches("prepared")
            .count()
    };
    let p0 = preps();
    let mut c = client_cmd(&dir, &client, &files2).spawn().unwrap();
    let t = Instant::now();
    while preps() == p0 {
        assert!(t.elapsed() < Duration::from_secs(60), "no top-up step seen");
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut victim = nodes.0[2].take().unwrap();
    victim.kill().unwrap();
    victim.wait().unwrap();
    let co = wait_exit(&mut c, Duration::from_secs(30)).expect("client hangs");
    assert!(!co.success(), "the client must see the failure");
    let out = c.wait_with_output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("node 2"),
        "the client's errors name node 2: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    // the others stay up, waiting for node 2; then they are stopped too
    for i in [0usize, 1, 3] {
        let ch = nodes.0[i].as_mut().unwrap();
        assert!(
            ch.try_wait().unwrap().is_none(),
            "node {i} must stay up after node 2 died"
        );
        let read = || std::fs::read_to_string(dir.join(format!("node{i}-a.log"))).unwrap();
        let t = Instant::now();
        while !read().contains("lost node 2") {
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "node {i} should name node 2: {}",
                read()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        ch.kill().unwrap();
        ch.wait().unwrap();
        nodes.0[i] = None;
    }
    let before: Vec<u64> = (0..N).map(|i| cursor(&dir, i)).collect();
    let furthest = *before.iter().max().unwrap();

    // 3. restart all: no bundle handed out before is used again, and decryption works
    let mut nodes = start(&dir, &client, 3, "b");
    let msgs3 = [0u64, 1, 1, 0];
    let files3 = encrypt(&dir, &msgs3, "c");
    let o = decrypt(&dir, &client, &files3);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = results(&o, &files3);
    for (g, m) in got.iter().zip(&msgs3) {
        assert_eq!(g, &m.to_string(), "after restart: {got:?}");
    }
    for (i, n) in nodes.0.iter_mut().enumerate() {
        let st = wait_exit(n.as_mut().unwrap(), Duration::from_secs(60)).expect("clean stop");
        assert!(st.success(), "node {i} should stop cleanly");
        *n = None;
    }
    let after: Vec<u64> = (0..N).map(|i| cursor(&dir, i)).collect();
    for (i, &a) in after.iter().enumerate() {
        assert_eq!(a, after[0], "cursors agree after a clean run");
        assert!(
            a - msgs3.len() as u64 >= furthest,
            "party {i}: bundles {}..{a} used after restart, but ids up to {furthest} were handed out before",
            a - msgs3.len() as u64
        );
    }
    let log0 = std::fs::read_to_string(dir.join("node0-b.log")).unwrap();
    assert!(log0.contains("start-up"), "{log0}");
    let _ = std::fs::remove_dir_all(&dir);
}
