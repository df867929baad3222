//! Scheme parameters (spec §2, Table 2/3): group, key base `B ∈ {2, 4, 16}`, key length,
//! pattern length `d`, fixed-base window `R`, and the public bounds derived from them.

use serde::{Deserialize, Serialize};

use crate::convert::ScanEngine;
use crate::group::GroupId;
use crate::{Error, Result};

/// Scheme parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    /// The group.
    pub group: GroupId,
    /// `log₂ B` of the key base `B` (1, 2 or 4).
    pub log_base: u32,
    /// ElGamal key length ℓ in bits (160 in the paper: short-exponent ElGamal).
    pub key_bits: u32,
    /// Statistical masking of integer key shares (80: shares of 240 bits, spec §2).
    pub stat_bits: u32,
    /// Distinguished-point pattern length `d`.
    pub d: u32,
    /// Fixed-base window `R` of the pairing tables.
    pub window: u32,
    /// The conversion scan.
    pub engine: ScanEngine,
}

impl Params {
    /// The paper's Table 3 row for failure `ε = 2^−eps_log2`, base `2^log_base`, window `R`:
    /// group `p = 2^1536 − 11510609`, 160-bit key, `d = min{ d : (1 + s(B−1)/2)/2^(d+3) ≤ ε }`
    /// (Table 2 / Corollary 4.8; gives the paper's d = 9/14/19 for B = 4 and 11/16/21 for
    /// B = 16). Security: the paper's 80-bit target (1536-bit group, 160-bit short ElGamal
    /// key under circular security, spec §2).
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_hss::scheme::Params;
    /// let p = Params::table3(10, 2, 8).unwrap(); // ε = 2^−10, B = 4, R = 8
    /// assert_eq!((p.d, p.s()), (14, 80));
    /// assert!(p.predicted_failure() <= 2f64.powi(-10));
    /// assert!(Params::table3(10, 3, 8).is_err()); // B = 8 is not supported
    /// ```
    pub fn table3(eps_log2: u32, log_base: u32, window: u32) -> Result<Self> {
        Self::with_failure(GroupId::P1536, 160, eps_log2, log_base, window)
    }

    /// Parameters for a given per-multiplication failure target `2^−eps_log2` (randomized bit
    /// conversions, spec §8).
    pub fn with_failure(
        group: GroupId,
        key_bits: u32,
        eps_log2: u32,
        log_base: u32,
        window: u32,
    ) -> Result<Self> {
        if !matches!(log_base, 1 | 2 | 4) || key_bits == 0 || !key_bits.is_multiple_of(log_base) {
            return Err(Error::InvalidParameter(
                "B must be 2, 4 or 16 and divide the key length".into(),
            ));
        }
        let s = (key_bits / log_base) as f64;
        let b = (1u64 << log_base) as f64;
        let num = 1.0 + s * (b - 1.0) / 2.0;
        let mut d = 1u32;
        while num / 2f64.powi(d as i32 + 3) > 2f64.powi(-(eps_log2 as i32)) {
            d += 1;
        }
        Ok(Self {
            group,
            log_base,
            key_bits,
            stat_bits: 80,
            d,
            window,
            engine: ScanEngine::BitParallel,
        })
    }

    /// **Toy, insecure** parameters on the 128-bit toy group with a short key (for statistical
    /// tests where failures must be frequent). No security.
    pub fn insecure_toy(log_base: u32, key_bits: u32, d: u32) -> Self {
        Self {
            group: GroupId::InsecureToy128,
            log_base,
            key_bits,
            stat_bits: 40,
            d,
            window: 4,
            engine: ScanEngine::BitParallel,
        }
    }

    /// Number of key digits `s = ⌈ℓ / log₂ B⌉`.
    pub fn s(&self) -> usize {
        self.key_bits.div_ceil(self.log_base) as usize
    }
    /// The base `B`.
    pub fn base(&self) -> u64 {
        1u64 << self.log_base
    }
    /// Bits of an integer key share (`ℓ + stat + 1`).
    pub fn key_share_bits(&self) -> u32 {
        self.key_bits + self.stat_bits + 1
    }
    /// Bit bound of a conversion output (`|out| ≤ 2^(d+7)`).
    pub fn conv_bits(&self) -> u32 {
        self.d + 8
    }
    /// Largest `A`-side exponent the pairing tables support (key-share size plus 12 bits of
    /// headroom for linear combinations).
    pub fn a_table_bits(&self) -> u32 {
        self.key_share_bits().max(self.key_bits + self.conv_bits()) + 12
    }
    /// Largest `C`-side exponent the pairing tables support.
    pub fn c_table_bits(&self) -> u32 {
        self.conv_bits().max(self.stat_bits + 9) + 12
    }
    /// The Table 2 failure estimate `(1 + s(B−1)/2)/2^(d+3)` for one randomized RMS
    /// multiplication of bits.
    pub fn predicted_failure(&self) -> f64 {
        let s = self.s() as f64;
        let b = self.base() as f64;
        (1.0 + s * (b - 1.0) / 2.0) / 2f64.powi(self.d as i32 + 3)
    }
    /// Checks that the parameters are in the supported ranges.
    pub(crate) fn check(&self) -> Result<()> {
        if !matches!(self.log_base, 1 | 2 | 4)
            || self.key_bits == 0
            || !(2..=40).contains(&self.d)
            || !(1..=16).contains(&self.window)
        {
            return Err(Error::InvalidParameter("unsupported HSS parameters".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table3_d_column() {
        for (eps, lb, d) in [
            (5, 2, 9),
            (10, 2, 14),
            (15, 2, 19),
            (5, 4, 11),
            (10, 4, 16),
            (15, 4, 21),
        ] {
            assert_eq!(Params::table3(eps, lb, 8).unwrap().d, d);
        }
        assert_eq!(Params::table3(5, 1, 8).unwrap().s(), 160);
        assert_eq!(Params::table3(5, 2, 8).unwrap().s(), 80);
        assert_eq!(Params::table3(5, 4, 8).unwrap().s(), 40);
    }
}
