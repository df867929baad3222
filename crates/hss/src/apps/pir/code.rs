//! The PIR code: syndromes of a Reed–Solomon code over `F_(2^40)` and their decoder.
//!
//! Position `i` (`0 ≤ i < n`) has the locator `X_i = α^i` ([`locator`]), `α` the primitive
//! element of [`Gf40`], so the locators are distinct and nonzero for `n < 2^40 − 1` (this module
//! accepts `n ≤` [`MAX_LEN`]` = 2^32`). The syndromes of `v ∈ F^n` are
//! `S_j = Σ_i v_i · X_i^j` for `j = 1..2t` ([`syndromes`]): the parity checks of a narrow-sense
//! Reed–Solomon code of length `n` with `2t` check symbols. Every `2t` columns of the check
//! matrix `(X_i^j)` form a scaled Vandermonde matrix, so the map is injective on vectors of weight `≤ t` (the code is
//! MDS: `2t` syndromes are the fewest that determine every `t`-sparse vector).
//!
//! Decoding a `t`-sparse vector from its syndromes ([`locate`], [`Support::values`],
//! [`decode_sparse`]) is the classical error decoder:
//!
//! 1. **Berlekamp–Massey** gives the shortest LFSR `Λ(x) = Σ λ_k x^k` (`λ_0 = 1`) generating
//!    `S_1..S_2t`; if `v` has weight `L ≤ t` then `Λ = Π_k (1 − X_k x)` over its support.
//! 2. **Root search** (Chien): `Λ(α^(−i))` for `i = 0..n`, incrementally (`L` products per
//!    position), stopping after `L` roots; the support is the positions of the roots.
//! 3. **Forney**: `v_k = Ω(X_k^(−1)) / Λ'(X_k^(−1))` with `Ω = S(x)·Λ(x) mod x^L`,
//!    `S(x) = Σ_j S_(j+1) x^j` (characteristic 2, first syndrome index 1: no sign, no `X_k`
//!    factor). The same support gives the values of any other vector supported inside it from
//!    that vector's syndromes (the PIR payloads).
//! 4. **Checks** (detection): `Err` unless `deg` of the LFSR `≤ t`, exactly `L` roots lie among
//!    the `n` positions, every decoded value is nonzero (for the vector that gave the support) and
//!    the decoded sparse vector re-encodes to **all** `2t` received syndromes.
//!
//! Costs: syndromes `2t` table products per position (stepping `X_i^j → X_(i+1)^j` with a
//! precomputed table of `α^j`), plus `2t` products per entry other than 0 and 1; decoding
//! `O(t^2)` for Berlekamp–Massey and Forney, `O(t·n)` for the root search and `O(t^2)` for the re-encoding.
//!
//! # What is detected
//!
//! * A vector of weight `≤ t` is always decoded correctly (MDS).
//! * A vector of weight `> t` (or a corrupted syndrome vector) is accepted only if its
//!   syndromes equal those of some vector of weight `≤ t` supported on the `n` positions. There
//!   are about `C(n, t)·2^(40t)` such syndrome vectors among `2^(80t)`, so for syndromes that
//!   behave like random ones the probability of a wrong decoding is about
//!   `C(n, t)·2^(−40t) ≤ (n/2^40)^t / t!` (heuristic; e.g. `2^−20` for `n = 2^20`, `t = 1`,
//!   below `2^−100` for `t = 5`), and the PIR layer's second vector adds `2t − L` more checks.
//! * Given the correct support, any change of the *second* vector's syndromes that leaves `t`
//!   consecutive syndromes intact (e.g. one corrupted syndrome) is always detected: `L ≤ t`
//!   consecutive rows of the check matrix restricted to the support are an invertible
//!   Vandermonde matrix.

use super::gf40::{ConstMul, GROUP_ORDER, Gf40, WindowMul};
use crate::{Error, Result};

/// Largest correction capacity `t` (so at most `2·MAX_T` syndromes).
pub const MAX_T: usize = 1024;

/// Largest code length `n` (number of positions): `2^32`, well below `2^40 − 1`.
pub const MAX_LEN: u64 = 1 << 32;

/// The locator `X_i = α^i` of position `i`.
pub fn locator(i: u64) -> Gf40 {
    Gf40::alpha_pow(i)
}

fn check_t(t: usize) -> Result<()> {
    if t == 0 || t > MAX_T {
        return Err(Error::InvalidParameter(format!(
            "the correction capacity t must be 1 to {MAX_T}, not {t}"
        )));
    }
    Ok(())
}

fn check_len(n: usize) -> Result<()> {
    if n as u64 > MAX_LEN {
        return Err(Error::InvalidParameter(format!(
            "a code has at most {MAX_LEN} positions, not {n}"
        )));
    }
    Ok(())
}

/// Checks a received syndrome vector: an even length `2t` with `1 ≤ t ≤ MAX_T`; returns `t`.
fn syndrome_t(syn: &[Gf40]) -> Result<usize> {
    if syn.is_empty() || !syn.len().is_multiple_of(2) || syn.len() > 2 * MAX_T {
        return Err(Error::Malformed(format!(
            "a syndrome vector has an even length 2 to {}, not {}",
            2 * MAX_T,
            syn.len()
        )));
    }
    Ok(syn.len() / 2)
}

/// The tables stepping `X_i^j → X_(i+1)^j = X_i^j · α^j` for `j = 1..=2t`.
fn step_tables(t: usize) -> Vec<ConstMul> {
    let mut a = Gf40::ONE;
    (0..2 * t)
        .map(|_| {
            a = a.mul_alpha();
            ConstMul::new(a)
        })
        .collect()
}

/// The `2t` syndromes `S_j = Σ_i v_i X_i^j` (`j = 1..2t`) of `values`.
///
/// # Example
///
/// ```
/// use coterie_hss::apps::pir::Gf40;
/// use coterie_hss::apps::pir::code::{decode_sparse, locator, syndromes};
/// let mut v = vec![Gf40::ZERO; 1000];
/// v[17] = Gf40::ONE;
/// v[900] = Gf40::new(12345).unwrap();
/// let s = syndromes(&v, 3).unwrap(); // t = 3: six syndromes
/// assert_eq!(s[0], locator(17) + Gf40::new(12345).unwrap() * locator(900));
/// assert_eq!(decode_sparse(&s, 1000).unwrap(), vec![(17, Gf40::ONE), (900, v[900])]);
/// ```
pub fn syndromes(values: &[Gf40], t: usize) -> Result<Vec<Gf40>> {
    check_t(t)?;
    check_len(values.len())?;
    let steps = step_tables(t);
    let mut cur = vec![Gf40::ONE; 2 * t]; // X_i^j, j = 1..2t, at i = 0
    let mut acc = vec![Gf40::ZERO; 2 * t];
    for &v in values {
        if v == Gf40::ONE {
            for (a, &c) in acc.iter_mut().zip(&cur) {
                *a += c;
            }
        } else if !v.is_zero() {
            let v = WindowMul::new(v);
            for (a, &c) in acc.iter_mut().zip(&cur) {
                *a += v.mul(c);
            }
        }
        for (c, st) in cur.iter_mut().zip(&steps) {
            *c = st.mul(*c);
        }
    }
    Ok(acc)
}

/// The syndromes of `(v_i)` and of `(v_i · w_i)` together (the PIR server's answer: match
/// shares `v` and payloads `w`), sharing the locator powers. `values` and `weights` have the
/// same length.
///
/// # Example
///
/// ```
/// use coterie_hss::apps::pir::Gf40;
/// use coterie_hss::apps::pir::code::{syndromes, syndromes_weighted};
/// let v: Vec<Gf40> = [1, 0, 1, 7].map(|x| Gf40::new(x).unwrap()).to_vec();
/// let w: Vec<Gf40> = [5, 6, 0, 9].map(|x| Gf40::new(x).unwrap()).to_vec();
/// let (s, sw) = syndromes_weighted(&v, &w, 2).unwrap();
/// let vw: Vec<Gf40> = v.iter().zip(&w).map(|(&a, &b)| a * b).collect();
/// assert_eq!((s, sw), (syndromes(&v, 2).unwrap(), syndromes(&vw, 2).unwrap()));
/// ```
pub fn syndromes_weighted(
    values: &[Gf40],
    weights: &[Gf40],
    t: usize,
) -> Result<(Vec<Gf40>, Vec<Gf40>)> {
    check_t(t)?;
    check_len(values.len())?;
    if values.len() != weights.len() {
        return Err(Error::InvalidParameter(
            "as many weights as values are needed".into(),
        ));
    }
    let steps = step_tables(t);
    let mut cur = vec![Gf40::ONE; 2 * t];
    let mut acc = vec![Gf40::ZERO; 2 * t];
    let mut acc_w = vec![Gf40::ZERO; 2 * t];
    for (&v, &w) in values.iter().zip(weights) {
        if !v.is_zero() {
            let vw = if v == Gf40::ONE {
                for (a, &c) in acc.iter_mut().zip(&cur) {
                    *a += c;
                }
                w
            } else {
                let vm = WindowMul::new(v);
                for (a, &c) in acc.iter_mut().zip(&cur) {
                    *a += vm.mul(c);
                }
                v * w
            };
            if !vw.is_zero() {
                let vw = WindowMul::new(vw);
                for (a, &c) in acc_w.iter_mut().zip(&cur) {
                    *a += vw.mul(c);
                }
            }
        }
        for (c, st) in cur.iter_mut().zip(&steps) {
            *c = st.mul(*c);
        }
    }
    Ok((acc, acc_w))
}

/// Berlekamp–Massey: the shortest LFSR `(Λ, L)` generating `s` (`Λ` has `L + 1`
/// coefficients, `λ_0 = 1`), i.e. `Σ_(k=0..L) λ_k s_(m−k) = 0` for `L ≤ m < len`.
fn berlekamp_massey(s: &[Gf40]) -> (Vec<Gf40>, usize) {
    let mut c = vec![Gf40::ONE];
    let mut b = vec![Gf40::ONE];
    let mut l = 0usize;
    let mut shift = 1usize;
    let mut b_inv = Gf40::ONE; // inverse of the discrepancy at b's last length change
    for n in 0..s.len() {
        let mut d = s[n];
        for i in 1..=l.min(c.len() - 1) {
            d += c[i] * s[n - i];
        }
        if d.is_zero() {
            shift += 1;
            continue;
        }
        let coef = d * b_inv;
        let old = (2 * l <= n).then(|| c.clone());
        if c.len() < b.len() + shift {
            c.resize(b.len() + shift, Gf40::ZERO);
        }
        for (i, &bi) in b.iter().enumerate() {
            c[i + shift] += coef * bi;
        }
        match old {
            Some(old) => {
                l = n + 1 - l;
                b = old;
                // d ≠ 0 here, so the inverse exists.
                b_inv = d.inv().unwrap_or(Gf40::ZERO);
                shift = 1;
            }
            None => shift += 1,
        }
    }
    c.resize(l + 1, Gf40::ZERO);
    (c, l)
}

/// `p(x)` by Horner's rule.
fn poly_eval(p: &[Gf40], x: Gf40) -> Gf40 {
    p.iter().rev().fold(Gf40::ZERO, |acc, &c| acc * x + c)
}

/// The support of a sparse vector found by [`locate`]: its positions (ascending) with the
/// error-locator polynomial, ready to give the values of any vector supported inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Support {
    /// `2t`, the number of syndromes it was found from.
    num_syndromes: usize,
    /// The positions, ascending.
    positions: Vec<usize>,
    /// `Λ`, `λ_0 = 1`, degree `L = positions.len()`.
    lambda: Vec<Gf40>,
    /// `X_k^(−1)` per position.
    inv_locators: Vec<Gf40>,
    /// `1 / Λ'(X_k^(−1))` per position.
    inv_deriv: Vec<Gf40>,
}

impl Support {
    /// The positions, ascending.
    pub fn positions(&self) -> &[usize] {
        &self.positions
    }

    /// The values on this support of the vector with syndromes `syn` (the same number of
    /// syndromes as the support was found from), by Forney's formula; `Malformed` unless the
    /// decoded sparse vector re-encodes to every syndrome in `syn` (the vector is not supported
    /// inside this support, or `syn` was corrupted). Values may be zero.
    pub fn values(&self, syn: &[Gf40]) -> Result<Vec<Gf40>> {
        if syn.len() != self.num_syndromes {
            return Err(Error::Malformed(format!(
                "expected {} syndromes, got {}",
                self.num_syndromes,
                syn.len()
            )));
        }
        let l = self.positions.len();
        // Ω = S(x)·Λ(x) mod x^L.
        let omega: Vec<Gf40> = (0..l)
            .map(|k| (0..=k).map(|i| self.lambda[i] * syn[k - i]).sum())
            .collect();
        let vals: Vec<Gf40> = self
            .inv_locators
            .iter()
            .zip(&self.inv_deriv)
            .map(|(&xi, &di)| poly_eval(&omega, xi) * di)
            .collect();
        // Re-encoding check against all 2t syndromes.
        let mut acc = vec![Gf40::ZERO; self.num_syndromes];
        for (&pos, &v) in self.positions.iter().zip(&vals) {
            if v.is_zero() {
                continue;
            }
            let x = locator(pos as u64);
            let mut p = x;
            for a in &mut acc {
                *a += v * p;
                p *= x;
            }
        }
        if acc != syn {
            return Err(Error::Malformed(
                "the syndromes are not those of a vector on the decoded support \
                 (more than t nonzero entries, or a corrupted answer)"
                    .into(),
            ));
        }
        Ok(vals)
    }
}

/// Finds the support of the vector of length `n` with syndromes `syn` (`2t` of them), if it
/// has at most `t` nonzero entries; `Malformed` when Berlekamp–Massey's LFSR is longer than `t`
/// or its locator polynomial does not have exactly that many roots among the `n` positions
/// (more than `t` nonzero entries, or corrupted syndromes). Work: `O(t^2 + t·n)`.
pub fn locate(syn: &[Gf40], n: usize) -> Result<Support> {
    let t = syndrome_t(syn)?;
    check_len(n)?;
    let (lambda, l) = berlekamp_massey(syn);
    let too_many = || {
        Error::Malformed(format!(
            "the syndromes do not decode: more than t = {t} nonzero entries \
             (or a corrupted syndrome vector)"
        ))
    };
    if l > t || l > n {
        return Err(too_many());
    }
    // Chien search: terms[k] = λ_k · α^(−i·k) at position i.
    let alpha_inv = Gf40::alpha_pow(GROUP_ORDER - 1);
    let mut step_val = Gf40::ONE;
    let steps: Vec<ConstMul> = (0..=l)
        .map(|_| {
            let s = ConstMul::new(step_val);
            step_val *= alpha_inv;
            s
        })
        .collect();
    let mut terms = lambda.clone();
    let mut positions = Vec::with_capacity(l);
    for i in 0..n {
        if positions.len() == l {
            break;
        }
        let sum: Gf40 = terms.iter().copied().sum();
        if sum.is_zero() {
            positions.push(i);
        }
        for (tm, st) in terms.iter_mut().zip(&steps).skip(1) {
            *tm = st.mul(*tm);
        }
    }
    if positions.len() != l {
        return Err(too_many());
    }
    // Λ'(x) = Σ_(k odd) λ_k x^(k−1) (characteristic 2).
    let deriv: Vec<Gf40> = (1..=l)
        .map(|k| if k % 2 == 1 { lambda[k] } else { Gf40::ZERO })
        .collect();
    let inv_locators: Vec<Gf40> = positions
        .iter()
        .map(|&p| locator(GROUP_ORDER - p as u64 % GROUP_ORDER)) // α^(−p)
        .collect();
    let inv_deriv = inv_locators
        .iter()
        .map(|&xi| poly_eval(&deriv, xi).inv().ok_or_else(too_many))
        .collect::<Result<Vec<_>>>()?;
    let support = Support {
        num_syndromes: syn.len(),
        positions,
        lambda,
        inv_locators,
        inv_deriv,
    };
    Ok(support)
}

/// The nonzero entries `(position, value)`, ascending, of the vector of length `n` with
/// syndromes `syn` (`2t` of them) if it has at most `t`; `Malformed` otherwise where detectable
/// (see the module docs for what is).
pub fn decode_sparse(syn: &[Gf40], n: usize) -> Result<Vec<(usize, Gf40)>> {
    let support = locate(syn, n)?;
    let vals = support.values(syn)?;
    if vals.iter().any(|v| v.is_zero()) {
        return Err(Error::Malformed(
            "the syndromes do not decode (a zero value on the located support)".into(),
        ));
    }
    Ok(support.positions.iter().copied().zip(vals).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn rng(seed: u64) -> rand_chacha::ChaCha20Rng {
        rand_chacha::ChaCha20Rng::seed_from_u64(seed) // insecure fixed seed (tests)
    }

    fn nonzero(r: &mut impl Rng) -> Gf40 {
        loop {
            let v = Gf40::random(r);
            if !v.is_zero() {
                return v;
            }
        }
    }

    /// A random vector of length `n` with exactly `w` nonzero entries (some of them 1).
    fn sparse(r: &mut impl Rng, n: usize, w: usize) -> Vec<Gf40> {
        let mut v = vec![Gf40::ZERO; n];
        let mut placed = 0;
        while placed < w {
            let i = (r.next_u64() % n as u64) as usize;
            if v[i].is_zero() {
                v[i] = if r.next_u64().is_multiple_of(3) {
                    Gf40::ONE
                } else {
                    nonzero(r)
                };
                placed += 1;
            }
        }
        v
    }

    /// Direct definition: `S_j = Σ_i v_i α^(i·j)`.
    fn naive_syndromes(v: &[Gf40], t: usize) -> Vec<Gf40> {
        (1..=2 * t as u64)
            .map(|j| {
                v.iter()
                    .enumerate()
                    .map(|(i, &x)| x * Gf40::alpha_pow(i as u64 * j))
                    .sum()
            })
            .collect()
    }

    /// Solves `A x = b` over F (square), `None` if singular.
    fn solve(mut a: Vec<Vec<Gf40>>, mut b: Vec<Gf40>) -> Option<Vec<Gf40>> {
        let n = b.len();
        for col in 0..n {
            let piv = (col..n).find(|&r| !a[r][col].is_zero())?;
            a.swap(col, piv);
            b.swap(col, piv);
            let inv = a[col][col].inv()?;
            for x in a[col].iter_mut() {
                *x *= inv;
            }
            b[col] *= inv;
            for r in 0..n {
                if r != col && !a[r][col].is_zero() {
                    let f = a[r][col];
                    let pivot_row = a[col].clone();
                    for (x, &p) in a[r].iter_mut().zip(&pivot_row) {
                        *x += f * p;
                    }
                    let sub = f * b[col];
                    b[r] += sub;
                }
            }
        }
        Some(b)
    }

    /// Reference decoder: every support of size ≤ t (smallest first), values from the first
    /// |K| syndromes by Gaussian elimination, accepted if nonzero and consistent with all 2t.
    fn brute_force(syn: &[Gf40], n: usize) -> Option<Vec<(usize, Gf40)>> {
        let t = syn.len() / 2;
        if syn.iter().all(|s| s.is_zero()) {
            return Some(vec![]);
        }
        fn subsets(
            n: usize,
            k: usize,
            start: usize,
            cur: &mut Vec<usize>,
            out: &mut Vec<Vec<usize>>,
        ) {
            if cur.len() == k {
                out.push(cur.clone());
                return;
            }
            for i in start..n {
                cur.push(i);
                subsets(n, k, i + 1, cur, out);
                cur.pop();
            }
        }
        for k in 1..=t.min(n) {
            let mut all = vec![];
            subsets(n, k, 0, &mut vec![], &mut all);
            for supp in all {
                let a: Vec<Vec<Gf40>> = (1..=k as u64)
                    .map(|j| {
                        supp.iter()
                            .map(|&i| Gf40::alpha_pow(i as u64 * j))
                            .collect()
                    })
                    .collect();
                let Some(x) = solve(a, syn[..k].to_vec()) else {
                    continue;
                };
                if x.iter().any(|v| v.is_zero()) {
                    continue;
                }
                let mut v = vec![Gf40::ZERO; n];
                for (&i, &xi) in supp.iter().zip(&x) {
                    v[i] = xi;
                }
                if naive_syndromes(&v, t) == syn {
                    return Some(supp.into_iter().zip(x).collect());
                }
            }
        }
        None
    }

    fn nonzero_entries(v: &[Gf40]) -> Vec<(usize, Gf40)> {
        v.iter()
            .copied()
            .enumerate()
            .filter(|(_, x)| !x.is_zero())
            .collect()
    }

    #[test]
    fn fast_syndromes_match_definition() {
        let mut r = rng(10);
        for (n, t) in [(1, 1), (5, 2), (40, 3), (200, 7)] {
            let v: Vec<Gf40> = (0..n)
                .map(|i| match i % 3 {
                    0 => Gf40::ZERO,
                    1 => Gf40::ONE,
                    _ => Gf40::random(&mut r),
                })
                .collect();
            let w: Vec<Gf40> = (0..n).map(|_| Gf40::random(&mut r)).collect();
            let s = syndromes(&v, t).unwrap();
            assert_eq!(s, naive_syndromes(&v, t));
            let vw: Vec<Gf40> = v.iter().zip(&w).map(|(&a, &b)| a * b).collect();
            let (s1, s2) = syndromes_weighted(&v, &w, t).unwrap();
            assert_eq!(s1, s);
            assert_eq!(s2, naive_syndromes(&vw, t));
        }
    }

    #[test]
    fn decodes_random_sparse_vectors() {
        let mut r = rng(11);
        for round in 0..300 {
            let n = 1 + (r.next_u64() % 300) as usize;
            let t = 1 + (r.next_u64() % 8) as usize;
            let w = (r.next_u64() % (t.min(n) as u64 + 1)) as usize;
            let v = sparse(&mut r, n, w);
            let s = syndromes(&v, t).unwrap();
            let got = decode_sparse(&s, n).unwrap_or_else(|e| panic!("round {round}: {e}"));
            assert_eq!(got, nonzero_entries(&v), "round {round}");
            let supp = locate(&s, n).unwrap();
            assert_eq!(supp.positions().len(), w);
        }
    }

    #[test]
    fn fast_decoder_agrees_with_brute_force() {
        let mut r = rng(12);
        let mut accepted_heavy = 0;
        for round in 0..400 {
            let n = 1 + (r.next_u64() % 7) as usize;
            let t = 1 + (r.next_u64() % 3) as usize;
            let syn: Vec<Gf40> = match round % 3 {
                // weight ≤ t: both must decode it
                0 => {
                    let w = (r.next_u64() % (t.min(n) as u64 + 1)) as usize;
                    syndromes(&sparse(&mut r, n, w), t).unwrap()
                }
                // weight > t (when possible): both must agree (normally both reject)
                1 => {
                    let w = (t + 1).min(n);
                    syndromes(&sparse(&mut r, n, w), t).unwrap()
                }
                // uniformly random syndromes
                _ => (0..2 * t).map(|_| Gf40::random(&mut r)).collect(),
            };
            let fast = decode_sparse(&syn, n).ok();
            let slow = brute_force(&syn, n);
            assert_eq!(fast, slow, "round {round}, n = {n}, t = {t}");
            if round % 3 == 1 && n > t && fast.is_some() {
                accepted_heavy += 1;
            }
        }
        assert_eq!(accepted_heavy, 0, "heavy vectors must be rejected");
    }

    #[test]
    fn detects_too_many_and_corruption() {
        let mut r = rng(13);
        for _ in 0..200 {
            let n = 50 + (r.next_u64() % 200) as usize;
            let t = 1 + (r.next_u64() % 6) as usize;
            let w = t + 1 + (r.next_u64() % 4) as usize;
            let v = sparse(&mut r, n, w);
            assert!(decode_sparse(&syndromes(&v, t).unwrap(), n).is_err());
            // One corrupted syndrome of a t-sparse vector.
            let w = (r.next_u64() % (t as u64 + 1)) as usize;
            let v = sparse(&mut r, n, w);
            let mut s = syndromes(&v, t).unwrap();
            let j = (r.next_u64() % (2 * t) as u64) as usize;
            s[j] += nonzero(&mut r);
            assert!(decode_sparse(&s, n).is_err());
        }
    }

    #[test]
    fn second_vector_on_the_support() {
        let mut r = rng(14);
        for _ in 0..100 {
            let n = 100;
            let t = 5;
            let v = sparse(&mut r, n, 4);
            let w: Vec<Gf40> = v
                .iter()
                .map(|x| {
                    if x.is_zero() || r.next_u64().is_multiple_of(4) {
                        Gf40::ZERO
                    } else {
                        Gf40::random(&mut r)
                    }
                })
                .collect();
            let supp = locate(&syndromes(&v, t).unwrap(), n).unwrap();
            let mut sw = syndromes(&w, t).unwrap();
            let vals = supp.values(&sw).unwrap();
            let expect: Vec<Gf40> = supp.positions().iter().map(|&i| w[i]).collect();
            assert_eq!(vals, expect);
            // One corrupted syndrome of the second vector: always detected.
            let j = (r.next_u64() % 10) as usize;
            sw[j] += nonzero(&mut r);
            assert!(supp.values(&sw).is_err());
            // A second vector with an entry outside the support: detected.
            let mut w2 = w.clone();
            let outside = (0..n).find(|&i| v[i].is_zero()).unwrap();
            w2[outside] = Gf40::ONE;
            assert!(supp.values(&syndromes(&w2, t).unwrap()).is_err());
            assert!(supp.values(&sw[..8]).is_err());
        }
    }

    #[test]
    fn bad_inputs() {
        let s = vec![Gf40::ONE; 3];
        assert!(decode_sparse(&s, 10).is_err()); // odd length
        assert!(decode_sparse(&[], 10).is_err());
        assert!(decode_sparse(&vec![Gf40::ZERO; 2 * MAX_T + 2], 10).is_err());
        assert!(syndromes(&[Gf40::ONE], 0).is_err());
        assert!(syndromes(&[Gf40::ONE], MAX_T + 1).is_err());
        assert!(syndromes_weighted(&[Gf40::ONE], &[], 1).is_err());
        // The zero vector decodes to nothing, also with n = 0.
        assert_eq!(decode_sparse(&[Gf40::ZERO; 4], 0).unwrap(), vec![]);
        // A nonzero syndrome vector cannot come from an empty code.
        assert!(decode_sparse(&[Gf40::ONE, Gf40::ONE], 0).is_err());
        assert_eq!(locator(0), Gf40::ONE);
        assert_eq!(locator(3), Gf40::new(8).unwrap());
    }
}
