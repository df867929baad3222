//! End-to-end tests of the `coterie` binary: real party processes over mutual TLS on loopback.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn coterie() -> Command {
    Command::new(env!("CARGO_BIN_EXE_coterie"))
}

fn scratch(name: &str) -> std::path::PathBuf {
    coterie_base::fsio::unique_temp_dir(&format!("coterie-cli-test-{name}"))
}

/// `coterie certs` for `parties` parties into `dir`, listening from `port` on.
fn make_certs(dir: &std::path::Path, parties: usize, port: u16) {
    assert!(
        coterie()
            .args(["certs", "--parties", &parties.to_string(), "--out"])
            .arg(dir)
            .args(["--base-port", &port.to_string()])
            .status()
            .unwrap()
            .success()
    );
}

#[test]
fn demo_sum_four_processes() {
    let out = coterie()
        .args(["demo", "sum", "--parties", "4"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(text.matches("sum = 10 ").count(), 4, "{text}");
    assert!(text.contains("all 4 parties succeeded"));
}

#[test]
fn demo_echo_three_processes() {
    let out = coterie()
        .args(["demo", "echo", "--parties", "3"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(text.matches("echo ok with 2 peers").count(), 3, "{text}");
}

#[test]
fn certs_then_parties_with_one_killed() {
    let dir = scratch("killed");
    // Below Linux's ephemeral range (32768–60999): no outgoing connection can hold these ports.
    let port = 22000 + (std::process::id() % 4000) as u16;
    let st = coterie()
        .args(["certs", "--parties", "3", "--out"])
        .arg(&dir)
        .args(["--base-port", &port.to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let cfg = dir.join("party.toml");
    assert!(std::fs::read_to_string(&cfg).unwrap().contains("[[party]]"));
    let t0 = Instant::now();
    let kids: Vec<_> = (0..3)
        .map(|i| {
            let mut c = coterie();
            c.arg("party").arg("--config").arg(&cfg);
            c.args([
                "--id",
                &i.to_string(),
                "--timeout-s",
                "10",
                "sum",
                "--rounds",
                "5",
            ]);
            if i == 1 {
                c.args(["--crash-after", "2"]);
            }
            c.stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // Party 1 crashes. Each survivor fails on the first disconnect it notices: that is party 1
    // for whichever survivor exits first, but the other may see that survivor's exit before party
    // 1's, so only "at least one survivor names party 1" is deterministic.
    let mut named_party_1 = 0;
    for (i, k) in kids.into_iter().enumerate() {
        let out = k.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "party {i} should fail");
        if i != 1 {
            assert!(err.contains("disconnected"), "party {i}: {err}");
            named_party_1 += usize::from(err.contains("party 1 disconnected"));
        }
    }
    assert!(named_party_1 >= 1, "no survivor named the crashed party");
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn party_with_wrong_key_cannot_join() {
    let dir = scratch("wrongkey");
    // Below the ephemeral range, apart from the other test's ports.
    let port = 27000 + (std::process::id() % 4000) as u16;
    make_certs(&dir, 2, port);
    let other = dir.join("other");
    assert!(
        coterie()
            .args(["certs", "--parties", "2", "--out"])
            .arg(&other)
            .status()
            .unwrap()
            .success()
    );
    let cfg = dir.join("party.toml");
    let p0 = coterie()
        .arg("party")
        .arg("--config")
        .arg(&cfg)
        .args(["--id", "0", "--connect-s", "3", "sum"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let p1 = coterie()
        .arg("party")
        .arg("--config")
        .arg(&cfg)
        .args(["--id", "1", "--connect-s", "3"])
        .arg("--cert")
        .arg(other.join("party1.crt"))
        .arg("--key")
        .arg(other.join("party1.key"))
        .arg("sum")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o1 = p1.wait_with_output().unwrap();
    let o0 = p0.wait_with_output().unwrap();
    assert!(!o1.status.success() && !o0.status.success());
    assert!(
        String::from_utf8_lossy(&o0.stderr).contains("could not connect with party 1"),
        "{}",
        String::from_utf8_lossy(&o0.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn demo_spdz_three_processes() {
    let out = coterie()
        // one lane: the parties' mesh alone (the default is 3 lanes, run by the threshold demo
        // below; 2 and 3 lanes by `spdz_prep_ot_on_lanes_and_mismatched_lanes`)
        .args(["demo", "spdz", "--parties", "3", "--lanes", "1"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // inputs 2, 3, 4: every party gets the MAC-checked product 24
    assert_eq!(
        text.matches("product of all inputs (mod 2^64) = 24 (MAC-checked)")
            .count(),
        3,
        "{text}"
    );
}

/// `spdz-prep-ot --lanes 3 --ot-ext ss8` between two party processes: the stores it fills drive
/// the online product; parties that pass different lane counts, or different OT extensions, both
/// stop with a message that says so; an extension that does not exist is refused.
#[test]
fn spdz_prep_ot_on_lanes_and_mismatched_lanes() {
    let dir = scratch("lanes");
    // Below Linux's ephemeral range, apart from the other tests' ports.
    make_certs(&dir, 2, 16000 + (std::process::id() % 4000) as u16);
    let cfg = dir.join("party.toml");
    let stores = dir.join("stores");
    let run = |args: &[&[&str]; 2]| -> Vec<std::process::Output> {
        let kids: Vec<_> = (0..2)
            .map(|i| {
                let mut c = coterie();
                c.arg("party").arg("--config").arg(&cfg);
                c.args(["--id", &i.to_string(), "--timeout-s", "30"]);
                c.args(args[i]);
                c.stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        kids.into_iter()
            .map(|k| k.wait_with_output().unwrap())
            .collect()
    };
    let s = stores.to_string_lossy().to_string();
    let prep: Vec<&str> = vec![
        "spdz-prep-ot",
        "--dir",
        &s,
        "--triples",
        "300",
        "--bits",
        "5",
        "--randoms",
        "2",
        "--masks",
        "2",
        "--lanes",
        "3",
        "--ot-ext",
        "ss8",
    ];
    for (i, o) in run(&[&prep, &prep]).iter().enumerate() {
        assert!(
            o.status.success(),
            "party {i}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("300 triples, 5 bits"),
            "party {i}: {}",
            String::from_utf8_lossy(&o.stdout)
        );
    }
    let demo = ["spdz-demo", "--dir", &s];
    for (i, o) in run(&[&demo, &demo]).iter().enumerate() {
        // inputs 2 and 3
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("= 6 (MAC-checked)"),
            "party {i}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // Party 0 finds no store (a local error): it aborts with its reason before it exits (the
    // flow itself aborts, with the store error's text, its path cut to the file name), so
    // party 1, waiting for its messages, reports that reason, not a lost connection.
    let missing = dir.join("missing").to_string_lossy().to_string();
    let outs = run(&[&["spdz-demo", "--dir", &missing], &demo]);
    for (i, o) in outs.iter().enumerate() {
        assert!(!o.status.success(), "party {i} should fail");
    }
    let err1 = String::from_utf8_lossy(&outs[1].stderr);
    assert!(
        err1.contains(
            "SPDZ online: network: protocol aborted by party 0: open …/header.bin: No such file"
        ),
        "party 1: {err1}"
    );
    let other = dir.join("other").to_string_lossy().to_string();
    let lanes = |l| {
        [
            "spdz-prep-ot",
            "--dir",
            &other,
            "--triples",
            "4",
            "--lanes",
            l,
        ]
    };
    for (i, o) in run(&[&lanes("2"), &lanes("3")]).iter().enumerate() {
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "party {i} should fail");
        assert!(err.contains("pass the same --lanes"), "party {i}: {err}");
    }
    let third = dir.join("third").to_string_lossy().to_string();
    let ext = |e| {
        [
            "spdz-prep-ot",
            "--dir",
            &third,
            "--triples",
            "4",
            "--ot-ext",
            e,
        ]
    };
    for (i, o) in run(&[&ext("ss4"), &ext("ss8")]).iter().enumerate() {
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "party {i} should fail");
        assert!(err.contains("runs OT extension"), "party {i}: {err}");
    }
    let bad = coterie()
        .args(["party", "--config"])
        .arg(&cfg)
        .args([
            "--id",
            "0",
            "spdz-prep-ot",
            "--dir",
            &third,
            "--ot-ext",
            "ss3",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success());
    assert!(err.contains("must divide 128"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn spdz_insecure_dealer_writes_stores_and_refuses_one_party() {
    let dir = scratch("spdz-deal");
    let out = coterie()
        .args([
            "spdz",
            "deal-insecure",
            "--parties",
            "2",
            "--triples",
            "8",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("insecure"));
    assert!(dir.join("party-0").is_dir() && dir.join("party-1").is_dir());
    let bad = coterie()
        .args(["spdz", "deal-insecure", "--parties", "1", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(!bad.status.success());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn demo_threshold_four_processes() {
    let out = coterie()
        .args(["demo", "threshold", "--parties", "4", "--count", "3"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        text.matches("decrypted 3 ciphertexts correctly in both schedules")
            .count(),
        4,
        "{text}"
    );
    // the dealer is announced as insecure
    assert!(text.contains("INSECURE dealer"), "{text}");
    assert!(text.contains("all 4 parties succeeded"));
}

#[test]
fn demo_threshold_with_ot_preprocessing() {
    let out = coterie()
        .args([
            "demo",
            "threshold",
            "--parties",
            "2",
            "--count",
            "1",
            "--prep",
            "ot",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // the OT preprocessing is named, timed, and replaces the dealer
    assert!(
        text.contains("maliciously secure OT preprocessing"),
        "{text}"
    );
    assert!(text.contains("triples/s"), "{text}");
    assert!(!text.contains("INSECURE dealer"), "{text}");
    assert_eq!(
        text.matches("decrypted 1 ciphertexts correctly in both schedules")
            .count(),
        2,
        "{text}"
    );
    assert_eq!(text.matches("all 2 parties succeeded").count(), 2, "{text}");
}

#[test]
fn certs_with_roles_writes_them_and_refuses_a_bad_one() {
    let dir = scratch("roles");
    let out = coterie()
        .args([
            "certs",
            "--parties",
            "3",
            "--roles",
            "node,server,client",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cfg = std::fs::read_to_string(dir.join("party.toml")).unwrap();
    assert!(cfg.contains("role = \"server\""), "{cfg}");
    assert!(cfg.contains("role = \"client\""), "{cfg}");
    assert_eq!(
        cfg.matches("role =").count(),
        2,
        "nodes get no role line: {cfg}"
    );
    let bad = coterie()
        .args(["certs", "--parties", "2", "--roles", "Not A Role", "--out"])
        .arg(dir.join("bad"))
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--roles"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn decrypt_refuses_tfhe_rs_files_that_do_not_convert() {
    let dir = scratch("tfhe-rs");
    std::fs::create_dir_all(&dir).unwrap();
    // a TFHE-rs 1.8 LweCiphertext<Vec<u64>> as `bincode::serialize` writes it: the container's
    // length, the words (mask then body), the modulus (u128) and the word width
    let tfhe_rs = |modulus: u128| {
        let mut b = 3u64.to_le_bytes().to_vec();
        for w in [5u64, 6, 1 << 63] {
            b.extend(w.to_le_bytes());
        }
        b.extend(modulus.to_le_bytes());
        b.extend(64u64.to_le_bytes());
        b
    };
    let odd = dir.join("odd-modulus.bin");
    std::fs::write(&odd, tfhe_rs(65537)).unwrap();
    let native = dir.join("native.bin");
    std::fs::write(&native, tfhe_rs(0)).unwrap();
    // no node is contacted when no file converts, so none needs to exist
    let run = |files: &[&std::path::Path], m: &str| {
        let mut c = coterie();
        c.args(["decrypt", "--node", "127.0.0.1:1", "--message-bits", m]);
        for (flag, name) in [
            ("--config", "party.toml"),
            ("--cert", "c.crt"),
            ("--key", "c.key"),
        ] {
            c.arg(flag).arg(dir.join(name));
        }
        c.args(files).output().unwrap()
    };
    let out = run(&[&odd, &native], "64");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("odd-modulus.bin: error: not sent") && text.contains("not a power of two"),
        "{text}"
    );
    assert!(
        text.contains("native.bin: error: not sent") && text.contains("bad (k, m) = (64, 64)"),
        "{text}"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("2 ciphertexts not decrypted"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `coterie netem relay` with either engine carries bytes both ways with the configured delay
/// (a 10 ms round trip less the calibrated relay cost, which is tens of µs here: the bound of 8 ms
/// leaves room for a calibration on a loaded machine, and a relay without the delay takes well
/// under 1 ms), and an unknown engine is refused by name.
#[test]
fn netem_relay_runs_either_engine() {
    use std::io::{BufRead, Read, Write};
    let echo = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let target = echo.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for c in echo.incoming() {
            let Ok(mut c) = c else { return };
            std::thread::spawn(move || {
                let mut b = [0u8; 64];
                while let Ok(k) = c.read(&mut b) {
                    if k == 0 || c.write_all(&b[..k]).is_err() {
                        break;
                    }
                }
            });
        }
    });
    // `coterie netem relay` on a free loopback port, in front of the echo server
    let relay = || {
        let mut c = coterie();
        c.args([
            "netem",
            "relay",
            "--listen",
            "127.0.0.1:0",
            "--target",
            &target,
        ]);
        c
    };
    for engine in ["threads", "loop"] {
        let mut child = relay()
            .args(["--rtt-ms", "10", "--engine", engine])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // "relay ADDR -> TARGET (...)"
        let addr = line
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_string();
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        s.set_nodelay(true).unwrap();
        let mut rtts = Vec::new();
        for i in 0..5u8 {
            let t = Instant::now();
            s.write_all(&[i; 3]).unwrap();
            let mut back = [0u8; 3];
            s.read_exact(&mut back).unwrap();
            rtts.push(t.elapsed());
            assert_eq!(back, [i; 3], "{engine}");
        }
        child.kill().ok();
        child.wait().ok();
        rtts.sort();
        assert!(rtts[2] >= Duration::from_millis(8), "{engine}: {rtts:?}");
    }
    let out = relay().args(["--engine", "fibers"]).output().unwrap();
    assert!(!out.status.success());
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("fibers") && e.contains("loop"), "{e}");
}
