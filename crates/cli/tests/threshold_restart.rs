//! The threshold decryption service survives the restart of one node (issue 17): 4 nodes
//! (`coterie party ... threshold`) on **insecure** dealer material over loopback TLS, a client
//! (`coterie decrypt`) sending ciphertexts without pause; node 2 is killed (SIGKILL) and restarted
//! with the same command, then node 0 (the coordinator) likewise. The other nodes must stay up
//! throughout and reconnect; every answer must be the right plaintext or an error naming the node
//! that is down; answers must be right again after each restart; and no node may take a gate
//! bundle twice (the `took gate bundles A..B` lines of every run of a node never overlap).

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod common;
use common::{Nodes, coterie, run_ok as run};

const N: usize = 4;

/// Starts node `i` with `lanes` batches in flight (its output in `DIR/node<i>-<tag>.log`).
fn start_node(dir: &Path, client: &str, lanes: u32, i: usize, tag: &str) -> Child {
    let log = std::fs::File::create(dir.join(format!("node{i}-{tag}.log"))).unwrap();
    let err = log.try_clone().unwrap();
    coterie()
        .args(["party", "--config"])
        .arg(dir.join("certs/party.toml"))
        .args(["--id", &i.to_string(), "--timeout-s", "10", "threshold"])
        .arg("--dir")
        .arg(dir.join("stores"))
        .args(["--pool", "4", "--chunk", "4", "--max-batch", "16"])
        .args(["--client-listen", client, "--idle-exit-s", "5"])
        .args(["--lanes", &lanes.to_string()])
        .stdout(log)
        .stderr(err)
        .spawn()
        .unwrap()
}

fn wait_for(path: &Path, limit: Duration) {
    let t = Instant::now();
    while !path.exists() {
        assert!(t.elapsed() < limit, "{} did not appear", path.display());
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// One run of the client: the phases (see `Phase`) at its start and end, its result lines (or
/// `None` when a file has no line), and its stderr.
struct Run {
    phases: (usize, usize),
    results: Vec<Option<String>>,
    stderr: String,
}

/// What the service is going through; a client run may see errors about the node down in any
/// phase it overlaps. 0: all up; 1: node 2 killed, until an answer after its restart; 2: all
/// up again; 3: node 0 killed, until an answer after its restart; 4: all up again.
const DOWN: [Option<usize>; 5] = [None, Some(2), None, Some(0), None];

fn decrypt_once(dir: &Path, client: &str, files: &[PathBuf]) -> (Vec<Option<String>>, String) {
    let o = common::decrypt_cmd(dir, client, "t")
        .args(files)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let results = files
        .iter()
        .map(|f| {
            let p = format!("{}: ", f.display());
            out.lines()
                .find_map(|l| l.strip_prefix(&p).map(str::to_string))
        })
        .collect();
    (results, String::from_utf8_lossy(&o.stderr).to_string())
}

/// Gate ranges `first..end` a node's log reports taking.
fn taken(log: &str) -> Vec<(u64, u64)> {
    log.lines()
        .filter_map(|l| l.split_once("took gate bundles ").map(|(_, r)| r))
        .map(|r| {
            let (a, b) = r.trim().split_once("..").expect("range");
            (a.parse().unwrap(), b.parse().unwrap())
        })
        .collect()
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_default()
}

/// Node `i`'s gate-store cursor (a durable counter file).
fn cursor(dir: &Path, i: usize) -> u64 {
    let p = dir.join(format!("stores/party-{i}/gates/cursor.bin"));
    coterie_base::fsio::read_counter(&p).unwrap().unwrap()
}

#[test]
fn a_killed_node_restarts_while_a_client_keeps_sending_and_no_gate_is_reused() {
    restart_case(1, 21000);
}

/// The same with two lanes (`--lanes 2`: each batch on a connection of its own beside the
/// control connection): the lanes are connected again at every reconnection.
#[test]
fn with_lanes_a_killed_node_restarts_and_no_gate_is_reused() {
    restart_case(2, 10000);
}

/// The restart scenario with `lanes` batches in flight, on ports from `base_from` (each test its
/// own range, since the tests of this file run at once).
fn restart_case(lanes: u32, base_from: u32) {
    let dir = coterie_base::fsio::unique_temp_dir("coterie-thr-restart");
    std::fs::create_dir_all(&dir).unwrap();
    // Below Linux's ephemeral range (32768–60999): no outgoing connection can hold these ports.
    let base = base_from + (std::process::id() % 500) * 20;
    let client = format!("127.0.0.1:{}", base + 10);
    let d = |p: &str| dir.join(p).to_string_lossy().to_string();
    common::threshold_pki(&dir, 4, base, "t");
    let p = coterie_threshold::Params::paper();
    let (triples, bits, randoms) = coterie_threshold::service::material_for(
        &p,
        160,
        coterie_threshold::node::PK_SAMPLES,
        coterie_threshold::node::PK_NOISE_BITS,
    )
    .unwrap();
    run(&[
        "spdz",
        "deal-insecure",
        "--parties",
        "4",
        "--out",
        &d("stores"),
        "--triples",
        &triples.to_string(),
        "--bits",
        &bits.to_string(),
        "--randoms",
        &randoms.to_string(),
        "--masks",
        "0",
    ]);

    let mut nodes = Nodes::new(
        (0..N)
            .map(|i| start_node(&dir, &client, lanes, i, "a"))
            .collect(),
    );
    wait_for(
        &dir.join("stores/party-0/public-key.bin"),
        Duration::from_secs(90),
    );
    let msgs = [1u64, 0];
    let pk = d("stores/party-0/public-key.bin");
    let files: Vec<PathBuf> = msgs
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let f = dir.join(format!("m{i}.ct"));
            run(&[
                "threshold-encrypt",
                "--public-key",
                &pk,
                "--message",
                &m.to_string(),
                "--out",
                f.to_str().unwrap(),
            ]);
            f
        })
        .collect();

    // The client: runs `coterie decrypt` on both files again and again until told to stop.
    let phase = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let runs: Arc<Mutex<Vec<Run>>> = Arc::default();
    let clientd = {
        let (phase, done, runs) = (phase.clone(), done.clone(), runs.clone());
        let (dir, client, files) = (dir.clone(), client.clone(), files.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                let p0 = phase.load(Ordering::SeqCst);
                let (results, stderr) = decrypt_once(&dir, &client, &files);
                let p1 = phase.load(Ordering::SeqCst);
                runs.lock().unwrap().push(Run {
                    phases: (p0, p1),
                    results,
                    stderr,
                });
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    let correct = |r: &Run| {
        r.results
            .iter()
            .zip(&msgs)
            .all(|(g, m)| g.as_deref() == Some(&m.to_string()))
    };
    // Waits until a run that started in phase `p` answered everything correctly.
    let await_correct = |p: usize, limit: Duration| {
        let t = Instant::now();
        loop {
            if runs
                .lock()
                .unwrap()
                .iter()
                .any(|r| r.phases.0 == p && correct(r))
            {
                return;
            }
            assert!(
                t.elapsed() < limit,
                "no correct answer in phase {p} within {limit:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    await_correct(0, Duration::from_secs(120));

    // Node 2 dies; the others stay up while the client keeps sending; node 2 comes back.
    let mut victim = nodes.0[2].take().unwrap();
    phase.store(1, Ordering::SeqCst);
    victim.kill().unwrap();
    victim.wait().unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    for i in [0usize, 1, 3] {
        let c = nodes.0[i].as_mut().unwrap();
        assert!(
            c.try_wait().unwrap().is_none(),
            "node {i} exited after node 2 died: {}",
            read(&dir, &format!("node{i}-a.log"))
        );
    }
    nodes.0[2] = Some(start_node(&dir, &client, lanes, 2, "b"));
    let t = Instant::now();
    while runs.lock().unwrap().iter().all(|r| r.phases.0 != 1) {
        assert!(t.elapsed() < Duration::from_secs(60), "the client stalled");
        std::thread::sleep(Duration::from_millis(50));
    }
    await_correct(1, Duration::from_secs(90));
    phase.store(2, Ordering::SeqCst);
    await_correct(2, Duration::from_secs(60));

    // Node 0 (the coordinator) dies and comes back; the followers stay up.
    let mut victim = nodes.0[0].take().unwrap();
    phase.store(3, Ordering::SeqCst);
    victim.kill().unwrap();
    victim.wait().unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    for i in 1..N {
        let c = nodes.0[i].as_mut().unwrap();
        assert!(
            c.try_wait().unwrap().is_none(),
            "node {i} exited after node 0 died"
        );
    }
    nodes.0[0] = Some(start_node(&dir, &client, lanes, 0, "b"));
    await_correct(3, Duration::from_secs(90));
    phase.store(4, Ordering::SeqCst);
    await_correct(4, Duration::from_secs(60));
    done.store(true, Ordering::SeqCst);
    clientd.join().unwrap();

    // Every answer: the plaintext, or an error naming a node that was down meanwhile.
    let runs = runs.lock().unwrap();
    let mut errors = [0usize; 2];
    for r in runs.iter() {
        let down: Vec<usize> = (r.phases.0..=r.phases.1).filter_map(|p| DOWN[p]).collect();
        for (g, m) in r.results.iter().zip(&msgs) {
            if g.as_deref() == Some(&m.to_string()) {
                continue;
            }
            let text = format!("{g:?} {}", r.stderr);
            let names = |j: usize| {
                text.contains(&format!("node {j}")) || text.contains(&format!("party {j}"))
            };
            assert!(
                down.iter().any(|&j| names(j)),
                "phases {:?}: an answer neither right nor naming a node that was down ({down:?}): {text}",
                r.phases
            );
            if down.contains(&2) && names(2) {
                errors[0] += 1;
            } else {
                errors[1] += 1;
            }
        }
    }
    // The client did ask while node 2 was away, and was told to wait for it.
    assert!(
        errors[0] > 0,
        "no request was answered while node 2 was down"
    );
    assert!(
        runs.iter().any(|r| r.phases == (1, 1)
            && r.results
                .iter()
                .flatten()
                .any(|g| g.contains("waiting for node 2"))),
        "no \"waiting for node 2\" answer"
    );
    // ... and could not reach node 0 while it was down (or lost it mid-request).
    assert!(errors[1] > 0, "no request failed while node 0 was down");

    // The nodes stop cleanly after the idle time (node 0 tells the others).
    for (i, n) in nodes.0.iter_mut().enumerate() {
        let c = n.as_mut().unwrap();
        let t = Instant::now();
        let st = loop {
            if let Some(s) = c.try_wait().unwrap() {
                break s;
            }
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "node {i} did not stop"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(st.success(), "node {i} should stop cleanly");
        *n = None;
    }

    // The survivors saw the losses and reconnected.
    for i in [1usize, 3] {
        let log = read(&dir, &format!("node{i}-a.log"));
        assert!(log.contains("lost node 2"), "node {i}: {log}");
        assert!(log.contains("lost node 0"), "node {i}: {log}");
        assert!(
            log.matches("reconnected to every node").count() >= 2,
            "node {i}: {log}"
        );
    }
    assert!(read(&dir, "node0-a.log").contains("lost node 2"));

    // No gate reused: the ranges each node took, over all its runs, never overlap.
    for i in 0..N {
        let logs = [
            read(&dir, &format!("node{i}-a.log")),
            read(&dir, &format!("node{i}-b.log")),
        ];
        let mut ranges: Vec<(u64, u64)> = logs.iter().flat_map(|l| taken(l)).collect();
        assert!(
            ranges.len() >= 3,
            "node {i} took too few gate ranges: {ranges:?}"
        );
        ranges.sort();
        for w in ranges.windows(2) {
            assert!(
                w[0].1 <= w[1].0,
                "node {i} took gate bundles twice: {:?} and {:?}",
                w[0],
                w[1]
            );
        }
        assert!(
            ranges.iter().all(|&(a, b)| a < b),
            "node {i}: empty range in {ranges:?}"
        );
        if i == 0 || i == 2 {
            assert!(
                !taken(&logs[1]).is_empty(),
                "restarted node {i} decrypted nothing"
            );
        }
    }
    let end: Vec<u64> = (0..N).map(|i| cursor(&dir, i)).collect();
    assert!(end.iter().all(|&c| c == end[0]), "cursors differ: {end:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
