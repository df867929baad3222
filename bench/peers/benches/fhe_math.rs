//! Ring-arithmetic benchmarks of `fhe-math` 0.1.1 (fhe.rs) on the coterie peer grid.
//!
//! Criterion ids follow the convention shared with `crates/math/benches/ring.rs` and the Lattigo
//! binary: group = operation, id = `fhe-math/n={N}/limbs={L}`, so that `bench/ring_merge.py` can
//! read every implementation from the same criterion output tree.
//!
//! Moduli: the `L` largest 55-bit primes `p = 1 mod 2N`, found with fhe-math's own
//! `zq::primes::generate_prime`, walking down from `2^55` (the same primes as Lattigo's
//! downstream generator); for `base_ext` the next `L` primes below them form the basis `P`.
//!
//! `COTERIE_BENCH_QUICK=1` restricts the grid to N = 8192 (as in `crates/math/benches/ring.rs`);
//! `COTERIE_BENCH_PRINT_PRIMES=1` prints the moduli of each grid point to stderr.
//!
//! Operations (all single-threaded; fhe-math uses no threads):
//!
//! * `ntt_fwd` / `ntt_inv`: `Poly::change_representation` PowerBasis -> Ntt / Ntt -> PowerBasis on
//!   one polynomial with `L` limbs, in place. The representation tag is reset with the O(1)
//!   `override_representation` so that every iteration transforms again. Default
//!   (constant-time) code path.
//! * `rq_mul`: `a *= &b` with both operands in `Representation::Ntt` (pointwise product over all
//!   limbs, result in the NTT domain, in place; no allocation). Constant-time path.
//! * `ntt_fwd_vt`, `ntt_inv_vt`, `rq_mul_vt`: the same with
//!   `Poly::allow_variable_time_computations` set (fhe-math's faster variable-time kernels).
//! * `base_ext`: `Poly::scale(&Scaler)` with a `rq::scaler::Scaler` from the context `Q` to the
//!   context `P` (disjoint primes) and `ScalingFactor::one()`: the exact, centred fast base
//!   conversion of `rns::RnsScaler`, coefficient domain in and out. The public API returns a new
//!   `Poly`, so the allocation of the `L x N` output is part of the measured time.

use std::cell::OnceCell;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use fhe_math::rns::ScalingFactor;
use fhe_math::rq::scaler::Scaler;
use fhe_math::rq::{Context, Poly, Representation};
use fhe_math::zq::primes::generate_prime;

/// Name of this implementation in the benchmark ids.
const IMPL: &str = "fhe-math";
/// Ring degrees of the grid.
const DEGREES: [usize; 4] = [4096, 8192, 16384, 32768];
/// Numbers of 55-bit primes in `Q` on the grid.
const LIMBS: [usize; 3] = [2, 4, 8];
/// Bit size of every prime.
const PRIME_BITS: usize = 55;

/// Everything one grid point needs; built on first use so that filtered runs stay cheap.
struct Setup {
    ctx_q: Arc<Context>,
    scaler: Scaler,
    /// Random polynomial in the coefficient domain of `Q`.
    coeff: Poly,
    /// Two random polynomials in the NTT domain of `Q`.
    ntt_a: Poly,
    ntt_b: Poly,
}

struct Point {
    n: usize,
    limbs: usize,
    setup: OnceCell<Setup>,
}

/// The `count` largest `PRIME_BITS`-bit primes congruent to 1 modulo `2n`, in decreasing order.
fn ntt_primes(n: usize, count: usize) -> Vec<u64> {
    let mut upper = 1u64 << PRIME_BITS;
    (0..count)
        .map(|_| {
            let p = generate_prime(PRIME_BITS, 2 * n as u64, upper)
                .unwrap_or_else(|| panic!("fhe-math found no {count} NTT primes for n = {n}"));
            upper = p;
            p
        })
        .collect()
}

fn seed(tag: u8, n: usize, limbs: usize) -> [u8; 32] {
    let mut s = [0u8; 32];
    s[0] = tag;
    s[1..9].copy_from_slice(&(n as u64).to_le_bytes());
    s[9..17].copy_from_slice(&(limbs as u64).to_le_bytes());
    s
}

impl Point {
    fn get(&self) -> &Setup {
        self.setup.get_or_init(|| {
            let primes = ntt_primes(self.n, 2 * self.limbs);
            if std::env::var_os("COTERIE_BENCH_PRINT_PRIMES").is_some() {
                eprintln!(
                    "fhe-math primes n={} limbs={} Q={:?} P={:?}",
                    self.n,
                    self.limbs,
                    &primes[..self.limbs],
                    &primes[self.limbs..]
                );
            }
            let ctx_q = Context::new_arc(&primes[..self.limbs], self.n).expect("context Q");
            let ctx_p = Context::new_arc(&primes[self.limbs..], self.n).expect("context P");
            let scaler = Scaler::new(&ctx_q, &ctx_p, ScalingFactor::one()).expect("scaler Q->P");
            let (n, l) = (self.n, self.limbs);
            Setup {
                coeff: Poly::random_from_seed(&ctx_q, Representation::PowerBasis, seed(1, n, l)),
                ntt_a: Poly::random_from_seed(&ctx_q, Representation::Ntt, seed(2, n, l)),
                ntt_b: Poly::random_from_seed(&ctx_q, Representation::Ntt, seed(3, n, l)),
                ctx_q,
                scaler,
            }
        })
    }

    fn id(&self) -> BenchmarkId {
        BenchmarkId::new(IMPL, format!("n={}/limbs={}", self.n, self.limbs))
    }
}

/// The grid; `COTERIE_BENCH_QUICK=1` (set by `bench/ring.sh --quick`) keeps N = 8192 only.
fn grid() -> Vec<Point> {
    let quick = std::env::var("COTERIE_BENCH_QUICK").is_ok_and(|v| v == "1");
    DEGREES
        .iter()
        .filter(|&&n| !quick || n == 8192)
        .flat_map(|&n| {
            LIMBS.iter().map(move |&limbs| Point {
                n,
                limbs,
                setup: OnceCell::new(),
            })
        })
        .collect()
}

/// A copy of `p` with fhe-math's variable-time kernels switched on or off.
fn with_vt(p: &Poly, vt: bool) -> Poly {
    let mut q = p.clone();
    if vt {
        // SAFETY: benchmark data only; nothing secret is processed.
        unsafe { q.allow_variable_time_computations() }
    } else {
        q.disallow_variable_time_computations();
    }
    q
}

fn bench_ntt(c: &mut Criterion, points: &[Point], inverse: bool, vt: bool) {
    let op = match (inverse, vt) {
        (false, false) => "ntt_fwd",
        (true, false) => "ntt_inv",
        (false, true) => "ntt_fwd_vt",
        (true, true) => "ntt_inv_vt",
    };
    let (from, to) = if inverse {
        (Representation::Ntt, Representation::PowerBasis)
    } else {
        (Representation::PowerBasis, Representation::Ntt)
    };
    let mut group = c.benchmark_group(op);
    for pt in points {
        group.bench_function(pt.id(), |b| {
            let s = pt.get();
            let mut p = with_vt(&s.coeff, vt);
            // SAFETY: only the tag changes; the data is a valid element of either domain.
            unsafe { p.override_representation(from) };
            b.iter(|| {
                p.change_representation(to);
                // SAFETY: as above; resets the tag so that the next iteration transforms again.
                unsafe { p.override_representation(from) };
                black_box(&mut p);
            });
        });
    }
    group.finish();
}

fn bench_rq_mul(c: &mut Criterion, points: &[Point], vt: bool) {
    let mut group = c.benchmark_group(if vt { "rq_mul_vt" } else { "rq_mul" });
    for pt in points {
        group.bench_function(pt.id(), |b| {
            let s = pt.get();
            let mut a = with_vt(&s.ntt_a, vt);
            let m = with_vt(&s.ntt_b, vt);
            b.iter(|| {
                a *= black_box(&m);
                black_box(&mut a);
            });
        });
    }
    group.finish();
}

fn bench_base_ext(c: &mut Criterion, points: &[Point]) {
    let mut group = c.benchmark_group("base_ext");
    for pt in points {
        group.bench_function(pt.id(), |b| {
            let s = pt.get();
            assert!(Arc::ptr_eq(s.coeff.ctx(), &s.ctx_q));
            b.iter(|| black_box(s.coeff.scale(&s.scaler).expect("scale")));
        });
    }
    group.finish();
}

fn ring(c: &mut Criterion) {
    let points = grid();
    bench_ntt(c, &points, false, false);
    bench_ntt(c, &points, true, false);
    bench_rq_mul(c, &points, false);
    bench_base_ext(c, &points);
    bench_ntt(c, &points, false, true);
    bench_ntt(c, &points, true, true);
    bench_rq_mul(c, &points, true);
}

fn config() -> Criterion {
    // Small samples for a noisy 2-core box; the command line (e.g. --sample-size) overrides these.
    Criterion::default()
        .sample_size(15)
        .warm_up_time(Duration::from_millis(800))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = ring
}
criterion_main!(benches);
