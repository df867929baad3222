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
//! Multi-key (seed 001) noise: [`crate::mk::noise_log2`] measures a ciphertext,
//! [`phase_noise_log2`] any phase (e.g. a merged threshold decryption), and
//! [`crate::mk_noise`] estimates both.
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
    let x = sk.phase(ct)?;
    let m = sk.decrypt_exact_at_level(ct)?;
    invariant_noise_of_phase_log2(&sk.ctx, &x, &m, ct.level())
}

/// `log2 ‖v‖_∞` of the invariant noise of a phase `x` (coefficient form at `level`) that decrypts
/// to `m`: `w = [t·x − Q·m]_{tQ}` (centered), `‖v‖_∞ = ‖w‖_∞ / Q`. Scalar plaintext moduli only.
pub(crate) fn invariant_noise_of_phase_log2(
    ctx: &crate::Context,
    x: &coterie_math::poly::Poly,
    m: &crate::Plaintext,
    level: usize,
) -> Result<f64> {
    let t = ctx.scalar_t()?;
    let q = ctx.modulus_at(level)?;
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

/// `log2` of the absolute noise `‖[x]_Q − Δ·m‖_∞` of a phase `x` (coefficient form at `level`;
/// secret), `m` the plaintext it rounds to, up to the `(Q mod t)·m/t` term (below `t`) exactly
/// as [`crate::mk::noise_log2`] measures a ciphertext: for phases no ciphertext carries, such as
/// the merged `c_0 + Σ_i m_i` of seed 001's threshold decryption. Scalar plaintext moduli only.
///
/// # Errors
/// [`Error::Unsupported`] for a cyclotomic plaintext modulus; [`Error::Mismatch`] for a level
/// the context lacks or a phase of another ring.
pub fn phase_noise_log2(
    ctx: &crate::Context,
    x: &coterie_math::poly::Poly,
    level: usize,
) -> Result<f64> {
    let ring = ctx.ring(level)?;
    if x.context().moduli() != ring.moduli() {
        return Err(Error::Mismatch(format!(
            "a phase of another ring than level {level}'s"
        )));
    }
    let mut x = x.clone();
    if x.representation() == coterie_math::poly::Representation::Ntt {
        x.to_coeff();
    }
    let m = crate::encrypt::decode_phase(ctx, x.clone(), level)?;
    let v = invariant_noise_of_phase_log2(ctx, &x, &m, level)?;
    let q = log2_big(&ctx.modulus_at(level)?);
    let t = (ctx.scalar_t()? as f64).log2();
    // ‖v‖ = t·‖e‖/Q.
    Ok(v + q - t)
}

/// The noise budget `−log2(2‖v‖_∞)` in bits (decryption is correct while it is positive).
pub fn noise_budget(sk: &SecretKey, ct: &Ciphertext) -> Result<f64> {
    Ok(-1.0 - invariant_noise_log2(sk, ct)?)
}

pub(crate) fn log2_big(x: &BigInt) -> f64 {
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

/// The invariant noise of a ciphertext over a cyclotomic plaintext modulus `X^D − b` (seed 002
/// Def. 4): `((X^D − b)/Q)·(c_0 + c_1·s) = μ + v + (X^D − b)·I`. Here `v` is what decryption's
/// coefficient-wise rounding leaves, which is the representative of smallest canonical norm
/// whenever that norm is below 1/2 (Lemma 6: decryption is then correct).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CyclotomicNoise {
    /// `log2 ‖v‖_∞` (−∞ for a noiseless ciphertext).
    pub inf_log2: f64,
    /// `log2 ‖v‖_can`, the canonical-embedding norm the paper's lemmas bound (`None` above
    /// coterie-math's FFT degree limit of `2^16`, e.g. Params III at 512 bits).
    pub can_log2: Option<f64>,
}

/// Measures [`CyclotomicNoise`] of a two-part (or longer) single-key ciphertext: the phase is
/// reconstructed exactly (big integers), multiplied by `X^D − b`, reduced modulo `Q` to
/// `(−Q/2, Q/2]` and divided by `Q`; the canonical norm comes from a negacyclic FFT of `v`
/// scaled to 50-bit integers.
///
/// # Errors
/// [`Error::Unsupported`] for a scalar plaintext modulus (use [`invariant_noise_log2`]) or a
/// ciphertext that is not under the powers of one key.
pub fn cyclotomic_noise(sk: &SecretKey, ct: &Ciphertext) -> Result<CyclotomicNoise> {
    let ctx = &sk.ctx;
    let x = sk.phase(ct)?;
    let y = crate::encrypt::scaled_by_x_d_minus_b(ctx, &x)?;
    let q = ctx.modulus_at(ct.level())?;
    let half = BigInt::from(&q >> 1u32);
    let mut r: Vec<BigInt> = Vec::with_capacity(y.len());
    let mut max = BigInt::new();
    for mut v in y {
        v %= &q;
        if v < 0 {
            v += &q;
        }
        if v > half {
            v -= &q;
        }
        if v.clone().abs() > max {
            max = v.clone().abs();
        }
        r.push(v);
    }
    if max == 0 {
        return Ok(CyclotomicNoise {
            inf_log2: f64::NEG_INFINITY,
            can_log2: Some(f64::NEG_INFINITY),
        });
    }
    let inf_log2 = log2_big(&max) - log2_big(&q);
    let n = ctx.degree();
    let can_log2 = if n <= coterie_math::fft::MAX_RING_DEGREE {
        // a_i = round(r_i · 2^k) with max |a_i| ≈ 2^50, exact in the FFT's f64 arithmetic.
        let k = 50 - i64::from(max.significant_bits());
        let a: Vec<i64> = r
            .iter()
            .map(|v| {
                let s = if k >= 0 {
                    BigInt::from(v << k as u32)
                } else {
                    let sh = (-k) as u32;
                    (BigInt::from(v >> (sh - 1)) + 1u32) >> 1u32
                };
                s.to_i64().unwrap_or(0)
            })
            .collect();
        let plan = coterie_math::fft::FftPlan::new(n)?;
        let mut f = plan.zero_fourier();
        plan.forward_i64(&a, &mut f, &mut plan.new_scratch());
        Some(f.max_abs().log2() - k as f64 - log2_big(&q))
    } else {
        None
    };
    Ok(CyclotomicNoise { inf_log2, can_log2 })
}

/// The paper's canonical-norm noise bounds for generalized BFV (seed 002 §3.7 Lemmas 5, 8, 9,
/// §4.5 Lemma 10 and the §5.6 estimate), as `log2`, for one parameter set at the top level. `B`
/// is the largest ciphertext prime (the RNS gadget's digit bound, as the paper takes it) and
/// `L` the number of primes.
///
/// **Which σ.** The paper's σ is the Gaussian *width parameter* `s` (coefficient variance
/// `s²/(2π)`): its Lemma 10 note gives the key-switching variance as `(N+2)·L·(σBN)²/(24π)`, and
/// the key-switching term `σ·B·N·√(3L/(2π))` is then six standard deviations of one
/// canonical-embedding coordinate. [`Params::sigma`](crate::Params::sigma) is the standard
/// deviation (3.2, the reference code's), so these bounds use `s = σ·√(2π)`. With σ read as the
/// standard deviation instead, the printed terms are only 2.4 standard deviations, and
/// measured key-switch-dominated noise exceeds them by up to 0.9 bits (tests/noise_cyclotomic.rs).
#[derive(Clone, Debug)]
pub struct CyclotomicBounds {
    log_n: f64,
    log_b1: f64,
    log_q: f64,
    sigma: f64,
    log_gadget: f64,
    l: f64,
}

impl CyclotomicBounds {
    /// The bounds of `ctx`'s parameters (a cyclotomic plaintext modulus).
    ///
    /// # Errors
    /// [`Error::Unsupported`] for a scalar plaintext modulus.
    pub fn new(ctx: &crate::Context) -> Result<Self> {
        let b = ctx
            .plaintext_modulus()
            .base()
            .ok_or_else(|| Error::Unsupported("bounds for X^D − b need a cyclotomic set".into()))?;
        let qmax = ctx.params().moduli().iter().copied().max().unwrap_or(2);
        Ok(CyclotomicBounds {
            log_n: (ctx.degree() as f64).log2(),
            log_b1: log2_big(&BigInt::from(b + 1u32)),
            log_q: log2_big(&ctx.modulus_at(ctx.max_level())?),
            sigma: ctx.params().sigma() * (2.0 * std::f64::consts::PI).sqrt(),
            log_gadget: (qmax as f64).log2(),
            l: ctx.params().moduli().len() as f64,
        })
    }

    fn n(&self) -> f64 {
        self.log_n.exp2()
    }

    /// `log2 ((b+1)/q)`.
    fn scale(&self) -> f64 {
        self.log_b1 - self.log_q
    }

    /// Lemma 5, a fresh public-key encryption of `μ` with randomness `r`:
    /// `((b+1)/q)·(‖μ‖_∞·√(3N³) + ‖r‖_∞·((√(18/π)·σ + 2)·√(N³) + N))`.
    pub fn fresh(&self, mu_inf: f64, r_inf: f64) -> f64 {
        let n = self.n();
        let t = mu_inf * (3.0 * n.powi(3)).sqrt()
            + r_inf * (((18.0 / std::f64::consts::PI).sqrt() * self.sigma + 2.0) * n.powf(1.5) + n);
        self.scale() + t.log2()
    }

    /// The key-switching term `((b+1)/q)·σ·B·N·√(3L/(2π))` of Lemmas 8 and 9.
    fn key_switch(&self, extra: f64) -> f64 {
        self.scale()
            + self.sigma.log2()
            + self.log_gadget
            + self.log_n
            + (3.0 * extra * self.l / (2.0 * std::f64::consts::PI))
                .sqrt()
                .log2()
    }

    /// Lemma 8, a product with relinearization of inputs with `log2` noise `e1`, `e2`:
    /// `(b+1)·√(2N²+3N)·(e+e') + ((b+1)/q)·√(4N³/3+2N²+3N) + key switch + 3·e·e'`.
    pub fn mul(&self, e1: f64, e2: f64) -> f64 {
        let n = self.n();
        let lin = self.log_b1 + (2.0 * n * n + 3.0 * n).sqrt().log2() + lse(e1, e2);
        let round = self.scale()
            + (4.0 * n.powi(3) / 3.0 + 2.0 * n * n + 3.0 * n)
                .sqrt()
                .log2();
        let quad = 3f64.log2() + e1 + e2;
        lse(lse(lin, round), lse(self.key_switch(1.0), quad))
    }

    /// Lemma 9, a rotation: `e + ((b+1)/q)·σ·B·N·√(3L/(2π))`.
    pub fn rotate(&self, e: f64) -> f64 {
        lse(e, self.key_switch(1.0))
    }

    /// Lemma 10, MatMul of dimension `d` on inputs of `log2` noise at most `e_a`, `e_b`:
    /// `d(b+1)√(2N²+3N)(e_A+e_B) + 3d·e_A·e_B + ((b+1)/q)√(4N³/3+4N²+3N)
    /// + ((b+1)/q)·σ·B·N·√(3(N+2)L/(2π))`.
    pub fn matmul(&self, d: usize, e_a: f64, e_b: f64) -> f64 {
        let (n, ld) = (self.n(), (d as f64).log2());
        let lin = ld + self.log_b1 + (2.0 * n * n + 3.0 * n).sqrt().log2() + lse(e_a, e_b);
        let quad = ld + 3f64.log2() + e_a + e_b;
        let round = self.scale()
            + (4.0 * n.powi(3) / 3.0 + 4.0 * n * n + 3.0 * n)
                .sqrt()
                .log2();
        lse(lse(lin, quad), lse(round, self.key_switch(n + 2.0)))
    }

    /// The §5.6 estimate `B_Dec = (d(b+1)³/q)·8N⁴·√(3N)·B_z` of the noise of the triple
    /// protocol's last ciphertext (MatMul of PoPK-bounded inputs, then a product by the
    /// encrypted MAC key), for `log2 B_z`.
    pub fn b_dec(&self, d: usize, log_bz: f64) -> f64 {
        let n = self.n();
        (d as f64).log2() + 3.0 * self.log_b1 - self.log_q
            + (8.0 * n.powi(4) * (3.0 * n).sqrt()).log2()
            + log_bz
    }

    /// `log2` of the modulus §5.6 asks for: `q ≥ d(b+1)³·16N⁴·√(3N)·B_z·2^λ_DDec`.
    pub fn q_needed_log2(&self, d: usize, log_bz: f64, lambda_ddec: f64) -> f64 {
        self.b_dec(d, log_bz) + self.log_q + 1.0 + lambda_ddec
    }
}
