//! Parameters: the LWE ciphertext space `(n, q = 2^k, p = 2^m)` and the digit split of the
//! comparison (seed 000 §2, §10).

use crate::{Error, Result};

/// Largest LWE dimension accepted (bounds allocations made from untrusted sizes).
pub const MAX_DIMENSION: usize = 1 << 17;
/// Largest digit width `b` accepted (a Sign table has `2^b` entries).
pub const MAX_DIGIT_BITS: u32 = 12;
/// Largest ModLTZ gate input width `d + 1` accepted.
pub const MAX_MODLTZ_BITS: u32 = 16;

/// Parameters of a comparison `LTRand_{l,k}` / `Mod_{l,k}`: the engine ring `Z_{2^k}`, the
/// noise width `l < k` and the digit width `b` (seed 000 §7.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LtParams {
    /// Value bits of the ring, `k`.
    pub k: u32,
    /// Bits compared, `l` (`1 ≤ l < k`).
    pub l: u32,
    /// Digit width `b` (`1 ≤ b`; `b > l` means one digit of `l` bits).
    pub b: u32,
}

impl LtParams {
    /// Checked constructor.
    pub fn new(k: u32, l: u32, b: u32) -> Result<Self> {
        if !(2..=64).contains(&k) || l == 0 || l >= k {
            return Err(Error::Params(format!(
                "need 1 <= l < k <= 64 (k = {k}, l = {l})"
            )));
        }
        if b == 0 || b > MAX_DIGIT_BITS {
            return Err(Error::Params(format!(
                "need 1 <= b <= {MAX_DIGIT_BITS} (b = {b})"
            )));
        }
        let p = Self { k, l, b };
        if p.d() + 1 > k || p.d() + 1 > MAX_MODLTZ_BITS {
            return Err(Error::Params(format!("d + 1 = {} too large", p.d() + 1)));
        }
        Ok(p)
    }
    /// Number of digits `d = ceil(l/b)`.
    pub fn d(&self) -> u32 {
        self.l.div_ceil(self.b)
    }
    /// Width of the top digit `b' = l - (d-1)·b`, `1 ≤ b' ≤ b`.
    pub fn b_top(&self) -> u32 {
        self.l - (self.d() - 1) * self.b
    }
    /// Input widths of the `d` Sign gates, least significant digit first.
    pub fn sign_widths(&self) -> Vec<u32> {
        let d = self.d() as usize;
        (0..d)
            .map(|i| if i + 1 == d { self.b_top() } else { self.b })
            .collect()
    }
    /// Splits a public `z' ∈ [2^l]` into its digits (§7.5 online step 2).
    pub fn digits(&self, z: u128) -> Vec<usize> {
        self.digits_iter(z).collect()
    }
    /// [`LtParams::digits`] without the allocation (the online schedules' per-bundle reads).
    pub fn digits_iter(&self, z: u128) -> impl Iterator<Item = usize> + use<> {
        let d = self.d() as usize;
        let b = self.b as usize;
        let mask = (1u128 << self.b) - 1;
        (0..d).map(move |i| {
            let x = z >> (b * i);
            if i + 1 == d {
                x as usize
            } else {
                (x & mask) as usize
            }
        })
    }
    /// Beaver multiplications one gate bundle costs: `Σ (2^a - a - 1)` over the `d` Sign
    /// gates and the `(d+1)`-bit ModLTZ gate (seed 000 §8.1; 2351 for `l = 63, b = 8`).
    pub fn mults_per_bundle(&self) -> usize {
        self.gate_widths()
            .iter()
            .map(|&a| (1usize << a) - a as usize - 1)
            .sum()
    }
    /// Random bits one bundle costs: `l + d + 1` (seed 000 §17.8).
    pub fn bits_per_bundle(&self) -> usize {
        self.gate_widths().iter().map(|&a| a as usize).sum()
    }
    /// Input widths of all gates of a bundle: the Sign gates, then the ModLTZ gate.
    pub fn gate_widths(&self) -> Vec<u32> {
        let mut w = self.sign_widths();
        w.push(self.d() + 1);
        w
    }
    /// Table entries of one bundle.
    pub fn table_entries(&self) -> usize {
        self.gate_widths().iter().map(|&a| 1usize << a).sum()
    }
    /// Stored bits per bundle ignoring masks, Eq. 5: `(d+1)((d-1)2^b + 2^{b'}) + (k-l)·2^{d+1}`.
    pub fn eq5_bits(&self) -> usize {
        let d = self.d() as usize;
        (d + 1) * ((d - 1) * (1 << self.b) + (1 << self.b_top()))
            + (self.k - self.l) as usize * (1 << (d + 1))
    }
    /// SPDZ_2k storage per party and bundle with MAC parameter `s` when every entry is stored at
    /// its output modulus: `2((d+1+s)((d-1)2^b + 2^{b'}) + (k-l+s)2^{d+1})` (346,880 for the
    /// paper's parameters).
    pub fn spdz2k_bits(&self, s: u32) -> usize {
        let d = self.d() as usize;
        let s = s as usize;
        2 * ((d + 1 + s) * ((d - 1) * (1 << self.b) + (1 << self.b_top()))
            + (self.k - self.l) as usize * (1 << (d + 1))
            + s * (1 << (d + 1)))
    }
}

/// Parameters of threshold decryption of LWE ciphertexts `(n, q = 2^k, p = 2^m)` with digit
/// width `b` (seed 000 §6, §10.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// LWE dimension `n`.
    pub n: usize,
    /// `q = 2^k`, `k ≤ 64`.
    pub k: u32,
    /// `p = 2^m`, `1 ≤ m < k`.
    pub m: u32,
    /// Digit width `b`.
    pub b: u32,
}

impl Params {
    /// The paper's parameters (seed 000 §11): `(n, q, p) = (1024, 2^64, 2)`, `b = 8`
    /// (`d = 8`, `b' = 7`). Security is that of the LWE scheme the ciphertexts come from: the
    /// TFHE-rs default LWE dimension for `q = 2^64` is about 128-bit secure only with its
    /// matching noise (TFHE-rs docs, lattice-estimator); the MPC adds no noise and leaks nothing
    /// beyond the plaintext (Theorem 1 of the paper), with `s = 64` MACs (about 57-bit
    /// statistical security per check, coterie-spdz).
    pub fn paper() -> Self {
        Self {
            n: 1024,
            k: 64,
            m: 1,
            b: 8,
        }
    }
    /// Parameters for decrypting ciphertexts of an LWE scheme defined elsewhere, with dimension
    /// `n`, `q = 2^k`, `p = 2^m` and digit width `b` (e.g. multi-key TFHE's `(k·n, 2^32, 4)`).
    /// Security is that of the scheme the ciphertexts and key come from (the MPC adds no noise
    /// and leaks nothing beyond the plaintext); `b` only trades gate size against rounds.
    ///
    /// # Errors
    /// As [`Params::validate`].
    pub fn for_lwe(n: usize, k: u32, m: u32, b: u32) -> Result<Self> {
        let p = Self { n, k, m, b };
        p.validate()?;
        Ok(p)
    }
    /// **Insecure toy** parameters for tests only (no security): any `n`, `k`, `m`, `b` accepted by
    /// [`Params::validate`].
    pub fn insecure_toy(n: usize, k: u32, m: u32, b: u32) -> Result<Self> {
        let p = Self { n, k, m, b };
        p.validate()?;
        Ok(p)
    }
    /// Checks the parameters.
    pub fn validate(&self) -> Result<()> {
        if self.n == 0 || self.n > MAX_DIMENSION {
            return Err(Error::Params(format!(
                "dimension {} not in 1..={MAX_DIMENSION}",
                self.n
            )));
        }
        if self.m == 0 || self.m >= self.k || self.k > 64 {
            return Err(Error::Params(format!(
                "need 1 <= m < k <= 64 (k = {}, m = {})",
                self.k, self.m
            )));
        }
        self.lt().map(|_| ())
    }
    /// Noise width `l = k - m`.
    pub fn l(&self) -> u32 {
        self.k - self.m
    }
    /// The comparison parameters of Mod_{l,k}.
    pub fn lt(&self) -> Result<LtParams> {
        LtParams::new(self.k, self.l(), self.b)
    }
    /// Opened bits per decryption: `l + (d+1) + k` (136 for the paper's parameters).
    pub fn opened_bits(&self) -> Result<u32> {
        let lt = self.lt()?;
        Ok(self.l() + lt.d() + 1 + self.k)
    }
    /// Communication bits per party and decryption with SingleCheck: `2(l + (d+1) + k + 3s)`
    /// (656 for the paper's parameters, §10.3).
    pub fn comm_bits(&self, s: u32) -> Result<u32> {
        Ok(2 * (self.opened_bits()? + 3 * s))
    }
}

/// `round_p(x) = floor(((x + L/2) mod q) / L)`: the rounding that Π_Decrypt computes
/// (round-half-up, seed 000 §2, §6), for `x ∈ Z_{2^k}`.
pub fn round_p(x: u64, k: u32, m: u32) -> u64 {
    let l = k - m;
    let qmask = if k == 64 { u64::MAX } else { (1u64 << k) - 1 };
    (x.wrapping_add(1u64 << (l - 1)) & qmask) >> l
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t12_parameter_arithmetic() {
        let p = Params::paper();
        let lt = p.lt().unwrap();
        assert_eq!((lt.d(), lt.b_top()), (8, 7));
        assert_eq!(lt.sign_widths(), vec![8, 8, 8, 8, 8, 8, 8, 7]);
        assert_eq!(lt.table_entries(), 7 * 256 + 128 + 512);
        assert_eq!(p.opened_bits().unwrap(), 136);
        assert_eq!(p.comm_bits(64).unwrap(), 656);
        assert_eq!(lt.eq5_bits(), 17_792);
        assert_eq!(lt.spdz2k_bits(64), 346_880);
        assert_eq!(lt.mults_per_bundle(), 2351);
        assert_eq!(lt.bits_per_bundle(), 72);
        // the paper's formula charges all d Sign gates at b bits
        let d = 8usize;
        assert_eq!(d * ((1 << 8) - 8 - 1) + ((1 << 9) - d - 2), 2478);
        // alternative parameter table §10.5
        for (b, bits, mults) in [
            (5, 2_191_072, 16_685),
            (6, 630_976, 4_657),
            (7, 303_616, 2_093),
            (9, 549_376, 3_761),
        ] {
            let lt = LtParams::new(64, 63, b).unwrap();
            assert_eq!(lt.spdz2k_bits(64), bits, "b = {b}");
            assert_eq!(lt.mults_per_bundle(), mults, "b = {b}");
        }
        assert_eq!(LtParams::new(64, 60, 8).unwrap().spdz2k_bits(64), 333_600);
    }

    #[test]
    fn t6_boundary_table_plain() {
        for (z, mu) in [
            (0, 0),
            (31, 0),
            (32, 1),
            (63, 1),
            (64, 1),
            (95, 1),
            (96, 2),
            (127, 2),
            (128, 2),
            (159, 2),
            (160, 3),
            (191, 3),
            (192, 3),
            (223, 3),
            (224, 0),
            (255, 0),
        ] {
            assert_eq!(round_p(z, 8, 2), mu, "z = {z}");
        }
        for (z, mu) in [(0, 0), (63, 0), (64, 1), (191, 1), (192, 0), (255, 0)] {
            assert_eq!(round_p(z, 8, 1), mu);
        }
        for (z, mu) in [
            ((1u64 << 62) - 1, 0),
            (1 << 62, 1),
            (1 << 63, 1),
            (3 * (1 << 62) - 1, 1),
            (3 * (1 << 62), 0),
            (u64::MAX, 0),
            (0, 0),
        ] {
            assert_eq!(round_p(z, 64, 1), mu);
        }
    }

    #[test]
    fn digit_split() {
        let lt = LtParams::new(8, 7, 3).unwrap();
        assert_eq!((lt.d(), lt.b_top()), (3, 1));
        assert_eq!(lt.digits(122), vec![2, 7, 1]);
        assert!(LtParams::new(8, 8, 3).is_err());
        assert!(LtParams::new(8, 6, 0).is_err());
        assert!(Params::insecure_toy(0, 8, 2, 3).is_err());
    }
}
