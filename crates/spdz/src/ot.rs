//! Oblivious transfer for the SPDZ_2k preprocessing: Chou–Orlandi "simplest OT" base OTs over
//! Ristretto255, and KOS correlated-OT extension with its consistency check (Keller–Orsini–Scholl,
//! CRYPTO 2015).
//!
//! SoftSpokenOT, which gives the same rows with less traffic and reuses the check here, is in
//! [`crate::softspoken`]. The functions here are *local steps* on values (no network);
//! [`crate::ot_prep`] composes them over a mesh, one message per peer per round.
//!
//! * Base OT (sender `S`, receiver `R`, choice `c`): `S` sends `A = a·G`; `R` sends
//!   `B = b·G + c·A`; keys `k_0 = H(A, B, a·B)`, `k_1 = H(A, B, a·(B − A))` for `S` and
//!   `k_c = H(A, B, b·A)` for `R`. The transcript and the OT index are hashed into every key.
//! * KOS: the extension sender holds `Δ ∈ {0,1}^128` and the base-OT keys `k_i^{Δ_i}`; the
//!   receiver holds both keys of each base OT and choice bits `x`. The receiver sends
//!   `u_i = G(k_i^0) ⊕ G(k_i^1) ⊕ x`; the sender gets rows `q_j = t_j ⊕ x_j·Δ`. The consistency
//!   check (`κ + s = 192` extra random OTs, random `χ_j ∈ GF(2^128)` chosen by the sender after it
//!   got `u`): the receiver sends `x̃ = Σ x_j χ_j`, `t̃ = Σ t_j χ_j` and the sender checks
//!   `Σ q_j χ_j = t̃ + x̃·Δ`.

use coterie_math::buffers::KeptBuffers;
use coterie_math::prg::Xof;
use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use rand::Rng;
use zeroize::Zeroize;

use crate::{Error, Result};

/// A 256-bit OT key or PRG seed.
pub type Seed = [u8; 32];

/// Extra random OTs of the KOS consistency check (`κ + s` with `κ = 128`, `s = 64`).
pub const KOS_EXTRA: usize = 192;

fn random_scalar<G: Rng + ?Sized>(rng: &mut G) -> Scalar {
    let mut w = [0u8; 64];
    rng.fill_bytes(&mut w);
    let s = Scalar::from_bytes_mod_order_wide(&w);
    w.zeroize();
    s
}

fn ot_key(
    index: usize,
    a: &CompressedRistretto,
    b: &CompressedRistretto,
    p: &RistrettoPoint,
) -> Seed {
    let mut h = blake3::Hasher::new_derive_key("coterie-spdz 2026 simplest-ot key v1");
    h.update(&(index as u64).to_le_bytes());
    h.update(a.as_bytes());
    h.update(b.as_bytes());
    h.update(p.compress().as_bytes());
    *h.finalize().as_bytes()
}

/// Base-OT sender state: its secret `a` and public `A = a·G`.
pub struct BaseOtSender {
    a: Scalar,
    /// `A`, to send to the receiver.
    pub big_a: CompressedRistretto,
}

impl Drop for BaseOtSender {
    fn drop(&mut self) {
        self.a.zeroize();
    }
}

impl BaseOtSender {
    /// Step 1 of the sender: sample `a`, compute `A`.
    pub fn new<G: Rng + ?Sized>(rng: &mut G) -> Self {
        let a = random_scalar(rng);
        Self {
            big_a: RistrettoPoint::mul_base(&a).compress(),
            a,
        }
    }
    /// Step 2 of the sender: both keys of every OT, from the receiver's `B_i`.
    pub fn keys(&self, bs: &[CompressedRistretto]) -> Result<Vec<(Seed, Seed)>> {
        let big_a = self
            .big_a
            .decompress()
            .ok_or_else(|| Error::Invalid("own base-OT point".into()))?;
        bs.iter()
            .enumerate()
            .map(|(i, bc)| {
                let b = bc
                    .decompress()
                    .ok_or_else(|| Error::Codec("base OT: B is not a point".into()))?;
                let k0 = ot_key(i, &self.big_a, bc, &(self.a * b));
                let k1 = ot_key(i, &self.big_a, bc, &(self.a * (b - big_a)));
                Ok((k0, k1))
            })
            .collect()
    }
}

/// Base-OT receiver: for choices `c_i` and the sender's `A`, returns the messages `B_i` and the
/// keys `k_{c_i}`.
pub fn base_ot_receive<G: Rng + ?Sized>(
    rng: &mut G,
    big_a: &CompressedRistretto,
    choices: &[bool],
) -> Result<(Vec<CompressedRistretto>, Vec<Seed>)> {
    let a = big_a
        .decompress()
        .ok_or_else(|| Error::Codec("base OT: A is not a point".into()))?;
    let mut bs = Vec::with_capacity(choices.len());
    let mut keys = Vec::with_capacity(choices.len());
    for (i, &c) in choices.iter().enumerate() {
        let mut b = random_scalar(rng);
        let mut p = RistrettoPoint::mul_base(&b);
        // constant-time selection of b·G or b·G + A
        use subtle::{Choice, ConditionallySelectable};
        let pa = p + a;
        p.conditional_assign(&pa, Choice::from(c as u8));
        let bc = p.compress();
        keys.push(ot_key(i, big_a, &bc, &(b * a)));
        b.zeroize();
        bs.push(bc);
    }
    Ok((bs, keys))
}

// ----- GF(2^128) and bit matrices -----

#[inline]
#[allow(unsafe_code)] // the pclmulqdq intrinsic, behind its run-time check
fn clmul64(a: u64, b: u64) -> u128 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("pclmulqdq") {
            // SAFETY: the CPU supports pclmulqdq (checked above); the intrinsics only read their
            // register arguments.
            unsafe {
                use std::arch::x86_64::*;
                let x = _mm_set_epi64x(0, a as i64);
                let y = _mm_set_epi64x(0, b as i64);
                let r = _mm_clmulepi64_si128(x, y, 0);
                let mut out = [0u64; 2];
                _mm_storeu_si128(out.as_mut_ptr() as *mut __m128i, r);
                return (out[0] as u128) | ((out[1] as u128) << 64);
            }
        }
    }
    let mut r = 0u128;
    for i in 0..64 {
        // the mask form keeps the loop free of data-dependent branches
        let m = 0u128.wrapping_sub(((b >> i) & 1) as u128);
        r ^= ((a as u128) << i) & m;
    }
    r
}

/// Carry-less product of two 128-bit polynomials: `(low, high)` halves of the 255-bit result.
#[inline]
pub fn clmul128(a: u128, b: u128) -> (u128, u128) {
    let (a0, a1) = (a as u64, (a >> 64) as u64);
    let (b0, b1) = (b as u64, (b >> 64) as u64);
    let lo = clmul64(a0, b0);
    let hi = clmul64(a1, b1);
    let mid = clmul64(a0, b1) ^ clmul64(a1, b0);
    (lo ^ (mid << 64), hi ^ (mid >> 64))
}

/// `χ` values drawn per chunk in [`clmul_rows_chis`].
const CHI_CHUNK: usize = 256;

/// `Σ_j rows[j]·χ_j` in `GF(2)[x]`, unreduced (low and high 128 bits), with `χ_j` drawn from
/// `xof` (two words each, the first the high half) and `f(j, χ_j)` called for each (the KOS
/// receiver folds its choice bits in). The consistency checks of KOS and SoftSpokenOT.
pub fn clmul_rows_chis(
    rows: &[u128],
    xof: &mut Xof,
    mut f: impl FnMut(usize, u128),
) -> (u128, u128) {
    let mut chis = [0u128; CHI_CHUNK];
    let (mut lo, mut hi) = (0u128, 0u128);
    for (c, chunk) in rows.chunks(CHI_CHUNK).enumerate() {
        let chis = &mut chis[..chunk.len()];
        for (i, chi) in chis.iter_mut().enumerate() {
            *chi = ((xof.next_u64() as u128) << 64) | xof.next_u64() as u128;
            f(c * CHI_CHUNK + i, *chi);
        }
        let (l, h) = clmul_sum(chunk, chis);
        lo ^= l;
        hi ^= h;
    }
    chis.zeroize();
    (lo, hi)
}

/// `Σ_j a[j]·b[j]` in `GF(2)[x]`, unreduced: with PCLMULQDQ the four partial products of every
/// pair are summed in three registers and combined once at the end.
#[allow(unsafe_code)] // the pclmulqdq kernel, behind its run-time check
fn clmul_sum(a: &[u128], b: &[u128]) -> (u128, u128) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("pclmulqdq") {
            // SAFETY: the CPU supports pclmulqdq (checked above).
            return unsafe { clmul_sum_pclmul(a, b) };
        }
    }
    a.iter().zip(b).fold((0, 0), |(lo, hi), (x, y)| {
        let (l, h) = clmul128(*x, *y);
        (lo ^ l, hi ^ h)
    })
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "pclmulqdq")]
#[allow(unsafe_code)] // pclmulqdq intrinsics (the caller checked the CPU), unaligned loads/stores
unsafe fn clmul_sum_pclmul(a: &[u128], b: &[u128]) -> (u128, u128) {
    use std::arch::x86_64::*;
    let mut lo = _mm_setzero_si128();
    let mut mid = _mm_setzero_si128();
    let mut hi = _mm_setzero_si128();
    for (x, y) in a.iter().zip(b) {
        // SAFETY: unaligned 16-byte loads of `u128`s (little-endian: low half in lane 0).
        let (xv, yv) = unsafe {
            (
                _mm_loadu_si128(x as *const u128 as *const __m128i),
                _mm_loadu_si128(y as *const u128 as *const __m128i),
            )
        };
        lo = _mm_xor_si128(lo, _mm_clmulepi64_si128(xv, yv, 0x00));
        hi = _mm_xor_si128(hi, _mm_clmulepi64_si128(xv, yv, 0x11));
        let cross = _mm_xor_si128(
            _mm_clmulepi64_si128(xv, yv, 0x01),
            _mm_clmulepi64_si128(xv, yv, 0x10),
        );
        mid = _mm_xor_si128(mid, cross);
    }
    let mut out = [0u128; 3];
    // SAFETY: unaligned 16-byte stores into a local array.
    unsafe {
        _mm_storeu_si128(out.as_mut_ptr() as *mut __m128i, lo);
        _mm_storeu_si128(out.as_mut_ptr().add(1) as *mut __m128i, mid);
        _mm_storeu_si128(out.as_mut_ptr().add(2) as *mut __m128i, hi);
    }
    let [l, m, h] = out;
    (l ^ (m << 64), h ^ (m >> 64))
}

/// Reduction modulo `x^128 + x^7 + x^2 + x + 1`.
#[inline]
pub fn gf128_reduce(lo: u128, hi: u128) -> u128 {
    let t = hi ^ (hi << 1) ^ (hi << 2) ^ (hi << 7);
    let over = (hi >> 127) ^ (hi >> 126) ^ (hi >> 121);
    let t2 = over ^ (over << 1) ^ (over << 2) ^ (over << 7);
    lo ^ t ^ t2
}

/// Product in `GF(2^128)`.
pub fn gf128_mul(a: u128, b: u128) -> u128 {
    let (l, h) = clmul128(a, b);
    gf128_reduce(l, h)
}

/// One level of [`transpose64`]: swaps the `J`×`J` off-diagonal blocks of every `2J`×`2J`
/// block (`m` selects the low `J` bits of each `2J`-bit group). With `J` a constant the loops
/// unroll and the indices need no bounds checks.
#[inline(always)]
fn transpose_level<const J: usize>(a: &mut [u64; 64], m: u64) {
    let mut base = 0;
    while base < 64 {
        for k in base..base + J {
            let t = ((a[k] >> J) ^ a[k + J]) & m;
            a[k] ^= t << J;
            a[k + J] ^= t;
        }
        base += 2 * J;
    }
}

/// Transposes a 64×64 bit matrix in place (row `r` = word `r`, column `c` = bit `c`).
pub fn transpose64(a: &mut [u64; 64]) {
    transpose_level::<32>(a, 0x0000_0000_FFFF_FFFF);
    transpose_level::<16>(a, 0x0000_FFFF_0000_FFFF);
    transpose_level::<8>(a, 0x00FF_00FF_00FF_00FF);
    transpose_level::<4>(a, 0x0F0F_0F0F_0F0F_0F0F);
    transpose_level::<2>(a, 0x3333_3333_3333_3333);
    transpose_level::<1>(a, 0x5555_5555_5555_5555);
}

/// Bytes of wiped row buffers [`ROW_POOL`] keeps at most: the `t` and `q` rows of a batch of
/// 1,024 triples are 6.3 MB each, and each lane holds a pair per peer.
const ROW_POOL_BYTES: usize = 64 << 20;

/// Wiped row buffers kept for the next extension ([`columns_to_rows`], [`recycle_rows`]).
static ROW_POOL: KeptBuffers<u128> = KeptBuffers::new(usize::MAX, ROW_POOL_BYTES);

/// An empty row buffer with room for `len` rows: the smallest kept one that fits, or a new one.
fn take_rows(len: usize) -> Vec<u128> {
    ROW_POOL
        .take(len)
        .unwrap_or_else(|| Vec::with_capacity(len))
}

/// Wipes `rows` and keeps the buffer for the next [`columns_to_rows`] (up to
/// 64 MiB in all; beyond that it is freed). A large buffer freed goes back to the
/// kernel and the next one is faulted in page by page, which was about 5% of a 2-party loopback
/// triple run's CPU.
pub fn recycle_rows(mut rows: Vec<u128>) {
    rows.zeroize();
    ROW_POOL.keep(rows);
}

/// From 128 columns of `m'` bits (each `words = m'/64` words) to `m'` rows of 128 bits: both
/// 64×64 halves of a block of 64 rows are transposed, then each row written once (no zeroed
/// buffer to fill in two passes; the buffer is a recycled one where [`recycle_rows`] kept one).
// word `w` of 128 columns at once: the index reads better than zipped iterators here
#[allow(clippy::needless_range_loop)]
pub fn columns_to_rows(cols: &[Vec<u64>], words: usize) -> Vec<u128> {
    let mut rows = take_rows(words * 64);
    let mut lo = [0u64; 64];
    let mut hi = [0u64; 64];
    for w in 0..words {
        for c in 0..64 {
            lo[c] = cols[c][w];
            hi[c] = cols[64 + c][w];
        }
        transpose64(&mut lo);
        transpose64(&mut hi);
        rows.extend(
            lo.iter()
                .zip(&hi)
                .map(|(l, h)| *l as u128 | (*h as u128) << 64),
        );
    }
    lo.zeroize();
    hi.zeroize();
    rows
}

fn prg_bits(seed: &Seed, label: &[u8], index: u64, words: usize) -> Vec<u64> {
    let mut x = Xof::new(seed, label, index);
    (0..words).map(|_| x.next_u64()).collect()
}

/// The KOS receiver's first message and state for one extension of `m` OTs with choice bits
/// `x` (packed, `m` bits used); `KOS_EXTRA` random choices are appended for the check.
pub struct KosReceiver {
    /// Choice bits of all `m + KOS_EXTRA` OTs (padded to whole words), packed.
    pub x: Vec<u64>,
    /// Rows `t_j`.
    pub t: Vec<u128>,
    /// Number of real OTs.
    pub m: usize,
}

impl Drop for KosReceiver {
    fn drop(&mut self) {
        self.x.zeroize();
        recycle_rows(std::mem::take(&mut self.t));
    }
}

/// Words of the padded extension for `m` OTs.
pub fn kos_words(m: usize) -> usize {
    (m + KOS_EXTRA).div_ceil(64)
}

impl KosReceiver {
    /// Builds `u` (128 columns) from both base keys of each of the 128 base OTs, for the
    /// extension number `batch`.
    pub fn extend<G: Rng + ?Sized>(
        rng: &mut G,
        keys: &[(Seed, Seed)],
        batch: u64,
        choices: &[u64],
        m: usize,
    ) -> Result<(Self, Vec<Vec<u64>>)> {
        if keys.len() != 128 || choices.len() * 64 < m {
            return Err(Error::Invalid(
                "KOS: 128 base OTs and m choice bits needed".into(),
            ));
        }
        let words = kos_words(m);
        let mut x = vec![0u64; words];
        for (i, w) in x.iter_mut().enumerate() {
            *w = rng.next_u64();
            // real choices in the first m bits
            for b in 0..64 {
                let j = i * 64 + b;
                if j < m {
                    let bit = (choices[j / 64] >> (j % 64)) & 1;
                    *w = (*w & !(1u64 << b)) | (bit << b);
                }
            }
        }
        let mut cols_t = Vec::with_capacity(128);
        let mut us = Vec::with_capacity(128);
        for (k0, k1) in keys {
            let t = prg_bits(k0, b"coterie-spdz/kos", batch, words);
            let g1 = prg_bits(k1, b"coterie-spdz/kos", batch, words);
            let u: Vec<u64> = t
                .iter()
                .zip(&g1)
                .zip(&x)
                .map(|((a, b), c)| a ^ b ^ c)
                .collect();
            cols_t.push(t);
            us.push(u);
        }
        let t = columns_to_rows(&cols_t, words);
        cols_t.iter_mut().for_each(|c| c.zeroize());
        Ok((Self { x, t, m }, us))
    }

    /// The check response `(x̃, t̃)` for the sender's challenge seed.
    pub fn check_response(&self, chi_seed: &Seed) -> (u128, u128) {
        let mut xof = Xof::new(chi_seed, b"coterie-spdz/kos-chi", 0);
        let mut xt = 0u128;
        let (lo, hi) = clmul_rows_chis(&self.t, &mut xof, |j, chi| {
            let bit = (self.x[j / 64] >> (j % 64)) & 1;
            xt ^= chi & 0u128.wrapping_sub(bit as u128);
        });
        (xt, gf128_reduce(lo, hi))
    }

    /// The choice bit of OT `j`.
    pub fn choice(&self, j: usize) -> u64 {
        (self.x[j / 64] >> (j % 64)) & 1
    }
}

/// The KOS sender's rows `q_j = t_j ⊕ x_j·Δ` for extension `batch`, from its base keys
/// `k_i^{Δ_i}` and the receiver's columns `u`.
pub fn kos_sender_rows(
    delta: u128,
    keys: &[Seed],
    batch: u64,
    us: &[Vec<u64>],
    m: usize,
) -> Result<Vec<u128>> {
    let words = kos_words(m);
    if keys.len() != 128 || us.len() != 128 || us.iter().any(|u| u.len() != words) {
        return Err(Error::Codec("KOS: malformed extension message".into()));
    }
    let mut cols = Vec::with_capacity(128);
    for (i, (k, u)) in keys.iter().zip(us).enumerate() {
        let g = prg_bits(k, b"coterie-spdz/kos", batch, words);
        let d = 0u64.wrapping_sub(((delta >> i) & 1) as u64);
        cols.push(
            g.iter()
                .zip(u)
                .map(|(g, u)| g ^ (u & d))
                .collect::<Vec<u64>>(),
        );
    }
    let rows = columns_to_rows(&cols, words);
    cols.iter_mut().for_each(|c| c.zeroize());
    Ok(rows)
}

/// The sender's side of the KOS check: `Σ q_j χ_j == t̃ + x̃·Δ`.
pub fn kos_sender_check(delta: u128, q: &[u128], chi_seed: &Seed, resp: (u128, u128)) -> bool {
    let mut xof = Xof::new(chi_seed, b"coterie-spdz/kos-chi", 0);
    let (lo, hi) = clmul_rows_chis(q, &mut xof, |_, _| {});
    let lhs = gf128_reduce(lo, hi);
    let rhs = resp.1 ^ gf128_mul(resp.0, delta);
    bool::from(subtle::ConstantTimeEq::ct_eq(
        &lhs.to_le_bytes()[..],
        &rhs.to_le_bytes()[..],
    ))
}

fn row_hash_key() -> &'static [u8; 32] {
    static KEY: std::sync::OnceLock<[u8; 32]> = std::sync::OnceLock::new();
    KEY.get_or_init(|| blake3::derive_key("coterie-spdz 2026 kos row hash v1", b""))
}

/// Correlation-robust hash of OT row `j` to two 128-bit pads: keyed BLAKE3 (a fixed public key
/// derived from a domain label, so one compression per call) of `j ‖ row`.
pub fn hash_row(j: u64, row: u128) -> (u128, u128) {
    let mut buf = [0u8; 24];
    buf[..8].copy_from_slice(&j.to_le_bytes());
    buf[8..].copy_from_slice(&row.to_le_bytes());
    let o = blake3::keyed_hash(row_hash_key(), &buf);
    buf.zeroize();
    let b = o.as_bytes();
    let mut x = [0u8; 16];
    x.copy_from_slice(&b[..16]);
    let p0 = u128::from_le_bytes(x);
    x.copy_from_slice(&b[16..]);
    (p0, u128::from_le_bytes(x))
}

fn fixed_aes() -> &'static aes::Aes128 {
    use aes::cipher::KeyInit;
    static AES: std::sync::OnceLock<aes::Aes128> = std::sync::OnceLock::new();
    AES.get_or_init(|| {
        let k = blake3::derive_key("coterie-spdz 2026 tccr fixed aes key v1", b"");
        let mut key = [0u8; 16];
        key.copy_from_slice(&k[..16]);
        aes::Aes128::new(&key.into())
    })
}

/// The tweak of OT `index` of extension `batch` between extension sender `sender` and receiver
/// `receiver` for [`tccr_hash`] (unique per OT of a producer's lifetime).
pub fn ot_tweak(batch: u64, index: usize, sender: usize, receiver: usize) -> u128 {
    ((batch as u128) << 40)
        | index as u128
        | ((sender as u128 & 0xffff) << 96)
        | ((receiver as u128 & 0xffff) << 112)
}

/// Tweakable correlation-robust hash from fixed-key AES (Guo, Katz, Wang, Yu, "Efficient and
/// secure multiparty computation from fixed-key block ciphers", S&P 2020, the TCCR
/// construction): `H(i, x) = π(π(x) ⊕ i) ⊕ π(x)` with `π` = AES-128 under a fixed public key
/// (derived from a domain label), secure in the ideal-permutation model. Hashes `xs[j]` with
/// tweak `tweak(j)` for every `j`.
pub fn tccr_hash(xs: &[u128], tweak: impl Fn(usize) -> u128) -> Vec<u128> {
    let mut out = Vec::with_capacity(xs.len());
    tccr_hash_into(xs, tweak, &mut out);
    out
}

/// [`tccr_hash`] into `out` (cleared first; its allocation is reused, so a caller that hashes
/// a long input piece by piece keeps one small buffer hot instead of a fresh large one).
pub fn tccr_hash_into(xs: &[u128], tweak: impl Fn(usize) -> u128, out: &mut Vec<u128>) {
    use aes::cipher::BlockCipherEncrypt;
    let aes = fixed_aes();
    out.zeroize();
    out.clear();
    out.reserve(xs.len());
    const CH: usize = 256;
    let mut buf: Vec<aes::Block> = Vec::with_capacity(CH);
    let mut pix = [0u128; CH];
    for (c, chunk) in xs.chunks(CH).enumerate() {
        buf.clear();
        buf.extend(chunk.iter().map(|x| aes::Block::from(x.to_le_bytes())));
        aes.encrypt_blocks(&mut buf);
        for (j, b) in buf.iter_mut().enumerate() {
            let mut a = [0u8; 16];
            a.copy_from_slice(b);
            pix[j] = u128::from_le_bytes(a);
            *b = aes::Block::from((pix[j] ^ tweak(c * CH + j)).to_le_bytes());
        }
        aes.encrypt_blocks(&mut buf);
        for (j, b) in buf.iter().enumerate() {
            let mut a = [0u8; 16];
            a.copy_from_slice(b);
            out.push(u128::from_le_bytes(a) ^ pix[j]);
        }
    }
    buf.iter_mut()
        .for_each(|b| b.iter_mut().for_each(|x| *x = 0));
    pix.zeroize();
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    /// The summed carry-less products (PCLMULQDQ where the CPU has it) against a bit-by-bit
    /// reference, for lengths around the χ chunk.
    #[test]
    fn clmul_sums_match_a_bitwise_reference() {
        fn naive(a: u128, b: u128) -> (u128, u128) {
            let (mut lo, mut hi) = (0u128, 0u128);
            for i in 0..128 {
                if (b >> i) & 1 == 1 {
                    lo ^= a << i;
                    if i > 0 {
                        hi ^= a >> (128 - i);
                    }
                }
            }
            (lo, hi)
        }
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let mut r128 = || ((rng.next_u64() as u128) << 64) | rng.next_u64() as u128;
        for len in [0, 1, 7, CHI_CHUNK - 1, CHI_CHUNK, CHI_CHUNK + 3] {
            let a: Vec<u128> = (0..len).map(|_| r128()).collect();
            let b: Vec<u128> = (0..len).map(|_| r128()).collect();
            let want = a.iter().zip(&b).fold((0, 0), |(lo, hi), (x, y)| {
                let (l, h) = naive(*x, *y);
                (lo ^ l, hi ^ h)
            });
            assert_eq!(clmul_sum(&a, &b), want, "len {len}");
            // and through the χ stream: the same χ values as drawn one by one
            let seed = [7u8; 32];
            let mut x1 = Xof::new(&seed, b"t", 0);
            let mut seen = Vec::new();
            let got = clmul_rows_chis(&a, &mut x1, |j, chi| seen.push((j, chi)));
            let mut x2 = Xof::new(&seed, b"t", 0);
            let chis: Vec<u128> = (0..len)
                .map(|_| ((x2.next_u64() as u128) << 64) | x2.next_u64() as u128)
                .collect();
            assert_eq!(seen, chis.iter().copied().enumerate().collect::<Vec<_>>());
            let want = a.iter().zip(&chis).fold((0, 0), |(lo, hi), (x, y)| {
                let (l, h) = naive(*x, *y);
                (lo ^ l, hi ^ h)
            });
            assert_eq!(got, want, "len {len}, χ stream");
        }
    }

    /// Row `j` of the result holds bit `j` of every column: checked bit by bit for three words.
    #[test]
    fn columns_to_rows_matches_naive() {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let words = 3;
        let cols: Vec<Vec<u64>> = (0..128)
            .map(|_| (0..words).map(|_| rng.next_u64()).collect())
            .collect();
        let rows = columns_to_rows(&cols, words);
        assert_eq!(rows.len(), words * 64);
        for (j, row) in rows.iter().enumerate() {
            for (c, col) in cols.iter().enumerate() {
                let want = (col[j / 64] >> (j % 64)) & 1;
                assert_eq!((row >> c) as u64 & 1, want, "row {j} column {c}");
            }
        }
    }

    #[test]
    #[allow(clippy::needless_range_loop)]
    fn transpose_matches_naive() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let mut a = [0u64; 64];
        a.iter_mut().for_each(|w| *w = rng.next_u64());
        let orig = a;
        transpose64(&mut a);
        for r in 0..64 {
            for c in 0..64 {
                assert_eq!((a[c] >> r) & 1, (orig[r] >> c) & 1, "r {r} c {c}");
            }
        }
    }

    #[test]
    fn tccr_hash_is_deterministic_and_tweaked() {
        let xs: Vec<u128> = (0..600u128).map(|i| i * 0x9e37_79b9_7f4a_7c15).collect();
        let h1 = tccr_hash(&xs, |j| ot_tweak(3, j, 0, 1));
        let h2 = tccr_hash(&xs, |j| ot_tweak(3, j, 0, 1));
        let h3 = tccr_hash(&xs, |j| ot_tweak(3, j, 1, 0));
        assert_eq!(h1, h2);
        assert_eq!(h1.len(), 600);
        assert!(h1.iter().zip(&h3).all(|(a, b)| a != b));
        let mut sorted = h1.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 600);
        // single value matches its batch position
        assert_eq!(
            tccr_hash(&xs[300..301], |_| ot_tweak(3, 300, 0, 1))[0],
            h1[300]
        );
    }

    #[test]
    fn gf128_is_a_field_product() {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let r = |g: &mut ChaCha20Rng| ((g.next_u64() as u128) << 64) | g.next_u64() as u128;
        for _ in 0..100 {
            let (a, b, c) = (r(&mut rng), r(&mut rng), r(&mut rng));
            assert_eq!(gf128_mul(a, b), gf128_mul(b, a));
            assert_eq!(gf128_mul(a, b ^ c), gf128_mul(a, b) ^ gf128_mul(a, c));
            assert_eq!(gf128_mul(gf128_mul(a, b), c), gf128_mul(a, gf128_mul(b, c)));
            assert_eq!(gf128_mul(a, 1), a);
        }
        // x^127 · x = x^128 = x^7 + x^2 + x + 1
        assert_eq!(gf128_mul(1u128 << 127, 2), 0x87);
    }

    #[test]
    fn base_ot_gives_the_chosen_key_only() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let s = BaseOtSender::new(&mut rng);
        let choices: Vec<bool> = (0..16).map(|i| i % 3 == 0).collect();
        let (bs, kr) = base_ot_receive(&mut rng, &s.big_a, &choices).unwrap();
        let ks = s.keys(&bs).unwrap();
        for ((c, k), (k0, k1)) in choices.iter().zip(&kr).zip(&ks) {
            assert_ne!(k0, k1);
            assert_eq!(k, if *c { k1 } else { k0 });
        }
        let mut bad = bs[0].to_bytes();
        bad[31] ^= 0xff;
        assert!(s.keys(&[CompressedRistretto(bad)]).is_err());
    }

    /// A random `Δ`, both keys of 128 base OTs, and the keys the extension sender holds (its
    /// choice bits are `Δ`'s): `(Δ, sender keys, receiver key pairs)`.
    pub(crate) fn kos_setup(rng: &mut ChaCha20Rng) -> (u128, Vec<Seed>, Vec<(Seed, Seed)>) {
        let delta = ((rng.next_u64() as u128) << 64) | rng.next_u64() as u128;
        let keys: Vec<(Seed, Seed)> = (0..128)
            .map(|_| {
                let mut a = [0u8; 32];
                let mut b = [0u8; 32];
                rng.fill_bytes(&mut a);
                rng.fill_bytes(&mut b);
                (a, b)
            })
            .collect();
        let sk = keys
            .iter()
            .enumerate()
            .map(|(i, (a, b))| if (delta >> i) & 1 == 1 { *b } else { *a })
            .collect();
        (delta, sk, keys)
    }

    #[test]
    fn kos_correlation_and_check() {
        let mut rng = ChaCha20Rng::seed_from_u64(4);
        let (delta, sk, rk) = kos_setup(&mut rng);
        let m: usize = 1000;
        let choices: Vec<u64> = (0..m.div_ceil(64)).map(|_| rng.next_u64()).collect();
        let (rcv, us) = KosReceiver::extend(&mut rng, &rk, 7, &choices, m).unwrap();
        let q = kos_sender_rows(delta, &sk, 7, &us, m).unwrap();
        for j in 0..m {
            let x = (choices[j / 64] >> (j % 64)) & 1;
            assert_eq!(rcv.choice(j), x);
            assert_eq!(rcv.t[j], q[j] ^ if x == 1 { delta } else { 0 });
        }
        let seed = [9u8; 32];
        assert!(kos_sender_check(
            delta,
            &q,
            &seed,
            rcv.check_response(&seed)
        ));
    }

    /// A receiver that uses different choice bits in different columns is caught.
    #[test]
    fn kos_check_catches_inconsistent_receiver() {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        let (delta, sk, rk) = kos_setup(&mut rng);
        // A flip in column c changes the sender's view only where Δ_c = 1 (where Δ_c = 0 the
        // cheat has no effect: that one-bit guess is the leakage the KOS analysis allows for),
        // so flip in a column with Δ_c = 1.
        let c = delta.trailing_zeros() as usize;
        let m: usize = 500;
        let choices: Vec<u64> = (0..m.div_ceil(64)).map(|_| rng.next_u64()).collect();
        let (rcv, mut us) = KosReceiver::extend(&mut rng, &rk, 1, &choices, m).unwrap();
        us[c][3] ^= 1 << 17; // flip the choice of one OT in column c only
        let q = kos_sender_rows(delta, &sk, 1, &us, m).unwrap();
        let seed = [1u8; 32];
        assert!(!kos_sender_check(
            delta,
            &q,
            &seed,
            rcv.check_response(&seed)
        ));
    }
}
