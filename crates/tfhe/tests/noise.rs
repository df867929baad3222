//! Measured output noise of blind rotation (= bootstrapping before key switching) and of key
//! switching against the standard TFHE variance formulas (`coterie_tfhe::noise`): the measured
//! variance must lie within 15% of the prediction. The always-on tests use a few thousand
//! samples (relative standard deviation of a sample variance: `sqrt(2/M)`, 2–4% here); the
//! `#[ignore]`d ones use ten times more (run by `bench/tfhe-bench.sh`).

use coterie_math::prg::Csprng;
use coterie_tfhe::bootstrap::{
    FourierBootstrapKey, blind_rotate_assign, generate_lwe_bootstrap_key,
};
use coterie_tfhe::glwe::{
    GlweCiphertext, GlweSecretKey, decrypt_glwe_ciphertext, poly_mul_monomial,
};
use coterie_tfhe::lwe::{
    LweCiphertext, LweSecretKey, decrypt_lwe_ciphertext, encrypt_lwe_ciphertext,
    generate_lwe_keyswitch_key, keyswitch_lwe_ciphertext,
};
use coterie_tfhe::noise::{
    GadgetShape, NoiseSampler, external_product_variance, keyswitch_variance,
};
use coterie_tfhe::params::TfheParams;
use coterie_tfhe::torus::Torus;

/// Returns (measured variance, predicted variance) of the blind-rotation output noise over
/// `rotations` blind rotations of random LWE inputs (all `N` coefficients of each accumulator
/// are samples).
fn blind_rotation_noise<T: Torus>(params: &TfheParams, rotations: usize, seed: u8) -> (f64, f64) {
    let mut rng = Csprng::insecure_from_seed_for_tests([seed; 32]);
    let (n, k, big_n) = (
        params.lwe_dimension,
        params.glwe_dimension,
        params.polynomial_size,
    );
    let s = LweSecretKey::<T>::generate_binary(n, &mut rng);
    let z = GlweSecretKey::<T>::generate(k, big_n, params.glwe_key, &mut rng).unwrap();
    let noise = NoiseSampler::new(params.glwe_noise_std, T::BITS).unwrap();
    let bsk = generate_lwe_bootstrap_key(
        &s,
        &z,
        params.pbs_base_log,
        params.pbs_level,
        &noise,
        &mut rng,
    )
    .unwrap();
    let fbsk = FourierBootstrapKey::from_key(&bsk).unwrap();
    let mut bufs = fbsk.new_buffers::<T>().unwrap();
    let tv: Vec<T> = (0..big_n)
        .map(|i| T::encode(0.125 + i as f64 / (64.0 * big_n as f64)))
        .collect();
    let shape = GadgetShape {
        bits: T::BITS,
        glwe_dimension: k,
        poly_size: big_n,
        base_log: params.pbs_base_log,
        levels: params.pbs_level,
    };
    let z_sq: f64 = z
        .as_slice()
        .iter()
        .map(|x| (x.to_i64_centered() as f64).powi(2))
        .sum();
    let digit = external_product_variance(&shape, params.glwe_noise_std.powi(2), 0.0, 0.0);
    let round = external_product_variance(&shape, 0.0, 1.0, z_sq);
    let log2_2n = big_n.trailing_zeros() + 1;
    let two_n = 2 * big_n;
    let (mut sum_sq, mut count, mut predicted) = (0.0, 0usize, 0.0);
    let mut dec = vec![T::ZERO; big_n];
    let mut want = vec![T::ZERO; big_n];
    for _ in 0..rotations {
        let data: Vec<T> = (0..=n).map(|_| T::random(&mut rng)).collect();
        let lwe = LweCiphertext::from_container(data).unwrap();
        // φ̃ in the clear, and the number of CMuxes done (ã ≠ 0) and of those with s_i = 1.
        let mut phi = lwe.body().mod_switch(log2_2n) as i64;
        let (mut cmux, mut ones) = (0usize, 0usize);
        for (a, si) in lwe.mask().iter().zip(s.as_slice()) {
            let a = a.mod_switch(log2_2n);
            if a != 0 {
                cmux += 1;
                if si.to_u64() == 1 {
                    ones += 1;
                    phi -= a as i64;
                }
            }
        }
        let phi = phi.rem_euclid(two_n as i64) as usize;
        let mut acc = GlweCiphertext::trivial(k, big_n, &tv);
        blind_rotate_assign(&mut acc, &lwe, &fbsk, &mut bufs);
        decrypt_glwe_ciphertext(&z, &acc, &mut dec);
        poly_mul_monomial(&tv, &mut want, (two_n - phi) % two_n);
        for (d, w) in dec.iter().zip(&want) {
            let e = d.wrapping_sub(*w).decode();
            assert!(e.abs() < 1.0 / 16.0, "blind rotation went wrong: error {e}");
            sum_sq += e * e;
            count += 1;
        }
        predicted += cmux as f64 * digit + ones as f64 * round;
    }
    (sum_sq / count as f64, predicted / rotations as f64)
}

/// Returns (measured, predicted) variance of the key-switching noise from the extracted `k·N` key
/// to the `n` key, over `keys` independent key pairs and `samples` noiseless inputs (uniform
/// masks) per key. Several keys are needed: the balanced digits have mean `−1/2`, so for one
/// fixed key-switching key the error has a fixed offset `−½·Σ e_{i,j}` whose square is a
/// `χ²₁`-distributed part (about 4.5% on average) of the standard formula's `(B²+2)/12` term.
fn keyswitch_noise<T: Torus>(
    params: &TfheParams,
    keys: usize,
    samples: usize,
    seed: u8,
) -> (f64, f64) {
    let mut rng = Csprng::insecure_from_seed_for_tests([seed; 32]);
    let (mut sum_sq, mut predicted) = (0.0, 0.0);
    for _ in 0..keys {
        let big = GlweSecretKey::<T>::generate(
            params.glwe_dimension,
            params.polynomial_size,
            params.glwe_key,
            &mut rng,
        )
        .unwrap()
        .as_lwe_key();
        let small = LweSecretKey::<T>::generate_binary(params.lwe_dimension, &mut rng);
        let noise = NoiseSampler::new(params.lwe_noise_std, T::BITS).unwrap();
        let ksk = generate_lwe_keyswitch_key(
            &big,
            &small,
            params.ks_base_log,
            params.ks_level,
            &noise,
            &mut rng,
        )
        .unwrap();
        let zero = NoiseSampler::new(0.0, T::BITS).unwrap();
        let mut c = LweCiphertext::zero(big.dimension());
        let mut out = LweCiphertext::zero(small.dimension());
        for i in 0..samples {
            let mu = T::encode(i as f64 / samples as f64);
            encrypt_lwe_ciphertext(&big, &mut c, mu, &zero, &mut rng);
            keyswitch_lwe_ciphertext(&ksk, &c, &mut out);
            let e = decrypt_lwe_ciphertext(&small, &out)
                .wrapping_sub(mu)
                .decode();
            sum_sq += e * e;
        }
        predicted += keyswitch_variance(
            T::BITS,
            big.dimension(),
            big.squared_norm(),
            params.ks_base_log,
            params.ks_level,
            params.lwe_noise_std.powi(2),
        );
    }
    (sum_sq / (keys * samples) as f64, predicted / keys as f64)
}

/// For sets where the f64 FFT error is not negligible (64-bit torus, one large digit): the exact-
/// arithmetic formula is only a lower bound; report the ratio and check the bound.
fn report_fft_dominated(what: &str, (measured, predicted): (f64, f64)) {
    let ratio = measured / predicted;
    eprintln!(
        "{what}: measured {measured:.4e}, exact-arithmetic formula {predicted:.4e}, ratio {ratio:.4} (FFT error not modelled)"
    );
    assert!(
        ratio >= 0.85,
        "{what}: below the exact-arithmetic formula: {ratio}"
    );
}

fn check(what: &str, (measured, predicted): (f64, f64)) {
    let ratio = measured / predicted;
    eprintln!("{what}: measured {measured:.4e}, predicted {predicted:.4e}, ratio {ratio:.4}");
    assert!(
        (0.85..=1.15).contains(&ratio),
        "{what}: measured/predicted = {ratio}"
    );
}

#[test]
fn blind_rotation_noise_boolean_default() {
    check(
        "BR boolean default (u32)",
        blind_rotation_noise::<u32>(&TfheParams::tfhe_rs_boolean_default(), 8, 31),
    );
}

#[test]
fn blind_rotation_noise_seed003_k2() {
    check(
        "BR seed003 k2 (u64, ternary)",
        blind_rotation_noise::<u64>(&TfheParams::seed003_ako_k2_single_key(), 4, 32),
    );
}

#[test]
fn keyswitch_noise_boolean_default() {
    check(
        "KS boolean default (u32)",
        keyswitch_noise::<u32>(&TfheParams::tfhe_rs_boolean_default(), 5, 300, 33),
    );
}

#[test]
fn keyswitch_noise_seed003_k2() {
    check(
        "KS seed003 k2 (u64)",
        keyswitch_noise::<u64>(&TfheParams::seed003_ako_k2_single_key(), 5, 300, 34),
    );
}

#[test]
#[ignore = "statistical, about 1 min: run by bench/tfhe-bench.sh"]
fn noise_large_samples() {
    check(
        "BR boolean default (u32), 80 rotations",
        blind_rotation_noise::<u32>(&TfheParams::tfhe_rs_boolean_default(), 80, 41),
    );
    check(
        "BR seed003 k2 (u64), 40 rotations",
        blind_rotation_noise::<u64>(&TfheParams::seed003_ako_k2_single_key(), 40, 42),
    );
    report_fft_dominated(
        "BR 4-bit set (u64, N=2048, B=2^23), 8 rotations",
        blind_rotation_noise::<u64>(&TfheParams::tfhe_rs_shortint_2_2_gaussian(), 8, 45),
    );
    report_fft_dominated(
        "BR seed003 k16 (u64, N=2048, B=2^26), 8 rotations",
        blind_rotation_noise::<u64>(&TfheParams::seed003_ako_k16_single_key(), 8, 46),
    );
    check(
        "KS boolean default (u32), 12 keys x 1500",
        keyswitch_noise::<u32>(&TfheParams::tfhe_rs_boolean_default(), 12, 1500, 43),
    );
    check(
        "KS seed003 k2 (u64), 12 keys x 1500",
        keyswitch_noise::<u64>(&TfheParams::seed003_ako_k2_single_key(), 12, 1500, 44),
    );
}
