//! AKÖ key generation as plain per-party functions (static and dynamic variants).
//!
//! Each function computes one party's message from that party's own secrets and public data
//! only (the CRS seed for the common random polynomial `a`, the other parties' public-key
//! shares); the `combine_*` functions are public computations anyone (the evaluator) can run.
//! The protocol that moves the messages over a [`coterie_net::Mesh`] is in
//! [`crate::mk::protocol`].
//!
//! Sign convention: this crate's (TFHE-rs) convention, `phase = B − Σ A_j·S_j`. The paper's
//! `b^(q) = −z^(q)·a + e` becomes `b^(q) = a·z^(q) + e`, and its `RLwePubEncr` outputs
//! `(−r·B + m + e1, −r·a + e2)` become `(r·a + e2, r·B + m + e1)`; nothing else changes.
//!
//! All products of key material (`a·z^(q)`, `r·a`, `r·B`) are **exact**
//! ([`ProductMethod::Exact`], seed 003 §5.2 / O7): with `β = 2^-62`, a double-precision FFT product
//! of a 64-bit polynomial has an absolute error of about `2^17` integers, which sits inside the
//! blind-rotate key and is amplified by every external product. [`ProductMethod::F64FftInexact`]
//! exists only to reproduce that failure (test `t10_fft_in_keygen_breaks_correctness`).

use rand_core::CryptoRng;
use serde::{Deserialize, Serialize};
use zeroize::{Zeroize, ZeroizeOnDrop};

use coterie_math::prg::{Seed, Xof};

use crate::bootstrap::LweBootstrapKey;
use crate::ggsw::GgswCiphertext;
use crate::glwe::{GlweCiphertext, GlweSecretKey};
use crate::lwe::{
    LweCiphertext, LweKeyswitchKey, LweSecretKey, encrypt_lwe_ciphertext,
    generate_lwe_keyswitch_key,
};
use crate::mk::params::MkParams;
use crate::noise::NoiseSampler;
use crate::params::KeyDistribution;
use crate::public_key::{
    GlwePublicKey, PreparedPublicKey, ProductMethod, encrypt_constant_ggsw_with_prepared_public_key,
};
use crate::torus::Torus;
use crate::{Error, Result};

/// XOF label of the common random polynomial.
pub const CRP_LABEL: &[u8] = b"coterie-tfhe/mk/ako/crp/v1";

/// A party's secret keys: the LWE key `s^(q) ∈ B^n` (32-bit torus) and the ternary RLWE key
/// `z^(q)` (64-bit torus). Zeroized on drop.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct MkSecretKey {
    #[zeroize(skip)]
    party: usize,
    lwe: LweSecretKey<u32>,
    glwe: GlweSecretKey<u64>,
}

impl core::fmt::Debug for MkSecretKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "MkSecretKey(party {}, secret)", self.party)
    }
}

impl MkSecretKey {
    /// Fresh keys for party `party` (`AKÖ.SecKeyGen_q`).
    ///
    /// # Errors
    /// If the parameters are invalid.
    pub fn generate<R: CryptoRng + ?Sized>(
        params: &MkParams,
        party: usize,
        rng: &mut R,
    ) -> Result<Self> {
        params.validate()?;
        let lwe = LweSecretKey::generate_binary(params.lwe_dimension, rng);
        let glwe = GlweSecretKey::generate(
            1,
            params.polynomial_size,
            KeyDistribution::Ternary {
                p: params.ternary_p,
            },
            rng,
        )?;
        Ok(Self { party, lwe, glwe })
    }

    /// Keys from their parts (e.g. loaded from disk).
    ///
    /// # Errors
    /// [`Error::Malformed`] if the shapes do not match `params` or a coefficient is out of range.
    pub fn from_parts(
        params: &MkParams,
        party: usize,
        lwe: LweSecretKey<u32>,
        glwe: GlweSecretKey<u64>,
    ) -> Result<Self> {
        if lwe.dimension() != params.lwe_dimension
            || glwe.glwe_dimension() != 1
            || glwe.poly_size() != params.polynomial_size
            || lwe.as_slice().iter().any(|&b| b > 1)
            || glwe
                .as_slice()
                .iter()
                .any(|x| x.to_i64_centered().abs() > 1)
        {
            return Err(Error::Malformed("secret key shape or range".into()));
        }
        Ok(Self { party, lwe, glwe })
    }

    /// The party index.
    pub fn party(&self) -> usize {
        self.party
    }

    /// The LWE key `s^(q)` (secret).
    pub fn lwe_key(&self) -> &LweSecretKey<u32> {
        &self.lwe
    }

    /// The RLWE key `z^(q)` (secret).
    pub fn glwe_key(&self) -> &GlweSecretKey<u64> {
        &self.glwe
    }

    /// Party-local encryption of a bit (`EncrBool`: `+1/8` for true, `−1/8` for false) under
    /// `s^(q)`, dimension `n`. Embed it with [`crate::mk::eval::embed`] for a computation.
    pub fn encrypt_bool_local<R: CryptoRng + ?Sized>(
        &self,
        params: &MkParams,
        bit: bool,
        rng: &mut R,
    ) -> Result<LweCiphertext<u32>> {
        let noise = NoiseSampler::new(params.lwe_noise_std(), 32)?;
        let mut c = LweCiphertext::zero(params.lwe_dimension);
        let mu = if bit {
            1u32 << 29
        } else {
            (1u32 << 29).wrapping_neg()
        };
        encrypt_lwe_ciphertext(&self.lwe, &mut c, mu, &noise, rng);
        Ok(c)
    }
}

/// The common reference string: a public seed from which the common random polynomial `a` is
/// expanded (seed 003 O2: BLAKE3 XOF, label [`CRP_LABEL`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Crs {
    /// The public seed.
    pub seed: Seed,
}

impl Crs {
    /// The common random polynomial `a` (`N` uniform 64-bit torus coefficients).
    pub fn crp(&self, params: &MkParams) -> Vec<u64> {
        let mut x = Xof::new(&self.seed, CRP_LABEL, params.polynomial_size as u64);
        (0..params.polynomial_size)
            .map(|_| u64::random(&mut x))
            .collect()
    }
}

/// Party `q`'s public-key share `b^(q) = a·z^(q) + e^(q)` (round 1 of `BlindRotKeyGen`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublicKeyShare {
    /// The sender.
    pub party: usize,
    /// `b^(q)`, `N` words.
    pub body: Vec<u64>,
}

/// Computes party `q`'s public-key share.
///
/// # Errors
/// If the parameters are unsupported.
pub fn public_key_share<R: CryptoRng + ?Sized>(
    params: &MkParams,
    crs: &Crs,
    sk: &MkSecretKey,
    rng: &mut R,
) -> Result<PublicKeyShare> {
    let noise = NoiseSampler::new(params.glwe_noise_std(), 64)?;
    let crp = crs.crp(params);
    let pk = GlwePublicKey::generate_with_masks(&mut sk.glwe.prepare()?, &crp, &noise, rng)?;
    Ok(PublicKeyShare {
        party: sk.party,
        body: pk.as_ciphertext().body().to_vec(),
    })
}

fn check_parties(parties: &[usize]) -> Result<()> {
    if parties.is_empty() || parties.len() > crate::mk::params::MAX_PARTIES {
        return Err(Error::InvalidParameter("party count out of range".into()));
    }
    if parties.windows(2).any(|w| w[0] >= w[1]) {
        return Err(Error::InvalidParameter(
            "shares must come from distinct parties in increasing order".into(),
        ));
    }
    Ok(())
}

/// The common public key `(a, B = Σ_p b^(p))`, an RLWE sample of zero under `Z = Σ_p z^(p)`
/// (for a subset, the sum over the subset: `Z_S`). Shares must be in increasing party order.
///
/// # Errors
/// [`Error::InvalidParameter`] for repeated/unsorted parties or wrong lengths.
pub fn combine_public_key(
    params: &MkParams,
    crs: &Crs,
    shares: &[PublicKeyShare],
) -> Result<GlwePublicKey<u64>> {
    let parties: Vec<usize> = shares.iter().map(|s| s.party).collect();
    check_parties(&parties)?;
    let n = params.polynomial_size;
    let mut ct = GlweCiphertext::<u64>::zero(1, n);
    ct.as_mut_slice()[..n].copy_from_slice(&crs.crp(params));
    for s in shares {
        if s.body.len() != n {
            return Err(Error::InvalidParameter("public-key share length".into()));
        }
        for (b, x) in ct.body_mut().iter_mut().zip(&s.body) {
            *b = b.wrapping_add(*x);
        }
    }
    Ok(GlwePublicKey::from_ciphertext(ct))
}

/// Party `q`'s blind-rotate-key rows: `n` RGSW samples of its LWE key bits under `Z`, each
/// row a public-key encryption under the common key with its own fresh temporary key (Eq. 7).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BootstrapKeyShare {
    /// The sender.
    pub party: usize,
    /// `n` GGSW ciphertexts (GLWE dimension 1, `2d` rows).
    pub ggsw: Vec<GgswCiphertext<u64>>,
}

/// Computes party `q`'s blind-rotate-key rows with exact products.
///
/// # Errors
/// If the parameters are unsupported.
pub fn bootstrap_key_share<R: CryptoRng + ?Sized>(
    params: &MkParams,
    common_pk: &GlwePublicKey<u64>,
    sk: &MkSecretKey,
    rng: &mut R,
) -> Result<BootstrapKeyShare> {
    bootstrap_key_share_with_method(params, common_pk, sk, ProductMethod::Exact, rng, |_| {})
}

/// [`bootstrap_key_share`] with the product method chosen (the f64 FFT only for the T10
/// ablation) and a progress callback called with the number of key bits done.
///
/// # Errors
/// If the parameters are unsupported.
pub fn bootstrap_key_share_with_method<R: CryptoRng + ?Sized>(
    params: &MkParams,
    common_pk: &GlwePublicKey<u64>,
    sk: &MkSecretKey,
    method: ProductMethod,
    rng: &mut R,
    mut progress: impl FnMut(usize),
) -> Result<BootstrapKeyShare> {
    let noise = NoiseSampler::new(params.glwe_noise_std(), 64)?;
    let mut prep = PreparedPublicKey::new(common_pk, method)?;
    let mut ggsw = Vec::with_capacity(params.lwe_dimension);
    for (j, s) in sk.lwe.as_slice().iter().enumerate() {
        ggsw.push(encrypt_constant_ggsw_with_prepared_public_key(
            &mut prep,
            i64::from(*s),
            params.pbs_base_log,
            params.pbs_level,
            params.ternary_p,
            &noise,
            rng,
        )?);
        progress(j + 1);
    }
    Ok(BootstrapKeyShare {
        party: sk.party,
        ggsw,
    })
}

/// Party `q`'s key-switching key share: `N × d'` LWE samples under `s^(q)` (dimension `n`,
/// 32-bit torus) of `z^(q)_i / B'^l` (`KeySwitchKeyGen_q`; this crate's extraction is under
/// the coefficient vector of `Z` itself, so no `KeyExtract` permutation is needed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeySwitchKeyShare {
    /// The sender.
    pub party: usize,
    /// The key (input dimension `N`, output dimension `n`).
    pub ksk: LweKeyswitchKey<u32>,
}

/// Computes party `q`'s key-switching key share.
///
/// # Errors
/// If the parameters are unsupported.
pub fn keyswitch_key_share<R: CryptoRng + ?Sized>(
    params: &MkParams,
    sk: &MkSecretKey,
    rng: &mut R,
) -> Result<KeySwitchKeyShare> {
    let noise = NoiseSampler::new(params.lwe_noise_std(), 32)?;
    let mut z: Vec<u32> = sk
        .glwe
        .as_slice()
        .iter()
        .map(|x| x.to_i64_centered() as u32)
        .collect();
    let zin = LweSecretKey::from_container(core::mem::take(&mut z));
    let ksk = generate_lwe_keyswitch_key(
        &zin,
        &sk.lwe,
        params.ks_base_log,
        params.ks_level,
        &noise,
        rng,
    )?;
    Ok(KeySwitchKeyShare {
        party: sk.party,
        ksk,
    })
}

/// The evaluation key of a set of parties: blind-rotate key (`k·n` RGSW samples under `Z`,
/// party-major) and aggregated key-switching key (Eq. 8: `N × d'` LWE samples of dimension `k·n`
/// under the concatenated LWE key).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MkEvaluationKey {
    /// The parameters.
    pub params: MkParams,
    /// The parties, in slot order (party `parties[i]` owns LWE slot `i`).
    pub parties: Vec<usize>,
    /// Blind-rotate key (coefficient domain).
    pub bsk: LweBootstrapKey<u64>,
    /// Key-switching key `N → k·n`.
    pub ksk: LweKeyswitchKey<u32>,
}

impl MkEvaluationKey {
    /// Number of parties.
    pub fn party_count(&self) -> usize {
        self.parties.len()
    }

    /// Size in bytes (blind-rotate key + key-switching key).
    pub fn size_bytes(&self) -> usize {
        self.bsk.size_bytes() + self.ksk.size_bytes()
    }
}

fn check_bsk_share(params: &MkParams, s: &BootstrapKeyShare) -> Result<()> {
    let n = params.polynomial_size;
    let ok = s.ggsw.len() == params.lwe_dimension
        && s.ggsw.iter().all(|g| {
            g.k == 1
                && g.n == n
                && g.base_log == params.pbs_base_log
                && g.levels == params.pbs_level
                && g.data.len() == 2 * params.pbs_level as usize * 2 * n
        });
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidParameter(format!(
            "blind-rotate key share of party {} has the wrong shape",
            s.party
        )))
    }
}

fn check_ksk_share(params: &MkParams, s: &KeySwitchKeyShare) -> Result<()> {
    let k = &s.ksk;
    if k.input_dimension != params.polynomial_size
        || k.output_dimension != params.lwe_dimension
        || k.base_log != params.ks_base_log
        || k.levels != params.ks_level
        || k.data.len()
            != params.polynomial_size * params.ks_level as usize * (params.lwe_dimension + 1)
    {
        return Err(Error::InvalidParameter(format!(
            "key-switching key share of party {} has the wrong shape",
            s.party
        )));
    }
    Ok(())
}

/// Aggregates key-switching key shares (Eq. 8 / Eq. 10 for a subset): row `(i, l)` is
/// `[A^(1)_{i,l} | … | A^(k)_{i,l} | Σ_p b^(p)_{i,l}]`.
///
/// # Errors
/// For unsorted/repeated parties or wrong shapes.
pub fn combine_keyswitch_key(
    params: &MkParams,
    shares: &[&KeySwitchKeyShare],
) -> Result<LweKeyswitchKey<u32>> {
    let parties: Vec<usize> = shares.iter().map(|s| s.party).collect();
    check_parties(&parties)?;
    for s in shares {
        check_ksk_share(params, s)?;
    }
    let (n, k) = (params.lwe_dimension, shares.len());
    let rows = params.polynomial_size * params.ks_level as usize;
    let out_row = k * n + 1;
    let mut data = vec![0u32; rows * out_row];
    for (r, dst) in data.chunks_exact_mut(out_row).enumerate() {
        let mut body = 0u32;
        for (slot, s) in shares.iter().enumerate() {
            let src = &s.ksk.data[r * (n + 1)..(r + 1) * (n + 1)];
            dst[slot * n..(slot + 1) * n].copy_from_slice(&src[..n]);
            body = body.wrapping_add(src[n]);
        }
        dst[k * n] = body;
    }
    Ok(LweKeyswitchKey {
        input_dimension: params.polynomial_size,
        output_dimension: k * n,
        base_log: params.ks_base_log,
        levels: params.ks_level,
        data,
    })
}

/// The static evaluation key from all parties' shares (in increasing party order; the slot of a
/// party is its position).
///
/// # Errors
/// For mismatched share lists or wrong shapes.
pub fn combine_evaluation_key(
    params: &MkParams,
    bsk_shares: &[BootstrapKeyShare],
    ksk_shares: &[KeySwitchKeyShare],
) -> Result<MkEvaluationKey> {
    let parties: Vec<usize> = bsk_shares.iter().map(|s| s.party).collect();
    check_parties(&parties)?;
    if ksk_shares.iter().map(|s| s.party).collect::<Vec<_>>() != parties {
        return Err(Error::InvalidParameter(
            "blind-rotate and key-switching shares come from different parties".into(),
        ));
    }
    for s in bsk_shares {
        check_bsk_share(params, s)?;
    }
    let ksk = combine_keyswitch_key(params, &ksk_shares.iter().collect::<Vec<_>>())?;
    let ggsw = bsk_shares
        .iter()
        .flat_map(|s| s.ggsw.iter().cloned())
        .collect();
    Ok(MkEvaluationKey {
        params: params.clone(),
        parties,
        bsk: LweBootstrapKey {
            ggsw,
            k: 1,
            n: params.polynomial_size,
            base_log: params.pbs_base_log,
            levels: params.pbs_level,
        },
        ksk,
    })
}

// ------------------------------------------------------------------------------------------
// Dynamic variant (seed 003 §2.4).
// ------------------------------------------------------------------------------------------

/// A party's stored temporary keys of the dynamic variant (`r^(q)_{j,l}`, `r'^(q)_{j,l}`, one
/// per key bit and gadget level): **secret**, kept permanently so that the party can extend its
/// blind-rotate rows when a party joins later (spec O13). Zeroized on drop.
#[derive(Clone, Zeroize, ZeroizeOnDrop, Serialize, Deserialize)]
pub struct DynamicTemporaryKeys {
    #[zeroize(skip)]
    party: usize,
    /// `n · 2d` polynomials of `N` coefficients in `{-1, 0, 1}`: bit `j`, row `r < d` is the
    /// upper (`r_l`) key, row `d + l` the lower (`r'_l`) key.
    keys: Vec<i8>,
}

impl core::fmt::Debug for DynamicTemporaryKeys {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "DynamicTemporaryKeys(party {}, secret)", self.party)
    }
}

/// Party `q`'s dynamic blind-rotate material: for each of its key bits `j` and gadget rows,
/// the mask parts (`r·a + e`, with `s_j/B^l` added in the lower rows) and, per party `p` of the
/// global list, the body parts `r·b^(p) + e` (with `s_j/B^l` added to the upper rows of `p = q`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DynamicBootstrapShare {
    /// The owner `q`.
    pub party: usize,
    /// `n · 2d` mask polynomials (bit-major, then row).
    pub masks: Vec<u64>,
    /// For each party `p` (in increasing order): `(p, n · 2d` body polynomials).
    pub bodies: Vec<(usize, Vec<u64>)>,
}

fn row_message(params: &MkParams, bit: u32, l: u32) -> Vec<u64> {
    let mut m = vec![0u64; params.polynomial_size];
    m[0] = u64::from(bit).wrapping_mul(1u64 << (64 - l * params.pbs_base_log));
    m
}

fn single_pk(params: &MkParams, crp: &[u64], body: &[u64]) -> GlwePublicKey<u64> {
    let n = params.polynomial_size;
    let mut ct = GlweCiphertext::<u64>::zero(1, n);
    ct.as_mut_slice()[..n].copy_from_slice(crp);
    ct.body_mut().copy_from_slice(body);
    GlwePublicKey::from_ciphertext(ct)
}

/// Bodies `r·b^(p) + e (+ s_j/B^l on the upper rows when p = q)` for one party `p`.
fn dynamic_bodies_for<R: CryptoRng + ?Sized>(
    params: &MkParams,
    crs: &Crs,
    sk: &MkSecretKey,
    tmp: &DynamicTemporaryKeys,
    share_p: &PublicKeyShare,
    rng: &mut R,
) -> Result<Vec<u64>> {
    let (n_big, d) = (params.polynomial_size, params.pbs_level as usize);
    if share_p.body.len() != n_big {
        return Err(Error::InvalidParameter("public-key share length".into()));
    }
    let noise = NoiseSampler::new(params.glwe_noise_std(), 64)?;
    let crp = crs.crp(params);
    let mut prep = PreparedPublicKey::new(
        &single_pk(params, &crp, &share_p.body),
        ProductMethod::Exact,
    )?;
    let mut out = Vec::with_capacity(params.lwe_dimension * 2 * d * n_big);
    let mut r = vec![0i64; n_big];
    let mut both = vec![0u64; 2 * n_big];
    for (j, s) in sk.lwe.as_slice().iter().enumerate() {
        for row in 0..2 * d {
            let off = (j * 2 * d + row) * n_big;
            for (x, y) in r.iter_mut().zip(&tmp.keys[off..off + n_big]) {
                *x = i64::from(*y);
            }
            prep.mul_temporary_key(&r, &mut both);
            let body = &mut both[n_big..];
            noise.add_noise(rng, body);
            if row < d && share_p.party == sk.party {
                body[0] = body[0].wrapping_add(row_message(params, *s, row as u32 + 1)[0]);
            }
            out.extend_from_slice(body);
        }
    }
    r.zeroize();
    both.zeroize();
    Ok(out)
}

/// Party `q`'s dynamic blind-rotate material against the public-key shares of the global list
/// (`BlindRotKeyGen_dyn_q`), with fresh temporary keys (returned: keep them, secret).
///
/// # Errors
/// If the parameters are unsupported or a share is malformed.
pub fn dynamic_bootstrap_share<R: CryptoRng + ?Sized>(
    params: &MkParams,
    crs: &Crs,
    sk: &MkSecretKey,
    pk_shares: &[PublicKeyShare],
    rng: &mut R,
) -> Result<(DynamicBootstrapShare, DynamicTemporaryKeys)> {
    check_parties(&pk_shares.iter().map(|s| s.party).collect::<Vec<_>>())?;
    let (n_big, d) = (params.polynomial_size, params.pbs_level as usize);
    let mut keys = vec![0i8; params.lwe_dimension * 2 * d * n_big];
    let mut tmp = vec![0i64; keys.len()];
    coterie_math::sample::ternary(rng, params.ternary_p, &mut tmp)?;
    for (k, t) in keys.iter_mut().zip(&tmp) {
        *k = *t as i8;
    }
    tmp.zeroize();
    let tk = DynamicTemporaryKeys {
        party: sk.party,
        keys,
    };
    // Mask parts: r·a + e, with s_j/B^l on the lower rows.
    let noise = NoiseSampler::new(params.glwe_noise_std(), 64)?;
    let crp = crs.crp(params);
    let mut prep = PreparedPublicKey::new(&single_pk(params, &crp, &crp), ProductMethod::Exact)?;
    let mut masks = Vec::with_capacity(params.lwe_dimension * 2 * d * n_big);
    let mut r = vec![0i64; n_big];
    let mut both = vec![0u64; 2 * n_big];
    for (j, s) in sk.lwe.as_slice().iter().enumerate() {
        for row in 0..2 * d {
            let off = (j * 2 * d + row) * n_big;
            for (x, y) in r.iter_mut().zip(&tk.keys[off..off + n_big]) {
                *x = i64::from(*y);
            }
            prep.mul_temporary_key(&r, &mut both);
            let m = &mut both[..n_big];
            noise.add_noise(rng, m);
            if row >= d {
                m[0] = m[0].wrapping_add(row_message(params, *s, (row - d) as u32 + 1)[0]);
            }
            masks.extend_from_slice(m);
        }
    }
    r.zeroize();
    both.zeroize();
    let mut bodies = Vec::with_capacity(pk_shares.len());
    for sp in pk_shares {
        bodies.push((sp.party, dynamic_bodies_for(params, crs, sk, &tk, sp, rng)?));
    }
    Ok((
        DynamicBootstrapShare {
            party: sk.party,
            masks,
            bodies,
        },
        tk,
    ))
}

/// Late join: party `q` extends its dynamic material with the body parts for a new party's
/// public-key share, reusing its stored temporary keys (seed 003 §2.4).
///
/// # Errors
/// If the new party is already present, or the keys/share do not match.
pub fn dynamic_extend_for_new_party<R: CryptoRng + ?Sized>(
    params: &MkParams,
    crs: &Crs,
    sk: &MkSecretKey,
    tmp: &DynamicTemporaryKeys,
    share: &mut DynamicBootstrapShare,
    new_pk: &PublicKeyShare,
    rng: &mut R,
) -> Result<()> {
    if tmp.party != sk.party || share.party != sk.party {
        return Err(Error::InvalidParameter("keys of another party".into()));
    }
    if share.bodies.iter().any(|(p, _)| *p == new_pk.party) {
        return Err(Error::InvalidParameter("party already present".into()));
    }
    let b = dynamic_bodies_for(params, crs, sk, tmp, new_pk, rng)?;
    share.bodies.push((new_pk.party, b));
    share.bodies.sort_by_key(|(p, _)| *p);
    Ok(())
}

/// Assembles the blind-rotate key of a subset `S` (Eq. 9): for each `q ∈ S` (increasing), the
/// RGSW rows `[Σ_{p∈S} bΔ(p) , aΔ]`, `[Σ_{p∈S} b□(p), a□]`, under `Z_S = Σ_{p∈S} z^(p)`.
/// Only the material of parties in `S` is read.
///
/// # Errors
/// If a party of `S` is missing a share or a body for another member of `S`.
pub fn assemble_dynamic_bootstrap_key(
    params: &MkParams,
    subset: &[usize],
    shares: &[&DynamicBootstrapShare],
) -> Result<LweBootstrapKey<u64>> {
    check_parties(subset)?;
    let (n_big, d) = (params.polynomial_size, params.pbs_level as usize);
    let per_bit = 2 * d * n_big;
    let len = params.lwe_dimension * per_bit;
    let mut ggsw = Vec::with_capacity(subset.len() * params.lwe_dimension);
    for &q in subset {
        let sh = shares
            .iter()
            .find(|s| s.party == q)
            .ok_or_else(|| Error::InvalidParameter(format!("no dynamic share of party {q}")))?;
        if sh.masks.len() != len {
            return Err(Error::InvalidParameter("dynamic share shape".into()));
        }
        let mut sum = vec![0u64; len];
        for &p in subset {
            let (_, b) = sh.bodies.iter().find(|(x, _)| *x == p).ok_or_else(|| {
                Error::InvalidParameter(format!("party {q} has no rows for party {p}"))
            })?;
            if b.len() != len {
                return Err(Error::InvalidParameter("dynamic share shape".into()));
            }
            for (s, x) in sum.iter_mut().zip(b) {
                *s = s.wrapping_add(*x);
            }
        }
        for j in 0..params.lwe_dimension {
            // GGSW rows: (mask, body) for each of the 2d rows. Row order of this crate:
            // component 0 (mask rows, message in the mask = the paper's lower half) first,
            // then the body rows (the paper's upper half).
            let mut data = Vec::with_capacity(2 * per_bit);
            for row in (d..2 * d).chain(0..d) {
                let off = j * per_bit + row * n_big;
                data.extend_from_slice(&sh.masks[off..off + n_big]);
                data.extend_from_slice(&sum[off..off + n_big]);
            }
            ggsw.push(GgswCiphertext {
                k: 1,
                n: n_big,
                base_log: params.pbs_base_log,
                levels: params.pbs_level,
                data,
            });
        }
    }
    Ok(LweBootstrapKey {
        ggsw,
        k: 1,
        n: n_big,
        base_log: params.pbs_base_log,
        levels: params.pbs_level,
    })
}

/// The evaluation key of a subset `S` of a dynamic global list: blind-rotate key by
/// [`assemble_dynamic_bootstrap_key`], key-switching key by aggregating the shares of `S` only
/// (Eq. 10).
///
/// # Errors
/// As the two assembly functions.
pub fn dynamic_evaluation_key(
    params: &MkParams,
    subset: &[usize],
    bsk_shares: &[&DynamicBootstrapShare],
    ksk_shares: &[&KeySwitchKeyShare],
) -> Result<MkEvaluationKey> {
    let bsk = assemble_dynamic_bootstrap_key(params, subset, bsk_shares)?;
    let ks: Vec<&KeySwitchKeyShare> = subset
        .iter()
        .map(|q| {
            ksk_shares
                .iter()
                .find(|s| s.party == *q)
                .copied()
                .ok_or_else(|| Error::InvalidParameter(format!("no KS share of party {q}")))
        })
        .collect::<Result<_>>()?;
    let ksk = combine_keyswitch_key(params, &ks)?;
    Ok(MkEvaluationKey {
        params: params.clone(),
        parties: subset.to_vec(),
        bsk,
        ksk,
    })
}

/// Runs the whole static key generation of parties `0..k` **in one process** (every party's
/// secret in one place): **insecure**, for tests, benchmarks and the noise experiments only.
/// Returns the secret keys (slot order) and the evaluation key.
///
/// # Errors
/// If the parameters are invalid.
pub fn insecure_simulate_all_parties<R: CryptoRng + ?Sized>(
    params: &MkParams,
    k: usize,
    crs: &Crs,
    method: ProductMethod,
    rng: &mut R,
) -> Result<(Vec<MkSecretKey>, MkEvaluationKey)> {
    let sks = (0..k)
        .map(|q| MkSecretKey::generate(params, q, rng))
        .collect::<Result<Vec<_>>>()?;
    let pks = sks
        .iter()
        .map(|sk| public_key_share(params, crs, sk, rng))
        .collect::<Result<Vec<_>>>()?;
    let pk = combine_public_key(params, crs, &pks)?;
    let bsk = sks
        .iter()
        .map(|sk| bootstrap_key_share_with_method(params, &pk, sk, method, rng, |_| {}))
        .collect::<Result<Vec<_>>>()?;
    let ksk = sks
        .iter()
        .map(|sk| keyswitch_key_share(params, sk, rng))
        .collect::<Result<Vec<_>>>()?;
    let ek = combine_evaluation_key(params, &bsk, &ksk)?;
    Ok((sks, ek))
}
