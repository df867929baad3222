//! Runs NAND gates and 4-bit PBS in a loop (for profiling with `perf`).
//!
//! `cargo run --release -p coterie-tfhe --example pbs_loop -- [nand|pbs|ks] [iterations]`

use std::time::Instant;

use coterie_math::prg::Csprng;
use coterie_tfhe::boolean::{ClientKey, Gate, ServerKey};
use coterie_tfhe::lwe::{LweCiphertext, keyswitch_lwe_ciphertext};
use coterie_tfhe::params::TfheParams;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let what = args.get(1).map(String::as_str).unwrap_or("nand");
    let iters: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(200);
    let mut rng = Csprng::new();
    let params = if what == "nand" {
        TfheParams::tfhe_rs_boolean_default()
    } else {
        TfheParams::tfhe_rs_shortint_2_2_gaussian()
    };
    if params.torus_bits == 32 {
        let ck = ClientKey::<u32>::generate(&params, &mut rng).expect("keys");
        let sk = ServerKey::new(&ck, &mut rng).expect("keys");
        let mut ev = sk.evaluator().expect("evaluator");
        let a = ck.encrypt_bool(true, &mut rng);
        let b = ck.encrypt_bool(true, &mut rng);
        let mut out = LweCiphertext::zero(params.lwe_dimension);
        let t = Instant::now();
        for _ in 0..iters {
            ev.gate_into(Gate::Nand, &a, &b, &mut out);
        }
        println!(
            "nand: {:.3} ms",
            t.elapsed().as_secs_f64() * 1e3 / iters as f64
        );
    } else {
        let ck = ClientKey::<u64>::generate(&params, &mut rng).expect("keys");
        let sk = ServerKey::new(&ck, &mut rng).expect("keys");
        let mut ev = sk.evaluator().expect("evaluator");
        let lut = sk.lut(4, |x| x).expect("lut");
        let c = ck.encrypt_message(3, 4, &mut rng);
        let mut big = LweCiphertext::zero(params.big_lwe_dimension());
        let mut small = LweCiphertext::zero(params.lwe_dimension);
        let t = Instant::now();
        for _ in 0..iters {
            if what == "ks" {
                keyswitch_lwe_ciphertext(sk.keyswitch_key(), &big, &mut small);
            } else {
                ev.pbs_no_ks_into(&c, &lut, &mut big);
            }
        }
        println!(
            "{what}: {:.3} ms",
            t.elapsed().as_secs_f64() * 1e3 / iters as f64
        );
    }
}
