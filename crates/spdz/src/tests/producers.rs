//! Producers and the authentication step: the `Producer` trait over the insecure seeded dealer
//! and the OT producer, orders with per-owner counts and matrix triples, `produce_into_store`,
//! `Authenticator`s (COPE and masking), and the material checks of `verify`.

use coterie_net::local::run_parties;
use coterie_net::{InMemoryMesh, Mesh};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use super::{opts, run_mem};
use crate::producer::produce_into_store;
use crate::verify::{verify_material, verify_shares};
use crate::*;

/// Runs `producer_of(mesh)` then `Producer::produce(order)` at every party.
async fn produce_all<R, P, F, Fut>(
    n: usize,
    order: Order,
    producer_of: F,
) -> Vec<Result<VecPrep<R>>>
where
    R: Ring,
    P: Producer<R> + 'static,
    F: Fn(InMemoryMesh) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Result<(P, InMemoryMesh)>> + Send,
{
    run_parties(InMemoryMesh::group(n, opts()), |mesh| {
        let (f, order) = (producer_of.clone(), order.clone());
        async move {
            let (mut p, mut mesh) = f(mesh).await?;
            let out = p.produce(&mut mesh, &order).await?;
            mesh.close().await?;
            Ok(out)
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeded_dealer_produces_every_kind_consistently() {
    let order = Order::new()
        .with(Kind::Triples, 3)
        .with(Kind::Bits, 4)
        .with(Kind::Randoms, 2)
        .with(Kind::InputMasks(0), 2)
        .with(Kind::InputMasks(2), 1)
        .with(Kind::MatrixTriples(2), 2)
        .with(Kind::MatrixTriples(3), 1);
    let preps: Vec<VecPrep<Fp64>> = produce_all(3, order.clone(), |mesh| async move {
        let p = InsecureSeededDealer::insecure_from_seed(Fp64::mersenne61(), &mesh, [4; 32])?;
        Ok((p, mesh))
    })
    .await
    .into_iter()
    .map(|r| r.unwrap())
    .collect();
    verify_material(&preps).unwrap();
    for p in &preps {
        for (k, c) in order.items() {
            assert_eq!(p.len_of(k), c, "{k}");
        }
        assert_eq!(p.len_of(Kind::InputMasks(1)), 0);
    }
    // another seed gives other material (and the check catches mixing them)
    let other: Vec<VecPrep<Fp64>> = produce_all(3, order, |mesh| async move {
        let p = InsecureSeededDealer::insecure_from_seed(Fp64::mersenne61(), &mesh, [5; 32])?;
        Ok((p, mesh))
    })
    .await
    .into_iter()
    .map(|r| r.unwrap())
    .collect();
    assert_ne!(preps[0].mac_key_share(), other[0].mac_key_share());
    let mut mixed = other;
    mixed[1] = preps.into_iter().nth(1).unwrap();
    assert!(matches!(
        verify_material(&mixed),
        Err(Error::MaterialCheck { .. })
    ));
}

/// `produce_into_store` drives a producer in chunks; the engine then consumes matrix triples
/// and triples from the stores, and a matrix triple opens to `C = A·B`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn producer_into_stores_then_matrix_triples_from_the_store() {
    let base = coterie_base::fsio::unique_temp_dir("coterie-spdz-prod");
    let ring = Z2k::spdz2k_32();
    let order = Order::new()
        .with(Kind::Triples, 7)
        .with(Kind::Randoms, 5)
        .with(Kind::MatrixTriples(3), 5);
    let mut tasks = Vec::new();
    for mut mesh in InMemoryMesh::group(2, opts()) {
        let (dir, order) = (tools::party_dir(&base, mesh.id()), order.clone());
        tasks.push(tokio::spawn(async move {
            let mut p = InsecureSeededDealer::insecure_from_seed(ring, &mesh, [8; 32])?;
            let store = PrepStore::create(&dir, ring, p.party(), 2, p.mac_key_share())?;
            produce_into_store(&mut p, &mut mesh, &store, &order, 2).await?;
            // a producer key other than the store's is refused
            let mut q = InsecureSeededDealer::insecure_from_seed(ring, &mesh, [9; 32])?;
            let refused = produce_into_store(&mut q, &mut mesh, &store, &order, 2).await;
            assert!(matches!(refused, Err(Error::Store(_))));
            mesh.close().await?;
            Ok::<_, Error>(dir)
        }));
    }
    let mut dirs = Vec::new();
    for t in tasks {
        dirs.push(t.await.unwrap().unwrap());
    }
    let mut stores: Vec<PrepStore<Z2k>> = dirs
        .iter()
        .enumerate()
        .map(|(i, d)| PrepStore::open(d, ring, i, 2).unwrap())
        .collect();
    for s in &stores {
        assert_eq!(s.available(Kind::Triples).unwrap(), 7);
        assert_eq!(s.available(Kind::MatrixTriples(3)).unwrap(), 5);
    }
    let mut preps: Vec<VecPrep<Z2k>> = stores
        .iter_mut()
        .map(|s| {
            let mut p = VecPrep::new(ring, s.party(), 2, s.mac_key_share());
            p.matrix_triples
                .insert(3, s.matrix_triples(3, 2).unwrap().into());
            p.triples.extend(s.triples(7).unwrap());
            p
        })
        .collect();
    verify_material(&preps).unwrap();
    for s in &stores {
        assert_eq!(s.available(Kind::MatrixTriples(3)).unwrap(), 3);
    }
    // a tampered matrix triple is caught
    preps[1].matrix_triples.get_mut(&3).unwrap()[1].c[4].v ^= 1;
    match verify_material(&preps) {
        Err(Error::MaterialCheck { kind, item, .. }) => {
            assert_eq!((kind.as_str(), item), ("matrix-triples-3", 1))
        }
        other => panic!("{other:?}"),
    }
    drop(stores);
    std::fs::remove_dir_all(&base).unwrap();
}

/// `OtPrep` as a `Producer`: per-owner mask counts, and kinds it cannot make are refused
/// before anything is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ot_producer_takes_orders_and_refuses_matrix_triples() {
    let order = Order::new()
        .with(Kind::Triples, 2)
        .with(Kind::Bits, 1)
        .with(Kind::InputMasks(0), 3)
        .with(Kind::InputMasks(2), 1);
    let mut tasks = Vec::new();
    for mut mesh in InMemoryMesh::group(3, opts()) {
        let order = order.clone();
        tasks.push(tokio::spawn(async move {
            let mut p = OtPrep::setup(&mut mesh, Z2k::spdz2k_32()).await?;
            let bad = order.clone().with(Kind::MatrixTriples(2), 1);
            let refused = Producer::produce(&mut p, &mut mesh, &bad).await;
            assert!(matches!(refused, Err(Error::Unsupported(_))));
            assert!(!p.supports(Kind::MatrixTriples(2)));
            let out = Producer::produce(&mut p, &mut mesh, &order).await?;
            mesh.close().await?;
            Ok::<_, Error>(out)
        }));
    }
    let mut preps = Vec::new();
    for t in tasks {
        preps.push(t.await.unwrap().unwrap());
    }
    verify_material(&preps).unwrap();
    for p in &preps {
        assert_eq!(
            (0..3)
                .map(|o| p.len_of(Kind::InputMasks(o)))
                .collect::<Vec<_>>(),
            [3, 0, 1]
        );
        assert_eq!((p.len_of(Kind::Triples), p.len_of(Kind::Bits)), (2, 1));
    }
}

/// Authenticates shares made elsewhere through any `Authenticator`.
async fn authenticate_with<R: Ring, A: Authenticator<R>, M: Mesh>(
    a: &mut A,
    mesh: &mut M,
    xs: &[R::Elem],
) -> Result<Vec<Share<R::Elem>>> {
    a.authenticate(mesh, xs).await
}

/// The COPE authentication of `OtPrep` for shares another producer made: the MACs hold under
/// the producer's key and the values are the sums of the inputs; out-of-range shares are
/// refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ot_authenticates_shares_of_other_producers() {
    let ring = Z2k::spdz2k_64();
    let mut rng = ChaCha20Rng::seed_from_u64(77);
    let n = 3;
    let count = 20;
    let inputs: Vec<Vec<u128>> = (0..n)
        .map(|_| (0..count).map(|_| ring.random(&mut rng)).collect())
        .collect();
    let mut tasks = Vec::new();
    for mut mesh in InMemoryMesh::group(n, opts()) {
        let mine = inputs[mesh.id()].clone();
        tasks.push(tokio::spawn(async move {
            let mut p = OtPrep::setup(&mut mesh, ring).await?;
            let shares = authenticate_with(&mut p, &mut mesh, &mine).await?;
            mesh.close().await?;
            Ok::<_, Error>((shares, Authenticator::mac_key_share(&p)))
        }));
    }
    let mut per_party = Vec::new();
    let mut alpha = 0u128;
    for t in tasks {
        let (s, k) = t.await.unwrap().unwrap();
        per_party.push(s);
        alpha = ring.add(&alpha, &k);
    }
    let opened = verify_shares(&ring, &alpha, &per_party).unwrap();
    for (j, v) in opened.iter().enumerate() {
        let want = (0..n).fold(0u128, |a, i| ring.add(&a, &inputs[i][j]));
        assert_eq!(*v, ring.to_value(&want));
    }
    // one wrong MAC is named
    per_party[2][7].m ^= 1 << 9;
    match verify_shares(&ring, &alpha, &per_party) {
        Err(Error::MaterialCheck { item, .. }) => assert_eq!(item, 7),
        other => panic!("{other:?}"),
    }
    // out of Z_2^{k+s}: refused locally (spdz2k_32 has k + s = 96)
    let mut tasks = Vec::new();
    for mut mesh in InMemoryMesh::group(2, opts()) {
        tasks.push(tokio::spawn(async move {
            let mut p = OtPrep::setup(&mut mesh, Z2k::spdz2k_32()).await?;
            let r = p.authenticate(&mut mesh, &[1u128 << 100]).await;
            mesh.close().await?;
            Ok::<_, Error>(r)
        }));
    }
    for t in tasks {
        assert!(matches!(t.await.unwrap().unwrap(), Err(Error::Invalid(_))));
    }
}

/// The engine's masking authentication over Z_2^k and F_p: authenticated shares multiply and
/// open correctly, and the MAC check passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engine_authenticates_plain_shares_by_masking() {
    async fn run<R: Ring>(ring: R, seed: u64) {
        let n = 3;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let dealer = InsecureDealer::insecure_new(ring.clone(), n, &mut rng).unwrap();
        let counts = Counts {
            triples: 2,
            randoms: 8,
            ..Counts::default()
        };
        let preps = dealer.deal(counts, &mut rng);
        // plain additive shares of (3, 4) and (5, 6)
        let shares: Vec<Vec<R::Elem>> = (0..n)
            .map(|i| {
                (0..4)
                    .map(|j| ring.embed_u64(if i == 0 { 3 + j } else { 0 }))
                    .collect()
            })
            .collect();
        let res = run_mem(preps, move |mut e, mut mesh| {
            let mine = shares[mesh.id()].clone();
            async move {
                let x = authenticate_with(&mut e, &mut mesh, &mine).await?;
                let z = e.mul(&mut mesh, &x[..2], &x[2..]).await?;
                let out = e.open_checked(&mut mesh, &z).await?;
                mesh.close().await?;
                Ok(out)
            }
        })
        .await;
        for r in res {
            assert_eq!(r.unwrap(), [ring.embed_u64(15), ring.embed_u64(24)]);
        }
    }
    run(Z2k::spdz2k_64(), 1).await;
    run(Fp64::mersenne61(), 2).await;
    run(FpBig::new(super::big_prime(521)).unwrap(), 3).await;
}
