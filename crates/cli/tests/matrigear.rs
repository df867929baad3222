//! `coterie demo matrigear` and `coterie party ... matrigear-prep / matrigear-product` (seed 002)
//! as real processes over mutual TLS on loopback: the demo at Params II/128 and at the toy set
//! with three parties; a second preprocessing run that loads the parties' state and appends to
//! the same stores under the same MAC key; products that consume one matrix triple each; and a
//! party without its state refused with a message saying what to do.

mod common;

use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::Duration;

use common::{coterie, text};

/// The command: two parties, Params II (128-bit) with log p = 128, d = 4.
#[test]
fn demo_matrigear_two_parties_params_ii() {
    let o = coterie()
        .args(["demo", "matrigear", "--parties", "2"])
        .output()
        .unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("MAC key (proven, Diag)"), "{t}");
    assert_eq!(t.matches("equals the plaintext product").count(), 2, "{t}");
}

#[test]
fn demo_matrigear_three_parties_toy() {
    let o = coterie()
        .args([
            "demo",
            "matrigear",
            "--parties",
            "3",
            "--set",
            "insecure-toy-b",
        ])
        .output()
        .unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("INSECURE toy parameters"), "{t}");
    assert_eq!(t.matches("equals the plaintext product").count(), 3, "{t}");
}

fn run_all(config: &Path, dir: &Path, n: usize, args: &[&str]) -> Vec<Output> {
    let children: Vec<Child> = (0..n)
        .map(|i| {
            coterie()
                .arg("party")
                .arg("--config")
                .arg(config)
                .args(["--id", &i.to_string(), "--timeout-s", "60"])
                .args(args)
                .arg("--dir")
                .arg(dir)
                .args(["--set", "insecure-toy-b"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    common::finish(children, Duration::from_secs(120))
}

#[test]
fn prep_resumes_from_state_and_products_consume_triples() {
    let dir = coterie_base::fsio::unique_temp_dir("coterie-cli-test-matrigear");
    // Below Linux's ephemeral range (32768–60999).
    let port = (24_000 + std::process::id() % 6_000).to_string();
    let o = coterie()
        .args(["certs", "--parties", "2", "--base-port", &port, "--out"])
        .arg(dir.join("pki"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let config = dir.join("pki").join("party.toml");
    let state = dir.join("state");
    let prep = [
        "matrigear-prep",
        "--matrix-triples",
        "1",
        "--randoms",
        "64",
        "--triples",
        "10",
    ];
    let first = run_all(&config, &state, 2, &prep);
    for o in &first {
        assert!(o.status.success(), "{}", text(o));
        assert!(text(o).contains("MAC key (proven, Diag)"), "{}", text(o));
    }
    // The second run loads the keys and MAC key and appends (a batch is D/d = 2 matrices).
    let second = run_all(&config, &state, 2, &prep);
    for o in &second {
        let t = text(o);
        assert!(o.status.success(), "{t}");
        assert!(t.contains("loaded from the state file"), "{t}");
        assert!(
            t.contains("20 triples, 128 randoms, 2 4x4 matrix triples"),
            "{t}"
        );
    }
    for _ in 0..2 {
        for o in run_all(&config, &state, 2, &["matrigear-product"]) {
            assert!(o.status.success(), "{}", text(&o));
            assert!(text(&o).contains("equals the plaintext product"));
        }
    }
    // Both matrix triples are used: a third product is refused, none reused. Every party fails
    // and names the exhausted store: its own, or its peer's in the abort the peer sent before
    // it exited.
    let third = run_all(&config, &state, 2, &["matrigear-product"]);
    for o in &third {
        assert!(!o.status.success());
        let t = text(o);
        assert!(t.contains("exhausted"), "{t}");
    }
    // A party that lost its state: every party refuses, saying what happened.
    std::fs::remove_file(state.join("party-1").join("matrigear.state")).unwrap();
    let lost = run_all(&config, &state, 2, &prep);
    for o in &lost {
        assert!(!o.status.success());
        let t = text(o);
        assert!(t.contains("key generation was interrupted"), "{t}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
