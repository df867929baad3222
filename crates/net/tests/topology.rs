//! The star (king) topology against the full mesh, over both mesh implementations: same results,
//! 2(n−1) messages instead of n(n−1), and a king that cheats on the vector length is caught.

use std::time::Duration;

use coterie_net::tamper::{Select, TamperMesh};
use coterie_net::topology::{Topology, exchange_all_with, exchange_via_king, reduce};
use coterie_net::{Error, InMemoryMesh, Mesh, MeshOptions, TlsMesh, local};

fn opts() -> MeshOptions {
    MeshOptions {
        timeout: Duration::from_secs(10),
        connect_deadline: Duration::from_secs(20),
        ..MeshOptions::default()
    }
}

/// Runs a sum-opening and a gather over `topology`; returns each party's results and the number
/// of messages all parties sent together.
async fn run<M: Mesh + 'static>(
    meshes: Vec<M>,
    topology: Topology,
) -> (Vec<(u64, Vec<String>)>, u64) {
    let results = local::run_parties(meshes, |mut m| async move {
        let me = m.id() as u64;
        let sum = reduce(&mut m, topology, 5, &(me * me + 1), |v: Vec<u64>| {
            Ok(v.iter().sum::<u64>())
        })
        .await
        .unwrap();
        let all: Vec<String> = exchange_all_with(&mut m, topology, 6, &format!("p{me}"))
            .await
            .unwrap();
        let sent = m.stats().msgs_sent.iter().sum::<u64>();
        m.close().await.unwrap();
        ((sum, all), sent)
    })
    .await;
    let sent = results.iter().map(|(_, s)| s).sum();
    (results.into_iter().map(|(r, _)| r).collect(), sent)
}

fn expected(n: usize) -> (u64, Vec<String>) {
    let sum = (0..n as u64).map(|i| i * i + 1).sum();
    (sum, (0..n).map(|i| format!("p{i}")).collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn star_matches_full_in_memory() {
    for n in [2usize, 4, 7] {
        let m = n as u64;
        let (full, sent) = run(InMemoryMesh::group(n, opts()), Topology::Full).await;
        assert_eq!(full, vec![expected(n); n]);
        assert_eq!(sent, 2 * m * (m - 1), "two rounds of n(n-1)");
        for king in [0, n - 1] {
            let (star, sent) = run(InMemoryMesh::group(n, opts()), Topology::Star { king }).await;
            assert_eq!(star, full, "n = {n}, king {king}");
            assert_eq!(sent, 2 * 2 * (m - 1), "two rounds of 2(n-1)");
        }
    }
}

async fn tls(n: usize) -> Vec<TlsMesh> {
    local::tls_group(n, opts(), None).await.unwrap().0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn star_matches_full_tls() {
    let n = 4;
    let (full, sent_full) = run(tls(n).await, Topology::Full).await;
    let (star, sent_star) = run(tls(n).await, Topology::Star { king: 2 }).await;
    assert_eq!(full, vec![expected(n); n]);
    assert_eq!(star, full);
    assert_eq!((sent_full, sent_star), (2 * 12, 2 * 6));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cheating_king_is_caught_and_bad_king_refused() {
    // king 0 drops one value from the vector it sends to party 2
    let mut hs = Vec::new();
    for m in InMemoryMesh::group(3, opts()) {
        let mut t = TamperMesh::new(m);
        let fired = (t.id() == 0).then(|| {
            t.add(Select::to(2).tag(1).rewrite(|v: &mut Vec<u32>| {
                v.pop();
            }))
        });
        hs.push(tokio::spawn(async move {
            let r = exchange_all_with(&mut t, Topology::Star { king: 0 }, 1, &7u32).await;
            let _ = t.close().await;
            (r, fired)
        }));
    }
    let mut rs = Vec::new();
    for h in hs {
        rs.push(h.await.unwrap());
    }
    assert_eq!(rs[0].0.as_ref().unwrap(), &vec![7, 7, 7]);
    assert_eq!(rs[1].0.as_ref().unwrap(), &vec![7, 7, 7]);
    assert!(
        matches!(rs[2].0, Err(Error::Decode { party: 0, .. })),
        "{:?}",
        rs[2].0
    );
    assert_eq!(rs[0].1.as_ref().unwrap().fired(), 1);

    // a king outside 0..n is refused before anything is sent
    let mut g = InMemoryMesh::group(2, opts());
    let r = exchange_via_king(&mut g[0], 5, 0, &1u8, |v: Vec<u8>| Ok(v.len())).await;
    assert!(matches!(r, Err(Error::BadParty { party: 5, .. })), "{r:?}");
    assert_eq!(g[0].stats().msgs_sent.iter().sum::<u64>(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn king_that_cannot_combine_aborts_everyone() {
    let mut hs = Vec::new();
    for mut m in InMemoryMesh::group(3, opts()) {
        hs.push(tokio::spawn(async move {
            let r = exchange_via_king(&mut m, 1, 0, &1u8, |_: Vec<u8>| {
                Err::<u8, _>(Error::Protocol("shares do not add up".into()))
            })
            .await;
            let _ = m.close().await;
            r
        }));
    }
    for h in hs {
        let r = h.await.unwrap();
        assert!(
            matches!(&r, Err(Error::Aborted { party: 1, reason }) if reason.contains("do not add up")),
            "{r:?}"
        );
    }
}
