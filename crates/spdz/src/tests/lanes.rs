//! Lanes of the OT producer ([`OtLanes`]): several producers of one party over several meshes,
//! their material correct and authentic under one MAC key, in memory and over TLS into the store;
//! progress counted in one task; lanes that do not match are refused.

use std::sync::{Arc, Mutex};

use coterie_base::{Progress, ProgressEvent};
use coterie_net::{InMemoryMesh, Mesh};

use super::opts;
use super::ot_producer::{assert_one_task_of, verify_material};
use crate::producer::produce_into_store;
use crate::*;

/// Runs `lanes` lanes per party (lane 0 on `meshes[i][0]`) and produces `counts` through the
/// [`Producer`] interface.
pub(super) async fn produce_on_lanes<M: Mesh + 'static>(
    meshes: Vec<Vec<M>>,
    ring: Z2k,
    counts: Counts,
) -> Vec<Result<VecPrep<Z2k>>> {
    let mut tasks = Vec::new();
    for lanes in meshes {
        tasks.push(tokio::spawn(async move {
            let mut it = lanes.into_iter();
            let mut m0 = it.next().expect("lane 0");
            let p = OtPrep::setup(&mut m0, ring).await?;
            let mut ls = OtLanes::setup(p, it.collect()).await?;
            let order = Order::from_counts(counts, m0.n());
            let out = ls.produce(&mut m0, &order).await?;
            ls.close().await?;
            m0.close().await?;
            Ok(out)
        }));
    }
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

/// `lanes` in-memory meshes per party: `out[i][l]` is party `i`'s mesh of lane `l`.
pub(super) fn mem_lanes(n: usize, lanes: usize) -> Vec<Vec<InMemoryMesh>> {
    let mut out: Vec<Vec<InMemoryMesh>> = (0..n).map(|_| Vec::new()).collect();
    for _ in 0..lanes {
        for (i, m) in InMemoryMesh::group(n, opts()).into_iter().enumerate() {
            out[i].push(m);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lanes_make_correct_authentic_material_under_one_key() {
    // counts that do not divide evenly between the lanes
    let counts = Counts {
        triples: 11,
        bits: 7,
        randoms: 3,
        masks_per_party: 2,
    };
    for (n, lanes, ring) in [
        (2, 3, Z2k::spdz2k_64()),
        (3, 2, Z2k::spdz2k_32()),
        (2, 1, Z2k::spdz2k_64()),
    ] {
        let res = produce_on_lanes(mem_lanes(n, lanes), ring, counts).await;
        let preps: Vec<_> = res.into_iter().map(|r| r.unwrap()).collect();
        verify_material(ring, &preps, counts);
    }
}

/// With lanes, the progress still ends at `tools::ot_work_units` of the counts, in one task: the
/// other lanes' triples and bits are counted on lane 0's task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lanes_progress_counts_all_work() {
    let counts = Counts {
        triples: 5,
        bits: 4,
        randoms: 2,
        masks_per_party: 1,
    };
    let n = 3;
    let mut tasks = Vec::new();
    for lanes in mem_lanes(n, 2) {
        tasks.push(tokio::spawn(async move {
            let mut it = lanes.into_iter();
            let mut m0 = it.next().expect("lane 0");
            let p = OtPrep::setup(&mut m0, Z2k::spdz2k_32()).await?;
            let mut ls = OtLanes::setup(p, it.collect()).await?;
            let seen = Arc::new(Mutex::new(Vec::new()));
            let log = seen.clone();
            ls.set_progress(Progress::new(move |e: &ProgressEvent| {
                log.lock().unwrap().push(e.clone());
            }));
            ls.produce(&mut m0, &Order::from_counts(counts, n)).await?;
            ls.close().await?;
            m0.close().await?;
            let events = seen.lock().unwrap().clone();
            Ok::<_, Error>(events)
        }));
    }
    let want = crate::tools::ot_work_units(&Z2k::spdz2k_32(), counts, n);
    for t in tasks {
        assert_one_task_of(&t.await.unwrap().unwrap(), want);
    }
}

/// Over TLS (two lanes of `coterie_net::local::tls_lanes`) into the crash-safe store, through
/// [`produce_into_store`] in chunks: the store holds what was ordered, and the material read
/// back is correct and authentic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lanes_over_tls_fill_the_store() {
    let counts = Counts {
        triples: 9,
        bits: 3,
        randoms: 2,
        masks_per_party: 1,
    };
    let ring = Z2k::spdz2k_64();
    let base = coterie_base::fsio::unique_temp_dir("coterie-spdz-lanes");
    let (parties, _relays) = coterie_net::local::tls_lanes(2, 2, opts(), None)
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for lanes in parties {
        let dir = base.clone();
        tasks.push(tokio::spawn(async move {
            let mut it = lanes.into_iter();
            let mut m0 = it.next().unwrap();
            let (me, n) = (m0.id(), m0.n());
            let p = OtPrep::setup(&mut m0, ring).await?;
            let mut ls = OtLanes::setup(p, it.collect()).await?;
            let mut store = PrepStore::create(
                &dir.join(format!("party-{me}")),
                ring,
                me,
                n,
                ls.mac_key_share(),
            )?;
            let order = Order::from_counts(counts, n);
            produce_into_store(&mut ls, &mut m0, &store, &order, 4).await?;
            ls.close().await?;
            m0.close().await?;
            assert_eq!(store.available(Kind::Triples)?, counts.triples as u64);
            let mut all = VecPrep::new(ring, me, n, store.mac_key_share());
            all.triples = store.triples(counts.triples)?.into();
            all.bits = store.bits(counts.bits)?.into();
            all.randoms = store.randoms(counts.randoms)?.into();
            for owner in 0..n {
                all.masks[owner] = store.input_masks(owner, counts.masks_per_party)?.into();
            }
            Ok::<_, Error>(all)
        }));
    }
    let mut preps = Vec::new();
    for t in tasks {
        preps.push(t.await.unwrap().unwrap());
    }
    verify_material(ring, &preps, counts);
    std::fs::remove_dir_all(&base).unwrap();
}

/// Parties that set up different lane numbers on one mesh fail the setup: a party that reads its
/// peer's setup message refuses it naming the peer and the lanes (the other may see that peer
/// leave first, as with any setup that fails at one end).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mismatched_lane_numbers_are_refused() {
    let lane1 = InMemoryMesh::group(2, opts());
    let mut tasks = Vec::new();
    for (mut m0, mut m1) in InMemoryMesh::group(2, opts()).into_iter().zip(lane1) {
        tasks.push(tokio::spawn(async move {
            let p = OtPrep::setup(&mut m0, Z2k::spdz2k_32()).await.unwrap();
            let lane = 1 + m0.id() as u32;
            p.lane(&mut m1, lane).await.map(|_| ())
        }));
    }
    let mut named = 0;
    for (i, t) in tasks.into_iter().enumerate() {
        let e = t
            .await
            .unwrap()
            .expect_err("different lanes must be refused");
        match e {
            Error::Malformed { party, ref cause } => {
                assert_eq!(party, 1 - i, "party {i}: {e}");
                assert!(cause.contains("lane 2") && cause.contains("lane 1"), "{e}");
                named += 1;
            }
            Error::Net(_) => {}
            _ => panic!("party {i}: {e}"),
        }
    }
    assert!(named >= 1, "no party named the mismatch");
}

/// A producer of another setup (another MAC key share, and lane 0) is not taken as a lane.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_producer_is_not_a_lane() {
    let other = InMemoryMesh::group(2, opts());
    let mut tasks = Vec::new();
    for (mut m0, mut m1) in InMemoryMesh::group(2, opts()).into_iter().zip(other) {
        tasks.push(tokio::spawn(async move {
            let p = OtPrep::setup(&mut m0, Z2k::spdz2k_32()).await.unwrap();
            let q = OtPrep::setup(&mut m1, Z2k::spdz2k_32()).await.unwrap();
            assert_ne!(p.mac_key_share(), q.mac_key_share());
            // both setups are complete at both parties before either drops m1
            let _: Vec<u8> = m0.exchange_all(&0u8).await.unwrap();
            let e = match OtLanes::from_lanes(p, vec![(q, m1)]) {
                Ok(_) => None,
                Err(e) => Some(e.to_string()),
            };
            m0.close().await.unwrap();
            e
        }));
    }
    for t in tasks {
        let e = t
            .await
            .unwrap()
            .expect("a foreign producer must be refused");
        assert!(e.contains("not lane 1"), "{e}");
    }
}

/// A party that stops on an error of its own while its lanes are open tells its peer why on every
/// lane before it drops them, so the peer reports that reason and not a disconnection: in the
/// setup (a block size the extension refuses, found before anything is sent) and after it (a
/// store that cannot be created, while the peer already produces on every lane). The failing
/// party aborts lane 0 last, as `coterie party` does; without the lanes' aborts its dropped lanes
/// reach the peer first, as a lost peer on every linked mesh.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_party_that_fails_tells_every_lane_why() {
    let base = coterie_base::fsio::unique_temp_dir("coterie-spdz-lanes-abort");
    std::fs::create_dir_all(&base).unwrap();
    // a file where party 1's store directory should go
    let blocked = base.join("blocked");
    std::fs::write(&blocked, b"not a directory").unwrap();
    let counts = Counts {
        triples: 600,
        ..Counts::default()
    };
    let cases = [
        (
            OtExtension::SoftSpoken { k: 3 },
            base.join("fresh"),
            "must divide 128",
        ),
        (
            crate::ot_prep::DEFAULT_OT_EXTENSION,
            blocked.join("party-1"),
            "Not a directory",
        ),
    ];
    for (ext1, dir1, why) in cases {
        let (parties, _relays) = coterie_net::local::tls_lanes(2, 3, opts(), None)
            .await
            .unwrap();
        let mut tasks = Vec::new();
        for lanes in parties {
            let mut it = lanes.into_iter();
            let mut m0 = it.next().unwrap();
            let me = m0.id();
            let (ext, dir) = if me == 1 {
                (ext1, dir1.clone())
            } else {
                (
                    crate::ot_prep::DEFAULT_OT_EXTENSION,
                    base.join(format!("ok-{}", why.len())),
                )
            };
            let rest: Vec<_> = it.collect();
            tasks.push(tokio::spawn(async move {
                let r = crate::tools::produce_ot_lanes_to_store_with_progress(
                    &mut m0,
                    rest,
                    &dir,
                    Z2k::spdz2k_64(),
                    ext,
                    counts,
                    64,
                    Progress::none(),
                )
                .await;
                if let Err(e) = &r {
                    m0.abort(&e.to_string()).await;
                }
                r.map(|_| ())
            }));
        }
        let mut errs = Vec::new();
        for t in tasks {
            errs.push(t.await.unwrap().expect_err("party 1 fails, so both do"));
        }
        assert!(errs[1].to_string().contains(why), "party 1: {}", errs[1]);
        match &errs[0] {
            Error::Net(coterie_net::Error::Aborted { party: 1, reason }) => {
                assert!(reason.contains(why), "party 0: {}", errs[0])
            }
            e => panic!("party 0 should report party 1's reason ({why}), got: {e}"),
        }
    }
    std::fs::remove_dir_all(&base).unwrap();
}
