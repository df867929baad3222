//! Measured failure rates on the insecure 128-bit toy group (where failures are frequent), and
//! the Las Vegas soundness rule: every wrong output is flagged by BOTH servers.

use coterie_hss::convert::{ConvertParams, ScanEngine, convert};
use coterie_hss::group::Group;
use coterie_hss::scheme::{
    Evaluator, Params, PreparedInput, insecure_keygen_trusted_dealer, share_l2_secret_key,
};
use coterie_math::bigint::{self, BigInt};
use rand::{RngExt, SeedableRng};

#[test]
fn conversion_failure_rate_matches_lemma_4_6() {
    let g = Group::insecure_toy128();
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(30);
    let d = 8;
    let p = ConvertParams::new(d, 1);
    let trials = 100_000u32;
    let (mut fails, mut double, mut single_z0) = (0u32, 0u32, 0u32);
    let mut steps = 0u64;
    for t in 0..trials {
        let z = u64::from(t % 4 != 0); // 3/4 of the trials with payload 1
        let h1 = g
            .elem_from_bigint(&bigint::random_below(&mut rng, g.p()).unwrap())
            .unwrap();
        let h0 = g.mul(&h1, &g.g_pow(&BigInt::from(z)));
        let c0 = convert(&g, 0, &h0, &p, ScanEngine::BitParallel).unwrap();
        let c1 = convert(&g, 1, &h1, &p, ScanEngine::BitParallel).unwrap();
        steps += c1.steps;
        let wrong = c0.share - c1.share != z as i64;
        if wrong {
            assert!(c0.flag && c1.flag, "undetected conversion failure");
            fails += 1;
        }
        if c0.flag && c1.flag {
            double += 1;
            // Variant A with d + 1 >= 2M: both flag iff failure.
            assert!(wrong);
        }
        if z == 0 {
            assert!(!wrong);
            single_z0 += u32::from(c0.flag || c1.flag);
        }
    }
    let n1 = (trials - trials / 4) as f64;
    let rate = fails as f64 / n1;
    let bound = 2f64.powi(-(d as i32 + 1)); // z * 2^-(d+1)
    let sigma = (bound / n1).sqrt();
    eprintln!("conversion d={d} z=1: failure rate {rate:.5} (bound {bound:.5}), {fails} failures");
    assert!(rate <= bound + 4.0 * sigma, "rate {rate} > bound {bound}");
    assert!(rate >= 0.6 * bound, "rate {rate} suspiciously low");
    assert_eq!(double, fails);
    assert!(single_z0 > 0, "payload-0 walks still raise single flags");
    let mean = steps as f64 / trials as f64;
    assert!((mean - 512.0).abs() < 40.0, "mean steps {mean} vs 2^(d+1)");
}

#[test]
fn rms_multiplication_failure_rate_within_corollary_4_8() {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(31);
    let (log_base, key_bits, d) = (2u32, 32u32, 7u32);
    let params = Params::insecure_toy(log_base, key_bits, d);
    let (pk, ek0, ek1, sk) = insecure_keygen_trusted_dealer(&params, &mut rng).unwrap();
    let enc = pk.encryptor().unwrap();
    let xs: Vec<PreparedInput> = (0..2u32)
        .map(|x| PreparedInput::new(&pk, &enc.encrypt(&pk, &x.into(), &mut rng), true).unwrap())
        .collect();
    let trials = 3000u32;
    let (mut fails, mut any_flag) = (0u32, 0u32);
    for t in 0..trials {
        let x = rng.random_range(0..2i64);
        let y = rng.random_range(0..2i64);
        let (lx0, lx1) = share_l2_secret_key(&params, &sk, x, &mut rng);
        let (ly0, ly1) = share_l2_secret_key(&params, &sk, y, &mut rng);
        let mut e0 = Evaluator::new(&pk, &ek0, t as u64).unwrap();
        let mut e1 = Evaluator::new(&pk, &ek1, t as u64).unwrap();
        let r0 = e0.rand_mult(&xs[x as usize], &lx0, &ly0).unwrap();
        let r1 = e1.rand_mult(&xs[x as usize], &lx1, &ly1).unwrap();
        let v = BigInt::from(&r0.y - &r1.y);
        let vc = BigInt::from(&r0.yc - &r1.yc);
        let wrong = v != x * y || vc != BigInt::from(&sk.c * (x * y));
        if wrong {
            assert!(
                e0.flagged() && e1.flagged(),
                "undetected RMS multiplication failure"
            );
            fails += 1;
        }
        any_flag += u32::from(e0.flagged() || e1.flagged());
    }
    let rate = fails as f64 / trials as f64;
    let s = params.s() as f64;
    let b = params.base() as f64;
    let first = (1.0 + s * (b - 1.0) / 2.0) / 2f64.powi(d as i32 + 3);
    let bound = first + ((s + 1.0) / 2f64.powi(d as i32 + 1)).powi(2);
    assert!((params.predicted_failure() - first).abs() < 1e-12);
    let sigma = (bound / trials as f64).sqrt();
    eprintln!(
        "RandMult B=4 s=16 d=7: failure rate {rate:.4} (Cor. 4.8 first term {first:.4}, bound {bound:.4})"
    );
    assert!(rate <= bound + 4.0 * sigma, "rate {rate} > bound {bound}");
    assert!(
        rate >= 0.25 * first,
        "rate {rate} suspiciously low vs {first}"
    );
    assert!(any_flag > fails);
}
