//! The [`Mesh`] trait every protocol talks through, and the receive machinery both
//! implementations share.

use std::future::Future;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::frame::{self, BytesPayload, FrameKind};
use crate::{Error, PartyId, Result};

/// Tunables shared by both mesh implementations.
#[derive(Debug, Clone)]
pub struct MeshOptions {
    /// Deadline for every receive (and for every send to complete), per call; an all-to-all round
    /// gets one such deadline for the whole round.
    pub timeout: Duration,
    /// Overall deadline for start-up (all connections established).
    pub connect_deadline: Duration,
    /// Largest accepted frame body in bytes; larger frames are refused, never allocated.
    pub max_frame: usize,
}

impl Default for MeshOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(30),
            connect_deadline: Duration::from_secs(30),
            max_frame: frame::DEFAULT_MAX_FRAME,
        }
    }
}

/// Communication counters of one party, per peer (frame bytes including the 4-byte length prefix;
/// TLS record overhead is not counted).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Bytes sent to each party (index = party id).
    pub bytes_sent: Vec<u64>,
    /// Bytes received from each party.
    pub bytes_received: Vec<u64>,
    /// Messages sent to each party.
    pub msgs_sent: Vec<u64>,
    /// Messages received from each party.
    pub msgs_received: Vec<u64>,
}

impl Stats {
    pub(crate) fn new(n: usize) -> Self {
        Self {
            bytes_sent: vec![0; n],
            bytes_received: vec![0; n],
            msgs_sent: vec![0; n],
            msgs_received: vec![0; n],
        }
    }
    /// Total bytes sent to all peers.
    pub fn total_sent(&self) -> u64 {
        self.bytes_sent.iter().sum()
    }
    /// Total bytes received from all peers.
    pub fn total_received(&self) -> u64 {
        self.bytes_received.iter().sum()
    }
}

/// A full mesh of `n` parties with ids `0..n`, as seen by one of them.
///
/// Messages are serde values (postcard) in length-prefixed frames. Each directed link numbers its
/// frames, and every message carries a protocol `tag` (0 for the untagged calls), so a message
/// received out of order or in the wrong step is reported as [`Error::UnexpectedMessage`] instead
/// of being misread. Every receive has a deadline ([`MeshOptions::timeout`]). After an abort by any
/// party every pending and later receive returns that error; after the crash of a peer, so does
/// every receive that finds no message which had already arrived before it (what a peer sent
/// before it went is still read, so that a party learns, say, the setting its peer disagreed on).
///
/// Protocols take `&mut impl Mesh`; all returned futures are `Send`, so a protocol can run in a
/// spawned tokio task. Call [`Mesh::close`] at the end so that peers see a normal close rather
/// than a crash.
pub trait Mesh: Send {
    /// This party's id.
    fn id(&self) -> PartyId;
    /// Number of parties.
    fn n(&self) -> usize;
    /// Options in force.
    fn options(&self) -> &MeshOptions;
    /// Changes the receive timeout.
    fn set_timeout(&mut self, timeout: Duration);
    /// Communication counters so far.
    fn stats(&self) -> &Stats;

    /// Sends a complete frame (as built by [`frame::encode_data`]) to `to`; the mesh stamps the
    /// link's sequence number into it.
    fn send_frame<'a>(
        &'a mut self,
        to: PartyId,
        frame: &'a mut [u8],
    ) -> impl Future<Output = Result<()>> + Send + 'a;

    /// Sends a frame given as its head (prefix and header, as built by
    /// [`frame::start_bytes_frame`]) and the bytes that follow it, without joining them first.
    /// The prefix must already count `body`. The default joins them and calls
    /// [`Mesh::send_frame`]; the TLS mesh writes both parts under one lock instead.
    fn send_frame_parts<'a>(
        &'a mut self,
        to: PartyId,
        head: &'a mut [u8],
        body: &'a [u8],
    ) -> impl Future<Output = Result<()>> + Send + 'a {
        async move {
            let mut f = Vec::with_capacity(head.len() + body.len());
            f.extend_from_slice(head);
            f.extend_from_slice(body);
            self.send_frame(to, &mut f).await
        }
    }

    /// Receives the next data frame body from `from`, checks its sequence number and `tag`, and
    /// returns the body (header included; the payload starts at [`frame::HEADER_LEN`]).
    fn recv_frame(
        &mut self,
        from: PartyId,
        tag: u32,
        deadline: Instant,
    ) -> impl Future<Output = Result<Vec<u8>>> + Send;

    /// Aborts the protocol: tells every party `reason`, makes every pending receive everywhere
    /// fail, and returns the error to propagate ([`Error::Aborted`] naming this party). Over TLS
    /// the peers get `reason` with every local file path cut to `…/` and its file name (this
    /// party's own error keeps the whole text).
    fn abort(&mut self, reason: &str) -> impl Future<Output = Error> + Send;

    /// Closes the session normally: tells every peer, waits (bounded by the timeout) until every
    /// peer has closed too, and releases the connections.
    fn close(self) -> impl Future<Output = Result<()>> + Send
    where
        Self: Sized;

    /// Sends `msg` to party `to` with tag 0.
    fn send<T: Serialize + ?Sized>(
        &mut self,
        to: PartyId,
        msg: &T,
    ) -> impl Future<Output = Result<()>> + Send {
        self.send_tagged(to, 0, msg)
    }

    /// Sends `msg` to party `to` with a protocol tag.
    fn send_tagged<T: Serialize + ?Sized>(
        &mut self,
        to: PartyId,
        tag: u32,
        msg: &T,
    ) -> impl Future<Output = Result<()>> + Send {
        let frame = frame::encode_data(tag, msg, self.options().max_frame);
        async move {
            let mut frame = frame?;
            self.send_frame(to, &mut frame).await
        }
    }

    /// Receives a value of type `T` from party `from` (tag 0).
    fn recv<T: DeserializeOwned>(
        &mut self,
        from: PartyId,
    ) -> impl Future<Output = Result<T>> + Send {
        self.recv_tagged(from, 0)
    }

    /// Receives a value of type `T` from party `from`, which must carry `tag`.
    fn recv_tagged<T: DeserializeOwned>(
        &mut self,
        from: PartyId,
        tag: u32,
    ) -> impl Future<Output = Result<T>> + Send {
        let deadline = Instant::now() + self.options().timeout;
        async move {
            let body = self.recv_frame(from, tag, deadline).await?;
            decode_body(from, &body)
        }
    }

    /// Sends a byte string (packed polynomials, ciphertexts) to `to` with a protocol tag, without
    /// serializing it byte by byte or copying it into a frame on the TLS mesh. On the wire it is
    /// exactly a [`crate::Blob`], so the receiver may use either [`Mesh::recv_bytes`] or
    /// `recv_tagged::<Blob>`.
    fn send_bytes<'a>(
        &'a mut self,
        to: PartyId,
        tag: u32,
        bytes: &'a [u8],
    ) -> impl Future<Output = Result<()>> + Send + 'a {
        let head = frame::start_bytes_frame(tag, bytes.len(), self.options().max_frame);
        async move {
            let mut head = head.map_err(|e| Error::Encode(e.to_string()))?;
            self.send_frame_parts(to, &mut head, bytes).await
        }
    }

    /// Receives a byte string sent with [`Mesh::send_bytes`] (or as a [`crate::Blob`]) from
    /// `from` with `tag`, reusing the received buffer instead of copying it.
    fn recv_bytes(
        &mut self,
        from: PartyId,
        tag: u32,
    ) -> impl Future<Output = Result<Vec<u8>>> + Send {
        let p = self.recv_bytes_payload(from, tag);
        async move { Ok(p.await?.into_vec()) }
    }

    /// [`Mesh::recv_bytes`] without moving the bytes: the string stays where it arrived, after
    /// the frame header and its length ([`BytesPayload`] derefs to it).
    fn recv_bytes_payload(
        &mut self,
        from: PartyId,
        tag: u32,
    ) -> impl Future<Output = Result<BytesPayload>> + Send {
        let deadline = Instant::now() + self.options().timeout;
        async move { bytes_payload(from, self.recv_frame(from, tag, deadline).await?) }
    }

    /// Sends the same value to every other party (point-to-point; not a consistent broadcast —
    /// use [`crate::commit::check_consistent`] where equivocation matters).
    fn broadcast<T: Serialize + ?Sized>(
        &mut self,
        msg: &T,
    ) -> impl Future<Output = Result<()>> + Send {
        self.broadcast_tagged(0, msg)
    }

    /// [`Mesh::broadcast`] with a protocol tag.
    fn broadcast_tagged<T: Serialize + ?Sized>(
        &mut self,
        tag: u32,
        msg: &T,
    ) -> impl Future<Output = Result<()>> + Send {
        let frame = frame::encode_data(tag, msg, self.options().max_frame);
        async move {
            let mut frame = frame?;
            for to in 0..self.n() {
                if to != self.id() {
                    self.send_frame(to, &mut frame).await?;
                }
            }
            Ok(())
        }
    }

    /// One all-to-all round: sends `msg` to every other party and returns every party's value,
    /// indexed by party id (this party's own value at its own index). One deadline covers the
    /// whole round.
    fn exchange_all<T: Serialize + DeserializeOwned>(
        &mut self,
        msg: &T,
    ) -> impl Future<Output = Result<Vec<T>>> + Send {
        self.exchange_all_tagged(0, msg)
    }

    /// [`Mesh::exchange_all`] with a protocol tag.
    fn exchange_all_tagged<T: Serialize + DeserializeOwned>(
        &mut self,
        tag: u32,
        msg: &T,
    ) -> impl Future<Output = Result<Vec<T>>> + Send {
        let frame = frame::encode_data(tag, msg, self.options().max_frame);
        async move {
            let mut frame = frame?;
            let me = self.id();
            let n = self.n();
            for to in 0..n {
                if to != me {
                    self.send_frame(to, &mut frame).await?;
                }
            }
            let deadline = Instant::now() + self.options().timeout;
            // Collect the bodies first so that no `T` lives across an await (the future stays
            // `Send` for any `T`).
            let mut bodies = Vec::with_capacity(n);
            for from in 0..n {
                if from == me {
                    bodies.push(Vec::new());
                } else {
                    bodies.push(self.recv_frame(from, tag, deadline).await?);
                }
            }
            bodies
                .iter()
                .enumerate()
                .map(|(from, body)| {
                    if from == me {
                        decode_body(me, &frame[frame::LEN_PREFIX..])
                    } else {
                        decode_body(from, body)
                    }
                })
                .collect()
        }
    }

    /// Sends the byte string `bytes` to every other party and receives one from each, all with
    /// `tag`, as [`Mesh::exchange_all_tagged`] does with a [`crate::Blob`] (the same bytes on the
    /// wire), but without copying `bytes` into a frame and with every received string left in
    /// the buffer it arrived in. Entry `i` is party `i`'s string; this party's entry is `None`.
    fn exchange_all_bytes<'a>(
        &'a mut self,
        tag: u32,
        bytes: &'a [u8],
    ) -> impl Future<Output = Result<Vec<Option<BytesPayload>>>> + Send + 'a {
        async move {
            let (me, n) = (self.id(), self.n());
            let max = self.options().max_frame;
            for to in 0..n {
                if to != me {
                    let mut head = frame::start_bytes_frame(tag, bytes.len(), max)
                        .map_err(|e| Error::Encode(e.to_string()))?;
                    self.send_frame_parts(to, &mut head, bytes).await?;
                }
            }
            let deadline = Instant::now() + self.options().timeout;
            let mut out = Vec::with_capacity(n);
            for from in 0..n {
                if from == me {
                    out.push(None);
                    continue;
                }
                let body = self.recv_frame(from, tag, deadline).await?;
                out.push(Some(bytes_payload(from, body)?));
            }
            Ok(out)
        }
    }
}

/// The byte string of a data frame body received from `from`.
fn bytes_payload(from: PartyId, body: Vec<u8>) -> Result<BytesPayload> {
    BytesPayload::from_body(body).map_err(|e| Error::Decode {
        party: from,
        cause: e.to_string(),
    })
}

/// Decodes the payload of a data frame body.
fn decode_body<T: DeserializeOwned>(from: PartyId, body: &[u8]) -> Result<T> {
    let payload = body
        .get(frame::HEADER_LEN..)
        .ok_or_else(|| Error::MalformedFrame {
            party: from,
            cause: "short body".into(),
        })?;
    frame::decode_payload(payload).map_err(|cause| Error::Decode { party: from, cause })
}

/// State shared by both implementations on the receiving side: one inbox per peer, sequence
/// counters, counters, and the poison (first abort or crash seen) that fails every receive (after
/// a crash, every receive that finds nothing which arrived before it).
pub(crate) struct Core {
    pub id: PartyId,
    pub n: usize,
    pub opts: MeshOptions,
    pub inbox: Vec<Option<mpsc::UnboundedReceiver<Vec<u8>>>>,
    pub seq_in: Vec<u64>,
    pub seq_out: Vec<u64>,
    pub stats: Stats,
    pub poison: watch::Receiver<Option<Error>>,
}

impl Core {
    pub fn new(
        id: PartyId,
        n: usize,
        opts: MeshOptions,
        inbox: Vec<Option<mpsc::UnboundedReceiver<Vec<u8>>>>,
        poison: watch::Receiver<Option<Error>>,
    ) -> Self {
        Self {
            id,
            n,
            opts,
            inbox,
            seq_in: vec![0; n],
            seq_out: vec![0; n],
            stats: Stats::new(n),
            poison,
        }
    }

    pub fn check_peer(&self, p: PartyId) -> Result<()> {
        if p >= self.n || p == self.id {
            return Err(Error::BadParty {
                party: p,
                n: self.n,
                me: self.id,
            });
        }
        Ok(())
    }

    pub fn poisoned(&self) -> Option<Error> {
        self.poison.borrow().clone()
    }

    /// Stamps the next outgoing sequence number into `frame` and counts it.
    pub fn stamp(&mut self, to: PartyId, frame: &mut [u8]) -> Result<()> {
        self.stamp_parts(to, frame, 0)
    }

    /// [`Core::stamp`] for a frame sent as a head and `extra` further bytes.
    pub fn stamp_parts(&mut self, to: PartyId, head: &mut [u8], extra: usize) -> Result<()> {
        self.check_peer(to)?;
        if let Some(e) = self.poisoned() {
            return Err(e);
        }
        frame::set_seq(head, self.seq_out[to]);
        self.seq_out[to] += 1;
        self.stats.bytes_sent[to] += (head.len() + extra) as u64;
        self.stats.msgs_sent[to] += 1;
        Ok(())
    }

    pub async fn recv_frame(
        &mut self,
        from: PartyId,
        tag: u32,
        deadline: Instant,
    ) -> Result<Vec<u8>> {
        self.check_peer(from)?;
        let mut poison = self.poison.clone();
        let timeout = self.opts.timeout;
        // A peer that sent its message and then left (an error it found, a crash) poisons the
        // mesh once its connection ends, but what it sent before that was delivered whole and
        // is still read: a party must learn, say, the setting its peer disagreed on rather than
        // only that the peer went. An abort (this party's or a peer's) stops every receive.
        let early = poison.borrow_and_update().clone();
        if let Some(e) = &early
            && !matches!(e, Error::Disconnected { .. })
        {
            return Err(e.clone());
        }
        let Some(rx) = self.inbox[from].as_mut() else {
            return Err(self.poisoned().unwrap_or(Error::Closed { party: from }));
        };
        // Fast path: a frame that has already arrived needs no timer and no select.
        let got = match rx.try_recv() {
            Ok(b) => Some(Some(b)),
            Err(mpsc::error::TryRecvError::Disconnected) => Some(None),
            Err(mpsc::error::TryRecvError::Empty) if early.is_some() => None,
            Err(mpsc::error::TryRecvError::Empty) => tokio::select! {
                biased;
                _ = poison.changed() => match rx.try_recv() {
                    // a frame that came in just before the departure
                    Ok(b) if matches!(*poison.borrow(), Some(Error::Disconnected { .. })) => {
                        Some(Some(b))
                    }
                    _ => None,
                },
                m = rx.recv() => Some(m),
                _ = tokio::time::sleep_until(deadline) => {
                    return Err(Error::Timeout { party: from, after: timeout });
                }
            },
        };
        let body = match got {
            None => {
                // poisoned (or its sender is gone): report it
                return Err(self.poisoned().unwrap_or(Error::Disconnected {
                    party: from,
                    cause: "mesh shut down".into(),
                }));
            }
            Some(None) => {
                self.inbox[from] = None;
                return Err(self.poisoned().unwrap_or(Error::Closed { party: from }));
            }
            Some(Some(b)) => b,
        };
        let fr = frame::decode_frame(&body).map_err(|e| Error::MalformedFrame {
            party: from,
            cause: e.to_string(),
        })?;
        if fr.kind != FrameKind::Data {
            return Err(Error::UnexpectedMessage {
                party: from,
                cause: format!("expected a data frame, got {:?}", fr.kind),
            });
        }
        let want = self.seq_in[from];
        if fr.seq != want {
            return Err(Error::UnexpectedMessage {
                party: from,
                cause: format!("sequence number {} where {} was due", fr.seq, want),
            });
        }
        self.seq_in[from] += 1;
        if fr.tag != tag {
            return Err(Error::UnexpectedMessage {
                party: from,
                cause: format!("tag {} where tag {} was expected", fr.tag, tag),
            });
        }
        self.stats.bytes_received[from] += (body.len() + frame::LEN_PREFIX) as u64;
        self.stats.msgs_received[from] += 1;
        Ok(body)
    }
}

/// Sets the poison if none is set yet; returns whether this call set it.
pub(crate) fn set_poison(tx: &watch::Sender<Option<Error>>, e: Error) -> bool {
    tx.send_if_modified(|cur| {
        if cur.is_none() {
            *cur = Some(e);
            true
        } else {
            false
        }
    })
}
