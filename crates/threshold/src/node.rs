//! The threshold decryption service node and the demo flow, as run by `coterie party ...
//! threshold` and `coterie party ... threshold-demo` (the CLI only wires them to a mesh and
//! prints what they report).
//!
//! * [`run_node`]: one node of the decryption service on the SPDZ_2k store `DIR/party-<id>`
//!   (made by OT preprocessing for real runs, or by the **insecure** dealer for tests). On first
//!   start the nodes generate the key inside the ABB together (or one holder imports an
//!   existing LWE key, [`StartOptions::import_key`]) and write
//!   `DIR/party-<id>/threshold-key.bin` (the node's key shares, mode 0600) and
//!   `DIR/party-<id>/public-key.bin`; they keep a pool of gate bundles ready in
//!   `DIR/party-<id>/gates`. Node 0 coordinates (see [`crate::service`]) and serves clients over
//!   mutual TLS ([`crate::client`]).
//! * [`run_node_reconnecting`]: the same node, surviving the loss of a peer: it stays up, node 0
//!   answers clients with "the service is waiting for node i to reconnect", every node
//!   reconnects when the peer returns (or a node restarts) and resumes from its stores on disk,
//!   never reusing a gate. `coterie party ... threshold` runs this one.
//! * [`party_demo`]: the self-checking demo ([`crate::demo::run_demo_party`]) on this party's
//!   SPDZ_2k store.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use coterie_net::Mesh;
use coterie_spdz::{Kind, PrepStore, Z2k};
use tokio::sync::mpsc;

use crate::demo::DemoReport;
use crate::keys::{KeyDistribution, PublicKey, SharedKey};
use crate::service::{Event, Node, NodeConfig, Refusal, Request};
use crate::store::GateStore;
use crate::{Error, Params, Result};

/// Public samples in the service's public key (what sizes the material of its key generation:
/// `n + PK_SAMPLES · PK_NOISE_BITS` random bits, see [`crate::service::material_for`]).
/// It is the secure count for the paper's parameters, `n = 1024`
/// ([`PublicKey::secure_samples`]; see [`PublicKey`] for why fewer samples are insecure).
pub const PK_SAMPLES: usize = 1024;
/// Noise width, in bits, of each public sample of the service's public key: 45, the secure width
/// for the paper's parameters ([`PublicKey::secure_noise_bits`], about 128-bit security; the
/// source is in [`PublicKey`]'s docs).
pub const PK_NOISE_BITS: u32 = 45;
/// Samples of the key fingerprint a node makes instead of the public key when started with
/// [`StartOptions::no_public_key`] (`16 · PK_NOISE_BITS` = 720 random bits instead of 46,080;
/// see [`PublicKey`]'s "Key fingerprint").
pub const FINGERPRINT_SAMPLES: usize = 16;
/// Tag of the start-up exchange of the key state.
const TAG_KEY_STATE: u32 = 0x7E00_0000;
/// Mesh tag of the store-cursor exchange before the key step
/// (`service::sync_prep_cursors`).
const TAG_KEY_SYNC: u32 = 0x7E00_0011;
/// Tag of the echo of the key states (every node saw the same states).
const TAG_KEY_ECHO: u32 = 0x7E00_0013;
/// Largest key file a node reads.
const MAX_KEY_FILE: u64 = 256 << 20;
/// First pause between reconnection attempts ([`run_node_reconnecting`]); it doubles up to
/// [`RECONNECT_MAX_PAUSE`].
const RECONNECT_MIN_PAUSE: Duration = Duration::from_millis(200);
/// Longest pause between reconnection attempts.
const RECONNECT_MAX_PAUSE: Duration = Duration::from_secs(5);

/// Settings of a decryption node (`coterie party ... threshold`).
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

/// What a node reports while it starts and runs (the CLI prints one line per event).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeEvent {
    /// The key is loaded or was generated.
    KeyReady {
        /// LWE dimension.
        n: usize,
        /// Public samples in the public key (or in the key fingerprint, fewer than
        /// [`PK_SAMPLES`], with [`StartOptions::no_public_key`]).
        samples: usize,
        /// The first 16 hex digits of the public key file's BLAKE3 hash.
        digest: String,
    },
    /// What start-up did: the synchronisation ([`Node::sync_at_start`]), or, before
    /// [`NodeEvent::KeyReady`], that the key was imported by a party.
    StartUp(String),
    /// The gate store after start-up.
    Pool {
        /// Bundles handed out so far.
        cursor: u64,
        /// Bundles ready.
        available: u64,
        /// Bundles to keep ready.
        target: u64,
    },
    /// Node 0 serves clients at this address (mutual TLS).
    Serving {
        /// The bound address.
        addr: String,
    },
    /// An event of the running service.
    Service(Event),
    /// The session with the other nodes ended because node `node` was lost (it crashed, was
    /// killed, its link broke or it went silent); this node reconnects
    /// ([`run_node_reconnecting`]).
    PeerLost {
        /// The lost node.
        node: usize,
        /// What was observed.
        cause: String,
    },
    /// A reconnection attempt failed; the node keeps waiting for node `node` (and retries after
    /// a pause of at most 5 s).
    Waiting {
        /// The node waited for.
        node: usize,
        /// Why the attempt failed.
        cause: String,
    },
    /// Every node is connected again (`session` counts the reconnections); the start-up events
    /// ([`NodeEvent::KeyReady`], [`NodeEvent::StartUp`], [`NodeEvent::Pool`]) follow, as at a
    /// restart.
    Reconnected {
        /// Reconnections so far.
        session: u64,
    },
}

fn pdir(a: &ServiceArgs, id: usize) -> PathBuf {
    a.dir.join(format!("party-{id}"))
}

fn read_file(path: &Path) -> Result<Vec<u8>> {
    coterie_base::fsio::read_bounded(path, MAX_KEY_FILE).map_err(Error::File)
}

/// How a node starts besides its [`ServiceArgs`] ([`run_node_with`]). `Default` is what
/// [`run_node`] and [`run_node_until`] use: no import.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct StartOptions {
    /// The one holder of an existing LWE secret key passes its key file here to **import** the
    /// key at first start instead of generating one (every other node passes `None`). The file
    /// is coterie's raw key file ([`crate::keys::lwe_key_file_to_bytes`]) or a TFHE-rs 1.8
    /// `LweSecretKey<Vec<u64>>` in any of its encodings (detected,
    /// [`crate::keys::read_lwe_key_file`]); the key must be binary and of dimension
    /// [`Params::paper`]'s `n` = 1024. **The former holder of the file can still decrypt
    /// everything under the key**: an import migrates a key, it does not make it
    /// threshold-secure against whoever knew it. Destroy the file after the import. On a restart
    /// (a key already in `DIR/party-<id>`) an import is **refused** with an error: a key is
    /// never replaced; restart without the option.
    pub import_key: Option<PathBuf>,
    /// This node's party certificate (chain) file, in place of the one the party config names
    /// (the CLI's `--cert`): node 0's client listener presents it and the node signs its
    /// decryption statements with its key ([`crate::statement`]), as the mesh already uses it.
    /// Clients accept it only where the config binds it to this node (the CA and the name
    /// `party-<id>.coterie`, or the pinned certificate). `None`: the config's.
    pub cert: Option<PathBuf>,
    /// This node's private key file, in place of the one the party config names (the CLI's
    /// `--key`; see [`StartOptions::cert`]). `None`: the config's.
    pub key: Option<PathBuf>,
    /// At first start, make only a key fingerprint of [`FINGERPRINT_SAMPLES`] samples instead
    /// of the public key (the CLI's `--no-public-key`): for a service whose ciphertexts all come
    /// from elsewhere (an imported key's former holder, TFHE-rs), it saves 45,360 of the key
    /// step's 47,104 random bits. `public-key.bin` then holds the fingerprint, which identifies
    /// the key (start-up checks, statements) but refuses to encrypt. Every node must pass the
    /// same at first start (else all abort); on a restart the stored file decides.
    pub no_public_key: bool,
}

impl StartOptions {
    /// Options that import the key in `path` (this node is the key's holder).
    pub fn import_key(path: impl Into<PathBuf>) -> Self {
        Self {
            import_key: Some(path.into()),
            ..Self::default()
        }
    }
}

/// What the nodes exchange at start-up: whether this node has a key, its public key's hash,
/// whether it imports a key, and whether it makes a key fingerprint instead of a public key.
type KeyState = (bool, [u8; 32], bool, bool);

/// Aborts the mesh with `reason` and returns the error `e`.
async fn refuse<M: Mesh>(mesh: &mut M, e: Error) -> Error {
    mesh.abort(&e.to_string()).await;
    e
}

/// Loads this node's key shares and public key, or, the first time (at every node together),
/// makes the key inside the ABB — generated from random bits, or imported by its single holder
/// (the node with `import`) — and its public samples, and writes them. Returns the key, the
/// public key and, when the key was made now by an import, the holder.
async fn load_or_generate_key<M: Mesh>(
    mesh: &mut M,
    eng: &mut coterie_spdz::Engine<Z2k, PrepStore<Z2k>>,
    dir: &Path,
    params: &Params,
    import: Option<&Path>,
    no_public_key: bool,
) -> Result<(SharedKey, PublicKey, Option<usize>)> {
    let kp = dir.join("threshold-key.bin");
    let pp = dir.join("public-key.bin");
    let have = kp.exists() && pp.exists();
    // The holder reads and checks its key file before anything is sent; a key is never
    // replaced.
    let to_import = match import {
        Some(f) if have => {
            let e = Error::Key(format!(
                "--import-key {}: this node already has a key ({}); an import never replaces a key: restart without --import-key (and destroy the key file)",
                f.display(),
                kp.display()
            ));
            return Err(refuse(mesh, e).await);
        }
        Some(f) => {
            let read = read_file(f).and_then(|bytes| {
                let bytes = zeroize::Zeroizing::new(bytes);
                crate::keys::import_key_file(&bytes, params.n)
            });
            match read {
                Ok(k) => Some(k),
                Err(e) => {
                    let e = Error::Key(format!("--import-key {}: {e}", f.display()));
                    return Err(refuse(mesh, e).await);
                }
            }
        }
        None => None,
    };
    let digest: [u8; 32] = if have {
        *blake3::hash(&read_file(&pp)?).as_bytes()
    } else {
        [0; 32]
    };
    let mine: KeyState = (have, digest, to_import.is_some(), no_public_key);
    let all: Vec<KeyState> = mesh
        .exchange_all_tagged(TAG_KEY_STATE, &mine)
        .await
        .map_err(coterie_spdz::Error::from)?;
    if let Some(j) = all.iter().position(|x| (x.0, x.1) != (have, digest)) {
        mesh.abort("nodes disagree on the key state (some have a key, or different public keys)")
            .await;
        return Err(Error::Abort {
            check: "nodes agree on the key state (some have a key, or different public keys)",
            party: j,
        });
    }
    if let Some(j) = all.iter().position(|x| !have && x.3 != no_public_key) {
        mesh.abort("nodes disagree on --no-public-key at first start")
            .await;
        return Err(Error::Abort {
            check: "nodes agree on --no-public-key at first start",
            party: j,
        });
    }
    let importers: Vec<usize> = (0..all.len()).filter(|&j| all[j].2).collect();
    // a second importer, or an importer although every node has a key
    let extra = if have {
        importers.first()
    } else {
        importers.get(1)
    };
    if let Some(&j) = extra {
        mesh.abort("at most one node imports a key, and only at first start")
            .await;
        return Err(Error::Abort {
            check: "at most one node imports a key, and only at first start",
            party: j,
        });
    }
    // Echo: every node saw the same states (a node that told some nodes it imports and others
    // that it does not is caught here, before any key material moves).
    let seen = *blake3::hash(
        &coterie_base::envelope::seal(*b"THks", 1, &all)
            .map_err(|e| Error::Invariant(format!("key state: {e}")))?,
    )
    .as_bytes();
    let echoes: Vec<[u8; 32]> = mesh
        .exchange_all_tagged(TAG_KEY_ECHO, &seen)
        .await
        .map_err(coterie_spdz::Error::from)?;
    if let Some(j) = echoes.iter().position(|x| *x != seen) {
        mesh.abort("nodes saw different key states").await;
        return Err(Error::Abort {
            check: "nodes saw the same key states (who imports)",
            party: j,
        });
    }
    if have {
        let key = SharedKey::from_bytes(&read_file(&kp)?)?;
        let pk = PublicKey::from_bytes(&read_file(&pp)?)?;
        return Ok((key, pk, None));
    }
    let holder = importers.first().copied();
    let key = match holder {
        Some(h) => {
            // The holder's n input masks, and the public samples' noise bits.
            let p = eng.prep_mut();
            let masks = p.available(Kind::InputMasks(h)).map_err(Error::from)?;
            let bits = p.available(Kind::Bits).map_err(Error::from)?;
            let samples = if no_public_key {
                FINGERPRINT_SAMPLES
            } else {
                PK_SAMPLES
            };
            let need_bits = (samples * PK_NOISE_BITS as usize) as u64;
            if masks < params.n as u64 || bits < need_bits {
                let e = Error::Key(format!(
                    "not enough SPDZ_2k material to import the key of party {h}: {masks} input masks of party {h} and {bits} bits left, {} and {need_bits} needed",
                    params.n
                ));
                return Err(refuse(mesh, e).await);
            }
            let mine = to_import.as_ref().map(crate::keys::KeyToImport::coeffs);
            SharedKey::import_from_single_holder(eng, mesh, h, mine, params.n).await?
        }
        None => SharedKey::generate(eng, params.n, KeyDistribution::Binary)?,
    };
    drop(to_import);
    // The seed of the public samples' masks: agreed by a commit-then-open coin toss.
    let coin: [u8; 32] = rand::random();
    let coins: Vec<[u8; 32]> =
        coterie_net::commit::commit_open_all(mesh, "coterie threshold public-key seed", &coin)
            .await
            .map_err(coterie_spdz::Error::from)?;
    let mut h = blake3::Hasher::new();
    coins.iter().for_each(|c| {
        h.update(c);
    });
    let seed = *h.finalize().as_bytes();
    let pk = if no_public_key {
        PublicKey::fingerprint_generate(
            eng,
            mesh,
            params,
            &key,
            seed,
            FINGERPRINT_SAMPLES,
            PK_NOISE_BITS,
        )
        .await?
    } else {
        PublicKey::generate(eng, mesh, params, &key, seed, PK_SAMPLES, PK_NOISE_BITS).await?
    };
    coterie_base::fsio::write_atomic_private(&kp, &key.to_bytes()).map_err(Error::File)?;
    coterie_base::fsio::write_atomic(&pp, &pk.to_bytes()).map_err(Error::File)?;
    Ok((key, pk, holder))
}

/// Runs one decryption node (see [`crate::service`]) on the SPDZ_2k store
/// `args.dir/party-<id>` until the coordinator stops (node 0: when its client listener ends,
/// after `args.idle_exit_s` without a request) or a failure. Node 0 also serves clients over
/// mutual TLS at `args.client_listen` with its party certificate from the party `config`
/// ([`crate::client::bind_server`]); clients need a certificate issued by the same CA. Reports
/// progress through `events`.
///
/// # Example
///
/// ```no_run
/// use coterie_net::{MeshOptions, TlsMesh};
/// use coterie_threshold::node::{ServiceArgs, run_node};
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// let config = std::path::Path::new("certs/party.toml");
/// let mut mesh = TlsMesh::connect_with_config(config, 0, None, None, MeshOptions::default()).await?;
/// let args = ServiceArgs {
///     dir: "stores".into(),
///     pool: 64,
///     chunk: 8,
///     max_batch: 1024,
///     client_listen: "127.0.0.1:47900".into(),
///     idle_exit_s: 0,
/// };
/// run_node(&mut mesh, config, &args, &mut |e| println!("{e:?}")).await?;
/// # Ok(()) }
/// ```
pub async fn run_node<M: Mesh + 'static>(
    mesh: &mut M,
    config: &Path,
    args: &ServiceArgs,
    events: &mut (dyn FnMut(NodeEvent) + Send),
) -> Result<()> {
    run_node_until(mesh, config, args, events, std::future::pending()).await
}

/// [`run_node`] that also stops cleanly when `stop` completes: node 0 then takes no more
/// requests (it closes its client listener, and clients still connected get "node stopped"
/// for what they send), answers the requests it has taken, and tells the other nodes to stop
/// (as after `args.idle_exit_s` without a request); every node returns `Ok`. `stop` is only watched
/// by node 0 once it serves clients (a stop requested earlier takes effect then); the other
/// nodes ignore it and stop when node 0 tells them. [`run_node`] is this with a `stop` that
/// never completes. Used by in-process services (the Python package's local service).
///
/// # Example
///
/// ```no_run
/// use coterie_net::{MeshOptions, TlsMesh};
/// use coterie_threshold::node::{ServiceArgs, run_node_until};
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// let config = std::path::Path::new("certs/party.toml");
/// let mut mesh = TlsMesh::connect_with_config(config, 0, None, None, MeshOptions::default()).await?;
/// let args = ServiceArgs {
///     dir: "stores".into(),
///     pool: 64,
///     chunk: 8,
///     max_batch: 1024,
///     client_listen: "127.0.0.1:47900".into(),
///     idle_exit_s: 0,
/// };
/// let (tx, rx) = tokio::sync::oneshot::channel::<()>();
/// // ... later, `tx.send(())` stops the service
/// let stop = async move {
///     let _ = rx.await;
/// };
/// run_node_until(&mut mesh, config, &args, &mut |e| println!("{e:?}"), stop).await?;
/// # drop(tx); Ok(()) }
/// ```
pub async fn run_node_until<M: Mesh + 'static>(
    mesh: &mut M,
    config: &Path,
    args: &ServiceArgs,
    events: &mut (dyn FnMut(NodeEvent) + Send),
    stop: impl std::future::Future<Output = ()>,
) -> Result<()> {
    run_node_with(mesh, config, args, &StartOptions::default(), events, stop).await
}

/// [`run_node_until`] with [`StartOptions`]: at first start, the node whose `start` names a
/// key file imports that key (see [`StartOptions::import_key`]) instead of the nodes generating
/// one; the key shares and the public key made from it are written exactly as for a generated
/// key, so restarts load them. Every node learns at start-up who imports (exactly one node, or
/// nobody: the key is generated); nodes that disagree abort naming a party, and so does a second
/// importer, an import while a key exists (refused: a key is never replaced), a key file that
/// is not a binary key of dimension `n`, and a store without the import's material (`n` input
/// masks of the holder, [`crate::service::material_for_import`]). Reports
/// [`NodeEvent::StartUp`] naming the holder after an import.
///
/// # Example
///
/// ```no_run
/// use coterie_net::{MeshOptions, TlsMesh};
/// use coterie_threshold::node::{ServiceArgs, StartOptions, run_node_with};
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// let config = std::path::Path::new("certs/party.toml");
/// let mut mesh = TlsMesh::connect_with_config(config, 2, None, None, MeshOptions::default()).await?;
/// let args = ServiceArgs {
///     dir: "stores".into(),
///     pool: 64,
///     chunk: 8,
///     max_batch: 1024,
///     client_listen: "127.0.0.1:47900".into(),
///     idle_exit_s: 0,
/// };
/// // this node holds the TFHE-rs key file; the other nodes pass StartOptions::default()
/// let start = StartOptions::import_key("lwe-key.bin");
/// run_node_with(&mut mesh, config, &args, &start, &mut |e| println!("{e:?}"), std::future::pending()).await?;
/// # Ok(()) }
/// ```
pub async fn run_node_with<M: Mesh + 'static>(
    mesh: &mut M,
    config: &Path,
    args: &ServiceArgs,
    start: &StartOptions,
    events: &mut (dyn FnMut(NodeEvent) + Send),
    stop: impl std::future::Future<Output = ()>,
) -> Result<()> {
    run_node_with_lanes(mesh, Vec::new(), config, args, start, events, stop).await
}

/// [`run_node_with`] with up to `lanes.len()` batches decrypted at once, each on a lane mesh of
/// its own beside `mesh` (the control mesh), so that one batch's computing overlaps another's
/// transfers ([`Node::coordinate_in_lanes`]). Every node must pass the same number of lanes,
/// connected in the same order ([`coterie_net::TlsMesh::connect_lanes`]); none is
/// [`run_node_with`]. The lanes' meshes are closed when the node stops cleanly. A node that fails
/// at start-up on an error of its own (a refusal, its stores, its client listener) aborts the
/// control mesh and every lane with the error's text, so the other nodes report why.
///
/// # Example
///
/// ```no_run
/// use coterie_net::{MeshOptions, TlsMesh};
/// use coterie_threshold::node::{ServiceArgs, StartOptions, run_node_with_lanes};
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// let config = std::path::Path::new("certs/party.toml");
/// let opts = MeshOptions::default();
/// let mut mesh = TlsMesh::connect_with_config(config, 1, None, None, opts.clone()).await?;
/// // 2 lanes beside the control mesh (every node asks for the same 3)
/// let lanes = mesh.connect_lanes(config, None, None, &opts, 3).await?;
/// let args = ServiceArgs {
///     dir: "stores".into(),
///     pool: 64,
///     chunk: 8,
///     max_batch: 1024,
///     client_listen: "127.0.0.1:47900".into(),
///     idle_exit_s: 0,
/// };
/// run_node_with_lanes(
///     &mut mesh,
///     lanes,
///     config,
///     &args,
///     &StartOptions::default(),
///     &mut |e| println!("{e:?}"),
///     std::future::pending(),
/// )
/// .await?;
/// # Ok(()) }
/// ```
pub async fn run_node_with_lanes<M: Mesh + 'static>(
    mesh: &mut M,
    lanes: Vec<M>,
    config: &Path,
    args: &ServiceArgs,
    start: &StartOptions,
    events: &mut (dyn FnMut(NodeEvent) + Send),
    stop: impl std::future::Future<Output = ()>,
) -> Result<()> {
    let id = mesh.id();
    let mut node = match open_session(mesh, config, args, start, events).await {
        Ok(node) => node,
        Err(e) => return Err(abort_session(mesh, lanes, e).await),
    };
    if id != 0 {
        let mut log = |e: Event| events(NodeEvent::Service(e));
        let lanes = node.follow_in_lanes(mesh, lanes, &mut log).await?;
        return close_lanes(lanes).await;
    }
    let (tx, rx) = mpsc::channel::<Request>(4096);
    let server = match bind_client_listener(config, args, start, events).await {
        Ok(s) => s,
        Err(e) => return Err(abort_session(mesh, lanes, e).await),
    };
    let last_request = Arc::new(std::sync::Mutex::new(std::time::Instant::now()));
    let server = tokio::spawn(crate::client::serve_clients(
        server,
        tx,
        last_request.clone(),
    ));
    let abort = server.abort_handle();
    let abort_on_stop = server.abort_handle();
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
    // The coordinator reads the requests through a forwarder that ends at `stop` (or when the
    // listener's queue closes): the coordinator then sees its queue closed even while clients
    // stay connected, answers what it holds, and stops every node.
    let (ftx, frx) = mpsc::channel::<Request>(4096);
    let forwarder = async move {
        let mut rx = rx;
        tokio::select! {
            () = async {
                while let Some(r) = rx.recv().await {
                    if ftx.send(r).await.is_err() {
                        break;
                    }
                }
            } => {}
            () = stop => {}
        }
        drop(ftx);
    };
    let mut log = |e: Event| events(NodeEvent::Service(e));
    let mut frx = frx;
    let coordinator = node.coordinate_in_lanes(mesh, lanes, &mut frx, &mut log);
    tokio::pin!(coordinator);
    let lanes = tokio::select! {
        r = &mut coordinator => r?,
        () = forwarder => {
            // No new clients either (requests already forwarded are answered).
            abort_on_stop.abort();
            coordinator.await?
        }
    };
    close_lanes(lanes).await
}

/// Ends a session of [`run_node_with_lanes`] that failed with `e` before its loop took the lanes:
/// unless a peer was lost or aborted (that peer tells everyone), `mesh` and every lane's mesh are
/// aborted with `e`'s text before the lanes are dropped, so that every peer reads why this node
/// stops (a lane dropped bare first would make it look lost). Returns `e`.
async fn abort_session<M: Mesh>(mesh: &mut M, lanes: Vec<M>, e: Error) -> Error {
    let peer_aborted = matches!(
        &e,
        Error::Spdz(coterie_spdz::Error::Net(coterie_net::Error::Aborted { party, .. }))
            if *party != mesh.id()
    );
    if e.lost_peer().is_none() && !peer_aborted {
        let reason = e.to_string();
        mesh.abort(&reason).await;
        for mut lane in lanes {
            lane.abort(&reason).await;
        }
    }
    e
}

/// Closes the lanes' meshes after a clean stop (the first error is returned).
async fn close_lanes<M: Mesh>(lanes: Vec<M>) -> Result<()> {
    let mut first = Ok(());
    for m in lanes {
        if let Err(e) = m.close().await
            && first.is_ok()
        {
            first = Err(Error::from(coterie_spdz::Error::from(e)));
        }
    }
    first
}

/// Node 0's client listener at `args.client_listen`, with the certificate and key of `start`
/// (or the config's); reports [`NodeEvent::Serving`] with the bound address.
async fn bind_client_listener(
    config: &Path,
    args: &ServiceArgs,
    start: &StartOptions,
    events: &mut (dyn FnMut(NodeEvent) + Send),
) -> Result<coterie_net::ChannelServer> {
    let server = crate::client::bind_server_with(
        config,
        &args.client_listen,
        start.cert.as_deref(),
        start.key.as_deref(),
    )
    .await?;
    let addr = server
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| args.client_listen.clone());
    events(NodeEvent::Serving { addr });
    Ok(server)
}

/// Starts a session of this node on a connected `mesh`, exactly as a (re)start does: opens the
/// SPDZ_2k store and the gate store from disk, brings every node's store cursors to the furthest
/// position (`service::sync_prep_cursors`; a first key step cut off half-way leaves
/// them apart), loads the key (or, the first time, makes it) through the start-up exchange, and
/// aligns the cursors again with the gate stores ([`Node::sync_at_start`]). Nothing of an
/// earlier session's memory is kept.
async fn open_session<M: Mesh>(
    mesh: &mut M,
    config: &Path,
    args: &ServiceArgs,
    start: &StartOptions,
    events: &mut (dyn FnMut(NodeEvent) + Send),
) -> Result<Node> {
    let id = mesh.id();
    let params = Params::paper();
    let dir = pdir(args, id);
    let store = PrepStore::open(&dir, Z2k::spdz2k_64(), id, mesh.n())?;
    let mut eng = coterie_spdz::Engine::new(store);
    // Aligned material before the key step: one cut off half-way left the cursors apart.
    let skipped = crate::service::sync_prep_cursors(&mut eng, mesh, TAG_KEY_SYNC).await?;
    if !skipped.is_empty() {
        events(NodeEvent::StartUp(format!(
            "before the key step: {}",
            skipped.join("; ")
        )));
    }
    let (key, pk, holder) = load_or_generate_key(
        mesh,
        &mut eng,
        &dir,
        &params,
        start.import_key.as_deref(),
        start.no_public_key,
    )
    .await?;
    if let Some(h) = holder {
        events(NodeEvent::StartUp(format!(
            "key imported from party {h}'s key file (whoever held that file can still decrypt \
             everything under this key)"
        )));
    }
    events(NodeEvent::KeyReady {
        n: params.n,
        samples: pk.b.len(),
        digest: blake3::hash(&pk.to_bytes()).to_hex()[..16].to_string(),
    });
    let lt = params.lt()?;
    let gdir = dir.join("gates");
    let gates = if gdir.join("header.bin").exists() {
        GateStore::open(&gdir, lt)
    } else {
        GateStore::create(&gdir, lt)
    }?;
    let cfg = NodeConfig {
        pool_target: args.pool,
        prep_chunk: args.chunk,
        max_batch: args.max_batch,
        ..NodeConfig::default()
    };
    // Statements of each decryption are signed with this party's certificate and key (the
    // config's, or the overrides in `start`, as node 0's client listener uses them), under the
    // public key's digest.
    let signer = crate::statement::Signer::from_config(
        config,
        id,
        start.cert.as_deref(),
        start.key.as_deref(),
        *blake3::hash(&pk.to_bytes()).as_bytes(),
    )?;
    let mut node = Node::new(params, eng, key, gates, cfg, signer)?;
    let sync = node.sync_at_start(mesh).await?;
    events(NodeEvent::StartUp(sync));
    events(NodeEvent::Pool {
        cursor: node.cursor()?,
        available: node.available()?,
        target: args.pool,
    });
    Ok(node)
}

/// [`run_node_with`] for a node that **survives the loss of a peer**: `connect` makes a fresh
/// mesh (the first call, and again after each loss). When a peer is lost
/// ([`Error::lost_peer`]: a crash, a kill, a broken link, a peer silent past the deadline) the
/// node reports [`NodeEvent::PeerLost`], drops the mesh and calls `connect` until it succeeds,
/// pausing between failed attempts (200 ms, doubling to at most 5 s, [`NodeEvent::Waiting`]).
/// Meanwhile node 0 keeps its client listener and answers every request at once with the error
/// "the service is waiting for node i to reconnect (...); retry later"; the requests node 0 had
/// taken when the peer was lost get "node i was lost while this request was being served ...".
/// Once reconnected ([`NodeEvent::Reconnected`]) every node starts a new session exactly as at a
/// restart: the stores are reopened from disk, the key is loaded through the start-up exchange
/// and the cursors of the gate stores and SPDZ_2k material are brought to the furthest position
/// of any node ([`Node::sync_at_start`]), so a gate bundle or triple taken before the loss is
/// never used again, and no state of the failed session is reused. A lost node that restarts
/// (the same command) simply joins; so does node 0, whose clients cannot connect while it is
/// down.
///
/// Anything else ends the node with its error as [`run_node_with`] does: an abort or a failed
/// check (MAC, consistency, a malformed control message), a local failure, or a failed first
/// `connect`; so does a `connect` error that is not about reaching a peer (a bad
/// configuration). `start` applies to the first session; a later one imports only while this
/// node has no key yet. `stop` (watched by node 0 once it serves clients, as in
/// [`run_node_until`]) stops every node cleanly while all are connected; while node 0 waits for
/// a lost node, a stop (or `args.idle_exit_s` without a request) ends node 0 alone, and the other
/// nodes keep waiting for it. The node closes its last mesh when it stops cleanly.
///
/// # Example
///
/// ```no_run
/// use coterie_net::{MeshOptions, TlsMesh};
/// use coterie_threshold::node::{ServiceArgs, StartOptions, run_node_reconnecting};
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// let config = std::path::Path::new("certs/party.toml");
/// let connect = || TlsMesh::connect_with_config(config, 1, None, None, MeshOptions::default());
/// let args = ServiceArgs {
///     dir: "stores".into(),
///     pool: 64,
///     chunk: 8,
///     max_batch: 1024,
///     client_listen: "127.0.0.1:47900".into(),
///     idle_exit_s: 0,
/// };
/// run_node_reconnecting(
///     connect,
///     config,
///     &args,
///     &StartOptions::default(),
///     &mut |e| println!("{e:?}"),
///     std::future::pending(),
/// )
/// .await?;
/// # Ok(()) }
/// ```
pub async fn run_node_reconnecting<M, C, F, S>(
    mut connect: C,
    config: &Path,
    args: &ServiceArgs,
    start: &StartOptions,
    events: &mut (dyn FnMut(NodeEvent) + Send),
    stop: S,
) -> Result<()>
where
    M: Mesh + 'static,
    C: FnMut() -> F,
    F: std::future::Future<Output = coterie_net::Result<M>>,
    S: std::future::Future<Output = ()> + Send + 'static,
{
    let with_no_lanes = move || {
        let f = connect();
        async move { f.await.map(|m| (m, Vec::new())) }
    };
    run_node_reconnecting_in_lanes(with_no_lanes, config, args, start, events, stop).await
}

/// [`run_node_reconnecting`] with lanes ([`run_node_with_lanes`]): `connect` makes the control
/// mesh and the lanes' meshes together (the first call, and again after each loss; e.g.
/// [`coterie_net::TlsMesh::connect_with_config`] and then
/// [`coterie_net::TlsMesh::connect_lanes`]), and every node must make the same number of
/// lanes. A peer lost on any lane is handled as one lost on the control mesh.
///
/// # Example
///
/// ```no_run
/// use coterie_net::{MeshOptions, TlsMesh};
/// use coterie_threshold::node::{ServiceArgs, StartOptions, run_node_reconnecting_in_lanes};
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// let config = std::path::Path::new("certs/party.toml");
/// let opts = MeshOptions::default();
/// let connect = || {
///     let opts = opts.clone();
///     async move {
///         let mut m = TlsMesh::connect_with_config(config, 1, None, None, opts.clone()).await?;
///         let lanes = m.connect_lanes(config, None, None, &opts, 3).await?;
///         Ok((m, lanes))
///     }
/// };
/// let args = ServiceArgs {
///     dir: "stores".into(),
///     pool: 64,
///     chunk: 8,
///     max_batch: 1024,
///     client_listen: "127.0.0.1:47900".into(),
///     idle_exit_s: 0,
/// };
/// run_node_reconnecting_in_lanes(
///     connect,
///     config,
///     &args,
///     &StartOptions::default(),
///     &mut |e| println!("{e:?}"),
///     std::future::pending(),
/// )
/// .await?;
/// # Ok(()) }
/// ```
pub async fn run_node_reconnecting_in_lanes<M, C, F, S>(
    mut connect: C,
    config: &Path,
    args: &ServiceArgs,
    start: &StartOptions,
    events: &mut (dyn FnMut(NodeEvent) + Send),
    stop: S,
) -> Result<()>
where
    M: Mesh + 'static,
    C: FnMut() -> F,
    F: std::future::Future<Output = coterie_net::Result<(M, Vec<M>)>>,
    S: std::future::Future<Output = ()> + Send + 'static,
{
    let (mut mesh, mut lanes) = connect().await.map_err(coterie_spdz::Error::from)?;
    let id = mesh.id();
    let key_file = pdir(args, id).join("threshold-key.bin");
    let mut stop = Some(stop);
    let mut serving: Option<Serving> = None;
    let mut session = 0u64;
    loop {
        // A key is imported at most once: a later session imports only while no key was written.
        let mut opts = start.clone();
        if session > 0 && key_file.exists() {
            opts.import_key = None;
        }
        let r = run_session(
            &mut mesh,
            std::mem::take(&mut lanes),
            config,
            args,
            &opts,
            events,
            &mut serving,
            &mut stop,
        )
        .await;
        let (lost, cause) = match r {
            Ok(()) => {
                return mesh
                    .close()
                    .await
                    .map_err(|e| Error::from(coterie_spdz::Error::from(e)));
            }
            Err(e) => match e.lost_peer() {
                Some(j) => (j, e.to_string()),
                None => return Err(e),
            },
        };
        events(NodeEvent::PeerLost {
            node: lost,
            cause: cause.clone(),
        });
        drop(mesh);
        let requests = serving.as_mut().map(|s| &mut s.requests);
        (mesh, lanes) = match reconnect(&mut connect, id, lost, cause, requests, events).await? {
            Some(m) => m,
            None => return Ok(()),
        };
        session += 1;
        events(NodeEvent::Reconnected { session });
    }
}

/// Node 0's client side across sessions: the queue of requests from its client listener, and
/// the tasks that feed it (stopped when this is dropped).
struct Serving {
    requests: mpsc::Receiver<Request>,
    tasks: Vec<tokio::task::AbortHandle>,
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.tasks.iter().for_each(tokio::task::AbortHandle::abort);
    }
}

impl Serving {
    /// Binds the client listener and starts serving clients into a queue that ends at `stop`,
    /// or when the listener ends (after `args.idle_exit_s` without a request).
    async fn start<S>(
        config: &Path,
        args: &ServiceArgs,
        start: &StartOptions,
        stop: Option<S>,
        events: &mut (dyn FnMut(NodeEvent) + Send),
    ) -> Result<Self>
    where
        S: std::future::Future<Output = ()> + Send + 'static,
    {
        let server = bind_client_listener(config, args, start, events).await?;
        let (tx, rx) = mpsc::channel::<Request>(4096);
        let last_request = Arc::new(std::sync::Mutex::new(std::time::Instant::now()));
        let listener = tokio::spawn(crate::client::serve_clients(
            server,
            tx,
            last_request.clone(),
        ));
        let mut tasks = vec![listener.abort_handle()];
        if args.idle_exit_s > 0 {
            let idle = Duration::from_secs(args.idle_exit_s);
            let abort = listener.abort_handle();
            let watcher = tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    let t = last_request.lock().map(|t| t.elapsed()).unwrap_or_default();
                    if t > idle {
                        break;
                    }
                }
                abort.abort();
            });
            tasks.push(watcher.abort_handle());
        }
        // The queue the coordinator reads ends at `stop` even while clients stay connected.
        let (ftx, frx) = mpsc::channel::<Request>(4096);
        let abort = listener.abort_handle();
        let forward = async move {
            let mut rx = rx;
            while let Some(r) = rx.recv().await {
                if ftx.send(r).await.is_err() {
                    break;
                }
            }
        };
        let forwarder = tokio::spawn(async move {
            match stop {
                Some(stop) => {
                    tokio::select! {
                        () = forward => {}
                        () = stop => {}
                    }
                }
                None => forward.await,
            }
            abort.abort();
        });
        tasks.push(forwarder.abort_handle());
        Ok(Self {
            requests: frx,
            tasks,
        })
    }
}

/// One session of [`run_node_reconnecting`] on a connected mesh: start-up from disk, then the
/// follower's loop, or at node 0 the coordinator's on the queue of `serving` (set up by the first
/// session of node 0).
#[allow(clippy::too_many_arguments)]
async fn run_session<M, S>(
    mesh: &mut M,
    lanes: Vec<M>,
    config: &Path,
    args: &ServiceArgs,
    start: &StartOptions,
    events: &mut (dyn FnMut(NodeEvent) + Send),
    serving: &mut Option<Serving>,
    stop: &mut Option<S>,
) -> Result<()>
where
    M: Mesh + 'static,
    S: std::future::Future<Output = ()> + Send + 'static,
{
    let id = mesh.id();
    let mut node = open_session(mesh, config, args, start, events).await?;
    if id != 0 {
        let mut log = |e: Event| events(NodeEvent::Service(e));
        let lanes = node.follow_in_lanes(mesh, lanes, &mut log).await?;
        return close_lanes(lanes).await;
    }
    let serving = match serving {
        Some(s) => s,
        None => serving.insert(Serving::start(config, args, start, stop.take(), events).await?),
    };
    let mut log = |e: Event| events(NodeEvent::Service(e));
    let lanes = node
        .coordinate_in_lanes(mesh, lanes, &mut serving.requests, &mut log)
        .await?;
    close_lanes(lanes).await
}

/// Reconnects after node `lost` was lost: calls `connect` until it succeeds, pausing between
/// failed attempts, while node 0 (`requests` given) answers every request with an error naming
/// the node it waits for. A `connect` error that is not about reaching a peer ends the node.
/// Returns `None` when the request queue closed meanwhile (a stop).
async fn reconnect<T, C, F>(
    connect: &mut C,
    me: usize,
    lost: usize,
    cause: String,
    mut requests: Option<&mut mpsc::Receiver<Request>>,
    events: &mut (dyn FnMut(NodeEvent) + Send),
) -> Result<Option<T>>
where
    C: FnMut() -> F,
    F: std::future::Future<Output = coterie_net::Result<T>>,
{
    let (mut waiting, mut cause) = (lost, cause);
    let mut pause = RECONNECT_MIN_PAUSE;
    loop {
        let why = format!(
            "the service is waiting for node {waiting} to reconnect ({cause}); retry later"
        );
        let Some(r) = refusing(connect(), requests.as_deref_mut(), &why, events).await else {
            return Ok(None);
        };
        match r {
            Ok(m) => return Ok(Some(m)),
            Err(e) if crate::error::net_lost_peer(&e).is_some() => {
                if let Some(j) = e.party().filter(|&j| j != me) {
                    waiting = j;
                }
                cause = e.to_string();
                events(NodeEvent::Waiting {
                    node: waiting,
                    cause: cause.clone(),
                });
            }
            Err(e) => return Err(coterie_spdz::Error::from(e).into()),
        }
        let why = format!(
            "the service is waiting for node {waiting} to reconnect ({cause}); retry later"
        );
        let paused = tokio::time::sleep(pause);
        if refusing(paused, requests.as_deref_mut(), &why, events)
            .await
            .is_none()
        {
            return Ok(None);
        }
        pause = (pause * 2).min(RECONNECT_MAX_PAUSE);
    }
}

/// Runs `fut` to completion while answering every request on `requests` (if given) at once with
/// the error `why`. `None` if the queue closed first.
async fn refusing<T>(
    fut: impl std::future::Future<Output = T>,
    requests: Option<&mut mpsc::Receiver<Request>>,
    why: &str,
    events: &mut (dyn FnMut(NodeEvent) + Send),
) -> Option<T> {
    let Some(rx) = requests else {
        return Some(fut.await);
    };
    tokio::pin!(fut);
    loop {
        tokio::select! {
            biased;
            r = &mut fut => return Some(r),
            req = rx.recv() => match req {
                Some(req) => {
                    // this request and any others already queued, in one report
                    let mut count = 0;
                    let mut next = Some(req);
                    while let Some(req) = next {
                        let _ = req.reply.send(Err(why.to_string()));
                        count += 1;
                        next = rx.try_recv().ok();
                    }
                    events(NodeEvent::Service(Event::Refused {
                        reason: Refusal::Waiting,
                        count,
                    }));
                }
                None => return None,
            },
        }
    }
}

/// Runs the demo ([`crate::demo::run_demo_party`], the paper's parameters, `count`
/// ciphertexts, checked) at this party on its SPDZ_2k store at `dir` (`coterie party ...
/// threshold-demo`); the material one party needs is [`crate::demo::demo_counts`].
///
/// # Example
///
/// ```no_run
/// # async fn f(mesh: &mut coterie_net::TlsMesh) -> coterie_threshold::Result<()> {
/// let r = coterie_threshold::node::party_demo(mesh, "stores/party-0".as_ref(), 8).await?;
/// assert_eq!(r.messages, r.pipelined);
/// # Ok(()) }
/// ```
pub async fn party_demo<M: Mesh>(mesh: &mut M, dir: &Path, count: usize) -> Result<DemoReport> {
    let store = PrepStore::open(dir, Z2k::spdz2k_64(), mesh.id(), mesh.n())?;
    crate::demo::run_demo_party(mesh, store, count).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LweCiphertext;
    use coterie_net::{InMemoryMesh, MeshOptions, certs};
    use coterie_spdz::Counts;
    use rand::Rng;

    /// A small pool, node 0 listening on a free loopback port, stopping after `idle_exit_s`.
    /// **Insecure** dealer material `counts` for `n` parties in `dir/stores` (tests only).
    fn deal_insecure(dir: &Path, n: usize, counts: Counts) {
        coterie_spdz::tools::insecure_deal_counts_to_stores(
            &dir.join("stores"),
            Z2k::spdz2k_64(),
            n,
            counts,
            1 << 16,
        )
        .unwrap();
    }

    /// A CA and `n` party certificates in `dir/certs`, the parties on free loopback ports;
    /// returns the party config's path.
    fn test_pki(dir: &Path, n: usize) -> PathBuf {
        let pki = certs::generate_pki(n).unwrap();
        let addrs = certs::free_loopback_addresses(n).unwrap();
        certs::write_pki(&dir.join("certs"), &pki, &addrs).unwrap()
    }

    fn test_args(dir: &Path, idle_exit_s: u64) -> ServiceArgs {
        ServiceArgs {
            dir: dir.join("stores"),
            pool: 4,
            chunk: 4,
            max_batch: 16,
            client_listen: "127.0.0.1:0".into(),
            idle_exit_s,
        }
    }

    /// Runs three nodes in this process (in-memory mesh between them, node 0's client listener on
    /// loopback TLS); `client` gets node 0's bound address and returns what the test checks.
    async fn service<F, Fut>(
        dir: &Path,
        config: &Path,
        client: F,
    ) -> (Vec<Vec<NodeEvent>>, Fut::Output)
    where
        F: FnOnce(String) -> Fut,
        Fut: std::future::Future,
    {
        service_n(3, dir, config, client).await
    }

    /// [`service`] with `n` nodes.
    async fn service_n<F, Fut>(
        n: usize,
        dir: &Path,
        config: &Path,
        client: F,
    ) -> (Vec<Vec<NodeEvent>>, Fut::Output)
    where
        F: FnOnce(String) -> Fut,
        Fut: std::future::Future,
    {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(usize, NodeEvent)>();
        let mut nodes = Vec::new();
        for mut mesh in InMemoryMesh::group(n, MeshOptions::default()) {
            let args = test_args(dir, 2);
            let (config, tx) = (config.to_path_buf(), tx.clone());
            nodes.push(tokio::spawn(async move {
                let id = mesh.id();
                let mut events = move |e: NodeEvent| {
                    let _ = tx.send((id, e));
                };
                let r = run_node(&mut mesh, &config, &args, &mut events).await;
                mesh.close().await.ok();
                r
            }));
        }
        drop(tx);
        let mut seen = vec![Vec::new(); n];
        let addr = loop {
            let (id, e) = rx.recv().await.expect("node 0 never served clients");
            seen[id].push(e.clone());
            if let NodeEvent::Serving { addr } = e {
                break addr;
            }
        };
        let out = client(addr).await;
        for n in nodes {
            n.await.unwrap().unwrap();
        }
        while let Some((id, e)) = rx.recv().await {
            seen[id].push(e);
        }
        (seen, out)
    }

    /// `run_node_until`: a stop requested while node 0 serves (with a client connected and
    /// idle) ends every node cleanly, without the idle timeout.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stop_future_ends_every_node_cleanly() {
        let dir = coterie_base::fsio::unique_temp_dir("coterie-thr-node-stop");
        let config = test_pki(&dir, 2);
        let counts = Counts {
            triples: 0,
            bits: Params::paper().n + PK_SAMPLES * PK_NOISE_BITS as usize,
            randoms: 2 * PK_SAMPLES,
            masks_per_party: 0,
        };
        deal_insecure(&dir, 2, counts);
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<NodeEvent>();
        let mut nodes = Vec::new();
        for mut mesh in InMemoryMesh::group(2, MeshOptions::default()) {
            let mut args = test_args(&dir, 0); // no idle exit: only the stop ends it
            args.pool = 0;
            let (config, tx, mut stop_rx) = (config.clone(), tx.clone(), stop_rx.clone());
            nodes.push(tokio::spawn(async move {
                let mut events = move |e: NodeEvent| {
                    let _ = tx.send(e);
                };
                let stop = async move {
                    let _ = stop_rx.wait_for(|s| *s).await;
                };
                let r = run_node_until(&mut mesh, &config, &args, &mut events, stop).await;
                mesh.close().await.ok();
                r
            }));
        }
        drop(tx);
        let addr = loop {
            if let NodeEvent::Serving { addr } = rx.recv().await.expect("never served") {
                break addr;
            }
        };
        let (c, k) = (dir.join("certs/party1.crt"), dir.join("certs/party1.key"));
        let idle_client = crate::client::connect(&config, &addr, &c, &k)
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        stop_tx.send(true).unwrap();
        for n in nodes {
            tokio::time::timeout(Duration::from_secs(30), n)
                .await
                .expect("the nodes did not stop")
                .unwrap()
                .unwrap();
        }
        drop(idle_client);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Runs `n` nodes once (in-memory mesh), node `holder` with `start`, the others with the
    /// default; returns each node's result and events.
    async fn run_once(
        dir: &Path,
        config: &Path,
        n: usize,
        holder: usize,
        start: StartOptions,
        idle_exit_s: u64,
    ) -> Vec<(Result<()>, Vec<NodeEvent>)> {
        let starts = (0..n)
            .map(|i| {
                if i == holder {
                    start.clone()
                } else {
                    StartOptions::default()
                }
            })
            .collect();
        run_with_starts(dir, config, starts, idle_exit_s).await
    }

    /// Runs one node per entry of `starts` once (in-memory mesh), node `i` with `starts[i]`;
    /// returns each node's result and events.
    async fn run_with_starts(
        dir: &Path,
        config: &Path,
        starts: Vec<StartOptions>,
        idle_exit_s: u64,
    ) -> Vec<(Result<()>, Vec<NodeEvent>)> {
        let mut runs = Vec::new();
        let meshes = InMemoryMesh::group(starts.len(), MeshOptions::default());
        for (mut mesh, start) in meshes.into_iter().zip(starts) {
            let args = test_args(dir, idle_exit_s);
            let config = config.to_path_buf();
            runs.push(tokio::spawn(async move {
                let mut seen = Vec::new();
                let mut events = |e: NodeEvent| seen.push(e);
                let r = run_node_with(
                    &mut mesh,
                    &config,
                    &args,
                    &start,
                    &mut events,
                    std::future::pending(),
                )
                .await;
                mesh.close().await.ok();
                (r, seen)
            }));
        }
        let mut out = Vec::new();
        for r in runs {
            out.push(r.await.unwrap());
        }
        out
    }

    /// `no_public_key` at every node: the key step makes a 16-sample fingerprint (the stores
    /// hold too few bits for a public key), which refuses to encrypt; a node that disagrees at
    /// first start makes every node abort.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn no_public_key_makes_a_fingerprint_and_every_node_must_agree() {
        let dir = coterie_base::fsio::unique_temp_dir("coterie-thr-node-nopk");
        let config = test_pki(&dir, 3);
        let counts = Counts {
            triples: 64,
            bits: 1024 + FINGERPRINT_SAMPLES * PK_NOISE_BITS as usize + 64,
            randoms: 4000,
            masks_per_party: 0,
        };
        deal_insecure(&dir, 3, counts);
        let nopk = StartOptions {
            no_public_key: true,
            ..StartOptions::default()
        };
        // node 2 disagrees: all abort before any material is used
        let mixed = vec![nopk.clone(), nopk.clone(), StartOptions::default()];
        for (i, (r, _)) in run_with_starts(&dir, &config, mixed, 1)
            .await
            .iter()
            .enumerate()
        {
            let e = r.as_ref().expect_err("a disagreement must abort");
            assert!(e.to_string().contains("no-public-key"), "node {i}: {e}");
        }
        let runs = run_with_starts(&dir, &config, vec![nopk; 3], 1).await;
        for (i, (r, seen)) in runs.iter().enumerate() {
            assert!(r.is_ok(), "node {i}: {r:?}");
            assert!(
                seen.iter().any(|e| matches!(
                    e,
                    NodeEvent::KeyReady { samples, .. } if *samples == FINGERPRINT_SAMPLES
                )),
                "node {i}: {seen:?}"
            );
        }
        let d = digest(&runs[0].1);
        assert!(runs.iter().all(|(_, s)| digest(s) == d), "one fingerprint");
        let fp = PublicKey::from_bytes(
            &std::fs::read(dir.join("stores/party-0/public-key.bin")).unwrap(),
        )
        .unwrap();
        assert!(fp.is_fingerprint());
        assert!(fp.encrypt(1, 1, &mut rand::rng()).is_err());
        // a restart loads it, whatever the option says now
        let again = run_with_starts(&dir, &config, vec![StartOptions::default(); 3], 1).await;
        assert!(again.iter().all(|(r, s)| r.is_ok() && digest(s) == d));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A first key step cut off after some nodes had taken material leaves their store cursors
    /// apart (each cursor moves durably before its material is used). The next start brings
    /// every node's cursors to the furthest one **before** the key step, so the key is made from
    /// aligned material instead of failing its MAC check on every retry.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_start_after_a_cut_off_key_step_aligns_the_cursors_first() {
        let dir = coterie_base::fsio::unique_temp_dir("coterie-thr-node-keysync");
        let config = test_pki(&dir, 3);
        let counts = Counts {
            triples: 64,
            bits: 1024 + PK_SAMPLES * PK_NOISE_BITS as usize + 64,
            randoms: 4000,
            masks_per_party: 0,
        };
        deal_insecure(&dir, 3, counts);
        // party 1 took 40 bits and 3 randoms of the key step, then the run was cut off
        {
            let mut st =
                PrepStore::open(&dir.join("stores/party-1"), Z2k::spdz2k_64(), 1, 3).unwrap();
            drop(coterie_spdz::Preprocessing::bits(&mut st, 40).unwrap());
            drop(coterie_spdz::Preprocessing::randoms(&mut st, 3).unwrap());
        }
        let runs = run_once(&dir, &config, 3, 0, StartOptions::default(), 1).await;
        for (i, (r, seen)) in runs.iter().enumerate() {
            assert!(r.is_ok(), "node {i}: {r:?}");
            let notes: Vec<&String> = seen
                .iter()
                .filter_map(|e| match e {
                    NodeEvent::StartUp(s) => Some(s),
                    _ => None,
                })
                .collect();
            let want = if i == 1 {
                None
            } else {
                Some("skipped 40 bits")
            };
            match want {
                Some(w) => assert!(
                    notes
                        .iter()
                        .any(|s| s.contains(w) && s.contains("skipped 3 randoms")),
                    "node {i}: {notes:?}"
                ),
                None => assert!(
                    notes.iter().all(|s| !s.contains("skipped")),
                    "node {i} was furthest: {notes:?}"
                ),
            }
        }
        let d = digest(&runs[0].1);
        assert!(runs.iter().all(|(_, s)| digest(s) == d), "one public key");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Key import at first start by one holder (coterie's raw key file): bad files are refused at
    /// every node before anything is sent, the imported key decrypts ciphertexts made with the
    /// secret key, its public key encrypts under it, and a restart with the import again is
    /// refused (the key is never replaced) while one without it loads the same key.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_holder_imports_a_key_the_others_learn_it_and_it_is_never_replaced() {
        let dir = coterie_base::fsio::unique_temp_dir("coterie-thr-node-import");
        let config = test_pki(&dir, 2);
        let p = Params::paper();
        let (triples, bits, randoms, masks) =
            crate::service::material_for_import(&p, 4, PK_SAMPLES, PK_NOISE_BITS).unwrap();
        let counts = Counts {
            triples,
            bits,
            randoms,
            masks_per_party: masks,
        };
        deal_insecure(&dir, 2, counts);
        let mut rng = rand::rng();
        let sk: Vec<u64> = (0..p.n).map(|_| rng.next_u64() & 1).collect();
        let good = dir.join("key.thlk");
        std::fs::write(&good, &*crate::keys::lwe_key_file_to_bytes(&sk).unwrap()).unwrap();
        // refused before anything is sent: wrong dimension, not binary, not a key file
        let short = dir.join("short.thlk");
        std::fs::write(
            &short,
            &*crate::keys::lwe_key_file_to_bytes(&sk[..512]).unwrap(),
        )
        .unwrap();
        let mut three = sk.clone();
        three[7] = 3;
        let ternary = dir.join("ternary.bin");
        let mut tb = (three.len() as u64).to_le_bytes().to_vec(); // TFHE-rs bincode
        three.iter().for_each(|w| tb.extend(w.to_le_bytes()));
        std::fs::write(&ternary, &tb).unwrap();
        for (f, says) in [
            (&short, "dimension 512"),
            (&ternary, "other than 0 and 1"),
            (&config, "neither"),
        ] {
            let out = run_once(&dir, &config, 2, 1, StartOptions::import_key(f), 1).await;
            let e = out[1].0.as_ref().unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("--import-key"), "{e}");
            let e0 = out[0].0.as_ref().unwrap_err().to_string();
            assert!(e0.contains("party 1") || e0.contains("peer 1"), "{e0}");
        }
        assert!(!dir.join("stores/party-0/threshold-key.bin").exists());
        let masks0 = || {
            let st = PrepStore::<Z2k>::open(&dir.join("stores/party-0"), Z2k::spdz2k_64(), 0, 2)
                .unwrap();
            st.available(Kind::InputMasks(1)).unwrap()
        };
        assert_eq!(masks0(), p.n as u64, "nothing was input");
        // the import
        let out = run_once(&dir, &config, 2, 1, StartOptions::import_key(&good), 1).await;
        for (r, seen) in &out {
            assert!(r.is_ok(), "{r:?}");
            assert!(
                seen.iter().any(
                    |e| matches!(e, NodeEvent::StartUp(s) if s.contains("imported from party 1"))
                ),
                "{seen:?}"
            );
        }
        assert_eq!(masks0(), 0, "the holder's input masks are used");
        let d = digest(&out[0].1);
        // ciphertexts under the imported key (made with the secret key, and with the public key)
        let sk_i: Vec<i64> = sk.iter().map(|&b| b as i64).collect();
        let pk = PublicKey::from_bytes(
            &std::fs::read(dir.join("stores/party-0/public-key.bin")).unwrap(),
        )
        .unwrap();
        let cts: Vec<Vec<u8>> = vec![
            LweCiphertext::encrypt_with_secret_key(&sk_i, 1, -(1 << 40), 64, 1, &mut rng)
                .to_bytes(),
            LweCiphertext::encrypt_with_secret_key(&sk_i, 0, 1 << 40, 64, 1, &mut rng).to_bytes(),
            pk.encrypt(1, 1, &mut rng).unwrap().to_bytes(),
        ];
        let (c, k) = (dir.join("certs/party1.crt"), dir.join("certs/party1.key"));
        let (seen, got) = service_n(2, &dir, &config, |addr| {
            let (config, c, k) = (config.clone(), c.clone(), k.clone());
            async move {
                let ch = crate::client::connect(&config, &addr, &c, &k)
                    .await
                    .unwrap();
                crate::client::decrypt_over(ch, cts).await.unwrap()
            }
        })
        .await;
        assert_eq!(got, vec![Ok(1), Ok(0), Ok(1)]);
        assert!(
            seen.iter().all(|s| digest(s) == d),
            "the imported key is loaded"
        );
        // a restart with the import again is refused at every node, the key kept
        let out = run_once(&dir, &config, 2, 1, StartOptions::import_key(&good), 1).await;
        let e = out[1].0.as_ref().unwrap_err().to_string();
        assert!(e.contains("already has a key"), "{e}");
        assert!(out[0].0.is_err());
        let out = run_once(&dir, &config, 2, 1, StartOptions::default(), 1).await;
        assert!(out.iter().all(|(r, s)| r.is_ok() && digest(s) == d));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// `run_node_reconnecting` over loopback TLS (3 nodes): node 2's task is dropped while node 0
    /// serves (its links break); nodes 0 and 1 stay up, node 0 answers "waiting for node 2";
    /// node 2 comes back, every node reconnects, the client's ciphertexts decrypt again from gate
    /// bundles no node took before, and a stop ends every node cleanly.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn nodes_wait_for_a_lost_peer_and_resume_when_it_returns() {
        let n = 3;
        let dir = coterie_base::fsio::unique_temp_dir("coterie-thr-node-reconnect");
        let config = test_pki(&dir, n);
        let (triples, bits, randoms) =
            crate::service::material_for(&Params::paper(), 16, PK_SAMPLES, PK_NOISE_BITS).unwrap();
        let counts = Counts {
            triples,
            bits,
            randoms,
            masks_per_party: 0,
        };
        deal_insecure(&dir, n, counts);
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(usize, NodeEvent)>();
        let spawn = |id: usize| {
            let (config, tx, mut stop_rx) = (config.clone(), tx.clone(), stop_rx.clone());
            let args = test_args(&dir, 0);
            tokio::spawn(async move {
                let mut events = move |e: NodeEvent| {
                    let _ = tx.send((id, e));
                };
                let stop = async move {
                    let _ = stop_rx.wait_for(|s| *s).await;
                };
                let connect = || {
                    coterie_net::TlsMesh::connect_with_config(
                        &config,
                        id,
                        None,
                        None,
                        MeshOptions::default(),
                    )
                };
                let start = StartOptions::default();
                run_node_reconnecting(connect, &config, &args, &start, &mut events, stop).await
            })
        };
        let mut nodes: Vec<_> = (0..n).map(spawn).collect();
        let mut seen: Vec<Vec<NodeEvent>> = vec![Vec::new(); n];
        // Events until `until` holds for one of them (30 s at most). An event received while
        // waiting for another one counts too (the nodes' events interleave): every event this
        // test waits for happens once per node.
        let mut wait = async |seen: &mut Vec<Vec<NodeEvent>>,
                              until: &dyn Fn(usize, &NodeEvent) -> bool| {
            for (id, s) in seen.iter().enumerate() {
                if let Some(e) = s.iter().find(|e| until(id, e)) {
                    return Some(e.clone());
                }
            }
            loop {
                let Ok(next) = tokio::time::timeout(Duration::from_secs(30), rx.recv()).await
                else {
                    panic!("no such event within 30 s; events so far: {seen:?}");
                };
                let (id, e) = next.expect("every node ended");
                let hit = until(id, &e);
                seen[id].push(e);
                if hit {
                    return seen[id].last().cloned();
                }
            }
        };
        let addr = match wait(&mut seen, &|_, e| matches!(e, NodeEvent::Serving { .. })).await {
            Some(NodeEvent::Serving { addr }) => addr,
            e => panic!("{e:?}"),
        };
        let msgs = [1u64, 0];
        let ask = async || {
            encrypt_and_decrypt(config.clone(), dir.clone(), addr.clone(), msgs.to_vec()).await
        };
        let right: Vec<std::result::Result<u64, String>> = msgs.iter().map(|&m| Ok(m)).collect();
        assert_eq!(ask().await, right);

        // node 2 is lost: the others stay up, node 0 asks clients to retry
        let gone = nodes.remove(2);
        gone.abort();
        assert!(gone.await.unwrap_err().is_cancelled());
        for j in [0usize, 1] {
            wait(&mut seen, &|id, e| {
                id == j && matches!(e, NodeEvent::PeerLost { node: 2, .. })
            })
            .await;
        }
        for r in ask().await {
            let e = r.unwrap_err();
            assert!(e.contains("waiting for node 2 to reconnect"), "{e}");
        }
        assert!(nodes.iter().all(|h| !h.is_finished()));

        // node 2 returns: all reconnect and decrypt again
        nodes.push(spawn(2));
        drop(tx); // the event channel ends with the nodes
        for j in [0usize, 1] {
            wait(&mut seen, &|id, e| {
                id == j && matches!(e, NodeEvent::Reconnected { session: 1 })
            })
            .await;
        }
        assert_eq!(ask().await, right);
        stop_tx.send(true).unwrap();
        for h in nodes {
            tokio::time::timeout(Duration::from_secs(30), h)
                .await
                .expect("a node did not stop")
                .unwrap()
                .unwrap();
        }
        while let Some((id, e)) = tokio::time::timeout(Duration::from_secs(30), rx.recv())
            .await
            .expect("the event channel did not end")
        {
            seen[id].push(e);
        }
        // no node took a gate bundle twice, and the ones taken after the loss are new
        for (id, s) in seen.iter().enumerate() {
            let mut taken: Vec<(u64, u64)> = s
                .iter()
                .filter_map(|e| match e {
                    NodeEvent::Service(Event::GatesTaken { first, end }) => Some((*first, *end)),
                    _ => None,
                })
                .collect();
            assert!(taken.len() >= 2, "node {id}: {taken:?}");
            taken.sort();
            assert!(
                taken.windows(2).all(|w| w[0].1 <= w[1].0),
                "node {id} took a gate twice: {taken:?}"
            );
        }
        assert!(seen[0].iter().any(|e| matches!(
            e,
            NodeEvent::Service(Event::Refused {
                reason: Refusal::Waiting,
                ..
            })
        )));
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn digest(events: &[NodeEvent]) -> String {
        events
            .iter()
            .find_map(|e| match e {
                NodeEvent::KeyReady { digest, .. } => Some(digest.clone()),
                _ => None,
            })
            .expect("no KeyReady event")
    }

    /// Key generation on first start, a client's ciphertexts decrypted over loopback TLS, a clean
    /// stop after the idle time; then a restart loads the same key and stops cleanly again.
    /// **Insecure** dealer counts for `bundles` gate bundles of the paper's parameters, the
    /// key generation and the public key (tests only).
    fn counts_for_gates(bundles: usize) -> Counts {
        let lt = Params::paper().lt().unwrap();
        Counts {
            triples: bundles * lt.mults_per_bundle(),
            bits: bundles * lt.bits_per_bundle() + 1024 + PK_SAMPLES * PK_NOISE_BITS as usize,
            randoms: 2000,
            masks_per_party: 0,
        }
    }

    /// A client (party 1's certificate) that encrypts `msgs` under node 0's public key and has
    /// node 0 at `addr` decrypt them over one connection.
    async fn encrypt_and_decrypt(
        config: PathBuf,
        dir: PathBuf,
        addr: String,
        msgs: Vec<u64>,
    ) -> Vec<std::result::Result<u64, String>> {
        let (c, k) = (dir.join("certs/party1.crt"), dir.join("certs/party1.key"));
        let pk = PublicKey::from_bytes(
            &std::fs::read(dir.join("stores/party-0/public-key.bin")).unwrap(),
        )
        .unwrap();
        let cts = msgs
            .iter()
            .map(|&m| pk.encrypt(m, 1, &mut rand::rng()).unwrap().to_bytes())
            .collect();
        let ch = crate::client::connect(&config, &addr, &c, &k)
            .await
            .unwrap();
        crate::client::decrypt_over(ch, cts).await.unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_last_gates_serve_the_first_requests_and_only_the_rest_are_refused() {
        // material for one chunk of 4 gates and no more; 6 requests: 4 are served, the last 2
        // are refused (before, a batch larger than the gates left was refused whole, and the
        // last gates were never used)
        let dir = coterie_base::fsio::unique_temp_dir("coterie-thr-node-last-gates");
        let config = test_pki(&dir, 2);
        deal_insecure(&dir, 2, counts_for_gates(4));
        let msgs = [1u64, 0, 1, 1, 0, 1];
        let (seen, got) = service_n(2, &dir, &config, |addr| {
            encrypt_and_decrypt(config.clone(), dir.clone(), addr, msgs.to_vec())
        })
        .await;
        assert_eq!(got.len(), 6);
        for (g, m) in got.iter().zip(msgs).take(4) {
            assert_eq!(*g, Ok(m));
        }
        for g in &got[4..] {
            let e = g.as_ref().unwrap_err();
            assert!(e.contains("no preprocessed gates left"), "{e}");
        }
        let refused: usize = seen[0]
            .iter()
            .map(|e| match e {
                NodeEvent::Service(Event::Refused {
                    reason: Refusal::NoGates,
                    count,
                }) => *count,
                _ => 0,
            })
            .sum();
        assert_eq!(refused, 2);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn three_nodes_generate_serve_a_client_and_restart_with_the_same_key() {
        let dir = coterie_base::fsio::unique_temp_dir("coterie-thr-node");
        let config = test_pki(&dir, 3);
        deal_insecure(&dir, 3, counts_for_gates(16));
        let msgs = [1u64, 0, 1];
        let (seen, got) = service(&dir, &config, |addr| {
            encrypt_and_decrypt(config.clone(), dir.clone(), addr, msgs.to_vec())
        })
        .await;
        assert_eq!(got, msgs.iter().map(|&m| Ok(m)).collect::<Vec<_>>());
        let d = digest(&seen[0]);
        assert!(seen.iter().all(|s| digest(s) == d), "one public key");
        assert!(
            seen[0]
                .iter()
                .any(|e| matches!(e, NodeEvent::Service(Event::Decrypted { .. })))
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let m = std::fs::metadata(dir.join("stores/party-2/threshold-key.bin")).unwrap();
            assert_eq!(
                m.permissions().mode() & 0o777,
                0o600,
                "key shares owner-only"
            );
        }
        // restart: the same key is loaded, not generated again
        let (seen2, ()) = service(&dir, &config, |_| async {}).await;
        assert!(seen2.iter().all(|s| digest(s) == d), "the key is loaded");
        // a node whose key files are gone disagrees with the others: all abort
        std::fs::remove_file(dir.join("stores/party-1/threshold-key.bin")).unwrap();
        let mut runs = Vec::new();
        for mut mesh in InMemoryMesh::group(3, MeshOptions::default()) {
            let args = test_args(&dir, 1);
            let config = config.clone();
            runs.push(tokio::spawn(async move {
                let r = run_node(&mut mesh, &config, &args, &mut |_| {}).await;
                mesh.close().await.ok();
                r
            }));
        }
        for r in runs {
            let e = r.await.unwrap().unwrap_err();
            assert!(e.to_string().contains("key state"), "{e}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Runs `n` nodes with `lanes` lanes each (in-memory meshes; node `i`'s meshes go through
    /// `wrap(i, lane, mesh)`, lane 0 being the control mesh), `max_batch` 4; `client` gets node
    /// 0's address. Returns each node's result and events, and the client's output.
    async fn service_in_lanes<W, F, Fut>(
        n: usize,
        lanes: usize,
        dir: &Path,
        config: &Path,
        mut wrap: impl FnMut(usize, usize, InMemoryMesh) -> W,
        client: F,
    ) -> (Vec<(Result<()>, Vec<NodeEvent>)>, Fut::Output)
    where
        W: Mesh + 'static,
        F: FnOnce(String) -> Fut,
        Fut: std::future::Future,
    {
        let mut groups: Vec<Vec<InMemoryMesh>> = (0..=lanes)
            .map(|_| InMemoryMesh::group(n, MeshOptions::default()))
            .collect();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(usize, NodeEvent)>();
        let mut nodes = Vec::new();
        for i in (0..n).rev() {
            let mut meshes: Vec<W> = groups
                .iter_mut()
                .enumerate()
                .map(|(l, g)| wrap(i, l, g.pop().unwrap()))
                .collect();
            let mut mesh = meshes.remove(0);
            let mut args = test_args(dir, 2);
            args.max_batch = 4;
            let (config, tx) = (config.to_path_buf(), tx.clone());
            nodes.push(tokio::spawn(async move {
                let mut events = move |e: NodeEvent| {
                    let _ = tx.send((i, e));
                };
                let r = run_node_with_lanes(
                    &mut mesh,
                    meshes,
                    &config,
                    &args,
                    &StartOptions::default(),
                    &mut events,
                    std::future::pending(),
                )
                .await;
                mesh.close().await.ok();
                r
            }));
        }
        nodes.reverse();
        drop(tx);
        let mut seen = vec![Vec::new(); n];
        let addr = loop {
            let (id, e) = rx.recv().await.expect("node 0 never served clients");
            seen[id].push(e.clone());
            if let NodeEvent::Serving { addr } = e {
                break addr;
            }
        };
        let out = client(addr).await;
        let mut results = Vec::new();
        for t in nodes {
            results.push(t.await.unwrap());
        }
        while let Some((id, e)) = rx.recv().await {
            seen[id].push(e);
        }
        (results.into_iter().zip(seen).collect(), out)
    }

    /// A node that fails at start-up on an error of its own (its SPDZ_2k store cannot be
    /// opened: the path is a file) tells the other node why on the control mesh and on both
    /// lanes (TLS, linked), before its lanes are dropped: node 0 reports node 1's abort with that
    /// reason, not a lost peer (which is what it reported when the lanes were dropped bare).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_node_that_fails_at_start_tells_every_lane_why() {
        let dir = coterie_base::fsio::unique_temp_dir("coterie-thr-node-start-fails");
        let config = test_pki(&dir, 2);
        deal_insecure(&dir, 2, counts_for_gates(4));
        let p1 = dir.join("stores").join("party-1");
        std::fs::remove_dir_all(&p1).unwrap();
        std::fs::write(&p1, b"not a store").unwrap();
        let opts = MeshOptions {
            timeout: Duration::from_secs(20),
            ..MeshOptions::default()
        };
        let (parties, _relays) = coterie_net::local::tls_lanes(2, 3, opts, None)
            .await
            .unwrap();
        let mut runs = Vec::new();
        for mut meshes in parties {
            let mut mesh = meshes.remove(0);
            let args = test_args(&dir, 2);
            let config = config.clone();
            runs.push(tokio::spawn(async move {
                let mut events = |_: NodeEvent| {};
                let r = run_node_with_lanes(
                    &mut mesh,
                    meshes,
                    &config,
                    &args,
                    &StartOptions::default(),
                    &mut events,
                    std::future::pending(),
                )
                .await;
                drop(mesh);
                r
            }));
        }
        let mut errs = Vec::new();
        for r in runs {
            errs.push(r.await.unwrap().expect_err("no node can serve"));
        }
        let own = errs[1].to_string();
        assert!(errs[1].lost_peer().is_none(), "{own}");
        match &errs[0] {
            Error::Spdz(coterie_spdz::Error::Net(coterie_net::Error::Aborted {
                party: 1,
                reason,
            })) => {
                // the reason as relayed over TLS: local paths cut to their file name
                assert!(
                    reason.contains("header.bin: Not a directory")
                        && own.contains("Not a directory"),
                    "{reason} vs {own}"
                )
            }
            e => panic!("node 0: {e}; node 1 failed with {own}"),
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The gate ranges a node's events report taken, in order.
    fn gates_taken(events: &[NodeEvent]) -> Vec<(u64, u64)> {
        events
            .iter()
            .filter_map(|e| match e {
                NodeEvent::Service(Event::GatesTaken { first, end }) => Some((*first, *end)),
                _ => None,
            })
            .collect()
    }

    /// Lanes: three clients at once stream 6 ciphertexts each to a 3-node service with two
    /// lanes and batches of at most 4, so that several batches are decrypted on the lanes
    /// while the control mesh goes on. Every answer is right, the runs go over both lanes and
    /// none over the control mesh, every node takes the same gate ranges in the same order, and
    /// no range overlaps another (no gate used twice).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn lanes_serve_concurrent_streams_and_take_each_gate_once() {
        let dir = coterie_base::fsio::unique_temp_dir("coterie-thr-node-lanes");
        let config = test_pki(&dir, 3);
        deal_insecure(&dir, 3, counts_for_gates(32));
        let msgs: Vec<Vec<u64>> = (0..3)
            .map(|c| (0..6).map(|j| (c + j) as u64 % 2).collect())
            .collect();
        // counts each mesh's first-round messages of the decryption protocol
        let mut rounds = Vec::new();
        let (res, got) = service_in_lanes(
            3,
            2,
            &dir,
            &config,
            |i, lane, m| {
                let mut t = coterie_net::tamper::TamperMesh::new(m);
                let sel = coterie_net::tamper::Select::any().tag(crate::pipelined::TAG_BASE + 1);
                rounds.push((i, lane, t.add(sel.all().delay(Duration::ZERO))));
                t
            },
            |addr| {
                let calls: Vec<_> = msgs
                    .iter()
                    .map(|m| {
                        tokio::spawn(encrypt_and_decrypt(
                            config.clone(),
                            dir.clone(),
                            addr.clone(),
                            m.clone(),
                        ))
                    })
                    .collect();
                async move {
                    let mut out = Vec::new();
                    for c in calls {
                        out.push(c.await.unwrap());
                    }
                    out
                }
            },
        )
        .await;
        for (g, m) in got.iter().zip(&msgs) {
            assert_eq!(*g, m.iter().map(|&x| Ok(x)).collect::<Vec<_>>());
        }
        let taken: Vec<Vec<(u64, u64)>> = res
            .iter()
            .map(|(r, ev)| {
                assert!(r.is_ok(), "{r:?}");
                gates_taken(ev)
            })
            .collect();
        assert!(taken.iter().all(|t| *t == taken[0]), "{taken:?}");
        let mut ranges = taken[0].clone();
        ranges.sort_unstable();
        assert!(ranges.windows(2).all(|w| w[0].1 <= w[1].0), "{ranges:?}");
        let decrypted: Vec<usize> = res[0]
            .1
            .iter()
            .filter_map(|e| match e {
                NodeEvent::Service(Event::Decrypted { batch, .. }) => Some(*batch),
                _ => None,
            })
            .collect();
        assert_eq!(decrypted.iter().sum::<usize>(), 18, "{decrypted:?}");
        assert!(decrypted.len() >= 5, "batches of at most 4: {decrypted:?}");
        // the last count of ready bundles node 0 reported is the store's (a lane's run reports
        // the count when it finishes, not the one at its take)
        let last = res[0].1.iter().rev().find_map(|e| match e {
            NodeEvent::Service(Event::Decrypted { available, .. })
            | NodeEvent::Service(Event::Prepared { available, .. }) => Some(*available),
            _ => None,
        });
        let lt = Params::paper().lt().unwrap();
        let store = GateStore::open(&dir.join("stores/party-0/gates"), lt).unwrap();
        assert_eq!(last, Some(store.available().unwrap()));
        // the runs went over both lanes, none over the control mesh
        for (i, lane, c) in &rounds {
            if *lane == 0 {
                assert_eq!(c.matched(), 0, "node {i}'s control mesh");
            } else {
                assert!(c.matched() >= 2, "node {i}'s lane {lane}: {}", c.matched());
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A node that cheats on the lanes (node 1 shifts the last byte of its fifth-round message
    /// of every run on a lane): the honest nodes' runs abort naming the check, every node ends
    /// with an error, and no request gets a result (the failed batch's are answered
    /// "decryption aborted"); without the rewrite the same service answers them all.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cheat_on_a_lane_aborts_every_node() {
        use coterie_net::tamper::{Select, TamperMesh};
        for cheat in [false, true] {
            let dir = coterie_base::fsio::unique_temp_dir("coterie-thr-node-lane-cheat");
            let config = test_pki(&dir, 3);
            deal_insecure(&dir, 3, counts_for_gates(16));
            let msgs = vec![1u64, 0, 1, 1];
            let (res, got) = service_in_lanes(
                3,
                2,
                &dir,
                &config,
                |i, lane, m| {
                    let mut t = TamperMesh::new(m);
                    if cheat && i == 1 && lane >= 1 {
                        t.add(
                            Select::any()
                                .tag(crate::pipelined::TAG_BASE + 5)
                                .all()
                                .rewrite_bytes(|b: &mut Vec<u8>| {
                                    if let Some(x) = b.last_mut() {
                                        *x ^= 1 << 3;
                                    }
                                }),
                        );
                    }
                    t
                },
                |addr| encrypt_and_decrypt(config.clone(), dir.clone(), addr, msgs.clone()),
            )
            .await;
            if !cheat {
                assert_eq!(got, msgs.iter().map(|&m| Ok(m)).collect::<Vec<_>>());
                assert!(res.iter().all(|(r, _)| r.is_ok()), "{res:?}");
            } else {
                assert!(got.iter().all(|g| g.is_err()), "{got:?}");
                assert!(
                    got.iter()
                        .any(|g| g.as_ref().unwrap_err().contains("decryption aborted")),
                    "{got:?}"
                );
                for (i, (r, _)) in res.iter().enumerate() {
                    let e = r.as_ref().unwrap_err().to_string();
                    if i != 1 {
                        assert!(
                            e.contains("w-consistency") || e.contains("abort"),
                            "node {i}: {e}"
                        );
                    }
                }
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}
