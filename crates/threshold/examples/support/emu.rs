//! A link emulator for the threshold benchmarks that scales to many links on few cores.
//!
//! Same model as `coterie_net::netem` (per direction: a chunk read at `a` finishes transmission
//! at `max(a, t_prev) + 8·len/rate` and is delivered one one-way delay later, minus the relay
//! path's calibrated own cost), but the delivering thread waits with a plain `nanosleep` under a
//! 1 µs timer slack (`PR_SET_TIMERSLACK`) instead of a yield-spin over the last 300 µs. With 16
//! parties (240 directed links) the spinning emulator kept hundreds of threads runnable on the 2
//! cores and the parties' own tasks waited for CPU: the 16-party latencies of 58–104 ms measured
//! before were the emulator's, not the protocol's (see the threshold section of BENCHMARKS.md).

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// One emulated link (each direction independently).
#[derive(Debug, Clone, Copy)]
pub struct Link {
    /// Half the round-trip time.
    pub one_way: Duration,
    /// Bits per second; `None` unlimited.
    pub rate_bps: Option<f64>,
    /// The relay path's own one-way cost, subtracted from `one_way`.
    pub overhead: Duration,
}

#[allow(unsafe_code)]
fn fine_timer_slack() {
    // SAFETY: prctl(PR_SET_TIMERSLACK, ns) only changes this thread's timer slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1000u64, 0u64, 0u64, 0u64);
    }
}

fn sleep_until(t: Instant) {
    let now = Instant::now();
    if t > now {
        std::thread::sleep(t - now);
    }
}

impl Link {
    /// A link of round trip `rtt` and `rate_mbit` Mbit/s (0 = unlimited), with the relay's own
    /// cost measured here (half the median round trip of 1-byte pings through a zero-delay relay).
    pub fn calibrated(rtt: Duration, rate_mbit: f64) -> std::io::Result<Self> {
        let bare = Link {
            one_way: Duration::ZERO,
            rate_bps: None,
            overhead: Duration::ZERO,
        };
        let echo = echo_server()?;
        let relay = EmuRelay::start(echo, bare)?;
        let mut s = TcpStream::connect(relay.addr)?;
        s.set_nodelay(true)?;
        let mut b = [1u8];
        let mut v = Vec::new();
        for _ in 0..41 {
            let t = Instant::now();
            s.write_all(&b)?;
            s.read_exact(&mut b)?;
            v.push(t.elapsed());
        }
        v.sort();
        let one_way = rtt / 2;
        Ok(Link {
            one_way,
            rate_bps: (rate_mbit > 0.0).then_some(rate_mbit * 1e6),
            overhead: (v[v.len() / 2] / 2).min(one_way),
        })
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

fn pump(mut src: TcpStream, mut dst: TcpStream, p: Link) {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    let reader = std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
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
    fine_timer_slack();
    let delay = p.one_way.saturating_sub(p.overhead);
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
        sleep_until(done + delay);
        if dst.write_all(&data).is_err() {
            break;
        }
    }
    let _ = dst.shutdown(Shutdown::Write);
    let _ = reader.join();
}

/// A relay in front of one listener.
pub struct EmuRelay {
    /// Where it listens.
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

impl EmuRelay {
    /// Starts a relay forwarding every accepted connection to `target` through `p`.
    pub fn start(target: SocketAddr, p: Link) -> std::io::Result<Self> {
        let l = TcpListener::bind("127.0.0.1:0")?;
        l.set_nonblocking(true)?;
        let addr = l.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        std::thread::spawn(move || {
            while !stop2.load(Ordering::Relaxed) {
                match l.accept() {
                    Ok((a, _)) => {
                        std::thread::spawn(move || {
                            let _ = a.set_nonblocking(false);
                            let Ok(b) = TcpStream::connect(target) else {
                                return;
                            };
                            let _ = a.set_nodelay(true);
                            let _ = b.set_nodelay(true);
                            let (Ok(a2), Ok(b2)) = (a.try_clone(), b.try_clone()) else {
                                return;
                            };
                            let up = std::thread::spawn(move || pump(a, b, p));
                            pump(b2, a2, p);
                            let _ = up.join();
                        });
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        Ok(EmuRelay { addr, stop })
    }
}

impl Drop for EmuRelay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
