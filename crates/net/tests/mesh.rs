//! Multi-party tests of both mesh implementations: rounds, aborts, crashes, timeouts, refusal of
//! unknown certificates, commitments.

mod common;

use std::time::{Duration, Instant};

use common::*;
use coterie_net::certs::{generate_pki, generate_stranger};
use coterie_net::commit::{self, Commitment, Opening, TAG_COMMIT, TAG_OPEN};
use coterie_net::{Blob, Error, Identity, InMemoryMesh, Mesh, MeshOptions, TlsMesh};

/// Three kinds of rounds: all-to-all with tags, point-to-point ring, broadcast from party 0.
async fn rounds<M: Mesh>(mut m: M, rounds: u32) -> Result<u64, Error> {
    let (me, n) = (m.id(), m.n());
    let mut acc = 0u64;
    for r in 0..rounds {
        let v = (me as u64 + 1) * 1000 + r as u64;
        let all: Vec<u64> = m.exchange_all_tagged(r, &v).await?;
        for (j, x) in all.iter().enumerate() {
            assert_eq!(*x, (j as u64 + 1) * 1000 + r as u64);
        }
        acc += all.iter().sum::<u64>();
    }
    m.send((me + 1) % n, &format!("ring from {me}")).await?;
    let s: String = m.recv((me + n - 1) % n).await?;
    assert_eq!(s, format!("ring from {}", (me + n - 1) % n));
    if me == 0 {
        m.broadcast(&vec![1u8, 2, 3]).await?;
    } else {
        let b: Vec<u8> = m.recv(0).await?;
        assert_eq!(b, vec![1, 2, 3]);
    }
    let st = m.stats().clone();
    assert_eq!(
        st.msgs_sent.iter().sum::<u64>(),
        rounds as u64 * (n as u64 - 1) + 1 + if me == 0 { n as u64 - 1 } else { 0 }
    );
    assert_eq!(st.msgs_received[me], 0);
    assert!(st.total_received() > 0);
    m.close().await?;
    Ok(acc)
}

fn expected(n: usize, rounds: u32) -> u64 {
    (0..rounds)
        .map(|r| {
            (0..n as u64)
                .map(|j| (j + 1) * 1000 + r as u64)
                .sum::<u64>()
        })
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_memory_rounds_2_4_8_16() {
    for n in [2, 4, 8, 16] {
        let hs: Vec<_> = InMemoryMesh::group(n, opts(10))
            .into_iter()
            .map(|m| tokio::spawn(rounds(m, 5)))
            .collect();
        for h in hs {
            assert_eq!(h.await.unwrap().unwrap(), expected(n, 5), "n = {n}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_rounds_2_4_8_16() {
    for n in [2, 4, 8, 16] {
        let meshes = tls_group(n, true, opts(20)).await;
        let hs: Vec<_> = meshes
            .into_iter()
            .map(|m| tokio::spawn(rounds(m, 5)))
            .collect();
        for h in hs {
            assert_eq!(h.await.unwrap().unwrap(), expected(n, 5), "n = {n}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_ca_only_config_works() {
    let meshes = tls_group(3, false, opts(10)).await;
    let hs: Vec<_> = meshes
        .into_iter()
        .map(|m| tokio::spawn(rounds(m, 2)))
        .collect();
    for h in hs {
        assert_eq!(h.await.unwrap().unwrap(), expected(3, 2));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_certificate_is_refused() {
    for pin in [true, false] {
        let pki = generate_pki(3).unwrap();
        let r = roster(&pki, pin);
        let mut honest = Vec::new();
        for i in 0..2 {
            let (r, id) = (r.clone(), identity(&pki, i));
            honest.push(tokio::spawn(async move {
                TlsMesh::connect(&r, i, id, opts(10)).await
            }));
        }
        let short = MeshOptions {
            connect_deadline: Duration::from_millis(1500),
            ..opts(5)
        };
        // A self-signed certificate for the right name, and another CA's certificate.
        let stranger = generate_stranger(2).unwrap();
        let s_id = Identity::from_pem(&stranger.cert_pem, &stranger.key_pem).unwrap();
        let res = TlsMesh::connect(&r, 2, s_id, short.clone()).await;
        assert!(
            matches!(res, Err(Error::Connect { .. })),
            "stranger accepted (pin = {pin})"
        );
        let other = generate_pki(3).unwrap();
        let res = TlsMesh::connect(&r, 2, identity(&other, 2), short.clone()).await;
        assert!(
            matches!(res, Err(Error::Connect { .. })),
            "foreign CA accepted (pin = {pin})"
        );
        // Party 1's genuine certificate cannot pose as party 2.
        let res = TlsMesh::connect(&r, 2, identity(&pki, 1), short).await;
        assert!(
            matches!(res, Err(Error::Connect { .. })),
            "impersonation accepted (pin = {pin})"
        );
        // The real party 2 still gets in, and the mesh works.
        let m2 = TlsMesh::connect(&r, 2, identity(&pki, 2), opts(10))
            .await
            .unwrap();
        let mut ms = vec![];
        for h in honest {
            ms.push(h.await.unwrap().unwrap());
        }
        ms.push(m2);
        let hs: Vec<_> = ms.into_iter().map(|m| tokio::spawn(rounds(m, 1))).collect();
        for h in hs {
            assert_eq!(h.await.unwrap().unwrap(), expected(3, 1));
        }
    }
}

/// Party `victim` stops after one round without closing; everyone else must fail fast.
async fn killed_party<M: Mesh + 'static>(meshes: Vec<M>, victim: usize) {
    let mut hs = Vec::new();
    for mut m in meshes {
        hs.push(tokio::spawn(async move {
            let _: Vec<u32> = m.exchange_all_tagged(1, &7u32).await?;
            if m.id() == victim {
                drop(m); // crash: no close
                return Ok(());
            }
            let _: Vec<u32> = m.exchange_all_tagged(2, &8u32).await?;
            Ok::<(), Error>(())
        }));
    }
    let t0 = Instant::now();
    for (i, h) in hs.into_iter().enumerate() {
        let r = h.await.unwrap();
        if i == victim {
            assert!(r.is_ok());
        } else {
            let e = r.expect_err("a survivor finished a round with a dead party");
            assert!(
                matches!(e, Error::Disconnected { party, .. } | Error::Closed { party } if party == victim),
                "party {i}: {e}"
            );
        }
    }
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "took {:?}",
        t0.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_party_tls() {
    killed_party(tls_group(4, true, opts(20)).await, 2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_party_in_memory() {
    killed_party(InMemoryMesh::group(4, opts(20)), 2).await;
}

/// Party `victim` sends every peer one message and stops without closing; the others read
/// after its connection has surely ended: the message still arrives whole, and only the next
/// receive reports the departure (a peer that found an error and left must not hide what it
/// sent before it, such as the setting it disagreed on).
async fn message_before_crash_is_read<M: Mesh + 'static>(meshes: Vec<M>, victim: usize) {
    let mut hs = Vec::new();
    for mut m in meshes {
        hs.push(tokio::spawn(async move {
            if m.id() == victim {
                for j in (0..m.n()).filter(|&j| j != victim) {
                    m.send(j, &format!("last words of {victim}")).await?;
                }
                drop(m); // crash: no close
                return Ok(None);
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
            let s: String = m.recv(victim).await?;
            let next: Result<String, Error> = m.recv(victim).await;
            Ok::<_, Error>(Some((s, next.err())))
        }));
    }
    for (i, h) in hs.into_iter().enumerate() {
        let r = h.await.unwrap().unwrap();
        if i == victim {
            continue;
        }
        let (s, e) = r.expect("a survivor");
        assert_eq!(s, format!("last words of {victim}"), "party {i}");
        let e = e.expect("a second message from a crashed party");
        assert!(
            matches!(e, Error::Disconnected { party, .. } | Error::Closed { party } if party == victim),
            "party {i}: {e}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn message_before_crash_is_read_tls() {
    message_before_crash_is_read(tls_group(3, true, opts(20)).await, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn message_before_crash_is_read_in_memory() {
    message_before_crash_is_read(InMemoryMesh::group(3, opts(20)), 0).await;
}

/// Party 1 aborts while everyone else waits for it; all see its reason.
async fn abort_reaches_all<M: Mesh + 'static>(meshes: Vec<M>) {
    let mut hs = Vec::new();
    for mut m in meshes {
        hs.push(tokio::spawn(async move {
            if m.id() == 1 {
                tokio::time::sleep(Duration::from_millis(100)).await;
                return Err(m.abort("MAC check failed").await);
            }
            let r: Result<u32, Error> = m.recv(1).await;
            r.map(|_| ())
        }));
    }
    let t0 = Instant::now();
    for h in hs {
        let e = h.await.unwrap().unwrap_err();
        assert_eq!(
            e,
            Error::Aborted {
                party: 1,
                reason: "MAC check failed".into()
            }
        );
    }
    assert!(t0.elapsed() < Duration::from_secs(5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_tls() {
    abort_reaches_all(tls_group(4, true, opts(20)).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_in_memory() {
    abort_reaches_all(InMemoryMesh::group(4, opts(20))).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receive_times_out_and_errors_are_typed() {
    let mut ms = InMemoryMesh::group(
        2,
        MeshOptions {
            timeout: Duration::from_millis(200),
            ..opts(1)
        },
    );
    let mut b = ms.pop().unwrap();
    let mut a = ms.pop().unwrap();
    let t0 = Instant::now();
    let r: Result<u8, _> = a.recv(1).await;
    assert!(matches!(r, Err(Error::Timeout { party: 1, .. })));
    assert!(t0.elapsed() >= Duration::from_millis(190) && t0.elapsed() < Duration::from_secs(2));
    // wrong type, wrong tag, bad party id
    b.send(0, &300u32).await.unwrap();
    let r: Result<String, _> = a.recv(1).await;
    assert!(matches!(r, Err(Error::Decode { party: 1, .. })), "{r:?}");
    b.send_tagged(0, 5, &1u8).await.unwrap();
    let r: Result<u8, _> = a.recv_tagged(1, 6).await;
    assert!(
        matches!(r, Err(Error::UnexpectedMessage { party: 1, .. })),
        "{r:?}"
    );
    assert!(matches!(a.send(0, &1u8).await, Err(Error::BadParty { .. })));
    assert!(matches!(a.recv::<u8>(7).await, Err(Error::BadParty { .. })));
    // oversized message refused at the sender
    let mut small = InMemoryMesh::group(
        2,
        MeshOptions {
            max_frame: 100,
            ..opts(1)
        },
    );
    assert!(matches!(
        small[0].send(1, &vec![0u8; 1000]).await,
        Err(Error::Encode(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_then_open() {
    let hs: Vec<_> = InMemoryMesh::group(4, opts(10))
        .into_iter()
        .map(|mut m| {
            tokio::spawn(async move {
                let v = vec![m.id() as u64; 3];
                let all = commit::commit_open_all(&mut m, "test/mac-check/0", &v).await?;
                commit::check_consistent(&mut m, "test/echo", &all).await?;
                m.close().await?;
                Ok::<_, Error>(all)
            })
        })
        .collect();
    for h in hs {
        let all = h.await.unwrap().unwrap();
        assert_eq!(all, (0..4u64).map(|j| vec![j; 3]).collect::<Vec<_>>());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_then_open_catches_a_changed_value() {
    let domain = "test/mac-check/1";
    let hs: Vec<_> = InMemoryMesh::group(3, opts(10))
        .into_iter()
        .map(|mut m| {
            tokio::spawn(async move {
                if m.id() == 2 {
                    // Commits to 5, opens 6.
                    let b5 = postcard::to_allocvec(&5u64).unwrap();
                    let b6 = postcard::to_allocvec(&6u64).unwrap();
                    let (c, r) = commit::commit(domain, 2, &b5);
                    let _: Vec<Commitment> = m.exchange_all_tagged(TAG_COMMIT, &c).await?;
                    let _: Vec<(Opening, Vec<u8>)> =
                        m.exchange_all_tagged(TAG_OPEN, &(r, b6)).await?;
                    // then waits for the verdict
                    let r: Result<u8, Error> = m.recv(0).await;
                    return r.map(|_| vec![]);
                }
                let v = m.id() as u64;
                commit::commit_open_all(&mut m, domain, &v).await
            })
        })
        .collect();
    for (i, h) in hs.into_iter().enumerate() {
        let e = h.await.unwrap().unwrap_err();
        if i < 2 {
            assert!(
                matches!(
                    &e,
                    Error::CommitmentMismatch { party: 2, .. } | Error::Aborted { .. }
                ),
                "party {i}: {e}"
            );
        } else {
            assert!(matches!(e, Error::Aborted { .. }), "{e}");
        }
    }
}

/// Byte strings sent with `send_bytes` arrive intact through `recv_bytes` and as a `Blob`, in
/// order with ordinary messages, on both mesh implementations; sizes span the 1 MiB growth step
/// of the TLS reader.
async fn bytes_round_trip<M: Mesh + 'static>(meshes: Vec<M>) {
    let sizes = [0usize, 1, 200, 70_000, (1 << 20) + 5, 3 << 20];
    let data = |len: usize| -> Vec<u8> { (0..len).map(|i| (i % 251) as u8).collect() };
    let mut hs = Vec::new();
    for mut m in meshes {
        hs.push(tokio::spawn(async move {
            if m.id() == 0 {
                for &len in &sizes {
                    m.send_bytes(1, 9, &data(len)).await?;
                    m.send(1, &(len as u64)).await?;
                }
                m.send_bytes(1, 3, &data(77)).await?;
            } else {
                for &len in &sizes {
                    let got = m.recv_bytes(0, 9).await?;
                    assert_eq!(got.len(), len);
                    assert!(got == data(len), "payload of {len} bytes corrupted");
                    assert_eq!(m.recv::<u64>(0).await?, len as u64);
                }
                let b: Blob = m.recv_tagged(0, 3).await?;
                assert_eq!(b.0, data(77));
            }
            m.close().await
        }));
    }
    for h in hs {
        h.await.unwrap().unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bytes_round_trip_tls() {
    let mut o = common::opts(20);
    o.max_frame = 8 << 20;
    bytes_round_trip(common::tls_group(2, false, o).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bytes_round_trip_in_memory() {
    let mut o = common::opts(20);
    o.max_frame = 8 << 20;
    bytes_round_trip(InMemoryMesh::group(2, o)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bytes_over_the_frame_bound_are_refused() {
    let mut o = common::opts(5);
    o.max_frame = 1000;
    let mut g = InMemoryMesh::group(2, o);
    let r = g[0].send_bytes(1, 0, &[0u8; 2000]).await;
    assert!(matches!(r, Err(Error::Encode(_))), "got {r:?}");
    // a payload that is not one byte string (length 5 announced, 1 byte follows) is refused
    g[0].send(1, &(5u32, 2u32)).await.unwrap();
    let r = g[1].recv_bytes(0, 0).await;
    assert!(
        matches!(r, Err(Error::Decode { party: 0, .. })),
        "got {r:?}"
    );
}

/// Party 2 aborts and exits at once (its process ends: the mesh is dropped without a close)
/// while the others, busy, have not yet read its abort notice and go on sending to it. The
/// write that fails on the dead connection must not hide the notice already received: every
/// survivor reports party 2's abort, not a lost peer (which a service would wait on forever).
/// Each party runs on its own single-threaded runtime, blocked while party 2 exits, so that no
/// reader task can take the notice before the failing write.
#[test]
fn abort_then_exit_is_seen_as_the_abort_by_a_party_still_sending() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let pki = generate_pki(4).unwrap();
    let r = roster(&pki, true);
    let exited = Arc::new(AtomicBool::new(false));
    let through_first = Arc::new(AtomicUsize::new(0));
    // waits (blocking its runtime) until `done()`, at most 20 s
    let wait = |i: usize, what: &str, done: &dyn Fn() -> bool| {
        let t = Instant::now();
        while !done() {
            if t.elapsed() > Duration::from_secs(20) {
                return Err(format!("party {i}: {what} never happened"));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(())
    };
    let hs: Vec<_> = (0..4)
        .map(|i| {
            let (r, id) = (r.clone(), identity(&pki, i));
            let (exited, through_first) = (exited.clone(), through_first.clone());
            std::thread::spawn(move || -> Result<Option<Error>, String> {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                let first = async {
                    let mut m = TlsMesh::connect(&r, i, id, opts(20))
                        .await
                        .map_err(|e| format!("party {i} connect: {e}"))?;
                    let _: Vec<u32> = m
                        .exchange_all_tagged(1, &7u32)
                        .await
                        .map_err(|e| format!("party {i} first round: {e}"))?;
                    through_first.fetch_add(1, Ordering::AcqRel);
                    Ok::<_, String>(m)
                };
                if i == 2 {
                    rt.block_on(async {
                        let mut m = first.await?;
                        // the others are through the first round before the abort
                        wait(i, "the others' first round", &|| {
                            through_first.load(Ordering::Acquire) == 4
                        })?;
                        m.abort("bad key file").await;
                        Ok::<_, String>(())
                    })?;
                    drop(rt); // the process ends: tasks and sockets are gone
                    exited.store(true, Ordering::Release);
                    return Ok(None);
                }
                rt.block_on(async {
                    let mut m = first.await?;
                    // busy (the runtime is blocked) while party 2 aborts and exits
                    wait(i, "party 2's exit", &|| exited.load(Ordering::Acquire))?;
                    std::thread::sleep(Duration::from_millis(100));
                    for k in 0..5u32 {
                        if let Err(e) = m.send_tagged(2, 2, &k).await {
                            return Ok(Some(e));
                        }
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    Ok(Some(m.recv_tagged::<u32>(2, 2).await.unwrap_err()))
                })
            })
        })
        .collect();
    for (i, h) in hs.into_iter().enumerate() {
        if let Some(e) = h.join().unwrap().unwrap() {
            assert_eq!(
                e,
                Error::Aborted {
                    party: 2,
                    reason: "bad key file".into()
                },
                "party {i}"
            );
        }
    }
}
