//! Two-party protocols over `coterie-net`'s [`Mesh`] (semi-honest, the paper's setting):
//! distributed key generation ([`dkg`], paper Fig. 1 / spec §4.1) and distributed generation of
//! level-2 shares ([`l2_shares`], paper Fig. 2 / spec §4.2), on a base 1-out-of-n OT
//! ([`ot`], "simplest OT" of Chou–Orlandi in the HSS group) kept inside this crate.
//!
//! # Key generation: what is implemented
//!
//! Fig. 1 keeps the key digits `c_i ∈ {0..B−1}` (no doubled payloads) by running a generic 2PC
//! that computes `x_i = r_i·c + c_i` in `Z_q`. That step is left generic in the paper (spec §11
//! item 9); computing it with OT-based multiplication in `Z_q` would take `log q` OTs per digit.
//! This crate realizes the same output — `pk = (h = g^c, (E(c_i))_i)` with uniform digits
//! `c_i ∈ {0..B−1}`, integer shares `<c>` and `<c_i>` (as RandMult and the pads need), and a
//! common PRF key — with a direct protocol instead of the generic 2PC:
//!
//! 1. Party 0 picks digits `α_i`, party 1 picks `β_i`; `c_i = (α_i + β_i) mod B`.
//! 2. One 1-out-of-`B` OT per digit (party 0 chooses `α_i`; party 1 offers
//!    `ρ_i + [j + β_i ≥ B]`, `j < B`, `ρ_i` a statistical integer mask) gives integer shares of
//!    the carry, hence `<c_i> = (α_i − B·u_i, −β_i − B·ρ_i)` in the difference convention.
//! 3. `<c> = Σ B^(i−1)<c_i>`; the parties exchange `g^(<c>_b)` and set `h = g^(<c>_0)/g^(<c>_1)`
//!    (the spec's suggestion for the OPEN "how is h formed").
//! 4. For each `i`, party 0 sends `(g^(r_i⁰), h^(r_i⁰)·g^(<c_i>_0))`, party 1 sends
//!    `(g^(r_i¹), h^(r_i¹)·g^(−<c_i>_1))` — ElGamal encryptions under `h` of each share — and the
//!    product is `E(c_i)` with `r_i = r_i⁰ + r_i¹`.
//! 5. PRF key = XOR of two random contributions.
//!
//! Security (semi-honest): the OT hides `α_i` and all but one message; the integer masks hide the
//! carry statistically; the exchanged group elements are ElGamal encryptions under `h` (whose key
//! neither party knows) or `g^(<c>_b)`, from which the other party learns only `h`.
//!
//! # Level-2 shares (Fig. 2, difference convention)
//!
//! Party 0 holds `(x, <c>_0)`, party 1 holds `<c>_1`; party 1 draws `r` of `t + λ` bits and acts
//! as OT sender with `(r, r − <c>_1)`; party 0 with choice `x` gets `r'`. Party 0 outputs
//! `L2 = (x, r' + x·<c>_0)`, party 1 outputs `(0, r)`: then `<x> = (x, 0)` and
//! `<x·c> = x·c` (spec §4.2; the paper's Fig. 2 sums shares, this crate subtracts).

use coterie_math::bigint::{self, BigInt};
use coterie_net::Mesh;
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::group::{Elem, Group};
use crate::scheme::{Ciphertext, EvalKey, KeyLayout, L2Share, Params, PublicKey};
use crate::{Error, Result};

/// Protocol tag of the OT sender's first message (`A = g^a`).
pub const TAG_OT_A: u32 = 0x4853_0001;
const TAG_OT_B: u32 = 0x4853_0002;
const TAG_OT_C: u32 = 0x4853_0003;
const TAG_DKG_H: u32 = 0x4853_0010;
const TAG_DKG_E: u32 = 0x4853_0011;
const TAG_DKG_PRF: u32 = 0x4853_0012;

/// Largest number of OTs or digits accepted in one message.
pub const MAX_BATCH: usize = 1 << 16;

/// Base OT: 1-out-of-`n` "simplest OT" (Chou–Orlandi) in the HSS group, semi-honest.
///
/// Sender: `a`, `A = g^a`. Receiver with choice `c`: `B = A^c·g^b`, key `H(A^b)`. Sender's key
/// for message `j`: `H((B/A^j)^a)`; only `j = c` matches. Messages are byte strings masked with
/// a BLAKE3 stream of the key.
pub mod ot {
    use super::*;

    /// Sender state.
    pub struct Sender {
        a: BigInt,
        big_a: Elem,
    }

    /// Receiver state.
    pub struct Receiver {
        b: Vec<BigInt>,
        choices: Vec<u32>,
    }

    fn key(group: &Group, idx: usize, j: u32, e: &Elem) -> blake3::OutputReader {
        let mut h = blake3::Hasher::new();
        h.update(b"coterie/hss/simplest-ot/v1");
        h.update(&(group.bits() as u64).to_le_bytes());
        h.update(&(idx as u64).to_le_bytes());
        h.update(&j.to_le_bytes());
        for l in e.limbs() {
            h.update(&l.to_le_bytes());
        }
        h.finalize_xof()
    }

    fn mask(mut k: blake3::OutputReader, msg: &[u8]) -> Vec<u8> {
        let mut pad = vec![0u8; msg.len()];
        k.fill(&mut pad);
        pad.iter().zip(msg).map(|(a, b)| a ^ b).collect()
    }

    /// Sender's first message `A`.
    pub fn sender_setup<R: Rng + ?Sized>(group: &Group, rng: &mut R) -> (Sender, Elem) {
        let a = group.random_exponent(rng);
        let big_a = group.g_pow(&a);
        (
            Sender {
                a,
                big_a: big_a.clone(),
            },
            big_a,
        )
    }

    /// Receiver's message `(B_i)` for choices `c_i < n`.
    pub fn receiver_choose<R: Rng + ?Sized>(
        group: &Group,
        big_a: &Elem,
        choices: &[u32],
        rng: &mut R,
    ) -> Result<(Receiver, Vec<Elem>)> {
        group.validate(big_a)?;
        let mut bs = Vec::with_capacity(choices.len());
        let mut msgs = Vec::with_capacity(choices.len());
        for &c in choices {
            let b = group.random_exponent(rng);
            let ac = group.pow(big_a, &BigInt::from(c));
            msgs.push(group.mul(&ac, &group.g_pow(&b)));
            bs.push(b);
        }
        Ok((
            Receiver {
                b: bs,
                choices: choices.to_vec(),
            },
            msgs,
        ))
    }

    /// Sender's masked messages: `messages[i][j]` for OT `i`, index `j < n` (all of one length
    /// per OT).
    pub fn sender_transfer(
        group: &Group,
        st: &Sender,
        big_bs: &[Elem],
        messages: &[Vec<Vec<u8>>],
    ) -> Result<Vec<Vec<Vec<u8>>>> {
        if big_bs.len() != messages.len() {
            return Err(Error::Protocol("OT batch size mismatch".into()));
        }
        let n = messages.first().map_or(0, Vec::len);
        // (A^a)^(-j) for j < n
        let aa = group.pow(&st.big_a, &st.a);
        let aa_inv = group.inv(&aa)?;
        let mut inv_pows = vec![group.one()];
        for j in 1..n {
            inv_pows.push(group.mul(&inv_pows[j - 1], &aa_inv));
        }
        let mut out = Vec::with_capacity(messages.len());
        for (i, (bi, ms)) in big_bs.iter().zip(messages).enumerate() {
            group.validate(bi)?;
            if ms.len() != n {
                return Err(Error::Protocol("OT arity mismatch".into()));
            }
            let ba = group.pow(bi, &st.a);
            out.push(
                ms.iter()
                    .enumerate()
                    .map(|(j, m)| {
                        let e = group.mul(&ba, &inv_pows[j]);
                        mask(key(group, i, j as u32, &e), m)
                    })
                    .collect(),
            );
        }
        Ok(out)
    }

    /// Receiver's chosen messages.
    pub fn receiver_open(
        group: &Group,
        st: &Receiver,
        big_a: &Elem,
        cts: &[Vec<Vec<u8>>],
    ) -> Result<Vec<Vec<u8>>> {
        if cts.len() != st.b.len() {
            return Err(Error::Protocol("OT batch size mismatch".into()));
        }
        cts.iter()
            .enumerate()
            .map(|(i, row)| {
                let c = st.choices[i] as usize;
                let ct = row
                    .get(c)
                    .ok_or_else(|| Error::Protocol("OT row too short".into()))?;
                let e = group.pow(big_a, &st.b[i]);
                Ok(mask(key(group, i, c as u32, &e), ct))
            })
            .collect()
    }
}

/// Signed big integer to a fixed-length little-endian encoding (sign byte + magnitude).
fn enc_int(x: &BigInt, len: usize) -> Result<Vec<u8>> {
    let mut v = vec![u8::from(x.is_negative())];
    let mag = bigint::to_le_bytes_padded(&BigInt::from(x.abs_ref()), len)
        .map_err(|e| Error::Protocol(e.to_string()))?;
    v.extend_from_slice(&mag);
    Ok(v)
}

fn dec_int(b: &[u8]) -> Result<BigInt> {
    let (&s, mag) = b
        .split_first()
        .ok_or_else(|| Error::Malformed("empty integer".into()))?;
    let m =
        bigint::from_le_bytes_bounded(mag, 4096).map_err(|e| Error::Malformed(e.to_string()))?;
    Ok(if s == 1 { -m } else { m })
}

/// The two servers are parties 0 and 1 of the mesh; other parties of a larger mesh (the clients
/// of the applications) take no part in these protocols.
fn check_two(mesh: &impl Mesh) -> Result<usize> {
    if mesh.n() < 2 || mesh.id() > 1 {
        return Err(Error::Protocol(
            "HSS protocols run between parties 0 and 1 of the mesh".into(),
        ));
    }
    Ok(mesh.id())
}

/// Batched OT where party `sender` offers `messages` and the other party chooses `choices`;
/// returns the receiver's messages (empty for the sender).
async fn run_ot<M: Mesh, R: Rng + Send>(
    mesh: &mut M,
    group: &Group,
    sender: usize,
    messages: &[Vec<Vec<u8>>],
    choices: &[u32],
    rng: &mut R,
) -> Result<Vec<Vec<u8>>> {
    let me = mesh.id();
    let other = 1 - me;
    if me == sender {
        let (st, big_a) = ot::sender_setup(group, rng);
        mesh.send_tagged(other, TAG_OT_A, &big_a).await?;
        let big_bs: Vec<Elem> = mesh.recv_tagged(other, TAG_OT_B).await?;
        if big_bs.len() != messages.len() {
            return Err(Error::Protocol("OT batch size mismatch".into()));
        }
        let cts = ot::sender_transfer(group, &st, &big_bs, messages)?;
        mesh.send_tagged(other, TAG_OT_C, &cts).await?;
        Ok(vec![])
    } else {
        if choices.len() > MAX_BATCH {
            return Err(Error::Protocol("OT batch too large".into()));
        }
        let big_a: Elem = mesh.recv_tagged(other, TAG_OT_A).await?;
        let (st, msgs) = ot::receiver_choose(group, &big_a, choices, rng)?;
        mesh.send_tagged(other, TAG_OT_B, &msgs).await?;
        let cts: Vec<Vec<Vec<u8>>> = mesh.recv_tagged(other, TAG_OT_C).await?;
        ot::receiver_open(group, &st, &big_a, &cts)
    }
}

/// Distributed key generation between parties 0 and 1 (see the module docs). Both parties get
/// the same [`PublicKey`] and their own [`EvalKey`].
///
/// # Example
///
/// Both parties over the in-memory mesh (the same code runs across machines over TLS):
///
/// ```
/// use coterie_hss::protocol::dkg;
/// use coterie_hss::scheme::Params;
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
/// use rand::SeedableRng;
/// let params = Params::insecure_toy(4, 16, 10);
/// let rt = tokio::runtime::Runtime::new().unwrap();
/// let keys = rt.block_on(async move {
///     let tasks: Vec<_> = InMemoryMesh::group(2, MeshOptions::default())
///         .into_iter()
///         .enumerate()
///         .map(|(i, mut mesh)| {
///             tokio::spawn(async move {
///                 // Fixed seeds: insecure, for the example only (use OS entropy).
///                 let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(i as u64);
///                 let keys = dkg(&mut mesh, &params, &mut rng).await.unwrap();
///                 mesh.close().await.unwrap();
///                 keys
///             })
///         })
///         .collect();
///     let mut keys = Vec::new();
///     for t in tasks {
///         keys.push(t.await.unwrap());
///     }
///     keys
/// });
/// let ((pk0, ek0), (pk1, ek1)) = (&keys[0], &keys[1]);
/// assert_eq!(pk0.h, pk1.h);
/// assert_eq!((ek0.party, ek1.party), (0, 1));
/// ```
pub async fn dkg<M: Mesh, R: Rng + Send>(
    mesh: &mut M,
    params: &Params,
    rng: &mut R,
) -> Result<(PublicKey, EvalKey)> {
    let me = check_two(mesh)?;
    let other = 1 - me;
    let group = Group::new(params.group);
    let s = params.s();
    let b = params.base();
    let lb = params.log_base;
    // ρ masks: stat − log B − 2 bits, so that |<c>_b| < 2^(ℓ + stat) (see module docs).
    let rho_bits = params.stat_bits.saturating_sub(lb + 2).max(8);
    let msg_len = (rho_bits as usize).div_ceil(8) + 1;
    let mine: Vec<u64> = (0..s).map(|_| rng.next_u64() % b).collect();
    // 1-2. OT per digit: party 1 sends, party 0 chooses α_i.
    let mut digit_shares = Vec::with_capacity(s);
    if me == 1 {
        let mut msgs = Vec::with_capacity(s);
        for &beta in &mine {
            let rho = bigint::random_below(rng, &(BigInt::from(1) << rho_bits))
                .map_err(|e| Error::Protocol(e.to_string()))?;
            let row = (0..b)
                .map(|j| enc_int(&BigInt::from(&rho + u32::from(j + beta >= b)), msg_len))
                .collect::<Result<Vec<_>>>()?;
            msgs.push(row);
            // b_i = −β_i − B·ρ_i
            digit_shares.push(-BigInt::from(beta) - BigInt::from(&rho * b));
        }
        run_ot(mesh, &group, 1, &msgs, &[], rng).await?;
    } else {
        let choices: Vec<u32> = mine.iter().map(|&a| a as u32).collect();
        let got = run_ot(mesh, &group, 1, &[], &choices, rng).await?;
        if got.len() != s {
            return Err(Error::Protocol("OT returned the wrong count".into()));
        }
        for (alpha, m) in mine.iter().zip(&got) {
            let u = dec_int(m)?;
            // a_i = α_i − B·u_i
            digit_shares.push(BigInt::from(*alpha) - BigInt::from(&u * b));
        }
    }
    // 3. <c> and h.
    let c_share: BigInt = digit_shares
        .iter()
        .enumerate()
        .map(|(i, d)| BigInt::from(d << (lb * i as u32)))
        .sum();
    let gx = group.g_pow(&c_share);
    mesh.send_tagged(other, TAG_DKG_H, &gx).await?;
    let gy: Elem = mesh.recv_tagged(other, TAG_DKG_H).await?;
    group.validate(&gy)?;
    let (g0, g1) = if me == 0 { (&gx, &gy) } else { (&gy, &gx) };
    let h = group.mul(g0, &group.inv(g1)?);
    // 4. E(c_i) from encryptions of the shares.
    let mut mine_ct = Vec::with_capacity(s);
    for d in &digit_shares {
        let r = group.random_exponent(rng);
        let e = if me == 0 { d.clone() } else { BigInt::from(-d) };
        mine_ct.push(Ciphertext {
            a: group.g_pow(&r),
            c: group.mul(&group.pow(&h, &r), &group.g_pow(&e)),
        });
    }
    mesh.send_tagged(other, TAG_DKG_E, &mine_ct).await?;
    let theirs: Vec<Ciphertext> = mesh.recv_tagged(other, TAG_DKG_E).await?;
    if theirs.len() != s {
        return Err(Error::Protocol(
            "wrong number of key-digit ciphertexts".into(),
        ));
    }
    let key_digits = mine_ct
        .iter()
        .zip(&theirs)
        .map(|(x, y)| {
            group.validate(&y.a)?;
            group.validate(&y.c)?;
            Ok(Ciphertext {
                a: group.mul(&x.a, &y.a),
                c: group.mul(&x.c, &y.c),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    // 5. PRF key.
    let mut contrib = [0u8; 32];
    rng.fill_bytes(&mut contrib);
    mesh.send_tagged(other, TAG_DKG_PRF, &contrib).await?;
    let other_contrib: [u8; 32] = mesh.recv_tagged(other, TAG_DKG_PRF).await?;
    let mut prf_key = [0u8; 32];
    for (k, (a, b)) in prf_key.iter_mut().zip(contrib.iter().zip(&other_contrib)) {
        *k = a ^ b;
    }
    let pk = PublicKey {
        params: *params,
        h,
        key_digits,
        layout: KeyLayout::Base,
    };
    let ek = EvalKey {
        party: me as u8,
        c_share,
        digit_shares,
        prf_key,
    };
    Ok((pk, ek))
}

/// Output of [`l2_shares`] for one party: its `L2(x_j)` shares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct L2Batch {
    /// One share per input bit.
    pub shares: Vec<L2Share>,
}

// Stored and sent in the coterie envelope as `HSl2` (a batch of level-2 shares).
coterie_base::versioned! {
    L2Batch => b"HSl2" v 1,
}

impl L2Batch {
    /// Checks a decoded batch: size, every share within its bounds (at most
    /// `max_bits`-bit bounds).
    pub fn validate(&self, max_bits: u32) -> Result<()> {
        if self.shares.len() > MAX_BATCH {
            return Err(Error::Malformed("bad level-2 batch header".into()));
        }
        self.shares.iter().try_for_each(|s| s.validate(max_bits))
    }
}

/// Fig. 2: party 0 loads its bits `xs` as level-2 shares with one string OT per bit (party 1
/// passes `&[]` and `n = xs.len()` is sent implicitly by the OT batch).
///
/// # Example
///
/// After [`dkg`], party 0 loads the bits `1, 0` as level-2 shares:
///
/// ```
/// use coterie_hss::protocol::{dkg, l2_shares};
/// use coterie_hss::scheme::Params;
/// use coterie_math::bigint::BigInt;
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
/// use rand::SeedableRng;
/// let params = Params::insecure_toy(4, 16, 10);
/// let rt = tokio::runtime::Runtime::new().unwrap();
/// let batches = rt.block_on(async move {
///     let tasks: Vec<_> = InMemoryMesh::group(2, MeshOptions::default())
///         .into_iter()
///         .enumerate()
///         .map(|(i, mut mesh)| {
///             tokio::spawn(async move {
///                 let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(10 + i as u64); // insecure
///                 let (pk, ek) = dkg(&mut mesh, &params, &mut rng).await.unwrap();
///                 let bits: &[bool] = if i == 0 { &[true, false] } else { &[] };
///                 let batch = l2_shares(&mut mesh, &pk, &ek, bits, 2, &mut rng).await.unwrap();
///                 mesh.close().await.unwrap();
///                 batch
///             })
///         })
///         .collect();
///     let mut out = Vec::new();
///     for t in tasks {
///         out.push(t.await.unwrap());
///     }
///     out
/// });
/// let y: Vec<BigInt> = (0..2)
///     .map(|j| BigInt::from(&batches[0].shares[j].y - &batches[1].shares[j].y))
///     .collect();
/// assert_eq!(y, [BigInt::from(1), BigInt::from(0)]);
/// ```
pub async fn l2_shares<M: Mesh, R: Rng + Send>(
    mesh: &mut M,
    pk: &PublicKey,
    ek: &EvalKey,
    xs: &[bool],
    n: usize,
    rng: &mut R,
) -> Result<L2Batch> {
    let me = check_two(mesh)?;
    if ek.party as usize != me || n > MAX_BATCH || (me == 0 && xs.len() != n) {
        return Err(Error::Protocol("bad L2S arguments".into()));
    }
    let group = Group::new(pk.params.group);
    let t = pk.c_share_bits();
    let lambda = pk.params.stat_bits;
    let len = ((t + lambda) as usize).div_ceil(8) + 1;
    let cb = BigInt::from(1) << (t + lambda + 1);
    let shares = if me == 1 {
        let mut msgs = Vec::with_capacity(n);
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let r = bigint::random_below(rng, &(BigInt::from(1) << (t + lambda)))
                .map_err(|e| Error::Protocol(e.to_string()))?;
            msgs.push(vec![
                enc_int(&r, len)?,
                enc_int(&BigInt::from(&r - &ek.c_share), len)?,
            ]);
            out.push(L2Share {
                y: BigInt::new(),
                yc: r,
                y_bound: BigInt::from(1),
                yc_bound: cb.clone(),
            });
        }
        run_ot(mesh, &group, 1, &msgs, &[], rng).await?;
        out
    } else {
        let choices: Vec<u32> = xs.iter().map(|&x| u32::from(x)).collect();
        let got = run_ot(mesh, &group, 1, &[], &choices, rng).await?;
        xs.iter()
            .zip(&got)
            .map(|(&x, m)| {
                let rp = dec_int(m)?;
                let yc = if x { rp + &ek.c_share } else { rp };
                Ok(L2Share {
                    y: BigInt::from(u8::from(x)),
                    yc,
                    y_bound: BigInt::from(1),
                    yc_bound: cb.clone(),
                })
            })
            .collect::<Result<Vec<_>>>()?
    };
    Ok(L2Batch { shares })
}

/// Leakage-absorbing pads from **two OTs** (paper Sec. 4.4.1: "a pad can be generated using two
/// oblivious transfers"; the protocol itself is not given there — spec §11 item 9 — so this is
/// this crate's construction, semi-honest).
///
/// Party 0 picks a bit `b_A`, party 1 a bit `b_B`; the pad is `b = b_A ⊕ b_B = b_A + b_B − 2·b_A·b_B`,
/// known to neither. With `c = c_0 − c_1` (the servers' key shares):
///
/// 1. OT #1, party 1 chooses `b_B`, party 0 offers `(r₁, r₁ − c_0)`: `L2(b_B) = ((0, r₁),
///    (−b_B, m₁ + b_B·c_1))` — Fig. 2 with the roles swapped; write its `<b_B·c>` as `(s_0, s_1)`.
/// 2. OT #2, party 0 chooses `b_A`; party 1 offers, for `j ∈ {0, 1}`, the three strings
///    `(r₂ − j·c_1, ρ + j·b_B, ρ' + j·s_1)`: the first gives `L2(b_A)` (Fig. 2), the second
///    `<b_A·b_B> = (u, ρ)`, the third `<b_A·b_B·c> = (b_A·s_0 − v, −ρ')`.
/// 3. `L2(b) = L2(b_A) + L2(b_B) − 2·L2(b_A·b_B)`.
///
/// Returns `n` pads (without the `<b ⊕ c_i>` precomputation, which is local:
/// [`crate::leakage::precompute_pad`]).
///
/// # Example
///
/// ```
/// use coterie_hss::protocol::{dkg, pads};
/// use coterie_hss::scheme::Params;
/// use coterie_math::bigint::BigInt;
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
/// use rand::SeedableRng;
/// let params = Params::insecure_toy(1, 12, 10);
/// let rt = tokio::runtime::Runtime::new().unwrap();
/// let out = rt.block_on(async move {
///     let tasks: Vec<_> = InMemoryMesh::group(2, MeshOptions::default())
///         .into_iter()
///         .enumerate()
///         .map(|(i, mut mesh)| {
///             tokio::spawn(async move {
///                 let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(20 + i as u64); // insecure
///                 let (pk, ek) = dkg(&mut mesh, &params, &mut rng).await.unwrap();
///                 let pads = pads(&mut mesh, &pk, &ek, 3, &mut rng).await.unwrap();
///                 mesh.close().await.unwrap();
///                 (ek, pads)
///             })
///         })
///         .collect();
///     let mut out = Vec::new();
///     for t in tasks {
///         out.push(t.await.unwrap());
///     }
///     out
/// });
/// let ((ek0, p0), (ek1, p1)) = (&out[0], &out[1]);
/// let c = BigInt::from(&ek0.c_share - &ek1.c_share);
/// for (a, b) in p0.iter().zip(p1) {
///     // Each pad is L2(b) of a random bit b that neither party knows.
///     let bit = BigInt::from(&a.b.y - &b.b.y);
///     assert!(bit == 0 || bit == 1);
///     assert_eq!(BigInt::from(&a.b.yc - &b.b.yc), bit * &c);
/// }
/// ```
pub async fn pads<M: Mesh, R: Rng + Send>(
    mesh: &mut M,
    pk: &PublicKey,
    ek: &EvalKey,
    n: usize,
    rng: &mut R,
) -> Result<Vec<crate::leakage::Pad>> {
    let me = check_two(mesh)?;
    if ek.party as usize != me || n > MAX_BATCH {
        return Err(Error::Protocol("bad pad arguments".into()));
    }
    let group = Group::new(pk.params.group);
    let t = pk.c_share_bits();
    let lambda = pk.params.stat_bits;
    let rbits = t + lambda;
    let len = ((rbits + lambda + 8) as usize).div_ceil(8) + 1;
    let rnd = |rng: &mut R, bits: u32| -> Result<BigInt> {
        bigint::random_below(rng, &(BigInt::from(1) << bits))
            .map_err(|e| Error::Protocol(e.to_string()))
    };
    let bits: Vec<bool> = (0..n).map(|_| rng.next_u32() & 1 == 1).collect();
    let c = &ek.c_share;
    // OT #1: party 1 chooses b_B; party 0 offers (r1, r1 − c_0).
    let mut s_mine = Vec::with_capacity(n); // this party's share of <b_B·c>
    let mut l2_bb: Vec<(BigInt, BigInt)> = Vec::with_capacity(n); // (<b_B>, <b_B c>) shares
    if me == 0 {
        let mut msgs = Vec::with_capacity(n);
        for _ in 0..n {
            let r1 = rnd(rng, rbits)?;
            msgs.push(vec![
                enc_int(&r1, len)?,
                enc_int(&BigInt::from(&r1 - c), len)?,
            ]);
            l2_bb.push((BigInt::new(), r1.clone()));
            s_mine.push(r1);
        }
        run_ot(mesh, &group, 0, &msgs, &[], rng).await?;
    } else {
        let choices: Vec<u32> = bits.iter().map(|&b| u32::from(b)).collect();
        let got = run_ot(mesh, &group, 0, &[], &choices, rng).await?;
        for (&bb, m) in bits.iter().zip(&got) {
            let s1 = if bb { dec_int(m)? + c } else { dec_int(m)? };
            l2_bb.push((BigInt::from(-i32::from(bb)), s1.clone()));
            s_mine.push(s1);
        }
    }
    // OT #2: party 0 chooses b_A; party 1 offers (r2 − j c_1, ρ + j b_B, ρ' + j s_1).
    let mut out = Vec::with_capacity(n);
    let bound_y = BigInt::from(1) << (lambda + 4);
    let bound_yc = BigInt::from(1) << (rbits + lambda + 6);
    let mk = |y: BigInt, yc: BigInt| crate::leakage::Pad {
        b: L2Share {
            y,
            yc,
            y_bound: bound_y.clone(),
            yc_bound: bound_yc.clone(),
        },
        b_xor_c: vec![],
    };
    if me == 1 {
        let mut msgs = Vec::with_capacity(n);
        let mut st = Vec::with_capacity(n);
        for (i, &bb) in bits.iter().enumerate() {
            let r2 = rnd(rng, rbits)?;
            let rho = rnd(rng, lambda)?;
            let rho2 = rnd(rng, rbits + lambda + 2)?;
            let row = (0..2u32)
                .map(|j| {
                    let mut v = enc_int(&(&r2 - BigInt::from(c * j)), len)?;
                    v.extend(enc_int(&BigInt::from(&rho + j * u32::from(bb)), len)?);
                    v.extend(enc_int(&(&rho2 + BigInt::from(&s_mine[i] * j)), len)?);
                    Ok(v)
                })
                .collect::<Result<Vec<_>>>()?;
            msgs.push(row);
            st.push((r2, rho, rho2));
        }
        run_ot(mesh, &group, 1, &msgs, &[], rng).await?;
        for ((r2, rho, rho2), (bby, bbyc)) in st.into_iter().zip(l2_bb) {
            // L2(b_A) = (0, r2); L2(b_A b_B) = (ρ, −ρ'); L2(b_B) = (bby, bbyc)
            let y = bby - BigInt::from(2 * &rho);
            let yc = r2 + bbyc + BigInt::from(2 * &rho2);
            out.push(mk(y, yc));
        }
    } else {
        let choices: Vec<u32> = bits.iter().map(|&b| u32::from(b)).collect();
        let got = run_ot(mesh, &group, 1, &[], &choices, rng).await?;
        for (i, (&ba, m)) in bits.iter().zip(&got).enumerate() {
            if m.len() != 3 * (len + 1) {
                return Err(Error::Protocol("pad OT message of the wrong length".into()));
            }
            let m2 = dec_int(&m[..len + 1])?;
            let u = dec_int(&m[len + 1..2 * (len + 1)])?;
            let v = dec_int(&m[2 * (len + 1)..])?;
            let bai = i32::from(ba);
            // L2(b_A) = (b_A, m2 + b_A c_0); L2(b_A b_B) = (u, b_A s_0 − v); L2(b_B) = (0, r1)
            let y = BigInt::from(bai) - BigInt::from(2 * &u);
            let yc = m2 + BigInt::from(c * bai) + &l2_bb[i].1
                - (2 * (BigInt::from(&s_mine[i] * bai) - v));
            out.push(mk(y, yc));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn simplest_ot_1_of_n() {
        let g = Group::insecure_toy128();
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(60);
        let (st, a) = ot::sender_setup(&g, &mut rng);
        let choices = [0u32, 3, 1, 2, 3];
        let (rs, bs) = ot::receiver_choose(&g, &a, &choices, &mut rng).unwrap();
        let msgs: Vec<Vec<Vec<u8>>> = (0..5)
            .map(|i| (0..4).map(|j| vec![i as u8 * 10 + j as u8; 12]).collect())
            .collect();
        let cts = ot::sender_transfer(&g, &st, &bs, &msgs).unwrap();
        let got = ot::receiver_open(&g, &rs, &a, &cts).unwrap();
        for (i, &c) in choices.iter().enumerate() {
            assert_eq!(got[i], msgs[i][c as usize]);
            // the other messages stay masked
            for j in 0..4 {
                if j != c as usize {
                    assert_ne!(cts[i][j], msgs[i][j]);
                }
            }
        }
    }
}
