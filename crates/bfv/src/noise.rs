//! Noise measurement and worst-case noise bounds.
//!
//! **Invariant noise** (Costache–Smart; SEAL's "noise budget"): for a ciphertext at level `l`
//! decrypting to `m`, `t·[c_0 + c_1·s]_{Q} = Q·(m + v) (mod t·Q)` defines `v` with rational
//! coefficients; decryption is correct iff `‖v‖_∞ < 1/2`. [`invariant_noise_log2`] computes `‖v‖_∞`
//! exactly (big-integer CRT); the *noise budget* is `−log2(2‖v‖_∞)` bits.
//!
//! [`NoiseBounds`] gives worst-case (expansion factor `δ = N`) upper bounds on `‖v‖_∞` after each
//! operation, derived for this implementation:
//! * fresh, public key: `v = t·(e_0 + u·e + e_1·s)/Q − (Q mod t)·m/Q`, so
//!   `‖v‖ ≤ t·(B_e + N·B_u·B_e + N·B_e·B_s)/Q + t·(Q mod t)/Q`;
//! * fresh, symmetric: `‖v‖ ≤ t·B_e/Q + t·(Q mod t)/Q`;
//! * add: `v_1 + v_2`; plaintext product by `p`: `N·‖p‖·‖v‖`;
//! * product: with `T = (t/2)(1 + N·B_s)` (so that `‖m_i + t·a_i‖ ≤ T + 1/2` where `a_i` is the
//!   wrap of the phase), `‖v‖ ≤ N(T+½)(v_1+v_2) + N·v_1·v_2 + (t/Q)·(1 + N·B_s + N²B_s²)/2`, plus
//!   the relinearization term `(t/Q)·L·N·(q_max/2)·B_e` (RNS gadget; `(t/Q)·ℓ·N·(B/2)·B_e` for the
//!   power-of-two gadget of `ℓ` digits in base `B`, [`NoiseBounds::key_switch`]);
//! * rotation: `v + (t/Q)·L·N·(q_max/2)·B_e`;
//! * modulus switching to `Q'`: `v + (t/Q')·(1 + N·B_s)/2`.
//!
//! `B_e` is the sampler's hard tail bound ([`coterie_math::sample::DiscreteGaussian::max_abs`]),
//! `B_s` the actual `‖s‖_∞` and `B_u` the secret distribution's bound.

use crate::ciphertext::Ciphertext;
use crate::keys::{Decomposition, SecretKey};
use crate::params::SecretDistribution;
use crate::{Error, Result};
use coterie_math::bigint::BigInt;

/// `‖v‖_∞` of the invariant noise of `ct` under `sk` (see the [module documentation](self)), as
/// `log2` (−∞ for a noiseless ciphertext). Scalar plaintext moduli only (an error otherwise).
pub fn invariant_noise_log2(sk: &SecretKey, ct: &Ciphertext) -> Result<f64> {
    let t = sk.ctx.scalar_t()?;
    let x = sk.phase(ct)?;
    let m = sk.decrypt_exact_at_level(ct)?;
    let q = sk.ctx.modulus_at(ct.level())?;
    let tq = BigInt::from(&q * t);
    let half = BigInt::from(&tq >> 1u32);
    let mut max = BigInt::new();
    for (xc, &mc) in x.to_bigints()?.into_iter().zip(m.coefficients()?) {
        // w = t·x − Q·m mod tQ, centered.
        let mut w = BigInt::from(&xc * t) - BigInt::from(&q * mc);
        w %= &tq;
        if w < 0 {
            w += &tq;
        }
        if w > half {
            w -= &tq;
        }
        let a = w.abs();
        if a > max {
            max = a;
        }
    }
    if max == 0 {
        return Ok(f64::NEG_INFINITY);
    }
    Ok(log2_big(&max) - log2_big(&q))
}

/// The noise budget `−log2(2‖v‖_∞)` in bits (decryption is correct while it is positive).
pub fn noise_budget(sk: &SecretKey, ct: &Ciphertext) -> Result<f64> {
    Ok(-1.0 - invariant_noise_log2(sk, ct)?)
}

fn log2_big(x: &BigInt) -> f64 {
    let bits = x.significant_bits();
    if bits <= 1000 {
        x.to_f64().log2()
    } else {
        let shift = bits - 900;
        BigInt::from(x >> shift).to_f64().log2() + f64::from(shift)
    }
}

/// Worst-case invariant-noise bounds (log2 of `‖v‖_∞`) for one parameter set and secret key
/// norm; see the [module documentation](self) for the formulas.
#[derive(Clone, Debug)]
pub struct NoiseBounds {
    n: f64,
    t: f64,
    b_e: f64,
    b_s: f64,
    b_u: f64,
    /// log2 Q_l per level.
    log_q: Vec<f64>,
    /// log2 of the largest prime per level, and limb count.
    log_qmax: Vec<f64>,
    q_mod_t: Vec<f64>,
}

/// `log2(2^a + 2^b)`.
fn lse(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    if lo == f64::NEG_INFINITY {
        return hi;
    }
    hi + (1.0 + (lo - hi).exp2()).log2()
}

impl NoiseBounds {
    /// Bounds for the context of `sk`, with `B_s = ‖s‖_∞` of that key.
    pub fn new(sk: &SecretKey) -> Result<Self> {
        let ctx = &sk.ctx;
        let b_e = ctx.gaussian().max_abs() as f64;
        let b_u = match ctx.params().secret_distribution() {
            SecretDistribution::Ternary => 1.0,
            SecretDistribution::Gaussian => b_e,
        };
        let mut log_q = Vec::new();
        let mut log_qmax = Vec::new();
        let mut q_mod_t = Vec::new();
        let t = ctx.scalar_t()?;
        for l in 0..=ctx.max_level() {
            let q = ctx.modulus_at(l)?;
            log_q.push(log2_big(&q));
            let qmax = ctx.params().moduli()[..=l]
                .iter()
                .copied()
                .max()
                .unwrap_or(2);
            log_qmax.push((qmax as f64).log2());
            q_mod_t.push(BigInt::from(&q % t).to_f64());
        }
        Ok(NoiseBounds {
            n: ctx.degree() as f64,
            t: t as f64,
            b_e,
            b_s: sk.norm_inf().max(1) as f64,
            b_u,
            log_q,
            log_qmax,
            q_mod_t,
        })
    }

    fn lq(&self, level: usize) -> Result<f64> {
        self.log_q
            .get(level)
            .copied()
            .ok_or_else(|| Error::Mismatch(format!("no level {level}")))
    }

    /// Fresh public-key encryption at the top level.
    pub fn fresh_public(&self) -> f64 {
        let l = self.log_q.len() - 1;
        let e = self.b_e + self.n * self.b_u * self.b_e + self.n * self.b_e * self.b_s;
        (self.t * (e + self.q_mod_t[l])).log2() - self.log_q[l]
    }

    /// Fresh symmetric encryption at the top level.
    pub fn fresh_symmetric(&self) -> f64 {
        let l = self.log_q.len() - 1;
        (self.t * (self.b_e + self.q_mod_t[l])).log2() - self.log_q[l]
    }

    /// Sum of two ciphertexts.
    pub fn add(&self, v1: f64, v2: f64) -> f64 {
        lse(v1, v2)
    }

    /// Product by a plaintext of centered norm `p_norm`.
    pub fn mul_plain(&self, v: f64, p_norm: u64) -> f64 {
        v + (self.n * p_norm.max(1) as f64).log2()
    }

    fn key_switch_term(&self, level: usize) -> Result<f64> {
        self.key_switch(level, Decomposition::Rns)
    }

    /// The error a gadget product with a fresh key switching key adds at `level`:
    /// `(t/Q)·ℓ·N·(B/2)·B_e` with `ℓ` digits bounded by `B/2` (RNS: `ℓ = l + 1` digits below
    /// `q_max/2`; power of two: `ℓ = ⌈log Q_l / β⌉` digits below `2^{β−1}`).
    pub fn key_switch(&self, level: usize, decomposition: Decomposition) -> Result<f64> {
        let lq = self.lq(level)?;
        let (digits, log_half_b) = match decomposition {
            Decomposition::Rns => ((level + 1) as f64, self.log_qmax[level] - 1.0),
            Decomposition::PowerOfTwo { base_log } => {
                let bits = self.log_q[level].ceil();
                ((bits / base_log as f64).ceil(), base_log as f64 - 1.0)
            }
        };
        Ok(self.t.log2() + digits.log2() + self.n.log2() + log_half_b + self.b_e.log2() - lq)
    }

    /// Product with relinearization (RNS gadget) at `level` of ciphertexts with noise `v1`, `v2`.
    pub fn mul(&self, v1: f64, v2: f64, level: usize) -> Result<f64> {
        self.mul_with(v1, v2, level, Decomposition::Rns)
    }

    /// Product with relinearization by a key of the gadget `decomposition`.
    pub fn mul_with(
        &self,
        v1: f64,
        v2: f64,
        level: usize,
        decomposition: Decomposition,
    ) -> Result<f64> {
        let lq = self.lq(level)?;
        let big_t = self.t / 2.0 * (1.0 + self.n * self.b_s);
        let lin = (self.n * (big_t + 0.5)).log2() + lse(v1, v2);
        let quad = self.n.log2() + v1 + v2;
        let round = self.t.log2()
            + ((1.0 + self.n * self.b_s + self.n * self.n * self.b_s * self.b_s) / 2.0).log2()
            - lq;
        Ok(lse(
            lse(lin, quad),
            lse(round, self.key_switch(level, decomposition)?),
        ))
    }

    /// Rotation (any Galois automorphism) at `level`.
    pub fn rotate(&self, v: f64, level: usize) -> Result<f64> {
        Ok(lse(v, self.key_switch_term(level)?))
    }

    /// Modulus switch from `level` to `level − 1`.
    pub fn mod_switch(&self, v: f64, level: usize) -> Result<f64> {
        if level == 0 {
            return Err(Error::Unsupported("no level below 0".into()));
        }
        let lq = self.lq(level - 1)?;
        let term = self.t.log2() + ((1.0 + self.n * self.b_s) / 2.0).log2() - lq;
        Ok(lse(v, term))
    }
}
