//! The public evaluation steps: the tensor product, the scale-and-round, the gadget product, and
//! on top of them multiplication, relinearization, key switching and rotations.
//!
//! Multiplication is the full-RNS BFV product with *exact* arithmetic throughout: each operand is
//! lifted from `Q` to an auxiliary basis `P > 2·t·N·Q` by coterie-math's exact base extension
//! (centered), the tensor product ([`tensor`]) is taken in `Q ∪ P` by NTT, and the
//! [`scale_and_round`] is coterie-math's exact `round(t·x/Q)`
//! ([`coterie_math::rns::ScaleRounder`]) — the textbook BFV product with no approximation error
//! (unlike the floating-point HPS or the Montgomery-reduction BEHZ variants). For a cyclotomic
//! plaintext modulus the scale-and-round first multiplies by `X^D − b` exactly (in `Q ∪ P`,
//! whose size accounts for the factor `b + 1`), then rounds by `1/Q` (seed 002 §3.6).
//!
//! Relinearization and rotations are the [`gadget_product`] of one part with a
//! [`KeySwitchKey`], with the RNS or the power-of-two decomposition the key says.

use crate::ciphertext::{Ciphertext, KeySet};
use crate::context::PlainLevel;
use crate::keys::{
    Decomposition, GadgetCiphertext, GaloisKey, GaloisKeys, KeySwitchKey, RelinKey,
    galois_element_for_rotation,
};
use crate::{Context, Error, Result};
use coterie_math::gadget::{PowerOfTwoRnsDecomposer, rns_digit_limb};
use coterie_math::poly::{Poly, Representation};

/// Most products summed into one tensor coefficient (the auxiliary basis has room for 16).
pub(crate) const MAX_TENSOR_TERMS: usize = 16;

/// The exact tensor product of two ciphertexts, before the scale-and-round: its parts as
/// integers in `Z[X]/(X^N+1)` held in the basis `Q_l ∪ P_l` (coefficient form). Tensors of the
/// same operands' key sets can be summed ([`Tensor::add_assign`]) before one scale-and-round
/// (lazy rescaling).
#[derive(Clone, Debug)]
pub struct Tensor {
    ctx: Context,
    level: usize,
    keys: KeySet,
    q: Vec<Poly>,
    p: Vec<Poly>,
}

impl Tensor {
    /// The key set of the parts (single key: `(1, s, s², …)`; multi-key: the outer product).
    pub fn key_set(&self) -> &KeySet {
        &self.keys
    }

    /// Number of parts.
    pub fn len(&self) -> usize {
        self.q.len()
    }

    /// Always false.
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// The level.
    pub fn level(&self) -> usize {
        self.level
    }

    /// Adds another tensor of the same level and key set (`x + y` exactly, as long as the sum
    /// stays within the auxiliary basis: at most 16 products per coefficient in all).
    ///
    /// ```
    /// use coterie_bfv::{scale_and_round, tensor};
    /// use coterie_bfv::{Context, Params, Plaintext, SecretKey};
    /// use coterie_math::prg::Csprng;
    /// let ctx = Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap();
    /// let mut rng = Csprng::new();
    /// let sk = SecretKey::generate(&ctx, &mut rng);
    /// // Lazy rescaling: x·y + x·z with one scale-and-round.
    /// let e = |v| sk.encrypt_symmetric(&Plaintext::encode_simd(&ctx, &[v]).unwrap(), &mut Csprng::new()).unwrap();
    /// let (x, y, z) = (e(2), e(3), e(4));
    /// let mut t = tensor(&x, &y).unwrap();
    /// t.add_assign(&tensor(&x, &z).unwrap()).unwrap();
    /// let r = scale_and_round(&t).unwrap();
    /// assert_eq!(sk.decrypt(&r).unwrap().decode_simd().unwrap()[0], 14);
    /// ```
    pub fn add_assign(&mut self, other: &Tensor) -> Result<()> {
        self.ctx.check_same(&other.ctx)?;
        if self.level != other.level || self.keys != other.keys || self.len() != other.len() {
            return Err(Error::Mismatch(
                "tensors of different levels or key sets".into(),
            ));
        }
        for (a, b) in self.q.iter_mut().zip(&other.q) {
            a.try_add_assign(b)?;
        }
        for (a, b) in self.p.iter_mut().zip(&other.p) {
            a.try_add_assign(b)?;
        }
        Ok(())
    }
}

impl Tensor {
    /// A tensor from parts accumulated in NTT form over `Q_l` and the auxiliary basis (as
    /// [`extend`] gives them), e.g. MatMul's hoisted sums.
    pub(crate) fn from_ntt_parts(
        ctx: &Context,
        level: usize,
        keys: KeySet,
        mut q: Vec<Poly>,
        mut p: Vec<Poly>,
    ) -> Tensor {
        q.iter_mut().chain(p.iter_mut()).for_each(Poly::to_coeff);
        Tensor {
            ctx: ctx.clone(),
            level,
            keys,
            q,
            p,
        }
    }
}

/// Lifts a part to `(Q, P)` in NTT form (exact centered base extension).
pub(crate) fn extend(ctx: &Context, level: usize, p: &Poly) -> Result<(Poly, Poly)> {
    let lv = ctx.level(level)?;
    let n = ctx.degree();
    let mut xp = Poly::zero(&lv.aux, Representation::Coefficient);
    lv.q_to_aux
        .convert_exact(p.data(), xp.data_mut(), n, true)?;
    let mut xq = p.clone();
    xq.to_ntt();
    xp.to_ntt();
    Ok((xq, xp))
}

/// The tensor product of two ciphertexts of the same level: for single-key ciphertexts of
/// degrees `k`, `k'` the polynomial product `d_m = Σ_{i+j=m} c_i·c'_j` (degree `k + k'`, under
/// `(1, s, …, s^{k+k'})`); for multi-key ciphertexts over the same ids the outer product
/// `d_{i,j} = c_i·c'_j` (under [`KeySet::PartiesTensor`]). Exact (see the
/// [module documentation](self)); [`scale_and_round`] finishes the product.
///
/// ```
/// use coterie_bfv::eval::{scale_and_round, tensor};
/// use coterie_bfv::{Context, Params, Plaintext, SecretKey};
/// use coterie_math::prg::Csprng;
/// let ctx = Context::new(Params::insecure_toy(256, 256).unwrap()).unwrap();
/// let mut rng = Csprng::new();
/// let sk = SecretKey::generate(&ctx, &mut rng);
/// let x = sk.encrypt_symmetric(&Plaintext::encode_coefficients(&ctx, &[3]).unwrap(), &mut rng).unwrap();
/// let y = sk.encrypt_symmetric(&Plaintext::encode_coefficients(&ctx, &[5]).unwrap(), &mut rng).unwrap();
/// let z = scale_and_round(&tensor(&x, &y).unwrap()).unwrap();
/// assert_eq!(z.len(), 3);
/// assert_eq!(sk.decrypt(&z).unwrap().coefficients().unwrap()[0], 15);
/// ```
pub fn tensor(a: &Ciphertext, b: &Ciphertext) -> Result<Tensor> {
    a.check(b)?;
    let (ctx, level) = (&a.ctx, a.level);
    match (&a.keys, &b.keys) {
        (KeySet::Powers, KeySet::Powers) if a.parts.len() == 2 && b.parts.len() == 2 => {
            tensor_2x2(a, b)
        }
        (KeySet::Powers, KeySet::Powers) => {
            let terms = a.parts.len().min(b.parts.len());
            if terms > MAX_TENSOR_TERMS {
                return Err(Error::Unsupported(format!(
                    "tensor of ciphertexts of {} and {} parts",
                    a.parts.len(),
                    b.parts.len()
                )));
            }
            let xa = a
                .parts
                .iter()
                .map(|p| extend(ctx, level, p))
                .collect::<Result<Vec<_>>>()?;
            let xb = b
                .parts
                .iter()
                .map(|p| extend(ctx, level, p))
                .collect::<Result<Vec<_>>>()?;
            let len = a.parts.len() + b.parts.len() - 1;
            let lv = ctx.level(level)?;
            let mut q: Vec<Poly> = (0..len)
                .map(|_| Poly::zero(&lv.ring, Representation::Ntt))
                .collect();
            let mut p: Vec<Poly> = (0..len)
                .map(|_| Poly::zero(&lv.aux, Representation::Ntt))
                .collect();
            for (i, (aq, ap)) in xa.iter().enumerate() {
                for (j, (bq, bp)) in xb.iter().enumerate() {
                    q[i + j].try_mul_acc(aq, bq)?;
                    p[i + j].try_mul_acc(ap, bp)?;
                }
            }
            q.iter_mut().chain(p.iter_mut()).for_each(Poly::to_coeff);
            Ok(Tensor {
                ctx: ctx.clone(),
                level,
                keys: KeySet::Powers,
                q,
                p,
            })
        }
        (KeySet::Parties(ia), KeySet::Parties(ib)) if ia == ib => {
            let xa = a
                .parts
                .iter()
                .map(|p| extend(ctx, level, p))
                .collect::<Result<Vec<_>>>()?;
            let xb = b
                .parts
                .iter()
                .map(|p| extend(ctx, level, p))
                .collect::<Result<Vec<_>>>()?;
            let mut q = Vec::with_capacity(xa.len() * xb.len());
            let mut p = Vec::with_capacity(xa.len() * xb.len());
            for (aq, ap) in &xa {
                for (bq, bp) in &xb {
                    let mut dq = aq * bq;
                    let mut dp = ap * bp;
                    dq.to_coeff();
                    dp.to_coeff();
                    q.push(dq);
                    p.push(dp);
                }
            }
            Ok(Tensor {
                ctx: ctx.clone(),
                level,
                keys: KeySet::PartiesTensor(ia.clone()),
                q,
                p,
            })
        }
        (ka, kb) => Err(Error::Mismatch(format!(
            "tensor of ciphertexts under {ka:?} and {kb:?} (extend multi-key ciphertexts to the \
             same ids first)"
        ))),
    }
}

/// A 2-part single-key ciphertext lifted once to `(Q, P)` in NTT form (the exact centered base
/// extension of [`tensor`]), for many products by the same operand: each
/// [`Ciphertext::mul_extended`] then lifts only its other operand (MatriGear multiplies every
/// proven ciphertext by the one encrypted MAC key).
///
/// ```
/// use coterie_bfv::{Context, Params, Plaintext, SecretKey};
/// use coterie_math::prg::Csprng;
/// let ctx = Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap();
/// let mut rng = Csprng::new();
/// let sk = SecretKey::generate(&ctx, &mut rng);
/// let rlk = sk.relin_key(&mut rng);
/// let enc = |v: u64, rng: &mut Csprng| {
///     sk.encrypt_symmetric(&Plaintext::encode_simd(&ctx, &[v]).unwrap(), rng).unwrap()
/// };
/// let (x, y) = (enc(3, &mut rng), enc(5, &mut rng));
/// let xe = x.extended().unwrap();
/// let z = y.mul_extended(&xe, &rlk).unwrap();
/// assert_eq!(sk.decrypt(&z).unwrap().decode_simd().unwrap()[0], 15);
/// assert_eq!(z, y.mul(&x, &rlk).unwrap()); // the same words as the plain product
/// ```
#[derive(Clone, Debug)]
pub struct Extended {
    ctx: Context,
    level: usize,
    parts: [(Poly, Poly); 2],
}

impl Ciphertext {
    /// This ciphertext lifted for repeated products ([`Extended`]).
    ///
    /// # Errors
    /// [`Error::Unsupported`] for other than a 2-part single-key ciphertext.
    pub fn extended(&self) -> Result<Extended> {
        if self.parts.len() != 2 || self.keys != KeySet::Powers {
            return Err(Error::Unsupported(
                "a lifted operand of other than a 2-part single-key ciphertext".into(),
            ));
        }
        Ok(Extended {
            ctx: self.ctx.clone(),
            level: self.level,
            parts: [
                extend(&self.ctx, self.level, &self.parts[0])?,
                extend(&self.ctx, self.level, &self.parts[1])?,
            ],
        })
    }

    /// `self · other` relinearized, with `other` lifted beforehand: the same ciphertext as
    /// [`Ciphertext::mul`] (the tensor is symmetric), one operand's lift cheaper.
    ///
    /// # Errors
    /// As [`Ciphertext::mul`], and [`Error::Unsupported`] for other than a 2-part single-key
    /// `self`.
    pub fn mul_extended(&self, other: &Extended, rlk: &RelinKey) -> Result<Ciphertext> {
        if self.parts.len() != 2 || self.keys != KeySet::Powers {
            return Err(Error::Unsupported(
                "a product by a lifted operand of other than a 2-part single-key ciphertext".into(),
            ));
        }
        self.ctx.check_same(&other.ctx)?;
        if self.level != other.level {
            return Err(Error::Mismatch(format!(
                "product of ciphertexts at levels {} and {}",
                self.level, other.level
            )));
        }
        let (ctx, level) = (&self.ctx, self.level);
        let a = [
            extend(ctx, level, &self.parts[0])?,
            extend(ctx, level, &self.parts[1])?,
        ];
        scale_and_round(&tensor_2x2_lifted(ctx, level, a, &other.parts)?)?.relinearize(rlk)
    }
}

/// The 2 × 2 fast path: `(d0, d1, d2) = (x0·y0, x0·y1 + x1·y0, x1·y1)`, reusing the operands'
/// buffers for `d1`, `d2`.
fn tensor_2x2(a: &Ciphertext, b: &Ciphertext) -> Result<Tensor> {
    let (ctx, level) = (&a.ctx, a.level);
    let xa = [
        extend(ctx, level, &a.parts[0])?,
        extend(ctx, level, &a.parts[1])?,
    ];
    let xb = if std::ptr::eq(a, b) {
        xa.clone()
    } else {
        [
            extend(ctx, level, &b.parts[0])?,
            extend(ctx, level, &b.parts[1])?,
        ]
    };
    tensor_2x2_lifted(ctx, level, xa, &xb)
}

/// [`tensor_2x2`] on lifted operands (`a`'s buffers become `d1`, `d2`).
fn tensor_2x2_lifted(
    ctx: &Context,
    level: usize,
    a: [(Poly, Poly); 2],
    b: &[(Poly, Poly); 2],
) -> Result<Tensor> {
    let [(a0q, a0p), (a1q, a1p)] = a;
    let [(b0q, b0p), (b1q, b1p)] = b;
    let prod = |mut x0: Poly, mut x1: Poly, y0: &Poly, y1: &Poly| -> Result<Vec<Poly>> {
        let mut d0 = Poly::zero(x0.context(), Representation::Ntt);
        Poly::mul_into(&mut d0, &x0, y0)?;
        x0.try_mul_assign(y1)?;
        x0.try_mul_acc(&x1, y0)?;
        x1.try_mul_assign(y1)?;
        let (mut d1, mut d2) = (x0, x1);
        for d in [&mut d0, &mut d1, &mut d2] {
            d.to_coeff();
        }
        Ok(vec![d0, d1, d2])
    };
    Ok(Tensor {
        ctx: ctx.clone(),
        level,
        keys: KeySet::Powers,
        q: prod(a0q, a1q, b0q, b1q)?,
        p: prod(a0p, a1p, b0p, b1p)?,
    })
}

/// `y = (X^D − b)·x` limb by limb (`b_mod` holds `b` modulo each prime of `x`'s ring).
pub(crate) fn mul_x_d_minus_b(x: &Poly, d: usize, b_mod: &[u64]) -> Poly {
    let ring = x.context().clone();
    let n = ring.degree();
    let mut y = Poly::zero(&ring, Representation::Coefficient);
    for (i, m) in ring.moduli().iter().enumerate() {
        let (bi, bs) = (b_mod[i], m.shoup(b_mod[i]));
        let src = x.limb(i);
        let dst = y.limb_mut(i);
        for c in 0..n {
            let bx = m.mul_shoup(src[c], bi, bs);
            let shifted = if c >= d {
                src[c - d]
            } else {
                m.sub(0, src[n - d + c])
            };
            dst[c] = m.sub(shifted, bx);
        }
    }
    y
}

/// The BFV scale-and-round of a tensor: `round(t·x/Q)` part by part (scalar `t`), or
/// `round((X^D − b)·x/Q)` (cyclotomic, the product by `X^D − b` exact), reduced mod `Q`.
/// `mul_no_relin` is `scale_and_round ∘ tensor`.
pub fn scale_and_round(t: &Tensor) -> Result<Ciphertext> {
    let lv = t.ctx.level(t.level)?;
    let n = t.ctx.degree();
    let mut parts = Vec::with_capacity(t.q.len());
    for (xq, xp) in t.q.iter().zip(&t.p) {
        let mut out = Poly::zero(&lv.ring, Representation::Coefficient);
        match &lv.plain {
            PlainLevel::Scalar(_) => {
                lv.rounder
                    .scale_round(xq.data(), xp.data(), out.data_mut(), n)?;
            }
            PlainLevel::Cyclotomic(cl) => {
                let d = match t.ctx.plaintext_modulus() {
                    crate::params::PlaintextModulus::Cyclotomic { d, .. } => *d,
                    crate::params::PlaintextModulus::Scalar(_) => n,
                };
                let yq = mul_x_d_minus_b(xq, d, &cl.b_mod_q);
                let yp = mul_x_d_minus_b(xp, d, &cl.b_mod_aux);
                lv.rounder
                    .scale_round(yq.data(), yp.data(), out.data_mut(), n)?;
            }
        }
        parts.push(out);
    }
    Ciphertext::from_parts_with_keys(&t.ctx, t.level, parts, t.keys.clone())
}

/// The gadget product `c ⊡ G = (⟨h(c), b⟩, ⟨h(c), a⟩)` of a polynomial `c` (coefficient form, at
/// any level `l`) with a gadget ciphertext `G` (rows `(b_i, a_i)`, top level), with the
/// decomposition `h` that `G` uses (RNS: the centered residues; power of two: balanced base-`B`
/// digits). Returns `(k_0, k_1)` at level `l` in coefficient form with
/// `k_0 + k_1·s ≈ c·m` when `G` encrypts `m` under `s`.
///
/// ```
/// use coterie_bfv::eval::gadget_product;
/// use coterie_bfv::{Context, Decomposition, Params, SecretKey};
/// use coterie_math::poly::Poly;
/// use coterie_math::prg::Csprng;
/// let ctx = Context::new(Params::insecure_toy(256, 256).unwrap()).unwrap();
/// let mut rng = Csprng::new();
/// let sk = SecretKey::generate(&ctx, &mut rng);
/// let ring = ctx.ring(ctx.max_level()).unwrap();
/// let mut one = Poly::from_signed(&ring, &[1]).unwrap();
/// one.to_ntt();
/// for dec in [Decomposition::Rns, Decomposition::PowerOfTwo { base_log: 16 }] {
///     let g = sk.gadget_encrypt(&one, dec, &mut rng).unwrap();
///     let c = Poly::from_signed(&ring, &[1 << 30]).unwrap();
///     let (k0, k1) = gadget_product(&c, &g).unwrap();
///     assert_eq!(k0.context().limbs(), ring.limbs());
///     let _ = k1;
/// }
/// ```
pub fn gadget_product(c: &Poly, g: &GadgetCiphertext) -> Result<(Poly, Poly)> {
    let ring = gadget_input_ring(&g.ctx, c)?;
    let mut acc = [
        Poly::zero(&ring, Representation::Ntt),
        Poly::zero(&ring, Representation::Ntt),
    ];
    gadget_mul_acc(
        &g.ctx,
        c,
        g.decomposition,
        &[(g.b.as_slice(), 0), (g.a.as_slice(), 1)],
        &mut acc,
    )?;
    let [mut k0, mut k1] = acc;
    k0.to_coeff();
    k1.to_coeff();
    Ok((k0, k1))
}

/// The ring of the level of a gadget-product input `c` (a coefficient-form polynomial of some
/// level of `ctx`), or an error.
pub(crate) fn gadget_input_ring(
    ctx: &Context,
    c: &Poly,
) -> Result<std::sync::Arc<coterie_math::poly::RingContext>> {
    let limbs = c.context().limbs();
    if limbs == 0 || limbs > ctx.max_level() + 1 {
        return Err(Error::Mismatch(format!(
            "a polynomial of {limbs} limbs for a gadget product"
        )));
    }
    let level = limbs - 1;
    let ring = ctx.level(level)?.ring.clone();
    if c.context().moduli() != ring.moduli()
        || c.context().degree() != ring.degree()
        || c.representation() != Representation::Coefficient
    {
        return Err(Error::Mismatch(format!(
            "gadget product input is not a coefficient-form polynomial of level {level}"
        )));
    }
    Ok(ring)
}

/// The gadget inner products of one decomposition, accumulated: for each `(v, k)` in `rows`,
/// `accs[k] += ⟨h(c), v⟩` where `h` is the decomposition of `decomposition` (RNS: centered
/// residues; power of two: balanced digits) and `v` a vector of top-level NTT-form polynomials
/// (one per gadget row). `c` is a coefficient-form polynomial of some level `l` of `ctx`; the
/// accumulators are NTT-form polynomials of level `l`. Several targets may name the same
/// accumulator. The decomposition of `c` is computed once for all the vectors: this is the
/// kernel of [`gadget_product`] and of the multi-key relinearizations of [`crate::mk`].
pub(crate) fn gadget_mul_acc(
    ctx: &Context,
    c: &Poly,
    decomposition: Decomposition,
    rows: &[(&[Poly], usize)],
    accs: &mut [Poly],
) -> Result<()> {
    let ring = gadget_input_ring(ctx, c)?;
    let limbs = ring.limbs();
    let n = ctx.degree();
    for &(v, k) in rows {
        let acc = accs
            .get(k)
            .ok_or_else(|| Error::Mismatch(format!("gadget accumulator {k} does not exist")))?;
        if acc.context().moduli() != ring.moduli() || acc.representation() != Representation::Ntt {
            return Err(Error::Mismatch(
                "gadget accumulators must be NTT-form polynomials of the input's level".into(),
            ));
        }
        if v.iter()
            .any(|p| p.context().limbs() < limbs || p.context().degree() != n)
        {
            return Err(Error::Mismatch(
                "gadget vector polynomials of another ring".into(),
            ));
        }
    }
    match decomposition {
        Decomposition::Rns => {
            if let Some((v, _)) = rows.iter().find(|(v, _)| v.len() < limbs) {
                return Err(Error::Mismatch(format!(
                    "{limbs} digits for a gadget vector of {} rows",
                    v.len()
                )));
            }
            let mut digit = vec![0u64; n];
            for i in 0..limbs {
                for j in 0..limbs {
                    rns_digit_limb(c, i, j, true, &mut digit)?;
                    let plan = ring.plan(j);
                    plan.forward(&mut digit);
                    for &(v, k) in rows {
                        plan.mul_acc(accs[k].limb_mut(j), &digit, v[i].limb(j));
                    }
                }
            }
        }
        Decomposition::PowerOfTwo { base_log } => {
            let digits = PowerOfTwoRnsDecomposer::new(base_log)?.decompose(c)?;
            if let Some((v, _)) = rows.iter().find(|(v, _)| v.len() < digits.len()) {
                return Err(Error::Mismatch(format!(
                    "{} digits for a gadget vector of {} rows",
                    digits.len(),
                    v.len()
                )));
            }
            for (l, mut digit) in digits.into_iter().enumerate() {
                digit.to_ntt();
                for j in 0..limbs {
                    let plan = ring.plan(j);
                    for &(v, k) in rows {
                        plan.mul_acc(accs[k].limb_mut(j), digit.limb(j), v[l].limb(j));
                    }
                }
            }
        }
    }
    Ok(())
}

impl Ciphertext {
    /// The tensor product `⌊t/Q·(c ⊗ c')⌉` ([`scale_and_round`] ∘ [`tensor`]): 3 parts for two
    /// fresh single-key ciphertexts, decrypting under `(1, s, s²)`.
    ///
    /// ```
    /// use coterie_bfv::{Context, Params, Plaintext, SecretKey};
    /// use coterie_math::prg::Csprng;
    /// let ctx = Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap();
    /// let mut rng = Csprng::new();
    /// let sk = SecretKey::generate(&ctx, &mut rng);
    /// let rlk = sk.relin_key(&mut rng);
    /// let x = sk.encrypt_symmetric(&Plaintext::encode_simd(&ctx, &[3, 4]).unwrap(), &mut rng).unwrap();
    /// let y = sk.encrypt_symmetric(&Plaintext::encode_simd(&ctx, &[5, 6]).unwrap(), &mut rng).unwrap();
    /// let z3 = x.mul_no_relin(&y).unwrap();
    /// assert_eq!(z3.len(), 3);
    /// let z = z3.relinearize(&rlk).unwrap();
    /// assert_eq!(z.len(), 2);
    /// assert_eq!(&sk.decrypt(&z).unwrap().decode_simd().unwrap()[..2], &[15, 24]);
    /// ```
    pub fn mul_no_relin(&self, other: &Ciphertext) -> Result<Ciphertext> {
        scale_and_round(&tensor(self, other)?)
    }

    /// Key switching of a 2-part single-key ciphertext under `s'` to `s` with a key switching
    /// key from `s'` to `s`: `(c_0, 0) + c_1 ⊡ K`.
    ///
    /// ```
    /// use coterie_bfv::Decomposition;
    /// use coterie_bfv::{Context, Params, Plaintext, SecretKey};
    /// use coterie_math::prg::Csprng;
    /// let ctx = Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap();
    /// let mut rng = Csprng::new();
    /// let sk = SecretKey::generate(&ctx, &mut rng);
    /// let other = SecretKey::generate(&ctx, &mut rng);
    /// // A key switching key from `other` to `sk` (power-of-two gadget, B = 2^20).
    /// let mut s_from = coterie_math::poly::Poly::from_signed(&ctx.ring(ctx.max_level()).unwrap(), other.coefficients()).unwrap();
    /// s_from.to_ntt();
    /// let ksk = sk.gadget_encrypt(&s_from, Decomposition::PowerOfTwo { base_log: 20 }, &mut rng).unwrap();
    /// let pt = Plaintext::encode_simd(&ctx, &[7]).unwrap();
    /// let ct = other.encrypt_symmetric(&pt, &mut rng).unwrap();
    /// assert_eq!(sk.decrypt(&ct.key_switch(&ksk).unwrap()).unwrap(), pt);
    /// ```
    pub fn key_switch(&self, ksk: &KeySwitchKey) -> Result<Ciphertext> {
        self.ctx.check_same(&ksk.ctx)?;
        if self.keys != KeySet::Powers || self.parts.len() != 2 {
            return Err(Error::Unsupported(
                "key switching of other than a 2-part single-key ciphertext".into(),
            ));
        }
        let (k0, k1) = gadget_product(&self.parts[1], ksk)?;
        let mut c0 = self.parts[0].clone();
        c0.try_add_assign(&k0)?;
        Ok(Ciphertext {
            ctx: self.ctx.clone(),
            level: self.level,
            parts: vec![c0, k1],
            keys: KeySet::Powers,
        })
    }

    /// Relinearizes a 3-part single-key ciphertext to 2 parts (a 2-part one is returned
    /// unchanged): `(c_0, c_1) + c_2 ⊡ rlk`.
    pub fn relinearize(&self, rlk: &RelinKey) -> Result<Ciphertext> {
        self.ctx.check_same(&rlk.ksk.ctx)?;
        if self.keys != KeySet::Powers {
            return Err(Error::Unsupported(format!(
                "single-key relinearization of a ciphertext under {:?}",
                self.keys
            )));
        }
        match self.parts.len() {
            2 => Ok(self.clone()),
            3 => {
                let (k0, k1) = gadget_product(&self.parts[2], &rlk.ksk)?;
                let mut c0 = self.parts[0].clone();
                let mut c1 = self.parts[1].clone();
                c0.try_add_assign(&k0)?;
                c1.try_add_assign(&k1)?;
                Ok(Ciphertext {
                    ctx: self.ctx.clone(),
                    level: self.level,
                    parts: vec![c0, c1],
                    keys: KeySet::Powers,
                })
            }
            k => Err(Error::Unsupported(format!("relinearization of {k} parts"))),
        }
    }

    /// Multiplication followed by relinearization.
    pub fn mul(&self, other: &Ciphertext, rlk: &RelinKey) -> Result<Ciphertext> {
        self.mul_no_relin(other)?.relinearize(rlk)
    }

    /// Applies `X → X^g` with its Galois key: `(σ(c_0), 0) + σ(c_1) ⊡ K_g`.
    ///
    /// ```
    /// use coterie_bfv::{Context, Params, Plaintext, SecretKey};
    /// use coterie_math::prg::Csprng;
    /// let ctx = Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap();
    /// let mut rng = Csprng::new();
    /// let sk = SecretKey::generate(&ctx, &mut rng);
    /// let keys = sk.galois_keys(&[1, -1], true, &mut rng).unwrap();
    /// let vals: Vec<u64> = (0..256).collect();
    /// let ct = sk.encrypt_symmetric(&Plaintext::encode_simd(&ctx, &vals).unwrap(), &mut rng).unwrap();
    /// let left = sk.decrypt(&ct.rotate_rows(1, &keys).unwrap()).unwrap().decode_simd().unwrap();
    /// assert_eq!((left[0], left[127], left[128]), (1, 0, 129));
    /// let right = sk.decrypt(&ct.rotate_rows(-1, &keys).unwrap()).unwrap().decode_simd().unwrap();
    /// assert_eq!(right[0], 127);
    /// let swapped = sk.decrypt(&ct.swap_rows(&keys).unwrap()).unwrap().decode_simd().unwrap();
    /// assert_eq!(swapped[0], 128);
    /// // apply_galois with an explicit element: X → X^5 rotates by one too.
    /// let gk = sk.galois_key(5, &mut rng).unwrap();
    /// assert_eq!(sk.decrypt(&ct.apply_galois(&gk).unwrap()).unwrap().decode_simd().unwrap(), left);
    /// ```
    pub fn apply_galois(&self, key: &GaloisKey) -> Result<Ciphertext> {
        if self.parts.len() != 2 || self.keys != KeySet::Powers {
            return Err(Error::Unsupported(
                "Galois automorphism of other than a 2-part single-key ciphertext".into(),
            ));
        }
        self.ctx.check_same(&key.ksk.ctx)?;
        let mut c0 = self.parts[0].automorphism(key.g)?;
        let c1 = self.parts[1].automorphism(key.g)?;
        let (k0, k1) = gadget_product(&c1, &key.ksk)?;
        c0.try_add_assign(&k0)?;
        Ok(Ciphertext {
            ctx: self.ctx.clone(),
            level: self.level,
            parts: vec![c0, k1],
            keys: KeySet::Powers,
        })
    }

    /// Rotates both batching rows left by `k` (right for `k < 0`).
    pub fn rotate_rows(&self, k: i64, keys: &GaloisKeys) -> Result<Ciphertext> {
        let g = galois_element_for_rotation(self.ctx.degree(), k);
        self.apply_galois_element(g, keys, || format!("rotation by {k}"))
    }

    /// `X → X^g` with the key of `g` from `keys` (the identity for `g = 1`); `what` names the
    /// rotation in the missing-key error.
    pub(crate) fn apply_galois_element(
        &self,
        g: usize,
        keys: &GaloisKeys,
        what: impl FnOnce() -> String,
    ) -> Result<Ciphertext> {
        if g == 1 {
            return Ok(self.clone());
        }
        let key = keys
            .get(g)
            .ok_or_else(|| Error::MissingKey(format!("Galois key for {} (g = {g})", what())))?;
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
}
