//! Every party of a mesh in this process, over real mutual TLS on loopback: for benchmarks,
//! examples and tests that need the TLS code path without separate processes; and
//! [`run_parties`], which runs one task per party of any group of meshes.

use std::future::Future;
use std::time::Instant;

use crate::certs::{Pki, free_loopback_addresses, generate_pki};
use crate::netem::{LinkParams, Relay, plain_sleep_until};
use crate::{Error, Identity, MeshOptions, Result, Roster, TlsMesh};

/// A roster for every party of `pki` on free loopback ports (each party listens on and is reached
/// at the same address): the CA's certificate as the trust anchor, with `pin` also every party's
/// own certificate pinned, no public keys and no roles. Callers that need relays in between or
/// roles overwrite [`Roster::addresses`] or [`Roster::roles`].
///
/// # Errors
/// No free port, or a certificate of `pki` that does not parse.
///
/// ```
/// use coterie_net::{certs::generate_pki, local::loopback_roster};
/// let pki = generate_pki(3).unwrap();
/// let r = loopback_roster(&pki, true).unwrap();
/// assert_eq!(r.addresses, r.listen);
/// assert!(r.certs.iter().all(Option::is_some) && r.ca.is_some());
/// ```
pub fn loopback_roster(pki: &Pki, pin: bool) -> Result<Roster> {
    let n = pki.parties.len();
    let listen = free_loopback_addresses(n)?;
    let certs = if pin {
        pki.parties
            .iter()
            .map(|p| {
                Ok(Some(
                    Identity::from_pem(&p.cert_pem, &p.key_pem)?
                        .chain
                        .swap_remove(0),
                ))
            })
            .collect::<Result<_>>()?
    } else {
        vec![None; n]
    };
    let ca = Identity::from_pem(&pki.ca.cert_pem, &pki.ca.key_pem)?
        .chain
        .swap_remove(0);
    Ok(Roster {
        addresses: listen.clone(),
        listen,
        certs,
        ca: Some(ca),
        keys: vec![None; n],
        roles: Vec::new(),
    })
}

/// Connects `n` parties of a fresh PKI (a new CA and party keys, made in memory) over mutual TLS
/// on free loopback ports, each with `opts`. With `netem`, every party's listener gets a
/// link-emulator [`Relay`] in front of it, so every link runs through one relay; keep the returned
/// relays alive as long as the meshes.
///
/// # Example
///
/// ```
/// use coterie_net::{Mesh, MeshOptions, local::tls_group};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let (meshes, _relays) = tls_group(2, MeshOptions::default(), None).await.unwrap();
/// let mut tasks = Vec::new();
/// for mut m in meshes {
///     tasks.push(tokio::spawn(async move {
///         let all: Vec<u8> = m.exchange_all(&(m.id() as u8)).await?;
///         m.close().await?;
///         Ok::<_, coterie_net::Error>(all)
///     }));
/// }
/// for t in tasks {
///     assert_eq!(t.await.unwrap().unwrap(), vec![0, 1]);
/// }
/// # });
/// ```
pub async fn tls_group(
    n: usize,
    opts: MeshOptions,
    netem: Option<LinkParams>,
) -> Result<(Vec<TlsMesh>, Vec<Relay>)> {
    tls_group_with(n, opts, netem, plain_sleep_until).await
}

/// [`tls_group`] with the relays (if `netem` is given) started by [`Relay::start_with`] and
/// `wait_until`; [`tls_group`] passes [`plain_sleep_until`], the wait of [`Relay::start`].
///
/// # Errors
/// As [`tls_group`].
pub async fn tls_group_with(
    n: usize,
    opts: MeshOptions,
    netem: Option<LinkParams>,
    wait_until: fn(Instant),
) -> Result<(Vec<TlsMesh>, Vec<Relay>)> {
    let pki = generate_pki(n)?;
    let mut roster = loopback_roster(&pki, false)?;
    let mut relays = Vec::new();
    if let Some(p) = netem {
        for (l, a) in roster.listen.iter().zip(&mut roster.addresses) {
            let r = Relay::start_with("127.0.0.1:0", l, p, wait_until)
                .map_err(|e| Error::Config(format!("link emulator for {l}: {e}")))?;
            *a = r.local_addr().to_string();
            relays.push(r);
        }
    }
    let out = connect_all(&pki, &roster, &opts).await?;
    Ok((out, relays))
}

/// Connects every party of `pki` with `roster`, one task per party; the meshes in party order.
async fn connect_all(pki: &Pki, roster: &Roster, opts: &MeshOptions) -> Result<Vec<TlsMesh>> {
    connect_each(pki, &vec![roster.clone(); pki.parties.len()], opts).await
}

/// [`connect_all`] with party `i` connecting by `rosters[i]`.
async fn connect_each(pki: &Pki, rosters: &[Roster], opts: &MeshOptions) -> Result<Vec<TlsMesh>> {
    let mut hs = Vec::with_capacity(pki.parties.len());
    for ((i, party), roster) in pki.parties.iter().enumerate().zip(rosters) {
        let (r, o) = (roster.clone(), opts.clone());
        let id = Identity::from_pem(&party.cert_pem, &party.key_pem)?;
        hs.push(tokio::spawn(
            async move { TlsMesh::connect(&r, i, id, o).await },
        ));
    }
    let mut out = Vec::with_capacity(hs.len());
    for h in hs {
        out.push(
            h.await
                .map_err(|e| Error::Protocol(format!("connect task: {e}")))??,
        );
    }
    Ok(out)
}

/// [`tls_group`] with `lanes` meshes between the same `n` parties: one PKI, the lanes connected
/// one after the other (each party listens again for every lane). `out[i][l]` is party `i`'s
/// mesh of lane `l`. With `netem`, every pair of parties gets one relay for all its lanes,
/// started by [`Relay::start_shared`]: the lanes' connections between two parties share one
/// emulated link per direction, so the lanes together get the link's bandwidth once, as on one
/// network path (each dialer's roster points at its own relay toward each lower-numbered
/// party; rosters differ only in addresses, which the roster digest does not cover). Keep the
/// returned relays alive as long as the meshes. Each party's lanes share the loss of a peer, as
/// [`TlsMesh::connect_lanes`] describes.
///
/// # Example
///
/// ```
/// use coterie_net::{Mesh, MeshOptions, local::tls_lanes};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let (parties, _relays) = tls_lanes(2, 3, MeshOptions::default(), None).await.unwrap();
/// assert_eq!((parties.len(), parties[0].len()), (2, 3));
/// let mut tasks = Vec::new();
/// for lanes in parties {
///     tasks.push(tokio::spawn(async move {
///         let mut got = Vec::new();
///         for mut m in lanes {
///             let all: Vec<u8> = m.exchange_all(&(m.id() as u8)).await?;
///             got.push(all);
///             m.close().await?;
///         }
///         Ok::<_, coterie_net::Error>(got)
///     }));
/// }
/// for t in tasks {
///     assert_eq!(t.await.unwrap().unwrap(), vec![vec![0, 1]; 3]);
/// }
/// # });
/// ```
///
/// # Errors
/// As [`tls_group`].
pub async fn tls_lanes(
    n: usize,
    lanes: usize,
    opts: MeshOptions,
    netem: Option<LinkParams>,
) -> Result<(Vec<Vec<TlsMesh>>, Vec<Relay>)> {
    let pki = generate_pki(n)?;
    let roster = loopback_roster(&pki, false)?;
    let mut rosters = vec![roster.clone(); n];
    let mut relays = Vec::new();
    if let Some(p) = netem {
        // party i dials every j < i: one relay per such pair
        for (i, r) in rosters.iter_mut().enumerate() {
            for j in 0..i {
                let l = &roster.listen[j];
                let relay = Relay::start_shared("127.0.0.1:0", l, p)
                    .map_err(|e| Error::Config(format!("link emulator for {l}: {e}")))?;
                r.addresses[j] = relay.local_addr().to_string();
                relays.push(relay);
            }
        }
    }
    let mut out: Vec<Vec<TlsMesh>> = (0..n).map(|_| Vec::with_capacity(lanes)).collect();
    for _ in 0..lanes {
        let meshes = connect_each(&pki, &rosters, &opts).await?;
        for (i, m) in meshes.into_iter().enumerate() {
            out[i].push(m);
        }
    }
    for lanes in &out {
        TlsMesh::link_lanes(lanes);
    }
    Ok((out, relays))
}

/// Runs `f(mesh)` for every mesh of `meshes`, each party on a tokio task of its own (so that the
/// parties' protocol steps interleave as they would across processes), and returns the results
/// in party order. A panic in a party's task is raised again here, with its payload.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions, local::run_parties};
/// let meshes = InMemoryMesh::group(3, MeshOptions::default());
/// let ids = run_parties(meshes, |mesh| async move { mesh.id() * 10 }).await;
/// assert_eq!(ids, vec![0, 10, 20]);
/// # });
/// ```
pub async fn run_parties<M, T, F, Fut>(meshes: Vec<M>, mut f: F) -> Vec<T>
where
    F: FnMut(M) -> Fut,
    Fut: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let tasks: Vec<_> = meshes.into_iter().map(|m| tokio::spawn(f(m))).collect();
    let mut out = Vec::with_capacity(tasks.len());
    for t in tasks {
        match t.await {
            Ok(v) => out.push(v),
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => panic!("party task cancelled: {e}"),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Mesh;
    use std::time::Duration;

    /// Over TLS, an abort tells the peers which file failed but not where it lives; the
    /// aborting party keeps the whole text.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn abort_notices_carry_no_local_directories() {
        let (mut parties, _relays) = tls_group(2, MeshOptions::default(), None).await.unwrap();
        let mut p1 = parties.pop().unwrap();
        let mut p0 = parties.pop().unwrap();
        let reason = "store: /home/alice/coterie/p0/gates.bin: No space left on device";
        let wait = tokio::spawn(async move { p1.recv_bytes(0, 1).await.unwrap_err() });
        let own = p0.abort(reason).await;
        assert!(
            matches!(&own, Error::Aborted { party: 0, reason: r } if r == reason),
            "{own}"
        );
        match wait.await.unwrap() {
            Error::Aborted {
                party: 0,
                reason: r,
            } => {
                assert_eq!(r, "store: …/gates.bin: No space left on device")
            }
            e => panic!("party 1: {e}"),
        }
    }

    /// A peer lost on one lane is lost on every lane, everywhere: party 2's lane 1 goes away
    /// without a close; party 0 (waiting on lane 0 for party 1, who sends nothing) and party 1
    /// (waiting on lane 0 for party 0) both learn that party 2 was lost, instead of timing out
    /// or, once a peer drops its lanes, blaming that peer.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_peer_lost_on_one_lane_is_lost_on_all() {
        let opts = MeshOptions {
            timeout: Duration::from_secs(20),
            ..MeshOptions::default()
        };
        let (mut parties, _relays) = tls_lanes(3, 2, opts, None).await.unwrap();
        let mut p2 = parties.pop().unwrap();
        let mut p1 = parties.pop().unwrap();
        let mut p0 = parties.pop().unwrap();
        let t0 = Instant::now();
        let wait0 = tokio::spawn(async move {
            let e = p0[0].recv_bytes(1, 3).await.unwrap_err();
            (e, p0)
        });
        let wait1 = tokio::spawn(async move {
            let e = p1[0].recv_bytes(0, 3).await.unwrap_err();
            (e, p1)
        });
        drop(p2.pop()); // lane 1 only; party 2's lane 0 stays open
        for (who, h) in [(0, wait0), (1, wait1)] {
            let (e, mut lanes) = h.await.unwrap();
            assert!(
                matches!(e, Error::Disconnected { party: 2, .. }),
                "party {who} on lane 0: {e}"
            );
            // ... and lane 1 fails on it too, also toward a peer still connected there
            let e = lanes[1].recv_bytes(1 - who, 3).await.unwrap_err();
            assert!(
                matches!(e, Error::Disconnected { party: 2, .. }),
                "party {who} on lane 1: {e}"
            );
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the loss was not relayed"
        );
    }

    /// A party that aborts on one lane and then drops all its lanes has told every peer why, on
    /// every lane: party 0 aborts lane 1 and drops its three lanes at once; party 1, waiting on
    /// lane 0 and lane 2 for party 0, reads party 0's reason on both, never a bare close that
    /// would make party 0 look lost (which is what it read when an abort stayed on its lane).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_abort_on_one_lane_reaches_every_lane() {
        let opts = MeshOptions {
            timeout: Duration::from_secs(20),
            ..MeshOptions::default()
        };
        for round in 0..5 {
            let (mut parties, _relays) = tls_lanes(2, 3, opts.clone(), None).await.unwrap();
            let mut p1 = parties.pop().unwrap();
            let mut p0 = parties.pop().unwrap();
            let wait = tokio::spawn(async move {
                let e0 = p1[0].recv_bytes(0, 3).await.unwrap_err();
                let e2 = p1[2].recv_bytes(0, 3).await.unwrap_err();
                (e0, e2)
            });
            let reason = format!("round {round}: a check failed on lane 1");
            let own = p0[1].abort(&reason).await;
            assert!(matches!(&own, Error::Aborted { party: 0, .. }), "{own}");
            // the other lanes of party 0 report the same abort
            let e = p0[2].recv_bytes(1, 3).await.unwrap_err();
            assert!(
                matches!(&e, Error::Aborted { party: 0, reason: r } if *r == reason),
                "party 0 on lane 2: {e}"
            );
            drop(p0);
            let (e0, e2) = wait.await.unwrap();
            for (lane, e) in [(0, e0), (2, e2)] {
                assert!(
                    matches!(&e, Error::Aborted { party: 0, reason: r } if *r == reason),
                    "round {round}, party 1 on lane {lane}: {e}"
                );
            }
        }
    }

    /// The lanes of one pair share that pair's emulated link; different pairs do not share.
    /// Parties 1 and 2 each send 1 MB to party 0 on each of two lanes at once: 2 MB per pair at
    /// 40 Mbit/s is 0.4 s on one link per pair (0.2 s with a link per connection, 0.8 s with one
    /// link into party 0).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn lanes_share_one_link_per_pair() {
        let link = LinkParams::new(Duration::from_millis(2), 40.0);
        let (parties, relays) = tls_lanes(3, 2, MeshOptions::default(), Some(link))
            .await
            .unwrap();
        assert_eq!(relays.len(), 3);
        let start = std::sync::Arc::new(tokio::sync::Barrier::new(3));
        let mut hs = Vec::new();
        for lanes in parties {
            let start = start.clone();
            hs.push(tokio::spawn(async move {
                let mut lanes = lanes;
                start.wait().await;
                let t0 = Instant::now();
                let me = lanes[0].id();
                if me == 0 {
                    for m in lanes.iter_mut() {
                        for from in [1, 2] {
                            let b = m.recv_bytes(from, 7).await.unwrap();
                            assert_eq!(b.len(), 1 << 20);
                        }
                    }
                } else {
                    let data = vec![me as u8; 1 << 20];
                    for m in lanes.iter_mut() {
                        m.send_bytes(0, 7, &data).await.unwrap();
                    }
                }
                let t = t0.elapsed();
                for m in lanes {
                    m.close().await.unwrap();
                }
                t
            }));
        }
        let mut times = Vec::new();
        for h in hs {
            times.push(h.await.unwrap().as_secs_f64());
        }
        let one_link = 2.0 * 8.0 * (1u64 << 20) as f64 / 40e6;
        assert!(
            times[0] >= 0.9 * one_link && times[0] < 1.5 * one_link,
            "party 0 received in {:.3} s; one link per pair needs {one_link:.3} s",
            times[0]
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn group_with_and_without_relays_exchanges() {
        let link = LinkParams::new(Duration::from_millis(2), 0.0);
        for netem in [None, Some(link)] {
            let (g, relays) = tls_group(3, MeshOptions::default(), netem).await.unwrap();
            assert_eq!(relays.len(), if netem.is_some() { 3 } else { 0 });
            let mut hs = Vec::new();
            for mut m in g {
                hs.push(tokio::spawn(async move {
                    let v: Vec<u64> = m.exchange_all(&(m.id() as u64 * 7)).await.unwrap();
                    m.close().await.unwrap();
                    v
                }));
            }
            for h in hs {
                assert_eq!(h.await.unwrap(), vec![0, 7, 14]);
            }
        }
    }
}
