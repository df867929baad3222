//! Collective keys of n = 3 parties (public, relinearization with both gadgets, Galois) encrypt,
//! decrypt, multiply and rotate correctly under the ideal key s = Σ s_i, with the noise measured
//! by the noise meter and checked against the single-key bounds plus the collective keys' extra
//! key-switching error.

use coterie_bfv::multiparty::{
    GaloisKeyGen, GaloisKeyShare, PublicKeyGen, PublicKeyShare, RelinKeyGen, RelinKeyShare,
};
use coterie_bfv::noise::{NoiseBounds, invariant_noise_log2, noise_budget};
use coterie_bfv::{Context, Decomposition, GaloisKeys, Params, Plaintext, RelinKey, SecretKey};
use coterie_math::prg::Csprng;

const PARTIES: usize = 3;

fn ideal_key(ctx: &Context, sks: &[SecretKey]) -> SecretKey {
    let n = ctx.degree();
    let sum: Vec<i64> = (0..n)
        .map(|j| sks.iter().map(|s| s.coefficients()[j]).sum())
        .collect();
    SecretKey::from_coefficients(ctx, sum).unwrap()
}

fn collective_rlk(
    ctx: &Context,
    sks: &[SecretKey],
    dec: Decomposition,
    crs: &[u8; 32],
    r: &mut Csprng,
) -> RelinKey {
    let rkg = RelinKeyGen::new(ctx, dec).unwrap();
    let crp = rkg.gen_crp(crs).unwrap();
    let (eph, r1): (Vec<_>, Vec<_>) = sks
        .iter()
        .map(|sk| rkg.gen_share_round_one(sk, &crp, r).unwrap())
        .unzip();
    // Shares travel as bytes of a known size.
    let len = RelinKeyShare::encoded_len(ctx, dec).unwrap();
    let r1: Vec<RelinKeyShare> = r1
        .iter()
        .map(|s| {
            let b = s.to_bytes();
            assert_eq!(b.len(), len);
            RelinKeyShare::from_bytes(ctx, dec, &b).unwrap()
        })
        .collect();
    let agg1 = rkg.aggregate(&r1).unwrap();
    let r2: Vec<RelinKeyShare> = sks
        .iter()
        .zip(&eph)
        .map(|(sk, u)| rkg.gen_share_round_two(u, sk, &agg1, r).unwrap())
        .collect();
    assert_eq!(r2[0].to_bytes().len(), len);
    // Round-2 shares are not accepted as round-1 aggregates and vice versa.
    assert!(rkg.finalize(&agg1, &agg1).is_err());
    let agg2 = rkg.aggregate(&r2).unwrap();
    let rlk = rkg.finalize(&agg2, &agg1).unwrap();
    // The collective key (stored a_i) round-trips.
    RelinKey::from_bytes(ctx, &rlk.to_bytes()).unwrap()
}

#[test]
fn three_parties_collective_keys_work_under_the_sum_of_the_secrets() {
    let ctx = Context::new(Params::insecure_toy(1024, 65537).unwrap()).unwrap();
    let mut r = Csprng::insecure_from_seed_for_tests([21; 32]);
    let crs = [5u8; 32];
    let sks: Vec<SecretKey> = (0..PARTIES)
        .map(|_| SecretKey::generate(&ctx, &mut r))
        .collect();
    let sk = ideal_key(&ctx, &sks);

    // Public key.
    let ckg = PublicKeyGen::new(&ctx);
    let crp = ckg.gen_crp(&crs).unwrap();
    let shares: Vec<PublicKeyShare> = sks
        .iter()
        .map(|s| {
            let b = ckg.gen_share(s, &crp, &mut r).unwrap().to_bytes();
            assert_eq!(b.len(), PublicKeyShare::encoded_len(&ctx));
            PublicKeyShare::from_bytes(&ctx, &b).unwrap()
        })
        .collect();
    let pk = ckg
        .finalize(&ckg.aggregate(&shares).unwrap(), &crp)
        .unwrap();
    let pk = coterie_bfv::PublicKey::from_bytes(&ctx, &pk.to_bytes()).unwrap();

    // Relinearization keys (RNS and power-of-two gadgets).
    let rlk = collective_rlk(&ctx, &sks, Decomposition::Rns, &crs, &mut r);
    let rlk2 = collective_rlk(
        &ctx,
        &sks,
        Decomposition::PowerOfTwo { base_log: 24 },
        &crs,
        &mut r,
    );

    // Galois key for a rotation by one.
    let g = coterie_bfv::keys::galois_element_for_rotation(ctx.degree(), 1);
    let dec = Decomposition::Rns;
    let gkg = GaloisKeyGen::new(&ctx, dec).unwrap();
    let gcrp = gkg.gen_crp(&crs, g).unwrap();
    let gshares: Vec<GaloisKeyShare> = sks
        .iter()
        .map(|s| {
            let b = gkg.gen_share(s, g, &gcrp, &mut r).unwrap().to_bytes();
            assert_eq!(b.len(), GaloisKeyShare::encoded_len(&ctx, dec).unwrap());
            GaloisKeyShare::from_bytes(&ctx, dec, &b).unwrap()
        })
        .collect();
    let gk = gkg
        .finalize(&gkg.aggregate(&gshares).unwrap(), &gcrp)
        .unwrap();
    let gk = coterie_bfv::GaloisKey::from_bytes(&ctx, &gk.to_bytes()).unwrap();
    let mut gks = GaloisKeys::default();
    gks.insert(gk);

    // Encrypt / decrypt.
    let n = ctx.degree();
    let t = 65537u64;
    let x: Vec<u64> = (0..n as u64).map(|i| (i * 31 + 7) % t).collect();
    let y: Vec<u64> = (0..n as u64).map(|i| (i * i + 3) % t).collect();
    let cx = pk
        .encrypt(&Plaintext::encode_simd(&ctx, &x).unwrap(), &mut r)
        .unwrap();
    let cy = pk
        .encrypt(&Plaintext::encode_simd(&ctx, &y).unwrap(), &mut r)
        .unwrap();
    assert_eq!(sk.decrypt(&cx).unwrap().decode_simd().unwrap(), x);

    let nb = NoiseBounds::new(&sk).unwrap();
    let fresh = invariant_noise_log2(&sk, &cx).unwrap();
    // The collective public key's error is the sum of 3 errors: at most log2(3) bits above the
    // single-key bound.
    assert!(fresh <= nb.fresh_public() + 3f64.log2(), "fresh {fresh}");

    // Collective relinearization keys carry the extra error s·e + u·e' (‖s‖, ‖u‖ ≤ 3, N terms):
    // allow log2(2·N·PARTIES) more bits on the key-switching term.
    let slack = (2.0 * n as f64 * PARTIES as f64).log2();
    let want: Vec<u64> = x.iter().zip(&y).map(|(a, b)| a * b % t).collect();
    for (k, dec) in [
        (&rlk, Decomposition::Rns),
        (&rlk2, Decomposition::PowerOfTwo { base_log: 24 }),
    ] {
        let prod = cx.mul(&cy, k).unwrap();
        assert_eq!(sk.decrypt(&prod).unwrap().decode_simd().unwrap(), want);
        let v = invariant_noise_log2(&sk, &prod).unwrap();
        let bound = nb.mul_with(fresh, fresh, ctx.max_level(), dec).unwrap() + slack;
        assert!(v <= bound, "mul noise {v} above {bound}");
        assert!(noise_budget(&sk, &prod).unwrap() > 5.0);
    }

    // Rotation.
    let rot = cx.rotate_rows(1, &gks).unwrap();
    let got = sk.decrypt(&rot).unwrap().decode_simd().unwrap();
    let half = n / 2;
    for c in 0..half {
        assert_eq!(got[c], x[(c + 1) % half]);
        assert_eq!(got[half + c], x[half + (c + 1) % half]);
    }
    let v = invariant_noise_log2(&sk, &rot).unwrap();
    assert!(
        v <= nb.rotate(fresh, ctx.max_level()).unwrap() + 3f64.log2() + 1.0,
        "rot {v}"
    );
}

#[test]
fn shares_reject_malformed_bytes_and_mismatched_inputs() {
    let ctx = Context::new(Params::insecure_toy(256, 257).unwrap()).unwrap();
    let other = Context::new(Params::insecure_toy(512, 257).unwrap()).unwrap();
    let mut r = Csprng::insecure_from_seed_for_tests([22; 32]);
    let sk = SecretKey::generate(&ctx, &mut r);
    let sk_o = SecretKey::generate(&other, &mut r);
    let ckg = PublicKeyGen::new(&ctx);
    let crp = ckg.gen_crp(&[1; 32]).unwrap();
    assert!(ckg.gen_share(&sk_o, &crp, &mut r).is_err());
    assert!(ckg.aggregate(&[]).is_err());
    let share = ckg.gen_share(&sk, &crp, &mut r).unwrap();
    let bytes = share.to_bytes();
    for cut in [0, 5, 14, bytes.len() - 1] {
        assert!(PublicKeyShare::from_bytes(&ctx, &bytes[..cut]).is_err());
    }
    assert!(PublicKeyShare::from_bytes(&other, &bytes).is_err());
    assert!(RelinKeyShare::from_bytes(&ctx, Decomposition::Rns, &bytes).is_err());
    let mut bad = bytes.clone();
    let len = bad.len();
    bad[len - 8..].fill(0xff); // the last packed residue 2^bits(q) − 1: unreduced
    assert!(PublicKeyShare::from_bytes(&ctx, &bad).is_err());
    // Different protocols (and Galois elements) draw different common random polynomials.
    let gkg = GaloisKeyGen::new(&ctx, Decomposition::Rns).unwrap();
    let a3 = gkg.gen_crp(&[1; 32], 3).unwrap();
    let a5 = gkg.gen_crp(&[1; 32], 5).unwrap();
    let s3 = gkg.gen_share(&sk, 3, &a3, &mut r).unwrap();
    let s5 = gkg.gen_share(&sk, 5, &a5, &mut r).unwrap();
    assert!(gkg.aggregate(&[s3.clone(), s5]).is_err());
    assert!(gkg.gen_crp(&[1; 32], 4).is_err());
    assert_eq!(
        GaloisKeyShare::from_bytes(&ctx, Decomposition::Rns, &s3.to_bytes()).unwrap(),
        s3
    );
    // A share of another gadget is refused.
    let dec2 = Decomposition::PowerOfTwo { base_log: 20 };
    assert!(GaloisKeyShare::from_bytes(&ctx, dec2, &s3.to_bytes()).is_err());
    let rkg = RelinKeyGen::new(&ctx, dec2).unwrap();
    let (_, r1) = rkg
        .gen_share_round_one(&sk, &rkg.gen_crp(&[1; 32]).unwrap(), &mut r)
        .unwrap();
    assert!(RelinKeyShare::from_bytes(&ctx, Decomposition::Rns, &r1.to_bytes()).is_err());
    assert_eq!(
        RelinKeyShare::from_bytes(&ctx, dec2, &r1.to_bytes()).unwrap(),
        r1
    );
}
