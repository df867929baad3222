//! Triples: the Gilboa products on correlated OTs (KOS or SoftSpokenOT), the combine step
//! against selective failure, authentication and the SPDZ_2k sacrifice
//! (`docs/spdz-ot-security.md`, Multiply, Combine and Sacrifice).

use coterie_base::bits::{BitReader, BitWriter, packed_len};
use coterie_math::prg::Xof;
use coterie_net::Mesh;
use rand::Rng;
use zeroize::Zeroize;

use super::{
    MAX_TRIPLE_BATCH, OtExtension, OtPrep, TAG_GILBOA, TAG_KOS_RESP, TAG_KOS_SEED, TAG_KOS_U,
    TAG_SS_U, combine_width, malformed, pairwise, pairwise_bytes,
};
use crate::engine::Engine;
use crate::ot::{self, KosReceiver, Seed};
use crate::prep::{Share, Triple};
use crate::ring::{Ring, Z2k};
use crate::{Error, Result};

/// Rows hashed at a time for the Gilboa pads: 4,096 × 16 bytes per buffer stays in the L2 cache
/// and is reused, where whole-batch buffers (6 MB at 1,024 triples) were fresh memory, faulted
/// in page by page, every batch.
const HASH_ROWS: usize = 4096;

fn cols_to_bytes(cols: &[Vec<u64>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(cols.len() * cols.first().map_or(0, |c| c.len()) * 8);
    for c in cols {
        for w in c {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }
    out
}

fn bytes_to_cols(b: &[u8], ncols: usize, words: usize) -> Option<Vec<Vec<u64>>> {
    if b.len() != ncols * words * 8 {
        return None;
    }
    Some(
        b.chunks_exact(words * 8)
            .map(|c| {
                c.chunks_exact(8)
                    .map(|w| {
                        let mut x = [0u8; 8];
                        x.copy_from_slice(w);
                        u64::from_le_bytes(x)
                    })
                    .collect()
            })
            .collect(),
    )
}

impl OtPrep {
    /// Produces `count` authenticated triples (SPDZ_2k Π_Triple: Gilboa products on
    /// [`combine_width`] random bits per triple, combine, authenticate, sacrifice; see the
    /// module docs).
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
    ///         let out = p.triples(&mut mesh, 3).await?;
    ///         mesh.close().await?;
    ///         Ok::<_, coterie_spdz::Error>(out)
    ///     }));
    /// }
    /// for t in tasks {
    ///     let out = t.await.unwrap().unwrap();
    ///     assert_eq!(out.len(), 3);
    /// }
    /// # });
    /// ```
    pub async fn triples<M: Mesh>(
        &mut self,
        mesh: &mut M,
        count: usize,
    ) -> Result<Vec<Triple<u128>>> {
        let mut out = Vec::with_capacity(count);
        let mut left = count;
        while left > 0 {
            let t = left.min(MAX_TRIPLE_BATCH);
            out.extend(self.triple_batch(mesh, t).await?);
            left -= t;
            self.progress(t as u64);
        }
        Ok(out)
    }

    /// The Gilboa step of SPDZ_2k Π_Triple on correlated OTs (KOS or SoftSpokenOT, the same
    /// correlation and check): this party samples `tau·t` random bits `x` (its bits `a_h` for
    /// every triple; the same bits toward every peer) and for every ordered pair computes
    /// shares of `x_h·b_j`. Returns the bits and this
    /// party's shares of `c_h = x_h·b` (summed over all parties' bits and all `b_j`, including
    /// its own `x_h·b_i`), one per OT, triple-major (`ti·tau + h`).
    async fn products<M: Mesh>(
        &mut self,
        mesh: &mut M,
        b: &[u128],
        tau: usize,
    ) -> Result<(Vec<u64>, Vec<u128>)> {
        let r = self.ring;
        let kk = r.k() + r.s();
        let t = b.len();
        let m = t * tau;
        let batch = self.batch;
        self.batch += 1;
        let mask = if kk == 128 {
            u128::MAX
        } else {
            (1u128 << kk) - 1
        };
        // this party's random bits a_h (choices of its OTs as receiver)
        let mut x: Vec<u64> = (0..m.div_ceil(64)).map(|_| self.rng.next_u64()).collect();
        if !m.is_multiple_of(64)
            && let Some(last) = x.last_mut()
        {
            *last &= (1u64 << (m % 64)) - 1;
        }
        let bit = |x: &[u64], j: usize| (x[j / 64] >> (j % 64)) & 1;
        // Round 1: the extension's corrections to every peer (as receiver): KOS's 128 columns
        // u, or SoftSpokenOT's 128/k columns u^(b) ⊕ x.
        let ext = self.ext;
        let (tag_u, ncols) = match ext {
            OtExtension::Kos => (TAG_KOS_U, 128),
            OtExtension::SoftSpoken { k } => (TAG_SS_U, 128 / k as usize),
        };
        let mut receivers: Vec<Option<KosReceiver>> = (0..self.n).map(|_| None).collect();
        let mut out: Vec<Option<Vec<u8>>> = (0..self.n).map(|_| None).collect();
        for j in 0..self.n {
            if j == self.me {
                continue;
            }
            let (rc, us) = match ext {
                OtExtension::Kos => {
                    let keys = self.pair(j)?.kos_recv_keys.clone();
                    KosReceiver::extend(&mut self.rng, &keys, batch, &x, m)?
                }
                OtExtension::SoftSpoken { .. } => {
                    let p = self
                        .pairs
                        .get(j)
                        .and_then(|p| p.as_ref())
                        .and_then(|p| p.ss_recv.as_ref())
                        .ok_or_else(|| Error::Invalid(format!("no SoftSpokenOT state for {j}")))?;
                    p.extend(&mut self.rng, batch, j, self.me, &x, m)?
                }
            };
            receivers[j] = Some(rc);
            out[j] = Some(cols_to_bytes(&us));
        }
        let words = ot::kos_words(m);
        let got_u = pairwise_bytes(mesh, tag_u, out, |_| ncols * words * 8).await?;
        // Round 2: as sender, compute rows q and send a fresh challenge seed.
        let mut rows: Vec<Option<Vec<u128>>> = (0..self.n).map(|_| None).collect();
        let mut seeds: Vec<Option<Seed>> = (0..self.n).map(|_| None).collect();
        for j in 0..self.n {
            if j == self.me {
                continue;
            }
            let p = self.pair(j)?;
            let us = got_u[j]
                .as_ref()
                .and_then(|b| bytes_to_cols(b, ncols, words))
                .ok_or_else(|| malformed(j, "missing or malformed u"))?;
            let q = match ext {
                OtExtension::Kos => {
                    ot::kos_sender_rows(p.kos_delta, &p.kos_send_keys, batch, &us, m)
                }
                OtExtension::SoftSpoken { .. } => p
                    .ss_send
                    .as_ref()
                    .ok_or_else(|| Error::Invalid(format!("no SoftSpokenOT state for {j}")))?
                    .rows(batch, self.me, j, &us, m),
            }
            .map_err(|e| malformed(j, &e.to_string()))?;
            rows[j] = Some(q);
            let mut sd = [0u8; 32];
            self.rng.fill_bytes(&mut sd);
            seeds[j] = Some(sd);
        }
        drop(got_u);
        let got_seed: Vec<Option<Seed>> = pairwise(mesh, TAG_KOS_SEED, seeds.clone(), 32).await?;
        // Round 3: as receiver, answer the check.
        let mut out: Vec<Option<(u128, u128)>> = (0..self.n).map(|_| None).collect();
        for j in 0..self.n {
            if j == self.me {
                continue;
            }
            let sd = got_seed[j].ok_or_else(|| malformed(j, "missing seed"))?;
            let rc = receivers[j]
                .as_ref()
                .ok_or_else(|| Error::Invalid("missing receiver".into()))?;
            out[j] = Some(rc.check_response(&sd));
        }
        let got_resp: Vec<Option<(u128, u128)>> = pairwise(mesh, TAG_KOS_RESP, out, 40).await?;
        // Round 4: as sender, verify, then send the Gilboa corrections d = p_0 − p_1 + b_i.
        let d_len = packed_len(m, kk);
        let mut shares = vec![0u128; m];
        let mut out: Vec<Option<Vec<u8>>> = (0..self.n).map(|_| None).collect();
        for j in 0..self.n {
            if j == self.me {
                continue;
            }
            let p = self.pair(j)?;
            let q = rows[j]
                .as_ref()
                .ok_or_else(|| Error::Invalid("missing rows".into()))?;
            let resp = got_resp[j].ok_or_else(|| malformed(j, "missing check response"))?;
            let sd = seeds[j].ok_or_else(|| Error::Invalid("missing seed".into()))?;
            if !ot::kos_sender_check(p.kos_delta, q, &sd, resp) {
                let e = Error::PrepCheckFailed {
                    check: ext.check_name(),
                    party: j,
                };
                mesh.abort(&e.to_string()).await;
                return Err(e);
            }
            let me = self.me;
            let tw = |i: usize| ot::ot_tweak(batch, i, me, j);
            // pads p_0 = H(q), p_1 = H(q ⊕ Δ), a piece of rows at a time
            let (mut p0, mut p1, mut q1) = (Vec::new(), Vec::new(), Vec::new());
            let mut d = BitWriter::with_capacity(d_len);
            for lo in (0..m).step_by(HASH_ROWS) {
                let hi = (lo + HASH_ROWS).min(m);
                ot::tccr_hash_into(&q[lo..hi], |i| tw(lo + i), &mut p0);
                q1.zeroize();
                q1.clear();
                q1.extend(q[lo..hi].iter().map(|x| x ^ p.kos_delta));
                ot::tccr_hash_into(&q1, |i| tw(lo + i), &mut p1);
                for (k, idx) in (lo..hi).enumerate() {
                    let dv = p0[k].wrapping_sub(p1[k]).wrapping_add(b[idx / tau]);
                    d.put_u128(dv, kk);
                    shares[idx] = shares[idx].wrapping_sub(p0[k]);
                }
            }
            q1.zeroize();
            p0.zeroize();
            p1.zeroize();
            out[j] = Some(d.finish());
        }
        rows.into_iter().flatten().for_each(ot::recycle_rows);
        let got_d = pairwise_bytes(mesh, TAG_GILBOA, out, |_| d_len).await?;
        // As receiver: p_{x_h} + x_h·d_h = p_0 + x_h·b_j.
        for j in 0..self.n {
            if j == self.me {
                continue;
            }
            let bytes = got_d[j].as_ref().ok_or_else(|| malformed(j, "missing d"))?;
            let mut rd = BitReader::new(bytes);
            let rc = receivers[j]
                .as_ref()
                .ok_or_else(|| Error::Invalid("missing receiver".into()))?;
            let me = self.me;
            let mut pads = Vec::new();
            for lo in (0..m).step_by(HASH_ROWS) {
                let hi = (lo + HASH_ROWS).min(m);
                ot::tccr_hash_into(
                    &rc.t[lo..hi],
                    |i| ot::ot_tweak(batch, lo + i, j, me),
                    &mut pads,
                );
                for (k, sh) in shares[lo..hi].iter_mut().enumerate() {
                    let d = rd
                        .get_u128(kk)
                        .ok_or_else(|| malformed(j, "short corrections d"))?;
                    let bm = 0u128.wrapping_sub(rc.choice(lo + k) as u128);
                    *sh = sh.wrapping_add(pads[k].wrapping_add(d & bm));
                }
            }
            pads.zeroize();
        }
        // own products x_h·b_i
        for ti in 0..t {
            for h in 0..tau {
                let idx = ti * tau + h;
                let bm = 0u128.wrapping_sub(bit(&x, idx) as u128);
                shares[idx] = shares[idx].wrapping_add(b[ti] & bm) & mask;
            }
        }
        Ok((x, shares))
    }

    async fn triple_batch<M: Mesh>(&mut self, mesh: &mut M, t: usize) -> Result<Vec<Triple<u128>>> {
        let r = self.ring;
        let tau = combine_width(&r);
        let kk = r.k() + r.s();
        // Multiply: b_i uniform in Z_{2^{k+s}}; bits x_h; shares of c_h = x_h·b.
        let b: Vec<u128> = (0..t).map(|_| r.random(&mut self.rng)).collect();
        let (mut x, mut ch) = self.products(mesh, &b, tau).await?;
        // Combine: public random r, r̂ ∈ Z_{2^{k+s}}^tau, tossed after the products are fixed;
        // a = Σ r_h x_h, â = Σ r̂_h x_h, c = Σ r_h c_h, ĉ = Σ r̂_h c_h.
        let seed = self.coin_toss(mesh, "combine").await?;
        let mut xof = Xof::new(&seed, b"coterie-spdz/combine-r", 0);
        let rs: Vec<u128> = (0..tau).map(|_| r.random(&mut xof)).collect();
        let rhs: Vec<u128> = (0..tau).map(|_| r.random(&mut xof)).collect();
        let (mut a, mut ah) = (vec![0u128; t], vec![0u128; t]);
        let (mut c, mut chat) = (vec![0u128; t], vec![0u128; t]);
        for ti in 0..t {
            let (mut sa, mut sah, mut sc, mut sch) = (0u128, 0u128, 0u128, 0u128);
            for h in 0..tau {
                let idx = ti * tau + h;
                let bm = 0u128.wrapping_sub(((x[idx / 64] >> (idx % 64)) & 1) as u128);
                sa = sa.wrapping_add(rs[h] & bm);
                sah = sah.wrapping_add(rhs[h] & bm);
                sc = sc.wrapping_add(rs[h].wrapping_mul(ch[idx]));
                sch = sch.wrapping_add(rhs[h].wrapping_mul(ch[idx]));
            }
            a[ti] = Z2k::low_bits(sa, kk);
            ah[ti] = Z2k::low_bits(sah, kk);
            c[ti] = Z2k::low_bits(sc, kk);
            chat[ti] = Z2k::low_bits(sch, kk);
        }
        x.zeroize();
        ch.zeroize();
        // Authenticate a, b, c, â, ĉ and one uniform mask for the authentication check.
        let mut all: Vec<u128> = a
            .iter()
            .chain(&b)
            .chain(&c)
            .chain(&ah)
            .chain(&chat)
            .copied()
            .collect();
        all.push(r.random(&mut self.rng));
        a.zeroize();
        ah.zeroize();
        c.zeroize();
        chat.zeroize();
        let macs = self.cope(mesh, &all).await?;
        let mut shares: Vec<Share<u128>> = all
            .iter()
            .zip(&macs)
            .map(|(v, m)| Share { v: *v, m: *m })
            .collect();
        all.zeroize();
        // One coin toss for the authentication check's χ and the sacrifice's t.
        let seed = self.coin_toss(mesh, "check").await?;
        let mut xof = Xof::new(&seed, b"coterie-spdz/check-chi-t", 0);
        let mut e = Engine::new(self.empty_prep()).with_check_name("authentication-mac-check");
        let sh = |v: usize| &shares[v];
        // Authentication check (SPDZ_2k/MASCOT Π_[[·]]): open mask + Σ χ_v x_v, χ_v ∈ Z_{2^s}.
        let mut acc = shares[5 * t].clone();
        for s in &shares[..5 * t] {
            acc = e.add(&acc, &e.mul_const(s, &r.random_key(&mut xof)));
        }
        // Sacrifice (SPDZ_2k): t_i ∈ Z_{2^s}; ρ = t·a − â; z = t·c − ĉ − ρ·b must be 0.
        let ts: Vec<u128> = (0..t).map(|_| r.random_key(&mut xof)).collect();
        let mut first: Vec<Share<u128>> = (0..t)
            .map(|i| e.sub(&e.mul_const(sh(i), &ts[i]), sh(3 * t + i)))
            .collect();
        first.push(acc);
        let rho_open = e.open_unmasked(mesh, &first).await?;
        let z: Vec<Share<u128>> = (0..t)
            .map(|i| {
                let tc = e.mul_const(sh(2 * t + i), &ts[i]);
                let x = e.sub(&tc, sh(4 * t + i));
                e.sub(&x, &e.mul_const(sh(t + i), &rho_open[i]))
            })
            .collect();
        let z_open = e.open_unmasked(mesh, &z).await?;
        if z_open.iter().any(|v| *v != 0) {
            let err = Error::SacrificeFailed {
                detected_by: self.me,
            };
            mesh.abort(&err.to_string()).await;
            return Err(err);
        }
        e.check(mesh).await?;
        let out = (0..t)
            .map(|i| Triple {
                a: shares[i].clone(),
                b: shares[t + i].clone(),
                c: shares[2 * t + i].clone(),
            })
            .collect();
        shares.zeroize();
        Ok(out)
    }
}
