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
/// checks that joint decryption never combines different parties' re-evaluations; then the
/// flooding-free decryption by MPC rounding with OT-based preprocessing.
#[test]
fn demo_mktfhe_three_processes_toy() {
    let text = run(&[
        "demo",
        "mktfhe",
        "--parties",
        "3",
        "--insecure-toy",
        "--mpc-rounding",
        "--x",
        "5",
        "--y",
        "9",
    ]);
    assert!(text.contains("INSECURE toy"), "{text}");
    assert_eq!(
        text.matches("(5 > 9) = false (expected false)").count(),
        6,
        "{text}"
    );
    assert_eq!(text.matches("multi-key TFHE demo done").count(), 3);
    assert_eq!(
        text.matches("MPC rounding (no smudging; OT preprocessing included)")
            .count(),
        3,
        "{text}"
    );
    assert_eq!(
        text.lines()
            .filter(|l| l.contains("MPC rounding") && l.contains("(5 > 9) = false (expected false)"))
            .count(),
        3,
        "{text}"
    );
}

/// Two processes on the paper's k = 2 set (n = 520, N = 1024), decrypted both with smudged
/// partial decryptions and by MPC rounding.
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
        "--mpc-rounding",
    ]);
    assert!(text.contains("seed003_ako_k2"), "{text}");
    assert_eq!(
        text.matches("(200 > 77) = true (expected true)").count(),
        4,
        "{text}"
    );
}
