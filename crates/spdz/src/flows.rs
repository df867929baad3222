//! The SPDZ_2k flows behind the command line (`coterie spdz deal-insecure`, `coterie party ...
//! spdz-prep-ot`, `coterie party ... spdz-demo`), over `Z_2^64` with `s = 64`: the CLI wires
//! them to a mesh and prints what they return.
//!
//! * [`insecure_deal`]: **insecure** trusted dealer (one process sees every secret) writing one
//!   store per party to `DIR/party-<i>`; for tests and online benchmarks only, never a default.
//! * [`prep_ot`]: OT-based preprocessing into this party's new store ([`crate::OtPrep`]:
//!   maliciously secure with abort).
//! * [`online_demo`]: every party inputs a value, the product is computed with Beaver triples from
//!   the store, opened and MAC-checked.

use std::path::{Path, PathBuf};
use std::time::Instant;

use coterie_base::Progress;
use coterie_net::Mesh;

use crate::ot_prep::{DEFAULT_OT_EXTENSION, OtExtension, abort_mesh};
use crate::tools::{
    insecure_deal_to_stores, online_product_demo, produce_ot_lanes_to_store_with_progress,
};
use crate::{Counts, Error, Order, Result, Z2k};

/// Items per kind the dealer makes at once (memory stays bounded).
const DEAL_CHUNK: usize = 1 << 16;
/// Items per kind the OT producer makes per store append.
const OT_CHUNK: usize = 4096;

/// **Insecure** trusted dealer: writes `parties` SPDZ_2k stores (`Z_2^64`, `s = 64`) under
/// `out` (`out/party-<i>`), each holding `counts` (`masks_per_party` input masks for every
/// owner), reporting to `progress`, and returns their directories. Every secret passes through
/// this process: for tests and online benchmarks only. Needs at least 2 parties.
///
/// # Example
///
/// ```
/// use coterie_base::Progress;
/// use coterie_spdz::{Counts, Kind, PrepStore, Z2k};
/// let out = coterie_base::fsio::unique_temp_dir("coterie-flows-doc");
/// let counts = Counts { triples: 4, ..Counts::default() };
/// let none = Progress::none();
/// let dirs = coterie_spdz::flows::insecure_deal(&out, 2, counts, &none).unwrap();
/// let s = PrepStore::open(&dirs[1], Z2k::spdz2k_64(), 1, 2).unwrap();
/// assert_eq!(s.available(Kind::Triples).unwrap(), 4);
/// assert!(coterie_spdz::flows::insecure_deal(&out, 1, counts, &none).is_err());
/// std::fs::remove_dir_all(&out).unwrap();
/// ```
pub fn insecure_deal(
    out: &Path,
    parties: usize,
    counts: Counts,
    progress: &Progress,
) -> Result<Vec<PathBuf>> {
    if parties < 2 {
        return Err(Error::Invalid("need at least 2 parties".into()));
    }
    let order = Order::from_counts(counts, parties);
    insecure_deal_to_stores(out, Z2k::spdz2k_64(), parties, &order, DEAL_CHUNK, progress)
}

/// What [`prep_ot`] did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrepReport {
    /// Wall time, seconds.
    pub secs: f64,
    /// Bytes this party sent over the mesh so far.
    pub bytes_sent: u64,
}

/// One party's OT-based SPDZ_2k preprocessing (`Z_2^64`, `s = 64`) of `counts` into its new
/// store at `dir`, reporting to `progress` (see
/// [`crate::tools::produce_ot_to_store_with_progress`]).
///
/// # Example
///
/// ```
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
/// use coterie_base::Progress;
/// use coterie_spdz::Counts;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let base = coterie_base::fsio::unique_temp_dir("coterie-flows-ot-doc");
/// let counts = Counts { triples: 2, randoms: 1, masks_per_party: 1, ..Counts::default() };
/// let mut tasks = Vec::new();
/// for mut mesh in InMemoryMesh::group(2, MeshOptions::default()) {
///     let dir = base.join(format!("party-{}", mesh.id()));
///     tasks.push(tokio::spawn(async move {
///         let r = coterie_spdz::flows::prep_ot(&mut mesh, &dir, counts, Progress::none()).await;
///         mesh.close().await.ok();
///         r
///     }));
/// }
/// for t in tasks {
///     assert!(t.await.unwrap().unwrap().bytes_sent > 0);
/// }
/// std::fs::remove_dir_all(&base).unwrap();
/// # });
/// ```
pub async fn prep_ot<M: Mesh>(
    mesh: &mut M,
    dir: &Path,
    counts: Counts,
    progress: Progress,
) -> Result<PrepReport> {
    // one lane: lane 0 alone, no further meshes (their type is never used)
    let none: Vec<coterie_net::InMemoryMesh> = Vec::new();
    prep_ot_lanes(mesh, none, dir, counts, DEFAULT_OT_EXTENSION, progress).await
}

/// [`prep_ot`] on several lanes: lane 0 on `mesh`, one more lane on each of `lanes` (meshes
/// between the same parties, every party passing as many in the same order), so that batches of
/// triples are in flight at once ([`crate::OtLanes`]); the bytes reported cover every lane.
/// `ext` is the OT extension ([`OtExtension`]; [`prep_ot`] runs [`DEFAULT_OT_EXTENSION`]), the
/// same at every party: `ss8` sends 14% fewer bytes per triple than the default `ss4` for about
/// 1.6x its CPU time (BENCHMARKS.md, SPDZ section). On an error of this party's own, every
/// lane's mesh and `mesh` are aborted with its text before this returns, so the peers report the
/// reason.
///
/// # Example
///
/// ```
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
/// use coterie_spdz::{Counts, Kind, PrepStore, Z2k};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let base = coterie_base::fsio::unique_temp_dir("coterie-flows-lanes-doc");
/// let counts = Counts { triples: 5, bits: 1, ..Counts::default() };
/// let lane1 = InMemoryMesh::group(2, MeshOptions::default());
/// let mut tasks = Vec::new();
/// for (mut mesh, m1) in InMemoryMesh::group(2, MeshOptions::default()).into_iter().zip(lane1) {
///     let (me, dir) = (mesh.id(), base.join(format!("party-{}", mesh.id())));
///     tasks.push(tokio::spawn(async move {
///         let none = coterie_base::Progress::none();
///         let ext = coterie_spdz::ot_prep::OtExtension::SoftSpoken { k: 8 };
///         let r = coterie_spdz::flows::prep_ot_lanes(&mut mesh, vec![m1], &dir, counts, ext, none)
///             .await?;
///         mesh.close().await?;
///         let s = PrepStore::open(&dir, Z2k::spdz2k_64(), me, 2)?;
///         assert_eq!(s.available(Kind::Triples)?, 5);
///         Ok::<_, coterie_spdz::Error>(r)
///     }));
/// }
/// for t in tasks {
///     assert!(t.await.unwrap().unwrap().bytes_sent > 0);
/// }
/// std::fs::remove_dir_all(&base).unwrap();
/// # });
/// ```
pub async fn prep_ot_lanes<M0: Mesh, M: Mesh + 'static>(
    mesh: &mut M0,
    lanes: Vec<M>,
    dir: &Path,
    counts: Counts,
    ext: OtExtension,
    progress: Progress,
) -> Result<PrepReport> {
    let t = Instant::now();
    let ring = Z2k::spdz2k_64();
    let made = produce_ot_lanes_to_store_with_progress(
        mesh, lanes, dir, ring, ext, counts, OT_CHUNK, progress,
    )
    .await;
    let (store, lane_bytes) = aborting_on_error(mesh, made).await?;
    drop(store);
    Ok(PrepReport {
        secs: t.elapsed().as_secs_f64(),
        bytes_sent: mesh.stats().total_sent() + lane_bytes,
    })
}

/// The online product demo on this party's store at `dir` (see
/// [`crate::tools::online_product_demo`]): every party inputs `value`; returns the MAC-checked
/// product of all inputs mod `2^64`. On an error of this party's own, `mesh` is aborted with its
/// text before this returns.
///
/// # Example
///
/// ```
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
/// use coterie_spdz::Counts;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let base = coterie_base::fsio::unique_temp_dir("coterie-flows-online-doc");
/// let counts = Counts { triples: 1, randoms: 1, masks_per_party: 1, ..Counts::default() };
/// let none = coterie_base::Progress::none();
/// let dirs = coterie_spdz::flows::insecure_deal(&base, 2, counts, &none).unwrap();
/// let mut tasks = Vec::new();
/// for (mut mesh, dir) in InMemoryMesh::group(2, MeshOptions::default()).into_iter().zip(dirs) {
///     tasks.push(tokio::spawn(async move {
///         let v = mesh.id() as u64 + 2;
///         let r = coterie_spdz::flows::online_demo(&mut mesh, &dir, v).await;
///         mesh.close().await.ok();
///         r
///     }));
/// }
/// for t in tasks {
///     assert_eq!(t.await.unwrap().unwrap(), 6);
/// }
/// std::fs::remove_dir_all(&base).unwrap();
/// # });
/// ```
pub async fn online_demo<M: Mesh>(mesh: &mut M, dir: &Path, value: u64) -> Result<u64> {
    let made = online_product_demo(mesh, dir, value).await;
    let v = aborting_on_error(mesh, made).await?;
    u64::try_from(v).map_err(|_| Error::Invalid(format!("product {v} not below 2^64")))
}

/// Passes `r` on; on an error of this party's own, first aborts `mesh` with its text
/// ([`abort_mesh`]), so that the peers learn why this party stops instead of seeing its
/// connections end (a caller that aborts too sends nothing more: the mesh is poisoned).
async fn aborting_on_error<M: Mesh, T>(mesh: &mut M, r: Result<T>) -> Result<T> {
    if let Err(e) = &r {
        abort_mesh(mesh, e).await;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use coterie_net::{InMemoryMesh, MeshOptions};

    /// OT preprocessing into stores, then the online product on them: every party gets the
    /// product of all inputs, and the stores hold what was asked for.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn prep_ot_then_online_demo_three_parties() {
        let base = coterie_base::fsio::unique_temp_dir("coterie-flows-test");
        let counts = Counts {
            triples: 3,
            bits: 0,
            randoms: 1,
            masks_per_party: 1,
        };
        let run = |online: bool| {
            let base = base.clone();
            async move {
                let mut tasks = Vec::new();
                for mut mesh in InMemoryMesh::group(3, MeshOptions::default()) {
                    let dir = base.join(format!("party-{}", mesh.id()));
                    tasks.push(tokio::spawn(async move {
                        let v = mesh.id() as u64 + 2;
                        let r = if online {
                            online_demo(&mut mesh, &dir, v).await
                        } else {
                            prep_ot(&mut mesh, &dir, counts, Progress::none())
                                .await
                                .map(|r| r.bytes_sent)
                        };
                        mesh.close().await.ok();
                        r
                    }));
                }
                let mut out = Vec::new();
                for t in tasks {
                    out.push(t.await.unwrap().unwrap());
                }
                out
            }
        };
        assert!(run(false).await.iter().all(|&b| b > 0));
        let s = crate::PrepStore::open(&base.join("party-2"), Z2k::spdz2k_64(), 2, 3).unwrap();
        assert_eq!(s.available(crate::Kind::Triples).unwrap(), 3);
        drop(s);
        assert_eq!(run(true).await, vec![24, 24, 24]);
        let _ = std::fs::remove_dir_all(&base);
    }

    /// A party whose flow fails on an error of its own tells its peers why: party 1's store path
    /// lies under a file, in preprocessing and in the online demo; party 0 reports party 1's
    /// abort with that reason, not a lost or silent peer.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_flow_that_fails_aborts_its_mesh() {
        let base = coterie_base::fsio::unique_temp_dir("coterie-flows-abort");
        std::fs::create_dir_all(&base).unwrap();
        let file = base.join("a-file");
        std::fs::write(&file, b"not a directory").unwrap();
        let counts = Counts {
            triples: 2,
            randoms: 1,
            masks_per_party: 1,
            ..Counts::default()
        };
        // party 0's store for the online run (the insecure dealer: this is a test)
        let dealt = insecure_deal(&base.join("dealt"), 2, counts, &Progress::none()).unwrap();
        for online in [false, true] {
            let opts = MeshOptions {
                timeout: std::time::Duration::from_secs(20),
                ..MeshOptions::default()
            };
            let mut tasks = Vec::new();
            for mut mesh in InMemoryMesh::group(2, opts) {
                let me = mesh.id();
                let dir = match (me, online) {
                    (1, _) => file.join("party-1"),
                    (_, true) => dealt[0].clone(),
                    _ => base.join("party-0"),
                };
                tasks.push(tokio::spawn(async move {
                    let r = if online {
                        online_demo(&mut mesh, &dir, 3).await.map(|_| ())
                    } else {
                        prep_ot(&mut mesh, &dir, counts, Progress::none())
                            .await
                            .map(|_| ())
                    };
                    drop(mesh);
                    r
                }));
            }
            let mut errs = Vec::new();
            for t in tasks {
                errs.push(t.await.unwrap().unwrap_err());
            }
            let own = errs[1].to_string();
            match &errs[0] {
                Error::Net(coterie_net::Error::Aborted { party: 1, reason }) => {
                    assert!(own.contains(reason.as_str()), "{reason} vs {own}")
                }
                e => panic!("online {online}: party 0 got {e}, party 1 failed with {own}"),
            }
        }
        let _ = std::fs::remove_dir_all(&base);
    }
}
