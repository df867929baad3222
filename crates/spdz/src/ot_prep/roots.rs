//! Random bits by square roots (the SPDZ_2k random-bit protocol of Damgård, Escudero,
//! Frederiksen, Keller, Scholl and Volgushev, "New Primitives for Actively-Secure MPC over Rings
//! with Applications to Private Machine Learning", IEEE S&P 2019). `docs/spdz-ot-security.md`,
//! "Random bits by square roots", states the steps and the argument.
//!
//! In short, in a ring `W = Z_{2^{k+2}}` with the same MAC key: a triple `(a, b, c = ab)`
//! gives `[a²] = [c] + δ[a]` with `δ = a − b` opened, so `[r] = 2[a] + 1` (odd) and
//! `[r²] = 4[a²] + 4[a] + 1`; the masked opening of `r² mod 2^{k+2}` and the MAC check; then
//! `c`, a square root of the opened value, and `[b] = ([r]·c^{-1} + 1) / 2`. One triple and one
//! authenticated value of `W` per bit, whatever the number of parties (the XOR method costs `n`
//! triples and `n + 1` values). The paper squares a separate random value with a triple.
//!
//! The paper's `W` has shares in `Z_{2^{k+2+s}}`: 130 bits for `Z_{2^64}` with `s = 64`, more
//! than `u128`. Here `W`'s shares stay within 128 bits: `W = Z_{2^{k+2}}` with
//! `s' = min(s, 126 − k)` bits of MAC slack (`s' = 62` for `Z_{2^64}`; `s' = s` for
//! `Z_{2^32}`), under the same key `α` (all its `s` bits: COPE runs on the key's bits). After
//! the halving the MAC relation holds modulo `2^{k+s'+1}`; when that is below `2^{k+s}`
//! (`Z_{2^64}`: `2^127`), one more step lifts it: with a fresh random `[ρ]` of `Z_{2^{k+s}}`,
//! `y = b + ρ` is opened modulo `2^{k+s'+1}` (uniform, as `ρ` is) and MAC-checked there, and
//! `[b] = y − [ρ]` has a MAC relation modulo `2^{k+s}` again. Both checks of `Z_{2^64}`'s bits
//! thus run with 62 and 63 bits of slack instead of 64: about `2^{-56}` instead of `2^{-57}`.

use coterie_net::Mesh;
use zeroize::Zeroize;

use super::OtPrep;
use crate::engine::Engine;
use crate::prep::{Share, VecPrep};
use crate::ring::{Ring, Z2k};
use crate::{Error, Result};

/// The ring `W = Z_{2^{k+2}}` with `s' = min(s, 126 − k)` in which [`OtPrep::bits`] takes square
/// roots for `ring` (shares within 128 bits; `s' ≥ s − 2` for every ring with `k + s ≤ 128`),
/// or `None` for `k ≥ 126`, where no slack is left and the bits are made by XOR.
pub(crate) fn square_root_ring(ring: &Z2k) -> Option<Z2k> {
    let (k, s) = (ring.k(), ring.s());
    let s_wide = s.min(126u32.checked_sub(k)?);
    if s_wide + 2 < s || s_wide == 0 {
        return None;
    }
    Z2k::new(k + 2, s_wide).ok()
}

/// The ring in which the square-root bits of `ring` are lifted back to a MAC relation modulo
/// `2^{k+s}` (`Z_{2^k}` with `s' + 1` bits of slack), or `None` when the halving leaves the
/// relation modulo `2^{k+s}` already.
fn lift_ring(ring: &Z2k, wide: &Z2k) -> Option<Z2k> {
    let s_half = wide.s() + 1; // after the halving
    (s_half < ring.s()).then(|| Z2k::new(ring.k(), s_half).ok())?
}

/// The cost of one random bit of `ring` by square roots: `(triples, authenticated values)`, or
/// `None` where the bits are made by XOR.
pub(crate) fn square_root_bit_cost(ring: &Z2k) -> Option<(u64, u64)> {
    let wide = square_root_ring(ring)?;
    Some((1, 1 + u64::from(lift_ring(ring, &wide).is_some())))
}

/// A square root of `v` modulo `2^m` (`3 ≤ m ≤ 128`) when `v` is the square of an odd number,
/// i.e. `v ≡ 1 (mod 8)`; `None` otherwise. The root returned is odd; the four roots are it,
/// its negation and both plus `2^{m−1}`.
///
/// Lifting one bit at a time: if `x² ≡ v (mod 2^i)` with `i ≥ 3` and `x` odd, then
/// `x² ≡ v` or `(x + 2^{i−1})² = x² + 2^i·x + 2^{2i−2} ≡ x² + 2^i` holds mod `2^{i+1}`.
pub(crate) fn odd_square_root(v: u128, m: u32) -> Option<u128> {
    if !(3..=128).contains(&m) {
        return None;
    }
    let v = Z2k::low_bits(v, m);
    if v & 7 != 1 {
        return None;
    }
    let mut x: u128 = 1;
    for i in 3..m {
        // x² ≡ v (mod 2^i); fix bit i of the square
        let diff = x.wrapping_mul(x) ^ v;
        if (diff >> i) & 1 == 1 {
            x = x.wrapping_add(1u128 << (i - 1));
        }
    }
    Some(Z2k::low_bits(x, m))
}

/// The inverse of an odd `c` modulo `2^128` (Newton: each step doubles the correct low bits,
/// starting from 3 since `c·c ≡ 1 (mod 8)`); `None` for an even `c`.
pub(crate) fn odd_inverse(c: u128) -> Option<u128> {
    if c & 1 == 0 {
        return None;
    }
    let mut x = c;
    for _ in 0..6 {
        x = x.wrapping_mul(2u128.wrapping_sub(c.wrapping_mul(x)));
    }
    Some(x)
}

/// Steps 4 and 5 of the module docs for every bit: a root `c` of the opened square `v`, then
/// `([r]·c^{-1} + 1) / 2`, whose shares have a MAC relation modulo `2^{k+s'+1}` (`e` is the
/// engine of `wide`). `Err(None)` when an opened value is no odd square (the caller aborts
/// `random-bit-square`); `Err(Some(_))` for a share that is not even (a bug, never seen).
fn halve_roots(
    e: &Engine<Z2k, VecPrep<Z2k>>,
    r: &[Share<u128>],
    opened: &[u128],
    wide: &Z2k,
) -> std::result::Result<Vec<Share<u128>>, Option<Error>> {
    let m = wide.k();
    let half_bits = wide.k() + wide.s() - 1;
    let mut halves = Vec::with_capacity(r.len());
    for (x, v) in r.iter().zip(opened) {
        // the root is odd, so it has an inverse
        let Some(inv) = odd_square_root(*v, m).and_then(odd_inverse) else {
            halves.zeroize();
            return Err(None);
        };
        // r/c + 1 ∈ {0, 2} mod 2^{k+1}; with r = 2a + 1 and c odd every share and MAC share of
        // it is even (the module docs), so halving them halves the value
        let d = e.add_const(&e.mul_const(x, &Z2k::low_bits(inv, m + wide.s())), &1);
        if d.v & 1 != 0 || d.m & 1 != 0 {
            halves.zeroize();
            return Err(Some(Error::Invalid(
                "random bits by square roots: an odd share after the root (a bug)".into(),
            )));
        }
        halves.push(Share {
            v: Z2k::low_bits(d.v >> 1, half_bits),
            m: Z2k::low_bits(d.m >> 1, half_bits),
        });
    }
    Ok(halves)
}

impl OtPrep {
    /// `count` random bits by square roots (the module docs); errors when this producer's ring
    /// has no [`square_root_ring`].
    pub(crate) async fn bits_by_square_roots<M: Mesh>(
        &mut self,
        mesh: &mut M,
        count: usize,
    ) -> Result<Vec<Share<u128>>> {
        let narrow = self.ring;
        let wide = square_root_ring(&narrow).ok_or_else(|| {
            Error::Invalid(format!(
                "random bits by square roots need a ring Z_2^(k+2) within 128 bits (k = {}, s = {})",
                narrow.k(),
                narrow.s()
            ))
        })?;
        if count == 0 {
            return Ok(Vec::new());
        }
        let lift = lift_ring(&narrow, &wide);
        // The triples and the authenticated values of W come from the same correlations: the
        // OT extension does not depend on k, COPE runs on the key's bits, and the MAC key share
        // α_i is the same. The ring is restored before any error is returned.
        self.ring = wide;
        let made = async {
            let triples = self.triples(mesh, count).await?;
            // one mask per opened square
            let (rho, _) = self.randoms_and_masks(mesh, count, 0).await?;
            Ok::<_, Error>((triples, rho))
        }
        .await;
        self.ring = narrow;
        let (mut triples, rho) = made?;

        let mut prep = VecPrep::new(wide, self.me, self.n, self.alpha);
        prep.randoms.extend(rho);
        let mut e = Engine::new(prep).with_check_name("random-bit-mac-check");
        // The square of a from its own triple (a, b, c = ab): δ = a − b is uniform whatever a
        // is (b is, and is used nowhere else), and a² = c + δ·a. Then r = 2a + 1 and
        // r² = 4a² + 4a + 1.
        let deltas: Vec<Share<u128>> = triples.iter().map(|t| e.sub(&t.a, &t.b)).collect();
        let deltas = e.open_unmasked(mesh, &deltas).await;
        let deltas = match deltas {
            Ok(d) => d,
            Err(err) => {
                triples.zeroize();
                return Err(err);
            }
        };
        let one = 1u128;
        let mut r = Vec::with_capacity(count);
        let mut squares = Vec::with_capacity(count);
        for (t, d) in triples.iter().zip(&deltas) {
            let a_sq = e.add(&t.c, &e.mul_const(&t.a, d));
            let four = e.mul_const(&e.add(&a_sq, &t.a), &4);
            squares.push(e.add_const(&four, &one));
            r.push(e.add_const(&e.mul_const(&t.a, &2), &one));
        }
        triples.zeroize();
        let opened = e.open(mesh, &squares).await;
        squares.zeroize();
        let opened = match opened {
            Ok(v) => v,
            Err(err) => {
                r.zeroize();
                return Err(err);
            }
        };
        // the squares are authenticated before anything is derived from them
        if let Err(err) = e.check(mesh).await {
            r.zeroize();
            return Err(err);
        }

        let halved = halve_roots(&e, &r, &opened, &wide);
        r.zeroize();
        let mut halves = match halved {
            Ok(h) => h,
            Err(None) => {
                // an authenticated square of an odd r is 1 mod 8: only a forged opening that
                // passed the MAC check (probability about 2^{-s'+log s'}) gets here
                let err = Error::PrepCheckFailed {
                    check: "random-bit-square",
                    party: self.me,
                };
                mesh.abort(&err.to_string()).await;
                return Err(err);
            }
            Err(Some(err)) => return Err(err),
        };
        match lift {
            None => {
                for h in &mut halves {
                    h.v = Z2k::low_bits(h.v, narrow.k() + narrow.s());
                    h.m = Z2k::low_bits(h.m, narrow.k() + narrow.s());
                }
                Ok(halves)
            }
            Some(lift) => {
                let out = self.lift_bits(mesh, lift, &halves).await;
                halves.zeroize();
                out
            }
        }
    }

    /// Lifts `halves` (shares with a MAC relation modulo `2^{k+s'+1}`, the modulus of `lift`)
    /// to this producer's ring: `y = b + ρ` for a fresh random `[ρ]` of the ring, opened in
    /// `lift` (uniform there, as `ρ` is) and MAC-checked, then `[b] = y − [ρ]`.
    async fn lift_bits<M: Mesh>(
        &mut self,
        mesh: &mut M,
        lift: Z2k,
        halves: &[Share<u128>],
    ) -> Result<Vec<Share<u128>>> {
        let narrow = self.ring;
        let (rho, _) = self.randoms_and_masks(mesh, halves.len(), 0).await?;
        let bits = lift.k() + lift.s();
        let mut e = Engine::new(VecPrep::new(lift, self.me, self.n, self.alpha))
            .with_check_name("random-bit-mac-check");
        let sums: Vec<Share<u128>> = halves
            .iter()
            .zip(&rho)
            .map(|(h, p)| Share {
                v: lift.add(&h.v, &Z2k::low_bits(p.v, bits)),
                m: lift.add(&h.m, &Z2k::low_bits(p.m, bits)),
            })
            .collect();
        let y = e.open_unmasked(mesh, &sums).await?;
        e.check(mesh).await?;
        // [b] = y − [ρ] in the ring: any representative of y gives the value b mod 2^k and a MAC
        // relation modulo 2^{k+s}
        let e = Engine::new(VecPrep::new(narrow, self.me, self.n, self.alpha));
        Ok(y.iter()
            .zip(&rho)
            .map(|(y, p)| e.add_const(&e.neg(p), y))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The naive reference: every odd root by search, for small moduli.
    fn roots_by_search(v: u128, m: u32) -> Vec<u128> {
        let modulus = 1u128 << m;
        (1..modulus)
            .step_by(2)
            .filter(|x| (x * x) % modulus == v % modulus)
            .collect()
    }

    #[test]
    fn square_roots_match_the_search_for_small_moduli() {
        for m in 3..=11 {
            let modulus = 1u128 << m;
            for v in 0..modulus {
                let want = roots_by_search(v, m);
                match odd_square_root(v, m) {
                    Some(c) => {
                        assert!(want.contains(&c), "m = {m}, v = {v}: {c} not in {want:?}");
                        assert_eq!(want.len(), 4, "m = {m}, v = {v}");
                    }
                    None => assert!(want.is_empty(), "m = {m}, v = {v}: missed {want:?}"),
                }
            }
        }
    }

    #[test]
    fn square_roots_of_wide_odd_squares() {
        let mut x: u128 = 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835;
        for m in [34u32, 66, 98, 127, 128] {
            for _ in 0..200 {
                x = x
                    .wrapping_mul(0x2545_f491_4f6c_dd1d)
                    .wrapping_add(0x1234_5679)
                    | 1;
                let r = Z2k::low_bits(x, m);
                let v = Z2k::low_bits(r.wrapping_mul(r), m);
                let c = odd_square_root(v, m).expect("an odd square has a root");
                assert_eq!(Z2k::low_bits(c.wrapping_mul(c), m), v);
                // r is one of ±c, ±c + 2^{m−1}
                let half = if m == 128 {
                    1u128 << 127
                } else {
                    1u128 << (m - 1)
                };
                let cands = [c, c.wrapping_neg(), c ^ half, c.wrapping_neg() ^ half]
                    .map(|y| Z2k::low_bits(y, m));
                assert!(cands.contains(&r), "m = {m}");
            }
        }
        assert_eq!(odd_square_root(3, 34), None);
        assert_eq!(odd_square_root(9, 2), None);
    }

    #[test]
    fn the_rings_of_the_square_roots() {
        let wide = |k, s| square_root_ring(&Z2k::new(k, s).unwrap());
        // Z_2^32: the paper's ring, no lift
        let w32 = wide(32, 64).unwrap();
        assert_eq!((w32.k(), w32.s()), (34, 64));
        assert_eq!(lift_ring(&Z2k::spdz2k_32(), &w32), None);
        assert_eq!(square_root_bit_cost(&Z2k::spdz2k_32()), Some((1, 1)));
        // Z_2^64: s' = 62 within 128 bits, lifted with 63 bits of slack
        let w64 = wide(64, 64).unwrap();
        assert_eq!((w64.k(), w64.s()), (66, 62));
        let lift = lift_ring(&Z2k::spdz2k_64(), &w64).unwrap();
        assert_eq!((lift.k(), lift.s()), (64, 63));
        assert_eq!(square_root_bit_cost(&Z2k::spdz2k_64()), Some((1, 2)));
        // k + s = 127: s' = 63, halving leaves 2^{k+s}, no lift
        let w = wide(63, 64).unwrap();
        assert_eq!(
            (w.k(), w.s(), lift_ring(&Z2k::new(63, 64).unwrap(), &w)),
            (65, 63, None)
        );
        // no room: XOR
        assert_eq!(wide(126, 2), None);
        assert_eq!(square_root_bit_cost(&Z2k::new(127, 1).unwrap()), None);
    }

    #[test]
    fn odd_inverses() {
        for c in [1u128, 3, 5, 0xffff_ffff, u128::MAX, (1u128 << 127) + 1] {
            let i = odd_inverse(c).unwrap();
            assert_eq!(c.wrapping_mul(i), 1, "c = {c}");
        }
        assert_eq!(odd_inverse(4), None);
    }
}
