//! `coterie demo mktfhe`: multi-key TFHE key generation, evaluation and joint decryption among
//! real party processes over mutual TLS on loopback.

use std::process::Command;

fn run(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_coterie"))
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// Three processes on the insecure toy set: each process picks its own FFT plan, so this also
/// checks that joint decryption never combines different parties' re-evaluations.
#[test]
fn demo_mktfhe_three_processes_toy() {
    let text = run(&[
        "demo",
        "mktfhe",
        "--parties",
        "3",
        "--insecure-toy",
        "--x",
        "5",
        "--y",
        "9",
    ]);
    assert!(text.contains("INSECURE toy"), "{text}");
    assert_eq!(
        text.matches("(5 > 9) = false (expected false)").count(),
        3,
        "{text}"
    );
    assert_eq!(text.matches("multi-key TFHE demo done").count(), 3);
}

/// Two processes on the paper's k = 2 set (n = 520, N = 1024).
#[test]
fn demo_mktfhe_two_processes_paper_set() {
    let text = run(&[
        "demo",
        "mktfhe",
        "--parties",
        "2",
        "--x",
        "200",
        "--y",
        "77",
    ]);
    assert!(text.contains("seed003_ako_k2"), "{text}");
    assert_eq!(
        text.matches("(200 > 77) = true (expected true)").count(),
        2,
        "{text}"
    );
}
