//! `coterie ... threshold` (coterie-threshold, issue 5): the threshold-decryption demo at one
//! party. Plain functions for the lead to wire into `main.rs` (needs `coterie-threshold` and
//! `coterie-spdz` as dependencies of this crate). Suggested use for
//! `coterie demo threshold --parties N`:
//!
//! 1. make material with `spdz::deal_insecure(out, N, threshold::demo_amounts(count)?)`
//!    (**insecure** dealer, demo only);
//! 2. start the N party processes, each running `coterie party --config F --id I
//!    threshold-demo --dir out/party-<I> --count C`, which calls [`party_demo`].
//!
//! Each party generates the key inside the ABB, makes public LWE samples, encrypts `C` known
//! messages (from a public seed), prepares the gates, decrypts in both schedules and checks the
//! results; it prints its timings.

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
