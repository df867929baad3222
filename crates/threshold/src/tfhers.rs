//! Reading LWE ciphertexts (and, for a key import, LWE secret keys) that TFHE-rs
//! serialized, without depending on TFHE-rs: the byte layouts below are parsed here by hand, and
//! the `tfhe` crate is only a **dev-dependency** of coterie-threshold (its tests produce the bytes
//! with the real crate and check that they parse to exactly what
//! [`LweCiphertext::from_body_last`] makes of the ciphertext's container).
//!
//! Verified against **TFHE-rs 1.8.2** (`tfhe` 1.8.2, `tfhe-versionable` 0.8.0,
//! `tfhe-safe-serialize` 0.1.1, bincode 1.3.3), `core_crypto::LweCiphertext<Vec<u64>>` and
//! `core_crypto::LweSecretKey<Vec<u64>>`.
//!
//! # The encodings
//!
//! All integers little-endian, fixed width (bincode 1's fixint encoding, which both
//! `bincode::serialize` and TFHE-rs's `safe_serialize` use): a `Vec` or string is a `u64`
//! length then its elements, an enum variant is a `u32` index, a `usize` is a `u64`.
//!
//! **Ciphertext, unversioned** — `bincode::serialize(&ct)` (the serde derive):
//!
//! | bytes | field |
//! |---|---|
//! | 8 | `L = n + 1`, the container's length |
//! | 8·L | `a_0 .. a_{n-1}, b` (mask then body) |
//! | 16 | ciphertext modulus `q` as `u128`: `0` for the native `2^64`, else `q` |
//! | 8 | scalar bits, `64` |
//!
//! **Ciphertext, versioned** — `bincode::serialize(&ct.versionize())` (what `safe_serialize`
//! would write after its header): a `u32` version index `0` (`LweCiphertextVersions::V0`), then
//! the same fields, except that the modulus is preceded by its own `u32` version index `0`
//! (`SerializableCiphertextModulusVersions::V0`).
//!
//! **Secret key** — `bincode::serialize(&key)`: `u64` `n`, then `n` words; versioned
//! (`key.versionize()`): a `u32` `0` (`LweSecretKeyVersions::V0`) first.
//!
//! **Safe serialization** — `tfhe::safe_serialization::safe_serialize` (and
//! `SerializationConfig`): a header, then the versioned value (header mode `0`) or the
//! unversioned one (mode `1`, `disable_versioning()`):
//!
//! | bytes | field |
//! |---|---|
//! | 8 + 3 | header version, the string `"0.5"` |
//! | 4 | mode: `0` versioned, `1` unversioned |
//! | 8 + 3 | `"0.1"`: the versioning scheme (mode 0) or tfhe-safe-serialize's version (mode 1) |
//! | 8 + len | the type's name, e.g. `"core_crypto::LweSecretKey"` |
//!
//! TFHE-rs 1.8 implements `Named` (needed by `safe_serialize`) for `core_crypto::LweSecretKey`
//! but **not** for `core_crypto::LweCiphertext`, so a core_crypto ciphertext cannot be
//! safe-serialized; a safe-serialization header on a ciphertext is refused with a message naming
//! the type it announces. (A `shortint::Ciphertext` is another type, with more fields; it is not
//! read here.)
//!
//! # Moduli
//!
//! Only power-of-two moduli are read (the threshold decryption works over `q = 2^k`): the native
//! `2^64` gives `k = 64`; a non-native `2^k` (`k < 64`) is kept by TFHE-rs in the **top** `k`
//! bits of each word, so every word must be a multiple of `2^{64-k}` and is shifted down by
//! `64 - k` (the result is the ciphertext over `Z_{2^k}` whose phase TFHE-rs's decryption
//! returns). Any other modulus, and 32- or 128-bit words, are refused. The message modulus is not
//! stored by TFHE-rs; callers pass `message_log` (`m`, a padding bit counted inside it).
//!
//! # Refusals
//!
//! Every length prefix is checked against the bytes that remain (and against
//! [`MAX_LWE_DIMENSION`]) before anything is allocated; every version index, version string,
//! type name, modulus and scalar width is checked; trailing bytes are refused. Errors are
//! [`Error::Ciphertext`] (ciphertexts) and [`Error::Key`] (keys), never panics.
//!
//! ```
//! use coterie_threshold::tfhers::{TfheRsEncoding, detect, lwe_ciphertext_from_tfhe_rs};
//! // bincode of an unversioned LweCiphertext<Vec<u64>>: n = 1, native modulus
//! let mut bytes = 2u64.to_le_bytes().to_vec();
//! bytes.extend(7u64.to_le_bytes()); // a_0
//! bytes.extend((1u64 << 63).to_le_bytes()); // b
//! bytes.extend(0u128.to_le_bytes()); // q = 2^64
//! bytes.extend(64u64.to_le_bytes());
//! assert_eq!(detect(&bytes), Some(TfheRsEncoding::Unversioned));
//! let ct = lwe_ciphertext_from_tfhe_rs(&bytes, 1).unwrap();
//! assert_eq!((ct.mask(), ct.body(), ct.modulus_log()), (&[7u64][..], 1 << 63, 64));
//! assert!(lwe_ciphertext_from_tfhe_rs(&bytes[..bytes.len() - 1], 1).is_err());
//! ```

use coterie_math::lwe::MAX_LWE_DIMENSION;
use zeroize::Zeroizing;

use crate::{Error, LweCiphertext, Result};

/// The safe-serialization header version TFHE-rs 1.8 writes (and the only one read here).
pub const SAFE_SERIALIZATION_VERSION: &str = "0.5";
/// The versioning-scheme version in a versioned safe-serialization header.
pub const VERSIONING_VERSION: &str = "0.1";
/// The tfhe-safe-serialize version (major.minor) in an unversioned safe-serialization header.
pub const UNVERSIONED_CRATE_VERSION: &str = "0.1";
/// The name TFHE-rs 1.8 gives `core_crypto::LweSecretKey` in a safe-serialization header.
pub const LWE_SECRET_KEY_NAME: &str = "core_crypto::LweSecretKey";

/// Longest string (version or type name) a safe-serialization header may hold here.
const MAX_HEADER_STRING: usize = 256;
/// The scalar width of the words read here.
const SCALAR_BITS: u64 = 64;

/// Which TFHE-rs encoding a byte string looks like (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TfheRsEncoding {
    /// `tfhe::safe_serialization::safe_serialize`: a header naming the type and the versions,
    /// then the value (versioned or not, as the header says).
    SafeSerialized,
    /// `bincode::serialize(&value.versionize())`: the value behind its version index.
    Versioned,
    /// `bincode::serialize(&value)`: the serde derive, no version information.
    Unversioned,
}

impl std::fmt::Display for TfheRsEncoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::SafeSerialized => "TFHE-rs safe serialization",
            Self::Versioned => "TFHE-rs versioned bincode",
            Self::Unversioned => "TFHE-rs bincode",
        })
    }
}

/// Reads fixed-width little-endian fields, refusing to run past the end.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, pos: 0 }
    }

    fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn take(&mut self, n: usize, field: &str) -> std::result::Result<&'a [u8], String> {
        match self
            .pos
            .checked_add(n)
            .and_then(|end| self.bytes.get(self.pos..end))
        {
            Some(s) => {
                self.pos += n;
                Ok(s)
            }
            None => Err(format!(
                "truncated: {field} needs {n} bytes at offset {}, {} remain",
                self.pos,
                self.remaining()
            )),
        }
    }

    fn array<const N: usize>(&mut self, field: &str) -> std::result::Result<[u8; N], String> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, field)?);
        Ok(a)
    }

    fn u32(&mut self, field: &str) -> std::result::Result<u32, String> {
        self.array(field).map(u32::from_le_bytes)
    }

    fn u64(&mut self, field: &str) -> std::result::Result<u64, String> {
        self.array(field).map(u64::from_le_bytes)
    }

    fn u128(&mut self, field: &str) -> std::result::Result<u128, String> {
        self.array(field).map(u128::from_le_bytes)
    }

    /// A version index of a TFHE-rs `...Versions` enum; only `V0` exists in TFHE-rs 1.8.
    fn version_index(&mut self, what: &str) -> std::result::Result<(), String> {
        match self.u32(what)? {
            0 => Ok(()),
            v => Err(format!(
                "{what} is at version index {v}; TFHE-rs 1.8 writes V0 (index 0), the only one \
                 read here"
            )),
        }
    }

    /// A length prefix for `unit`-byte elements, checked against `max` and the bytes that
    /// remain before anything is allocated.
    fn len(&mut self, field: &str, unit: usize, max: usize) -> std::result::Result<usize, String> {
        let len = self.u64(field)?;
        let fits = usize::try_from(len)
            .ok()
            .filter(|&l| l <= max)
            .filter(|&l| l.checked_mul(unit).is_some_and(|b| b <= self.remaining()));
        fits.ok_or_else(|| {
            format!(
                "{field} declares {len} elements of {unit} bytes: more than the {} bytes that \
                 remain or the limit of {max}",
                self.remaining()
            )
        })
    }

    fn string(&mut self, field: &str) -> std::result::Result<&'a str, String> {
        let len = self.len(field, 1, MAX_HEADER_STRING)?;
        std::str::from_utf8(self.take(len, field)?).map_err(|_| format!("{field} is not UTF-8"))
    }

    /// A `Vec<u64>`: a length prefix (`1..=max`) then the words, pushed into `out` (whose
    /// capacity is reserved once, so a secret never leaves a reallocated copy behind).
    fn words_into(
        &mut self,
        field: &str,
        max: usize,
        out: &mut Vec<u64>,
    ) -> std::result::Result<(), String> {
        let len = self.len(field, 8, max)?;
        if len == 0 {
            return Err(format!("{field} is empty"));
        }
        out.reserve_exact(len);
        for _ in 0..len {
            out.push(self.u64(field)?);
        }
        Ok(())
    }

    fn finish(&self) -> std::result::Result<(), String> {
        match self.remaining() {
            0 => Ok(()),
            r => Err(format!("{r} trailing bytes after the value")),
        }
    }
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let mut a = [0u8; 4];
    a.copy_from_slice(bytes.get(at..at.checked_add(4)?)?);
    Some(u32::from_le_bytes(a))
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    let mut a = [0u8; 8];
    a.copy_from_slice(bytes.get(at..at.checked_add(8)?)?);
    Some(u64::from_le_bytes(a))
}

/// Whether the bytes open like a safe-serialization header: a short length prefix followed by
/// a version string made of digits and dots (e.g. `"0.5"`).
fn opens_with_header(bytes: &[u8]) -> bool {
    let Some(len) = u64_at(bytes, 0).and_then(|l| usize::try_from(l).ok()) else {
        return false;
    };
    if !(1..=16).contains(&len) {
        return false;
    }
    bytes
        .get(8..8 + len)
        .is_some_and(|s| s.contains(&b'.') && s.iter().all(|&c| c.is_ascii_digit() || c == b'.'))
}

/// Which TFHE-rs encoding `bytes` look like, from their first bytes only (no field is checked;
/// the readers do that); `None` for anything else, including every coterie envelope (CTLW
/// ciphertexts). Works for any TFHE-rs value whose first field is a `Vec` (ciphertexts and
/// secret keys).
///
/// A safe-serialization header is recognised by its version string; versioned bincode by a
/// `u32` version index below 16 followed by a plausible length; unversioned bincode by a
/// plausible length (`1..=MAX_LWE_DIMENSION + 1`) in its first eight bytes. (An unversioned
/// value of fewer than 16 words whose first word happens to spell a version string would be
/// taken for a header and refused: no usable LWE dimension is that small.)
///
/// ```
/// use coterie_threshold::tfhers::{TfheRsEncoding, detect};
/// let mut versioned = 0u32.to_le_bytes().to_vec(); // LweCiphertextVersions::V0
/// versioned.extend(1025u64.to_le_bytes()); // n + 1 = 1025 words follow ...
/// assert_eq!(detect(&versioned), Some(TfheRsEncoding::Versioned));
/// assert_eq!(detect(b"CTRE...."), None);
/// ```
pub fn detect(bytes: &[u8]) -> Option<TfheRsEncoding> {
    if bytes.starts_with(&coterie_base::envelope::MAGIC) {
        return None;
    }
    if opens_with_header(bytes) {
        return Some(TfheRsEncoding::SafeSerialized);
    }
    let plausible = |len: u64| (1..=MAX_LWE_DIMENSION as u64 + 1).contains(&len);
    let (index, after) = (u32_at(bytes, 0), u64_at(bytes, 4));
    if index == Some(0) && after.is_some_and(|l| l <= MAX_LWE_DIMENSION as u64 + 1) {
        return Some(TfheRsEncoding::Versioned);
    }
    if u64_at(bytes, 0).is_some_and(plausible) {
        return Some(TfheRsEncoding::Unversioned);
    }
    // a later version index (refused by the readers with a message naming it)
    if index.is_some_and(|v| v < 16) && after.is_some_and(plausible) {
        return Some(TfheRsEncoding::Versioned);
    }
    None
}

/// Whether `bytes` look like a TFHE-rs serialization ([`detect`] finds one).
///
/// ```
/// assert!(!coterie_threshold::tfhers::looks_like_tfhe_rs(b"not a ciphertext"));
/// ```
pub fn looks_like_tfhe_rs(bytes: &[u8]) -> bool {
    detect(bytes).is_some()
}

/// Reads a safe-serialization header; returns whether the value that follows is versioned.
fn read_header(
    r: &mut Reader<'_>,
    expected_name: Option<&str>,
) -> std::result::Result<bool, String> {
    let version = r.string("header version")?;
    if version != SAFE_SERIALIZATION_VERSION {
        return Err(format!(
            "safe-serialization header version {version:?}; TFHE-rs 1.8 writes \
             {SAFE_SERIALIZATION_VERSION:?}, the only one read here"
        ));
    }
    let mode = r.u32("versioning mode")?;
    let (versioned, expected) = match mode {
        0 => (true, VERSIONING_VERSION),
        1 => (false, UNVERSIONED_CRATE_VERSION),
        m => {
            return Err(format!(
                "unknown versioning mode {m} (0 versioned, 1 unversioned)"
            ));
        }
    };
    let mode_version = r.string("versioning version")?;
    if mode_version != expected {
        return Err(format!(
            "{} header with version {mode_version:?}; TFHE-rs 1.8 writes {expected:?}",
            if versioned {
                "versioned"
            } else {
                "unversioned"
            }
        ));
    }
    let name = r.string("type name")?;
    match expected_name {
        Some(want) if name == want => Ok(versioned),
        Some(want) => Err(format!("the header names type {name:?}, not {want:?}")),
        None => Err(format!(
            "the header names type {name:?}: not an LWE ciphertext (TFHE-rs 1.8 cannot \
             safe-serialize a core_crypto LweCiphertext; store bincode of `ct.versionize()` or \
             of `ct` instead)"
        )),
    }
}

/// `k` for a TFHE-rs ciphertext modulus (`0`: native `2^64`), refusing what is not `2^k`.
fn modulus_log(modulus: u128, scalar_bits: u64) -> std::result::Result<u32, String> {
    if scalar_bits != SCALAR_BITS {
        return Err(format!(
            "{scalar_bits}-bit words; only LweCiphertext<Vec<u64>> is read"
        ));
    }
    if modulus == 0 || modulus == 1 << 64 {
        return Ok(64);
    }
    if !modulus.is_power_of_two() {
        return Err(format!(
            "ciphertext modulus {modulus} is not a power of two (coterie decrypts over q = 2^k; \
             switch the modulus in TFHE-rs first)"
        ));
    }
    match modulus.trailing_zeros() {
        k if k < 64 => Ok(k),
        k => Err(format!("ciphertext modulus 2^{k} is larger than 2^64")),
    }
}

/// Reads a TFHE-rs `core_crypto::LweCiphertext<Vec<u64>>` in either bincode encoding
/// (versioned or not; see the module docs) as coterie's [`LweCiphertext`] over `q = 2^k`
/// (`k = 64` for the native modulus, a non-native `2^k` shifted down from the words' top bits)
/// carrying a message in the top `message_log` bits (a padding bit counted inside). For the
/// native modulus the result equals `LweCiphertext::from_body_last(ct.as_ref(), 64,
/// message_log)`.
///
/// # Errors
/// [`Error::Ciphertext`] for bytes that are not one of these encodings, a safe-serialization
/// header (TFHE-rs 1.8 writes none for this type), a version index other than `V0`, a length
/// prefix beyond the bytes or [`MAX_LWE_DIMENSION`], words that are not 64-bit, a modulus that
/// is not a power of two, a non-native word with low bits set, a `message_log` outside
/// `1..k`, or trailing bytes.
///
/// ```
/// use coterie_threshold::tfhers::lwe_ciphertext_from_tfhe_rs;
/// // versioned bincode, modulus 2^32: words in the top 32 bits
/// let mut b = 0u32.to_le_bytes().to_vec();
/// b.extend(2u64.to_le_bytes());
/// b.extend((5u64 << 32).to_le_bytes());
/// b.extend((1u64 << 63).to_le_bytes());
/// b.extend(0u32.to_le_bytes());
/// b.extend((1u128 << 32).to_le_bytes());
/// b.extend(64u64.to_le_bytes());
/// let ct = lwe_ciphertext_from_tfhe_rs(&b, 1).unwrap();
/// assert_eq!((ct.mask(), ct.body(), ct.modulus_log()), (&[5u64][..], 1 << 31, 32));
/// ```
pub fn lwe_ciphertext_from_tfhe_rs(bytes: &[u8], message_log: u32) -> Result<LweCiphertext> {
    let err = |e: String| Error::Ciphertext(format!("TFHE-rs LweCiphertext: {e}"));
    let encoding =
        detect(bytes).ok_or_else(|| {
            err("not a TFHE-rs 1.8 serialization of an LweCiphertext<Vec<u64>> (bincode, versioned \
             or not)"
            .into())
        })?;
    let mut r = Reader::new(bytes);
    let versioned = match encoding {
        TfheRsEncoding::SafeSerialized => read_header(&mut r, None).map_err(err)?,
        TfheRsEncoding::Versioned => true,
        TfheRsEncoding::Unversioned => false,
    };
    let (data, k) = (|| -> std::result::Result<(Vec<u64>, u32), String> {
        if versioned {
            r.version_index("LweCiphertext")?;
        }
        let mut data = Vec::new();
        r.words_into("data", MAX_LWE_DIMENSION + 1, &mut data)?;
        if versioned {
            r.version_index("CiphertextModulus")?;
        }
        let modulus = r.u128("ciphertext modulus")?;
        let bits = r.u64("scalar bits")?;
        r.finish()?;
        let k = modulus_log(modulus, bits)?;
        if k < 64 {
            let low = (1u64 << (64 - k)) - 1;
            if let Some(i) = data.iter().position(|&w| w & low != 0) {
                return Err(format!(
                    "word {i} has bits below 2^{} (TFHE-rs keeps a modulus 2^{k} in the top \
                     {k} bits)",
                    64 - k
                ));
            }
            data.iter_mut().for_each(|w| *w >>= 64 - k);
        }
        Ok((data, k))
    })()
    .map_err(|e| err(format!("{encoding}: {e}")))?;
    LweCiphertext::from_body_last(&data, k, message_log).map_err(|e| err(e.to_string()))
}

/// Reads a TFHE-rs `core_crypto::LweSecretKey<Vec<u64>>` (a binary key) serialized by
/// `safe_serialize` (versioned or unversioned mode), by `bincode::serialize(&key.versionize())`
/// or by `bincode::serialize(&key)`, and returns its bits, in a buffer that is wiped on drop.
/// Used by the key import ([`crate::keys::read_lwe_key_file`], `coterie party ... threshold
/// --import-key`): an existing TFHE-rs key imported into the ABB by its holder.
///
/// # Errors
/// [`Error::Key`] for bytes that are not one of these encodings, a header naming another type or
/// version, a version index other than `V0`, a length prefix beyond the bytes or
/// [`MAX_LWE_DIMENSION`], trailing bytes, or a coefficient other than 0 and 1. Every partial
/// result is wiped before the error returns.
///
/// ```
/// use coterie_threshold::tfhers::lwe_secret_key_from_tfhe_rs;
/// let mut b = 3u64.to_le_bytes().to_vec();
/// for bit in [1u64, 0, 1] {
///     b.extend(bit.to_le_bytes());
/// }
/// assert_eq!(*lwe_secret_key_from_tfhe_rs(&b).unwrap(), vec![1, 0, 1]);
/// b[8] = 2;
/// assert!(lwe_secret_key_from_tfhe_rs(&b).is_err());
/// ```
pub fn lwe_secret_key_from_tfhe_rs(bytes: &[u8]) -> Result<Zeroizing<Vec<u64>>> {
    let err = |e: String| Error::Key(format!("TFHE-rs LweSecretKey: {e}"));
    let encoding = detect(bytes).ok_or_else(|| {
        err(
            "not a TFHE-rs 1.8 serialization of an LweSecretKey<Vec<u64>> (safe serialization \
             or bincode, versioned or not)"
                .into(),
        )
    })?;
    let mut r = Reader::new(bytes);
    let mut key = Zeroizing::new(Vec::new());
    (|| -> std::result::Result<(), String> {
        let versioned = match encoding {
            TfheRsEncoding::SafeSerialized => read_header(&mut r, Some(LWE_SECRET_KEY_NAME))?,
            TfheRsEncoding::Versioned => true,
            TfheRsEncoding::Unversioned => false,
        };
        if versioned {
            r.version_index("LweSecretKey")?;
        }
        r.words_into("data", MAX_LWE_DIMENSION, &mut key)?;
        r.finish()
    })()
    .map_err(|e| err(format!("{encoding}: {e}")))?;
    // one pass over every coefficient, no early exit on the first non-binary one
    if key.iter().fold(0u64, |acc, &w| acc | (w & !1)) != 0 {
        return Err(err(
            "a coefficient other than 0 and 1 (only binary keys are read)".into(),
        ));
    }
    Ok(key)
}

/// Reads a ciphertext file's bytes in any format coterie accepts: its own CTLW format
/// ([`LweCiphertext::from_bytes`], a coterie envelope, which carries its own `k` and `m`) or
/// either TFHE-rs encoding ([`lwe_ciphertext_from_tfhe_rs`], with `message_log` message bits).
///
/// # Errors
/// [`Error::Ciphertext`] from the reader of the format the bytes open with, or for bytes that
/// open like neither.
///
/// ```
/// use coterie_threshold::LweCiphertext;
/// use coterie_threshold::tfhers::read_ciphertext_auto;
/// let ct = LweCiphertext::from_body_last(&[1, 2, 3], 16, 2).unwrap();
/// assert_eq!(read_ciphertext_auto(&ct.to_bytes(), 1).unwrap(), ct);
/// assert!(read_ciphertext_auto(b"neither", 1).is_err());
/// ```
pub fn read_ciphertext_auto(bytes: &[u8], message_log: u32) -> Result<LweCiphertext> {
    if bytes.starts_with(&coterie_base::envelope::MAGIC) {
        return LweCiphertext::from_bytes(bytes).map_err(|e| Error::Ciphertext(e.to_string()));
    }
    if looks_like_tfhe_rs(bytes) {
        return lwe_ciphertext_from_tfhe_rs(bytes, message_log);
    }
    Err(Error::Ciphertext(
        "neither a coterie ciphertext (CTLW) nor a TFHE-rs LweCiphertext<Vec<u64>>".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(out: &mut Vec<u8>, s: &str) {
        out.extend((s.len() as u64).to_le_bytes());
        out.extend(s.as_bytes());
    }

    fn header(mode: u32, mode_version: &str, name: &str) -> Vec<u8> {
        let mut h = Vec::new();
        string(&mut h, SAFE_SERIALIZATION_VERSION);
        h.extend(mode.to_le_bytes());
        string(&mut h, mode_version);
        string(&mut h, name);
        h
    }

    fn words(out: &mut Vec<u8>, w: &[u64]) {
        out.extend((w.len() as u64).to_le_bytes());
        w.iter().for_each(|x| out.extend(x.to_le_bytes()));
    }

    /// A ciphertext as TFHE-rs 1.8 writes it (module docs), versioned or not.
    fn ct_bytes(versioned: bool, w: &[u64], modulus: u128, bits: u64) -> Vec<u8> {
        let mut b = Vec::new();
        if versioned {
            b.extend(0u32.to_le_bytes());
        }
        words(&mut b, w);
        if versioned {
            b.extend(0u32.to_le_bytes());
        }
        b.extend(modulus.to_le_bytes());
        b.extend(bits.to_le_bytes());
        b
    }

    fn key_bytes(versioned: bool, w: &[u64]) -> Vec<u8> {
        let mut b = Vec::new();
        if versioned {
            b.extend(0u32.to_le_bytes());
        }
        words(&mut b, w);
        b
    }

    #[test]
    fn ciphertexts_in_both_encodings_and_moduli() {
        let w = [3u64, u64::MAX, 1 << 63];
        let want = LweCiphertext::from_body_last(&w, 64, 1).unwrap();
        for versioned in [false, true] {
            for modulus in [0u128, 1 << 64] {
                let b = ct_bytes(versioned, &w, modulus, 64);
                let enc = if versioned {
                    TfheRsEncoding::Versioned
                } else {
                    TfheRsEncoding::Unversioned
                };
                assert_eq!(detect(&b), Some(enc));
                assert_eq!(lwe_ciphertext_from_tfhe_rs(&b, 1).unwrap(), want);
                assert_eq!(read_ciphertext_auto(&b, 1).unwrap(), want);
            }
            // 2^16: the words' top 16 bits
            let b = ct_bytes(versioned, &[3 << 48, 0xffff << 48, 1 << 63], 1 << 16, 64);
            let ct = lwe_ciphertext_from_tfhe_rs(&b, 2).unwrap();
            assert_eq!(
                ct,
                LweCiphertext::from_body_last(&[3, 0xffff, 1 << 15], 16, 2).unwrap()
            );
        }
    }

    #[test]
    fn ciphertext_refusals() {
        let w = [3u64 << 48, 5 << 48, 1 << 63];
        let good = ct_bytes(true, &w, 1 << 16, 64);
        assert!(lwe_ciphertext_from_tfhe_rs(&good, 1).is_ok());
        let refused = |b: &[u8], m: u32, what: &str| {
            let e = lwe_ciphertext_from_tfhe_rs(b, m).unwrap_err().to_string();
            assert!(e.contains(what), "{what}: {e}");
        };
        for n in 0..good.len() {
            assert!(
                lwe_ciphertext_from_tfhe_rs(&good[..n], 1).is_err(),
                "prefix {n}"
            );
        }
        let mut trailing = good.clone();
        trailing.push(0);
        refused(&trailing, 1, "trailing");
        refused(&ct_bytes(true, &w, 1 << 16, 32), 1, "32-bit");
        refused(
            &ct_bytes(false, &w, (1 << 16) + 1, 64),
            1,
            "not a power of two",
        );
        refused(&ct_bytes(false, &w, 1 << 70, 64), 1, "larger than 2^64");
        refused(
            &ct_bytes(false, &[1, 2, 3], 1 << 16, 64),
            1,
            "bits below 2^48",
        );
        refused(&good, 16, "bad (k, m)");
        refused(&good, 0, "bad (k, m)");
        refused(&ct_bytes(false, &[1], 0, 64), 1, "dimension 0");
        let mut v1 = good.clone();
        v1[0] = 1;
        refused(&v1, 1, "version index 1");
        let mut modv1 = good.clone();
        modv1[4 + 8 + 24] = 1;
        refused(&modv1, 1, "version index 1");
        // absurd length prefixes: refused before any allocation
        for len in [u64::MAX, 1 << 40, 4] {
            let mut b = good.clone();
            b[4..12].copy_from_slice(&len.to_le_bytes());
            assert!(lwe_ciphertext_from_tfhe_rs(&b, 1).is_err(), "{len}");
        }
        let mut empty = ct_bytes(false, &[], 0, 64);
        empty[..8].copy_from_slice(&0u64.to_le_bytes());
        assert!(lwe_ciphertext_from_tfhe_rs(&empty, 1).is_err());
        // a safe-serialization header: TFHE-rs 1.8 writes none for a core_crypto ciphertext
        let mut safe = header(0, VERSIONING_VERSION, "core_crypto::LweCiphertext");
        safe.extend(&good);
        assert_eq!(detect(&safe), Some(TfheRsEncoding::SafeSerialized));
        refused(&safe, 1, "cannot safe-serialize");
        refused(b"CTRE", 1, "not a TFHE-rs");
        refused(b"", 1, "not a TFHE-rs");
    }

    #[test]
    fn secret_keys_in_every_encoding() {
        let bits = [1u64, 0, 0, 1, 1];
        for (b, enc) in [
            (key_bytes(false, &bits), TfheRsEncoding::Unversioned),
            (key_bytes(true, &bits), TfheRsEncoding::Versioned),
            (
                [
                    header(0, "0.1", LWE_SECRET_KEY_NAME),
                    key_bytes(true, &bits),
                ]
                .concat(),
                TfheRsEncoding::SafeSerialized,
            ),
            (
                [
                    header(1, "0.1", LWE_SECRET_KEY_NAME),
                    key_bytes(false, &bits),
                ]
                .concat(),
                TfheRsEncoding::SafeSerialized,
            ),
        ] {
            assert_eq!(detect(&b), Some(enc));
            assert_eq!(*lwe_secret_key_from_tfhe_rs(&b).unwrap(), bits.to_vec());
            for n in 0..b.len() {
                assert!(
                    lwe_secret_key_from_tfhe_rs(&b[..n]).is_err(),
                    "{enc} prefix {n}"
                );
            }
            let mut t = b.clone();
            t.extend([0; 8]);
            assert!(lwe_secret_key_from_tfhe_rs(&t).is_err(), "{enc} trailing");
        }
    }

    #[test]
    fn secret_key_refusals() {
        let refused = |b: &[u8], what: &str| {
            let e = lwe_secret_key_from_tfhe_rs(b).unwrap_err().to_string();
            assert!(e.contains(what), "{what}: {e}");
        };
        let body = key_bytes(true, &[1, 0, 1]);
        let with = |h: Vec<u8>| [h, body.clone()].concat();
        refused(&key_bytes(false, &[1, 2, 0]), "other than 0 and 1");
        refused(&key_bytes(false, &[1, u64::MAX]), "other than 0 and 1");
        refused(
            &with(header(0, "0.1", "core_crypto::GlweSecretKey")),
            "GlweSecretKey",
        );
        refused(&with(header(0, "0.2", LWE_SECRET_KEY_NAME)), "\"0.2\"");
        refused(&with(header(1, "1.8", LWE_SECRET_KEY_NAME)), "\"1.8\"");
        refused(&with(header(2, "0.1", LWE_SECRET_KEY_NAME)), "mode 2");
        let mut h6 = header(0, "0.1", LWE_SECRET_KEY_NAME);
        h6[10] = b'6';
        refused(&with(h6), "\"0.6\"");
        // a name length far beyond the input
        let mut long = header(0, "0.1", LWE_SECRET_KEY_NAME);
        long[26..34].copy_from_slice(&u64::MAX.to_le_bytes());
        refused(&with(long), "declares");
        let mut absurd = key_bytes(false, &[1, 0]);
        absurd[..8].copy_from_slice(&(1u64 << 62).to_le_bytes());
        assert!(lwe_secret_key_from_tfhe_rs(&absurd).is_err());
        refused(b"CTRE0000", "not a TFHE-rs");
    }

    #[test]
    fn auto_reader_tells_the_formats_apart() {
        let ct = LweCiphertext::from_body_last(&[1, 2, 3 << 14], 16, 2).unwrap();
        assert_eq!(detect(&ct.to_bytes()), None);
        assert_eq!(read_ciphertext_auto(&ct.to_bytes(), 1).unwrap(), ct);
        let tfhe = ct_bytes(false, &[1 << 48, 2 << 48, 3 << 62], 1 << 16, 64);
        assert_eq!(read_ciphertext_auto(&tfhe, 2).unwrap(), ct);
        let mut bad = ct.to_bytes();
        bad.pop();
        assert!(read_ciphertext_auto(&bad, 1).is_err());
        assert!(read_ciphertext_auto(b"CTLW but not really", 1).is_err());
        assert!(!looks_like_tfhe_rs(b"CTLW but not really"));
    }
}
