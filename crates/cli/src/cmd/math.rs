//! `coterie demo math`: a short end-to-end exercise of coterie-math that does real work and checks
//! it. It builds the ring `Z_Q[X]/(X^N+1)` with `Q` a product of five 44-bit NTT primes (220 bits),
//! expands a public uniform polynomial `a` from a fresh 32-byte CRS seed, samples a ternary secret
//! (`P(±1) = 0.113546`, seed 003) and a Gaussian error (`σ = 3.2`), encrypts a random binary message
//! as the RLWE sample `b = −a·s + e + ⌊Q/2⌋·m`, decrypts it, lifts the ciphertext exactly to a
//! second RNS basis and back, and reports the time of every step. It fails loudly if any check does.
//!
//! This is a plain RLWE round trip to show the arithmetic core; it is not one of coterie's schemes.

use coterie_math::bigint::BigInt;
use coterie_math::poly::{Poly, Representation, RingContext};
use coterie_math::prg::{Csprng, fresh_seed};
use coterie_math::primes::{ntt_primes, ntt_primes_excluding};
use coterie_math::rns::{BaseConverter, RnsBasis};
use coterie_math::sample::{DiscreteGaussian, ternary, uniform_binary};
use std::time::Instant;

fn step<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    let t = Instant::now();
    let out = f()?;
    println!("  {what:<52} {:>10.3} ms", t.elapsed().as_secs_f64() * 1e3);
    Ok(out)
}

/// Runs the math demo at ring degree `2^log_n` (`10 ≤ log_n ≤ 16`).
pub fn run(log_n: u32) -> Result<(), String> {
    if !(10..=16).contains(&log_n) {
        return Err(format!(
            "--n {log_n}: the ring degree is 2^n with 10 ≤ n ≤ 16"
        ));
    }
    let n = 1usize << log_n;
    let e = |x: coterie_math::Error| x.to_string();
    println!("coterie demo math: RLWE round trip in Z_Q[X]/(X^{n}+1), Q = 5 primes of 44 bits");
    let primes = step("find NTT-friendly primes", || {
        ntt_primes(44, n, 5).map_err(e)
    })?;
    let ctx = step("build ring (5 NTT plans, CRT tables)", || {
        RingContext::new(n, &primes).map_err(e)
    })?;
    let mut rng = Csprng::new();
    let crs = fresh_seed();
    let a = step("expand public a from a 32-byte CRS seed", || {
        Poly::from_seed(&ctx, Representation::Ntt, &crs, b"coterie/demo/a").map_err(e)
    })?;
    let (s, err, msg) = step("sample ternary s, Gaussian e (σ=3.2), message m", || {
        let mut s = vec![0i64; n];
        ternary(&mut rng, 0.113546, &mut s).map_err(e)?;
        let mut err = vec![0i64; n];
        DiscreteGaussian::new(3.2)
            .map_err(e)?
            .fill(&mut rng, &mut err);
        let mut m = vec![0i64; n];
        uniform_binary(&mut rng, &mut m);
        Ok((s, err, m))
    })?;
    let half_q = BigInt::from(ctx.basis().product() >> 1u32);
    let mut s_ntt = Poly::from_signed(&ctx, &s).map_err(e)?;
    let b = step("encrypt: b = -a*s + e + floor(Q/2)*m (NTT)", || {
        s_ntt.to_ntt();
        let mut b = &a * &s_ntt;
        b.neg_assign();
        let mut em = Poly::from_signed(&ctx, &msg).map_err(e)?;
        em.mul_scalar(&half_q);
        em.try_add_assign(&Poly::from_signed(&ctx, &err).map_err(e)?)
            .map_err(e)?;
        em.to_ntt();
        b.try_add_assign(&em).map_err(e)?;
        Ok(b)
    })?;
    let decrypted = step("decrypt: round(2(b + a*s)/Q)", || {
        let mut phase = &b + &(&a * &s_ntt);
        phase.to_coeff();
        let coeffs = phase.to_bigints().map_err(e)?;
        let quarter = BigInt::from(&half_q >> 1u32);
        Ok(coeffs
            .iter()
            .map(|c| i64::from(BigInt::from(c.abs_ref()) > quarter))
            .collect::<Vec<i64>>())
    })?;
    if decrypted != msg {
        let wrong = decrypted.iter().zip(&msg).filter(|(x, y)| x != y).count();
        return Err(format!("decryption wrong in {wrong} of {n} coefficients"));
    }
    println!("  decrypted {n} message bits correctly");
    // Exact base extension of the ciphertext to a disjoint basis and back.
    let other = ntt_primes_excluding(44, n, 6, &primes).map_err(e)?;
    let (qb, pb) = (
        RnsBasis::new(&primes).map_err(e)?,
        RnsBasis::new(&other).map_err(e)?,
    );
    let mut bc = b.clone();
    bc.to_coeff();
    let back = step("exact base extension Q -> P -> Q (centered)", || {
        let (to_p, to_q) = (
            BaseConverter::new(&qb, &pb).map_err(e)?,
            BaseConverter::new(&pb, &qb).map_err(e)?,
        );
        let mut in_p = vec![0u64; n * pb.len()];
        to_p.convert_exact(bc.data(), &mut in_p, n, true)
            .map_err(e)?;
        let mut back = vec![0u64; n * qb.len()];
        to_q.convert_exact(&in_p, &mut back, n, true).map_err(e)?;
        Ok(back)
    })?;
    if back != bc.data() {
        return Err("base extension round trip changed the ciphertext".into());
    }
    println!("  base extension round trip exact");
    println!("ok");
    Ok(())
}
