//! Drivers for the command line: fill per-party preprocessing stores from the **insecure**
//! dealer or from the OT-based producer, and a small online demo. Progress goes to a
//! [`Progress`] callback; the CLI draws it.

use std::path::{Path, PathBuf};

use coterie_base::Progress;
use coterie_net::Mesh;

use crate::Result;
use crate::ot_prep::{OtLanes, OtPrep, abort_meshes};
use crate::prep::{Counts, InsecureDealer};
use crate::producer::{Order, produce_into_store};
use crate::ring::{Ring, Z2k};
use crate::store::PrepStore;

/// The store directory of `party` under `base`: `base/party-<i>`.
pub fn party_dir(base: &Path, party: usize) -> PathBuf {
    base.join(format!("party-{party}"))
}

/// **Insecure** (trusted dealer: this process sees every secret): creates one store per party
/// under `base` (see [`party_dir`]) and fills it with `order`, dealing in chunks of at most
/// `chunk` items per kind so memory stays bounded, reporting to `progress` (one unit per item
/// of every kind). For tests and online-phase benchmarks only.
///
/// ```
/// use coterie_base::Progress;
/// use coterie_spdz::tools::{insecure_deal_to_stores, party_dir};
/// use coterie_spdz::{Kind, Order, PrepStore, Z2k};
/// let base = coterie_base::fsio::unique_temp_dir("coterie-spdz-doc");
/// let order = Order::new().with(Kind::Triples, 10).with(Kind::MatrixTriples(2), 3);
/// insecure_deal_to_stores(&base, Z2k::spdz2k_64(), 2, &order, 4, &Progress::none()).unwrap();
/// let s = PrepStore::open(&party_dir(&base, 1), Z2k::spdz2k_64(), 1, 2).unwrap();
/// assert_eq!(s.available(Kind::Triples).unwrap(), 10);
/// assert_eq!(s.available(Kind::MatrixTriples(2)).unwrap(), 3);
/// std::fs::remove_dir_all(&base).unwrap();
/// ```
pub fn insecure_deal_to_stores<R: Ring>(
    base: &Path,
    ring: R,
    n: usize,
    order: &Order,
    chunk: usize,
    progress: &Progress,
) -> Result<Vec<PathBuf>> {
    order.validate(n)?;
    let mut rng = coterie_math::prg::Csprng::new();
    let dealer = InsecureDealer::insecure_new(ring.clone(), n, &mut rng)?;
    let dirs: Vec<PathBuf> = (0..n).map(|i| party_dir(base, i)).collect();
    let stores = dirs
        .iter()
        .enumerate()
        .map(|(i, d)| PrepStore::create(d, ring.clone(), i, n, dealer.key_shares()[i].clone()))
        .collect::<Result<Vec<_>>>()?;
    let units = |o: &Order| o.items().map(|(_, c)| c as u64).sum::<u64>();
    let task = progress.task("insecure dealer", units(order));
    let mut left = order.clone();
    while !left.is_empty() {
        let step = left.take_chunk(chunk);
        let mut preps = dealer.empty();
        dealer.fill_order(&mut preps, &step, &mut rng)?;
        for (s, p) in stores.iter().zip(preps.iter_mut()) {
            s.append(p)?;
        }
        task.inc(units(&step));
    }
    task.finish();
    Ok(dirs)
}

/// **Insecure**: [`insecure_deal_to_stores`] for `counts` (`masks_per_party` input masks for
/// every owner) without progress reports (a convenience for tests and benchmarks).
///
/// ```
/// use coterie_spdz::tools::{insecure_deal_counts_to_stores, party_dir};
/// use coterie_spdz::{Counts, Kind, PrepStore, Z2k};
/// let base = coterie_base::fsio::unique_temp_dir("coterie-spdz-doc-old");
/// let counts = Counts { triples: 10, ..Counts::default() };
/// insecure_deal_counts_to_stores(&base, Z2k::spdz2k_64(), 2, counts, 4).unwrap();
/// let s = PrepStore::open(&party_dir(&base, 1), Z2k::spdz2k_64(), 1, 2).unwrap();
/// assert_eq!(s.available(Kind::Triples).unwrap(), 10);
/// std::fs::remove_dir_all(&base).unwrap();
/// ```
pub fn insecure_deal_counts_to_stores<R: Ring>(
    base: &Path,
    ring: R,
    n: usize,
    counts: Counts,
    chunk: usize,
) -> Result<Vec<PathBuf>> {
    let order = Order::from_counts(counts, n);
    insecure_deal_to_stores(base, ring, n, &order, chunk, &Progress::none())
}

/// One party's side of OT-based SPDZ_2k preprocessing into a new store at `dir` (each producer
/// session samples a fresh MAC key, so it cannot extend a store made under another key: that is
/// refused). Runs the producer's set-up, then produces `counts` in chunks of at most `chunk`
/// items per kind, appending (fsynced) after each chunk, reporting to `progress` in
/// [`ot_work_units`] (one task for the whole run). See [`OtPrep`] for its security.
///
/// ```no_run
/// # async fn run(mut mesh: coterie_net::InMemoryMesh) -> coterie_spdz::Result<()> {
/// use coterie_base::Progress;
/// use coterie_spdz::tools::produce_ot_to_store_with_progress;
/// use coterie_spdz::{Counts, Z2k};
/// let counts = Counts { triples: 1000, ..Counts::default() };
/// let dir = std::path::Path::new("prep/party-0");
/// produce_ot_to_store_with_progress(&mut mesh, dir, Z2k::spdz2k_64(), counts, 256, Progress::none())
///     .await?;
/// # Ok(()) }
/// ```
pub async fn produce_ot_to_store_with_progress<M: Mesh>(
    mesh: &mut M,
    dir: &Path,
    ring: Z2k,
    counts: Counts,
    chunk: usize,
    progress: Progress,
) -> Result<PrepStore<Z2k>> {
    // one lane: lane 0 alone, no further meshes (their type is never used)
    let none: Vec<coterie_net::InMemoryMesh> = Vec::new();
    let ext = crate::ot_prep::DEFAULT_OT_EXTENSION;
    produce_ot_lanes_to_store_with_progress(mesh, none, dir, ring, ext, counts, chunk, progress)
        .await
        .map(|(store, _)| store)
}

/// [`produce_ot_to_store_with_progress`] on several lanes ([`OtLanes`]): lane 0 on `mesh`, lane
/// `l` on `lanes[l − 1]` (meshes between the same parties; every party passes as many, in the
/// same order), with the OT extension `ext` (every party the same; a mismatch fails the
/// setup with an error that names it). Triples and random bits are split over the lanes; the
/// lanes' meshes are closed at the end (lane 0's is the caller's). Returns the store and the
/// bytes sent on the meshes of lanes `1..`. On an error of this party's own, the lanes' meshes
/// carry its reason to the peers before they are dropped ([`abort_meshes`]); lane 0's mesh is
/// the caller's to abort (as [`crate::flows::prep_ot_lanes`] does).
#[allow(clippy::too_many_arguments)]
pub async fn produce_ot_lanes_to_store_with_progress<M0: Mesh, M: Mesh + 'static>(
    mesh: &mut M0,
    lanes: Vec<M>,
    dir: &Path,
    ring: Z2k,
    ext: crate::ot_prep::OtExtension,
    counts: Counts,
    chunk: usize,
    progress: Progress,
) -> Result<(PrepStore<Z2k>, u64)> {
    let main = match OtPrep::setup_with(mesh, ring, ext).await {
        Ok(p) => p,
        Err(e) => {
            abort_meshes(lanes, &e).await;
            return Err(e);
        }
    };
    let mut producer = OtLanes::setup(main, lanes).await?;
    let (me, n) = (mesh.id(), mesh.n());
    producer.main_mut().set_progress(progress);
    producer
        .main_mut()
        .start_progress(ot_work_units(&ring, counts, n));
    let store = match PrepStore::create(dir, ring, me, n, producer.main().mac_key_share()) {
        Ok(s) => s,
        Err(e) => {
            producer.abort(&e).await;
            return Err(e);
        }
    };
    let order = Order::from_counts(counts, n);
    let res = produce_into_store(&mut producer, mesh, &store, &order, chunk).await;
    producer.main_mut().finish_progress();
    if let Err(e) = res {
        producer.abort(&e).await;
        return Err(e);
    }
    let sent = producer.extra_bytes_sent();
    producer.close().await?;
    Ok((store, sent))
}

/// [`produce_ot_to_store_with_progress`] without progress reports (a convenience for tests).
pub async fn produce_ot_to_store<M: Mesh>(
    mesh: &mut M,
    dir: &Path,
    ring: Z2k,
    counts: Counts,
    chunk: usize,
) -> Result<PrepStore<Z2k>> {
    produce_ot_to_store_with_progress(mesh, dir, ring, counts, chunk, Progress::none()).await
}

/// The units of work [`OtPrep`] reports to its progress for `counts` over `ring` with `n`
/// parties: one per triple made and one per authenticated random value or input mask,
/// including those a random bit consumes: by square roots one triple and one random value
/// per bit (two for `Z_{2^64}` with `s = 64`, whose bits take one more step), by XOR (rings
/// with `k ≥ 126`) `n` triples and `n + 1` values.
///
/// ```
/// use coterie_spdz::{Counts, Z2k};
/// let c = Counts { triples: 10, bits: 1, randoms: 2, masks_per_party: 3 };
/// let units = coterie_spdz::tools::ot_work_units;
/// // triples, the bit's triple and values, randoms, masks
/// assert_eq!(units(&Z2k::spdz2k_64(), c, 2), 10 + 1 + 2 + 2 + 6);
/// assert_eq!(units(&Z2k::spdz2k_32(), c, 2), 10 + 1 + 1 + 2 + 6);
/// ```
pub fn ot_work_units(ring: &Z2k, counts: Counts, n: usize) -> u64 {
    crate::ot_prep::ot_order_units(&Order::from_counts(counts, n), n, ring)
}

/// One party's side of a small online demonstration on material from its store at `dir`
/// (made by [`insecure_deal_counts_to_stores`] or [`produce_ot_to_store`]): every party inputs
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
