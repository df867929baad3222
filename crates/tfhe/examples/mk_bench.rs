//! AKÖ multi-key TFHE benchmark (seed 003 Experiment #1, Tables 1–3 AKÖ columns).
//!
//! For each party count `k` (env `MK_BENCH_KS`, default `2,3,4,5,8,16`):
//! * key generation of all `k` parties in this process (exact products; **insecure**
//!   simulation, all secrets in one place — the time is the sum over parties);
//! * evaluation-key size against the §5.2 formula;
//! * median time of a full bootstrap (blind rotation + extraction + key switching) and of the
//!   blind rotation alone, interleaved with a single-key TFHE-rs 1.8 programmable bootstrap
//!   (`core_crypto`, u64, GLWE dimension 1) at the same `(n, N, ℓ, B)` and a TFHE-rs u32 key switch
//!   `N → n` at `(B', d')`, so that load from other processes hits both alike;
//! * Experiment #1: `T` trials (env `MK_BENCH_TRIALS`, default 1000 for `k ≤ 5`, 300 for `k = 8`,
//!   100 above): two fresh encryptions (random bits, random parties) bootstrapped (Err1 check),
//!   then the rounded phase `φ̃` of `1/8 − c1' − c2'` checked in the symmetric interval (Err2),
//!   measured `V0(m)` and `κ(m)`.
//!
//! Run with `bench/tfhe-mk.sh`. Writes JSON lines to `$MK_BENCH_OUT` if set.

use std::hint::black_box;
use std::io::Write;
use std::time::Instant;

use coterie_math::prg::Csprng;
use coterie_tfhe::lwe::LweCiphertext;
use coterie_tfhe::lwe::encrypt_lwe_ciphertext;
use coterie_tfhe::mk::eval::{MkServerKey, phase_with_all_keys, sum_local_encryptions};
use coterie_tfhe::mk::keygen::{Crs, MkSecretKey, insecure_simulate_all_parties};
use coterie_tfhe::mk::params::MkParams;
use coterie_tfhe::noise::NoiseSampler;
use coterie_tfhe::public_key::ProductMethod;
use coterie_tfhe::torus::Torus;
use tfhe::core_crypto::prelude as tc;

/// Table 3's measured tB [s] (Julia, i7-7800X).
fn paper_tb(k: usize) -> Option<f64> {
    Some(match k {
        2 => 0.19,
        3 => 0.31,
        4 => 0.56,
        5 => 0.73,
        8 => 1.2,
        16 => 1.8,
        32 => 4.3,
        64 => 8.6,
        128 => 18.0,
        _ => return None,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn time_ms(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64() * 1e3
}

struct TfheRs {
    fbsk: tc::FourierLweBootstrapKey<tfhe::core_crypto::fft_impl::fft64::ABox<[tc::c64]>>,
    lut: tc::GlweCiphertextOwned<u64>,
    input: tc::LweCiphertextOwned<u64>,
    out: tc::LweCiphertextOwned<u64>,
    ksk: tc::LweKeyswitchKeyOwned<u32>,
    ks_in: tc::LweCiphertextOwned<u32>,
    ks_out: tc::LweCiphertextOwned<u32>,
    buffers: tc::ComputationBuffers,
    fft: tc::Fft,
}

fn tfhe_rs_setup(p: &MkParams) -> TfheRs {
    let cm = tc::CiphertextModulus::<u64>::new_native();
    let cm32 = tc::CiphertextModulus::<u32>::new_native();
    let mut boxed_seeder = tc::new_seeder();
    let seeder = boxed_seeder.as_mut();
    let mut sgen = tc::SecretRandomGenerator::<tc::DefaultRandomGenerator>::new(seeder.seed());
    let mut egen =
        tc::EncryptionRandomGenerator::<tc::DefaultRandomGenerator>::new(seeder.seed(), seeder);
    let glwe_noise =
        tc::Gaussian::from_dispersion_parameter(tc::StandardDev(p.glwe_noise_std()), 0.0);
    let lwe_noise =
        tc::Gaussian::from_dispersion_parameter(tc::StandardDev(p.lwe_noise_std()), 0.0);
    let lwe_sk =
        tc::LweSecretKey::generate_new_binary(tc::LweDimension(p.lwe_dimension), &mut sgen);
    let glwe_sk = tc::GlweSecretKey::generate_new_binary(
        tc::GlweDimension(1),
        tc::PolynomialSize(p.polynomial_size),
        &mut sgen,
    );
    let bsk = tc::allocate_and_generate_new_lwe_bootstrap_key(
        &lwe_sk,
        &glwe_sk,
        tc::DecompositionBaseLog(p.pbs_base_log as usize),
        tc::DecompositionLevelCount(p.pbs_level as usize),
        glwe_noise,
        cm,
        &mut egen,
    );
    let mut fbsk = tc::FourierLweBootstrapKey::new(
        bsk.input_lwe_dimension(),
        bsk.glwe_size(),
        bsk.polynomial_size(),
        bsk.decomposition_base_log(),
        bsk.decomposition_level_count(),
    );
    tc::convert_standard_lwe_bootstrap_key_to_fourier(&bsk, &mut fbsk);
    let lut = tc::generate_programmable_bootstrap_glwe_lut(
        tc::PolynomialSize(p.polynomial_size),
        tc::GlweSize(2),
        2usize,
        cm,
        1u64 << 61,
        |x| x,
    );
    let input = tc::allocate_and_encrypt_new_lwe_ciphertext(
        &lwe_sk,
        tc::Plaintext(1u64 << 61),
        lwe_noise,
        cm,
        &mut egen,
    );
    let out = tc::LweCiphertext::new(0u64, tc::LweSize(p.polynomial_size + 1), cm);
    // u32 key switch N → n at (B', d').
    let big32: tc::LweSecretKeyOwned<u32> =
        tc::LweSecretKey::generate_new_binary(tc::LweDimension(p.polynomial_size), &mut sgen);
    let small32: tc::LweSecretKeyOwned<u32> =
        tc::LweSecretKey::generate_new_binary(tc::LweDimension(p.lwe_dimension), &mut sgen);
    let ksk = tc::allocate_and_generate_new_lwe_keyswitch_key(
        &big32,
        &small32,
        tc::DecompositionBaseLog(p.ks_base_log as usize),
        tc::DecompositionLevelCount(p.ks_level as usize),
        lwe_noise,
        cm32,
        &mut egen,
    );
    let ks_in = tc::allocate_and_encrypt_new_lwe_ciphertext(
        &big32,
        tc::Plaintext(1u32 << 29),
        lwe_noise,
        cm32,
        &mut egen,
    );
    let ks_out = tc::LweCiphertext::new(0u32, tc::LweSize(p.lwe_dimension + 1), cm32);
    let fft = tc::Fft::new(tc::PolynomialSize(p.polynomial_size));
    let mut buffers = tc::ComputationBuffers::new();
    buffers.resize(
        tc::programmable_bootstrap_lwe_ciphertext_mem_optimized_requirement::<u64>(
            tc::GlweSize(2),
            tc::PolynomialSize(p.polynomial_size),
            fft.as_view(),
        )
        .unaligned_bytes_required(),
    );
    TfheRs {
        fbsk,
        lut,
        input,
        out,
        ksk,
        ks_in,
        ks_out,
        buffers,
        fft,
    }
}

fn env_list(name: &str, default: &[usize]) -> Vec<usize> {
    std::env::var(name)
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| default.to_vec())
}

fn main() {
    let ks = env_list("MK_BENCH_KS", &[2, 3, 4, 5, 8, 16]);
    let reps: usize = std::env::var("MK_BENCH_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(21);
    let trials_override: Option<usize> = std::env::var("MK_BENCH_TRIALS")
        .ok()
        .and_then(|s| s.parse().ok());
    let mut json = std::env::var("MK_BENCH_OUT")
        .ok()
        .map(|p| std::fs::File::create(p).expect("output file"));
    println!(
        "k | params | keygen all parties [s] | keys [GB] (formula) | tB [ms] | tBR [ms] | per party tB/k [ms] | TFHE-rs PBS [ms] | TFHE-rs KS [ms] | BR/k ÷ PBS | tB/k ÷ (PBS+KS) | paper tB [s] | speed-up vs paper | trials | Err1 | Err2 | V0(m) | V0(c) | V0 ratio | κ(m) | κ(c)"
    );
    for k in ks {
        let params = MkParams::ako(k).expect("Table 3 party count");
        let mut rng = Csprng::new();
        let crs = Crs {
            seed: [k as u8; 32],
        };
        let t = Instant::now();
        let (sks, ek) =
            insecure_simulate_all_parties(&params, k, &crs, ProductMethod::Exact, &mut rng)
                .expect("keygen");
        let keygen_s = t.elapsed().as_secs_f64();
        let key_bytes = ek.size_bytes();
        assert_eq!(key_bytes as u64, params.key_bytes(k));
        let server = MkServerKey::new(&ek).expect("server key");
        drop(ek);
        let keys: Vec<&MkSecretKey> = sks.iter().collect();
        let mut ev = server.evaluator().expect("evaluator");
        // Fresh inputs with random masks in every slot (owner: the bit, others: zero), as the
        // paper's experiments encrypt "under all keys": a one-slot input would skip the other
        // parties' CMuxes.
        let noise = NoiseSampler::new(params.lwe_noise_std(), 32).expect("noise");
        let fresh = |owner: usize, bit: bool, rng: &mut Csprng| -> LweCiphertext<u32> {
            let parts: Vec<_> = sks
                .iter()
                .enumerate()
                .map(|(slot, sk)| {
                    if slot == owner {
                        sk.encrypt_bool_local(&params, bit, rng).expect("enc")
                    } else {
                        let mut c = LweCiphertext::zero(params.lwe_dimension);
                        encrypt_lwe_ciphertext(sk.lwe_key(), &mut c, 0, &noise, rng);
                        c
                    }
                })
                .collect();
            sum_local_encryptions(&parts).expect("sum")
        };
        // Timing, interleaved with TFHE-rs.
        let mut tr = tfhe_rs_setup(&params);
        let c = fresh(0, true, &mut rng);
        let (mut tb, mut tbr, mut tpbs, mut tks) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..reps {
            tb.push(time_ms(|| {
                black_box(ev.bootstrap(black_box(&c)).expect("bootstrap"));
            }));
            tbr.push(time_ms(|| {
                black_box(ev.blind_rotate_extract(black_box(&c)).expect("br"));
            }));
            tpbs.push(time_ms(|| {
                tc::programmable_bootstrap_lwe_ciphertext_mem_optimized(
                    black_box(&tr.input),
                    &mut tr.out,
                    &tr.lut,
                    &tr.fbsk,
                    tr.fft.as_view(),
                    tr.buffers.stack(),
                )
            }));
            tks.push(time_ms(|| {
                tc::keyswitch_lwe_ciphertext(&tr.ksk, black_box(&tr.ks_in), &mut tr.ks_out)
            }));
        }
        let (tb, tbr, tpbs, tks) = (median(tb), median(tbr), median(tpbs), median(tks));
        drop(tr);
        // Experiment #1.
        let trials = trials_override.unwrap_or(if k <= 5 {
            1000
        } else if k <= 8 {
            300
        } else {
            100
        });
        let two_n = 2 * params.polynomial_size;
        let log2_2n = two_n.trailing_zeros();
        let (mut err1, mut err2) = (0usize, 0usize);
        let mut sq = 0.0;
        for _ in 0..trials {
            let mut outs = Vec::with_capacity(2);
            let mut mus = Vec::with_capacity(2);
            for _ in 0..2 {
                let bit = u32::random(&mut rng) & 1 == 1;
                let slot = (u32::random(&mut rng) as usize) % k;
                let out = ev
                    .bootstrap(&fresh(slot, bit, &mut rng))
                    .expect("bootstrap");
                let mu = if bit { 0.125 } else { -0.125 };
                let e = phase_with_all_keys(&keys, &out).decode() - mu;
                sq += e * e;
                if e.abs() >= 0.125 {
                    err1 += 1;
                }
                outs.push(out);
                mus.push(mu);
            }
            // c = 1/8 − c1' − c2'; φ̃ from the rounded b and a_i (test-only keys).
            let mut c = LweCiphertext::trivial(k * params.lwe_dimension, 1u32 << 29);
            c.sub_assign(&outs[0]);
            c.sub_assign(&outs[1]);
            let mut phi = c.body().mod_switch(log2_2n) as i64;
            for (slot, sk) in sks.iter().enumerate() {
                let n = params.lwe_dimension;
                for (a, s) in c.mask()[slot * n..(slot + 1) * n]
                    .iter()
                    .zip(sk.lwe_key().as_slice())
                {
                    phi -= a.mod_switch(log2_2n) as i64 * i64::from(*s);
                }
            }
            let phi = phi.rem_euclid(two_n as i64) as f64 / two_n as f64;
            let expected = 0.125 - mus[0] - mus[1];
            let mut d = (phi - expected).rem_euclid(1.0);
            if d > 0.5 {
                d -= 1.0;
            }
            if d.abs() >= 0.125 {
                err2 += 1;
            }
        }
        let v0m = sq / (2 * trials) as f64;
        let nb = params.noise();
        let kappa_m = 0.125 / (2.0 * v0m + nb.v_round).sqrt();
        let paper = paper_tb(k);
        let row = format!(
            "{k} | {} | {keygen_s:.1} | {:.3} ({:.3}) | {tb:.1} | {tbr:.1} | {:.2} | {tpbs:.2} | {tks:.3} | {:.2} | {:.2} | {} | {} | {trials} | {err1} | {err2} | {:.3e} | {:.3e} | {:.2} | {kappa_m:.2} | {:.2}",
            params.name,
            key_bytes as f64 / 1e9,
            params.key_bytes(k) as f64 / 1e9,
            tb / k as f64,
            tbr / k as f64 / tpbs,
            tb / k as f64 / (tpbs + tks),
            paper.map_or("–".into(), |p| format!("{p}")),
            paper.map_or("–".into(), |p| format!("{:.1}", p * 1e3 / tb)),
            v0m,
            nb.v0,
            v0m / nb.v0,
            nb.kappa,
        );
        println!("{row}");
        if let Some(f) = json.as_mut() {
            writeln!(
                f,
                "{{\"k\":{k},\"params\":\"{}\",\"keygen_s\":{keygen_s:.3},\"key_bytes\":{key_bytes},\"tb_ms\":{tb:.3},\"tbr_ms\":{tbr:.3},\"tfhe_rs_pbs_ms\":{tpbs:.4},\"tfhe_rs_ks_ms\":{tks:.4},\"ratio_br_per_party_vs_pbs\":{:.4},\"ratio_total_per_party_vs_pbs_ks\":{:.4},\"paper_tb_s\":{},\"speedup_vs_paper\":{},\"trials\":{trials},\"err1\":{err1},\"err2\":{err2},\"v0_measured\":{v0m:.4e},\"v0_predicted\":{:.4e},\"kappa_measured\":{kappa_m:.3},\"kappa_predicted\":{:.3},\"reps\":{reps}}}",
                params.name,
                tbr / k as f64 / tpbs,
                tb / k as f64 / (tpbs + tks),
                paper.map_or("null".into(), |p| format!("{p}")),
                paper.map_or("null".into(), |p| format!("{:.2}", p * 1e3 / tb)),
                nb.v0,
                nb.kappa,
            )
            .expect("write");
        }
        std::io::stdout().flush().ok();
    }
}
