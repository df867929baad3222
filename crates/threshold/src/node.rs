//! The threshold decryption service node and the demo flow, as run by `coterie party ...
//! threshold` and `coterie party ... threshold-demo` (the CLI only wires them to a mesh and
//! prints what they report).
//!
//! * [`run_node`]: one node of the decryption service on the SPDZ_2k store `DIR/party-<id>`
//!   (made by OT preprocessing for real runs, or by the **insecure** dealer for tests). On first
//!   start the nodes generate the key inside the ABB together and write
//!   `DIR/party-<id>/threshold-key.bin` (the node's key shares, mode 0600) and
//!   `DIR/party-<id>/public-key.bin`; they keep a pool of gate bundles ready in
//!   `DIR/party-<id>/gates`. Node 0 coordinates (see [`crate::service`]) and serves clients over
//!   mutual TLS ([`crate::client`]).
//! * [`party_demo`]: the self-checking demo ([`crate::demo::run_demo_party`]) on this party's
//!   SPDZ_2k store.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use coterie_net::Mesh;
use coterie_spdz::{PrepStore, Z2k};
use tokio::sync::mpsc;

use crate::demo::DemoReport;
use crate::keys::{KeyDistribution, PublicKey, SharedKey};
use crate::service::{Event, Node, NodeConfig, Request};
use crate::store::GateStore;
use crate::{Error, Params, Result};

/// Public samples in the service's public key (what sizes the material of its key generation:
/// `n + PK_SAMPLES · PK_NOISE_BITS` random bits, see [`crate::service::material_for`]).
pub const PK_SAMPLES: usize = 64;
/// Noise width, in bits, of each public sample of the service's public key.
pub const PK_NOISE_BITS: u32 = 40;
/// Tag of the start-up exchange of the key state.
const TAG_KEY_STATE: u32 = 0x7E00_0000;
/// Largest key file a node reads.
const MAX_KEY_FILE: u64 = 256 << 20;

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
        /// Public samples in the public key.
        samples: usize,
        /// The first 16 hex digits of the public key file's BLAKE3 hash.
        digest: String,
    },
    /// What the start-up synchronisation did ([`Node::sync_at_start`]).
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
}

fn pdir(a: &ServiceArgs, id: usize) -> PathBuf {
    a.dir.join(format!("party-{id}"))
}

fn read_file(path: &Path) -> Result<Vec<u8>> {
    coterie_base::fsio::read_bounded(path, MAX_KEY_FILE).map_err(Error::File)
}

/// Loads this node's key shares and public key, or, the first time (at every node together),
/// generates the key inside the ABB and its public samples and writes them.
async fn load_or_generate_key<M: Mesh>(
    mesh: &mut M,
    eng: &mut coterie_spdz::Engine<Z2k, PrepStore<Z2k>>,
    dir: &Path,
    params: &Params,
) -> Result<(SharedKey, PublicKey)> {
    let kp = dir.join("threshold-key.bin");
    let pp = dir.join("public-key.bin");
    let have = kp.exists() && pp.exists();
    let digest: [u8; 32] = if have {
        *blake3::hash(&read_file(&pp)?).as_bytes()
    } else {
        [0; 32]
    };
    let all: Vec<(bool, [u8; 32])> = mesh
        .exchange_all_tagged(TAG_KEY_STATE, &(have, digest))
        .await
        .map_err(coterie_spdz::Error::from)?;
    if let Some(j) = all.iter().position(|x| *x != (have, digest)) {
        mesh.abort("nodes disagree on the key state (some have a key, or different public keys)")
            .await;
        return Err(Error::Abort {
            check: "nodes agree on the key state (some have a key, or different public keys)",
            party: j,
        });
    }
    if have {
        let key = SharedKey::from_bytes(&read_file(&kp)?)?;
        let pk = PublicKey::from_bytes(&read_file(&pp)?)?;
        return Ok((key, pk));
    }
    let key = SharedKey::generate(eng, params.n, KeyDistribution::Binary)?;
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
    let pk = PublicKey::generate(eng, mesh, params, &key, seed, PK_SAMPLES, PK_NOISE_BITS).await?;
    coterie_base::fsio::write_atomic_private(&kp, &key.to_bytes()).map_err(Error::File)?;
    coterie_base::fsio::write_atomic(&pp, &pk.to_bytes()).map_err(Error::File)?;
    Ok((key, pk))
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
pub async fn run_node<M: Mesh>(
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
pub async fn run_node_until<M: Mesh>(
    mesh: &mut M,
    config: &Path,
    args: &ServiceArgs,
    events: &mut (dyn FnMut(NodeEvent) + Send),
    stop: impl std::future::Future<Output = ()>,
) -> Result<()> {
    let id = mesh.id();
    let params = Params::paper();
    let dir = pdir(args, id);
    let store = PrepStore::open(&dir, Z2k::spdz2k_64(), id, mesh.n())?;
    let mut eng = coterie_spdz::Engine::new(store);
    let (key, pk) = load_or_generate_key(mesh, &mut eng, &dir, &params).await?;
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
        idle: Duration::from_millis(200),
    };
    let mut node = Node::new(params, eng, key, gates, cfg)?;
    let sync = node.sync_at_start(mesh).await?;
    events(NodeEvent::StartUp(sync));
    events(NodeEvent::Pool {
        cursor: node.cursor()?,
        available: node.available()?,
        target: args.pool,
    });
    if id != 0 {
        let mut log = |e: Event| events(NodeEvent::Service(e));
        return node.run_follower(mesh, &mut log).await;
    }
    let (tx, rx) = mpsc::channel::<Request>(4096);
    let server = crate::client::bind_server(config, &args.client_listen).await?;
    let addr = server
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| args.client_listen.clone());
    events(NodeEvent::Serving { addr });
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
    let coordinator = node.run_coordinator(mesh, frx, &mut log);
    tokio::pin!(coordinator);
    tokio::select! {
        r = &mut coordinator => return r,
        () = forwarder => {
            // No new clients either (requests already forwarded are answered).
            abort_on_stop.abort();
        }
    }
    coordinator.await
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
    use coterie_net::{InMemoryMesh, MeshOptions, certs};
    use coterie_spdz::Counts;

    /// A small pool, node 0 listening on a free loopback port, stopping after `idle_exit_s`.
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
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(usize, NodeEvent)>();
        let mut nodes = Vec::new();
        for mut mesh in InMemoryMesh::group(3, MeshOptions::default()) {
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
        let mut seen = vec![Vec::new(); 3];
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
        let pki = certs::generate_pki(2).unwrap();
        let addrs = certs::free_loopback_addresses(2).unwrap();
        let config = certs::write_pki(&dir.join("certs"), &pki, &addrs).unwrap();
        let counts = Counts {
            triples: 0,
            bits: Params::paper().n + PK_SAMPLES * PK_NOISE_BITS as usize,
            randoms: 2 * PK_SAMPLES,
            masks_per_party: 0,
        };
        coterie_spdz::tools::insecure_deal_counts_to_stores(
            &dir.join("stores"),
            Z2k::spdz2k_64(),
            2,
            counts,
            1 << 16,
        )
        .unwrap();
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
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn three_nodes_generate_serve_a_client_and_restart_with_the_same_key() {
        let dir = coterie_base::fsio::unique_temp_dir("coterie-thr-node");
        let pki = certs::generate_pki(3).unwrap();
        let addrs = certs::free_loopback_addresses(3).unwrap();
        let config = certs::write_pki(&dir.join("certs"), &pki, &addrs).unwrap();
        let lt = Params::paper().lt().unwrap();
        let bundles = 16;
        let counts = Counts {
            triples: bundles * lt.mults_per_bundle(),
            bits: bundles * lt.bits_per_bundle() + 1024 + PK_SAMPLES * PK_NOISE_BITS as usize,
            randoms: 2000,
            masks_per_party: 0,
        };
        coterie_spdz::tools::insecure_deal_counts_to_stores(
            &dir.join("stores"),
            Z2k::spdz2k_64(),
            3,
            counts,
            1 << 16,
        )
        .unwrap();
        let msgs = [1u64, 0, 1];
        let (c, k) = (dir.join("certs/party1.crt"), dir.join("certs/party1.key"));
        let (seen, got) = service(&dir, &config, |addr| {
            let (config, dir, c, k) = (config.clone(), dir.clone(), c.clone(), k.clone());
            async move {
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
}
