//! TamperMesh over both mesh implementations: every action, with the honest peers seeing the
//! rewritten value, a timeout for a dropped message, and the rule counters.

use std::time::{Duration, Instant};

use coterie_net::tamper::{Select, TamperMesh};
use coterie_net::{Blob, Error, InMemoryMesh, Mesh, MeshOptions, local};

fn opts(ms: u64) -> MeshOptions {
    MeshOptions {
        timeout: Duration::from_millis(ms),
        connect_deadline: Duration::from_secs(20),
        ..MeshOptions::default()
    }
}

async fn in_memory(n: usize, ms: u64) -> Vec<InMemoryMesh> {
    InMemoryMesh::group(n, opts(ms))
}

async fn tls(n: usize, ms: u64) -> Vec<coterie_net::TlsMesh> {
    local::tls_group(n, opts(ms), None).await.unwrap().0
}

/// Party 0 rewrites the second of three tagged values to party 1, and the payload bytes of a
/// byte string to party 2; party 1 also receives an untouched message with another tag.
async fn rewrites<M: Mesh + 'static>(meshes: Vec<M>) {
    let mut it = meshes.into_iter();
    let mut cheat = TamperMesh::new(it.next().unwrap());
    let typed = cheat.add(Select::to(1).tag(7).nth(1).rewrite(|v: &mut u64| *v += 1));
    let raw = cheat.add(Select::to(2).rewrite_bytes(|p: &mut Vec<u8>| {
        // payload = LEB128 length, then the bytes: flip the last one
        if let Some(b) = p.last_mut() {
            *b ^= 0xff;
        }
    }));
    let c = tokio::spawn(async move {
        for v in [10u64, 20, 30] {
            cheat.send_tagged(1, 7, &v).await.unwrap();
        }
        cheat.send_tagged(1, 8, &40u64).await.unwrap();
        cheat.send_bytes(2, 3, &[1, 2, 3]).await.unwrap();
        cheat.close().await.unwrap();
    });
    let (mut p1, mut p2) = (it.next().unwrap(), it.next().unwrap());
    let h1 = tokio::spawn(async move {
        let mut got = Vec::new();
        for _ in 0..3 {
            got.push(p1.recv_tagged::<u64>(0, 7).await.unwrap());
        }
        got.push(p1.recv_tagged::<u64>(0, 8).await.unwrap());
        p1.close().await.unwrap();
        got
    });
    let h2 = tokio::spawn(async move {
        let b = p2.recv_bytes(0, 3).await.unwrap();
        p2.close().await.unwrap();
        b
    });
    c.await.unwrap();
    assert_eq!(h1.await.unwrap(), vec![10, 21, 30, 40]);
    assert_eq!(h2.await.unwrap(), vec![1, 2, 0xfc]);
    assert_eq!((typed.matched(), typed.fired()), (3, 1));
    assert_eq!((raw.matched(), raw.fired()), (1, 1));
}

/// In an all-to-all round, party 0 replaces its value for party 2 and rewrites the byte string it
/// sends to party 1 as a typed Blob; the honest parties see exactly that.
async fn replaces<M: Mesh + 'static>(meshes: Vec<M>) {
    let mut hs = Vec::new();
    let mut counters = Vec::new();
    for m in meshes {
        let mut t = TamperMesh::new(m);
        if t.id() == 0 {
            counters.push(t.add(Select::to(2).tag(4).replace(&999u64)));
            counters.push(t.add(Select::to(1).tag(5).rewrite(|b: &mut Blob| b.0.reverse())));
        }
        hs.push(tokio::spawn(async move {
            let me = t.id();
            let all: Vec<u64> = t.exchange_all_tagged(4, &(me as u64)).await.unwrap();
            let mut bytes = Vec::new();
            if me == 0 {
                t.send_bytes(1, 5, &[1, 2, 3]).await.unwrap();
            } else if me == 1 {
                bytes = t.recv_bytes(0, 5).await.unwrap();
            }
            t.close().await.unwrap();
            (all, bytes)
        }));
    }
    let mut out = Vec::new();
    for h in hs {
        out.push(h.await.unwrap());
    }
    assert_eq!(out[0].0, vec![0, 1, 2], "the cheater keeps its own value");
    assert_eq!(out[1], (vec![0, 1, 2], vec![3, 2, 1]));
    assert_eq!(out[2].0, vec![999, 1, 2]);
    assert_eq!((counters[0].matched(), counters[0].fired()), (1, 1));
    assert_eq!((counters[1].matched(), counters[1].fired()), (1, 1));
}

/// Party 0 drops its only message to party 1: party 1 times out naming party 0, while party 2
/// receives its copy.
async fn drops<M: Mesh + 'static>(meshes: Vec<M>) {
    let mut it = meshes.into_iter();
    let mut cheat = TamperMesh::new(it.next().unwrap());
    let dropped = cheat.add(Select::to(1).drop_message());
    cheat.set_timeout(Duration::from_secs(10));
    let c = tokio::spawn(async move {
        cheat
            .broadcast_tagged(2, &"hello".to_string())
            .await
            .unwrap();
        // stay until both peers are done, so that party 1 sees a timeout rather than a close
        let _: u8 = cheat.recv_tagged(1, 9).await.unwrap();
        let _: u8 = cheat.recv_tagged(2, 9).await.unwrap();
        cheat.close().await.unwrap();
    });
    let (mut p1, mut p2) = (it.next().unwrap(), it.next().unwrap());
    let h1 = tokio::spawn(async move {
        let r = p1.recv_tagged::<String>(0, 2).await;
        p1.send_tagged(0, 9, &1u8).await.unwrap();
        p1.close().await.unwrap();
        r
    });
    let h2 = tokio::spawn(async move {
        let r = p2.recv_tagged::<String>(0, 2).await;
        p2.send_tagged(0, 9, &1u8).await.unwrap();
        p2.close().await.unwrap();
        r
    });
    let r1 = h1.await.unwrap();
    assert!(matches!(r1, Err(Error::Timeout { party: 0, .. })), "{r1:?}");
    assert_eq!(h2.await.unwrap().unwrap(), "hello");
    c.await.unwrap();
    assert_eq!((dropped.matched(), dropped.fired()), (1, 1));
}

/// Party 0 delays one message within party 1's timeout (it arrives, late) and one beyond it
/// (party 1 times out).
async fn delays<M: Mesh + 'static>(meshes: Vec<M>, timeout: Duration) {
    let mut it = meshes.into_iter();
    let mut cheat = TamperMesh::new(it.next().unwrap());
    let short = cheat.add(Select::to(1).tag(1).delay(timeout / 4));
    let long = cheat.add(Select::to(1).tag(2).delay(timeout * 2));
    cheat.set_timeout(Duration::from_secs(10));
    let mut p1 = it.next().unwrap();
    let c = tokio::spawn(async move {
        cheat.send_tagged(1, 1, &1u32).await.unwrap();
        cheat.send_tagged(1, 2, &2u32).await.unwrap();
        let _: u8 = cheat.recv_tagged(1, 9).await.unwrap();
        cheat.close().await.unwrap();
    });
    let t0 = Instant::now();
    assert_eq!(p1.recv_tagged::<u32>(0, 1).await.unwrap(), 1);
    assert!(t0.elapsed() >= timeout / 4, "{:?}", t0.elapsed());
    let r = p1.recv_tagged::<u32>(0, 2).await;
    assert!(matches!(r, Err(Error::Timeout { party: 0, .. })), "{r:?}");
    p1.send_tagged(0, 9, &1u8).await.unwrap();
    c.await.unwrap();
    p1.close().await.unwrap();
    assert_eq!((short.fired(), long.fired()), (1, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewrite_in_memory() {
    rewrites(in_memory(3, 5000).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewrite_tls() {
    rewrites(tls(3, 5000).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replace_in_memory() {
    replaces(in_memory(3, 5000).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replace_tls() {
    replaces(tls(3, 5000).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drop_in_memory() {
    drops(in_memory(3, 500).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drop_tls() {
    drops(tls(3, 500).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delay_in_memory() {
    delays(in_memory(2, 800).await, Duration::from_millis(800)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delay_tls() {
    delays(tls(2, 800).await, Duration::from_millis(800)).await;
}
