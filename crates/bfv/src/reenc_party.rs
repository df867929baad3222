//! Seed 001's parties over a [`Mesh`]: users, re-encryption proxies, a computing server and a
//! receiver, running multi-key BFV ([`crate::mk`]) with threshold decryption and threshold proxy
//! re-encryption ([`crate::reenc`]) as five steps, each a function every party of the mesh calls
//! with its own role:
//!
//! 1. [`keygen`]: a commit-and-open coin toss for the CRS seed; every user makes its secret key,
//!    public key and relinearization key ([`MkRelinKey`], over Table 2's gadget for the number of
//!    users) and sends the public parts to the server.
//! 2. [`rekeygen`] (seed 001 Algorithm 1): the receiver samples a masking key `r_{i→D}` per user
//!    and sends it to user `i` (ReKeyGen 1, one element), who splits `rk = s_i − r_{i→D}` into
//!    `N` shares, one per proxy (ReKeyGen 2, `N` elements), and erases `r` and `rk`.
//! 3. [`evaluate`]: every user encrypts its input and sends it to the server; the server
//!    evaluates [`circuit`] (depth 5, every product mixing all users' keys, relinearized on the
//!    fly with the per-user grouping) and stores the result.
//! 4. [`decrypt`]: threshold decryption of the stored result: the server sends each user its
//!    [`DecryptionRequest`] (`c_i`; the merging user also gets `c_0`), every user sends its
//!    smudged partial decryption to the merging user (the first user), who merges and checks.
//! 5. [`reencrypt`]: the server sends the stored result to the proxies; each proxy computes its
//!    share of `c_0'` with its key shares and fresh smudging (ReEnc, Algorithm 2) and sends it to
//!    the receiver; the first proxy also forwards the ciphertext; the receiver combines and
//!    decrypts with its masking keys (Algorithm 3) and checks.
//!
//! Keys are made once ([`keygen`] refuses to replace a user's or the server's key file);
//! [`rekeygen`] may be re-run (fresh masking keys and shares replace the old ones everywhere, so
//! re-run it until it completes at every party). Splitting the steps lets a step be retried
//! after a crash: everything a later step needs is on disk (the proxies' key shares, the
//! receiver's masking keys, the users' keys, the server's result), so a proxy killed during
//! [`reencrypt`] makes the receiver fail with the error naming
//! it, and a re-run of [`reencrypt`] after the restart succeeds with fresh smudging.
//!
//! **Demo inputs.** The users' inputs are [`demo_inputs`], derived from a public seed, so that
//! the merging user and the receiver can check the results; in a real deployment the inputs are
//! the users' own and nobody but the result's receiver learns the output.
//!
//! **Files** (under the party's directory, versioned envelopes, atomic durable writes; the ones
//! holding secrets written owner-only): `user.key` (secret, public and relinearization key,
//! CRS seed), `receiver.masking` (one masking key per user), `proxy.shares` (one
//! re-encryption key share per user), `server.keys` (every user's public keys) and
//! `server.result` (the evaluated ciphertext).
//!
//! **Communication** ([`Traffic`]): every step reports the bytes its party sent and received per
//! phase, so the paper's counts (ReKeyGen `N + 1` elements per user, ReEnc `k + N`, threshold
//! decryption `2k − 1`; seed 001 §7.1) can be checked on the real exchange. Two deliberate
//! differences: the merging user receives `c_0` with its own `c_i` (the paper's count omits the
//! element without which nobody can merge), and the forwarding proxy sends the whole ciphertext
//! (`k + 1` elements) so that the receiver can check that every proxy's share was made for the
//! same ciphertext (the shares are bound to its digest).

use std::path::{Path, PathBuf};
use std::time::Instant;

use coterie_base::Progress;
use coterie_math::prg::{Csprng, Seed};
use coterie_net::{Mesh, PartyId};
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use crate::ciphertext::Ciphertext;
use crate::context::Context;
use crate::encoding::Plaintext;
use crate::keys::{PublicKey, SecretKey, seed_from};
use crate::mk::{
    self, DecryptionRequest, MkCrs, MkRelinKey, PartialDecryption, Relin, Smudging,
    paper_decomposition,
};
use crate::params::Params;
use crate::reenc::{self, MaskingKey, ReEncShare, ReKeyShare};
use crate::serial::{decode, encode};
use crate::{Error, Result};

/// Multiplicative depth of [`circuit`] (the paper's `L`).
pub const DEPTH: usize = 5;

/// The protocol tags of the messages (for tampering tests and traces).
pub mod tags {
    /// User → server: public key and relinearization key.
    pub const USER_KEYS: u32 = 0x5245_0001;
    /// Receiver → user: masking key (ReKeyGen 1).
    pub const MASK: u32 = 0x5245_0002;
    /// User → proxy: re-encryption key share (ReKeyGen 2).
    pub const RK_SHARE: u32 = 0x5245_0003;
    /// User → server: encrypted input.
    pub const INPUT: u32 = 0x5245_0004;
    /// Server → user: decryption request.
    pub const DEC_REQUEST: u32 = 0x5245_0005;
    /// User → merging user: partial decryption.
    pub const PARTIAL: u32 = 0x5245_0006;
    /// Server → proxy: the ciphertext to re-encrypt.
    pub const REENC_CT: u32 = 0x5245_0007;
    /// Proxy → receiver: re-encryption share (ReEnc 1).
    pub const REENC_SHARE: u32 = 0x5245_0008;
    /// First proxy → receiver: the ciphertext (ReEnc 2).
    pub const REENC_FORWARD: u32 = 0x5245_0009;
}
use tags::{
    DEC_REQUEST as TAG_DEC_REQUEST, INPUT as TAG_INPUT, MASK as TAG_MASK, PARTIAL as TAG_PARTIAL,
    REENC_CT as TAG_REENC_CT, REENC_FORWARD as TAG_REENC_FORWARD, REENC_SHARE as TAG_REENC_SHARE,
    RK_SHARE as TAG_RK_SHARE, USER_KEYS as TAG_USER_KEYS,
};

/// What a party is in seed 001.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// User `i` (0-based among the users): owns a key and an input; its key id is `i + 1`.
    User(usize),
    /// Proxy `j` (0-based among the proxies): holds one share of every user's re-encryption key.
    Proxy(usize),
    /// The computing server: evaluates on ciphertexts; holds no secret.
    Server,
    /// The receiver (delegatee `D`): holds the masking keys.
    Receiver,
}

/// Which party of the mesh has which role: `k ≥ 2` users, `N ≥ 1` proxies, one server and one
/// receiver, at any positions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    roles: Vec<Role>,
    users: Vec<PartyId>,
    proxies: Vec<PartyId>,
    server: PartyId,
    receiver: PartyId,
}

impl Layout {
    /// Users first, then proxies, then the server, then the receiver (`k + N + 2` parties).
    ///
    /// # Errors
    /// As [`Layout::from_roles`].
    pub fn standard(users: usize, proxies: usize) -> Result<Self> {
        let mut roles: Vec<Role> = (0..users).map(Role::User).collect();
        roles.extend((0..proxies).map(Role::Proxy));
        roles.push(Role::Server);
        roles.push(Role::Receiver);
        Self::from_roles(&roles)
    }

    /// From the role of every party (index = party id). User and proxy numbers must be `0, 1, …`
    /// in party order.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] unless there are 2 to 8 users (Table 2's gadgets), 1 to
    /// [`reenc::MAX_PROXIES`] proxies, exactly one server and one receiver, numbered in order.
    pub fn from_roles(roles: &[Role]) -> Result<Self> {
        let mut users = Vec::new();
        let mut proxies = Vec::new();
        let (mut servers, mut receivers) = (Vec::new(), Vec::new());
        for (p, r) in roles.iter().enumerate() {
            match *r {
                Role::User(i) if i == users.len() => users.push(p),
                Role::Proxy(j) if j == proxies.len() => proxies.push(p),
                Role::Server => servers.push(p),
                Role::Receiver => receivers.push(p),
                r => {
                    return Err(Error::InvalidParameter(format!(
                        "party {p} is {r:?}: users and proxies must be numbered 0, 1, … in \
                         party order"
                    )));
                }
            }
        }
        if !(2..=8).contains(&users.len()) {
            return Err(Error::InvalidParameter(format!(
                "seed 001 needs 2 to 8 users (Table 2), the layout has {}",
                users.len()
            )));
        }
        if proxies.is_empty() || proxies.len() > reenc::MAX_PROXIES {
            return Err(Error::InvalidParameter(format!(
                "need 1 to {} proxies, the layout has {}",
                reenc::MAX_PROXIES,
                proxies.len()
            )));
        }
        if servers.len() != 1 || receivers.len() != 1 {
            return Err(Error::InvalidParameter(format!(
                "need exactly one server and one receiver, the layout has {} and {}",
                servers.len(),
                receivers.len()
            )));
        }
        Ok(Layout {
            roles: roles.to_vec(),
            users,
            proxies,
            server: servers[0],
            receiver: receivers[0],
        })
    }

    /// From coterie-net's roles of a party config (`user`, `proxy`, `server`, `receiver`), users
    /// and proxies numbered in party order.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for another role, or as [`Layout::from_roles`].
    pub fn from_net_roles(roles: &[coterie_net::Role]) -> Result<Self> {
        let (mut u, mut p) = (0, 0);
        let mut out = Vec::with_capacity(roles.len());
        for (id, r) in roles.iter().enumerate() {
            out.push(match r {
                coterie_net::Role::User => {
                    u += 1;
                    Role::User(u - 1)
                }
                coterie_net::Role::Proxy => {
                    p += 1;
                    Role::Proxy(p - 1)
                }
                coterie_net::Role::Server => Role::Server,
                coterie_net::Role::Receiver => Role::Receiver,
                r => {
                    return Err(Error::InvalidParameter(format!(
                        "party {id} has role '{r}'; seed 001 has users, proxies, a server and a \
                         receiver"
                    )));
                }
            });
        }
        Self::from_roles(&out)
    }

    /// Number of parties.
    pub fn parties(&self) -> usize {
        self.roles.len()
    }

    /// Number of users `k`.
    pub fn users(&self) -> usize {
        self.users.len()
    }

    /// Number of proxies `N`.
    pub fn proxies(&self) -> usize {
        self.proxies.len()
    }

    /// The role of party `p`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a party outside the layout.
    pub fn role(&self, p: PartyId) -> Result<Role> {
        self.roles
            .get(p)
            .copied()
            .ok_or_else(|| Error::InvalidParameter(format!("party {p} of {}", self.roles.len())))
    }

    /// The key id of user `i` (`i + 1`).
    pub fn user_key_id(i: usize) -> u64 {
        i as u64 + 1
    }

    /// The delegatee id of the receiver (`k + 1`, after every user's id).
    pub fn delegatee_id(&self) -> u64 {
        self.users.len() as u64 + 1
    }
}

/// The paper's network settings (seed 001 §7.1, from an AWS US East–West measurement).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaperLink {
    /// 10 Gbit/s, 0.5 ms latency.
    Lan,
    /// 72 Mbit/s, 72 ms latency.
    Wan,
}

impl PaperLink {
    /// Throughput in bits per second.
    pub fn rate_bps(self) -> f64 {
        match self {
            PaperLink::Lan => 10e9,
            PaperLink::Wan => 72e6,
        }
    }

    /// One-way latency in milliseconds.
    pub fn latency_ms(self) -> f64 {
        match self {
            PaperLink::Lan => 0.5,
            PaperLink::Wan => 72.0,
        }
    }
}

/// The paper's communication-time model (seed 001 §7.1): `elements` ring elements of
/// `element_bits` bits (`n·log q`, 1,802,240 at the paper's parameters) sent one after the other,
/// each costing `bits / rate + latency`. The paper's counts are ReKeyGen `N + 1` elements per
/// delegator, ReEnc `k + N`, threshold decryption `2k − 1`.
pub fn paper_comm_ms(elements: u64, element_bits: f64, link: PaperLink) -> f64 {
    elements as f64 * (element_bits / link.rate_bps() * 1e3 + link.latency_ms())
}

/// The parameter set of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamChoice {
    /// [`Params::seed001`]: the paper's `n = 8192`, log q = 220, 128-bit.
    Seed001,
    /// [`Params::insecure_toy_seed001`] at `n = 1024`: **insecure**, for fast tests and demos.
    InsecureToy,
}

impl ParamChoice {
    /// The context.
    ///
    /// # Errors
    /// None in practice (the sets are valid); propagated from [`Context::new`].
    pub fn context(self) -> Result<Context> {
        Context::new(match self {
            ParamChoice::Seed001 => Params::seed001()?,
            ParamChoice::InsecureToy => Params::insecure_toy_seed001(1024)?,
        })
    }
}

/// What every party of a run must agree on, plus its own state directory.
#[derive(Clone, Debug)]
pub struct Config {
    /// Who is who.
    pub layout: Layout,
    /// The parameter set.
    pub params: ParamChoice,
    /// Smudging of partial decryptions and re-encryption shares.
    pub smudging: Smudging,
    /// This party's state directory.
    pub dir: PathBuf,
}

/// Bytes sent and received by one party in one phase (mesh frames; TLS records not counted).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Traffic {
    /// The phase.
    pub phase: String,
    /// Bytes sent.
    pub sent: u64,
    /// Bytes received.
    pub received: u64,
    /// Messages sent.
    pub msgs_sent: u64,
    /// Wall time, milliseconds.
    pub ms: f64,
}

/// What one party did in a step.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// This party's role, as text.
    pub role: String,
    /// Per phase: traffic and time.
    pub phases: Vec<Traffic>,
    /// Human-readable results of checks this party made (empty if it checked nothing).
    pub checked: Vec<String>,
    /// Files written.
    pub wrote: Vec<PathBuf>,
}

struct Meter {
    t: Instant,
    sent: u64,
    received: u64,
    msgs: u64,
}

impl Meter {
    fn start<M: Mesh>(mesh: &M) -> Self {
        let s = mesh.stats();
        Meter {
            t: Instant::now(),
            sent: s.total_sent(),
            received: s.total_received(),
            msgs: s.msgs_sent.iter().sum(),
        }
    }

    fn stop<M: Mesh>(self, mesh: &M, phase: &str, report: &mut Report) {
        let s = mesh.stats();
        report.phases.push(Traffic {
            phase: phase.into(),
            sent: s.total_sent() - self.sent,
            received: s.total_received() - self.received,
            msgs_sent: s.msgs_sent.iter().sum::<u64>() - self.msgs,
            ms: self.t.elapsed().as_secs_f64() * 1e3,
        });
    }
}

/// A network error in `step`, naming the role of the party it is about.
fn net(lay: &Layout, step: &str, e: coterie_net::Error) -> Error {
    let who = e
        .party()
        .and_then(|p| lay.role(p).ok().map(|r| format!(" (party {p} is {r:?})")))
        .unwrap_or_default();
    Error::Protocol(format!("{step}: {e}{who}"))
}

/// A value received from `from` that does not parse: the error names the party and the step.
fn bad(from: PartyId, step: &str, e: Error) -> Error {
    Error::Protocol(format!("{step}: party {from} sent an invalid message: {e}"))
}

// ---------------------------------------------------------------------------------------------
// State files.

#[derive(Serialize, Deserialize)]
struct UserState {
    crs_seed: Seed,
    user: u32,
    #[serde(with = "coterie_base::bytes")]
    sk: Vec<u8>,
    #[serde(with = "coterie_base::bytes")]
    pk: Vec<u8>,
}

impl Drop for UserState {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.sk);
    }
}

#[derive(Serialize, Deserialize)]
struct SecretListState {
    #[serde(with = "coterie_base::bytes::list")]
    items: Vec<Vec<u8>>,
}

impl Drop for SecretListState {
    fn drop(&mut self) {
        for i in &mut self.items {
            zeroize::Zeroize::zeroize(i);
        }
    }
}

#[derive(Serialize, Deserialize)]
struct ServerState {
    crs_seed: Seed,
    #[serde(with = "coterie_base::bytes::list")]
    pks: Vec<Vec<u8>>,
    #[serde(with = "coterie_base::bytes::list")]
    rlks: Vec<Vec<u8>>,
}

coterie_base::versioned! {
    UserState => b"BFVU" v 1,
    SecretListState => b"BFVx" v 1,
    ServerState => b"BFVy" v 1,
}

/// The state files of a party directory (see the module docs).
pub mod files {
    /// A user's keys.
    pub const USER: &str = "user.key";
    /// The receiver's masking keys.
    pub const RECEIVER: &str = "receiver.masking";
    /// A proxy's re-encryption key shares.
    pub const PROXY: &str = "proxy.shares";
    /// The server's copy of the users' public keys.
    pub const SERVER_KEYS: &str = "server.keys";
    /// The server's evaluated ciphertext.
    pub const SERVER_RESULT: &str = "server.result";
}

/// Bound on a state file: every user's keys at the largest gadget (power of two, ℓ ≤ log q rows),
/// generous.
fn file_bound(ctx: &Context, users: usize) -> u64 {
    let element = (ctx.degree() * ctx.params().log_q() as usize).div_ceil(8) + 64;
    ((users + 1) * (4 * ctx.params().log_q() as usize + 8) * element + (1 << 20)) as u64
}

fn write_secret(path: &Path, bytes: Zeroizing<Vec<u8>>) -> Result<()> {
    coterie_base::fsio::write_atomic_private(path, &bytes)?;
    Ok(())
}

fn read(path: &Path, bound: u64) -> Result<Zeroizing<Vec<u8>>> {
    coterie_base::fsio::read_bounded(path, bound)
        .map(Zeroizing::new)
        .map_err(|e| Error::Protocol(format!("state file {}: {e}", path.display())))
}

fn state_err(path: &Path, e: Error) -> Error {
    Error::Protocol(format!("state file {}: {e}", path.display()))
}

// ---------------------------------------------------------------------------------------------
// The demo inputs and the circuit.

/// The **public demo inputs**: user `i`'s plaintext, uniform in `R_t`, expanded from
/// `seed` (so that whoever checks a result can recompute it; see the module docs).
///
/// # Errors
/// None in practice; propagated from the encoder.
pub fn demo_inputs(ctx: &Context, seed: &Seed, users: usize) -> Result<Vec<Plaintext>> {
    let t = plaintext_t(ctx)?;
    (0..users)
        .map(|i| {
            let mut s = *seed;
            s[31] ^= i as u8;
            s[30] ^= 0xA5;
            let mut r = Csprng::insecure_from_seed_for_tests(s);
            let v: Vec<u64> = (0..ctx.degree())
                .map(|_| rand::Rng::next_u64(&mut r) % t)
                .collect();
            Plaintext::encode_coefficients(ctx, &v)
        })
        .collect()
}

/// The evaluated circuit (depth [`DEPTH`]): `y = Σ_i x_i`, then `y ← y·x_{l mod k}` for
/// `l = 0 … 4`, so every product is between a ciphertext under all `k` keys and one user's. The
/// multiplications relinearize on the fly with the per-user grouping; `progress` counts them.
///
/// # Errors
/// From [`mk::add`] and [`mk::mul`] (mismatched ciphertexts, missing keys).
pub fn circuit(cts: &[Ciphertext], keys: &[MkRelinKey], progress: &Progress) -> Result<Ciphertext> {
    let first = cts
        .first()
        .ok_or_else(|| Error::InvalidParameter("the circuit needs inputs".into()))?;
    let mut y = first.clone();
    for c in &cts[1..] {
        y = mk::add(&y, c)?;
    }
    let relin = Relin::OnTheFly {
        keys,
        grouped: true,
    };
    let task = progress.task("circuit (depth 5)", DEPTH as u64);
    for l in 0..DEPTH {
        y = mk::mul(&y, &cts[l % cts.len()], &relin)?;
        task.inc(1);
    }
    task.finish();
    Ok(y)
}

/// [`circuit`] on plaintexts (coefficients mod `t`, naive negacyclic products): the expected
/// result.
///
/// # Errors
/// For an empty input or plaintexts without coefficients.
pub fn circuit_plain(inputs: &[Plaintext], t: u64) -> Result<Vec<u64>> {
    let xs: Vec<&[u64]> = inputs
        .iter()
        .map(Plaintext::coefficients)
        .collect::<Result<_>>()?;
    let first = xs
        .first()
        .ok_or_else(|| Error::InvalidParameter("the circuit needs inputs".into()))?;
    let mut y = first.to_vec();
    for x in &xs[1..] {
        y.iter_mut()
            .zip(x.iter())
            .for_each(|(a, b)| *a = (*a + b) % t);
    }
    for l in 0..DEPTH {
        y = coterie_math::ntt::negacyclic_mul_naive(&y, xs[l % xs.len()], t);
    }
    Ok(y)
}

/// The scalar plaintext modulus `t` (seed 001's sets have one).
fn plaintext_t(ctx: &Context) -> Result<u64> {
    ctx.plaintext_modulus()
        .scalar()
        .ok_or_else(|| Error::Unsupported("seed 001 uses a scalar plaintext modulus t".into()))
}

fn check_plain(who: &str, got: &Plaintext, want: &[u64]) -> Result<String> {
    let g = got.coefficients()?;
    if g != want {
        let bad = g.iter().zip(want).filter(|(a, b)| a != b).count();
        return Err(Error::Protocol(format!(
            "{who}: the decrypted result differs from the expected one in {bad} of {} \
             coefficients",
            want.len()
        )));
    }
    Ok(format!(
        "{who}: result correct ({} coefficients, first {:?})",
        want.len(),
        &want[..want.len().min(4)]
    ))
}

// ---------------------------------------------------------------------------------------------
// Steps 1 and 2: key generation and ReKeyGen.

/// Step 1 at this party (see the module docs): CRS coin toss, every user's key generation, the
/// public keys to the server; writes this party's state under `cfg.dir`.
///
/// # Errors
/// [`Error::Protocol`] naming the party and step for a network failure, an invalid message or
/// a file error; [`Error::InvalidParameter`] for a mesh of another size than the layout.
pub async fn keygen<M: Mesh>(mesh: &mut M, cfg: &Config, progress: &Progress) -> Result<Report> {
    let (ctx, role, mut report) = begin(mesh, cfg)?;
    let lay = &cfg.layout;
    // Keys are made once: a second run would replace them and orphan every share made for them.
    for file in [files::USER, files::SERVER_KEYS] {
        let path = cfg.dir.join(file);
        if path.exists() {
            return Err(Error::Protocol(format!(
                "key generation: {} exists; keys are made once (remove the directory to start \
                 over)",
                path.display()
            )));
        }
    }
    std::fs::create_dir_all(&cfg.dir)
        .map_err(|e| state_err(&cfg.dir, Error::Base(e.to_string())))?;
    let mut rng = Csprng::new();

    // The CRS seed: every party commits to a random 32 bytes, then all open; the XOR.
    let m = Meter::start(mesh);
    let mine: Seed = seed_from(&mut rng);
    let all: Vec<Seed> =
        coterie_net::commit::commit_open_all(mesh, "coterie-bfv/seed001/crs", &mine)
            .await
            .map_err(|e| net(lay, "CRS coin toss", e))?;
    let mut crs_seed = [0u8; 32];
    for s in &all {
        crs_seed.iter_mut().zip(s).for_each(|(a, b)| *a ^= b);
    }
    m.stop(mesh, "CRS coin toss", &mut report);
    let decomposition = paper_decomposition(lay.users())?;
    let task = progress.task("key generation", 1);

    match role {
        Role::User(i) => {
            let id = Layout::user_key_id(i);
            let crs = MkCrs::new(&ctx, &crs_seed, decomposition)?;
            let sk = SecretKey::generate(&ctx, &mut rng);
            let pk = sk.public_key(&mut rng);
            let rlk = MkRelinKey::generate(&sk, id, &crs, &mut rng)?;
            let m = Meter::start(mesh);
            mesh.send_tagged(lay.server, TAG_USER_KEYS, &(pk.to_bytes(), rlk.to_bytes()))
                .await
                .map_err(|e| net(lay, "sending the public keys", e))?;
            m.stop(mesh, "KeyGen: public keys to the server", &mut report);
            let path = cfg.dir.join(files::USER);
            let state = UserState {
                crs_seed,
                user: i as u32,
                sk: sk.to_bytes(),
                pk: pk.to_bytes(),
            };
            write_secret(&path, Zeroizing::new(encode(&state)))?;
            report.wrote.push(path);
        }
        Role::Receiver | Role::Proxy(_) => {}
        Role::Server => {
            let m = Meter::start(mesh);
            let (mut pks, mut rlks) = (Vec::new(), Vec::new());
            for i in 0..lay.users() {
                let from = lay.users[i];
                let (pk, rlk): (Vec<u8>, Vec<u8>) = mesh
                    .recv_tagged(from, TAG_USER_KEYS)
                    .await
                    .map_err(|e| net(lay, "receiving a user's public keys", e))?;
                PublicKey::from_bytes(&ctx, &pk).map_err(|e| bad(from, "KeyGen", e))?;
                let key = MkRelinKey::from_bytes(&ctx, &rlk).map_err(|e| bad(from, "KeyGen", e))?;
                if key.id() != Layout::user_key_id(i)
                    || key.crs_seed() != &crs_seed
                    || key.decomposition() != decomposition
                {
                    return Err(Error::Protocol(format!(
                        "KeyGen: party {from} sent a relinearization key of user {} over another \
                         CRS or gadget",
                        key.id()
                    )));
                }
                pks.push(pk);
                rlks.push(rlk);
            }
            m.stop(mesh, "KeyGen: public keys from the users", &mut report);
            let path = cfg.dir.join(files::SERVER_KEYS);
            coterie_base::fsio::write_atomic(
                &path,
                &encode(&ServerState {
                    crs_seed,
                    pks,
                    rlks,
                }),
            )?;
            report.wrote.push(path);
        }
    }
    task.inc(1);
    task.finish();
    Ok(report)
}

/// Step 2 at this party (ReKeyGen, seed 001 Algorithm 1, for the layout's receiver as the
/// delegatee): the receiver samples a masking key per user and sends it (ReKeyGen 1); each user
/// splits `rk = s_i − r_{i→D}` into one share per proxy and sends them (ReKeyGen 2), erasing `r`
/// and `rk`; the proxies and the receiver store what they got. Needs the users' keys of
/// [`keygen`].
///
/// # Errors
/// [`Error::Protocol`] naming the party and step for a network failure, an invalid message or
/// a file error.
pub async fn rekeygen<M: Mesh>(mesh: &mut M, cfg: &Config, progress: &Progress) -> Result<Report> {
    let (ctx, role, mut report) = begin(mesh, cfg)?;
    let lay = &cfg.layout;
    std::fs::create_dir_all(&cfg.dir)
        .map_err(|e| state_err(&cfg.dir, Error::Base(e.to_string())))?;
    let mut rng = Csprng::new();
    let delegatee = lay.delegatee_id();
    let task = progress.task("ReKeyGen", 1);
    match role {
        Role::User(i) => {
            let (sk, _, _) = load_user(&ctx, cfg, i)?;
            let id = Layout::user_key_id(i);
            let m = Meter::start(mesh);
            let mk_bytes = Zeroizing::new(
                mesh.recv_bytes(lay.receiver, TAG_MASK)
                    .await
                    .map_err(|e| net(lay, "receiving the masking key", e))?,
            );
            let mask = MaskingKey::from_bytes(&ctx, &mk_bytes)
                .map_err(|e| bad(lay.receiver, "ReKeyGen 1", e))?;
            if mask.delegator() != id || mask.delegatee() != delegatee {
                return Err(Error::Protocol(format!(
                    "ReKeyGen 1: party {} sent a masking key for {} → {}, not {id} → {delegatee}",
                    lay.receiver,
                    mask.delegator(),
                    mask.delegatee()
                )));
            }
            let shares = reenc::rekey_shares(&sk, &mask, lay.proxies(), &mut rng)?;
            drop(mask);
            for (j, s) in shares.iter().enumerate() {
                let bytes = Zeroizing::new(s.to_bytes());
                mesh.send_bytes(lay.proxies[j], TAG_RK_SHARE, &bytes)
                    .await
                    .map_err(|e| net(lay, "sending a re-encryption key share", e))?;
            }
            drop(shares);
            m.stop(mesh, "ReKeyGen: shares to the proxies", &mut report);
        }
        Role::Receiver => {
            let m = Meter::start(mesh);
            let mut items = Vec::with_capacity(lay.users());
            for i in 0..lay.users() {
                let mask = MaskingKey::sample(&ctx, Layout::user_key_id(i), delegatee, &mut rng);
                let bytes = mask.to_bytes();
                mesh.send_bytes(lay.users[i], TAG_MASK, &bytes)
                    .await
                    .map_err(|e| net(lay, "sending a masking key", e))?;
                items.push(bytes);
            }
            m.stop(mesh, "ReKeyGen: masking keys to the users", &mut report);
            let path = cfg.dir.join(files::RECEIVER);
            write_secret(&path, Zeroizing::new(encode(&SecretListState { items })))?;
            report.wrote.push(path);
        }
        Role::Proxy(j) => {
            let m = Meter::start(mesh);
            let mut items = Vec::with_capacity(lay.users());
            for i in 0..lay.users() {
                let from = lay.users[i];
                let bytes = mesh
                    .recv_bytes(from, TAG_RK_SHARE)
                    .await
                    .map_err(|e| net(lay, "receiving a re-encryption key share", e))?;
                let bytes = Zeroizing::new(bytes);
                let s =
                    ReKeyShare::from_bytes(&ctx, &bytes).map_err(|e| bad(from, "ReKeyGen 2", e))?;
                if s.delegator() != Layout::user_key_id(i)
                    || s.delegatee() != delegatee
                    || s.proxy() != j
                    || s.proxies() != lay.proxies()
                {
                    return Err(Error::Protocol(format!(
                        "ReKeyGen 2: party {from} sent the share of {} → {} for proxy {} of {}, \
                         not of user {} → {delegatee} for proxy {j} of {}",
                        s.delegator(),
                        s.delegatee(),
                        s.proxy(),
                        s.proxies(),
                        Layout::user_key_id(i),
                        lay.proxies()
                    )));
                }
                items.push(bytes.to_vec());
            }
            m.stop(mesh, "ReKeyGen: shares from the users", &mut report);
            let path = cfg.dir.join(files::PROXY);
            write_secret(&path, Zeroizing::new(encode(&SecretListState { items })))?;
            report.wrote.push(path);
        }
        Role::Server => {}
    }
    task.inc(1);
    task.finish();
    Ok(report)
}

/// What every step does first: the context, this party's role and an empty report (checking
/// that the mesh has the layout's size).
fn begin<M: Mesh>(mesh: &M, cfg: &Config) -> Result<(Context, Role, Report)> {
    let ctx = cfg.params.context()?;
    check_mesh(mesh, &cfg.layout)?;
    let role = cfg.layout.role(mesh.id())?;
    let report = Report {
        role: format!("{role:?}"),
        ..Report::default()
    };
    Ok((ctx, role, report))
}

fn check_mesh<M: Mesh>(mesh: &M, lay: &Layout) -> Result<()> {
    if mesh.n() != lay.parties() {
        return Err(Error::InvalidParameter(format!(
            "the mesh has {} parties, the layout {}",
            mesh.n(),
            lay.parties()
        )));
    }
    Ok(())
}

fn load_user(ctx: &Context, cfg: &Config, i: usize) -> Result<(SecretKey, PublicKey, usize)> {
    let path = cfg.dir.join(files::USER);
    let b = read(&path, file_bound(ctx, 1))?;
    let st: UserState = decode(&b, b.len()).map_err(|e| state_err(&path, e))?;
    if st.user as usize != i {
        return Err(state_err(
            &path,
            Error::Mismatch(format!("the keys of user {}, not of user {i}", st.user)),
        ));
    }
    let sk = SecretKey::from_bytes(ctx, &st.sk).map_err(|e| state_err(&path, e))?;
    let pk = PublicKey::from_bytes(ctx, &st.pk).map_err(|e| state_err(&path, e))?;
    Ok((sk, pk, st.user as usize))
}

fn load_server(ctx: &Context, cfg: &Config) -> Result<(Vec<MkRelinKey>, Seed)> {
    let path = cfg.dir.join(files::SERVER_KEYS);
    let b = read(&path, file_bound(ctx, cfg.layout.users()))?;
    let st: ServerState = decode(&b, b.len()).map_err(|e| state_err(&path, e))?;
    let keys = st
        .rlks
        .iter()
        .map(|k| MkRelinKey::from_bytes(ctx, k))
        .collect::<Result<Vec<_>>>()
        .map_err(|e| state_err(&path, e))?;
    if keys.len() != cfg.layout.users() {
        return Err(state_err(
            &path,
            Error::Malformed(format!(
                "{} users' keys for {} users",
                keys.len(),
                cfg.layout.users()
            )),
        ));
    }
    Ok((keys, st.crs_seed))
}

fn load_secret_list(path: &Path, bound: u64) -> Result<SecretListState> {
    let b = read(path, bound)?;
    decode(&b, b.len()).map_err(|e| state_err(path, e))
}

// ---------------------------------------------------------------------------------------------
// Step 3: encryption and evaluation; step 4: threshold decryption.

/// Step 3 at this party (see the module docs): the users encrypt the [`demo_inputs`] of
/// `input_seed` and send them to the server, which evaluates [`circuit`] and stores the result.
///
/// # Errors
/// [`Error::Protocol`] naming the party and step for a network failure, an invalid message, a
/// missing or corrupt state file.
pub async fn evaluate<M: Mesh>(
    mesh: &mut M,
    cfg: &Config,
    input_seed: &Seed,
    progress: &Progress,
) -> Result<Report> {
    let (ctx, role, mut report) = begin(mesh, cfg)?;
    let lay = &cfg.layout;
    let mut rng = Csprng::new();
    match role {
        Role::User(i) => {
            let (_, pk, _) = load_user(&ctx, cfg, i)?;
            let id = Layout::user_key_id(i);
            let inputs = demo_inputs(&ctx, input_seed, lay.users())?;
            let m = Meter::start(mesh);
            let ct = mk::encrypt(&pk, id, &inputs[i], &mut rng)?;
            mesh.send_bytes(lay.server, TAG_INPUT, &ct.to_bytes())
                .await
                .map_err(|e| net(lay, "sending the input", e))?;
            m.stop(mesh, "Encrypt: input to the server", &mut report);
        }
        Role::Server => {
            let (keys, _) = load_server(&ctx, cfg)?;
            let m = Meter::start(mesh);
            let mut cts = Vec::with_capacity(lay.users());
            for (i, &from) in lay.users.iter().enumerate() {
                let b = mesh
                    .recv_bytes(from, TAG_INPUT)
                    .await
                    .map_err(|e| net(lay, "receiving an input", e))?;
                let ct = Ciphertext::from_bytes(&ctx, &b).map_err(|e| bad(from, "Encrypt", e))?;
                if mk::union_ids(&ct, &ct)? != vec![Layout::user_key_id(i)] || ct.len() != 2 {
                    return Err(Error::Protocol(format!(
                        "Encrypt: party {from} sent a ciphertext that is not a fresh one of user {}",
                        Layout::user_key_id(i)
                    )));
                }
                cts.push(ct);
            }
            m.stop(mesh, "Encrypt: inputs from the users", &mut report);
            let t = Instant::now();
            let y = circuit(&cts, &keys, progress)?;
            report.phases.push(Traffic {
                phase: format!("evaluation (depth {DEPTH}, {} users)", lay.users()),
                ms: t.elapsed().as_secs_f64() * 1e3,
                ..Traffic::default()
            });
            let path = cfg.dir.join(files::SERVER_RESULT);
            coterie_base::fsio::write_atomic(&path, &y.to_bytes())?;
            report.wrote.push(path);
        }
        Role::Proxy(_) | Role::Receiver => {}
    }
    Ok(report)
}

/// Step 4 at this party (see the module docs): threshold decryption of the server's stored
/// result to the first user (the merger), who checks it against the [`circuit_plain`] of the
/// [`demo_inputs`] of `input_seed`. The server sends each user its [`DecryptionRequest`] (`c_i`;
/// the merger's also `c_0`), every other user sends its smudged partial decryption to the merger.
///
/// # Errors
/// [`Error::Protocol`] naming the party and step for a network failure, an invalid message, a
/// missing or corrupt state file, or a wrong result.
pub async fn decrypt<M: Mesh>(
    mesh: &mut M,
    cfg: &Config,
    input_seed: &Seed,
    progress: &Progress,
) -> Result<Report> {
    let (ctx, role, mut report) = begin(mesh, cfg)?;
    let (lay, me) = (&cfg.layout, mesh.id());
    let mut rng = Csprng::new();
    let merger = lay.users[0];
    match role {
        Role::User(i) => {
            let (sk, _, _) = load_user(&ctx, cfg, i)?;
            let id = Layout::user_key_id(i);
            let task = progress.task("threshold decryption", 1);
            let m = Meter::start(mesh);
            let b = mesh
                .recv_bytes(lay.server, TAG_DEC_REQUEST)
                .await
                .map_err(|e| net(lay, "receiving the decryption request", e))?;
            let req = DecryptionRequest::from_bytes(&ctx, &b)
                .map_err(|e| bad(lay.server, "threshold decryption", e))?;
            if req.id() != id || req.has_c0() != (me == merger) {
                return Err(Error::Protocol(format!(
                    "threshold decryption: party {} sent the request of user {} (with c_0: {})",
                    lay.server,
                    req.id(),
                    req.has_c0()
                )));
            }
            let partial = mk::part_dec_request(&sk, &req, &cfg.smudging, &mut rng)?;
            if me != merger {
                mesh.send_bytes(merger, TAG_PARTIAL, &partial.to_bytes())
                    .await
                    .map_err(|e| net(lay, "sending the partial decryption", e))?;
                m.stop(
                    mesh,
                    "threshold decryption: partial to the merger",
                    &mut report,
                );
            } else {
                let mut partials = vec![partial];
                for (u, &from) in lay.users.iter().enumerate().skip(1) {
                    let b = mesh
                        .recv_bytes(from, TAG_PARTIAL)
                        .await
                        .map_err(|e| net(lay, "receiving a partial decryption", e))?;
                    let p = PartialDecryption::from_bytes(&ctx, &b)
                        .map_err(|e| bad(from, "threshold decryption", e))?;
                    if p.id() != Layout::user_key_id(u) {
                        return Err(Error::Protocol(format!(
                            "threshold decryption: party {from} sent the partial decryption of \
                             user {}",
                            p.id()
                        )));
                    }
                    partials.push(p);
                }
                let pt = mk::merge_request(&req, &partials)?;
                m.stop(mesh, "threshold decryption: merge", &mut report);
                let inputs = demo_inputs(&ctx, input_seed, lay.users())?;
                let want = circuit_plain(&inputs, plaintext_t(&ctx)?)?;
                report
                    .checked
                    .push(check_plain("threshold decryption", &pt, &want)?);
            }
            task.inc(1);
            task.finish();
        }
        Role::Server => {
            let path = cfg.dir.join(files::SERVER_RESULT);
            let b = read(&path, file_bound(&ctx, lay.users()))?;
            let y = Ciphertext::from_bytes(&ctx, &b).map_err(|e| state_err(&path, e))?;
            let m = Meter::start(mesh);
            for (i, &to) in lay.users.iter().enumerate() {
                let req = DecryptionRequest::new(&y, Layout::user_key_id(i), to == merger)?;
                mesh.send_bytes(to, TAG_DEC_REQUEST, &req.to_bytes())
                    .await
                    .map_err(|e| net(lay, "sending a decryption request", e))?;
            }
            m.stop(
                mesh,
                "threshold decryption: requests to the users",
                &mut report,
            );
        }
        Role::Proxy(_) | Role::Receiver => {}
    }
    Ok(report)
}

// ---------------------------------------------------------------------------------------------
// Step 5: re-encryption.

/// Step 5 at this party (see the module docs): the server sends its stored result to the
/// proxies, each proxy sends its smudged share of `c_0'` to the receiver (the first proxy also
/// forwards the ciphertext), the receiver combines, decrypts with its masking keys and checks
/// against the [`circuit_plain`] of the [`demo_inputs`] of `input_seed`. A proxy reports one unit
/// of its `re-encryption` progress task when it has the ciphertext and another when its share is
/// sent.
///
/// # Errors
/// [`Error::Protocol`] naming the party and step for a network failure (a proxy that crashed
/// or timed out is named by the receiver's error), an invalid message, a missing or corrupt
/// state file, or a wrong result.
pub async fn reencrypt<M: Mesh>(
    mesh: &mut M,
    cfg: &Config,
    input_seed: &Seed,
    progress: &Progress,
) -> Result<Report> {
    let (ctx, role, mut report) = begin(mesh, cfg)?;
    let lay = &cfg.layout;
    let mut rng = Csprng::new();
    let delegatee = lay.delegatee_id();
    match role {
        Role::Server => {
            let path = cfg.dir.join(files::SERVER_RESULT);
            let b = read(&path, file_bound(&ctx, lay.users()))?;
            let y = Ciphertext::from_bytes(&ctx, &b).map_err(|e| state_err(&path, e))?;
            let m = Meter::start(mesh);
            for &p in &lay.proxies {
                mesh.send_bytes(p, TAG_REENC_CT, &b)
                    .await
                    .map_err(|e| net(lay, "sending the ciphertext to a proxy", e))?;
            }
            drop(y);
            m.stop(mesh, "ReEnc: ciphertext to the proxies", &mut report);
        }
        Role::Proxy(j) => {
            let path = cfg.dir.join(files::PROXY);
            let st = load_secret_list(&path, file_bound(&ctx, lay.users()))?;
            let shares = st
                .items
                .iter()
                .map(|b| ReKeyShare::from_bytes(&ctx, b))
                .collect::<Result<Vec<_>>>()
                .map_err(|e| state_err(&path, e))?;
            let task = progress.task("re-encryption", 2);
            let m = Meter::start(mesh);
            let b = mesh
                .recv_bytes(lay.server, TAG_REENC_CT)
                .await
                .map_err(|e| net(lay, "receiving the ciphertext", e))?;
            let ct = Ciphertext::from_bytes(&ctx, &b).map_err(|e| bad(lay.server, "ReEnc", e))?;
            task.inc(1);
            let share = reenc::reenc_share(j, delegatee, &shares, &ct, &cfg.smudging, &mut rng)?;
            mesh.send_bytes(lay.receiver, TAG_REENC_SHARE, &share.to_bytes())
                .await
                .map_err(|e| net(lay, "sending the re-encryption share", e))?;
            if j == 0 {
                mesh.send_bytes(lay.receiver, TAG_REENC_FORWARD, &b)
                    .await
                    .map_err(|e| net(lay, "forwarding the ciphertext", e))?;
            }
            task.inc(1);
            task.finish();
            m.stop(mesh, "ReEnc: share to the receiver", &mut report);
        }
        Role::Receiver => {
            let path = cfg.dir.join(files::RECEIVER);
            let st = load_secret_list(&path, file_bound(&ctx, lay.users()))?;
            let masks = st
                .items
                .iter()
                .map(|b| MaskingKey::from_bytes(&ctx, b))
                .collect::<Result<Vec<_>>>()
                .map_err(|e| state_err(&path, e))?;
            let m = Meter::start(mesh);
            let mut shares = Vec::with_capacity(lay.proxies());
            for (j, &from) in lay.proxies.iter().enumerate() {
                let b = mesh.recv_bytes(from, TAG_REENC_SHARE).await.map_err(|e| {
                    net(
                        lay,
                        &format!(
                            "ReEnc: waiting for the share of proxy {j} (party {from}); \
                                 re-run the re-encryption when every proxy is up"
                        ),
                        e,
                    )
                })?;
                let s = ReEncShare::from_bytes(&ctx, &b).map_err(|e| bad(from, "ReEnc", e))?;
                if s.proxy() != j {
                    return Err(Error::Protocol(format!(
                        "ReEnc: party {from} (proxy {j}) sent the share of proxy {}",
                        s.proxy()
                    )));
                }
                shares.push(s);
            }
            let b = mesh
                .recv_bytes(lay.proxies[0], TAG_REENC_FORWARD)
                .await
                .map_err(|e| net(lay, "receiving the forwarded ciphertext", e))?;
            let ct =
                Ciphertext::from_bytes(&ctx, &b).map_err(|e| bad(lay.proxies[0], "ReEnc", e))?;
            let rct = reenc::reenc_combine(&ct, &shares)?;
            let pt = reenc::decrypt_reencrypted(&masks, &rct)?;
            m.stop(mesh, "ReEnc: combine and decrypt", &mut report);
            let inputs = demo_inputs(&ctx, input_seed, lay.users())?;
            let want = circuit_plain(&inputs, plaintext_t(&ctx)?)?;
            report
                .checked
                .push(check_plain("re-encryption", &pt, &want)?);
        }
        Role::User(_) => {}
    }
    Ok(report)
}
