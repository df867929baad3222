//! End-to-end tests of the PIR protocol functions on the insecure toy group, two servers on a
//! trusted-dealer key.

use super::*;
use crate::scheme::{EvalKey, Params, from_bytes, insecure_keygen_trusted_dealer, to_bytes};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

const L: usize = 6;
const N: usize = 20;

struct Setup {
    pk: PublicKey,
    ek: [EvalKey; 2],
    rng: ChaCha20Rng,
}

fn setup(seed: u64, d: u32) -> Setup {
    let mut rng = ChaCha20Rng::seed_from_u64(seed); // insecure fixed seed (tests)
    let (pk, ek0, ek1, _) =
        insecure_keygen_trusted_dealer(&Params::insecure_toy(4, 16, d), &mut rng).unwrap();
    Setup {
        pk,
        ek: [ek0, ek1],
        rng,
    }
}

fn random_db(rng: &mut ChaCha20Rng) -> Database {
    Database {
        records: (0..N)
            .map(|_| {
                let mut attrs: Vec<bool> = (0..L).map(|_| rng.next_u64() % 2 == 1).collect();
                // No record has every attribute, so the query wanting all of them matches none.
                if attrs.iter().all(|&a| a) {
                    attrs[(rng.next_u64() % L as u64) as usize] = false;
                }
                Record {
                    attrs,
                    payload: rng.next_u64() >> 24,
                }
            })
            .collect(),
    }
}

/// The wanted-attribute vector with index `bits` (bit `j` = attribute `j`).
fn wanted(bits: u32) -> Vec<bool> {
    (0..L).map(|j| (bits >> j) & 1 == 1).collect()
}

/// Both servers' match shares for `wanted` under `nonce`.
fn both_shares(s: &mut Setup, db: &Database, w: &[bool], nonce: u64) -> [MatchShares; 2] {
    let q = make_query(&s.pk, w, &mut s.rng).unwrap();
    [0, 1].map(|b| {
        let mut ev = Evaluator::new(&s.pk, &s.ek[b], nonce).unwrap();
        let prepared = prepare_query(&mut ev, &q).unwrap();
        match_shares(&mut ev, db, &prepared).unwrap()
    })
}

fn decode_shares(db: &Database, sh: &[Vec<Gf40>; 2], t: usize) -> Result<PirResult> {
    decode_flagged(db, sh, [&[], &[]], t)
}

fn decode_flagged(
    db: &Database,
    sh: &[Vec<Gf40>; 2],
    flagged: [&[usize]; 2],
    t: usize,
) -> Result<PirResult> {
    let a0 = answer_from_shares(db, &sh[0], flagged[0], t)?;
    let a1 = answer_from_shares(db, &sh[1], flagged[1], t)?;
    decode(&a0, &a1, db.records.len(), t)
}

/// The expected result given both servers' flags: flagged records are failures, the other
/// plaintext matches are matches.
fn expected(db: &Database, w: &[bool], sh: &[MatchShares; 2]) -> PirResult {
    let failed: Vec<usize> = sh[0]
        .flagged
        .iter()
        .filter(|i| sh[1].flagged.contains(i))
        .copied()
        .collect();
    PirResult {
        matches: db
            .plain_matches(w)
            .into_iter()
            .filter(|(i, _)| !failed.contains(i))
            .collect(),
        failed,
    }
}

/// Queries with 0, 1 and several (≥ 3) plaintext matches.
fn pick_queries(db: &Database) -> Vec<Vec<bool>> {
    let mut out = vec![];
    for want in [0usize, 1, 3] {
        let w = (1..1u32 << L)
            .map(wanted)
            .find(|w| {
                let k = db.plain_matches(w).len();
                if want == 3 {
                    (3..=6).contains(&k)
                } else {
                    k == want
                }
            })
            .unwrap_or_else(|| panic!("no query with {want} matches in {db:?}"));
        out.push(w);
    }
    out
}

#[test]
fn query_matches_plaintext() {
    let mut s = setup(21, 14);
    let db = random_db(&mut s.rng);
    let t = 8;
    for (k, w) in pick_queries(&db).into_iter().enumerate() {
        let nonce = 100 + k as u64;
        // The one-call server path.
        let q = make_query(&s.pk, &w, &mut s.rng).unwrap();
        let answers: Vec<Answer> = (0..2)
            .map(|b| {
                let mut ev = Evaluator::new(&s.pk, &s.ek[b], nonce).unwrap();
                server_answer(&mut ev, &s.pk, &db, &q, t).unwrap()
            })
            .collect();
        // The split path (shares, then syndromes) gives the same answers.
        let shares: Vec<MatchShares> = (0..2)
            .map(|b| {
                let mut ev = Evaluator::new(&s.pk, &s.ek[b], nonce).unwrap();
                let prepared = prepare_query(&mut ev, &q).unwrap();
                match_shares(&mut ev, &db, &prepared).unwrap()
            })
            .collect();
        for b in 0..2 {
            assert_eq!(
                answer_from_shares(&db, &shares[b].shares, &shares[b].flagged, t).unwrap(),
                answers[b]
            );
        }
        let res = decode(&answers[0], &answers[1], N, t).unwrap();
        let exp = expected(&db, &w, &[shares[0].clone(), shares[1].clone()]);
        assert_eq!(res, exp, "query {w:?}");
        // With the toy d = 14 flags are rare: the fixed seed has none, so every plaintext
        // match is returned with its payload.
        assert_eq!(res.matches, db.plain_matches(&w), "query {w:?}");
        assert!(res.failed.is_empty());
        // Answers survive the envelope.
        let bytes = to_bytes(&answers[0]).unwrap();
        assert_eq!(&bytes[4..8], b"HSpa");
        let back: Answer = from_bytes(&bytes).unwrap();
        back.validate().unwrap();
        assert_eq!(back, answers[0]);
    }
}

#[test]
fn real_flags_are_reported_as_failures() {
    // d = 5: the toy parameters flag often (about one conversion in 8), so several records are
    // randomized; t = N leaves room for all of them.
    let mut s = setup(22, 5);
    let db = random_db(&mut s.rng);
    let w = pick_queries(&db).pop().unwrap();
    let mut total_flags = 0;
    for nonce in 0..3 {
        let sh = both_shares(&mut s, &db, &w, nonce);
        total_flags += sh[0].flagged.len() + sh[1].flagged.len();
        let shares = [sh[0].shares.clone(), sh[1].shares.clone()];
        let res = decode_flagged(&db, &shares, [&sh[0].flagged, &sh[1].flagged], N).unwrap();
        assert_eq!(res, expected(&db, &w, &sh), "nonce {nonce}");
    }
    assert!(
        total_flags > 0,
        "the test must exercise flagged evaluations"
    );
}

#[test]
fn injected_failure_is_reported_not_matched() {
    let mut s = setup(23, 14);
    let db = random_db(&mut s.rng);
    let w = pick_queries(&db).pop().unwrap();
    let plain = db.plain_matches(&w);
    let sh = both_shares(&mut s, &db, &w, 5);
    assert!(sh[0].flagged.is_empty() && sh[1].flagged.is_empty());
    let matching = plain[0].0;
    let non_matching = (0..N).find(|i| plain.iter().all(|(j, _)| j != i)).unwrap();
    for victim in [matching, non_matching] {
        let mut shares = [sh[0].shares.clone(), sh[1].shares.clone()];
        // Both servers flagged record `victim` and their conversions failed: its bit is wrong.
        shares[0][victim] += Gf40::ONE;
        let res = decode_flagged(&db, &shares, [&[victim], &[victim]], 8).unwrap();
        assert_eq!(res.failed, vec![victim]);
        let exp: Vec<(usize, u64)> = plain
            .iter()
            .copied()
            .filter(|&(i, _)| i != victim)
            .collect();
        assert_eq!(res.matches, exp);
        // A flag at one server only is not a failure: the bit is right and decoded.
        let one = decode_flagged(&db, &sh.clone().map(|m| m.shares), [&[victim], &[]], 8).unwrap();
        assert!(one.failed.is_empty());
        assert_eq!(one.matches, plain);
    }
}

#[test]
fn corrupted_answer_is_detected() {
    let mut s = setup(24, 14);
    let db = random_db(&mut s.rng);
    let t = 6;
    for w in pick_queries(&db) {
        let sh = both_shares(&mut s, &db, &w, 9);
        let a0 = answer_from_shares(&db, &sh[0].shares, &sh[0].flagged, t).unwrap();
        let a1 = answer_from_shares(&db, &sh[1].shares, &sh[1].flagged, t).unwrap();
        assert_eq!(
            decode(&a0, &a1, N, t).unwrap().matches,
            db.plain_matches(&w)
        );
        for j in 0..2 * t {
            for payload_side in [false, true] {
                let mut bad = a1.clone();
                let v = if payload_side {
                    &mut bad.payload_syndromes[j]
                } else {
                    &mut bad.match_syndromes[j]
                };
                *v += Gf40::new(1 + (s.rng.next_u64() >> 25)).unwrap();
                let err = decode(&a0, &bad, N, t).unwrap_err().to_string();
                assert!(err.contains("do not decode"), "{err}");
            }
        }
        // Mixed-up answers (another query's) do not decode either, unless both are empty.
        let sh2 = both_shares(&mut s, &db, &wanted(0b11), 10);
        let other = answer_from_shares(&db, &sh2[1].shares, &sh2[1].flagged, t).unwrap();
        if other != a1 {
            assert!(decode(&a0, &other, N, t).is_err());
        }
    }
}

#[test]
fn more_than_t_matches_is_an_error() {
    let mut s = setup(25, 14);
    let db = random_db(&mut s.rng);
    let w = pick_queries(&db).pop().unwrap();
    let k = db.plain_matches(&w).len();
    assert!(k >= 3);
    let sh = both_shares(&mut s, &db, &w, 3);
    let shares = [sh[0].shares.clone(), sh[1].shares.clone()];
    for t in 1..k {
        let err = decode_shares(&db, &shares, t).unwrap_err().to_string();
        assert!(err.contains("re-run with a larger t"), "t = {t}: {err}");
    }
    assert_eq!(
        decode_shares(&db, &shares, k).unwrap().matches,
        db.plain_matches(&w)
    );
    // Every record matching: shares of the all-ones vector; t = N − 1 is too small.
    let ones = vec![Gf40::ONE; N];
    let zeros = vec![Gf40::ZERO; N];
    assert!(decode_shares(&db, &[ones.clone(), zeros.clone()], N - 1).is_err());
    let all = decode_shares(&db, &[ones, zeros], N).unwrap();
    assert_eq!(all.matches.len(), N);
}

#[test]
fn bad_inputs_are_errors() {
    let mut s = setup(26, 10);
    let db = random_db(&mut s.rng);
    let q = make_query(&s.pk, &wanted(1), &mut s.rng).unwrap();
    let mut ev = Evaluator::new(&s.pk, &s.ek[0], 1).unwrap();
    // Wrong query length.
    assert!(server_answer(&mut ev, &s.pk, &db, &q[..L - 1], 2).is_err());
    let mut long = q.clone();
    long.push(q[0].clone());
    assert!(server_answer(&mut ev, &s.pk, &db, &long, 2).is_err());
    assert!(server_answer(&mut ev, &s.pk, &db, &[], 2).is_err());
    // Wrong digit count.
    let mut short = q.clone();
    short[2].digits.pop();
    assert!(server_answer(&mut ev, &s.pk, &db, &short, 2).is_err());
    assert!(prepare_query(&mut ev, &short).is_err());
    // Bad t.
    assert!(server_answer(&mut ev, &s.pk, &db, &q, 0).is_err());
    assert!(server_answer(&mut ev, &s.pk, &db, &q, MAX_T + 1).is_err());
    // Bad databases.
    let mut big = db.clone();
    big.records[3].payload = 1 << 40;
    assert!(big.validate().is_err());
    assert!(server_answer(&mut ev, &s.pk, &big, &q, 2).is_err());
    assert!(answer_from_shares(&big, &[Gf40::ZERO; N], &[], 2).is_err());
    let mut ragged = db.clone();
    ragged.records[5].attrs.pop();
    assert!(server_answer(&mut ev, &s.pk, &ragged, &q, 2).is_err());
    assert!(answer_from_shares(&db, &[Gf40::ZERO; N - 1], &[], 2).is_err());
    // An evaluator under another key.
    let other = setup(27, 10);
    let mut ev_other = Evaluator::new(&other.pk, &other.ek[0], 1).unwrap();
    assert!(server_answer(&mut ev_other, &s.pk, &db, &q, 2).is_err());
    // Queries.
    assert!(make_query(&s.pk, &vec![true; MAX_TAGS + 1], &mut s.rng).is_err());
    // Oversized, odd, mismatched answers.
    let good = answer_from_shares(&db, &[Gf40::ZERO; N], &[], 2).unwrap();
    let mut huge = good.clone();
    huge.match_syndromes = vec![Gf40::ZERO; 2 * MAX_T + 2];
    huge.payload_syndromes = huge.match_syndromes.clone();
    assert!(huge.validate().is_err());
    assert!(decode(&huge, &huge, N, MAX_T + 1).is_err());
    let mut odd = good.clone();
    odd.match_syndromes.pop();
    odd.payload_syndromes.pop();
    assert!(decode(&odd, &odd, N, 1).is_err());
    let mut lopsided = good.clone();
    lopsided.payload_syndromes.pop();
    assert!(lopsided.validate().is_err());
    assert!(decode(&good, &lopsided, N, 2).is_err());
    let mut too_many_records = good.clone();
    too_many_records.n_records = MAX_LEN + 1;
    assert!(too_many_records.validate().is_err());
    assert!(decode(&good, &good, N + 1, 2).is_err());
    assert!(decode(&good, &good, N, 2).unwrap() == PirResult::default());
    // Decoding bytes: a syndrome of 41 bits, a truncated envelope, another type's tag.
    #[derive(serde::Serialize)]
    struct RawAnswer {
        n_records: u64,
        match_syndromes: Vec<u64>,
        payload_syndromes: Vec<u64>,
        flagged: Vec<u64>,
    }
    let raw = RawAnswer {
        n_records: N as u64,
        match_syndromes: vec![0, 1 << 40],
        payload_syndromes: vec![0, 0],
        flagged: vec![],
    };
    let bytes = coterie_base::envelope::seal(*b"HSpa", 2, &raw).unwrap();
    assert!(from_bytes::<Answer>(&bytes).is_err());
    let ok = RawAnswer {
        match_syndromes: vec![0, 1],
        ..raw
    };
    let bytes = coterie_base::envelope::seal(*b"HSpa", 2, &ok).unwrap();
    assert!(from_bytes::<Answer>(&bytes).is_ok());
    // Flagged records out of order or beyond N.
    let mut bad = good.clone();
    bad.flagged = vec![3, 2];
    assert!(bad.validate().is_err());
    bad.flagged = vec![N as u64];
    assert!(bad.validate().is_err());
    assert!(from_bytes::<Answer>(&bytes[..bytes.len() - 1]).is_err());
    assert!(from_bytes::<EvalKey>(&bytes).is_err());
}
