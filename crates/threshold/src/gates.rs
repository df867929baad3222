//! Gate preprocessing inside the ABB (seed 000 §4, §8): PrepSubsetProds, PrepSign, PrepModLTZ,
//! batched over many gates, and the pool that hands every gate out exactly once.
//!
//! All stored values live in the engine's ring `Z_{2^k}` (shares in `Z_{2^{k+s}}`). A gate
//! output that the protocol needs only modulo `2^j` (Sign entries mod `2^{d+1}`, ModLTZ entries
//! mod `2^{k-l}`) is kept as an exact small integer of `Z_{2^k}` (the linear maps produce exactly
//! -1, 0, 1 or 0/1 from exact 0/1 bits), which is a valid representative of its down-cast; the
//! openings that need only `j` bits use the truncated opening of coterie-spdz, which masks every
//! bit from `j` up.
//!
//! In memory, a [`GatePool`] holds bundles packed ([`PackedBundles`]): one allocation of `u64`
//! words per push, every bundle's masks and tables bit-packed in the layout of the gate store
//! ([`crate::store`]). Bundles read from the store stay **down-cast** there (seed 000 §10.2–10.3:
//! 346,880 bits of tables per bundle with the paper's parameters instead of 2·128 bits per entry);
//! bundles pushed whole ([`GateBundle`]s from [`prep_bundles`]) keep 128-bit shares, because the
//! strict schedule's batched MAC check ([`crate::online`]) runs over the whole share ring. A
//! decryption reads only the entries its opened digits select, straight from the bits, and the
//! bundles it consumed are wiped in one sweep when it is done ([`TakenGates`]).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use coterie_base::bits::BitReader;
use coterie_net::Mesh;
use coterie_spdz::{Engine, Preprocessing, Ring, Share, Z2k};
use zeroize::Zeroize;

use crate::linmaps::{LinOps, subset_prods_to_modltz, subset_prods_to_signs_fast};
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
            taken.push((left, right));
        }
        let pairs: Vec<(&Sh, &Sh)> = taken
            .iter()
            .flat_map(|(left, right)| {
                right.1[1..]
                    .iter()
                    .flat_map(|q| left.1[1..].iter().map(move |p| (p, q)))
            })
            .collect();
        if pairs.is_empty() {
            continue;
        }
        let prods = eng.mul_pairs(mesh, pairs.iter().copied()).await?;
        drop(pairs);
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
                table: subset_prods_to_signs_fast(&ops, &p),
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

/// Where the parts of one bundle lie in its packed bits: per gate (Sign gates, least significant
/// digit first, then the ModLTZ gate) the mask `(v, m)` of `mask_bits` bits each, then the table
/// entries `(v, m)` of the gate's entry width each. Down-cast bundles use the widths of the
/// store (seed 000 §10.2); whole bundles keep 128 bits everywhere (no reduction at all).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Layout {
    /// Bits of a mask's `v` (and of its `m`).
    mask_bits: u32,
    /// Per gate: (bit offset in the bundle, bits of an entry's `v` and of its `m`, entries).
    gates: Vec<(usize, u32, usize)>,
    /// Bits of one bundle (the store's bit stream holds bundles back to back).
    bundle_bits: usize,
    /// `u64` words of one bundle in memory (every bundle starts on a word).
    stride: usize,
}

impl Layout {
    fn new(lt: &LtParams, downcast: bool) -> Result<Self> {
        let s = crate::store::STORE_S;
        if downcast && lt.k + s > 128 {
            return Err(Error::Gate("k + s above 128 bits".into()));
        }
        let (mask_bits, sign, modltz) = if downcast {
            (lt.k + s, lt.d() + 1 + s, lt.k - lt.l + s)
        } else {
            (128, 128, 128)
        };
        let widths = lt.gate_widths();
        let mut gates = Vec::with_capacity(widths.len());
        let mut at = 0usize;
        for (i, &a) in widths.iter().enumerate() {
            let bits = if i + 1 == widths.len() { modltz } else { sign };
            let entries = 1usize << a;
            gates.push((at, bits, entries));
            at += 2 * mask_bits as usize + 2 * bits as usize * entries;
        }
        Ok(Self {
            mask_bits,
            gates,
            bundle_bits: at,
            stride: at.div_ceil(64),
        })
    }
}

/// Bits `[bit, bit + w)` of the little-endian bit stream `words` (`1 ≤ w ≤ 128`), or `None` past
/// the end.
#[inline]
fn read_bits(words: &[u64], bit: usize, w: u32) -> Option<u128> {
    let end = bit.checked_add(w as usize)?;
    if w == 0 || w > 128 || end > words.len() * 64 {
        return None;
    }
    let i = bit / 64;
    let sh = (bit % 64) as u32;
    let at = |j: usize| u128::from(words.get(j).copied().unwrap_or(0));
    let mut x = (at(i) | (at(i + 1) << 64)) >> sh;
    if sh != 0 && sh + w > 128 {
        x |= at(i + 2) << (128 - sh);
    }
    Some(if w == 128 { x } else { x & ((1u128 << w) - 1) })
}

/// Appends bits LSB first to `u64` words (the word form of `coterie_base::bits`'s layout, so that
/// the packed gates can be wiped with word-wide stores).
struct WordWriter<'a> {
    words: &'a mut Vec<u64>,
    acc: u128,
    n: u32,
}

impl WordWriter<'_> {
    /// Appends the low `w` bits of `x` (`w ≤ 64`).
    fn put64(&mut self, x: u64, w: u32) {
        let x = if w >= 64 { x } else { x & ((1u64 << w) - 1) };
        self.acc |= u128::from(x) << self.n;
        self.n += w;
        if self.n >= 64 {
            self.words.push(self.acc as u64);
            self.acc >>= 64;
            self.n -= 64;
        }
    }
    /// Appends the low `w` bits of `x` (`w ≤ 128`).
    fn put(&mut self, x: u128, w: u32) {
        if w > 64 {
            self.put64(x as u64, 64);
            self.put64((x >> 64) as u64, w - 64);
        } else {
            self.put64(x as u64, w);
        }
    }
    /// Flushes a partial word (zero-padded), so that the next bundle starts on a word.
    fn finish(mut self) {
        if self.n > 0 {
            self.words.push(self.acc as u64);
        }
        self.acc.zeroize();
    }
}

/// Consecutive gate bundles (ids `first_id, first_id + 1, ...`) held as they are stored: the
/// bits of every bundle packed into one allocation of `u64` words (seed 000 §10.2–10.3; bundles
/// read from a [`crate::store::GateStore`] keep the store's **down-cast** widths, 43,648 bytes
/// per bundle with the paper's parameters, and others keep whole 128-bit shares). The consumers
/// read the few entries the opened digits select straight from the bits, and the whole buffer is
/// wiped at once: the part a [`GatePool`] hands out when that decryption is done, the rest on
/// drop. The buffer is backed by huge pages where the kernel allows and wiped with non-temporal
/// stores ([`coterie_math::buffers`]). `Debug` shows only the shape (the bits are secret).
pub struct PackedBundles {
    lt: LtParams,
    first_id: u64,
    count: usize,
    downcast: bool,
    layout: Layout,
    words: Vec<u64>,
}

impl std::fmt::Debug for PackedBundles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PackedBundles {{ first_id: {}, count: {}, downcast: {}, .. }}",
            self.first_id, self.count, self.downcast
        )
    }
}

impl Drop for PackedBundles {
    fn drop(&mut self) {
        // wiped, and kept for the next batch's buffer (no fresh pages to fault in and zero)
        coterie_math::buffers::wipe_and_recycle_u64(std::mem::take(&mut self.words));
    }
}

/// One bundle of a [`PackedBundles`]: its id and read access to its masks and table entries
/// (each read lifts a stored share to a [`Sh`], zero above its stored width).
#[derive(Debug, Clone, Copy)]
pub struct PackedBundle<'a> {
    /// The bundle's id.
    pub id: u64,
    words: &'a [u64],
    layout: &'a Layout,
}

impl PackedBundle<'_> {
    fn share(&self, bit: usize, w: u32) -> Result<Sh> {
        let bad = || Error::Invariant("packed gate read out of range".into());
        Ok(Share {
            v: read_bits(self.words, bit, w).ok_or_else(bad)?,
            m: read_bits(self.words, bit + w as usize, w).ok_or_else(bad)?,
        })
    }
    /// The mask `[r]` of gate `g` (Sign gates `0..d`, the ModLTZ gate `d`).
    pub fn mask(&self, g: usize) -> Result<Sh> {
        let &(at, _, _) = self
            .layout
            .gates
            .get(g)
            .ok_or_else(|| Error::Invariant(format!("no gate {g} in a bundle")))?;
        self.share(at, self.layout.mask_bits)
    }
    /// Asks the CPU to fetch the words of mask `g` ahead of a read (out of range: nothing).
    pub fn prefetch_mask(&self, g: usize) {
        if let Some(&(at, _, _)) = self.layout.gates.get(g) {
            self.prefetch_bits(at, 2 * self.layout.mask_bits as usize);
        }
    }
    /// Asks the CPU to fetch the words of entry `x` of gate `g` ahead of a read (out of range:
    /// nothing).
    pub fn prefetch_entry(&self, g: usize, x: usize) {
        if let Some(&(at, bits, entries)) = self.layout.gates.get(g)
            && x < entries
        {
            let bit = at + 2 * self.layout.mask_bits as usize + 2 * bits as usize * x;
            self.prefetch_bits(bit, 2 * bits as usize);
        }
    }
    fn prefetch_bits(&self, bit: usize, len: usize) {
        // the first and the last word (a share pair spans at most two cache lines)
        for i in [bit / 64, (bit + len - 1) / 64] {
            if let Some(w) = self.words.get(i) {
                coterie_math::buffers::prefetch(w);
            }
        }
    }
    /// Entry `x` of the table of gate `g` (Sign gates `0..d`, the ModLTZ gate `d`).
    pub fn entry(&self, g: usize, x: usize) -> Result<Sh> {
        let &(at, bits, entries) = self
            .layout
            .gates
            .get(g)
            .ok_or_else(|| Error::Invariant(format!("no gate {g} in a bundle")))?;
        if x >= entries {
            return Err(Error::Invariant(format!(
                "index {x} outside a table of {entries} entries"
            )));
        }
        self.share(
            at + 2 * self.layout.mask_bits as usize + 2 * bits as usize * x,
            bits,
        )
    }
}

impl PackedBundles {
    /// An empty buffer for `capacity` bundles of shape `lt` starting at id `first_id`, in the
    /// down-cast widths or whole.
    pub(crate) fn with_capacity(
        lt: &LtParams,
        downcast: bool,
        first_id: u64,
        capacity: usize,
    ) -> Result<Self> {
        let layout = Layout::new(lt, downcast)?;
        let words = capacity
            .checked_mul(layout.stride)
            .ok_or_else(|| Error::Gate("too many bundles".into()))?;
        Ok(Self {
            lt: *lt,
            first_id,
            count: 0,
            downcast,
            // huge pages: the consumers read a few scattered entries per bundle
            words: coterie_math::buffers::vec_u64_huge(words),
            layout,
        })
    }

    /// Appends the next bundle from a stored bit stream (the store's format: the layout's bits
    /// back to back); `None` if the stream ends first.
    pub(crate) fn append_stored(&mut self, r: &mut BitReader<'_>) -> Option<()> {
        let mut left = self.layout.bundle_bits;
        while left > 0 {
            let w = left.min(64) as u32;
            let x = r.get(w)?;
            self.words.push(x);
            left -= w as usize;
        }
        self.count += 1;
        Some(())
    }

    /// Appends the next bundle from its stored bytes (a bundle whose bits are a whole number of
    /// bytes: the layout's bits, little-endian, zero-padded to the last word), as
    /// [`PackedBundles::append_stored`] does bit by bit.
    pub(crate) fn append_stored_bytes(&mut self, b: &[u8]) {
        let mut words = b.chunks_exact(8);
        self.words.extend(
            words
                .by_ref()
                .map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8]))),
        );
        let tail = words.remainder();
        if !tail.is_empty() {
            let mut w = [0u8; 8];
            w[..tail.len()].copy_from_slice(tail);
            self.words.push(u64::from_le_bytes(w));
        }
        self.count += 1;
    }

    /// Appends the next `k` bundles read from `file` at byte `offset` in the stored format,
    /// for a shape whose bundles are a whole number of words (the paper's: 349,184 bits): the
    /// stored bytes are the words, so they are read straight into the buffer (no copy, no
    /// second buffer to wipe; [`coterie_math::buffers::extend_from_file_le`]).
    /// `Err(InvalidInput)` for any other shape; on a read error nothing is appended.
    pub(crate) fn append_stored_from_file(
        &mut self,
        file: &std::fs::File,
        offset: u64,
        k: usize,
    ) -> std::io::Result<()> {
        if !self.layout.bundle_bits.is_multiple_of(64) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "bundles are not a whole number of words",
            ));
        }
        let words = k
            .checked_mul(self.layout.stride)
            .ok_or_else(|| std::io::Error::other("too many bundles"))?;
        coterie_math::buffers::extend_from_file_le(&mut self.words, file, offset, words)?;
        self.count += k;
        Ok(())
    }

    /// Maps the pages of a gate buffer for `count` bundles of shape `lt` (down-cast, as the
    /// store hands them out) and keeps it for the next take ([`coterie_math::buffers::prefault_u64`]):
    /// a service node calls it at start, so that its first batch does not fault the buffer in.
    pub fn prefault(lt: &LtParams, count: usize) -> Result<()> {
        let words = count
            .checked_mul(Layout::new(lt, true)?.stride)
            .ok_or_else(|| Error::Gate("too many bundles".into()))?;
        coterie_math::buffers::prefault_u64(words);
        Ok(())
    }

    /// Bits of one bundle in the stored stream.
    pub(crate) fn bundle_bits(lt: &LtParams) -> Result<usize> {
        Ok(Layout::new(lt, true)?.bundle_bits)
    }

    /// Packs consecutive bundles (ids `b[0].id, b[0].id + 1, ...`, one shape `lt`, all down-cast
    /// or all whole) into one allocation; the bundles themselves are dropped (wiped) afterwards
    /// by the caller.
    ///
    /// # Example
    ///
    /// **Insecure** dealer bundles (tests only), packed and read back:
    ///
    /// ```
    /// use coterie_spdz::{InsecureDealer, Z2k};
    /// use coterie_threshold::gates::{PackedBundles, insecure_deal_bundles};
    /// use coterie_threshold::Params;
    /// let lt = Params::insecure_toy(4, 16, 2, 3).unwrap().lt().unwrap();
    /// let mut rng = rand::rng();
    /// let ring = Z2k::new(16, 64).unwrap();
    /// let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
    /// let mine = insecure_deal_bundles(&dealer, &ring, &lt, 3, 5, &mut rng).remove(0);
    /// let packed = PackedBundles::pack(&lt, &mine).unwrap();
    /// assert_eq!(packed.len(), 3);
    /// let second = packed.iter().nth(1).unwrap();
    /// assert_eq!(second.id, 6);
    /// assert_eq!(second.entry(0, 3).unwrap(), mine[1].signs[0].table[3]);
    /// assert_eq!(second.mask(lt.d() as usize).unwrap(), mine[1].modltz.mask);
    /// ```
    pub fn pack(lt: &LtParams, bundles: &[GateBundle]) -> Result<Self> {
        let first = bundles.first().map_or(0, |b| b.id);
        let downcast = bundles.first().is_some_and(|b| b.downcast);
        let mut out = Self::with_capacity(lt, downcast, first, bundles.len())?;
        let mask_bits = out.layout.mask_bits;
        for (j, b) in bundles.iter().enumerate() {
            b.check_shape(lt)?;
            if b.id != first + j as u64 || b.downcast != downcast {
                return Err(Error::Gate(
                    "packed bundles must have consecutive ids and one form".into(),
                ));
            }
            let mut w = WordWriter {
                words: &mut out.words,
                acc: 0,
                n: 0,
            };
            for (g, &(_, bits, _)) in b
                .signs
                .iter()
                .chain(std::iter::once(&b.modltz))
                .zip(&out.layout.gates)
            {
                w.put(g.mask.v, mask_bits);
                w.put(g.mask.m, mask_bits);
                for e in &g.table {
                    w.put(e.v, bits);
                    w.put(e.m, bits);
                }
            }
            w.finish();
            out.count += 1;
        }
        Ok(out)
    }

    /// Bundles held.
    pub fn len(&self) -> usize {
        self.count
    }
    /// Whether no bundle is held.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// The id of the first bundle.
    pub fn first_id(&self) -> u64 {
        self.first_id
    }
    /// The shape of the bundles.
    pub fn lt(&self) -> &LtParams {
        &self.lt
    }
    /// Whether the tables are down-cast (see [`GateBundle::downcast`]).
    pub fn is_downcast(&self) -> bool {
        self.downcast
    }
    /// Bytes of memory the bundles' bits take.
    pub fn bytes(&self) -> usize {
        self.words.len() * 8
    }
    /// Bundle `j` (counting from the first).
    pub fn get(&self, j: usize) -> Option<PackedBundle<'_>> {
        bundle_view(&self.words, &self.layout, self.first_id, j, self.count)
    }
    /// The bundles in id order.
    pub fn iter(&self) -> impl Iterator<Item = PackedBundle<'_>> + '_ {
        (0..self.count).filter_map(|j| self.get(j))
    }
}

fn bundle_view<'a>(
    words: &'a [u64],
    layout: &'a Layout,
    first_id: u64,
    j: usize,
    count: usize,
) -> Option<PackedBundle<'a>> {
    if j >= count {
        return None;
    }
    let s = layout.stride;
    Some(PackedBundle {
        id: first_id.wrapping_add(j as u64),
        words: words.get(j * s..(j + 1) * s)?,
        layout,
    })
}

/// The words of a pushed [`PackedBundles`], shared by the pool and the [`TakenGates`] that hold
/// parts of it; each part is wiped when its holder is done, the rest when the last holder goes.
struct Chunk {
    first_id: u64,
    count: usize,
    downcast: bool,
    layout: Layout,
    words: Mutex<ChunkWords>,
}

struct ChunkWords {
    words: Vec<u64>,
    /// Per bundle: wiped already.
    wiped: Vec<bool>,
}

impl ChunkWords {
    /// Wipes bundles `a..b` (those not wiped yet) in one sweep per run.
    fn wipe(&mut self, a: usize, b: usize, stride: usize) {
        let mut j = a;
        while j < b {
            if self.wiped.get(j).copied().unwrap_or(true) {
                j += 1;
                continue;
            }
            let mut e = j;
            while e < b && !self.wiped.get(e).copied().unwrap_or(true) {
                self.wiped[e] = true;
                e += 1;
            }
            let (x, y) = (
                (j * stride).min(self.words.len()),
                (e * stride).min(self.words.len()),
            );
            coterie_math::buffers::wipe_u64(&mut self.words[x..y]);
            j = e;
        }
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        let stride = self.layout.stride;
        let count = self.count;
        let w = self.words.get_mut().unwrap_or_else(|e| e.into_inner());
        w.wipe(0, count, stride);
        // every bundle is wiped now; beyond them the buffer holds no words (or only zeros)
        let tail = (count * stride).min(w.words.len());
        coterie_math::buffers::wipe_u64(&mut w.words[tail..]);
        // kept for the next batch's buffer (no fresh pages to fault in and zero)
        coterie_math::buffers::recycle_wiped_u64(std::mem::take(&mut w.words));
    }
}

impl Chunk {
    fn lock(&self) -> std::sync::MutexGuard<'_, ChunkWords> {
        // a panic while the lock was held cannot leave the words inconsistent (reads and wipes)
        self.words.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What [`GatePool::push`] takes: bundles as the preprocessing makes them ([`GateBundle`]s,
/// packed on the way in) or already packed ([`PackedBundles`], as [`crate::store::GateStore::take`]
/// returns them).
pub trait IntoPacked {
    /// The bundles as packed runs of consecutive ids, checked against `lt`.
    fn into_packed(self, lt: &LtParams) -> Result<Vec<PackedBundles>>;
}

impl IntoPacked for PackedBundles {
    fn into_packed(self, lt: &LtParams) -> Result<Vec<PackedBundles>> {
        if self.lt != *lt {
            return Err(Error::Gate(format!(
                "bundles of {:?} in a pool for {lt:?}",
                self.lt
            )));
        }
        Ok(if self.count == 0 {
            Vec::new()
        } else {
            vec![self]
        })
    }
}

impl IntoPacked for Vec<GateBundle> {
    fn into_packed(self, lt: &LtParams) -> Result<Vec<PackedBundles>> {
        let mut out = Vec::new();
        let mut start = 0;
        for j in 1..=self.len() {
            let split = j == self.len()
                || self[j].id != self[j - 1].id.wrapping_add(1)
                || self[j].downcast != self[j - 1].downcast;
            if split {
                out.push(PackedBundles::pack(lt, &self[start..j])?);
                start = j;
            }
        }
        Ok(out)
    }
}

impl IntoPacked for TakenGates {
    /// Always refused: bundles handed out never return to a pool.
    fn into_packed(self, _lt: &LtParams) -> Result<Vec<PackedBundles>> {
        Err(Error::Gate(
            "bundles handed out by a pool cannot be pushed again (reuse refused)".into(),
        ))
    }
}

/// A FIFO of gate bundles with exactly-once hand-out: ids must strictly increase on
/// [`GatePool::push`], so a consumed (or duplicated) bundle can never re-enter the pool. The
/// bundles are held packed ([`PackedBundles`], one allocation per push), and the ones handed out
/// are wiped in one sweep when the [`TakenGates`] that holds them is dropped.
pub struct GatePool {
    lt: LtParams,
    /// Pushed buffers and how many of their bundles were handed out.
    queue: VecDeque<(Arc<Chunk>, usize)>,
    available: usize,
    high_water: Option<u64>,
    consumed: u64,
}

impl std::fmt::Debug for GatePool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatePool")
            .field("lt", &self.lt)
            .field("available", &self.available)
            .field("high_water", &self.high_water)
            .field("consumed", &self.consumed)
            .finish_non_exhaustive()
    }
}

impl GatePool {
    /// An empty pool for bundles of shape `lt`.
    pub fn new(lt: LtParams) -> Self {
        Self {
            lt,
            queue: VecDeque::new(),
            available: 0,
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
        self.available
    }
    /// Whether the pool is empty.
    pub fn is_empty(&self) -> bool {
        self.available == 0
    }
    /// Bundles handed out so far.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }
    /// The next id a new bundle must have at least.
    pub fn next_id(&self) -> u64 {
        self.high_water.map_or(0, |h| h + 1)
    }
    /// Adds bundles ([`GateBundle`]s, packed here into one allocation per run of consecutive
    /// ids, or [`PackedBundles`]); refuses all of them if any has the wrong shape or an id not
    /// larger than every id seen before (a reused gate leaks differences of secret inputs, seed
    /// 000 §4), and refuses bundles a pool handed out ([`TakenGates`]).
    pub fn push<B: IntoPacked>(&mut self, bundles: B) -> Result<()> {
        let runs = bundles.into_packed(&self.lt)?;
        let mut high = self.high_water;
        for r in &runs {
            if high.is_some_and(|h| r.first_id <= h) {
                return Err(Error::Gate(format!(
                    "bundle {} was already seen (reuse refused)",
                    r.first_id
                )));
            }
            let last = r
                .first_id
                .checked_add(r.count as u64 - 1)
                .ok_or_else(|| Error::Gate("bundle ids overflow".into()))?;
            high = Some(last);
        }
        self.high_water = high;
        for mut r in runs {
            let words = std::mem::take(&mut r.words);
            let chunk = Chunk {
                first_id: r.first_id,
                count: r.count,
                downcast: r.downcast,
                layout: r.layout.clone(),
                words: Mutex::new(ChunkWords {
                    words,
                    wiped: vec![false; r.count],
                }),
            };
            self.available += r.count;
            self.queue.push_back((Arc::new(chunk), 0));
        }
        Ok(())
    }
    /// Takes `count` bundles (all or none). They are read in place through the returned
    /// [`TakenGates`] and wiped when it is dropped; the pool never hands them out again.
    pub fn take(&mut self, count: usize) -> Result<TakenGates> {
        if self.available < count {
            return Err(Error::Exhausted {
                wanted: count,
                available: self.available,
            });
        }
        self.consumed += count as u64;
        self.available -= count;
        let mut segments = Vec::new();
        let mut left = count;
        while left > 0 {
            let Some((c, used)) = self.queue.front_mut() else {
                return Err(Error::Invariant("pool count".into()));
            };
            let n = (c.count - *used).min(left);
            segments.push((c.clone(), *used, n));
            *used += n;
            left -= n;
            if *used >= c.count {
                self.queue.pop_front();
            }
        }
        Ok(TakenGates { segments, count })
    }
}

/// Bundles handed out by [`GatePool::take`], read in place from the pool's packed buffers; on
/// drop their words are wiped (one sweep per buffer) and a buffer no one holds any more is freed.
pub struct TakenGates {
    /// (buffer, first bundle in it, bundles)
    segments: Vec<(Arc<Chunk>, usize, usize)>,
    count: usize,
}

impl std::fmt::Debug for TakenGates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TakenGates {{ count: {}, .. }}", self.count)
    }
}

impl TakenGates {
    /// Bundles taken.
    pub fn len(&self) -> usize {
        self.count
    }
    /// Whether none was taken.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// Whether any taken bundle is down-cast (see [`GateBundle::downcast`]).
    pub fn any_downcast(&self) -> bool {
        self.segments.iter().any(|(c, _, _)| c.downcast)
    }
    /// The ids of the bundles taken, in order.
    pub fn ids(&self) -> Vec<u64> {
        self.segments
            .iter()
            .flat_map(|(c, a, n)| (*a..a + n).map(|j| c.first_id.wrapping_add(j as u64)))
            .collect()
    }
    /// Runs `f` on the `j`-th bundle taken.
    fn with<R>(&self, j: usize, f: impl FnOnce(PackedBundle<'_>) -> Result<R>) -> Result<R> {
        let mut j = j;
        for (c, first, n) in &self.segments {
            if j < *n {
                let w = c.lock();
                let b = bundle_view(&w.words, &c.layout, c.first_id, first + j, c.count)
                    .ok_or_else(|| no_bundle(j))?;
                return f(b);
            }
            j -= n;
        }
        Err(no_bundle(j))
    }
}

impl Drop for TakenGates {
    fn drop(&mut self) {
        for (c, first, n) in &self.segments {
            c.lock().wipe(*first, first + n, c.layout.stride);
        }
    }
}

/// Read access to one bundle's masks and entries (Sign gates `0..d`, the ModLTZ gate `d`).
pub(crate) trait BundleRead {
    /// The mask of gate `g`.
    fn mask(&self, g: usize) -> Result<Sh>;
    /// Entry `x` of the table of gate `g`.
    fn entry(&self, g: usize, x: usize) -> Result<Sh>;
    /// A hint that mask `g` will be read soon (default: nothing).
    fn prefetch_mask(&self, _g: usize) {}
    /// A hint that entry `x` of gate `g` will be read soon (default: nothing).
    fn prefetch_entry(&self, _g: usize, _x: usize) {}
}

/// Read access to the bundles one batch consumes, however they are held.
pub(crate) trait Tables {
    /// Bundles.
    fn count(&self) -> usize;
    /// Whether any bundle's tables are down-cast.
    fn any_downcast(&self) -> bool;
    /// Runs `f` on bundle `j` (all its reads under one lock of a shared buffer).
    fn with_bundle<R>(&self, j: usize, f: impl FnOnce(&dyn BundleRead) -> Result<R>) -> Result<R>;
}

fn no_bundle(j: usize) -> Error {
    Error::Invariant(format!("no gate bundle {j}"))
}

impl BundleRead for PackedBundle<'_> {
    fn mask(&self, g: usize) -> Result<Sh> {
        PackedBundle::mask(self, g)
    }
    fn entry(&self, g: usize, x: usize) -> Result<Sh> {
        PackedBundle::entry(self, g, x)
    }
    fn prefetch_mask(&self, g: usize) {
        PackedBundle::prefetch_mask(self, g)
    }
    fn prefetch_entry(&self, g: usize, x: usize) {
        PackedBundle::prefetch_entry(self, g, x)
    }
}

impl Tables for TakenGates {
    fn count(&self) -> usize {
        self.count
    }
    fn any_downcast(&self) -> bool {
        TakenGates::any_downcast(self)
    }
    fn with_bundle<R>(&self, j: usize, f: impl FnOnce(&dyn BundleRead) -> Result<R>) -> Result<R> {
        self.with(j, |b| f(&b))
    }
}

impl GateBundle {
    fn gate(&self, g: usize) -> Result<&Gate> {
        if g == self.signs.len() {
            Ok(&self.modltz)
        } else {
            self.signs
                .get(g)
                .ok_or_else(|| Error::Invariant(format!("no gate {g} in a bundle")))
        }
    }
}

impl BundleRead for GateBundle {
    fn mask(&self, g: usize) -> Result<Sh> {
        Ok(self.gate(g)?.mask.clone())
    }
    fn entry(&self, g: usize, x: usize) -> Result<Sh> {
        self.gate(g)?
            .table
            .get(x)
            .cloned()
            .ok_or_else(|| Error::Invariant(format!("index {x} outside its table")))
    }
}

impl Tables for [GateBundle] {
    fn count(&self) -> usize {
        self.len()
    }
    fn any_downcast(&self) -> bool {
        self.iter().any(|b| b.downcast)
    }
    fn with_bundle<R>(&self, j: usize, f: impl FnOnce(&dyn BundleRead) -> Result<R>) -> Result<R> {
        f(self.get(j).ok_or_else(|| no_bundle(j))?)
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

#[cfg(test)]
mod tests {
    use super::*;
    use coterie_spdz::InsecureDealer;

    fn dealt(count: usize, first: u64) -> (LtParams, Vec<GateBundle>) {
        let lt = LtParams::new(16, 14, 4).unwrap();
        let ring = Z2k::new(16, 64).unwrap();
        let mut rng = rand::rng();
        let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
        let mine = insecure_deal_bundles(&dealer, &ring, &lt, count, first, &mut rng).remove(0);
        (lt, mine)
    }

    fn same_reads(lt: &LtParams, b: &GateBundle, p: PackedBundle<'_>) {
        assert_eq!(b.id, p.id);
        let gates: Vec<&Gate> = b.signs.iter().chain([&b.modltz]).collect();
        assert_eq!(gates.len(), lt.gate_widths().len());
        for (g, gate) in gates.iter().enumerate() {
            assert_eq!(p.mask(g).unwrap(), gate.mask, "mask {g}");
            for (x, e) in gate.table.iter().enumerate() {
                assert_eq!(&p.entry(g, x).unwrap(), e, "gate {g} entry {x}");
            }
            assert!(p.entry(g, gate.table.len()).is_err());
        }
        assert!(p.mask(gates.len()).is_err());
    }

    #[test]
    fn read_bits_matches_the_bit_reader() {
        use coterie_base::bits::BitWriter;
        let mut rng = rand::rng();
        let widths: Vec<u32> = (0..400)
            .map(|_| 1 + (rand::Rng::next_u32(&mut rng) % 128))
            .collect();
        let vals: Vec<u128> = widths
            .iter()
            .map(|&w| {
                let x = (u128::from(rand::Rng::next_u64(&mut rng)) << 64)
                    | u128::from(rand::Rng::next_u64(&mut rng));
                if w == 128 { x } else { x & ((1u128 << w) - 1) }
            })
            .collect();
        let mut bw = BitWriter::new();
        let mut words = Vec::new();
        let mut ww = WordWriter {
            words: &mut words,
            acc: 0,
            n: 0,
        };
        for (&x, &w) in vals.iter().zip(&widths) {
            bw.put_u128(x, w);
            ww.put(x, w);
        }
        ww.finish();
        let bytes = bw.finish();
        let from_words: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(&from_words[..bytes.len()], &bytes[..]);
        let mut at = 0;
        for (&x, &w) in vals.iter().zip(&widths) {
            assert_eq!(read_bits(&words, at, w), Some(x));
            at += w as usize;
        }
        assert_eq!(read_bits(&words, words.len() * 64 - 3, 4), None);
        assert_eq!(read_bits(&words, 0, 0), None);
        assert_eq!(read_bits(&words, 0, 129), None);
        assert_eq!(read_bits(&words, usize::MAX - 2, 8), None);
    }

    #[test]
    fn packed_bundles_read_what_was_packed() {
        let (lt, mine) = dealt(3, 9);
        let packed = PackedBundles::pack(&lt, &mine).unwrap();
        assert_eq!((packed.len(), packed.first_id()), (3, 9));
        assert!(!packed.is_downcast());
        // whole shares: 128 bits for v and m of every mask and entry
        let entries: usize = lt.gate_widths().iter().map(|&a| 1usize << a).sum();
        let per = (entries + lt.gate_widths().len()) * 32;
        assert_eq!(packed.bytes(), 3 * per);
        for (b, p) in mine.iter().zip(packed.iter()) {
            same_reads(&lt, b, p);
        }
        assert!(packed.get(3).is_none());
        // down-cast bundles (as read back from the store) keep the store's widths and bits
        let bytes = crate::store::encode_batch(&lt, &mine).unwrap();
        let back = crate::store::decode_batch(&lt, &bytes).unwrap();
        let packed = PackedBundles::pack(&lt, &back).unwrap();
        assert!(packed.is_downcast());
        let (t, m) = crate::store::stored_bits_per_bundle(&lt);
        assert_eq!(packed.bytes(), 3 * (t + m).div_ceil(64) * 8);
        for (b, p) in back.iter().zip(packed.iter()) {
            same_reads(&lt, b, p);
        }
        // prefetch hints, in range and out of range, change no read
        for p in packed.iter() {
            for (g, &a) in lt.gate_widths().iter().enumerate() {
                p.prefetch_mask(g);
                p.prefetch_entry(g, (1usize << a) - 1);
                p.prefetch_entry(g, 1usize << a);
            }
            p.prefetch_mask(lt.gate_widths().len());
            p.prefetch_entry(usize::MAX, 0);
        }
        for (b, p) in back.iter().zip(packed.iter()) {
            same_reads(&lt, b, p);
        }
        // another shape, a gap in the ids, a mix of forms: refused
        let other = LtParams::new(16, 14, 3).unwrap();
        assert!(PackedBundles::pack(&other, &mine).is_err());
        let mut mine = mine;
        mine[1].downcast = true;
        assert!(PackedBundles::pack(&lt, &mine).is_err());
        mine[1].downcast = false;
        mine[2].id = 42;
        assert!(PackedBundles::pack(&lt, &mine).is_err());
        // a pool takes them as two runs
        let mut pool = GatePool::new(lt);
        pool.push(mine).unwrap();
        assert_eq!(pool.take(3).unwrap().ids(), vec![9, 10, 42]);
    }

    #[test]
    fn pool_hands_out_in_order_across_pushes_and_wipes_what_it_hands_out() {
        let (lt, mut mine) = dealt(6, 0);
        let later = mine.split_off(4);
        let want: Vec<GateBundle> = {
            // keep copies of the shares to compare with (tests only)
            mine.iter()
                .chain(&later)
                .map(|b| GateBundle {
                    id: b.id,
                    lt: b.lt,
                    signs: b
                        .signs
                        .iter()
                        .map(|g| Gate {
                            mask: g.mask.clone(),
                            table: g.table.clone(),
                        })
                        .collect(),
                    modltz: Gate {
                        mask: b.modltz.mask.clone(),
                        table: b.modltz.table.clone(),
                    },
                    downcast: false,
                })
                .collect()
        };
        let mut pool = GatePool::new(lt);
        pool.push(mine).unwrap();
        pool.push(later).unwrap();
        assert_eq!(pool.len(), 6);
        let a = pool.take(3).unwrap();
        assert_eq!(a.ids(), vec![0, 1, 2]);
        let chunk = a.segments[0].0.clone();
        let b = pool.take(2).unwrap();
        assert_eq!(b.ids(), vec![3, 4]);
        assert_eq!(b.segments.len(), 2, "the take spans both pushes");
        for (j, w) in want.iter().enumerate().take(3) {
            for g in 0..=lt.d() as usize {
                assert_eq!(a.with(j, |b| b.mask(g)).unwrap(), w.gate(g).unwrap().mask);
                assert_eq!(
                    a.with(j, |b| b.entry(g, 1)).unwrap(),
                    w.gate(g).unwrap().table[1]
                );
            }
        }
        assert_eq!(
            b.with(1, |x| x.entry(0, 2)).unwrap(),
            want[4].signs[0].table[2]
        );
        assert!(b.with(2, |x| x.entry(0, 0)).is_err());
        assert_eq!((pool.len(), pool.consumed()), (1, 5));
        let stride = chunk.layout.stride;
        let nonzero = |a: usize, b: usize| {
            chunk.lock().words[a * stride..b * stride]
                .iter()
                .filter(|w| **w != 0)
                .count()
        };
        assert!(nonzero(0, 3) > 0 && nonzero(3, 4) > 0);
        drop(a);
        // the three bundles handed out to `a` are wiped, bundle 3 (held by `b`) is not
        assert_eq!(nonzero(0, 3), 0);
        assert!(nonzero(3, 4) > 0);
        drop(b);
        assert_eq!(nonzero(0, 4), 0);
        // handed-out bundles never come back; the last one is still there
        let c = pool.take(1).unwrap();
        assert_eq!(c.ids(), vec![5]);
        assert!(pool.push(c).is_err());
        assert!(matches!(pool.take(1), Err(Error::Exhausted { .. })));
        assert_eq!(pool.next_id(), 6);
    }
}
