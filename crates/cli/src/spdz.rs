//! `coterie spdz ...` (coterie-spdz, issue 4): preprocessing stores and an online demo. Plain
//! functions for the lead to wire into `main.rs` (needs `coterie-spdz.workspace = true`, or a
//! path dependency, in this crate's Cargo.toml). Suggested subcommands:
//!
//! * `coterie spdz deal-insecure --parties N --out DIR [--triples T --bits B --randoms R
//!   --masks M]` → [`deal_insecure`]: **insecure** trusted dealer (one process sees every
//!   secret) writing one store per party to `DIR/party-<i>`; for tests and online benchmarks
//!   only, never a default.
//! * `coterie party ... spdz-prep-ot --dir DIR [--triples T ...]` → [`prep_ot`]: OT-based SPDZ_2k
//!   preprocessing (Z_2^64, s = 64) into this party's store (`coterie_spdz::OtPrep`:
//!   maliciously secure with abort, see its docs); shows a progress bar when stderr is a
//!   terminal.
//! * `coterie party ... spdz-demo --dir DIR [--value V]` → [`online_demo`]: every party inputs a
//!   value, the product is computed with Beaver triples from the store, opened and MAC-checked.

use std::path::Path;

use coterie_net::Mesh;
use coterie_spdz::tools::{deal_insecure_to_stores, online_product_demo, produce_ot_to_store};
use coterie_spdz::{Counts, Z2k};

/// How much material to make per party (per kind; masks are per input owner).
#[derive(Debug, Clone, Copy)]
pub struct Amounts {
    /// Beaver triples.
    pub triples: usize,
    /// Random bits.
    pub bits: usize,
    /// Random authenticated values (one per opened value over Z_2^k).
    pub randoms: usize,
    /// Input masks per owner.
    pub masks: usize,
}

impl From<Amounts> for Counts {
    fn from(a: Amounts) -> Counts {
        Counts {
            triples: a.triples,
            bits: a.bits,
            randoms: a.randoms,
            masks_per_party: a.masks,
        }
    }
}

/// **Insecure** dealer: writes `parties` stores under `out` (Z_2^64, s = 64).
pub fn deal_insecure(out: &Path, parties: usize, amounts: Amounts) -> Result<(), String> {
    let dirs = deal_insecure_to_stores(out, Z2k::spdz2k_64(), parties, amounts.into(), 1 << 16)
        .map_err(|e| e.to_string())?;
    eprintln!(
        "WARNING: insecure trusted dealer — every secret passed through this process; \
         use for tests and online benchmarks only"
    );
    for d in dirs {
        println!("{}", d.display());
    }
    Ok(())
}

/// OT-based SPDZ_2k preprocessing into this party's (new) store at `dir`.
pub async fn prep_ot<M: Mesh>(mesh: &mut M, dir: &Path, amounts: Amounts) -> Result<(), String> {
    let t = std::time::Instant::now();
    let store = produce_ot_to_store(mesh, dir, Z2k::spdz2k_64(), amounts.into(), 4096)
        .await
        .map_err(|e| e.to_string())?;
    drop(store);
    println!(
        "party {}: {} triples, {} bits, {} randoms, {} masks per owner in {:.2} s ({} bytes sent)",
        mesh.id(),
        amounts.triples,
        amounts.bits,
        amounts.randoms,
        amounts.masks,
        t.elapsed().as_secs_f64(),
        mesh.stats().total_sent()
    );
    Ok(())
}

/// The online product demo on this party's store at `dir`.
pub async fn online_demo<M: Mesh>(mesh: &mut M, dir: &Path, value: u64) -> Result<(), String> {
    let v = online_product_demo(mesh, dir, value)
        .await
        .map_err(|e| e.to_string())?;
    println!(
        "party {}: product of all inputs (mod 2^64) = {v} (MAC-checked)",
        mesh.id()
    );
    Ok(())
}
