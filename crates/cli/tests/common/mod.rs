//! Helpers the process tests share: the binary, an output as text, and waiting for a set of
//! party processes with a deadline.

#![allow(dead_code)]

use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

/// The `coterie` binary under test.
pub fn coterie() -> Command {
    Command::new(env!("CARGO_BIN_EXE_coterie"))
}

/// Random bits and random values of the threshold service's key generation at the paper's
/// parameters: the key's coefficients and the secure public key's noise bits, and one random per
/// public sample for its MAC check (`coterie_threshold::service::material_for` without bundles:
/// 1,024 + 1,024 · 45 bits, 1,040 randoms).
pub fn keygen_material() -> (usize, usize) {
    use coterie_threshold::node::{PK_NOISE_BITS, PK_SAMPLES};
    let p = coterie_threshold::Params::paper();
    coterie_threshold::service::material_for(&p, 0, PK_SAMPLES, PK_NOISE_BITS)
        .map(|(_, bits, randoms)| (bits, randoms))
        .unwrap_or((usize::MAX, usize::MAX))
}

/// `coterie certs` for `parties` parties on loopback ports from `base`, into `dir/certs`, and a
/// client certificate `client-<name>` from the same CA (`coterie certs-client`).
pub fn threshold_pki(dir: &std::path::Path, parties: usize, base: u32, name: &str) {
    let certs = dir.join("certs").to_string_lossy().to_string();
    let (parties, base) = (parties.to_string(), base.to_string());
    run_ok(&[
        "certs",
        "--parties",
        &parties,
        "--out",
        &certs,
        "--base-port",
        &base,
    ]);
    run_ok(&["certs-client", "--dir", &certs, "--name", name]);
}

/// `coterie decrypt` as the client `client-<name>` of `dir/certs` against node 0 at `client`
/// (the files and output settings are the caller's).
pub fn decrypt_cmd(dir: &std::path::Path, client: &str, name: &str) -> Command {
    let mut c = coterie();
    c.arg("decrypt")
        .arg("--config")
        .arg(dir.join("certs/party.toml"))
        .args(["--node", client, "--cert"])
        .arg(dir.join(format!("certs/client-{name}.crt")))
        .arg("--key")
        .arg(dir.join(format!("certs/client-{name}.key")));
    c
}

/// Runs `decrypt_cmd(dir, client, name)` with `extra` arguments on `files`, output captured,
/// retrying every 200 ms while node 0's listener is not up yet (for at most `limit`).
pub fn decrypt_retrying(
    dir: &std::path::Path,
    client: &str,
    name: &str,
    extra: &[&str],
    files: &[std::path::PathBuf],
    limit: Duration,
) -> Output {
    let t = Instant::now();
    loop {
        let o = decrypt_cmd(dir, client, name)
            .args(extra)
            .args(files)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        if String::from_utf8_lossy(&o.stderr).contains("node 0 at") && t.elapsed() < limit {
            std::thread::sleep(Duration::from_millis(200));
            continue;
        }
        return o;
    }
}

/// Encrypts each of `msgs` under the threshold service's public key at
/// `dir/stores/party-0/public-key.bin` (`coterie threshold-encrypt`) into
/// `dir/<prefix>-<i>.ct`; returns the files.
pub fn encrypt_files(dir: &std::path::Path, msgs: &[u64], prefix: &str) -> Vec<std::path::PathBuf> {
    let pk = dir.join("stores/party-0/public-key.bin");
    msgs.iter()
        .enumerate()
        .map(|(i, m)| {
            let f = dir.join(format!("{prefix}-{i}.ct"));
            run_ok(&[
                "threshold-encrypt",
                "--public-key",
                pk.to_str().unwrap(),
                "--message",
                &m.to_string(),
                "--out",
                f.to_str().unwrap(),
            ]);
            f
        })
        .collect()
}

/// Stdout then stderr of `o`, as text.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Waits for every child (killing those still running after `limit`) and returns their output.
pub fn finish(children: Vec<Child>, limit: Duration) -> Vec<Output> {
    let deadline = Instant::now() + limit;
    children
        .into_iter()
        .map(|mut c| {
            while c.try_wait().unwrap().is_none() {
                if Instant::now() > deadline {
                    let _ = c.kill();
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            c.wait_with_output().unwrap()
        })
        .collect()
}

/// Runs `coterie args...` to completion and returns its output; panics with that output if it
/// failed.
pub fn run_ok(args: &[&str]) -> Output {
    let o = coterie().args(args).output().expect("run coterie");
    assert!(o.status.success(), "coterie {args:?} failed: {}", text(&o));
    o
}

/// Party processes that are killed (and reaped) when the value is dropped, so that a failing
/// test leaves no node behind; `None` marks one the test already stopped.
pub struct Nodes(pub Vec<Option<Child>>);

impl Nodes {
    /// All of `children`, running.
    pub fn new(children: Vec<Child>) -> Self {
        Self(children.into_iter().map(Some).collect())
    }
}

impl Drop for Nodes {
    fn drop(&mut self) {
        for c in self.0.iter_mut().flatten() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
