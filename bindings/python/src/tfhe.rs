//! `coterie._native.tfhe`: coterie-tfhe's single-key and multi-key (AKÖ) TFHE; see
//! python/coterie/tfhe.py for the Python-facing API.
//!
//! Everything calls the crate: key generation, encryption, the gates and bootstraps,
//! serialization, partial decryptions and their combination. Two small circuits are composed here
//! from the crate's single-key gates, which the crate's single-key evaluator lacks: the
//! multiplexer (`ServerKey.mux`) and the unsigned comparison (`ServerKey.greater_than`, the gate
//! sequence of the multi-key `MkEvaluator::greater_than`, which is called as is).
//!
//! Checks made here before calling Rust (each a `ValueError`): the torus width of a ciphertext
//! against the key's, the dimension of a ciphertext a client key decrypts (the crate asserts it),
//! integer widths and values, party counts and the length of a CRS seed. Everything else (a gate
//! on a ciphertext of another dimension, an out-of-range slot, malformed bytes, shares out of
//! order) is reported by the crate: `CoterieError` with its message.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use coterie_math::prg::{Csprng, fresh_seed};
use coterie_tfhe::boolean::{ClientKey as RsClientKey, Evaluator, Gate, ServerKey as RsServerKey};
use coterie_tfhe::lwe::LweCiphertext;
use coterie_tfhe::mk::decrypt as mkdec;
use coterie_tfhe::mk::eval::{self as mkeval, MkServerKey as RsMkServerKey};
use coterie_tfhe::mk::keygen::{self as mkkg, Crs as RsCrs, MkSecretKey as RsMkSecretKey};
use coterie_tfhe::mk::params::{MAX_PARTIES, MkParams as RsMkParams, TABLE3_PARTIES};
use coterie_tfhe::mk::wire::StoredSecretKey;
use coterie_tfhe::params::{KeyDistribution, TfheParams as RsTfheParams};
use coterie_tfhe::public_key::{GlwePublicKey, ProductMethod};
use coterie_tfhe::serialization::{Versioned, from_bytes, to_bytes};
use coterie_tfhe::torus::Torus;

use crate::{err, value_err};

/// The gate names accepted by `gate(name, a, b)`, in the crate's `Gate::ALL` order.
const GATE_NAMES: [&str; 6] = ["nand", "and", "or", "nor", "xor", "xnor"];

/// The named single-key parameter sets, in the order `TfheParams.names()` lists them.
const TFHE_PARAM_NAMES: [&str; 5] = [
    "tfhe_rs_boolean_default",
    "tfhe_rs_shortint_2_2_gaussian",
    "seed003_ako_k2_single_key",
    "seed003_ako_k16_single_key",
    "insecure_toy_u32",
];

fn gate_of(name: &str) -> PyResult<Gate> {
    GATE_NAMES
        .iter()
        .position(|g| g.eq_ignore_ascii_case(name))
        .map(|i| Gate::ALL[i])
        .ok_or_else(|| value_err(format!("unknown gate {name:?}; gates: {GATE_NAMES:?}")))
}

/// Encodes `x` with the crate's versioned envelope as Python `bytes`.
fn encode<'py, X: Versioned + Sync>(py: Python<'py>, x: &X) -> PyResult<Bound<'py, PyBytes>> {
    let v = py.detach(|| to_bytes(x)).map_err(err)?;
    Ok(PyBytes::new(py, &v))
}

/// Decodes with the crate's size-bounded decoder (the input is already in memory, so its own
/// length is the bound); malformed input is a `CoterieError`.
fn decode<X: Versioned + Send>(py: Python<'_>, data: &[u8]) -> PyResult<X> {
    py.detach(|| from_bytes::<X>(data, data.len())).map_err(err)
}

/// Checks an unsigned integer of `width` bits (1 to 64).
fn check_uint(value: u64, width: u32) -> PyResult<()> {
    if !(1..=64).contains(&width) {
        return Err(value_err(format!("width {width} is not in 1..=64")));
    }
    if width < 64 && value >> width != 0 {
        return Err(value_err(format!("{value} does not fit in {width} bits")));
    }
    Ok(())
}

fn check_parties(k: usize) -> PyResult<()> {
    if k == 0 || k > MAX_PARTIES {
        return Err(value_err(format!(
            "party count {k} is not in 1..={MAX_PARTIES}"
        )));
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------
// Single-key TFHE
// ------------------------------------------------------------------------------------------

/// A named single-key TFHE parameter set (coterie_tfhe::params::TfheParams).
///
/// Build one by name (`TfheParams.named("insecure_toy_u32")`) or with the static method of that
/// name. `insecure_toy_u32` is an **insecure toy** set for fast tests (security: none).
#[pyclass(frozen, eq, module = "coterie._native.tfhe")]
#[derive(Clone, PartialEq)]
pub struct TfheParams {
    inner: RsTfheParams,
}

#[pymethods]
impl TfheParams {
    /// The names of the crate's parameter sets.
    #[staticmethod]
    fn names() -> Vec<&'static str> {
        TFHE_PARAM_NAMES.to_vec()
    }

    /// The parameter set called `name` (see `names()`).
    #[staticmethod]
    fn named(name: &str) -> PyResult<Self> {
        let inner = match name {
            "tfhe_rs_boolean_default" => RsTfheParams::tfhe_rs_boolean_default(),
            "tfhe_rs_shortint_2_2_gaussian" => RsTfheParams::tfhe_rs_shortint_2_2_gaussian(),
            "seed003_ako_k2_single_key" => RsTfheParams::seed003_ako_k2_single_key(),
            "seed003_ako_k16_single_key" => RsTfheParams::seed003_ako_k16_single_key(),
            "insecure_toy_u32" => RsTfheParams::insecure_toy_u32(),
            _ => {
                return Err(value_err(format!(
                    "unknown parameter set {name:?}; sets: {TFHE_PARAM_NAMES:?}"
                )));
            }
        };
        Ok(Self { inner })
    }

    /// TFHE-rs 1.8.2's default boolean parameters (32-bit torus, 128 bits claimed by TFHE-rs).
    #[staticmethod]
    fn tfhe_rs_boolean_default() -> Self {
        Self {
            inner: RsTfheParams::tfhe_rs_boolean_default(),
        }
    }

    /// TFHE-rs 1.8.2's 2+2-bit shortint Gaussian set (64-bit torus).
    #[staticmethod]
    fn tfhe_rs_shortint_2_2_gaussian() -> Self {
        Self {
            inner: RsTfheParams::tfhe_rs_shortint_2_2_gaussian(),
        }
    }

    /// Seed 003 (AKÖ) Table 3 row k = 2 used with a single key (64-bit torus, about 100 bits).
    #[staticmethod]
    fn seed003_ako_k2_single_key() -> Self {
        Self {
            inner: RsTfheParams::seed003_ako_k2_single_key(),
        }
    }

    /// Seed 003 (AKÖ) Table 3 row k = 16 used with a single key (64-bit torus, about 100 bits).
    #[staticmethod]
    fn seed003_ako_k16_single_key() -> Self {
        Self {
            inner: RsTfheParams::seed003_ako_k16_single_key(),
        }
    }

    /// **Insecure toy** parameters for fast tests (n = 64, N = 256, 32-bit torus). Security: none.
    #[staticmethod]
    fn insecure_toy_u32() -> Self {
        Self {
            inner: RsTfheParams::insecure_toy_u32(),
        }
    }

    /// Name of the set.
    #[getter]
    fn name(&self) -> String {
        self.inner.name.clone()
    }
    /// Torus width in bits (32 or 64).
    #[getter]
    fn torus_bits(&self) -> u32 {
        self.inner.torus_bits
    }
    /// LWE dimension n (dimension of ciphertexts).
    #[getter]
    fn lwe_dimension(&self) -> usize {
        self.inner.lwe_dimension
    }
    /// GLWE dimension k.
    #[getter]
    fn glwe_dimension(&self) -> usize {
        self.inner.glwe_dimension
    }
    /// Ring degree N.
    #[getter]
    fn polynomial_size(&self) -> usize {
        self.inner.polynomial_size
    }
    /// k·N, the LWE dimension of extracted samples.
    #[getter]
    fn big_lwe_dimension(&self) -> usize {
        self.inner.big_lwe_dimension()
    }
    /// Torus standard deviation of LWE noise.
    #[getter]
    fn lwe_noise_std(&self) -> f64 {
        self.inner.lwe_noise_std
    }
    /// Torus standard deviation of GLWE noise.
    #[getter]
    fn glwe_noise_std(&self) -> f64 {
        self.inner.glwe_noise_std
    }
    /// GLWE key distribution: "binary" or "ternary".
    #[getter]
    fn glwe_key(&self) -> &'static str {
        match self.inner.glwe_key {
            KeyDistribution::Binary => "binary",
            KeyDistribution::Ternary { .. } => "ternary",
        }
    }
    /// Probability of each of ±1 for a ternary GLWE key, None for a binary one.
    #[getter]
    fn ternary_p(&self) -> Option<f64> {
        match self.inner.glwe_key {
            KeyDistribution::Binary => None,
            KeyDistribution::Ternary { p } => Some(p),
        }
    }
    /// Bootstrapping gadget base log.
    #[getter]
    fn pbs_base_log(&self) -> u32 {
        self.inner.pbs_base_log
    }
    /// Bootstrapping gadget levels.
    #[getter]
    fn pbs_level(&self) -> u32 {
        self.inner.pbs_level
    }
    /// Key-switching gadget base log.
    #[getter]
    fn ks_base_log(&self) -> u32 {
        self.inner.ks_base_log
    }
    /// Key-switching gadget levels.
    #[getter]
    fn ks_level(&self) -> u32 {
        self.inner.ks_level
    }
    /// Claimed security level in bits (0 for the insecure toy set).
    #[getter]
    fn security_bits(&self) -> f64 {
        self.inner.security_bits
    }

    /// The versioned encoding of the set.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        encode(py, &self.inner)
    }

    /// Decodes `to_bytes()` output (validated; CoterieError if malformed).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: decode(py, data)?,
        })
    }

    fn __repr__(&self) -> String {
        format!("TfheParams.named({:?})", self.inner.name)
    }
}

/// An LWE ciphertext of single-key TFHE (a boolean, or a message for `apply_lut`), on the torus
/// of its parameters.
#[derive(Clone, PartialEq)]
enum Ct {
    U32(LweCiphertext<u32>),
    U64(LweCiphertext<u64>),
}

/// A single-key TFHE ciphertext (an LWE sample under the small key of a `ClientKey`).
#[pyclass(frozen, eq, module = "coterie._native.tfhe")]
#[derive(Clone, PartialEq)]
pub struct Ciphertext {
    inner: Ct,
}

/// The torus widths the single-key binding handles, with the conversions to and from [`Ct`].
trait Width: Torus + Send + Sync {
    fn wrap(c: LweCiphertext<Self>) -> Ciphertext;
    fn get(c: &Ciphertext) -> PyResult<&LweCiphertext<Self>>;
}

fn width_mismatch(ct_bits: u32, key_bits: u32) -> PyErr {
    value_err(format!(
        "the ciphertext is on a {ct_bits}-bit torus, the key on a {key_bits}-bit one \
         (ciphertext of another parameter set)"
    ))
}

impl Width for u32 {
    fn wrap(c: LweCiphertext<u32>) -> Ciphertext {
        Ciphertext { inner: Ct::U32(c) }
    }
    fn get(c: &Ciphertext) -> PyResult<&LweCiphertext<u32>> {
        match &c.inner {
            Ct::U32(x) => Ok(x),
            Ct::U64(_) => Err(width_mismatch(64, 32)),
        }
    }
}

impl Width for u64 {
    fn wrap(c: LweCiphertext<u64>) -> Ciphertext {
        Ciphertext { inner: Ct::U64(c) }
    }
    fn get(c: &Ciphertext) -> PyResult<&LweCiphertext<u64>> {
        match &c.inner {
            Ct::U64(x) => Ok(x),
            Ct::U32(_) => Err(width_mismatch(32, 64)),
        }
    }
}

#[pymethods]
impl Ciphertext {
    /// Torus width in bits (32 or 64).
    #[getter]
    fn torus_bits(&self) -> u32 {
        match &self.inner {
            Ct::U32(_) => 32,
            Ct::U64(_) => 64,
        }
    }

    /// LWE dimension n (the mask length).
    #[getter]
    fn dimension(&self) -> usize {
        match &self.inner {
            Ct::U32(c) => c.dimension(),
            Ct::U64(c) => c.dimension(),
        }
    }

    /// The versioned encoding (kind and torus width in the envelope tag).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        match &self.inner {
            Ct::U32(c) => encode(py, c),
            Ct::U64(c) => encode(py, c),
        }
    }

    /// Decodes `to_bytes()` output of either torus width (CoterieError if malformed).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        Ok(match coterie_base::envelope::peek(data) {
            Ok((tag, _)) if u32::from(tag[3]) == 64 => u64::wrap(decode(py, data)?),
            _ => u32::wrap(decode(py, data)?),
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "Ciphertext(torus_bits={}, dimension={})",
            self.torus_bits(),
            self.dimension()
        )
    }
}

/// A single-key client key of either torus width.
#[derive(Clone)]
enum Ck {
    U32(RsClientKey<u32>),
    U64(RsClientKey<u64>),
}

/// The secret keys of single-key TFHE (small LWE key and GLWE key): encrypts and decrypts.
///
/// `ClientKey(params)` generates fresh keys from OS entropy.
#[pyclass(frozen, module = "coterie._native.tfhe")]
pub struct ClientKey {
    inner: Ck,
}

fn ck_encrypt<T: Width>(ck: &RsClientKey<T>, bit: bool) -> Ciphertext {
    T::wrap(ck.encrypt_bool(bit, &mut Csprng::new()))
}

fn ck_lwe<'a, T: Width>(ck: &RsClientKey<T>, ct: &'a Ciphertext) -> PyResult<&'a LweCiphertext<T>> {
    let c = T::get(ct)?;
    let n = ck.params().lwe_dimension;
    if c.dimension() != n {
        return Err(value_err(format!(
            "ciphertext dimension {} differs from the key's LWE dimension {n}",
            c.dimension()
        )));
    }
    Ok(c)
}

fn ck_decrypt<T: Width>(ck: &RsClientKey<T>, ct: &Ciphertext) -> PyResult<bool> {
    Ok(ck.decrypt_bool(ck_lwe(ck, ct)?))
}

fn check_message_bits(bits: u32) -> PyResult<()> {
    if !(1..=16).contains(&bits) {
        return Err(value_err(format!("message width {bits} is not in 1..=16")));
    }
    Ok(())
}

#[pymethods]
impl ClientKey {
    /// Fresh secret keys for `params` (GIL released).
    #[new]
    fn new(py: Python<'_>, params: PyRef<'_, TfheParams>) -> PyResult<Self> {
        let p = &params.inner;
        let inner = py
            .detach(|| {
                let mut rng = Csprng::new();
                if p.torus_bits == 64 {
                    RsClientKey::<u64>::generate(p, &mut rng).map(Ck::U64)
                } else {
                    RsClientKey::<u32>::generate(p, &mut rng).map(Ck::U32)
                }
            })
            .map_err(err)?;
        Ok(Self { inner })
    }

    /// The parameter set.
    #[getter]
    fn params(&self) -> TfheParams {
        let inner = match &self.inner {
            Ck::U32(k) => k.params().clone(),
            Ck::U64(k) => k.params().clone(),
        };
        TfheParams { inner }
    }

    /// Encrypts a boolean (`bool` only: an `int` raises TypeError).
    fn encrypt(&self, bit: bool) -> Ciphertext {
        match &self.inner {
            Ck::U32(k) => ck_encrypt(k, bit),
            Ck::U64(k) => ck_encrypt(k, bit),
        }
    }

    /// Decrypts a boolean.
    fn decrypt(&self, ct: PyRef<'_, Ciphertext>) -> PyResult<bool> {
        match &self.inner {
            Ck::U32(k) => ck_decrypt(k, &ct),
            Ck::U64(k) => ck_decrypt(k, &ct),
        }
    }

    /// Encrypts the `width` bits of `value`, least significant first (one ciphertext per bit).
    fn encrypt_uint(&self, value: u64, width: u32) -> PyResult<Vec<Ciphertext>> {
        check_uint(value, width)?;
        Ok((0..width)
            .map(|i| self.encrypt((value >> i) & 1 == 1))
            .collect())
    }

    /// Decrypts bits, least significant first, into an unsigned integer (at most 64 bits).
    fn decrypt_uint(&self, bits: Vec<PyRef<'_, Ciphertext>>) -> PyResult<u64> {
        if bits.is_empty() || bits.len() > 64 {
            return Err(value_err(format!(
                "{} bits: between 1 and 64 expected",
                bits.len()
            )));
        }
        let mut v = 0u64;
        for (i, b) in bits.into_iter().enumerate() {
            if self.decrypt(b)? {
                v |= 1 << i;
            }
        }
        Ok(v)
    }

    /// Encrypts the `bits`-bit message `m` (taken mod 2^bits, one padding bit) for `apply_lut`.
    fn encrypt_message(&self, m: u64, bits: u32) -> PyResult<Ciphertext> {
        check_message_bits(bits)?;
        let mut rng = Csprng::new();
        Ok(match &self.inner {
            Ck::U32(k) => u32::wrap(k.encrypt_message(m, bits, &mut rng)),
            Ck::U64(k) => u64::wrap(k.encrypt_message(m, bits, &mut rng)),
        })
    }

    /// Decrypts a `bits`-bit message; None if the padding bit is set (the phase overflowed).
    fn decrypt_message(&self, ct: PyRef<'_, Ciphertext>, bits: u32) -> PyResult<Option<u64>> {
        check_message_bits(bits)?;
        Ok(match &self.inner {
            Ck::U32(k) => k.decrypt_message(ck_lwe(k, &ct)?, bits),
            Ck::U64(k) => k.decrypt_message(ck_lwe(k, &ct)?, bits),
        })
    }

    /// The versioned encoding of the client key (secret).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        match &self.inner {
            Ck::U32(k) => encode(py, k),
            Ck::U64(k) => encode(py, k),
        }
    }

    /// Decodes `to_bytes()` output of either torus width (CoterieError if malformed).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let inner = match coterie_base::envelope::peek(data) {
            Ok((tag, _)) if u32::from(tag[3]) == 64 => Ck::U64(decode(py, data)?),
            _ => Ck::U32(decode(py, data)?),
        };
        Ok(Self { inner })
    }

    fn __repr__(&self) -> String {
        format!("ClientKey(params={}, secret)", self.params().inner.name)
    }
}

/// A single-key server key of either torus width.
enum Sk {
    U32(RsServerKey<u32>),
    U64(RsServerKey<u64>),
}

/// The public evaluation keys of single-key TFHE (bootstrapping and key-switching keys):
/// evaluates gates, the comparison and lookup tables on ciphertexts of its client key.
///
/// `ServerKey(client_key)` generates them (GIL released; about a second at real parameters).
#[pyclass(frozen, module = "coterie._native.tfhe")]
pub struct ServerKey {
    inner: Sk,
}

/// `(c ∧ a) ∨ (¬c ∧ b)`: three bootstraps with the crate's gates.
fn mux_with<T: Torus>(
    ev: &mut Evaluator<'_, T>,
    c: &LweCiphertext<T>,
    a: &LweCiphertext<T>,
    b: &LweCiphertext<T>,
) -> coterie_tfhe::Result<LweCiphertext<T>> {
    let ca = ev.and(c, a)?;
    let nc = ev.not(c);
    let ncb = ev.and(&nc, b)?;
    ev.or(&ca, &ncb)
}

/// Unsigned `x > y` on little-endian bits with the crate's gates, the sequence of
/// `MkEvaluator::greater_than`: `gt ← (x_i ∧ ¬y_i) ∨ ((x_i ∨ ¬y_i) ∧ gt)` (`4w − 3` bootstraps).
fn greater_than_with<T: Torus>(
    ev: &mut Evaluator<'_, T>,
    x: &[&LweCiphertext<T>],
    y: &[&LweCiphertext<T>],
) -> coterie_tfhe::Result<LweCiphertext<T>> {
    let mut gt = ev.and(x[0], &ev.not(y[0]))?;
    for (xi, yi) in x.iter().zip(y).skip(1) {
        let ny = ev.not(yi);
        let strict = ev.and(xi, &ny)?;
        let ge = ev.or(xi, &ny)?;
        let keep = ev.and(&ge, &gt)?;
        gt = ev.or(&strict, &keep)?;
    }
    Ok(gt)
}

fn sk_gate<T: Width>(
    py: Python<'_>,
    sk: &RsServerKey<T>,
    g: Gate,
    a: &Ciphertext,
    b: &Ciphertext,
) -> PyResult<Ciphertext> {
    let (a, b) = (T::get(a)?, T::get(b)?);
    let out = py.detach(|| sk.evaluator()?.gate(g, a, b)).map_err(err)?;
    Ok(T::wrap(out))
}

fn sk_not<T: Width>(sk: &RsServerKey<T>, a: &Ciphertext) -> PyResult<Ciphertext> {
    let c = T::get(a)?;
    let ev = sk.evaluator().map_err(err)?;
    Ok(T::wrap(ev.not(c)))
}

fn sk_mux<T: Width>(
    py: Python<'_>,
    sk: &RsServerKey<T>,
    c: &Ciphertext,
    a: &Ciphertext,
    b: &Ciphertext,
) -> PyResult<Ciphertext> {
    let (c, a, b) = (T::get(c)?, T::get(a)?, T::get(b)?);
    let out = py
        .detach(|| mux_with(&mut sk.evaluator()?, c, a, b))
        .map_err(err)?;
    Ok(T::wrap(out))
}

fn sk_greater_than<T: Width>(
    py: Python<'_>,
    sk: &RsServerKey<T>,
    x: &[PyRef<'_, Ciphertext>],
    y: &[PyRef<'_, Ciphertext>],
) -> PyResult<Ciphertext> {
    if x.len() != y.len() || x.is_empty() {
        return Err(value_err(format!(
            "operands of {} and {} bits: equal non-zero widths expected",
            x.len(),
            y.len()
        )));
    }
    let xs = x.iter().map(|c| T::get(c)).collect::<PyResult<Vec<_>>>()?;
    let ys = y.iter().map(|c| T::get(c)).collect::<PyResult<Vec<_>>>()?;
    let out = py
        .detach(|| greater_than_with(&mut sk.evaluator()?, &xs, &ys))
        .map_err(err)?;
    Ok(T::wrap(out))
}

fn sk_lut<T: Width>(
    py: Python<'_>,
    sk: &RsServerKey<T>,
    ct: &Ciphertext,
    table: &[u64],
) -> PyResult<Ciphertext> {
    let len = table.len();
    if !(2..=1 << 16).contains(&len) || !len.is_power_of_two() {
        return Err(value_err(format!(
            "a table of {len} entries: a power of two from 2 to 65536 expected"
        )));
    }
    let bits = len.trailing_zeros();
    let c = T::get(ct)?;
    let out = py
        .detach(|| {
            let lut = sk.lut(bits, |m| table[m as usize % len])?;
            sk.evaluator()?.apply_lut(c, &lut)
        })
        .map_err(err)?;
    Ok(T::wrap(out))
}

/// Dispatches a call on the server key's torus width.
macro_rules! on_sk {
    ($self:expr, $k:ident => $body:expr) => {
        match &$self.inner {
            Sk::U32($k) => $body,
            Sk::U64($k) => $body,
        }
    };
}

#[pymethods]
impl ServerKey {
    /// Generates the evaluation keys of `client_key` (GIL released).
    #[new]
    fn new(py: Python<'_>, client_key: PyRef<'_, ClientKey>) -> PyResult<Self> {
        let ck = &client_key.inner;
        let inner = py
            .detach(|| {
                let mut rng = Csprng::new();
                match ck {
                    Ck::U32(k) => RsServerKey::new(k, &mut rng).map(Sk::U32),
                    Ck::U64(k) => RsServerKey::new(k, &mut rng).map(Sk::U64),
                }
            })
            .map_err(err)?;
        Ok(Self { inner })
    }

    /// The parameter set.
    #[getter]
    fn params(&self) -> TfheParams {
        TfheParams {
            inner: on_sk!(self, k => k.params().clone()),
        }
    }

    /// The two-input gate `name` ("nand", "and", "or", "nor", "xor", "xnor"): one bootstrap.
    fn gate(
        &self,
        py: Python<'_>,
        name: &str,
        a: PyRef<'_, Ciphertext>,
        b: PyRef<'_, Ciphertext>,
    ) -> PyResult<Ciphertext> {
        let g = gate_of(name)?;
        on_sk!(self, k => sk_gate(py, k, g, &a, &b))
    }

    /// NOT (a AND b).
    fn nand(
        &self,
        py: Python<'_>,
        a: PyRef<'_, Ciphertext>,
        b: PyRef<'_, Ciphertext>,
    ) -> PyResult<Ciphertext> {
        on_sk!(self, k => sk_gate(py, k, Gate::Nand, &a, &b))
    }

    /// a AND b.
    fn and_(
        &self,
        py: Python<'_>,
        a: PyRef<'_, Ciphertext>,
        b: PyRef<'_, Ciphertext>,
    ) -> PyResult<Ciphertext> {
        on_sk!(self, k => sk_gate(py, k, Gate::And, &a, &b))
    }

    /// a OR b.
    fn or_(
        &self,
        py: Python<'_>,
        a: PyRef<'_, Ciphertext>,
        b: PyRef<'_, Ciphertext>,
    ) -> PyResult<Ciphertext> {
        on_sk!(self, k => sk_gate(py, k, Gate::Or, &a, &b))
    }

    /// NOT (a OR b).
    fn nor(
        &self,
        py: Python<'_>,
        a: PyRef<'_, Ciphertext>,
        b: PyRef<'_, Ciphertext>,
    ) -> PyResult<Ciphertext> {
        on_sk!(self, k => sk_gate(py, k, Gate::Nor, &a, &b))
    }

    /// a XOR b.
    fn xor(
        &self,
        py: Python<'_>,
        a: PyRef<'_, Ciphertext>,
        b: PyRef<'_, Ciphertext>,
    ) -> PyResult<Ciphertext> {
        on_sk!(self, k => sk_gate(py, k, Gate::Xor, &a, &b))
    }

    /// NOT (a XOR b).
    fn xnor(
        &self,
        py: Python<'_>,
        a: PyRef<'_, Ciphertext>,
        b: PyRef<'_, Ciphertext>,
    ) -> PyResult<Ciphertext> {
        on_sk!(self, k => sk_gate(py, k, Gate::Xnor, &a, &b))
    }

    /// NOT a (negation, no bootstrap).
    fn not_(&self, a: PyRef<'_, Ciphertext>) -> PyResult<Ciphertext> {
        on_sk!(self, k => sk_not(k, &a))
    }

    /// `a if c else b`, as (c AND a) OR (NOT c AND b) with the crate's gates (3 bootstraps).
    fn mux(
        &self,
        py: Python<'_>,
        c: PyRef<'_, Ciphertext>,
        a: PyRef<'_, Ciphertext>,
        b: PyRef<'_, Ciphertext>,
    ) -> PyResult<Ciphertext> {
        on_sk!(self, k => sk_mux(py, k, &c, &a, &b))
    }

    /// Encrypted `x > y` for unsigned integers given as equal-length lists of encrypted bits,
    /// least significant first (4w − 3 bootstraps with the crate's gates; GIL released).
    fn greater_than(
        &self,
        py: Python<'_>,
        x: Vec<PyRef<'_, Ciphertext>>,
        y: Vec<PyRef<'_, Ciphertext>>,
    ) -> PyResult<Ciphertext> {
        on_sk!(self, k => sk_greater_than(py, k, &x, &y))
    }

    /// Programmable bootstrapping of a message ciphertext (from `encrypt_message(m, bits)`) with
    /// the table `table` of 2^bits entries: the result encrypts `table[m] mod 2^bits`.
    fn apply_lut(
        &self,
        py: Python<'_>,
        ct: PyRef<'_, Ciphertext>,
        table: Vec<u64>,
    ) -> PyResult<Ciphertext> {
        on_sk!(self, k => sk_lut(py, k, &ct, &table))
    }

    /// The versioned encoding (coefficient-domain keys; public).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        on_sk!(self, k => encode(py, k))
    }

    /// Decodes `to_bytes()` output of either torus width, rebuilding the Fourier form
    /// (CoterieError if malformed; GIL released).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let inner = match coterie_base::envelope::peek(data) {
            Ok((tag, _)) if u32::from(tag[3]) == 64 => Sk::U64(decode(py, data)?),
            _ => Sk::U32(decode(py, data)?),
        };
        Ok(Self { inner })
    }

    fn __repr__(&self) -> String {
        format!("ServerKey(params={})", self.params().inner.name)
    }
}

// ------------------------------------------------------------------------------------------
// Multi-key TFHE (AKÖ)
// ------------------------------------------------------------------------------------------

/// An AKÖ multi-key TFHE parameter set (coterie_tfhe::mk::params::MkParams): Table 3 of seed
/// 003 by party count (`MkParams.ako(k)`), or the **insecure toy** set `insecure_toy(k)`.
#[pyclass(frozen, eq, module = "coterie._native.tfhe")]
#[derive(Clone, PartialEq)]
pub struct MkParams {
    inner: RsMkParams,
}

#[pymethods]
impl MkParams {
    /// Table 3's set for exactly `k` parties (k in TABLE3_PARTIES).
    #[staticmethod]
    fn ako(k: usize) -> PyResult<Self> {
        Ok(Self {
            inner: RsMkParams::ako(k).map_err(err)?,
        })
    }

    /// The smallest Table 3 set designed for at least `k` parties.
    #[staticmethod]
    fn ako_at_least(k: usize) -> PyResult<Self> {
        Ok(Self {
            inner: RsMkParams::ako_at_least(k).map_err(err)?,
        })
    }

    /// **Insecure toy** parameters for `k` parties (n = 32, N = 512, tiny noise). Security: none.
    #[staticmethod]
    fn insecure_toy(k: usize) -> PyResult<Self> {
        let inner = RsMkParams::insecure_toy(k);
        inner.validate().map_err(err)?;
        Ok(Self { inner })
    }

    /// Name of the set.
    #[getter]
    fn name(&self) -> String {
        self.inner.name.clone()
    }
    /// Number of parties the set is designed for.
    #[getter]
    fn parties(&self) -> usize {
        self.inner.parties
    }
    /// Per-party LWE dimension n (ciphertexts of k parties have dimension k·n).
    #[getter]
    fn lwe_dimension(&self) -> usize {
        self.inner.lwe_dimension
    }
    /// log2 of the LWE noise std α (32-bit torus).
    #[getter]
    fn lwe_noise_log2(&self) -> f64 {
        self.inner.lwe_noise_log2
    }
    /// Key-switching base log.
    #[getter]
    fn ks_base_log(&self) -> u32 {
        self.inner.ks_base_log
    }
    /// Key-switching levels.
    #[getter]
    fn ks_level(&self) -> u32 {
        self.inner.ks_level
    }
    /// Ring degree N.
    #[getter]
    fn polynomial_size(&self) -> usize {
        self.inner.polynomial_size
    }
    /// log2 of the RLWE noise std β (64-bit torus).
    #[getter]
    fn glwe_noise_log2(&self) -> f64 {
        self.inner.glwe_noise_log2
    }
    /// Blind-rotate-key base log.
    #[getter]
    fn pbs_base_log(&self) -> u32 {
        self.inner.pbs_base_log
    }
    /// Blind-rotate-key levels.
    #[getter]
    fn pbs_level(&self) -> u32 {
        self.inner.pbs_level
    }
    /// Ternary probability p of the RLWE keys.
    #[getter]
    fn ternary_p(&self) -> f64 {
        self.inner.ternary_p
    }
    /// Security estimate in bits (0 for the insecure toy set).
    #[getter]
    fn security_bits(&self) -> f64 {
        self.inner.security_bits
    }

    /// Eq. (14)'s noise breakdown for `k` parties (default: the set's own count) as a dict:
    /// v0, kappa, err1, err2, ... (static variant unless `dynamic`).
    #[pyo3(signature = (k=None, dynamic=false))]
    fn noise<'py>(
        &self,
        py: Python<'py>,
        k: Option<usize>,
        dynamic: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let k = k.unwrap_or(self.inner.parties);
        check_parties(k)?;
        let nb = self.inner.noise_for(k, dynamic);
        let d = PyDict::new(py);
        for (key, v) in [
            ("bk_term", nb.bk_term),
            ("bk_term_corrected", nb.bk_term_corrected),
            ("br_decomp", nb.br_decomp),
            ("ks_term", nb.ks_term),
            ("ks_decomp", nb.ks_decomp),
            ("v0", nb.v0),
            ("blind_rotation", nb.blind_rotation),
            ("v_round", nb.v_round),
            ("v_round_eq15", nb.v_round_eq15),
            ("kappa", nb.kappa),
            ("kappa_eq15", nb.kappa_eq15),
            ("err1", nb.err1),
            ("err2", nb.err2),
        ] {
            d.set_item(key, v)?;
        }
        Ok(d)
    }

    /// Evaluation-key size in bytes for `k` parties (default: the set's own count).
    #[pyo3(signature = (k=None))]
    fn key_bytes(&self, k: Option<usize>) -> PyResult<u64> {
        let k = k.unwrap_or(self.inner.parties);
        check_parties(k)?;
        Ok(self.inner.key_bytes(k))
    }

    /// The versioned encoding of the set.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        encode(py, &self.inner)
    }

    /// Decodes `to_bytes()` output (validated; CoterieError if malformed).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: decode(py, data)?,
        })
    }

    fn __repr__(&self) -> String {
        format!("MkParams({:?})", self.inner.name)
    }
}

/// The common reference string of a multi-key key generation: a public 32-byte seed from which
/// the common random polynomial is expanded. `Crs()` draws a fresh seed, `Crs(seed)` takes one.
#[pyclass(frozen, eq, module = "coterie._native.tfhe")]
#[derive(Clone, PartialEq)]
pub struct Crs {
    inner: RsCrs,
}

#[pymethods]
impl Crs {
    /// A CRS from a 32-byte seed, or a fresh random one.
    #[new]
    #[pyo3(signature = (seed=None))]
    fn new(seed: Option<&[u8]>) -> PyResult<Self> {
        let seed = match seed {
            None => fresh_seed(),
            Some(s) => s
                .try_into()
                .map_err(|_| value_err(format!("a CRS seed has 32 bytes, not {}", s.len())))?,
        };
        Ok(Self {
            inner: RsCrs { seed },
        })
    }

    /// The 32-byte seed.
    #[getter]
    fn seed<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.seed)
    }

    fn __repr__(&self) -> String {
        let hex: String = self.inner.seed.iter().map(|b| format!("{b:02x}")).collect();
        format!("Crs(bytes.fromhex({hex:?}))")
    }
}

/// A multi-key LWE ciphertext on the 32-bit torus: party-local (dimension n, under one party's
/// key, from `MkSecretKey.encrypt_bool`) or of k parties (dimension k·n, from `embed` or a gate).
#[pyclass(frozen, eq, module = "coterie._native.tfhe")]
#[derive(Clone, PartialEq)]
pub struct MkCiphertext {
    inner: LweCiphertext<u32>,
}

#[pymethods]
impl MkCiphertext {
    /// LWE dimension (n for a party-local ciphertext, k·n for one of k parties).
    #[getter]
    fn dimension(&self) -> usize {
        self.inner.dimension()
    }

    /// The versioned encoding.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        encode(py, &self.inner)
    }

    /// Decodes `to_bytes()` output (CoterieError if malformed).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: decode(py, data)?,
        })
    }

    fn __repr__(&self) -> String {
        format!("MkCiphertext(dimension={})", self.inner.dimension())
    }
}

/// One party's multi-key secret keys (LWE key and ternary RLWE key) with their parameters.
///
/// `MkSecretKey(params, party)` generates fresh keys for party index `party`.
#[pyclass(frozen, module = "coterie._native.tfhe")]
pub struct MkSecretKey {
    params: RsMkParams,
    key: RsMkSecretKey,
}

/// A party's public-key share `b = a·z + e` (round 1 of the key generation).
#[pyclass(frozen, eq, module = "coterie._native.tfhe")]
#[derive(Clone, PartialEq)]
pub struct PublicKeyShare {
    inner: mkkg::PublicKeyShare,
}

/// The common public key `(a, Σ b)` combined from all public-key shares.
#[pyclass(frozen, eq, module = "coterie._native.tfhe")]
#[derive(Clone, PartialEq)]
pub struct MkPublicKey {
    inner: GlwePublicKey<u64>,
}

/// A party's blind-rotate key rows (RGSW encryptions of its LWE key bits under the common key).
#[pyclass(frozen, eq, module = "coterie._native.tfhe")]
#[derive(Clone, PartialEq)]
pub struct BootstrapKeyShare {
    inner: mkkg::BootstrapKeyShare,
}

/// A party's key-switching key share.
#[pyclass(frozen, eq, module = "coterie._native.tfhe")]
#[derive(Clone, PartialEq)]
pub struct KeySwitchKeyShare {
    inner: mkkg::KeySwitchKeyShare,
}

/// The evaluation key of a set of parties (blind-rotate key and aggregated key-switching key).
#[pyclass(frozen, eq, module = "coterie._native.tfhe")]
#[derive(Clone, PartialEq)]
pub struct MkEvaluationKey {
    inner: mkkg::MkEvaluationKey,
}

/// A party's partial decryption `d = <a_slot, s> + e` of one multi-key ciphertext: a slot and
/// a 32-bit torus value (public; send it to whoever combines).
#[pyclass(frozen, eq, module = "coterie._native.tfhe")]
#[derive(Clone, PartialEq)]
pub struct PartialDecryption {
    inner: mkdec::PartialDecryption,
}

#[pymethods]
impl MkSecretKey {
    /// Fresh keys of party `party` for `params` (GIL released).
    #[new]
    fn new(py: Python<'_>, params: PyRef<'_, MkParams>, party: usize) -> PyResult<Self> {
        if party >= MAX_PARTIES {
            return Err(value_err(format!(
                "party index {party} is not below {MAX_PARTIES}"
            )));
        }
        let p = params.inner.clone();
        let key = py
            .detach(|| RsMkSecretKey::generate(&p, party, &mut Csprng::new()))
            .map_err(err)?;
        Ok(Self { params: p, key })
    }

    /// The party index.
    #[getter]
    fn party(&self) -> usize {
        self.key.party()
    }

    /// The parameter set.
    #[getter]
    fn params(&self) -> MkParams {
        MkParams {
            inner: self.params.clone(),
        }
    }

    /// Party-local encryption of a bit under this party's key (dimension n); `embed` it into a
    /// k-party ciphertext for a computation.
    fn encrypt_bool(&self, bit: bool) -> PyResult<MkCiphertext> {
        let inner = self
            .key
            .encrypt_bool_local(&self.params, bit, &mut Csprng::new())
            .map_err(err)?;
        Ok(MkCiphertext { inner })
    }

    /// Encrypts the `width` bits of `value` (least significant first), each embedded at slot
    /// `slot` (default: the party index) of a `k`-party ciphertext.
    #[pyo3(signature = (value, width, k, slot=None))]
    fn encrypt_uint(
        &self,
        value: u64,
        width: u32,
        k: usize,
        slot: Option<usize>,
    ) -> PyResult<Vec<MkCiphertext>> {
        check_uint(value, width)?;
        check_parties(k)?;
        let slot = slot.unwrap_or(self.key.party());
        let mut rng = Csprng::new();
        (0..width)
            .map(|i| {
                let local = self
                    .key
                    .encrypt_bool_local(&self.params, (value >> i) & 1 == 1, &mut rng)
                    .map_err(err)?;
                let inner = mkeval::embed(&local, slot, k).map_err(err)?;
                Ok(MkCiphertext { inner })
            })
            .collect()
    }

    /// This party's public-key share for `crs` (round 1 of the key generation).
    fn public_key_share(&self, py: Python<'_>, crs: PyRef<'_, Crs>) -> PyResult<PublicKeyShare> {
        let crs = crs.inner;
        let inner = py
            .detach(|| mkkg::public_key_share(&self.params, &crs, &self.key, &mut Csprng::new()))
            .map_err(err)?;
        Ok(PublicKeyShare { inner })
    }

    /// This party's blind-rotate key rows under the common public key (exact products; the
    /// slowest step: GIL released, `progress(label, done, total)` per key bit if given).
    #[pyo3(signature = (public_key, progress=None))]
    fn bootstrap_key_share(
        &self,
        py: Python<'_>,
        public_key: PyRef<'_, MkPublicKey>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<BootstrapKeyShare> {
        let ct = public_key.inner.as_ciphertext();
        if ct.glwe_dimension() != 1 || ct.poly_size() != self.params.polynomial_size {
            return Err(value_err(format!(
                "the public key has GLWE dimension {} and ring degree {}, the parameters 1 and {}",
                ct.glwe_dimension(),
                ct.poly_size(),
                self.params.polynomial_size
            )));
        }
        let pk = &public_key.inner;
        let progress = crate::progress(progress);
        let inner = py
            .detach(|| {
                let task = progress.task(
                    format!("party {}: blind-rotate key share", self.key.party()),
                    self.params.lwe_dimension as u64,
                );
                let r = mkkg::bootstrap_key_share_with_method(
                    &self.params,
                    pk,
                    &self.key,
                    ProductMethod::Exact,
                    &mut Csprng::new(),
                    |done| task.set(done as u64),
                );
                task.finish();
                r
            })
            .map_err(err)?;
        Ok(BootstrapKeyShare { inner })
    }

    /// This party's key-switching key share.
    fn keyswitch_key_share(&self, py: Python<'_>) -> PyResult<KeySwitchKeyShare> {
        let inner = py
            .detach(|| mkkg::keyswitch_key_share(&self.params, &self.key, &mut Csprng::new()))
            .map_err(err)?;
        Ok(KeySwitchKeyShare { inner })
    }

    /// This party's partial decryption of a k-party ciphertext whose slot `slot` (default: the
    /// party index) holds its mask, with smudging std `sigma` (default: the crate's
    /// `default_smudging_std(params, k)`).
    #[pyo3(signature = (ct, slot=None, sigma=None))]
    fn partial_decrypt(
        &self,
        ct: PyRef<'_, MkCiphertext>,
        slot: Option<usize>,
        sigma: Option<f64>,
    ) -> PyResult<PartialDecryption> {
        let slot = slot.unwrap_or(self.key.party());
        let sigma = sigma.unwrap_or_else(|| {
            let k = ct.inner.dimension() / self.params.lwe_dimension.max(1);
            mkdec::default_smudging_std(&self.params, k.max(1))
        });
        let inner = mkdec::partial_decrypt(&self.key, slot, &ct.inner, sigma, &mut Csprng::new())
            .map_err(err)?;
        Ok(PartialDecryption { inner })
    }

    /// The versioned encoding of the key with its parameters (secret).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let stored = StoredSecretKey {
            params: self.params.clone(),
            key: self.key.clone(),
        };
        encode(py, &stored)
    }

    /// Decodes `to_bytes()` output (validated; CoterieError if malformed).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let s: StoredSecretKey = decode(py, data)?;
        Ok(Self {
            params: s.params,
            key: s.key,
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "MkSecretKey(party={}, params={:?}, secret)",
            self.key.party(),
            self.params.name
        )
    }
}

/// One `#[pymethods]` block for a class wrapping a versioned crate type in `inner`: the given
/// methods plus `to_bytes`, `from_bytes` and `__repr__` (`|x| ...` formats the inner value).
macro_rules! versioned_class {
    ($ty:ident, |$x:ident| $repr:expr, { $($extra:tt)* }) => {
        #[pymethods]
        impl $ty {
            $($extra)*

            /// The versioned encoding.
            fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
                encode(py, &self.inner)
            }

            /// Decodes `to_bytes()` output (validated; CoterieError if malformed).
            #[staticmethod]
            fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
                Ok(Self {
                    inner: decode(py, data)?,
                })
            }

            fn __repr__(&self) -> String {
                let $x = &self.inner;
                $repr
            }
        }
    };
}

versioned_class!(
    PublicKeyShare,
    |s| format!("PublicKeyShare(party={})", s.party),
    {
        /// The sender's party index.
        #[getter]
        fn party(&self) -> usize {
            self.inner.party
        }
    }
);

versioned_class!(
    MkPublicKey,
    |k| format!("MkPublicKey(N={})", k.as_ciphertext().poly_size()),
    {}
);

versioned_class!(
    BootstrapKeyShare,
    |s| format!(
        "BootstrapKeyShare(party={}, rows={})",
        s.party,
        s.ggsw.len()
    ),
    {
        /// The sender's party index.
        #[getter]
        fn party(&self) -> usize {
            self.inner.party
        }
    }
);

versioned_class!(
    KeySwitchKeyShare,
    |s| format!("KeySwitchKeyShare(party={})", s.party),
    {
        /// The sender's party index.
        #[getter]
        fn party(&self) -> usize {
            self.inner.party
        }
    }
);

versioned_class!(
    MkEvaluationKey,
    |k| format!(
        "MkEvaluationKey(params={:?}, parties={:?})",
        k.params.name, k.parties
    ),
    {
        /// The parameter set.
        #[getter]
        fn params(&self) -> MkParams {
            MkParams {
                inner: self.inner.params.clone(),
            }
        }

        /// The parties in slot order (party `parties[i]` owns slot i of the ciphertexts).
        #[getter]
        fn parties(&self) -> Vec<usize> {
            self.inner.parties.clone()
        }

        /// Size in bytes (blind-rotate key + key-switching key).
        #[getter]
        fn size_bytes(&self) -> usize {
            self.inner.size_bytes()
        }
    }
);

#[pymethods]
impl PartialDecryption {
    /// A partial decryption from its parts (e.g. received from another party).
    #[new]
    fn new(slot: usize, value: u32) -> Self {
        Self {
            inner: mkdec::PartialDecryption { slot, value },
        }
    }

    /// The party's slot in the ciphertext.
    #[getter]
    fn slot(&self) -> usize {
        self.inner.slot
    }

    /// The value on the 32-bit torus.
    #[getter]
    fn value(&self) -> u32 {
        self.inner.value
    }

    fn __repr__(&self) -> String {
        format!(
            "PartialDecryption(slot={}, value={})",
            self.inner.slot, self.inner.value
        )
    }
}

/// The multi-key evaluator's key (Fourier-domain blind-rotate key and aggregated key-switching
/// key): gates on k-party ciphertexts. `MkServerKey(evaluation_key)` (GIL released).
#[pyclass(frozen, module = "coterie._native.tfhe")]
pub struct MkServerKey {
    inner: RsMkServerKey,
}

impl MkServerKey {
    fn gate_impl(
        &self,
        py: Python<'_>,
        g: Gate,
        a: &MkCiphertext,
        b: &MkCiphertext,
    ) -> PyResult<MkCiphertext> {
        let (a, b) = (&a.inner, &b.inner);
        let inner = py
            .detach(|| self.inner.evaluator()?.gate(g, a, b))
            .map_err(err)?;
        Ok(MkCiphertext { inner })
    }
}

#[pymethods]
impl MkServerKey {
    /// Converts an evaluation key (Fourier transform of the blind-rotate key; GIL released).
    #[new]
    fn new(py: Python<'_>, evaluation_key: PyRef<'_, MkEvaluationKey>) -> PyResult<Self> {
        let ek = &evaluation_key.inner;
        let inner = py.detach(|| RsMkServerKey::new(ek)).map_err(err)?;
        Ok(Self { inner })
    }

    /// The parameter set.
    #[getter]
    fn params(&self) -> MkParams {
        MkParams {
            inner: self.inner.params().clone(),
        }
    }

    /// The parties in slot order.
    #[getter]
    fn parties(&self) -> Vec<usize> {
        self.inner.parties().to_vec()
    }

    /// Ciphertext dimension k·n.
    #[getter]
    fn lwe_dimension(&self) -> usize {
        self.inner.lwe_dimension()
    }

    /// The two-input gate `name` ("nand", "and", "or", "nor", "xor", "xnor"): one multi-key
    /// bootstrap.
    fn gate(
        &self,
        py: Python<'_>,
        name: &str,
        a: PyRef<'_, MkCiphertext>,
        b: PyRef<'_, MkCiphertext>,
    ) -> PyResult<MkCiphertext> {
        let g = gate_of(name)?;
        self.gate_impl(py, g, &a, &b)
    }

    /// NOT (a AND b).
    fn nand(
        &self,
        py: Python<'_>,
        a: PyRef<'_, MkCiphertext>,
        b: PyRef<'_, MkCiphertext>,
    ) -> PyResult<MkCiphertext> {
        self.gate_impl(py, Gate::Nand, &a, &b)
    }

    /// a AND b.
    fn and_(
        &self,
        py: Python<'_>,
        a: PyRef<'_, MkCiphertext>,
        b: PyRef<'_, MkCiphertext>,
    ) -> PyResult<MkCiphertext> {
        self.gate_impl(py, Gate::And, &a, &b)
    }

    /// a OR b.
    fn or_(
        &self,
        py: Python<'_>,
        a: PyRef<'_, MkCiphertext>,
        b: PyRef<'_, MkCiphertext>,
    ) -> PyResult<MkCiphertext> {
        self.gate_impl(py, Gate::Or, &a, &b)
    }

    /// NOT (a OR b).
    fn nor(
        &self,
        py: Python<'_>,
        a: PyRef<'_, MkCiphertext>,
        b: PyRef<'_, MkCiphertext>,
    ) -> PyResult<MkCiphertext> {
        self.gate_impl(py, Gate::Nor, &a, &b)
    }

    /// a XOR b (higher error rate than the other gates with AKÖ parameters, see the crate).
    fn xor(
        &self,
        py: Python<'_>,
        a: PyRef<'_, MkCiphertext>,
        b: PyRef<'_, MkCiphertext>,
    ) -> PyResult<MkCiphertext> {
        self.gate_impl(py, Gate::Xor, &a, &b)
    }

    /// NOT (a XOR b) (same caveat as xor).
    fn xnor(
        &self,
        py: Python<'_>,
        a: PyRef<'_, MkCiphertext>,
        b: PyRef<'_, MkCiphertext>,
    ) -> PyResult<MkCiphertext> {
        self.gate_impl(py, Gate::Xnor, &a, &b)
    }

    /// NOT a (negation, no bootstrap).
    fn not_(&self, py: Python<'_>, a: PyRef<'_, MkCiphertext>) -> PyResult<MkCiphertext> {
        let ev = py.detach(|| self.inner.evaluator()).map_err(err)?;
        Ok(MkCiphertext {
            inner: ev.not(&a.inner),
        })
    }

    /// Gate bootstrapping of one ciphertext (refreshes its noise; same bit).
    fn bootstrap(&self, py: Python<'_>, ct: PyRef<'_, MkCiphertext>) -> PyResult<MkCiphertext> {
        let c = &ct.inner;
        let inner = py
            .detach(|| self.inner.evaluator()?.bootstrap(c))
            .map_err(err)?;
        Ok(MkCiphertext { inner })
    }

    /// Encrypted `x > y` for unsigned integers given as equal-length lists of k-party encrypted
    /// bits, least significant first (the crate's `greater_than`: 4w − 3 bootstraps; GIL released).
    fn greater_than(
        &self,
        py: Python<'_>,
        x: Vec<PyRef<'_, MkCiphertext>>,
        y: Vec<PyRef<'_, MkCiphertext>>,
    ) -> PyResult<MkCiphertext> {
        let xs: Vec<LweCiphertext<u32>> = x.iter().map(|c| c.inner.clone()).collect();
        let ys: Vec<LweCiphertext<u32>> = y.iter().map(|c| c.inner.clone()).collect();
        let inner = py
            .detach(|| self.inner.evaluator()?.greater_than(&xs, &ys))
            .map_err(err)?;
        Ok(MkCiphertext { inner })
    }

    /// A trivial (noiseless, keyless) k-party encryption of a constant bit.
    fn trivial(&self, py: Python<'_>, bit: bool) -> PyResult<MkCiphertext> {
        let ev = py.detach(|| self.inner.evaluator()).map_err(err)?;
        Ok(MkCiphertext {
            inner: ev.trivial(bit),
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "MkServerKey(params={:?}, parties={:?})",
            self.inner.params().name,
            self.inner.parties()
        )
    }
}

/// The common public key from all parties' public-key shares (increasing party order).
#[pyfunction]
fn combine_public_key(
    params: PyRef<'_, MkParams>,
    crs: PyRef<'_, Crs>,
    shares: Vec<PyRef<'_, PublicKeyShare>>,
) -> PyResult<MkPublicKey> {
    let shares: Vec<mkkg::PublicKeyShare> = shares.iter().map(|s| s.inner.clone()).collect();
    let inner = mkkg::combine_public_key(&params.inner, &crs.inner, &shares).map_err(err)?;
    Ok(MkPublicKey { inner })
}

/// The static evaluation key from all parties' blind-rotate and key-switching key shares (both
/// in the same increasing party order; a party's slot is its position). GIL released.
#[pyfunction]
fn combine_evaluation_key(
    py: Python<'_>,
    params: PyRef<'_, MkParams>,
    bootstrap_shares: Vec<PyRef<'_, BootstrapKeyShare>>,
    keyswitch_shares: Vec<PyRef<'_, KeySwitchKeyShare>>,
) -> PyResult<MkEvaluationKey> {
    let bsk: Vec<&mkkg::BootstrapKeyShare> = bootstrap_shares.iter().map(|s| &s.inner).collect();
    let ksk: Vec<&mkkg::KeySwitchKeyShare> = keyswitch_shares.iter().map(|s| &s.inner).collect();
    let p = &params.inner;
    let inner = py
        .detach(|| {
            let bsk: Vec<mkkg::BootstrapKeyShare> = bsk.into_iter().cloned().collect();
            let ksk: Vec<mkkg::KeySwitchKeyShare> = ksk.into_iter().cloned().collect();
            mkkg::combine_evaluation_key(p, &bsk, &ksk)
        })
        .map_err(err)?;
    Ok(MkEvaluationKey { inner })
}

/// Embeds a party-local ciphertext (dimension n) at slot `slot` of a `k`-party ciphertext.
#[pyfunction]
fn embed(ct: PyRef<'_, MkCiphertext>, slot: usize, k: usize) -> PyResult<MkCiphertext> {
    check_parties(k)?;
    let inner = mkeval::embed(&ct.inner, slot, k).map_err(err)?;
    Ok(MkCiphertext { inner })
}

/// Sums party-local ciphertexts, one per slot (`parts[slot]` under party `slot`'s key): a
/// k-party ciphertext of the sum of their phases with a random mask in every slot.
#[pyfunction]
fn sum_local_encryptions(parts: Vec<PyRef<'_, MkCiphertext>>) -> PyResult<MkCiphertext> {
    let parts: Vec<LweCiphertext<u32>> = parts.iter().map(|c| c.inner.clone()).collect();
    let inner = mkeval::sum_local_encryptions(&parts).map_err(err)?;
    Ok(MkCiphertext { inner })
}

/// Combines one partial decryption per slot `0..k` of `ct`: `(bit, phase)`.
#[pyfunction]
fn combine_partial_decryptions(
    ct: PyRef<'_, MkCiphertext>,
    k: usize,
    partials: Vec<PyRef<'_, PartialDecryption>>,
) -> PyResult<(bool, u32)> {
    let partials: Vec<mkdec::PartialDecryption> = partials.iter().map(|p| p.inner).collect();
    mkdec::combine_partial_decryptions(&ct.inner, k, &partials).map_err(err)
}

/// The crate's default per-party smudging std for `k` parties (largest σ keeping the failure
/// probability of a fresh bootstrap output below 2^-20; 0 if none does).
#[pyfunction]
fn default_smudging_std(params: PyRef<'_, MkParams>, k: usize) -> PyResult<f64> {
    check_parties(k)?;
    Ok(mkdec::default_smudging_std(&params.inner, k))
}

/// Runs the whole static key generation of parties 0..k in one process (every party's secret in
/// one place): **insecure**, for tests and experiments only. Returns the secret keys (slot order)
/// and the evaluation key. GIL released.
#[pyfunction]
#[pyo3(signature = (params, k, crs=None))]
fn insecure_simulate_all_parties(
    py: Python<'_>,
    params: PyRef<'_, MkParams>,
    k: usize,
    crs: Option<PyRef<'_, Crs>>,
) -> PyResult<(Vec<MkSecretKey>, MkEvaluationKey)> {
    check_parties(k)?;
    let crs = match crs {
        Some(c) => c.inner,
        None => RsCrs { seed: fresh_seed() },
    };
    let p = params.inner.clone();
    let (sks, ek) = py
        .detach(|| {
            mkkg::insecure_simulate_all_parties(
                &p,
                k,
                &crs,
                ProductMethod::Exact,
                &mut Csprng::new(),
            )
        })
        .map_err(err)?;
    let sks = sks
        .into_iter()
        .map(|key| MkSecretKey {
            params: p.clone(),
            key,
        })
        .collect();
    Ok((sks, MkEvaluationKey { inner: ek }))
}

/// Decrypts with **all** parties' secret keys in slot order: a test oracle only (no party ever
/// holds them all); see `partial_decrypt` and `combine_partial_decryptions`.
#[pyfunction]
fn decrypt_bool_with_all_keys(
    keys: Vec<PyRef<'_, MkSecretKey>>,
    ct: PyRef<'_, MkCiphertext>,
) -> PyResult<bool> {
    let Some(first) = keys.first() else {
        return Err(value_err("no keys"));
    };
    let n = first.key.lwe_key().dimension();
    if keys.iter().any(|k| k.key.lwe_key().dimension() != n)
        || ct.inner.dimension() != keys.len() * n
    {
        return Err(value_err(format!(
            "ciphertext dimension {} is not {} keys × n = {n}",
            ct.inner.dimension(),
            keys.len()
        )));
    }
    let refs: Vec<&RsMkSecretKey> = keys.iter().map(|k| &k.key).collect();
    Ok(mkeval::decrypt_bool_with_all_keys(&refs, &ct.inner))
}

/// Registers this module's classes and functions.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TfheParams>()?;
    m.add_class::<Ciphertext>()?;
    m.add_class::<ClientKey>()?;
    m.add_class::<ServerKey>()?;
    m.add_class::<MkParams>()?;
    m.add_class::<Crs>()?;
    m.add_class::<MkCiphertext>()?;
    m.add_class::<MkSecretKey>()?;
    m.add_class::<PublicKeyShare>()?;
    m.add_class::<MkPublicKey>()?;
    m.add_class::<BootstrapKeyShare>()?;
    m.add_class::<KeySwitchKeyShare>()?;
    m.add_class::<MkEvaluationKey>()?;
    m.add_class::<PartialDecryption>()?;
    m.add_class::<MkServerKey>()?;
    m.add_function(wrap_pyfunction!(combine_public_key, m)?)?;
    m.add_function(wrap_pyfunction!(combine_evaluation_key, m)?)?;
    m.add_function(wrap_pyfunction!(embed, m)?)?;
    m.add_function(wrap_pyfunction!(sum_local_encryptions, m)?)?;
    m.add_function(wrap_pyfunction!(combine_partial_decryptions, m)?)?;
    m.add_function(wrap_pyfunction!(default_smudging_std, m)?)?;
    m.add_function(wrap_pyfunction!(insecure_simulate_all_parties, m)?)?;
    m.add_function(wrap_pyfunction!(decrypt_bool_with_all_keys, m)?)?;
    m.add("GATES", GATE_NAMES.to_vec())?;
    m.add("TABLE3_PARTIES", TABLE3_PARTIES.to_vec())?;
    m.add("MAX_PARTIES", MAX_PARTIES)?;
    Ok(())
}
