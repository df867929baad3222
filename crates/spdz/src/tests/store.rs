//! The engine on the on-disk store, OT preprocessing into stores, and the command-line
//! drivers.

use coterie_net::{InMemoryMesh, Mesh};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use super::{opts, run_mem};
use crate::*;

/// The engine runs on the on-disk store as its preprocessing source.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engine_on_disk_store() {
    let mut rng = ChaCha20Rng::seed_from_u64(13);
    let ring = Fp64::mersenne61();
    let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
    let mut preps = dealer.deal(
        Counts {
            triples: 3,
            masks_per_party: 3,
            ..Counts::default()
        },
        &mut rng,
    );
    let base = coterie_base::fsio::unique_temp_dir("coterie-spdz-engine-store");
    let mut stores = Vec::new();
    for (i, p) in preps.iter_mut().enumerate() {
        let dir = base.join(format!("p{i}"));
        let _ = std::fs::remove_dir_all(&dir);
        let s = PrepStore::create(&dir, ring, i, 2, p.mac_key_share()).unwrap();
        s.append(p).unwrap();
        stores.push(s);
    }
    let res = run_mem(stores, move |mut e, mut mesh| async move {
        let me = mesh.id();
        let v = [3u64, 4, 5];
        let x = e
            .input(&mut mesh, 0, (me == 0).then_some(&v[..]), 3)
            .await?;
        let y = e
            .input(&mut mesh, 1, (me == 1).then_some(&v[..]), 3)
            .await?;
        let z = e.mul(&mut mesh, &x, &y).await?;
        let o = e.open_checked(&mut mesh, &z).await?;
        // the triples are used up, durably
        let again = e.mul(&mut mesh, &x[..1], &y[..1]).await;
        mesh.close().await?;
        Ok((o, again.is_err()))
    })
    .await;
    for r in res {
        assert_eq!(r.unwrap(), (vec![9, 16, 25], true));
    }
    let _ = std::fs::remove_dir_all(&base);
}

/// OT preprocessing straight into the on-disk stores, then the engine runs on them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ot_preprocessing_into_stores_then_online() {
    use crate::tools::{party_dir, produce_ot_to_store};
    let base = coterie_base::fsio::unique_temp_dir("coterie-spdz-ot-store");
    let counts = Counts {
        triples: 6,
        bits: 2,
        randoms: 6,
        masks_per_party: 6,
    };
    let mut tasks = Vec::new();
    for mut mesh in InMemoryMesh::group(2, opts()) {
        let dir = party_dir(&base, mesh.id());
        tasks.push(tokio::spawn(async move {
            let store = produce_ot_to_store(&mut mesh, &dir, Z2k::spdz2k_64(), counts, 4).await?;
            assert_eq!(store.available(Kind::Triples)?, 6);
            let mut e = Engine::new(store);
            let me = mesh.id();
            let v = [7u128, 8, 9];
            let x = e
                .input(&mut mesh, 0, (me == 0).then_some(&v[..]), 3)
                .await?;
            let y = e
                .input(&mut mesh, 1, (me == 1).then_some(&v[..]), 3)
                .await?;
            let z = e.mul(&mut mesh, &x, &y).await?;
            let b = e.rand_bits(2)?;
            let mut all = z;
            all.extend(b);
            let o = e.open_checked(&mut mesh, &all).await?;
            mesh.close().await?;
            Ok::<_, Error>(o)
        }));
    }
    for t in tasks {
        let o = t.await.unwrap().unwrap();
        assert_eq!(&o[..3], &[49, 64, 81]);
        assert!(o[3] <= 1 && o[4] <= 1);
    }
    let _ = std::fs::remove_dir_all(&base);
}

/// The CLI drivers: insecure dealer into stores, then the online demo from the stores.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_tools_deal_then_demo() {
    use crate::tools::{insecure_deal_counts_to_stores, online_product_demo, party_dir};
    let base = coterie_base::fsio::unique_temp_dir("coterie-spdz-cli");
    let counts = Counts {
        triples: 4,
        randoms: 2,
        masks_per_party: 2,
        bits: 0,
    };
    insecure_deal_counts_to_stores(&base, Z2k::spdz2k_64(), 3, counts, 3).unwrap();
    for round in 0..2 {
        let mut tasks = Vec::new();
        for mut mesh in InMemoryMesh::group(3, opts()) {
            let dir = party_dir(&base, mesh.id());
            tasks.push(tokio::spawn(async move {
                let value = mesh.id() as u64 + 2;
                let v = online_product_demo(&mut mesh, &dir, value).await?;
                mesh.close().await?;
                Ok::<_, Error>(v)
            }));
        }
        for t in tasks {
            assert_eq!(t.await.unwrap().unwrap(), 24, "round {round}");
        }
    }
    // the third run finds the material used up
    let mut tasks = Vec::new();
    for mut mesh in InMemoryMesh::group(3, opts()) {
        let dir = party_dir(&base, mesh.id());
        tasks.push(tokio::spawn(async move {
            online_product_demo(&mut mesh, &dir, 1).await
        }));
    }
    for t in tasks {
        assert!(t.await.unwrap().is_err());
    }
    let _ = std::fs::remove_dir_all(&base);
}
