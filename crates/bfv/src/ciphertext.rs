//! Ciphertexts over an ordered key set and the linear operations on them.
//!
//! A [`Ciphertext`] at level `l` is a vector of polynomials `(c_0, c_1, …, c_k)` of
//! `Z_{Q_l}[X]/(X^N+1)` in coefficient form together with the [`KeySet`] it decrypts under:
//!
//! * [`KeySet::Powers`] (one key `s`): `Σ_i c_i·s^i ≈ Δ·m (mod Q_l)`. Fresh ciphertexts have two
//!   parts, an unrelinearized product three (degree `k` in general).
//! * [`KeySet::Parties`] (multi-key, seed 001 §3): an ordered list of user ids `id_1 … id_d`,
//!   `c_0 + Σ_i c_i·s_{id_i} ≈ Δ·m`.
//! * [`KeySet::PartiesTensor`]: the tensor of two multi-key ciphertexts over the same ids,
//!   `(d+1)²` parts against `s̄_i·s̄_j`, `s̄ = (1, s_{id_1}, …)` (input to a multi-key
//!   relinearization).
//!
//! `Δ` is `⌊Q_l/t⌋` for a scalar plaintext modulus and the polynomial
//! `round(−(Q_l/p)·Σ_k b^{M−1−k} X^{kD})` for a cyclotomic one (see [`crate::params`]).
//! Encryption and decryption are in [`crate::encrypt`], products and key switching in
//! [`crate::eval`].

use crate::context::{Level, PlainLevel};
use crate::encoding::{Plaintext, PtData};
use crate::keys::seed_label;
use crate::{Context, Error, Result};
use coterie_math::poly::{Poly, Representation};
use coterie_math::prg::Seed;
use serde::{Deserialize, Serialize};

/// The ordered key set a ciphertext decrypts under (see the [module documentation](self)).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum KeySet {
    /// One key `s`: part `i` pairs with `s^i`.
    Powers,
    /// Multi-key: part 0 pairs with 1, part `i ≥ 1` with the key of user `ids[i − 1]`.
    Parties(Vec<u64>),
    /// The tensor of two multi-key ciphertexts over `ids`: part `i·(d+1) + j` pairs with
    /// `s̄_i·s̄_j`, `s̄ = (1, s_{ids[0]}, …)`.
    PartiesTensor(Vec<u64>),
}

impl KeySet {
    /// Checks that `parts` polynomials fit this key set.
    pub(crate) fn check_parts(&self, parts: usize) -> Result<()> {
        let ok = match self {
            KeySet::Powers => parts >= 2,
            KeySet::Parties(ids) => parts == ids.len() + 1 && !ids.is_empty(),
            KeySet::PartiesTensor(ids) => parts == (ids.len() + 1) * (ids.len() + 1),
        };
        if !ok {
            return Err(Error::Malformed(format!(
                "{parts} ciphertext parts for the key set {self:?}"
            )));
        }
        if let KeySet::Parties(ids) | KeySet::PartiesTensor(ids) = self {
            let mut sorted = ids.clone();
            sorted.sort_unstable();
            sorted.dedup();
            if sorted.len() != ids.len() {
                return Err(Error::Malformed(format!("repeated user id in {ids:?}")));
            }
        }
        Ok(())
    }
}

/// A BFV ciphertext.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ciphertext {
    pub(crate) ctx: Context,
    pub(crate) level: usize,
    pub(crate) parts: Vec<Poly>,
    pub(crate) keys: KeySet,
}

/// A symmetric-key ciphertext whose uniform part `c_1` is replaced by the 32-byte seed it is
/// expanded from (half the size on the wire).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeededCiphertext {
    pub(crate) ctx: Context,
    pub(crate) seed: Seed,
    pub(crate) c0: Poly,
}

impl SeededCiphertext {
    /// Expands the seed into the full ciphertext (top level).
    pub fn expand(&self) -> Result<Ciphertext> {
        let ring = &self.ctx.top().ring;
        let mut c1 = Poly::from_seed(
            ring,
            Representation::Ntt,
            &self.seed,
            &seed_label(b"sym", 0),
        )?;
        c1.to_coeff();
        Ok(Ciphertext {
            ctx: self.ctx.clone(),
            level: self.ctx.max_level(),
            parts: vec![self.c0.clone(), c1],
            keys: KeySet::Powers,
        })
    }

    /// The context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }
}

/// Adds (or subtracts) `Δ·m` to `poly` (coefficient form, level `lv`).
pub(crate) fn add_delta_m(lv: &Level, poly: &mut Poly, pt: &Plaintext, negate: bool) -> Result<()> {
    match (&lv.plain, &pt.data) {
        (PlainLevel::Scalar(sl), PtData::Scalar(coeffs)) => {
            let n = poly.context().degree();
            for (i, m) in lv.ring.moduli().iter().enumerate() {
                let d = sl.delta[i];
                let ds = m.shoup(d);
                let limb = poly.limb_mut(i);
                for (x, &v) in limb.iter_mut().zip(&coeffs[..n]) {
                    // v < t < q: already reduced.
                    let y = m.mul_shoup(v, d, ds);
                    *x = if negate { m.sub(*x, y) } else { m.add(*x, y) };
                }
            }
            Ok(())
        }
        (PlainLevel::Cyclotomic(cl), PtData::Cyclotomic { .. }) => {
            let mut dm = pt.lift_poly(&lv.ring)?;
            dm.to_ntt();
            dm.try_mul_assign(&cl.delta)?;
            dm.to_coeff();
            if negate {
                poly.try_sub_assign(&dm)?;
            } else {
                poly.try_add_assign(&dm)?;
            }
            Ok(())
        }
        _ => Err(Error::Mismatch(
            "plaintext of another kind of plaintext modulus".into(),
        )),
    }
}

/// Adds the small signed polynomial `e` (`|e_i| < min q_j`) to `poly`, branch-free (the values
/// are secret): `x + (e + q)` is below `3q`, brought into `[0, q)` by two conditional subtractions
/// compiled to `min` (no secret-dependent branch or division).
pub(crate) fn add_small(poly: &mut Poly, e: &[i64]) {
    let ctx = poly.context().clone();
    for (i, m) in ctx.moduli().iter().enumerate() {
        let q = m.value();
        for (x, &v) in poly.limb_mut(i).iter_mut().zip(e) {
            let r = *x + (v + q as i64) as u64;
            let r = r.min(r.wrapping_sub(q));
            *x = r.min(r.wrapping_sub(q));
        }
    }
}

impl Ciphertext {
    /// Builds a single-key ciphertext from its parts (at least 2 coefficient-form polynomials of
    /// the ring of `level`, decrypting under `(1, s, s², …)`), e.g. one assembled by a
    /// multi-party protocol.
    pub fn from_parts(ctx: &Context, level: usize, parts: Vec<Poly>) -> Result<Self> {
        Self::from_parts_with_keys(ctx, level, parts, KeySet::Powers)
    }

    /// Builds a ciphertext from its parts under the key set `keys` (see [`KeySet`] for how
    /// many parts each needs).
    ///
    /// ```
    /// use coterie_bfv::{Ciphertext, Context, KeySet, Params};
    /// use coterie_math::poly::{Poly, Representation};
    /// let ctx = Context::new(Params::insecure_toy(256, 256).unwrap()).unwrap();
    /// let ring = ctx.ring(ctx.max_level()).unwrap();
    /// let zero = || Poly::zero(&ring, Representation::Coefficient);
    /// let ct = Ciphertext::from_parts_with_keys(&ctx, ctx.max_level(),
    ///     vec![zero(), zero(), zero()], KeySet::Parties(vec![4, 9])).unwrap();
    /// assert_eq!(ct.key_set(), &KeySet::Parties(vec![4, 9]));
    /// assert!(Ciphertext::from_parts_with_keys(&ctx, ctx.max_level(),
    ///     vec![zero(), zero()], KeySet::Parties(vec![4, 9])).is_err());
    /// ```
    pub fn from_parts_with_keys(
        ctx: &Context,
        level: usize,
        parts: Vec<Poly>,
        keys: KeySet,
    ) -> Result<Self> {
        let ring = ctx.ring(level)?;
        keys.check_parts(parts.len())?;
        for p in &parts {
            if p.context().moduli() != ring.moduli()
                || p.context().degree() != ring.degree()
                || p.representation() != Representation::Coefficient
            {
                return Err(Error::Mismatch(format!(
                    "ciphertext part not a coefficient-form polynomial of level {level}"
                )));
            }
        }
        Ok(Ciphertext {
            ctx: ctx.clone(),
            level,
            parts,
            keys,
        })
    }

    /// The context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The level (number of primes − 1).
    pub fn level(&self) -> usize {
        self.level
    }

    /// Number of polynomials (2 fresh, 3 after an unrelinearized product, …).
    pub fn len(&self) -> usize {
        self.parts.len()
    }

    /// Always false (a ciphertext has at least two parts).
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// The polynomials (coefficient form).
    pub fn parts(&self) -> &[Poly] {
        &self.parts
    }

    /// The key set the parts decrypt under.
    pub fn key_set(&self) -> &KeySet {
        &self.keys
    }

    /// Consumes the ciphertext into its parts and key set.
    pub fn into_parts(self) -> (Vec<Poly>, KeySet) {
        (self.parts, self.keys)
    }

    /// Extends a multi-key ciphertext to the ordered ids `ids` (a superset of its own): the part
    /// of a new id is zero (seed 001 §3.4).
    pub fn extend_to(&self, ids: &[u64]) -> Result<Ciphertext> {
        let own = match &self.keys {
            KeySet::Parties(own) => own,
            k => {
                return Err(Error::Unsupported(format!(
                    "extension of a ciphertext under {k:?}"
                )));
            }
        };
        let keys = KeySet::Parties(ids.to_vec());
        keys.check_parts(ids.len() + 1)?;
        if let Some(missing) = own.iter().find(|id| !ids.contains(id)) {
            return Err(Error::Mismatch(format!(
                "user {missing} of the ciphertext is not in {ids:?}"
            )));
        }
        let ring = self.ctx.ring(self.level)?;
        let mut parts = Vec::with_capacity(ids.len() + 1);
        parts.push(self.parts[0].clone());
        for id in ids {
            parts.push(match own.iter().position(|o| o == id) {
                Some(i) => self.parts[i + 1].clone(),
                None => Poly::zero(&ring, Representation::Coefficient),
            });
        }
        Ok(Ciphertext {
            ctx: self.ctx.clone(),
            level: self.level,
            parts,
            keys,
        })
    }

    pub(crate) fn check(&self, other: &Ciphertext) -> Result<()> {
        self.ctx.check_same(&other.ctx)?;
        if self.level != other.level {
            return Err(Error::Mismatch(format!(
                "ciphertexts at levels {} and {}",
                self.level, other.level
            )));
        }
        Ok(())
    }

    fn zip_parts(&self, other: &Ciphertext, sub: bool) -> Result<Ciphertext> {
        self.check(other)?;
        if self.keys != other.keys {
            return Err(Error::Mismatch(format!(
                "ciphertexts under the key sets {:?} and {:?} (extend them first)",
                self.keys, other.keys
            )));
        }
        let len = self.parts.len().max(other.parts.len());
        let ring = self.ctx.ring(self.level)?;
        let zero = Poly::zero(&ring, Representation::Coefficient);
        let parts = (0..len)
            .map(|k| {
                let mut a = self.parts.get(k).unwrap_or(&zero).clone();
                let b = other.parts.get(k).unwrap_or(&zero);
                if sub {
                    a.try_sub_assign(b)?;
                } else {
                    a.try_add_assign(b)?;
                }
                Ok(a)
            })
            .collect::<Result<_>>()?;
        Ok(Ciphertext {
            ctx: self.ctx.clone(),
            level: self.level,
            parts,
            keys: self.keys.clone(),
        })
    }

    /// Homomorphic addition (same key set; single-key ciphertexts of different degrees are
    /// padded with zero parts).
    ///
    /// ```
    /// use coterie_bfv::{Context, Params, Plaintext, SecretKey};
    /// use coterie_math::prg::Csprng;
    /// let ctx = Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap();
    /// let mut rng = Csprng::new();
    /// let sk = SecretKey::generate(&ctx, &mut rng);
    /// let x = sk.encrypt_symmetric(&Plaintext::encode_coefficients(&ctx, &[5]).unwrap(), &mut rng).unwrap();
    /// let y = sk.encrypt_symmetric(&Plaintext::encode_coefficients(&ctx, &[3]).unwrap(), &mut rng).unwrap();
    /// let dec = |c: &coterie_bfv::Ciphertext| sk.decrypt(c).unwrap().coefficients().unwrap()[0];
    /// assert_eq!(dec(&x.add(&y).unwrap()), 8);
    /// assert_eq!(dec(&x.sub(&y).unwrap()), 2);
    /// assert_eq!(dec(&y.sub(&x).unwrap().neg()), 2);
    /// ```
    pub fn add(&self, other: &Ciphertext) -> Result<Ciphertext> {
        self.zip_parts(other, false)
    }

    /// Homomorphic subtraction.
    pub fn sub(&self, other: &Ciphertext) -> Result<Ciphertext> {
        self.zip_parts(other, true)
    }

    /// Homomorphic negation.
    pub fn neg(&self) -> Ciphertext {
        let mut out = self.clone();
        for p in &mut out.parts {
            p.neg_assign();
        }
        out
    }

    /// Adds a plaintext.
    ///
    /// ```
    /// use coterie_bfv::{Context, Params, Plaintext, SecretKey};
    /// use coterie_math::prg::Csprng;
    /// let ctx = Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap();
    /// let mut rng = Csprng::new();
    /// let sk = SecretKey::generate(&ctx, &mut rng);
    /// let x = sk.encrypt_symmetric(&Plaintext::encode_coefficients(&ctx, &[5]).unwrap(), &mut rng).unwrap();
    /// let p = Plaintext::encode_coefficients(&ctx, &[0, 2]).unwrap();
    /// let c = x.add_plain(&p).unwrap().mul_plain(&p).unwrap().sub_plain(&p).unwrap();
    /// // (5 + 2X)·2X − 2X = 8X + 4X²
    /// assert_eq!(&sk.decrypt(&c).unwrap().coefficients().unwrap()[..3], &[0, 8, 4]);
    /// ```
    pub fn add_plain(&self, pt: &Plaintext) -> Result<Ciphertext> {
        self.ctx.check_same(&pt.ctx)?;
        let lv = self.ctx.level(self.level)?;
        let mut out = self.clone();
        add_delta_m(lv, &mut out.parts[0], pt, false)?;
        Ok(out)
    }

    /// Subtracts a plaintext.
    pub fn sub_plain(&self, pt: &Plaintext) -> Result<Ciphertext> {
        self.ctx.check_same(&pt.ctx)?;
        let lv = self.ctx.level(self.level)?;
        let mut out = self.clone();
        add_delta_m(lv, &mut out.parts[0], pt, true)?;
        Ok(out)
    }

    /// Multiplies by a plaintext (its small lift: the centered lift, `‖·‖_∞ ≤ t/2`, or the
    /// cyclotomic `[μ]_R`).
    pub fn mul_plain(&self, pt: &Plaintext) -> Result<Ciphertext> {
        self.ctx.check_same(&pt.ctx)?;
        let ring = self.ctx.ring(self.level)?;
        let mut p = pt.lift_poly(&ring)?;
        p.to_ntt();
        let mut out = self.clone();
        for c in &mut out.parts {
            c.to_ntt();
            c.try_mul_assign(&p)?;
            c.to_coeff();
        }
        Ok(out)
    }

    /// The product by the monomial `X^k` (`k` mod `2N`; a negacyclic shift of every part): a
    /// ciphertext of `X^k·m` with the noise multiplied by `X^k` (same norm). The challenges of
    /// seed 002's proof of plaintext knowledge are such monomials.
    pub fn mul_monomial(&self, k: usize) -> Result<Ciphertext> {
        let parts = self
            .parts
            .iter()
            .map(|p| p.mul_monomial(k))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Ok(Ciphertext {
            ctx: self.ctx.clone(),
            level: self.level,
            parts,
            keys: self.keys.clone(),
        })
    }

    /// Modulus switching to the next level: `c → ⌊c/q_l⌉`, which scales the noise down by `q_l`.
    pub fn mod_switch_to_next(&self) -> Result<Ciphertext> {
        if self.level == 0 {
            return Err(Error::Unsupported(
                "modulus switch below the last prime".into(),
            ));
        }
        self.mod_switch_to(self.level - 1)
    }

    /// Modulus switching down to `level` in one step: with `D = Q_l/Q_k` the product of the
    /// dropped primes, `c → (c − e)/D` where `e = [c]_D` centered (coterie-math's exact centered
    /// base conversion from `D` to `Q_k`), which is `⌊c/D⌉` exactly (rounding error ≤ 1/2 per
    /// coefficient, the same bound as one `drop_last_rounded` step of coterie-math; switching
    /// prime by prime would add up the errors). For a cyclotomic plaintext modulus the switch
    /// scales `Δ` to level `k`'s up to the same rounding.
    ///
    /// ```
    /// use coterie_bfv::{Context, Params, Plaintext, SecretKey};
    /// use coterie_math::prg::Csprng;
    /// let ctx = Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap();
    /// let mut rng = Csprng::new();
    /// let sk = SecretKey::generate(&ctx, &mut rng);
    /// let pt = Plaintext::encode_coefficients(&ctx, &[9, 8]).unwrap();
    /// let x = sk.encrypt_symmetric(&pt, &mut rng).unwrap();
    /// let low = x.mod_switch_to(0).unwrap();
    /// assert_eq!(low.level(), 0);
    /// assert_eq!(sk.decrypt(&low).unwrap(), pt);
    /// assert!(low.mod_switch_to_next().is_err());
    /// ```
    pub fn mod_switch_to(&self, level: usize) -> Result<Ciphertext> {
        if level > self.level {
            return Err(Error::Mismatch(format!(
                "cannot switch from level {} up to {level}",
                self.level
            )));
        }
        if level == self.level {
            return Ok(self.clone());
        }
        let sw = self.ctx.switch(self.level, level)?;
        let next = self.ctx.ring(level)?;
        let n = self.ctx.degree();
        let kept = (level + 1) * n;
        let mut e = vec![0u64; kept];
        let parts = self
            .parts
            .iter()
            .map(|p| {
                sw.conv.convert_exact(&p.data()[kept..], &mut e, n, true)?;
                let mut out = Poly::zero(&next, Representation::Coefficient);
                for (i, m) in next.moduli().iter().enumerate() {
                    let (inv, inv_s) = sw.d_inv[i];
                    let src = &p.data()[i * n..(i + 1) * n];
                    let ei = &e[i * n..(i + 1) * n];
                    for ((o, &x), &y) in out.limb_mut(i).iter_mut().zip(src).zip(ei) {
                        *o = m.mul_shoup(m.sub(x, y), inv, inv_s);
                    }
                }
                Ok(out)
            })
            .collect::<Result<_>>()?;
        Ok(Ciphertext {
            ctx: self.ctx.clone(),
            level,
            parts,
            keys: self.keys.clone(),
        })
    }
}
