//! LWE secret keys and ciphertexts, encryption, decryption, linear operations, and LWE-to-LWE
//! key switching.
//!
//! Convention (as TFHE-rs `core_crypto`): a ciphertext is `(a_0, …, a_{n−1}, b)` with the body
//! **last** and `b = Σ a_i·s_i + μ + e`; the phase is `b − ⟨a, s⟩`. The ciphertext type is the
//! one of the whole workspace, [`coterie_math::lwe::LweCiphertext`] (re-exported here), which
//! coterie-threshold decrypts as well.

use rand_core::CryptoRng;
use serde::{Deserialize, Serialize};
use zeroize::{Zeroize, ZeroizeOnDrop};

use coterie_math::gadget::SignedDecomposer;
pub use coterie_math::lwe::LweCiphertext;

use crate::Result;
use crate::noise::NoiseSampler;
use crate::torus::Torus;

/// An LWE secret key: `n` coefficients (uniform binary for keys generated here). Zeroized on drop.
#[derive(Clone, PartialEq, Eq, Zeroize, ZeroizeOnDrop)]
pub struct LweSecretKey<T: Torus> {
    pub(crate) data: Vec<T>,
}

impl<T: Torus> core::fmt::Debug for LweSecretKey<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "LweSecretKey(dimension {}, secret)", self.data.len())
    }
}

impl<T: Torus> LweSecretKey<T> {
    /// A uniform binary key of dimension `n`.
    ///
    /// ```
    /// use coterie_math::prg::Csprng;
    /// let s = coterie_tfhe::lwe::LweSecretKey::<u32>::generate_binary(16, &mut Csprng::new());
    /// assert_eq!(s.dimension(), 16);
    /// ```
    pub fn generate_binary<R: CryptoRng + ?Sized>(n: usize, rng: &mut R) -> Self {
        let mut bits = vec![0i64; n];
        coterie_math::sample::uniform_binary(rng, &mut bits);
        let data = bits.iter().map(|&b| T::from_i64(b)).collect();
        bits.zeroize();
        Self { data }
    }

    /// A key from its coefficients (e.g. the container of a TFHE-rs `LweSecretKey`).
    ///
    /// ```
    /// let s = coterie_tfhe::lwe::LweSecretKey::from_container(vec![1u32, 0, 1]);
    /// assert_eq!(s.dimension(), 3);
    /// ```
    pub fn from_container(data: Vec<T>) -> Self {
        Self { data }
    }

    /// The coefficients (secret).
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// The dimension `n`.
    pub fn dimension(&self) -> usize {
        self.data.len()
    }

    /// `Σ s_i²` (with coefficients read as centered integers), used by the noise formulas.
    pub fn squared_norm(&self) -> f64 {
        self.data
            .iter()
            .map(|x| (x.to_i64_centered() as f64).powi(2))
            .sum()
    }
}

/// Encrypts `mu` under `key` with fresh uniform mask and Gaussian noise, into `out`.
///
/// # Panics
/// If `out` has another dimension than the key.
///
/// ```
/// use coterie_math::prg::Csprng;
/// use coterie_tfhe::{lwe::*, noise::NoiseSampler, torus::Torus};
/// let mut rng = Csprng::new();
/// let s = LweSecretKey::<u32>::generate_binary(500, &mut rng);
/// let noise = NoiseSampler::new(2f64.powi(-20), 32).unwrap();
/// let mut c = LweCiphertext::zero(500);
/// encrypt_lwe_ciphertext(&s, &mut c, u32::encode(0.25), &noise, &mut rng);
/// assert!((decrypt_lwe_ciphertext(&s, &c).decode() - 0.25).abs() < 1e-4);
/// ```
pub fn encrypt_lwe_ciphertext<T: Torus, R: CryptoRng + ?Sized>(
    key: &LweSecretKey<T>,
    out: &mut LweCiphertext<T>,
    mu: T,
    noise: &NoiseSampler,
    rng: &mut R,
) {
    let n = key.dimension();
    assert_eq!(
        out.dimension(),
        n,
        "ciphertext dimension differs from the key"
    );
    let mut body = mu;
    for (a, s) in out.mask_mut().iter_mut().zip(&key.data) {
        *a = T::random(rng);
        body = body.wrapping_add(a.wrapping_mul(*s));
    }
    *out.body_mut() = body.wrapping_add(noise.sample(rng));
}

/// The phase `b − ⟨a, s⟩ = μ + e`.
///
/// # Panics
/// If the dimensions differ.
///
/// ```
/// use coterie_tfhe::lwe::*;
/// let s = LweSecretKey::from_container(vec![1u32, 0, 1]);
/// let c = LweCiphertext::from_container(vec![5u32, 9, 7, 100]).unwrap();
/// assert_eq!(decrypt_lwe_ciphertext(&s, &c), 100 - 5 - 7);
/// ```
pub fn decrypt_lwe_ciphertext<T: Torus>(key: &LweSecretKey<T>, ct: &LweCiphertext<T>) -> T {
    assert_eq!(
        ct.dimension(),
        key.dimension(),
        "ciphertext dimension differs from the key"
    );
    let mut acc = ct.body();
    for (a, s) in ct.mask().iter().zip(&key.data) {
        acc = acc.wrapping_sub(a.wrapping_mul(*s));
    }
    acc
}

/// An LWE key-switching key from an input key of dimension `n_in` to an output key of dimension
/// `n_out`: for every input coefficient `s_i` and level `j = 1..ℓ`, an LWE encryption of
/// `s_i / B^j` under the output key. Row-major `[i][j][n_out + 1]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct LweKeyswitchKey<T: Torus> {
    pub(crate) input_dimension: usize,
    pub(crate) output_dimension: usize,
    pub(crate) base_log: u32,
    pub(crate) levels: u32,
    pub(crate) data: Vec<T>,
}

impl<T: Torus> LweKeyswitchKey<T> {
    /// Input LWE dimension.
    pub fn input_dimension(&self) -> usize {
        self.input_dimension
    }
    /// Output LWE dimension.
    pub fn output_dimension(&self) -> usize {
        self.output_dimension
    }
    /// Decomposition base log.
    pub fn base_log(&self) -> u32 {
        self.base_log
    }
    /// Decomposition levels.
    pub fn levels(&self) -> u32 {
        self.levels
    }
    /// Size in bytes of the key material.
    pub fn size_bytes(&self) -> usize {
        self.data.len() * (T::BITS as usize / 8)
    }
}

/// Generates a key-switching key from `input` to `output` (noise of `noise`).
///
/// # Errors
/// [`crate::Error::InvalidParameter`] if the decomposition does not fit the torus.
///
/// ```
/// use coterie_math::prg::Csprng;
/// use coterie_tfhe::{lwe::*, noise::NoiseSampler, torus::Torus};
/// let mut rng = Csprng::new();
/// let big = LweSecretKey::<u32>::generate_binary(64, &mut rng);
/// let small = LweSecretKey::<u32>::generate_binary(32, &mut rng);
/// let noise = NoiseSampler::new(2f64.powi(-25), 32).unwrap();
/// let ksk = generate_lwe_keyswitch_key(&big, &small, 4, 5, &noise, &mut rng).unwrap();
/// let mut c = LweCiphertext::zero(64);
/// encrypt_lwe_ciphertext(&big, &mut c, u32::encode(0.25), &noise, &mut rng);
/// let mut out = LweCiphertext::zero(32);
/// keyswitch_lwe_ciphertext(&ksk, &c, &mut out);
/// assert!((decrypt_lwe_ciphertext(&small, &out).decode() - 0.25).abs() < 1e-3);
/// ```
pub fn generate_lwe_keyswitch_key<T: Torus, R: CryptoRng + ?Sized>(
    input: &LweSecretKey<T>,
    output: &LweSecretKey<T>,
    base_log: u32,
    levels: u32,
    noise: &NoiseSampler,
    rng: &mut R,
) -> Result<LweKeyswitchKey<T>> {
    SignedDecomposer::new(T::BITS, base_log, levels)?;
    let (n_in, n_out) = (input.dimension(), output.dimension());
    let row = n_out + 1;
    let mut data = vec![T::ZERO; n_in * levels as usize * row];
    let mut ct = LweCiphertext::zero(n_out);
    for (i, s) in input.data.iter().enumerate() {
        for j in 0..levels {
            // s_i / B^(j+1) = s_i · 2^(w − (j+1)β).
            let shift = T::BITS - (j + 1) * base_log;
            let mu = s.wrapping_mul(T::from_u64(1u64 << shift));
            encrypt_lwe_ciphertext(output, &mut ct, mu, noise, rng);
            let off = (i * levels as usize + j as usize) * row;
            data[off..off + row].copy_from_slice(ct.as_slice());
        }
    }
    Ok(LweKeyswitchKey {
        input_dimension: n_in,
        output_dimension: n_out,
        base_log,
        levels,
        data,
    })
}

/// Key-switches `input` (under the key-switching key's input key) to `output` (under its output
/// key): `output = (0, …, 0, b) − Σ_i Σ_j g^{-1}(a_i)_j · KSK[i][j]`.
///
/// # Panics
/// If the dimensions do not match the key.
#[allow(unsafe_code)] // the AVX-512 row update, behind its run-time check
pub fn keyswitch_lwe_ciphertext<T: Torus>(
    ksk: &LweKeyswitchKey<T>,
    input: &LweCiphertext<T>,
    output: &mut LweCiphertext<T>,
) {
    assert_eq!(
        input.dimension(),
        ksk.input_dimension,
        "input dimension mismatch"
    );
    assert_eq!(
        output.dimension(),
        ksk.output_dimension,
        "output dimension mismatch"
    );
    let dec = match SignedDecomposer::new(T::BITS, ksk.base_log, ksk.levels) {
        Ok(d) => d,
        Err(_) => unreachable!("checked at key generation and decoding"),
    };
    let l = ksk.levels as usize;
    let row = ksk.output_dimension + 1;
    let out = output.as_mut_slice();
    out.fill(T::ZERO);
    let n = ksk.output_dimension;
    out[n] = input.body();
    let mut digits = [0i64; 64];
    let avx512 = crate::fourier::cpu_has_avx512();
    for (i, a) in input.mask().iter().enumerate() {
        dec.decompose_zero_mean_into(a.to_u64(), &mut digits[..l]);
        for (j, &d) in digits[..l].iter().enumerate() {
            let off = (i * l + j) * row;
            let key_row = &ksk.data[off..off + row];
            let d = T::from_i64(d);
            #[cfg(target_arch = "x86_64")]
            if avx512 {
                // SAFETY: the CPU supports the enabled features (runtime check).
                unsafe { sub_scaled_avx512(out, key_row, d) };
                continue;
            }
            let _ = avx512;
            sub_scaled(out, key_row, d);
        }
    }
}

/// `out -= d · row` (wrapping).
#[inline(always)]
fn sub_scaled<T: Torus>(out: &mut [T], row: &[T], d: T) {
    for (o, k) in out.iter_mut().zip(row) {
        *o = o.wrapping_sub(d.wrapping_mul(*k));
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx2")]
unsafe fn sub_scaled_avx512<T: Torus>(out: &mut [T], row: &[T], d: T) {
    sub_scaled(out, row, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use coterie_math::prg::Csprng;

    #[test]
    fn encrypt_decrypt_and_linear_ops() {
        let mut rng = Csprng::insecure_from_seed_for_tests([1; 32]);
        let s = LweSecretKey::<u64>::generate_binary(300, &mut rng);
        let noise = NoiseSampler::new(2f64.powi(-30), 64).unwrap();
        let mut c1 = LweCiphertext::zero(300);
        let mut c2 = LweCiphertext::zero(300);
        encrypt_lwe_ciphertext(&s, &mut c1, u64::encode(0.125), &noise, &mut rng);
        encrypt_lwe_ciphertext(&s, &mut c2, u64::encode(0.25), &noise, &mut rng);
        c1.add_assign(&c2);
        assert!((decrypt_lwe_ciphertext(&s, &c1).decode() - 0.375).abs() < 1e-7);
        c1.sub_assign(&c2);
        c1.scalar_mul_assign(3);
        assert!((decrypt_lwe_ciphertext(&s, &c1).decode() - 0.375).abs() < 1e-7);
        c1.neg_assign();
        assert!((decrypt_lwe_ciphertext(&s, &c1).decode() + 0.375).abs() < 1e-7);
        // The wrong key decrypts to garbage.
        let s2 = LweSecretKey::<u64>::generate_binary(300, &mut rng);
        assert!((decrypt_lwe_ciphertext(&s2, &c1).decode() + 0.375).abs() > 1e-4);
    }

    #[test]
    fn keyswitch_many_messages() {
        let mut rng = Csprng::insecure_from_seed_for_tests([2; 32]);
        let big = LweSecretKey::<u32>::generate_binary(512, &mut rng);
        let small = LweSecretKey::<u32>::generate_binary(100, &mut rng);
        let noise = NoiseSampler::new(2f64.powi(-24), 32).unwrap();
        let ksk = generate_lwe_keyswitch_key(&big, &small, 4, 6, &noise, &mut rng).unwrap();
        let mut out = LweCiphertext::zero(100);
        for m in 0..16 {
            let mu = u32::encode(m as f64 / 16.0);
            let mut c = LweCiphertext::zero(512);
            encrypt_lwe_ciphertext(&big, &mut c, mu, &noise, &mut rng);
            keyswitch_lwe_ciphertext(&ksk, &c, &mut out);
            let got = decrypt_lwe_ciphertext(&small, &out)
                .wrapping_sub(mu)
                .decode();
            assert!(got.abs() < 1e-3, "m = {m}: error {got}");
        }
    }
}
