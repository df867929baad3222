//! Threshold proxy re-encryption (seed 001 §4): ReKeyGen, ReEnc by N proxies, Decrypt by the
//! delegatee; the spec's §8 test cases 4, 11–16, 20, 22 and 23, and a depth-5 circuit of four
//! users on the paper's parameters re-encrypted through N = 2 and N = 1 proxies.

use coterie_bfv::encrypt::decrypt_multi_key;
use coterie_bfv::mk::{self, MkCrs, MkRelinKey, Relin, Smudging};
use coterie_bfv::reenc::{
    self, MaskingKey, ReEncShare, ReEncryptedCiphertext, ReKeyShare, open_rekey, rekey_gen,
    rekey_shares,
};
use coterie_bfv::{Ciphertext, Context, Decomposition, Error, Params, Plaintext, SecretKey};
use coterie_math::bigint::BigInt;
use coterie_math::poly::Poly;
use coterie_math::prg::Csprng;
use coterie_math::sample::DiscreteGaussian;
use rand::Rng;

mod common;
use common::{add_pt, malformed, negacyclic, rng, toy};

fn random_pt(ctx: &Context, r: &mut Csprng) -> Vec<u64> {
    let t = ctx.scalar_t().unwrap();
    (0..ctx.degree()).map(|_| r.next_u64() % t).collect()
}

fn ntt_of(ctx: &Context, sk: &SecretKey) -> Poly {
    let mut p = Poly::from_signed(&ctx.ring(ctx.max_level()).unwrap(), sk.coefficients()).unwrap();
    p.to_ntt();
    p
}

/// Users with ids 1..=k, their keys and fresh ciphertexts of random plaintexts.
struct World {
    ids: Vec<u64>,
    sks: Vec<SecretKey>,
    ms: Vec<Vec<u64>>,
    cs: Vec<Ciphertext>,
}

impl World {
    fn new(ctx: &Context, k: usize, r: &mut Csprng) -> World {
        let ids: Vec<u64> = (1..=k as u64).collect();
        let sks: Vec<SecretKey> = ids.iter().map(|_| SecretKey::generate(ctx, r)).collect();
        let ms: Vec<Vec<u64>> = ids.iter().map(|_| random_pt(ctx, r)).collect();
        let cs = sks
            .iter()
            .zip(&ids)
            .zip(&ms)
            .map(|((sk, &id), m)| {
                let pt = Plaintext::encode_coefficients(ctx, m).unwrap();
                mk::encrypt(&sk.public_key(r), id, &pt, r).unwrap()
            })
            .collect();
        World { ids, sks, ms, cs }
    }

    fn keys(&self) -> Vec<(u64, &SecretKey)> {
        self.ids.iter().copied().zip(self.sks.iter()).collect()
    }

    /// Masking keys for `delegatee` and the N proxies' shares (`shares[j]` for proxy j).
    fn rekeys(
        &self,
        delegatee: u64,
        proxies: usize,
        r: &mut Csprng,
    ) -> (Vec<MaskingKey>, Vec<Vec<ReKeyShare>>) {
        let mut mks = Vec::new();
        let mut shares = vec![Vec::new(); proxies];
        for (sk, &id) in self.sks.iter().zip(&self.ids) {
            let (m, s) = rekey_gen(sk, id, delegatee, proxies, r).unwrap();
            mks.push(m);
            for (j, sh) in s.into_iter().enumerate() {
                shares[j].push(sh);
            }
        }
        (mks, shares)
    }
}

fn reencrypt(
    ct: &Ciphertext,
    delegatee: u64,
    shares: &[Vec<ReKeyShare>],
    smudging: &Smudging,
    r: &mut Csprng,
) -> (ReEncryptedCiphertext, Vec<ReEncShare>) {
    let parts: Vec<ReEncShare> = shares
        .iter()
        .enumerate()
        .map(|(j, s)| reenc::reenc_share(j, delegatee, s, ct, smudging, r).unwrap())
        .collect();
    (reenc::reenc_combine(ct, &parts).unwrap(), parts)
}

fn coeffs(p: &Plaintext) -> Vec<u64> {
    p.coefficients().unwrap().to_vec()
}

/// §8.4, §8.11, §8.22: Open(Share(rk)) = s − r for N ∈ {1, 2, 4, 8}; N = 1's only share is rk;
/// a missing or repeated share is an error; fresh r per (i, D); r + Σ shares = s exactly.
#[test]
fn rekey_shares_open_to_s_minus_r() {
    let ctx = toy(256);
    let mut r = rng(1);
    let sk = SecretKey::generate(&ctx, &mut r);
    let s = ntt_of(&ctx, &sk);
    for n in [1usize, 2, 4, 8] {
        let (mk, shares) = rekey_gen(&sk, 3, 9, n, &mut r).unwrap();
        assert_eq!((mk.delegator(), mk.delegatee()), (3, 9));
        assert_eq!(shares.len(), n);
        let rk = &s - mk.poly();
        assert_eq!(open_rekey(&shares).unwrap(), rk, "N = {n}");
        // Tightness (Table 1): the delegatee and all N proxies together recover s exactly.
        assert_eq!(&open_rekey(&shares).unwrap() + mk.poly(), s);
        for (j, sh) in shares.iter().enumerate() {
            assert_eq!(
                (sh.proxy(), sh.proxies(), sh.delegator(), sh.delegatee()),
                (j, n, 3, 9)
            );
        }
        if n == 1 {
            assert_eq!(shares[0].poly(), &rk);
            continue;
        }
        match open_rekey(&shares[1..]) {
            Err(Error::Share(e)) => assert!(e.contains("proxy 0") && e.contains("missing"), "{e}"),
            other => panic!("expected a missing share, got {other:?}"),
        }
        let mut dup = shares.clone();
        dup[0] = shares[1].clone();
        match open_rekey(&dup) {
            Err(Error::Share(e)) => assert!(e.contains("proxy"), "{e}"),
            other => panic!("expected an error, got {other:?}"),
        }
        // Any single share (N ≥ 2) is unrelated to rk.
        assert_ne!(shares[0].poly(), &rk);
    }
    // Fresh masking keys for each pair: two runs for the same (i, D) differ.
    let (a, _) = rekey_gen(&sk, 3, 9, 2, &mut r).unwrap();
    let (b, _) = rekey_gen(&sk, 3, 9, 2, &mut r).unwrap();
    assert_ne!(a.poly(), b.poly());
    // The two-step form (delegatee samples, delegator shares) is the same thing.
    let mk = MaskingKey::sample(&ctx, 3, 9, &mut r);
    let shares = rekey_shares(&sk, &mk, 3, &mut r).unwrap();
    assert_eq!(&open_rekey(&shares).unwrap() + mk.poly(), s);
    assert!(rekey_gen(&sk, 3, 9, 0, &mut r).is_err());
}

/// χ² statistic of the residues mod the first prime of `p` (coefficient form) in 16 buckets.
fn chi_square_16(p: &Poly) -> f64 {
    let mut c = p.clone();
    if c.representation() == coterie_math::poly::Representation::Ntt {
        c.to_coeff();
    }
    let q = c.context().moduli()[0].value();
    let limb = c.limb(0);
    let mut buckets = [0f64; 16];
    for &x in limb {
        buckets[((x as u128 * 16) / q as u128) as usize] += 1.0;
    }
    let e = limb.len() as f64 / 16.0;
    buckets.iter().map(|b| (b - e).powi(2) / e).sum()
}

/// §8.19 / §8.21 (statistical; they document, they do not prove): what the receiver and N − 1
/// proxies see of a delegator — its masking key and the shares of proxies 1 … N−1 — and the
/// receiver's view of the proxies' re-encryption shares but proxy 0's pass a χ² uniformity test
/// (15 degrees of freedom, threshold 45: p ≈ 10^-4), as a simulated uniform value does; the
/// secret key itself fails it.
#[test]
fn colluders_views_look_uniform() {
    let ctx = toy(1024);
    let mut r = rng(9);
    let w = World::new(&ctx, 2, &mut r);
    let ct = mk::add(&w.cs[0], &w.cs[1]).unwrap();
    let (mks, shares) = w.rekeys(3, 4, &mut r);
    let (_, parts) = reencrypt(&ct, 3, &shares, &Smudging::PaperSigma20, &mut r);
    let mut views: Vec<(String, f64)> = vec![("masking key".into(), chi_square_16(mks[0].poly()))];
    for j in 1..4 {
        views.push((
            format!("rk share of proxy {j}"),
            chi_square_16(shares[j][0].poly()),
        ));
        views.push((
            format!("c0' share of proxy {j}"),
            chi_square_16(parts[j].poly()),
        ));
    }
    views.push((
        "simulated".into(),
        chi_square_16(&Poly::random(
            &ctx.ring(ctx.max_level()).unwrap(),
            coterie_math::poly::Representation::Coefficient,
            &mut r,
        )),
    ));
    for (what, x) in &views {
        assert!(*x < 45.0, "{what}: χ² = {x}");
    }
    let s =
        Poly::from_signed(&ctx.ring(ctx.max_level()).unwrap(), w.sks[0].coefficients()).unwrap();
    assert!(chi_square_16(&s) > 1000.0);
}

/// §8.20: rk = s − r is uniform: essentially no coefficient is small (expected fraction of
/// |x| < q/2^19 is 2^-18), unlike s.
#[test]
fn reconstructed_rekey_is_uniform() {
    let ctx = toy(1024);
    let mut r = rng(2);
    let sk = SecretKey::generate(&ctx, &mut r);
    let (_, shares) = rekey_gen(&sk, 1, 2, 4, &mut r).unwrap();
    let mut rk = open_rekey(&shares).unwrap();
    rk.to_coeff();
    let q = ctx.modulus_at(ctx.max_level()).unwrap();
    let small = BigInt::from(&q >> 19u32);
    let count = rk
        .to_bigints()
        .unwrap()
        .into_iter()
        .filter(|x| x.clone().abs() < small)
        .count();
    assert!(count <= 2, "{count} small coefficients of 1024");
    assert!(sk.norm_inf() <= 1);
}

/// §8.12: Decrypt(r's, ReEnc(shares, ct)) = m for k ∈ {2, 4, 8} and N ∈ {1, 2, 4, 8}, for a
/// HomAdd'ed ciphertext of all k users, a HomMul'ed one and one of d < k users.
#[test]
fn reencryption_decrypts_for_k_users_and_n_proxies() {
    let ctx = toy(256);
    let t = 256;
    let mut r = rng(3);
    for k in [2usize, 4, 8] {
        let w = World::new(&ctx, k, &mut r);
        let crs = MkCrs::new(&ctx, &[5; 32], Decomposition::Rns).unwrap();
        let rlks: Vec<MkRelinKey> = w
            .sks
            .iter()
            .zip(&w.ids)
            .map(|(s, &id)| MkRelinKey::generate(s, id, &crs, &mut r).unwrap())
            .collect();
        let mut sum = w.cs[0].clone();
        let mut sum_m = w.ms[0].clone();
        for i in 1..k {
            sum = mk::add(&sum, &w.cs[i]).unwrap();
            sum_m = add_pt(&sum_m, &w.ms[i], t);
        }
        let relin = Relin::OnTheFly {
            keys: &rlks,
            grouped: true,
        };
        let prod = mk::mul(&sum, &w.cs[k - 1], &relin).unwrap();
        let prod_m = negacyclic(&sum_m, &w.ms[k - 1], t);
        // Only users 1 and k (d = 2 < k for k > 2).
        let few = mk::add(&w.cs[0], &w.cs[k - 1]).unwrap();
        let few_m = add_pt(&w.ms[0], &w.ms[k - 1], t);
        for n in [1usize, 2, 4, 8] {
            let delegatee = 100;
            let (mks, shares) = w.rekeys(delegatee, n, &mut r);
            for (ct, m) in [(&sum, &sum_m), (&prod, &prod_m), (&few, &few_m)] {
                let (rct, _) = reencrypt(ct, delegatee, &shares, &Smudging::PaperSigma20, &mut r);
                assert_eq!(rct.delegatee(), delegatee);
                let got = reenc::decrypt_reencrypted(&mks, &rct).unwrap();
                assert_eq!(&coeffs(&got), m, "k = {k}, N = {n}, {} users", ct.len() - 1);
            }
        }
    }
}

/// §8.13, §8.14, §8.23: c_0' + Σ c_i·r_i − (c_0 + Σ c_i·s_i) = Σ_j e_j exactly mod q, with the
/// std of √N·2^20 and every coefficient within N times the sampler's tail cut; only c_0 changes.
#[test]
fn exact_identity_smudging_width_and_only_c0_changes() {
    let ctx = toy(1024);
    let mut r = rng(4);
    let w = World::new(&ctx, 3, &mut r);
    let ct = mk::add(&mk::add(&w.cs[0], &w.cs[1]).unwrap(), &w.cs[2]).unwrap();
    let tail = DiscreteGaussian::new(mk::PAPER_SMUDGING_SIGMA)
        .unwrap()
        .max_abs();
    for n in [1usize, 4] {
        let (mks, shares) = w.rekeys(50, n, &mut r);
        let (rct, _) = reencrypt(&ct, 50, &shares, &Smudging::PaperSigma20, &mut r);
        // §8.14: the user components are bit-identical.
        assert_eq!(&rct.ciphertext().parts()[1..], &ct.parts()[1..]);
        assert_ne!(rct.ciphertext().parts()[0], ct.parts()[0]);
        let mut diff = reenc::reencrypted_phase(&mks, &rct).unwrap();
        diff -= &mk::phase(&ct, &w.keys()).unwrap();
        let e = diff.to_signed().unwrap();
        let max = e.iter().map(|x| x.unsigned_abs()).max().unwrap();
        assert!(max <= n as u64 * tail as u64, "N = {n}: |Σ e_j| = {max}");
        let var = e.iter().map(|&x| (x as f64).powi(2)).sum::<f64>() / e.len() as f64;
        let expect = (n as f64).sqrt() * mk::PAPER_SMUDGING_SIGMA;
        let ratio = var.sqrt() / expect;
        assert!((0.9..1.1).contains(&ratio), "N = {n}: std ratio {ratio}");
        // §8.23: with the smudging present the noise is at least 2^20 wide; the raw
        // ciphertext noise (the phase under the users' keys minus Δm) is tiny.
        let raw = mk::noise_log2(&ct, &w.keys()).unwrap();
        assert!(raw < 16.0, "raw noise 2^{raw}");
        assert!(var.sqrt() >= mk::PAPER_SMUDGING_SIGMA * 0.9);
    }
}

/// §8.15: two re-encryptions of one ciphertext differ (fresh smudging) and both decrypt.
#[test]
fn reencryption_is_freshly_smudged() {
    let ctx = toy(256);
    let mut r = rng(5);
    let w = World::new(&ctx, 2, &mut r);
    let ct = mk::add(&w.cs[0], &w.cs[1]).unwrap();
    let m = add_pt(&w.ms[0], &w.ms[1], 256);
    let (mks, shares) = w.rekeys(7, 2, &mut r);
    let (a, sa) = reencrypt(&ct, 7, &shares, &Smudging::PaperSigma20, &mut r);
    let (b, sb) = reencrypt(&ct, 7, &shares, &Smudging::PaperSigma20, &mut r);
    assert_ne!(a.ciphertext().parts()[0], b.ciphertext().parts()[0]);
    assert_ne!(sa[1], sb[1]);
    assert_eq!(coeffs(&reenc::decrypt_reencrypted(&mks, &a).unwrap()), m);
    assert_eq!(coeffs(&reenc::decrypt_reencrypted(&mks, &b).unwrap()), m);
}

/// §8.16 and the failure modes: the users' own keys do not decrypt rct; masking keys for another
/// delegatee are refused; a wrong masking key gives a wrong plaintext; missing or repeated proxy
/// shares, missing user shares, stale shares and shares of other delegatees are errors naming
/// the proxy or user.
#[test]
fn negative_cases() {
    let ctx = toy(256);
    let mut r = rng(6);
    let w = World::new(&ctx, 3, &mut r);
    let ct = mk::add(&mk::add(&w.cs[0], &w.cs[1]).unwrap(), &w.cs[2]).unwrap();
    let m = add_pt(&add_pt(&w.ms[0], &w.ms[1], 256), &w.ms[2], 256);
    let (mks, shares) = w.rekeys(10, 2, &mut r);
    let (rct, parts) = reencrypt(&ct, 10, &shares, &Smudging::PaperSigma20, &mut r);
    assert_eq!(coeffs(&reenc::decrypt_reencrypted(&mks, &rct).unwrap()), m);
    // The users' secret keys do not decrypt the re-encrypted ciphertext.
    let by_users = decrypt_multi_key(rct.ciphertext(), &w.keys()).unwrap();
    assert_ne!(coeffs(&by_users), m);
    // Masking keys of another delegatee: refused (they are labelled).
    let (mks_other, shares_other) = w.rekeys(11, 2, &mut r);
    match reenc::decrypt_reencrypted(&mks_other, &rct) {
        Err(Error::MissingKey(e)) => assert!(e.contains("user 1") && e.contains("10"), "{e}"),
        other => panic!("expected a missing masking key, got {other:?}"),
    }
    // A wrong masking key with the right labels: a wrong plaintext.
    let mut wrong = mks.clone();
    wrong[1] = MaskingKey::sample(&ctx, 2, 10, &mut r);
    assert_ne!(
        coeffs(&reenc::decrypt_reencrypted(&wrong, &rct).unwrap()),
        m
    );
    // Missing masking key of one user.
    match reenc::decrypt_reencrypted(&mks[..2], &rct) {
        Err(Error::MissingKey(e)) => assert!(e.contains("user 3"), "{e}"),
        other => panic!("expected a missing masking key, got {other:?}"),
    }
    // Missing proxy share, repeated proxy share.
    match reenc::reenc_combine(&ct, &parts[..1]) {
        Err(Error::Share(e)) => assert!(e.contains("proxy 1") && e.contains("missing"), "{e}"),
        other => panic!("expected a missing proxy share, got {other:?}"),
    }
    let dup = [parts[0].clone(), parts[0].clone()];
    match reenc::reenc_combine(&ct, &dup) {
        Err(Error::Share(e)) => assert!(e.contains("proxy"), "{e}"),
        other => panic!("expected an error, got {other:?}"),
    }
    assert!(reenc::reenc_combine(&ct, &[]).is_err());
    // A proxy share of another ciphertext.
    let ct2 = mk::add(&w.cs[0], &w.cs[1]).unwrap();
    let (_, parts2) = reencrypt(
        &ct2,
        10,
        &[shares[0][..2].to_vec(), shares[1][..2].to_vec()],
        &Smudging::PaperSigma20,
        &mut r,
    );
    match reenc::reenc_combine(&ct, &[parts[0].clone(), parts2[1].clone()]) {
        Err(Error::Share(e)) => assert!(e.contains("another ciphertext"), "{e}"),
        other => panic!("expected a stale share, got {other:?}"),
    }
    // Proxy shares for different delegatees.
    let (_, parts_other) = reencrypt(&ct, 11, &shares_other, &Smudging::PaperSigma20, &mut r);
    assert!(matches!(
        reenc::reenc_combine(&ct, &[parts[0].clone(), parts_other[1].clone()]),
        Err(Error::Share(_))
    ));
    // A proxy without the share of user 2 (or with the wrong proxy's shares).
    let without: Vec<ReKeyShare> = vec![shares[0][0].clone(), shares[0][2].clone()];
    match reenc::reenc_share(0, 10, &without, &ct, &Smudging::PaperSigma20, &mut r) {
        Err(Error::Share(e)) => assert!(e.contains("user 2") && e.contains("missing"), "{e}"),
        other => panic!("expected a missing user share, got {other:?}"),
    }
    assert!(matches!(
        reenc::reenc_share(1, 10, &shares[0], &ct, &Smudging::PaperSigma20, &mut r),
        Err(Error::Share(_))
    ));
    assert!(reenc::reenc_share(2, 10, &shares[0], &ct, &Smudging::PaperSigma20, &mut r).is_err());
    // Tensor ciphertexts are refused.
    let tensor = mk::mul_no_relin(&w.cs[0], &w.cs[1]).unwrap();
    assert!(matches!(
        reenc::reenc_share(0, 10, &shares[0], &tensor, &Smudging::PaperSigma20, &mut r),
        Err(Error::Unsupported(_))
    ));
}

/// Wire forms: round trips, and malformed bytes rejected without a panic; sizes on the paper's
/// parameters (a masking key and a share are one ring element, 225,280 bytes, §8.18).
#[test]
fn serialization_round_trips_and_rejects_malformed_bytes() {
    let ctx = toy(256);
    let other = toy(512);
    let mut r = rng(7);
    let w = World::new(&ctx, 2, &mut r);
    let ct = mk::add(&w.cs[0], &w.cs[1]).unwrap();
    let (mks, shares) = w.rekeys(u64::MAX, 3, &mut r);
    let (rct, parts) = reencrypt(&ct, u64::MAX, &shares, &Smudging::PaperSigma20, &mut r);
    let mb = mks[0].to_bytes();
    assert_eq!(MaskingKey::from_bytes(&ctx, &mb).unwrap(), mks[0]);
    let sb = shares[2][1].to_bytes();
    assert_eq!(ReKeyShare::from_bytes(&ctx, &sb).unwrap(), shares[2][1]);
    let pb = parts[1].to_bytes();
    assert_eq!(ReEncShare::from_bytes(&ctx, &pb).unwrap(), parts[1]);
    let rb = rct.to_bytes();
    let back = ReEncryptedCiphertext::from_bytes(&ctx, &rb).unwrap();
    assert_eq!(back, rct);
    assert_eq!(back.delegatee(), u64::MAX);
    let m = add_pt(&w.ms[0], &w.ms[1], 256);
    assert_eq!(coeffs(&reenc::decrypt_reencrypted(&mks, &back).unwrap()), m);
    malformed(&ctx, &other, &mb, |c, b| {
        MaskingKey::from_bytes(c, b).map(|_| ())
    });
    malformed(&ctx, &other, &sb, |c, b| {
        ReKeyShare::from_bytes(c, b).map(|_| ())
    });
    malformed(&ctx, &other, &pb, |c, b| {
        ReEncShare::from_bytes(c, b).map(|_| ())
    });
    malformed(&ctx, &other, &rb, |c, b| {
        ReEncryptedCiphertext::from_bytes(c, b).map(|_| ())
    });
    // A share claiming proxy index ≥ N is rejected (the index is a fixed-width field).
    // Layout: header, fingerprint (32), delegator (8), delegatee (8), proxy (4), proxies (4).
    let pos = coterie_base::envelope::HEADER_LEN + 32 + 8 + 8;
    assert_eq!(&sb[pos..pos + 8], &[2, 0, 0, 0, 3, 0, 0, 0]);
    let mut bad = sb.clone();
    bad[pos] = 9; // proxy 9 of 3
    assert!(ReKeyShare::from_bytes(&ctx, &bad).is_err());
    let mut bad = sb.clone();
    bad[pos + 4] = 0; // 0 proxies
    assert!(ReKeyShare::from_bytes(&ctx, &bad).is_err());
    // A plain ciphertext's bytes are not a re-encrypted ciphertext.
    assert!(ReEncryptedCiphertext::from_bytes(&ctx, &ct.to_bytes()).is_err());
}

/// The paper's parameters: a depth-5 circuit of 4 users, re-encrypted to a fifth user through
/// N = 2 proxies and through N = 1 proxy, decrypts with the masking keys; a masking key and a
/// re-encryption key share are one ring element on the wire.
#[test]
fn depth_5_circuit_of_4_users_reencrypted_on_seed001() {
    let ctx = Context::new(Params::seed001().unwrap()).unwrap();
    let t = 256;
    let mut r = rng(8);
    let w = World::new(&ctx, 4, &mut r);
    let crs = MkCrs::new(&ctx, &[9; 32], Decomposition::Rns).unwrap();
    let rlks: Vec<MkRelinKey> = w
        .sks
        .iter()
        .zip(&w.ids)
        .map(|(s, &id)| MkRelinKey::generate(s, id, &crs, &mut r).unwrap())
        .collect();
    let relin = Relin::OnTheFly {
        keys: &rlks,
        grouped: true,
    };
    // ((x1 + x2)·x3 · x4)² then ·(·)+x1 then ²: depth 5.
    let z1 = mk::mul(&mk::add(&w.cs[0], &w.cs[1]).unwrap(), &w.cs[2], &relin).unwrap();
    let z2 = mk::mul(&z1, &w.cs[3], &relin).unwrap();
    let z3 = mk::mul(&z2, &z2, &relin).unwrap();
    let z4 = mk::mul(&z3, &mk::add(&z3, &w.cs[0]).unwrap(), &relin).unwrap();
    let z5 = mk::mul(&z4, &z4, &relin).unwrap();
    let m1 = negacyclic(&add_pt(&w.ms[0], &w.ms[1], t), &w.ms[2], t);
    let m2 = negacyclic(&m1, &w.ms[3], t);
    let m3 = negacyclic(&m2, &m2, t);
    let m4 = negacyclic(&m3, &add_pt(&m3, &w.ms[0], t), t);
    let m5 = negacyclic(&m4, &m4, t);
    let budget = mk::noise_budget(&z5, &w.keys()).unwrap();
    eprintln!("seed001 depth 5, 4 users: noise budget {budget:.1} bits");
    assert_eq!(coeffs(&decrypt_multi_key(&z5, &w.keys()).unwrap()), m5);
    for n in [2usize, 1] {
        let (mks, shares) = w.rekeys(5, n, &mut r);
        let (rct, _) = reencrypt(&z5, 5, &shares, &Smudging::PaperSigma20, &mut r);
        let after = reenc::noise_budget(&mks, &rct).unwrap();
        eprintln!("  re-encrypted through N = {n}: noise budget {after:.1} bits");
        assert_eq!(
            coeffs(&reenc::decrypt_reencrypted(&mks, &rct).unwrap()),
            m5,
            "N = {n}"
        );
        assert!(after > 0.0);
        if n == 2 {
            let elem = 225_280;
            let mb = mks[0].to_bytes().len();
            let sb = shares[0][0].to_bytes().len();
            assert!(mb > elem && mb < elem + 128, "{mb}");
            assert!(sb > elem && sb < elem + 128, "{sb}");
        }
    }
}

/// Statistical smudging at the proxies: with a modulus large enough the re-encryption decrypts
/// and the smudging is as wide as asked (2^(noise + λ) per proxy); with λ too large for q every
/// proxy refuses.
#[test]
fn statistical_smudging_at_the_proxies() {
    let ctx = toy(256);
    let mut r = rng(10);
    let w = World::new(&ctx, 2, &mut r);
    let ct = mk::add(&w.cs[0], &w.cs[1]).unwrap();
    let noise_log2 = mk::noise_log2(&ct, &w.keys()).unwrap().ceil() as u32;
    let (mks, shares) = w.rekeys(4, 3, &mut r);
    let ok = Smudging::Statistical {
        lambda: 80,
        noise_log2,
    };
    let (rct, _) = reencrypt(&ct, 4, &shares, &ok, &mut r);
    let m = add_pt(&w.ms[0], &w.ms[1], 256);
    assert_eq!(coeffs(&reenc::decrypt_reencrypted(&mks, &rct).unwrap()), m);
    let mut diff = reenc::reencrypted_phase(&mks, &rct).unwrap();
    diff -= &mk::phase(&ct, &w.keys()).unwrap();
    let bits = diff.norm_inf().unwrap().significant_bits();
    let width = noise_log2 + 80;
    assert!(
        bits > width - 4 && bits <= width + 3,
        "{bits} bits of smudging, asked 2^{width}"
    );
    let too_big = Smudging::Statistical {
        lambda: 110,
        noise_log2,
    };
    match reenc::reenc_share(0, 4, &shares[0], &ct, &too_big, &mut r) {
        Err(Error::InvalidParameter(e)) => assert!(e.contains("needs log q"), "{e}"),
        other => panic!("expected a too-small modulus, got {other:?}"),
    }
}
