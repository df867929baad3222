//! The MAC checks of the engine: the batched check (SPDZ_2k Π_MACCheck / the SPDZ field check)
//! and SingleCheck (seed 000 §10.4), split into its two rounds for pipelined schedules.

use coterie_math::prg::{Xof, fresh_seed};
use coterie_net::Mesh;
use coterie_net::commit::{Commitment, Opening, commit, verify};
use zeroize::Zeroize;

use super::{
    Engine, TAG_CHECK_A, TAG_CHECK_B, TAG_CHECK_C, TAG_CHECK_D, TAG_SINGLE_C, TAG_SINGLE_O,
    digest_elems,
};
use crate::prep::Preprocessing;
use crate::ring::Ring;
use crate::{Error, Result};

/// The first half of a per-value MAC check ([`Engine::check_single_commit`]), to be finished by
/// [`Engine::check_single_open`].
pub struct PendingSingleCheck {
    id: u64,
    count: usize,
    bytes: Vec<u8>,
    opening: Opening,
    commitments: Vec<Commitment>,
}

impl Drop for PendingSingleCheck {
    fn drop(&mut self) {
        self.bytes.zeroize();
    }
}

impl<R: Ring, P: Preprocessing<R>> Engine<R, P> {
    /// The MAC check over every value opened since the last check (see the module docs).
    /// On failure the mesh is aborted and the error names the failed check.
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
    /// use coterie_spdz::{Counts, Engine, InsecureDealer, Z2k};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let mut rng = rand::rng();
    /// let dealer = InsecureDealer::insecure_new(Z2k::spdz2k_64(), 2, &mut rng).unwrap();
    /// let counts = Counts { randoms: 2, masks_per_party: 1, ..Counts::default() };
    /// let preps = dealer.deal(counts, &mut rng);
    /// let mut tasks = Vec::new();
    /// for (mut mesh, prep) in InMemoryMesh::group(2, MeshOptions::default()).into_iter().zip(preps) {
    ///     tasks.push(tokio::spawn(async move {
    ///         let mut e = Engine::new(prep);
    ///         let me = mesh.id();
    ///         let x = e.input(&mut mesh, 0, (me == 0).then_some(&[5u128][..]), 1).await?;
    ///         let y = e.add_const(&x[0], &3);
    ///         let v = e.open(&mut mesh, &[y]).await?; // not yet authenticated
    ///         e.check(&mut mesh).await?; // now it is
    ///         mesh.close().await?;
    ///         Ok::<u128, coterie_spdz::Error>(v[0])
    ///     }));
    /// }
    /// for t in tasks {
    ///     assert_eq!(t.await.unwrap().unwrap(), 8);
    /// }
    /// # });
    /// ```
    pub async fn check<M: Mesh>(&mut self, mesh: &mut M) -> Result<()> {
        self.check_mesh(mesh)?;
        if self.opened.is_empty() {
            return Ok(());
        }
        let id = self.checks;
        self.checks += 1;
        let me = self.me;
        let d_open = format!("coterie-spdz/mac-check/{id}/opened");
        let d_seed = format!("coterie-spdz/mac-check/{id}/seed");
        let d_sigma = format!("coterie-spdz/mac-check/{id}/sigma");

        // Round A: digest of the opened values + commitment to a coin-toss seed.
        let dig = digest_elems(&d_open, &self.ring, &self.opened);
        let mut seed = fresh_seed();
        let (c_seed, o_seed) = commit(&d_seed, me, &seed);
        let a: Vec<([u8; 32], Commitment)> = mesh
            .exchange_all_tagged(TAG_CHECK_A, &(dig, c_seed))
            .await?;
        if let Some(j) = a.iter().position(|(d, _)| d != &dig) {
            return Err(self
                .fail(
                    mesh,
                    Error::InconsistentBroadcast {
                        check: "opened-values-echo",
                        party: j,
                    },
                )
                .await);
        }
        // Round B: open the seeds; the joint seed hashes all of them.
        let b: Vec<(Opening, [u8; 32])> = mesh
            .exchange_all_tagged(TAG_CHECK_B, &(o_seed, seed))
            .await?;
        seed.zeroize();
        let mut h = blake3::Hasher::new_derive_key("coterie-spdz 2026 mac-check coins v1");
        for (j, ((o, s), (_, c))) in b.iter().zip(&a).enumerate() {
            if !verify(&d_seed, j, s, c, o) {
                return Err(self
                    .fail(
                        mesh,
                        Error::CommitmentMismatch {
                            check: "mac-check-coin-toss",
                            party: j,
                        },
                    )
                    .await);
            }
            h.update(s);
        }
        let joint: [u8; 32] = *h.finalize().as_bytes();
        let mut xof = Xof::new(&joint, b"coterie-spdz/mac-check/chi", id);

        let r = self.ring.clone();
        let (mut y, mut mm) = (r.zero(), r.zero());
        for (x, m) in self.opened.iter().zip(&self.macs) {
            let chi = r.random_key(&mut xof);
            y = r.add(&y, &r.mul(&chi, x));
            mm = r.add(&mm, &r.mul(&chi, m));
        }
        let sigma = r.sub(&mm, &r.mul(&self.key, &y));
        mm.zeroize();
        let bytes = r.encode(std::slice::from_ref(&sigma));
        // Rounds C and D: commit to σ_i, then open.
        let (c_sig, o_sig) = commit(&d_sigma, me, &bytes);
        let cs: Vec<Commitment> = mesh.exchange_all_tagged(TAG_CHECK_C, &c_sig).await?;
        let ds: Vec<(Opening, Vec<u8>)> = mesh
            .exchange_all_tagged(TAG_CHECK_D, &(o_sig, bytes))
            .await?;
        let mut total = r.zero();
        for (j, ((o, s), c)) in ds.iter().zip(&cs).enumerate() {
            if !verify(&d_sigma, j, s, c, o) {
                return Err(self
                    .fail(
                        mesh,
                        Error::CommitmentMismatch {
                            check: "mac-check-commitment",
                            party: j,
                        },
                    )
                    .await);
            }
            let sj = match r.read(s) {
                Ok(v) => v,
                Err(e) => {
                    return Err(self
                        .fail(
                            mesh,
                            Error::Malformed {
                                party: j,
                                cause: e.to_string(),
                            },
                        )
                        .await);
                }
            };
            total = r.add(&total, &sj);
        }
        if !r.is_zero(&total) {
            return Err(self
                .fail(
                    mesh,
                    Error::MacCheckFailed {
                        check: self.check_name,
                        detected_by: me,
                    },
                )
                .await);
        }
        self.opened.clear();
        self.macs.iter_mut().for_each(Zeroize::zeroize);
        self.macs.clear();
        Ok(())
    }

    /// SingleCheck as in seed 000 §10.4: a per-value MAC check of every value opened since the
    /// last check, in two rounds and without a coin toss: each party commits to its shifted MAC
    /// shares `σ_{j,i} = m_{j,i} − α_i·x̃_j` (one per value, together with a digest of the
    /// opened values, which must agree), then opens them; every `Σ_i σ_{j,i}` must be zero. Costs
    /// one share-ring element per value per party (the paper's `2(t+s)` bits per opened value,
    /// counting the share). Same as [`Engine::check_single_commit`] then
    /// [`Engine::check_single_open`].
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
    /// use coterie_spdz::{Counts, Engine, InsecureDealer, Z2k};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let mut rng = rand::rng();
    /// let dealer = InsecureDealer::insecure_new(Z2k::spdz2k_64(), 2, &mut rng).unwrap();
    /// let preps = dealer.deal(Counts { randoms: 2, masks_per_party: 2, ..Counts::default() }, &mut rng);
    /// let mut tasks = Vec::new();
    /// for (mut mesh, prep) in InMemoryMesh::group(2, MeshOptions::default()).into_iter().zip(preps) {
    ///     tasks.push(tokio::spawn(async move {
    ///         let mut e = Engine::new(prep);
    ///         let me = mesh.id();
    ///         let x = e.input(&mut mesh, 1, (me == 1).then_some(&[7u128, 9][..]), 2).await?;
    ///         let a = e.open(&mut mesh, &x[..1]).await?;
    ///         let pending = e.check_single_commit(&mut mesh).await?; // round 1 for `a`
    ///         let b = e.open(&mut mesh, &x[1..]).await?; // runs meanwhile
    ///         e.check_single_open(&mut mesh, pending).await?; // `a` is authenticated
    ///         e.check_single(&mut mesh).await?; // both rounds for `b`
    ///         let out = [a[0], b[0]];
    ///         mesh.close().await?;
    ///         Ok::<_, coterie_spdz::Error>(out)
    ///     }));
    /// }
    /// for t in tasks {
    ///     assert_eq!(t.await.unwrap().unwrap(), [7, 9]);
    /// }
    /// # });
    /// ```
    pub async fn check_single<M: Mesh>(&mut self, mesh: &mut M) -> Result<()> {
        let p = self.check_single_commit(mesh).await?;
        self.check_single_open(mesh, p).await
    }

    /// First round of [`Engine::check_single`]: takes every value opened so far out of the pending
    /// list (later openings start a new list) and exchanges the commitments. Finish it with
    /// [`Engine::check_single_open`]; in between the caller may run further openings (the
    /// pipelined schedule of seed 000 §10.4), whose results must not be released before this
    /// check and theirs have passed.
    pub async fn check_single_commit<M: Mesh>(
        &mut self,
        mesh: &mut M,
    ) -> Result<PendingSingleCheck> {
        self.check_mesh(mesh)?;
        let id = self.checks;
        self.checks += 1;
        let me = self.me;
        let r = self.ring.clone();
        let opened = std::mem::take(&mut self.opened);
        let mut macs = std::mem::take(&mut self.macs);
        let sigmas: Vec<R::Elem> = opened
            .iter()
            .zip(&macs)
            .map(|(x, m)| r.sub(m, &r.mul(&self.key, x)))
            .collect();
        macs.iter_mut().for_each(Zeroize::zeroize);
        let dig = digest_elems(
            &format!("coterie-spdz/single-check/{id}/opened"),
            &r,
            &opened,
        );
        let bytes = r.encode(&sigmas);
        let (c, o) = commit(&format!("coterie-spdz/single-check/{id}/sigma"), me, &bytes);
        let got: Vec<([u8; 32], Commitment)> =
            mesh.exchange_all_tagged(TAG_SINGLE_C, &(dig, c)).await?;
        if let Some(j) = got.iter().position(|(d, _)| d != &dig) {
            return Err(self
                .fail(
                    mesh,
                    Error::InconsistentBroadcast {
                        check: "opened-values-echo",
                        party: j,
                    },
                )
                .await);
        }
        Ok(PendingSingleCheck {
            id,
            count: opened.len(),
            bytes,
            opening: o,
            commitments: got.into_iter().map(|(_, c)| c).collect(),
        })
    }

    /// Second round of [`Engine::check_single`]: opens the commitments and checks every value.
    pub async fn check_single_open<M: Mesh>(
        &mut self,
        mesh: &mut M,
        mut p: PendingSingleCheck,
    ) -> Result<()> {
        self.check_mesh(mesh)?;
        let r = self.ring.clone();
        let bytes = std::mem::take(&mut p.bytes);
        let domain = format!("coterie-spdz/single-check/{}/sigma", p.id);
        let got: Vec<(Opening, Vec<u8>)> = mesh
            .exchange_all_tagged(TAG_SINGLE_O, &(p.opening, bytes))
            .await?;
        if got.len() != p.commitments.len() {
            return Err(Error::Invalid("single check: party count changed".into()));
        }
        let mut total = vec![r.zero(); p.count];
        for (j, ((o, b), c)) in got.iter().zip(&p.commitments).enumerate() {
            if !verify(&domain, j, b, c, o) {
                return Err(self
                    .fail(
                        mesh,
                        Error::CommitmentMismatch {
                            check: "single-check-commitment",
                            party: j,
                        },
                    )
                    .await);
            }
            let v = match r.decode(b, p.count) {
                Ok(v) => v,
                Err(e) => {
                    return Err(self
                        .fail(
                            mesh,
                            Error::Malformed {
                                party: j,
                                cause: e.to_string(),
                            },
                        )
                        .await);
                }
            };
            for (t, x) in total.iter_mut().zip(&v) {
                *t = r.add(t, x);
            }
        }
        if total.iter().any(|t| !r.is_zero(t)) {
            return Err(self
                .fail(
                    mesh,
                    Error::MacCheckFailed {
                        check: "single-check",
                        detected_by: self.me,
                    },
                )
                .await);
        }
        Ok(())
    }
}
