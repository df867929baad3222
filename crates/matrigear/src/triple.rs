//! Π_Triple (seed 002 §5.5, Fig. 4): the MAC key, scalar triples, random values and matrix
//! triples, every share authenticated, as drivers over a `Mesh`.
//!
//! Every flow is: a proof of plaintext knowledge of the parties' random plaintexts
//! ([`crate::popk`]), the sum of their ciphertexts **doubled** (`2·Σ_l ct^(l)`: the extractor of
//! Theorem 2 only vouches for `2·μ`), the homomorphic products, and one distributed decryption
//! ([`crate::ddec`]) of everything that must become shares. The doubling fixes the shares
//! (spec §9.12): a party whose proven plaintext is `x^(l)` holds the share `2·x^(l)` of the
//! encrypted value `2·Σ_l x^(l)`.
//!
//! | flow | proof | products | decrypted |
//! |---|---|---|---|
//! | [`init_mac_key`] | `U = 1`, Diag, `V = ⌈130/log2 2M⌉` | — | — (share `2α^(l)`) |
//! | [`scalar_triples`] | `U = 2k`, ⊥ | `c = ab`, `αa`, `αb`, `αc` (depth 2) | `4k` ciphertexts: `kD` triples |
//! | [`random_values`] | `U = k`, ⊥ | `αr` | `k` ciphertexts: `kD` values |
//! | [`matrix_triples`] | `U = 2d`, ⊥ | MatMul, `αA`, `αB`, `αC` | `4d` ciphertexts: `T = D/d` triples |
//!
//! MatriGear computes `αA` and `αB` as well as `αC` (spec §9.18: the reference code's benchmark
//! computes only `αC`, which would leave `[A]` and `[B]` without MACs).
//!
//! `U = 2d` per matrix batch (spec §9.9 / §5.5: the only reading that reproduces Tables 2 and 4),
//! and `q` is checked for it when the parameters are made.

use coterie_bfv::Ciphertext;
use std::time::Instant;

use coterie_bfv::matmul::{diagonal_decode, matmul, shifted_diagonal_decode};
use coterie_math::bigint::BigInt;
use coterie_net::Mesh;
use coterie_spdz::{BigElem, MatrixTriple, Share, Triple};

use crate::ddec::{self, smudging_bits};
use crate::keys::{EvalKeys, KeyShare};
use crate::params::{Flag, ProtocolParams};
use crate::popk;
use crate::{Error, Result};

/// Where the time of one flow went (seconds, this party's wall clock).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Phases {
    /// The proof of plaintext knowledge (sampling, encryption, messages, verification).
    pub popk: f64,
    /// The homomorphic products (MatMul, Mul by `ct_α`, relinearizations).
    pub he: f64,
    /// The distributed decryption and the assembly of the shares.
    pub ddec: f64,
}

/// This party's MAC key material: its share `2α^(l)` of `α` and the common ciphertext
/// `ct_α = 2·Σ_l ct_α^(l)` of `α`. The share is secret (wiped on drop).
#[derive(Clone)]
pub struct MacKey {
    pub(crate) share: BigInt,
    pub(crate) ct: Ciphertext,
}

impl std::fmt::Debug for MacKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MacKey(..)")
    }
}

impl Drop for MacKey {
    fn drop(&mut self) {
        coterie_math::bigint::wipe(&mut self.share);
    }
}

impl MacKey {
    /// This party's share of `α`, in `[0, p)`.
    pub fn share(&self) -> &BigInt {
        &self.share
    }
    /// The encryption of `α` every party holds.
    pub fn ciphertext(&self) -> &Ciphertext {
        &self.ct
    }
    /// The share (fixed width) and the ciphertext, for this party's owner-only state file.
    pub fn to_bytes(&self, pp: &ProtocolParams) -> Result<Vec<u8>> {
        let w = pp.p().significant_bits().div_ceil(8) as usize;
        let mut out = coterie_math::bigint::to_le_bytes_padded(&self.share, w)?;
        out.extend_from_slice(&self.ct.to_bytes());
        Ok(out)
    }
    /// Reads what [`MacKey::to_bytes`] wrote (share below `p`, ciphertext of `pp`'s context).
    pub fn from_bytes(pp: &ProtocolParams, bytes: &[u8]) -> Result<Self> {
        let w = pp.p().significant_bits().div_ceil(8) as usize;
        if bytes.len() < w {
            return Err(Error::Malformed("truncated MAC key".into()));
        }
        let share = coterie_math::bigint::from_le_bytes_bounded(&bytes[..w], w)?;
        if share >= pp.p() {
            return Err(Error::Malformed("MAC key share out of range".into()));
        }
        let ct = Ciphertext::from_bytes(pp.context(), &bytes[w..])?;
        Ok(MacKey { share, ct })
    }
}

/// `x + x mod p`.
fn double_mod(x: &BigInt, p: &BigInt) -> BigInt {
    let mut r = BigInt::from(x << 1u32);
    if r >= *p {
        r -= p;
    }
    r
}

fn double(ct: &Ciphertext) -> Result<Ciphertext> {
    Ok(ct.add(ct)?)
}

fn elem(x: BigInt) -> BigElem {
    BigElem(x)
}

/// Initialize (Fig. 4): the MAC key by one Diag proof with `U = 1`.
pub async fn init_mac_key<M: Mesh, R: rand::CryptoRng + ?Sized>(
    mesh: &mut M,
    pp: &ProtocolParams,
    keys: &EvalKeys,
    rng: &mut R,
) -> Result<MacKey> {
    let out = popk::run(mesh, pp, &keys.pk, 1, Flag::Diag, "mac-key", rng).await?;
    let x = out
        .slots()
        .first()
        .and_then(|v| v.first())
        .ok_or_else(|| Error::Protocol("the MAC key proof returned no plaintext".into()))?;
    let share = double_mod(x, &pp.p());
    let ct = double(
        out.ciphertexts()
            .first()
            .ok_or_else(|| Error::Protocol("the MAC key proof returned no ciphertext".into()))?,
    )?;
    Ok(MacKey { share, ct })
}

/// Proves `u` fresh random plaintexts of every party (flag ⊥) and returns this party's doubled
/// plaintext shares and the doubled common ciphertexts.
async fn proven_randoms<M: Mesh, R: rand::CryptoRng + ?Sized>(
    mesh: &mut M,
    pp: &ProtocolParams,
    keys: &EvalKeys,
    u: usize,
    label: &str,
    rng: &mut R,
) -> Result<(Vec<Vec<BigInt>>, Vec<Ciphertext>)> {
    let out = popk::run(mesh, pp, &keys.pk, u, Flag::Any, label, rng).await?;
    let p = pp.p();
    let values: Vec<Vec<BigInt>> = out
        .slots()
        .iter()
        .map(|v| v.iter().map(|x| double_mod(x, &p)).collect())
        .collect();
    let cts = out
        .ciphertexts()
        .iter()
        .map(double)
        .collect::<Result<Vec<_>>>()?;
    if values.len() != u || cts.len() != u || values.iter().any(|v| v.len() != pp.slots()) {
        return Err(Error::Protocol(format!(
            "the proof of {label} returned {} plaintexts and {} ciphertexts for U = {u}",
            values.len(),
            cts.len()
        )));
    }
    Ok((values, cts))
}

fn share(v: &BigInt, m: &BigInt) -> Share<BigElem> {
    Share {
        v: elem(v.clone()),
        m: elem(m.clone()),
    }
}

/// `k·D` scalar triples from one proof of `U = 2k` ciphertexts (`k ≤`
/// [`ProtocolParams::max_scalar_pairs`], so that `q` holds).
pub async fn scalar_triples<M: Mesh, R: rand::CryptoRng + ?Sized>(
    mesh: &mut M,
    pp: &ProtocolParams,
    keys: &EvalKeys,
    key: &KeyShare,
    mac: &MacKey,
    k: usize,
    rng: &mut R,
) -> Result<Vec<Triple<BigElem>>> {
    Ok(scalar_triples_with_phases(mesh, pp, keys, key, mac, k, rng)
        .await?
        .0)
}

/// [`scalar_triples`] with the time of each phase.
pub async fn scalar_triples_with_phases<M: Mesh, R: rand::CryptoRng + ?Sized>(
    mesh: &mut M,
    pp: &ProtocolParams,
    keys: &EvalKeys,
    key: &KeyShare,
    mac: &MacKey,
    k: usize,
    rng: &mut R,
) -> Result<(Vec<Triple<BigElem>>, Phases)> {
    check_count(pp, k)?;
    let mut ph = Phases::default();
    let t = Instant::now();
    let (x, cts) = proven_randoms(mesh, pp, keys, 2 * k, "scalar triples", rng).await?;
    ph.popk = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut dec = Vec::with_capacity(4 * k);
    let mut cs = Vec::with_capacity(k);
    for i in 0..k {
        cs.push(cts[2 * i].mul(&cts[2 * i + 1], &keys.rlk)?);
    }
    dec.extend(cs.iter().cloned());
    // ct_α is lifted once for its 3k products.
    let alpha = mac.ct.extended()?;
    for i in 0..k {
        dec.push(cts[2 * i].mul_extended(&alpha, &keys.rlk)?);
    }
    for i in 0..k {
        dec.push(cts[2 * i + 1].mul_extended(&alpha, &keys.rlk)?);
    }
    for c in &cs {
        dec.push(c.mul_extended(&alpha, &keys.rlk)?);
    }
    ph.he = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let bits = smudging(pp, 1, 2 * k)?;
    let sh = ddec::run(mesh, pp, &dec, key, bits, rng).await?;
    let mut out = Vec::with_capacity(k * pp.slots());
    for i in 0..k {
        for s in 0..pp.slots() {
            out.push(Triple {
                a: share(&x[2 * i][s], &sh[k + i][s]),
                b: share(&x[2 * i + 1][s], &sh[2 * k + i][s]),
                c: share(&sh[i][s], &sh[3 * k + i][s]),
            });
        }
    }
    ph.ddec = t.elapsed().as_secs_f64();
    Ok((out, ph))
}

/// `k·D` authenticated random values from one proof of `U = k` ciphertexts (`k ≤ 2·`
/// [`ProtocolParams::max_scalar_pairs`]).
pub async fn random_values<M: Mesh, R: rand::CryptoRng + ?Sized>(
    mesh: &mut M,
    pp: &ProtocolParams,
    keys: &EvalKeys,
    key: &KeyShare,
    mac: &MacKey,
    k: usize,
    rng: &mut R,
) -> Result<Vec<Share<BigElem>>> {
    if k == 0 || k > 2 * pp.max_scalar_pairs() {
        return Err(Error::Invalid(format!(
            "{k} ciphertexts of random values per proof: 1 to {} (q is sized for that U)",
            2 * pp.max_scalar_pairs()
        )));
    }
    let (x, cts) = proven_randoms(mesh, pp, keys, k, "random values", rng).await?;
    let alpha = mac.ct.extended()?;
    let dec = cts
        .iter()
        .map(|c| c.mul_extended(&alpha, &keys.rlk))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let bits = smudging(pp, 1, k)?;
    let sh = ddec::run(mesh, pp, &dec, key, bits, rng).await?;
    let mut out = Vec::with_capacity(k * pp.slots());
    for i in 0..k {
        for s in 0..pp.slots() {
            out.push(share(&x[i][s], &sh[i][s]));
        }
    }
    Ok(out)
}

/// One batch of `T = D/d` authenticated `d × d` matrix triples (`d` of the parameters) from one
/// proof of `U = 2d` ciphertexts: the first `d` are read as the batched diagonal encoding
/// `ι(A)`, the last `d` as the shifted one `ι̃(B)` (both encodings are bijections, so the
/// shares are uniform matrices).
pub async fn matrix_triples<M: Mesh, R: rand::CryptoRng + ?Sized>(
    mesh: &mut M,
    pp: &ProtocolParams,
    keys: &EvalKeys,
    key: &KeyShare,
    mac: &MacKey,
    rng: &mut R,
) -> Result<Vec<MatrixTriple<BigElem>>> {
    Ok(matrix_triples_with_phases(mesh, pp, keys, key, mac, rng)
        .await?
        .0)
}

/// [`matrix_triples`] with the time of each phase.
pub async fn matrix_triples_with_phases<M: Mesh, R: rand::CryptoRng + ?Sized>(
    mesh: &mut M,
    pp: &ProtocolParams,
    keys: &EvalKeys,
    key: &KeyShare,
    mac: &MacKey,
    rng: &mut R,
) -> Result<(Vec<MatrixTriple<BigElem>>, Phases)> {
    let d = pp.d();
    let t = pp.batch();
    let mut ph = Phases::default();
    let clock = Instant::now();
    let (x, cts) = proven_randoms(mesh, pp, keys, 2 * d, "matrix triples", rng).await?;
    ph.popk = clock.elapsed().as_secs_f64();
    let clock = Instant::now();
    let (ca, cb) = cts.split_at(d);
    let cc = matmul(ca, cb, &keys.rlk, &keys.rot)?;
    let mut dec = cc.clone();
    let alpha = mac.ct.extended()?;
    for c in ca.iter().chain(cb).chain(&cc) {
        dec.push(c.mul_extended(&alpha, &keys.rlk)?);
    }
    ph.he = clock.elapsed().as_secs_f64();
    let clock = Instant::now();
    let bits = smudging(pp, d, 2 * d)?;
    let sh = ddec::run(mesh, pp, &dec, key, bits, rng).await?;
    let a = diagonal_decode(&x[..d], t)?;
    let b = shifted_diagonal_decode(&x[d..], t)?;
    let c = diagonal_decode(&sh[..d], t)?;
    let ma = diagonal_decode(&sh[d..2 * d], t)?;
    let mb = shifted_diagonal_decode(&sh[2 * d..3 * d], t)?;
    let mc = diagonal_decode(&sh[3 * d..], t)?;
    let flat = |v: &[Vec<BigInt>], m: &[Vec<BigInt>]| -> Vec<Share<BigElem>> {
        v.iter()
            .flatten()
            .zip(m.iter().flatten())
            .map(|(v, m)| share(v, m))
            .collect()
    };
    let out = (0..t)
        .map(|i| MatrixTriple {
            d,
            a: flat(&a[i], &ma[i]),
            b: flat(&b[i], &mb[i]),
            c: flat(&c[i], &mc[i]),
        })
        .collect();
    ph.ddec = clock.elapsed().as_secs_f64();
    Ok((out, ph))
}

fn check_count(pp: &ProtocolParams, k: usize) -> Result<()> {
    if k == 0 || k > pp.max_scalar_pairs() {
        return Err(Error::Invalid(format!(
            "{k} triple ciphertext pairs per proof: 1 to {} (q is sized for that U)",
            pp.max_scalar_pairs()
        )));
    }
    Ok(())
}

fn smudging(pp: &ProtocolParams, d_factor: usize, u: usize) -> Result<u32> {
    smudging_bits(&pp.smudging_bound(d_factor, u, Flag::Any)).ok_or_else(|| {
        Error::Invalid(format!(
            "no room for smudging at {}: q is too small for the chain",
            pp.context().params().name()
        ))
    })
}
