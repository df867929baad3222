//! Primality testing and generation of NTT-friendly primes.
//!
//! A prime `p` supports a negacyclic NTT of length `N` over `Z_p[X]/(X^N+1)` exactly when `Z_p`
//! has a primitive `2N`-th root of unity, i.e. when `p ≡ 1 (mod 2N)`.
//!
//! ```
//! use coterie_math::primes::{is_prime, ntt_primes};
//! let ps = ntt_primes(55, 8192, 4).unwrap();
//! assert_eq!(ps.len(), 4);
//! for &p in &ps {
//!     assert!(is_prime(p) && p % (2 * 8192) == 1 && p < 1 << 55 && p >= 1 << 54);
//! }
//! ```

use crate::modulus::MAX_MODULUS_BITS;
use crate::{Error, Result};

/// Deterministic Miller–Rabin for all 64-bit integers (the first twelve primes as bases are a
/// proven witness set below 3.3·10^24).
pub fn is_prime(n: u64) -> bool {
    const BASES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    if n < 2 {
        return false;
    }
    for &p in &BASES {
        if n.is_multiple_of(p) {
            return n == p;
        }
    }
    let mulmod = |a: u64, b: u64| ((a as u128 * b as u128) % n as u128) as u64;
    let powmod = |mut a: u64, mut e: u64| {
        let mut r = 1u64;
        while e > 0 {
            if e & 1 == 1 {
                r = mulmod(r, a);
            }
            a = mulmod(a, a);
            e >>= 1;
        }
        r
    };
    let s = (n - 1).trailing_zeros();
    let d = (n - 1) >> s;
    'witness: for &a in &BASES {
        let mut x = powmod(a, d);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mulmod(x, x);
            if x == n - 1 {
                continue 'witness;
            }
        }
        return false;
    }
    true
}

/// Iterator over the primes `p ≡ 1 (mod 2n)` with exactly `bits` bits, largest first.
#[derive(Clone, Debug)]
pub struct NttPrimes {
    next: u64,
    step: u64,
    lower: u64,
}

impl NttPrimes {
    /// Primes of exactly `bits` bits (`2^(bits-1) ≤ p < 2^bits`), `p ≡ 1 mod 2n`, in decreasing order.
    /// `n` must be a power of two and `bits ≤ 62`.
    pub fn new(bits: u32, n: usize) -> Result<Self> {
        if !n.is_power_of_two() || n < 2 {
            return Err(Error::InvalidParameter(format!(
                "ring degree {n} is not a power of two ≥ 2"
            )));
        }
        let step = 2 * n as u64;
        if bits > MAX_MODULUS_BITS || (1u64 << bits.saturating_sub(1)) <= step || bits < 3 {
            return Err(Error::InvalidParameter(format!(
                "prime size {bits} bits: need 2n = {step} < 2^(bits-1) and bits ≤ {MAX_MODULUS_BITS}"
            )));
        }
        let upper = 1u64 << bits;
        // Largest value ≡ 1 mod step below 2^bits (step divides 2^bits, so it is 2^bits - step + 1).
        let next = upper - step + 1;
        Ok(NttPrimes {
            next,
            step,
            lower: 1u64 << (bits - 1),
        })
    }
}

impl Iterator for NttPrimes {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        while self.next >= self.lower {
            let c = self.next;
            self.next = self.next.wrapping_sub(self.step);
            if self.next > c {
                self.next = 0;
            }
            if is_prime(c) {
                return Some(c);
            }
        }
        None
    }
}

/// The `count` largest `bits`-bit primes `p ≡ 1 (mod 2n)`.
pub fn ntt_primes(bits: u32, n: usize, count: usize) -> Result<Vec<u64>> {
    ntt_primes_excluding(bits, n, count, &[])
}

/// The `count` largest `bits`-bit primes `p ≡ 1 (mod 2n)` that are not in `exclude` (use it to build
/// an auxiliary basis disjoint from a main one).
pub fn ntt_primes_excluding(
    bits: u32,
    n: usize,
    count: usize,
    exclude: &[u64],
) -> Result<Vec<u64>> {
    let out: Vec<u64> = NttPrimes::new(bits, n)?
        .filter(|p| !exclude.contains(p))
        .take(count)
        .collect();
    if out.len() < count {
        return Err(Error::NotEnoughPrimes(format!(
            "only {} primes of {bits} bits are ≡ 1 mod {} (wanted {count})",
            out.len(),
            2 * n
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_prime_naive(n: u64) -> bool {
        if n < 2 {
            return false;
        }
        let mut d = 2u64;
        while d * d <= n {
            if n.is_multiple_of(d) {
                return false;
            }
            d += 1;
        }
        true
    }

    #[test]
    fn miller_rabin_matches_trial_division() {
        for n in 0..20_000u64 {
            assert_eq!(is_prime(n), is_prime_naive(n), "n = {n}");
        }
        // Around 2^32, and strong pseudoprimes to several bases.
        for n in (1u64 << 32) - 500..(1u64 << 32) + 500 {
            assert_eq!(is_prime(n), is_prime_naive(n), "n = {n}");
        }
        for n in [
            3_215_031_751u64,
            2_152_302_898_747,
            3_474_749_660_383,
            341_550_071_728_321,
        ] {
            assert!(!is_prime(n));
        }
        // Known primes.
        for p in [
            (1u64 << 61) - 1,
            0xffff_ffff_0000_0001,
            18_446_744_073_709_551_557,
        ] {
            assert!(is_prime(p));
        }
    }

    #[test]
    fn ntt_primes_are_ntt_friendly_and_maximal() {
        for log_n in 10..=16 {
            let n = 1usize << log_n;
            for bits in [30u32, 45, 55, 60, 62] {
                let ps = ntt_primes(bits, n, 3).unwrap();
                for (i, &p) in ps.iter().enumerate() {
                    assert!(is_prime(p));
                    assert_eq!(p % (2 * n as u64), 1);
                    assert_eq!(64 - p.leading_zeros(), bits);
                    // No larger candidate skipped.
                    let prev = if i == 0 { 1u64 << bits } else { ps[i - 1] };
                    let mut c = p + 2 * n as u64;
                    while c < prev {
                        assert!(!is_prime(c));
                        c += 2 * n as u64;
                    }
                }
            }
        }
    }

    #[test]
    fn excluding_and_errors() {
        let a = ntt_primes(50, 4096, 3).unwrap();
        let b = ntt_primes_excluding(50, 4096, 3, &a).unwrap();
        assert!(b.iter().all(|p| !a.contains(p)));
        assert!(ntt_primes(63, 1024, 1).is_err());
        assert!(ntt_primes(40, 1000, 1).is_err());
        assert!(ntt_primes(12, 4096, 1).is_err());
        // 20-bit primes ≡ 1 mod 2^13: only a handful exist.
        assert!(matches!(
            ntt_primes(20, 4096, 1000),
            Err(Error::NotEnoughPrimes(_))
        ));
    }
}
