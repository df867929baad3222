//! The I/O of established links: frame reads and writes, the reader task per peer, and the state
//! they share with the mesh (poison, abort relay, close flags).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadHalf, WriteHalf};
use tokio::net::TcpStream;
use tokio::sync::{Mutex, mpsc, watch};
use tokio_rustls::TlsStream;

use crate::frame::{self, AbortNotice, FrameKind};
use crate::mesh::set_poison;
use crate::{Error, PartyId, Result};

pub(crate) type Stream = TlsStream<TcpStream>;
pub(crate) type Writer = Arc<Mutex<WriteHalf<Stream>>>;

/// Reads one frame body; `Ok(None)` on an end of stream at a frame boundary. A stream that ends
/// inside a frame is [`Error::Io`] when the connection broke (no TLS close: a peer killed while it
/// wrote) and [`Error::MalformedFrame`] when the peer closed it there.
pub(crate) async fn read_frame<R: AsyncRead + Unpin>(
    r: &mut R,
    max: usize,
    party: PartyId,
) -> Result<Option<Vec<u8>>> {
    let mut pre = [0u8; frame::LEN_PREFIX];
    match r.read_exact(&mut pre).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => {
            return Err(Error::Io {
                party,
                cause: e.to_string(),
            });
        }
    }
    let len = frame::parse_len(pre, max).map_err(|e| match e {
        frame::FrameError::TooLarge { len, max } => Error::FrameTooLarge { party, len, max },
        e => Error::MalformedFrame {
            party,
            cause: e.to_string(),
        },
    })?;
    // The buffer grows only as bytes arrive (a lying length prefix cannot make it allocate more
    // than 1 MiB beyond what was sent), and ends at exactly `len`, so a large frame is never
    // reallocated past its size.
    let mut body: Vec<u8> = Vec::new();
    let mut filled = 0;
    while filled < len {
        let next = len.min(filled.saturating_mul(2).max(1 << 20));
        body.reserve_exact(next - body.len());
        body.resize(next, 0);
        while filled < next {
            match r.read(&mut body[filled..next]).await {
                Ok(0) => {
                    // a close (TLS close_notify) inside a frame: the peer cut its own frame
                    return Err(Error::MalformedFrame {
                        party,
                        cause: format!("stream closed inside a {len}-byte frame"),
                    });
                }
                Ok(k) => filled += k,
                // The connection ended mid-frame without a close: a peer killed while it wrote
                // looks just so, so this is a lost connection (as an end between frames is), not
                // a malformed frame (which makes a party abort where it would wait for the peer
                // to return).
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                    return Err(Error::Io {
                        party,
                        cause: format!("the connection ended inside a {len}-byte frame"),
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(Error::Io {
                        party,
                        cause: e.to_string(),
                    });
                }
            }
        }
    }
    Ok(Some(body))
}

pub(crate) async fn write_frame<W: AsyncWrite + Unpin>(
    w: &mut W,
    f: &[u8],
    party: PartyId,
) -> Result<()> {
    write_frame_parts(w, f, &[], party).await
}

pub(crate) async fn write_frame_parts<W: AsyncWrite + Unpin>(
    w: &mut W,
    head: &[u8],
    body: &[u8],
    party: PartyId,
) -> Result<()> {
    let io = |e: std::io::Error| Error::Io {
        party,
        cause: e.to_string(),
    };
    w.write_all(head).await.map_err(io)?;
    if !body.is_empty() {
        w.write_all(body).await.map_err(io)?;
    }
    w.flush().await.map_err(io)
}

/// Everything the reader tasks share with the mesh.
pub(crate) struct Shared {
    pub(crate) id: PartyId,
    pub(crate) poison_tx: watch::Sender<Option<Error>>,
    pub(crate) closing: AtomicBool,
    pub(crate) bye: Vec<AtomicBool>,
    pub(crate) writers: Vec<Option<Writer>>,
    /// The task relaying the first abort or crash seen to the other peers, if one was started.
    pub(crate) relay: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// The other meshes between the same parties (lanes, [`link_lanes`]): a peer lost on one of
    /// them is lost on all.
    pub(crate) siblings: std::sync::Mutex<Vec<std::sync::Weak<Shared>>>,
}

/// Makes the meshes of `lanes` (each one's [`Shared`]) share the loss of a peer: when one of them
/// is poisoned by a lost peer ([`Error::Disconnected`], seen directly or relayed), every other is
/// poisoned with the same cause at once, and each relays it to its own peers. A party that ends
/// its session on a lost peer and drops its lanes has then told every peer, on every lane, which
/// party was lost before its own connections close: otherwise a lane the loss had not reached yet
/// closes bare, and a peer that reads that close first blames this party instead. For the same
/// reason this party's own abort on one lane is sent on all of them
/// ([`Shared::abort_siblings`]); an abort received from a peer is not spread (that peer sends it
/// on every lane itself).
pub(crate) fn link_lanes(lanes: &[&Arc<Shared>]) {
    for (i, s) in lanes.iter().enumerate() {
        let others = lanes
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .map(|(_, o)| Arc::downgrade(o))
            .collect();
        *s.siblings.lock().unwrap_or_else(|p| p.into_inner()) = others;
    }
}

impl Shared {
    /// Poisons the mesh; on the first abort or crash seen, relays it to every other peer, so that
    /// they learn the root cause before any cascade of failures reaches them.
    pub(crate) fn poison(self: &Arc<Self>, e: Error, skip: PartyId) {
        // The relay slot is locked before the poison is set: a receiver woken by the poison and
        // calling `flush_relay` then waits until the relay task's handle is stored, instead of
        // finding the slot still empty and letting its party exit before the relay is written.
        let mut slot = self.relay.lock().unwrap_or_else(|p| p.into_inner());
        if !set_poison(&self.poison_tx, e.clone()) {
            return;
        }
        tracing::warn!(party = self.id, error = %e, "mesh poisoned");
        let relay = match &e {
            Error::Aborted { party, reason } => Some((*party, reason.clone(), false)),
            Error::Disconnected { party, cause } => Some((*party, cause.clone(), true)),
            _ => None,
        };
        if let Some((origin, reason, disconnected)) = relay {
            let me = self.clone();
            *slot = Some(tokio::spawn(async move {
                me.send_abort(origin, &reason, disconnected, skip).await
            }));
        }
        drop(slot);
        // A lost peer is lost on every lane (the slot is released first: a sibling poisoned
        // here tries this mesh again, which is poisoned already and returns at once).
        if let Error::Disconnected { party, .. } = &e {
            for s in self.live_siblings() {
                s.poison(e.clone(), *party);
            }
        }
    }

    /// The linked lanes ([`link_lanes`]) that still exist and are not being closed normally (such
    /// a lane has nothing left to fail, nor anyone to tell).
    fn live_siblings(&self) -> Vec<Arc<Shared>> {
        self.siblings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter_map(std::sync::Weak::upgrade)
            .filter(|s| !s.closing.load(Ordering::Acquire))
            .collect()
    }

    /// Waits until the relay of the first abort or crash (if any) has been written, so that a
    /// party that stops on the error it returns does not exit before its peers learn the root
    /// cause. Each relay write is bounded by its own timeout.
    pub(crate) async fn flush_relay(&self) {
        let h = self.relay.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(h) = h {
            let _ = h.await;
        }
    }

    /// This party's own abort `e` (with its `reason`) on every linked lane that is not being
    /// closed and not already failed: each is poisoned with `e` and its peers are sent the abort
    /// before this returns.
    pub(crate) async fn abort_siblings(&self, e: &Error, reason: &str) {
        for s in self.live_siblings() {
            if set_poison(&s.poison_tx, e.clone()) {
                s.send_abort(self.id, reason, false, usize::MAX).await;
            }
        }
    }

    pub(crate) async fn send_abort(
        &self,
        origin: PartyId,
        reason: &str,
        disconnected: bool,
        skip: PartyId,
    ) {
        let notice = AbortNotice {
            origin: origin as u32,
            reason: frame::notice_reason(reason),
            disconnected,
        };
        let Ok(f) = frame::encode_control(FrameKind::Abort, &notice) else {
            return;
        };
        for (j, w) in self.writers.iter().enumerate() {
            if j == skip || j == origin {
                continue;
            }
            if let Some(w) = w {
                let _ = tokio::time::timeout(Duration::from_secs(2), async {
                    let mut w = w.lock().await;
                    write_frame(&mut *w, &f, j).await
                })
                .await;
            }
        }
    }
}

pub(crate) async fn reader_task(
    j: PartyId,
    mut rd: ReadHalf<Stream>,
    tx: mpsc::UnboundedSender<Vec<u8>>,
    shared: Arc<Shared>,
    max: usize,
) {
    loop {
        let r = read_frame(&mut rd, max, j).await;
        let quiet = shared.bye[j].load(Ordering::Acquire) || shared.closing.load(Ordering::Acquire);
        let body = match r {
            Ok(Some(b)) => b,
            Ok(None) if quiet => return,
            Ok(None) => {
                shared.poison(
                    Error::Disconnected {
                        party: j,
                        cause: "connection ended without a close".into(),
                    },
                    j,
                );
                return;
            }
            Err(_) if quiet => return,
            Err(Error::Io { cause, .. }) => {
                shared.poison(Error::Disconnected { party: j, cause }, j);
                return;
            }
            Err(e) => {
                shared.poison(e, j);
                return;
            }
        };
        let kind = match frame::decode_frame(&body) {
            Ok(f) => f.kind,
            Err(e) => {
                shared.poison(
                    Error::MalformedFrame {
                        party: j,
                        cause: e.to_string(),
                    },
                    j,
                );
                return;
            }
        };
        match kind {
            FrameKind::Data => {
                if tx.send(body).is_err() {
                    return;
                }
            }
            FrameKind::Bye => {
                shared.bye[j].store(true, Ordering::Release);
                return;
            }
            FrameKind::Abort => {
                let e = match frame::decode_frame(&body).map(|f| frame::decode_abort(f.payload)) {
                    Ok(Ok(a)) if (a.origin as usize) < shared.bye.len() => {
                        if a.disconnected {
                            Error::Disconnected {
                                party: a.origin as usize,
                                cause: a.reason,
                            }
                        } else {
                            Error::Aborted {
                                party: a.origin as usize,
                                reason: a.reason,
                            }
                        }
                    }
                    _ => Error::MalformedFrame {
                        party: j,
                        cause: "bad abort notice".into(),
                    },
                };
                shared.poison(e, j);
                return;
            }
            FrameKind::Hello => {
                shared.poison(
                    Error::UnexpectedMessage {
                        party: j,
                        cause: "hello after start-up".into(),
                    },
                    j,
                );
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Yields its bytes, then fails as a TLS stream does whose connection ended without a close.
    struct Broken<'a>(&'a [u8]);

    impl AsyncRead for Broken<'_> {
        fn poll_read(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            if self.0.is_empty() {
                return std::task::Poll::Ready(Err(std::io::ErrorKind::UnexpectedEof.into()));
            }
            let k = self.0.len().min(buf.remaining());
            buf.put_slice(&self.0[..k]);
            self.0 = &self.0[k..];
            std::task::Poll::Ready(Ok(()))
        }
    }

    /// A connection that breaks inside a frame (a peer killed while it wrote) is a lost
    /// connection; a stream closed inside a frame is a malformed frame; one that ends between
    /// frames is a clean end.
    #[tokio::test]
    async fn a_connection_breaking_inside_a_frame_is_an_io_error() {
        let mut bytes = 100u32.to_le_bytes().to_vec();
        bytes.extend_from_slice(&[7; 10]);
        let e = read_frame(&mut Broken(&bytes), 1 << 20, 3)
            .await
            .unwrap_err();
        assert_eq!(
            e,
            Error::Io {
                party: 3,
                cause: "the connection ended inside a 100-byte frame".into()
            }
        );
        let e = read_frame(&mut &bytes[..], 1 << 20, 3).await.unwrap_err();
        assert!(matches!(e, Error::MalformedFrame { party: 3, .. }), "{e}");
        let mut whole = 16u32.to_le_bytes().to_vec();
        whole.extend_from_slice(&[9; 16]);
        let mut r = Broken(&whole);
        assert_eq!(
            read_frame(&mut r, 1 << 20, 3).await.unwrap(),
            Some(vec![9; 16])
        );
        assert_eq!(read_frame(&mut r, 1 << 20, 3).await.unwrap(), None);
    }
}
