//! Two-server PIR with boolean queries (spec §6.4, paper §5.2.3).
//!
//! A client wants the payloads of every record that has all the attributes it asks for, without
//! either server learning which attributes those are. Each record `i` of the public
//! [`Database`] has an attribute vector `a_i ∈ {0,1}^L` and a payload `D_i ∈ F_(2^40)`.
//!
//! 1. **Query** ([`make_query`]): the client encrypts its wanted attributes `w ∈ {0,1}^L` under
//!    the HSS public key, `L1(w_j)` per attribute (public-key HSS as in [`super::feed`]), and
//!    sends the same query to both servers.
//! 2. **Answer** ([`server_answer`]): server `b` builds `L1(1 − w_j)` once per attribute and
//!    loads `L2(1 − w_j)` once ([`prepare_query`], [`super::feed::prepare_tags`]), evaluates the
//!    feed's conjunction program `P[a_i]` (`1` iff the record has every wanted attribute,
//!    [`super::feed::conjunction_program`]) with randomized multiplications, and gets a share bit
//!    `m^b_i` with `m^0_i ⊕ m^1_i = m_i` ([`match_shares`]). The shares are bits embedded in
//!    `F_(2^40)`, whose addition is XOR, so they are additive shares of `m ∈ F^N`, and
//!    `m^b_i · D_i` are additive shares of `m_i · D_i` (a share times a public constant). The
//!    server sends the `2t` syndromes of each of the two vectors and the list of records on which
//!    its evaluation raised a flag ([`Answer`], [`answer_from_shares`]): `4t` field elements plus
//!    the flags, whatever `N`.
//! 3. **Decoding** ([`decode`]): the client adds the two answers, getting the syndromes of `m`
//!    and of `(m_i·D_i)`; if at most `t` entries of `m` are nonzero it recovers them (positions
//!    and values) and the values `m_i·D_i` on the same positions. Entries with `m_i = 1` are the
//!    matches (payload `m_i·D_i`); records **both** servers flagged are the only ones whose bit may
//!    be wrong (Las Vegas correctness) and are reported as failed ([`PirResult::failed`]: the
//!    client re-queries them under a new nonce); more than `t` nonzero entries give an error
//!    (re-run with a larger `t`).
//!
//! **Flags are sent, not randomized (a deliberate change from the paper's §5.2.3).** The paper
//! has each server replace a flagged share by a random field element, so a possibly wrong entry
//! shows up as a nonzero non-bit. But a single server's flag is far more frequent than a failure
//! (a digit conversion's danger zone is `B − 1` points, so one flag per about `2^(d+1)/(s(B−1))`
//! multiplications, while a failure needs both), and every randomized record takes a slot of
//! the `t`-sparse answer: at `10^4` records and `d` for `2^−10` per record the random entries
//! alone exceeded `t = 32` in our runs. Sending each server's flag list instead — as the feed's
//! digest does with `γ^b_j`, and as Definition 2.1's `Eval` output includes `γ_b` — keeps every
//! share a bit, leaves the syndromes at `t` matches, and tells the client exactly which records
//! are uncertain. What the client learns in addition is where the servers' walks hit danger
//! zones, which depends on the servers' shares and the client's own query.
//!
//! # The code and its decoder (spec §11 item 12)
//!
//! **Choice: syndromes of a narrow-sense Reed–Solomon code over `F_(2^40)` with locators
//! `α^i`, decoded by Berlekamp–Massey, a Chien search over the `N` positions and Forney's
//! formula, followed by a re-encoding check** ([`code`], field in [`gf40`]).
//!
//! Why: the vector to transmit is `t`-sparse with unknown support, which is exactly
//! syndrome decoding of errors; Reed–Solomon is MDS, so `2t` syndromes — the information-
//! theoretic minimum for `t` unknown positions and values — suffice, and syndromes are linear,
//! so each server computes them on its own share vector with no interaction (`O(t·N)` field
//! operations, about four table products per record and syndrome pair). The client's decoder
//! costs `O(t^2 + t·N)`. The field size `2^40` leaves room for `N < 2^40 − 1` distinct
//! locators, and a corrupted share or syndrome shows up as a non-bit value or an undecodable
//! vector with overwhelming probability.
//!
//! **Failure and detection** (see [`code`] for the derivations):
//! * at most `t` nonzero entries (matches, plus wrong bits of records both servers flagged):
//!   always decoded correctly; the doubly flagged records are listed as failed;
//! * more than `t` nonzero entries or a corrupted answer: an `Err` (naming the doubly flagged
//!   records when there are any), or a decoded value that is not a bit (an `Err` naming the
//!   record), except when the corrupted syndromes happen to be those of another vector of
//!   weight `≤ t` with bit values — heuristically with probability about `C(N, t)·2^(−40t)`. The
//!   model is semi-honest: a malicious server can shift the result undetectably by adding the
//!   syndromes of any sparse 0/1 vector; the checks are against accidents (bit flips, wrong `t`
//!   or `N`, mixed-up answers).
//!
//! # Evaluation nonces and cost
//!
//! A record's match bit depends only on its attribute vector, so a server evaluates the
//! conjunction program once per **distinct** attribute vector (at most `2^L`, in order of first
//! occurrence) and gives each record its class's share bit XOR a fresh mask from the
//! evaluator's PRF; both servers draw the same masks, which cancel in the XOR, and each server's
//! share vector stays uniform record by record. A flagged class puts every record of the class
//! on the server's flag list. The two servers stay in step because they walk the records **in
//! database order** with evaluators created under the same nonce. Use a fresh nonce per query,
//! agreed by both servers (e.g. a query counter), so failures of different queries are
//! independent. Server cost: one program evaluation per distinct vector plus, per record, one
//! PRF mask and `4t` field multiply-adds for the syndromes.
//!
//! # Privacy notes
//!
//! Each server sees only the query ciphertexts (semantic security of the HSS inputs). The
//! client learns, besides the matches, which records failed and (implicitly) nothing else about
//! non-matching records with unflagged evaluations; for a failed record it could compute `D_i`
//! (the value `m_i·D_i` divided by `m_i`) — database privacy is not a goal of this protocol.
//!
//! # Left out
//!
//! The unknown-bound mode of §6.4 (runs with `n = 1, 2, 4, …` and common pseudorandom
//! subsampling) is not implemented: the client must pick `t` (e.g. from the expected number of
//! matches plus a margin for failures) and re-run with a larger `t` on a decoding error.
//!
//! # Example
//!
//! ```
//! use coterie_hss::apps::pir::{Database, Record, decode, make_query, server_answer};
//! use coterie_hss::scheme::{Evaluator, Params, insecure_keygen_trusted_dealer};
//! use rand::SeedableRng;
//! let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3); // insecure fixed seed
//! let (pk, ek0, ek1, _) =
//!     insecure_keygen_trusted_dealer(&Params::insecure_toy(4, 16, 10), &mut rng).unwrap();
//! let rec = |attrs: [bool; 3], payload| Record { attrs: attrs.to_vec(), payload };
//! let db = Database {
//!     records: vec![
//!         rec([true, false, true], 100),
//!         rec([true, true, false], 200),
//!         rec([false, true, true], 300),
//!         rec([true, true, true], 400),
//!     ],
//! };
//! // The client wants records with attributes 0 and 1.
//! let query = make_query(&pk, &[true, true, false], &mut rng).unwrap();
//! let t = 2;
//! let nonce = 1; // fresh per query, the same at both servers
//! let mut ev0 = Evaluator::new(&pk, &ek0, nonce).unwrap();
//! let a0 = server_answer(&mut ev0, &pk, &db, &query, t).unwrap();
//! let mut ev1 = Evaluator::new(&pk, &ek1, nonce).unwrap();
//! let a1 = server_answer(&mut ev1, &pk, &db, &query, t).unwrap();
//! let res = decode(&a0, &a1, db.records.len(), t).unwrap();
//! // Records 1 and 3 match; a record both servers flagged would be in `res.failed`.
//! for (i, payload) in [(1, 200), (3, 400)] {
//!     assert!(res.matches.contains(&(i, payload)) || res.failed.contains(&i));
//! }
//! assert_eq!(res.matches.len() + res.failed.len(), 2);
//! ```

pub mod code;
pub mod gf40;

pub use code::{MAX_LEN, MAX_T};
pub use gf40::{ConstMul, Gf40};

use std::collections::HashMap;

use coterie_math::bigint::BigInt;
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::feed::{MAX_TAGS, PreparedTags, eval_record, prepare_tags};
use crate::scheme::{Evaluator, L1Input, PublicKey};
use crate::{Error, Result};

/// One database record: its attribute bits and its payload, one element of `F_(2^40)` given by
/// its bit pattern (so `payload < 2^40`; longer payloads are split over several databases or
/// fetched afterwards by index).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// Attribute bits `a_i` (the same length `L` for every record).
    pub attrs: Vec<bool>,
    /// The payload `D_i < 2^40`.
    pub payload: u64,
}

/// The public database both servers hold (the same records in the same order).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Database {
    /// The records, indexed from 0.
    pub records: Vec<Record>,
}

impl Database {
    /// Checks the database: at most [`MAX_LEN`] records, all with the same number of attributes
    /// `L`, `1 ≤ L ≤` [`MAX_TAGS`], payloads below `2^40`. Returns `L` (0 for an empty
    /// database).
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_hss::apps::pir::{Database, Record};
    /// let mut db = Database { records: vec![Record { attrs: vec![true, false], payload: 7 }] };
    /// assert_eq!(db.validate().unwrap(), 2);
    /// db.records.push(Record { attrs: vec![true], payload: 8 }); // another attribute count
    /// assert!(db.validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<usize> {
        if self.records.len() as u64 > MAX_LEN {
            return Err(Error::InvalidParameter(format!(
                "a PIR database has at most {MAX_LEN} records"
            )));
        }
        let l = self.records.first().map_or(0, |r| r.attrs.len());
        for (i, r) in self.records.iter().enumerate() {
            if r.attrs.len() != l || l == 0 || l > MAX_TAGS {
                return Err(Error::InvalidParameter(format!(
                    "record {i} has {} attributes; every record needs the same number, 1 to \
                     {MAX_TAGS} (the first has {l})",
                    r.attrs.len()
                )));
            }
            if Gf40::new(r.payload).is_err() {
                return Err(Error::InvalidParameter(format!(
                    "record {i}'s payload {} is not below 2^40",
                    r.payload
                )));
            }
        }
        Ok(l)
    }

    /// The payloads as field elements (after [`Database::validate`]; larger values are cut to
    /// their low 40 bits).
    pub fn payloads(&self) -> Vec<Gf40> {
        self.records
            .iter()
            .map(|r| Gf40::from_low_bits(r.payload))
            .collect()
    }

    /// The indices and payloads of the records having every wanted attribute (the plaintext
    /// answer, for tests and benchmarks).
    pub fn plain_matches(&self, wanted: &[bool]) -> Vec<(usize, u64)> {
        self.records
            .iter()
            .enumerate()
            .filter(|(_, r)| {
                r.attrs.len() == wanted.len() && r.attrs.iter().zip(wanted).all(|(&a, &w)| a || !w)
            })
            .map(|(i, r)| (i, r.payload))
            .collect()
    }
}

/// The client's query: `L1(w_j)` for each wanted-attribute bit `w_j` (1 = the record must have
/// attribute `j`), `1 ≤ L ≤` [`MAX_TAGS`] bits.
///
/// # Example
///
/// ```
/// use coterie_hss::apps::pir::make_query;
/// use coterie_hss::scheme::{Params, insecure_keygen_trusted_dealer};
/// use rand::SeedableRng;
/// let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(2); // insecure fixed seed
/// let (pk, ..) = insecure_keygen_trusted_dealer(&Params::insecure_toy(4, 16, 10), &mut rng).unwrap();
/// let q = make_query(&pk, &[true, false, false], &mut rng).unwrap();
/// assert_eq!(q.len(), 3);
/// assert!(make_query(&pk, &[], &mut rng).is_err());
/// ```
pub fn make_query<R: Rng + ?Sized>(
    pk: &PublicKey,
    wanted: &[bool],
    rng: &mut R,
) -> Result<Vec<L1Input>> {
    if wanted.is_empty() || wanted.len() > MAX_TAGS {
        return Err(Error::InvalidParameter(format!(
            "a query has 1 to {MAX_TAGS} attribute bits, not {}",
            wanted.len()
        )));
    }
    let enc = pk.encryptor()?;
    Ok(wanted
        .iter()
        .map(|&w| enc.encrypt(pk, &u8::from(w).into(), rng))
        .collect())
}

/// A server's preparation of a query on its evaluator: `L1(1 − w_j)` per attribute with its
/// pairing tables (complemented family included) and `L2(1 − w_j)` loaded once
/// ([`super::feed::prepare_tags`]), used for every record's randomized multiplications. Checks
/// each input against the evaluator's public key.
pub fn prepare_query(ev: &mut Evaluator<'_>, query: &[L1Input]) -> Result<PreparedTags> {
    if query.is_empty() || query.len() > MAX_TAGS {
        return Err(Error::Malformed(format!(
            "a query has 1 to {MAX_TAGS} inputs, not {}",
            query.len()
        )));
    }
    let pk = ev.public_key().clone();
    for q in query {
        q.validate(&pk)?;
    }
    prepare_tags(ev, query)
}

/// One server's match shares: `m^b_i` per record (a bit), and the records on which its
/// evaluation flagged (sent with the answer, module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchShares {
    /// `m^b_i`, one per record.
    pub shares: Vec<Gf40>,
    /// Indices of the records whose evaluation flagged (`γ_b = ⊥`), ascending.
    pub flagged: Vec<usize>,
}

/// Evaluates the conjunction program once per distinct attribute vector, in order of first
/// occurrence in the database, on the prepared query (see [`prepare_query`]) with this server's
/// evaluator, and gives each record its class bit under a fresh common mask (module docs).
/// Both servers' evaluators must have been created with the same nonce and used identically
/// before.
pub fn match_shares(
    ev: &mut Evaluator<'_>,
    db: &Database,
    prepared: &PreparedTags,
) -> Result<MatchShares> {
    let l = db.validate()?;
    if !db.records.is_empty() && prepared.inputs.len() != l {
        return Err(Error::Malformed(format!(
            "the query has {} attribute bits, the database {l}",
            prepared.inputs.len()
        )));
    }
    // The match bit depends on the attribute vector only: evaluate each distinct vector once
    // (in order of first occurrence, the same at both servers) and give every record its class
    // bit under a fresh common mask from the evaluator's PRF (`output_value(0, 2)`), so each
    // server's share vector is still uniform record by record and the masks cancel in the XOR.
    let mut classes: HashMap<&[bool], (bool, bool)> = HashMap::new();
    let mut shares = Vec::with_capacity(db.records.len());
    let mut flagged = vec![];
    let zero = BigInt::new();
    let two = BigInt::from(2);
    for (i, rec) in db.records.iter().enumerate() {
        let (bit, flag) = match classes.get(rec.attrs.as_slice()) {
            Some(&c) => c,
            None => {
                let c = eval_record(ev, prepared, &rec.attrs)?;
                classes.insert(&rec.attrs, c);
                c
            }
        };
        let mask = ev.output_value(&zero, &two)? == 1;
        if flag {
            flagged.push(i);
        }
        shares.push(if bit ^ mask { Gf40::ONE } else { Gf40::ZERO });
    }
    Ok(MatchShares { shares, flagged })
}

/// One server's answer: the `2t` syndromes of its match shares `(m^b_i)` and the `2t`
/// syndromes of `(m^b_i · D_i)`, for a database of `n_records` records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    /// Number of records `N` the syndromes are over.
    pub n_records: u64,
    /// `S_j = Σ_i m^b_i α^(i·j)`, `j = 1..2t`.
    pub match_syndromes: Vec<Gf40>,
    /// `T_j = Σ_i m^b_i D_i α^(i·j)`, `j = 1..2t`.
    pub payload_syndromes: Vec<Gf40>,
    /// The records on which this server's evaluation raised a flag (`γ_b = ⊥`), ascending: the
    /// client treats the records both servers flagged as failed (module docs).
    pub flagged: Vec<u64>,
}

// Stored and sent in the coterie envelope as `HSpa` (a PIR answer).
coterie_base::versioned! {
    Answer => b"HSpa" v 2,
}

impl Answer {
    /// The correction capacity `t` (half the number of syndromes per vector).
    pub fn t(&self) -> usize {
        self.match_syndromes.len() / 2
    }

    /// Checks a received answer: `2t` syndromes in each vector with `1 ≤ t ≤` [`MAX_T`], at
    /// most [`MAX_LEN`] records (field elements are range-checked when decoded).
    pub fn validate(&self) -> Result<()> {
        let n = self.match_syndromes.len();
        if n == 0 || !n.is_multiple_of(2) || n > 2 * MAX_T || self.payload_syndromes.len() != n {
            return Err(Error::Malformed(format!(
                "a PIR answer has 2t syndromes per vector, 1 ≤ t ≤ {MAX_T} (got {} and {})",
                n,
                self.payload_syndromes.len()
            )));
        }
        if self.n_records > MAX_LEN {
            return Err(Error::Malformed(format!(
                "a PIR answer covers at most {MAX_LEN} records"
            )));
        }
        if self.flagged.windows(2).any(|w| w[0] >= w[1])
            || self.flagged.last().is_some_and(|&l| l >= self.n_records)
        {
            return Err(Error::Malformed(
                "a PIR answer's flagged records must be ascending indices below N".into(),
            ));
        }
        Ok(())
    }
}

/// The answer of a server from its match shares (one per record) and its flagged records
/// (ascending): the syndromes of the shares and of the shares times the payloads, and the flags. This is the part of [`server_answer`] after the HSS
/// evaluations (`O(t·N)` field operations), separate so it can be timed on its own.
///
/// # Example
///
/// ```
/// use coterie_hss::apps::pir::{Database, Gf40, Record, answer_from_shares, decode};
/// let db = Database {
///     records: (0..10).map(|i| Record { attrs: vec![true], payload: 1000 + i }).collect(),
/// };
/// // Shares of m = e_3 + e_7: server 0 holds m ⊕ r, server 1 holds r.
/// let r: Vec<Gf40> = (0..10).map(|i| Gf40::new(i % 2).unwrap()).collect();
/// let mut s0 = r.clone();
/// s0[3] = s0[3] + Gf40::ONE;
/// s0[7] = s0[7] + Gf40::ONE;
/// let a0 = answer_from_shares(&db, &s0, &[], 3).unwrap();
/// let a1 = answer_from_shares(&db, &r, &[], 3).unwrap();
/// let res = decode(&a0, &a1, 10, 3).unwrap();
/// assert_eq!(res.matches, vec![(3, 1003), (7, 1007)]);
/// assert!(res.failed.is_empty());
/// ```
pub fn answer_from_shares(
    db: &Database,
    shares: &[Gf40],
    flagged: &[usize],
    t: usize,
) -> Result<Answer> {
    db.validate()?;
    if flagged.windows(2).any(|w| w[0] >= w[1])
        || flagged.last().is_some_and(|&l| l >= shares.len())
    {
        return Err(Error::InvalidParameter(
            "flagged records must be ascending record indices".into(),
        ));
    }
    if shares.len() != db.records.len() {
        return Err(Error::InvalidParameter(format!(
            "{} shares for {} records",
            shares.len(),
            db.records.len()
        )));
    }
    let (match_syndromes, payload_syndromes) = code::syndromes_weighted(shares, &db.payloads(), t)?;
    Ok(Answer {
        n_records: db.records.len() as u64,
        match_syndromes,
        payload_syndromes,
        flagged: flagged.iter().map(|&i| i as u64).collect(),
    })
}

/// Server `b`'s whole answer to a query: [`prepare_query`], [`match_shares`] (one HSS
/// evaluation per distinct attribute vector) and [`answer_from_shares`]. `ev` is this server's
/// evaluator under the query's nonce (the same nonce at both servers, fresh per query).
///
/// # Example
///
/// ```
/// use coterie_hss::apps::pir::{Database, Record, make_query, server_answer};
/// use coterie_hss::scheme::{Evaluator, Params, insecure_keygen_trusted_dealer};
/// use rand::SeedableRng;
/// let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(8); // insecure fixed seed
/// let (pk, ek0, _, _) =
///     insecure_keygen_trusted_dealer(&Params::insecure_toy(4, 16, 10), &mut rng).unwrap();
/// let db = Database { records: vec![Record { attrs: vec![true, false], payload: 5 }] };
/// let query = make_query(&pk, &[true, false], &mut rng).unwrap();
/// let mut ev = Evaluator::new(&pk, &ek0, 42).unwrap();
/// let a = server_answer(&mut ev, &pk, &db, &query, 4).unwrap();
/// assert_eq!((a.t(), a.n_records), (4, 1));
/// assert!(server_answer(&mut ev, &pk, &db, &query[..1], 4).is_err()); // wrong length
/// ```
pub fn server_answer(
    ev: &mut Evaluator<'_>,
    pk: &PublicKey,
    db: &Database,
    query: &[L1Input],
    t: usize,
) -> Result<Answer> {
    // Cheap checks before any evaluation.
    if t == 0 || t > MAX_T {
        return Err(Error::InvalidParameter(format!(
            "the PIR bound t must be 1 to {MAX_T}, not {t}"
        )));
    }
    if ev.params() != &pk.params || ev.public_key().h != pk.h {
        return Err(Error::InvalidParameter(
            "the evaluator works under another public key".into(),
        ));
    }
    let l = db.validate()?;
    if !db.records.is_empty() && query.len() != l {
        return Err(Error::Malformed(format!(
            "the query has {} attribute bits, the database {l}",
            query.len()
        )));
    }
    let prepared = prepare_query(ev, query)?;
    let shares = match_shares(ev, db, &prepared)?;
    answer_from_shares(db, &shares.shares, &shares.flagged, t)
}

/// What the client learns: the matching records with their payloads, and the records on which
/// a server's evaluation failed (to be queried again).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PirResult {
    /// `(index, payload)` of every matching record, ascending by index.
    pub matches: Vec<(usize, u64)>,
    /// Indices of the records whose evaluation failed at a server, ascending.
    pub failed: Vec<usize>,
}

/// The client's decoding of the two servers' answers for a database of `n_records` records
/// and bound `t` (module docs): `Malformed` for answers of another shape, and "more than `t`
/// matches or failures" when the combined vector does not decode (see the module docs for
/// what is detected).
///
/// # Example
///
/// See [`answer_from_shares`] and the module example.
///
/// ```
/// use coterie_hss::apps::pir::{Answer, Gf40, decode};
/// let a = Answer {
///     n_records: 10,
///     match_syndromes: vec![Gf40::ZERO; 4],
///     payload_syndromes: vec![Gf40::ZERO; 4],
///     flagged: vec![],
/// };
/// assert!(decode(&a, &a, 10, 2).unwrap().matches.is_empty()); // no match
/// assert!(decode(&a, &a, 10, 3).is_err()); // another t
/// assert!(decode(&a, &a, 11, 2).is_err()); // another N
/// ```
pub fn decode(a0: &Answer, a1: &Answer, n_records: usize, t: usize) -> Result<PirResult> {
    for a in [a0, a1] {
        a.validate()?;
        if a.t() != t || a.n_records != n_records as u64 {
            return Err(Error::Malformed(format!(
                "an answer for t = {} over {} records, expected t = {t} over {n_records}",
                a.t(),
                a.n_records
            )));
        }
    }
    let add =
        |x: &[Gf40], y: &[Gf40]| -> Vec<Gf40> { x.iter().zip(y).map(|(&a, &b)| a + b).collect() };
    let s = add(&a0.match_syndromes, &a1.match_syndromes);
    let p = add(&a0.payload_syndromes, &a1.payload_syndromes);
    let too_many = |e: Error| {
        Error::Malformed(format!(
            "the PIR answers do not decode: more than t = {t} matches or failures; re-run with \
             a larger t (or an answer was corrupted): {e}"
        ))
    };
    // Records both servers flagged may carry a wrong bit (Las Vegas: only there).
    let both: Vec<usize> = a0
        .flagged
        .iter()
        .filter(|i| a1.flagged.binary_search(i).is_ok())
        .map(|&i| i as usize)
        .collect();
    let rerun = |e: Error| {
        if both.is_empty() {
            too_many(e)
        } else {
            Error::Malformed(format!(
                "the PIR answers do not decode and both servers flagged {} record(s): re-query \
                 under a new nonce ({e})",
                both.len()
            ))
        }
    };
    let support = code::locate(&s, n_records).map_err(rerun)?;
    let m = support.values(&s).map_err(rerun)?;
    let md = support.values(&p).map_err(rerun)?;
    let mut res = PirResult {
        failed: both,
        ..PirResult::default()
    };
    for ((&i, &mi), &mdi) in support.positions().iter().zip(&m).zip(&md) {
        if res.failed.binary_search(&i).is_ok() {
            continue;
        }
        if mi == Gf40::ONE {
            res.matches.push((i, mdi.value()));
        } else {
            // Shares of bits XOR to bits: any other value is a corrupted answer.
            return Err(Error::Malformed(format!(
                "corrupted PIR answer: record {i} decodes to a value that is not a bit"
            )));
        }
    }
    Ok(res)
}

#[cfg(test)]
mod tests;
