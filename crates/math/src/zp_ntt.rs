//! Big-integer NTT over `Z_p` and the slot maps of generalized BFV (MatriGear, spec
//! `seed002.md` §3.2).
//!
//! The plaintext space of generalized BFV is `Z_p[X]/(X^D − b)` with `p = b^M + 1` prime, up to
//! 4096 bits, and `2N | p − 1` where `N = M·D`. `X^D − b` splits over `Z_p` into the `D` roots
//! `ζ_i = ξ^(e_i)`, `e_i = 5^(i·M/2) mod 2N`, where `ξ` has order `2N` and `ξ^D = b` (Lemma 3,
//! Theorem 1), so the ring is `Z_p^D` slot-wise:
//!
//! * [`CyclicNtt`] — a precomputed plan for the length-`D` cyclic NTT over `Z_p` (forward with
//!   `ω`, inverse with `ω^(−1)` and `D^(−1)`), `O(D log D)` big-integer products, no allocation
//!   per butterfly (two scratch integers whose buffers circulate).
//! * [`SlotEncoder`] — `unpack` (twist by `ξ^k`, NTT with `ω = ξ^(2M)`, permute to slot order)
//!   and `pack` (its inverse), plus `fold` (reduction of any polynomial modulo `X^D − b` and `p`)
//!   and the Galois elements `5^(r·M/2) mod 2N` of the rotations.
//! * [`slot_modulus`] — parameter validation: `M`, `D` powers of two (at least 2), `p = b^M + 1`
//!   prime, `2N | p − 1`. Every failure is an [`Error`], never a panic.
//!
//! Root finding: [`SlotEncoder::new`] searches small candidates `g` for an element of order `2N`
//! and raises it to the power that makes `ξ^D = b`; [`SlotEncoder::with_generator`] takes the
//! reference code's generator `G` (spec §6.4: `ξ = G^((p−1)/(2N))`, checked through
//! `G^((p−1)/(2M)) = b`), and [`SlotEncoder::with_root`] a given `ξ`. Different roots only permute
//! the slots.
//!
//! # Example
//!
//! Toy-A of the spec (§8): `N = 8`, `M = 2`, `D = 4`, `b = 4`, `p = 17`, `ξ = 6`.
//!
//! ```
//! use coterie_math::bigint::BigInt;
//! use coterie_math::zp_ntt::SlotEncoder;
//! let enc = SlotEncoder::with_root(&BigInt::from(4), 2, 4, &BigInt::from(6)).unwrap();
//! let slots: Vec<BigInt> = (1..=4).map(BigInt::from).collect();
//! let f = enc.pack(&slots).unwrap();
//! assert_eq!(f, [11, 13, 4, 9].map(BigInt::from));
//! assert_eq!(enc.unpack(&f).unwrap(), slots);
//! ```

use core::cmp::Ordering;

use rug::Assign;
use rug::ops::Pow;

use crate::bigint::{BigInt, is_probable_prime};
use crate::{Error, Result};

/// Largest supported modulus `p`, in bits.
pub const MAX_P_BITS: u32 = 8192;

/// Largest supported transform length (and number of slots `D`).
pub const MAX_LEN: usize = 1 << 20;

/// Largest supported ring degree `N = M·D`.
pub const MAX_DEGREE: usize = 1 << 24;

fn invalid(msg: impl Into<String>) -> Error {
    Error::InvalidParameter(msg.into())
}

/// `base^exp mod p` for `exp ≥ 0`, `p > 1`.
fn pow_mod(base: &BigInt, exp: &BigInt, p: &BigInt) -> Result<BigInt> {
    base.clone()
        .pow_mod(exp, p)
        .map_err(|_| invalid("modular exponentiation failed"))
}

fn pow_mod_u(base: &BigInt, exp: u64, p: &BigInt) -> Result<BigInt> {
    pow_mod(base, &BigInt::from(exp), p)
}

/// Brings `x` into `[0, p)` (a no-op for reduced values).
#[inline]
fn reduce(x: &mut BigInt, p: &BigInt) {
    if x.cmp0() == Ordering::Less || *x >= *p {
        x.modulo_mut(p);
    }
}

/// `x ← x·w mod p` through the scratch `t` (whose buffer is swapped into `x`).
#[inline]
fn mul_mod_assign(x: &mut BigInt, w: &BigInt, p: &BigInt, t: &mut BigInt) {
    t.assign(&*x * w);
    *t %= p;
    core::mem::swap(x, t);
}

fn bit_reverse(i: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        i.reverse_bits() >> (usize::BITS - bits)
    }
}

/// A precomputed plan for the length-`len` cyclic NTT over `Z_p`:
/// `F_j = Σ_k f_k ω^(jk)` (forward) and `f_k = len^(−1) Σ_j F_j ω^(−jk)` (inverse), for a prime
/// `p` and an `ω` of order exactly `len` (a power of two).
///
/// Inputs may be any integers (they are reduced into `[0, p)` first); outputs are in `[0, p)`.
#[derive(Debug, Clone)]
pub struct CyclicNtt {
    p: BigInt,
    len: usize,
    log_len: u32,
    omega: BigInt,
    /// `ω^k` for `k < len/2`.
    fwd: Vec<BigInt>,
    /// `ω^(−k)` for `k < len/2`.
    inv: Vec<BigInt>,
    len_inv: BigInt,
}

impl CyclicNtt {
    /// A plan for length `len` over `Z_p` with the root `omega`. Errors if `p` is not an odd
    /// prime of at most [`MAX_P_BITS`] bits, `len` is not a power of two up to [`MAX_LEN`], or
    /// `omega` does not have order exactly `len` mod `p`.
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_math::bigint::BigInt;
    /// use coterie_math::zp_ntt::CyclicNtt;
    /// // 3 is a primitive root mod 257, so 3^32 has order 8.
    /// let p = BigInt::from(257);
    /// let omega = BigInt::from(3).pow_mod(&BigInt::from(32), &p).unwrap();
    /// let ntt = CyclicNtt::new(&p, 8, &omega).unwrap();
    /// let mut a: Vec<BigInt> = (0..8).map(BigInt::from).collect();
    /// let orig = a.clone();
    /// ntt.forward(&mut a).unwrap();
    /// assert_eq!(a[0], 28); // F_0 = Σ f_k
    /// ntt.inverse(&mut a).unwrap();
    /// assert_eq!(a, orig);
    /// ```
    pub fn new(p: &BigInt, len: usize, omega: &BigInt) -> Result<Self> {
        if *p <= 2 || p.significant_bits() > MAX_P_BITS || p.is_even() {
            return Err(invalid(format!(
                "the NTT modulus must be an odd prime of at most {MAX_P_BITS} bits"
            )));
        }
        if !is_probable_prime(p) {
            return Err(invalid("the NTT modulus is not prime"));
        }
        Self::new_prime(p, len, omega)
    }

    /// [`CyclicNtt::new`] for a modulus already known to be an odd prime of at most
    /// [`MAX_P_BITS`] bits.
    fn new_prime(p: &BigInt, len: usize, omega: &BigInt) -> Result<Self> {
        if !len.is_power_of_two() || len > MAX_LEN {
            return Err(invalid(format!(
                "NTT length {len} is not a power of two up to {MAX_LEN}"
            )));
        }
        let mut w = omega.clone();
        reduce(&mut w, p);
        if pow_mod_u(&w, len as u64, p)? != 1 {
            return Err(invalid("ω^len ≠ 1: not a root of unity of this length"));
        }
        if len >= 2 && pow_mod_u(&w, (len / 2) as u64, p)? != BigInt::from(p - 1u32) {
            return Err(invalid("ω does not have order exactly len"));
        }
        let w_inv = w
            .clone()
            .invert(p)
            .map_err(|_| invalid("ω is not invertible mod p"))?;
        let half = len / 2;
        let powers = |base: &BigInt| {
            let mut out = Vec::with_capacity(half);
            let mut cur = BigInt::from(1);
            let mut t = BigInt::new();
            for _ in 0..half {
                out.push(cur.clone());
                mul_mod_assign(&mut cur, base, p, &mut t);
            }
            out
        };
        let fwd = powers(&w);
        let inv = powers(&w_inv);
        let len_inv = BigInt::from(len)
            .invert(p)
            .map_err(|_| invalid("len is not invertible mod p"))?;
        Ok(Self {
            p: p.clone(),
            len,
            log_len: len.trailing_zeros(),
            omega: w,
            fwd,
            inv,
            len_inv,
        })
    }

    /// The transform length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the transform length is zero (never: the length is a power of two).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The modulus `p`.
    pub fn modulus(&self) -> &BigInt {
        &self.p
    }

    /// The root `ω` (reduced mod `p`).
    pub fn omega(&self) -> &BigInt {
        &self.omega
    }

    fn check_len(&self, n: usize) -> Result<()> {
        if n != self.len {
            return Err(Error::Malformed(format!(
                "NTT input of length {n}, expected {}",
                self.len
            )));
        }
        Ok(())
    }

    /// In-place forward transform `F_j = Σ_k f_k ω^(jk) mod p`, natural order in and out. Errors
    /// if `a.len()` is not the plan's length.
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_math::bigint::BigInt;
    /// use coterie_math::zp_ntt::CyclicNtt;
    /// let p = BigInt::from(17);
    /// let ntt = CyclicNtt::new(&p, 4, &BigInt::from(4)).unwrap(); // 4 has order 4 mod 17
    /// let mut a = [1, 1, 0, 0].map(BigInt::from); // 1 + X
    /// ntt.forward(&mut a).unwrap();
    /// assert_eq!(a, [2, 5, 0, 14].map(BigInt::from)); // 1 + 4^j
    /// ```
    pub fn forward(&self, a: &mut [BigInt]) -> Result<()> {
        self.check_len(a.len())?;
        for x in a.iter_mut() {
            reduce(x, &self.p);
        }
        self.forward_to_bitrev(a);
        self.bit_reverse_permute(a);
        Ok(())
    }

    /// In-place inverse transform `f_k = len^(−1) Σ_j F_j ω^(−jk) mod p`, natural order in and
    /// out. Errors if `a.len()` is not the plan's length.
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_math::bigint::BigInt;
    /// use coterie_math::zp_ntt::CyclicNtt;
    /// let ntt = CyclicNtt::new(&BigInt::from(17), 4, &BigInt::from(4)).unwrap();
    /// let mut a = [2, 5, 0, 14].map(BigInt::from);
    /// ntt.inverse(&mut a).unwrap();
    /// assert_eq!(a, [1, 1, 0, 0].map(BigInt::from));
    /// ```
    pub fn inverse(&self, a: &mut [BigInt]) -> Result<()> {
        self.check_len(a.len())?;
        for x in a.iter_mut() {
            reduce(x, &self.p);
        }
        self.bit_reverse_permute(a);
        self.inverse_from_bitrev(a);
        let mut t = BigInt::new();
        for x in a.iter_mut() {
            mul_mod_assign(x, &self.len_inv, &self.p, &mut t);
        }
        Ok(())
    }

    fn bit_reverse_permute(&self, a: &mut [BigInt]) {
        for i in 0..self.len {
            let j = bit_reverse(i, self.log_len);
            if i < j {
                a.swap(i, j);
            }
        }
    }

    /// Gentleman–Sande (decimation in frequency): reduced input in natural order, output
    /// `F` in bit-reversed order, without the final permutation.
    fn forward_to_bitrev(&self, a: &mut [BigInt]) {
        let p = &self.p;
        let n = self.len;
        let (mut t, mut u) = (BigInt::new(), BigInt::new());
        let mut half = n / 2;
        while half >= 1 {
            let stride = n / (2 * half);
            for block in a.chunks_exact_mut(2 * half) {
                let (lo, hi) = block.split_at_mut(half);
                for (j, (x, y)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                    // (x, y) ← (x + y, (x − y)·ω^(j·stride))
                    t.assign(&*x - &*y);
                    if t.cmp0() == Ordering::Less {
                        t += p;
                    }
                    *x += &*y;
                    if *x >= *p {
                        *x -= p;
                    }
                    if j == 0 {
                        core::mem::swap(y, &mut t);
                    } else {
                        u.assign(&t * &self.fwd[j * stride]);
                        u %= p;
                        core::mem::swap(y, &mut u);
                    }
                }
            }
            half /= 2;
        }
    }

    /// Cooley–Tukey (decimation in time) with `ω^(−1)`: reduced input in bit-reversed order,
    /// output `len·f` in natural order (no scaling by `len^(−1)`).
    fn inverse_from_bitrev(&self, a: &mut [BigInt]) {
        let p = &self.p;
        let n = self.len;
        let (mut t, mut u) = (BigInt::new(), BigInt::new());
        let mut half = 1;
        while half < n {
            let stride = n / (2 * half);
            for block in a.chunks_exact_mut(2 * half) {
                let (lo, hi) = block.split_at_mut(half);
                for (j, (x, y)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                    // (x, y) ← (x + y·ω^(−j·stride), x − y·ω^(−j·stride))
                    if j != 0 {
                        u.assign(&*y * &self.inv[j * stride]);
                        u %= p;
                        core::mem::swap(y, &mut u);
                    }
                    t.assign(&*x - &*y);
                    if t.cmp0() == Ordering::Less {
                        t += p;
                    }
                    *x += &*y;
                    if *x >= *p {
                        *x -= p;
                    }
                    core::mem::swap(y, &mut t);
                }
            }
            half *= 2;
        }
    }
}

/// Validates generalized-BFV plaintext parameters and returns `p = b^M + 1`: `M` and `D` powers
/// of two, `D ≥ 2` (`M = 1` is ordinary BFV with `t = p`: its slots are the usual two rows, see
/// [`SlotEncoder`]), `b ≥ 2`, `p` prime of at most [`MAX_P_BITS`] bits, and `2N | p − 1` for
/// `N = M·D`.
///
/// # Example
///
/// ```
/// use coterie_math::bigint::BigInt;
/// use coterie_math::zp_ntt::slot_modulus;
/// // Toy-B of seed002 §8: p = 132^4 + 1 = 303595777, 2N = 64 divides p − 1.
/// assert_eq!(slot_modulus(&BigInt::from(132), 4, 8).unwrap(), 303_595_777);
/// assert!(slot_modulus(&BigInt::from(8), 2, 2).is_err()); // 65 is not prime
/// ```
pub fn slot_modulus(b: &BigInt, m: usize, d: usize) -> Result<BigInt> {
    if !m.is_power_of_two() {
        return Err(invalid(format!("M = {m} must be a power of two")));
    }
    if !d.is_power_of_two() || !(2..=MAX_LEN).contains(&d) {
        return Err(invalid(format!(
            "D = {d} must be a power of two between 2 and {MAX_LEN}"
        )));
    }
    let n = m
        .checked_mul(d)
        .filter(|&n| n <= MAX_DEGREE)
        .ok_or_else(|| invalid(format!("N = M·D exceeds {MAX_DEGREE}")))?;
    if *b < 2 {
        return Err(invalid("b must be at least 2"));
    }
    // b^M has more than (bits(b) − 1)·M bits: reject before computing a huge power.
    if (u64::from(b.significant_bits()) - 1).saturating_mul(m as u64) >= u64::from(MAX_P_BITS) {
        return Err(invalid(format!("p = b^M + 1 exceeds {MAX_P_BITS} bits")));
    }
    let bm = BigInt::from(Pow::pow(b, m as u32));
    let p = BigInt::from(&bm + 1u32);
    if p.significant_bits() > MAX_P_BITS {
        return Err(invalid(format!("p = b^M + 1 exceeds {MAX_P_BITS} bits")));
    }
    let two_n = 2 * n as u64;
    if bm.find_one(0).unwrap_or(0) < two_n.trailing_zeros() {
        return Err(invalid(format!("2N = {two_n} does not divide p − 1 = b^M")));
    }
    if !is_probable_prime(&p) {
        return Err(invalid("p = b^M + 1 is not prime"));
    }
    Ok(p)
}

/// The slot maps of generalized BFV over `Z_p[X]/(X^D − b)`, `p = b^M + 1` (spec §3.2):
/// `unpack(f) = (f(ζ_0), …, f(ζ_(D−1)))` with `ζ_i = ξ^(e_i)`, `e_i = 5^(i·M/2) mod 2N`, and
/// `pack` its inverse, both `O(D log D)` through one [`CyclicNtt`] with `ω = ξ^(2M)`.
///
/// `M = 1` (ordinary BFV with `t = p`, `b = p − 1`, so `X^D − b = X^N + 1`) has no cyclic
/// rotation (spec §3.1); its slots take the usual two-row order instead: `e_i = 5^i` for
/// `i < N/2` and `e_i = −5^(i − N/2) mod 2N` after, and [`SlotEncoder::galois_element`]`(r) = 5^r`
/// rotates each row of `N/2` slots left by `r`.
///
/// Polynomials are coefficient vectors of length `D` (degree `< D`), lowest degree first.
#[derive(Debug, Clone)]
pub struct SlotEncoder {
    p: BigInt,
    b: BigInt,
    m: usize,
    d: usize,
    xi: BigInt,
    ntt: CyclicNtt,
    /// `ξ^k`, `k < D`.
    twist: Vec<BigInt>,
    /// `ξ^(−k)·D^(−1)`, `k < D`.
    untwist: Vec<BigInt>,
    /// Transpositions taking the bit-reversed NTT output to slot order.
    swaps: Vec<(u32, u32)>,
    /// `e_i = 5^(i·M/2) mod 2N`.
    exponents: Vec<u64>,
    /// The same maps in 128-bit Montgomery arithmetic, for `p < 2^128`.
    fast: Option<Fast128>,
}

impl SlotEncoder {
    /// The slot maps for `b`, `M`, `D` with a root `ξ` found by search: for small `g`, `z =
    /// g^((p−1)/(2N))` has order `2N` when `g` is a non-residue; then `z^D = b^k` for an odd `k`,
    /// and `ξ = z^(k^(−1) mod 2M)` satisfies `ξ^D = b`. Errors as [`slot_modulus`].
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_math::bigint::BigInt;
    /// use coterie_math::zp_ntt::SlotEncoder;
    /// let enc = SlotEncoder::new(&BigInt::from(132), 4, 8).unwrap(); // Toy-B
    /// let p = enc.modulus();
    /// assert_eq!(enc.xi().clone().pow_mod(&BigInt::from(8), p).unwrap(), 132);
    /// let slots: Vec<BigInt> = (0..8).map(|i| BigInt::from(i * i)).collect();
    /// assert_eq!(enc.unpack(&enc.pack(&slots).unwrap()).unwrap(), slots);
    /// ```
    pub fn new(b: &BigInt, m: usize, d: usize) -> Result<Self> {
        let p = slot_modulus(b, m, d)?;
        let two_n = 2 * (m * d) as u64;
        let pm1 = BigInt::from(&p - 1u32);
        let cof = BigInt::from(&pm1 / two_n);
        let minus_one = pm1.clone();
        let b_red = BigInt::from(b % &p);
        let b2 = BigInt::from(b_red.square_ref()) % &p;
        for g in 2u32..10_000 {
            let z = pow_mod(&BigInt::from(g), &cof, &p)?;
            if pow_mod_u(&z, (m * d) as u64, &p)? != minus_one {
                continue;
            }
            let w = pow_mod_u(&z, d as u64, &p)?;
            // w has order 2M, so w = b^k for an odd k < 2M.
            let mut cur = b_red.clone();
            let mut t = BigInt::new();
            let mut k = 1u64;
            while k < 2 * m as u64 && cur != w {
                mul_mod_assign(&mut cur, &b2, &p, &mut t);
                k += 2;
            }
            if cur != w {
                return Err(invalid("internal: z^D is not an odd power of b"));
            }
            let j = BigInt::from(k)
                .invert(&BigInt::from(2 * m))
                .map_err(|_| invalid("internal: k not invertible mod 2M"))?;
            let xi = pow_mod(&z, &j, &p)?;
            return Self::from_parts(p, b_red, m, d, xi);
        }
        Err(invalid(
            "no element of order 2N found among small candidates",
        ))
    }

    /// The slot maps with the reference code's generator `G` (spec §6.4): checks
    /// `G^((p−1)/(2M)) = b` and takes `ξ = G^((p−1)/(2N))`.
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_math::bigint::BigInt;
    /// use coterie_math::zp_ntt::SlotEncoder;
    /// // seed002 §6.4, Params II at log p = 512: b = 2^16 − 72, M = 32, D = 2^8, G = 5.
    /// let b = (BigInt::from(1) << 16) - 72;
    /// let enc = SlotEncoder::with_generator(&b, 32, 256, &BigInt::from(5)).unwrap();
    /// assert_eq!(enc.modulus().significant_bits(), 512);
    /// assert!(SlotEncoder::with_generator(&b, 32, 256, &BigInt::from(2)).is_err());
    /// ```
    pub fn with_generator(b: &BigInt, m: usize, d: usize, g: &BigInt) -> Result<Self> {
        let p = slot_modulus(b, m, d)?;
        let pm1 = BigInt::from(&p - 1u32);
        let mut g = g.clone();
        reduce(&mut g, &p);
        let b_red = BigInt::from(b % &p);
        if pow_mod(&g, &BigInt::from(&pm1 / (2 * m as u64)), &p)? != b_red {
            return Err(invalid("G^((p−1)/(2M)) ≠ b: not a generator for this b"));
        }
        let xi = pow_mod(&g, &BigInt::from(&pm1 / (2 * (m * d) as u64)), &p)?;
        Self::from_parts(p, b_red, m, d, xi)
    }

    /// The slot maps with a given root `ξ`; checks `ξ^D = b` and `ξ^N = −1` (so `ξ` has order
    /// `2N`).
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_math::bigint::BigInt;
    /// use coterie_math::zp_ntt::SlotEncoder;
    /// let b = BigInt::from(4);
    /// assert!(SlotEncoder::with_root(&b, 2, 4, &BigInt::from(6)).is_ok()); // Toy-A
    /// assert!(SlotEncoder::with_root(&b, 2, 4, &BigInt::from(3)).is_err()); // 3^4 ≠ 4 mod 17
    /// ```
    pub fn with_root(b: &BigInt, m: usize, d: usize, xi: &BigInt) -> Result<Self> {
        let p = slot_modulus(b, m, d)?;
        let mut xi = xi.clone();
        reduce(&mut xi, &p);
        let b_red = BigInt::from(b % &p);
        Self::from_parts(p, b_red, m, d, xi)
    }

    fn from_parts(p: BigInt, b: BigInt, m: usize, d: usize, xi: BigInt) -> Result<Self> {
        let n = m * d;
        if pow_mod_u(&xi, d as u64, &p)? != b {
            return Err(invalid("ξ^D ≠ b"));
        }
        if pow_mod_u(&xi, n as u64, &p)? != BigInt::from(&p - 1u32) {
            return Err(invalid("ξ^N ≠ −1: ξ does not have order 2N"));
        }
        let omega = pow_mod_u(&xi, 2 * m as u64, &p)?;
        let ntt = CyclicNtt::new_prime(&p, d, &omega)?;
        let xi_inv = xi
            .clone()
            .invert(&p)
            .map_err(|_| invalid("ξ is not invertible mod p"))?;
        let mut t = BigInt::new();
        let mut twist = Vec::with_capacity(d);
        let mut untwist = Vec::with_capacity(d);
        let mut cur = BigInt::from(1);
        let mut cur_inv = ntt.len_inv.clone();
        for _ in 0..d {
            twist.push(cur.clone());
            untwist.push(cur_inv.clone());
            mul_mod_assign(&mut cur, &xi, &p, &mut t);
            mul_mod_assign(&mut cur_inv, &xi_inv, &p, &mut t);
        }
        // Slot i is F[j(i)] with j(i) = (e_i − 1)/(2M); the DIF output holds F[j] at
        // position bitrev(j).
        let two_n = 2 * n as u64;
        let step = |e: u64, g: u64| ((u128::from(e) * u128::from(g)) % u128::from(two_n)) as u64;
        let mut exponents = Vec::with_capacity(d);
        let mut e = 1u64;
        if m == 1 {
            // Two rows: 5^i, then −5^i.
            for _ in 0..d / 2 {
                exponents.push(e);
                e = step(e, 5);
            }
            let first: Vec<u64> = exponents.clone();
            exponents.extend(first.iter().map(|&x| two_n - x));
        } else {
            let g = crate::modulus::pow_mod_u64(5, (m / 2) as u64, two_n);
            for _ in 0..d {
                exponents.push(e);
                e = step(e, g);
            }
        }
        let log_d = d.trailing_zeros();
        let sigma: Vec<usize> = exponents
            .iter()
            .map(|&e| bit_reverse(((e - 1) / (2 * m as u64)) as usize, log_d))
            .collect();
        let swaps = gather_swaps(&sigma)?;
        let fast = Fast128::new(&p, &ntt, &twist, &untwist);
        Ok(Self {
            p,
            b,
            m,
            d,
            xi,
            ntt,
            twist,
            untwist,
            swaps,
            exponents,
            fast,
        })
    }

    /// The prime `p = b^M + 1`.
    pub fn modulus(&self) -> &BigInt {
        &self.p
    }
    /// `b` (reduced mod `p`).
    pub fn b(&self) -> &BigInt {
        &self.b
    }
    /// `M = N/D`.
    pub fn m(&self) -> usize {
        self.m
    }
    /// The number of slots `D`.
    pub fn slots(&self) -> usize {
        self.d
    }
    /// The ring degree `N = M·D`.
    pub fn degree(&self) -> usize {
        self.m * self.d
    }
    /// The root `ξ` of order `2N` with `ξ^D = b`.
    pub fn xi(&self) -> &BigInt {
        &self.xi
    }
    /// The length-`D` NTT plan (with `ω = ξ^(2M)`).
    pub fn ntt(&self) -> &CyclicNtt {
        &self.ntt
    }
    /// The slot exponents `e_i = 5^(i·M/2) mod 2N`: slot `i` is `f(ξ^(e_i))`.
    pub fn slot_exponents(&self) -> &[u64] {
        &self.exponents
    }

    /// The Galois element `5^(r·M/2) mod 2N` of `φ^r: X ↦ X^(5^(r·M/2))`, which rotates the
    /// slots left by `r` (spec §3.3). For `M = 1`: `5^r`, which rotates each of the two rows of
    /// `N/2` slots left by `r`.
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_math::bigint::BigInt;
    /// use coterie_math::zp_ntt::SlotEncoder;
    /// let enc = SlotEncoder::with_root(&BigInt::from(4), 2, 4, &BigInt::from(6)).unwrap();
    /// assert_eq!(enc.galois_element(1), 5); // X ↦ X^5 (Toy-A)
    /// assert_eq!(enc.galois_element(4), 1); // D rotations are the identity
    /// ```
    pub fn galois_element(&self, r: usize) -> u64 {
        let two_n = 2 * self.degree() as u64;
        if self.m == 1 {
            let half = (self.d / 2).max(1);
            return crate::modulus::pow_mod_u64(5, (r % half) as u64, two_n);
        }
        let rr = (r % self.d) as u64;
        crate::modulus::pow_mod_u64(5, rr * (self.m / 2) as u64, two_n)
    }

    fn check_len(&self, n: usize) -> Result<()> {
        if n != self.d {
            return Err(Error::Malformed(format!(
                "{n} coefficients or slots, expected D = {}",
                self.d
            )));
        }
        Ok(())
    }

    /// `Unpack(f)`: the `D` slots `f(ζ_i)` of a polynomial of degree `< D` (coefficients any
    /// integers, taken mod `p`). Errors if `f.len() ≠ D`.
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_math::bigint::BigInt;
    /// use coterie_math::zp_ntt::SlotEncoder;
    /// let enc = SlotEncoder::with_root(&BigInt::from(4), 2, 4, &BigInt::from(6)).unwrap();
    /// // The constant 5 is 5 in every slot.
    /// assert_eq!(enc.unpack(&[5, 0, 0, 0].map(BigInt::from)).unwrap(), [5; 4].map(BigInt::from));
    /// ```
    pub fn unpack(&self, f: &[BigInt]) -> Result<Vec<BigInt>> {
        let mut a = f.to_vec();
        self.unpack_in_place(&mut a)?;
        Ok(a)
    }

    /// [`SlotEncoder::unpack`] in place (no allocation beyond GMP's own).
    pub fn unpack_in_place(&self, a: &mut [BigInt]) -> Result<()> {
        self.map_in_place(a, Fast128::unpack, Self::unpack_big)
    }

    /// Runs a slot map in place: on words when `p < 2^128`, else on the big integers.
    fn map_in_place(
        &self,
        a: &mut [BigInt],
        words: WordMap,
        big: fn(&Self, &mut [BigInt]),
    ) -> Result<()> {
        self.check_len(a.len())?;
        match &self.fast {
            Some(f) => {
                let mut x = f.load(a, &self.p);
                words(f, &mut x, &self.swaps);
                f.store(&x, a);
            }
            None => big(self, a),
        }
        Ok(())
    }

    /// The big-integer `Unpack` (any `p`; the reference of the 128-bit path).
    fn unpack_big(&self, a: &mut [BigInt]) {
        let p = &self.p;
        let mut t = BigInt::new();
        for (x, w) in a.iter_mut().zip(&self.twist) {
            reduce(x, p);
            mul_mod_assign(x, w, p, &mut t);
        }
        self.ntt.forward_to_bitrev(a);
        for &(i, j) in &self.swaps {
            a.swap(i as usize, j as usize);
        }
    }

    /// `Pack(m)`: the unique polynomial of degree `< D` over `Z_p` with slots `m` (any integers,
    /// taken mod `p`). Errors if `slots.len() ≠ D`.
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_math::bigint::BigInt;
    /// use coterie_math::zp_ntt::SlotEncoder;
    /// let enc = SlotEncoder::with_root(&BigInt::from(4), 2, 4, &BigInt::from(6)).unwrap();
    /// let f = enc.pack(&[5; 4].map(BigInt::from)).unwrap();
    /// assert_eq!(f, [5, 0, 0, 0].map(BigInt::from)); // diagonal plaintexts are constants
    /// ```
    pub fn pack(&self, slots: &[BigInt]) -> Result<Vec<BigInt>> {
        let mut a = slots.to_vec();
        self.pack_in_place(&mut a)?;
        Ok(a)
    }

    /// [`SlotEncoder::pack`] in place (no allocation beyond GMP's own).
    pub fn pack_in_place(&self, a: &mut [BigInt]) -> Result<()> {
        self.map_in_place(a, Fast128::pack, Self::pack_big)
    }

    /// The big-integer `Pack` (any `p`; the reference of the 128-bit path).
    fn pack_big(&self, a: &mut [BigInt]) {
        let p = &self.p;
        for x in a.iter_mut() {
            reduce(x, p);
        }
        for &(i, j) in self.swaps.iter().rev() {
            a.swap(i as usize, j as usize);
        }
        self.ntt.inverse_from_bitrev(a);
        let mut t = BigInt::new();
        for (x, w) in a.iter_mut().zip(&self.untwist) {
            mul_mod_assign(x, w, p, &mut t);
        }
    }

    /// Reduces a polynomial of any degree (an element of `R`, a product, …) modulo `X^D − b`
    /// and `p`: `X^(qD + r) = b^q·X^r`. Returns `D` coefficients in `[0, p)`.
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_math::bigint::BigInt;
    /// use coterie_math::zp_ntt::SlotEncoder;
    /// let enc = SlotEncoder::with_root(&BigInt::from(4), 2, 4, &BigInt::from(6)).unwrap();
    /// // spec §8 Toy-A: the lift 3 + X^3 + 2X^4 − X^5 + X^6 + 2X^7 folds to 11 + 13X + 4X^2 + 9X^3.
    /// let lift = [3, 0, 0, 1, 2, -1, 1, 2].map(BigInt::from);
    /// assert_eq!(enc.fold(&lift), [11, 13, 4, 9].map(BigInt::from));
    /// ```
    pub fn fold(&self, coeffs: &[BigInt]) -> Vec<BigInt> {
        let p = &self.p;
        let mut out = vec![BigInt::new(); self.d];
        let mut t = BigInt::new();
        // Horner over the blocks from the top: acc ← acc·b + block.
        for (bi, block) in coeffs.chunks(self.d).rev().enumerate() {
            if bi > 0 {
                for x in out.iter_mut() {
                    mul_mod_assign(x, &self.b, p, &mut t);
                }
            }
            for (x, c) in out.iter_mut().zip(block.iter()) {
                *x += c;
                reduce(x, p);
            }
        }
        out
    }
}

/// Transpositions that, applied in order, perform the gather `a'[i] = a[σ(i)]` in place (and,
/// applied in reverse order, its inverse). Errors if `σ` is not a permutation.
/// A slot map on words: the 128-bit values and the transpositions to or from slot order.
type WordMap = fn(&Fast128, &mut [u128], &[(u32, u32)]);

/// `a·b` as a 256-bit `(low, high)` pair.
#[inline(always)]
fn mul_wide(a: u128, b: u128) -> (u128, u128) {
    let (a0, a1) = (a as u64 as u128, a >> 64);
    let (b0, b1) = (b as u64 as u128, b >> 64);
    let (ll, lh, hl, hh) = (a0 * b0, a0 * b1, a1 * b0, a1 * b1);
    // ll + (lh + hl)·2^64 + hh·2^128, carries tracked word by word.
    let (mid, c1) = lh.overflowing_add(hl);
    let (lo, c2) = ll.overflowing_add(mid << 64);
    let hi = hh + (mid >> 64) + ((c1 as u128) << 64) + c2 as u128;
    (lo, hi)
}

/// Montgomery arithmetic modulo an odd `p < 2^128` with `R = 2^128`: [`Mont128::mul`] of
/// `x` by `w·R mod p` is `x·w mod p`, so the slot maps keep their values in normal form and their
/// constants in Montgomery form.
#[derive(Debug, Clone)]
struct Mont128 {
    p: u128,
    /// `−p^(−1) mod 2^128`.
    neg_inv: u128,
}

impl Mont128 {
    fn new(p: u128) -> Self {
        // Newton's iteration for p^(−1) mod 2^128: p·p ≡ 1 (mod 8) for odd p, and each step
        // doubles the correct low bits (3 → 6 → … → 192).
        let mut inv = p;
        for _ in 0..6 {
            inv = inv.wrapping_mul(2u128.wrapping_sub(p.wrapping_mul(inv)));
        }
        debug_assert_eq!(p.wrapping_mul(inv), 1);
        Self {
            p,
            neg_inv: inv.wrapping_neg(),
        }
    }

    /// `a·b·R^(−1) mod p` for `a, b < p`.
    #[inline(always)]
    fn mul(&self, a: u128, b: u128) -> u128 {
        let (lo, hi) = mul_wide(a, b);
        let m = lo.wrapping_mul(self.neg_inv);
        let (_, mhi) = mul_wide(m, self.p);
        // lo + low(m·p) ≡ 0 (mod 2^128): it carries exactly when lo ≠ 0.
        let carry = (lo != 0) as u128;
        // (a·b + m·p)/R < 2p may exceed 2^128: subtract p on overflow or when ≥ p.
        let (u, o1) = hi.overflowing_add(mhi);
        let (u, o2) = u.overflowing_add(carry);
        if o1 || o2 || u >= self.p {
            u.wrapping_sub(self.p)
        } else {
            u
        }
    }

    #[inline(always)]
    fn add(&self, a: u128, b: u128) -> u128 {
        let (s, o) = a.overflowing_add(b);
        if o || s >= self.p {
            s.wrapping_sub(self.p)
        } else {
            s
        }
    }

    #[inline(always)]
    fn sub(&self, a: u128, b: u128) -> u128 {
        if a >= b {
            a - b
        } else {
            a.wrapping_sub(b).wrapping_add(self.p)
        }
    }
}

/// [`SlotEncoder`]'s maps for `p < 2^128`: the same transforms as the big-integer code (tested
/// equal), on `u128` words with the twiddles and twists in Montgomery form.
#[derive(Debug, Clone)]
struct Fast128 {
    mont: Mont128,
    fwd: Vec<u128>,
    inv: Vec<u128>,
    twist: Vec<u128>,
    untwist: Vec<u128>,
}

impl Fast128 {
    fn new(p: &BigInt, ntt: &CyclicNtt, twist: &[BigInt], untwist: &[BigInt]) -> Option<Self> {
        let pw = p.to_u128()?;
        let mont = Mont128::new(pw);
        let r = BigInt::from(1u32) << 128u32;
        let to_mont = |v: &[BigInt]| -> Option<Vec<u128>> {
            v.iter()
                .map(|x| BigInt::from(x * &r).modulo(p).to_u128())
                .collect()
        };
        Some(Self {
            mont,
            fwd: to_mont(&ntt.fwd)?,
            inv: to_mont(&ntt.inv)?,
            twist: to_mont(twist)?,
            untwist: to_mont(untwist)?,
        })
    }

    /// The values mod `p` as words.
    fn load(&self, a: &[BigInt], p: &BigInt) -> Vec<u128> {
        a.iter()
            .map(|x| match x.to_u128() {
                Some(w) if w < self.mont.p => w,
                _ => BigInt::from(x.modulo_ref(p)).to_u128().unwrap_or(0),
            })
            .collect()
    }

    fn store(&self, x: &[u128], a: &mut [BigInt]) {
        for (dst, &w) in a.iter_mut().zip(x) {
            dst.assign(w);
        }
    }

    fn unpack(&self, a: &mut [u128], swaps: &[(u32, u32)]) {
        let m = &self.mont;
        for (x, &w) in a.iter_mut().zip(&self.twist) {
            *x = m.mul(*x, w);
        }
        // Gentleman–Sande, natural order in, bit-reversed out (as CyclicNtt::forward_to_bitrev).
        let n = a.len();
        let mut half = n / 2;
        while half >= 1 {
            let stride = n / (2 * half);
            for block in a.chunks_exact_mut(2 * half) {
                let (lo, hi) = block.split_at_mut(half);
                for (j, (x, y)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                    let t = m.sub(*x, *y);
                    *x = m.add(*x, *y);
                    *y = if j == 0 {
                        t
                    } else {
                        m.mul(t, self.fwd[j * stride])
                    };
                }
            }
            half /= 2;
        }
        for &(i, j) in swaps {
            a.swap(i as usize, j as usize);
        }
    }

    fn pack(&self, a: &mut [u128], swaps: &[(u32, u32)]) {
        let m = &self.mont;
        for &(i, j) in swaps.iter().rev() {
            a.swap(i as usize, j as usize);
        }
        // Cooley–Tukey with ω^(−1), bit-reversed in, natural out (as
        // CyclicNtt::inverse_from_bitrev); the untwist carries D^(−1).
        let n = a.len();
        let mut half = 1;
        while half < n {
            let stride = n / (2 * half);
            for block in a.chunks_exact_mut(2 * half) {
                let (lo, hi) = block.split_at_mut(half);
                for (j, (x, y)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                    let v = if j == 0 {
                        *y
                    } else {
                        m.mul(*y, self.inv[j * stride])
                    };
                    *y = m.sub(*x, v);
                    *x = m.add(*x, v);
                }
            }
            half *= 2;
        }
        for (x, &w) in a.iter_mut().zip(&self.untwist) {
            *x = m.mul(*x, w);
        }
    }
}

fn gather_swaps(sigma: &[usize]) -> Result<Vec<(u32, u32)>> {
    let n = sigma.len();
    let mut seen = vec![false; n];
    for &s in sigma {
        if s >= n || seen[s] {
            return Err(invalid("internal: the slot order is not a permutation"));
        }
        seen[s] = true;
    }
    let mut done = vec![false; n];
    let mut swaps = Vec::with_capacity(n);
    for start in 0..n {
        if done[start] {
            continue;
        }
        done[start] = true;
        let mut k = start;
        while sigma[k] != start {
            swaps.push((k as u32, sigma[k] as u32));
            k = sigma[k];
            done[k] = true;
        }
    }
    Ok(swaps)
}

#[cfg(test)]
mod tests;
