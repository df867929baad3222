//! Π_DDec (seed 002 §5.4, Fig. 6): distributed decryption of a ciphertext into additive shares of
//! its `D` slots, with smudging.
//!
//! Party `l` holding `s^(l)` samples a mask `x^(l) ← U(Z_p^D)` and smudging noise `e^(l)`, and
//! sends `d^(l) = c_1·s^(l) + e^(l) + Δ·[Pack(x^(l))]_R`. From `c_0 + Σ_l d^(l)`, which is an
//! encryption of `m + Σ_l x^(l)` under the key `(1, 0)`, party 0 rounds
//! `μ = round(((X^D − b)/q)·(c_0 + Σ d)) mod (X^D − b)` and keeps `Unpack(μ) − x^(0)`; every other
//! party keeps `−x^(l)`.
//!
//! Two choices (seed 002 §9):
//! * **Smudging scale** (§9.13): the paper's `U(R_{B_Dec·2^λ_DDec})` mixes an invariant-noise
//!   bound with a polynomial at scale `q`. We take coefficients uniform in `[−E, E)` with `E` the
//!   largest power of two not above `B_Dec·2^λ_DDec·q/(n(b+1)N)`
//!   ([`crate::ProtocolParams::smudging_bound`]), so the smudging of all parties adds at most
//!   `B_Dec·2^λ_DDec < 1/2` of invariant noise and still hides a ciphertext noise of invariant
//!   norm `B_Dec` with statistical distance about `2^-λ_DDec` (up to the power-of-two rounding:
//!   at most one bit).
//! * **Who receives `d^(l)`**: Fig. 6 sends it to everyone, but only party 0 uses `μ` (the others'
//!   output is `−x^(l)`), so here the parties send it to party 0 alone. For two parties that is
//!   the same traffic; for `n` it saves `(n − 2)/(n − 1)` of the decryption traffic. A malicious
//!   party gains nothing: in either form it can add any value to its `d^(l)`, which shifts the
//!   shared result additively, and the SPDZ MAC check of everything made from it catches that.

use coterie_bfv::encrypt::decode_phase;
use coterie_bfv::{Ciphertext, Plaintext};
use coterie_math::bigint::BigInt;
use coterie_math::poly::{Poly, Representation};
use coterie_net::Mesh;
use rug::integer::Order;
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

/// Uniform coefficients in `[−2^bits, 2^bits)`, as a polynomial at the top level of `pp`'s ring.
fn smudging_poly<R: rand::CryptoRng + ?Sized>(
    pp: &ProtocolParams,
    bits: u32,
    rng: &mut R,
) -> Result<Poly> {
    let ctx = pp.context();
    let ring = ctx.ring(ctx.max_level())?;
    let nbytes = (bits as usize + 1).div_ceil(8);
    let mut buf = vec![0u8; nbytes];
    let half = BigInt::from(1u32) << bits;
    let mut coeffs = Vec::with_capacity(ctx.degree());
    for _ in 0..ctx.degree() {
        rand::Rng::fill_bytes(rng, &mut buf);
        let mut x = BigInt::from_digits(&buf, Order::Lsf);
        x.keep_bits_mut(bits + 1);
        x -= &half;
        coeffs.push(x);
    }
    buf.zeroize();
    let p = Poly::from_bigints(&ring, &coeffs);
    for c in coeffs.iter_mut() {
        coterie_math::bigint::wipe(c);
    }
    Ok(p?)
}

/// This party's decryption share of `ct` and its mask `x^(l)` (the `D` slot values it keeps as
/// `−x^(l)`, or subtracts from the opened slots at party 0). `smudge_bits` from
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

/// Party 0's rounding of `c_0 + Σ_l d^(l)`: the `D` slots of `m + Σ_l x^(l)`.
pub fn ddec_open(pp: &ProtocolParams, ct: &Ciphertext, shares: &[Poly]) -> Result<Vec<BigInt>> {
    let ctx = pp.context();
    let mut acc = ct.parts()[0].clone();
    for d in shares {
        acc.try_add_assign(d)?;
    }
    Ok(decode_phase(ctx, acc, ct.level())?.decode_slots()?)
}

/// Runs Π_DDec on every ciphertext of `cts` (see the module docs): returns this party's additive
/// shares of their slots, one vector of `D` values mod `p` per ciphertext. Every party other than
/// 0 sends party 0 one message per ciphertext (its share `d^(l)`, a packed polynomial).
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
    let mut mine = Vec::with_capacity(cts.len());
    let mut masks = Vec::with_capacity(cts.len());
    for ct in cts {
        let (d, x) = ddec_share(pp, ct, key, smudge_bits, rng)?;
        mine.push(d);
        masks.push(x);
    }
    if me != 0 {
        // One message per ciphertext: a frame stays one polynomial, whatever the batch.
        for d in &mine {
            mesh.send_bytes(0, TAG_DDEC, &d.to_packed()).await?;
        }
        return Ok(masks
            .into_iter()
            .map(|x| x.into_iter().map(|v| neg_mod(&v, &p)).collect())
            .collect());
    }
    let per = Poly::zero(&ring, Representation::Coefficient)
        .to_packed()
        .len();
    let mut others = Vec::with_capacity(n - 1);
    for from in 1..n {
        let mut polys = Vec::with_capacity(cts.len());
        for i in 0..cts.len() {
            let bytes = mesh.recv_bytes(from, TAG_DDEC).await?;
            let poly = (bytes.len() == per)
                .then(|| Poly::from_packed(&ring, Representation::Coefficient, &bytes).ok())
                .flatten();
            match poly {
                Some(p) => polys.push(p),
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
        others.push(polys);
    }
    let mut out = Vec::with_capacity(cts.len());
    for (i, ct) in cts.iter().enumerate() {
        let mut shares = vec![mine[i].clone()];
        shares.extend(others.iter().map(|o| o[i].clone()));
        let opened = ddec_open(pp, ct, &shares)?;
        out.push(
            opened
                .iter()
                .zip(&masks[i])
                .map(|(v, x)| sub_mod(v, x, &p))
                .collect(),
        );
    }
    Ok(out)
}

/// `−x mod p` in `[0, p)`.
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
