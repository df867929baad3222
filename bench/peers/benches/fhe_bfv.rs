//! BFV benchmarks of fhe.rs (crate `fhe` 0.1.1) beside `crates/bfv/benches/bfv.rs`.
//!
//! Same ids as coterie's bench: group = operation, id = `fhe.rs/n={N}`. Parameters: t = 65537,
//! N = 8192 with moduli of 55, 55, 54, 54 bits (log q = 218) and N = 16384 with 6×55 + 2×54 bits
//! (log q = 438): the HE-standard 128-bit bounds, as coterie's `Params::he_std_128_n*`.
//! `COTERIE_BENCH_QUICK=1` runs N = 8192 only. Single thread (fhe.rs uses none).
//!
//! * `encrypt_pk`: `PublicKey::try_encrypt` of a SIMD plaintext.
//! * `encrypt_sk`: `SecretKey::try_encrypt`.
//! * `decrypt`: `SecretKey::try_decrypt` (to a `Plaintext`: scaled to mod t, no SIMD decoding).
//! * `decrypt_decode`: the same, then `Vec::<u64>::try_decode(.., Encoding::simd())`.
//! * `mul_relin`: `&x * &y` (two different ciphertexts) then `RelinearizationKey::relinearizes`.
//! * `mul_no_relin`: `&x * &y`.
//! * `rotate`: `EvaluationKey::rotates_columns_by(&x, 1)`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use fhe::bfv::{
    BfvParametersBuilder, Ciphertext, Encoding, EvaluationKeyBuilder, Plaintext, PublicKey,
    RelinearizationKey, SecretKey,
};
use fhe_traits::{FheDecoder, FheDecrypter, FheEncoder, FheEncrypter};
use rand09::SeedableRng;

fn bench(c: &mut Criterion) {
    let quick = std::env::var("COTERIE_BENCH_QUICK").is_ok();
    let mut sets: Vec<(usize, Vec<usize>)> = vec![(8192, vec![55, 55, 54, 54])];
    if !quick {
        sets.push((16384, vec![55, 55, 55, 55, 55, 55, 54, 54]));
    }
    let mut rng = rand09::rngs::StdRng::seed_from_u64(1);
    for (n, sizes) in sets {
        let par = BfvParametersBuilder::new()
            .set_degree(n)
            .set_plaintext_modulus(65537)
            .set_moduli_sizes(&sizes)
            .build_arc()
            .unwrap();
        let sk = SecretKey::random(&par, &mut rng);
        let pk = PublicKey::new(&sk, &mut rng);
        let rk = RelinearizationKey::new(&sk, &mut rng).unwrap();
        let ek = EvaluationKeyBuilder::new(&sk)
            .unwrap()
            .enable_column_rotation(1)
            .unwrap()
            .build(&mut rng)
            .unwrap();
        let vals: Vec<u64> = (0..n as u64).map(|i| i * 31 % 65537).collect();
        let pt = Plaintext::try_encode(&vals, Encoding::simd(), &par).unwrap();
        let x: Ciphertext = pk.try_encrypt(&pt, &mut rng).unwrap();
        let y: Ciphertext = pk.try_encrypt(&pt, &mut rng).unwrap();
        let id = BenchmarkId::new("fhe.rs", format!("n={n}"));
        c.benchmark_group("encrypt_pk")
            .bench_function(id.clone(), |b| {
                b.iter(|| -> Ciphertext { pk.try_encrypt(black_box(&pt), &mut rng).unwrap() })
            });
        c.benchmark_group("encrypt_sk")
            .bench_function(id.clone(), |b| {
                b.iter(|| -> Ciphertext { sk.try_encrypt(black_box(&pt), &mut rng).unwrap() })
            });
        c.benchmark_group("decrypt")
            .bench_function(id.clone(), |b| {
                b.iter(|| -> Plaintext { sk.try_decrypt(black_box(&x)).unwrap() })
            });
        c.benchmark_group("decrypt_decode")
            .bench_function(id.clone(), |b| {
                b.iter(|| {
                    let p: Plaintext = sk.try_decrypt(black_box(&x)).unwrap();
                    Vec::<u64>::try_decode(&p, Encoding::simd()).unwrap()
                })
            });
        c.benchmark_group("mul_relin")
            .bench_function(id.clone(), |b| {
                b.iter(|| {
                    let mut z = &x * black_box(&y);
                    rk.relinearizes(&mut z).unwrap();
                    z
                })
            });
        c.benchmark_group("mul_no_relin")
            .bench_function(id.clone(), |b| b.iter(|| &x * black_box(&y)));
        c.benchmark_group("rotate").bench_function(id.clone(), |b| {
            b.iter(|| ek.rotates_columns_by(black_box(&x), 1).unwrap())
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
