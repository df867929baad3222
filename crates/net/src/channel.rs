//! Client↔server channels over the same mutual TLS as the mesh.
//!
//! Not every system is a mesh of equals: servers may never talk to each other, each accepting
//! clients, and a client may talk to one or several servers. A [`ChannelServer`] listens and
//! accepts [`Channel`]s, one per client; a client opens one with [`connect_channel`] (or
//! [`connect_channel_to_party`] / [`connect_channels`] for servers listed in a [`Roster`]). Both
//! sides authenticate with certificates from the same CA: a server presents its party
//! certificate (`party-<id>.coterie`), a client one made by [`crate::certs::issue_client_cert`]
//! (`client-<name>.coterie`); the server learns the client's name from its certificate
//! ([`Channel::peer_name`]) and decides what that client may do.
//!
//! A channel carries typed, tagged messages in the mesh's frames ([`crate::frame`]): every frame
//! is bounded by [`MeshOptions::max_frame`], numbered per direction and checked on receipt, every
//! receive and send has the [`MeshOptions::timeout`] deadline, and [`Channel::close`] tells the
//! peer the session ended normally. A channel can be [split](Channel::split) so that one task
//! reads requests while others write responses.
//!
//! Errors name the peer by [`Channel::peer_id`]: on a client, the server's party id; on a
//! server, the connection's number in accept order (clients are not parties of the roster).
//!
//! ```no_run
//! use coterie_net::channel::{ChannelServer, connect_channel_to_party};
//! use coterie_net::{Identity, MeshOptions, Roster};
//! # async fn demo(roster: Roster, server_id: Identity, client_id: Identity) -> coterie_net::Result<()> {
//! // server: party 0 of the roster, on its listen address
//! let server = ChannelServer::bind_party(&roster, 0, server_id, MeshOptions::default()).await?;
//! tokio::spawn(async move {
//!     while let Ok(mut ch) = server.accept().await {
//!         tokio::spawn(async move {
//!             let x: u64 = ch.recv(1).await?;
//!             ch.send(2, &(x + 1)).await?;
//!             ch.close().await
//!         });
//!     }
//! });
//! // client
//! let mut ch = connect_channel_to_party(&roster, 0, client_id, MeshOptions::default()).await?;
//! ch.send(1, &41u64).await?;
//! assert_eq!(ch.recv::<u64>(2).await?, 42);
//! ch.close().await
//! # }
//! ```

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, RootCertStore, ServerConfig};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::io::{AsyncWriteExt, ReadHalf, WriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::{TlsAcceptor, TlsConnector, TlsStream};

use crate::config::{Roster, parse_party_name, party_name};
use crate::frame::{self, FrameKind, HEADER_LEN};
use crate::tls::{Stream, provider, read_frame, tls_err, write_frame_parts};
use crate::{Error, Identity, MeshOptions, PartyId, Result};

fn roots(ca: CertificateDer<'static>) -> Result<Arc<RootCertStore>> {
    let mut roots = RootCertStore::empty();
    roots.add(ca).map_err(tls_err)?;
    Ok(Arc::new(roots))
}

fn roster_ca(roster: &Roster) -> Result<CertificateDer<'static>> {
    roster.ca.clone().ok_or_else(|| {
        Error::Config("the config names no CA (channel peers are authenticated by the CA)".into())
    })
}

/// The first DNS name of a certificate.
fn cert_name(cert: &CertificateDer<'_>) -> Option<String> {
    let ee = webpki::EndEntityCert::try_from(cert).ok()?;
    ee.valid_dns_names().next().map(str::to_string)
}

/// A listener that accepts clients over mutual TLS; see the [module docs](self).
pub struct ChannelServer {
    listener: TcpListener,
    acceptor: TlsAcceptor,
    opts: MeshOptions,
    accepted: AtomicUsize,
}

impl ChannelServer {
    /// Listens on `addr` as `identity`, accepting clients whose certificates chain to `ca`.
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_net::certs::generate_pki;
    /// use coterie_net::config::party_name;
    /// use coterie_net::{ChannelServer, Identity, MeshOptions, connect_channel};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let pki = generate_pki(1).unwrap();
    /// let id = |p: &coterie_net::certs::PemPair| Identity::from_pem(&p.cert_pem, &p.key_pem).unwrap();
    /// let ca = id(&pki.ca).chain.swap_remove(0);
    /// let server = ChannelServer::bind("127.0.0.1:0", id(&pki.parties[0]), ca.clone(), MeshOptions::default())
    ///     .await
    ///     .unwrap();
    /// let addr = server.local_addr().unwrap().to_string();
    /// let client = id(&pki.issue_client("alice").unwrap());
    /// let c = tokio::spawn(async move {
    ///     let mut ch = connect_channel(&addr, &party_name(0), client, ca, MeshOptions::default()).await?;
    ///     ch.send(1, "ping").await?;
    ///     let pong: String = ch.recv(2).await?;
    ///     ch.close().await?;
    ///     Ok::<_, coterie_net::Error>(pong)
    /// });
    /// let mut ch = server.accept().await.unwrap();
    /// assert_eq!(ch.peer_name(), "client-alice.coterie");
    /// let ping: String = ch.recv(1).await.unwrap();
    /// ch.send(2, &format!("{ping} -> pong")).await.unwrap();
    /// assert_eq!(c.await.unwrap().unwrap(), "ping -> pong");
    /// # });
    /// ```
    pub async fn bind(
        addr: &str,
        identity: Identity,
        ca: CertificateDer<'static>,
        opts: MeshOptions,
    ) -> Result<Self> {
        let provider = provider();
        let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
            roots(ca)?,
            provider.clone(),
        )
        .build()
        .map_err(tls_err)?;
        let cfg = ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(tls_err)?
            .with_client_cert_verifier(verifier)
            .with_single_cert(identity.chain, identity.key)
            .map_err(tls_err)?;
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|e| Error::Config(format!("cannot listen on {addr}: {e}")))?;
        Ok(Self {
            listener,
            acceptor: TlsAcceptor::from(Arc::new(cfg)),
            opts,
            accepted: AtomicUsize::new(0),
        })
    }

    /// Listens as party `id` of `roster` (on its listen address), with the roster's CA.
    pub async fn bind_party(
        roster: &Roster,
        id: PartyId,
        identity: Identity,
        opts: MeshOptions,
    ) -> Result<Self> {
        let addr = roster.listen.get(id).ok_or(Error::BadParty {
            party: id,
            n: roster.n(),
            me: id,
        })?;
        Self::bind(addr, identity, roster_ca(roster)?, opts).await
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> Result<SocketAddr> {
        self.listener
            .local_addr()
            .map_err(|e| Error::Config(e.to_string()))
    }

    /// Accepts the next client: TCP, then the TLS handshake (bounded by the timeout). A client
    /// that fails to authenticate is an error for this call only; keep accepting.
    pub async fn accept(&self) -> Result<Channel> {
        let (tcp, addr) = self
            .listener
            .accept()
            .await
            .map_err(|e| Error::Tls(format!("accept: {e}")))?;
        let index = self.accepted.fetch_add(1, Ordering::Relaxed);
        let _ = tcp.set_nodelay(true);
        let refused = |cause: String| Error::Connect {
            party: index,
            cause: format!("client at {addr}: {cause}"),
        };
        let s = tokio::time::timeout(self.opts.timeout, self.acceptor.accept(tcp))
            .await
            .map_err(|_| refused("TLS handshake timed out".into()))?
            .map_err(|e| refused(e.to_string()))?;
        let name = s
            .get_ref()
            .1
            .peer_certificates()
            .and_then(|c| c.first())
            .and_then(cert_name)
            .ok_or_else(|| refused("client certificate names no DNS name".into()))?;
        tracing::debug!(client = %name, %addr, "channel accepted");
        Ok(Channel::new(
            TlsStream::Server(s),
            index,
            name,
            self.opts.clone(),
        ))
    }
}

/// Connects to the server at `addr` as `identity`; the server's certificate must chain to `ca`
/// and be valid for `server_name` (e.g. [`party_name`]`(0)`).
pub async fn connect_channel(
    addr: &str,
    server_name: &str,
    identity: Identity,
    ca: CertificateDer<'static>,
    opts: MeshOptions,
) -> Result<Channel> {
    let peer = parse_party_name(server_name).unwrap_or(0);
    let cfg = ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(tls_err)?
        .with_root_certificates(roots(ca)?)
        .with_client_auth_cert(identity.chain, identity.key)
        .map_err(tls_err)?;
    let name = ServerName::try_from(server_name.to_string()).map_err(tls_err)?;
    let connect = async {
        let tcp = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
        let _ = tcp.set_nodelay(true);
        TlsConnector::from(Arc::new(cfg))
            .connect(name, tcp)
            .await
            .map_err(|e| e.to_string())
    };
    let s = tokio::time::timeout(opts.connect_deadline, connect)
        .await
        .map_err(|_| "timed out".to_string())
        .and_then(|r| r)
        .map_err(|cause| Error::Connect {
            party: peer,
            cause: format!("{server_name} at {addr}: {cause}"),
        })?;
    Ok(Channel::new(
        TlsStream::Client(s),
        peer,
        server_name.to_string(),
        opts,
    ))
}

/// Connects to party `server` of `roster` (its address, its party name, the roster's CA).
pub async fn connect_channel_to_party(
    roster: &Roster,
    server: PartyId,
    identity: Identity,
    opts: MeshOptions,
) -> Result<Channel> {
    let addr = roster.addresses.get(server).ok_or(Error::BadParty {
        party: server,
        n: roster.n(),
        me: usize::MAX,
    })?;
    connect_channel(
        addr,
        &party_name(server),
        identity,
        roster_ca(roster)?,
        opts,
    )
    .await
}

/// Connects to each of `servers` in `roster` at once; the channels come back in the order of
/// `servers`. Fails if any connection fails.
pub async fn connect_channels(
    roster: &Roster,
    servers: &[PartyId],
    identity: Identity,
    opts: MeshOptions,
) -> Result<Vec<Channel>> {
    let mut set = tokio::task::JoinSet::new();
    for (k, &s) in servers.iter().enumerate() {
        let (r, id, o) = (roster.clone(), identity.clone(), opts.clone());
        set.spawn(async move { (k, connect_channel_to_party(&r, s, id, o).await) });
    }
    let mut out: Vec<Option<Channel>> = (0..servers.len()).map(|_| None).collect();
    while let Some(r) = set.join_next().await {
        let (k, ch) = r.map_err(|e| Error::Protocol(format!("connect task: {e}")))?;
        out[k] = Some(ch?);
    }
    out.into_iter()
        .map(|c| c.ok_or_else(|| Error::Protocol("a connection went missing".into())))
        .collect()
}

/// An authenticated connection between a client and a server; see the [module docs](self).
pub struct Channel {
    rx: ChannelReceiver,
    tx: ChannelSender,
}

/// The receiving half of a [`Channel`].
pub struct ChannelReceiver {
    rd: ReadHalf<Stream>,
    peer: PartyId,
    name: Arc<str>,
    seq: u64,
    opts: MeshOptions,
    /// Set once the stream can no longer be read at a frame boundary (a timeout or an error in
    /// the middle of a frame); every later receive returns it.
    broken: Option<Error>,
}

/// The sending half of a [`Channel`].
pub struct ChannelSender {
    wr: WriteHalf<Stream>,
    peer: PartyId,
    name: Arc<str>,
    seq: u64,
    opts: MeshOptions,
    broken: Option<Error>,
}

impl Channel {
    fn new(s: Stream, peer: PartyId, name: String, opts: MeshOptions) -> Self {
        let (rd, wr) = tokio::io::split(s);
        let name: Arc<str> = name.into();
        Self {
            rx: ChannelReceiver {
                rd,
                peer,
                name: name.clone(),
                seq: 0,
                opts: opts.clone(),
                broken: None,
            },
            tx: ChannelSender {
                wr,
                peer,
                name,
                seq: 0,
                opts,
                broken: None,
            },
        }
    }

    /// The DNS name in the peer's certificate (`client-<name>.coterie` on a server; the server
    /// name that was checked, on a client).
    pub fn peer_name(&self) -> &str {
        &self.rx.name
    }

    /// The id errors name the peer by: the server's party id on a client, the connection's
    /// number in accept order on a server.
    pub fn peer_id(&self) -> PartyId {
        self.rx.peer
    }

    /// Sends `msg` with a protocol tag.
    pub async fn send<T: Serialize + ?Sized>(&mut self, tag: u32, msg: &T) -> Result<()> {
        self.tx.send(tag, msg).await
    }

    /// Sends a byte string without copying it into a frame (received as a [`crate::Blob`] or by
    /// [`Channel::recv_bytes`]).
    pub async fn send_bytes(&mut self, tag: u32, bytes: &[u8]) -> Result<()> {
        self.tx.send_bytes(tag, bytes).await
    }

    /// Receives a `T`, which must carry `tag`.
    pub async fn recv<T: DeserializeOwned>(&mut self, tag: u32) -> Result<T> {
        self.rx.recv(tag).await
    }

    /// Receives a byte string sent with [`Channel::send_bytes`] (or as a [`crate::Blob`]).
    pub async fn recv_bytes(&mut self, tag: u32) -> Result<Vec<u8>> {
        self.rx.recv_bytes(tag).await
    }

    /// Splits the channel so that receiving and sending can run in different tasks.
    pub fn split(self) -> (ChannelReceiver, ChannelSender) {
        (self.rx, self.tx)
    }

    /// Joins the halves of [`Channel::split`] again.
    pub fn unsplit(rx: ChannelReceiver, tx: ChannelSender) -> Self {
        Self { rx, tx }
    }

    /// Ends the session normally: tells the peer (which then sees [`Error::Closed`] instead of a
    /// broken connection) and shuts the connection down.
    pub async fn close(self) -> Result<()> {
        self.tx.close().await
    }
}

impl ChannelReceiver {
    /// See [`Channel::peer_name`].
    pub fn peer_name(&self) -> &str {
        &self.name
    }

    /// Receives the next frame body, checks its kind, sequence number and tag.
    async fn recv_body(&mut self, tag: u32) -> Result<Vec<u8>> {
        if let Some(e) = &self.broken {
            return Err(e.clone());
        }
        let party = self.peer;
        let timeout = self.opts.timeout;
        let r = match tokio::time::timeout(
            timeout,
            read_frame(&mut self.rd, self.opts.max_frame, party),
        )
        .await
        {
            Err(_) => Err(Error::Timeout {
                party,
                after: timeout,
            }),
            Ok(Ok(None)) => Err(Error::Disconnected {
                party,
                cause: format!("{} ended the connection without a close", self.name),
            }),
            Ok(r) => r.map(|b| b.unwrap_or_default()),
        };
        let body = match r {
            Ok(b) => b,
            Err(e) => {
                self.broken = Some(e.clone());
                return Err(e);
            }
        };
        let fail = |cause: String| Error::UnexpectedMessage { party, cause };
        let fr = frame::decode_frame(&body).map_err(|e| Error::MalformedFrame {
            party,
            cause: e.to_string(),
        });
        let fr = match fr {
            Ok(f) => f,
            Err(e) => {
                self.broken = Some(e.clone());
                return Err(e);
            }
        };
        match fr.kind {
            FrameKind::Data => {}
            FrameKind::Bye => {
                let e = Error::Closed { party };
                self.broken = Some(e.clone());
                return Err(e);
            }
            k => {
                let e = fail(format!("a {k:?} frame on a channel"));
                self.broken = Some(e.clone());
                return Err(e);
            }
        }
        if fr.seq != self.seq {
            let e = fail(format!(
                "sequence number {} where {} was due",
                fr.seq, self.seq
            ));
            self.broken = Some(e.clone());
            return Err(e);
        }
        self.seq += 1;
        if fr.tag != tag {
            return Err(fail(format!("tag {} where tag {tag} was expected", fr.tag)));
        }
        Ok(body)
    }

    /// See [`Channel::recv`].
    pub async fn recv<T: DeserializeOwned>(&mut self, tag: u32) -> Result<T> {
        let body = self.recv_body(tag).await?;
        frame::decode_payload(&body[HEADER_LEN..]).map_err(|cause| Error::Decode {
            party: self.peer,
            cause,
        })
    }

    /// See [`Channel::recv_bytes`].
    pub async fn recv_bytes(&mut self, tag: u32) -> Result<Vec<u8>> {
        let body = self.recv_body(tag).await?;
        frame::into_bytes_payload(body).map_err(|e| Error::Decode {
            party: self.peer,
            cause: e.to_string(),
        })
    }
}

impl ChannelSender {
    /// See [`Channel::peer_name`].
    pub fn peer_name(&self) -> &str {
        &self.name
    }

    async fn write(&mut self, head: &mut [u8], body: &[u8]) -> Result<()> {
        if let Some(e) = &self.broken {
            return Err(e.clone());
        }
        frame::set_seq(head, self.seq);
        let party = self.peer;
        let timeout = self.opts.timeout;
        let r = tokio::time::timeout(timeout, write_frame_parts(&mut self.wr, head, body, party))
            .await
            .unwrap_or(Err(Error::Timeout {
                party,
                after: timeout,
            }));
        match r {
            Ok(()) => {
                self.seq += 1;
                Ok(())
            }
            Err(e) => {
                self.broken = Some(e.clone());
                Err(e)
            }
        }
    }

    /// See [`Channel::send`].
    pub async fn send<T: Serialize + ?Sized>(&mut self, tag: u32, msg: &T) -> Result<()> {
        let mut f = frame::encode_data(tag, msg, self.opts.max_frame)?;
        self.write(&mut f, &[]).await
    }

    /// See [`Channel::send_bytes`].
    pub async fn send_bytes(&mut self, tag: u32, bytes: &[u8]) -> Result<()> {
        let mut head = frame::start_bytes_frame(tag, bytes.len(), self.opts.max_frame)
            .map_err(|e| Error::Encode(e.to_string()))?;
        self.write(&mut head, bytes).await
    }

    /// Ends the session normally (see [`Channel::close`]).
    pub async fn close(mut self) -> Result<()> {
        let party = self.peer;
        let timeout = self.opts.timeout;
        let bye = frame::encode_bye();
        let r = tokio::time::timeout(timeout, async {
            write_frame_parts(&mut self.wr, &bye, &[], party).await?;
            self.wr.shutdown().await.map_err(|e| Error::Io {
                party,
                cause: e.to_string(),
            })
        })
        .await;
        match r {
            Ok(r) => r,
            Err(_) => Err(Error::Timeout {
                party,
                after: timeout,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::certs::{Pki, generate_pki};
    use std::time::Duration;

    fn ca(pki: &Pki) -> CertificateDer<'static> {
        Identity::from_pem(&pki.ca.cert_pem, &pki.ca.key_pem)
            .unwrap()
            .chain
            .swap_remove(0)
    }

    async fn pair(server_opts: MeshOptions) -> (Channel, Channel) {
        let pki = generate_pki(1).unwrap();
        let sid = Identity::from_pem(&pki.parties[0].cert_pem, &pki.parties[0].key_pem).unwrap();
        let server = ChannelServer::bind("127.0.0.1:0", sid, ca(&pki), server_opts)
            .await
            .unwrap();
        let addr = server.local_addr().unwrap().to_string();
        let c = pki.issue_client("bob").unwrap();
        let cid = Identity::from_pem(&c.cert_pem, &c.key_pem).unwrap();
        let opts = MeshOptions {
            max_frame: 1 << 24,
            ..MeshOptions::default()
        };
        let client = tokio::spawn(async move {
            connect_channel(&addr, &party_name(0), cid, ca(&pki), opts).await
        });
        let s = server.accept().await.unwrap();
        (s, client.await.unwrap().unwrap())
    }

    #[tokio::test]
    async fn oversized_and_malformed_frames_are_errors() {
        let small = MeshOptions {
            max_frame: 1000,
            timeout: Duration::from_secs(5),
            ..MeshOptions::default()
        };
        // oversized: the client (larger bound) sends 2000 bytes, the server refuses the frame
        let (mut s, mut c) = pair(small.clone()).await;
        c.send_bytes(1, &[7u8; 2000]).await.unwrap();
        let e = s.recv_bytes(1).await.unwrap_err();
        assert!(matches!(e, Error::FrameTooLarge { max: 1000, .. }), "{e}");
        // and the server's own sends are bounded too
        assert!(matches!(
            s.send_bytes(1, &[0; 2000]).await,
            Err(Error::Encode(_))
        ));

        // malformed: a bad wire version, then (on a new channel) a truncated header
        let (mut s, mut c) = pair(small.clone()).await;
        let mut f = frame::encode_data(1, &5u32, 1000).unwrap();
        f[frame::LEN_PREFIX] = 99;
        c.tx.wr.write_all(&f).await.unwrap();
        c.tx.wr.flush().await.unwrap();
        let e = s.recv::<u32>(1).await.unwrap_err();
        assert!(matches!(e, Error::MalformedFrame { .. }), "{e}");
        assert!(
            s.recv::<u32>(1).await.is_err(),
            "a broken channel stays broken"
        );

        let (mut s, mut c) = pair(small.clone()).await;
        c.tx.wr.write_all(&[3, 0, 0, 0, 1, 0, 0]).await.unwrap();
        c.tx.wr.flush().await.unwrap();
        let e = s.recv::<u32>(1).await.unwrap_err();
        assert!(matches!(e, Error::MalformedFrame { .. }), "{e}");

        // a payload of the wrong type, a wrong tag and a frame cut short by a close
        let (mut s, mut c) = pair(small).await;
        c.send(1, &1u8).await.unwrap();
        let e = s.recv::<(u64, u64)>(1).await.unwrap_err();
        assert!(matches!(e, Error::Decode { .. }), "{e}");
        c.send(2, &1u8).await.unwrap();
        let e = s.recv::<u8>(3).await.unwrap_err();
        assert!(matches!(e, Error::UnexpectedMessage { .. }), "{e}");
        let f = frame::encode_data(1, &vec![1u8; 100], 1000).unwrap();
        c.tx.wr.write_all(&f[..50]).await.unwrap();
        c.tx.wr.shutdown().await.unwrap();
        let e = s.recv::<Vec<u8>>(1).await.unwrap_err();
        assert!(matches!(e, Error::MalformedFrame { .. }), "{e}");

        // a frame cut short by a connection that breaks (no close: a peer killed while it
        // wrote) is a lost connection, not a malformed frame
        let (mut s, mut c) = pair(MeshOptions::default()).await;
        c.tx.wr.write_all(&f[..50]).await.unwrap();
        c.tx.wr.flush().await.unwrap();
        drop(c);
        let e = s.recv::<Vec<u8>>(1).await.unwrap_err();
        assert!(matches!(e, Error::Io { .. }), "{e}");
    }

    #[tokio::test]
    async fn close_is_seen_and_silence_times_out() {
        let opts = MeshOptions {
            timeout: Duration::from_millis(300),
            ..MeshOptions::default()
        };
        let (mut s, c) = pair(opts).await;
        assert!(matches!(s.recv::<u8>(0).await, Err(Error::Timeout { .. })));
        let (mut s, c2) = pair(MeshOptions::default()).await;
        c2.close().await.unwrap();
        assert!(matches!(s.recv::<u8>(0).await, Err(Error::Closed { .. })));
        drop(c);
    }
}
