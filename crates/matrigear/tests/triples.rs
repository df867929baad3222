//! Π_Triple end to end over the in-memory mesh (seed 002 §8 cases 16 and 17): the MAC key, scalar
//! triples, random values and matrix triples made by the MatriGear producer, every triple and MAC
//! relation checked on the opened material, for 2 and 3 parties on Toy-B; the material taken by
//! the unchanged coterie-spdz engine from the on-disk store, and a product of secret-shared
//! matrices by one matrix triple.

use coterie_math::bigint::BigInt;
use coterie_matrigear::ProtocolParams;
use coterie_matrigear::producer::MatriGearProducer;
use coterie_net::local::run_parties;
use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
use coterie_spdz::producer::produce_into_store;
use coterie_spdz::verify::verify_material;
use coterie_spdz::{BigElem, Engine, FpBig, Kind, Order, PrepStore, Producer, Ring, VecPrep};

fn opts() -> MeshOptions {
    MeshOptions {
        timeout: std::time::Duration::from_secs(60),
        ..MeshOptions::default()
    }
}

/// Every party's material for `order`, made with dealer keys and the real MAC-key proof.
async fn produce(n: usize, d: usize, order: Order) -> Vec<VecPrep<FpBig>> {
    let pp = ProtocolParams::insecure_toy_b(n, d).unwrap();
    let res = run_parties(InMemoryMesh::group(n, opts()), move |mut mesh| {
        let (pp, order) = (pp.clone(), order.clone());
        async move {
            let mut p = MatriGearProducer::insecure_setup_with_dealer(&mut mesh, pp, [3; 32])
                .await
                .map_err(|e| e.to_string())?;
            let out = p
                .produce(&mut mesh, &order)
                .await
                .map_err(|e| e.to_string())?;
            mesh.close().await.map_err(|e| e.to_string())?;
            Ok::<_, String>(out)
        }
    })
    .await;
    res.into_iter().map(|r| r.unwrap()).collect()
}

/// Case 16 (scalar triples) and 17 (matrix triples, d = 4, two batched per proof), plus random
/// values: `verify_material` opens every item and checks `c = a·b`, `C = A·B` and every MAC
/// relation `Σ m = α·Σ v` with `α = Σ 2α^(l)`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn triples_randoms_and_matrix_triples_hold_with_their_macs() {
    for n in [2usize, 3] {
        let order = Order::new()
            .with(Kind::Triples, 20)
            .with(Kind::Randoms, 9)
            .with(Kind::MatrixTriples(4), 3);
        let mut preps = produce(n, 4, order).await;
        assert_eq!(preps[0].triples.len(), 20);
        assert_eq!(preps[0].len_of(Kind::MatrixTriples(4)), 3);
        verify_material(&preps).unwrap();
        // a changed MAC share of one party is caught
        preps[n - 1].matrix_triples.get_mut(&4).unwrap()[2].c[5].m = BigElem(BigInt::from(1u32));
        assert!(verify_material(&preps).is_err());
    }
}

/// A kind MatriGear does not make, or matrices of another dimension, are refused before
/// anything is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsupported_orders_are_refused() {
    let pp = ProtocolParams::insecure_toy_b(2, 4).unwrap();
    let res = run_parties(InMemoryMesh::group(2, opts()), move |mut mesh| {
        let pp = pp.clone();
        async move {
            let mut p = MatriGearProducer::insecure_setup_with_dealer(&mut mesh, pp, [4; 32])
                .await
                .unwrap();
            assert!(!p.supports(Kind::Bits));
            assert!(!p.supports(Kind::MatrixTriples(2)));
            let r1 = p
                .produce(&mut mesh, &Order::new().with(Kind::Bits, 1))
                .await;
            let r2 = p
                .produce(&mut mesh, &Order::new().with(Kind::MatrixTriples(8), 1))
                .await;
            mesh.close().await.unwrap();
            (r1.is_err(), r2.is_err())
        }
    })
    .await;
    assert!(res.iter().all(|&(a, b)| a && b));
}

/// The producer fills each party's on-disk store; the unchanged engine takes random values
/// from it to authenticate the inputs and one matrix triple to multiply two secret-shared 4×4
/// matrices, MAC-checked; every party gets `A·B mod p`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_and_online_matrix_product() {
    let n = 2;
    let d = 4;
    let pp = ProtocolParams::insecure_toy_b(n, d).unwrap();
    let p = pp.p();
    let base = coterie_base::fsio::unique_temp_dir("coterie-matrigear-store");
    let b2 = base.clone();
    let res = run_parties(InMemoryMesh::group(n, opts()), move |mut mesh| {
        let (pp, base) = (pp.clone(), b2.clone());
        async move {
            let me = mesh.id();
            let mut prod = MatriGearProducer::insecure_setup_with_dealer(&mut mesh, pp, [5; 32])
                .await
                .unwrap();
            let dir = base.join(format!("p{me}"));
            let ring = prod.ring().clone();
            let store = PrepStore::create(&dir, ring.clone(), me, n, prod.mac_key_share()).unwrap();
            let order = Order::new()
                .with(Kind::Randoms, 2 * d * d)
                .with(Kind::MatrixTriples(d), 2);
            produce_into_store(&mut prod, &mut mesh, &store, &order, 64)
                .await
                .unwrap();
            assert_eq!(store.available(Kind::MatrixTriples(d)).unwrap(), 2);
            drop(store);
            let store = PrepStore::open(&dir, ring.clone(), me, n).unwrap();
            let mut e = Engine::new(store);
            // party 0 holds A and B in the clear; the others' plain shares are 0
            let vals: Vec<BigElem> = (0..2 * d * d)
                .map(|i| {
                    if me == 0 {
                        BigElem(BigInt::from(i * 31 + 7))
                    } else {
                        ring.zero()
                    }
                })
                .collect();
            let xy = e.authenticate_shares(&mut mesh, &vals).await.unwrap();
            let z = e
                .matmul(&mut mesh, d, &xy[..d * d], &xy[d * d..])
                .await
                .unwrap();
            let out = e.open_checked(&mut mesh, &z).await.unwrap();
            assert_eq!(e.prep_ref().available(Kind::MatrixTriples(d)).unwrap(), 1);
            mesh.close().await.unwrap();
            out
        }
    })
    .await;
    let a = |i: usize, j: usize| BigInt::from((i * d + j) * 31 + 7);
    let b = |i: usize, j: usize| BigInt::from((d * d + i * d + j) * 31 + 7);
    for out in &res {
        for i in 0..d {
            for j in 0..d {
                let mut want = BigInt::new();
                for k in 0..d {
                    want += a(i, k) * b(k, j);
                }
                want %= &p;
                assert_eq!(out[i * d + j].0, want);
            }
        }
    }
    std::fs::remove_dir_all(&base).unwrap();
}
