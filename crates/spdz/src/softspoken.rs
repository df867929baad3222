//! SoftSpokenOT correlated-OT extension (Lawrence Roy, "SoftSpokenOT: Quieter OT Extension from
//! Small-Field Silent VOLE in the Minicrypt Model", CRYPTO 2022), the subspace-VOLE form with
//! block size `k` (`k` divides 128, `1 ≤ k ≤ 8`).
//!
//! The 128 correlation bits of `Δ` are cut into `128/k` blocks `δ_b ∈ {0,1}^k`
//! (`δ_b = (Δ >> b·k) mod 2^k`). Per block:
//!
//! * **Setup** (once per ordered pair): the extension *receiver* (the base-OT sender, as for KOS)
//!   samples a GGM tree of depth `k` (`2^k` leaf seeds `s_v`); the extension *sender* (base-OT
//!   receiver with choices = the bits of `Δ`) learns every leaf but `s_{δ_b}`: at tree level `l`
//!   (`1..=k`, leaf bit `k − l`) base OT `b·k + (k − l)` with choice `d = bit (k−l) of δ_b` carries
//!   the XOR `K^{1−d}` of all level-`l` nodes on the side off the punctured path, sent once as the
//!   corrections `(K^1 ⊕ H(k^0), K^0 ⊕ H(k^1))`. From it and the nodes it already knows the sender
//!   rebuilds the sibling of the path node (constant-time selects; the path node itself holds an
//!   arbitrary value, which cancels below).
//! * **Per batch** (`m` OTs): each leaf expands to `r_v = PRG(s_v; batch, sender, receiver)`
//!   (`m` bits, AES-128-CTR keyed by the leaf, the counter block carries the tweak). The receiver
//!   gets `u = Σ_v r_v` and, for every bit `i < k`, `t_i = Σ_{v: v_i = 1} r_v` (the column
//!   `b·k + i` of its matrix), and sends `c = u ⊕ x`. The sender computes
//!   `y_i = Σ_v (v_i ⊕ δ_i) r_v = t_i ⊕ δ_i·u` (the unknown `r_{δ_b}` has coefficient 0) and
//!   `q_i = y_i ⊕ δ_i·c = t_i ⊕ δ_i·x`.
//!
//! So rows `q_j = t_j ⊕ x_j·Δ` exactly as in KOS ([`crate::ot`]), with `m` bits sent per block:
//! `128/k` bits per OT instead of 128, for `2^k·128/k` leaf expansions instead of 256. The KOS
//! consistency check ([`KosReceiver::check_response`], [`crate::ot::kos_sender_check`]) runs on
//! these rows unchanged; its meaning for SoftSpokenOT is in `docs/spdz-ot-security.md`.

use aes::cipher::{BlockCipherEncrypt, KeyInit};
use coterie_math::prg::Xof;
use rand::Rng;
use subtle::{ConditionallySelectable, ConstantTimeEq};
use zeroize::Zeroize;

use crate::ot::{KosReceiver, Seed, columns_to_rows, kos_words};
use crate::{Error, Result};

/// Checks a SoftSpokenOT block size: `1 ≤ k ≤ 8` and `k | 128`.
pub fn check_block_size(k: u32) -> Result<()> {
    if (1..=8).contains(&k) && 128 % k == 0 {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "SoftSpokenOT block size k = {k}: must divide 128 and be at most 8"
        )))
    }
}

pub(crate) fn aes_key(s: u128) -> aes::Aes128 {
    aes::Aes128::new(&s.to_le_bytes().into())
}

pub(crate) fn aes_one(c: &aes::Aes128, x: u128) -> u128 {
    let mut b = aes::Block::from(x.to_le_bytes());
    c.encrypt_block(&mut b);
    let mut a = [0u8; 16];
    a.copy_from_slice(&b);
    u128::from_le_bytes(a)
}

/// The GGM length-doubling PRG: `G(s) = (AES_s(0), AES_s(1))` (the counter blocks of
/// [`expand_leaf`] have bit 127 set, so the two uses never share an input).
pub fn ggm_children(s: u128) -> (u128, u128) {
    let c = aes_key(s);
    (aes_one(&c, 0), aes_one(&c, 1))
}

/// The per-batch leaf PRG: `words` 64-bit words of AES-128-CTR under key `s`, counter block
/// `2^127 | (receiver mod 2^15)·2^111 | (sender mod 2^15)·2^96 | batch·2^32 | i`.
pub fn expand_leaf(s: u128, batch: u64, sender: usize, receiver: usize, words: usize) -> Vec<u64> {
    let c = aes_key(s);
    let tweak = leaf_tweak(batch, sender, receiver);
    let nblocks = words.div_ceil(2);
    let mut blocks: Vec<aes::Block> = (0..nblocks)
        .map(|i| aes::Block::from((tweak | i as u128).to_le_bytes()))
        .collect();
    c.encrypt_blocks(&mut blocks);
    let mut out = Vec::with_capacity(nblocks * 2);
    for b in &blocks {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[..8]);
        out.push(u64::from_le_bytes(w));
        w.copy_from_slice(&b[8..]);
        out.push(u64::from_le_bytes(w));
    }
    blocks
        .iter_mut()
        .for_each(|b| b.iter_mut().for_each(|x| *x = 0));
    out.truncate(words);
    out
}

pub(crate) fn leaf_tweak(batch: u64, sender: usize, receiver: usize) -> u128 {
    (1u128 << 127)
        | ((receiver as u128 & 0x7fff) << 111)
        | ((sender as u128 & 0x7fff) << 96)
        | ((batch as u128) << 32)
}

/// AES blocks per leaf per chunk in [`block_vole`]: 256 leaves × 2 KB stay in the L2 cache.
const CHUNK_BLOCKS: usize = 128;

/// The small-field VOLE sums of one block, fast: the same as expanding every leaf with
/// [`expand_leaf`] and reducing with [`vole_reduce`], but chunk by chunk of the output (every
/// leaf's AES key schedule computed once), so the `2^k` partial expansions stay in cache.
///
/// On CPUs with AVX-512F and VAES (and `k ≥ 2`) the fused kernel of [`crate::vaes`] computes the
/// same sums, four leaves per AES instruction; this code is its reference in the tests.
fn block_vole(
    leaves: &[u128],
    k: usize,
    batch: u64,
    sender: usize,
    receiver: usize,
    words: usize,
) -> (Vec<u64>, Vec<Vec<u64>>) {
    let tweak = leaf_tweak(batch, sender, receiver);
    if let Some((mut u, mut w)) = crate::vaes::vole_sums(leaves, k, tweak, words.div_ceil(2)) {
        u.truncate(words);
        w.iter_mut().for_each(|x| x.truncate(words));
        return (u, w);
    }
    block_vole_portable(leaves, k, batch, sender, receiver, words)
}

/// [`block_vole`] with the `aes` crate and a tree of XORs per chunk, on any CPU.
fn block_vole_portable(
    leaves: &[u128],
    k: usize,
    batch: u64,
    sender: usize,
    receiver: usize,
    words: usize,
) -> (Vec<u64>, Vec<Vec<u64>>) {
    let ciphers: Vec<aes::Aes128> = leaves.iter().map(|&s| aes_key(s)).collect();
    let tweak = leaf_tweak(batch, sender, receiver);
    let nblocks = words.div_ceil(2);
    let mut u = vec![0u64; nblocks * 2];
    let mut w = vec![vec![0u64; nblocks * 2]; k];
    let mut scratch = vec![vec![0u128; CHUNK_BLOCKS]; leaves.len()];
    let mut buf = vec![aes::Block::default(); CHUNK_BLOCKS];
    let lane = |b: &aes::Block| {
        let mut a = [0u8; 16];
        a.copy_from_slice(b);
        u128::from_le_bytes(a)
    };
    // the counter blocks of a chunk, the same for every leaf
    let mut counters = vec![aes::Block::default(); CHUNK_BLOCKS];
    let mut start = 0;
    while start < nblocks {
        let len = CHUNK_BLOCKS.min(nblocks - start);
        for (i, b) in counters[..len].iter_mut().enumerate() {
            *b = aes::Block::from((tweak | (start + i) as u128).to_le_bytes());
        }
        for (c, r) in ciphers.iter().zip(scratch.iter_mut()) {
            buf[..len].copy_from_slice(&counters[..len]);
            c.encrypt_blocks(&mut buf[..len]);
            for (x, b) in r[..len].iter_mut().zip(&buf[..len]) {
                *x = lane(b);
            }
        }
        for (lvl, wl) in w.iter_mut().enumerate() {
            let stride = 1usize << lvl;
            let mut acc = [0u128; CHUNK_BLOCKS];
            let mut i = 0;
            while i < scratch.len() {
                let (lo, hi) = scratch.split_at_mut(i + stride);
                for ((x, y), z) in lo[i][..len].iter_mut().zip(&hi[0][..len]).zip(&mut acc) {
                    *z ^= y;
                    *x ^= y;
                }
                i += 2 * stride;
            }
            for (j, z) in acc[..len].iter().enumerate() {
                wl[2 * (start + j)] = *z as u64;
                wl[2 * (start + j) + 1] = (*z >> 64) as u64;
            }
            acc.zeroize();
        }
        for (j, z) in scratch[0][..len].iter().enumerate() {
            u[2 * (start + j)] = *z as u64;
            u[2 * (start + j) + 1] = (*z >> 64) as u64;
        }
        start += len;
    }
    scratch.iter_mut().for_each(|r| r.zeroize());
    buf.iter_mut()
        .for_each(|b| b.iter_mut().for_each(|x| *x = 0));
    u.truncate(words);
    w.iter_mut().for_each(|x| x.truncate(words));
    (u, w)
}

fn pad(key: &Seed, i: usize) -> u128 {
    let mut x = Xof::new(key, b"coterie-spdz/softspoken-ggm", i as u64);
    ((x.next_u64() as u128) << 64) | x.next_u64() as u128
}

/// The extension receiver's GGM leaves: `blocks × 2^k` seeds, block-major.
pub struct SsReceiverKeys {
    k: u32,
    leaves: Vec<u128>,
}

impl Drop for SsReceiverKeys {
    fn drop(&mut self) {
        self.leaves.zeroize();
    }
}

/// The extension sender's punctured GGM leaves (the leaf at `δ_b` of block `b` holds an
/// arbitrary value) and its `Δ`.
pub struct SsSenderKeys {
    k: u32,
    delta: u128,
    leaves: Vec<u128>,
}

impl Drop for SsSenderKeys {
    fn drop(&mut self) {
        self.leaves.zeroize();
        self.delta.zeroize();
    }
}

/// One level of the full tree: the children of every node of `level`, in order.
fn expand_level(level: &[u128]) -> Vec<u128> {
    let mut next = Vec::with_capacity(level.len() * 2);
    for &s in level {
        let (a, b) = ggm_children(s);
        next.push(a);
        next.push(b);
    }
    next
}

/// The per-level sums `(K^0, K^1)` of left and right children of `next`.
fn side_sums(next: &[u128]) -> (u128, u128) {
    let (mut k0, mut k1) = (0u128, 0u128);
    for p in next.chunks_exact(2) {
        k0 ^= p[0];
        k1 ^= p[1];
    }
    (k0, k1)
}

/// Samples `keys.len() / k` GGM trees of depth `k` (block `b` punctured later by the peer at
/// the `k` bits `b·k..(b+1)·k` of its choices) and returns their leaves (`2^k` per block,
/// block-major) with the setup corrections, one pair per base OT (`keys` are both keys of the
/// base OTs toward the peer; `keys.len()` a multiple of `k`). The set-up of SoftSpokenOT and of
/// [`crate::cope`].
pub(crate) fn ggm_trees<G: Rng + ?Sized>(
    rng: &mut G,
    k: usize,
    keys: &[(Seed, Seed)],
) -> (Vec<u128>, Vec<(u128, u128)>) {
    debug_assert!(k >= 1 && keys.len().is_multiple_of(k));
    let blocks = keys.len() / k;
    let mut corr = vec![(0u128, 0u128); keys.len()];
    let mut leaves = Vec::with_capacity(blocks << k);
    for b in 0..blocks {
        let mut level = vec![((rng.next_u64() as u128) << 64) | rng.next_u64() as u128];
        for l in 1..=k {
            let next = expand_level(&level);
            level.zeroize();
            let (k0, k1) = side_sums(&next);
            let i = b * k + (k - l);
            corr[i] = (k1 ^ pad(&keys[i].0, i), k0 ^ pad(&keys[i].1, i));
            level = next;
        }
        leaves.extend_from_slice(&level);
        level.zeroize();
    }
    (leaves, corr)
}

/// The punctured leaves of [`ggm_trees`] from this party's base-OT keys `k_i^{c_i}` (`keys`,
/// choices `c` = the bits of `choices`) and the peer's setup corrections `corr` (both
/// `keys.len()` long, a multiple of `k`): every leaf of block `b` but the one at
/// `δ_b = (choices >> b·k) mod 2^k`, which holds an arbitrary value.
pub(crate) fn ggm_punctured(
    k: usize,
    choices: u128,
    keys: &[Seed],
    corr: &[(u128, u128)],
) -> Vec<u128> {
    debug_assert!(k >= 1 && keys.len().is_multiple_of(k) && corr.len() == keys.len());
    let blocks = keys.len() / k;
    let mut leaves = Vec::with_capacity(blocks << k);
    for b in 0..blocks {
        let db = ((choices >> (b * k)) as usize) & ((1 << k) - 1);
        // the path node holds an arbitrary value (0 at the root)
        let mut level = vec![0u128];
        for l in 1..=k {
            let i = b * k + (k - l);
            let d = ((db >> (k - l)) & 1) as u8;
            let dc = subtle::Choice::from(d);
            let path = (db >> (k - l + 1)) as u64; // index of the path node at level l − 1
            let mut next = expand_level(&level);
            level.zeroize();
            let (s0, s1) = side_sums(&next);
            // K^{1−d} decoded with k^d: corr.1 if d = 1, corr.0 if d = 0
            let kk = u128::conditional_select(&corr[i].0, &corr[i].1, dc) ^ pad(&keys[i], i);
            let s_off = u128::conditional_select(&s1, &s0, dc);
            // the off-path child of the path node, as computed from its arbitrary value
            let mut g = 0u128;
            for (p, pair) in next.chunks_exact(2).enumerate() {
                let sel = (p as u64).ct_eq(&path);
                let cand = u128::conditional_select(&pair[1], &pair[0], dc);
                g.conditional_assign(&cand, sel);
            }
            let sibling = kk ^ s_off ^ g;
            let target = (path << 1) | (1 - d as u64);
            for (idx, node) in next.iter_mut().enumerate() {
                node.conditional_assign(&sibling, (idx as u64).ct_eq(&target));
            }
            level = next;
        }
        leaves.extend_from_slice(&level);
        level.zeroize();
    }
    leaves
}

impl SsReceiverKeys {
    /// Samples the `128/k` GGM trees and returns them with the setup corrections, one pair per
    /// base OT (`keys` are both keys of the 128 base OTs toward this peer).
    pub fn setup<G: Rng + ?Sized>(
        rng: &mut G,
        k: u32,
        keys: &[(Seed, Seed)],
    ) -> Result<(Self, Vec<(u128, u128)>)> {
        check_block_size(k)?;
        if keys.len() != 128 {
            return Err(Error::Invalid("SoftSpokenOT: 128 base OTs needed".into()));
        }
        let (leaves, corr) = ggm_trees(rng, k as usize, keys);
        Ok((Self { k, leaves }, corr))
    }

    /// The block size.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// Leaf `v` of block `b` (tests and the reference).
    #[cfg(test)]
    pub(crate) fn leaf(&self, b: usize, v: usize) -> u128 {
        self.leaves[(b << self.k) + v]
    }

    /// One extension of `m` OTs with choice bits `choices` (packed, `m` bits used; `KOS_EXTRA`
    /// random choices are appended for the check) for batch `batch` between extension sender
    /// `sender` and this receiver `receiver`. Returns the receiver state (the same as KOS's:
    /// rows `t_j`, choices) and the `128/k` correction columns `u^(b) ⊕ x`.
    pub fn extend<G: Rng + ?Sized>(
        &self,
        rng: &mut G,
        batch: u64,
        sender: usize,
        receiver: usize,
        choices: &[u64],
        m: usize,
    ) -> Result<(KosReceiver, Vec<Vec<u64>>)> {
        if choices.len() * 64 < m {
            return Err(Error::Invalid("SoftSpokenOT: m choice bits needed".into()));
        }
        let words = kos_words(m);
        let mut x = vec![0u64; words];
        for (i, w) in x.iter_mut().enumerate() {
            *w = rng.next_u64();
            for bit in 0..64 {
                let j = i * 64 + bit;
                if j < m {
                    let c = (choices[j / 64] >> (j % 64)) & 1;
                    *w = (*w & !(1u64 << bit)) | (c << bit);
                }
            }
        }
        let k = self.k as usize;
        let mut cols: Vec<Vec<u64>> = Vec::with_capacity(128);
        let mut corr = Vec::with_capacity(128 / k);
        for b in 0..128 / k {
            let leaves = &self.leaves[b << k..(b + 1) << k];
            let (u, w) = block_vole(leaves, k, batch, sender, receiver, words);
            corr.push(u.iter().zip(&x).map(|(a, c)| a ^ c).collect());
            cols.extend(w);
        }
        let t = columns_to_rows(&cols, words);
        cols.iter_mut().for_each(|c| c.zeroize());
        Ok((KosReceiver { x, t, m }, corr))
    }
}

/// The fast small-field VOLE sums: from the `2^k` expanded leaves `rs` (consumed as scratch),
/// `u = Σ_v r_v` and `w_i = Σ_{v: bit i of v = 1} r_v` for `i < k`, by a binary tree of XORs
/// (`2(2^k − 1)` vector XORs: at level `i` every right child is added into `w_i` and into its
/// left sibling, which becomes the parent's sum). The simple form of what the producer runs
/// chunk by chunk; kept as the middle step between the naive sums and the chunked code.
pub fn vole_reduce(rs: &mut [Vec<u64>], k: usize) -> (Vec<u64>, Vec<Vec<u64>>) {
    debug_assert_eq!(rs.len(), 1 << k);
    let words = rs[0].len();
    let mut w = vec![vec![0u64; words]; k];
    for (lvl, wl) in w.iter_mut().enumerate() {
        let stride = 1usize << lvl;
        let mut i = 0;
        while i < rs.len() {
            let (lo, hi) = rs.split_at_mut(i + stride);
            let a = &mut lo[i];
            let b = &hi[0];
            for ((x, y), z) in a.iter_mut().zip(b).zip(wl.iter_mut()) {
                *z ^= y;
                *x ^= y;
            }
            i += 2 * stride;
        }
    }
    let u = std::mem::take(&mut rs[0]);
    rs.iter_mut().for_each(|r| r.zeroize());
    (u, w)
}

impl SsSenderKeys {
    /// Rebuilds the punctured trees from this party's base-OT keys `k_i^{Δ_i}` (`keys`) and the
    /// receiver's setup corrections.
    pub fn setup(k: u32, delta: u128, keys: &[Seed], corr: &[(u128, u128)]) -> Result<Self> {
        check_block_size(k)?;
        if keys.len() != 128 || corr.len() != 128 {
            return Err(Error::Codec(
                "SoftSpokenOT: malformed setup corrections".into(),
            ));
        }
        let leaves = ggm_punctured(k as usize, delta, keys, corr);
        Ok(Self { k, delta, leaves })
    }

    /// The block size.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// Leaf `v` of block `b` (arbitrary at `v = δ_b`; tests and the reference).
    #[cfg(test)]
    pub(crate) fn leaf(&self, b: usize, v: usize) -> u128 {
        self.leaves[(b << self.k) + v]
    }

    /// The sender's rows `q_j = t_j ⊕ x_j·Δ` of batch `batch` (this party `sender`, the peer
    /// `receiver`) from the receiver's `128/k` correction columns.
    pub fn rows(
        &self,
        batch: u64,
        sender: usize,
        receiver: usize,
        corr: &[Vec<u64>],
        m: usize,
    ) -> Result<Vec<u128>> {
        let k = self.k as usize;
        let words = kos_words(m);
        if corr.len() != 128 / k || corr.iter().any(|c| c.len() != words) {
            return Err(Error::Codec(
                "SoftSpokenOT: malformed extension message".into(),
            ));
        }
        let mut cols: Vec<Vec<u64>> = Vec::with_capacity(128);
        for (b, c) in corr.iter().enumerate() {
            let leaves = &self.leaves[b << k..(b + 1) << k];
            // with r_δ arbitrary: u' = Σ r_v, w'_i = Σ_{v_i=1} r_v; then
            // q_i = w'_i ⊕ δ_i·(u' ⊕ c) = t_i ⊕ δ_i·x (r_δ's terms cancel)
            let (u, w) = block_vole(leaves, k, batch, sender, receiver, words);
            for (i, mut wi) in w.into_iter().enumerate() {
                let d = 0u64.wrapping_sub(((self.delta >> (b * k + i)) & 1) as u64);
                for ((q, uu), cc) in wi.iter_mut().zip(&u).zip(c) {
                    *q ^= (uu ^ cc) & d;
                }
                cols.push(wi);
            }
        }
        let rows = columns_to_rows(&cols, words);
        cols.iter_mut().for_each(|c| c.zeroize());
        Ok(rows)
    }
}

/// Bytes of the per-batch correction message for `m` OTs with block size `k`.
pub fn correction_len(k: u32, m: usize) -> usize {
    (128 / k as usize) * kos_words(m) * 8
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ot::{KOS_EXTRA, kos_sender_check};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    use crate::ot::tests::kos_setup as base_keys;

    /// Naive reference: leaf `v` of the GGM tree with `root`, by walking its path from the root.
    fn naive_leaf_from_root(root: u128, k: usize, v: usize) -> u128 {
        let mut s = root;
        for l in 1..=k {
            let bit = (v >> (k - l)) & 1;
            let (a, b) = ggm_children(s);
            s = if bit == 1 { b } else { a };
        }
        s
    }

    /// Naive reference of the receiver's VOLE: `u = Σ r_v`, `t_i = Σ_{v_i=1} r_v`, straight from
    /// the definitions.
    fn naive_receiver(
        rk: &SsReceiverKeys,
        batch: u64,
        s: usize,
        r: usize,
        words: usize,
    ) -> (Vec<Vec<u64>>, Vec<Vec<u64>>) {
        let k = rk.k() as usize;
        let mut us = Vec::new();
        let mut ts = Vec::new();
        for b in 0..128 / k {
            let mut u = vec![0u64; words];
            let mut t = vec![vec![0u64; words]; k];
            for v in 0..1 << k {
                let rv = expand_leaf(rk.leaf(b, v), batch, s, r, words);
                for w in 0..words {
                    u[w] ^= rv[w];
                    for (i, ti) in t.iter_mut().enumerate() {
                        if (v >> i) & 1 == 1 {
                            ti[w] ^= rv[w];
                        }
                    }
                }
            }
            us.push(u);
            ts.extend(t);
        }
        (us, ts)
    }

    /// Naive reference of the sender: `y_i = Σ_{v ≠ δ} (v_i ⊕ δ_i) r_v`, `q_i = y_i ⊕ δ_i·c`.
    #[allow(clippy::needless_range_loop)] // the definition reads per block index
    fn naive_sender(
        sk: &SsSenderKeys,
        batch: u64,
        s: usize,
        r: usize,
        corr: &[Vec<u64>],
        words: usize,
    ) -> Vec<Vec<u64>> {
        let k = sk.k() as usize;
        let mut cols = Vec::new();
        for b in 0..128 / k {
            let db = ((sk.delta >> (b * k)) as usize) & ((1 << k) - 1);
            let mut q = vec![vec![0u64; words]; k];
            for v in 0..1 << k {
                if v == db {
                    continue;
                }
                let rv = expand_leaf(sk.leaf(b, v), batch, s, r, words);
                for (i, qi) in q.iter_mut().enumerate() {
                    if ((v ^ db) >> i) & 1 == 1 {
                        qi.iter_mut().zip(&rv).for_each(|(a, b)| *a ^= b);
                    }
                }
            }
            for (i, qi) in q.iter_mut().enumerate() {
                if (db >> i) & 1 == 1 {
                    qi.iter_mut().zip(&corr[b]).for_each(|(a, b)| *a ^= b);
                }
            }
            cols.extend(q);
        }
        cols
    }

    /// The tree reduction, the chunked expansion and (where the CPU has VAES) the fused
    /// kernel of `crate::vaes` against the naive sums, with lengths that are not whole chunks.
    #[test]
    fn chunked_vole_matches_reduce_and_naive() {
        for k in [1usize, 2, 3, 4, 5, 8] {
            for words in [1usize, 7, 2 * CHUNK_BLOCKS + 3] {
                let leaves: Vec<u128> = (0..1u128 << k).map(|v| v * 0x1_0001 + 5).collect();
                let rs: Vec<Vec<u64>> = leaves
                    .iter()
                    .map(|&s| expand_leaf(s, 9, 1, 0, words))
                    .collect();
                let mut nu = vec![0u64; words];
                let mut nw = vec![vec![0u64; words]; k];
                for (v, r) in rs.iter().enumerate() {
                    for x in 0..words {
                        nu[x] ^= r[x];
                        for (i, wi) in nw.iter_mut().enumerate() {
                            if (v >> i) & 1 == 1 {
                                wi[x] ^= r[x];
                            }
                        }
                    }
                }
                let mut scratch = rs.clone();
                assert_eq!(vole_reduce(&mut scratch, k), (nu.clone(), nw.clone()));
                assert_eq!(
                    block_vole_portable(&leaves, k, 9, 1, 0, words),
                    (nu.clone(), nw.clone()),
                    "portable, k {k} {words}"
                );
                assert_eq!(
                    block_vole(&leaves, k, 9, 1, 0, words),
                    (nu, nw),
                    "k {k} {words}"
                );
                // the fused kernel ran where it can
                let fused = crate::vaes::vole_sums(&leaves, k, leaf_tweak(9, 1, 0), 1);
                assert_eq!(fused.is_some(), crate::vaes::available() && k >= 2);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
        /// For random keys, Δ, choices, lengths, batches and party ids, the fast sender's rows
        /// equal the naive reference's and `q_j = t_j ⊕ x_j·Δ` for every row.
        #[test]
        fn rows_match_naive_reference(
            seed: u64,
            ki in 0usize..4,
            m in 1usize..400,
            batch in 0u64..1000,
            s in 0usize..5,
        ) {
            let k = [1u32, 2, 4, 8][ki];
            let r = (s + 1) % 5;
            let mut rng = ChaCha20Rng::seed_from_u64(seed);
            let (delta, sk, rk) = base_keys(&mut rng);
            let (rcv_keys, corr) = SsReceiverKeys::setup(&mut rng, k, &rk).unwrap();
            let snd = SsSenderKeys::setup(k, delta, &sk, &corr).unwrap();
            let words = kos_words(m);
            let choices: Vec<u64> = (0..m.div_ceil(64)).map(|_| rng.next_u64()).collect();
            let (rcv, c) = rcv_keys.extend(&mut rng, batch, s, r, &choices, m).unwrap();
            let q = snd.rows(batch, s, r, &c, m).unwrap();
            let nq = naive_sender(&snd, batch, s, r, &c, words);
            proptest::prop_assert_eq!(&columns_to_rows(&nq, words), &q);
            for (j, (qj, tj)) in q.iter().zip(&rcv.t).enumerate() {
                let x = 0u128.wrapping_sub(rcv.choice(j) as u128);
                proptest::prop_assert_eq!(*qj, tj ^ (delta & x));
            }
            proptest::prop_assert_eq!(q.len(), words * 64);
        }
    }

    #[test]
    fn block_sizes() {
        for k in [1, 2, 4, 8] {
            check_block_size(k).unwrap();
        }
        for k in [0, 3, 5, 16] {
            assert!(check_block_size(k).is_err());
        }
    }

    #[test]
    fn punctured_tree_matches_except_at_delta() {
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        for k in [1u32, 2, 4, 8] {
            let (delta, sk, rk) = base_keys(&mut rng);
            let (r, corr) = SsReceiverKeys::setup(&mut rng, k, &rk).unwrap();
            let s = SsSenderKeys::setup(k, delta, &sk, &corr).unwrap();
            let k = k as usize;
            for b in 0..128 / k {
                let db = ((delta >> (b * k)) as usize) & ((1 << k) - 1);
                for v in 0..1usize << k {
                    if v == db {
                        assert_ne!(s.leaf(b, v), r.leaf(b, v), "k {k} b {b}: leaf δ leaked");
                    } else {
                        assert_eq!(s.leaf(b, v), r.leaf(b, v), "k {k} b {b} v {v}");
                    }
                }
            }
        }
    }

    #[test]
    fn ggm_tree_is_a_tree() {
        // the receiver's leaves are the leaves of a GGM tree: rebuild the tree from a root with
        // the naive walk and compare with setup's level-by-level expansion
        let root = 0x1234_5678_9abc_def0_u128 * 77;
        for k in [1usize, 2, 4, 8] {
            let mut level = vec![root];
            for _ in 0..k {
                level = expand_level(&level);
            }
            for (v, &leaf) in level.iter().enumerate() {
                assert_eq!(leaf, naive_leaf_from_root(root, k, v));
            }
        }
    }

    #[test]
    fn fast_vole_matches_naive_and_gives_kos_rows() {
        let mut rng = ChaCha20Rng::seed_from_u64(12);
        for k in [1u32, 2, 4, 8] {
            let (delta, sk, rk) = base_keys(&mut rng);
            let (r, corr) = SsReceiverKeys::setup(&mut rng, k, &rk).unwrap();
            let s = SsSenderKeys::setup(k, delta, &sk, &corr).unwrap();
            let m: usize = 700;
            let words = kos_words(m);
            let choices: Vec<u64> = (0..m.div_ceil(64)).map(|_| rng.next_u64()).collect();
            let (rcv, c) = r.extend(&mut rng, 5, 2, 1, &choices, m).unwrap();
            assert_eq!(c.len(), 128 / k as usize);
            assert_eq!(correction_len(k, m), c.len() * words * 8);
            // the receiver against the naive reference
            let (nu, nt) = naive_receiver(&r, 5, 2, 1, words);
            for (b, cb) in c.iter().enumerate() {
                let x: Vec<u64> = cb.iter().zip(&nu[b]).map(|(a, b)| a ^ b).collect();
                assert_eq!(x, rcv.x, "k {k} block {b}: c ≠ u ⊕ x");
            }
            assert_eq!(columns_to_rows(&nt, words), rcv.t, "k {k}: t");
            // the sender against the naive reference
            let q = s.rows(5, 2, 1, &c, m).unwrap();
            let nq = naive_sender(&s, 5, 2, 1, &c, words);
            assert_eq!(columns_to_rows(&nq, words), q, "k {k}: q");
            // the correlation, every row
            assert_eq!(q.len(), words * 64);
            for j in 0..m + KOS_EXTRA {
                let x = rcv.choice(j);
                if j < m {
                    assert_eq!(x, (choices[j / 64] >> (j % 64)) & 1);
                }
                assert_eq!(
                    q[j],
                    rcv.t[j] ^ if x == 1 { delta } else { 0 },
                    "k {k} j {j}"
                );
            }
            let seed = [3u8; 32];
            assert!(kos_sender_check(
                delta,
                &q,
                &seed,
                rcv.check_response(&seed)
            ));
            // a different batch or pair gives unrelated rows
            let (rcv2, _) = r.extend(&mut rng, 6, 2, 1, &choices, m).unwrap();
            assert_ne!(rcv2.t[..m], rcv.t[..m]);
            let (rcv3, _) = r.extend(&mut rng, 5, 1, 2, &choices, m).unwrap();
            assert_ne!(rcv3.t[..m], rcv.t[..m]);
        }
    }

    /// A receiver that sends different choice bits in different blocks is caught by the check.
    #[test]
    fn check_catches_inconsistent_blocks() {
        let mut rng = ChaCha20Rng::seed_from_u64(13);
        for k in [2u32, 4, 8] {
            let (delta, sk, rk) = base_keys(&mut rng);
            let (r, corr) = SsReceiverKeys::setup(&mut rng, k, &rk).unwrap();
            let s = SsSenderKeys::setup(k, delta, &sk, &corr).unwrap();
            let m: usize = 300;
            let choices: Vec<u64> = (0..m.div_ceil(64)).map(|_| rng.next_u64()).collect();
            let (rcv, mut c) = r.extend(&mut rng, 1, 0, 1, &choices, m).unwrap();
            // a flip in block b changes the sender's view only if δ_b ≠ 0
            let b = (0..128 / k as usize)
                .find(|&b| (delta >> (b * k as usize)) & ((1 << k) - 1) != 0)
                .unwrap();
            c[b][2] ^= 1 << 9;
            let q = s.rows(1, 0, 1, &c, m).unwrap();
            let seed = [4u8; 32];
            assert!(!kos_sender_check(
                delta,
                &q,
                &seed,
                rcv.check_response(&seed)
            ));
        }
    }

    /// A wrong setup correction makes one sender leaf differ from the receiver's: the rows
    /// break the correlation and the check fails.
    #[test]
    fn check_catches_tampered_setup() {
        let mut rng = ChaCha20Rng::seed_from_u64(14);
        for k in [2u32, 4, 8] {
            let (delta, sk, rk) = base_keys(&mut rng);
            let (r, mut corr) = SsReceiverKeys::setup(&mut rng, k, &rk).unwrap();
            // tamper both messages of the bottom level of block 0 (the one the sender uses)
            corr[0].0 ^= 1;
            corr[0].1 ^= 1;
            let s = SsSenderKeys::setup(k, delta, &sk, &corr).unwrap();
            let m: usize = 200;
            let choices: Vec<u64> = (0..m.div_ceil(64)).map(|_| rng.next_u64()).collect();
            let (rcv, c) = r.extend(&mut rng, 0, 0, 1, &choices, m).unwrap();
            let q = s.rows(0, 0, 1, &c, m).unwrap();
            let seed = [5u8; 32];
            assert!(!kos_sender_check(
                delta,
                &q,
                &seed,
                rcv.check_response(&seed)
            ));
        }
    }

    #[test]
    fn malformed_inputs_are_refused() {
        let mut rng = ChaCha20Rng::seed_from_u64(15);
        let (delta, sk, rk) = base_keys(&mut rng);
        assert!(SsReceiverKeys::setup(&mut rng, 3, &rk).is_err());
        assert!(SsReceiverKeys::setup(&mut rng, 4, &rk[..127]).is_err());
        let (_, corr) = SsReceiverKeys::setup(&mut rng, 4, &rk).unwrap();
        assert!(SsSenderKeys::setup(4, delta, &sk, &corr[..100]).is_err());
        let s = SsSenderKeys::setup(4, delta, &sk, &corr).unwrap();
        assert!(s.rows(0, 0, 1, &[vec![0u64; 4]], 100).is_err());
    }
}
