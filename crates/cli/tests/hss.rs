//! The HSS applications (seed 004 §6) as real processes over mutual TLS on loopback: the vote
//! demo re-running after an injected failure at both servers, the feed and PIR demos checked
//! against their plaintext results by the client process, and bad input to the input clients'
//! upload refused with a message. The toy group keeps these fast; the P1536 runs are the
//! README's commands and the benchmarks.

mod common;

use common::{coterie, text};

#[test]
fn demo_hss_vote_reruns_after_an_injected_failure() {
    let o = coterie()
        .args(["demo", "hss-vote", "--clients", "7", "--insecure-toy"])
        .arg("--inject-failure")
        .output()
        .unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    // Both servers reported their first evaluation as failed: the client re-ran with the next
    // pad and got the result the demo expected from the plaintext votes.
    assert!(t.contains("(2 attempt(s)"), "{t}");
    assert!(t.contains("pad 1"), "{t}");
    assert_eq!(t.matches("all 3 parties succeeded").count(), 2, "{t}");
}

#[test]
fn demo_hss_vote_plain_mode() {
    let o = coterie()
        .args(["demo", "hss-vote", "--clients", "5", "--mode", "plain"])
        .arg("--insecure-toy")
        .output()
        .unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("3-out-of-5 vote over 5 uploads"), "{t}");
}

#[test]
fn demo_hss_feed_and_pir_match_the_plaintext() {
    let o = coterie()
        .args(["demo", "hss-feed", "--insecure-toy", "--tags", "8"])
        .output()
        .unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("all equal to the plaintext filter"), "{t}");
    let o = coterie()
        .args(["demo", "hss-pir", "--insecure-toy", "--records", "120"])
        .output()
        .unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("equal to the plaintext search"), "{t}");
}

#[test]
fn demo_hss_triples_open_correctly() {
    let o = coterie()
        .args(["demo", "hss-triples", "--n-bits", "16", "--count", "3"])
        .arg("--insecure-toy")
        .output()
        .unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert_eq!(t.matches("every a·b = c").count(), 2, "{t}");
}

#[test]
fn demo_hss_fs_grants_and_denies() {
    let o = coterie()
        .args(["demo", "hss-fs", "--insecure-toy"])
        .output()
        .unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("the granted client's copy equals the published file"),
        "{t}"
    );
    assert!(t.contains("denied by its hidden policy"), "{t}");
}

#[test]
fn fs_publish_refuses_a_bad_policy() {
    let dir = coterie_base::fsio::unique_temp_dir("coterie-cli-test-hss-fs");
    let d = |p: &str| dir.join(p).to_string_lossy().to_string();
    let (state, repo, owner) = (d("state"), d("repo"), d("owner.key"));
    let o = coterie()
        .args(["hss", "fs-setup", "--dir", &state, "--repo", &repo])
        .args(["--owner-key", &owner, "--insecure-toy"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    std::fs::write(dir.join("f.txt"), b"x").unwrap();
    for policy in ["0,x", "0,9"] {
        let o = coterie()
            .args(["hss", "fs-publish", "--dir", &state, "--repo", &repo])
            .args(["--owner-key", &owner, "--name", "f", "--file", &d("f.txt")])
            .args(["--attrs", "4", "--policy", policy])
            .output()
            .unwrap();
        assert!(!o.status.success(), "{policy}: {}", text(&o));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn upload_refuses_bad_input() {
    let dir = coterie_base::fsio::unique_temp_dir("coterie-cli-test-hss-upload");
    let o = coterie()
        .args(["hss", "upload", "--repo"])
        .arg(&dir)
        .args(["--name", "v1", "--bit", "2"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(text(&o).contains("the bit must be 0 or 1"), "{}", text(&o));
    // No repository there yet.
    let o = coterie()
        .args(["hss", "upload", "--repo"])
        .arg(dir.join("missing"))
        .args(["--name", "v1", "--bit", "1"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(text(&o).contains("no repository"), "{}", text(&o));
    // A repository whose public key is junk.
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("pk.hss"), b"junk").unwrap();
    let o = coterie()
        .args(["hss", "upload", "--repo"])
        .arg(&dir)
        .args(["--name", "v1", "--bit", "1"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(text(&o).contains("pk.hss"), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&dir);
}
