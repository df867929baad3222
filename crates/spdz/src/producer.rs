//! Producers: the parties' side of making preprocessing material.
//!
//! A [`Producer`] is one party's preprocessing protocol for a ring: it holds this party's MAC key
//! share and, asked for an [`Order`] (how many items of each [`Kind`]), runs over a mesh and
//! yields this party's share of the material as a [`VecPrep`] batch. [`produce_into_store`]
//! drives any producer into the crash-safe [`PrepStore`] in bounded chunks. The online engine
//! never sees a producer: it consumes through [`crate::Preprocessing`].
//!
//! Producers here: [`crate::OtPrep`] (SPDZ_2k by oblivious transfer) and
//! [`InsecureSeededDealer`] (every party runs the same **insecure** dealer from a shared seed).
//! HE-based producers (MatriGear over `F_p`, with matrix triples) and HSS-based ones (Beaver
//! triples over `Z_{2^n}`) implement the same trait in their own crates; a producer that makes
//! unauthenticated shares authenticates them with an [`crate::Authenticator`].

use std::collections::BTreeMap;
use std::future::Future;

use coterie_base::progress::Progress;
use coterie_net::{Mesh, PartyId};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use crate::kind::Kind;
use crate::prep::{Counts, InsecureDealer, VecPrep};
use crate::ring::Ring;
use crate::store::PrepStore;
use crate::{Error, Result};

/// How many items of each [`Kind`] to make.
///
/// ```
/// use coterie_spdz::{Counts, Kind, Order};
/// let counts = Counts { triples: 5, masks_per_party: 2, ..Counts::default() };
/// let mut order = Order::from_counts(counts, 3).with(Kind::MatrixTriples(4), 1);
/// assert_eq!(order.count(Kind::InputMasks(2)), 2);
/// let first = order.take_chunk(3);
/// assert_eq!((first.count(Kind::Triples), order.count(Kind::Triples)), (3, 2));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Order {
    items: BTreeMap<Kind, usize>,
}

impl Order {
    /// An empty order.
    pub fn new() -> Self {
        Self::default()
    }

    /// The order of `counts` for `n` parties (`masks_per_party` input masks for every owner).
    pub fn from_counts(counts: Counts, n: usize) -> Self {
        let mut o = Self::new()
            .with(Kind::Triples, counts.triples)
            .with(Kind::Bits, counts.bits)
            .with(Kind::Randoms, counts.randoms);
        for owner in 0..n {
            o.add(Kind::InputMasks(owner), counts.masks_per_party);
        }
        o
    }

    /// Adds `count` items of `kind` (builder form of [`Order::add`]).
    pub fn with(mut self, kind: Kind, count: usize) -> Self {
        self.add(kind, count);
        self
    }

    /// Adds `count` items of `kind`.
    pub fn add(&mut self, kind: Kind, count: usize) {
        if count > 0 {
            let c = self.items.entry(kind).or_default();
            *c = c.saturating_add(count);
        }
    }

    /// Items of `kind` ordered.
    pub fn count(&self, kind: Kind) -> usize {
        self.items.get(&kind).copied().unwrap_or(0)
    }

    /// The kinds ordered, with their counts, in [`Kind`] order.
    pub fn items(&self) -> impl Iterator<Item = (Kind, usize)> + '_ {
        self.items.iter().map(|(k, c)| (*k, *c))
    }

    /// Whether nothing is ordered.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The input masks ordered per owner, for `n` parties.
    pub fn masks_per_owner(&self, n: usize) -> Vec<usize> {
        (0..n).map(|o| self.count(Kind::InputMasks(o))).collect()
    }

    /// Checks every kind's parameter against `n` parties.
    pub fn validate(&self, n: usize) -> Result<()> {
        self.items.keys().try_for_each(|k| k.validate(n))
    }

    /// Removes and returns the next chunk: at most `chunk` (at least 1) items of every kind.
    pub fn take_chunk(&mut self, chunk: usize) -> Order {
        let chunk = chunk.max(1);
        let mut out = Order::new();
        for (k, c) in self.items.iter_mut() {
            let t = (*c).min(chunk);
            *c -= t;
            out.add(*k, t);
        }
        self.items.retain(|_, c| *c > 0);
        out
    }
}

/// One party's preprocessing producer over ring `R` (see the module docs). Every party of the
/// mesh runs the same producer type and calls [`Producer::produce`] with the same orders in the
/// same sequence.
pub trait Producer<R: Ring>: Send {
    /// The ring.
    fn ring(&self) -> &R;
    /// This party's id.
    fn party(&self) -> PartyId;
    /// Number of parties.
    fn n(&self) -> usize;
    /// This party's MAC key share (under which all of its material is authenticated).
    fn mac_key_share(&self) -> R::Elem;
    /// Whether this producer can make `kind`.
    fn supports(&self, kind: Kind) -> bool;
    /// Reports progress to `progress` from now on (default: ignored).
    fn set_progress(&mut self, progress: Progress) {
        let _ = progress;
    }
    /// Makes this party's share of `order`, every item authenticated under
    /// [`Producer::mac_key_share`]. A kind it does not [support](Producer::supports) is
    /// refused with [`Error::Unsupported`] before anything is sent.
    fn produce<M: Mesh>(
        &mut self,
        mesh: &mut M,
        order: &Order,
    ) -> impl Future<Output = Result<VecPrep<R>>> + Send;
}

/// Refuses an order with a kind `p` does not support or an invalid parameter.
pub fn check_order<R: Ring, P: Producer<R> + ?Sized>(p: &P, order: &Order) -> Result<()> {
    order.validate(p.n())?;
    match order.items().find(|(k, _)| !p.supports(*k)) {
        Some(_) => Err(Error::Unsupported(
            "a kind of material this producer cannot make",
        )),
        None => Ok(()),
    }
}

/// Runs `producer` for `order` and appends what it makes to `store` (which must be this party's
/// store under the producer's MAC key), in chunks of at most `chunk` items per kind so memory
/// stays bounded; each chunk is appended (fsynced) before the next one is made.
///
/// ```
/// use coterie_net::{InMemoryMesh, MeshOptions};
/// use coterie_spdz::{InsecureSeededDealer, Kind, Order, PrepStore, Producer, Z2k};
/// use coterie_spdz::producer::produce_into_store;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let base = coterie_base::fsio::unique_temp_dir("coterie-spdz-doc-prod");
/// let order = Order::new().with(Kind::Triples, 5).with(Kind::MatrixTriples(2), 2);
/// let mut tasks = Vec::new();
/// for mut mesh in InMemoryMesh::group(2, MeshOptions::default()) {
///     let (dir, order) = (base.join(format!("p{}", tasks.len())), order.clone());
///     tasks.push(tokio::spawn(async move {
///         let ring = Z2k::spdz2k_64();
///         let mut p = InsecureSeededDealer::insecure_from_seed(ring, &mesh, [7; 32])?;
///         let store = PrepStore::create(&dir, ring, p.party(), 2, p.mac_key_share())?;
///         produce_into_store(&mut p, &mut mesh, &store, &order, 4).await?;
///         store.available(Kind::MatrixTriples(2))
///     }));
/// }
/// for t in tasks {
///     assert_eq!(t.await.unwrap().unwrap(), 2);
/// }
/// std::fs::remove_dir_all(&base).unwrap();
/// # });
/// ```
pub async fn produce_into_store<R, P, M>(
    producer: &mut P,
    mesh: &mut M,
    store: &PrepStore<R>,
    order: &Order,
    chunk: usize,
) -> Result<()>
where
    R: Ring,
    P: Producer<R>,
    M: Mesh,
{
    check_order(producer, order)?;
    let mut left = order.clone();
    while !left.is_empty() {
        let step = left.take_chunk(chunk);
        let mut batch = producer.produce(mesh, &step).await?;
        store.append(&mut batch)?;
    }
    Ok(())
}

/// **Insecure** producer: one party's copy of a trusted dealer that every party runs from the
/// same seed, so every party computes every party's shares and keeps its own. Anyone with the
/// seed knows every secret: for tests and online-phase benchmarks only. Needs no messages (the
/// mesh only fixes the party and the number of parties); makes every [`Kind`].
pub struct InsecureSeededDealer<R: Ring> {
    dealer: InsecureDealer<R>,
    rng: ChaCha20Rng,
    party: PartyId,
    progress: Progress,
}

impl<R: Ring> InsecureSeededDealer<R> {
    /// **Insecure**: the dealer of party `mesh.id()` of `mesh.n()`, seeded with `seed` (the same
    /// at every party).
    ///
    /// ```
    /// use coterie_net::{InMemoryMesh, MeshOptions};
    /// use coterie_spdz::{InsecureSeededDealer, Producer, Z2k};
    /// let meshes = InMemoryMesh::group(2, MeshOptions::default());
    /// let a = InsecureSeededDealer::insecure_from_seed(Z2k::spdz2k_64(), &meshes[0], [1; 32]).unwrap();
    /// let b = InsecureSeededDealer::insecure_from_seed(Z2k::spdz2k_64(), &meshes[1], [1; 32]).unwrap();
    /// assert_ne!(a.mac_key_share(), b.mac_key_share());
    /// ```
    pub fn insecure_from_seed<M: Mesh>(ring: R, mesh: &M, seed: [u8; 32]) -> Result<Self> {
        Self::insecure_for_party(ring, mesh.id(), mesh.n(), seed)
    }

    /// **Insecure**: as [`InsecureSeededDealer::insecure_from_seed`] for party `party` of `n`.
    pub fn insecure_for_party(ring: R, party: PartyId, n: usize, seed: [u8; 32]) -> Result<Self> {
        if party >= n {
            return Err(Error::Invalid(format!("party {party} of {n}")));
        }
        let mut rng = ChaCha20Rng::from_seed(seed);
        let dealer = InsecureDealer::insecure_new(ring, n, &mut rng)?;
        Ok(Self {
            dealer,
            rng,
            party,
            progress: Progress::none(),
        })
    }
}

impl<R: Ring> Producer<R> for InsecureSeededDealer<R> {
    fn ring(&self) -> &R {
        self.dealer.ring()
    }
    fn party(&self) -> PartyId {
        self.party
    }
    fn n(&self) -> usize {
        self.dealer.n()
    }
    fn mac_key_share(&self) -> R::Elem {
        self.dealer.key_shares()[self.party].clone()
    }
    fn supports(&self, _kind: Kind) -> bool {
        true
    }
    fn set_progress(&mut self, progress: Progress) {
        self.progress = progress;
    }
    async fn produce<M: Mesh>(&mut self, mesh: &mut M, order: &Order) -> Result<VecPrep<R>> {
        if mesh.id() != self.party || mesh.n() != self.n() {
            return Err(Error::Invalid("mesh of another party".into()));
        }
        check_order(self, order)?;
        let total: usize = order.items().map(|(_, c)| c).sum();
        let task = self.progress.task("insecure dealer", total as u64);
        let mut preps = self.dealer.empty();
        self.dealer.fill_order(&mut preps, order, &mut self.rng)?;
        task.finish();
        Ok(preps.swap_remove(self.party))
    }
}
