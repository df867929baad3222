//! AKÖ evaluation: bootstrapping over the concatenated LWE key and the summed RLWE key,
//! multi-key key switching, and the Boolean gates.
//!
//! A multi-key ciphertext of `k` parties is an LWE sample of dimension `k·n` on the 32-bit torus
//! under the concatenation `s = (s^(1), …, s^(k))` (party-major; a party's slot is its position in
//! [`MkEvaluationKey::parties`]). Bootstrapping (seed 003 §2.3, steps 1–6):
//!
//! 1. the 32-bit input is lifted to 64 bits (`x·2^32`, exact; the modulus switch to `Z_{2N}`
//!    then rounds exactly as `round(2N·x/2^32)`);
//! 2. blind rotation is plain single-key TFHE blind rotation ([`blind_rotate_assign`]) over the
//!    `k·n` key bits with the `k·n` RGSW samples under `Z = Σ_p z^(p)`: the accumulator stays a
//!    **two-part** RLWE sample, and the cost is `k·n` external products — linear in `k`;
//! 3. sample extraction gives an LWE sample of dimension `N` under `Z` (64 bits), rounded to
//!    32 bits (`(x + 2^31) >> 32`, spec §1.8);
//! 4. key switching with the aggregated key (Eq. 8) gives dimension `k·n` under `s` again.
//!
//! **Sign erratum fixed** (seed 003 §1.6 and §10.2): the paper's literal blind rotation
//! multiplies by `X^{+φ̃}` with `tv = +1/8·Σ X^j`, which under its own convention
//! `phase = b + ⟨s, a⟩` yields the *negated* lookup table (NAND would become AND). This
//! implementation rotates by `X^{−φ̃}` (the crate's [`blind_rotate_assign`] convention), so the
//! constant coefficient is `+1/8` for `φ̃ mod 2N ∈ [0, N)` and `−1/8` for `[N, 2N)`; test
//! `t1_sign_and_lut_pinning` pins it.
//!
//! FFT is used in evaluation (seed 003 allows it; O8): the crate's f64 FFT on 64-bit
//! coefficients. Test T8 (measured variance within 1.15x of Eq. 14) checks that its error stays
//! below the model.

use crate::boolean::Gate;
use crate::bootstrap::{BootstrapBuffers, FourierBootstrapKey, blind_rotate_assign};
use crate::glwe::{GlweCiphertext, extract_lwe_sample_from_glwe_ciphertext};
use crate::lwe::{LweCiphertext, LweKeyswitchKey, keyswitch_lwe_ciphertext};
use crate::mk::keygen::{MkEvaluationKey, MkSecretKey};
use crate::mk::params::MkParams;
use crate::{Error, Result};

/// `1/8` on the 32-bit torus.
pub const EIGHTH_U32: u32 = 1 << 29;

/// Embeds party-local ciphertext `ct` (dimension `n`, under `s^(q)`) into dimension `k·n` at
/// slot `slot` (zeros elsewhere): an LWE sample under the concatenated key (spec O4).
///
/// # Errors
/// [`Error::InvalidParameter`] if `slot ≥ k`.
pub fn embed(ct: &LweCiphertext<u32>, slot: usize, k: usize) -> Result<LweCiphertext<u32>> {
    if slot >= k {
        return Err(Error::InvalidParameter("slot out of range".into()));
    }
    let n = ct.dimension();
    let mut out = LweCiphertext::zero(k * n);
    out.as_mut_slice()[slot * n..(slot + 1) * n].copy_from_slice(ct.mask());
    *out.body_mut() = ct.body();
    Ok(out)
}

/// Sums party-local ciphertexts, one per slot (`parts[slot]` under `s^(slot)`, dimension `n`):
/// the result is an LWE sample under the concatenated key of the sum of their phases, with a
/// random mask in **every** slot. Used for "joint" encryptions: the owner encrypts its bit and
/// every other party an encryption of zero.
///
/// Why it matters: an input embedded from one party ([`embed`]) has zero masks in the other
/// slots, so its blind rotation skips those parties' CMuxes (rounded mask 0) — faster and less
/// noisy than a general ciphertext (e.g. any gate output, whose masks are random everywhere).
/// Benchmarks and noise measurements use inputs from this function.
///
/// # Errors
/// If `parts` is empty or the dimensions differ.
pub fn sum_local_encryptions(parts: &[LweCiphertext<u32>]) -> Result<LweCiphertext<u32>> {
    let k = parts.len();
    let n = parts.first().map_or(0, |c| c.dimension());
    if k == 0 || parts.iter().any(|c| c.dimension() != n) {
        return Err(Error::InvalidParameter(
            "parts of different dimensions".into(),
        ));
    }
    let mut out = LweCiphertext::zero(k * n);
    let mut body = 0u32;
    for (slot, c) in parts.iter().enumerate() {
        out.as_mut_slice()[slot * n..(slot + 1) * n].copy_from_slice(c.mask());
        body = body.wrapping_add(c.body());
    }
    *out.body_mut() = body;
    Ok(out)
}

/// Phase of a multi-key ciphertext with **all** parties' secret keys in slot order — a
/// test/oracle function only (no party ever holds them all); see [`crate::mk::decrypt`] for
/// distributed decryption.
///
/// # Panics
/// If the dimensions do not match.
pub fn phase_with_all_keys(keys: &[&MkSecretKey], ct: &LweCiphertext<u32>) -> u32 {
    let n = keys.first().map_or(0, |k| k.lwe_key().dimension());
    assert_eq!(ct.dimension(), keys.len() * n, "dimension mismatch");
    let mut acc = ct.body();
    for (slot, k) in keys.iter().enumerate() {
        for (a, s) in ct.mask()[slot * n..(slot + 1) * n]
            .iter()
            .zip(k.lwe_key().as_slice())
        {
            acc = acc.wrapping_sub(a.wrapping_mul(*s));
        }
    }
    acc
}

/// `DecrBool` with all keys (test/oracle only): `phase ∈ [0, 1/2)` is true.
pub fn decrypt_bool_with_all_keys(keys: &[&MkSecretKey], ct: &LweCiphertext<u32>) -> bool {
    (phase_with_all_keys(keys, ct) as i32) > 0
}

/// The evaluator's key: Fourier-domain blind-rotate key and the aggregated key-switching key.
#[derive(Debug)]
pub struct MkServerKey {
    params: MkParams,
    parties: Vec<usize>,
    fbsk: FourierBootstrapKey,
    ksk: LweKeyswitchKey<u32>,
}

impl MkServerKey {
    /// Converts an evaluation key (Fourier transform of the blind-rotate key).
    ///
    /// # Errors
    /// If the key's shape is inconsistent with its parameters.
    pub fn new(ek: &MkEvaluationKey) -> Result<Self> {
        let p = &ek.params;
        p.validate()?;
        let kn = ek.parties.len() * p.lwe_dimension;
        if ek.bsk.input_lwe_dimension() != kn
            || ek.bsk.poly_size() != p.polynomial_size
            || ek.bsk.glwe_dimension() != 1
            || ek.ksk.input_dimension() != p.polynomial_size
            || ek.ksk.output_dimension() != kn
        {
            return Err(Error::InvalidParameter(
                "evaluation key shape does not match its parameters".into(),
            ));
        }
        Ok(Self {
            params: p.clone(),
            parties: ek.parties.clone(),
            fbsk: FourierBootstrapKey::from_key(&ek.bsk)?,
            ksk: ek.ksk.clone(),
        })
    }

    /// The parameters.
    pub fn params(&self) -> &MkParams {
        &self.params
    }

    /// The parties in slot order.
    pub fn parties(&self) -> &[usize] {
        &self.parties
    }

    /// Ciphertext dimension `k·n`.
    pub fn lwe_dimension(&self) -> usize {
        self.parties.len() * self.params.lwe_dimension
    }

    /// An evaluator (buffers for bootstrapping; one per thread).
    ///
    /// # Errors
    /// If the buffers cannot be built for the shape.
    pub fn evaluator(&self) -> Result<MkEvaluator<'_>> {
        let n_big = self.params.polynomial_size;
        let kn = self.lwe_dimension();
        Ok(MkEvaluator {
            key: self,
            bufs: self.fbsk.new_buffers::<u64>()?,
            acc: GlweCiphertext::zero(1, n_big),
            tv: vec![1u64 << 61; n_big],
            lifted: LweCiphertext::zero(kn),
            extracted: LweCiphertext::zero(n_big),
            extracted32: LweCiphertext::zero(n_big),
        })
    }
}

/// Bootstrapping buffers bound to one [`MkServerKey`].
#[derive(Debug)]
pub struct MkEvaluator<'a> {
    key: &'a MkServerKey,
    bufs: BootstrapBuffers<u64>,
    acc: GlweCiphertext<u64>,
    tv: Vec<u64>,
    lifted: LweCiphertext<u64>,
    extracted: LweCiphertext<u64>,
    extracted32: LweCiphertext<u32>,
}

impl MkEvaluator<'_> {
    fn check(&self, ct: &LweCiphertext<u32>) -> Result<()> {
        if ct.dimension() != self.key.lwe_dimension() {
            return Err(Error::InvalidParameter(format!(
                "ciphertext dimension {} is not k·n = {}",
                ct.dimension(),
                self.key.lwe_dimension()
            )));
        }
        Ok(())
    }

    /// Blind rotation of the sign test vector `1/8·Σ X^j` by the phase of `ct`: the
    /// accumulator, a two-part RLWE sample under `Z` of `X^{−φ̃}·tv`.
    ///
    /// # Errors
    /// If the dimension is not `k·n`.
    pub fn blind_rotate(&mut self, ct: &LweCiphertext<u32>) -> Result<&GlweCiphertext<u64>> {
        self.check(ct)?;
        for (d, s) in self.lifted.as_mut_slice().iter_mut().zip(ct.as_slice()) {
            *d = u64::from(*s) << 32;
        }
        self.acc.data.fill(0);
        self.acc.body_mut().copy_from_slice(&self.tv);
        blind_rotate_assign(&mut self.acc, &self.lifted, &self.key.fbsk, &mut self.bufs);
        Ok(&self.acc)
    }

    /// [`Self::blind_rotate`] then sample extraction: an LWE sample of dimension `N` under `Z`
    /// on the 64-bit torus (before key switching), encrypting `+1/8` for a phase in `[0, 1/2)`,
    /// `−1/8` otherwise.
    ///
    /// # Errors
    /// If the dimension is not `k·n`.
    pub fn blind_rotate_extract(&mut self, ct: &LweCiphertext<u32>) -> Result<&LweCiphertext<u64>> {
        self.blind_rotate(ct)?;
        extract_lwe_sample_from_glwe_ciphertext(&self.acc, &mut self.extracted, 0);
        Ok(&self.extracted)
    }

    /// Gate bootstrapping (`Bootstrap(c, tv, BK, KS)`): output `+1/8` (true) if the phase of
    /// `ct` lies in `[0, 1/2)`, `−1/8` otherwise, with fresh noise `V0` (Eq. 14).
    ///
    /// # Errors
    /// If the dimension is not `k·n`.
    ///
    /// # Example
    ///
    /// Two parties' keys simulated in one process (**insecure**, toy parameters): a fresh
    /// encryption of `true` by party 1, bootstrapped.
    ///
    /// ```
    /// use coterie_math::prg::Csprng;
    /// use coterie_tfhe::mk::eval::{MkServerKey, decrypt_bool_with_all_keys, embed};
    /// use coterie_tfhe::mk::keygen::{Crs, insecure_simulate_all_parties};
    /// use coterie_tfhe::mk::params::MkParams;
    /// use coterie_tfhe::public_key::ProductMethod;
    /// let mut rng = Csprng::new();
    /// let params = MkParams::insecure_toy(2);
    /// let crs = Crs { seed: [3; 32] };
    /// let (sks, ek) =
    ///     insecure_simulate_all_parties(&params, 2, &crs, ProductMethod::Exact, &mut rng).unwrap();
    /// let server = MkServerKey::new(&ek).unwrap();
    /// let mut ev = server.evaluator().unwrap();
    /// let c = embed(&sks[1].encrypt_bool_local(&params, true, &mut rng).unwrap(), 1, 2).unwrap();
    /// let fresh = ev.bootstrap(&c).unwrap();
    /// assert!(decrypt_bool_with_all_keys(&[&sks[0], &sks[1]], &fresh));
    /// ```
    pub fn bootstrap(&mut self, ct: &LweCiphertext<u32>) -> Result<LweCiphertext<u32>> {
        self.blind_rotate_extract(ct)?;
        for (d, s) in self
            .extracted32
            .as_mut_slice()
            .iter_mut()
            .zip(self.extracted.as_slice())
        {
            *d = (s.wrapping_add(1 << 31) >> 32) as u32;
        }
        let mut out = LweCiphertext::zero(self.key.lwe_dimension());
        keyswitch_lwe_ciphertext(&self.key.ksk, &self.extracted32, &mut out);
        Ok(out)
    }

    /// A two-input gate.
    ///
    /// # Errors
    /// If a dimension is not `k·n`.
    ///
    /// # Example
    ///
    /// Two parties' keys simulated in one process (**insecure**, toy parameters):
    ///
    /// ```
    /// use coterie_math::prg::Csprng;
    /// use coterie_tfhe::boolean::Gate;
    /// use coterie_tfhe::mk::eval::{MkServerKey, decrypt_bool_with_all_keys, embed};
    /// use coterie_tfhe::mk::keygen::{Crs, insecure_simulate_all_parties};
    /// use coterie_tfhe::mk::params::MkParams;
    /// use coterie_tfhe::public_key::ProductMethod;
    /// let mut rng = Csprng::new();
    /// let params = MkParams::insecure_toy(2);
    /// let crs = Crs { seed: [1; 32] };
    /// let (sks, ek) =
    ///     insecure_simulate_all_parties(&params, 2, &crs, ProductMethod::Exact, &mut rng).unwrap();
    /// let server = MkServerKey::new(&ek).unwrap();
    /// let mut ev = server.evaluator().unwrap();
    /// let a = embed(&sks[0].encrypt_bool_local(&params, true, &mut rng).unwrap(), 0, 2).unwrap();
    /// let b = embed(&sks[1].encrypt_bool_local(&params, true, &mut rng).unwrap(), 1, 2).unwrap();
    /// let c = ev.gate(Gate::Nand, &a, &b).unwrap();
    /// assert!(!decrypt_bool_with_all_keys(&[&sks[0], &sks[1]], &c));
    /// ```
    pub fn gate(
        &mut self,
        g: Gate,
        a: &LweCiphertext<u32>,
        b: &LweCiphertext<u32>,
    ) -> Result<LweCiphertext<u32>> {
        self.check(a)?;
        self.check(b)?;
        let (c, k) = g.linear::<u32>();
        let mut t = a.clone();
        t.add_assign(b);
        t.scalar_mul_assign(c);
        t.add_plaintext_assign(k);
        self.bootstrap(&t)
    }

    /// `¬(a ∧ b)`.
    ///
    /// # Errors
    /// If a dimension is not `k·n`.
    pub fn nand(
        &mut self,
        a: &LweCiphertext<u32>,
        b: &LweCiphertext<u32>,
    ) -> Result<LweCiphertext<u32>> {
        self.gate(Gate::Nand, a, b)
    }

    /// `a ∧ b`.
    ///
    /// # Errors
    /// If a dimension is not `k·n`.
    pub fn and(
        &mut self,
        a: &LweCiphertext<u32>,
        b: &LweCiphertext<u32>,
    ) -> Result<LweCiphertext<u32>> {
        self.gate(Gate::And, a, b)
    }

    /// `a ∨ b`.
    ///
    /// # Errors
    /// If a dimension is not `k·n`.
    pub fn or(
        &mut self,
        a: &LweCiphertext<u32>,
        b: &LweCiphertext<u32>,
    ) -> Result<LweCiphertext<u32>> {
        self.gate(Gate::Or, a, b)
    }

    /// `¬a` (no bootstrapping: negation).
    pub fn not(&self, a: &LweCiphertext<u32>) -> LweCiphertext<u32> {
        let mut t = a.clone();
        t.neg_assign();
        t
    }

    /// Unsigned comparison `x > y` of two little-endian bit vectors of equal length `w ≥ 1`:
    /// `gt ← (x_i ∧ ¬y_i) ∨ ((x_i ∨ ¬y_i) ∧ gt)` from the least significant bit up
    /// (`4w − 3` bootstraps).
    ///
    /// # Errors
    /// If the lengths differ or are zero, or a dimension is not `k·n`.
    pub fn greater_than(
        &mut self,
        x: &[LweCiphertext<u32>],
        y: &[LweCiphertext<u32>],
    ) -> Result<LweCiphertext<u32>> {
        if x.len() != y.len() || x.is_empty() {
            return Err(Error::InvalidParameter(
                "operands of different or zero width".into(),
            ));
        }
        let mut gt = self.and(&x[0], &self.not(&y[0]))?;
        for (xi, yi) in x.iter().zip(y).skip(1) {
            let ny = self.not(yi);
            let strict = self.and(xi, &ny)?;
            let ge = self.or(xi, &ny)?;
            let keep = self.and(&ge, &gt)?;
            gt = self.or(&strict, &keep)?;
        }
        Ok(gt)
    }

    /// A trivial (noiseless, keyless) encryption of a constant bit.
    pub fn trivial(&self, bit: bool) -> LweCiphertext<u32> {
        LweCiphertext::trivial(
            self.key.lwe_dimension(),
            if bit {
                EIGHTH_U32
            } else {
                EIGHTH_U32.wrapping_neg()
            },
        )
    }
}
