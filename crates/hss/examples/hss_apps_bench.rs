//! Benchmarks of the HSS applications (seed 004 §6), one JSON object per line on stdout:
//!
//! * `vote N plain|padded`: one server's evaluation of the majority of `N` inputs at `10^-4`
//!   leakage (plain: `δ = 2^-14`; padded: `δ = 2^-7`, leakage `O(δ²)`), input preparation
//!   included (paper Figure 3), with the ciphertext size per voter;
//! * `feed TAGS`: the RSS-feed conjunction of `TAGS` inputs (`TAGS − 1` non-terminal
//!   multiplications) at 1% failure, per record after the registration's one-time preparation;
//! * `triple N`: one Beaver triple over `Z_(2^N)` from two bilinear correlations (overall failure
//!   1/16), two parties on two threads, time and bytes per party;
//! * `prep COUNT`: `COUNT` authenticated SPDZ_2k triples (`k = s = 64`) from `HssPrep` and from
//!   `OtPrep`, the same engine's producers, time and bytes per triple;
//! * `pir N ATTRS`: one server's PIR answer over `N` records with `ATTRS` attributes (`t = 32`),
//!   and the client's decoding.
//!
//! Group `p = 2^1536 − 11510609` (80-bit security, spec §2) everywhere; the dealer key of the
//! single-server measurements (`insecure_keygen_trusted_dealer`) affects no timing.

use std::time::Instant;

use coterie_hss::apps::correlated::{self, FlagPolicy, HssPrep};
use coterie_hss::apps::feed;
use coterie_hss::apps::pir::{self, Database, Record};
use coterie_hss::apps::vote::{self, Mode, Vote};
use coterie_hss::group::GroupId;
use coterie_hss::leakage::{insecure_pad_trusted_dealer, prepare_key_digit_tables};
use coterie_hss::scheme::{self, Evaluator, Params, insecure_keygen_trusted_dealer};
use coterie_math::bigint::BigInt;
use coterie_net::local::run_parties;
use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
use coterie_spdz::ot_prep::OtPrep;
use coterie_spdz::ring::Z2k;
use rand::SeedableRng;

fn rng(seed: u64) -> rand_chacha::ChaCha20Rng {
    rand_chacha::ChaCha20Rng::seed_from_u64(seed) // benchmark inputs only
}

fn vote_bench(n: u32, mode: Mode) {
    let v = Vote::majority(n).unwrap();
    let flog = if mode == Mode::Padded { 7 } else { 14 };
    let params = vote::params_for(&v, mode, flog, GroupId::P1536, 4).unwrap();
    let mut r = rng(1);
    let (pk, ek0, _, sk) = insecure_keygen_trusted_dealer(&params, &mut r).unwrap();
    let enc = pk.encryptor().unwrap();
    let inputs: Vec<_> = (0..n)
        .map(|i| enc.encrypt(&pk, &BigInt::from(i % 2), &mut r))
        .collect();
    let ct_bytes = scheme::to_bytes(&inputs[0]).unwrap().len();
    let bp = v.program().unwrap();
    let t0 = Instant::now();
    let mut ev = Evaluator::new(&pk, &ek0, 1).unwrap();
    let (mults, flagged) = match mode {
        Mode::Plain => {
            let (_, f, m) = vote::eval_plain(&mut ev, &bp, &inputs).unwrap();
            (m, f)
        }
        Mode::Padded => {
            let kd = prepare_key_digit_tables(&pk).unwrap();
            let (mut pad, _, _) = insecure_pad_trusted_dealer(&params, &sk, &mut r);
            let (_, f, m) = vote::eval_padded(&mut ev, &bp, &inputs, &kd, &mut pad).unwrap();
            (m, f)
        }
    };
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "{{\"bench\": \"vote\", \"n\": {n}, \"mode\": \"{mode:?}\", \"d\": {}, \"B\": {}, \
         \"mults\": {mults}, \"secs\": {secs:.4}, \"ct_bytes\": {ct_bytes}, \"flagged\": {flagged}, \
         \"steps\": {}}}",
        params.d,
        params.base(),
        ev.stats.steps
    );
}

fn feed_bench(tags: usize, records: usize) {
    let params = Params::with_failure(GroupId::P1536, 160, 10, 4, 4).unwrap();
    let mut r = rng(2);
    let (pk0, ek0, _, _) = insecure_keygen_trusted_dealer(&params, &mut r).unwrap();
    let (pk_load, pk) = feed::load_and_record_keys(&pk0, tags, 7).unwrap();
    let params = pk.params;
    let enc = pk.encryptor().unwrap();
    let tags_ct: Vec<_> = (0..tags)
        .map(|i| enc.encrypt(&pk, &BigInt::from(u8::from(i % 5 == 0)), &mut r))
        .collect();
    let t0 = Instant::now();
    let prepared = feed::prepare_tags(
        &mut Evaluator::new(&pk_load, &ek0, u64::MAX).unwrap(),
        &tags_ct,
    )
    .unwrap();
    let prep_secs = t0.elapsed().as_secs_f64();
    // The paper's case: a record with none of the tags (every tag costs a multiplication).
    let record = vec![false; tags];
    let t1 = Instant::now();
    let mut flags = 0;
    for j in 0..records {
        let mut ev = Evaluator::new(&pk, &ek0, j as u64).unwrap();
        flags += usize::from(feed::eval_record(&mut ev, &prepared, &record).unwrap().1);
    }
    let per = t1.elapsed().as_secs_f64() / records as f64;
    let ct_bytes = scheme::to_bytes(&tags_ct[0]).unwrap().len();
    println!(
        "{{\"bench\": \"feed\", \"tags\": {tags}, \"nonterminal\": {}, \"d\": {}, \
         \"secs_per_record\": {per:.5}, \"prep_secs\": {prep_secs:.3}, \"records\": {records}, \
         \"single_flags\": {flags}, \"ct_bytes\": {ct_bytes}}}",
        tags - 1,
        params.d
    );
}

fn meshes() -> Vec<InMemoryMesh> {
    InMemoryMesh::group(
        2,
        MeshOptions {
            timeout: std::time::Duration::from_secs(3600),
            ..MeshOptions::default()
        },
    )
}

async fn triple_bench(n_bits: u32) {
    let params = correlated::triple_params(n_bits, 1.0 / 16.0).unwrap();
    let mut r = rng(3);
    let (pk, ek0, ek1, _) = insecure_keygen_trusted_dealer(&params, &mut r).unwrap();
    let keys = [ek0, ek1];
    let res = run_parties(meshes(), |mut m| {
        let (pk, ek) = (pk.clone(), keys[m.id()].clone());
        async move {
            let mut r = rng(10 + m.id() as u64);
            let t0 = Instant::now();
            let b = correlated::bench_one_triple(
                &mut m,
                &pk,
                &ek,
                n_bits,
                FlagPolicy::Exchange,
                &mut r,
            )
            .await
            .unwrap();
            let secs = t0.elapsed().as_secs_f64();
            let sent = m.stats().total_sent();
            m.close().await.unwrap();
            (secs, sent, b.usable().len())
        }
    })
    .await;
    println!(
        "{{\"bench\": \"triple\", \"n_bits\": {n_bits}, \"d\": {}, \"secs\": {:.4}, \
         \"bytes_p0\": {}, \"bytes_p1\": {}, \"usable\": {}}}",
        params.d,
        res[0].0.max(res[1].0),
        res[0].1,
        res[1].1,
        res[0].2
    );
}

async fn prep_bench(count: usize) {
    let params = correlated::triple_params(128, 1.0 / 16.0).unwrap();
    let res = run_parties(meshes(), |mut m| async move {
        let t0 = Instant::now();
        let mut h = HssPrep::setup(&mut m, Z2k::spdz2k_64(), &params, Default::default())
            .await
            .unwrap();
        let setup = t0.elapsed().as_secs_f64();
        let b0 = m.stats().total_sent();
        let t1 = Instant::now();
        let tr = h.triples(&mut m, count).await.unwrap();
        let hss = (t1.elapsed().as_secs_f64(), m.stats().total_sent() - b0);
        assert_eq!(tr.len(), count);
        let b1 = m.stats().total_sent();
        let t2 = Instant::now();
        let mut o = OtPrep::setup(&mut m, Z2k::spdz2k_64()).await.unwrap();
        let ot_setup = t2.elapsed().as_secs_f64();
        let b2 = m.stats().total_sent();
        let t3 = Instant::now();
        let tr = o.triples(&mut m, count).await.unwrap();
        let ot = (t3.elapsed().as_secs_f64(), m.stats().total_sent() - b2);
        assert_eq!(tr.len(), count);
        let _ = b1;
        m.close().await.unwrap();
        (setup, hss, ot_setup, ot)
    })
    .await;
    let (setup, hss, ot_setup, ot) = res[0];
    println!(
        "{{\"bench\": \"prep\", \"count\": {count}, \"hss_setup_secs\": {setup:.3}, \
         \"hss_secs_per_triple\": {:.5}, \"hss_bytes_per_triple\": {}, \"ot_setup_secs\": \
         {ot_setup:.3}, \"ot_secs_per_triple\": {:.6}, \"ot_bytes_per_triple\": {}}}",
        hss.0 / count as f64,
        hss.1 / count as u64,
        ot.0 / count as f64,
        ot.1 / count as u64
    );
}

fn pir_bench(n: usize, attrs: usize) {
    let mut params = Params::with_failure(GroupId::P1536, 160, 10, 4, 4).unwrap();
    params.d = vote::choose_d(
        &params,
        &[
            (attrs, vote::MultKind::RandMult),
            (attrs, vote::MultKind::Mult),
        ],
        10,
    )
    .unwrap();
    let mut r = rng(4);
    let (pk, ek0, ek1, _) = insecure_keygen_trusted_dealer(&params, &mut r).unwrap();
    let mut x = rng(5);
    let db = Database {
        records: (0..n)
            .map(|_| Record {
                attrs: (0..attrs)
                    .map(|_| rand::Rng::next_u32(&mut x).is_multiple_of(4))
                    .collect(),
                payload: rand::Rng::next_u64(&mut x) & ((1 << 40) - 1),
            })
            .collect(),
    };
    let wanted: Vec<bool> = (0..attrs).map(|i| i < attrs.saturating_sub(2)).collect();
    let query = pir::make_query(&pk, &wanted, &mut r).unwrap();
    let t = 32;
    let t0 = Instant::now();
    let mut e0 = Evaluator::new(&pk, &ek0, 9).unwrap();
    let a0 = pir::server_answer(&mut e0, &pk, &db, &query, t).unwrap();
    let server = t0.elapsed().as_secs_f64();
    let mut e1 = Evaluator::new(&pk, &ek1, 9).unwrap();
    let a1 = pir::server_answer(&mut e1, &pk, &db, &query, t).unwrap();
    let t1 = Instant::now();
    let res = pir::decode(&a0, &a1, n, t);
    let client = t1.elapsed().as_secs_f64();
    let want = db.plain_matches(&wanted);
    let ok = match &res {
        Ok(r) => r.matches == want && r.failed.is_empty(),
        Err(e) => {
            eprintln!("decode: {e}");
            false
        }
    };
    println!(
        "{{\"bench\": \"pir\", \"records\": {n}, \"attrs\": {attrs}, \"t\": {t}, \
         \"server_secs\": {server:.4}, \"client_secs\": {client:.4}, \"decoded\": {ok}, \"matches\": {}, \
         \"answer_bytes\": {}}}",
        want.len(),
        scheme::to_bytes(&a0).unwrap().len()
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num =
        |i: usize, d: usize| -> usize { args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d) };
    match args.first().map(String::as_str) {
        Some("vote") => {
            let mode = match args.get(2).map(String::as_str) {
                Some("padded") => Mode::Padded,
                _ => Mode::Plain,
            };
            vote_bench(num(1, 15) as u32, mode);
        }
        Some("feed") => feed_bench(num(1, 51), num(2, 20)),
        Some("triple") => triple_bench(num(1, 128) as u32).await,
        Some("prep") => prep_bench(num(1, 64)).await,
        Some("pir") => pir_bench(num(1, 10_000), num(2, 8)),
        _ => eprintln!(
            "usage: hss_apps_bench vote N plain|padded | feed TAGS [RECORDS] | triple NBITS | \
             prep COUNT | pir RECORDS [ATTRS]"
        ),
    }
}
