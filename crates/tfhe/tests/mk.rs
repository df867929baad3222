//! Multi-key TFHE (AKÖ, seed 003) tests, named after the spec's §8 cases.

mod mk_common;

use std::time::Instant;

use coterie_math::prg::Csprng;
use coterie_tfhe::boolean::Gate;
use coterie_tfhe::mk::eval::decrypt_bool_with_all_keys;
use coterie_tfhe::mk::params::MkParams;
use coterie_tfhe::public_key::ProductMethod;
use mk_common::setup;

/// T6: NAND truth table for `k` parties with fresh keys, inputs from two different parties, each
/// row `reps` times; plus a chain of depth 10.
fn nand_truth_table(k: usize, seed: u8, reps: usize) {
    let params = MkParams::ako_at_least(k).unwrap();
    let t = Instant::now();
    let s = setup(&params, k, seed, ProductMethod::Exact);
    let keygen = t.elapsed();
    let mut rng = Csprng::insecure_from_seed_for_tests([seed.wrapping_add(1); 32]);
    let mut ev = s.server.evaluator().unwrap();
    let keys = s.keys();
    let t = Instant::now();
    let mut boots = 0;
    for rep in 0..reps {
        for (x, y) in [(false, false), (false, true), (true, false), (true, true)] {
            let (p, q) = (rep % k, (rep + 1 + rep / k) % k);
            let q = if q == p { (p + 1) % k } else { q };
            let a = s.encrypt(p, x, &mut rng);
            let b = s.encrypt(q, y, &mut rng);
            let c = ev.nand(&a, &b).unwrap();
            boots += 1;
            assert_eq!(
                decrypt_bool_with_all_keys(&keys, &c),
                !(x && y),
                "k={k}: NAND({x}, {y}) from parties {p}, {q}"
            );
        }
    }
    // Chain: NAND outputs fed back (depth 10), checked at every step.
    let mut bits = (true, false);
    let mut a = s.encrypt(0, bits.0, &mut rng);
    let mut b = s.encrypt(k - 1, bits.1, &mut rng);
    for depth in 0..10 {
        let c = ev.nand(&a, &b).unwrap();
        boots += 1;
        let v = !(bits.0 && bits.1);
        assert_eq!(
            decrypt_bool_with_all_keys(&keys, &c),
            v,
            "k={k}: depth {depth}"
        );
        bits = (bits.1, v);
        a = b;
        b = c;
    }
    eprintln!(
        "k={k} ({}): keygen {:.1?}, {:.1} ms per bootstrap",
        params.name,
        keygen,
        t.elapsed().as_secs_f64() * 1e3 / boots as f64
    );
}

#[test]
fn t6_nand_truth_table_2_parties() {
    nand_truth_table(2, 21, 3);
}

#[test]
fn t6_nand_truth_table_4_parties() {
    nand_truth_table(4, 22, 2);
}

#[test]
fn t6_nand_truth_table_8_parties() {
    nand_truth_table(8, 23, 1);
}

/// All gates on the toy set (fast), every input pair.
#[test]
fn all_gates_toy_3_parties() {
    let params = MkParams::insecure_toy(3);
    let s = setup(&params, 3, 24, ProductMethod::Exact);
    let mut rng = Csprng::insecure_from_seed_for_tests([25; 32]);
    let mut ev = s.server.evaluator().unwrap();
    let keys = s.keys();
    for g in [
        Gate::Nand,
        Gate::And,
        Gate::Or,
        Gate::Nor,
        Gate::Xor,
        Gate::Xnor,
    ] {
        for (x, y) in [(false, false), (false, true), (true, false), (true, true)] {
            let a = s.encrypt(0, x, &mut rng);
            let b = s.encrypt(2, y, &mut rng);
            let c = ev.gate(g, &a, &b).unwrap();
            assert_eq!(
                decrypt_bool_with_all_keys(&keys, &c),
                g.eval(x, y),
                "{g:?}({x}, {y})"
            );
            let n = ev.not(&c);
            assert_eq!(decrypt_bool_with_all_keys(&keys, &n), !g.eval(x, y));
        }
    }
    let t = ev.trivial(true);
    assert!(decrypt_bool_with_all_keys(&keys, &t));
}

/// The 8-bit comparison of the CLI demo, on the toy set (2 parties).
#[test]
fn greater_than_8_bits_toy() {
    let params = MkParams::insecure_toy(2);
    let s = setup(&params, 2, 26, ProductMethod::Exact);
    let mut rng = Csprng::insecure_from_seed_for_tests([27; 32]);
    let mut ev = s.server.evaluator().unwrap();
    let keys = s.keys();
    for (x, y) in [
        (200u8, 13u8),
        (13, 200),
        (77, 77),
        (0, 255),
        (255, 254),
        (128, 127),
    ] {
        let xs: Vec<_> = (0..8)
            .map(|i| s.encrypt(0, (x >> i) & 1 == 1, &mut rng))
            .collect();
        let ys: Vec<_> = (0..8)
            .map(|i| s.encrypt(1, (y >> i) & 1 == 1, &mut rng))
            .collect();
        let gt = ev.greater_than(&xs, &ys).unwrap();
        assert_eq!(decrypt_bool_with_all_keys(&keys, &gt), x > y, "{x} > {y}");
    }
    assert!(ev.greater_than(&[], &[]).is_err());
}
