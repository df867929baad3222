//! Single-threaded BFV benchmarks of coterie-bfv on the HE-standard 128-bit sets
//! N = 8192 (log q = 218) and N = 16384 (log q = 438), t = 65537.
//!
//! Ids: group = operation (`encrypt_pk`, `encrypt_sk`, `decrypt`
//! (to the plaintext polynomial mod t), `decrypt_decode` (and SIMD decoding), `mul_no_relin`,
//! `mul_relin`, `rotate`), id =
//! `coterie/n={N}`, the convention shared with `bench/peers/benches/fhe_bfv.rs` and
//! `bench/lattigo-bfv`. `COTERIE_BENCH_QUICK=1` runs N = 8192 only. The process keeps freed
//! heap memory (`coterie_math::buffers::keep_freed_heap`), as `coterie`'s binary does.

use coterie_bfv::{Context, Params, Plaintext, SecretKey};
use coterie_math::prg::Csprng;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    // The allocator policy of coterie's party processes (their `main` sets it; SEAL and Lattigo
    // pool their memory too): freed polynomial buffers are reused instead of being faulted in
    // afresh. `COTERIE_KEEP_FREED_HEAP=0` measures without it.
    coterie_math::buffers::keep_freed_heap();
    let quick = std::env::var("COTERIE_BENCH_QUICK").is_ok();
    let sets: Vec<Params> = if quick {
        vec![Params::he_std_128_n8192(65537).unwrap()]
    } else {
        vec![
            Params::he_std_128_n8192(65537).unwrap(),
            Params::he_std_128_n16384(65537).unwrap(),
        ]
    };
    for params in sets {
        let n = params.degree();
        let ctx = Context::new(params).unwrap();
        let mut rng = Csprng::insecure_from_seed_for_tests([1; 32]);
        let sk = SecretKey::generate(&ctx, &mut rng);
        let pk = sk.public_key(&mut rng);
        let rlk = sk.relin_key(&mut rng);
        let gks = sk.galois_keys(&[1], false, &mut rng).unwrap();
        let vals: Vec<u64> = (0..n as u64).map(|i| i * 31 % 65537).collect();
        let pt = Plaintext::encode_simd(&ctx, &vals).unwrap();
        let x = pk.encrypt(&pt, &mut rng).unwrap();
        let y = pk.encrypt(&pt, &mut rng).unwrap();
        let id = BenchmarkId::new("coterie", format!("n={n}"));
        c.benchmark_group("encrypt_pk")
            .bench_function(id.clone(), |b| {
                b.iter(|| pk.encrypt(black_box(&pt), &mut rng).unwrap())
            });
        c.benchmark_group("encrypt_sk")
            .bench_function(id.clone(), |b| {
                b.iter(|| {
                    sk.encrypt_symmetric_seeded(black_box(&pt), &mut rng)
                        .unwrap()
                })
            });
        c.benchmark_group("decrypt")
            .bench_function(id.clone(), |b| {
                b.iter(|| sk.decrypt(black_box(&x)).unwrap())
            });
        c.benchmark_group("decrypt_decode")
            .bench_function(id.clone(), |b| {
                b.iter(|| sk.decrypt(black_box(&x)).unwrap().decode_simd().unwrap())
            });
        c.benchmark_group("mul_relin")
            .bench_function(id.clone(), |b| {
                b.iter(|| x.mul(black_box(&y), &rlk).unwrap())
            });
        c.benchmark_group("mul_no_relin")
            .bench_function(id.clone(), |b| {
                b.iter(|| x.mul_no_relin(black_box(&y)).unwrap())
            });
        c.benchmark_group("rotate").bench_function(id.clone(), |b| {
            b.iter(|| x.rotate_rows(1, black_box(&gks)).unwrap())
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
