//! Π_PoPK over the in-memory mesh (seed 002 §8 cases 13 and 14) on Toy-B, with a
//! trusted-dealer key: honest provers are accepted and their ciphertexts sum correctly; each
//! kind of bad prover is rejected by the honest parties, naming the cheater and the check.

use std::time::Duration;

use coterie_bfv::{Plaintext, PublicKey, SecretKey};
use coterie_math::bigint::{BigInt, random_below};
use coterie_math::prg::Csprng;
use coterie_matrigear::popk::{self, PopkOutput, PopkWitness, ResponseCodec, tags};
use coterie_matrigear::randpack::rand_pack;
use coterie_matrigear::{Error, Flag, PopkCheck, ProtocolParams};
use coterie_net::local::run_parties;
use coterie_net::tamper::{Rule, Select, TamperMesh};
use coterie_net::{Blob, InMemoryMesh, Mesh, MeshOptions};

type Tweak = fn(&ProtocolParams, &mut PopkWitness);

/// The constant `h` of a ciphertext message on Toy-B: 2 packed polynomials plus `h` bytes.
const CT_HEADER: usize = 53;

fn keys(pp: &ProtocolParams) -> (SecretKey, PublicKey) {
    let mut rng = Csprng::new();
    let sk = SecretKey::generate(pp.context(), &mut rng);
    let pk = sk.public_key(&mut rng);
    (sk, pk)
}

/// Runs the proof among `pp.parties()` parties; party `cheat` sends through `rules` and, if
/// given, changes its own witness with `tweak` (its input, not a hook).
async fn run_all(
    pp: &ProtocolParams,
    pk: &PublicKey,
    u: usize,
    flag: Flag,
    cheat: usize,
    rules: Vec<Rule>,
    tweak: Option<Tweak>,
) -> Vec<Result<PopkOutput, Error>> {
    let opts = MeshOptions {
        timeout: Duration::from_secs(10),
        ..MeshOptions::default()
    };
    let mut rules = Some(rules);
    let meshes: Vec<TamperMesh<InMemoryMesh>> = InMemoryMesh::group(pp.parties(), opts)
        .into_iter()
        .map(|m| {
            if m.id() == cheat {
                TamperMesh::with_rules(m, rules.take().unwrap_or_default())
            } else {
                TamperMesh::new(m)
            }
        })
        .collect();
    run_parties(meshes, |mut mesh| {
        let (pp, pk) = (pp.clone(), pk.clone());
        async move {
            let mut rng = Csprng::new();
            let mut w = PopkWitness::sample(&pp, u, flag, &mut rng).expect("witness");
            if mesh.id() == cheat
                && let Some(f) = tweak
            {
                f(&pp, &mut w);
            }
            let out = popk::run_with_witness(&mut mesh, &pp, &pk, w, flag, "test", &mut rng).await;
            let _ = mesh.close().await;
            out
        }
    })
    .await
}

/// Every honest party ends in `ProofRejected` naming `cheat` and `check` (`rep` if given); with
/// more than one honest party, one of them may instead see the other's abort, whose reason
/// carries the same rejection.
fn assert_rejected(
    outs: &[Result<PopkOutput, Error>],
    cheat: usize,
    check: PopkCheck,
    rep: Option<usize>,
) {
    let mut named = 0;
    for (l, out) in outs.iter().enumerate() {
        if l == cheat {
            assert!(out.is_err(), "the cheater's run must fail too");
            continue;
        }
        match out {
            Err(Error::ProofRejected {
                party,
                check: c,
                proof,
                rep: r,
            }) => {
                assert_eq!(*party, Some(cheat), "party {l} named the wrong party");
                assert_eq!(*c, check, "party {l}: wrong check");
                assert_eq!(proof, "test");
                if let Some(rep) = rep {
                    assert_eq!(*r, rep, "party {l}: wrong repetition");
                }
                named += 1;
            }
            Err(Error::Net(coterie_net::Error::Aborted { reason, .. })) if outs.len() > 2 => {
                assert!(
                    reason.contains(&format!("party {cheat}")),
                    "party {l}: abort reason {reason:?}"
                );
            }
            other => panic!("party {l}: expected a rejection of party {cheat}, got {other:?}"),
        }
    }
    assert!(named >= 1, "no honest party named the cheater");
}

fn check_honest(
    pp: &ProtocolParams,
    sk: &SecretKey,
    pk: &PublicKey,
    u: usize,
    flag: Flag,
    outs: &[Result<PopkOutput, Error>],
) {
    let outs: Vec<&PopkOutput> = outs
        .iter()
        .map(|o| o.as_ref().expect("honest run accepted"))
        .collect();
    let p = pp.p();
    let d = pp.slots();
    for i in 0..u {
        let got = sk
            .decrypt(&outs[0].ciphertexts()[i])
            .unwrap()
            .decode_slots()
            .unwrap();
        let mut want = vec![BigInt::new(); d];
        for o in &outs {
            let x = &o.slots()[i];
            assert_eq!(x.len(), d);
            if flag == Flag::Diag {
                assert!(x.iter().all(|s| *s == x[0]), "diagonal slots");
            }
            for (w, s) in want.iter_mut().zip(x) {
                *w += s;
            }
        }
        for w in &mut want {
            *w %= &p;
        }
        assert_eq!(
            got, want,
            "sum of ciphertext {i} decrypts to the sum of the x's"
        );
    }
    for o in &outs[1..] {
        assert_eq!(o.ciphertexts(), outs[0].ciphertexts());
    }
    // Traffic: U + V ciphertexts of the exact size, and the packed responses.
    let codec = ResponseCodec::new(pp, u, flag).unwrap();
    let v = pp.widths(flag).v;
    assert_eq!(codec.repetitions(), v);
    let ct = popk::ciphertext_len(pp, pk).unwrap();
    let bits: u64 = pp
        .context()
        .params()
        .moduli()
        .iter()
        .map(|q| u64::from(64 - q.leading_zeros()))
        .sum();
    let packed = (pp.degree() as u64 * bits).div_ceil(8) as usize;
    assert_eq!(ct - 2 * packed, CT_HEADER, "header of a ciphertext message");
    for o in &outs {
        let t = o.traffic();
        assert_eq!(t.ciphertext_bytes, u * ct);
        assert_eq!(t.commitment_bytes, v * ct);
        assert_eq!(t.response_bytes, codec.encoded_len());
    }
}

/// Case 13: Toy-B, n = 2, U = 3, V = 22 (⊥) and 44 (Diag); then n = 3.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn honest_provers_are_accepted() {
    let pp = ProtocolParams::insecure_toy_b(2, 4).unwrap();
    let (sk, pk) = keys(&pp);
    assert_eq!((pp.widths(Flag::Any).v, pp.widths(Flag::Diag).v), (22, 44));
    for flag in [Flag::Any, Flag::Diag] {
        let outs = run_all(&pp, &pk, 3, flag, usize::MAX, vec![], None).await;
        check_honest(&pp, &sk, &pk, 3, flag, &outs);
    }
    let pp3 = ProtocolParams::insecure_toy_b(3, 4).unwrap();
    let (sk3, pk3) = keys(&pp3);
    for flag in [Flag::Any, Flag::Diag] {
        let outs = run_all(&pp3, &pk3, 2, flag, usize::MAX, vec![], None).await;
        check_honest(&pp3, &sk3, &pk3, 2, flag, &outs);
    }
}

/// Case 14 (a): a lift that is the full-size representative of `Pack(x)` (coefficients up to
/// about `p`) fails the plaintext bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_size_representative_fails_norm_z() {
    let pp = ProtocolParams::insecure_toy_b(2, 4).unwrap();
    let (_, pk) = keys(&pp);
    let tweak: Tweak = |pp, w| {
        let x = w.slots(pp).unwrap().swap_remove(0);
        let rep = Plaintext::encode_slots(pp.context(), &x)
            .unwrap()
            .representative();
        let mut lift = vec![0i128; pp.degree()];
        for (l, r) in lift.iter_mut().zip(&rep) {
            *l = r.to_i128().unwrap();
        }
        assert!(lift.iter().any(|&c| c > 1 << 20), "a full-size lift");
        w.lifts_mut()[0] = lift;
    };
    let outs = run_all(&pp, &pk, 3, Flag::Any, 1, vec![], Some(tweak)).await;
    assert_rejected(&outs, 1, PopkCheck::NormZ, Some(0));
}

/// Case 14 (b): a response altered by +1 in one coefficient (rewritten on the wire) fails the
/// encryption identity.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn altered_response_fails_enc_identity() {
    let pp = ProtocolParams::insecure_toy_b(2, 4).unwrap();
    let (_, pk) = keys(&pp);
    let codec = ResponseCodec::new(&pp, 3, Flag::Any).unwrap();
    let rule = Select::to(0)
        .tag(tags::RESPONSE)
        .rewrite(move |b: &mut Blob| {
            let mut rs = codec.decode(&b.0).unwrap();
            rs[5].mu_z[7] += 1;
            b.0 = codec.encode(&rs).unwrap();
        });
    let outs = run_all(&pp, &pk, 3, Flag::Any, 1, vec![rule], None).await;
    assert_rejected(&outs, 1, PopkCheck::EncIdentity, Some(5));
}

/// Case 14 (c): a randomness coefficient of 10^7 fails the randomness bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_randomness_fails_norm_t() {
    let pp = ProtocolParams::insecure_toy_b(2, 4).unwrap();
    let (_, pk) = keys(&pp);
    let tweak: Tweak = |_, w| w.randomness_mut()[1].e0[7] = 10_000_000;
    let outs = run_all(&pp, &pk, 3, Flag::Any, 1, vec![], Some(tweak)).await;
    assert_rejected(&outs, 1, PopkCheck::NormT, Some(0));
}

/// Case 14 (d): a short but non-diagonal plaintext under `Diag` fails the diagonal check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_diagonal_plaintext_fails_diagonal() {
    let pp = ProtocolParams::insecure_toy_b(2, 4).unwrap();
    let (_, pk) = keys(&pp);
    let tweak: Tweak = |pp, w| {
        let mut rng = Csprng::new();
        let p = pp.p();
        let x: Vec<BigInt> = (0..pp.slots())
            .map(|_| random_below(&mut rng, &p).unwrap())
            .collect();
        let s1 = pp.widths(Flag::Diag).s1;
        w.lifts_mut()[2] = rand_pack(pp, &x, s1, Flag::Any, &mut rng).unwrap();
    };
    let outs = run_all(&pp, &pk, 3, Flag::Diag, 1, vec![], Some(tweak)).await;
    assert_rejected(&outs, 1, PopkCheck::Diagonal, Some(0));
}

/// Case 14 (e): a ciphertext that is not the encryption of the prover's witness (another
/// valid ciphertext substituted on the wire) fails the encryption identity.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn substituted_ciphertext_fails_enc_identity() {
    let pp = ProtocolParams::insecure_toy_b(2, 4).unwrap();
    let (_, pk) = keys(&pp);
    let mut rng = Csprng::new();
    let other = PopkWitness::sample(&pp, 1, Flag::Any, &mut rng).unwrap();
    let (_, msgs) = popk::prove_commit(&pp, &pk, other, Flag::Any, &mut rng).unwrap();
    let forged = Blob(msgs.ciphertexts[0].to_bytes());
    let rule = Select::to(0).tag(tags::CIPHERTEXT).nth(1).replace(&forged);
    let outs = run_all(&pp, &pk, 3, Flag::Any, 1, vec![rule], None).await;
    assert_rejected(&outs, 1, PopkCheck::EncIdentity, Some(0));
}

/// A truncated response and a truncated ciphertext are `Shape` rejections, not panics.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_messages_fail_shape() {
    let pp = ProtocolParams::insecure_toy_b(2, 4).unwrap();
    let (_, pk) = keys(&pp);
    let rule = Select::to(0).tag(tags::RESPONSE).rewrite(|b: &mut Blob| {
        b.0.pop();
    });
    let outs = run_all(&pp, &pk, 2, Flag::Diag, 1, vec![rule], None).await;
    assert_rejected(&outs, 1, PopkCheck::Shape, Some(0));

    let rule = Select::to(0)
        .tag(tags::COMMITMENT)
        .nth(4)
        .rewrite(|b: &mut Blob| b.0.truncate(b.0.len() / 2));
    let outs = run_all(&pp, &pk, 2, Flag::Any, 1, vec![rule], None).await;
    assert_rejected(&outs, 1, PopkCheck::Shape, Some(4));
}

/// Three parties, the last one cheating on its response to everyone: the honest parties reject
/// it by name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_parties_name_the_cheater() {
    let pp = ProtocolParams::insecure_toy_b(3, 4).unwrap();
    let (_, pk) = keys(&pp);
    let codec = ResponseCodec::new(&pp, 2, Flag::Any).unwrap();
    let rule = Select::any()
        .tag(tags::RESPONSE)
        .rewrite(move |b: &mut Blob| {
            let mut rs = codec.decode(&b.0).unwrap();
            rs[0].t[2][3] -= 1;
            b.0 = codec.encode(&rs).unwrap();
        });
    let outs = run_all(&pp, &pk, 2, Flag::Any, 2, vec![rule], None).await;
    assert_rejected(&outs, 2, PopkCheck::EncIdentity, Some(0));
}

/// Equivocation: the cheater sends a different (valid) ciphertext to one party only; that party
/// rejects it, and the honest run cannot end in acceptance anywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn equivocation_does_not_pass() {
    let pp = ProtocolParams::insecure_toy_b(3, 4).unwrap();
    let (_, pk) = keys(&pp);
    let mut rng = Csprng::new();
    let other = PopkWitness::sample(&pp, 1, Flag::Any, &mut rng).unwrap();
    let (_, msgs) = popk::prove_commit(&pp, &pk, other, Flag::Any, &mut rng).unwrap();
    let forged = Blob(msgs.ciphertexts[0].to_bytes());
    let rule = Select::to(1).tag(tags::CIPHERTEXT).nth(0).replace(&forged);
    let outs = run_all(&pp, &pk, 2, Flag::Any, 0, vec![rule], None).await;
    assert!(outs.iter().all(Result::is_err));
    assert!(matches!(
        outs[1],
        Err(Error::ProofRejected {
            party: Some(0),
            check: PopkCheck::EncIdentity,
            ..
        })
    ));
}

/// A party whose own witness cannot even be encrypted (randomness of 2^41) aborts the mesh at
/// once: no peer waits for its timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_failure_aborts_the_mesh() {
    let pp = ProtocolParams::insecure_toy_b(2, 4).unwrap();
    let (_, pk) = keys(&pp);
    let tweak: Tweak = |_, w| w.randomness_mut()[0].u[0] = 1 << 41;
    let start = std::time::Instant::now();
    let outs = run_all(&pp, &pk, 1, Flag::Any, 1, vec![], Some(tweak)).await;
    assert!(matches!(outs[1], Err(Error::Bfv(_))), "{:?}", outs[1]);
    assert!(
        matches!(
            &outs[0],
            Err(Error::Net(coterie_net::Error::Aborted { party: 1, .. }))
        ),
        "{:?}",
        outs[0]
    );
    assert!(start.elapsed() < Duration::from_secs(5));
}
