//! The online engine: authenticated shares over any [`Ring`], driven over a coterie-net [`Mesh`].
//!
//! One party's [`Engine`] holds its MAC key share, its [`Preprocessing`] source and the list of
//! values opened since the last MAC check. Operations:
//!
//! * local: [`Engine::add`], [`Engine::sub`], [`Engine::neg`], [`Engine::mul_const`],
//!   [`Engine::add_const`], [`Engine::constant`], [`Engine::lin_comb`];
//! * [`Engine::input`] through a preprocessed mask (the owner broadcasts `x - r`; an echo round
//!   makes sure every party got the same value);
//! * [`Engine::mul`]: Beaver multiplication, one batched opening for the whole batch;
//! * [`Engine::open`]: batched opening. Over `Z_{2^k}` shares live in `Z_{2^{k+s}}`, and a plain
//!   sum of shares would reveal bits `k..k+s` of the value (seed 000 §9.2 \[ENG\]), so `open` adds
//!   `2^k·[ρ]` with a fresh random `[ρ]` first; [`Engine::open_truncated`] does the same with
//!   `2^l·[ρ]` and returns only the low `l` bits (seed 000 §3, Open with `l ≤ k`).
//! * [`Engine::authenticate_shares`]: plain additive shares (from an HE- or HSS-based producer)
//!   authenticated under the engine's MAC key by masking with preprocessed random values;
//! * [`Engine::rand_bits`]: preprocessed random bits; over `F_p` also
//!   [`Engine::rand_bits_by_squaring`] (from random values and triples alone).
//! * [`Engine::check_single`]: SingleCheck of seed 000 §10.4 — a per-value MAC check in two
//!   rounds (commit to the shifted MAC shares, open), split into
//!   [`Engine::check_single_commit`] / [`Engine::check_single_open`] for pipelined schedules.
//! * [`Engine::check`]: the MAC check over every value opened since the last check (SPDZ_2k
//!   Π_MACCheck over `Z_{2^{k+s}}` with coefficients in `Z_{2^s}`; the SPDZ field MAC check over
//!   `F_p`): one echo of a digest of the opened values (so all parties check the same values),
//!   a commit-then-open coin toss for the coefficients `χ_j`, then commit-then-open of
//!   `σ_i = Σ χ_j m_{j,i} − α_i Σ χ_j x̃_j` and the test `Σ σ_i = 0`. Four rounds.
//!
//! Values returned by `open` must not be acted on outside the computation before a successful
//! [`Engine::check`] (or use [`Engine::open_checked`]).
//!
//! Why the whole `k+s`-bit values are opened over `Z_{2^k}`: the SPDZ_2k soundness argument needs
//! the check to run on the full `Z_{2^{k+s}}` values (an error of 2-adic valuation `v < k` survives
//! a random `Z_{2^s}` combination with valuation `< v + s` except with probability `2^{-s}`).
//! Opening only `x mod 2^k` and re-checking the low bits of a masked combination would let an
//! error at bit `k-1` cancel in the combination with probability 1/2.

mod check;
mod field;

use coterie_net::{Blob, Mesh, PartyId};
use zeroize::Zeroize;

pub use check::PendingSingleCheck;
pub use field::FP_TRUNC_SIGMA;

use crate::prep::{InputMask, Preprocessing, Share};
use crate::ring::Ring;
use crate::wire::{elems_header, elems_payload, open_elems, seal_elems};
use crate::{Error, Result};

/// Largest payload of one opening message; larger batches are opened in several messages (the
/// mesh's `max_frame` must be above this, as the default 64 MiB is).
pub const OPEN_CHUNK_BYTES: usize = 8 << 20;

pub(crate) const TAG_OPEN: u32 = 0x5D20_0001;
pub(crate) const TAG_INPUT: u32 = 0x5D20_0002;
pub(crate) const TAG_INPUT_ECHO: u32 = 0x5D20_0003;
pub(crate) const TAG_CHECK_A: u32 = 0x5D20_0004;
pub(crate) const TAG_CHECK_B: u32 = 0x5D20_0005;
pub(crate) const TAG_CHECK_C: u32 = 0x5D20_0006;
pub(crate) const TAG_CHECK_D: u32 = 0x5D20_0007;
pub(crate) const TAG_SINGLE_C: u32 = 0x5D20_0008;
pub(crate) const TAG_SINGLE_O: u32 = 0x5D20_0009;
pub(crate) const TAG_AUTH: u32 = 0x5D20_000A;
pub(crate) const TAG_AUTH_ECHO: u32 = 0x5D20_000B;

/// One party's online engine over ring `R` with preprocessing `P`.
pub struct Engine<R: Ring, P: Preprocessing<R>> {
    ring: R,
    prep: P,
    me: PartyId,
    n: usize,
    key: R::Elem,
    two_k: Option<R::Elem>,
    opened: Vec<R::Elem>,
    macs: Vec<R::Elem>,
    checks: u64,
    check_name: &'static str,
    inputs: u64,
}

impl<R: Ring, P: Preprocessing<R>> Drop for Engine<R, P> {
    fn drop(&mut self) {
        self.key.zeroize();
        self.macs.iter_mut().for_each(Zeroize::zeroize);
    }
}

/// The digest of `bytes` under `domain` (the reference form of [`digest_elems`]).
#[cfg(test)]
pub(crate) fn digest(domain: &str, bytes: &[u8]) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key("coterie-spdz 2026 digest v1");
    h.update(&(domain.len() as u64).to_le_bytes());
    h.update(domain.as_bytes());
    h.update(&(bytes.len() as u64).to_le_bytes());
    h.update(bytes);
    *h.finalize().as_bytes()
}

/// `digest(domain, &ring.encode(elems))` without encoding all of `elems` into one buffer first
/// (the same bytes reach the hash, a bounded piece at a time).
pub(crate) fn digest_elems<R: Ring>(domain: &str, ring: &R, elems: &[R::Elem]) -> [u8; 32] {
    const PIECE: usize = 4096;
    let w = ring.elem_bytes();
    let mut h = blake3::Hasher::new_derive_key("coterie-spdz 2026 digest v1");
    h.update(&(domain.len() as u64).to_le_bytes());
    h.update(domain.as_bytes());
    h.update(&((elems.len() * w) as u64).to_le_bytes());
    let mut buf = Vec::with_capacity(PIECE.min(elems.len()) * w);
    for piece in elems.chunks(PIECE) {
        buf.clear();
        for x in piece {
            ring.write(x, &mut buf);
        }
        h.update(&buf);
    }
    *h.finalize().as_bytes()
}

impl<R: Ring, P: Preprocessing<R>> Engine<R, P> {
    /// An engine for the party and ring of `prep`.
    pub fn new(prep: P) -> Self {
        let ring = prep.ring().clone();
        let two_k = ring.power_of_two().map(|(k, _)| {
            let mut x = ring.embed_u64(1);
            for _ in 0..k {
                x = ring.add(&x, &x);
            }
            x
        });
        Self {
            me: prep.party(),
            n: prep.n(),
            key: prep.mac_key_share(),
            ring,
            prep,
            two_k,
            opened: Vec::new(),
            macs: Vec::new(),
            checks: 0,
            check_name: "mac-check",
            inputs: 0,
        }
    }

    /// Names this engine's batched MAC check `name` in its abort errors (default
    /// `"mac-check"`), for protocols built on the engine that run their own checks (e.g. the
    /// preprocessing's `authentication-mac-check`).
    pub fn with_check_name(mut self, name: &'static str) -> Self {
        self.check_name = name;
        self
    }

    /// The ring.
    pub fn ring(&self) -> &R {
        &self.ring
    }
    /// This party's id.
    pub fn party(&self) -> PartyId {
        self.me
    }
    /// The preprocessing source.
    pub fn prep_mut(&mut self) -> &mut P {
        &mut self.prep
    }
    /// The preprocessing source (shared).
    pub fn prep_ref(&self) -> &P {
        &self.prep
    }
    /// The (public) share-ring values opened since the last MAC check, in order.
    pub fn pending_opened(&self) -> &[R::Elem] {
        &self.opened
    }

    // ----- local operations -----

    /// `[a] + [b]`.
    pub fn add(&self, a: &Share<R::Elem>, b: &Share<R::Elem>) -> Share<R::Elem> {
        Share {
            v: self.ring.add(&a.v, &b.v),
            m: self.ring.add(&a.m, &b.m),
        }
    }
    /// `[a] - [b]`.
    pub fn sub(&self, a: &Share<R::Elem>, b: &Share<R::Elem>) -> Share<R::Elem> {
        Share {
            v: self.ring.sub(&a.v, &b.v),
            m: self.ring.sub(&a.m, &b.m),
        }
    }
    /// `-[a]`.
    pub fn neg(&self, a: &Share<R::Elem>) -> Share<R::Elem> {
        Share {
            v: self.ring.neg(&a.v),
            m: self.ring.neg(&a.m),
        }
    }
    /// `c·[a]` for a public `c`.
    pub fn mul_const(&self, a: &Share<R::Elem>, c: &R::Elem) -> Share<R::Elem> {
        Share {
            v: self.ring.mul(&a.v, c),
            m: self.ring.mul(&a.m, c),
        }
    }
    /// `[a] + c` for a public `c` (party 0 adds `c` to its share; every party adds `α_i·c` to
    /// its MAC share).
    pub fn add_const(&self, a: &Share<R::Elem>, c: &R::Elem) -> Share<R::Elem> {
        let v = if self.me == 0 {
            self.ring.add(&a.v, c)
        } else {
            a.v.clone()
        };
        Share {
            v,
            m: self.ring.add(&a.m, &self.ring.mul(&self.key, c)),
        }
    }
    /// The public constant `c` as a stored value.
    pub fn constant(&self, c: &R::Elem) -> Share<R::Elem> {
        self.add_const(&Share::default_in(&self.ring), c)
    }
    /// `c + Σ c_j·[x_j]` (the ABB's LinComb).
    pub fn lin_comb(&self, c: &R::Elem, terms: &[(R::Elem, &Share<R::Elem>)]) -> Share<R::Elem> {
        let mut acc = self.constant(c);
        for (cj, xj) in terms {
            acc = self.add(&acc, &self.mul_const(xj, cj));
        }
        acc
    }

    fn check_mesh<M: Mesh>(&self, mesh: &M) -> Result<()> {
        if mesh.id() != self.me || mesh.n() != self.n {
            return Err(Error::Invalid(format!(
                "mesh is party {} of {}, preprocessing is party {} of {}",
                mesh.id(),
                mesh.n(),
                self.me,
                self.n
            )));
        }
        Ok(())
    }

    // ----- interactive operations -----

    /// Opens the full share-ring values of `xs` (no masking) and records them for the next MAC
    /// check. Only for values whose share-ring representative is uniformly masked.
    async fn open_raw<M: Mesh>(
        &mut self,
        mesh: &mut M,
        xs: &[Share<R::Elem>],
    ) -> Result<Vec<R::Elem>> {
        let start = self
            .open_raw_iter(mesh, xs.len(), xs.iter().cloned())
            .await?;
        Ok(self.opened[start..].to_vec())
    }

    /// [`Engine::open_raw`] of the `count` shares `xs` yields, without collecting them first:
    /// each share's value goes straight into the message and its MAC share into the pending
    /// check. The opened values are `self.opened[start..start + count]` for the returned
    /// `start`. On an error nothing of this call stays pending.
    async fn open_raw_iter<M: Mesh>(
        &mut self,
        mesh: &mut M,
        count: usize,
        xs: impl Iterator<Item = Share<R::Elem>> + Send,
    ) -> Result<usize> {
        self.check_mesh(mesh)?;
        let start = self.opened.len();
        let res = self.open_raw_chunks(mesh, count, xs).await;
        if res.is_err() {
            self.opened.truncate(start);
            self.macs[start..].iter_mut().for_each(Zeroize::zeroize);
            self.macs.truncate(start);
        }
        res.map(|()| start)
    }

    async fn open_raw_chunks<M: Mesh>(
        &mut self,
        mesh: &mut M,
        count: usize,
        mut xs: impl Iterator<Item = Share<R::Elem>> + Send,
    ) -> Result<()> {
        // A fixed byte budget per message (the same at every party, whatever its mesh options),
        // well below the default frame limit.
        let w = self.ring.elem_bytes();
        let chunk = (OPEN_CHUNK_BYTES / w).max(1);
        self.macs.reserve(count);
        self.opened.reserve(count);
        let mut left = count;
        while left > 0 {
            let take = left.min(chunk);
            let base = self.opened.len();
            let mut msg = elems_header(take * w)?;
            msg.reserve(take * w);
            for s in xs.by_ref().take(take) {
                self.ring.write(&s.v, &mut msg);
                self.opened.push(s.v);
                self.macs.push(s.m);
            }
            if self.opened.len() - base != take {
                return Err(Error::Invalid(format!(
                    "opening of {count} values given {} shares",
                    count - left + self.opened.len() - base
                )));
            }
            let all = mesh.exchange_all_bytes(TAG_OPEN, &msg).await?;
            for (j, m) in all.iter().enumerate() {
                let Some(m) = m else { continue };
                let vals = elems_payload(&self.ring, j, m, take)?;
                for (s, c) in self.opened[base..].iter_mut().zip(vals.chunks_exact(w)) {
                    let v = self.ring.read(c).map_err(|e| Error::Malformed {
                        party: j,
                        cause: e.to_string(),
                    })?;
                    *s = self.ring.add(s, &v);
                }
            }
            left -= take;
        }
        Ok(())
    }

    /// Opens the full share-ring values of `xs` **without** masking their high bits, recording
    /// them for the next MAC check. Only for values whose share-ring representative is already
    /// uniformly random (e.g. `t·[a] − [â]` in a triple sacrifice) or must be zero (a check
    /// value); anything else leaks bits `k..k+s` over `Z_{2^k}`.
    pub async fn open_unmasked<M: Mesh>(
        &mut self,
        mesh: &mut M,
        xs: &[Share<R::Elem>],
    ) -> Result<Vec<R::Elem>> {
        self.open_raw(mesh, xs).await
    }

    /// Opens `xs` to every party; returns the values in the value ring (`mod 2^k` over
    /// `Z_{2^k}`). Over `Z_{2^k}` each value is masked with `2^k·[ρ]` (one preprocessed random
    /// value per opened value) so that only its `k` value bits are revealed. The result is
    /// authenticated only after the next successful [`Engine::check`].
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
    /// use coterie_spdz::{Counts, Engine, Fp64, InsecureDealer};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let mut rng = rand::rng();
    /// let dealer = InsecureDealer::insecure_new(Fp64::mersenne61(), 3, &mut rng).unwrap();
    /// let counts = Counts { triples: 2, masks_per_party: 2, ..Counts::default() };
    /// let preps = dealer.deal(counts, &mut rng);
    /// let mut tasks = Vec::new();
    /// for (mut mesh, prep) in InMemoryMesh::group(3, MeshOptions::default()).into_iter().zip(preps) {
    ///     tasks.push(tokio::spawn(async move {
    ///         let mut e = Engine::new(prep);
    ///         let me = mesh.id();
    ///         // party 2 inputs two values; everyone opens them
    ///         let x = e.input(&mut mesh, 2, (me == 2).then_some(&[3u64, 4][..]), 2).await?;
    ///         let out = e.open(&mut mesh, &x).await?;
    ///         e.check(&mut mesh).await?;
    ///         mesh.close().await?;
    ///         Ok::<_, coterie_spdz::Error>(out)
    ///     }));
    /// }
    /// for t in tasks {
    ///     assert_eq!(t.await.unwrap().unwrap(), [3, 4]);
    /// }
    /// # });
    /// ```
    pub async fn open<M: Mesh>(
        &mut self,
        mesh: &mut M,
        xs: &[Share<R::Elem>],
    ) -> Result<Vec<R::Elem>> {
        let start = match self.two_k.clone() {
            Some(t) => {
                let rho = self.prep.randoms(xs.len())?;
                let ring = self.ring.clone();
                let masked = xs.iter().zip(&rho).map(|(x, r)| Share {
                    v: ring.add(&x.v, &ring.mul(&r.v, &t)),
                    m: ring.add(&x.m, &ring.mul(&r.m, &t)),
                });
                self.open_raw_iter(mesh, xs.len(), masked).await?
            }
            None => {
                self.open_raw_iter(mesh, xs.len(), xs.iter().cloned())
                    .await?
            }
        };
        Ok(self.opened[start..]
            .iter()
            .map(|v| self.ring.to_value(v))
            .collect())
    }

    /// [`Engine::open`] followed by [`Engine::check`]: the values are authenticated on return.
    pub async fn open_checked<M: Mesh>(
        &mut self,
        mesh: &mut M,
        xs: &[Share<R::Elem>],
    ) -> Result<Vec<R::Elem>> {
        let v = self.open(mesh, xs).await?;
        self.check(mesh).await?;
        Ok(v)
    }

    /// Beaver multiplication of `xs[j]·ys[j]` for all `j`, with one opening round for the batch.
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
    /// use coterie_spdz::{Counts, Engine, Fp64, InsecureDealer};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let mut rng = rand::rng();
    /// let dealer = InsecureDealer::insecure_new(Fp64::mersenne61(), 3, &mut rng).unwrap();
    /// let counts = Counts { triples: 2, masks_per_party: 2, ..Counts::default() };
    /// let preps = dealer.deal(counts, &mut rng);
    /// let mut tasks = Vec::new();
    /// for (mut mesh, prep) in InMemoryMesh::group(3, MeshOptions::default()).into_iter().zip(preps) {
    ///     tasks.push(tokio::spawn(async move {
    ///         let mut e = Engine::new(prep);
    ///         let me = mesh.id();
    ///         let x = e.input(&mut mesh, 0, (me == 0).then_some(&[3u64, 5][..]), 2).await?;
    ///         let y = e.input(&mut mesh, 1, (me == 1).then_some(&[7u64, 11][..]), 2).await?;
    ///         let z = e.mul(&mut mesh, &x, &y).await?; // both products in one round
    ///         let out = e.open_checked(&mut mesh, &z).await?;
    ///         mesh.close().await?;
    ///         Ok::<_, coterie_spdz::Error>(out)
    ///     }));
    /// }
    /// for t in tasks {
    ///     assert_eq!(t.await.unwrap().unwrap(), [21, 55]);
    /// }
    /// # });
    /// ```
    pub async fn mul<M: Mesh>(
        &mut self,
        mesh: &mut M,
        xs: &[Share<R::Elem>],
        ys: &[Share<R::Elem>],
    ) -> Result<Vec<Share<R::Elem>>> {
        if xs.len() != ys.len() {
            return Err(Error::Invalid(
                "mul: operand batches differ in length".into(),
            ));
        }
        self.mul_pairs(mesh, xs.iter().zip(ys)).await
    }

    /// [`Engine::mul`] of the operand pairs `pairs` yields, for callers whose operands are not
    /// already laid out as two slices (no copies of them are made).
    pub async fn mul_pairs<'a, M: Mesh>(
        &mut self,
        mesh: &mut M,
        pairs: impl ExactSizeIterator<Item = (&'a Share<R::Elem>, &'a Share<R::Elem>)> + Send,
    ) -> Result<Vec<Share<R::Elem>>> {
        let n = pairs.len();
        let t = self.prep.triples(n)?;
        let ring = self.ring.clone();
        let sub = |x: &Share<R::Elem>, a: &Share<R::Elem>| Share {
            v: ring.sub(&x.v, &a.v),
            m: ring.sub(&x.m, &a.m),
        };
        let masked = pairs
            .zip(&t)
            .flat_map(|((x, y), t)| [sub(x, &t.a), sub(y, &t.b)]);
        let start = self.open_raw_iter(mesh, 2 * n, masked).await?;
        let ed = &self.opened[start..];
        let r = &self.ring;
        let mut out = Vec::with_capacity(n);
        for (j, t) in t.iter().enumerate() {
            let (e, d) = (&ed[2 * j], &ed[2 * j + 1]);
            // z = c + e·b + d·a + e·d
            let mut z = self.add(&t.c, &self.mul_const(&t.b, e));
            z = self.add(&z, &self.mul_const(&t.a, d));
            z = self.add_const(&z, &r.mul(e, d));
            out.push(z);
        }
        Ok(out)
    }

    /// The product of secret-shared `d×d` matrices (row-major, `d²` shares each) by one
    /// preprocessed [`crate::MatrixTriple`] `([A], [B], [C = A·B])`: one opening round of
    /// `E = X − A` and `F = Y − B` (`2d²` values, where `d³` scalar triples would open `2d³`),
    /// then `[X·Y] = [C] + E·[B] + [A]·F + E·F` locally. The opened `E` and `F` join the
    /// pending MAC check like every other opening, so a party that shifts a share is caught by
    /// the next [`Engine::check`].
    ///
    /// ```
    /// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
    /// use coterie_spdz::{Engine, Fp64, InsecureDealer, Kind, Order, Share};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let mut rng = rand::rng();
    /// let ring = Fp64::mersenne61();
    /// let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
    /// let mut preps = dealer.empty();
    /// let order = Order::new().with(Kind::MatrixTriples(2), 1).with(Kind::InputMasks(0), 8);
    /// dealer.fill_order(&mut preps, &order, &mut rng).unwrap();
    /// let mut tasks = Vec::new();
    /// for (mut mesh, prep) in InMemoryMesh::group(2, MeshOptions::default()).into_iter().zip(preps) {
    ///     tasks.push(tokio::spawn(async move {
    ///         let mut e = Engine::new(prep);
    ///         let me = mesh.id();
    ///         let vals = [1u64, 2, 3, 4, 5, 6, 7, 8];
    ///         let xy = e.input(&mut mesh, 0, (me == 0).then_some(&vals[..]), 8).await?;
    ///         let z = e.matmul(&mut mesh, 2, &xy[..4], &xy[4..]).await?;
    ///         let out = e.open_checked(&mut mesh, &z).await?;
    ///         mesh.close().await?;
    ///         Ok::<_, coterie_spdz::Error>(out)
    ///     }));
    /// }
    /// for t in tasks {
    ///     assert_eq!(t.await.unwrap().unwrap(), [19, 22, 43, 50]);
    /// }
    /// # });
    /// ```
    pub async fn matmul<M: Mesh>(
        &mut self,
        mesh: &mut M,
        d: usize,
        xs: &[Share<R::Elem>],
        ys: &[Share<R::Elem>],
    ) -> Result<Vec<Share<R::Elem>>> {
        let dd = d.checked_mul(d).filter(|&dd| dd > 0);
        if dd.is_none() || Some(xs.len()) != dd || Some(ys.len()) != dd {
            return Err(Error::Invalid(format!(
                "matmul: operands of {} and {} shares are not two {d}x{d} matrices",
                xs.len(),
                ys.len()
            )));
        }
        let t = self
            .prep
            .matrix_triples(d, 1)?
            .pop()
            .ok_or(Error::Invalid("matmul: no matrix triple handed out".into()))?;
        if t.d != d || t.a.len() != d * d || t.b.len() != d * d || t.c.len() != d * d {
            return Err(Error::Invalid(format!(
                "matmul: a matrix triple that is not {d}x{d}"
            )));
        }
        let mut masked = Vec::with_capacity(2 * d * d);
        masked.extend(xs.iter().zip(&t.a).map(|(x, a)| self.sub(x, a)));
        masked.extend(ys.iter().zip(&t.b).map(|(y, b)| self.sub(y, b)));
        let ef = self.open_raw(mesh, &masked).await?;
        let (e, f) = ef.split_at(d * d);
        let r = &self.ring;
        let mut out = Vec::with_capacity(d * d);
        for i in 0..d {
            for j in 0..d {
                // z_ij = c_ij + Σ_k e_ik·b_kj + Σ_k a_ik·f_kj + Σ_k e_ik·f_kj
                let c = &t.c[i * d + j];
                let (mut v, mut m, mut ef_ij) = (c.v.clone(), c.m.clone(), r.zero());
                for k in 0..d {
                    let (e_ik, f_kj) = (&e[i * d + k], &f[k * d + j]);
                    let (b, a) = (&t.b[k * d + j], &t.a[i * d + k]);
                    v = r.add(&v, &r.add(&r.mul(e_ik, &b.v), &r.mul(&a.v, f_kj)));
                    m = r.add(&m, &r.add(&r.mul(e_ik, &b.m), &r.mul(&a.m, f_kj)));
                    ef_ij = r.add(&ef_ij, &r.mul(e_ik, f_kj));
                }
                out.push(self.add_const(&Share { v, m }, &ef_ij));
            }
        }
        Ok(out)
    }

    /// `count` preprocessed random bits.
    pub fn rand_bits(&mut self, count: usize) -> Result<Vec<Share<R::Elem>>> {
        self.prep.bits(count)
    }

    /// Secret input by `owner`: the owner passes `Some(values)` (exactly `count` of them), the
    /// others `None`. The owner broadcasts `x - r` for preprocessed masks `[r]`; an echo round
    /// checks that every party received the same values.
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
    /// use coterie_spdz::{Counts, Engine, Fp64, InsecureDealer};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let mut rng = rand::rng();
    /// let dealer = InsecureDealer::insecure_new(Fp64::mersenne61(), 3, &mut rng).unwrap();
    /// let counts = Counts { triples: 2, masks_per_party: 2, ..Counts::default() };
    /// let preps = dealer.deal(counts, &mut rng);
    /// let mut tasks = Vec::new();
    /// for (mut mesh, prep) in InMemoryMesh::group(3, MeshOptions::default()).into_iter().zip(preps) {
    ///     tasks.push(tokio::spawn(async move {
    ///         let mut e = Engine::new(prep);
    ///         let me = mesh.id();
    ///         let x = e.input(&mut mesh, 1, (me == 1).then_some(&[41u64][..]), 1).await?;
    ///         let y = e.add_const(&x[0], &1);
    ///         let out = e.open_checked(&mut mesh, &[y]).await?;
    ///         mesh.close().await?;
    ///         Ok::<_, coterie_spdz::Error>(out)
    ///     }));
    /// }
    /// for t in tasks {
    ///     assert_eq!(t.await.unwrap().unwrap(), [42]);
    /// }
    /// # });
    /// ```
    pub async fn input<M: Mesh>(
        &mut self,
        mesh: &mut M,
        owner: PartyId,
        values: Option<&[R::Elem]>,
        count: usize,
    ) -> Result<Vec<Share<R::Elem>>> {
        self.check_mesh(mesh)?;
        if owner >= self.n {
            return Err(Error::Invalid(format!("no party {owner}")));
        }
        let masks = self.prep.input_masks(owner, count)?;
        let domain = format!("coterie-spdz/input/{}/{owner}", self.inputs);
        self.inputs += 1;
        let eps: Vec<R::Elem> = if owner == self.me {
            let vals = values.ok_or_else(|| Error::Invalid("the owner must give values".into()))?;
            if vals.len() != count {
                return Err(Error::Invalid("input: wrong number of values".into()));
            }
            let mut eps = Vec::with_capacity(count);
            for (x, m) in vals.iter().zip(&masks) {
                let r = m
                    .value
                    .as_ref()
                    .ok_or_else(|| Error::Invalid("input mask without its value".into()))?;
                eps.push(self.ring.sub(x, r));
            }
            mesh.broadcast_tagged(TAG_INPUT, &seal_elems(&self.ring, &eps)?)
                .await?;
            eps
        } else {
            let m = mesh.recv_bytes(owner, TAG_INPUT).await?;
            open_elems(&self.ring, owner, &m, count)?
        };
        self.finish_input(mesh, &domain, masks, eps).await
    }

    /// Authenticates this party's plain additive shares `xs` (every party passes its shares of
    /// the same number of values) under the engine's MAC key, by masking with preprocessed
    /// random values: every party broadcasts `x_i − r_i`, an echo round checks that all parties
    /// summed the same `x − r` (abort `authenticate-echo`), and `[x] = [r] + (x − r)`. Uses one
    /// random value per value; `x − r` is uniform, so nothing about `x` is revealed. See
    /// [`crate::Authenticator`] for what this does and does not guarantee.
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
    /// use coterie_spdz::{Counts, Engine, Fp64, InsecureDealer};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let ring = Fp64::mersenne61();
    /// let mut rng = rand::rng();
    /// let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
    /// let preps = dealer.deal(Counts { randoms: 3, ..Counts::default() }, &mut rng);
    /// let mut tasks = Vec::new();
    /// for (mut mesh, prep) in InMemoryMesh::group(2, MeshOptions::default()).into_iter().zip(preps) {
    ///     tasks.push(tokio::spawn(async move {
    ///         let mut e = Engine::new(prep);
    ///         // plain shares of 40 (20 + 20), authenticated, then opened and MAC-checked
    ///         let x = e.authenticate_shares(&mut mesh, &[20]).await?;
    ///         let out = e.open_checked(&mut mesh, &x).await?;
    ///         mesh.close().await?;
    ///         Ok::<u64, coterie_spdz::Error>(out[0])
    ///     }));
    /// }
    /// for t in tasks {
    ///     assert_eq!(t.await.unwrap().unwrap(), 40);
    /// }
    /// # });
    /// ```
    pub async fn authenticate_shares<M: Mesh>(
        &mut self,
        mesh: &mut M,
        xs: &[R::Elem],
    ) -> Result<Vec<Share<R::Elem>>> {
        self.check_mesh(mesh)?;
        let rs = self.prep.randoms(xs.len())?;
        let r = self.ring.clone();
        let mut eps: Vec<R::Elem> = xs.iter().zip(&rs).map(|(x, m)| r.sub(x, &m.v)).collect();
        let all: Vec<Blob> = mesh
            .exchange_all_tagged(TAG_AUTH, &seal_elems(&r, &eps)?)
            .await?;
        for (j, m) in all.iter().enumerate() {
            if j == self.me {
                continue;
            }
            let vals = open_elems(&r, j, &m.0, xs.len())?;
            for (e, v) in eps.iter_mut().zip(&vals) {
                *e = r.add(e, v);
            }
        }
        let domain = format!("coterie-spdz/authenticate/{}", self.inputs);
        self.inputs += 1;
        let d = digest_elems(&domain, &r, &eps);
        let echo: Vec<[u8; 32]> = mesh.exchange_all_tagged(TAG_AUTH_ECHO, &d).await?;
        if let Some(j) = echo.iter().position(|x| x != &d) {
            return Err(self
                .fail(
                    mesh,
                    Error::InconsistentBroadcast {
                        check: "authenticate-echo",
                        party: j,
                    },
                )
                .await);
        }
        Ok(rs
            .iter()
            .zip(&eps)
            .map(|(m, e)| self.add_const(m, e))
            .collect())
    }

    /// The echo round of [`Engine::input`] and the local share computation.
    async fn finish_input<M: Mesh>(
        &mut self,
        mesh: &mut M,
        domain: &str,
        masks: Vec<InputMask<R::Elem>>,
        eps: Vec<R::Elem>,
    ) -> Result<Vec<Share<R::Elem>>> {
        let d = digest_elems(domain, &self.ring, &eps);
        let all: Vec<[u8; 32]> = mesh.exchange_all_tagged(TAG_INPUT_ECHO, &d).await?;
        if let Some(j) = all.iter().position(|x| x != &d) {
            let e = Error::InconsistentBroadcast {
                check: "input-broadcast",
                party: j,
            };
            mesh.abort(&e.to_string()).await;
            return Err(e);
        }
        Ok(masks
            .iter()
            .zip(&eps)
            .map(|(m, e)| self.add_const(&m.share, e))
            .collect())
    }

    /// Aborts the mesh with `e` after clearing the pending openings; returns `e`.
    async fn fail<M: Mesh>(&mut self, mesh: &mut M, e: Error) -> Error {
        tracing::warn!(party = self.me, %e, "SPDZ abort");
        self.opened.clear();
        self.macs.clear();
        mesh.abort(&e.to_string()).await;
        e
    }
}

impl<E: Zeroize + Clone> Share<E> {
    /// The all-zero share in `ring`.
    pub fn default_in<R: Ring<Elem = E>>(ring: &R) -> Self {
        Share {
            v: ring.zero(),
            m: ring.zero(),
        }
    }
}
