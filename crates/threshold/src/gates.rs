//! Gate preprocessing inside the ABB (seed 000 §4, §8): PrepSubsetProds, PrepSign, PrepModLTZ,
//! batched over many gates, and the pool that hands every gate out exactly once.
//!
//! All stored values live in the engine's ring `Z_{2^k}` (shares in `Z_{2^{k+s}}`). A gate
//! output that the protocol needs only modulo `2^j` (Sign entries mod `2^{d+1}`, ModLTZ entries
//! mod `2^{k-l}`) is kept as an exact small integer of `Z_{2^k}` (the linear maps produce exactly
//! -1, 0, 1 or 0/1 from exact 0/1 bits), which is a valid representative of its down-cast; the
//! openings that need only `j` bits use the truncated opening of coterie-spdz, which masks every
//! bit from `j` up. Storing the tables down-cast to `Z_{2^{j+s}}` would save memory (seed 000
//! §10.3: 346,880 bits per bundle instead of 2·128 bits per entry) but needs an engine over
//! the smaller ring sharing the MAC check; not done here.

use std::collections::VecDeque;

use coterie_net::Mesh;
use coterie_spdz::{Engine, Preprocessing, Ring, Share, Z2k};
use zeroize::Zeroize;

use crate::linmaps::{LinOps, subset_prods_to_modltz, subset_prods_to_signs};
use crate::params::LtParams;
use crate::{Error, Result};

/// One party's authenticated share of a `Z_{2^k}` value.
pub type Sh = Share<u128>;

/// Local share arithmetic for the linear maps.
#[derive(Debug, Clone, Copy)]
pub struct ShareOps(pub Z2k);

impl LinOps<Sh> for ShareOps {
    fn zero(&self) -> Sh {
        Share { v: 0, m: 0 }
    }
    fn add(&self, a: &Sh, b: &Sh) -> Sh {
        Share {
            v: self.0.add(&a.v, &b.v),
            m: self.0.add(&a.m, &b.m),
        }
    }
    fn sub(&self, a: &Sh, b: &Sh) -> Sh {
        Share {
            v: self.0.sub(&a.v, &b.v),
            m: self.0.sub(&a.m, &b.m),
        }
    }
}

/// A preprocessed lookup-table gate: the stored mask `[r]_k` (exact, from random bits) and the
/// table `([F(x - r)])_x`. `Debug` shows only the table size (shares are secret).
pub struct Gate {
    /// `[r]`, exact in `Z_{2^k}`.
    pub mask: Sh,
    /// The table, indexed by the public masked input.
    pub table: Vec<Sh>,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Gate {{ entries: {}, .. }}", self.table.len())
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.mask.zeroize();
        self.table.iter_mut().for_each(Zeroize::zeroize);
    }
}

/// The gates one LTRand consumes: `d` Sign gates (least significant digit first) and one
/// ModLTZ gate over `Z_{2^{d+1}}`. Single-use: bundles are moved, never cloned, and a
/// [`GatePool`] refuses an id it has seen before.
#[derive(Debug)]
pub struct GateBundle {
    /// Sequence number; every party numbers its bundles identically (same order of
    /// preprocessing), so the same decryption consumes the same bundle everywhere.
    pub id: u64,
    /// Shape.
    pub lt: LtParams,
    /// Sign gates.
    pub signs: Vec<Gate>,
    /// ModLTZ gate.
    pub modltz: Gate,
    /// Whether the tables were read back from their **down-cast** storage form
    /// ([`crate::store`], seed 000 §10.2): Sign-table entries are then right only modulo
    /// `2^{d+1+s}` and ModLTZ entries modulo `2^{m+s}` (the values and MACs above are zero). That
    /// is all the per-value-check schedules ([`crate::pipelined`]) use; the strict schedule of
    /// [`crate::online`], whose batched MAC check runs over the whole share ring, refuses them.
    pub downcast: bool,
}

impl GateBundle {
    /// Checks the shape against `lt`.
    pub fn check_shape(&self, lt: &LtParams) -> Result<()> {
        let w = lt.sign_widths();
        let ok = self.lt == *lt
            && self.signs.len() == w.len()
            && self
                .signs
                .iter()
                .zip(&w)
                .all(|(g, &a)| g.table.len() == 1 << a)
            && self.modltz.table.len() == 1 << (lt.d() + 1);
        if ok {
            Ok(())
        } else {
            Err(Error::Gate(format!(
                "bundle {} does not have the shape of {lt:?}",
                self.id
            )))
        }
    }
}

/// Cost counters of a preprocessing run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PrepStats {
    /// Beaver multiplications.
    pub mults: usize,
    /// Sequential multiplication rounds (batched opening rounds).
    pub rounds: usize,
    /// Random bits consumed.
    pub bits: usize,
}

struct Node {
    a: u32,
    a0: u32,
    kids: Option<(usize, usize)>,
    out: Option<(Sh, Vec<Sh>)>,
}

fn height(a: u32) -> u32 {
    // ceil(log2 a)
    32 - (a.max(1) - 1).leading_zeros()
}

fn build(a: u32, nodes: &mut Vec<Node>) -> usize {
    if a == 1 {
        nodes.push(Node {
            a,
            a0: 0,
            kids: None,
            out: None,
        });
        return nodes.len() - 1;
    }
    let a0 = a.div_ceil(2);
    let l = build(a0, nodes);
    let r = build(a - a0, nodes);
    nodes.push(Node {
        a,
        a0,
        kids: Some((l, r)),
        out: None,
    });
    nodes.len() - 1
}

/// PrepSubsetProds (Procedure 4) for many gates at once: for every width `a` in `widths`, a
/// stored uniform `[r]_k` with `r ∈ [2^a]` and the subset products `([p_S])_{S ⊆ [a]}` of its
/// bits. Exactly `2^a - a - 1` multiplications per gate, in `ceil(log2 max a)` rounds: all
/// multiplications of the same depth, across all gates, go into one batched Beaver opening.
/// The Beaver openings are MAC-checked at the end (one batch check).
pub async fn prep_subset_prods<P: Preprocessing<Z2k>, M: Mesh>(
    eng: &mut Engine<Z2k, P>,
    mesh: &mut M,
    widths: &[u32],
) -> Result<(Vec<(Sh, Vec<Sh>)>, PrepStats)> {
    if let Some(&a) = widths.iter().find(|&&a| a == 0 || a > 16) {
        return Err(Error::Params(format!("subset products of {a} bits")));
    }
    let ring = *eng.ring();
    let ops = ShareOps(ring);
    let mut nodes = Vec::new();
    let roots: Vec<usize> = widths.iter().map(|&a| build(a, &mut nodes)).collect();
    let leaves = nodes.iter().filter(|n| n.kids.is_none()).count();
    let bits = eng.rand_bits(leaves)?;
    let one = eng.constant(&1);
    let mut stats = PrepStats {
        bits: leaves,
        ..PrepStats::default()
    };
    let mut bi = bits.into_iter();
    for n in nodes.iter_mut().filter(|n| n.kids.is_none()) {
        let b = bi
            .next()
            .ok_or_else(|| Error::Invariant("bit count".into()))?;
        n.out = Some((b.clone(), vec![one.clone(), b]));
    }
    let maxh = widths.iter().map(|&a| height(a)).max().unwrap_or(0);
    for h in 1..=maxh {
        let level: Vec<usize> = (0..nodes.len())
            .filter(|&i| nodes[i].kids.is_some() && height(nodes[i].a) == h)
            .collect();
        let mut xs = Vec::new();
        let mut ys = Vec::new();
        let mut taken = Vec::with_capacity(level.len());
        for &i in &level {
            let (l, r) = nodes[i]
                .kids
                .ok_or_else(|| Error::Invariant("kids".into()))?;
            let left = nodes[l]
                .out
                .take()
                .ok_or_else(|| Error::Invariant("left child".into()))?;
            let right = nodes[r]
                .out
                .take()
                .ok_or_else(|| Error::Invariant("right child".into()))?;
            for q in &right.1[1..] {
                for p in &left.1[1..] {
                    xs.push(p.clone());
                    ys.push(q.clone());
                }
            }
            taken.push((left, right));
        }
        if xs.is_empty() {
            continue;
        }
        let prods = eng.mul(mesh, &xs, &ys).await?;
        stats.mults += prods.len();
        stats.rounds += 1;
        let mut pi = prods.into_iter();
        for (&i, (left, right)) in level.iter().zip(taken) {
            let a0 = nodes[i].a0;
            let r = ops.add(&left.0, &eng.mul_const(&right.0, &(1u128 << a0)));
            let mut p = Vec::with_capacity(1 << nodes[i].a);
            p.extend(left.1.iter().cloned());
            for q in &right.1[1..] {
                p.push(q.clone());
                for _ in 1..left.1.len() {
                    p.push(
                        pi.next()
                            .ok_or_else(|| Error::Invariant("product count".into()))?,
                    );
                }
            }
            nodes[i].out = Some((r, p));
        }
    }
    eng.check(mesh).await?;
    let mut out = Vec::with_capacity(roots.len());
    for &i in &roots {
        out.push(
            nodes[i]
                .out
                .take()
                .ok_or_else(|| Error::Invariant("root".into()))?,
        );
    }
    Ok((out, stats))
}

/// Prepares `count` gate bundles for LTRand with parameters `lt` (PrepSign for every digit,
/// PrepModLTZ for the weighted sign sum), numbered `first_id, first_id + 1, ...`. All
/// subset products of all bundles are computed in one batched run; the tables come from the
/// fast linear maps (local additions).
///
/// # Example
///
/// Two parties, **insecure** toy parameters and dealer material (tests only): one bundle made,
/// pooled and consumed by a decryption:
///
/// ```
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
/// use coterie_spdz::{Counts, Engine, InsecureDealer, Z2k};
/// use coterie_threshold::gates::{GatePool, prep_bundles};
/// use coterie_threshold::keys::SharedKey;
/// use coterie_threshold::online::decrypt;
/// use coterie_threshold::{LweCiphertext, Params};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let p = Params::insecure_toy(4, 16, 2, 3).unwrap();
/// let lt = p.lt().unwrap();
/// let sk = [1i64, 0, 1, 1];
/// let mut rng = rand::rng();
/// let ct = LweCiphertext::encrypt_with_secret_key(&sk, 1, -70, 16, 2, &mut rng);
/// let ring = Z2k::new(16, 64).unwrap();
/// let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
/// let counts = Counts {
///     triples: lt.mults_per_bundle(),
///     bits: lt.bits_per_bundle(),
///     randoms: 16,
///     masks_per_party: 4,
/// };
/// let keys = SharedKey::insecure_deal(&dealer, &ring, &sk, &mut rng);
/// let mut tasks = Vec::new();
/// let parties = InMemoryMesh::group(2, MeshOptions::default());
/// for ((mut mesh, prep), key) in parties.into_iter().zip(dealer.deal(counts, &mut rng)).zip(keys) {
///     let ct = ct.clone();
///     tasks.push(tokio::spawn(async move {
///         let mut eng = Engine::new(prep);
///         let (bundles, _) = prep_bundles(&mut eng, &mut mesh, &lt, 1, 0).await?;
///         let mut pool = GatePool::new(lt);
///         pool.push(bundles)?;
///         let mu = decrypt(&mut eng, &mut mesh, &p, &key, &[ct], &mut pool).await?;
///         mesh.close().await.ok();
///         Ok::<_, coterie_threshold::Error>(mu)
///     }));
/// }
/// for t in tasks {
///     assert_eq!(t.await.unwrap().unwrap(), vec![1]);
/// }
/// # });
/// ```
pub async fn prep_bundles<P: Preprocessing<Z2k>, M: Mesh>(
    eng: &mut Engine<Z2k, P>,
    mesh: &mut M,
    lt: &LtParams,
    count: usize,
    first_id: u64,
) -> Result<(Vec<GateBundle>, PrepStats)> {
    if lt.k > eng.ring().k() {
        return Err(Error::Params(format!(
            "LTRand over Z_2^{} on an engine over Z_2^{}",
            lt.k,
            eng.ring().k()
        )));
    }
    let gw = lt.gate_widths();
    let widths: Vec<u32> = (0..count).flat_map(|_| gw.iter().copied()).collect();
    let (sp, stats) = prep_subset_prods(eng, mesh, &widths).await?;
    let ops = ShareOps(*eng.ring());
    let mut it = sp.into_iter();
    let mut out = Vec::with_capacity(count);
    for j in 0..count {
        let mut signs = Vec::with_capacity(gw.len() - 1);
        for _ in 1..gw.len() {
            let (mask, p) = it
                .next()
                .ok_or_else(|| Error::Invariant("gate count".into()))?;
            signs.push(Gate {
                mask,
                table: subset_prods_to_signs(&ops, &p),
            });
        }
        let (mask, p) = it
            .next()
            .ok_or_else(|| Error::Invariant("gate count".into()))?;
        let modltz = Gate {
            mask,
            table: subset_prods_to_modltz(&ops, &p),
        };
        out.push(GateBundle {
            id: first_id + j as u64,
            lt: *lt,
            signs,
            modltz,
            downcast: false,
        });
    }
    Ok((out, stats))
}

/// A FIFO of gate bundles with exactly-once hand-out: ids must strictly increase on
/// [`GatePool::push`], so a consumed (or duplicated) bundle can never re-enter the pool.
#[derive(Debug)]
pub struct GatePool {
    lt: LtParams,
    queue: VecDeque<GateBundle>,
    high_water: Option<u64>,
    consumed: u64,
}

impl GatePool {
    /// An empty pool for bundles of shape `lt`.
    pub fn new(lt: LtParams) -> Self {
        Self {
            lt,
            queue: VecDeque::new(),
            high_water: None,
            consumed: 0,
        }
    }
    /// The shape of the bundles.
    pub fn lt(&self) -> &LtParams {
        &self.lt
    }
    /// Bundles available.
    pub fn len(&self) -> usize {
        self.queue.len()
    }
    /// Whether the pool is empty.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
    /// Bundles handed out so far.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }
    /// The next id a new bundle must have at least.
    pub fn next_id(&self) -> u64 {
        self.high_water.map_or(0, |h| h + 1)
    }
    /// Adds bundles; refuses any bundle of the wrong shape or whose id is not larger than every
    /// id seen before (a reused gate leaks differences of secret inputs, seed 000 §4).
    pub fn push(&mut self, bundles: Vec<GateBundle>) -> Result<()> {
        for b in bundles {
            b.check_shape(&self.lt)?;
            if self.high_water.is_some_and(|h| b.id <= h) {
                return Err(Error::Gate(format!(
                    "bundle {} was already seen (reuse refused)",
                    b.id
                )));
            }
            self.high_water = Some(b.id);
            self.queue.push_back(b);
        }
        Ok(())
    }
    /// Takes `count` bundles (all or none).
    pub fn take(&mut self, count: usize) -> Result<Vec<GateBundle>> {
        if self.queue.len() < count {
            return Err(Error::Exhausted {
                wanted: count,
                available: self.queue.len(),
            });
        }
        self.consumed += count as u64;
        Ok(self.queue.drain(..count).collect())
    }
}

/// **Insecure** trusted dealing of gate bundles for every party: one process samples the masks
/// and secret-shares the tables (through coterie-spdz's insecure dealer), so it knows every
/// mask. Only for tests and for benchmarking the online phase; the secure way is
/// [`prep_bundles`]. Returns one vector of `count` bundles per party, numbered from `first_id`.
pub fn insecure_deal_bundles<G: rand::Rng + ?Sized>(
    dealer: &coterie_spdz::InsecureDealer<Z2k>,
    ring: &Z2k,
    lt: &LtParams,
    count: usize,
    first_id: u64,
    rng: &mut G,
) -> Vec<Vec<GateBundle>> {
    let n = dealer.key_shares().len();
    let embed = |x: i64| {
        if x < 0 {
            ring.neg(&((-x) as u128))
        } else {
            ring.add(&(x as u128), &0)
        }
    };
    let share_all = |xs: &[i64], rng: &mut G| -> Vec<Vec<Sh>> {
        let mut per: Vec<Vec<Sh>> = (0..n).map(|_| Vec::with_capacity(xs.len())).collect();
        for &x in xs {
            for (p, s) in per.iter_mut().zip(dealer.share(&embed(x), rng)) {
                p.push(s);
            }
        }
        per
    };
    let mut out: Vec<Vec<GateBundle>> = (0..n).map(|_| Vec::with_capacity(count)).collect();
    for j in 0..count {
        let mut signs: Vec<Vec<Gate>> = (0..n).map(|_| Vec::new()).collect();
        for w in lt.sign_widths() {
            let r = rng.next_u64() & ((1u64 << w) - 1);
            let masks = share_all(&[r as i64], rng);
            let tabs = share_all(&crate::plain::sign_table(r, w), rng);
            for ((s, mut m), t) in signs.iter_mut().zip(masks).zip(tabs) {
                s.push(Gate {
                    mask: m.remove(0),
                    table: t,
                });
            }
        }
        let t = lt.d() + 1;
        let r = rng.next_u64() & ((1u64 << t) - 1);
        let masks = share_all(&[r as i64], rng);
        let tabs = share_all(&crate::plain::modltz_table(r, t), rng);
        for (((o, s), mut m), tab) in out.iter_mut().zip(signs).zip(masks).zip(tabs) {
            o.push(GateBundle {
                id: first_id + j as u64,
                lt: *lt,
                signs: s,
                modltz: Gate {
                    mask: m.remove(0),
                    table: tab,
                },
                downcast: false,
            });
        }
    }
    out
}
