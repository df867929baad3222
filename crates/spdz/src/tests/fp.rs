//! The F_p-only operations: RandBit by squaring and the statistical truncated opening.

use coterie_math::bigint::BigInt;
use coterie_net::Mesh;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use super::{big_prime, run_mem};
use crate::*;

/// RandBit by squaring over F_p: bits, uniform, authenticated (MAC check passes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_rand_bits_by_squaring() {
    async fn run<R: PrimeField>(ring: R, count: usize, seed: u64) -> Vec<R::Elem> {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
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
        let dealer = InsecureDealer::insecure_new(ring.clone(), n, &mut rng).unwrap();
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
    let dealer = InsecureDealer::insecure_new(f61, 2, &mut rng).unwrap();
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
