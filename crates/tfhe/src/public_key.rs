//! GLWE public keys and public-key encryption (seed 003 §2.3 `RLwePubEncr` /
//! `RLweRevPubEncr`, in the TFHE-rs sign convention used throughout this crate).
//!
//! A public key is a GLWE encryption of zero `(A_0, …, A_{k−1}, B = Σ A_j·S_j + E)`, with fresh
//! uniform masks or with a given common random mask (a CRP expanded from a public seed, as AKÖ's
//! key generation needs). Encrypting `M` draws a fresh small temporary key `r` (ternary with
//! `P(±1) = p`, seed 003 §2.2) and fresh noise and outputs
//!
//! `(r·A_0 + e_0, …, r·A_{k−1} + e_{k−1}, r·B + M + e_k)`,
//!
//! whose phase is `M + e_k − Σ_j e_j·S_j + r·E`. The "reverse" form adds `M` to component `j`
//! instead (phase `−M·S_j + noise`), which is what a GGSW row of a mask component needs. Paper vs
//! code: the paper writes `b' = −r·b + m + e1`, `a' = −r·a + e2` for its convention
//! `phase = b + z·a`; with `phase = B − Σ A_j·S_j` the signs of `r` flip, nothing else changes.
//! The products `r·A_j`, `r·B` are exact (coterie-math's NTT product), as seed 003 §5.2 requires
//! for key material.

use rand_core::CryptoRng;
use serde::{Deserialize, Serialize};
use zeroize::Zeroize;

use coterie_math::gadget::SignedDecomposer;
use coterie_math::intpoly::{ExactMul64, ExactScratch, PreparedPoly};
use tfhe_fft::c64;

use crate::fourier::{FourierEngine, FourierScratch};

use crate::ggsw::GgswCiphertext;
use crate::glwe::{GlweCiphertext, PreparedGlweKey, encrypt_glwe_ciphertext};
use crate::noise::NoiseSampler;
use crate::torus::Torus;
use crate::{Error, Result};

/// A GLWE public key: a GLWE encryption of zero.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct GlwePublicKey<T: Torus> {
    pub(crate) ct: GlweCiphertext<T>,
}

impl<T: Torus> GlwePublicKey<T> {
    /// A public key with fresh uniform masks.
    ///
    /// ```
    /// use coterie_math::prg::Csprng;
    /// use coterie_tfhe::{glwe::*, noise::NoiseSampler, params::KeyDistribution, public_key::*, torus::Torus};
    /// let mut rng = Csprng::new();
    /// let z = GlweSecretKey::<u64>::generate(1, 256, KeyDistribution::Binary, &mut rng).unwrap();
    /// let noise = NoiseSampler::new(2f64.powi(-50), 64).unwrap();
    /// let pk = GlwePublicKey::generate(&mut z.prepare().unwrap(), &noise, &mut rng);
    /// let msg: Vec<u64> = (0..256).map(|i| u64::encode((i % 4) as f64 / 4.0)).collect();
    /// let c = encrypt_glwe_with_public_key(&pk, &msg, None, 0.1135, &noise, &mut rng).unwrap();
    /// let mut dec = vec![0u64; 256];
    /// decrypt_glwe_ciphertext(&z, &c, &mut dec);
    /// assert!(dec.iter().zip(&msg).all(|(d, m)| d.wrapping_sub(*m).decode().abs() < 1e-9));
    /// ```
    pub fn generate<R: CryptoRng + ?Sized>(
        key: &mut PreparedGlweKey<'_, T>,
        noise: &NoiseSampler,
        rng: &mut R,
    ) -> Self {
        let (k, n) = (key.key().glwe_dimension(), key.key().poly_size());
        let mut ct = GlweCiphertext::zero(k, n);
        encrypt_glwe_ciphertext(key, &mut ct, &vec![T::ZERO; n], noise, rng);
        Self { ct }
    }

    /// A public key whose masks are the given common random polynomials `masks` (`k·N` words,
    /// e.g. expanded from a public seed), body `Σ A_j·S_j + E`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if `masks` does not hold `k·N` words.
    pub fn generate_with_masks<R: CryptoRng + ?Sized>(
        key: &mut PreparedGlweKey<'_, T>,
        masks: &[T],
        noise: &NoiseSampler,
        rng: &mut R,
    ) -> Result<Self> {
        let (k, n) = (key.key().glwe_dimension(), key.key().poly_size());
        if masks.len() != k * n {
            return Err(Error::InvalidParameter("masks must hold k·N words".into()));
        }
        let mut ct = GlweCiphertext::zero(k, n);
        ct.data[..k * n].copy_from_slice(masks);
        let mut body = vec![T::ZERO; n];
        key.mask_key_product_pub(masks, &mut body);
        noise.add_noise(rng, &mut body);
        ct.body_mut().copy_from_slice(&body);
        Ok(Self { ct })
    }

    /// The key as a GLWE ciphertext of zero.
    pub fn as_ciphertext(&self) -> &GlweCiphertext<T> {
        &self.ct
    }

    /// A public key from a GLWE ciphertext of zero (e.g. the sum of the parties' shares in
    /// AKÖ's common public key `B = Σ_p b^(p)`).
    pub fn from_ciphertext(ct: GlweCiphertext<T>) -> Self {
        Self { ct }
    }
}

/// How the products `r·A_j`, `r·B` of public-key encryption are computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProductMethod {
    /// Exact negacyclic products (coterie-math's NTT/CRT [`ExactMul64`]): what key material
    /// must use (seed 003 §5.2, O7).
    Exact,
    /// Double-precision FFT products (the engine of [`crate::fourier`]): each coefficient of the
    /// public key is rounded to 53 bits and the product carries the FFT rounding error. Only
    /// for the seed 003 Experiment #2 / T10 ablation, which shows that this **breaks**
    /// multi-key bootstrapping; never use it for real keys.
    F64FftInexact,
}

/// A public key prepared for many encryptions: its polynomials transformed once (exactly, or
/// by the f64 FFT for the ablation, see [`ProductMethod`]). Each encryption then costs a
/// transform of the fresh temporary key and `k+1` products.
///
/// Zeroization: the word buffers that held a temporary key are cleared after each product;
/// the exact product's scratch (coterie-math `ExactScratch`, the NTT residues of the last
/// temporary key) offers no zeroization and keeps them until this value is dropped.
pub struct PreparedPublicKey<T: Torus> {
    k: usize,
    n: usize,
    method: ProductMethod,
    exact: Option<(ExactMul64, Vec<PreparedPoly>, ExactScratch)>,
    fft: Option<FftPrepared>,
    tmp_in: Vec<u64>,
    tmp_out: Vec<u64>,
    _t: core::marker::PhantomData<T>,
}

struct FftPrepared {
    engine: std::sync::Arc<FourierEngine>,
    polys: Vec<Vec<c64>>,
    scratch: FourierScratch,
    r_hat: Vec<c64>,
    prod: Vec<c64>,
}

impl<T: Torus> core::fmt::Debug for PreparedPublicKey<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "PreparedPublicKey(k {}, N {}, {:?})",
            self.k, self.n, self.method
        )
    }
}

impl<T: Torus> PreparedPublicKey<T> {
    /// Prepares `pk` for encryptions with products computed by `method`.
    ///
    /// # Errors
    /// If the ring degree is unsupported by the chosen product.
    pub fn new(pk: &GlwePublicKey<T>, method: ProductMethod) -> Result<Self> {
        let (k, n) = (pk.ct.k, pk.ct.n);
        let mut tmp_in = vec![0u64; n];
        let (exact, fft) = match method {
            ProductMethod::Exact => {
                let mul = ExactMul64::new(n)?;
                let polys = pk
                    .ct
                    .data
                    .chunks_exact(n)
                    .map(|src| {
                        for (t, x) in tmp_in.iter_mut().zip(src) {
                            *t = x.to_u64();
                        }
                        mul.prepare(&tmp_in)
                    })
                    .collect();
                let scratch = mul.new_scratch();
                (Some((mul, polys, scratch)), None)
            }
            ProductMethod::F64FftInexact => {
                let engine = FourierEngine::get(n)?;
                let mut scratch = engine.new_scratch();
                let polys = pk
                    .ct
                    .data
                    .chunks_exact(n)
                    .map(|src| {
                        let mut out = vec![c64::new(0.0, 0.0); n / 2];
                        engine.forward_torus(src, &mut out, &mut scratch);
                        out
                    })
                    .collect();
                let fft = FftPrepared {
                    engine,
                    polys,
                    scratch,
                    r_hat: vec![c64::new(0.0, 0.0); n / 2],
                    prod: vec![c64::new(0.0, 0.0); n / 2],
                };
                (None, Some(fft))
            }
        };
        Ok(Self {
            k,
            n,
            method,
            exact,
            fft,
            tmp_in,
            tmp_out: vec![0u64; n],
            _t: core::marker::PhantomData,
        })
    }

    /// GLWE dimension `k`.
    pub fn glwe_dimension(&self) -> usize {
        self.k
    }

    /// Ring degree `N`.
    pub fn poly_size(&self) -> usize {
        self.n
    }

    /// `out_j = r·P_j` for every component `P_j` of the public key (`(k+1)·N` words), with the
    /// given temporary key `r` (small signed coefficients, secret).
    ///
    /// # Panics
    /// If the lengths do not match.
    pub fn mul_temporary_key(&mut self, r: &[i64], out: &mut [T]) {
        let n = self.n;
        assert!(
            r.len() == n && out.len() == (self.k + 1) * n,
            "shape mismatch"
        );
        if let Some((mul, polys, scratch)) = &mut self.exact {
            for (t, x) in self.tmp_in.iter_mut().zip(r) {
                *t = *x as u64;
            }
            for (p, dst) in polys.iter().zip(out.chunks_exact_mut(n)) {
                mul.mul_prepared(&mut self.tmp_out, &self.tmp_in, p, scratch);
                for (d, x) in dst.iter_mut().zip(&self.tmp_out) {
                    *d = T::from_u64(*x);
                }
            }
            self.tmp_in.as_mut_slice().zeroize();
            self.tmp_out.as_mut_slice().zeroize();
        } else if let Some(f) = &mut self.fft {
            f.engine.forward_i64(r, &mut f.r_hat, &mut f.scratch);
            for (p, dst) in f.polys.iter().zip(out.chunks_exact_mut(n)) {
                for ((o, a), b) in f.prod.iter_mut().zip(&f.r_hat).zip(p) {
                    *o = *a * *b;
                }
                dst.fill(T::ZERO);
                f.engine
                    .backward_add_torus(&mut f.prod, dst, &mut f.scratch);
            }
            clear_c64(&mut f.r_hat);
            clear_c64(&mut f.prod);
        }
    }

    /// Public-key encryption of `msg` with the given temporary key `r` (the caller draws it,
    /// e.g. to keep it for AKÖ's dynamic variant): `(r·A_0 + e_0, …, r·B + e_k)` with `msg`
    /// added to the body (`into_mask = None`) or to mask component `j` (`Some(j)`).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a bad component index or message length.
    pub fn encrypt_with_temporary_key<R: CryptoRng + ?Sized>(
        &mut self,
        r: &[i64],
        msg: &[T],
        into_mask: Option<usize>,
        noise: &NoiseSampler,
        rng: &mut R,
    ) -> Result<GlweCiphertext<T>> {
        let (k, n) = (self.k, self.n);
        if msg.len() != n || r.len() != n {
            return Err(Error::InvalidParameter(
                "message or temporary key length is not N".into(),
            ));
        }
        if into_mask.is_some_and(|j| j >= k) {
            return Err(Error::InvalidParameter(
                "mask component index out of range".into(),
            ));
        }
        let mut out = GlweCiphertext::zero(k, n);
        self.mul_temporary_key(r, &mut out.data);
        noise.add_noise(rng, &mut out.data);
        let target = into_mask.unwrap_or(k);
        for (d, m) in out.data[target * n..(target + 1) * n].iter_mut().zip(msg) {
            *d = d.wrapping_add(*m);
        }
        Ok(out)
    }

    /// Public-key encryption of `msg` with a fresh ternary temporary key (`P(±1) = p`), see
    /// [`encrypt_glwe_with_public_key`].
    ///
    /// # Errors
    /// As [`encrypt_glwe_with_public_key`].
    pub fn encrypt<R: CryptoRng + ?Sized>(
        &mut self,
        msg: &[T],
        into_mask: Option<usize>,
        p: f64,
        noise: &NoiseSampler,
        rng: &mut R,
    ) -> Result<GlweCiphertext<T>> {
        let mut r = vec![0i64; self.n];
        coterie_math::sample::ternary(rng, p, &mut r)?;
        let out = self.encrypt_with_temporary_key(&r, msg, into_mask, noise, rng);
        r.zeroize();
        out
    }
}

/// Clears a buffer that held a transform of a secret.
fn clear_c64(buf: &mut [c64]) {
    for z in buf.iter_mut() {
        *z = c64::new(0.0, 0.0);
    }
}

/// Public-key encryption of the polynomial `msg`: added to the body (`into_mask = None`,
/// `RLwePubEncr`) or to mask component `j` (`Some(j)`, `RLweRevPubEncr`: phase `−msg·S_j`).
/// The temporary key `r` is ternary with `P(±1) = p` (seed 003: `p = 0.113546`; `p = 0.5`
/// gives uniform ternary), and each component gets fresh noise from `noise`. For many
/// encryptions under one key use [`PreparedPublicKey`] (transforms the key once).
///
/// # Errors
/// [`Error::InvalidParameter`] for a bad `p`, a component index `j ≥ k`, or a message length
/// other than `N`.
pub fn encrypt_glwe_with_public_key<T: Torus, R: CryptoRng + ?Sized>(
    pk: &GlwePublicKey<T>,
    msg: &[T],
    into_mask: Option<usize>,
    p: f64,
    noise: &NoiseSampler,
    rng: &mut R,
) -> Result<GlweCiphertext<T>> {
    if msg.len() != pk.ct.n {
        return Err(Error::InvalidParameter("message length is not N".into()));
    }
    PreparedPublicKey::new(pk, ProductMethod::Exact)?.encrypt(msg, into_mask, p, noise, rng)
}

/// A GGSW encryption of the integer `m` under the public key (AKÖ's blind-rotate key rows,
/// Eq. (7)): row `(j, l)` is a public-key encryption of `m/B^l` into component `j` (reverse
/// encryption for the masks, plain for the body), each row with its own temporary key.
///
/// # Errors
/// If the decomposition does not fit the torus or `p` is invalid.
pub fn encrypt_constant_ggsw_with_public_key<T: Torus, R: CryptoRng + ?Sized>(
    pk: &GlwePublicKey<T>,
    m: i64,
    base_log: u32,
    levels: u32,
    p: f64,
    noise: &NoiseSampler,
    rng: &mut R,
) -> Result<GgswCiphertext<T>> {
    let mut prep = PreparedPublicKey::new(pk, ProductMethod::Exact)?;
    encrypt_constant_ggsw_with_prepared_public_key(&mut prep, m, base_log, levels, p, noise, rng)
}

/// [`encrypt_constant_ggsw_with_public_key`] with a prepared key (no per-call transform of the
/// public key).
///
/// # Errors
/// If the decomposition does not fit the torus or `p` is invalid.
pub fn encrypt_constant_ggsw_with_prepared_public_key<T: Torus, R: CryptoRng + ?Sized>(
    pk: &mut PreparedPublicKey<T>,
    m: i64,
    base_log: u32,
    levels: u32,
    p: f64,
    noise: &NoiseSampler,
    rng: &mut R,
) -> Result<GgswCiphertext<T>> {
    SignedDecomposer::new(T::BITS, base_log, levels)?;
    let (k, n) = (pk.k, pk.n);
    let mut data = Vec::with_capacity((k + 1) * levels as usize * (k + 1) * n);
    let mut msg = vec![T::ZERO; n];
    for j in 0..=k {
        for l in 1..=levels {
            msg[0] = T::from_i64(m).wrapping_mul(T::from_u64(1u64 << (T::BITS - l * base_log)));
            let into = if j < k { Some(j) } else { None };
            let row = pk.encrypt(&msg, into, p, noise, rng)?;
            data.extend_from_slice(&row.data);
        }
    }
    msg.zeroize();
    Ok(GgswCiphertext {
        k,
        n,
        base_log,
        levels,
        data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootstrap::{
        FourierBootstrapKey, LweBootstrapKey, programmable_bootstrap_lwe_ciphertext,
    };
    use crate::glwe::{GlweSecretKey, decrypt_glwe_ciphertext};
    use crate::lwe::{LweCiphertext, LweSecretKey, decrypt_lwe_ciphertext};
    use crate::params::KeyDistribution;
    use coterie_math::prg::Csprng;

    #[test]
    fn public_key_encryption_noise_and_reverse_form() {
        let mut rng = Csprng::insecure_from_seed_for_tests([61; 32]);
        let (k, n) = (1, 1024);
        let p = 0.113_546;
        let z =
            GlweSecretKey::<u64>::generate(k, n, KeyDistribution::Ternary { p }, &mut rng).unwrap();
        let beta = 2f64.powf(-30.7);
        let noise = NoiseSampler::new(beta, 64).unwrap();
        let crp: Vec<u64> = (0..n).map(|_| u64::random(&mut rng)).collect();
        let pk =
            GlwePublicKey::generate_with_masks(&mut z.prepare().unwrap(), &crp, &noise, &mut rng)
                .unwrap();
        assert_eq!(&pk.as_ciphertext().as_slice()[..n], &crp[..]);
        let msg: Vec<u64> = (0..n).map(|i| u64::encode((i % 8) as f64 / 8.0)).collect();
        // Phase noise variance: β²·(1 + ‖S‖²) + ‖r‖²·β² ≈ β²(1 + 2·2pN).
        let bound = 6.0 * beta * (1.0 + 4.0 * p * n as f64).sqrt();
        let mut dec = vec![0u64; n];
        let c = encrypt_glwe_with_public_key(&pk, &msg, None, p, &noise, &mut rng).unwrap();
        decrypt_glwe_ciphertext(&z, &c, &mut dec);
        for (d, m) in dec.iter().zip(&msg) {
            assert!(d.wrapping_sub(*m).decode().abs() < bound);
        }
        // Reverse form: phase −M·S_0.
        let one = {
            let mut v = vec![0u64; n];
            v[0] = u64::encode(0.25);
            v
        };
        let c = encrypt_glwe_with_public_key(&pk, &one, Some(0), p, &noise, &mut rng).unwrap();
        decrypt_glwe_ciphertext(&z, &c, &mut dec);
        for (i, d) in dec.iter().enumerate() {
            let want = u64::encode(-0.25 * z.as_slice()[i].to_i64_centered() as f64);
            assert!(
                d.wrapping_sub(want).decode().abs() < bound,
                "coefficient {i}"
            );
        }
        assert!(encrypt_glwe_with_public_key(&pk, &one, Some(1), p, &noise, &mut rng).is_err());
    }

    /// A bootstrapping key built only from the public key bootstraps correctly.
    #[test]
    fn public_key_bootstrap_key() {
        let mut rng = Csprng::insecure_from_seed_for_tests([62; 32]);
        let (n_lwe, n) = (64, 512);
        let p = 0.113_546;
        let s = LweSecretKey::<u64>::generate_binary(n_lwe, &mut rng);
        let z =
            GlweSecretKey::<u64>::generate(1, n, KeyDistribution::Ternary { p }, &mut rng).unwrap();
        let noise = NoiseSampler::new(2f64.powi(-45), 64).unwrap();
        let pk = GlwePublicKey::generate(&mut z.prepare().unwrap(), &noise, &mut rng);
        let ggsw = s
            .as_slice()
            .iter()
            .map(|b| {
                encrypt_constant_ggsw_with_public_key(
                    &pk,
                    b.to_i64_centered(),
                    10,
                    3,
                    p,
                    &noise,
                    &mut rng,
                )
            })
            .collect::<Result<Vec<_>>>()
            .unwrap();
        let bsk = LweBootstrapKey {
            ggsw,
            k: 1,
            n,
            base_log: 10,
            levels: 3,
        };
        let fbsk = FourierBootstrapKey::from_key(&bsk).unwrap();
        let mut bufs = fbsk.new_buffers::<u64>().unwrap();
        let tv = GlweCiphertext::trivial(1, n, &vec![u64::encode(0.125); n]);
        let mut out = LweCiphertext::zero(n);
        let zk = z.as_lwe_key();
        for (phase, sign) in [(0.125, 1.0), (-0.125, -1.0), (0.375, 1.0), (-0.375, -1.0)] {
            let mut c = LweCiphertext::zero(n_lwe);
            let lwe_noise = NoiseSampler::new(2f64.powi(-20), 64).unwrap();
            crate::lwe::encrypt_lwe_ciphertext(
                &s,
                &mut c,
                u64::encode(phase),
                &lwe_noise,
                &mut rng,
            );
            programmable_bootstrap_lwe_ciphertext(&c, &mut out, &tv, &fbsk, &mut bufs);
            let got = decrypt_lwe_ciphertext(&zk, &out).decode();
            assert!((got - sign * 0.125).abs() < 0.01, "phase {phase}: {got}");
        }
    }
}
