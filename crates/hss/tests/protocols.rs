//! The two-party protocols over the in-memory mesh: distributed key generation gives keys that
//! work (same public key on both sides, digits in range, HSS multiplications correct), and the
//! distributed level-2 share generation gives valid `L2(x)`.

use std::time::Duration;

use coterie_hss::group::Group;
use coterie_hss::protocol::{dkg, l2_shares};
use coterie_hss::scheme::{Evaluator, Params, PreparedInput, SecretKey};
use coterie_math::bigint::BigInt;
use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
use rand::SeedableRng;

fn opts() -> MeshOptions {
    MeshOptions {
        timeout: Duration::from_secs(60),
        ..MeshOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dkg_keys_work_and_l2s_loads_inputs() {
    for log_base in [1u32, 2, 4] {
        let params = Params::insecure_toy(log_base, 16, 10);
        let mut meshes = InMemoryMesh::group(2, opts());
        let m1 = meshes.pop().unwrap();
        let m0 = meshes.pop().unwrap();
        let xs = vec![true, false, true];
        let run = |mut m: InMemoryMesh, seed: u64, xs: Vec<bool>| async move {
            let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
            let (pk, ek) = dkg(&mut m, &params, &mut rng).await.unwrap();
            let mine: &[bool] = if ek.party == 0 { &xs } else { &[] };
            let l2 = l2_shares(&mut m, &pk, &ek, mine, 3, &mut rng)
                .await
                .unwrap();
            m.close().await.unwrap();
            (pk, ek, l2)
        };
        let h0 = tokio::spawn(run(m0, 70 + log_base as u64, xs.clone()));
        let h1 = tokio::spawn(run(m1, 80 + log_base as u64, vec![]));
        let (pk0, ek0, l2a) = h0.await.unwrap();
        let (pk1, ek1, l2b) = h1.await.unwrap();
        // Same public key on both sides.
        assert_eq!(pk0.h, pk1.h);
        assert_eq!(pk0.key_digits, pk1.key_digits);
        pk0.validate().unwrap();
        let g = Group::new(params.group);
        let c = BigInt::from(&ek0.c_share - &ek1.c_share);
        assert_eq!(pk0.h, g.g_pow(&c));
        // Digits in {0..B-1}, consistent with c and with E(c_i).
        let digits: Vec<BigInt> = ek0
            .digit_shares
            .iter()
            .zip(&ek1.digit_shares)
            .map(|(a, b)| BigInt::from(a - b))
            .collect();
        let sk = SecretKey {
            c: c.clone(),
            digits: digits.iter().map(|d| d.to_u64().unwrap()).collect(),
        };
        let mut recomb = BigInt::new();
        for (i, d) in digits.iter().enumerate() {
            assert!(*d >= 0 && *d < (1u32 << log_base), "digit out of range");
            recomb += BigInt::from(d << (log_base * i as u32));
            assert_eq!(
                sk.decrypt_to_group(&g, &pk0.key_digits[i]).unwrap(),
                g.g_pow(d)
            );
        }
        assert_eq!(recomb, c);
        assert!(ek0.c_share.significant_bits() <= params.key_share_bits());
        assert_eq!(ek0.prf_key, ek1.prf_key);
        // Batches survive a serialization round trip and validate.
        let back: coterie_hss::protocol::L2Batch =
            coterie_hss::scheme::from_bytes(&coterie_hss::scheme::to_bytes(&l2a).unwrap()).unwrap();
        back.validate(512).unwrap();
        assert_eq!(back, l2a);
        let mut bad = back.clone();
        bad.shares[0].yc = BigInt::from(1) << 600;
        assert!(bad.validate(512).is_err());
        // L2S: <x> = (x, 0), <xc> reconstructs x·c.
        for (j, &x) in xs.iter().enumerate() {
            let (a, b) = (&l2a.shares[j], &l2b.shares[j]);
            assert_eq!(BigInt::from(&a.y - &b.y), i32::from(x));
            assert_eq!(b.y, 0);
            assert_eq!(BigInt::from(&a.yc - &b.yc), BigInt::from(&c * i32::from(x)));
        }
        // The keys work: multiply an encrypted bit by the L2S-loaded bits.
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(90);
        let enc = pk0.encryptor().unwrap();
        for xv in [0u32, 1] {
            let inp =
                PreparedInput::new(&pk0, &enc.encrypt(&pk0, &xv.into(), &mut rng), true).unwrap();
            for (j, &y) in xs.iter().enumerate() {
                let mut e0 = Evaluator::new(&pk0, &ek0, 1).unwrap();
                let mut e1 = Evaluator::new(&pk1, &ek1, 1).unwrap();
                let r0 = e0.mult(&inp, &l2a.shares[j]).unwrap();
                let r1 = e1.mult(&inp, &l2b.shares[j]).unwrap();
                if e0.flagged() && e1.flagged() {
                    continue;
                }
                let want = xv * u32::from(y);
                assert_eq!(BigInt::from(&r0.y - &r1.y), want);
                assert_eq!(BigInt::from(&r0.yc - &r1.yc), BigInt::from(&c * want));
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dkg_on_the_paper_group_base_16() {
    let params = Params::table3(5, 4, 8).unwrap();
    let mut meshes = InMemoryMesh::group(2, opts());
    let m1 = meshes.pop().unwrap();
    let m0 = meshes.pop().unwrap();
    let run = |mut m: InMemoryMesh, seed: u64| async move {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
        let r = dkg(&mut m, &params, &mut rng).await.unwrap();
        m.close().await.unwrap();
        r
    };
    let (a, b) = tokio::join!(tokio::spawn(run(m0, 1)), tokio::spawn(run(m1, 2)));
    let ((pk0, ek0), (pk1, ek1)) = (a.unwrap(), b.unwrap());
    assert_eq!(pk0.h, pk1.h);
    let g = Group::new(params.group);
    let c = BigInt::from(&ek0.c_share - &ek1.c_share);
    assert!(c >= 0 && c.significant_bits() <= 160);
    assert_eq!(pk0.h, g.g_pow(&c));
    let sk = SecretKey {
        c: c.clone(),
        digits: vec![],
    };
    for (i, (a, b)) in ek0.digit_shares.iter().zip(&ek1.digit_shares).enumerate() {
        let d = BigInt::from(a - b);
        assert!((0..16).contains(&d));
        assert_eq!(
            sk.decrypt_to_group(&g, &pk0.key_digits[i]).unwrap(),
            g.g_pow(&d)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pads_from_two_ots_absorb_and_multiply() {
    use coterie_hss::leakage::{
        MaskedInput, mmult, output_unmasked, precompute_pad, prepare_key_digits,
    };
    use coterie_hss::protocol::pads;
    let params = Params::insecure_toy(1, 12, 10);
    let mut meshes = InMemoryMesh::group(2, opts());
    let m1 = meshes.pop().unwrap();
    let m0 = meshes.pop().unwrap();
    let run = |mut m: InMemoryMesh, seed: u64| async move {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
        let (pk, ek) = dkg(&mut m, &params, &mut rng).await.unwrap();
        let p = pads(&mut m, &pk, &ek, 6, &mut rng).await.unwrap();
        m.close().await.unwrap();
        (pk, ek, p)
    };
    let (a, b) = tokio::join!(tokio::spawn(run(m0, 5)), tokio::spawn(run(m1, 6)));
    let ((pk, ek0, mut p0), (_, ek1, mut p1)) = (a.unwrap(), b.unwrap());
    let c = BigInt::from(&ek0.c_share - &ek1.c_share);
    let mut seen = [false; 2];
    for (x, y) in p0.iter().zip(&p1) {
        let bv = BigInt::from(&x.b.y - &y.b.y);
        assert!(bv == 0 || bv == 1, "pad is not a bit");
        seen[bv.to_usize().unwrap()] = true;
        assert_eq!(BigInt::from(&x.b.yc - &y.b.yc), BigInt::from(&c * &bv));
    }
    assert!(seen[0] || seen[1]);
    // Use the pads in MMult: L2(b ⊕ x) = MMult(L1(x), pad, L2(1 ⊕ b)), unmasked output = x.
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7);
    let enc = pk.encryptor().unwrap();
    let kd = prepare_key_digits(&pk).unwrap();
    for (k, (q0, q1)) in p0.iter_mut().zip(p1.iter_mut()).enumerate() {
        let x = (k % 2) as u32;
        let mx = MaskedInput::new(&pk, &enc.encrypt(&pk, &x.into(), &mut rng)).unwrap();
        let mut e0 = Evaluator::new(&pk, &ek0, k as u64).unwrap();
        let mut e1 = Evaluator::new(&pk, &ek1, k as u64).unwrap();
        precompute_pad(&mut e0, &kd, q0).unwrap();
        precompute_pad(&mut e1, &kd, q1).unwrap();
        let ob0 = e0.one().sub(&q0.b);
        let ob1 = e1.one().sub(&q1.b);
        let r0 = mmult(&mut e0, &mx, q0, &ob0).unwrap();
        let r1 = mmult(&mut e1, &mx, q1, &ob1).unwrap();
        let o0 = output_unmasked(&mut e0, &r0, q0).unwrap();
        let o1 = output_unmasked(&mut e1, &r1, q1).unwrap();
        if e0.flagged() && e1.flagged() {
            continue;
        }
        let got = coterie_hss::scheme::reconstruct(&o0, &o1, &BigInt::from(2)).unwrap();
        assert_eq!(got, x);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_protocol_messages_are_errors() {
    use coterie_hss::protocol::TAG_OT_A;
    let params = Params::insecure_toy(1, 16, 10);
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(8);
    let (pk, ek0, _, _) =
        coterie_hss::scheme::insecure_keygen_trusted_dealer(&params, &mut rng).unwrap();
    // A cheating OT sender: an element out of range, of the wrong length, and a non-residue.
    let p = Group::new(params.group).p().clone();
    let minus_one = BigInt::from(&p - 1u32).to_digits::<u64>(rug::integer::Order::Lsf);
    for bad in [vec![u64::MAX; 2], vec![1u64; 3], minus_one] {
        let mut meshes = InMemoryMesh::group(2, opts());
        let mut m1 = meshes.pop().unwrap();
        let mut m0 = meshes.pop().unwrap();
        m1.send_tagged(0, TAG_OT_A, &bad).await.unwrap();
        let mut r = rand_chacha::ChaCha20Rng::seed_from_u64(9);
        let res = l2_shares(&mut m0, &pk, &ek0, &[true], 1, &mut r).await;
        assert!(res.is_err(), "bad OT message accepted: {bad:x?}");
    }
}

/// A cheating OT sender on the wire (through `TamperMesh`, no hook in the protocol code): party 1
/// replaces its first OT message of the key generation by an element outside the group, and
/// the honest party 0 must refuse it with an error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dkg_refuses_a_tampered_ot_message() {
    use coterie_hss::protocol::TAG_OT_A;
    use coterie_net::tamper::Select;
    let params = Params::insecure_toy(2, 16, 10);
    let short = MeshOptions {
        timeout: Duration::from_secs(5),
        ..MeshOptions::default()
    };
    let mut meshes = InMemoryMesh::group(2, short);
    let mut cheat = coterie_net::TamperMesh::new(meshes.pop().unwrap());
    let mut honest = meshes.pop().unwrap();
    // An `Elem` is encoded as its limbs: all-ones limbs are above the group's modulus.
    let fired = cheat.add(
        Select::to(0)
            .tag(TAG_OT_A)
            .nth(0)
            .replace(&vec![u64::MAX; 2]),
    );
    let cheater = tokio::spawn(async move {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(91);
        let r = dkg(&mut cheat, &params, &mut rng).await;
        let _ = cheat.close().await;
        r.is_ok()
    });
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(90);
    let res = dkg(&mut honest, &params, &mut rng).await;
    assert!(
        res.is_err(),
        "party 0 accepted an OT message outside the group"
    );
    let _ = honest.close().await;
    assert!(
        !cheater.await.unwrap(),
        "the cheating party finished a key generation"
    );
    assert_eq!(fired.fired(), 1, "the tampering rule did not fire");
}
