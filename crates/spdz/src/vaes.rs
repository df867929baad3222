//! SoftSpokenOT's small-field VOLE sums and COPE's digit sums with VAES-512: AES-128 under four
//! leaf keys per instruction, fused with the sums, so that no leaf's expansion is ever stored.
//!
//! [`crate::softspoken`]'s block VOLE expands every leaf `v < 2^k` of a block by AES in counter
//! mode (`r_v[j] = AES_{s_v}(tweak | j)`) and sums: `u[j] = ⊕_v r_v[j]` and
//! `w_i[j] = ⊕_{v: bit i of v = 1} r_v[j]`. The portable code (the `aes` crate, then a tree of
//! XORs over the chunk's `2^k` expansions) spends more time moving blocks than in AES. Here the
//! `2^k` keys are taken four at a time, one per 128-bit lane of a 512-bit register (leaf
//! `v = 4g + lane`), and every counter block is broadcast to the four lanes, so one `vaesenc`
//! runs a round for four leaves. The output of group `g` is XORed into two accumulators per
//! counter: `U` (all groups) and, for every bit `i ≥ 2` of `v` (bit `i − 2` of `g`), `W_i`. At the
//! end of a chunk of counters the lanes are folded: `u = ⊕ lanes of U`,
//! `w_0 = U.lane1 ⊕ U.lane3`, `w_1 = U.lane2 ⊕ U.lane3`, `w_i = ⊕ lanes of W_i`.
//!
//! COPE in digits ([`crate::cope`]) needs, per value and digit, `u = Σ_j r_j` and
//! `v = Σ_j j·r_j` modulo `2^128` over the digit's `2^p` leaves: [`digit_sums`] runs the same
//! AES, adds lane-wise in 128 bits (64-bit additions and the low halves' carries), and gets
//! `Σ_g g·r_g` as a running suffix sum over the groups taken from the last (`S += r_g`, then
//! `T += S`), two additions per group whatever `p`.
//!
//! Only for `k ≥ 2` (`p ≥ 2`: at least one full group of four keys) on x86-64 CPUs with AVX-512F
//! and VAES; the callers check [`available`] at run time and otherwise keep their portable code
//! (the `aes` crate), which the tests use as the reference. The key schedule is AES-NI's
//! (`aeskeygenassist`), checked against FIPS 197's example.

// Loops over counters and groups index several parallel arrays; ranges read better there.
#![allow(clippy::needless_range_loop)]

use zeroize::Zeroize;

/// Counter blocks (values) per chunk: the accumulators (`k − 1` registers of 64 bytes per
/// counter, 28 KB for `k = 8`; two per value for COPE) stay in the L1 cache while all groups
/// pass over them.
const CHUNK: usize = 64;

/// Whether this CPU runs [`vole_sums`] (x86-64 with AVX-512F, VAES and AES-NI).
pub(crate) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("vaes")
            && std::arch::is_x86_feature_detected!("aes")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The AES-128 round keys of `key` (its bytes little-endian, as `aes::Aes128::new` takes
/// `key.to_le_bytes()`), each as a little-endian `u128`; `None` without AES-NI. (The kernel
/// expands its keys itself; this is the schedule's test hook.)
#[cfg(test)]
pub(crate) fn round_keys(key: u128) -> Option<[u128; 11]> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("aes") {
            // SAFETY: the CPU supports AES-NI (checked above).
            #[allow(unsafe_code)]
            return Some(unsafe { x86::expand_key(key) });
        }
    }
    let _ = key;
    None
}

/// The sums of one block: `u` and `w_0 … w_{k−1}` over `nblocks` counters `tweak | j` (two
/// words per counter, low word first, as `softspoken::block_vole` returns them before
/// truncation), from the block's `2^k` leaves. `None` where [`available`] is false or `k` is outside `2..=8`.
pub(crate) fn vole_sums(
    leaves: &[u128],
    k: usize,
    tweak: u128,
    nblocks: usize,
) -> Option<(Vec<u64>, Vec<Vec<u64>>)> {
    if !(2..=8).contains(&k) || leaves.len() != 1 << k || !available() {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    {
        // written in place as the words `softspoken` uses (a counter's block: low word first)
        let mut u = vec![0u64; 2 * nblocks];
        let mut w = vec![vec![0u64; 2 * nblocks]; k];
        // SAFETY: the CPU supports AVX-512F, VAES and AES-NI (`available` above); the slices
        // have the lengths the kernel indexes (`2·nblocks` words each, `k` of them for `w`).
        #[allow(unsafe_code)]
        unsafe {
            x86::vole_sums(leaves, k, tweak, &mut u, &mut w)
        };
        Some((u, w))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (tweak, nblocks);
        None
    }
}

/// The AES round keys of a set of leaves, four leaves per register (for [`digit_sums`]): built
/// once per batch, used for every chunk of values. Wiped on drop.
pub(crate) struct GroupKeys(Vec<[u128; 44]>);

impl Drop for GroupKeys {
    fn drop(&mut self) {
        self.0.iter_mut().for_each(|r| r.zeroize());
    }
}

impl GroupKeys {
    /// The round keys of `leaves` (a whole number of digits' trees of `2^p` leaves, `p ≥ 2`);
    /// `None` where [`available`] is false or the leaves are not a multiple of 4.
    pub(crate) fn new(leaves: &[u128]) -> Option<Self> {
        if !leaves.len().is_multiple_of(4) || !available() {
            return None;
        }
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: the CPU supports AES-NI (`available` above).
            #[allow(unsafe_code)]
            Some(Self(unsafe { x86::group_keys(leaves) }))
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            None
        }
    }
}

/// COPE's digit sums with VAES-512: for values `start..start + u.len()` (at most 64) and the
/// `2^p` leaves of digit `d` (`p` from 2 to 8) in `keys`, `u[i] = Σ_j r_j` and
/// `v[i] = Σ_j j·r_j` modulo `2^128`, where `r_j = AES_{leaf j}(tweak | (start + i))` (what
/// `cope::digit_sums` computes with the `aes` crate, its reference in the tests).
pub(crate) fn digit_sums(
    keys: &GroupKeys,
    p: u32,
    d: usize,
    tweak: u128,
    start: usize,
    u: &mut [u128],
    v: &mut [u128],
) {
    assert!(
        (2..=8).contains(&p) && u.len() == v.len() && u.len() <= CHUNK,
        "vaes::digit_sums: digits of 2 to 8 bits, at most {CHUNK} values"
    );
    let groups = 1usize << (p - 2);
    let rk = &keys.0[d * groups..(d + 1) * groups];
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `keys` exists only where the CPU supports AVX-512F, VAES and AES-NI
        // (`GroupKeys::new`); the kernel indexes within the slices it is given.
        #[allow(unsafe_code)]
        unsafe {
            x86::digit_sums(rk, tweak, start, u, v)
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (rk, tweak, start, u, v);
        unreachable!("GroupKeys exist only on x86-64");
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)] // AES-NI / VAES intrinsics behind the callers' run-time checks
mod x86 {
    use super::{CHUNK, Zeroize};
    use std::arch::x86_64::*;

    /// One step of the AES-128 key schedule: `prev` the previous round key, `assist` the
    /// `aeskeygenassist` of it (its word 3 holds `SubWord(RotWord(w3)) ⊕ rcon`).
    #[target_feature(enable = "aes,sse2")]
    fn schedule_step(prev: __m128i, assist: __m128i) -> __m128i {
        let t = _mm_shuffle_epi32::<0xff>(assist);
        let mut k = prev;
        k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
        k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
        k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
        _mm_xor_si128(k, t)
    }

    /// The eleven AES-128 round keys of `key` (FIPS 197 key expansion with AES-NI).
    #[target_feature(enable = "aes,sse2")]
    pub(super) unsafe fn expand_key(key: u128) -> [u128; 11] {
        let mut rk = [_mm_setzero_si128(); 11];
        // SAFETY: an unaligned 16-byte load of a `u128` (little-endian: its bytes in order).
        rk[0] = unsafe { _mm_loadu_si128(&key as *const u128 as *const __m128i) };
        macro_rules! step {
            ($i:expr, $rcon:expr) => {
                rk[$i] = schedule_step(rk[$i - 1], _mm_aeskeygenassist_si128::<$rcon>(rk[$i - 1]));
            };
        }
        step!(1, 0x01);
        step!(2, 0x02);
        step!(3, 0x04);
        step!(4, 0x08);
        step!(5, 0x10);
        step!(6, 0x20);
        step!(7, 0x40);
        step!(8, 0x80);
        step!(9, 0x1b);
        step!(10, 0x36);
        let mut out = [0u128; 11];
        for (o, r) in out.iter_mut().zip(&rk) {
            // SAFETY: an unaligned 16-byte store into a `u128`.
            unsafe { _mm_storeu_si128(o as *mut u128 as *mut __m128i, *r) };
        }
        rk.iter_mut().for_each(|r| *r = _mm_setzero_si128());
        out
    }

    /// The round keys of every group of four leaves: 11 registers of four lanes (leaf
    /// `4g + lane`), round-major. `leaves.len()` must be a multiple of 4.
    #[target_feature(enable = "aes,sse2")]
    pub(super) unsafe fn group_keys(leaves: &[u128]) -> Vec<[u128; 44]> {
        let groups = leaves.len() / 4;
        let mut rk: Vec<[u128; 44]> = Vec::with_capacity(groups);
        for g in 0..groups {
            let mut keys = [[0u128; 11]; 4];
            for (lane, kk) in keys.iter_mut().enumerate() {
                // SAFETY: AES-NI is enabled for this function.
                *kk = unsafe { expand_key(leaves[4 * g + lane]) };
            }
            let mut regs = [0u128; 44];
            for r in 0..11 {
                for lane in 0..4 {
                    regs[4 * r + lane] = keys[lane][r];
                }
            }
            keys.iter_mut().for_each(|x| x.zeroize());
            rk.push(regs);
        }
        rk
    }

    /// Loads group `g`'s eleven round-key registers.
    #[target_feature(enable = "avx512f")]
    fn load_keys(rk: &[u128; 44]) -> [__m512i; 11] {
        let mut key = [_mm512_setzero_si512(); 11];
        for r in 0..11 {
            // SAFETY: an unaligned 64-byte load of four `u128`s of `rk`.
            key[r] = unsafe { _mm512_loadu_si512(rk[4 * r..4 * r + 4].as_ptr() as *const __m512i) };
        }
        key
    }

    /// AES of eight counter blocks `tweak | (first + t)`, each under the four keys of `key`.
    #[target_feature(enable = "avx512f,vaes")]
    fn aes8(key: &[__m512i; 11], tweak: u128, first: usize) -> [__m512i; 8] {
        let mut st = [_mm512_setzero_si512(); 8];
        for (t, s) in st.iter_mut().enumerate() {
            let ctr = tweak | (first + t) as u128;
            let c = _mm_set_epi64x((ctr >> 64) as i64, ctr as i64);
            *s = _mm512_xor_si512(_mm512_broadcast_i32x4(c), key[0]);
        }
        for r in 1..10 {
            for s in st.iter_mut() {
                *s = _mm512_aesenc_epi128(*s, key[r]);
            }
        }
        for s in st.iter_mut() {
            *s = _mm512_aesenclast_epi128(*s, key[10]);
        }
        st
    }

    /// Lane-wise addition modulo `2^128` of four `u128` lanes (64-bit adds, then the carry of
    /// every low half into its high half).
    #[target_feature(enable = "avx512f")]
    fn add128(a: __m512i, b: __m512i) -> __m512i {
        let s = _mm512_add_epi64(a, b);
        let carry = _mm512_cmplt_epu64_mask(s, a) & 0x55;
        _mm512_mask_add_epi64(s, carry << 1, s, _mm512_set1_epi64(1))
    }

    /// The kernel of [`super::digit_sums`]: `rk` the groups of one digit (`2^p / 4` of them),
    /// `u.len() = v.len() ≤ CHUNK` values from `start`. Per value, lane-wise over the groups
    /// `g` taken from the last down: `S = Σ_{g' ≥ g} r_{g'}` and `T += S` for `g ≥ 1`, so that in
    /// the end `S = Σ_g r_g` and `T = Σ_g g·r_g` with two additions per group whatever `p`.
    #[target_feature(enable = "avx512f,vaes")]
    pub(super) fn digit_sums(
        rk: &[[u128; 44]],
        tweak: u128,
        start: usize,
        u: &mut [u128],
        v: &mut [u128],
    ) {
        let n = u.len();
        let mut acc = [_mm512_setzero_si512(); CHUNK * 2];
        for (g, gk) in rk.iter().enumerate().rev() {
            let mut key = load_keys(gk);
            let mut j = 0;
            while j < n {
                let mut st = aes8(&key, tweak, start + j);
                for (t, r) in st.iter().enumerate() {
                    let a = &mut acc[2 * (j + t)..2 * (j + t) + 2];
                    a[0] = add128(a[0], *r);
                    if g >= 1 {
                        a[1] = add128(a[1], a[0]);
                    }
                }
                st.iter_mut().for_each(|s| *s = _mm512_setzero_si512());
                j += 8;
            }
            key.iter_mut().for_each(|x| *x = _mm512_setzero_si512());
        }
        let lanes = |x: __m512i| -> [u128; 4] {
            let mut out = [0u128; 4];
            // SAFETY: an unaligned 64-byte store into four `u128`s.
            unsafe { _mm512_storeu_si512(out.as_mut_ptr() as *mut __m512i, x) };
            out
        };
        for i in 0..n {
            let [s0, s1, s2, s3] = lanes(acc[2 * i]);
            let [t0, t1, t2, t3] = lanes(acc[2 * i + 1]);
            // Σ_j j·r_j with j = 4g + lane: Σ_lane lane·S_lane + 4·Σ lanes of T
            let t = t0.wrapping_add(t1).wrapping_add(t2).wrapping_add(t3);
            u[i] = s0.wrapping_add(s1).wrapping_add(s2).wrapping_add(s3);
            v[i] = s1
                .wrapping_add(s2.wrapping_mul(2))
                .wrapping_add(s3.wrapping_mul(3))
                .wrapping_add(t.wrapping_shl(2));
        }
        acc.iter_mut().for_each(|a| *a = _mm512_setzero_si512());
    }

    /// XOR of the four 128-bit lanes of `x`.
    #[target_feature(enable = "avx512f")]
    fn fold4(x: __m512i) -> __m128i {
        let a = _mm_xor_si128(
            _mm512_extracti32x4_epi32::<0>(x),
            _mm512_extracti32x4_epi32::<1>(x),
        );
        let b = _mm_xor_si128(
            _mm512_extracti32x4_epi32::<2>(x),
            _mm512_extracti32x4_epi32::<3>(x),
        );
        _mm_xor_si128(a, b)
    }

    /// Stores lane `x` as the two words `out[2i]` (low) and `out[2i + 1]` (high).
    #[target_feature(enable = "sse2")]
    fn put(out: &mut [u64], i: usize, x: __m128i) {
        let dst = &mut out[2 * i..2 * i + 2];
        // SAFETY: an unaligned 16-byte store into two `u64`s (little-endian: low word first).
        unsafe { _mm_storeu_si128(dst.as_mut_ptr() as *mut __m128i, x) };
    }

    /// The kernel of [`super::vole_sums`]: `u.len() / 2` counters (two words each),
    /// `w.len() = k ≥ 2` outputs.
    #[target_feature(enable = "avx512f,vaes,aes")]
    pub(super) unsafe fn vole_sums(
        leaves: &[u128],
        k: usize,
        tweak: u128,
        u: &mut [u64],
        w: &mut [Vec<u64>],
    ) {
        let groups = leaves.len() / 4;
        // SAFETY: AES-NI is enabled for this function.
        let mut rk = unsafe { group_keys(leaves) };
        let n = u.len() / 2;
        let hi_bits = k - 2;
        let stride = hi_bits + 1;
        // accumulators per counter of the chunk: U, then W_2 … W_{k−1} (CHUNK is a multiple of
        // the 8 counters computed at a time)
        let mut acc = vec![_mm512_setzero_si512(); CHUNK * stride];
        let mut start = 0;
        while start < n {
            let len = CHUNK.min(n - start);
            acc.iter_mut().for_each(|a| *a = _mm512_setzero_si512());
            for g in 0..groups {
                let mut key = load_keys(&rk[g]);
                // the accumulators group g adds into besides U: W_i for the set bits of g
                let mut sel = [0usize; 6];
                let mut nsel = 0;
                for i in 0..hi_bits {
                    if (g >> i) & 1 == 1 {
                        sel[nsel] = 1 + i;
                        nsel += 1;
                    }
                }
                // eight counters at a time, all eight always computed (the chunk's buffer has
                // room for them) so that the states stay in registers
                let mut j = 0;
                while j < len {
                    let mut st = aes8(&key, tweak, start + j);
                    for (t, s) in st.iter().enumerate() {
                        let a = &mut acc[(j + t) * stride..(j + t + 1) * stride];
                        a[0] = _mm512_xor_si512(a[0], *s);
                        for &i in &sel[..nsel] {
                            a[i] = _mm512_xor_si512(a[i], *s);
                        }
                    }
                    st.iter_mut().for_each(|s| *s = _mm512_setzero_si512());
                    j += 8;
                }
                key.iter_mut().for_each(|x| *x = _mm512_setzero_si512());
            }
            for t in 0..len {
                let a = t * stride;
                let uu = acc[a];
                let l1 = _mm512_extracti32x4_epi32::<1>(uu);
                let l2 = _mm512_extracti32x4_epi32::<2>(uu);
                let l3 = _mm512_extracti32x4_epi32::<3>(uu);
                put(u, start + t, fold4(uu));
                put(&mut w[0], start + t, _mm_xor_si128(l1, l3));
                put(&mut w[1], start + t, _mm_xor_si128(l2, l3));
                for i in 0..hi_bits {
                    put(&mut w[2 + i], start + t, fold4(acc[a + 1 + i]));
                }
            }
            start += len;
        }
        acc.iter_mut().for_each(|a| *a = _mm512_setzero_si512());
        rk.iter_mut().for_each(|r| r.zeroize());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn le(bytes: [u8; 16]) -> u128 {
        u128::from_le_bytes(bytes)
    }

    #[test]
    fn the_key_schedule_matches_fips_197() {
        let Some(_) = round_keys(0) else {
            eprintln!("no AES-NI on this CPU: the portable path runs instead");
            return;
        };
        // FIPS 197, Appendix A.1: cipher key 2b7e1516 28aed2a6 abf71588 09cf4f3c; the first and
        // the last round keys a0fafe17 88542cb1 23a33939 2a6c7605, d014f9a8 c9ee2589 e13f0cc8
        // b6630ca6
        let key = le([
            0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf,
            0x4f, 0x3c,
        ]);
        let rk = round_keys(key).unwrap();
        assert_eq!(rk[0], key);
        assert_eq!(
            rk[1],
            le([
                0xa0, 0xfa, 0xfe, 0x17, 0x88, 0x54, 0x2c, 0xb1, 0x23, 0xa3, 0x39, 0x39, 0x2a, 0x6c,
                0x76, 0x05,
            ])
        );
        assert_eq!(
            rk[10],
            le([
                0xd0, 0x14, 0xf9, 0xa8, 0xc9, 0xee, 0x25, 0x89, 0xe1, 0x3f, 0x0c, 0xc8, 0xb6, 0x63,
                0x0c, 0xa6,
            ])
        );
    }
}
