//! Multi-party tests of the online engine against plaintext, over the in-memory mesh and TLS,
//! cheating tests and statistical tests.

use std::future::Future;
use std::time::Duration;

use coterie_math::bigint::BigInt;
use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use crate::engine::Cheat;
use crate::prep::{DowncastPrep, downcast};
use crate::*;

fn opts() -> MeshOptions {
    MeshOptions {
        timeout: Duration::from_secs(20),
        ..MeshOptions::default()
    }
}

/// Runs `f(engine, mesh)` for every party over an in-memory mesh; returns the per-party results.
pub(crate) async fn run_mem<R, P, T, F, Fut>(preps: Vec<P>, f: F) -> Vec<Result<T>>
where
    R: Ring,
    P: Preprocessing<R> + 'static,
    T: Send + 'static,
    F: Fn(Engine<R, P>, InMemoryMesh) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<T>> + Send + 'static,
{
    let meshes = InMemoryMesh::group(preps.len(), opts());
    run_with(meshes, preps, f).await
}

pub(crate) async fn run_with<R, P, T, F, Fut, M>(
    meshes: Vec<M>,
    preps: Vec<P>,
    f: F,
) -> Vec<Result<T>>
where
    R: Ring,
    P: Preprocessing<R> + 'static,
    T: Send + 'static,
    M: Mesh + 'static,
    F: Fn(Engine<R, P>, M) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<T>> + Send + 'static,
{
    let mut tasks = Vec::new();
    for (mesh, prep) in meshes.into_iter().zip(preps) {
        let f = f.clone();
        tasks.push(tokio::spawn(
            async move { f(Engine::new(prep), mesh).await },
        ));
    }
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.expect("party task panicked"));
    }
    out
}

/// Every operation against plaintext: inputs from every party, linear combinations, constants,
/// products, random bits, openings and the MAC check.
async fn all_ops<R: Ring, M: Mesh + 'static>(ring: R, meshes: Vec<M>, seed: u64) {
    let n = meshes.len();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let dealer = InsecureDealer::new_insecure(ring.clone(), n, &mut rng).unwrap();
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

fn big_prime(bits: u32) -> BigInt {
    // the next prime above 2^(bits-1) + 12345
    let mut x = BigInt::from(1);
    x <<= bits - 1;
    x += 12345;
    x.next_prime()
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

pub(crate) mod tls {
    use coterie_net::certs::{free_loopback_addresses, generate_pki};
    use coterie_net::{Identity, Roster, TlsMesh};

    /// Connects `n` parties of a fresh PKI over loopback TLS, in this process.
    pub async fn tls_group(n: usize) -> Vec<TlsMesh> {
        let pki = generate_pki(n).unwrap();
        let addrs = free_loopback_addresses(n).unwrap();
        let cert = |pem: &str| {
            Identity::from_pem(pem, &pki.ca.key_pem)
                .map(|i| i.chain[0].clone())
                .unwrap()
        };
        let roster = Roster {
            addresses: addrs.clone(),
            listen: addrs,
            certs: vec![None; n],
            ca: Some(cert(&pki.ca.cert_pem)),
            keys: vec![None; n],
            roles: Vec::new(),
        };
        let mut hs = Vec::new();
        for i in 0..n {
            let r = roster.clone();
            let id = Identity::from_pem(&pki.parties[i].cert_pem, &pki.parties[i].key_pem).unwrap();
            hs.push(tokio::spawn(async move {
                TlsMesh::connect(&r, i, id, super::opts()).await
            }));
        }
        let mut out = Vec::new();
        for h in hs {
            out.push(h.await.unwrap().unwrap());
        }
        out
    }
}

// ----- cheating -----

/// Runs a 3-party Beaver multiplication + opening + MAC check where party 1 cheats as `cheat`
/// says; returns every party's result.
async fn cheating_run<R: Ring>(ring: R, cheat: Cheat) -> Vec<Result<()>> {
    let mut rng = ChaCha20Rng::seed_from_u64(99);
    let dealer = InsecureDealer::new_insecure(ring, 3, &mut rng).unwrap();
    let counts = Counts {
        triples: 4,
        bits: 0,
        randoms: 8,
        masks_per_party: 4,
    };
    let preps = dealer.deal(counts, &mut rng);
    run_mem(preps, move |mut e, mut mesh| {
        let cheat = cheat.clone();
        async move {
            let me = mesh.id();
            let r = e.ring().clone();
            let vals: Vec<_> = (0..4).map(|i| r.embed_u64(i + 5)).collect();
            let x = e
                .input(&mut mesh, 0, (me == 0).then_some(&vals[..]), 4)
                .await?;
            let y = e
                .input(&mut mesh, 2, (me == 2).then_some(&vals[..]), 4)
                .await?;
            if me == 1 {
                e.cheat = cheat;
            }
            let z = e.mul(&mut mesh, &x, &y).await?;
            e.open(&mut mesh, &z).await?;
            e.check(&mut mesh).await?;
            mesh.close().await?;
            Ok(())
        }
    })
    .await
}

fn assert_honest_caught(res: &[Result<()>], check: &str, party: Option<usize>) {
    for (i, r) in res.iter().enumerate() {
        if i == 1 {
            assert!(r.is_err(), "the cheater's run must end in an abort too");
            continue;
        }
        match r {
            Err(e) => {
                // an honest party either detected it itself (naming the check) or was told by
                // the abort of another honest party (whose message names the check)
                let named = e.check() == Some(check) || e.to_string().contains(check);
                assert!(named, "party {i}: {e} does not name {check}");
                if let (Some(p), Some(c)) = (party, e.check())
                    && c == check
                {
                    match e {
                        Error::CommitmentMismatch { party: q, .. } => assert_eq!(*q, p),
                        Error::InconsistentBroadcast { party: q, .. } => assert_eq!(*q, p),
                        _ => {}
                    }
                }
            }
            Ok(()) => panic!("party {i} accepted a cheat"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cheat_share_error_is_caught() {
    for ring_case in 0..2 {
        let cheat = Cheat {
            share_err: Some(1),
            ..Cheat::default()
        };
        let res = if ring_case == 0 {
            cheating_run(Z2k::spdz2k_64(), cheat).await
        } else {
            cheating_run(Fp64::mersenne61(), cheat).await
        };
        assert_honest_caught(&res, "mac-check", None);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cheat_mac_share_error_is_caught() {
    for ring_case in 0..2 {
        let cheat = Cheat {
            mac_err: Some(1 << 40),
            ..Cheat::default()
        };
        let res = if ring_case == 0 {
            cheating_run(Z2k::spdz2k_32(), cheat).await
        } else {
            cheating_run(FpBig::new(big_prime(128)).unwrap(), cheat).await
        };
        assert_honest_caught(&res, "mac-check", None);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cheat_commitment_opening_is_caught() {
    let cheat = Cheat {
        bad_commit_open: true,
        ..Cheat::default()
    };
    let res = cheating_run(Z2k::spdz2k_64(), cheat).await;
    assert_honest_caught(&res, "mac-check-commitment", Some(1));
    for r in [&res[0], &res[2]] {
        if let Err(Error::CommitmentMismatch { party, .. }) = r {
            assert_eq!(*party, 1);
        }
    }
}

/// An error only in the high `s` bits of a Z_2^k share (no change of the value mod 2^k) is
/// harmless, but an error at bit k-1 must be caught.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cheat_error_at_top_value_bit_is_caught() {
    let cheat = Cheat {
        share_err: Some(1 << 31),
        ..Cheat::default()
    };
    let res = cheating_run(Z2k::spdz2k_32(), cheat).await;
    assert_honest_caught(&res, "mac-check", None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exhausted_preprocessing_is_a_clear_error() {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let dealer = InsecureDealer::new_insecure(Z2k::spdz2k_64(), 2, &mut rng).unwrap();
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

// ----- down-cast and truncated opening -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downcast_to_z2_32_then_compute() {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let big = Z2k::spdz2k_64();
    let small = Z2k::new(32, 64).unwrap();
    let dealer = InsecureDealer::new_insecure(big, 2, &mut rng).unwrap();
    let preps = dealer.deal(
        Counts {
            triples: 4,
            randoms: 8,
            masks_per_party: 4,
            bits: 0,
        },
        &mut rng,
    );
    let xs: Vec<u128> = (0..4).map(|_| rng.next_u64() as u128).collect();
    let ys: Vec<u128> = (0..4).map(|_| rng.next_u64() as u128).collect();
    // each party: shares over Z_2^64 made with the big engine, then down-cast
    let res = run_mem(preps, {
        let (xs, ys) = (xs.clone(), ys.clone());
        move |mut e, mut mesh| {
            let (xs, ys) = (xs.clone(), ys.clone());
            async move {
                let me = mesh.id();
                let x = e
                    .input(&mut mesh, 0, (me == 0).then_some(&xs[..]), 4)
                    .await?;
                let y = e
                    .input(&mut mesh, 1, (me == 1).then_some(&ys[..]), 4)
                    .await?;
                e.check(&mut mesh).await?;
                let small = Z2k::new(32, 64)?;
                let big = *e.ring();
                let xd: Vec<_> = x
                    .iter()
                    .map(|s| downcast(&big, &small, s))
                    .collect::<Result<_>>()?;
                let yd: Vec<_> = y
                    .iter()
                    .map(|s| downcast(&big, &small, s))
                    .collect::<Result<_>>()?;
                // hand the rest of the material over to an engine over Z_2^32
                let prep = std::mem::replace(e.prep_mut(), VecPrep::new(big, me, 2, 0));
                let mut e2 = Engine::new(DowncastPrep::new(prep, small)?);
                let z = e2.mul(&mut mesh, &xd, &yd).await?;
                let out = e2.open_checked(&mut mesh, &z).await?;
                mesh.close().await?;
                Ok(out)
            }
        }
    })
    .await;
    let expect: Vec<u128> = xs
        .iter()
        .zip(&ys)
        .map(|(x, y)| small.to_value(&(x.wrapping_mul(*y))))
        .collect();
    for r in res {
        assert_eq!(r.unwrap(), expect);
    }
    assert!(downcast(&small, &big, &Share::default()).is_err());
}

use rand::Rng as _;

/// Truncated opening: the low l bits are right, and the opened k+s-bit values carry no
/// information above bit l (chi-square on bits l..l+8 and the top byte, for extreme x).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_open_reveals_only_low_bits() {
    let trials = 4096usize;
    let l = 20u32;
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    let ring = Z2k::spdz2k_64();
    let dealer = InsecureDealer::new_insecure(ring, 2, &mut rng).unwrap();
    let preps = dealer.deal(
        Counts {
            randoms: 3 * trials,
            masks_per_party: 3,
            ..Counts::default()
        },
        &mut rng,
    );
    let xs: Vec<u128> = vec![0, u64::MAX as u128, 0x8000_0000_1234_5678];
    let res = run_mem(preps, {
        let xs = xs.clone();
        move |mut e, mut mesh| {
            let xs = xs.clone();
            async move {
                let me = mesh.id();
                let x = e
                    .input(&mut mesh, 0, (me == 0).then_some(&xs[..]), 3)
                    .await?;
                e.check(&mut mesh).await?;
                let mut lows = Vec::new();
                let mut raw = Vec::new();
                for _ in 0..trials {
                    let o = e.open_truncated(&mut mesh, &x, l).await?;
                    lows.push(o);
                    raw.extend_from_slice(e.pending_opened());
                    e.check(&mut mesh).await?;
                }
                mesh.close().await?;
                Ok((lows, raw))
            }
        }
    })
    .await;
    let (lows, raw) = res.into_iter().next().unwrap().unwrap();
    for o in &lows {
        for (v, x) in o.iter().zip(&xs) {
            assert_eq!(*v, x & ((1 << l) - 1));
        }
    }
    // raw[t*3 + j] is the opened k+s-bit value for x_j in trial t
    for j in 0..3 {
        for shift in [l, 56, 120] {
            let mut hist = [0usize; 256];
            for t in 0..trials {
                hist[((raw[t * 3 + j] >> shift) & 0xff) as usize] += 1;
            }
            let exp = trials as f64 / 256.0;
            let chi2: f64 = hist.iter().map(|&h| (h as f64 - exp).powi(2) / exp).sum();
            // 255 degrees of freedom: mean 255, sd ~22.6; 380 is > 5 sd
            assert!(chi2 < 380.0, "x_{j} bits {shift}..: chi2 = {chi2}");
        }
    }
}

/// RandBit outputs are bits and uniform.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rand_bits_are_uniform_bits() {
    let count = 20_000usize;
    let mut rng = ChaCha20Rng::seed_from_u64(12);
    let ring = Z2k::spdz2k_64();
    let dealer = InsecureDealer::new_insecure(ring, 3, &mut rng).unwrap();
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

/// The engine runs on the on-disk store as its preprocessing source.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engine_on_disk_store() {
    let mut rng = ChaCha20Rng::seed_from_u64(13);
    let ring = Fp64::mersenne61();
    let dealer = InsecureDealer::new_insecure(ring, 2, &mut rng).unwrap();
    let mut preps = dealer.deal(
        Counts {
            triples: 3,
            masks_per_party: 3,
            ..Counts::default()
        },
        &mut rng,
    );
    let base =
        std::env::temp_dir().join(format!("coterie-spdz-engine-store-{}", std::process::id()));
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

// ----- OT-based SPDZ_2k preprocessing -----

mod ot_producer {
    use super::*;
    use crate::ot_prep::{OtPrep, PrepCheat};

    async fn produce(
        n: usize,
        ring: Z2k,
        counts: Counts,
        cheat: Option<(usize, PrepCheat)>,
    ) -> Vec<Result<VecPrep<Z2k>>> {
        let meshes = InMemoryMesh::group(n, opts());
        let mut tasks = Vec::new();
        for mut mesh in meshes {
            let cheat = cheat.clone();
            tasks.push(tokio::spawn(async move {
                let mut p = OtPrep::setup(&mut mesh, ring).await?;
                if let Some((who, c)) = cheat
                    && who == mesh.id()
                {
                    p.cheat = c;
                }
                let out = p.produce(&mut mesh, counts).await?;
                mesh.close().await?;
                Ok(out)
            }));
        }
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.unwrap());
        }
        out
    }

    fn open_share(ring: &Z2k, shares: &[&Share<u128>]) -> (u128, u128) {
        let v = shares.iter().fold(0, |a, s| ring.add(&a, &s.v));
        let m = shares.iter().fold(0, |a, s| ring.add(&a, &s.m));
        (v, m)
    }

    fn verify_material(ring: Z2k, preps: &[VecPrep<Z2k>], counts: Counts) {
        let n = preps.len();
        let alpha = preps
            .iter()
            .fold(0u128, |a, p| ring.add(&a, &p.mac_key_share()));
        let authentic = |sh: Vec<&Share<u128>>| {
            let (v, m) = open_share(&ring, &sh);
            assert_eq!(m, ring.mul(&alpha, &v), "MAC does not match");
            v
        };
        for i in 0..counts.triples {
            let a = authentic(preps.iter().map(|p| &p.triples[i].a).collect());
            let b = authentic(preps.iter().map(|p| &p.triples[i].b).collect());
            let c = authentic(preps.iter().map(|p| &p.triples[i].c).collect());
            assert_eq!(c, ring.mul(&a, &b), "triple {i} is wrong");
        }
        let mut ones = 0;
        for i in 0..counts.bits {
            let b = authentic(preps.iter().map(|p| &p.bits[i]).collect());
            assert!(ring.to_value(&b) <= 1, "bit {i} = {b}");
            ones += ring.to_value(&b) as usize;
        }
        if counts.bits >= 16 {
            assert!(ones > 0 && ones < counts.bits);
        }
        for i in 0..counts.randoms {
            authentic(preps.iter().map(|p| &p.randoms[i]).collect());
        }
        for owner in 0..n {
            for i in 0..counts.masks_per_party {
                let r = authentic(preps.iter().map(|p| &p.masks[owner][i].share).collect());
                assert_eq!(preps[owner].masks[owner][i].value, Some(r));
                for (j, p) in preps.iter().enumerate() {
                    assert_eq!(p.masks[owner][i].value.is_some(), j == owner);
                }
            }
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ot_material_is_correct_and_authentic() {
        let counts = Counts {
            triples: 24,
            bits: 20,
            randoms: 10,
            masks_per_party: 4,
        };
        for (n, ring) in [(2, Z2k::spdz2k_64()), (3, Z2k::spdz2k_32())] {
            let res = produce(n, ring, counts, None).await;
            let preps: Vec<_> = res.into_iter().map(|r| r.unwrap()).collect();
            verify_material(ring, &preps, counts);
        }
        let small = Counts {
            triples: 5,
            bits: 3,
            randoms: 2,
            masks_per_party: 2,
        };
        let res = produce(4, Z2k::spdz2k_64(), small, None).await;
        let preps: Vec<_> = res.into_iter().map(|r| r.unwrap()).collect();
        verify_material(Z2k::spdz2k_64(), &preps, small);
    }

    /// The producer over TLS (3 parties): the material is correct and authentic.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ot_producer_over_tls() {
        let counts = Counts {
            triples: 6,
            bits: 2,
            randoms: 2,
            masks_per_party: 1,
        };
        let ring = Z2k::spdz2k_64();
        let meshes = super::tls::tls_group(3).await;
        let mut tasks = Vec::new();
        for mut mesh in meshes {
            tasks.push(tokio::spawn(async move {
                let mut p = OtPrep::setup(&mut mesh, ring).await?;
                let out = p.produce(&mut mesh, counts).await?;
                mesh.close().await?;
                Ok::<_, Error>(out)
            }));
        }
        let mut preps = Vec::new();
        for t in tasks {
            preps.push(t.await.unwrap().unwrap());
        }
        verify_material(ring, &preps, counts);
    }

    /// The producer's progress bar ends at `tools::ot_work_units` of the counts.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn progress_counts_all_work() {
        let counts = Counts {
            triples: 3,
            bits: 2,
            randoms: 4,
            masks_per_party: 1,
        };
        let n = 3;
        let meshes = InMemoryMesh::group(n, opts());
        let mut tasks = Vec::new();
        for mut mesh in meshes {
            tasks.push(tokio::spawn(async move {
                let mut p = OtPrep::setup(&mut mesh, Z2k::spdz2k_32()).await?;
                let bar = indicatif::ProgressBar::hidden();
                p.set_progress(Some(bar.clone()));
                p.produce(&mut mesh, counts).await?;
                mesh.close().await?;
                Ok::<u64, Error>(bar.position())
            }));
        }
        for t in tasks {
            let pos = t.await.unwrap().unwrap();
            assert_eq!(pos, crate::tools::ot_work_units(counts, n));
        }
    }

    /// Random bits from the OT producer are bits and uniform (2 parties, 512 bits: the count of
    /// ones and of the four patterns of consecutive pairs).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ot_random_bits_are_uniform() {
        let counts = Counts {
            bits: 512,
            ..Counts::default()
        };
        let ring = Z2k::spdz2k_32();
        let preps: Vec<_> = produce(2, ring, counts, None)
            .await
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
        let bits: Vec<u128> = (0..counts.bits)
            .map(|i| {
                let v = ring.add(&preps[0].bits[i].v, &preps[1].bits[i].v);
                ring.to_value(&v)
            })
            .collect();
        assert!(bits.iter().all(|b| *b <= 1));
        let ones = bits.iter().filter(|b| **b == 1).count() as f64;
        // binomial(512, 1/2): sd 11.3; 5 sd
        assert!((ones - 256.0).abs() < 57.0, "ones = {ones}");
        let mut pairs = [0usize; 4];
        for w in bits.chunks_exact(2) {
            pairs[(w[0] * 2 + w[1]) as usize] += 1;
        }
        let chi2: f64 = pairs
            .iter()
            .map(|&h| (h as f64 - 64.0).powi(2) / 64.0)
            .sum();
        // 3 degrees of freedom: 25 is far beyond the 0.9999 quantile (21.1)
        assert!(chi2 < 25.0, "chi2 = {chi2}, pairs {pairs:?}");
    }

    /// The material drives the online engine: inputs, a product, an opening, the MAC check.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ot_material_drives_the_engine() {
        let counts = Counts {
            triples: 4,
            bits: 0,
            randoms: 4,
            masks_per_party: 4,
        };
        let preps: Vec<_> = produce(2, Z2k::spdz2k_64(), counts, None)
            .await
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
        let res = run_mem(preps, |mut e, mut mesh| async move {
            let me = mesh.id();
            let v: Vec<u128> = vec![u64::MAX as u128, 2, 3, 1 << 40];
            let x = e
                .input(&mut mesh, 0, (me == 0).then_some(&v[..]), 4)
                .await?;
            let y = e
                .input(&mut mesh, 1, (me == 1).then_some(&v[..]), 4)
                .await?;
            let z = e.mul(&mut mesh, &x, &y).await?;
            let o = e.open_checked(&mut mesh, &z).await?;
            mesh.close().await?;
            Ok(o)
        })
        .await;
        let want: Vec<u128> = [u64::MAX as u128, 2, 3, 1 << 40]
            .iter()
            .map(|x| x.wrapping_mul(*x) & (u64::MAX as u128))
            .collect();
        for r in res {
            assert_eq!(r.unwrap(), want);
        }
    }

    /// A party that adds an error to its share of a triple's c is caught by the sacrifice.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn cheating_triple_is_caught_by_the_sacrifice() {
        let counts = Counts {
            triples: 8,
            ..Counts::default()
        };
        let cheat = PrepCheat {
            triple_err: Some(1 << 63),
            ..PrepCheat::default()
        };
        let res = produce(3, Z2k::spdz2k_64(), counts, Some((1, cheat))).await;
        for (i, r) in res.iter().enumerate() {
            let e = r.as_ref().expect_err("a cheat must abort");
            if i != 1 {
                assert!(
                    e.check() == Some("triple-sacrifice") || e.to_string().contains("sacrifice"),
                    "party {i}: {e}"
                );
            }
        }
    }

    /// Every honest party's error names `check`; the cheater fails too (it gets the abort).
    fn assert_prep_abort(res: &[Result<VecPrep<Z2k>>], cheater: usize, check: &str) {
        for (i, r) in res.iter().enumerate() {
            let e = r.as_ref().expect_err("a cheat must abort");
            if i != cheater {
                assert!(
                    e.check() == Some(check) || e.to_string().contains(check),
                    "party {i}: {e} (wanted {check})"
                );
            }
        }
    }

    /// A selective-failure probe: a cheating OT sender adds an error to every Gilboa correction
    /// of one triple toward every peer; the combined triple is wrong, so the sacrifice aborts.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn gilboa_probe_is_caught_by_the_sacrifice() {
        let counts = Counts {
            triples: 4,
            ..Counts::default()
        };
        for (n, err) in [(2, 1u128), (3, 1u128 << 100)] {
            let cheat = PrepCheat {
                gilboa_err: Some(err),
                ..PrepCheat::default()
            };
            let res = produce(n, Z2k::spdz2k_64(), counts, Some((0, cheat))).await;
            assert_prep_abort(&res, 0, "sacrifice");
        }
    }

    /// A party that deviates in COPE (different inputs `x` in different `u_l`) gets a wrong MAC
    /// on the authenticated value; the authentication check catches it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn inconsistent_cope_input_is_caught() {
        let counts = Counts {
            triples: 3,
            ..Counts::default()
        };
        for (n, cheater) in [(2, 1), (3, 2)] {
            let cheat = PrepCheat {
                cope_err: Some(5),
                ..PrepCheat::default()
            };
            let res = produce(n, Z2k::spdz2k_64(), counts, Some((cheater, cheat))).await;
            assert_prep_abort(&res, cheater, "authentication-mac-check");
        }
        // also when only authenticated values are made (masks and randoms)
        let counts = Counts {
            randoms: 3,
            masks_per_party: 2,
            ..Counts::default()
        };
        let cheat = PrepCheat {
            cope_err: Some(1 << 70),
            ..PrepCheat::default()
        };
        let res = produce(2, Z2k::spdz2k_32(), counts, Some((0, cheat))).await;
        assert_prep_abort(&res, 0, "authentication-mac-check");
    }

    /// An additive error on a triple share after authentication (value changed, MAC not) is
    /// caught by the MAC check on the preprocessing openings.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn triple_share_error_after_authentication_is_caught() {
        let counts = Counts {
            triples: 3,
            ..Counts::default()
        };
        let cheat = PrepCheat {
            triple_share_err_after_auth: Some(1 << 20),
            ..PrepCheat::default()
        };
        let res = produce(3, Z2k::spdz2k_64(), counts, Some((1, cheat))).await;
        for (i, r) in res.iter().enumerate() {
            let e = r.as_ref().expect_err("a cheat must abort");
            if i != 1 {
                let c = e.check();
                assert!(
                    c == Some("triple-sacrifice")
                        || c == Some("authentication-mac-check")
                        || e.to_string().contains("sacrifice")
                        || e.to_string().contains("authentication-mac-check"),
                    "party {i}: {e}"
                );
            }
        }
    }

    /// A KOS receiver with inconsistent choice bits is caught by the consistency check, which
    /// names it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn inconsistent_ot_extension_is_caught() {
        let counts = Counts {
            triples: 2,
            ..Counts::default()
        };
        let cheat = PrepCheat {
            kos_inconsistent: true,
            ..PrepCheat::default()
        };
        let res = produce(2, Z2k::spdz2k_64(), counts, Some((1, cheat))).await;
        match &res[0] {
            Err(Error::PrepCheckFailed { check, party }) => {
                assert_eq!((*check, *party), ("kos-consistency", 1));
            }
            Err(e) => assert!(e.to_string().contains("kos-consistency"), "{e}"),
            Ok(_) => panic!("inconsistent OT extension accepted"),
        }
        assert!(res[1].is_err());
    }
}

/// OT preprocessing straight into the on-disk stores, then the engine runs on them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ot_preprocessing_into_stores_then_online() {
    use crate::tools::{party_dir, produce_ot_to_store};
    let base = std::env::temp_dir().join(format!("coterie-spdz-ot-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
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

/// SingleCheck (per-value, 2 rounds): honest runs pass, split into its two halves with an
/// opening in between; a share error and a bad commitment opening are each caught.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn single_check_honest_and_cheating() {
    for case in 0..3 {
        let mut rng = ChaCha20Rng::seed_from_u64(50 + case);
        let dealer = InsecureDealer::new_insecure(Z2k::spdz2k_64(), 3, &mut rng).unwrap();
        let preps = dealer.deal(
            Counts {
                triples: 2,
                randoms: 4,
                masks_per_party: 2,
                ..Counts::default()
            },
            &mut rng,
        );
        let res = run_mem(preps, move |mut e, mut mesh| async move {
            let me = mesh.id();
            let v = [5u128, 6];
            let x = e
                .input(&mut mesh, 0, (me == 0).then_some(&v[..]), 2)
                .await?;
            if me == 1 {
                match case {
                    1 => e.cheat.share_err = Some(3),
                    2 => e.cheat.bad_commit_open = true,
                    _ => {}
                }
            }
            let z = e.mul(&mut mesh, &x, &x).await?;
            let o1 = e.open(&mut mesh, &z[..1]).await?;
            let pending = e.check_single_commit(&mut mesh).await?;
            let o2 = e.open(&mut mesh, &z[1..]).await?;
            e.check_single_open(&mut mesh, pending).await?;
            e.check_single(&mut mesh).await?;
            mesh.close().await?;
            Ok((o1[0], o2[0]))
        })
        .await;
        for (i, r) in res.iter().enumerate() {
            match (case, r) {
                (0, Ok(o)) => assert_eq!(*o, (25, 36)),
                (1, Err(e)) if i != 1 => {
                    assert!(e.to_string().contains("single-check"), "{e}")
                }
                (2, Err(e)) if i != 1 => {
                    assert!(e.to_string().contains("single-check-commitment"), "{e}");
                    if let Error::CommitmentMismatch { party, .. } = e {
                        assert_eq!(*party, 1);
                    }
                }
                (_, Err(_)) if i == 1 => {}
                (c, r) => panic!("case {c} party {i}: {r:?}"),
            }
        }
    }
}

/// RandBit by squaring over F_p: bits, uniform, authenticated (MAC check passes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_rand_bits_by_squaring() {
    async fn run<R: PrimeField>(ring: R, count: usize, seed: u64) -> Vec<R::Elem> {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let dealer = InsecureDealer::new_insecure(ring, 2, &mut rng).unwrap();
        let preps = dealer.deal(
            Counts {
                triples: count + 16,
                randoms: count + 16,
                ..Counts::default()
            },
            &mut rng,
        );
        let res = run_mem(preps, move |mut e, mut mesh| async move {
            let b = e.rand_bits_by_squaring(&mut mesh, count).await?;
            let o = e.open_checked(&mut mesh, &b).await?;
            mesh.close().await?;
            Ok(o)
        })
        .await;
        let mut it = res.into_iter();
        let first = it.next().unwrap().unwrap();
        for r in it {
            assert_eq!(r.unwrap(), first);
        }
        first
    }
    let count = 2000;
    let o = run(Fp64::mersenne61(), count, 60).await;
    assert!(o.iter().all(|b| *b <= 1));
    let ones = o.iter().filter(|b| **b == 1).count() as f64;
    assert!((ones - count as f64 / 2.0).abs() < 5.0 * (count as f64 / 4.0).sqrt());
    let mut p: BigInt = BigInt::from(1) << 127u32;
    p += 1u32;
    while !(coterie_math::bigint::is_probable_prime(&p) && p.mod_u(8) == 1) {
        p += 8u32;
    }
    let o = run(FpBig::new(p).unwrap(), 200, 61).await;
    assert!(o.iter().all(|b| b.0 <= 1));
    let ones = o.iter().filter(|b| b.0 == 1).count();
    assert!(ones > 60 && ones < 140, "ones = {ones}");
}

/// A batch larger than one opening message is split and reassembled in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_opening_is_chunked() {
    let count = crate::engine::OPEN_CHUNK_BYTES / 16 + 1000;
    let mut rng = ChaCha20Rng::seed_from_u64(70);
    let dealer = InsecureDealer::new_insecure(Z2k::spdz2k_64(), 2, &mut rng).unwrap();
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

/// The Z_2^k-only operations (truncated opening, down-cast then compute) against plaintext for
/// 2, 3, 4 and 8 parties.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn z2k_truncated_open_and_downcast_2_3_4_8() {
    for n in [2usize, 3, 4, 8] {
        let mut rng = ChaCha20Rng::seed_from_u64(80 + n as u64);
        let big = Z2k::spdz2k_64();
        let dealer = InsecureDealer::new_insecure(big, n, &mut rng).unwrap();
        let preps = dealer.deal(
            Counts {
                triples: 4,
                randoms: 16,
                masks_per_party: 4,
                bits: 0,
            },
            &mut rng,
        );
        let xs: Vec<u128> = (0..4).map(|_| rng.next_u64() as u128).collect();
        let ys: Vec<u128> = (0..4).map(|_| rng.next_u64() as u128).collect();
        let res = run_mem(preps, {
            let (xs, ys) = (xs.clone(), ys.clone());
            move |mut e, mut mesh| {
                let (xs, ys) = (xs.clone(), ys.clone());
                async move {
                    let me = mesh.id();
                    let n = mesh.n();
                    let x = e
                        .input(&mut mesh, 0, (me == 0).then_some(&xs[..]), 4)
                        .await?;
                    let y = e
                        .input(&mut mesh, n - 1, (me == n - 1).then_some(&ys[..]), 4)
                        .await?;
                    let t13 = e.open_truncated(&mut mesh, &x, 13).await?;
                    let t64 = e.open_truncated(&mut mesh, &y, 64).await?;
                    e.check(&mut mesh).await?;
                    let small = Z2k::spdz2k_32();
                    let big = *e.ring();
                    let xd: Vec<_> = x
                        .iter()
                        .map(|s| downcast(&big, &small, s))
                        .collect::<Result<_>>()?;
                    let yd: Vec<_> = y
                        .iter()
                        .map(|s| downcast(&big, &small, s))
                        .collect::<Result<_>>()?;
                    let prep = std::mem::replace(e.prep_mut(), VecPrep::new(big, me, n, 0));
                    let mut e2 = Engine::new(DowncastPrep::new(prep, small)?);
                    let z = e2.mul(&mut mesh, &xd, &yd).await?;
                    let t20 = e2.open_truncated(&mut mesh, &z, 20).await?;
                    let full = e2.open_checked(&mut mesh, &z).await?;
                    mesh.close().await?;
                    Ok((t13, t64, t20, full))
                }
            }
        })
        .await;
        for r in res {
            let (t13, t64, t20, full) = r.unwrap();
            for j in 0..4 {
                let prod = (xs[j] * ys[j]) & 0xffff_ffff;
                assert_eq!(t13[j], xs[j] & 0x1fff);
                assert_eq!(t64[j], ys[j]);
                assert_eq!(t20[j], prod & 0xf_ffff);
                assert_eq!(full[j], prod);
            }
        }
    }
}

/// The CLI drivers: insecure dealer into stores, then the online demo from the stores.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_tools_deal_then_demo() {
    use crate::tools::{deal_insecure_to_stores, online_product_demo, party_dir};
    let base = std::env::temp_dir().join(format!("coterie-spdz-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let counts = Counts {
        triples: 4,
        randoms: 2,
        masks_per_party: 2,
        bits: 0,
    };
    deal_insecure_to_stores(&base, Z2k::spdz2k_64(), 3, counts, 3).unwrap();
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

/// An input owner that sends different masked values to different parties is caught by the
/// echo round, which names a party whose view differs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn equivocating_input_owner_is_caught() {
    let mut rng = ChaCha20Rng::seed_from_u64(90);
    let dealer = InsecureDealer::new_insecure(Fp64::mersenne61(), 3, &mut rng).unwrap();
    let preps = dealer.deal(
        Counts {
            masks_per_party: 1,
            ..Counts::default()
        },
        &mut rng,
    );
    let res = run_mem(preps, |mut e, mut mesh| async move {
        let me = mesh.id();
        if me == 1 {
            e.cheat.equivocate_input = true;
        }
        e.input(&mut mesh, 1, (me == 1).then_some(&[5u64][..]), 1)
            .await?;
        mesh.close().await?;
        Ok(())
    })
    .await;
    for (i, r) in res.iter().enumerate() {
        let e = r.as_ref().expect_err("equivocation must abort");
        if i != 1 {
            assert!(e.to_string().contains("input-broadcast"), "party {i}: {e}");
        }
    }
}

/// The F_p truncated opening: correct low bits for 2 and 3 parties, the opened masked values'
/// bits above `l` look uniform (statistical test), and a field too small for the mask is
/// refused with `Unsupported`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fp_truncated_open_low_bits_and_refusal() {
    use crate::engine::FP_TRUNC_SIGMA;
    let (l, bound) = (16u32, 64u32);
    let trials = 1024usize;
    let rbits = (bound - l + FP_TRUNC_SIGMA) as usize;
    let ring = FpBig::new(big_prime(192)).unwrap();
    let xs: Vec<u64> = vec![0, u64::MAX, 0x8000_0000_1234_5678];
    for n in [2usize, 3] {
        let mut rng = ChaCha20Rng::seed_from_u64(40 + n as u64);
        let dealer = InsecureDealer::new_insecure(ring.clone(), n, &mut rng).unwrap();
        let t = if n == 2 { trials } else { 4 };
        let preps = dealer.deal(
            Counts {
                bits: 3 * t * rbits,
                masks_per_party: 3,
                ..Counts::default()
            },
            &mut rng,
        );
        let res = run_mem(preps, {
            let xs = xs.clone();
            let ring = ring.clone();
            move |mut e, mut mesh| {
                let xs: Vec<_> = xs.iter().map(|x| ring.embed_u64(*x)).collect();
                async move {
                    let me = mesh.id();
                    let x = e
                        .input(&mut mesh, 0, (me == 0).then_some(&xs[..]), 3)
                        .await?;
                    e.check(&mut mesh).await?;
                    let mut lows = Vec::new();
                    let mut raw = Vec::new();
                    for _ in 0..t {
                        lows.push(e.open_truncated_fp(&mut mesh, &x, l, bound).await?);
                        raw.extend_from_slice(e.pending_opened());
                        e.check(&mut mesh).await?;
                    }
                    mesh.close().await?;
                    Ok((lows, raw))
                }
            }
        })
        .await;
        for r in res {
            let (lows, raw) = r.unwrap();
            for o in &lows {
                for (v, x) in o.iter().zip(&xs) {
                    assert_eq!(*v, ring.embed_u64(x & ((1 << l) - 1)), "n = {n}");
                }
            }
            if n == 2 {
                // bits l..l+8 and 60..68 of the opened values are uniform for every x
                for j in 0..3 {
                    for shift in [l, 60] {
                        let mut hist = [0usize; 256];
                        for tr in 0..t {
                            let v: BigInt = raw[tr * 3 + j].0.clone() >> shift;
                            hist[(v.to_u32_wrapping() & 0xff) as usize] += 1;
                        }
                        let exp = t as f64 / 256.0;
                        let chi2: f64 = hist.iter().map(|&h| (h as f64 - exp).powi(2) / exp).sum();
                        assert!(chi2 < 380.0, "x_{j} bits {shift}..: chi2 = {chi2}");
                    }
                }
            }
        }
    }
    // a 61-bit field cannot hold the statistical mask: refused, before any communication
    let mut rng = ChaCha20Rng::seed_from_u64(49);
    let f61 = Fp64::mersenne61();
    let dealer = InsecureDealer::new_insecure(f61, 2, &mut rng).unwrap();
    let preps = dealer.deal(
        Counts {
            bits: 200,
            ..Counts::default()
        },
        &mut rng,
    );
    let res = run_mem(preps, move |mut e, mut mesh| async move {
        let x = vec![e.constant(&5)];
        let r = e.open_truncated_fp(&mut mesh, &x, 4, 16).await;
        mesh.close().await?;
        Ok(r)
    })
    .await;
    for r in res {
        match r.unwrap() {
            Err(Error::Unsupported(why)) => assert!(why.contains("F_p"), "{why}"),
            other => panic!("expected Unsupported, got {other:?}"),
        }
    }
}
