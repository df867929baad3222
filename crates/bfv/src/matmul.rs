//! Encrypted `d × d` matrix products over `Z_p` (seed 002 §4): the diagonal and shifted-diagonal
//! encodings and MatriGear's Algorithm 1, one tensor per output diagonal with lazy key switching:
//! 3 gadget products per output ciphertext (`3d` in all) and exactly `d − 1` rotation keys.
//!
//! **Encodings** (indices mod `d`, `ρ^k` a left rotation by `k`):
//! `ι(A)_i = (a_{j, j+i})_j` (Halevi–Shoup diagonals) and `ι̃(B)_i = (b_{j−i, j})_j =
//! ρ^{−i}(ι(B)_i)`. Then `ι(AB)_i = Σ_k ι(A)_k ⊙ ρ^i(ι̃(B)_{i−k})` (Eq. 3). With `d | D`,
//! `l = D/d` matrices share the ciphertexts, matrix `t` in slots `j·l + t` (§4.3, with the spec's
//! fix `a_{j, j+i}` of the printed batched `ι`), and `ρ^i` becomes `ρ^{i·l}`.
//!
//! **Algorithm 1** (with the spec's fix of the printed term order): for output diagonal `i`,
//! the tensor of `ct_{ι(A)_k} = (a_0, a_1)` (key `(1, s)`) with `φ^{il}(ct_{ι̃(B)_{i−k}}) = (b_0,
//! b_1)` (key `(1, φ^{il}(s))`) is summed over `k` as four parts
//! `D_0 = Σ a_0 b_0`, `D_1 = Σ a_1 b_0` (of `s`), `D_2 = Σ a_0 b_1` (of `φ^{il}(s)`),
//! `D_3 = Σ a_1 b_1` (of `s·φ^{il}(s)`), scaled and rounded once, and switched back lazily:
//! `(u_0, u_1) = D_2 ⊡ rtk`, `(v_0, v_1) = D_3 ⊡ rtk`, `(w_0, w_1) = v_1 ⊡ rlk`, output
//! `(D_0 + u_0 + w_0, D_1 + u_1 + v_0 + w_1)`. For `i = 0`, `φ^0 = id`: `(D_0 + w_0, D_1 + D_2 +
//! w_1)` with `(w_0, w_1) = D_3 ⊡ rlk`. The paper prints `D_1` and `D_2` the other way round,
//! which decrypts to garbage (a test checks that it does).
//!
//! The tensors are exact ([`crate::eval::tensor`]), and the whole sum over `k` is scaled and
//! rounded once whenever the auxiliary basis has room for `d` products per coefficient (it has,
//! with many bits to spare, for every named set and `d ≤ 2^20`); on a context with less room the
//! sum is rounded in chunks that fit and the rounded parts are added (each rounding adds at most
//! `1/2` per coefficient before the multiplication by `X^D − b`, far below the tensor's noise).
//!
//! ```
//! use coterie_bfv::matmul::{diagonal_decode, diagonal_encode, matmul, shifted_diagonal_encode};
//! use coterie_bfv::{Context, Params, Plaintext, SecretKey};
//! use coterie_math::bigint::BigInt;
//! use coterie_math::prg::Csprng;
//! // Toy-B (seed 002 §8, insecure): D = 8 slots; d = 2 so l = 4 products at once (all equal here).
//! let ctx = Context::new(Params::insecure_toy_cyclotomic(32, 132, 4).unwrap()).unwrap();
//! let mut rng = Csprng::new();
//! let sk = SecretKey::generate(&ctx, &mut rng);
//! let (pk, rlk) = (sk.public_key(&mut rng), sk.relin_key(&mut rng));
//! let rot = sk.matmul_rotation_keys(2, &mut rng).unwrap();
//! assert_eq!(rot.elements().len(), 1); // d − 1 rotation keys
//! let m = |v: [[u32; 2]; 2]| v.map(|r| r.map(BigInt::from).to_vec()).to_vec();
//! let (a, b) = (m([[1, 2], [3, 4]]), m([[5, 6], [7, 8]]));
//! let enc = |vs: Vec<Vec<BigInt>>| -> Vec<_> {
//!     vs.iter().map(|v| pk.encrypt(&Plaintext::encode_slots(&ctx, v).unwrap(), &mut Csprng::new()).unwrap()).collect()
//! };
//! let ca = enc(diagonal_encode(&vec![a; 4], 8).unwrap());
//! let cb = enc(shifted_diagonal_encode(&vec![b; 4], 8).unwrap());
//! let cc = matmul(&ca, &cb, &rlk, &rot).unwrap();
//! let diags: Vec<_> = cc.iter().map(|c| sk.decrypt(c).unwrap().decode_slots().unwrap()).collect();
//! let c = diagonal_decode(&diags, 4).unwrap(); // all four batched products
//! assert!(c.iter().all(|x| *x == m([[19, 22], [43, 50]]))); // seed 002 §8 test 9 KAT
//! ```

use coterie_math::bigint::BigInt;
use coterie_math::poly::{Poly, Representation, RingContext};

use crate::ciphertext::KeySet;
#[cfg(test)]
use crate::eval::tensor;
use crate::eval::{Tensor, extend, gadget_product, scale_and_round};

/// Products of residues below `2^62` a 128-bit lazy sum can hold.
const LAZY_TERMS: usize = 16;
use crate::keys::{GaloisKey, GaloisKeys, RelinKey};
use crate::slots::slot_rotation_element;
use crate::{Ciphertext, Context, Error, Result, SecretKey};

/// A `d × d` matrix over `Z_p`, as `d` rows of `d` entries.
pub type Matrix = Vec<Vec<BigInt>>;

/// Checks `d | slots` and that every matrix is `d × d`; returns `(d, l = slots / d)`.
fn layout(mats: &[Matrix], slots: usize) -> Result<(usize, usize)> {
    let d = mats
        .first()
        .map(Vec::len)
        .ok_or_else(|| Error::InvalidParameter("no matrices to encode".into()))?;
    if d == 0 || !slots.is_multiple_of(d) {
        return Err(Error::InvalidParameter(format!(
            "the dimension d = {d} must divide the number of slots D = {slots}"
        )));
    }
    let l = slots / d;
    if mats.len() > l {
        return Err(Error::InvalidParameter(format!(
            "{} matrices for l = D/d = {l} batch positions",
            mats.len()
        )));
    }
    if mats
        .iter()
        .any(|m| m.len() != d || m.iter().any(|r| r.len() != d))
    {
        return Err(Error::Malformed(format!("a matrix is not {d} × {d}")));
    }
    Ok((d, l))
}

/// Both encodings: `vec_i[j·l + t] = mats[t][row(i, j)][col(i, j)]`.
fn encode_with(
    mats: &[Matrix],
    slots: usize,
    index: impl Fn(usize, usize, usize) -> (usize, usize),
) -> Result<Vec<Vec<BigInt>>> {
    let (d, l) = layout(mats, slots)?;
    Ok((0..d)
        .map(|i| {
            let mut v = vec![BigInt::new(); slots];
            for (t, m) in mats.iter().enumerate() {
                for j in 0..d {
                    let (r, c) = index(d, i, j);
                    v[j * l + t] = m[r][c].clone();
                }
            }
            v
        })
        .collect())
}

/// The diagonal encoding `ι` of up to `l = slots/d` matrices (seed 002 §4.1, batched as §4.3):
/// `d` slot vectors, `vec_i[j·l + t] = A^(t)_{j, j+i mod d}`; missing matrices are zero.
///
/// # Errors
/// [`Error::InvalidParameter`] unless `d | slots` and at most `l` matrices are given;
/// [`Error::Malformed`] for a matrix that is not `d × d`.
///
/// ```
/// use coterie_bfv::matmul::diagonal_encode;
/// use coterie_math::bigint::BigInt;
/// // Seed 002 §4.1: A[i][j] = 4i + j, d = 4.
/// let a: Vec<Vec<BigInt>> = (0..4).map(|i| (0..4).map(|j| BigInt::from(4 * i + j)).collect()).collect();
/// let iota = diagonal_encode(&[a], 4).unwrap();
/// assert_eq!(iota[1], [1, 6, 11, 12].map(BigInt::from));
/// ```
pub fn diagonal_encode(mats: &[Matrix], slots: usize) -> Result<Vec<Vec<BigInt>>> {
    encode_with(mats, slots, |d, i, j| (j, (j + i) % d))
}

/// The shifted-diagonal encoding `ι̃` (seed 002 §4.1, batched as §4.3):
/// `vec_i[j·l + t] = B^(t)_{j−i mod d, j}`.
///
/// # Errors
/// As [`diagonal_encode`].
///
/// ```
/// use coterie_bfv::matmul::shifted_diagonal_encode;
/// use coterie_math::bigint::BigInt;
/// let a: Vec<Vec<BigInt>> = (0..4).map(|i| (0..4).map(|j| BigInt::from(4 * i + j)).collect()).collect();
/// let shifted = shifted_diagonal_encode(&[a], 4).unwrap();
/// assert_eq!(shifted[1], [12, 1, 6, 11].map(BigInt::from));
/// ```
pub fn shifted_diagonal_encode(mats: &[Matrix], slots: usize) -> Result<Vec<Vec<BigInt>>> {
    encode_with(mats, slots, |d, i, j| ((j + d - i) % d, j))
}

/// Checks `d` vectors of one length divisible by `d`; returns `l`.
fn check_vectors(vecs: &[Vec<BigInt>]) -> Result<usize> {
    let d = vecs.len();
    let slots = vecs.first().map_or(0, Vec::len);
    if d == 0 || slots == 0 || !slots.is_multiple_of(d) || vecs.iter().any(|v| v.len() != slots) {
        return Err(Error::Malformed(format!(
            "{d} slot vectors of lengths that are not one multiple of d"
        )));
    }
    Ok(slots / d)
}

fn decode_with(
    vecs: &[Vec<BigInt>],
    count: usize,
    index: impl Fn(usize, usize, usize) -> (usize, usize),
) -> Result<Vec<Matrix>> {
    let l = check_vectors(vecs)?;
    let d = vecs.len();
    if count > l {
        return Err(Error::InvalidParameter(format!(
            "{count} matrices asked of l = {l} batch positions"
        )));
    }
    let mut out = vec![vec![vec![BigInt::new(); d]; d]; count];
    for (i, v) in vecs.iter().enumerate() {
        for j in 0..d {
            let (r, c) = index(d, i, j);
            for (t, m) in out.iter_mut().enumerate() {
                m[r][c] = v[j * l + t].clone();
            }
        }
    }
    Ok(out)
}

/// The inverse of [`diagonal_encode`]: the first `count` matrices of `d` slot vectors.
///
/// # Errors
/// [`Error::Malformed`] unless there are `d` vectors of one length `l·d`;
/// [`Error::InvalidParameter`] for `count > l`.
pub fn diagonal_decode(vecs: &[Vec<BigInt>], count: usize) -> Result<Vec<Matrix>> {
    decode_with(vecs, count, |d, i, j| (j, (j + i) % d))
}

/// The inverse of [`shifted_diagonal_encode`].
///
/// # Errors
/// As [`diagonal_decode`].
pub fn shifted_diagonal_decode(vecs: &[Vec<BigInt>], count: usize) -> Result<Vec<Matrix>> {
    decode_with(vecs, count, |d, i, j| ((j + d - i) % d, j))
}

/// The Galois elements MatMul uses for dimension `d`: `5^{i·l·M/2} mod 2N`, `i = 1 … d − 1`,
/// `l = D/d` (seed 002 §4.3).
///
/// # Errors
/// [`Error::Unsupported`] without slots; [`Error::InvalidParameter`] unless `d ≥ 1` divides `D`.
pub fn matmul_galois_elements(ctx: &Context, d: usize) -> Result<Vec<usize>> {
    let slots = ctx.slot_encoder()?.slots();
    if d == 0 || !slots.is_multiple_of(d) {
        return Err(Error::InvalidParameter(format!(
            "the dimension d = {d} must divide the number of slots D = {slots}"
        )));
    }
    let l = slots / d;
    (1..d)
        .map(|i| slot_rotation_element(ctx, (i * l) as i64))
        .collect()
}

impl SecretKey {
    /// The `d − 1` rotation keys of MatMul for dimension `d` ([`matmul_galois_elements`]); with
    /// the relinearization key they are all the evaluation keys it needs.
    ///
    /// # Errors
    /// As [`matmul_galois_elements`].
    pub fn matmul_rotation_keys<R: rand::CryptoRng + ?Sized>(
        &self,
        d: usize,
        rng: &mut R,
    ) -> Result<GaloisKeys> {
        let mut keys = GaloisKeys::default();
        for g in matmul_galois_elements(&self.ctx, d)? {
            keys.insert(self.galois_key(g, rng)?);
        }
        Ok(keys)
    }
}

/// The order of the middle tensor parts in the key switch: as the spec fixes it, or as the
/// paper prints it (kept only to test that the printed order fails).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TermOrder {
    Fixed,
    #[cfg(test)]
    Printed,
}

/// MatMul (seed 002 Algorithm 1, fixed, batched): from the `d` ciphertexts of `ι(A)` and the `d`
/// of `ι̃(B)` (each a 2-part ciphertext at one level), the `d` ciphertexts of `ι(AB)`, for every
/// batched pair at once. `rot` must hold the elements of [`matmul_galois_elements`] (others are
/// ignored).
///
/// Hoisted: every operand is extended to `Q ∪ P` and transformed once; the automorphisms of the
/// B side are index permutations in the NTT domain; each output diagonal accumulates its `d`
/// four-part products pointwise in 128-bit sums (one modular reduction per 16 products), then
/// takes one inverse transform, one scale-and-round and three gadget products. Its output is
/// identical, bit for bit, to the unhoisted reference the tests keep.
///
/// # Errors
/// [`Error::InvalidParameter`] unless `a` and `b` hold the same `d ≥ 1` ciphertexts with
/// `d | D`; [`Error::Unsupported`] for parameters without slots or a ciphertext of other than
/// two single-key parts; [`Error::Mismatch`] for mixed contexts or levels;
/// [`Error::MissingKey`] for a missing rotation key.
pub fn matmul(
    a: &[Ciphertext],
    b: &[Ciphertext],
    rlk: &RelinKey,
    rot: &GaloisKeys,
) -> Result<Vec<Ciphertext>> {
    let elements = check_operands(a, b, rlk)?;
    let (ctx, level) = (&a[0].ctx, a[0].level);
    let d = a.len();
    let ext = |c: &Ciphertext| -> Result<[(Poly, Poly); 2]> {
        Ok([
            extend(ctx, level, &c.parts[0])?,
            extend(ctx, level, &c.parts[1])?,
        ])
    };
    // Products summed exactly before one scale-and-round (every product, for the named sets).
    let capacity = ctx.tensor_capacity(level)?;
    let xa = a.iter().map(ext).collect::<Result<Vec<_>>>()?;
    let xb = b.iter().map(ext).collect::<Result<Vec<_>>>()?;
    let mut out = Vec::with_capacity(d);
    for i in 0..d {
        let (g, key) = step_key(i, &elements, rot)?;
        // φ^g of the B side: one NTT-domain permutation per limb and step, read through (a
        // gather) instead of materialized.
        let perms = if g == 1 {
            None
        } else {
            Some((
                permutations(xb[0][0].0.context(), g)?,
                permutations(xb[0][0].1.context(), g)?,
            ))
        };
        let mut parts: Option<Vec<Poly>> = None;
        for chunk in (0..d).collect::<Vec<_>>().chunks(capacity) {
            let (mut q, mut p): (Option<Vec<Poly>>, Option<Vec<Poly>>) = (None, None);
            for lazy in chunk.chunks(LAZY_TERMS) {
                let terms = |side: fn(&(Poly, Poly)) -> &Poly| -> Vec<[&Poly; 4]> {
                    lazy.iter()
                        .map(|&k| {
                            let (ak, bj) = (&xa[k], &xb[(i + d - k) % d]);
                            [side(&ak[0]), side(&ak[1]), side(&bj[0]), side(&bj[1])]
                        })
                        .collect()
                };
                let (pq, pp) = match &perms {
                    Some((pq, pp)) => (Some(&pq[..]), Some(&pp[..])),
                    None => (None, None),
                };
                add_parts(&mut q, outer_sum(&terms(|x| &x.0), pq)?)?;
                add_parts(&mut p, outer_sum(&terms(|x| &x.1), pp)?)?;
            }
            let (q, p) = q
                .zip(p)
                .ok_or_else(|| Error::InvalidParameter("no terms".into()))?;
            let t = Tensor::from_ntt_parts(ctx, level, KeySet::PartiesTensor(vec![0]), q, p);
            add_parts(&mut parts, scale_and_round(&t)?.parts)?;
        }
        out.push(finish(ctx, level, parts, key, rlk, TermOrder::Fixed)?);
    }
    Ok(out)
}

/// The four outer-product sums `(Σ a_0 b_0, Σ a_0 b_1, Σ a_1 b_0, Σ a_1 b_1)` of NTT-form terms
/// `[a_0, a_1, b_0, b_1]` of one ring, with `b` read through `perms` (one NTT-domain permutation
/// per limb: `φ(b)[x] = b[perm[x]]`) when given, accumulated lazily: 128-bit sums over a block of
/// coefficients, one reduction per coefficient at the end (at most 16 products of residues below
/// `2^62` stay below `2^128`).
fn outer_sum(terms: &[[&Poly; 4]], perms: Option<&[Vec<u32>]>) -> Result<Vec<Poly>> {
    const BLOCK: usize = 256;
    let ring = terms
        .first()
        .ok_or_else(|| Error::InvalidParameter("an outer sum of no terms".into()))?[0]
        .context();
    if terms.len() > LAZY_TERMS || ring.moduli().iter().any(|m| m.bits() > 62) {
        return Err(Error::Unsupported(
            "lazy sums hold at most 16 products of residues below 2^62".into(),
        ));
    }
    let n = ring.degree();
    for t in terms {
        for x in t {
            if x.context().moduli() != ring.moduli() || x.representation() != Representation::Ntt {
                return Err(Error::Mismatch("outer-sum terms of different rings".into()));
            }
        }
    }
    // Shapes only: the entries come from `permutations` (and indexing is bounds-checked), so
    // they are not rescanned on every call of this hot loop.
    if let Some(pm) = perms
        && (pm.len() != ring.limbs() || pm.iter().any(|p| p.len() != n))
    {
        return Err(Error::Mismatch("permutations of another ring".into()));
    }
    let mut out: Vec<Poly> = (0..4)
        .map(|_| Poly::zero(ring, Representation::Ntt))
        .collect();
    let mut acc = vec![0u128; 4 * BLOCK];
    for (j, m) in ring.moduli().iter().enumerate() {
        for start in (0..n).step_by(BLOCK) {
            let len = BLOCK.min(n - start);
            acc.fill(0);
            let (s00, rest) = acc.split_at_mut(BLOCK);
            let (s01, rest) = rest.split_at_mut(BLOCK);
            let (s10, s11) = rest.split_at_mut(BLOCK);
            for t in terms {
                let r = start..start + len;
                let (a0, a1) = (&t[0].limb(j)[r.clone()], &t[1].limb(j)[r.clone()]);
                let (b0, b1) = (t[2].limb(j), t[3].limb(j));
                let mut add = |x: usize, y: usize| {
                    let (u0, u1) = (a0[x] as u128, a1[x] as u128);
                    let (v0, v1) = (b0[y] as u128, b1[y] as u128);
                    s00[x] += u0 * v0;
                    s01[x] += u0 * v1;
                    s10[x] += u1 * v0;
                    s11[x] += u1 * v1;
                };
                match perms {
                    None => (0..len).for_each(|x| add(x, start + x)),
                    Some(pm) => {
                        let pj = &pm[j][r];
                        (0..len).for_each(|x| add(x, pj[x] as usize));
                    }
                }
            }
            for (s, o) in out.iter_mut().enumerate() {
                let sums = &acc[s * BLOCK..s * BLOCK + len];
                for (dst, &v) in o.limb_mut(j)[start..start + len].iter_mut().zip(sums) {
                    *dst = m.reduce_u128(v);
                }
            }
        }
    }
    Ok(out)
}

/// The NTT-domain permutations of `X ↦ X^g`, one per limb of `ring`.
fn permutations(ring: &RingContext, g: usize) -> Result<Vec<Vec<u32>>> {
    (0..ring.limbs())
        .map(|j| Ok(ring.plan(j).automorphism_permutation(g)?))
        .collect()
}

/// Checks MatMul's operands and key context; returns the Galois elements of steps `1 … d − 1`.
fn check_operands(a: &[Ciphertext], b: &[Ciphertext], rlk: &RelinKey) -> Result<Vec<usize>> {
    let d = a.len();
    if d == 0 || b.len() != d {
        return Err(Error::InvalidParameter(format!(
            "MatMul needs d ≥ 1 ciphertexts on each side ({} and {})",
            a.len(),
            b.len()
        )));
    }
    let first = &a[0];
    for ct in a.iter().chain(b) {
        first.check(ct)?;
        if ct.parts.len() != 2 || ct.keys != KeySet::Powers {
            return Err(Error::Unsupported(
                "MatMul of other than 2-part single-key ciphertexts".into(),
            ));
        }
    }
    first.ctx.check_same(&rlk.ksk.ctx)?;
    matmul_galois_elements(&first.ctx, d)
}

/// The Galois element of output diagonal `i` and its key (none for `i = 0`).
fn step_key<'k>(
    i: usize,
    elements: &[usize],
    rot: &'k GaloisKeys,
) -> Result<(usize, Option<&'k GaloisKey>)> {
    if i == 0 {
        return Ok((1, None));
    }
    let g = elements[i - 1];
    let key = rot.get(g).ok_or_else(|| {
        Error::MissingKey(format!(
            "MatMul rotation key {i} of {} (g = {g})",
            elements.len()
        ))
    })?;
    Ok((g, Some(key)))
}

/// `acc += parts`, part by part (`acc` empty: `acc = parts`).
fn add_parts(acc: &mut Option<Vec<Poly>>, parts: Vec<Poly>) -> Result<()> {
    match acc {
        None => *acc = Some(parts),
        Some(acc) => {
            for (x, y) in acc.iter_mut().zip(&parts) {
                x.try_add_assign(y)?;
            }
        }
    }
    Ok(())
}

/// The lazy key switch of Algorithm 1 on the scaled parts `(D_0, D_2, D_1, D_3)` (outer-product
/// order) of output diagonal `i`.
fn finish(
    ctx: &Context,
    level: usize,
    parts: Option<Vec<Poly>>,
    key: Option<&GaloisKey>,
    rlk: &RelinKey,
    order: TermOrder,
) -> Result<Ciphertext> {
    let [d0, d2, d1, d3]: [Poly; 4] = parts
        .ok_or_else(|| Error::InvalidParameter("MatMul of no terms".into()))?
        .try_into()
        .map_err(|_| Error::Malformed("tensor of other than four parts".into()))?;
    let (d1, d2) = match order {
        TermOrder::Fixed => (d1, d2),
        #[cfg(test)]
        TermOrder::Printed => (d2, d1),
    };
    let (mut c0, mut c1) = (d0, d1);
    match key {
        None => {
            let (w0, w1) = gadget_product(&d3, &rlk.ksk)?;
            c0.try_add_assign(&w0)?;
            c1.try_add_assign(&d2)?;
            c1.try_add_assign(&w1)?;
        }
        Some(key) => {
            let (u0, u1) = gadget_product(&d2, &key.ksk)?;
            let (v0, v1) = gadget_product(&d3, &key.ksk)?;
            let (w0, w1) = gadget_product(&v1, &rlk.ksk)?;
            for x in [&u0, &w0] {
                c0.try_add_assign(x)?;
            }
            for x in [&u1, &v0, &w1] {
                c1.try_add_assign(x)?;
            }
        }
    }
    Ok(Ciphertext {
        ctx: ctx.clone(),
        level,
        parts: vec![c0, c1],
        keys: KeySet::Powers,
    })
}

/// The unhoisted reference: each product through the public [`tensor`] of the two operands as
/// ciphertexts of one "party" (the multi-key tensor is the outer product `(a_0 b_0, a_0 b_1,
/// a_1 b_0, a_1 b_1)`), with the automorphism applied to the B side in coefficient form.
#[cfg(test)]
fn matmul_reference(
    a: &[Ciphertext],
    b: &[Ciphertext],
    rlk: &RelinKey,
    rot: &GaloisKeys,
    order: TermOrder,
) -> Result<Vec<Ciphertext>> {
    let elements = check_operands(a, b, rlk)?;
    let (ctx, level) = (&a[0].ctx, a[0].level);
    let d = a.len();
    let as_party = |parts: Vec<Poly>| Ciphertext {
        ctx: ctx.clone(),
        level,
        parts,
        keys: KeySet::Parties(vec![0]),
    };
    let capacity = ctx.tensor_capacity(level)?;
    let mut out = Vec::with_capacity(d);
    for i in 0..d {
        let (g, key) = step_key(i, &elements, rot)?;
        let mut parts = None;
        for chunk in (0..d).collect::<Vec<_>>().chunks(capacity) {
            let mut acc: Option<Tensor> = None;
            for &k in chunk {
                let bk = &b[(i + d - k) % d];
                let rotated = if g == 1 {
                    bk.parts.clone()
                } else {
                    vec![bk.parts[0].automorphism(g)?, bk.parts[1].automorphism(g)?]
                };
                let t = tensor(&as_party(a[k].parts.clone()), &as_party(rotated))?;
                match &mut acc {
                    None => acc = Some(t),
                    Some(s) => s.add_assign(&t)?,
                }
            }
            if let Some(t) = acc {
                add_parts(&mut parts, scale_and_round(&t)?.parts)?;
            }
        }
        out.push(finish(ctx, level, parts, key, rlk, order)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Params, Plaintext};
    use coterie_math::prg::Csprng;
    use rand::Rng;

    fn toy_b() -> Context {
        Context::new(Params::insecure_toy_cyclotomic(32, 132, 4).unwrap()).unwrap()
    }

    fn random_matrix(d: usize, p: &BigInt, r: &mut Csprng) -> Matrix {
        (0..d)
            .map(|_| {
                (0..d)
                    .map(|_| BigInt::from(Rng::next_u64(r)) % p)
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Encrypts `ι(xs)` and `ι̃(ys)` slot vector by slot vector.
    fn encrypt_pair(
        ctx: &Context,
        pk: &crate::PublicKey,
        xs: &[Matrix],
        ys: &[Matrix],
        r: &mut Csprng,
    ) -> (Vec<Ciphertext>, Vec<Ciphertext>) {
        let slots = ctx.slot_encoder().unwrap().slots();
        let mut enc = |vs: Vec<Vec<BigInt>>| -> Vec<Ciphertext> {
            vs.iter()
                .map(|v| {
                    pk.encrypt(&Plaintext::encode_slots(ctx, v).unwrap(), r)
                        .unwrap()
                })
                .collect()
        };
        (
            enc(diagonal_encode(xs, slots).unwrap()),
            enc(shifted_diagonal_encode(ys, slots).unwrap()),
        )
    }

    /// Decrypts `ι(C)` ciphertexts to the first `l` batched matrices.
    fn decrypt_matrices(sk: &SecretKey, cs: &[Ciphertext], l: usize) -> Vec<Matrix> {
        let v: Vec<_> = cs
            .iter()
            .map(|c| sk.decrypt(c).unwrap().decode_slots().unwrap())
            .collect();
        diagonal_decode(&v, l).unwrap()
    }

    fn mat_mul(x: &Matrix, y: &Matrix, p: &BigInt) -> Matrix {
        let d = x.len();
        (0..d)
            .map(|i| {
                (0..d)
                    .map(|j| {
                        let mut s = BigInt::new();
                        for k in 0..d {
                            s += BigInt::from(&x[i][k] * &y[k][j]);
                        }
                        s % p
                    })
                    .collect()
            })
            .collect()
    }

    /// Seed 002 §8 tests 9 and 10 on Toy-B: for d = 8 (l = 1), 4 (l = 2) and 2 (l = 4), the fixed
    /// Algorithm 1 gives every batched product; the printed term order does not.
    #[test]
    fn matmul_toy_b_all_batchings_and_the_printed_order_fails() {
        let ctx = toy_b();
        let p = ctx.slot_encoder().unwrap().modulus().clone();
        let mut r = Csprng::insecure_from_seed_for_tests([41; 32]);
        let sk = SecretKey::generate(&ctx, &mut r);
        let pk = sk.public_key(&mut r);
        let rlk = sk.relin_key(&mut r);
        for d in [8usize, 4, 2] {
            let l = 8 / d;
            let rot = sk.matmul_rotation_keys(d, &mut r).unwrap();
            assert_eq!(rot.elements().len(), d - 1);
            let want_elements: Vec<usize> = (1..d)
                .map(|i| coterie_math::modulus::pow_mod_u64(5, (i * l * 2) as u64, 64) as usize)
                .collect();
            let mut got = rot.elements();
            got.sort_unstable();
            let mut want = want_elements.clone();
            want.sort_unstable();
            assert_eq!(got, want, "Galois elements 5^(i·l·M/2) mod 2N");
            let xs: Vec<Matrix> = (0..l).map(|_| random_matrix(d, &p, &mut r)).collect();
            let ys: Vec<Matrix> = (0..l).map(|_| random_matrix(d, &p, &mut r)).collect();
            let (ca, cb) = encrypt_pair(&ctx, &pk, &xs, &ys, &mut r);
            let dec = |cs: &[Ciphertext]| decrypt_matrices(&sk, cs, l);
            let want: Vec<Matrix> = xs.iter().zip(&ys).map(|(x, y)| mat_mul(x, y, &p)).collect();
            let cc = matmul(&ca, &cb, &rlk, &rot).unwrap();
            assert_eq!(cc.len(), d);
            assert_eq!(dec(&cc), want, "d = {d}, l = {l}");
            let reference = matmul_reference(&ca, &cb, &rlk, &rot, TermOrder::Fixed).unwrap();
            assert_eq!(cc, reference, "hoisted = reference, bit for bit (d = {d})");
            let printed = matmul_reference(&ca, &cb, &rlk, &rot, TermOrder::Printed).unwrap();
            assert_ne!(dec(&printed), want, "the printed order must fail (d = {d})");
        }
    }

    /// A real set (Params II, log p = 1024: D = 128) with d = 32: two lazy 16-product sums per
    /// output diagonal and one scale-and-round (the auxiliary basis has room for far more than
    /// 128 products); l = 4 products, checked against big integers.
    #[test]
    fn matmul_params_ii_d32_in_chunks() {
        matmul_params_ii_1024(32, 44);
    }

    /// Seed 002 §8: d = 128 MatMul on Params II/1024 (D = 128, one product, 127 rotation keys)
    /// against the big-integer product (about 20 s).
    #[test]
    fn matmul_params_ii_d128() {
        matmul_params_ii_1024(128, 45);
    }

    fn matmul_params_ii_1024(d: usize, seed: u8) {
        let ctx = Context::new(Params::matrigear(crate::params::MatriGearSet::II, 1024).unwrap())
            .unwrap();
        let p = ctx.slot_encoder().unwrap().modulus().clone();
        let slots = 128usize;
        let l = slots / d;
        assert!(ctx.tensor_capacity(ctx.max_level()).unwrap() >= 1 << 20);
        let mut r = Csprng::insecure_from_seed_for_tests([seed; 32]);
        let sk = SecretKey::generate(&ctx, &mut r);
        let pk = sk.public_key(&mut r);
        let rlk = sk.relin_key(&mut r);
        let rot = sk.matmul_rotation_keys(d, &mut r).unwrap();
        assert_eq!(rot.elements().len(), d - 1);
        let xs: Vec<Matrix> = (0..l).map(|_| random_matrix(d, &p, &mut r)).collect();
        let ys: Vec<Matrix> = (0..l).map(|_| random_matrix(d, &p, &mut r)).collect();
        let (ca, cb) = encrypt_pair(&ctx, &pk, &xs, &ys, &mut r);
        let cc = matmul(&ca, &cb, &rlk, &rot).unwrap();
        let want: Vec<Matrix> = xs.iter().zip(&ys).map(|(x, y)| mat_mul(x, y, &p)).collect();
        assert_eq!(decrypt_matrices(&sk, &cc, l), want);
    }

    #[test]
    fn matmul_refuses_bad_input() {
        let ctx = toy_b();
        let mut r = Csprng::insecure_from_seed_for_tests([42; 32]);
        let sk = SecretKey::generate(&ctx, &mut r);
        let pk = sk.public_key(&mut r);
        let rlk = sk.relin_key(&mut r);
        let rot = sk.matmul_rotation_keys(4, &mut r).unwrap();
        let ct = pk
            .encrypt(&Plaintext::encode_slots(&ctx, &[]).unwrap(), &mut r)
            .unwrap();
        let four = vec![ct.clone(); 4];
        assert!(matches!(
            matmul(&four, &four[..3], &rlk, &rot),
            Err(Error::InvalidParameter(_))
        ));
        assert!(matches!(
            matmul(&[], &[], &rlk, &rot),
            Err(Error::InvalidParameter(_))
        ));
        // d = 3 does not divide D = 8.
        assert!(matches!(
            matmul(&four[..3], &four[..3], &rlk, &rot),
            Err(Error::InvalidParameter(_))
        ));
        // Keys for d = 4 lack the element of d = 8.
        let eight = vec![ct.clone(); 8];
        assert!(matches!(
            matmul(&eight, &eight, &rlk, &rot),
            Err(Error::MissingKey(_))
        ));
        let three_parts = ct.mul_no_relin(&ct).unwrap();
        let mut bad = four.clone();
        bad[1] = three_parts;
        assert!(matches!(
            matmul(&bad, &four, &rlk, &rot),
            Err(Error::Unsupported(_))
        ));
    }

    /// Seed 002 §8 test 8: the §4.1 example vectors and Eq. 3 in the clear for d ∈ {4, 8},
    /// with the batched layout, and the decoders invert the encoders.
    #[test]
    fn encodings_match_the_spec_and_eq3_holds() {
        let a: Matrix = (0..4)
            .map(|i| (0..4).map(|j| BigInt::from(4 * i + j)).collect())
            .collect();
        let n = |v: [[u32; 4]; 4]| -> Vec<Vec<BigInt>> {
            v.iter().map(|r| r.map(BigInt::from).to_vec()).collect()
        };
        let iota = diagonal_encode(std::slice::from_ref(&a), 4).unwrap();
        assert_eq!(
            iota,
            n([[0, 5, 10, 15], [1, 6, 11, 12], [2, 7, 8, 13], [3, 4, 9, 14]])
        );
        let shifted = shifted_diagonal_encode(std::slice::from_ref(&a), 4).unwrap();
        assert_eq!(
            shifted,
            n([[0, 5, 10, 15], [12, 1, 6, 11], [8, 13, 2, 7], [4, 9, 14, 3]])
        );
        let p = BigInt::from(1_000_003u32);
        let mut r = Csprng::insecure_from_seed_for_tests([43; 32]);
        for (d, slots) in [(4usize, 4usize), (8, 8), (4, 16), (2, 8)] {
            let l = slots / d;
            let xs: Vec<Matrix> = (0..l).map(|_| random_matrix(d, &p, &mut r)).collect();
            let ys: Vec<Matrix> = (0..l).map(|_| random_matrix(d, &p, &mut r)).collect();
            let ia = diagonal_encode(&xs, slots).unwrap();
            let ib = shifted_diagonal_encode(&ys, slots).unwrap();
            assert_eq!(diagonal_decode(&ia, l).unwrap(), xs);
            assert_eq!(shifted_diagonal_decode(&ib, l).unwrap(), ys);
            // Eq. 3, batched: ι(AB)_i = Σ_k ι(A)_k ⊙ ρ^{i·l}(ι̃(B)_{i−k}).
            let diags: Vec<Vec<BigInt>> = (0..d)
                .map(|i| {
                    (0..slots)
                        .map(|s| {
                            let mut acc = BigInt::new();
                            for k in 0..d {
                                let rb = &ib[(i + d - k) % d][(s + i * l) % slots];
                                acc += BigInt::from(&ia[k][s] * rb);
                            }
                            acc % &p
                        })
                        .collect()
                })
                .collect();
            let want: Vec<Matrix> = xs.iter().zip(&ys).map(|(x, y)| mat_mul(x, y, &p)).collect();
            assert_eq!(diagonal_decode(&diags, l).unwrap(), want, "d = {d}");
        }
        assert!(diagonal_encode(std::slice::from_ref(&a), 6).is_err()); // 4 ∤ 6
        assert!(diagonal_encode(&[a.clone(), a.clone()], 4).is_err()); // l = 1
        assert!(diagonal_encode(&[vec![vec![BigInt::new(); 3]; 4]], 4).is_err()); // not square
        assert!(diagonal_decode(&iota, 2).is_err()); // l = 1
    }
}
