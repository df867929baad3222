//! Multi-party tests over the in-memory mesh with **insecure** dealer preprocessing
//! (seed 000 §15 T2, T6, T7, T9, T10, T11).

mod common;

use common::*;
use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
use coterie_spdz::{Ring, Share};
use coterie_threshold::ciphertext::LweCiphertext;
use coterie_threshold::gates::{GatePool, prep_bundles, prep_subset_prods};
use coterie_threshold::keys::{KeyDistribution, PublicKey, SharedKey};
use coterie_threshold::online::{decrypt, modltz_t};
use coterie_threshold::pipelined::{decrypt_pipelined, decrypt_strict_single_check};
use coterie_threshold::{Error, LtParams, Params, round_p};

/// A valid ciphertext over `Z_{2^k}` with message modulus `2^m`, mask `a`, body `b`.
fn lwe(k: u32, m: u32, mut a: Vec<u64>, b: u64) -> LweCiphertext {
    a.push(b);
    LweCiphertext::from_parts(a, k, m).unwrap()
}

#[tokio::test]
async fn t2_subset_prods_counts_depth_values() {
    for a in 1..=9u32 {
        let lt_dummy = 1usize << a;
        let c = coterie_spdz::Counts {
            triples: lt_dummy,
            bits: a as usize,
            randoms: lt_dummy + 1,
            masks_per_party: 0,
        };
        let res = run_mem(deal(2, 64, c), move |_, mut eng, mut mesh| async move {
            let (mut out, stats) = prep_subset_prods(&mut eng, &mut mesh, &[a]).await?;
            let (r, p) = out.pop().unwrap();
            let mut all = vec![r];
            all.extend(p);
            let vals = eng.open(&mut mesh, &all).await?;
            eng.check(&mut mesh).await?;
            mesh.close().await.ok();
            Ok((vals, stats))
        })
        .await;
        for x in res {
            let (vals, stats) = x.unwrap();
            assert_eq!(stats.mults, (1usize << a) - a as usize - 1, "a = {a}");
            assert_eq!(stats.rounds as u32, 32 - (a - 1).leading_zeros(), "a = {a}");
            let r = vals[0] as u64;
            assert!(r < 1 << a);
            for (j, &pj) in vals[1..].iter().enumerate() {
                assert_eq!(
                    pj,
                    u128::from(j as u64 & r == j as u64),
                    "a = {a}, r = {r}, j = {j}"
                );
            }
        }
    }
}

#[tokio::test]
async fn t7_end_to_end_small_2_3_4_parties() {
    let p = params(4, 16, 2, 3);
    let sk = vec![1i64, 0, 1, 1];
    let a = vec![1000u64, 20000, 3, 65535];
    let cases = [
        (3u64, -100i64, 3u64),
        (3, 8191, 3),
        (3, 8192, 0),
        (3, -8192, 3),
        (3, -8193, 2),
        (0, -1, 0),
        (1, 8191, 1),
    ];
    let cts: Vec<LweCiphertext> = cases
        .iter()
        .map(|&(mu, e, _)| {
            let mut data = a.clone();
            data.push(LweCiphertext::encrypt_body(&a, &sk, mu, e, 16, 2));
            LweCiphertext::from_body_last(&data, 16, 2).unwrap()
        })
        .collect();
    assert_eq!(cts[0].body(), 50054);
    for parties in [2, 3, 4] {
        for mode in [0u8, 1, 2] {
            for r in decrypt_imported_mode(parties, p, sk.clone(), cts.clone(), mode).await {
                let got = r.unwrap();
                assert_eq!(
                    got,
                    cases.iter().map(|c| c.2).collect::<Vec<_>>(),
                    "{parties} parties, mode {mode}"
                );
            }
        }
    }
}

#[tokio::test]
async fn t6_boundary_every_phase_k8() {
    // phase = b - a·1 = z_raw
    let mut rng = rand::rng();
    for m in 1..=3u32 {
        for b in [1u32, 2, 3, 6] {
            let p = params(1, 8, m, b);
            let cts: Vec<LweCiphertext> = (0..256u64)
                .map(|z| {
                    let a = rand::Rng::next_u64(&mut rng) & 255;
                    lwe(8, m, vec![a], (z + a) & 255)
                })
                .collect();
            for r in decrypt_imported(2, p, vec![1], cts).await {
                let got = r.unwrap();
                let want: Vec<u64> = (0..256).map(|z| round_p(z, 8, m)).collect();
                assert_eq!(got, want, "m = {m}, b = {b}");
            }
        }
    }
}

#[tokio::test]
async fn paper_parameters_keygen_public_key_2_parties() {
    let p = Params::paper();
    let lt = p.lt().unwrap();
    for dist in [KeyDistribution::Binary, KeyDistribution::Ternary] {
        let samples = PublicKey::secure_samples(&p);
        let eta = PublicKey::secure_noise_bits(&p).unwrap() as usize; // noise bits
        let decs = 3;
        let c = counts(&lt, decs, decs, 2 * p.n + eta * samples, 0, samples);
        let res = run_mem(deal(2, 64, c), move |_, mut eng, mut mesh| async move {
            let key = SharedKey::generate(&mut eng, p.n, dist)?;
            let pk = PublicKey::generate(
                &mut eng, &mut mesh, &p, &key, [7u8; 32], samples, eta as u32,
            )
            .await?;
            let cts: Vec<LweCiphertext> = {
                // every party must see the same ciphertexts: a shared public seed
                let mut rng = coterie_math::prg::Xof::new(&[9u8; 32], b"test-encrypt", 0);
                [1u64, 0, 1]
                    .iter()
                    .map(|&m| pk.encrypt(m, 1, &mut rng))
                    .collect::<Result<_, _>>()?
            };
            let (b, _) = prep_bundles(&mut eng, &mut mesh, &lt, decs, 0).await?;
            let mut pool = GatePool::new(lt);
            pool.push(b)?;
            let out = decrypt(&mut eng, &mut mesh, &p, &key, &cts, &mut pool).await?;
            mesh.close().await.ok();
            Ok(out)
        })
        .await;
        for r in res {
            assert_eq!(r.unwrap(), vec![1, 0, 1], "{dist:?}");
        }
    }
}

#[tokio::test]
async fn paper_parameters_imported_key_random_noise() {
    let p = Params::paper();
    let mut rng = rand::rng();
    let sk: Vec<i64> = (0..p.n)
        .map(|_| (rand::Rng::next_u64(&mut rng) % 3) as i64 - 1)
        .collect();
    let mut want = Vec::new();
    let cts: Vec<LweCiphertext> = (0..4)
        .map(|i| {
            let mu = i & 1;
            let e = (rand::Rng::next_u64(&mut rng) >> 2) as i64 - (1i64 << 61); // within [-2^62, 2^62)
            let ct = LweCiphertext::encrypt_with_secret_key(&sk, mu, e, 64, 1, &mut rng);
            want.push(round_p(ct.phase_with_secret_key(&sk), 64, 1));
            assert_eq!(*want.last().unwrap(), mu);
            ct
        })
        .collect();
    for r in decrypt_imported(3, p, sk, cts).await {
        assert_eq!(r.unwrap(), want);
    }
}

#[tokio::test]
async fn malformed_ciphertext_refused_before_gates_are_spent() {
    let p = params(4, 16, 2, 3);
    let lt = p.lt().unwrap();
    let c = counts(&lt, 1, 1, 4, 0, 0);
    let res = run_mem(deal(2, 16, c), move |_, mut eng, mut mesh| async move {
        let key = SharedKey::generate(&mut eng, 4, KeyDistribution::Binary)?;
        let (b, _) = prep_bundles(&mut eng, &mut mesh, &lt, 1, 0).await?;
        let mut pool = GatePool::new(lt);
        pool.push(b)?;
        let bad = [lwe(16, 2, vec![0; 5], 0), lwe(32, 2, vec![0; 4], 0), {
            // a_0 ≥ q = 2^16: built valid, then broken through the raw words
            let mut c = lwe(16, 2, vec![0, 0, 0, 0], 0);
            c.as_mut_slice()[0] = 1 << 20;
            c
        }];
        let mut errs = 0;
        for ct in bad {
            if matches!(
                decrypt(&mut eng, &mut mesh, &p, &key, &[ct], &mut pool).await,
                Err(Error::Ciphertext(_))
            ) {
                errs += 1;
            }
        }
        mesh.close().await.ok();
        Ok((errs, pool.len()))
    })
    .await;
    for r in res {
        assert_eq!(r.unwrap(), (3, 1));
    }
}

#[tokio::test]
async fn t9_modltz_t_exhaustive() {
    for t in 2..=7u32 {
        for b in [1u32, 2, 3] {
            let lt = LtParams::new(t, t - 1, b).unwrap();
            let cnt = 1usize << t;
            let mut c = counts(&lt, cnt, 0, cnt, 0, 0);
            c.randoms = 4 * cnt;
            let res = run_mem(deal(2, 16, c), move |_, mut eng, mut mesh| async move {
                // values stored in Z_2^16 with garbage above bit t
                let zs: Vec<_> = (0..cnt as u128)
                    .map(|z| eng.constant(&(z + (0xab << t))))
                    .collect();
                let (b, _) = prep_bundles(&mut eng, &mut mesh, &lt, cnt, 0).await?;
                let hs = modltz_t(&mut eng, &mut mesh, &lt, &zs, b).await?;
                let out = eng.open(&mut mesh, &hs).await?;
                eng.check(&mut mesh).await?;
                mesh.close().await.ok();
                Ok(out)
            })
            .await;
            for r in res {
                let got = r.unwrap();
                for (z, h) in got.iter().enumerate() {
                    assert_eq!(
                        *h,
                        ((z >> (t - 1)) & 1) as u128,
                        "t = {t}, b = {b}, z = {z}"
                    );
                }
            }
        }
    }
}

#[tokio::test]
async fn t10_gate_reuse_refused() {
    let p = params(4, 16, 2, 3);
    let lt = p.lt().unwrap();
    let c = counts(&lt, 3, 0, 0, 0, 0);
    let res = run_mem(deal(2, 16, c), move |_, mut eng, mut mesh| async move {
        let (mut b, _) = prep_bundles(&mut eng, &mut mesh, &lt, 3, 0).await?;
        let third = b.pop().unwrap();
        let mut pool = GatePool::new(lt);
        pool.push(b)?;
        let taken = pool.take(1)?;
        // re-inserting a consumed bundle, or an older id, is refused
        let reuse = pool.push(taken).is_err();
        let mut renumbered = third;
        renumbered.id = 1;
        let dup = pool.push(vec![renumbered]).is_err();
        let exhausted = matches!(pool.take(5), Err(Error::Exhausted { .. }));
        mesh.close().await.ok();
        Ok((
            reuse,
            dup,
            exhausted,
            pool.len(),
            pool.consumed(),
            pool.next_id(),
        ))
    })
    .await;
    for r in res {
        assert_eq!(r.unwrap(), (true, true, true, 1, 1, 2));
    }
}

#[derive(Clone, Copy, Debug)]
enum Tamper {
    KeyShare,
    KeyMac,
    SignTable,
    ModLtzMask,
    ModLtzTable,
    SkipBundle,
    /// The first random value the decryption consumes: `w` in the pipelined schedule (shifted
    /// by `L`, which the final multiple-of-L test would not catch), the first opening's mask
    /// in the strict one.
    FirstRandom,
}

async fn tampered_run(t: Tamper, mode: u8) -> Vec<Result<Vec<u64>, Error>> {
    let p = params(4, 16, 2, 3);
    let lt = p.lt().unwrap();
    let c = counts(&lt, 2, 2, 4, 0, 2);
    let mut preps = deal(3, 16, c);
    if matches!(t, Tamper::FirstRandom) {
        let x = &mut preps[1].randoms[0];
        x.v = x.v.wrapping_add(1 << lt.l) & ((1u128 << 80) - 1);
    }
    run_mem(preps, move |i, mut eng, mut mesh| async move {
        let mut key = SharedKey::generate(&mut eng, 4, KeyDistribution::Binary)?;
        let (mut b, _) = prep_bundles(&mut eng, &mut mesh, &lt, 2, 0).await?;
        let ring = *eng.ring();
        let one = |x: &mut Share<u128>| x.v = ring.add(&x.v, &1);
        if i == 1 {
            match t {
                Tamper::KeyShare => one(&mut key.coeffs[0]),
                Tamper::KeyMac => key.coeffs[0].m = ring.add(&key.coeffs[0].m, &1),
                Tamper::SignTable => b[0].signs[0].table.iter_mut().for_each(one),
                Tamper::ModLtzMask => one(&mut b[0].modltz.mask),
                Tamper::ModLtzTable => b[0].modltz.table.iter_mut().for_each(one),
                Tamper::FirstRandom => {}
                Tamper::SkipBundle => {
                    b.remove(0);
                }
            }
        }
        let mut pool = GatePool::new(lt);
        pool.push(b)?;
        let ct = LweCiphertext::from_body_last(&[1, 2, 3, 4, 5], 16, 2).unwrap();
        let out = match mode {
            1 => decrypt_pipelined(&mut eng, &mut mesh, &p, &key, &[ct], &mut pool, 7).await,
            2 => {
                decrypt_strict_single_check(&mut eng, &mut mesh, &p, &key, &[ct], &mut pool, 7)
                    .await
            }
            _ => decrypt(&mut eng, &mut mesh, &p, &key, &[ct], &mut pool).await,
        };
        mesh.close().await.ok();
        out
    })
    .await
}

#[tokio::test]
async fn t11_tamper_must_abort() {
    for t in [
        Tamper::KeyShare,
        Tamper::KeyMac,
        Tamper::SignTable,
        Tamper::ModLtzMask,
        Tamper::ModLtzTable,
        Tamper::SkipBundle,
        Tamper::FirstRandom,
    ] {
        for mode in [0u8, 1, 2] {
            let res = tampered_run(t, mode).await;
            for (i, r) in res.iter().enumerate() {
                assert!(r.is_err(), "{t:?} (mode {mode}): party {i} got {r:?}");
            }
        }
    }
}

#[tokio::test]
async fn crash_mid_batch_others_abort_and_discard_the_bundles() {
    let p = params(4, 16, 2, 3);
    let lt = p.lt().unwrap();
    let c = counts(&lt, 4, 4, 4, 0, 8);
    let opts = coterie_net::MeshOptions {
        timeout: std::time::Duration::from_secs(5),
        ..coterie_net::MeshOptions::default()
    };
    let t0 = std::time::Instant::now();
    let res = run_mem_opts(
        deal(3, 16, c),
        opts,
        move |i, mut eng, mut mesh| async move {
            let key = SharedKey::generate(&mut eng, 4, KeyDistribution::Binary)?;
            let (b, _) = prep_bundles(&mut eng, &mut mesh, &lt, 4, 0).await?;
            let mut pool = GatePool::new(lt);
            pool.push(b)?;
            let cts = vec![lwe(16, 2, vec![1, 2, 3, 4], 5); 2];
            if i == 2 {
                // crash: leave without closing, while the others are inside the decryption
                tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                drop(mesh);
                return Ok((true, pool.len(), pool.next_id()));
            }
            let r = decrypt(&mut eng, &mut mesh, &p, &key, &cts, &mut pool).await;
            Ok((r.is_err(), pool.len(), pool.next_id()))
        },
    )
    .await;
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(15),
        "abort took too long"
    );
    for (i, r) in res.into_iter().enumerate() {
        let (failed, left, next) = r.unwrap();
        assert!(failed, "party {i} must abort");
        if i != 2 {
            // the two bundles of the failed batch are gone for good; a new bundle must have a
            // larger id than any seen, so none of them can come back
            assert_eq!((left, next), (2, 4));
        }
    }
}

#[tokio::test]
async fn demo_runs_and_checks_itself() {
    let c = coterie_threshold::demo::demo_counts(3).unwrap();
    let preps = deal(3, 64, c);
    let meshes = coterie_net::InMemoryMesh::group(3, coterie_net::MeshOptions::default());
    let mut hs = Vec::new();
    for (mut mesh, prep) in meshes.into_iter().zip(preps) {
        hs.push(tokio::spawn(async move {
            let r = coterie_threshold::demo::run_demo_party(&mut mesh, prep, 3).await;
            mesh.close().await.ok();
            r
        }));
    }
    let mut first = None;
    for h in hs {
        let r = h.await.unwrap().unwrap();
        let f = first.get_or_insert_with(|| r.messages.clone());
        assert_eq!(&r.messages, f);
        assert_eq!(&r.strict, f);
        assert_eq!(&r.pipelined, f);
    }
}

#[tokio::test]
async fn gate_store_survives_restart_without_reuse() {
    use coterie_threshold::store::GateStore;
    let p = params(4, 16, 2, 3);
    let lt = p.lt().unwrap();
    let base = coterie_base::fsio::unique_temp_dir("coterie-threshold-store");
    let c = counts(&lt, 5, 3, 4, 0, 0);
    let b2 = base.clone();
    let res = run_mem(deal(2, 16, c), move |i, mut eng, mut mesh| {
        let dir = b2.join(format!("party-{i}"));
        async move {
            let key = SharedKey::generate(&mut eng, 4, KeyDistribution::Binary)?;
            let (b, _) = prep_bundles(&mut eng, &mut mesh, &lt, 5, 0).await?;
            let store = GateStore::create(&dir, lt)?;
            store.append(&b[..3])?;
            store.append(&b[3..])?;
            // a batch that does not continue the ids is refused
            let again = store.append(&b[..1]).is_err();
            drop(b);
            let first = store.take(2)?;
            // "restart": reopen; the cursor survived, the first two are gone for good
            let store = GateStore::open(&dir, lt)?;
            let cur = store.cursor()?;
            let mut pool = GatePool::new(lt);
            pool.push(store.take(1)?)?;
            let ct = lwe(16, 2, vec![1, 2, 3, 4], 5 << 12);
            // stored bundles are down-cast: the strict batched-check schedule refuses them, the
            // per-value-check (pipelined) schedule uses them
            let mut pool2 = GatePool::new(lt);
            pool2.push(store.take(1)?)?;
            let refused = decrypt(
                &mut eng,
                &mut mesh,
                &p,
                &key,
                std::slice::from_ref(&ct),
                &mut pool2,
            )
            .await
            .is_err();
            assert!(
                refused,
                "down-cast bundles in the strict batched-check schedule"
            );
            let mu = decrypt_pipelined(&mut eng, &mut mesh, &p, &key, &[ct], &mut pool, 5).await?;
            let ids: Vec<u64> = first.iter().map(|b| b.id).collect();
            let exhausted = matches!(store.take(3), Err(Error::Exhausted { .. }));
            mesh.close().await.ok();
            Ok((again, ids, cur, mu.len(), exhausted, store.cursor()?))
        }
    })
    .await;
    for r in res {
        assert_eq!(r.unwrap(), (true, vec![0, 1], 2, 1, true, 4));
    }
    let _ = std::fs::remove_dir_all(&base);
}

/// A cheating party 1 opens (R5) a share of `w` shifted by `L` in its last bit pattern — the
/// opened `w` would flip the output and pass the multiple-of-L test — while its share of
/// `Y = w + χ·w'` is honest. The cheat is done on the wire (a `TamperMesh` rewrites party 1's R5
/// message; no hook in the protocol code), so the shifted share no longer opens party 1's R1
/// commitment: every honest party must abort (`w-opening`, before the `W + χ·W' = Y` test);
/// without the rewrite the same run decrypts.
#[tokio::test]
async fn pipelined_shifted_w_commitment_is_caught() {
    use coterie_net::tamper::{Select, TamperMesh};
    use coterie_threshold::pipelined::{TAG_BASE, decrypt_pipelined};
    let p = params(4, 16, 2, 3);
    let lt = p.lt().unwrap();
    for shift_by_l in [false, true] {
        let c = counts(&lt, 2, 2, 4, 0, 2);
        let res = run_mem(deal(3, 16, c), move |i, mut eng, mesh| async move {
            let mut mesh = TamperMesh::new(mesh);
            let fired =
                (i == 1 && shift_by_l).then(|| {
                    // R5's message ends with the (w, w') share bytes: shift the last one.
                    mesh.add(Select::any().tag(TAG_BASE + 5).all().rewrite_bytes(
                        |b: &mut Vec<u8>| {
                            if let Some(x) = b.last_mut() {
                                *x ^= 1 << 3;
                            }
                        },
                    ))
                });
            let key = SharedKey::generate(&mut eng, 4, KeyDistribution::Binary)?;
            let (b, _) = prep_bundles(&mut eng, &mut mesh, &lt, 1, 0).await?;
            let mut pool = GatePool::new(lt);
            pool.push(b)?;
            let ct = lwe(16, 2, vec![0, 0, 0, 0], 1 << 14); // μ = 1 under any key
            let out = decrypt_pipelined(&mut eng, &mut mesh, &p, &key, &[ct], &mut pool, 3).await;
            mesh.close().await.ok();
            if let Some(f) = fired {
                assert_eq!(f.fired(), 2, "party 1's R5 message to both peers rewritten");
            }
            out
        })
        .await;
        for (i, r) in res.iter().enumerate() {
            if shift_by_l {
                if i != 1 {
                    let e = r.as_ref().unwrap_err().to_string();
                    assert!(e.contains("w-consistency") || e.contains("abort"), "{e}");
                }
            } else {
                assert_eq!(r.as_ref().unwrap(), &vec![1]);
            }
        }
    }
}

/// Multi-key TFHE key input (issue 7): three parties input their own LWE key segments of
/// different lengths; ciphertexts under the concatenated key (q = 2^32 with one message bit,
/// and q = 2^64 with 2 bits) decrypt by MPC rounding, in both schedules, with noise near the
/// decryption bound; a segment of the wrong length is refused.
#[tokio::test]
async fn concatenated_key_segments_three_parties() {
    let lengths = [5usize, 7, 4];
    let segs: Vec<Vec<i64>> = vec![
        vec![1, 0, 1, 1, 0],
        vec![0, 1, 1, 0, 1, 0, 1],
        vec![1, 1, 0, -1],
    ];
    let concat: Vec<i64> = segs.concat();
    let n: usize = lengths.iter().sum();
    for (k, m, b) in [(32u32, 1u32, 4u32), (64, 2, 8)] {
        let p = params(n, k, m, b);
        let lt = p.lt().unwrap();
        let mut rng = rand::rng();
        let bound = 1i64 << (k - m - 1);
        let cases: Vec<(u64, i64)> = vec![
            (0, 0),
            (1, bound - 1),
            ((1 << m) - 1, -bound),
            (1, -(bound / 2)),
        ];
        let cts: Vec<LweCiphertext> = cases
            .iter()
            .map(|&(mu, e)| LweCiphertext::encrypt_with_secret_key(&concat, mu, e, k, m, &mut rng))
            .collect();
        let want: Vec<u64> = cases.iter().map(|c| c.0).collect();
        let c = counts(&lt, 2 * cts.len(), 2 * cts.len(), 0, 8, 4 * cts.len());
        let segs2 = segs.clone();
        let res = run_mem(deal(3, k, c), move |i, mut eng, mut mesh| {
            let seg = segs2[i].clone();
            let cts = cts.clone();
            async move {
                let bad = SharedKey::input_concatenated_segments(
                    &mut eng,
                    &mut mesh,
                    &seg[1..],
                    &lengths,
                )
                .await;
                assert!(bad.is_err(), "a segment of the wrong length is refused");
                let key =
                    SharedKey::input_concatenated_segments(&mut eng, &mut mesh, &seg, &lengths)
                        .await?;
                assert_eq!(key.coeffs.len(), n);
                let (bundles, _) = prep_bundles(&mut eng, &mut mesh, &lt, 2 * cts.len(), 0).await?;
                let mut pool = GatePool::new(lt);
                pool.push(bundles)?;
                let strict = decrypt(&mut eng, &mut mesh, &p, &key, &cts, &mut pool).await?;
                let piped =
                    decrypt_pipelined(&mut eng, &mut mesh, &p, &key, &cts, &mut pool, 11).await?;
                mesh.close().await.ok();
                Ok((strict, piped))
            }
        })
        .await;
        for r in res {
            let (s, pp) = r.unwrap();
            assert_eq!(s, want, "k = {k}");
            assert_eq!(pp, want, "k = {k}");
        }
    }
}

/// Online communication per decryption (paper parameters, pipelined schedule), measured as the
/// growth of the bytes one party sends to one peer from a batch of 50 to a batch of 100 (the
/// per-batch commitments, digests, coin and framing cancel out), against the formula: each
/// opened `t`-bit value costs its share and its σ over `Z_{2^{t+s}}`, `2⌈(t+s)/8⌉` bytes (seed
/// 000 §10.3 counts `2(t+s)` bits: 656 bits for V1, V2, V3), plus this schedule's output-mask
/// check: `Y` (k+s bits, share and σ) and the opened shares of `w` and `w'` (k+s bits each).
#[tokio::test]
async fn communication_per_decryption_matches_the_formula() {
    use coterie_spdz::InsecureDealer;
    use coterie_threshold::gates::insecure_deal_bundles;
    use coterie_threshold::pipelined::width_bytes;
    let p = Params::paper();
    let lt = p.lt().unwrap();
    let (k, s, l, t) = (64u32, 64u32, lt.l, lt.d() + 1);
    let paper_bits = 2 * ((l + s) + (t + s) + (k + s));
    assert_eq!(paper_bits, 656);
    let formula = 2 * (width_bytes(l + s) + width_bytes(t + s) + width_bytes(k + s))
        + 2 * width_bytes(k + s)
        + 2 * width_bytes(k + s);
    assert_eq!(formula, 148);
    let ring = coterie_spdz::Z2k::spdz2k_64();
    let mut rng = rand::rng();
    let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
    let preps = dealer.deal(
        coterie_spdz::Counts {
            randoms: 5 * 150,
            ..Default::default()
        },
        &mut rng,
    );
    let sk: Vec<i64> = (0..p.n).map(|i| (i % 3 == 0) as i64).collect();
    let keys = SharedKey::insecure_deal(&dealer, &ring, &sk, &mut rng);
    let bundles = insecure_deal_bundles(&dealer, &ring, &lt, 150, 0, &mut rng);
    let cts: Vec<LweCiphertext> = (0..150)
        .map(|j| LweCiphertext::encrypt_with_secret_key(&sk, j % 2, 12345, 64, 1, &mut rng))
        .collect();
    let mut kb = keys.into_iter().zip(bundles);
    let mut per_party = Vec::new();
    for (mut mesh, prep) in InMemoryMesh::group(2, MeshOptions::default())
        .into_iter()
        .zip(preps)
    {
        let (key, b) = kb.next().unwrap();
        let cts = cts.clone();
        per_party.push(tokio::spawn(async move {
            let mut eng = coterie_spdz::Engine::new(prep);
            let mut pool = GatePool::new(lt);
            pool.push(b).unwrap();
            let peer = 1 - mesh.id();
            let s0 = mesh.stats().bytes_sent[peer];
            let a = decrypt_pipelined(&mut eng, &mut mesh, &p, &key, &cts[..50], &mut pool, 1)
                .await
                .unwrap();
            let s1 = mesh.stats().bytes_sent[peer];
            let b = decrypt_pipelined(&mut eng, &mut mesh, &p, &key, &cts[50..], &mut pool, 2)
                .await
                .unwrap();
            let s2 = mesh.stats().bytes_sent[peer];
            mesh.close().await.ok();
            (a, b, s1 - s0, s2 - s1)
        }));
    }
    for h in per_party {
        let (a, b, small, large) = h.await.unwrap();
        assert_eq!(a, (0..50).map(|j| j % 2).collect::<Vec<u64>>());
        assert_eq!(b, (50..150).map(|j| j % 2).collect::<Vec<u64>>());
        assert_eq!(
            (large - small) as usize,
            50 * formula,
            "bytes per decryption per peer"
        );
    }
}
