//! `coterie._native.hss`: DDH homomorphic secret sharing (coterie-hss) from Python.
//!
//! Thin wrappers over the crate: [`Params`] by name (the paper's Table 3 rows on the 1536-bit
//! group, insecure toy groups), the crate's two-party key generation run in-process
//! ([`coterie_hss::protocol::dkg`] over an in-memory mesh) or its trusted dealer
//! ([`insecure_keygen_trusted_dealer`]), a client's `Enc` ([`Encryptor::encrypt`]) and
//! secret-key shares ([`share_l2_secret_key`]), RMS programs built with the crate's
//! [`ProgramBuilder`] and checked by [`Program::validate`] / [`Program::eval_plain`], one
//! server's evaluation ([`eval`]) and the reconstruction ([`reconstruct`]). The symbolic
//! expression builder lives on the Python side (python/coterie/hss.py) and calls
//! [`PyProgramBuilder`].
//!
//! Bounds checked here (so that nothing reachable from Python panics): magnitude bounds,
//! constants, scalars and plain inputs are at most 2^31 in absolute value (so `eval_plain`'s
//! `i64` products cannot overflow), output moduli are in `[1, 2^63 − 1]`, parameters are in the
//! crate's supported ranges, and everything decoded from bytes is validated before use.

use std::sync::OnceLock;
use std::time::Duration;

use coterie_hss::group::GroupId;
use coterie_hss::program::{EvalOptions, Instr, Program, ProgramBuilder, eval};
use coterie_hss::protocol::{L2Batch, dkg};
use coterie_hss::scheme::{
    self, Encryptor, EvalKey, Evaluator, L1Input, Params, PreparedInput, PublicKey, SecretKey,
    insecure_keygen_trusted_dealer, reconstruct, share_l2_secret_key,
};
use coterie_math::bigint::BigInt;
use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
use pyo3::IntoPyObjectExt;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::{err, value_err};

pyo3::create_exception!(
    coterie.hss,
    FlaggedError,
    crate::CoterieError,
    "Both servers flagged a possible failure (the scheme's Las Vegas output ⊥): the reconstructed \
     value may be wrong. Evaluate again under a fresh nonce."
);

/// Largest absolute value of a magnitude bound, constant, scalar or plain input.
const MAX_ABS: i64 = 1 << 31;
/// Largest output modulus `β` (`eval_plain` reduces in `i64`).
const MAX_BETA: u64 = i64::MAX as u64;
/// Largest key length accepted (the paper uses 160 bits).
const MAX_KEY_BITS: u32 = 1024;

/// Python name, `GroupId`, and the crate's security statement of each group.
const GROUPS: [(&str, GroupId, &str); 4] = [
    (
        "p1536",
        GroupId::P1536,
        "p = 2^1536 - 11510609, the paper's group (Sec. 6, Remark 6.1): the paper's 80-bit \
         target (1536-bit DL in Z_p^* with a 160-bit short ElGamal exponent under circular \
         security)",
    ),
    (
        "insecure_toy128",
        GroupId::InsecureToy128,
        "toy, insecure: p = 2^128 - 15449, for statistical failure-rate tests; no security at all",
    ),
    (
        "insecure_toy256",
        GroupId::InsecureToy256,
        "toy, insecure: p = 2^256 - 36113; no security",
    ),
    (
        "insecure_toy512",
        GroupId::InsecureToy512,
        "toy, insecure: p = 2^512 - 235937; no security",
    ),
];

fn group_name(id: GroupId) -> &'static str {
    GROUPS.iter().find(|g| g.1 == id).map_or("unknown", |g| g.0)
}

fn group_by_name(name: &str) -> PyResult<GroupId> {
    GROUPS
        .iter()
        .find(|g| g.0 == name)
        .map(|g| g.1)
        .ok_or_else(|| {
            let names: Vec<&str> = GROUPS.iter().map(|g| g.0).collect();
            value_err(format!(
                "unknown HSS group {name:?}; the groups are {}",
                names.join(", ")
            ))
        })
}

/// The crate's supported parameter ranges (its `Params::check` is crate-private), plus a cap on
/// the key length so that key generation stays bounded.
fn check_params(p: &Params) -> PyResult<()> {
    if !matches!(p.log_base, 1 | 2 | 4) {
        return Err(value_err(format!(
            "log_base must be 1, 2 or 4 (B = 2, 4 or 16), got {}",
            p.log_base
        )));
    }
    if p.key_bits == 0 || p.key_bits > MAX_KEY_BITS {
        return Err(value_err(format!(
            "key_bits must be in [1, {MAX_KEY_BITS}], got {}",
            p.key_bits
        )));
    }
    if !(2..=40).contains(&p.d) {
        return Err(value_err(format!(
            "the pattern length d must be in [2, 40], got {}",
            p.d
        )));
    }
    if !(1..=16).contains(&p.window) {
        return Err(value_err(format!(
            "the window R must be in [1, 16], got {}",
            p.window
        )));
    }
    Ok(())
}

fn rng_from(seed: Option<u64>) -> StdRng {
    match seed {
        Some(s) => StdRng::seed_from_u64(s),
        None => rand::make_rng::<StdRng>(),
    }
}

fn check_value(what: &str, v: i64) -> PyResult<()> {
    if v.unsigned_abs() > MAX_ABS as u64 {
        return Err(value_err(format!(
            "{what} {v} is out of range: |{what}| must be at most 2^31"
        )));
    }
    Ok(())
}

fn check_beta(beta: u64) -> PyResult<()> {
    if beta == 0 || beta > MAX_BETA {
        return Err(value_err(format!(
            "the output modulus beta must be in [1, 2^63 - 1], got {beta}"
        )));
    }
    Ok(())
}

fn check_m_rms(m: u64) -> PyResult<()> {
    if m == 0 || m > MAX_ABS as u64 {
        return Err(value_err(format!(
            "the magnitude bound M_RMS must be in [1, 2^31], got {m}"
        )));
    }
    Ok(())
}

/// The crate's `validate` plus this binding's range rules (see the module docs).
fn check_program(p: &Program) -> PyResult<()> {
    p.validate().map_err(err)?;
    check_m_rms(p.m_rms)?;
    for ins in &p.instrs {
        match *ins {
            Instr::Const { value, .. } => check_value("constant", value)?,
            Instr::Scale { k, .. } => check_value("scalar", k)?,
            Instr::TerminalMul { beta, .. } | Instr::Output { beta, .. } => check_beta(beta)?,
            _ => {}
        }
    }
    Ok(())
}

fn betas_of(p: &Program) -> Vec<u64> {
    p.instrs
        .iter()
        .filter_map(|i| match *i {
            Instr::TerminalMul { beta, .. } | Instr::Output { beta, .. } => Some(beta),
            _ => None,
        })
        .collect()
}

fn bytes<'py>(py: Python<'py>, r: coterie_hss::Result<Vec<u8>>) -> PyResult<Bound<'py, PyBytes>> {
    Ok(PyBytes::new(py, &r.map_err(err)?))
}

// ---------------------------------------------------------------------------------------------
// Parameters
// ---------------------------------------------------------------------------------------------

/// HSS parameters: group, key base `B = 2^log_base`, ElGamal key length, pattern length `d`,
/// fixed-base window `R`. Build them with `Params.table3` (the paper's rows, 1536-bit group),
/// `Params.with_failure` or `Params.insecure_toy` (toy group, no security).
#[pyclass(frozen, eq, name = "Params", module = "coterie.hss")]
#[derive(Clone, PartialEq)]
pub struct PyParams {
    inner: Params,
}

#[pymethods]
impl PyParams {
    /// The paper's Table 3 row for failure `2^-eps_log2` per multiplication, base
    /// `B = 2^log_base` and window `R`: group p1536, 160-bit key (the paper's 80-bit target).
    #[staticmethod]
    fn table3(eps_log2: u32, log_base: u32, window: u32) -> PyResult<Self> {
        let inner = Params::table3(eps_log2, log_base, window).map_err(err)?;
        check_params(&inner)?;
        Ok(Self { inner })
    }

    /// Parameters on a named group for a per-multiplication failure target `2^-eps_log2`.
    #[staticmethod]
    fn with_failure(
        group: &str,
        key_bits: u32,
        eps_log2: u32,
        log_base: u32,
        window: u32,
    ) -> PyResult<Self> {
        let id = group_by_name(group)?;
        if key_bits == 0 || key_bits > MAX_KEY_BITS {
            return Err(value_err(format!(
                "key_bits must be in [1, {MAX_KEY_BITS}], got {key_bits}"
            )));
        }
        let inner = Params::with_failure(id, key_bits, eps_log2, log_base, window).map_err(err)?;
        check_params(&inner)?;
        Ok(Self { inner })
    }

    /// **Toy, insecure** parameters on the 128-bit toy group with a short key (for tests where
    /// failures must be frequent). No security.
    #[staticmethod]
    fn insecure_toy(log_base: u32, key_bits: u32, d: u32) -> PyResult<Self> {
        let inner = Params::insecure_toy(log_base, key_bits, d);
        check_params(&inner)?;
        Ok(Self { inner })
    }

    /// The group's name (`"p1536"` or `"insecure_toy128"`, ...).
    #[getter]
    fn group(&self) -> &'static str {
        group_name(self.inner.group)
    }
    /// `log2 B`.
    #[getter]
    fn log_base(&self) -> u32 {
        self.inner.log_base
    }
    /// The key base `B`.
    #[getter]
    fn base(&self) -> u64 {
        self.inner.base()
    }
    /// ElGamal key length in bits.
    #[getter]
    fn key_bits(&self) -> u32 {
        self.inner.key_bits
    }
    /// Statistical masking bits of integer key shares.
    #[getter]
    fn stat_bits(&self) -> u32 {
        self.inner.stat_bits
    }
    /// Distinguished-point pattern length `d`.
    #[getter]
    fn d(&self) -> u32 {
        self.inner.d
    }
    /// Fixed-base window `R`.
    #[getter]
    fn window(&self) -> u32 {
        self.inner.window
    }
    /// Number of key digits `s`.
    #[getter]
    fn s(&self) -> usize {
        self.inner.s()
    }
    /// Whether these parameters carry no security claim (a toy group or a key shorter than the
    /// paper's 160 bits).
    #[getter]
    fn insecure(&self) -> bool {
        self.inner.group != GroupId::P1536 || self.inner.key_bits < 160
    }
    /// The crate's security statement for these parameters.
    #[getter]
    fn security(&self) -> String {
        let g = GROUPS.iter().find(|g| g.1 == self.inner.group);
        let stmt = g.map_or("unknown group", |g| g.2);
        if self.inner.group == GroupId::P1536 && self.inner.key_bits < 160 {
            format!(
                "insecure: {}-bit key, shorter than the 160 bits of the paper's target ({stmt})",
                self.inner.key_bits
            )
        } else {
            stmt.to_string()
        }
    }
    /// The Table 2 failure estimate `(1 + s(B-1)/2) / 2^(d+3)` of one randomized RMS
    /// multiplication of bits.
    fn predicted_failure(&self) -> f64 {
        self.inner.predicted_failure()
    }
    fn __repr__(&self) -> String {
        let p = &self.inner;
        format!(
            "Params(group={:?}, log_base={}, key_bits={}, d={}, window={}, stat_bits={})",
            self.group(),
            p.log_base,
            p.key_bits,
            p.d,
            p.window,
            p.stat_bits
        )
    }
}

/// The named groups with the crate's security statement of each.
#[pyfunction]
fn groups() -> Vec<(&'static str, &'static str)> {
    GROUPS.iter().map(|g| (g.0, g.2)).collect()
}

// ---------------------------------------------------------------------------------------------
// Keys and inputs
// ---------------------------------------------------------------------------------------------

/// The public key `pk = (h = g^c, (E(c_i))_i)`: clients encrypt inputs under it.
#[pyclass(frozen, name = "PublicKey", module = "coterie.hss")]
pub struct PyPublicKey {
    inner: PublicKey,
    enc: OnceLock<Encryptor>,
}

impl PyPublicKey {
    fn new(inner: PublicKey) -> Self {
        Self {
            inner,
            enc: OnceLock::new(),
        }
    }
    fn encryptor(&self) -> PyResult<&Encryptor> {
        if let Some(e) = self.enc.get() {
            return Ok(e);
        }
        let e = self.inner.encryptor().map_err(err)?;
        Ok(self.enc.get_or_init(|| e))
    }
    fn encrypt_values(&self, xs: &[i64], seed: Option<u64>) -> PyResult<Vec<L1Input>> {
        for &x in xs {
            check_value("input", x)?;
        }
        let enc = self.encryptor()?;
        let mut rng = rng_from(seed);
        Ok(xs
            .iter()
            .map(|&x| enc.encrypt(&self.inner, &BigInt::from(x), &mut rng))
            .collect())
    }
}

#[pymethods]
impl PyPublicKey {
    /// The parameters of this key.
    #[getter]
    fn params(&self) -> PyParams {
        PyParams {
            inner: self.inner.params,
        }
    }
    /// `Enc(pk, x)`: the level-1 encoding `L1(x)` of one integer, public to both servers.
    /// `insecure_seed` fixes the randomness (tests only; default: OS entropy).
    #[pyo3(signature = (x, *, insecure_seed=None))]
    fn encrypt(
        &self,
        py: Python<'_>,
        x: i64,
        insecure_seed: Option<u64>,
    ) -> PyResult<PyEncryptedInput> {
        let mut v = py.detach(|| self.encrypt_values(&[x], insecure_seed))?;
        Ok(PyEncryptedInput {
            inner: v.pop().ok_or_else(|| value_err("nothing encrypted"))?,
        })
    }
    /// `Enc(pk, x)` of each integer of `xs`, in order.
    #[pyo3(signature = (xs, *, insecure_seed=None))]
    fn encrypt_all(
        &self,
        py: Python<'_>,
        xs: Vec<i64>,
        insecure_seed: Option<u64>,
    ) -> PyResult<Vec<PyEncryptedInput>> {
        let v = py.detach(|| self.encrypt_values(&xs, insecure_seed))?;
        Ok(v.into_iter()
            .map(|inner| PyEncryptedInput { inner })
            .collect())
    }
    /// The key in the coterie envelope (`HSpk`).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        bytes(py, scheme::to_bytes(&self.inner))
    }
    /// Decodes and validates (parameters, group elements, sizes) a key from `to_bytes`.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let pk = py.detach(|| -> PyResult<PublicKey> {
            let pk: PublicKey = scheme::from_bytes(data).map_err(err)?;
            check_params(&pk.params)?;
            pk.validate().map_err(err)?;
            Ok(pk)
        })?;
        Ok(Self::new(pk))
    }
    fn __repr__(&self) -> String {
        format!("PublicKey({})", self.params().__repr__())
    }
}

/// One server's evaluation key `ek_b` (integer shares of the ElGamal key and its digits, the
/// common PRF key). Secret: give it only to server `party`.
#[pyclass(frozen, name = "EvalKey", module = "coterie.hss")]
pub struct PyEvalKey {
    inner: EvalKey,
}

#[pymethods]
impl PyEvalKey {
    /// The server index `b` (0 or 1).
    #[getter]
    fn party(&self) -> u8 {
        self.inner.party
    }
    /// The key in the coterie envelope (`HSek`). Secret.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        bytes(py, scheme::to_bytes(&self.inner))
    }
    /// Decodes a key from `to_bytes` (checked against the public key when evaluating).
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        let ek: EvalKey = scheme::from_bytes(data).map_err(err)?;
        if ek.party > 1 {
            return Err(err(format!(
                "malformed input: an evaluation key is for server 0 or 1, not {}",
                ek.party
            )));
        }
        Ok(Self { inner: ek })
    }
    fn __repr__(&self) -> String {
        format!("EvalKey(party={})", self.inner.party)
    }
}

/// The ElGamal secret key (only the trusted dealer makes one): a client holding it gives the
/// servers level-2 shares directly (secret-key HSS), which makes loads free.
#[pyclass(frozen, name = "SecretKey", module = "coterie.hss")]
pub struct PySecretKey {
    inner: SecretKey,
    params: Params,
}

#[pymethods]
impl PySecretKey {
    /// Secret-key HSS: level-2 shares `L2(x)` of each integer of `xs` for server 0 and server 1
    /// (pass them to `evaluate(..., l2=...)` along with the encrypted inputs).
    #[pyo3(signature = (xs, *, insecure_seed=None))]
    fn share(
        &self,
        py: Python<'_>,
        xs: Vec<i64>,
        insecure_seed: Option<u64>,
    ) -> PyResult<(PyShareBatch, PyShareBatch)> {
        for &x in &xs {
            check_value("input", x)?;
        }
        let (a, b) = py.detach(|| {
            let mut rng = rng_from(insecure_seed);
            let mut a = Vec::with_capacity(xs.len());
            let mut b = Vec::with_capacity(xs.len());
            for &x in &xs {
                let (s0, s1) = share_l2_secret_key(&self.params, &self.inner, x, &mut rng);
                a.push(s0);
                b.push(s1);
            }
            (a, b)
        });
        Ok((
            PyShareBatch {
                inner: L2Batch { shares: a },
            },
            PyShareBatch {
                inner: L2Batch { shares: b },
            },
        ))
    }
    fn __repr__(&self) -> String {
        "SecretKey(..)".into()
    }
}

/// A level-1 encoding `L1(x) = (E(x), E(x·c_i)_i)` of one input, made by a client and sent to
/// both servers.
#[pyclass(frozen, name = "EncryptedInput", module = "coterie.hss")]
pub struct PyEncryptedInput {
    inner: L1Input,
}

#[pymethods]
impl PyEncryptedInput {
    /// The input in the coterie envelope (`HSl1`).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        bytes(py, scheme::to_bytes(&self.inner))
    }
    /// Decodes an input from `to_bytes` (its group elements are checked against the public key
    /// by `validate` and by `evaluate`).
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: scheme::from_bytes(data).map_err(err)?,
        })
    }
    /// Checks the input against `pk`: digit count, every element in the group.
    fn validate(&self, py: Python<'_>, pk: &PyPublicKey) -> PyResult<()> {
        py.detach(|| self.inner.validate(&pk.inner).map_err(err))
    }
    /// Number of digit ciphertexts `E(x·c_i)`.
    #[getter]
    fn num_digits(&self) -> usize {
        self.inner.digits.len()
    }
    fn __repr__(&self) -> String {
        format!("EncryptedInput(num_digits={})", self.inner.digits.len())
    }
}

/// One server's level-2 shares of a client's inputs (secret-key HSS), one per input.
#[pyclass(frozen, name = "ShareBatch", module = "coterie.hss")]
pub struct PyShareBatch {
    inner: L2Batch,
}

/// Bit bound of decoded level-2 shares: what `share_l2_secret_key` produces (as the crate's
/// file-system shares check).
fn l2_max_bits(p: &Params) -> u32 {
    p.key_bits + p.stat_bits + 80
}

#[pymethods]
impl PyShareBatch {
    /// The batch in the coterie envelope (`HSl2`).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        bytes(py, scheme::to_bytes(&self.inner))
    }
    /// Decodes a batch from `to_bytes` (share bounds are checked by `evaluate`).
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: scheme::from_bytes(data).map_err(err)?,
        })
    }
    fn __len__(&self) -> usize {
        self.inner.shares.len()
    }
    fn __repr__(&self) -> String {
        format!("ShareBatch(len={})", self.inner.shares.len())
    }
}

// ---------------------------------------------------------------------------------------------
// Key generation
// ---------------------------------------------------------------------------------------------

/// The paper's `Gen` run by a single **trusted dealer**, insecure against the dealer (it sees
/// the key): returns `(pk, ek0, ek1, sk)`. `insecure_seed` fixes the randomness (tests only).
#[pyfunction]
#[pyo3(name = "insecure_keygen_trusted_dealer", signature = (params, *, insecure_seed=None))]
fn insecure_keygen_trusted_dealer_py(
    py: Python<'_>,
    params: &PyParams,
    insecure_seed: Option<u64>,
) -> PyResult<(PyPublicKey, PyEvalKey, PyEvalKey, PySecretKey)> {
    let p = params.inner;
    check_params(&p)?;
    let (pk, ek0, ek1, sk) = py.detach(|| {
        let mut rng = rng_from(insecure_seed);
        insecure_keygen_trusted_dealer(&p, &mut rng).map_err(err)
    })?;
    Ok((
        PyPublicKey::new(pk),
        PyEvalKey { inner: ek0 },
        PyEvalKey { inner: ek1 },
        PySecretKey {
            inner: sk,
            params: p,
        },
    ))
}

/// The crate's distributed key generation (`protocol::dkg`) between the two servers, run here
/// in-process over an in-memory mesh: returns `(pk, ek0, ek1)`; no party sees the key.
#[pyfunction]
#[pyo3(signature = (params, *, insecure_seed=None))]
fn keygen(
    py: Python<'_>,
    params: &PyParams,
    insecure_seed: Option<u64>,
) -> PyResult<(PyPublicKey, PyEvalKey, PyEvalKey)> {
    let p = params.inner;
    check_params(&p)?;
    let (pk0, ek0, pk1, ek1) = py.detach(|| -> PyResult<_> {
        let mut master = rng_from(insecure_seed);
        let rngs = [StdRng::from_rng(&mut master), StdRng::from_rng(&mut master)];
        let rt = crate::runtime()?;
        let opts = MeshOptions {
            timeout: Duration::from_secs(600),
            ..MeshOptions::default()
        };
        let mut meshes = InMemoryMesh::group(2, opts);
        let m1 = meshes.pop().ok_or_else(|| err("no mesh"))?;
        let m0 = meshes.pop().ok_or_else(|| err("no mesh"))?;
        let [r0, r1] = rngs;
        let party = |mut m: InMemoryMesh, mut rng: StdRng| async move {
            let keys = dkg(&mut m, &p, &mut rng).await;
            let closed = m.close().await;
            let keys = keys.map_err(err)?;
            closed.map_err(err)?;
            Ok::<_, PyErr>(keys)
        };
        let (a, b) = rt.block_on(async { tokio::join!(party(m0, r0), party(m1, r1)) });
        let ((pk0, ek0), (pk1, ek1)) = (a?, b?);
        Ok((pk0, ek0, pk1, ek1))
    })?;
    if pk0.h != pk1.h || pk0.key_digits != pk1.key_digits {
        return Err(err(
            "protocol failure: the two servers derived different public keys",
        ));
    }
    drop(pk1);
    Ok((
        PyPublicKey::new(pk0),
        PyEvalKey { inner: ek0 },
        PyEvalKey { inner: ek1 },
    ))
}

// ---------------------------------------------------------------------------------------------
// Programs
// ---------------------------------------------------------------------------------------------

/// The crate's `ProgramBuilder`: adds RMS instructions one by one; each method that defines a
/// memory cell returns its index. `build()` checks the program (`Program.validate`).
#[pyclass(name = "ProgramBuilder", module = "coterie.hss")]
pub struct PyProgramBuilder {
    inner: ProgramBuilder,
}

#[pymethods]
impl PyProgramBuilder {
    /// A program over `num_inputs` inputs with magnitude bound `M_RMS = magnitude_bound`.
    #[new]
    #[pyo3(signature = (num_inputs, magnitude_bound=1))]
    fn new(num_inputs: u32, magnitude_bound: u64) -> PyResult<Self> {
        check_m_rms(magnitude_bound)?;
        if num_inputs as usize > coterie_hss::program::MAX_PROGRAM_LEN {
            return Err(value_err(format!("too many inputs: {num_inputs}")));
        }
        Ok(Self {
            inner: ProgramBuilder::new(num_inputs).magnitude_bound(magnitude_bound),
        })
    }
    /// `y <- x_input` (a load: one multiplication by `L2(1)`, converted at the program's bound).
    fn load(&mut self, input: u32) -> u32 {
        self.inner.load(input)
    }
    /// `y <- value` (a public constant, free).
    fn constant(&mut self, value: i64) -> PyResult<u32> {
        check_value("constant", value)?;
        Ok(self.inner.constant(value))
    }
    /// `y <- a + b` (free).
    fn add(&mut self, a: u32, b: u32) -> u32 {
        self.inner.add(a, b)
    }
    /// `y <- a - b` (free).
    fn sub(&mut self, a: u32, b: u32) -> u32 {
        self.inner.sub(a, b)
    }
    /// `y <- k·a` for a public integer `k` (free).
    fn scale(&mut self, a: u32, k: i64) -> PyResult<u32> {
        check_value("scalar", k)?;
        Ok(self.inner.scale(a, k))
    }
    /// `y <- x_input · mem` (input times memory value: the only product of an RMS program).
    fn mul(&mut self, input: u32, mem: u32) -> u32 {
        self.inner.mul(input, mem)
    }
    /// Outputs `x_input · mem mod beta` with a terminal multiplication (one conversion).
    fn terminal_mul(&mut self, input: u32, mem: u32, beta: u64) -> PyResult<()> {
        check_beta(beta)?;
        self.inner.terminal_mul(input, mem, beta);
        Ok(())
    }
    /// Outputs `mem mod beta`.
    fn output(&mut self, mem: u32, beta: u64) -> PyResult<()> {
        check_beta(beta)?;
        self.inner.output(mem, beta);
        Ok(())
    }
    /// The program, checked by the crate's `Program.validate` (every cell defined before use,
    /// inputs in range) and by this binding's bounds. The builder stays usable.
    fn build(&self) -> PyResult<PyProgram> {
        let p = self.inner.clone().build();
        check_program(&p)?;
        Ok(PyProgram { inner: p })
    }
}

/// An RMS program (the crate's `Program`): inputs, memory cells, magnitude bound `M_RMS`, and
/// instructions; outputs are reduced mod their `beta`.
#[pyclass(frozen, eq, name = "Program", module = "coterie.hss")]
#[derive(PartialEq)]
pub struct PyProgram {
    inner: Program,
}

#[pymethods]
impl PyProgram {
    /// Number of inputs.
    #[getter]
    fn num_inputs(&self) -> u32 {
        self.inner.num_inputs
    }
    /// Number of memory cells.
    #[getter]
    fn num_mem(&self) -> u32 {
        self.inner.num_mem
    }
    /// The magnitude bound `M_RMS`.
    #[getter]
    fn magnitude_bound(&self) -> u64 {
        self.inner.m_rms
    }
    /// The output moduli, in output order.
    #[getter]
    fn betas(&self) -> Vec<u64> {
        betas_of(&self.inner)
    }
    /// Multiplicative size: loads, multiplications and terminal multiplications.
    #[getter]
    fn multiplicative_size(&self) -> usize {
        self.inner.multiplicative_size()
    }
    /// The instructions as tuples: `("load", dst, input)`, `("const", dst, value)`,
    /// `("add", dst, a, b)`, `("sub", dst, a, b)`, `("scale", dst, a, k)`,
    /// `("mul", dst, input, mem)`, `("terminal_mul", input, mem, beta)`, `("output", mem, beta)`.
    #[getter]
    fn instructions(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        self.inner
            .instrs
            .iter()
            .map(|i| match *i {
                Instr::Load { dst, input } => ("load", dst, input).into_py_any(py),
                Instr::Const { dst, value } => ("const", dst, value).into_py_any(py),
                Instr::Add { dst, a, b } => ("add", dst, a, b).into_py_any(py),
                Instr::Sub { dst, a, b } => ("sub", dst, a, b).into_py_any(py),
                Instr::Scale { dst, a, k } => ("scale", dst, a, k).into_py_any(py),
                Instr::Mul { dst, input, mem } => ("mul", dst, input, mem).into_py_any(py),
                Instr::TerminalMul { input, mem, beta } => {
                    ("terminal_mul", input, mem, beta).into_py_any(py)
                }
                Instr::Output { mem, beta } => ("output", mem, beta).into_py_any(py),
            })
            .collect()
    }
    /// The crate's plain evaluation on cleartext inputs (the reference): the outputs mod their
    /// `beta`; `CoterieError` if a memory value exceeds `M_RMS`.
    fn eval_plain(&self, py: Python<'_>, inputs: Vec<i64>) -> PyResult<Vec<i64>> {
        if inputs.len() != self.inner.num_inputs as usize {
            return Err(value_err(format!(
                "wrong number of inputs: the program takes {}, got {}",
                self.inner.num_inputs,
                inputs.len()
            )));
        }
        for &x in &inputs {
            check_value("input", x)?;
        }
        py.detach(|| self.inner.eval_plain(&inputs).map_err(err))
    }
    /// The program in the coterie envelope (`HSpg`).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        bytes(py, scheme::to_bytes(&self.inner))
    }
    /// Decodes a program from `to_bytes` and checks it like `ProgramBuilder.build`.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let p = py.detach(|| -> PyResult<Program> {
            let p: Program = scheme::from_bytes(data).map_err(err)?;
            check_program(&p)?;
            Ok(p)
        })?;
        Ok(Self { inner: p })
    }
    fn __len__(&self) -> usize {
        self.inner.instrs.len()
    }
    fn __repr__(&self) -> String {
        format!(
            "Program(num_inputs={}, instructions={}, multiplicative_size={}, magnitude_bound={}, betas={:?})",
            self.inner.num_inputs,
            self.inner.instrs.len(),
            self.inner.multiplicative_size(),
            self.inner.m_rms,
            betas_of(&self.inner)
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Evaluation and reconstruction
// ---------------------------------------------------------------------------------------------

/// One server's output: its masked shares (in `[0, beta)`, one per output), its flag `γ_b`
/// (`True` = a conversion of this server raised a possible-failure flag), the evaluation nonce
/// and the output moduli. Reconstruct with `reconstruct(share0, share1)`.
#[pyclass(frozen, eq, name = "OutputShare", module = "coterie.hss")]
#[derive(Clone, PartialEq)]
pub struct PyOutputShare {
    party: u8,
    values: Vec<u64>,
    betas: Vec<u64>,
    flagged: bool,
    nonce: u64,
}

#[pymethods]
impl PyOutputShare {
    /// An output share from its parts (e.g. received from a server as plain data).
    #[new]
    #[pyo3(signature = (party, values, betas, flagged, nonce))]
    fn new(
        party: u8,
        values: Vec<u64>,
        betas: Vec<u64>,
        flagged: bool,
        nonce: u64,
    ) -> PyResult<Self> {
        if party > 1 {
            return Err(value_err(format!("party must be 0 or 1, got {party}")));
        }
        if values.len() != betas.len() {
            return Err(value_err(format!(
                "{} values for {} output moduli",
                values.len(),
                betas.len()
            )));
        }
        for (&v, &b) in values.iter().zip(&betas) {
            check_beta(b)?;
            if v >= b {
                return Err(value_err(format!(
                    "an output share must lie in [0, beta): {v} >= {b}"
                )));
            }
        }
        Ok(Self {
            party,
            values,
            betas,
            flagged,
            nonce,
        })
    }
    /// The server index (0 or 1).
    #[getter]
    fn party(&self) -> u8 {
        self.party
    }
    /// The masked output shares, in output order.
    #[getter]
    fn values(&self) -> Vec<u64> {
        self.values.clone()
    }
    /// The output moduli.
    #[getter]
    fn betas(&self) -> Vec<u64> {
        self.betas.clone()
    }
    /// `γ_b`: whether this server flagged a possible failure.
    #[getter]
    fn flagged(&self) -> bool {
        self.flagged
    }
    /// The evaluation nonce (both servers must use the same).
    #[getter]
    fn nonce(&self) -> u64 {
        self.nonce
    }
    fn __repr__(&self) -> String {
        format!(
            "OutputShare(party={}, values={:?}, betas={:?}, flagged={}, nonce={})",
            self.party,
            self.values,
            self.betas,
            if self.flagged { "True" } else { "False" },
            self.nonce
        )
    }
}

/// `Eval(b, ek_b, inputs, program)`: server `ek.party`'s local evaluation of `program` on the
/// encrypted inputs under evaluation `nonce` (both servers use the same nonce; a new nonce gives
/// independent failures). With `l2` (secret-key HSS: this server's `ShareBatch` from
/// `SecretKey.share`) loads are free. `randomized` uses `RandMult` for bit programs
/// (`magnitude_bound = 1`). Releases the GIL.
#[pyfunction]
#[pyo3(signature = (pk, ek, program, inputs, *, nonce=0, l2=None, randomized=false))]
#[allow(clippy::too_many_arguments)]
fn evaluate(
    py: Python<'_>,
    pk: &PyPublicKey,
    ek: &PyEvalKey,
    program: &PyProgram,
    inputs: Vec<Bound<'_, PyEncryptedInput>>,
    nonce: u64,
    l2: Option<&PyShareBatch>,
    randomized: bool,
) -> PyResult<PyOutputShare> {
    let prog = &program.inner;
    let n = prog.num_inputs as usize;
    if inputs.len() != n {
        return Err(value_err(format!(
            "wrong number of inputs: the program takes {n}, got {}",
            inputs.len()
        )));
    }
    if let Some(b) = l2
        && b.inner.shares.len() != n
    {
        return Err(value_err(format!(
            "wrong number of level-2 shares: the program takes {n} inputs, got {}",
            b.inner.shares.len()
        )));
    }
    let l1: Vec<&L1Input> = inputs.iter().map(|i| &i.get().inner).collect();
    let (pk, ek) = (&pk.inner, &ek.inner);
    let out = py.detach(|| -> PyResult<_> {
        check_program(prog)?;
        let a_bits = pk.a_table_bits();
        if ek.party > 1
            || ek.digit_shares.len() != pk.key_digits.len()
            || ek.c_share.significant_bits() > a_bits
            || ek
                .digit_shares
                .iter()
                .any(|d| d.significant_bits() > a_bits)
        {
            return Err(err(
                "invalid parameter: the evaluation key does not match the public key",
            ));
        }
        if let Some(b) = l2 {
            b.inner.validate(l2_max_bits(&pk.params)).map_err(err)?;
        }
        let complement = randomized && prog.m_rms == 1;
        let prepared = l1
            .iter()
            .map(|x| {
                x.validate(pk)?;
                PreparedInput::new(pk, x, complement)
            })
            .collect::<coterie_hss::Result<Vec<_>>>()
            .map_err(err)?;
        let mut ev = Evaluator::new(pk, ek, nonce).map_err(err)?;
        let l2s = l2.map(|b| &b.inner.shares[..]);
        eval(&mut ev, prog, &prepared, l2s, EvalOptions { randomized }).map_err(err)
    })?;
    let values = out
        .outputs
        .iter()
        .map(|v| {
            v.to_u64()
                .ok_or_else(|| err("an output share does not fit 64 bits"))
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyOutputShare {
        party: ek.party,
        values,
        betas: betas_of(prog),
        flagged: out.flagged,
        nonce,
    })
}

/// Reconstructs the outputs `O_0 - O_1 mod beta` from server 0's and server 1's shares. Raises
/// `FlaggedError` when both servers flagged (the only case where an output can be wrong) unless
/// `allow_flagged`.
#[pyfunction]
#[pyo3(name = "reconstruct", signature = (share0, share1, *, allow_flagged=false))]
fn reconstruct_py(
    share0: &PyOutputShare,
    share1: &PyOutputShare,
    allow_flagged: bool,
) -> PyResult<Vec<u64>> {
    if share0.party != 0 || share1.party != 1 {
        return Err(value_err(format!(
            "reconstruct takes server 0's share then server 1's, got parties {} and {}",
            share0.party, share1.party
        )));
    }
    if share0.betas != share1.betas || share0.values.len() != share1.values.len() {
        return Err(value_err(
            "the two shares are of different programs (output moduli differ)",
        ));
    }
    if share0.nonce != share1.nonce {
        return Err(value_err(format!(
            "the two shares are of different evaluations (nonces {} and {})",
            share0.nonce, share1.nonce
        )));
    }
    if share0.flagged && share1.flagged && !allow_flagged {
        return Err(FlaggedError::new_err(
            "both servers flagged a possible failure (output ⊥): evaluate again under a fresh nonce",
        ));
    }
    share0
        .values
        .iter()
        .zip(&share1.values)
        .zip(&share0.betas)
        .map(|((&a, &b), &beta)| {
            let r = reconstruct(&BigInt::from(a), &BigInt::from(b), &BigInt::from(beta))
                .map_err(err)?;
            r.to_u64()
                .ok_or_else(|| err("a reconstructed output does not fit 64 bits"))
        })
        .collect()
}

/// Registers this module's classes and functions.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyParams>()?;
    m.add_class::<PyPublicKey>()?;
    m.add_class::<PyEvalKey>()?;
    m.add_class::<PySecretKey>()?;
    m.add_class::<PyEncryptedInput>()?;
    m.add_class::<PyShareBatch>()?;
    m.add_class::<PyProgramBuilder>()?;
    m.add_class::<PyProgram>()?;
    m.add_class::<PyOutputShare>()?;
    m.add("FlaggedError", m.py().get_type::<FlaggedError>())?;
    m.add_function(wrap_pyfunction!(groups, m)?)?;
    m.add_function(wrap_pyfunction!(keygen, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(insecure_keygen_trusted_dealer_py, m)?)?;
    m.add_function(wrap_pyfunction!(reconstruct_py, m)?)?;
    Ok(())
}
