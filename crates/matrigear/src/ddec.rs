//! Π_DDec (seed 002 §5.4, Fig. 6): distributed decryption of a ciphertext into additive shares of
//! its `D` slots, with smudging.
//!
//! Party `l` holding `s^(l)` samples a mask `x^(l) ← U(Z_p^D)` and smudging noise `e^(l)`, and
//! sends `d^(l) = c_1·s^(l) + e^(l) + Δ·[Pack(x^(l))]_R`. From `c_0 + Σ_l d^(l)`, which is an
//! encryption of `m + Σ_l x^(l)` under the key `(1, 0)`, one party (the *opener*) rounds
//! `μ = round(((X^D − b)/q)·(c_0 + Σ d)) mod (X^D − b)` and keeps `Unpack(μ) − x^(opener)`;
//! every other party keeps `−x^(l)`.
//!
//! Three choices (seed 002 §9 and this implementation):
//! * **Smudging scale** (§9.13): the paper's `U(R_{B_Dec·2^λ_DDec})` mixes an invariant-noise
//!   bound with a polynomial at scale `q`. We take coefficients uniform in `[−E, E)` with `E` the
//!   largest power of two not above `B_Dec·2^λ_DDec·q/(n(b+1)N)`
//!   ([`crate::ProtocolParams::smudging_bound`]), so the smudging of all parties adds at most
//!   `B_Dec·2^λ_DDec < 1/2` of invariant noise and still hides a ciphertext noise of invariant
//!   norm `B_Dec` with statistical distance about `2^-λ_DDec` (up to the power-of-two rounding:
//!   at most one bit).
//! * **Who receives `d^(l)`**: Fig. 6 sends it to everyone, but only one party needs `μ` (the
//!   others' output is `−x^(l)`), so here each share goes to the opener alone, and the openers
//!   take turns: ciphertext `i` of a batch is opened by party `i mod n` ([`opener`]). A party
//!   sends `(n − 1)/n` shares per ciphertext on average (Fig. 6: `n − 1`, one to each other
//!   party), and the rounding and unpacking, the costliest step, is spread over the parties
//!   instead of waiting on party 0.
//!   A malicious party gains nothing: in either form it can add any value to its `d^(l)`, or a
//!   malicious opener to `μ`, which shifts the shared result additively, and the SPDZ MAC check
//!   of everything made from it catches that.
//! * **Smudging sampled in RNS**: `bits + 1` random bits per coefficient reduced word by word
//!   modulo each prime (no big integers), the same distribution as the big-integer reference
//!   (tested equal for the same words).

use coterie_bfv::encrypt::decode_phase;
use coterie_bfv::{Ciphertext, Plaintext};
use coterie_math::bigint::BigInt;
use coterie_math::poly::{Poly, Representation};
use coterie_net::Mesh;
use zeroize::Zeroize;

use crate::keys::KeyShare;
use crate::params::ProtocolParams;
use crate::{Error, Result};

/// Message tag of the decryption shares.
pub(crate) const TAG_DDEC: u32 = 0x3A7E_0301;

/// `log2` of the power of two actually used as the smudging bound for `e` (see the module
/// docs): `⌊log2 E⌋`, or `None` when `E < 1` (no smudging possible at these parameters).
pub fn smudging_bits(bound: &BigInt) -> Option<u32> {
    (*bound > 0).then(|| bound.significant_bits() - 1)
}

/// Uniform coefficients in `[−2^bits, 2^bits)`, as a polynomial at the top level of `pp`'s ring:
/// `bits + 1` random bits per coefficient, read as `W ∈ [0, 2^(bits+1))`, minus `2^bits`.
fn smudging_poly<R: rand::CryptoRng + ?Sized>(
    pp: &ProtocolParams,
    bits: u32,
    rng: &mut R,
) -> Result<Poly> {
    let ctx = pp.context();
    let ring = ctx.ring(ctx.max_level())?;
    let words = smudging_words(bits);
    // One read of the generator for all words (a call per word costs more than the words).
    let mut bytes = vec![0u8; ctx.degree() * words * 8];
    rand::Rng::fill_bytes(rng, &mut bytes);
    let mut w: Vec<u64> = bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    bytes.zeroize();
    let p = smudging_from_words(&ring, bits, &mut w);
    w.zeroize();
    Ok(p)
}

/// 64-bit words per smudging coefficient.
fn smudging_words(bits: u32) -> usize {
    (bits as usize + 1).div_ceil(64)
}

/// The residues of `W − 2^bits` for each coefficient's little-endian words `W` (the top word
/// masked to `bits + 1` bits in place), computed limb by limb without big integers:
/// `Σ_j w_j·(2^64j mod q_i)` with 128-bit accumulation, folded only when the next product might
/// not fit.
fn smudging_from_words(
    ring: &std::sync::Arc<coterie_math::poly::RingContext>,
    bits: u32,
    w: &mut [u64],
) -> Poly {
    let n = ring.degree();
    let words = smudging_words(bits);
    let top = bits + 1 - 64 * (words as u32 - 1);
    let mask = if top == 64 {
        u64::MAX
    } else {
        (1u64 << top) - 1
    };
    for c in w.chunks_exact_mut(words) {
        c[words - 1] &= mask;
    }
    let mut out = Poly::zero(ring, Representation::Coefficient);
    for (i, m) in ring.moduli().iter().enumerate() {
        let r64 = m.reduce_u128(1u128 << 64);
        let mut pows = vec![1u64; words];
        for j in 1..words {
            pows[j] = m.mul(pows[j - 1], r64);
        }
        let half = m.mul(pows[bits as usize / 64], m.reduce(1u64 << (bits % 64)));
        // Products w·(2^64j mod q) are below 2^64·q: `fit` of them and a folded residue (< q)
        // stay below 2^128 (at least 3 for q < 2^62; 7 for the 61-bit primes of Params I).
        let fit = ((u128::MAX / (u128::from(u64::MAX) * u128::from(m.value()))) as usize)
            .saturating_sub(1)
            .max(1);
        let dst = out.limb_mut(i);
        for (d, c) in dst.iter_mut().zip(w.chunks_exact(words)) {
            let mut acc = 0u128;
            for (j, (&x, &pw)) in c.iter().zip(&pows).enumerate() {
                acc += x as u128 * pw as u128;
                if j % fit == fit - 1 {
                    acc = m.reduce_u128(acc) as u128;
                }
            }
            *d = m.sub(m.reduce_u128(acc), half);
        }
    }
    debug_assert_eq!(out.data().len(), n * ring.moduli().len());
    out
}

/// This party's decryption share of `ct` and its mask `x^(l)` (the `D` slot values it keeps as
/// `−x^(l)`, or subtracts from the opened slots at the opener). `smudge_bits` from
/// [`smudging_bits`].
pub fn ddec_share<R: rand::CryptoRng + ?Sized>(
    pp: &ProtocolParams,
    ct: &Ciphertext,
    key: &KeyShare,
    smudge_bits: u32,
    rng: &mut R,
) -> Result<(Poly, Vec<BigInt>)> {
    let ctx = pp.context();
    if ct.level() != ctx.max_level() || ct.len() != 2 {
        return Err(Error::Invalid(
            "distributed decryption takes fresh-level two-part ciphertexts".into(),
        ));
    }
    let p = pp.p();
    let x = (0..pp.slots())
        .map(|_| coterie_math::bigint::random_below(rng, &p))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let pt = Plaintext::encode_slots(ctx, &x)?;
    let mut d = ct.parts()[1].clone();
    d.to_ntt();
    d.try_mul_assign(&key.s)?;
    d.to_coeff();
    d.try_add_assign(&smudging_poly(pp, smudge_bits, rng)?)?;
    d.try_add_assign(&pt.delta_scaled(ct.level())?)?;
    Ok((d, x))
}

/// The opener's rounding of `c_0 + Σ_l d^(l)`: the `D` slots of `m + Σ_l x^(l)`.
pub fn ddec_open(pp: &ProtocolParams, ct: &Ciphertext, shares: &[Poly]) -> Result<Vec<BigInt>> {
    let ctx = pp.context();
    let mut acc = ct.parts()[0].clone();
    for d in shares {
        acc.try_add_assign(d)?;
    }
    Ok(decode_phase(ctx, acc, ct.level())?.decode_slots()?)
}

/// Runs Π_DDec on every ciphertext of `cts` (see the module docs): returns this party's additive
/// shares of their slots, one vector of `D` values mod `p` per ciphertext. Ciphertext `i` is
/// opened by party [`opener`]`(i, n)`; every other party sends it one message (its share
/// `d^(l)`, a packed polynomial) as soon as the share is computed.
pub async fn run<M: Mesh, R: rand::CryptoRng + ?Sized>(
    mesh: &mut M,
    pp: &ProtocolParams,
    cts: &[Ciphertext],
    key: &KeyShare,
    smudge_bits: u32,
    rng: &mut R,
) -> Result<Vec<Vec<BigInt>>> {
    let (me, n) = (mesh.id(), mesh.n());
    let ctx = pp.context();
    let ring = ctx.ring(ctx.max_level())?;
    let p = pp.p();
    // Mine: the share of every ciphertext this party opens; the others leave at once.
    let mut mine = Vec::with_capacity(cts.len());
    let mut masks = Vec::with_capacity(cts.len());
    for (i, ct) in cts.iter().enumerate() {
        let (d, x) = ddec_share(pp, ct, key, smudge_bits, rng)?;
        let to = opener(i, n);
        if to == me {
            mine.push(Some(d));
        } else {
            mesh.send_bytes(to, TAG_DDEC, &d.to_packed()).await?;
            mine.push(None);
        }
        masks.push(x);
    }
    let per = Poly::zero(&ring, Representation::Coefficient)
        .to_packed()
        .len();
    let mut out = Vec::with_capacity(cts.len());
    for (i, (ct, x)) in cts.iter().zip(masks).enumerate() {
        let Some(d) = mine[i].take() else {
            out.push(x.into_iter().map(|v| neg_mod(&v, &p)).collect());
            continue;
        };
        let mut shares = Vec::with_capacity(n);
        shares.push(d);
        for from in (0..n).filter(|&j| j != me) {
            let bytes = mesh.recv_bytes(from, TAG_DDEC).await?;
            let poly = (bytes.len() == per)
                .then(|| Poly::from_packed(&ring, Representation::Coefficient, &bytes).ok())
                .flatten();
            match poly {
                Some(p) => shares.push(p),
                None => {
                    let e = Error::Protocol(format!(
                        "party {from}'s decryption share {i}: {} bytes, not a packed polynomial \
                         of {per} bytes",
                        bytes.len()
                    ));
                    mesh.abort(&e.to_string()).await;
                    return Err(e);
                }
            }
        }
        let opened = ddec_open(pp, ct, &shares)?;
        out.push(
            opened
                .iter()
                .zip(&x)
                .map(|(v, x)| sub_mod(v, x, &p))
                .collect(),
        );
    }
    Ok(out)
}

/// The party that opens ciphertext `i` of a decryption batch among `n` parties: `i mod n`, so
/// that the rounding work and the traffic are spread evenly (every party sends its share of
/// each ciphertext it does not open).
pub fn opener(i: usize, n: usize) -> usize {
    i % n
}

pub(crate) fn neg_mod(x: &BigInt, p: &BigInt) -> BigInt {
    let mut r = BigInt::from(p - x);
    if r == *p {
        r = BigInt::new();
    }
    r
}

/// `a − b mod p` in `[0, p)`.
pub(crate) fn sub_mod(a: &BigInt, b: &BigInt, p: &BigInt) -> BigInt {
    let mut r = BigInt::from(a - b);
    if r < 0 {
        r += p;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::insecure_dealer_keys;
    use crate::params::Flag;
    use coterie_math::prg::Csprng;
    use coterie_net::local::run_parties;
    use coterie_net::{InMemoryMesh, MeshOptions};

    /// The RNS smudging equals the big-integer reference `W − 2^bits` for the same words, at the
    /// top bit widths (a full top word, a one-bit top word) and the matrigear width.
    #[test]
    fn smudging_in_rns_matches_big_integers() {
        // Toy-B's small primes (no fold) and Params I's 61-bit primes (folds every 7 words).
        let toy = ProtocolParams::insecure_toy_b(2, 4).unwrap();
        let one =
            ProtocolParams::matrigear(coterie_bfv::params::MatriGearSet::I, 128, 2, 2).unwrap();
        let mut rng = Csprng::insecure_from_seed_for_tests([5; 32]);
        for (pp, bits) in [63u32, 64, 127, 200, 346, 500]
            .map(|b| (&toy, b))
            .into_iter()
            .chain([(&one, 346u32), (&one, 600)])
        {
            let ctx = pp.context();
            let ring = ctx.ring(ctx.max_level()).unwrap();
            let words = smudging_words(bits);
            let mut w: Vec<u64> = (0..ctx.degree() * words)
                .map(|_| rand::Rng::next_u64(&mut rng))
                .collect();
            // an all-ones coefficient: the largest W
            w[..words].fill(u64::MAX);
            let fast = smudging_from_words(&ring, bits, &mut w);
            let half = BigInt::from(1u32) << bits;
            let want: Vec<BigInt> = w
                .chunks_exact(words)
                .map(|c| {
                    let x = BigInt::from_digits(c, rug::integer::Order::Lsf);
                    assert!(x.significant_bits() <= bits + 1, "masked to bits + 1");
                    x - &half
                })
                .collect();
            assert_eq!(
                fast,
                Poly::from_bigints(&ring, &want).unwrap(),
                "bits {bits}"
            );
            assert_eq!(
                want[0],
                half.clone() - 1u32,
                "the largest value is 2^bits − 1"
            );
        }
    }

    /// Spec §8 case 15: the parties' shares sum to the plaintext, for fresh ciphertexts and for
    /// a depth-2 product; the smudging leaves the noise below 1/2 (decryption is exact).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn shares_sum_to_the_plaintext() {
        for n in [2usize, 3] {
            let pp = ProtocolParams::insecure_toy_b(n, 4).unwrap();
            let mut rng = Csprng::new();
            let (keys, shares) = insecure_dealer_keys(&pp, &mut rng).unwrap();
            let ctx = pp.context();
            let p = pp.p();
            let vals: Vec<Vec<BigInt>> = (0..3)
                .map(|_| {
                    (0..8)
                        .map(|_| coterie_math::bigint::random_below(&mut rng, &p).unwrap())
                        .collect()
                })
                .collect();
            let mut cts: Vec<Ciphertext> = vals
                .iter()
                .map(|v| {
                    keys.pk
                        .encrypt(&Plaintext::encode_slots(ctx, v).unwrap(), &mut rng)
                        .unwrap()
                })
                .collect();
            let sq = cts[0]
                .mul(&cts[1], &keys.rlk)
                .unwrap()
                .mul(&cts[2], &keys.rlk)
                .unwrap();
            cts.push(sq);
            let bits = smudging_bits(&pp.smudging_bound(4, 8, Flag::Any)).unwrap();
            assert!(bits > 60);
            let cts2 = cts.clone();
            let mut shares = shares.into_iter();
            let res = run_parties(
                InMemoryMesh::group(n, MeshOptions::default()),
                move |mut mesh| {
                    let (pp, cts, key) = (pp.clone(), cts2.clone(), shares.next().unwrap());
                    async move {
                        let out = run(&mut mesh, &pp, &cts, &key, bits, &mut Csprng::new()).await;
                        mesh.close().await?;
                        out
                    }
                },
            )
            .await;
            let res: Vec<Vec<Vec<BigInt>>> = res.into_iter().map(|r| r.unwrap()).collect();
            for (i, want) in vals.iter().enumerate() {
                for s in 0..8 {
                    let sum: BigInt = res.iter().map(|r| r[i][s].clone()).sum::<BigInt>() % &p;
                    assert_eq!(sum, want[s], "ciphertext {i} slot {s}");
                }
            }
            for s in 0..8 {
                let sum: BigInt = res.iter().map(|r| r[3][s].clone()).sum::<BigInt>() % &p;
                let want = BigInt::from(&vals[0][s] * &vals[1][s]) * &vals[2][s] % &p;
                assert_eq!(sum, want, "product slot {s}");
            }
            // the shares of the non-zero parties are uniform masks: they differ from the values
            assert_ne!(res[1][0], vals[0]);
        }
    }
}
