//! Π_Decrypt with per-value SingleCheck openings (seed 000 §10.4), in two schedules:
//! [`decrypt_strict_single_check`] (strict, 9 rounds: each opening followed by its own check)
//! and [`decrypt_pipelined`] (5 rounds, described below).
//!
//! Every opened value gets its own SingleCheck (SPDZ_2k: `σ_i = m_i − α_i·x̃` over
//! `Z_{2^{k+s}}`, committed, then opened, `Σ σ_i = 0`), as in the paper's cost count (§10.3:
//! share plus shifted MAC share per opened value). Each value is opened in full (`k+s` bits)
//! with its bits from `t` up masked by `2^t·[ρ]`, so only the intended `t` bits are revealed
//! (§9.2).
//!
//! # Rounds and messages per round of every schedule
//!
//! Each round is one [`Mesh::exchange_all_tagged`]. Over a plain mesh it is all-to-all: `n(n−1)`
//! messages, one hop. Over [`coterie_net::KingMesh`] it is relayed through a king with
//! end-to-end tags: `2(n−1)` messages (the king sends `n−1`, every other party 1), two hops, plus
//! a one-time key set-up of `(n−1)(n−2)` messages when the wrapper is made. The MAC checks are
//! unchanged (nothing is summed at the king). `crates/threshold/tests/king.rs` counts these.
//!
//! | schedule                                                | rounds | all-to-all | king     |
//! |---------------------------------------------------------|--------|------------|----------|
//! | strict Π_Decrypt, batched checks ([`crate::online`])    | 15     | `n(n−1)`   | `2(n−1)` |
//! | strict, SingleChecks ([`decrypt_strict_single_check`])  | 9      | `n(n−1)`   | `2(n−1)` |
//! | pipelined ([`decrypt_pipelined`])                       | 5      | `n(n−1)`   | `2(n−1)` |
//!
//! The last two columns are messages per round. Strict Π_Decrypt: 3 openings and 3 batched MAC
//! checks of 4 rounds each; strict SingleChecks: 3 × (open, commit σ, open σ). At 16 parties a
//! round is 240 messages all-to-all and 30 through the king (a pipelined decryption: 1200
//! against 150); each king round costs two one-way link latencies instead of one, and the
//! king's uplink carries `(n−1)²` payloads a round.
//!
//! # Pipelined schedule: 5 rounds, with an authenticated output mask
//!
//! The three openings and their MAC checks overlap, and the final value `z − e` is revealed
//! masked by a random `w` until the first two openings are authenticated:
//!
//! ```text
//! R1: shares of V1 = z + r (l bits); commit to my shares of (w, w'); commit to a coin share
//! R2: shares of V2 = y + rM (d+1 bits); commit σ(V1) + digest of V1; open the coin: χ = Σ coins
//! R3: shares of V3 = z − e + w (k bits) and of Y = w + χ·w' (in full); open σ(V1) → check;
//!     commit σ(V2) + digest of V2
//! R4: open σ(V2) → check (V1, V2 authenticated); commit σ(V3 ‖ Y) + digest of (V3 ‖ Y)
//! R5: open σ(V3 ‖ Y) → check; open the committed (w, w') shares: W = Σ w_i, W' = Σ w'_i;
//!     check W + χ·W' = Y (every value); output μ = (V3 − W) / L
//! ```
//!
//! **Why not the paper's sketch as written.** The paper commits to plain shares of `w` in R1
//! and reveals them in R5 without any check. A commitment binds a cheater to *a* share, not to
//! the *correct* one: committing to `w_i + δ` shifts the output by a chosen `δ` (with `δ = L·c`
//! the final "multiple of L" test does not catch it), an integrity attack. An earlier version
//! here MAC-checked the opened `W` instead (open in R5, commit σ in R6, open σ in R7: 7 rounds).
//! This version keeps the paper's 5 rounds and closes the gap with a random linear combination:
//! `Y = w + χ·w'` is opened and MAC-checked like every other value (riding along with V3), where
//! `χ` is a coin tossed *after* every party committed to its shares of `w` and `w'`. If the
//! opened shares are off by `(δ, δ')`, the test `W + χ·W' = Y` (in `Z_{2^{k+s}}`, `Y` authentic)
//! passes only if `δ + χ·δ' = 0`; for `δ ≠ 0 mod 2^k` (the only shifts that change the output)
//! this fixes `χ` modulo at least `2^{s+1}`, so a cheater passes with probability at most
//! `2^{-(s+1)}`, the SPDZ_2k check's own bound. `Y` reveals nothing about `w` (`w'` is uniform
//! and never used again); `W` is opened only after V1 and V2 are authenticated, so no value that
//! depends on the noise is revealed before (V3 is masked by the still-secret uniform `w`, and its
//! bits above `k` by `2^k·ρ`, so `V3 − W` reveals only `z − e mod 2^k` and uniform high bits).
//! Each honest party runs every check in its own view, so a party that equivocates (different
//! coins, commitments or shares to different peers) can only cause an abort; the digests echo
//! the opened V1, V2 and V3 ‖ Y.

use coterie_net::Mesh;
use coterie_net::commit::{Commitment, Opening, commit, verify};
use coterie_spdz::{Engine, Preprocessing, Ring, Z2k};
use serde::{Deserialize, Serialize};
use zeroize::Zeroize;

use crate::ciphertext::LweCiphertext;
use crate::gates::{GatePool, Sh, ShareOps};
use crate::keys::SharedKey;
use crate::linmaps::LinOps;
use crate::online::{
    PREFETCH_AHEAD, composed_mask, prefetch_masks, prefetch_u, prefetch_y, select_u, select_y,
    shifted_phases,
};
use crate::params::Params;
use crate::{Error, Result};

/// Wire format version of the pipelined schedule's messages.
pub const PIPELINE_WIRE_VERSION: u8 = 2;
/// Wire tags of the pipelined schedule: round `r` (1..=5) is sent with tag `TAG_BASE + r`
/// (public so that cheating tests can select a round's messages on a tampering mesh).
pub const TAG_BASE: u32 = 0x7D00_0000;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct RoundMsg {
    version: u8,
    #[serde(with = "byte_string")]
    shares: Vec<u8>,
    digest: Option<[u8; 32]>,
    commit: Option<Commitment>,
    open: Option<Opening>,
    #[serde(with = "byte_string")]
    opened_sigma: Vec<u8>,
    /// Pipelined schedule: commitment to this party's shares of `(w, w')` (R1).
    commit_w: Option<Commitment>,
    /// Pipelined schedule: commitment to this party's coin share of `χ` (R1).
    commit_coin: Option<Commitment>,
    /// Opening of the coin (R2) or of the `(w, w')` shares (R5).
    open_aux: Option<Opening>,
    #[serde(with = "byte_string")]
    aux: Vec<u8>,
}

/// `Vec<u8>` as one serde byte string (postcard: length and raw bytes) rather than a sequence
/// of varint-encoded bytes. Bounded by the mesh's frame size.
mod byte_string {
    use serde::de::{Error, Visitor};
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(v)
    }

    struct BytesVisitor;
    impl Visitor<'_> for BytesVisitor {
        type Value = Vec<u8>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("bytes")
        }
        fn visit_bytes<E: Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
            Ok(v.to_vec())
        }
        fn visit_byte_buf<E: Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
            Ok(v)
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        d.deserialize_byte_buf(BytesVisitor)
    }
}

/// One batch of values being opened and checked.
struct Opened {
    /// The opening's ring `Z_{2^bits}`, `bits = t + s` (the value's `t` bits plus `s`).
    bits: u32,
    /// Values mod `2^bits`.
    vals: Vec<u128>,
    /// This party's MAC shares of them.
    macs: Vec<u128>,
    /// This party's σ vector, encoded, its commitment and opening.
    sigma: Vec<u8>,
    commit: Option<(Commitment, Opening)>,
    /// Everyone's σ commitments.
    commits: Vec<Commitment>,
}

impl Drop for Opened {
    fn drop(&mut self) {
        self.macs.zeroize();
    }
}

/// Bytes per value of an opening over `Z_{2^bits}` (`bits = t + s`).
pub fn width_bytes(bits: u32) -> usize {
    bits.div_ceil(8) as usize
}

/// Encodes the values mod `2^bits`, little-endian, [`width_bytes`] bytes each.
fn encode_width(xs: &[u128], bits: u32) -> Vec<u8> {
    let w = width_bytes(bits);
    let mut out = Vec::with_capacity(xs.len() * w);
    for x in xs {
        out.extend_from_slice(&Z2k::low_bits(*x, bits).to_le_bytes()[..w]);
    }
    out
}

/// Decodes exactly `count` values of [`width_bytes`] bytes; bits at or above `bits` refused.
fn decode_width(bytes: &[u8], count: usize, bits: u32) -> Option<Vec<u128>> {
    let w = width_bytes(bits);
    if Some(bytes.len()) != count.checked_mul(w) {
        return None;
    }
    bytes
        .chunks_exact(w)
        .map(|c| {
            let mut b = [0u8; 16];
            b[..w].copy_from_slice(c);
            let x = u128::from_le_bytes(b);
            (Z2k::low_bits(x, bits) == x).then_some(x)
        })
        .collect()
}

fn digest(sid: u64, what: &str, bytes: &[u8]) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key("coterie-threshold 2026 pipelined digest v1");
    h.update(&sid.to_le_bytes());
    h.update(what.as_bytes());
    h.update(bytes);
    *h.finalize().as_bytes()
}

struct Session<'a, P: Preprocessing<Z2k>, M: Mesh> {
    eng: &'a mut Engine<Z2k, P>,
    mesh: &'a mut M,
    ring: Z2k,
    alpha: u128,
    sid: u64,
    round: u32,
    /// Random authenticated values taken ahead for the masks (in the order they are used);
    /// empty: [`Session::mask`] takes them from the engine.
    ahead: std::collections::VecDeque<Sh>,
}

impl<P: Preprocessing<Z2k>, M: Mesh> Session<'_, P, M> {
    async fn fail(&mut self, check: &'static str, party: usize) -> Error {
        let e = Error::Abort { check, party };
        self.mesh.abort(&e.to_string()).await;
        e
    }

    async fn exchange(&mut self, msg: RoundMsg) -> Result<Vec<RoundMsg>> {
        self.round += 1;
        let all: Vec<RoundMsg> = self
            .mesh
            .exchange_all_tagged(TAG_BASE + self.round, &msg)
            .await
            .map_err(coterie_spdz::Error::from)?;
        for (j, m) in all.iter().enumerate() {
            if m.version != PIPELINE_WIRE_VERSION {
                return Err(self.fail("wire-version", j).await);
            }
        }
        Ok(all)
    }

    /// Bits of the opening of a `t`-bit value: `t + s`, at most the share ring's `k + s`.
    fn bits_for(&self, t: u32) -> u32 {
        let (k, s) = self.ring.power_of_two().unwrap_or((64, 64));
        (t + s).min(k + s)
    }

    /// Masks the bits from `t` up and returns this party's shares to send (mod `2^{t+s}`: the
    /// paper's `t + s` bits per opened `t`-bit value).
    fn mask(&mut self, xs: &[Sh], t: u32) -> Result<(Vec<Sh>, Vec<u8>)> {
        let rho: Vec<Sh> = if self.ahead.is_empty() {
            self.eng.prep_mut().randoms(xs.len())?
        } else if self.ahead.len() >= xs.len() {
            self.ahead.drain(..xs.len()).collect()
        } else {
            return Err(Error::Invariant("random values taken ahead ran out".into()));
        };
        let ops = ShareOps(self.ring);
        let masked: Vec<Sh> = xs
            .iter()
            .zip(&rho)
            .map(|(x, r)| ops.add(x, &self.eng.mul_const(r, &(1u128 << t))))
            .collect();
        let bytes = encode_width(
            &masked.iter().map(|s| s.v).collect::<Vec<_>>(),
            self.bits_for(t),
        );
        Ok((masked, bytes))
    }

    /// Sums everyone's shares (mod `2^bits`) into the opened values.
    async fn sum(&mut self, all: &[RoundMsg], masked: Vec<Sh>, bits: u32) -> Result<Opened> {
        let me = self.mesh.id();
        let mut vals: Vec<u128> = masked.iter().map(|s| Z2k::low_bits(s.v, bits)).collect();
        for (j, m) in all.iter().enumerate() {
            if j == me {
                continue;
            }
            let theirs = match decode_width(&m.shares, vals.len(), bits) {
                Some(v) => v,
                None => return Err(self.fail("share-decoding", j).await),
            };
            for (v, t) in vals.iter_mut().zip(theirs) {
                *v = Z2k::low_bits(v.wrapping_add(t), bits);
            }
        }
        let macs: Vec<u128> = masked.iter().map(|s| s.m).collect();
        let sigma: Vec<u128> = macs
            .iter()
            .zip(&vals)
            .map(|(m, x)| Z2k::low_bits(m.wrapping_sub(self.alpha.wrapping_mul(*x)), bits))
            .collect();
        Ok(Opened {
            bits,
            vals,
            macs,
            sigma: encode_width(&sigma, bits),
            commit: None,
            commits: Vec::new(),
        })
    }

    fn commit_sigma(&self, o: &mut Opened, what: &str) -> Commitment {
        let (c, op) = commit(
            &format!("coterie-threshold/pipelined/{}/{what}", self.sid),
            self.mesh.id(),
            &o.sigma,
        );
        o.commit = Some((c, op));
        c
    }

    async fn take_commits(&mut self, o: &mut Opened, all: &[RoundMsg], what: &str) -> Result<()> {
        let d = digest(self.sid, what, &self.ring.encode(&o.vals));
        for (j, m) in all.iter().enumerate() {
            match (m.commit, m.digest) {
                (Some(c), Some(dj)) if dj == d => o.commits.push(c),
                (_, Some(_)) => return Err(self.fail("opened-values-echo", j).await),
                _ => return Err(self.fail("missing-commitment", j).await),
            }
        }
        Ok(())
    }

    async fn verify_sigmas(&mut self, o: &Opened, all: &[RoundMsg], what: &str) -> Result<()> {
        let domain = format!("coterie-threshold/pipelined/{}/{what}", self.sid);
        let mut total = vec![0u128; o.vals.len()];
        for (j, m) in all.iter().enumerate() {
            let (Some(op), bytes) = (&m.open, &m.opened_sigma) else {
                return Err(self.fail("missing-mac-opening", j).await);
            };
            if !verify(&domain, j, bytes, &o.commits[j], op) {
                return Err(self.fail("mac-commitment", j).await);
            }
            let s = match decode_width(bytes, o.vals.len(), o.bits) {
                Some(s) => s,
                None => return Err(self.fail("mac-decoding", j).await),
            };
            for (t, x) in total.iter_mut().zip(s) {
                *t = Z2k::low_bits(t.wrapping_add(x), o.bits);
            }
        }
        if total.iter().any(|t| *t != 0) {
            let me = self.mesh.id();
            return Err(self.fail("mac-check", me).await);
        }
        Ok(())
    }
}

fn opening_of(o: &Opened) -> Result<(Option<Opening>, Vec<u8>)> {
    let (_, op) = o
        .commit
        .ok_or_else(|| Error::Invariant("σ not committed".into()))?;
    Ok((Some(op), o.sigma.clone()))
}

/// Π_Decrypt for a batch with the pipelined 5-round schedule (see the module docs). Same
/// interface and guarantees as [`crate::online::decrypt`]; `sid` must be unique per call within
/// a session (it separates the commitments of different calls).
///
/// # Example
///
/// Two parties, **insecure** toy parameters and dealer material (tests only):
///
/// ```
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
/// use coterie_spdz::{Counts, Engine, InsecureDealer, Z2k};
/// use coterie_threshold::gates::{GatePool, prep_bundles};
/// use coterie_threshold::keys::SharedKey;
/// use coterie_threshold::pipelined::decrypt_pipelined;
/// use coterie_threshold::{LweCiphertext, Params};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let p = Params::insecure_toy(4, 16, 2, 3).unwrap();
/// let lt = p.lt().unwrap();
/// let sk = [1i64, 0, 1, 1];
/// let mut rng = rand::rng();
/// let ct = LweCiphertext::encrypt_with_secret_key(&sk, 2, 50, 16, 2, &mut rng);
/// let ring = Z2k::new(16, 64).unwrap();
/// let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
/// let counts = Counts {
///     triples: lt.mults_per_bundle(),
///     bits: lt.bits_per_bundle(),
///     randoms: 64,
///     masks_per_party: 0,
/// };
/// let keys = SharedKey::insecure_deal(&dealer, &ring, &sk, &mut rng);
/// let mut tasks = Vec::new();
/// let parties = InMemoryMesh::group(2, MeshOptions::default());
/// for ((mut mesh, prep), key) in parties.into_iter().zip(dealer.deal(counts, &mut rng)).zip(keys) {
///     let ct = ct.clone();
///     tasks.push(tokio::spawn(async move {
///         let mut eng = Engine::new(prep);
///         let (bundles, _) = prep_bundles(&mut eng, &mut mesh, &lt, 1, 0).await?;
///         let mut pool = GatePool::new(lt);
///         pool.push(bundles)?;
///         let mu = decrypt_pipelined(&mut eng, &mut mesh, &p, &key, &[ct], &mut pool, 1).await?;
///         mesh.close().await.ok();
///         Ok::<_, coterie_threshold::Error>(mu)
///     }));
/// }
/// for t in tasks {
///     assert_eq!(t.await.unwrap().unwrap(), vec![2]);
/// }
/// # });
/// ```
pub async fn decrypt_pipelined<P: Preprocessing<Z2k>, M: Mesh>(
    eng: &mut Engine<Z2k, P>,
    mesh: &mut M,
    params: &Params,
    key: &SharedKey,
    cts: &[LweCiphertext],
    pool: &mut GatePool,
    sid: u64,
) -> Result<Vec<u64>> {
    pipelined_inner(eng, mesh, params, key, cts, pool, sid).await
}

#[allow(clippy::too_many_arguments)]
async fn pipelined_inner<P: Preprocessing<Z2k>, M: Mesh>(
    eng: &mut Engine<Z2k, P>,
    mesh: &mut M,
    params: &Params,
    key: &SharedKey,
    cts: &[LweCiphertext],
    pool: &mut GatePool,
    sid: u64,
) -> Result<Vec<u64>> {
    params.validate()?;
    for (i, ct) in cts.iter().enumerate() {
        ct.check(params)
            .map_err(|e| Error::Ciphertext(format!("ciphertext {i}: {e}")))?;
    }
    if eng.ring().k() != params.k {
        return Err(Error::Params(
            "engine ring does not match the ciphertexts".into(),
        ));
    }
    key.check(params)?;
    let lt = params.lt()?;
    if *pool.lt() != lt {
        return Err(Error::Gate(
            "the pool holds bundles of other parameters".into(),
        ));
    }
    if mesh.id() != eng.party() {
        return Err(Error::Params(
            "mesh and engine are different parties".into(),
        ));
    }
    let gates = pool.take(cts.len())?;
    let ring = *eng.ring();
    let ops = ShareOps(ring);
    let alpha = eng.prep_mut().mac_key_share();
    // All 5 random values per decryption in one take (one durable cursor write of the store
    // instead of five), in the order they are used: w, w', then the masks of V1, V2, V3.
    let mut ahead: std::collections::VecDeque<Sh> = eng.prep_mut().randoms(5 * cts.len())?.into();
    let ws: Vec<Sh> = ahead.drain(..cts.len()).collect();
    let ws2: Vec<Sh> = ahead.drain(..cts.len()).collect();
    let zs: Vec<Sh> = shifted_phases(eng, params, key, cts)?;
    let rs = (0..cts.len())
        .map(|j| {
            prefetch_masks(&lt, &gates, j + PREFETCH_AHEAD);
            composed_mask(eng, &lt, &gates, j)
        })
        .collect::<Result<Vec<_>>>()?;
    let mut s = Session {
        eng,
        mesh,
        ring,
        alpha,
        sid,
        round: 0,
        ahead,
    };
    let me = s.mesh.id();
    let nparties = s.mesh.n();
    let (l, t, k) = (lt.l, lt.d() + 1, params.k);
    let count = cts.len();
    let dom_w = format!("coterie-threshold/pipelined/{sid}/w-shares");
    let dom_coin = format!("coterie-threshold/pipelined/{sid}/coin");
    let mut w_bytes = ring.encode(
        &ws.iter()
            .map(|x| x.v)
            .chain(ws2.iter().map(|x| x.v))
            .collect::<Vec<_>>(),
    );
    let (cw, ow) = commit(&dom_w, me, &w_bytes);
    let my_coin = {
        let mut rng = rand::rng();
        ring.random(&mut rng)
    };
    let coin_bytes = ring.encode(&[my_coin]);
    let (cc, oc) = commit(&dom_coin, me, &coin_bytes);

    // R1: V1 = z + r; commit to the (w, w') shares and to a coin share
    let v1: Vec<Sh> = zs.iter().zip(&rs).map(|(z, r)| ops.add(z, r)).collect();
    let (m1, b1) = s.mask(&v1, l)?;
    let all = s
        .exchange(RoundMsg {
            version: PIPELINE_WIRE_VERSION,
            shares: b1,
            commit_w: Some(cw),
            commit_coin: Some(cc),
            ..Default::default()
        })
        .await?;
    let mut commits_w = Vec::with_capacity(nparties);
    let mut commits_coin = Vec::with_capacity(nparties);
    for (j, m) in all.iter().enumerate() {
        match (m.commit_w, m.commit_coin) {
            (Some(a), Some(b)) => {
                commits_w.push(a);
                commits_coin.push(b);
            }
            _ => return Err(s.fail("missing-commitment", j).await),
        }
    }
    let mut o1 = s.sum(&all, m1, s.bits_for(l)).await?;
    let z_open: Vec<u128> = o1.vals.iter().map(|v| Z2k::low_bits(*v, l)).collect();

    // R2: V2 = y + rM; commit σ(V1); open the coin share
    let v2 = z_open
        .iter()
        .enumerate()
        .map(|(j, &zo)| {
            if let Some(&ahead) = z_open.get(j + PREFETCH_AHEAD) {
                prefetch_y(&lt, &gates, j + PREFETCH_AHEAD, ahead);
            }
            select_y(s.eng, &lt, &gates, j, zo)
        })
        .collect::<Result<Vec<_>>>()?;
    let (m2, b2) = s.mask(&v2, t)?;
    let c1 = s.commit_sigma(&mut o1, "v1");
    let d1 = digest(sid, "v1", &ring.encode(&o1.vals));
    let all = s
        .exchange(RoundMsg {
            version: PIPELINE_WIRE_VERSION,
            shares: b2,
            digest: Some(d1),
            commit: Some(c1),
            open_aux: Some(oc),
            aux: coin_bytes,
            ..Default::default()
        })
        .await?;
    s.take_commits(&mut o1, &all, "v1").await?;
    let mut chi = 0u128;
    for (j, m) in all.iter().enumerate() {
        let ok = m
            .open_aux
            .is_some_and(|op| verify(&dom_coin, j, &m.aux, &commits_coin[j], &op));
        let c = match (ok, ring.decode(&m.aux, 1)) {
            (true, Ok(c)) => c[0],
            _ => return Err(s.fail("coin-opening", j).await),
        };
        chi = ring.add(&chi, &c);
    }
    let mut o2 = s.sum(&all, m2, s.bits_for(t)).await?;
    let y_open: Vec<usize> = o2
        .vals
        .iter()
        .map(|v| Z2k::low_bits(*v, t) as usize)
        .collect();

    // R3: V3 = z - e + w (masked above k) and Y = w + χ·w' (in full); open σ(V1); commit σ(V2)
    let two_l = 1u128 << l;
    let mut v3 = Vec::with_capacity(count);
    for (j, (((r, z), w), (&zo, &yo))) in rs
        .iter()
        .zip(&zs)
        .zip(&ws)
        .zip(z_open.iter().zip(&y_open))
        .enumerate()
    {
        if let Some(&ahead) = y_open.get(j + PREFETCH_AHEAD) {
            prefetch_u(&lt, &gates, j + PREFETCH_AHEAD, ahead);
        }
        let u = select_u(&lt, &gates, j, yo)?;
        let e = s.eng.add(
            &s.eng.sub(&s.eng.constant(&zo), r),
            &s.eng.mul_const(&u, &two_l),
        );
        v3.push(ops.add(&ops.sub(z, &e), w));
    }
    // every table entry this batch needs is read: wipe the bundles now
    drop(gates);
    let (mut m3, _) = s.mask(&v3, k)?;
    for (w, w2) in ws.iter().zip(&ws2) {
        m3.push(ops.add(w, &s.eng.mul_const(w2, &chi)));
    }
    // V3 (k bits) and Y (the whole share ring) are both opened over Z_{2^{k+s}}
    let b3 = encode_width(&m3.iter().map(|x| x.v).collect::<Vec<_>>(), s.bits_for(k));
    let c2 = s.commit_sigma(&mut o2, "v2");
    let d2 = digest(sid, "v2", &ring.encode(&o2.vals));
    let (op1, sig1) = opening_of(&o1)?;
    let all = s
        .exchange(RoundMsg {
            version: PIPELINE_WIRE_VERSION,
            shares: b3,
            digest: Some(d2),
            commit: Some(c2),
            open: op1,
            opened_sigma: sig1,
            ..Default::default()
        })
        .await?;
    s.verify_sigmas(&o1, &all, "v1").await?;
    s.take_commits(&mut o2, &all, "v2").await?;
    let mut o3 = s.sum(&all, m3, s.bits_for(k)).await?;

    // R4: open σ(V2); commit σ(V3 ‖ Y)
    let c3 = s.commit_sigma(&mut o3, "v3y");
    let d3 = digest(sid, "v3y", &ring.encode(&o3.vals));
    let (op2, sig2) = opening_of(&o2)?;
    let all = s
        .exchange(RoundMsg {
            version: PIPELINE_WIRE_VERSION,
            digest: Some(d3),
            commit: Some(c3),
            open: op2,
            opened_sigma: sig2,
            ..Default::default()
        })
        .await?;
    s.verify_sigmas(&o2, &all, "v2").await?;
    s.take_commits(&mut o3, &all, "v3y").await?;

    // R5 (V1 and V2 are authenticated now): open σ(V3 ‖ Y) and the committed (w, w') shares
    let (op3, sig3) = opening_of(&o3)?;
    let all = s
        .exchange(RoundMsg {
            version: PIPELINE_WIRE_VERSION,
            open: op3,
            opened_sigma: sig3,
            open_aux: Some(ow),
            aux: std::mem::take(&mut w_bytes),
            ..Default::default()
        })
        .await?;
    s.verify_sigmas(&o3, &all, "v3y").await?;
    let mut w_sum = vec![0u128; 2 * count];
    for (j, m) in all.iter().enumerate() {
        let ok = m
            .open_aux
            .is_some_and(|op| verify(&dom_w, j, &m.aux, &commits_w[j], &op));
        let sh = match (ok, ring.decode(&m.aux, 2 * count)) {
            (true, Ok(sh)) => sh,
            _ => return Err(s.fail("w-opening", j).await),
        };
        for (a, b) in w_sum.iter_mut().zip(sh) {
            *a = ring.add(a, &b);
        }
    }
    let (w_open, w2_open) = w_sum.split_at(count);
    let (v3_open, y_open) = o3.vals.split_at(count);
    for ((w, w2), y) in w_open.iter().zip(w2_open).zip(y_open) {
        if ring.add(w, &ring.mul(&chi, w2)) != *y {
            return Err(s.fail("w-consistency", me).await);
        }
    }
    v3_open
        .iter()
        .zip(w_open)
        .map(|(v, w)| {
            let mu = Z2k::low_bits(v.wrapping_sub(*w), k);
            if mu & (two_l - 1) != 0 {
                return Err(Error::Invariant("z - e is not a multiple of L".into()));
            }
            Ok((mu >> l) as u64)
        })
        .collect()
}

impl<P: Preprocessing<Z2k>, M: Mesh> Session<'_, P, M> {
    /// SingleCheck opening of `xs` with the bits from `t` up masked: 3 rounds (shares;
    /// commitments to σ with a digest of the opened values; σ openings and the check).
    /// Returns the full share-ring values, authenticated.
    async fn open_single_check(&mut self, xs: &[Sh], t: u32, what: &str) -> Result<Vec<u128>> {
        let (m, b) = self.mask(xs, t)?;
        let bits = self.bits_for(t);
        let all = self
            .exchange(RoundMsg {
                version: PIPELINE_WIRE_VERSION,
                shares: b,
                ..Default::default()
            })
            .await?;
        let mut o = self.sum(&all, m, bits).await?;
        let c = self.commit_sigma(&mut o, what);
        let d = digest(self.sid, what, &self.ring.encode(&o.vals));
        let all = self
            .exchange(RoundMsg {
                version: PIPELINE_WIRE_VERSION,
                digest: Some(d),
                commit: Some(c),
                ..Default::default()
            })
            .await?;
        self.take_commits(&mut o, &all, what).await?;
        let (op, sigma) = opening_of(&o)?;
        let all = self
            .exchange(RoundMsg {
                version: PIPELINE_WIRE_VERSION,
                open: op,
                opened_sigma: sigma,
                ..Default::default()
            })
            .await?;
        self.verify_sigmas(&o, &all, what).await?;
        Ok(o.vals.clone())
    }
}

/// Π_Decrypt for a batch with the **strict 9-round** schedule of seed 000 §10.4: each of the
/// three openings (`z'`, `y'`, `z − e`) is followed by its SingleCheck (commit to σ, open σ)
/// before anything depends on it; the output needs no mask. Same interface and guarantees as
/// [`crate::online::decrypt`] (which runs the engine's 4-round batched check instead, 15
/// rounds); `sid` must be unique per call within a session.
///
/// # Example
///
/// Two parties, **insecure** toy parameters and dealer material (tests only):
///
/// ```
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
/// use coterie_spdz::{Counts, Engine, InsecureDealer, Z2k};
/// use coterie_threshold::gates::{GatePool, prep_bundles};
/// use coterie_threshold::keys::SharedKey;
/// use coterie_threshold::pipelined::decrypt_strict_single_check;
/// use coterie_threshold::{LweCiphertext, Params};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let p = Params::insecure_toy(4, 16, 2, 3).unwrap();
/// let lt = p.lt().unwrap();
/// let sk = [1i64, 0, 1, 1];
/// let mut rng = rand::rng();
/// let ct = LweCiphertext::encrypt_with_secret_key(&sk, 2, 50, 16, 2, &mut rng);
/// let ring = Z2k::new(16, 64).unwrap();
/// let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
/// let counts = Counts {
///     triples: lt.mults_per_bundle(),
///     bits: lt.bits_per_bundle(),
///     randoms: 64,
///     masks_per_party: 0,
/// };
/// let keys = SharedKey::insecure_deal(&dealer, &ring, &sk, &mut rng);
/// let mut tasks = Vec::new();
/// let parties = InMemoryMesh::group(2, MeshOptions::default());
/// for ((mut mesh, prep), key) in parties.into_iter().zip(dealer.deal(counts, &mut rng)).zip(keys) {
///     let ct = ct.clone();
///     tasks.push(tokio::spawn(async move {
///         let mut eng = Engine::new(prep);
///         let (bundles, _) = prep_bundles(&mut eng, &mut mesh, &lt, 1, 0).await?;
///         let mut pool = GatePool::new(lt);
///         pool.push(bundles)?;
///         let mu = decrypt_strict_single_check(&mut eng, &mut mesh, &p, &key, &[ct], &mut pool, 1).await?;
///         mesh.close().await.ok();
///         Ok::<_, coterie_threshold::Error>(mu)
///     }));
/// }
/// for t in tasks {
///     assert_eq!(t.await.unwrap().unwrap(), vec![2]);
/// }
/// # });
/// ```
pub async fn decrypt_strict_single_check<P: Preprocessing<Z2k>, M: Mesh>(
    eng: &mut Engine<Z2k, P>,
    mesh: &mut M,
    params: &Params,
    key: &SharedKey,
    cts: &[LweCiphertext],
    pool: &mut GatePool,
    sid: u64,
) -> Result<Vec<u64>> {
    params.validate()?;
    for (i, ct) in cts.iter().enumerate() {
        ct.check(params)
            .map_err(|e| Error::Ciphertext(format!("ciphertext {i}: {e}")))?;
    }
    if eng.ring().k() != params.k || mesh.id() != eng.party() {
        return Err(Error::Params("engine ring or party does not match".into()));
    }
    key.check(params)?;
    let lt = params.lt()?;
    if *pool.lt() != lt {
        return Err(Error::Gate(
            "the pool holds bundles of other parameters".into(),
        ));
    }
    let gates = pool.take(cts.len())?;
    let ring = *eng.ring();
    let ops = ShareOps(ring);
    let alpha = eng.prep_mut().mac_key_share();
    let zs: Vec<Sh> = shifted_phases(eng, params, key, cts)?;
    let rs = (0..cts.len())
        .map(|j| {
            prefetch_masks(&lt, &gates, j + PREFETCH_AHEAD);
            composed_mask(eng, &lt, &gates, j)
        })
        .collect::<Result<Vec<_>>>()?;
    let mut s = Session {
        eng,
        mesh,
        ring,
        alpha,
        sid,
        round: 0,
        ahead: Default::default(),
    };
    let (l, t, k) = (lt.l, lt.d() + 1, params.k);
    let v1: Vec<Sh> = zs.iter().zip(&rs).map(|(z, r)| ops.add(z, r)).collect();
    let z_open: Vec<u128> = s
        .open_single_check(&v1, l, "strict-v1")
        .await?
        .iter()
        .map(|v| Z2k::low_bits(*v, l))
        .collect();
    let v2 = z_open
        .iter()
        .enumerate()
        .map(|(j, &zo)| {
            if let Some(&ahead) = z_open.get(j + PREFETCH_AHEAD) {
                prefetch_y(&lt, &gates, j + PREFETCH_AHEAD, ahead);
            }
            select_y(s.eng, &lt, &gates, j, zo)
        })
        .collect::<Result<Vec<_>>>()?;
    let y_open: Vec<usize> = s
        .open_single_check(&v2, t, "strict-v2")
        .await?
        .iter()
        .map(|v| Z2k::low_bits(*v, t) as usize)
        .collect();
    let two_l = 1u128 << l;
    let mut v3 = Vec::with_capacity(cts.len());
    for (j, ((r, z), (&zo, &yo))) in rs
        .iter()
        .zip(&zs)
        .zip(z_open.iter().zip(&y_open))
        .enumerate()
    {
        if let Some(&ahead) = y_open.get(j + PREFETCH_AHEAD) {
            prefetch_u(&lt, &gates, j + PREFETCH_AHEAD, ahead);
        }
        let u = select_u(&lt, &gates, j, yo)?;
        let e = s.eng.add(
            &s.eng.sub(&s.eng.constant(&zo), r),
            &s.eng.mul_const(&u, &two_l),
        );
        v3.push(ops.sub(z, &e));
    }
    // every table entry this batch needs is read: wipe the bundles now
    drop(gates);
    let mus = s.open_single_check(&v3, k, "strict-v3").await?;
    mus.iter()
        .map(|v| {
            let mu = Z2k::low_bits(*v, k);
            if mu & (two_l - 1) != 0 {
                return Err(Error::Invariant("z - e is not a multiple of L".into()));
            }
            Ok((mu >> l) as u64)
        })
        .collect()
}
