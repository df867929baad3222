//! Speed of the wrapping 64×128-bit inner product: the scalar reference
//! [`coterie_math::dot::dot_u64_u128_scalar`] against [`coterie_math::dot::dot_u64_u128`] (the
//! widest vector kernel of this machine), single and paired, at the LWE dimension 1024; 200,000
//! calls per measurement, best of 5 rounds alternating the forms.
//!
//! `cargo run --profile ci -p coterie-math --example dot_bench`
use coterie_math::dot::{dot_u64_u128, dot_u64_u128_pair, dot_u64_u128_scalar};
use std::hint::black_box;
use std::time::Instant;

const LEN: usize = 1024;
const CALLS: usize = 200_000;
const ROUNDS: usize = 5;

fn main() {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let isa = fast_isa();
    println!(
        "# dot_u64_u128, length {LEN}, {CALLS} calls, best of {ROUNDS} alternating rounds; \
         fast path {isa}; load at start {}",
        load.trim()
    );
    let mut s = 0x0123_4567_89ab_cdefu64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let v: [Vec<u64>; 5] = std::array::from_fn(|_| (0..LEN).map(|_| next()).collect());
    let [a, lo1, hi1, lo2, hi2] = &v;
    assert_eq!(dot_u64_u128(a, lo1, hi1), dot_u64_u128_scalar(a, lo1, hi1));

    // 0: scalar single, 1: fast single, 2: scalar pair (two calls), 3: fast pair
    let mut best = [f64::INFINITY; 4];
    let mut sink = 0u128;
    for _ in 0..ROUNDS {
        for (mode, b) in best.iter_mut().enumerate() {
            let t = Instant::now();
            for _ in 0..CALLS {
                let (a, lo1, hi1) = (black_box(a), black_box(lo1), black_box(hi1));
                let r = match mode {
                    0 => dot_u64_u128_scalar(a, lo1, hi1).unwrap_or(0),
                    1 => dot_u64_u128(a, lo1, hi1).unwrap_or(0),
                    2 => {
                        let x = dot_u64_u128_scalar(a, lo1, hi1).unwrap_or(0);
                        x ^ dot_u64_u128_scalar(a, black_box(lo2), black_box(hi2)).unwrap_or(0)
                    }
                    _ => dot_u64_u128_pair(a, lo1, hi1, black_box(lo2), black_box(hi2))
                        .map_or(0, |(x, y)| x ^ y),
                };
                sink = sink.wrapping_add(black_box(r));
            }
            *b = b.min(t.elapsed().as_secs_f64() * 1e9 / CALLS as f64);
        }
    }
    black_box(sink);
    println!(
        "single: scalar {:.0} ns/call ({:.2} ns/elem), fast {:.0} ns/call ({:.2} ns/elem), {:.2}x",
        best[0],
        best[0] / LEN as f64,
        best[1],
        best[1] / LEN as f64,
        best[0] / best[1]
    );
    println!(
        "pair:   scalar {:.0} ns/call (two calls), fast {:.0} ns/call, {:.2}x; \
         fast pair vs two fast single calls {:.2}x",
        best[2],
        best[3],
        best[2] / best[3],
        2.0 * best[1] / best[3]
    );
}

/// The kernel that `dot_u64_u128` picks on this machine.
fn fast_isa() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return "AVX-512F";
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return "AVX2";
        }
    }
    "scalar"
}
