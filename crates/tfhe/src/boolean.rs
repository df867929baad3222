//! Gate bootstrapping and programmable bootstrapping with client/server keys.
//!
//! Ciphertexts live under the small LWE key (dimension `n`), as in TFHE-rs's boolean default
//! (`EncryptionKeyChoice::Small`): a gate is a linear combination, a blind rotation over the
//! `n` key bits, a sample extraction (dimension `k·N`) and a key switch back to dimension `n`.
//! Booleans are encoded as `±1/8` (true = `+1/8`, seed 003 erratum 1).

use rand_core::CryptoRng;

use crate::bootstrap::{
    BootstrapBuffers, FourierBootstrapKey, LweBootstrapKey, decode_message, delta, encode_message,
    generate_lut, generate_lwe_bootstrap_key, programmable_bootstrap_lwe_ciphertext,
};
use crate::glwe::{GlweCiphertext, GlweSecretKey};
use crate::lwe::{
    LweCiphertext, LweKeyswitchKey, LweSecretKey, decrypt_lwe_ciphertext, encrypt_lwe_ciphertext,
    generate_lwe_keyswitch_key, keyswitch_lwe_ciphertext,
};
use crate::noise::NoiseSampler;
use crate::params::TfheParams;
use crate::torus::Torus;
use crate::{Error, Result};

/// The secret keys of one party: the small LWE key (dimension `n`) and the GLWE key.
#[derive(Clone, Debug)]
pub struct ClientKey<T: Torus> {
    pub(crate) params: TfheParams,
    pub(crate) lwe_key: LweSecretKey<T>,
    pub(crate) glwe_key: GlweSecretKey<T>,
    pub(crate) lwe_noise: NoiseSampler,
}

fn check_width<T: Torus>(params: &TfheParams) -> Result<()> {
    params.validate()?;
    if params.torus_bits != T::BITS {
        return Err(Error::InvalidParameter(format!(
            "parameter set {} is for a {}-bit torus, not {}",
            params.name,
            params.torus_bits,
            T::BITS
        )));
    }
    Ok(())
}

impl<T: Torus> ClientKey<T> {
    /// Fresh secret keys for `params` (from `rng`, which must be a CSPRNG seeded from OS entropy
    /// for real use).
    ///
    /// # Errors
    /// If the parameters are invalid or for another torus width.
    pub fn generate<R: CryptoRng + ?Sized>(params: &TfheParams, rng: &mut R) -> Result<Self> {
        check_width::<T>(params)?;
        let lwe_key = LweSecretKey::generate_binary(params.lwe_dimension, rng);
        let glwe_key = GlweSecretKey::generate(
            params.glwe_dimension,
            params.polynomial_size,
            params.glwe_key,
            rng,
        )?;
        Self::from_keys(params, lwe_key, glwe_key)
    }

    /// Client key from existing secret keys.
    ///
    /// # Errors
    /// If the key shapes do not match `params`.
    pub fn from_keys(
        params: &TfheParams,
        lwe_key: LweSecretKey<T>,
        glwe_key: GlweSecretKey<T>,
    ) -> Result<Self> {
        check_width::<T>(params)?;
        if lwe_key.dimension() != params.lwe_dimension
            || glwe_key.glwe_dimension() != params.glwe_dimension
            || glwe_key.poly_size() != params.polynomial_size
        {
            return Err(Error::InvalidParameter(
                "key shapes do not match the parameters".into(),
            ));
        }
        Ok(Self {
            lwe_noise: NoiseSampler::new(params.lwe_noise_std, T::BITS)?,
            params: params.clone(),
            lwe_key,
            glwe_key,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &TfheParams {
        &self.params
    }
    /// The small LWE key.
    pub fn lwe_key(&self) -> &LweSecretKey<T> {
        &self.lwe_key
    }
    /// The GLWE key.
    pub fn glwe_key(&self) -> &GlweSecretKey<T> {
        &self.glwe_key
    }

    /// Encrypts a boolean as `±1/8`.
    pub fn encrypt_bool<R: CryptoRng + ?Sized>(&self, bit: bool, rng: &mut R) -> LweCiphertext<T> {
        let mu = T::encode(if bit { 0.125 } else { -0.125 });
        let mut c = LweCiphertext::zero(self.params.lwe_dimension);
        encrypt_lwe_ciphertext(&self.lwe_key, &mut c, mu, &self.lwe_noise, rng);
        c
    }

    /// Decrypts a boolean: the sign of the phase.
    pub fn decrypt_bool(&self, ct: &LweCiphertext<T>) -> bool {
        decrypt_lwe_ciphertext(&self.lwe_key, ct).to_i64_centered() > 0
    }

    /// Encrypts a `bits`-bit message `m` (one padding bit, [`encode_message`]).
    pub fn encrypt_message<R: CryptoRng + ?Sized>(
        &self,
        m: u64,
        bits: u32,
        rng: &mut R,
    ) -> LweCiphertext<T> {
        let mut c = LweCiphertext::zero(self.params.lwe_dimension);
        encrypt_lwe_ciphertext(
            &self.lwe_key,
            &mut c,
            encode_message(m, bits),
            &self.lwe_noise,
            rng,
        );
        c
    }

    /// Decrypts a `bits`-bit message; `None` if the padding bit is set.
    pub fn decrypt_message(&self, ct: &LweCiphertext<T>, bits: u32) -> Option<u64> {
        decode_message(decrypt_lwe_ciphertext(&self.lwe_key, ct), bits)
    }
}

/// The public evaluation keys: bootstrapping key (coefficient and Fourier form) and key-switching
/// key from the extracted `k·N` key to the small key.
#[derive(Clone, Debug)]
pub struct ServerKey<T: Torus> {
    pub(crate) params: TfheParams,
    pub(crate) bsk: LweBootstrapKey<T>,
    pub(crate) fbsk: FourierBootstrapKey,
    pub(crate) ksk: LweKeyswitchKey<T>,
}

impl<T: Torus> ServerKey<T> {
    /// Generates the evaluation keys of `ck`.
    ///
    /// # Errors
    /// If the parameters are unsupported.
    pub fn new<R: CryptoRng + ?Sized>(ck: &ClientKey<T>, rng: &mut R) -> Result<Self> {
        let p = &ck.params;
        let glwe_noise = NoiseSampler::new(p.glwe_noise_std, T::BITS)?;
        let bsk = generate_lwe_bootstrap_key(
            &ck.lwe_key,
            &ck.glwe_key,
            p.pbs_base_log,
            p.pbs_level,
            &glwe_noise,
            rng,
        )?;
        let big = ck.glwe_key.as_lwe_key();
        let ksk = generate_lwe_keyswitch_key(
            &big,
            &ck.lwe_key,
            p.ks_base_log,
            p.ks_level,
            &ck.lwe_noise,
            rng,
        )?;
        Self::from_parts(p.clone(), bsk, ksk)
    }

    /// Assembles a server key from its parts (e.g. after deserialization), building the Fourier
    /// form of the bootstrapping key.
    ///
    /// # Errors
    /// If the parts do not match the parameters.
    pub fn from_parts(
        params: TfheParams,
        bsk: LweBootstrapKey<T>,
        ksk: LweKeyswitchKey<T>,
    ) -> Result<Self> {
        check_width::<T>(&params)?;
        if bsk.input_lwe_dimension() != params.lwe_dimension
            || bsk.k != params.glwe_dimension
            || bsk.n != params.polynomial_size
            || bsk.base_log != params.pbs_base_log
            || bsk.levels != params.pbs_level
            || ksk.input_dimension != params.big_lwe_dimension()
            || ksk.output_dimension != params.lwe_dimension
            || ksk.base_log != params.ks_base_log
            || ksk.levels != params.ks_level
        {
            return Err(Error::Malformed(
                "server key parts do not match the parameters".into(),
            ));
        }
        let fbsk = FourierBootstrapKey::from_key(&bsk)?;
        Ok(Self {
            params,
            bsk,
            fbsk,
            ksk,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &TfheParams {
        &self.params
    }
    /// The coefficient-domain bootstrapping key.
    pub fn bootstrap_key(&self) -> &LweBootstrapKey<T> {
        &self.bsk
    }
    /// The Fourier-domain bootstrapping key.
    pub fn fourier_bootstrap_key(&self) -> &FourierBootstrapKey {
        &self.fbsk
    }
    /// The key-switching key.
    pub fn keyswitch_key(&self) -> &LweKeyswitchKey<T> {
        &self.ksk
    }

    /// An evaluator: this key plus the buffers of one thread.
    ///
    /// # Errors
    /// If the shapes are unsupported (not for keys built by this crate).
    pub fn evaluator(&self) -> Result<Evaluator<'_, T>> {
        let p = &self.params;
        let gate_lut = GlweCiphertext::trivial(
            p.glwe_dimension,
            p.polynomial_size,
            &vec![T::encode(0.125); p.polynomial_size],
        );
        Ok(Evaluator {
            sk: self,
            bufs: self.fbsk.new_buffers()?,
            big: LweCiphertext::zero(p.big_lwe_dimension()),
            tmp: LweCiphertext::zero(p.lwe_dimension),
            gate_lut,
        })
    }

    /// The lookup table of `f` on `bits`-bit messages (output with the same encoding).
    ///
    /// # Errors
    /// If `2^bits` boxes do not fit `N`.
    pub fn lut(&self, bits: u32, f: impl Fn(u64) -> u64) -> Result<GlweCiphertext<T>> {
        let mask = (1u64 << bits) - 1;
        generate_lut(
            self.params.glwe_dimension,
            self.params.polynomial_size,
            bits,
            |m| f(m) & mask,
            delta::<T>(bits),
        )
    }
}

/// Evaluates gates and lookup tables with one [`ServerKey`]; holds the buffers so that no gate
/// allocates except for its output ciphertext.
#[derive(Debug)]
pub struct Evaluator<'a, T: Torus> {
    sk: &'a ServerKey<T>,
    bufs: BootstrapBuffers<T>,
    big: LweCiphertext<T>,
    tmp: LweCiphertext<T>,
    gate_lut: GlweCiphertext<T>,
}

/// A two-input Boolean gate: the one gate list of single-key ([`Evaluator::gate`]) and multi-key
/// ([`crate::mk::eval::MkEvaluator::gate`]) TFHE. Both evaluate `c·(a + b) + k` for the
/// [`Gate::linear`] pair `(c, k)` on the `±1/8` encoding and bootstrap the sign.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Gate {
    /// `¬(a ∧ b)`: bootstrap `1/8 − a − b`.
    Nand,
    /// `a ∧ b`: bootstrap `a + b − 1/8`.
    And,
    /// `a ∨ b`: bootstrap `a + b + 1/8`.
    Or,
    /// `¬(a ∨ b)`: bootstrap `−a − b − 1/8`.
    Nor,
    /// `a ⊕ b`: bootstrap `2(a + b) + 1/4`. Its noise multiplier is `Σ k_i² = 8` instead of the
    /// `2` of the other gates; in multi-key TFHE, whose parameters were designed for `2`
    /// (seed 003 Eq. 16), its error rate is higher (κ halves).
    Xor,
    /// `¬(a ⊕ b)`: bootstrap `−2(a + b) − 1/4`; same caveat as [`Gate::Xor`].
    Xnor,
}

impl Gate {
    /// All six gates.
    pub const ALL: [Gate; 6] = [
        Gate::Nand,
        Gate::And,
        Gate::Or,
        Gate::Nor,
        Gate::Xor,
        Gate::Xnor,
    ];

    /// The plaintext truth function.
    ///
    /// ```
    /// use coterie_tfhe::boolean::Gate;
    /// assert!(Gate::Nand.eval(true, false) && !Gate::Xor.eval(true, true));
    /// ```
    pub fn eval(self, a: bool, b: bool) -> bool {
        match self {
            Gate::Nand => !(a && b),
            Gate::And => a && b,
            Gate::Or => a || b,
            Gate::Nor => !(a || b),
            Gate::Xor => a ^ b,
            Gate::Xnor => !(a ^ b),
        }
    }

    /// `(c, k)`: the gate bootstraps `c·(a + b) + k` (`k` on the torus `T`).
    ///
    /// ```
    /// use coterie_tfhe::{boolean::Gate, torus::Torus};
    /// assert_eq!(Gate::Xor.linear::<u32>(), (2, u32::encode(0.25)));
    /// ```
    pub fn linear<T: Torus>(self) -> (i64, T) {
        let e = T::encode(0.125);
        let q = T::encode(0.25);
        match self {
            Gate::Nand => (-1, e),
            Gate::And => (1, e.wrapping_neg()),
            Gate::Or => (1, e),
            Gate::Nor => (-1, e.wrapping_neg()),
            Gate::Xor => (2, q),
            Gate::Xnor => (-2, q.wrapping_neg()),
        }
    }
}

impl<T: Torus> Evaluator<'_, T> {
    fn check(&self, ct: &LweCiphertext<T>, dim: usize, what: &str) -> Result<()> {
        if ct.dimension() != dim {
            return Err(Error::InvalidParameter(format!(
                "{what} has LWE dimension {}, expected {dim}",
                ct.dimension()
            )));
        }
        Ok(())
    }

    fn check_lut(&self, lut: &GlweCiphertext<T>) -> Result<()> {
        let p = &self.sk.params;
        if lut.glwe_dimension() != p.glwe_dimension || lut.poly_size() != p.polynomial_size {
            return Err(Error::InvalidParameter(
                "lookup table shape does not match the key".into(),
            ));
        }
        Ok(())
    }

    /// Bootstraps `self.tmp` (dimension `n`) with `lut` and key-switches the result into `out`.
    fn bootstrap_tmp(&mut self, lut: Option<&GlweCiphertext<T>>, out: &mut LweCiphertext<T>) {
        let lut = lut.unwrap_or(&self.gate_lut);
        programmable_bootstrap_lwe_ciphertext(
            &self.tmp,
            &mut self.big,
            lut,
            &self.sk.fbsk,
            &mut self.bufs,
        );
        keyswitch_lwe_ciphertext(&self.sk.ksk, &self.big, out);
    }

    /// Evaluates `gate` on two encrypted booleans into `out` (one bootstrap + one key switch).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if a ciphertext is not of dimension `n`.
    pub fn gate_into(
        &mut self,
        gate: Gate,
        a: &LweCiphertext<T>,
        b: &LweCiphertext<T>,
        out: &mut LweCiphertext<T>,
    ) -> Result<()> {
        let n = self.sk.params.lwe_dimension;
        self.check(a, n, "left input")?;
        self.check(b, n, "right input")?;
        self.check(out, n, "output")?;
        let e8 = T::encode(0.125);
        let e4 = T::encode(0.25);
        self.tmp.as_mut_slice().copy_from_slice(a.as_slice());
        self.tmp.add_assign(b);
        match gate {
            Gate::Nand => {
                self.tmp.neg_assign();
                self.tmp.add_plaintext_assign(e8);
            }
            Gate::And => self.tmp.add_plaintext_assign(e8.wrapping_neg()),
            Gate::Or => self.tmp.add_plaintext_assign(e8),
            Gate::Nor => {
                self.tmp.neg_assign();
                self.tmp.add_plaintext_assign(e8.wrapping_neg());
            }
            Gate::Xor => {
                self.tmp.scalar_mul_assign(2);
                self.tmp.add_plaintext_assign(e4);
            }
            Gate::Xnor => {
                self.tmp.scalar_mul_assign(-2);
                self.tmp.add_plaintext_assign(e4.wrapping_neg());
            }
        }
        self.bootstrap_tmp(None, out);
        Ok(())
    }

    /// Evaluates `gate`, returning a new ciphertext.
    ///
    /// # Errors
    /// As [`Evaluator::gate_into`].
    pub fn gate(
        &mut self,
        gate: Gate,
        a: &LweCiphertext<T>,
        b: &LweCiphertext<T>,
    ) -> Result<LweCiphertext<T>> {
        let mut out = LweCiphertext::zero(self.sk.params.lwe_dimension);
        self.gate_into(gate, a, b, &mut out)?;
        Ok(out)
    }

    /// NAND.
    ///
    /// # Errors
    /// As [`Evaluator::gate_into`].
    pub fn nand(&mut self, a: &LweCiphertext<T>, b: &LweCiphertext<T>) -> Result<LweCiphertext<T>> {
        self.gate(Gate::Nand, a, b)
    }
    /// AND.
    ///
    /// # Errors
    /// As [`Evaluator::gate_into`].
    pub fn and(&mut self, a: &LweCiphertext<T>, b: &LweCiphertext<T>) -> Result<LweCiphertext<T>> {
        self.gate(Gate::And, a, b)
    }
    /// OR.
    ///
    /// # Errors
    /// As [`Evaluator::gate_into`].
    pub fn or(&mut self, a: &LweCiphertext<T>, b: &LweCiphertext<T>) -> Result<LweCiphertext<T>> {
        self.gate(Gate::Or, a, b)
    }
    /// NOR.
    ///
    /// # Errors
    /// As [`Evaluator::gate_into`].
    pub fn nor(&mut self, a: &LweCiphertext<T>, b: &LweCiphertext<T>) -> Result<LweCiphertext<T>> {
        self.gate(Gate::Nor, a, b)
    }
    /// XOR.
    ///
    /// # Errors
    /// As [`Evaluator::gate_into`].
    pub fn xor(&mut self, a: &LweCiphertext<T>, b: &LweCiphertext<T>) -> Result<LweCiphertext<T>> {
        self.gate(Gate::Xor, a, b)
    }
    /// XNOR.
    ///
    /// # Errors
    /// As [`Evaluator::gate_into`].
    pub fn xnor(&mut self, a: &LweCiphertext<T>, b: &LweCiphertext<T>) -> Result<LweCiphertext<T>> {
        self.gate(Gate::Xnor, a, b)
    }

    /// NOT (negation, no bootstrap; any dimension).
    pub fn not(&self, a: &LweCiphertext<T>) -> LweCiphertext<T> {
        let mut c = a.clone();
        c.neg_assign();
        c
    }

    /// Programmable bootstrapping of a message ciphertext (dimension `n`) with a lookup table from
    /// [`ServerKey::lut`], followed by key switching; the output is under the small key again.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if a ciphertext is not of dimension `n` or the table has
    /// another shape.
    pub fn apply_lut_into(
        &mut self,
        ct: &LweCiphertext<T>,
        lut: &GlweCiphertext<T>,
        out: &mut LweCiphertext<T>,
    ) -> Result<()> {
        let n = self.sk.params.lwe_dimension;
        self.check(ct, n, "input")?;
        self.check(out, n, "output")?;
        self.check_lut(lut)?;
        self.tmp.as_mut_slice().copy_from_slice(ct.as_slice());
        self.bootstrap_tmp(Some(lut), out);
        Ok(())
    }

    /// [`Evaluator::apply_lut_into`], returning a new ciphertext.
    ///
    /// # Errors
    /// As [`Evaluator::apply_lut_into`].
    pub fn apply_lut(
        &mut self,
        ct: &LweCiphertext<T>,
        lut: &GlweCiphertext<T>,
    ) -> Result<LweCiphertext<T>> {
        let mut out = LweCiphertext::zero(self.sk.params.lwe_dimension);
        self.apply_lut_into(ct, lut, &mut out)?;
        Ok(out)
    }

    /// Programmable bootstrapping **without** key switching (output dimension `k·N`), the
    /// operation TFHE-rs calls `programmable_bootstrap_lwe_ciphertext`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if the shapes do not match the key.
    pub fn pbs_no_ks_into(
        &mut self,
        ct: &LweCiphertext<T>,
        lut: &GlweCiphertext<T>,
        out: &mut LweCiphertext<T>,
    ) -> Result<()> {
        self.check(ct, self.sk.params.lwe_dimension, "input")?;
        self.check(out, self.sk.params.big_lwe_dimension(), "output")?;
        self.check_lut(lut)?;
        programmable_bootstrap_lwe_ciphertext(ct, out, lut, &self.sk.fbsk, &mut self.bufs);
        Ok(())
    }
}
