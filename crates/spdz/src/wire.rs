//! Messages on the wire. Every message of the engine that carries ring elements, and every
//! message of the OT producer, is one coterie-base envelope (magic, a tag naming the content,
//! its format version, a bounded length) sent as a byte string; the receiver checks the tag, the
//! exact version and the length before it decodes anything.

use coterie_base::envelope;
use coterie_net::{Blob, PartyId};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::ring::Ring;
use crate::{Error, Result};

/// Envelope tag of a batch of fixed-width ring elements (openings, input broadcasts).
pub const ELEMS_TAG: [u8; 4] = *b"SPel";
/// Format version of [`ELEMS_TAG`] envelopes.
pub const ELEMS_VERSION: u16 = 1;
/// Envelope tag of an OT-producer message (base OTs, KOS, Gilboa, COPE).
pub const OT_TAG: [u8; 4] = *b"SPot";
/// Format version of [`OT_TAG`] envelopes.
pub const OT_VERSION: u16 = 1;

/// `elems` in one envelope, encoded straight behind the header (no second copy).
pub(crate) fn seal_elems<R: Ring>(ring: &R, elems: &[R::Elem]) -> Result<Blob> {
    let mut out = elems_header(elems.len() * ring.elem_bytes())?;
    out.reserve(elems.len() * ring.elem_bytes());
    for x in elems {
        ring.write(x, &mut out);
    }
    Ok(Blob(out))
}

/// The envelope header of a batch of elements whose encodings take `len` bytes, to be followed
/// by them.
pub(crate) fn elems_header(len: usize) -> Result<Vec<u8>> {
    Ok(envelope::seal_header(ELEMS_TAG, ELEMS_VERSION, len)?.to_vec())
}

/// The payload of an envelope of exactly `count` elements sent by `from`: the elements'
/// encodings, [`Ring::elem_bytes`] each, still to be read with [`Ring::read`].
pub(crate) fn elems_payload<'b, R: Ring>(
    ring: &R,
    from: PartyId,
    bytes: &'b [u8],
    count: usize,
) -> Result<&'b [u8]> {
    let malformed = |cause: String| Error::Malformed { party: from, cause };
    let want = count.saturating_mul(ring.elem_bytes());
    let payload = envelope::open_bytes(ELEMS_TAG, ELEMS_VERSION, bytes, want)
        .map_err(|e| malformed(e.to_string()))?;
    if payload.len() != want {
        return Err(malformed(format!(
            "expected {count} elements of {} bytes, got {} bytes",
            ring.elem_bytes(),
            payload.len()
        )));
    }
    Ok(payload)
}

/// Exactly `count` elements from an envelope sent by `from`.
pub(crate) fn open_elems<R: Ring>(
    ring: &R,
    from: PartyId,
    bytes: &[u8],
    count: usize,
) -> Result<Vec<R::Elem>> {
    let payload = elems_payload(ring, from, bytes, count)?;
    ring.decode(payload, count).map_err(|e| Error::Malformed {
        party: from,
        cause: e.to_string(),
    })
}

/// `body` in an OT-producer envelope.
pub(crate) fn seal_ot<T: Serialize>(body: &T) -> Result<Vec<u8>> {
    Ok(envelope::seal(OT_TAG, OT_VERSION, body)?)
}

/// The header of an OT-producer envelope around a `len`-byte payload (see
/// [`coterie_base::envelope::seal_header`]).
pub(crate) fn ot_bytes_header(len: usize) -> Result<[u8; envelope::HEADER_LEN]> {
    Ok(envelope::seal_header(OT_TAG, OT_VERSION, len)?)
}

/// The body of an OT-producer envelope from `from` (at most `max` payload bytes).
pub(crate) fn open_ot<T: DeserializeOwned>(from: PartyId, bytes: &[u8], max: usize) -> Result<T> {
    envelope::open(OT_TAG, OT_VERSION, bytes, max).map_err(|e| Error::Malformed {
        party: from,
        cause: e.to_string(),
    })
}

/// The raw payload of an OT-producer envelope from `from` (at most `max` bytes).
pub(crate) fn open_ot_bytes(from: PartyId, bytes: &[u8], max: usize) -> Result<&[u8]> {
    envelope::open_bytes(OT_TAG, OT_VERSION, bytes, max).map_err(|e| Error::Malformed {
        party: from,
        cause: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::Z2k;

    #[test]
    fn elems_round_trip_and_refusals() {
        let r = Z2k::spdz2k_64();
        let xs = [1u128, 2, u128::MAX];
        let b = seal_elems(&r, &xs).unwrap();
        assert_eq!(open_elems(&r, 1, &b.0, 3).unwrap(), xs);
        // wrong count, truncated, wrong tag
        assert!(matches!(
            open_elems(&r, 1, &b.0, 2),
            Err(Error::Malformed { party: 1, .. })
        ));
        assert!(open_elems(&r, 1, &b.0[..b.0.len() - 1], 3).is_err());
        let payload = &b.0[envelope::HEADER_LEN..];
        let other = [&ot_bytes_header(payload.len()).unwrap()[..], payload].concat();
        assert!(open_elems(&r, 1, &other, 3).is_err());
        assert_eq!(
            open_ot_bytes(0, &other, 48).unwrap(),
            &b.0[envelope::HEADER_LEN..]
        );
    }
}
