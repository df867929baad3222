//! GGSW ciphertexts, their Fourier-domain form, the external product and the CMux.
//!
//! A GGSW encryption of an integer `m` has `(k+1)·ℓ` rows; row `(j, l)` (`j ≤ k`, `l = 1..ℓ`) is
//! a GLWE encryption of zero with `m/B^l` added to component `j` (mask `A_j` for `j < k`, body
//! for `j = k`), so its phase is `−m·S_j/B^l` (resp. `m/B^l`). The external product
//! `GGSW(m) ⊡ GLWE(M) = Σ_{j,l} g^{-1}(C_j)_l · row(j,l)` is a GLWE encryption of `m·M`.

use rand_core::CryptoRng;
use serde::{Deserialize, Serialize};
use tfhe_fft::c64;

use coterie_math::gadget::SignedDecomposer;

use crate::fourier::{FourierEngine, FourierScratch};
use crate::glwe::{GlweCiphertext, PreparedGlweKey, encrypt_glwe_ciphertext};
use crate::noise::NoiseSampler;
use crate::torus::Torus;
use crate::{Error, Result};

/// A GGSW ciphertext in the coefficient domain: `(k+1)·ℓ` GLWE rows, row `j·ℓ + (l−1)`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct GgswCiphertext<T: Torus> {
    pub(crate) k: usize,
    pub(crate) n: usize,
    pub(crate) base_log: u32,
    pub(crate) levels: u32,
    pub(crate) data: Vec<T>,
}

impl<T: Torus> GgswCiphertext<T> {
    /// Number of rows `(k+1)·ℓ`.
    pub fn row_count(&self) -> usize {
        (self.k + 1) * self.levels as usize
    }

    /// Row `r` as a GLWE ciphertext (copied).
    pub fn row(&self, r: usize) -> GlweCiphertext<T> {
        let len = (self.k + 1) * self.n;
        GlweCiphertext {
            k: self.k,
            n: self.n,
            data: self.data[r * len..(r + 1) * len].to_vec(),
        }
    }
}

/// Encrypts the integer `m` as a GGSW ciphertext (base `2^base_log`, `levels` rows per
/// component).
///
/// # Errors
/// [`Error::InvalidParameter`] if the decomposition does not fit the torus.
pub fn encrypt_constant_ggsw_ciphertext<T: Torus, R: CryptoRng + ?Sized>(
    key: &mut PreparedGlweKey<'_, T>,
    m: i64,
    base_log: u32,
    levels: u32,
    noise: &NoiseSampler,
    rng: &mut R,
) -> Result<GgswCiphertext<T>> {
    SignedDecomposer::new(T::BITS, base_log, levels)?;
    let (k, n) = (key.key().glwe_dimension(), key.key().poly_size());
    let len = (k + 1) * n;
    let mut data = Vec::with_capacity((k + 1) * levels as usize * len);
    let zero = vec![T::ZERO; n];
    let mut row = GlweCiphertext::zero(k, n);
    for j in 0..=k {
        for l in 1..=levels {
            encrypt_glwe_ciphertext(key, &mut row, &zero, noise, rng);
            let g = T::from_u64(1u64 << (T::BITS - l * base_log));
            let c = &mut row.data[j * n];
            *c = c.wrapping_add(T::from_i64(m).wrapping_mul(g));
            data.extend_from_slice(&row.data);
        }
    }
    Ok(GgswCiphertext {
        k,
        n,
        base_log,
        levels,
        data,
    })
}

/// A GGSW ciphertext in the Fourier domain (rows × columns of `N/2` complex values, in the
/// engine's split layout where it uses one: `FourierEngine::to_split_layout`), ready for
/// external products. Process-local: never serialized.
#[derive(Clone, Debug)]
pub struct FourierGgswCiphertext {
    pub(crate) k: usize,
    pub(crate) n: usize,
    pub(crate) base_log: u32,
    pub(crate) levels: u32,
    pub(crate) data: Vec<c64>,
}

/// Appends the Fourier form of `ggsw` to `out`.
pub(crate) fn ggsw_to_fourier_into<T: Torus>(
    engine: &FourierEngine,
    ggsw: &GgswCiphertext<T>,
    out: &mut Vec<c64>,
    scratch: &mut FourierScratch,
) {
    let h = ggsw.n / 2;
    let start = out.len();
    out.resize(start + ggsw.data.len() / 2, c64::new(0.0, 0.0));
    for (src, dst) in ggsw
        .data
        .chunks_exact(ggsw.n)
        .zip(out[start..].chunks_exact_mut(h))
    {
        engine.forward_torus(src, dst, scratch);
        engine.to_split_layout(dst);
    }
}

impl FourierGgswCiphertext {
    /// Converts a coefficient-domain GGSW ciphertext.
    ///
    /// # Errors
    /// If the ring degree is unsupported.
    pub fn from_ggsw<T: Torus>(ggsw: &GgswCiphertext<T>) -> Result<Self> {
        let engine = FourierEngine::get(ggsw.n)?;
        let mut scratch = engine.new_scratch();
        let mut data = Vec::new();
        ggsw_to_fourier_into(&engine, ggsw, &mut data, &mut scratch);
        Ok(Self {
            k: ggsw.k,
            n: ggsw.n,
            base_log: ggsw.base_log,
            levels: ggsw.levels,
            data,
        })
    }
}

/// Reusable buffers for external products, CMuxes and blind rotations of one shape: allocated
/// once, so the hot loops never allocate.
pub struct ExternalProductBuffers<T: Torus> {
    pub(crate) engine: std::sync::Arc<FourierEngine>,
    pub(crate) dec: SignedDecomposer,
    pub(crate) k: usize,
    dig: Vec<c64>,
    acc: Vec<c64>,
    scratch: FourierScratch,
    pub(crate) diff: Vec<T>,
    pub(crate) rot: Vec<T>,
}

impl<T: Torus> core::fmt::Debug for ExternalProductBuffers<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "ExternalProductBuffers(k {}, {:?})", self.k, self.engine)
    }
}

impl<T: Torus> ExternalProductBuffers<T> {
    /// Buffers for GLWE dimension `k`, ring degree `n`, gadget `2^base_log × levels`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for unsupported sizes.
    pub fn new(k: usize, n: usize, base_log: u32, levels: u32) -> Result<Self> {
        let engine = FourierEngine::get(n)?;
        let dec = SignedDecomposer::new(T::BITS, base_log, levels)?;
        if levels as usize > crate::fourier::MAX_LEVELS {
            return Err(Error::InvalidParameter("too many levels".into()));
        }
        let h = n / 2;
        let scratch = engine.new_scratch();
        Ok(Self {
            engine,
            dec,
            k,
            dig: vec![c64::new(0.0, 0.0); (k + 1) * levels as usize * h],
            acc: vec![c64::new(0.0, 0.0); (k + 1) * h],
            scratch,
            diff: vec![T::ZERO; (k + 1) * n],
            rot: vec![T::ZERO; (k + 1) * n],
        })
    }

    /// `out += GGSW ⊡ input` on raw slices: `ggsw` is the Fourier matrix, `input` and `out`
    /// hold `(k+1)·N` words.
    #[inline]
    pub(crate) fn add_external_product_raw(&mut self, ggsw: &[c64], input: &[T], out: &mut [T]) {
        let n = self.engine.poly_size();
        let h = n / 2;
        let l = self.dec.levels() as usize;
        let cols = self.k + 1;
        for (src, dst) in input.chunks_exact(n).zip(self.dig.chunks_exact_mut(l * h)) {
            self.engine
                .forward_decomposed(src, &self.dec, dst, &mut self.scratch);
        }
        self.engine.to_split_layout(&mut self.dig);
        self.engine
            .matrix_product_split(&mut self.acc, &self.dig, ggsw, cols * l, cols);
        for (acc, dst) in self.acc.chunks_exact_mut(h).zip(out.chunks_exact_mut(n)) {
            self.engine.backward_add_torus(acc, dst, &mut self.scratch);
        }
    }
}

fn check_shapes<T: Torus>(
    bufs: &ExternalProductBuffers<T>,
    ggsw: &FourierGgswCiphertext,
    c: &GlweCiphertext<T>,
) {
    assert!(
        ggsw.k == bufs.k
            && c.k == bufs.k
            && ggsw.n == bufs.engine.poly_size()
            && c.n == ggsw.n
            && ggsw.levels == bufs.dec.levels()
            && ggsw.base_log == bufs.dec.base_log(),
        "external product shapes do not match"
    );
}

/// `out += ggsw ⊡ input` (external product, through the FFT).
///
/// # Panics
/// If the shapes do not match the buffers.
///
/// ```
/// use coterie_math::prg::Csprng;
/// use coterie_tfhe::{ggsw::*, glwe::*, noise::NoiseSampler, params::KeyDistribution, torus::Torus};
/// let mut rng = Csprng::new();
/// let s = GlweSecretKey::<u32>::generate(1, 256, KeyDistribution::Binary, &mut rng).unwrap();
/// let mut prep = s.prepare().unwrap();
/// let noise = NoiseSampler::new(2f64.powi(-28), 32).unwrap();
/// let g = encrypt_constant_ggsw_ciphertext(&mut prep, 1, 8, 2, &noise, &mut rng).unwrap();
/// let fg = FourierGgswCiphertext::from_ggsw(&g).unwrap();
/// let msg: Vec<u32> = (0..256).map(|i| u32::encode(if i % 2 == 0 { 0.25 } else { -0.25 })).collect();
/// let mut c = GlweCiphertext::zero(1, 256);
/// encrypt_glwe_ciphertext(&mut prep, &mut c, &msg, &noise, &mut rng);
/// let mut out = GlweCiphertext::zero(1, 256);
/// let mut bufs = ExternalProductBuffers::new(1, 256, 8, 2).unwrap();
/// add_external_product_assign(&mut out, &fg, &c, &mut bufs);
/// let mut dec = vec![0u32; 256];
/// decrypt_glwe_ciphertext(&s, &out, &mut dec);
/// assert!(dec.iter().zip(&msg).all(|(d, m)| d.wrapping_sub(*m).decode().abs() < 1e-3));
/// ```
pub fn add_external_product_assign<T: Torus>(
    out: &mut GlweCiphertext<T>,
    ggsw: &FourierGgswCiphertext,
    input: &GlweCiphertext<T>,
    bufs: &mut ExternalProductBuffers<T>,
) {
    check_shapes(bufs, ggsw, input);
    assert!(
        out.k == input.k && out.n == input.n,
        "output shape mismatch"
    );
    bufs.add_external_product_raw(&ggsw.data, &input.data, &mut out.data);
}

/// CMux: `ct0 ← ct0 + ggsw ⊡ (ct1 − ct0)`, i.e. `ct1` if the GGSW encrypts 1 and `ct0` if it
/// encrypts 0.
///
/// # Panics
/// If the shapes do not match the buffers.
pub fn cmux_assign<T: Torus>(
    ct0: &mut GlweCiphertext<T>,
    ct1: &GlweCiphertext<T>,
    ggsw: &FourierGgswCiphertext,
    bufs: &mut ExternalProductBuffers<T>,
) {
    check_shapes(bufs, ggsw, ct0);
    assert!(ct1.k == ct0.k && ct1.n == ct0.n, "shape mismatch");
    let mut diff = core::mem::take(&mut bufs.diff);
    for ((d, a), b) in diff.iter_mut().zip(&ct1.data).zip(&ct0.data) {
        *d = a.wrapping_sub(*b);
    }
    bufs.add_external_product_raw(&ggsw.data, &diff, &mut ct0.data);
    bufs.diff = diff;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::glwe::{GlweSecretKey, decrypt_glwe_ciphertext};
    use crate::params::KeyDistribution;
    use coterie_math::prg::Csprng;

    #[test]
    fn cmux_selects() {
        let mut rng = Csprng::insecure_from_seed_for_tests([4; 32]);
        let (k, n) = (2, 128);
        let s = GlweSecretKey::<u64>::generate(k, n, KeyDistribution::Binary, &mut rng).unwrap();
        let mut prep = s.prepare().unwrap();
        let noise = NoiseSampler::new(2f64.powi(-50), 64).unwrap();
        let m0: Vec<u64> = (0..n).map(|i| u64::encode(i as f64 / 1000.0)).collect();
        let m1: Vec<u64> = (0..n).map(|i| u64::encode(-(i as f64) / 1000.0)).collect();
        let mut c0 = GlweCiphertext::zero(k, n);
        let mut c1 = GlweCiphertext::zero(k, n);
        encrypt_glwe_ciphertext(&mut prep, &mut c0, &m0, &noise, &mut rng);
        encrypt_glwe_ciphertext(&mut prep, &mut c1, &m1, &noise, &mut rng);
        let mut bufs = ExternalProductBuffers::new(k, n, 12, 3).unwrap();
        for bit in [0, 1] {
            let g =
                encrypt_constant_ggsw_ciphertext(&mut prep, bit, 12, 3, &noise, &mut rng).unwrap();
            let fg = FourierGgswCiphertext::from_ggsw(&g).unwrap();
            let mut acc = c0.clone();
            cmux_assign(&mut acc, &c1, &fg, &mut bufs);
            let mut dec = vec![0u64; n];
            decrypt_glwe_ciphertext(&s, &acc, &mut dec);
            let want = if bit == 1 { &m1 } else { &m0 };
            for (d, w) in dec.iter().zip(want) {
                assert!(d.wrapping_sub(*w).decode().abs() < 1e-6, "bit {bit}");
            }
        }
    }
}
