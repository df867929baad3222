//! Serde helpers that encode a byte vector as one byte string, for
//! `#[serde(with = "coterie_base::bytes")]` on a `Vec<u8>` field and
//! `#[serde(with = "coterie_base::bytes::list")]` on a `Vec<Vec<u8>>` field.
//!
//! Serde's own `Vec<u8>` is a sequence of `u8` values, which a decoder visits one byte at a
//! time (a service's batch of 300 ciphertexts is 2.4 MB of such visits). With postcard, the
//! format of every envelope here, a byte string is encoded exactly as that sequence is (a varint
//! length, then each byte as itself), so these helpers change no format: data written either way
//! reads either way. They only make the decoder copy the bytes at once.
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! #[derive(Serialize, Deserialize, PartialEq, Debug)]
//! struct Batch {
//!     #[serde(with = "coterie_base::bytes")]
//!     one: Vec<u8>,
//!     #[serde(with = "coterie_base::bytes::list")]
//!     many: Vec<Vec<u8>>,
//! }
//! let b = Batch { one: vec![1, 2, 3], many: vec![vec![4], vec![]] };
//! let enc = postcard::to_allocvec(&b).unwrap();
//! assert_eq!(enc, [3, 1, 2, 3, 2, 1, 4, 0]);
//! assert_eq!(postcard::from_bytes::<Batch>(&enc).unwrap(), b);
//! ```

use serde::de::{Deserializer, SeqAccess, Visitor};
use serde::ser::{SerializeSeq, Serializer};

/// Serializes `v` as one byte string.
pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bytes(v)
}

/// Deserializes one byte string (or, from formats that write them so, a sequence of bytes).
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    d.deserialize_byte_buf(ByteBuf)
}

struct ByteBuf;

impl<'de> Visitor<'de> for ByteBuf {
    type Value = Vec<u8>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a byte string")
    }
    fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
        Ok(v.to_vec())
    }
    fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
        Ok(v)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
        let mut v = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
        while let Some(b) = seq.next_element()? {
            v.push(b);
        }
        Ok(v)
    }
}

/// The same for a list of byte vectors: a sequence of byte strings.
pub mod list {
    use super::*;

    /// Serializes `v` as a sequence of byte strings.
    pub fn serialize<S: Serializer>(v: &[Vec<u8>], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(v.len()))?;
        for b in v {
            seq.serialize_element(&Bytes(b))?;
        }
        seq.end()
    }

    /// Deserializes a sequence of byte strings.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Vec<u8>>, D::Error> {
        d.deserialize_seq(List)
    }

    /// One element, serialized as a byte string.
    struct Bytes<'a>(&'a [u8]);

    impl serde::Serialize for Bytes<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(self.0)
        }
    }

    struct Elem(Vec<u8>);

    impl<'de> serde::Deserialize<'de> for Elem {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            super::deserialize(d).map(Elem)
        }
    }

    struct List;

    impl<'de> Visitor<'de> for List {
        type Value = Vec<Vec<u8>>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a sequence of byte strings")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Vec<u8>>, A::Error> {
            let mut v = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 12));
            while let Some(Elem(b)) = seq.next_element()? {
                v.push(b);
            }
            Ok(v)
        }
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Plain {
        one: Vec<u8>,
        many: Vec<Vec<u8>>,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Fast {
        #[serde(with = "crate::bytes")]
        one: Vec<u8>,
        #[serde(with = "crate::bytes::list")]
        many: Vec<Vec<u8>>,
    }

    /// The helpers write exactly what serde's own `Vec<u8>` writes under postcard, and each
    /// reads the other's output, for empty, short and long (multi-byte length) strings.
    #[test]
    fn the_postcard_encoding_is_unchanged() {
        for len in [0usize, 1, 127, 128, 300, 70_000] {
            let one: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
            let many = vec![one.clone(), vec![], one[..len / 2].to_vec()];
            let plain = Plain {
                one: one.clone(),
                many: many.clone(),
            };
            let fast = Fast { one, many };
            let a = postcard::to_allocvec(&plain).unwrap();
            let b = postcard::to_allocvec(&fast).unwrap();
            assert_eq!(a, b, "{len}");
            assert_eq!(postcard::from_bytes::<Fast>(&a).unwrap(), fast);
            assert_eq!(postcard::from_bytes::<Plain>(&b).unwrap(), plain);
        }
        // a truncated string is an error, not a short vector
        let enc = postcard::to_allocvec(&Fast {
            one: vec![9; 40],
            many: vec![],
        })
        .unwrap();
        assert!(postcard::from_bytes::<Fast>(&enc[..20]).is_err());
    }
}
