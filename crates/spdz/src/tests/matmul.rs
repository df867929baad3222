//! The online product of secret-shared matrices by one matrix triple ([`Engine::matmul`]):
//! against the plaintext product and against the naive product by `d³` scalar Beaver
//! multiplications, over `F_p` (word and big primes) and `Z_{2^k}`, 2 and 3 parties; a party that
//! shifts its share of `X − A` is caught by the MAC check.

use coterie_net::tamper::TamperMesh;
use coterie_net::{InMemoryMesh, Mesh};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use super::{big_prime, opts, run_mem, run_with};
use crate::*;

/// Deals `d×d` matrix triples, scalar triples and input masks to `n` parties, inputs two
/// matrices of party 0 and multiplies them both ways; returns `(matmul, naive)` as opened.
async fn both_ways<R: Ring>(ring: R, n: usize, d: usize) -> (Vec<R::Elem>, Vec<R::Elem>, Vec<u64>) {
    let mut rng = ChaCha20Rng::seed_from_u64(d as u64 + 17);
    let dealer = InsecureDealer::insecure_new(ring.clone(), n, &mut rng).unwrap();
    let mut preps = dealer.empty();
    let order = Order::new()
        .with(Kind::MatrixTriples(d), 1)
        .with(Kind::Triples, d * d * d)
        .with(Kind::Randoms, 4 * d * d)
        .with(Kind::InputMasks(0), 2 * d * d);
    dealer.fill_order(&mut preps, &order, &mut rng).unwrap();
    let vals: Vec<u64> = (0..2 * d * d)
        .map(|i| (i as u64 * 7919 + 3) % 1000)
        .collect();
    let v2 = vals.clone();
    let res = run_mem(preps, move |mut e, mut mesh| {
        let vals = v2.clone();
        async move {
            let me = mesh.id();
            let r = e.ring().clone();
            let input: Vec<R::Elem> = vals.iter().map(|&v| r.embed_u64(v)).collect();
            let xy = e
                .input(&mut mesh, 0, (me == 0).then_some(&input[..]), 2 * d * d)
                .await?;
            let (x, y) = xy.split_at(d * d);
            let z = e.matmul(&mut mesh, d, x, y).await?;
            // naive: d³ scalar products, summed
            let mut xs = Vec::new();
            let mut ys = Vec::new();
            for i in 0..d {
                for j in 0..d {
                    for k in 0..d {
                        xs.push(x[i * d + k].clone());
                        ys.push(y[k * d + j].clone());
                    }
                }
            }
            let prods = e.mul(&mut mesh, &xs, &ys).await?;
            let naive: Vec<_> = prods
                .chunks(d)
                .map(|c| c.iter().skip(1).fold(c[0].clone(), |a, b| e.add(&a, b)))
                .collect();
            let a = e.open(&mut mesh, &z).await?;
            let b = e.open(&mut mesh, &naive).await?;
            e.check(&mut mesh).await?;
            mesh.close().await?;
            Ok((a, b))
        }
    })
    .await;
    let mut out = None;
    for (i, r) in res.into_iter().enumerate() {
        let (a, b) = r.unwrap_or_else(|e| panic!("party {i} (n = {n}, d = {d}): {e}"));
        if let Some((a0, b0)) = &out {
            assert_eq!((a0, b0), (&a, &b), "parties disagree");
        }
        out = Some((a, b));
    }
    let (a, b) = out.unwrap();
    (a, b, vals)
}

fn plain_product(vals: &[u64], d: usize) -> Vec<u64> {
    let (x, y) = vals.split_at(d * d);
    let mut c = vec![0u64; d * d];
    for i in 0..d {
        for j in 0..d {
            c[i * d + j] = (0..d).map(|k| x[i * d + k] * y[k * d + j]).sum();
        }
    }
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matmul_matches_plaintext_and_naive_product() {
    for (n, d) in [(2, 1), (2, 3), (3, 4)] {
        let ring = FpBig::new(big_prime(128)).unwrap();
        let (a, b, vals) = both_ways(ring.clone(), n, d).await;
        let want: Vec<_> = plain_product(&vals, d)
            .iter()
            .map(|&v| ring.embed_u64(v))
            .collect();
        assert_eq!(a, want);
        assert_eq!(b, want);
    }
    let ring = Fp64::mersenne61();
    let (a, b, vals) = both_ways(ring, 3, 3).await;
    assert_eq!(a, plain_product(&vals, 3));
    assert_eq!(a, b);
    let ring = Z2k::spdz2k_64();
    let (a, b, vals) = both_ways(ring, 2, 2).await;
    let want: Vec<u128> = plain_product(&vals, 2).iter().map(|&v| v as u128).collect();
    assert_eq!(a, want);
    assert_eq!(a, b);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matmul_refuses_bad_shapes_and_missing_triples() {
    let ring = Fp64::mersenne61();
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
    let mut preps = dealer.empty();
    dealer
        .fill_order(
            &mut preps,
            &Order::new().with(Kind::MatrixTriples(2), 1),
            &mut rng,
        )
        .unwrap();
    let res = run_mem(preps, move |mut e, mut mesh| async move {
        let s = Share { v: 0u64, m: 0u64 };
        let four = vec![s.clone(); 4];
        assert!(matches!(
            e.matmul(&mut mesh, 2, &four, &four[..3]).await,
            Err(Error::Invalid(_))
        ));
        assert!(matches!(
            e.matmul(&mut mesh, 0, &[], &[]).await,
            Err(Error::Invalid(_))
        ));
        let nine = vec![s; 9];
        assert!(matches!(
            e.matmul(&mut mesh, 3, &nine, &nine).await,
            Err(Error::Unsupported(_) | Error::Exhausted { .. })
        ));
        mesh.close().await?;
        Ok(())
    })
    .await;
    for r in res {
        r.unwrap();
    }
}

/// Party 1 adds 1 to its share of the first entry of `X − A` on the wire and uses the same
/// share in its own sum, so all parties compute the same wrong product: the MAC check must
/// abort at every honest party.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shifted_share_in_matmul_is_caught_by_the_mac_check() {
    let ring = FpBig::new(big_prime(128)).unwrap();
    let d = 3;
    let mut rng = ChaCha20Rng::seed_from_u64(77);
    let dealer = InsecureDealer::insecure_new(ring.clone(), 3, &mut rng).unwrap();
    let mut preps = dealer.empty();
    let order = Order::new()
        .with(Kind::MatrixTriples(d), 1)
        .with(Kind::InputMasks(0), 2 * d * d);
    dealer.fill_order(&mut preps, &order, &mut rng).unwrap();
    let meshes: Vec<TamperMesh<InMemoryMesh>> = InMemoryMesh::group(3, opts())
        .into_iter()
        .map(TamperMesh::new)
        .collect();
    let res = run_with(meshes, preps, move |mut e, mut mesh| async move {
        let me = mesh.id();
        let r = e.ring().clone();
        let input: Vec<_> = (0..2 * d * d).map(|i| r.embed_u64(i as u64 + 1)).collect();
        let xy = e
            .input(&mut mesh, 0, (me == 0).then_some(&input[..]), 2 * d * d)
            .await?;
        let (mut x, y) = (xy[..d * d].to_vec(), xy[d * d..].to_vec());
        if me == 1 {
            // the cheater's share of X (hence of X − A) is shifted by 1, consistently
            x[0].v = r.add(&x[0].v, &r.embed_u64(1));
        }
        let z = e.matmul(&mut mesh, d, &x, &y).await?;
        e.open(&mut mesh, &z).await?;
        e.check(&mut mesh).await?;
        let _: Vec<u8> = mesh.exchange_all_tagged(0x5D2F_0002, &0u8).await?;
        mesh.close().await?;
        Ok(())
    })
    .await;
    for (i, r) in res.iter().enumerate() {
        match r {
            Err(e) if i != 1 => assert!(e.to_string().contains("mac-check"), "party {i}: {e}"),
            Err(_) => {}
            Ok(()) => panic!("party {i} accepted a shifted matrix share"),
        }
    }
}
