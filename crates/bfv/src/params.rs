//! BFV parameter sets as values.
//!
//! A [`Params`] fixes the ring degree `N`, the ciphertext modulus `Q = q_0 ⋯ q_{L-1}` (NTT-friendly
//! primes, at most 50 bits each so coterie-math's floating-point product kernel applies), the
//! plaintext modulus (a [`PlaintextModulus`]: a scalar `t`, or MatriGear's cyclotomic
//! `X^D − b`), the error width σ and the secret distribution. The named constructors are
//! the parameter sets this crate vouches for; each documents its security estimate and its source.
//! [`Params::custom`] builds anything else and carries whatever security statement the caller
//! gives (it is never a default).

use crate::{Error, Result};
use coterie_math::bigint::BigInt;
use coterie_math::primes::{ntt_primes, ntt_primes_excluding};
use serde::{Deserialize, Serialize};

/// The plaintext modulus of a BFV parameter set.
///
/// * `Scalar(t)`: the plaintext ring is `R_t = Z_t[X]/(X^N+1)` (ordinary BFV), `Δ = ⌊Q/t⌋`.
/// * `Cyclotomic { d, b, m }`: MatriGear's generalized BFV (seed 002 §3): the plaintext ring is
///   `R/(X^D − b) ≅ Z_p[X]/(X^D − b)` with `p = b^M + 1` prime and `N = M·D`;
///   `Δ = round(−(q/p)·Σ_k b^{M−1−k} X^{kD})` and noise grows with `b`, not `p`. `M = 1` is
///   ordinary BFV with `t = p` (through the same code).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PlaintextModulus {
    /// A scalar `t`, `2 ≤ t < 2^40`.
    Scalar(u64),
    /// The cyclotomic plaintext ring `R/(X^D − b)`, `p = b^M + 1`.
    Cyclotomic {
        /// Number of slots `D` (a power of two).
        d: usize,
        /// The base `b` (`p = b^M + 1`): below `2^64` for `M ≥ 2` in every named set, as wide
        /// as `p` for `M = 1` (Params III, `b = p − 1`).
        #[serde(with = "coterie_math::bigint::serde_bigint")]
        b: BigInt,
        /// `M = N/D` (a power of two).
        m: usize,
    },
}

impl PlaintextModulus {
    /// `t` for a scalar modulus, `None` for a cyclotomic one.
    pub fn scalar(&self) -> Option<u64> {
        match self {
            PlaintextModulus::Scalar(t) => Some(*t),
            PlaintextModulus::Cyclotomic { .. } => None,
        }
    }

    /// The prime (or integer) modulus of the plaintext coefficients: `t`, or `p = b^M + 1`.
    pub fn modulus(&self) -> BigInt {
        match self {
            PlaintextModulus::Scalar(t) => BigInt::from(*t),
            PlaintextModulus::Cyclotomic { b, m, .. } => cyclotomic_p(b, *m),
        }
    }

    /// The base `b` of a cyclotomic modulus, `None` for a scalar one.
    pub fn base(&self) -> Option<&BigInt> {
        match self {
            PlaintextModulus::Scalar(_) => None,
            PlaintextModulus::Cyclotomic { b, .. } => Some(b),
        }
    }

    /// The factor by which a product scales the noise, `t` or `b + 1`, as `log2`.
    pub fn expansion_log2(&self) -> f64 {
        match self {
            PlaintextModulus::Scalar(t) => (*t as f64).log2(),
            PlaintextModulus::Cyclotomic { b, .. } => big_log2(&BigInt::from(b + 1u32)),
        }
    }

    /// Bit size of the numerator of the tensor's scale-and-round (`t`, or `b + 1` for the
    /// exact multiplication by `X^D − b`).
    pub(crate) fn expansion_bits(&self) -> u32 {
        match self {
            PlaintextModulus::Scalar(t) => 64 - t.leading_zeros(),
            PlaintextModulus::Cyclotomic { b, .. } => BigInt::from(b + 1u32).significant_bits(),
        }
    }

    /// Checks this modulus against the ring degree `n` and the ciphertext primes.
    pub fn validate(&self, n: usize, moduli: &[u64]) -> Result<()> {
        match *self {
            PlaintextModulus::Scalar(t) => {
                let qmin = moduli.iter().copied().min().unwrap_or(0);
                if !(2..1 << 40).contains(&t) || t >= qmin / 2 {
                    return Err(Error::InvalidParameter(format!(
                        "plaintext modulus {t} must be in [2, 2^40) and below half of every q_i"
                    )));
                }
                if moduli.iter().any(|&q| q % t == 0) {
                    return Err(Error::InvalidParameter(
                        "plaintext modulus shares a factor with Q".into(),
                    ));
                }
                Ok(())
            }
            PlaintextModulus::Cyclotomic { d, ref b, m } => {
                if !d.is_power_of_two() || d < 2 {
                    return Err(Error::InvalidParameter(format!(
                        "cyclotomic plaintext: D = {d} is not a power of two ≥ 2"
                    )));
                }
                if !m.is_power_of_two() {
                    return Err(Error::InvalidParameter(format!(
                        "cyclotomic plaintext: M = {m} is not a power of two"
                    )));
                }
                if d.checked_mul(m) != Some(n) {
                    return Err(Error::InvalidParameter(format!(
                        "cyclotomic plaintext: N = {n} ≠ M·D = {m}·{d}"
                    )));
                }
                if *b < 2 {
                    return Err(Error::InvalidParameter(format!(
                        "cyclotomic plaintext: b = {b} is below 2"
                    )));
                }
                if m > 4096 / 2 || b.significant_bits() as usize * m > 8192 {
                    return Err(Error::InvalidParameter(format!(
                        "cyclotomic plaintext: p = b^M + 1 = {b}^{m} + 1 exceeds 8192 bits"
                    )));
                }
                let p = cyclotomic_p(b, m);
                let pm1 = BigInt::from(&p - 1u32);
                if !pm1.is_divisible_u(2 * n as u32) {
                    return Err(Error::InvalidParameter(format!(
                        "cyclotomic plaintext: 2N = {} does not divide p − 1 = {b}^{m}",
                        2 * n
                    )));
                }
                if !coterie_math::bigint::is_probable_prime(&p) {
                    return Err(Error::InvalidParameter(format!(
                        "cyclotomic plaintext: p = {b}^{m} + 1 is not prime"
                    )));
                }
                let q_bits: u32 = moduli.iter().map(|q| 64 - q.leading_zeros()).sum();
                if self.expansion_bits() + n.trailing_zeros() + 2 >= q_bits {
                    return Err(Error::InvalidParameter(format!(
                        "cyclotomic plaintext: b = {b} is too large for log q = {q_bits}"
                    )));
                }
                Ok(())
            }
        }
    }
}

/// `b^m + 1`.
pub(crate) fn cyclotomic_p(b: &BigInt, m: usize) -> BigInt {
    let mut p = BigInt::from(1u32);
    for _ in 0..m {
        p *= b;
    }
    p + 1u32
}

/// `log2 x` for a positive big integer (from its top 64 bits).
fn big_log2(x: &BigInt) -> f64 {
    let bits = x.significant_bits();
    let shift = bits.saturating_sub(64);
    let top = BigInt::from(x >> shift).to_u64().unwrap_or(u64::MAX);
    (top as f64).log2() + f64::from(shift)
}

/// The sizes of `p` in MatriGear's Table 2 (seed 002 §6.2).
pub const MATRIGEAR_LOG_P: [u32; 6] = [128, 256, 512, 1024, 2048, 4096];
/// Params I: `b = 2^64 − offset`, by row of [`MATRIGEAR_LOG_P`].
const MATRIGEAR_I_B_OFFSET: [u64; 6] = [3072, 64, 428, 8, 22, 56];
/// Params II: `b = 2^16 − offset`.
const MATRIGEAR_II_B_OFFSET: [u64; 6] = [196, 22, 72, 28, 190, 288];
/// The reference code's ciphertext moduli (seed 002 §6.4): 61-bit primes `≡ 1 mod 2^15`.
const MATRIGEAR_MODULI: [u64; 7] = [
    0x1fff_ffff_ffe1_0001,
    0x1fff_ffff_ffe0_0001,
    0x1fff_ffff_ffdd_0001,
    0x1fff_ffff_ffd0_8001,
    0x1fff_ffff_ffcf_8001,
    0x1fff_ffff_ffc8_0001,
    0x1fff_ffff_ffb4_0001,
];

/// Params II's ciphertext moduli: log q = 230 (seed 002 Table 2) in four NTT primes for
/// `N = 2^13` of 58, 58, 57 and 57 bits.
fn matrigear_ii_moduli() -> Result<Vec<u64>> {
    let n = 1 << 13;
    let mut q = ntt_primes(58, n, 2)?;
    let more = ntt_primes_excluding(57, n, 2, &q)?;
    q.extend(more);
    Ok(q)
}

/// MatriGear's parameter sets (seed 002 §6.1): I tuned for speed (`b ≈ 2^64`), II for setup
/// cost (`b ≈ 2^16`), III ordinary BFV (`M = 1`) for comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatriGearSet {
    /// `N = 2^14`, log q = 426 (7 primes), 118-bit.
    I,
    /// `N = 2^13`, log q = 230 (4 primes), 128-bit.
    II,
    /// `N = D = 2^15 … 2^17`, `M = 1`, `b = p − 1`: ordinary BFV with `t = p`, 128-bit (the
    /// 2^18 row is refused: see [`Params::matrigear`]).
    III,
}

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
    plaintext: PlaintextModulus,
    sigma: f64,
    secret: SecretDistribution,
    security: String,
    /// A generator `G` of `Z_p^*` fixing the slot order of a cyclotomic set (`ξ =
    /// G^((p−1)/(2N))`), as little-endian bytes; `None`: the root search of
    /// `SlotEncoder::new`.
    #[serde(default)]
    slot_generator: Option<Vec<u8>>,
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
    /// A parameter set of the caller's choosing with a scalar plaintext modulus `t`. `security`
    /// is the caller's statement of its security level and source (kept with the parameters,
    /// shown in reports).
    ///
    /// Checks: `N` a power of two in `[16, 2^17]`, moduli distinct primes `≡ 1 mod 2N` of at most
    /// 61 bits, `2 ≤ t < 2^40` with `t` coprime to `Q` and below half the smallest prime, σ in
    /// `[0.5, 64]`.
    ///
    /// ```
    /// use coterie_bfv::params::{Params, SecretDistribution, moduli_for_bits};
    /// let q = moduli_for_bits(1024, 120).unwrap();
    /// let p = Params::custom("mine", 1024, &q, 257, 3.2, SecretDistribution::Ternary, "none").unwrap();
    /// assert_eq!(p.plaintext_modulus().scalar(), Some(257));
    /// ```
    pub fn custom(
        name: &str,
        n: usize,
        moduli: &[u64],
        t: u64,
        sigma: f64,
        secret: SecretDistribution,
        security: &str,
    ) -> Result<Self> {
        Self::custom_with(
            name,
            n,
            moduli,
            PlaintextModulus::Scalar(t),
            sigma,
            secret,
            security,
        )
    }

    /// A parameter set of the caller's choosing with any [`PlaintextModulus`] (see
    /// [`Params::custom`] for the other checks). A cyclotomic modulus is checked for: `D`, `M`
    /// powers of two with `N = M·D`, `p = b^M + 1` prime, `2N | p − 1`, and `b` small enough
    /// for `Q`; the error names the condition that failed.
    ///
    /// ```
    /// use coterie_bfv::params::{Params, PlaintextModulus, SecretDistribution, moduli_for_bits};
    /// use coterie_math::bigint::BigInt;
    /// let q = moduli_for_bits(32, 120).unwrap();
    /// let pm = PlaintextModulus::Cyclotomic { d: 8, b: BigInt::from(132), m: 4 };
    /// let s = SecretDistribution::Ternary;
    /// assert!(Params::custom_with("toy-b", 32, &q, pm, 3.2, s, "insecure").is_ok());
    /// let bad = PlaintextModulus::Cyclotomic { d: 8, b: BigInt::from(128), m: 4 }; // 2^28 + 1 = 17·15790321
    /// let err = Params::custom_with("x", 32, &q, bad, 3.2, s, "").unwrap_err();
    /// assert!(err.to_string().contains("not prime"));
    /// ```
    pub fn custom_with(
        name: &str,
        n: usize,
        moduli: &[u64],
        plaintext: PlaintextModulus,
        sigma: f64,
        secret: SecretDistribution,
        security: &str,
    ) -> Result<Self> {
        let p = Params {
            name: name.to_string(),
            n,
            moduli: moduli.to_vec(),
            plaintext,
            sigma,
            secret,
            security: security.to_string(),
            slot_generator: None,
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
        self.plaintext.validate(n, &self.moduli)?;
        if let Some(bytes) = &self.slot_generator {
            let p = self.plaintext.modulus();
            let g = coterie_math::bigint::from_le_bytes_bounded(
                bytes,
                8 + p.significant_bits() as usize / 8,
            )?;
            let PlaintextModulus::Cyclotomic { d, ref b, m } = self.plaintext else {
                return Err(Error::InvalidParameter(
                    "a slot generator on a scalar plaintext modulus".into(),
                ));
            };
            if g >= p {
                return Err(Error::InvalidParameter(
                    "slot generator not reduced mod p".into(),
                ));
            }
            coterie_math::zp_ntt::SlotEncoder::with_generator(b, m, d, &g)?;
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

    /// MatriGear's parameter sets (seed 002 §6.2, Table 2) for `log_p` in
    /// [`MATRIGEAR_LOG_P`]: generalized BFV with `p = b^M + 1`, ternary secret, σ = 3.2 (the
    /// reference code's Gaussian standard deviation, seed 002 §9.1), and the moduli below.
    ///
    /// * Params I: `N = 2^14`, `b ≈ 2^64`, `D = 2^13 … 2^8`, the reference code's seven moduli
    ///   (§6.4, log q = 426).
    /// * Params II: `N = 2^13`, `b ≈ 2^16`, `D = 2^10 … 2^5`, log q = 230 as Table 2 states, in
    ///   four NTT primes of 58, 58, 57 and 57 bits. The reference code takes the first four of
    ///   the 61-bit primes instead (§6.4), which gives log q = 244: above the 230 bits for which
    ///   the paper estimates 128-bit security, so this crate follows the paper.
    /// * Params III: ordinary BFV through the same code (`M = 1`, `N = D`, `b = p − 1` with the
    ///   reference code's `p`, so `X^D − b ≡ X^N + 1`): `N = 2^15, 2^16, 2^17` for
    ///   `log p = 128, 256, 512` with 12, 20, 37 primes of 61 bits `≡ 1 mod 2N` (the count that
    ///   covers Table 2's log q = 686, 1202, 2231, as the reference code does).
    ///
    /// Security, as the paper states it (Albrecht–Player–Scott lattice estimator, uniform ternary
    /// secret; not re-estimated here): Params I **118-bit**, Params II and III **128-bit**.
    /// For III the HomomorphicEncryption.org standard agrees at `N = 2^15` (732 ≤ 881 bits).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a `log_p` outside the table (Params III has no rows at
    /// 2048 and 4096 bits). [`Error::Unsupported`] for Params III at 1024 bits: `N = 2^18` is
    /// above coterie-math's NTT limit of `2^17`, and with 71 primes and no special modulus its
    /// relinearization key alone would hold `71·2·71·2^18` words (21 GiB), more than this
    /// project's machines have (the paper's had 378 GB).
    ///
    /// ```
    /// use coterie_bfv::params::{MatriGearSet, Params};
    /// let p = Params::matrigear(MatriGearSet::II, 1024).unwrap();
    /// assert_eq!((p.degree(), p.moduli().len()), (1 << 13, 4));
    /// assert_eq!(p.plaintext_modulus().modulus().significant_bits(), 1024);
    /// assert!(p.security().starts_with("128-bit"));
    /// assert!(Params::matrigear(MatriGearSet::I, 100).is_err());
    /// let iii = Params::matrigear(MatriGearSet::III, 128).unwrap();
    /// assert_eq!((iii.degree(), iii.moduli().len()), (1 << 15, 12));
    /// ```
    pub fn matrigear(set: MatriGearSet, log_p: u32) -> Result<Self> {
        let row = MATRIGEAR_LOG_P
            .iter()
            .position(|&l| l == log_p)
            .ok_or_else(|| {
                Error::InvalidParameter(format!(
                    "MatriGear's Table 2 has log p in {MATRIGEAR_LOG_P:?}, not {log_p}"
                ))
            })?;
        let (n, moduli, b, security) = match set {
            MatriGearSet::I => (
                1usize << 14,
                MATRIGEAR_MODULI.to_vec(),
                BigInt::from(u64::MAX - (MATRIGEAR_I_B_OFFSET[row] - 1)),
                "118-bit: MatriGear (Cha et al.) §6.1/Table 2, Params I, Albrecht–Player–Scott \
                 lattice estimator with a uniform ternary secret (the paper's figure, not \
                 re-estimated here)",
            ),
            MatriGearSet::II => (
                1 << 13,
                matrigear_ii_moduli()?,
                BigInt::from((1u64 << 16) - MATRIGEAR_II_B_OFFSET[row]),
                "128-bit: MatriGear (Cha et al.) §6.1/Table 2, Params II, Albrecht–Player–Scott \
                 lattice estimator with a uniform ternary secret (the paper's figure, not \
                 re-estimated here)",
            ),
            MatriGearSet::III => {
                let (log_n, primes, offset) = match log_p {
                    128 => (15, 12, 8_257_536u64),
                    256 => (16, 20, 8_519_680),
                    512 => (17, 37, 18_874_368),
                    1024 => {
                        return Err(Error::Unsupported(
                            "MatriGear Params III at log p = 1024 needs N = 2^18 (coterie-math's \
                             NTT stops at 2^17) and a 21 GiB relinearization key (71 primes, no \
                             special modulus)"
                                .into(),
                        ));
                    }
                    _ => {
                        return Err(Error::InvalidParameter(format!(
                            "MatriGear's Table 2 has no Params III row at log p = {log_p}"
                        )));
                    }
                };
                let n = 1usize << log_n;
                (
                    n,
                    ntt_primes(61, n, primes)?,
                    (BigInt::from(1u32) << log_p) - offset,
                    "128-bit: MatriGear (Cha et al.) §6.1/Table 2, Params III, \
                     Albrecht–Player–Scott lattice estimator with a uniform ternary secret (the \
                     paper's figure, not re-estimated here)",
                )
            }
        };
        // D = N / 2^(row + 1) for Params I (2^13 at 128 bits), N / 2^(row + 3) for Params II,
        // N for Params III.
        let d = match set {
            MatriGearSet::I => n >> (row + 1),
            MatriGearSet::II => n >> (row + 3),
            MatriGearSet::III => n,
        };
        let params = Self::custom_with(
            &format!("matrigear-{set:?}-logp{log_p}"),
            n,
            &moduli,
            PlaintextModulus::Cyclotomic { d, b, m: n / d },
            3.2,
            SecretDistribution::Ternary,
            security,
        )?;
        // The reference code's slot order (§6.4) where it lists a generator (I and II).
        match set {
            MatriGearSet::III => Ok(params),
            _ => params.with_slot_generator(&Self::matrigear_generator(set, log_p)?),
        }
    }

    /// The same set with its slots ordered by the generator `g` of `Z_p^*`: `ξ = g^((p−1)/(2N))`
    /// and slot `i` is the evaluation at `ξ^(5^(i·M/2))` (seed 002 §3.2, §6.4), so the slots agree
    /// with an implementation that uses the same generator. Without one, the order is that of
    /// `coterie_math::zp_ntt::SlotEncoder::new`'s deterministic root search.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for a scalar plaintext modulus; [`Error::InvalidParameter`] unless
    /// `g^((p−1)/(2M)) = b`.
    pub fn with_slot_generator(mut self, g: &BigInt) -> Result<Self> {
        let PlaintextModulus::Cyclotomic { d, ref b, m } = self.plaintext else {
            return Err(Error::Unsupported(
                "a slot generator needs a cyclotomic plaintext modulus".into(),
            ));
        };
        coterie_math::zp_ntt::SlotEncoder::with_generator(b, m, d, g)?;
        let p = self.plaintext.modulus();
        let g = coterie_math::bigint::reduce(g, &p)?;
        self.slot_generator = Some(coterie_math::bigint::to_le_bytes(&g)?);
        Ok(self)
    }

    /// The generator fixing the slot order, if the set has one ([`Params::with_slot_generator`]).
    pub fn slot_generator(&self) -> Option<BigInt> {
        self.slot_generator
            .as_ref()
            .and_then(|b| coterie_math::bigint::from_le_bytes_bounded(b, b.len()).ok())
    }

    /// The reference code's generator `G` of `Z_p^*` for a MatriGear set (seed 002 §6.4), with
    /// `G^((p−1)/(2M)) = b`; `ξ = G^((p−1)/(2N))` fixes the slot order the reference code uses
    /// (`coterie_math::zp_ntt::SlotEncoder::with_generator`).
    ///
    /// # Errors
    /// As [`Params::matrigear`].
    pub fn matrigear_generator(set: MatriGearSet, log_p: u32) -> Result<BigInt> {
        let row = MATRIGEAR_LOG_P
            .iter()
            .position(|&l| l == log_p)
            .ok_or_else(|| {
                Error::InvalidParameter(format!("no MatriGear row for log p = {log_p}"))
            })?;
        let (base, exp) = match set {
            MatriGearSet::I => [(27u32, 1u32), (5, 11), (27, 1), (3, 27), (5, 1), (3, 43)][row],
            MatriGearSet::II => [(7, 7), (5, 17), (5, 1), (5, 1), (5, 161), (3, 235)][row],
            MatriGearSet::III => {
                return Err(Error::Unsupported(
                    "the reference code lists no generators for Params III".into(),
                ));
            }
        };
        Ok(BigInt::from(BigInt::u_pow_u(base, exp)))
    }

    /// **Insecure toy parameters** for fast tests and examples only: N = `n` (e.g. 256 or 1024)
    /// with log q = 120 in 3 primes, ternary secret. No security at all at these degrees.
    pub fn insecure_toy(n: usize, t: u64) -> Result<Self> {
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

    /// **Insecure toy parameters** shaped like [`Params::seed001`] (log q = 220 in NTT primes,
    /// `t = 256`, Gaussian secrets, so Table 2's gadgets and depth 5 work) at a small degree `n`
    /// (e.g. 1024), for fast tests and demos of the multi-key flow only. No security at all.
    pub fn insecure_toy_seed001(n: usize) -> Result<Self> {
        Self::custom(
            &format!("toy-insecure-seed001-n{n}"),
            n,
            &moduli_for_bits(n, 220)?,
            256,
            3.2,
            SecretDistribution::Gaussian,
            "INSECURE toy parameters (far below any security level), for tests only",
        )
    }

    /// **Insecure toy parameters** with a cyclotomic plaintext modulus `X^D − b`, `p = b^M + 1`
    /// (`D = n/m`), log q = 180 in 4 primes, ternary secret, for tests and examples only.
    ///
    /// ```
    /// use coterie_bfv::Params;
    /// // N = 1024, M = 8, D = 128, p = 65340^8 + 1 (128 bits).
    /// let p = Params::insecure_toy_cyclotomic(1024, 65340, 8).unwrap();
    /// assert_eq!(p.plaintext_modulus().modulus().significant_bits(), 128);
    /// ```
    pub fn insecure_toy_cyclotomic(n: usize, b: u64, m: usize) -> Result<Self> {
        let b = BigInt::from(b);
        if m == 0 || !n.is_multiple_of(m) {
            return Err(Error::InvalidParameter(format!(
                "cyclotomic plaintext: M = {m} does not divide N = {n}"
            )));
        }
        Self::custom_with(
            &format!("insecure-toy-cyclotomic-n{n}-b{b}-m{m}"),
            n,
            &moduli_for_bits(n, 180)?,
            PlaintextModulus::Cyclotomic { d: n / m, b, m },
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
    /// The plaintext modulus.
    pub fn plaintext_modulus(&self) -> &PlaintextModulus {
        &self.plaintext
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
    /// Whether SIMD batching is available (a scalar `t`, prime and `t ≡ 1 mod 2N`).
    pub fn supports_batching(&self) -> bool {
        match self.plaintext {
            PlaintextModulus::Scalar(t) => {
                t % (2 * self.n as u64) == 1 && coterie_math::primes::is_prime(t)
            }
            PlaintextModulus::Cyclotomic { .. } => false,
        }
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

    #[test]
    fn cyclotomic_validation_names_the_failed_condition() {
        let q = moduli_for_bits(1024, 180).unwrap();
        let s = SecretDistribution::Ternary;
        let c = |d, b: u64, m| {
            Params::custom_with(
                "x",
                1024,
                &q,
                PlaintextModulus::Cyclotomic {
                    d,
                    b: BigInt::from(b),
                    m,
                },
                3.2,
                s,
                "",
            )
        };
        assert!(c(128, 65340, 8).is_ok());
        assert!(c(1024, 12288, 1).is_ok());
        let msg = |r: Result<Params>| r.unwrap_err().to_string();
        assert!(msg(c(128, 65336, 8)).contains("not prime"));
        assert!(msg(c(96, 65340, 8)).contains("power of two"));
        assert!(msg(c(64, 65340, 8)).contains("M·D"));
        // 2N = 2048 ∤ 6^4: p = 1297 is prime, but the NTT condition fails.
        assert!(msg(c(256, 6, 4)).contains("does not divide"));
        assert!(msg(c(128, 1, 8)).contains("below 2"));
    }
}
