//! Versioned, size-bounded serialization of parameters, keys and ciphertexts.
//!
//! Every encoding is one `coterie_base::envelope` (magic `CTRE`, tag `b"TF"` + kind + torus
//! width ([`tag_of`]), [`FORMAT_VERSION`], payload length) around a postcard payload. Decoding
//! ([`from_bytes`]) first rejects inputs longer than the caller's limit, then checks magic, tag
//! (so kind and torus width) and version, then decodes (postcard
//! needs at least one input byte per element, and serde caps preallocation, so a forged length
//! cannot allocate more than the input size allows), and finally validates the structure
//! (dimensions in range, lengths consistent with them, decompositions that fit the torus). A
//! malformed input is an [`Error::Malformed`], never a panic.
//!
//! Bootstrapping keys are serialized in the coefficient domain; the Fourier form is rebuilt on
//! load ([`crate::boolean::ServerKey::from_parts`]).
//!
//! ```
//! use coterie_tfhe::lwe::LweCiphertext;
//! use coterie_tfhe::serialization::{from_bytes, to_bytes};
//! let c = LweCiphertext::trivial(4, 7u32);
//! let bytes = to_bytes(&c).unwrap();
//! let d: LweCiphertext<u32> = from_bytes(&bytes, 1 << 20).unwrap();
//! assert_eq!(c, d);
//! assert!(from_bytes::<LweCiphertext<u64>>(&bytes, 1 << 20).is_err()); // other torus width
//! ```

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use zeroize::{Zeroize, ZeroizeOnDrop};

use coterie_math::gadget::SignedDecomposer;

use crate::boolean::{ClientKey, ServerKey};
use crate::bootstrap::LweBootstrapKey;
use crate::ggsw::GgswCiphertext;
use crate::glwe::{GlweCiphertext, GlweSecretKey};
use crate::lwe::{LweCiphertext, LweKeyswitchKey, LweSecretKey};
use crate::params::{MAX_GLWE_DIMENSION, MAX_LWE_DIMENSION, TfheParams};
use crate::public_key::GlwePublicKey;
use crate::torus::Torus;
use crate::{Error, Result};

/// Current format version (2: the `coterie_base` envelope; 1 was this crate's own `CTFH` one).
pub const FORMAT_VERSION: u16 = 2;
/// First two bytes of every tag of this crate ([`tag_of`]).
pub const TAG_PREFIX: [u8; 2] = *b"TF";

/// A type with a versioned encoding.
pub trait Versioned: Sized {
    /// Kind tag in the envelope.
    const KIND: u8;
    /// Torus width tag (0 for width-independent types).
    const TORUS_BITS: u8;
    /// The serialized form.
    type Wire: Serialize + DeserializeOwned;
    /// Converts to the serialized form.
    fn to_wire(&self) -> Self::Wire;
    /// Validates and converts from the serialized form.
    ///
    /// # Errors
    /// [`Error::Malformed`] if the structure is inconsistent.
    fn from_wire(w: Self::Wire) -> Result<Self>;
}

/// The envelope tag of `X`: `b"TF"`, its kind, its torus width.
pub fn tag_of<X: Versioned>() -> [u8; 4] {
    [TAG_PREFIX[0], TAG_PREFIX[1], X::KIND, X::TORUS_BITS]
}

/// Encodes `x` in its versioned envelope.
///
/// # Errors
/// [`Error::Malformed`] if the serializer fails (not expected for valid values).
pub fn to_bytes<X: Versioned>(x: &X) -> Result<Vec<u8>> {
    coterie_base::envelope::seal(tag_of::<X>(), FORMAT_VERSION, &x.to_wire())
        .map_err(|e| Error::Malformed(format!("encoding failed: {e}")))
}

/// Decodes a value of type `X`, rejecting inputs longer than `max_bytes`, foreign envelopes,
/// other versions, kinds or torus widths, and structurally invalid payloads.
///
/// # Errors
/// [`Error::Malformed`] describing the first problem found.
pub fn from_bytes<X: Versioned>(bytes: &[u8], max_bytes: usize) -> Result<X> {
    if bytes.len() > max_bytes {
        return Err(Error::Malformed(format!(
            "input of {} bytes exceeds the limit of {max_bytes}",
            bytes.len()
        )));
    }
    let w: X::Wire = coterie_base::envelope::open(tag_of::<X>(), FORMAT_VERSION, bytes, max_bytes)
        .map_err(|e| Error::Malformed(e.to_string()))?;
    X::from_wire(w)
}

fn malformed<X>(m: &str) -> Result<X> {
    Err(Error::Malformed(m.into()))
}

fn check_poly_size(n: usize) -> Result<()> {
    if !n.is_power_of_two()
        || !(crate::fourier::MIN_POLY_SIZE..=crate::fourier::MAX_POLY_SIZE).contains(&n)
    {
        return malformed("polynomial size out of range");
    }
    Ok(())
}

fn check_glwe_dim(k: usize) -> Result<()> {
    if k == 0 || k > MAX_GLWE_DIMENSION {
        return malformed("GLWE dimension out of range");
    }
    Ok(())
}

fn check_decomp<T: Torus>(base_log: u32, levels: u32) -> Result<()> {
    SignedDecomposer::new(T::BITS, base_log, levels)
        .map(|_| ())
        .map_err(|_| Error::Malformed("decomposition does not fit the torus".into()))
}

impl Versioned for TfheParams {
    const KIND: u8 = 1;
    const TORUS_BITS: u8 = 0;
    type Wire = TfheParams;
    fn to_wire(&self) -> Self::Wire {
        self.clone()
    }
    fn from_wire(w: Self::Wire) -> Result<Self> {
        if w.name.len() > 256 {
            return malformed("parameter name too long");
        }
        w.validate().map_err(|e| Error::Malformed(e.to_string()))?;
        Ok(w)
    }
}

impl<T: Torus> Versioned for LweCiphertext<T> {
    const KIND: u8 = 2;
    const TORUS_BITS: u8 = T::BITS as u8;
    type Wire = LweCiphertext<T>;
    fn to_wire(&self) -> Self::Wire {
        self.clone()
    }
    fn from_wire(w: Self::Wire) -> Result<Self> {
        if w.as_slice().len() > MAX_LWE_DIMENSION * MAX_GLWE_DIMENSION + 1 {
            return malformed("LWE ciphertext length out of range");
        }
        Ok(w)
    }
}

impl<T: Torus> Versioned for GlweCiphertext<T> {
    const KIND: u8 = 3;
    const TORUS_BITS: u8 = T::BITS as u8;
    type Wire = GlweCiphertext<T>;
    fn to_wire(&self) -> Self::Wire {
        self.clone()
    }
    fn from_wire(w: Self::Wire) -> Result<Self> {
        check_glwe_dim(w.k)?;
        check_poly_size(w.n)?;
        if w.data.len() != (w.k + 1) * w.n {
            return malformed("GLWE ciphertext length is not (k+1)·N");
        }
        Ok(w)
    }
}

impl<T: Torus> Versioned for LweKeyswitchKey<T> {
    const KIND: u8 = 4;
    const TORUS_BITS: u8 = T::BITS as u8;
    type Wire = LweKeyswitchKey<T>;
    fn to_wire(&self) -> Self::Wire {
        self.clone()
    }
    fn from_wire(w: Self::Wire) -> Result<Self> {
        check_decomp::<T>(w.base_log, w.levels)?;
        let max_in = MAX_LWE_DIMENSION * MAX_GLWE_DIMENSION;
        if w.input_dimension == 0
            || w.input_dimension > max_in
            || w.output_dimension == 0
            || w.output_dimension > MAX_LWE_DIMENSION
        {
            return malformed("key-switching key dimensions out of range");
        }
        let want = w.input_dimension * w.levels as usize * (w.output_dimension + 1);
        if w.data.len() != want {
            return malformed("key-switching key length does not match its dimensions");
        }
        Ok(w)
    }
}

fn check_ggsw<T: Torus>(
    g: &GgswCiphertext<T>,
    k: usize,
    n: usize,
    base_log: u32,
    levels: u32,
) -> Result<()> {
    if g.k != k || g.n != n || g.base_log != base_log || g.levels != levels {
        return malformed("GGSW shape differs from the key's");
    }
    if g.data.len() != (k + 1) * levels as usize * (k + 1) * n {
        return malformed("GGSW length does not match its shape");
    }
    Ok(())
}

impl<T: Torus> Versioned for LweBootstrapKey<T> {
    const KIND: u8 = 5;
    const TORUS_BITS: u8 = T::BITS as u8;
    type Wire = LweBootstrapKey<T>;
    fn to_wire(&self) -> Self::Wire {
        self.clone()
    }
    fn from_wire(w: Self::Wire) -> Result<Self> {
        check_glwe_dim(w.k)?;
        check_poly_size(w.n)?;
        check_decomp::<T>(w.base_log, w.levels)?;
        if w.ggsw.is_empty() || w.ggsw.len() > MAX_LWE_DIMENSION {
            return malformed("bootstrapping key input dimension out of range");
        }
        for g in &w.ggsw {
            check_ggsw(g, w.k, w.n, w.base_log, w.levels)?;
        }
        Ok(w)
    }
}

impl<T: Torus> Versioned for GlwePublicKey<T> {
    const KIND: u8 = 8;
    const TORUS_BITS: u8 = T::BITS as u8;
    type Wire = GlweCiphertext<T>;
    fn to_wire(&self) -> Self::Wire {
        self.as_ciphertext().clone()
    }
    fn from_wire(w: Self::Wire) -> Result<Self> {
        Ok(GlwePublicKey::from_ciphertext(GlweCiphertext::from_wire(
            w,
        )?))
    }
}

/// Serialized form of a [`ServerKey`].
#[derive(Serialize, Deserialize)]
#[serde(bound = "")]
pub struct ServerKeyWire<T: Torus> {
    params: TfheParams,
    bsk: LweBootstrapKey<T>,
    ksk: LweKeyswitchKey<T>,
}

impl<T: Torus> Versioned for ServerKey<T> {
    const KIND: u8 = 6;
    const TORUS_BITS: u8 = T::BITS as u8;
    type Wire = ServerKeyWire<T>;
    fn to_wire(&self) -> Self::Wire {
        ServerKeyWire {
            params: self.params.clone(),
            bsk: self.bsk.clone(),
            ksk: self.ksk.clone(),
        }
    }
    fn from_wire(w: Self::Wire) -> Result<Self> {
        let params = TfheParams::from_wire(w.params)?;
        let bsk = LweBootstrapKey::from_wire(w.bsk)?;
        let ksk = LweKeyswitchKey::from_wire(w.ksk)?;
        ServerKey::from_parts(params, bsk, ksk).map_err(|e| Error::Malformed(e.to_string()))
    }
}

/// Serialized form of a [`ClientKey`] (secret; zeroized on drop).
#[derive(Serialize, Deserialize, Zeroize, ZeroizeOnDrop)]
#[serde(bound = "")]
pub struct ClientKeyWire<T: Torus> {
    #[zeroize(skip)]
    params: TfheParams,
    lwe_key: Vec<T>,
    glwe_key: Vec<T>,
}

impl<T: Torus> Versioned for ClientKey<T> {
    const KIND: u8 = 7;
    const TORUS_BITS: u8 = T::BITS as u8;
    type Wire = ClientKeyWire<T>;
    fn to_wire(&self) -> Self::Wire {
        ClientKeyWire {
            params: self.params.clone(),
            lwe_key: self.lwe_key.as_slice().to_vec(),
            glwe_key: self.glwe_key.as_slice().to_vec(),
        }
    }
    fn from_wire(mut w: Self::Wire) -> Result<Self> {
        let params = TfheParams::from_wire(w.params.clone())?;
        if w.lwe_key.len() != params.lwe_dimension || w.glwe_key.len() != params.big_lwe_dimension()
        {
            return malformed("client key lengths do not match the parameters");
        }
        let lwe = LweSecretKey::from_container(core::mem::take(&mut w.lwe_key));
        let glwe = GlweSecretKey::from_container(
            params.glwe_dimension,
            params.polynomial_size,
            core::mem::take(&mut w.glwe_key),
        )?;
        ClientKey::from_keys(&params, lwe, glwe).map_err(|e| Error::Malformed(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coterie_math::prg::Csprng;

    #[test]
    fn keys_roundtrip_and_still_work() {
        let mut rng = Csprng::insecure_from_seed_for_tests([9; 32]);
        let p = TfheParams::insecure_toy_u32();
        let ck = ClientKey::<u32>::generate(&p, &mut rng).unwrap();
        let sk = ServerKey::new(&ck, &mut rng).unwrap();
        let ck2: ClientKey<u32> = from_bytes(&to_bytes(&ck).unwrap(), 1 << 24).unwrap();
        let sb = to_bytes(&sk).unwrap();
        let sk2: ServerKey<u32> = from_bytes(&sb, 1 << 28).unwrap();
        assert_eq!(sk2.bootstrap_key(), sk.bootstrap_key());
        let mut ev = sk2.evaluator().unwrap();
        let a = ck.encrypt_bool(true, &mut rng);
        let b = ck2.encrypt_bool(false, &mut rng);
        let c = ev.nand(&a, &b).unwrap();
        assert!(ck2.decrypt_bool(&c) && ck.decrypt_bool(&c));
        // Too large for the limit.
        assert!(from_bytes::<ServerKey<u32>>(&sb, 1000).is_err());
        // Wrong kind / width.
        assert!(from_bytes::<ClientKey<u32>>(&sb, 1 << 28).is_err());
        assert!(from_bytes::<ServerKey<u64>>(&sb, 1 << 28).is_err());
    }

    #[test]
    fn malformed_inputs_are_errors() {
        let g = GlweCiphertext::<u64>::zero(2, 64);
        let mut bytes = to_bytes(&g).unwrap();
        assert!(from_bytes::<GlweCiphertext<u64>>(&bytes, 1 << 20).is_ok());
        // Truncations and bit flips never panic.
        for cut in 0..bytes.len().min(40) {
            let _ = from_bytes::<GlweCiphertext<u64>>(&bytes[..cut], 1 << 20);
        }
        for i in 0..bytes.len().min(64) {
            let mut b = bytes.clone();
            b[i] ^= 0x5a;
            let _ = from_bytes::<GlweCiphertext<u64>>(&b, 1 << 20);
        }
        // Inconsistent shape: claim k = 3 with the data of k = 2.
        let bad = GlweCiphertext::<u64> {
            k: 3,
            n: 64,
            data: vec![0; 3 * 64],
        };
        assert!(from_bytes::<GlweCiphertext<u64>>(&to_bytes(&bad).unwrap(), 1 << 20).is_err());
        // A public key is a GLWE ciphertext of zero with its own kind tag.
        let pk = GlwePublicKey::from_ciphertext(g.clone());
        let pb = to_bytes(&pk).unwrap();
        assert_eq!(from_bytes::<GlwePublicKey<u64>>(&pb, 1 << 20).unwrap(), pk);
        assert!(from_bytes::<GlweCiphertext<u64>>(&pb, 1 << 20).is_err());
        // Unknown version (bytes 8..10 of the envelope).
        bytes[8] = 9;
        assert!(from_bytes::<GlweCiphertext<u64>>(&bytes, 1 << 20).is_err());
        // Forged huge length: a tiny input claiming a giant vector fails without allocating it.
        let forged = [
            b'C', b'T', b'F', b'H', 1, 2, 32, 0xff, 0xff, 0xff, 0xff, 0x0f,
        ];
        assert!(from_bytes::<LweCiphertext<u32>>(&forged, 1 << 20).is_err());
        // Bad key-switching key shape.
        let ksk = LweKeyswitchKey::<u32> {
            input_dimension: 4,
            output_dimension: 2,
            base_log: 40,
            levels: 1,
            data: vec![0; 12],
        };
        assert!(from_bytes::<LweKeyswitchKey<u32>>(&to_bytes(&ksk).unwrap(), 1 << 20).is_err());
    }
}
