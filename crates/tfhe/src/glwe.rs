//! GLWE secret keys and ciphertexts over `T_q[X]/(X^N + 1)`, encryption (with exact products),
//! decryption, monomial rotations and sample extraction.
//!
//! A ciphertext is `(A_0, …, A_{k−1}, B)` (body last), `B = Σ A_j·S_j + M + E`.

use rand_core::CryptoRng;
use serde::{Deserialize, Serialize};
use zeroize::{Zeroize, ZeroizeOnDrop};

use coterie_math::intpoly::{ExactMul64, ExactScratch, PreparedPoly, negacyclic_mul_small_add};

use crate::lwe::{LweCiphertext, LweSecretKey};
use crate::noise::NoiseSampler;
use crate::params::KeyDistribution;
use crate::torus::Torus;
use crate::{Error, Result};

/// A GLWE secret key `(S_0, …, S_{k−1})`, `k` polynomials of degree `< N`. Zeroized on drop.
#[derive(Clone, PartialEq, Eq, Zeroize, ZeroizeOnDrop)]
pub struct GlweSecretKey<T: Torus> {
    #[zeroize(skip)]
    k: usize,
    #[zeroize(skip)]
    n: usize,
    data: Vec<T>,
}

impl<T: Torus> core::fmt::Debug for GlweSecretKey<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "GlweSecretKey(k {}, N {}, secret)", self.k, self.n)
    }
}

impl<T: Torus> GlweSecretKey<T> {
    /// A fresh key with `k` polynomials of degree `< n`, coefficients from `dist`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a ternary probability outside `(0, 1/2]`.
    ///
    /// ```
    /// use coterie_math::prg::Csprng;
    /// use coterie_tfhe::{glwe::GlweSecretKey, params::KeyDistribution};
    /// let s = GlweSecretKey::<u64>::generate(1, 1024, KeyDistribution::Ternary { p: 0.1135 }, &mut Csprng::new()).unwrap();
    /// assert_eq!(s.as_lwe_key().dimension(), 1024);
    /// ```
    pub fn generate<R: CryptoRng + ?Sized>(
        k: usize,
        n: usize,
        dist: KeyDistribution,
        rng: &mut R,
    ) -> Result<Self> {
        let mut v = vec![0i64; k * n];
        match dist {
            KeyDistribution::Binary => coterie_math::sample::uniform_binary(rng, &mut v),
            KeyDistribution::Ternary { p } => coterie_math::sample::ternary(rng, p, &mut v)?,
        }
        let data = v.iter().map(|&x| T::from_i64(x)).collect();
        v.zeroize();
        Ok(Self { k, n, data })
    }

    /// A key from its `k·N` coefficients (polynomial-major, e.g. a TFHE-rs container).
    ///
    /// # Errors
    /// [`Error::Malformed`] if the length is not `k·N`.
    pub fn from_container(k: usize, n: usize, data: Vec<T>) -> Result<Self> {
        if data.len() != k * n || k == 0 || n == 0 {
            return Err(Error::Malformed("GLWE key length is not k·N".into()));
        }
        Ok(Self { k, n, data })
    }

    /// GLWE dimension `k`.
    pub fn glwe_dimension(&self) -> usize {
        self.k
    }

    /// Ring degree `N`.
    pub fn poly_size(&self) -> usize {
        self.n
    }

    /// The coefficients (secret), polynomial-major.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// The LWE key of dimension `k·N` under which extracted samples decrypt (the coefficient
    /// vectors concatenated).
    pub fn as_lwe_key(&self) -> LweSecretKey<T> {
        LweSecretKey::from_container(self.data.clone())
    }

    /// Precomputes the exact-product form of the key for encryption.
    ///
    /// # Errors
    /// If the ring degree is not supported by the exact product.
    pub fn prepare(&self) -> Result<PreparedGlweKey<'_, T>> {
        let mul = ExactMul64::new(self.n)?;
        let polys = self
            .data
            .chunks_exact(self.n)
            .map(|p| {
                let mut v: Vec<u64> = p.iter().map(|x| x.to_i64_centered() as u64).collect();
                let prepared = mul.prepare(&v);
                v.zeroize();
                prepared
            })
            .collect();
        let scratch = mul.new_scratch();
        Ok(PreparedGlweKey {
            key: self,
            mul,
            polys,
            scratch,
            tmp_in: vec![0; self.n],
            tmp_out: vec![0; self.n],
        })
    }
}

/// A GLWE key in the form used by encryption: its polynomials transformed once for
/// coterie-math's exact negacyclic product (no floating-point error in key material; seed 003
/// §5 requires exact products in key generation).
pub struct PreparedGlweKey<'a, T: Torus> {
    key: &'a GlweSecretKey<T>,
    mul: ExactMul64,
    polys: Vec<PreparedPoly>,
    scratch: ExactScratch,
    tmp_in: Vec<u64>,
    tmp_out: Vec<u64>,
}

impl<T: Torus> core::fmt::Debug for PreparedGlweKey<'_, T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "PreparedGlweKey({:?})", self.key)
    }
}

impl<T: Torus> Drop for PreparedGlweKey<'_, T> {
    fn drop(&mut self) {
        self.tmp_in.zeroize();
        self.tmp_out.zeroize();
    }
}

impl<T: Torus> PreparedGlweKey<'_, T> {
    /// The key.
    pub fn key(&self) -> &GlweSecretKey<T> {
        self.key
    }

    /// `out = Σ_j A_j·S_j` (exact, modulo `q`) for the `k` masks `masks` (crate-internal entry
    /// point for public-key generation).
    pub(crate) fn mask_key_product_pub(&mut self, masks: &[T], out: &mut [T]) {
        self.mask_key_product(masks, out);
    }

    /// `out = Σ_j A_j·S_j` (exact, modulo `q`) for the `k` masks `masks`.
    fn mask_key_product(&mut self, masks: &[T], out: &mut [T]) {
        let n = self.key.n;
        self.tmp_out.fill(0);
        for (a, p) in masks.chunks_exact(n).zip(&self.polys) {
            for (t, x) in self.tmp_in.iter_mut().zip(a) {
                *t = x.to_u64();
            }
            self.mul
                .mul_add_prepared(&mut self.tmp_out, &self.tmp_in, p, &mut self.scratch);
        }
        for (o, x) in out.iter_mut().zip(&self.tmp_out) {
            *o = T::from_u64(*x);
        }
    }
}

/// A GLWE ciphertext `(A_0, …, A_{k−1}, B)`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct GlweCiphertext<T: Torus> {
    pub(crate) k: usize,
    pub(crate) n: usize,
    pub(crate) data: Vec<T>,
}

impl<T: Torus> GlweCiphertext<T> {
    /// The zero ciphertext.
    ///
    /// ```
    /// let c = coterie_tfhe::glwe::GlweCiphertext::<u32>::zero(2, 64);
    /// assert_eq!(c.as_slice().len(), 3 * 64);
    /// ```
    pub fn zero(k: usize, n: usize) -> Self {
        Self {
            k,
            n,
            data: vec![T::ZERO; (k + 1) * n],
        }
    }

    /// The noiseless trivial encryption `(0, …, 0, M)` of the polynomial `m` (`N` coefficients).
    ///
    /// # Panics
    /// If `m.len() != n`.
    pub fn trivial(k: usize, n: usize, m: &[T]) -> Self {
        assert_eq!(m.len(), n, "message length is not N");
        let mut c = Self::zero(k, n);
        c.body_mut().copy_from_slice(m);
        c
    }

    /// GLWE dimension `k`.
    pub fn glwe_dimension(&self) -> usize {
        self.k
    }

    /// Ring degree `N`.
    pub fn poly_size(&self) -> usize {
        self.n
    }

    /// All `(k+1)·N` words.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// All `(k+1)·N` words, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data
    }

    /// The body polynomial `B`.
    pub fn body(&self) -> &[T] {
        &self.data[self.k * self.n..]
    }

    /// The body polynomial `B`, mutable.
    pub fn body_mut(&mut self) -> &mut [T] {
        let s = self.k * self.n;
        &mut self.data[s..]
    }
}

/// Encrypts the polynomial `msg` under the prepared key into `out` (fresh uniform masks,
/// Gaussian noise per coefficient).
///
/// # Panics
/// If the shapes do not match the key.
///
/// ```
/// use coterie_math::prg::Csprng;
/// use coterie_tfhe::{glwe::*, noise::NoiseSampler, params::KeyDistribution, torus::Torus};
/// let mut rng = Csprng::new();
/// let s = GlweSecretKey::<u32>::generate(2, 64, KeyDistribution::Binary, &mut rng).unwrap();
/// let mut prep = s.prepare().unwrap();
/// let msg: Vec<u32> = (0..64).map(|i| u32::encode(i as f64 / 64.0)).collect();
/// let mut c = GlweCiphertext::zero(2, 64);
/// encrypt_glwe_ciphertext(&mut prep, &mut c, &msg, &NoiseSampler::new(2f64.powi(-25), 32).unwrap(), &mut rng);
/// let mut dec = vec![0u32; 64];
/// decrypt_glwe_ciphertext(&s, &c, &mut dec);
/// assert!(dec.iter().zip(&msg).all(|(d, m)| d.wrapping_sub(*m).decode().abs() < 1e-5));
/// ```
pub fn encrypt_glwe_ciphertext<T: Torus, R: CryptoRng + ?Sized>(
    key: &mut PreparedGlweKey<'_, T>,
    out: &mut GlweCiphertext<T>,
    msg: &[T],
    noise: &NoiseSampler,
    rng: &mut R,
) {
    let (k, n) = (key.key.k, key.key.n);
    assert!(out.k == k && out.n == n && msg.len() == n, "shape mismatch");
    let (masks, body) = out.data.split_at_mut(k * n);
    for a in masks.iter_mut() {
        *a = T::random(rng);
    }
    key.mask_key_product(masks, body);
    for (b, m) in body.iter_mut().zip(msg) {
        *b = b.wrapping_add(*m);
    }
    noise.add_noise(rng, body);
}

/// The phase `B − Σ A_j·S_j = M + E` into `out` (exact schoolbook product over the key's
/// nonzero coefficients, `O(k·N²)`: for decryption and tests, not for hot loops).
///
/// # Panics
/// If the shapes do not match.
pub fn decrypt_glwe_ciphertext<T: Torus>(
    key: &GlweSecretKey<T>,
    ct: &GlweCiphertext<T>,
    out: &mut [T],
) {
    let (k, n) = (key.k, key.n);
    assert!(ct.k == k && ct.n == n && out.len() == n, "shape mismatch");
    out.copy_from_slice(ct.body());
    for j in 0..k {
        let mut s: Vec<i64> = key.data[j * n..(j + 1) * n]
            .iter()
            .map(|x| x.to_i64_centered())
            .collect();
        let a = &ct.data[j * n..(j + 1) * n];
        let mut prod = vec![T::ZERO; n];
        negacyclic_mul_small_add(&mut prod, &s, a);
        for (o, p) in out.iter_mut().zip(&prod) {
            *o = o.wrapping_sub(*p);
        }
        s.zeroize();
        prod.zeroize();
    }
}

/// `dst = X^shift · src` in `T_q[X]/(X^N+1)`, `shift ∈ [0, 2N)`.
///
/// # Panics
/// If the lengths differ.
///
/// ```
/// let src = [1u32, 2, 3, 4];
/// let mut dst = [0u32; 4];
/// coterie_tfhe::glwe::poly_mul_monomial(&src, &mut dst, 1);
/// assert_eq!(dst, [4u32.wrapping_neg(), 1, 2, 3]);
/// ```
#[inline]
pub fn poly_mul_monomial<T: Torus>(src: &[T], dst: &mut [T], shift: usize) {
    let n = src.len();
    assert_eq!(dst.len(), n, "length mismatch");
    let shift = shift % (2 * n);
    let (neg, s) = if shift >= n {
        (true, shift - n)
    } else {
        (false, shift)
    };
    // dst[i + s] = src[i] for i < n - s; dst[i + s - n] = -src[i] for i ≥ n - s (then negate all
    // if neg).
    let (lo, hi) = src.split_at(n - s);
    if neg {
        for (d, x) in dst[s..].iter_mut().zip(lo) {
            *d = x.wrapping_neg();
        }
        dst[..s].copy_from_slice(hi);
    } else {
        dst[s..].copy_from_slice(lo);
        for (d, x) in dst[..s].iter_mut().zip(hi) {
            *d = x.wrapping_neg();
        }
    }
}

/// `dst = X^shift · src − src` (the CMux difference), `shift ∈ [0, 2N)`.
#[inline]
pub(crate) fn poly_mul_monomial_minus_one<T: Torus>(src: &[T], dst: &mut [T], shift: usize) {
    poly_mul_monomial(src, dst, shift);
    for (d, x) in dst.iter_mut().zip(src) {
        *d = d.wrapping_sub(*x);
    }
}

/// Extracts the LWE sample of coefficient `nth` of the GLWE plaintext, under
/// [`GlweSecretKey::as_lwe_key`]: `a'_{j,i} = A_j[nth − i]` for `i ≤ nth`, `−A_j[N + nth − i]`
/// otherwise; `b' = B[nth]`.
///
/// # Panics
/// If `nth ≥ N` or `out` does not have dimension `k·N`.
pub fn extract_lwe_sample_from_glwe_ciphertext<T: Torus>(
    glwe: &GlweCiphertext<T>,
    out: &mut LweCiphertext<T>,
    nth: usize,
) {
    let (k, n) = (glwe.k, glwe.n);
    assert!(nth < n && out.dimension() == k * n, "shape mismatch");
    for j in 0..k {
        let a = &glwe.data[j * n..(j + 1) * n];
        let o = &mut out.as_mut_slice()[j * n..(j + 1) * n];
        for i in 0..n {
            o[i] = if i <= nth {
                a[nth - i]
            } else {
                a[n + nth - i].wrapping_neg()
            };
        }
    }
    *out.body_mut() = glwe.body()[nth];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lwe::decrypt_lwe_ciphertext;
    use coterie_math::prg::Csprng;

    #[test]
    fn glwe_roundtrip_and_extraction() {
        let mut rng = Csprng::insecure_from_seed_for_tests([3; 32]);
        for (k, n, dist) in [
            (1, 256, KeyDistribution::Ternary { p: 0.1135 }),
            (3, 64, KeyDistribution::Binary),
        ] {
            let s = GlweSecretKey::<u64>::generate(k, n, dist, &mut rng).unwrap();
            let mut prep = s.prepare().unwrap();
            let msg: Vec<u64> = (0..n)
                .map(|i| u64::encode(i as f64 / n as f64 - 0.5))
                .collect();
            let mut c = GlweCiphertext::zero(k, n);
            // Noiseless: decryption must be exact.
            let zero = NoiseSampler::new(0.0, 64).unwrap();
            encrypt_glwe_ciphertext(&mut prep, &mut c, &msg, &zero, &mut rng);
            let mut dec = vec![0u64; n];
            decrypt_glwe_ciphertext(&s, &c, &mut dec);
            assert_eq!(dec, msg);
            let lk = s.as_lwe_key();
            let mut l = LweCiphertext::zero(k * n);
            for nth in [0, 1, n / 2, n - 1] {
                extract_lwe_sample_from_glwe_ciphertext(&c, &mut l, nth);
                assert_eq!(decrypt_lwe_ciphertext(&lk, &l), msg[nth], "nth {nth}");
            }
        }
    }

    #[test]
    fn monomial_rotation() {
        let src: Vec<u64> = (1..=8).collect();
        let mut dst = vec![0u64; 8];
        for shift in 0..16 {
            poly_mul_monomial(&src, &mut dst, shift);
            // Reference: multiply by X one step at a time.
            let mut r = src.clone();
            for _ in 0..shift {
                let last = r[7];
                r.rotate_right(1);
                r[0] = last.wrapping_neg();
            }
            assert_eq!(dst, r, "shift {shift}");
        }
    }
}
