//! `coterie._native.bfv`: coterie-bfv from Python (see python/coterie/bfv.py for the
//! Python-facing API and its docs).
//!
//! Every class is a frozen wrapper of one coterie-bfv value; every operation calls the crate
//! (nothing is re-implemented) with the GIL released. Values cross the boundary as numpy
//! arrays (64-bit words, through `tobytes`/`frombuffer`) or, for the big plaintext moduli of
//! cyclotomic sets, as Python ints (through hexadecimal strings). Randomness is always a fresh
//! `Csprng::new()` (OS entropy); CRS seeds are fresh unless the caller passes one.
//!
//! * single-key BFV: [`PyParams`] (named sets), [`PySecretKey`], [`PyPublicKey`],
//!   [`PyRelinKey`], [`PyGaloisKeys`], [`PyPlaintext`], [`PyCiphertext`];
//! * multi-key BFV (`coterie_bfv::mk`): [`PyMkCrs`], [`PyMkRelinKey`], [`PySharedRelinKey`],
//!   [`PySmudging`], [`PyPartialDecryption`], `mk_encrypt`, `part_dec`, `merge`, ...;
//! * threshold re-encryption (`coterie_bfv::reenc`): [`PyMaskingKey`], [`PyReKeyShare`],
//!   [`PyReEncShare`], [`PyReEncryptedCiphertext`], `rekey_gen`, `reenc_share`, ...;
//! * collective keys (`coterie_bfv::multiparty`): `collective_public_key`,
//!   `collective_relin_key` for in-process parties.

use coterie_bfv::ciphertext::KeySet;
use coterie_bfv::mk::{
    self, MkCrs, MkRelinKey, PartialDecryption, Relin, SharedRelinKey, Smudging,
};
use coterie_bfv::multiparty::{PublicKeyGen, RelinKeyGen};
use coterie_bfv::params::{
    MAX_PRIME_BITS, MatriGearSet, PlaintextModulus, SecretDistribution, moduli_for_bits,
};
use coterie_bfv::reenc::{self, MaskingKey, ReEncShare, ReEncryptedCiphertext, ReKeyShare};
use coterie_bfv::{
    Ciphertext, Context, Decomposition, GaloisKeys, Params, Plaintext, PublicKey, RelinKey,
    SecretKey,
};
use coterie_math::bigint::BigInt;
use coterie_math::prg::{Csprng, Seed, fresh_seed};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyTuple};

use crate::{err, value_err};

// ---------------------------------------------------------------------------------------------
// Conversions.

/// `values` (any 1-D sequence or array of integers) as 64-bit words: through numpy's
/// `asarray(...).astype('<u8').tobytes()`, after checking the dtype (integers only) and the sign.
fn u64s_from_py(values: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    let py = values.py();
    let np = py.import("numpy")?;
    let arr = np.call_method1("asarray", (values,))?;
    let ndim: usize = arr.getattr("ndim")?.extract()?;
    if ndim != 1 {
        return Err(value_err(format!(
            "expected a 1-D sequence of integers, got an array of {ndim} dimensions"
        )));
    }
    let kind: String = arr.getattr("dtype")?.getattr("kind")?.extract()?;
    let arr = match kind.as_str() {
        "u" | "b" => arr,
        "i" => {
            let neg: bool = arr
                .call_method1("__lt__", (0,))?
                .call_method0("any")?
                .extract()?;
            if neg {
                return Err(value_err(
                    "negative values: plaintext values must be in [0, t) (reduce them mod t)",
                ));
            }
            arr
        }
        "O" => {
            // Python ints of any size: each must fit in 64 bits.
            for v in arr.try_iter()? {
                let v = v?;
                let i = v
                    .call_method0("__index__")
                    .map_err(|_| PyTypeError::new_err("expected integers"))?;
                if i.extract::<u64>().is_err() {
                    return Err(value_err(format!(
                        "value {} is outside [0, 2^64): plaintext values must be in [0, t)",
                        i.str()?
                    )));
                }
            }
            arr
        }
        _ => {
            return Err(PyTypeError::new_err(format!(
                "expected integers, got an array of dtype {}",
                arr.getattr("dtype")?.str()?
            )));
        }
    };
    let bytes = arr
        .call_method1("astype", ("<u8",))?
        .call_method0("tobytes")?;
    let bytes = bytes.cast::<PyBytes>()?.as_bytes();
    Ok(bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect())
}

/// 64-bit words as a writable numpy array of dtype `uint64`.
fn numpy_u64<'py>(py: Python<'py>, v: &[u64]) -> PyResult<Bound<'py, PyAny>> {
    let mut bytes = Vec::with_capacity(8 * v.len());
    for x in v {
        bytes.extend_from_slice(&x.to_le_bytes());
    }
    let buf = PyByteArray::new(py, &bytes);
    py.import("numpy")?
        .call_method1("frombuffer", (buf, "<u8"))?
        .call_method1("astype", ("uint64",))
}

/// Signed 64-bit words as a numpy array of dtype `int64`.
fn numpy_i64<'py>(py: Python<'py>, v: &[i64]) -> PyResult<Bound<'py, PyAny>> {
    let mut bytes = Vec::with_capacity(8 * v.len());
    for x in v {
        bytes.extend_from_slice(&x.to_le_bytes());
    }
    let buf = PyByteArray::new(py, &bytes);
    py.import("numpy")?
        .call_method1("frombuffer", (buf, "<i8"))?
        .call_method1("astype", ("int64",))
}

/// A Python int (anything with `__index__`) as a big integer (through hexadecimal).
fn big_from_py(v: &Bound<'_, PyAny>) -> PyResult<BigInt> {
    let i = v
        .call_method0("__index__")
        .map_err(|_| PyTypeError::new_err(format!("expected an integer, got {}", v.get_type())))?;
    if let Ok(x) = i.extract::<i64>() {
        return Ok(BigInt::from(x));
    }
    let builtins = v.py().import("builtins")?;
    let hex: String = builtins.call_method1("format", (i, "x"))?.extract()?;
    BigInt::from_str_radix(&hex, 16).map_err(|e| value_err(format!("integer: {e}")))
}

/// A big integer as a Python int.
fn big_to_py<'py>(py: Python<'py>, x: &BigInt) -> PyResult<Bound<'py, PyAny>> {
    if let Some(w) = x.to_u64() {
        return Ok(w.into_pyobject(py)?.into_any());
    }
    py.import("builtins")?
        .call_method1("int", (x.to_string_radix(16), 16))
}

/// A list of Python ints from big integers.
fn bigs_to_py<'py>(py: Python<'py>, v: &[BigInt]) -> PyResult<Bound<'py, PyList>> {
    let items = v
        .iter()
        .map(|x| big_to_py(py, x))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// A 32-byte seed from `bytes`, or a fresh one (OS entropy).
fn seed_arg(seed: Option<&[u8]>) -> PyResult<Seed> {
    match seed {
        None => Ok(fresh_seed()),
        Some(s) => s
            .try_into()
            .map_err(|_| value_err(format!("a seed is 32 bytes, not {}", s.len()))),
    }
}

/// The gadget: the RNS gadget, or the power-of-two one of base `2^base_log`.
fn decomposition(base_log: Option<u32>) -> PyResult<Decomposition> {
    match base_log {
        None => Ok(Decomposition::Rns),
        Some(b) if (1..=62).contains(&b) => Ok(Decomposition::PowerOfTwo { base_log: b }),
        Some(b) => Err(value_err(format!("base_log {b} outside [1, 62]"))),
    }
}

/// `None` for the RNS gadget, `log2 B` for a power-of-two one.
fn base_log_of(d: Decomposition) -> Option<u32> {
    match d {
        Decomposition::Rns => None,
        Decomposition::PowerOfTwo { base_log } => Some(base_log),
    }
}

/// Runs a decoder of untrusted bytes and turns a panic inside the crate into a `CoterieError`
/// (defence in depth: the binding's tests once found such a panic, an overflow on a secret-key
/// coefficient of `i64::MIN`, since fixed in coterie-bfv). A decoder builds a new value from the
/// bytes, so nothing it leaves half-done is observed afterwards.
fn guarded<T>(decode: impl FnOnce() -> coterie_bfv::Result<T>) -> PyResult<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(decode)) {
        Ok(r) => r.map_err(err),
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(err(format!("malformed input: the decoder failed ({msg})")))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Parameters.

/// The named parameter sets [`PyParams::by_name`] knows, with the keyword arguments each takes.
const NAMES: [(&str, &[&str]); 10] = [
    ("he_std_128_n4096", &["t"]),
    ("he_std_128_n8192", &["t"]),
    ("he_std_128_n16384", &["t"]),
    ("he_std_128_n32768", &["t"]),
    ("seed001", &[]),
    ("matrigear_i", &["log_p"]),
    ("matrigear_ii", &["log_p"]),
    ("matrigear_iii", &["log_p"]),
    ("insecure_toy", &["n", "t"]),
    ("insecure_toy_seed001", &["n"]),
];
/// Not in [`NAMES`] because of its three arguments.
const CYCLOTOMIC_TOY: (&str, &[&str]) = ("insecure_toy_cyclotomic", &["n", "b", "m"]);

/// A degree the toy constructors accept: a power of two in `[16, 2^17]` (checked here so the
/// prime search never sees a degree it was not written for).
fn check_degree(n: usize) -> PyResult<usize> {
    if !n.is_power_of_two() || !(16..=1 << 17).contains(&n) {
        return Err(value_err(format!(
            "degree n = {n} is not a power of two in [16, 2^17]"
        )));
    }
    Ok(n)
}

/// A BFV parameter set with its precomputed context (`coterie_bfv::Context`).
#[pyclass(frozen, module = "coterie.bfv", name = "Params")]
pub struct PyParams {
    ctx: Context,
}

impl PyParams {
    fn build(
        py: Python<'_>,
        make: impl FnOnce() -> coterie_bfv::Result<Params> + Send,
    ) -> PyResult<Self> {
        let ctx = py.detach(|| Context::new(make()?)).map_err(err)?;
        Ok(PyParams { ctx })
    }
}

#[pymethods]
impl PyParams {
    /// A named parameter set (see `names()`); keyword arguments as the Rust constructors take.
    #[staticmethod]
    #[pyo3(signature = (name, *, t=None, n=None, log_p=None, b=None, m=None))]
    fn by_name(
        py: Python<'_>,
        name: &str,
        t: Option<u64>,
        n: Option<usize>,
        log_p: Option<u32>,
        b: Option<u64>,
        m: Option<usize>,
    ) -> PyResult<Self> {
        let allowed = NAMES
            .iter()
            .chain([&CYCLOTOMIC_TOY])
            .find(|(k, _)| *k == name)
            .map(|(_, a)| *a)
            .ok_or_else(|| {
                let known: Vec<&str> = NAMES
                    .iter()
                    .chain([&CYCLOTOMIC_TOY])
                    .map(|(k, _)| *k)
                    .collect();
                value_err(format!(
                    "unknown parameter set {name:?}; known: {}",
                    known.join(", ")
                ))
            })?;
        for (kw, given) in [
            ("t", t.is_some()),
            ("n", n.is_some()),
            ("log_p", log_p.is_some()),
            ("b", b.is_some()),
            ("m", m.is_some()),
        ] {
            if given && !allowed.contains(&kw) {
                return Err(value_err(format!(
                    "parameter set {name:?} takes no argument {kw:?} (it takes {allowed:?})"
                )));
            }
        }
        let t = t.unwrap_or(65537);
        let need_log_p = || log_p.ok_or_else(|| value_err(format!("{name} needs log_p")));
        let set = |s: MatriGearSet| -> PyResult<Self> {
            let lp = need_log_p()?;
            Self::build(py, move || Params::matrigear(s, lp))
        };
        match name {
            "he_std_128_n4096" => Self::build(py, move || Params::he_std_128_n4096(t)),
            "he_std_128_n8192" => Self::build(py, move || Params::he_std_128_n8192(t)),
            "he_std_128_n16384" => Self::build(py, move || Params::he_std_128_n16384(t)),
            "he_std_128_n32768" => Self::build(py, move || Params::he_std_128_n32768(t)),
            "seed001" => Self::build(py, Params::seed001),
            "matrigear_i" => set(MatriGearSet::I),
            "matrigear_ii" => set(MatriGearSet::II),
            "matrigear_iii" => set(MatriGearSet::III),
            "insecure_toy" => {
                let n = check_degree(n.unwrap_or(256))?;
                Self::build(py, move || Params::insecure_toy(n, t))
            }
            "insecure_toy_seed001" => {
                let n = check_degree(n.unwrap_or(1024))?;
                Self::build(py, move || Params::insecure_toy_seed001(n))
            }
            _ => {
                let n = check_degree(n.unwrap_or(32))?;
                let (b, m) = (b.unwrap_or(132), m.unwrap_or(4));
                Self::build(py, move || Params::insecure_toy_cyclotomic(n, b, m))
            }
        }
    }

    /// The names `by_name` accepts.
    #[staticmethod]
    fn names() -> Vec<&'static str> {
        NAMES
            .iter()
            .chain([&CYCLOTOMIC_TOY])
            .map(|(k, _)| *k)
            .collect()
    }

    /// A parameter set of the caller's choosing with a scalar plaintext modulus `t` and
    /// `log_q` bits of NTT primes (or the given `moduli`); `security` is the caller's statement.
    #[staticmethod]
    #[pyo3(signature = (name, n, t, *, log_q=None, moduli=None, sigma=3.2, secret="ternary", security))]
    #[allow(clippy::too_many_arguments)]
    fn custom(
        py: Python<'_>,
        name: String,
        n: usize,
        t: u64,
        log_q: Option<u32>,
        moduli: Option<Vec<u64>>,
        sigma: f64,
        secret: &str,
        security: String,
    ) -> PyResult<Self> {
        let n = check_degree(n)?;
        let secret = match secret {
            "ternary" => SecretDistribution::Ternary,
            "gaussian" => SecretDistribution::Gaussian,
            s => return Err(value_err(format!("secret {s:?}: 'ternary' or 'gaussian'"))),
        };
        let moduli = match (log_q, moduli) {
            (Some(l), None) if l > 64 * MAX_PRIME_BITS => {
                return Err(value_err(format!(
                    "log_q = {l}: at most 64 primes of {MAX_PRIME_BITS} bits"
                )));
            }
            (Some(l), None) => py.detach(|| moduli_for_bits(n, l)).map_err(err)?,
            (None, Some(q)) => q,
            _ => return Err(value_err("give exactly one of log_q and moduli")),
        };
        Self::build(py, move || {
            Params::custom(&name, n, &moduli, t, sigma, secret, &security)
        })
    }

    /// Name of the set (the Rust `Params::name`).
    #[getter]
    fn name(&self) -> String {
        self.ctx.params().name().to_string()
    }
    /// Ring degree `N`.
    #[getter]
    fn degree(&self) -> usize {
        self.ctx.degree()
    }
    /// The ciphertext primes.
    #[getter]
    fn moduli(&self) -> Vec<u64> {
        self.ctx.params().moduli().to_vec()
    }
    /// Total bit size of `Q`.
    #[getter]
    fn log_q(&self) -> u32 {
        self.ctx.params().log_q()
    }
    /// The plaintext modulus: `t`, or `p = b^M + 1` for a cyclotomic set (a Python int).
    #[getter]
    fn plaintext_modulus<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        big_to_py(py, &self.ctx.plaintext_modulus().modulus())
    }
    /// The scalar plaintext modulus `t` (`None` for a cyclotomic set).
    #[getter]
    fn t(&self) -> Option<u64> {
        self.ctx.plaintext_modulus().scalar()
    }
    /// `(D, b, M)` of a cyclotomic plaintext modulus `X^D − b`, `p = b^M + 1` (else `None`).
    #[getter]
    fn cyclotomic<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        match self.ctx.plaintext_modulus() {
            PlaintextModulus::Scalar(_) => Ok(None),
            PlaintextModulus::Cyclotomic { d, b, m } => Ok(Some(PyTuple::new(
                py,
                [
                    d.into_pyobject(py)?.into_any(),
                    big_to_py(py, b)?,
                    m.into_pyobject(py)?.into_any(),
                ],
            )?)),
        }
    }
    /// Security statement and its source.
    #[getter]
    fn security(&self) -> String {
        self.ctx.params().security().to_string()
    }
    /// Error width σ.
    #[getter]
    fn sigma(&self) -> f64 {
        self.ctx.params().sigma()
    }
    /// `"ternary"` or `"gaussian"`.
    #[getter]
    fn secret_distribution(&self) -> &'static str {
        match self.ctx.params().secret_distribution() {
            SecretDistribution::Ternary => "ternary",
            SecretDistribution::Gaussian => "gaussian",
        }
    }
    /// Whether SIMD batching is available (prime `t ≡ 1 mod 2N`).
    #[getter]
    fn supports_batching(&self) -> bool {
        self.ctx.params().supports_batching()
    }
    /// Number of slots: `N` with batching, `D` for a cyclotomic set, else `None`.
    #[getter]
    fn slots(&self) -> Option<usize> {
        match self.ctx.plaintext_modulus() {
            PlaintextModulus::Cyclotomic { d, .. } => Some(*d),
            PlaintextModulus::Scalar(_) => self.ctx.slots(),
        }
    }
    /// The encoding used when none is given: `"simd"`, `"slots"` or `"coefficients"`.
    #[getter]
    fn default_encoding(&self) -> &'static str {
        default_encoding(&self.ctx)
    }
    /// The top level `L − 1` (fresh ciphertexts live there).
    #[getter]
    fn max_level(&self) -> usize {
        self.ctx.max_level()
    }
    /// The 32-byte fingerprint of the set (what serialized objects are checked against).
    #[getter]
    fn fingerprint<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.ctx.fingerprint())
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyParams>()
            .map(|o| o.get().ctx == self.ctx)
            .unwrap_or(false)
    }

    fn __hash__(&self) -> u64 {
        let f = self.ctx.fingerprint();
        u64::from_le_bytes(f[..8].try_into().unwrap_or([0; 8]))
    }

    fn __repr__(&self) -> String {
        format!(
            "Params({:?}, degree={}, log_q={}, plaintext_modulus={})",
            self.ctx.params().name(),
            self.ctx.degree(),
            self.ctx.params().log_q(),
            self.ctx.plaintext_modulus().modulus()
        )
    }
}

fn default_encoding(ctx: &Context) -> &'static str {
    match ctx.plaintext_modulus() {
        PlaintextModulus::Cyclotomic { .. } => "slots",
        PlaintextModulus::Scalar(_) if ctx.params().supports_batching() => "simd",
        PlaintextModulus::Scalar(_) => "coefficients",
    }
}

// ---------------------------------------------------------------------------------------------
// Plaintexts.

/// A plaintext (an element of the plaintext ring of its parameter set).
#[pyclass(frozen, module = "coterie.bfv", name = "Plaintext")]
pub struct PyPlaintext(Plaintext);

#[pymethods]
impl PyPlaintext {
    /// Encodes `values`: `"simd"` (batching slots, values in `[0, t)`), `"coefficients"` (the
    /// coefficients mod `t`; for a cyclotomic set the representative mod `p`) or `"slots"`
    /// (the `D` slots of a cyclotomic set, values in `[0, p)`).
    #[staticmethod]
    #[pyo3(signature = (params, values, encoding=None))]
    fn encode(
        py: Python<'_>,
        params: &PyParams,
        values: &Bound<'_, PyAny>,
        encoding: Option<&str>,
    ) -> PyResult<Self> {
        let ctx = &params.ctx;
        let encoding = encoding.unwrap_or(default_encoding(ctx));
        let pm = ctx.plaintext_modulus();
        match (encoding, pm) {
            ("simd" | "coefficients", PlaintextModulus::Scalar(t)) => {
                let v = u64s_from_py(values)?;
                let cap = ctx.degree();
                if v.len() > cap {
                    return Err(value_err(format!("{} values for {cap} slots", v.len())));
                }
                if let Some(i) = v.iter().position(|x| x >= t) {
                    return Err(value_err(format!(
                        "value {} at index {i} is not below the plaintext modulus t = {t}",
                        v[i]
                    )));
                }
                let simd = encoding == "simd";
                let pt = py
                    .detach(|| {
                        if simd {
                            Plaintext::encode_simd(ctx, &v)
                        } else {
                            Plaintext::encode_coefficients(ctx, &v)
                        }
                    })
                    .map_err(err)?;
                Ok(PyPlaintext(pt))
            }
            ("slots" | "coefficients", PlaintextModulus::Cyclotomic { d, .. }) => {
                let p = pm.modulus();
                let v = values
                    .try_iter()?
                    .map(|x| big_from_py(&x?))
                    .collect::<PyResult<Vec<_>>>()?;
                if v.len() > *d {
                    return Err(value_err(format!("{} values for D = {d} slots", v.len())));
                }
                if let Some(i) = v.iter().position(|x| *x < 0 || *x >= p) {
                    return Err(value_err(format!(
                        "value at index {i} is outside [0, p), p = b^M + 1 of {} bits",
                        p.significant_bits()
                    )));
                }
                let slots = encoding == "slots";
                let pt = py
                    .detach(|| {
                        if slots {
                            Plaintext::encode_slots(ctx, &v)
                        } else {
                            Plaintext::from_representative(ctx, &v)
                        }
                    })
                    .map_err(err)?;
                Ok(PyPlaintext(pt))
            }
            ("simd" | "slots", _) => Err(value_err(format!(
                "encoding {encoding:?} does not apply to {} (plaintext modulus {}); use {:?}",
                ctx.params().name(),
                if pm.scalar().is_some() {
                    "scalar t"
                } else {
                    "cyclotomic X^D - b"
                },
                default_encoding(ctx)
            ))),
            _ => Err(value_err(format!(
                "unknown encoding {encoding:?}: 'simd', 'coefficients' or 'slots'"
            ))),
        }
    }

    /// Decodes: a numpy `uint64` array of `N` values (`"simd"`, `"coefficients"` of a scalar
    /// set), or a list of `D` Python ints (`"slots"`, `"coefficients"` of a cyclotomic set).
    #[pyo3(signature = (encoding=None))]
    fn decode<'py>(&self, py: Python<'py>, encoding: Option<&str>) -> PyResult<Bound<'py, PyAny>> {
        let ctx = self.0.context();
        let encoding = encoding.unwrap_or(default_encoding(ctx));
        let pt = &self.0;
        let scalar = ctx.plaintext_modulus().scalar().is_some();
        match (encoding, scalar) {
            ("simd", true) => {
                let v = py.detach(|| pt.decode_simd()).map_err(err)?;
                numpy_u64(py, &v)
            }
            ("coefficients", true) => numpy_u64(py, pt.coefficients().map_err(err)?),
            ("slots", false) => {
                let v = py.detach(|| pt.decode_slots()).map_err(err)?;
                Ok(bigs_to_py(py, &v)?.into_any())
            }
            ("coefficients", false) => Ok(bigs_to_py(py, &pt.representative())?.into_any()),
            ("simd" | "slots", _) => Err(value_err(format!(
                "encoding {encoding:?} does not apply to {}; use {:?}",
                ctx.params().name(),
                default_encoding(ctx)
            ))),
            _ => Err(value_err(format!(
                "unknown encoding {encoding:?}: 'simd', 'coefficients' or 'slots'"
            ))),
        }
    }

    /// The parameter set.
    #[getter]
    fn params(&self) -> PyParams {
        PyParams {
            ctx: self.0.context().clone(),
        }
    }

    /// The crate's versioned encoding.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let b = py.detach(|| self.0.to_bytes());
        PyBytes::new(py, &b)
    }

    /// Decodes `to_bytes` output for `params` (malformed bytes raise `CoterieError`).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, params: &PyParams, data: &[u8]) -> PyResult<Self> {
        let ctx = &params.ctx;
        Ok(PyPlaintext(
            py.detach(|| guarded(|| Plaintext::from_bytes(ctx, data)))?,
        ))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyPlaintext>()
            .map(|o| o.get().0 == self.0)
            .unwrap_or(false)
    }

    fn __repr__(&self) -> String {
        format!("Plaintext(params={:?})", self.0.context().params().name())
    }
}

// ---------------------------------------------------------------------------------------------
// Keys.

/// A secret key (zeroized on drop; its repr shows nothing of it).
#[pyclass(frozen, module = "coterie.bfv", name = "SecretKey")]
pub struct PySecretKey(SecretKey);

#[pymethods]
impl PySecretKey {
    /// A fresh secret key (OS entropy).
    #[staticmethod]
    fn generate(py: Python<'_>, params: &PyParams) -> Self {
        let ctx = &params.ctx;
        PySecretKey(py.detach(|| SecretKey::generate(ctx, &mut Csprng::new())))
    }

    /// A secret key from its `N` small signed coefficients (e.g. a sum of parties' keys).
    #[staticmethod]
    fn from_coefficients(params: &PyParams, coefficients: Vec<i64>) -> PyResult<Self> {
        if coefficients.len() != params.ctx.degree() {
            return Err(value_err(format!(
                "{} coefficients for degree N = {}",
                coefficients.len(),
                params.ctx.degree()
            )));
        }
        // Checked here too: the crate's `c.abs()` overflows (a panic with debug assertions)
        // for i64::MIN.
        if let Some(c) = coefficients
            .iter()
            .find(|c| !(-(1 << 30)..1 << 30).contains(*c))
        {
            return Err(value_err(format!(
                "secret key coefficient {c} is not below 2^30 in absolute value"
            )));
        }
        Ok(PySecretKey(
            SecretKey::from_coefficients(&params.ctx, coefficients).map_err(err)?,
        ))
    }

    /// The `N` coefficients of `s` (numpy int64). Secret.
    fn coefficients<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        numpy_i64(py, self.0.coefficients())
    }

    /// A fresh public key.
    fn public_key(&self, py: Python<'_>) -> PyPublicKey {
        PyPublicKey(py.detach(|| self.0.public_key(&mut Csprng::new())))
    }

    /// A relinearization key (RNS gadget, or the power-of-two gadget of `2^base_log`).
    #[pyo3(signature = (base_log=None))]
    fn relin_key(&self, py: Python<'_>, base_log: Option<u32>) -> PyResult<PyRelinKey> {
        let d = decomposition(base_log)?;
        let k = py
            .detach(|| self.0.relin_key_with(d, &mut Csprng::new()))
            .map_err(err)?;
        Ok(PyRelinKey(k))
    }

    /// Galois keys rotating both batching rows by each of `steps` (negative: right) and, with
    /// `row_swap`, swapping the rows.
    #[pyo3(signature = (steps, row_swap=false))]
    fn galois_keys(
        &self,
        py: Python<'_>,
        steps: Vec<i64>,
        row_swap: bool,
    ) -> PyResult<PyGaloisKeys> {
        let k = py
            .detach(|| self.0.galois_keys(&steps, row_swap, &mut Csprng::new()))
            .map_err(err)?;
        Ok(PyGaloisKeys {
            keys: k,
            ctx: self.0.context().clone(),
        })
    }

    /// Galois keys rotating the `D` slots of a cyclotomic set by each of `steps`.
    fn slot_rotation_keys(&self, py: Python<'_>, steps: Vec<i64>) -> PyResult<PyGaloisKeys> {
        let k = py
            .detach(|| self.0.slot_rotation_keys(&steps, &mut Csprng::new()))
            .map_err(err)?;
        Ok(PyGaloisKeys {
            keys: k,
            ctx: self.0.context().clone(),
        })
    }

    /// Decrypts a single-key ciphertext.
    fn decrypt(&self, py: Python<'_>, ct: &PyCiphertext) -> PyResult<PyPlaintext> {
        let c = &ct.0;
        Ok(PyPlaintext(py.detach(|| self.0.decrypt(c)).map_err(err)?))
    }

    /// Symmetric-key encryption.
    fn encrypt_symmetric(&self, py: Python<'_>, pt: &PyPlaintext) -> PyResult<PyCiphertext> {
        let p = &pt.0;
        let c = py
            .detach(|| self.0.encrypt_symmetric(p, &mut Csprng::new()))
            .map_err(err)?;
        Ok(PyCiphertext(c))
    }

    /// The noise budget in bits of a single-key ciphertext (decryption is correct while > 0).
    fn noise_budget(&self, py: Python<'_>, ct: &PyCiphertext) -> PyResult<f64> {
        let c = &ct.0;
        py.detach(|| coterie_bfv::noise::noise_budget(&self.0, c))
            .map_err(err)
    }

    /// The parameter set.
    #[getter]
    fn params(&self) -> PyParams {
        PyParams {
            ctx: self.0.context().clone(),
        }
    }

    /// The crate's versioned encoding (secret!).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.0.to_bytes())
    }

    /// Decodes `to_bytes` output for `params`.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, params: &PyParams, data: &[u8]) -> PyResult<Self> {
        let ctx = &params.ctx;
        let sk = py.detach(|| guarded(|| SecretKey::from_bytes(ctx, data)))?;
        // Without debug assertions the crate's `c.abs()` wraps for i64::MIN and lets it
        // through: the documented bound |c| < 2^30, checked again without overflow.
        if sk
            .coefficients()
            .iter()
            .any(|c| !(-(1 << 30)..1 << 30).contains(c))
        {
            return Err(err(
                "malformed input: secret key coefficient not below 2^30 in absolute value",
            ));
        }
        Ok(PySecretKey(sk))
    }

    fn __repr__(&self) -> String {
        format!(
            "SecretKey(params={:?}, ..)",
            self.0.context().params().name()
        )
    }
}

/// A public key.
#[pyclass(frozen, module = "coterie.bfv", name = "PublicKey")]
pub struct PyPublicKey(PublicKey);

#[pymethods]
impl PyPublicKey {
    /// Encrypts a plaintext (fresh randomness).
    fn encrypt(&self, py: Python<'_>, pt: &PyPlaintext) -> PyResult<PyCiphertext> {
        let p = &pt.0;
        let c = py
            .detach(|| self.0.encrypt(p, &mut Csprng::new()))
            .map_err(err)?;
        Ok(PyCiphertext(c))
    }

    /// The parameter set.
    #[getter]
    fn params(&self) -> PyParams {
        PyParams {
            ctx: self.0.context().clone(),
        }
    }

    /// The crate's versioned encoding (seeded: `p_1` travels as its seed).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let b = py.detach(|| self.0.to_bytes());
        PyBytes::new(py, &b)
    }

    /// Decodes `to_bytes` output for `params`.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, params: &PyParams, data: &[u8]) -> PyResult<Self> {
        let ctx = &params.ctx;
        Ok(PyPublicKey(
            py.detach(|| guarded(|| PublicKey::from_bytes(ctx, data)))?,
        ))
    }

    fn __repr__(&self) -> String {
        format!("PublicKey(params={:?})", self.0.context().params().name())
    }
}

/// A relinearization key.
#[pyclass(frozen, module = "coterie.bfv", name = "RelinKey")]
pub struct PyRelinKey(RelinKey);

#[pymethods]
impl PyRelinKey {
    /// The parameter set.
    #[getter]
    fn params(&self) -> PyParams {
        PyParams {
            ctx: self.0.key_switch_key().context().clone(),
        }
    }

    /// `None` for the RNS gadget, `log2 B` for a power-of-two gadget.
    #[getter]
    fn base_log(&self) -> Option<u32> {
        base_log_of(self.0.key_switch_key().decomposition())
    }

    /// The crate's versioned encoding.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let b = py.detach(|| self.0.to_bytes());
        PyBytes::new(py, &b)
    }

    /// Decodes `to_bytes` output for `params`.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, params: &PyParams, data: &[u8]) -> PyResult<Self> {
        let ctx = &params.ctx;
        Ok(PyRelinKey(
            py.detach(|| guarded(|| RelinKey::from_bytes(ctx, data)))?,
        ))
    }

    fn __repr__(&self) -> String {
        format!(
            "RelinKey(params={:?})",
            self.0.key_switch_key().context().params().name()
        )
    }
}

/// A set of Galois keys (one per Galois element).
#[pyclass(frozen, module = "coterie.bfv", name = "GaloisKeys")]
pub struct PyGaloisKeys {
    keys: GaloisKeys,
    /// The parameter set (an empty key set has no key to take it from).
    ctx: Context,
}

#[pymethods]
impl PyGaloisKeys {
    /// The Galois elements `g` held (`X → X^g`).
    #[getter]
    fn elements(&self) -> Vec<usize> {
        self.keys.elements()
    }

    /// The parameter set.
    #[getter]
    fn params(&self) -> PyParams {
        PyParams {
            ctx: self.ctx.clone(),
        }
    }

    fn __len__(&self) -> usize {
        self.keys.elements().len()
    }

    /// The crate's versioned encoding.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let b = py.detach(|| self.keys.to_bytes(&self.ctx));
        PyBytes::new(py, &b)
    }

    /// Decodes `to_bytes` output for `params`.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, params: &PyParams, data: &[u8]) -> PyResult<Self> {
        let ctx = &params.ctx;
        let keys = py.detach(|| guarded(|| GaloisKeys::from_bytes(ctx, data)))?;
        Ok(PyGaloisKeys {
            keys,
            ctx: ctx.clone(),
        })
    }

    fn __repr__(&self) -> String {
        format!("GaloisKeys(elements={:?})", self.keys.elements())
    }
}

// ---------------------------------------------------------------------------------------------
// Ciphertexts.

/// The keys of a multiplication: a single-key relinearization key, a multi-key shared
/// relinearization key, or the users' multi-key relinearization keys (on the fly).
enum MulKeys {
    Single(Py<PyRelinKey>),
    Shared(Py<PySharedRelinKey>),
    OnTheFly(Vec<MkRelinKey>),
}

impl MulKeys {
    fn extract(keys: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(k) = keys.cast::<PyRelinKey>() {
            return Ok(MulKeys::Single(k.clone().unbind()));
        }
        if let Ok(k) = keys.cast::<PySharedRelinKey>() {
            return Ok(MulKeys::Shared(k.clone().unbind()));
        }
        if keys.is_instance_of::<pyo3::types::PyString>() {
            return Err(PyTypeError::new_err(
                "expected relinearization keys, got a str",
            ));
        }
        let mut out = Vec::new();
        for k in keys.try_iter().map_err(|_| {
            PyTypeError::new_err(format!(
                "expected a RelinKey, a SharedRelinKey or a list of MkRelinKey, got {}",
                keys.get_type()
            ))
        })? {
            let k = k?;
            let k = k.cast::<PyMkRelinKey>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "expected MkRelinKey items in the list of keys, got {}",
                    k.get_type()
                ))
            })?;
            out.push(k.get().0.clone());
        }
        Ok(MulKeys::OnTheFly(out))
    }

    /// `a·b` relinearized: `Ciphertext::mul` for a single-key key, `mk::mul` otherwise. Needs
    /// no GIL (the classes are frozen, `Py::get` reads them directly).
    fn mul(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
        grouped: bool,
    ) -> coterie_bfv::Result<Ciphertext> {
        match self {
            MulKeys::Single(k) => a.mul(b, &k.get().0),
            MulKeys::Shared(k) => mk::mul(a, b, &Relin::Shared(&k.get().0)),
            MulKeys::OnTheFly(keys) => mk::mul(a, b, &Relin::OnTheFly { keys, grouped }),
        }
    }

    fn relinearize(&self, ct: &Ciphertext, grouped: bool) -> coterie_bfv::Result<Ciphertext> {
        match self {
            MulKeys::Single(k) => ct.relinearize(&k.get().0),
            MulKeys::Shared(k) => mk::relinearize(ct, &Relin::Shared(&k.get().0)),
            MulKeys::OnTheFly(keys) => mk::relinearize(ct, &Relin::OnTheFly { keys, grouped }),
        }
    }
}

/// Whether `ct` is a multi-key ciphertext (of users, not a tensor).
fn is_multi_key(ct: &Ciphertext) -> bool {
    matches!(ct.key_set(), KeySet::Parties(_))
}

/// `a ± b`: multi-key ciphertexts are first extended to the sorted union of their users.
fn add_or_sub(a: &Ciphertext, b: &Ciphertext, sub: bool) -> coterie_bfv::Result<Ciphertext> {
    if is_multi_key(a) || is_multi_key(b) {
        let ids = mk::union_ids(a, b)?;
        let (a, b) = (a.extend_to(&ids)?, b.extend_to(&ids)?);
        if sub { a.sub(&b) } else { a.add(&b) }
    } else if sub {
        a.sub(b)
    } else {
        a.add(b)
    }
}

/// A BFV ciphertext: single-key (parts under `1, s, s², …`) or multi-key (under the keys of
/// a list of user ids, `key_ids`).
#[pyclass(frozen, module = "coterie.bfv", name = "Ciphertext")]
pub struct PyCiphertext(Ciphertext);

#[pymethods]
impl PyCiphertext {
    /// The parameter set.
    #[getter]
    fn params(&self) -> PyParams {
        PyParams {
            ctx: self.0.context().clone(),
        }
    }
    /// The level (number of primes − 1 of its modulus).
    #[getter]
    fn level(&self) -> usize {
        self.0.level()
    }
    /// Number of polynomials (2 for a fresh single-key ciphertext, `users + 1` multi-key).
    #[getter]
    fn num_parts(&self) -> usize {
        self.0.len()
    }
    /// The user ids of a multi-key ciphertext (`None` for a single-key one).
    #[getter]
    fn key_ids(&self) -> Option<Vec<u64>> {
        match self.0.key_set() {
            KeySet::Powers => None,
            KeySet::Parties(ids) | KeySet::PartiesTensor(ids) => Some(ids.clone()),
        }
    }
    /// Whether this is an unrelinearized multi-key tensor (`mul_no_relin` of multi-key ones).
    #[getter]
    fn is_tensor(&self) -> bool {
        matches!(self.0.key_set(), KeySet::PartiesTensor(_))
    }

    /// `self + other` (multi-key: over the union of the users).
    fn add(&self, py: Python<'_>, other: &PyCiphertext) -> PyResult<PyCiphertext> {
        let (a, b) = (&self.0, &other.0);
        Ok(PyCiphertext(
            py.detach(|| add_or_sub(a, b, false)).map_err(err)?,
        ))
    }
    /// `self − other` (multi-key: over the union of the users).
    fn sub(&self, py: Python<'_>, other: &PyCiphertext) -> PyResult<PyCiphertext> {
        let (a, b) = (&self.0, &other.0);
        Ok(PyCiphertext(
            py.detach(|| add_or_sub(a, b, true)).map_err(err)?,
        ))
    }
    /// `−self`.
    fn neg(&self) -> PyCiphertext {
        PyCiphertext(self.0.neg())
    }
    /// `self + pt`.
    fn add_plain(&self, py: Python<'_>, pt: &PyPlaintext) -> PyResult<PyCiphertext> {
        let (a, p) = (&self.0, &pt.0);
        Ok(PyCiphertext(py.detach(|| a.add_plain(p)).map_err(err)?))
    }
    /// `self − pt`.
    fn sub_plain(&self, py: Python<'_>, pt: &PyPlaintext) -> PyResult<PyCiphertext> {
        let (a, p) = (&self.0, &pt.0);
        Ok(PyCiphertext(py.detach(|| a.sub_plain(p)).map_err(err)?))
    }
    /// `self · pt` (slot-wise with batching, a polynomial product with coefficients).
    fn mul_plain(&self, py: Python<'_>, pt: &PyPlaintext) -> PyResult<PyCiphertext> {
        let (a, p) = (&self.0, &pt.0);
        Ok(PyCiphertext(py.detach(|| a.mul_plain(p)).map_err(err)?))
    }

    /// `self · other`, relinearized with `keys`: a `RelinKey` (single-key), or for multi-key
    /// ciphertexts a `SharedRelinKey` or the list of the users' `MkRelinKey`s (on the fly,
    /// `grouped` per user or not).
    #[pyo3(signature = (other, keys, *, grouped=true))]
    fn multiply(
        &self,
        py: Python<'_>,
        other: &PyCiphertext,
        keys: &Bound<'_, PyAny>,
        grouped: bool,
    ) -> PyResult<PyCiphertext> {
        let keys = MulKeys::extract(keys)?;
        let (a, b) = (&self.0, &other.0);
        let c = py.detach(|| keys.mul(a, b, grouped)).map_err(err)?;
        Ok(PyCiphertext(c))
    }

    /// The tensor product without relinearization (3 parts single-key, `(users+1)²` multi-key).
    fn mul_no_relin(&self, py: Python<'_>, other: &PyCiphertext) -> PyResult<PyCiphertext> {
        let (a, b) = (&self.0, &other.0);
        let c = py
            .detach(|| {
                if is_multi_key(a) || is_multi_key(b) {
                    mk::mul_no_relin(a, b)
                } else {
                    a.mul_no_relin(b)
                }
            })
            .map_err(err)?;
        Ok(PyCiphertext(c))
    }

    /// Relinearizes a `mul_no_relin` result with `keys` (as `multiply`).
    #[pyo3(signature = (keys, *, grouped=true))]
    fn relinearize(
        &self,
        py: Python<'_>,
        keys: &Bound<'_, PyAny>,
        grouped: bool,
    ) -> PyResult<PyCiphertext> {
        let keys = MulKeys::extract(keys)?;
        let a = &self.0;
        let c = py.detach(|| keys.relinearize(a, grouped)).map_err(err)?;
        Ok(PyCiphertext(c))
    }

    /// Rotates both batching rows (of `N/2` slots each) left by `k` (right for `k < 0`).
    fn rotate_rows(&self, py: Python<'_>, k: i64, keys: &PyGaloisKeys) -> PyResult<PyCiphertext> {
        let (a, g) = (&self.0, &keys.keys);
        Ok(PyCiphertext(
            py.detach(|| a.rotate_rows(k, g)).map_err(err)?,
        ))
    }
    /// Swaps the two batching rows.
    fn swap_rows(&self, py: Python<'_>, keys: &PyGaloisKeys) -> PyResult<PyCiphertext> {
        let (a, g) = (&self.0, &keys.keys);
        Ok(PyCiphertext(py.detach(|| a.swap_rows(g)).map_err(err)?))
    }
    /// Rotates the `D` slots of a cyclotomic set left by `r`.
    fn rotate_slots(&self, py: Python<'_>, r: i64, keys: &PyGaloisKeys) -> PyResult<PyCiphertext> {
        let (a, g) = (&self.0, &keys.keys);
        Ok(PyCiphertext(
            py.detach(|| a.rotate_slots(r, g)).map_err(err)?,
        ))
    }
    /// Modulus switching to the next level (drops one prime, scales the noise down).
    fn mod_switch_to_next(&self, py: Python<'_>) -> PyResult<PyCiphertext> {
        let a = &self.0;
        Ok(PyCiphertext(
            py.detach(|| a.mod_switch_to_next()).map_err(err)?,
        ))
    }

    /// The crate's versioned encoding.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let b = py.detach(|| self.0.to_bytes());
        PyBytes::new(py, &b)
    }

    /// Decodes `to_bytes` output for `params`.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, params: &PyParams, data: &[u8]) -> PyResult<Self> {
        let ctx = &params.ctx;
        Ok(PyCiphertext(py.detach(|| {
            guarded(|| Ciphertext::from_bytes(ctx, data))
        })?))
    }

    fn __add__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if let Ok(c) = other.cast::<PyCiphertext>() {
            return Ok(self
                .add(py, c.get())?
                .into_pyobject(py)?
                .into_any()
                .unbind());
        }
        if let Ok(p) = other.cast::<PyPlaintext>() {
            return Ok(self
                .add_plain(py, p.get())?
                .into_pyobject(py)?
                .into_any()
                .unbind());
        }
        Ok(py.NotImplemented())
    }
    fn __radd__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.__add__(py, other)
    }
    fn __sub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if let Ok(c) = other.cast::<PyCiphertext>() {
            return Ok(self
                .sub(py, c.get())?
                .into_pyobject(py)?
                .into_any()
                .unbind());
        }
        if let Ok(p) = other.cast::<PyPlaintext>() {
            return Ok(self
                .sub_plain(py, p.get())?
                .into_pyobject(py)?
                .into_any()
                .unbind());
        }
        Ok(py.NotImplemented())
    }
    fn __neg__(&self) -> PyCiphertext {
        self.neg()
    }
    fn __mul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if let Ok(p) = other.cast::<PyPlaintext>() {
            return Ok(self
                .mul_plain(py, p.get())?
                .into_pyobject(py)?
                .into_any()
                .unbind());
        }
        if other.cast::<PyCiphertext>().is_ok() {
            return Err(PyTypeError::new_err(
                "ciphertext * ciphertext needs a relinearization key: use multiply(a, b, keys)",
            ));
        }
        Ok(py.NotImplemented())
    }
    fn __rmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.__mul__(py, other)
    }

    fn __repr__(&self) -> String {
        format!(
            "Ciphertext(params={:?}, level={}, parts={}, keys={:?})",
            self.0.context().params().name(),
            self.0.level(),
            self.0.len(),
            self.0.key_set()
        )
    }
}

/// Benchmark helper (not API): seconds per `a.multiply(b, keys)`, timed in Rust with
/// `std::time::Instant` around the same call `Ciphertext.multiply` makes, GIL released.
#[pyfunction]
#[pyo3(signature = (a, b, keys, iterations, *, grouped=true))]
fn _rust_time_multiply(
    py: Python<'_>,
    a: &PyCiphertext,
    b: &PyCiphertext,
    keys: &Bound<'_, PyAny>,
    iterations: usize,
    grouped: bool,
) -> PyResult<f64> {
    if iterations == 0 {
        return Err(value_err("iterations must be at least 1"));
    }
    let keys = MulKeys::extract(keys)?;
    let (a, b) = (&a.0, &b.0);
    py.detach(|| {
        let start = std::time::Instant::now();
        for _ in 0..iterations {
            std::hint::black_box(keys.mul(a, b, grouped)?);
        }
        Ok::<f64, coterie_bfv::Error>(start.elapsed().as_secs_f64() / iterations as f64)
    })
    .map_err(err)
}

// ---------------------------------------------------------------------------------------------
// Multi-key BFV (coterie_bfv::mk).

/// The common reference string of multi-key BFV: one uniform polynomial per gadget row,
/// expanded from a public 32-byte seed.
#[pyclass(frozen, module = "coterie.bfv", name = "MkCrs")]
pub struct PyMkCrs(MkCrs);

#[pymethods]
impl PyMkCrs {
    /// The CRS for `params` from `seed` (32 bytes; fresh if `None`), RNS gadget or the
    /// power-of-two gadget of `2^base_log` (see `paper_base_log`).
    #[new]
    #[pyo3(signature = (params, seed=None, base_log=None))]
    fn new(
        py: Python<'_>,
        params: &PyParams,
        seed: Option<&[u8]>,
        base_log: Option<u32>,
    ) -> PyResult<Self> {
        let seed = seed_arg(seed)?;
        let d = decomposition(base_log)?;
        let ctx = &params.ctx;
        Ok(PyMkCrs(
            py.detach(|| MkCrs::new(ctx, &seed, d)).map_err(err)?,
        ))
    }
    /// The public 32-byte seed.
    #[getter]
    fn seed<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.0.seed())
    }
    /// Number of gadget rows `ℓ`.
    #[getter]
    fn rows(&self) -> usize {
        self.0.rows()
    }
    /// `None` for the RNS gadget, `log2 B` for a power-of-two gadget.
    #[getter]
    fn base_log(&self) -> Option<u32> {
        base_log_of(self.0.decomposition())
    }
    /// The parameter set.
    #[getter]
    fn params(&self) -> PyParams {
        PyParams {
            ctx: self.0.context().clone(),
        }
    }
    fn __repr__(&self) -> String {
        format!(
            "MkCrs(rows={}, base_log={:?})",
            self.0.rows(),
            base_log_of(self.0.decomposition())
        )
    }
}

/// User `id`'s public multi-key relinearization key over a CRS.
#[pyclass(frozen, module = "coterie.bfv", name = "MkRelinKey")]
pub struct PyMkRelinKey(MkRelinKey);

#[pymethods]
impl PyMkRelinKey {
    /// Generates user `id`'s key from its secret key over `crs`.
    #[staticmethod]
    fn generate(py: Python<'_>, sk: &PySecretKey, id: u64, crs: &PyMkCrs) -> PyResult<Self> {
        let (s, c) = (&sk.0, &crs.0);
        let k = py
            .detach(|| MkRelinKey::generate(s, id, c, &mut Csprng::new()))
            .map_err(err)?;
        Ok(PyMkRelinKey(k))
    }
    /// The user id.
    #[getter]
    fn id(&self) -> u64 {
        self.0.id()
    }
    /// Number of gadget rows.
    #[getter]
    fn rows(&self) -> usize {
        self.0.rows()
    }
    /// `None` for the RNS gadget, `log2 B` for a power-of-two gadget.
    #[getter]
    fn base_log(&self) -> Option<u32> {
        base_log_of(self.0.decomposition())
    }
    /// The seed of the CRS the key was made over.
    #[getter]
    fn crs_seed<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.0.crs_seed())
    }
    /// The parameter set.
    #[getter]
    fn params(&self) -> PyParams {
        PyParams {
            ctx: self.0.context().clone(),
        }
    }
    /// The crate's versioned encoding.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let b = py.detach(|| self.0.to_bytes());
        PyBytes::new(py, &b)
    }
    /// Decodes `to_bytes` output for `params`.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, params: &PyParams, data: &[u8]) -> PyResult<Self> {
        let ctx = &params.ctx;
        Ok(PyMkRelinKey(py.detach(|| {
            guarded(|| MkRelinKey::from_bytes(ctx, data))
        })?))
    }
    fn __repr__(&self) -> String {
        format!("MkRelinKey(id={}, rows={})", self.0.id(), self.0.rows())
    }
}

/// The precomputed pairwise keys `K_{i,j}` of every ordered pair of users (CDKS19's shared
/// relinearization key, method 1).
#[pyclass(frozen, module = "coterie.bfv", name = "SharedRelinKey")]
pub struct PySharedRelinKey(SharedRelinKey);

#[pymethods]
impl PySharedRelinKey {
    /// The pairwise keys of the users of `keys` (one `MkRelinKey` per user).
    #[new]
    fn new(py: Python<'_>, keys: Vec<PyRef<'_, PyMkRelinKey>>) -> PyResult<Self> {
        let keys: Vec<MkRelinKey> = keys.iter().map(|k| k.0.clone()).collect();
        Ok(PySharedRelinKey(
            py.detach(|| SharedRelinKey::generate(&keys)).map_err(err)?,
        ))
    }
    fn __len__(&self) -> usize {
        self.0.len()
    }
    fn __repr__(&self) -> String {
        format!("SharedRelinKey(pairs={})", self.0.len())
    }
}

/// The smudging (noise flooding) distribution of partial decryptions and re-encryption shares.
#[pyclass(frozen, module = "coterie.bfv", name = "Smudging")]
#[derive(Clone)]
pub struct PySmudging(Smudging);

#[pymethods]
impl PySmudging {
    /// The paper's Gaussian of σ = 2^20. NOT statistically hiding (the ciphertext noise, and
    /// with it information on the keys, may leak).
    #[staticmethod]
    fn paper_sigma20() -> Self {
        PySmudging(Smudging::PaperSigma20)
    }
    /// Uniform noise in `[−B·2^λ, B·2^λ)`, `B = 2^noise_log2` a bound on the ciphertext's noise:
    /// statistically hiding, needs a larger modulus (checked when used).
    #[staticmethod]
    fn statistical(lambda_: u32, noise_log2: u32) -> Self {
        PySmudging(Smudging::Statistical {
            lambda: lambda_,
            noise_log2,
        })
    }
    fn __repr__(&self) -> String {
        match self.0 {
            Smudging::PaperSigma20 => "Smudging.paper_sigma20()".into(),
            Smudging::Statistical { lambda, noise_log2 } => {
                format!("Smudging.statistical({lambda}, {noise_log2})")
            }
        }
    }
}

/// User `id`'s partial decryption of a multi-key ciphertext (bound to it by a digest).
#[pyclass(frozen, module = "coterie.bfv", name = "PartialDecryption")]
pub struct PyPartialDecryption(PartialDecryption);

#[pymethods]
impl PyPartialDecryption {
    /// The user id.
    #[getter]
    fn id(&self) -> u64 {
        self.0.id()
    }
    /// The crate's versioned encoding.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let b = py.detach(|| self.0.to_bytes());
        PyBytes::new(py, &b)
    }
    /// Decodes `to_bytes` output for `params`.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, params: &PyParams, data: &[u8]) -> PyResult<Self> {
        let ctx = &params.ctx;
        Ok(PyPartialDecryption(py.detach(|| {
            guarded(|| PartialDecryption::from_bytes(ctx, data))
        })?))
    }
    fn __repr__(&self) -> String {
        format!("PartialDecryption(id={})", self.0.id())
    }
}

/// Encrypts `pt` under user `id`'s public key, labelled with `id` (a multi-key ciphertext).
#[pyfunction]
fn mk_encrypt(
    py: Python<'_>,
    pk: &PyPublicKey,
    id: u64,
    pt: &PyPlaintext,
) -> PyResult<PyCiphertext> {
    let (k, p) = (&pk.0, &pt.0);
    Ok(PyCiphertext(
        py.detach(|| mk::encrypt(k, id, p, &mut Csprng::new()))
            .map_err(err)?,
    ))
}

/// Labels a fresh two-part single-key ciphertext as user `id`'s multi-key ciphertext.
#[pyfunction]
fn mk_label(ct: &PyCiphertext, id: u64) -> PyResult<PyCiphertext> {
    Ok(PyCiphertext(mk::label(ct.0.clone(), id).map_err(err)?))
}

/// Table 2's gadget base `log2 B` for `users` users (seed 001: 46, 40 or 34 for 2, ≤ 4, ≤ 8).
#[pyfunction]
fn paper_base_log(users: usize) -> PyResult<u32> {
    match mk::paper_decomposition(users).map_err(err)? {
        Decomposition::PowerOfTwo { base_log } => Ok(base_log),
        Decomposition::Rns => Err(value_err("no power-of-two base")),
    }
}

/// `(id, SecretKey)` pairs as the crate's key list.
fn key_pairs<'a>(keys: &'a [(u64, PyRef<'a, PySecretKey>)]) -> Vec<(u64, &'a SecretKey)> {
    keys.iter().map(|(id, k)| (*id, &k.0)).collect()
}

/// Decrypts a multi-key ciphertext with all its users' secret keys in one hand (tests).
#[pyfunction]
fn mk_decrypt(
    py: Python<'_>,
    ct: &PyCiphertext,
    keys: Vec<(u64, PyRef<'_, PySecretKey>)>,
) -> PyResult<PyPlaintext> {
    let ks = key_pairs(&keys);
    let c = &ct.0;
    Ok(PyPlaintext(
        py.detach(|| coterie_bfv::encrypt::decrypt_multi_key(c, &ks))
            .map_err(err)?,
    ))
}

/// The noise budget in bits of a multi-key ciphertext under all its users' keys.
#[pyfunction]
fn mk_noise_budget(
    py: Python<'_>,
    ct: &PyCiphertext,
    keys: Vec<(u64, PyRef<'_, PySecretKey>)>,
) -> PyResult<f64> {
    let ks = key_pairs(&keys);
    let c = &ct.0;
    py.detach(|| mk::noise_budget(c, &ks)).map_err(err)
}

/// User `id`'s partial decryption of a multi-key ciphertext with its secret key.
#[pyfunction]
fn part_dec(
    py: Python<'_>,
    sk: &PySecretKey,
    id: u64,
    ct: &PyCiphertext,
    smudging: &PySmudging,
) -> PyResult<PyPartialDecryption> {
    let (s, c, m) = (&sk.0, &ct.0, &smudging.0);
    Ok(PyPartialDecryption(
        py.detach(|| mk::part_dec(s, id, c, m, &mut Csprng::new()))
            .map_err(err)?,
    ))
}

/// Merges one partial decryption per user of `ct` into the plaintext.
#[pyfunction]
fn merge(
    py: Python<'_>,
    ct: &PyCiphertext,
    partials: Vec<PyRef<'_, PyPartialDecryption>>,
) -> PyResult<PyPlaintext> {
    let ps: Vec<PartialDecryption> = partials.iter().map(|p| p.0.clone()).collect();
    let c = &ct.0;
    Ok(PyPlaintext(py.detach(|| mk::merge(c, &ps)).map_err(err)?))
}

// ---------------------------------------------------------------------------------------------
// Threshold proxy re-encryption (coterie_bfv::reenc).

/// The masking key `r_{delegator→delegatee}` the delegatee samples (secret).
#[pyclass(frozen, module = "coterie.bfv", name = "MaskingKey")]
pub struct PyMaskingKey(MaskingKey);

#[pymethods]
impl PyMaskingKey {
    /// ReKeyGen step 1, by the delegatee: a fresh uniform masking key.
    #[staticmethod]
    fn sample(py: Python<'_>, params: &PyParams, delegator: u64, delegatee: u64) -> Self {
        let ctx = &params.ctx;
        PyMaskingKey(
            py.detach(|| MaskingKey::sample(ctx, delegator, delegatee, &mut Csprng::new())),
        )
    }
    /// The delegator.
    #[getter]
    fn delegator(&self) -> u64 {
        self.0.delegator()
    }
    /// The delegatee.
    #[getter]
    fn delegatee(&self) -> u64 {
        self.0.delegatee()
    }
    /// The crate's versioned encoding (secret!).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.0.to_bytes())
    }
    /// Decodes `to_bytes` output for `params`.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, params: &PyParams, data: &[u8]) -> PyResult<Self> {
        let ctx = &params.ctx;
        Ok(PyMaskingKey(py.detach(|| {
            guarded(|| MaskingKey::from_bytes(ctx, data))
        })?))
    }
    fn __repr__(&self) -> String {
        format!(
            "MaskingKey({} -> {}, ..)",
            self.0.delegator(),
            self.0.delegatee()
        )
    }
}

/// Proxy `proxy`'s additive share of a re-encryption key (secret).
#[pyclass(frozen, module = "coterie.bfv", name = "ReKeyShare")]
pub struct PyReKeyShare(ReKeyShare);

#[pymethods]
impl PyReKeyShare {
    /// The delegator.
    #[getter]
    fn delegator(&self) -> u64 {
        self.0.delegator()
    }
    /// The delegatee.
    #[getter]
    fn delegatee(&self) -> u64 {
        self.0.delegatee()
    }
    /// The proxy index (0 … proxies − 1).
    #[getter]
    fn proxy(&self) -> usize {
        self.0.proxy()
    }
    /// The number of proxies.
    #[getter]
    fn proxies(&self) -> usize {
        self.0.proxies()
    }
    /// The crate's versioned encoding (secret!).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.0.to_bytes())
    }
    /// Decodes `to_bytes` output for `params`.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, params: &PyParams, data: &[u8]) -> PyResult<Self> {
        let ctx = &params.ctx;
        Ok(PyReKeyShare(py.detach(|| {
            guarded(|| ReKeyShare::from_bytes(ctx, data))
        })?))
    }
    fn __repr__(&self) -> String {
        format!(
            "ReKeyShare({} -> {}, proxy {} of {}, ..)",
            self.0.delegator(),
            self.0.delegatee(),
            self.0.proxy(),
            self.0.proxies()
        )
    }
}

/// A proxy's share of a re-encrypted ciphertext's `c_0` (bound to the ciphertext).
#[pyclass(frozen, module = "coterie.bfv", name = "ReEncShare")]
pub struct PyReEncShare(ReEncShare);

#[pymethods]
impl PyReEncShare {
    /// The proxy index.
    #[getter]
    fn proxy(&self) -> usize {
        self.0.proxy()
    }
    /// The number of proxies.
    #[getter]
    fn proxies(&self) -> usize {
        self.0.proxies()
    }
    /// The delegatee.
    #[getter]
    fn delegatee(&self) -> u64 {
        self.0.delegatee()
    }
    /// The crate's versioned encoding.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let b = py.detach(|| self.0.to_bytes());
        PyBytes::new(py, &b)
    }
    /// Decodes `to_bytes` output for `params`.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, params: &PyParams, data: &[u8]) -> PyResult<Self> {
        let ctx = &params.ctx;
        Ok(PyReEncShare(py.detach(|| {
            guarded(|| ReEncShare::from_bytes(ctx, data))
        })?))
    }
    fn __repr__(&self) -> String {
        format!(
            "ReEncShare(proxy {} of {}, delegatee {})",
            self.0.proxy(),
            self.0.proxies(),
            self.0.delegatee()
        )
    }
}

/// A ciphertext re-encrypted for a delegatee (decrypts with its masking keys only).
#[pyclass(frozen, module = "coterie.bfv", name = "ReEncryptedCiphertext")]
pub struct PyReEncryptedCiphertext(ReEncryptedCiphertext);

#[pymethods]
impl PyReEncryptedCiphertext {
    /// The delegatee.
    #[getter]
    fn delegatee(&self) -> u64 {
        self.0.delegatee()
    }
    /// The parts as a multi-key ciphertext (its phase is under the masking keys).
    #[getter]
    fn ciphertext(&self) -> PyCiphertext {
        PyCiphertext(self.0.ciphertext().clone())
    }
    /// The crate's versioned encoding.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let b = py.detach(|| self.0.to_bytes());
        PyBytes::new(py, &b)
    }
    /// Decodes `to_bytes` output for `params`.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, params: &PyParams, data: &[u8]) -> PyResult<Self> {
        let ctx = &params.ctx;
        Ok(PyReEncryptedCiphertext(py.detach(|| {
            guarded(|| ReEncryptedCiphertext::from_bytes(ctx, data))
        })?))
    }
    fn __repr__(&self) -> String {
        format!("ReEncryptedCiphertext(delegatee={})", self.0.delegatee())
    }
}

/// ReKeyGen step 2, by the delegator: `rk = s − r` split into `proxies` additive shares.
#[pyfunction]
fn rekey_shares(
    py: Python<'_>,
    sk: &PySecretKey,
    masking_key: &PyMaskingKey,
    proxies: usize,
) -> PyResult<Vec<PyReKeyShare>> {
    let (s, m) = (&sk.0, &masking_key.0);
    let v = py
        .detach(|| reenc::rekey_shares(s, m, proxies, &mut Csprng::new()))
        .map_err(err)?;
    Ok(v.into_iter().map(PyReKeyShare).collect())
}

/// ReKeyGen in one call (both roles in one process): `(masking_key, shares)`.
#[pyfunction]
fn rekey_gen(
    py: Python<'_>,
    sk: &PySecretKey,
    delegator: u64,
    delegatee: u64,
    proxies: usize,
) -> PyResult<(PyMaskingKey, Vec<PyReKeyShare>)> {
    let s = &sk.0;
    let (m, v) = py
        .detach(|| reenc::rekey_gen(s, delegator, delegatee, proxies, &mut Csprng::new()))
        .map_err(err)?;
    Ok((PyMaskingKey(m), v.into_iter().map(PyReKeyShare).collect()))
}

/// ReEnc step 1, by proxy `proxy` with its re-encryption key shares (one per user of `ct`).
#[pyfunction]
fn reenc_share(
    py: Python<'_>,
    proxy: usize,
    delegatee: u64,
    shares: Vec<PyRef<'_, PyReKeyShare>>,
    ct: &PyCiphertext,
    smudging: &PySmudging,
) -> PyResult<PyReEncShare> {
    let sh: Vec<ReKeyShare> = shares.iter().map(|s| s.0.clone()).collect();
    let (c, m) = (&ct.0, &smudging.0);
    Ok(PyReEncShare(
        py.detach(|| reenc::reenc_share(proxy, delegatee, &sh, c, m, &mut Csprng::new()))
            .map_err(err)?,
    ))
}

/// ReEnc step 3, by the delegatee: combines one share per proxy.
#[pyfunction]
fn reenc_combine(
    py: Python<'_>,
    ct: &PyCiphertext,
    shares: Vec<PyRef<'_, PyReEncShare>>,
) -> PyResult<PyReEncryptedCiphertext> {
    let sh: Vec<ReEncShare> = shares.iter().map(|s| s.0.clone()).collect();
    let c = &ct.0;
    Ok(PyReEncryptedCiphertext(
        py.detach(|| reenc::reenc_combine(c, &sh)).map_err(err)?,
    ))
}

/// Decrypts a re-encrypted ciphertext with the delegatee's masking keys.
#[pyfunction]
fn decrypt_reencrypted(
    py: Python<'_>,
    masking_keys: Vec<PyRef<'_, PyMaskingKey>>,
    rct: &PyReEncryptedCiphertext,
) -> PyResult<PyPlaintext> {
    let ks: Vec<MaskingKey> = masking_keys.iter().map(|k| k.0.clone()).collect();
    let r = &rct.0;
    Ok(PyPlaintext(
        py.detach(|| reenc::decrypt_reencrypted(&ks, r))
            .map_err(err)?,
    ))
}

/// The noise budget in bits of a re-encrypted ciphertext under the masking keys.
#[pyfunction]
fn reenc_noise_budget(
    py: Python<'_>,
    masking_keys: Vec<PyRef<'_, PyMaskingKey>>,
    rct: &PyReEncryptedCiphertext,
) -> PyResult<f64> {
    let ks: Vec<MaskingKey> = masking_keys.iter().map(|k| k.0.clone()).collect();
    let r = &rct.0;
    py.detach(|| reenc::noise_budget(&ks, r)).map_err(err)
}

// ---------------------------------------------------------------------------------------------
// Collective keys (coterie_bfv::multiparty), in-process parties.

fn secret_keys<'a>(keys: &'a [PyRef<'a, PySecretKey>]) -> PyResult<Vec<&'a SecretKey>> {
    if keys.is_empty() {
        return Err(value_err("no secret keys"));
    }
    Ok(keys.iter().map(|k| &k.0).collect())
}

/// The collective public key of `s = Σ s_i`: each party's share `−a·s_i + e_i` over the CRS
/// `a` from `seed`, aggregated (every step is the crate's `PublicKeyGen`).
#[pyfunction]
#[pyo3(signature = (secret_keys, seed=None))]
fn collective_public_key(
    py: Python<'_>,
    secret_keys: Vec<PyRef<'_, PySecretKey>>,
    seed: Option<&[u8]>,
) -> PyResult<PyPublicKey> {
    let sks = self::secret_keys(&secret_keys)?;
    let seed = seed_arg(seed)?;
    let pk = py
        .detach(|| {
            let ckg = PublicKeyGen::new(sks[0].context());
            let crp = ckg.gen_crp(&seed)?;
            let mut rng = Csprng::new();
            let shares = sks
                .iter()
                .map(|sk| ckg.gen_share(sk, &crp, &mut rng))
                .collect::<coterie_bfv::Result<Vec<_>>>()?;
            ckg.finalize(&ckg.aggregate(&shares)?, &crp)
        })
        .map_err(err)?;
    Ok(PyPublicKey(pk))
}

/// The collective relinearization key of `s = Σ s_i` by the crate's two-round `RelinKeyGen`.
#[pyfunction]
#[pyo3(signature = (secret_keys, seed=None, base_log=None))]
fn collective_relin_key(
    py: Python<'_>,
    secret_keys: Vec<PyRef<'_, PySecretKey>>,
    seed: Option<&[u8]>,
    base_log: Option<u32>,
) -> PyResult<PyRelinKey> {
    let sks = self::secret_keys(&secret_keys)?;
    let seed = seed_arg(seed)?;
    let d = decomposition(base_log)?;
    let rlk = py
        .detach(|| {
            let rkg = RelinKeyGen::new(sks[0].context(), d)?;
            let crp = rkg.gen_crp(&seed)?;
            let mut rng = Csprng::new();
            let mut ephemerals = Vec::with_capacity(sks.len());
            let mut round_one = Vec::with_capacity(sks.len());
            for sk in sks.iter().copied() {
                let (e, s) = rkg.gen_share_round_one(sk, &crp, &mut rng)?;
                ephemerals.push(e);
                round_one.push(s);
            }
            let r1 = rkg.aggregate(&round_one)?;
            let round_two = sks
                .iter()
                .zip(&ephemerals)
                .map(|(sk, e)| rkg.gen_share_round_two(e, sk, &r1, &mut rng))
                .collect::<coterie_bfv::Result<Vec<_>>>()?;
            rkg.finalize(&rkg.aggregate(&round_two)?, &r1)
        })
        .map_err(err)?;
    Ok(PyRelinKey(rlk))
}

// ---------------------------------------------------------------------------------------------

/// Registers this module's classes and functions.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyParams>()?;
    m.add_class::<PyPlaintext>()?;
    m.add_class::<PySecretKey>()?;
    m.add_class::<PyPublicKey>()?;
    m.add_class::<PyRelinKey>()?;
    m.add_class::<PyGaloisKeys>()?;
    m.add_class::<PyCiphertext>()?;
    m.add_class::<PyMkCrs>()?;
    m.add_class::<PyMkRelinKey>()?;
    m.add_class::<PySharedRelinKey>()?;
    m.add_class::<PySmudging>()?;
    m.add_class::<PyPartialDecryption>()?;
    m.add_class::<PyMaskingKey>()?;
    m.add_class::<PyReKeyShare>()?;
    m.add_class::<PyReEncShare>()?;
    m.add_class::<PyReEncryptedCiphertext>()?;
    m.add_function(wrap_pyfunction!(_rust_time_multiply, m)?)?;
    m.add_function(wrap_pyfunction!(mk_encrypt, m)?)?;
    m.add_function(wrap_pyfunction!(mk_label, m)?)?;
    m.add_function(wrap_pyfunction!(paper_base_log, m)?)?;
    m.add_function(wrap_pyfunction!(mk_decrypt, m)?)?;
    m.add_function(wrap_pyfunction!(mk_noise_budget, m)?)?;
    m.add_function(wrap_pyfunction!(part_dec, m)?)?;
    m.add_function(wrap_pyfunction!(merge, m)?)?;
    m.add_function(wrap_pyfunction!(rekey_shares, m)?)?;
    m.add_function(wrap_pyfunction!(rekey_gen, m)?)?;
    m.add_function(wrap_pyfunction!(reenc_share, m)?)?;
    m.add_function(wrap_pyfunction!(reenc_combine, m)?)?;
    m.add_function(wrap_pyfunction!(decrypt_reencrypted, m)?)?;
    m.add_function(wrap_pyfunction!(reenc_noise_budget, m)?)?;
    m.add_function(wrap_pyfunction!(collective_public_key, m)?)?;
    m.add_function(wrap_pyfunction!(collective_relin_key, m)?)?;
    Ok(())
}
