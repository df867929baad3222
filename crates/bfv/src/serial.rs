//! Versioned, bounded serialization of keys, plaintexts and ciphertexts.
//!
//! Every object is encoded (postcard) as a wire struct that starts with the format version
//! [`FORMAT_VERSION`], a kind tag and the [`Fingerprint`] of its
//! parameter set. Decoding takes the [`Context`] the object must belong to and rejects, with an
//! error and never a panic: inputs longer than the largest valid encoding (checked before parsing,
//! so no allocation bomb), another version or kind, another parameter set (degree, moduli, `t`), a
//! level that does not exist, polynomials of the wrong size and unreduced residues.
//!
//! Seeded objects (public keys, key switching keys, seeded ciphertexts) carry their 32-byte seed
//! instead of the uniform polynomials, which are re-expanded on decoding.

use crate::ciphertext::{Ciphertext, SeededCiphertext};
use crate::context::{Context, Fingerprint};
use crate::encoding::Plaintext;
use crate::keys::{
    GaloisKey, GaloisKeys, KeySwitchKey, PublicKey, RelinKey, SecretKey, seed_label,
};
use crate::{Error, Result};
use coterie_math::poly::{Poly, Representation};
use coterie_math::prg::Seed;
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use zeroize::Zeroize;

/// Version of the wire format.
pub const FORMAT_VERSION: u16 = 1;

/// Kind tags of the wire structs.
mod kind {
    pub const PLAINTEXT: u8 = 1;
    pub const CIPHERTEXT: u8 = 2;
    pub const SEEDED_CIPHERTEXT: u8 = 3;
    pub const SECRET_KEY: u8 = 4;
    pub const PUBLIC_KEY: u8 = 5;
    pub const RELIN_KEY: u8 = 6;
    pub const GALOIS_KEY: u8 = 7;
    pub const GALOIS_KEYS: u8 = 8;
}

/// Common header of every wire struct.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// [`FORMAT_VERSION`].
    pub version: u16,
    /// What the payload is.
    pub kind: u8,
    /// Parameter-set fingerprint.
    pub params: Fingerprint,
}

/// Wire form of a [`Plaintext`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PlaintextWire {
    /// Header.
    pub header: Header,
    /// `N` coefficients in `[0, t)`.
    pub coeffs: Vec<u64>,
}

/// Wire form of a [`Ciphertext`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CiphertextWire {
    /// Header.
    pub header: Header,
    /// Level.
    pub level: u32,
    /// 2 or 3 polynomials, coefficient form, limb-major residues.
    pub parts: Vec<Vec<u64>>,
}

/// Wire form of a [`SeededCiphertext`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SeededCiphertextWire {
    /// Header.
    pub header: Header,
    /// Seed of `c_1`.
    pub seed: Seed,
    /// `c_0` (top level, coefficient form).
    pub c0: Vec<u64>,
}

/// Wire form of a [`SecretKey`] (zeroized on drop).
#[derive(Clone, Serialize, Deserialize)]
pub struct SecretKeyWire {
    /// Header.
    pub header: Header,
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
    /// Header.
    pub header: Header,
    /// Seed of `p_1`.
    pub seed: Seed,
    /// `p_0` (top level, NTT form).
    pub p0: Vec<u64>,
}

/// Wire form of a [`KeySwitchKey`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KeySwitchKeyWire {
    /// Seed of the `a_i`.
    pub seed: Seed,
    /// The `L` polynomials `b_i` (top level, NTT form).
    pub b: Vec<Vec<u64>>,
}

/// Wire form of a [`RelinKey`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RelinKeyWire {
    /// Header.
    pub header: Header,
    /// The key switching key.
    pub ksk: KeySwitchKeyWire,
}

/// Wire form of a [`GaloisKey`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GaloisKeyWire {
    /// Header.
    pub header: Header,
    /// Galois element.
    pub g: u64,
    /// The key switching key.
    pub ksk: KeySwitchKeyWire,
}

/// Wire form of [`GaloisKeys`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GaloisKeysWire {
    /// Header.
    pub header: Header,
    /// `(g, key)` pairs.
    pub keys: Vec<(u64, KeySwitchKeyWire)>,
}

fn header(ctx: &Context, kind: u8) -> Header {
    Header {
        version: FORMAT_VERSION,
        kind,
        params: *ctx.fingerprint(),
    }
}

fn check_header(ctx: &Context, h: &Header, kind: u8) -> Result<()> {
    if h.version != FORMAT_VERSION {
        return Err(Error::Malformed(format!(
            "format version {} (expected {FORMAT_VERSION})",
            h.version
        )));
    }
    if h.kind != kind {
        return Err(Error::Malformed(format!(
            "object kind {} (expected {kind})",
            h.kind
        )));
    }
    if &h.params != ctx.fingerprint() {
        return Err(Error::Mismatch(
            "encoded for another parameter set (degree, moduli or t differ)".into(),
        ));
    }
    Ok(())
}

fn encode<T: Serialize>(v: &T) -> Vec<u8> {
    postcard::to_allocvec(v).expect("serializing to a Vec cannot fail")
}

fn decode<T: DeserializeOwned>(bytes: &[u8], max: usize) -> Result<T> {
    if bytes.len() > max {
        return Err(Error::Malformed(format!(
            "{} bytes exceed the largest valid encoding ({max})",
            bytes.len()
        )));
    }
    postcard::from_bytes(bytes).map_err(|e| Error::Malformed(format!("decoding: {e}")))
}

/// Upper bound on the encoded size of `polys` polynomials of `limbs` limbs, plus headers.
fn max_size(ctx: &Context, polys: usize, limbs: usize) -> usize {
    256 + polys * (16 + 10 * ctx.degree() * limbs)
}

fn poly_from(ctx: &Context, level: usize, repr: Representation, data: Vec<u64>) -> Result<Poly> {
    let ring = ctx.ring(level)?;
    if data.len() != ring.degree() * ring.limbs() {
        return Err(Error::Malformed(format!(
            "polynomial of {} residues, expected {} (degree {} × {} primes)",
            data.len(),
            ring.degree() * ring.limbs(),
            ring.degree(),
            ring.limbs()
        )));
    }
    Ok(Poly::from_residues(&ring, repr, data)?)
}

impl Plaintext {
    /// Versioned encoding.
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&PlaintextWire {
            header: header(&self.ctx, kind::PLAINTEXT),
            coeffs: self.coeffs.clone(),
        })
    }

    /// Bounded decoding for `ctx`.
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let w: PlaintextWire = decode(bytes, max_size(ctx, 1, 1))?;
        check_header(ctx, &w.header, kind::PLAINTEXT)?;
        let t = ctx.plaintext_modulus();
        if w.coeffs.len() != ctx.degree() || w.coeffs.iter().any(|&c| c >= t) {
            return Err(Error::Malformed(
                "plaintext needs N coefficients below t".into(),
            ));
        }
        Ok(Plaintext {
            ctx: ctx.clone(),
            coeffs: w.coeffs,
        })
    }
}

impl Ciphertext {
    /// Versioned encoding.
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&CiphertextWire {
            header: header(&self.ctx, kind::CIPHERTEXT),
            level: self.level as u32,
            parts: self.parts.iter().map(|p| p.data().to_vec()).collect(),
        })
    }

    /// Bounded decoding for `ctx`: rejects another parameter set, a level that does not exist,
    /// other than 2 or 3 parts, wrong sizes and unreduced residues.
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let w: CiphertextWire = decode(bytes, max_size(ctx, 3, ctx.max_level() + 1))?;
        check_header(ctx, &w.header, kind::CIPHERTEXT)?;
        let level = w.level as usize;
        if level > ctx.max_level() {
            return Err(Error::Malformed(format!(
                "level {level} above the top level {}",
                ctx.max_level()
            )));
        }
        if !(2..=3).contains(&w.parts.len()) {
            return Err(Error::Malformed(format!(
                "{} ciphertext parts",
                w.parts.len()
            )));
        }
        let parts = w
            .parts
            .into_iter()
            .map(|d| poly_from(ctx, level, Representation::Coefficient, d))
            .collect::<Result<_>>()?;
        Ok(Ciphertext {
            ctx: ctx.clone(),
            level,
            parts,
        })
    }
}

impl SeededCiphertext {
    /// Versioned encoding (seed + `c_0`: about half of a full ciphertext).
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&SeededCiphertextWire {
            header: header(&self.ctx, kind::SEEDED_CIPHERTEXT),
            seed: self.seed,
            c0: self.c0.data().to_vec(),
        })
    }

    /// Bounded decoding for `ctx`.
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let w: SeededCiphertextWire = decode(bytes, max_size(ctx, 1, ctx.max_level() + 1))?;
        check_header(ctx, &w.header, kind::SEEDED_CIPHERTEXT)?;
        let c0 = poly_from(ctx, ctx.max_level(), Representation::Coefficient, w.c0)?;
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
            header: header(&self.ctx, kind::SECRET_KEY),
            coeffs: self.coeffs.clone(),
        };
        encode(&w)
    }

    /// Bounded decoding for `ctx`.
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let mut w: SecretKeyWire = decode(bytes, 256 + 10 * ctx.degree())?;
        check_header(ctx, &w.header, kind::SECRET_KEY)?;
        let coeffs = std::mem::take(&mut w.coeffs);
        SecretKey::from_coefficients(ctx, coeffs)
    }
}

impl PublicKey {
    /// Versioned encoding (seed + `p_0`).
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&PublicKeyWire {
            header: header(&self.ctx, kind::PUBLIC_KEY),
            seed: self.seed,
            p0: self.p0.data().to_vec(),
        })
    }

    /// Bounded decoding for `ctx` (re-expands `p_1` from the seed).
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let w: PublicKeyWire = decode(bytes, max_size(ctx, 1, ctx.max_level() + 1))?;
        check_header(ctx, &w.header, kind::PUBLIC_KEY)?;
        let p0 = poly_from(ctx, ctx.max_level(), Representation::Ntt, w.p0)?;
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
            seed: self.seed,
            b: self.b.iter().map(|p| p.data().to_vec()).collect(),
        }
    }

    fn from_wire(ctx: &Context, w: KeySwitchKeyWire) -> Result<Self> {
        let top = ctx.max_level();
        if w.b.len() != top + 1 {
            return Err(Error::Malformed(format!(
                "key switching key with {} components, expected {}",
                w.b.len(),
                top + 1
            )));
        }
        let ring = ctx.ring(top)?;
        let b =
            w.b.into_iter()
                .map(|d| poly_from(ctx, top, Representation::Ntt, d))
                .collect::<Result<Vec<_>>>()?;
        let a = (0..=top)
            .map(|i| Poly::from_seed(&ring, Representation::Ntt, &w.seed, &seed_label(b"ksk", i)))
            .collect::<coterie_math::Result<Vec<_>>>()?;
        Ok(KeySwitchKey {
            ctx: ctx.clone(),
            seed: w.seed,
            b,
            a,
        })
    }
}

fn ksk_max(ctx: &Context) -> usize {
    let l = ctx.max_level() + 1;
    max_size(ctx, l, l)
}

impl RelinKey {
    /// Versioned encoding (seed + the `b_i`).
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&RelinKeyWire {
            header: header(&self.ksk.ctx, kind::RELIN_KEY),
            ksk: self.ksk.to_wire(),
        })
    }

    /// Bounded decoding for `ctx`.
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let w: RelinKeyWire = decode(bytes, ksk_max(ctx))?;
        check_header(ctx, &w.header, kind::RELIN_KEY)?;
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
            header: header(&self.ksk.ctx, kind::GALOIS_KEY),
            g: self.g as u64,
            ksk: self.ksk.to_wire(),
        })
    }

    /// Bounded decoding for `ctx`.
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let w: GaloisKeyWire = decode(bytes, ksk_max(ctx))?;
        check_header(ctx, &w.header, kind::GALOIS_KEY)?;
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
            header: header(ctx, kind::GALOIS_KEYS),
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
        check_header(ctx, &w.header, kind::GALOIS_KEYS)?;
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
