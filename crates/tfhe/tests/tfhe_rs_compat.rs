//! Interoperability with TFHE-rs (`tfhe` 1.8, `core_crypto`): raw LWE/GLWE ciphertexts produced
//! by TFHE-rs decrypt under coterie with the same key bytes (and vice versa), and coterie's
//! bootstrapping works on TFHE-rs ciphertexts with keys built from TFHE-rs key bytes.

use coterie_math::prg::Csprng;
use coterie_tfhe::boolean::{ClientKey, ServerKey};
use coterie_tfhe::bootstrap::{decode_message, encode_message};
use coterie_tfhe::glwe::{
    GlweCiphertext, GlweSecretKey, decrypt_glwe_ciphertext, encrypt_glwe_ciphertext,
};
use coterie_tfhe::lwe::{
    LweCiphertext, LweSecretKey, decrypt_lwe_ciphertext, encrypt_lwe_ciphertext,
};
use coterie_tfhe::noise::NoiseSampler;
use coterie_tfhe::params::TfheParams;
use coterie_tfhe::torus::Torus;
use tfhe::core_crypto::prelude as tc;

struct Gens {
    secret: tc::SecretRandomGenerator<tc::DefaultRandomGenerator>,
    enc: tc::EncryptionRandomGenerator<tc::DefaultRandomGenerator>,
}

fn gens() -> Gens {
    let mut boxed = tc::new_seeder();
    let seeder = boxed.as_mut();
    Gens {
        secret: tc::SecretRandomGenerator::new(seeder.seed()),
        enc: tc::EncryptionRandomGenerator::new(seeder.seed(), seeder),
    }
}

#[test]
fn tfhe_rs_lwe_ciphertexts_decrypt_under_coterie_u32() {
    let p = TfheParams::tfhe_rs_boolean_default();
    let mut g = gens();
    let cm = tc::CiphertextModulus::<u32>::new_native();
    let noise = tc::Gaussian::from_dispersion_parameter(tc::StandardDev(p.lwe_noise_std), 0.0);
    let tkey =
        tc::LweSecretKey::generate_new_binary(tc::LweDimension(p.lwe_dimension), &mut g.secret);
    let ckey = LweSecretKey::from_container(tkey.as_ref().to_vec());
    for i in 0..50u32 {
        let bit = i % 3 == 0;
        let mu = u32::encode(if bit { 0.125 } else { -0.125 });
        let tct = tc::allocate_and_encrypt_new_lwe_ciphertext(
            &tkey,
            tc::Plaintext(mu),
            noise,
            cm,
            &mut g.enc,
        );
        let t_phase = tc::decrypt_lwe_ciphertext(&tkey, &tct).0;
        let cct = LweCiphertext::from_container(tct.into_container()).unwrap();
        let c_phase = decrypt_lwe_ciphertext(&ckey, &cct);
        assert_eq!(
            c_phase, t_phase,
            "same key bytes, same ciphertext, same phase"
        );
        assert_eq!(c_phase.to_i64_centered() > 0, bit);
    }
    // And coterie ciphertexts decrypt under TFHE-rs.
    let mut rng = Csprng::insecure_from_seed_for_tests([51; 32]);
    let ours = NoiseSampler::new(p.lwe_noise_std, 32).unwrap();
    for m in 0..16u64 {
        let mu: u32 = encode_message(m, 4);
        let mut c = LweCiphertext::zero(p.lwe_dimension);
        encrypt_lwe_ciphertext(&ckey, &mut c, mu, &ours, &mut rng);
        let t = tc::LweCiphertext::from_container(c.as_slice().to_vec(), cm);
        let phase = tc::decrypt_lwe_ciphertext(&tkey, &t).0;
        assert_eq!(phase, decrypt_lwe_ciphertext(&ckey, &c));
        assert_eq!(decode_message(phase, 4), Some(m));
    }
}

#[test]
fn tfhe_rs_lwe_and_glwe_ciphertexts_decrypt_under_coterie_u64() {
    let p = TfheParams::tfhe_rs_shortint_2_2_gaussian();
    let mut g = gens();
    let cm = tc::CiphertextModulus::<u64>::new_native();
    let lwe_noise = tc::Gaussian::from_dispersion_parameter(tc::StandardDev(p.lwe_noise_std), 0.0);
    let glwe_noise =
        tc::Gaussian::from_dispersion_parameter(tc::StandardDev(p.glwe_noise_std), 0.0);
    let tkey =
        tc::LweSecretKey::generate_new_binary(tc::LweDimension(p.lwe_dimension), &mut g.secret);
    let ckey = LweSecretKey::from_container(tkey.as_ref().to_vec());
    for m in 0..16u64 {
        let tct = tc::allocate_and_encrypt_new_lwe_ciphertext(
            &tkey,
            tc::Plaintext(encode_message::<u64>(m, 4)),
            lwe_noise,
            cm,
            &mut g.enc,
        );
        let t_phase = tc::decrypt_lwe_ciphertext(&tkey, &tct).0;
        let cct = LweCiphertext::from_container(tct.into_container()).unwrap();
        assert_eq!(decrypt_lwe_ciphertext(&ckey, &cct), t_phase);
        assert_eq!(decode_message(t_phase, 4), Some(m));
    }
    // GLWE: same layout (masks, then body) and sign convention.
    let (k, n) = (2usize, 1024usize);
    let tglwe_key = tc::GlweSecretKey::generate_new_binary(
        tc::GlweDimension(k),
        tc::PolynomialSize(n),
        &mut g.secret,
    );
    let cglwe_key = GlweSecretKey::from_container(k, n, tglwe_key.as_ref().to_vec()).unwrap();
    let msg: Vec<u64> = (0..n as u64).map(|i| encode_message(i % 16, 4)).collect();
    let pt = tc::PlaintextList::from_container(msg.clone());
    let mut tglwe = tc::GlweCiphertext::new(0u64, tc::GlweSize(k + 1), tc::PolynomialSize(n), cm);
    tc::encrypt_glwe_ciphertext(&tglwe_key, &mut tglwe, &pt, glwe_noise, &mut g.enc);
    let cglwe_words = tglwe.into_container();
    let mut cglwe = GlweCiphertext::<u64>::zero(k, n);
    cglwe.as_mut_slice().copy_from_slice(&cglwe_words);
    let mut dec = vec![0u64; n];
    decrypt_glwe_ciphertext(&cglwe_key, &cglwe, &mut dec);
    for (d, m) in dec.iter().zip(&msg) {
        assert_eq!(decode_message(*d, 4), decode_message(*m, 4));
        assert!(d.wrapping_sub(*m).decode().abs() < 1e-9);
    }
    // Coterie GLWE ciphertexts decrypt under TFHE-rs.
    let mut rng = Csprng::insecure_from_seed_for_tests([52; 32]);
    let mut prep = cglwe_key.prepare().unwrap();
    let mut c = GlweCiphertext::<u64>::zero(k, n);
    encrypt_glwe_ciphertext(
        &mut prep,
        &mut c,
        &msg,
        &NoiseSampler::new(p.glwe_noise_std, 64).unwrap(),
        &mut rng,
    );
    let t = tc::GlweCiphertext::from_container(c.as_slice().to_vec(), tc::PolynomialSize(n), cm);
    let mut out = tc::PlaintextList::new(0u64, tc::PlaintextCount(n));
    tc::decrypt_glwe_ciphertext(&tglwe_key, &t, &mut out);
    for (d, m) in out.into_container().iter().zip(&msg) {
        assert!(d.wrapping_sub(*m).decode().abs() < 1e-9);
    }
}

/// Coterie keys built from TFHE-rs key bytes bootstrap TFHE-rs ciphertexts; TFHE-rs decrypts
/// the result.
#[test]
fn coterie_bootstraps_tfhe_rs_ciphertexts() {
    let p = TfheParams::tfhe_rs_boolean_default();
    let mut g = gens();
    let cm = tc::CiphertextModulus::<u32>::new_native();
    let noise = tc::Gaussian::from_dispersion_parameter(tc::StandardDev(p.lwe_noise_std), 0.0);
    let t_small =
        tc::LweSecretKey::generate_new_binary(tc::LweDimension(p.lwe_dimension), &mut g.secret);
    let t_glwe = tc::GlweSecretKey::generate_new_binary(
        tc::GlweDimension(p.glwe_dimension),
        tc::PolynomialSize(p.polynomial_size),
        &mut g.secret,
    );
    let ck = ClientKey::<u32>::from_keys(
        &p,
        LweSecretKey::from_container(t_small.as_ref().to_vec()),
        GlweSecretKey::from_container(
            p.glwe_dimension,
            p.polynomial_size,
            t_glwe.as_ref().to_vec(),
        )
        .unwrap(),
    )
    .unwrap();
    let mut rng = Csprng::insecure_from_seed_for_tests([53; 32]);
    let sk = ServerKey::new(&ck, &mut rng).unwrap();
    let mut ev = sk.evaluator().unwrap();
    let enc = |b: bool, g: &mut Gens| {
        let mu = u32::encode(if b { 0.125 } else { -0.125 });
        let t = tc::allocate_and_encrypt_new_lwe_ciphertext(
            &t_small,
            tc::Plaintext(mu),
            noise,
            cm,
            &mut g.enc,
        );
        LweCiphertext::from_container(t.into_container()).unwrap()
    };
    for (a, b) in [(false, false), (false, true), (true, false), (true, true)] {
        let c = ev.nand(&enc(a, &mut g), &enc(b, &mut g)).unwrap();
        let t = tc::LweCiphertext::from_container(c.as_slice().to_vec(), cm);
        let phase = tc::decrypt_lwe_ciphertext(&t_small, &t).0;
        assert_eq!((phase as i32) > 0, !(a && b), "NAND({a}, {b})");
    }
}
