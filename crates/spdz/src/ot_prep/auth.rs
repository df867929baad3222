//! Authentication (COPE and SPDZ_2k's authentication check), random values, input masks and
//! random bits (`docs/spdz-ot-security.md`, Authenticate, Authentication check, Random values,
//! Random bits).

use coterie_base::bits::{BitReader, BitWriter};
use coterie_math::prg::Xof;
use coterie_net::Mesh;
use rand::Rng;
use zeroize::Zeroize;

use super::{OtPrep, TAG_COPE, malformed, pairwise_bytes};
use crate::cope;
use crate::engine::Engine;
use crate::prep::{InputMask, Share, Triple};
use crate::ring::{Ring, Z2k};
use crate::{Error, Result};

impl OtPrep {
    /// MAC shares for this party's shares `xs` (every party calls it with its own shares of the
    /// same number of values): `α_i x_i` plus the COPE shares with every peer. One round; no
    /// check (callers add the authentication check).
    pub(super) async fn cope<M: Mesh>(&mut self, mesh: &mut M, xs: &[u128]) -> Result<Vec<u128>> {
        let r = self.ring;
        // the key's bits, not the ring's s: the same while bits by square roots run in a ring
        // with a smaller s (`roots`), where α_i still has all its bits
        let s = self.key_bits as usize;
        let kk = r.k() + r.s();
        let cnt = xs.len();
        let batch = self.batch;
        self.batch += 1;
        let mut macs: Vec<u128> = xs.iter().map(|x| r.mul(&self.alpha, x)).collect();
        if let Some(p) = self.cope_digit_size() {
            // COPE in digits (with SoftSpokenOT; `crate::cope`)
            let u_len = (cnt as u64 * cope::correction_bits(p, s as u32, kk)).div_ceil(8) as usize;
            let mut out: Vec<Option<Vec<u8>>> = (0..self.n).map(|_| None).collect();
            for (j, o) in out.iter_mut().enumerate() {
                if j == self.me {
                    continue;
                }
                let trees = self.pair(j)?.cope_trees.as_ref().ok_or_else(|| {
                    Error::Invalid(format!("COPE in digits: no trees toward party {j}"))
                })?;
                let (bytes, shares) = trees.send(kk, batch, self.me, j, xs)?;
                for (m, sh) in macs.iter_mut().zip(shares) {
                    *m = r.add(m, &sh);
                }
                *o = Some(bytes);
            }
            let got = pairwise_bytes(mesh, TAG_COPE, out, |_| u_len).await?;
            for j in 0..self.n {
                if j == self.me {
                    continue;
                }
                let punct = self.pair(j)?.cope_punct.as_ref().ok_or_else(|| {
                    Error::Invalid(format!("COPE in digits: no trees from party {j}"))
                })?;
                let bytes = got[j].as_ref().ok_or_else(|| malformed(j, "missing u"))?;
                let shares = punct
                    .receive(kk, batch, j, self.me, bytes, cnt)
                    .map_err(|e| malformed(j, &e.to_string()))?;
                for (m, sh) in macs.iter_mut().zip(shares) {
                    *m = r.add(m, &sh);
                }
            }
            return Ok(macs);
        }
        let read = |xof: &mut Xof| r.random(xof);
        let per: u64 = (0..s as u64).map(|l| kk as u64 - l).sum();
        let u_len = (cnt as u64 * per).div_ceil(8) as usize;
        let mut out: Vec<Option<Vec<u8>>> = (0..self.n).map(|_| None).collect();
        for j in 0..self.n {
            if j == self.me {
                continue;
            }
            let p = self.pair(j)?;
            let mut us = BitWriter::with_capacity(u_len);
            let mut x0: Vec<Xof> = p
                .cope_send_keys
                .iter()
                .map(|(k0, _)| Xof::new(k0, b"coterie-spdz/cope", batch))
                .collect();
            let mut x1: Vec<Xof> = p
                .cope_send_keys
                .iter()
                .map(|(_, k1)| Xof::new(k1, b"coterie-spdz/cope", batch))
                .collect();
            for (v, x) in xs.iter().enumerate() {
                let mut share = 0u128;
                for l in 0..s {
                    let r0 = read(&mut x0[l]);
                    let r1 = read(&mut x1[l]);
                    let u = r.add(&r.sub(&r0, &r1), x);
                    us.put_u128(u, kk - l as u32);
                    share = r.sub(&share, &r.mul(&r0, &(1u128 << l)));
                }
                macs[v] = r.add(&macs[v], &share);
            }
            out[j] = Some(us.finish());
        }
        let got = pairwise_bytes(mesh, TAG_COPE, out, |_| u_len).await?;
        for j in 0..self.n {
            if j == self.me {
                continue;
            }
            let p = self.pair(j)?;
            let bytes = got[j].as_ref().ok_or_else(|| malformed(j, "missing u"))?;
            let mut rd = BitReader::new(bytes);
            let mut xk: Vec<Xof> = p
                .cope_recv_keys
                .iter()
                .map(|k| Xof::new(k, b"coterie-spdz/cope", batch))
                .collect();
            // the corrections are read in the order they were written (value-major), as used
            for mac in macs.iter_mut() {
                let mut share = 0u128;
                for (l, xof) in xk.iter_mut().enumerate() {
                    let u = rd
                        .get_u128(kk - l as u32)
                        .ok_or_else(|| malformed(j, "short corrections u"))?;
                    let rr = read(xof);
                    let al = 0u128.wrapping_sub((self.alpha >> l) & 1);
                    let q = r.add(&rr, &(u & al));
                    share = r.add(&share, &r.mul(&q, &(1u128 << l)));
                }
                *mac = r.add(mac, &share);
            }
        }
        Ok(macs)
    }

    /// The authentication step for shares made elsewhere (HSS- or HE-based producers that make
    /// unauthenticated additive shares over the same `Z_{2^{k+s}}`): every party passes its
    /// additive shares `xs` of the same number of values and gets them back authenticated
    /// under the MAC key `α = Σ α_i` of this producer (COPE with every peer, then SPDZ_2k's
    /// authentication check on a random combination masked by one extra random value). Aborts
    /// as `authentication-mac-check` if a party used inconsistent inputs. Two coin tosses and
    /// one opening besides the COPE round.
    ///
    /// ```
    /// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
    /// use coterie_spdz::{OtPrep, Z2k};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let mut tasks = Vec::new();
    /// for mut mesh in InMemoryMesh::group(2, MeshOptions::default()) {
    ///     tasks.push(tokio::spawn(async move {
    ///         let mut p = OtPrep::setup(&mut mesh, Z2k::spdz2k_32()).await?;
    ///         // additive shares of 5 and 7 (party 0 holds them all, party 1 zeros)
    ///         let mine: Vec<u128> = if mesh.id() == 0 { vec![5, 7] } else { vec![0, 0] };
    ///         let shares = p.authenticate(&mut mesh, &mine).await?;
    ///         mesh.close().await?;
    ///         Ok::<_, coterie_spdz::Error>((shares, p.mac_key_share()))
    ///     }));
    /// }
    /// let mut per_party = Vec::new();
    /// let mut alpha = 0u128;
    /// for t in tasks {
    ///     let (s, k) = t.await.unwrap().unwrap();
    ///     per_party.push(s);
    ///     alpha = alpha.wrapping_add(k);
    /// }
    /// let ring = Z2k::spdz2k_32();
    /// let opened = coterie_spdz::verify::verify_shares(&ring, &alpha, &per_party).unwrap();
    /// assert_eq!(opened, [5, 7]);
    /// # });
    /// ```
    pub async fn authenticate<M: Mesh>(
        &mut self,
        mesh: &mut M,
        xs: &[u128],
    ) -> Result<Vec<Share<u128>>> {
        let r = self.ring;
        let bits = r.k() + r.s();
        if xs.iter().any(|x| Z2k::low_bits(*x, bits) != *x) {
            return Err(Error::Invalid(format!(
                "shares to authenticate must lie in Z_2^{bits}"
            )));
        }
        self.authenticate_checked(mesh, xs).await
    }

    /// COPE on `xs` plus one random mask, then the authentication check; returns `xs`
    /// authenticated.
    async fn authenticate_checked<M: Mesh>(
        &mut self,
        mesh: &mut M,
        xs: &[u128],
    ) -> Result<Vec<Share<u128>>> {
        let r = self.ring;
        let mut all = Vec::with_capacity(xs.len() + 1);
        all.extend_from_slice(xs);
        all.push(r.random(&mut self.rng)); // the mask of the authentication check
        let macs = self.cope(mesh, &all).await?;
        let mut shares: Vec<Share<u128>> = all
            .iter()
            .zip(&macs)
            .map(|(v, m)| Share { v: *v, m: *m })
            .collect();
        all.zeroize();
        // authentication check: open Σ χ_j x_j + extra (uniform), then the MAC check
        let seed = self.coin_toss(mesh, "auth-check").await?;
        let mut xof = Xof::new(&seed, b"coterie-spdz/auth-check-chi", 0);
        let mut e = Engine::new(self.empty_prep()).with_check_name("authentication-mac-check");
        let total = shares.len();
        let mut acc = shares[total - 1].clone();
        for s in &shares[..total - 1] {
            acc = e.add(&acc, &e.mul_const(s, &r.random_key(&mut xof)));
        }
        e.open_unmasked(mesh, &[acc]).await?;
        e.check(mesh).await?;
        if let Some(mut m) = shares.pop() {
            m.zeroize();
        }
        Ok(shares)
    }

    /// Authenticated values: `randoms` uniformly random values (every party contributes a random
    /// share) and `masks` input masks per owner (the owner's share is its random value, the
    /// others' are zero, so only the owner knows it). Ends with an authentication check.
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
    /// use coterie_spdz::{OtPrep, Z2k};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let mut tasks = Vec::new();
    /// for mut mesh in InMemoryMesh::group(2, MeshOptions::default()) {
    ///     tasks.push(tokio::spawn(async move {
    ///         let mut p = OtPrep::setup(&mut mesh, Z2k::spdz2k_32()).await?;
    ///         let out = p.randoms_and_masks(&mut mesh, 2, 1).await?;
    ///         mesh.close().await?;
    ///         Ok::<_, coterie_spdz::Error>(out)
    ///     }));
    /// }
    /// for t in tasks {
    ///     let out = t.await.unwrap().unwrap();
    ///     assert_eq!((out.0.len(), out.1.len(), out.1[0].len()), (2, 2, 1));
    /// }
    /// # });
    /// ```
    pub async fn randoms_and_masks<M: Mesh>(
        &mut self,
        mesh: &mut M,
        randoms: usize,
        masks: usize,
    ) -> Result<(Vec<Share<u128>>, Vec<Vec<InputMask<u128>>>)> {
        let per_owner = vec![masks; self.n];
        self.randoms_and_owner_masks(mesh, randoms, &per_owner)
            .await
    }

    /// As [`OtPrep::randoms_and_masks`] with `masks[o]` input masks for owner `o`.
    pub async fn randoms_and_owner_masks<M: Mesh>(
        &mut self,
        mesh: &mut M,
        randoms: usize,
        masks: &[usize],
    ) -> Result<(Vec<Share<u128>>, Vec<Vec<InputMask<u128>>>)> {
        if masks.len() != self.n {
            return Err(Error::Invalid(format!(
                "input mask counts for {} owners, {} parties",
                masks.len(),
                self.n
            )));
        }
        let r = self.ring;
        let all_masks: usize = masks.iter().sum();
        let mut xs = Vec::with_capacity(randoms + all_masks);
        for _ in 0..randoms {
            xs.push(r.random(&mut self.rng));
        }
        for (owner, &count) in masks.iter().enumerate() {
            for _ in 0..count {
                xs.push(if owner == self.me {
                    r.random(&mut self.rng)
                } else {
                    0
                });
            }
        }
        let shares = self.authenticate_checked(mesh, &xs).await?;
        self.progress((randoms + all_masks) as u64);
        let rnd = shares[..randoms].to_vec();
        let mut ms = Vec::with_capacity(self.n);
        let mut base = randoms;
        for (owner, &count) in masks.iter().enumerate() {
            ms.push(
                (0..count)
                    .map(|i| InputMask {
                        share: shares[base + i].clone(),
                        value: (owner == self.me).then_some(xs[base + i]),
                    })
                    .collect(),
            );
            base += count;
        }
        xs.zeroize();
        Ok((rnd, ms))
    }

    /// Produces `count` random bits from the other material: by square roots in `Z_{2^{k+2}}`
    /// for every ring with `k ≤ 125` (one triple and one or two authenticated values per bit,
    /// whatever the number of parties), otherwise as the XOR of one input bit per party (`n`
    /// triples per bit; `bits_from_inputs`). `docs/spdz-ot-security.md`, "Random bits by XOR"
    /// and "Random bits by square roots".
    ///
    /// Like every step of the producer, a call cancelled midway (its future dropped) leaves the
    /// parties out of step, and the producer must not be used again; this one also leaves it
    /// set to the wider ring of the square roots.
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
    /// use coterie_spdz::{OtPrep, Z2k};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let mut tasks = Vec::new();
    /// for mut mesh in InMemoryMesh::group(2, MeshOptions::default()) {
    ///     tasks.push(tokio::spawn(async move {
    ///         let mut p = OtPrep::setup(&mut mesh, Z2k::spdz2k_32()).await?;
    ///         let out = p.bits(&mut mesh, 2).await?;
    ///         mesh.close().await?;
    ///         Ok::<_, coterie_spdz::Error>(out)
    ///     }));
    /// }
    /// for t in tasks {
    ///     let out = t.await.unwrap().unwrap();
    ///     assert_eq!(out.len(), 2);
    /// }
    /// # });
    /// ```
    pub async fn bits<M: Mesh>(&mut self, mesh: &mut M, count: usize) -> Result<Vec<Share<u128>>> {
        if super::roots::square_root_ring(&self.ring).is_some() {
            return self.bits_by_square_roots(mesh, count).await;
        }
        let mine = self.random_bit_inputs(count);
        self.bits_from_inputs(mesh, mine).await
    }

    /// This party's `count` uniformly random input bits for [`OtPrep::bits`].
    pub(crate) fn random_bit_inputs(&mut self, count: usize) -> Vec<u128> {
        (0..count)
            .map(|_| (self.rng.next_u64() & 1) as u128)
            .collect()
    }

    /// The random-bit step with this party's input bits `mine` (one per bit to make; every party
    /// passes the same number): inputs, XOR, the bit check on the result, the MAC check. A
    /// party that passes a non-bit makes the check fail (tests use this).
    pub(crate) async fn bits_from_inputs<M: Mesh>(
        &mut self,
        mesh: &mut M,
        mine: Vec<u128>,
    ) -> Result<Vec<Share<u128>>> {
        if mine.is_empty() {
            return Ok(Vec::new());
        }
        // n − 1 products for the XOR of the n inputs, one for the bit check of the result
        let triples = self.triples(mesh, mine.len() * self.n).await?;
        self.bits_with_triples(mesh, mine, triples).await
    }

    /// [`OtPrep::bits_from_inputs`] with its `n` triples per bit already made, in the same
    /// order at every party.
    pub(crate) async fn bits_with_triples<M: Mesh>(
        &mut self,
        mesh: &mut M,
        mine: Vec<u128>,
        triples: Vec<Triple<u128>>,
    ) -> Result<Vec<Share<u128>>> {
        let count = mine.len();
        let n = self.n;
        if triples.len() != count * n {
            return Err(Error::Invalid(format!(
                "{count} random bits need {} triples, got {}",
                count * n,
                triples.len()
            )));
        }
        if count == 0 {
            return Ok(Vec::new());
        }
        let mut prep = self.empty_prep();
        prep.triples.extend(triples);
        // one random per opened check value (the opening masks its upper bits), one input mask
        // per party and bit
        let (rnd, masks) = self.randoms_and_masks(mesh, count, count).await?;
        prep.randoms.extend(rnd);
        for (q, m) in prep.masks.iter_mut().zip(masks) {
            q.extend(m);
        }
        let mut e = Engine::new(prep);
        let mut inputs = Vec::with_capacity(n);
        for owner in 0..n {
            let vals = (owner == self.me).then_some(mine.as_slice());
            inputs.push(e.input(mesh, owner, vals, count).await?);
        }
        // XOR all inputs: x ⊕ y = x + y − 2xy
        let mut acc = inputs[0].clone();
        for inp in &inputs[1..] {
            let p = e.mul(mesh, &acc, inp).await?;
            acc = acc
                .iter()
                .zip(inp)
                .zip(&p)
                .map(|((x, y), xy)| {
                    let s = e.add(x, y);
                    e.sub(&s, &e.mul_const(xy, &2))
                })
                .collect();
        }
        // one bit check on the result, b(1 − b) = 0: with an honest party's uniform bit β_h and
        // the XOR A of the others' inputs (fixed by the input step before anything of β_h is
        // revealed), b = A when β_h = 0 and b = 1 − A when β_h = 1, so b is a bit for both
        // values of β_h exactly when A is one: the check fails for every non-bit input whatever
        // β_h is (no selective failure), and when it passes b = β_h ⊕ A is uniform
        let one = 1u128;
        let om: Vec<Share<u128>> = acc.iter().map(|x| e.add_const(&e.neg(x), &one)).collect();
        let prod = e.mul(mesh, &acc, &om).await?;
        let opened = e.open(mesh, &prod).await?;
        if opened.iter().any(|v| *v != 0) {
            let err = Error::PrepCheckFailed {
                check: "random-bit-input",
                party: self.me,
            };
            mesh.abort(&err.to_string()).await;
            return Err(err);
        }
        e.check(mesh).await?;
        Ok(acc)
    }
}
