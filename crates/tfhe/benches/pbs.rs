//! Side-by-side benchmark: coterie-tfhe vs TFHE-rs (`tfhe` 1.8, single thread), same parameters,
//! same process, measurements interleaved (coterie, TFHE-rs, coterie, ...) so that load from
//! other processes on the machine hits both alike.
//!
//! Run: `RAYON_NUM_THREADS=1 cargo bench -p coterie-tfhe --bench pbs` (see
//! `bench/tfhe-bench.sh`). Writes JSON to `$COTERIE_TFHE_BENCH_OUT` if set.

use std::hint::black_box;
use std::time::Instant;

use coterie_math::prg::Csprng;
use coterie_tfhe::boolean::{ClientKey, Gate, ServerKey};
use coterie_tfhe::lwe::{LweCiphertext, keyswitch_lwe_ciphertext};
use coterie_tfhe::params::TfheParams;
use tfhe::boolean::prelude::BinaryBooleanGates;
use tfhe::core_crypto::prelude as tc;

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

struct Row {
    name: String,
    coterie_ms: f64,
    tfhe_rs_ms: f64,
}

fn main() {
    let reps: usize = std::env::var("COTERIE_TFHE_BENCH_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    let mut rows: Vec<Row> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut rng = Csprng::new();
    eprintln!(
        "avx512 kernels: {}",
        coterie_tfhe::fourier::FourierEngine::get(512)
            .unwrap()
            .uses_avx512()
    );

    // ---- 1. Boolean gates, TFHE-rs DEFAULT_PARAMETERS ----
    let params = TfheParams::tfhe_rs_boolean_default();
    let mut ck = None;
    let mut sk = None;
    let co_keygen = time_ms(|| {
        let c = ClientKey::<u32>::generate(&params, &mut rng).unwrap();
        sk = Some(ServerKey::new(&c, &mut rng).unwrap());
        ck = Some(c);
    });
    let (ck, sk) = (ck.unwrap(), sk.unwrap());
    let mut tck = None;
    let mut tsk = None;
    let tf_keygen = time_ms(|| {
        let c = tfhe::boolean::client_key::ClientKey::new(
            &tfhe::boolean::parameters::DEFAULT_PARAMETERS,
        );
        tsk = Some(tfhe::boolean::server_key::ServerKey::new(&c));
        tck = Some(c);
    });
    let (tck, tsk) = (tck.unwrap(), tsk.unwrap());
    rows.push(Row {
        name: "boolean keygen (client+server), ms".into(),
        coterie_ms: co_keygen,
        tfhe_rs_ms: tf_keygen,
    });
    let bsk_bytes = sk.bootstrap_key().size_bytes();
    let fbsk_bytes = sk.fourier_bootstrap_key().size_bytes();
    let ksk_bytes = sk.keyswitch_key().size_bytes();
    notes.push(format!(
        "boolean default keys (coterie): BSK {:.1} MB coefficient domain / {:.1} MB Fourier domain, KSK {:.1} MB; TFHE-rs has the same shapes (n=805, (k+1)^2*l*N per GGSW, u32) so the same sizes",
        bsk_bytes as f64 / 1e6,
        fbsk_bytes as f64 / 1e6,
        ksk_bytes as f64 / 1e6
    ));

    let mut ev = sk.evaluator().unwrap();
    let a = ck.encrypt_bool(true, &mut rng);
    let b = ck.encrypt_bool(false, &mut rng);
    let ta = tck.encrypt(true);
    let tb = tck.encrypt(false);
    let mut out = LweCiphertext::zero(params.lwe_dimension);
    // Warm-up and correctness.
    for _ in 0..3 {
        ev.gate_into(Gate::Nand, &a, &b, &mut out).expect("gate");
        assert!(ck.decrypt_bool(&out));
        let t = tsk.nand(&ta, &tb);
        assert!(tck.decrypt(&t));
    }
    let (mut co, mut tf) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        co.push(time_ms(|| {
            ev.gate_into(Gate::Nand, black_box(&a), black_box(&b), &mut out)
                .expect("gate")
        }));
        tf.push(time_ms(|| {
            black_box(tsk.nand(black_box(&ta), black_box(&tb)));
        }));
    }
    rows.push(Row {
        name: "NAND gate (PBS + KS), boolean default, ms".into(),
        coterie_ms: median(co),
        tfhe_rs_ms: median(tf),
    });

    // ---- 2. Programmable bootstrapping, 4-bit messages, u64, N = 2048 ----
    let p = TfheParams::tfhe_rs_shortint_2_2_gaussian();
    let mut ck2 = None;
    let mut sk2 = None;
    let co_keygen2 = time_ms(|| {
        let c = ClientKey::<u64>::generate(&p, &mut rng).unwrap();
        sk2 = Some(ServerKey::new(&c, &mut rng).unwrap());
        ck2 = Some(c);
    });
    let (ck2, sk2) = (ck2.unwrap(), sk2.unwrap());

    let cm = tc::CiphertextModulus::<u64>::new_native();
    let mut boxed_seeder = tc::new_seeder();
    let seeder = boxed_seeder.as_mut();
    let mut sgen = tc::SecretRandomGenerator::<tc::DefaultRandomGenerator>::new(seeder.seed());
    let mut egen =
        tc::EncryptionRandomGenerator::<tc::DefaultRandomGenerator>::new(seeder.seed(), seeder);
    let lwe_noise = tc::Gaussian::from_dispersion_parameter(tc::StandardDev(p.lwe_noise_std), 0.0);
    let glwe_noise =
        tc::Gaussian::from_dispersion_parameter(tc::StandardDev(p.glwe_noise_std), 0.0);
    let mut t_parts = None;
    let tf_keygen2 = time_ms(|| {
        let lwe_sk =
            tc::LweSecretKey::generate_new_binary(tc::LweDimension(p.lwe_dimension), &mut sgen);
        let glwe_sk = tc::GlweSecretKey::generate_new_binary(
            tc::GlweDimension(p.glwe_dimension),
            tc::PolynomialSize(p.polynomial_size),
            &mut sgen,
        );
        let big = glwe_sk.clone().into_lwe_secret_key();
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
        let ksk = tc::allocate_and_generate_new_lwe_keyswitch_key(
            &big,
            &lwe_sk,
            tc::DecompositionBaseLog(p.ks_base_log as usize),
            tc::DecompositionLevelCount(p.ks_level as usize),
            lwe_noise,
            cm,
            &mut egen,
        );
        t_parts = Some((lwe_sk, big, fbsk, ksk));
    });
    let (lwe_sk, big_sk, fbsk, ksk) = t_parts.unwrap();
    rows.push(Row {
        name: "4-bit PBS keygen (LWE+GLWE keys, BSK+Fourier, KSK), ms".into(),
        coterie_ms: co_keygen2,
        tfhe_rs_ms: tf_keygen2,
    });
    notes.push(format!(
        "4-bit set keys (coterie): BSK {:.1} MB coefficient / {:.1} MB Fourier, KSK {:.1} MB",
        sk2.bootstrap_key().size_bytes() as f64 / 1e6,
        sk2.fourier_bootstrap_key().size_bytes() as f64 / 1e6,
        sk2.keyswitch_key().size_bytes() as f64 / 1e6
    ));

    let bits = 4u32;
    let f = |x: u64| (3 * x + 1) % 16;
    let lut = sk2.lut(bits, f).unwrap();
    let mut ev2 = sk2.evaluator().unwrap();
    let msg = 5u64;
    let c_in = ck2.encrypt_message(msg, bits, &mut rng);
    let mut c_big = LweCiphertext::zero(p.big_lwe_dimension());
    let mut c_small = LweCiphertext::zero(p.lwe_dimension);

    let delta = 1u64 << (63 - bits);
    let t_acc = tc::generate_programmable_bootstrap_glwe_lut(
        tc::PolynomialSize(p.polynomial_size),
        tc::GlweSize(p.glwe_dimension + 1),
        16usize,
        cm,
        delta,
        f,
    );
    let t_in = tc::allocate_and_encrypt_new_lwe_ciphertext(
        &lwe_sk,
        tc::Plaintext(msg * delta),
        lwe_noise,
        cm,
        &mut egen,
    );
    let mut t_out = tc::LweCiphertext::new(0u64, big_sk.lwe_dimension().to_lwe_size(), cm);
    let mut t_small = tc::LweCiphertext::new(0u64, lwe_sk.lwe_dimension().to_lwe_size(), cm);
    let fft = tc::Fft::new(tc::PolynomialSize(p.polynomial_size));
    let fft = fft.as_view();
    let mut buffers = tc::ComputationBuffers::new();
    buffers.resize(
        tc::programmable_bootstrap_lwe_ciphertext_mem_optimized_requirement::<u64>(
            tc::GlweSize(p.glwe_dimension + 1),
            tc::PolynomialSize(p.polynomial_size),
            fft,
        )
        .unaligned_bytes_required(),
    );
    // Warm-up and correctness.
    for _ in 0..2 {
        ev2.apply_lut_into(&c_in, &lut, &mut c_small).expect("lut");
        assert_eq!(ck2.decrypt_message(&c_small, bits), Some(f(msg)));
        tc::programmable_bootstrap_lwe_ciphertext_mem_optimized(
            &t_in,
            &mut t_out,
            &t_acc,
            &fbsk,
            fft,
            buffers.stack(),
        );
        let pt = tc::decrypt_lwe_ciphertext(&big_sk, &t_out).0;
        assert_eq!(((pt.wrapping_add(delta / 2)) / delta) % 16, f(msg));
    }
    let (mut co, mut tf, mut cok, mut tfk) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..reps.div_ceil(2) {
        co.push(time_ms(|| {
            ev2.pbs_no_ks_into(black_box(&c_in), &lut, &mut c_big)
                .expect("pbs")
        }));
        tf.push(time_ms(|| {
            tc::programmable_bootstrap_lwe_ciphertext_mem_optimized(
                black_box(&t_in),
                &mut t_out,
                &t_acc,
                &fbsk,
                fft,
                buffers.stack(),
            )
        }));
        cok.push(time_ms(|| {
            keyswitch_lwe_ciphertext(sk2.keyswitch_key(), black_box(&c_big), &mut c_small)
        }));
        tfk.push(time_ms(|| {
            tc::keyswitch_lwe_ciphertext(&ksk, black_box(&t_out), &mut t_small)
        }));
    }
    rows.push(Row {
        name: "PBS 4-bit LUT (blind rotate + extract), n=866 k=1 N=2048 l=1, ms".into(),
        coterie_ms: median(co),
        tfhe_rs_ms: median(tf),
    });
    rows.push(Row {
        name: "LWE key switch 2048 -> 866 (2^3 x 5), u64, ms".into(),
        coterie_ms: median(cok),
        tfhe_rs_ms: median(tfk),
    });

    // ---- report ----
    let mut txt = String::new();
    txt.push_str(&format!(
        "reps per timing: {reps} (medians), single thread\n"
    ));
    txt.push_str(&format!(
        "{:<75} {:>12} {:>12} {:>8}\n",
        "operation", "coterie", "TFHE-rs", "ratio"
    ));
    for r in &rows {
        txt.push_str(&format!(
            "{:<75} {:>12.3} {:>12.3} {:>8.3}\n",
            r.name,
            r.coterie_ms,
            r.tfhe_rs_ms,
            r.coterie_ms / r.tfhe_rs_ms
        ));
    }
    for n in &notes {
        txt.push_str(&format!("note: {n}\n"));
    }
    print!("{txt}");
    if let Ok(path) = std::env::var("COTERIE_TFHE_BENCH_OUT") {
        let mut json = String::from("{\n  \"rows\": [\n");
        for (i, r) in rows.iter().enumerate() {
            json.push_str(&format!(
                "    {{\"name\": {:?}, \"coterie_ms\": {:.4}, \"tfhe_rs_ms\": {:.4}, \"ratio\": {:.4}}}{}\n",
                r.name,
                r.coterie_ms,
                r.tfhe_rs_ms,
                r.coterie_ms / r.tfhe_rs_ms,
                if i + 1 < rows.len() { "," } else { "" }
            ));
        }
        json.push_str("  ],\n  \"notes\": [\n");
        for (i, n) in notes.iter().enumerate() {
            json.push_str(&format!(
                "    {:?}{}\n",
                n,
                if i + 1 < notes.len() { "," } else { "" }
            ));
        }
        json.push_str(&format!("  ],\n  \"reps\": {reps}\n}}\n"));
        std::fs::write(&path, json).expect("write bench output");
    }
}
