//! A user-space link emulator for benchmarks: a TCP relay that delays every chunk by a one-way
//! latency (keeping order) and paces each direction to a bandwidth, leaving the bytes untouched
//! (TLS stays end to end). Built on OS threads, because tokio timers have 1 ms granularity; every
//! wait is one plain sleep (under a 1 µs timer slack on Linux), so an idle or waiting link keeps
//! no core busy and hundreds of links (16 parties = 240 directed links) run on two cores. The
//! [`Engine::EventLoop`] engine runs the same model for every link of the process on one thread
//! (`epoll` and a nanosecond `timerfd`), at a fraction of the CPU per relayed message; a link's
//! [`LinkParams::engine`] chooses.
//!
//! Model per direction: a chunk of `len` bytes read at time `a` finishes transmission at
//! `t = max(a, t_prev) + 8·len/rate` and is delivered at `t + delay − overhead`.
//!
//! `overhead` is the relay path's own one-way cost: the extra loopback hop, the hand-off between
//! the relay's threads and the sleep's overshoot past its deadline (tens of µs), measured by
//! [`LinkParams::calibrated`] through a relay that sleeps like the real one. Subtracting it makes
//! the one-way latency and round trip the endpoints see equal to the configured ones, rather than
//! the configured ones plus the relay's cost. [`self_check`] measures both against the
//! configuration; [`SelfCheck::TOLERANCE`] is what the tests and `coterie netem selfcheck` hold it
//! to.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest delay the calibration probes with: the sleep's overshoot does not grow with the
/// sleep, so a long link is calibrated with a short probe (and quickly).
const CALIBRATION_PROBE_MAX: Duration = Duration::from_millis(2);

/// How a relay runs: the same link model either way (the module docs), with different costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Engine {
    /// Two threads per direction of every connection (a reader and a delivering thread that
    /// sleeps until each chunk is due): two thread wake-ups per relayed chunk. The default, and
    /// what `coterie netem` runs.
    #[default]
    Threads,
    /// One thread for every relay of the process, waiting in `epoll` for the sockets and a
    /// nanosecond `timerfd` for the next delivery: a burst of chunks costs one wake-up to read
    /// and one to deliver. For benchmarks that put many parties' links on a few cores (16
    /// parties: 30 relayed messages per round through a king). Its `connect` to the target
    /// blocks the loop, so it is meant for loopback targets. Linux only; elsewhere
    /// [`Engine::Threads`] runs instead.
    EventLoop,
}

/// Parameters of one emulated link (applied to each direction independently).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkParams {
    /// One-way latency (half the round-trip time).
    pub one_way: Duration,
    /// Bandwidth in bits per second; `None` for unlimited.
    pub rate_bps: Option<f64>,
    /// Largest chunk read at once, in bytes.
    pub chunk: usize,
    /// The relay path's own one-way cost, subtracted from `one_way` (zero unless calibrated).
    pub overhead: Duration,
    /// The relay's engine (calibrate with the engine that will run the link).
    pub engine: Engine,
}

impl LinkParams {
    /// A link with round-trip time `rtt` and bandwidth `rate_mbit` Mbit/s (0 = unlimited).
    pub fn new(rtt: Duration, rate_mbit: f64) -> Self {
        Self {
            one_way: rtt / 2,
            rate_bps: (rate_mbit > 0.0).then_some(rate_mbit * 1e6),
            chunk: 16 * 1024,
            overhead: Duration::ZERO,
            engine: Engine::Threads,
        }
    }

    /// These parameters run by `engine`.
    pub fn with_engine(self, engine: Engine) -> Self {
        Self { engine, ..self }
    }

    /// These parameters with [`LinkParams::overhead`] measured on this machine, through an
    /// uncalibrated, unpaced relay with a one-way delay `d` (the configured one, at most 2 ms):
    /// `pings` 1-byte messages one way and `pings` 1-byte ping-pongs, and the overhead is the
    /// mean of (median one-way latency − `d`) and (half the median round trip − `d`). That is
    /// the whole cost of the relay path as the endpoints see it, the sleep's overshoot included;
    /// the two probes differ by a few tens of µs on a loaded box, and the mean leaves both
    /// within [`SelfCheck::TOLERANCE`] of the configuration. A zero-latency link gets no
    /// overhead (there is nothing to subtract it from).
    pub fn calibrated(self, pings: usize) -> std::io::Result<Self> {
        if self.one_way.is_zero() {
            return Ok(LinkParams {
                overhead: Duration::ZERO,
                ..self
            });
        }
        let probe = self.one_way.min(CALIBRATION_PROBE_MAX);
        let echo = echo_server()?;
        let raw = LinkParams {
            one_way: probe,
            rate_bps: None,
            chunk: self.chunk,
            overhead: Duration::ZERO,
            engine: self.engine,
        };
        let relay = Relay::start("127.0.0.1:0", &echo.to_string(), raw)?;
        let rtt = ping_median(relay.local_addr(), pings.max(11))?;
        drop(relay);
        let one_way = one_way_median(raw, pings.max(11))?;
        let extra = ((one_way + rtt / 2.0) / 2.0 - probe.as_secs_f64()).max(0.0);
        Ok(LinkParams {
            overhead: Duration::from_secs_f64(extra).min(self.one_way),
            ..self
        })
    }

    /// Chunks a direction holds in flight before its reader stops reading (twice the
    /// bandwidth-delay product in chunks, plus 64; at most 65,536).
    pub(crate) fn queue_chunks(&self) -> usize {
        let bdp = self
            .rate_bps
            .map_or(0.0, |r| r / 8.0 * self.one_way.as_secs_f64() * 2.0);
        ((bdp / self.chunk as f64) as usize * 2 + 64).min(1 << 16)
    }
}

/// The transmission clock of one link: when each direction's last chunk finishes transmission.
/// A relayed connection has its own, unless its relay was started with
/// [`Relay::start_shared`], whose connections all share one (one link under several
/// connections).
#[derive(Debug, Default)]
pub(crate) struct Pacer {
    /// `[a → b, b → a]`: the end of the last transmission in each direction.
    t_prev: [std::sync::Mutex<Option<Instant>>; 2],
}

impl Pacer {
    /// Books the transmission of a `len`-byte chunk read at `arrival` in direction `side` and
    /// returns when it finishes (the module's model: `max(arrival, t_prev) + 8·len/rate`).
    pub(crate) fn book(
        &self,
        side: usize,
        arrival: Instant,
        len: usize,
        p: &LinkParams,
    ) -> Instant {
        let mut t_prev = self.t_prev[side].lock().unwrap_or_else(|e| e.into_inner());
        let start = match *t_prev {
            Some(t) if t > arrival => t,
            _ => arrival,
        };
        let done = match p.rate_bps {
            Some(r) => start + Duration::from_secs_f64(len as f64 * 8.0 / r),
            None => start,
        };
        *t_prev = Some(done);
        done
    }
}

/// Sets the calling thread's timer slack to 1 µs, once per thread (Linux; elsewhere nothing). The
/// default slack (50 µs) lets the kernel fire a sleeper's timer up to that late to batch wake-ups.
pub(crate) fn fine_timer_slack() {
    #[cfg(target_os = "linux")]
    {
        use std::cell::Cell;
        thread_local! {
            static SET: Cell<bool> = const { Cell::new(false) };
        }
        SET.with(|set| {
            if !set.replace(true) {
                set_timer_slack_ns(1000);
            }
        });
    }
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn set_timer_slack_ns(ns: libc::c_ulong) {
    // SAFETY: prctl(PR_SET_TIMERSLACK, ns) only changes the calling thread's timer slack; the
    // unused arguments are passed as zeros of the type the kernel reads.
    unsafe {
        libc::prctl(
            libc::PR_SET_TIMERSLACK,
            ns,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        );
    }
}

/// Sleeps until `t` with one plain sleep, under a 1 µs timer slack (set once per thread, on
/// Linux): the relay's wait ([`Relay::start`]). Its overshoot past `t` (the wake-up latency) is
/// part of the overhead [`LinkParams::calibrated`] measures.
///
/// ```
/// use std::time::{Duration, Instant};
/// let t = Instant::now() + Duration::from_millis(2);
/// coterie_net::netem::plain_sleep_until(t);
/// assert!(Instant::now() >= t);
/// ```
pub fn plain_sleep_until(t: Instant) {
    fine_timer_slack();
    let now = Instant::now();
    if t > now {
        std::thread::sleep(t - now);
    }
}

fn spawn_named<T: Send + 'static>(
    name: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<JoinHandle<T>> {
    std::thread::Builder::new().name(name.into()).spawn(f)
}

/// Copies `src` to `dst` through the emulated link until end of stream, waiting for each
/// delivery time with `wait_until`.
fn pump(
    mut src: TcpStream,
    mut dst: TcpStream,
    p: LinkParams,
    pacer: Arc<Pacer>,
    side: usize,
    wait_until: fn(Instant),
) -> std::io::Result<()> {
    let (tx, rx) = mpsc::sync_channel::<(Instant, Vec<u8>)>(p.queue_chunks());
    let reader = spawn_named("netem-read", move || {
        let mut buf = vec![0u8; p.chunk];
        loop {
            match src.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(k) => {
                    if tx.send((Instant::now(), buf[..k].to_vec())).is_err() {
                        break;
                    }
                }
            }
        }
        let _ = src.shutdown(Shutdown::Read);
    })?;
    while let Ok((arrival, data)) = rx.recv() {
        let done = pacer.book(side, arrival, data.len(), &p);
        wait_until(done + p.one_way.saturating_sub(p.overhead));
        if dst.write_all(&data).is_err() {
            break;
        }
    }
    let _ = dst.shutdown(Shutdown::Write);
    let _ = reader.join();
    Ok(())
}

/// A running relay: accepts on `local_addr`, connects each accepted connection to the target and
/// emulates the link on both directions. Its threads block (in `accept`, `read`, a channel
/// receive or a sleep) and are named `netem-*`.
pub struct Relay {
    local_addr: SocketAddr,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
    /// The listener's id on the process's event loop ([`Engine::EventLoop`]).
    hub_id: Option<usize>,
}

impl Relay {
    /// Starts a relay listening on `listen` (e.g. `127.0.0.1:0`) and forwarding to `target`, run
    /// by `p.engine`; the threads engine waits for each delivery with [`plain_sleep_until`].
    pub fn start(listen: &str, target: &str, p: LinkParams) -> std::io::Result<Relay> {
        Self::start_with(listen, target, p, plain_sleep_until)
    }

    /// [`Relay::start`] for one link under several connections: every connection relayed by
    /// this relay books its chunks on one transmission clock per direction, so together they
    /// get `p`'s bandwidth once (a relay started with [`Relay::start`] paces each connection
    /// on its own). For benchmarks that run several meshes (lanes) between the same two
    /// parties over one emulated link; the latency model is unchanged.
    pub fn start_shared(listen: &str, target: &str, p: LinkParams) -> std::io::Result<Relay> {
        Self::start_inner(listen, target, p, plain_sleep_until, true)
    }

    /// [`Relay::start`] with another way of waiting for a chunk's delivery time: the link model
    /// (the module's) is the same, `wait_until(t)` is called on the delivering thread of each
    /// direction and must return at (or as soon as it can after) `t`. [`LinkParams::calibrated`]
    /// measures the overhead with [`plain_sleep_until`], the wait of [`Relay::start`]. With
    /// [`Engine::EventLoop`] (on Linux) `wait_until` is not used: the loop waits on a timer.
    pub fn start_with(
        listen: &str,
        target: &str,
        p: LinkParams,
        wait_until: fn(Instant),
    ) -> std::io::Result<Relay> {
        Self::start_inner(listen, target, p, wait_until, false)
    }

    fn start_inner(
        listen: &str,
        target: &str,
        p: LinkParams,
        wait_until: fn(Instant),
        shared: bool,
    ) -> std::io::Result<Relay> {
        let shared = shared.then(|| Arc::new(Pacer::default()));
        let l = TcpListener::bind(listen)?;
        let local_addr = l.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        #[cfg(target_os = "linux")]
        if p.engine == Engine::EventLoop {
            let id = crate::netem_hub::listen(l, target, p, shared)?;
            return Ok(Relay {
                local_addr,
                stop,
                handle: None,
                hub_id: Some(id),
            });
        }
        let stop2 = stop.clone();
        let target = target.to_string();
        let handle = spawn_named("netem-accept", move || {
            for conn in l.incoming() {
                if stop2.load(Ordering::Acquire) {
                    break;
                }
                match conn {
                    Ok(a) => {
                        let target = target.clone();
                        let pacer = shared.clone().unwrap_or_default();
                        let spawned = spawn_named("netem-conn", move || {
                            if let Err(e) = relay_conn(a, &target, p, pacer, wait_until) {
                                tracing::warn!(error = %e, target, "relay connection failed");
                            }
                        });
                        if let Err(e) = spawned {
                            tracing::warn!(error = %e, "relay cannot start a thread");
                        }
                    }
                    // e.g. out of file descriptors: back off rather than spin
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        })?;
        Ok(Relay {
            local_addr,
            stop,
            handle: Some(handle),
            hub_id: None,
        })
    }

    /// Address the relay listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }
}

impl Drop for Relay {
    /// Stops accepting: sets the stop flag and wakes the blocked `accept` with a connection of
    /// its own (if that connection fails, the acceptor is left blocked and detached rather than
    /// the drop hanging); with [`Engine::EventLoop`], has the loop close the listener and waits
    /// for it (at most 2 s). Connections already relayed run on until their ends close them.
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some(id) = self.hub_id {
            crate::netem_hub::close(id);
            return;
        }
        self.stop.store(true, Ordering::Release);
        let mut wake = self.local_addr;
        if wake.ip().is_unspecified() {
            wake.set_ip(match wake.ip() {
                IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
                IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::LOCALHOST),
            });
        }
        let woken = TcpStream::connect_timeout(&wake, Duration::from_secs(2)).is_ok();
        if let Some(h) = self.handle.take()
            && woken
        {
            let _ = h.join();
        }
    }
}

fn relay_conn(
    a: TcpStream,
    target: &str,
    p: LinkParams,
    pacer: Arc<Pacer>,
    wait_until: fn(Instant),
) -> std::io::Result<()> {
    let b = TcpStream::connect(target)?;
    a.set_nodelay(true)?;
    b.set_nodelay(true)?;
    let (a2, b2) = (a.try_clone()?, b.try_clone()?);
    let up_pacer = pacer.clone();
    let up = spawn_named("netem-pump", move || pump(a, b, p, up_pacer, 0, wait_until))?;
    let down = pump(b2, a2, p, pacer, 1, wait_until);
    let up = up
        .join()
        .map_err(|_| std::io::Error::other("relay thread panicked"))?;
    down.and(up)
}

/// Result of [`self_check`]: what one relay achieves against what it was configured to do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SelfCheck {
    /// Configured one-way latency, seconds.
    pub one_way_configured: f64,
    /// Median measured one-way latency of a 1-byte message through the relay (sender's write to
    /// receiver's read, one clock), seconds.
    pub one_way_measured: f64,
    /// Configured round-trip time, seconds.
    pub rtt_configured: f64,
    /// Median measured round-trip time of a 1-byte ping-pong through the relay, seconds.
    pub rtt_measured: f64,
    /// Same ping-pong directly (no relay), seconds.
    pub rtt_direct: f64,
    /// The relay's own one-way cost that was subtracted from the delay, seconds.
    pub overhead: f64,
    /// Configured rate, bit/s (0 when unlimited).
    pub rate_configured: f64,
    /// Measured steady-state rate of a bulk transfer through the relay, bit/s (0 when no bulk
    /// transfer was asked for).
    pub rate_measured: f64,
}

impl SelfCheck {
    /// The relative error the emulator is held to, on each of one-way latency, round trip and
    /// rate: 5%.
    pub const TOLERANCE: f64 = 0.05;

    /// Relative error of the measured one-way latency (0 when none is configured).
    pub fn one_way_error(&self) -> f64 {
        rel_err(self.one_way_measured, self.one_way_configured)
    }

    /// Relative error of the measured round trip (0 when none is configured).
    pub fn rtt_error(&self) -> f64 {
        rel_err(self.rtt_measured, self.rtt_configured)
    }

    /// Relative error of the measured rate (0 when unlimited or not measured).
    pub fn rate_error(&self) -> f64 {
        if self.rate_measured > 0.0 {
            rel_err(self.rate_measured, self.rate_configured)
        } else {
            0.0
        }
    }

    /// Whether one-way latency, round trip and rate are all within `tol` of the configuration.
    pub fn within(&self, tol: f64) -> bool {
        [self.one_way_error(), self.rtt_error(), self.rate_error()]
            .iter()
            .all(|e| e.abs() <= tol)
    }
}

fn rel_err(measured: f64, configured: f64) -> f64 {
    if configured > 0.0 {
        (measured - configured) / configured
    } else {
        0.0
    }
}

fn echo_server() -> std::io::Result<SocketAddr> {
    let l = TcpListener::bind("127.0.0.1:0")?;
    let addr = l.local_addr()?;
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            std::thread::spawn(move || {
                let _ = s.set_nodelay(true);
                let mut s = s;
                let mut b = [0u8; 1];
                while s.read_exact(&mut b).is_ok() {
                    if s.write_all(&b).is_err() {
                        break;
                    }
                }
            });
        }
    });
    Ok(addr)
}

fn median_after_warmup(mut v: Vec<f64>) -> f64 {
    v.drain(..2.min(v.len()));
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn ping_median(addr: SocketAddr, pings: usize) -> std::io::Result<f64> {
    let mut s = TcpStream::connect(addr)?;
    s.set_nodelay(true)?;
    let mut b = [7u8; 1];
    let mut v = Vec::with_capacity(pings + 2);
    for _ in 0..pings + 2 {
        let t = Instant::now();
        s.write_all(&b)?;
        s.read_exact(&mut b)?;
        v.push(t.elapsed().as_secs_f64());
    }
    Ok(median_after_warmup(v))
}

/// Median one-way latency of `probes` 1-byte messages through a relay with `p` to a receiver in
/// this process: from the write to the receiver's read, on one clock.
fn one_way_median(p: LinkParams, probes: usize) -> std::io::Result<f64> {
    let sink = TcpListener::bind("127.0.0.1:0")?;
    let relay = Relay::start("127.0.0.1:0", &sink.local_addr()?.to_string(), p)?;
    let (tx, rx) = mpsc::channel::<Instant>();
    let receiver = std::thread::spawn(move || {
        let Ok((mut r, _)) = sink.accept() else {
            return;
        };
        let _ = r.set_nodelay(true);
        let mut b = [0u8; 1];
        while r.read_exact(&mut b).is_ok() {
            if tx.send(Instant::now()).is_err() {
                break;
            }
        }
    });
    let mut s = TcpStream::connect(relay.local_addr())?;
    s.set_nodelay(true)?;
    let limit = p.one_way + Duration::from_secs(5);
    let mut v = Vec::with_capacity(probes + 2);
    for _ in 0..probes + 2 {
        let t = Instant::now();
        s.write_all(&[1])?;
        let arrived = rx
            .recv_timeout(limit)
            .map_err(|_| std::io::Error::other("one-way probe never arrived"))?;
        v.push((arrived - t).as_secs_f64());
    }
    drop(s);
    let _ = receiver.join();
    Ok(median_after_warmup(v))
}

/// Measures the relay itself: the median one-way latency of `pings` 1-byte messages, the median
/// round trip of `pings` 1-byte ping-pongs, and (if `bulk_bytes > 0`) the rate of a `bulk_bytes`
/// one-way transfer, measured at the receiver from the first to the last byte.
pub fn self_check(p: LinkParams, pings: usize, bulk_bytes: usize) -> std::io::Result<SelfCheck> {
    let echo = echo_server()?;
    let relay = Relay::start("127.0.0.1:0", &echo.to_string(), p)?;
    let rtt_direct = ping_median(echo, pings.min(200))?;
    let rtt_measured = ping_median(relay.local_addr(), pings)?;
    drop(relay);
    let one_way_measured = one_way_median(p, pings)?;
    let rate_measured = if bulk_bytes > 0 {
        bulk_rate(p, bulk_bytes)?
    } else {
        0.0
    };
    Ok(SelfCheck {
        one_way_configured: p.one_way.as_secs_f64(),
        one_way_measured,
        rtt_configured: p.one_way.as_secs_f64() * 2.0,
        rtt_measured,
        rtt_direct,
        overhead: p.overhead.as_secs_f64(),
        rate_configured: p.rate_bps.unwrap_or(0.0),
        rate_measured,
    })
}

/// Rate of a `bulk_bytes` one-way transfer through a relay with `p`, bit/s.
fn bulk_rate(p: LinkParams, bulk_bytes: usize) -> std::io::Result<f64> {
    let sink = TcpListener::bind("127.0.0.1:0")?;
    let sink_addr = sink.local_addr()?;
    let recv = std::thread::spawn(move || -> std::io::Result<f64> {
        let (mut s, _) = sink.accept()?;
        let mut buf = vec![0u8; 1 << 16];
        let mut got = 0usize;
        let mut first: Option<(Instant, usize)> = None;
        let mut last = Instant::now();
        loop {
            let k = s.read(&mut buf)?;
            if k == 0 {
                break;
            }
            if first.is_none() {
                first = Some((Instant::now(), k));
            }
            got += k;
            last = Instant::now();
        }
        let (t0, k0) = first.unwrap_or((last, 0));
        let secs = (last - t0).as_secs_f64().max(1e-9);
        Ok((got - k0) as f64 * 8.0 / secs)
    });
    let relay = Relay::start("127.0.0.1:0", &sink_addr.to_string(), p)?;
    {
        let mut s = TcpStream::connect(relay.local_addr())?;
        let block = vec![0x5au8; 1 << 16];
        let mut sent = 0;
        while sent < bulk_bytes {
            let k = block.len().min(bulk_bytes - sent);
            s.write_all(&block[..k])?;
            sent += k;
        }
        s.shutdown(Shutdown::Write)?;
    }
    recv.join()
        .map_err(|_| std::io::Error::other("receiver panicked"))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_measures_the_relay_cost() {
        let p = LinkParams::new(Duration::from_millis(2), 0.0)
            .calibrated(21)
            .unwrap();
        // a loopback relay costs microseconds, never more than the delay it serves
        assert!(
            p.overhead > Duration::ZERO && p.overhead <= Duration::from_millis(1),
            "{p:?}"
        );
        let r = self_check(p, 21, 0).unwrap();
        assert!(r.rtt_measured > 0.0015 && r.rtt_measured < 0.004, "{r:?}");
        assert!(
            r.one_way_measured > 0.00075 && r.one_way_measured < 0.002,
            "{r:?}"
        );
        // nothing to subtract from a zero-latency link
        let z = LinkParams::new(Duration::ZERO, 0.0).calibrated(11).unwrap();
        assert_eq!(z.overhead, Duration::ZERO);
    }

    #[test]
    fn relay_delays_and_paces() {
        for engine in [Engine::Threads, Engine::EventLoop] {
            delays_and_paces(engine);
        }
    }

    fn delays_and_paces(engine: Engine) {
        // 20 ms RTT, 50 Mbit/s: loose bounds here (unit tests run in parallel on a shared 2-core
        // box); the 5% checks are tests/netem.rs and bench/netem/selfcheck.sh.
        let p = LinkParams::new(Duration::from_millis(20), 50.0).with_engine(engine);
        let r = self_check(p, 10, 2_000_000).unwrap();
        assert!(r.rtt_measured >= 0.019 && r.rtt_measured < 0.030, "{r:?}");
        assert!(
            r.one_way_measured >= 0.0095 && r.one_way_measured < 0.015,
            "{r:?}"
        );
        assert!(
            r.rate_measured > 0.8 * 50e6 && r.rate_measured < 1.1 * 50e6,
            "{r:?}"
        );
    }

    #[test]
    fn dropping_a_relay_stops_its_acceptor() {
        for engine in [Engine::Threads, Engine::EventLoop] {
            let echo = echo_server().unwrap();
            let p = LinkParams::new(Duration::from_millis(2), 0.0).with_engine(engine);
            let r = Relay::start("0.0.0.0:0", &echo.to_string(), p).unwrap();
            let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, r.local_addr().port()));
            assert!(ping_median(addr, 1).unwrap() >= 0.002, "{engine:?}");
            let t = Instant::now();
            drop(r);
            assert!(t.elapsed() < Duration::from_secs(2), "{engine:?}");
            assert!(TcpStream::connect(addr).is_err(), "{engine:?}");
        }
    }

    /// Seconds until a sink has received `bytes` from each of `conns` connections sending at
    /// once through one relay with `p` (started shared or not).
    fn concurrent_transfer_secs(p: LinkParams, shared: bool, conns: usize, bytes: usize) -> f64 {
        let sink = TcpListener::bind("127.0.0.1:0").unwrap();
        let target = sink.local_addr().unwrap().to_string();
        let readers = std::thread::spawn(move || {
            let hs: Vec<_> = (0..conns)
                .map(|_| {
                    let (mut c, _) = sink.accept().unwrap();
                    std::thread::spawn(move || {
                        let mut got = Vec::new();
                        c.read_to_end(&mut got).unwrap();
                        (got.len(), Instant::now())
                    })
                })
                .collect();
            hs.into_iter()
                .map(|h| h.join().unwrap())
                .collect::<Vec<_>>()
        });
        let r = if shared {
            Relay::start_shared("127.0.0.1:0", &target, p).unwrap()
        } else {
            Relay::start("127.0.0.1:0", &target, p).unwrap()
        };
        let t0 = Instant::now();
        let senders: Vec<_> = (0..conns)
            .map(|_| {
                let addr = r.local_addr();
                std::thread::spawn(move || {
                    let mut s = TcpStream::connect(addr).unwrap();
                    s.write_all(&vec![0x33u8; bytes]).unwrap();
                    s.shutdown(Shutdown::Write).unwrap();
                })
            })
            .collect();
        for h in senders {
            h.join().unwrap();
        }
        let done = readers.join().unwrap();
        assert!(done.iter().all(|(n, _)| *n == bytes));
        let last = done.iter().map(|(_, t)| *t).max().unwrap();
        (last - t0).as_secs_f64()
    }

    /// A relay started with `Relay::start_shared` gives all its connections one link's
    /// bandwidth together; one started with `Relay::start` paces each on its own (both engines).
    #[test]
    fn a_shared_relay_splits_one_link_between_its_connections() {
        for engine in [Engine::Threads, Engine::EventLoop] {
            // 40 Mbit/s, two connections of 1 MB: 0.2 s each alone, 0.4 s on one link
            let p = LinkParams::new(Duration::from_millis(2), 40.0).with_engine(engine);
            let one_link = 2.0 * 1e6 * 8.0 / 40e6;
            let shared = concurrent_transfer_secs(p, true, 2, 1_000_000);
            let separate = concurrent_transfer_secs(p, false, 2, 1_000_000);
            assert!(
                shared >= 0.9 * one_link,
                "{engine:?}: shared link done in {shared:.3} s, one link needs {one_link:.3} s"
            );
            assert!(
                separate < 0.75 * one_link,
                "{engine:?}: separate links took {separate:.3} s"
            );
        }
    }

    /// Both engines pass a half-close through in order: the client's bytes, then its end of
    /// stream; the server's reply, then its end; and a relay carries several connections at
    /// once, each in order (many chunks each, unpaced and paced).
    #[test]
    fn relays_carry_bytes_in_order_and_pass_the_end_of_stream() {
        for engine in [Engine::Threads, Engine::EventLoop] {
            for rate in [0.0, 400.0] {
                // a server that reads to the end, then answers with the bytes reversed
                let server = TcpListener::bind("127.0.0.1:0").unwrap();
                let target = server.local_addr().unwrap().to_string();
                std::thread::spawn(move || {
                    for c in server.incoming() {
                        let Ok(mut c) = c else { return };
                        std::thread::spawn(move || {
                            let mut got = Vec::new();
                            c.read_to_end(&mut got).unwrap();
                            got.reverse();
                            c.write_all(&got).unwrap();
                        });
                    }
                });
                let p = LinkParams::new(Duration::from_millis(2), rate).with_engine(engine);
                let r = Relay::start("127.0.0.1:0", &target, p).unwrap();
                let clients: Vec<_> = (0..4u8)
                    .map(|k| {
                        let addr = r.local_addr();
                        std::thread::spawn(move || {
                            let msg: Vec<u8> = (0..300_000u32)
                                .map(|i| (i as u8).wrapping_mul(7).wrapping_add(k))
                                .collect();
                            let mut s = TcpStream::connect(addr).unwrap();
                            for part in msg.chunks(7_001) {
                                s.write_all(part).unwrap();
                            }
                            s.shutdown(Shutdown::Write).unwrap();
                            let mut back = Vec::new();
                            s.read_to_end(&mut back).unwrap();
                            back.reverse();
                            back == msg
                        })
                    })
                    .collect();
                for c in clients {
                    assert!(c.join().unwrap(), "{engine:?} at {rate} Mbit/s");
                }
            }
        }
    }
}
