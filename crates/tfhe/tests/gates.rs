//! Gate bootstrapping with TFHE-rs's default boolean parameters: truth tables over many random
//! encryptions, and long NAND chains.

use std::sync::OnceLock;

use coterie_math::prg::Csprng;
use coterie_tfhe::boolean::{ClientKey, Gate, ServerKey};
use coterie_tfhe::params::TfheParams;
use rand_core::Rng;

fn keys() -> &'static (ClientKey<u32>, ServerKey<u32>) {
    static KEYS: OnceLock<(ClientKey<u32>, ServerKey<u32>)> = OnceLock::new();
    KEYS.get_or_init(|| {
        let mut rng = Csprng::insecure_from_seed_for_tests([11; 32]);
        let params = TfheParams::tfhe_rs_boolean_default();
        let ck = ClientKey::generate(&params, &mut rng).unwrap();
        let sk = ServerKey::new(&ck, &mut rng).unwrap();
        (ck, sk)
    })
}

#[test]
fn truth_tables_all_gates() {
    let (ck, sk) = keys();
    let mut ev = sk.evaluator().unwrap();
    let mut rng = Csprng::insecure_from_seed_for_tests([12; 32]);
    const REPS: usize = 6;
    for gate in Gate::ALL {
        for (a, b) in [(false, false), (false, true), (true, false), (true, true)] {
            for _ in 0..REPS {
                let ca = ck.encrypt_bool(a, &mut rng);
                let cb = ck.encrypt_bool(b, &mut rng);
                let c = ev.gate(gate, &ca, &cb).unwrap();
                assert_eq!(ck.decrypt_bool(&c), gate.eval(a, b), "{gate:?}({a}, {b})");
            }
        }
    }
    for a in [false, true] {
        for _ in 0..REPS {
            let ca = ck.encrypt_bool(a, &mut rng);
            assert_eq!(ck.decrypt_bool(&ev.not(&ca)), !a, "NOT {a}");
        }
    }
    // The named shortcuts agree with `gate`.
    let (t, f) = (
        ck.encrypt_bool(true, &mut rng),
        ck.encrypt_bool(false, &mut rng),
    );
    assert!(!ck.decrypt_bool(&ev.nand(&t, &t).unwrap()));
    assert!(!ck.decrypt_bool(&ev.and(&t, &f).unwrap()));
    assert!(ck.decrypt_bool(&ev.or(&t, &f).unwrap()));
    assert!(!ck.decrypt_bool(&ev.nor(&t, &f).unwrap()));
    assert!(ck.decrypt_bool(&ev.xor(&t, &f).unwrap()));
    assert!(!ck.decrypt_bool(&ev.xnor(&t, &f).unwrap()));
    // Wrong dimensions are errors, not panics.
    let short = coterie_tfhe::lwe::LweCiphertext::<u32>::zero(10);
    assert!(ev.nand(&t, &short).is_err());
    assert!(ev.apply_lut(&short, &sk.lut(1, |x| x).unwrap()).is_err());
}

/// Gates composed on bootstrapped outputs (not only fresh encryptions), with random gate choice.
#[test]
fn random_circuit_on_bootstrapped_inputs() {
    let (ck, sk) = keys();
    let mut ev = sk.evaluator().unwrap();
    let mut rng = Csprng::insecure_from_seed_for_tests([13; 32]);
    let mut plain: Vec<bool> = (0..8).map(|i| i % 3 == 0).collect();
    let mut enc: Vec<_> = plain
        .iter()
        .map(|&b| ck.encrypt_bool(b, &mut rng))
        .collect();
    for _ in 0..120 {
        let gate = Gate::ALL[rng.next_u32() as usize % 6];
        let i = rng.next_u32() as usize % plain.len();
        let j = rng.next_u32() as usize % plain.len();
        let k = rng.next_u32() as usize % plain.len();
        let c = ev.gate(gate, &enc[i], &enc[j]).unwrap();
        plain[k] = gate.eval(plain[i], plain[j]);
        enc[k] = c;
        assert_eq!(ck.decrypt_bool(&enc[k]), plain[k]);
    }
}

fn nand_chain(len: usize, seed: u8) {
    let (ck, sk) = keys();
    let mut ev = sk.evaluator().unwrap();
    let mut rng = Csprng::insecure_from_seed_for_tests([seed; 32]);
    // x_{i+1} = NAND(x_i, x_{i-1}): every input after the first two is a bootstrapped output.
    let (mut p0, mut p1) = (true, false);
    let (mut c0, mut c1) = (ck.encrypt_bool(p0, &mut rng), ck.encrypt_bool(p1, &mut rng));
    let mut out = coterie_tfhe::lwe::LweCiphertext::zero(sk.params().lwe_dimension);
    for step in 0..len {
        ev.gate_into(Gate::Nand, &c1, &c0, &mut out).unwrap();
        let p2 = !(p1 && p0);
        assert_eq!(ck.decrypt_bool(&out), p2, "step {step}");
        (p0, p1) = (p1, p2);
        c0 = core::mem::replace(&mut c1, out.clone());
    }
}

/// A chain of 250 NANDs stays correct: every input after the first two is a bootstrapped output,
/// so noise that grew along the chain would show.
#[test]
fn nand_chain_250() {
    nand_chain(250, 14);
}

/// The same chain over 1000 gates (over a minute on the 2-core CI box: run by
/// `bench/tfhe-bench.sh` with the statistical tests).
#[test]
#[ignore = "long: run by bench/tfhe-bench.sh"]
fn nand_chain_1000() {
    nand_chain(1000, 15);
}
