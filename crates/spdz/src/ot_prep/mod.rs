//! SPDZ_2k preprocessing by oblivious transfer ([`OtPrep`]), for any number of parties, secure
//! with abort against an actively malicious dishonest majority: MAC key, triples, authenticated
//! random values, input masks and random bits.
//!
//! In short: Chou–Orlandi base OTs ([`crate::ot`]) set up KOS OT extension and COPE between
//! every ordered pair of parties; triples come from Gilboa products on KOS correlated OTs
//! ([`triples`](OtPrep::triples)), combined over `τ = 2(k+s) + 2σ` random bits against
//! selective failure ([`combine_width`]), authenticated by COPE ([`OtPrep::authenticate`],
//! which also serves other producers) and checked by the SPDZ_2k sacrifice and MAC check;
//! random bits come from square roots in `Z_{2^{k+2}}` (one triple per bit, `roots`; for
//! `Z_{2^64}` with two bits less MAC slack and a lift), or for `k ≥ 126` are XORs of input bits,
//! the result checked to be a bit (`n` triples per bit).
//! The OT extension is KOS or, by default, SoftSpokenOT
//! ([`OtExtension`], chosen by [`OtPrep::setup_with`]) with the same correlation and check;
//! with SoftSpokenOT, COPE runs in digits of the MAC key share ([`crate::cope`]).
//! Aborts name their check: `kos-consistency` or `softspoken-consistency`,
//! `triple-sacrifice`, `authentication-mac-check`, `random-bit-input`, `random-bit-mac-check`,
//! `random-bit-square`.
//!
//! The protocol step by step, its parameters and its security argument are in
//! `docs/spdz-ot-security.md` at the root of the repository.

// Loops over party ids index several per-party vectors at once; ranges read better there.
#![allow(clippy::needless_range_loop)]

mod auth;
mod lanes;
mod roots;
mod triples;

pub use lanes::{OtLanes, abort_mesh, abort_meshes};

use coterie_base::progress::{Progress, ProgressTask};
use coterie_math::prg::Csprng;
use coterie_net::commit::commit_open_all;
use coterie_net::frame::BytesPayload;
use coterie_net::{Mesh, PartyId};
use curve25519_dalek::ristretto::CompressedRistretto;
use rand::Rng;
use serde::Serialize;
use serde::de::DeserializeOwned;
use zeroize::Zeroize;

use crate::cope::{self, CopePunctured, CopeTrees};
use crate::kind::Kind;
use crate::ot::{self, BaseOtSender, Seed};
use crate::prep::{Counts, Preprocessing, VecPrep};
use crate::producer::{Order, Producer, check_order};
use crate::ring::{Ring, Z2k};
use crate::softspoken::{self, SsReceiverKeys, SsSenderKeys};
use crate::wire::{open_ot, open_ot_bytes, ot_bytes_header, seal_ot};
use crate::{Error, Result};

pub(crate) const TAG_BASE_A: u32 = 0x5D21_0001;
pub(crate) const TAG_BASE_B: u32 = 0x5D21_0002;
pub(crate) const TAG_KOS_U: u32 = 0x5D21_0003;
pub(crate) const TAG_KOS_SEED: u32 = 0x5D21_0004;
pub(crate) const TAG_KOS_RESP: u32 = 0x5D21_0005;
pub(crate) const TAG_GILBOA: u32 = 0x5D21_0006;
pub(crate) const TAG_COPE: u32 = 0x5D21_0007;
pub(crate) const TAG_SS_SETUP: u32 = 0x5D21_0008;
pub(crate) const TAG_SS_U: u32 = 0x5D21_0009;

/// The correlated-OT extension under the Gilboa products of [`OtPrep`].
///
/// Both give the same correlation (rows `q_j = t_j ⊕ x_j·Δ`, `Δ ∈ {0,1}^128`) from the same 128
/// base OTs per ordered pair, checked by the same KOS consistency check; they differ in traffic
/// and work per OT:
///
/// * [`OtExtension::Kos`]: KOS (Keller–Orsini–Scholl, CRYPTO 2015), 128 bits sent per OT,
///   256 PRG outputs of `m` bits per extension of `m` OTs; abort check `kos-consistency`.
/// * [`OtExtension::SoftSpoken`]: SoftSpokenOT (Roy, CRYPTO 2022) with block size `k`
///   ([`crate::softspoken`]), `128/k` bits sent per OT, `2·2^k·128/k` PRG outputs (both sides
///   together; a GGM-tree setup of `128·2` 16-byte corrections once per ordered pair); abort
///   check `softspoken-consistency`.
///
/// Measured with `crates/spdz/examples/ot_ext_bench.rs` (2 parties in one process over the
/// in-memory mesh, Z_{2^64} with `s = 64`, 2,048 triples in batches of 1,024, median of 3
/// runs, `--profile ci`, a machine with 2 cores shared with other builds, so times are ±20%):
/// bytes sent per triple by one party (mesh byte counter), triples/s (wall clock) and CPU
/// time per triple of both parties together (setup included):
///
/// | extension        | bytes/triple | vs Kos | triples/s | CPU µs/triple |
/// |------------------|-------------:|-------:|----------:|--------------:|
/// | Kos              |       16,185 |  1.000 |     2,398 |           454 |
/// | SoftSpoken k = 2 |       13,111 |  0.810 |     3,071 |           353 |
/// | SoftSpoken k = 4 |       11,574 |  0.715 |     2,922 |           366 |
/// | SoftSpoken k = 8 |       10,806 |  0.668 |     1,386 |           765 |
///
/// Those bytes were with bit-wise COPE. With SoftSpokenOT, COPE now runs in digits of `p = k`
/// bits ([`crate::cope`]); the same example on a quieter machine (2 runs of a median of 3,
/// `bench/results/spdz-cope-digits-ab-2026-11-27.txt`; CPU µs per triple, the previous build
/// against this one): KOS 16,185 bytes, 169–177 µs (unchanged); `k = 2` 11,191 bytes,
/// 145–161 µs (was 163–166); **`k = 4` 8,694 bytes, 164–173 µs (was 11,574 bytes,
/// 169–173 µs)**; `k = 8` 7,445 bytes, 483–485 µs (was 337–342: `2^8` AES blocks per digit
/// and value).
///
/// Since then the leaf expansions run in fused VAES-512 kernels where the CPU has them
/// (`crates/spdz/src/vaes.rs`: SoftSpokenOT's block sums and COPE's digit sums, four leaves per AES
/// instruction) and the benches and `coterie` keep freed buffers in the process
/// (`coterie_math::buffers::keep_freed_heap`). The same example, 2 runs of a median of 5
/// (`bench/results/spdz-ot-ext-cpu-2026-11-27.txt`), CPU µs per triple: KOS 151–157, `k = 2`
/// 139, **`k = 4` 134–137**, `k = 8` 217–220; alternated with the previous binary under some
/// load (`spdz-session-ab-2026-11-27.txt`): `k = 4` 169 → 155, `k = 8` 470–492 → 234–238.
///
/// [`OtPrep::setup`] uses [`DEFAULT_OT_EXTENSION`] = SoftSpoken `k = 4`: it cuts the
/// extension's 6,144 bytes per triple to 1,536 and COPE's 3,860 to 980 (the total by 46%
/// against KOS with bit-wise COPE; the Gilboa corrections, 6,144 bytes, are untouched) for less
/// CPU than KOS here. `k = 8` saves another 1,249 bytes (14%) for about 1.6x the CPU time: it
/// makes more triples than `k = 4` where the link, not the CPU, is the limit (1.15x at 100
/// Mbit/s, equal at 300, 0.7–0.8x at 1 Gbit/s with two parties on this 2-core machine;
/// BENCHMARKS.md), so it is a choice (`coterie party … spdz-prep-ot --ot-ext ss8`), not the
/// default. `k = 2` is about as fast as `k = 4` but sends 2,497 bytes more per triple.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtExtension {
    /// KOS OT extension.
    Kos,
    /// SoftSpokenOT with block size `k` (`k` divides 128, `1 ≤ k ≤ 8`).
    SoftSpoken {
        /// The block size: `128/k` bits are sent per OT.
        k: u32,
    },
}

/// The extension [`OtPrep::setup`] uses (see [`OtExtension`] for the measurements behind it).
pub const DEFAULT_OT_EXTENSION: OtExtension = OtExtension::SoftSpoken { k: 4 };

impl Default for OtExtension {
    fn default() -> Self {
        DEFAULT_OT_EXTENSION
    }
}

/// The names the CLI and the benches use: `kos`, or `ss<k>` for SoftSpokenOT with block size
/// `k` (`ss4` is the default).
///
/// ```
/// use coterie_spdz::ot_prep::OtExtension;
/// assert_eq!("ss8".parse::<OtExtension>().unwrap(), OtExtension::SoftSpoken { k: 8 });
/// assert_eq!("kos".parse::<OtExtension>().unwrap().to_string(), "kos");
/// assert!("ss3".parse::<OtExtension>().is_err()); // 3 does not divide 128
/// ```
impl std::str::FromStr for OtExtension {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        if s == "kos" {
            return Ok(OtExtension::Kos);
        }
        let k: u32 = s
            .strip_prefix("ss")
            .and_then(|k| k.parse().ok())
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "OT extension {s:?}: kos, or ss<k> for SoftSpokenOT with block size k (ss4)"
                ))
            })?;
        softspoken::check_block_size(k)?;
        Ok(OtExtension::SoftSpoken { k })
    }
}

impl std::fmt::Display for OtExtension {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OtExtension::Kos => write!(f, "kos"),
            OtExtension::SoftSpoken { k } => write!(f, "ss{k}"),
        }
    }
}

impl OtExtension {
    /// The number that identifies this extension in the setup messages: 0 for KOS, `k` for
    /// SoftSpokenOT with block size `k`.
    pub fn code(&self) -> u32 {
        match self {
            OtExtension::Kos => 0,
            OtExtension::SoftSpoken { k } => *k,
        }
    }

    /// The name of this extension's consistency check, as aborts report it.
    pub fn check_name(&self) -> &'static str {
        match self {
            OtExtension::Kos => "kos-consistency",
            OtExtension::SoftSpoken { .. } => "softspoken-consistency",
        }
    }
}

/// Largest number of triples produced in one extension (bounds message sizes: the KOS matrix
/// and the Gilboa corrections are each about 6 KB per triple per peer for `k = s = 64`, so a
/// batch sends two messages of about 6.3 MB to each peer, well below the default frame limit).
pub const MAX_TRIPLE_BATCH: usize = 1024;

/// Statistical security `σ` of the combine step (an adversary's advantage from selective
/// failure on the Gilboa OTs is at most `2^{-σ-1}` per triple; see the module docs).
pub const COMBINE_SIGMA: u32 = 64;

/// The number `τ` of random bits (one OT each) combined into one triple's `(a, â)`:
/// `τ = 2(k+s) + 2σ` (384 for `k = s = 64`; see the module docs for the argument).
pub fn combine_width(ring: &Z2k) -> usize {
    (2 * (ring.k() + ring.s()) + 2 * COMBINE_SIGMA) as usize
}

struct PairState {
    /// SoftSpokenOT trees toward this peer (this party the extension receiver), if used.
    ss_recv: Option<SsReceiverKeys>,
    /// SoftSpokenOT punctured trees from this peer (this party the extension sender), if used.
    ss_send: Option<SsSenderKeys>,
    kos_recv_keys: Vec<(Seed, Seed)>,
    kos_delta: u128,
    kos_send_keys: Vec<Seed>,
    cope_send_keys: Vec<(Seed, Seed)>,
    cope_recv_keys: Vec<Seed>,
    /// With SoftSpokenOT: COPE in digits toward this peer (this party the value holder).
    cope_trees: Option<CopeTrees>,
    /// With SoftSpokenOT: COPE in digits from this peer (this party the key holder).
    cope_punct: Option<CopePunctured>,
}

impl Drop for PairState {
    fn drop(&mut self) {
        self.kos_recv_keys.zeroize();
        self.kos_delta.zeroize();
        self.kos_send_keys.zeroize();
        self.cope_send_keys.zeroize();
        self.cope_recv_keys.zeroize();
    }
}

/// Sends this party's message to every peer (`out[j]`, already an envelope) and receives one
/// from every peer, all with `tag`.
async fn exchange_pairwise<M: Mesh>(
    mesh: &mut M,
    tag: u32,
    out: Vec<Option<Vec<u8>>>,
) -> Result<Vec<Option<Vec<u8>>>> {
    let me = mesh.id();
    for (j, m) in out.iter().enumerate() {
        if j != me {
            let m = m
                .as_ref()
                .ok_or_else(|| Error::Invalid("pairwise: missing message".into()))?;
            mesh.send_bytes(j, tag, m).await?;
        }
    }
    let mut res = Vec::with_capacity(out.len());
    for j in 0..out.len() {
        res.push(if j == me {
            None
        } else {
            Some(mesh.recv_bytes(j, tag).await?)
        });
    }
    Ok(res)
}

/// One typed message to and from every peer, each in an OT envelope of at most `max` payload
/// bytes.
async fn pairwise<M: Mesh, T: Serialize + DeserializeOwned>(
    mesh: &mut M,
    tag: u32,
    out: Vec<Option<T>>,
    max: usize,
) -> Result<Vec<Option<T>>> {
    let sealed = out
        .iter()
        .map(|m| m.as_ref().map(seal_ot).transpose())
        .collect::<Result<Vec<_>>>()?;
    let got = exchange_pairwise(mesh, tag, sealed).await?;
    got.iter()
        .enumerate()
        .map(|(j, b)| b.as_ref().map(|b| open_ot(j, b, max)).transpose())
        .collect()
}

/// A payload received in an OT envelope, kept in the buffer it arrived in (no copy): it derefs
/// to the payload bytes.
pub(crate) struct OtPayload {
    body: BytesPayload,
    start: usize,
}

impl std::ops::Deref for OtPayload {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.body[self.start..]
    }
}

/// One byte string to and from every peer in OT envelopes; `expect(j)` is the exact payload
/// length expected from peer `j`. The envelope header goes out with the frame head and the
/// payload after it, so neither side copies the (megabyte) payload into a new buffer.
async fn pairwise_bytes<M: Mesh>(
    mesh: &mut M,
    tag: u32,
    out: Vec<Option<Vec<u8>>>,
    expect: impl Fn(PartyId) -> usize,
) -> Result<Vec<Option<OtPayload>>> {
    let me = mesh.id();
    let max = mesh.options().max_frame;
    for (j, m) in out.iter().enumerate() {
        if j == me {
            continue;
        }
        let m = m
            .as_ref()
            .ok_or_else(|| Error::Invalid("pairwise: missing message".into()))?;
        let env = ot_bytes_header(m.len())?;
        let mut head = coterie_net::frame::start_bytes_frame(tag, env.len() + m.len(), max)
            .map_err(|e| Error::Net(coterie_net::Error::Encode(e.to_string())))?;
        head.extend_from_slice(&env);
        mesh.send_frame_parts(j, &mut head, m).await?;
    }
    let mut res = Vec::with_capacity(out.len());
    for j in 0..out.len() {
        if j == me {
            res.push(None);
            continue;
        }
        let b = mesh.recv_bytes_payload(j, tag).await?;
        let want = expect(j);
        let len = open_ot_bytes(j, &b, want)?.len();
        if len != want {
            return Err(malformed(j, "wrong message length"));
        }
        res.push(Some(OtPayload {
            start: b.len() - len,
            body: b,
        }));
    }
    Ok(res)
}

fn malformed(party: PartyId, cause: &str) -> Error {
    Error::Malformed {
        party,
        cause: cause.into(),
    }
}

/// One party's OT-based SPDZ_2k producer over [`Z2k`], secure with abort against an actively
/// malicious dishonest majority (see the module docs for a summary and
/// `docs/spdz-ot-security.md` for the protocol, parameters and arguments). It is a
/// [`Producer`] of triples, random bits, random values and input masks, and an
/// [`crate::Authenticator`] for shares other producers make.
pub struct OtPrep {
    ring: Z2k,
    /// Bits of the MAC key share `α_i` (the `s` of the ring at setup): COPE runs one OT per
    /// bit, also while [`OtPrep::bits`] works in a ring with a smaller `s` (`roots`).
    key_bits: u32,
    me: PartyId,
    n: usize,
    ext: OtExtension,
    alpha: u128,
    /// This producer's lane number ([`OtPrep::lane`]); 0 for [`OtPrep::setup`].
    lane: u32,
    pairs: Vec<Option<PairState>>,
    batch: u64,
    rng: Csprng,
    progress: Progress,
    task: Option<ProgressTask>,
}

impl Drop for OtPrep {
    fn drop(&mut self) {
        self.alpha.zeroize();
    }
}

fn bits_of(x: u128, nbits: u32) -> impl Iterator<Item = bool> {
    (0..nbits).map(move |l| (x >> l) & 1 == 1)
}

impl OtPrep {
    /// Sets up the producer with the default OT extension ([`DEFAULT_OT_EXTENSION`]): samples
    /// this party's MAC key share `α_i ∈ Z_{2^s}` and runs the base OTs with every peer (two
    /// rounds, a third for the SoftSpokenOT trees). Same as [`OtPrep::setup_with`] with
    /// [`OtExtension::default`].
    ///
    /// # Example
    ///
    /// Two parties over the in-memory mesh make triples and check them (`coterie_spdz::verify`).
    ///
    /// ```
    /// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
    /// use coterie_spdz::{Kind, OtPrep, Order, Producer, Z2k};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let mut tasks = Vec::new();
    /// for mut mesh in InMemoryMesh::group(2, MeshOptions::default()) {
    ///     tasks.push(tokio::spawn(async move {
    ///         let mut p = OtPrep::setup(&mut mesh, Z2k::spdz2k_32()).await?;
    ///         let order = Order::new().with(Kind::Triples, 2).with(Kind::Randoms, 1);
    ///         let prep = Producer::produce(&mut p, &mut mesh, &order).await?;
    ///         mesh.close().await?;
    ///         Ok::<_, coterie_spdz::Error>(prep)
    ///     }));
    /// }
    /// let mut preps = Vec::new();
    /// for t in tasks {
    ///     preps.push(t.await.unwrap().unwrap());
    /// }
    /// coterie_spdz::verify::verify_material(&preps).unwrap();
    /// # });
    /// ```
    pub async fn setup<M: Mesh>(mesh: &mut M, ring: Z2k) -> Result<Self> {
        Self::setup_with(mesh, ring, OtExtension::default()).await
    }

    /// Sets up the producer with the OT extension `ext` (every party must pass the same; the
    /// first setup message carries it, and a party whose peer differs fails with
    /// [`Error::Malformed`] naming that peer, or with a network error if that peer has
    /// already failed and left). For SoftSpokenOT a third round sends the GGM
    /// setup corrections (4 KB per peer).
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
    /// use coterie_spdz::ot_prep::OtExtension;
    /// use coterie_spdz::{OtPrep, Z2k};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let mut tasks = Vec::new();
    /// for mut mesh in InMemoryMesh::group(2, MeshOptions::default()) {
    ///     tasks.push(tokio::spawn(async move {
    ///         let ext = OtExtension::SoftSpoken { k: 2 };
    ///         let mut p = OtPrep::setup_with(&mut mesh, Z2k::spdz2k_32(), ext).await?;
    ///         assert_eq!(p.extension(), ext);
    ///         let out = p.triples(&mut mesh, 2).await?;
    ///         mesh.close().await?;
    ///         Ok::<_, coterie_spdz::Error>(out)
    ///     }));
    /// }
    /// for t in tasks {
    ///     assert_eq!(t.await.unwrap().unwrap().len(), 2);
    /// }
    /// # });
    /// ```
    pub async fn setup_with<M: Mesh>(mesh: &mut M, ring: Z2k, ext: OtExtension) -> Result<Self> {
        Self::setup_lane(mesh, ring, ext, None, 0).await
    }

    /// Sets up another producer, lane number `lane` (every party passes the same, and no two
    /// lanes of one run share a number; lane 0 is the producer of [`OtPrep::setup`]), over
    /// `mesh`: a second mesh between the same parties. It has this producer's ring, extension
    /// and MAC key share, so that its material and this producer's can be used together, and
    /// fresh base OTs, extension and COPE keys of its own. Several lanes keep several batches in
    /// flight at once, so that one lane computes while another's messages are on the wire
    /// ([`OtLanes`] runs them).
    ///
    /// A peer that sets up another lane number fails the setup with [`Error::Malformed`].
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
    /// use coterie_spdz::{OtPrep, Z2k};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let mut tasks = Vec::new();
    /// let second = InMemoryMesh::group(2, MeshOptions::default());
    /// for (mut m0, mut m1) in InMemoryMesh::group(2, MeshOptions::default()).into_iter().zip(second) {
    ///     tasks.push(tokio::spawn(async move {
    ///         let p0 = OtPrep::setup(&mut m0, Z2k::spdz2k_32()).await?;
    ///         let p1 = p0.lane(&mut m1, 1).await?;
    ///         assert_eq!(p0.mac_key_share(), p1.mac_key_share());
    ///         let mut lanes = coterie_spdz::ot_prep::OtLanes::from_lanes(p0, vec![(p1, m1)])?;
    ///         let out = lanes.triples(&mut m0, 5).await?;
    ///         lanes.close().await?;
    ///         m0.close().await?;
    ///         Ok::<_, coterie_spdz::Error>(out)
    ///     }));
    /// }
    /// for t in tasks {
    ///     assert_eq!(t.await.unwrap().unwrap().len(), 5);
    /// }
    /// # });
    /// ```
    pub async fn lane<M: Mesh>(&self, mesh: &mut M, lane: u32) -> Result<Self> {
        if mesh.id() != self.me || mesh.n() != self.n {
            return Err(Error::Invalid(format!(
                "lane {lane}: the mesh is party {} of {}, this producer party {} of {}",
                mesh.id(),
                mesh.n(),
                self.me,
                self.n
            )));
        }
        Self::setup_lane(mesh, self.ring, self.ext, Some(self.alpha), lane).await
    }

    /// The setup of [`OtPrep::setup_with`] (`alpha = None`: a fresh MAC key share) and of
    /// [`OtPrep::lane`] (the given share).
    async fn setup_lane<M: Mesh>(
        mesh: &mut M,
        ring: Z2k,
        ext: OtExtension,
        alpha: Option<u128>,
        lane: u32,
    ) -> Result<Self> {
        if let OtExtension::SoftSpoken { k } = ext {
            softspoken::check_block_size(k)?;
        }
        let me = mesh.id();
        let n = mesh.n();
        let s = ring.s();
        let mut rng = Csprng::new();
        let alpha = match alpha {
            Some(a) => a,
            None => ring.random_key(&mut rng),
        };
        // Round 1: as base-OT sender toward every peer (128 KOS-receiver + s COPE-sender OTs).
        let senders: Vec<Option<BaseOtSender>> = (0..n)
            .map(|j| (j != me).then(|| BaseOtSender::new(&mut rng)))
            .collect();
        // The extension's code travels with A, so parties that disagree on it fail here
        // instead of waiting for messages the other never sends.
        let code = ext.code();
        let out: Vec<Option<([u8; 32], u32, u32)>> = senders
            .iter()
            .map(|s| s.as_ref().map(|s| (s.big_a.to_bytes(), code, lane)))
            .collect();
        let got: Vec<Option<([u8; 32], u32, u32)>> = pairwise(mesh, TAG_BASE_A, out, 64).await?;
        for (j, g) in got.iter().enumerate() {
            if let Some((_, c, l)) = g {
                if *c != code {
                    return Err(malformed(
                        j,
                        &format!("peer runs OT extension {c}, this party {code} (see OtExtension)"),
                    ));
                }
                if *l != lane {
                    return Err(malformed(
                        j,
                        &format!("peer sets up lane {l}, this party lane {lane}"),
                    ));
                }
            }
        }
        // Round 2: as base-OT receiver with choices Δ_j (128 bits) ‖ α (s bits).
        let mut deltas = vec![0u128; n];
        let mut recv_keys: Vec<Vec<Seed>> = vec![Vec::new(); n];
        let mut out: Vec<Option<Vec<[u8; 32]>>> = (0..n).map(|_| None).collect();
        for j in 0..n {
            if j == me {
                continue;
            }
            let (a, _, _) = got[j].ok_or_else(|| malformed(j, "missing A"))?;
            let delta = ((rng.next_u64() as u128) << 64) | rng.next_u64() as u128;
            let choices: Vec<bool> = bits_of(delta, 128).chain(bits_of(alpha, s)).collect();
            let (bs, keys) = ot::base_ot_receive(&mut rng, &CompressedRistretto(a), &choices)
                .map_err(|e| malformed(j, &e.to_string()))?;
            deltas[j] = delta;
            recv_keys[j] = keys;
            out[j] = Some(bs.iter().map(|b| b.to_bytes()).collect());
        }
        let got: Vec<Option<Vec<[u8; 32]>>> =
            pairwise(mesh, TAG_BASE_B, out, 40 * (128 + s as usize) + 16).await?;
        let mut pairs: Vec<Option<PairState>> = (0..n).map(|_| None).collect();
        for j in 0..n {
            if j == me {
                continue;
            }
            let bs: Vec<CompressedRistretto> = got[j]
                .as_ref()
                .ok_or_else(|| malformed(j, "missing B"))?
                .iter()
                .map(|b| CompressedRistretto(*b))
                .collect();
            if bs.len() != 128 + s as usize {
                return Err(malformed(j, "wrong number of base OTs"));
            }
            let sender = senders[j]
                .as_ref()
                .ok_or_else(|| Error::Invalid("missing base-OT sender".into()))?;
            let keys = sender.keys(&bs).map_err(|e| malformed(j, &e.to_string()))?;
            let rk = std::mem::take(&mut recv_keys[j]);
            pairs[j] = Some(PairState {
                ss_recv: None,
                ss_send: None,
                kos_recv_keys: keys[..128].to_vec(),
                cope_send_keys: keys[128..].to_vec(),
                kos_delta: deltas[j],
                kos_send_keys: rk[..128].to_vec(),
                cope_recv_keys: rk[128..].to_vec(),
                cope_trees: None,
                cope_punct: None,
            });
        }
        deltas.zeroize();
        if let OtExtension::SoftSpoken { k } = ext {
            // Round 3: the GGM trees of SoftSpokenOT and of COPE in digits ([`crate::cope`]);
            // toward every peer, as extension receiver and as value holder, send the 128 + s
            // correction pairs (16 + 16 bytes each).
            let digit = cope::digit_size(k, s);
            let pairs_len = (128 + s as usize) * 32;
            let mut out: Vec<Option<Vec<u8>>> = (0..n).map(|_| None).collect();
            for j in 0..n {
                let Some(p) = pairs[j].as_mut() else { continue };
                let (rk, mut corr) = SsReceiverKeys::setup(&mut rng, k, &p.kos_recv_keys)?;
                p.ss_recv = Some(rk);
                let (trees, cope_corr) = CopeTrees::setup(&mut rng, digit, &p.cope_send_keys)?;
                p.cope_trees = Some(trees);
                // the trees hold all that the base-OT keys gave; the keys go (KOS and bit-wise
                // COPE, which use them per batch, do not run on this producer)
                p.kos_recv_keys.zeroize();
                p.cope_send_keys.zeroize();
                corr.extend_from_slice(&cope_corr);
                let mut b = Vec::with_capacity(pairs_len);
                for (c0, c1) in &corr {
                    b.extend_from_slice(&c0.to_le_bytes());
                    b.extend_from_slice(&c1.to_le_bytes());
                }
                out[j] = Some(b);
            }
            let got = pairwise_bytes(mesh, TAG_SS_SETUP, out, |_| pairs_len).await?;
            for j in 0..n {
                let Some(p) = pairs[j].as_mut() else { continue };
                let b = got[j]
                    .as_ref()
                    .ok_or_else(|| malformed(j, "missing SoftSpokenOT setup"))?;
                if b.len() != pairs_len {
                    return Err(malformed(
                        j,
                        "SoftSpokenOT and COPE setup of the wrong length",
                    ));
                }
                let corr: Vec<(u128, u128)> = b
                    .chunks_exact(32)
                    .map(|c| {
                        let mut x = [0u8; 16];
                        let mut y = [0u8; 16];
                        x.copy_from_slice(&c[..16]);
                        y.copy_from_slice(&c[16..]);
                        (u128::from_le_bytes(x), u128::from_le_bytes(y))
                    })
                    .collect();
                let sk = SsSenderKeys::setup(k, p.kos_delta, &p.kos_send_keys, &corr[..128])
                    .map_err(|e| malformed(j, &e.to_string()))?;
                p.ss_send = Some(sk);
                let punct = CopePunctured::setup(digit, alpha, &p.cope_recv_keys, &corr[128..])
                    .map_err(|e| malformed(j, &e.to_string()))?;
                p.cope_punct = Some(punct);
                p.kos_send_keys.zeroize();
                p.cope_recv_keys.zeroize();
            }
        }
        Ok(Self {
            ring,
            key_bits: s,
            me,
            n,
            ext,
            alpha,
            lane,
            pairs,
            batch: 0,
            rng,
            progress: Progress::none(),
            task: None,
        })
    }

    /// Reports progress to `progress` from now on: each [`Producer::produce`] call is one task
    /// (one unit per triple made, including those consumed by random bits, and one per
    /// authenticated random value or input mask; see [`crate::tools::ot_work_units`]), unless
    /// a task spanning several calls was started with [`OtPrep::start_progress`].
    pub fn set_progress(&mut self, progress: Progress) {
        self.progress = progress;
    }

    /// Starts one progress task of `total` units spanning the next calls (a chunked run into a
    /// store); ended by [`OtPrep::finish_progress`].
    pub fn start_progress(&mut self, total: u64) {
        let label = format!("party {} OT preprocessing", self.me);
        self.task = Some(self.progress.task(label, total));
    }

    /// Ends the task started by [`OtPrep::start_progress`].
    pub fn finish_progress(&mut self) {
        if let Some(t) = self.task.take() {
            t.finish();
        }
    }

    fn progress(&self, n: u64) {
        if let Some(t) = &self.task {
            t.inc(n);
        }
    }

    /// The OT extension this producer runs.
    pub fn extension(&self) -> OtExtension {
        self.ext
    }

    /// This party's MAC key share.
    pub fn mac_key_share(&self) -> u128 {
        self.alpha
    }

    fn pair(&self, j: PartyId) -> Result<&PairState> {
        self.pairs
            .get(j)
            .and_then(|p| p.as_ref())
            .ok_or_else(|| Error::Invalid(format!("no pair state for party {j}")))
    }

    /// The digit size of COPE in digits ([`crate::cope`]) with SoftSpokenOT; `None` with KOS
    /// (bit-wise COPE).
    fn cope_digit_size(&self) -> Option<u32> {
        match self.ext {
            OtExtension::SoftSpoken { k } => Some(cope::digit_size(k, self.key_bits)),
            OtExtension::Kos => None,
        }
    }

    /// How many base-OT keys this producer still holds, over all peers (tests: none once
    /// SoftSpokenOT's and COPE's trees are set up).
    #[cfg(test)]
    pub(crate) fn base_keys_held(&self) -> usize {
        self.pairs
            .iter()
            .flatten()
            .map(|p| {
                p.kos_recv_keys.len()
                    + p.kos_send_keys.len()
                    + p.cope_send_keys.len()
                    + p.cope_recv_keys.len()
            })
            .sum()
    }

    fn empty_prep(&self) -> VecPrep<Z2k> {
        VecPrep::new(self.ring, self.me, self.n, self.alpha)
    }

    async fn coin_toss<M: Mesh>(&mut self, mesh: &mut M, label: &str) -> Result<Seed> {
        let mut sd = [0u8; 32];
        self.rng.fill_bytes(&mut sd);
        let domain = format!("coterie-spdz/ot-prep/{label}/{}/{}", self.lane, self.batch);
        let all: Vec<[u8; 32]> = commit_open_all(mesh, &domain, &sd).await?;
        let mut h = blake3::Hasher::new_derive_key("coterie-spdz 2026 ot-prep coins v1");
        h.update(domain.as_bytes());
        for x in &all {
            h.update(x);
        }
        Ok(*h.finalize().as_bytes())
    }

    /// Produces a party's whole [`VecPrep`] with `counts` of every kind. The [`Producer`] form,
    /// `Producer::produce(&mut p, mesh, &order)`, takes an [`Order`] (per-owner mask counts).
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
    /// use coterie_spdz::{OtPrep, Z2k};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let mut tasks = Vec::new();
    /// for mut mesh in InMemoryMesh::group(2, MeshOptions::default()) {
    ///     tasks.push(tokio::spawn(async move {
    ///         let mut p = OtPrep::setup(&mut mesh, Z2k::spdz2k_32()).await?;
    ///         let counts = coterie_spdz::Counts { triples: 2, bits: 1, ..Default::default() };
    ///         let out = p.produce(&mut mesh, counts).await?;
    ///         mesh.close().await?;
    ///         Ok::<_, coterie_spdz::Error>(out)
    ///     }));
    /// }
    /// for t in tasks {
    ///     let out = t.await.unwrap().unwrap();
    ///     assert_eq!((out.triples.len(), out.bits.len()), (2, 1));
    /// }
    /// # });
    /// ```
    pub async fn produce<M: Mesh>(&mut self, mesh: &mut M, counts: Counts) -> Result<VecPrep<Z2k>> {
        let order = Order::from_counts(counts, self.n);
        self.produce_order(mesh, &order).await
    }

    async fn produce_order<M: Mesh>(
        &mut self,
        mesh: &mut M,
        order: &Order,
    ) -> Result<VecPrep<Z2k>> {
        check_order(self, order)?;
        let own_task = self.task.is_none();
        if own_task {
            let total = ot_order_units(order, self.n, &self.ring);
            self.start_progress(total);
        }
        let res = self.produce_inner(mesh, order).await;
        if own_task {
            self.finish_progress();
        }
        res
    }

    async fn produce_inner<M: Mesh>(
        &mut self,
        mesh: &mut M,
        order: &Order,
    ) -> Result<VecPrep<Z2k>> {
        let counts = Counts {
            triples: order.count(Kind::Triples),
            bits: order.count(Kind::Bits),
            randoms: order.count(Kind::Randoms),
            masks_per_party: 0,
        };
        let mut p = self.empty_prep();
        p.triples.extend(self.triples(mesh, counts.triples).await?);
        p.bits.extend(self.bits(mesh, counts.bits).await?);
        let (rnd, masks) = self
            .randoms_and_owner_masks(mesh, counts.randoms, &order.masks_per_owner(self.n))
            .await?;
        p.randoms.extend(rnd);
        for (q, m) in p.masks.iter_mut().zip(masks) {
            q.extend(m);
        }
        debug_assert_eq!(p.party(), self.me);
        Ok(p)
    }
}

/// The progress units of [`OtPrep`] for `order` with `n` parties (see
/// [`crate::tools::ot_work_units`]).
pub(crate) fn ot_order_units(order: &Order, n: usize, ring: &Z2k) -> u64 {
    let n = n as u64;
    let bits = order.count(Kind::Bits) as u64;
    // per bit: (triples, authenticated values)
    let (bit_triples, bit_values) = roots::square_root_bit_cost(ring).unwrap_or((n, n + 1));
    let masks: u64 = order
        .masks_per_owner(n as usize)
        .iter()
        .map(|&c| c as u64)
        .sum();
    order.count(Kind::Triples) as u64
        + bits * bit_triples
        + bits * bit_values
        + order.count(Kind::Randoms) as u64
        + masks
}

impl Producer<Z2k> for OtPrep {
    fn ring(&self) -> &Z2k {
        &self.ring
    }
    fn party(&self) -> PartyId {
        self.me
    }
    fn n(&self) -> usize {
        self.n
    }
    fn mac_key_share(&self) -> u128 {
        self.alpha
    }
    fn supports(&self, kind: Kind) -> bool {
        !matches!(kind, Kind::MatrixTriples(_))
    }
    fn set_progress(&mut self, progress: Progress) {
        OtPrep::set_progress(self, progress);
    }
    async fn produce<M: Mesh>(&mut self, mesh: &mut M, order: &Order) -> Result<VecPrep<Z2k>> {
        self.produce_order(mesh, order).await
    }
}
