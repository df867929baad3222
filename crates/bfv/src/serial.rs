//! Versioned, bounded serialization of keys, plaintexts and ciphertexts through coterie-base's
//! envelope (`CTRE` | tag | version | length | postcard payload).
//!
//! Each object has its own envelope tag and format version ([`coterie_base::Versioned`] on its
//! wire struct), and its payload starts with the [`Fingerprint`] of its parameter set. Decoding
//! takes the [`Context`] the object must belong to and rejects, with an error and never a panic:
//! inputs longer than the largest valid encoding (checked before parsing, so no allocation bomb),
//! another tag or version, another parameter set (degree, moduli, plaintext modulus), a level
//! that does not exist, polynomials of the wrong size and unreduced residues.
//!
//! Seeded objects (public keys, key switching keys, seeded ciphertexts) carry their 32-byte seed
//! instead of the uniform polynomials, which are re-expanded on decoding.

use crate::ciphertext::{Ciphertext, KeySet, SeededCiphertext};
use crate::context::{Context, Fingerprint};
use crate::encoding::{Lift, Plaintext, PtData};
use crate::keys::{
    Decomposition, GaloisKey, GaloisKeys, KeySwitchKey, PublicKey, RelinKey, SecretKey, seed_label,
};
use crate::{Error, Result};
use coterie_base::Versioned;
use coterie_base::envelope::{open, seal};
use coterie_math::bigint::{from_le_bytes_bounded, to_le_bytes_padded};
use coterie_math::poly::{Poly, Representation};
use coterie_math::prg::Seed;
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use zeroize::Zeroize;

/// Most parts accepted in one ciphertext encoding (single key up to degree 63, multi-key up to
/// 63 users, multi-key tensors up to 7 users).
pub const MAX_PARTS: usize = 64;

/// Coefficients of a plaintext on the wire.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum PlaintextCoeffs {
    /// `N` coefficients in `[0, t)`.
    Scalar(Vec<u64>),
    /// The small lift (`N` coefficients) of a cyclotomic plaintext whose lift fits 64-bit words.
    Cyclotomic(Vec<i64>),
    /// The representative (`D` coefficients in `[0, p)`, each little-endian in exactly
    /// `⌈log2 p / 8⌉` bytes) of a cyclotomic plaintext with a wide lift (`b ≥ 2^64`: Params III).
    Representative(#[serde(with = "coterie_base::bytes")] Vec<u8>),
}

/// Wire form of a [`Plaintext`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PlaintextWire {
    /// Parameter-set fingerprint.
    pub params: Fingerprint,
    /// The coefficients.
    pub coeffs: PlaintextCoeffs,
}

/// Wire form of a [`Ciphertext`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CiphertextWire {
    /// Parameter-set fingerprint.
    pub params: Fingerprint,
    /// Level.
    pub level: u32,
    /// The key set.
    pub keys: KeySet,
    /// The polynomials, coefficient form, packed ([`Poly::to_packed`]: `log q` bits per
    /// coefficient).
    #[serde(with = "coterie_base::bytes::list")]
    pub parts: Vec<Vec<u8>>,
}

/// Wire form of a [`SeededCiphertext`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SeededCiphertextWire {
    /// Parameter-set fingerprint.
    pub params: Fingerprint,
    /// Seed of `c_1`.
    pub seed: Seed,
    /// `c_0` (top level, coefficient form, packed).
    #[serde(with = "coterie_base::bytes")]
    pub c0: Vec<u8>,
}

/// Wire form of a [`SecretKey`] (zeroized on drop).
#[derive(Clone, Serialize, Deserialize)]
pub struct SecretKeyWire {
    /// Parameter-set fingerprint.
    pub params: Fingerprint,
    /// The `N` coefficients of `s`.
    pub coeffs: Vec<i64>,
}

impl Drop for SecretKeyWire {
    fn drop(&mut self) {
        self.coeffs.zeroize();
    }
}

/// Wire form of a [`PublicKey`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PublicKeyWire {
    /// Parameter-set fingerprint.
    pub params: Fingerprint,
    /// Seed of `p_1`.
    pub seed: Seed,
    /// `p_0` (top level, NTT form, packed).
    #[serde(with = "coterie_base::bytes")]
    pub p0: Vec<u8>,
}

/// Wire form of a [`KeySwitchKey`] (a gadget ciphertext).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KeySwitchKeyWire {
    /// The gadget decomposition.
    pub decomposition: Decomposition,
    /// Seed of the `a_i` (`None`: they follow in `a`).
    pub seed: Option<Seed>,
    /// The polynomials `b_i` (top level, NTT form, packed).
    #[serde(with = "coterie_base::bytes::list")]
    pub b: Vec<Vec<u8>>,
    /// The polynomials `a_i` when not seeded (empty otherwise; packed).
    #[serde(with = "coterie_base::bytes::list")]
    pub a: Vec<Vec<u8>>,
}

/// Wire form of a [`RelinKey`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RelinKeyWire {
    /// Parameter-set fingerprint.
    pub params: Fingerprint,
    /// The key switching key.
    pub ksk: KeySwitchKeyWire,
}

/// Wire form of a [`GaloisKey`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GaloisKeyWire {
    /// Parameter-set fingerprint.
    pub params: Fingerprint,
    /// Galois element.
    pub g: u64,
    /// The key switching key.
    pub ksk: KeySwitchKeyWire,
}

/// Wire form of [`GaloisKeys`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GaloisKeysWire {
    /// Parameter-set fingerprint.
    pub params: Fingerprint,
    /// `(g, key)` pairs.
    pub keys: Vec<(u64, KeySwitchKeyWire)>,
}

// Version 2 of the polynomial-carrying wires packs residues at their primes' bit widths
// (version 1 held 64-bit words).
coterie_base::versioned! {
    PlaintextWire => b"BFVp" v 1,
    CiphertextWire => b"BFVc" v 2,
    SeededCiphertextWire => b"BFVs" v 2,
    SecretKeyWire => b"BFVk" v 1,
    PublicKeyWire => b"BFVK" v 2,
    RelinKeyWire => b"BFVr" v 2,
    GaloisKeyWire => b"BFVg" v 2,
    GaloisKeysWire => b"BFVG" v 2,
}

pub(crate) fn check_params(ctx: &Context, params: &Fingerprint) -> Result<()> {
    if params != ctx.fingerprint() {
        return Err(Error::Mismatch(
            "encoded for another parameter set (degree, moduli or plaintext modulus differ)".into(),
        ));
    }
    Ok(())
}

pub(crate) fn encode<T: Versioned + Serialize>(v: &T) -> Vec<u8> {
    seal(T::TAG, T::VERSION, v).expect("objects of a valid context are far below 4 GiB")
}

pub(crate) fn decode<T: Versioned + DeserializeOwned>(bytes: &[u8], max: usize) -> Result<T> {
    Ok(open(T::TAG, T::VERSION, bytes, max)?)
}

/// Upper bound on the encoded size of `polys` polynomials of `limbs` limbs, plus headers.
pub(crate) fn max_size(ctx: &Context, polys: usize, limbs: usize) -> usize {
    256 + polys * (16 + 10 * ctx.degree() * limbs)
}

/// A packed polynomial ([`Poly::to_packed`]) at `level`: exact length, reduced residues.
pub(crate) fn poly_from(
    ctx: &Context,
    level: usize,
    repr: Representation,
    data: &[u8],
) -> Result<Poly> {
    let ring = ctx.ring(level)?;
    Ok(Poly::from_packed(&ring, repr, data)?)
}

/// Bytes per representative coefficient on the wire: `⌈log2 p / 8⌉`.
fn rep_width(ctx: &Context) -> usize {
    (ctx.plaintext_modulus().modulus().significant_bits() as usize).div_ceil(8)
}

impl Plaintext {
    /// Versioned encoding.
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&PlaintextWire {
            params: *self.ctx.fingerprint(),
            coeffs: match &self.data {
                PtData::Scalar(c) => PlaintextCoeffs::Scalar(c.clone()),
                PtData::Cyclotomic {
                    lift: Lift::Words(lift),
                    ..
                } => PlaintextCoeffs::Cyclotomic(lift.clone()),
                PtData::Cyclotomic { rep, .. } => {
                    let width = rep_width(&self.ctx);
                    let mut bytes = Vec::with_capacity(rep.len() * width);
                    for r in rep {
                        // The representative is reduced mod p, so it fits `width` bytes.
                        bytes.extend(
                            to_le_bytes_padded(r, width).unwrap_or_else(|_| vec![0; width]),
                        );
                    }
                    PlaintextCoeffs::Representative(bytes)
                }
            },
        })
    }

    /// Bounded decoding for `ctx`.
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let limit = max_size(ctx, 1, 1).max(256 + ctx.degree() * rep_width(ctx));
        let w: PlaintextWire = decode(bytes, limit)?;
        check_params(ctx, &w.params)?;
        match (w.coeffs, ctx.plaintext_modulus().scalar()) {
            (PlaintextCoeffs::Scalar(coeffs), Some(t)) => {
                if coeffs.len() != ctx.degree() || coeffs.iter().any(|&c| c >= t) {
                    return Err(Error::Malformed(
                        "plaintext needs N coefficients below t".into(),
                    ));
                }
                Ok(Plaintext::scalar(ctx, coeffs))
            }
            (PlaintextCoeffs::Cyclotomic(lift), None) => Plaintext::from_lift(ctx, lift),
            (PlaintextCoeffs::Representative(bytes), None) => {
                let (width, p) = (rep_width(ctx), ctx.plaintext_modulus().modulus());
                let d = bytes.len() / width.max(1);
                let slots = ctx.cyclo().map_or(0, |c| c.d);
                if width == 0 || bytes.len() % width != 0 || d != slots {
                    return Err(Error::Malformed(format!(
                        "a representative needs D = {slots} coefficients of {width} bytes"
                    )));
                }
                let rep = bytes
                    .chunks_exact(width)
                    .map(|c| {
                        let x = from_le_bytes_bounded(c, width)?;
                        if x >= p {
                            return Err(Error::Malformed(
                                "representative coefficient not below p".into(),
                            ));
                        }
                        Ok(x)
                    })
                    .collect::<Result<Vec<_>>>()?;
                Plaintext::from_representative(ctx, &rep)
            }
            _ => Err(Error::Malformed(
                "plaintext of the other kind of plaintext modulus".into(),
            )),
        }
    }
}

impl Ciphertext {
    /// Versioned encoding.
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&CiphertextWire {
            params: *self.ctx.fingerprint(),
            level: self.level as u32,
            keys: self.keys.clone(),
            parts: self.parts.iter().map(Poly::to_packed).collect(),
        })
    }

    /// Bounded decoding for `ctx`: rejects another parameter set, a level that does not exist,
    /// a number of parts that does not fit the key set (or above [`MAX_PARTS`]), wrong sizes and
    /// unreduced residues.
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let w: CiphertextWire = decode(
            bytes,
            max_size(ctx, MAX_PARTS, ctx.max_level() + 1) + 16 * MAX_PARTS,
        )?;
        check_params(ctx, &w.params)?;
        let level = w.level as usize;
        if level > ctx.max_level() {
            return Err(Error::Malformed(format!(
                "level {level} above the top level {}",
                ctx.max_level()
            )));
        }
        if w.parts.len() > MAX_PARTS {
            return Err(Error::Malformed(format!(
                "{} ciphertext parts",
                w.parts.len()
            )));
        }
        w.keys.check_parts(w.parts.len())?;
        let parts = w
            .parts
            .into_iter()
            .map(|d| poly_from(ctx, level, Representation::Coefficient, &d))
            .collect::<Result<_>>()?;
        Ciphertext::from_parts_with_keys(ctx, level, parts, w.keys)
    }
}

impl SeededCiphertext {
    /// Versioned encoding (seed + `c_0`: about half of a full ciphertext).
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&SeededCiphertextWire {
            params: *self.ctx.fingerprint(),
            seed: self.seed,
            c0: self.c0.to_packed(),
        })
    }

    /// Bounded decoding for `ctx`.
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let w: SeededCiphertextWire = decode(bytes, max_size(ctx, 1, ctx.max_level() + 1))?;
        check_params(ctx, &w.params)?;
        let c0 = poly_from(ctx, ctx.max_level(), Representation::Coefficient, &w.c0)?;
        Ok(SeededCiphertext {
            ctx: ctx.clone(),
            seed: w.seed,
            c0,
        })
    }
}

impl SecretKey {
    /// Versioned encoding (secret! the caller protects the bytes).
    pub fn to_bytes(&self) -> Vec<u8> {
        let w = SecretKeyWire {
            params: *self.ctx.fingerprint(),
            coeffs: self.coeffs.clone(),
        };
        encode(&w)
    }

    /// Bounded decoding for `ctx`.
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let mut w: SecretKeyWire = decode(bytes, 256 + 10 * ctx.degree())?;
        check_params(ctx, &w.params)?;
        let coeffs = std::mem::take(&mut w.coeffs);
        SecretKey::from_coefficients(ctx, coeffs)
    }
}

impl PublicKey {
    /// Versioned encoding (seed + `p_0`).
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&PublicKeyWire {
            params: *self.ctx.fingerprint(),
            seed: self.seed,
            p0: self.p0.to_packed(),
        })
    }

    /// Bounded decoding for `ctx` (re-expands `p_1` from the seed).
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let w: PublicKeyWire = decode(bytes, max_size(ctx, 1, ctx.max_level() + 1))?;
        check_params(ctx, &w.params)?;
        let p0 = poly_from(ctx, ctx.max_level(), Representation::Ntt, &w.p0)?;
        let p1 = Poly::from_seed(
            &ctx.ring(ctx.max_level())?,
            Representation::Ntt,
            &w.seed,
            &seed_label(b"pk", 0),
        )?;
        Ok(PublicKey {
            ctx: ctx.clone(),
            seed: w.seed,
            p0,
            p1,
        })
    }
}

impl KeySwitchKey {
    fn to_wire(&self) -> KeySwitchKeyWire {
        KeySwitchKeyWire {
            decomposition: self.decomposition,
            seed: self.seed,
            b: self.b.iter().map(Poly::to_packed).collect(),
            a: if self.seed.is_some() {
                Vec::new()
            } else {
                self.a.iter().map(Poly::to_packed).collect()
            },
        }
    }

    fn from_wire(ctx: &Context, w: KeySwitchKeyWire) -> Result<Self> {
        let top = ctx.max_level();
        let ring = ctx.ring(top)?;
        if let Decomposition::PowerOfTwo { base_log } = w.decomposition
            && !(1..=62).contains(&base_log)
        {
            return Err(Error::Malformed(format!("gadget base 2^{base_log}")));
        }
        let rows = w.decomposition.rows(&ring)?;
        if w.b.len() != rows {
            return Err(Error::Malformed(format!(
                "key switching key with {} components, expected {rows}",
                w.b.len()
            )));
        }
        let b =
            w.b.into_iter()
                .map(|d| poly_from(ctx, top, Representation::Ntt, &d))
                .collect::<Result<Vec<_>>>()?;
        let a = match w.seed {
            Some(seed) => {
                if !w.a.is_empty() {
                    return Err(Error::Malformed(
                        "a seeded key switching key with stored a_i".into(),
                    ));
                }
                (0..rows)
                    .map(|i| {
                        Poly::from_seed(&ring, Representation::Ntt, &seed, &seed_label(b"ksk", i))
                    })
                    .collect::<coterie_math::Result<Vec<_>>>()?
            }
            None => {
                if w.a.len() != rows {
                    return Err(Error::Malformed(format!(
                        "key switching key with {} stored a_i, expected {rows}",
                        w.a.len()
                    )));
                }
                w.a.into_iter()
                    .map(|d| poly_from(ctx, top, Representation::Ntt, &d))
                    .collect::<Result<Vec<_>>>()?
            }
        };
        Ok(KeySwitchKey {
            ctx: ctx.clone(),
            decomposition: w.decomposition,
            seed: w.seed,
            b,
            a,
        })
    }
}

/// Largest encoding of one key switching key: `2·rows` polynomials (stored `a_i`), rows at most
/// `log Q` (power-of-two gadget with `B = 2`).
fn ksk_max(ctx: &Context) -> usize {
    let l = ctx.max_level() + 1;
    let rows = ctx.params().log_q() as usize;
    max_size(ctx, 2 * rows.max(l), l)
}

impl RelinKey {
    /// Versioned encoding (seed + the `b_i`, or the `a_i` too for a collective key).
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&RelinKeyWire {
            params: *self.ksk.ctx.fingerprint(),
            ksk: self.ksk.to_wire(),
        })
    }

    /// Bounded decoding for `ctx`.
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let w: RelinKeyWire = decode(bytes, ksk_max(ctx))?;
        check_params(ctx, &w.params)?;
        Ok(RelinKey {
            ksk: KeySwitchKey::from_wire(ctx, w.ksk)?,
        })
    }
}

fn check_galois(ctx: &Context, g: u64) -> Result<usize> {
    let two_n = 2 * ctx.degree() as u64;
    if g >= two_n || g.is_multiple_of(2) {
        return Err(Error::Malformed(format!(
            "Galois element {g} is not an odd residue mod {two_n}"
        )));
    }
    Ok(g as usize)
}

impl GaloisKey {
    /// Versioned encoding.
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&GaloisKeyWire {
            params: *self.ksk.ctx.fingerprint(),
            g: self.g as u64,
            ksk: self.ksk.to_wire(),
        })
    }

    /// Bounded decoding for `ctx`.
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let w: GaloisKeyWire = decode(bytes, ksk_max(ctx))?;
        check_params(ctx, &w.params)?;
        Ok(GaloisKey {
            g: check_galois(ctx, w.g)?,
            ksk: KeySwitchKey::from_wire(ctx, w.ksk)?,
        })
    }
}

/// Most Galois keys accepted in one [`GaloisKeys`] encoding (enough for every power-of-two
/// rotation of the largest degree, both directions, and the row swap).
pub const MAX_GALOIS_KEYS: usize = 64;

impl GaloisKeys {
    /// Versioned encoding.
    pub fn to_bytes(&self, ctx: &Context) -> Vec<u8> {
        encode(&GaloisKeysWire {
            params: *ctx.fingerprint(),
            keys: self
                .keys
                .values()
                .map(|k| (k.g as u64, k.ksk.to_wire()))
                .collect(),
        })
    }

    /// Bounded decoding for `ctx` (at most [`MAX_GALOIS_KEYS`] keys).
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let w: GaloisKeysWire = decode(bytes, MAX_GALOIS_KEYS * ksk_max(ctx))?;
        check_params(ctx, &w.params)?;
        if w.keys.len() > MAX_GALOIS_KEYS {
            return Err(Error::Malformed(format!("{} Galois keys", w.keys.len())));
        }
        let mut out = GaloisKeys::default();
        for (g, k) in w.keys {
            out.insert(GaloisKey {
                g: check_galois(ctx, g)?,
                ksk: KeySwitchKey::from_wire(ctx, k)?,
            });
        }
        Ok(out)
    }
}
