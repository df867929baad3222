//! Seed 002 Table 5: the product (tensor and relinearization, `mul_relin`) of generalized BFV on
//! MatriGear's Params I and II for every `log p` in {128 … 4096}, and Params III (ordinary BFV
//! with `t = p`, `M = 1`) at 128, 256 and 512 bits, one thread. The amortized cost per slot is
//! the unit cost divided by `D` (bench/matrigear.sh derives it).
//!
//! Ids: group `mul_relin`, function `coterie`, value `set={I,II,III}/logp={bits}/d={D}`.
//! `COTERIE_BENCH_QUICK=1` runs log p = 128 and 1024 only (III: 128).

use coterie_bfv::params::{MATRIGEAR_LOG_P, MatriGearSet};
use coterie_bfv::{Context, Params, Plaintext, SecretKey};
use coterie_math::bigint::BigInt;
use coterie_math::prg::Csprng;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let quick = std::env::var("COTERIE_BENCH_QUICK").is_ok();
    let mut group = c.benchmark_group("mul_relin");
    for set in [MatriGearSet::I, MatriGearSet::II, MatriGearSet::III] {
        for bits in MATRIGEAR_LOG_P {
            if quick && bits != 128 && bits != 1024 {
                continue;
            }
            // Params III stops at 512 bits here (Params::matrigear refuses 1024 with its reason).
            if set == MatriGearSet::III && (bits > 512 || (quick && bits > 128)) {
                continue;
            }
            let ctx = Context::new(Params::matrigear(set, bits).unwrap()).unwrap();
            let d = ctx.slot_encoder().unwrap().slots();
            let mut rng = Csprng::insecure_from_seed_for_tests([7; 32]);
            let sk = SecretKey::generate(&ctx, &mut rng);
            let pk = sk.public_key(&mut rng);
            let rlk = sk.relin_key(&mut rng);
            let vals: Vec<BigInt> = (0..d as u32).map(|i| BigInt::from(i) * 7919u32).collect();
            let pt = Plaintext::encode_slots(&ctx, &vals).unwrap();
            let x = pk.encrypt(&pt, &mut rng).unwrap();
            let y = pk.encrypt(&pt, &mut rng).unwrap();
            let id = BenchmarkId::new("coterie", format!("set={set:?}/logp={bits}/d={d}"));
            group.bench_function(id, |b| b.iter(|| x.mul(black_box(&y), &rlk).unwrap()));
        }
    }
    group.finish();
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
