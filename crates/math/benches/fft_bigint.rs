//! Benchmarks of the torus FFT, the exact integer products and the big-integer candidates.
//!
//! Groups:
//! * `fft/...` — `coterie_math::fft` at N = 1024, 2048: forward (u64 torus), backward-add, and a
//!   full torus × digits product (two forwards, pointwise multiply, backward) for u32, u64 direct
//!   and u64 split (three 22-bit limbs).
//! * `exact/...` — `coterie_math::intpoly`: the NTT-based exact product modulo 2^64 with a
//!   prepared operand, and the ternary × torus add/subtract loop.
//! * `bigint_mulmod/{bits}`, `bigint_powmod/{bits}` — rug (GMP) vs num-bigint 0.5 vs
//!   crypto-bigint 0.7 at 1536, 2048, 3072, 4096 bits: one random odd modulus and operands per
//!   size, results cross-checked equal before timing.
//!
//! Small sample sizes (a 2-core box). Results are summarised in
//! `bench/results/fft-bigint-bench.txt`.
use std::hint::black_box;
use std::time::Duration;

use coterie_math::bigint::{BigInt, random_below};
use coterie_math::fft::FftPlan;
use coterie_math::intpoly::{ExactMul64, negacyclic_mul_small_add};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use crypto_bigint::modular::{BoxedMontyForm, BoxedMontyParams};
use crypto_bigint::{BoxedUint, NonZero, Odd};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

fn digits(rng: &mut ChaCha20Rng, n: usize) -> Vec<i64> {
    (0..n)
        .map(|_| (rng.next_u64() % 1025) as i64 - 512)
        .collect()
}

fn ternary(rng: &mut ChaCha20Rng, n: usize) -> Vec<i64> {
    // P(±1) = 0.1135 each, as in seed 003's RLWE keys.
    (0..n)
        .map(|_| {
            let u = rng.next_u32() as f64 / 4_294_967_296.0;
            if u < 0.1135 {
                -1
            } else if u < 0.227 {
                1
            } else {
                0
            }
        })
        .collect()
}

fn bench_fft(c: &mut Criterion) {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let mut g = c.benchmark_group("fft");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    for n in [1024usize, 2048] {
        let plan = FftPlan::new(n).unwrap();
        let mut s = plan.new_scratch();
        let a: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
        let a32: Vec<u32> = a.iter().map(|&x| x as u32).collect();
        let d = digits(&mut rng, n);
        let (mut fa, mut fd, mut acc) = (
            plan.zero_fourier(),
            plan.zero_fourier(),
            plan.zero_fourier(),
        );
        let mut sp = plan.zero_split();
        let mut acc_sp = plan.zero_split();
        let mut out = vec![0u64; n];
        let mut out32 = vec![0u32; n];
        plan.forward_i64(&d, &mut fd, &mut s);
        plan.forward_torus_u64(&a, &mut fa, &mut s);
        g.bench_function(BenchmarkId::new("forward_u64", n), |b| {
            b.iter(|| plan.forward_torus_u64(black_box(&a), &mut fa, &mut s))
        });
        g.bench_function(BenchmarkId::new("backward_add_u64", n), |b| {
            b.iter(|| plan.backward_add_torus_u64(black_box(&fa), &mut out, &mut s))
        });
        g.bench_function(BenchmarkId::new("product_u32", n), |b| {
            b.iter(|| {
                plan.forward_torus_u32(black_box(&a32), &mut fa, &mut s);
                plan.forward_i64(black_box(&d), &mut fd, &mut s);
                acc.set_mul(&fa, &fd);
                plan.backward_add_torus_u32(&acc, &mut out32, &mut s);
            })
        });
        g.bench_function(BenchmarkId::new("product_u64_direct", n), |b| {
            b.iter(|| {
                plan.forward_torus_u64(black_box(&a), &mut fa, &mut s);
                plan.forward_i64(black_box(&d), &mut fd, &mut s);
                acc.set_mul(&fa, &fd);
                plan.backward_add_torus_u64(&acc, &mut out, &mut s);
            })
        });
        g.bench_function(BenchmarkId::new("product_u64_split", n), |b| {
            b.iter(|| {
                plan.forward_torus_u64_split(black_box(&a), &mut sp, &mut s);
                plan.forward_i64(black_box(&d), &mut fd, &mut s);
                acc_sp.set_zero();
                acc_sp.mul_acc(&sp, &fd);
                plan.backward_add_torus_u64_split(&acc_sp, &mut out, &mut s);
            })
        });
    }
    g.finish();
}

fn bench_exact(c: &mut Criterion) {
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let mut g = c.benchmark_group("exact");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    for n in [1024usize, 2048] {
        let m = ExactMul64::new(n).unwrap();
        let a: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
        let b: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
        let r = ternary(&mut rng, n);
        let pb = m.prepare(&b);
        let mut s = m.new_scratch();
        let mut out = vec![0u64; n];
        g.bench_function(
            BenchmarkId::new(format!("ntt_prepared_{}", m.backend_name()), n),
            |bch| bch.iter(|| m.mul_prepared(&mut out, black_box(&a), &pb, &mut s)),
        );
        g.bench_function(BenchmarkId::new("ternary_x_torus", n), |bch| {
            bch.iter(|| {
                out.fill(0);
                negacyclic_mul_small_add(&mut out, black_box(&r), black_box(&b));
            })
        });
    }
    g.finish();
}

struct Operands {
    m: BigInt,
    a: BigInt,
    b: BigInt,
    e: BigInt,
}

fn operands(rng: &mut ChaCha20Rng, bits: u32) -> Operands {
    let top = BigInt::from(1) << bits;
    // Random odd modulus with the top bit set.
    let m =
        random_below(rng, &(BigInt::from(1) << (bits - 1))).unwrap() + BigInt::from(&top >> 1u32);
    let m = m | BigInt::from(1);
    let a = random_below(rng, &m).unwrap();
    let b = random_below(rng, &m).unwrap();
    let e = random_below(rng, &m).unwrap();
    Operands { m, a, b, e }
}

fn to_num(x: &BigInt) -> num_bigint::BigUint {
    num_bigint::BigUint::from_bytes_le(&x.to_digits::<u8>(rug::integer::Order::Lsf))
}

fn to_cb(x: &BigInt, bits: u32) -> BoxedUint {
    BoxedUint::from_le_slice(&x.to_digits::<u8>(rug::integer::Order::Lsf), bits).unwrap()
}

fn cb_to_rug(x: &BoxedUint) -> BigInt {
    BigInt::from_digits(&x.to_le_bytes(), rug::integer::Order::Lsf)
}

fn bench_bigint(c: &mut Criterion) {
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    for bits in [1536u32, 2048, 3072, 4096] {
        let Operands { m, a, b, e } = operands(&mut rng, bits);
        // num-bigint
        let (nm, na, nb, ne) = (to_num(&m), to_num(&a), to_num(&b), to_num(&e));
        // crypto-bigint
        let (cm, ca, cbv, ce) = (
            to_cb(&m, bits),
            to_cb(&a, bits),
            to_cb(&b, bits),
            to_cb(&e, bits),
        );
        let cm_odd = Odd::new(cm.clone()).unwrap();
        let cm_nz = NonZero::new(cm.clone()).unwrap();
        let params = BoxedMontyParams::new_vartime(cm_odd.clone());
        let ma = BoxedMontyForm::new(ca.clone(), &params);
        let mb = BoxedMontyForm::new(cbv.clone(), &params);

        // Cross-check all results before timing.
        let want_mul = BigInt::from(&a * &b) % &m;
        let want_pow = BigInt::from(a.pow_mod_ref(&e, &m).unwrap());
        assert_eq!(to_num(&want_mul), (&na * &nb) % &nm);
        assert_eq!(cb_to_rug(&ca.mul_mod(&cbv, &cm_nz)), want_mul);
        assert_eq!(cb_to_rug(&(&ma * &mb).retrieve()), want_mul);
        assert_eq!(to_num(&want_pow), na.modpow(&ne, &nm));
        assert_eq!(cb_to_rug(&ma.pow(&ce).retrieve()), want_pow);
        assert_eq!(BigInt::from(a.secure_pow_mod_ref(&e, &m)), want_pow);

        let mut g = c.benchmark_group(format!("bigint_mulmod/{bits}"));
        g.sample_size(20)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(1));
        let mut r = BigInt::new();
        g.bench_function("rug", |bch| {
            bch.iter(|| {
                r.assign_mul_ref(black_box(&a), black_box(&b));
                r %= &m;
            })
        });
        g.bench_function("num-bigint", |bch| {
            bch.iter(|| (black_box(&na) * black_box(&nb)) % &nm)
        });
        g.bench_function("crypto-bigint-mul_mod", |bch| {
            bch.iter(|| black_box(&ca).mul_mod(black_box(&cbv), &cm_nz))
        });
        g.bench_function("crypto-bigint-monty", |bch| {
            bch.iter(|| black_box(&ma) * black_box(&mb))
        });
        g.finish();

        let mut g = c.benchmark_group(format!("bigint_powmod/{bits}"));
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_secs(1));
        g.bench_function("rug", |bch| {
            bch.iter(|| BigInt::from(black_box(&a).pow_mod_ref(&e, &m).unwrap()))
        });
        g.bench_function("rug-secure", |bch| {
            bch.iter(|| BigInt::from(black_box(&a).secure_pow_mod_ref(&e, &m)))
        });
        g.bench_function("num-bigint", |bch| {
            bch.iter(|| black_box(&na).modpow(&ne, &nm))
        });
        g.bench_function("crypto-bigint-monty", |bch| {
            bch.iter(|| black_box(&ma).pow(&ce))
        });
        g.finish();
    }
}

trait AssignMulRef {
    fn assign_mul_ref(&mut self, a: &BigInt, b: &BigInt);
}
impl AssignMulRef for BigInt {
    fn assign_mul_ref(&mut self, a: &BigInt, b: &BigInt) {
        use rug::Assign;
        self.assign(a * b);
    }
}

criterion_group!(benches, bench_fft, bench_exact, bench_bigint);
criterion_main!(benches);
