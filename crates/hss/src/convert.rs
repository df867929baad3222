//! Share conversion (distributed discrete logarithm): `Convert*` of spec §4.4 with the `1 0^d`
//! distinguished-point pattern, separated distinguished points, and a word-at-a-time scan.
//!
//! # Distinguished points
//!
//! `match(e)` holds iff the top `d + 1` bits of the canonical `n`-bit representation of `e` are
//! `1 0^d`. A party walks `P_j = h·g^j`, `j = 0, 1, 2, …` (with `g = 2` each step is a doubling).
//!
//! # The word scan
//!
//! Multiplying by `2^64` is a limb rotation plus one `64×64 → 128`-bit product `T·γ` folded in at
//! the bottom ([`Walker`] keeps the limbs in a ring buffer, so the rotation is an index update).
//! For `j < 64`, the top `d + 1` bits of `h·2^j mod p` are bits `n−1−j … n−1−j−d` of `h` unless a
//! carry from the folded `T_j·γ < 2^(j+|γ|)` runs through every bit between — impossible when `h`
//! has a zero bit in `[|γ|, n − 65 − d]`. The walker checks one such limb per block (a single
//! comparison; it fails with probability `2^-64` on the paper's group) and otherwise steps that
//! block one doubling at a time, so the scan is **exactly** the step-by-step walk (tested).
//!
//! Within a block the 64 candidate positions are tested on the top 128 bits `W` of `h`, by either
//! * [`ScanEngine::Lookup`] — the paper's method (Sec. 6.1): strips of `m = ⌊d/2⌋` bits; a zero
//!   strip `j` with predecessor strip `i` and successor `k` lies in a run of `d` zeros iff
//!   `k ≤ T(i)`, `T(i) = 2^(2m + l(i) − d) − 1`, `l(i)` = number of zeros of `i` adjacent to
//!   strip `j` (`l(0) = m`). For even `d` this is the paper's `T(i) = 2^l(i) − 1`; **erratum**:
//!   the paper prints the test as `k < T(i)`, which misses runs (exhaustively checked in the
//!   tests); the correct test is `k ≤ T(i)`;
//! * [`ScanEngine::BitParallel`] — `⌈log₂ d⌉` shift-and-AND steps on `W` giving all 64 answers.
//!
//! # Convert* (normative form of spec §4.4)
//!
//! Both parties use the same payload bound `M`, pattern length `d`, and shift `S` (Variant A:
//! `S = M`; Variant B: `S = 3M`). Variant A: `dist(j) = match(P_j)`. Variant B:
//! `dist(j) = match(P_j)` and no match in `[j − 2M, j − 1]` (the separation rule; evaluated for
//! `j ≥ 2M`). `i* = min{ j ≥ S : dist(j) }`, output `−(i* − S)`; party 0 flags iff some
//! `j ∈ [S − M, S − 1]` is distinguished, party 1 flags iff `i* − S < M`. Then a wrong output
//! implies **both** parties flag (spec §4.4, the soundness rule of Definition 2.1), tested.
//! The paper's Sec. 4.3.1 says the danger zone is "M points forward for the first party, and M
//! points backward for the second"; with the difference convention `h_0 = h_1·g^z` party 0 looks
//! backward and party 1 forward (Sec. 3.2), as implemented. Variant A is sound and "both flag iff
//! failure" whenever `d + 1 ≥ 2M`; Variant B is used otherwise ([`ConvertParams::new`]).
//!
//! The walk is capped at `2^(d+7)` steps (an `e^-64` event on a random stream); a party that hits
//! the cap flags and outputs 0.

use serde::{Deserialize, Serialize};

use crate::group::{Elem, Group, add_small};

use crate::{Error, Result};

/// How the 64 positions of a block are tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ScanEngine {
    /// The paper's strip scan with the partial-match lookup table (`d ≤ 42`).
    Lookup,
    /// Shift-and-AND on the 128-bit window (`d ≤ 63`).
    BitParallel,
    /// One doubling and one test per step (the reference).
    Naive,
}

/// Parameters of one conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConvertParams {
    /// Pattern length: distinguished = top bits `1 0^d`.
    pub d: u32,
    /// Payload bound `M` (`z ∈ [0, M]`).
    pub m: u64,
    /// Whether the separation rule (Variant B) is used.
    pub separated: bool,
}

impl ConvertParams {
    /// Variant A when `d + 1 ≥ 2M` (the plain `1 0^d` pattern already separates points by
    /// `d + 1`), Variant B otherwise.
    pub fn new(d: u32, m: u64) -> Self {
        Self {
            d,
            m,
            separated: (d as u64) + 1 < 2 * m,
        }
    }
    /// The shift `S` (`M` for Variant A, `3M` for Variant B).
    pub fn shift(&self) -> u64 {
        if self.separated { 3 * self.m } else { self.m }
    }
    /// The step cap `2^(d+7)` (beyond `S`).
    pub fn cap(&self) -> u64 {
        1u64 << (self.d + 7).min(62)
    }
}

/// Result of one party's conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Converted {
    /// The additive share `−(i* − S)` (difference convention: `out_0 − out_1 = z`).
    pub share: i64,
    /// Whether this party raised a (possible-)failure flag.
    pub flag: bool,
    /// Walk length `i*` in steps (for accounting).
    pub steps: u64,
}

/// The partial-match lookup table `T(i)` of the strip scan for pattern length `d`.
#[derive(Debug, Clone)]
pub struct LookupTable {
    d: u32,
    m: u32,
    /// `T(i) + 1` (0 = no `k` qualifies), indexed by strip value `i`.
    t_plus_1: Vec<u32>,
}

impl LookupTable {
    /// The table for `2 ≤ d ≤ 42` (`2^⌊d/2⌋` entries).
    pub fn new(d: u32) -> Result<Self> {
        if !(2..=42).contains(&d) {
            return Err(Error::InvalidParameter(
                "lookup scan needs 2 ≤ d ≤ 42".into(),
            ));
        }
        let m = d / 2;
        let t_plus_1 = (0..1u32 << m)
            .map(|i| {
                let l = if i == 0 { m } else { i.trailing_zeros().min(m) };
                let e = 2 * m + l;
                if e < d { 0 } else { 1u32 << (e - d) }
            })
            .collect();
        Ok(Self { d, m, t_plus_1 })
    }

    /// `T(i)` as a signed value (`−1` = no successor strip qualifies).
    pub fn t(&self, i: u32) -> i64 {
        self.t_plus_1[i as usize] as i64 - 1
    }

    /// Pattern length `d`.
    pub fn d(&self) -> u32 {
        self.d
    }

    /// Strip size `m = ⌊d/2⌋`.
    pub fn strip(&self) -> u32 {
        self.m
    }

    /// Bit mask of the positions `j ∈ [0, 64)` (bit `63 − j`) where the top 128-bit window `w`
    /// read from its top shows `1 0^d` starting at `j`, found with the strip/lookup scan.
    #[inline]
    pub fn block_mask(&self, w: u128) -> u64 {
        let m = self.m as usize;
        // Strip t covers window bits (from the top) [t·m, (t+1)·m); candidates need
        // t·m ≤ 64 + m and a successor strip inside the window.
        let last = ((64 + m) / m).min(128 / m - 2);
        let mut strips = [0u32; 130];
        let mut cur = w;
        let sh = 128 - m;
        for st in strips.iter_mut().take(last + 2) {
            *st = (cur >> sh) as u32;
            cur <<= m;
        }
        // Fast path: no zero strip among the candidates.
        if strips[1..=last].iter().all(|&x| x != 0) {
            return 0;
        }
        let mut out = 0u64;
        // Leading zero strips belong to a run that started in the previous block.
        let mut t = 0usize;
        while t < last + 1 && strips[t] == 0 {
            t += 1;
        }
        let mut t = t + 1;
        while t <= last {
            if strips[t] != 0 {
                t += 1;
                continue;
            }
            let i = strips[t - 1];
            let k = strips[t + 1];
            if k < self.t_plus_1[i as usize] {
                let l = if i == 0 {
                    m
                } else {
                    i.trailing_zeros() as usize
                };
                let start = t * m - l; // first zero of the run, from the top
                if (1..=64).contains(&start) {
                    out |= 1u64 << (64 - start);
                }
                // Skip the rest of this run of zero strips.
                t += 1;
                while t <= last + 1 && strips[t] == 0 {
                    t += 1;
                }
                continue;
            }
            t += 1;
        }
        out
    }
}

/// [`block_mask_bitparallel`] behind a zero-byte filter: for `d ≥ 15` every run of `d` zeros
/// contains a whole aligned byte, so a window without a zero byte (about 94% of them) has no
/// match and is rejected with a few SWAR operations.
#[inline(always)]
pub fn block_mask_fast(w: u128, d: u32) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    if d >= 15 {
        let (hi, lo) = ((w >> 64) as u64, w as u64);
        let zb = (hi.wrapping_sub(ONES) & !hi) | (lo.wrapping_sub(ONES) & !lo);
        if zb & HIGHS == 0 {
            return 0;
        }
    }
    block_mask_bitparallel(w, d)
}

/// All positions `j ∈ [0, 64)` (bit `63 − j`) of pattern `1 0^d` in the window, bit-parallel.
#[inline(always)]
pub fn block_mask_bitparallel(w: u128, d: u32) -> u64 {
    let z = !w;
    // run(k) bit t: z bits t, t-1, ..., t-k+1 all set.
    let mut run = z;
    let mut have = 1u32;
    while have < d {
        let add = have.min(d - have);
        // run(have + add) = run(have) & (run(add) << have); run(add) = run(have) restricted,
        // obtained by doubling from the current run when add == have; otherwise recompute.
        let r_add = if add == have { run } else { run_len(z, add) };
        run &= r_add << have;
        have += add;
    }
    let mtch = w & (run << 1);
    (mtch >> 64) as u64
}

#[inline]
fn run_len(z: u128, k: u32) -> u128 {
    let mut r = z;
    for s in 1..k {
        r &= z << s;
    }
    r
}

/// Naive: `match(e)` on the canonical value.
#[inline]
pub fn is_match(group: &Group, e: &[u64], d: u32) -> bool {
    let n = group.bits();
    let top = top_bits(e, n, d + 1);
    top == 1u64 << d
}

/// Top `k ≤ 64` bits of an `n`-bit limb string.
#[inline]
fn top_bits(e: &[u64], n: u32, k: u32) -> u64 {
    let l = e.len();
    debug_assert_eq!(n as usize, l * 64);
    let hi = e[l - 1] as u128;
    let lo = if l >= 2 { e[l - 2] as u128 } else { 0 };
    let w = (hi << 64) | lo;
    (w >> (128 - k)) as u64
}

/// Blocks between two re-centerings of the sliding buffer.
const SLIDE: usize = 256;

/// A walk `h, 2h, 4h, …` producing the match positions in increasing order.
///
/// The element lives in a sliding window `buf[start .. start + L]` of a longer buffer: the
/// multiplication by `2^64` moves the window down by one limb (the old top limb `T` leaves, a
/// zero limb enters at the bottom, `T·γ` is added there), and the window is copied back to the
/// top once every ~230 blocks.
#[derive(Debug, Clone)]
pub struct Walker<'g> {
    group: &'g Group,
    d: u32,
    engine: ScanEngine,
    lookup: Option<LookupTable>,
    buf: Vec<u64>,
    start: usize,
    /// Steps covered by blocks already scanned.
    pos: u64,
    /// Pending matches of the current block (bit `63 − j`).
    pending: u64,
    pending_base: u64,
    guard: Option<(usize, u64)>,
    /// Blocks that had to be stepped one doubling at a time.
    pub slow_blocks: u64,
}

impl<'g> Walker<'g> {
    /// A walk from `h` for pattern length `d` (`1 ≤ d ≤ 63`).
    pub fn new(group: &'g Group, h: &Elem, d: u32, engine: ScanEngine) -> Result<Self> {
        if !(1..=63).contains(&d) || group.bits() < 128 {
            return Err(Error::InvalidParameter(
                "conversion needs 1 ≤ d ≤ 63".into(),
            ));
        }
        let engine = match engine {
            ScanEngine::Lookup if !(2..=42).contains(&d) => ScanEngine::BitParallel,
            e => e,
        };
        let lookup = match engine {
            ScanEngine::Lookup => Some(LookupTable::new(d)?),
            _ => None,
        };
        let l = group.limbs();
        let mut buf = vec![0u64; SLIDE + l];
        buf[SLIDE..].copy_from_slice(h.limbs());
        Ok(Self {
            group,
            d,
            engine,
            lookup,
            buf,
            start: SLIDE,
            pos: 0,
            pending: 0,
            pending_base: 0,
            guard: guard_for(group, d),
            slow_blocks: 0,
        })
    }

    /// Canonical limbs of the current element `h·2^pos` (for tests).
    pub fn current(&self) -> Vec<u64> {
        self.buf[self.start..self.start + self.group.limbs()].to_vec()
    }

    /// Number of steps consumed so far (a multiple of 64).
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// The next match position, or `None` once `limit` steps have been scanned.
    #[inline]
    pub fn next_match(&mut self, limit: u64) -> Option<u64> {
        loop {
            if self.pending != 0 {
                let j = self.pending.leading_zeros() as u64;
                self.pending &= !(1u64 << (63 - j));
                return Some(self.pending_base + j);
            }
            if self.pos >= limit {
                return None;
            }
            match self.engine {
                ScanEngine::Lookup => {
                    if let Some(t) = self.lookup.take() {
                        self.scan_until(limit, |w| t.block_mask(w));
                        self.lookup = Some(t);
                    }
                }
                ScanEngine::BitParallel => {
                    // Compile-time pattern lengths: the shift-and chain unrolls with constant
                    // shifts (about 1.3x faster than the generic loop).
                    match self.d {
                        2 => self.scan_until(limit, |w| block_mask_fast(w, 2)),
                        3 => self.scan_until(limit, |w| block_mask_fast(w, 3)),
                        4 => self.scan_until(limit, |w| block_mask_fast(w, 4)),
                        5 => self.scan_until(limit, |w| block_mask_fast(w, 5)),
                        6 => self.scan_until(limit, |w| block_mask_fast(w, 6)),
                        7 => self.scan_until(limit, |w| block_mask_fast(w, 7)),
                        8 => self.scan_until(limit, |w| block_mask_fast(w, 8)),
                        9 => self.scan_until(limit, |w| block_mask_fast(w, 9)),
                        10 => self.scan_until(limit, |w| block_mask_fast(w, 10)),
                        11 => self.scan_until(limit, |w| block_mask_fast(w, 11)),
                        12 => self.scan_until(limit, |w| block_mask_fast(w, 12)),
                        13 => self.scan_until(limit, |w| block_mask_fast(w, 13)),
                        14 => self.scan_until(limit, |w| block_mask_fast(w, 14)),
                        15 => self.scan_until(limit, |w| block_mask_fast(w, 15)),
                        16 => self.scan_until(limit, |w| block_mask_fast(w, 16)),
                        17 => self.scan_until(limit, |w| block_mask_fast(w, 17)),
                        18 => self.scan_until(limit, |w| block_mask_fast(w, 18)),
                        19 => self.scan_until(limit, |w| block_mask_fast(w, 19)),
                        20 => self.scan_until(limit, |w| block_mask_fast(w, 20)),
                        21 => self.scan_until(limit, |w| block_mask_fast(w, 21)),
                        22 => self.scan_until(limit, |w| block_mask_fast(w, 22)),
                        23 => self.scan_until(limit, |w| block_mask_fast(w, 23)),
                        24 => self.scan_until(limit, |w| block_mask_fast(w, 24)),
                        25 => self.scan_until(limit, |w| block_mask_fast(w, 25)),
                        26 => self.scan_until(limit, |w| block_mask_fast(w, 26)),
                        27 => self.scan_until(limit, |w| block_mask_fast(w, 27)),
                        28 => self.scan_until(limit, |w| block_mask_fast(w, 28)),
                        29 => self.scan_until(limit, |w| block_mask_fast(w, 29)),
                        30 => self.scan_until(limit, |w| block_mask_fast(w, 30)),
                        31 => self.scan_until(limit, |w| block_mask_fast(w, 31)),
                        32 => self.scan_until(limit, |w| block_mask_fast(w, 32)),
                        33 => self.scan_until(limit, |w| block_mask_fast(w, 33)),
                        34 => self.scan_until(limit, |w| block_mask_fast(w, 34)),
                        35 => self.scan_until(limit, |w| block_mask_fast(w, 35)),
                        36 => self.scan_until(limit, |w| block_mask_fast(w, 36)),
                        37 => self.scan_until(limit, |w| block_mask_fast(w, 37)),
                        38 => self.scan_until(limit, |w| block_mask_fast(w, 38)),
                        39 => self.scan_until(limit, |w| block_mask_fast(w, 39)),
                        40 => self.scan_until(limit, |w| block_mask_fast(w, 40)),
                        d => self.scan_until(limit, |w| block_mask_bitparallel(w, d)),
                    }
                }
                ScanEngine::Naive => self.scan_block_slow(false),
            }
        }
    }

    /// Scans whole blocks until one has a match or `limit` is reached.
    #[inline(always)]
    fn scan_until<F: Fn(u128) -> u64>(&mut self, limit: u64, mask_of: F) {
        let l = self.group.limbs();
        let gamma = self.group.gamma() as u128;
        let (gli, gmask) = self.guard.unwrap_or((0, 0));
        let has_guard = self.guard.is_some();
        while self.pos < limit {
            let st = self.start;
            if !has_guard || self.buf[st + gli] & gmask == gmask {
                self.scan_block_slow(true);
                if self.pending != 0 {
                    return;
                }
                continue;
            }
            let hi = self.buf[st + l - 1];
            let w = ((hi as u128) << 64) | self.buf[st + l - 2] as u128;
            let mask = mask_of(w);
            // h ← h·2^64 mod p
            let prod = (hi as u128) * gamma;
            let ns = st - 1;
            self.buf[ns] = prod as u64;
            let (s1, c1) = self.buf[st].overflowing_add((prod >> 64) as u64);
            self.buf[st] = s1;
            self.start = ns;
            if c1 {
                self.propagate_carry(2);
            }
            if self.buf[ns + l - 1] == u64::MAX {
                let (a, b) = (ns, ns + l);
                self.group.canonicalize(&mut self.buf[a..b]);
            }
            if ns == 0 {
                self.buf.copy_within(0..l, SLIDE);
                self.start = SLIDE;
            }
            self.pending_base = self.pos;
            self.pos += 64;
            if mask != 0 {
                self.pending = mask;
                return;
            }
        }
    }

    /// Adds a carry into limb `from` of the window and onward; folds a carry out of the top.
    #[cold]
    fn propagate_carry(&mut self, from: usize) {
        let l = self.group.limbs();
        let st = self.start;
        let mut i = from;
        let mut carry = true;
        while carry && i < l {
            let (s, c) = self.buf[st + i].overflowing_add(1);
            self.buf[st + i] = s;
            carry = c;
            i += 1;
        }
        if carry {
            // 2^n ≡ γ (mod p)
            let g = self.group.gamma();
            let win = &mut self.buf[st..st + l];
            let mut c = add_small(win, g);
            while c {
                c = add_small(win, g);
            }
        }
    }

    /// One block stepped one doubling at a time (exact reference; also the fallback when the
    /// guard limb is all ones).
    #[cold]
    fn scan_block_slow(&mut self, counted: bool) {
        let l = self.group.limbs();
        let mut cur = self.current();
        let mut mask = 0u64;
        for j in 0..64 {
            if is_match(self.group, &cur, self.d) {
                mask |= 1u64 << (63 - j);
            }
            self.group.double_in_place(&mut cur);
        }
        self.slow_blocks += u64::from(counted);
        self.pending = mask;
        self.pending_base = self.pos;
        self.pos += 64;
        self.buf[SLIDE..SLIDE + l].copy_from_slice(&cur);
        self.start = SLIDE;
    }
}

/// The limb and mask whose non-all-ones value guarantees the stream view is exact for a block:
/// a zero bit of `h` in `[|γ|, n − 65 − d]`.
fn guard_for(group: &Group, d: u32) -> Option<(usize, u64)> {
    let gb = 64 - group.gamma().leading_zeros();
    let n = group.bits();
    let hi = (n as i64) - 65 - d as i64;
    if hi < gb as i64 {
        return None;
    }
    let (lo, hi) = (gb as u64, hi as u64);
    let mut best: Option<(usize, u64)> = None;
    for li in 0..group.limbs() {
        let a = (li as u64) * 64;
        let b = a + 63;
        let s = lo.max(a);
        let e = hi.min(b);
        if s > e {
            continue;
        }
        let width = e - s + 1;
        let mask = if width == 64 {
            u64::MAX
        } else {
            ((1u64 << width) - 1) << (s - a)
        };
        if best.is_none_or(|(_, m)| mask.count_ones() > m.count_ones()) {
            best = Some((li, mask));
        }
    }
    best
}

/// `Convert*` for party `b` (spec §4.4) on `h` with the given parameters and scan engine.
pub fn convert(
    group: &Group,
    b: u8,
    h: &Elem,
    params: &ConvertParams,
    engine: ScanEngine,
) -> Result<Converted> {
    convert_inner(group, b, h, params, engine, None)
}

/// `Convert*` for a **terminal** multiplication whose output is used mod `beta` (spec §4.8):
/// a flagged party computes the distance between its own distinguished point and the
/// alternative one the other party would have used in case of a failure (party 1: the next
/// distinguished point after its stop; party 0: its stop minus the point in its danger zone)
/// and drops its flag when that distance is a multiple of `beta`, since the output is then
/// correct mod `beta` either way. Distinguished points are at least `2M` apart (Variant A needs
/// `d + 1 ≥ 2M`, Variant B enforces it), so the alternative point is unique.
pub fn convert_terminal(
    group: &Group,
    b: u8,
    h: &Elem,
    params: &ConvertParams,
    engine: ScanEngine,
    beta: u64,
) -> Result<Converted> {
    if beta == 0 {
        return Err(Error::InvalidParameter("beta must be positive".into()));
    }
    convert_inner(group, b, h, params, engine, Some(beta))
}

fn convert_inner(
    group: &Group,
    b: u8,
    h: &Elem,
    params: &ConvertParams,
    engine: ScanEngine,
    beta: Option<u64>,
) -> Result<Converted> {
    let mut w = Walker::new(group, h, params.d, engine)?;
    let s = params.shift();
    let m = params.m;
    let limit = s + params.cap();
    let mut prev: Option<u64> = None;
    let mut danger: Option<u64> = None;
    let mut found: Option<u64> = None;
    while let Some(j) = w.next_match(limit + 64) {
        if j >= limit {
            break;
        }
        let dist = if params.separated {
            j >= 2 * m && prev.is_none_or(|p| p + 2 * m < j)
        } else {
            true
        };
        prev = Some(j);
        if !dist {
            continue;
        }
        if let Some(stop) = found {
            // Only reached for party 1 looking for the alternative point.
            let flag = beta.is_none_or(|bt| (j - stop) % bt != 0);
            return Ok(Converted {
                share: -((stop - s) as i64),
                flag,
                steps: stop,
            });
        }
        if j < s {
            if j + m >= s {
                danger = Some(j);
            }
            continue;
        }
        let i = j - s;
        let flag = if b == 0 { danger.is_some() } else { i < m };
        match (beta, flag, b) {
            (Some(bt), true, 0) => {
                let alt = danger.map_or(0, |a| j - a);
                return Ok(Converted {
                    share: -(i as i64),
                    flag: !alt.is_multiple_of(bt),
                    steps: j,
                });
            }
            (Some(_), true, _) => {
                found = Some(j);
                continue;
            }
            _ => {
                return Ok(Converted {
                    share: -(i as i64),
                    flag,
                    steps: j,
                });
            }
        }
    }
    if let Some(stop) = found {
        return Ok(Converted {
            share: -((stop - s) as i64),
            flag: true,
            steps: stop,
        });
    }
    Ok(Converted {
        share: 0,
        flag: true,
        steps: limit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use coterie_math::bigint::{self, BigInt};
    use rand::{RngExt, SeedableRng};

    /// First match position from `h` by naive doubling.
    fn naive_matches(group: &Group, h: &Elem, d: u32, steps: u64) -> Vec<u64> {
        let mut x = h.0.clone();
        let mut out = vec![];
        for j in 0..steps {
            if is_match(group, &x, d) {
                out.push(j);
            }
            group.double_in_place(&mut x);
        }
        out
    }

    #[test]
    fn lookup_condition_le_is_exact_and_lt_is_not() {
        for d in [8u32, 10, 12, 16, 20] {
            let t = LookupTable::new(d).unwrap();
            let m = d / 2;
            let mut lt_misses = 0;
            for i in 0..1u32 << m {
                for k in 0..1u32 << m {
                    // brute force: zeros of i adjacent to j (its low bits) + m + leading zeros of k
                    let l = if i == 0 { m } else { i.trailing_zeros() };
                    let lz = if k == 0 {
                        m
                    } else {
                        k.leading_zeros() - (32 - m)
                    };
                    let run = l + m + lz >= d;
                    assert_eq!(run, (k as i64) <= t.t(i), "d={d} i={i} k={k}");
                    if run && (k as i64) >= t.t(i) {
                        lt_misses += 1;
                    }
                    if d % 2 == 0 {
                        assert_eq!(t.t(i), (1i64 << l) - 1);
                    }
                }
            }
            assert!(lt_misses > 0, "k < T(i) must miss runs");
        }
    }

    #[test]
    fn block_masks_agree() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3);
        for d in [2u32, 3, 5, 8, 9, 10, 11, 12, 14, 15, 16, 17, 20, 21, 30] {
            let t = LookupTable::new(d).unwrap();
            for _ in 0..20_000 {
                // sparse windows so that long zero runs occur
                let mut w: u128 = rng.random::<u128>() & rng.random::<u128>();
                if rng.random::<bool>() {
                    w &= rng.random::<u128>();
                }
                let mut naive = 0u64;
                for j in 0..64u32 {
                    let top = (w << j) >> (127 - d);
                    if top == 1u128 << d {
                        naive |= 1 << (63 - j);
                    }
                }
                assert_eq!(block_mask_bitparallel(w, d), naive, "d={d} w={w:x}");
                assert_eq!(block_mask_fast(w, d), naive, "fast d={d} w={w:x}");
                assert_eq!(t.block_mask(w), naive, "lookup d={d} w={w:x}");
            }
        }
    }

    #[test]
    fn word_scan_equals_step_by_step() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(4);
        for (id, starts) in [
            (crate::group::GroupId::InsecureToy128, 300),
            (crate::group::GroupId::P1536, 100),
        ] {
            let g = Group::new(id);
            for d in [8u32, 10, 12, 16, 20] {
                for _ in 0..starts / 10 {
                    let h = g
                        .elem_from_bigint(&bigint::random_below(&mut rng, g.p()).unwrap())
                        .unwrap();
                    let steps = 4096;
                    let want = naive_matches(&g, &h, d, steps);
                    for engine in [
                        ScanEngine::Lookup,
                        ScanEngine::BitParallel,
                        ScanEngine::Naive,
                    ] {
                        let mut w = Walker::new(&g, &h, d, engine).unwrap();
                        let mut got = vec![];
                        while let Some(j) = w.next_match(steps) {
                            got.push(j);
                        }
                        assert_eq!(got, want, "{id:?} d={d} {engine:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn convert_star_shares_and_flags() {
        let g = Group::insecure_toy128();
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(5);
        for (d, m) in [(8u32, 1u64), (6, 15), (9, 3)] {
            let p = ConvertParams::new(d, m);
            assert_eq!(p.separated, d as u64 + 1 < 2 * m);
            for _ in 0..20_000 {
                let z = rng.random_range(0..=m);
                let h1 = g
                    .elem_from_bigint(&bigint::random_below(&mut rng, g.p()).unwrap())
                    .unwrap();
                let h0 = g.mul(&h1, &g.pow(&g.g(), &z.into()));
                let c0 = convert(&g, 0, &h0, &p, ScanEngine::Lookup).unwrap();
                let c1 = convert(&g, 1, &h1, &p, ScanEngine::Lookup).unwrap();
                let wrong = c0.share - c1.share != z as i64;
                if wrong {
                    assert!(c0.flag && c1.flag, "undetected failure d={d} m={m} z={z}");
                }
                // Variant B always, Variant A when d + 1 >= 2M: both flag iff failure.
                assert_eq!(c0.flag && c1.flag, wrong, "d={d} m={m} z={z}");
                if z == 0 {
                    assert_eq!(c0.share, c1.share);
                }
            }
        }
    }

    #[test]
    fn terminal_mod_2_drops_about_half_the_flags_and_stays_sound() {
        let g = Group::insecure_toy128();
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(6);
        let p = ConvertParams::new(6, 1);
        let (mut flags_plain, mut flags_mod2) = (0u32, 0u32);
        for _ in 0..20_000 {
            let z = rng.random_range(0..=1u64);
            let h1 = g
                .elem_from_bigint(&bigint::random_below(&mut rng, g.p()).unwrap())
                .unwrap();
            let h0 = g.mul(&h1, &g.pow(&g.g(), &z.into()));
            let a0 = convert(&g, 0, &h0, &p, ScanEngine::BitParallel).unwrap();
            let a1 = convert(&g, 1, &h1, &p, ScanEngine::BitParallel).unwrap();
            let t0 = convert_terminal(&g, 0, &h0, &p, ScanEngine::BitParallel, 2).unwrap();
            let t1 = convert_terminal(&g, 1, &h1, &p, ScanEngine::BitParallel, 2).unwrap();
            assert_eq!((a0.share, a1.share), (t0.share, t1.share));
            flags_plain += u32::from(a0.flag) + u32::from(a1.flag);
            flags_mod2 += u32::from(t0.flag) + u32::from(t1.flag);
            if (t0.share - t1.share - z as i64).rem_euclid(2) != 0 {
                assert!(t0.flag && t1.flag, "undetected mod-2 failure");
            }
        }
        assert!(flags_plain > 200);
        let ratio = flags_mod2 as f64 / flags_plain as f64;
        assert!((0.35..0.65).contains(&ratio), "ratio {ratio}");
    }

    #[test]
    fn guard_fallback_is_exact() {
        // Elements whose guard limb is all ones force the one-doubling-at-a-time path.
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(8);
        for id in [
            crate::group::GroupId::P1536,
            crate::group::GroupId::InsecureToy128,
        ] {
            let g = Group::new(id);
            let d = 8;
            let (li, mask) = guard_for(&g, d).unwrap();
            for _ in 0..20 {
                let mut h = g
                    .elem_from_bigint(&bigint::random_below(&mut rng, g.p()).unwrap())
                    .unwrap();
                h.0[li] |= mask;
                let want = naive_matches(&g, &h, d, 2048);
                let mut w = Walker::new(&g, &h, d, ScanEngine::BitParallel).unwrap();
                let mut got = vec![];
                while let Some(j) = w.next_match(2048) {
                    got.push(j);
                }
                assert_eq!(got, want);
                assert!(w.slow_blocks >= 1);
            }
        }
    }

    #[test]
    fn fold_by_2_64_matches_shift_mod_p() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(9);
        for id in [
            crate::group::GroupId::P1536,
            crate::group::GroupId::InsecureToy128,
        ] {
            let g = Group::new(id);
            let mut cases: Vec<BigInt> = (0..10_000)
                .map(|_| bigint::random_below(&mut rng, g.p()).unwrap())
                .collect();
            for k in 1..200u32 {
                cases.push(BigInt::from(g.p() - k)); // near p: top limbs all ones
            }
            for x in &cases {
                let h = g.elem_from_bigint(x).unwrap();
                let mut w = Walker::new(&g, &h, 20, ScanEngine::BitParallel).unwrap();
                while w.next_match(64).is_some() {}
                assert_eq!(w.position(), 64);
                let want = BigInt::from(x << 64u32) % g.p();
                assert_eq!(bigint::from_le_limbs(&w.current()), want);
            }
        }
    }

    /// Full `Convert*` with the word scan equals the step-by-step conversion from random starts.
    fn scan_vs_naive_conversions(id: crate::group::GroupId, starts: u32, d: u32, seed: u64) {
        let g = Group::new(id);
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
        let p = ConvertParams::new(d, 3);
        for i in 0..starts {
            let h = g
                .elem_from_bigint(&bigint::random_below(&mut rng, g.p()).unwrap())
                .unwrap();
            let b = (i & 1) as u8;
            let want = convert(&g, b, &h, &p, ScanEngine::Naive).unwrap();
            for e in [ScanEngine::BitParallel, ScanEngine::Lookup] {
                assert_eq!(convert(&g, b, &h, &p, e).unwrap(), want, "{id:?} start {i}");
            }
        }
    }

    /// 2^20 random starts in all (2^19 per group), d = 6: about 5 s.
    #[test]
    fn word_scan_conversion_equals_naive_2_20_starts() {
        scan_vs_naive_conversions(crate::group::GroupId::InsecureToy128, 1 << 19, 6, 12);
        scan_vs_naive_conversions(crate::group::GroupId::P1536, 1 << 19, 6, 13);
    }
}
