//! Seed 001 (issue 13): multi-key BFV with threshold proxy re-encryption at the paper's
//! parameters ([`Params::seed001`]: n = 8192, log q = 220, t = 256, Gaussian secrets) with
//! Table 2's gadget per number of users ([`mk::paper_decomposition`]), one thread, timing the
//! work of **one party** as the paper's Tables 4–8 define it:
//!
//! | group (op) | id | what one iteration does | paper |
//! |---|---|---|---|
//! | `keygen` | `k` | one user's DecKeyGen + EncKeyGen + RelinKeyGen: `SecretKey::generate`, `public_key`, `MkRelinKey::generate` (ℓ rows of Table 2) | Table 4 |
//! | `encrypt` | – | one user's `mk::encrypt` (independent of `k`) | Table 4 |
//! | `hom_add` | `k` | `mk::add` of two ciphertexts each under all `k` users (`k + 1` parts each: each is the sum of one fresh ciphertext per user) | Table 4 |
//! | `hom_mul_otf` | `k` | `mk::mul` (tensor + relinearization) of two such `k`-user ciphertexts, relinearized on the fly, grouped per user | Table 4 |
//! | `hom_mul_shared` | `k` | the same product relinearized with the precomputed pairwise keys (`Relin::Shared`) | Table 4 |
//! | `shared_relin_key` | `k` | the precomputation `SharedRelinKey::generate` from the `k` users' keys (once per user set) | – |
//! | `part_dec` | `k` | one user's `mk::part_dec` of a `k`-user ciphertext (σ = 2^20 smudging) | – |
//! | `merge` | `k` | `mk::merge` of the `k` partial decryptions | – |
//! | `thr_dec` | `k` | one user's `part_dec` followed by the `merge` of all `k` partials (the others precomputed): Table 5's "Exec." (max per party) | Table 5 |
//! | `rekeygen` | `proxies` | the delegatee's `MaskingKey::sample` + the delegator's `rekey_shares` into `N` shares | Table 6 |
//! | `reenc_share` | `k` | one proxy's `reenc::reenc_share` of a `k`-user ciphertext (`k` products + smudging) | – |
//! | `reenc_combine` | `k`, `proxies` | the delegatee's `reenc::reenc_combine` of the `N` proxy shares | – |
//! | `reenc` | `k`, `proxies` | one proxy's `reenc_share` followed by the `reenc_combine` of all `N` shares: Table 7's "Exec." | Table 7 |
//! | `decrypt_reenc` | `k` | the delegatee's `reenc::decrypt_reencrypted` with its `k` masking keys | Table 8 |
//!
//! Breakdowns (what the operations above spend their time on; no paper figure):
//!
//! | group (op) | id | what one iteration does |
//! |---|---|---|
//! | `hom_mul_tensor` | `k` | `mk::mul_no_relin`: the exact tensor product alone (`(k+1)²` parts) |
//! | `relin_otf` | `k` | `mk::relinearize` of that tensor on the fly, grouped |
//! | `ciphertext_digest` | `k` | `mk::ciphertext_digest` of a `k`-user ciphertext (BLAKE3 over its `k + 1` parts), which `part_dec`, `merge`, `reenc_share` and `reenc_combine` each compute to bind shares to the ciphertext |
//! | `sample_smudging` | – | `n` samples of the σ = 2^20 discrete Gaussian (coterie-math's `DiscreteGaussian`), the smudging term of every `part_dec` and `reenc_share` |
//! | `sample_gaussian` | – | `n` samples of the σ = 3.2 discrete Gaussian (secrets, errors, `u`) |
//! | `sample_uniform` | – | one uniform element of `R_q` (`Poly::random`, NTT form): a masking key or a re-encryption key share |
//!
//! Ids: group = op, function `coterie`, value `k={k}` / `proxies={N}` / `k={k}/proxies={N}`
//! (bench/benchrec.py turns them into record params). The setup checks that every path decrypts
//! to the right plaintext before timing it. `COTERIE_BENCH_QUICK=1` runs k = 2 and 8 and
//! N = 1 and 8 only, with shorter measurement times.

use coterie_bfv::mk::{self, MkCrs, MkRelinKey, Relin, SharedRelinKey, Smudging};
use coterie_bfv::reenc::{self, MaskingKey};
use coterie_bfv::{Ciphertext, Context, Params, Plaintext, PublicKey, SecretKey};
use coterie_math::poly::{Poly, Representation};
use coterie_math::prg::Csprng;
use coterie_math::sample::DiscreteGaussian;
use criterion::measurement::WallTime;
use criterion::{
    BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, criterion_group, criterion_main,
};
use std::hint::black_box;
use std::time::Duration;

/// The delegatee's id (not among the users 1 … k).
const DELEGATEE: u64 = 1000;

/// `k` users' keys and the `k`-user ciphertexts the benchmarks work on.
struct Users {
    sks: Vec<SecretKey>,
    rlks: Vec<MkRelinKey>,
    crs: MkCrs,
    /// Σ_i Enc_i(i + 1): a ciphertext under all k users (k + 1 parts).
    x: Ciphertext,
    /// Σ_i Enc_i(2i + 3).
    y: Ciphertext,
    /// The plaintext constants of `x` and `y` (coefficient 0, mod t).
    mx: u64,
    my: u64,
}

fn ids(k: usize) -> impl Iterator<Item = u64> {
    1..=k as u64
}

fn constant(ctx: &Context, v: u64) -> Plaintext {
    Plaintext::encode_coefficients(ctx, &[v]).unwrap()
}

fn users(ctx: &Context, k: usize, rng: &mut Csprng) -> Users {
    let crs = MkCrs::new(ctx, &[13; 32], mk::paper_decomposition(k).unwrap()).unwrap();
    let sks: Vec<SecretKey> = ids(k).map(|_| SecretKey::generate(ctx, rng)).collect();
    let pks: Vec<PublicKey> = sks.iter().map(|s| s.public_key(rng)).collect();
    let rlks: Vec<MkRelinKey> = sks
        .iter()
        .zip(ids(k))
        .map(|(s, id)| MkRelinKey::generate(s, id, &crs, rng).unwrap())
        .collect();
    let sum = |f: &dyn Fn(u64) -> u64, rng: &mut Csprng| {
        let mut acc: Option<Ciphertext> = None;
        for (pk, id) in pks.iter().zip(ids(k)) {
            let c = mk::encrypt(pk, id, &constant(ctx, f(id)), rng).unwrap();
            acc = Some(match acc {
                None => c,
                Some(a) => mk::add(&a, &c).unwrap(),
            });
        }
        acc.unwrap()
    };
    let x = sum(&|id| id, rng);
    let y = sum(&|id| 2 * id + 1, rng);
    let t = 256;
    let mx = ids(k).sum::<u64>() % t;
    let my = ids(k).map(|id| 2 * id + 1).sum::<u64>() % t;
    Users {
        sks,
        rlks,
        crs,
        x,
        y,
        mx,
        my,
    }
}

/// Threshold decryption of `ct` by all users (the check of the setup).
fn thr_decrypt(u: &Users, ct: &Ciphertext, rng: &mut Csprng) -> u64 {
    let parts: Vec<_> = u
        .sks
        .iter()
        .zip(ids(u.sks.len()))
        .map(|(s, id)| mk::part_dec(s, id, ct, &Smudging::PaperSigma20, rng).unwrap())
        .collect();
    mk::merge(ct, &parts).unwrap().coefficients().unwrap()[0]
}

/// A group of 10 flat samples (every sample the same number of iterations: the slow products
/// run 10 times, not criterion's linear 55).
fn group<'a>(
    c: &'a mut Criterion,
    (warm, meas): (Duration, Duration),
    name: &str,
) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(name);
    g.sample_size(10)
        .warm_up_time(warm)
        .measurement_time(meas)
        .sampling_mode(SamplingMode::Flat);
    g
}

fn bench(c: &mut Criterion) {
    let quick = std::env::var("COTERIE_BENCH_QUICK").is_ok();
    let ks: &[usize] = if quick { &[2, 8] } else { &[2, 4, 8] };
    let ns: &[usize] = if quick { &[1, 8] } else { &[1, 2, 4, 8] };
    let (warm, meas) = if quick {
        (Duration::from_millis(200), Duration::from_secs(1))
    } else {
        (Duration::from_millis(500), Duration::from_secs(3))
    };
    let ctx = Context::new(Params::seed001().unwrap()).unwrap();
    let mut rng = Csprng::insecure_from_seed_for_tests([1; 32]);
    let smdg = Smudging::PaperSigma20;
    let tm = (warm, meas);

    // Encrypt (Table 4: one value for every k).
    {
        let sk = SecretKey::generate(&ctx, &mut rng);
        let pk = sk.public_key(&mut rng);
        let pt = constant(&ctx, 42);
        let mut g = group(c, tm, "encrypt");
        g.bench_function(BenchmarkId::new("coterie", "k=all"), |b| {
            b.iter(|| mk::encrypt(&pk, 1, black_box(&pt), &mut rng).unwrap())
        });
        g.finish();
    }

    // Samplers (breakdowns).
    {
        let n = ctx.degree();
        let mut out = vec![0i64; n];
        let smudge = DiscreteGaussian::new(mk::PAPER_SMUDGING_SIGMA).unwrap();
        let small = DiscreteGaussian::new(3.2).unwrap();
        let ring = &ctx.ring(ctx.max_level()).unwrap();
        for (name, gauss) in [("sample_smudging", &smudge), ("sample_gaussian", &small)] {
            let mut g = group(c, tm, name);
            g.bench_function(BenchmarkId::new("coterie", format!("n={n}")), |b| {
                b.iter(|| gauss.fill(&mut rng, black_box(&mut out)))
            });
            g.finish();
        }
        let mut g = group(c, tm, "sample_uniform");
        g.bench_function(BenchmarkId::new("coterie", format!("n={n}")), |b| {
            b.iter(|| Poly::random(black_box(ring), Representation::Ntt, &mut rng))
        });
        g.finish();
    }

    // ReKeyGen (Table 6: per N, independent of k).
    {
        let sk = SecretKey::generate(&ctx, &mut rng);
        let mut g = group(c, tm, "rekeygen");
        for &n in ns {
            g.bench_function(BenchmarkId::new("coterie", format!("proxies={n}")), |b| {
                b.iter(|| {
                    let m = MaskingKey::sample(&ctx, 1, DELEGATEE, &mut rng);
                    reenc::rekey_shares(black_box(&sk), &m, n, &mut rng).unwrap()
                })
            });
        }
        g.finish();
    }

    for &k in ks {
        let id = format!("k={k}");
        let bid = || BenchmarkId::new("coterie", &id);
        let u = users(&ctx, k, &mut rng);
        let t = 256;

        // KeyGen of one user (Table 4).
        let mut g = group(c, tm, "keygen");
        g.bench_function(bid(), |b| {
            b.iter(|| {
                let sk = SecretKey::generate(&ctx, &mut rng);
                let pk = sk.public_key(&mut rng);
                let rlk = MkRelinKey::generate(&sk, 1, &u.crs, &mut rng).unwrap();
                (sk, pk, rlk)
            })
        });
        g.finish();

        // HomAdd of two k-user ciphertexts (Table 4).
        let sum = mk::add(&u.x, &u.y).unwrap();
        assert_eq!(thr_decrypt(&u, &sum, &mut rng), (u.mx + u.my) % t);
        let mut g = group(c, tm, "hom_add");
        g.bench_function(bid(), |b| {
            b.iter(|| mk::add(black_box(&u.x), &u.y).unwrap())
        });
        g.finish();

        // HomMul (Table 4): both relinearizations, and the shared keys' precomputation.
        let otf = Relin::OnTheFly {
            keys: &u.rlks,
            grouped: true,
        };
        let shared = SharedRelinKey::generate(&u.rlks).unwrap();
        let want = u.mx * u.my % t;
        let z = mk::mul(&u.x, &u.y, &otf).unwrap();
        assert_eq!(thr_decrypt(&u, &z, &mut rng), want);
        let zs = mk::mul(&u.x, &u.y, &Relin::Shared(&shared)).unwrap();
        assert_eq!(thr_decrypt(&u, &zs, &mut rng), want);
        let mut g = group(c, tm, "hom_mul_otf");
        g.bench_function(bid(), |b| {
            b.iter(|| mk::mul(black_box(&u.x), &u.y, &otf).unwrap())
        });
        g.finish();
        let mut g = group(c, tm, "hom_mul_shared");
        g.bench_function(bid(), |b| {
            b.iter(|| mk::mul(black_box(&u.x), &u.y, &Relin::Shared(&shared)).unwrap())
        });
        g.finish();
        let tensor = mk::mul_no_relin(&u.x, &u.y).unwrap();
        let mut g = group(c, tm, "hom_mul_tensor");
        g.bench_function(bid(), |b| {
            b.iter(|| mk::mul_no_relin(black_box(&u.x), &u.y).unwrap())
        });
        g.finish();
        let mut g = group(c, tm, "relin_otf");
        g.bench_function(bid(), |b| {
            b.iter(|| mk::relinearize(black_box(&tensor), &otf).unwrap())
        });
        g.finish();
        let mut g = group(c, tm, "shared_relin_key");
        g.bench_function(bid(), |b| {
            b.iter(|| SharedRelinKey::generate(black_box(&u.rlks)).unwrap())
        });
        g.finish();

        // Threshold decryption (Table 5) of the product z: user 1's PartDec and the Merge.
        let mut parts: Vec<_> = u
            .sks
            .iter()
            .zip(ids(k))
            .map(|(s, id)| mk::part_dec(s, id, &z, &smdg, &mut rng).unwrap())
            .collect();
        let mut g = group(c, tm, "ciphertext_digest");
        g.bench_function(bid(), |b| b.iter(|| mk::ciphertext_digest(black_box(&z))));
        g.finish();
        let mut g = group(c, tm, "part_dec");
        g.bench_function(bid(), |b| {
            b.iter(|| mk::part_dec(&u.sks[0], 1, black_box(&z), &smdg, &mut rng).unwrap())
        });
        g.finish();
        let mut g = group(c, tm, "merge");
        g.bench_function(bid(), |b| {
            b.iter(|| mk::merge(black_box(&z), &parts).unwrap())
        });
        g.finish();
        let mut g = group(c, tm, "thr_dec");
        g.bench_function(bid(), |b| {
            b.iter(|| {
                parts[0] = mk::part_dec(&u.sks[0], 1, black_box(&z), &smdg, &mut rng).unwrap();
                mk::merge(&z, &parts).unwrap()
            })
        });
        g.finish();
        assert_eq!(
            mk::merge(&z, &parts).unwrap().coefficients().unwrap()[0],
            want
        );

        // Re-encryption of z to the delegatee (Tables 7 and 8).
        let mut first = true;
        for &n in ns {
            let (mks, rks): (Vec<MaskingKey>, Vec<Vec<_>>) = u
                .sks
                .iter()
                .zip(ids(k))
                .map(|(s, id)| reenc::rekey_gen(s, id, DELEGATEE, n, &mut rng).unwrap())
                .unzip();
            // Proxy j's shares: share j of every delegator.
            let proxy_keys: Vec<Vec<_>> = (0..n)
                .map(|j| rks.iter().map(|r| r[j].clone()).collect())
                .collect();
            let mut shares: Vec<_> = (0..n)
                .map(|j| reenc::reenc_share(j, DELEGATEE, &proxy_keys[j], &z, &smdg, &mut rng))
                .collect::<Result<_, _>>()
                .unwrap();
            let rct = reenc::reenc_combine(&z, &shares).unwrap();
            let m = reenc::decrypt_reencrypted(&mks, &rct).unwrap();
            assert_eq!(m.coefficients().unwrap()[0], want);
            if first {
                // One proxy's share does not depend on N (measured with N = ns[0]).
                first = false;
                let mut g = group(c, tm, "reenc_share");
                g.bench_function(bid(), |b| {
                    b.iter(|| {
                        reenc::reenc_share(
                            0,
                            DELEGATEE,
                            &proxy_keys[0],
                            black_box(&z),
                            &smdg,
                            &mut rng,
                        )
                        .unwrap()
                    })
                });
                g.finish();
                let mut g = group(c, tm, "decrypt_reenc");
                g.bench_function(bid(), |b| {
                    b.iter(|| reenc::decrypt_reencrypted(&mks, black_box(&rct)).unwrap())
                });
                g.finish();
            }
            let nid = format!("k={k}/proxies={n}");
            let mut g = group(c, tm, "reenc_combine");
            g.bench_function(BenchmarkId::new("coterie", &nid), |b| {
                b.iter(|| reenc::reenc_combine(black_box(&z), &shares).unwrap())
            });
            g.finish();
            let mut g = group(c, tm, "reenc");
            g.bench_function(BenchmarkId::new("coterie", &nid), |b| {
                b.iter(|| {
                    shares[0] = reenc::reenc_share(
                        0,
                        DELEGATEE,
                        &proxy_keys[0],
                        black_box(&z),
                        &smdg,
                        &mut rng,
                    )
                    .unwrap();
                    reenc::reenc_combine(&z, &shares).unwrap()
                })
            });
            g.finish();
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
