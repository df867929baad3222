//! Encryption (public key, with caller-supplied randomness, symmetric) and decryption.

use crate::ciphertext::{Ciphertext, KeySet, SeededCiphertext, add_delta_m, add_small};
use crate::context::PlainLevel;
use crate::encoding::{Plaintext, fold};
use crate::keys::{PublicKey, SecretKey, sample_error, sample_secret, seed_from, seed_label};
use crate::{Error, Result};
use coterie_math::bigint::BigInt;
use coterie_math::poly::{Poly, Representation, pointwise_mul};
use zeroize::Zeroize;

/// Largest absolute value accepted in caller-supplied encryption randomness (`2^40`, far above
/// any proof-of-knowledge bound and far below every ciphertext prime).
pub const MAX_RANDOMNESS: i64 = 1 << 40;

/// The randomness of a public-key encryption `(Δ·m + u·p0 + e0, u·p1 + e1)` (seed 002 §3.5's
/// `r = (r0, r1, r2) = (u, e0, e1)`), `N` small coefficients each; zeroized on drop. Encryption
/// is linear in `(m, u, e0, e1)`, which proofs of plaintext knowledge rely on.
#[derive(Clone, PartialEq, Eq)]
pub struct EncRandomness {
    /// The ephemeral key `u` (secret distribution for a fresh encryption).
    pub u: Vec<i64>,
    /// The error added to `c_0`.
    pub e0: Vec<i64>,
    /// The error added to `c_1`.
    pub e1: Vec<i64>,
}

impl std::fmt::Debug for EncRandomness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EncRandomness(N = {}, ..)", self.u.len())
    }
}

impl Drop for EncRandomness {
    fn drop(&mut self) {
        self.u.zeroize();
        self.e0.zeroize();
        self.e1.zeroize();
    }
}

impl EncRandomness {
    /// Fresh randomness for `ctx`: `u` from the secret distribution, `e0`, `e1` Gaussian.
    pub fn sample<R: rand::CryptoRng + ?Sized>(ctx: &crate::Context, rng: &mut R) -> Self {
        let n = ctx.degree();
        let mut r = EncRandomness {
            u: vec![0i64; n],
            e0: vec![0i64; n],
            e1: vec![0i64; n],
        };
        sample_secret(ctx, rng, &mut r.u);
        sample_error(ctx, rng, &mut r.e0);
        sample_error(ctx, rng, &mut r.e1);
        r
    }

    fn check(&self, n: usize) -> Result<()> {
        for v in [&self.u, &self.e0, &self.e1] {
            if v.len() != n || v.iter().any(|x| x.unsigned_abs() >= MAX_RANDOMNESS as u64) {
                return Err(Error::Malformed(format!(
                    "encryption randomness needs N = {n} coefficients below 2^40"
                )));
            }
        }
        Ok(())
    }
}

impl PublicKey {
    /// Public-key encryption: `(Δ·m + u·p0 + e0, u·p1 + e1)` at the top level, `u` from the secret
    /// distribution, `e0, e1` Gaussian.
    ///
    /// ```
    /// use coterie_bfv::{Context, Params, Plaintext, SecretKey};
    /// use coterie_math::prg::Csprng;
    /// let ctx = Context::new(Params::insecure_toy(256, 256).unwrap()).unwrap();
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
        let r = EncRandomness::sample(&self.ctx, rng);
        self.encrypt_with(pt, &r)
    }

    /// Public-key encryption with the caller's randomness `r = (u, e0, e1)`:
    /// `(Δ·m + u·p0 + e0, u·p1 + e1)`, deterministic and linear in `(m, r)`.
    ///
    /// ```
    /// use coterie_bfv::{Context, EncRandomness, Params, Plaintext, SecretKey};
    /// use coterie_math::prg::Csprng;
    /// let ctx = Context::new(Params::insecure_toy(256, 256).unwrap()).unwrap();
    /// let mut rng = Csprng::new();
    /// let sk = SecretKey::generate(&ctx, &mut rng);
    /// let pk = sk.public_key(&mut rng);
    /// let pt = Plaintext::encode_coefficients(&ctx, &[1, 2]).unwrap();
    /// let r = EncRandomness::sample(&ctx, &mut rng);
    /// let a = pk.encrypt_with(&pt, &r).unwrap();
    /// assert_eq!(a, pk.encrypt_with(&pt, &r).unwrap());
    /// assert_eq!(sk.decrypt(&a).unwrap(), pt);
    /// ```
    pub fn encrypt_with(&self, pt: &Plaintext, r: &EncRandomness) -> Result<Ciphertext> {
        self.ctx.check_same(&pt.ctx)?;
        let lv = self.ctx.top();
        r.check(self.ctx.degree())?;
        let mut u = Poly::from_signed(&lv.ring, &r.u)?;
        u.to_ntt();
        let mut c0 = Poly::zero(&lv.ring, Representation::Ntt);
        let mut c1 = Poly::zero(&lv.ring, Representation::Ntt);
        Poly::mul_into(&mut c0, &u, &self.p0)?;
        Poly::mul_into(&mut c1, &u, &self.p1)?;
        u.data_mut().zeroize();
        c0.to_coeff();
        c1.to_coeff();
        add_small(&mut c0, &r.e0);
        add_small(&mut c1, &r.e1);
        add_delta_m(lv, &mut c0, pt, false)?;
        Ok(Ciphertext {
            ctx: self.ctx.clone(),
            level: self.ctx.max_level(),
            parts: vec![c0, c1],
            keys: KeySet::Powers,
        })
    }
}

impl SecretKey {
    /// Symmetric encryption with the uniform part compressed to a seed: `c_1 = a` expanded from a
    /// fresh seed, `c_0 = −a·s + e + Δ·m`.
    ///
    /// ```
    /// use coterie_bfv::{Context, Params, Plaintext, SecretKey};
    /// use coterie_math::prg::Csprng;
    /// let ctx = Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap();
    /// let mut rng = Csprng::new();
    /// let sk = SecretKey::generate(&ctx, &mut rng);
    /// let pt = Plaintext::encode_simd(&ctx, &[1, 2, 3]).unwrap();
    /// let seeded = sk.encrypt_symmetric_seeded(&pt, &mut rng).unwrap();
    /// assert_eq!(sk.decrypt(&seeded.expand().unwrap()).unwrap(), pt);
    /// assert_eq!(sk.decrypt(&sk.encrypt_symmetric(&pt, &mut rng).unwrap()).unwrap(), pt);
    /// ```
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
        add_delta_m(lv, &mut c0, pt, false)?;
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

    /// The phase `Σ_i c_i·s^i mod Q_l` of a single-key ciphertext of any degree, in coefficient
    /// form (Horner's rule in the NTT domain).
    pub fn phase(&self, ct: &Ciphertext) -> Result<Poly> {
        self.ctx.check_same(&ct.ctx)?;
        if ct.keys != KeySet::Powers {
            return Err(Error::Unsupported(format!(
                "single-key decryption of a ciphertext under {:?}",
                ct.keys
            )));
        }
        let ring = self.ctx.ring(ct.level)?;
        let n = self.ctx.degree();
        let mut out = ct.parts[0].clone();
        let mut acc = vec![0u64; n];
        let mut tmp = vec![0u64; n];
        for j in 0..=ct.level {
            let plan = ring.plan(j);
            let m = &ring.moduli()[j];
            let s = &self.ntt.data()[j * n..(j + 1) * n];
            // acc = (…((c_k)·s + c_{k−1})·s + … + c_1)·s; for two parts exactly c_1·s.
            for (i, part) in ct.parts[1..].iter().rev().enumerate() {
                tmp.copy_from_slice(part.limb(j));
                plan.forward(&mut tmp);
                if i > 0 {
                    for (x, &a) in tmp.iter_mut().zip(&acc) {
                        *x = m.add(*x, a);
                    }
                }
                acc.fill(0);
                plan.mul_acc(&mut acc, &tmp, s);
            }
            plan.inverse(&mut acc);
            for (o, &a) in out.limb_mut(j).iter_mut().zip(&acc) {
                *o = m.add(*o, a);
            }
        }
        acc.zeroize();
        tmp.zeroize();
        Ok(out)
    }

    /// Decryption: `m = ⌊t·[c_0 + c_1·s]_Q / Q⌉ mod t`, computed exactly in RNS with one exact
    /// base conversion to `{t}`: with `y = [t·x + ⌊Q/2⌋]_Q`, `t·x + ⌊Q/2⌋ − y = Q·⌊t·x/Q⌉`, so
    /// modulo `t` (where `t·x ≡ 0`) `m = (⌊Q/2⌋ − y)·Q^{-1} mod t` (`gcd(Q, t) = 1`). For a
    /// cyclotomic modulus, `μ = round(((X^D − b)/Q)·[c_0 + c_1·s]_Q)` folded mod `X^D − b`
    /// (seed 002 §3.5, big integers).
    ///
    /// For speed the ciphertext is first modulus-switched down to the lowest level `l` with
    /// `Q_l ≥ 2^41·t·(1 + N‖s‖ + N²‖s‖²)` (`b + 1` in place of `t` for a cyclotomic modulus): by
    /// the modulus-switching bound of [`crate::noise`] this adds at most `2^-42` to the invariant
    /// noise (so decryption is exact whenever the noise budget is above `2^-40`, i.e. whenever
    /// [`crate::noise::noise_budget`] is positive by any measurable margin).
    /// [`SecretKey::decrypt_exact_at_level`] skips this step.
    ///
    /// ```
    /// use coterie_bfv::{Context, Params, Plaintext, SecretKey};
    /// use coterie_math::prg::Csprng;
    /// let ctx = Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap();
    /// let mut rng = Csprng::new();
    /// let sk = SecretKey::generate(&ctx, &mut rng);
    /// let pt = Plaintext::encode_simd(&ctx, &[4, 5]).unwrap();
    /// let ct = sk.public_key(&mut rng).encrypt(&pt, &mut rng).unwrap();
    /// assert_eq!(sk.decrypt(&ct).unwrap(), pt);
    /// assert_eq!(sk.decrypt_exact_at_level(&ct).unwrap(), pt);
    /// assert!(sk.fast_decryption_level(2).unwrap() <= ctx.max_level());
    /// // The phase is Δ·m plus small noise.
    /// assert_eq!(sk.phase(&ct).unwrap().context().limbs(), ctx.max_level() + 1);
    /// ```
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
        // 1 + N‖s‖ + (N‖s‖)² + … over the parts.
        let mut err = 0.0;
        let mut term = 1.0;
        for _ in 0..parts.max(2) {
            err += term;
            term *= n * bs;
        }
        let need = 41.0 + self.ctx.plaintext_modulus().expansion_log2() + err.log2();
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
        let x = self.phase(ct)?;
        decode_phase(&self.ctx, x, ct.level)
    }
}

/// Decryption of a multi-key ciphertext with all the keys in one hand (seed 001 §3.3): the phase
/// `c_0 + Σ_i c_i·s_{id_i}` (or `Σ_{i,j} c_{i,j}·s̄_i·s̄_j` for a [`KeySet::PartiesTensor`]),
/// rounded as in [`SecretKey::decrypt`], at the ciphertext's level. `keys` pairs user ids with
/// their secret keys; every id of the ciphertext must be present.
///
/// ```
/// use coterie_bfv::encrypt::decrypt_multi_key;
/// use coterie_bfv::{Ciphertext, Context, KeySet, Params, Plaintext, SecretKey};
/// use coterie_math::prg::Csprng;
/// let ctx = Context::new(Params::insecure_toy(256, 256).unwrap()).unwrap();
/// let mut rng = Csprng::new();
/// let (s1, s2) = (SecretKey::generate(&ctx, &mut rng), SecretKey::generate(&ctx, &mut rng));
/// let under = |sk: &SecretKey, id, v| {
///     let ct = sk.encrypt_symmetric(&Plaintext::encode_coefficients(&ctx, &[v]).unwrap(), &mut Csprng::new()).unwrap();
///     let (parts, _) = ct.into_parts();
///     Ciphertext::from_parts_with_keys(&ctx, ctx.max_level(), parts, KeySet::Parties(vec![id])).unwrap()
/// };
/// let a = under(&s1, 1, 3).extend_to(&[1, 2]).unwrap();
/// let b = under(&s2, 2, 4).extend_to(&[1, 2]).unwrap();
/// let sum = decrypt_multi_key(&a.add(&b).unwrap(), &[(1, &s1), (2, &s2)]).unwrap();
/// assert_eq!(sum.coefficients().unwrap()[0], 7);
/// let prod = decrypt_multi_key(&a.mul_no_relin(&b).unwrap(), &[(1, &s1), (2, &s2)]).unwrap();
/// assert_eq!(prod.coefficients().unwrap()[0], 12);
/// ```
pub fn decrypt_multi_key(ct: &Ciphertext, keys: &[(u64, &SecretKey)]) -> Result<Plaintext> {
    let x = phase_multi_key(ct, keys)?;
    decode_phase(&ct.ctx, x, ct.level)
}

/// The phase of a multi-key ciphertext with all the keys in one hand: `c_0 + Σ_i c_i·s_{id_i}`
/// (or `Σ_{i,j} c_{i,j}·s̄_i·s̄_j` for a [`KeySet::PartiesTensor`]) modulo `Q_l`, coefficient form
/// at the ciphertext's level (secret: it is `Δ·m` plus the noise). `keys` as in
/// [`decrypt_multi_key`].
///
/// # Errors
/// [`Error::Unsupported`] for a single-key ciphertext, [`Error::MissingKey`] naming the first
/// user of the ciphertext without a key, [`Error::Mismatch`] for a key of another context.
pub fn phase_multi_key(ct: &Ciphertext, keys: &[(u64, &SecretKey)]) -> Result<Poly> {
    let ids = match &ct.keys {
        KeySet::Parties(ids) | KeySet::PartiesTensor(ids) => ids,
        KeySet::Powers => {
            return Err(Error::Unsupported(
                "a single-key ciphertext (use SecretKey::decrypt)".into(),
            ));
        }
    };
    let ctx = &ct.ctx;
    let sks = ids
        .iter()
        .map(|id| {
            let (_, sk) = keys
                .iter()
                .find(|(k, _)| k == id)
                .ok_or_else(|| Error::MissingKey(format!("secret key of user {id}")))?;
            ctx.check_same(&sk.ctx)?;
            Ok(&sk.ntt)
        })
        .collect::<Result<Vec<&Poly>>>()?;
    multi_key_phase(ct, &sks)
}

/// The phase of a multi-key ciphertext under the key polynomials `keys` (top-level NTT form, one
/// per user id of the ciphertext, in its order; any polynomials, e.g. seed 001's uniform masking
/// keys in place of the secret keys).
pub(crate) fn multi_key_phase(ct: &Ciphertext, keys: &[&Poly]) -> Result<Poly> {
    let (ids, tensor) = match &ct.keys {
        KeySet::Parties(ids) => (ids, false),
        KeySet::PartiesTensor(ids) => (ids, true),
        KeySet::Powers => {
            return Err(Error::Unsupported(
                "a single-key ciphertext (use SecretKey::decrypt)".into(),
            ));
        }
    };
    let ctx = &ct.ctx;
    let top = &ctx.top().ring;
    if keys.len() != ids.len()
        || keys.iter().any(|k| {
            k.context().moduli() != top.moduli() || k.representation() != Representation::Ntt
        })
    {
        return Err(Error::Mismatch(format!(
            "{} key polynomials for {} users (top-level NTT form expected)",
            keys.len(),
            ids.len()
        )));
    }
    let ring = ctx.ring(ct.level)?;
    let n = ctx.degree();
    let d1 = ids.len() + 1;
    let mut out = ct.parts[0].clone();
    let mut acc = vec![0u64; n];
    let mut tmp = vec![0u64; n];
    let mut w = vec![0u64; n];
    for j in 0..=ct.level {
        let plan = ring.plan(j);
        let m = &ring.moduli()[j];
        let key = |i: usize| &keys[i - 1].data()[j * n..(j + 1) * n];
        acc.fill(0);
        for (k, part) in ct.parts.iter().enumerate().skip(1) {
            tmp.copy_from_slice(part.limb(j));
            plan.forward(&mut tmp);
            if !tensor {
                plan.mul_acc(&mut acc, &tmp, key(k));
                continue;
            }
            let (a, b) = (k / d1, k % d1);
            match (a, b) {
                (0, b) => plan.mul_acc(&mut acc, &tmp, key(b)),
                (a, 0) => plan.mul_acc(&mut acc, &tmp, key(a)),
                (a, b) => {
                    pointwise_mul(m, &mut w, key(a), key(b));
                    plan.mul_acc(&mut acc, &tmp, &w);
                }
            }
        }
        plan.inverse(&mut acc);
        for (o, &a) in out.limb_mut(j).iter_mut().zip(&acc) {
            *o = m.add(*o, a);
        }
    }
    acc.zeroize();
    tmp.zeroize();
    w.zeroize();
    Ok(out)
}

/// Rounds a phase `x` (coefficient form, level `level`, consumed and zeroized) to the plaintext:
/// the last step of every decryption, and of a threshold decryption whose parties sum their
/// partial phases.
///
/// ```
/// use coterie_bfv::encrypt::decode_phase;
/// use coterie_bfv::{Context, Params, Plaintext, SecretKey};
/// use coterie_math::prg::Csprng;
/// let ctx = Context::new(Params::insecure_toy(256, 256).unwrap()).unwrap();
/// let mut rng = Csprng::new();
/// let sk = SecretKey::generate(&ctx, &mut rng);
/// let pt = Plaintext::encode_coefficients(&ctx, &[9]).unwrap();
/// let ct = sk.encrypt_symmetric(&pt, &mut rng).unwrap();
/// assert_eq!(decode_phase(&ctx, sk.phase(&ct).unwrap(), ct.level()).unwrap(), pt);
/// ```
pub fn decode_phase(ctx: &crate::Context, mut x: Poly, level: usize) -> Result<Plaintext> {
    let lv = ctx.level(level)?;
    let n = ctx.degree();
    let sl = match &lv.plain {
        PlainLevel::Scalar(sl) => sl,
        PlainLevel::Cyclotomic(_) => {
            let pt = decrypt_cyclotomic(ctx, &x, level);
            x.data_mut().zeroize();
            return pt;
        }
    };
    for (i, m) in lv.ring.moduli().iter().enumerate() {
        let (tq, h) = (sl.t_mod_q[i], sl.half_q_mod_q[i]);
        let ts = m.shoup(tq);
        for v in x.limb_mut(i) {
            *v = m.add(m.mul_shoup(*v, tq, ts), h);
        }
    }
    let mut y = vec![0u64; n];
    sl.dec_conv.convert_exact(x.data(), &mut y, n, false)?;
    x.data_mut().zeroize();
    let tm = coterie_math::modulus::Modulus::new(ctx.scalar_t()?)?;
    let (h, qi) = (sl.half_q_mod_t, sl.q_inv_mod_t);
    for c in y.iter_mut() {
        *c = tm.mul_any(tm.sub(h, *c), qi);
    }
    Ok(Plaintext::scalar(ctx, y))
}

/// `round(((X^D − b)/Q)·x)` folded mod `X^D − b`, for the phase `x` at `level`, in RNS: `x`
/// (centered) lifted exactly to the auxiliary basis, multiplied by `X^D − b` in both bases, the
/// product's scale-and-round (the tensor's), and the result, of absolute value at most
/// `(b + 1)/2 + 1`, read from the fewest primes whose product exceeds twice that (one 128-bit
/// CRT step for two primes). Equal to [`decrypt_cyclotomic_big`] (tested).
fn decrypt_cyclotomic(ctx: &crate::Context, x: &Poly, level: usize) -> Result<Plaintext> {
    let lv = ctx.level(level)?;
    let (PlainLevel::Cyclotomic(cl), crate::params::PlaintextModulus::Cyclotomic { d, b, .. }) =
        (&lv.plain, ctx.plaintext_modulus())
    else {
        return Err(Error::Unsupported(
            "not a cyclotomic plaintext modulus".into(),
        ));
    };
    // |round(y/Q)| ≤ (b + 1)/2 + 1: the fewest primes whose product exceeds twice that.
    let twice = BigInt::from(b + 1u32) + 4u32;
    let moduli = lv.ring.moduli();
    let mut k = 1;
    let mut prod = BigInt::from(moduli[0].value());
    while prod <= twice && k < moduli.len() {
        prod *= moduli[k].value();
        k += 1;
    }
    if prod <= twice {
        // Q itself is below the result's range (a level too low to decrypt this plaintext
        // modulus reliably): the residues cannot carry it, the big integers can.
        return decrypt_cyclotomic_big(ctx, x, level);
    }
    let n = ctx.degree();
    let mut xp = Poly::zero(&lv.aux, Representation::Coefficient);
    lv.q_to_aux
        .convert_exact(x.data(), xp.data_mut(), n, true)?;
    let mut yq = crate::eval::mul_x_d_minus_b(x, *d, &cl.b_mod_q);
    let mut yp = crate::eval::mul_x_d_minus_b(&xp, *d, &cl.b_mod_aux);
    xp.data_mut().zeroize();
    let mut r = vec![0u64; n * moduli.len()];
    let rounded = lv.rounder.scale_round(yq.data(), yp.data(), &mut r, n);
    yq.data_mut().zeroize();
    yp.data_mut().zeroize();
    rounded?;
    let coeffs: Vec<BigInt> = if k <= 2 && prod.significant_bits() <= 126 {
        let q0 = moduli[0].value();
        let q1 = if k == 2 { moduli[1].value() } else { 1 };
        let qq = q0 as u128 * q1 as u128;
        let inv = if k == 2 {
            moduli[1].inv(moduli[1].reduce(q0))?
        } else {
            0
        };
        (0..n)
            .map(|c| {
                let r0 = r[c];
                let v = if k == 2 {
                    let m1 = &moduli[1];
                    let t = m1.mul(m1.sub(r[n + c], m1.reduce(r0)), inv);
                    r0 as u128 + q0 as u128 * t as u128
                } else {
                    r0 as u128
                };
                let signed = if v > qq / 2 {
                    v as i128 - qq as i128
                } else {
                    v as i128
                };
                BigInt::from(signed)
            })
            .collect()
    } else {
        let basis = coterie_math::rns::RnsBasis::new(
            &moduli[..k].iter().map(|m| m.value()).collect::<Vec<_>>(),
        )?;
        let mut res = vec![0u64; k];
        (0..n)
            .map(|c| {
                for (i, v) in res.iter_mut().enumerate() {
                    *v = r[i * n + c];
                }
                basis.reconstruct_centered(&res)
            })
            .collect::<std::result::Result<_, _>>()?
    };
    r.zeroize();
    let rep = fold(ctx, coeffs.into_iter())?;
    Plaintext::from_representative(ctx, &rep)
}

/// The big-integer reference of [`decrypt_cyclotomic`] (and its fallback when `Q` is below the
/// result's range): the phase's centered coefficients times `X^D − b`, divided by `Q` with
/// rounding, folded.
pub(crate) fn decrypt_cyclotomic_big(
    ctx: &crate::Context,
    x: &Poly,
    level: usize,
) -> Result<Plaintext> {
    let y = scaled_by_x_d_minus_b(ctx, x)?;
    let q = ctx.modulus_at(level)?;
    let q2 = BigInt::from(&q << 1u32);
    // round(y/Q) = ⌊(2y + Q) / 2Q⌋
    let r = y.into_iter().map(|mut v| {
        v <<= 1u32;
        v += &q;
        v.div_rem_floor(q2.clone()).0
    });
    let rep = fold(ctx, r)?;
    Plaintext::from_representative(ctx, &rep)
}

/// The centered integer coefficients of `(X^D − b)·x` in `Z[X]/(X^N+1)` (`x` in coefficient
/// form, lifted to `(−Q/2, Q/2]`).
pub(crate) fn scaled_by_x_d_minus_b(ctx: &crate::Context, x: &Poly) -> Result<Vec<BigInt>> {
    let (d, b) = match ctx.plaintext_modulus() {
        crate::params::PlaintextModulus::Cyclotomic { d, b, .. } => (*d, b),
        crate::params::PlaintextModulus::Scalar(_) => {
            return Err(Error::Unsupported(
                "not a cyclotomic plaintext modulus".into(),
            ));
        }
    };
    let xs = x.to_bigints()?;
    let n = xs.len();
    Ok((0..n)
        .map(|i| {
            // (X^D·x)_i = x_{i−D}, or −x_{N−D+i} for i < D (X^N = −1).
            let shifted = if i >= d {
                xs[i - d].clone()
            } else {
                -xs[n - d + i].clone()
            };
            shifted - BigInt::from(&xs[i] * b)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{MatriGearSet, Params};
    use coterie_math::prg::Csprng;

    /// The RNS decryption of a cyclotomic phase equals the big-integer reference for random
    /// phases (any `x` mod `Q`, so every rounding case and both CRT paths show): Toy-B-like
    /// parameters, Params I and II at 128 bits (two primes read), Params III at 128 bits
    /// (`M = 1`, `b = p − 1`: more primes, the big-integer CRT).
    #[test]
    fn rns_cyclotomic_decryption_matches_big_integers() {
        let mut rng = Csprng::insecure_from_seed_for_tests([21; 32]);
        let sets = [
            Params::insecure_toy_cyclotomic(64, 132, 4).unwrap(),
            Params::matrigear(MatriGearSet::I, 128).unwrap(),
            Params::matrigear(MatriGearSet::II, 128).unwrap(),
            Params::matrigear(MatriGearSet::III, 128).unwrap(),
        ];
        for params in sets {
            let ctx = crate::Context::new(params).unwrap();
            // the top level, and the lowest (one prime: for b ≈ 2^64 the residues cannot carry
            // the result, and the big-integer fallback runs)
            for (level, round) in [(ctx.max_level(), 0), (ctx.max_level(), 1), (0, 0)] {
                let ring = ctx.ring(level).unwrap();
                let mut x = Poly::zero(&ring, Representation::Coefficient);
                for (i, m) in ring.moduli().iter().enumerate() {
                    for v in x.limb_mut(i) {
                        *v = m.reduce(rand::Rng::next_u64(&mut rng));
                    }
                }
                if round == 1 {
                    // a small phase: the plaintext of an encryption of small values
                    x = Poly::from_signed(&ring, &vec![3i64; ctx.degree()]).unwrap();
                }
                let fast = decrypt_cyclotomic(&ctx, &x, level).unwrap();
                let big = decrypt_cyclotomic_big(&ctx, &x, level).unwrap();
                let (fr, br) = (fast.representative(), big.representative());
                let first = fr.iter().zip(&br).position(|(a, b)| a != b);
                assert!(
                    first.is_none() && fast == big,
                    "{} level {level} round {round}: first difference at {first:?}: {:?} vs {:?}",
                    ctx.params().name(),
                    first.map(|i| &fr[i]),
                    first.map(|i| &br[i])
                );
            }
        }
    }
}
