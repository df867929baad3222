//! Programmable bootstrapping of lookup tables on 1–4 bit messages (TFHE-rs 2_2 shortint
//! parameters, 64-bit torus, N = 2048).

use coterie_math::prg::Csprng;
use coterie_tfhe::boolean::{ClientKey, ServerKey};
use coterie_tfhe::params::TfheParams;

#[test]
fn lut_bootstrapping_2_to_4_bits() {
    let mut rng = Csprng::insecure_from_seed_for_tests([21; 32]);
    let params = TfheParams::tfhe_rs_shortint_2_2_gaussian();
    let ck = ClientKey::<u64>::generate(&params, &mut rng).unwrap();
    let sk = ServerKey::new(&ck, &mut rng).unwrap();
    let mut ev = sk.evaluator().unwrap();
    for bits in 1..=4u32 {
        let m = 1u64 << bits;
        let f = move |x: u64| (x * x + 3) % m;
        let lut = sk.lut(bits, f).unwrap();
        let g = move |x: u64| (m - 1 - x) % m;
        let lut_g = sk.lut(bits, g).unwrap();
        for x in 0..m {
            let c = ck.encrypt_message(x, bits, &mut rng);
            let y = ev.apply_lut(&c, &lut).unwrap();
            assert_eq!(
                ck.decrypt_message(&y, bits),
                Some(f(x)),
                "{bits} bits, f({x})"
            );
            // Composition on a bootstrapped input.
            let z = ev.apply_lut(&y, &lut_g).unwrap();
            assert_eq!(
                ck.decrypt_message(&z, bits),
                Some(g(f(x))),
                "{bits} bits, g(f({x}))"
            );
        }
    }
}

/// The seed 003 single-key parameter set (64-bit torus, ternary RLWE key) bootstraps gates.
#[test]
fn seed003_single_key_gates() {
    let mut rng = Csprng::insecure_from_seed_for_tests([22; 32]);
    let params = TfheParams::seed003_ako_k2_single_key();
    let ck = ClientKey::<u64>::generate(&params, &mut rng).unwrap();
    let sk = ServerKey::new(&ck, &mut rng).unwrap();
    let mut ev = sk.evaluator().unwrap();
    for _ in 0..3 {
        for (a, b) in [(false, false), (false, true), (true, false), (true, true)] {
            let (ca, cb) = (ck.encrypt_bool(a, &mut rng), ck.encrypt_bool(b, &mut rng));
            assert_eq!(ck.decrypt_bool(&ev.nand(&ca, &cb).unwrap()), !(a && b));
            assert_eq!(ck.decrypt_bool(&ev.xor(&ca, &cb).unwrap()), a ^ b);
        }
    }
}
