//! The link emulator (coterie_net::netem) held to a tolerance: the calibrated one-way latency and
//! round trip within [`TEST_TOLERANCE`] of the configuration, and relay threads that sleep
//! rather than spin. Its own test binary (process), so that the CPU time of the `netem-*` threads
//! is this file's relays' alone; the tests here take turns.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use coterie_net::netem::{Engine, LinkParams, Relay, SelfCheck, plain_sleep_until, self_check};

/// What the tests hold the calibrated link to: [`SelfCheck::TOLERANCE`] (5%, what `coterie netem
/// selfcheck` holds an idle machine to) plus 3 points for the CI machine's load, which moves the
/// relay's own cost between calibrating and measuring. An uncalibrated sleeping relay is
/// 10–18% slow at 1 ms here, so this still checks the calibration.
const TEST_TOLERANCE: f64 = SelfCheck::TOLERANCE + 0.03;

/// One test at a time: timing and CPU accounting must not see another test's relays.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn calibrated_link_is_within_tolerance() {
    calibrated_within_tolerance(Engine::Threads);
}

#[test]
fn calibrated_event_loop_link_is_within_tolerance() {
    calibrated_within_tolerance(Engine::EventLoop);
}

fn calibrated_within_tolerance(engine: Engine) {
    let _g = serial();
    // 1 ms one-way (2 ms RTT) on loopback, median of 101 probes each way. The box is shared, so
    // a run may fall on a burst of load: up to three tries, each freshly calibrated.
    let mut tries = Vec::new();
    for _ in 0..3 {
        let p = LinkParams::new(Duration::from_millis(2), 0.0)
            .with_engine(engine)
            .calibrated(101)
            .unwrap();
        let r = self_check(p, 101, 0).unwrap();
        eprintln!(
            "one-way {:.1} us ({:+.2}%), rtt {:.1} us ({:+.2}%), overhead {:.1} us",
            r.one_way_measured * 1e6,
            r.one_way_error() * 100.0,
            r.rtt_measured * 1e6,
            r.rtt_error() * 100.0,
            r.overhead * 1e6
        );
        if r.within(TEST_TOLERANCE) {
            return;
        }
        tries.push(r);
    }
    panic!("emulated 1 ms link ({engine:?}) outside 8% in every try: {tries:#?}");
}

#[test]
fn calibrated_link_paces_within_tolerance() {
    paces_within_tolerance(Engine::Threads);
}

#[test]
fn calibrated_event_loop_link_paces_within_tolerance() {
    paces_within_tolerance(Engine::EventLoop);
}

fn paces_within_tolerance(engine: Engine) {
    let _g = serial();
    // 10 ms RTT, 200 Mbit/s: 5 MB take 0.2 s.
    let mut tries = Vec::new();
    for _ in 0..3 {
        let p = LinkParams::new(Duration::from_millis(10), 200.0)
            .with_engine(engine)
            .calibrated(21)
            .unwrap();
        let r = self_check(p, 21, 5_000_000).unwrap();
        if r.within(TEST_TOLERANCE) {
            return;
        }
        tries.push(r);
    }
    panic!("emulated 10 ms / 200 Mbit/s link ({engine:?}) outside 8% in every try: {tries:#?}");
}

/// CPU time, in seconds, of this process's threads named `netem-*` (the relays') that are alive
/// now: /proc/self/task/*/schedstat (ns on CPU), else /proc/self/task/*/stat (clock ticks, taken
/// as 100 Hz). `None` off Linux.
fn netem_cpu_seconds() -> Option<f64> {
    let mut total = 0.0;
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let dir = task.path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if !comm.starts_with("netem-") {
            continue;
        }
        if let Ok(s) = std::fs::read_to_string(dir.join("schedstat")) {
            let ns: f64 = s.split_whitespace().next()?.parse().ok()?;
            total += ns / 1e9;
        } else {
            let s = std::fs::read_to_string(dir.join("stat")).ok()?;
            let rest = &s[s.rfind(')')? + 2..];
            let f: Vec<&str> = rest.split_whitespace().collect();
            // fields 14 and 15 of stat are the 12th and 13th after the comm
            let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
            total += ticks / 100.0;
        }
    }
    Some(total)
}

/// `links` relays with `p` (waiting with `wait`), each carrying one connection to its own
/// receiver; returns the relays and the senders' ends (the relays and receivers run until the
/// senders are dropped).
fn links_with(links: usize, p: LinkParams, wait: fn(Instant)) -> (Vec<Relay>, Vec<TcpStream>) {
    let mut relays = Vec::new();
    let mut senders = Vec::new();
    for _ in 0..links {
        let sink = TcpListener::bind("127.0.0.1:0").unwrap();
        let target = sink.local_addr().unwrap().to_string();
        let r = Relay::start_with("127.0.0.1:0", &target, p, wait).unwrap();
        std::thread::spawn(move || {
            let (mut s, _) = sink.accept().unwrap();
            let mut b = [0u8; 64];
            while matches!(s.read(&mut b), Ok(k) if k > 0) {}
        });
        let mut s = TcpStream::connect(r.local_addr()).unwrap();
        s.set_nodelay(true).unwrap();
        s.write_all(&[0]).unwrap();
        senders.push(s);
        relays.push(r);
    }
    // let the first byte through, so every relay thread is up and waiting
    std::thread::sleep(p.one_way + Duration::from_millis(50));
    (relays, senders)
}

/// (CPU seconds of the relay threads per wall second, messages sent) over `secs`, with one
/// 1-byte message per link every `every`, the links in turn (no messages if `None`).
fn relay_cpu(
    senders: &mut [TcpStream],
    secs: f64,
    every: Option<Duration>,
) -> Option<(f64, usize)> {
    let c0 = netem_cpu_seconds()?;
    let t0 = Instant::now();
    let end = t0 + Duration::from_secs_f64(secs);
    let mut sent = 0;
    match every {
        None => std::thread::sleep(end - t0),
        Some(dt) => {
            // the links take turns, so that their deliveries do not all fall at once
            let step = dt / senders.len() as u32;
            let mut next = t0;
            'send: loop {
                for s in senders.iter_mut() {
                    if next >= end {
                        break 'send;
                    }
                    s.write_all(&[1]).unwrap();
                    sent += 1;
                    next += step;
                    std::thread::sleep(next.saturating_duration_since(Instant::now()));
                }
            }
        }
    }
    let c1 = netem_cpu_seconds()?;
    Some(((c1 - c0) / t0.elapsed().as_secs_f64(), sent))
}

/// CPU µs the relay threads spend per message: 20 links with `p` and `wait`, a message each
/// every 10 ms for 1 s (2000 deliveries).
fn cpu_per_message(p: LinkParams, wait: fn(Instant)) -> f64 {
    let (_relays, mut senders) = links_with(20, p, wait);
    let (busy, sent) = relay_cpu(&mut senders, 1.0, Some(Duration::from_millis(10))).unwrap();
    busy / sent as f64 * 1e6
}

/// What a delay costs the relay threads in CPU per message, over an undelayed relay's cost
/// measured just before (which is what the hand-offs and loopback writes cost on this box now).
fn wait_cpu_per_message(wait: fn(Instant)) -> (f64, f64) {
    let base = cpu_per_message(LinkParams::new(Duration::ZERO, 0.0), wait);
    let delayed = cpu_per_message(LinkParams::new(Duration::from_millis(2), 0.0), wait);
    (base, delayed)
}

/// 20 links with `p`, each carrying one connection and no messages for a second, use under 1%
/// of a core in all.
fn assert_idle(p: LinkParams) {
    let links = 20;
    let (relays, mut senders) = links_with(links, p, plain_sleep_until);
    let (idle, _) = relay_cpu(&mut senders, 1.0, None).unwrap();
    drop((relays, senders));
    eprintln!(
        "{links} idle links ({:?}): {:.3}% of a core",
        p.engine,
        idle * 100.0
    );
    assert!(
        idle < 0.01,
        "{links} idle links ({:?}) use {:.2}% of a core",
        p.engine,
        idle * 100.0
    );
}

#[test]
fn relay_threads_sleep() {
    let _g = serial();
    if netem_cpu_seconds().is_none() {
        eprintln!("no /proc/self/task: skipped");
        return;
    }
    assert_idle(LinkParams::new(Duration::from_millis(2), 0.0));
    // 20 links, 1 ms one-way, a message each every 10 ms. A wait that spins over the last
    // 300 µs before each delivery (the old precise mode) adds 150–300 µs of CPU per message
    // (`spinning_wait_is_caught`); a sleep adds one wake-up, tens of µs. Compared with an
    // undelayed relay measured just before, so that the load on a shared box cancels out; up to
    // three tries.
    let mut tries = Vec::new();
    for _ in 0..3 {
        let (base, delayed) = wait_cpu_per_message(plain_sleep_until);
        eprintln!(
            "CPU per message: {base:.1} us undelayed, {delayed:.1} us at 1 ms one-way ({:.1}% of a core)",
            delayed * 2000.0 / 1e4
        );
        if delayed - base < 60.0 {
            return;
        }
        tries.push((base, delayed));
    }
    panic!("a sleeping wait costs too much CPU per message (undelayed, delayed µs): {tries:?}");
}

/// The event loop idles at no CPU and costs less per relayed message than the threads engine
/// (one thread and two `epoll` wake-ups at most per message, against the threads engine's two
/// thread wake-ups per direction and message), measured one after the other: 20 links, 1 ms
/// one-way, a message each every 10 ms. Up to three tries.
#[test]
fn event_loop_idles_and_costs_less_per_message_than_threads() {
    let _g = serial();
    if netem_cpu_seconds().is_none() {
        eprintln!("no /proc/self/task: skipped");
        return;
    }
    let p = LinkParams::new(Duration::from_millis(2), 0.0).with_engine(Engine::EventLoop);
    assert_idle(p);
    let mut tries = Vec::new();
    for _ in 0..3 {
        let threads = cpu_per_message(p.with_engine(Engine::Threads), plain_sleep_until);
        let event_loop = cpu_per_message(p, plain_sleep_until);
        eprintln!("CPU per message: threads {threads:.1} us, event loop {event_loop:.1} us");
        if event_loop < threads {
            return;
        }
        tries.push((threads, event_loop));
    }
    panic!("the event loop is not cheaper (threads, loop µs per message): {tries:?}");
}

/// A wait that spins over the last 300 µs, as the removed precise mode did: shows that
/// `relay_threads_sleep` would catch it (`cargo test -p coterie-net --test netem -- --ignored`).
#[test]
#[ignore = "burns a good part of a core for a second; a check of the check"]
fn spinning_wait_is_caught() {
    fn spin_until(t: Instant) {
        while Instant::now() < t {
            let rem = t - Instant::now();
            if rem > Duration::from_micros(400) {
                std::thread::sleep(rem - Duration::from_micros(300));
            } else {
                std::thread::yield_now();
            }
        }
    }
    let _g = serial();
    let (base, delayed) = wait_cpu_per_message(spin_until);
    eprintln!("spinning: CPU per message {base:.1} us undelayed, {delayed:.1} us delayed");
    assert!(delayed - base >= 60.0);
}
