//! Times the NTT-domain multiply-accumulate `acc += a·b mod q` two ways, alternating, on one
//! degree and prime at a time: coterie's floating-point kernel (`kernels::mul_acc_mod`, which
//! `NttPlan::mul_acc` takes where `tfhe-ntt` has no IFMA path and `q < 2^50`) and `tfhe-ntt`'s
//! `mul_accumulate`. Prints the minimum and the median of 2,000 runs of each, three rounds:
//! `cargo run --release -p coterie-math --example mul_acc_paths`.
use coterie_math::kernels::mul_acc_mod;
use coterie_math::modulus::Modulus;
use coterie_math::primes::ntt_primes;
use std::time::Instant;

/// Minimum and median of `reps` timings of `f`, in µs.
fn time(reps: usize, mut f: impl FnMut()) -> (f64, f64) {
    let mut v: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    v.sort_by(f64::total_cmp);
    (v[0], v[reps / 2])
}

fn main() {
    for (log_n, bits) in [(12u32, 36u32), (13, 44), (14, 49)] {
        let n = 1usize << log_n;
        let q = ntt_primes(bits, n, 1).expect("an NTT prime")[0];
        let m = Modulus::new(q).expect("a modulus");
        let plan = tfhe_ntt::prime64::Plan::try_new(n, q).expect("a tfhe-ntt plan");
        let word = |i: u64, k: u64| i.wrapping_mul(k) % q;
        let mut acc: Vec<u64> = (0..n as u64)
            .map(|i| word(i, 0x9e37_79b9_7f4a_7c15))
            .collect();
        let a: Vec<u64> = (0..n as u64)
            .map(|i| word(i, 0x2545_f491_4f6c_dd1d))
            .collect();
        let b: Vec<u64> = (0..n as u64)
            .map(|i| word(i, 0x1234_5678_9abc_def1))
            .collect();
        println!(
            "n = {n}, {bits}-bit q (tfhe-ntt IFMA path: {})",
            plan.use_ifma()
        );
        for round in 0..3 {
            let fp = time(2000, || mul_acc_mod(&m, &mut acc, &a, &b));
            let tf = time(2000, || plan.mul_accumulate(&mut acc, &a, &b));
            println!(
                "  round {round}: kernels::mul_acc_mod {:.1} / {:.1} µs, tfhe-ntt mul_accumulate {:.1} / {:.1} µs (min / median)",
                fp.0, fp.1, tf.0, tf.1
            );
        }
    }
}
