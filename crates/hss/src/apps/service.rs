//! The applications' flows over a [`Mesh`]: parties 0 and 1 are the two servers, party 2 is the
//! client that asks for a result (the output client of the vote, the feed's subscriber, the PIR
//! client). The servers talk to each other only in the one-time setup ([`setup`]: distributed
//! key generation, Fig. 1, and the leakage pads); every evaluation is each server's alone, on the
//! public repository or the client's encrypted request, and its answer goes to the client only.
//!
//! A server's state (public key, evaluation key, pads and the durable pad cursor) is one
//! owner-only versioned file ([`ServerState`]); a pad that a flagged evaluation may have leaked
//! about is burned on disk **before** the answer leaves the server, so a restart never reuses it.
//! A client that asks for a burned pad (a new poll starts at pad 0) is told each server's first
//! unused pad ([`VoteReply::PadBurned`]) and asks both again with the larger one; the server
//! behind burns the pads it skips.

use std::path::Path;

use coterie_base::fsio;
use coterie_math::bigint::BigInt;
use coterie_net::Mesh;
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::feed;
use super::repo::Repository;
use super::vote::{self, Answer, Mode, MultKind, Outcome, Vote};
use crate::leakage::{self, Pad};
use crate::scheme::{self, EvalKey, Evaluator, L1Input, L2Share, Params, PublicKey};
use crate::{Error, Result};

/// The client's party id.
pub const CLIENT: usize = 2;

const TAG_VOTE_REQ: u32 = 0x4853_0301;
const TAG_VOTE_ANS: u32 = 0x4853_0302;
const TAG_FEED_REG: u32 = 0x4853_0311;
const TAG_FEED_DIGEST: u32 = 0x4853_0312;

/// Largest number of pads a server keeps.
pub const MAX_PADS: u32 = 10_000;

/// Largest state file read back.
const MAX_STATE_BYTES: u64 = 256 << 20;

/// One server's durable state.
#[derive(Clone, Serialize, Deserialize)]
pub struct ServerState {
    /// The public key (also published in the repository).
    pub pk: PublicKey,
    /// This server's evaluation key.
    pub ek: EvalKey,
    /// This server's shares `L2(b)` of the pads.
    pub pads: Vec<L2Share>,
    /// Pads below this index are burned (used in an evaluation where this server flagged, or
    /// skipped by a client's request).
    pub next_pad: u32,
}

// Stored in the coterie envelope as `HSsv` (an application server's state, owner-only).
coterie_base::versioned! {
    ServerState => b"HSsv" v 1,
}

impl ServerState {
    /// Loads and validates the state file.
    pub fn load(path: &Path) -> Result<Self> {
        let bytes = fsio::read_bounded(path, MAX_STATE_BYTES)?;
        let st: ServerState = scheme::from_bytes(&bytes)
            .map_err(|e| Error::Malformed(format!("{}: {e}", path.display())))?;
        st.pk.validate()?;
        if st.ek.party > 1 || st.ek.digit_shares.len() != st.pk.key_digits.len() {
            return Err(Error::Malformed(format!(
                "{}: evaluation key does not match the public key",
                path.display()
            )));
        }
        if st.pads.len() > MAX_PADS as usize || st.next_pad as usize > st.pads.len() {
            return Err(Error::Malformed(format!(
                "{}: bad pad list",
                path.display()
            )));
        }
        Ok(st)
    }

    /// Writes the state durably (owner-only).
    pub fn save(&self, path: &Path) -> Result<()> {
        fsio::write_atomic_private(path, &scheme::to_bytes(self)?)?;
        Ok(())
    }
}

/// What [`setup`] made.
#[derive(Debug, Clone)]
pub struct SetupReport {
    /// Pads made.
    pub pads: usize,
    /// Bytes this party sent.
    pub bytes_sent: u64,
}

/// The one-time setup between the servers (parties 0 and 1): distributed key generation
/// ([`crate::protocol::dkg`]) and `pads` leakage-absorbing pads ([`crate::protocol::pads`], base
/// `B = 2` only); each server writes its [`ServerState`] to `state`, server 0 publishes the
/// public key in `repo`. Any other party of the mesh does nothing.
pub async fn setup<M: Mesh, R: Rng + Send>(
    mesh: &mut M,
    params: &Params,
    pads: u32,
    state: &Path,
    repo: &Repository,
    rng: &mut R,
) -> Result<Option<SetupReport>> {
    if mesh.id() > 1 {
        return Ok(None);
    }
    if pads > MAX_PADS || (pads > 0 && params.log_base != 1) {
        return Err(Error::InvalidParameter(format!(
            "pads need base B = 2 and at most {MAX_PADS} of them"
        )));
    }
    let (pk, ek) = crate::protocol::dkg(mesh, params, rng).await?;
    let pad_list = if pads > 0 {
        crate::protocol::pads(mesh, &pk, &ek, pads as usize, rng).await?
    } else {
        vec![]
    };
    let st = ServerState {
        pk: pk.clone(),
        ek,
        pads: pad_list.into_iter().map(|p| p.b).collect(),
        next_pad: 0,
    };
    st.save(state)?;
    if mesh.id() == 0 {
        repo.publish_key(&pk)?;
    }
    Ok(Some(SetupReport {
        pads: pads as usize,
        bytes_sent: mesh.stats().total_sent(),
    }))
}

/// The client's request to both servers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum VoteRequest {
    /// Evaluate `vote` on the uploads of `topic`.
    Evaluate {
        /// The repository topic.
        topic: String,
        /// The vote.
        vote: Vote,
        /// The mode.
        mode: Mode,
        /// Evaluation nonce (fresh per attempt).
        nonce: u64,
        /// Pad index ([`Mode::Padded`]).
        pad: Option<u32>,
        /// Overall failure target `2^−failure_log2` (chooses `d`, [`vote::choose_d`]).
        failure_log2: u32,
    },
    /// No more requests.
    Stop,
}

/// A server's reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum VoteReply {
    /// The answer.
    Answer(Answer),
    /// The request named a pad this server has burned; `next` is its first unused pad (the
    /// client asks again with the larger of the two servers' `next`).
    PadBurned {
        /// This server's first unused pad.
        next: u32,
    },
    /// The request was refused (the reason).
    Refused(String),
}

/// Options of a vote server.
#[derive(Debug, Clone, Default)]
pub struct VoteServerOptions {
    /// **Insecure test knob**: the first `n` evaluations report a flag and a share off by one,
    /// as a conversion failure at both servers would (to exercise the client's re-run).
    pub insecure_inject_failures: u32,
}

fn state_file_pads(st: &ServerState, pad: u32) -> Result<Pad> {
    let b = st.pads.get(pad as usize).ok_or_else(|| {
        Error::InvalidParameter(format!(
            "pad {pad} does not exist ({} pads; run the setup again)",
            st.pads.len()
        ))
    })?;
    Ok(Pad {
        b: b.clone(),
        b_xor_c: vec![],
    })
}

/// Evaluates one request (server side); pads are burned in `st` and saved to `state` before
/// the answer is returned.
fn serve_vote_request(
    st: &mut ServerState,
    state: &Path,
    repo: &Repository,
    req: (&str, &Vote, Mode, u64, Option<u32>, u32),
) -> Result<Answer> {
    let (topic, vote, mode, nonce, pad, failure_log2) = req;
    let mut pk = st.pk.clone();
    let want_base = if mode == Mode::Padded {
        1
    } else {
        pk.params.log_base
    };
    if pk.params.log_base != want_base {
        return Err(Error::InvalidParameter(
            "a padded vote needs the key of a padded setup (base B = 2)".into(),
        ));
    }
    pk.params.d = vote::choose_d(&pk.params, &vote.failure_parts(mode)?, failure_log2)?;
    let clients = repo.clients(topic)?;
    if clients.len() != vote.clients as usize {
        return Err(Error::InvalidParameter(format!(
            "topic {topic} has {} uploads, the vote is over {}",
            clients.len(),
            vote.clients
        )));
    }
    let inputs = clients
        .iter()
        .map(|c| Ok(repo.fetch(topic, c, &pk, 1)?.remove(0)))
        .collect::<Result<Vec<L1Input>>>()?;
    let bp = vote.program()?;
    let ek = st.ek.clone();
    let mut ev = Evaluator::new(&pk, &ek, nonce)?;
    let (share, flagged, mults) = match (mode, pad) {
        (Mode::Plain, None) => vote::eval_plain(&mut ev, &bp, &inputs)?,
        (Mode::Padded, Some(k)) => {
            if k < st.next_pad {
                return Err(Error::InvalidParameter(format!(
                    "pad {k} is burned; the next unused pad is {}",
                    st.next_pad
                )));
            }
            let mut p = state_file_pads(st, k)?;
            // Pads skipped by the client are burned too.
            if k > st.next_pad {
                st.next_pad = k;
                st.save(state)?;
            }
            let kd = leakage::prepare_key_digit_tables(&pk)?;
            let r = vote::eval_padded(&mut ev, &bp, &inputs, &kd, &mut p)?;
            if r.1 {
                st.next_pad = k + 1;
                st.save(state)?;
            }
            r
        }
        _ => {
            return Err(Error::InvalidParameter(
                "a padded vote names a pad, a plain vote none".into(),
            ));
        }
    };
    Ok(Answer {
        nonce,
        pad,
        share,
        flagged,
        clients,
        mults,
    })
}

/// A vote server (party 0 or 1): answers the client's requests until it says stop. Returns the
/// number of evaluations.
pub async fn vote_server<M: Mesh>(
    mesh: &mut M,
    state: &Path,
    repo: &Repository,
    opts: &VoteServerOptions,
) -> Result<u32> {
    let mut st = ServerState::load(state)?;
    let mut served = 0u32;
    loop {
        let req: VoteRequest = mesh.recv_tagged(CLIENT, TAG_VOTE_REQ).await?;
        let VoteRequest::Evaluate {
            topic,
            vote,
            mode,
            nonce,
            pad,
            failure_log2,
        } = req
        else {
            return Ok(served);
        };
        let burned = pad.is_some_and(|k| mode == Mode::Padded && k < st.next_pad);
        let reply = if burned {
            VoteReply::PadBurned { next: st.next_pad }
        } else {
            let r = serve_vote_request(
                &mut st,
                state,
                repo,
                (&topic, &vote, mode, nonce, pad, failure_log2),
            );
            served += 1;
            match r {
                Ok(mut a) => {
                    if served <= opts.insecure_inject_failures {
                        a.flagged = true;
                        a.share += 1;
                    }
                    VoteReply::Answer(a)
                }
                Err(e) => VoteReply::Refused(e.to_string()),
            }
        };
        mesh.send_tagged(CLIENT, TAG_VOTE_ANS, &reply).await?;
    }
}

/// The client's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoteResult {
    /// The vote's outcome.
    pub accepted: bool,
    /// Attempts made (1 + re-runs after failures).
    pub attempts: u32,
    /// The pad of the successful attempt.
    pub pad: Option<u32>,
    /// RMS multiplications per server per attempt.
    pub mults: u32,
    /// The voters.
    pub clients: Vec<String>,
}

/// The output client (party 2): asks both servers to evaluate `vote` on `topic`, combines, and
/// re-runs with a fresh nonce when both flagged (and with the next pad when either flagged in
/// [`Mode::Padded`]), at most `max_attempts` times; then tells the servers to stop.
pub async fn vote_client<M: Mesh>(
    mesh: &mut M,
    topic: &str,
    vote: Vote,
    mode: Mode,
    failure_log2: u32,
    first_nonce: u64,
    max_attempts: u32,
) -> Result<VoteResult> {
    let mut pad = (mode == Mode::Padded).then_some(0u32);
    let mut result = Err(Error::Protocol("no attempt made".into()));
    for attempt in 0..max_attempts {
        let req = VoteRequest::Evaluate {
            topic: topic.to_string(),
            vote,
            mode,
            nonce: first_nonce + u64::from(attempt),
            pad,
            failure_log2,
        };
        let mut answers = Vec::new();
        let mut resync = None;
        for s in 0..2 {
            mesh.send_tagged(s, TAG_VOTE_REQ, &req).await?;
        }
        for s in 0..2 {
            match mesh.recv_tagged::<VoteReply>(s, TAG_VOTE_ANS).await? {
                VoteReply::Answer(a) => answers.push(a),
                VoteReply::PadBurned { next } => {
                    resync = Some(resync.unwrap_or(0).max(next));
                }
                VoteReply::Refused(why) => {
                    result = Err(Error::Protocol(format!("server {s} refused: {why}")));
                }
            }
        }
        if let (Some(next), Some(p)) = (resync, pad.as_mut()) {
            // A server burned this pad in an earlier poll: ask both again with the first pad
            // neither has burned (the other server burns the skipped ones).
            *p = (*p).max(next);
            result = Err(Error::Protocol(format!(
                "the servers' pads ran out of step within {max_attempts} attempts"
            )));
            continue;
        }
        if answers.len() < 2 {
            break;
        }
        let any_flag = answers[0].flagged || answers[1].flagged;
        let outcome = vote::combine(mode, &answers[0], &answers[1]);
        let mults = answers[0].mults;
        let clients = answers[0].clients.clone();
        match outcome {
            Ok(Outcome::Decided(accepted)) => {
                result = Ok(VoteResult {
                    accepted,
                    attempts: attempt + 1,
                    pad,
                    mults,
                    clients,
                });
                break;
            }
            Ok(Outcome::Failed) => {
                result = Err(Error::Protocol(format!(
                    "every one of {max_attempts} attempts failed (both servers flagged)"
                )));
            }
            Err(e) => {
                result = Err(e);
                break;
            }
        }
        if any_flag && let Some(p) = pad.as_mut() {
            *p += 1;
        }
    }
    for s in 0..2 {
        mesh.send_tagged(s, TAG_VOTE_REQ, &VoteRequest::Stop)
            .await?;
    }
    result
}

/// A subscriber's registration: its encrypted interest bits `w`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeedRegistration {
    /// `L1(w_i)` for every tag.
    pub tags: Vec<L1Input>,
    /// Failure target per record `2^−failure_log2` (chooses `d`).
    pub failure_log2: u32,
}

/// A server's digest of `N` records (Figure 4): its output share bits and flags.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeedDigest {
    /// Digest id: the hash of the records it covers (both servers must agree).
    pub id: [u8; 32],
    /// Share bits `x^b_j`, one per record.
    pub bits: Vec<bool>,
    /// Flags `γ^b_j = ⊥`.
    pub flags: Vec<bool>,
}

/// The digest id of `records` (BLAKE3 of their tag bits).
pub fn feed_digest_id(records: &[Vec<bool>]) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(b"coterie/hss/feed-digest/v1");
    for r in records {
        h.update(&(r.len() as u64).to_le_bytes());
        h.update(&r.iter().map(|&b| u8::from(b)).collect::<Vec<u8>>());
    }
    *h.finalize().as_bytes()
}

/// One server's evaluation of the feed: the registration prepared once ([`feed::prepare_tags`]),
/// then for each record the conjunction program with randomized multiplications (nonce
/// `first_nonce + j`), its share bit and flag. `d` is chosen so that a record's program (at most
/// one multiplication per tag) fails with probability at most `2^−failure_log2`
/// ([`vote::choose_d`], [`MultKind::RandMult`]).
pub fn feed_eval(
    pk: &PublicKey,
    ek: &EvalKey,
    tags: &[L1Input],
    records: &[Vec<bool>],
    first_nonce: u64,
    failure_log2: u32,
) -> Result<FeedDigest> {
    let n = tags.len();
    if n == 0 || n > feed::MAX_TAGS {
        return Err(Error::InvalidParameter(format!(
            "a registration has 1 to {} tags",
            feed::MAX_TAGS
        )));
    }
    // The registration's loads are done once (under a nonce no record uses) with their own
    // failure budget; each record's program then has the whole budget for its randomized
    // multiplications. A load that both servers flagged flags every record.
    let (pk_load, pk) = feed::load_and_record_keys(pk, n, failure_log2)?;
    let prepared = feed::prepare_tags(&mut Evaluator::new(&pk_load, ek, u64::MAX)?, tags)?;
    let pk = &pk;
    let mut bits = Vec::with_capacity(records.len());
    let mut flags = Vec::with_capacity(records.len());
    for (j, r) in records.iter().enumerate() {
        let mut ev = Evaluator::new(pk, ek, first_nonce + j as u64)?;
        let (bit, flag) = feed::eval_record(&mut ev, &prepared, r)?;
        bits.push(bit);
        flags.push(flag);
    }
    Ok(FeedDigest {
        id: feed_digest_id(records),
        bits,
        flags,
    })
}

/// The subscriber's parse of two digests: per record `Some(match)` or `None` when both servers
/// flagged (the record must be fetched again).
pub fn feed_parse(d0: &FeedDigest, d1: &FeedDigest) -> Result<Vec<Option<bool>>> {
    if d0.id != d1.id || d0.bits.len() != d1.bits.len() {
        return Err(Error::Protocol(
            "the servers' digests cover different records".into(),
        ));
    }
    if d0.flags.len() != d0.bits.len() || d1.flags.len() != d1.bits.len() {
        return Err(Error::Malformed("digest with mismatched flag list".into()));
    }
    Ok((0..d0.bits.len())
        .map(|j| (!(d0.flags[j] && d1.flags[j])).then_some(d0.bits[j] ^ d1.bits[j]))
        .collect())
}

/// The feed between the servers and the subscriber: the subscriber (party 2) registers its
/// interest bits `interests` (encrypted under the published key), both servers evaluate every
/// record of `records` (public) and send their digests; the subscriber returns the parsed
/// matches. Servers return `None`.
pub async fn feed_run<M: Mesh, R: Rng + Send>(
    mesh: &mut M,
    repo: &Repository,
    state: Option<&ServerState>,
    interests: &[bool],
    records: &[Vec<bool>],
    failure_log2: u32,
    rng: &mut R,
) -> Result<Option<Vec<Option<bool>>>> {
    if mesh.id() == CLIENT {
        let pk = repo.public_key()?;
        let enc = pk.encryptor()?;
        let reg = FeedRegistration {
            tags: interests
                .iter()
                .map(|&w| enc.encrypt(&pk, &BigInt::from(u8::from(w)), rng))
                .collect(),
            failure_log2,
        };
        for s in 0..2 {
            mesh.send_tagged(s, TAG_FEED_REG, &reg).await?;
        }
        let d0: FeedDigest = mesh.recv_tagged(0, TAG_FEED_DIGEST).await?;
        let d1: FeedDigest = mesh.recv_tagged(1, TAG_FEED_DIGEST).await?;
        if d0.id != feed_digest_id(records) {
            return Err(Error::Protocol(
                "digest id does not match the published records".into(),
            ));
        }
        return Ok(Some(feed_parse(&d0, &d1)?));
    }
    let st = state.ok_or_else(|| Error::InvalidParameter("a server needs its state".into()))?;
    let reg: FeedRegistration = mesh.recv_tagged(CLIENT, TAG_FEED_REG).await?;
    for t in &reg.tags {
        t.validate(&st.pk)?;
    }
    let digest = feed_eval(&st.pk, &st.ek, &reg.tags, records, 1, reg.failure_log2)?;
    mesh.send_tagged(CLIENT, TAG_FEED_DIGEST, &digest).await?;
    Ok(None)
}

const TAG_PIR_QUERY: u32 = 0x4853_0321;
const TAG_PIR_ANSWER: u32 = 0x4853_0322;

/// A PIR query: the client's encrypted wanted attributes, the bound `t` on matches plus
/// failures, the evaluation nonce and the failure target per record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PirQuery {
    /// `L1(w_j)` per attribute.
    pub wanted: Vec<L1Input>,
    /// Largest number of nonzero entries to recover.
    pub t: u32,
    /// Evaluation nonce (the same at both servers, fresh per query).
    pub nonce: u64,
    /// Failure target per record `2^−failure_log2` (chooses `d`).
    pub failure_log2: u32,
}

/// What the PIR client gets back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PirOutcome {
    /// The decoded matches and failed records.
    pub result: super::pir::PirResult,
    /// Bytes of each server's answer as sent.
    pub answer_bytes: [u64; 2],
}

/// Two-server PIR with boolean queries ([`super::pir`]): the client (party 2) sends its
/// encrypted wanted attributes to both servers, each server answers on its copy of the public
/// database alone, the client decodes. Servers pass `db` and their state and return `None`.
#[allow(clippy::too_many_arguments)]
pub async fn pir_run<M: Mesh, R: Rng + Send>(
    mesh: &mut M,
    repo: &Repository,
    server: Option<(&ServerState, &super::pir::Database)>,
    wanted: &[bool],
    n_records: usize,
    t: u32,
    failure_log2: u32,
    rng: &mut R,
) -> Result<Option<PirOutcome>> {
    if mesh.id() == CLIENT {
        let pk = repo.public_key()?;
        let q = PirQuery {
            wanted: super::pir::make_query(&pk, wanted, rng)?,
            t,
            nonce: rng.next_u64(),
            failure_log2,
        };
        for s in 0..2 {
            mesh.send_tagged(s, TAG_PIR_QUERY, &q).await?;
        }
        let a0: super::pir::Answer = mesh.recv_tagged(0, TAG_PIR_ANSWER).await?;
        let a1: super::pir::Answer = mesh.recv_tagged(1, TAG_PIR_ANSWER).await?;
        let bytes = |a: &super::pir::Answer| scheme::to_bytes(a).map(|b| b.len() as u64);
        let answer_bytes = [bytes(&a0)?, bytes(&a1)?];
        let result = super::pir::decode(&a0, &a1, n_records, t as usize)?;
        return Ok(Some(PirOutcome {
            result,
            answer_bytes,
        }));
    }
    let (st, db) =
        server.ok_or_else(|| Error::InvalidParameter("a server needs its state".into()))?;
    let q: PirQuery = mesh.recv_tagged(CLIENT, TAG_PIR_QUERY).await?;
    let l = db.validate()?;
    let mut pk = st.pk.clone();
    pk.params.d = vote::choose_d(
        &pk.params,
        &[(l, MultKind::RandMult), (l, MultKind::Mult)],
        q.failure_log2,
    )?;
    let mut ev = Evaluator::new(&pk, &st.ek, q.nonce)?;
    let answer = super::pir::server_answer(&mut ev, &pk, db, &q.wanted, q.t as usize)?;
    mesh.send_tagged(CLIENT, TAG_PIR_ANSWER, &answer).await?;
    Ok(None)
}

const TAG_TRIPLE_CHECK: u32 = 0x4853_0331;

/// What [`triples_demo`] reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriplesDemoReport {
    /// Triples made (usable, after discarding doubly flagged ones).
    pub usable: usize,
    /// Triples discarded.
    pub discarded: usize,
    /// Bytes this party sent for the triples (key generation excluded).
    pub bytes: u64,
}

/// A demonstration of the Beaver-triple correlation between two parties over the mesh (parties
/// 0 and 1 only): distributed key generation, `count` triples over `Z_(2^n_bits)`
/// ([`super::correlated::beaver_triples`], both flags exchanged), then — **demo only, it
/// destroys the triples** — both parties open their shares to each other and check
/// `a·b = c mod 2^n_bits` for every usable triple.
pub async fn triples_demo<M: Mesh, R: Rng + Send>(
    mesh: &mut M,
    params: &Params,
    n_bits: u32,
    count: usize,
    rng: &mut R,
) -> Result<TriplesDemoReport> {
    use super::correlated::{CorrOptions, beaver_triples};
    let (pk, ek) = crate::protocol::dkg(mesh, params, rng).await?;
    let before = mesh.stats().total_sent();
    let batch = beaver_triples(mesh, &pk, &ek, n_bits, count, &CorrOptions::default(), rng).await?;
    let bytes = mesh.stats().total_sent() - before;
    let mine = batch.usable();
    let other = 1 - mesh.id();
    mesh.send_tagged(other, TAG_TRIPLE_CHECK, &mine).await?;
    let theirs: Vec<(u128, u128, u128)> = mesh.recv_tagged(other, TAG_TRIPLE_CHECK).await?;
    if theirs.len() != mine.len() {
        return Err(Error::Protocol(
            "the parties kept different numbers of triples".into(),
        ));
    }
    let mask = if n_bits >= 128 {
        u128::MAX
    } else {
        (1u128 << n_bits) - 1
    };
    for (i, (m, t)) in mine.iter().zip(&theirs).enumerate() {
        let a = m.0.wrapping_add(t.0) & mask;
        let b = m.1.wrapping_add(t.1) & mask;
        let c = m.2.wrapping_add(t.2) & mask;
        if a.wrapping_mul(b) & mask != c {
            return Err(Error::Protocol(format!(
                "triple {i}: a·b ≠ c mod 2^{n_bits}"
            )));
        }
    }
    Ok(TriplesDemoReport {
        usable: mine.len(),
        discarded: batch.discarded.iter().filter(|&&d| d).count(),
        bytes,
    })
}

const TAG_FS_REQ: u32 = 0x4853_0341;
const TAG_FS_GRANT: u32 = 0x4853_0342;

/// Failure target `2^−FS_FAILURE_LOG2` of one file-system request (chooses `d` from the file's
/// public policy shape, [`super::fs::params_for`]).
pub const FS_FAILURE_LOG2: u32 = 10;

/// The data owner's key for the file system (secret-key HSS, spec §6.2): the public key and the
/// ElGamal key `c` with its digits, kept in an owner-only file so the owner can publish more
/// files later under the same keys.
#[derive(Clone, Serialize, Deserialize)]
pub struct OwnerKey {
    /// The public key.
    pub pk: PublicKey,
    /// `c`.
    #[serde(with = "coterie_math::bigint::serde_bigint")]
    pub c: BigInt,
    /// The digits `c_i`.
    pub digits: Vec<u64>,
}

// Stored in the coterie envelope as `HSfo` (the file-system owner's key, owner-only).
coterie_base::versioned! {
    OwnerKey => b"HSfo" v 1,
}

impl Drop for OwnerKey {
    fn drop(&mut self) {
        coterie_math::bigint::wipe(&mut self.c);
        zeroize::Zeroize::zeroize(&mut self.digits);
    }
}

impl OwnerKey {
    fn secret_key(&self) -> crate::scheme::SecretKey {
        crate::scheme::SecretKey {
            c: self.c.clone(),
            digits: self.digits.clone(),
        }
    }
}

fn fs_paths(base: &Path, id: usize, name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let d = base.join(format!("party-{id}"));
    (
        d.join(format!("fs-{name}.header")),
        d.join(format!("fs-{name}.share")),
    )
}

/// The data owner's one-time setup of the file system: it generates the secret-key HSS keys of
/// its own files (**the owner deals the servers' key shares and knows `c`**: in the file system
/// of spec §6.2 the owner is the one party entitled to read every file, so it is the dealer by
/// the paper's model, and deals nothing but its own secrets), writes each server's state to
/// `state_base/party-<b>/hss.state`, its own key to `owner_file` (owner-only) and the public key
/// to the repository.
pub fn fs_owner_setup<R: Rng>(
    params: &Params,
    state_base: &Path,
    repo: &Repository,
    owner_file: &Path,
    rng: &mut R,
) -> Result<()> {
    let (pk, ek0, ek1, sk) = crate::scheme::insecure_keygen_trusted_dealer(params, rng)?;
    for (b, ek) in [ek0, ek1].into_iter().enumerate() {
        let dir = state_base.join(format!("party-{b}"));
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::InvalidParameter(format!("{}: {e}", dir.display())))?;
        ServerState {
            pk: pk.clone(),
            ek,
            pads: vec![],
            next_pad: 0,
        }
        .save(&dir.join("hss.state"))?;
    }
    let owner = OwnerKey {
        pk: pk.clone(),
        c: sk.c.clone(),
        digits: sk.digits.clone(),
    };
    fsio::write_atomic_private(owner_file, &scheme::to_bytes(&owner)?)?;
    repo.publish_key(&pk)?;
    Ok(())
}

/// The owner publishes a file named `name` under `policy` (module docs of [`super::fs`]): the
/// encrypted policy and `E(r)` with each server's share go to the servers (here: written into
/// their state directories), the encrypted file to the repository (`files/<name>.hss`).
#[allow(clippy::too_many_arguments)]
pub fn fs_publish<R: Rng>(
    owner_file: &Path,
    state_base: &Path,
    repo: &Repository,
    shape: &super::fs::PolicyShape,
    policy: &super::fs::Policy,
    name: &str,
    plaintext: &[u8],
    rng: &mut R,
) -> Result<()> {
    super::repo::check_name("file", name)?;
    let bytes = fsio::read_bounded(owner_file, MAX_STATE_BYTES)?;
    let owner: OwnerKey = scheme::from_bytes(&bytes)
        .map_err(|e| Error::Malformed(format!("{}: {e}", owner_file.display())))?;
    owner.pk.validate()?;
    let p = super::fs::publish_file(
        &owner.pk,
        &owner.secret_key(),
        shape,
        policy,
        plaintext,
        rng,
    )?;
    for b in 0..2 {
        let (h, s) = fs_paths(state_base, b, name);
        fsio::write_atomic(&h, &scheme::to_bytes(&p.header)?)?;
        fsio::write_atomic_private(&s, &scheme::to_bytes(&p.shares[b])?)?;
    }
    let dir = repo.dir().join("files");
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::InvalidParameter(format!("{}: {e}", dir.display())))?;
    fsio::write_atomic(
        &dir.join(format!("{name}.hss")),
        &scheme::to_bytes(&p.file)?,
    )?;
    Ok(())
}

/// A client's request for a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum FsRequest {
    /// Grant shares for file `name`.
    Grant {
        /// The file's name in the repository.
        name: String,
        /// The request (file id, attributes, nonce).
        req: super::fs::GrantRequest,
    },
    /// No more requests.
    Stop,
}

/// The file system over the mesh: the client (party 2) fetches file `name` from the repository
/// and asks both servers for grant shares under its attribute vector `attrs`, re-asking under a
/// new nonce when both flagged (at most `max_attempts` times); it returns the plaintext or
/// "access denied". Servers answer until the client stops and return `None`.
pub async fn fs_run<M: Mesh, R: Rng + Send>(
    mesh: &mut M,
    repo: &Repository,
    server: Option<(&ServerState, &Path)>,
    name: &str,
    attrs: &[bool],
    max_attempts: u32,
    rng: &mut R,
) -> Result<Option<super::fs::Access>> {
    use super::fs::{self, Access, FileHeader, GrantRequest, GrantShare, ServerShare};
    super::repo::check_name("file", name)?;
    if mesh.id() == CLIENT {
        let pk = repo.public_key()?;
        let path = repo.dir().join("files").join(format!("{name}.hss"));
        let file: fs::EncryptedFile =
            scheme::from_bytes(&fsio::read_bounded(&path, super::repo::MAX_FILE_BYTES)?)
                .map_err(|e| Error::Malformed(format!("{}: {e}", path.display())))?;
        let mut out = Err(Error::Protocol("no attempt made".into()));
        for _ in 0..max_attempts {
            let req = FsRequest::Grant {
                name: name.to_string(),
                req: GrantRequest {
                    file_id: file.file_id,
                    attrs: attrs.to_vec(),
                    nonce: rng.next_u64(),
                },
            };
            for s in 0..2 {
                mesh.send_tagged(s, TAG_FS_REQ, &req).await?;
            }
            let mut grants = Vec::new();
            for s in 0..2 {
                match mesh
                    .recv_tagged::<std::result::Result<GrantShare, String>>(s, TAG_FS_GRANT)
                    .await?
                {
                    Ok(g) => grants.push(g),
                    Err(why) => out = Err(Error::Protocol(format!("server {s} refused: {why}"))),
                }
            }
            if grants.len() < 2 {
                break;
            }
            match fs::open_file(&pk, &grants[0], &grants[1], &file) {
                Ok(Access::Rerun) => out = Ok(Access::Rerun),
                r => {
                    out = r;
                    break;
                }
            }
        }
        for s in 0..2 {
            mesh.send_tagged(s, TAG_FS_REQ, &FsRequest::Stop).await?;
        }
        return out.map(Some);
    }
    let (st, base) =
        server.ok_or_else(|| Error::InvalidParameter("a server needs its state".into()))?;
    let id = mesh.id();
    loop {
        let FsRequest::Grant { name, req } = mesh.recv_tagged(CLIENT, TAG_FS_REQ).await? else {
            return Ok(None);
        };
        let reply = (|| -> Result<GrantShare> {
            super::repo::check_name("file", &name)?;
            let (h, s) = fs_paths(base, id, &name);
            let header: FileHeader =
                scheme::from_bytes(&fsio::read_bounded(&h, super::repo::MAX_FILE_BYTES)?)?;
            let share: ServerShare =
                scheme::from_bytes(&fsio::read_bounded(&s, super::repo::MAX_FILE_BYTES)?)?;
            let mut pk = st.pk.clone();
            pk.params.d = fs::params_for(
                &header.shape,
                FS_FAILURE_LOG2,
                pk.params.group,
                pk.params.window,
            )?
            .d;
            fs::server_grant(&pk, &st.ek, &header, &share, &req)
        })()
        .map_err(|e| e.to_string());
        mesh.send_tagged(CLIENT, TAG_FS_GRANT, &reply).await?;
    }
}
