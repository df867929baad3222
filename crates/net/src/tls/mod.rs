//! TCP mesh with mutual TLS 1.3 (tokio + rustls, ring provider).
//!
//! For each pair `i < j`, party `j` dials party `i`. Both sides authenticate with certificates from
//! the [`Roster`]: a party's certificate must be the one pinned for it in the config, or, where the
//! config pins none, chain to the config's CA and name `party-<id>.coterie`. Anything else is
//! refused during the handshake or at the `Hello` that follows it (which also checks that both
//! sides hold the same roster). Start-up retries dials with backoff until an overall deadline, so
//! parties may start in any order.

mod identity;
mod link;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ServerConfig};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Mutex, mpsc, watch};
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;
use tokio_rustls::{TlsAcceptor, TlsConnector, TlsStream};

pub use identity::Identity;
use identity::PartyVerifier;
pub(crate) use identity::{provider, tls_err};
use link::{Shared, reader_task};
pub(crate) use link::{Stream, read_frame, write_frame, write_frame_parts};

use crate::config::{Roster, party_name};
use crate::frame::{self, FrameKind, Hello};
use crate::mesh::{Core, MeshOptions, Stats, set_poison};
use crate::{Error, Mesh, PartyId, Result};

/// One party's end of a mutual-TLS mesh.
pub struct TlsMesh {
    core: Core,
    roles: Vec<crate::Role>,
    shared: Arc<Shared>,
    /// The reader task of each peer (`None` at this party's own index).
    readers: Vec<Option<JoinHandle<()>>>,
}

struct Setup {
    id: PartyId,
    n: usize,
    digest: [u8; 32],
    verifier: Arc<PartyVerifier>,
    deadline: Instant,
    max: usize,
}

impl Setup {
    fn hello(&self, to: PartyId) -> Hello {
        Hello {
            from: self.id as u32,
            to: to as u32,
            n: self.n as u32,
            config_digest: self.digest,
        }
    }

    fn check_hello(&self, h: &Hello, from: PartyId) -> std::result::Result<(), String> {
        if h.from as usize != from || h.to as usize != self.id {
            return Err(format!(
                "hello names {}->{}, expected {from}->{}",
                h.from, h.to, self.id
            ));
        }
        if h.n as usize != self.n || h.config_digest != self.digest {
            return Err("peer holds a different party config".into());
        }
        Ok(())
    }

    async fn read_hello(&self, s: &mut Stream, party: PartyId) -> Result<Hello> {
        let body = read_frame(s, 256, party).await?.ok_or(Error::Connect {
            party,
            cause: "closed during hello".into(),
        })?;
        let f = frame::decode_frame(&body).map_err(|e| Error::MalformedFrame {
            party,
            cause: e.to_string(),
        })?;
        if f.kind != FrameKind::Hello {
            return Err(Error::UnexpectedMessage {
                party,
                cause: "expected hello".into(),
            });
        }
        frame::decode_hello(f.payload).map_err(|e| Error::MalformedFrame {
            party,
            cause: e.to_string(),
        })
    }

    async fn write_hello(&self, s: &mut Stream, to: PartyId) -> Result<()> {
        let f = frame::encode_control(FrameKind::Hello, &self.hello(to)).map_err(tls_err)?;
        write_frame(s, &f, to).await
    }

    /// Server side of one incoming connection: TLS, then the peer's hello, then ours.
    async fn accept_one(
        self: Arc<Self>,
        acceptor: TlsAcceptor,
        tcp: TcpStream,
    ) -> Result<(PartyId, Stream)> {
        let peer_addr = tcp.peer_addr().map(|a| a.to_string()).unwrap_or_default();
        let unknown = |cause: String| Error::Connect {
            party: usize::MAX,
            cause: format!("from {peer_addr}: {cause}"),
        };
        let _ = tcp.set_nodelay(true);
        let s = acceptor
            .accept(tcp)
            .await
            .map_err(|e| unknown(e.to_string()))?;
        let mut s = TlsStream::Server(s);
        let h = self.read_hello(&mut s, usize::MAX).await?;
        let from = h.from as usize;
        if from <= self.id || from >= self.n {
            return Err(unknown(format!(
                "party {from} should not dial party {}",
                self.id
            )));
        }
        self.check_hello(&h, from).map_err(unknown)?;
        let TlsStream::Server(conn) = &s else {
            return Err(unknown("not a server stream".into()));
        };
        let ok = conn
            .get_ref()
            .1
            .peer_certificates()
            .and_then(|c| c.first())
            .is_some_and(|c| self.verifier.authorizes(from, c));
        if !ok {
            return Err(unknown(format!(
                "certificate not authorized for party {from}"
            )));
        }
        self.write_hello(&mut s, from).await?;
        Ok((from, s))
    }

    /// Client side: dial party `j` until the deadline.
    async fn dial(
        self: Arc<Self>,
        connector: TlsConnector,
        j: PartyId,
        addr: String,
    ) -> Result<(PartyId, Stream)> {
        let mut backoff = Duration::from_millis(10);
        let mut last = String::from("no attempt");
        while Instant::now() < self.deadline {
            match tokio::time::timeout_at(self.deadline, self.try_dial(&connector, j, &addr)).await
            {
                Ok(Ok(s)) => return Ok((j, s)),
                Ok(Err(e)) => {
                    tracing::debug!(party = self.id, peer = j, error = %e, "dial failed, retrying");
                    last = e.to_string();
                }
                Err(_) => break,
            }
            tokio::time::sleep(
                backoff.min(self.deadline.saturating_duration_since(Instant::now())),
            )
            .await;
            backoff = (backoff * 2).min(Duration::from_millis(500));
        }
        Err(Error::Connect {
            party: j,
            cause: last,
        })
    }

    async fn try_dial(&self, connector: &TlsConnector, j: PartyId, addr: &str) -> Result<Stream> {
        let io = |e: std::io::Error| Error::Connect {
            party: j,
            cause: e.to_string(),
        };
        let tcp = TcpStream::connect(addr).await.map_err(io)?;
        let _ = tcp.set_nodelay(true);
        let name = ServerName::try_from(party_name(j)).map_err(tls_err)?;
        let s = connector.connect(name, tcp).await.map_err(io)?;
        let mut s = TlsStream::Client(s);
        self.write_hello(&mut s, j).await?;
        let h = self.read_hello(&mut s, j).await?;
        self.check_hello(&h, j)
            .map_err(|cause| Error::Connect { party: j, cause })?;
        Ok(s)
    }
}

impl TlsMesh {
    /// Loads the config file, reads this party's key (from `key`, or the config's `key` entry)
    /// and certificate (the config's `cert` entry, or `cert`), and connects.
    ///
    /// # Example
    ///
    /// ```no_run
    /// use std::path::Path;
    /// use coterie_net::{Mesh, MeshOptions, TlsMesh};
    /// # async fn party() -> coterie_net::Result<()> {
    /// // party 1 of the config `coterie certs` wrote
    /// let config = Path::new("certs/party.toml");
    /// let mut mesh = TlsMesh::connect_with_config(config, 1, None, None, MeshOptions::default()).await?;
    /// let all: Vec<u64> = mesh.exchange_all(&42u64).await?;
    /// mesh.close().await
    /// # }
    /// ```
    pub async fn connect_with_config(
        config: &Path,
        id: PartyId,
        cert: Option<&Path>,
        key: Option<&Path>,
        opts: MeshOptions,
    ) -> Result<Self> {
        let roster = Roster::load(config)?;
        let base = config.parent().unwrap_or(Path::new("."));
        let cf = crate::config::ConfigFile::load(config)?;
        let entry = cf
            .parties
            .iter()
            .find(|p| p.id == id)
            .ok_or_else(|| Error::Config(format!("party {id} not in config")))?;
        let cert_path = match (cert, &entry.cert) {
            (Some(c), _) => c.to_path_buf(),
            (None, Some(c)) => base.join(c),
            (None, None) => return Err(Error::Config(format!("no certificate for party {id}"))),
        };
        let key_path = match (key, roster.keys.get(id).cloned().flatten()) {
            (Some(k), _) => k.to_path_buf(),
            (None, Some(k)) => k,
            (None, None) => return Err(Error::Config(format!("no private key for party {id}"))),
        };
        let identity = Identity::from_pem_files(&cert_path, &key_path)?;
        Self::connect(&roster, id, identity, opts).await
    }

    /// Connects party `id` to every other party in `roster`, within `opts.connect_deadline`.
    ///
    /// # Example
    ///
    /// ```no_run
    /// use std::path::Path;
    /// use coterie_net::{Identity, Mesh, MeshOptions, Roster, TlsMesh};
    /// # async fn party() -> coterie_net::Result<()> {
    /// let roster = Roster::load(Path::new("certs/party.toml"))?;
    /// let me = Identity::from_pem_files(Path::new("certs/party0.crt"), Path::new("certs/party0.key"))?;
    /// let mut mesh = TlsMesh::connect(&roster, 0, me, MeshOptions::default()).await?;
    /// mesh.broadcast(&"hello").await?;
    /// mesh.close().await
    /// # }
    /// ```
    pub async fn connect(
        roster: &Roster,
        id: PartyId,
        identity: Identity,
        opts: MeshOptions,
    ) -> Result<Self> {
        let n = roster.n();
        if id >= n {
            return Err(Error::BadParty {
                party: id,
                n,
                me: id,
            });
        }
        let provider = provider();
        let verifier = Arc::new(PartyVerifier::new(roster, &provider)?);
        let server_cfg = ServerConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(tls_err)?
            .with_client_cert_verifier(verifier.clone())
            .with_single_cert(identity.chain.clone(), identity.key.clone_key())
            .map_err(tls_err)?;
        let client_cfg = ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(tls_err)?
            .dangerous()
            .with_custom_certificate_verifier(verifier.clone())
            .with_client_auth_cert(identity.chain, identity.key)
            .map_err(tls_err)?;
        let setup = Arc::new(Setup {
            id,
            n,
            digest: roster.digest(),
            verifier,
            deadline: Instant::now() + opts.connect_deadline,
            max: opts.max_frame,
        });

        let mut streams: Vec<Option<Stream>> = (0..n).map(|_| None).collect();
        let mut dials = JoinSet::new();
        let connector = TlsConnector::from(Arc::new(client_cfg));
        for j in 0..id {
            dials.spawn(
                setup
                    .clone()
                    .dial(connector.clone(), j, roster.addresses[j].clone()),
            );
        }
        let listener = if id + 1 < n {
            Some(
                TcpListener::bind(&roster.listen[id])
                    .await
                    .map_err(|e| Error::Connect {
                        party: id,
                        cause: format!("cannot listen on {}: {e}", roster.listen[id]),
                    })?,
            )
        } else {
            None
        };
        let acceptor = TlsAcceptor::from(Arc::new(server_cfg));
        let mut handshakes = JoinSet::new();
        let mut missing = n - 1;
        let mut dial_err: Option<Error> = None;
        while missing > 0 {
            tokio::select! {
                acc = async { listener.as_ref()?.accept().await.ok() }, if listener.is_some() => {
                    if let Some((tcp, _)) = acc {
                        let s = setup.clone();
                        let a = acceptor.clone();
                        let dl = setup.deadline;
                        handshakes.spawn(async move {
                            tokio::time::timeout(Duration::from_secs(10), s.accept_one(a, tcp))
                                .await
                                .unwrap_or_else(|_| Err(Error::Tls("handshake timed out".into())))
                                .map(|r| (r, dl))
                        });
                    }
                }
                Some(r) = handshakes.join_next(), if !handshakes.is_empty() => {
                    match r {
                        Ok(Ok(((j, s), _))) if streams[j].is_none() => {
                            streams[j] = Some(s);
                            missing -= 1;
                        }
                        Ok(Ok(((j, _), _))) => tracing::warn!(party = id, peer = j, "duplicate connection refused"),
                        Ok(Err(e)) => tracing::warn!(party = id, error = %e, "incoming connection refused"),
                        Err(e) => tracing::warn!(party = id, error = %e, "handshake task failed"),
                    }
                }
                Some(r) = dials.join_next(), if !dials.is_empty() => {
                    match r {
                        Ok(Ok((j, s))) => {
                            streams[j] = Some(s);
                            missing -= 1;
                        }
                        Ok(Err(e)) => { dial_err = Some(e); break; }
                        Err(e) => { dial_err = Some(Error::Tls(e.to_string())); break; }
                    }
                }
                _ = tokio::time::sleep_until(setup.deadline) => break,
            }
        }
        if let Some(e) = dial_err {
            return Err(e);
        }
        if missing > 0 {
            let j = (0..n)
                .find(|&j| j != id && streams[j].is_none())
                .unwrap_or(id);
            return Err(Error::Connect {
                party: j,
                cause: "no authorized connection before the start-up deadline".into(),
            });
        }
        drop(listener);
        tracing::info!(party = id, n, "mesh connected");

        let (poison_tx, poison_rx) = watch::channel(None);
        let mut readers_rd = Vec::new();
        let mut writers = Vec::with_capacity(n);
        for (j, s) in streams.into_iter().enumerate() {
            match s {
                Some(s) => {
                    let (rd, wr) = tokio::io::split(s);
                    readers_rd.push((j, rd));
                    writers.push(Some(Arc::new(Mutex::new(wr))));
                }
                None => writers.push(None),
            }
        }
        let shared = Arc::new(Shared {
            id,
            poison_tx,
            closing: AtomicBool::new(false),
            bye: (0..n).map(|_| AtomicBool::new(false)).collect(),
            writers,
            relay: std::sync::Mutex::new(None),
            siblings: std::sync::Mutex::new(Vec::new()),
        });
        let mut inbox: Vec<Option<mpsc::UnboundedReceiver<Vec<u8>>>> =
            (0..n).map(|_| None).collect();
        let mut readers: Vec<Option<JoinHandle<()>>> = (0..n).map(|_| None).collect();
        for (j, rd) in readers_rd {
            let (tx, rx) = mpsc::unbounded_channel();
            inbox[j] = Some(rx);
            readers[j] = Some(tokio::spawn(reader_task(
                j,
                rd,
                tx,
                shared.clone(),
                setup.max,
            )));
        }
        Ok(TlsMesh {
            core: Core::new(id, n, opts, inbox, poison_rx),
            roles: roster.roles.clone(),
            shared,
            readers,
        })
    }
}

/// How long a failed write waits for the peer's reader to deliver what the peer sent before its
/// connection broke (the reader of a dead connection ends as soon as it runs).
const READER_GRACE: Duration = Duration::from_secs(2);

impl TlsMesh {
    /// Waits, at most [`READER_GRACE`], until the reader of `peer` has ended or the mesh is
    /// poisoned: after a write to `peer` failed, everything `peer` sent before the break is
    /// read (and its abort notice, if it sent one, poisons the mesh) before this party decides
    /// that `peer` was lost.
    async fn await_reader(&self, peer: PartyId) {
        let Some(h) = self.readers.get(peer).and_then(Option::as_ref) else {
            return;
        };
        let mut poison = self.shared.poison_tx.subscribe();
        let _ = tokio::time::timeout(READER_GRACE, async {
            while !h.is_finished() && poison.borrow_and_update().is_none() {
                // the reader poisons (waking this) or ends quietly (seen at the next tick)
                let _ = tokio::time::timeout(Duration::from_millis(5), poison.changed()).await;
            }
        })
        .await;
    }

    /// Connects `lanes − 1` more meshes between the parties of this mesh (lane 0), from the same
    /// config as [`TlsMesh::connect_with_config`], for protocols that keep several batches in
    /// flight (each lane an independent mesh). Every party first states its lane count on this
    /// mesh, and all must agree: a party that sees another count aborts, naming both (an abort
    /// carries the reason to every peer, also to one that has not read the counts yet). Each
    /// further lane is connected only once every party holds the one before it (an exchange on
    /// that lane), so that a dial for lane `l + 1` never reaches a party still listening for
    /// lane `l`. `lanes` of 0 or 1 connects nothing (after the same agreement).
    ///
    /// The lanes (this mesh with them) share the loss of a peer: when one of them sees a peer
    /// lost (its connection ended without a close or broke, or another party relayed that), all
    /// are poisoned with that cause at once, and each tells its own peers. A party that ends its
    /// session on the loss has then named the lost party to everyone, on every lane, before its
    /// own connections close, so that no peer takes that close for the loss. For the same reason
    /// this party's own abort on any lane ([`Mesh::abort`]) is sent on every lane before the call
    /// returns (an abort ends the party's session on all of them); an abort read from a peer is
    /// not spread, as that peer sends it on every lane itself.
    ///
    /// ```no_run
    /// use std::path::Path;
    /// use coterie_net::{MeshOptions, TlsMesh};
    /// # async fn party() -> coterie_net::Result<()> {
    /// let config = Path::new("certs/party.toml");
    /// let opts = MeshOptions::default();
    /// let mut mesh = TlsMesh::connect_with_config(config, 1, None, None, opts.clone()).await?;
    /// let more = mesh.connect_lanes(config, None, None, &opts, 3).await?;
    /// assert_eq!(more.len(), 2);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::Protocol`] when the parties' counts differ; connection errors as
    /// [`TlsMesh::connect_with_config`].
    pub async fn connect_lanes(
        &mut self,
        config: &Path,
        cert: Option<&Path>,
        key: Option<&Path>,
        opts: &MeshOptions,
        lanes: u32,
    ) -> Result<Vec<TlsMesh>> {
        let id = self.core.id;
        let all: Vec<u32> = self.exchange_all(&lanes).await?;
        if let Some((j, l)) = all.iter().enumerate().find(|(_, l)| **l != lanes) {
            let msg = format!(
                "party {j} runs {l} lane(s), party {id} {lanes}: pass the same --lanes to every party"
            );
            self.abort(&msg).await;
            return Err(Error::Protocol(msg));
        }
        let mut out = Vec::new();
        for lane in 1..lanes {
            let mut m = TlsMesh::connect_with_config(config, id, cert, key, opts.clone()).await?;
            let _: Vec<u32> = m.exchange_all(&lane).await?;
            out.push(m);
        }
        TlsMesh::link_lanes(std::iter::once(&*self).chain(&out));
        Ok(out)
    }

    /// Makes `lanes` (meshes between the same parties) share the loss of a peer: a peer lost on
    /// one of them is lost on all at once, and each tells its own peers which party it was, as
    /// one mesh relays a crash. Done by [`TlsMesh::connect_lanes`].
    pub(crate) fn link_lanes<'a>(lanes: impl IntoIterator<Item = &'a TlsMesh>) {
        let shared: Vec<&Arc<Shared>> = lanes.into_iter().map(|m| &m.shared).collect();
        link::link_lanes(&shared);
    }

    /// The role of party `id`, from the roster this mesh was connected with.
    pub fn role(&self, id: PartyId) -> &crate::Role {
        crate::role::role_of(&self.roles, id)
    }

    /// The parties whose role is `role`, in id order.
    pub fn parties_with_role(&self, role: &crate::Role) -> Vec<PartyId> {
        crate::role::parties_with_role(&self.roles, self.core.n, role)
    }
}

impl Mesh for TlsMesh {
    fn id(&self) -> PartyId {
        self.core.id
    }
    fn n(&self) -> usize {
        self.core.n
    }
    fn options(&self) -> &MeshOptions {
        &self.core.opts
    }
    fn set_timeout(&mut self, timeout: Duration) {
        self.core.opts.timeout = timeout;
    }
    fn stats(&self) -> &Stats {
        &self.core.stats
    }

    async fn send_frame<'a>(&'a mut self, to: PartyId, frame: &'a mut [u8]) -> Result<()> {
        self.send_frame_parts(to, frame, &[]).await
    }

    async fn send_frame_parts<'a>(
        &'a mut self,
        to: PartyId,
        head: &'a mut [u8],
        body: &'a [u8],
    ) -> Result<()> {
        if let Err(e) = self.core.stamp_parts(to, head, body.len()) {
            // The mesh is poisoned: as after a failed receive, the relay of the root cause is
            // written before the error is returned (a party that stops on it and exits must not
            // leave its peers to see only its connection end, and take it for a lost peer).
            self.shared.flush_relay().await;
            return Err(e);
        }
        let w = self.shared.writers[to]
            .as_ref()
            .ok_or(Error::Closed { party: to })?;
        let timeout = self.core.opts.timeout;
        let head = &*head;
        let mut write = std::pin::pin!(async move {
            let mut w = w.lock().await;
            write_frame_parts(&mut *w, head, body, to).await
        });
        // Fast path: most writes complete at once and need no timer; only a write that has to wait
        // (a full socket buffer, a busy writer) is put under the deadline.
        let r = match std::future::poll_fn(|cx| std::task::Poll::Ready(write.as_mut().poll(cx)))
            .await
        {
            std::task::Poll::Ready(r) => Ok(r),
            std::task::Poll::Pending => tokio::time::timeout(timeout, write).await,
        };
        match r {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                // A failed write means the peer is gone: poison (which relays the crash to the
                // others, naming that peer) before returning, as a failed read does. But what the
                // peer sent before it went may still wait unread: its abort notice above all (a
                // party that aborts and exits). Its reader delivers that first, so that the
                // abort, not a lost peer, is what this party and the others learn.
                if let Error::Io { cause, .. } = &e {
                    self.await_reader(to).await;
                    self.shared.poison(
                        Error::Disconnected {
                            party: to,
                            cause: cause.clone(),
                        },
                        to,
                    );
                }
                self.shared.flush_relay().await;
                Err(self.core.poisoned().unwrap_or(e))
            }
            Err(_) => Err(Error::Timeout {
                party: to,
                after: timeout,
            }),
        }
    }

    async fn recv_frame(&mut self, from: PartyId, tag: u32, deadline: Instant) -> Result<Vec<u8>> {
        let r = self.core.recv_frame(from, tag, deadline).await;
        if r.is_err() {
            self.shared.flush_relay().await;
        }
        r
    }

    async fn abort(&mut self, reason: &str) -> Error {
        let reason = frame::bounded_reason(reason);
        let e = Error::Aborted {
            party: self.core.id,
            reason: reason.clone(),
        };
        if set_poison(&self.shared.poison_tx, e.clone()) {
            tracing::warn!(party = self.core.id, %e, "abort");
            self.shared
                .send_abort(self.core.id, &reason, false, usize::MAX)
                .await;
            // A party that aborts one lane ends its whole session: its other lanes carry the
            // same reason before it drops them, so no peer reads a bare close there first and
            // takes this party for lost.
            self.shared.abort_siblings(&e, &reason).await;
        }
        self.core.poisoned().unwrap_or(e)
    }

    async fn close(mut self) -> Result<()> {
        self.shared.closing.store(true, Ordering::Release);
        let bye = frame::encode_bye();
        let timeout = self.core.opts.timeout;
        for w in self.shared.writers.iter().flatten() {
            let _ = tokio::time::timeout(timeout, async {
                let mut w = w.lock().await;
                write_frame(&mut *w, &bye, usize::MAX).await
            })
            .await;
        }
        // Wait for every peer's close (its reader ends), bounded by the timeout.
        let deadline = Instant::now() + timeout;
        for h in self.readers.iter_mut().flatten() {
            let _ = tokio::time::timeout_at(deadline, h).await;
        }
        for w in self.shared.writers.iter().flatten() {
            let _ = tokio::time::timeout(Duration::from_millis(500), async {
                w.lock().await.shutdown().await
            })
            .await;
        }
        match self.core.poisoned() {
            Some(e @ Error::Aborted { .. }) => Err(e),
            _ => Ok(()),
        }
    }
}

impl Drop for TlsMesh {
    fn drop(&mut self) {
        for h in self.readers.iter().flatten() {
            h.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::certs::generate_pki;
    use crate::local::loopback_roster;

    /// A party that learns of an abort through its reader and then fails a send has written
    /// the relay of that abort before the send returns (it may exit at once: its peers must
    /// learn the abort from it, not only see its connection end).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_send_on_a_poisoned_mesh_returns_after_the_relay_is_written() {
        let pki = generate_pki(3).unwrap();
        let roster = loopback_roster(&pki, true).unwrap();
        let opts = MeshOptions {
            timeout: Duration::from_secs(20),
            ..MeshOptions::default()
        };
        let hs: Vec<_> = (0..3)
            .map(|i| {
                let (r, o) = (roster.clone(), opts.clone());
                let id =
                    crate::Identity::from_pem(&pki.parties[i].cert_pem, &pki.parties[i].key_pem)
                        .unwrap();
                tokio::spawn(async move { TlsMesh::connect(&r, i, id, o).await.unwrap() })
            })
            .collect();
        let mut ms = Vec::new();
        for h in hs {
            ms.push(h.await.unwrap());
        }
        let mut m2 = ms.pop().unwrap();
        let _m1 = ms.pop().unwrap();
        let mut m0 = ms.pop().unwrap();
        m2.abort("bad input").await;
        let t = Instant::now();
        while m0.core.poisoned().is_none() {
            assert!(t.elapsed() < Duration::from_secs(10), "abort never arrived");
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let want = Error::Aborted {
            party: 2,
            reason: "bad input".into(),
        };
        assert_eq!(m0.send_tagged(1, 1, &5u32).await.unwrap_err(), want);
        let relay = m0.shared.relay.lock().unwrap().take();
        assert!(relay.is_none(), "the relay was still pending");
    }
}
