//! Versioned serialization round trips and rejection of malformed inputs.

use coterie_bfv::serial::CiphertextWire;
use coterie_bfv::{
    Ciphertext, Context, Error, GaloisKey, GaloisKeys, KeySet, Params, Plaintext, PublicKey,
    RelinKey, SecretKey, SeededCiphertext,
};
use coterie_math::prg::Csprng;

fn setup() -> (Context, Context, Csprng) {
    let a = Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap();
    let b = Context::new(Params::insecure_toy(512, 65537).unwrap()).unwrap();
    (a, b, Csprng::insecure_from_seed_for_tests([9; 32]))
}

#[test]
fn roundtrips_preserve_function() {
    let (ctx, _, mut r) = setup();
    let sk = SecretKey::generate(&ctx, &mut r);
    let sk2 = SecretKey::from_bytes(&ctx, &sk.to_bytes()).unwrap();
    assert_eq!(sk2.coefficients(), sk.coefficients());
    let pk = PublicKey::from_bytes(&ctx, &sk.public_key(&mut r).to_bytes()).unwrap();
    let rlk = RelinKey::from_bytes(&ctx, &sk.relin_key(&mut r).to_bytes()).unwrap();
    let gks = sk.galois_keys(&[1], true, &mut r).unwrap();
    let gks = GaloisKeys::from_bytes(&ctx, &gks.to_bytes(&ctx)).unwrap();
    assert_eq!(gks.elements().len(), 2);
    let gk = sk.galois_key(5, &mut r).unwrap();
    let gk = GaloisKey::from_bytes(&ctx, &gk.to_bytes()).unwrap();
    assert_eq!(gk.element(), 5);

    let vals: Vec<u64> = (0..256).map(|i| i * 7 + 1).collect();
    let pt = Plaintext::encode_simd(&ctx, &vals).unwrap();
    assert_eq!(Plaintext::from_bytes(&ctx, &pt.to_bytes()).unwrap(), pt);
    let ct = pk.encrypt(&pt, &mut r).unwrap();
    let ct2 = Ciphertext::from_bytes(&ctx, &ct.to_bytes()).unwrap();
    assert_eq!(ct2, ct);
    let seeded = sk2.encrypt_symmetric_seeded(&pt, &mut r).unwrap();
    let bytes = seeded.to_bytes();
    assert!(
        bytes.len() * 2 < ct.to_bytes().len() + 200,
        "seeded form is about half"
    );
    let seeded = SeededCiphertext::from_bytes(&ctx, &bytes).unwrap();
    let prod = ct2.mul(&seeded.expand().unwrap(), &rlk).unwrap();
    let rot = prod.rotate_rows(1, &gks).unwrap();
    let got = sk2.decrypt(&rot).unwrap().decode_simd().unwrap();
    let sq: Vec<u64> = vals.iter().map(|v| v * v % 65537).collect();
    assert_eq!(got[0], sq[1]);
    assert_eq!(got[127], sq[0]);
    // A lower-level ciphertext and a 3-part one round-trip too.
    let low = ct.mod_switch_to_next().unwrap();
    assert_eq!(Ciphertext::from_bytes(&ctx, &low.to_bytes()).unwrap(), low);
    let three = ct.mul_no_relin(&ct).unwrap();
    assert_eq!(
        Ciphertext::from_bytes(&ctx, &three.to_bytes()).unwrap(),
        three
    );
}

#[test]
fn malformed_inputs_are_errors() {
    let (ctx, other, mut r) = setup();
    let sk = SecretKey::generate(&ctx, &mut r);
    let pk = sk.public_key(&mut r);
    let pt = Plaintext::encode_coefficients(&ctx, &[1, 2, 3]).unwrap();
    let ct = pk.encrypt(&pt, &mut r).unwrap();
    let bytes = ct.to_bytes();

    // Wrong degree / parameter set.
    assert!(matches!(
        Ciphertext::from_bytes(&other, &bytes),
        Err(Error::Mismatch(_)) | Err(Error::Malformed(_))
    ));
    assert!(PublicKey::from_bytes(&other, &pk.to_bytes()).is_err());
    assert!(SecretKey::from_bytes(&other, &sk.to_bytes()).is_err());
    // Another kind of object.
    assert!(PublicKey::from_bytes(&ctx, &bytes).is_err());
    assert!(Plaintext::from_bytes(&ctx, &bytes).is_err());
    // Truncations and garbage never panic.
    for cut in [0, 1, 10, 40, bytes.len() / 2, bytes.len() - 1] {
        assert!(Ciphertext::from_bytes(&ctx, &bytes[..cut]).is_err());
    }
    for len in [0usize, 3, 50, 1000] {
        let junk: Vec<u8> = (0..len).map(|i| (i * 131 + 7) as u8).collect();
        assert!(Ciphertext::from_bytes(&ctx, &junk).is_err());
        assert!(RelinKey::from_bytes(&ctx, &junk).is_err());
        assert!(GaloisKeys::from_bytes(&ctx, &junk).is_err());
    }
    // Oversized input is rejected before parsing.
    let huge = vec![0u8; 100 * bytes.len()];
    assert!(matches!(
        Ciphertext::from_bytes(&ctx, &huge),
        Err(Error::Base(_))
    ));
    let mut huge = coterie_base::envelope::seal_bytes(*b"BFVc", 2, &[]).unwrap();
    huge.resize(100 * bytes.len(), 0);
    let payload_len = (huge.len() - 14) as u32;
    huge[10..14].copy_from_slice(&payload_len.to_le_bytes());
    assert!(matches!(
        Ciphertext::from_bytes(&ctx, &huge),
        Err(Error::Base(m)) if m.contains("over the limit") || m.contains("limit")
    ));

    // Edit the wire struct: wrong version, level, part count, key set, sizes, unreduced residue.
    let w: CiphertextWire = coterie_base::envelope::open(*b"BFVc", 2, &bytes, bytes.len()).unwrap();
    let enc = |w: &CiphertextWire| coterie_base::to_envelope(w).unwrap();
    // Version 1 held 64-bit words; its decoder is gone.
    let bad = coterie_base::envelope::seal(*b"BFVc", 1, &w).unwrap();
    assert!(Ciphertext::from_bytes(&ctx, &bad).is_err());
    let bad = coterie_base::envelope::seal(*b"BFVp", 2, &w).unwrap();
    assert!(Ciphertext::from_bytes(&ctx, &bad).is_err());
    let mut bad = w.clone();
    bad.keys = KeySet::Parties(vec![1, 2]);
    assert!(Ciphertext::from_bytes(&ctx, &enc(&bad)).is_err());
    let mut bad = w.clone();
    bad.keys = KeySet::Parties(vec![3]);
    assert!(Ciphertext::from_bytes(&ctx, &enc(&bad)).is_ok());
    let mut bad = w.clone();
    bad.level = 7;
    assert!(Ciphertext::from_bytes(&ctx, &enc(&bad)).is_err());
    let mut bad = w.clone();
    bad.level -= 1; // sizes no longer match the level
    assert!(Ciphertext::from_bytes(&ctx, &enc(&bad)).is_err());
    let mut bad = w.clone();
    bad.parts.truncate(1);
    assert!(Ciphertext::from_bytes(&ctx, &enc(&bad)).is_err());
    let mut bad = w.clone();
    bad.parts[1].pop();
    assert!(Ciphertext::from_bytes(&ctx, &enc(&bad)).is_err());
    let mut bad = w.clone();
    bad.parts[0][..8].fill(0xff); // the first residue 2^bits(q_0) − 1 ≥ q_0
    assert!(Ciphertext::from_bytes(&ctx, &enc(&bad)).is_err());
    let mut bad = w.clone();
    bad.params[0] ^= 1;
    assert!(matches!(
        Ciphertext::from_bytes(&ctx, &enc(&bad)),
        Err(Error::Mismatch(_))
    ));
    assert!(Ciphertext::from_bytes(&ctx, &enc(&w)).is_ok());

    // Operations across parameter sets or levels are errors, not panics.
    let sk_o = SecretKey::generate(&other, &mut r);
    let ct_o = sk_o
        .encrypt_symmetric(
            &Plaintext::encode_coefficients(&other, &[1]).unwrap(),
            &mut r,
        )
        .unwrap();
    assert!(ct.add(&ct_o).is_err());
    assert!(sk.decrypt(&ct_o).is_err());
    assert!(ct.add(&ct.mod_switch_to_next().unwrap()).is_err());
    assert!(ct.mod_switch_to(0).unwrap().mod_switch_to_next().is_err());
    assert!(
        Plaintext::encode_simd(
            &Context::new(Params::insecure_toy(256, 256).unwrap()).unwrap(),
            &[1]
        )
        .is_err()
    );
    assert!(Plaintext::encode_coefficients(&ctx, &[0; 257]).is_err());
    assert!(SecretKey::from_coefficients(&ctx, vec![0; 255]).is_err());
}

/// The wire structs hand their byte fields to serde as byte strings
/// (`coterie_base::bytes`), which postcard writes exactly as it wrote the plain `Vec<u8>`
/// sequences before: the same ciphertext encodes to the same bytes through a mirror of the wire
/// struct without the attribute, and either reads the other's bytes.
#[test]
fn byte_string_fields_keep_the_format() {
    #[derive(serde::Serialize, serde::Deserialize)]
    struct PlainCiphertextWire {
        params: coterie_bfv::context::Fingerprint,
        level: u32,
        keys: KeySet,
        parts: Vec<Vec<u8>>,
    }
    let (ctx, _, mut r) = setup();
    let sk = SecretKey::generate(&ctx, &mut r);
    let pt = Plaintext::encode_coefficients(&ctx, &[5, 6, 7]).unwrap();
    let ct = sk.public_key(&mut r).encrypt(&pt, &mut r).unwrap();
    let bytes = ct.to_bytes();
    let w: CiphertextWire = coterie_base::envelope::open(*b"BFVc", 2, &bytes, bytes.len()).unwrap();
    let plain = PlainCiphertextWire {
        params: w.params,
        level: w.level,
        keys: w.keys.clone(),
        parts: w.parts.clone(),
    };
    let (a, b) = (
        postcard::to_allocvec(&w).unwrap(),
        postcard::to_allocvec(&plain).unwrap(),
    );
    assert!(a.len() > 2 * 256);
    assert_eq!(a, b);
    let back: PlainCiphertextWire = postcard::from_bytes(&a).unwrap();
    assert_eq!(back.parts, w.parts);
    let back: CiphertextWire = postcard::from_bytes(&b).unwrap();
    assert_eq!(back.parts, w.parts);
}
