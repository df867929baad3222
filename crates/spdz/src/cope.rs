//! COPE in **digits**: the MAC-share correlation of SPDZ_2k's authentication from SoftSpokenOT's
//! small-field VOLE instead of one OT per bit of the MAC key share (`docs/spdz-ot-security.md`,
//! "COPE in digits").
//!
//! COPE (Keller–Orsini–Scholl, MASCOT) gives two parties additive shares of `α·x` in
//! `Z_{2^ℓ}` (`ℓ = k + s`), where the *key holder* has `α` (its MAC key share, `b` bits) and the
//! *value holder* has `x`: one base OT per bit `α_l`, and per value one correction of `ℓ − l`
//! bits per bit, `Σ_{l<b} (ℓ − l)` bits in all (6,176 for `ℓ = 128, b = 64`).
//!
//! Here `α` is cut into `b/p` digits `δ_d ∈ [0, 2^p)` (`α = Σ_d 2^{pd} δ_d`) and each digit gets
//! a GGM tree of depth `p`, set up exactly as SoftSpokenOT's blocks
//! ([`crate::softspoken`]; the same `b` base OTs as bit-wise COPE, the value holder the
//! tree builder): the value holder knows the `2^p` leaves `s_{d,j}` of every digit, the key
//! holder every leaf but `s_{d,δ_d}`. For value number `v` of batch `t` each leaf gives
//! `r_{d,j} = AES_{s_{d,j}}(tweak(t) | v) mod 2^ℓ`, and:
//!
//! * the value holder computes `U_d = Σ_j r_{d,j}` and `V_d = Σ_j j·r_{d,j}`, sends
//!   `c_d = x − U_d mod 2^{ℓ−pd}` and keeps the share `Σ_d 2^{pd} V_d`;
//! * the key holder computes `W_d = Σ_{j} (δ_d − j)·r_{d,j} = δ_d U_d − V_d` (the leaf it does
//!   not know has coefficient 0, so the arbitrary value it holds there cancels) and keeps the
//!   share `Σ_d 2^{pd} (W_d + δ_d c_d)`.
//!
//! The shares add up to `Σ_d 2^{pd} δ_d (U_d + c_d) = α·x mod 2^ℓ` (the factor `2^{pd}` makes
//! `c_d` matter only modulo `2^{ℓ−pd}`). `c_d` hides `x`: `U_d` holds the PRG output of the
//! leaf the key holder lacks. Per value `Σ_{d<b/p} (ℓ − pd)` bits are sent: 1,568 for
//! `ℓ = 128, b = 64, p = 4` (3.9x fewer than bit-wise COPE), for `2^p·b/p` AES blocks per value
//! and side (256 for `p = 4`) instead of `2b` PRG outputs.

use aes::cipher::BlockCipherEncrypt;
use coterie_base::bits::{BitReader, BitWriter};
use rand::Rng;
use zeroize::Zeroize;

use crate::ot::Seed;
use crate::ring::Z2k;
use crate::softspoken::{aes_key, ggm_punctured, ggm_trees, leaf_tweak};
use crate::{Error, Result};

/// Values per chunk of the fast expansion (their AES blocks per leaf stay in the L1 cache).
const CHUNK: usize = 64;

/// The digit size COPE uses with SoftSpokenOT block size `k` and a MAC key share of `key_bits`
/// bits: the largest power of two that divides both (4 for `k = 4` and `s = 64`).
pub fn digit_size(k: u32, key_bits: u32) -> u32 {
    let mut p = 8;
    while p > 1 && (!k.is_multiple_of(p) || !key_bits.is_multiple_of(p)) {
        p /= 2;
    }
    p
}

/// Bits sent per value by COPE in digits of `p` bits with a key share of `key_bits` bits in
/// `Z_{2^kk}`: `Σ_{d < key_bits/p} max(kk − pd, 0)`.
pub fn correction_bits(p: u32, key_bits: u32, kk: u32) -> u64 {
    (0..key_bits / p)
        .map(|d| u64::from(kk.saturating_sub(p * d)))
        .sum()
}

fn check_shape(p: u32, base_ots: usize) -> Result<()> {
    if !(1..=8).contains(&p)
        || base_ots == 0
        || base_ots > 128
        || !base_ots.is_multiple_of(p as usize)
    {
        return Err(Error::Invalid(format!(
            "COPE in digits: {base_ots} base OTs cannot be cut into digits of {p} bits (1 to 8, \
             at most 128 base OTs)"
        )));
    }
    Ok(())
}

fn check_ring(kk: u32, count: usize) -> Result<()> {
    if !(1..=128).contains(&kk) || count >= 1 << 32 {
        return Err(Error::Invalid(format!(
            "COPE in digits: {count} values in Z_2^{kk} (at most 2^32 − 1 values, 1 to 128 bits)"
        )));
    }
    Ok(())
}

/// The counter blocks `tweak | v` of values `start..start + out.len()` (the same for every leaf).
fn counter_blocks(tweak: u128, start: usize, out: &mut [aes::Block]) {
    for (i, b) in out.iter_mut().enumerate() {
        *b = aes::Block::from((tweak | (start + i) as u128).to_le_bytes());
    }
}

/// `U = Σ_j r_j` and `V = Σ_j j·r_j` (wrapping) of the values whose counter blocks are
/// `counters` (`u`, `v` and `counters` of one length, at most [`CHUNK`]) for the `2^p` leaf
/// ciphers of one digit.
fn digit_sums(ciphers: &[aes::Aes128], counters: &[aes::Block], u: &mut [u128], v: &mut [u128]) {
    let mut blocks = [aes::Block::default(); CHUNK];
    let n = u.len();
    u.iter_mut().for_each(|x| *x = 0);
    v.iter_mut().for_each(|x| *x = 0);
    for (j, c) in ciphers.iter().enumerate() {
        blocks[..n].copy_from_slice(counters);
        c.encrypt_blocks(&mut blocks[..n]);
        let jj = j as u128;
        for ((b, uu), vv) in blocks[..n].iter().zip(u.iter_mut()).zip(v.iter_mut()) {
            let mut a = [0u8; 16];
            a.copy_from_slice(b);
            let r = u128::from_le_bytes(a);
            *uu = uu.wrapping_add(r);
            *vv = vv.wrapping_add(r.wrapping_mul(jj));
        }
    }
    blocks
        .iter_mut()
        .for_each(|b| b.iter_mut().for_each(|x| *x = 0));
}

/// The digit sums of one batch: with VAES-512 and `p ≥ 2` by the fused kernel of
/// [`crate::vaes`] (round keys built once per batch, four leaves per AES instruction),
/// otherwise by [`digit_sums`] on the `aes` crate (the reference).
enum DigitSums {
    Fused(u32, crate::vaes::GroupKeys),
    Portable(u32, Vec<aes::Aes128>),
}

impl DigitSums {
    fn new(p: u32, leaves: &[u128]) -> Self {
        if p >= 2
            && let Some(keys) = crate::vaes::GroupKeys::new(leaves)
        {
            return Self::Fused(p, keys);
        }
        Self::Portable(p, leaves.iter().map(|&s| aes_key(s)).collect())
    }

    /// The counter blocks of values `start..start + out.len()` where the portable sums use
    /// them (the fused kernel builds its own in registers).
    fn counters(&self, tweak: u128, start: usize, out: &mut [aes::Block]) {
        if let Self::Portable(..) = self {
            counter_blocks(tweak, start, out);
        }
    }

    /// `u`, `v` of digit `d` for the values `start..start + u.len()` (`counters` their counter
    /// blocks, from [`DigitSums::counters`]).
    fn run(
        &self,
        d: usize,
        tweak: u128,
        start: usize,
        counters: &[aes::Block],
        u: &mut [u128],
        v: &mut [u128],
    ) {
        match self {
            Self::Fused(p, keys) => crate::vaes::digit_sums(keys, *p, d, tweak, start, u, v),
            Self::Portable(p, ciphers) => {
                digit_sums(&ciphers[d << p..(d + 1) << p], counters, u, v)
            }
        }
    }
}

/// The value holder's side toward one key holder: every leaf of every digit's tree.
pub struct CopeTrees {
    p: u32,
    leaves: Vec<u128>,
}

impl Drop for CopeTrees {
    fn drop(&mut self) {
        self.leaves.zeroize();
    }
}

/// The key holder's side toward one value holder: its key share and the punctured leaves.
pub struct CopePunctured {
    p: u32,
    alpha: u128,
    leaves: Vec<u128>,
}

impl Drop for CopePunctured {
    fn drop(&mut self) {
        self.leaves.zeroize();
        self.alpha.zeroize();
    }
}

impl CopeTrees {
    /// Samples the trees of `keys.len() / p` digits and returns them with the setup corrections
    /// for the key holder, one pair per base OT (`keys`: both keys of the base OTs toward the
    /// key holder, whose choices are the bits of its key share).
    pub fn setup<G: Rng + ?Sized>(
        rng: &mut G,
        p: u32,
        keys: &[(Seed, Seed)],
    ) -> Result<(Self, Vec<(u128, u128)>)> {
        check_shape(p, keys.len())?;
        let (leaves, corr) = ggm_trees(rng, p as usize, keys);
        Ok((Self { p, leaves }, corr))
    }

    /// The digit size.
    pub fn p(&self) -> u32 {
        self.p
    }

    /// COPE on this party's values `xs` (in `Z_{2^kk}`) for batch `batch` between this value
    /// holder `holder` and key holder `key_holder`: the corrections to send (value-major,
    /// digit `d` in `kk − pd` bits) and this party's shares of `α·x_v`.
    pub fn send(
        &self,
        kk: u32,
        batch: u64,
        holder: usize,
        key_holder: usize,
        xs: &[u128],
    ) -> Result<(Vec<u8>, Vec<u128>)> {
        check_ring(kk, xs.len())?;
        let p = self.p;
        let digits = self.leaves.len() >> p;
        let key_bits = digits as u32 * p;
        let tweak = leaf_tweak(batch, holder, key_holder);
        let sums = DigitSums::new(p, &self.leaves);
        let bits = correction_bits(p, key_bits, kk) * xs.len() as u64;
        let mut out = BitWriter::with_capacity(bits.div_ceil(8) as usize);
        let mut shares = vec![0u128; xs.len()];
        let mut u = vec![[0u128; CHUNK]; digits];
        let mut v = [0u128; CHUNK];
        let mut counters = [aes::Block::default(); CHUNK];
        for (c, xc) in xs.chunks(CHUNK).enumerate() {
            let start = c * CHUNK;
            let n = xc.len();
            sums.counters(tweak, start, &mut counters[..n]);
            for (d, ud) in u.iter_mut().enumerate() {
                sums.run(d, tweak, start, &counters[..n], &mut ud[..n], &mut v[..n]);
                let shift = p * d as u32;
                for (sh, vv) in shares[start..start + n].iter_mut().zip(&v[..n]) {
                    *sh = sh.wrapping_add(vv.wrapping_shl(shift));
                }
            }
            for (i, x) in xc.iter().enumerate() {
                for (d, ud) in u.iter().enumerate() {
                    let w = kk.saturating_sub(p * d as u32);
                    if w > 0 {
                        out.put_u128(Z2k::low_bits(x.wrapping_sub(ud[i]), w), w);
                    }
                }
            }
        }
        u.iter_mut().for_each(|x| x.zeroize());
        v.zeroize();
        for s in &mut shares {
            *s = Z2k::low_bits(*s, kk);
        }
        Ok((out.finish(), shares))
    }
}

impl CopePunctured {
    /// Rebuilds the punctured trees from this key holder's base-OT keys `k_l^{α_l}` (`keys`, one
    /// per bit of `alpha`) and the value holder's setup corrections.
    pub fn setup(p: u32, alpha: u128, keys: &[Seed], corr: &[(u128, u128)]) -> Result<Self> {
        check_shape(p, keys.len())?;
        if corr.len() != keys.len() {
            return Err(Error::Codec(format!(
                "COPE in digits: {} setup corrections for {} base OTs",
                corr.len(),
                keys.len()
            )));
        }
        if keys.len() < 128 && alpha >> keys.len() != 0 {
            return Err(Error::Invalid(format!(
                "COPE in digits: the key share has more than {} bits",
                keys.len()
            )));
        }
        let leaves = ggm_punctured(p as usize, alpha, keys, corr);
        Ok(Self { p, alpha, leaves })
    }

    /// This key holder's shares of `α·x_v` for the `count` values whose corrections `bytes`
    /// the value holder `holder` sent in batch `batch` to this party `key_holder`.
    pub fn receive(
        &self,
        kk: u32,
        batch: u64,
        holder: usize,
        key_holder: usize,
        bytes: &[u8],
        count: usize,
    ) -> Result<Vec<u128>> {
        check_ring(kk, count)?;
        let p = self.p;
        let digits = self.leaves.len() >> p;
        let key_bits = digits as u32 * p;
        let expected = (correction_bits(p, key_bits, kk) * count as u64).div_ceil(8);
        if bytes.len() as u64 != expected {
            return Err(Error::Codec(format!(
                "COPE in digits: {} bytes of corrections for {count} values, {expected} expected",
                bytes.len()
            )));
        }
        let tweak = leaf_tweak(batch, holder, key_holder);
        let sums = DigitSums::new(p, &self.leaves);
        let deltas: Vec<u128> = (0..digits)
            .map(|d| (self.alpha >> (p as usize * d)) & ((1 << p) - 1))
            .collect();
        let mut rd = BitReader::new(bytes);
        let mut shares = vec![0u128; count];
        let mut u = [0u128; CHUNK];
        let mut v = [0u128; CHUNK];
        let mut w = vec![[0u128; CHUNK]; digits];
        let mut counters = [aes::Block::default(); CHUNK];
        for start in (0..count).step_by(CHUNK) {
            let n = CHUNK.min(count - start);
            sums.counters(tweak, start, &mut counters[..n]);
            for (d, wd) in w.iter_mut().enumerate() {
                sums.run(d, tweak, start, &counters[..n], &mut u[..n], &mut v[..n]);
                for ((ww, uu), vv) in wd[..n].iter_mut().zip(&u[..n]).zip(&v[..n]) {
                    *ww = deltas[d].wrapping_mul(*uu).wrapping_sub(*vv);
                }
            }
            for (i, sh) in shares[start..start + n].iter_mut().enumerate() {
                let mut acc = 0u128;
                for (d, wd) in w.iter().enumerate() {
                    let shift = p * d as u32;
                    let width = kk.saturating_sub(shift);
                    if width == 0 {
                        continue;
                    }
                    let c = rd
                        .get_u128(width)
                        .ok_or_else(|| Error::Codec("COPE in digits: short corrections".into()))?;
                    let t = wd[i].wrapping_add(deltas[d].wrapping_mul(c));
                    acc = acc.wrapping_add(t.wrapping_shl(shift));
                }
                *sh = Z2k::low_bits(acc, kk);
            }
        }
        u.zeroize();
        v.zeroize();
        w.iter_mut().for_each(|x| x.zeroize());
        Ok(shares)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ot::{BaseOtSender, base_ot_receive};
    use crate::softspoken::aes_one;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    fn r128(rng: &mut ChaCha20Rng) -> u128 {
        ((rng.next_u64() as u128) << 64) | rng.next_u64() as u128
    }

    /// Real base OTs with choices = the bits of `alpha` (`bits` of them), then both sides'
    /// set-up.
    fn setup_pair(
        rng: &mut ChaCha20Rng,
        p: u32,
        alpha: u128,
        bits: usize,
    ) -> (CopeTrees, CopePunctured) {
        let sender = BaseOtSender::new(rng);
        let choices: Vec<bool> = (0..bits).map(|l| (alpha >> l) & 1 == 1).collect();
        let (bs, recv) = base_ot_receive(rng, &sender.big_a, &choices).unwrap();
        let keys = sender.keys(&bs).unwrap();
        let (trees, corr) = CopeTrees::setup(rng, p, &keys).unwrap();
        let punct = CopePunctured::setup(p, alpha, &recv, &corr).unwrap();
        (trees, punct)
    }

    /// The naive shares of the module docs, value by value and leaf by leaf (one AES call
    /// each): the value holder's share and corrections, then the key holder's share.
    fn reference(
        trees: &CopeTrees,
        punct: &CopePunctured,
        kk: u32,
        batch: u64,
        xs: &[u128],
    ) -> (Vec<u128>, Vec<u128>) {
        let p = trees.p;
        let digits = trees.leaves.len() >> p;
        let tweak = leaf_tweak(batch, 0, 1);
        let r = |leaf: u128, v: usize| aes_one(&aes_key(leaf), tweak | v as u128);
        let mut mine = Vec::new();
        let mut theirs = Vec::new();
        for (v, x) in xs.iter().enumerate() {
            let (mut a, mut b) = (0u128, 0u128);
            for d in 0..digits {
                let delta = (punct.alpha >> (p as usize * d)) & ((1 << p) - 1);
                let (mut uu, mut vv, mut ww) = (0u128, 0u128, 0u128);
                for j in 0..1usize << p {
                    let rj = r(trees.leaves[(d << p) + j], v);
                    uu = uu.wrapping_add(rj);
                    vv = vv.wrapping_add(rj.wrapping_mul(j as u128));
                    let rk = r(punct.leaves[(d << p) + j], v);
                    ww = ww.wrapping_add(rk.wrapping_mul(delta.wrapping_sub(j as u128)));
                }
                let c = x.wrapping_sub(uu);
                a = a.wrapping_add(vv << (p as usize * d));
                b = b.wrapping_add(ww.wrapping_add(delta.wrapping_mul(c)) << (p as usize * d));
            }
            mine.push(Z2k::low_bits(a, kk));
            theirs.push(Z2k::low_bits(b, kk));
        }
        (mine, theirs)
    }

    #[test]
    fn shares_add_up_to_alpha_x_and_match_the_reference() {
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        for (p, bits, kk) in [
            (4, 64, 128),
            (1, 64, 128),
            (2, 32, 64),
            (8, 64, 126),
            (4, 64, 100),
        ] {
            let alpha = r128(&mut rng) & ((1u128 << bits) - 1);
            let (trees, punct) = setup_pair(&mut rng, p, alpha, bits);
            // 150 values: two full chunks and a partial one
            let xs: Vec<u128> = (0..150)
                .map(|_| Z2k::low_bits(r128(&mut rng), kk))
                .collect();
            let (bytes, mine) = trees.send(kk, 3, 0, 1, &xs).unwrap();
            assert_eq!(
                bytes.len() as u64,
                (correction_bits(p, bits as u32, kk) * 150).div_ceil(8)
            );
            let theirs = punct.receive(kk, 3, 0, 1, &bytes, xs.len()).unwrap();
            for ((x, a), b) in xs.iter().zip(&mine).zip(&theirs) {
                assert_eq!(
                    Z2k::low_bits(a.wrapping_add(*b), kk),
                    Z2k::low_bits(alpha.wrapping_mul(*x), kk),
                    "p = {p}, kk = {kk}"
                );
            }
            let (ref_mine, ref_theirs) = reference(&trees, &punct, kk, 3, &xs);
            assert_eq!(mine, ref_mine);
            assert_eq!(theirs, ref_theirs);
            // another batch gives other shares of the same products
            let (_, other) = trees.send(kk, 4, 0, 1, &xs).unwrap();
            assert_ne!(other, mine);
        }
    }

    /// The fused VAES digit sums (where the CPU has them) against the `aes` crate's, for every
    /// digit size they take, partial chunks included.
    #[test]
    fn fused_digit_sums_match_the_portable_ones() {
        let mut rng = ChaCha20Rng::seed_from_u64(9);
        for p in 1..=8u32 {
            let leaves: Vec<u128> = (0..2usize << p).map(|_| r128(&mut rng)).collect();
            let sums = DigitSums::new(p, &leaves);
            assert_eq!(
                matches!(sums, DigitSums::Fused(..)),
                p >= 2 && crate::vaes::available(),
                "p = {p}"
            );
            let ciphers: Vec<aes::Aes128> = leaves.iter().map(|&s| aes_key(s)).collect();
            let tweak = leaf_tweak(5, 2, 1);
            for (start, n) in [(0usize, 1usize), (64, 7), (128, 64), (192, 60)] {
                let mut counters = vec![aes::Block::default(); n];
                counter_blocks(tweak, start, &mut counters);
                for d in 0..2 {
                    let (mut u, mut v) = (vec![0u128; n], vec![0u128; n]);
                    sums.run(d, tweak, start, &counters, &mut u, &mut v);
                    let (mut ru, mut rv) = (vec![0u128; n], vec![0u128; n]);
                    digit_sums(&ciphers[d << p..(d + 1) << p], &counters, &mut ru, &mut rv);
                    assert_eq!(
                        (u, v),
                        (ru, rv),
                        "p = {p}, digit {d}, {n} values at {start}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_digit_size_and_the_bytes_per_value() {
        assert_eq!(digit_size(4, 64), 4);
        assert_eq!(digit_size(8, 64), 8);
        assert_eq!(digit_size(8, 36), 4);
        assert_eq!(digit_size(4, 33), 1);
        assert_eq!(digit_size(1, 64), 1);
        // bit-wise COPE's 6,176 bits for k = s = 64, and 1,568 with digits of 4 bits
        assert_eq!(correction_bits(1, 64, 128), 6176);
        assert_eq!(correction_bits(4, 64, 128), 1568);
        // digits beyond the ring's width send nothing
        assert_eq!(correction_bits(4, 64, 8), 8 + 4);
    }

    #[test]
    fn a_changed_correction_or_setup_breaks_the_relation_and_bad_input_is_refused() {
        let mut rng = ChaCha20Rng::seed_from_u64(8);
        let (p, bits, kk) = (4u32, 64usize, 128u32);
        let alpha = r128(&mut rng) >> 64;
        let (trees, punct) = setup_pair(&mut rng, p, alpha, bits);
        let xs: Vec<u128> = (0..5).map(|_| r128(&mut rng)).collect();
        let (mut bytes, mine) = trees.send(kk, 0, 0, 1, &xs).unwrap();
        bytes[3] ^= 4;
        let theirs = punct.receive(kk, 0, 0, 1, &bytes, xs.len()).unwrap();
        assert_ne!(
            mine[0].wrapping_add(theirs[0]),
            alpha.wrapping_mul(xs[0]),
            "a flipped correction bit of value 0 must change its product"
        );
        // a correction message of the wrong length, a key share too wide, a bad digit size
        assert!(punct.receive(kk, 0, 0, 1, &bytes[1..], xs.len()).is_err());
        assert!(punct.receive(kk, 0, 0, 1, &bytes, xs.len() + 1).is_err());
        let keys = vec![[0u8; 32]; 64];
        let corr = vec![(0u128, 0u128); 64];
        assert!(CopePunctured::setup(4, 1u128 << 64, &keys, &corr).is_err());
        assert!(CopePunctured::setup(4, 1, &keys, &corr[1..]).is_err());
        assert!(CopePunctured::setup(3, 1, &keys, &corr).is_err());
        assert!(CopeTrees::setup(&mut rng, 0, &[]).is_err());
        // a tampered setup correction leaves the key holder with other leaves: wrong products
        let sender = BaseOtSender::new(&mut rng);
        let choices: Vec<bool> = (0..bits).map(|l| (alpha >> l) & 1 == 1).collect();
        let (bs, recv) = base_ot_receive(&mut rng, &sender.big_a, &choices).unwrap();
        let keys = sender.keys(&bs).unwrap();
        let (trees, mut corr) = CopeTrees::setup(&mut rng, p, &keys).unwrap();
        corr[1].0 ^= 1;
        corr[1].1 ^= 1;
        let punct = CopePunctured::setup(p, alpha, &recv, &corr).unwrap();
        let (bytes, mine) = trees.send(kk, 0, 0, 1, &xs).unwrap();
        let theirs = punct.receive(kk, 0, 0, 1, &bytes, xs.len()).unwrap();
        assert!(
            xs.iter()
                .zip(mine.iter().zip(&theirs))
                .any(|(x, (a, b))| a.wrapping_add(*b) != alpha.wrapping_mul(*x))
        );
    }
}
