//! Elements of `R_Q = Z_Q[X]/(X^N+1)` in RNS form, in coefficient or NTT representation.
//!
//! A [`RingContext`] fixes the degree `N` and the RNS basis `Q = q_0 ⋯ q_{L-1}` (NTT-friendly
//! primes) with one NTT plan per prime. A [`Poly`] holds `L·N` residues, limb-major
//! (`data[i*N + c]` is coefficient/slot `c` modulo `q_i`), and its [`Representation`].
//!
//! Arithmetic between polynomials of different contexts or representations is a programming
//! error: the `try_*` methods return [`Error::Mismatch`], the operator forms (`+`, `-`, `*`) panic
//! with a clear message. Decoding from bytes ([`Poly::from_bytes`]) validates everything and never
//! panics.
//!
//! ```
//! use coterie_math::poly::{Poly, Representation, RingContext};
//! use coterie_math::primes::ntt_primes;
//! let ctx = RingContext::new(1024, &ntt_primes(55, 1024, 4).unwrap()).unwrap();
//! // (1 + X) · (1 − X) = 1 − X^2
//! let mut a = Poly::from_signed(&ctx, &[1, 1]).unwrap();
//! let mut b = Poly::from_signed(&ctx, &[1, -1]).unwrap();
//! a.to_ntt();
//! b.to_ntt();
//! let mut c = &a * &b;
//! c.to_coeff();
//! assert_eq!(&c.to_signed().unwrap()[..3], &[1, 0, -1]);
//! ```

use crate::bigint::BigInt;
use crate::modulus::Modulus;
use crate::ntt::NttPlan;
use crate::rns::RnsBasis;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The ring `Z_Q[X]/(X^N+1)` with its RNS basis and NTT plans.
#[derive(Debug)]
pub struct RingContext {
    n: usize,
    moduli: Vec<Modulus>,
    plans: Vec<NttPlan>,
    basis: RnsBasis,
}

impl RingContext {
    /// Builds the context for degree `n` (power of two, `16 ≤ n ≤ 2^17`) and distinct NTT-friendly
    /// primes `moduli` (each `≡ 1 mod 2n`, below `2^62`).
    pub fn new(n: usize, moduli: &[u64]) -> Result<Arc<Self>> {
        let basis = RnsBasis::new(moduli)?;
        let plans = moduli
            .iter()
            .map(|&q| NttPlan::new(n, q))
            .collect::<Result<Vec<_>>>()?;
        Ok(Arc::new(RingContext {
            n,
            moduli: basis.moduli().to_vec(),
            plans,
            basis,
        }))
    }

    /// Ring degree `N`.
    pub fn degree(&self) -> usize {
        self.n
    }

    /// Number of RNS limbs `L`.
    pub fn limbs(&self) -> usize {
        self.moduli.len()
    }

    /// The moduli `q_i`.
    pub fn moduli(&self) -> &[Modulus] {
        &self.moduli
    }

    /// The RNS basis (CRT data).
    pub fn basis(&self) -> &RnsBasis {
        &self.basis
    }

    /// NTT plan of limb `i`.
    pub fn plan(&self, i: usize) -> &NttPlan {
        &self.plans[i]
    }

    fn same(self: &Arc<Self>, other: &Arc<Self>) -> bool {
        Arc::ptr_eq(self, other) || (self.n == other.n && self.moduli == other.moduli)
    }
}

/// Which domain a [`Poly`]'s residues are in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Representation {
    /// Coefficients of the polynomial.
    Coefficient,
    /// Evaluations at the primitive `2N`-th roots of unity (NTT slots).
    Ntt,
}

/// An element of `R_Q` in RNS form.
#[derive(Clone, Debug)]
pub struct Poly {
    ctx: Arc<RingContext>,
    repr: Representation,
    data: Vec<u64>,
}

impl PartialEq for Poly {
    fn eq(&self, other: &Self) -> bool {
        self.ctx.same(&other.ctx) && self.repr == other.repr && self.data == other.data
    }
}
impl Eq for Poly {}

impl Poly {
    /// Tag of the envelope of [`Poly::to_bytes`].
    pub const TAG: [u8; 4] = *b"POLY";
    /// Version of the binary format of [`Poly::to_bytes`]. Version 2: the version byte that
    /// opened the version-1 encoding is the envelope's now; the payload after it is unchanged.
    pub const VERSION: u16 = 2;
    /// Bytes of the payload before the moduli: representation, `log2 N`, limb count.
    const PAYLOAD_HEADER: usize = 3;

    /// The zero polynomial.
    pub fn zero(ctx: &Arc<RingContext>, repr: Representation) -> Self {
        Poly {
            ctx: ctx.clone(),
            repr,
            data: vec![0; ctx.n * ctx.limbs()],
        }
    }

    /// Builds a polynomial from limb-major residues (`L·N` words, each below its modulus).
    pub fn from_residues(
        ctx: &Arc<RingContext>,
        repr: Representation,
        data: Vec<u64>,
    ) -> Result<Self> {
        if data.len() != ctx.n * ctx.limbs() {
            return Err(Error::Malformed(format!(
                "{} residues for N = {} and {} limbs",
                data.len(),
                ctx.n,
                ctx.limbs()
            )));
        }
        for (i, m) in ctx.moduli.iter().enumerate() {
            if data[i * ctx.n..(i + 1) * ctx.n]
                .iter()
                .any(|&x| x >= m.value())
            {
                return Err(Error::Malformed(format!("residue ≥ modulus {}", m.value())));
            }
        }
        Ok(Poly {
            ctx: ctx.clone(),
            repr,
            data,
        })
    }

    /// The residues packed at the bit width of their primes (limb `i` at `bits(q_i)` bits per
    /// residue, limb-major, LSB first, one stream): `⌈N·Σ_i bits(q_i) / 8⌉` bytes, i.e. `log q`
    /// bits per coefficient, against 8 bytes per residue (or 9 in varint) unpacked.
    ///
    /// ```
    /// use coterie_math::poly::{Poly, Representation, RingContext};
    /// let ctx = RingContext::new(16, &[97, 193]).unwrap(); // 7 + 8 bits
    /// let p = Poly::from_signed(&ctx, &[1, -2, 3]).unwrap();
    /// let bytes = p.to_packed();
    /// assert_eq!(bytes.len(), 16 * 15 / 8);
    /// assert_eq!(Poly::from_packed(&ctx, Representation::Coefficient, &bytes).unwrap(), p);
    /// ```
    pub fn to_packed(&self) -> Vec<u8> {
        let n = self.ctx.n;
        let bits: u64 = self
            .ctx
            .moduli
            .iter()
            .map(|m| u64::from(modulus_bits(m)))
            .sum();
        let mut w =
            coterie_base::bits::BitWriter::with_capacity((n as u64 * bits).div_ceil(8) as usize);
        for (i, m) in self.ctx.moduli.iter().enumerate() {
            let b = modulus_bits(m);
            for &x in &self.data[i * n..(i + 1) * n] {
                w.put(x, b);
            }
        }
        w.finish()
    }

    /// Decodes [`Poly::to_packed`] for `ctx` in representation `repr`: the length must be exact
    /// and every residue reduced (an error, never a panic, otherwise).
    pub fn from_packed(ctx: &Arc<RingContext>, repr: Representation, bytes: &[u8]) -> Result<Self> {
        let n = ctx.n;
        let bits: u64 = ctx.moduli.iter().map(|m| u64::from(modulus_bits(m))).sum();
        let need = (n as u64 * bits).div_ceil(8);
        if bytes.len() as u64 != need {
            return Err(Error::Malformed(format!(
                "{} bytes for a packed polynomial of N = {n} and {bits} bits per coefficient \
                 (expected {need})",
                bytes.len()
            )));
        }
        let mut r = coterie_base::bits::BitReader::new(bytes);
        let mut data = Vec::with_capacity(n * ctx.limbs());
        for m in &ctx.moduli {
            let b = modulus_bits(m);
            for _ in 0..n {
                let x = r
                    .get(b)
                    .ok_or_else(|| Error::Malformed("packed polynomial too short".into()))?;
                data.push(x);
            }
        }
        Self::from_residues(ctx, repr, data)
    }

    /// Coefficient-form polynomial from small signed coefficients (at most `N` of them; the rest
    /// are zero).
    pub fn from_signed(ctx: &Arc<RingContext>, coeffs: &[i64]) -> Result<Self> {
        check_coeff_count(ctx, coeffs.len())?;
        let mut p = Poly::zero(ctx, Representation::Coefficient);
        for (i, m) in ctx.moduli.iter().enumerate() {
            let limb = &mut p.data[i * ctx.n..(i + 1) * ctx.n];
            for (d, &c) in limb.iter_mut().zip(coeffs) {
                *d = m.reduce_i64(c);
            }
        }
        Ok(p)
    }

    /// Coefficient-form polynomial from big-integer coefficients (any sign, reduced mod `Q`).
    pub fn from_bigints(ctx: &Arc<RingContext>, coeffs: &[BigInt]) -> Result<Self> {
        check_coeff_count(ctx, coeffs.len())?;
        let mut p = Poly::zero(ctx, Representation::Coefficient);
        for (c, x) in coeffs.iter().enumerate() {
            for (i, r) in ctx.basis.decompose(x).into_iter().enumerate() {
                p.data[i * ctx.n + c] = r;
            }
        }
        Ok(p)
    }

    /// Uniformly random polynomial from a cryptographic RNG (directly usable in either
    /// representation, since the NTT is a bijection).
    pub fn random<R: rand::CryptoRng + ?Sized>(
        ctx: &Arc<RingContext>,
        repr: Representation,
        rng: &mut R,
    ) -> Self {
        let mut p = Poly::zero(ctx, repr);
        for (i, m) in ctx.moduli.iter().enumerate() {
            crate::sample::uniform_mod(rng, m.value(), &mut p.data[i * ctx.n..(i + 1) * ctx.n])
                .expect("a Modulus is always a valid sampling bound");
        }
        p
    }

    /// Public uniform polynomial expanded from a 32-byte seed and a domain-separation label with
    /// the crate's XOF ([`crate::prg::expand_uniform_mod`]): a common reference string is a seed.
    /// The same `(seed, label, ring)` gives the same polynomial on every machine.
    pub fn from_seed(
        ctx: &Arc<RingContext>,
        repr: Representation,
        seed: &crate::prg::Seed,
        label: &[u8],
    ) -> Result<Self> {
        let moduli: Vec<u64> = ctx.moduli.iter().map(|m| m.value()).collect();
        let data = crate::prg::expand_uniform_mod(seed, label, &moduli, ctx.n)?;
        Ok(Poly {
            ctx: ctx.clone(),
            repr,
            data,
        })
    }

    /// The ring context.
    pub fn context(&self) -> &Arc<RingContext> {
        &self.ctx
    }

    /// Current representation.
    pub fn representation(&self) -> Representation {
        self.repr
    }

    /// All residues, limb-major.
    pub fn data(&self) -> &[u64] {
        &self.data
    }

    /// Mutable access to all residues, limb-major. The caller keeps them reduced.
    pub fn data_mut(&mut self) -> &mut [u64] {
        &mut self.data
    }

    /// Residues modulo `q_i`.
    pub fn limb(&self, i: usize) -> &[u64] {
        &self.data[i * self.ctx.n..(i + 1) * self.ctx.n]
    }

    /// Mutable residues modulo `q_i`.
    pub fn limb_mut(&mut self, i: usize) -> &mut [u64] {
        let n = self.ctx.n;
        &mut self.data[i * n..(i + 1) * n]
    }

    /// Converts to the NTT representation (no-op if already there).
    pub fn to_ntt(&mut self) {
        if self.repr == Representation::Ntt {
            return;
        }
        let n = self.ctx.n;
        for (limb, plan) in self.data.chunks_exact_mut(n).zip(&self.ctx.plans) {
            plan.forward(limb);
        }
        self.repr = Representation::Ntt;
    }

    /// Converts to the coefficient representation (no-op if already there).
    pub fn to_coeff(&mut self) {
        if self.repr == Representation::Coefficient {
            return;
        }
        let n = self.ctx.n;
        for (limb, plan) in self.data.chunks_exact_mut(n).zip(&self.ctx.plans) {
            plan.inverse(limb);
        }
        self.repr = Representation::Coefficient;
    }

    fn check(&self, other: &Poly) -> Result<()> {
        if !self.ctx.same(&other.ctx) {
            return Err(Error::Mismatch("polynomials from different rings".into()));
        }
        if self.repr != other.repr {
            return Err(Error::Mismatch(format!(
                "representations differ: {:?} vs {:?}",
                self.repr, other.repr
            )));
        }
        Ok(())
    }

    fn zip_limbs(&mut self, other: &Poly, f: impl Fn(&Modulus, u64, u64) -> u64) {
        let n = self.ctx.n;
        for ((a, b), m) in self
            .data
            .chunks_exact_mut(n)
            .zip(other.data.chunks_exact(n))
            .zip(&self.ctx.moduli)
        {
            for (x, &y) in a.iter_mut().zip(b) {
                *x = f(m, *x, y);
            }
        }
    }

    /// `self += other`.
    pub fn try_add_assign(&mut self, other: &Poly) -> Result<()> {
        self.check(other)?;
        self.zip_limbs(other, |m, a, b| m.add(a, b));
        Ok(())
    }

    /// `self -= other`.
    pub fn try_sub_assign(&mut self, other: &Poly) -> Result<()> {
        self.check(other)?;
        self.zip_limbs(other, |m, a, b| m.sub(a, b));
        Ok(())
    }

    /// `self *= other`; both must be in NTT representation.
    pub fn try_mul_assign(&mut self, other: &Poly) -> Result<()> {
        self.check(other)?;
        if self.repr != Representation::Ntt {
            return Err(Error::Mismatch(
                "ring product needs the NTT representation".into(),
            ));
        }
        let n = self.ctx.n;
        for ((a, b), m) in self
            .data
            .chunks_exact_mut(n)
            .zip(other.data.chunks_exact(n))
            .zip(&self.ctx.moduli)
        {
            pointwise_mul_assign(m, a, b);
        }
        Ok(())
    }

    /// `out = a · b` into an existing buffer (no allocation); all three in NTT representation
    /// and the same ring.
    pub fn mul_into(out: &mut Poly, a: &Poly, b: &Poly) -> Result<()> {
        a.check(b)?;
        out.check(a)?;
        if a.repr != Representation::Ntt {
            return Err(Error::Mismatch(
                "ring product needs the NTT representation".into(),
            ));
        }
        let n = a.ctx.n;
        for (((o, x), y), m) in out
            .data
            .chunks_exact_mut(n)
            .zip(a.data.chunks_exact(n))
            .zip(b.data.chunks_exact(n))
            .zip(&a.ctx.moduli)
        {
            pointwise_mul(m, o, x, y);
        }
        Ok(())
    }

    /// `self += a · b` (NTT representation), the inner-product kernel of key switching.
    pub fn try_mul_acc(&mut self, a: &Poly, b: &Poly) -> Result<()> {
        a.check(b)?;
        self.check(a)?;
        if a.repr != Representation::Ntt {
            return Err(Error::Mismatch(
                "ring product needs the NTT representation".into(),
            ));
        }
        let n = a.ctx.n;
        for (i, ((acc, x), y)) in self
            .data
            .chunks_exact_mut(n)
            .zip(a.data.chunks_exact(n))
            .zip(b.data.chunks_exact(n))
            .enumerate()
        {
            self.ctx.plans[i].mul_acc(acc, x, y);
        }
        Ok(())
    }

    /// `self = −self`.
    pub fn neg_assign(&mut self) {
        let n = self.ctx.n;
        for (limb, m) in self.data.chunks_exact_mut(n).zip(&self.ctx.moduli) {
            for x in limb {
                *x = m.neg(*x);
            }
        }
    }

    /// Multiplies by a scalar given by its residues (one per limb, each below its modulus).
    pub fn mul_scalar_residues(&mut self, scalar: &[u64]) -> Result<()> {
        if scalar.len() != self.ctx.limbs() {
            return Err(Error::Mismatch("scalar residue count".into()));
        }
        let n = self.ctx.n;
        for ((limb, m), &s) in self
            .data
            .chunks_exact_mut(n)
            .zip(&self.ctx.moduli)
            .zip(scalar)
        {
            let s = m.reduce(s);
            let ss = m.shoup(s);
            for x in limb {
                *x = m.mul_shoup(*x, s, ss);
            }
        }
        Ok(())
    }

    /// Multiplies by an integer scalar (any sign, any size).
    pub fn mul_scalar(&mut self, scalar: &BigInt) {
        let residues = self.ctx.basis.decompose(scalar);
        self.mul_scalar_residues(&residues)
            .expect("residue count matches the context");
    }

    /// Multiplies by the monomial `X^k` (any `k`; `X^N = −1`, so `k` is taken mod `2N`) in
    /// coefficient representation: a negacyclic shift of every limb, no arithmetic beyond
    /// negation.
    ///
    /// ```
    /// use coterie_math::poly::{Poly, RingContext};
    /// let ctx = RingContext::new(16, &[97]).unwrap();
    /// let mut c = vec![0i64; 16];
    /// (c[0], c[1], c[15]) = (1, 2, 3);
    /// let p = Poly::from_signed(&ctx, &c).unwrap();
    /// // (1 + 2X + 3X^15)·X = −3 + X + 2X^2
    /// let mut want = vec![0i64; 16];
    /// (want[0], want[1], want[2]) = (-3, 1, 2);
    /// assert_eq!(p.mul_monomial(1).unwrap().to_signed().unwrap(), want);
    /// assert_eq!(p.mul_monomial(33).unwrap(), p.mul_monomial(1).unwrap());
    /// let neg = p.mul_monomial(16).unwrap().to_signed().unwrap();
    /// assert_eq!(neg, c.iter().map(|x| -x).collect::<Vec<_>>());
    /// ```
    pub fn mul_monomial(&self, k: usize) -> Result<Poly> {
        if self.repr != Representation::Coefficient {
            return Err(Error::Mismatch(
                "monomial product needs coefficient representation".into(),
            ));
        }
        let n = self.ctx.n;
        let k = k % (2 * n);
        let (neg_all, k) = if k >= n { (true, k - n) } else { (false, k) };
        let mut out = Poly::zero(&self.ctx, self.repr);
        for (i, m) in self.ctx.moduli.iter().enumerate() {
            let src = &self.data[i * n..(i + 1) * n];
            let dst = &mut out.data[i * n..(i + 1) * n];
            // Coefficients c < n − k move up by k; the others wrap around with a sign.
            for (d, &x) in dst[k..].iter_mut().zip(&src[..n - k]) {
                *d = if neg_all { m.neg(x) } else { x };
            }
            for (d, &x) in dst[..k].iter_mut().zip(&src[n - k..]) {
                *d = if neg_all { x } else { m.neg(x) };
            }
        }
        Ok(out)
    }

    /// `self += X^k·other` (`k` mod `2N`) in coefficient representation, in place: the
    /// accumulation of monomial multiples without the temporary of
    /// [`Poly::mul_monomial`] (a proof verifier sums hundreds of them).
    ///
    /// ```
    /// use coterie_math::poly::{Poly, RingContext};
    /// let ctx = RingContext::new(16, &[97]).unwrap();
    /// let mut c = vec![0i64; 16];
    /// (c[0], c[15]) = (1, 3);
    /// let p = Poly::from_signed(&ctx, &c).unwrap();
    /// let mut acc = p.clone();
    /// acc.add_mul_monomial(&p, 1).unwrap();
    /// let mut want = p.mul_monomial(1).unwrap();
    /// want.try_add_assign(&p).unwrap();
    /// assert_eq!(acc, want);
    /// ```
    pub fn add_mul_monomial(&mut self, other: &Poly, k: usize) -> Result<()> {
        if self.repr != Representation::Coefficient || other.repr != Representation::Coefficient {
            return Err(Error::Mismatch(
                "monomial accumulation needs coefficient representation".into(),
            ));
        }
        if !Arc::ptr_eq(&self.ctx, &other.ctx) && self.ctx.moduli() != other.ctx.moduli() {
            return Err(Error::Mismatch(
                "monomial accumulation over other rings".into(),
            ));
        }
        let n = self.ctx.n;
        let k = k % (2 * n);
        let (neg_all, k) = if k >= n { (true, k - n) } else { (false, k) };
        for (i, m) in self.ctx.moduli.iter().enumerate() {
            let src = &other.data[i * n..(i + 1) * n];
            let dst = &mut self.data[i * n..(i + 1) * n];
            let (lo, hi) = dst.split_at_mut(k);
            // coefficients c < n − k move up by k (sign +, or − if k ≥ n); the rest wrap with
            // the opposite sign
            for (d, &x) in hi.iter_mut().zip(&src[..n - k]) {
                *d = if neg_all { m.sub(*d, x) } else { m.add(*d, x) };
            }
            for (d, &x) in lo.iter_mut().zip(&src[n - k..]) {
                *d = if neg_all { m.add(*d, x) } else { m.sub(*d, x) };
            }
        }
        Ok(())
    }

    /// The automorphism `X → X^g` (`g` odd), in the current representation.
    pub fn automorphism(&self, g: usize) -> Result<Poly> {
        let n = self.ctx.n;
        if g.is_multiple_of(2) {
            return Err(Error::InvalidParameter(format!(
                "automorphism exponent {g} is even"
            )));
        }
        let mut out = Poly::zero(&self.ctx, self.repr);
        match self.repr {
            Representation::Coefficient => {
                // `N` is a power of two: `k mod 2N` is a mask, not a division per word.
                let mask = 2 * n - 1;
                let g = g & mask;
                for (i, m) in self.ctx.moduli.iter().enumerate() {
                    let src = &self.data[i * n..(i + 1) * n];
                    let dst = &mut out.data[i * n..(i + 1) * n];
                    for (c, &x) in src.iter().enumerate() {
                        let k = (c * g) & mask;
                        if k < n {
                            dst[k] = x;
                        } else {
                            dst[k - n] = m.neg(x);
                        }
                    }
                }
            }
            Representation::Ntt => {
                for i in 0..self.ctx.limbs() {
                    let perm = self.ctx.plans[i].automorphism_permutation(g)?;
                    let src = &self.data[i * n..(i + 1) * n];
                    let dst = &mut out.data[i * n..(i + 1) * n];
                    for (d, &p) in dst.iter_mut().zip(&perm) {
                        *d = src[p as usize];
                    }
                }
            }
        }
        Ok(out)
    }

    /// Centered big-integer coefficients (in `(-Q/2, Q/2]`); requires coefficient representation.
    pub fn to_bigints(&self) -> Result<Vec<BigInt>> {
        if self.repr != Representation::Coefficient {
            return Err(Error::Mismatch(
                "to_bigints needs the coefficient representation".into(),
            ));
        }
        let n = self.ctx.n;
        let l = self.ctx.limbs();
        let mut r = vec![0u64; l];
        (0..n)
            .map(|c| {
                for (i, ri) in r.iter_mut().enumerate() {
                    *ri = self.data[i * n + c];
                }
                self.ctx.basis.reconstruct_centered(&r)
            })
            .collect()
    }

    /// Centered coefficients as `i64`, or an error if any does not fit.
    pub fn to_signed(&self) -> Result<Vec<i64>> {
        self.to_bigints()?
            .into_iter()
            .map(|x| {
                x.to_i64()
                    .ok_or_else(|| Error::Malformed("coefficient does not fit in i64".into()))
            })
            .collect()
    }

    /// Infinity norm of the centered coefficients, as a big integer.
    pub fn norm_inf(&self) -> Result<BigInt> {
        Ok(self
            .to_bigints()?
            .into_iter()
            .map(|x| x.abs())
            .max()
            .unwrap_or_default())
    }

    /// Serializes in the one envelope (tag `POLY`, [`Poly::VERSION`]) around a little-endian
    /// payload: representation byte, `log2 N` byte, limb count byte, the `L` moduli, then the
    /// `L·N` residues.
    ///
    /// # Panics
    /// If the payload reaches 4 GiB (`L·N ≥ 2^29` residues), beyond what an envelope can hold.
    pub fn to_bytes(&self) -> Vec<u8> {
        let n = self.ctx.n;
        let l = self.ctx.limbs();
        let mut out = Vec::with_capacity(Self::PAYLOAD_HEADER + 8 * l + 8 * n * l);
        out.push(match self.repr {
            Representation::Coefficient => 0,
            Representation::Ntt => 1,
        });
        out.push(n.trailing_zeros() as u8);
        out.push(l as u8);
        for m in &self.ctx.moduli {
            out.extend_from_slice(&m.value().to_le_bytes());
        }
        for &x in &self.data {
            out.extend_from_slice(&x.to_le_bytes());
        }
        match coterie_base::envelope::seal_bytes(Self::TAG, Self::VERSION, &out) {
            Ok(b) => b,
            Err(e) => panic!("polynomial payload does not fit an envelope: {e}"),
        }
    }

    /// Decodes [`Poly::to_bytes`] output for the given context. Rejects a bad envelope (tag,
    /// version, a payload longer than this ring's, trailing bytes), a wrong ring, length or
    /// unreduced residue with an error.
    pub fn from_bytes(ctx: &Arc<RingContext>, bytes: &[u8]) -> Result<Self> {
        let n = ctx.n;
        let l = ctx.limbs();
        let expect = Self::PAYLOAD_HEADER + 8 * l + 8 * n * l;
        let bytes = coterie_base::envelope::open_bytes(Self::TAG, Self::VERSION, bytes, expect)
            .map_err(|e| Error::Malformed(format!("polynomial: {e}")))?;
        if bytes.len() != expect {
            return Err(Error::Malformed(format!(
                "polynomial encoding has {} payload bytes, expected {expect}",
                bytes.len()
            )));
        }
        let repr = match bytes[0] {
            0 => Representation::Coefficient,
            1 => Representation::Ntt,
            r => return Err(Error::Malformed(format!("unknown representation tag {r}"))),
        };
        if bytes[1] as u32 != n.trailing_zeros() || bytes[2] as usize != l {
            return Err(Error::Mismatch(
                "polynomial encoded for another ring".into(),
            ));
        }
        let words: Vec<u64> = bytes[Self::PAYLOAD_HEADER..]
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("chunk of 8")))
            .collect();
        if words[..l]
            .iter()
            .zip(&ctx.moduli)
            .any(|(&w, m)| w != m.value())
        {
            return Err(Error::Mismatch(
                "polynomial encoded for other moduli".into(),
            ));
        }
        Poly::from_residues(ctx, repr, words[l..].to_vec())
    }
}

/// Rejects more than `N` coefficients for the ring of `ctx`.
fn check_coeff_count(ctx: &RingContext, count: usize) -> Result<()> {
    if count > ctx.n {
        return Err(Error::Malformed(format!(
            "{count} coefficients for degree {}",
            ctx.n
        )));
    }
    Ok(())
}

/// `out[i] = a[i]·b[i] mod q` (AVX2+FMA kernel for `q < 2^50`, see [`crate::kernels`]).
#[inline]
pub fn pointwise_mul(m: &Modulus, out: &mut [u64], a: &[u64], b: &[u64]) {
    crate::kernels::mul_mod(m, out, a, b);
}

/// `a[i] = a[i]·b[i] mod q`.
#[inline]
pub fn pointwise_mul_assign(m: &Modulus, a: &mut [u64], b: &[u64]) {
    crate::kernels::mul_mod_assign(m, a, b);
}

macro_rules! impl_ops {
    ($tr:ident, $f:ident, $tra:ident, $fa:ident, $method:ident) => {
        impl std::ops::$tra<&Poly> for Poly {
            fn $fa(&mut self, rhs: &Poly) {
                self.$method(rhs).expect(concat!("Poly ", stringify!($f)));
            }
        }
        impl std::ops::$tr<&Poly> for &Poly {
            type Output = Poly;
            fn $f(self, rhs: &Poly) -> Poly {
                let mut out = self.clone();
                out.$method(rhs).expect(concat!("Poly ", stringify!($f)));
                out
            }
        }
    };
}
impl_ops!(Add, add, AddAssign, add_assign, try_add_assign);
impl_ops!(Sub, sub, SubAssign, sub_assign, try_sub_assign);
impl_ops!(Mul, mul, MulAssign, mul_assign, try_mul_assign);

impl std::ops::Neg for &Poly {
    type Output = Poly;
    fn neg(self) -> Poly {
        let mut out = self.clone();
        out.neg_assign();
        out
    }
}

/// Bits of a modulus value (the width its residues are packed at).
fn modulus_bits(m: &crate::modulus::Modulus) -> u32 {
    64 - m.value().leading_zeros()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primes::ntt_primes;
    use proptest::prelude::*;

    fn ctx(n: usize, l: usize) -> Arc<RingContext> {
        RingContext::new(n, &ntt_primes(55, n, l).unwrap()).unwrap()
    }

    /// Schoolbook negacyclic product over the integers.
    fn naive_mul(a: &[BigInt], b: &[BigInt]) -> Vec<BigInt> {
        let n = a.len();
        let mut out = vec![BigInt::new(); n];
        for i in 0..n {
            for j in 0..n {
                let p = BigInt::from(&a[i] * &b[j]);
                if i + j < n {
                    out[i + j] += p;
                } else {
                    out[i + j - n] -= p;
                }
            }
        }
        out
    }

    fn big_coeffs(vals: &[i64], scale: i64) -> Vec<BigInt> {
        vals.iter()
            .map(|&v| {
                BigInt::from(v) * BigInt::from(scale) * BigInt::from(scale) * BigInt::from(scale)
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn ring_ops_match_bigint_reference(a in proptest::collection::vec(any::<i64>(), 32), b in proptest::collection::vec(-1000i64..1000, 32), g in (0usize..32).prop_map(|x| 2 * x + 1)) {
            let c = ctx(32, 4);
            let (ab, bb) = (big_coeffs(&a, 1 << 20), big_coeffs(&b, 1));
            let q = c.basis().product().clone();
            let reduce = |v: Vec<BigInt>| -> Vec<BigInt> {
                v.into_iter().map(|x| {
                    let mut r = x % &q;
                    if r < 0 { r += &q; }
                    if BigInt::from(&r * 2u32) > q { r -= &q; }
                    r
                }).collect()
            };
            let pa = Poly::from_bigints(&c, &ab).unwrap();
            let pb = Poly::from_bigints(&c, &bb).unwrap();
            prop_assert_eq!(pa.to_bigints().unwrap(), reduce(ab.clone()));
            // add, sub, neg
            let sum = &pa + &pb;
            prop_assert_eq!(sum.to_bigints().unwrap(), reduce(ab.iter().zip(&bb).map(|(x, y)| BigInt::from(x + y)).collect()));
            let diff = &pa - &pb;
            prop_assert_eq!(diff.to_bigints().unwrap(), reduce(ab.iter().zip(&bb).map(|(x, y)| BigInt::from(x - y)).collect()));
            prop_assert_eq!((-&pa).to_bigints().unwrap(), reduce(ab.iter().map(|x| BigInt::from(-x)).collect()));
            // product via NTT
            let (mut na, mut nb) = (pa.clone(), pb.clone());
            na.to_ntt();
            nb.to_ntt();
            let mut prod = &na * &nb;
            let mut acc = Poly::zero(&c, Representation::Ntt);
            acc.try_mul_acc(&na, &nb).unwrap();
            let mut into = Poly::zero(&c, Representation::Ntt);
            Poly::mul_into(&mut into, &na, &nb).unwrap();
            prop_assert_eq!(&acc, &prod);
            prop_assert_eq!(&into, &prod);
            prod.to_coeff();
            prop_assert_eq!(prod.to_bigints().unwrap(), reduce(naive_mul(&ab, &bb)));
            // scalar multiplication
            let s = BigInt::from(-123_456_789i64);
            let mut sc = pa.clone();
            sc.mul_scalar(&s);
            prop_assert_eq!(sc.to_bigints().unwrap(), reduce(ab.iter().map(|x| BigInt::from(x * &s)).collect()));
            // automorphism commutes with NTT
            let ac = pa.automorphism(g).unwrap();
            let mut an = na.automorphism(g).unwrap();
            an.to_coeff();
            prop_assert_eq!(&an, &ac);
            // and is a ring homomorphism: σ(a·b) = σ(a)·σ(b)
            let mut sab = (&na * &nb).automorphism(g).unwrap();
            let sa_sb = &na.automorphism(g).unwrap() * &nb.automorphism(g).unwrap();
            prop_assert_eq!(&sab, &sa_sb);
            sab.to_coeff();
        }
    }

    /// `mul_monomial` and `add_mul_monomial` against the schoolbook negacyclic product by `X^k`,
    /// for every `k < 2N` (and one above), on two limbs.
    #[test]
    fn monomial_products_match_schoolbook() {
        let ctx = RingContext::new(16, &[97, 193]).unwrap();
        let a: Vec<i64> = (0..16).map(|i| (i * 7 % 11) as i64 - 5).collect();
        let b: Vec<i64> = (0..16).map(|i| (i * 5 % 13) as i64 - 6).collect();
        let (pa, pb) = (
            Poly::from_signed(&ctx, &a).unwrap(),
            Poly::from_signed(&ctx, &b).unwrap(),
        );
        for k in 0..33usize {
            let mut want = vec![0i64; 16];
            for (i, &x) in a.iter().enumerate() {
                let e = (i + k) % 32;
                if e < 16 {
                    want[e] += x
                } else {
                    want[e - 16] -= x
                }
            }
            assert_eq!(
                pa.mul_monomial(k).unwrap().to_signed().unwrap(),
                want,
                "k = {k}"
            );
            let mut acc = pb.clone();
            acc.add_mul_monomial(&pa, k).unwrap();
            let sum: Vec<i64> = want.iter().zip(&b).map(|(x, y)| x + y).collect();
            assert_eq!(acc.to_signed().unwrap(), sum, "k = {k}");
        }
    }

    #[test]
    fn automorphism_on_monomial() {
        let c = ctx(64, 2);
        // X^5 under X → X^3 is X^15; X^30 → X^90 = X^(90-128)... 90 < 128 so -X^(90-64) = -X^26.
        let mut coeffs = vec![0i64; 64];
        coeffs[5] = 1;
        coeffs[30] = 2;
        let p = Poly::from_signed(&c, &coeffs).unwrap();
        let s = p.automorphism(3).unwrap().to_signed().unwrap();
        let mut want = vec![0i64; 64];
        want[15] = 1;
        want[26] = -2;
        assert_eq!(s, want);
    }

    #[test]
    fn mismatches_are_errors() {
        let c1 = ctx(32, 2);
        let c2 = ctx(64, 2);
        let a = Poly::zero(&c1, Representation::Coefficient);
        let mut b = Poly::zero(&c2, Representation::Coefficient);
        assert!(b.try_add_assign(&a).is_err());
        let mut a2 = a.clone();
        assert!(a2.try_mul_assign(&a).is_err()); // coefficient representation
        let n = Poly::zero(&c1, Representation::Ntt);
        assert!(a2.try_sub_assign(&n).is_err());
        assert!(a.automorphism(2).is_err());
        assert!(Poly::from_signed(&c1, &[0; 33]).is_err());
        assert!(Poly::from_residues(&c1, Representation::Ntt, vec![u64::MAX; 64]).is_err());
    }

    #[test]
    fn bytes_roundtrip_and_rejections() {
        let c = ctx(32, 3);
        let p = Poly::from_signed(&c, &(0..32).map(|i| i * 1000 - 7).collect::<Vec<_>>()).unwrap();
        let bytes = p.to_bytes();
        assert_eq!(Poly::from_bytes(&c, &bytes).unwrap(), p);
        let h = coterie_base::envelope::HEADER_LEN;
        // Truncated, extended, wrong version, wrong ring, unreduced residue.
        assert!(Poly::from_bytes(&c, &bytes[..bytes.len() - 1]).is_err());
        let mut long = bytes.clone();
        long.push(0);
        assert!(Poly::from_bytes(&c, &long).is_err());
        let mut bad = bytes.clone();
        bad[8..10].copy_from_slice(&1u16.to_le_bytes());
        let e = Poly::from_bytes(&c, &bad).unwrap_err().to_string();
        assert!(e.contains("version 1"), "{e}");
        let mut tag = bytes.clone();
        tag[4] = b'X';
        assert!(Poly::from_bytes(&c, &tag).is_err());
        let other = ctx(32, 2);
        assert!(Poly::from_bytes(&other, &bytes).is_err());
        // The same length for another ring: the header check, not the length, refuses it.
        let mut ring = bytes.clone();
        ring[h + 1] = 6;
        assert!(Poly::from_bytes(&c, &ring).is_err());
        let mut repr = bytes.clone();
        repr[h] = 7;
        assert!(Poly::from_bytes(&c, &repr).is_err());
        let mut moduli = bytes.clone();
        moduli[h + 3] ^= 2;
        assert!(Poly::from_bytes(&c, &moduli).is_err());
        // A short payload that is a well-formed envelope.
        let short = coterie_base::envelope::seal_bytes(Poly::TAG, Poly::VERSION, &bytes[h + 1..]);
        assert!(Poly::from_bytes(&c, &short.unwrap()).is_err());
        let mut unreduced = bytes.clone();
        let off = h + 3 + 8 * 3;
        unreduced[off..off + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(Poly::from_bytes(&c, &unreduced).is_err());
        // Random garbage never panics.
        for len in 0..200 {
            let junk: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            assert!(Poly::from_bytes(&c, &junk).is_err());
        }
    }
}
