//! Plaintexts and their encodings.
//!
//! A [`Plaintext`] is an element of `R_t = Z_t[X]/(X^N+1)`, stored as its `N` coefficients in
//! `[0, t)`. Two encodings of messages:
//! * **coefficient encoding** (any `t`, e.g. seed 001's `t = 2^8`): the message *is* the coefficient
//!   vector; products are negacyclic convolutions mod `t`.
//! * **SIMD batching** (`t` prime, `t ≡ 1 mod 2N`): `N` slots arranged as 2 rows of `N/2`; slot
//!   `(r, c)` (index `r·N/2 + c`) is the evaluation of the plaintext polynomial at `ζ^{±5^c}`.
//!   Products act slot-wise, the Galois element `5^k` rotates both rows left by `k` and `2N − 1`
//!   swaps the rows.

use crate::context::Context;
use crate::{Error, Result};

/// A plaintext polynomial of `R_t`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plaintext {
    pub(crate) ctx: Context,
    pub(crate) coeffs: Vec<u64>,
}

impl Plaintext {
    /// Coefficient encoding: `values` (at most `N`, each reduced mod `t`) are the coefficients of
    /// `X^0, X^1, …`; missing ones are zero.
    ///
    /// ```
    /// use coterie_bfv::{Context, Params, Plaintext};
    /// let ctx = Context::new(Params::toy_insecure(256, 256).unwrap()).unwrap();
    /// let pt = Plaintext::encode_coefficients(&ctx, &[1, 2, 300]).unwrap();
    /// assert_eq!(&pt.coefficients()[..3], &[1, 2, 44]);
    /// ```
    pub fn encode_coefficients(ctx: &Context, values: &[u64]) -> Result<Self> {
        let n = ctx.degree();
        if values.len() > n {
            return Err(Error::Malformed(format!(
                "{} values for N = {n} coefficients",
                values.len()
            )));
        }
        let t = ctx.plaintext_modulus();
        let mut coeffs = vec![0u64; n];
        for (c, &v) in coeffs.iter_mut().zip(values) {
            *c = v % t;
        }
        Ok(Plaintext {
            ctx: ctx.clone(),
            coeffs,
        })
    }

    /// Coefficient encoding of signed values (each reduced into `[0, t)`).
    pub fn encode_signed(ctx: &Context, values: &[i64]) -> Result<Self> {
        let t = ctx.plaintext_modulus() as i64;
        let v: Vec<u64> = values.iter().map(|&x| x.rem_euclid(t) as u64).collect();
        Self::encode_coefficients(ctx, &v)
    }

    /// SIMD encoding of up to `N` slot values (each reduced mod `t`; missing slots are zero).
    /// Needs batching parameters ([`crate::Params::supports_batching`]).
    ///
    /// ```
    /// use coterie_bfv::{Context, Params, Plaintext};
    /// let ctx = Context::new(Params::toy_insecure(256, 65537).unwrap()).unwrap();
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
        let t = ctx.plaintext_modulus();
        let mut slots = vec![0u64; n];
        for (&idx, &v) in b.index.iter().zip(values) {
            slots[idx as usize] = v % t;
        }
        b.plan.inverse(&mut slots);
        Ok(Plaintext {
            ctx: ctx.clone(),
            coeffs: slots,
        })
    }

    /// The `N` slot values of a batched plaintext.
    pub fn decode_simd(&self) -> Result<Vec<u64>> {
        let b = self.ctx.batch()?;
        let mut v = self.coeffs.clone();
        b.plan.forward(&mut v);
        Ok(b.index.iter().map(|&i| v[i as usize]).collect())
    }

    /// The `N` coefficients in `[0, t)`.
    pub fn coefficients(&self) -> &[u64] {
        &self.coeffs
    }

    /// The context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// Coefficients lifted to `(−t/2, t/2]`.
    pub(crate) fn centered(&self) -> Vec<i64> {
        let t = self.ctx.plaintext_modulus();
        self.coeffs
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

    /// `‖m‖_∞` of the centered lift.
    pub fn norm_inf(&self) -> u64 {
        self.centered()
            .iter()
            .map(|c| c.unsigned_abs())
            .max()
            .unwrap_or(0)
    }
}
