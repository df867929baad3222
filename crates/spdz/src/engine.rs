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

use coterie_math::prg::{Xof, fresh_seed};
use coterie_net::commit::{Commitment, Opening, commit, verify};
use coterie_net::{Mesh, PartyId};
use serde::{Deserialize, Serialize};
use zeroize::Zeroize;

use crate::prep::{Preprocessing, Share};
use crate::ring::{PrimeField, Ring, Z2k};
use crate::{Error, Result};

/// Wire format version of engine messages.
pub const WIRE_VERSION: u8 = 1;

/// Largest payload of one opening message; larger batches are opened in several messages (the
/// mesh's `max_frame` must be above this, as the default 64 MiB is).
pub const OPEN_CHUNK_BYTES: usize = 8 << 20;

const TAG_OPEN: u32 = 0x5D20_0001;
const TAG_INPUT: u32 = 0x5D20_0002;
const TAG_INPUT_ECHO: u32 = 0x5D20_0003;
const TAG_CHECK_A: u32 = 0x5D20_0004;
const TAG_CHECK_B: u32 = 0x5D20_0005;
const TAG_CHECK_C: u32 = 0x5D20_0006;
const TAG_CHECK_D: u32 = 0x5D20_0007;
const TAG_SINGLE_C: u32 = 0x5D20_0008;
const TAG_SINGLE_O: u32 = 0x5D20_0009;

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

/// A batch of ring elements on the wire: version tag and fixed-width encodings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WireElems {
    /// [`WIRE_VERSION`].
    pub version: u8,
    /// Concatenated fixed-width little-endian elements.
    #[serde(with = "serde_byte_vec")]
    pub data: Vec<u8>,
}

/// Test-only cheating hooks (additive errors), to show that every cheat is caught.
#[cfg(test)]
#[derive(Debug, Clone, Default)]
pub(crate) struct Cheat {
    /// Added to this party's share of the first value of its next opening.
    pub share_err: Option<u64>,
    /// Added to this party's MAC share of the first value checked by its next MAC check.
    pub mac_err: Option<u64>,
    /// Reveal a value other than the committed one in the next MAC check's opening round.
    pub bad_commit_open: bool,
    /// As input owner, send a different value to the last party than to the others.
    pub equivocate_input: bool,
}

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
    #[cfg(test)]
    pub(crate) cheat: Cheat,
}

impl<R: Ring, P: Preprocessing<R>> Drop for Engine<R, P> {
    fn drop(&mut self) {
        self.key.zeroize();
        self.macs.iter_mut().for_each(Zeroize::zeroize);
    }
}

fn digest(domain: &str, bytes: &[u8]) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key("coterie-spdz 2026 digest v1");
    h.update(&(domain.len() as u64).to_le_bytes());
    h.update(domain.as_bytes());
    h.update(&(bytes.len() as u64).to_le_bytes());
    h.update(bytes);
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
            #[cfg(test)]
            cheat: Cheat::default(),
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
        self.check_mesh(mesh)?;
        // A fixed byte budget per message (the same at every party, whatever its mesh options),
        // well below the default frame limit.
        let chunk = (OPEN_CHUNK_BYTES / self.ring.elem_bytes()).max(1);
        let mut out = Vec::with_capacity(xs.len());
        for part in xs.chunks(chunk) {
            #[allow(unused_mut)]
            let mut mine: Vec<R::Elem> = part.iter().map(|s| s.v.clone()).collect();
            #[cfg(test)]
            if let Some(e) = self.cheat.share_err.take() {
                mine[0] = self.ring.add(&mine[0], &self.ring.embed_u64(e));
            }
            let msg = WireElems {
                version: WIRE_VERSION,
                data: self.ring.encode(&mine),
            };
            let all: Vec<WireElems> = mesh.exchange_all_tagged(TAG_OPEN, &msg).await?;
            let mut sum = mine;
            for (j, m) in all.iter().enumerate() {
                if j == self.me {
                    continue;
                }
                let vals = self.decode_from(j, m, part.len())?;
                for (s, v) in sum.iter_mut().zip(&vals) {
                    *s = self.ring.add(s, v);
                }
            }
            self.macs.extend(part.iter().map(|s| s.m.clone()));
            self.opened.extend(sum.iter().cloned());
            out.extend(sum);
        }
        Ok(out)
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

    fn decode_from(&self, j: PartyId, m: &WireElems, count: usize) -> Result<Vec<R::Elem>> {
        if m.version != WIRE_VERSION {
            return Err(Error::Malformed {
                party: j,
                cause: format!("wire version {}", m.version),
            });
        }
        self.ring
            .decode(&m.data, count)
            .map_err(|e| Error::Malformed {
                party: j,
                cause: e.to_string(),
            })
    }

    /// Opens `xs` to every party; returns the values in the value ring (`mod 2^k` over
    /// `Z_{2^k}`). Over `Z_{2^k}` each value is masked with `2^k·[ρ]` (one preprocessed random
    /// value per opened value) so that only its `k` value bits are revealed. The result is
    /// authenticated only after the next successful [`Engine::check`].
    pub async fn open<M: Mesh>(
        &mut self,
        mesh: &mut M,
        xs: &[Share<R::Elem>],
    ) -> Result<Vec<R::Elem>> {
        let masked = match self.two_k.clone() {
            Some(t) => {
                let rho = self.prep.randoms(xs.len())?;
                xs.iter()
                    .zip(&rho)
                    .map(|(x, r)| self.add(x, &self.mul_const(r, &t)))
                    .collect::<Vec<_>>()
            }
            None => xs.to_vec(),
        };
        let y = self.open_raw(mesh, &masked).await?;
        Ok(y.iter().map(|v| self.ring.to_value(v)).collect())
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
        let n = xs.len();
        let t = self.prep.triples(n)?;
        let mut masked = Vec::with_capacity(2 * n);
        for ((x, y), t) in xs.iter().zip(ys).zip(&t) {
            masked.push(self.sub(x, &t.a));
            masked.push(self.sub(y, &t.b));
        }
        let ed = self.open_raw(mesh, &masked).await?;
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

    /// `count` preprocessed random bits.
    pub fn rand_bits(&mut self, count: usize) -> Result<Vec<Share<R::Elem>>> {
        self.prep.bits(count)
    }

    /// Secret input by `owner`: the owner passes `Some(values)` (exactly `count` of them), the
    /// others `None`. The owner broadcasts `x - r` for preprocessed masks `[r]`; an echo round
    /// checks that every party received the same values.
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
            #[cfg(test)]
            if std::mem::take(&mut self.cheat.equivocate_input) {
                let mut other = eps.clone();
                other[0] = self.ring.add(&other[0], &self.ring.embed_u64(1));
                for to in 0..self.n {
                    if to == self.me {
                        continue;
                    }
                    let v = if to == self.n - 1 { &other } else { &eps };
                    let msg = WireElems {
                        version: WIRE_VERSION,
                        data: self.ring.encode(v),
                    };
                    mesh.send_tagged(to, TAG_INPUT, &msg).await?;
                }
                return self.finish_input(mesh, &domain, masks, eps).await;
            }
            mesh.broadcast_tagged(
                TAG_INPUT,
                &WireElems {
                    version: WIRE_VERSION,
                    data: self.ring.encode(&eps),
                },
            )
            .await?;
            eps
        } else {
            let m: WireElems = mesh.recv_tagged(owner, TAG_INPUT).await?;
            self.decode_from(owner, &m, count)?
        };
        self.finish_input(mesh, &domain, masks, eps).await
    }

    /// The echo round of [`Engine::input`] and the local share computation.
    async fn finish_input<M: Mesh>(
        &mut self,
        mesh: &mut M,
        domain: &str,
        masks: Vec<crate::prep::InputMask<R::Elem>>,
        eps: Vec<R::Elem>,
    ) -> Result<Vec<Share<R::Elem>>> {
        let d = digest(domain, &self.ring.encode(&eps));
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

    /// The MAC check over every value opened since the last check (see the module docs).
    /// On failure the mesh is aborted and the error names the failed check.
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
        let dig = digest(&d_open, &self.ring.encode(&self.opened));
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

        #[cfg(test)]
        if let Some(e) = self.cheat.mac_err.take() {
            self.macs[0] = self.ring.add(&self.macs[0], &self.ring.embed_u64(e));
        }
        let r = self.ring.clone();
        let (mut y, mut mm) = (r.zero(), r.zero());
        for (x, m) in self.opened.iter().zip(&self.macs) {
            let chi = r.random_key(&mut xof);
            y = r.add(&y, &r.mul(&chi, x));
            mm = r.add(&mm, &r.mul(&chi, m));
        }
        let sigma = r.sub(&mm, &r.mul(&self.key, &y));
        mm.zeroize();
        #[allow(unused_mut)]
        let mut bytes = r.encode(std::slice::from_ref(&sigma));
        // Rounds C and D: commit to σ_i, then open.
        let (c_sig, o_sig) = commit(&d_sigma, me, &bytes);
        let cs: Vec<Commitment> = mesh.exchange_all_tagged(TAG_CHECK_C, &c_sig).await?;
        #[cfg(test)]
        if std::mem::take(&mut self.cheat.bad_commit_open) {
            bytes[0] ^= 1;
        }
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
        #[cfg(test)]
        if let Some(e) = self.cheat.mac_err.take()
            && !macs.is_empty()
        {
            macs[0] = r.add(&macs[0], &r.embed_u64(e));
        }
        let sigmas: Vec<R::Elem> = opened
            .iter()
            .zip(&macs)
            .map(|(x, m)| r.sub(m, &r.mul(&self.key, x)))
            .collect();
        macs.iter_mut().for_each(Zeroize::zeroize);
        let dig = digest(
            &format!("coterie-spdz/single-check/{id}/opened"),
            &r.encode(&opened),
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
        #[allow(unused_mut)]
        let mut bytes = std::mem::take(&mut p.bytes);
        #[cfg(test)]
        if std::mem::take(&mut self.cheat.bad_commit_open)
            && let Some(b) = bytes.first_mut()
        {
            *b ^= 1;
        }
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

    async fn fail<M: Mesh>(&mut self, mesh: &mut M, e: Error) -> Error {
        tracing::warn!(party = self.me, %e, "SPDZ abort");
        self.opened.clear();
        self.macs.clear();
        mesh.abort(&e.to_string()).await;
        e
    }
}

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

impl<E: Zeroize + Clone> Share<E> {
    /// The all-zero share in `ring`.
    pub fn default_in<R: Ring<Elem = E>>(ring: &R) -> Self {
        Share {
            v: ring.zero(),
            m: ring.zero(),
        }
    }
}

/// Serde for `Vec<u8>` fields as one byte string (postcard: length + raw bytes), instead of a
/// sequence of separately encoded `u8`s. Decoding is bounded by the frame size of the mesh.
pub(crate) mod serde_byte_vec {
    use serde::de::{self, Visitor};
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(v)
    }

    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Vec<u8>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a byte string")
        }
        fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
            Ok(v.to_vec())
        }
        fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
            Ok(v)
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        d.deserialize_byte_buf(V)
    }
}
