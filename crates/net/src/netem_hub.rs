//! The link emulator's event-loop engine ([`crate::netem::Engine::EventLoop`]): every relay of
//! the process served by one thread, which waits in `epoll` for the sockets and for one
//! `timerfd` armed at the next delivery time (nanosecond resolution; `epoll_wait`'s own timeout
//! has only milliseconds). The link model is the threads engine's, chunk for chunk: a chunk read
//! at `a` finishes transmission at `max(a, t_prev) + 8·len/rate` and is delivered `one_way −
//! overhead` later, in order, with at most [`LinkParams::queue_chunks`] chunks in flight per
//! direction (the reader stops reading, so TCP's own flow control pushes back).
//!
//! Why: with the threads engine every relayed message costs two thread wake-ups (the reader's
//! and the delivering thread's), and at 16 parties a round's 30 messages wake 30 threads twice
//! on two cores. Here a burst of messages arriving together is read in one wake-up and the
//! chunks due together are written in one.
//!
//! Connecting to the target is a blocking `connect` on the loop's thread: meant for the loopback
//! targets of benchmarks and tests (a slow remote target would hold up every other link; the
//! `coterie netem` commands use the threads engine unless `--engine loop` is given).

use std::collections::{HashMap, VecDeque};
use std::io::{ErrorKind, Read, Write};
use std::net::Shutdown;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Registry, Token, Waker};

use crate::netem::{LinkParams, Pacer};

const WAKER: Token = Token(usize::MAX);
const TIMER: Token = Token(usize::MAX - 1);
/// Listener tokens are `LISTEN_BASE + id`; connection sockets are `2·id` and `2·id + 1` (below
/// it); the waker and the timer take the two largest tokens.
const LISTEN_BASE: usize = usize::MAX / 2;

enum Cmd {
    Listen {
        id: usize,
        listener: TcpListener,
        target: String,
        p: LinkParams,
        /// The relay's shared transmission clock ([`crate::netem::Relay::start_shared`]).
        shared: Option<Arc<Pacer>>,
    },
    /// Stop accepting on a listener; the sender hears once its socket is closed.
    Close(usize, std::sync::mpsc::Sender<()>),
}

/// The process's loop: its registry-side handles (the thread owns the `Poll`).
struct Hub {
    waker: Waker,
    inbox: Mutex<Vec<Cmd>>,
    next_listener: std::sync::atomic::AtomicUsize,
}

static HUB: OnceLock<std::io::Result<Arc<Hub>>> = OnceLock::new();

fn hub() -> std::io::Result<Arc<Hub>> {
    HUB.get_or_init(start_hub)
        .as_ref()
        .map(Arc::clone)
        .map_err(|e| std::io::Error::new(e.kind(), e.to_string()))
}

fn start_hub() -> std::io::Result<Arc<Hub>> {
    let poll = Poll::new()?;
    let waker = Waker::new(poll.registry(), WAKER)?;
    let timer = Timer::new()?;
    poll.registry().register(
        &mut SourceFd(&timer.fd.as_raw_fd()),
        TIMER,
        Interest::READABLE,
    )?;
    let hub = Arc::new(Hub {
        waker,
        inbox: Mutex::new(Vec::new()),
        next_listener: std::sync::atomic::AtomicUsize::new(0),
    });
    let h = hub.clone();
    std::thread::Builder::new()
        .name("netem-loop".into())
        .spawn(move || {
            crate::netem::fine_timer_slack();
            let mut state = Loop {
                poll,
                timer,
                listeners: HashMap::new(),
                conns: HashMap::new(),
                next_conn: 0,
                buf: Vec::new(),
                active: Default::default(),
            };
            if let Err(e) = state.run(&h) {
                tracing::warn!(error = %e, "link emulator loop stopped");
            }
        })?;
    Ok(hub)
}

/// Starts relaying `listener`'s connections to `target` on the process's loop; returns the id
/// that [`close`] takes.
pub(crate) fn listen(
    listener: std::net::TcpListener,
    target: &str,
    p: LinkParams,
    shared: Option<Arc<Pacer>>,
) -> std::io::Result<usize> {
    let hub = hub()?;
    listener.set_nonblocking(true)?;
    let id = hub
        .next_listener
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    lock(&hub.inbox).push(Cmd::Listen {
        id,
        listener: TcpListener::from_std(listener),
        target: target.to_string(),
        p,
        shared,
    });
    hub.waker.wake()?;
    Ok(id)
}

/// Stops accepting on the listener `id` and waits (up to 2 s) until its socket is closed;
/// connections already relayed run on until their ends close them, as with the threads engine.
pub(crate) fn close(id: usize) {
    if let Ok(hub) = hub() {
        let (tx, rx) = std::sync::mpsc::channel();
        lock(&hub.inbox).push(Cmd::Close(id, tx));
        if hub.waker.wake().is_ok() {
            let _ = rx.recv_timeout(Duration::from_secs(2));
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A `timerfd` on `CLOCK_MONOTONIC` (the clock of `Instant` on Linux), non-blocking.
struct Timer {
    fd: OwnedFd,
}

#[allow(unsafe_code)]
impl Timer {
    fn new() -> std::io::Result<Self> {
        // SAFETY: timerfd_create takes no pointers; a non-negative result is a new descriptor
        // that nothing else owns.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created above and is owned by nobody else.
        Ok(Self {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Arms the timer to fire `after` from now (at least 1 ns: a zero value would disarm it).
    fn arm(&self, after: Duration) -> std::io::Result<()> {
        let after = after.max(Duration::from_nanos(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: after.as_secs() as libc::time_t,
                tv_nsec: after.subsec_nanos() as libc::c_long,
            },
        };
        // SAFETY: `spec` is a valid itimerspec on the stack; a null old-value pointer is allowed.
        let r =
            unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Reads the expiry count, if any (clears the descriptor's readiness).
    fn drain(&self) {
        let mut b = [0u8; 8];
        // SAFETY: reads at most 8 bytes into an 8-byte buffer; EAGAIN when not expired is fine.
        let _ = unsafe { libc::read(self.fd.as_raw_fd(), b.as_mut_ptr().cast(), b.len()) };
    }
}

/// One direction of a relayed connection: reads `src`, delivers to `dst`.
#[derive(Default)]
struct Dir {
    /// (delivery time, bytes, bytes of it already written)
    queue: VecDeque<(Instant, Vec<u8>, usize)>,
    /// `src` may have bytes: the last read did not end in `WouldBlock`.
    readable: bool,
    /// `dst` accepts bytes: the last write did not end in `WouldBlock`.
    writable: bool,
    /// `src` reached its end (or failed): nothing more will be queued.
    src_done: bool,
    /// `dst` is shut down for writing (or failed): this direction is over.
    dst_done: bool,
}

/// A relay's listener on the loop.
struct Listener {
    l: TcpListener,
    target: String,
    p: LinkParams,
    /// The relay's shared transmission clock, if it has one.
    shared: Option<Arc<Pacer>>,
}

struct Conn {
    /// `[a, b]`: the accepted connection and the one to the target.
    s: [TcpStream; 2],
    /// `[a → b, b → a]`
    d: [Dir; 2],
    p: LinkParams,
    /// The transmission clock (this connection's own, or its relay's shared one).
    pacer: Arc<Pacer>,
}

struct Loop {
    poll: Poll,
    timer: Timer,
    listeners: HashMap<usize, Listener>,
    conns: HashMap<usize, Conn>,
    next_conn: usize,
    buf: Vec<u8>,
    /// Connections to look at in the next [`Loop::service`]: those an event touched, those just
    /// accepted and those holding queued chunks (a benchmark's mesh has many idle links; the
    /// loop does not walk them).
    active: std::collections::HashSet<usize>,
}

impl Loop {
    fn run(&mut self, hub: &Hub) -> std::io::Result<()> {
        let mut events = Events::with_capacity(256);
        let mut armed: Option<Instant> = None;
        loop {
            // a delivery already due: look at the sockets without blocking, then deliver
            let now = Instant::now();
            let next = self.next_due();
            let timeout = match next {
                Some(t) if t <= now => Some(Duration::ZERO),
                Some(t) => {
                    if armed != Some(t) {
                        self.timer.arm(t - now)?;
                        armed = Some(t);
                    }
                    None
                }
                None => None,
            };
            match self.poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            for ev in events.iter() {
                match ev.token() {
                    WAKER => self.commands(hub),
                    TIMER => {
                        self.timer.drain();
                        armed = None;
                    }
                    Token(t) if (LISTEN_BASE..TIMER.0).contains(&t) => self.accept(t - LISTEN_BASE),
                    Token(t) => {
                        if let Some(c) = self.conns.get_mut(&(t / 2)) {
                            self.active.insert(t / 2);
                            let side = t % 2;
                            // side `side` is the source of direction `side` and the
                            // destination of the other one
                            if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                                c.d[side].readable = true;
                            }
                            if ev.is_writable() || ev.is_write_closed() || ev.is_error() {
                                c.d[1 - side].writable = true;
                            }
                        }
                    }
                }
            }
            self.service();
        }
    }

    fn commands(&mut self, hub: &Hub) {
        let cmds = std::mem::take(&mut *lock(&hub.inbox));
        for c in cmds {
            match c {
                Cmd::Listen {
                    id,
                    mut listener,
                    target,
                    p,
                    shared,
                } => {
                    match self.poll.registry().register(
                        &mut listener,
                        Token(LISTEN_BASE + id),
                        Interest::READABLE,
                    ) {
                        Ok(()) => {
                            let l = Listener {
                                l: listener,
                                target,
                                p,
                                shared,
                            };
                            self.listeners.insert(id, l);
                            // connections that queued before the registration
                            self.accept(id);
                        }
                        Err(e) => tracing::warn!(error = %e, "relay cannot listen"),
                    }
                }
                Cmd::Close(id, done) => {
                    if let Some(mut l) = self.listeners.remove(&id) {
                        let _ = self.poll.registry().deregister(&mut l.l);
                    }
                    let _ = done.send(());
                }
            }
        }
    }

    fn accept(&mut self, id: usize) {
        loop {
            let Some(Listener {
                l,
                target,
                p,
                shared,
            }) = self.listeners.get(&id)
            else {
                return;
            };
            let (a, p, pacer) = match l.accept() {
                Ok((a, _)) => (a, *p, shared.clone().unwrap_or_default()),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    tracing::warn!(error = %e, "relay accept failed");
                    return;
                }
            };
            let b = match std::net::TcpStream::connect(target.as_str()) {
                Ok(b) => b,
                Err(e) => {
                    tracing::warn!(error = %e, target, "relay connection failed");
                    continue;
                }
            };
            if let Err(e) = self.add_conn(a, b, p, pacer) {
                tracing::warn!(error = %e, "relay connection failed");
            }
        }
    }

    fn add_conn(
        &mut self,
        a: TcpStream,
        b: std::net::TcpStream,
        p: LinkParams,
        pacer: Arc<Pacer>,
    ) -> std::io::Result<()> {
        b.set_nonblocking(true)?;
        let b = TcpStream::from_std(b);
        a.set_nodelay(true)?;
        b.set_nodelay(true)?;
        let id = self.next_conn;
        self.next_conn += 1;
        let mut c = Conn {
            s: [a, b],
            d: [Dir::default(), Dir::default()],
            p,
            pacer,
        };
        for (side, s) in c.s.iter_mut().enumerate() {
            self.poll.registry().register(
                s,
                Token(2 * id + side),
                Interest::READABLE | Interest::WRITABLE,
            )?;
        }
        // edge-triggered: start as if both ends had signalled, the first read or write finds
        // out otherwise
        for d in &mut c.d {
            d.readable = true;
            d.writable = true;
        }
        self.conns.insert(id, c);
        self.active.insert(id);
        Ok(())
    }

    /// Earliest delivery time over the directions that could write now (only active
    /// connections hold queued chunks).
    fn next_due(&self) -> Option<Instant> {
        self.active
            .iter()
            .filter_map(|id| self.conns.get(id))
            .flat_map(|c| c.d.iter())
            .filter(|d| d.writable && !d.dst_done)
            .filter_map(|d| d.queue.front().map(|q| q.0))
            .min()
    }

    /// Reads what can be read, delivers what is due, closes what is over.
    fn service(&mut self) {
        let registry = self.poll.registry();
        let mut gone = Vec::new();
        let now = Instant::now();
        let mut idle = Vec::new();
        for &id in &self.active {
            let Some(c) = self.conns.get_mut(&id) else {
                idle.push(id);
                continue;
            };
            for side in 0..2 {
                read_side(c, side, &mut self.buf);
                if deliver_side(c, side, now) {
                    // a delivery made room for what the source may still hold
                    read_side(c, side, &mut self.buf);
                }
            }
            if c.d.iter().all(|d| d.dst_done) {
                gone.push(id);
            } else if c.d.iter().all(|d| d.queue.is_empty() && !d.readable) {
                // nothing queued and nothing to read: the next event brings it back
                idle.push(id);
            }
        }
        for id in idle {
            self.active.remove(&id);
        }
        for id in gone {
            self.active.remove(&id);
            if let Some(mut c) = self.conns.remove(&id) {
                for s in &mut c.s {
                    deregister(registry, s);
                }
            }
        }
    }
}

fn deregister(r: &Registry, s: &mut TcpStream) {
    let _ = r.deregister(s);
}

/// Direction `side` reads its source (`c.s[side]`) while it has bytes and room.
fn read_side(c: &mut Conn, side: usize, buf: &mut Vec<u8>) {
    let p = c.p;
    let cap = p.queue_chunks();
    let d = &mut c.d[side];
    if d.src_done || !d.readable {
        return;
    }
    if buf.len() != p.chunk {
        buf.resize(p.chunk, 0);
    }
    while d.readable && d.queue.len() < cap {
        match c.s[side].read(&mut buf[..]) {
            Ok(0) => {
                d.src_done = true;
                d.readable = false;
            }
            Ok(k) => {
                let done = c.pacer.book(side, Instant::now(), k, &p);
                let due = done + p.one_way.saturating_sub(p.overhead);
                d.queue.push_back((due, buf[..k].to_vec(), 0));
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => d.readable = false,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => {
                d.src_done = true;
                d.readable = false;
            }
        }
    }
}

/// Direction `side` writes its chunks due by `now` to its destination (`c.s[1 − side]`); once
/// its source is done and its queue empty, shuts the destination down for writing. Returns
/// whether a whole chunk left the queue.
fn deliver_side(c: &mut Conn, side: usize, now: Instant) -> bool {
    let (src, dst) = if side == 0 {
        let [a, b] = &mut c.s;
        (a, b)
    } else {
        let [a, b] = &mut c.s;
        (b, a)
    };
    let d = &mut c.d[side];
    if d.dst_done {
        return false;
    }
    let mut popped = false;
    while d.writable {
        let Some((due, data, off)) = d.queue.front_mut() else {
            break;
        };
        if *due > now {
            break;
        }
        match dst.write(&data[*off..]) {
            Ok(k) => {
                *off += k;
                if *off == data.len() {
                    d.queue.pop_front();
                    popped = true;
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => d.writable = false,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => {
                // the destination is gone: so is this direction (its source is not read on)
                d.queue.clear();
                d.dst_done = true;
                d.src_done = true;
                let _ = src.shutdown(Shutdown::Read);
                let _ = dst.shutdown(Shutdown::Write);
                return false;
            }
        }
    }
    if d.src_done && d.queue.is_empty() {
        d.dst_done = true;
        let _ = dst.shutdown(Shutdown::Write);
    }
    popped
}
