//! Preprocessing: the material the online phase consumes, behind one trait ([`Preprocessing`]),
//! so the engine does not know where triples come from.
//!
//! * [`Share`], [`Triple`], [`InputMask`], [`MatrixTriple`]: one party's authenticated shares;
//!   the kinds of material and their sizes are the table of [`crate::kind`].
//! * [`VecPrep`]: a party's material held in memory (what every producer can output).
//! * [`InsecureDealer`]: one process makes every party's material, every kind (matrix triples
//!   too). **Insecure** (the dealer knows every secret): for tests and for benchmarking the
//!   online phase only; never a default. [`crate::InsecureSeededDealer`] is the same dealer
//!   run by every party from a shared seed, as a [`crate::Producer`].
//! * [`DowncastPrep`]: turns `Z_{2^k}` material into `Z_{2^l}` material (`l < k`) by the ring
//!   homomorphism, for an engine over the down-cast ring.
//! * The on-disk store ([`crate::store::PrepStore`]) also implements [`Preprocessing`].

use std::collections::{BTreeMap, VecDeque};

use coterie_net::PartyId;
use rand::Rng;
use serde::{Deserialize, Serialize};
use zeroize::Zeroize;

pub use crate::kind::{KINDS, Kind, KindRow};
use crate::ring::{Ring, Z2k};
use crate::{Error, Result};

/// One party's authenticated share `(x_i, m_i)` of `x`: `Σ x_i = x`, `Σ m_i = α·x`.
#[derive(Debug, Clone, PartialEq, Default, Zeroize)]
pub struct Share<E: Zeroize> {
    /// Share of the value.
    pub v: E,
    /// Share of its MAC.
    pub m: E,
}

/// A Beaver triple `([a], [b], [c])` with `c = a·b` (in `Z_{2^k}`: modulo `2^k` at least).
#[derive(Debug, Clone, PartialEq, Default, Zeroize)]
pub struct Triple<E: Zeroize> {
    /// `[a]`.
    pub a: Share<E>,
    /// `[b]`.
    pub b: Share<E>,
    /// `[c]`.
    pub c: Share<E>,
}

/// A random input mask `[r]` for inputs of one owner; the owner also knows `r`.
#[derive(Debug, Clone, PartialEq, Default, Zeroize)]
pub struct InputMask<E: Zeroize> {
    /// `[r]`.
    pub share: Share<E>,
    /// `r`, for the owner only.
    pub value: Option<E>,
}

/// A `d×d` matrix triple `([A], [B], [C])` with `C = A·B` (in `Z_{2^k}`: modulo `2^k` at least),
/// the matrix analogue of a [`Triple`] (MatriGear's matrix triples). Entries are row-major:
/// entry `(i, j)` is at index `i·d + j` of `a`, `b` and `c`, each of length `d²`.
#[derive(Debug, Clone, PartialEq, Default, Zeroize)]
pub struct MatrixTriple<E: Zeroize> {
    /// The dimension `d`.
    pub d: usize,
    /// `[A]`, row-major.
    pub a: Vec<Share<E>>,
    /// `[B]`, row-major.
    pub b: Vec<Share<E>>,
    /// `[C]`, row-major.
    pub c: Vec<Share<E>>,
}

impl<E: Zeroize + Clone> MatrixTriple<E> {
    /// The `3·d²` shares in their stored order: `A`, then `B`, then `C`.
    pub fn shares(&self) -> impl Iterator<Item = &Share<E>> {
        self.a.iter().chain(&self.b).chain(&self.c)
    }

    /// Rebuilds a `d×d` triple from `3·d²` shares in the order of [`MatrixTriple::shares`].
    pub fn from_shares(d: usize, shares: &[Share<E>]) -> Result<Self> {
        let dd = d
            .checked_mul(d)
            .filter(|dd| dd.checked_mul(3) == Some(shares.len()))
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "{} shares do not make a {d}x{d} matrix triple",
                    shares.len()
                ))
            })?;
        Ok(Self {
            d,
            a: shares[..dd].to_vec(),
            b: shares[dd..2 * dd].to_vec(),
            c: shares[2 * dd..].to_vec(),
        })
    }
}

/// A source of one party's preprocessing material. Every call hands out fresh material that is
/// never handed out again.
pub trait Preprocessing<R: Ring>: Send {
    /// The ring.
    fn ring(&self) -> &R;
    /// This party's id.
    fn party(&self) -> PartyId;
    /// Number of parties.
    fn n(&self) -> usize;
    /// This party's MAC key share `α_i`.
    fn mac_key_share(&self) -> R::Elem;
    /// `count` Beaver triples.
    fn triples(&mut self, count: usize) -> Result<Vec<Triple<R::Elem>>>;
    /// `count` random bits `[b]`, `b ∈ {0, 1}`.
    fn bits(&mut self, count: usize) -> Result<Vec<Share<R::Elem>>>;
    /// `count` uniformly random authenticated values.
    fn randoms(&mut self, count: usize) -> Result<Vec<Share<R::Elem>>>;
    /// `count` input masks for inputs of `owner`.
    fn input_masks(&mut self, owner: PartyId, count: usize) -> Result<Vec<InputMask<R::Elem>>>;
    /// `count` matrix triples of dimension `d`. Sources without matrix triples refuse with
    /// [`Error::Unsupported`] (the default).
    fn matrix_triples(&mut self, d: usize, count: usize) -> Result<Vec<MatrixTriple<R::Elem>>> {
        let _ = (d, count);
        Err(Error::Unsupported(
            "matrix triples from this preprocessing source",
        ))
    }
}

fn take<T>(q: &mut VecDeque<T>, count: usize, kind: Kind) -> Result<Vec<T>> {
    if q.len() < count {
        return Err(Error::Exhausted {
            kind: kind.to_string(),
            wanted: count as u64,
            available: q.len() as u64,
        });
    }
    Ok(q.drain(..count).collect())
}

/// One party's preprocessing material in memory.
#[derive(Debug, Clone)]
pub struct VecPrep<R: Ring> {
    ring: R,
    party: PartyId,
    n: usize,
    key: R::Elem,
    /// Triples not yet handed out.
    pub triples: VecDeque<Triple<R::Elem>>,
    /// Bits not yet handed out.
    pub bits: VecDeque<Share<R::Elem>>,
    /// Random values not yet handed out.
    pub randoms: VecDeque<Share<R::Elem>>,
    /// Input masks by owner.
    pub masks: Vec<VecDeque<InputMask<R::Elem>>>,
    /// Matrix triples by dimension `d`.
    pub matrix_triples: BTreeMap<usize, VecDeque<MatrixTriple<R::Elem>>>,
}

impl<R: Ring> VecPrep<R> {
    /// Empty material for party `party` of `n` with MAC key share `key`.
    pub fn new(ring: R, party: PartyId, n: usize, key: R::Elem) -> Self {
        Self {
            ring,
            party,
            n,
            key,
            triples: VecDeque::new(),
            bits: VecDeque::new(),
            randoms: VecDeque::new(),
            masks: (0..n).map(|_| VecDeque::new()).collect(),
            matrix_triples: BTreeMap::new(),
        }
    }

    /// Number of items of `kind` held.
    pub fn len_of(&self, kind: Kind) -> usize {
        match kind {
            Kind::Triples => self.triples.len(),
            Kind::Bits => self.bits.len(),
            Kind::Randoms => self.randoms.len(),
            Kind::InputMasks(o) => self.masks.get(o).map_or(0, VecDeque::len),
            Kind::MatrixTriples(d) => self.matrix_triples.get(&d).map_or(0, VecDeque::len),
        }
    }

    /// Moves all material of `other` (same ring, party, number of parties and MAC key share)
    /// behind this one's.
    pub fn extend_from(&mut self, other: &mut VecPrep<R>) -> Result<()> {
        if other.ring.descriptor() != self.ring.descriptor()
            || other.party != self.party
            || other.n != self.n
            || other.key != self.key
        {
            return Err(Error::Invalid(
                "material for another ring, party or MAC key".into(),
            ));
        }
        self.triples.append(&mut other.triples);
        self.bits.append(&mut other.bits);
        self.randoms.append(&mut other.randoms);
        for (q, o) in self.masks.iter_mut().zip(other.masks.iter_mut()) {
            q.append(o);
        }
        for (d, q) in other.matrix_triples.iter_mut() {
            self.matrix_triples.entry(*d).or_default().append(q);
        }
        Ok(())
    }
}

impl<R: Ring> Drop for VecPrep<R> {
    fn drop(&mut self) {
        self.key.zeroize();
        self.triples.iter_mut().for_each(Zeroize::zeroize);
        self.bits.iter_mut().for_each(Zeroize::zeroize);
        self.randoms.iter_mut().for_each(Zeroize::zeroize);
        self.masks
            .iter_mut()
            .for_each(|q| q.iter_mut().for_each(Zeroize::zeroize));
        self.matrix_triples
            .values_mut()
            .for_each(|q| q.iter_mut().for_each(Zeroize::zeroize));
    }
}

impl<R: Ring> Preprocessing<R> for VecPrep<R> {
    fn ring(&self) -> &R {
        &self.ring
    }
    fn party(&self) -> PartyId {
        self.party
    }
    fn n(&self) -> usize {
        self.n
    }
    fn mac_key_share(&self) -> R::Elem {
        self.key.clone()
    }
    fn triples(&mut self, count: usize) -> Result<Vec<Triple<R::Elem>>> {
        take(&mut self.triples, count, Kind::Triples)
    }
    fn bits(&mut self, count: usize) -> Result<Vec<Share<R::Elem>>> {
        take(&mut self.bits, count, Kind::Bits)
    }
    fn randoms(&mut self, count: usize) -> Result<Vec<Share<R::Elem>>> {
        take(&mut self.randoms, count, Kind::Randoms)
    }
    fn input_masks(&mut self, owner: PartyId, count: usize) -> Result<Vec<InputMask<R::Elem>>> {
        let q = self
            .masks
            .get_mut(owner)
            .ok_or_else(|| Error::Invalid(format!("no party {owner}")))?;
        take(q, count, Kind::InputMasks(owner))
    }
    fn matrix_triples(&mut self, d: usize, count: usize) -> Result<Vec<MatrixTriple<R::Elem>>> {
        let kind = Kind::MatrixTriples(d);
        match self.matrix_triples.get_mut(&d) {
            Some(q) => take(q, count, kind),
            None => take(&mut VecDeque::new(), count, kind),
        }
    }
}

/// How much material a dealer or producer makes per party.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Beaver triples.
    pub triples: usize,
    /// Random bits.
    pub bits: usize,
    /// Random authenticated values.
    pub randoms: usize,
    /// Input masks per owner.
    pub masks_per_party: usize,
}

/// **Insecure** trusted dealer: one process samples the MAC key and every party's shares of
/// every triple, bit, random value and input mask, so it learns all secrets. For tests and for
/// benchmarking the online phase only; never use it where a secret matters, and never make it a
/// default.
pub struct InsecureDealer<R: Ring> {
    ring: R,
    n: usize,
    keys: Vec<R::Elem>,
    alpha: R::Elem,
}

impl<R: Ring> InsecureDealer<R> {
    /// **Insecure**: a dealer for `n ≥ 2` parties with a fresh MAC key from `rng`.
    ///
    /// ```
    /// use coterie_spdz::{Counts, InsecureDealer, Preprocessing, Z2k};
    /// let mut rng = rand::rng();
    /// let dealer = InsecureDealer::insecure_new(Z2k::spdz2k_64(), 3, &mut rng).unwrap();
    /// let mut preps = dealer.deal(Counts { triples: 2, ..Counts::default() }, &mut rng);
    /// assert_eq!(preps[2].triples(2).unwrap().len(), 2);
    /// assert!(InsecureDealer::insecure_new(Z2k::spdz2k_64(), 1, &mut rng).is_err());
    /// ```
    pub fn insecure_new<G: Rng + ?Sized>(ring: R, n: usize, rng: &mut G) -> Result<Self> {
        if n < 2 {
            return Err(Error::Invalid("need at least 2 parties".into()));
        }
        let keys: Vec<R::Elem> = (0..n).map(|_| ring.random_key(rng)).collect();
        let alpha = keys.iter().fold(ring.zero(), |acc, k| ring.add(&acc, k));
        Ok(Self {
            ring,
            n,
            keys,
            alpha,
        })
    }

    /// The ring.
    pub fn ring(&self) -> &R {
        &self.ring
    }

    /// Number of parties.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The MAC key shares.
    pub fn key_shares(&self) -> &[R::Elem] {
        &self.keys
    }

    /// Authenticated additive shares of `x` (share-ring element).
    pub fn share<G: Rng + ?Sized>(&self, x: &R::Elem, rng: &mut G) -> Vec<Share<R::Elem>> {
        let r = &self.ring;
        let mac = r.mul(&self.alpha, x);
        let mut out = Vec::with_capacity(self.n);
        let (mut sv, mut sm) = (r.zero(), r.zero());
        for _ in 1..self.n {
            let v = r.random(rng);
            let m = r.random(rng);
            sv = r.add(&sv, &v);
            sm = r.add(&sm, &m);
            out.push(Share { v, m });
        }
        out.push(Share {
            v: r.sub(x, &sv),
            m: r.sub(&mac, &sm),
        });
        out
    }

    /// Empty material for every party.
    pub fn empty(&self) -> Vec<VecPrep<R>> {
        (0..self.n)
            .map(|i| VecPrep::new(self.ring.clone(), i, self.n, self.keys[i].clone()))
            .collect()
    }

    /// Adds `counts` of fresh material to every party's [`VecPrep`] (from [`Self::empty`]).
    pub fn fill<G: Rng + ?Sized>(&self, preps: &mut [VecPrep<R>], counts: Counts, rng: &mut G) {
        self.fill_triples(preps, counts.triples, rng);
        self.fill_bits(preps, counts.bits, rng);
        self.fill_randoms(preps, counts.randoms, rng);
        for owner in 0..self.n {
            self.fill_masks(preps, owner, counts.masks_per_party, rng);
        }
    }

    /// Adds the material of `order` (every [`Kind`]) to every party's [`VecPrep`].
    ///
    /// ```
    /// use coterie_spdz::{InsecureDealer, Kind, Order, Z2k};
    /// let mut rng = rand::rng();
    /// let dealer = InsecureDealer::insecure_new(Z2k::spdz2k_32(), 3, &mut rng).unwrap();
    /// let mut preps = dealer.empty();
    /// let order = Order::new().with(Kind::InputMasks(2), 4).with(Kind::MatrixTriples(3), 1);
    /// dealer.fill_order(&mut preps, &order, &mut rng).unwrap();
    /// assert_eq!(preps[0].len_of(Kind::InputMasks(2)), 4);
    /// assert_eq!(preps[2].len_of(Kind::MatrixTriples(3)), 1);
    /// ```
    pub fn fill_order<G: Rng + ?Sized>(
        &self,
        preps: &mut [VecPrep<R>],
        order: &crate::producer::Order,
        rng: &mut G,
    ) -> Result<()> {
        order.validate(self.n)?;
        if preps.len() != self.n {
            return Err(Error::Invalid(format!(
                "{} parties' material for a dealer of {}",
                preps.len(),
                self.n
            )));
        }
        for (kind, count) in order.items() {
            match kind {
                Kind::Triples => self.fill_triples(preps, count, rng),
                Kind::Bits => self.fill_bits(preps, count, rng),
                Kind::Randoms => self.fill_randoms(preps, count, rng),
                Kind::InputMasks(owner) => self.fill_masks(preps, owner, count, rng),
                Kind::MatrixTriples(d) => self.fill_matrix_triples(preps, d, count, rng)?,
            }
        }
        Ok(())
    }

    fn fill_triples<G: Rng + ?Sized>(&self, preps: &mut [VecPrep<R>], count: usize, rng: &mut G) {
        let r = &self.ring;
        for _ in 0..count {
            let a = r.random(rng);
            let b = r.random(rng);
            let c = r.mul(&a, &b);
            let (sa, sb, sc) = (
                self.share(&a, rng),
                self.share(&b, rng),
                self.share(&c, rng),
            );
            for (((p, a), b), c) in preps.iter_mut().zip(sa).zip(sb).zip(sc) {
                p.triples.push_back(Triple { a, b, c });
            }
        }
    }

    fn fill_bits<G: Rng + ?Sized>(&self, preps: &mut [VecPrep<R>], count: usize, rng: &mut G) {
        for _ in 0..count {
            let b = self.ring.embed_u64(rng.next_u64() & 1);
            for (p, s) in preps.iter_mut().zip(self.share(&b, rng)) {
                p.bits.push_back(s);
            }
        }
    }

    fn fill_randoms<G: Rng + ?Sized>(&self, preps: &mut [VecPrep<R>], count: usize, rng: &mut G) {
        for _ in 0..count {
            let x = self.ring.random(rng);
            for (p, s) in preps.iter_mut().zip(self.share(&x, rng)) {
                p.randoms.push_back(s);
            }
        }
    }

    fn fill_masks<G: Rng + ?Sized>(
        &self,
        preps: &mut [VecPrep<R>],
        owner: PartyId,
        count: usize,
        rng: &mut G,
    ) {
        for _ in 0..count {
            let x = self.ring.random(rng);
            for (i, (p, s)) in preps.iter_mut().zip(self.share(&x, rng)).enumerate() {
                let value = (i == owner).then(|| x.clone());
                p.masks[owner].push_back(InputMask { share: s, value });
            }
        }
    }

    /// Adds `count` fresh `d×d` matrix triples to every party's [`VecPrep`].
    ///
    /// ```
    /// use coterie_spdz::{InsecureDealer, Preprocessing, Z2k};
    /// let mut rng = rand::rng();
    /// let dealer = InsecureDealer::insecure_new(Z2k::spdz2k_64(), 2, &mut rng).unwrap();
    /// let mut preps = dealer.empty();
    /// dealer.fill_matrix_triples(&mut preps, 2, 3, &mut rng).unwrap();
    /// assert_eq!(preps[1].matrix_triples(2, 3).unwrap().len(), 3);
    /// ```
    pub fn fill_matrix_triples<G: Rng + ?Sized>(
        &self,
        preps: &mut [VecPrep<R>],
        d: usize,
        count: usize,
        rng: &mut G,
    ) -> Result<()> {
        Kind::MatrixTriples(d).validate(self.n)?;
        let r = &self.ring;
        for _ in 0..count {
            let a: Vec<R::Elem> = (0..d * d).map(|_| r.random(rng)).collect();
            let b: Vec<R::Elem> = (0..d * d).map(|_| r.random(rng)).collect();
            let c = mat_mul(r, d, &a, &b);
            let mut per: Vec<MatrixTriple<R::Elem>> = (0..self.n)
                .map(|_| MatrixTriple {
                    d,
                    ..MatrixTriple::default()
                })
                .collect();
            for (m, which) in [(&a, 0), (&b, 1), (&c, 2)] {
                for x in m {
                    for (t, s) in per.iter_mut().zip(self.share(x, rng)) {
                        [&mut t.a, &mut t.b, &mut t.c][which].push(s);
                    }
                }
            }
            for (p, t) in preps.iter_mut().zip(per) {
                p.matrix_triples.entry(d).or_default().push_back(t);
            }
        }
        Ok(())
    }

    /// Convenience: fresh material with `counts` for all parties.
    pub fn deal<G: Rng + ?Sized>(&self, counts: Counts, rng: &mut G) -> Vec<VecPrep<R>> {
        let mut p = self.empty();
        self.fill(&mut p, counts, rng);
        p
    }
}

/// The product of two row-major `d×d` matrices over the share ring.
pub(crate) fn mat_mul<R: Ring>(r: &R, d: usize, a: &[R::Elem], b: &[R::Elem]) -> Vec<R::Elem> {
    let mut c = Vec::with_capacity(d * d);
    for i in 0..d {
        for j in 0..d {
            let mut acc = r.zero();
            for k in 0..d {
                acc = r.add(&acc, &r.mul(&a[i * d + k], &b[k * d + j]));
            }
            c.push(acc);
        }
    }
    c
}

impl<R: Ring> Drop for InsecureDealer<R> {
    fn drop(&mut self) {
        self.alpha.zeroize();
        self.keys.iter_mut().for_each(Zeroize::zeroize);
    }
}

/// Down-cast of a `Z_{2^k}` share to `Z_{2^l}` (`l ≤ k`, same `s`): reduce the value share and
/// the MAC share modulo `2^{l+s}`. Valid because `Σ m_i ≡ α·x (mod 2^{k+s})` implies the same
/// congruence modulo `2^{l+s}`, and `x mod 2^l` is `(x mod 2^k) mod 2^l` (seed 000 §3).
pub fn downcast(from: &Z2k, to: &Z2k, x: &Share<u128>) -> Result<Share<u128>> {
    if to.s() != from.s() || to.k() > from.k() {
        return Err(Error::Invalid(format!(
            "cannot down-cast Z_2^{} (s = {}) to Z_2^{} (s = {})",
            from.k(),
            from.s(),
            to.k(),
            to.s()
        )));
    }
    let bits = to.k() + to.s();
    Ok(Share {
        v: Z2k::low_bits(x.v, bits),
        m: Z2k::low_bits(x.m, bits),
    })
}

/// Preprocessing over `Z_{2^l}` obtained by down-casting material over `Z_{2^k}`.
pub struct DowncastPrep<P> {
    inner: P,
    from: Z2k,
    to: Z2k,
}

impl<P: Preprocessing<Z2k>> DowncastPrep<P> {
    /// Wraps `inner` (over `Z_{2^k}`) as material over `to` (`Z_{2^l}`, `l ≤ k`, same `s`).
    pub fn new(inner: P, to: Z2k) -> Result<Self> {
        let from = *inner.ring();
        downcast(&from, &to, &Share::default())?;
        Ok(Self { inner, from, to })
    }
    fn dc(&self, x: &Share<u128>) -> Share<u128> {
        let bits = self.to.k() + self.to.s();
        let _ = &self.from;
        Share {
            v: Z2k::low_bits(x.v, bits),
            m: Z2k::low_bits(x.m, bits),
        }
    }
}

impl<P: Preprocessing<Z2k>> Preprocessing<Z2k> for DowncastPrep<P> {
    fn ring(&self) -> &Z2k {
        &self.to
    }
    fn party(&self) -> PartyId {
        self.inner.party()
    }
    fn n(&self) -> usize {
        self.inner.n()
    }
    fn mac_key_share(&self) -> u128 {
        // α_i lives in Z_2^s, unchanged by the down-cast.
        self.inner.mac_key_share()
    }
    fn triples(&mut self, count: usize) -> Result<Vec<Triple<u128>>> {
        let t = self.inner.triples(count)?;
        Ok(t.iter()
            .map(|t| Triple {
                a: self.dc(&t.a),
                b: self.dc(&t.b),
                c: self.dc(&t.c),
            })
            .collect())
    }
    fn bits(&mut self, count: usize) -> Result<Vec<Share<u128>>> {
        let b = self.inner.bits(count)?;
        Ok(b.iter().map(|x| self.dc(x)).collect())
    }
    fn randoms(&mut self, count: usize) -> Result<Vec<Share<u128>>> {
        let b = self.inner.randoms(count)?;
        Ok(b.iter().map(|x| self.dc(x)).collect())
    }
    fn input_masks(&mut self, owner: PartyId, count: usize) -> Result<Vec<InputMask<u128>>> {
        let bits = self.to.k() + self.to.s();
        let m = self.inner.input_masks(owner, count)?;
        Ok(m.iter()
            .map(|x| InputMask {
                share: self.dc(&x.share),
                value: x.value.map(|v| Z2k::low_bits(v, bits)),
            })
            .collect())
    }
    fn matrix_triples(&mut self, d: usize, count: usize) -> Result<Vec<MatrixTriple<u128>>> {
        let m = self.inner.matrix_triples(d, count)?;
        Ok(m.iter()
            .map(|t| MatrixTriple {
                d: t.d,
                a: t.a.iter().map(|x| self.dc(x)).collect(),
                b: t.b.iter().map(|x| self.dc(x)).collect(),
                c: t.c.iter().map(|x| self.dc(x)).collect(),
            })
            .collect())
    }
}
