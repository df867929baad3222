//! A client that trusts no single node (issue 17): every node signs one statement of each batch
//! (the root of a Merkle tree over its results), and the client accepts a result only when all
//! statements verify and agree. A lying follower (its statement rewritten on the wire by a
//! `TamperMesh`) and a lying coordinator (a node 0 that alters or drops what it returns, its
//! paths or its certificate chains) are named in the client's error; a client certificate from
//! another CA gets a message that says so.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use std::time::Instant;

use coterie_base::envelope;
use coterie_net::tamper::{Select, TamperMesh};
use coterie_net::{Blob, InMemoryMesh, Mesh, MeshOptions, certs};
use coterie_spdz::{Counts, Z2k};
use coterie_threshold::client::{bind_server, connect, decrypt_keep, decrypt_over, serve_clients};
use coterie_threshold::keys::PublicKey;
use coterie_threshold::node::{NodeEvent, PK_NOISE_BITS, PK_SAMPLES, ServiceArgs, run_node};
use coterie_threshold::service::{Attested, Request, StatementMsg, TAG_STATEMENTS, material_for};
use coterie_threshold::statement::{Signer, ciphertext_hash};
use coterie_threshold::{Error, LweCiphertext, Params};
use tokio::sync::mpsc;

fn scratch(name: &str) -> PathBuf {
    coterie_base::fsio::unique_temp_dir(&format!("coterie-thr-statements-{name}"))
}

/// Three real nodes (in-memory mesh, node 0's client listener on loopback TLS, insecure dealer
/// material); node 2's statement messages to node 0 get every message flipped once `lie` is
/// set (a rewrite on the wire: node 2 cannot re-sign, so its signature stops verifying). The
/// client's first call (5 ciphertexts) passes; its second names node 2. Every statement message
/// carries one signature for all the messages of its batch. The nodes themselves carry on (node
/// 0 forwards statements without judging them) and stop cleanly.
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
    // (messages, signature bytes) of every statement message node 2 sent
    let seen: Arc<Mutex<Vec<(usize, usize)>>> = Arc::default();
    let (etx, mut erx) = mpsc::unbounded_channel::<NodeEvent>();
    let mut nodes = Vec::new();
    let mut fired = None;
    for mesh in InMemoryMesh::group(n, MeshOptions::default()) {
        let mut mesh = TamperMesh::new(mesh);
        if mesh.id() == 2 {
            let (lie, seen) = (lie.clone(), seen.clone());
            fired = Some(mesh.add(Select::to(0).tag(TAG_STATEMENTS).all().rewrite(
                move |b: &mut Blob| {
                    let mut m: StatementMsg = envelope::from_envelope(&b.0, 1 << 24).unwrap();
                    seen.lock().unwrap().push((
                        m.statement.messages.len(),
                        m.statement.signature.signature.len(),
                    ));
                    if !lie.load(Ordering::SeqCst) {
                        return;
                    }
                    for m in &mut m.statement.messages {
                        *m ^= 1;
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

    // every node honest: the results are accepted (the later responses on the connection
    // carry no certificate chains)
    let conn = connect(&config, &addr, &c, &k).await.unwrap();
    let want = [1, 0, 1, 1, 0];
    let got = decrypt_over(conn, want.iter().map(|&m| enc(m)).collect())
        .await
        .unwrap();
    assert_eq!(got, want.map(Ok).to_vec());
    // one connection kept for two more batches (their ids start at 0 again)
    let conn = connect(&config, &addr, &c, &k).await.unwrap();
    let (conn, got) = decrypt_keep(conn, vec![enc(0), enc(1)]).await.unwrap();
    assert_eq!(got, vec![Ok(0), Ok(1)]);
    let (conn, got) = decrypt_keep(conn, vec![enc(1), enc(1), enc(0)])
        .await
        .unwrap();
    assert_eq!(got, vec![Ok(1), Ok(1), Ok(0)]);
    conn.close().await.unwrap();

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
        fired.matched() >= 4,
        "node 2 sent statements for every call"
    );
    // one message per batch, each with one signature covering all of the batch's results
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len() as u64, fired.matched(), "{seen:?}");
    assert_eq!(seen.iter().map(|&(m, _)| m).sum::<usize>(), 11, "{seen:?}");
    assert!(seen.iter().all(|&(m, sig)| m >= 1 && sig > 0), "{seen:?}");

    for r in nodes {
        r.await.unwrap().unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// What a node-0 stub does to an honest answer before returning it.
type Lie = fn(&mut Attested);

/// A node-0 stub behind the real listener: decrypts nothing (a ciphertext's message is its
/// body's top bit), waits for `batch` requests (or a pause), signs them as one batch with every
/// party's key from the config, then applies `lie` to each answer.
async fn lying_node_0(
    mut rx: mpsc::Receiver<Request>,
    config: PathBuf,
    n: usize,
    lie: Lie,
    batch: usize,
) {
    let signers: Vec<Signer> = (0..n)
        .map(|i| Signer::from_config(&config, i, None, None, [1; 32]).unwrap())
        .collect();
    while let Some(first) = rx.recv().await {
        let mut reqs = vec![first];
        while reqs.len() < batch {
            match tokio::time::timeout(Duration::from_secs(2), rx.recv()).await {
                Ok(Some(r)) => reqs.push(r),
                _ => break,
            }
        }
        let messages: Vec<u64> = reqs
            .iter()
            .map(|r| {
                let ct = LweCiphertext::from_bytes(&r.ct).unwrap();
                ct.body() >> (ct.modulus_log() - 1)
            })
            .collect();
        let nonces: Vec<[u8; 32]> = reqs.iter().map(|r| r.nonce).collect();
        let hashes: Vec<[u8; 32]> = reqs.iter().map(|r| ciphertext_hash(&r.ct)).collect();
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
        for (r, mut a) in reqs.into_iter().zip(answers) {
            assert_eq!(a.attestation.batch, batch as u64, "the stub's batch");
            lie(&mut a);
            let _ = r.reply.send(Ok(a));
        }
    }
}

async fn serve_stub(
    config: &Path,
    n: usize,
    lie: Lie,
    batch: usize,
) -> (String, tokio::task::JoinHandle<()>) {
    let server = bind_server(config, "127.0.0.1:0").await.unwrap();
    let addr = server.local_addr().unwrap().to_string();
    let (tx, rx) = mpsc::channel(64);
    let last = Arc::new(std::sync::Mutex::new(Instant::now()));
    let listener = tokio::spawn(serve_clients(server, tx, last));
    tokio::spawn(lying_node_0(rx, config.to_path_buf(), n, lie, batch));
    (addr, listener)
}

/// A coordinator that alters the message it returns, leaves out a follower's statement or
/// chain, or alters a follower's path or signature, is caught by the client, which names the
/// node; an honest one passes, for a batch of 5 too (one signature per node for all 5). A client certificate from
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
    let cases: [(Lie, &[&str]); 7] = [
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
            |a| a.attestation.nodes[1] = None,
            &["node 1's statement for ciphertext", "is missing"],
        ),
        (
            |a| a.attestation.nodes.truncate(2),
            &[
                "node 0 returned 2 statements",
                "instead of one per node (3)",
            ],
        ),
        (
            // node 1's path altered (the others keep the honest one)
            |a| {
                let mut p = a.attestation.paths[0].clone();
                p[0][0] ^= 1;
                a.attestation.paths.push(p);
                if let Some(s) = a.attestation.nodes[1].as_mut() {
                    s.path = 1;
                }
            },
            &["node 1's statement for ciphertext", "does not verify"],
        ),
        (
            // a forged signature for node 2
            |a| {
                if let Some(s) = a.attestation.nodes[2].as_mut() {
                    s.signature.signature[0] ^= 1;
                }
            },
            &["node 2's statement for ciphertext", "does not verify"],
        ),
        (
            // node 2's chain never sent on the connection
            |a| a.chains[2] = None,
            &[
                "node 2's statement for ciphertext",
                "no certificate chain, and none came earlier on this connection",
            ],
        ),
    ];
    for (lie, says) in cases {
        let (addr, listener) = serve_stub(&config, n, lie, 2).await;
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

    // a batch of 5 (not a power of two): every result verifies, each node signed once
    let (addr, listener) = serve_stub(&config, n, |_| {}, 5).await;
    let conn = connect(&config, &addr, &c, &k).await.unwrap();
    let tops = [1, 0, 0, 1, 1];
    let got = decrypt_over(conn, tops.iter().map(|&t| ct(t)).collect()).await;
    assert_eq!(got.unwrap(), tops.map(Ok).to_vec());
    listener.abort();

    // a client certificate from another CA
    let other = scratch("coordinator-other");
    let opki = certs::generate_pki(n).unwrap();
    certs::write_pki(&other, &opki, &addrs).unwrap();
    let (oc, ok) = certs::issue_client_cert(&other, "mallory").unwrap();
    let (addr, listener) = serve_stub(&config, n, |_| {}, 1).await;
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
