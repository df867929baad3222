//! Sampler throughput of coterie-math: every sampler at N = 8192 outputs, and the CRS expansion
//! `expand_uniform_mod` for 4 moduli × 8192. Criterion reports time per batch and, through
//! `Throughput::Elements`, samples per second.
//!
//! Criterion ids: group `sample`, ids `<sampler>/n=8192`; group `prg`, ids `xof/bytes=65536` and
//! `expand_uniform_mod/4x8192`. Sample sizes are small so a 2-core box finishes in about a minute.

use coterie_math::prg::{Csprng, Xof, expand_uniform_mod};
use coterie_math::sample::{
    DiscreteGaussian, centered_binomial, ternary, ternary_uniform, uniform_binary, uniform_mod,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::Rng;
use std::hint::black_box;
use std::time::Duration;

const N: usize = 8192;

fn samplers(c: &mut Criterion) {
    // Benchmark inputs only: a fixed seed is fine here (nothing secret).
    let mut rng = Csprng::insecure_from_seed_for_tests([1; 32]);
    let mut g = c.benchmark_group("sample");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .throughput(Throughput::Elements(N as u64));
    let mut s = vec![0i64; N];
    let mut u = vec![0u64; N];

    g.bench_function("csprng_next_u64/n=8192", |b| {
        b.iter(|| {
            for x in u.iter_mut() {
                *x = rng.next_u64();
            }
            black_box(&u);
        })
    });
    g.bench_function("uniform_mod_q60/n=8192", |b| {
        b.iter(|| uniform_mod(&mut rng, (1 << 60) - 93, black_box(&mut u)).unwrap())
    });
    g.bench_function("uniform_mod_q17/n=8192", |b| {
        b.iter(|| uniform_mod(&mut rng, 17, black_box(&mut u)).unwrap())
    });
    g.bench_function("uniform_binary/n=8192", |b| {
        b.iter(|| uniform_binary(&mut rng, black_box(&mut s)))
    });
    g.bench_function("ternary_p0.113546/n=8192", |b| {
        b.iter(|| ternary(&mut rng, 0.113546, black_box(&mut s)).unwrap())
    });
    g.bench_function("ternary_uniform/n=8192", |b| {
        b.iter(|| ternary_uniform(&mut rng, black_box(&mut s)))
    });
    for eta in [2u32, 21] {
        g.bench_function(format!("centered_binomial_eta{eta}/n=8192"), |b| {
            b.iter(|| centered_binomial(&mut rng, eta, black_box(&mut s)).unwrap())
        });
    }
    for (name, sigma) in [
        ("3.2", 3.2),
        ("19.2", 19.2),
        ("2^10", 1024.0),
        ("2^20", 1_048_576.0),
    ] {
        let dg = DiscreteGaussian::new(sigma).unwrap();
        g.bench_function(format!("gaussian_sigma{name}/n=8192"), |b| {
            b.iter(|| dg.fill(&mut rng, black_box(&mut s)))
        });
    }
    g.finish();

    let mut g = c.benchmark_group("gaussian_setup");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for (name, sigma) in [("3.2", 3.2), ("2^20", 1_048_576.0)] {
        g.bench_function(format!("table_sigma{name}"), |b| {
            b.iter(|| DiscreteGaussian::new(black_box(sigma)).unwrap())
        });
    }
    g.finish();
}

fn prg(c: &mut Criterion) {
    let seed = [7u8; 32];
    let mut g = c.benchmark_group("prg");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    let mut bytes = vec![0u8; 1 << 16];
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("xof/bytes=65536", |b| {
        let mut x = Xof::new(&seed, b"bench/v1", 0);
        b.iter(|| x.fill_bytes(black_box(&mut bytes)))
    });
    let moduli = [
        (1u64 << 60) - 93,
        0x0fff_ffff_fffc_0001,
        (1 << 55) - 55,
        (1 << 36) - 5,
    ];
    g.throughput(Throughput::Elements(4 * N as u64));
    g.bench_function("expand_uniform_mod/4x8192", |b| {
        b.iter(|| expand_uniform_mod(&seed, b"bench/crs/v1", black_box(&moduli), N).unwrap())
    });
    g.finish();
}

criterion_group!(benches, samplers, prg);
criterion_main!(benches);
