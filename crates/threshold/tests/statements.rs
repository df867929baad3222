//! A client that trusts no single node (issue 17): every node signs a statement of each result,
//! and the client accepts a result only when all statements verify and agree. A lying follower
//! (its statements rewritten on the wire by a `TamperMesh`) and a lying coordinator (a node 0
//! that alters or drops what it returns) are named in the client's error; a client certificate
//! from another CA gets a message that says so.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use coterie_base::envelope;
use coterie_net::tamper::{Select, TamperMesh};
use coterie_net::{Blob, InMemoryMesh, Mesh, MeshOptions, certs};
use coterie_spdz::{Counts, Z2k};
use coterie_threshold::client::{bind_server, connect, decrypt_over, serve_clients};
use coterie_threshold::keys::PublicKey;
use coterie_threshold::node::{NodeEvent, PK_NOISE_BITS, PK_SAMPLES, ServiceArgs, run_node};
use coterie_threshold::service::{Attested, Request, StatementMsg, TAG_STATEMENTS, material_for};
use coterie_threshold::statement::Signer;
use coterie_threshold::{Error, LweCiphertext, Params};
use tokio::sync::mpsc;

fn scratch(name: &str) -> PathBuf {
    coterie_base::fsio::unique_temp_dir(&format!("coterie-thr-statements-{name}"))
}

/// Three real nodes (in-memory mesh, node 0's client listener on loopback TLS, insecure dealer
/// material); node 2's statement messages to node 0 get every message flipped once `lie` is
/// set (a rewrite on the wire: node 2 cannot re-sign, so its signatures stop verifying). The
/// client's first call passes; its second names node 2. The nodes themselves carry on (node 0
/// forwards statements without judging them) and stop cleanly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lying_follower_is_named_by_the_client() {
    let dir = scratch("follower");
    let n = 3;
    let pki = certs::generate_pki(n).unwrap();
    let addrs = certs::free_loopback_addresses(n).unwrap();
    let config = certs::write_pki(&dir.join("certs"), &pki, &addrs).unwrap();
    let (triples, bits, randoms) =
        material_for(&Params::paper(), 16, PK_SAMPLES, PK_NOISE_BITS).unwrap();
    let counts = Counts {
        triples,
        bits,
        randoms: randoms + 100,
        masks_per_party: 0,
    };
    coterie_spdz::tools::insecure_deal_counts_to_stores(
        &dir.join("stores"),
        Z2k::spdz2k_64(),
        n,
        counts,
        1 << 16,
    )
    .unwrap();
    let lie = Arc::new(AtomicBool::new(false));
    let (etx, mut erx) = mpsc::unbounded_channel::<NodeEvent>();
    let mut nodes = Vec::new();
    let mut fired = None;
    for mesh in InMemoryMesh::group(n, MeshOptions::default()) {
        let mut mesh = TamperMesh::new(mesh);
        if mesh.id() == 2 {
            let lie = lie.clone();
            fired = Some(mesh.add(Select::to(0).tag(TAG_STATEMENTS).all().rewrite(
                move |b: &mut Blob| {
                    if !lie.load(Ordering::SeqCst) {
                        return;
                    }
                    let mut m: StatementMsg = envelope::from_envelope(&b.0, 1 << 24).unwrap();
                    for st in &mut m.statements {
                        st.message ^= 1;
                    }
                    b.0 = envelope::to_envelope(&m).unwrap();
                },
            )));
        }
        let args = ServiceArgs {
            dir: dir.join("stores"),
            pool: 4,
            chunk: 4,
            max_batch: 16,
            client_listen: "127.0.0.1:0".into(),
            idle_exit_s: 2,
        };
        let (config, etx) = (config.clone(), etx.clone());
        nodes.push(tokio::spawn(async move {
            let id = mesh.id();
            let mut events = move |e: NodeEvent| {
                if id == 0 {
                    let _ = etx.send(e);
                }
            };
            let r = run_node(&mut mesh, &config, &args, &mut events).await;
            mesh.close().await.ok();
            r
        }));
    }
    drop(etx);
    let addr = loop {
        if let NodeEvent::Serving { addr } = erx.recv().await.expect("node 0 never served") {
            break addr;
        }
    };
    let pk =
        PublicKey::from_bytes(&std::fs::read(dir.join("stores/party-0/public-key.bin")).unwrap())
            .unwrap();
    let enc = |m: u64| pk.encrypt(m, 1, &mut rand::rng()).unwrap().to_bytes();
    let (c, k) = certs::issue_client_cert(&dir.join("certs"), "alice").unwrap();

    // every node honest: the results are accepted
    let conn = connect(&config, &addr, &c, &k).await.unwrap();
    let got = decrypt_over(conn, vec![enc(1), enc(0)]).await.unwrap();
    assert_eq!(got, vec![Ok(1), Ok(0)]);

    // node 2 lies: the client refuses the result and names node 2
    lie.store(true, Ordering::SeqCst);
    let conn = connect(&config, &addr, &c, &k).await.unwrap();
    let e = decrypt_over(conn, vec![enc(1)]).await.unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, Error::Client(_)), "{e:?}");
    assert!(
        text.contains("node 2's statement for ciphertext 0") && text.contains("does not verify"),
        "{text}"
    );
    let fired = fired.expect("node 2's rule");
    assert!(
        fired.matched() >= 2,
        "node 2 sent statements for both calls"
    );

    for r in nodes {
        r.await.unwrap().unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// What a node-0 stub does to an honest answer before returning it.
type Lie = fn(&mut Attested);

/// A node-0 stub behind the real listener: decrypts nothing (a ciphertext's message is its
/// body's top bit), signs with every party's key from the config, then applies `lie`.
async fn lying_node_0(mut rx: mpsc::Receiver<Request>, config: PathBuf, n: usize, lie: Lie) {
    let signers: Vec<Signer> = (0..n)
        .map(|i| Signer::from_config(&config, i, None, None, [1; 32]).unwrap())
        .collect();
    while let Some(r) = rx.recv().await {
        let reply = LweCiphertext::from_bytes(&r.ct)
            .map(|ct| ct.body() >> (ct.modulus_log() - 1))
            .map_err(|e| e.to_string())
            .map(|message| {
                let mut a = Attested {
                    message,
                    statements: signers
                        .iter()
                        .map(|s| Some(s.sign(&r.nonce, &r.ct, message).unwrap()))
                        .collect(),
                };
                lie(&mut a);
                a
            });
        let _ = r.reply.send(reply);
    }
}

async fn serve_stub(config: &Path, n: usize, lie: Lie) -> (String, tokio::task::JoinHandle<()>) {
    let server = bind_server(config, "127.0.0.1:0").await.unwrap();
    let addr = server.local_addr().unwrap().to_string();
    let (tx, rx) = mpsc::channel(64);
    let last = Arc::new(std::sync::Mutex::new(Instant::now()));
    let listener = tokio::spawn(serve_clients(server, tx, last));
    tokio::spawn(lying_node_0(rx, config.to_path_buf(), n, lie));
    (addr, listener)
}

/// A coordinator that alters the message it returns, or leaves out a follower's statement, is
/// caught by the client, which names the node; an honest one passes. A client certificate from
/// another CA is refused with a message that says what is wrong.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lying_coordinator_is_named_by_the_client() {
    let dir = scratch("coordinator");
    let n = 3;
    let pki = certs::generate_pki(n).unwrap();
    let addrs = certs::free_loopback_addresses(n).unwrap();
    let config = certs::write_pki(&dir, &pki, &addrs).unwrap();
    let (c, k) = certs::issue_client_cert(&dir, "bob").unwrap();
    let ct = |top: u64| {
        LweCiphertext::from_parts(vec![3, 1, 4, 1, (top << 15) | 9], 16, 1)
            .unwrap()
            .to_bytes()
    };
    // (responses come back in any order: whichever ciphertext is checked first is named)
    let cases: [(Lie, &[&str]); 4] = [
        (|_| {}, &[]),
        (
            |a| a.message ^= 1,
            &[
                "node 0 returned",
                "but its own signed statement gives",
                "node 0 lies",
            ],
        ),
        (
            |a| a.statements[1] = None,
            &["node 1's statement for ciphertext", "is missing"],
        ),
        (
            |a| a.statements.truncate(2),
            &[
                "node 0 returned 2 statements",
                "instead of one per node (3)",
            ],
        ),
    ];
    for (lie, says) in cases {
        let (addr, listener) = serve_stub(&config, n, lie).await;
        let conn = connect(&config, &addr, &c, &k).await.unwrap();
        let got = decrypt_over(conn, vec![ct(0), ct(1)]).await;
        if says.is_empty() {
            assert_eq!(got.unwrap(), vec![Ok(0), Ok(1)]);
        } else {
            let e = got.unwrap_err().to_string();
            assert!(says.iter().all(|s| e.contains(s)), "{e}");
        }
        listener.abort();
    }

    // a client certificate from another CA
    let other = scratch("coordinator-other");
    let opki = certs::generate_pki(n).unwrap();
    certs::write_pki(&other, &opki, &addrs).unwrap();
    let (oc, ok) = certs::issue_client_cert(&other, "mallory").unwrap();
    let (addr, listener) = serve_stub(&config, n, |_| {}).await;
    let conn = connect(&config, &addr, &oc, &ok).await;
    let e = match conn {
        Ok(conn) => decrypt_over(conn, vec![ct(1)]).await.unwrap_err(),
        Err(e) => e,
    }
    .to_string();
    assert!(
        e.contains("node 0 refused this client's certificate")
            && e.contains("issued by the service's CA"),
        "{e}"
    );
    listener.abort();
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&other);
}
