//! Drivers for the command line (for the lead to wire into `coterie`): fill per-party
//! preprocessing stores from the **insecure** dealer or from the OT-based producer.

use std::path::{Path, PathBuf};

use coterie_net::Mesh;

use crate::Result;
use crate::ot_prep::OtPrep;
use crate::prep::{Counts, InsecureDealer, Preprocessing};
use crate::ring::{Ring, Z2k};
use crate::store::PrepStore;

/// The store directory of `party` under `base`: `base/party-<i>`.
pub fn party_dir(base: &Path, party: usize) -> PathBuf {
    base.join(format!("party-{party}"))
}

/// **Insecure** (trusted dealer: this process sees every secret): creates one store per party
/// under `base` (see [`party_dir`]) and fills it with `counts`, dealing in chunks of at most
/// `chunk` items per kind so memory stays bounded. For tests and online-phase benchmarks only.
/// Shows a progress bar on stderr when stderr is a terminal.
///
/// ```
/// use coterie_spdz::tools::{deal_insecure_to_stores, party_dir};
/// use coterie_spdz::{Counts, Kind, PrepStore, Z2k};
/// let base = std::env::temp_dir().join(format!("coterie-spdz-doc-{}", std::process::id()));
/// let counts = Counts { triples: 10, ..Counts::default() };
/// deal_insecure_to_stores(&base, Z2k::spdz2k_64(), 2, counts, 4).unwrap();
/// let s = PrepStore::open(&party_dir(&base, 1), Z2k::spdz2k_64(), 1, 2).unwrap();
/// assert_eq!(s.available(Kind::Triples).unwrap(), 10);
/// std::fs::remove_dir_all(&base).unwrap();
/// ```
pub fn deal_insecure_to_stores<R: Ring>(
    base: &Path,
    ring: R,
    n: usize,
    counts: Counts,
    chunk: usize,
) -> Result<Vec<PathBuf>> {
    let mut rng = coterie_math::prg::Csprng::new();
    let dealer = InsecureDealer::insecure_new(ring.clone(), n, &mut rng)?;
    let dirs: Vec<PathBuf> = (0..n).map(|i| party_dir(base, i)).collect();
    let stores = dirs
        .iter()
        .enumerate()
        .map(|(i, d)| PrepStore::create(d, ring.clone(), i, n, dealer.key_shares()[i].clone()))
        .collect::<Result<Vec<_>>>()?;
    let chunk = chunk.max(1);
    let units = |c: &Counts| (c.triples + c.bits + c.randoms + c.masks_per_party * n) as u64;
    let bar = progress_bar(units(&counts), 0).inspect(|pb| pb.set_prefix("insecure dealer"));
    let mut left = counts;
    while left != Counts::default() {
        let step = Counts {
            triples: left.triples.min(chunk),
            bits: left.bits.min(chunk),
            randoms: left.randoms.min(chunk),
            masks_per_party: left.masks_per_party.min(chunk),
        };
        let mut preps = dealer.deal(step, &mut rng);
        for (s, p) in stores.iter().zip(preps.iter_mut()) {
            s.append(p)?;
        }
        if let Some(pb) = &bar {
            pb.inc(units(&step));
        }
        left.triples -= step.triples;
        left.bits -= step.bits;
        left.randoms -= step.randoms;
        left.masks_per_party -= step.masks_per_party;
    }
    if let Some(pb) = bar {
        pb.finish();
    }
    Ok(dirs)
}

/// One party's side of OT-based SPDZ_2k preprocessing into a new store at `dir` (each producer
/// session samples a fresh MAC key, so it cannot extend a store made under another key: that is
/// refused). Runs the producer's set-up, then produces `counts` in chunks of at most `chunk`
/// items per kind, appending (fsynced) after each chunk. See [`OtPrep`] for its
/// security. Shows a progress bar on stderr (in [`ot_work_units`]) when stderr is a terminal.
pub async fn produce_ot_to_store<M: Mesh>(
    mesh: &mut M,
    dir: &Path,
    ring: Z2k,
    counts: Counts,
    chunk: usize,
) -> Result<PrepStore<Z2k>> {
    let mut producer = OtPrep::setup(mesh, ring).await?;
    let (me, n) = (mesh.id(), mesh.n());
    producer.set_progress(progress_bar(ot_work_units(counts, n), me));
    let store = PrepStore::create(dir, ring, me, n, producer.mac_key_share())?;
    let chunk = chunk.max(1);
    let mut left = counts;
    while left != Counts::default() {
        let step = Counts {
            triples: left.triples.min(chunk),
            bits: left.bits.min(chunk),
            randoms: left.randoms.min(chunk),
            masks_per_party: left.masks_per_party.min(chunk),
        };
        let mut p = producer.produce(mesh, step).await?;
        debug_assert_eq!(p.mac_key_share(), producer.mac_key_share());
        store.append(&mut p)?;
        left.triples -= step.triples;
        left.bits -= step.bits;
        left.randoms -= step.randoms;
        left.masks_per_party -= step.masks_per_party;
    }
    if let Some(pb) = &producer.progress_bar() {
        pb.finish();
    }
    Ok(store)
}

/// The units of work [`OtPrep`] reports to its progress bar for `counts` with `n` parties:
/// one per triple made (including the `2n − 1` per random bit) and one per authenticated
/// random value or input mask (including the `2n` per random bit).
pub fn ot_work_units(counts: Counts, n: usize) -> u64 {
    let n = n as u64;
    counts.triples as u64
        + counts.bits as u64 * (2 * n - 1)
        + counts.bits as u64 * 2 * n
        + counts.randoms as u64
        + counts.masks_per_party as u64 * n
}

/// A progress bar of `total` units on stderr, or `None` when stderr is not a terminal.
pub fn progress_bar(total: u64, party: usize) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let pb = indicatif::ProgressBar::new(total);
    let style = indicatif::ProgressStyle::with_template(
        "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} ({per_sec}, eta {eta})",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    pb.set_style(style);
    pb.set_prefix(format!("party {party} OT preprocessing"));
    Some(pb)
}

/// One party's side of a small online demonstration on material from its store at `dir`
/// (made by [`deal_insecure_to_stores`] or [`produce_ot_to_store`]): every party inputs
/// `value`, the engine multiplies all inputs together with Beaver triples, opens the product,
/// runs the MAC check and returns it (mod 2^64). Consumes one input mask per owner, `n − 1`
/// triples and one random value from the store (durably).
pub async fn online_product_demo<M: Mesh>(mesh: &mut M, dir: &Path, value: u64) -> Result<u128> {
    let ring = Z2k::spdz2k_64();
    let store = PrepStore::open(dir, ring, mesh.id(), mesh.n())?;
    let mut e = crate::Engine::new(store);
    let me = mesh.id();
    let mine = [value as u128];
    let mut acc: Option<Vec<crate::Share<u128>>> = None;
    for owner in 0..mesh.n() {
        let x = e
            .input(mesh, owner, (owner == me).then_some(&mine[..]), 1)
            .await?;
        acc = Some(match acc {
            None => x,
            Some(a) => e.mul(mesh, &a, &x).await?,
        });
    }
    let acc = acc.ok_or_else(|| crate::Error::Invalid("no parties".into()))?;
    let out = e.open_checked(mesh, &acc).await?;
    Ok(out[0])
}
