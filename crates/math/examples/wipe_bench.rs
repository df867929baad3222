//! Wipe speed: `zeroize` against [`coterie_math::buffers::wipe_u64`] (non-temporal stores) on
//! buffers far larger than the caches, cut into pieces of one gate bundle (43,648 B down-cast,
//! 78,112 B whole) as consumed gate tables are wiped, alternating the two five times.
//!
//! `cargo run --profile ci -p coterie-math --example wipe_bench`
use std::time::Instant;
use zeroize::Zeroize;

fn main() {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "# wipe speed, GB/s (best of 5 alternating rounds); load at start {}",
        load.trim()
    );
    for (total, piece) in [
        (4 * 1000 * 43_648usize, 43_648usize),
        (4 * 1000 * 78_112, 78_112),
    ] {
        let mut v = vec![1u64; total / 8];
        let mut best = [0f64; 2];
        for _ in 0..5 {
            for (mode, b) in best.iter_mut().enumerate() {
                v.fill(7);
                let t = Instant::now();
                for c in v.chunks_mut(piece / 8) {
                    if mode == 0 {
                        c.zeroize()
                    } else {
                        coterie_math::buffers::wipe_u64(c)
                    }
                }
                let gbs = total as f64 / 1e9 / t.elapsed().as_secs_f64();
                assert!(v.iter().all(|&w| w == 0));
                *b = b.max(gbs);
            }
        }
        println!(
            "buffer {:.0} MB in pieces of {piece} B: zeroize {:.2} GB/s, wipe_u64 {:.2} GB/s ({:.2}x)",
            total as f64 / 1e6,
            best[0],
            best[1],
            best[1] / best[0]
        );
    }
}
