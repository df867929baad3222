//! Plaintext reference of every function and procedure (seed 000 §2, §7, §8), used by the
//! tests to check the MPC, and as executable documentation.

use crate::linmaps::{
    IntOps, subset_prods_to_carries, subset_prods_to_modltz, subset_prods_to_signs,
};
use crate::params::LtParams;

/// `Sign(x)`: -1, 0 or +1 (Eq. 2).
pub fn sign(x: i64) -> i64 {
    x.signum()
}

/// `ModLTZ_t(x)` for `x ∈ Z_{2^t}`: 1 if `x ≥ 2^{t-1}` (the signed value is negative), else 0
/// (Eq. 1).
pub fn modltz(x: u64, t: u32) -> u64 {
    (x >> (t - 1)) & 1
}

/// `Carry_a(x, rbar) = [x + rbar + 1 ≥ 2^a]` for `x, rbar ∈ [2^a]` (`Carry_0 = 1`).
pub fn carry(x: u64, rbar: u64, a: u32) -> u64 {
    u64::from(x + rbar + 1 >= (1u64 << a))
}

/// The subset-product vector of the `a` bits of `r`: entry `j` is the product of the bits
/// `r_i` for every bit `i` set in `j` (so entry 0 is 1).
pub fn subset_prods(r: u64, a: u32) -> Vec<i64> {
    (0..1u64 << a).map(|j| i64::from(j & r == j)).collect()
}

/// Plaintext Sign table `(Sign(x - r))_{x ∈ [2^b]}` through the linear map.
pub fn sign_table(r: u64, b: u32) -> Vec<i64> {
    subset_prods_to_signs(&IntOps, &subset_prods(r, b))
}

/// Plaintext ModLTZ table `(ModLTZ_t((x - r) mod 2^t))_{x ∈ Z_{2^t}}` through the linear map.
pub fn modltz_table(r: u64, t: u32) -> Vec<i64> {
    subset_prods_to_modltz(&IntOps, &subset_prods(r, t))
}

/// Plaintext carry table `(Carry_d(x, (2^d - 1) - r))_x` through the linear map.
pub fn carry_table(r: u64, d: u32) -> Vec<i64> {
    subset_prods_to_carries(&IntOps, &subset_prods(r, d))
}

/// A trace of LTRand/Mod on plaintext values with fixed masks (seed 000 §7.5, §15 T4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LtTrace {
    /// `z' = (z + r) mod 2^l`.
    pub z_open: u64,
    /// `y mod 2^{d+1}`.
    pub y: u64,
    /// `y' = (y + rM) mod 2^{d+1}`.
    pub y_open: u64,
    /// `u = (z' < r)`.
    pub u: u64,
    /// `e = z mod 2^l`, computed as `z' - r + 2^l·u` in `Z_{2^k}`.
    pub e: u64,
}

/// Plaintext Mod_{l,k} with digit masks `r_digits` (least significant first) and ModLTZ mask
/// `rm`, following the protocol step by step through the gate tables.
pub fn mod_trace(lt: &LtParams, z: u64, r_digits: &[u64], rm: u64) -> LtTrace {
    let kmask = if lt.k == 64 {
        u64::MAX
    } else {
        (1u64 << lt.k) - 1
    };
    let t = lt.d() + 1;
    let tmask = (1u64 << t) - 1;
    let lmask = (1u64 << lt.l) - 1;
    let r: u64 = r_digits
        .iter()
        .enumerate()
        .map(|(i, &ri)| ri << (lt.b as usize * i))
        .sum();
    let z_open = (z.wrapping_add(r)) & lmask;
    let widths = lt.sign_widths();
    let mut y: i64 = 0;
    for (i, (&xi, (&ri, &w))) in lt
        .digits(z_open as u128)
        .iter()
        .zip(r_digits.iter().zip(&widths))
        .enumerate()
    {
        let tab = sign_table(ri, w);
        y += tab[xi] << i;
    }
    let y = (y as u64) & tmask;
    let y_open = (y + rm) & tmask;
    let u = modltz_table(rm, t)[y_open as usize] as u64;
    let e = z_open.wrapping_sub(r).wrapping_add(u << lt.l) & kmask;
    LtTrace {
        z_open,
        y,
        y_open,
        u,
        e,
    }
}

/// Plaintext Π_Decrypt on `z_raw = <c, s>` with fixed masks: `mu = (z - e) >> l` with
/// `z = z_raw + 2^{l-1}`.
pub fn decrypt_trace(lt: &LtParams, z_raw: u64, r_digits: &[u64], rm: u64) -> (LtTrace, u64) {
    let kmask = if lt.k == 64 {
        u64::MAX
    } else {
        (1u64 << lt.k) - 1
    };
    let z = z_raw.wrapping_add(1 << (lt.l - 1)) & kmask;
    let tr = mod_trace(lt, z, r_digits, rm);
    let mu = (z.wrapping_sub(tr.e) & kmask) >> lt.l;
    (tr, mu)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::round_p;

    fn modt(v: &[i64], t: u32) -> Vec<u64> {
        v.iter().map(|x| (*x as u64) & ((1u64 << t) - 1)).collect()
    }

    #[test]
    fn t1_linear_maps_exhaustive() {
        for b in 0..=8u32 {
            for r in 0..1u64 << b {
                let want: Vec<i64> = (0..1i64 << b).map(|x| sign(x - r as i64)).collect();
                assert_eq!(sign_table(r, b), want, "signs b = {b} r = {r}");
            }
        }
        for d in 0..=8u32 {
            let t = d + 1;
            for r in 0..1u64 << t {
                let want: Vec<i64> = (0..1u64 << t)
                    .map(|x| modltz(x.wrapping_sub(r) & ((1 << t) - 1), t) as i64)
                    .collect();
                assert_eq!(modltz_table(r, t), want, "modltz t = {t} r = {r}");
            }
            for r in 0..1u64 << d {
                let rbar = (1u64 << d) - 1 - r;
                let want: Vec<i64> = (0..1u64 << d).map(|x| carry(x, rbar, d) as i64).collect();
                assert_eq!(carry_table(r, d), want, "carries d = {d} r = {r}");
            }
        }
    }

    #[test]
    fn fast_signs_equal_the_recursive_reference() {
        // every mask of b ≤ 8 bits on the plaintext subset products, and on arbitrary inputs
        // (the map is linear, so the stored p[0] matters, not its being 1)
        for b in 0..=8u32 {
            for r in 0..1u64 << b {
                let p = subset_prods(r, b);
                assert_eq!(
                    crate::linmaps::subset_prods_to_signs_fast(&IntOps, &p),
                    subset_prods_to_signs(&IntOps, &p),
                    "b = {b} r = {r}"
                );
            }
            let p: Vec<i64> = (0..1i64 << b).map(|i| i * i * 7 - 3 * i + 11).collect();
            assert_eq!(
                crate::linmaps::subset_prods_to_signs_fast(&IntOps, &p),
                subset_prods_to_signs(&IntOps, &p)
            );
        }
    }

    #[test]
    fn t1_spot_values() {
        assert_eq!(subset_prods(5, 3), vec![1, 1, 0, 0, 1, 1, 0, 0]);
        assert_eq!(sign_table(5, 3), vec![-1, -1, -1, -1, -1, 0, 1, 1]);
        assert_eq!(modt(&sign_table(5, 3), 3), vec![7, 7, 7, 7, 7, 0, 1, 1]);
        assert_eq!(subset_prods(2, 2), vec![1, 0, 1, 0]);
        assert_eq!(sign_table(2, 2), vec![-1, -1, 0, 1]);
        assert_eq!(subset_prods(1, 2), vec![1, 1, 0, 0]);
        assert_eq!(modltz_table(1, 2), vec![1, 0, 0, 1]);
        assert_eq!(subset_prods(6, 3), vec![1, 0, 1, 0, 1, 0, 1, 0]);
        assert_eq!(modltz_table(6, 3), vec![0, 0, 1, 1, 1, 1, 0, 0]);
        assert_eq!(carry_table(5, 3), vec![0, 0, 0, 0, 0, 1, 1, 1]);
    }

    #[test]
    fn literal_one_breaks_linearity() {
        // The §8.3 subtlety: a map that used the literal 1 instead of the stored p[0] would not
        // be homogeneous; ours is: map(r·p) = r·map(p) for the latter half.
        for r in 0..16u64 {
            let p = subset_prods(r, 4);
            let (p0, p1) = p.split_at(8);
            let s0 = subset_prods_to_signs(&IntOps, p0);
            let s1 = subset_prods_to_signs(&IntOps, p1);
            let bit = ((r >> 3) & 1) as i64;
            assert_eq!(s1, s0.iter().map(|x| bit * x).collect::<Vec<_>>());
        }
    }

    #[test]
    fn t3_mod_exhaustive_over_all_masks() {
        let mut cases = 0usize;
        for (k, l, b) in [
            (6, 4, 2),
            (6, 5, 2),
            (6, 3, 3),
            (5, 4, 3),
            (6, 4, 4),
            (6, 4, 1),
        ] {
            let lt = LtParams::new(k, l, b).unwrap();
            let widths = lt.sign_widths();
            let t = lt.d() + 1;
            let nr: u64 = 1 << l;
            for z in 0..1u64 << k {
                for r in 0..nr {
                    let digits: Vec<u64> = (0..widths.len())
                        .map(|i| (r >> (b as usize * i)) & ((1 << widths[i]) - 1))
                        .collect();
                    for rm in 0..1u64 << t {
                        let tr = mod_trace(&lt, z, &digits, rm);
                        assert_eq!(
                            tr.u,
                            u64::from(tr.z_open < r),
                            "u: k{k} l{l} b{b} z{z} r{r} rm{rm}"
                        );
                        assert_eq!(
                            tr.e,
                            z & ((1 << l) - 1),
                            "e: k{k} l{l} b{b} z{z} r{r} rm{rm}"
                        );
                        cases += 1;
                    }
                }
            }
        }
        assert!(cases > 80_000, "{cases}");
    }

    #[test]
    fn t3_mod_random_k64() {
        use rand::RngExt;
        let mut rng = rand::rng();
        for b in [8u32, 7] {
            let lt = LtParams::new(64, 63, b).unwrap();
            let widths = lt.sign_widths();
            for _ in 0..300 {
                let z: u64 = rng.random();
                let digits: Vec<u64> = widths
                    .iter()
                    .map(|&w| rng.random::<u64>() & ((1 << w) - 1))
                    .collect();
                let rm = rng.random::<u64>() & ((1 << (lt.d() + 1)) - 1);
                let tr = mod_trace(&lt, z, &digits, rm);
                assert_eq!(tr.e, z & ((1 << 63) - 1));
            }
        }
    }

    #[test]
    fn t4_t5_traces() {
        let lt = LtParams::new(8, 6, 3).unwrap();
        assert_eq!(
            sign_table(5, 3)
                .iter()
                .map(|x| (*x as u64) & 7)
                .collect::<Vec<_>>(),
            vec![7, 7, 7, 7, 7, 0, 1, 1]
        );
        assert_eq!(modt(&sign_table(6, 3), 3), vec![7, 7, 7, 7, 7, 7, 0, 1]);
        let (tr, mu) = decrypt_trace(&lt, 123, &[5, 6], 6);
        assert_eq!(
            (tr.z_open, tr.y, tr.y_open, tr.u, tr.e, mu),
            (16, 5, 3, 1, 27, 2)
        );
        for (z, r0, r1, rm, want) in [
            (250, 0, 7, 0, (18, 7, 7, 1, 26, 0)),
            (32, 7, 7, 7, (63, 0, 7, 0, 0, 1)),
            (223, 3, 1, 2, (10, 7, 1, 1, 63, 3)),
            (224, 3, 1, 2, (11, 0, 2, 0, 0, 0)),
        ] {
            let (tr, mu) = decrypt_trace(&lt, z, &[r0, r1], rm);
            assert_eq!(
                (tr.z_open, tr.y, tr.y_open, tr.u, tr.e, mu),
                want,
                "z_raw = {z}"
            );
        }
        // T5: b' < b
        let lt = LtParams::new(8, 7, 3).unwrap();
        let (tr, mu) = decrypt_trace(&lt, 100, &[6, 2, 1], 11);
        assert_eq!(
            (tr.z_open, tr.y, tr.y_open, tr.u, tr.e, mu),
            (122, 1, 12, 0, 36, 1)
        );
        assert_eq!(
            modt(&sign_table(6, 3), 4),
            vec![15, 15, 15, 15, 15, 15, 0, 1]
        );
        assert_eq!(modt(&sign_table(2, 3), 4), vec![15, 15, 0, 1, 1, 1, 1, 1]);
        assert_eq!(modt(&sign_table(1, 1), 4), vec![15, 0]);
        assert_eq!(
            modltz_table(11, 4),
            vec![0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0]
        );
        let (tr, mu) = decrypt_trace(&lt, 63, &[0, 0, 0], 0);
        assert_eq!((tr.z_open, tr.y, tr.u, tr.e, mu), (127, 7, 0, 127, 0));
    }

    #[test]
    fn t6_every_z_small() {
        use rand::RngExt;
        let mut rng = rand::rng();
        for m in 1..=3u32 {
            for b in [1u32, 2, 3, 6] {
                let lt = LtParams::new(8, 8 - m, b).unwrap();
                let widths = lt.sign_widths();
                for z in 0..256u64 {
                    let digits: Vec<u64> = widths
                        .iter()
                        .map(|&w| rng.random::<u64>() & ((1 << w) - 1))
                        .collect();
                    let rm = rng.random::<u64>() & ((1 << (lt.d() + 1)) - 1);
                    let (_, mu) = decrypt_trace(&lt, z, &digits, rm);
                    assert_eq!(mu, round_p(z, 8, m), "m {m} b {b} z {z}");
                }
            }
        }
    }

    #[test]
    fn t9_modltz_plain() {
        assert_eq!([127u64, 128, 0, 255].map(|x| modltz(x, 8)), [0, 1, 0, 1]);
    }
}
