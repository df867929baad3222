//! LSB-first bit packing of fixed-width values.
//!
//! Values are appended least significant bit first into a little-endian bit stream: the first
//! value occupies the low bits of the first byte. A value of more than 64 bits is written as its
//! low 64 bits followed by the rest. The last byte is padded with zero bits. This is the layout of
//! coterie-threshold's gate store and of coterie-spdz's packed OT messages.
//!
//! ```
//! use coterie_base::bits::{pack, unpack, packed_len};
//! let v = [5u64, 0, 7, 1];
//! let b = pack(&v, 3);
//! assert_eq!(b.len(), packed_len(4, 3)); // 12 bits -> 2 bytes
//! assert_eq!(unpack(&b, 3, 4).unwrap(), v);
//! ```

use crate::{Error, Result};

/// Bytes needed for `count` values of `bits` bits each.
pub fn packed_len(count: usize, bits: u32) -> usize {
    (count as u128 * u128::from(bits)).div_ceil(8) as usize
}

fn low(x: u64, bits: u32) -> u64 {
    if bits >= 64 {
        x
    } else {
        x & ((1u64 << bits) - 1)
    }
}

/// Appends fixed-width values to a byte buffer, LSB first.
#[derive(Debug, Default, Clone)]
pub struct BitWriter {
    out: Vec<u8>,
    acc: u128,
    n: u32,
}

impl BitWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty writer whose buffer holds `bytes` bytes without reallocating.
    pub fn with_capacity(bytes: usize) -> Self {
        Self {
            out: Vec::with_capacity(bytes),
            acc: 0,
            n: 0,
        }
    }

    /// Appends the low `bits` bits of `x` (`bits` ≤ 64; higher bits of `x` are ignored).
    #[inline]
    pub fn put(&mut self, x: u64, bits: u32) {
        debug_assert!(bits <= 64);
        // Invariant: fewer than 64 bits wait in `acc`, so the shift fits; full 64-bit words go
        // out at once (little-endian, the same bytes as one at a time).
        self.acc |= u128::from(low(x, bits)) << self.n;
        self.n += bits;
        if self.n >= 64 {
            self.out.extend_from_slice(&(self.acc as u64).to_le_bytes());
            self.acc >>= 64;
            self.n -= 64;
        }
    }

    /// Appends the low `bits` bits of `x` (`bits` ≤ 128): the low 64 bits first.
    #[inline]
    pub fn put_u128(&mut self, x: u128, bits: u32) {
        if bits > 64 {
            self.put(x as u64, 64);
            self.put((x >> 64) as u64, bits - 64);
        } else {
            self.put(x as u64, bits);
        }
    }

    /// Bits written so far.
    pub fn bit_len(&self) -> usize {
        self.out.len() * 8 + self.n as usize
    }

    /// The packed bytes, the last one padded with zero bits.
    pub fn finish(mut self) -> Vec<u8> {
        let tail = self.n.div_ceil(8) as usize;
        self.out
            .extend_from_slice(&(self.acc as u64).to_le_bytes()[..tail]);
        self.out
    }
}

/// Reads fixed-width values from a byte buffer written by [`BitWriter`].
#[derive(Debug, Clone)]
pub struct BitReader<'a> {
    bytes: &'a [u8],
    pos: usize,
    acc: u128,
    n: u32,
}

impl<'a> BitReader<'a> {
    /// A reader at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self {
            bytes,
            pos: 0,
            acc: 0,
            n: 0,
        }
    }

    /// The next `bits` bits (`bits` ≤ 64), or `None` when the buffer is exhausted.
    #[inline]
    pub fn get(&mut self, bits: u32) -> Option<u64> {
        if bits > 64 {
            return None;
        }
        while self.n < bits {
            // Here n < 64: a whole word (or, near the end, a byte) fits behind the waiting bits.
            if let Some(w) = self.bytes.get(self.pos..self.pos + 8) {
                let mut b = [0u8; 8];
                b.copy_from_slice(w);
                self.acc |= u128::from(u64::from_le_bytes(b)) << self.n;
                self.pos += 8;
                self.n += 64;
            } else {
                let b = *self.bytes.get(self.pos)?;
                self.pos += 1;
                self.acc |= u128::from(b) << self.n;
                self.n += 8;
            }
        }
        let x = low(self.acc as u64, bits);
        self.acc >>= bits;
        self.n -= bits;
        Some(x)
    }

    /// The next `bits` bits (`bits` ≤ 128), low 64 first, or `None` when exhausted.
    #[inline]
    pub fn get_u128(&mut self, bits: u32) -> Option<u128> {
        if bits > 128 {
            return None;
        }
        if bits > 64 {
            let lo = self.get(64)?;
            let hi = self.get(bits - 64)?;
            Some(u128::from(lo) | (u128::from(hi) << 64))
        } else {
            self.get(bits).map(u128::from)
        }
    }

    /// Bytes not yet consumed (a partly consumed byte counts as consumed).
    pub fn remaining_bytes(&self) -> usize {
        // whole bytes read ahead into `acc` are not consumed yet
        self.bytes.len() - self.pos + (self.n / 8) as usize
    }
}

/// Packs `values` with `bits` bits each (1 ≤ `bits` ≤ 64; higher bits are dropped).
pub fn pack(values: &[u64], bits: u32) -> Vec<u8> {
    let mut w = BitWriter::with_capacity(packed_len(values.len(), bits));
    for &v in values {
        w.put(v, bits);
    }
    w.finish()
}

/// Unpacks `count` values of `bits` bits each; the buffer must be exactly
/// [`packed_len`]`(count, bits)` bytes long.
pub fn unpack(bytes: &[u8], bits: u32, count: usize) -> Result<Vec<u64>> {
    if bits == 0 || bits > 64 {
        return Err(Error::Bits(format!("width {bits} is outside 1..=64")));
    }
    let need = packed_len(count, bits);
    if bytes.len() != need {
        return Err(Error::Bits(format!(
            "{} bytes for {count} values of {bits} bits (expected {need})",
            bytes.len()
        )));
    }
    let mut r = BitReader::new(bytes);
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        out.push(
            r.get(bits)
                .ok_or_else(|| Error::Bits("buffer exhausted".into()))?,
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The naive reference: one bit at a time.
    fn naive_pack(values: &[(u128, u32)]) -> Vec<u8> {
        let mut bits = Vec::new();
        for &(v, w) in values {
            for i in 0..w {
                bits.push(((v >> i) & 1) as u8);
            }
        }
        bits.chunks(8)
            .map(|c| c.iter().enumerate().map(|(i, &b)| b << i).sum())
            .collect()
    }

    proptest! {
        #[test]
        fn mixed_widths_match_the_naive_packer(vals in prop::collection::vec((any::<u128>(), 1u32..=128), 0..40)) {
            let vals: Vec<(u128, u32)> = vals.into_iter().map(|(v, w)| (if w == 128 { v } else { v & ((1u128 << w) - 1) }, w)).collect();
            let mut w = BitWriter::new();
            for &(v, b) in &vals {
                w.put_u128(v, b);
            }
            let total: usize = vals.iter().map(|&(_, b)| b as usize).sum();
            prop_assert_eq!(w.bit_len(), total);
            let bytes = w.finish();
            prop_assert_eq!(&bytes, &naive_pack(&vals));
            let mut r = BitReader::new(&bytes);
            for &(v, b) in &vals {
                prop_assert_eq!(r.get_u128(b), Some(v));
            }
        }

        #[test]
        fn pack_unpack_round_trip(vals in prop::collection::vec(any::<u64>(), 0..100), bits in 1u32..=64) {
            let masked: Vec<u64> = vals.iter().map(|&v| low(v, bits)).collect();
            let b = pack(&vals, bits);
            prop_assert_eq!(unpack(&b, bits, vals.len()).unwrap(), masked);
        }
    }

    #[test]
    fn wrong_lengths_and_widths_are_errors() {
        let b = pack(&[1, 2, 3], 7);
        assert!(unpack(&b, 7, 4).is_err());
        assert!(unpack(&b[..2], 7, 3).is_err());
        assert!(unpack(&b, 0, 3).is_err());
        assert!(unpack(&b, 65, 3).is_err());
        let mut r = BitReader::new(&[0xff]);
        assert_eq!(r.get(8), Some(0xff));
        assert_eq!(r.get(1), None);
        // read-ahead of whole words does not count as consumed
        let b: Vec<u8> = (0u8..19).collect();
        let mut r = BitReader::new(&b);
        assert_eq!(r.get(12), Some(0x100));
        assert_eq!(r.remaining_bytes(), 19 - 2);
        assert_eq!(r.get_u128(100).map(|x| x as u8), Some(0x20));
        assert_eq!(r.remaining_bytes(), 19 - 14);
        assert_eq!(r.get(40), Some(0x12_1110_0f0e));
        assert_eq!(r.get(1), None);
        assert_eq!(BitReader::new(&[]).get(65), None);
    }
}
