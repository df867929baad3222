//! The slots of generalized BFV (seed 002 §3.2–§3.3, §8 tests 4–7) through coterie-bfv: Pack and
//! Unpack around encryption, slot-wise sums and products up to depth 2, every rotation `φ^r`, and
//! diagonal plaintexts fixed by `φ`. The reference is plain arithmetic on `Z_p^D`.

use coterie_bfv::slots::slot_rotation_element;
use coterie_bfv::{Context, Error, Params, Plaintext, SecretKey};
use coterie_math::bigint::BigInt;
use coterie_math::prg::Csprng;
use rand::Rng;

fn random_slots(ctx: &Context, r: &mut Csprng) -> Vec<BigInt> {
    let enc = ctx.slot_encoder().unwrap();
    let bytes = enc.modulus().significant_bits() as usize / 8 + 8;
    (0..enc.slots())
        .map(|_| {
            let mut b = vec![0u8; bytes];
            r.fill_bytes(&mut b);
            coterie_math::bigint::from_le_bytes_bounded(&b, bytes).unwrap() % enc.modulus()
        })
        .collect()
}

fn slotwise(
    x: &[BigInt],
    y: &[BigInt],
    p: &BigInt,
    f: impl Fn(&BigInt, &BigInt) -> BigInt,
) -> Vec<BigInt> {
    x.iter().zip(y).map(|(a, b)| f(a, b) % p).collect()
}

/// Toy-B (N = 32, M = 4, D = 8, b = 132) and a 128-bit p (N = 1024, M = 8, D = 128): round
/// trips, add, plaintext product, product and depth 2, against `Z_p^D`.
#[test]
fn slot_arithmetic_matches_z_p() {
    for (n, b, m, seed) in [(32usize, 132u64, 4usize, 1u8), (1024, 65340, 8, 2)] {
        let ctx = Context::new(Params::insecure_toy_cyclotomic(n, b, m).unwrap()).unwrap();
        let p = ctx.slot_encoder().unwrap().modulus().clone();
        let mut r = Csprng::insecure_from_seed_for_tests([seed; 32]);
        let sk = SecretKey::generate(&ctx, &mut r);
        let pk = sk.public_key(&mut r);
        let rlk = sk.relin_key(&mut r);
        let (x, y) = (random_slots(&ctx, &mut r), random_slots(&ctx, &mut r));
        let (px, py) = (
            Plaintext::encode_slots(&ctx, &x).unwrap(),
            Plaintext::encode_slots(&ctx, &y).unwrap(),
        );
        assert_eq!(px.decode_slots().unwrap(), x, "Unpack(Pack(m)) = m");
        assert!(px.norm_inf() <= b / 2, "‖[Pack(m)]_R‖ ≤ b/2");
        let (cx, cy) = (
            pk.encrypt(&px, &mut r).unwrap(),
            pk.encrypt(&py, &mut r).unwrap(),
        );
        let dec = |c: &coterie_bfv::Ciphertext| sk.decrypt(c).unwrap().decode_slots().unwrap();
        assert_eq!(dec(&cx), x);
        assert_eq!(
            dec(&cx.add(&cy).unwrap()),
            slotwise(&x, &y, &p, |a, b| (a + b).into())
        );
        let xy = slotwise(&x, &y, &p, |a, b| (a * b).into());
        assert_eq!(dec(&cx.mul_plain(&py).unwrap()), xy, "PMul");
        let cxy = cx.mul(&cy, &rlk).unwrap();
        assert_eq!(dec(&cxy), xy, "Mul");
        // Seed 002 §8 test 6: depth 2, Dec(Mul(Mul(ct1, ct2), ct1)) = m1²·m2.
        assert_eq!(
            dec(&cxy.mul(&cx, &rlk).unwrap()),
            slotwise(&xy, &x, &p, |a, b| (a * b).into()),
            "depth 2"
        );
    }
}

/// Seed 002 §8 test 7: for every r in 1..D, Dec(Rot(ct, r)) is m rotated left by r, with
/// Galois element 5^{rM/2} mod 2N; a diagonal plaintext is fixed by φ.
#[test]
fn every_rotation_and_diagonal_fixed_points() {
    let ctx = Context::new(Params::insecure_toy_cyclotomic(32, 132, 4).unwrap()).unwrap();
    let d = 8usize;
    let mut r = Csprng::insecure_from_seed_for_tests([3; 32]);
    let sk = SecretKey::generate(&ctx, &mut r);
    let pk = sk.public_key(&mut r);
    let steps: Vec<i64> = (1..d as i64).collect();
    let keys = sk.slot_rotation_keys(&steps, &mut r).unwrap();
    assert_eq!(keys.elements().len(), d - 1);
    let x = random_slots(&ctx, &mut r);
    let ct = pk
        .encrypt(&Plaintext::encode_slots(&ctx, &x).unwrap(), &mut r)
        .unwrap();
    for step in 1..d {
        let g = slot_rotation_element(&ctx, step as i64).unwrap();
        assert_eq!(
            g as u64,
            coterie_math::modulus::pow_mod_u64(5, 2 * step as u64, 64)
        );
        let got = sk
            .decrypt(&ct.rotate_slots(step as i64, &keys).unwrap())
            .unwrap()
            .decode_slots()
            .unwrap();
        let mut want = x.clone();
        want.rotate_left(step);
        assert_eq!(got, want, "rotation by {step}");
        // Right rotations use the same keys.
        let back = ct.rotate_slots(-(step as i64), &keys).unwrap();
        let mut want = x.clone();
        want.rotate_right(step);
        assert_eq!(sk.decrypt(&back).unwrap().decode_slots().unwrap(), want);
    }
    assert_eq!(
        ct.rotate_slots(8, &keys).unwrap(),
        ct,
        "D rotations: identity"
    );
    // Diagonal: all slots equal is a polynomial in X^D, fixed by φ.
    let v = BigInt::from(123_456_789u32);
    let diag = Plaintext::encode_slots(&ctx, &vec![v.clone(); d]).unwrap();
    let lift = diag.small_lift().unwrap();
    assert!(
        lift.iter().enumerate().all(|(i, &c)| i % d == 0 || c == 0),
        "a diagonal plaintext lives on X^{{kD}}"
    );
    let cd = pk.encrypt(&diag, &mut r).unwrap();
    let rot = sk.decrypt(&cd.rotate_slots(1, &keys).unwrap()).unwrap();
    assert_eq!(rot.decode_slots().unwrap(), vec![v; d]);
    // A missing key is named.
    let few = sk.slot_rotation_keys(&[1], &mut r).unwrap();
    assert!(matches!(
        ct.rotate_slots(2, &few),
        Err(Error::MissingKey(_))
    ));
}

#[test]
fn slot_encoding_refuses_bad_input() {
    let ctx = Context::new(Params::insecure_toy_cyclotomic(32, 132, 4).unwrap()).unwrap();
    let p = ctx.slot_encoder().unwrap().modulus().clone();
    assert!(matches!(
        Plaintext::encode_slots(&ctx, &vec![BigInt::new(); 9]),
        Err(Error::Malformed(_))
    ));
    assert!(matches!(
        Plaintext::encode_slots(&ctx, std::slice::from_ref(&p)),
        Err(Error::Malformed(_))
    ));
    assert!(matches!(
        Plaintext::encode_slots(&ctx, &[BigInt::from(-1)]),
        Err(Error::Malformed(_))
    ));
    // Fewer values: the remaining slots are zero.
    let short = Plaintext::encode_slots(&ctx, &[BigInt::from(7)]).unwrap();
    let mut want = vec![BigInt::new(); 8];
    want[0] = BigInt::from(7);
    assert_eq!(short.decode_slots().unwrap(), want);
    // No slots: a scalar modulus.
    let scalar = Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap();
    assert!(matches!(
        Plaintext::encode_slots(&scalar, &[]),
        Err(Error::Unsupported(_))
    ));
    assert!(matches!(
        slot_rotation_element(&scalar, 1),
        Err(Error::Unsupported(_))
    ));
    let pt = Plaintext::encode_simd(&scalar, &[1]).unwrap();
    assert!(matches!(pt.decode_slots(), Err(Error::Unsupported(_))));
}
