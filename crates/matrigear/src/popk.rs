//! The n-party proof of plaintext knowledge Π_PoPK (seed 002 §5.3, the paper's Fig. 3): every
//! party proves that its `U` ciphertexts `ct_i = Enc(μ_i, r_i)` encrypt short plaintext lifts
//! (`‖μ‖` about `6(b+1)s1`) with short randomness, and, under [`Flag::Diag`], diagonal
//! plaintexts (all slots equal); every party is prover and verifier at once.
//!
//! # Local steps and the driver
//!
//! As in Lattigo's `multiparty` package the local steps are plain functions on values, and
//! [`run`] / [`run_with_witness`] compose them over a [`Mesh`]:
//!
//! 1. **Sampling** ([`PopkWitness::sample`], or the caller's own witness): for `i < U`,
//!    `x_i ← U(Z_p^D)` (`Diag`: one value repeated), `r_i ← D_{Z^N,σ1}^3`,
//!    `μ_i ← RandPack(x_i, s1)` ([`crate::randpack`]).
//! 2. **Commitment** ([`prove_commit`]): `ct_i = Enc(μ_i, r_i) = r_0·pk + (Δ·μ_i + r_1, r_2)`
//!    (coterie-bfv's `encrypt_with` over the lift `μ_i` itself, exactly linear in `(μ, r)`), and
//!    `V` commitments `comm_j = Enc(μ_{y_j}, s_j)` with `y_j` uniform (diagonal under `Diag`),
//!    `s_j ← D_{Z^N, √(U+1)σ2}^3` and `μ_{y_j} ← RandPack(y_j, √(U+1)·s2)`. All `U + V`
//!    ciphertexts go to every other party.
//! 3. **Challenge** (F_Rand, §9.10, instantiated by coin tossing): only after every party has
//!    sent its ciphertexts, every party commits to a fresh 32-byte seed and opens it
//!    (coterie-net's [`commit_open_all`]); the seeds are hashed into one ([`challenge_seed`]),
//!    which a BLAKE3 XOF expands into the monomials `w_{i,j} = X^k` ([`Challenges::derive`]): `k`
//!    uniform in `[0, 2N)` for [`Flag::Any`], `k = D·j'` with `j'` uniform in `[0, 2M)` for
//!    [`Flag::Diag`].
//! 4. **Response** ([`ProverState::respond`]): `μ_{z_j} = μ_{y_j} + Σ_i w_{i,j}·μ_i` and
//!    `t_j = s_j + Σ_i w_{i,j}·r_i` (component-wise in `R^3`), negacyclic monomial products on
//!    the integer lifts, sent bit-packed ([`ResponseCodec`]).
//! 5. **Verification, per party** ([`verify_party`]): for every other party `l` and every
//!    repetition `j`, in this order: `‖μ_z^(l)‖_∞ < B_z/n`
//!    ([`ProtocolParams::party_bound_z`], else [`PopkCheck::NormZ`]), `‖t^(l)‖_∞ < B_t/n`
//!    (max over the 3 components, [`ProtocolParams::party_bound_t`], else
//!    [`PopkCheck::NormT`]), under `Diag` every coefficient off the multiples of `D` is 0
//!    ([`PopkCheck::Diagonal`]), and `Enc(μ_z^(l), t^(l)) = comm^(l) + Σ_i w_{i,j}·ct_i^(l)`
//!    ([`PopkCheck::EncIdentity`]). A message that does not decode, or a ciphertext that is not
//!    a fresh two-part ciphertext at the top level, is [`PopkCheck::Shape`]. The first failure
//!    aborts the mesh with the error's text and returns [`Error::ProofRejected`] naming `l`, the
//!    check, the proof's label and `j` (for `Shape`: the index of the offending message in its
//!    round, or 0 for the response message).
//! 6. **Echo**: one [`check_consistent`] round over a digest, per sender, of every byte
//!    received (own messages included), so that a party that sent different ciphertexts or
//!    responses to different parties is caught (the mesh aborts, [`Error::Net`]).
//!
//! The output ([`PopkOutput`]) is this party's slot vectors `x_i^(l)` and the sums
//! `ct_i = Σ_l ct_i^(l)` — not doubled: the triple protocol works with `2·ct_i` (§9.12) and does
//! the doubling itself.
//!
//! # Why the per-party check implies the paper's aggregate check
//!
//! The paper verifies the sums: `Enc(Σ_l μ_z^(l), Σ_l t^(l)) = Σ_l comm^(l) + Σ_i w_{i,j}·ct_i`
//! with `‖Σ_l μ_z^(l)‖ < B_z`, `‖Σ_l t^(l)‖ < B_t` and `Σ_l μ_z^(l)` diagonal. If every party
//! passes the per-party check, then (i) summing the `n` identities gives the aggregate one,
//! because `Enc` is linear in `(μ, r)` over `R` and `Σ_l Σ_i w_{i,j}·ct_i^(l) = Σ_i w_{i,j}·ct_i`;
//! (ii) the triangle inequality gives `‖Σ_l μ_z^(l)‖ < n·B_z/n = B_z` and likewise for `t`;
//! (iii) sums of polynomials in `X^D` are polynomials in `X^D`. So every transcript this
//! implementation accepts is one the paper's verifier accepts, and Theorem 2's knowledge
//! soundness (extraction with `‖2μ‖ < 2N·B_z`, `‖2r‖ < 2N·B_t`) applies unchanged. Completeness
//! is kept too: an honest party's own response meets the per-party bounds `6(b+1)(U·s1 +
//! √(U+1)·s2)` and `6(U·σ1 + √(U+1)·σ2)` with probability `1 − 2^-128` (Lemma 2; the plaintext
//! part always, by [`crate::randpack`]'s tail cut). What the per-party check adds is an
//! identifiable abort (§9.16): it names the party whose contribution fails.
//!
//! # Wire format and sizes
//!
//! Tags are in [`tags`] (plus coterie-net's commitment and echo tags). Per proof, each party
//! sends every other party:
//!
//! * `U` messages with tag [`tags::CIPHERTEXT`] and `V` with tag [`tags::COMMITMENT`], each one
//!   ciphertext as coterie-bfv's `Ciphertext::to_bytes`: two packed polynomials of
//!   `⌈N·Σ_k bits(q_k)/8⌉` bytes (`Σ_k bits(q_k) ≈ log q`) plus a constant header `h` (the
//!   versioned envelope, the parameter fingerprint, level, key set and the parts' length
//!   prefixes; 53 bytes on Toy-B, a few more where the length prefixes need longer varints;
//!   [`ciphertext_len`] gives the exact size, a test pins Toy-B's): `2·⌈N·log q/8⌉ + h` bytes;
//! * one message with tag [`tags::RESPONSE`]: the `V` responses bit-packed with coterie-base's
//!   bit packer, `⌈V·N·(w_z + 3·w_t)/8⌉` bytes ([`ResponseCodec::encoded_len`]), where
//!   `w_z = bits(⌈B_z/n⌉) + 1` and `w_t = bits(⌈B_t/n⌉) + 1` are the widths of a signed
//!   (two's complement) coefficient — `⌈log2(bound)⌉ + 1` except that a bound that is an exact
//!   power of two gets one more bit;
//! * one 32-byte commitment and one 32-byte seed with its 32-byte opening (coin tossing), and
//!   one 32-byte digest (echo), plus framing.
//!
//! In total `(U + V)·(2⌈N·log q/8⌉ + h) + ⌈V·N·(w_z + 3w_t)/8⌉` bytes per peer. The paper's
//! Table 4 formula `2(U+V)N/8·log q + VN/8·(log B_t + log B_z)` counts `t` as one polynomial;
//! `t ∈ R^3`, so three are sent (§9.17), and the widths here are the per-party bounds'.
//!
//! A coefficient that does not fit its width (a cheating prover's) is sent saturated at
//! `±(2^{w−1} − 1)`, a value at or beyond the bound, so every verifier rejects it by the norm
//! check: nothing a verifier could accept is lost. The decoder checks the exact length and the
//! zero padding; the bounds are checked by [`verify_party`], which names the failed norm.
//!
//! ```
//! use coterie_bfv::SecretKey;
//! use coterie_math::prg::Csprng;
//! use coterie_matrigear::{Flag, ProtocolParams, popk};
//! use coterie_net::{InMemoryMesh, MeshOptions, local::run_parties};
//! let pp = ProtocolParams::insecure_toy_b(2, 4).unwrap();
//! let mut rng = Csprng::new();
//! let sk = SecretKey::generate(pp.context(), &mut rng);
//! let pk = sk.public_key(&mut rng);
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let meshes = InMemoryMesh::group(2, MeshOptions::default());
//! let outs = run_parties(meshes, |mut mesh| {
//!     let (pp, pk) = (pp.clone(), pk.clone());
//!     async move {
//!         let out = popk::run(&mut mesh, &pp, &pk, 1, Flag::Diag, "doc", &mut Csprng::new()).await;
//!         coterie_net::Mesh::close(mesh).await.unwrap();
//!         out.unwrap()
//!     }
//! })
//! .await;
//! // Both parties hold the same sum of the two parties' ciphertexts.
//! assert_eq!(outs[0].ciphertexts(), outs[1].ciphertexts());
//! # });
//! ```

use coterie_bfv::{Ciphertext, EncRandomness, Plaintext, PublicKey};
use coterie_math::bigint::{BigInt, random_below, wipe};
use coterie_math::poly::Poly;
use coterie_math::prg::Xof;
use coterie_math::sample::DiscreteGaussian;
use coterie_net::commit::{check_consistent, commit_open_all};
use coterie_net::{Mesh, PartyId};
use zeroize::Zeroize;

use crate::params::{Flag, ProtocolParams};
use crate::randpack::rand_pack;
use crate::{Error, PopkCheck, Result};

/// The message tags of Π_PoPK (`0x4D47_50xx`: "MG", "P"). The coin tossing and the echo use
/// coterie-net's [`coterie_net::commit::TAG_COMMIT`], [`coterie_net::commit::TAG_OPEN`] and
/// [`coterie_net::commit::TAG_ECHO`].
pub mod tags {
    /// One ciphertext `ct_i^(l)` of the sampling phase.
    pub const CIPHERTEXT: u32 = 0x4D47_5001;
    /// One commitment `comm_j^(l)`.
    pub const COMMITMENT: u32 = 0x4D47_5002;
    /// The `V` bit-packed responses of one party.
    pub const RESPONSE: u32 = 0x4D47_5003;
}

/// Domain of the XOF that expands the challenge seed.
const CHALLENGE_XOF: &[u8] = b"coterie-matrigear/popk/challenge/v1";

/// A prover's witness: `U` plaintext lifts `μ_i ∈ R` (`N` signed coefficients each) and their
/// encryption randomness `r_i = (r_0, r_1, r_2) = (u, e0, e1)`. Normally sampled
/// ([`PopkWitness::sample`]); a caller may build one from its own values
/// ([`PopkWitness::new`]) — e.g. a test's malicious prover with a long lift — and the proof then
/// shows (or fails to show) that those are short. Wiped on drop; its `Debug` shows sizes only.
pub struct PopkWitness {
    lifts: Vec<Vec<i128>>,
    randomness: Vec<EncRandomness>,
}

impl std::fmt::Debug for PopkWitness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PopkWitness(U = {}, ..)", self.lifts.len())
    }
}

impl Drop for PopkWitness {
    fn drop(&mut self) {
        for l in &mut self.lifts {
            l.zeroize();
        }
    }
}

impl PopkWitness {
    /// A witness from the caller's lifts and randomness (one of each per ciphertext).
    ///
    /// # Errors
    /// [`Error::Invalid`] when there is no ciphertext or the two lists differ in length (sizes
    /// of the polynomials are checked against the parameters by [`prove_commit`]).
    pub fn new(lifts: Vec<Vec<i128>>, randomness: Vec<EncRandomness>) -> Result<Self> {
        if lifts.is_empty() || lifts.len() != randomness.len() {
            return Err(Error::Invalid(format!(
                "a witness needs U ≥ 1 lifts and as many randomness triples ({} and {})",
                lifts.len(),
                randomness.len()
            )));
        }
        Ok(PopkWitness { lifts, randomness })
    }

    /// An honest witness of `u` ciphertexts (§5.3 sampling phase): `x_i ← U(Z_p^D)` (one value
    /// repeated under [`Flag::Diag`]), `r_i ← D_{Z^N,σ1}^3`, `μ_i ← RandPack(x_i, s1)`.
    ///
    /// ```
    /// use coterie_math::prg::Csprng;
    /// use coterie_matrigear::{Flag, ProtocolParams, popk::PopkWitness};
    /// let pp = ProtocolParams::insecure_toy_b(2, 4).unwrap();
    /// let w = PopkWitness::sample(&pp, 3, Flag::Diag, &mut Csprng::new()).unwrap();
    /// let x = w.slots(&pp).unwrap();
    /// assert_eq!(x.len(), 3);
    /// assert!(x.iter().all(|v| v.iter().all(|s| *s == v[0])));
    /// ```
    ///
    /// # Errors
    /// [`Error::Invalid`] for `u = 0`; errors of the samplers.
    pub fn sample<R: rand::CryptoRng + ?Sized>(
        pp: &ProtocolParams,
        u: usize,
        flag: Flag,
        rng: &mut R,
    ) -> Result<Self> {
        if u == 0 {
            return Err(Error::Invalid("a proof needs U ≥ 1 ciphertexts".into()));
        }
        let w = pp.widths(flag);
        let gauss = randomness_sampler(w.sigma1)?;
        let mut lifts = Vec::with_capacity(u);
        let mut randomness = Vec::with_capacity(u);
        for _ in 0..u {
            let mut x = uniform_slots(pp, flag, rng)?;
            lifts.push(rand_pack(pp, &x, w.s1, flag, rng)?);
            for v in &mut x {
                wipe(v);
            }
            randomness.push(sample_with(&gauss, pp.degree(), rng));
        }
        Self::new(lifts, randomness)
    }

    /// Number of ciphertexts `U`.
    pub fn len(&self) -> usize {
        self.lifts.len()
    }

    /// Whether the witness is empty (never, for one built by [`PopkWitness::new`]).
    pub fn is_empty(&self) -> bool {
        self.lifts.is_empty()
    }

    /// The plaintext lifts `μ_i` (the prover's input: a test may change them).
    pub fn lifts_mut(&mut self) -> &mut [Vec<i128>] {
        &mut self.lifts
    }

    /// The randomness `r_i` (the prover's input: a test may change it).
    pub fn randomness_mut(&mut self) -> &mut [EncRandomness] {
        &mut self.randomness
    }

    /// The slot vectors `x_i = Unpack(fold(μ_i))` (`D` values in `[0, p)` each).
    ///
    /// # Errors
    /// A lift of the wrong size for `pp`.
    pub fn slots(&self, pp: &ProtocolParams) -> Result<Vec<Vec<BigInt>>> {
        self.lifts
            .iter()
            .map(|l| Ok(lift_plaintext(pp, l)?.decode_slots()?))
            .collect()
    }
}

/// `r ← D_{Z^N, width}^3` (coterie-math's constant-time integer-centred discrete Gaussian;
/// `width` in the `exp(−πx²/s²)` convention, standard deviation `width/√(2π)`), as coterie-bfv's
/// encryption randomness `(u, e0, e1)`.
///
/// # Errors
/// A width whose standard deviation is outside the sampler's `[0.5, 2^20]`.
///
/// ```
/// use coterie_math::prg::Csprng;
/// use coterie_matrigear::{Flag, ProtocolParams, popk::sample_randomness};
/// let pp = ProtocolParams::insecure_toy_b(2, 4).unwrap();
/// let r = sample_randomness(&pp, pp.widths(Flag::Any).sigma1, &mut Csprng::new()).unwrap();
/// assert_eq!(r.u.len(), 32);
/// ```
pub fn sample_randomness<R: rand::CryptoRng + ?Sized>(
    pp: &ProtocolParams,
    width: f64,
    rng: &mut R,
) -> Result<EncRandomness> {
    Ok(sample_with(&randomness_sampler(width)?, pp.degree(), rng))
}

fn randomness_sampler(width: f64) -> Result<DiscreteGaussian> {
    Ok(DiscreteGaussian::new(
        width / (2.0 * std::f64::consts::PI).sqrt(),
    )?)
}

fn sample_with<R: rand::CryptoRng + ?Sized>(
    g: &DiscreteGaussian,
    n: usize,
    rng: &mut R,
) -> EncRandomness {
    let mut r = EncRandomness {
        u: vec![0; n],
        e0: vec![0; n],
        e1: vec![0; n],
    };
    g.fill(rng, &mut r.u);
    g.fill(rng, &mut r.e0);
    g.fill(rng, &mut r.e1);
    r
}

/// Uniform slots: `D` values of `Z_p`, or one value repeated `D` times under `Diag`.
fn uniform_slots<R: rand::CryptoRng + ?Sized>(
    pp: &ProtocolParams,
    flag: Flag,
    rng: &mut R,
) -> Result<Vec<BigInt>> {
    let p = pp.p();
    Ok(match flag {
        Flag::Any => (0..pp.slots())
            .map(|_| random_below(rng, &p))
            .collect::<std::result::Result<_, _>>()?,
        Flag::Diag => vec![random_below(rng, &p)?; pp.slots()],
    })
}

fn lift_plaintext(pp: &ProtocolParams, lift: &[i128]) -> Result<Plaintext> {
    Ok(Plaintext::from_lift_wide(
        pp.context(),
        lift.iter().map(|&c| BigInt::from(c)).collect(),
    )?)
}

/// One repetition's response `(μ_{z_j}, t_j)` of one party (public once sent).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// `μ_{z_j} = μ_{y_j} + Σ_i w_{i,j}·μ_i` (`N` coefficients).
    pub mu_z: Vec<i128>,
    /// `t_j = s_j + Σ_i w_{i,j}·r_i`, the three components `(u, e0, e1)` (`N` coefficients each).
    pub t: [Vec<i64>; 3],
}

/// The bit-packed wire format of one party's `V` responses (module documentation, "Wire format
/// and sizes"): per repetition `μ_z` at `w_z` bits then `t_0, t_1, t_2` at `w_t` bits per
/// signed coefficient, two's complement, coterie-base's LSB-first bit packer.
#[derive(Clone, Debug)]
pub struct ResponseCodec {
    n: usize,
    v: usize,
    width_z: u32,
    width_t: u32,
    max_z: u128,
    max_t: u64,
}

/// Largest integer strictly below `bound` (`bound ≥ 1`).
fn largest_below(bound: f64) -> u128 {
    (bound.ceil() as u128).saturating_sub(1)
}

/// Bits of a two's complement value of magnitude up to `e` (`bits(e) + 1`).
fn signed_width(e: u128) -> u32 {
    (128 - e.leading_zeros()) + 1
}

impl ResponseCodec {
    /// The codec of a proof of `u` ciphertexts with `flag` under `pp` (widths from the
    /// per-party bounds).
    ///
    /// # Errors
    /// [`Error::Invalid`] for `u = 0`, or bounds too wide for the format (plaintext `2^126`,
    /// randomness `2^40`, coterie-bfv's limit on encryption randomness).
    ///
    /// ```
    /// use coterie_matrigear::{Flag, ProtocolParams, popk::ResponseCodec};
    /// let pp = ProtocolParams::insecure_toy_b(2, 4).unwrap();
    /// let c = ResponseCodec::new(&pp, 3, Flag::Any).unwrap();
    /// assert_eq!(c.encoded_len(), (22 * 32 * (c.width_z() + 3 * c.width_t()) as usize).div_ceil(8));
    /// ```
    pub fn new(pp: &ProtocolParams, u: usize, flag: Flag) -> Result<Self> {
        if u == 0 {
            return Err(Error::Invalid("a proof needs U ≥ 1 ciphertexts".into()));
        }
        let bz = pp.party_bound_z(u, flag);
        let bt = pp.party_bound_t(u, flag);
        if !(bz.is_finite() && bz >= 1.0 && bz < 2f64.powi(126)) {
            return Err(Error::Invalid(format!(
                "plaintext bound {bz:e} outside [1, 2^126)"
            )));
        }
        if !(bt.is_finite() && bt >= 1.0 && bt < 2f64.powi(40)) {
            return Err(Error::Invalid(format!(
                "randomness bound {bt:e} outside [1, 2^40)"
            )));
        }
        let (max_z, max_t) = (largest_below(bz), largest_below(bt));
        Ok(ResponseCodec {
            n: pp.degree(),
            v: pp.widths(flag).v,
            width_z: signed_width(max_z + 1),
            width_t: signed_width(max_t + 1),
            max_z,
            max_t: max_t as u64,
        })
    }

    /// Bits per coefficient of `μ_z`.
    pub fn width_z(&self) -> u32 {
        self.width_z
    }
    /// Bits per coefficient of each component of `t`.
    pub fn width_t(&self) -> u32 {
        self.width_t
    }
    /// The largest `|μ_z|` coefficient a verifier accepts (largest integer below
    /// [`ProtocolParams::party_bound_z`]).
    pub fn max_z(&self) -> u128 {
        self.max_z
    }
    /// The largest `|t|` coefficient a verifier accepts.
    pub fn max_t(&self) -> u64 {
        self.max_t
    }
    /// Repetitions `V` per message.
    pub fn repetitions(&self) -> usize {
        self.v
    }
    /// Exact length of an encoded message: `⌈V·N·(w_z + 3w_t)/8⌉` bytes.
    pub fn encoded_len(&self) -> usize {
        let bits = self.v as u128 * self.n as u128 * u128::from(self.width_z + 3 * self.width_t);
        bits.div_ceil(8) as usize
    }

    /// Encodes `V` responses; a coefficient outside its width is saturated (module
    /// documentation).
    ///
    /// # Errors
    /// [`Error::Invalid`] for a number of responses other than `V` or polynomials of a size
    /// other than `N`.
    pub fn encode(&self, responses: &[Response]) -> Result<Vec<u8>> {
        if responses.len() != self.v
            || responses
                .iter()
                .any(|r| r.mu_z.len() != self.n || r.t.iter().any(|t| t.len() != self.n))
        {
            return Err(Error::Invalid(format!(
                "a response message holds V = {} responses of N = {} coefficients",
                self.v, self.n
            )));
        }
        let mut w = coterie_base::bits::BitWriter::with_capacity(self.encoded_len());
        let lim_z = (1i128 << (self.width_z - 1)) - 1;
        let lim_t = (1i64 << (self.width_t - 1)) - 1;
        for r in responses {
            for &c in &r.mu_z {
                w.put_u128(c.clamp(-lim_z, lim_z) as u128, self.width_z);
            }
            for t in &r.t {
                for &c in t {
                    w.put(c.clamp(-lim_t, lim_t) as u64, self.width_t);
                }
            }
        }
        Ok(w.finish())
    }

    /// Decodes a message of [`ResponseCodec::encoded_len`] bytes with zero padding.
    ///
    /// # Errors
    /// [`Error::Malformed`] for another length or nonzero padding bits.
    pub fn decode(&self, bytes: &[u8]) -> Result<Vec<Response>> {
        if bytes.len() != self.encoded_len() {
            return Err(Error::Malformed(format!(
                "a response message has {} bytes, expected {}",
                bytes.len(),
                self.encoded_len()
            )));
        }
        let mut rd = coterie_base::bits::BitReader::new(bytes);
        let short = || Error::Malformed("response message too short".into());
        let (sz, st) = (128 - self.width_z, 64 - self.width_t);
        let mut out = Vec::with_capacity(self.v);
        for _ in 0..self.v {
            let mut mu_z = Vec::with_capacity(self.n);
            for _ in 0..self.n {
                let raw = rd.get_u128(self.width_z).ok_or_else(short)?;
                mu_z.push(((raw << sz) as i128) >> sz);
            }
            let mut t: [Vec<i64>; 3] = Default::default();
            for comp in &mut t {
                comp.reserve(self.n);
                for _ in 0..self.n {
                    let raw = rd.get(self.width_t).ok_or_else(short)?;
                    comp.push(((raw << st) as i64) >> st);
                }
            }
            out.push(Response { mu_z, t });
        }
        let used = self.v as u128 * self.n as u128 * u128::from(self.width_z + 3 * self.width_t);
        let pad = (self.encoded_len() as u128 * 8 - used) as u32;
        if pad > 0 && rd.get(pad) != Some(0) {
            return Err(Error::Malformed(
                "nonzero padding in a response message".into(),
            ));
        }
        Ok(out)
    }
}

/// The public challenges `w_{i,j} = X^{k_{i,j}}` of one proof.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Challenges {
    u: usize,
    /// `exps[j·U + i] = k_{i,j}` in `[0, 2N)`.
    exps: Vec<usize>,
}

impl Challenges {
    /// Expands `seed` (the coin-tossed [`challenge_seed`]) with a BLAKE3 XOF into `U·V`
    /// exponents, `j` major: `k` uniform in `[0, 2N)` ([`Flag::Any`]) or `k = D·j'` with `j'`
    /// uniform in `[0, 2M)` ([`Flag::Diag`]); `V` is the flag's repetition count.
    ///
    /// ```
    /// use coterie_matrigear::{Flag, ProtocolParams, popk::Challenges};
    /// let pp = ProtocolParams::insecure_toy_b(2, 4).unwrap();
    /// let ch = Challenges::derive(&pp, 3, Flag::Diag, &[7; 32]);
    /// assert_eq!(ch.repetitions(), 44);
    /// assert!((0..44).all(|j| (0..3).all(|i| ch.exponent(i, j) % 8 == 0 && ch.exponent(i, j) < 64)));
    /// ```
    pub fn derive(pp: &ProtocolParams, u: usize, flag: Flag, seed: &[u8; 32]) -> Self {
        let v = pp.widths(flag).v;
        let mut xof = Xof::new(seed, CHALLENGE_XOF, 0);
        // Both set sizes are powers of two: masking is uniform.
        let (size, step) = match flag {
            Flag::Any => (2 * pp.degree(), 1),
            Flag::Diag => (2 * pp.m(), pp.slots()),
        };
        let mask = (size as u64).next_power_of_two() - 1;
        let exps = (0..u * v)
            .map(|_| {
                loop {
                    let k = rand::Rng::next_u64(&mut xof) & mask;
                    if k < size as u64 {
                        break k as usize * step;
                    }
                }
            })
            .collect();
        Challenges { u, exps }
    }

    /// The exponent `k` of `w_{i,j} = X^k`.
    ///
    /// # Panics
    /// For `i ≥ U` or `j ≥ V`.
    pub fn exponent(&self, i: usize, j: usize) -> usize {
        self.exps[j * self.u + i]
    }

    /// Ciphertexts per party `U`.
    pub fn ciphertexts(&self) -> usize {
        self.u
    }

    /// Repetitions `V`.
    pub fn repetitions(&self) -> usize {
        self.exps.len().checked_div(self.u).unwrap_or(0)
    }
}

/// The challenge seed from every party's coin (in party order) and the proof's label:
/// BLAKE3 in derive-key mode over the label and the seeds.
pub fn challenge_seed(label: &str, coins: &[[u8; 32]]) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key("coterie-matrigear 2025 popk challenge seed v1");
    h.update(&(label.len() as u64).to_le_bytes());
    h.update(label.as_bytes());
    h.update(&(coins.len() as u64).to_le_bytes());
    for c in coins {
        h.update(c);
    }
    *h.finalize().as_bytes()
}

/// Integer coefficients that saturate instead of overflowing (`i64`, `i128`).
trait Saturating: Copy {
    fn sat_neg(self) -> Self;
    fn sat_add(self, other: Self) -> Self;
}

impl Saturating for i64 {
    fn sat_neg(self) -> Self {
        self.saturating_neg()
    }
    fn sat_add(self, other: Self) -> Self {
        self.saturating_add(other)
    }
}

impl Saturating for i128 {
    fn sat_neg(self) -> Self {
        self.saturating_neg()
    }
    fn sat_add(self, other: Self) -> Self {
        self.saturating_add(other)
    }
}

/// `acc += X^k·a` in `Z^N` with `X^N = −1` (`k < 2N`), saturating.
fn add_monomial<T: Saturating>(acc: &mut [T], a: &[T], k: usize) {
    let n = acc.len();
    let (neg, k) = if k >= n { (true, k - n) } else { (false, k) };
    for (i, &x) in a.iter().enumerate() {
        let (pos, wrap) = if i + k < n {
            (i + k, false)
        } else {
            (i + k - n, true)
        };
        let x = if neg ^ wrap { x.sat_neg() } else { x };
        acc[pos] = acc[pos].sat_add(x);
    }
}

/// A prover between its commitment and its response: the witness and the commitments' secret
/// plaintext lifts and randomness (wiped on drop).
pub struct ProverState {
    witness: PopkWitness,
    mu_y: Vec<Vec<i128>>,
    s: Vec<EncRandomness>,
}

impl std::fmt::Debug for ProverState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ProverState(U = {}, V = {}, ..)",
            self.witness.len(),
            self.mu_y.len()
        )
    }
}

impl Drop for ProverState {
    fn drop(&mut self) {
        for m in &mut self.mu_y {
            m.zeroize();
        }
    }
}

/// The prover's messages of the first round: the `U` ciphertexts and the `V` commitments.
#[derive(Clone, Debug)]
pub struct ProverMessages {
    /// `ct_i = Enc(μ_i, r_i)`.
    pub ciphertexts: Vec<Ciphertext>,
    /// `comm_j = Enc(μ_{y_j}, s_j)`.
    pub commitments: Vec<Ciphertext>,
}

/// The sampling and commitment phases for `witness`: encrypts the witness and samples and
/// encrypts the `V` commitments (§5.3).
///
/// # Errors
/// [`Error::Invalid`] for lifts of a size other than `N`; coterie-bfv's error for randomness of
/// the wrong size or with a coefficient of `2^40` or more.
pub fn prove_commit<R: rand::CryptoRng + ?Sized>(
    pp: &ProtocolParams,
    pk: &PublicKey,
    witness: PopkWitness,
    flag: Flag,
    rng: &mut R,
) -> Result<(ProverState, ProverMessages)> {
    let (n, u) = (pp.degree(), witness.len());
    if witness.lifts.iter().any(|l| l.len() != n) {
        return Err(Error::Invalid(format!(
            "every witness lift needs N = {n} coefficients"
        )));
    }
    let ciphertexts = witness
        .lifts
        .iter()
        .zip(&witness.randomness)
        .map(|(l, r)| Ok(pk.encrypt_with(&lift_plaintext(pp, l)?, r)?))
        .collect::<Result<Vec<_>>>()?;
    let w = pp.widths(flag);
    let scale = ((u + 1) as f64).sqrt();
    let gauss = randomness_sampler(scale * w.sigma2)?;
    let mut mu_y = Vec::with_capacity(w.v);
    let mut s = Vec::with_capacity(w.v);
    let mut commitments = Vec::with_capacity(w.v);
    for _ in 0..w.v {
        let mut y = uniform_slots(pp, flag, rng)?;
        let m = rand_pack(pp, &y, scale * w.s2, flag, rng)?;
        for v in &mut y {
            wipe(v);
        }
        let sj = sample_with(&gauss, n, rng);
        commitments.push(pk.encrypt_with(&lift_plaintext(pp, &m)?, &sj)?);
        mu_y.push(m);
        s.push(sj);
    }
    Ok((
        ProverState { witness, mu_y, s },
        ProverMessages {
            ciphertexts,
            commitments,
        },
    ))
}

impl ProverState {
    /// The response phase: `(μ_{z_j}, t_j)` for every repetition `j`.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `ch` is for another `U` or `V`.
    pub fn respond(&self, ch: &Challenges) -> Result<Vec<Response>> {
        if ch.ciphertexts() != self.witness.len() || ch.repetitions() != self.mu_y.len() {
            return Err(Error::Invalid(
                "challenges for another number of ciphertexts or repetitions".into(),
            ));
        }
        let mut out = Vec::with_capacity(self.mu_y.len());
        for (j, (my, sj)) in self.mu_y.iter().zip(&self.s).enumerate() {
            let mut mu_z = my.clone();
            let mut t = [sj.u.clone(), sj.e0.clone(), sj.e1.clone()];
            for (i, (l, r)) in self
                .witness
                .lifts
                .iter()
                .zip(&self.witness.randomness)
                .enumerate()
            {
                let k = ch.exponent(i, j);
                add_monomial(&mut mu_z, l, k);
                add_monomial(&mut t[0], &r.u, k);
                add_monomial(&mut t[1], &r.e0, k);
                add_monomial(&mut t[2], &r.e1, k);
            }
            out.push(Response { mu_z, t });
        }
        Ok(out)
    }
}

/// Checks that `ct` is a two-part ciphertext at the top level under a single key (what an
/// honest encryption is); the caller maps a failure to [`PopkCheck::Shape`].
fn fresh_shape(pp: &ProtocolParams, ct: &Ciphertext) -> bool {
    ct.len() == 2
        && ct.level() == pp.context().max_level()
        && *ct.key_set() == coterie_bfv::ciphertext::KeySet::Powers
}

/// Verifies party `party`'s proof (§5.3 verification, per party; module documentation): shape,
/// then for every repetition `j` in order the norms, diagonality (under [`Flag::Diag`]) and the
/// encryption identity.
///
/// # Errors
/// [`Error::ProofRejected`] naming `party`, the failed check, `label` and the repetition.
#[allow(clippy::too_many_arguments)]
pub fn verify_party(
    pp: &ProtocolParams,
    pk: &PublicKey,
    flag: Flag,
    party: PartyId,
    label: &str,
    msgs: &ProverMessages,
    ch: &Challenges,
    responses: &[Response],
) -> Result<()> {
    let reject = |check, rep| Error::ProofRejected {
        party: Some(party),
        check,
        proof: label.to_string(),
        rep,
    };
    let (n, d) = (pp.degree(), pp.slots());
    let u = ch.ciphertexts();
    let codec = ResponseCodec::new(pp, u, flag)?;
    let v = codec.repetitions();
    if msgs.ciphertexts.len() != u {
        return Err(reject(PopkCheck::Shape, 0));
    }
    if msgs.commitments.len() != v || responses.len() != v || ch.repetitions() != v {
        return Err(reject(PopkCheck::Shape, 0));
    }
    for (i, ct) in msgs.ciphertexts.iter().enumerate() {
        if !fresh_shape(pp, ct) {
            return Err(reject(PopkCheck::Shape, i));
        }
    }
    for (j, (comm, r)) in msgs.commitments.iter().zip(responses).enumerate() {
        if !fresh_shape(pp, comm) || r.mu_z.len() != n || r.t.iter().any(|t| t.len() != n) {
            return Err(reject(PopkCheck::Shape, j));
        }
        if r.mu_z.iter().any(|c| c.unsigned_abs() > codec.max_z()) {
            return Err(reject(PopkCheck::NormZ, j));
        }
        if r.t
            .iter()
            .flatten()
            .any(|c| c.unsigned_abs() > codec.max_t())
        {
            return Err(reject(PopkCheck::NormT, j));
        }
        if flag == Flag::Diag
            && r.mu_z
                .iter()
                .enumerate()
                .any(|(i, &c)| i % d != 0 && c != 0)
        {
            return Err(reject(PopkCheck::Diagonal, j));
        }
        let t = EncRandomness {
            u: r.t[0].clone(),
            e0: r.t[1].clone(),
            e1: r.t[2].clone(),
        };
        let lhs = pk.encrypt_with(&lift_plaintext(pp, &r.mu_z)?, &t)?;
        // comm + Σ_i X^{k_ij}·ct_i, accumulated in place part by part
        let mut rhs: Vec<Poly> = comm.parts().to_vec();
        for (i, ct) in msgs.ciphertexts.iter().enumerate() {
            let k = ch.exponent(i, j);
            for (acc, part) in rhs.iter_mut().zip(ct.parts()) {
                acc.add_mul_monomial(part, k)?;
            }
        }
        if lhs.parts() != rhs.as_slice() {
            return Err(reject(PopkCheck::EncIdentity, j));
        }
    }
    Ok(())
}

/// Bytes this party sent to each other party, by message kind (payloads, without framing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PopkTraffic {
    /// The `U` ciphertexts.
    pub ciphertext_bytes: usize,
    /// The `V` commitments.
    pub commitment_bytes: usize,
    /// The response message.
    pub response_bytes: usize,
}

impl PopkTraffic {
    /// All three.
    pub fn total(&self) -> usize {
        self.ciphertext_bytes + self.commitment_bytes + self.response_bytes
    }
}

/// What a party keeps from an accepted proof: its own slot vectors `x_i` (secret; wiped on
/// drop, not shown by `Debug`), the sums `ct_i = Σ_l ct_i^(l)` over all parties (not doubled),
/// and its traffic.
pub struct PopkOutput {
    slots: Vec<Vec<BigInt>>,
    ciphertexts: Vec<Ciphertext>,
    traffic: PopkTraffic,
}

impl std::fmt::Debug for PopkOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PopkOutput(U = {}, traffic = {:?}, ..)",
            self.ciphertexts.len(),
            self.traffic
        )
    }
}

impl Drop for PopkOutput {
    fn drop(&mut self) {
        for v in self.slots.iter_mut().flatten() {
            wipe(v);
        }
    }
}

impl PopkOutput {
    /// This party's `U` slot vectors `x_i^(l)` (`D` values in `[0, p)` each).
    pub fn slots(&self) -> &[Vec<BigInt>] {
        &self.slots
    }
    /// The `U` sums `Σ_l ct_i^(l)`, the same at every party.
    pub fn ciphertexts(&self) -> &[Ciphertext] {
        &self.ciphertexts
    }
    /// Bytes sent to each other party.
    pub fn traffic(&self) -> PopkTraffic {
        self.traffic
    }
}

/// Exact size of one ciphertext message of a proof under `pp` (`Ciphertext::to_bytes` of a
/// fresh top-level ciphertext): `2·⌈N·Σ_k bits(q_k)/8⌉ + h` bytes.
///
/// # Errors
/// Errors of the encryption of zero used to measure it.
pub fn ciphertext_len(pp: &ProtocolParams, pk: &PublicKey) -> Result<usize> {
    let n = pp.degree();
    let zero = EncRandomness {
        u: vec![0; n],
        e0: vec![0; n],
        e1: vec![0; n],
    };
    Ok(pk
        .encrypt_with(&lift_plaintext(pp, &vec![0; n])?, &zero)?
        .to_bytes()
        .len())
}

/// Runs Π_PoPK over `mesh` with an honestly sampled witness of `u` ciphertexts
/// ([`PopkWitness::sample`]); see [`run_with_witness`] and the module documentation (which has
/// an example).
///
/// # Errors
/// As [`run_with_witness`].
pub async fn run<M: Mesh, R: rand::CryptoRng + ?Sized>(
    mesh: &mut M,
    pp: &ProtocolParams,
    pk: &PublicKey,
    u: usize,
    flag: Flag,
    label: &str,
    rng: &mut R,
) -> Result<PopkOutput> {
    let witness = PopkWitness::sample(pp, u, flag, rng)?;
    run_with_witness(mesh, pp, pk, witness, flag, label, rng).await
}

/// Runs Π_PoPK over `mesh` with the caller's witness (module documentation): sends the
/// ciphertexts and commitments, tosses the challenge coins, sends the responses, verifies every
/// other party, and echoes a digest of everything received.
///
/// # Errors
/// [`Error::Invalid`] when `mesh` has another number of parties than `pp`, or for a witness of
/// the wrong size; [`Error::ProofRejected`] naming the first party (in id order) whose proof
/// fails and the check (after aborting the mesh with its text); [`Error::Net`] for a network
/// failure, another party's abort, a bad coin opening or an inconsistent echo.
pub async fn run_with_witness<M: Mesh, R: rand::CryptoRng + ?Sized>(
    mesh: &mut M,
    pp: &ProtocolParams,
    pk: &PublicKey,
    witness: PopkWitness,
    flag: Flag,
    label: &str,
    rng: &mut R,
) -> Result<PopkOutput> {
    let (me, parties) = (mesh.id(), mesh.n());
    if parties != pp.parties() {
        return Err(Error::Invalid(format!(
            "the mesh has {parties} parties, the parameters {}",
            pp.parties()
        )));
    }
    let u = witness.len();
    let codec = ResponseCodec::new(pp, u, flag)?;
    let v = codec.repetitions();
    // A local failure (a witness of the wrong size) aborts the mesh so that no peer waits.
    let local = witness
        .slots(pp)
        .and_then(|slots| Ok((slots, prove_commit(pp, pk, witness, flag, rng)?)));
    let (slots, (state, mine)) = match local {
        Ok(v) => v,
        Err(e) => return Err(abort_local(mesh, me, e).await),
    };
    let ct_bytes: Vec<Vec<u8>> = mine.ciphertexts.iter().map(|c| c.to_bytes()).collect();
    let comm_bytes: Vec<Vec<u8>> = mine.commitments.iter().map(|c| c.to_bytes()).collect();

    // Round 1: ciphertexts and commitments.
    for to in (0..parties).filter(|&p| p != me) {
        for b in &ct_bytes {
            mesh.send_bytes(to, tags::CIPHERTEXT, b).await?;
        }
        for b in &comm_bytes {
            mesh.send_bytes(to, tags::COMMITMENT, b).await?;
        }
    }
    let ctx = pp.context();
    let mut digests: Vec<blake3::Hasher> = (0..parties).map(|_| digest_start(label)).collect();
    let mut received: Vec<Option<ProverMessages>> = (0..parties).map(|_| None).collect();
    for from in 0..parties {
        if from == me {
            for b in ct_bytes.iter().chain(&comm_bytes) {
                digest_add(&mut digests[from], b);
            }
            continue;
        }
        let mut ciphertexts = Vec::with_capacity(u);
        let mut commitments = Vec::with_capacity(v);
        for i in 0..u + v {
            let tag = if i < u {
                tags::CIPHERTEXT
            } else {
                tags::COMMITMENT
            };
            let bytes = mesh.recv_bytes(from, tag).await?;
            digest_add(&mut digests[from], &bytes);
            let ct = match Ciphertext::from_bytes(ctx, &bytes) {
                Ok(ct) if fresh_shape(pp, &ct) => ct,
                _ => {
                    let rep = if i < u { i } else { i - u };
                    return Err(reject_and_abort(mesh, from, PopkCheck::Shape, label, rep).await);
                }
            };
            if i < u {
                ciphertexts.push(ct);
            } else {
                commitments.push(ct);
            }
        }
        received[from] = Some(ProverMessages {
            ciphertexts,
            commitments,
        });
    }

    // Challenge by coin tossing, only now that every party's first round is in.
    let mut coin = [0u8; 32];
    rand::Rng::fill_bytes(rng, &mut coin);
    let domain = format!("coterie-matrigear/popk/v1/coins/{label}");
    let coins: Vec<[u8; 32]> = commit_open_all(mesh, &domain, &coin).await?;
    let ch = Challenges::derive(pp, u, flag, &challenge_seed(label, &coins));

    // Round 2: responses.
    let resp_bytes = match state.respond(&ch).and_then(|r| codec.encode(&r)) {
        Ok(b) => b,
        Err(e) => return Err(abort_local(mesh, me, e).await),
    };
    drop(state);
    for to in (0..parties).filter(|&p| p != me) {
        mesh.send_bytes(to, tags::RESPONSE, &resp_bytes).await?;
    }
    let mut responses: Vec<Vec<Response>> = (0..parties).map(|_| Vec::new()).collect();
    for from in 0..parties {
        if from == me {
            digest_add(&mut digests[from], &resp_bytes);
            continue;
        }
        let bytes = mesh.recv_bytes(from, tags::RESPONSE).await?;
        digest_add(&mut digests[from], &bytes);
        match codec.decode(&bytes) {
            Ok(r) => responses[from] = r,
            Err(_) => {
                return Err(reject_and_abort(mesh, from, PopkCheck::Shape, label, 0).await);
            }
        }
    }

    // Verification of every other party, in id order.
    for from in (0..parties).filter(|&p| p != me) {
        let Some(msgs) = received[from].as_ref() else {
            continue;
        };
        if let Err(e) = verify_party(pp, pk, flag, from, label, msgs, &ch, &responses[from]) {
            if matches!(e, Error::ProofRejected { .. }) {
                mesh.abort(&e.to_string()).await;
                return Err(e);
            }
            return Err(abort_local(mesh, me, e).await);
        }
    }

    // Echo: everyone received the same messages from everyone.
    let digests: Vec<[u8; 32]> = digests
        .into_iter()
        .map(|h| *h.finalize().as_bytes())
        .collect();
    let echo = format!("coterie-matrigear/popk/v1/echo/{label}");
    check_consistent(mesh, &echo, &digests).await?;

    // Sums Σ_l ct_i^(l).
    let mut sums = mine.ciphertexts;
    for msgs in received.iter().flatten() {
        for (s, ct) in sums.iter_mut().zip(&msgs.ciphertexts) {
            *s = s.add(ct)?;
        }
    }
    Ok(PopkOutput {
        slots,
        ciphertexts: sums,
        traffic: PopkTraffic {
            ciphertext_bytes: ct_bytes.iter().map(Vec::len).sum(),
            commitment_bytes: comm_bytes.iter().map(Vec::len).sum(),
            response_bytes: resp_bytes.len(),
        },
    })
}

fn digest_start(label: &str) -> blake3::Hasher {
    let mut h = blake3::Hasher::new_derive_key("coterie-matrigear 2025 popk transcript v1");
    h.update(&(label.len() as u64).to_le_bytes());
    h.update(label.as_bytes());
    h
}

fn digest_add(h: &mut blake3::Hasher, bytes: &[u8]) {
    h.update(&(bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

/// Aborts the mesh after a local failure of party `me` and hands the error back.
async fn abort_local<M: Mesh>(mesh: &mut M, me: PartyId, e: Error) -> Error {
    mesh.abort(&format!(
        "party {me}: proof of plaintext knowledge failed locally: {e}"
    ))
    .await;
    e
}

async fn reject_and_abort<M: Mesh>(
    mesh: &mut M,
    party: PartyId,
    check: PopkCheck,
    label: &str,
    rep: usize,
) -> Error {
    let e = Error::ProofRejected {
        party: Some(party),
        check,
        proof: label.to_string(),
        rep,
    };
    mesh.abort(&e.to_string()).await;
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use coterie_math::prg::Csprng;

    #[test]
    fn monomial_products_are_negacyclic() {
        // (1 + 2X + 3X^2 + 4X^3)·X^k mod X^4 + 1, k = 0..8.
        let a = [1i128, 2, 3, 4];
        let want: [[i128; 4]; 8] = [
            [1, 2, 3, 4],
            [-4, 1, 2, 3],
            [-3, -4, 1, 2],
            [-2, -3, -4, 1],
            [-1, -2, -3, -4],
            [4, -1, -2, -3],
            [3, 4, -1, -2],
            [2, 3, 4, -1],
        ];
        for (k, w) in want.iter().enumerate() {
            let mut acc = [0i128; 4];
            add_monomial(&mut acc, &a, k);
            assert_eq!(&acc, w, "k = {k}");
            let mut acc64 = [0i64; 4];
            add_monomial(&mut acc64, &[1, 2, 3, 4], k);
            assert_eq!(acc64.map(i128::from), *w);
        }
    }

    #[test]
    fn codec_roundtrip_saturation_and_malformed() {
        let pp = ProtocolParams::insecure_toy_b(2, 4).unwrap();
        let codec = ResponseCodec::new(&pp, 3, Flag::Any).unwrap();
        let (n, v) = (pp.degree(), codec.repetitions());
        let mz = codec.max_z() as i128;
        let mt = codec.max_t() as i64;
        let mut rs: Vec<Response> = (0..v)
            .map(|j| Response {
                mu_z: (0..n)
                    .map(|i| (i as i128 - 16) * (mz / 16) + j as i128)
                    .collect(),
                t: [
                    (0..n).map(|i| (i as i64 - 16) * (mt / 16)).collect(),
                    vec![-mt; n],
                    vec![mt; n],
                ],
            })
            .collect();
        let bytes = codec.encode(&rs).unwrap();
        assert_eq!(bytes.len(), codec.encoded_len());
        assert_eq!(codec.decode(&bytes).unwrap(), rs);
        // Out-of-range values saturate beyond the bound.
        rs[0].mu_z[3] = i128::MAX;
        rs[1].t[2][5] = -(1i64 << 50);
        let back = codec.decode(&codec.encode(&rs).unwrap()).unwrap();
        assert!(back[0].mu_z[3] as u128 > codec.max_z());
        assert!(back[1].t[2][5].unsigned_abs() > codec.max_t());
        // Wrong lengths and padding are errors, not panics.
        assert!(codec.decode(&bytes[1..]).is_err());
        assert!(codec.decode(&[]).is_err());
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(codec.decode(&longer).is_err());
        assert!(codec.encode(&rs[1..]).is_err());
        let used = v * n * (codec.width_z() + 3 * codec.width_t()) as usize;
        if !used.is_multiple_of(8) {
            let mut padded = bytes.clone();
            *padded.last_mut().unwrap() |= 0x80;
            assert!(codec.decode(&padded).is_err());
        }
    }

    /// The local steps without a network: two honest parties' proofs verify, and the
    /// identity holds exactly.
    #[test]
    fn local_steps_accept_honest_provers() {
        let pp = ProtocolParams::insecure_toy_b(2, 4).unwrap();
        let mut rng = Csprng::new();
        let sk = coterie_bfv::SecretKey::generate(pp.context(), &mut rng);
        let pk = sk.public_key(&mut rng);
        for flag in [Flag::Any, Flag::Diag] {
            let w = PopkWitness::sample(&pp, 2, flag, &mut rng).unwrap();
            let x = w.slots(&pp).unwrap();
            let (state, msgs) = prove_commit(&pp, &pk, w, flag, &mut rng).unwrap();
            for (ct, xi) in msgs.ciphertexts.iter().zip(&x) {
                assert_eq!(&sk.decrypt(ct).unwrap().decode_slots().unwrap(), xi);
            }
            let ch = Challenges::derive(&pp, 2, flag, &[1; 32]);
            let rs = state.respond(&ch).unwrap();
            verify_party(&pp, &pk, flag, 1, "t", &msgs, &ch, &rs).unwrap();
            let mut bad = rs.clone();
            bad[3].t[1][0] += 1;
            assert!(matches!(
                verify_party(&pp, &pk, flag, 1, "t", &msgs, &ch, &bad),
                Err(Error::ProofRejected {
                    party: Some(1),
                    check: PopkCheck::EncIdentity,
                    rep: 3,
                    ..
                })
            ));
        }
    }
}
