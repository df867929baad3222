//! `coterie ... threshold` (coterie-threshold, issue 5), wired in `main.rs`:
//!
//! * `coterie demo threshold --parties N` (the README's main job): [`demo_amounts`] and
//!   [`party_demo`] — INSECURE dealer material, key generation inside the ABB, public samples,
//!   encryption of known messages, decryption over TLS in both schedules, checked.
//! * The decryption service: `coterie party --config F --id I threshold --dir D` ([`run_node`])
//!   on the SPDZ_2k store `D/party-I` (made by `coterie party ... spdz-prep-ot --dir D` for real
//!   runs, or by the INSECURE `coterie spdz deal-insecure --out D` for tests). On first start the
//!   nodes generate the key inside the ABB and write `D/party-I/threshold-key.bin` (the node's
//!   key shares, mode 0600) and `D/party-I/public-key.bin`; they keep `--pool` gate bundles
//!   ready in `D/party-I/gates` (progress and pool level on stdout). Node 0 coordinates (see
//!   `coterie_threshold::service`) and serves clients over **mutual TLS** at `--client-listen`
//!   with its party certificate.
//! * Clients: `coterie certs-client --dir CERTS --name NAME` issues a client certificate with the
//!   CA that `coterie certs` wrote; `coterie threshold-encrypt --public-key D/party-0/public-key.bin
//!   --message 1 --out ct.bin` makes a ciphertext; `coterie decrypt --config F --node ADDR
//!   --cert C --key K ct.bin ...` sends the files to node 0 (which checks the client's
//!   certificate against the CA; the client checks node 0's certificate and name
//!   `party-0.coterie`) and prints `file: message` per file. Requests that arrive together are
//!   decrypted in one batch; a malformed ciphertext is refused by node 0 before any gate is spent.
//!
//! Client protocol (version 1): length-prefixed (u32 LE) postcard frames, at most 1 MiB;
//! request `{version, id, ct}` (CTLW bytes), response `{version, id, result}`.

use std::path::Path;

use coterie_net::Mesh;
use coterie_spdz::{PrepStore, Z2k};

/// Material one party needs for `count` demo decryptions, as (triples, bits, randoms, input
/// masks per owner).
pub fn demo_amounts(count: usize) -> Result<(usize, usize, usize, usize), String> {
    let c = coterie_threshold::demo::demo_counts(count).map_err(|e| e.to_string())?;
    Ok((c.triples, c.bits, c.randoms, c.masks_per_party))
}

/// Runs the demo at this party on its preprocessing store at `dir`.
pub async fn party_demo<M: Mesh>(mesh: &mut M, dir: &Path, count: usize) -> Result<(), String> {
    let store =
        PrepStore::open(dir, Z2k::spdz2k_64(), mesh.id(), mesh.n()).map_err(|e| e.to_string())?;
    let r = coterie_threshold::demo::run_demo_party(mesh, store, count)
        .await
        .map_err(|e| e.to_string())?;
    println!(
        "party {}: encrypted {:?}, decrypted {:?} (strict) and {:?} (pipelined)",
        mesh.id(),
        r.messages,
        r.strict,
        r.pipelined
    );
    println!(
        "party {}: decrypted {} ciphertexts correctly in both schedules (keygen {} ms, gate prep {} ms, strict {} ms, pipelined {} ms)",
        mesh.id(),
        r.messages.len(),
        r.millis[0],
        r.millis[1],
        r.millis[2],
        r.millis[3]
    );
    Ok(())
}

// ------------------------------------------------------------------------------------------
// The decryption service: `coterie party ... threshold`, `coterie decrypt`, client certificates.
// ------------------------------------------------------------------------------------------

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use coterie_threshold::keys::{KeyDistribution, PublicKey, SharedKey};
use coterie_threshold::service::{Event, Node, NodeConfig, Request};
use coterie_threshold::store::GateStore;
use coterie_threshold::{LweCiphertext, Params};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

/// Wire format version of the client protocol.
pub const CLIENT_WIRE_VERSION: u8 = 1;
const MAX_CLIENT_FRAME: usize = 1 << 20;
/// Public samples of the service's public key, and their noise width.
const PK_SAMPLES: usize = 64;
const PK_NOISE_BITS: u32 = 40;

#[derive(Debug, Serialize, Deserialize)]
struct ClientRequest {
    version: u8,
    id: u64,
    ct: Vec<u8>,
}

#[derive(Debug, Serialize, Deserialize)]
struct ClientResponse {
    version: u8,
    id: u64,
    result: Result<u64, String>,
}

/// Settings of `coterie party ... threshold`.
#[derive(Debug, Clone)]
pub struct ServiceArgs {
    /// Base directory of the SPDZ_2k stores (`DIR/party-<id>`); the node keeps its key shares,
    /// public key and gate store there too.
    pub dir: PathBuf,
    /// Gate bundles to keep ready.
    pub pool: u64,
    /// Bundles per preprocessing step.
    pub chunk: u32,
    /// Largest batch.
    pub max_batch: usize,
    /// Where node 0 serves clients (mutual TLS).
    pub client_listen: String,
    /// Stop after this many seconds without a client request (0: run until killed).
    pub idle_exit_s: u64,
}

fn pdir(a: &ServiceArgs, id: usize) -> PathBuf {
    a.dir.join(format!("party-{id}"))
}

/// Loads this node's key shares and public key, or, the first time (at every node together),
/// generates the key inside the ABB and its public samples and writes them.
async fn load_or_generate_key<M: Mesh>(
    mesh: &mut M,
    eng: &mut coterie_spdz::Engine<Z2k, PrepStore<Z2k>>,
    dir: &Path,
    params: &Params,
) -> Result<(SharedKey, PublicKey), String> {
    let kp = dir.join("threshold-key.bin");
    let pp = dir.join("public-key.bin");
    let have = kp.exists() && pp.exists();
    let digest: [u8; 32] = if have {
        *blake3::hash(&std::fs::read(&pp).map_err(|e| e.to_string())?).as_bytes()
    } else {
        [0; 32]
    };
    let all: Vec<(bool, [u8; 32])> = mesh
        .exchange_all_tagged(0x7E00_0000, &(have, digest))
        .await
        .map_err(|e| e.to_string())?;
    if all.iter().any(|x| *x != (have, digest)) {
        let e = "nodes disagree on the key state (some have a key, or different public keys)";
        mesh.abort(e).await;
        return Err(e.into());
    }
    if have {
        let key = SharedKey::from_bytes(&std::fs::read(&kp).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
        let pk = PublicKey::from_bytes(&std::fs::read(&pp).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
        return Ok((key, pk));
    }
    let key =
        SharedKey::generate(eng, params.n, KeyDistribution::Binary).map_err(|e| e.to_string())?;
    // The seed of the public samples' masks: agreed by a commit-then-open coin toss.
    let coin: [u8; 32] = rand::random();
    let coins: Vec<[u8; 32]> =
        coterie_net::commit::commit_open_all(mesh, "coterie threshold public-key seed", &coin)
            .await
            .map_err(|e| e.to_string())?;
    let mut h = blake3::Hasher::new();
    coins.iter().for_each(|c| {
        h.update(c);
    });
    let seed = *h.finalize().as_bytes();
    let pk = PublicKey::generate(eng, mesh, params, &key, seed, PK_SAMPLES, PK_NOISE_BITS)
        .await
        .map_err(|e| e.to_string())?;
    write_private(&kp, &key.to_bytes())?;
    std::fs::write(&pp, pk.to_bytes()).map_err(|e| e.to_string())?;
    Ok((key, pk))
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let tmp = path.with_extension("tmp");
    {
        let mut o = std::fs::OpenOptions::new();
        o.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
        let mut f = o.open(&tmp).map_err(|e| e.to_string())?;
        std::io::Write::write_all(&mut f, bytes).map_err(|e| e.to_string())?;
        f.sync_all().map_err(|e| e.to_string())?;
    }
    std::fs::rename(&tmp, path).map_err(|e| e.to_string())
}

/// Runs one decryption node (see `coterie_threshold::service`). Node 0 also serves clients
/// over mutual TLS at `args.client_listen`, with its party certificate; clients need a
/// certificate issued by the same CA (`coterie certs-client`).
pub async fn run_node<M: Mesh>(
    mesh: &mut M,
    config: &Path,
    args: &ServiceArgs,
) -> Result<String, String> {
    let id = mesh.id();
    let params = Params::paper();
    let dir = pdir(args, id);
    let store = PrepStore::open(&dir, Z2k::spdz2k_64(), id, mesh.n()).map_err(|e| e.to_string())?;
    let mut eng = coterie_spdz::Engine::new(store);
    let (key, pk) = load_or_generate_key(mesh, &mut eng, &dir, &params).await?;
    println!(
        "party {id}: key ready (n = {}, public key {} samples, digest {})",
        params.n,
        pk.b.len(),
        &blake3::hash(&pk.to_bytes()).to_hex()[..16]
    );
    let lt = params.lt().map_err(|e| e.to_string())?;
    let gdir = dir.join("gates");
    let gates = if gdir.join("header.bin").exists() {
        GateStore::open(&gdir, lt)
    } else {
        GateStore::create(&gdir, lt)
    }
    .map_err(|e| e.to_string())?;
    let cfg = NodeConfig {
        pool_target: args.pool,
        prep_chunk: args.chunk,
        max_batch: args.max_batch,
        idle: Duration::from_millis(200),
    };
    let mut node = Node::new(params, eng, key, gates, cfg).map_err(|e| e.to_string())?;
    let sync = node.sync_at_start(mesh).await.map_err(|e| e.to_string())?;
    println!("party {id}: start-up: {sync}");
    println!(
        "party {id}: gate store cursor {}, {} bundles ready, pool target {}",
        node.cursor().map_err(|e| e.to_string())?,
        node.available().map_err(|e| e.to_string())?,
        args.pool
    );
    let mut log = move |e: Event| match e {
        Event::Prepared { made, available } => {
            println!("party {id}: prepared {made} gate bundles, pool {available}")
        }
        Event::Decrypted {
            batch,
            available,
            micros,
        } => println!(
            "party {id}: decrypted a batch of {batch} in {:.2} ms, pool {available}",
            micros as f64 / 1e3
        ),
        Event::MaterialLow { triples, bits } => println!(
            "party {id}: SPDZ_2k material too low for more gates ({triples} triples, {bits} bits left); top-up paused"
        ),
    };
    if id != 0 {
        node.run_follower(mesh, &mut log)
            .await
            .map_err(|e| e.to_string())?;
        return Ok("threshold node stopped".into());
    }
    let (tx, rx) = mpsc::channel::<Request>(4096);
    let acceptor = server_tls(config)?;
    let listener = tokio::net::TcpListener::bind(&args.client_listen)
        .await
        .map_err(|e| format!("client listener {}: {e}", args.client_listen))?;
    println!(
        "party 0: serving clients on {} (mutual TLS)",
        args.client_listen
    );
    let last_request = Arc::new(std::sync::Mutex::new(std::time::Instant::now()));
    let server = tokio::spawn(serve_clients(listener, acceptor, tx, last_request.clone()));
    let abort = server.abort_handle();
    if args.idle_exit_s > 0 {
        // Stop serving after `idle_exit_s` without a request: the listener task (and with it
        // the request channel) ends, and the coordinator then stops every node cleanly.
        let idle = Duration::from_secs(args.idle_exit_s);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(200)).await;
                let t = last_request.lock().map(|t| t.elapsed()).unwrap_or_default();
                if t > idle {
                    break;
                }
            }
            abort.abort();
        });
    }
    let r = node.run_coordinator(mesh, rx, &mut log).await;
    r.map_err(|e| e.to_string())?;
    Ok("threshold node stopped".into())
}

fn tls_provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn ca_roots(roster: &coterie_net::Roster) -> Result<Arc<rustls::RootCertStore>, String> {
    let ca = roster
        .ca
        .clone()
        .ok_or("the config names no CA (clients are authenticated by the CA)")?;
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca).map_err(|e| e.to_string())?;
    Ok(Arc::new(roots))
}

fn server_tls(config: &Path) -> Result<tokio_rustls::TlsAcceptor, String> {
    let roster = coterie_net::Roster::load(config).map_err(|e| e.to_string())?;
    let roots = ca_roots(&roster)?;
    let provider = tls_provider();
    let verifier =
        rustls::server::WebPkiClientVerifier::builder_with_provider(roots, provider.clone())
            .build()
            .map_err(|e| e.to_string())?;
    let cert = roster.certs[0]
        .clone()
        .ok_or("no certificate for party 0 in the config")?;
    let key_path = roster.keys[0]
        .clone()
        .ok_or("no key for party 0 in the config")?;
    let key = coterie_net::config::load_key(&key_path).map_err(|e| e.to_string())?;
    let cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_client_cert_verifier(verifier)
        .with_single_cert(vec![cert], key)
        .map_err(|e| e.to_string())?;
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(cfg)))
}

async fn read_msg<R: AsyncReadExt + Unpin, T: serde::de::DeserializeOwned>(
    r: &mut R,
) -> Result<Option<T>, String> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e.to_string()),
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_CLIENT_FRAME {
        return Err(format!("frame of {len} bytes refused"));
    }
    let mut buf = vec![0u8; len];
    r.read_exact(&mut buf).await.map_err(|e| e.to_string())?;
    postcard::from_bytes(&buf)
        .map(Some)
        .map_err(|e| e.to_string())
}

async fn write_msg<W: AsyncWriteExt + Unpin, T: Serialize>(w: &mut W, m: &T) -> Result<(), String> {
    let body = postcard::to_allocvec(m).map_err(|e| e.to_string())?;
    w.write_all(&(body.len() as u32).to_le_bytes())
        .await
        .map_err(|e| e.to_string())?;
    w.write_all(&body).await.map_err(|e| e.to_string())?;
    w.flush().await.map_err(|e| e.to_string())
}

async fn serve_clients(
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

/// `coterie decrypt`: sends the ciphertext files to node 0 over mutual TLS (client certificate
/// `cert`/`key`, node certificate checked against the config's CA) and returns one line per file.
pub async fn client_decrypt(
    config: &Path,
    node: &str,
    cert: &Path,
    key: &Path,
    files: &[PathBuf],
) -> Result<Vec<(PathBuf, Result<u64, String>)>, String> {
    let roster = coterie_net::Roster::load(config).map_err(|e| e.to_string())?;
    let roots = ca_roots(&roster)?;
    let chain = coterie_net::config::load_cert_chain(cert).map_err(|e| e.to_string())?;
    let k = coterie_net::config::load_key(key).map_err(|e| e.to_string())?;
    let cfg = rustls::ClientConfig::builder_with_provider(tls_provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_client_auth_cert(chain, k)
        .map_err(|e| e.to_string())?;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(cfg));
    let tcp = tokio::net::TcpStream::connect(node)
        .await
        .map_err(|e| format!("node 0 at {node}: {e}"))?;
    let _ = tcp.set_nodelay(true);
    let name = rustls::pki_types::ServerName::try_from(coterie_net::config::party_name(0))
        .map_err(|e| e.to_string())?;
    let tls = connector
        .connect(name, tcp)
        .await
        .map_err(|e| format!("TLS with node 0: {e}"))?;
    let (mut rd, mut wr) = tokio::io::split(tls);
    let mut cts = Vec::new();
    for f in files {
        cts.push(std::fs::read(f).map_err(|e| format!("{}: {e}", f.display()))?);
    }
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
        Ok::<_, String>(wr)
    });
    let mut results: Vec<Option<Result<u64, String>>> = vec![None; files.len()];
    for _ in 0..files.len() {
        let r: ClientResponse = read_msg(&mut rd)
            .await?
            .ok_or("node 0 closed the connection")?;
        let slot = results
            .get_mut(r.id as usize)
            .ok_or("response for an unknown request")?;
        *slot = Some(r.result);
    }
    let _wr = sender.await.map_err(|e| e.to_string())??;
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

/// `coterie certs-client`: issues a client certificate `client-<name>.coterie` with the CA in
/// `dir` (`ca.crt`, `ca.key`, as written by `coterie certs`); writes `client-<name>.crt/.key`.
pub fn issue_client_cert(dir: &Path, name: &str) -> Result<(PathBuf, PathBuf), String> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Err("client name: letters, digits and '-' only".into());
    }
    let ca_pem = std::fs::read_to_string(dir.join("ca.crt")).map_err(|e| e.to_string())?;
    let ca_key = std::fs::read_to_string(dir.join("ca.key")).map_err(|e| e.to_string())?;
    let ca_key = rcgen::KeyPair::from_pem(&ca_key).map_err(|e| e.to_string())?;
    let issuer = rcgen::Issuer::from_ca_cert_pem(&ca_pem, ca_key).map_err(|e| e.to_string())?;
    let key = rcgen::KeyPair::generate().map_err(|e| e.to_string())?;
    let dns = format!("client-{name}.coterie");
    let mut params = rcgen::CertificateParams::new(vec![dns.clone()]).map_err(|e| e.to_string())?;
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, dns);
    let cert = params.signed_by(&key, &issuer).map_err(|e| e.to_string())?;
    let c = dir.join(format!("client-{name}.crt"));
    let k = dir.join(format!("client-{name}.key"));
    std::fs::write(&c, cert.pem()).map_err(|e| e.to_string())?;
    write_private(&k, key.serialize_pem().as_bytes())?;
    Ok((c, k))
}

/// `coterie threshold-encrypt`: encrypts `message` (one bit, `p = 2`) under the service's public
/// key file and writes the CTLW ciphertext.
pub fn encrypt_file(public_key: &Path, message: u64, out: &Path) -> Result<(), String> {
    let pk = PublicKey::from_bytes(&std::fs::read(public_key).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    let ct: LweCiphertext = pk
        .encrypt(message, 1, &mut rand::rng())
        .map_err(|e| e.to_string())?;
    std::fs::write(out, ct.to_bytes()).map_err(|e| e.to_string())
}
