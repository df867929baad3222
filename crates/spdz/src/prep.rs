//! Preprocessing: the material the online phase consumes, behind one trait ([`Preprocessing`]),
//! so the engine does not know where triples come from.
//!
//! * [`Share`], [`Triple`], [`InputMask`]: one party's authenticated shares.
//! * [`VecPrep`]: a party's material held in memory (what every producer can output).
//! * [`InsecureDealer`]: one process makes every party's material. **Insecure** (the dealer knows
//!   every secret): for tests and for benchmarking the online phase only; never a default.
//! * [`DowncastPrep`]: turns `Z_{2^k}` material into `Z_{2^l}` material (`l < k`) by the ring
//!   homomorphism, for an engine over the down-cast ring.
//! * The on-disk store ([`crate::store::PrepStore`]) also implements [`Preprocessing`].

use std::collections::VecDeque;

use coterie_net::PartyId;
use rand::Rng;
use serde::{Deserialize, Serialize};
use zeroize::Zeroize;

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

/// The kinds of preprocessing material.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Kind {
    /// Beaver triples.
    Triples,
    /// Random bits.
    Bits,
    /// Uniformly random authenticated values (masks for openings).
    Randoms,
    /// Input masks for inputs of the given owner.
    InputMasks(PartyId),
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Kind::Triples => f.write_str("triples"),
            Kind::Bits => f.write_str("bits"),
            Kind::Randoms => f.write_str("randoms"),
            Kind::InputMasks(o) => write!(f, "input-masks-{o}"),
        }
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
        }
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
    /// A dealer for `n ≥ 2` parties with a fresh MAC key from `rng`.
    pub fn new_insecure<G: Rng + ?Sized>(ring: R, n: usize, rng: &mut G) -> Result<Self> {
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
        let r = &self.ring;
        for _ in 0..counts.triples {
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
        for _ in 0..counts.bits {
            let b = r.embed_u64(rng.next_u64() & 1);
            for (p, s) in preps.iter_mut().zip(self.share(&b, rng)) {
                p.bits.push_back(s);
            }
        }
        for _ in 0..counts.randoms {
            let x = r.random(rng);
            for (p, s) in preps.iter_mut().zip(self.share(&x, rng)) {
                p.randoms.push_back(s);
            }
        }
        for owner in 0..self.n {
            for _ in 0..counts.masks_per_party {
                let x = r.random(rng);
                for (i, (p, s)) in preps.iter_mut().zip(self.share(&x, rng)).enumerate() {
                    let value = (i == owner).then(|| x.clone());
                    p.masks[owner].push_back(InputMask { share: s, value });
                }
            }
        }
    }

    /// Convenience: fresh material with `counts` for all parties.
    pub fn deal<G: Rng + ?Sized>(&self, counts: Counts, rng: &mut G) -> Vec<VecPrep<R>> {
        let mut p = self.empty();
        self.fill(&mut p, counts, rng);
        p
    }
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
}
