//! `coterie party ... threshold` (a decryption service node) and `coterie party ...
//! threshold-demo`: the flows are `coterie_threshold::node`; this prints what they report.
//!
//! The service: nodes run on the SPDZ_2k stores `DIR/party-<id>` (made by `coterie party ...
//! spdz-prep-ot --dir DIR`, or by the INSECURE `coterie spdz deal-insecure --out DIR` for
//! tests), generate the key on first start (`DIR/party-<id>/threshold-key.bin`, mode 0600, and
//! `public-key.bin`), keep `--pool` gate bundles ready, and node 0 serves clients over mutual
//! TLS at `--client-listen`. Clients: `coterie certs-client`, `coterie threshold-encrypt`,
//! `coterie decrypt` (see `coterie_threshold::client`).

use std::path::Path;

use coterie_net::Mesh;
use coterie_threshold::node::{NodeEvent, ServiceArgs};
use coterie_threshold::service::Event;

/// Runs one decryption node, printing its progress (`party <id>: ...` lines on stdout).
pub async fn run_node<M: Mesh>(
    mesh: &mut M,
    config: &Path,
    args: &ServiceArgs,
) -> coterie_threshold::Result<()> {
    let id = mesh.id();
    let pool = args.pool;
    let mut print = move |e: NodeEvent| match e {
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
    };
    coterie_threshold::node::run_node(mesh, config, args, &mut print).await
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
