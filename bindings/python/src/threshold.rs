//! `coterie._native.threshold`: the threshold decryption service (coterie-threshold, seed 000)
//! from Python. See python/coterie/threshold.py for the Python-facing API.
//!
//! * [`PyPublicKey`] (`PublicKey`): the service's public key (`coterie_threshold::keys::PublicKey`,
//!   the `public-key.bin` every node writes) and encryption of a bit under it.
//! * [`PyCiphertext`] (`Ciphertext`): the workspace's LWE ciphertext
//!   (`coterie_threshold::LweCiphertext`) with its CTLW byte format and the TFHE-rs
//!   `core_crypto` container import (`from_body_last`).
//! * [`PyClient`] (`Client`): a client of node 0 over mutual TLS
//!   (`coterie_threshold::client::{connect, decrypt_over}`).
//! * [`PyLocalService`] (`InsecureLocalService`): a whole service in this process for
//!   experiments: certificates (`coterie_net::certs`), **insecure** dealer material
//!   (`coterie_spdz::flows::insecure_deal`) and one thread per node, each a real `TlsMesh` over
//!   loopback TLS running `coterie_threshold::node::run_node_until`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use coterie_net::{Mesh, MeshOptions, TlsMesh};
use coterie_spdz::Counts;
use coterie_threshold::client::MAX_CLIENT_FRAME;
use coterie_threshold::keys::PublicKey;
use coterie_threshold::node::{NodeEvent, PK_NOISE_BITS, PK_SAMPLES, ServiceArgs};
use coterie_threshold::service::Event;
use coterie_threshold::{LweCiphertext, Params};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyInt, PyTuple};

use crate::{err, value_err};

/// Largest public key file `PublicKey.from_file` reads (as `coterie threshold-encrypt`).
const MAX_KEY_FILE: u64 = 64 << 20;
/// Most parties and decryptions a local service is dealt material for (the dealer writes about
/// 0.25 MB per decryption per party).
const MAX_LOCAL_PARTIES: usize = 16;
const MAX_LOCAL_DECRYPTIONS: usize = 4096;
/// The name of the client certificate a local service issues (`client-python.coterie`).
const CLIENT_NAME: &str = "python";

// ---------------------------------------------------------------------------------------------
// Public key and ciphertexts
// ---------------------------------------------------------------------------------------------

/// The bytes of a ciphertext argument: `bytes`, `bytearray` or a `Ciphertext`; otherwise
/// `Err` with the type's name.
fn ciphertext_bytes(obj: &Bound<'_, PyAny>) -> Result<Vec<u8>, String> {
    if let Ok(c) = obj.cast::<PyCiphertext>() {
        return Ok(c.get().ct.to_bytes());
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(b.to_vec());
    }
    let ty = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    Err(format!(
        "a ciphertext must be bytes, bytearray or Ciphertext, not {ty}"
    ))
}

/// A list of ciphertext arguments (any iterable, not a single `bytes`), each within the client
/// protocol's frame bound.
fn ciphertext_list(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<u8>>> {
    if obj.is_instance_of::<PyBytes>()
        || obj.is_instance_of::<PyByteArray>()
        || obj.cast::<PyCiphertext>().is_ok()
    {
        return Err(PyTypeError::new_err(
            "expected a list of ciphertexts, got a single ciphertext (use decrypt_one)",
        ));
    }
    let mut out = Vec::new();
    for (i, item) in obj.try_iter()?.enumerate() {
        let b = ciphertext_bytes(&item?)
            .map_err(|e| PyTypeError::new_err(format!("ciphertext {i}: {e}")))?;
        if b.len() >= MAX_CLIENT_FRAME {
            return Err(value_err(format!(
                "ciphertext {i}: {} bytes, over the service's {MAX_CLIENT_FRAME}-byte frame limit",
                b.len()
            )));
        }
        out.push(b);
    }
    Ok(out)
}

/// The public key of a threshold decryption service: public LWE samples of the key the nodes
/// generated together (`public-key.bin` in every node's directory). Encrypts one bit at a time
/// (the service's plaintext modulus is `p = 2`).
#[pyclass(name = "PublicKey", module = "coterie.threshold", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct PyPublicKey {
    pk: PublicKey,
}

#[pymethods]
impl PyPublicKey {
    /// Decodes a public key (`CTPK` bytes, as in `public-key.bin`); raises `CoterieError` for
    /// malformed bytes.
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            pk: PublicKey::from_bytes(data).map_err(err)?,
        })
    }

    /// Reads a public key file (e.g. `<stores>/party-0/public-key.bin`).
    #[staticmethod]
    fn from_file(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let bytes = py
            .detach(|| coterie_base::fsio::read_bounded(&path, MAX_KEY_FILE))
            .map_err(|e| err(format!("{}: {e}", path.display())))?;
        Self::from_bytes(&bytes)
    }

    /// The encoded key (`CTPK` bytes).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.pk.to_bytes())
    }

    /// Encrypts the bit `message` (0 or 1) under this key; returns the ciphertext's CTLW bytes.
    fn encrypt<'py>(
        &self,
        py: Python<'py>,
        message: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mu = check_bit(message)?;
        let pk = self.pk.clone();
        let ct = py
            .detach(|| pk.encrypt(mu, 1, &mut rand::rng()))
            .map_err(err)?;
        Ok(PyBytes::new(py, &ct.to_bytes()))
    }

    /// LWE dimension `n`.
    #[getter]
    fn dimension(&self) -> usize {
        self.pk.n
    }

    /// `k`, with ciphertext modulus `q = 2^k`.
    #[getter]
    fn modulus_bits(&self) -> u32 {
        self.pk.k
    }

    /// Number of public samples.
    #[getter]
    fn samples(&self) -> usize {
        self.pk.b.len()
    }

    /// Noise width of the samples, in bits.
    #[getter]
    fn noise_bits(&self) -> u32 {
        self.pk.noise_bits
    }

    /// The 32-byte seed the samples' masks are expanded from.
    #[getter]
    fn seed<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.pk.seed)
    }

    fn __repr__(&self) -> String {
        format!(
            "PublicKey(dimension={}, modulus_bits={}, samples={}, noise_bits={})",
            self.pk.n,
            self.pk.k,
            self.pk.b.len(),
            self.pk.noise_bits
        )
    }
}

/// `message` (an `int`) as a bit, or a `ValueError` (`TypeError` for another type).
fn check_bit(message: &Bound<'_, PyAny>) -> PyResult<u64> {
    if !message.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!(
            "message must be an int (0 or 1), not {}",
            message.get_type().name()?
        )));
    }
    match message.extract::<i128>() {
        Ok(m @ (0 | 1)) => Ok(m as u64),
        _ => Err(value_err(format!(
            "message must be 0 or 1 (the service decrypts bits, p = 2), got {message}"
        ))),
    }
}

/// Encrypts the bit `message` under `public_key`; returns CTLW bytes (as `coterie
/// threshold-encrypt`).
#[pyfunction]
fn encrypt<'py>(
    py: Python<'py>,
    public_key: &PyPublicKey,
    message: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    public_key.encrypt(py, message)
}

/// An LWE ciphertext over `Z_{2^k}` carrying a message modulo `2^m` in its top bits: the one
/// LWE type of coterie, with its versioned CTLW byte format (what the service takes).
#[pyclass(name = "Ciphertext", module = "coterie.threshold", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct PyCiphertext {
    ct: LweCiphertext,
}

#[pymethods]
impl PyCiphertext {
    /// Decodes CTLW bytes; raises `CoterieError` for anything malformed.
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            ct: LweCiphertext::from_bytes(data).map_err(err)?,
        })
    }

    /// A ciphertext from its words "mask then body" (`a_0, ..., a_{n-1}, b`), the layout of a
    /// TFHE-rs `core_crypto` `LweCiphertext` container, over `q = 2^modulus_bits` (64 for
    /// TFHE-rs' native modulus) with the message in the top `message_bits` bits (a TFHE-rs
    /// padding bit counts inside them).
    #[staticmethod]
    #[pyo3(signature = (words, modulus_bits, message_bits))]
    fn from_body_last(words: Vec<u64>, modulus_bits: u32, message_bits: u32) -> PyResult<Self> {
        Ok(Self {
            ct: LweCiphertext::from_body_last(&words, modulus_bits, message_bits).map_err(err)?,
        })
    }

    /// A ciphertext that TFHE-rs 1.8 serialized: a `core_crypto::LweCiphertext<Vec<u64>>` as
    /// bincode, versioned (`ct.versionize()`) or not, over `2^64` or a power-of-two modulus
    /// (`coterie_threshold::tfhers` documents the layouts). TFHE-rs does not store the message
    /// width: `message_bits` (a padding bit counted inside; 1 for a bit encoded as `mu·2^63`).
    #[staticmethod]
    #[pyo3(signature = (data, message_bits = 1))]
    fn from_tfhe_rs(data: &[u8], message_bits: u32) -> PyResult<Self> {
        Ok(Self {
            ct: coterie_threshold::tfhers::lwe_ciphertext_from_tfhe_rs(data, message_bits)
                .map_err(err)?,
        })
    }

    /// The CTLW bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.ct.to_bytes())
    }

    /// Whether the service (the paper's parameters: `n = 1024`, `q = 2^64`, `p = 2`) accepts
    /// this ciphertext's shape; raises `CoterieError` naming what differs otherwise.
    fn check_service_shape(&self) -> PyResult<()> {
        self.ct.check(&Params::paper()).map_err(err)
    }

    /// LWE dimension `n` (number of mask words).
    #[getter]
    fn dimension(&self) -> usize {
        self.ct.dimension()
    }

    /// `k`, with ciphertext modulus `q = 2^k`.
    #[getter]
    fn modulus_bits(&self) -> u32 {
        self.ct.modulus_log()
    }

    /// `m`, with plaintext modulus `p = 2^m`.
    #[getter]
    fn message_bits(&self) -> u32 {
        self.ct.message_log()
    }

    /// The body `b`.
    #[getter]
    fn body(&self) -> u64 {
        self.ct.body()
    }

    /// The mask `a_0, ..., a_{n-1}`.
    #[getter]
    fn mask(&self) -> Vec<u64> {
        self.ct.mask().to_vec()
    }

    /// All words, mask then body.
    #[getter]
    fn words(&self) -> Vec<u64> {
        self.ct.as_slice().to_vec()
    }

    fn __repr__(&self) -> String {
        format!(
            "Ciphertext(dimension={}, modulus_bits={}, message_bits={})",
            self.ct.dimension(),
            self.ct.modulus_log(),
            self.ct.message_log()
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------------------------

/// A client of the decryption service: talks to node 0 over mutual TLS with a client
/// certificate issued by the nodes' CA; node 0's certificate is checked against the CA of the
/// party config. Each call opens its own connection (so calls from several threads run side by
/// side, and node 0 batches what arrives together).
#[pyclass(name = "Client", module = "coterie.threshold", frozen, subclass)]
pub struct PyClient {
    config: PathBuf,
    node: String,
    cert: PathBuf,
    key: PathBuf,
    closed: AtomicBool,
}

impl PyClient {
    /// Sends `cts` to node 0 on a new connection and returns one result per ciphertext.
    fn results(&self, py: Python<'_>, cts: Vec<Vec<u8>>) -> PyResult<Vec<Result<u64, String>>> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(err("the client is closed"));
        }
        if cts.is_empty() {
            return Ok(Vec::new());
        }
        py.detach(|| self.round_trip(cts))
    }

    /// What every decryption call runs with the GIL released: a runtime, a connection to node
    /// 0, the request and its responses (also timed by `_rust_time_decrypt`).
    fn round_trip(&self, cts: Vec<Vec<u8>>) -> PyResult<Vec<Result<u64, String>>> {
        let rt = crate::runtime()?;
        rt.block_on(async {
            let ch =
                coterie_threshold::client::connect(&self.config, &self.node, &self.cert, &self.key)
                    .await?;
            coterie_threshold::client::decrypt_over(ch, cts).await
        })
        .map_err(|e| {
            let e = e.to_string();
            // TLS 1.3: node 0 checks the client certificate after the client's handshake
            // ends, so a refusal shows up as an alert on the first request.
            if e.contains("alert") {
                err(format!(
                    "node 0 at {} refused the connection: {e} (is the client certificate \
                     issued by the nodes' CA?)",
                    self.node
                ))
            } else {
                err(e)
            }
        })
    }
}

/// Benchmark helper (not part of the API): seconds per call of the round trip that
/// `Client.decrypt` makes (runtime, connection, request, responses), timed inside Rust over
/// `iterations` calls with the GIL released, so that Python's cost can be measured against it
/// (bench/python_binding.py). Every result is checked to be a decrypted message.
#[pyfunction]
#[pyo3(name = "_rust_time_decrypt")]
fn rust_time_decrypt(
    py: Python<'_>,
    client: &Bound<'_, PyClient>,
    ciphertexts: &Bound<'_, PyAny>,
    iterations: usize,
) -> PyResult<f64> {
    if iterations == 0 {
        return Err(value_err("iterations must be at least 1"));
    }
    let cts = ciphertext_list(ciphertexts)?;
    let client = client.get();
    if client.closed.load(Ordering::SeqCst) {
        return Err(err("the client is closed"));
    }
    py.detach(|| {
        let t = Instant::now();
        for _ in 0..iterations {
            let results = client.round_trip(cts.clone())?;
            if let Some(msg) = first_failure(&results) {
                return Err(err(msg));
            }
        }
        Ok(t.elapsed().as_secs_f64() / iterations as f64)
    })
}

/// "ciphertext i: why" for the first failure, and how many others failed.
fn first_failure(results: &[Result<u64, String>]) -> Option<String> {
    let mut failed = results
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.as_ref().err().map(|e| (i, e)));
    let (i, why) = failed.next()?;
    let more = failed.count();
    let tail = if more > 0 {
        format!(" ({more} more of {} not decrypted)", results.len())
    } else {
        String::new()
    };
    Some(format!("ciphertext {i}: {why}{tail}"))
}

#[pymethods]
impl PyClient {
    /// Connects to node 0 at `node` ("host:port") to check the address, node 0's certificate
    /// (against the CA of the party `config`) and the client's `cert`/`key` files (PEM), then
    /// closes the connection. Node 0 checks the client certificate at the first request.
    #[new]
    fn new(
        py: Python<'_>,
        config: PathBuf,
        node: String,
        cert: PathBuf,
        key: PathBuf,
    ) -> PyResult<Self> {
        let c = Self {
            config,
            node,
            cert,
            key,
            closed: AtomicBool::new(false),
        };
        py.detach(|| {
            let rt = crate::runtime()?;
            rt.block_on(async {
                let ch =
                    coterie_threshold::client::connect(&c.config, &c.node, &c.cert, &c.key).await?;
                let _ = ch.close().await;
                Ok::<_, coterie_threshold::Error>(())
            })
            .map_err(err)
        })?;
        Ok(c)
    }

    /// Decrypts the ciphertexts (CTLW `bytes` or `Ciphertext`s) in one request batch and returns
    /// the messages in order; raises `CoterieError` naming the first ciphertext that was not
    /// decrypted and why (see `decrypt_results` to keep the others' results).
    fn decrypt(&self, py: Python<'_>, ciphertexts: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
        let cts = ciphertext_list(ciphertexts)?;
        let results = self.results(py, cts)?;
        if let Some(msg) = first_failure(&results) {
            return Err(err(msg));
        }
        Ok(results.into_iter().flatten().collect())
    }

    /// Decrypts the ciphertexts and returns one entry per ciphertext: the message (`int`), or a
    /// `CoterieError` instance with node 0's reason for refusing or failing it. Raises only when
    /// the connection itself fails.
    fn decrypt_results(
        &self,
        py: Python<'_>,
        ciphertexts: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<Py<PyAny>>> {
        let cts = ciphertext_list(ciphertexts)?;
        let results = self.results(py, cts)?;
        results
            .into_iter()
            .enumerate()
            .map(|(i, r)| match r {
                Ok(mu) => Ok(mu.into_pyobject(py)?.into_any().unbind()),
                Err(e) => Ok(err(format!("ciphertext {i}: {e}"))
                    .into_value(py)
                    .into_any()),
            })
            .collect()
    }

    /// Decrypts one ciphertext (CTLW `bytes` or `Ciphertext`).
    fn decrypt_one(&self, py: Python<'_>, ciphertext: &Bound<'_, PyAny>) -> PyResult<u64> {
        let ct = ciphertext_bytes(ciphertext).map_err(PyTypeError::new_err)?;
        if ct.len() >= MAX_CLIENT_FRAME {
            return Err(value_err(format!(
                "ciphertext of {} bytes, over the service's {MAX_CLIENT_FRAME}-byte frame limit",
                ct.len()
            )));
        }
        let mut results = self.results(py, vec![ct])?;
        match results.pop() {
            Some(Ok(mu)) => Ok(mu),
            Some(Err(e)) => Err(err(e)),
            None => Err(err("no response")),
        }
    }

    /// Closes the client: later calls raise `CoterieError`. (Connections are per call, so
    /// nothing stays open between calls.)
    fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
    }

    /// Whether `close` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Path of the party config (CA and node 0's certificate name).
    #[getter]
    fn config(&self) -> PathBuf {
        self.config.clone()
    }

    /// Address of node 0's client listener.
    #[getter]
    fn node(&self) -> String {
        self.node.clone()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, PyTuple>) -> bool {
        self.close();
        false
    }

    fn __repr__(&self) -> String {
        format!(
            "Client(node='{}', config='{}'{})",
            self.node,
            self.config.display(),
            if self.closed() { ", closed" } else { "" }
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Local service
// ---------------------------------------------------------------------------------------------

/// What the node threads report, shared with the Python object.
#[derive(Default)]
struct State {
    /// Node 0's bound client address, once it serves.
    addr: Option<String>,
    /// Nodes that reported their key ready.
    keys_ready: usize,
    /// Gate bundles ready at node 0 (its last report).
    available: Option<u64>,
    /// Node 0 reported that its SPDZ_2k material cannot make more gates.
    material_low: bool,
    /// One line per event.
    log: Vec<String>,
    /// Node 0's decrypted batches: (size, seconds).
    batches: Vec<(usize, f64)>,
    /// Nodes whose thread ended.
    finished: usize,
    /// Nodes that ended with an error.
    errors: Vec<(usize, String)>,
}

struct Shared {
    state: Mutex<State>,
    cv: Condvar,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn event(&self, id: usize, e: NodeEvent) {
        let mut s = self.lock();
        let line = match &e {
            NodeEvent::KeyReady { n, samples, digest } => {
                s.keys_ready += 1;
                format!("key ready (n = {n}, {samples} public samples, digest {digest})")
            }
            NodeEvent::StartUp(sync) => format!("start-up: {sync}"),
            NodeEvent::Pool {
                cursor,
                available,
                target,
            } => {
                if id == 0 {
                    s.available = Some(*available);
                }
                format!(
                    "gate store cursor {cursor}, {available} bundles ready, pool target {target}"
                )
            }
            NodeEvent::Serving { addr } => {
                s.addr = Some(addr.clone());
                format!("serving clients on {addr} (mutual TLS)")
            }
            NodeEvent::Service(Event::Prepared { made, available }) => {
                if id == 0 {
                    s.available = Some(*available);
                }
                format!("prepared {made} gate bundles, pool {available}")
            }
            NodeEvent::Service(Event::Decrypted {
                batch,
                available,
                micros,
            }) => {
                if id == 0 {
                    s.available = Some(*available);
                    s.batches.push((*batch, *micros as f64 / 1e6));
                }
                format!(
                    "decrypted a batch of {batch} in {:.2} ms, pool {available}",
                    *micros as f64 / 1e3
                )
            }
            NodeEvent::Service(Event::MaterialLow { triples, bits }) => {
                if id == 0 {
                    s.material_low = true;
                }
                format!(
                    "SPDZ_2k material too low for more gates ({triples} triples, {bits} bits left)"
                )
            }
            NodeEvent::Service(Event::Refused { reason, count }) => {
                format!("refused {count} request(s): {}", reason.as_str())
            }
            NodeEvent::PeerLost { node, cause } => {
                format!("lost node {node} ({cause}); reconnecting")
            }
            NodeEvent::Waiting { node, cause } => {
                format!("waiting for node {node} to reconnect ({cause})")
            }
            NodeEvent::Reconnected { session } => {
                format!("reconnected to every node (reconnection {session})")
            }
            // the store's levels and the gates taken, after every step: too frequent for the log
            NodeEvent::Service(Event::Material { .. } | Event::GatesTaken { .. }) => return,
        };
        s.log.push(format!("party {id}: {line}"));
        drop(s);
        self.cv.notify_all();
    }

    fn finish(&self, id: usize, r: Result<(), String>) {
        let mut s = self.lock();
        s.finished += 1;
        match r {
            Ok(()) => s.log.push(format!("party {id}: stopped")),
            Err(e) => {
                s.log.push(format!("party {id}: failed: {e}"));
                s.errors.push((id, e));
            }
        }
        drop(s);
        self.cv.notify_all();
    }

    /// Waits (at most until `deadline`) until `done` holds; returns whether it does.
    fn wait_until(&self, deadline: Instant, mut done: impl FnMut(&State) -> bool) -> bool {
        let mut s = self.lock();
        loop {
            if done(&s) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            s = match self.cv.wait_timeout(s, deadline - now) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
    }
}

fn node_errors(s: &State) -> String {
    s.errors
        .iter()
        .map(|(i, e)| format!("node {i}: {e}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Loopback addresses for `n` parties on ports below the OS's ephemeral range (so that no
/// outgoing connection can take one between the check and the bind), found free by binding
/// them; the OS's free ports where that range is unknown or too low.
fn service_addresses(n: usize) -> Result<Vec<String>, String> {
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .next()
                .and_then(|p| p.parse::<u32>().ok())
        })
        .unwrap_or(0);
    let (from, to) = (10_000u32, low.min(u32::from(u16::MAX)));
    if to > from + 1_000 {
        for _ in 0..64 {
            let base = from + rand::random_range(0..to - from - n as u32);
            let held: Result<Vec<_>, _> = (0..n as u32)
                .map(|i| std::net::TcpListener::bind(("127.0.0.1", (base + i) as u16)))
                .collect();
            if held.is_ok() {
                return Ok(coterie_net::certs::loopback_addresses(n, base as u16));
            }
        }
    }
    coterie_net::certs::free_loopback_addresses(n).map_err(|e| e.to_string())
}

/// One node's thread: its own tokio runtime, a TLS mesh to the others (and `lanes` further
/// meshes when `lanes` ≥ 2, one per batch in flight), the node until `stop`.
fn node_thread(
    id: usize,
    config: PathBuf,
    args: ServiceArgs,
    lanes: u32,
    shared: Arc<Shared>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let sh = shared.clone();
    let body = move || -> Result<(), String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        rt.block_on(async move {
            let opts = MeshOptions {
                timeout: Duration::from_secs(30),
                connect_deadline: Duration::from_secs(60),
                ..MeshOptions::default()
            };
            let mut mesh = TlsMesh::connect_with_config(&config, id, None, None, opts.clone())
                .await
                .map_err(|e| e.to_string())?;
            let meshes = if lanes >= 2 { lanes + 1 } else { 1 };
            let lanes = mesh
                .connect_lanes(&config, None, None, &opts, meshes)
                .await
                .map_err(|e| e.to_string())?;
            let mut events = |e: NodeEvent| sh.event(id, e);
            // Stops when the service says so or is dropped (the sender is gone).
            let until = async move {
                let _ = stop.wait_for(|s| *s).await;
            };
            let r = coterie_threshold::node::run_node_with_lanes(
                &mut mesh,
                lanes,
                &config,
                &args,
                &Default::default(),
                &mut events,
                until,
            )
            .await;
            match &r {
                Ok(()) => {
                    mesh.close().await.ok();
                }
                // The other nodes learn why this one stops (a no-op where a peer's abort or a
                // lost peer poisoned the mesh already), rather than seeing it close.
                Err(e) if e.lost_peer().is_none() => {
                    mesh.abort(&e.to_string()).await;
                }
                Err(_) => {}
            }
            r.map_err(|e| e.to_string())
        })
    };
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body))
        .unwrap_or_else(|_| Err("the node's thread panicked".into()));
    shared.finish(id, r);
}

/// An **insecure** local decryption service for experiments: the nodes run as threads of this
/// process, each a real TLS mesh party over loopback, on SPDZ_2k material from the **insecure**
/// trusted dealer (one process saw every secret: never for real data).
#[pyclass(
    name = "InsecureLocalService",
    module = "coterie.threshold",
    frozen,
    subclass
)]
pub struct PyLocalService {
    directory: PathBuf,
    config: PathBuf,
    node: String,
    cert: PathBuf,
    key: PathBuf,
    public_key: PyPublicKey,
    parties: usize,
    pool: u64,
    shared: Arc<Shared>,
    stop: Mutex<Option<tokio::sync::watch::Sender<bool>>>,
    threads: Mutex<Vec<std::thread::JoinHandle<()>>>,
    stopped: AtomicBool,
}

/// Validated settings of a local service.
struct LocalSettings {
    parties: usize,
    decryptions: usize,
    pool: u64,
    chunk: u32,
    max_batch: usize,
    lanes: u32,
    timeout: Duration,
}

fn positive_seconds(what: &str, t: f64) -> PyResult<Duration> {
    if !(t.is_finite() && t > 0.0 && t <= 86_400.0) {
        return Err(value_err(format!(
            "{what} must be in (0, 86400] seconds, got {t}"
        )));
    }
    Ok(Duration::from_secs_f64(t))
}

impl PyLocalService {
    /// Writes the PKI and client certificate, deals the material, starts the nodes and waits
    /// for node 0 to serve (the GIL is released by the caller).
    fn start(
        dir: &Path,
        st: &LocalSettings,
        progress: coterie_base::Progress,
    ) -> Result<Self, String> {
        let certs = dir.join("certs");
        let stores = dir.join("stores");
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let pki = coterie_net::certs::generate_pki(st.parties).map_err(|e| e.to_string())?;
        let addrs = service_addresses(st.parties)?;
        let config =
            coterie_net::certs::write_pki(&certs, &pki, &addrs).map_err(|e| e.to_string())?;
        let (cert, key) = coterie_net::certs::issue_client_cert(&certs, CLIENT_NAME)
            .map_err(|e| e.to_string())?;
        let params = Params::paper();
        let (triples, bits, randoms) = coterie_threshold::service::material_for(
            &params,
            st.decryptions,
            PK_SAMPLES,
            PK_NOISE_BITS,
        )
        .map_err(|e| e.to_string())?;
        let counts = Counts {
            triples,
            bits,
            randoms,
            masks_per_party: 0,
        };
        coterie_spdz::flows::insecure_deal(&stores, st.parties, counts, &progress)
            .map_err(|e| format!("insecure dealer: {e}"))?;

        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            cv: Condvar::new(),
        });
        let (tx, rx) = tokio::sync::watch::channel(false);
        let mut threads = Vec::new();
        for id in 0..st.parties {
            let args = ServiceArgs {
                dir: stores.clone(),
                pool: st.pool,
                chunk: st.chunk,
                max_batch: st.max_batch,
                client_listen: "127.0.0.1:0".into(),
                idle_exit_s: 0,
            };
            let (config, shared, rx) = (config.clone(), shared.clone(), rx.clone());
            let lanes = st.lanes;
            let t = std::thread::Builder::new()
                .name(format!("coterie-threshold-node-{id}"))
                .spawn(move || node_thread(id, config, args, lanes, shared, rx))
                .map_err(|e| format!("node thread: {e}"))?;
            threads.push(t);
        }
        let n = st.parties;
        let deadline = Instant::now() + st.timeout;
        let ready = shared.wait_until(deadline, |s| {
            (s.addr.is_some() && s.keys_ready == n) || !s.errors.is_empty() || s.finished > 0
        });
        let fail = |why: String| {
            // Stop what runs (the sender is dropped: every node's stop completes) and detach.
            let _ = tx.send(true);
            why
        };
        let (addr, errors) = {
            let s = shared.lock();
            (s.addr.clone(), node_errors(&s))
        };
        if !errors.is_empty() {
            return Err(fail(format!("the service failed to start: {errors}")));
        }
        let Some(node) = addr.filter(|_| ready) else {
            return Err(fail(format!(
                "the service did not start within {:.0} s",
                st.timeout.as_secs_f64()
            )));
        };
        let pk_file = stores.join("party-0").join("public-key.bin");
        let pk = coterie_base::fsio::read_bounded(&pk_file, MAX_KEY_FILE)
            .map_err(|e| e.to_string())
            .and_then(|b| PublicKey::from_bytes(&b).map_err(|e| e.to_string()))
            .map_err(|e| fail(format!("{}: {e}", pk_file.display())))?;
        Ok(Self {
            directory: dir.to_path_buf(),
            config,
            node,
            cert,
            key,
            public_key: PyPublicKey { pk },
            parties: n,
            pool: st.pool,
            shared,
            stop: Mutex::new(Some(tx)),
            threads: Mutex::new(threads),
            stopped: AtomicBool::new(false),
        })
    }

    fn signal_stop(&self) {
        if let Some(tx) = self.stop.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = tx.send(true);
        }
    }
}

impl Drop for PyLocalService {
    fn drop(&mut self) {
        // Never blocks: the nodes stop on their own threads.
        self.signal_stop();
    }
}

#[pymethods]
impl PyLocalService {
    /// Starts an **insecure** local service in `directory` (which must not already hold
    /// `certs/` or `stores/`): writes a CA, the parties' certificates and a party config
    /// (`certs/party.toml`) and a client certificate (`certs/client-python.{crt,key}`); deals
    /// SPDZ_2k material for `decryptions` decryptions with the **insecure** dealer
    /// (`stores/party-<i>`, about 0.25 MB per decryption and party); starts `parties` nodes
    /// (threads of this process, TLS over loopback) that generate the key together; waits until
    /// node 0 serves clients. `pool` gate bundles are kept ready, made `chunk` at a time in the
    /// background (`chunk` must divide `decryptions`; default 4, 2 or 1); `max_batch` is the largest batch; `lanes` batches are
    /// decrypted at once (1: one at a time; 2..=16: each on a connection of its own beside the
    /// control connection); `progress(label, done, total)` follows the
    /// dealing. Raises `CoterieError` if the service does not start within `timeout` seconds.
    #[new]
    #[pyo3(signature = (directory, parties = 4, decryptions = 64, pool = 8, *, chunk = None,
        max_batch = 1024, lanes = 1, timeout = 300.0, progress = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        directory: PathBuf,
        parties: usize,
        decryptions: usize,
        pool: u64,
        chunk: Option<u32>,
        max_batch: usize,
        lanes: u32,
        timeout: f64,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        if !(2..=MAX_LOCAL_PARTIES).contains(&parties) {
            return Err(value_err(format!(
                "parties must be 2..={MAX_LOCAL_PARTIES}, got {parties}"
            )));
        }
        if !(1..=MAX_LOCAL_DECRYPTIONS).contains(&decryptions) {
            return Err(value_err(format!(
                "decryptions must be 1..={MAX_LOCAL_DECRYPTIONS}, got {decryptions}"
            )));
        }
        if pool > decryptions as u64 {
            return Err(value_err(format!(
                "pool ({pool}) exceeds the decryptions dealt for ({decryptions})"
            )));
        }
        // The nodes make bundles `chunk` at a time and only while a whole chunk's material is
        // left, so a chunk that does not divide `decryptions` would strand material.
        let chunk = chunk.unwrap_or(match decryptions % 4 {
            0 => 4,
            2 => 2,
            _ => 1,
        });
        if chunk == 0 || !decryptions.is_multiple_of(chunk as usize) {
            return Err(value_err(format!(
                "chunk must divide decryptions ({decryptions}), got {chunk}"
            )));
        }
        if max_batch == 0 || max_batch > 1 << 16 {
            return Err(value_err(format!(
                "max_batch must be 1..=65536, got {max_batch}"
            )));
        }
        if !(1..=16).contains(&lanes) {
            return Err(value_err(format!("lanes must be 1..=16, got {lanes}")));
        }
        let st = LocalSettings {
            parties,
            decryptions,
            pool,
            chunk,
            max_batch,
            lanes,
            timeout: positive_seconds("timeout", timeout)?,
        };
        for d in ["certs", "stores"] {
            let d = directory.join(d);
            if d.exists() {
                return Err(value_err(format!(
                    "{} exists: start a local service in a new or empty directory",
                    d.display()
                )));
            }
        }
        let progress = crate::progress(progress);
        py.detach(|| Self::start(&directory, &st, progress))
            .map_err(err)
    }

    /// Waits until node 0 has `count` gate bundles ready (default: the pool target), so that
    /// the next decryptions need no preprocessing first. Raises `CoterieError` if the material
    /// runs out first, a node fails, or `timeout` seconds pass.
    #[pyo3(signature = (count = None, timeout = 600.0))]
    fn wait_for_pool(&self, py: Python<'_>, count: Option<u64>, timeout: f64) -> PyResult<()> {
        let want = count.unwrap_or(self.pool);
        if want > self.pool {
            return Err(value_err(format!(
                "the service keeps at most {} bundles ready, asked for {want}",
                self.pool
            )));
        }
        let deadline = Instant::now() + positive_seconds("timeout", timeout)?;
        let shared = self.shared.clone();
        let ok = py.detach(|| {
            shared.wait_until(deadline, |s| {
                s.available.is_some_and(|a| a >= want) || s.material_low || s.finished > 0
            })
        });
        let s = self.shared.lock();
        if s.finished > 0 {
            let errors = node_errors(&s);
            return Err(err(if errors.is_empty() {
                "the service stopped".to_string()
            } else {
                errors
            }));
        }
        if s.available.is_some_and(|a| a >= want) {
            return Ok(());
        }
        if s.material_low {
            return Err(err(format!(
                "the SPDZ_2k material ran out with {} bundles ready (wanted {want})",
                s.available.unwrap_or(0)
            )));
        }
        debug_assert!(!ok);
        Err(err(format!(
            "{} bundles ready after {timeout} s (wanted {want})",
            s.available.unwrap_or(0)
        )))
    }

    /// Stops the service: node 0 answers what is queued and tells the others to stop; waits
    /// (at most `timeout` seconds) for every node. Raises `CoterieError` if a node failed (the
    /// first time only) or did not stop in time. Stopping twice does nothing.
    #[pyo3(signature = (timeout = 60.0))]
    fn stop(&self, py: Python<'_>, timeout: f64) -> PyResult<()> {
        let deadline = Instant::now() + positive_seconds("timeout", timeout)?;
        self.signal_stop();
        let n = self.parties;
        let shared = self.shared.clone();
        let all = py.detach(|| shared.wait_until(deadline, |s| s.finished == n));
        if !all {
            return Err(err(format!("the nodes did not stop within {timeout} s")));
        }
        let threads: Vec<_> =
            std::mem::take(&mut *self.threads.lock().unwrap_or_else(|p| p.into_inner()));
        py.detach(|| {
            for t in threads {
                let _ = t.join();
            }
        });
        if self.stopped.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let errors = node_errors(&self.shared.lock());
        if !errors.is_empty() {
            return Err(err(format!("the service failed: {errors}")));
        }
        Ok(())
    }

    /// Whether every node is still running.
    #[getter]
    fn running(&self) -> bool {
        self.shared.lock().finished == 0
    }

    /// The service's directory.
    #[getter]
    fn directory(&self) -> PathBuf {
        self.directory.clone()
    }

    /// Path of the party config (`certs/party.toml`).
    #[getter]
    fn config(&self) -> PathBuf {
        self.config.clone()
    }

    /// Address of node 0's client listener ("127.0.0.1:port").
    #[getter]
    fn node(&self) -> String {
        self.node.clone()
    }

    /// Path of the client certificate (PEM) issued by the nodes' CA.
    #[getter]
    fn client_cert(&self) -> PathBuf {
        self.cert.clone()
    }

    /// Path of the client certificate's private key (PEM).
    #[getter]
    fn client_key(&self) -> PathBuf {
        self.key.clone()
    }

    /// The service's public key.
    #[getter]
    fn public_key(&self) -> PyPublicKey {
        self.public_key.clone()
    }

    /// Number of nodes.
    #[getter]
    fn parties(&self) -> usize {
        self.parties
    }

    /// Gate bundles node 0 reported ready last (`None` before its first report).
    #[getter]
    fn available(&self) -> Option<u64> {
        self.shared.lock().available
    }

    /// Node 0's decrypted batches so far, as `(size, seconds)` (its own timing of each run).
    #[getter]
    fn batches(&self) -> Vec<(usize, f64)> {
        self.shared.lock().batches.clone()
    }

    /// What the nodes reported, one line per event ("party <i>: ...").
    #[getter]
    fn log(&self) -> Vec<String> {
        self.shared.lock().log.clone()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*args))]
    fn __exit__(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<bool> {
        let r = self.stop(py, 60.0);
        // An exception already on its way out is not masked by a failure to stop.
        let propagating = args.get_item(0).is_ok_and(|t| !t.is_none());
        if !propagating {
            r?;
        }
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!(
            "InsecureLocalService(parties={}, node='{}', directory='{}'{})",
            self.parties,
            self.node,
            self.directory.display(),
            if self.running() { "" } else { ", stopped" }
        )
    }
}

/// Registers this module's classes and functions.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPublicKey>()?;
    m.add_class::<PyCiphertext>()?;
    m.add_class::<PyClient>()?;
    m.add_class::<PyLocalService>()?;
    m.add_function(wrap_pyfunction!(encrypt, m)?)?;
    m.add_function(wrap_pyfunction!(rust_time_decrypt, m)?)?;
    Ok(())
}
