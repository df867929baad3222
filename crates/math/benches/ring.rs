//! Ring-arithmetic benchmarks of coterie-math, on the grid shared with the peer benchmarks
//! (bench/ring.sh runs this together with fhe-math and Lattigo and merges the results).
//!
//! Criterion ids: group = operation (`ntt_fwd`, `ntt_inv`, `rq_mul`, `base_ext`),
//! id = `{impl}/n={N}/limbs={L}`, where `L` names the grid point `log q = 55·L` of the peers (their
//! moduli are `L` primes of 55 bits):
//! * `coterie-55`: exactly the peers' moduli (`L` primes of 55 bits, scalar Barrett product);
//! * `coterie`: coterie's own choice at the same `log q` (±1 bit): `L' = ⌈55L/50⌉` primes of
//!   `⌈55L/L'⌉ ≤ 50` bits, so the AVX2+FMA product kernel applies (110 → 3×37, 220 → 5×44,
//!   440 → 9×49 bits).
//!
//! Set `COTERIE_BENCH_QUICK=1` to run only N = 8192.

use coterie_math::poly::{Poly, Representation, RingContext};
use coterie_math::primes::{ntt_primes, ntt_primes_excluding};
use coterie_math::rns::{BaseConverter, RnsBasis};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rand::SeedableRng;
use std::hint::black_box;
use std::time::Duration;

fn grid() -> Vec<(usize, usize)> {
    let quick = std::env::var("COTERIE_BENCH_QUICK").is_ok_and(|v| v == "1");
    let ns: &[usize] = if quick {
        &[8192]
    } else {
        &[4096, 8192, 16384, 32768]
    };
    let mut out = Vec::new();
    for &n in ns {
        for l in [2usize, 4, 8] {
            out.push((n, l));
        }
    }
    out
}

fn id(imp: &str, n: usize, l: usize) -> BenchmarkId {
    BenchmarkId::new(imp, format!("n={n}/limbs={l}"))
}

/// Moduli of a configuration: `(impl name, primes)` for grid point `(n, l)`.
fn configs(n: usize, l: usize) -> Vec<(&'static str, Vec<u64>)> {
    let logq = 55 * l;
    let l2 = logq.div_ceil(50);
    let bits = logq.div_ceil(l2) as u32;
    vec![
        ("coterie", ntt_primes(bits, n, l2).unwrap()),
        ("coterie-55", ntt_primes(55, n, l).unwrap()),
    ]
}

fn bench(c: &mut Criterion) {
    // Benchmark inputs only: a fixed seed is fine here (nothing secret).
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
    for (n, l) in grid() {
        for (imp, q) in configs(n, l) {
            let ctx = RingContext::new(n, &q).unwrap();
            let a = Poly::random(&ctx, Representation::Ntt, &mut rng);
            let b = Poly::random(&ctx, Representation::Ntt, &mut rng);

            let mut g = c.benchmark_group("ntt_fwd");
            g.sample_size(20).measurement_time(Duration::from_secs(2));
            g.bench_function(id(imp, n, l), |bch| {
                let mut x = a.clone();
                bch.iter(|| {
                    for i in 0..l {
                        ctx.plan(i).forward(x.limb_mut(i));
                    }
                    black_box(&x);
                })
            });
            g.finish();

            let mut g = c.benchmark_group("ntt_inv");
            g.sample_size(20).measurement_time(Duration::from_secs(2));
            g.bench_function(id(imp, n, l), |bch| {
                let mut x = a.clone();
                bch.iter(|| {
                    for i in 0..l {
                        ctx.plan(i).inverse(x.limb_mut(i));
                    }
                    black_box(&x);
                })
            });
            g.finish();

            let mut g = c.benchmark_group("rq_mul");
            g.sample_size(30).measurement_time(Duration::from_secs(2));
            g.bench_function(id(imp, n, l), |bch| {
                let mut out = Poly::zero(&ctx, Representation::Ntt);
                bch.iter(|| {
                    Poly::mul_into(&mut out, black_box(&a), black_box(&b)).unwrap();
                    black_box(&out);
                })
            });
            g.finish();

            let bits = 64 - q[0].leading_zeros();
            let p = ntt_primes_excluding(bits, n, q.len(), &q).unwrap();
            let conv = BaseConverter::new(&RnsBasis::new(&q).unwrap(), &RnsBasis::new(&p).unwrap())
                .unwrap();
            let mut ac = a.clone();
            ac.to_coeff();
            let mut g = c.benchmark_group("base_ext");
            g.sample_size(20).measurement_time(Duration::from_secs(2));
            g.bench_function(id(imp, n, l), |bch| {
                let mut out = vec![0u64; n * q.len()];
                bch.iter(|| {
                    conv.convert_exact(black_box(ac.data()), &mut out, n, true)
                        .unwrap();
                    black_box(&out);
                })
            });
            g.finish();
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
