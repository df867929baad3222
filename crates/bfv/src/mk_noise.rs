//! A variance-based (heuristic, central-limit) noise estimator for multi-key BFV and its
//! threshold decryption and re-encryption (seed 001 §3, §4, §9.5), in the style of CDKS19's
//! variance analysis, to be compared with the empirical meter [`crate::mk::noise_log2`].
//!
//! The estimator tracks ([`Noise`]) the **variance `V` of one coefficient of the absolute noise**
//! `e = [c_0 + Σ_i c_{id_i}·s_{id_i}]_Q − Δ·m`, the number `p` of nonzero user parts of the
//! ciphertext (an extended ciphertext carries zeros for users it does not yet depend on) and
//! the secret degree `D` of the noise (below). Every
//! coefficient of `e` is a sum of many independent terms, so it is taken as Gaussian and
//!
//! ```text
//!   log2 ‖e‖_∞ ≈ ½·log2 V + log2 τ,    τ = √(2·(ln n + κ·ln 2)),
//! ```
//!
//! the value the largest of `n` coefficients exceeds with probability about `2^-κ`
//! ([`MkNoiseEstimator::log2_inf`], `κ =` [`TAIL_KAPPA`] `= 20`: τ = 6.76 at `n = 8192`, 2.76
//! bits; the typical largest coefficient is near `√(2 ln 2n)·√V`, 0.6–0.8 bits lower,
//! [`MkNoiseEstimator::typical_log2_inf`]).
//!
//! Notation: `n` the ring degree, `t` the plaintext modulus, `Q` the ciphertext modulus,
//! `r_t = Q mod t`, σ the error width, `V_s` the variance of a secret coefficient (σ² for
//! seed 001's Gaussian secrets, 2/3 for ternary ones), `V_m = t²/3` the mean square of a
//! uniformly random plaintext coefficient in `[0, t)`. The formulas:
//!
//! * **fresh** (public key, §3.2): `e = e_0 + u·e_pk + e_1·s`, so `V = σ² + n·V_s·σ² + n·σ²·V_s`;
//! * **HomAdd**: `V_1 + V_2`, `p = |I_1 ∪ I_2|` (independent noises);
//! * **wrap** of a phase: `c_0 + Σ c_i s_i = Δm + e + Q·I` with `c_i` uniform, so
//!   `V_I = (1 + p·n·V_s)/12 + 1/3`;
//! * **tensor** (§3.6 step 2) of ciphertexts 1 and 2 over `d` users:
//!   `V = t²·n·(V_1·V_I2·γ_1 + V_2·V_I1·γ_2)·c + n·V_m·(V_1 + V_2) + (t/Q)²·n·V_1·V_2
//!        + r_t²·(n·V_m·(V_I1 + V_I2) + 2·(n·t/4)²)
//!        + (1 + 2·d·n·V_s + (d² + d)·n²·V_s²)/12`,
//!   the terms `t·(e_1·I_2 + e_2·I_1)` (dominant), `m_1 e_2 + m_2 e_1`, `e_1 e_2 t/Q`, the
//!   `Q mod t` terms (`r_t·(m_1 I_2 + m_2 I_1)` and `r_t·m_1 m_2 / t`, whose mean is up to
//!   `n·t/4` and is counted as a variance) and the rounding of `(t/Q)·c_i c'_j` times `s̄_i s̄_j`;
//!   `c = 2` when both operands are one ciphertext (a squaring: the two dominant terms add
//!   coherently), `c = 1` otherwise;
//! * **secret-power factor** `γ = (D + p)/p`: every wrap `I` is linear in the same `p` users'
//!   secrets, so after `D` products the dominant noise is a polynomial of degree `D` in the
//!   `s_j`, and a power `s_j^a` has coefficient variance `a!·n^(a−1)·V_s^a`, not the
//!   `n^(a−1)·V_s^a` of `a` independent secrets. Averaged over how `D` wraps spread over `p`
//!   users, the variance is inflated by `F(D) = C(D+p−1, p−1)·D!/p^D`, so one more wrap
//!   multiplies it by `F(D+1)/F(D) = (D + p)/p` (1, 1.5, 2, 2.5 for two users along a chain of
//!   squarings). Without it the estimate falls behind the measured noise by about half a bit
//!   per level from depth 3 on (tests/mk_noise.rs). The [`Noise::degree`] `D` is tracked as a
//!   variance-weighted average (fresh and relinearization noise: 0);
//! * **relinearization on the fly** (CDKS19 method 2, §3.6) with the gadget digits' summed
//!   variance `G = Σ_l E[g⁻¹(x)_l²]`: the error left is
//!   `Σ_i ⟨g⁻¹(X_i), e_i1⟩ + Σ_{i,j} (r_i·⟨g⁻¹(c_ij), e_j⟩ + s_j·⟨g⁻¹(c_ij), e_i2⟩)`, so
//!   `V += σ²·G·n·(P + p_1·p_2·n·2·V_s)` with `P = p_1` grouped, `p_1·p_2` ungrouped (the
//!   number of second decompositions), `p_1`, `p_2` the nonzero parts of the operands. For the
//!   power-of-two gadget of base `B = 2^β` and `ℓ = ⌈log Q / β⌉` balanced digits,
//!   `G = (ℓ − 1)·(B² + 2)/12 + (Q/B^(ℓ−1))²/12` (the top digit holds what is left); for the RNS
//!   gadget (centred residues) `G = Σ_i q_i²/12`;
//! * **PartDec / Merge** (§3.7): `V + d·V_smdg`; **ReEnc** (§4.3): `V + N·V_smdg`, with
//!   `V_smdg = 2^40` for [`Smudging::PaperSigma20`] and `2^(2w)/3` (`w = noise_log2 + λ`, uniform
//!   in `[−2^w, 2^w)`) for [`Smudging::Statistical`].
//!
//! Decryption fails once `‖e − r_t·m/t‖_∞ ≥ Δ/2`: [`MkNoiseEstimator::fails`] says it may
//! (`log2_inf(V) ≥ log2(Δ/2)`, the safe side), [`MkNoiseEstimator::typically_fails`] that it
//! typically does (the typical largest coefficient reaches `Δ/2`: where failures start).
//! Method 1 (shared relinearization keys) is not modelled.
//!
//! ```
//! use coterie_bfv::mk_noise::MkNoiseEstimator;
//! use coterie_bfv::{Context, Decomposition, Params};
//! let ctx = Context::new(Params::insecure_toy(1024, 256).unwrap()).unwrap();
//! let est = MkNoiseEstimator::new(&ctx).unwrap();
//! // Users 1 and 2 encrypt; their sum times a fresh ciphertext of user 1, then squared.
//! let fresh = est.fresh();
//! let sum = est.add(&fresh, &fresh, 2);
//! let dec = Decomposition::PowerOfTwo { base_log: 20 };
//! let prod = est.mul(&sum, &fresh, 2, false, dec, true).unwrap();
//! let square = est.mul(&prod, &prod, 2, true, dec, true).unwrap();
//! assert!(est.log2_inf(&prod) > est.log2_inf(&sum) + 10.0);
//! assert!(est.log2_inf(&square) > est.log2_inf(&prod) + 15.0);
//! assert!(!est.fails(&square));
//! ```

use crate::context::Context;
use crate::keys::Decomposition;
use crate::mk::{PAPER_SMUDGING_SIGMA, Smudging};
use crate::noise::log2_big;
use crate::params::SecretDistribution;
use crate::{Error, Result};
use coterie_math::bigint::BigInt;

/// The `κ` of the tail factor `τ = √(2·(ln n + κ·ln 2))`: the estimate of `‖e‖_∞` is exceeded
/// with probability about `2^-κ` (for Gaussian coefficients).
pub const TAIL_KAPPA: f64 = 20.0;

/// The estimated noise of one ciphertext (or merged phase): the variance of one coefficient of
/// its absolute noise, its number of nonzero user parts and the secret degree of its noise (see
/// the [module documentation](self)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Noise {
    /// The variance `V` of one noise coefficient.
    pub var: f64,
    /// The number `p` of nonzero user parts (`c_i ≠ 0`).
    pub parts: usize,
    /// The secret degree `D` of the noise: the variance-weighted number of phase wraps `I`
    /// (each linear in the users' secrets) multiplied into it (0 for fresh and
    /// relinearization noise).
    pub degree: f64,
}

/// Variance-based noise estimates for one parameter set (top level); see the
/// [module documentation](self) for the formulas. Variances are of one coefficient of the
/// absolute noise `e = phase − Δ·m`.
#[derive(Clone, Debug)]
pub struct MkNoiseEstimator {
    n: f64,
    t: f64,
    r_t: f64,
    log_q: f64,
    sigma2: f64,
    var_s: f64,
    /// The bit size of `Q` (the power-of-two gadget's `ℓ = ⌈q_bits/β⌉`).
    q_bits: u32,
    /// The ring's primes (for the RNS gadget).
    moduli: Vec<u64>,
}

impl MkNoiseEstimator {
    /// The estimator for `ctx`'s parameters at the top level.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for a cyclotomic plaintext modulus.
    pub fn new(ctx: &Context) -> Result<Self> {
        let t = ctx.scalar_t()?;
        let q = ctx.modulus_at(ctx.max_level())?;
        let r_t = BigInt::from(&q % t).to_f64();
        let sigma = ctx.params().sigma();
        let var_s = match ctx.params().secret_distribution() {
            SecretDistribution::Gaussian => sigma * sigma,
            SecretDistribution::Ternary => 2.0 / 3.0,
        };
        Ok(MkNoiseEstimator {
            n: ctx.degree() as f64,
            t: t as f64,
            r_t,
            log_q: log2_big(&q),
            sigma2: sigma * sigma,
            var_s,
            q_bits: q.significant_bits(),
            moduli: ctx.params().moduli().to_vec(),
        })
    }

    /// `log2 Q` of the top level.
    pub fn log_q(&self) -> f64 {
        self.log_q
    }

    /// `log2(Δ/2)`, the noise at which decryption fails (`Δ = ⌊Q/t⌋`).
    pub fn threshold_log2(&self) -> f64 {
        self.log_q - self.t.log2() - 1.0
    }

    /// The tail factor `τ = √(2·(ln n + κ·ln 2))` for [`TAIL_KAPPA`].
    pub fn tail(&self) -> f64 {
        (2.0 * (self.n.ln() + TAIL_KAPPA * std::f64::consts::LN_2)).sqrt()
    }

    /// The estimate `½·log2 V + log2 τ` of `log2 ‖e‖_∞` (exceeded with probability about
    /// `2^-κ`).
    pub fn log2_inf(&self, noise: &Noise) -> f64 {
        0.5 * noise.var.log2() + self.tail().log2()
    }

    /// The typical `log2 ‖e‖_∞`: `½·log2 V + log2 √(2 ln 2n)`.
    pub fn typical_log2_inf(&self, noise: &Noise) -> f64 {
        0.5 * noise.var.log2() + (2.0 * (2.0 * self.n).ln()).sqrt().log2()
    }

    /// Whether decryption may fail (probability above about `2^-κ`): `log2_inf ≥ log2(Δ/2)`.
    /// The safe side: failures start at or after the first noise for which this holds.
    pub fn fails(&self, noise: &Noise) -> bool {
        self.log2_inf(noise) >= self.threshold_log2()
    }

    /// Whether decryption typically fails (probability about one half or more):
    /// `typical_log2_inf ≥ log2(Δ/2)`. Where failures start in an experiment.
    pub fn typically_fails(&self, noise: &Noise) -> bool {
        self.typical_log2_inf(noise) >= self.threshold_log2()
    }

    /// Fresh public-key encryption of one user (seed 001 §3.2): `V = σ² + 2·n·V_s·σ²`.
    pub fn fresh(&self) -> Noise {
        Noise {
            var: self.sigma2 + 2.0 * self.n * self.var_s * self.sigma2,
            parts: 1,
            degree: 0.0,
        }
    }

    /// HomAdd of independent noises: `V_1 + V_2`, for a sum with `parts` nonzero user parts
    /// (the size of the union of the users).
    pub fn add(&self, a: &Noise, b: &Noise, parts: usize) -> Noise {
        let var = a.var + b.var;
        Noise {
            var,
            parts,
            degree: (a.var * a.degree + b.var * b.degree) / var,
        }
    }

    /// The variance of the wrap `I` of the phase of a ciphertext with `parts` nonzero uniform
    /// user parts: `(1 + parts·n·V_s)/12 + 1/3`.
    pub fn wrap(&self, parts: usize) -> f64 {
        (1.0 + parts as f64 * self.n * self.var_s) / 12.0 + 1.0 / 3.0
    }

    /// The tensor product (scaled and rounded) of ciphertexts of noises `a` and `b` over `d`
    /// users; `square` when both are one ciphertext. See the [module documentation](self).
    pub fn tensor(&self, a: &Noise, b: &Noise, d: usize, square: bool) -> Noise {
        let (n, t) = (self.n, self.t);
        let (ia, ib) = (self.wrap(a.parts), self.wrap(b.parts));
        let vm = t * t / 3.0;
        let coherent = if square { 2.0 } else { 1.0 };
        // The secret-power factor (D + p)/p of a noise of secret degree D times a wrap of p
        // users' secrets.
        let grow = |x: &Noise, p: usize| (x.degree + p as f64) / p as f64;
        let main_a = t * t * n * a.var * ib * grow(a, b.parts) * coherent;
        let main_b = t * t * n * b.var * ia * grow(b, a.parts) * coherent;
        let lin = n * vm * (a.var + b.var);
        let quad = (t / self.log_q.exp2()).powi(2) * n * a.var * b.var;
        let rt = self.r_t * self.r_t * (n * vm * (ia + ib) + 2.0 * (n * t / 4.0).powi(2));
        let dd = d as f64;
        let round =
            (1.0 + 2.0 * dd * n * self.var_s + (dd * dd + dd) * n * n * self.var_s.powi(2)) / 12.0;
        let var = main_a + main_b + lin + quad + rt + round;
        Noise {
            var,
            parts: d,
            degree: (main_a * (a.degree + 1.0) + main_b * (b.degree + 1.0)) / var,
        }
    }

    /// `G = Σ_l E[g⁻¹(x)_l²]` of a uniform `x` for the gadget `decomposition` at the top level.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a power-of-two base outside `[1, 62]`.
    pub fn digit_variance_sum(&self, decomposition: Decomposition) -> Result<f64> {
        match decomposition {
            Decomposition::Rns => Ok(self.moduli.iter().map(|&q| (q as f64).powi(2) / 12.0).sum()),
            Decomposition::PowerOfTwo { base_log } => {
                if !(1..=62).contains(&base_log) {
                    return Err(Error::InvalidParameter(format!("gadget base 2^{base_log}")));
                }
                let ell = self.q_bits.div_ceil(base_log) as f64;
                let b = f64::from(base_log).exp2();
                let top = (self.log_q - f64::from(base_log) * (ell - 1.0)).exp2();
                Ok((ell - 1.0) * (b * b + 2.0) / 12.0 + top * top / 12.0)
            }
        }
    }

    /// The variance relinearization on the fly adds (CDKS19 method 2) to a tensor of operands
    /// with `p1`, `p2` nonzero user parts: `σ²·G·n·(P + p_1·p_2·n·2·V_s)`, `P = p_1` when
    /// `grouped`, `p_1·p_2` otherwise.
    ///
    /// # Errors
    /// As [`MkNoiseEstimator::digit_variance_sum`].
    pub fn relin(
        &self,
        p1: usize,
        p2: usize,
        decomposition: Decomposition,
        grouped: bool,
    ) -> Result<f64> {
        let g = self.digit_variance_sum(decomposition)?;
        let pairs = (p1 * p2) as f64;
        let second = if grouped { p1 as f64 } else { pairs };
        Ok(self.sigma2 * g * self.n * (second + pairs * self.n * 2.0 * self.var_s))
    }

    /// HomMul with relinearization on the fly: [`tensor`](Self::tensor) plus
    /// [`relin`](Self::relin) (whose noise has secret degree 0). `d` is the number of users of
    /// the product.
    ///
    /// # Errors
    /// As [`MkNoiseEstimator::digit_variance_sum`].
    pub fn mul(
        &self,
        a: &Noise,
        b: &Noise,
        d: usize,
        square: bool,
        decomposition: Decomposition,
        grouped: bool,
    ) -> Result<Noise> {
        let x = self.tensor(a, b, d, square);
        let relin = self.relin(a.parts, b.parts, decomposition, grouped)?;
        let var = x.var + relin;
        Ok(Noise {
            var,
            parts: d,
            degree: x.degree * x.var / var,
        })
    }

    /// The variance of one smudging term: `(2^20)²` for [`Smudging::PaperSigma20`],
    /// `2^(2w)/3` (`w = noise_log2 + λ`) for [`Smudging::Statistical`].
    pub fn smudging_variance(&self, smudging: &Smudging) -> f64 {
        match *smudging {
            Smudging::PaperSigma20 => PAPER_SMUDGING_SIGMA * PAPER_SMUDGING_SIGMA,
            Smudging::Statistical { lambda, noise_log2 } => {
                (2.0 * f64::from(noise_log2 + lambda)).exp2() / 3.0
            }
        }
    }

    /// Threshold decryption (PartDec by `d` users, then Merge): `V + d·V_smdg`.
    pub fn part_dec(&self, noise: &Noise, d: usize, smudging: &Smudging) -> Noise {
        Noise {
            var: noise.var + d as f64 * self.smudging_variance(smudging),
            ..*noise
        }
    }

    /// Re-encryption through `proxies` proxies: `V + N·V_smdg`.
    pub fn reenc(&self, noise: &Noise, proxies: usize, smudging: &Smudging) -> Noise {
        Noise {
            var: noise.var + proxies as f64 * self.smudging_variance(smudging),
            ..*noise
        }
    }
}
