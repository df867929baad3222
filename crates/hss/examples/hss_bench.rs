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
use coterie_hss::scheme::{Evaluator, Params, PreparedInput, insecure_keygen_trusted_dealer};
use coterie_math::bigint::{self, BigInt};
use rand::SeedableRng;

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(42);
    let g = Group::p1536();
    println!("# coterie-hss benchmark (one core)\n");

    let skip_micro = std::env::args().any(|a| a == "skip-micro");
    let no_baseline = std::env::args().any(|a| a == "no-baseline");
    if !skip_micro {
        micro(&g, quick, &mut rng);
    }
    rms_rows(&g, quick, no_baseline, &mut rng);
}

fn micro(g: &Group, quick: bool, rng: &mut rand_chacha::ChaCha20Rng) {
    // 1. Modular multiplication.
    let a = bigint::random_below(rng, g.p()).unwrap();
    let b = bigint::random_below(rng, g.p()).unwrap();
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
    let mut w = Walker::new(g, &h, 60, ScanEngine::Naive).unwrap();
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
        let mut w = Walker::new(g, &h, d, eng).unwrap();
        while let Some(j) = w.next_match(steps) {
            cnt = cnt.wrapping_add(j);
        }
        let rate = steps as f64 / t.elapsed().as_secs_f64();
        println!("| {name} | {rate:.3e} | {:.0} |", rate / naive_rate);
    }
    println!("| paper (Sec. 6.1) | 5e9 | |\n");
    // Full conversions (with stops) from random starts, d = 16.
    let cp = ConvertParams::new(16, 1);
    let reps = if quick { 300 } else { 3000 };
    let starts: Vec<_> = (0..reps)
        .map(|_| {
            g.elem_from_bigint(&bigint::random_below(rng, g.p()).unwrap())
                .unwrap()
        })
        .collect();
    for (name, eng, cp) in [
        ("bit-parallel", ScanEngine::BitParallel, cp),
        ("lookup", ScanEngine::Lookup, cp),
        (
            "bit-parallel, separated M = 15",
            ScanEngine::BitParallel,
            ConvertParams::new(16, 15),
        ),
    ] {
        let mut total = 0u64;
        let t = Instant::now();
        for e in &starts {
            total += convert(g, 1, e, &cp, eng).unwrap().steps;
        }
        let el = t.elapsed().as_secs_f64();
        println!(
            "Full Convert* ({name}, d = 16): {reps} random starts, mean {:.0} steps (expected ~2^17 = 131072), {:.3e} steps/s, {:.1} µs/conversion",
            total as f64 / reps as f64,
            total as f64 / el,
            el * 1e6 / reps as f64
        );
    }
    println!("(checksum {cnt})\n");
}

fn rms_rows(g: &Group, quick: bool, no_baseline: bool, rng: &mut rand_chacha::ChaCha20Rng) {
    // 3. RMS multiplications per Table 3 row.
    println!("## RMS multiplications (RandMult of bits, both inputs prepared), Table 3 rows\n");
    println!(
        "| ε | B | R | d | ciphertext kB (ESDH) | RMS mult/s (coterie, one server) | paper | coterie / paper | plain-GMP baseline mult/s | coterie / baseline | conv. steps per mult | tables (MB) / precompute (s) per input |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
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
    // Optional filter: `rows=EPS` runs only the rows of that failure exponent (e.g. rows=15);
    // `skip-micro` skips sections 1-2.
    let only: Option<u32> =
        std::env::args().find_map(|a| a.strip_prefix("rows=").and_then(|v| v.parse().ok()));
    for &(eps, lb, r, paper_rate) in &paper {
        if only.is_some_and(|o| o != eps) {
            continue;
        }
        let params = Params::table3(eps, lb, r).unwrap();
        let (pk, ek0, ek1, _) = insecure_keygen_trusted_dealer(&params, rng).unwrap();
        let enc = pk.encryptor().unwrap();
        let l1x = enc.encrypt(&pk, &1u32.into(), rng);
        let tp = Instant::now();
        let ix = PreparedInput::new(&pk, &l1x, true).unwrap();
        let prep_s = tp.elapsed().as_secs_f64() / 2.0; // both families
        let table_mb = ix.table_len() as f64 * 192.0 / 2.0 / 1e6;
        let iy = PreparedInput::new(&pk, &enc.encrypt(&pk, &1u32.into(), rng), false).unwrap();
        let mut e0 = Evaluator::new(&pk, &ek0, 1).unwrap();
        let mut e1 = Evaluator::new(&pk, &ek1, 1).unwrap();
        let lx = e0.load(&ix).unwrap();
        let ly = e0.load(&iy).unwrap();
        let _ = (e1.load(&ix).unwrap(), e1.load(&iy).unwrap());
        // Pairing alone (one server), for the breakdown.
        let reps_pair = if quick { 20 } else { 200 };
        let tpair = Instant::now();
        for _ in 0..reps_pair {
            std::hint::black_box(e0.pair(&ix.x, &ly).unwrap());
        }
        let pair_us = tpair.elapsed().as_secs_f64() * 1e6 / reps_pair as f64;
        let yp = e0.one().sub(&ly);
        let tpair = Instant::now();
        for _ in 0..reps_pair {
            std::hint::black_box(e0.pair(&ix.x, &yp).unwrap());
        }
        let pair1_us = tpair.elapsed().as_secs_f64() * 1e6 / reps_pair as f64;
        eprintln!(
            "  [eps 2^-{eps} B={} R={r}] Pair: {pair_us:.1} µs (y from a load, {} + {} exponent bits), {pair1_us:.1} µs (1 − y, {} bits)",
            1 << lb,
            ly.yc_bound.significant_bits() + 1,
            ly.y_bound.significant_bits() + 1,
            yp.yc_bound.significant_bits() + 1
        );
        if std::env::args().any(|a| a == "diag") {
            let t = Instant::now();
            for _ in 0..5 {
                for ct in &ix.digits {
                    std::hint::black_box(e0.pair(ct, &ly).unwrap());
                }
            }
            eprintln!(
                "    Pair over the {} distinct digit ciphertexts: {:.1} µs each",
                ix.digits.len(),
                t.elapsed().as_secs_f64() * 1e6 / (5 * ix.digits.len()) as f64
            );
            for (nm, y) in [("y", &ly), ("1-y", &yp)] {
                let ey = &y.y + (BigInt::from(1) << y.y_bound.significant_bits());
                let eyc = (BigInt::from(1) << y.yc_bound.significant_bits()) - &y.yc;
                let nz = |e: &BigInt| {
                    e.to_digits::<u8>(rug::integer::Order::Lsf)
                        .iter()
                        .filter(|&&b| b != 0)
                        .count()
                };
                eprintln!(
                    "    {nm}: ey {} bits ({} nonzero bytes), eyc {} bits ({} nonzero bytes)",
                    ey.significant_bits(),
                    nz(&ey),
                    eyc.significant_bits(),
                    nz(&eyc)
                );
            }
        }
        let base_steps = e0.stats.steps;
        let base_conv = e0.stats.conversions;
        let mult_override: Option<usize> =
            std::env::args().find_map(|a| a.strip_prefix("mults=").and_then(|v| v.parse().ok()));
        let mults = if let Some(m) = mult_override {
            m
        } else if quick {
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
        let esdh = (s + 2 * (s as f64).sqrt().ceil() as usize + 1) as f64 * 192.0 / 1000.0;
        // Plain GMP baseline: the same s + 1 pairings with mpz_powm and the same walks with
        // mpz doubling + mpz_mod, for one server.
        let base_reps = if eps <= 5 {
            2
        } else if eps <= 10 && !quick {
            1
        } else {
            0
        };
        let base_rate = if base_reps > 0 && r == 8 && !no_baseline {
            let y = ly.clone();
            let t = Instant::now();
            for _ in 0..base_reps {
                gmp_baseline_mult(g, &pk, &l1x, &y, params.d);
            }
            format!("{:.1}", base_reps as f64 / t.elapsed().as_secs_f64())
        } else {
            "—".into()
        };
        let ratio_base = base_rate
            .parse::<f64>()
            .map_or("—".into(), |b| format!("{:.0}x", rate / b));
        println!(
            "| 2^-{eps} | {} | {r} | {} | {esdh:.1} | {rate:.1} | {paper_rate} | {:.2} | {base_rate} | {ratio_base} | {:.0} | {table_mb:.0} / {prep_s:.2} |",
            1 << lb,
            params.d,
            rate / paper_rate,
            (e0.stats.steps - base_steps) as f64 / mults as f64,
        );
        let _ = (base_conv, &e1);
    }
}

/// One RMS multiplication (non-randomized) done the plain way: `C^e1·A^e2` with GMP's
/// `mpz_powm` and the walk `h ← 2h mod p` with `mpz_mul_2exp` + `mpz_mod`, testing the top bits.
fn gmp_baseline_mult(
    g: &Group,
    pk: &coterie_hss::scheme::PublicKey,
    x: &coterie_hss::scheme::L1Input,
    y: &coterie_hss::scheme::L2Share,
    d: u32,
) -> u64 {
    use rug::Assign;
    let p = g.p();
    let ey = &y.y + (BigInt::from(1) << y.y_bound.significant_bits());
    let eyc = (BigInt::from(1) << y.yc_bound.significant_bits()) - &y.yc;
    let mut steps = 0u64;
    let n = g.bits();
    let lo = BigInt::from(1) << (n - 1);
    let hi = &lo + (BigInt::from(1) << (n - 1 - d));
    for ct in std::iter::once(&x.x).chain(&x.digits) {
        let c = ct.c.to_bigint().pow_mod(&ey, p).unwrap();
        let a = ct.a.to_bigint().pow_mod(&eyc, p).unwrap();
        let mut h = BigInt::from(&c * &a) % p;
        let mut t = BigInt::new();
        while !(h >= lo && h < hi) {
            t.assign(&h << 1u32);
            h.assign(&t % p);
            steps += 1;
        }
    }
    let _ = pk;
    steps
}
