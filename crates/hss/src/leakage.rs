//! Protection against leakage through failures (spec §4.6–§4.7).
//!
//! # Leakage-absorbing pads (paper Sec. 4.4.1, base `B = 2`)
//!
//! A pad is a secret random bit `b` held as `L2(b)`; values are carried masked, `L2(b ⊕ v)`, so
//! the payload of every conversion is a pseudorandom bit and a failure leaks (to a server that
//! sees it) information about the pad instead of the inputs — leakage `O(δ²)` instead of `O(δ)`.
//!
//! `MPair(E(x), L2(b), L2(y ⊕ b)) = Convert(Pair(E(x), L2(y ⊕ b)) · Pair(E(1 − x), L2(b)))`
//! `= <x·(y ⊕ b) + (1 − x)·b> = <x·y ⊕ b>`.
//! **Erratum** (spec §10): the paper's text pairs `E(x)` with `L2(b)` and `E(1 − x)` with
//! `L2(y ⊕ b)`, which yields `(¬x)·y ⊕ b`; the operand order above is the one its own stated
//! result `{x(y ⊕ b)} · {(1 − x)b}` needs (tested on the full truth table).
//!
//! `MMult` step 3 produces shares of **twice** `c_i·(b ⊕ xy)` (spec §10, "halved shares"): with
//! `2·c·(b ⊕ w) = 2(b ⊕ c·w) + c − b − (b ⊕ c)` for bits. We recombine first and halve once with
//! `⌊·/2⌋` on each integer share, which is exact because both shares of an even value have the
//! same parity (multiplying by `2^−1 mod q` would destroy the shortness of the shares).
//!
//! Pads come from the two-party protocol [`crate::protocol::pads`] (two OTs per pad, this
//! crate's construction — the paper only states that two OTs suffice), or, for tests, from a
//! trusted dealer ([`insecure_pad_trusted_dealer`]).
//!
//! # Sharing the key against leakage (paper Sec. 4.4.2)
//!
//! [`insecure_keygen_leakage_resilient`]: the information-theoretic option. The key becomes
//! `ℓ = ⌈log q⌉ + k + 2⌈log(1/ε)⌉` random bits `c'_i` with public weights `v_i ∈ Z_q`,
//! `c ≡ Σ v_i c'_i (mod q)`; ciphertexts encrypt `(x, (x·c'_i)_i)` and after conversion
//! `<y·c> = Σ_i v_i <y·c'_i>` (the [`KeyLayout::Weights`] path of the evaluator). By the leftover
//! hash lemma any `k` bits of leakage on the `c'_i` leave `c` `ε`-close to uniform. (The
//! computational option of the paper is simply a longer key, `Params::key_bits = ℓ + k`.)

use coterie_math::bigint::{self, BigInt};
use rand::Rng;

use crate::group::{Elem, Group};
use crate::scheme::{
    Ciphertext, Encryptor, EvalKey, Evaluator, KeyLayout, L2Share, Params, PreparedCt,
    PreparedInput, PublicKey, SecretKey, ct_div, sample_key_shares, share_l2_secret_key,
};
use crate::{Error, Result};

/// `E(1 − u) = (1, g)/E(u)`.
fn one_minus(group: &Group, u: &Ciphertext) -> Result<Ciphertext> {
    let one = Ciphertext {
        a: group.one(),
        c: group.g(),
    };
    ct_div(group, &one, u)
}

/// A ciphertext prepared for `MPair`: tables for `E(u)` and `E(1 − u)`.
#[derive(Debug, Clone)]
pub struct MaskedCt {
    u: PreparedCt,
    one_minus_u: PreparedCt,
}

impl MaskedCt {
    /// Prepares `E(u)` and `E(1 − u)`.
    pub fn new(pk: &PublicKey, ct: &Ciphertext) -> Result<Self> {
        let group = Group::new(pk.params.group);
        Ok(Self {
            u: PreparedCt::new(&group, pk, ct)?,
            one_minus_u: PreparedCt::new(&group, pk, &one_minus(&group, ct)?)?,
        })
    }
}

/// A level-1 input prepared for the pads: `E(x)`, `E(x·c_i)` with their `1 − ·` complements.
#[derive(Debug, Clone)]
pub struct MaskedInput {
    /// `E(x)`.
    pub x: MaskedCt,
    /// `E(x·c_i)`.
    pub digits: Vec<MaskedCt>,
}

impl MaskedInput {
    /// Prepares an input.
    pub fn new(pk: &PublicKey, input: &crate::scheme::L1Input) -> Result<Self> {
        if pk.params.log_base != 1 {
            return Err(Error::InvalidParameter("pads need base B = 2".into()));
        }
        Ok(Self {
            x: MaskedCt::new(pk, &input.x)?,
            digits: input
                .digits
                .iter()
                .map(|c| MaskedCt::new(pk, c))
                .collect::<Result<_>>()?,
        })
    }
}

/// One server's pad: `L2(b)` and the precomputed `<b ⊕ c_i>`.
#[derive(Debug, Clone)]
pub struct Pad {
    /// `L2(b)`.
    pub b: L2Share,
    /// `<b ⊕ c_i>` (after [`precompute_pad`]).
    pub b_xor_c: Vec<BigInt>,
}

/// **Insecure trusted dealer** pads: `L2(b)` for a random bit `b` (the dealer knows `b` and the
/// key). Returns the two servers' pads and `b`.
pub fn insecure_pad_trusted_dealer<R: Rng + ?Sized>(
    params: &Params,
    sk: &SecretKey,
    rng: &mut R,
) -> (Pad, Pad, bool) {
    let b = rng.next_u32() & 1 == 1;
    let (s0, s1) = share_l2_secret_key(params, sk, i64::from(b), rng);
    (
        Pad {
            b: s0,
            b_xor_c: vec![],
        },
        Pad {
            b: s1,
            b_xor_c: vec![],
        },
        b,
    )
}

/// `MPair(E(u), L2(b), L2(y ⊕ b)) → <u·y ⊕ b>` (operand order corrected, see module docs).
pub fn mpair(
    ev: &mut Evaluator<'_>,
    u: &MaskedCt,
    b: &L2Share,
    y_xor_b: &L2Share,
) -> Result<BigInt> {
    let g = ev.group().clone();
    let h1 = ev.pair(&u.u, y_xor_b)?;
    let h2 = ev.pair(&u.one_minus_u, b)?;
    let h = g.mul(&h1, &h2);
    Ok(BigInt::from(ev.convert_level3(&h, 1)?))
}

/// Computes `<b ⊕ c_i> = MPair(E(c_i), L2(b), L2(1 ⊕ b))` once per pad.
pub fn precompute_pad(
    ev: &mut Evaluator<'_>,
    key_digits: &[MaskedCt],
    pad: &mut Pad,
) -> Result<()> {
    let one_xor_b = ev.one().sub(&pad.b);
    pad.b_xor_c = key_digits
        .iter()
        .map(|kd| mpair(ev, kd, &pad.b, &one_xor_b))
        .collect::<Result<_>>()?;
    Ok(())
}

/// The key digits `E(c_i)` of `pk` prepared for `MPair`.
pub fn prepare_key_digits(pk: &PublicKey) -> Result<Vec<MaskedCt>> {
    pk.key_digits.iter().map(|c| MaskedCt::new(pk, c)).collect()
}

/// `MMult_pk(L1(x), L2(b), L2(y ⊕ b)) → L2(x·y ⊕ b)` (spec §4.6 steps 1–5, with the halving).
pub fn mmult(
    ev: &mut Evaluator<'_>,
    x: &MaskedInput,
    pad: &Pad,
    y_xor_b: &L2Share,
) -> Result<L2Share> {
    mmult_with(ev, x.digits.len(), pad, |ev, i| match i {
        None => mpair(ev, &x.x, &pad.b, y_xor_b),
        Some(i) => mpair(ev, &x.digits[i], &pad.b, y_xor_b),
    })
}

/// `MMult` given its `MPair`s: `mp(ev, None)` is `<b ⊕ x·y>`, `mp(ev, Some(i))` is
/// `<b ⊕ c_i·x·y>`.
fn mmult_with(
    ev: &mut Evaluator<'_>,
    digits: usize,
    pad: &Pad,
    mut mp: impl FnMut(&mut Evaluator<'_>, Option<usize>) -> Result<BigInt>,
) -> Result<L2Share> {
    let ek = ev.eval_key().clone();
    if pad.b_xor_c.len() != digits || ek.digit_shares.len() != digits {
        return Err(Error::InvalidParameter(
            "pad not precomputed for this key".into(),
        ));
    }
    let bxy = mp(ev, None)?;
    let mut twice = BigInt::new();
    for i in 0..digits {
        let bcxy = mp(ev, Some(i))?;
        // 2<c_i (b ⊕ xy)> = 2<b ⊕ c_i x y> + <c_i> − (<b> + <b ⊕ c_i>)
        let two_ci = BigInt::from(2 * &bcxy) + &ek.digit_shares[i] - &pad.b.y - &pad.b_xor_c[i];
        twice += two_ci << i as u32;
    }
    let cap = BigInt::from(1) << (ev.params().conv_bits() - 1);
    let s = digits as u32;
    let bound_c = (BigInt::from(1) << (s + 1)) * (BigInt::from(&cap * 3u32) + &pad.b.y_bound)
        + (BigInt::from(1) << (s + ev.params().log_base + ev.params().stat_bits + 2));
    Ok(L2Share {
        y: bxy,
        yc: BigInt::from(&twice >> 1u32),
        y_bound: cap,
        yc_bound: bound_c,
    })
}

/// `g^(<b>_σ)` for this server's share of the pad bit: the one value [`mpair_one_table`] needs
/// besides `E(u)`'s tables (once per pad).
pub fn pad_base(ev: &Evaluator<'_>, pad: &Pad) -> Elem {
    ev.group().g_pow(&pad.b.y)
}

/// `MPair` with one pairing on `E(u)`'s tables only (no tables for `E(1 − u)`): the pairing is
/// multiplicative in the ciphertext and linear in the level-2 share, and `E(1 − u) = (1, g)/E(u)`
/// with `Pair((1, g), L2(b)) = g^(<b>)`, so
/// `Pair(E(u), L2(y ⊕ b))·Pair(E(1 − u), L2(b)) = g^(<b>)·Pair(E(u), L2(y ⊕ b) − L2(b))`.
/// Half the pairings and half the tables of [`mpair`], the same shares' difference
/// (`<u·y ⊕ b>`); `gb` is [`pad_base`].
pub fn mpair_one_table(
    ev: &mut Evaluator<'_>,
    u: &PreparedCt,
    gb: &Elem,
    b: &L2Share,
    y_xor_b: &L2Share,
) -> Result<BigInt> {
    let h = ev.pair(u, &y_xor_b.sub(b))?;
    let h = ev.group().mul(&h, gb);
    Ok(BigInt::from(ev.convert_level3(&h, 1)?))
}

/// [`precompute_pad`] with [`mpair_one_table`] (`key_digits`: the public key's `E(c_i)`
/// prepared once, [`prepare_key_digit_tables`]).
pub fn precompute_pad_one_table(
    ev: &mut Evaluator<'_>,
    key_digits: &[PreparedCt],
    gb: &Elem,
    pad: &mut Pad,
) -> Result<()> {
    let one_xor_b = ev.one().sub(&pad.b);
    pad.b_xor_c = key_digits
        .iter()
        .map(|kd| mpair_one_table(ev, kd, gb, &pad.b, &one_xor_b))
        .collect::<Result<_>>()?;
    Ok(())
}

/// The key digits `E(c_i)` of `pk` prepared for [`mpair_one_table`].
pub fn prepare_key_digit_tables(pk: &PublicKey) -> Result<Vec<PreparedCt>> {
    let group = Group::new(pk.params.group);
    pk.key_digits
        .iter()
        .map(|c| PreparedCt::new(&group, pk, c))
        .collect()
}

/// [`mmult`] with [`mpair_one_table`]: `x` needs no complemented tables.
pub fn mmult_one_table(
    ev: &mut Evaluator<'_>,
    x: &PreparedInput,
    pad: &Pad,
    gb: &Elem,
    y_xor_b: &L2Share,
) -> Result<L2Share> {
    mmult_with(ev, x.digits.len(), pad, |ev, i| match i {
        None => mpair_one_table(ev, &x.x, gb, &pad.b, y_xor_b),
        Some(i) => mpair_one_table(ev, &x.digits[i], gb, &pad.b, y_xor_b),
    })
}

/// Output of a masked value: `<b ⊕ P> + <b>` reduced mod 2 with the output mask
/// (reconstruct with `O_0 − O_1 mod 2`).
pub fn output_unmasked(ev: &mut Evaluator<'_>, masked: &L2Share, pad: &Pad) -> Result<BigInt> {
    ev.output_value(&BigInt::from(&masked.y + &pad.b.y), &BigInt::from(2))
}

/// **Insecure trusted dealer** key generation with the information-theoretic key sharing
/// against leakage: `ℓ = ⌈log q⌉ + k + 2·eps_log2` random key bits `c'_i`, weights `v_i ← Z_q`,
/// `c = Σ v_i c'_i mod q` (see the module docs). Returns the key in the standard types with
/// [`KeyLayout::Weights`].
///
/// # Example
///
/// ```
/// use coterie_hss::group::Group;
/// use coterie_hss::leakage::insecure_keygen_leakage_resilient;
/// use coterie_hss::scheme::Params;
/// use rand::SeedableRng;
/// let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(12); // insecure fixed seed
/// let params = Params::insecure_toy(1, 12, 10);
/// let (pk, _, _, sk) = insecure_keygen_leakage_resilient(&params, 8, 8, &mut rng).unwrap();
/// // ⌈log q⌉ + k + 2·eps key bits on the 128-bit toy group (q has 127 bits).
/// assert_eq!(pk.key_digits.len(), 127 + 8 + 16);
/// assert_eq!(pk.h, Group::new(params.group).g_pow(&sk.c));
/// ```
pub fn insecure_keygen_leakage_resilient<R: Rng + ?Sized>(
    params: &Params,
    k_leak: u32,
    eps_log2: u32,
    rng: &mut R,
) -> Result<(PublicKey, EvalKey, EvalKey, SecretKey)> {
    if params.log_base != 1 {
        return Err(Error::InvalidParameter(
            "key sharing uses bits (B = 2)".into(),
        ));
    }
    let group = Group::new(params.group);
    let l = group.q().significant_bits() + k_leak + 2 * eps_log2;
    if l > 1 << 13 {
        return Err(Error::InvalidParameter(
            "leakage parameters too large".into(),
        ));
    }
    let weights: Vec<BigInt> = (0..l).map(|_| group.random_exponent(rng)).collect();
    let digits: Vec<u64> = (0..l).map(|_| rng.next_u64() & 1).collect();
    let c_int: BigInt = weights
        .iter()
        .zip(&digits)
        .filter(|(_, d)| **d == 1)
        .map(|(w, _)| w.clone())
        .sum();
    let c =
        bigint::reduce(&c_int, group.q()).map_err(|e| Error::InvalidParameter(e.to_string()))?;
    let h = group.g_pow(&c);
    let enc = Encryptor::new_raw(&group, &h)?;
    let key_digits = digits
        .iter()
        .map(|&d| enc.encrypt_value(&BigInt::from(d), rng))
        .collect();
    let (ek0, ek1) = sample_key_shares(params, &digits, &c_int, rng);
    let pk = PublicKey {
        params: *params,
        h,
        key_digits,
        layout: KeyLayout::Weights(weights),
    };
    Ok((pk, ek0, ek1, SecretKey { c: c_int, digits }))
}

/// Prepared input for the leakage-resilient key (a [`PreparedInput`] of the weighted key).
pub fn prepare_weighted(pk: &PublicKey, input: &crate::scheme::L1Input) -> Result<PreparedInput> {
    PreparedInput::new(pk, input, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheme::insecure_keygen_trusted_dealer;
    use rand::SeedableRng;

    #[test]
    fn masked_xor_identity() {
        for b in 0..2i64 {
            for u in 0..2i64 {
                for w in 0..2i64 {
                    assert_eq!(b + (b ^ u) + (b ^ w) - 2 * (b ^ (u * w)), b ^ u ^ w);
                }
            }
        }
        // the step-3 identity: 2c(b ⊕ w) = 2(b ⊕ cw) + c − b − (b ⊕ c)
        for b in 0..2i64 {
            for c in 0..2i64 {
                for w in 0..2i64 {
                    assert_eq!(2 * c * (b ^ w), 2 * (b ^ (c * w)) + c - b - (b ^ c));
                }
            }
        }
    }

    #[test]
    fn mpair_and_mmult_truth_tables() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(50);
        let params = Params::insecure_toy(1, 12, 10);
        let (pk, ek0, ek1, sk) = insecure_keygen_trusted_dealer(&params, &mut rng).unwrap();
        let enc = pk.encryptor().unwrap();
        let kd = prepare_key_digits(&pk).unwrap();
        let kt = prepare_key_digit_tables(&pk).unwrap();
        for x in 0..2i64 {
            let l1 = enc.encrypt(&pk, &BigInt::from(x), &mut rng);
            let mx = MaskedInput::new(&pk, &l1).unwrap();
            for y in 0..2i64 {
                for _ in 0..2 {
                    let (mut p0, mut p1, b) = insecure_pad_trusted_dealer(&params, &sk, &mut rng);
                    let b = i64::from(b);
                    let mut e0 = Evaluator::new(&pk, &ek0, 3).unwrap();
                    let mut e1 = Evaluator::new(&pk, &ek1, 3).unwrap();
                    precompute_pad(&mut e0, &kd, &mut p0).unwrap();
                    precompute_pad(&mut e1, &kd, &mut p1).unwrap();
                    // L2(y ⊕ b) from the dealer
                    let (yb0, yb1) = share_l2_secret_key(&params, &sk, y ^ b, &mut rng);
                    let m0 = mpair(&mut e0, &mx.x, &p0.b, &yb0).unwrap();
                    let m1 = mpair(&mut e1, &mx.x, &p1.b, &yb1).unwrap();
                    let r0 = mmult(&mut e0, &mx, &p0, &yb0).unwrap();
                    let r1 = mmult(&mut e1, &mx, &p1, &yb1).unwrap();
                    // The one-table variants on plain tables.
                    let px = PreparedInput::new(&pk, &l1, false).unwrap();
                    let (g0, g1) = (pad_base(&e0, &p0), pad_base(&e1, &p1));
                    let (mut q0, mut q1) = (p0.clone(), p1.clone());
                    precompute_pad_one_table(&mut e0, &kt, &g0, &mut q0).unwrap();
                    precompute_pad_one_table(&mut e1, &kt, &g1, &mut q1).unwrap();
                    let f0 = mpair_one_table(&mut e0, &px.x, &g0, &q0.b, &yb0).unwrap();
                    let f1 = mpair_one_table(&mut e1, &px.x, &g1, &q1.b, &yb1).unwrap();
                    let s0 = mmult_one_table(&mut e0, &px, &q0, &g0, &yb0).unwrap();
                    let s1 = mmult_one_table(&mut e1, &px, &q1, &g1, &yb1).unwrap();
                    if e0.flagged() && e1.flagged() {
                        continue;
                    }
                    let want = (x * y) ^ b;
                    assert_eq!(BigInt::from(&m0 - &m1), want, "MPair x={x} y={y} b={b}");
                    assert_eq!(BigInt::from(&r0.y - &r1.y), want);
                    assert_eq!(BigInt::from(&r0.yc - &r1.yc), BigInt::from(&sk.c * want));
                    assert_eq!(BigInt::from(&f0 - &f1), want, "one-table MPair");
                    assert_eq!(BigInt::from(&s0.y - &s1.y), want, "one-table MMult");
                    assert_eq!(BigInt::from(&s0.yc - &s1.yc), BigInt::from(&sk.c * want));
                    // unmasked output mod 2
                    let o0 = output_unmasked(&mut e0, &r0, &p0).unwrap();
                    let o1 = output_unmasked(&mut e1, &r1, &p1).unwrap();
                    let got = crate::scheme::reconstruct(&o0, &o1, &BigInt::from(2)).unwrap();
                    assert_eq!(got, x * y);
                }
            }
        }
    }

    #[test]
    fn leakage_resilient_key_multiplies() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(51);
        let params = Params::insecure_toy(1, 12, 10);
        let (pk, ek0, ek1, sk) =
            insecure_keygen_leakage_resilient(&params, 8, 8, &mut rng).unwrap();
        let g = Group::new(params.group);
        assert_eq!(pk.key_digits.len(), 127 + 8 + 16);
        assert_eq!(pk.h, g.g_pow(&sk.c));
        let enc = pk.encryptor().unwrap();
        for x in 0..2i64 {
            let inp = prepare_weighted(&pk, &enc.encrypt(&pk, &BigInt::from(x), &mut rng)).unwrap();
            let mut e0 = Evaluator::new(&pk, &ek0, 1).unwrap();
            let mut e1 = Evaluator::new(&pk, &ek1, 1).unwrap();
            let l0 = e0.load(&inp).unwrap();
            let l1 = e1.load(&inp).unwrap();
            let m0 = e0.mult(&inp, &l0).unwrap();
            let m1 = e1.mult(&inp, &l1).unwrap();
            if e0.flagged() && e1.flagged() {
                continue;
            }
            assert_eq!(BigInt::from(&m0.y - &m1.y), x);
            // <yc> reconstructs y·c over the integers for the integer key representative
            assert_eq!(BigInt::from(&m0.yc - &m1.yc), BigInt::from(&sk.c * x));
        }
    }
}
