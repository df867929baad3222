//! Cheating parties, through `coterie_net::tamper::TamperMesh`: the cheater runs the honest code
//! and a rule rewrites some of its outgoing messages. Every deviation must end in an abort that
//! names the check that caught it.
//!
//! Where a former test changed a *local* value of the cheater (a MAC share, a triple share),
//! the same deviation is expressed as the change of the message that value influences, and the
//! test says so.

use coterie_base::bits::{BitReader, BitWriter};
use coterie_base::envelope::HEADER_LEN;
use coterie_net::commit::{Opening, commit};
use coterie_net::tamper::{Select, TamperMesh};
use coterie_net::{Blob, InMemoryMesh, Mesh};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use super::lanes::produce_on_lanes;
use super::ot_producer::{produce_on, produce_on_with};
use super::{big_prime, opts, run_with};
use crate::engine::{TAG_CHECK_C, TAG_CHECK_D, TAG_INPUT, TAG_OPEN, TAG_SINGLE_O};
use crate::ot_prep::{TAG_COPE, TAG_GILBOA, TAG_KOS_U, TAG_SS_SETUP, TAG_SS_U};
use crate::wire::{open_elems, seal_elems};
use crate::*;

type Tampered = TamperMesh<InMemoryMesh>;

fn tampered_group(n: usize) -> Vec<Tampered> {
    InMemoryMesh::group(n, opts())
        .into_iter()
        .map(TamperMesh::new)
        .collect()
}

/// Adds `e` to element `index` of an engine message (an envelope of ring elements in a
/// [`Blob`]).
fn add_to_elem<R: Ring>(ring: &R, msg: &mut Blob, index: usize, e: &R::Elem) {
    let count = (msg.0.len() - HEADER_LEN) / ring.elem_bytes();
    let mut v = open_elems(ring, 0, &msg.0, count).unwrap();
    v[index] = ring.add(&v[index], e);
    *msg = seal_elems(ring, &v).unwrap();
}

/// A rule adding `e` to element `index` of the selected engine messages.
fn elem_error<R: Ring>(
    sel: Select,
    ring: &R,
    index: usize,
    e: R::Elem,
) -> coterie_net::tamper::Rule {
    let ring = ring.clone();
    sel.rewrite(move |m: &mut Blob| add_to_elem(&ring, m, index, &e))
}

/// How party 1 cheats in [`cheating_run`].
#[derive(Clone, Copy)]
enum EngineCheat {
    /// Adds this to its share of the first value of its next opening (the Beaver opening).
    ShareError(u64),
    /// A MAC-share error: its σ in the MAC check is not the one its MAC shares give.
    MacError,
    /// Reveals a value other than the committed one in the MAC check's opening round.
    BadCommitOpen,
}

/// Runs a 3-party Beaver multiplication + opening + MAC check where party 1 cheats as `cheat`
/// says; returns every party's result.
async fn cheating_run<R: Ring>(ring: R, cheat: EngineCheat) -> Vec<Result<()>> {
    let mut rng = ChaCha20Rng::seed_from_u64(99);
    let dealer = InsecureDealer::insecure_new(ring, 3, &mut rng).unwrap();
    let counts = Counts {
        triples: 4,
        bits: 0,
        randoms: 8,
        masks_per_party: 4,
    };
    let preps = dealer.deal(counts, &mut rng);
    run_with(
        tampered_group(3),
        preps,
        move |mut e, mut mesh| async move {
            let me = mesh.id();
            let r = e.ring().clone();
            let vals: Vec<_> = (0..4).map(|i| r.embed_u64(i + 5)).collect();
            let x = e
                .input(&mut mesh, 0, (me == 0).then_some(&vals[..]), 4)
                .await?;
            let y = e
                .input(&mut mesh, 2, (me == 2).then_some(&vals[..]), 4)
                .await?;
            let mut x = x;
            if me == 1 {
                match cheat {
                    EngineCheat::ShareError(err) => {
                        // A consistent cheater: it adds the error to the share it sends in its next
                        // opening (the Beaver opening of x_0 − a_0) and uses the same share in its
                        // own sum, so every party opens the same wrong value and the MAC check
                        // itself must catch it. (The error changes the share the cheater holds; the
                        // message it influences carries it. A cheater that only rewrites the
                        // message is caught earlier: `wire_only_share_error_is_caught_by_the_echo`.)
                        x[0].v = r.add(&x[0].v, &r.embed_u64(err));
                    }
                    EngineCheat::MacError => {
                        // Formerly an error added to the local MAC share of the first checked
                        // value; it reaches the wire only through σ_1 (committed in round C, opened
                        // in round D). Express it there: commit to and open a σ_1 other than the
                        // one the MAC shares give, consistently, so the commitment opens and the
                        // sum Σ σ_i is not zero.
                        let wrong = r.encode(&[r.embed_u64(0x5eed)]);
                        let (c, o) = commit("coterie-spdz/mac-check/0/sigma", 1, &wrong);
                        mesh.add(Select::any().tag(TAG_CHECK_C).replace(&c));
                        mesh.add(Select::any().tag(TAG_CHECK_D).replace(&(o, wrong)));
                    }
                    EngineCheat::BadCommitOpen => {
                        mesh.add(
                            Select::any()
                                .tag(TAG_CHECK_D)
                                .rewrite(|m: &mut (Opening, Vec<u8>)| m.1[0] ^= 1),
                        );
                    }
                }
            }
            let z = e.mul(&mut mesh, &x, &y).await?;
            e.open(&mut mesh, &z).await?;
            e.check(&mut mesh).await?;
            // One more round, so that a cheater whose own view passed the check (a wrong σ_1 on
            // the wire only) learns of the honest parties' abort instead of closing first.
            let _: Vec<u8> = mesh.exchange_all_tagged(0x5D2F_0001, &0u8).await?;
            mesh.close().await?;
            Ok(())
        },
    )
    .await
}

fn assert_honest_caught(res: &[Result<()>], check: &str, party: Option<usize>) {
    for (i, r) in res.iter().enumerate() {
        if i == 1 {
            assert!(r.is_err(), "the cheater's run must end in an abort too");
            continue;
        }
        match r {
            Err(e) => {
                // an honest party either detected it itself (naming the check) or was told by
                // the abort of another honest party (whose message names the check)
                let named = e.check() == Some(check) || e.to_string().contains(check);
                assert!(named, "party {i}: {e} does not name {check}");
                if let (Some(p), Some(c)) = (party, e.check())
                    && c == check
                {
                    match e {
                        Error::CommitmentMismatch { party: q, .. } => assert_eq!(*q, p),
                        Error::InconsistentBroadcast { party: q, .. } => assert_eq!(*q, p),
                        _ => {}
                    }
                }
            }
            Ok(()) => panic!("party {i} accepted a cheat"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cheat_share_error_is_caught() {
    for ring_case in 0..2 {
        let cheat = EngineCheat::ShareError(1);
        let res = if ring_case == 0 {
            cheating_run(Z2k::spdz2k_64(), cheat).await
        } else {
            cheating_run(Fp64::mersenne61(), cheat).await
        };
        assert_honest_caught(&res, "mac-check", None);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cheat_mac_share_error_is_caught() {
    for ring_case in 0..2 {
        let res = if ring_case == 0 {
            cheating_run(Z2k::spdz2k_32(), EngineCheat::MacError).await
        } else {
            cheating_run(FpBig::new(big_prime(128)).unwrap(), EngineCheat::MacError).await
        };
        assert_honest_caught(&res, "mac-check", None);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cheat_commitment_opening_is_caught() {
    let res = cheating_run(Z2k::spdz2k_64(), EngineCheat::BadCommitOpen).await;
    assert_honest_caught(&res, "mac-check-commitment", Some(1));
    for r in [&res[0], &res[2]] {
        if let Err(Error::CommitmentMismatch { party, .. }) = r {
            assert_eq!(*party, 1);
        }
    }
}

/// An error only in the high `s` bits of a Z_2^k share (no change of the value mod 2^k) is
/// harmless, but an error at bit k-1 must be caught.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cheat_error_at_top_value_bit_is_caught() {
    let res = cheating_run(Z2k::spdz2k_32(), EngineCheat::ShareError(1 << 31)).await;
    assert_honest_caught(&res, "mac-check", None);
}

/// A cheater that only rewrites its share in the Beaver opening (its own sum keeps the honest
/// share) opens another value than the honest parties: the echo of the opened values at the
/// start of the MAC check catches it and names a party whose view differs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wire_only_share_error_is_caught_by_the_echo() {
    let mut rng = ChaCha20Rng::seed_from_u64(98);
    let ring = Z2k::spdz2k_64();
    let dealer = InsecureDealer::insecure_new(ring, 3, &mut rng).unwrap();
    let counts = Counts {
        triples: 2,
        randoms: 2,
        masks_per_party: 2,
        ..Counts::default()
    };
    let preps = dealer.deal(counts, &mut rng);
    let res = run_with(
        tampered_group(3),
        preps,
        move |mut e, mut mesh| async move {
            let me = mesh.id();
            let x = e
                .input(&mut mesh, 0, (me == 0).then_some(&[3u128, 4][..]), 2)
                .await?;
            let fired = (me == 1).then(|| {
                // the first opening is the Beaver opening: one message to each peer
                mesh.add(elem_error(
                    Select::any().tag(TAG_OPEN).indices(0..2),
                    &ring,
                    0,
                    1,
                ))
            });
            let z = e.mul(&mut mesh, &x, &x).await?;
            e.open(&mut mesh, &z).await?;
            if let Some(f) = fired {
                assert_eq!(f.fired(), 2);
            }
            e.check(&mut mesh).await?;
            mesh.close().await?;
            Ok(())
        },
    )
    .await;
    for (i, r) in res.iter().enumerate() {
        let e = r.as_ref().expect_err("a cheat must abort");
        assert!(
            e.to_string().contains("opened-values-echo"),
            "party {i}: {e}"
        );
    }
}

/// A Beaver opening one element short is refused as malformed, naming its sender, and nothing
/// of the failed opening stays pending for a later MAC check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_opening_is_malformed_and_leaves_nothing_pending() {
    let mut rng = ChaCha20Rng::seed_from_u64(61);
    let ring = Z2k::spdz2k_64();
    let dealer = InsecureDealer::insecure_new(ring, 3, &mut rng).unwrap();
    let counts = Counts {
        triples: 2,
        masks_per_party: 2,
        ..Counts::default()
    };
    let preps = dealer.deal(counts, &mut rng);
    // every party waits for the others before it drops its mesh, so no one sees a departure
    // instead of the message under test
    let done = std::sync::Arc::new(tokio::sync::Barrier::new(3));
    let res = run_with(tampered_group(3), preps, move |mut e, mut mesh| {
        let done = done.clone();
        async move {
            let me = mesh.id();
            let x = e
                .input(&mut mesh, 0, (me == 0).then_some(&[3u128, 4][..]), 2)
                .await?;
            let before = e.pending_opened().len();
            if me == 1 {
                mesh.add(
                    Select::any()
                        .tag(TAG_OPEN)
                        .indices(0..2)
                        .rewrite(|m: &mut Blob| {
                            let len = m.0.len();
                            m.0.truncate(len - 16);
                        }),
                );
            }
            let r = e.mul(&mut mesh, &x, &x).await;
            if r.is_err() {
                assert_eq!(e.pending_opened().len(), before, "party {me}");
            }
            done.wait().await;
            r.map(|_| ())
        }
    })
    .await;
    for i in [0, 2] {
        assert!(
            matches!(res[i], Err(Error::Malformed { party: 1, .. })),
            "party {i}: {:?}",
            res[i]
        );
    }
}

/// SingleCheck (per-value, 2 rounds): honest runs pass, split into its two halves with an
/// opening in between; a share error and a bad commitment opening are each caught.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn single_check_honest_and_cheating() {
    for case in 0..3 {
        let mut rng = ChaCha20Rng::seed_from_u64(50 + case);
        let dealer = InsecureDealer::insecure_new(Z2k::spdz2k_64(), 3, &mut rng).unwrap();
        let preps = dealer.deal(
            Counts {
                triples: 2,
                randoms: 4,
                masks_per_party: 2,
                ..Counts::default()
            },
            &mut rng,
        );
        let res = run_with(
            tampered_group(3),
            preps,
            move |mut e, mut mesh| async move {
                let me = mesh.id();
                let v = [5u128, 6];
                let x = e
                    .input(&mut mesh, 0, (me == 0).then_some(&v[..]), 2)
                    .await?;
                let r = *e.ring();
                if me == 1 && case == 2 {
                    // the first single check's opening reveals another σ than committed
                    mesh.add(
                        Select::any()
                            .tag(TAG_SINGLE_O)
                            .indices(0..2)
                            .rewrite(|m: &mut (Opening, Vec<u8>)| m.1[0] ^= 1),
                    );
                }
                // case 1: a consistent cheater's share error of 3 on the first value of the Beaver
                // opening (x_0 − a_0; see `cheating_run`)
                let mut xa = x.clone();
                if me == 1 && case == 1 {
                    xa[0].v = r.add(&xa[0].v, &3);
                }
                let z = e.mul(&mut mesh, &xa, &x).await?;
                let o1 = e.open(&mut mesh, &z[..1]).await?;
                let pending = e.check_single_commit(&mut mesh).await?;
                let o2 = e.open(&mut mesh, &z[1..]).await?;
                e.check_single_open(&mut mesh, pending).await?;
                e.check_single(&mut mesh).await?;
                mesh.close().await?;
                Ok((o1[0], o2[0]))
            },
        )
        .await;
        for (i, r) in res.iter().enumerate() {
            match (case, r) {
                (0, Ok(o)) => assert_eq!(*o, (25, 36)),
                (1, Err(e)) if i != 1 => {
                    assert!(e.to_string().contains("single-check"), "{e}")
                }
                (2, Err(e)) if i != 1 => {
                    assert!(e.to_string().contains("single-check-commitment"), "{e}");
                    if let Error::CommitmentMismatch { party, .. } = e {
                        assert_eq!(*party, 1);
                    }
                }
                (_, Err(_)) if i == 1 => {}
                (c, r) => panic!("case {c} party {i}: {r:?}"),
            }
        }
    }
}

/// An input owner that sends different masked values to different parties is caught by the
/// echo round, which names a party whose view differs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn equivocating_input_owner_is_caught() {
    let mut rng = ChaCha20Rng::seed_from_u64(90);
    let ring = Fp64::mersenne61();
    let dealer = InsecureDealer::insecure_new(ring, 3, &mut rng).unwrap();
    let preps = dealer.deal(
        Counts {
            masks_per_party: 1,
            ..Counts::default()
        },
        &mut rng,
    );
    let res = run_with(
        tampered_group(3),
        preps,
        move |mut e, mut mesh| async move {
            let me = mesh.id();
            if me == 1 {
                // the owner sends x − r + 1 to the last party, x − r to the others
                mesh.add(elem_error(Select::to(2).tag(TAG_INPUT).nth(0), &ring, 0, 1));
            }
            e.input(&mut mesh, 1, (me == 1).then_some(&[5u64][..]), 1)
                .await?;
            mesh.close().await?;
            Ok(())
        },
    )
    .await;
    for (i, r) in res.iter().enumerate() {
        let e = r.as_ref().expect_err("equivocation must abort");
        if i != 1 {
            assert!(e.to_string().contains("input-broadcast"), "party {i}: {e}");
        }
    }
}

// ----- the OT producer -----

/// Runs the OT producer for `counts` on `n` parties, party `cheater` with `rules`.
async fn produce_cheating(
    n: usize,
    ring: Z2k,
    counts: Counts,
    cheater: usize,
    rules: impl FnOnce(&mut Tampered),
) -> Vec<Result<VecPrep<Z2k>>> {
    let mut meshes = tampered_group(n);
    rules(&mut meshes[cheater]);
    produce_on(meshes, ring, counts).await
}

/// Every honest party's error names `check`; the cheater fails too (it gets the abort).
fn assert_prep_abort(res: &[Result<VecPrep<Z2k>>], cheater: usize, check: &str) {
    for (i, r) in res.iter().enumerate() {
        let e = r.as_ref().expect_err("a cheat must abort");
        if i != cheater {
            assert!(
                e.check() == Some(check) || e.to_string().contains(check),
                "party {i}: {e} (wanted {check})"
            );
        }
    }
}

/// Adds `e` (mod 2^128) to the `i`-th 128-bit value of an OT message whose payload packs
/// 128-bit values (`k + s = 128`).
fn add_to_u128(msg: &mut Blob, i: usize, e: u128) {
    let at = HEADER_LEN + 16 * i;
    let mut b = [0u8; 16];
    b.copy_from_slice(&msg.0[at..at + 16]);
    let v = u128::from_le_bytes(b).wrapping_add(e);
    msg.0[at..at + 16].copy_from_slice(&v.to_le_bytes());
}

/// A party that adds an error to its share of a triple's c is caught by the sacrifice.
///
/// Formerly a local error on the share of `c` of the first triple before authentication. On the
/// wire it shows in the COPE corrections that authenticate `c` (all `u_l` of value `2t`, the
/// first `c`, carry `c + e`: the peers' MAC parts then authenticate `c + e`) and in the
/// sacrifice's opening of `z = t·c − ĉ − ρ·b`, the value the sacrifice tests: the cheater's
/// share of `z_0` carries the error too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cheating_triple_is_caught_by_the_sacrifice() {
    let counts = Counts {
        triples: 8,
        ..Counts::default()
    };
    let ring = Z2k::spdz2k_64();
    let err = 1u128 << 63;
    let res = produce_cheating(3, ring, counts, 1, |m| {
        add_c_error_rules(m, ring, counts.triples, err)
    })
    .await;
    for (i, r) in res.iter().enumerate() {
        let e = r.as_ref().expect_err("a cheat must abort");
        if i != 1 {
            assert!(
                e.check() == Some("triple-sacrifice") || e.to_string().contains("sacrifice"),
                "party {i}: {e}"
            );
        }
    }
}

/// The same cheat as [`cheating_triple_is_caught_by_the_sacrifice`] on lane 1 of two
/// ([`OtLanes`]; lane 0 honest): the lane's own sacrifice catches it, and the whole run aborts
/// at every honest party naming the check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cheating_on_one_lane_is_caught_by_its_sacrifice() {
    let counts = Counts {
        triples: 8,
        ..Counts::default()
    };
    let ring = Z2k::spdz2k_64();
    let err = 1u128 << 63;
    let mut lanes: Vec<Vec<Tampered>> = (0..3).map(|_| Vec::new()).collect();
    for _ in 0..2 {
        for (i, m) in tampered_group(3).into_iter().enumerate() {
            lanes[i].push(m);
        }
    }
    // lane 1 makes 4 of the 8 triples, in one batch
    add_c_error_rules(&mut lanes[1][1], ring, counts.triples / 2, err);
    let res = produce_on_lanes(lanes, ring, counts).await;
    assert_prep_abort(&res, 1, "sacrifice");
}

/// The rules of a cheater that adds `err` to its share of the first `c` of a batch of `t`
/// triples: in the COPE corrections that authenticate it (value `2t` of the COPE batch, to the
/// first two peers) and in its share of the sacrifice's `z_0` (the batch opens `(ρ, y)` then
/// `z`: the z opening is the second `TAG_OPEN` to each of the two peers).
fn add_c_error_rules(m: &mut Tampered, ring: Z2k, t: usize, err: u128) {
    let p = cope_digit(&ring);
    m.add(
        Select::any()
            .tag(TAG_COPE)
            .indices(0..2)
            .rewrite_bytes(move |b| {
                rewrite_cope(
                    b,
                    ring,
                    p,
                    |v, _l, u| if v == 2 * t { u.wrapping_add(err) } else { u },
                )
            }),
    );
    m.add(elem_error(
        Select::any().tag(TAG_OPEN).indices(2..4),
        &ring,
        0,
        err,
    ));
}

/// The digit size of COPE in digits under the default OT extension (`crate::cope`).
fn cope_digit(ring: &Z2k) -> u32 {
    match crate::ot_prep::DEFAULT_OT_EXTENSION {
        OtExtension::SoftSpoken { k } => crate::cope::digit_size(k, ring.s()),
        OtExtension::Kos => 1,
    }
}

/// Rewrites every packed COPE correction `u_l` of value `v` (digit `l` of `p` bits, width
/// `k + s − pl`; bit-wise COPE is `p = 1`) in a postcard byte-string message holding an OT
/// envelope: `f(v, l, u)` gives the new value.
fn rewrite_cope(msg: &mut Vec<u8>, ring: Z2k, p: u32, f: impl Fn(usize, u32, u128) -> u128) {
    let (s, kk) = (ring.s(), ring.k() + ring.s());
    let mut blob: Blob = postcard::from_bytes(msg).unwrap();
    let payload = blob.0[HEADER_LEN..].to_vec();
    let per = crate::cope::correction_bits(p, s, kk);
    let count = (payload.len() as u64 * 8 / per) as usize;
    let mut rd = BitReader::new(&payload);
    let mut w = BitWriter::with_capacity(payload.len());
    for v in 0..count {
        for l in 0..s / p {
            let u = rd.get_u128(kk - p * l).unwrap();
            w.put_u128(f(v, l, u), kk - p * l);
        }
    }
    let out = w.finish();
    assert_eq!(out.len(), payload.len());
    blob.0.truncate(HEADER_LEN);
    blob.0.extend_from_slice(&out);
    *msg = postcard::to_allocvec(&blob).unwrap();
}

/// A selective-failure probe: a cheating OT sender adds an error to every Gilboa correction
/// of one triple toward every peer; the combined triple is wrong, so the sacrifice aborts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gilboa_probe_is_caught_by_the_sacrifice() {
    let counts = Counts {
        triples: 4,
        ..Counts::default()
    };
    let ring = Z2k::spdz2k_64();
    let tau = crate::ot_prep::combine_width(&ring);
    for (n, err) in [(2, 1u128), (3, 1u128 << 100)] {
        let res = produce_cheating(n, ring, counts, 0, |m| {
            // the corrections of the first triple are the first τ values (k + s = 128 bits)
            m.add(Select::any().tag(TAG_GILBOA).rewrite(move |b: &mut Blob| {
                for h in 0..tau {
                    add_to_u128(b, h, err);
                }
            }));
        })
        .await;
        assert_prep_abort(&res, 0, "sacrifice");
    }
}

/// A party that deviates in COPE (different inputs `x` in different `u_l`) gets a wrong MAC
/// on the authenticated value; the authentication check catches it, with COPE in digits
/// (SoftSpokenOT, the default) and with bit-wise COPE (KOS).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inconsistent_cope_input_is_caught() {
    // `p`: the digit size of the COPE the extension runs (1: bit-wise COPE, with KOS)
    let cope_error = |ring: Z2k, p: u32, e: u128| {
        move |m: &mut Tampered| {
            // u_l + e for every digit l ≥ 1 of the first value of every COPE message
            m.add(Select::any().tag(TAG_COPE).rewrite_bytes(move |b| {
                rewrite_cope(b, ring, p, |v, l, u| {
                    if v == 0 && l >= 1 {
                        u.wrapping_add(e)
                    } else {
                        u
                    }
                })
            }));
        }
    };
    let ring = Z2k::spdz2k_64();
    let cases = [
        (crate::ot_prep::DEFAULT_OT_EXTENSION, cope_digit(&ring)),
        (OtExtension::Kos, 1),
    ];
    for (ext, p) in cases {
        let counts = Counts {
            triples: 3,
            ..Counts::default()
        };
        for (n, cheater) in [(2, 1), (3, 2)] {
            let res =
                produce_cheating_with(n, ring, counts, ext, cheater, cope_error(ring, p, 5)).await;
            assert_prep_abort(&res, cheater, "authentication-mac-check");
        }
        // also when only authenticated values are made (masks and randoms)
        let counts = Counts {
            randoms: 3,
            masks_per_party: 2,
            ..Counts::default()
        };
        let ring32 = Z2k::spdz2k_32();
        let p32 = if p == 1 { 1 } else { cope_digit(&ring32) };
        let res =
            produce_cheating_with(2, ring32, counts, ext, 0, cope_error(ring32, p32, 1 << 70))
                .await;
        assert_prep_abort(&res, 0, "authentication-mac-check");
    }
}

/// An additive error on a triple share after authentication (value changed, MAC not) is
/// caught by the MAC check on the preprocessing openings.
///
/// Formerly a local error on the share (not the MAC) of the first triple's `c` after
/// authentication. The share reaches the wire only in the sacrifice's openings; it is expressed
/// as the error it makes in the cheater's share of `z_0 = t·c_0 − ĉ_0 − ρ_0·b_0` (the second
/// engine opening of the batch), which the sacrifice tests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn triple_share_error_after_authentication_is_caught() {
    let counts = Counts {
        triples: 3,
        ..Counts::default()
    };
    let ring = Z2k::spdz2k_64();
    let res = produce_cheating(3, ring, counts, 1, |m| {
        m.add(elem_error(
            Select::any().tag(TAG_OPEN).indices(2..4),
            &ring,
            0,
            1 << 20,
        ));
    })
    .await;
    for (i, r) in res.iter().enumerate() {
        let e = r.as_ref().expect_err("a cheat must abort");
        if i != 1 {
            let c = e.check();
            assert!(
                c == Some("triple-sacrifice")
                    || c == Some("authentication-mac-check")
                    || e.to_string().contains("sacrifice")
                    || e.to_string().contains("authentication-mac-check"),
                "party {i}: {e}"
            );
        }
    }
}

/// A party that inputs a non-bit (2) to the random-bit step makes the XOR of all inputs a
/// non-bit whatever the honest bits are: the one bit check on the result aborts
/// `random-bit-input` at every honest party. With bits only, every party's result is a bit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_bit_input_to_random_bits_is_caught() {
    for (n, cheat) in [(2, Some(1)), (3, Some(0)), (3, None)] {
        let ring = Z2k::spdz2k_64();
        let mut tasks = Vec::new();
        for mut mesh in InMemoryMesh::group(n, opts()) {
            tasks.push(tokio::spawn(async move {
                let me = mesh.id();
                let mut p = OtPrep::setup(&mut mesh, ring).await?;
                let mut mine: Vec<u128> = (0..8).map(|j| ((j + me) % 2) as u128).collect();
                if cheat == Some(me) {
                    mine[3] = 2;
                }
                let out = p.bits_from_inputs(&mut mesh, mine).await;
                mesh.close().await.ok();
                out
            }));
        }
        let mut res = Vec::new();
        for t in tasks {
            res.push(t.await.unwrap());
        }
        match cheat {
            Some(cheater) => {
                for (i, r) in res.iter().enumerate() {
                    let e = r.as_ref().expect_err("a non-bit input must abort");
                    if i != cheater {
                        assert!(
                            e.check() == Some("random-bit-input")
                                || e.to_string().contains("random-bit-input"),
                            "party {i}: {e}"
                        );
                    }
                }
            }
            None => {
                let shares: Vec<Vec<Share<u128>>> = res.into_iter().map(|r| r.unwrap()).collect();
                for j in 0..8 {
                    let v = shares.iter().fold(0u128, |a, s| ring.add(&a, &s[j].v));
                    // XOR of (j + me) % 2 over me = 0, 1, 2
                    let want = (0..n).fold(0, |x, me| x ^ ((j + me) % 2)) as u128;
                    assert_eq!(ring.to_value(&v), want, "bit {j}");
                }
            }
        }
    }
}

/// Runs the OT producer with OT extension `ext` for `counts` on `n` parties, party `cheater`
/// with `rules`.
async fn produce_cheating_with(
    n: usize,
    ring: Z2k,
    counts: Counts,
    ext: OtExtension,
    cheater: usize,
    rules: impl FnOnce(&mut Tampered),
) -> Vec<Result<VecPrep<Z2k>>> {
    let mut meshes = tampered_group(n);
    rules(&mut meshes[cheater]);
    produce_on_with(meshes, ring, counts, Some(ext)).await
}

/// Every honest party's error is the abort of `check` naming `cheater`, or (for a party that
/// did not run the check itself) an error that names `check`; the cheater fails too.
fn assert_ext_abort(res: &[Result<VecPrep<Z2k>>], cheater: usize, check: &str) {
    for (i, r) in res.iter().enumerate() {
        match r {
            Err(Error::PrepCheckFailed { check: c, party }) if i != cheater => {
                assert_eq!((*c, *party), (check, cheater), "party {i}");
            }
            Err(e) if i != cheater => assert!(e.to_string().contains(check), "party {i}: {e}"),
            Err(_) => {}
            Ok(_) => panic!("party {i}: the cheat was accepted"),
        }
    }
}

const SOFTSPOKEN_KS: [u32; 3] = [2, 4, 8];

/// An OT-extension receiver with inconsistent choice bits is caught by the consistency check,
/// which names it: KOS (one choice bit flipped in half of the 128 columns u) and SoftSpokenOT
/// for k = 2, 4, 8 (one choice bit flipped in half of the 128/k block corrections).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inconsistent_ot_extension_is_caught() {
    let counts = Counts {
        triples: 2,
        ..Counts::default()
    };
    let mut cases = vec![(OtExtension::Kos, TAG_KOS_U, 128usize)];
    cases
        .extend(SOFTSPOKEN_KS.map(|k| (OtExtension::SoftSpoken { k }, TAG_SS_U, 128 / k as usize)));
    for (ext, tag, ncols) in cases {
        let res = produce_cheating_with(2, Z2k::spdz2k_64(), counts, ext, 1, |m| {
            // flip one choice bit (bit 0 of word 0) in half of the columns sent to the peer;
            // the payload is the columns one after the other
            m.add(Select::any().tag(tag).rewrite(move |b: &mut Blob| {
                let col = (b.0.len() - HEADER_LEN) / ncols;
                for c in 0..ncols / 2 {
                    b.0[HEADER_LEN + c * col] ^= 1;
                }
            }));
        })
        .await;
        assert_ext_abort(&res, 1, ext.check_name());
    }
}

/// A SoftSpokenOT receiver that sends a wrong GGM setup correction (the sender then holds a
/// leaf the receiver does not) is caught by the consistency check at the first batch, for 2
/// and 3 parties and k = 2, 4, 8.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tampered_softspoken_setup_is_caught() {
    let counts = Counts {
        triples: 2,
        ..Counts::default()
    };
    for k in SOFTSPOKEN_KS {
        for (n, level_ot) in [(2, 0usize), (3, 127)] {
            let ext = OtExtension::SoftSpoken { k };
            let res = produce_cheating_with(n, Z2k::spdz2k_32(), counts, ext, 1, |m| {
                // the payload is 128 pairs (c_0, c_1) of 16 bytes; change both messages of
                // base OT `level_ot` (0: the leaf level of block 0; 127: the root's children
                // of the last block), so the sender decodes a wrong sibling whatever Δ is
                m.add(
                    Select::any()
                        .tag(TAG_SS_SETUP)
                        .rewrite(move |b: &mut Blob| {
                            let at = HEADER_LEN + 32 * level_ot;
                            b.0[at] ^= 0x5a;
                            b.0[at + 16] ^= 0x5a;
                        }),
                );
            })
            .await;
            assert_ext_abort(&res, 1, "softspoken-consistency");
        }
    }
}

/// A value holder that sends wrong GGM setup corrections for COPE in digits (after
/// SoftSpokenOT's 128 pairs; the key holder then holds other leaves than it should, so its MAC
/// shares are wrong) is caught by the authentication check, for 2 and 3 parties and k = 2, 4,
/// 8, at the leaf level of the first digit and at the root's children of the last.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tampered_cope_setup_is_caught() {
    let counts = Counts {
        triples: 2,
        ..Counts::default()
    };
    let ring = Z2k::spdz2k_64();
    for k in SOFTSPOKEN_KS {
        for (n, level_ot) in [(2, 0usize), (3, ring.s() as usize - 1)] {
            let ext = OtExtension::SoftSpoken { k };
            let res = produce_cheating_with(n, ring, counts, ext, 1, |m| {
                m.add(
                    Select::any()
                        .tag(TAG_SS_SETUP)
                        .rewrite(move |b: &mut Blob| {
                            let at = HEADER_LEN + 32 * (128 + level_ot);
                            b.0[at] ^= 0x5a;
                            b.0[at + 16] ^= 0x5a;
                        }),
                );
            })
            .await;
            assert_prep_abort(&res, 1, "authentication-mac-check");
        }
    }
}

/// A SoftSpokenOT receiver that tampers with its per-block corrections `u^(b) ⊕ x` (one bit of
/// every block, at a different OT in each block) is caught by the consistency check. (A block
/// `b` with `δ_b = 0` does not enter the sender's rows, so one tampered block alone escapes
/// with probability `2^-k`, harmlessly; every block but the first is tampered here, so the
/// test fails with probability `2^{-(128-k)}`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tampered_softspoken_block_correction_is_caught() {
    let counts = Counts {
        triples: 2,
        ..Counts::default()
    };
    for k in SOFTSPOKEN_KS {
        let ncols = 128 / k as usize;
        let ext = OtExtension::SoftSpoken { k };
        let res = produce_cheating_with(2, Z2k::spdz2k_64(), counts, ext, 0, |m| {
            m.add(Select::any().tag(TAG_SS_U).rewrite(move |b: &mut Blob| {
                let col = (b.0.len() - HEADER_LEN) / ncols;
                for c in 1..ncols {
                    b.0[HEADER_LEN + c * col + 8 + c % 16] ^= 1 << (c % 8);
                }
            }));
        })
        .await;
        assert_ext_abort(&res, 0, "softspoken-consistency");
    }
}

/// Random bits by square roots, `OtPrep::bits` alone, over `Z_{2^32}` (square roots in
/// `Z_{2^34}` with `s = 64`) and `Z_{2^64}` (in `Z_{2^66}` with `s' = 62`, then the lift's
/// opening in `Z_{2^64}` with 63 bits of slack, the last `TAG_OPEN`): a party that shifts its
/// share of the lift's opening, of the opened square `r²` or of the opening of `δ = a − b`
/// before it (the square of `a` from its own triple) is
/// caught by the check of the bit step before any bit is returned: the echo of the opened values
/// (party 0 saw other values than the cheater), or its MAC check, `random-bit-mac-check`. An
/// error of 8 keeps the opened square an odd square (1 mod 8), so only the check stands between
/// it and a wrong root.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shifted_openings_in_random_bits_are_caught() {
    let run = |ring: Z2k, meshes: Vec<Tampered>| async move {
        let mut tasks = Vec::new();
        for mut mesh in meshes {
            tasks.push(tokio::spawn(async move {
                let mut p = OtPrep::setup(&mut mesh, ring).await?;
                let out = p.bits(&mut mesh, 4).await;
                mesh.close().await.ok();
                out.map(|b| (p.mac_key_share(), b))
            }));
        }
        let mut res = Vec::new();
        for t in tasks {
            res.push(t.await.unwrap());
        }
        res
    };
    let z34 = Z2k::new(34, 64).unwrap();
    let (z66, lift) = (Z2k::new(66, 62).unwrap(), Z2k::new(64, 63).unwrap());
    // (ring, [(openings before the last one, the ring of its elements, error)])
    let cases = [
        (
            Z2k::spdz2k_32(),
            vec![(0, z34, 8u128), (0, z34, 1 << 20), (1, z34, 1)],
        ),
        (
            Z2k::spdz2k_64(),
            vec![
                (0, lift, 1u128),
                (1, z66, 8),
                (1, z66, 1 << 20),
                (2, z66, 1),
            ],
        ),
    ];
    for (ring, shifts) in cases {
        for n in [2, 3] {
            // the honest run: its bits are bits, and the count of TAG_OPEN messages to party 0
            let mut meshes = tampered_group(n);
            let never = u64::MAX - 1..u64::MAX;
            let seen = meshes[1].add(Select::to(0).tag(TAG_OPEN).indices(never).drop_message());
            let honest: Vec<_> = run(ring, meshes)
                .await
                .into_iter()
                .map(|r| r.unwrap())
                .collect();
            let alpha = honest.iter().fold(0u128, |a, (k, _)| ring.add(&a, k));
            for j in 0..4 {
                let sh: Vec<&Share<u128>> = honest.iter().map(|(_, b)| &b[j]).collect();
                let (v, m) = crate::verify::open_share(&ring, &sh);
                assert!(
                    ring.to_value(&v) <= 1 && m == ring.mul(&alpha, &v),
                    "bit {j}"
                );
            }
            let opens = seen.matched();
            assert!(opens >= 3, "{opens} openings");
            for &(back, elems, err) in &shifts {
                let index = opens - 1 - back;
                let mut meshes = tampered_group(n);
                let fired = meshes[1].add(elem_error(
                    Select::to(0).tag(TAG_OPEN).nth(index),
                    &elems,
                    0,
                    err,
                ));
                let res = run(ring, meshes).await;
                let at = format!("Z2^{}, {n} parties, opening {index}, error {err}", ring.k());
                assert_eq!(fired.fired(), 1, "{at}");
                for (i, r) in res.iter().enumerate() {
                    let e = r.as_ref().expect_err("a shifted opening must abort");
                    if i != 1 {
                        let named = |c: &str| e.check() == Some(c) || e.to_string().contains(c);
                        assert!(
                            named("random-bit-mac-check") || named("opened-values-echo"),
                            "{at}, party {i}: {e}"
                        );
                    }
                }
            }
        }
    }
}
