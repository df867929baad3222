//! `coterie demo reenc` and `coterie party ... reenc` (seed 001) as real processes over mutual
//! TLS on loopback, including a proxy killed in the middle of a re-encryption.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::Duration;

use common::{coterie, text};

#[test]
fn demo_reenc_four_users_two_proxies_toy() {
    let o = coterie()
        .args([
            "demo",
            "reenc",
            "--users",
            "4",
            "--proxies",
            "2",
            "--insecure-toy",
        ])
        .output()
        .unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("INSECURE toy parameters"), "{t}");
    assert!(t.contains("threshold decryption: result correct"), "{t}");
    assert!(t.contains("re-encryption: result correct"), "{t}");
}

/// The command at the paper's parameters (n = 8192, log q = 220): about 10 s here.
#[test]
fn demo_reenc_paper_parameters() {
    let o = coterie()
        .args(["demo", "reenc", "--users", "4", "--proxies", "2"])
        .output()
        .unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("n = 8192, log q = 220"), "{t}");
    assert!(t.contains("threshold decryption: result correct"), "{t}");
    assert!(t.contains("re-encryption: result correct"), "{t}");
}

/// Starts every party of `config` on `step`; `crash` names a party that gets the hidden
/// crash-in-the-middle-of-ReEnc switch.
fn start(config: &Path, state: &Path, n: usize, step: &str, crash: Option<usize>) -> Vec<Child> {
    (0..n)
        .map(|i| {
            let mut c = coterie();
            c.arg("party")
                .arg("--config")
                .arg(config)
                .args(["--id", &i.to_string(), "--timeout-s", "60"])
                .args(["reenc", "--step", step, "--insecure-toy", "--dir"])
                .arg(state);
            if crash == Some(i) {
                c.arg("--crash-mid-reenc");
            }
            c.stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect()
}

fn finish(children: Vec<Child>) -> Vec<Output> {
    common::finish(children, Duration::from_secs(120))
}

fn all_ok(outs: &[Output]) {
    for (i, o) in outs.iter().enumerate() {
        assert!(o.status.success(), "party {i}: {}", text(o));
    }
}

/// Users 0–1, proxies 2–4, server 5, receiver 6. Proxy 1 (party 3) dies once it holds the
/// ciphertext; the receiver fails with an error naming that proxy; after the restart the same
/// step succeeds from the stored state (no new key generation).
#[test]
fn proxy_killed_mid_reenc_then_retry_succeeds() {
    let dir: PathBuf = coterie_base::fsio::unique_temp_dir("coterie-cli-test-reenc-crash");
    // Below Linux's ephemeral range (32768–60999), so no outgoing connection of the parallel
    // tests can hold one of these ports when a party binds it.
    let port = (21_000 + std::process::id() % 9_000).to_string();
    let o = coterie()
        .args([
            "certs",
            "--parties",
            "7",
            "--base-port",
            &port,
            "--roles",
            "user,user,proxy,proxy,proxy,server,receiver",
            "--out",
        ])
        .arg(dir.join("pki"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let config = dir.join("pki").join("party.toml");
    let state = dir.join("state");
    all_ok(&finish(start(&config, &state, 7, "keygen", None)));
    all_ok(&finish(start(&config, &state, 7, "rekeygen", None)));
    all_ok(&finish(start(&config, &state, 7, "evaluate", None)));
    let eval = finish(start(&config, &state, 7, "decrypt", None));
    all_ok(&eval);
    assert!(text(&eval[0]).contains("threshold decryption: result correct"));

    let crashed = finish(start(&config, &state, 7, "reencrypt", Some(3)));
    assert_eq!(crashed[3].status.code(), Some(3), "{}", text(&crashed[3]));
    assert!(text(&crashed[3]).contains("crashing on purpose"));
    let receiver = text(&crashed[6]);
    assert!(!crashed[6].status.success(), "{receiver}");
    assert!(
        receiver.contains("party 3 disconnected") && receiver.contains("(party 3 is Proxy(1))"),
        "{receiver}"
    );
    assert!(!receiver.contains("result correct"), "{receiver}");

    let retry = finish(start(&config, &state, 7, "reencrypt", None));
    all_ok(&retry);
    assert!(text(&retry[6]).contains("re-encryption: result correct"));
    let _ = std::fs::remove_dir_all(&dir);
}
