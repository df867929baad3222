//! Noise sampling and the standard TFHE noise-variance formulas.
//!
//! All variances are in torus units (`T = R/Z`, so a standard deviation `σ` of `2^-20` is a
//! variance of `2^-40`).

use coterie_math::fft::f64_to_wrapping_u64;
use coterie_math::sample::DiscreteGaussian;
use rand_core::CryptoRng;

use crate::torus::Torus;
use crate::{Error, Result};

/// Largest integer σ sampled with the discrete (table) sampler.
pub const DISCRETE_MAX_SIGMA: f64 = 24.0;

/// Gaussian noise of a given torus standard deviation on a `2^w` grid.
///
/// When the integer standard deviation `σ·2^w` lies in `[0.5, 24]` (narrow noise, where the
/// grid matters), samples come from coterie-math's constant-time discrete Gaussian
/// `D_{Z,σ·2^w}` (its direct-table range). Otherwise (tiny noise, or the wide integer noise of
/// key-switching keys and 64-bit tori, e.g. `σ = 2^-30.7` is `2^33.3` integers) the sampler draws
/// a continuous Gaussian by the Box–Muller transform (no data-dependent branch) and rounds it to
/// the grid: above σ = 24 integers the rounded continuous Gaussian is statistically
/// indistinguishable from the discrete one for our purposes (seed 003 O3 leaves this choice
/// open), and coterie-math's convolution sampler for wide σ was the bottleneck of key
/// generation (35% of it).
#[derive(Clone, Debug)]
pub struct NoiseSampler {
    bits: u32,
    std_int: f64,
    discrete: Option<DiscreteGaussian>,
}

impl NoiseSampler {
    /// A sampler of torus standard deviation `std` (`0 ≤ std < 1`) on a `2^bits` grid.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a negative or non-finite `std`.
    pub fn new(std: f64, bits: u32) -> Result<Self> {
        if !(std.is_finite() && (0.0..1.0).contains(&std)) {
            return Err(Error::InvalidParameter(format!(
                "noise std {std} not in [0, 1)"
            )));
        }
        let std_int = std * 2f64.powi(bits as i32);
        let discrete = if (DiscreteGaussian::MIN_SIGMA..=DISCRETE_MAX_SIGMA).contains(&std_int) {
            Some(DiscreteGaussian::new(std_int)?)
        } else {
            None
        };
        Ok(Self {
            bits,
            std_int,
            discrete,
        })
    }

    /// The torus standard deviation.
    pub fn std(&self) -> f64 {
        self.std_int / 2f64.powi(self.bits as i32)
    }

    /// Adds one noise sample to each entry of `out`.
    ///
    /// # Panics
    /// If `T::BITS` differs from the width the sampler was built for.
    pub fn add_noise<T: Torus, R: CryptoRng + ?Sized>(&self, rng: &mut R, out: &mut [T]) {
        assert_eq!(
            T::BITS,
            self.bits,
            "noise sampler built for another torus width"
        );
        if self.std_int == 0.0 {
            return;
        }
        if let Some(d) = &self.discrete {
            for o in out.iter_mut() {
                *o = o.wrapping_add(T::from_i64(d.sample(rng)));
            }
        } else {
            let mut it = out.chunks_mut(2);
            for pair in &mut it {
                let (z0, z1) = box_muller(rng);
                pair[0] = pair[0].wrapping_add(T::from_u64(f64_to_wrapping_u64(z0 * self.std_int)));
                if pair.len() > 1 {
                    pair[1] =
                        pair[1].wrapping_add(T::from_u64(f64_to_wrapping_u64(z1 * self.std_int)));
                }
            }
        }
    }

    /// One noise sample.
    pub fn sample<T: Torus, R: CryptoRng + ?Sized>(&self, rng: &mut R) -> T {
        let mut x = [T::ZERO];
        self.add_noise(rng, &mut x);
        x[0]
    }
}

/// Two independent standard normal samples.
fn box_muller<R: CryptoRng + ?Sized>(rng: &mut R) -> (f64, f64) {
    // u1 in (0, 1], u2 in [0, 1), 53 random bits each.
    let u1 = ((rng.next_u64() >> 11) + 1) as f64 * 2f64.powi(-53);
    let u2 = (rng.next_u64() >> 11) as f64 * 2f64.powi(-53);
    let r = (-2.0 * u1.ln()).sqrt();
    let (s, c) = (2.0 * core::f64::consts::PI * u2).sin_cos();
    (r * c, r * s)
}

/// Variance of the rounding error of a decomposition that keeps the top `levels·base_log` bits
/// of a uniform `bits`-bit torus value: uniform on the grid `2^-levels·base_log` below the kept
/// bits, i.e. `(2^(2(bits−ℓβ)) − 1) / 12 / 2^(2·bits)` (zero when nothing is dropped).
pub fn decomposition_rounding_variance(bits: u32, base_log: u32, levels: u32) -> f64 {
    let dropped = bits - base_log * levels;
    if dropped == 0 {
        return 0.0;
    }
    (2f64.powi(2 * dropped as i32) - 1.0) / 12.0 / 2f64.powi(2 * bits as i32)
}

/// Mean square of a balanced digit of a uniform value, base `2^base_log`:
/// `(B² + 2)/12` (uniform digits on `[-B/2, B/2)`).
pub fn digit_mean_square(base_log: u32) -> f64 {
    let b = 2f64.powi(base_log as i32);
    (b * b + 2.0) / 12.0
}

/// Shape of an external product: torus width, GLWE dimension `k`, ring degree `N`, gadget
/// base `2^base_log` with `levels` digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GadgetShape {
    /// Torus width in bits.
    pub bits: u32,
    /// GLWE dimension `k`.
    pub glwe_dimension: usize,
    /// Ring degree `N`.
    pub poly_size: usize,
    /// Gadget base log.
    pub base_log: u32,
    /// Gadget levels `ℓ`.
    pub levels: u32,
}

/// Noise variance added by one external product `GGSW(m) ⊡ GLWE` with a uniform-mask input, for
/// a GGSW with noise variance `ggsw_var`:
///
/// `(k+1)·ℓ·N·(B²+2)/12·ggsw_var + m²·(1 + key_sq_sum)·V_round`,
///
/// where `key_sq_sum = Σ S_j[i]²` over all `kN` GLWE key coefficients (`kN/2` on average for a
/// uniform binary key) and `V_round` is [`decomposition_rounding_variance`]. This is the standard
/// TFHE bound (Chillotti et al., J. Cryptology 2020, Thm. 3.13), written with the exact rounding
/// variance and the key's actual squared norm.
pub fn external_product_variance(
    s: &GadgetShape,
    ggsw_var: f64,
    m_sq: f64,
    key_sq_sum: f64,
) -> f64 {
    (s.glwe_dimension as f64 + 1.0)
        * s.levels as f64
        * s.poly_size as f64
        * digit_mean_square(s.base_log)
        * ggsw_var
        + m_sq * (1.0 + key_sq_sum) * decomposition_rounding_variance(s.bits, s.base_log, s.levels)
}

/// Output noise variance of a blind rotation of a noiseless (trivial) accumulator over an LWE
/// key with `lwe_key_weight` ones among `lwe_dimension` bits: each of the `n` CMuxes adds the
/// digit term of [`external_product_variance`], and the rounding term only where the key bit
/// is 1. Sample extraction keeps this variance.
///
/// Exact arithmetic is assumed: the floating-point FFT error is not modelled. It is negligible
/// for 32-bit tori and for 64-bit tori with small digits (measured within 3% of this formula for
/// seed 003's `B = 2^7, ℓ = 2` set), but dominates for 64-bit sets with one large digit
/// (`B = 2^23` or `2^26`, `ℓ = 1`): there the measured variance exceeds this formula (by about
/// 1.1–1.3× for TFHE-rs's 4-bit set, depending on the FFT algorithm tfhe-fft picks, and by
/// orders of magnitude for seed 003's `k = 16` set, whose `β = 2^-62` key noise is tiny; the
/// result, a standard deviation near `2^-13.8`, is still far inside the `1/8` margin).
pub fn blind_rotation_variance(
    s: &GadgetShape,
    lwe_dimension: usize,
    lwe_key_weight: usize,
    bsk_var: f64,
    glwe_key_sq_sum: f64,
) -> f64 {
    let digit = external_product_variance(s, bsk_var, 0.0, 0.0);
    let round = external_product_variance(s, 0.0, 1.0, glwe_key_sq_sum);
    lwe_dimension as f64 * digit + lwe_key_weight as f64 * round
}

/// Noise variance added by LWE key switching from dimension `in_dim` (input key squared norm
/// `in_key_sq_sum`) with a key-switching key of noise variance `ksk_var`, base `2^base_log`,
/// `levels` digits: `in_dim·ℓ·(B²+2)/12·ksk_var + in_key_sq_sum·V_round`.
pub fn keyswitch_variance(
    bits: u32,
    in_dim: usize,
    in_key_sq_sum: f64,
    base_log: u32,
    levels: u32,
    ksk_var: f64,
) -> f64 {
    in_dim as f64 * levels as f64 * digit_mean_square(base_log) * ksk_var
        + in_key_sq_sum * decomposition_rounding_variance(bits, base_log, levels)
}

#[cfg(test)]
mod tests {
    use super::*;
    use coterie_math::prg::Csprng;

    #[test]
    fn sampler_std_matches() {
        let mut rng = Csprng::insecure_from_seed_for_tests([7; 32]);
        for (std, bits) in [(2f64.powi(-25), 32u32), (2f64.powi(-40), 64), (9.3e-10, 32)] {
            let s = NoiseSampler::new(std, bits).unwrap();
            let m = 20000;
            let var: f64 = if bits == 32 {
                let mut v = vec![0u32; m];
                s.add_noise(&mut rng, &mut v);
                v.iter().map(|x| x.decode().powi(2)).sum::<f64>() / m as f64
            } else {
                let mut v = vec![0u64; m];
                s.add_noise(&mut rng, &mut v);
                v.iter().map(|x| x.decode().powi(2)).sum::<f64>() / m as f64
            };
            let ratio = var / (std * std);
            assert!((0.95..1.05).contains(&ratio), "std {std}: ratio {ratio}");
        }
        assert!(NoiseSampler::new(-1.0, 32).is_err());
    }

    #[test]
    fn rounding_variance() {
        assert_eq!(decomposition_rounding_variance(32, 4, 8), 0.0);
        let v = decomposition_rounding_variance(32, 10, 2);
        assert!((v * 12.0 * 2f64.powi(40) - 1.0).abs() < 1e-6);
    }
}
