//! Checks of preprocessing material with everything opened, for tests of producers (here and
//! in the crates of HE- and HSS-based producers): given every party's shares and the MAC key
//! `α = Σ α_i`, does every item carry a valid MAC (`Σ m_i = α·Σ v_i` in the share ring) and
//! satisfy its relation (a triple `c = a·b`, a matrix triple `C = A·B`, a bit in `{0, 1}`, an
//! input mask whose owner knows its value)?
//!
//! These functions see every secret; they are for tests only.

use crate::kind::Kind;
use crate::prep::{InputMask, MatrixTriple, Preprocessing, Share, Triple, VecPrep, mat_mul};
use crate::ring::Ring;
use crate::{Error, Result};

fn fail(kind: impl ToString, item: usize, what: &'static str) -> Error {
    Error::MaterialCheck {
        kind: kind.to_string(),
        item,
        what,
    }
}

/// The opened value and MAC of one shared element: `(Σ v_i, Σ m_i)` in the share ring.
pub fn open_share<R: Ring>(ring: &R, shares: &[&Share<R::Elem>]) -> (R::Elem, R::Elem) {
    shares.iter().fold((ring.zero(), ring.zero()), |(v, m), s| {
        (ring.add(&v, &s.v), ring.add(&m, &s.m))
    })
}

/// Whether `(Σ v_i, Σ m_i)` satisfies the MAC relation `Σ m_i = α·Σ v_i` under `alpha`.
pub fn mac_holds<R: Ring>(ring: &R, alpha: &R::Elem, shares: &[&Share<R::Elem>]) -> bool {
    let (v, m) = open_share(ring, shares);
    ring.mul(alpha, &v) == m
}

/// Checks the MAC relation of every value shared in `per_party` (`per_party[i][j]` is party
/// `i`'s share of value `j`) under the opened key `alpha`; returns the opened values (in the
/// value ring: `mod 2^k` over `Z_{2^k}`). A wrong MAC is [`Error::MaterialCheck`] naming the
/// first bad value.
///
/// ```
/// use coterie_spdz::{InsecureDealer, Ring, Z2k};
/// use coterie_spdz::verify::verify_shares;
/// let ring = Z2k::spdz2k_32();
/// let mut rng = rand::rng();
/// let dealer = InsecureDealer::insecure_new(ring, 3, &mut rng).unwrap();
/// let alpha = dealer.key_shares().iter().fold(0u128, |a, k| ring.add(&a, k));
/// let shares = dealer.share(&9, &mut rng);
/// let per_party: Vec<_> = shares.into_iter().map(|s| vec![s]).collect();
/// assert_eq!(verify_shares(&ring, &alpha, &per_party).unwrap(), [9]);
/// ```
pub fn verify_shares<R: Ring>(
    ring: &R,
    alpha: &R::Elem,
    per_party: &[Vec<Share<R::Elem>>],
) -> Result<Vec<R::Elem>> {
    let count = per_party.first().map_or(0, Vec::len);
    if per_party.iter().any(|p| p.len() != count) {
        return Err(Error::Invalid(
            "parties hold different numbers of shares".into(),
        ));
    }
    (0..count)
        .map(|j| {
            let s: Vec<&Share<R::Elem>> = per_party.iter().map(|p| &p[j]).collect();
            if !mac_holds(ring, alpha, &s) {
                return Err(fail("shares", j, "MAC relation"));
            }
            Ok(ring.to_value(&open_share(ring, &s).0))
        })
        .collect()
}

/// Checks all material of all parties (`preps[i]` is party `i`'s, every party's material of
/// the same lengths) under the MAC key `Σ_i α_i` of their key shares: MACs of every shared
/// element, `c = a·b` of triples, `C = A·B` of matrix triples (in the value ring), bits in
/// `{0, 1}`, and input masks whose owner (and only the owner) holds the opened value.
///
/// ```
/// use coterie_spdz::{Counts, InsecureDealer, Z2k};
/// let mut rng = rand::rng();
/// let dealer = InsecureDealer::insecure_new(Z2k::spdz2k_64(), 2, &mut rng).unwrap();
/// let counts = Counts { triples: 3, bits: 2, randoms: 1, masks_per_party: 1 };
/// let mut preps = dealer.deal(counts, &mut rng);
/// coterie_spdz::verify::verify_material(&preps).unwrap();
/// preps[0].triples[1].c.v += 1;
/// assert!(coterie_spdz::verify::verify_material(&preps).is_err());
/// ```
pub fn verify_material<R: Ring>(preps: &[VecPrep<R>]) -> Result<()> {
    let Some(first) = preps.first() else {
        return Ok(());
    };
    let ring = first.ring().clone();
    let r = &ring;
    let n = preps.len();
    if preps
        .iter()
        .enumerate()
        .any(|(i, p)| p.party() != i || p.n() != n)
    {
        return Err(Error::Invalid(
            "material not of parties 0..n in order".into(),
        ));
    }
    let alpha = preps
        .iter()
        .fold(r.zero(), |a, p| r.add(&a, &p.mac_key_share()));
    let same_len = |kind: Kind| preps.iter().all(|p| p.len_of(kind) == first.len_of(kind));
    let check = |kind: Kind, item: usize, shares: &[&Share<R::Elem>]| -> Result<R::Elem> {
        if !mac_holds(r, &alpha, shares) {
            return Err(fail(kind, item, "MAC relation"));
        }
        Ok(open_share(r, shares).0)
    };
    let mut kinds = vec![Kind::Triples, Kind::Bits, Kind::Randoms];
    kinds.extend((0..n).map(Kind::InputMasks));
    for p in preps {
        kinds.extend(p.matrix_triples.keys().map(|d| Kind::MatrixTriples(*d)));
    }
    kinds.sort();
    kinds.dedup();
    for kind in kinds {
        if !same_len(kind) {
            return Err(fail(kind, 0, "parties hold different numbers of items"));
        }
        for j in 0..first.len_of(kind) {
            match kind {
                Kind::Triples => {
                    let t: Vec<&Triple<R::Elem>> = preps.iter().map(|p| &p.triples[j]).collect();
                    let a = check(kind, j, &t.iter().map(|t| &t.a).collect::<Vec<_>>())?;
                    let b = check(kind, j, &t.iter().map(|t| &t.b).collect::<Vec<_>>())?;
                    let c = check(kind, j, &t.iter().map(|t| &t.c).collect::<Vec<_>>())?;
                    if r.to_value(&c) != r.to_value(&r.mul(&a, &b)) {
                        return Err(fail(kind, j, "c = a·b"));
                    }
                }
                Kind::Bits | Kind::Randoms => {
                    let s: Vec<&Share<R::Elem>> = preps
                        .iter()
                        .map(|p| {
                            if kind == Kind::Bits {
                                &p.bits[j]
                            } else {
                                &p.randoms[j]
                            }
                        })
                        .collect();
                    let v = r.to_value(&check(kind, j, &s)?);
                    if kind == Kind::Bits && v != r.zero() && v != r.embed_u64(1) {
                        return Err(fail(kind, j, "a bit in {0, 1}"));
                    }
                }
                Kind::InputMasks(owner) => {
                    let m: Vec<&InputMask<R::Elem>> =
                        preps.iter().map(|p| &p.masks[owner][j]).collect();
                    let v = check(kind, j, &m.iter().map(|m| &m.share).collect::<Vec<_>>())?;
                    for (i, mi) in m.iter().enumerate() {
                        let ok = match (&mi.value, i == owner) {
                            (Some(x), true) => *x == v,
                            (None, false) => true,
                            _ => false,
                        };
                        if !ok {
                            return Err(fail(kind, j, "the owner alone knows the mask"));
                        }
                    }
                }
                Kind::MatrixTriples(d) => {
                    let t: Vec<&MatrixTriple<R::Elem>> =
                        preps.iter().map(|p| &p.matrix_triples[&d][j]).collect();
                    if t.iter().any(|t| {
                        t.d != d || t.a.len() != d * d || t.b.len() != d * d || t.c.len() != d * d
                    }) {
                        return Err(fail(kind, j, "d×d shape"));
                    }
                    let open = |which: usize| -> Result<Vec<R::Elem>> {
                        (0..d * d)
                            .map(|e| {
                                let s: Vec<&Share<R::Elem>> = t
                                    .iter()
                                    .map(|t| [&t.a, &t.b, &t.c][which].get(e))
                                    .collect::<Option<Vec<_>>>()
                                    .ok_or_else(|| fail(kind, j, "d×d shape"))?;
                                check(kind, j, &s)
                            })
                            .collect()
                    };
                    let (a, b, c) = (open(0)?, open(1)?, open(2)?);
                    let ab = mat_mul(r, d, &a, &b);
                    if ab
                        .iter()
                        .zip(&c)
                        .any(|(x, y)| r.to_value(x) != r.to_value(y))
                    {
                        return Err(fail(kind, j, "C = A·B"));
                    }
                }
            }
        }
    }
    Ok(())
}
