//! Ciphertexts and the homomorphic operations on them.
//!
//! A [`Ciphertext`] at level `l` is a tuple `(c_0, c_1[, c_2])` of polynomials of
//! `Z_{Q_l}[X]/(X^N+1)` in coefficient form with `c_0 + c_1·s (+ c_2·s²) ≈ Δ·m (mod Q_l)`,
//! `Δ = ⌊Q_l/t⌋`.
//!
//! Multiplication is the full-RNS BFV product with *exact* arithmetic throughout: each operand is
//! lifted from `Q` to an auxiliary basis `P > 2·t·N·Q` by coterie-math's exact base extension
//! (centered), the tensor product is taken in `Q ∪ P` by NTT, and `round(t·x/Q)` is coterie-math's
//! exact scale-and-round ([`coterie_math::rns::ScaleRounder`]) — the textbook BFV product with no
//! approximation error (unlike the floating-point HPS or the Montgomery-reduction BEHZ variants).
//! Relinearization and rotations use the RNS-gadget key switching of [`crate::keys`].

use crate::context::{Context, Level};
use crate::encoding::Plaintext;
use crate::keys::{
    GaloisKey, GaloisKeys, KeySwitchKey, PublicKey, RelinKey, SecretKey,
    galois_element_for_rotation, sample_error, sample_secret, seed_from, seed_label,
};
use crate::{Error, Result};
use coterie_math::poly::{Poly, Representation};
use coterie_math::prg::Seed;
use zeroize::Zeroize;

/// A BFV ciphertext.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ciphertext {
    pub(crate) ctx: Context,
    pub(crate) level: usize,
    pub(crate) parts: Vec<Poly>,
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
        })
    }

    /// The context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }
}

/// Adds `Δ·m` to `poly` (coefficient form, level `lv`).
fn add_delta_m(lv: &Level, poly: &mut Poly, pt: &Plaintext, negate: bool) {
    let n = poly.context().degree();
    for (i, m) in lv.ring.moduli().iter().enumerate() {
        let d = lv.delta[i];
        let ds = m.shoup(d);
        let limb = poly.limb_mut(i);
        for (x, &v) in limb.iter_mut().zip(&pt.coeffs[..n]) {
            // v < t < q: already reduced.
            let y = m.mul_shoup(v, d, ds);
            *x = if negate { m.sub(*x, y) } else { m.add(*x, y) };
        }
    }
}

/// Adds the small signed polynomial `e` (`|e_i| < min q_j`) to `poly`, branch-free (the values
/// are secret): `x + (e + q)` is below `3q`, brought into `[0, q)` by two conditional subtractions
/// compiled to `min` (no secret-dependent branch or division).
fn add_small(poly: &mut Poly, e: &[i64]) {
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

impl PublicKey {
    /// Public-key encryption: `(Δ·m + u·p0 + e0, u·p1 + e1)` at the top level, `u` from the secret
    /// distribution, `e0, e1` Gaussian.
    ///
    /// ```
    /// use coterie_bfv::{Context, Params, Plaintext, SecretKey};
    /// use coterie_math::prg::Csprng;
    /// let ctx = Context::new(Params::toy_insecure(256, 256).unwrap()).unwrap();
    /// let mut rng = Csprng::new();
    /// let sk = SecretKey::generate(&ctx, &mut rng);
    /// let pk = sk.public_key(&mut rng);
    /// let pt = Plaintext::encode_coefficients(&ctx, &[7, 8, 9]).unwrap();
    /// let ct = pk.encrypt(&pt, &mut rng).unwrap();
    /// assert_eq!(sk.decrypt(&ct).unwrap(), pt);
    /// ```
    pub fn encrypt<R: rand::CryptoRng + ?Sized>(
        &self,
        pt: &Plaintext,
        rng: &mut R,
    ) -> Result<Ciphertext> {
        self.ctx.check_same(&pt.ctx)?;
        let lv = self.ctx.top();
        let n = self.ctx.degree();
        let mut small = vec![0i64; n];
        sample_secret(&self.ctx, rng, &mut small);
        let mut u = Poly::from_signed(&lv.ring, &small)?;
        u.to_ntt();
        let mut c0 = Poly::zero(&lv.ring, Representation::Ntt);
        let mut c1 = Poly::zero(&lv.ring, Representation::Ntt);
        Poly::mul_into(&mut c0, &u, &self.p0)?;
        Poly::mul_into(&mut c1, &u, &self.p1)?;
        u.data_mut().zeroize();
        c0.to_coeff();
        c1.to_coeff();
        sample_error(&self.ctx, rng, &mut small);
        add_small(&mut c0, &small);
        sample_error(&self.ctx, rng, &mut small);
        add_small(&mut c1, &small);
        small.zeroize();
        add_delta_m(lv, &mut c0, pt, false);
        Ok(Ciphertext {
            ctx: self.ctx.clone(),
            level: self.ctx.max_level(),
            parts: vec![c0, c1],
        })
    }
}

impl SecretKey {
    /// Symmetric encryption with the uniform part compressed to a seed: `c_1 = a` expanded from a
    /// fresh seed, `c_0 = −a·s + e + Δ·m`.
    pub fn encrypt_symmetric_seeded<R: rand::CryptoRng + ?Sized>(
        &self,
        pt: &Plaintext,
        rng: &mut R,
    ) -> Result<SeededCiphertext> {
        self.ctx.check_same(&pt.ctx)?;
        let lv = self.ctx.top();
        let seed = seed_from(rng);
        let a = Poly::from_seed(&lv.ring, Representation::Ntt, &seed, &seed_label(b"sym", 0))?;
        let mut c0 = &a * &self.ntt;
        c0.neg_assign();
        c0.to_coeff();
        let mut e = vec![0i64; self.ctx.degree()];
        sample_error(&self.ctx, rng, &mut e);
        add_small(&mut c0, &e);
        e.zeroize();
        add_delta_m(lv, &mut c0, pt, false);
        Ok(SeededCiphertext {
            ctx: self.ctx.clone(),
            seed,
            c0,
        })
    }

    /// Symmetric encryption (expanded form).
    pub fn encrypt_symmetric<R: rand::CryptoRng + ?Sized>(
        &self,
        pt: &Plaintext,
        rng: &mut R,
    ) -> Result<Ciphertext> {
        self.encrypt_symmetric_seeded(pt, rng)?.expand()
    }

    /// The phase `c_0 + c_1·s (+ c_2·s²) mod Q_l` in coefficient form.
    pub fn phase(&self, ct: &Ciphertext) -> Result<Poly> {
        self.ctx.check_same(&ct.ctx)?;
        let ring = self.ctx.ring(ct.level)?;
        let n = self.ctx.degree();
        let mut out = ct.parts[0].clone();
        let mut acc = vec![0u64; n];
        let mut tmp = vec![0u64; n];
        let mut s2 = vec![0u64; n];
        for j in 0..=ct.level {
            let plan = ring.plan(j);
            let m = &ring.moduli()[j];
            let s = &self.ntt.data()[j * n..(j + 1) * n];
            acc.fill(0);
            tmp.copy_from_slice(ct.parts[1].limb(j));
            plan.forward(&mut tmp);
            plan.mul_acc(&mut acc, &tmp, s);
            if ct.parts.len() == 3 {
                s2.fill(0);
                plan.mul_acc(&mut s2, s, s);
                tmp.copy_from_slice(ct.parts[2].limb(j));
                plan.forward(&mut tmp);
                plan.mul_acc(&mut acc, &tmp, &s2);
            }
            plan.inverse(&mut acc);
            for (o, &a) in out.limb_mut(j).iter_mut().zip(&acc) {
                *o = m.add(*o, a);
            }
        }
        acc.zeroize();
        tmp.zeroize();
        s2.zeroize();
        Ok(out)
    }

    /// Decryption: `m = ⌊t·[c_0 + c_1·s]_Q / Q⌉ mod t`, computed exactly in RNS with one exact
    /// base conversion to `{t}`: with `y = [t·x + ⌊Q/2⌋]_Q`, `t·x + ⌊Q/2⌋ − y = Q·⌊t·x/Q⌉`, so
    /// modulo `t` (where `t·x ≡ 0`) `m = (⌊Q/2⌋ − y)·Q^{-1} mod t` (`gcd(Q, t) = 1`).
    ///
    /// For speed the ciphertext is first modulus-switched down to the lowest level `l` with
    /// `Q_l ≥ 2^41·t·(1 + N‖s‖ + N²‖s‖²)`: by the modulus-switching bound of [`crate::noise`] this
    /// adds at most `2^-42` to the invariant noise (so decryption is exact whenever the noise
    /// budget is above `2^-40`, i.e. whenever [`crate::noise::noise_budget`] is positive by any
    /// measurable margin). [`SecretKey::decrypt_exact_at_level`] skips this step.
    pub fn decrypt(&self, ct: &Ciphertext) -> Result<Plaintext> {
        let target = self.fast_decryption_level(ct.len())?;
        if target < ct.level {
            return self.decrypt_exact_at_level(&ct.mod_switch_to(target)?);
        }
        self.decrypt_exact_at_level(ct)
    }

    /// The lowest level at which [`SecretKey::decrypt`] decrypts a ciphertext of `parts` parts.
    pub fn fast_decryption_level(&self, parts: usize) -> Result<usize> {
        let n = self.ctx.degree() as f64;
        let bs = self.norm_inf().max(1) as f64;
        let mut err = 1.0 + n * bs;
        if parts > 2 {
            err += n * n * bs * bs;
        }
        let need = 41.0 + (self.ctx.plaintext_modulus() as f64).log2() + err.log2();
        let mut bits = 0.0;
        for (l, &q) in self.ctx.params().moduli().iter().enumerate() {
            bits += (q as f64).log2();
            if bits >= need {
                return Ok(l);
            }
        }
        Ok(self.ctx.max_level())
    }

    /// Decryption at the ciphertext's own level (no modulus switch; see [`SecretKey::decrypt`]).
    pub fn decrypt_exact_at_level(&self, ct: &Ciphertext) -> Result<Plaintext> {
        let mut x = self.phase(ct)?;
        let lv = self.ctx.level(ct.level)?;
        let n = self.ctx.degree();
        for (i, m) in lv.ring.moduli().iter().enumerate() {
            let (tq, h) = (lv.t_mod_q[i], lv.half_q_mod_q[i]);
            let ts = m.shoup(tq);
            for v in x.limb_mut(i) {
                *v = m.add(m.mul_shoup(*v, tq, ts), h);
            }
        }
        let mut y = vec![0u64; n];
        lv.dec_conv.convert_exact(x.data(), &mut y, n, false)?;
        x.data_mut().zeroize();
        let tm = coterie_math::modulus::Modulus::new(self.ctx.plaintext_modulus())?;
        let (h, qi) = (lv.half_q_mod_t, lv.q_inv_mod_t);
        for c in y.iter_mut() {
            *c = tm.mul_any(tm.sub(h, *c), qi);
        }
        Ok(Plaintext {
            ctx: self.ctx.clone(),
            coeffs: y,
        })
    }
}

/// RNS-gadget key switching of `c` (coefficient form, level `level`): returns `(k_0, k_1)` in
/// coefficient form with `k_0 + k_1·s ≈ c·s'` where the key switches `s'` to `s`.
pub(crate) fn key_switch(
    ctx: &Context,
    level: usize,
    c: &Poly,
    ksk: &KeySwitchKey,
) -> Result<(Poly, Poly)> {
    ctx.check_same(&ksk.ctx)?;
    let lv = ctx.level(level)?;
    let ring = &lv.ring;
    let n = ctx.degree();
    let l = level + 1;
    let mut acc0 = Poly::zero(ring, Representation::Ntt);
    let mut acc1 = Poly::zero(ring, Representation::Ntt);
    let mut digit = vec![0u64; n];
    for i in 0..l {
        let qi = ring.moduli()[i];
        let src = c.limb(i);
        let (b, a) = (&ksk.b[i], &ksk.a[i]);
        for j in 0..l {
            let qj = &ring.moduli()[j];
            if j == i {
                digit.copy_from_slice(src);
            } else {
                for (d, &x) in digit.iter_mut().zip(src) {
                    *d = qj.reduce_i64(qi.center(x));
                }
            }
            let plan = ring.plan(j);
            plan.forward(&mut digit);
            plan.mul_acc(acc0.limb_mut(j), &digit, b.limb(j));
            plan.mul_acc(acc1.limb_mut(j), &digit, a.limb(j));
        }
    }
    acc0.to_coeff();
    acc1.to_coeff();
    Ok((acc0, acc1))
}

impl Ciphertext {
    /// Builds a ciphertext from its parts (2 or 3 coefficient-form polynomials of the ring of
    /// `level`), e.g. one assembled by a multi-party protocol.
    pub fn from_parts(ctx: &Context, level: usize, parts: Vec<Poly>) -> Result<Self> {
        let ring = ctx.ring(level)?;
        if !(2..=3).contains(&parts.len()) {
            return Err(Error::Malformed(format!(
                "{} ciphertext parts",
                parts.len()
            )));
        }
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

    /// Number of polynomials (2, or 3 after an unrelinearized product).
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

    fn check(&self, other: &Ciphertext) -> Result<()> {
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
        })
    }

    /// Homomorphic addition.
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
    pub fn add_plain(&self, pt: &Plaintext) -> Result<Ciphertext> {
        self.ctx.check_same(&pt.ctx)?;
        let lv = self.ctx.level(self.level)?;
        let mut out = self.clone();
        add_delta_m(lv, &mut out.parts[0], pt, false);
        Ok(out)
    }

    /// Subtracts a plaintext.
    pub fn sub_plain(&self, pt: &Plaintext) -> Result<Ciphertext> {
        self.ctx.check_same(&pt.ctx)?;
        let lv = self.ctx.level(self.level)?;
        let mut out = self.clone();
        add_delta_m(lv, &mut out.parts[0], pt, true);
        Ok(out)
    }

    /// Multiplies by a plaintext (its centered lift, `‖·‖_∞ ≤ t/2`).
    pub fn mul_plain(&self, pt: &Plaintext) -> Result<Ciphertext> {
        self.ctx.check_same(&pt.ctx)?;
        let ring = self.ctx.ring(self.level)?;
        let mut p = Poly::from_signed(&ring, &pt.centered())?;
        p.to_ntt();
        let mut out = self.clone();
        for c in &mut out.parts {
            c.to_ntt();
            c.try_mul_assign(&p)?;
            c.to_coeff();
        }
        Ok(out)
    }

    /// The tensor product `(d_0, d_1, d_2) = ⌊t/Q·(c ⊗ c')⌉` of two 2-part ciphertexts (3 parts,
    /// decrypting under `(1, s, s²)`), computed exactly (see the [module documentation](self)).
    pub fn mul_no_relin(&self, other: &Ciphertext) -> Result<Ciphertext> {
        self.check(other)?;
        if self.parts.len() != 2 || other.parts.len() != 2 {
            return Err(Error::Unsupported(
                "multiplication of ciphertexts with more than two parts".into(),
            ));
        }
        let lv = self.ctx.level(self.level)?;
        let n = self.ctx.degree();
        let extend = |p: &Poly| -> Result<(Poly, Poly)> {
            let mut xp = Poly::zero(&lv.aux, Representation::Coefficient);
            lv.q_to_aux
                .convert_exact(p.data(), xp.data_mut(), n, true)?;
            let mut xq = p.clone();
            xq.to_ntt();
            xp.to_ntt();
            Ok((xq, xp))
        };
        let (a0q, a0p) = extend(&self.parts[0])?;
        let (a1q, a1p) = extend(&self.parts[1])?;
        let same = std::ptr::eq(self, other);
        let (b0q, b0p, b1q, b1p) = if same {
            (a0q.clone(), a0p.clone(), a1q.clone(), a1p.clone())
        } else {
            let (b0q, b0p) = extend(&other.parts[0])?;
            let (b1q, b1p) = extend(&other.parts[1])?;
            (b0q, b0p, b1q, b1p)
        };
        // (d0, d1, d2) = (x0·y0, x0·y1 + x1·y0, x1·y1), reusing the operands' buffers for d1, d2.
        let tensor = |mut x0: Poly, mut x1: Poly, y0: &Poly, y1: &Poly| -> Result<[Poly; 3]> {
            let mut d0 = Poly::zero(x0.context(), Representation::Ntt);
            Poly::mul_into(&mut d0, &x0, y0)?;
            x0.try_mul_assign(y1)?;
            x0.try_mul_acc(&x1, y0)?;
            x1.try_mul_assign(y1)?;
            let (mut d1, mut d2) = (x0, x1);
            for d in [&mut d0, &mut d1, &mut d2] {
                d.to_coeff();
            }
            Ok([d0, d1, d2])
        };
        let dq = tensor(a0q, a1q, &b0q, &b1q)?;
        let dp = tensor(a0p, a1p, &b0p, &b1p)?;
        let mut parts = Vec::with_capacity(3);
        for (xq, xp) in dq.iter().zip(&dp) {
            let mut out = Poly::zero(&lv.ring, Representation::Coefficient);
            lv.rounder
                .scale_round(xq.data(), xp.data(), out.data_mut(), n)?;
            parts.push(out);
        }
        Ok(Ciphertext {
            ctx: self.ctx.clone(),
            level: self.level,
            parts,
        })
    }

    /// Relinearizes a 3-part ciphertext to 2 parts (a 2-part one is returned unchanged).
    pub fn relinearize(&self, rlk: &RelinKey) -> Result<Ciphertext> {
        match self.parts.len() {
            2 => Ok(self.clone()),
            3 => {
                let (k0, k1) = key_switch(&self.ctx, self.level, &self.parts[2], &rlk.ksk)?;
                let mut c0 = self.parts[0].clone();
                let mut c1 = self.parts[1].clone();
                c0.try_add_assign(&k0)?;
                c1.try_add_assign(&k1)?;
                Ok(Ciphertext {
                    ctx: self.ctx.clone(),
                    level: self.level,
                    parts: vec![c0, c1],
                })
            }
            k => Err(Error::Unsupported(format!("relinearization of {k} parts"))),
        }
    }

    /// Multiplication followed by relinearization.
    pub fn mul(&self, other: &Ciphertext, rlk: &RelinKey) -> Result<Ciphertext> {
        self.mul_no_relin(other)?.relinearize(rlk)
    }

    /// Applies `X → X^g` with its Galois key: `(σ(c_0), 0) + KeySwitch(σ(c_1))`.
    pub fn apply_galois(&self, key: &GaloisKey) -> Result<Ciphertext> {
        if self.parts.len() != 2 {
            return Err(Error::Unsupported(
                "Galois automorphism of an unrelinearized ciphertext".into(),
            ));
        }
        let mut c0 = self.parts[0].automorphism(key.g)?;
        let c1 = self.parts[1].automorphism(key.g)?;
        let (k0, k1) = key_switch(&self.ctx, self.level, &c1, &key.ksk)?;
        c0.try_add_assign(&k0)?;
        Ok(Ciphertext {
            ctx: self.ctx.clone(),
            level: self.level,
            parts: vec![c0, k1],
        })
    }

    /// Rotates both batching rows left by `k` (right for `k < 0`).
    pub fn rotate_rows(&self, k: i64, keys: &GaloisKeys) -> Result<Ciphertext> {
        let g = galois_element_for_rotation(self.ctx.degree(), k);
        if g == 1 {
            return Ok(self.clone());
        }
        let key = keys.get(g).ok_or_else(|| {
            Error::MissingKey(format!("Galois key for rotation by {k} (g = {g})"))
        })?;
        self.apply_galois(key)
    }

    /// Swaps the two batching rows (Galois element `2N − 1`).
    pub fn swap_rows(&self, keys: &GaloisKeys) -> Result<Ciphertext> {
        let g = 2 * self.ctx.degree() - 1;
        let key = keys
            .get(g)
            .ok_or_else(|| Error::MissingKey(format!("Galois key for the row swap (g = {g})")))?;
        self.apply_galois(key)
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
    /// coefficient, the same bound as one `drop_last_rounded` step of coterie-math; switching prime by prime
    /// would add up the errors).
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
        })
    }
}
