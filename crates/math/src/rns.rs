//! Residue number system (RNS) bases and the conversions BFV-style schemes need.
//!
//! * [`RnsBasis`]: a set of pairwise coprime word moduli `q_0 … q_{L-1}` with `Q = ∏ q_i`;
//!   decomposition of big integers into residues and CRT reconstruction back.
//! * [`BaseConverter`]: fast base conversion from a basis `Q` to a basis `P` (Halevi–Polyakov–Shoup).
//!   [`BaseConverter::convert_approx`] returns `x + u·Q` for a small `0 ≤ u < L` (the textbook
//!   "fast base conversion"); [`BaseConverter::convert_exact`] removes `u` with a floating-point
//!   estimate of `Σ y_i/q_i`, and falls back to exact big-integer CRT for the rare coefficient whose
//!   estimate is too close to a rounding boundary, so it is *always* exact (HPS's floating-point
//!   variant alone fails with probability about `L·2^-53` per coefficient).
//! * [`ScaleRounder`]: exact `round(t·x/Q)` for `x` given in the extended basis `Q ∪ P`, returned
//!   in basis `Q` — the rescaling step of BFV multiplication. It is computed as
//!   `(t·x + ⌊Q/2⌋ − r)/Q` with `r = [t·x + ⌊Q/2⌋]_Q`, using two exact base conversions; every step
//!   is an exact integer identity, so the result is the exact rounding (no HPS approximation).
//! * [`drop_last_rounded`]: modulus switching `x → round(x / q_{L-1})` from `Q` to `Q/q_{L-1}`.
//!
//! Layout convention: an RNS vector of `n` coefficients is stored limb-major, `data[i*n + c]` is
//! coefficient `c` modulo `q_i`.

use crate::bigint::BigInt;
use crate::modulus::Modulus;
use crate::{Error, Result};

/// Distance from a rounding boundary below which the floating-point correction of
/// [`BaseConverter::convert_exact`] is not trusted and exact CRT is used instead. The floating-point
/// error of `Σ y_i/q_i` is below `4·L·2^-53`, far below this for any `L ≤ 2^10`.
/// Coefficients per block of the vector path of [`BaseConverter::convert_exact`]: its `L` rows
/// of `y` and the output block stay in L1/L2 across the `L·L'` kernel calls (1.16–1.18x over
/// whole rows at `n = 2^13`, 5 ↔ 6 primes of 44 bits, and `n = 2^14`, 9 → 10 of 50 bits).
const VECTOR_BLOCK: usize = 256;

const FLOAT_GUARD: f64 = 1.0 / (1u64 << 40) as f64;

/// A basis of pairwise coprime word moduli.
#[derive(Clone, Debug)]
pub struct RnsBasis {
    moduli: Vec<Modulus>,
    product: BigInt,
    half_product: BigInt,
    /// `Q / q_i`.
    q_hat: Vec<BigInt>,
    /// `(Q / q_i)^{-1} mod q_i` and its Shoup constant.
    q_hat_inv: Vec<(u64, u64)>,
}

impl RnsBasis {
    /// Builds the basis; the moduli must be pairwise coprime (distinct primes, typically).
    pub fn new(moduli: &[u64]) -> Result<Self> {
        if moduli.is_empty() {
            return Err(Error::InvalidParameter("empty RNS basis".into()));
        }
        let moduli: Vec<Modulus> = moduli
            .iter()
            .map(|&q| Modulus::new(q))
            .collect::<Result<_>>()?;
        let mut product = BigInt::from(1u32);
        for (i, a) in moduli.iter().enumerate() {
            for b in &moduli[..i] {
                if gcd(a.value(), b.value()) != 1 {
                    return Err(Error::InvalidParameter(format!(
                        "RNS moduli {} and {} are not coprime",
                        a.value(),
                        b.value()
                    )));
                }
            }
            product *= a.value();
        }
        let mut q_hat = Vec::with_capacity(moduli.len());
        let mut q_hat_inv = Vec::with_capacity(moduli.len());
        for m in &moduli {
            let h = BigInt::from(&product / m.value());
            let h_mod = bigint_mod_u64(&h, m.value());
            let inv = m.inv(h_mod)?;
            q_hat_inv.push((inv, m.shoup(inv)));
            q_hat.push(h);
        }
        let half_product = BigInt::from(&product >> 1u32);
        Ok(RnsBasis {
            moduli,
            product,
            half_product,
            q_hat,
            q_hat_inv,
        })
    }

    /// Number of moduli `L`.
    pub fn len(&self) -> usize {
        self.moduli.len()
    }

    /// Always false (a basis has at least one modulus); for API symmetry with `len`.
    pub fn is_empty(&self) -> bool {
        self.moduli.is_empty()
    }

    /// The moduli.
    pub fn moduli(&self) -> &[Modulus] {
        &self.moduli
    }

    /// The product `Q`.
    pub fn product(&self) -> &BigInt {
        &self.product
    }

    /// Total bit size of `Q`.
    pub fn bits(&self) -> u32 {
        self.product.significant_bits()
    }

    /// Residues of a (possibly negative) big integer.
    pub fn decompose(&self, x: &BigInt) -> Vec<u64> {
        self.moduli
            .iter()
            .map(|m| bigint_mod_u64(x, m.value()))
            .collect()
    }

    /// CRT reconstruction of the residues into `[0, Q)`.
    pub fn reconstruct(&self, residues: &[u64]) -> Result<BigInt> {
        if residues.len() != self.len() {
            return Err(Error::Malformed(format!(
                "{} residues for a basis of {} moduli",
                residues.len(),
                self.len()
            )));
        }
        let mut acc = BigInt::new();
        for (i, (&r, m)) in residues.iter().zip(&self.moduli).enumerate() {
            if r >= m.value() {
                return Err(Error::Malformed(format!(
                    "residue {r} ≥ modulus {}",
                    m.value()
                )));
            }
            let (inv, inv_s) = self.q_hat_inv[i];
            let y = m.mul_shoup(r, inv, inv_s);
            acc += &self.q_hat[i] * y;
        }
        acc %= &self.product;
        Ok(acc)
    }

    /// CRT reconstruction into the centered range `(-Q/2, Q/2]`.
    pub fn reconstruct_centered(&self, residues: &[u64]) -> Result<BigInt> {
        let mut x = self.reconstruct(residues)?;
        if x > self.half_product {
            x -= &self.product;
        }
        Ok(x)
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `x mod m` in `[0, m)` for any sign of `x`.
pub(crate) fn bigint_mod_u64(x: &BigInt, m: u64) -> u64 {
    let r = BigInt::from(x % m);
    let r = if r < 0 { r + m } else { r };
    r.to_u64().expect("remainder below a u64 modulus")
}

/// Per-thread pool of scratch vectors for the conversions below. A BFV product calls them dozens of
/// times on buffers of hundreds of KiB; fresh allocations of that size come from `mmap` and cost a
/// page fault per 4 KiB on first touch (a quarter of a product's time in coterie-bfv's profile).
/// Buffers are taken, zero-filled to the requested length, and given back when done.
mod scratch {
    use std::cell::RefCell;

    /// Buffers kept per thread and element type; more are simply dropped.
    const KEEP: usize = 8;

    thread_local! {
        static WORDS: RefCell<Vec<Vec<u64>>> = const { RefCell::new(Vec::new()) };
        static FLOATS: RefCell<Vec<Vec<f64>>> = const { RefCell::new(Vec::new()) };
    }

    /// A zero-filled vector of `len` words (of `fill` floats), reusing a pooled allocation.
    pub(super) fn words(len: usize) -> Vec<u64> {
        let mut v = WORDS.with(|p| p.borrow_mut().pop()).unwrap_or_default();
        v.clear();
        v.resize(len, 0);
        v
    }

    /// Returns a word vector to the pool.
    pub(super) fn give_words(v: Vec<u64>) {
        WORDS.with(|p| {
            let mut p = p.borrow_mut();
            if p.len() < KEEP {
                p.push(v);
            }
        });
    }

    /// A vector of `len` copies of `fill`, reusing a pooled allocation.
    pub(super) fn floats(len: usize, fill: f64) -> Vec<f64> {
        let mut v = FLOATS.with(|p| p.borrow_mut().pop()).unwrap_or_default();
        v.clear();
        v.resize(len, fill);
        v
    }

    /// Returns a float vector to the pool.
    pub(super) fn give_floats(v: Vec<f64>) {
        FLOATS.with(|p| {
            let mut p = p.borrow_mut();
            if p.len() < KEEP {
                p.push(v);
            }
        });
    }
}

/// Fast base conversion from basis `Q` to basis `P` (the two must be coprime to each other).
#[derive(Clone, Debug)]
pub struct BaseConverter {
    from: RnsBasis,
    to: RnsBasis,
    /// `[k][i] = (Q/q_i) mod p_k`.
    q_hat_mod_p: Vec<Vec<u64>>,
    /// `Q mod p_k`.
    q_mod_p: Vec<u64>,
    /// `1/q_i` as floats.
    inv_q: Vec<f64>,
}

impl BaseConverter {
    /// Precomputes the conversion tables from `from` to `to`.
    pub fn new(from: &RnsBasis, to: &RnsBasis) -> Result<Self> {
        for a in from.moduli() {
            for b in to.moduli() {
                if gcd(a.value(), b.value()) != 1 {
                    return Err(Error::InvalidParameter(format!(
                        "bases share a factor: {} and {}",
                        a.value(),
                        b.value()
                    )));
                }
            }
        }
        let q_hat_mod_p = to
            .moduli()
            .iter()
            .map(|p| {
                from.q_hat
                    .iter()
                    .map(|h| bigint_mod_u64(h, p.value()))
                    .collect()
            })
            .collect();
        let q_mod_p = to
            .moduli()
            .iter()
            .map(|p| bigint_mod_u64(from.product(), p.value()))
            .collect();
        let inv_q = from
            .moduli()
            .iter()
            .map(|q| 1.0 / q.value() as f64)
            .collect();
        Ok(BaseConverter {
            from: from.clone(),
            to: to.clone(),
            q_hat_mod_p,
            q_mod_p,
            inv_q,
        })
    }

    /// Source basis.
    pub fn from_basis(&self) -> &RnsBasis {
        &self.from
    }

    /// Target basis.
    pub fn to_basis(&self) -> &RnsBasis {
        &self.to
    }

    /// Whether [`BaseConverter::convert_exact`] takes the vector path: every modulus of both bases
    /// below 2^50 and the floating-point kernels available (see [`crate::kernels`]).
    pub fn vector_path(&self) -> bool {
        let small = |b: &RnsBasis| {
            b.moduli()
                .iter()
                .all(|m| m.bits() <= crate::kernels::FP_KERNEL_MAX_BITS)
        };
        crate::kernels::simd_available() && small(&self.from) && small(&self.to)
    }

    fn check_lengths(&self, input: &[u64], output: &[u64], n: usize) -> Result<()> {
        if input.len() != n * self.from.len() || output.len() != n * self.to.len() {
            return Err(Error::Mismatch(format!(
                "base conversion of {n} coefficients: input {} words for {} moduli, output {} words for {} moduli",
                input.len(),
                self.from.len(),
                output.len(),
                self.to.len()
            )));
        }
        Ok(())
    }

    /// `y_i = x_i · (Q/q_i)^{-1} mod q_i` for one coefficient; returns `Σ y_i / q_i` (float).
    #[inline(always)]
    fn y_values(&self, input: &[u64], n: usize, c: usize, y: &mut [u64]) -> f64 {
        let mut s = 0.0f64;
        for (i, m) in self.from.moduli.iter().enumerate() {
            let (inv, inv_s) = self.from.q_hat_inv[i];
            let yi = m.mul_shoup(input[i * n + c], inv, inv_s);
            y[i] = yi;
            s += yi as f64 * self.inv_q[i];
        }
        s
    }

    #[inline(always)]
    fn dot_mod(&self, k: usize, y: &[u64]) -> u64 {
        let p = &self.to.moduli[k];
        let row = &self.q_hat_mod_p[k];
        let mut acc: u128 = 0;
        for (chunk_y, chunk_r) in y.chunks(15).zip(row.chunks(15)) {
            let mut part: u128 = 0;
            for (&a, &b) in chunk_y.iter().zip(chunk_r) {
                part += a as u128 * b as u128;
            }
            acc += p.reduce_u128(part) as u128;
        }
        p.reduce_u128(acc)
    }

    /// Fast (approximate) base conversion: for each coefficient with residues `x_i` of some
    /// `x ∈ [0, Q)`, outputs residues modulo every `p_k` of `x + u·Q` for some `0 ≤ u < L`.
    pub fn convert_approx(&self, input: &[u64], output: &mut [u64], n: usize) -> Result<()> {
        self.check_lengths(input, output, n)?;
        let mut y = vec![0u64; self.from.len()];
        for c in 0..n {
            self.y_values(input, n, c, &mut y);
            for k in 0..self.to.len() {
                output[k * n + c] = self.dot_mod(k, &y);
            }
        }
        Ok(())
    }

    /// Exact base conversion. With `centered = false` the input residues are read as the integer
    /// `x ∈ [0, Q)`; with `centered = true` as the integer `x ∈ (-Q/2, Q/2]` (what lifting a
    /// ciphertext to a larger basis needs). The output holds the residues of that exact integer.
    ///
    /// `y_i = x_i·(Q/q_i)^{-1} mod q_i`, `v = ⌊Σ y_i/q_i + shift⌋` in `f64`, then
    /// `out_k = Σ y_i·(Q/q_i) − v·Q mod p_k`. Where every modulus is below 2^50 (and the CPU has
    /// AVX2+FMA), the products and the sum run in the exact floating-point kernels of
    /// [`crate::kernels`] ([`BaseConverter::vector_path`]), otherwise each sum is accumulated in
    /// 128 bits with one reduction; both block by block over the coefficients, so the rows of
    /// `y` stay in cache across the `L·L'` products. Both give the same words; the tests check
    /// each against big-integer CRT.
    pub fn convert_exact(
        &self,
        input: &[u64],
        output: &mut [u64],
        n: usize,
        centered: bool,
    ) -> Result<()> {
        self.check_lengths(input, output, n)?;
        if !self.vector_path() {
            return self.convert_exact_blocked(input, output, n, centered);
        }
        let l = self.from.len();
        let shift = if centered { 0.5 } else { 0.0 };
        const VB: usize = VECTOR_BLOCK;
        let mut y = scratch::words(l * VB);
        let mut s = scratch::floats(VB, shift);
        let mut v = scratch::words(VB);
        let mut ambiguous = Vec::new();
        for c0 in (0..n).step_by(VB) {
            let len = VB.min(n - c0);
            let (y, s, v) = (&mut y[..], &mut s[..len], &mut v[..len]);
            s.fill(shift);
            for (i, m) in self.from.moduli.iter().enumerate() {
                let (inv, _) = self.from.q_hat_inv[i];
                let inv_q = self.inv_q[i];
                let src = &input[i * n + c0..i * n + c0 + len];
                let dst = &mut y[i * VB..i * VB + len];
                crate::kernels::mul_scalar_mod(m, dst, src, inv);
                // y_i < q_i < 2^50: the vector conversion to f64 is exact
                crate::kernels::add_scaled_f64(s, dst, inv_q);
            }
            floor_estimates(s, v, c0, &mut ambiguous);
            // Σ_i y_i·(Q/q_i) mod p_k with one exact multiply-accumulate kernel call per (i, k),
            // then one more for −v·Q.
            for (k, p) in self.to.moduli.iter().enumerate() {
                let out = &mut output[k * n + c0..k * n + c0 + len];
                out.fill(0);
                for (i, &h) in self.q_hat_mod_p[k].iter().enumerate() {
                    crate::kernels::mul_scalar_acc_mod(p, out, &y[i * VB..i * VB + len], h);
                }
                // out − v·Q = out + v·(−Q mod p_k), with v ≤ l small: one more kernel call.
                crate::kernels::mul_scalar_acc_mod(p, out, v, p.neg(self.q_mod_p[k]));
            }
        }
        scratch::give_words(y);
        scratch::give_words(v);
        scratch::give_floats(s);
        self.exact_crt(input, output, n, centered, &ambiguous)
    }

    /// Coefficients per block of [`BaseConverter::convert_exact_blocked`]: its `L` rows of `y`
    /// and the estimates (beyond 15 limbs, also the 128-bit accumulators) stay in L1 (with
    /// `L = 7`: 7 KiB).
    const BLOCK: usize = 128;

    /// [`BaseConverter::convert_exact`] where some modulus is too wide for the floating-point
    /// kernels (MatriGear's 61-bit primes): the same three steps, done block by block over the
    /// coefficients. With 15 limbs or fewer each sum `Σ_i y_i·(Q/q_i) − v·Q` is accumulated in a
    /// 128-bit register and reduced once; beyond, in a block of 128-bit accumulators in L1,
    /// folded every 15 limbs. (Done limb-major over all `n` coefficients, each of the `L·L'`
    /// passes streamed a 128-bit accumulator per coefficient through L2, and `v·Q` cost two more
    /// reductions per output word: 4.2 ms for 7 → 11 primes of 61 bits at `n = 2^14`, 2.35 ms
    /// now.)
    fn convert_exact_blocked(
        &self,
        input: &[u64],
        output: &mut [u64],
        n: usize,
        centered: bool,
    ) -> Result<()> {
        const B: usize = BaseConverter::BLOCK;
        let l = self.from.len();
        let shift = if centered { 0.5 } else { 0.0 };
        let mut y = vec![0u64; l * B];
        let mut ambiguous = Vec::new();
        // v = ⌊Σ y_i/q_i + shift⌋ lies in [0, L] (each y_i/q_i < 1, shift ≤ 1/2).
        let neg_v_q: Vec<u64> = self
            .to
            .moduli
            .iter()
            .zip(&self.q_mod_p)
            .flat_map(|(p, &qm)| (0..=l as u64).map(move |v| p.neg(p.mul(p.reduce(v), qm))))
            .collect();
        for c0 in (0..n).step_by(B) {
            let len = B.min(n - c0);
            let mut s = [shift; B];
            for (i, m) in self.from.moduli.iter().enumerate() {
                let (inv, inv_s) = self.from.q_hat_inv[i];
                let inv_q = self.inv_q[i];
                let src = &input[i * n + c0..i * n + c0 + len];
                for ((d, &x), sc) in y[i * B..i * B + len].iter_mut().zip(src).zip(&mut s) {
                    *d = m.mul_shoup(x, inv, inv_s);
                    // y_i < q_i < 2^63: the signed conversion is exact and one instruction.
                    *sc += *d as i64 as f64 * inv_q;
                }
            }
            let mut v = [0u64; B];
            floor_estimates(&s[..len], &mut v[..len], c0, &mut ambiguous);
            for (k, p) in self.to.moduli.iter().enumerate() {
                if l <= 15 {
                    // Every sum in a register: at most 15 products of two 62-bit words and the
                    // table word fit in 128 bits.
                    let row = &self.q_hat_mod_p[k];
                    let neg_vq = &neg_v_q[k * (l + 1)..(k + 1) * (l + 1)];
                    let out = &mut output[k * n + c0..k * n + c0 + len];
                    // Two coefficients at a time: two independent carry chains.
                    let mut j = 0;
                    while j + 1 < len {
                        let mut a0 = neg_vq[v[j] as usize] as u128;
                        let mut a1 = neg_vq[v[j + 1] as usize] as u128;
                        for (i, &h) in row.iter().enumerate() {
                            let yy = &y[i * B + j..i * B + j + 2];
                            a0 += yy[0] as u128 * h as u128;
                            a1 += yy[1] as u128 * h as u128;
                        }
                        out[j] = p.reduce_u128(a0);
                        out[j + 1] = p.reduce_u128(a1);
                        j += 2;
                    }
                    if j < len {
                        let mut a0 = neg_vq[v[j] as usize] as u128;
                        for (i, &h) in row.iter().enumerate() {
                            a0 += y[i * B + j] as u128 * h as u128;
                        }
                        out[j] = p.reduce_u128(a0);
                    }
                    continue;
                }
                let mut acc = [0u128; B];
                for (i, &h) in self.q_hat_mod_p[k].iter().enumerate() {
                    for (a, &x) in acc[..len].iter_mut().zip(&y[i * B..i * B + len]) {
                        *a += x as u128 * h as u128;
                    }
                    // At most 15 products of two 62-bit words fit in 128 bits: fold every 15 limbs.
                    if i % 15 == 14 {
                        for a in acc[..len].iter_mut() {
                            *a = p.reduce_u128(*a) as u128;
                        }
                    }
                }
                // −v·Q mod p_k from a table (0 ≤ v ≤ L), added before the one reduction.
                let neg_vq = &neg_v_q[k * (l + 1)..(k + 1) * (l + 1)];
                let out = &mut output[k * n + c0..k * n + c0 + len];
                for ((o, &a), &vc) in out.iter_mut().zip(&acc).zip(&v) {
                    *o = p.reduce_u128(a + neg_vq[vc as usize] as u128);
                }
            }
        }
        self.exact_crt(input, output, n, centered, &ambiguous)
    }

    /// Overwrites the output of the listed coefficients by exact big-integer CRT (those whose
    /// floating-point estimate of `v` lay too close to a rounding boundary to be trusted).
    fn exact_crt(
        &self,
        input: &[u64],
        output: &mut [u64],
        n: usize,
        centered: bool,
        ambiguous: &[usize],
    ) -> Result<()> {
        let mut residues = vec![0u64; self.from.len()];
        for &c in ambiguous {
            for (i, r) in residues.iter_mut().enumerate() {
                *r = input[i * n + c];
            }
            let x = if centered {
                self.from.reconstruct_centered(&residues)?
            } else {
                self.from.reconstruct(&residues)?
            };
            for (k, p) in self.to.moduli.iter().enumerate() {
                output[k * n + c] = bigint_mod_u64(&x, p.value());
            }
        }
        Ok(())
    }
}

/// `v = ⌊s⌋` for each estimate `s = Σ y_i/q_i + shift` of a block starting at coefficient `c0`,
/// listing in `ambiguous` the coefficients whose estimate lies too close to an integer to be
/// trusted ([`FLOAT_GUARD`]). Every `s` is non-negative, so the truncating conversion is the floor
/// (and, unlike `f64::floor` on the baseline target, needs no call into libm).
fn floor_estimates(s: &[f64], v: &mut [u64], c0: usize, ambiguous: &mut Vec<usize>) {
    for (j, (vc, &sc)) in v.iter_mut().zip(s).enumerate() {
        let fl = sc as u64;
        let frac = sc - fl as f64;
        if !(FLOAT_GUARD..=1.0 - FLOAT_GUARD).contains(&frac) {
            ambiguous.push(c0 + j);
        }
        *vc = fl;
    }
}

/// Exact scale-and-round `round(t·x/Q)` for `x` given in the basis `Q ∪ P`, output in basis `Q`
/// (the BFV multiplication rescaling; `t` may be a big integer, e.g. a 4096-bit plaintext modulus).
///
/// Requires `|t·x/Q| < P/2` for the integer `x` represented, which holds when `x` is the
/// tensor product of two ciphertexts and `P` is chosen larger than `t·N·Q` (BFV parameter choice).
#[derive(Clone, Debug)]
pub struct ScaleRounder {
    q_to_p: BaseConverter,
    p_to_q: BaseConverter,
    /// `t mod q_i`, `⌊Q/2⌋ mod q_i` .
    t_mod_q: Vec<u64>,
    half_q_mod_q: Vec<u64>,
    /// `t mod p_k`, `⌊Q/2⌋ mod p_k`, `Q^{-1} mod p_k`.
    t_mod_p: Vec<u64>,
    half_q_mod_p: Vec<u64>,
    q_inv_mod_p: Vec<u64>,
}

impl ScaleRounder {
    /// Precomputes the tables for numerator `t` and bases `q`, `p` (coprime to each other).
    pub fn new(q: &RnsBasis, p: &RnsBasis, t: &BigInt) -> Result<Self> {
        if *t <= 0 {
            return Err(Error::InvalidParameter(
                "scaling numerator must be positive".into(),
            ));
        }
        let q_to_p = BaseConverter::new(q, p)?;
        let p_to_q = BaseConverter::new(p, q)?;
        let half = BigInt::from(q.product() >> 1u32);
        let q_inv_mod_p = p
            .moduli()
            .iter()
            .map(|m| m.inv(bigint_mod_u64(q.product(), m.value())))
            .collect::<Result<_>>()?;
        Ok(ScaleRounder {
            t_mod_q: q.decompose(t),
            half_q_mod_q: q.decompose(&half),
            t_mod_p: p.decompose(t),
            half_q_mod_p: p.decompose(&half),
            q_inv_mod_p,
            q_to_p,
            p_to_q,
        })
    }

    /// `x` is given by its residues `x_q` (basis `Q`, limb-major, `n` coefficients) and `x_p`
    /// (basis `P`); writes `round(t·x/Q)` in basis `Q` to `out_q`.
    pub fn scale_round(&self, x_q: &[u64], x_p: &[u64], out_q: &mut [u64], n: usize) -> Result<()> {
        let qb = self.q_to_p.from_basis();
        let pb = self.q_to_p.to_basis();
        if x_q.len() != n * qb.len() || x_p.len() != n * pb.len() || out_q.len() != n * qb.len() {
            return Err(Error::Mismatch("scale_round operand lengths".into()));
        }
        // r = [t·x + ⌊Q/2⌋]_Q in basis Q.
        let mut r_q = scratch::words(n * qb.len());
        for (i, m) in qb.moduli().iter().enumerate() {
            let (t, h) = (self.t_mod_q[i], self.half_q_mod_q[i]);
            let ts = m.shoup(t);
            for c in 0..n {
                r_q[i * n + c] = m.add(m.mul_shoup(x_q[i * n + c], t, ts), h);
            }
        }
        // r in basis P (r ∈ [0, Q)).
        let mut r_p = scratch::words(n * pb.len());
        self.q_to_p.convert_exact(&r_q, &mut r_p, n, false)?;
        scratch::give_words(r_q);
        // z = (t·x + ⌊Q/2⌋ − r) / Q in basis P, reusing r_p as the output.
        for (k, m) in pb.moduli().iter().enumerate() {
            let (t, h, qi) = (self.t_mod_p[k], self.half_q_mod_p[k], self.q_inv_mod_p[k]);
            let (ts, qis) = (m.shoup(t), m.shoup(qi));
            for c in 0..n {
                let num = m.sub(m.add(m.mul_shoup(x_p[k * n + c], t, ts), h), r_p[k * n + c]);
                r_p[k * n + c] = m.mul_shoup(num, qi, qis);
            }
        }
        // Lift the (centered, |z| < P/2) result back to Q.
        let r = self.p_to_q.convert_exact(&r_p, out_q, n, true);
        scratch::give_words(r_p);
        r
    }
}

/// Modulus switching `x → round(x / q_{L-1})` from basis `q_0 … q_{L-1}` to `q_0 … q_{L-2}`:
/// `input` holds `L` limbs of `n` coefficients, `output` the first `L − 1`.
/// Rounds to the nearest integer (ties: toward `−∞` in the centered remainder convention).
pub fn drop_last_rounded(
    basis: &RnsBasis,
    input: &[u64],
    output: &mut [u64],
    n: usize,
) -> Result<()> {
    let l = basis.len();
    if l < 2 || input.len() != l * n || output.len() != (l - 1) * n {
        return Err(Error::Mismatch("drop_last_rounded operand lengths".into()));
    }
    let last = basis.moduli()[l - 1];
    let last_limb = &input[(l - 1) * n..];
    for (i, m) in basis.moduli()[..l - 1].iter().enumerate() {
        let inv = m.inv(m.reduce(last.value()))?;
        let inv_s = m.shoup(inv);
        for c in 0..n {
            // x = q_last·x' + e with e the centered remainder, so x' = (x − e)/q_last.
            let e = m.reduce_i64(last.center(last_limb[c]));
            let d = m.sub(input[i * n + c], e);
            output[i * n + c] = m.mul_shoup(d, inv, inv_s);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primes::{ntt_primes, ntt_primes_excluding};
    use proptest::prelude::*;
    use rug::integer::Order;
    use rug::ops::DivRounding;

    fn big_from_words(w: &[u64]) -> BigInt {
        BigInt::from_digits(w, Order::Lsf)
    }

    fn basis(count: usize, bits: u32) -> RnsBasis {
        RnsBasis::new(&ntt_primes(bits, 16, count).unwrap()).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn crt_roundtrip(words in proptest::collection::vec(any::<u64>(), 1..8), l in 1usize..8, neg in any::<bool>()) {
            let b = basis(l, 55);
            let mut x = big_from_words(&words) % b.product();
            let r = b.decompose(&x);
            prop_assert_eq!(b.reconstruct(&r).unwrap(), x.clone());
            if neg { x = -x; }
            let r = b.decompose(&x);
            let y = b.reconstruct_centered(&r).unwrap();
            // Congruent, and centered.
            prop_assert_eq!(BigInt::from(&y - &x) % b.product(), 0);
            prop_assert!(BigInt::from(&y * 2u32).abs() <= *b.product());
        }

        #[test]
        fn base_conversion_exact_and_approx(words in proptest::collection::vec(any::<u64>(), 1..8), lq in 1usize..6, lp in 1usize..6, centered in any::<bool>(), bits in prop_oneof![Just(30u32), Just(44), Just(50), Just(55)]) {
            // Below 2^50 the vector path runs (on machines with AVX2+FMA), at 55 bits the scalar one.
            let qs = ntt_primes(bits, 16, lq).unwrap();
            let ps = ntt_primes_excluding(bits, 16, lp, &qs).unwrap();
            let (qb, pb) = (RnsBasis::new(&qs).unwrap(), RnsBasis::new(&ps).unwrap());
            let conv = BaseConverter::new(&qb, &pb).unwrap();
            // 0, Q-1, Q/2, Q/2+1 (edge cases of the float correction and the centering), then
            // random values, 19 in all so the vector kernels see full chunks and a tail.
            let x0 = big_from_words(&words) % qb.product();
            let half = BigInt::from(qb.product() >> 1u32);
            let mut xs = vec![BigInt::new(), BigInt::from(qb.product() - 1u32), half.clone(), BigInt::from(&half + 1u32)];
            for j in 0..15u32 {
                xs.push((BigInt::from(&x0 * (2 * j + 1)) + j) % qb.product());
            }
            let n = xs.len();
            let mut input = vec![0u64; lq * n];
            for (c, x) in xs.iter().enumerate() {
                for (i, r) in qb.decompose(x).into_iter().enumerate() { input[i * n + c] = r; }
            }
            let mut out = vec![0u64; lp * n];
            conv.convert_exact(&input, &mut out, n, centered).unwrap();
            let mut approx = vec![0u64; lp * n];
            conv.convert_approx(&input, &mut approx, n).unwrap();
            for (c, x) in xs.iter().enumerate() {
                let xr = if centered && *x > qb.half_product { BigInt::from(x - qb.product()) } else { x.clone() };
                let want = pb.decompose(&xr);
                let approx_val = pb.reconstruct(&(0..lp).map(|k| approx[k * n + c]).collect::<Vec<_>>()).unwrap();
                for k in 0..lp {
                    prop_assert_eq!(out[k * n + c], want[k]);
                }
                // approx = x + u·Q (mod P) for some 0 ≤ u < L.
                if pb.product() > &BigInt::from(qb.product() * (lq as u32 + 1)) {
                    let diff = BigInt::from(&approx_val - x);
                    let u = BigInt::from(&diff / qb.product());
                    prop_assert_eq!(BigInt::from(&diff % qb.product()), 0);
                    prop_assert!(u >= 0 && u < lq as u32);
                }
            }
        }

        #[test]
        fn scale_round_is_exact(words in proptest::collection::vec(any::<u64>(), 1..14), neg in any::<bool>(), t in prop_oneof![Just(2u64), Just(256), Just(65537), any::<u64>()]) {
            let qs = ntt_primes(50, 16, 3).unwrap();
            let ps = ntt_primes_excluding(50, 16, 5, &qs).unwrap();
            let (qb, pb) = (RnsBasis::new(&qs).unwrap(), RnsBasis::new(&ps).unwrap());
            let t = BigInt::from(t.max(1));
            let sr = ScaleRounder::new(&qb, &pb, &t).unwrap();
            // |x| bounded so that |t x / Q| < P/2.
            let bound = BigInt::from(pb.product() * qb.product()) / BigInt::from(&t * 4u32);
            let mut x = big_from_words(&words) % bound;
            if neg { x = -x; }
            let n = 1;
            let (x_q, x_p) = (qb.decompose(&x), pb.decompose(&x));
            let mut out = vec![0u64; qs.len()];
            sr.scale_round(&x_q, &x_p, &mut out, n).unwrap();
            // Reference: floor((2 t x + Q) / (2Q)) = round half up.
            let num = BigInt::from(&t * &x) * 2u32 + qb.product();
            let want = num.div_floor(BigInt::from(qb.product() * 2u32));
            prop_assert_eq!(out, qb.decompose(&want));
        }

        #[test]
        fn drop_last_rounds(words in proptest::collection::vec(any::<u64>(), 1..4), neg in any::<bool>()) {
            let b = basis(4, 50);
            let mut x = big_from_words(&words) % b.product();
            if neg { x = -x; }
            let input = b.decompose(&x);
            let mut out = vec![0u64; 3];
            drop_last_rounded(&b, &input, &mut out, 1).unwrap();
            let last = b.moduli()[3].value();
            let small = RnsBasis::new(&b.moduli()[..3].iter().map(|m| m.value()).collect::<Vec<_>>()).unwrap();
            // x' = (x − e)/q_last with e the centered remainder of x mod q_last.
            let got = small.reconstruct_centered(&out).unwrap();
            let diff = BigInt::from(&x - &got * last);
            prop_assert!(BigInt::from(&diff * 2u32).abs() <= last);
        }
    }

    /// Both paths block by block: the scalar path (61-bit moduli) with more than 15 input limbs
    /// (the 128-bit accumulator's fold) and with 15 or fewer (sums in registers, two coefficients
    /// at a time), and the vector path (44 and 50 bits, where the CPU has it), over several
    /// blocks and an odd tail, against big-integer CRT, both directions.
    #[test]
    fn conversion_blocks_and_folds() {
        use crate::prg::Csprng;
        let mut rng = Csprng::insecure_from_seed_for_tests([3; 32]);
        let sizes = [(17usize, 3usize), (3, 17), (7, 11), (11, 7), (15, 2)];
        for (bits, (lq, lp)) in [61u32, 50, 44]
            .into_iter()
            .flat_map(|b| sizes.into_iter().map(move |s| (b, s)))
        {
            let qs = ntt_primes(bits, 16, lq).unwrap();
            let ps = ntt_primes_excluding(bits, 16, lp, &qs).unwrap();
            let (qb, pb) = (RnsBasis::new(&qs).unwrap(), RnsBasis::new(&ps).unwrap());
            let conv = BaseConverter::new(&qb, &pb).unwrap();
            assert_eq!(
                conv.vector_path(),
                bits <= 50 && crate::kernels::simd_available()
            );
            let n = 2 * BaseConverter::BLOCK.max(VECTOR_BLOCK) + 85;
            let half = BigInt::from(qb.product() >> 1u32);
            let xs: Vec<BigInt> = (0..n)
                .map(|c| {
                    let w: Vec<u64> = (0..lq).map(|_| rand::Rng::next_u64(&mut rng)).collect();
                    match c {
                        0 => BigInt::new(),
                        1 => BigInt::from(qb.product() - 1u32),
                        2 => half.clone(),
                        3 => BigInt::from(&half + 1u32),
                        _ => big_from_words(&w) % qb.product(),
                    }
                })
                .collect();
            let mut input = vec![0u64; lq * n];
            for (c, x) in xs.iter().enumerate() {
                for (i, r) in qb.decompose(x).into_iter().enumerate() {
                    input[i * n + c] = r;
                }
            }
            for centered in [false, true] {
                let mut out = vec![0u64; lp * n];
                conv.convert_exact(&input, &mut out, n, centered).unwrap();
                for (c, x) in xs.iter().enumerate() {
                    let xr = if centered && *x > qb.half_product {
                        BigInt::from(x - qb.product())
                    } else {
                        x.clone()
                    };
                    let want = pb.decompose(&xr);
                    for k in 0..lp {
                        assert_eq!(
                            out[k * n + c],
                            want[k],
                            "{bits} bits ({lq}, {lp}) coefficient {c}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn rejects_bad_bases() {
        assert!(RnsBasis::new(&[]).is_err());
        assert!(RnsBasis::new(&[15, 21]).is_err());
        let b = basis(2, 40);
        assert!(b.reconstruct(&[1]).is_err());
        assert!(b.reconstruct(&[u64::MAX, 0]).is_err());
        assert!(BaseConverter::new(&b, &b).is_err());
    }
}
