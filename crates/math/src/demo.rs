//! A short end-to-end exercise of the arithmetic core that does real work and checks it (behind
//! `coterie demo math`). [`rlwe_round_trip`] builds the ring `Z_Q[X]/(X^N+1)` with `Q` a product
//! of five 44-bit NTT primes (220 bits), expands a public uniform polynomial `a` from a fresh
//! 32-byte CRS seed, samples a ternary secret (`P(±1) = 0.113546`, seed 003) and a Gaussian error
//! (`σ = 3.2`), encrypts a random binary message as the RLWE sample `b = −a·s + e + ⌊Q/2⌋·m`,
//! decrypts it, and lifts the ciphertext exactly to a second RNS basis and back, timing every
//! step.
//!
//! This is a plain RLWE round trip to show the arithmetic core; it is not one of coterie's
//! schemes.

use std::time::{Duration, Instant};

use crate::bigint::BigInt;
use crate::poly::{Poly, Representation, RingContext};
use crate::prg::{Csprng, fresh_seed};
use crate::primes::{ntt_primes, ntt_primes_excluding};
use crate::rns::{BaseConverter, RnsBasis};
use crate::sample::{DiscreteGaussian, ternary, uniform_binary};
use crate::{Error, Result};

/// What [`rlwe_round_trip`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoundTripReport {
    /// Ring degree `N`.
    pub n: usize,
    /// Coefficients decrypted wrongly (0 when correct).
    pub wrong_coefficients: usize,
    /// Whether the base extension `Q → P → Q` gave back the ciphertext exactly.
    pub base_extension_exact: bool,
}

impl RoundTripReport {
    /// Whether every check passed.
    pub fn ok(&self) -> bool {
        self.wrong_coefficients == 0 && self.base_extension_exact
    }
}

fn step<T>(
    report: &mut dyn FnMut(&str, Duration),
    what: &str,
    f: impl FnOnce() -> Result<T>,
) -> Result<T> {
    let t = Instant::now();
    let out = f()?;
    report(what, t.elapsed());
    Ok(out)
}

/// The RLWE round trip at ring degree `2^log_n` (`10 ≤ log_n ≤ 16`; see the module doc), calling
/// `report(step, time)` after each step. The checks' outcome is in the returned report (a failed
/// check is not an error; an error is a failure to run).
///
/// # Example
///
/// ```
/// let mut steps = Vec::new();
/// let r = coterie_math::demo::rlwe_round_trip(10, &mut |what, _t| steps.push(what.to_string()))
///     .unwrap();
/// assert!(r.ok());
/// assert_eq!(r.n, 1024);
/// assert!(steps.len() >= 6);
/// assert!(coterie_math::demo::rlwe_round_trip(9, &mut |_, _| {}).is_err());
/// ```
pub fn rlwe_round_trip(
    log_n: u32,
    report: &mut dyn FnMut(&str, Duration),
) -> Result<RoundTripReport> {
    if !(10..=16).contains(&log_n) {
        return Err(Error::InvalidParameter(format!(
            "ring degree 2^{log_n}: needs 10 ≤ log_n ≤ 16"
        )));
    }
    let n = 1usize << log_n;
    let primes = step(report, "find NTT-friendly primes", || ntt_primes(44, n, 5))?;
    let ctx = step(report, "build ring (5 NTT plans, CRT tables)", || {
        RingContext::new(n, &primes)
    })?;
    let mut rng = Csprng::new();
    let crs = fresh_seed();
    let a = step(report, "expand public a from a 32-byte CRS seed", || {
        Poly::from_seed(&ctx, Representation::Ntt, &crs, b"coterie/demo/a")
    })?;
    let (s, err, msg) = step(
        report,
        "sample ternary s, Gaussian e (σ=3.2), message m",
        || {
            let mut s = vec![0i64; n];
            ternary(&mut rng, 0.113546, &mut s)?;
            let mut err = vec![0i64; n];
            DiscreteGaussian::new(3.2)?.fill(&mut rng, &mut err);
            let mut m = vec![0i64; n];
            uniform_binary(&mut rng, &mut m);
            Ok((s, err, m))
        },
    )?;
    let half_q = BigInt::from(ctx.basis().product() >> 1u32);
    let mut s_ntt = Poly::from_signed(&ctx, &s)?;
    let b = step(report, "encrypt: b = -a*s + e + floor(Q/2)*m (NTT)", || {
        s_ntt.to_ntt();
        let mut b = &a * &s_ntt;
        b.neg_assign();
        let mut em = Poly::from_signed(&ctx, &msg)?;
        em.mul_scalar(&half_q);
        em.try_add_assign(&Poly::from_signed(&ctx, &err)?)?;
        em.to_ntt();
        b.try_add_assign(&em)?;
        Ok(b)
    })?;
    let decrypted = step(report, "decrypt: round(2(b + a*s)/Q)", || {
        let mut phase = &b + &(&a * &s_ntt);
        phase.to_coeff();
        let coeffs = phase.to_bigints()?;
        let quarter = BigInt::from(&half_q >> 1u32);
        Ok(coeffs
            .iter()
            .map(|c| i64::from(BigInt::from(c.abs_ref()) > quarter))
            .collect::<Vec<i64>>())
    })?;
    let wrong_coefficients = decrypted.iter().zip(&msg).filter(|(x, y)| x != y).count();
    // Exact base extension of the ciphertext to a disjoint basis and back.
    let other = ntt_primes_excluding(44, n, 6, &primes)?;
    let (qb, pb) = (RnsBasis::new(&primes)?, RnsBasis::new(&other)?);
    let mut bc = b.clone();
    bc.to_coeff();
    let back = step(
        report,
        "exact base extension Q -> P -> Q (centered)",
        || {
            let (to_p, to_q) = (BaseConverter::new(&qb, &pb)?, BaseConverter::new(&pb, &qb)?);
            let mut in_p = vec![0u64; n * pb.len()];
            to_p.convert_exact(bc.data(), &mut in_p, n, true)?;
            let mut back = vec![0u64; n * qb.len()];
            to_q.convert_exact(&in_p, &mut back, n, true)?;
            Ok(back)
        },
    )?;
    Ok(RoundTripReport {
        n,
        wrong_coefficients,
        base_extension_exact: back == bc.data(),
    })
}
