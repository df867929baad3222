//! SPDZ_2k preprocessing by oblivious transfer, for any number of parties, secure against a
//! dishonest majority of actively malicious parties (with abort): MAC key, triples, authenticated
//! random values, input masks and random bits.
//!
//! This follows the preprocessing of SPDZ_2k (Cramer, Damgård, Escudero, Scholl, Xing, CRYPTO
//! 2018), which itself follows MASCOT (Keller, Orsini, Scholl, CCS 2016) with the sacrifice and
//! MAC check moved to `Z_{2^{k+s}}`. No copy of the paper was at hand; the steps below are
//! written from the published protocol as we know it, and the parameter choices and arguments
//! are stated here so they can be checked. Per ordered pair of parties (all pairs run in the
//! same rounds, one message per peer per round):
//!
//! * **Setup:** Chou–Orlandi base OTs ([`crate::ot`]) in both directions: 128 for KOS (the
//!   extension sender's choices are its `Δ`) and `s` for authentication (the key holder's
//!   choices are the bits of its MAC key share `α_i ∈ Z_{2^s}`).
//! * **Multiply (Gilboa on KOS correlated OTs):** every party `i` samples `b_i ∈ Z_{2^{k+s}}` and
//!   `τ` random bits `x_{i,h}` per triple ([`combine_width`]). For every ordered pair, `i` is the
//!   KOS receiver with choices `x_{i,h}` and `j` the sender with pads `p_0 = H(q)`,
//!   `p_1 = H(q ⊕ Δ)`; `j` sends `d_h = p_0 − p_1 + b_j`, `i` keeps `p_{x} + x·d_h =
//!   p_0 + x_{i,h} b_j` and `j` keeps `−p_0`. Every party thus holds shares of
//!   `c_h = x_h · b` with `x_h = Σ_i x_{i,h}` (over `Z`, one bit per party) and `b = Σ b_j`.
//!   The KOS consistency check makes the receiver's choices consistent across the 128 columns.
//! * **Combine (protection against selective failure):** after all corrections are sent, a
//!   coin-tossed `r, r̂ ∈ Z_{2^{k+s}}^τ` gives `a = Σ r_h x_h`, `â = Σ r̂_h x_h`,
//!   `c = Σ r_h c_h = a·b`, `ĉ = Σ r̂_h c_h = â·b` (local linear maps on the shares).
//!   A cheating OT sender `j` that adds `e_h` to correction `h` toward an honest receiver `i`
//!   changes `c` by `Σ r_h e_h x_{i,h}` and `ĉ` by `Σ r̂_h e_h x_{i,h}`, so the sacrifice's `z`
//!   by `Σ (t r_h − r̂_h) e_h x_{i,h}` with coefficients unknown to `j` when it chose the `e_h`;
//!   the sacrifice passes (except with probability about `2^{-s}`) only if `x_{i,h} = 0` on the
//!   probed set `S`, which happens with probability `2^{-|S|}` and then tells `j` those bits.
//!   A sender that uses a wrong `b_j + e` consistently changes `z` by `e·(t a_i − â_i)`, which
//!   for two parties is known from the public `ρ` and in general is independent of `a` (masked
//!   by `â_i`): no leak. A receiver that uses different bits toward different peers (the KOS
//!   check only binds them per pair) makes `z` wrong by `(t D − D̂)·b_j` for coefficients
//!   `D, D̂` that are uniform once `r, r̂` are tossed, so the sacrifice passes only with
//!   probability about `(k+s)·2^{-(k+s)}`. The map `x ↦ (Σ r_h x_h, Σ r̂_h x_h)` from `{0,1}^τ` to
//!   `Z_{2^{k+s}}^2` is a universal hash family (a nonzero difference of bit vectors has a unit
//!   entry `±1`, so the difference of the outputs is uniform). Given a probe set of size `L`,
//!   the run survives with probability `2^{-L}` and the remaining `τ − L` bits are uniform, so
//!   by the leftover hash lemma `(a, â)` is within `½·2^{-(τ − L − 2(k+s))/2}` of uniform; the
//!   distinguishing advantage is at most `2^{-L}` times that, i.e. at most
//!   `½·2^{-(τ − 2(k+s))/2}` whatever `L` (a larger probe costs more abort probability than it
//!   gains). With `τ = 2(k+s) + 2σ` ([`COMBINE_SIGMA`] `= 64`) this is `2^{-σ-1}`. This is the
//!   parametrization MASCOT uses over a 128-bit field (`τ = 3`: `3·128 = 2·128 + 2·64`); both
//!   `a` and `â` must be uniform over all of `Z_{2^{k+s}}` (the online Beaver step opens
//!   `x − a` in full, and `ρ = t·a − â` is opened below), hence the `2(k+s)` output bits.
//!   SPDZ_2k states its own `τ`; we could not check its constant without the paper, this is the
//!   bound we can prove from the lemma as stated here.
//! * **Authenticate (COPE, as in MASCOT/SPDZ_2k):** to authenticate `x_i` under `α_j`, the
//!   base-OT keys are expanded by a PRG to `Z_{2^{k+s}}` elements `r_{l,0}, r_{l,1}` (`l < s`);
//!   party `i` sends `u_l = r_{l,0} − r_{l,1} + x_i`, party `j` keeps
//!   `Σ_l 2^l (r_{l,α_l} + α_l u_l) = Σ_l 2^l r_{l,0} + α_j x_i` and `i` keeps `−Σ_l 2^l r_{l,0}`
//!   (`u_l` is sent in its `k+s−l` useful bits). `a, b, c, â, ĉ` and one extra uniform value
//!   `y_0` are authenticated together.
//! * **Authentication check (SPDZ_2k's Π_[[·]] check):** coin-tossed `χ_v ∈ Z_{2^s}`; the
//!   parties open `y = y_0 + Σ χ_v y_v` over `Z_{2^{k+s}}` (uniform thanks to `y_0`) and run the
//!   SPDZ_2k MAC check on it (batched with the sacrifice's openings). A party that sends
//!   inconsistent `u_l` (different `x` per `l`) makes the MAC of `y` wrong by
//!   `Σ_l 2^l α_{j,l} χ_v δ_l`; the check then fails unless the error vanishes, which happens
//!   only for a guessed pattern of `α_j`'s bits. The SPDZ_2k argument with `s` bits of slack:
//!   an error of 2-adic valuation `v < k` survives the `Z_{2^s}` combination with valuation
//!   `< v + s ≤ k + s` except with probability `2^{-s}`, and learning `ℓ` bits of `α_j` this
//!   way costs a `2^{-ℓ}` chance of not aborting, which leaves a forgery probability of
//!   `2^{-(s−ℓ)}`: together at most `2^{-s}` (up to the `log s` loss of the SPDZ_2k check).
//! * **Sacrifice (SPDZ_2k Π_Triple):** a coin-tossed `t ∈ Z_{2^s}` per triple; open
//!   `ρ = t·a − â` and `z = t·c − ĉ − ρ·b`, require `z = 0` in `Z_{2^{k+s}}`, then the MAC check
//!   on everything opened (this and the authentication check: one check, failures named
//!   `authentication-mac-check`; `z ≠ 0` aborts as `triple-sacrifice`).
//! * **Random values and input masks:** each party authenticates its own random share, with the
//!   same authentication check.
//! * **Random bits** (not the SPDZ_2k square-root method, which needs `Z_{2^{k+2}}` arithmetic
//!   and an extra ring): every party inputs a random bit `β_i` through an input mask;
//!   `β_i(1 − β_i) = 0` is checked by a Beaver multiplication and an opening (in `Z_{2^k}` one
//!   of `β`, `1 − β` is odd, hence a unit, so the product is 0 only for `β ∈ {0, 1}` mod `2^k`),
//!   the opened products are 0 and reveal nothing, and the bits are XORed with
//!   `x ⊕ y = x + y − 2xy`. The result is a uniform bit as long as one party is honest (its bit
//!   is uniform and independent of the others', which are fixed by the input step before any of
//!   its information is revealed); the cost is `2n − 1` triples and `n` input masks per bit.
//!
//! # Security
//!
//! [`OtPrep`] gives SPDZ_2k preprocessing secure with abort against an actively malicious
//! adversary corrupting up to `n − 1` of `n` parties, in the random-oracle model for the row hash
//! `H` (keyed BLAKE3 as a correlation-robust hash) and the base OTs (Chou–Orlandi over
//! Ristretto255 with hashed keys), with computational security 128 bits (base OTs, KOS with
//! `κ = 128`) and statistical security about `s − log s` for the sacrifice and MAC checks
//! and `σ = 64` for the combine. Each abort names its check: `kos-consistency` (a receiver used
//! inconsistent choice bits; names that party), `triple-sacrifice`, `authentication-mac-check`,
//! `random-bit-input`. It is not an ideal functionality proof: no UC proof was written here; the
//! arguments are the ones stated above. The former name `InsecureOtPrep` (before the combine
//! step and the authentication check existed) is kept as a deprecated alias.

// Loops over party ids index several per-party vectors at once; ranges read better there.
#![allow(clippy::needless_range_loop)]

use coterie_math::prg::{Csprng, Xof};
use coterie_net::commit::commit_open_all;
use coterie_net::{Mesh, PartyId};
use curve25519_dalek::ristretto::CompressedRistretto;
use rand::Rng;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use zeroize::Zeroize;

use crate::engine::Engine;
use crate::ot::{self, BaseOtSender, KosReceiver, Seed};
use crate::prep::{Counts, InputMask, Preprocessing, Share, Triple, VecPrep};
use crate::ring::{Ring, Z2k};
use crate::{Error, Result};

/// Format version of the producer's messages.
pub const OT_WIRE_VERSION: u8 = 1;

const TAG_BASE_A: u32 = 0x5D21_0001;
const TAG_BASE_B: u32 = 0x5D21_0002;
const TAG_KOS_U: u32 = 0x5D21_0003;
const TAG_KOS_SEED: u32 = 0x5D21_0004;
const TAG_KOS_RESP: u32 = 0x5D21_0005;
const TAG_GILBOA: u32 = 0x5D21_0006;
const TAG_COPE: u32 = 0x5D21_0007;

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

/// Test-only cheating hooks.
#[cfg(test)]
#[derive(Debug, Clone, Default)]
pub(crate) struct PrepCheat {
    /// Added to this party's share of `c` of the first triple before authentication.
    pub triple_err: Option<u128>,
    /// Flip one choice bit in half of the KOS columns sent to each peer.
    pub kos_inconsistent: bool,
    /// Added to every Gilboa correction of the first triple of every batch sent to each peer
    /// (a selective-failure probe on the peers' bits).
    pub gilboa_err: Option<u128>,
    /// Added to the COPE corrections `u_l`, `l ≥ 1`, of the first authenticated value sent to
    /// each peer (an inconsistent input to the authentication).
    pub cope_err: Option<u128>,
    /// Added to this party's share (not its MAC) of the first triple's `c` after authentication.
    pub triple_share_err_after_auth: Option<u128>,
}

struct PairState {
    kos_recv_keys: Vec<(Seed, Seed)>,
    kos_delta: u128,
    kos_send_keys: Vec<Seed>,
    cope_send_keys: Vec<(Seed, Seed)>,
    cope_recv_keys: Vec<Seed>,
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

#[derive(Serialize, Deserialize)]
struct Msg<T> {
    version: u8,
    body: T,
}

/// A byte-string message body.
#[derive(Serialize, Deserialize)]
struct Bytes(#[serde(with = "crate::engine::serde_byte_vec")] Vec<u8>);

fn cols_to_bytes(cols: &[Vec<u64>]) -> Bytes {
    let mut out = Vec::with_capacity(cols.len() * cols.first().map_or(0, |c| c.len()) * 8);
    for c in cols {
        for w in c {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }
    Bytes(out)
}

fn bytes_to_cols(b: &Bytes, words: usize) -> Option<Vec<Vec<u64>>> {
    if b.0.len() != 128 * words * 8 {
        return None;
    }
    Some(
        b.0.chunks_exact(words * 8)
            .map(|c| {
                c.chunks_exact(8)
                    .map(|w| {
                        let mut x = [0u8; 8];
                        x.copy_from_slice(w);
                        u64::from_le_bytes(x)
                    })
                    .collect()
            })
            .collect(),
    )
}

async fn pairwise<M: Mesh, T: Serialize + DeserializeOwned>(
    mesh: &mut M,
    tag: u32,
    mut out: Vec<Option<T>>,
) -> Result<Vec<Option<T>>> {
    let me = mesh.id();
    for (j, m) in out.iter_mut().enumerate() {
        if j != me {
            let body = m
                .take()
                .ok_or_else(|| Error::Invalid("pairwise: missing message".into()))?;
            mesh.send_tagged(
                j,
                tag,
                &Msg {
                    version: OT_WIRE_VERSION,
                    body,
                },
            )
            .await?;
        }
    }
    let mut res = Vec::with_capacity(out.len());
    for j in 0..out.len() {
        if j == me {
            res.push(None);
            continue;
        }
        let m: Msg<T> = mesh.recv_tagged(j, tag).await?;
        if m.version != OT_WIRE_VERSION {
            return Err(Error::Malformed {
                party: j,
                cause: format!("version {}", m.version),
            });
        }
        res.push(Some(m.body));
    }
    Ok(res)
}

/// Packs values of varying bit widths (a correction multiplied by `2^l` only needs its low
/// `k + s − l` bits).
#[derive(Default)]
struct BitWriter {
    words: Vec<u64>,
    pos: u64,
}

impl BitWriter {
    fn put64(&mut self, v: u64, n: u32) {
        if n == 0 {
            return;
        }
        let v = if n == 64 { v } else { v & ((1u64 << n) - 1) };
        let off = (self.pos % 64) as u32;
        if off == 0 {
            self.words.push(v);
        } else if let Some(last) = self.words.last_mut() {
            *last |= v << off;
            if off + n > 64 {
                self.words.push(v >> (64 - off));
            }
        }
        self.pos += n as u64;
    }
    fn put(&mut self, v: u128, n: u32) {
        if n <= 64 {
            self.put64(v as u64, n);
        } else {
            self.put64(v as u64, 64);
            self.put64((v >> 64) as u64, n - 64);
        }
    }
    fn finish(self) -> Bytes {
        let mut out = Vec::with_capacity(self.words.len() * 8);
        for w in self.words {
            out.extend_from_slice(&w.to_le_bytes());
        }
        Bytes(out)
    }
}

struct BitReader<'a> {
    bytes: &'a [u8],
    pos: u64,
}

impl<'a> BitReader<'a> {
    /// A reader for exactly `total_bits` bits (the byte length must match).
    fn new(b: &'a Bytes, total_bits: u64) -> Option<Self> {
        (b.0.len() as u64 == total_bits.div_ceil(64) * 8).then_some(Self {
            bytes: &b.0,
            pos: 0,
        })
    }
    fn word(&self, i: u64) -> u64 {
        let i = i as usize * 8;
        let mut x = [0u8; 8];
        if let Some(s) = self.bytes.get(i..i + 8) {
            x.copy_from_slice(s);
        }
        u64::from_le_bytes(x)
    }
    fn get64(&mut self, n: u32) -> u64 {
        if n == 0 {
            return 0;
        }
        let (w, off) = (self.pos / 64, (self.pos % 64) as u32);
        let mut v = self.word(w) >> off;
        if off + n > 64 {
            v |= self.word(w + 1) << (64 - off);
        }
        self.pos += n as u64;
        if n == 64 { v } else { v & ((1u64 << n) - 1) }
    }
    fn get(&mut self, n: u32) -> u128 {
        if n <= 64 {
            self.get64(n) as u128
        } else {
            let lo = self.get64(64) as u128;
            lo | ((self.get64(n - 64) as u128) << 64)
        }
    }
}

fn malformed(party: PartyId, cause: &str) -> Error {
    Error::Malformed {
        party,
        cause: cause.into(),
    }
}

/// The former name of [`OtPrep`], from before the combine step and the authentication check
/// were implemented.
#[deprecated(note = "renamed to OtPrep (now maliciously secure as documented in ot_prep)")]
pub type InsecureOtPrep = OtPrep;

/// One party's OT-based SPDZ_2k producer over [`Z2k`], secure with abort against an actively
/// malicious dishonest majority (see the module docs for the exact protocol, parameters and
/// arguments).
pub struct OtPrep {
    ring: Z2k,
    me: PartyId,
    n: usize,
    alpha: u128,
    pairs: Vec<Option<PairState>>,
    batch: u64,
    rng: Csprng,
    progress: Option<indicatif::ProgressBar>,
    #[cfg(test)]
    pub(crate) cheat: PrepCheat,
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
    /// Sets up the producer: samples this party's MAC key share `α_i ∈ Z_{2^s}` and runs the
    /// base OTs with every peer (two rounds).
    pub async fn setup<M: Mesh>(mesh: &mut M, ring: Z2k) -> Result<Self> {
        let me = mesh.id();
        let n = mesh.n();
        let s = ring.s();
        let mut rng = Csprng::new();
        let alpha = ring.random_key(&mut rng);
        // Round 1: as base-OT sender toward every peer (128 KOS-receiver + s COPE-sender OTs).
        let senders: Vec<Option<BaseOtSender>> = (0..n)
            .map(|j| (j != me).then(|| BaseOtSender::new(&mut rng)))
            .collect();
        let out: Vec<Option<[u8; 32]>> = senders
            .iter()
            .map(|s| s.as_ref().map(|s| s.big_a.to_bytes()))
            .collect();
        let got = pairwise(mesh, TAG_BASE_A, out).await?;
        // Round 2: as base-OT receiver with choices Δ_j (128 bits) ‖ α (s bits).
        let mut deltas = vec![0u128; n];
        let mut recv_keys: Vec<Vec<Seed>> = vec![Vec::new(); n];
        let mut out: Vec<Option<Vec<[u8; 32]>>> = (0..n).map(|_| None).collect();
        for j in 0..n {
            if j == me {
                continue;
            }
            let a = got[j].ok_or_else(|| malformed(j, "missing A"))?;
            let delta = ((rng.next_u64() as u128) << 64) | rng.next_u64() as u128;
            let choices: Vec<bool> = bits_of(delta, 128).chain(bits_of(alpha, s)).collect();
            let (bs, keys) = ot::base_ot_receive(&mut rng, &CompressedRistretto(a), &choices)
                .map_err(|e| malformed(j, &e.to_string()))?;
            deltas[j] = delta;
            recv_keys[j] = keys;
            out[j] = Some(bs.iter().map(|b| b.to_bytes()).collect());
        }
        let got = pairwise(mesh, TAG_BASE_B, out).await?;
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
                kos_recv_keys: keys[..128].to_vec(),
                cope_send_keys: keys[128..].to_vec(),
                kos_delta: deltas[j],
                kos_send_keys: rk[..128].to_vec(),
                cope_recv_keys: rk[128..].to_vec(),
            });
        }
        deltas.zeroize();
        Ok(Self {
            ring,
            me,
            n,
            alpha,
            pairs,
            batch: 0,
            rng,
            progress: None,
            #[cfg(test)]
            cheat: PrepCheat::default(),
        })
    }

    /// Shows progress on `bar` (incremented by one per triple made, including those consumed
    /// by random bits, and one per authenticated random value or input mask; see
    /// [`crate::tools::ot_work_units`]); `None` switches it off.
    pub fn set_progress(&mut self, bar: Option<indicatif::ProgressBar>) {
        self.progress = bar;
    }

    /// The progress bar set by [`OtPrep::set_progress`].
    pub fn progress_bar(&self) -> Option<&indicatif::ProgressBar> {
        self.progress.as_ref()
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

    fn empty_prep(&self) -> VecPrep<Z2k> {
        VecPrep::new(self.ring, self.me, self.n, self.alpha)
    }

    /// The Gilboa step of SPDZ_2k Π_Triple on KOS correlated OTs: this party samples
    /// `tau·t` random bits `x` (its bits `a_h` for every triple; the same bits toward every
    /// peer) and for every ordered pair computes shares of `x_h·b_j`. Returns the bits and this
    /// party's shares of `c_h = x_h·b` (summed over all parties' bits and all `b_j`, including
    /// its own `x_h·b_i`), one per OT, triple-major (`ti·tau + h`).
    async fn products<M: Mesh>(
        &mut self,
        mesh: &mut M,
        b: &[u128],
        tau: usize,
    ) -> Result<(Vec<u64>, Vec<u128>)> {
        let r = self.ring;
        let kk = r.k() + r.s();
        let t = b.len();
        let m = t * tau;
        let batch = self.batch;
        self.batch += 1;
        let mask = if kk == 128 {
            u128::MAX
        } else {
            (1u128 << kk) - 1
        };
        // this party's random bits a_h (choices of its OTs as receiver)
        let mut x: Vec<u64> = (0..m.div_ceil(64)).map(|_| self.rng.next_u64()).collect();
        if !m.is_multiple_of(64)
            && let Some(last) = x.last_mut()
        {
            *last &= (1u64 << (m % 64)) - 1;
        }
        let bit = |x: &[u64], j: usize| (x[j / 64] >> (j % 64)) & 1;
        // Round 1: KOS u to every peer (as receiver).
        let mut receivers: Vec<Option<KosReceiver>> = (0..self.n).map(|_| None).collect();
        let mut out: Vec<Option<Bytes>> = (0..self.n).map(|_| None).collect();
        for j in 0..self.n {
            if j == self.me {
                continue;
            }
            let keys = self.pair(j)?.kos_recv_keys.clone();
            #[allow(unused_mut)]
            let (rc, mut us) = KosReceiver::extend(&mut self.rng, &keys, batch, &x, m)?;
            #[cfg(test)]
            if self.cheat.kos_inconsistent {
                for col in us.iter_mut().take(64) {
                    col[0] ^= 1;
                }
            }
            receivers[j] = Some(rc);
            out[j] = Some(cols_to_bytes(&us));
        }
        let got_u = pairwise(mesh, TAG_KOS_U, out).await?;
        // Round 2: as sender, compute rows q and send a fresh challenge seed.
        let mut rows: Vec<Option<Vec<u128>>> = (0..self.n).map(|_| None).collect();
        let mut seeds: Vec<Option<Seed>> = (0..self.n).map(|_| None).collect();
        for j in 0..self.n {
            if j == self.me {
                continue;
            }
            let p = self.pair(j)?;
            let us = got_u[j]
                .as_ref()
                .and_then(|b| bytes_to_cols(b, ot::kos_words(m)))
                .ok_or_else(|| malformed(j, "missing or malformed u"))?;
            let q = ot::kos_sender_rows(p.kos_delta, &p.kos_send_keys, batch, &us, m)
                .map_err(|e| malformed(j, &e.to_string()))?;
            rows[j] = Some(q);
            let mut sd = [0u8; 32];
            self.rng.fill_bytes(&mut sd);
            seeds[j] = Some(sd);
        }
        drop(got_u);
        let got_seed = pairwise(mesh, TAG_KOS_SEED, seeds.clone()).await?;
        // Round 3: as receiver, answer the check.
        let mut out: Vec<Option<(u128, u128)>> = (0..self.n).map(|_| None).collect();
        for j in 0..self.n {
            if j == self.me {
                continue;
            }
            let sd = got_seed[j].ok_or_else(|| malformed(j, "missing seed"))?;
            let rc = receivers[j]
                .as_ref()
                .ok_or_else(|| Error::Invalid("missing receiver".into()))?;
            out[j] = Some(rc.check_response(&sd));
        }
        let got_resp = pairwise(mesh, TAG_KOS_RESP, out).await?;
        // Round 4: as sender, verify, then send the Gilboa corrections d = p_0 − p_1 + b_i.
        let mut shares = vec![0u128; m];
        let mut out: Vec<Option<Bytes>> = (0..self.n).map(|_| None).collect();
        for j in 0..self.n {
            if j == self.me {
                continue;
            }
            let p = self.pair(j)?;
            let q = rows[j]
                .as_ref()
                .ok_or_else(|| Error::Invalid("missing rows".into()))?;
            let resp = got_resp[j].ok_or_else(|| malformed(j, "missing check response"))?;
            let sd = seeds[j].ok_or_else(|| Error::Invalid("missing seed".into()))?;
            if !ot::kos_sender_check(p.kos_delta, q, &sd, resp) {
                let e = Error::PrepCheckFailed {
                    check: "kos-consistency",
                    party: j,
                };
                mesh.abort(&e.to_string()).await;
                return Err(e);
            }
            let me = self.me;
            let tw = |i: usize| ot::ot_tweak(batch, i, me, j);
            let mut p0 = ot::tccr_hash(&q[..m], tw);
            let mut q1: Vec<u128> = q[..m].iter().map(|x| x ^ p.kos_delta).collect();
            let mut p1 = ot::tccr_hash(&q1, tw);
            q1.zeroize();
            let mut d = BitWriter::default();
            for ti in 0..t {
                for h in 0..tau {
                    let idx = ti * tau + h;
                    #[allow(unused_mut)]
                    let mut dv = p0[idx].wrapping_sub(p1[idx]).wrapping_add(b[ti]);
                    #[cfg(test)]
                    if ti == 0
                        && let Some(e) = self.cheat.gilboa_err
                    {
                        dv = dv.wrapping_add(e);
                    }
                    d.put(dv, kk);
                    shares[idx] = shares[idx].wrapping_sub(p0[idx]);
                }
            }
            p0.zeroize();
            p1.zeroize();
            out[j] = Some(d.finish());
        }
        rows.iter_mut().flatten().for_each(|q| q.zeroize());
        let got_d = pairwise(mesh, TAG_GILBOA, out).await?;
        // As receiver: p_{x_h} + x_h·d_h = p_0 + x_h·b_j.
        for j in 0..self.n {
            if j == self.me {
                continue;
            }
            let bytes = got_d[j].as_ref().ok_or_else(|| malformed(j, "missing d"))?;
            let mut rd = BitReader::new(bytes, m as u64 * kk as u64)
                .ok_or_else(|| malformed(j, "wrong length of d"))?;
            let rc = receivers[j]
                .as_ref()
                .ok_or_else(|| Error::Invalid("missing receiver".into()))?;
            let me = self.me;
            let mut pads = ot::tccr_hash(&rc.t[..m], |i| ot::ot_tweak(batch, i, j, me));
            for (idx, sh) in shares.iter_mut().enumerate() {
                let d = rd.get(kk);
                let bm = 0u128.wrapping_sub(rc.choice(idx) as u128);
                *sh = sh.wrapping_add(pads[idx].wrapping_add(d & bm));
            }
            pads.zeroize();
        }
        // own products x_h·b_i
        for ti in 0..t {
            for h in 0..tau {
                let idx = ti * tau + h;
                let bm = 0u128.wrapping_sub(bit(&x, idx) as u128);
                shares[idx] = shares[idx].wrapping_add(b[ti] & bm) & mask;
            }
        }
        Ok((x, shares))
    }

    /// MAC shares for this party's shares `xs` (every party calls it with its own shares of the
    /// same number of values): `α_i x_i` plus the COPE shares with every peer. One round.
    async fn authenticate<M: Mesh>(&mut self, mesh: &mut M, xs: &[u128]) -> Result<Vec<u128>> {
        let r = self.ring;
        let s = r.s() as usize;
        let kk = r.k() + r.s();
        let cnt = xs.len();
        let batch = self.batch;
        self.batch += 1;
        let mut macs: Vec<u128> = xs.iter().map(|x| r.mul(&self.alpha, x)).collect();
        let read = |xof: &mut Xof| r.random(xof);
        let mut out: Vec<Option<Bytes>> = (0..self.n).map(|_| None).collect();
        for j in 0..self.n {
            if j == self.me {
                continue;
            }
            let p = self.pair(j)?;
            let mut us = BitWriter::default();
            let mut x0: Vec<Xof> = p
                .cope_send_keys
                .iter()
                .map(|(k0, _)| Xof::new(k0, b"coterie-spdz/cope", batch))
                .collect();
            let mut x1: Vec<Xof> = p
                .cope_send_keys
                .iter()
                .map(|(_, k1)| Xof::new(k1, b"coterie-spdz/cope", batch))
                .collect();
            for (v, x) in xs.iter().enumerate() {
                let mut share = 0u128;
                for l in 0..s {
                    let r0 = read(&mut x0[l]);
                    let r1 = read(&mut x1[l]);
                    #[allow(unused_mut)]
                    let mut u = r.add(&r.sub(&r0, &r1), x);
                    #[cfg(test)]
                    if v == 0
                        && l >= 1
                        && let Some(e) = self.cheat.cope_err
                    {
                        u = r.add(&u, &e);
                    }
                    us.put(u, kk - l as u32);
                    share = r.sub(&share, &r.mul(&r0, &(1u128 << l)));
                }
                macs[v] = r.add(&macs[v], &share);
            }
            out[j] = Some(us.finish());
        }
        let got = pairwise(mesh, TAG_COPE, out).await?;
        for j in 0..self.n {
            if j == self.me {
                continue;
            }
            let p = self.pair(j)?;
            let bytes = got[j].as_ref().ok_or_else(|| malformed(j, "missing u"))?;
            let per: u64 = (0..s as u64).map(|l| kk as u64 - l).sum();
            let mut rd = BitReader::new(bytes, cnt as u64 * per)
                .ok_or_else(|| malformed(j, "wrong length of u"))?;
            let mut us = Vec::with_capacity(cnt * s);
            for _ in 0..cnt {
                for l in 0..s as u32 {
                    us.push(rd.get(kk - l));
                }
            }
            let mut xk: Vec<Xof> = p
                .cope_recv_keys
                .iter()
                .map(|k| Xof::new(k, b"coterie-spdz/cope", batch))
                .collect();
            for (v, mac) in macs.iter_mut().enumerate() {
                let mut share = 0u128;
                for (l, xof) in xk.iter_mut().enumerate() {
                    let rr = read(xof);
                    let al = 0u128.wrapping_sub((self.alpha >> l) & 1);
                    let q = r.add(&rr, &(us[v * s + l] & al));
                    share = r.add(&share, &r.mul(&q, &(1u128 << l)));
                }
                *mac = r.add(mac, &share);
            }
        }
        Ok(macs)
    }

    async fn coin_toss<M: Mesh>(&mut self, mesh: &mut M, label: &str) -> Result<Seed> {
        let mut sd = [0u8; 32];
        self.rng.fill_bytes(&mut sd);
        let domain = format!("coterie-spdz/ot-prep/{label}/{}", self.batch);
        let all: Vec<[u8; 32]> = commit_open_all(mesh, &domain, &sd).await?;
        let mut h = blake3::Hasher::new_derive_key("coterie-spdz 2026 ot-prep coins v1");
        h.update(domain.as_bytes());
        for x in &all {
            h.update(x);
        }
        Ok(*h.finalize().as_bytes())
    }

    /// Produces `count` authenticated triples (SPDZ_2k Π_Triple: Gilboa products on
    /// [`combine_width`] random bits per triple, combine, authenticate, sacrifice; see the
    /// module docs).
    pub async fn triples<M: Mesh>(
        &mut self,
        mesh: &mut M,
        count: usize,
    ) -> Result<Vec<Triple<u128>>> {
        let mut out = Vec::with_capacity(count);
        let mut left = count;
        while left > 0 {
            let t = left.min(MAX_TRIPLE_BATCH);
            out.extend(self.triple_batch(mesh, t).await?);
            left -= t;
            self.progress(t as u64);
        }
        Ok(out)
    }

    fn progress(&self, n: u64) {
        if let Some(pb) = &self.progress {
            pb.inc(n);
        }
    }

    async fn triple_batch<M: Mesh>(&mut self, mesh: &mut M, t: usize) -> Result<Vec<Triple<u128>>> {
        let r = self.ring;
        let tau = combine_width(&r);
        let kk = r.k() + r.s();
        // Multiply: b_i uniform in Z_{2^{k+s}}; bits x_h; shares of c_h = x_h·b.
        let b: Vec<u128> = (0..t).map(|_| r.random(&mut self.rng)).collect();
        let (mut x, mut ch) = self.products(mesh, &b, tau).await?;
        // Combine: public random r, r̂ ∈ Z_{2^{k+s}}^tau, tossed after the products are fixed;
        // a = Σ r_h x_h, â = Σ r̂_h x_h, c = Σ r_h c_h, ĉ = Σ r̂_h c_h.
        let seed = self.coin_toss(mesh, "combine").await?;
        let mut xof = Xof::new(&seed, b"coterie-spdz/combine-r", 0);
        let rs: Vec<u128> = (0..tau).map(|_| r.random(&mut xof)).collect();
        let rhs: Vec<u128> = (0..tau).map(|_| r.random(&mut xof)).collect();
        let (mut a, mut ah) = (vec![0u128; t], vec![0u128; t]);
        #[allow(unused_mut)]
        let (mut c, mut chat) = (vec![0u128; t], vec![0u128; t]);
        for ti in 0..t {
            let (mut sa, mut sah, mut sc, mut sch) = (0u128, 0u128, 0u128, 0u128);
            for h in 0..tau {
                let idx = ti * tau + h;
                let bm = 0u128.wrapping_sub(((x[idx / 64] >> (idx % 64)) & 1) as u128);
                sa = sa.wrapping_add(rs[h] & bm);
                sah = sah.wrapping_add(rhs[h] & bm);
                sc = sc.wrapping_add(rs[h].wrapping_mul(ch[idx]));
                sch = sch.wrapping_add(rhs[h].wrapping_mul(ch[idx]));
            }
            a[ti] = Z2k::low_bits(sa, kk);
            ah[ti] = Z2k::low_bits(sah, kk);
            c[ti] = Z2k::low_bits(sc, kk);
            chat[ti] = Z2k::low_bits(sch, kk);
        }
        x.zeroize();
        ch.zeroize();
        #[cfg(test)]
        if let Some(e) = self.cheat.triple_err.take() {
            c[0] = r.add(&c[0], &e);
        }
        // Authenticate a, b, c, â, ĉ and one uniform mask for the authentication check.
        let mut all: Vec<u128> = a
            .iter()
            .chain(&b)
            .chain(&c)
            .chain(&ah)
            .chain(&chat)
            .copied()
            .collect();
        all.push(r.random(&mut self.rng));
        a.zeroize();
        ah.zeroize();
        c.zeroize();
        chat.zeroize();
        let macs = self.authenticate(mesh, &all).await?;
        #[allow(unused_mut)]
        let mut shares: Vec<Share<u128>> = all
            .iter()
            .zip(&macs)
            .map(|(v, m)| Share { v: *v, m: *m })
            .collect();
        all.zeroize();
        #[cfg(test)]
        if let Some(e) = self.cheat.triple_share_err_after_auth.take() {
            shares[2 * t].v = r.add(&shares[2 * t].v, &e);
        }
        // One coin toss for the authentication check's χ and the sacrifice's t.
        let seed = self.coin_toss(mesh, "check").await?;
        let mut xof = Xof::new(&seed, b"coterie-spdz/check-chi-t", 0);
        let mut e = Engine::new(self.empty_prep()).with_check_name("authentication-mac-check");
        let sh = |v: usize| &shares[v];
        // Authentication check (SPDZ_2k/MASCOT Π_[[·]]): open mask + Σ χ_v x_v, χ_v ∈ Z_{2^s}.
        let mut acc = shares[5 * t].clone();
        for s in &shares[..5 * t] {
            acc = e.add(&acc, &e.mul_const(s, &r.random_key(&mut xof)));
        }
        // Sacrifice (SPDZ_2k): t_i ∈ Z_{2^s}; ρ = t·a − â; z = t·c − ĉ − ρ·b must be 0.
        let ts: Vec<u128> = (0..t).map(|_| r.random_key(&mut xof)).collect();
        let mut first: Vec<Share<u128>> = (0..t)
            .map(|i| e.sub(&e.mul_const(sh(i), &ts[i]), sh(3 * t + i)))
            .collect();
        first.push(acc);
        let rho_open = e.open_unmasked(mesh, &first).await?;
        let z: Vec<Share<u128>> = (0..t)
            .map(|i| {
                let tc = e.mul_const(sh(2 * t + i), &ts[i]);
                let x = e.sub(&tc, sh(4 * t + i));
                e.sub(&x, &e.mul_const(sh(t + i), &rho_open[i]))
            })
            .collect();
        let z_open = e.open_unmasked(mesh, &z).await?;
        if z_open.iter().any(|v| *v != 0) {
            let err = Error::SacrificeFailed {
                detected_by: self.me,
            };
            mesh.abort(&err.to_string()).await;
            return Err(err);
        }
        e.check(mesh).await?;
        let out = (0..t)
            .map(|i| Triple {
                a: shares[i].clone(),
                b: shares[t + i].clone(),
                c: shares[2 * t + i].clone(),
            })
            .collect();
        shares.zeroize();
        Ok(out)
    }

    /// Authenticated values: `randoms` uniformly random values (every party contributes a random
    /// share) and `masks` input masks per owner (the owner's share is its random value, the
    /// others' are zero, so only the owner knows it). Ends with an authentication check.
    pub async fn randoms_and_masks<M: Mesh>(
        &mut self,
        mesh: &mut M,
        randoms: usize,
        masks: usize,
    ) -> Result<(Vec<Share<u128>>, Vec<Vec<InputMask<u128>>>)> {
        let r = self.ring;
        let total = randoms + masks * self.n + 1; // +1: mask for the authentication check
        let mut xs = Vec::with_capacity(total);
        for _ in 0..randoms {
            xs.push(r.random(&mut self.rng));
        }
        for owner in 0..self.n {
            for _ in 0..masks {
                xs.push(if owner == self.me {
                    r.random(&mut self.rng)
                } else {
                    0
                });
            }
        }
        xs.push(r.random(&mut self.rng));
        let macs = self.authenticate(mesh, &xs).await?;
        let shares: Vec<Share<u128>> = xs
            .iter()
            .zip(&macs)
            .map(|(v, m)| Share { v: *v, m: *m })
            .collect();
        // authentication check: open Σ χ_j x_j + extra (uniform), then the MAC check
        let seed = self.coin_toss(mesh, "auth-check").await?;
        let mut xof = Xof::new(&seed, b"coterie-spdz/auth-check-chi", 0);
        let mut e = Engine::new(self.empty_prep()).with_check_name("authentication-mac-check");
        let mut acc = shares[total - 1].clone();
        for s in &shares[..total - 1] {
            acc = e.add(&acc, &e.mul_const(s, &r.random_key(&mut xof)));
        }
        e.open_unmasked(mesh, &[acc]).await?;
        e.check(mesh).await?;
        self.progress((randoms + masks * self.n) as u64);
        let rnd = shares[..randoms].to_vec();
        let mut ms = Vec::with_capacity(self.n);
        for owner in 0..self.n {
            let base = randoms + owner * masks;
            ms.push(
                (0..masks)
                    .map(|i| InputMask {
                        share: shares[base + i].clone(),
                        value: (owner == self.me).then_some(xs[base + i]),
                    })
                    .collect(),
            );
        }
        xs.zeroize();
        Ok((rnd, ms))
    }

    /// Produces `count` random bits from the other material (see the module docs).
    pub async fn bits<M: Mesh>(&mut self, mesh: &mut M, count: usize) -> Result<Vec<Share<u128>>> {
        if count == 0 {
            return Ok(Vec::new());
        }
        let n = self.n;
        let mut prep = self.empty_prep();
        prep.triples
            .extend(self.triples(mesh, count * (2 * n - 1)).await?);
        let (rnd, masks) = self.randoms_and_masks(mesh, count * n, count).await?;
        prep.randoms.extend(rnd);
        for (q, m) in prep.masks.iter_mut().zip(masks) {
            q.extend(m);
        }
        let mut e = Engine::new(prep);
        let mut inputs = Vec::with_capacity(n);
        for owner in 0..n {
            let mine: Vec<u128> = if owner == self.me {
                (0..count)
                    .map(|_| (self.rng.next_u64() & 1) as u128)
                    .collect()
            } else {
                Vec::new()
            };
            let vals = (owner == self.me).then_some(mine.as_slice());
            inputs.push(e.input(mesh, owner, vals, count).await?);
        }
        // bit checks: β(1 − β) = 0 for every input
        let one = 1u128;
        let all: Vec<Share<u128>> = inputs.iter().flatten().cloned().collect();
        let om: Vec<Share<u128>> = all.iter().map(|x| e.add_const(&e.neg(x), &one)).collect();
        let prod = e.mul(mesh, &all, &om).await?;
        let opened = e.open(mesh, &prod).await?;
        if opened.iter().any(|v| *v != 0) {
            let err = Error::PrepCheckFailed {
                check: "random-bit-input",
                party: self.me,
            };
            mesh.abort(&err.to_string()).await;
            return Err(err);
        }
        // XOR all inputs
        let mut acc = inputs[0].clone();
        for inp in &inputs[1..] {
            let p = e.mul(mesh, &acc, inp).await?;
            acc = acc
                .iter()
                .zip(inp)
                .zip(&p)
                .map(|((x, y), xy)| {
                    let s = e.add(x, y);
                    e.sub(&s, &e.mul_const(xy, &2))
                })
                .collect();
        }
        e.check(mesh).await?;
        Ok(acc)
    }

    /// Produces a party's whole [`VecPrep`] with `counts` of every kind.
    pub async fn produce<M: Mesh>(&mut self, mesh: &mut M, counts: Counts) -> Result<VecPrep<Z2k>> {
        let mut p = self.empty_prep();
        p.triples.extend(self.triples(mesh, counts.triples).await?);
        p.bits.extend(self.bits(mesh, counts.bits).await?);
        let (rnd, masks) = self
            .randoms_and_masks(mesh, counts.randoms, counts.masks_per_party)
            .await?;
        p.randoms.extend(rnd);
        for (q, m) in p.masks.iter_mut().zip(masks) {
            q.extend(m);
        }
        debug_assert_eq!(p.party(), self.me);
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_packing_round_trip() {
        let mut rng = coterie_math::prg::Csprng::from_seed_insecure_for_tests([3; 32]);
        let widths: Vec<u32> = (0..300).map(|i| (i * 37 % 129) as u32).collect();
        let vals: Vec<u128> = widths
            .iter()
            .map(|_| ((rng.next_u64() as u128) << 64) | rng.next_u64() as u128)
            .collect();
        let mut w = BitWriter::default();
        for (v, n) in vals.iter().zip(&widths) {
            w.put(*v, *n);
        }
        let total: u64 = widths.iter().map(|n| *n as u64).sum();
        let b = w.finish();
        assert!(BitReader::new(&b, total + 64).is_none());
        let mut r = BitReader::new(&b, total).unwrap();
        for (v, n) in vals.iter().zip(&widths) {
            let want = if *n == 128 {
                *v
            } else {
                v & ((1u128 << n) - 1)
            };
            assert_eq!(r.get(*n), want, "width {n}");
        }
    }
}
