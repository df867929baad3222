//! The three structured linear maps from subset products to gate tables (seed 000 §8.3–§8.8),
//! generic over anything with addition and subtraction, so the same code runs on plaintext
//! integers (the reference) and on authenticated shares (the MPC, all local operations).
//!
//! Each map costs `O(N log N)` additions for a vector of length `N`. The recursion always uses
//! the **stored** entry `p[0]` of its input, never the literal `1`: on the latter half `p1 =
//! r·p0` the local `p[0]` is `r`, and only then is the map homogeneous linear, so that
//! `map(p1) = r·map(p0)` without a multiplication (seed 000 §8.3, §17.6).

/// Additive operations on the elements a linear map works on.
pub trait LinOps<T> {
    /// The zero element.
    fn zero(&self) -> T;
    /// `a + b`.
    fn add(&self, a: &T, b: &T) -> T;
    /// `a - b`.
    fn sub(&self, a: &T, b: &T) -> T;
}

/// Plaintext integers (exact, for the reference and the tests).
#[derive(Debug, Clone, Copy, Default)]
pub struct IntOps;

impl LinOps<i64> for IntOps {
    fn zero(&self) -> i64 {
        0
    }
    fn add(&self, a: &i64, b: &i64) -> i64 {
        a + b
    }
    fn sub(&self, a: &i64, b: &i64) -> i64 {
        a - b
    }
}

fn check_len(len: usize) {
    debug_assert!(
        len.is_power_of_two(),
        "linear maps take power-of-two lengths"
    );
}

/// SubsetProdsToSigns_b (Procedure 6): from the subset products `p` of the bits of `r ∈ [2^b]`
/// (`len(p) = 2^b`) to the table `(Sign(x - r))_{x ∈ [2^b]}`.
pub fn subset_prods_to_signs<T: Clone, O: LinOps<T>>(o: &O, p: &[T]) -> Vec<T> {
    check_len(p.len());
    if p.len() <= 1 {
        return vec![o.zero()];
    }
    let h = p.len() / 2;
    let (p0, p1) = p.split_at(h);
    let s0 = subset_prods_to_signs(o, p0);
    let s1 = subset_prods_to_signs(o, p1);
    let mut out = Vec::with_capacity(2 * h);
    for (a, b) in s0.iter().zip(&s1) {
        // -p1[0] + s0 - s1
        out.push(o.sub(&o.sub(a, b), &p1[0]));
    }
    let c = o.sub(&p0[0], &p1[0]);
    for b in &s1 {
        out.push(o.add(&c, b));
    }
    out
}

/// [`subset_prods_to_signs`] computed in one output buffer: each level of the recursion
/// overwrites its two halves in place, so a table costs one allocation instead of one per
/// recursive call (the MPC runs it on every 8-bit gate's 256 shares). Tested equal to the
/// recursive reference.
pub fn subset_prods_to_signs_fast<T: Clone, O: LinOps<T>>(o: &O, p: &[T]) -> Vec<T> {
    check_len(p.len());
    let mut out = vec![o.zero(); p.len().max(1)];
    if p.len() > 1 {
        signs_in_place(o, p, &mut out);
    }
    out
}

/// The recursion of [`subset_prods_to_signs_fast`]; `out.len() == p.len()`, a power of two.
fn signs_in_place<T: Clone, O: LinOps<T>>(o: &O, p: &[T], out: &mut [T]) {
    if p.len() <= 1 {
        if let Some(x) = out.first_mut() {
            *x = o.zero();
        }
        return;
    }
    let h = p.len() / 2;
    let (p0, p1) = p.split_at(h);
    let (s0, s1) = out.split_at_mut(h);
    signs_in_place(o, p0, s0);
    signs_in_place(o, p1, s1);
    let c = o.sub(&p0[0], &p1[0]);
    for (a, b) in s0.iter_mut().zip(s1.iter_mut()) {
        // the same entries as the reference: -p1[0] + s0 - s1, then c + s1
        let lo = o.sub(&o.sub(a, b), &p1[0]);
        *b = o.add(&c, b);
        *a = lo;
    }
}

/// SubsetProdsToCarries_d (Procedure 9): the table `(Carry_d(x, rbar))_{x ∈ [2^d]}` with
/// `rbar = (2^d - 1) - r`. The base case returns the stored `p[0]` (§17.6).
pub fn subset_prods_to_carries<T: Clone, O: LinOps<T>>(o: &O, p: &[T]) -> Vec<T> {
    check_len(p.len());
    if p.len() <= 1 {
        return p.to_vec();
    }
    let h = p.len() / 2;
    let (p0, p1) = p.split_at(h);
    let c0 = subset_prods_to_carries(o, p0);
    let c1 = subset_prods_to_carries(o, p1);
    let mut out = Vec::with_capacity(2 * h);
    for (a, b) in c0.iter().zip(&c1) {
        out.push(o.sub(a, b));
    }
    let c = o.sub(&p0[0], &p1[0]);
    for b in &c1 {
        out.push(o.add(&c, b));
    }
    out
}

/// SubsetProdsToModLTZ_{d+1} (Procedure 8): from the subset products of the bits of
/// `r ∈ Z_{2^{d+1}}` (`len(p) = 2^{d+1} ≥ 2`) to `(ModLTZ_{d+1}((x - r) mod 2^{d+1}))_x`.
pub fn subset_prods_to_modltz<T: Clone, O: LinOps<T>>(o: &O, p: &[T]) -> Vec<T> {
    check_len(p.len());
    if p.len() < 2 {
        // t = 0 has no ModLTZ; callers validate t ≥ 1.
        return vec![o.zero(); p.len()];
    }
    let h = p.len() / 2;
    let (p0, p1) = p.split_at(h);
    let c0 = subset_prods_to_carries(o, p0);
    let c1 = subset_prods_to_carries(o, p1);
    let mut out = Vec::with_capacity(2 * h);
    let lo = o.sub(&p0[0], &p1[0]);
    for (a, b) in c0.iter().zip(&c1) {
        // (p0[0] - p1[0]) - c0 + 2 c1
        out.push(o.add(&o.sub(&lo, a), &o.add(b, b)));
    }
    for (a, b) in c0.iter().zip(&c1) {
        // p1[0] + c0 - 2 c1
        out.push(o.sub(&o.add(&p1[0], a), &o.add(b, b)));
    }
    out
}
