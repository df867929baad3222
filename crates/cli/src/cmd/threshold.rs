//! `coterie party ... threshold` (a decryption service node) and `coterie party ...
//! threshold-demo`: the flows are `coterie_threshold::node`; this prints what they report.
//!
//! The service: nodes run on the SPDZ_2k stores `DIR/party-<id>` (made by `coterie party ...
//! spdz-prep-ot --dir DIR`, or by the INSECURE `coterie spdz deal-insecure --out DIR` for
//! tests), generate the key on first start, or import an existing one from its single holder
//! (`--import-key FILE`, TFHE-rs or coterie format), write it (`DIR/party-<id>/threshold-key.bin`,
//! mode 0600, and `public-key.bin`), keep `--pool` gate bundles ready, and node 0 serves clients over mutual
//! TLS at `--client-listen`. Clients: `coterie certs-client`, `coterie threshold-encrypt`,
//! `coterie decrypt` (see `coterie_threshold::client`). With `--metrics ADDR` a node also serves
//! its Prometheus metrics (`coterie_threshold::metrics`) over plain, unauthenticated HTTP at ADDR.
//! A node survives the loss of a peer (`coterie_threshold::node::run_node_reconnecting`): it
//! prints `lost node i`, node 0 answers clients "waiting for node i to reconnect", and all
//! reconnect and resume when the node is back (restarted with the same command).

use std::path::Path;

use coterie_net::Mesh;
use coterie_threshold::node::{NodeEvent, ServiceArgs, StartOptions};
use coterie_threshold::service::Event;

/// Runs decryption node `id` on the meshes `connect` makes (the control mesh and its lanes, fresh
/// ones after each lost peer),
/// printing its progress (`party <id>: ...` lines on stdout), and with `metrics` serving its
/// metrics over HTTP at that address; `start` may import a key.
pub async fn run_node<M, C, F>(
    connect: C,
    id: usize,
    config: &Path,
    args: &ServiceArgs,
    metrics: Option<&str>,
    start: &StartOptions,
) -> coterie_threshold::Result<()>
where
    M: Mesh + 'static,
    C: FnMut() -> F,
    F: std::future::Future<Output = coterie_net::Result<(M, Vec<M>)>>,
{
    let endpoint = match metrics {
        Some(addr) => {
            let m = coterie_threshold::metrics::NodeMetrics::new(id);
            let l = coterie_threshold::metrics::bind(addr)
                .await
                .map_err(|e| coterie_threshold::Error::Params(format!("--metrics {addr}: {e}")))?;
            let at = l.local_addr().map(|a| a.to_string());
            println!(
                "party {id}: metrics on http://{}/metrics",
                at.as_deref().unwrap_or(addr)
            );
            Some((
                m.clone(),
                tokio::spawn(coterie_threshold::metrics::serve(l, m)),
            ))
        }
        None => None,
    };
    let pool = args.pool;
    let print = move |e: NodeEvent| match e {
        NodeEvent::KeyReady { n, samples, digest }
            if samples < coterie_threshold::node::PK_SAMPLES =>
        {
            println!(
                "party {id}: key ready (n = {n}, no public key: a key fingerprint of {samples} samples, digest {digest})"
            )
        }
        NodeEvent::KeyReady { n, samples, digest } => {
            println!(
                "party {id}: key ready (n = {n}, public key {samples} samples, digest {digest})"
            )
        }
        NodeEvent::StartUp(sync) => println!("party {id}: start-up: {sync}"),
        NodeEvent::Pool {
            cursor, available, ..
        } => println!(
            "party {id}: gate store cursor {cursor}, {available} bundles ready, pool target {pool}"
        ),
        NodeEvent::Serving { addr } => println!("party 0: serving clients on {addr} (mutual TLS)"),
        NodeEvent::Service(Event::Prepared { made, available }) => {
            println!("party {id}: prepared {made} gate bundles, pool {available}")
        }
        NodeEvent::Service(Event::Decrypted {
            batch,
            available,
            micros,
        }) => println!(
            "party {id}: decrypted a batch of {batch} in {:.2} ms, pool {available}",
            micros as f64 / 1e3
        ),
        NodeEvent::Service(Event::MaterialLow { triples, bits }) => println!(
            "party {id}: SPDZ_2k material too low for more gates ({triples} triples, {bits} bits left); top-up paused"
        ),
        NodeEvent::Service(Event::Refused { reason, count }) => {
            println!(
                "party {id}: refused {count} request(s): {}",
                reason.as_str()
            )
        }
        NodeEvent::Service(Event::GatesTaken { first, end }) => {
            println!("party {id}: took gate bundles {first}..{end}")
        }
        NodeEvent::PeerLost { node, cause } => {
            println!("party {id}: lost node {node} ({cause}); reconnecting")
        }
        NodeEvent::Waiting { node, cause } => {
            println!("party {id}: waiting for node {node} to reconnect ({cause})")
        }
        NodeEvent::Reconnected { session } => {
            println!("party {id}: reconnected to every node (reconnection {session})")
        }
        NodeEvent::Service(Event::Material { .. }) => {}
    };
    let observer = endpoint.as_ref().map(|(m, _)| m.clone());
    let mut observe = move |e: NodeEvent| {
        if let Some(m) = &observer {
            m.observe(&e);
        }
        print(e)
    };
    let stop = std::future::pending();
    let r = coterie_threshold::node::run_node_reconnecting_in_lanes(
        connect,
        config,
        args,
        start,
        &mut observe,
        stop,
    )
    .await;
    if let Some((_, task)) = endpoint {
        task.abort();
    }
    r
}

/// Runs the threshold decryption demo at this party on its store at `dir` and prints the result.
pub async fn party_demo<M: Mesh>(
    mesh: &mut M,
    dir: &Path,
    count: usize,
) -> coterie_threshold::Result<()> {
    let r = coterie_threshold::node::party_demo(mesh, dir, count).await?;
    println!(
        "party {}: encrypted {:?}, decrypted {:?} (strict) and {:?} (pipelined)",
        mesh.id(),
        r.messages,
        r.strict,
        r.pipelined
    );
    println!(
        "party {}: decrypted {} ciphertexts correctly in both schedules (keygen + encryption {} ms, gate prep {} ms, strict {} ms, pipelined {} ms)",
        mesh.id(),
        r.messages.len(),
        r.millis[0],
        r.millis[1],
        r.millis[2],
        r.millis[3]
    );
    Ok(())
}
