//! LWE secret keys and ciphertexts, encryption, decryption, linear operations, and LWE-to-LWE
//! key switching.
//!
//! Convention (as TFHE-rs `core_crypto`): a ciphertext is `(a_0, …, a_{n−1}, b)` with the body
//! **last** and `b = Σ a_i·s_i + μ + e`; the phase is `b − ⟨a, s⟩`.

use rand_core::CryptoRng;
use serde::{Deserialize, Serialize};
use zeroize::{Zeroize, ZeroizeOnDrop};

use coterie_math::gadget::SignedDecomposer;

use crate::noise::NoiseSampler;
use crate::torus::Torus;
use crate::{Error, Result};

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

/// An LWE ciphertext `(a_0, …, a_{n−1}, b)`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct LweCiphertext<T: Torus> {
    pub(crate) data: Vec<T>,
}

impl<T: Torus> LweCiphertext<T> {
    /// The zero (trivial) ciphertext of dimension `n`.
    ///
    /// ```
    /// let c = coterie_tfhe::lwe::LweCiphertext::<u64>::zero(10);
    /// assert_eq!(c.dimension(), 10);
    /// ```
    pub fn zero(n: usize) -> Self {
        Self {
            data: vec![T::ZERO; n + 1],
        }
    }

    /// The noiseless trivial encryption `(0, …, 0, μ)`.
    ///
    /// ```
    /// let c = coterie_tfhe::lwe::LweCiphertext::trivial(4, 7u32);
    /// assert_eq!(c.body(), 7);
    /// ```
    pub fn trivial(n: usize, mu: T) -> Self {
        let mut c = Self::zero(n);
        c.data[n] = mu;
        c
    }

    /// A ciphertext from its raw words (mask then body), e.g. the container of a TFHE-rs
    /// `LweCiphertext`.
    ///
    /// # Errors
    /// [`Error::Malformed`] for an empty container.
    pub fn from_container(data: Vec<T>) -> Result<Self> {
        if data.is_empty() {
            return Err(Error::Malformed("empty LWE ciphertext".into()));
        }
        Ok(Self { data })
    }

    /// The raw words, mask then body.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// The dimension `n` (number of mask words).
    pub fn dimension(&self) -> usize {
        self.data.len() - 1
    }

    /// The mask `a`.
    pub fn mask(&self) -> &[T] {
        &self.data[..self.data.len() - 1]
    }

    /// The body `b`.
    pub fn body(&self) -> T {
        self.data[self.data.len() - 1]
    }

    fn check_same(&self, o: &Self) {
        assert_eq!(self.data.len(), o.data.len(), "LWE dimensions differ");
    }

    /// `self += o`.
    ///
    /// # Panics
    /// If the dimensions differ.
    pub fn add_assign(&mut self, o: &Self) {
        self.check_same(o);
        for (x, y) in self.data.iter_mut().zip(&o.data) {
            *x = x.wrapping_add(*y);
        }
    }

    /// `self -= o`.
    ///
    /// # Panics
    /// If the dimensions differ.
    pub fn sub_assign(&mut self, o: &Self) {
        self.check_same(o);
        for (x, y) in self.data.iter_mut().zip(&o.data) {
            *x = x.wrapping_sub(*y);
        }
    }

    /// `self = −self`.
    pub fn neg_assign(&mut self) {
        for x in &mut self.data {
            *x = x.wrapping_neg();
        }
    }

    /// `self *= c` for an integer `c`.
    pub fn scalar_mul_assign(&mut self, c: i64) {
        let c = T::from_i64(c);
        for x in &mut self.data {
            *x = x.wrapping_mul(c);
        }
    }

    /// Adds the plaintext `μ` to the body.
    pub fn add_plaintext_assign(&mut self, mu: T) {
        let n = self.data.len() - 1;
        self.data[n] = self.data[n].wrapping_add(mu);
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
    for (a, s) in out.data[..n].iter_mut().zip(&key.data) {
        *a = T::random(rng);
        body = body.wrapping_add(a.wrapping_mul(*s));
    }
    out.data[n] = body.wrapping_add(noise.sample(rng));
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
/// [`Error::InvalidParameter`] if the decomposition does not fit the torus.
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
            data[off..off + row].copy_from_slice(&ct.data);
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
    output.data.fill(T::ZERO);
    let n = ksk.output_dimension;
    output.data[n] = input.body();
    let mut digits = [0i64; 64];
    let avx512 = crate::fourier::cpu_has_avx512();
    for (i, a) in input.mask().iter().enumerate() {
        decompose_balanced(&dec, T::BITS, a.to_u64(), &mut digits[..l]);
        for (j, &d) in digits[..l].iter().enumerate() {
            let off = (i * l + j) * row;
            let key_row = &ksk.data[off..off + row];
            let d = T::from_i64(d);
            #[cfg(target_arch = "x86_64")]
            if avx512 {
                // SAFETY: the CPU supports the enabled features (runtime check).
                unsafe { sub_scaled_avx512(&mut output.data, key_row, d) };
                continue;
            }
            let _ = avx512;
            sub_scaled(&mut output.data, key_row, d);
        }
    }
}

/// `out -= d · row` (wrapping).
/// Signed gadget decomposition with **zero-mean** digits: like coterie-math's
/// `SignedDecomposer::decompose_into` (digits of `closest_representable(x)`, carry on digits
/// above `B/2`), except that a digit equal to `B/2` becomes `−B/2` (with a carry) only when the
/// next more significant digit's top bit is set (TFHE-rs's balanced rule). Digits lie in
/// `[−B/2, B/2]` (for the most significant digit, whose carry is dropped, the tie is broken by
/// the input's parity) and, for uniform inputs, are symmetric: mean 0, mean square at most
/// `(B² + 2)/12` (the ties move to the digit that lowers it: 0.88 of it for `B = 4`, 0.7 for `B = 2`), so
/// the standard key-switching variance formula stays an upper bound.
///
/// Why: with digits in `[−B/2, B/2)` (mean `−1/2`), the key-switching output carries a bias
/// `½·Σ e_{i,l}` fixed by the key's noise — for one key it adds a `χ²₁`-distributed term worth
/// `(1/4)/E[d²]` of the key-switching variance on average (1/6 for `B' = 4`), which made the
/// measured `V0` of some AKÖ key sets 20–50% above Eq. (14) (seed 003 T8). Branch-free.
#[inline(always)]
fn decompose_balanced(dec: &SignedDecomposer, width: u32, x: u64, out: &mut [i64]) {
    let b = dec.base_log();
    let shift = width - b * dec.levels();
    let mut state = dec.closest_representable(x) >> shift;
    let digit_mask = (1u64 << b) - 1;
    // The most significant digit's carry is dropped (mod q), so its tie can go either way: it
    // is decided by the parity of the input's bits (uniform for uniform inputs).
    let top_tie = (u64::from(x.count_ones()) & 1) << (b - 1);
    for (j, o) in out.iter_mut().enumerate().rev() {
        let d = state & digit_mask;
        state >>= b;
        let next = if j == 0 { top_tie } else { state };
        let carry = (((d.wrapping_sub(1) | next) & d) >> (b - 1)) & 1;
        *o = d as i64 - ((carry << b) as i64);
        state += carry;
    }
}

#[inline(always)]
fn sub_scaled<T: Torus>(out: &mut [T], row: &[T], d: T) {
    for (o, k) in out.iter_mut().zip(row) {
        *o = o.wrapping_sub(d.wrapping_mul(*k));
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx2")]
unsafe fn sub_scaled_avx512<T: Torus>(out: &mut [T], row: &[T], d: T) {
    sub_scaled(out, row, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use coterie_math::prg::Csprng;

    #[test]
    fn balanced_decomposition_recomposes_and_is_centered() {
        let mut rng = Csprng::from_seed_insecure_for_tests([9; 32]);
        for (w, b, l) in [(32u32, 2u32, 5u32), (32, 3, 3), (64, 7, 2), (32, 1, 8)] {
            let dec = SignedDecomposer::new(w, b, l).unwrap();
            let mut d = vec![0i64; l as usize];
            let (mut sum, mut sq, count) = (0f64, 0f64, 20000);
            for _ in 0..count {
                let x = if w == 32 {
                    u64::from(u32::random(&mut rng))
                } else {
                    u64::random(&mut rng)
                };
                decompose_balanced(&dec, w, x, &mut d);
                assert_eq!(dec.recompose(&d), dec.closest_representable(x));
                let half = 1i64 << (b - 1);
                assert!(d.iter().all(|v| (-half..=half).contains(v)));
                sum += d.iter().sum::<i64>() as f64;
                sq += d.iter().map(|v| (v * v) as f64).sum::<f64>();
            }
            let n = (count * l as usize) as f64;
            let bb = 2f64.powi(b as i32);
            let ms = sq / n;
            // The old rule's mean −1/2 gives mean²/E[d²] = 1/6 for B = 4, 1/22 for B = 8.
            let mean = sum / n;
            assert!(
                mean * mean / ms < 0.003,
                "B = 2^{b}, {l} levels: mean {mean}"
            );
            let r = ms / ((bb * bb + 2.0) / 12.0);
            assert!(
                (0.6..1.03).contains(&r),
                "B = 2^{b}: mean square {ms} ({r} of (B²+2)/12)"
            );
        }
    }

    #[test]
    fn encrypt_decrypt_and_linear_ops() {
        let mut rng = Csprng::from_seed_insecure_for_tests([1; 32]);
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
        let mut rng = Csprng::from_seed_insecure_for_tests([2; 32]);
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
