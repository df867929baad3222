//! Property tests against a plaintext reference on tiny (insecure) rings: random inputs, random
//! circuits of additions, products and automorphisms.

use coterie_bfv::{Context, Params, Plaintext, SecretKey};
use coterie_math::ntt::{automorphism_naive as automorphism, negacyclic_mul_naive as poly_mul};
use coterie_math::prg::Csprng;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn random_circuits_match_reference(
        x in proptest::collection::vec(0u64..256, 64),
        y in proptest::collection::vec(0u64..256, 64),
        ops in proptest::collection::vec(0u8..4, 1..5),
        seed in any::<[u8; 32]>(),
    ) {
        let ctx = Context::new(Params::insecure_toy(64, 256).unwrap()).unwrap();
        let t = 256;
        let mut r = Csprng::insecure_from_seed_for_tests(seed);
        let sk = SecretKey::generate(&ctx, &mut r);
        let pk = sk.public_key(&mut r);
        let rlk = sk.relin_key(&mut r);
        let gk = sk.galois_key(3, &mut r).unwrap();
        let mut acc = x.clone();
        let mut ct = pk.encrypt(&Plaintext::encode_coefficients(&ctx, &x).unwrap(), &mut r).unwrap();
        let cy = sk.encrypt_symmetric(&Plaintext::encode_coefficients(&ctx, &y).unwrap(), &mut r).unwrap();
        let mut muls = 0;
        for op in ops {
            match op {
                0 => { ct = ct.add(&cy).unwrap(); acc = acc.iter().zip(&y).map(|(a, b)| (a + b) % t).collect(); }
                1 if muls < 2 => { ct = ct.mul(&cy, &rlk).unwrap(); acc = poly_mul(&acc, &y, t); muls += 1; }
                2 => { ct = ct.apply_galois(&gk).unwrap(); acc = automorphism(&acc, 3, t); }
                _ => { ct = ct.sub(&cy).unwrap().neg(); acc = acc.iter().zip(&y).map(|(a, b)| (b + t - a) % t).collect(); }
            }
            prop_assert_eq!(sk.decrypt(&ct).unwrap().coefficients().unwrap().to_vec(), acc.clone());
        }
        // And after a modulus switch.
        let low = ct.mod_switch_to_next().unwrap();
        prop_assert_eq!(sk.decrypt(&low).unwrap().coefficients().unwrap().to_vec(), acc.clone());
    }
}
