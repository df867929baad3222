//! Plaintexts and their encodings.
//!
//! A [`Plaintext`] is an element of the plaintext ring of its parameter set:
//!
//! * **scalar `t`**: `R_t = Z_t[X]/(X^N+1)`, stored as its `N` coefficients in `[0, t)`. Two
//!   encodings of messages:
//!   * **coefficient encoding** (any `t`, e.g. seed 001's `t = 2^8`): the message *is* the
//!     coefficient vector; products are negacyclic convolutions mod `t`.
//!   * **SIMD batching** (`t` prime, `t ≡ 1 mod 2N`): `N` slots arranged as 2 rows of `N/2`; slot
//!     `(r, c)` (index `r·N/2 + c`) is the evaluation of the plaintext polynomial at `ζ^{±5^c}`.
//!     Products act slot-wise, the Galois element `5^k` rotates both rows left by `k` and
//!     `2N − 1` swaps the rows.
//! * **cyclotomic `X^D − b`** (seed 002 §3): `R/(X^D − b) ≅ Z_p[X]/(X^D − b)`, `p = b^M + 1`,
//!   held in two forms: the degree-`< D` representative over `Z_p` ([`Plaintext::representative`],
//!   big integers) and a small-norm lift `[μ]_R ∈ R` ([`Plaintext::small_lift`],
//!   `‖·‖_∞ ≤ b/2`; `b` is even since `2N | b^M`), which is what encryption and plaintext products use. Pack/Unpack (the
//!   twisted slot NTT) build on the representative.

use crate::context::Context;
use crate::{Error, Result};
use coterie_math::bigint::{BigInt, reduce};
use coterie_math::poly::{Poly, RingContext};

/// The coefficients of a plaintext, per kind of plaintext modulus.
#[derive(Clone, Debug)]
pub(crate) enum PtData {
    /// `N` coefficients in `[0, t)`.
    Scalar(Vec<u64>),
    /// A small lift (`N` coefficients) and the degree-`< D` representative mod `p`.
    Cyclotomic { lift: Lift, rep: Vec<BigInt> },
}

/// A lift of a cyclotomic plaintext into `R` (`N` integer coefficients).
#[derive(Clone, Debug)]
pub(crate) enum Lift {
    /// Coefficients of absolute value below `2^63` (every set with `b < 2^64`).
    Words(Vec<i64>),
    /// Wider coefficients (`b ≥ 2^64`, e.g. Params III's `M = 1`, `b = p − 1`, where the lift is
    /// the centered representative in `(−p/2, p/2]`).
    Wide(Vec<BigInt>),
}

impl Lift {
    /// The lift as a polynomial of `ring` (coefficient form).
    fn to_poly(&self, ring: &std::sync::Arc<RingContext>) -> Result<Poly> {
        Ok(match self {
            Lift::Words(c) => Poly::from_signed(ring, c)?,
            Lift::Wide(c) => Poly::from_bigints(ring, c)?,
        })
    }

    fn to_bigints(&self) -> Vec<BigInt> {
        match self {
            Lift::Words(c) => c.iter().map(|&x| BigInt::from(x)).collect(),
            Lift::Wide(c) => c.clone(),
        }
    }
}

/// A plaintext polynomial.
#[derive(Clone, Debug)]
pub struct Plaintext {
    pub(crate) ctx: Context,
    pub(crate) data: PtData,
}

impl PartialEq for Plaintext {
    /// Equality of the plaintext ring elements (two lifts of the same cyclotomic plaintext are
    /// equal).
    fn eq(&self, other: &Self) -> bool {
        self.ctx == other.ctx
            && match (&self.data, &other.data) {
                (PtData::Scalar(a), PtData::Scalar(b)) => a == b,
                (PtData::Cyclotomic { rep: a, .. }, PtData::Cyclotomic { rep: b, .. }) => a == b,
                _ => false,
            }
    }
}
impl Eq for Plaintext {}

impl Plaintext {
    pub(crate) fn scalar(ctx: &Context, coeffs: Vec<u64>) -> Self {
        Plaintext {
            ctx: ctx.clone(),
            data: PtData::Scalar(coeffs),
        }
    }

    /// Coefficient encoding: `values` (at most `N`, each reduced mod `t`) are the coefficients of
    /// `X^0, X^1, …`; missing ones are zero. Needs a scalar plaintext modulus (for a cyclotomic
    /// one use [`Plaintext::from_representative`]).
    ///
    /// ```
    /// use coterie_bfv::{Context, Params, Plaintext};
    /// let ctx = Context::new(Params::insecure_toy(256, 256).unwrap()).unwrap();
    /// let pt = Plaintext::encode_coefficients(&ctx, &[1, 2, 300]).unwrap();
    /// assert_eq!(&pt.coefficients().unwrap()[..3], &[1, 2, 44]);
    /// ```
    pub fn encode_coefficients(ctx: &Context, values: &[u64]) -> Result<Self> {
        let n = ctx.degree();
        if values.len() > n {
            return Err(Error::Malformed(format!(
                "{} values for N = {n} coefficients",
                values.len()
            )));
        }
        let t = ctx.scalar_t()?;
        let mut coeffs = vec![0u64; n];
        for (c, &v) in coeffs.iter_mut().zip(values) {
            *c = v % t;
        }
        Ok(Self::scalar(ctx, coeffs))
    }

    /// Coefficient encoding of signed values (each reduced into `[0, t)`).
    pub fn encode_signed(ctx: &Context, values: &[i64]) -> Result<Self> {
        let t = ctx.scalar_t()? as i64;
        let v: Vec<u64> = values.iter().map(|&x| x.rem_euclid(t) as u64).collect();
        Self::encode_coefficients(ctx, &v)
    }

    /// SIMD encoding of up to `N` slot values (each reduced mod `t`; missing slots are zero).
    /// Needs batching parameters ([`crate::Params::supports_batching`]).
    ///
    /// ```
    /// use coterie_bfv::{Context, Params, Plaintext};
    /// let ctx = Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap();
    /// let pt = Plaintext::encode_simd(&ctx, &[5, 6, 7]).unwrap();
    /// assert_eq!(&pt.decode_simd().unwrap()[..4], &[5, 6, 7, 0]);
    /// ```
    pub fn encode_simd(ctx: &Context, values: &[u64]) -> Result<Self> {
        let b = ctx.batch()?;
        let n = ctx.degree();
        if values.len() > n {
            return Err(Error::Malformed(format!(
                "{} values for {n} slots",
                values.len()
            )));
        }
        let t = ctx.scalar_t()?;
        let mut slots = vec![0u64; n];
        for (&idx, &v) in b.index.iter().zip(values) {
            slots[idx as usize] = v % t;
        }
        b.plan.inverse(&mut slots);
        Ok(Self::scalar(ctx, slots))
    }

    /// The `N` slot values of a batched plaintext.
    pub fn decode_simd(&self) -> Result<Vec<u64>> {
        let b = self.ctx.batch()?;
        let mut v = self.coefficients()?.to_vec();
        b.plan.forward(&mut v);
        Ok(b.index.iter().map(|&i| v[i as usize]).collect())
    }

    /// A cyclotomic plaintext from its representative over `Z_p` (at most `D` coefficients,
    /// any sign, reduced mod `p`; missing ones are zero). The small lift is the spec's
    /// construction (seed 002 §3.2): balanced base-`b` digits of each coefficient, the carry on
    /// `b^M` folded back with `b^M ≡ −1` (digits in `(−b/2, b/2]`, the carry is 0 or 1, so
    /// `‖[μ]_R‖_∞ ≤ b/2` for the even `b` every valid parameter set has).
    ///
    /// ```
    /// use coterie_bfv::{Context, Params, Plaintext};
    /// use coterie_math::bigint::{BigInt, reduce};
    /// let ctx = Context::new(Params::insecure_toy_cyclotomic(1024, 65340, 8).unwrap()).unwrap();
    /// let big = BigInt::from(1u32) << 100u32;
    /// let pt = Plaintext::from_representative(&ctx, &[big.clone(), BigInt::from(-1)]).unwrap();
    /// assert_eq!(pt.representative()[0], big);
    /// assert!(pt.norm_inf() <= 65340 / 2);
    /// ```
    pub fn from_representative(ctx: &Context, values: &[BigInt]) -> Result<Self> {
        let cy = cyclo(ctx)?;
        if values.len() > cy.d {
            return Err(Error::Malformed(format!(
                "{} coefficients for a representative of degree < D = {}",
                values.len(),
                cy.d
            )));
        }
        let mut rep = vec![BigInt::new(); cy.d];
        for (r, v) in rep.iter_mut().zip(values) {
            *r = reduce(v, &cy.p)?;
        }
        let lift = small_lift_of(ctx, &rep)?;
        Ok(Plaintext {
            ctx: ctx.clone(),
            data: PtData::Cyclotomic { lift, rep },
        })
    }

    /// A cyclotomic plaintext from any lift in `R` (`N` coefficients, `|c| < 2^63`), e.g. a
    /// randomized packing; the representative is its fold mod `X^D − b`.
    pub fn from_lift(ctx: &Context, lift: Vec<i64>) -> Result<Self> {
        let _ = cyclo(ctx)?;
        if lift.len() != ctx.degree() || lift.contains(&i64::MIN) {
            return Err(Error::Malformed(
                "a lift needs N coefficients of absolute value below 2^63".into(),
            ));
        }
        let rep = fold(ctx, lift.iter().map(|&c| BigInt::from(c)))?;
        Ok(Plaintext {
            ctx: ctx.clone(),
            data: PtData::Cyclotomic {
                lift: Lift::Words(lift),
                rep,
            },
        })
    }

    /// A cyclotomic plaintext from a lift in `R` with coefficients of any size (`N` big
    /// integers), e.g. the sum of many randomized packings over a 64-bit base `b`; the
    /// representative is its fold mod `X^D − b`. Encryption of it is exactly linear in the lift.
    ///
    /// ```
    /// use coterie_bfv::{Context, Params, Plaintext};
    /// use coterie_math::bigint::BigInt;
    /// let ctx = Context::new(Params::insecure_toy_cyclotomic(1024, 65340, 8).unwrap()).unwrap();
    /// let mut lift = vec![BigInt::new(); 1024];
    /// lift[0] = BigInt::from(1u32) << 80u32;
    /// let pt = Plaintext::from_lift_wide(&ctx, lift.clone()).unwrap();
    /// assert_eq!(pt.small_lift_wide(), lift);
    /// ```
    pub fn from_lift_wide(ctx: &Context, lift: Vec<BigInt>) -> Result<Self> {
        let _ = cyclo(ctx)?;
        if lift.len() != ctx.degree() {
            return Err(Error::Malformed(format!(
                "a lift needs N = {} coefficients, got {}",
                ctx.degree(),
                lift.len()
            )));
        }
        let rep = fold(ctx, lift.iter().cloned())?;
        Ok(Plaintext {
            ctx: ctx.clone(),
            data: PtData::Cyclotomic {
                lift: Lift::Wide(lift),
                rep,
            },
        })
    }

    /// `Δ·m` modulo `Q_level` in coefficient form, with the lift this plaintext carries (the
    /// term encryption adds; linear in the lift): what a party adds to a partial decryption
    /// to re-share a plaintext (seed 002's Π_DDec).
    ///
    /// ```
    /// use coterie_bfv::{Context, EncRandomness, Params, Plaintext, SecretKey};
    /// use coterie_math::prg::Csprng;
    /// let ctx = Context::new(Params::insecure_toy(256, 256).unwrap()).unwrap();
    /// let pt = Plaintext::encode_coefficients(&ctx, &[5]).unwrap();
    /// let mut rng = Csprng::new();
    /// let pk = SecretKey::generate(&ctx, &mut rng).public_key(&mut rng);
    /// let zero = EncRandomness { u: vec![0; 256], e0: vec![0; 256], e1: vec![0; 256] };
    /// let ct = pk.encrypt_with(&pt, &zero).unwrap();
    /// assert_eq!(pt.delta_scaled(ctx.max_level()).unwrap(), ct.parts()[0]);
    /// ```
    pub fn delta_scaled(&self, level: usize) -> Result<Poly> {
        let lv = self.ctx.level(level)?;
        let mut out = Poly::zero(&lv.ring, coterie_math::poly::Representation::Coefficient);
        crate::ciphertext::add_delta_m(lv, &mut out, self, false)?;
        Ok(out)
    }

    /// The representative of the plaintext over its coefficient modulus: the `N` coefficients
    /// mod `t` (scalar), or the `D` coefficients mod `p` of degree `< D` (cyclotomic).
    pub fn representative(&self) -> Vec<BigInt> {
        match &self.data {
            PtData::Scalar(c) => c.iter().map(|&x| BigInt::from(x)).collect(),
            PtData::Cyclotomic { rep, .. } => rep.clone(),
        }
    }

    /// The small-norm lift used by encryption and plaintext products: the centered coefficients
    /// in `(−t/2, t/2]` (scalar), or `[μ]_R` (cyclotomic). An error when a coefficient does not
    /// fit an `i64` (a base `b ≥ 2^64`, as in Params III: use [`Plaintext::small_lift_wide`]).
    pub fn small_lift(&self) -> Result<Vec<i64>> {
        match &self.data {
            PtData::Cyclotomic {
                lift: Lift::Wide(_),
                ..
            } => Err(Error::Unsupported(
                "this plaintext's lift has coefficients of 64 bits or more (small_lift_wide)"
                    .into(),
            )),
            _ => Ok(self.centered()),
        }
    }

    /// The small-norm lift as big integers (any plaintext).
    pub fn small_lift_wide(&self) -> Vec<BigInt> {
        match &self.data {
            PtData::Cyclotomic { lift, .. } => lift.to_bigints(),
            PtData::Scalar(_) => self.centered().into_iter().map(BigInt::from).collect(),
        }
    }

    /// The small lift as a polynomial of `ring` (coefficient form): what encryption adds after
    /// scaling by `Δ` and what plaintext products multiply by.
    pub(crate) fn lift_poly(&self, ring: &std::sync::Arc<RingContext>) -> Result<Poly> {
        match &self.data {
            PtData::Cyclotomic { lift, .. } => lift.to_poly(ring),
            PtData::Scalar(_) => Ok(Poly::from_signed(ring, &self.centered())?),
        }
    }

    /// The `N` coefficients in `[0, t)` of a scalar plaintext (an error for a cyclotomic one).
    pub fn coefficients(&self) -> Result<&[u64]> {
        match &self.data {
            PtData::Scalar(c) => Ok(c),
            PtData::Cyclotomic { .. } => Err(Error::Unsupported(
                "a cyclotomic plaintext has no coefficients mod t (use representative())".into(),
            )),
        }
    }

    /// The context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// Coefficients lifted to `(−t/2, t/2]` (scalar), or the small lift (cyclotomic; a wide
    /// lift saturates at `±i64::MAX`: only [`Plaintext::norm_inf`] reads it).
    fn centered(&self) -> Vec<i64> {
        match &self.data {
            PtData::Scalar(coeffs) => {
                let t = self.ctx.plaintext_modulus().scalar().unwrap_or(u64::MAX);
                coeffs
                    .iter()
                    .map(|&c| {
                        if c > t / 2 {
                            c as i64 - t as i64
                        } else {
                            c as i64
                        }
                    })
                    .collect()
            }
            PtData::Cyclotomic {
                lift: Lift::Words(c),
                ..
            } => c.clone(),
            PtData::Cyclotomic {
                lift: Lift::Wide(c),
                ..
            } => c
                .iter()
                .map(|x| {
                    x.to_i64()
                        .unwrap_or(if x.is_negative() { -i64::MAX } else { i64::MAX })
                })
                .collect(),
        }
    }

    /// `‖m‖_∞` of the small lift (saturating at `2^63 − 1` for a wide lift).
    pub fn norm_inf(&self) -> u64 {
        self.centered()
            .iter()
            .map(|c| c.unsigned_abs())
            .max()
            .unwrap_or(0)
    }
}

fn cyclo(ctx: &Context) -> Result<&crate::context::CycloTables> {
    ctx.cyclo().ok_or_else(|| {
        Error::Unsupported("this needs a cyclotomic plaintext modulus X^D − b".into())
    })
}

/// Folds an element of `R` (its `N` integer coefficients) mod `X^D − b` to the degree-`< D`
/// representative mod `p`: `X^{j + kD} ≡ b^k X^j`.
pub(crate) fn fold(ctx: &Context, coeffs: impl Iterator<Item = BigInt>) -> Result<Vec<BigInt>> {
    let cy = cyclo(ctx)?;
    let mut rep = vec![BigInt::new(); cy.d];
    for (i, c) in coeffs.enumerate() {
        let (k, j) = (i / cy.d, i % cy.d);
        let bk = cy
            .b_pow
            .get(k)
            .ok_or_else(|| Error::Malformed("more than N coefficients to fold".into()))?;
        rep[j] += c * bk;
    }
    for r in &mut rep {
        *r = reduce(r, &cy.p)?;
    }
    Ok(rep)
}

/// The small lift of a representative (values in `[0, p)`), seed 002 §3.2: balanced base-`b`
/// digits in `(−b/2, b/2]` (`b` even), the carry on `b^M ≡ −1` folded into the constant digit.
/// Machine words when `b < 2^64`; big integers otherwise (Params III: `M = 1`, where this is the
/// centered representative).
fn small_lift_of(ctx: &Context, rep: &[BigInt]) -> Result<Lift> {
    let cy = cyclo(ctx)?;
    let b = ctx.plaintext_modulus().base().ok_or_else(|| {
        Error::Unsupported("a small lift mod X^D − b needs a cyclotomic modulus".into())
    })?;
    let Some(bw) = b.to_u64() else {
        return small_lift_wide_of(cy, b, rep).map(Lift::Wide);
    };
    let half = bw / 2;
    let mut lift = vec![0i64; ctx.degree()];
    for (j, f) in rep.iter().enumerate() {
        let mut v = f.clone();
        for k in 0..cy.m {
            let (q, r) = v.div_rem_euc(b.clone());
            let r = r.to_u64().unwrap_or(0);
            // balanced digit in (−b/2, b/2]
            let (digit, carry) = if r > half {
                (r as i128 - bw as i128, true)
            } else {
                (r as i128, false)
            };
            lift[j + k * cy.d] = digit as i64;
            v = if carry { q + 1u32 } else { q };
        }
        // v·b^M ≡ −v (mod p): fold the carry into the constant digit.
        let carry = v.to_i64().ok_or_else(|| {
            Error::Malformed("representative coefficient not reduced mod p".into())
        })?;
        lift[j] -= carry;
    }
    Ok(Lift::Words(lift))
}

/// [`small_lift_of`] with big-integer digits.
fn small_lift_wide_of(
    cy: &crate::context::CycloTables,
    b: &BigInt,
    rep: &[BigInt],
) -> Result<Vec<BigInt>> {
    let half = BigInt::from(b >> 1u32);
    let mut lift = vec![BigInt::new(); cy.d * cy.m];
    for (j, f) in rep.iter().enumerate() {
        let mut v = f.clone();
        for k in 0..cy.m {
            let (q, r) = v.div_rem_euc(b.clone());
            let carry = r > half;
            lift[j + k * cy.d] = if carry { r - b } else { r };
            v = if carry { q + 1u32 } else { q };
        }
        if v > 1u32 {
            return Err(Error::Malformed(
                "representative coefficient not reduced mod p".into(),
            ));
        }
        lift[j] -= v;
    }
    Ok(lift)
}
