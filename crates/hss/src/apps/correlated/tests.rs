//! Tests of the correlations on the **insecure** toy group with fixed seeds (insecure: for
//! reproducible tests only).

use std::future::Future;

use coterie_net::local::run_parties;
use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use super::*;
use crate::protocol::dkg;

/// Runs `f` at both parties after a DKG with `params`; fixed seeds (insecure, tests only).
async fn two<T, F, Fut>(params: Params, seed: u64, f: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(InMemoryMesh, PublicKey, EvalKey, ChaCha20Rng) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = T> + Send + 'static,
{
    run_parties(
        InMemoryMesh::group(2, MeshOptions::default()),
        move |mut mesh| {
            let f = f.clone();
            async move {
                let mut rng = ChaCha20Rng::seed_from_u64(seed + mesh.id() as u64);
                let (pk, ek) = dkg(&mut mesh, &params, &mut rng).await.unwrap();
                f(mesh, pk, ek, rng).await
            }
        },
    )
    .await
}

fn toy(d: u32) -> Params {
    Params::insecure_toy(4, 16, d)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bilinear_shares_reconstruct_all_products() {
    for (beta, seed) in [(2u64, 100), (256, 110), (1 << 62, 120)] {
        let out = two(toy(10), seed, move |mut m, pk, ek, mut rng| async move {
            let c = bilinear(&mut m, &pk, &ek, 7, beta, &CorrOptions::default(), &mut rng)
                .await
                .unwrap();
            m.close().await.unwrap();
            c
        })
        .await;
        let (y, x) = (&out[0], &out[1]);
        assert_eq!(x.discarded, y.discarded);
        assert!(!x.discarded || (x.flagged && y.flagged));
        if x.discarded {
            continue;
        }
        for i in 0..7 {
            for j in 0..7 {
                let s = (u128::from(x.shares[i * 7 + j]) + u128::from(y.shares[i * 7 + j]))
                    % u128::from(beta);
                assert_eq!(s, u128::from(x.bits[i] && y.bits[j]), "β={beta} ({i},{j})");
            }
        }
    }
}

/// Spec §9 case 20: the bytes on the mesh. Ciphertexts: exactly `2n·|G|` bytes plus a constant
/// envelope; OT: a constant per bit (base OT: one group element from the chooser, two masked
/// strings from the sender) plus a constant; the flag exchange: constant.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bilinear_bytes_follow_the_formula() {
    let mut per = Vec::new();
    for n in [4usize, 12] {
        let out = two(toy(8), 130, move |mut m, pk, ek, mut rng| async move {
            let before = m.stats().total_sent();
            let c = bilinear(&mut m, &pk, &ek, n, 2, &CorrOptions::default(), &mut rng)
                .await
                .unwrap();
            let total = m.stats().total_sent() - before;
            m.close().await.unwrap();
            (c.comm, total)
        })
        .await;
        let eb = Group::new(toy(8).group).elem_bytes() as u64;
        let (c0, c1) = (out[0].0, out[1].0);
        assert_eq!(c0.total(), out[0].1, "phases cover everything party 0 sent");
        assert_eq!(c1.total(), out[1].1, "phases cover everything party 1 sent");
        assert_eq!(c0.ciphertext_bytes, 0);
        let ct_overhead = c1.ciphertext_bytes - 2 * n as u64 * eb;
        assert!(ct_overhead < 40, "ciphertext envelope {ct_overhead} B");
        per.push((
            n as u64,
            ct_overhead,
            c0.ot_bytes + c1.ot_bytes,
            c0.flag_bytes,
        ));
    }
    // constant envelope, OT bytes affine in n
    let ((n0, o0, ot0, f0), (n1, o1, ot1, f1)) = (per[0], per[1]);
    assert_eq!((o0, f0), (o1, f1));
    // toy group: one 16-byte element (postcard varint limbs, so a byte or two of jitter) + two
    // masked (t+λ)-bit strings per bit
    let per_bit = (ot1 - ot0) as f64 / (n1 - n0) as f64;
    assert!(
        (50.0..120.0).contains(&per_bit),
        "OT bytes per bit {per_bit}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beaver_triples_multiply_mod_2n() {
    for (n_bits, count, seed) in [
        (1u32, 3usize, 200u64),
        (8, 4, 210),
        (16, 2, 220),
        (128, 1, 230),
    ] {
        let out = two(toy(10), seed, move |mut m, pk, ek, mut rng| async move {
            let opts = CorrOptions::default();
            let t = beaver_triples(&mut m, &pk, &ek, n_bits, count, &opts, &mut rng)
                .await
                .unwrap();
            m.close().await.unwrap();
            t
        })
        .await;
        let (t0, t1) = (&out[0], &out[1]);
        assert_eq!(t0.discarded, t1.discarded);
        // 2n ciphertexts per triple from party 1
        let eb = Group::new(toy(10).group).elem_bytes() as u64;
        assert!(t1.comm.ciphertext_bytes >= 2 * 2 * u64::from(n_bits) * count as u64 * eb);
        let mk = mask(n_bits);
        for i in 0..count {
            let (a, b) = (t0.triples[i], t1.triples[i]);
            for v in [a.a, a.b, a.c, b.a, b.b, b.c] {
                assert_eq!(v & mk, v, "shares lie in [0, 2^n)");
            }
            if t0.discarded[i] {
                continue;
            }
            let (x, y, z) = (
                a.a.wrapping_add(b.a),
                a.b.wrapping_add(b.b),
                a.c.wrapping_add(b.c),
            );
            assert_eq!(x.wrapping_mul(y) & mk, z & mk, "n={n_bits} triple {i}");
        }
        assert_eq!(
            t0.usable().len(),
            t0.discarded.iter().filter(|d| !**d).count()
        );
    }
}

/// Under `Accept` nothing is exchanged, and with a large `d` no triple fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accept_policy_sends_no_flags() {
    let out = two(toy(8), 240, |mut m, pk, ek, mut rng| async move {
        let opts = CorrOptions {
            d: Some(14),
            policy: FlagPolicy::Accept,
        };
        let t = beaver_triples(&mut m, &pk, &ek, 12, 2, &opts, &mut rng)
            .await
            .unwrap();
        m.close().await.unwrap();
        t
    })
    .await;
    for t in &out {
        assert_eq!(t.comm.flag_bytes, 0);
        assert_eq!(t.discarded, [false, false]);
    }
    let mk = mask(12);
    for (a, b) in out[0].triples.iter().zip(&out[1].triples) {
        let (x, y, z) = (a.a + b.a, a.b + b.b, a.c + b.c);
        assert_eq!(x.wrapping_mul(y) & mk, z & mk);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matrix_product_reconstructs() {
    let (dim, n_bits) = (3usize, 8u32);
    let out = two(toy(11), 300, move |mut m, pk, ek, mut rng| async move {
        let opts = CorrOptions::default();
        let c = matrix_product(&mut m, &pk, &ek, dim, n_bits, &opts, &mut rng)
            .await
            .unwrap();
        m.close().await.unwrap();
        c
    })
    .await;
    let (y, x) = (&out[0], &out[1]);
    assert_eq!(x.discarded, y.discarded);
    assert!(!x.discarded, "fixed seed: no double flag expected");
    let mk = mask(n_bits);
    for i in 0..dim {
        for k in 0..dim {
            let want = (0..dim).fold(0u128, |s, j| {
                s.wrapping_add(x.matrix[i * dim + j].wrapping_mul(y.matrix[j * dim + k]))
            });
            let got = x.product[i * dim + k].wrapping_add(y.product[i * dim + k]);
            assert_eq!(got & mk, want & mk, "entry ({i},{k})");
        }
    }
}

/// Spec §6.6 with a 128 × 128 domain and a public `f`: the shares at the revealed masked
/// inputs reconstruct `f(x, y)` (the derived convention `T[u,v] = Σ f(i,j) a_(u−i, v−j)`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truth_table_128_reconstructs_f() {
    let (n1, n2, modulus) = (128usize, 128usize, 1u64 << 16);
    let out = two(toy(12), 400, move |mut m, pk, ek, mut rng| async move {
        let opts = CorrOptions::default();
        let t = truth_table(&mut m, &pk, &ek, n1, n2, modulus, &opts, &mut rng)
            .await
            .unwrap();
        m.close().await.unwrap();
        t
    })
    .await;
    let (ty, tx) = (&out[0], &out[1]);
    assert!(!tx.discarded, "fixed seed: no double flag expected");
    // f(i, j) = (i·j + 3i + 7) mod 2^16, public
    let f: Vec<u64> = (0..n1 * n2)
        .map(|k| {
            let (i, j) = ((k / n2) as u64, (k % n2) as u64);
            (i * j + 3 * i + 7) % modulus
        })
        .collect();
    let mut rng = ChaCha20Rng::seed_from_u64(401); // insecure, test only
    for _ in 0..6 {
        let (x, y) = (
            uniform_below(&mut rng, n1 as u64) as usize,
            uniform_below(&mut rng, n2 as u64) as usize,
        );
        let (u, v) = ((x + tx.offset) % n1, (y + ty.offset) % n2);
        let s = (tx.share_at(&f, u, v).unwrap() + ty.share_at(&f, u, v).unwrap()) % modulus;
        assert_eq!(s, f[x * n2 + y], "f({x},{y})");
    }
    assert!(tx.share_at(&f[1..], 0, 0).is_err());
    assert!(tx.share_at(&f, n1, 0).is_err());
}

#[test]
fn pattern_length_recipe() {
    // paper Sec. 5.3.1: n = 128, overall 1/16, per conversion δ/n² = 2^-18 → d = 15
    assert_eq!(terminal_d(1 << 14, 1.0 / 16.0).unwrap(), 15);
    assert_eq!(terminal_d(1, 0.125).unwrap(), 2);
    assert!(terminal_d(1, 0.0).is_err());
    assert!(terminal_d(1, 1.0).is_err());
    assert!(terminal_d(u64::MAX, 1e-9).is_err());
    let p = triple_params(128, 1.0 / 16.0).unwrap();
    assert_eq!((p.d, p.group), (15, GroupId::P1536));
    assert!(triple_params(0, 0.5).is_err());
    assert!(triple_params(129, 0.5).is_err());
    // §9 case 20: 3712 bits per loaded bit; n = 128 → 59,392 B
    assert_eq!(CommStats::paper_bytes(128), 59_392);
}

#[test]
fn wire_types_reject_malformed_input() {
    let group = Group::new(GroupId::InsecureToy128);
    let g = group.g();
    let ct = Ciphertext {
        a: g.clone(),
        c: group.mul(&g, &g),
    };
    let b = CtBatch::pack(&group, &[ct.clone(), ct.clone()]);
    let back: CtBatch = from_bytes(&to_bytes(&b).unwrap()).unwrap();
    assert_eq!(back.unpack(&group, 2).unwrap(), vec![ct.clone(), ct]);
    assert!(back.unpack(&group, 3).is_err(), "wrong count");
    let mut bad = back.clone();
    bad.data.pop();
    assert!(bad.unpack(&group, 2).is_err(), "truncated");
    let mut bad = back.clone();
    bad.data[..16].fill(0xff); // not canonical (≥ p)
    assert!(bad.unpack(&group, 2).is_err(), "non-element");
    let mut bad = back;
    bad.elem_bytes = 192;
    assert!(bad.unpack(&group, 2).is_err(), "other group");
    assert!(
        from_bytes::<FlagList>(&to_bytes(&b).unwrap()).is_err(),
        "other tag"
    );
    let f = FlagList {
        flagged: vec![vec![1, 5], vec![]],
    };
    let back: FlagList = from_bytes(&to_bytes(&f).unwrap()).unwrap();
    back.validate(2, 6).unwrap();
    assert!(back.validate(3, 6).is_err(), "instance count");
    assert!(back.validate(2, 5).is_err(), "index out of range");
    let unsorted = FlagList {
        flagged: vec![vec![5, 1], vec![]],
    };
    assert!(unsorted.validate(2, 6).is_err(), "not increasing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_arguments_are_errors() {
    let out = two(toy(8), 500, |mut m, pk, ek, mut rng| async move {
        let o = CorrOptions::default();
        let r = [
            bilinear(&mut m, &pk, &ek, 2, 1, &o, &mut rng)
                .await
                .is_err(),
            bilinear(&mut m, &pk, &ek, 0, 2, &o, &mut rng)
                .await
                .is_err(),
            beaver_triples(&mut m, &pk, &ek, 0, 1, &o, &mut rng)
                .await
                .is_err(),
            beaver_triples(&mut m, &pk, &ek, 8, 0, &o, &mut rng)
                .await
                .is_err(),
            matrix_product(&mut m, &pk, &ek, 0, 8, &o, &mut rng)
                .await
                .is_err(),
            truth_table(&mut m, &pk, &ek, 4, 4, 1, &o, &mut rng)
                .await
                .is_err(),
            bilinear(&mut m, &pk, &ek, 2, 2, &CorrOptions::with_d(1), &mut rng)
                .await
                .is_err(),
        ];
        m.close().await.unwrap();
        r
    })
    .await;
    for r in out {
        assert!(r.iter().all(|e| *e), "{r:?}");
    }
    // three parties are refused
    let res = run_parties(
        InMemoryMesh::group(3, MeshOptions::default()),
        |mut m| async move {
            let mut rng = ChaCha20Rng::seed_from_u64(510); // insecure
            let (pk, ek0, _, _) =
                crate::scheme::insecure_keygen_trusted_dealer(&toy(8), &mut rng).unwrap();
            let r = bilinear(&mut m, &pk, &ek0, 2, 2, &CorrOptions::default(), &mut rng).await;
            r.is_err()
        },
    )
    .await;
    assert!(res.iter().all(|e| *e));
}

/// `HssPrep` feeds the SPDZ engine: triples over `Z_(2^(k+s))` with `k = s = 16`,
/// authenticated and sacrificed; the material passes `verify_material`, and a multiplication
/// of inputs opens correctly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hss_prep_triples_feed_the_spdz_engine() {
    use coterie_spdz::{Engine, Kind, Order, Producer, Z2k};
    let ring = Z2k::new(16, 16).unwrap();
    let params = toy(10);
    let res = run_parties(
        InMemoryMesh::group(2, MeshOptions::default()),
        move |mut mesh| async move {
            let opts = CorrOptions::with_d(11);
            let mut p = HssPrep::setup(&mut mesh, ring, &params, opts).await?;
            assert!(p.supports(Kind::Triples));
            assert!(!p.supports(Kind::Randoms) && !p.supports(Kind::Bits));
            let refused = p
                .produce(&mut mesh, &Order::new().with(Kind::Bits, 1))
                .await;
            assert!(matches!(refused, Err(coterie_spdz::Error::Unsupported(_))));
            let mut prep = p
                .produce(&mut mesh, &Order::new().with(Kind::Triples, 3))
                .await?;
            assert_eq!(prep.triples.len(), 3);
            let copy = prep.clone();
            // input masks and opening masks from the OtPrep under the same MAC key
            let order = Order::new()
                .with(Kind::Randoms, 4)
                .with(Kind::InputMasks(0), 2)
                .with(Kind::InputMasks(1), 2);
            let mut other = Producer::produce(p.authenticator(), &mut mesh, &order).await?;
            prep.extend_from(&mut other)?;
            let me = mesh.id();
            let mut e = Engine::new(prep);
            let x = e
                .input(&mut mesh, 0, (me == 0).then_some(&[3u128, 1000][..]), 2)
                .await?;
            let y = e
                .input(&mut mesh, 1, (me == 1).then_some(&[5u128, 70][..]), 2)
                .await?;
            let z = e.mul(&mut mesh, &x, &y).await?;
            let out = e.open_checked(&mut mesh, &z).await?;
            mesh.close().await?;
            Ok::<_, coterie_spdz::Error>((out, copy))
        },
    )
    .await;
    let mut preps = Vec::new();
    for r in res {
        let (out, copy) = r.unwrap();
        assert_eq!(out, [15, 70_000 % (1 << 16)]);
        preps.push(copy);
    }
    coterie_spdz::verify::verify_material(&preps).unwrap();
}
