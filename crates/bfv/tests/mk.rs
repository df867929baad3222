//! Multi-key BFV (seed 001 §3): relinearization keys over a CRS, HomAdd/HomMul with CDKS19's two
//! relinearizations, threshold decryption; the spec's §8 test cases 2, 5–10 and 18 that are
//! local math. Plaintexts are random polynomials of `R_t`, compared against a naive negacyclic
//! convolution mod `t`.

use coterie_bfv::encrypt::decrypt_multi_key;
use coterie_bfv::mk::{
    self, ConvertedKey, DecryptionRequest, MkCrs, MkRelinKey, PartialDecryption, Relin,
    SharedRelinKey, Smudging,
};
use coterie_bfv::{Ciphertext, Context, Decomposition, Error, Params, Plaintext};
use coterie_bfv::{KeySet, SecretKey};
use coterie_math::poly::{Poly, Representation};
use coterie_math::prg::Csprng;
use rand::Rng;

mod common;
use common::{Users, add_pt, malformed, negacyclic, rng, toy};

fn random_pt(ctx: &Context, r: &mut Csprng) -> Vec<u64> {
    let t = ctx.scalar_t().unwrap();
    (0..ctx.degree()).map(|_| r.next_u64() % t).collect()
}

#[test]
fn crs_is_deterministic_and_gadget_rows_follow_table_2() {
    let ctx = toy(256);
    let a = MkCrs::new(&ctx, &[1; 32], Decomposition::Rns).unwrap();
    let b = MkCrs::new(&ctx, &[1; 32], Decomposition::Rns).unwrap();
    let c = MkCrs::new(&ctx, &[2; 32], Decomposition::Rns).unwrap();
    assert_eq!(a.a(), b.a());
    assert_ne!(a.a(), c.a());
    assert_eq!(a.rows(), 3);
    assert!(MkCrs::new(&ctx, &[1; 32], Decomposition::PowerOfTwo { base_log: 0 }).is_err());
    // §8.2: ℓ = 5 / 6 / 7 for log B = 46 / 40 / 34 with the 220-bit q of Params::seed001.
    let big = Context::new(Params::seed001().unwrap()).unwrap();
    assert_eq!(big.params().log_q(), 220);
    for (k, base_log, rows) in [(2, 46, 5), (4, 40, 6), (8, 34, 7)] {
        let d = mk::paper_decomposition(k).unwrap();
        assert_eq!(d, Decomposition::PowerOfTwo { base_log });
        let crs = MkCrs::new(&big, &[1; 32], d).unwrap();
        assert_eq!(crs.rows(), rows, "log B = {base_log}");
    }
    assert_eq!(
        mk::paper_decomposition(3).unwrap(),
        Decomposition::PowerOfTwo { base_log: 40 }
    );
    for k in [0, 1, 9] {
        assert!(mk::paper_decomposition(k).is_err(), "k = {k}");
    }
    assert_eq!(
        MkCrs::new(&big, &[1; 32], Decomposition::Rns)
            .unwrap()
            .rows(),
        5
    );
}

/// `x` (NTT, top level) as centered coefficients' largest absolute value, in bits.
fn norm_bits(x: &Poly) -> u32 {
    let mut c = x.clone();
    c.to_coeff();
    c.norm_inf().unwrap().significant_bits()
}

fn ntt_of(ctx: &Context, sk: &SecretKey) -> Poly {
    let mut p = Poly::from_signed(&ctx.ring(ctx.max_level()).unwrap(), sk.coefficients()).unwrap();
    p.to_ntt();
    p
}

/// §3.1 identities: `b + s·a` is a small error; `K_{i,j}` of method 1 satisfies
/// `k0[l] + s_i·k1[l] + s_j·k2[l] ≈ s_i·s_j·g_l` (RNS gadget: `g_l ≡ 1 mod q_l`, `0` mod the
/// other primes), for `i ≠ j` and `i = j`.
#[test]
fn relin_key_and_converted_key_identities() {
    let ctx = toy(256);
    let mut r = rng(1);
    let u = Users::new(&ctx, &[3, 8], Decomposition::Rns, 42, &mut r);
    let crs = MkCrs::new(&ctx, &[42; 32], Decomposition::Rns).unwrap();
    let s: Vec<Poly> = u.sks.iter().map(|sk| ntt_of(&ctx, sk)).collect();
    let q_bits = ctx.params().log_q();
    for (k, key) in u.rlks.iter().enumerate() {
        assert_eq!(key.rows(), 3);
        assert_eq!(key.crs_seed(), &[42; 32]);
        for (bl, al) in key.b().iter().zip(crs.a()) {
            let e = bl + &(al * &s[k]);
            // e ← χ_err: below the sampler's tail cut (a few σ), nowhere near q.
            assert!(norm_bits(&e) <= 6, "‖b + s·a‖ has {} bits", norm_bits(&e));
            assert!(norm_bits(bl) > q_bits - 8);
        }
    }
    for (i, j) in [(0, 1), (1, 0), (1, 1)] {
        let kij = ConvertedKey::convert(&u.rlks[i], &u.rlks[j]).unwrap();
        assert_eq!(kij.pair(), (u.ids[i], u.ids[j]));
        let [k0, k1, k2] = kij.k();
        let ss = &s[i] * &s[j];
        let n = ctx.degree();
        for l in 0..3 {
            let mut lhs = k0[l].clone();
            lhs += &(&k1[l] * &s[i]);
            lhs += &(&k2[l] * &s[j]);
            let mut g = ss.clone();
            for limb in 0..3 {
                if limb != l {
                    g.data_mut()[limb * n..(limb + 1) * n].fill(0);
                }
            }
            lhs -= &g;
            // r_i·e_j + s_j·e_i2 + ⟨g⁻¹(b_j[l]), e_i1⟩: about 2^50 for 40-bit primes, N = 256.
            let bits = norm_bits(&lhs);
            assert!(bits < 60, "K_({i},{j}) row {l}: error of {bits} bits");
        }
    }
}

/// §8.5: single-user encryption decrypts for every user with fresh noise far below Δ/2.
#[test]
fn single_user_ciphertexts_decrypt_with_small_noise() {
    let ctx = toy(256);
    let mut r = rng(2);
    let u = Users::new(&ctx, &[1, 2, 3], Decomposition::Rns, 42, &mut r);
    for k in 0..3 {
        let m = random_pt(&ctx, &mut r);
        let ct = u.enc(k, &m, &mut r);
        assert_eq!(ct.key_set(), &KeySet::Parties(vec![u.ids[k]]));
        assert_eq!(u.dec(&ct), m);
        let budget = mk::noise_budget(&ct, &u.keys()).unwrap();
        let noise = mk::noise_log2(&ct, &u.keys()).unwrap();
        eprintln!("user {k}: fresh noise 2^{noise:.1}, budget {budget:.1} bits");
        // Δ/2 = 2^111 for log q = 120, t = 2^8; fresh noise ≈ 2^10.
        assert!(budget > 90.0 && noise < 20.0);
        // Another user's key does not decrypt it.
        let wrong = [(u.ids[k], &u.sks[(k + 1) % 3])];
        let other = decrypt_multi_key(&ct, &wrong).unwrap();
        assert_ne!(other.coefficients().unwrap(), &m[..]);
    }
}

/// §8.6–8.7: extension to a larger set decrypts; index sets merge by sorted union; the sum of
/// k ciphertexts of k different users decrypts to the sum, k ∈ {2, 4, 8}.
#[test]
fn extension_and_hom_add_over_k_users() {
    let ctx = toy(256);
    let t = 256;
    let mut r = rng(3);
    let ids: Vec<u64> = (0..8).map(|i| 70 - 7 * i).collect(); // unsorted ids
    let u = Users::new(&ctx, &ids, Decomposition::Rns, 42, &mut r);
    let m0 = random_pt(&ctx, &mut r);
    let c0 = u.enc(0, &m0, &mut r);
    let ext = c0.extend_to(&[21, 63, 70]).unwrap();
    assert_eq!(ext.len(), 4);
    assert_eq!(u.dec(&ext), m0);
    let m1 = random_pt(&ctx, &mut r);
    let c1 = u.enc(1, &m1, &mut r);
    let sum = mk::add(&c0, &c1).unwrap();
    assert_eq!(sum.len(), 3);
    assert_eq!(sum.key_set(), &KeySet::Parties(vec![63, 70]));
    assert_eq!(u.dec(&sum), add_pt(&m0, &m1, t));
    for k in [2usize, 4, 8] {
        let mut expect = vec![0u64; ctx.degree()];
        let mut acc: Option<Ciphertext> = None;
        for user in 0..k {
            let m = random_pt(&ctx, &mut r);
            expect = add_pt(&expect, &m, t);
            let c = u.enc(user, &m, &mut r);
            acc = Some(match acc {
                None => c,
                Some(a) => mk::add(&a, &c).unwrap(),
            });
        }
        let acc = acc.unwrap();
        assert_eq!(acc.len(), k + 1);
        let mut sorted = ids[..k].to_vec();
        sorted.sort_unstable();
        assert_eq!(acc.key_set(), &KeySet::Parties(sorted));
        assert_eq!(u.dec(&acc), expect, "k = {k}");
    }
    // Mixing a non-multi-key ciphertext is an error, not a panic.
    let sk = SecretKey::generate(&ctx, &mut r);
    let single = sk
        .encrypt_symmetric(&Plaintext::encode_coefficients(&ctx, &[1]).unwrap(), &mut r)
        .unwrap();
    assert!(matches!(mk::add(&c0, &single), Err(Error::Unsupported(_))));
    assert!(mk::label(sum.clone(), 5).is_err());
    // Plaintext operations (the "add/multiply by plaintexts") act on multi-key
    // ciphertexts unchanged: c_0 + Δp, and every part times p. (t = 256 gives no slots, so
    // there are no rotations to offer; seed 001 has none either.)
    let p = random_pt(&ctx, &mut r);
    let pt = Plaintext::encode_coefficients(&ctx, &p).unwrap();
    let plus = sum.add_plain(&pt).unwrap();
    assert_eq!(plus.key_set(), sum.key_set());
    let m01 = add_pt(&m0, &m1, t);
    assert_eq!(u.dec(&plus), add_pt(&m01, &p, t));
    let times = sum.mul_plain(&pt).unwrap();
    assert_eq!(u.dec(&times), negacyclic(&m01, &p, t));
    let minus = times.sub_plain(&pt).unwrap();
    let neg_p: Vec<u64> = p.iter().map(|&x| (t - x) % t).collect();
    assert_eq!(u.dec(&minus), add_pt(&negacyclic(&m01, &p, t), &neg_p, t));
}

/// Multiplies `a·b` with all three relinearizations and checks each against the tensor's
/// plaintext and `expect`; returns the grouped on-the-fly result.
fn check_three_relins(
    u: &Users,
    shared: &SharedRelinKey,
    a: &Ciphertext,
    b: &Ciphertext,
    expect: &[u64],
) -> Ciphertext {
    let tensor = mk::mul_no_relin(a, b).unwrap();
    let ids = mk::union_ids(a, b).unwrap();
    assert_eq!(tensor.len(), (ids.len() + 1) * (ids.len() + 1));
    assert_eq!(u.dec(&tensor), expect, "tensor, ids {ids:?}");
    let grouped = mk::relinearize(
        &tensor,
        &Relin::OnTheFly {
            keys: &u.rlks,
            grouped: true,
        },
    )
    .unwrap();
    let ungrouped = mk::relinearize_on_the_fly(&tensor, &u.rlks, false).unwrap();
    let method1 = mk::relinearize(&tensor, &Relin::Shared(shared)).unwrap();
    for (name, c) in [
        ("grouped", &grouped),
        ("ungrouped", &ungrouped),
        ("shared", &method1),
    ] {
        assert_eq!(c.len(), ids.len() + 1, "{name}");
        assert_eq!(c.key_set(), &KeySet::Parties(ids.clone()), "{name}");
        assert_eq!(u.dec(c), expect, "{name}, ids {ids:?}");
    }
    // The three differ as ciphertexts (different noise), not as plaintexts.
    assert_ne!(grouped, method1);
    assert_eq!(
        mk::mul(a, b, &Relin::Shared(shared)).unwrap(),
        method1,
        "mul = relinearize ∘ mul_no_relin"
    );
    grouped
}

/// §8.8: the three relinearizations decrypt to `m1·m2` for 2, 3 and 4 users, with operands under
/// different (overlapping and disjoint) subsets of users; RNS and power-of-two gadgets.
#[test]
fn three_relinearizations_agree_for_2_3_4_users() {
    let ctx = toy(256);
    let t = 256;
    let mut r = rng(4);
    for (k, dec) in [
        (2usize, Decomposition::Rns),
        (3, Decomposition::PowerOfTwo { base_log: 20 }),
        (4, Decomposition::Rns),
    ] {
        let ids: Vec<u64> = (1..=k as u64).map(|i| 10 * i).collect();
        let u = Users::new(&ctx, &ids, dec, 42, &mut r);
        let shared = SharedRelinKey::generate(&u.rlks).unwrap();
        assert_eq!(shared.len(), k * k);
        let ms: Vec<Vec<u64>> = (0..k).map(|_| random_pt(&ctx, &mut r)).collect();
        let cs: Vec<Ciphertext> = (0..k).map(|i| u.enc(i, &ms[i], &mut r)).collect();
        // a under users {0, 1}, b under users {1, …, k−1}; then one user × the rest.
        let a = mk::add(&cs[0], &cs[1]).unwrap();
        let ma = add_pt(&ms[0], &ms[1], t);
        let mut b = cs[k - 1].clone();
        let mut mb = ms[k - 1].clone();
        for i in 1..k - 1 {
            b = mk::add(&b, &cs[i]).unwrap();
            mb = add_pt(&mb, &ms[i], t);
        }
        let ab = check_three_relins(&u, &shared, &a, &b, &negacyclic(&ma, &mb, t));
        // Disjoint singletons, and a product of a product (depth 2) with a fresh ciphertext.
        check_three_relins(
            &u,
            &shared,
            &cs[0],
            &cs[k - 1],
            &negacyclic(&ms[0], &ms[k - 1], t),
        );
        let mab = negacyclic(&ma, &mb, t);
        check_three_relins(&u, &shared, &ab, &cs[0], &negacyclic(&mab, &ms[0], t));
    }
}

#[test]
fn relinearization_errors_name_the_missing_key() {
    let ctx = toy(256);
    let mut r = rng(5);
    let u = Users::new(&ctx, &[1, 2], Decomposition::Rns, 42, &mut r);
    let m = random_pt(&ctx, &mut r);
    let (a, b) = (u.enc(0, &m, &mut r), u.enc(1, &m, &mut r));
    let tensor = mk::mul_no_relin(&a, &b).unwrap();
    match mk::relinearize_on_the_fly(&tensor, &u.rlks[..1], true) {
        Err(Error::MissingKey(s)) => assert!(s.contains("user 2"), "{s}"),
        other => panic!("expected a missing key, got {other:?}"),
    }
    let mut partial = SharedRelinKey::default();
    partial.insert(ConvertedKey::convert(&u.rlks[0], &u.rlks[0]).unwrap());
    match mk::relinearize_shared(&tensor, &partial) {
        Err(Error::MissingKey(s)) => assert!(s.contains("K_(1, 2)"), "{s}"),
        other => panic!("expected a missing key, got {other:?}"),
    }
    // Keys over another CRS or gadget are refused; a non-tensor cannot be relinearized.
    let crs2 = MkCrs::new(&ctx, &[43; 32], Decomposition::Rns).unwrap();
    let other = MkRelinKey::generate(&u.sks[1], 2, &crs2, &mut r).unwrap();
    let mixed = [u.rlks[0].clone(), other];
    assert!(matches!(
        mk::relinearize_on_the_fly(&tensor, &mixed, true),
        Err(Error::Mismatch(_))
    ));
    assert!(ConvertedKey::convert(&mixed[0], &mixed[1]).is_err());
    assert!(matches!(
        mk::relinearize_on_the_fly(&a, &u.rlks, true),
        Err(Error::Unsupported(_))
    ));
    let dup = [u.rlks[0].clone(), u.rlks[0].clone()];
    assert!(SharedRelinKey::generate(&dup).is_err());
}

/// §8.10: Merge(c_0, PartDec(s_i, c_i) for all i) = m after add and mul circuits; missing,
/// repeated, foreign and stale partial decryptions are errors naming the user.
#[test]
fn threshold_decryption_after_add_and_mul() {
    let ctx = toy(256);
    let t = 256;
    let mut r = rng(6);
    let u = Users::new(&ctx, &[5, 6, 7], Decomposition::Rns, 42, &mut r);
    let ms: Vec<Vec<u64>> = (0..3).map(|_| random_pt(&ctx, &mut r)).collect();
    let cs: Vec<Ciphertext> = (0..3).map(|i| u.enc(i, &ms[i], &mut r)).collect();
    let relin = Relin::OnTheFly {
        keys: &u.rlks,
        grouped: true,
    };
    let sum = mk::add(&mk::add(&cs[0], &cs[1]).unwrap(), &cs[2]).unwrap();
    let prod = mk::mul(&sum, &cs[1], &relin).unwrap();
    let sum_m = add_pt(&add_pt(&ms[0], &ms[1], t), &ms[2], t);
    let prod_m = negacyclic(&sum_m, &ms[1], t);
    let parts = |ct: &Ciphertext, r: &mut Csprng| -> Vec<PartialDecryption> {
        u.ids
            .iter()
            .zip(&u.sks)
            .map(|(&id, sk)| mk::part_dec(sk, id, ct, &Smudging::PaperSigma20, r).unwrap())
            .collect()
    };
    for (ct, m) in [(&sum, &sum_m), (&prod, &prod_m)] {
        let p = parts(ct, &mut r);
        let got = mk::merge(ct, &p).unwrap();
        assert_eq!(got.coefficients().unwrap(), &m[..]);
        // Order does not matter.
        let rev: Vec<_> = p.iter().rev().cloned().collect();
        assert_eq!(mk::merge(ct, &rev).unwrap(), got);
        // Missing / repeated partials.
        match mk::merge(ct, &p[..2]) {
            Err(Error::Share(s)) => assert!(s.contains("user 7") && s.contains("missing"), "{s}"),
            other => panic!("expected a missing share, got {other:?}"),
        }
        let dup = [p[0].clone(), p[1].clone(), p[1].clone(), p[2].clone()];
        match mk::merge(ct, &dup) {
            Err(Error::Share(s)) => assert!(s.contains("user 6"), "{s}"),
            other => panic!("expected a repeated share, got {other:?}"),
        }
    }
    // A partial decryption of another ciphertext, of a user outside the ciphertext.
    let p_sum = parts(&sum, &mut r);
    let p_prod = parts(&prod, &mut r);
    let stale = [p_sum[0].clone(), p_prod[1].clone(), p_prod[2].clone()];
    match mk::merge(&prod, &stale) {
        Err(Error::Share(s)) => assert!(s.contains("user 5"), "{s}"),
        other => panic!("expected a stale share, got {other:?}"),
    }
    let one = &cs[0]; // under user 5 only
    assert!(matches!(
        mk::part_dec(&u.sks[1], 6, one, &Smudging::PaperSigma20, &mut r),
        Err(Error::Mismatch(_))
    ));
    let p5 = mk::part_dec(&u.sks[0], 5, one, &Smudging::PaperSigma20, &mut r).unwrap();
    let extra = mk::part_dec(
        &u.sks[1],
        6,
        &mk::add(one, &cs[1]).unwrap(),
        &Smudging::PaperSigma20,
        &mut r,
    )
    .unwrap();
    match mk::merge(one, &[p5.clone(), extra]) {
        Err(Error::Share(s)) => assert!(s.contains("user 6"), "{s}"),
        other => panic!("expected a foreign share, got {other:?}"),
    }
    assert_eq!(
        mk::merge(one, &[p5]).unwrap().coefficients().unwrap(),
        &ms[0][..]
    );
    // A wrong secret key in one partial gives a wrong plaintext (no error: nothing can tell).
    let wrong = mk::part_dec(&u.sks[2], 6, &sum, &Smudging::PaperSigma20, &mut r).unwrap();
    let mixed = [p_sum[0].clone(), wrong, p_sum[2].clone()];
    assert_ne!(
        mk::merge(&sum, &mixed).unwrap().coefficients().unwrap(),
        &sum_m[..]
    );
}

/// Statistical smudging: the required modulus, the error when q is too small, and a correct
/// threshold decryption when it is large enough.
#[test]
fn statistical_smudging_needs_and_checks_the_modulus() {
    let ctx = toy(256);
    let mut r = rng(7);
    let u = Users::new(&ctx, &[1, 2], Decomposition::Rns, 42, &mut r);
    let ms: Vec<Vec<u64>> = (0..2).map(|_| random_pt(&ctx, &mut r)).collect();
    let ct = mk::add(&u.enc(0, &ms[0], &mut r), &u.enc(1, &ms[1], &mut r)).unwrap();
    let noise = mk::noise_log2(&ct, &u.keys()).unwrap();
    assert!(noise < 20.0, "fresh noise 2^{noise}");
    let noise_log2 = noise.ceil() as u32;
    // log q = 120 (floor 119): λ = 80 fits (≈ 14 + 80 + 2 + 9 + 2), λ = 100 does not.
    let ok = Smudging::Statistical {
        lambda: 80,
        noise_log2,
    };
    let too_big = Smudging::Statistical {
        lambda: 100,
        noise_log2,
    };
    assert!(mk::check_smudging(&ctx, ctx.max_level(), &ok, 2).is_ok());
    match mk::check_smudging(&ctx, ctx.max_level(), &too_big, 2) {
        Err(Error::InvalidParameter(s)) => assert!(s.contains("needs log q"), "{s}"),
        other => panic!("expected a too-small modulus, got {other:?}"),
    }
    assert!(mk::part_dec(&u.sks[0], 1, &ct, &too_big, &mut r).is_err());
    assert_eq!(
        mk::statistical_smudging_log_q(noise_log2, 80, 2, 9),
        noise_log2 + 80 + 2 + 9 + 2
    );
    let parts: Vec<_> = u
        .ids
        .iter()
        .zip(&u.sks)
        .map(|(&id, sk)| mk::part_dec(sk, id, &ct, &ok, &mut r).unwrap())
        .collect();
    let expect = add_pt(&ms[0], &ms[1], 256);
    assert_eq!(
        mk::merge(&ct, &parts).unwrap().coefficients().unwrap(),
        &expect[..]
    );
    // The smudging is as wide as claimed: c_0 + Σ m_i minus the true phase is Σ e_i, with
    // coefficients near 2^(noise_log2 + λ) and never above 2 · 2^(noise_log2 + λ).
    let mut diff = ct.parts()[0].clone();
    for p in &parts {
        diff += p.poly();
    }
    diff -= &mk::phase(&ct, &u.keys()).unwrap();
    let bits = diff.norm_inf().unwrap().significant_bits();
    let w = noise_log2 + 80;
    assert!(
        bits > w - 4 && bits <= w + 2,
        "smudging of {bits} bits, expected ≈ {w}"
    );
}

/// Wire forms: round trips, exact lengths, and malformed input rejected without a panic.
#[test]
fn serialization_round_trips_and_rejects_malformed_bytes() {
    let ctx = toy(256);
    let other = toy(512);
    let mut r = rng(8);
    for dec in [
        Decomposition::Rns,
        Decomposition::PowerOfTwo { base_log: 30 },
    ] {
        let u = Users::new(&ctx, &[11, u64::MAX], dec, 42, &mut r);
        let key = &u.rlks[1];
        let bytes = key.to_bytes();
        let back = MkRelinKey::from_bytes(&ctx, &bytes).unwrap();
        assert_eq!(&back, key);
        assert_eq!(back.id(), u64::MAX);
        let conv = ConvertedKey::convert(&u.rlks[0], &u.rlks[1]).unwrap();
        let cb = conv.to_bytes();
        assert_eq!(ConvertedKey::from_bytes(&ctx, &cb).unwrap(), conv);
        malformed(&ctx, &other, &bytes, |c, b| {
            MkRelinKey::from_bytes(c, b).map(|_| ())
        });
        malformed(&ctx, &other, &cb, |c, b| {
            ConvertedKey::from_bytes(c, b).map(|_| ())
        });
        // A relinearization key decoded back still relinearizes.
        let m = random_pt(&ctx, &mut r);
        let (a, b) = (u.enc(0, &m, &mut r), u.enc(1, &m, &mut r));
        let keys = [u.rlks[0].clone(), back];
        let z = mk::mul(
            &a,
            &b,
            &Relin::OnTheFly {
                keys: &keys,
                grouped: true,
            },
        )
        .unwrap();
        assert_eq!(u.dec(&z), negacyclic(&m, &m, 256));
        let p = mk::part_dec(&u.sks[0], 11, &z, &Smudging::PaperSigma20, &mut r).unwrap();
        let pb = p.to_bytes();
        assert_eq!(PartialDecryption::from_bytes(&ctx, &pb).unwrap(), p);
        malformed(&ctx, &other, &pb, |c, b| {
            PartialDecryption::from_bytes(c, b).map(|_| ())
        });
        // Decryption requests: one element per user (two for the merger), the same partial
        // decryptions and merge as from the whole ciphertext.
        let reqs = [
            DecryptionRequest::new(&z, 11, true).unwrap(),
            DecryptionRequest::new(&z, u64::MAX, false).unwrap(),
        ];
        assert!(DecryptionRequest::new(&z, 12, false).is_err());
        let mut partials = Vec::new();
        for (req, sk) in reqs.iter().zip(&u.sks) {
            let rb = req.to_bytes();
            let back = DecryptionRequest::from_bytes(&ctx, &rb).unwrap();
            assert_eq!(&back, req);
            malformed(&ctx, &other, &rb, |c, b| {
                DecryptionRequest::from_bytes(c, b).map(|_| ())
            });
            let p = mk::part_dec_request(sk, &back, &Smudging::PaperSigma20, &mut r).unwrap();
            assert_eq!(p.digest(), &mk::ciphertext_digest(&z));
            partials.push(p);
        }
        let want = negacyclic(&m, &m, 256);
        let merged = mk::merge_request(&reqs[0], &partials).unwrap();
        assert_eq!(merged.coefficients().unwrap(), &want[..]);
        assert_eq!(
            mk::merge(&z, &partials).unwrap().coefficients().unwrap(),
            &want[..]
        );
        // Only the merger's request carries c_0; a partial is not merged twice.
        assert!(mk::merge_request(&reqs[1], &partials).is_err());
        assert!(mk::merge_request(&reqs[0], &[partials[0].clone(), partials[0].clone()]).is_err());
    }
}

/// §8.9 / §8.10 / §8.18 on the paper's parameters (N = 8192, log q = 220, t = 256, Gaussian
/// secrets): a depth-5 circuit over 4 users' random plaintexts decrypts with all keys and by
/// threshold decryption; the relinearization key has 3ℓ ring elements of 225,280 bytes.
#[test]
fn depth_5_circuit_of_4_users_on_seed001() {
    let ctx = Context::new(Params::seed001().unwrap()).unwrap();
    let t = 256;
    let mut r = rng(9);
    let u = Users::new(&ctx, &[1, 2, 3, 4], Decomposition::Rns, 42, &mut r);
    let shared = SharedRelinKey::generate(&u.rlks).unwrap();
    let on_the_fly = Relin::OnTheFly {
        keys: &u.rlks,
        grouped: true,
    };
    let method1 = Relin::Shared(&shared);
    let ms: Vec<Vec<u64>> = (0..4).map(|_| random_pt(&ctx, &mut r)).collect();
    let cs: Vec<Ciphertext> = (0..4).map(|i| u.enc(i, &ms[i], &mut r)).collect();
    let fresh = mk::noise_budget(&cs[0], &u.keys()).unwrap();
    // z1 = x1·x2, z2 = x3·x4, z3 = z1·z2, z4 = z3², z5 = z4·(z4 + x1), z6 = z5²: depth 5.
    let z1 = mk::mul(&cs[0], &cs[1], &on_the_fly).unwrap();
    let z2 = mk::mul(&cs[2], &cs[3], &method1).unwrap();
    let z3 = mk::mul(&z1, &z2, &on_the_fly).unwrap();
    let z4 = mk::mul(&z3, &z3, &method1).unwrap();
    let z5 = mk::mul(&z4, &mk::add(&z4, &cs[0]).unwrap(), &on_the_fly).unwrap();
    let z6 = mk::mul(&z5, &z5, &on_the_fly).unwrap();
    let m1 = negacyclic(&ms[0], &ms[1], t);
    let m2 = negacyclic(&ms[2], &ms[3], t);
    let m3 = negacyclic(&m1, &m2, t);
    let m4 = negacyclic(&m3, &m3, t);
    let m5 = negacyclic(&m4, &add_pt(&m4, &ms[0], t), t);
    let m6 = negacyclic(&m5, &m5, t);
    for (depth, (z, m)) in [(&z3, &m3), (&z4, &m4), (&z5, &m5), (&z6, &m6)]
        .into_iter()
        .enumerate()
    {
        let budget = mk::noise_budget(z, &u.keys()).unwrap();
        eprintln!(
            "seed001, 4 users, depth {}: noise budget {budget:.1} bits (fresh {fresh:.1})",
            depth + 2
        );
        assert_eq!(u.dec(z), *m, "depth {}", depth + 2);
        assert!(budget > 0.0);
    }
    assert_eq!(z6.len(), 5);
    let parts: Vec<_> = u
        .ids
        .iter()
        .zip(&u.sks)
        .map(|(&id, sk)| mk::part_dec(sk, id, &z6, &Smudging::PaperSigma20, &mut r).unwrap())
        .collect();
    assert_eq!(
        mk::merge(&z6, &parts).unwrap().coefficients().unwrap(),
        &m6[..]
    );
    // §8.18: a ring element packs to 225,280 bytes; the key holds 3ℓ = 15 of them.
    let ring = ctx.ring(ctx.max_level()).unwrap();
    let elem = Poly::zero(&ring, Representation::Ntt).to_packed().len();
    assert_eq!(elem, 225_280);
    let key_len = u.rlks[0].to_bytes().len();
    assert!(
        key_len >= 15 * elem && key_len < 15 * elem + 512,
        "{key_len}"
    );
}

/// §8.9 for k = 2 and k = 8 on the paper's parameters with the paper's gadgets (Table 2:
/// log B = 46, ℓ = 5 for two users; log B = 34, ℓ = 7 for eight): Σ_i x_i times x_1, then
/// squarings and a product, depth 5, every user's key involved; threshold decryption too.
#[test]
fn depth_5_for_2_and_8_users_with_table_2_gadgets_on_seed001() {
    let ctx = Context::new(Params::seed001().unwrap()).unwrap();
    let t = 256;
    let mut r = rng(10);
    for (k, base_log) in [(2usize, 46u32), (8, 34)] {
        let ids: Vec<u64> = (1..=k as u64).collect();
        let u = Users::new(
            &ctx,
            &ids,
            Decomposition::PowerOfTwo { base_log },
            42,
            &mut r,
        );
        assert_eq!(u.rlks[0].rows(), if k == 2 { 5 } else { 7 });
        let relin = Relin::OnTheFly {
            keys: &u.rlks,
            grouped: true,
        };
        let ms: Vec<Vec<u64>> = (0..k).map(|_| random_pt(&ctx, &mut r)).collect();
        let cs: Vec<Ciphertext> = (0..k).map(|i| u.enc(i, &ms[i], &mut r)).collect();
        let mut y = cs[0].clone();
        let mut my = ms[0].clone();
        for i in 1..k {
            y = mk::add(&y, &cs[i]).unwrap();
            my = add_pt(&my, &ms[i], t);
        }
        let z1 = mk::mul(&y, &cs[0], &relin).unwrap();
        let z2 = mk::mul(&z1, &z1, &relin).unwrap();
        let z3 = mk::mul(&z2, &mk::add(&z2, &cs[k - 1]).unwrap(), &relin).unwrap();
        let z4 = mk::mul(&z3, &z3, &relin).unwrap();
        let z5 = mk::mul(&z4, &z4, &relin).unwrap();
        let m1 = negacyclic(&my, &ms[0], t);
        let m2 = negacyclic(&m1, &m1, t);
        let m3 = negacyclic(&m2, &add_pt(&m2, &ms[k - 1], t), t);
        let m4 = negacyclic(&m3, &m3, t);
        let m5 = negacyclic(&m4, &m4, t);
        let budget = mk::noise_budget(&z5, &u.keys()).unwrap();
        eprintln!("seed001, {k} users, log B = {base_log}, depth 5: noise budget {budget:.1} bits");
        assert_eq!(z5.len(), k + 1);
        assert_eq!(u.dec(&z5), m5, "k = {k}");
        let parts: Vec<_> = u
            .ids
            .iter()
            .zip(&u.sks)
            .map(|(&id, sk)| mk::part_dec(sk, id, &z5, &Smudging::PaperSigma20, &mut r).unwrap())
            .collect();
        assert_eq!(
            mk::merge(&z5, &parts).unwrap().coefficients().unwrap(),
            &m5[..]
        );
    }
}

/// `ciphertext_digest` is its definition (`…/ciphertext-digest/v2`) however its words are cut
/// into updates: against a reference that hashes the whole encoding in one update, for parts of
/// 16,384 words (several updates each), under both multi-key key sets.
#[test]
fn ciphertext_digest_is_its_definition() {
    let ctx = toy(8192);
    let level = ctx.max_level();
    let ring = ctx.ring(level).unwrap();
    let seed = [7u8; 32];
    for (keys, count) in [
        (KeySet::Parties(vec![3, 9]), 3u8),
        (KeySet::PartiesTensor(vec![3, 9]), 9),
    ] {
        let parts: Vec<Poly> = (0..count)
            .map(|i| Poly::from_seed(&ring, Representation::Coefficient, &seed, &[i]).unwrap())
            .collect();
        assert!(parts[0].data().len() > 8192);
        let ct = Ciphertext::from_parts_with_keys(&ctx, level, parts, keys.clone()).unwrap();
        let (ids, tensor) = match &keys {
            KeySet::Parties(ids) => (ids, 0u8),
            KeySet::PartiesTensor(ids) => (ids, 1),
            KeySet::Powers => unreachable!(),
        };
        let mut enc = ctx.fingerprint().to_vec();
        enc.extend_from_slice(&(level as u64).to_le_bytes());
        enc.push(tensor);
        enc.extend_from_slice(&(ids.len() as u64).to_le_bytes());
        ids.iter()
            .for_each(|id| enc.extend_from_slice(&id.to_le_bytes()));
        enc.extend_from_slice(&(ct.parts().len() as u64).to_le_bytes());
        for p in ct.parts() {
            p.data()
                .iter()
                .for_each(|x| enc.extend_from_slice(&x.to_le_bytes()));
        }
        let mut h = blake3::Hasher::new_derive_key("coterie-bfv/mk/ciphertext-digest/v2");
        h.update(&enc);
        assert_eq!(&mk::ciphertext_digest(&ct), h.finalize().as_bytes());
    }
}
