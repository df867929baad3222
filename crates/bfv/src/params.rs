//! BFV parameter sets as values.
//!
//! A [`Params`] fixes the ring degree `N`, the ciphertext modulus `Q = q_0 ⋯ q_{L-1}` (NTT-friendly
//! primes, at most 50 bits each so coterie-math's floating-point product kernel applies), the
//! plaintext modulus `t`, the error width σ and the secret distribution. The named constructors are
//! the parameter sets this crate vouches for; each documents its security estimate and its source.
//! [`Params::custom`] builds anything else and carries whatever security statement the caller
//! gives (it is never a default).

use crate::{Error, Result};
use coterie_math::primes::{ntt_primes, ntt_primes_excluding};
use serde::{Deserialize, Serialize};

/// Largest bit size of a ciphertext prime chosen by the named sets (the limit of coterie-math's
/// AVX2+FMA exact product kernel).
pub const MAX_PRIME_BITS: u32 = 50;

/// Bit size of the auxiliary primes used for multiplication and decryption.
pub const AUX_PRIME_BITS: u32 = 50;

/// Distribution of the secret key (and of the ephemeral `u` of public-key encryption).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SecretDistribution {
    /// Uniform over `{-1, 0, 1}` (the HE-standard ternary secret).
    Ternary,
    /// Discrete Gaussian of the error width σ (seed 001: "secret from the error distribution").
    Gaussian,
}

/// A BFV parameter set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Params {
    name: String,
    n: usize,
    moduli: Vec<u64>,
    t: u64,
    sigma: f64,
    secret: SecretDistribution,
    security: String,
}

/// Splits `total_bits` into the fewest primes of at most [`MAX_PRIME_BITS`] bits, as even as
/// possible, and returns the moduli (distinct NTT-friendly primes for degree `n`) with
/// `Σ bits = total_bits`, so `log2 Q ≤ total_bits`.
pub fn moduli_for_bits(n: usize, total_bits: u32) -> Result<Vec<u64>> {
    if total_bits < 20 {
        return Err(Error::InvalidParameter(format!(
            "log q = {total_bits} is too small"
        )));
    }
    let k = total_bits.div_ceil(MAX_PRIME_BITS);
    let base = total_bits / k;
    let extra = total_bits % k;
    let mut out = Vec::with_capacity(k as usize);
    // `extra` primes of base+1 bits, the rest of base bits.
    if extra > 0 {
        out.extend(ntt_primes(base + 1, n, extra as usize)?);
    }
    out.extend(ntt_primes_excluding(base, n, (k - extra) as usize, &out)?);
    Ok(out)
}

impl Params {
    /// A parameter set of the caller's choosing. `security` is the caller's statement of its
    /// security level and source (kept with the parameters, shown in reports).
    ///
    /// Checks: `N` a power of two in `[16, 2^17]`, moduli distinct primes `≡ 1 mod 2N` of at most
    /// 61 bits, `2 ≤ t < 2^40` with `t` coprime to `Q` and below half the smallest prime, σ in
    /// `[0.5, 64]`.
    pub fn custom(
        name: &str,
        n: usize,
        moduli: &[u64],
        t: u64,
        sigma: f64,
        secret: SecretDistribution,
        security: &str,
    ) -> Result<Self> {
        let p = Params {
            name: name.to_string(),
            n,
            moduli: moduli.to_vec(),
            t,
            sigma,
            secret,
            security: security.to_string(),
        };
        p.validate()?;
        Ok(p)
    }

    /// Re-checks every constraint (also used after deserialization).
    pub fn validate(&self) -> Result<()> {
        let n = self.n;
        if !n.is_power_of_two() || !(16..=1 << 17).contains(&n) {
            return Err(Error::InvalidParameter(format!(
                "degree {n} is not a power of two in [16, 2^17]"
            )));
        }
        if self.moduli.is_empty() || self.moduli.len() > 64 {
            return Err(Error::InvalidParameter(
                "between 1 and 64 ciphertext primes are supported".into(),
            ));
        }
        for (i, &q) in self.moduli.iter().enumerate() {
            if q >= 1 << 61 || !coterie_math::primes::is_prime(q) || q % (2 * n as u64) != 1 {
                return Err(Error::InvalidParameter(format!(
                    "modulus {q} is not a prime ≡ 1 mod 2N below 2^61"
                )));
            }
            if self.moduli[..i].contains(&q) {
                return Err(Error::InvalidParameter(format!("modulus {q} repeated")));
            }
        }
        let t = self.t;
        let qmin = self.moduli.iter().copied().min().unwrap_or(0);
        if !(2..1 << 40).contains(&t) || t >= qmin / 2 {
            return Err(Error::InvalidParameter(format!(
                "plaintext modulus {t} must be in [2, 2^40) and below half of every q_i"
            )));
        }
        if self.moduli.iter().any(|&q| q % t == 0) {
            return Err(Error::InvalidParameter(
                "plaintext modulus shares a factor with Q".into(),
            ));
        }
        if !(0.5..=64.0).contains(&self.sigma) {
            return Err(Error::InvalidParameter(format!(
                "σ = {} outside [0.5, 64]",
                self.sigma
            )));
        }
        Ok(())
    }

    fn he_std(log_n: u32, log_q: u32, t: u64) -> Result<Self> {
        let n = 1usize << log_n;
        Self::custom(
            &format!("he-std-128-n{n}"),
            n,
            &moduli_for_bits(n, log_q)?,
            t,
            3.2,
            SecretDistribution::Ternary,
            &format!(
                "128-bit classical: HomomorphicEncryption.org Security Standard (Albrecht et al., \
                 Nov. 2018), Table 1, ternary secret, σ = 3.2: N = {n} allows log q ≤ {log_q}; \
                 here log q ≤ {log_q}"
            ),
        )
    }

    /// N = 4096, log q = 109 (3 primes of 36–37 bits), ternary secret, σ = 3.2, plaintext modulus
    /// `t`. Security: 128-bit classical per the HomomorphicEncryption.org standard (2018), Table 1
    /// (N = 4096: log q ≤ 109).
    pub fn he_std_128_n4096(t: u64) -> Result<Self> {
        Self::he_std(12, 109, t)
    }

    /// N = 8192, log q = 218 (5 primes of 43–44 bits), ternary secret, σ = 3.2. Security: 128-bit
    /// classical per the HomomorphicEncryption.org standard (2018), Table 1 (N = 8192: log q ≤ 218).
    pub fn he_std_128_n8192(t: u64) -> Result<Self> {
        Self::he_std(13, 218, t)
    }

    /// N = 16384, log q = 438 (9 primes of 48–49 bits), ternary secret, σ = 3.2. Security: 128-bit
    /// classical per the HomomorphicEncryption.org standard (2018), Table 1 (N = 16384: log q ≤ 438).
    pub fn he_std_128_n16384(t: u64) -> Result<Self> {
        Self::he_std(14, 438, t)
    }

    /// N = 32768, log q = 881 (18 primes of 48–49 bits), ternary secret, σ = 3.2. Security: 128-bit
    /// classical per the HomomorphicEncryption.org standard (2018), Table 1 (N = 32768: log q ≤ 881).
    pub fn he_std_128_n32768(t: u64) -> Result<Self> {
        Self::he_std(15, 881, t)
    }

    /// Seed 001's set (MK-BFV-TRE, spec §6): N = 8192, log q = 220 (5 primes of 44 bits),
    /// t = 2^8 (coefficient encoding; no batching), σ = 3.2 for both error and secret (secret from
    /// the error distribution, as the paper's implementation does). Depth 5.
    ///
    /// Security: 128-bit classical per the HomomorphicEncryption.org standard (2018), Table 1, the
    /// row for secrets drawn from the error distribution (N = 8192: log q ≤ 220); this is the
    /// choice the paper states for its Table 2.
    pub fn seed001() -> Result<Self> {
        let n = 8192;
        Self::custom(
            "seed001-n8192",
            n,
            &moduli_for_bits(n, 220)?,
            256,
            3.2,
            SecretDistribution::Gaussian,
            "128-bit classical: HomomorphicEncryption.org Security Standard (2018), Table 1, \
             secret from the error distribution, σ = 3.2, N = 8192, log q ≤ 220 (seed 001 §6)",
        )
    }

    /// **Insecure toy parameters** for fast tests and examples only: N = `n` (e.g. 256 or 1024)
    /// with log q = 120 in 3 primes, ternary secret. No security at all at these degrees.
    pub fn toy_insecure(n: usize, t: u64) -> Result<Self> {
        Self::custom(
            &format!("toy-insecure-n{n}"),
            n,
            &moduli_for_bits(n, 120)?,
            t,
            3.2,
            SecretDistribution::Ternary,
            "INSECURE toy parameters (far below any security level), for tests only",
        )
    }

    /// Name of the set.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Ring degree `N`.
    pub fn degree(&self) -> usize {
        self.n
    }
    /// Ciphertext primes `q_0 … q_{L-1}`.
    pub fn moduli(&self) -> &[u64] {
        &self.moduli
    }
    /// Plaintext modulus `t`.
    pub fn plaintext_modulus(&self) -> u64 {
        self.t
    }
    /// Error width σ (standard deviation of the discrete Gaussian).
    pub fn sigma(&self) -> f64 {
        self.sigma
    }
    /// Secret distribution.
    pub fn secret_distribution(&self) -> SecretDistribution {
        self.secret
    }
    /// Security statement and its source.
    pub fn security(&self) -> &str {
        &self.security
    }
    /// Total bit size of `Q` (sum of the primes' bit sizes, an upper bound on log2 Q).
    pub fn log_q(&self) -> u32 {
        self.moduli.iter().map(|q| 64 - q.leading_zeros()).sum()
    }
    /// Whether SIMD batching is available (`t` prime and `t ≡ 1 mod 2N`).
    pub fn supports_batching(&self) -> bool {
        self.t % (2 * self.n as u64) == 1 && coterie_math::primes::is_prime(self.t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_sets_respect_the_standard() {
        for (p, bound) in [
            (Params::he_std_128_n4096(65537).unwrap(), 109),
            (Params::he_std_128_n8192(65537).unwrap(), 218),
            (Params::he_std_128_n16384(65537).unwrap(), 438),
            (Params::seed001().unwrap(), 220),
        ] {
            let bits = coterie_math::rns::RnsBasis::new(p.moduli()).unwrap().bits();
            assert!(bits <= bound && bits + 8 > bound, "{}: {bits}", p.name());
            assert!(p.moduli().iter().all(|&q| q < 1 << MAX_PRIME_BITS));
            assert!(!p.security().is_empty());
        }
        assert!(Params::he_std_128_n8192(65537).unwrap().supports_batching());
        assert!(!Params::seed001().unwrap().supports_batching());
    }

    #[test]
    fn rejects_bad_parameters() {
        let q = moduli_for_bits(1024, 120).unwrap();
        let s = SecretDistribution::Ternary;
        assert!(Params::custom("x", 1000, &q, 17, 3.2, s, "").is_err());
        assert!(Params::custom("x", 1024, &q, 1, 3.2, s, "").is_err());
        assert!(Params::custom("x", 1024, &q, 1 << 41, 3.2, s, "").is_err());
        assert!(Params::custom("x", 1024, &q, q[0], 3.2, s, "").is_err());
        assert!(Params::custom("x", 1024, &[q[0], q[0]], 17, 3.2, s, "").is_err());
        assert!(Params::custom("x", 1024, &[15], 17, 3.2, s, "").is_err());
        assert!(Params::custom("x", 1024, &q, 17, 0.1, s, "").is_err());
        assert!(Params::custom("x", 1024, &q, 17, 3.2, s, "").is_ok());
    }
}
