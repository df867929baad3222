//! The engine against plaintext: every operation, 2 to 8 parties, every ring, in memory and over
//! TLS; exhaustion; random bits; chunked openings.

use coterie_net::{InMemoryMesh, Mesh};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use super::{big_prime, opts, run_mem, run_with, tls};
use crate::*;

/// Every operation against plaintext: inputs from every party, linear combinations, constants,
/// products, random bits, openings and the MAC check.
async fn all_ops<R: Ring, M: Mesh + 'static>(ring: R, meshes: Vec<M>, seed: u64) {
    let n = meshes.len();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let dealer = InsecureDealer::insecure_new(ring.clone(), n, &mut rng).unwrap();
    let per = 6usize;
    let counts = Counts {
        triples: 2 * per,
        bits: 64,
        randoms: 4 * per + 65,
        masks_per_party: per,
    };
    let preps = dealer.deal(counts, &mut rng);
    // plaintext inputs
    let inputs: Vec<Vec<R::Elem>> = (0..n)
        .map(|_| {
            (0..per)
                .map(|_| ring.to_value(&ring.random(&mut rng)))
                .collect()
        })
        .collect();
    let c = ring.to_value(&ring.random(&mut rng));
    // expected: sum over parties of inputs, products of party 0 and party 1 inputs, etc.
    let mut sum = vec![ring.zero(); per];
    for inp in &inputs {
        for (s, x) in sum.iter_mut().zip(inp) {
            *s = ring.add(s, x);
        }
    }
    let prod: Vec<R::Elem> = (0..per)
        .map(|j| ring.mul(&inputs[0][j], &inputs[1][j]))
        .collect();
    // lin: c + 3*x0 - x1 ; affine: (x0*x1 + c) * x0
    let three = ring.embed_u64(3);
    let lin: Vec<R::Elem> = (0..per)
        .map(|j| {
            let t = ring.add(&c, &ring.mul(&three, &inputs[0][j]));
            ring.sub(&t, &inputs[1][j])
        })
        .collect();
    let deep: Vec<R::Elem> = (0..per)
        .map(|j| ring.mul(&ring.add(&prod[j], &c), &inputs[0][j]))
        .collect();
    let expect: Vec<R::Elem> = sum
        .iter()
        .chain(&prod)
        .chain(&lin)
        .chain(&deep)
        .map(|x| ring.to_value(x))
        .collect();
    let inputs2 = inputs.clone();
    let c2 = c.clone();
    let res = run_with(meshes, preps, move |mut e, mut mesh| {
        let inputs = inputs2.clone();
        let c = c2.clone();
        async move {
            let me = mesh.id();
            let n = mesh.n();
            let r = e.ring().clone();
            let mut xs = Vec::new();
            for (owner, inp) in inputs.iter().enumerate().take(n) {
                let vals = (owner == me).then_some(inp.as_slice());
                xs.push(e.input(&mut mesh, owner, vals, inp.len()).await?);
            }
            let per = xs[0].len();
            let sum: Vec<_> = (0..per)
                .map(|j| {
                    let mut acc = e.constant(&r.zero());
                    for x in &xs {
                        acc = e.add(&acc, &x[j]);
                    }
                    acc
                })
                .collect();
            let prod = e.mul(&mut mesh, &xs[0], &xs[1]).await?;
            let three = r.embed_u64(3);
            let lin: Vec<_> = (0..per)
                .map(|j| {
                    let t = e.lin_comb(&c, &[(three.clone(), &xs[0][j])]);
                    e.sub(&t, &xs[1][j])
                })
                .collect();
            let pc: Vec<_> = prod.iter().map(|p| e.add_const(p, &c)).collect();
            let deep = e.mul(&mut mesh, &pc, &xs[0]).await?;
            let all: Vec<_> = sum.into_iter().chain(prod).chain(lin).chain(deep).collect();
            let out = e.open(&mut mesh, &all).await?;
            // random bits: open them and check they are bits
            let bits = e.rand_bits(64)?;
            let neg = e.neg(&bits[0]);
            let z = e.add(&bits[0], &neg);
            let ob = e.open(&mut mesh, &bits).await?;
            let oz = e.open(&mut mesh, &[z]).await?;
            e.check(&mut mesh).await?;
            mesh.close().await?;
            Ok((out, ob, oz))
        }
    })
    .await;
    let mut first_bits = None;
    for r in res {
        let (out, ob, oz) = r.unwrap();
        assert_eq!(out, expect);
        assert!(
            ob.iter()
                .all(|b| *b == ring.zero() || *b == ring.embed_u64(1))
        );
        assert!(ob.iter().any(|b| *b == ring.zero()) && ob.iter().any(|b| *b == ring.embed_u64(1)));
        assert_eq!(oz, vec![ring.zero()]);
        match &first_bits {
            None => first_bits = Some(ob),
            Some(f) => assert_eq!(f, &ob),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_ops_z2k64_2_3_4_8() {
    for (i, n) in [2usize, 3, 4, 8].into_iter().enumerate() {
        all_ops(Z2k::spdz2k_64(), InMemoryMesh::group(n, opts()), i as u64).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_ops_z2k32_2_3_4_8() {
    for (i, n) in [2usize, 3, 4, 8].into_iter().enumerate() {
        all_ops(
            Z2k::spdz2k_32(),
            InMemoryMesh::group(n, opts()),
            10 + i as u64,
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_ops_fp61_2_3_4_8() {
    for (i, n) in [2usize, 3, 4, 8].into_iter().enumerate() {
        all_ops(
            Fp64::mersenne61(),
            InMemoryMesh::group(n, opts()),
            20 + i as u64,
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_ops_fp_big_2_3_4_8() {
    let sizes = [(2usize, 128u32), (3, 1024), (4, 4096), (8, 256)];
    for (i, (n, bits)) in sizes.into_iter().enumerate() {
        let ring = FpBig::new(big_prime(bits)).unwrap();
        all_ops(ring, InMemoryMesh::group(n, opts()), 30 + i as u64).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_ops_over_tls() {
    let meshes = tls::tls_group(3).await;
    all_ops(Z2k::spdz2k_64(), meshes, 40).await;
    let meshes = tls::tls_group(2).await;
    all_ops(FpBig::new(big_prime(256)).unwrap(), meshes, 41).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exhausted_preprocessing_is_a_clear_error() {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let dealer = InsecureDealer::insecure_new(Z2k::spdz2k_64(), 2, &mut rng).unwrap();
    let mut preps = dealer.deal(
        Counts {
            triples: 1,
            ..Counts::default()
        },
        &mut rng,
    );
    assert_eq!(preps[0].triples(1).unwrap().len(), 1);
    match preps[0].triples(1) {
        Err(Error::Exhausted {
            wanted, available, ..
        }) => assert_eq!((wanted, available), (1, 0)),
        other => panic!("{other:?}"),
    }
}

/// RandBit outputs are bits and uniform.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rand_bits_are_uniform_bits() {
    let count = 20_000usize;
    let mut rng = ChaCha20Rng::seed_from_u64(12);
    let ring = Z2k::spdz2k_64();
    let dealer = InsecureDealer::insecure_new(ring, 3, &mut rng).unwrap();
    let preps = dealer.deal(
        Counts {
            bits: count,
            randoms: count,
            ..Counts::default()
        },
        &mut rng,
    );
    let res = run_mem(preps, move |mut e, mut mesh| async move {
        let b = e.rand_bits(count)?;
        let o = e.open_checked(&mut mesh, &b).await?;
        mesh.close().await?;
        Ok(o)
    })
    .await;
    let o = res.into_iter().next().unwrap().unwrap();
    assert!(o.iter().all(|b| *b <= 1));
    let ones = o.iter().filter(|b| **b == 1).count() as f64;
    // binomial(20000, 1/2): sd ~ 70.7; allow 5 sd
    assert!((ones - count as f64 / 2.0).abs() < 354.0, "ones = {ones}");
    // pairs of consecutive bits: uniform over 4 patterns
    let mut pairs = [0usize; 4];
    for w in o.chunks_exact(2) {
        pairs[(w[0] * 2 + w[1]) as usize] += 1;
    }
    let exp = (count / 2) as f64 / 4.0;
    let chi2: f64 = pairs.iter().map(|&h| (h as f64 - exp).powi(2) / exp).sum();
    assert!(chi2 < 25.0, "chi2 = {chi2}");
}

/// A batch larger than one opening message is split and reassembled in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_opening_is_chunked() {
    let count = crate::engine::OPEN_CHUNK_BYTES / 16 + 1000;
    let mut rng = ChaCha20Rng::seed_from_u64(70);
    let dealer = InsecureDealer::insecure_new(Z2k::spdz2k_64(), 2, &mut rng).unwrap();
    let preps = dealer.deal(Counts::default(), &mut rng);
    let res = run_mem(preps, move |mut e, mut mesh| async move {
        let xs: Vec<_> = (0..count as u64)
            .map(|i| e.constant(&(i as u128 * 3)))
            .collect();
        let o = e.open_unmasked(&mut mesh, &xs).await?;
        e.check(&mut mesh).await?;
        let sent = mesh.stats().msgs_sent[1 - mesh.id()];
        mesh.close().await?;
        Ok((o, sent))
    })
    .await;
    for r in res {
        let (o, sent) = r.unwrap();
        assert_eq!(o.len(), count);
        assert!(o.iter().enumerate().all(|(i, v)| *v == i as u128 * 3));
        // two opening messages plus the four rounds of the MAC check
        assert_eq!(sent, 2 + 4);
    }
}

#[test]
fn streamed_digest_equals_the_digest_of_the_encoding() {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let r = Z2k::spdz2k_64();
    // empty, one piece, several pieces and a partial last piece
    for n in [0usize, 1, 4096, 4097, 10_000] {
        let xs: Vec<u128> = (0..n).map(|_| r.random(&mut rng)).collect();
        let want = crate::engine::digest("d", &r.encode(&xs));
        assert_eq!(crate::engine::digest_elems("d", &r, &xs), want, "n = {n}");
        assert_ne!(crate::engine::digest_elems("e", &r, &xs), want);
    }
    let f = Fp64::mersenne61();
    let ys: Vec<u64> = (0..5000).map(|_| f.random(&mut rng)).collect();
    assert_eq!(
        crate::engine::digest_elems("d", &f, &ys),
        crate::engine::digest("d", &f.encode(&ys))
    );
}
