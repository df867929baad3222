//! Ciphertexts of any number of parts over an ordered key set: single-key products of degree
//! above 2 decrypt under `(1, s, s², …)`, multi-key ciphertexts extend, add and tensor under
//! `(1, s_1, …, s_d)` and its outer product.

use coterie_bfv::encrypt::decrypt_multi_key;
use coterie_bfv::eval::{scale_and_round, tensor};
use coterie_bfv::{Ciphertext, Context, KeySet, Params, Plaintext, SecretKey};
use coterie_math::prg::Csprng;

fn setup() -> (Context, Csprng) {
    (
        Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap(),
        Csprng::insecure_from_seed_for_tests([31; 32]),
    )
}

#[test]
fn single_key_products_of_any_degree_decrypt() {
    let (ctx, mut r) = setup();
    let sk = SecretKey::generate(&ctx, &mut r);
    let rlk = sk.relin_key(&mut r);
    let t = 65537u64;
    let v = |k: u64| -> Vec<u64> { (0..256u64).map(|i| (i * k + 1) % t).collect() };
    let enc = |x: &[u64], r: &mut Csprng| {
        sk.encrypt_symmetric(&Plaintext::encode_simd(&ctx, x).unwrap(), r)
            .unwrap()
    };
    let (x, y, z) = (v(3), v(5), v(7));
    let (cx, cy, cz) = (enc(&x, &mut r), enc(&y, &mut r), enc(&z, &mut r));
    let xy = cx.mul_no_relin(&cy).unwrap();
    assert_eq!(xy.len(), 3);
    // Degree 2 × degree 1 → 4 parts; degree 2 × degree 2 → 5 parts.
    let xyz = xy.mul_no_relin(&cz).unwrap();
    assert_eq!(xyz.len(), 4);
    let xyxy = xy.mul_no_relin(&xy).unwrap();
    assert_eq!(xyxy.len(), 5);
    let dec = |c: &Ciphertext| sk.decrypt(c).unwrap().decode_simd().unwrap();
    let mul =
        |a: &[u64], b: &[u64]| -> Vec<u64> { a.iter().zip(b).map(|(p, q)| p * q % t).collect() };
    assert_eq!(dec(&xyz), mul(&mul(&x, &y), &z));
    assert_eq!(dec(&xyxy), mul(&mul(&x, &y), &mul(&x, &y)));
    // A 4-part ciphertext adds to a 2-part one (padded) and cannot be relinearized by s² alone.
    assert_eq!(dec(&xyz.add(&cx).unwrap()), {
        let w = mul(&mul(&x, &y), &z);
        w.iter()
            .zip(&x)
            .map(|(a, b)| (a + b) % t)
            .collect::<Vec<_>>()
    });
    assert!(xyz.relinearize(&rlk).is_err());
    assert!(xyz.mod_switch_to_next().is_ok());
}

#[test]
fn multi_key_ciphertexts_extend_add_and_tensor() {
    let (ctx, mut r) = setup();
    let s1 = SecretKey::generate(&ctx, &mut r);
    let s2 = SecretKey::generate(&ctx, &mut r);
    let s3 = SecretKey::generate(&ctx, &mut r);
    let under = |sk: &SecretKey, id: u64, vals: &[u64], r: &mut Csprng| {
        let ct = sk
            .encrypt_symmetric(&Plaintext::encode_simd(&ctx, vals).unwrap(), r)
            .unwrap();
        let (parts, keys) = ct.into_parts();
        assert_eq!(keys, KeySet::Powers);
        Ciphertext::from_parts_with_keys(&ctx, ctx.max_level(), parts, KeySet::Parties(vec![id]))
            .unwrap()
    };
    let a = under(&s1, 10, &[2, 3], &mut r);
    let b = under(&s2, 20, &[5, 7], &mut r);
    let c = under(&s3, 30, &[11, 13], &mut r);
    let ids = [10, 20, 30];
    let keys = [(10, &s1), (20, &s2), (30, &s3)];
    let (a, b, c) = (
        a.extend_to(&ids).unwrap(),
        b.extend_to(&ids).unwrap(),
        c.extend_to(&ids).unwrap(),
    );
    assert_eq!(a.len(), 4);
    let slots = |ct: &Ciphertext| -> Vec<u64> {
        decrypt_multi_key(ct, &keys).unwrap().decode_simd().unwrap()[..2].to_vec()
    };
    assert_eq!(slots(&a.add(&b).unwrap().add(&c).unwrap()), vec![18, 23]);
    // Tensor of two multi-key ciphertexts over the same ids: (d+1)² parts under s̄ ⊗ s̄.
    let ab = scale_and_round(&tensor(&a.add(&c).unwrap(), &b).unwrap()).unwrap();
    assert_eq!(ab.len(), 16);
    assert_eq!(ab.key_set(), &KeySet::PartiesTensor(ids.to_vec()));
    assert_eq!(slots(&ab), vec![13 * 5, 16 * 7]);
    // Errors: different id lists, a missing key, single-key operations on multi-key ciphertexts.
    let a2 = under(&s1, 10, &[1], &mut r);
    assert!(a2.add(&a).is_err());
    assert!(tensor(&a2, &a).is_err());
    assert!(decrypt_multi_key(&a, &keys[..2]).is_err());
    assert!(s1.decrypt(&a).is_err());
    assert!(a2.extend_to(&[20, 30]).is_err());
    assert!(a2.extend_to(&[10, 10]).is_err());
    assert!(tensor(&ab, &ab).is_err());
}
