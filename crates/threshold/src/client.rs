//! The decryption service's client protocol: clients send CTLW ciphertexts to node 0 over
//! **mutual TLS** and get one decrypted message (or an error) back per ciphertext.
//!
//! * Node 0 ([`crate::node::run_node`]) serves clients with [`serve_clients`] on a TLS acceptor
//!   made by [`server_tls`] from the party config (its party certificate and key; clients must
//!   present a certificate issued by the config's CA). Every request becomes a
//!   [`crate::service::Request`] for the coordinator; requests that arrive together are
//!   decrypted in one batch, and a malformed ciphertext is refused by node 0 before any gate is
//!   spent.
//! * Clients call [`client_decrypt`] (files) or [`decrypt_over`] (bytes on any stream): node 0's
//!   certificate is checked against the config's CA and the name `party-0.coterie`.
//! * [`encrypt_file`] makes a ciphertext file under the service's public key.
//!
//! Wire format (version [`CLIENT_WIRE_VERSION`]): length-prefixed (u32 LE) postcard frames of at
//! most [`MAX_CLIENT_FRAME`] bytes; request [`ClientRequest`] `{version, id, ct}` (CTLW bytes),
//! response [`ClientResponse`] `{version, id, result}`. Responses may come back in any order;
//! `id` matches them to requests.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

use crate::keys::PublicKey;
use crate::service::Request;
use crate::{Error, LweCiphertext, Result};

/// Wire format version of the client protocol.
pub const CLIENT_WIRE_VERSION: u8 = 1;
/// Largest frame (request or response) either side accepts, in bytes.
pub const MAX_CLIENT_FRAME: usize = 1 << 20;
/// Largest ciphertext file [`client_decrypt`] and public key file [`encrypt_file`] read.
const MAX_FILE: u64 = 64 << 20;

/// One ciphertext to decrypt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientRequest {
    /// [`CLIENT_WIRE_VERSION`].
    pub version: u8,
    /// Chosen by the client; echoed in the response.
    pub id: u64,
    /// The ciphertext, CTLW-encoded ([`LweCiphertext::to_bytes`]).
    pub ct: Vec<u8>,
}

/// The answer to one [`ClientRequest`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientResponse {
    /// [`CLIENT_WIRE_VERSION`].
    pub version: u8,
    /// The request's id.
    pub id: u64,
    /// The decrypted message, or why the node refused or failed it.
    pub result: std::result::Result<u64, String>,
}

fn client_err(what: impl std::fmt::Display) -> Error {
    Error::Client(what.to_string())
}

fn tls_provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn ca_roots(roster: &coterie_net::Roster) -> Result<Arc<rustls::RootCertStore>> {
    let ca = roster.ca.clone().ok_or_else(|| {
        client_err("the config names no CA (clients are authenticated by the CA)")
    })?;
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca).map_err(client_err)?;
    Ok(Arc::new(roots))
}

/// The TLS acceptor of node 0's client listener: node 0's party certificate and key from the
/// party `config`, and client certificates verified against the config's CA.
///
/// # Example
///
/// ```no_run
/// let acceptor = coterie_threshold::client::server_tls("certs/party.toml".as_ref())?;
/// # Ok::<(), coterie_threshold::Error>(())
/// ```
pub fn server_tls(config: &Path) -> Result<tokio_rustls::TlsAcceptor> {
    let roster = coterie_net::Roster::load(config).map_err(client_err)?;
    let roots = ca_roots(&roster)?;
    let provider = tls_provider();
    let verifier =
        rustls::server::WebPkiClientVerifier::builder_with_provider(roots, provider.clone())
            .build()
            .map_err(client_err)?;
    let cert = roster.certs[0]
        .clone()
        .ok_or_else(|| client_err("no certificate for party 0 in the config"))?;
    let key_path = roster.keys[0]
        .clone()
        .ok_or_else(|| client_err("no key for party 0 in the config"))?;
    let key = coterie_net::config::load_key(&key_path).map_err(client_err)?;
    let cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(client_err)?
        .with_client_cert_verifier(verifier)
        .with_single_cert(vec![cert], key)
        .map_err(client_err)?;
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(cfg)))
}

/// Reads one frame; `Ok(None)` at a clean end of stream.
async fn read_msg<R: AsyncRead + Unpin, T: serde::de::DeserializeOwned>(
    r: &mut R,
) -> Result<Option<T>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(client_err(e)),
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_CLIENT_FRAME {
        return Err(client_err(format!("frame of {len} bytes refused")));
    }
    let mut buf = vec![0u8; len];
    r.read_exact(&mut buf).await.map_err(client_err)?;
    postcard::from_bytes(&buf).map(Some).map_err(client_err)
}

async fn write_msg<W: AsyncWrite + Unpin, T: Serialize>(w: &mut W, m: &T) -> Result<()> {
    let body = postcard::to_allocvec(m).map_err(client_err)?;
    if body.len() > MAX_CLIENT_FRAME {
        return Err(client_err(format!(
            "frame of {} bytes is over the limit",
            body.len()
        )));
    }
    w.write_all(&(body.len() as u32).to_le_bytes())
        .await
        .map_err(client_err)?;
    w.write_all(&body).await.map_err(client_err)?;
    w.flush().await.map_err(client_err)
}

/// Node 0's client listener: accepts TLS clients on `listener` (through `acceptor`, see
/// [`server_tls`]) until the listener fails or the task is aborted, and turns every request into
/// a [`Request`] on `tx` (the coordinator's queue, [`crate::service::Node::run_coordinator`]).
/// Each accepted request sets `last` to now (for an idle timeout). Requests of an unsupported
/// version are answered with an error and never reach `tx`.
///
/// # Example
///
/// ```no_run
/// use std::sync::{Arc, Mutex};
/// use std::time::Instant;
/// # async fn f() -> coterie_threshold::Result<()> {
/// let acceptor = coterie_threshold::client::server_tls("certs/party.toml".as_ref())?;
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:47900").await.unwrap();
/// let (tx, rx) = tokio::sync::mpsc::channel(4096);
/// let last = Arc::new(Mutex::new(Instant::now()));
/// tokio::spawn(coterie_threshold::client::serve_clients(listener, acceptor, tx, last));
/// // ... node.run_coordinator(&mut mesh, rx, &mut events)
/// # drop(rx); Ok(()) }
/// ```
pub async fn serve_clients(
    listener: tokio::net::TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    tx: mpsc::Sender<Request>,
    last: Arc<std::sync::Mutex<std::time::Instant>>,
) {
    while let Ok((tcp, peer)) = listener.accept().await {
        let acceptor = acceptor.clone();
        let tx = tx.clone();
        let last = last.clone();
        tokio::spawn(async move {
            let _ = tcp.set_nodelay(true);
            let tls = match acceptor.accept(tcp).await {
                Ok(t) => t,
                Err(e) => {
                    tracing::warn!(%peer, error = %e, "client refused");
                    return;
                }
            };
            let (mut rd, mut wr) = tokio::io::split(tls);
            let (rtx, mut rrx) = mpsc::channel::<ClientResponse>(1024);
            let writer = tokio::spawn(async move {
                while let Some(r) = rrx.recv().await {
                    if write_msg(&mut wr, &r).await.is_err() {
                        return;
                    }
                }
                let _ = wr.shutdown().await;
            });
            while let Ok(Some(req)) = read_msg::<_, ClientRequest>(&mut rd).await {
                if let Ok(mut t) = last.lock() {
                    *t = std::time::Instant::now();
                }
                let rtx = rtx.clone();
                if req.version != CLIENT_WIRE_VERSION {
                    let _ = rtx
                        .send(ClientResponse {
                            version: CLIENT_WIRE_VERSION,
                            id: req.id,
                            result: Err("unsupported client protocol version".into()),
                        })
                        .await;
                    continue;
                }
                let (otx, orx) = oneshot::channel();
                if tx
                    .send(Request {
                        ct: req.ct,
                        reply: otx,
                    })
                    .await
                    .is_err()
                {
                    break;
                }
                tokio::spawn(async move {
                    let result = orx.await.unwrap_or_else(|_| Err("node stopped".into()));
                    let _ = rtx
                        .send(ClientResponse {
                            version: CLIENT_WIRE_VERSION,
                            id: req.id,
                            result,
                        })
                        .await;
                });
            }
            drop(rtx);
            let _ = writer.await;
        });
    }
}

/// Connects to node 0 at `node` over mutual TLS: client certificate `cert`/`key` (PEM, issued by
/// the config's CA), node 0's certificate checked against the CA of the party `config` and the
/// name `party-0.coterie`.
///
/// # Example
///
/// ```no_run
/// # async fn f() -> coterie_threshold::Result<()> {
/// use coterie_threshold::client::{connect, decrypt_over};
/// let tls = connect(
///     "certs/party.toml".as_ref(),
///     "127.0.0.1:47900",
///     "certs/client-alice.crt".as_ref(),
///     "certs/client-alice.key".as_ref(),
/// )
/// .await?;
/// let results = decrypt_over(tls, vec![std::fs::read("ct.bin").unwrap()]).await?;
/// # Ok(()) }
/// ```
pub async fn connect(
    config: &Path,
    node: &str,
    cert: &Path,
    key: &Path,
) -> Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>> {
    let roster = coterie_net::Roster::load(config).map_err(client_err)?;
    let roots = ca_roots(&roster)?;
    let chain = coterie_net::config::load_cert_chain(cert).map_err(client_err)?;
    let k = coterie_net::config::load_key(key).map_err(client_err)?;
    let cfg = rustls::ClientConfig::builder_with_provider(tls_provider())
        .with_safe_default_protocol_versions()
        .map_err(client_err)?
        .with_root_certificates(roots)
        .with_client_auth_cert(chain, k)
        .map_err(client_err)?;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(cfg));
    let tcp = tokio::net::TcpStream::connect(node)
        .await
        .map_err(|e| client_err(format!("node 0 at {node}: {e}")))?;
    let _ = tcp.set_nodelay(true);
    let name = rustls::pki_types::ServerName::try_from(coterie_net::config::party_name(0))
        .map_err(client_err)?;
    connector
        .connect(name, tcp)
        .await
        .map_err(|e| client_err(format!("TLS with node 0: {e}")))
}

/// Sends the CTLW ciphertexts `cts` on `stream` (a connection to node 0, see [`connect`]) and
/// returns one result per ciphertext, in order: the message, or the node's reason for refusing
/// or failing it. Errors (typed) when the connection fails or node 0 answers out of protocol.
///
/// # Example
///
/// See [`connect`].
pub async fn decrypt_over<S>(
    stream: S,
    cts: Vec<Vec<u8>>,
) -> Result<Vec<std::result::Result<u64, String>>>
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let (mut rd, mut wr) = tokio::io::split(stream);
    let count = cts.len();
    let sender = tokio::spawn(async move {
        for (i, ct) in cts.into_iter().enumerate() {
            write_msg(
                &mut wr,
                &ClientRequest {
                    version: CLIENT_WIRE_VERSION,
                    id: i as u64,
                    ct,
                },
            )
            .await?;
        }
        Ok::<_, Error>(wr)
    });
    let mut results: Vec<Option<std::result::Result<u64, String>>> = vec![None; count];
    for _ in 0..count {
        let r: ClientResponse = read_msg(&mut rd)
            .await?
            .ok_or_else(|| client_err("node 0 closed the connection"))?;
        let slot = usize::try_from(r.id)
            .ok()
            .and_then(|i| results.get_mut(i))
            .ok_or_else(|| client_err("response for an unknown request"))?;
        *slot = Some(r.result);
    }
    let _wr = sender.await.map_err(client_err)??;
    Ok(results
        .into_iter()
        .map(|r| r.unwrap_or(Err("no response".into())))
        .collect())
}

/// `coterie decrypt`: sends the ciphertext files to node 0 over mutual TLS (client certificate
/// `cert`/`key`, node certificate checked against the config's CA, see [`connect`]) and returns
/// one result per file.
///
/// # Example
///
/// ```no_run
/// # async fn f() -> coterie_threshold::Result<()> {
/// let files = vec![std::path::PathBuf::from("ct.bin")];
/// for (f, r) in coterie_threshold::client::client_decrypt(
///     "certs/party.toml".as_ref(),
///     "127.0.0.1:47900",
///     "certs/client-alice.crt".as_ref(),
///     "certs/client-alice.key".as_ref(),
///     &files,
/// )
/// .await?
/// {
///     println!("{}: {r:?}", f.display());
/// }
/// # Ok(()) }
/// ```
pub async fn client_decrypt(
    config: &Path,
    node: &str,
    cert: &Path,
    key: &Path,
    files: &[PathBuf],
) -> Result<Vec<(PathBuf, std::result::Result<u64, String>)>> {
    let mut cts = Vec::new();
    for f in files {
        cts.push(coterie_base::fsio::read_bounded(f, MAX_FILE).map_err(Error::File)?);
    }
    let tls = connect(config, node, cert, key).await?;
    let results = decrypt_over(tls, cts).await?;
    Ok(files.iter().cloned().zip(results).collect())
}

/// `coterie threshold-encrypt`: encrypts `message` (one bit, `p = 2`) under the service's public
/// key file (`DIR/party-<id>/public-key.bin`, written by [`crate::node::run_node`]) and writes
/// the CTLW ciphertext to `out` (atomically).
///
/// # Example
///
/// ```no_run
/// coterie_threshold::client::encrypt_file(
///     "stores/party-0/public-key.bin".as_ref(),
///     1,
///     "ct.bin".as_ref(),
/// )?;
/// # Ok::<(), coterie_threshold::Error>(())
/// ```
pub fn encrypt_file(public_key: &Path, message: u64, out: &Path) -> Result<()> {
    let bytes = coterie_base::fsio::read_bounded(public_key, MAX_FILE).map_err(Error::File)?;
    let pk = PublicKey::from_bytes(&bytes)?;
    let ct: LweCiphertext = pk.encrypt(message, 1, &mut rand::rng())?;
    coterie_base::fsio::write_atomic(out, &ct.to_bytes()).map_err(Error::File)
}

#[cfg(test)]
mod tests {
    use super::*;
    use coterie_net::certs;
    use std::time::Instant;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "coterie-thr-client-{}-{name}-{}",
            std::process::id(),
            rand::random::<u32>()
        ));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    /// A node stub behind the real listener: answers every ciphertext with its body's top bit,
    /// and refuses what does not parse (as the coordinator does).
    async fn stub_node(mut rx: mpsc::Receiver<Request>) -> usize {
        let mut served = 0;
        while let Some(r) = rx.recv().await {
            served += 1;
            let res = LweCiphertext::from_bytes(&r.ct)
                .map(|ct| ct.b >> (ct.k - 1))
                .map_err(|e| format!("malformed ciphertext refused: {e}"));
            let _ = r.reply.send(res);
        }
        served
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn client_and_node_stub_over_loopback_tls() {
        let dir = scratch("tls");
        let pki = certs::generate_pki(2).unwrap();
        let addrs = certs::free_loopback_addresses(2).unwrap();
        let config = certs::write_pki(&dir, &pki, &addrs).unwrap();
        let acceptor = server_tls(&config).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let (tx, rx) = mpsc::channel(64);
        let last = Arc::new(std::sync::Mutex::new(Instant::now()));
        let t0 = *last.lock().unwrap();
        let server = tokio::spawn(serve_clients(listener, acceptor, tx, last.clone()));
        let stub = tokio::spawn(stub_node(rx));
        // messages as the top bit of b; any certificate the CA issued authenticates a client
        let mut files = Vec::new();
        for (i, top) in [1u64, 0, 1].iter().enumerate() {
            let ct = LweCiphertext {
                k: 16,
                m: 1,
                a: vec![i as u64; 4],
                b: (top << 15) | 7,
            };
            let f = dir.join(format!("{i}.ct"));
            std::fs::write(&f, ct.to_bytes()).unwrap();
            files.push(f);
        }
        let bad = dir.join("bad.ct");
        std::fs::write(&bad, b"CTLW but not really").unwrap();
        files.push(bad);
        let (c, k) = (dir.join("party1.crt"), dir.join("party1.key"));
        let got = client_decrypt(&config, &addr, &c, &k, &files)
            .await
            .unwrap();
        assert_eq!(got.len(), 4);
        assert_eq!(got[0], (files[0].clone(), Ok(1)));
        assert_eq!(got[1], (files[1].clone(), Ok(0)));
        assert_eq!(got[2], (files[2].clone(), Ok(1)));
        assert!(
            got[3].1.as_ref().unwrap_err().contains("malformed"),
            "{got:?}"
        );
        assert!(*last.lock().unwrap() > t0, "requests update the idle clock");

        // a wrong protocol version is answered with an error and never reaches the node
        let tls = connect(&config, &addr, &c, &k).await.unwrap();
        let (mut rd, mut wr) = tokio::io::split(tls);
        let req = ClientRequest {
            version: CLIENT_WIRE_VERSION + 1,
            id: 9,
            ct: vec![],
        };
        write_msg(&mut wr, &req).await.unwrap();
        let r: ClientResponse = read_msg(&mut rd).await.unwrap().unwrap();
        assert_eq!(r.id, 9);
        assert!(r.result.unwrap_err().contains("version"));
        drop((rd, wr));

        // a client certificate from another CA is refused
        let other = scratch("tls-other");
        let opki = certs::generate_pki(2).unwrap();
        certs::write_pki(&other, &opki, &addrs).unwrap();
        let refused = client_decrypt(
            &config,
            &addr,
            &other.join("party1.crt"),
            &other.join("party1.key"),
            &files[..1],
        )
        .await;
        assert!(matches!(refused, Err(Error::Client(_))), "{refused:?}");

        // nothing listening: a typed error naming the node
        server.abort();
        let _ = server.await;
        let e = client_decrypt(&config, &addr, &c, &k, &files[..1])
            .await
            .unwrap_err();
        assert!(e.to_string().contains("node 0 at"), "{e}");
        assert_eq!(
            stub.await.unwrap(),
            4,
            "the stub saw exactly the valid-version requests"
        );
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&other);
    }

    #[tokio::test]
    async fn oversized_and_malformed_frames_are_errors() {
        let (mut a, mut b) = tokio::io::duplex(64);
        let len = (MAX_CLIENT_FRAME as u32 + 1).to_le_bytes();
        a.write_all(&len).await.unwrap();
        let r = read_msg::<_, ClientRequest>(&mut b).await;
        assert!(matches!(r, Err(Error::Client(m)) if m.contains("refused")));
        let (mut a, mut b) = tokio::io::duplex(64);
        a.write_all(&3u32.to_le_bytes()).await.unwrap();
        a.write_all(&[0xff, 0xff, 0xff]).await.unwrap();
        let r = read_msg::<_, ClientRequest>(&mut b).await;
        assert!(matches!(r, Err(Error::Client(_))), "{r:?}");
        drop(a);
        let r = read_msg::<_, ClientRequest>(&mut b).await.unwrap();
        assert!(r.is_none(), "a clean end of stream is not an error");
    }

    #[test]
    fn encrypt_file_refuses_a_bad_key_file() {
        let dir = scratch("enc");
        std::fs::create_dir_all(&dir).unwrap();
        let pk = dir.join("pk.bin");
        std::fs::write(&pk, b"not a key").unwrap();
        assert!(encrypt_file(&pk, 1, &dir.join("ct.bin")).is_err());
        assert!(matches!(
            encrypt_file(&dir.join("missing"), 1, &dir.join("ct.bin")),
            Err(Error::File(_))
        ));
        assert!(!dir.join("ct.bin").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
