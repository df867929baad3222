//! A link emulator for the threshold benchmarks that scales to many links on few cores.
//!
//! It is `coterie_net::netem`'s relay and link model (per direction: a chunk read at `a`
//! finishes transmission at `max(a, t_prev) + 8·len/rate` and is delivered one one-way delay
//! later, minus the relay path's calibrated own cost), started with `Relay::start_with` (through
//! `coterie_net::local::tls_group_with`) so that the delivering thread waits with a plain
//! `nanosleep` under a 1 µs timer slack (`PR_SET_TIMERSLACK`) instead of a yield-spin over the
//! last 300 µs. With 16
//! parties (240 directed links) the spinning emulator kept hundreds of threads runnable on the 2
//! cores and the parties' own tasks waited for CPU: the 16-party latencies of 58–104 ms measured
//! before were the emulator's, not the protocol's (see the threshold section of BENCHMARKS.md).

use std::cell::Cell;
use std::time::{Duration, Instant};

use coterie_net::netem::LinkParams;

#[allow(unsafe_code)]
fn fine_timer_slack() {
    // SAFETY: prctl(PR_SET_TIMERSLACK, ns) only changes this thread's timer slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1000u64, 0u64, 0u64, 0u64);
    }
}

/// Sleeps until `t` with a plain sleep (the wait of `coterie_net::netem::Relay::start_with` /
/// `coterie_net::local::tls_group_with`), the calling thread's timer slack set to 1 µs first (once
/// per thread).
pub fn sleep_until(t: Instant) {
    thread_local! {
        static SLACK_SET: Cell<bool> = const { Cell::new(false) };
    }
    SLACK_SET.with(|set| {
        if !set.replace(true) {
            fine_timer_slack();
        }
    });
    let now = Instant::now();
    if t > now {
        std::thread::sleep(t - now);
    }
}

/// A link of round trip `rtt` and `rate_mbit` Mbit/s (0 = unlimited), read in chunks of up to
/// 64 KiB, with the relay's own cost measured here (half the median round trip of 41 1-byte pings
/// through a zero-delay relay).
pub fn calibrated(rtt: Duration, rate_mbit: f64) -> std::io::Result<LinkParams> {
    LinkParams {
        chunk: 64 * 1024,
        ..LinkParams::new(rtt, rate_mbit)
    }
    .calibrated(41)
}
