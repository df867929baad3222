//! One-core benchmark of coterie-hss against a plain GMP baseline measured in the same run:
//! conversion steps per second, 1536-bit modular multiplications per second (special-form
//! reduction vs `mpz_mul` + `mpz_mod`), and RMS multiplications per second for every row of the
//! paper's Table 3.
//!
//! `cargo run --release -p coterie-hss --example hss_bench -- [quick]`; prints a markdown table
//! and writes nothing itself (the bench script tees the output to `bench/results/`).

use std::time::Instant;

use coterie_hss::convert::{ConvertParams, ScanEngine, Walker, convert};
use coterie_hss::group::Group;
use coterie_hss::scheme::{Evaluator, Params, PreparedInput, keygen_trusted_dealer_insecure};
use coterie_math::bigint::{self, BigInt};
use rand::SeedableRng;

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(42);
    let g = Group::p1536();
    println!("# coterie-hss benchmark (one core)\n");

    // 1. Modular multiplication.
    let a = bigint::random_below(&mut rng, g.p()).unwrap();
    let b = bigint::random_below(&mut rng, g.p()).unwrap();
    let n = if quick { 200_000 } else { 2_000_000 };
    let mut out = BigInt::new();
    let t = Instant::now();
    let mut acc = a.clone();
    for _ in 0..n {
        g.mul_gmp_baseline(&acc, &b, &mut out);
        std::mem::swap(&mut acc, &mut out);
    }
    let gmp_rate = n as f64 / t.elapsed().as_secs_f64();
    let ea = g.elem_from_bigint(&a).unwrap();
    let eb = g.elem_from_bigint(&b).unwrap();
    let mut s = g.scratch();
    let mut x = ea.limbs().to_vec();
    let mut y = vec![0u64; g.limbs()];
    let t = Instant::now();
    for _ in 0..n {
        g.mul_into(&mut y, &x, eb.limbs(), &mut s);
        std::mem::swap(&mut x, &mut y);
    }
    let sf_rate = n as f64 / t.elapsed().as_secs_f64();
    assert_eq!(
        bigint::from_le_limbs(&x),
        acc,
        "special-form chain must equal the GMP chain"
    );
    println!("## 1536-bit modular multiplication\n");
    println!("| method | mult/s | ratio |\n|---|---|---|");
    println!("| GMP mpz_mul + mpz_mod (baseline) | {gmp_rate:.3e} | 1.00 |");
    println!(
        "| mpn_mul_n + special-form fold (coterie-hss) | {sf_rate:.3e} | {:.2} |",
        sf_rate / gmp_rate
    );
    println!("| paper (Remark 6.1) | 1e6 | |\n");

    // 2. Conversion steps.
    println!("## Conversion steps (walk over 2^k steps, no distinguished point stops it)\n");
    println!("| engine | steps/s | vs naive doubling |\n|---|---|---|");
    let h = g.elem_from_bigint(&a).unwrap();
    let steps: u64 = if quick { 1 << 26 } else { 1 << 30 };
    let naive_steps: u64 = 1 << 20;
    let t = Instant::now();
    let mut w = Walker::new(&g, &h, 60, ScanEngine::Naive).unwrap();
    let mut cnt = 0u64;
    while let Some(j) = w.next_match(naive_steps) {
        cnt = cnt.wrapping_add(j);
    }
    let naive_rate = naive_steps as f64 / t.elapsed().as_secs_f64();
    println!("| naive doubling + test (reference) | {naive_rate:.3e} | 1.00 |");
    for (name, eng, d) in [
        ("lookup table, d = 16", ScanEngine::Lookup, 16u32),
        ("bit-parallel, d = 16", ScanEngine::BitParallel, 16),
        ("lookup table, d = 40", ScanEngine::Lookup, 40),
    ] {
        let t = Instant::now();
        let mut w = Walker::new(&g, &h, d, eng).unwrap();
        while let Some(j) = w.next_match(steps) {
            cnt = cnt.wrapping_add(j);
        }
        let rate = steps as f64 / t.elapsed().as_secs_f64();
        println!("| {name} | {rate:.3e} | {:.0} |", rate / naive_rate);
    }
    println!("| paper (Sec. 6.1) | 5e9 | |\n");
    // full conversions (with stops), d = 16
    let cp = ConvertParams::new(16, 1);
    let reps = if quick { 200 } else { 2000 };
    let mut total = 0u64;
    let t = Instant::now();
    let mut e = h.clone();
    for _ in 0..reps {
        let c = convert(&g, 1, &e, &cp, ScanEngine::Lookup).unwrap();
        total += c.steps;
        e = g.mul(&e, &g.g());
    }
    let el = t.elapsed().as_secs_f64();
    println!(
        "Full Convert* (d = 16, M = 1): {reps} conversions, mean {:.0} steps (expected ~2^17 = 131072), {:.3e} steps/s, {:.1} µs/conversion (checksum {cnt})\n",
        total as f64 / reps as f64,
        total as f64 / el,
        el * 1e6 / reps as f64
    );

    // 3. RMS multiplications per Table 3 row.
    println!("## RMS multiplications (RandMult of bits, both inputs prepared), Table 3 rows\n");
    println!(
        "| ε | B | R | d | share (kB, uncompressed s+2 / ESDH) | RMS mult/s (coterie, per server) | paper | steps per mult | pairing exps per mult (mults) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let paper: [(u32, u32, u32, f64); 12] = [
        (5, 2, 1, 55.0),
        (5, 2, 8, 438.0),
        (5, 4, 1, 109.0),
        (5, 4, 8, 856.0),
        (10, 2, 1, 54.0),
        (10, 2, 8, 361.0),
        (10, 4, 1, 101.0),
        (10, 4, 8, 562.0),
        (15, 2, 1, 29.0),
        (15, 2, 8, 55.0),
        (15, 4, 1, 34.0),
        (15, 4, 8, 47.0),
    ];
    for &(eps, lb, r, paper_rate) in &paper {
        let params = Params::table3(eps, lb, r).unwrap();
        let (pk, ek0, ek1, _) = keygen_trusted_dealer_insecure(&params, &mut rng).unwrap();
        let enc = pk.encryptor().unwrap();
        let ix = PreparedInput::new(&pk, &enc.encrypt(&pk, &1u32.into(), &mut rng), true).unwrap();
        let iy = PreparedInput::new(&pk, &enc.encrypt(&pk, &1u32.into(), &mut rng), false).unwrap();
        let mut e0 = Evaluator::new(&pk, &ek0, 1).unwrap();
        let mut e1 = Evaluator::new(&pk, &ek1, 1).unwrap();
        let lx = e0.load(&ix).unwrap();
        let ly = e0.load(&iy).unwrap();
        let _ = (e1.load(&ix).unwrap(), e1.load(&iy).unwrap());
        let base_steps = e0.stats.steps;
        let base_conv = e0.stats.conversions;
        let mults = if quick {
            2
        } else {
            (200.0 / (eps as f64)).ceil() as usize + 2
        };
        let t = Instant::now();
        for _ in 0..mults {
            let _ = e0.rand_mult(&ix, &lx, &ly).unwrap();
        }
        let el = t.elapsed().as_secs_f64();
        let rate = mults as f64 / el;
        let s = params.s();
        let share_kb = (s + 2) as f64 * 192.0 / 1000.0;
        let esdh = (s + 2 * (s as f64).sqrt().ceil() as usize + 1) as f64 * 192.0 / 1000.0;
        println!(
            "| 2^-{eps} | {} | {r} | {} | {share_kb:.1} / {esdh:.1} | {rate:.1} | {paper_rate} | {:.0} | {} |",
            1 << lb,
            params.d,
            (e0.stats.steps - base_steps) as f64 / mults as f64,
            (e0.stats.conversions - base_conv) / mults as u64
        );
    }
}
