//! Ring-specific operations of the engine: the truncated openings over `Z_{2^k}` and `F_p`, and
//! RandBit by squaring over `F_p`.

use coterie_net::Mesh;

use super::Engine;
use crate::prep::{Preprocessing, Share};
use crate::ring::{PrimeField, Ring, Z2k};
use crate::{Error, Result};

/// Statistical security (bits) of the mask of [`Engine::open_truncated_fp`].
pub const FP_TRUNC_SIGMA: u32 = 64;

impl<R: PrimeField, P: Preprocessing<R>> Engine<R, P> {
    /// The truncated opening of seed 000 §3 over `F_p` (reveal only `x mod 2^l`), for values
    /// the caller knows to lie in `[0, 2^bound)` as integers (`1 ≤ l ≤ bound`).
    ///
    /// `F_p` has no "low bits" of a sum of shares, so the value is masked statistically
    /// (Catrina–de Hoogh style): open `c = x + 2^l·r` with `r = Σ_{i < bound − l + σ} 2^i b_i`
    /// from preprocessed random bits ([`FP_TRUNC_SIGMA`] `= σ = 64`), and return `c mod 2^l`.
    /// Because `x + 2^l r < 2^bound + 2^{bound+σ} < p`, nothing wraps mod `p`, so
    /// `c mod 2^l = x mod 2^l` exactly, and `⌊c / 2^l⌋ = ⌊x / 2^l⌋ + r` is within statistical
    /// distance `2^{-σ}` of a value independent of `x`. Costs `bound − l + σ` random bits per
    /// value; the opening is covered by the next MAC check.
    ///
    /// Refused with [`Error::Unsupported`] when `p ≤ 2^{bound+σ+1}` (the mask would wrap mod `p`
    /// and the low bits would be wrong, or the high bits would show), e.g. for a 61-bit `p` and
    /// any `bound`; with [`Error::Invalid`] for `l = 0` or `l > bound`. The caller's bound is a
    /// precondition that cannot be checked: a value outside `[0, 2^bound)` (e.g. a "negative"
    /// `p − y`) gives a meaningless result and its high bits are not hidden.
    pub async fn open_truncated_fp<M: Mesh>(
        &mut self,
        mesh: &mut M,
        xs: &[Share<R::Elem>],
        l: u32,
        bound: u32,
    ) -> Result<Vec<R::Elem>> {
        if l == 0 || l > bound {
            return Err(Error::Invalid(format!(
                "truncated opening of {l} bits of values below 2^{bound}"
            )));
        }
        let pbits = self.ring.p_minus_1().significant_bits();
        if (bound as u64) + FP_TRUNC_SIGMA as u64 + 2 > pbits as u64 {
            return Err(Error::Unsupported(
                "truncated opening over F_p needs p > 2^(bound + 65): the statistical mask \
                 x + 2^l·r would wrap mod p",
            ));
        }
        let rbits = (bound - l + FP_TRUNC_SIGMA) as usize;
        let bits = self.prep.bits(xs.len() * rbits)?;
        let r = self.ring.clone();
        let mut pow = r.embed_u64(1);
        for _ in 0..l {
            pow = r.add(&pow, &pow);
        }
        let mut pows = Vec::with_capacity(rbits);
        for _ in 0..rbits {
            pows.push(pow.clone());
            pow = r.add(&pow, &pow);
        }
        let masked: Vec<Share<R::Elem>> = xs
            .iter()
            .zip(bits.chunks(rbits))
            .map(|(x, bs)| {
                let mut acc = x.clone();
                for (b, c) in bs.iter().zip(&pows) {
                    acc = self.add(&acc, &self.mul_const(b, c));
                }
                acc
            })
            .collect();
        let opened = self.open_raw(mesh, &masked).await?;
        opened.iter().map(|c| low_bits_of_field(&r, c, l)).collect()
    }
}

/// `c mod 2^l` of a field element's canonical representative, as a field element.
fn low_bits_of_field<R: Ring>(r: &R, c: &R::Elem, l: u32) -> Result<R::Elem> {
    let mut bytes = Vec::with_capacity(r.elem_bytes());
    r.write(c, &mut bytes);
    for (i, byte) in bytes.iter_mut().enumerate() {
        let lo = (i as u32) * 8;
        if lo >= l {
            *byte = 0;
        } else if l - lo < 8 {
            *byte &= (1u8 << (l - lo)) - 1;
        }
    }
    r.read(&bytes)
}

impl<R: PrimeField, P: Preprocessing<R>> Engine<R, P> {
    /// RandBit over `F_p` without preprocessed bits (Damgård–Fitzi–Kiltz–Nielsen–Toft): for a
    /// random `[r]`, compute `[r²]` (one triple), open `s = r²` (which hides the sign of `r`),
    /// and output `[b] = ([r]·s^{-1/2} + 1)/2`, a uniform bit. Values with `s = 0` are retried.
    /// Uses one random value and one triple per bit; an opened non-square (only possible with a
    /// cheating party) aborts with the check `randbit-square`. The MAC check covers the openings.
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
    /// use coterie_spdz::{Counts, Engine, InsecureDealer, Fp64};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let mut rng = rand::rng();
    /// let dealer = InsecureDealer::insecure_new(Fp64::mersenne61(), 2, &mut rng).unwrap();
    /// let preps = dealer.deal(Counts { triples: 8, randoms: 8, ..Counts::default() }, &mut rng);
    /// let mut tasks = Vec::new();
    /// for (mut mesh, prep) in InMemoryMesh::group(2, MeshOptions::default()).into_iter().zip(preps) {
    ///     tasks.push(tokio::spawn(async move {
    ///         let mut e = Engine::new(prep);
    ///         let me = mesh.id();
    ///         let bits = e.rand_bits_by_squaring(&mut mesh, 4).await?;
    ///         let out = e.open_checked(&mut mesh, &bits).await?;
    ///         let _ = me;
    ///         let out = out.iter().all(|b| *b <= 1);
    ///         mesh.close().await?;
    ///         Ok::<_, coterie_spdz::Error>(out)
    ///     }));
    /// }
    /// for t in tasks {
    ///     assert_eq!(t.await.unwrap().unwrap(), true);
    /// }
    /// # });
    /// ```
    pub async fn rand_bits_by_squaring<M: Mesh>(
        &mut self,
        mesh: &mut M,
        count: usize,
    ) -> Result<Vec<Share<R::Elem>>> {
        let r = self.ring.clone();
        let half = r
            .inv(&r.embed_u64(2))
            .ok_or(Error::Unsupported("RandBit by squaring needs an odd p"))?;
        let one = r.embed_u64(1);
        let mut out = Vec::with_capacity(count);
        while out.len() < count {
            let need = count - out.len();
            let rs = self.prep.randoms(need)?;
            let sq = self.mul(mesh, &rs, &rs).await?;
            let s = self.open_raw(mesh, &sq).await?;
            for (ri, si) in rs.iter().zip(&s) {
                if r.is_zero(si) {
                    continue;
                }
                let inv_root = match r.sqrt(si).and_then(|x| r.inv(&x)) {
                    Some(x) => x,
                    None => {
                        return Err(self
                            .fail(
                                mesh,
                                Error::PrepCheckFailed {
                                    check: "randbit-square",
                                    party: self.me,
                                },
                            )
                            .await);
                    }
                };
                let sign = self.mul_const(ri, &inv_root);
                out.push(self.mul_const(&self.add_const(&sign, &one), &half));
            }
        }
        Ok(out)
    }
}

impl<P: Preprocessing<Z2k>> Engine<Z2k, P> {
    /// The truncated opening of seed 000 §3: reveals only `x mod 2^l` (`1 ≤ l ≤ k`). Opens
    /// `[x] + 2^l·[ρ]` with a fresh uniform `[ρ]` over `Z_{2^{k+s}}`, so every bit from `l` to
    /// `k+s-1` of the opened value is uniform and independent of `x`; returns the low `l` bits.
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
    /// use coterie_spdz::{Counts, Engine, InsecureDealer, Z2k};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let mut rng = rand::rng();
    /// let dealer = InsecureDealer::insecure_new(Z2k::spdz2k_64(), 2, &mut rng).unwrap();
    /// let preps = dealer.deal(Counts { randoms: 1, masks_per_party: 1, ..Counts::default() }, &mut rng);
    /// let mut tasks = Vec::new();
    /// for (mut mesh, prep) in InMemoryMesh::group(2, MeshOptions::default()).into_iter().zip(preps) {
    ///     tasks.push(tokio::spawn(async move {
    ///         let mut e = Engine::new(prep);
    ///         let me = mesh.id();
    ///         let x = e.input(&mut mesh, 0, (me == 0).then_some(&[0x1234u128][..]), 1).await?;
    ///         let out = e.open_truncated(&mut mesh, &x, 8).await?; // only x mod 2^8
    ///         e.check(&mut mesh).await?;
    ///         mesh.close().await?;
    ///         Ok::<_, coterie_spdz::Error>(out)
    ///     }));
    /// }
    /// for t in tasks {
    ///     assert_eq!(t.await.unwrap().unwrap(), [0x34]);
    /// }
    /// # });
    /// ```
    pub async fn open_truncated<M: Mesh>(
        &mut self,
        mesh: &mut M,
        xs: &[Share<u128>],
        l: u32,
    ) -> Result<Vec<u128>> {
        let k = self.ring.k();
        if l == 0 || l > k {
            return Err(Error::Invalid(format!(
                "truncated opening of {l} bits, k = {k}"
            )));
        }
        let t = 1u128 << l;
        let rho = self.prep.randoms(xs.len())?;
        let masked: Vec<_> = xs
            .iter()
            .zip(&rho)
            .map(|(x, r)| self.add(x, &self.mul_const(r, &t)))
            .collect();
        let y = self.open_raw(mesh, &masked).await?;
        Ok(y.iter().map(|v| Z2k::low_bits(*v, l)).collect())
    }
}
