//! `coterie spdz ...` (SPDZ_2k stores that need no network) and the SPDZ amounts shared with
//! `coterie party ... spdz-prep-ot`; the flows are `coterie_spdz::flows`.

use std::path::{Path, PathBuf};

use clap::Subcommand;
use coterie_spdz::Counts;

/// How much SPDZ material to make per party.
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct SpdzAmounts {
    /// Beaver triples.
    #[arg(long, default_value_t = 1024)]
    triples: usize,
    /// Random bits.
    #[arg(long, default_value_t = 1024)]
    bits: usize,
    /// Random authenticated values (one per value opened over Z_2^k).
    #[arg(long, default_value_t = 1024)]
    randoms: usize,
    /// Input masks per input owner.
    #[arg(long, default_value_t = 64)]
    masks: usize,
}

impl From<SpdzAmounts> for Counts {
    fn from(a: SpdzAmounts) -> Self {
        Counts {
            triples: a.triples,
            bits: a.bits,
            randoms: a.randoms,
            masks_per_party: a.masks,
        }
    }
}

/// `coterie spdz ...`.
#[derive(Subcommand)]
pub enum SpdzCmd {
    /// INSECURE trusted dealer: one process makes every party's SPDZ_2k material (Z_2^64, s = 64)
    /// and writes one store per party to OUT/party-<i>. For tests and online benchmarks only.
    DealInsecure {
        /// Number of parties.
        #[arg(long)]
        parties: usize,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        amounts: SpdzAmounts,
    },
}

/// Runs `coterie spdz ...`.
pub fn run(cmd: SpdzCmd) -> Result<(), String> {
    match cmd {
        SpdzCmd::DealInsecure {
            parties,
            out,
            amounts,
        } => insecure_deal(&out, parties, amounts.into()),
    }
}

/// The **insecure** dealer (`coterie_spdz::flows::insecure_deal`), with its warning and the
/// store directories printed.
pub fn insecure_deal(out: &Path, parties: usize, counts: Counts) -> Result<(), String> {
    let progress = crate::progress::progress_bar("");
    let dirs = coterie_spdz::flows::insecure_deal(out, parties, counts, &progress)
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
