//! Openings over Z_2^k: down-cast material, the truncated opening and its statistics.

use coterie_net::Mesh;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

use super::run_mem;
use crate::prep::{DowncastPrep, downcast};
use crate::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downcast_to_z2_32_then_compute() {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let big = Z2k::spdz2k_64();
    let small = Z2k::new(32, 64).unwrap();
    let dealer = InsecureDealer::insecure_new(big, 2, &mut rng).unwrap();
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

/// Truncated opening: the low l bits are right, and the opened k+s-bit values carry no
/// information above bit l (chi-square on bits l..l+8 and the top byte, for extreme x).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_open_reveals_only_low_bits() {
    let trials = 4096usize;
    let l = 20u32;
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    let ring = Z2k::spdz2k_64();
    let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
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

/// The Z_2^k-only operations (truncated opening, down-cast then compute) against plaintext for
/// 2, 3, 4 and 8 parties.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn z2k_truncated_open_and_downcast_2_3_4_8() {
    for n in [2usize, 3, 4, 8] {
        let mut rng = ChaCha20Rng::seed_from_u64(80 + n as u64);
        let big = Z2k::spdz2k_64();
        let dealer = InsecureDealer::insecure_new(big, n, &mut rng).unwrap();
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
