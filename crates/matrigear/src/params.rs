//! The protocol parameters of MatriGear (seed 002 §5–§6): the generalized-BFV set, the number of
//! parties, the matrix dimension of a batch, the security constants, and everything derived
//! from them — the PoPK widths and repetition counts (§6.1, §6.3), the norm bounds of the
//! verification (§5.3), the modulus the triple chain needs (§5.6) and the smudging bound of the
//! distributed decryption (§9.13).
//!
//! Named sets: [`ProtocolParams::matrigear`] (Table 2's Params I and II, every `log p`) and
//! [`ProtocolParams::insecure_toy_b`] (the spec's Toy-B, for tests only).

use coterie_bfv::params::{MatriGearSet, Params, PlaintextModulus, SecretDistribution};
use coterie_bfv::{Context, params::moduli_for_bits};
use coterie_math::bigint::BigInt;

use crate::{Error, Result};

/// The challenge set of a proof of plaintext knowledge (seed 002 §5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Flag {
    /// `⊥`: plaintexts are any vectors of `Z_p^D`; challenges are the `2N` monomials `X^j`.
    Any,
    /// `Diag`: plaintexts have all slots equal (polynomials in `X^D`); challenges are the `2M`
    /// monomials `X^{jD}`, which keep diagonality.
    Diag,
}

/// The statistical and computational security constants of the protocols (seed 002 §6.1:
/// `λ_Snd = λ_Sim = 128`, `λ_DDec = 80`, as in Chen et al., Asiacrypt 2020).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Security {
    /// Soundness of the proof of plaintext knowledge (bits).
    pub lambda_snd: u32,
    /// Simulatability (the smoothing parameter's `ε = 2^-λ_Sim`).
    pub lambda_sim: u32,
    /// Statistical distance of the distributed decryption's smudging (bits).
    pub lambda_ddec: u32,
}

impl Default for Security {
    fn default() -> Self {
        Security {
            lambda_snd: 128,
            lambda_sim: 128,
            lambda_ddec: 80,
        }
    }
}

/// The Gaussian widths and the repetition count of one flag (seed 002 §6.1; widths in the
/// `ρ_s(x) = exp(−π x²/s²)` convention).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Widths {
    /// Repetitions `V = ⌈(λ_Snd + 2)/log2 |challenge set|⌉`.
    pub v: usize,
    /// `s1`, the width of an honest plaintext's randomized packing.
    pub s1: f64,
    /// `s2`, the width of the commitments' packings (before the `√(U+1)` factor).
    pub s2: f64,
    /// `σ1`, the width of an honest encryption's randomness.
    pub sigma1: f64,
    /// `σ2`, the width of the commitments' randomness (before the `√(U+1)` factor).
    pub sigma2: f64,
}

/// MatriGear's protocol parameters: a generalized-BFV context with plaintext ring
/// `Z_p[X]/(X^D − b)`, `p = b^M + 1`, the number of parties `n`, the matrix dimension `d` of a
/// batch (`d | D`, `T = D/d` matrix triples per batch, `U = 2d` ciphertexts per proof) and the
/// security constants.
#[derive(Clone, Debug)]
pub struct ProtocolParams {
    ctx: Context,
    parties: usize,
    d: usize,
    security: Security,
    b: u64,
}

impl ProtocolParams {
    /// Table 2's Params I or II at `log p` (128 … 4096) for `parties` parties and `d × d`
    /// matrices: **Params I 118-bit, Params II 128-bit** security, as the paper states from the
    /// Albrecht–Player–Scott estimator for a uniform ternary secret (seed 002 §6.1). Refused
    /// when the chain of §5.6 does not fit `q` for this many parties (Table 2's `q` was sized
    /// for `n = 2`, `U = 2d = 256`; a few more parties fit in the bits the 61-bit primes leave).
    ///
    /// ```
    /// use coterie_bfv::params::MatriGearSet;
    /// use coterie_matrigear::params::{Flag, ProtocolParams};
    /// let pp = ProtocolParams::matrigear(MatriGearSet::I, 128, 2, 128).unwrap();
    /// assert_eq!(pp.widths(Flag::Any).v, 9);
    /// assert_eq!(pp.widths(Flag::Diag).v, 65);
    /// ```
    pub fn matrigear(set: MatriGearSet, log_p: u32, parties: usize, d: usize) -> Result<Self> {
        if set == MatriGearSet::III {
            return Err(Error::Invalid(
                "Params III is ordinary BFV (M = 1): MatriGear's protocols need M ≥ 2".into(),
            ));
        }
        let ctx = Context::new(Params::matrigear(set, log_p)?)?;
        Self::new(ctx, parties, d, Security::default())
    }

    /// **Insecure toy parameters**: the spec's Toy-B (seed 002 §8): `N = 32`, `M = 4`, `D = 8`,
    /// `b = 132`, `p = 132^4 + 1 = 303595777`, log q = 220 (five 44-bit primes where the spec
    /// has four of about 55 bits: coterie's prime size limit), ternary secret, σ = 3.2, the
    /// security constants of §6.1. Far below any security level: for tests and demos only.
    ///
    /// ```
    /// use coterie_matrigear::params::{Flag, ProtocolParams};
    /// let pp = ProtocolParams::insecure_toy_b(2, 4).unwrap();
    /// assert_eq!((pp.widths(Flag::Any).v, pp.widths(Flag::Diag).v), (22, 44));
    /// ```
    pub fn insecure_toy_b(parties: usize, d: usize) -> Result<Self> {
        let params = Params::custom_with(
            "insecure-toy-b",
            32,
            &moduli_for_bits(32, 220)?,
            PlaintextModulus::Cyclotomic {
                d: 8,
                b: BigInt::from(132u32),
                m: 4,
            },
            3.2,
            SecretDistribution::Ternary,
            "INSECURE toy parameters (seed 002 §8 Toy-B), for tests only",
        )?;
        Self::new(Context::new(params)?, parties, d, Security::default())
    }

    /// Protocol parameters over any generalized-BFV context (`M ≥ 2`, `b < 2^64`), checked:
    /// `2 ≤ parties`, `d | D`, and `q` large enough for the depth-2 chain of §5.6 with
    /// `U = 2d` ([`ProtocolParams::q_bits_needed`]).
    pub fn new(ctx: Context, parties: usize, d: usize, security: Security) -> Result<Self> {
        let (dslots, b, m) = match ctx.plaintext_modulus() {
            PlaintextModulus::Cyclotomic { d, b, m } => (*d, b.clone(), *m),
            PlaintextModulus::Scalar(_) => {
                return Err(Error::Invalid(
                    "MatriGear needs a plaintext ring Z_p[X]/(X^D - b)".into(),
                ));
            }
        };
        if m < 2 {
            return Err(Error::Invalid(
                "MatriGear's protocols need M = N/D ≥ 2 (randomized packing over X^D − b)".into(),
            ));
        }
        let b = b.to_u64().filter(|&b| b >= 3).ok_or_else(|| {
            Error::Invalid("MatriGear's protocols need a base 3 ≤ b < 2^64".into())
        })?;
        if parties < 2 {
            return Err(Error::Invalid(format!(
                "{parties} parties: the protocols need at least 2"
            )));
        }
        if d == 0 || !dslots.is_multiple_of(d) {
            return Err(Error::Invalid(format!(
                "matrix dimension d = {d} must divide the slot count D = {dslots}"
            )));
        }
        let pp = ProtocolParams {
            ctx,
            parties,
            d,
            security,
            b,
        };
        let need = pp.q_bits_needed(d, 2 * d, Flag::Any);
        let have = pp.log_q();
        if need > have {
            return Err(Error::Invalid(format!(
                "q has {have:.1} bits, the triple chain of {parties} parties with d = {d} needs \
                 {need:.1} (seed 002 §5.6)"
            )));
        }
        Ok(pp)
    }

    /// The generalized-BFV context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }
    /// Number of parties `n`.
    pub fn parties(&self) -> usize {
        self.parties
    }
    /// Matrix dimension `d` of a batch.
    pub fn d(&self) -> usize {
        self.d
    }
    /// Matrix triples per batch, `T = D/d`.
    pub fn batch(&self) -> usize {
        self.slots() / self.d
    }
    /// Ring degree `N`.
    pub fn degree(&self) -> usize {
        self.ctx.degree()
    }
    /// Slot count `D`.
    pub fn slots(&self) -> usize {
        self.degree() / self.m()
    }
    /// `M = N/D`.
    pub fn m(&self) -> usize {
        match self.ctx.plaintext_modulus() {
            PlaintextModulus::Cyclotomic { m, .. } => *m,
            PlaintextModulus::Scalar(_) => 1,
        }
    }
    /// The base `b`.
    pub fn b(&self) -> u64 {
        self.b
    }
    /// The prime `p = b^M + 1`.
    pub fn p(&self) -> BigInt {
        self.ctx.plaintext_modulus().modulus()
    }
    /// The security constants.
    pub fn security(&self) -> Security {
        self.security
    }
    /// `log2 q` of the ciphertext modulus.
    pub fn log_q(&self) -> f64 {
        self.ctx
            .params()
            .moduli()
            .iter()
            .map(|&q| (q as f64).log2())
            .sum()
    }

    /// `B_η = sqrt(ln(2N(1 + 2^λ_Sim))/π)`, Lemma 1's bound on the smoothing parameter of `Z^N`.
    pub fn b_eta(&self) -> f64 {
        let n = self.degree() as f64;
        let lam = self.security.lambda_sim as f64;
        // ln(2N(1 + 2^λ)) = ln(2N) + λ ln 2 + ln(1 + 2^-λ).
        (((2.0 * n).ln() + lam * std::f64::consts::LN_2 + (-lam).exp2().ln_1p())
            / std::f64::consts::PI)
            .sqrt()
    }

    /// Size of the challenge set: `2N` for [`Flag::Any`], `2M` for [`Flag::Diag`].
    pub fn challenge_set_size(&self, flag: Flag) -> usize {
        match flag {
            Flag::Any => 2 * self.degree(),
            Flag::Diag => 2 * self.m(),
        }
    }

    /// The widths and repetitions of §6.1 for `flag`.
    pub fn widths(&self, flag: Flag) -> Widths {
        let log_c = (self.challenge_set_size(flag) as f64).log2();
        let v = ((self.security.lambda_snd as f64 + 2.0) / log_c).ceil() as usize;
        let be = self.b_eta();
        let bf = self.b as f64;
        let ratio = (bf + 1.0) / (bf - 1.0);
        let vf = v as f64;
        Widths {
            v,
            s1: std::f64::consts::SQRT_2 * ratio * be,
            s2: (2.0 * vf).sqrt() * ratio * be,
            sigma1: 2.0 * std::f64::consts::SQRT_2 * be,
            sigma2: 2.0 * (2.0 * vf).sqrt() * be,
        }
    }

    /// One party's norm bound on its response plaintext for a proof of `u` ciphertexts:
    /// `6(b+1)(U·s1 + sqrt(U+1)·s2)`, which an honest party meets with probability
    /// `1 − 2^-128` (the tails behind Theorem 2's correctness).
    pub fn party_bound_z(&self, u: usize, flag: Flag) -> f64 {
        let w = self.widths(flag);
        6.0 * (self.b as f64 + 1.0) * (u as f64 * w.s1 + ((u + 1) as f64).sqrt() * w.s2)
    }

    /// One party's norm bound on its response randomness: `6(U·σ1 + sqrt(U+1)·σ2)`.
    pub fn party_bound_t(&self, u: usize, flag: Flag) -> f64 {
        let w = self.widths(flag);
        6.0 * (u as f64 * w.sigma1 + ((u + 1) as f64).sqrt() * w.sigma2)
    }

    /// The verification's bound `B_z = n·` [`ProtocolParams::party_bound_z`] (§5.3).
    pub fn bound_z(&self, u: usize, flag: Flag) -> f64 {
        self.parties as f64 * self.party_bound_z(u, flag)
    }

    /// The verification's bound `B_t = n·` [`ProtocolParams::party_bound_t`] (§5.3).
    pub fn bound_t(&self, u: usize, flag: Flag) -> f64 {
        self.parties as f64 * self.party_bound_t(u, flag)
    }

    /// `log2` of §5.6's requirement on `q` for a chain whose MatMul sums `d_factor` products
    /// (`d` for matrix triples, 1 for scalar triples) of plaintexts proven with `u`
    /// ciphertexts: `d·(b+1)^3·16·N^4·sqrt(3N)·(2N·B_z)/(2N)·2^λ_DDec`.
    pub fn q_bits_needed(&self, d_factor: usize, u: usize, flag: Flag) -> f64 {
        let n = self.degree() as f64;
        let b1 = self.b as f64 + 1.0;
        (d_factor as f64).log2()
            + 3.0 * b1.log2()
            + 4.0
            + 4.0 * n.log2()
            + (3.0 * n).sqrt().log2()
            + self.bound_z(u, flag).log2()
            + self.security.lambda_ddec as f64
    }

    /// The largest number `k ≤ 256` of ciphertext pairs one scalar-triple proof may hold
    /// (`U = 2k`): the chain of §5.6 without MatMul (no factor `d`) must fit `q` (at least
    /// `d`, for which the parameters were checked).
    pub fn max_scalar_pairs(&self) -> usize {
        let mut k = self.d.min(256);
        while k < 256 && self.q_bits_needed(1, 2 * (k + 1), Flag::Any) <= self.log_q() {
            k += 1;
        }
        k
    }

    /// `log2 B_Dec`, the invariant-noise bound of the last ciphertext of the chain (§5.6 step
    /// 3): `d·(b+1)^3·8N^4·sqrt(3N)·B_z/q`.
    pub fn log2_b_dec(&self, d_factor: usize, u: usize, flag: Flag) -> f64 {
        self.q_bits_needed(d_factor, u, flag)
            - 1.0
            - self.security.lambda_ddec as f64
            - self.log_q()
    }

    /// The bound `E` of one party's smudging noise in Π_DDec, uniform in `[−E, E]` per
    /// coefficient (§9.13's consistent reading of `U(R_{B_Dec·2^λ_DDec})`):
    /// `E = ⌊B_Dec·2^λ_DDec·q/(n(b+1)N)⌋`, so that the smudging of all parties adds at most
    /// `B_Dec·2^λ_DDec < 1/2` of invariant noise.
    pub fn smudging_bound(&self, d_factor: usize, u: usize, flag: Flag) -> BigInt {
        let log2_e =
            self.log2_b_dec(d_factor, u, flag) + self.security.lambda_ddec as f64 + self.log_q()
                - (self.parties as f64).log2()
                - (self.b as f64 + 1.0).log2()
                - (self.degree() as f64).log2();
        pow2_floor(log2_e)
    }
}

/// `⌊2^x⌋` as a big integer (53 significant bits of precision), 0 for negative `x`.
pub(crate) fn pow2_floor(x: f64) -> BigInt {
    if x < 0.0 {
        return BigInt::new();
    }
    let int = x.floor();
    let frac = (x - int).exp2(); // in [1, 2)
    let mant = (frac * (1u64 << 52) as f64) as u64;
    let shift = int as i64 - 52;
    let m = BigInt::from(mant);
    if shift >= 0 {
        m << (shift as u32)
    } else {
        m >> ((-shift) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// §6.3's derived constants for Params I and II (B_η, s1, σ1, V, s2, σ2 and the Diag V by
    /// log p), and Table 2's log q reproduced by §5.6 with n = 2, U = 2d = 256.
    #[test]
    fn derived_constants_match_section_6_3() {
        let i = ProtocolParams::matrigear(MatriGearSet::I, 128, 2, 128).unwrap();
        assert!((i.b_eta() - 5.6170).abs() < 1e-4);
        let w = i.widths(Flag::Any);
        assert_eq!(w.v, 9);
        for (got, want) in [
            (w.s1, 7.9437),
            (w.sigma1, 15.8873),
            (w.s2, 23.8310),
            (w.sigma2, 47.6620),
        ] {
            assert!((got - want).abs() < 1e-3, "{got} vs {want}");
        }
        assert!((i.bound_z(256, Flag::Any).log2() - 78.8).abs() < 0.05);
        assert!((i.bound_t(256, Flag::Any).log2() - 15.8).abs() < 0.05);
        assert!((i.q_bits_needed(128, 256, Flag::Any) - 425.6).abs() < 0.1);
        let ii = ProtocolParams::matrigear(MatriGearSet::II, 128, 2, 128).unwrap();
        assert!((ii.b_eta() - 5.5973).abs() < 1e-4);
        let w = ii.widths(Flag::Any);
        assert_eq!(w.v, 10);
        for (got, want) in [
            (w.s1, 7.9161),
            (w.sigma1, 15.8317),
            (w.s2, 25.0328),
            (w.sigma2, 50.0642),
        ] {
            assert!((got - want).abs() < 1e-3, "{got} vs {want}");
        }
        assert!((ii.bound_z(256, Flag::Any).log2() - 30.8).abs() < 0.05);
        assert!((ii.q_bits_needed(128, 256, Flag::Any) - 229.1).abs() < 0.1);
        // Diag repetitions by log p.
        for (set, vs) in [
            (MatriGearSet::I, [65, 44, 33, 26, 22, 19]),
            (MatriGearSet::II, [33, 26, 22, 19, 17, 15]),
        ] {
            for (k, want) in vs.into_iter().enumerate() {
                let log_p = 128u32 << k;
                let d = if set == MatriGearSet::II && log_p >= 2048 {
                    32
                } else {
                    128
                };
                let pp = ProtocolParams::matrigear(set, log_p, 2, d).unwrap();
                assert_eq!(pp.widths(Flag::Diag).v, want, "{set:?}/{log_p}");
            }
        }
    }

    /// Toy-B: V = 22 (⊥) and 44 (Diag) as spec §8 case 13 states; bad inputs refused.
    #[test]
    fn toy_b_and_refusals() {
        let t = ProtocolParams::insecure_toy_b(2, 4).unwrap();
        assert_eq!((t.degree(), t.slots(), t.m(), t.b()), (32, 8, 4, 132));
        assert_eq!(t.p(), BigInt::from(303595777u64));
        assert_eq!((t.widths(Flag::Any).v, t.widths(Flag::Diag).v), (22, 44));
        assert!(ProtocolParams::insecure_toy_b(1, 4).is_err());
        assert!(ProtocolParams::insecure_toy_b(2, 3).is_err());
        assert!(ProtocolParams::matrigear(MatriGearSet::III, 128, 2, 128).is_err());
        // Far too many parties for Params I's q.
        assert!(ProtocolParams::matrigear(MatriGearSet::I, 128, 1 << 12, 128).is_err());
        assert!(t.max_scalar_pairs() >= 4);
        let i = ProtocolParams::matrigear(MatriGearSet::I, 128, 2, 2).unwrap();
        assert!(i.max_scalar_pairs() >= 128, "{}", i.max_scalar_pairs());
        let e = t.smudging_bound(4, 8, Flag::Any);
        assert!(e > BigInt::from(1u32) << 100u32);
        assert!(t.log2_b_dec(4, 8, Flag::Any) + 80.0 < -1.0);
    }

    #[test]
    fn pow2_floor_is_exact_on_integers() {
        assert_eq!(pow2_floor(10.0), BigInt::from(1024u32));
        assert_eq!(pow2_floor(100.0), BigInt::from(1u32) << 100u32);
        assert_eq!(pow2_floor(-1.0), BigInt::new());
        assert_eq!(pow2_floor(1.5), BigInt::from(2u32)); // 2^1.5 = 2.83
    }
}
