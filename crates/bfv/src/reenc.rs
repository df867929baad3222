//! Threshold proxy re-encryption of multi-key BFV ciphertexts (seed 001 §4, MK-BFV-TRE): the
//! scheme-level steps as plain functions; the caller moves the values between the delegators
//! `U_i`, the delegatee `U_D` and the proxies `P_1 … P_N`.
//!
//! | step (spec) | who | function |
//! |---|---|---|
//! | ReKeyGen 1 (§4.2) | `U_D` | [`MaskingKey::sample`]: `r_{i→D}` uniform in `R_q` |
//! | ReKeyGen 2 (§4.2) | `U_i` | [`rekey_shares`]: `rk = s_i − r`, split into `N` additive shares |
//! | both at once | (tests, one process) | [`rekey_gen`] |
//! | ReEnc 1 (§4.3) | each `P_j` | [`reenc_share`]: `[c_0']_j = Σ_i c_i·[rk_i]_j + e_j (+ c_0 for j = 0)` |
//! | ReEnc 3, Open (§4.3) | `U_D` | [`reenc_combine`]: `c_0' = Σ_j [c_0']_j`, `rct = (c_0', c_1, …, c_d)` |
//! | Decrypt (§4.4) | `U_D` | [`decrypt_reencrypted`] with the masking keys |
//!
//! Proxies are numbered `0 … N−1` here (the paper's `P_1 … P_N`); proxy 0 adds `c_0`. With
//! `N = 1` the single proxy holds `rk` itself ("neither Share nor Open happens", §2.4).
//!
//! The re-encryption key is `rk = s_i − r_{i→D}` as in the paper's text and proof (its
//! Algorithm 1 as extracted reads `s_i r_{i→D}`: the minus sign is lost, spec §10).
//!
//! Correctness (exact mod q): `c_0' + Σ_i c_i·r_i = c_0 + Σ_i c_i·s_i + Σ_j e_j`, so the
//! re-encrypted ciphertext decrypts under the masking keys whenever the ciphertext noise plus
//! the `N` smudging terms stays below `Δ/2`. The smudging distribution is a [`Smudging`]; the
//! paper's `σ = 2^20` is **not** statistically hiding (see [`Smudging::PaperSigma20`]).
//!
//! Delegatee among the users (spec §9.8, left open by the paper): [`rekey_gen`] accepts
//! `delegator == delegatee` (the delegatee "runs ReKeyGen with itself"), so a ciphertext that
//! involves `U_D`'s own key re-encrypts like any other; `U_D` then holds a masking key for
//! itself.
//!
//! ```
//! use coterie_bfv::mk::{self, Smudging};
//! use coterie_bfv::reenc::{self, rekey_gen};
//! use coterie_bfv::{Context, Params, Plaintext, SecretKey};
//! use coterie_math::prg::Csprng;
//! let ctx = Context::new(Params::insecure_toy(256, 256).unwrap()).unwrap();
//! let mut rng = Csprng::new();
//! let (s1, s2) = (SecretKey::generate(&ctx, &mut rng), SecretKey::generate(&ctx, &mut rng));
//! let pt = |v| Plaintext::encode_coefficients(&ctx, &[v]).unwrap();
//! let x = mk::encrypt(&s1.public_key(&mut rng), 1, &pt(3), &mut rng).unwrap();
//! let y = mk::encrypt(&s2.public_key(&mut rng), 2, &pt(4), &mut rng).unwrap();
//! let ct = mk::add(&x, &y).unwrap();
//! // Users 1 and 2 delegate to user 9 through N = 2 proxies.
//! let (mk1, sh1) = rekey_gen(&s1, 1, 9, 2, &mut rng).unwrap();
//! let (mk2, sh2) = rekey_gen(&s2, 2, 9, 2, &mut rng).unwrap();
//! let shares: Vec<_> = (0..2)
//!     .map(|j| {
//!         let mine = [sh1[j].clone(), sh2[j].clone()];
//!         reenc::reenc_share(j, 9, &mine, &ct, &Smudging::PaperSigma20, &mut rng).unwrap()
//!     })
//!     .collect();
//! let rct = reenc::reenc_combine(&ct, &shares).unwrap();
//! let m = reenc::decrypt_reencrypted(&[mk1, mk2], &rct).unwrap();
//! assert_eq!(m.coefficients().unwrap()[0], 7);
//! ```

use crate::ciphertext::{Ciphertext, KeySet};
use crate::context::{Context, Fingerprint};
use crate::encoding::Plaintext;
use crate::encrypt::{decode_phase, multi_key_phase};
use crate::keys::SecretKey;
use crate::mk::{Smudging, check_level, check_smudging, ciphertext_digest, sample_smudging};
use crate::serial::{MAX_PARTS, check_params, decode, encode, max_size, poly_from};
use crate::{Error, Result};
use coterie_math::poly::{Poly, Representation};
use serde::{Deserialize, Serialize};
use zeroize::Zeroize;

/// Most proxies supported (`N`).
pub const MAX_PROXIES: usize = 1024;

/// The masking key `mk_{i→D} = r_{i→D}`, uniform in `R_q` (seed 001 §4.2), sampled by the
/// delegatee `U_D` for delegator `U_i`, sent to `U_i` and kept by `U_D` to decrypt. Secret:
/// zeroized on drop, redacted in `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct MaskingKey {
    ctx: Context,
    delegator: u64,
    delegatee: u64,
    /// `r` at the top level, NTT form.
    r: Poly,
}

impl std::fmt::Debug for MaskingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MaskingKey({} → {}, ..)", self.delegator, self.delegatee)
    }
}

impl Drop for MaskingKey {
    fn drop(&mut self) {
        self.r.data_mut().zeroize();
    }
}

impl MaskingKey {
    /// ReKeyGen step 1, run by the delegatee: a fresh uniform `r_{delegator→delegatee}`.
    pub fn sample<R: rand::CryptoRng + ?Sized>(
        ctx: &Context,
        delegator: u64,
        delegatee: u64,
        rng: &mut R,
    ) -> Self {
        MaskingKey {
            ctx: ctx.clone(),
            delegator,
            delegatee,
            r: Poly::random(&ctx.top().ring, Representation::Ntt, rng),
        }
    }

    /// The delegator `i`.
    pub fn delegator(&self) -> u64 {
        self.delegator
    }

    /// The delegatee `D`.
    pub fn delegatee(&self) -> u64 {
        self.delegatee
    }

    /// `r` (top level, NTT form; secret).
    pub fn poly(&self) -> &Poly {
        &self.r
    }

    /// The context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// Versioned encoding (secret! the caller protects the bytes).
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&MaskingKeyWire {
            params: *self.ctx.fingerprint(),
            delegator: self.delegator.to_le_bytes(),
            delegatee: self.delegatee.to_le_bytes(),
            r: self.r.to_packed(),
        })
    }

    /// Bounded decoding for `ctx`.
    ///
    /// # Errors
    /// [`Error::Base`] (envelope), [`Error::Mismatch`] (parameter set), [`Error::Malformed`].
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let w: MaskingKeyWire = decode(bytes, max_size(ctx, 1, ctx.max_level() + 1))?;
        check_params(ctx, &w.params)?;
        let r = poly_from(ctx, ctx.max_level(), Representation::Ntt, &w.r)?;
        Ok(MaskingKey {
            ctx: ctx.clone(),
            delegator: u64::from_le_bytes(w.delegator),
            delegatee: u64::from_le_bytes(w.delegatee),
            r,
        })
    }
}

/// Proxy `proxy`'s additive share `[rk_{i→D}]_proxy` of the re-encryption key
/// `rk_{i→D} = s_i − r_{i→D}` (seed 001 §4.2), one of `proxies` shares. Secret: zeroized on drop,
/// redacted in `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct ReKeyShare {
    ctx: Context,
    delegator: u64,
    delegatee: u64,
    proxy: u32,
    proxies: u32,
    /// The share at the top level, NTT form.
    share: Poly,
}

impl std::fmt::Debug for ReKeyShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ReKeyShare({} → {}, proxy {} of {}, ..)",
            self.delegator, self.delegatee, self.proxy, self.proxies
        )
    }
}

impl Drop for ReKeyShare {
    fn drop(&mut self) {
        self.share.data_mut().zeroize();
    }
}

impl ReKeyShare {
    /// The delegator `i`.
    pub fn delegator(&self) -> u64 {
        self.delegator
    }

    /// The delegatee `D`.
    pub fn delegatee(&self) -> u64 {
        self.delegatee
    }

    /// The proxy index (`0 … N−1`).
    pub fn proxy(&self) -> usize {
        self.proxy as usize
    }

    /// The number of proxies `N`.
    pub fn proxies(&self) -> usize {
        self.proxies as usize
    }

    /// The share (top level, NTT form; secret).
    pub fn poly(&self) -> &Poly {
        &self.share
    }

    /// Versioned encoding (secret! the caller protects the bytes).
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&ReKeyShareWire {
            params: *self.ctx.fingerprint(),
            delegator: self.delegator.to_le_bytes(),
            delegatee: self.delegatee.to_le_bytes(),
            proxy: self.proxy.to_le_bytes(),
            proxies: self.proxies.to_le_bytes(),
            share: self.share.to_packed(),
        })
    }

    /// Bounded decoding for `ctx`.
    ///
    /// # Errors
    /// [`Error::Base`] (envelope), [`Error::Mismatch`] (parameter set), [`Error::Malformed`]
    /// (a proxy index not below the count, a count outside `[1, MAX_PROXIES]`, sizes, residues).
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let w: ReKeyShareWire = decode(bytes, max_size(ctx, 1, ctx.max_level() + 1))?;
        check_params(ctx, &w.params)?;
        let (proxy, proxies) = (u32::from_le_bytes(w.proxy), u32::from_le_bytes(w.proxies));
        check_proxy(proxy as usize, proxies as usize)?;
        let share = poly_from(ctx, ctx.max_level(), Representation::Ntt, &w.share)?;
        Ok(ReKeyShare {
            ctx: ctx.clone(),
            delegator: u64::from_le_bytes(w.delegator),
            delegatee: u64::from_le_bytes(w.delegatee),
            proxy,
            proxies,
            share,
        })
    }
}

fn check_proxies(proxies: usize) -> Result<()> {
    if !(1..=MAX_PROXIES).contains(&proxies) {
        return Err(Error::InvalidParameter(format!(
            "{proxies} proxies (between 1 and {MAX_PROXIES} supported)"
        )));
    }
    Ok(())
}

fn check_proxy(proxy: usize, proxies: usize) -> Result<()> {
    check_proxies(proxies).map_err(|e| Error::Malformed(e.to_string()))?;
    if proxy >= proxies {
        return Err(Error::Malformed(format!(
            "proxy {proxy} of {proxies} (proxies are numbered from 0)"
        )));
    }
    Ok(())
}

/// ReKeyGen step 2 (seed 001 §4.2, Share of §2.4), run by the delegator with its secret key
/// `sk` and the masking key `mk` it received: `rk = s_i − r` (mod q), split into `proxies`
/// additive shares — shares `1 … N−1` uniform, share 0 = `rk − Σ_{j≥1} share_j`; for `N = 1` the
/// single share is `rk` itself. Share `j` goes to proxy `j`.
///
/// # Errors
/// [`Error::InvalidParameter`] for a proxy count outside `[1, MAX_PROXIES]`;
/// [`Error::Mismatch`] for a masking key of another context.
pub fn rekey_shares<R: rand::CryptoRng + ?Sized>(
    sk: &SecretKey,
    mk: &MaskingKey,
    proxies: usize,
    rng: &mut R,
) -> Result<Vec<ReKeyShare>> {
    check_proxies(proxies)?;
    sk.ctx.check_same(&mk.ctx)?;
    let ring = &sk.ctx.top().ring;
    let mut rk = sk.ntt.clone();
    rk.try_sub_assign(&mk.r)?;
    let share = |j: usize, p: Poly| ReKeyShare {
        ctx: sk.ctx.clone(),
        delegator: mk.delegator,
        delegatee: mk.delegatee,
        proxy: j as u32,
        proxies: proxies as u32,
        share: p,
    };
    let mut out = Vec::with_capacity(proxies);
    for j in 1..proxies {
        let x = Poly::random(ring, Representation::Ntt, rng);
        rk.try_sub_assign(&x)?;
        out.push(share(j, x));
    }
    out.insert(0, share(0, rk));
    Ok(out)
}

/// ReKeyGen (seed 001 Algorithm 1) in one call, for one process holding both roles: the
/// delegatee's [`MaskingKey::sample`] then the delegator's [`rekey_shares`]. Returns the masking
/// key (for `delegatee`) and the `proxies` shares (share `j` for proxy `j`).
///
/// # Errors
/// As [`rekey_shares`].
pub fn rekey_gen<R: rand::CryptoRng + ?Sized>(
    sk: &SecretKey,
    delegator: u64,
    delegatee: u64,
    proxies: usize,
    rng: &mut R,
) -> Result<(MaskingKey, Vec<ReKeyShare>)> {
    check_proxies(proxies)?;
    let mk = MaskingKey::sample(&sk.ctx, delegator, delegatee, rng);
    let shares = rekey_shares(sk, &mk, proxies, rng)?;
    Ok((mk, shares))
}

/// Open of the re-encryption key shares (seed 001 §2.4): `rk = Σ_j [rk]_j` (top level, NTT
/// form) from exactly one share per proxy, all of one `(delegator, delegatee, N)`. For tests
/// and audits: in the protocol nobody opens `rk` (the delegatee and all proxies together would
/// learn `s_i = r + rk`).
///
/// # Errors
/// [`Error::Share`] naming the proxy for a missing or repeated share, or a share of another key.
pub fn open_rekey(shares: &[ReKeyShare]) -> Result<Poly> {
    let first = shares
        .first()
        .ok_or_else(|| Error::Share("no re-encryption key shares".into()))?;
    let n = first.proxies as usize;
    for s in shares {
        first.ctx.check_same(&s.ctx)?;
        if (s.delegator, s.delegatee, s.proxies)
            != (first.delegator, first.delegatee, first.proxies)
        {
            return Err(Error::Share(format!(
                "share of proxy {} is of the key {} → {} for {} proxies, not {} → {} for {n}",
                s.proxy, s.delegator, s.delegatee, s.proxies, first.delegator, first.delegatee
            )));
        }
    }
    let mut sum = Poly::zero(&first.ctx.top().ring, Representation::Ntt);
    for j in 0..n {
        let mut mine = shares.iter().filter(|s| s.proxy as usize == j);
        let s = mine.next().ok_or_else(|| {
            Error::Share(format!("re-encryption key share of proxy {j} is missing"))
        })?;
        if mine.next().is_some() {
            return Err(Error::Share(format!(
                "more than one re-encryption key share of proxy {j}"
            )));
        }
        sum.try_add_assign(&s.share)?;
    }
    Ok(sum)
}

/// Proxy `proxy`'s share `[c_0']_proxy` of the re-encrypted `c_0` for delegatee `delegatee`
/// (seed 001 §4.3 step 1), bound to the ciphertext by its [`ciphertext_digest`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReEncShare {
    ctx: Context,
    delegatee: u64,
    proxy: u32,
    proxies: u32,
    level: usize,
    digest: [u8; 32],
    c0: Poly,
}

impl ReEncShare {
    /// The proxy index.
    pub fn proxy(&self) -> usize {
        self.proxy as usize
    }

    /// The number of proxies `N`.
    pub fn proxies(&self) -> usize {
        self.proxies as usize
    }

    /// The delegatee.
    pub fn delegatee(&self) -> u64 {
        self.delegatee
    }

    /// `[c_0']_proxy` (coefficient form at the ciphertext's level).
    pub fn poly(&self) -> &Poly {
        &self.c0
    }

    /// Versioned encoding (fingerprint, delegatee, proxy, `N`, level, digest, the share packed).
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&ReEncShareWire {
            params: *self.ctx.fingerprint(),
            delegatee: self.delegatee.to_le_bytes(),
            proxy: self.proxy.to_le_bytes(),
            proxies: self.proxies.to_le_bytes(),
            level: self.level as u32,
            digest: self.digest,
            c0: self.c0.to_packed(),
        })
    }

    /// Bounded decoding for `ctx`.
    ///
    /// # Errors
    /// [`Error::Base`] (envelope), [`Error::Mismatch`] (parameter set), [`Error::Malformed`].
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let w: ReEncShareWire = decode(bytes, max_size(ctx, 1, ctx.max_level() + 1))?;
        check_params(ctx, &w.params)?;
        let (proxy, proxies) = (u32::from_le_bytes(w.proxy), u32::from_le_bytes(w.proxies));
        check_proxy(proxy as usize, proxies as usize)?;
        let level = check_level(ctx, w.level)?;
        Ok(ReEncShare {
            ctx: ctx.clone(),
            delegatee: u64::from_le_bytes(w.delegatee),
            proxy,
            proxies,
            level,
            digest: w.digest,
            c0: poly_from(ctx, level, Representation::Coefficient, &w.c0)?,
        })
    }
}

fn parties(ct: &Ciphertext) -> Result<&[u64]> {
    match &ct.keys {
        KeySet::Parties(ids) => Ok(ids),
        k => Err(Error::Unsupported(format!(
            "re-encryption of a ciphertext under {k:?}"
        ))),
    }
}

/// ReEnc step 1 (seed 001 Algorithm 2), run by proxy `proxy` (`0 … N−1`) with its shares
/// `shares` (one per delegator of the ciphertext, for `delegatee`; others are ignored):
/// `[c_0']_proxy = Σ_i c_{id_i}·[rk_{id_i→D}]_proxy + e_proxy`, plus `c_0` for proxy 0, with a
/// fresh `e_proxy` from `smudging` (checked for `N` parties, [`check_smudging`]).
///
/// # Errors
/// [`Error::Unsupported`] for a ciphertext that is not a [`KeySet::Parties`] one;
/// [`Error::Share`] naming the user whose share for this proxy and delegatee is missing or
/// repeated, or a share of another proxy count; [`Error::Mismatch`] for another context;
/// [`Error::InvalidParameter`] from [`check_smudging`] or a proxy index not below `N`.
pub fn reenc_share<R: rand::CryptoRng + ?Sized>(
    proxy: usize,
    delegatee: u64,
    shares: &[ReKeyShare],
    ct: &Ciphertext,
    smudging: &Smudging,
    rng: &mut R,
) -> Result<ReEncShare> {
    let ids = parties(ct)?;
    let mut keys = Vec::with_capacity(ids.len());
    let mut proxies = None;
    for id in ids {
        let mut mine = shares.iter().filter(|s| {
            s.delegator == *id && s.delegatee == delegatee && s.proxy as usize == proxy
        });
        let s = mine.next().ok_or_else(|| {
            Error::Share(format!(
                "re-encryption key share of user {id} → {delegatee} for proxy {proxy} is missing"
            ))
        })?;
        if mine.next().is_some() {
            return Err(Error::Share(format!(
                "more than one re-encryption key share of user {id} → {delegatee} for proxy \
                 {proxy}"
            )));
        }
        ct.ctx.check_same(&s.ctx)?;
        if *proxies.get_or_insert(s.proxies) != s.proxies {
            return Err(Error::Share(format!(
                "the share of user {id} is for {} proxies, another user's for {}",
                s.proxies,
                proxies.unwrap_or(0)
            )));
        }
        keys.push(&s.share);
    }
    let proxies = proxies.ok_or_else(|| Error::Share("a ciphertext of no users".into()))?;
    if proxy >= proxies as usize {
        return Err(Error::InvalidParameter(format!(
            "proxy {proxy} of {proxies}"
        )));
    }
    check_smudging(&ct.ctx, ct.level, smudging, proxies as usize)?;
    // c_0 + Σ c_i·[rk_i]_j, less c_0 for every proxy but the first.
    let mut c0 = multi_key_phase(ct, &keys)?;
    if proxy != 0 {
        c0.try_sub_assign(&ct.parts[0])?;
    }
    let mut e = sample_smudging(&ct.ctx, ct.level, smudging, rng)?;
    c0.try_add_assign(&e)?;
    e.data_mut().zeroize();
    Ok(ReEncShare {
        ctx: ct.ctx.clone(),
        delegatee,
        proxy: proxy as u32,
        proxies,
        level: ct.level,
        digest: ciphertext_digest(ct),
        c0,
    })
}

/// A re-encrypted ciphertext `rct = (c_0', c_{id_1}, …, c_{id_d})` for delegatee `delegatee`
/// (seed 001 §4.3): only `c_0` differs from the original. It decrypts with the delegatee's
/// masking keys ([`decrypt_reencrypted`]), not with the users' secret keys; treat it as a
/// terminal result (§9.13).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReEncryptedCiphertext {
    delegatee: u64,
    ct: Ciphertext,
}

impl ReEncryptedCiphertext {
    /// The delegatee.
    pub fn delegatee(&self) -> u64 {
        self.delegatee
    }

    /// The parts as a [`KeySet::Parties`] ciphertext (phase under the masking keys).
    pub fn ciphertext(&self) -> &Ciphertext {
        &self.ct
    }

    /// Versioned encoding (fingerprint, delegatee, the ciphertext's own encoding).
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&ReEncryptedWire {
            params: *self.ct.ctx.fingerprint(),
            delegatee: self.delegatee.to_le_bytes(),
            ciphertext: self.ct.to_bytes(),
        })
    }

    /// Bounded decoding for `ctx` (the inner ciphertext as [`Ciphertext::from_bytes`], and it
    /// must be a [`KeySet::Parties`] one).
    ///
    /// # Errors
    /// [`Error::Base`] (envelope), [`Error::Mismatch`] (parameter set), [`Error::Malformed`].
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let bound = max_size(ctx, MAX_PARTS, ctx.max_level() + 1) + 16 * MAX_PARTS + 128;
        let w: ReEncryptedWire = decode(bytes, bound)?;
        check_params(ctx, &w.params)?;
        let ct = Ciphertext::from_bytes(ctx, &w.ciphertext)?;
        if !matches!(ct.keys, KeySet::Parties(_)) {
            return Err(Error::Malformed(format!(
                "a re-encrypted ciphertext under {:?}",
                ct.keys
            )));
        }
        Ok(ReEncryptedCiphertext {
            delegatee: u64::from_le_bytes(w.delegatee),
            ct,
        })
    }
}

/// ReEnc step 3 (seed 001 §4.3, Open by the delegatee): `c_0' = Σ_j [c_0']_j` from exactly one
/// share per proxy, and `rct = (c_0', c_{id_1}, …, c_{id_d})` for the shares' delegatee.
///
/// # Errors
/// [`Error::Share`] naming the proxy for a missing or repeated share, a share made for another
/// ciphertext (digest or level), another delegatee or another proxy count;
/// [`Error::Unsupported`] for a ciphertext that is not a [`KeySet::Parties`] one.
pub fn reenc_combine(ct: &Ciphertext, shares: &[ReEncShare]) -> Result<ReEncryptedCiphertext> {
    let ids = parties(ct)?;
    let first = shares
        .first()
        .ok_or_else(|| Error::Share("no re-encryption shares".into()))?;
    let digest = ciphertext_digest(ct);
    for s in shares {
        ct.ctx.check_same(&s.ctx)?;
        if s.level != ct.level || s.digest != digest {
            return Err(Error::Share(format!(
                "the re-encryption share of proxy {} is for another ciphertext",
                s.proxy
            )));
        }
        if s.delegatee != first.delegatee || s.proxies != first.proxies {
            return Err(Error::Share(format!(
                "the re-encryption share of proxy {} is for delegatee {} and {} proxies, not {} \
                 and {}",
                s.proxy, s.delegatee, s.proxies, first.delegatee, first.proxies
            )));
        }
    }
    let mut c0 = Poly::zero(&ct.ctx.ring(ct.level)?, Representation::Coefficient);
    for j in 0..first.proxies as usize {
        let mut mine = shares.iter().filter(|s| s.proxy as usize == j);
        let s = mine
            .next()
            .ok_or_else(|| Error::Share(format!("re-encryption share of proxy {j} is missing")))?;
        if mine.next().is_some() {
            return Err(Error::Share(format!(
                "more than one re-encryption share of proxy {j}"
            )));
        }
        c0.try_add_assign(&s.c0)?;
    }
    if let Some(s) = shares.iter().find(|s| s.proxy >= first.proxies) {
        return Err(Error::Share(format!(
            "re-encryption share of proxy {} of {}",
            s.proxy, first.proxies
        )));
    }
    let mut parts = Vec::with_capacity(ct.parts.len());
    parts.push(c0);
    parts.extend(ct.parts[1..].iter().cloned());
    Ok(ReEncryptedCiphertext {
        delegatee: first.delegatee,
        ct: Ciphertext::from_parts_with_keys(
            &ct.ctx,
            ct.level,
            parts,
            KeySet::Parties(ids.to_vec()),
        )?,
    })
}

/// The phase `c_0' + Σ_i c_{id_i}·r_{id_i→D}` of a re-encrypted ciphertext under the
/// delegatee's masking keys (coefficient form at its level; secret: `Δ·m` plus the original
/// noise plus the proxies' smudging).
///
/// # Errors
/// [`Error::MissingKey`] naming the first user without a masking key `r_{id→D}` for the
/// ciphertext's delegatee; [`Error::Mismatch`] for keys of another context.
pub fn reencrypted_phase(masking_keys: &[MaskingKey], rct: &ReEncryptedCiphertext) -> Result<Poly> {
    let ids = parties(&rct.ct)?;
    let keys = ids
        .iter()
        .map(|id| {
            let k = masking_keys
                .iter()
                .find(|k| k.delegator == *id && k.delegatee == rct.delegatee)
                .ok_or_else(|| {
                    Error::MissingKey(format!("masking key of user {id} → {}", rct.delegatee))
                })?;
            rct.ct.ctx.check_same(&k.ctx)?;
            Ok(&k.r)
        })
        .collect::<Result<Vec<&Poly>>>()?;
    multi_key_phase(&rct.ct, &keys)
}

/// Decrypt (seed 001 Algorithm 3), run by the delegatee alone:
/// `m = ⌊(t/q)·[c_0' + Σ_i c_{id_i}·r_{id_i→D}]_q⌉ mod t`.
///
/// # Errors
/// As [`reencrypted_phase`].
pub fn decrypt_reencrypted(
    masking_keys: &[MaskingKey],
    rct: &ReEncryptedCiphertext,
) -> Result<Plaintext> {
    let x = reencrypted_phase(masking_keys, rct)?;
    decode_phase(&rct.ct.ctx, x, rct.ct.level)
}

/// The noise budget (bits, as [`crate::mk::noise_budget`]) of a re-encrypted ciphertext under
/// the masking keys: the original ciphertext's noise plus the proxies' smudging.
///
/// # Errors
/// As [`reencrypted_phase`]; [`Error::Unsupported`] for a cyclotomic plaintext modulus.
pub fn noise_budget(masking_keys: &[MaskingKey], rct: &ReEncryptedCiphertext) -> Result<f64> {
    let x = reencrypted_phase(masking_keys, rct)?;
    let ctx = &rct.ct.ctx;
    let m = decode_phase(ctx, x.clone(), rct.ct.level)?;
    Ok(-1.0 - crate::noise::invariant_noise_of_phase_log2(ctx, &x, &m, rct.ct.level)?)
}

// ---------------------------------------------------------------------------------------------
// Wire forms.

/// Wire form of a [`MaskingKey`] (zeroized on drop).
#[derive(Clone, Serialize, Deserialize)]
struct MaskingKeyWire {
    params: Fingerprint,
    delegator: [u8; 8],
    delegatee: [u8; 8],
    #[serde(with = "coterie_base::bytes")]
    r: Vec<u8>,
}

impl Drop for MaskingKeyWire {
    fn drop(&mut self) {
        self.r.zeroize();
    }
}

/// Wire form of a [`ReKeyShare`] (zeroized on drop).
#[derive(Clone, Serialize, Deserialize)]
struct ReKeyShareWire {
    params: Fingerprint,
    delegator: [u8; 8],
    delegatee: [u8; 8],
    proxy: [u8; 4],
    proxies: [u8; 4],
    #[serde(with = "coterie_base::bytes")]
    share: Vec<u8>,
}

impl Drop for ReKeyShareWire {
    fn drop(&mut self) {
        self.share.zeroize();
    }
}

/// Wire form of a [`ReEncShare`].
#[derive(Clone, Debug, Serialize, Deserialize)]
struct ReEncShareWire {
    params: Fingerprint,
    delegatee: [u8; 8],
    proxy: [u8; 4],
    proxies: [u8; 4],
    level: u32,
    digest: [u8; 32],
    #[serde(with = "coterie_base::bytes")]
    c0: Vec<u8>,
}

/// Wire form of a [`ReEncryptedCiphertext`].
#[derive(Clone, Debug, Serialize, Deserialize)]
struct ReEncryptedWire {
    params: Fingerprint,
    delegatee: [u8; 8],
    #[serde(with = "coterie_base::bytes")]
    ciphertext: Vec<u8>,
}

coterie_base::versioned! {
    MaskingKeyWire => b"BFVM" v 1,
    ReKeyShareWire => b"BFVR" v 1,
    ReEncShareWire => b"BFVE" v 1,
    ReEncryptedWire => b"BFVC" v 1,
}
