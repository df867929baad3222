//! T8 (light): for fixed secret inputs, the opened `z'` of LTRand is uniform (chi-square on its
//! low and high 4 bits) and so is `y'`, and the outputs are right for every fresh gate bundle (dealt by the
//! **insecure** test dealer). The 10^5-sample version is `#[ignore]`d.

mod common;

use common::*;
use coterie_net::Mesh;
use coterie_spdz::{Counts, InsecureDealer, Z2k};
use coterie_threshold::LtParams;
use coterie_threshold::gates::insecure_deal_bundles;
use coterie_threshold::online::ltrand;

fn chi2(counts: &[usize], total: usize) -> f64 {
    let e = total as f64 / counts.len() as f64;
    counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum()
}

async fn run(z: u128, samples: usize) {
    let lt = LtParams::new(16, 14, 4).unwrap();
    let ring = Z2k::new(16, 64).unwrap();
    let mut rng = rand::rng();
    let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
    let preps = dealer.deal(
        Counts {
            triples: 0,
            bits: 0,
            randoms: 4 * samples,
            masks_per_party: 0,
        },
        &mut rng,
    );
    let gates = std::sync::Arc::new(std::sync::Mutex::new(
        insecure_deal_bundles(&dealer, &ring, &lt, samples, 0, &mut rng)
            .into_iter()
            .map(Some)
            .collect::<Vec<_>>(),
    ));
    let res = run_mem(preps, move |i, mut eng, mut mesh| {
        let g = gates.lock().unwrap()[i].take().unwrap();
        async move {
            let zs: Vec<_> = (0..samples).map(|_| eng.constant(&z)).collect();
            let outs = ltrand(&mut eng, &mut mesh, &lt, &zs, g).await?;
            let mut all = Vec::new();
            for o in &outs {
                all.push(o.r.clone());
                all.push(o.u.clone());
            }
            let vals = eng.open(&mut mesh, &all).await?;
            eng.check(&mut mesh).await?;
            mesh.close().await.ok();
            Ok((
                outs.iter()
                    .map(|o| (o.z_open, o.y_open))
                    .collect::<Vec<_>>(),
                vals,
            ))
        }
    })
    .await;
    let (zo, vals) = res.into_iter().next().unwrap().unwrap();
    let mut lo = vec![0usize; 16];
    let mut hi = vec![0usize; 16];
    let mut ys = vec![0usize; 1 << (lt.d() + 1)];
    for (j, &(x, y)) in zo.iter().enumerate() {
        ys[y as usize] += 1;
        let (r, u) = (vals[2 * j], vals[2 * j + 1]);
        assert!(r < 1 << 14);
        assert_eq!(u, u128::from(x < r), "u = (z' < r)");
        assert_eq!(x, (z + r) & ((1 << 14) - 1), "z' = z + r mod 2^l");
        lo[(x & 15) as usize] += 1;
        hi[(x >> 10) as usize] += 1;
    }
    // 15 degrees of freedom: P(chi2 > 50) ≈ 1e-5
    assert!(
        chi2(&lo, samples) < 50.0,
        "low bits of z' not uniform for z = {z}: {lo:?}"
    );
    assert!(
        chi2(&hi, samples) < 50.0,
        "high bits of z' not uniform for z = {z}: {hi:?}"
    );
    // y' over Z_{2^{d+1}} = Z_32 (d = 4): 31 degrees of freedom, P(chi2 > 75) ≈ 1e-5
    assert_eq!(ys.len(), 32);
    assert!(
        chi2(&ys, samples) < 75.0,
        "y' not uniform for z = {z}: {ys:?}"
    );
}

#[tokio::test]
async fn t8_z_open_uniform_light() {
    for z in [0u128, 1 << 15, (1 << 16) - 1, 12345] {
        run(z, 4096).await;
    }
}

#[tokio::test]
#[ignore]
async fn t8_z_open_uniform_1e5() {
    for z in [0u128, 1 << 15, (1 << 16) - 1] {
        run(z, 100_000).await;
    }
}
