//! The one versioned envelope for everything coterie stores or sends.
//!
//! Layout (all integers little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 0..4 | magic `b"CTRE"` |
//! | 4..8 | tag: four bytes naming what the envelope holds (e.g. `*b"BFVc"` for a BFV ciphertext) |
//! | 8..10 | format version of that content (`u16`) |
//! | 10..14 | payload length in bytes (`u32`) |
//! | 14.. | payload: a postcard encoding ([`seal`]) or raw bytes ([`seal_bytes`]) |
//!
//! Opening checks the magic, the tag, the exact version, the declared length against the
//! caller's limit and against the buffer, and refuses trailing bytes, so a malformed or oversized
//! input is an [`Error::Envelope`] or [`Error::TooLarge`], never a panic or a large allocation.
//! A type that is stored or sent implements [`Versioned`] and goes through [`to_envelope`] /
//! [`from_envelope`].
//!
//! ```
//! use coterie_base::envelope::{self, Versioned};
//! #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
//! struct Note { text: String }
//! impl Versioned for Note { const TAG: [u8; 4] = *b"NOTE"; const VERSION: u16 = 1; }
//!
//! let bytes = envelope::to_envelope(&Note { text: "hi".into() }).unwrap();
//! let back: Note = envelope::from_envelope(&bytes, 1024).unwrap();
//! assert_eq!(back.text, "hi");
//! assert!(envelope::from_envelope::<Note>(&bytes[..bytes.len() - 1], 1024).is_err());
//! ```

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::{Error, Result};

/// The magic bytes that open every envelope.
pub const MAGIC: [u8; 4] = *b"CTRE";
/// Length of the envelope header (magic, tag, version, payload length).
pub const HEADER_LEN: usize = 14;

/// A type with a fixed envelope tag and format version.
///
/// Bump `VERSION` whenever the encoding of the type changes; an old file is then refused with
/// a message naming both versions instead of being misread.
pub trait Versioned {
    /// Four bytes naming the content; unique across the workspace.
    const TAG: [u8; 4];
    /// The current format version.
    const VERSION: u16;
}

/// Implements [`Versioned`] for each listed type, one line a type: `Type => b"TAG" v VERSION`.
///
/// ```
/// use coterie_base::envelope::Versioned;
/// struct Share;
/// struct Opening;
/// coterie_base::versioned! {
///     Share => b"EXsh" v 1,
///     Opening => b"EXop" v 3,
/// }
/// assert_eq!((Share::TAG, Share::VERSION), (*b"EXsh", 1));
/// assert_eq!(Opening::VERSION, 3);
/// ```
#[macro_export]
macro_rules! versioned {
    ($($t:ty => $tag:literal v $ver:literal),* $(,)?) => {
        $(impl $crate::envelope::Versioned for $t {
            const TAG: [u8; 4] = *$tag;
            const VERSION: u16 = $ver;
        })*
    };
}

/// Renders a tag for messages (`BFVc`, or hex when it is not printable ASCII).
pub fn tag_name(tag: [u8; 4]) -> String {
    if tag.iter().all(|b| b.is_ascii_graphic()) {
        tag.iter().map(|&b| b as char).collect()
    } else {
        format!("0x{:08x}", u32::from_be_bytes(tag))
    }
}

fn header(tag: [u8; 4], version: u16, len: usize) -> Result<[u8; HEADER_LEN]> {
    let len32 = u32::try_from(len).map_err(|_| Error::TooLarge {
        what: format!("{} payload", tag_name(tag)),
        len: len as u64,
        max: u64::from(u32::MAX),
    })?;
    let mut h = [0u8; HEADER_LEN];
    h[0..4].copy_from_slice(&MAGIC);
    h[4..8].copy_from_slice(&tag);
    h[8..10].copy_from_slice(&version.to_le_bytes());
    h[10..14].copy_from_slice(&len32.to_le_bytes());
    Ok(h)
}

/// The envelope header of a `len`-byte payload: [`seal_bytes`] is this header followed by the
/// payload, so a sender that writes the two parts one after the other (a frame head and a large
/// body, say) need not copy the payload into a new buffer first.
///
/// ```
/// use coterie_base::envelope::{seal_bytes, seal_header};
/// let h = seal_header(*b"RAWB", 3, 3).unwrap();
/// assert_eq!([&h[..], &[1, 2, 3]].concat(), seal_bytes(*b"RAWB", 3, &[1, 2, 3]).unwrap());
/// ```
pub fn seal_header(tag: [u8; 4], version: u16, len: usize) -> Result<[u8; HEADER_LEN]> {
    header(tag, version, len)
}

/// Wraps raw bytes in an envelope.
///
/// Fails only for a payload of 4 GiB or more.
///
/// ```
/// let env = coterie_base::envelope::seal_bytes(*b"RAWB", 3, &[1, 2, 3]).unwrap();
/// assert_eq!(coterie_base::envelope::open_bytes(*b"RAWB", 3, &env, 16).unwrap(), &[1, 2, 3]);
/// ```
pub fn seal_bytes(tag: [u8; 4], version: u16, payload: &[u8]) -> Result<Vec<u8>> {
    let h = header(tag, version, payload.len())?;
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(&h);
    out.extend_from_slice(payload);
    Ok(out)
}

/// Encodes `value` with postcard and wraps it in an envelope.
///
/// ```
/// let env = coterie_base::envelope::seal(*b"PAIR", 1, &(7u32, 9u64)).unwrap();
/// let v: (u32, u64) = coterie_base::envelope::open(*b"PAIR", 1, &env, 64).unwrap();
/// assert_eq!(v, (7, 9));
/// ```
pub fn seal<T: Serialize + ?Sized>(tag: [u8; 4], version: u16, value: &T) -> Result<Vec<u8>> {
    // Reserve the header, serialize after it, then fill the header in: one allocation.
    let mut out = postcard::to_extend(value, vec![0u8; HEADER_LEN])
        .map_err(|e| Error::Envelope(format!("{}: encode: {e}", tag_name(tag))))?;
    let h = header(tag, version, out.len() - HEADER_LEN)?;
    out[..HEADER_LEN].copy_from_slice(&h);
    Ok(out)
}

/// Reads the tag and version of an envelope without checking the rest.
///
/// ```
/// let env = coterie_base::envelope::seal_bytes(*b"RAWB", 2, &[]).unwrap();
/// assert_eq!(coterie_base::envelope::peek(&env).unwrap(), (*b"RAWB", 2));
/// ```
pub fn peek(bytes: &[u8]) -> Result<([u8; 4], u16)> {
    if bytes.len() < HEADER_LEN {
        return Err(Error::Envelope(format!(
            "{} bytes, shorter than the {HEADER_LEN}-byte header",
            bytes.len()
        )));
    }
    if bytes[0..4] != MAGIC {
        return Err(Error::Envelope("not a coterie envelope (bad magic)".into()));
    }
    let mut tag = [0u8; 4];
    tag.copy_from_slice(&bytes[4..8]);
    Ok((tag, u16::from_le_bytes([bytes[8], bytes[9]])))
}

/// Checks an envelope and returns its payload.
///
/// `max_len` bounds the payload; a larger declared length is refused before anything else is
/// read. The tag and the version must match exactly.
///
/// ```
/// use coterie_base::envelope::{open_bytes, seal_bytes};
/// let env = seal_bytes(*b"RAWB", 1, &[0; 100]).unwrap();
/// assert!(open_bytes(*b"RAWB", 1, &env, 99).is_err()); // over the limit
/// assert!(open_bytes(*b"RAWB", 2, &env, 100).is_err()); // other version
/// assert!(open_bytes(*b"OTHR", 1, &env, 100).is_err()); // another content tag
/// ```
pub fn open_bytes(tag: [u8; 4], version: u16, bytes: &[u8], max_len: usize) -> Result<&[u8]> {
    let (found_tag, found_version) = peek(bytes)?;
    if found_tag != tag {
        return Err(Error::Envelope(format!(
            "holds {} where {} was expected",
            tag_name(found_tag),
            tag_name(tag)
        )));
    }
    if found_version != version {
        return Err(Error::Envelope(format!(
            "{} format version {found_version}, this build reads version {version}",
            tag_name(tag)
        )));
    }
    let len = u32::from_le_bytes([bytes[10], bytes[11], bytes[12], bytes[13]]) as usize;
    if len > max_len {
        return Err(Error::TooLarge {
            what: format!("{} payload", tag_name(tag)),
            len: len as u64,
            max: max_len as u64,
        });
    }
    let rest = &bytes[HEADER_LEN..];
    if rest.len() < len {
        return Err(Error::Envelope(format!(
            "{} truncated: {} of {len} payload bytes",
            tag_name(tag),
            rest.len()
        )));
    }
    if rest.len() > len {
        return Err(Error::Envelope(format!(
            "{}: {} trailing bytes after the payload",
            tag_name(tag),
            rest.len() - len
        )));
    }
    Ok(rest)
}

/// Checks an envelope and decodes its postcard payload.
///
/// The payload must decode completely (no trailing bytes inside it either).
pub fn open<T: DeserializeOwned>(
    tag: [u8; 4],
    version: u16,
    bytes: &[u8],
    max_len: usize,
) -> Result<T> {
    let payload = open_bytes(tag, version, bytes, max_len)?;
    let (v, rest) = postcard::take_from_bytes(payload)
        .map_err(|e| Error::Envelope(format!("{}: decode: {e}", tag_name(tag))))?;
    if !rest.is_empty() {
        return Err(Error::Envelope(format!(
            "{}: {} bytes left after decoding",
            tag_name(tag),
            rest.len()
        )));
    }
    Ok(v)
}

/// Seals a [`Versioned`] value with its tag and version.
pub fn to_envelope<T: Versioned + Serialize>(value: &T) -> Result<Vec<u8>> {
    seal(T::TAG, T::VERSION, value)
}

/// Opens an envelope holding a [`Versioned`] value, with a payload of at most `max_len` bytes.
pub fn from_envelope<T: Versioned + DeserializeOwned>(bytes: &[u8], max_len: usize) -> Result<T> {
    open(T::TAG, T::VERSION, bytes, max_len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    struct Thing {
        id: u32,
        data: Vec<u64>,
    }
    impl Versioned for Thing {
        const TAG: [u8; 4] = *b"THNG";
        const VERSION: u16 = 4;
    }

    #[test]
    fn header_layout_is_fixed() {
        let env = seal_bytes(*b"ABCD", 0x0102, &[9, 8]).unwrap();
        assert_eq!(&env[0..4], b"CTRE");
        assert_eq!(&env[4..8], b"ABCD");
        assert_eq!(&env[8..10], &[0x02, 0x01]);
        assert_eq!(&env[10..14], &[2, 0, 0, 0]);
        assert_eq!(&env[14..], &[9, 8]);
    }

    #[test]
    fn refusals_name_the_problem() {
        let t = Thing {
            id: 1,
            data: vec![1, 2, 3],
        };
        let env = to_envelope(&t).unwrap();
        assert_eq!(from_envelope::<Thing>(&env, 1 << 10).unwrap(), t);
        let e = open::<Thing>(*b"THNG", 5, &env, 1 << 10)
            .unwrap_err()
            .to_string();
        assert!(e.contains("version 4") && e.contains("version 5"), "{e}");
        let e = open::<Thing>(*b"OTHR", 4, &env, 1 << 10)
            .unwrap_err()
            .to_string();
        assert!(e.contains("THNG") && e.contains("OTHR"), "{e}");
        let mut bad = env.clone();
        bad[0] = b'X';
        assert!(
            from_envelope::<Thing>(&bad, 1 << 10)
                .unwrap_err()
                .to_string()
                .contains("magic")
        );
        let mut long = env.clone();
        long.push(0);
        assert!(
            from_envelope::<Thing>(&long, 1 << 10)
                .unwrap_err()
                .to_string()
                .contains("trailing")
        );
        assert!(matches!(
            from_envelope::<Thing>(&env, 2),
            Err(Error::TooLarge { .. })
        ));
        // A declared length of 4 GiB - 1 with a tiny buffer: refused by the limit, no allocation.
        let mut huge = env.clone();
        huge[10..14].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            from_envelope::<Thing>(&huge, 1 << 20),
            Err(Error::TooLarge { .. })
        ));
        assert!(
            from_envelope::<Thing>(&huge, usize::MAX)
                .unwrap_err()
                .to_string()
                .contains("truncated")
        );
    }

    #[test]
    fn payload_with_bytes_left_after_decoding_is_refused() {
        // A u8 payload followed by garbage inside the declared length.
        let env = seal_bytes(*b"THNG", 4, &[1, 0, 7]).unwrap();
        let e = from_envelope::<Thing>(&env, 64).unwrap_err().to_string();
        assert!(
            e.contains("left after decoding") || e.contains("decode"),
            "{e}"
        );
    }

    proptest! {
        #[test]
        fn round_trip_and_no_panic_on_garbage(id in any::<u32>(), data in prop::collection::vec(any::<u64>(), 0..50), junk in prop::collection::vec(any::<u8>(), 0..80)) {
            let t = Thing { id, data };
            let env = to_envelope(&t).unwrap();
            prop_assert_eq!(from_envelope::<Thing>(&env, 1 << 12).unwrap(), t);
            for cut in 0..env.len() {
                prop_assert!(from_envelope::<Thing>(&env[..cut], 1 << 12).is_err());
            }
            let _ = from_envelope::<Thing>(&junk, 1 << 12);
            let mut j = env.clone();
            j.truncate(HEADER_LEN);
            j.extend_from_slice(&junk);
            let _ = from_envelope::<Thing>(&j, 1 << 12);
        }
    }
}
