//! Negacyclic number-theoretic transform over `Z_q[X]/(X^N+1)` on the `tfhe-ntt` crate.
//!
//! `tfhe-ntt` was chosen after measuring: its AVX-512 path runs on stable Rust and was about 2x
//! faster than `concrete-ntt` on this machine (see `../shared/design/DEPENDENCIES.md`).
//!
//! The forward transform maps a polynomial `a` to its evaluations `a(ω_i)` at the `N` primitive
//! `2N`-th roots of unity `ω_i = ψ^{e_i}` (`e_i` odd). `tfhe-ntt` returns them in its own order; the
//! plan records the exponent `e_i` of every slot so that automorphisms `X → X^g` can be applied in
//! the NTT domain as a permutation of slots: `(σ_g a)(ω_i) = a(ω_i^g)`.
//!
//! ```
//! use coterie_math::{ntt::NttPlan, primes::ntt_primes};
//! let n = 1024;
//! let q = ntt_primes(50, n, 1).unwrap()[0];
//! let plan = NttPlan::new(n, q).unwrap();
//! let mut a: Vec<u64> = (0..n as u64).collect();
//! let orig = a.clone();
//! plan.forward(&mut a);
//! plan.inverse(&mut a);
//! assert_eq!(a, orig);
//! ```

use crate::modulus::Modulus;
use crate::{Error, Result};
use std::collections::HashMap;

/// Smallest supported ring degree (a limit of `tfhe-ntt`'s SIMD layout).
pub const MIN_DEGREE: usize = 16;
/// Largest supported ring degree.
pub const MAX_DEGREE: usize = 1 << 17;

/// A negacyclic NTT plan for one prime `q ≡ 1 (mod 2N)` and degree `N`.
#[derive(Clone, Debug)]
pub struct NttPlan {
    n: usize,
    modulus: Modulus,
    plan: tfhe_ntt::prime64::Plan,
    /// `slot_exponent[i] = e_i`: slot `i` of the forward transform holds `a(ψ^{e_i})`.
    slot_exponent: Vec<u32>,
    /// `slot_of_exponent[(e - 1) / 2]` is the slot evaluating at `ψ^e` (`e` odd).
    slot_of_exponent: Vec<u32>,
    /// Whether [`NttPlan::mul_acc`] takes the floating-point kernel (no IFMA, `q < 2^50`).
    fp_mul_acc: bool,
}

impl NttPlan {
    /// Builds the plan; `n` must be a power of two in `[16, 2^17]` and `q` a prime `≡ 1 mod 2n`
    /// below `2^62`.
    pub fn new(n: usize, q: u64) -> Result<Self> {
        if !n.is_power_of_two() || !(MIN_DEGREE..=MAX_DEGREE).contains(&n) {
            return Err(Error::InvalidParameter(format!(
                "NTT degree {n} is not a power of two in [{MIN_DEGREE}, {MAX_DEGREE}]"
            )));
        }
        let modulus = Modulus::new(q)?;
        if !crate::primes::is_prime(q) || q % (2 * n as u64) != 1 {
            return Err(Error::InvalidParameter(format!(
                "{q} is not a prime ≡ 1 mod {}",
                2 * n
            )));
        }
        let plan = tfhe_ntt::prime64::Plan::try_new(n, q).ok_or_else(|| {
            Error::InvalidParameter(format!("tfhe-ntt has no plan for n = {n}, q = {q}"))
        })?;
        // Find which root each slot evaluates at: transform the monomial X.
        let mut x = vec![0u64; n];
        x[1] = 1;
        plan.fwd(&mut x);
        let psi = x[0];
        let two_n = 2 * n;
        let mut exponent_of_value = HashMap::with_capacity(n);
        let psi2 = modulus.mul(psi, psi);
        let mut pw = psi;
        for e in (1..two_n).step_by(2) {
            exponent_of_value.insert(pw, e as u32);
            pw = modulus.mul(pw, psi2);
        }
        let mut slot_exponent = vec![0u32; n];
        let mut slot_of_exponent = vec![u32::MAX; n];
        for (i, v) in x.iter().enumerate() {
            let e = *exponent_of_value.get(v).ok_or_else(|| {
                Error::InvalidParameter("NTT slot is not a primitive 2N-th root".into())
            })?;
            slot_exponent[i] = e;
            slot_of_exponent[(e as usize - 1) / 2] = i as u32;
        }
        if slot_of_exponent.contains(&u32::MAX) {
            return Err(Error::InvalidParameter(
                "NTT slots do not cover every root".into(),
            ));
        }
        let fp_mul_acc = !plan.use_ifma()
            && modulus.bits() <= crate::kernels::FP_KERNEL_MAX_BITS
            && crate::kernels::simd_available();
        Ok(NttPlan {
            n,
            modulus,
            plan,
            slot_exponent,
            slot_of_exponent,
            fp_mul_acc,
        })
    }

    /// Ring degree `N`.
    pub fn degree(&self) -> usize {
        self.n
    }

    /// The prime modulus.
    pub fn modulus(&self) -> &Modulus {
        &self.modulus
    }

    /// In-place forward transform: coefficients in `[0, q)` to evaluations in `[0, q)`.
    /// Panics if `a.len() != N` (a programming error: lengths are fixed by the ring context).
    #[inline]
    pub fn forward(&self, a: &mut [u64]) {
        assert_eq!(a.len(), self.n, "NTT length mismatch");
        self.plan.fwd(a);
    }

    /// In-place inverse transform, normalized (multiplies by `N^{-1}`), so
    /// `inverse(forward(a)) = a`.
    #[inline]
    pub fn inverse(&self, a: &mut [u64]) {
        assert_eq!(a.len(), self.n, "NTT length mismatch");
        self.plan.inv(a);
        self.plan.normalize(a);
    }

    /// `acc[i] += a[i]·b[i] mod q` (NTT-domain multiply-accumulate). `tfhe-ntt`'s product where
    /// it runs on AVX-512 IFMA; otherwise, for `q < 2^50`, coterie's floating-point kernel
    /// ([`crate::kernels::mul_acc_mod`]), which on AVX-512F without IFMA (and on AVX2) costs
    /// less than the 32-bit-multiply emulation of a 64-bit product.
    #[inline]
    pub fn mul_acc(&self, acc: &mut [u64], a: &[u64], b: &[u64]) {
        if self.fp_mul_acc {
            crate::kernels::mul_acc_mod(&self.modulus, acc, a, b);
        } else {
            self.plan.mul_accumulate(acc, a, b);
        }
    }

    /// The exponent `e_i` of slot `i`: slot `i` holds `a(ψ^{e_i})`, for the root `ψ` of slot 0's
    /// monomial image.
    pub fn slot_exponents(&self) -> &[u32] {
        &self.slot_exponent
    }

    /// Permutation implementing `X → X^g` in the NTT domain: `out[i] = in[perm[i]]`.
    /// `g` must be odd (an element of `(Z/2NZ)^*`).
    pub fn automorphism_permutation(&self, g: usize) -> Result<Vec<u32>> {
        let two_n = 2 * self.n;
        if g.is_multiple_of(2) {
            return Err(Error::InvalidParameter(format!(
                "automorphism exponent {g} is even"
            )));
        }
        let g = g % two_n;
        Ok(self
            .slot_exponent
            .iter()
            .map(|&e| {
                let eg = (e as usize * g) & (two_n - 1); // N is a power of two
                self.slot_of_exponent[(eg - 1) / 2]
            })
            .collect())
    }
}

/// Naive `O(N^2)` negacyclic product modulo `q` (the reference the fast paths are tested against).
pub fn negacyclic_mul_naive(a: &[u64], b: &[u64], q: u64) -> Vec<u64> {
    let n = a.len();
    assert_eq!(b.len(), n);
    let qq = q as u128;
    let mut acc = vec![0u128; n];
    let mut neg = vec![0u128; n];
    for (i, &ai) in a.iter().enumerate() {
        for (j, &bj) in b.iter().enumerate() {
            let p = (ai as u128 * bj as u128) % qq;
            let k = i + j;
            if k < n {
                acc[k] = (acc[k] + p) % qq;
            } else {
                neg[k - n] = (neg[k - n] + p) % qq;
            }
        }
    }
    acc.iter()
        .zip(&neg)
        .map(|(&x, &y)| ((x + qq - y) % qq) as u64)
        .collect()
}

/// Naive automorphism `X ↦ X^g` of `Z_q[X]/(X^N+1)` in the coefficient domain (`g` odd): the
/// coefficient of `X^i` moves to `X^{ig mod 2N}`, negated when `ig mod 2N ≥ N`. The reference
/// that [`NttPlan::automorphism_permutation`] and the BFV rotations are tested against.
///
/// ```
/// use coterie_math::ntt::automorphism_naive;
/// // X ↦ X^3 in Z_17[X]/(X^4+1): 1 + 2X + 3X² + 4X³ ↦ 1 + 2X³ + 3X⁶ + 4X⁹ = 1 + 4X - 3X² + 2X³
/// assert_eq!(automorphism_naive(&[1, 2, 3, 4], 3, 17), vec![1, 4, 14, 2]);
/// ```
pub fn automorphism_naive(a: &[u64], g: usize, q: u64) -> Vec<u64> {
    let n = a.len();
    let mut out = vec![0u64; n];
    for (i, &x) in a.iter().enumerate() {
        let k = (i * g) % (2 * n);
        if k < n {
            out[k] = x % q;
        } else {
            out[k - n] = (q - x % q) % q;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primes::ntt_primes;
    use proptest::prelude::*;

    fn rand_vec(n: usize, q: u64, seed: u64) -> Vec<u64> {
        let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                s % q
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn product_matches_schoolbook(log_n in 4u32..=8, bits in prop_oneof![Just(30u32), Just(50), Just(61), Just(62)], seed in any::<u64>()) {
            let n = 1usize << log_n;
            let q = ntt_primes(bits, n, 1).unwrap()[0];
            let plan = NttPlan::new(n, q).unwrap();
            let a = rand_vec(n, q, seed);
            let b = rand_vec(n, q, seed ^ 0xabcdef);
            let expect = negacyclic_mul_naive(&a, &b, q);
            let (mut fa, mut fb) = (a.clone(), b.clone());
            plan.forward(&mut fa);
            plan.forward(&mut fb);
            prop_assert!(fa.iter().all(|&x| x < q));
            let mut prod = vec![0u64; n];
            plan.mul_acc(&mut prod, &fa, &fb);
            plan.inverse(&mut prod);
            prop_assert_eq!(prod, expect);
            plan.inverse(&mut fa);
            prop_assert_eq!(fa, a);
        }
    }

    #[test]
    fn slots_evaluate_at_odd_powers() {
        // Check a(ψ^{e_i}) directly for a random polynomial, by Horner evaluation.
        let n = 64;
        let q = ntt_primes(40, n, 1).unwrap()[0];
        let plan = NttPlan::new(n, q).unwrap();
        let m = Modulus::new(q).unwrap();
        let mut x = vec![0u64; n];
        x[1] = 1;
        plan.forward(&mut x);
        let psi = x[0];
        let a = rand_vec(n, q, 7);
        let mut fa = a.clone();
        plan.forward(&mut fa);
        for (i, &e) in plan.slot_exponents().iter().enumerate() {
            let w = m.pow(psi, e as u64);
            let v = a.iter().rev().fold(0u64, |acc, &c| m.add(m.mul(acc, w), c));
            assert_eq!(fa[i], v, "slot {i}");
        }
    }

    #[test]
    fn automorphism_in_ntt_domain_matches_coefficients() {
        let n = 256;
        let q = ntt_primes(50, n, 1).unwrap()[0];
        let plan = NttPlan::new(n, q).unwrap();
        let a = rand_vec(n, q, 3);
        for g in [3usize, 5, 2 * n - 1, 25, 2 * n + 3] {
            let expect = automorphism_naive(&a, g, q);
            let perm = plan.automorphism_permutation(g).unwrap();
            let mut fa = a.clone();
            plan.forward(&mut fa);
            let mut out: Vec<u64> = perm.iter().map(|&p| fa[p as usize]).collect();
            plan.inverse(&mut out);
            assert_eq!(out, expect, "g = {g}");
        }
        assert!(plan.automorphism_permutation(4).is_err());
    }

    #[test]
    fn all_supported_degrees_build() {
        for log_n in 10..=16 {
            let n = 1usize << log_n;
            let q = ntt_primes(55, n, 1).unwrap()[0];
            let plan = NttPlan::new(n, q).unwrap();
            let a = rand_vec(n, q, log_n as u64);
            let mut b = a.clone();
            plan.forward(&mut b);
            plan.inverse(&mut b);
            assert_eq!(a, b);
        }
        assert!(NttPlan::new(1000, 12289).is_err());
        assert!(NttPlan::new(1024, 12289 + 2048).is_err());
        assert!(NttPlan::new(8, 17).is_err());
    }
}
