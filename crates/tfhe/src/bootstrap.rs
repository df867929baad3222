//! Bootstrapping keys, blind rotation, programmable bootstrapping and lookup tables.
//!
//! Blind rotation computes `X^{−φ̃}·TV` with `φ̃ = b̃ − Σ ã_i·s_i`, the phase of the input LWE
//! sample switched to `Z_{2N}` (`b̃ = round(2N·b)`, `ã_i = round(2N·a_i)`), starting from
//! `ACC = X^{−b̃}·TV` and CMuxing `ACC ← ACC + BSK_i ⊡ (X^{ã_i}·ACC − ACC)`. The constant
//! coefficient of the result is `TV[φ̃]` for `φ̃ < N` and `−TV[φ̃ − N]` otherwise. This is the
//! "rotate by `−φ̃`" convention that seed 003 §1.6 recommends (its literal `X^{+φ̃}` negates the
//! lookup table, erratum 2).

use rand_core::CryptoRng;
use serde::{Deserialize, Serialize};
use tfhe_fft::c64;

use crate::fourier::FourierEngine;
use crate::ggsw::{
    ExternalProductBuffers, GgswCiphertext, encrypt_constant_ggsw_ciphertext, ggsw_to_fourier_into,
};
use crate::glwe::{
    GlweCiphertext, GlweSecretKey, extract_lwe_sample_from_glwe_ciphertext, poly_mul_monomial,
    poly_mul_monomial_minus_one,
};
use crate::lwe::{LweCiphertext, LweSecretKey};
use crate::noise::NoiseSampler;
use crate::torus::Torus;
use crate::{Error, Result};

/// A bootstrapping key in the coefficient domain (the serializable form): one GGSW encryption of
/// each LWE key bit under the GLWE key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct LweBootstrapKey<T: Torus> {
    pub(crate) ggsw: Vec<GgswCiphertext<T>>,
    pub(crate) k: usize,
    pub(crate) n: usize,
    pub(crate) base_log: u32,
    pub(crate) levels: u32,
}

impl<T: Torus> LweBootstrapKey<T> {
    /// Input LWE dimension (number of GGSW ciphertexts).
    pub fn input_lwe_dimension(&self) -> usize {
        self.ggsw.len()
    }
    /// GLWE dimension `k`.
    pub fn glwe_dimension(&self) -> usize {
        self.k
    }
    /// Ring degree `N`.
    pub fn poly_size(&self) -> usize {
        self.n
    }
    /// Size in bytes of the key material (coefficient domain).
    pub fn size_bytes(&self) -> usize {
        self.ggsw.iter().map(|g| g.data.len()).sum::<usize>() * (T::BITS as usize / 8)
    }
}

/// Generates a bootstrapping key: GGSW encryptions of the bits of `lwe_key` under `glwe_key`.
///
/// # Errors
/// If the decomposition does not fit the torus or `N` is unsupported.
pub fn generate_lwe_bootstrap_key<T: Torus, R: CryptoRng + ?Sized>(
    lwe_key: &LweSecretKey<T>,
    glwe_key: &GlweSecretKey<T>,
    base_log: u32,
    levels: u32,
    noise: &NoiseSampler,
    rng: &mut R,
) -> Result<LweBootstrapKey<T>> {
    let mut prep = glwe_key.prepare()?;
    let ggsw = lwe_key
        .as_slice()
        .iter()
        .map(|s| {
            encrypt_constant_ggsw_ciphertext(
                &mut prep,
                s.to_i64_centered(),
                base_log,
                levels,
                noise,
                rng,
            )
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(LweBootstrapKey {
        ggsw,
        k: glwe_key.glwe_dimension(),
        n: glwe_key.poly_size(),
        base_log,
        levels,
    })
}

/// A bootstrapping key in the Fourier domain: one flat allocation of
/// `n · (k+1)ℓ · (k+1) · N/2` complex values.
#[derive(Clone, Debug)]
pub struct FourierBootstrapKey {
    pub(crate) k: usize,
    pub(crate) n: usize,
    pub(crate) base_log: u32,
    pub(crate) levels: u32,
    pub(crate) input_lwe_dimension: usize,
    pub(crate) data: Vec<c64>,
}

impl FourierBootstrapKey {
    /// Converts a coefficient-domain key.
    ///
    /// # Errors
    /// If `N` is unsupported.
    pub fn from_key<T: Torus>(bsk: &LweBootstrapKey<T>) -> Result<Self> {
        let engine = FourierEngine::get(bsk.n)?;
        let mut scratch = engine.new_scratch();
        let per = (bsk.k + 1) * (bsk.k + 1) * bsk.levels as usize * bsk.n / 2;
        let mut data = Vec::with_capacity(per * bsk.ggsw.len());
        for g in &bsk.ggsw {
            ggsw_to_fourier_into(&engine, g, &mut data, &mut scratch);
        }
        Ok(Self {
            k: bsk.k,
            n: bsk.n,
            base_log: bsk.base_log,
            levels: bsk.levels,
            input_lwe_dimension: bsk.ggsw.len(),
            data,
        })
    }

    /// Input LWE dimension.
    pub fn input_lwe_dimension(&self) -> usize {
        self.input_lwe_dimension
    }
    /// GLWE dimension `k`.
    pub fn glwe_dimension(&self) -> usize {
        self.k
    }
    /// Ring degree `N`.
    pub fn poly_size(&self) -> usize {
        self.n
    }
    /// LWE dimension `k·N` of the extracted output.
    pub fn output_lwe_dimension(&self) -> usize {
        self.k * self.n
    }
    /// Size in bytes (Fourier domain, 16 bytes per complex value).
    pub fn size_bytes(&self) -> usize {
        self.data.len() * 16
    }

    /// Fresh buffers for [`blind_rotate_assign`] / [`programmable_bootstrap_lwe_ciphertext`].
    ///
    /// # Errors
    /// If the shape is unsupported.
    pub fn new_buffers<T: Torus>(&self) -> Result<BootstrapBuffers<T>> {
        Ok(BootstrapBuffers {
            ep: ExternalProductBuffers::new(self.k, self.n, self.base_log, self.levels)?,
            acc: GlweCiphertext::zero(self.k, self.n),
        })
    }
}

/// Reusable buffers for bootstrapping (external-product scratch and the accumulator).
#[derive(Debug)]
pub struct BootstrapBuffers<T: Torus> {
    ep: ExternalProductBuffers<T>,
    acc: GlweCiphertext<T>,
}

/// Blind rotation: `acc ← X^{−φ̃(lwe)} · acc` homomorphically (see the module doc).
///
/// # Panics
/// If the shapes do not match the key.
///
/// ```
/// use coterie_math::prg::Csprng;
/// use coterie_tfhe::{bootstrap::*, glwe::*, lwe::*, noise::NoiseSampler, params::KeyDistribution, torus::Torus};
/// let mut rng = Csprng::new();
/// let s = LweSecretKey::<u32>::generate_binary(16, &mut rng);
/// let z = GlweSecretKey::<u32>::generate(1, 64, KeyDistribution::Binary, &mut rng).unwrap();
/// let noise = NoiseSampler::new(2f64.powi(-28), 32).unwrap();
/// let bsk = generate_lwe_bootstrap_key(&s, &z, 8, 2, &noise, &mut rng).unwrap();
/// let fbsk = FourierBootstrapKey::from_key(&bsk).unwrap();
/// let mut bufs = fbsk.new_buffers::<u32>().unwrap();
/// let tv = vec![u32::encode(0.125); 64];
/// let mut acc = GlweCiphertext::trivial(1, 64, &tv);
/// // Phase 1/4 = 32/128 in Z_2N: the constant coefficient becomes TV[32] = 1/8.
/// let c = LweCiphertext::trivial(16, u32::encode(0.25));
/// blind_rotate_assign(&mut acc, &c, &fbsk, &mut bufs);
/// let mut dec = vec![0u32; 64];
/// decrypt_glwe_ciphertext(&z, &acc, &mut dec);
/// assert!((dec[0].decode() - 0.125).abs() < 0.01);
/// ```
pub fn blind_rotate_assign<T: Torus>(
    acc: &mut GlweCiphertext<T>,
    lwe: &LweCiphertext<T>,
    bsk: &FourierBootstrapKey,
    bufs: &mut BootstrapBuffers<T>,
) {
    assert!(
        lwe.dimension() == bsk.input_lwe_dimension && acc.k == bsk.k && acc.n == bsk.n,
        "blind rotation shapes do not match the key"
    );
    assert!(
        bufs.ep.k == bsk.k && bufs.ep.engine.poly_size() == bsk.n,
        "buffers of another shape"
    );
    let n = bsk.n;
    let log2_2n = n.trailing_zeros() + 1;
    let two_n = 2 * n;
    let ep = &mut bufs.ep;
    // ACC = X^{−b̃}·ACC.
    let b = lwe.body().mod_switch(log2_2n);
    if b != 0 {
        ep.rot.copy_from_slice(&acc.data);
        for (src, dst) in ep.rot.chunks_exact(n).zip(acc.data.chunks_exact_mut(n)) {
            poly_mul_monomial(src, dst, two_n - b);
        }
    }
    let per = (bsk.k + 1) * (bsk.k + 1) * bsk.levels as usize * n / 2;
    let mut diff = core::mem::take(&mut ep.diff);
    for (a, ggsw) in lwe.mask().iter().zip(bsk.data.chunks_exact(per)) {
        let a = a.mod_switch(log2_2n);
        if a == 0 {
            // The CMux would add BSK_i ⊡ 0 = 0.
            continue;
        }
        for (src, dst) in acc.data.chunks_exact(n).zip(diff.chunks_exact_mut(n)) {
            poly_mul_monomial_minus_one(src, dst, a);
        }
        ep.add_external_product_raw(ggsw, &diff, &mut acc.data);
    }
    ep.diff = diff;
}

/// Programmable bootstrapping without key switching: blind-rotates the lookup table `lut` (a
/// GLWE ciphertext, usually trivial: [`generate_lut`]) by the phase of `input` and extracts the
/// constant coefficient into `output` (dimension `k·N`, under the GLWE key's LWE form).
///
/// # Panics
/// If the shapes do not match the key.
///
/// ```
/// use coterie_math::prg::Csprng;
/// use coterie_tfhe::{bootstrap::*, glwe::*, lwe::*, noise::NoiseSampler, params::KeyDistribution, torus::Torus};
/// let mut rng = Csprng::new();
/// let s = LweSecretKey::<u64>::generate_binary(32, &mut rng);
/// let z = GlweSecretKey::<u64>::generate(1, 256, KeyDistribution::Binary, &mut rng).unwrap();
/// let bsk = generate_lwe_bootstrap_key(&s, &z, 12, 3, &NoiseSampler::new(2f64.powi(-50), 64).unwrap(), &mut rng).unwrap();
/// let fbsk = FourierBootstrapKey::from_key(&bsk).unwrap();
/// let mut bufs = fbsk.new_buffers::<u64>().unwrap();
/// let lut = generate_lut::<u64>(1, 256, 2, |m| (m + 1) % 4, delta(2)).unwrap();
/// let mut c = LweCiphertext::zero(32);
/// encrypt_lwe_ciphertext(&s, &mut c, encode_message(2, 2), &NoiseSampler::new(2f64.powi(-30), 64).unwrap(), &mut rng);
/// let mut out = LweCiphertext::zero(256);
/// programmable_bootstrap_lwe_ciphertext(&c, &mut out, &lut, &fbsk, &mut bufs);
/// assert_eq!(decode_message(decrypt_lwe_ciphertext(&z.as_lwe_key(), &out), 2), Some(3));
/// ```
pub fn programmable_bootstrap_lwe_ciphertext<T: Torus>(
    input: &LweCiphertext<T>,
    output: &mut LweCiphertext<T>,
    lut: &GlweCiphertext<T>,
    bsk: &FourierBootstrapKey,
    bufs: &mut BootstrapBuffers<T>,
) {
    let mut acc = core::mem::replace(
        &mut bufs.acc,
        GlweCiphertext {
            k: 0,
            n: 0,
            data: Vec::new(),
        },
    );
    acc.data.copy_from_slice(&lut.data);
    blind_rotate_assign(&mut acc, input, bsk, bufs);
    extract_lwe_sample_from_glwe_ciphertext(&acc, output, 0);
    bufs.acc = acc;
}

/// Scaling factor `Δ = q / 2^(bits+1)` of a `bits`-bit message with one padding bit.
#[inline]
pub fn delta<T: Torus>(bits: u32) -> T {
    T::from_u64(1u64 << (T::BITS - 1 - bits))
}

/// Encodes `m mod 2^bits` as `m·Δ` (one padding bit).
///
/// ```
/// use coterie_tfhe::bootstrap::{encode_message, decode_message};
/// let x: u64 = encode_message(3, 2);
/// assert_eq!(x, 3 << 61);
/// assert_eq!(decode_message(x + 12345, 2), Some(3));
/// ```
#[inline]
pub fn encode_message<T: Torus>(m: u64, bits: u32) -> T {
    T::from_u64(m & ((1u64 << bits) - 1)).wrapping_mul(delta::<T>(bits))
}

/// Decodes a phase: `round(x/Δ) mod 2^(bits+1)`; `None` when the padding bit is set (the phase
/// overflowed into the negacyclic half).
#[inline]
pub fn decode_message<T: Torus>(x: T, bits: u32) -> Option<u64> {
    let r = x.mod_switch(bits + 1) as u64;
    if r >> bits == 1 { None } else { Some(r) }
}

/// The trivial GLWE lookup table evaluating `f` on `bits`-bit messages (one padding bit, encoding
/// [`encode_message`]), with output scale `out_delta` (`f(m)·out_delta`): box `i` of width
/// `N/2^bits` holds `f(i)`, shifted by half a box so that noise of either sign rounds to the
/// right box, and the last half box holds `−f(0)` (negacyclic wrap of message 0's negative side).
///
/// # Errors
/// [`Error::InvalidParameter`] if `2^bits > N/2` (fewer than two coefficients per box).
///
/// ```
/// let lut = coterie_tfhe::bootstrap::generate_lut::<u32>(1, 64, 2, |m| (m + 1) % 4, 1 << 29).unwrap();
/// assert_eq!(lut.body()[0], 1 << 29);
/// assert_eq!(lut.body()[63], (1u32 << 29).wrapping_neg());
/// ```
pub fn generate_lut<T: Torus>(
    k: usize,
    n: usize,
    bits: u32,
    f: impl Fn(u64) -> u64,
    out_delta: T,
) -> Result<GlweCiphertext<T>> {
    if bits == 0 || bits > 16 || (n >> bits) < 2 {
        return Err(Error::InvalidParameter(format!(
            "{bits}-bit lookup table does not fit N = {n}"
        )));
    }
    let boxw = n >> bits;
    let half = boxw / 2;
    let mut tv = vec![T::ZERO; n];
    for (i, t) in tv.iter_mut().enumerate() {
        let m = ((i + half) / boxw) as u64;
        *t = if m == 1u64 << bits {
            T::from_u64(f(0)).wrapping_mul(out_delta).wrapping_neg()
        } else {
            T::from_u64(f(m)).wrapping_mul(out_delta)
        };
    }
    Ok(GlweCiphertext::trivial(k, n, &tv))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::glwe::decrypt_glwe_ciphertext;
    use crate::lwe::{decrypt_lwe_ciphertext, encrypt_lwe_ciphertext};
    use crate::params::{KeyDistribution, TfheParams};
    use coterie_math::prg::Csprng;

    /// Seed 003 test T1: trivial inputs of phase +1/8, −1/8, +3/8 give output signs +, −, +
    /// with TV = 1/8·Σ X^j, and φ̃ = 0 maps to +1/8.
    #[test]
    fn sign_convention_t1() {
        let p = TfheParams::insecure_toy_u32();
        let mut rng = Csprng::insecure_from_seed_for_tests([5; 32]);
        let s = LweSecretKey::<u32>::generate_binary(p.lwe_dimension, &mut rng);
        let z =
            GlweSecretKey::<u32>::generate(1, p.polynomial_size, KeyDistribution::Binary, &mut rng)
                .unwrap();
        let noise = NoiseSampler::new(p.glwe_noise_std, 32).unwrap();
        let bsk = generate_lwe_bootstrap_key(&s, &z, p.pbs_base_log, p.pbs_level, &noise, &mut rng)
            .unwrap();
        let fbsk = FourierBootstrapKey::from_key(&bsk).unwrap();
        let mut bufs = fbsk.new_buffers::<u32>().unwrap();
        let tv = GlweCiphertext::trivial(
            1,
            p.polynomial_size,
            &vec![u32::encode(0.125); p.polynomial_size],
        );
        let zk = z.as_lwe_key();
        let mut out = LweCiphertext::zero(p.polynomial_size);
        for (phase, sign) in [(0.125, 1.0), (-0.125, -1.0), (0.375, 1.0), (0.0, 1.0)] {
            let c = LweCiphertext::trivial(p.lwe_dimension, u32::encode(phase));
            programmable_bootstrap_lwe_ciphertext(&c, &mut out, &tv, &fbsk, &mut bufs);
            let got = decrypt_lwe_ciphertext(&zk, &out).decode();
            assert!((got - sign * 0.125).abs() < 0.01, "phase {phase}: {got}");
        }
        // And with real (noisy) encryptions.
        let lwe_noise = NoiseSampler::new(p.lwe_noise_std, 32).unwrap();
        for (phase, sign) in [(0.125, 1.0), (-0.125, -1.0), (0.375, 1.0), (-0.375, -1.0)] {
            let mut c = LweCiphertext::zero(p.lwe_dimension);
            encrypt_lwe_ciphertext(&s, &mut c, u32::encode(phase), &lwe_noise, &mut rng);
            programmable_bootstrap_lwe_ciphertext(&c, &mut out, &tv, &fbsk, &mut bufs);
            let got = decrypt_lwe_ciphertext(&zk, &out).decode();
            assert!((got - sign * 0.125).abs() < 0.01, "phase {phase}: {got}");
        }
        // The accumulator really is X^{-φ} TV: all coefficients decrypt.
        let c = LweCiphertext::trivial(p.lwe_dimension, u32::encode(0.0));
        let mut acc = tv.clone();
        blind_rotate_assign(&mut acc, &c, &fbsk, &mut bufs);
        let mut dec = vec![0u32; p.polynomial_size];
        decrypt_glwe_ciphertext(&z, &acc, &mut dec);
        assert!(dec.iter().all(|x| (x.decode() - 0.125).abs() < 0.01));
    }

    #[test]
    fn lut_and_encoding() {
        for bits in 1..=4u32 {
            for m in 0..(1u64 << bits) {
                let x: u32 = encode_message(m, bits);
                assert_eq!(decode_message(x, bits), Some(m));
            }
        }
        assert_eq!(decode_message(u32::encode(0.75), 2), None);
        assert!(generate_lut::<u32>(1, 32, 5, |m| m, 1).is_err());
    }
}
