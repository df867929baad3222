//! A user-space link emulator for benchmarks: a TCP relay that delays every chunk by a one-way
//! latency (keeping order) and paces each direction to a bandwidth, leaving the bytes untouched
//! (TLS stays end to end). Built on OS threads with a sleep-then-spin wait, because tokio timers
//! have 1 ms granularity.
//!
//! Model per direction: a chunk of `len` bytes read at time `a` finishes transmission at
//! `t = max(a, t_prev) + 8·len/rate` and is delivered at `t + delay − overhead`.
//!
//! `overhead` is the relay path's own one-way cost (the extra loopback hop and the hand-off between
//! the relay's threads, about 30–40 µs here), measured by [`LinkParams::calibrated`]. Subtracting
//! it makes the round trip the endpoints see equal to the configured one, rather than the
//! configured one plus the relay's cost (7% too long at 1 ms without it).

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

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
}

impl LinkParams {
    /// A link with round-trip time `rtt` and bandwidth `rate_mbit` Mbit/s (0 = unlimited).
    pub fn new(rtt: Duration, rate_mbit: f64) -> Self {
        Self {
            one_way: rtt / 2,
            rate_bps: (rate_mbit > 0.0).then_some(rate_mbit * 1e6),
            chunk: 16 * 1024,
            overhead: Duration::ZERO,
        }
    }

    /// These parameters with [`LinkParams::overhead`] measured on this machine: half the median
    /// round trip of `pings` 1-byte ping-pongs through a relay that adds no delay and no pacing.
    pub fn calibrated(self, pings: usize) -> std::io::Result<Self> {
        let echo = echo_server()?;
        let bare = LinkParams {
            one_way: Duration::ZERO,
            rate_bps: None,
            chunk: self.chunk,
            overhead: Duration::ZERO,
        };
        let relay = Relay::start("127.0.0.1:0", &echo.to_string(), bare)?;
        let rtt0 = ping_median(relay.local_addr(), pings.max(11))?;
        Ok(LinkParams {
            overhead: Duration::from_secs_f64(rtt0 / 2.0).min(self.one_way),
            ..self
        })
    }

    fn queue_chunks(&self) -> usize {
        let bdp = self
            .rate_bps
            .map_or(0.0, |r| r / 8.0 * self.one_way.as_secs_f64() * 2.0);
        ((bdp / self.chunk as f64) as usize * 2 + 64).min(1 << 16)
    }
}

/// Sleeps until `t` with one plain sleep: the relay wait for many links on few cores (the
/// in-process benchmarks' [`crate::local::tls_group_with`]), at the cost of the timer's slack.
///
/// ```
/// use std::time::{Duration, Instant};
/// let t = Instant::now() + Duration::from_millis(2);
/// coterie_net::netem::plain_sleep_until(t);
/// assert!(Instant::now() >= t);
/// ```
pub fn plain_sleep_until(t: Instant) {
    let now = Instant::now();
    if t > now {
        std::thread::sleep(t - now);
    }
}

/// Sleeps until `t`: a coarse sleep, then yielding spins for the last 300 µs.
pub fn precise_sleep_until(t: Instant) {
    loop {
        let now = Instant::now();
        if now >= t {
            return;
        }
        let rem = t - now;
        if rem > Duration::from_micros(400) {
            std::thread::sleep(rem - Duration::from_micros(300));
        } else {
            std::thread::yield_now();
        }
    }
}

/// Copies `src` to `dst` through the emulated link until end of stream, waiting for each
/// delivery time with `wait_until`.
fn pump(mut src: TcpStream, mut dst: TcpStream, p: LinkParams, wait_until: fn(Instant)) {
    let (tx, rx) = mpsc::sync_channel::<(Instant, Vec<u8>)>(p.queue_chunks());
    let reader = std::thread::spawn(move || {
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
    });
    let mut t_prev: Option<Instant> = None;
    while let Ok((arrival, data)) = rx.recv() {
        let start = match t_prev {
            Some(t) if t > arrival => t,
            _ => arrival,
        };
        let done = match p.rate_bps {
            Some(r) => start + Duration::from_secs_f64(data.len() as f64 * 8.0 / r),
            None => start,
        };
        t_prev = Some(done);
        wait_until(done + p.one_way.saturating_sub(p.overhead));
        if dst.write_all(&data).is_err() {
            break;
        }
    }
    let _ = dst.shutdown(Shutdown::Write);
    let _ = reader.join();
}

/// A running relay: accepts on `local_addr`, connects each accepted connection to the target and
/// emulates the link on both directions.
pub struct Relay {
    local_addr: SocketAddr,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Relay {
    /// Starts a relay listening on `listen` (e.g. `127.0.0.1:0`) and forwarding to `target`.
    pub fn start(listen: &str, target: &str, p: LinkParams) -> std::io::Result<Relay> {
        Self::start_with(listen, target, p, precise_sleep_until)
    }

    /// [`Relay::start`] with another way of waiting for a chunk's delivery time: the link model
    /// (the module's) is the same, `wait_until(t)` is called on the delivering thread of each
    /// direction and must return at (or as soon as it can after) `t`. [`Relay::start`] passes
    /// [`precise_sleep_until`], whose spinning keeps the timing tight but a core busy per link;
    /// a plain sleep scales to many links on few cores at the price of the timer's slack.
    pub fn start_with(
        listen: &str,
        target: &str,
        p: LinkParams,
        wait_until: fn(Instant),
    ) -> std::io::Result<Relay> {
        let l = TcpListener::bind(listen)?;
        l.set_nonblocking(true)?;
        let local_addr = l.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let target = target.to_string();
        let handle = std::thread::spawn(move || {
            while !stop2.load(Ordering::Relaxed) {
                match l.accept() {
                    Ok((a, _)) => {
                        let target = target.clone();
                        std::thread::spawn(move || {
                            if let Err(e) = relay_conn(a, &target, p, wait_until) {
                                tracing::warn!(error = %e, target, "relay connection failed");
                            }
                        });
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(2));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Ok(Relay {
            local_addr,
            stop,
            handle: Some(handle),
        })
    }

    /// Address the relay listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn relay_conn(
    a: TcpStream,
    target: &str,
    p: LinkParams,
    wait_until: fn(Instant),
) -> std::io::Result<()> {
    a.set_nonblocking(false)?;
    let b = TcpStream::connect(target)?;
    a.set_nodelay(true)?;
    b.set_nodelay(true)?;
    let (a2, b2) = (a.try_clone()?, b.try_clone()?);
    let up = std::thread::spawn(move || pump(a, b, p, wait_until));
    pump(b2, a2, p, wait_until);
    let _ = up.join();
    Ok(())
}

/// Result of [`self_check`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SelfCheck {
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
    /// Measured steady-state rate of a bulk transfer through the relay, bit/s.
    pub rate_measured: f64,
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

fn ping_median(addr: SocketAddr, pings: usize) -> std::io::Result<f64> {
    let mut s = TcpStream::connect(addr)?;
    s.set_nodelay(true)?;
    let mut b = [7u8; 1];
    let mut v = Vec::with_capacity(pings);
    for _ in 0..pings + 2 {
        let t = Instant::now();
        s.write_all(&b)?;
        s.read_exact(&mut b)?;
        v.push(t.elapsed().as_secs_f64());
    }
    v.drain(..2);
    v.sort_by(f64::total_cmp);
    Ok(v[v.len() / 2])
}

/// Measures the relay itself: the median round trip of `pings` 1-byte ping-pongs, and the rate of
/// a `bulk_bytes` one-way transfer, measured at the receiver from the first to the last byte.
pub fn self_check(p: LinkParams, pings: usize, bulk_bytes: usize) -> std::io::Result<SelfCheck> {
    let echo = echo_server()?;
    let relay = Relay::start("127.0.0.1:0", &echo.to_string(), p)?;
    let rtt_direct = ping_median(echo, pings.min(200))?;
    let rtt_measured = ping_median(relay.local_addr(), pings)?;

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
    let brelay = Relay::start("127.0.0.1:0", &sink_addr.to_string(), p)?;
    {
        let mut s = TcpStream::connect(brelay.local_addr())?;
        let block = vec![0x5au8; 1 << 16];
        let mut sent = 0;
        while sent < bulk_bytes {
            let k = block.len().min(bulk_bytes - sent);
            s.write_all(&block[..k])?;
            sent += k;
        }
        s.shutdown(Shutdown::Write)?;
    }
    let rate_measured = recv
        .join()
        .map_err(|_| std::io::Error::other("receiver panicked"))??;
    drop(relay);
    drop(brelay);
    Ok(SelfCheck {
        rtt_configured: p.one_way.as_secs_f64() * 2.0,
        rtt_measured,
        rtt_direct,
        overhead: p.overhead.as_secs_f64(),
        rate_configured: p.rate_bps.unwrap_or(0.0),
        rate_measured,
    })
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
    }

    #[test]
    fn relay_delays_and_paces() {
        // 20 ms RTT, 50 Mbit/s: loose bounds here (shared 2-core CI box); the 5% checks are run
        // by bench/netem/selfcheck.sh.
        let p = LinkParams::new(Duration::from_millis(20), 50.0);
        let r = self_check(p, 10, 2_000_000).unwrap();
        assert!(r.rtt_measured >= 0.019 && r.rtt_measured < 0.030, "{r:?}");
        assert!(
            r.rate_measured > 0.8 * 50e6 && r.rate_measured < 1.1 * 50e6,
            "{r:?}"
        );
    }
}
