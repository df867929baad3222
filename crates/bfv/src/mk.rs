//! Multi-key BFV (seed 001 §3, after Chen–Dai–Kim–Song, CCS'19): relinearization keys over a
//! common reference string, homomorphic multiplication of ciphertexts under different users'
//! keys with either of CDKS19's relinearizations, and threshold decryption (PartDec / Merge).
//! Plain functions on values; moving keys, shares and ciphertexts between parties is the
//! caller's business.
//!
//! * Users hold ordinary [`SecretKey`]s (seed 001 uses [`crate::Params::seed001`], whose secrets
//!   are Gaussian) and [`PublicKey`]s with their own `p_1` (the paper's EncKeyGen); a user's
//!   ciphertext is a two-part ciphertext labelled with the user's id ([`encrypt`], [`label`]),
//!   i.e. a [`KeySet::Parties`] ciphertext of one id.
//! * [`MkCrs`]: the common vector `a ∈ R_q^ℓ` (ℓ = gadget rows), expanded from a 32-byte seed.
//! * [`MkRelinKey`] (§3.1): user `i`'s public `b_i = −s_i·a + e_i` and the uni-encryption
//!   `D_i = [d_i0 | d_i1 | d_i2]` of `s_i`.
//! * [`mul`] (§3.6): extension to the sorted union of the ids, the exact tensor product
//!   ([`crate::eval::tensor`] + [`crate::eval::scale_and_round`], a [`KeySet::PartiesTensor`]
//!   ciphertext of `(d+1)²` parts), then a relinearization ([`Relin`]):
//!   method 2 "on the fly" ([`relinearize_on_the_fly`], grouped per user or not) or method 1 with
//!   the precomputed pairwise keys `K_{i,j} = Convert(D_i, b_j)` ([`SharedRelinKey`],
//!   [`relinearize_shared`]).
//! * Threshold decryption (§3.7): [`part_dec`] (`m_i = c_i·s_i + e_i`, `e_i` from a [`Smudging`]
//!   distribution) and [`merge`].
//!
//! The gadget is any [`Decomposition`]: the RNS gadget (one row per prime, the default of this
//! crate) or the power-of-two gadget of the paper's Table 2 (`ℓ = ⌈log q / log B⌉`,
//! [`paper_decomposition`]).
//!
//! # Choices the paper leaves open (seed 001 §9, the spec's `[DECIDE]` items)
//!
//! * **Modulus** (§9.1): a product of 61-bit-or-smaller NTT primes whose product has 220 bits
//!   ([`crate::Params::seed001`]); `t = 256` does not divide `q`, and the BFV core's exact
//!   decryption handles the `(q mod t)·m` term. Table 2's power-of-two gadget works on the
//!   RNS form by CRT reconstruction (coterie-math's `PowerOfTwoRnsDecomposer`), so `ℓ` and the
//!   relinearization key sizes are the paper's.
//! * **Digits** (§2.3, §9.2): balanced, `|digit| ≤ B/2`, `B = 2^{log b}` exactly: it halves the
//!   relinearization noise against unsigned digits.
//! * **Gaussian tail** (§2.1): every discrete Gaussian (secrets, errors, smudging) is cut at
//!   13.53 σ (coterie-math's sampler: tail mass below 2^-129), wider than the paper's `10 σ`
//!   sizing assumption; Table 3's secret-key size is the paper's convention, not ours.
//! * **`p_1`** (§3.1, §9.4): each user samples its own `p_1` (the paper's EncKeyGen); the CRS `a`
//!   is used only by the relinearization keys, so a public key needs no common randomness.
//! * **CRS** (§9.4): `a` expanded from a public 32-byte seed ([`MkCrs`]); the party flow agrees on
//!   the seed by a commit-and-open coin toss.
//! * **User order** (§3.4): the sorted union of user ids.
//! * **Relinearization** (§9.3): both methods; the party flow's server relinearizes on the fly,
//!   grouped per user ([`Relin::OnTheFly`] with `grouped: true`), which needs only the `3ℓ + ℓ`
//!   elements each user publishes.
//! * **Smudging** (§9.7): configurable ([`Smudging`]); the paper's `σ = 2^20` is the default of
//!   the party flow, [`Smudging::Statistical`] the statistically sufficient alternative with the
//!   modulus it needs ([`statistical_smudging_log_q`]).
//!
//! ```
//! use coterie_bfv::mk::{self, MkCrs, MkRelinKey, Relin, Smudging};
//! use coterie_bfv::{Context, Decomposition, Params, Plaintext, SecretKey};
//! use coterie_math::prg::Csprng;
//! let ctx = Context::new(Params::insecure_toy(256, 256).unwrap()).unwrap();
//! let mut rng = Csprng::new();
//! let crs = MkCrs::new(&ctx, &[7; 32], Decomposition::Rns).unwrap();
//! let sks: Vec<SecretKey> = (0..2).map(|_| SecretKey::generate(&ctx, &mut rng)).collect();
//! let rlks: Vec<MkRelinKey> = sks.iter().zip([1, 2])
//!     .map(|(s, id)| MkRelinKey::generate(s, id, &crs, &mut rng).unwrap()).collect();
//! let pt = |v| Plaintext::encode_coefficients(&ctx, &[v]).unwrap();
//! let x = mk::encrypt(&sks[0].public_key(&mut rng), 1, &pt(3), &mut rng).unwrap();
//! let y = mk::encrypt(&sks[1].public_key(&mut rng), 2, &pt(5), &mut rng).unwrap();
//! let z = mk::mul(&x, &y, &Relin::OnTheFly { keys: &rlks, grouped: true }).unwrap();
//! assert_eq!(z.len(), 3);
//! // Threshold decryption: each user's partial decryption, then the merge.
//! let parts: Vec<_> = sks.iter().zip([1, 2])
//!     .map(|(s, id)| mk::part_dec(s, id, &z, &Smudging::PaperSigma20, &mut rng).unwrap())
//!     .collect();
//! assert_eq!(mk::merge(&z, &parts).unwrap().coefficients().unwrap()[0], 15);
//! ```

use crate::ciphertext::{Ciphertext, KeySet};
use crate::context::{Context, Fingerprint};
use crate::encoding::Plaintext;
use crate::encrypt::decode_phase;
use crate::eval::{gadget_mul_acc, scale_and_round, tensor};
use crate::keys::{Decomposition, PublicKey, SecretKey, sample_secret, seed_from, seed_label};
use crate::multiparty::{error_ntt, sub_seed};
use crate::serial::{MAX_PARTS, check_params, decode, encode, max_size, poly_from};
use crate::{Error, Result};
use coterie_math::poly::{Poly, Representation};
use coterie_math::prg::Seed;
use coterie_math::sample::DiscreteGaussian;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;
use zeroize::Zeroize;

// ---------------------------------------------------------------------------------------------
// Ciphertexts of users.

/// Labels a fresh single-key ciphertext (two parts under one key, [`KeySet::Powers`]) as user
/// `id`'s multi-key ciphertext ([`KeySet::Parties`]`([id])`): the parts are unchanged.
///
/// # Errors
/// [`Error::Unsupported`] for a ciphertext that is not a two-part single-key ciphertext.
pub fn label(ct: Ciphertext, id: u64) -> Result<Ciphertext> {
    if ct.keys != KeySet::Powers || ct.parts.len() != 2 {
        return Err(Error::Unsupported(format!(
            "labelling a {}-part ciphertext under {:?} as one user's",
            ct.parts.len(),
            ct.keys
        )));
    }
    let (ctx, level) = (ct.ctx.clone(), ct.level);
    Ciphertext::from_parts_with_keys(&ctx, level, ct.parts, KeySet::Parties(vec![id]))
}

/// Seed 001 §3.2: encrypts `pt` under user `id`'s public key (`(Δ·m + u·p_0 + e_0, u·p_1 + e_1)`,
/// `u` from the secret distribution), labelled with `id`.
///
/// # Errors
/// As [`PublicKey::encrypt`].
pub fn encrypt<R: rand::CryptoRng + ?Sized>(
    pk: &PublicKey,
    id: u64,
    pt: &Plaintext,
    rng: &mut R,
) -> Result<Ciphertext> {
    label(pk.encrypt(pt, rng)?, id)
}

fn parties(ct: &Ciphertext) -> Result<&[u64]> {
    match &ct.keys {
        KeySet::Parties(ids) => Ok(ids),
        k => Err(Error::Unsupported(format!(
            "a multi-key operation on a ciphertext under {k:?}"
        ))),
    }
}

/// The sorted union of the user ids of two multi-key ciphertexts (seed 001 §3.4: the canonical
/// order of an extended ciphertext is ascending user id).
///
/// # Errors
/// [`Error::Unsupported`] if either is not a [`KeySet::Parties`] ciphertext.
pub fn union_ids(a: &Ciphertext, b: &Ciphertext) -> Result<Vec<u64>> {
    let mut ids: Vec<u64> = parties(a)?.iter().chain(parties(b)?).copied().collect();
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

/// Seed 001 §3.4–3.5: HomAdd, extending both to the sorted union of their ids first.
///
/// # Errors
/// As [`union_ids`], [`Ciphertext::extend_to`] and [`Ciphertext::add`] (other context or level).
pub fn add(a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
    let ids = union_ids(a, b)?;
    a.extend_to(&ids)?.add(&b.extend_to(&ids)?)
}

/// The tensor product of two multi-key ciphertexts, extended to the sorted union of their ids,
/// scaled and rounded (seed 001 §3.6 steps 1–2): a [`KeySet::PartiesTensor`] ciphertext of
/// `(d̄+1)²` parts, part `i·(d̄+1) + j` under `s̄_i·s̄_j`, `s̄ = (1, s_{id_1}, …)`. Decrypts with
/// [`crate::encrypt::decrypt_multi_key`]; [`relinearize`] brings it back to `d̄ + 1` parts.
///
/// # Errors
/// As [`add`], and those of [`crate::eval::tensor`].
pub fn mul_no_relin(a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
    let ids = union_ids(a, b)?;
    scale_and_round(&tensor(&a.extend_to(&ids)?, &b.extend_to(&ids)?)?)
}

/// Seed 001 §3.6: HomMul = [`mul_no_relin`] followed by [`relinearize`] with `relin`. The output
/// has `d̄ + 1` parts over the sorted union of the ids.
///
/// # Errors
/// As [`mul_no_relin`] and [`relinearize`] (a missing key names the user or pair).
pub fn mul(a: &Ciphertext, b: &Ciphertext, relin: &Relin<'_>) -> Result<Ciphertext> {
    relinearize(&mul_no_relin(a, b)?, relin)
}

/// The phase `c_0 + Σ_i c_i·s_{id_i}` of a multi-key ciphertext with all keys in one hand
/// (seed 001 §3.3; secret). Re-export of [`crate::encrypt::phase_multi_key`].
pub use crate::encrypt::phase_multi_key as phase;

/// The noise budget `−log2(2‖v‖_∞)` in bits of a multi-key ciphertext under all its users' keys
/// (`v` the invariant noise of [`crate::noise`]; decryption is correct while it is positive).
/// Seed 001 §9.5's empirical noise meter. Scalar plaintext moduli only.
///
/// # Errors
/// As [`phase`]; [`Error::Unsupported`] for a cyclotomic plaintext modulus.
pub fn noise_budget(ct: &Ciphertext, keys: &[(u64, &SecretKey)]) -> Result<f64> {
    let x = phase(ct, keys)?;
    let m = decode_phase(&ct.ctx, x.clone(), ct.level)?;
    Ok(-1.0 - crate::noise::invariant_noise_of_phase_log2(&ct.ctx, &x, &m, ct.level)?)
}

/// `log2` of the absolute noise `‖[c_0 + Σ_i c_i·s_{id_i}]_Q − Δ·m‖_∞` of a multi-key ciphertext
/// (up to the `(Q mod t)·m` term, at most `t` bits), the `B` that [`Smudging::Statistical`] must
/// bound. Scalar plaintext moduli only.
///
/// # Errors
/// As [`noise_budget`].
pub fn noise_log2(ct: &Ciphertext, keys: &[(u64, &SecretKey)]) -> Result<f64> {
    let budget = noise_budget(ct, keys)?;
    let q = crate::noise::log2_big(&ct.ctx.modulus_at(ct.level)?);
    let t = (ct.ctx.scalar_t()? as f64).log2();
    // ‖v‖ = t·‖e‖/Q, budget = −1 − log2‖v‖.
    Ok(-1.0 - budget + q - t)
}

// ---------------------------------------------------------------------------------------------
// CRS and relinearization keys.

/// Table 2's gadget (seed 001 §6): `log B = 46 / 40 / 34` for up to 2 / 4 / 8 users, which gives
/// `ℓ = 5 / 6 / 7` rows at `log q = 220` ([`crate::Params::seed001`]). The paper fixes the base
/// per number of users `k` because the relinearization noise grows with `k`; for `k` between the
/// table's columns the base of the next column up is used (its noise bound covers fewer users).
///
/// # Errors
/// [`Error::InvalidParameter`] for `k < 2` (re-encryption and multi-key evaluation need two
/// users; the paper does not consider `k = 1`) or `k > 8` (no base in Table 2).
pub fn paper_decomposition(k: usize) -> Result<Decomposition> {
    let base_log = match k {
        2 => 46,
        3..=4 => 40,
        5..=8 => 34,
        _ => {
            return Err(Error::InvalidParameter(format!(
                "seed 001's Table 2 gives gadget bases for 2 to 8 users, not {k}"
            )));
        }
    };
    Ok(Decomposition::PowerOfTwo { base_log })
}

/// The common reference string of seed 001 §3.1 (CDKS19): `a ∈ R_q^ℓ`, one uniform polynomial
/// per gadget row, expanded deterministically from a public 32-byte seed (sub-seed labelled
/// `mk-crs`, so it never coincides with the CRS of another protocol of this crate).
#[derive(Clone, Debug)]
pub struct MkCrs {
    ctx: Context,
    seed: Seed,
    decomposition: Decomposition,
    a: Vec<Poly>,
}

impl MkCrs {
    /// Expands the CRS for `ctx` and the gadget of `decomposition` from `seed`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a power-of-two base outside `[1, 62]`.
    pub fn new(ctx: &Context, seed: &Seed, decomposition: Decomposition) -> Result<Self> {
        let ring = &ctx.top().ring;
        let rows = decomposition.rows(ring)?;
        let sub = sub_seed(seed, b"mk-crs", 0);
        let a = (0..rows)
            .map(|l| Poly::from_seed(ring, Representation::Ntt, &sub, &seed_label(b"mk/a", l)))
            .collect::<coterie_math::Result<Vec<_>>>()?;
        Ok(MkCrs {
            ctx: ctx.clone(),
            seed: *seed,
            decomposition,
            a,
        })
    }

    /// The public seed.
    pub fn seed(&self) -> &Seed {
        &self.seed
    }

    /// The gadget.
    pub fn decomposition(&self) -> Decomposition {
        self.decomposition
    }

    /// `ℓ`, the number of gadget rows (5 / 6 / 7 for log B = 46 / 40 / 34 and log q = 220; the
    /// number of primes for the RNS gadget).
    pub fn rows(&self) -> usize {
        self.a.len()
    }

    /// The context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The vector `a` (top level, NTT form).
    pub fn a(&self) -> &[Poly] {
        &self.a
    }
}

/// User `id`'s public multi-key relinearization material (seed 001 §3.1, CDKS19's RelinKeyGen
/// with UniEnc), all rows top-level NTT form, for `ℓ` gadget rows `g_l`:
///
/// * `b[l] = −s·a[l] + e[l]` (`a` the [`MkCrs`], `e ← χ_err`);
/// * `d0[l] = −s·d1[l] + e1[l] + r·g_l`, `d1[l]` uniform, `d2[l] = r·a[l] + e2[l] + s·g_l`, with a
///   fresh `r ← χ_key` (erased after generation).
///
/// `d1` is expanded from a per-key seed, so the key holds `3ℓ` ring elements on the wire (as in
/// the paper's Table 3) plus two seeds. The key records the CRS seed it was made over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MkRelinKey {
    ctx: Context,
    id: u64,
    decomposition: Decomposition,
    crs_seed: Seed,
    d1_seed: Seed,
    b: Vec<Poly>,
    d0: Vec<Poly>,
    d1: Vec<Poly>,
    d2: Vec<Poly>,
}

impl MkRelinKey {
    /// Generates user `id`'s key from its secret key `sk` over `crs`.
    ///
    /// # Errors
    /// [`Error::Mismatch`] if `sk` and `crs` belong to different parameter sets.
    pub fn generate<R: rand::CryptoRng + ?Sized>(
        sk: &SecretKey,
        id: u64,
        crs: &MkCrs,
        rng: &mut R,
    ) -> Result<Self> {
        crs.ctx.check_same(&sk.ctx)?;
        let ctx = &crs.ctx;
        let ring = &ctx.top().ring;
        let dec = crs.decomposition;
        let mut small = vec![0i64; ctx.degree()];
        sample_secret(ctx, rng, &mut small);
        let r = Poly::from_signed(ring, &small);
        small.zeroize();
        let mut r = r?;
        r.to_ntt();
        let d1_seed = seed_from(rng);
        let rows = uni_enc_rows(sk, crs, &r, &d1_seed, rng);
        r.data_mut().zeroize();
        let [b, d0, d1, d2] = rows?;
        Ok(MkRelinKey {
            ctx: ctx.clone(),
            id,
            decomposition: dec,
            crs_seed: crs.seed,
            d1_seed,
            b,
            d0,
            d1,
            d2,
        })
    }

    /// The user id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The gadget.
    pub fn decomposition(&self) -> Decomposition {
        self.decomposition
    }

    /// The seed of the CRS the key was made over.
    pub fn crs_seed(&self) -> &Seed {
        &self.crs_seed
    }

    /// Number of gadget rows `ℓ`.
    pub fn rows(&self) -> usize {
        self.b.len()
    }

    /// The context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The public vector `b` (top level, NTT form).
    pub fn b(&self) -> &[Poly] {
        &self.b
    }

    /// The uni-encryption `D = [d0 | d1 | d2]` (top level, NTT form).
    pub fn d(&self) -> [&[Poly]; 3] {
        [&self.d0, &self.d1, &self.d2]
    }

    /// Versioned encoding: fingerprint, id, gadget, the CRS seed, the seed of `d1`, then `b`,
    /// `d0`, `d2` packed (`3ℓ` ring elements).
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&MkRelinKeyWire {
            params: *self.ctx.fingerprint(),
            id: self.id.to_le_bytes(),
            decomposition: self.decomposition,
            crs_seed: self.crs_seed,
            d1_seed: self.d1_seed,
            b: packed(&self.b),
            d0: packed(&self.d0),
            d2: packed(&self.d2),
        })
    }

    /// Bounded decoding for `ctx` (re-expands `d1`). Rejects another parameter set, a gadget
    /// base outside `[1, 62]`, a row count other than the gadget's, polynomials of the wrong
    /// size and unreduced residues.
    ///
    /// # Errors
    /// [`Error::Base`] (envelope), [`Error::Mismatch`], [`Error::Malformed`].
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let w: MkRelinKeyWire = decode(bytes, gadget_max(ctx, 3))?;
        check_params(ctx, &w.params)?;
        let ring = ctx.ring(ctx.max_level())?;
        let rows = w.decomposition.rows(&ring)?;
        let b = unpacked(ctx, &w.b, rows, "b")?;
        let d0 = unpacked(ctx, &w.d0, rows, "d0")?;
        let d2 = unpacked(ctx, &w.d2, rows, "d2")?;
        let d1 = (0..rows)
            .map(|l| Poly::from_seed(&ring, Representation::Ntt, &w.d1_seed, &d1_label(l)))
            .collect::<coterie_math::Result<Vec<_>>>()?;
        Ok(MkRelinKey {
            ctx: ctx.clone(),
            id: u64::from_le_bytes(w.id),
            decomposition: w.decomposition,
            crs_seed: w.crs_seed,
            d1_seed: w.d1_seed,
            b,
            d0,
            d1,
            d2,
        })
    }
}

/// The rows `(b[l], d0[l], d1[l], d2[l])` of [`MkRelinKey::generate`] for the ephemeral `r`
/// (top-level NTT form).
fn uni_enc_rows<R: rand::CryptoRng + ?Sized>(
    sk: &SecretKey,
    crs: &MkCrs,
    r: &Poly,
    d1_seed: &Seed,
    rng: &mut R,
) -> Result<[Vec<Poly>; 4]> {
    let ctx = &crs.ctx;
    let ring = &ctx.top().ring;
    let dec = crs.decomposition;
    let rows = crs.a.len();
    let mut out: [Vec<Poly>; 4] = std::array::from_fn(|_| Vec::with_capacity(rows));
    for (l, a) in crs.a.iter().enumerate() {
        let b = sk.rlwe_mask(a, rng);
        let d1 = Poly::from_seed(ring, Representation::Ntt, d1_seed, &d1_label(l))?;
        let mut d0 = sk.rlwe_mask(&d1, rng);
        dec.add_gadget_multiple(&mut d0, r, l)?;
        let mut d2 = a * r;
        d2 += &error_ntt(ctx, rng)?;
        dec.add_gadget_multiple(&mut d2, &sk.ntt, l)?;
        for (v, p) in out.iter_mut().zip([b, d0, d1, d2]) {
            v.push(p);
        }
    }
    Ok(out)
}

fn d1_label(l: usize) -> Vec<u8> {
    seed_label(b"mk/d1", l)
}

/// Checks that relinearization keys fit a ciphertext's context and agree on the gadget and CRS.
fn check_keys<'a>(
    ctx: &Context,
    keys: impl Iterator<Item = (Decomposition, &'a Seed, &'a Context)>,
) -> Result<Decomposition> {
    let mut first: Option<(Decomposition, &Seed)> = None;
    for (dec, seed, kctx) in keys {
        ctx.check_same(kctx)?;
        match first {
            None => first = Some((dec, seed)),
            Some((d, s)) => {
                if d != dec || s != seed {
                    return Err(Error::Mismatch(
                        "multi-key relinearization keys of different gadgets or CRSs".into(),
                    ));
                }
            }
        }
    }
    first
        .map(|(d, _)| d)
        .ok_or_else(|| Error::InvalidParameter("no relinearization keys".into()))
}

/// The pairwise key `K_{i,j} = Convert(D_i, b_j) = [k0 | k1 | k2]` of CDKS19's method 1 (seed
/// 001 §3.6): `k0[l] = ⟨g⁻¹(b_j[l]), d_i0⟩`, `k1[l] = ⟨g⁻¹(b_j[l]), d_i1⟩`, `k2 = d_i2`, so that
/// `k0[l] + s_i·k1[l] + s_j·k2[l] ≈ s_i·s_j·g_l`. Public (computed by anyone from the users'
/// [`MkRelinKey`]s).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvertedKey {
    ctx: Context,
    i: u64,
    j: u64,
    decomposition: Decomposition,
    crs_seed: Seed,
    k0: Vec<Poly>,
    k1: Vec<Poly>,
    k2: Vec<Poly>,
}

impl ConvertedKey {
    /// `K_{i,j}` from user `i`'s `D_i` and user `j`'s `b_j` (`i = j` allowed).
    ///
    /// # Errors
    /// [`Error::Mismatch`] if the keys belong to different parameter sets, gadgets or CRSs.
    pub fn convert(key_i: &MkRelinKey, key_j: &MkRelinKey) -> Result<Self> {
        let ctx = &key_i.ctx;
        let dec = check_keys(
            ctx,
            [key_i, key_j]
                .into_iter()
                .map(|k| (k.decomposition, &k.crs_seed, &k.ctx)),
        )?;
        let ring = &ctx.top().ring;
        let rows = key_i.rows();
        let (mut k0, mut k1) = (Vec::with_capacity(rows), Vec::with_capacity(rows));
        for bl in &key_j.b {
            let mut x = bl.clone();
            x.to_coeff();
            let mut acc = [
                Poly::zero(ring, Representation::Ntt),
                Poly::zero(ring, Representation::Ntt),
            ];
            gadget_mul_acc(
                ctx,
                &x,
                dec,
                &[(key_i.d0.as_slice(), 0), (key_i.d1.as_slice(), 1)],
                &mut acc,
            )?;
            let [a0, a1] = acc;
            k0.push(a0);
            k1.push(a1);
        }
        Ok(ConvertedKey {
            ctx: ctx.clone(),
            i: key_i.id,
            j: key_j.id,
            decomposition: dec,
            crs_seed: key_i.crs_seed,
            k0,
            k1,
            k2: key_i.d2.clone(),
        })
    }

    /// The ordered pair `(i, j)`.
    pub fn pair(&self) -> (u64, u64) {
        (self.i, self.j)
    }

    /// `[k0 | k1 | k2]` (top level, NTT form).
    pub fn k(&self) -> [&[Poly]; 3] {
        [&self.k0, &self.k1, &self.k2]
    }

    /// Versioned encoding (fingerprint, pair, gadget, CRS seed, `k0`, `k1`, `k2` packed:
    /// `3ℓ` ring elements).
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&ConvertedKeyWire {
            params: *self.ctx.fingerprint(),
            i: self.i.to_le_bytes(),
            j: self.j.to_le_bytes(),
            decomposition: self.decomposition,
            crs_seed: self.crs_seed,
            k0: packed(&self.k0),
            k1: packed(&self.k1),
            k2: packed(&self.k2),
        })
    }

    /// Bounded decoding for `ctx` (checks as [`MkRelinKey::from_bytes`]).
    ///
    /// # Errors
    /// [`Error::Base`] (envelope), [`Error::Mismatch`], [`Error::Malformed`].
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let w: ConvertedKeyWire = decode(bytes, gadget_max(ctx, 3))?;
        check_params(ctx, &w.params)?;
        let rows = w.decomposition.rows(&ctx.top().ring)?;
        Ok(ConvertedKey {
            ctx: ctx.clone(),
            i: u64::from_le_bytes(w.i),
            j: u64::from_le_bytes(w.j),
            decomposition: w.decomposition,
            crs_seed: w.crs_seed,
            k0: unpacked(ctx, &w.k0, rows, "k0")?,
            k1: unpacked(ctx, &w.k1, rows, "k1")?,
            k2: unpacked(ctx, &w.k2, rows, "k2")?,
        })
    }
}

/// The shared relinearization key of method 1: the [`ConvertedKey`]s `K_{i,j}` of ordered pairs
/// of users (`k²` of them for `k` users, `3ℓ` ring elements each).
#[derive(Clone, Debug, Default)]
pub struct SharedRelinKey {
    pairs: BTreeMap<(u64, u64), ConvertedKey>,
}

impl SharedRelinKey {
    /// `K_{i,j}` for every ordered pair of the users of `keys` (including `i = j`).
    ///
    /// # Errors
    /// As [`ConvertedKey::convert`]; [`Error::InvalidParameter`] for two keys of one user id.
    pub fn generate(keys: &[MkRelinKey]) -> Result<Self> {
        let mut out = SharedRelinKey::default();
        for (n, ki) in keys.iter().enumerate() {
            if keys[..n].iter().any(|k| k.id == ki.id) {
                return Err(Error::InvalidParameter(format!(
                    "two relinearization keys of user {}",
                    ki.id
                )));
            }
            for kj in keys {
                out.insert(ConvertedKey::convert(ki, kj)?);
            }
        }
        Ok(out)
    }

    /// Adds (or replaces) one pair's key.
    pub fn insert(&mut self, key: ConvertedKey) {
        self.pairs.insert((key.i, key.j), key);
    }

    /// The key of the ordered pair `(i, j)`, if present.
    pub fn get(&self, i: u64, j: u64) -> Option<&ConvertedKey> {
        self.pairs.get(&(i, j))
    }

    /// Number of pairs held.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether no pair is held.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}

/// How [`relinearize`] (and [`mul`]) relinearizes a tensor (seed 001 §3.6).
#[derive(Clone, Copy, Debug)]
pub enum Relin<'a> {
    /// Method 2, "on the fly", with the users' [`MkRelinKey`]s (looked up by id). `grouped`:
    /// one `g⁻¹(X_i)·[d_i0 | d_i1]` per user `i` with `X_i = Σ_j x_{i,j}` (`d̄` such products and
    /// slightly less noise); otherwise one per pair `(i, j)` as the spec's listing (`d̄²`). The
    /// two give the same plaintext.
    OnTheFly {
        /// The users' keys (any order; at least those of the ciphertext's users).
        keys: &'a [MkRelinKey],
        /// Group the `x_{i,j}` per user before the second decomposition.
        grouped: bool,
    },
    /// Method 1, with the precomputed pairwise keys `K_{i,j}`.
    Shared(&'a SharedRelinKey),
}

/// Relinearizes a [`KeySet::PartiesTensor`] ciphertext of `(d+1)²` parts to `d + 1` parts under
/// the same ids, by `relin`.
///
/// # Errors
/// [`Error::Unsupported`] for another kind of ciphertext; [`Error::MissingKey`] naming the first
/// user (or pair) without a key; [`Error::Mismatch`] for keys of another context, gadget or CRS.
pub fn relinearize(ct: &Ciphertext, relin: &Relin<'_>) -> Result<Ciphertext> {
    match *relin {
        Relin::OnTheFly { keys, grouped } => relinearize_on_the_fly(ct, keys, grouped),
        Relin::Shared(k) => relinearize_shared(ct, k),
    }
}

fn tensor_ids(ct: &Ciphertext) -> Result<&[u64]> {
    match &ct.keys {
        KeySet::PartiesTensor(ids) => Ok(ids),
        k => Err(Error::Unsupported(format!(
            "multi-key relinearization of a ciphertext under {k:?}"
        ))),
    }
}

/// `c'_0 = c_{0,0}`, `c'_i = c_{0,i} + c_{i,0}`, plus the accumulated (NTT-form) corrections.
fn finish_relin(ct: &Ciphertext, ids: &[u64], acc: Vec<Poly>) -> Result<Ciphertext> {
    let dd = ids.len() + 1;
    let mut parts = Vec::with_capacity(dd);
    for (k, mut a) in acc.into_iter().take(dd).enumerate() {
        a.to_coeff();
        let mut p = ct.parts[k].clone();
        if k > 0 {
            p.try_add_assign(&ct.parts[k * dd])?;
        }
        p.try_add_assign(&a)?;
        parts.push(p);
    }
    Ciphertext::from_parts_with_keys(&ct.ctx, ct.level, parts, KeySet::Parties(ids.to_vec()))
}

/// Method 2 of seed 001 §3.6 ("on the fly", CDKS19): for every `1 ≤ i, j ≤ d`,
/// `x_{i,j} = ⟨g⁻¹(c_{i,j}), b_j⟩`, `c'_j += ⟨g⁻¹(c_{i,j}), d_i2⟩`, and
/// `(c'_0, c'_i) += g⁻¹(x)·[d_i0 | d_i1]` for `x = x_{i,j}` (ungrouped) or once per `i` for
/// `x = X_i = Σ_j x_{i,j}` (`grouped`). See [`relinearize`] for the errors.
pub fn relinearize_on_the_fly(
    ct: &Ciphertext,
    keys: &[MkRelinKey],
    grouped: bool,
) -> Result<Ciphertext> {
    let ids = tensor_ids(ct)?;
    let ks = ids
        .iter()
        .map(|id| {
            keys.iter().find(|k| k.id == *id).ok_or_else(|| {
                Error::MissingKey(format!("multi-key relinearization key of user {id}"))
            })
        })
        .collect::<Result<Vec<&MkRelinKey>>>()?;
    let dec = check_keys(
        &ct.ctx,
        ks.iter().map(|k| (k.decomposition, &k.crs_seed, &k.ctx)),
    )?;
    let ctx = &ct.ctx;
    let ring = ctx.ring(ct.level)?;
    let d = ids.len();
    let dd = d + 1;
    // acc[0..=d]: corrections of c'_0..c'_d; acc[dd]: the x (or X_i) being accumulated.
    let zero = || Poly::zero(&ring, Representation::Ntt);
    let mut acc: Vec<Poly> = (0..=dd).map(|_| zero()).collect();
    for i in 1..=d {
        let ki = ks[i - 1];
        let second = [(ki.d0.as_slice(), 0), (ki.d1.as_slice(), i)];
        for j in 1..=d {
            let c = &ct.parts[i * dd + j];
            gadget_mul_acc(
                ctx,
                c,
                dec,
                &[(ks[j - 1].b.as_slice(), dd), (ki.d2.as_slice(), j)],
                &mut acc,
            )?;
            if !grouped {
                let mut x = std::mem::replace(&mut acc[dd], zero());
                x.to_coeff();
                gadget_mul_acc(ctx, &x, dec, &second, &mut acc)?;
            }
        }
        if grouped {
            let mut x = std::mem::replace(&mut acc[dd], zero());
            x.to_coeff();
            gadget_mul_acc(ctx, &x, dec, &second, &mut acc)?;
        }
    }
    finish_relin(ct, ids, acc)
}

/// Method 1 of seed 001 §3.6 (CDKS19's shared relinearization key): for every `1 ≤ i, j ≤ d`,
/// `y = g⁻¹(c_{i,j})`, `c'_0 += ⟨y, k0⟩`, `c'_i += ⟨y, k1⟩`, `c'_j += ⟨y, k2⟩` with
/// `K_{i,j} = [k0 | k1 | k2]`. See [`relinearize`] for the errors.
pub fn relinearize_shared(ct: &Ciphertext, keys: &SharedRelinKey) -> Result<Ciphertext> {
    let ids = tensor_ids(ct)?;
    let d = ids.len();
    let dd = d + 1;
    let mut ks = Vec::with_capacity(d * d);
    for &a in ids {
        for &b in ids {
            ks.push(keys.get(a, b).ok_or_else(|| {
                Error::MissingKey(format!("shared relinearization key K_({a}, {b})"))
            })?);
        }
    }
    let dec = check_keys(
        &ct.ctx,
        ks.iter().map(|k| (k.decomposition, &k.crs_seed, &k.ctx)),
    )?;
    let ctx = &ct.ctx;
    let ring = ctx.ring(ct.level)?;
    let mut acc: Vec<Poly> = (0..dd)
        .map(|_| Poly::zero(&ring, Representation::Ntt))
        .collect();
    for i in 1..=d {
        for j in 1..=d {
            let k = ks[(i - 1) * d + (j - 1)];
            gadget_mul_acc(
                ctx,
                &ct.parts[i * dd + j],
                dec,
                &[
                    (k.k0.as_slice(), 0),
                    (k.k1.as_slice(), i),
                    (k.k2.as_slice(), j),
                ],
                &mut acc,
            )?;
        }
    }
    finish_relin(ct, ids, acc)
}

// ---------------------------------------------------------------------------------------------
// Smudging.

/// σ of the paper's smudging distribution: `2^20` (OpenFHE's `NOISE_FLOODING::MP_SD`).
pub const PAPER_SMUDGING_SIGMA: f64 = 1_048_576.0;

/// The smudging ("noise flooding") distribution of partial decryptions (seed 001 §3.7) and of
/// re-encryption shares (§4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Smudging {
    /// The paper's `χ_smdg`: a discrete Gaussian of σ = `2^20` per coefficient
    /// ([`PAPER_SMUDGING_SIGMA`]). **Not statistically hiding**: the smudging lemma needs noise
    /// about `2^λ` times the ciphertext noise it hides, and the paper itself admits that `2^20`
    /// is below that (a "practical" choice, like OpenFHE's). With it, partial decryptions and
    /// re-encryption shares do *not* give statistical simulation security; the ciphertext noise
    /// may leak (and with it information on the secret keys).
    PaperSigma20,
    /// Uniform noise in `[−B·2^λ, B·2^λ)` per coefficient, `B = 2^noise_log2` a bound on the
    /// absolute noise `‖phase − Δ·m‖_∞` of the ciphertexts it is applied to (e.g. from a
    /// worst-case estimate, or [`noise_log2`] in tests). The statistical distance between the
    /// views for two noises below `B` is at most `2^-λ` per coefficient (`N·2^-λ` per
    /// polynomial, so take λ ≥ 40 + log N). Needs a larger modulus:
    /// `log q ≥ noise_log2 + λ + ⌈log2(parties + 1)⌉ + log t + 2`
    /// ([`statistical_smudging_log_q`]); [`check_smudging`] enforces it.
    Statistical {
        /// The statistical security parameter λ.
        lambda: u32,
        /// `log2 B`, the bound on the absolute noise of the ciphertext.
        noise_log2: u32,
    },
}

/// The paper's Gaussian sampler of σ = `2^20` (built once).
fn paper_gaussian() -> Result<&'static DiscreteGaussian> {
    static G: OnceLock<std::result::Result<DiscreteGaussian, String>> = OnceLock::new();
    G.get_or_init(|| DiscreteGaussian::new(PAPER_SMUDGING_SIGMA).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| Error::InvalidParameter(format!("smudging sampler: {e}")))
}

/// Smallest `log2 Q` for which `parties` smudging terms uniform in `[−B·2^λ, B·2^λ)` on a
/// ciphertext of noise below `B = 2^noise_log2` still decrypt, with a plaintext modulus of
/// `t_bits` bits: the merged noise is below `(parties + 1)·2^(noise_log2 + λ)` and must stay
/// below `Δ/2 ≈ Q/(2t)` with one bit of margin, so
/// `noise_log2 + λ + ⌈log2(parties + 1)⌉ + t_bits + 2`.
///
/// ```
/// use coterie_bfv::mk::statistical_smudging_log_q;
/// // A ciphertext of noise 2^100 under 4 users, λ = 60, t = 2^8: 9 bits of t → 174 bits.
/// assert_eq!(statistical_smudging_log_q(100, 60, 4, 9), 174);
/// ```
pub fn statistical_smudging_log_q(
    noise_log2: u32,
    lambda: u32,
    parties: usize,
    t_bits: u32,
) -> u32 {
    let p = (parties as u64).saturating_add(1);
    let log_p = 64 - (p - 1).leading_zeros(); // ⌈log2 p⌉ for p ≥ 2
    noise_log2
        .saturating_add(lambda)
        .saturating_add(log_p)
        .saturating_add(t_bits)
        .saturating_add(2)
}

/// Checks that `smudging` applied by `parties` parties fits a ciphertext at `level` of `ctx`:
/// always true for [`Smudging::PaperSigma20`]; for [`Smudging::Statistical`], `⌊log2 Q_level⌋`
/// must reach [`statistical_smudging_log_q`] (with `t_bits` the bit size of the plaintext
/// modulus).
///
/// # Errors
/// [`Error::InvalidParameter`] naming the required and the available `log q`.
pub fn check_smudging(
    ctx: &Context,
    level: usize,
    smudging: &Smudging,
    parties: usize,
) -> Result<()> {
    if let Smudging::Statistical { lambda, noise_log2 } = *smudging {
        let t_bits = ctx.plaintext_modulus().modulus().significant_bits();
        let need = statistical_smudging_log_q(noise_log2, lambda, parties, t_bits);
        let have = ctx.modulus_at(level)?.significant_bits().saturating_sub(1);
        if have < need {
            return Err(Error::InvalidParameter(format!(
                "statistical smudging (λ = {lambda}, noise ≤ 2^{noise_log2}, {parties} parties) \
                 needs log q ≥ {need}; the ciphertext's modulus has log q = {have}"
            )));
        }
    }
    Ok(())
}

/// A fresh smudging polynomial at `level` (coefficient form). The caller has checked the
/// smudging against the level ([`check_smudging`]).
pub(crate) fn sample_smudging<R: rand::CryptoRng + ?Sized>(
    ctx: &Context,
    level: usize,
    smudging: &Smudging,
    rng: &mut R,
) -> Result<Poly> {
    let ring = ctx.ring(level)?;
    let n = ctx.degree();
    match *smudging {
        Smudging::PaperSigma20 => {
            let mut e = vec![0i64; n];
            paper_gaussian()?.fill(rng, &mut e);
            let p = Poly::from_signed(&ring, &e);
            e.zeroize();
            Ok(p?)
        }
        Smudging::Statistical { lambda, noise_log2 } => {
            // e = u − 2^w with u uniform in [0, 2^(w+1)), w = noise_log2 + λ.
            let w = u64::from(noise_log2) + u64::from(lambda);
            let bits = w + 1;
            if bits > 8192 {
                return Err(Error::InvalidParameter(format!(
                    "smudging of 2^{w} is beyond any modulus"
                )));
            }
            let words = bits.div_ceil(64) as usize;
            let top_bits = bits - 64 * (words as u64 - 1);
            let top_mask = if top_bits == 64 {
                u64::MAX
            } else {
                (1u64 << top_bits) - 1
            };
            let mut u = vec![0u64; n * words];
            for c in u.chunks_exact_mut(words) {
                for x in c.iter_mut() {
                    *x = rng.next_u64();
                }
                c[words - 1] &= top_mask;
            }
            let mut out = Poly::zero(&ring, Representation::Coefficient);
            for (i, m) in ring.moduli().iter().enumerate() {
                let q = m.value();
                let offset = coterie_math::modulus::pow_mod_u64(2, w, q);
                for (o, c) in out.limb_mut(i).iter_mut().zip(u.chunks_exact(words)) {
                    // Horner over the 64-bit words, constant-time Barrett reductions.
                    let mut r = 0u64;
                    for &x in c.iter().rev() {
                        r = m.reduce_u128((u128::from(r) << 64) | u128::from(x));
                    }
                    *o = m.sub(r, offset);
                }
            }
            u.zeroize();
            Ok(out)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Threshold decryption.

/// A digest binding partial results to one ciphertext: BLAKE3 (derived key
/// `coterie-bfv/mk/ciphertext-digest/v2`) of the parameter fingerprint, the level, the user ids
/// and every part's residues (coefficient form, little-endian words, limb after limb). Hashing the
/// residues directly instead of the packed encoding keeps it at hashing speed (the packing
/// dominated the first version).
pub fn ciphertext_digest(ct: &Ciphertext) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key("coterie-bfv/mk/ciphertext-digest/v2");
    h.update(ct.ctx.fingerprint());
    h.update(&(ct.level as u64).to_le_bytes());
    let ids: &[u64] = match &ct.keys {
        KeySet::Parties(ids) | KeySet::PartiesTensor(ids) => ids,
        KeySet::Powers => &[],
    };
    h.update(&[u8::from(matches!(ct.keys, KeySet::PartiesTensor(_)))]);
    h.update(&(ids.len() as u64).to_le_bytes());
    for id in ids {
        h.update(&id.to_le_bytes());
    }
    h.update(&(ct.parts.len() as u64).to_le_bytes());
    // The words reach the hasher 64 KiB at a time: BLAKE3 hashes 16 chunks of 1 KiB side by
    // side (AVX-512) only within one update that holds them all (a stream's hash does not depend
    // on how it is cut into updates).
    let mut buf = vec![0u8; 8 * DIGEST_WORDS];
    for part in &ct.parts {
        let coeff;
        let p = if part.representation() == Representation::Coefficient {
            part
        } else {
            let mut c = part.clone();
            c.to_coeff();
            coeff = c;
            &coeff
        };
        for chunk in p.data().chunks(DIGEST_WORDS) {
            for (b, x) in buf.chunks_exact_mut(8).zip(chunk) {
                b.copy_from_slice(&x.to_le_bytes());
            }
            h.update(&buf[..8 * chunk.len()]);
        }
    }
    *h.finalize().as_bytes()
}

/// Words per update of [`ciphertext_digest`] (64 KiB).
const DIGEST_WORDS: usize = 8192;

/// User `id`'s partial decryption `m_id = c_id·s_id + e_id` of a multi-key ciphertext (seed 001
/// §3.7, PartDec), `e_id` from the smudging distribution; bound to the ciphertext by its
/// [`ciphertext_digest`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartialDecryption {
    ctx: Context,
    id: u64,
    level: usize,
    digest: [u8; 32],
    m: Poly,
}

impl PartialDecryption {
    /// The user id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The digest of the ciphertext it belongs to.
    pub fn digest(&self) -> &[u8; 32] {
        &self.digest
    }

    /// `m_id = c_id·s_id + e_id` (coefficient form at the ciphertext's level).
    pub fn poly(&self) -> &Poly {
        &self.m
    }

    /// Versioned encoding (fingerprint, id, level, digest, `m_id` packed).
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&PartialDecryptionWire {
            params: *self.ctx.fingerprint(),
            id: self.id.to_le_bytes(),
            level: self.level as u32,
            digest: self.digest,
            m: self.m.to_packed(),
        })
    }

    /// Bounded decoding for `ctx`.
    ///
    /// # Errors
    /// [`Error::Base`] (envelope), [`Error::Mismatch`] (parameter set), [`Error::Malformed`]
    /// (level, size, unreduced residues).
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let w: PartialDecryptionWire = decode(bytes, max_size(ctx, 1, ctx.max_level() + 1))?;
        check_params(ctx, &w.params)?;
        let level = check_level(ctx, w.level)?;
        Ok(PartialDecryption {
            ctx: ctx.clone(),
            id: u64::from_le_bytes(w.id),
            level,
            digest: w.digest,
            m: poly_from(ctx, level, Representation::Coefficient, &w.m)?,
        })
    }
}

pub(crate) fn check_level(ctx: &Context, level: u32) -> Result<usize> {
    let level = level as usize;
    if level > ctx.max_level() {
        return Err(Error::Malformed(format!(
            "level {level} above the top level {}",
            ctx.max_level()
        )));
    }
    Ok(level)
}

/// `c·k` at the level of `c` (coefficient form) for a top-level NTT-form `k`, coefficient form.
pub(crate) fn mul_by_top_ntt(c: &Poly, k: &Poly) -> Poly {
    let ring = c.context().clone();
    let n = ring.degree();
    let mut out = Poly::zero(&ring, Representation::Coefficient);
    let mut tmp = vec![0u64; n];
    for j in 0..ring.limbs() {
        let plan = ring.plan(j);
        tmp.copy_from_slice(c.limb(j));
        plan.forward(&mut tmp);
        let dst = out.limb_mut(j);
        plan.mul_acc(dst, &tmp, k.limb(j));
        plan.inverse(dst);
    }
    tmp.zeroize();
    out
}

/// PartDec (seed 001 §3.7), run by user `id` with its secret key: `m_id = c_id·s_id + e_id`,
/// `e_id` a fresh sample of `smudging` (checked against the ciphertext's modulus for its `d`
/// users, [`check_smudging`]).
///
/// # Errors
/// [`Error::Unsupported`] for a ciphertext that is not a [`KeySet::Parties`] one (relinearize a
/// tensor first); [`Error::Mismatch`] if `id` is not among its users or the key is of another
/// context; [`Error::InvalidParameter`] from [`check_smudging`].
pub fn part_dec<R: rand::CryptoRng + ?Sized>(
    sk: &SecretKey,
    id: u64,
    ct: &Ciphertext,
    smudging: &Smudging,
    rng: &mut R,
) -> Result<PartialDecryption> {
    part_dec_request(sk, &DecryptionRequest::new(ct, id, false)?, smudging, rng)
}

/// What user `id` needs of a multi-key ciphertext to decrypt it partially, as a computing server
/// sends it (seed 001 §4.5, "server → U_i: c_i"): the user ids, the level, the ciphertext's
/// [`ciphertext_digest`] and `c_id`; the request of the user who merges also carries `c_0`
/// ([`merge_request`]). One ring element per user (two for the merging user) instead of the whole
/// ciphertext.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecryptionRequest {
    ctx: Context,
    id: u64,
    ids: Vec<u64>,
    level: usize,
    digest: [u8; 32],
    c_id: Poly,
    c0: Option<Poly>,
}

impl DecryptionRequest {
    /// The request of user `id` for `ct`, with `c_0` if `with_c0` (for the merging user).
    ///
    /// # Errors
    /// [`Error::Unsupported`] for a ciphertext that is not a [`KeySet::Parties`] one;
    /// [`Error::Mismatch`] if `id` is not among its users.
    pub fn new(ct: &Ciphertext, id: u64, with_c0: bool) -> Result<Self> {
        let ids = parties(ct)?;
        let pos = ids.iter().position(|&x| x == id).ok_or_else(|| {
            Error::Mismatch(format!(
                "user {id} is not among the ciphertext's users {ids:?}"
            ))
        })?;
        Ok(DecryptionRequest {
            ctx: ct.ctx.clone(),
            id,
            ids: ids.to_vec(),
            level: ct.level,
            digest: ciphertext_digest(ct),
            c_id: ct.parts[pos + 1].clone(),
            c0: with_c0.then(|| ct.parts[0].clone()),
        })
    }

    /// The user it is for.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The ciphertext's users.
    pub fn ids(&self) -> &[u64] {
        &self.ids
    }

    /// The ciphertext's digest.
    pub fn digest(&self) -> &[u8; 32] {
        &self.digest
    }

    /// Whether it carries `c_0` (the merging user's request).
    pub fn has_c0(&self) -> bool {
        self.c0.is_some()
    }

    /// Versioned encoding (fingerprint, id, ids, level, digest, `c_id` and `c_0` packed).
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&DecryptionRequestWire {
            params: *self.ctx.fingerprint(),
            id: self.id.to_le_bytes(),
            ids: self.ids.iter().map(|x| x.to_le_bytes()).collect(),
            level: self.level as u32,
            digest: self.digest,
            c_id: self.c_id.to_packed(),
            c0: self.c0.as_ref().map(Poly::to_packed),
        })
    }

    /// Bounded decoding for `ctx` (at most [`MAX_PARTS`] users, sorted and distinct, `id` among
    /// them).
    ///
    /// # Errors
    /// [`Error::Base`] (envelope), [`Error::Mismatch`] (parameter set), [`Error::Malformed`].
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let bound = max_size(ctx, 2, ctx.max_level() + 1) + 8 * MAX_PARTS + 64;
        let w: DecryptionRequestWire = decode(bytes, bound)?;
        check_params(ctx, &w.params)?;
        let level = check_level(ctx, w.level)?;
        let ids: Vec<u64> = w.ids.iter().map(|x| u64::from_le_bytes(*x)).collect();
        let id = u64::from_le_bytes(w.id);
        if ids.is_empty() || ids.len() > MAX_PARTS || !ids.windows(2).all(|p| p[0] < p[1]) {
            return Err(Error::Malformed(
                "decryption request: user ids empty, too many, or not sorted and distinct".into(),
            ));
        }
        if !ids.contains(&id) {
            return Err(Error::Malformed(format!(
                "decryption request for user {id}, who is not among its users {ids:?}"
            )));
        }
        Ok(DecryptionRequest {
            ctx: ctx.clone(),
            id,
            ids,
            level,
            digest: w.digest,
            c_id: poly_from(ctx, level, Representation::Coefficient, &w.c_id)?,
            c0: w
                .c0
                .map(|c| poly_from(ctx, level, Representation::Coefficient, &c))
                .transpose()?,
        })
    }
}

/// PartDec (seed 001 §3.7) from a [`DecryptionRequest`]: `m_id = c_id·s_id + e_id` for the
/// request's user, `e_id` a fresh sample of `smudging` (checked against the modulus for the
/// request's number of users, [`check_smudging`]). [`part_dec`] is this on the whole ciphertext.
///
/// # Errors
/// [`Error::Mismatch`] if the key is of another context; [`Error::InvalidParameter`] from
/// [`check_smudging`].
pub fn part_dec_request<R: rand::CryptoRng + ?Sized>(
    sk: &SecretKey,
    req: &DecryptionRequest,
    smudging: &Smudging,
    rng: &mut R,
) -> Result<PartialDecryption> {
    req.ctx.check_same(&sk.ctx)?;
    check_smudging(&req.ctx, req.level, smudging, req.ids.len())?;
    let mut m = mul_by_top_ntt(&req.c_id, &sk.ntt);
    let mut e = sample_smudging(&req.ctx, req.level, smudging, rng)?;
    m.try_add_assign(&e)?;
    e.data_mut().zeroize();
    Ok(PartialDecryption {
        ctx: req.ctx.clone(),
        id: req.id,
        level: req.level,
        digest: req.digest,
        m,
    })
}

/// Merge (seed 001 §3.7) at the merging user, from its [`DecryptionRequest`] (which carries
/// `c_0`) and one partial decryption per user: what [`merge`] does with the whole ciphertext.
///
/// # Errors
/// As [`merge`]; [`Error::InvalidParameter`] for a request without `c_0`.
pub fn merge_request(req: &DecryptionRequest, partials: &[PartialDecryption]) -> Result<Plaintext> {
    let c0 = req.c0.as_ref().ok_or_else(|| {
        Error::InvalidParameter(format!(
            "the decryption request of user {} has no c_0: only the merging user's has",
            req.id
        ))
    })?;
    merge_parts(&req.ctx, &req.ids, req.level, &req.digest, c0, partials)
}

/// Merge (seed 001 §3.7): `m = ⌊(t/q)·(c_0 + Σ_i m_{id_i})⌉ mod t` from exactly one partial
/// decryption per user of the ciphertext.
///
/// # Errors
/// [`Error::Share`] naming the user for a missing or repeated partial decryption, one of a user
/// not in the ciphertext, or one made for another ciphertext (digest); [`Error::Unsupported`]
/// for a ciphertext that is not a [`KeySet::Parties`] one; [`Error::Mismatch`] for another
/// context or level.
pub fn merge(ct: &Ciphertext, partials: &[PartialDecryption]) -> Result<Plaintext> {
    let ids = parties(ct)?;
    merge_parts(
        &ct.ctx,
        ids,
        ct.level,
        &ciphertext_digest(ct),
        &ct.parts[0],
        partials,
    )
}

fn merge_parts(
    ctx: &Context,
    ids: &[u64],
    level: usize,
    digest: &[u8; 32],
    c0: &Poly,
    partials: &[PartialDecryption],
) -> Result<Plaintext> {
    for p in partials {
        ctx.check_same(&p.ctx)?;
        if !ids.contains(&p.id) {
            return Err(Error::Share(format!(
                "partial decryption of user {}, who is not among the ciphertext's users {ids:?}",
                p.id
            )));
        }
        if p.level != level || p.digest != *digest {
            return Err(Error::Share(format!(
                "the partial decryption of user {} is for another ciphertext",
                p.id
            )));
        }
    }
    let mut x = c0.clone();
    for id in ids {
        let mut mine = partials.iter().filter(|p| p.id == *id);
        let p = mine
            .next()
            .ok_or_else(|| Error::Share(format!("partial decryption of user {id} is missing")))?;
        if mine.next().is_some() {
            return Err(Error::Share(format!(
                "more than one partial decryption of user {id}"
            )));
        }
        x.try_add_assign(&p.m)?;
    }
    decode_phase(ctx, x, level)
}

// ---------------------------------------------------------------------------------------------
// Wire forms.

pub(crate) fn packed(polys: &[Poly]) -> Vec<Vec<u8>> {
    polys.iter().map(Poly::to_packed).collect()
}

/// Top-level NTT-form polynomials from their packed forms, exactly `rows` of them.
pub(crate) fn unpacked(
    ctx: &Context,
    data: &[Vec<u8>],
    rows: usize,
    what: &str,
) -> Result<Vec<Poly>> {
    if data.len() != rows {
        return Err(Error::Malformed(format!(
            "{} rows of {what}, expected {rows}",
            data.len()
        )));
    }
    data.iter()
        .map(|d| poly_from(ctx, ctx.max_level(), Representation::Ntt, d))
        .collect()
}

/// Largest encoding of `vectors` gadget vectors (rows at most `log Q`: power-of-two gadget with
/// `B = 2`).
fn gadget_max(ctx: &Context, vectors: usize) -> usize {
    let l = ctx.max_level() + 1;
    let rows = (ctx.params().log_q() as usize).max(l);
    max_size(ctx, vectors * rows, l)
}

/// Wire form of an [`MkRelinKey`].
#[derive(Clone, Debug, Serialize, Deserialize)]
struct MkRelinKeyWire {
    params: Fingerprint,
    id: [u8; 8],
    decomposition: Decomposition,
    crs_seed: Seed,
    d1_seed: Seed,
    #[serde(with = "coterie_base::bytes::list")]
    b: Vec<Vec<u8>>,
    #[serde(with = "coterie_base::bytes::list")]
    d0: Vec<Vec<u8>>,
    #[serde(with = "coterie_base::bytes::list")]
    d2: Vec<Vec<u8>>,
}

/// Wire form of a [`ConvertedKey`].
#[derive(Clone, Debug, Serialize, Deserialize)]
struct ConvertedKeyWire {
    params: Fingerprint,
    i: [u8; 8],
    j: [u8; 8],
    decomposition: Decomposition,
    crs_seed: Seed,
    #[serde(with = "coterie_base::bytes::list")]
    k0: Vec<Vec<u8>>,
    #[serde(with = "coterie_base::bytes::list")]
    k1: Vec<Vec<u8>>,
    #[serde(with = "coterie_base::bytes::list")]
    k2: Vec<Vec<u8>>,
}

/// Wire form of a [`DecryptionRequest`].
#[derive(Clone, Debug, Serialize, Deserialize)]
struct DecryptionRequestWire {
    params: Fingerprint,
    id: [u8; 8],
    ids: Vec<[u8; 8]>,
    level: u32,
    digest: [u8; 32],
    #[serde(with = "coterie_base::bytes")]
    c_id: Vec<u8>,
    c0: Option<Vec<u8>>,
}

/// Wire form of a [`PartialDecryption`].
#[derive(Clone, Debug, Serialize, Deserialize)]
struct PartialDecryptionWire {
    params: Fingerprint,
    id: [u8; 8],
    level: u32,
    digest: [u8; 32],
    #[serde(with = "coterie_base::bytes")]
    m: Vec<u8>,
}

coterie_base::versioned! {
    MkRelinKeyWire => b"BFVm" v 1,
    ConvertedKeyWire => b"BFVv" v 1,
    PartialDecryptionWire => b"BFVd" v 1,
    DecryptionRequestWire => b"BFVq" v 1,
}
