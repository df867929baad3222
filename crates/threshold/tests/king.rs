//! Π_Decrypt over a [`KingMesh`] (issue 17 item 2): every exchange relayed through a king with
//! end-to-end tags. Decryptions equal those over the all-to-all mesh, with `2(n−1)` messages a
//! round instead of `n(n−1)` (the round counts of `crate::pipelined`'s table), a cheating
//! party is still caught by the protocol's MAC checks, and a king that alters an honest party's
//! relayed message is caught by the relay's tags. Insecure dealer material.

mod common;

use common::*;
use coterie_net::relay::Bundle;
use coterie_net::tamper::{Select, TamperMesh};
use coterie_net::{InMemoryMesh, KingMesh, Mesh};
use coterie_spdz::Ring;
use coterie_spdz::Share;
use coterie_threshold::ciphertext::LweCiphertext;
use coterie_threshold::gates::{GatePool, prep_bundles};
use coterie_threshold::keys::{KeyDistribution, SharedKey};
use coterie_threshold::online::decrypt;
use coterie_threshold::pipelined::{TAG_BASE, decrypt_pipelined, decrypt_strict_single_check};
use coterie_threshold::{Error, Params};

const PARTIES: usize = 4;

/// Ciphertexts with a zero mask (so they decrypt to `μ` under any key): `μ = 0..4` with noise.
fn ciphertexts() -> Vec<LweCiphertext> {
    [(0u64, 100i64), (1, -100), (2, 2000), (3, -2000)]
        .iter()
        .map(|&(mu, e)| {
            let b = ((mu << 14) as i64 + e).rem_euclid(1 << 16) as u64;
            let mut parts = vec![0u64; 4];
            parts.push(b);
            LweCiphertext::from_parts(parts, 16, 2).unwrap()
        })
        .collect()
}

fn setup() -> (Params, coterie_spdz::Counts) {
    let p = params(4, 16, 2, 3);
    let lt = p.lt().unwrap();
    (p, counts(&lt, 4, 4, 4, 0, 64))
}

/// Rounds of each schedule: 0 strict Π_Decrypt with batched checks (online.rs), 1 pipelined,
/// 2 strict with per-value SingleChecks.
fn rounds_of(mode: u8) -> u64 {
    match mode {
        0 => 15,
        1 => 5,
        _ => 9,
    }
}

/// Key, gate bundles (the first one off by one at a cheating party), then one decryption of `cts` in `mode` over `mesh`; returns the plaintexts
/// and the messages this party sent during the decryption alone.
async fn decrypt_over<M: Mesh>(
    eng: &mut Eng,
    mesh: &mut M,
    p: Params,
    mode: u8,
    cheat: bool,
) -> Result<(Vec<u64>, u64), Error> {
    let lt = p.lt().unwrap();
    let key = SharedKey::generate(eng, 4, KeyDistribution::Binary)?;
    let cts = ciphertexts();
    let (mut b, _) = prep_bundles(eng, mesh, &lt, cts.len(), 0).await?;
    if cheat {
        // the ModLTZ mask of the first bundle off by one: this party's share of the second
        // opening (y + rM) is wrong, as if it opened a wrong share
        let ring = *eng.ring();
        let x: &mut Share<u128> = &mut b[0].modltz.mask;
        x.v = ring.add(&x.v, &1);
    }
    let mut pool = GatePool::new(lt);
    pool.push(b)?;
    let sent = |m: &M| m.stats().msgs_sent.iter().sum::<u64>();
    let before = sent(mesh);
    let out = match mode {
        0 => decrypt(eng, mesh, &p, &key, &cts, &mut pool).await?,
        1 => decrypt_pipelined(eng, mesh, &p, &key, &cts, &mut pool, 5).await?,
        _ => decrypt_strict_single_check(eng, mesh, &p, &key, &cts, &mut pool, 5).await?,
    };
    Ok((out, sent(mesh) - before))
}

/// Wraps `mesh` in a king mesh around `king` (as a [`coterie_threshold::Error`]).
async fn king_mesh<M: Mesh>(mesh: M, king: usize) -> Result<KingMesh<M>, Error> {
    KingMesh::new(mesh, king)
        .await
        .map_err(|e| Error::Spdz(e.into()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decryption_over_the_king_equals_all_to_all_with_fewer_messages() {
    let (p, c) = setup();
    let n = PARTIES as u64;
    for mode in [0u8, 1, 2] {
        for king in [None, Some(0usize), Some(PARTIES - 1)] {
            let res = run_mem(deal(PARTIES, 16, c), move |_, mut eng, mesh| async move {
                match king {
                    None => {
                        let mut mesh = mesh;
                        let r = decrypt_over(&mut eng, &mut mesh, p, mode, false).await;
                        mesh.close().await.ok();
                        r
                    }
                    Some(k) => {
                        let mut mesh = king_mesh(mesh, k).await?;
                        let r = decrypt_over(&mut eng, &mut mesh, p, mode, false).await;
                        mesh.close().await.ok();
                        r
                    }
                }
            })
            .await;
            let mut total = 0;
            for (i, r) in res.into_iter().enumerate() {
                let (mu, sent) = r.unwrap_or_else(|e| panic!("mode {mode}, king {king:?}: {e}"));
                assert_eq!(
                    mu,
                    vec![0, 1, 2, 3],
                    "mode {mode}, king {king:?}, party {i}"
                );
                total += sent;
            }
            // messages per round: n(n−1) all-to-all, 2(n−1) through the king
            let per_round = if king.is_some() {
                2 * (n - 1)
            } else {
                n * (n - 1)
            };
            assert_eq!(
                total,
                rounds_of(mode) * per_round,
                "mode {mode}, king {king:?}: {total} messages"
            );
        }
    }
}

/// Every party must fail; at least one honest party through a check of the protocol (not of the
/// relay: the cheater's messages were tagged honestly), and none blames the relay.
fn assert_protocol_abort(res: &[Result<(Vec<u64>, u64), Error>], what: &str) {
    let mut protocol = 0;
    for (i, r) in res.iter().enumerate() {
        let e = match r {
            Err(e) => e.to_string(),
            Ok(v) => panic!("{what}: party {i} decrypted {v:?}"),
        };
        assert!(!e.contains("authentication tag"), "{what}: party {i}: {e}");
        if matches!(
            r,
            Err(Error::Abort { .. } | Error::Spdz(coterie_spdz::Error::MacCheckFailed { .. }))
        ) {
            protocol += 1;
        }
    }
    assert!(
        protocol > 0,
        "{what}: no party failed a protocol check: {res:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cheating_party_with_a_wrong_share_is_caught_over_the_king() {
    // party 1 (not the king) opens a share off by one, consistently and with honest relay
    // tags: the MAC checks must catch it exactly as over the all-to-all mesh
    let (p, c) = setup();
    for mode in [0u8, 1, 2] {
        let res = run_mem(deal(PARTIES, 16, c), move |i, mut eng, mesh| async move {
            let mut mesh = king_mesh(mesh, 0).await?;
            let r = decrypt_over(&mut eng, &mut mesh, p, mode, i == 1).await;
            mesh.close().await.ok();
            r
        })
        .await;
        assert_protocol_abort(&res, &format!("mode {mode}"));
    }
}

/// The king (party 0) runs under a tampering mesh that rewrites the pipelined round-`round`
/// bundles it relays to party 2; returns every party's result and how often the rule fired.
async fn king_tampers(
    round: u32,
    rewrite: fn(&mut Bundle),
) -> (Vec<Result<(Vec<u64>, u64), Error>>, u64) {
    let (p, c) = setup();
    let fired = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let f2 = fired.clone();
    let res = run_mem(
        deal(PARTIES, 16, c),
        move |i, mut eng, mesh: InMemoryMesh| {
            let f2 = f2.clone();
            async move {
                let mut t = TamperMesh::new(mesh);
                let rule =
                    (i == 0).then(|| t.add(Select::to(2).tag(TAG_BASE + round).rewrite(rewrite)));
                let mut mesh = king_mesh(t, 0).await?;
                let r = decrypt_over(&mut eng, &mut mesh, p, 1, false).await;
                mesh.close().await.ok();
                if let Some(rule) = rule {
                    f2.fetch_add(rule.fired(), std::sync::atomic::Ordering::Relaxed);
                }
                r
            }
        },
    )
    .await;
    (res, fired.load(std::sync::atomic::Ordering::Relaxed))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn king_changing_its_own_opening_is_caught_by_the_mac_check() {
    // The king's own message comes over the direct link (no relay tag): a king that sends party
    // 2 a different R1 share of its own is an equivocating party, which the protocol catches.
    // R1's payload: version byte, byte-string length, then the shares of V1.
    let (res, fired) = king_tampers(1, |b| b.entries[0].payload.0[2] ^= 1).await;
    assert_eq!(fired, 1);
    assert_protocol_abort(&res, "king's own share");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn king_changing_an_honest_sigma_opening_is_caught_by_the_relay() {
    // R3 carries party 1's shares of V3 ‖ Y and its opening of σ(V1). A king that changes any
    // of it on its way to party 2 (e.g. a σ, to make Σσ = 0 for a cheating partner) breaks
    // party 1's tag: party 2 aborts naming the king, and the others see its abort.
    let (res, fired) = king_tampers(3, |b| b.entries[1].payload.0[2] ^= 1).await;
    assert_eq!(fired, 1);
    let e2 = res[2].as_ref().unwrap_err().to_string();
    assert!(
        e2.contains("authentication tag")
            && e2.contains("king (party 0)")
            && e2.contains("party 1"),
        "{e2}"
    );
    for (i, r) in res.iter().enumerate() {
        assert!(r.is_err(), "party {i}: {r:?}");
    }
}
