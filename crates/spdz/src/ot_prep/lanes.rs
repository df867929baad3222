//! Lanes: one party's [`OtPrep`] producers over several meshes between the same parties, making
//! triples at once so that one lane computes while another's messages are on the wire.
//!
//! A batch of triples is a chain of about 15 rounds that alternates computing (the extension,
//! hashing, the Gilboa corrections, COPE) with sending megabytes (about 11.6 kB per triple per
//! peer with SoftSpokenOT): with one batch at a time the link idles while the parties compute
//! and the cores idle while the bytes travel. Every lane is a separate producer
//! ([`OtPrep::lane`]: its own base OTs, extension and COPE keys, the MAC key share of lane 0)
//! over its own mesh, so the lanes are independent protocol instances whose checks each cover
//! their own material; their outputs are simply concatenated, in lane order, at every party.
//! Lane 0 runs on the caller's task and mesh; the others on tokio tasks of their own (with
//! several cores they also compute in parallel).

use coterie_base::progress::Progress;
use coterie_net::{Mesh, PartyId};
use zeroize::Zeroize;

use super::OtPrep;
use crate::kind::Kind;
use crate::prep::{Share, Triple, VecPrep};
use crate::producer::{Order, Producer, check_order};
use crate::ring::Z2k;
use crate::{Error, Result};

/// One party's lanes: lane 0 (an [`OtPrep`] whose mesh the caller passes to every call) and
/// lanes `1..` with their own meshes. Triples and random bits are split over all lanes (each
/// lane makes its part of the bits whole, checks included); random values and input masks are
/// made on lane 0. Every party must run the
/// same number of lanes, set up in the same order.
///
/// It is a [`Producer`], so [`crate::producer::produce_into_store`] drives it into the crash-safe store
/// like a single [`OtPrep`].
///
/// # Example
///
/// ```
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
/// use coterie_spdz::ot_prep::OtLanes;
/// use coterie_spdz::{OtPrep, Z2k};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let lane1 = InMemoryMesh::group(2, MeshOptions::default());
/// let mut tasks = Vec::new();
/// for (mut m0, m1) in InMemoryMesh::group(2, MeshOptions::default()).into_iter().zip(lane1) {
///     tasks.push(tokio::spawn(async move {
///         let p = OtPrep::setup(&mut m0, Z2k::spdz2k_32()).await?;
///         let mut lanes = OtLanes::setup(p, vec![m1]).await?;
///         assert_eq!(lanes.lanes(), 2);
///         let t = lanes.triples(&mut m0, 5).await?;
///         let b = lanes.bits(&mut m0, 3).await?;
///         lanes.close().await?;
///         m0.close().await?;
///         Ok::<_, coterie_spdz::Error>((t.len(), b.len()))
///     }));
/// }
/// for t in tasks {
///     assert_eq!(t.await.unwrap().unwrap(), (5, 3));
/// }
/// # });
/// ```
pub struct OtLanes<M: Mesh + 'static> {
    main: OtPrep,
    /// Lanes `1..`, each with its mesh; `None` only while a call has them on their tasks.
    extra: Vec<Option<(OtPrep, M)>>,
}

impl<M: Mesh + 'static> OtLanes<M> {
    /// Sets up lanes `1..=meshes.len()` beside `main` (lane 0), one per mesh, in order
    /// ([`OtPrep::lane`]).
    ///
    /// On an error of its own (not a peer's abort or departure), this party tells its peers why
    /// on every lane's mesh before it drops them ([`abort_meshes`]).
    pub async fn setup(main: OtPrep, meshes: Vec<M>) -> Result<Self> {
        let mut extra: Vec<(OtPrep, M)> = Vec::with_capacity(meshes.len());
        let mut rest = meshes.into_iter().enumerate();
        while let Some((l, mut m)) = rest.next() {
            match main.lane(&mut m, l as u32 + 1).await {
                Ok(p) => extra.push((p, m)),
                Err(e) => {
                    let all = extra
                        .into_iter()
                        .map(|(_, m)| m)
                        .chain(std::iter::once(m))
                        .chain(rest.map(|(_, m)| m));
                    abort_meshes(all, &e).await;
                    return Err(e);
                }
            }
        }
        Self::from_lanes(main, extra)
    }

    /// Lanes already set up: `extra[l − 1]` must be lane `l` of `main` (same party, MAC key
    /// share and extension).
    pub fn from_lanes(main: OtPrep, extra: Vec<(OtPrep, M)>) -> Result<Self> {
        for (i, (p, m)) in extra.iter().enumerate() {
            if p.me != main.me
                || p.n != main.n
                || p.alpha != main.alpha
                || p.ext != main.ext
                || p.lane != i as u32 + 1
                || m.id() != main.me
                || m.n() != main.n
            {
                return Err(Error::Invalid(format!(
                    "lane {}: not lane {} of this producer (set it up with OtPrep::lane)",
                    p.lane,
                    i + 1
                )));
            }
        }
        Ok(Self {
            main,
            extra: extra.into_iter().map(Some).collect(),
        })
    }

    /// The number of lanes, lane 0 included.
    pub fn lanes(&self) -> usize {
        1 + self.extra.len()
    }

    /// Lane 0.
    pub fn main(&self) -> &OtPrep {
        &self.main
    }

    /// Lane 0, mutably (for its progress, or to make what only lane 0 makes).
    pub fn main_mut(&mut self) -> &mut OtPrep {
        &mut self.main
    }

    /// Bytes sent so far on the meshes of lanes `1..` (lane 0's mesh is the caller's).
    pub fn extra_bytes_sent(&self) -> u64 {
        self.extra
            .iter()
            .flatten()
            .map(|(_, m)| m.stats().total_sent())
            .sum()
    }

    /// Makes `count` triples over all lanes: lane `l` of `L` makes `count / L` of them, the
    /// first `count mod L` lanes one more, and they come back in lane order (the same order at
    /// every party). `mesh` is lane 0's. An error on any lane is returned once every lane has
    /// finished, and the other lanes' triples are wiped: of several, the one that says most
    /// directly what failed (a check before a peer's abort before a disconnection; in lane
    /// order among equals). A lane whose task panicked is lost, and later calls fail.
    pub async fn triples<M0: Mesh>(
        &mut self,
        mesh: &mut M0,
        count: usize,
    ) -> Result<Vec<Triple<u128>>> {
        self.on_lanes(mesh, count, TriplesJob).await
    }

    /// Makes `count` random bits over all lanes, split as [`OtLanes::triples`] splits triples:
    /// every lane runs the whole of [`OtPrep::bits`] (its triples, the square roots or the XOR
    /// and bit check) on its part.
    pub async fn bits<M0: Mesh>(
        &mut self,
        mesh: &mut M0,
        count: usize,
    ) -> Result<Vec<Share<u128>>> {
        self.on_lanes(mesh, count, BitsJob).await
    }

    /// Runs `job(lane, mesh, part)` on every lane at once (lane 0 on this task with `mesh`, the
    /// others on tokio tasks), the parts split as [`OtLanes::triples`] describes, and
    /// concatenates the results in lane order; errors as there.
    async fn on_lanes<M0: Mesh, J: LaneJob>(
        &mut self,
        mesh: &mut M0,
        count: usize,
        job: J,
    ) -> Result<Vec<J::Out>> {
        let l = self.lanes();
        let part = |i: usize| count / l + usize::from(i < count % l);
        // refuse before any lane leaves its slot, so that a refusal loses nothing more
        if let Some(i) = self.extra.iter().position(Option::is_none) {
            return Err(Error::Invalid(format!("lane {} was lost", i + 1)));
        }
        let mut tasks = Vec::with_capacity(self.extra.len());
        for (i, (mut p, mut m)) in self.extra.iter_mut().filter_map(Option::take).enumerate() {
            let c = part(i + 1);
            tasks.push(tokio::spawn(async move {
                let r = job.run(&mut p, &mut m, c).await;
                (p, m, r)
            }));
        }
        let first = job.run(&mut self.main, mesh, part(0)).await;
        let mut results = vec![first];
        for (i, t) in tasks.into_iter().enumerate() {
            match t.await {
                Ok((p, m, r)) => {
                    if r.is_ok() {
                        // lane 0 reports its own progress; the others' counts go to its task
                        let done = Order::new().with(J::KIND, part(i + 1));
                        self.main.progress(super::ot_order_units(
                            &done,
                            self.main.n,
                            &self.main.ring,
                        ));
                    }
                    self.extra[i] = Some((p, m));
                    results.push(r);
                }
                Err(e) => results.push(Err(Error::Invalid(format!("lane {} failed: {e}", i + 1)))),
            }
        }
        let mut out = Vec::with_capacity(count);
        let mut err: Option<Error> = None;
        for r in results {
            match r {
                Ok(mut v) => out.append(&mut v),
                Err(e) => {
                    if err
                        .as_ref()
                        .is_none_or(|old| cause_rank(&e) < cause_rank(old))
                    {
                        err = Some(e);
                    }
                }
            }
        }
        match err {
            Some(e) => {
                out.zeroize();
                Err(e)
            }
            None => Ok(out),
        }
    }

    /// Ends the lanes after `e` ended this party's run: unless `e` is a peer's abort or departure,
    /// the meshes of lanes `1..` carry the reason to every peer ([`abort_meshes`]) before they are
    /// dropped (lane 0's mesh is the caller's to abort).
    pub async fn abort(self, e: &Error) {
        abort_meshes(self.extra.into_iter().flatten().map(|(_, m)| m), e).await;
    }

    /// Closes the meshes of lanes `1..` (lane 0's mesh is the caller's to close).
    pub async fn close(self) -> Result<()> {
        for (_, m) in self.extra.into_iter().flatten() {
            m.close().await?;
        }
        Ok(())
    }
}

/// Tells the peers on every mesh of `meshes` why this party stops after `e`, then drops the
/// meshes; nothing is sent when `e` is a peer's abort or departure (the peers learn that from the
/// party concerned, and a lost peer is relayed on every linked lane already).
///
/// A lane dropped bare makes its peers see this party disconnect; linked lanes pass that loss to
/// the peers' other meshes at once, so a peer could report "party disconnected" before it reads,
/// on lane 0, what this party sent or the abort it sends last. The abort written first on each
/// lane arrives before the close on the same connection, so every peer learns the reason.
/// (Linked TLS lanes also spread an abort raised on one of them to the others,
/// `coterie_net::TlsMesh::connect_lanes`; meshes of other kinds need every one aborted.)
pub async fn abort_meshes<M: Mesh>(meshes: impl IntoIterator<Item = M>, e: &Error) {
    for mut m in meshes {
        abort_mesh(&mut m, e).await;
    }
}

/// [`abort_meshes`] for one mesh the caller keeps: aborts `mesh` with `e`'s text unless `e` is a
/// peer's abort or departure.
pub async fn abort_mesh<M: Mesh>(mesh: &mut M, e: &Error) {
    if matches!(
        e,
        Error::Net(coterie_net::Error::Aborted { .. } | coterie_net::Error::Disconnected { .. })
    ) {
        return;
    }
    mesh.abort(&e.to_string()).await;
}

/// What [`OtLanes`] runs on every lane: one producer call for a part of the request.
trait LaneJob: Copy + Send + 'static {
    /// One item of the output.
    type Out: Zeroize + Send + 'static;
    /// What it makes (its progress units are [`super::ot_order_units`] of that kind).
    const KIND: Kind;
    /// Makes `count` items on lane `p` over `m`.
    fn run<'a, M: Mesh>(
        self,
        p: &'a mut OtPrep,
        m: &'a mut M,
        count: usize,
    ) -> impl std::future::Future<Output = Result<Vec<Self::Out>>> + Send + 'a;
}

/// [`OtPrep::triples`] on a lane.
#[derive(Clone, Copy)]
struct TriplesJob;

impl LaneJob for TriplesJob {
    type Out = Triple<u128>;
    const KIND: Kind = Kind::Triples;
    fn run<'a, M: Mesh>(
        self,
        p: &'a mut OtPrep,
        m: &'a mut M,
        count: usize,
    ) -> impl std::future::Future<Output = Result<Vec<Self::Out>>> + Send + 'a {
        p.triples(m, count)
    }
}

/// [`OtPrep::bits`] on a lane.
#[derive(Clone, Copy)]
struct BitsJob;

impl LaneJob for BitsJob {
    type Out = Share<u128>;
    const KIND: Kind = Kind::Bits;
    fn run<'a, M: Mesh>(
        self,
        p: &'a mut OtPrep,
        m: &'a mut M,
        count: usize,
    ) -> impl std::future::Future<Output = Result<Vec<Self::Out>>> + Send + 'a {
        p.bits(m, count)
    }
}

/// How directly an error of one lane names what went wrong, lowest first: a failed check or a
/// malformed message seen by this party; a peer's abort (its reason names the check); anything
/// else the network reports. When a check fails on one lane, that lane's abort reaches this
/// party's other lanes too (linked TLS lanes spread it; otherwise the peer leaves and they see it
/// disconnect): the error returned is the check.
fn cause_rank(e: &Error) -> u8 {
    match e {
        Error::Net(coterie_net::Error::Aborted { .. }) => 1,
        Error::Net(_) => 2,
        _ => 0,
    }
}

impl<M: Mesh + 'static> Producer<Z2k> for OtLanes<M> {
    fn ring(&self) -> &Z2k {
        &self.main.ring
    }
    fn party(&self) -> PartyId {
        self.main.me
    }
    fn n(&self) -> usize {
        self.main.n
    }
    fn mac_key_share(&self) -> u128 {
        self.main.alpha
    }
    fn supports(&self, kind: Kind) -> bool {
        self.main.supports(kind)
    }
    fn set_progress(&mut self, progress: Progress) {
        self.main.set_progress(progress);
    }
    async fn produce<M0: Mesh>(&mut self, mesh: &mut M0, order: &Order) -> Result<VecPrep<Z2k>> {
        check_order(self, order)?;
        let own_task = self.main.task.is_none();
        if own_task {
            let total = super::ot_order_units(order, self.main.n, &self.main.ring);
            self.main.start_progress(total);
        }
        let res = self.produce_inner(mesh, order).await;
        if own_task {
            self.main.finish_progress();
        }
        res
    }
}

impl<M: Mesh + 'static> OtLanes<M> {
    async fn produce_inner<M0: Mesh>(
        &mut self,
        mesh: &mut M0,
        order: &Order,
    ) -> Result<VecPrep<Z2k>> {
        let mut p = self.main.empty_prep();
        p.triples
            .extend(self.triples(mesh, order.count(Kind::Triples)).await?);
        p.bits
            .extend(self.bits(mesh, order.count(Kind::Bits)).await?);
        let n = self.main.n;
        let (rnd, masks) = self
            .main
            .randoms_and_owner_masks(mesh, order.count(Kind::Randoms), &order.masks_per_owner(n))
            .await?;
        p.randoms.extend(rnd);
        for (q, m) in p.masks.iter_mut().zip(masks) {
            q.extend(m);
        }
        Ok(p)
    }
}
