//! Correlated randomness from HSS (spec §6.5–§6.6, paper Sec. 5.3): bilinear-form correlations,
//! Beaver triples over `Z_(2^n)`, matrix-product correlations, truth-table correlations, and
//! [`HssPrep`], a two-party Beaver-triple producer for `coterie-spdz`.
//!
//! # The protocol (spec §6.5)
//!
//! After a one-time key setup ([`crate::protocol::dkg`]) the two parties play fixed roles:
//!
//! * party [`ENCRYPTOR`] (= 1, the paper's `A`) samples its random bits `x_i` and sends one
//!   ElGamal ciphertext `E(x_i)` per bit ([`CtBatch`], `2·|G|` bits each) — a single
//!   ciphertext suffices since every multiplication is **terminal** (spec §4.8: only the `<x·y>`
//!   conversion, no `E(x·c_i)`);
//! * party [`LOADER`] (= 0, the paper's `B`) loads its random bits `y_j` as level-2 shares by
//!   `Pi_L2S` ([`crate::protocol::l2_shares`], one string OT per bit);
//! * then each party alone runs the terminal multiplications `x_i·y_j` it needs
//!   ([`Evaluator::terminal_mult`]: one `Pair` + one `Convert*` each) and combines the results
//!   linearly.
//!
//! Both parties need both roles' values only through these products, so one direction
//! suffices even for Beaver triples: `c = a·b` with `a = a_0 + a_1`, `b = b_0 + b_1` needs the
//! cross terms `a_1·b_0` and `b_1·a_0`, both of the form (party-1 bits)·(party-0 bits).
//!
//! # Output convention
//!
//! Unlike the rest of the crate (difference convention, spec §2), every output here is an
//! **additive sharing that sums** to the value: `share_0 + share_1 = value (mod β)`, the form
//! preprocessing consumers expect. (Party 0 keeps its conversion outputs, party 1 negates its.)
//! Shares are not re-masked with the servers' common PRF (a mask both parties know adds nothing
//! between them); each share is a function of its own party's view only.
//!
//! # Failures and the flag policy
//!
//! Each conversion is Las Vegas (spec §1.1): a wrong product needs **both** parties to flag the
//! same conversion. A party's flag for one *instance* (one bilinear correlation, one triple, one
//! matrix product, one truth table) is the OR of its flags over that instance's conversions.
//! [`FlagPolicy`] decides what happens then:
//!
//! * [`FlagPolicy::Exchange`] (default): at the end each party sends the indices of the
//!   conversions it flagged, per instance ([`FlagList`]; flags are rare, so this is a few bytes);
//!   an instance with a conversion flagged by **both** parties is marked `discarded` by both.
//!   This is exactly Definition 2.1's failure condition per conversion, so every kept instance
//!   is correct, and a discard costs about `δ`. (A single flag bit per instance would not do: a
//!   party flags *some* conversion of a large instance — e.g. the `N1·N2` conversions of a
//!   truth table — with probability near `N1·N2·2^−(d+1)`, so two coarse bits would discard
//!   almost everything unless `d` grew by `log(N1·N2)`.) **Leakage**: each party learns which of
//!   the other's conversions flagged, and a flag is correlated with that conversion's secret
//!   payload with probability of the order of the flag rate `2^−(d+1)` (spec §4.6, §6.1): use it
//!   when that is acceptable.
//! * [`FlagPolicy::Accept`]: nothing is exchanged; each party only knows its own flag; an
//!   instance is wrong with probability at most the failure budget `δ` (the paper's setting for
//!   its cost estimates: "overall failure 1/16"). No flag leakage.
//!
//! The budget: with random bits the average payload of a conversion is `1/4`, so one conversion
//! fails with probability `≤ 2^−(d+3)` (spec §8, terminal, randomized); [`terminal_d`] picks `d`
//! for a number of conversions and a budget `δ`. Each product used only mod `2^m` is converted
//! with the mod-`2^m` flag cancellation of spec §4.8 (for the grade-school form the top terms
//! are used mod 2, 4, …), which only lowers the failure rate.
//!
//! # Communication (spec §6.5, §9 case 20)
//!
//! The paper counts `640n` bits of OT (OT extension, `2n(λ + ℓ)`) plus `1536·2n` bits of
//! ciphertexts: `3712n` bits. Here the ciphertexts are sent packed, exactly `2n·|G|` bytes plus
//! a constant envelope ([`CommStats::ciphertext_bytes`]); the OTs are the crate's base OTs
//! (Chou–Orlandi "simplest OT", one group element from the chooser and two masked
//! `(t+λ)`-bit strings from the sender per bit, postcard-encoded), not OT extension, so the OT
//! part is larger than `640n` — see [`CommStats`].
//!
//! # Security
//!
//! Semi-honest, as in the paper: a party that deviates (encrypts non-bits, chooses inconsistent
//! OT inputs) can make outputs wrong, and its errors may depend on the other party's bits.
//! [`HssPrep`] adds SPDZ_2k's authentication and sacrifice, which catch wrong triples (abort),
//! but not the leakage of such an abort; see its docs.

mod prep;

pub use prep::HssPrep;

use coterie_math::bigint::BigInt;
use coterie_net::Mesh;
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::convert::ScanEngine;
use crate::group::{Elem, Group, GroupId};
use crate::protocol::{MAX_BATCH, l2_shares};
use crate::scheme::{
    Ciphertext, EvalKey, Evaluator, L2Share, Params, PreparedCt, PreparedInput, PublicKey,
    from_bytes, to_bytes,
};
use crate::{Error, Result};

/// Protocol tag of the encryptor's ciphertext batch.
pub const TAG_CORR_CTS: u32 = 0x4853_0201;
/// Protocol tag of the flag exchange.
pub const TAG_CORR_FLAGS: u32 = 0x4853_0202;

/// The party that encrypts its bits (the paper's `A`).
pub const ENCRYPTOR: usize = 1;
/// The party whose bits are loaded as level-2 shares by `Pi_L2S` (the paper's `B`).
pub const LOADER: usize = 0;

/// Largest number of conversions one call runs (a bound on local work, not on security).
pub const MAX_CONVERSIONS: u64 = 1 << 28;

/// What the parties do about Las Vegas flags (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FlagPolicy {
    /// Exchange the flagged conversions and discard instances with a conversion both parties
    /// flagged.
    #[default]
    Exchange,
    /// Exchange nothing; accept the failure budget `δ`.
    Accept,
}

/// Options of the correlation protocols.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CorrOptions {
    /// Pattern length `d` of the conversions; `None` uses the key's `pk.params.d`. (Only the
    /// conversions depend on `d`, so one key serves several failure targets.)
    pub d: Option<u32>,
    /// The flag policy.
    pub policy: FlagPolicy,
}

impl CorrOptions {
    /// Options with pattern length `d` and the default (exchange) policy.
    pub fn with_d(d: u32) -> Self {
        Self {
            d: Some(d),
            policy: FlagPolicy::Exchange,
        }
    }
}

/// The smallest pattern length `d` with `conversions · 2^−(d+3) ≤ delta`: spec §8 for terminal
/// multiplications of random bits (average payload 1/4, so a conversion fails with probability
/// at most `2^−(d+3)`), the budget `delta` split evenly over the conversions.
///
/// ```
/// use coterie_hss::apps::correlated::terminal_d;
/// // an n = 128 triple with overall failure 1/16, per conversion δ/n² (paper Sec. 5.3.1)
/// assert_eq!(terminal_d(128 * 128, 1.0 / 16.0).unwrap(), 15);
/// assert!(terminal_d(0, 0.5).is_err());
/// ```
pub fn terminal_d(conversions: u64, delta: f64) -> Result<u32> {
    if conversions == 0 || !(delta > 0.0 && delta < 1.0) {
        return Err(Error::InvalidParameter(
            "need at least one conversion and 0 < delta < 1".into(),
        ));
    }
    let per = delta / conversions as f64;
    (2u32..=40)
        .find(|&d| 2f64.powi(-(d as i32 + 3)) <= per)
        .ok_or_else(|| Error::InvalidParameter("failure target needs d > 40".into()))
}

/// Parameters for an `n_bits`-bit Beaver triple with overall failure `delta` on the paper's
/// group `p = 2^1536 − 11510609` (80-bit security target, 160-bit key, base 16 — the base only
/// affects the key setup here, since terminal multiplications convert only `<x·y>`), window
/// `R = 5` (each ciphertext takes part in about `n/2` pairings), and `d` from [`terminal_d`]
/// with the paper's accounting of `n²` conversions (per-conversion failure `δ/n²`; the exact
/// count is `n(n+1)`, so the bound is `δ·(1 + 1/n)` before the mod-`2^m` cancellation).
///
/// ```
/// use coterie_hss::apps::correlated::triple_params;
/// let p = triple_params(128, 1.0 / 16.0).unwrap();
/// assert_eq!(p.d, 15);
/// ```
pub fn triple_params(n_bits: u32, delta: f64) -> Result<Params> {
    check_bits(n_bits)?;
    let n = u64::from(n_bits);
    Ok(Params {
        group: GroupId::P1536,
        log_base: 4,
        key_bits: 160,
        stat_bits: 80,
        d: terminal_d(n * n, delta)?,
        window: 5,
        engine: ScanEngine::BitParallel,
    })
}

/// The encryptor's ciphertexts `E(x_i)`, packed: each element as `|G|` little-endian bytes
/// (the paper's `1536·2n` bits, without per-limb encoding overhead).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CtBatch {
    /// Bytes per group element.
    pub elem_bytes: u32,
    /// Number of ciphertexts.
    pub count: u32,
    /// `A_0 ‖ C_0 ‖ A_1 ‖ C_1 ‖ …`.
    #[serde(with = "coterie_base::bytes")]
    pub data: Vec<u8>,
}

// Sent in the coterie envelope as `HScx` (a batch of packed ciphertexts).
coterie_base::versioned! {
    CtBatch => b"HScx" v 1,
}

impl CtBatch {
    /// Packs `cts` (elements of `group`).
    pub fn pack(group: &Group, cts: &[Ciphertext]) -> Self {
        let eb = group.elem_bytes();
        let mut data = Vec::with_capacity(2 * eb * cts.len());
        for ct in cts {
            for e in [&ct.a, &ct.c] {
                for l in e.limbs() {
                    data.extend_from_slice(&l.to_le_bytes());
                }
            }
        }
        Self {
            elem_bytes: eb as u32,
            count: cts.len() as u32,
            data,
        }
    }

    /// Unpacks and validates exactly `expect` ciphertexts of `group` (every element checked).
    pub fn unpack(&self, group: &Group, expect: usize) -> Result<Vec<Ciphertext>> {
        let eb = group.elem_bytes();
        if self.elem_bytes as usize != eb
            || self.count as usize != expect
            || expect > MAX_BATCH
            || self.data.len() != 2 * eb * expect
        {
            return Err(Error::Malformed(
                "ciphertext batch of the wrong shape".into(),
            ));
        }
        let elem = |b: &[u8]| -> Result<Elem> {
            let limbs = b
                .chunks_exact(8)
                .map(|w| {
                    let mut x = [0u8; 8];
                    x.copy_from_slice(w);
                    u64::from_le_bytes(x)
                })
                .collect();
            let e = Elem(limbs);
            group.validate(&e)?;
            Ok(e)
        };
        self.data
            .chunks_exact(2 * eb)
            .map(|c| {
                Ok(Ciphertext {
                    a: elem(&c[..eb])?,
                    c: elem(&c[eb..])?,
                })
            })
            .collect()
    }
}

/// One party's flagged conversions, per instance: the indices (in the instance's fixed
/// conversion order) of the conversions this party flagged (see [`FlagPolicy::Exchange`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlagList {
    /// Per instance, the flagged conversions, strictly increasing.
    pub flagged: Vec<Vec<u32>>,
}

// Sent in the coterie envelope as `HScf` (flagged conversions of correlation instances).
coterie_base::versioned! {
    FlagList => b"HScf" v 1,
}

/// Largest number of flagged conversions accepted per instance (flags are rare; a list this
/// long means the parameters are far off, and the instance is discarded anyway).
pub const MAX_FLAGS_PER_INSTANCE: usize = 1 << 12;

impl FlagList {
    /// Checks a decoded list: `instances` instances, each strictly increasing, below
    /// `conversions` and at most [`MAX_FLAGS_PER_INSTANCE`] long.
    pub fn validate(&self, instances: usize, conversions: u64) -> Result<()> {
        if self.flagged.len() != instances
            || self.flagged.iter().any(|l| {
                l.len() > MAX_FLAGS_PER_INSTANCE
                    || l.windows(2).any(|w| w[0] >= w[1])
                    || l.last().is_some_and(|&v| u64::from(v) >= conversions)
            })
        {
            return Err(Error::Malformed("malformed flag list".into()));
        }
        Ok(())
    }
}

/// Records which conversions of one instance this party flagged.
struct FlagLog {
    next: u32,
    flagged: Vec<u32>,
}

impl FlagLog {
    fn new() -> Self {
        Self {
            next: 0,
            flagged: Vec::new(),
        }
    }
    /// One terminal multiplication, logging its flag.
    fn mult(
        &mut self,
        ev: &mut Evaluator<'_>,
        x: &PreparedInput,
        y: &L2Share,
        beta: u64,
    ) -> Result<i64> {
        let before = ev.stats.flags;
        let o = ev.terminal_mult(x, y, beta)?;
        if ev.stats.flags != before && self.flagged.len() < MAX_FLAGS_PER_INSTANCE {
            self.flagged.push(self.next);
        }
        self.next = self.next.saturating_add(1);
        Ok(o)
    }
}

/// Bytes one party sent in one call, by phase (frame bytes as counted by `Mesh::stats`, i.e.
/// including the mesh's frame header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CommStats {
    /// The ciphertext batch (encryptor only): `2n·|G|` bytes plus a constant envelope and frame.
    pub ciphertext_bytes: u64,
    /// `Pi_L2S`'s base OTs: the sender's `A` and masked pairs, the chooser's `B_j`.
    pub ot_bytes: u64,
    /// The flag exchange (the flagged conversions per instance, in an envelope).
    pub flag_bytes: u64,
}

impl CommStats {
    /// All bytes sent.
    pub fn total(&self) -> u64 {
        self.ciphertext_bytes + self.ot_bytes + self.flag_bytes
    }
    /// The paper's count for `n` loaded bits, in bytes: `3712n / 8 = 464n` (spec §6.5).
    pub fn paper_bytes(n: u64) -> u64 {
        3712 * n / 8
    }
}

fn check_two(mesh: &impl Mesh, ek: &EvalKey) -> Result<usize> {
    if mesh.n() != 2 || mesh.id() > 1 || ek.party as usize != mesh.id() {
        return Err(Error::Protocol(
            "HSS correlations run between exactly two parties, with their own keys".into(),
        ));
    }
    Ok(mesh.id())
}

fn check_bits(n_bits: u32) -> Result<()> {
    if !(1..=128).contains(&n_bits) {
        return Err(Error::InvalidParameter("n_bits must be in 1..=128".into()));
    }
    Ok(())
}

fn mask(n_bits: u32) -> u128 {
    if n_bits >= 128 {
        u128::MAX
    } else {
        (1u128 << n_bits) - 1
    }
}

fn random_word<R: Rng + ?Sized>(rng: &mut R, n_bits: u32) -> u128 {
    ((u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64())) & mask(n_bits)
}

fn word_bits(w: u128, n_bits: u32) -> impl Iterator<Item = bool> {
    (0..n_bits).map(move |i| (w >> i) & 1 == 1)
}

/// Uniform in `[0, n)` by rejection (`n ≥ 1`).
fn uniform_below<R: Rng + ?Sized>(rng: &mut R, n: u64) -> u64 {
    let zone = u64::MAX - (u64::MAX % n);
    loop {
        let v = rng.next_u64();
        if v < zone {
            return v % n;
        }
    }
}

/// The modulus passed to a terminal conversion whose product is used mod `2^m` (capped: the
/// cancellation only matters for small moduli).
fn beta_pow2(m: u32) -> u64 {
    1u64 << m.min(62)
}

/// The key as the local phase uses it: the requested pattern length `d`, and pairing tables for
/// `A` wide enough for the `Pi_L2S` shares `<y·c>` (`t + λ + 2` bits; the key's own tables are
/// sized for `t`-bit shares, beyond which pairing falls back to square-and-multiply). Only
/// `key_bits` is widened, which changes no key material and only the `A`-table width.
fn eval_key_view(pk: &PublicKey, d: Option<u32>) -> Result<PublicKey> {
    let mut p = pk.clone();
    if let Some(d) = d {
        p.params.d = d;
    }
    p.params.key_bits += p.params.stat_bits + 2;
    p.params.check()?;
    Ok(p)
}

/// One party's state after the exchange phase: both parties hold the encryptor's ciphertexts
/// (prepared for pairing) and their own shares of the loader's bits.
struct Loaded {
    epk: PublicKey,
    x: Vec<PreparedInput>,
    y: Vec<L2Share>,
    comm: CommStats,
}

/// The exchange phase: the encryptor sends `E(x_i)` for its `n_enc` bits `enc_bits`, the loader
/// loads its `n_load` bits `load_bits` by `Pi_L2S`. Each party passes only its own bits (the
/// other slice empty); the counts are public.
#[allow(clippy::too_many_arguments)]
async fn load<M: Mesh, R: Rng + Send>(
    mesh: &mut M,
    pk: &PublicKey,
    ek: &EvalKey,
    enc_bits: &[bool],
    n_enc: usize,
    load_bits: &[bool],
    n_load: usize,
    d: Option<u32>,
    rng: &mut R,
) -> Result<Loaded> {
    let me = check_two(mesh, ek)?;
    let other = 1 - me;
    if n_enc > MAX_BATCH
        || n_load > MAX_BATCH
        || (me == ENCRYPTOR && enc_bits.len() != n_enc)
        || (me == LOADER && load_bits.len() != n_load)
    {
        return Err(Error::InvalidParameter(
            "bad correlation batch sizes".into(),
        ));
    }
    let epk = eval_key_view(pk, d)?;
    let group = Group::new(pk.params.group);
    let mut comm = CommStats::default();
    let sent = |m: &M| m.stats().total_sent();
    // 1. The encryptor's ciphertexts.
    let t0 = sent(mesh);
    let cts = if me == ENCRYPTOR {
        let enc = pk.encryptor()?;
        let cts: Vec<Ciphertext> = enc_bits
            .iter()
            .map(|&b| enc.encrypt_value(&BigInt::from(u8::from(b)), rng))
            .collect();
        let msg = to_bytes(&CtBatch::pack(&group, &cts))?;
        mesh.send_bytes(other, TAG_CORR_CTS, &msg).await?;
        cts
    } else {
        let bytes = mesh.recv_bytes(other, TAG_CORR_CTS).await?;
        let batch: CtBatch = from_bytes(&bytes)?;
        batch.unpack(&group, n_enc)?
    };
    comm.ciphertext_bytes = sent(mesh) - t0;
    // 2. Pi_L2S for the loader's bits.
    let t1 = sent(mesh);
    let mine: &[bool] = if me == LOADER { load_bits } else { &[] };
    let batch = l2_shares(mesh, pk, ek, mine, n_load, rng).await?;
    comm.ot_bytes = sent(mesh) - t1;
    if batch.shares.len() != n_load {
        return Err(Error::Protocol("Pi_L2S returned the wrong count".into()));
    }
    // 3. Pairing tables (local).
    let x = cts
        .iter()
        .map(|ct| {
            Ok(PreparedInput {
                x: PreparedCt::new(&group, &epk, ct)?,
                digits: vec![],
                complement: None,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Loaded {
        epk,
        x,
        y: batch.shares,
        comm,
    })
}

/// Under [`FlagPolicy::Exchange`], exchanges the instances' flagged conversions and returns
/// which instances have a conversion both parties flagged (all `false` under
/// [`FlagPolicy::Accept`]). `conversions` bounds the indices.
/// Additive shares mod `modulus` of every product `x_i·y_j` of the loaded encrypted bits and
/// level-2 bits (one terminal multiplication each, the encryptor's output negated so the shares
/// sum to the value), this party's flag, and whether the instance is discarded under
/// `opts.policy` ([`settle_flags`]).
async fn outer_products<M: Mesh>(
    mesh: &mut M,
    ld: &mut Loaded,
    ek: &EvalKey,
    me: usize,
    modulus: u64,
    opts: &CorrOptions,
) -> Result<(Vec<u64>, bool, bool)> {
    let (shares, flagged) = {
        let mut ev = Evaluator::new(&ld.epk, ek, 0)?;
        let mut log = FlagLog::new();
        let mut shares = Vec::with_capacity(ld.x.len() * ld.y.len());
        for x in &ld.x {
            for y in &ld.y {
                let o = log.mult(&mut ev, x, y, modulus)?;
                let o = if me == LOADER { o } else { -o };
                shares.push(i128::from(o).rem_euclid(i128::from(modulus)) as u64);
            }
        }
        (shares, log.flagged)
    };
    let convs = (ld.x.len() * ld.y.len()) as u64;
    let discarded = settle_flags(
        mesh,
        opts.policy,
        std::slice::from_ref(&flagged),
        convs,
        &mut ld.comm,
    )
    .await?[0];
    Ok((shares, !flagged.is_empty(), discarded))
}

async fn settle_flags<M: Mesh>(
    mesh: &mut M,
    policy: FlagPolicy,
    mine: &[Vec<u32>],
    conversions: u64,
    comm: &mut CommStats,
) -> Result<Vec<bool>> {
    match policy {
        FlagPolicy::Accept => Ok(vec![false; mine.len()]),
        FlagPolicy::Exchange => {
            let other = 1 - mesh.id();
            let t0 = mesh.stats().total_sent();
            let msg = to_bytes(&FlagList {
                flagged: mine.to_vec(),
            })?;
            mesh.send_bytes(other, TAG_CORR_FLAGS, &msg).await?;
            let bytes = mesh.recv_bytes(other, TAG_CORR_FLAGS).await?;
            comm.flag_bytes = mesh.stats().total_sent() - t0;
            let theirs: FlagList = from_bytes(&bytes)?;
            theirs.validate(mine.len(), conversions)?;
            Ok(mine
                .iter()
                .zip(&theirs.flagged)
                .map(|(a, b)| a.iter().any(|v| b.binary_search(v).is_ok()))
                .collect())
        }
    }
}

/// This party's difference share of the grade-school bilinear form
/// `Σ_{i+j<n} 2^(i+j)·x_i·y_j mod 2^n` (the low `n` bits of `x·y` for `n`-bit words `x`, `y`),
/// with `x` given by its bit ciphertexts `xs` and `y` by its bits' level-2 shares `ys`:
/// `n(n+1)/2` terminal multiplications, product `(i, j)` converted mod `2^(n−i−j)`.
fn grade_school(
    ev: &mut Evaluator<'_>,
    log: &mut FlagLog,
    xs: &[PreparedInput],
    ys: &[L2Share],
    n_bits: u32,
) -> Result<u128> {
    let n = n_bits as usize;
    let mut acc = 0u128;
    for (i, x) in xs.iter().enumerate().take(n) {
        for (j, y) in ys.iter().enumerate().take(n - i) {
            let o = log.mult(ev, x, y, beta_pow2((n - i - j) as u32))?;
            acc = acc.wrapping_add((i128::from(o) as u128) << (i + j));
        }
    }
    Ok(acc & mask(n_bits))
}

/// A bilinear-form correlation (spec §6.5), one party's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BilinearCorrelation {
    /// This party's random bits: `x` for the encryptor (party 1), `y` for the loader (party 0).
    pub bits: Vec<bool>,
    /// This party's additive shares mod `beta` of the `n²` products: entry `i·n + j` is a
    /// share of `x_i·y_j` (`share_0 + share_1 = x_i·y_j mod β`).
    pub shares: Vec<u64>,
    /// The modulus `β`.
    pub beta: u64,
    /// This party's flag (`⊥`: some conversion may have failed).
    pub flagged: bool,
    /// Both parties flagged (only under [`FlagPolicy::Exchange`]): the shares may be wrong and
    /// must not be used.
    pub discarded: bool,
    /// Bytes this party sent.
    pub comm: CommStats,
}

/// Bilinear-form correlation (spec §6.5): the encryptor (party 1) gets random `x ∈ {0,1}^n`,
/// the loader (party 0) random `y ∈ {0,1}^n`, and both get additive shares mod `beta`
/// (`2 ≤ β ≤ 2^62`) of all `n²` products `x_i·y_j`, from `n` ciphertexts, `n` OTs and `n²`
/// terminal multiplications, each converted with the mod-`β` flag cancellation.
///
/// # Example
///
/// ```
/// use coterie_hss::apps::correlated::{CorrOptions, bilinear};
/// use coterie_hss::protocol::dkg;
/// use coterie_hss::scheme::Params;
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
/// use rand::SeedableRng;
/// let params = Params::insecure_toy(4, 16, 10); // insecure toy group
/// let rt = tokio::runtime::Runtime::new().unwrap();
/// let out = rt.block_on(async move {
///     let tasks: Vec<_> = InMemoryMesh::group(2, MeshOptions::default())
///         .into_iter()
///         .enumerate()
///         .map(|(i, mut mesh)| {
///             tokio::spawn(async move {
///                 let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(40 + i as u64); // insecure
///                 let (pk, ek) = dkg(&mut mesh, &params, &mut rng).await.unwrap();
///                 let c = bilinear(&mut mesh, &pk, &ek, 3, 2, &CorrOptions::default(), &mut rng)
///                     .await
///                     .unwrap();
///                 mesh.close().await.unwrap();
///                 c
///             })
///         })
///         .collect();
///     let mut out = Vec::new();
///     for t in tasks {
///         out.push(t.await.unwrap());
///     }
///     out
/// });
/// let (y, x) = (&out[0], &out[1]); // party 0 loads y, party 1 encrypts x
/// if !y.discarded {
///     for i in 0..3 {
///         for j in 0..3 {
///             let v = (x.shares[i * 3 + j] + y.shares[i * 3 + j]) % 2;
///             assert_eq!(v, u64::from(x.bits[i] && y.bits[j]));
///         }
///     }
/// }
/// ```
pub async fn bilinear<M: Mesh, R: Rng + Send>(
    mesh: &mut M,
    pk: &PublicKey,
    ek: &EvalKey,
    n: usize,
    beta: u64,
    opts: &CorrOptions,
    rng: &mut R,
) -> Result<BilinearCorrelation> {
    let me = check_two(mesh, ek)?;
    if !(2..=1 << 62).contains(&beta) || n == 0 || (n as u64).pow(2) > MAX_CONVERSIONS {
        return Err(Error::InvalidParameter(
            "bilinear: need n ≥ 1, n² ≤ MAX_CONVERSIONS, 2 ≤ beta ≤ 2^62".into(),
        ));
    }
    let bits: Vec<bool> = (0..n).map(|_| rng.next_u32() & 1 == 1).collect();
    let (eb, lb): (&[bool], &[bool]) = if me == ENCRYPTOR {
        (&bits, &[])
    } else {
        (&[], &bits)
    };
    let mut ld = load(mesh, pk, ek, eb, n, lb, n, opts.d, rng).await?;
    let (shares, flagged, discarded) = outer_products(mesh, &mut ld, ek, me, beta, opts).await?;
    Ok(BilinearCorrelation {
        bits,
        shares,
        beta,
        flagged,
        discarded,
        comm: ld.comm,
    })
}

/// One party's additive shares mod `2^n` of a Beaver triple `c = a·b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BeaverTriple {
    /// Share of `a`.
    pub a: u128,
    /// Share of `b`.
    pub b: u128,
    /// Share of `c = a·b mod 2^n`.
    pub c: u128,
}

/// One party's output of [`beaver_triples`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TripleBatch {
    /// Ring size `n` (`Z_(2^n)`).
    pub n_bits: u32,
    /// The triples (shares in `[0, 2^n)`), including discarded ones (see `discarded`).
    pub triples: Vec<BeaverTriple>,
    /// This party's flag per triple.
    pub flagged: Vec<bool>,
    /// Per triple: both parties flagged (under [`FlagPolicy::Exchange`]); do not use it.
    pub discarded: Vec<bool>,
    /// Bytes this party sent.
    pub comm: CommStats,
}

impl TripleBatch {
    /// The triples not discarded, as `(a_share, b_share, c_share)`.
    pub fn usable(&self) -> Vec<(u128, u128, u128)> {
        self.triples
            .iter()
            .zip(&self.discarded)
            .filter(|(_, d)| !**d)
            .map(|(t, _)| (t.a, t.b, t.c))
            .collect()
    }
}

/// Raw triples with an optional sacrifice twin `(â, ĉ = â·b)` sharing `b` (for [`HssPrep`]).
pub(crate) struct RawTriples {
    pub(crate) a: Vec<u128>,
    pub(crate) b: Vec<u128>,
    pub(crate) c: Vec<u128>,
    pub(crate) ah: Vec<u128>,
    pub(crate) ch: Vec<u128>,
    pub(crate) flagged: Vec<bool>,
    pub(crate) discarded: Vec<bool>,
    pub(crate) comm: CommStats,
}

#[allow(clippy::too_many_arguments)]
pub(crate) async fn raw_triples<M: Mesh, R: Rng + Send>(
    mesh: &mut M,
    pk: &PublicKey,
    ek: &EvalKey,
    n_bits: u32,
    count: usize,
    twin: bool,
    opts: &CorrOptions,
    rng: &mut R,
) -> Result<RawTriples> {
    let me = check_two(mesh, ek)?;
    check_bits(n_bits)?;
    let n = n_bits as usize;
    // words per triple: encryptor [a1, b1, (â1)], loader [b0, a0, (â0)]
    let w = if twin { 3 } else { 2 };
    let forms = if twin { 4u64 } else { 2 };
    let convs = count as u64 * forms * (n as u64 * (n as u64 + 1) / 2);
    if count == 0 || w * count * n > MAX_BATCH || convs > MAX_CONVERSIONS {
        return Err(Error::InvalidParameter(
            "triple batch empty or too large".into(),
        ));
    }
    let m = mask(n_bits);
    let words: Vec<[u128; 3]> = (0..count)
        .map(|_| {
            let mut t = [0u128; 3];
            for v in t.iter_mut().take(w) {
                *v = random_word(rng, n_bits);
            }
            t
        })
        .collect();
    let bits: Vec<bool> = words
        .iter()
        .flat_map(|t| t[..w].iter().flat_map(|&v| word_bits(v, n_bits)))
        .collect();
    let total = w * count * n;
    let (eb, lb): (&[bool], &[bool]) = if me == ENCRYPTOR {
        (&bits, &[])
    } else {
        (&[], &bits)
    };
    let mut ld = load(mesh, pk, ek, eb, total, lb, total, opts.d, rng).await?;
    let word = |k: usize, t: usize| (t * w + k) * n..(t * w + k + 1) * n;
    let mut out = RawTriples {
        a: Vec::with_capacity(count),
        b: Vec::with_capacity(count),
        c: Vec::with_capacity(count),
        ah: Vec::new(),
        ch: Vec::new(),
        flagged: Vec::with_capacity(count),
        discarded: vec![],
        comm: CommStats::default(),
    };
    let mut logs = Vec::with_capacity(count);
    {
        let mut ev = Evaluator::new(&ld.epk, ek, 0)?;
        for (t, ws) in words.iter().enumerate() {
            let mut log = FlagLog::new();
            // encryptor words: 0 = a1, 1 = b1, 2 = â1; loader words: 0 = b0, 1 = a0, 2 = â0
            let x = |k: usize| &ld.x[word(k, t)];
            let y = |k: usize| &ld.y[word(k, t)];
            let d = grade_school(&mut ev, &mut log, x(0), y(0), n_bits)?
                .wrapping_add(grade_school(&mut ev, &mut log, x(1), y(1), n_bits)?);
            let dh = if twin {
                grade_school(&mut ev, &mut log, x(2), y(0), n_bits)?.wrapping_add(grade_school(
                    &mut ev,
                    &mut log,
                    x(1),
                    y(2),
                    n_bits,
                )?)
            } else {
                0
            };
            // own words as (a, b, â)
            let (a, b, ah) = if me == ENCRYPTOR {
                (ws[0], ws[1], ws[2])
            } else {
                (ws[1], ws[0], ws[2])
            };
            let signed = |v: u128| if me == LOADER { v } else { v.wrapping_neg() };
            out.a.push(a);
            out.b.push(b);
            out.c.push(a.wrapping_mul(b).wrapping_add(signed(d)) & m);
            if twin {
                out.ah.push(ah);
                out.ch.push(ah.wrapping_mul(b).wrapping_add(signed(dh)) & m);
            }
            out.flagged.push(!log.flagged.is_empty());
            logs.push(log.flagged);
        }
    }
    let per = forms * (n as u64 * (n as u64 + 1) / 2);
    out.discarded = settle_flags(mesh, opts.policy, &logs, per, &mut ld.comm).await?;
    out.comm = ld.comm;
    Ok(out)
}

/// Beaver triples over `Z_(2^n)` (`1 ≤ n ≤ 128`, shares as `u128` in `[0, 2^n)`), spec §6.5:
/// each party picks its shares `a_b, b_b` at random; the cross terms `a_1·b_0` and `b_1·a_0`
/// are two grade-school bilinear forms `Σ_{i+j<n} 2^(i+j) x_i y_j mod 2^n` (party 1's bits
/// encrypted, party 0's loaded), `n(n+1)` terminal multiplications per triple; the own terms
/// `a_b·b_b` are local. Communication per triple: `2n` ciphertexts and `2n` OTs. Each triple is
/// one instance of the flag policy.
///
/// # Example
///
/// ```
/// use coterie_hss::apps::correlated::{CorrOptions, beaver_triples};
/// use coterie_hss::protocol::dkg;
/// use coterie_hss::scheme::Params;
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
/// use rand::SeedableRng;
/// let params = Params::insecure_toy(4, 16, 12); // insecure toy group
/// let rt = tokio::runtime::Runtime::new().unwrap();
/// let out = rt.block_on(async move {
///     let tasks: Vec<_> = InMemoryMesh::group(2, MeshOptions::default())
///         .into_iter()
///         .enumerate()
///         .map(|(i, mut mesh)| {
///             tokio::spawn(async move {
///                 let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(50 + i as u64); // insecure
///                 let (pk, ek) = dkg(&mut mesh, &params, &mut rng).await.unwrap();
///                 let opts = CorrOptions::default();
///                 let t = beaver_triples(&mut mesh, &pk, &ek, 8, 2, &opts, &mut rng).await.unwrap();
///                 mesh.close().await.unwrap();
///                 t
///             })
///         })
///         .collect();
///     let mut out = Vec::new();
///     for t in tasks {
///         out.push(t.await.unwrap());
///     }
///     out
/// });
/// for (t0, t1) in out[0].usable().iter().zip(out[1].usable()) {
///     let (a, b, c) = (t0.0 + t1.0, t0.1 + t1.1, t0.2 + t1.2);
///     assert_eq!(a.wrapping_mul(b) % 256, c % 256);
/// }
/// ```
pub async fn beaver_triples<M: Mesh, R: Rng + Send>(
    mesh: &mut M,
    pk: &PublicKey,
    ek: &EvalKey,
    n_bits: u32,
    count: usize,
    opts: &CorrOptions,
    rng: &mut R,
) -> Result<TripleBatch> {
    let raw = raw_triples(mesh, pk, ek, n_bits, count, false, opts, rng).await?;
    Ok(TripleBatch {
        n_bits,
        triples: (0..count)
            .map(|i| BeaverTriple {
                a: raw.a[i],
                b: raw.b[i],
                c: raw.c[i],
            })
            .collect(),
        flagged: raw.flagged,
        discarded: raw.discarded,
        comm: raw.comm,
    })
}

/// A matrix-product correlation, one party's output: the encryptor (party 1) holds a random
/// `d×d` matrix `X`, the loader (party 0) a random `Y`, over `Z_(2^n)`, and both hold additive
/// shares of `Z = X·Y mod 2^n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatrixCorrelation {
    /// The dimension `d`.
    pub dim: usize,
    /// Ring size `n`.
    pub n_bits: u32,
    /// This party's matrix (`X` for party 1, `Y` for party 0), row-major.
    pub matrix: Vec<u128>,
    /// This party's shares of `X·Y`, row-major.
    pub product: Vec<u128>,
    /// This party's flag.
    pub flagged: bool,
    /// Both parties flagged; do not use.
    pub discarded: bool,
    /// Bytes this party sent.
    pub comm: CommStats,
}

/// Matrix-product correlation (spec §6.5, "matrix multiplication"): `d²·n` ciphertexts and
/// `d²·n` OTs (the paper's `3712·n²` bits for `d = n`), `d³·n(n+1)/2` terminal multiplications
/// (`Z_ik = Σ_j X_ij·Y_jk`, each product a grade-school form). One instance of the flag policy.
///
/// # Example
///
/// ```
/// use coterie_hss::apps::correlated::{CorrOptions, matrix_product};
/// use coterie_hss::protocol::dkg;
/// use coterie_hss::scheme::Params;
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
/// use rand::SeedableRng;
/// let params = Params::insecure_toy(4, 16, 12); // insecure toy group
/// let rt = tokio::runtime::Runtime::new().unwrap();
/// let out = rt.block_on(async move {
///     let tasks: Vec<_> = InMemoryMesh::group(2, MeshOptions::default())
///         .into_iter()
///         .enumerate()
///         .map(|(i, mut mesh)| {
///             tokio::spawn(async move {
///                 let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(60 + i as u64); // insecure
///                 let (pk, ek) = dkg(&mut mesh, &params, &mut rng).await.unwrap();
///                 let opts = CorrOptions::default();
///                 let m = matrix_product(&mut mesh, &pk, &ek, 2, 4, &opts, &mut rng).await.unwrap();
///                 mesh.close().await.unwrap();
///                 m
///             })
///         })
///         .collect();
///     let mut out = Vec::new();
///     for t in tasks {
///         out.push(t.await.unwrap());
///     }
///     out
/// });
/// let (y, x) = (&out[0], &out[1]);
/// if !y.discarded {
///     for i in 0..2 {
///         for k in 0..2 {
///             let want: u128 = (0..2).map(|j| x.matrix[i * 2 + j] * y.matrix[j * 2 + k]).sum();
///             assert_eq!((x.product[i * 2 + k] + y.product[i * 2 + k]) % 16, want % 16);
///         }
///     }
/// }
/// ```
pub async fn matrix_product<M: Mesh, R: Rng + Send>(
    mesh: &mut M,
    pk: &PublicKey,
    ek: &EvalKey,
    dim: usize,
    n_bits: u32,
    opts: &CorrOptions,
    rng: &mut R,
) -> Result<MatrixCorrelation> {
    let me = check_two(mesh, ek)?;
    check_bits(n_bits)?;
    let n = n_bits as usize;
    let dd = dim.saturating_mul(dim);
    let convs = (dd as u64)
        .saturating_mul(dim as u64)
        .saturating_mul(n as u64 * (n as u64 + 1) / 2);
    if dim == 0 || dd.saturating_mul(n) > MAX_BATCH || convs > MAX_CONVERSIONS {
        return Err(Error::InvalidParameter(
            "matrix dimension zero or too large".into(),
        ));
    }
    let matrix: Vec<u128> = (0..dd).map(|_| random_word(rng, n_bits)).collect();
    let bits: Vec<bool> = matrix.iter().flat_map(|&v| word_bits(v, n_bits)).collect();
    let (eb, lb): (&[bool], &[bool]) = if me == ENCRYPTOR {
        (&bits, &[])
    } else {
        (&[], &bits)
    };
    let mut ld = load(mesh, pk, ek, eb, dd * n, lb, dd * n, opts.d, rng).await?;
    let entry = |e: usize| e * n..(e + 1) * n;
    let m = mask(n_bits);
    let (product, flagged) = {
        let mut ev = Evaluator::new(&ld.epk, ek, 0)?;
        let mut log = FlagLog::new();
        let mut product = vec![0u128; dd];
        for i in 0..dim {
            for k in 0..dim {
                let mut acc = 0u128;
                for j in 0..dim {
                    let s = grade_school(
                        &mut ev,
                        &mut log,
                        &ld.x[entry(i * dim + j)],
                        &ld.y[entry(j * dim + k)],
                        n_bits,
                    )?;
                    acc = acc.wrapping_add(s);
                }
                product[i * dim + k] = if me == LOADER {
                    acc & m
                } else {
                    acc.wrapping_neg() & m
                };
            }
        }
        (product, log.flagged)
    };
    let discarded = settle_flags(
        mesh,
        opts.policy,
        std::slice::from_ref(&flagged),
        convs,
        &mut ld.comm,
    )
    .await?[0];
    let flagged = !flagged.is_empty();
    Ok(MatrixCorrelation {
        dim,
        n_bits,
        matrix,
        product,
        flagged,
        discarded,
        comm: ld.comm,
    })
}

/// A truth-table correlation (spec §6.6), one party's output: random offsets `r_x ∈ [N1]`
/// (encryptor, party 1) and `r_y ∈ [N2]` (loader, party 0), and additive shares mod `M` of the
/// tensor `a = e_(r_x) ⊗ e_(r_y)` (`a_(i,j) = [i = r_x]·[j = r_y]`). For any public
/// `f: [N1]×[N2] → Z_M` the shifted table `T[u, v] = Σ_(i,j) f(i, j)·a_(u−i, v−j)` (indices
/// mod `N1`, `N2`) equals `f(u − r_x, v − r_y)` — the spec's derived consistent convention.
/// Online, the parties reveal `u = x + r_x mod N1` and `v = y + r_y mod N2` and each takes its
/// share [`TruthTableCorrelation::share_at`]`(f, u, v)`; the shares sum to `f(x, y)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruthTableCorrelation {
    /// `N1`.
    pub n1: usize,
    /// `N2`.
    pub n2: usize,
    /// The output modulus `M`.
    pub modulus: u64,
    /// This party's offset: `r_x` for party 1, `r_y` for party 0.
    pub offset: usize,
    /// Shares mod `M` of `a`, row-major (`i·N2 + j`).
    pub tensor: Vec<u64>,
    /// This party's flag.
    pub flagged: bool,
    /// Both parties flagged; do not use.
    pub discarded: bool,
    /// Bytes this party sent.
    pub comm: CommStats,
}

impl TruthTableCorrelation {
    /// This party's share of `T[u, v] = Σ_(i,j) f(i, j)·a_(u−i, v−j) mod M` for the public table
    /// `f` (row-major, `N1·N2` entries in `[0, M)` or any `u64`, reduced mod `M`).
    pub fn share_at(&self, f: &[u64], u: usize, v: usize) -> Result<u64> {
        let (n1, n2) = (self.n1, self.n2);
        if f.len() != n1 * n2 || u >= n1 || v >= n2 {
            return Err(Error::InvalidParameter(
                "table size or position out of range".into(),
            ));
        }
        let m = u128::from(self.modulus);
        let mut acc = 0u128;
        for i in 0..n1 {
            let r = (u + n1 - i) % n1;
            for j in 0..n2 {
                let c = (v + n2 - j) % n2;
                acc =
                    (acc + u128::from(f[i * n2 + j]) % m * u128::from(self.tensor[r * n2 + c])) % m;
            }
        }
        Ok(acc as u64)
    }
}

/// Truth-table correlation for a domain `N1 × N2` with outputs mod `modulus` (`2 ≤ M ≤ 2^62`),
/// spec §6.6: the encryptor encodes the unit vector of its offset (`N1` ciphertexts), the loader
/// its own (`N2` OTs), and the `N1·N2` terminal multiplications expand the tensor (each
/// converted with the mod-`M` flag cancellation). Unit vectors have payload 1 in one product
/// only, so the instance fails with probability at most about `2^−(d+1)` overall. `f` is only
/// needed online ([`TruthTableCorrelation::share_at`]). One instance of the flag policy.
///
/// # Example
///
/// ```
/// use coterie_hss::apps::correlated::{CorrOptions, truth_table};
/// use coterie_hss::protocol::dkg;
/// use coterie_hss::scheme::Params;
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
/// use rand::SeedableRng;
/// let params = Params::insecure_toy(4, 16, 10); // insecure toy group
/// let rt = tokio::runtime::Runtime::new().unwrap();
/// let out = rt.block_on(async move {
///     let tasks: Vec<_> = InMemoryMesh::group(2, MeshOptions::default())
///         .into_iter()
///         .enumerate()
///         .map(|(i, mut mesh)| {
///             tokio::spawn(async move {
///                 let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(70 + i as u64); // insecure
///                 let (pk, ek) = dkg(&mut mesh, &params, &mut rng).await.unwrap();
///                 let opts = CorrOptions::default();
///                 let t = truth_table(&mut mesh, &pk, &ek, 4, 3, 7, &opts, &mut rng).await.unwrap();
///                 mesh.close().await.unwrap();
///                 t
///             })
///         })
///         .collect();
///     let mut out = Vec::new();
///     for t in tasks {
///         out.push(t.await.unwrap());
///     }
///     out
/// });
/// let (ty, tx) = (&out[0], &out[1]);
/// let f: Vec<u64> = (0..12).map(|k| (k * k + 1) % 7).collect(); // f(i, j) = f[i·3 + j]
/// let (x, y) = (2, 1);
/// let (u, v) = ((x + tx.offset) % 4, (y + ty.offset) % 3); // the revealed masked inputs
/// if !tx.discarded {
///     let s = tx.share_at(&f, u, v).unwrap() + ty.share_at(&f, u, v).unwrap();
///     assert_eq!(s % 7, f[x * 3 + y]);
/// }
/// ```
#[allow(clippy::too_many_arguments)]
pub async fn truth_table<M: Mesh, R: Rng + Send>(
    mesh: &mut M,
    pk: &PublicKey,
    ek: &EvalKey,
    n1: usize,
    n2: usize,
    modulus: u64,
    opts: &CorrOptions,
    rng: &mut R,
) -> Result<TruthTableCorrelation> {
    let me = check_two(mesh, ek)?;
    if n1 == 0
        || n2 == 0
        || n1 > MAX_BATCH
        || n2 > MAX_BATCH
        || (n1 as u64) * (n2 as u64) > MAX_CONVERSIONS
        || !(2..=1 << 62).contains(&modulus)
    {
        return Err(Error::InvalidParameter(
            "truth table: bad domain or modulus".into(),
        ));
    }
    let size = if me == ENCRYPTOR { n1 } else { n2 };
    let offset = uniform_below(rng, size as u64) as usize;
    let unit: Vec<bool> = (0..size).map(|i| i == offset).collect();
    let (eb, lb): (&[bool], &[bool]) = if me == ENCRYPTOR {
        (&unit, &[])
    } else {
        (&[], &unit)
    };
    let mut ld = load(mesh, pk, ek, eb, n1, lb, n2, opts.d, rng).await?;
    let (tensor, flagged, discarded) = outer_products(mesh, &mut ld, ek, me, modulus, opts).await?;
    Ok(TruthTableCorrelation {
        n1,
        n2,
        modulus,
        offset,
        tensor,
        flagged,
        discarded,
        comm: ld.comm,
    })
}

/// One `n_bits`-bit Beaver triple for benchmarks: [`beaver_triples`] with `count = 1` and the
/// key's pattern length (make the key with [`triple_params`] for the paper's setting, `n = 128`,
/// overall failure `1/16`), returning the triple batch (with this party's bytes sent in
/// [`TripleBatch::comm`]) and the conversion steps this party walked.
pub async fn bench_one_triple<M: Mesh, R: Rng + Send>(
    mesh: &mut M,
    pk: &PublicKey,
    ek: &EvalKey,
    n_bits: u32,
    policy: FlagPolicy,
    rng: &mut R,
) -> Result<TripleBatch> {
    let opts = CorrOptions { d: None, policy };
    beaver_triples(mesh, pk, ek, n_bits, 1, &opts, rng).await
}

#[cfg(test)]
mod tests;
