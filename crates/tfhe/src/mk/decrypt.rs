//! Distributed decryption of multi-key ciphertexts, and the form coterie-threshold's MPC
//! rounding takes.
//!
//! A multi-key ciphertext `c = (a^(1), …, a^(k), b)` (dimension `k·n`, 32-bit torus) has phase
//! `b − Σ_p ⟨a^(p), s^(p)⟩ = μ + e`. Two ways to decrypt it without any party learning another's
//! key:
//!
//! # 1. Partial decryptions with smudging noise (seed 003 O6)
//! Party `p` publishes `d_p = ⟨a^(p), s^(p)⟩ + e_p`, `e_p` Gaussian with torus std
//! `σ_smudge` ([`partial_decrypt`]); anyone computes `b − Σ_p d_p = μ + e + Σ_p e_p`
//! ([`combine_partial_decryptions`]).
//!
//! *What the smudging buys, honestly.* Revealing `μ + e` exactly would reveal the ciphertext
//! noise `e`, which after bootstrapping is a function of the key-switching key noise and of the
//! secret keys. Statistical smudging hides `e` behind `E = Σ_p e_p` (std `σ_E = √k·σ_smudge`):
//! the statistical distance between `e + E` and `E` is at most `|e|/(√(2π)·σ_E)`
//! ([`smudging_statistical_distance_log2`]), so `λ` bits of statistical security need
//! `σ_E ≥ 2^λ·|e|/√(2π)`. Correctness needs `|e + E| < 1/8`. With AKÖ's parameters a fresh
//! bootstrap output already has `√V0 ≈ 2^-5.5` (Table 3: `V0 ≈ 4·10⁻⁴`), a quarter of the
//! margin: there is **no room for statistical smudging** on these ciphertexts — any `σ_E` that
//! keeps decryption correct gives at most a couple of bits. [`default_smudging_std`] therefore
//! picks the largest `σ_smudge` that keeps the decryption failure probability of a fresh
//! bootstrap output below `2^-20`, and the resulting statistical-distance bound is reported by
//! [`smudging_statistical_distance_log2`], not claimed to be small. Use this path for
//! demos and tests; use path 2 when the noise must stay secret.
//!
//! # 2. MPC rounding (flooding-free)
//! [`to_mpc_rounding_form`] writes the ciphertext as `(a, b)` over `q = 2^32` with a 2-bit
//! plaintext space (`b' = b + 2^29`, so `round(4·phase) mod 4` is `1` for true and `0` for
//! false), and [`MkSecretKey::lwe_key_segment`] gives each party its segment of the
//! concatenated key (coefficients `slot·n .. (slot+1)·n`). coterie-threshold's key input, where
//! each party inputs its own segment into the `Z_{2^32}` arithmetic black box, then decrypts
//! by rounding inside MPC: nothing but the bit is revealed, no flooding needed.

use rand_core::CryptoRng;
use serde::{Deserialize, Serialize};

use crate::lwe::LweCiphertext;
use crate::mk::eval::EIGHTH_U32;
use crate::mk::keygen::MkSecretKey;
use crate::mk::params::{MkParams, two_sided_tail};
use crate::noise::NoiseSampler;
use crate::{Error, Result};

/// Party `p`'s partial decryption `d_p = ⟨a^(slot), s^(p)⟩ + e_p` of one ciphertext.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartialDecryption {
    /// The party's slot in the ciphertext.
    pub slot: usize,
    /// `d_p` on the 32-bit torus.
    pub value: u32,
}

/// The per-party smudging std used by default for `k` parties: the largest `σ` with
/// `P[|e + E| ≥ 1/8] ≤ 2^-20` for a fresh bootstrap output (`e` of variance `V0`, `E` of
/// variance `k·σ²`), i.e. `V0 + k·σ² = (1/8 / 5.45)²` (`2(1 − Φ(5.45)) ≈ 2^-20`), or `0` if
/// `V0` alone exceeds that budget (then no smudging keeps that failure probability).
pub fn default_smudging_std(params: &MkParams, k: usize) -> f64 {
    let v0 = params.noise_for(k, false).v0;
    let budget = (0.125 / 5.45f64).powi(2);
    if v0 >= budget || k == 0 {
        0.0
    } else {
        ((budget - v0) / k as f64).sqrt()
    }
}

/// `log2` of the statistical-distance bound `B_e/(√(2π)·σ_E)` between `e + E` and `E` for a
/// noise `|e| ≤ B_e` (take `B_e = 6·√V0`) and `E` Gaussian of std `σ_E` (capped at `0`: a bound
/// `≥ 1` says nothing). Smaller is better; `−λ` means `λ` bits.
pub fn smudging_statistical_distance_log2(noise_bound: f64, sigma_total: f64) -> f64 {
    if sigma_total <= 0.0 {
        return 0.0;
    }
    (noise_bound / ((2.0 * core::f64::consts::PI).sqrt() * sigma_total))
        .log2()
        .min(0.0)
}

/// Probability that a fresh bootstrap output decrypts wrongly with smudging std `sigma` per
/// party (`2(1 − Φ(1/8 / √(V0 + kσ²)))`).
pub fn smudged_failure_probability(params: &MkParams, k: usize, sigma: f64) -> f64 {
    let v0 = params.noise_for(k, false).v0;
    two_sided_tail(0.125 / (v0 + k as f64 * sigma * sigma).sqrt())
}

/// Party `sk`'s partial decryption of `ct`, whose slot `slot` holds its mask (dimension `k·n`).
///
/// # Errors
/// If `slot` is out of range, the dimension is not a multiple of `n`, or `sigma` is invalid.
///
/// # Example
///
/// Two parties' keys simulated in one process (**insecure**, toy parameters), a bootstrapped
/// NAND, one partial decryption per party, combined:
///
/// ```
/// use coterie_math::prg::Csprng;
/// use coterie_tfhe::mk::decrypt::*;
/// use coterie_tfhe::mk::eval::{MkServerKey, embed};
/// use coterie_tfhe::mk::keygen::{Crs, insecure_simulate_all_parties};
/// use coterie_tfhe::mk::params::MkParams;
/// use coterie_tfhe::public_key::ProductMethod;
/// let mut rng = Csprng::new();
/// let params = MkParams::insecure_toy(2);
/// let crs = Crs { seed: [2; 32] };
/// let (sks, ek) =
///     insecure_simulate_all_parties(&params, 2, &crs, ProductMethod::Exact, &mut rng).unwrap();
/// let server = MkServerKey::new(&ek).unwrap();
/// let mut ev = server.evaluator().unwrap();
/// let a = embed(&sks[0].encrypt_bool_local(&params, false, &mut rng).unwrap(), 0, 2).unwrap();
/// let b = embed(&sks[1].encrypt_bool_local(&params, true, &mut rng).unwrap(), 1, 2).unwrap();
/// let c = ev.nand(&a, &b).unwrap();
/// let sigma = default_smudging_std(&params, 2);
/// let parts: Vec<_> = (0..2)
///     .map(|slot| partial_decrypt(&sks[slot], slot, &c, sigma, &mut rng).unwrap())
///     .collect();
/// let (bit, _phase) = combine_partial_decryptions(&c, 2, &parts).unwrap();
/// assert!(bit);
/// ```
pub fn partial_decrypt<R: CryptoRng + ?Sized>(
    sk: &MkSecretKey,
    slot: usize,
    ct: &LweCiphertext<u32>,
    sigma_smudge: f64,
    rng: &mut R,
) -> Result<PartialDecryption> {
    let n = sk.lwe_key().dimension();
    if n == 0 || !ct.dimension().is_multiple_of(n) || slot >= ct.dimension() / n {
        return Err(Error::InvalidParameter("slot or dimension".into()));
    }
    let noise = NoiseSampler::new(sigma_smudge, 32)?;
    let mut acc = 0u32;
    for (a, s) in ct.mask()[slot * n..(slot + 1) * n]
        .iter()
        .zip(sk.lwe_key().as_slice())
    {
        acc = acc.wrapping_add(a.wrapping_mul(*s));
    }
    Ok(PartialDecryption {
        slot,
        value: acc.wrapping_add(noise.sample::<u32, R>(rng)),
    })
}

/// Combines one partial decryption per slot: the phase `b − Σ_p d_p` (returned) and the bit
/// (`phase ∈ [0, 1/2)`).
///
/// # Errors
/// [`Error::InvalidParameter`] unless every slot `0..k` appears exactly once.
///
/// See the example of [`partial_decrypt`], which ends with this step.
pub fn combine_partial_decryptions(
    ct: &LweCiphertext<u32>,
    k: usize,
    partials: &[PartialDecryption],
) -> Result<(bool, u32)> {
    if k == 0 || !ct.dimension().is_multiple_of(k) || partials.len() != k {
        return Err(Error::InvalidParameter("need one partial per slot".into()));
    }
    let mut seen = vec![false; k];
    let mut phase = ct.body();
    for p in partials {
        if p.slot >= k || seen[p.slot] {
            return Err(Error::InvalidParameter(
                "partial decryption slot repeated or out of range".into(),
            ));
        }
        seen[p.slot] = true;
        phase = phase.wrapping_sub(p.value);
    }
    Ok(((phase as i32) > 0, phase))
}

/// Converts a multi-key ciphertext (Boolean encoding `±1/8`) into the form coterie-threshold
/// decrypts by MPC rounding: the same LWE ciphertext type over `q = 2^32` (64-bit words below
/// `2^32`) with the message modulus `p = 4` and `b' = b + 2^29` (phase `μ + 1/8 + e`: `1/4 + e`
/// for true, `e` for false), so the rounded message is **1 for true, 0 for false** while
/// `|e| < 1/8`. The mask is party-major, like the concatenation of the parties' key segments
/// ([`MkSecretKey::lwe_key_segment`], party `slot` at `slot·n .. (slot+1)·n`).
///
/// ```
/// use coterie_tfhe::lwe::LweCiphertext;
/// use coterie_tfhe::mk::decrypt::to_mpc_rounding_form;
/// let ct = LweCiphertext::trivial(4, 1u32 << 29); // true, noiseless
/// let f = to_mpc_rounding_form(&ct);
/// assert_eq!((f.modulus_log(), f.message_log()), (32, 2));
/// assert_eq!(f.phase_with_secret_key(&[0; 4]), 1 << 30); // round(4·phase) = 1
/// ```
pub fn to_mpc_rounding_form(ct: &LweCiphertext<u32>) -> LweCiphertext<u64> {
    let mut data: Vec<u64> = ct.as_slice().iter().map(|&x| u64::from(x)).collect();
    let n = ct.dimension();
    data[n] = u64::from(ct.body().wrapping_add(EIGHTH_U32));
    match LweCiphertext::from_parts(data, 32, 2) {
        Ok(c) => c,
        Err(_) => unreachable!("32-bit words lie below 2^32 and (32, 2) are valid moduli"),
    }
}

impl MkSecretKey {
    /// This party's segment of the concatenated LWE key, as the integers (`0`/`1`) coterie-
    /// threshold's key input takes; it occupies coefficients `slot·n .. (slot+1)·n` of the key of
    /// [`to_mpc_rounding_form`]'s ciphertext, `slot` being the party's position in the
    /// evaluation key's party list. **Secret**: input it only into the MPC.
    pub fn lwe_key_segment(&self) -> zeroize::Zeroizing<Vec<u64>> {
        zeroize::Zeroizing::new(
            self.lwe_key()
                .as_slice()
                .iter()
                .map(|&x| u64::from(x))
                .collect(),
        )
    }

    /// The coefficient range of slot `slot`'s segment in a `k·n`-dimensional key.
    pub fn segment_range(&self, slot: usize) -> core::ops::Range<usize> {
        let n = self.lwe_key().dimension();
        slot * n..(slot + 1) * n
    }
}
