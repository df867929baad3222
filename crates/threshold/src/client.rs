//! The decryption service's client protocol: clients send CTLW ciphertexts to node 0 over a
//! **mutual TLS** channel ([`coterie_net::channel`]) and get one decrypted message (or an error)
//! back per ciphertext.
//!
//! * Node 0 ([`crate::node::run_node`]) listens with [`bind_server`] (its party certificate and
//!   key from the party config; clients must present a certificate issued by the config's CA,
//!   e.g. by `coterie_net::certs::issue_client_cert`) and serves clients with [`serve_clients`]:
//!   every request becomes a [`crate::service::Request`] for the coordinator; requests that
//!   arrive together are decrypted in one batch, and a malformed ciphertext is refused by node 0
//!   before any gate is spent.
//! * Clients call [`client_decrypt`] (files: CTLW, or TFHE-rs ciphertexts converted to CTLW by
//!   [`crate::tfhers`]) or [`connect`] and [`decrypt_over`] (CTLW bytes): node
//!   0's certificate is checked against the config's CA and the name `party-0.coterie`.
//! * **The client trusts no single node**: each request carries a fresh random nonce, and each
//!   decrypted message comes back with every node's signed statement of it
//!   ([`crate::statement`]: each node signs its batch once, the root of a Merkle tree with one
//!   leaf per request, and the response carries per node the message it stated, its signature
//!   and a Merkle path); [`decrypt_over`] accepts the results only when every node's
//!   statement verifies under the certificate the party config binds to that node and gives
//!   the message node 0 returned. Otherwise it fails with an error naming the node at fault (a
//!   follower whose statement is missing, does not verify or disagrees, or node 0 when it
//!   returns what its own signed statement contradicts). Refusals (errors per ciphertext) carry
//!   no statements: they are node 0's word, as a denial of service always is.
//! * A client certificate that node 0 does not accept (not issued by the service's CA) is
//!   reported as such (TLS 1.3 refuses it with an alert on the first read, not at connect).
//! * [`encrypt_file`] makes a ciphertext file under the service's public key.
//!
//! Wire format: channel byte frames (bounded by [`MAX_CLIENT_FRAME`]), each holding one envelope
//! (`coterie_base::envelope`): requests [`ClientRequest`] `{id, ct, nonce, more}` (CTLW bytes;
//! `more`: how many requests follow on the connection, a batching hint; envelope tag `THcq`,
//! format version 5; version 4 had no `more`) with channel tag [`TAG_REQUEST`], responses
//! [`ClientResponse`] `{id, result, attestation}` (envelope tag `THcr`, format version 4;
//! version 3 carried one signature and one certificate chain per node in every response;
//! version 2 had no nonce and no statements; version 1 carried a `version` byte in
//! the message). With a message, the [`Attestation`] holds the batch size `B`, the request's
//! position in it, the distinct Merkle paths for that position (one in the honest case, of at
//! most `ceil(log2 B)` 32-byte hashes) and per node its stated message, path index, key digest
//! and signature, so a response costs `n` × (message + path index + key digest + signature) +
//! one path. A node's certificate chain is in the first response on a connection that needs it
//! and then left out (node 0's writer remembers per connection which chain of each node it has
//! sent; the client's [`Verifier`] remembers the chains it verified and refuses a statement
//! without a chain for a node whose chain never came). Responses may come back in any order;
//! `id` matches them to requests. A request node 0 cannot open (another format version, a
//! malformed envelope) is answered with an error under the id [`UNREADABLE_ID`]. So an older
//! (version 4) client gets that error in a response it can open ("format version 4, this build
//! reads version 5"), and this client, talking to an older node 0, gets the same error the other
//! way round.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use coterie_base::envelope::{self, Versioned};
use coterie_net::channel::{Channel, ChannelServer, connect_channel};
use coterie_net::config::party_name;
use coterie_net::{Identity, MeshOptions, Roster};
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};

use crate::keys::PublicKey;
use crate::service::Request;
use crate::statement::{Attestation, Verifier, ciphertext_hash};
use crate::{Error, LweCiphertext, Result};

/// The id of the response to a request that node 0 could not open (another format version or
/// a malformed envelope): its own id is unknown.
pub const UNREADABLE_ID: u64 = u64::MAX;
/// Largest frame (request or response) either side accepts, in bytes.
pub const MAX_CLIENT_FRAME: usize = 1 << 20;
/// Channel tag of a [`ClientRequest`].
pub const TAG_REQUEST: u32 = 0x7E01_0001;
/// Channel tag of a [`ClientResponse`].
pub const TAG_RESPONSE: u32 = 0x7E01_0002;
/// Largest ciphertext file [`client_decrypt`] and public key file [`encrypt_file`] read.
const MAX_FILE: u64 = 64 << 20;
/// How long either side waits for the next frame (a client waits for a batch that may first
/// need gate preprocessing).
const CHANNEL_TIMEOUT: Duration = Duration::from_secs(600);

/// One ciphertext to decrypt (sent as an envelope, see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientRequest {
    /// Chosen by the client (not [`UNREADABLE_ID`]); echoed in the response.
    pub id: u64,
    /// The ciphertext, CTLW-encoded ([`LweCiphertext::to_bytes`]).
    #[serde(with = "coterie_base::bytes")]
    pub ct: Vec<u8>,
    /// Fresh random bytes, bound into every node's statement of the result.
    pub nonce: [u8; 32],
    /// How many requests the client sends right after this one on the connection (0 for the
    /// last of a stream, or when unknown): node 0 waits for announced requests (at most its
    /// `gather_max`) so that one stream is decrypted in one batch, not split at a pause.
    pub more: u32,
}

/// The answer to one [`ClientRequest`] (sent as an envelope, see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientResponse {
    /// The request's id, or [`UNREADABLE_ID`] for a request that could not be opened.
    pub id: u64,
    /// The decrypted message, or why the node refused or failed it.
    pub result: std::result::Result<u64, String>,
    /// With a message: every node's statement of it ([`crate::statement`]; a node's
    /// certificate chain only the first time this connection needs it); `None` with an error.
    pub attestation: Option<Attestation>,
}

coterie_base::versioned! {
    ClientRequest => b"THcq" v 5,
    ClientResponse => b"THcr" v 4,
}

/// A node's certificate chain (DER, its certificate first), shared by the results of a batch.
type Chain = Arc<Vec<Vec<u8>>>;

/// Puts node `i`'s chain from `chains` into the response's statement of node `i` unless the
/// same chain (by bytes) went out on this connection already (`sent`, per node).
fn add_chains(r: &mut ClientResponse, chains: &[Option<Chain>], sent: &mut Vec<Option<Chain>>) {
    let Some(att) = r.attestation.as_mut() else {
        return;
    };
    if sent.len() < att.nodes.len() {
        sent.resize(att.nodes.len(), None);
    }
    for ((st, chain), last) in att.nodes.iter_mut().zip(chains).zip(sent.iter_mut()) {
        let (Some(st), Some(chain)) = (st.as_mut(), chain) else {
            continue;
        };
        let known = last
            .as_ref()
            .is_some_and(|l| Arc::ptr_eq(l, chain) || **l == **chain);
        if !known {
            st.chain = Some(chain.to_vec());
            *last = Some(chain.clone());
        }
    }
}

/// A connection to node 0 ([`connect`]): the mutual-TLS channel and the check of the nodes'
/// statements from the party config.
pub struct Connection {
    channel: Channel,
    verifier: Verifier,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Connection {{ peer: {}, .. }}", self.channel.peer_name())
    }
}

impl Connection {
    /// A connection on `channel` (to node 0) whose results are checked with `verifier`.
    pub fn new(channel: Channel, verifier: Verifier) -> Self {
        Self { channel, verifier }
    }

    /// The channel (to send or read frames of the client protocol directly).
    pub fn channel_mut(&mut self) -> &mut Channel {
        &mut self.channel
    }

    /// The channel and the verifier.
    pub fn into_parts(self) -> (Channel, Verifier) {
        (self.channel, self.verifier)
    }

    /// Ends the connection normally.
    pub async fn close(self) -> Result<()> {
        self.channel.close().await.map_err(client_err)
    }
}

/// TLS alerts by which a server refuses the client's certificate.
const CERT_ALERTS: [&str; 9] = [
    "BadCertificate",
    "UnsupportedCertificate",
    "CertificateRevoked",
    "CertificateExpired",
    "CertificateUnknown",
    "UnknownCA",
    "DecryptError",
    "AccessDenied",
    "CertificateRequired",
];

/// The client's error for a failure on the connection to node 0: a refusal of the client's
/// certificate (a TLS alert naming a certificate problem) said as such, anything else as it is.
fn connection_err(e: coterie_net::Error) -> Error {
    let text = e.to_string();
    let refused = text
        .split("alert")
        .skip(1)
        .any(|after| CERT_ALERTS.iter().any(|a| after.contains(a)));
    if refused {
        client_err(format!(
            "node 0 refused this client's certificate (it must be issued by the service's CA: \
             `coterie certs-client --dir <the CA's directory> --name <client>`): {text}"
        ))
    } else {
        match e {
            coterie_net::Error::Closed { .. } => client_err("node 0 closed the connection"),
            e => client_err(e),
        }
    }
}

/// Seals a message and sends it as one byte frame.
async fn send_envelope<T: Versioned + Serialize>(
    wr: &mut coterie_net::channel::ChannelSender,
    tag: u32,
    msg: &T,
) -> Result<()> {
    let bytes = envelope::to_envelope(msg).map_err(client_err)?;
    wr.send_bytes(tag, &bytes).await.map_err(client_err)
}

fn client_err(what: impl std::fmt::Display) -> Error {
    Error::Client(what.to_string())
}

/// The channel options of both sides: bounded frames, a long per-frame deadline.
fn channel_options() -> MeshOptions {
    MeshOptions {
        timeout: CHANNEL_TIMEOUT,
        max_frame: MAX_CLIENT_FRAME,
        ..MeshOptions::default()
    }
}

/// Node 0's client listener on `addr`: node 0's party certificate and key from the party
/// `config`, client certificates verified against the config's CA.
///
/// # Example
///
/// ```no_run
/// # async fn f() -> coterie_threshold::Result<()> {
/// let server =
///     coterie_threshold::client::bind_server("certs/party.toml".as_ref(), "127.0.0.1:47900").await?;
/// # Ok(()) }
/// ```
pub async fn bind_server(config: &Path, addr: &str) -> Result<ChannelServer> {
    bind_server_with(config, addr, None, None).await
}

/// [`bind_server`] with node 0's certificate (chain) file `cert` and private key file `key` in
/// place of the config's where given (the CLI's `--cert` / `--key`). Clients check the
/// certificate against the config's CA and the name `party-0.coterie`.
pub async fn bind_server_with(
    config: &Path,
    addr: &str,
    cert: Option<&Path>,
    key: Option<&Path>,
) -> Result<ChannelServer> {
    let roster = Roster::load(config).map_err(client_err)?;
    let ca = roster.ca.clone().ok_or_else(|| {
        client_err("the config names no CA (clients are authenticated by the CA)")
    })?;
    let chain = match cert {
        Some(p) => coterie_net::config::load_cert_chain(p)
            .map_err(|e| client_err(format!("--cert {}: {e}", p.display())))?,
        None => vec![
            roster.certs[0]
                .clone()
                .ok_or_else(|| client_err("no certificate for party 0 in the config"))?,
        ],
    };
    let key = match key {
        Some(p) => coterie_net::config::load_key(p)
            .map_err(|e| client_err(format!("--key {}: {e}", p.display())))?,
        None => {
            let key_path = roster.keys[0]
                .clone()
                .ok_or_else(|| client_err("no key for party 0 in the config"))?;
            coterie_net::config::load_key(&key_path).map_err(client_err)?
        }
    };
    let identity = Identity { chain, key };
    ChannelServer::bind(addr, identity, ca, channel_options())
        .await
        .map_err(|e| client_err(format!("client listener {addr}: {e}")))
}

/// Node 0's client service: accepts clients on `server` (see [`bind_server`]) until the
/// listener fails or the task is aborted, and turns every request into a [`Request`] on `tx`
/// (the coordinator's queue, [`crate::service::Node::run_coordinator`]). Each accepted request
/// sets `last` to now (for an idle timeout). Requests that cannot be opened (another envelope
/// version, a malformed envelope) are answered with an error under [`UNREADABLE_ID`] and never
/// reach `tx`; a client that fails to authenticate is refused (logged)
/// and the next one accepted. Each connection's response writer puts a node's certificate chain
/// into a response only when it has not sent that chain on this connection yet.
///
/// # Example
///
/// ```no_run
/// use std::sync::{Arc, Mutex};
/// use std::time::Instant;
/// # async fn f() -> coterie_threshold::Result<()> {
/// use coterie_threshold::client::{bind_server, serve_clients};
/// let server = bind_server("certs/party.toml".as_ref(), "127.0.0.1:47900").await?;
/// let (tx, rx) = tokio::sync::mpsc::channel(4096);
/// let last = Arc::new(Mutex::new(Instant::now()));
/// tokio::spawn(serve_clients(server, tx, last));
/// // ... node.run_coordinator(&mut mesh, rx, &mut events)
/// # drop(rx); Ok(()) }
/// ```
pub async fn serve_clients(
    server: ChannelServer,
    tx: mpsc::Sender<Request>,
    last: Arc<std::sync::Mutex<std::time::Instant>>,
) {
    loop {
        let ch = match server.accept().await {
            Ok(ch) => ch,
            Err(e @ coterie_net::Error::Connect { .. }) => {
                tracing::warn!(error = %e, "client refused");
                continue;
            }
            Err(e) => {
                tracing::warn!(error = %e, "client listener stopped");
                return;
            }
        };
        let tx = tx.clone();
        let last = last.clone();
        tokio::spawn(async move {
            let client = ch.peer_name().to_string();
            let (mut rd, mut wr) = ch.split();
            let (rtx, mut rrx) = mpsc::channel::<(ClientResponse, Vec<Option<Chain>>)>(1024);
            let writer = tokio::spawn(async move {
                let mut sent = Vec::new();
                while let Some((mut r, chains)) = rrx.recv().await {
                    add_chains(&mut r, &chains, &mut sent);
                    if send_envelope(&mut wr, TAG_RESPONSE, &r).await.is_err() {
                        return;
                    }
                }
                let _ = wr.close().await;
            });
            loop {
                let bytes = match rd.recv_bytes(TAG_REQUEST).await {
                    Ok(b) => b,
                    Err(coterie_net::Error::Closed { .. }) => break,
                    Err(e) => {
                        tracing::debug!(%client, error = %e, "client connection ended");
                        break;
                    }
                };
                if let Ok(mut t) = last.lock() {
                    *t = std::time::Instant::now();
                }
                let rtx = rtx.clone();
                let req: ClientRequest = match envelope::from_envelope(&bytes, MAX_CLIENT_FRAME) {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = rtx
                            .send((
                                ClientResponse {
                                    id: UNREADABLE_ID,
                                    result: Err(format!("request refused: {e}")),
                                    attestation: None,
                                },
                                Vec::new(),
                            ))
                            .await;
                        continue;
                    }
                };
                let (otx, orx) = oneshot::channel();
                if tx
                    .send(Request {
                        ct: req.ct,
                        nonce: req.nonce,
                        reply: otx,
                        more: req.more,
                    })
                    .await
                    .is_err()
                {
                    break;
                }
                tokio::spawn(async move {
                    let reply = orx.await.unwrap_or_else(|_| Err("node stopped".into()));
                    let r = match reply {
                        Ok(a) => (
                            ClientResponse {
                                id: req.id,
                                result: Ok(a.message),
                                attestation: Some(a.attestation),
                            },
                            a.chains,
                        ),
                        Err(e) => (
                            ClientResponse {
                                id: req.id,
                                result: Err(e),
                                attestation: None,
                            },
                            Vec::new(),
                        ),
                    };
                    let _ = rtx.send(r).await;
                });
            }
            drop(rtx);
            let _ = writer.await;
        });
    }
}

/// Connects to node 0 at `node` over mutual TLS: client certificate `cert`/`key` (PEM, issued by
/// the config's CA), node 0's certificate checked against the CA of the party `config` and the
/// name `party-0.coterie`. The connection checks the nodes' statements on every result with the
/// party certificates of `config` ([`crate::statement::Verifier`]).
///
/// # Example
///
/// ```no_run
/// # async fn f() -> coterie_threshold::Result<()> {
/// use coterie_threshold::client::{connect, decrypt_over};
/// let ch = connect(
///     "certs/party.toml".as_ref(),
///     "127.0.0.1:47900",
///     "certs/client-alice.crt".as_ref(),
///     "certs/client-alice.key".as_ref(),
/// )
/// .await?;
/// let results = decrypt_over(ch, vec![std::fs::read("ct.bin").unwrap()]).await?;
/// # Ok(()) }
/// ```
pub async fn connect(config: &Path, node: &str, cert: &Path, key: &Path) -> Result<Connection> {
    let roster = Roster::load(config).map_err(client_err)?;
    let ca = roster.ca.clone().ok_or_else(|| {
        client_err("the config names no CA (clients are authenticated by the CA)")
    })?;
    let verifier = Verifier::new(&roster)?;
    let identity = Identity::from_pem_files(cert, key).map_err(client_err)?;
    let channel = connect_channel(node, &party_name(0), identity, ca, channel_options())
        .await
        .map_err(|e| match connection_err(e) {
            Error::Client(e) => client_err(format!("node 0 at {node}: {e}")),
            e => e,
        })?;
    Ok(Connection::new(channel, verifier))
}

/// Sends the CTLW ciphertexts `cts` on `conn` (a connection to node 0, see [`connect`]), each
/// with a fresh random nonce, and returns one result per ciphertext, in order: the message, or
/// the node's reason for refusing or failing it. A message is returned only when every node's
/// signed statement of it verifies and agrees ([`crate::statement::Verifier::check`]). Errors
/// (typed) when the connection fails (a refused client certificate is said as such), node 0
/// answers out of protocol, node 0 could not open a request (it speaks another format version),
/// or a node's statement is missing, does not verify or disagrees with node 0's answer (the
/// error names the node).
///
/// # Example
///
/// See [`connect`].
pub async fn decrypt_over(
    conn: Connection,
    cts: Vec<Vec<u8>>,
) -> Result<Vec<std::result::Result<u64, String>>> {
    let (conn, results) = decrypt_keep(conn, cts).await?;
    let _ = conn.close().await;
    Ok(results)
}

/// [`decrypt_over`] on a connection that stays open: returns it with the results, for the next
/// call (node 0 serves any number of batches on one connection, and the connection's verifier
/// keeps the node certificate chains it checked). On an error the connection is gone; open a
/// new one.
///
/// # Example
///
/// See [`connect`]; `let (conn, results) = decrypt_keep(conn, cts).await?;` and again with
/// `conn`.
pub async fn decrypt_keep(
    conn: Connection,
    cts: Vec<Vec<u8>>,
) -> Result<(Connection, Vec<std::result::Result<u64, String>>)> {
    let (ch, mut verifier) = conn.into_parts();
    let (mut rd, mut wr) = ch.split();
    let count = cts.len();
    let hashes: Vec<[u8; 32]> = cts.iter().map(|c| ciphertext_hash(c)).collect();
    let nonces: Vec<[u8; 32]> = (0..count).map(|_| rand::random()).collect();
    let sent = nonces.clone();
    let sender = tokio::spawn(async move {
        for (i, (ct, nonce)) in cts.into_iter().zip(sent).enumerate() {
            let req = ClientRequest {
                id: i as u64,
                ct,
                nonce,
                more: u32::try_from(count - 1 - i).unwrap_or(u32::MAX),
            };
            send_envelope(&mut wr, TAG_REQUEST, &req).await?;
        }
        Ok::<_, Error>(wr)
    });
    let mut results: Vec<Option<std::result::Result<u64, String>>> = vec![None; count];
    for _ in 0..count {
        let bytes = match rd.recv_bytes(TAG_RESPONSE).await {
            Ok(b) => b,
            Err(e) => {
                sender.abort();
                return Err(connection_err(e));
            }
        };
        let r: ClientResponse =
            envelope::from_envelope(&bytes, MAX_CLIENT_FRAME).map_err(|e| match envelope::peek(
                &bytes,
            ) {
                Ok((tag, v)) if tag == ClientResponse::TAG && v != ClientResponse::VERSION => {
                    client_err(format!(
                        "node 0 speaks client protocol version {v}, this client version {}",
                        ClientResponse::VERSION
                    ))
                }
                _ => client_err(format!("node 0's response: {e}")),
            })?;
        if r.id == UNREADABLE_ID {
            let why = r.result.err().unwrap_or_default();
            return Err(client_err(format!(
                "node 0 could not read a request: {why}"
            )));
        }
        let i = usize::try_from(r.id)
            .ok()
            .filter(|&i| i < count)
            .ok_or_else(|| client_err("response for an unknown request"))?;
        if let Ok(m) = r.result {
            let att = r.attestation.unwrap_or_default();
            verifier
                .check(i, &nonces[i], &hashes[i], m, &att)
                .map_err(|why| client_err(format!("result refused: {why}")))?;
        }
        results[i] = Some(r.result);
    }
    let wr = sender.await.map_err(client_err)??;
    let conn = Connection::new(Channel::unsplit(rd, wr), verifier);
    Ok((
        conn,
        results
            .into_iter()
            .map(|r| r.unwrap_or(Err("no response".into())))
            .collect(),
    ))
}

/// `coterie decrypt`: sends the ciphertext files to node 0 over mutual TLS (client certificate
/// `cert`/`key`, node certificate checked against the config's CA, see [`connect`]) and returns
/// one result per file.
///
/// A file holds coterie's CTLW format (sent as it is; node 0 checks it) or a TFHE-rs 1.8
/// `core_crypto::LweCiphertext<Vec<u64>>` in either bincode encoding, recognised by its contents
/// ([`crate::tfhers::detect`]) and converted to CTLW here, with `message_log` message bits (TFHE-rs
/// does not store them; CTLW files carry their own). A TFHE-rs file that does not convert (a
/// modulus other than `2^k`, `message_log ≥ k`, malformed bytes) is not sent: its result is the
/// reason. When no file is left to send, node 0 is not contacted.
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
///     1,
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
    message_log: u32,
) -> Result<Vec<(PathBuf, std::result::Result<u64, String>)>> {
    let mut results: Vec<Option<std::result::Result<u64, String>>> = vec![None; files.len()];
    let (mut cts, mut sent) = (Vec::new(), Vec::new());
    for (i, f) in files.iter().enumerate() {
        let bytes = coterie_base::fsio::read_bounded(f, MAX_FILE).map_err(Error::File)?;
        match request_bytes(bytes, message_log) {
            Ok(ct) => {
                cts.push(ct);
                sent.push(i);
            }
            Err(e) => results[i] = Some(Err(format!("not sent: {e}"))),
        }
    }
    if !cts.is_empty() {
        let tls = connect(config, node, cert, key).await?;
        for (i, r) in sent.into_iter().zip(decrypt_over(tls, cts).await?) {
            results[i] = Some(r);
        }
    }
    Ok(files
        .iter()
        .cloned()
        .zip(
            results
                .into_iter()
                .map(|r| r.unwrap_or(Err("no response".into()))),
        )
        .collect())
}

/// What a request carries for a ciphertext file's bytes: a TFHE-rs ciphertext converted to CTLW
/// (with `message_log` message bits), anything else as it is (node 0 checks it).
fn request_bytes(bytes: Vec<u8>, message_log: u32) -> Result<Vec<u8>> {
    if crate::tfhers::looks_like_tfhe_rs(&bytes) {
        Ok(crate::tfhers::lwe_ciphertext_from_tfhe_rs(&bytes, message_log)?.to_bytes())
    } else {
        Ok(bytes)
    }
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
    use crate::service::Attested;
    use crate::statement::Signer;
    use coterie_net::certs;
    use std::time::Instant;

    fn scratch(name: &str) -> PathBuf {
        coterie_base::fsio::unique_temp_dir(&format!("coterie-thr-client-{name}"))
    }

    /// The statement signers of every party of the config in `dir` (as [`certs::write_pki`]
    /// writes it: every party's key is there).
    fn signers(config: &Path, n: usize) -> Vec<Signer> {
        (0..n)
            .map(|i| Signer::from_config(config, i, None, None, [7; 32]).unwrap())
            .collect()
    }

    /// A node stub behind the real listener: answers every ciphertext with its body's top bit,
    /// signed by every node (the requests queued together as one batch), and refuses what does
    /// not parse (as the coordinator does).
    async fn stub_node(mut rx: mpsc::Receiver<Request>, signers: Vec<Signer>) -> usize {
        let mut served = 0;
        while let Some(first) = rx.recv().await {
            let mut batch = vec![first];
            while let Ok(r) = rx.try_recv() {
                batch.push(r);
            }
            served += batch.len();
            let mut good = Vec::new();
            for r in batch {
                match LweCiphertext::from_bytes(&r.ct) {
                    Ok(ct) => good.push((ct.body() >> (ct.modulus_log() - 1), r)),
                    Err(e) => {
                        let _ = r
                            .reply
                            .send(Err(format!("malformed ciphertext refused: {e}")));
                    }
                }
            }
            if good.is_empty() {
                continue;
            }
            let messages: Vec<u64> = good.iter().map(|(m, _)| *m).collect();
            let nonces: Vec<[u8; 32]> = good.iter().map(|(_, r)| r.nonce).collect();
            let hashes: Vec<[u8; 32]> = good.iter().map(|(_, r)| ciphertext_hash(&r.ct)).collect();
            let statements: Vec<_> = signers
                .iter()
                .map(|s| Some(s.sign_batch(&nonces, &hashes, &messages).unwrap()))
                .collect();
            let chains = signers
                .iter()
                .map(|s| Some(Arc::new(s.chain().to_vec())))
                .collect();
            let answers =
                Attested::for_batch(&messages, &nonces, &hashes, &statements, chains).unwrap();
            for ((_, r), a) in good.into_iter().zip(answers) {
                let _ = r.reply.send(Ok(a));
            }
        }
        served
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn client_and_node_stub_over_loopback_tls() {
        let dir = scratch("tls");
        let pki = certs::generate_pki(2).unwrap();
        let addrs = certs::free_loopback_addresses(2).unwrap();
        let config = certs::write_pki(&dir, &pki, &addrs).unwrap();
        // node 0's certificate and key given as files of their own (the CLI's --cert/--key):
        // the listener presents them; a file that is not there is named
        let own = dir.join("own");
        std::fs::create_dir_all(&own).unwrap();
        std::fs::copy(dir.join("party0.crt"), own.join("node0.crt")).unwrap();
        std::fs::copy(dir.join("party0.key"), own.join("node0.key")).unwrap();
        let missing = own.join("absent.crt");
        let e = bind_server_with(&config, "127.0.0.1:0", Some(&missing), None)
            .await
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(e.contains("--cert") && e.contains("absent.crt"), "{e}");
        let e = bind_server_with(&config, "127.0.0.1:0", None, Some(&own.join("absent.key")))
            .await
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(e.contains("--key") && e.contains("absent.key"), "{e}");
        let server = bind_server_with(
            &config,
            "127.0.0.1:0",
            Some(&own.join("node0.crt")),
            Some(&own.join("node0.key")),
        )
        .await
        .unwrap();
        let addr = server.local_addr().unwrap().to_string();
        let (tx, rx) = mpsc::channel(64);
        let last = Arc::new(std::sync::Mutex::new(Instant::now()));
        let t0 = *last.lock().unwrap();
        let server = tokio::spawn(serve_clients(server, tx, last.clone()));
        let stub = tokio::spawn(stub_node(rx, signers(&config, 2)));
        // messages as the top bit of b; any certificate the CA issued authenticates a client
        let mut files = Vec::new();
        for (i, top) in [1u64, 0, 1].iter().enumerate() {
            let mut data = vec![i as u64; 5];
            data[4] = (top << 15) | 7;
            let ct = LweCiphertext::from_parts(data, 16, 1).unwrap();
            let f = dir.join(format!("{i}.ct"));
            std::fs::write(&f, ct.to_bytes()).unwrap();
            files.push(f);
        }
        let bad = dir.join("bad.ct");
        std::fs::write(&bad, b"CTLW but not really").unwrap();
        files.push(bad);
        // TFHE-rs bincode (unversioned) over 2^16: the words in their top 16 bits; converted to
        // CTLW and sent, or, when the modulus is no power of two, refused here and never sent
        let tfhe_rs = |modulus: u128| {
            let mut b = 3u64.to_le_bytes().to_vec();
            for w in [5u64 << 48, 6 << 48, ((1 << 15) | 7) << 48] {
                b.extend(w.to_le_bytes());
            }
            b.extend(modulus.to_le_bytes());
            b.extend(64u64.to_le_bytes());
            b
        };
        for (name, modulus) in [("tfhe-rs.bin", 1u128 << 16), ("tfhe-rs-odd.bin", 65537)] {
            let f = dir.join(name);
            std::fs::write(&f, tfhe_rs(modulus)).unwrap();
            files.push(f);
        }
        let (c, k) = (dir.join("party1.crt"), dir.join("party1.key"));
        let got = client_decrypt(&config, &addr, &c, &k, &files, 1)
            .await
            .unwrap();
        assert_eq!(got.len(), 6);
        assert_eq!(got[0], (files[0].clone(), Ok(1)));
        assert_eq!(got[1], (files[1].clone(), Ok(0)));
        assert_eq!(got[2], (files[2].clone(), Ok(1)));
        assert!(
            got[3].1.as_ref().unwrap_err().contains("malformed"),
            "{got:?}"
        );
        assert_eq!(got[4], (files[4].clone(), Ok(1)));
        let e = got[5].1.as_ref().unwrap_err();
        assert!(e.contains("not sent") && e.contains("power of two"), "{e}");
        // nothing left to send: node 0 is not contacted
        let none = client_decrypt(&config, "127.0.0.1:1", &c, &k, &files[5..], 1)
            .await
            .unwrap();
        assert!(none[0].1.is_err());
        assert!(*last.lock().unwrap() > t0, "requests update the idle clock");

        // a wrong envelope version is answered with an error and never reaches the node
        let (mut ch, _) = connect(&config, &addr, &c, &k).await.unwrap().into_parts();
        let old = envelope::seal(
            ClientRequest::TAG,
            ClientRequest::VERSION - 1,
            &(9u64, Vec::<u8>::new()),
        );
        ch.send_bytes(TAG_REQUEST, &old.unwrap()).await.unwrap();
        let r: ClientResponse =
            envelope::from_envelope(&ch.recv_bytes(TAG_RESPONSE).await.unwrap(), 1 << 10).unwrap();
        assert_eq!(r.id, UNREADABLE_ID);
        let e = r.result.unwrap_err();
        assert!(e.contains("version 4") && e.contains("version 5"), "{e}");
        // so are bytes that are no envelope at all (a version-1 request's encoding)
        // (postcard: version 1, id 9, an empty ciphertext)
        ch.send_bytes(TAG_REQUEST, &[1, 9, 0]).await.unwrap();
        let r: ClientResponse =
            envelope::from_envelope(&ch.recv_bytes(TAG_RESPONSE).await.unwrap(), 1 << 10).unwrap();
        assert_eq!(r.id, UNREADABLE_ID);
        // a well-formed request still works on the same connection
        let good = LweCiphertext::from_parts(vec![1, 2, 3, 4, 1 << 15], 16, 1).unwrap();
        let req = ClientRequest {
            id: 11,
            ct: good.to_bytes(),
            nonce: [3; 32],
            more: 0,
        };
        ch.send_bytes(TAG_REQUEST, &envelope::to_envelope(&req).unwrap())
            .await
            .unwrap();
        let r: ClientResponse =
            envelope::from_envelope(&ch.recv_bytes(TAG_RESPONSE).await.unwrap(), 1 << 14).unwrap();
        assert_eq!((r.id, r.result.clone()), (11, Ok(1)));
        let att = r.attestation.expect("an attestation with the message");
        assert_eq!(att.nodes.len(), 2, "one statement per node");
        assert!(
            att.nodes.iter().flatten().all(|s| s.chain.is_some()),
            "the first response on a connection carries every node's chain"
        );
        let mut v = Verifier::load(&config).unwrap();
        let h = ciphertext_hash(&req.ct);
        assert_eq!(v.check(0, &[3; 32], &h, 1, &att), Ok(()));
        // the next response on the same connection carries no chain, and verifies with the
        // chains this connection has seen (and only with them)
        let req = ClientRequest {
            id: 12,
            nonce: [4; 32],
            ..req
        };
        ch.send_bytes(TAG_REQUEST, &envelope::to_envelope(&req).unwrap())
            .await
            .unwrap();
        let r: ClientResponse =
            envelope::from_envelope(&ch.recv_bytes(TAG_RESPONSE).await.unwrap(), 1 << 14).unwrap();
        assert_eq!((r.id, r.result.clone()), (12, Ok(1)));
        let att = r.attestation.expect("an attestation with the message");
        assert!(
            att.nodes.iter().flatten().all(|s| s.chain.is_none()),
            "{att:?}"
        );
        assert_eq!(v.check(1, &[4; 32], &h, 1, &att), Ok(()));
        let e = Verifier::load(&config)
            .unwrap()
            .check(1, &[4; 32], &h, 1, &att)
            .unwrap_err();
        assert!(
            e.contains("node 0's statement") && e.contains("no certificate chain"),
            "{e}"
        );
        // an oversized request is refused before it is sent (the node would refuse it too)
        let big = ClientRequest {
            id: 10,
            ct: vec![0; MAX_CLIENT_FRAME + 1],
            nonce: [0; 32],
            more: 0,
        };
        let (_, mut wr) = ch.split();
        assert!(send_envelope(&mut wr, TAG_REQUEST, &big).await.is_err());
        drop(wr);

        // a client certificate from another CA is refused, and the client says so
        let other = scratch("tls-other");
        let opki = certs::generate_pki(2).unwrap();
        certs::write_pki(&other, &opki, &addrs).unwrap();
        let refused = client_decrypt(
            &config,
            &addr,
            &other.join("party1.crt"),
            &other.join("party1.key"),
            &files[..1],
            1,
        )
        .await;
        let Err(Error::Client(e)) = refused else {
            panic!("{refused:?}")
        };
        assert!(
            e.contains("node 0 refused this client's certificate")
                && e.contains("issued by the service's CA")
                && e.contains("certs-client")
                && e.contains("alert"),
            "{e}"
        );
        // an issued client certificate (not a party's) is accepted
        let (ic, ik) = certs::issue_client_cert(&dir, "alice").unwrap();
        let got = client_decrypt(&config, &addr, &ic, &ik, &files[..1], 1)
            .await
            .unwrap();
        assert_eq!(got[0].1, Ok(1));

        // nothing listening: a typed error naming the node
        server.abort();
        let _ = server.await;
        let e = client_decrypt(&config, &addr, &c, &k, &files[..1], 1)
            .await
            .unwrap_err();
        assert!(e.to_string().contains("node 0 at"), "{e}");
        assert_eq!(
            stub.await.unwrap(),
            8,
            "the stub saw exactly the requests it could open"
        );
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&other);
    }

    #[test]
    fn the_writer_sends_each_chain_once_per_connection() {
        use crate::statement::{BatchSignature, NodeStatement};
        let st = NodeStatement {
            message: 1,
            path: 0,
            signature: BatchSignature {
                key_digest: [0; 32],
                scheme: 0,
                signature: vec![1],
            },
            chain: None,
        };
        let response = |nodes: usize| ClientResponse {
            id: 0,
            result: Ok(1),
            attestation: Some(Attestation {
                batch: 1,
                index: 0,
                paths: vec![Vec::new()],
                nodes: vec![Some(st.clone()); nodes],
            }),
        };
        let chain = |b: u8| Some(Arc::new(vec![vec![b; 4]]));
        let sent_chains = |r: &ClientResponse| -> Vec<Option<Vec<Vec<u8>>>> {
            let att = r.attestation.as_ref().unwrap();
            att.nodes
                .iter()
                .map(|s| s.as_ref().unwrap().chain.clone())
                .collect()
        };
        let mut sent = Vec::new();
        let mut r = response(2);
        add_chains(&mut r, &[chain(1), chain(2)], &mut sent);
        assert_eq!(
            sent_chains(&r),
            vec![Some(vec![vec![1; 4]]), Some(vec![vec![2; 4]])]
        );
        // the same chains again (equal bytes, another allocation): left out
        let mut r = response(2);
        add_chains(&mut r, &[chain(1), chain(2)], &mut sent);
        assert_eq!(sent_chains(&r), vec![None, None]);
        // node 1's chain changes: sent again, node 0's is not; a node without chain stays bare
        let mut r = response(3);
        add_chains(&mut r, &[chain(1), chain(3), None], &mut sent);
        assert_eq!(sent_chains(&r), vec![None, Some(vec![vec![3; 4]]), None]);
        // another connection (a fresh record) sends them all
        let mut r = response(2);
        add_chains(&mut r, &[chain(1), chain(3)], &mut Vec::new());
        assert!(sent_chains(&r).iter().all(Option::is_some));
        // an error carries nothing
        let mut e = ClientResponse {
            id: 0,
            result: Err("no".into()),
            attestation: None,
        };
        add_chains(&mut e, &[chain(1)], &mut sent);
        assert_eq!(e.attestation, None);
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
