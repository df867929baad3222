//! [`HssPrep`]: Beaver triples from HSS as a `coterie-spdz` [`Producer`] over `Z_(2^k)`.

use coterie_math::prg::{Csprng, Xof};
use coterie_net::commit::commit_open_all;
use coterie_net::{Mesh, PartyId};
use coterie_spdz::prep::{Share, Triple, VecPrep};
use coterie_spdz::producer::check_order;
use coterie_spdz::{Authenticator, Engine, Kind, Order, OtPrep, Producer, Ring, Z2k};
use rand::Rng;
use zeroize::Zeroize;

use super::{CorrOptions, FlagPolicy, raw_triples};
use crate::Error;
use crate::protocol::dkg;
use crate::scheme::{EvalKey, Params, PublicKey};

/// Largest number of triples made in one HSS batch (each costs `6·(k+s)` ciphertexts and OTs).
pub const MAX_HSS_TRIPLE_BATCH: usize = 64;

fn spdz_err(e: Error) -> coterie_spdz::Error {
    coterie_spdz::Error::Producer(format!("HSS: {e}"))
}

/// Two-party Beaver-triple producer for `coterie-spdz` over [`Z2k`] from HSS (spec §6.5).
///
/// Per triple, over the share ring `Z_(2^(k+s))` (`k + s ≤ 128`; e.g. `k = s = 64` gives triples
/// over `Z_(2^128)`):
///
/// 1. **HSS**: raw additive shares of `(a, b, c = a·b)` and a sacrifice twin `(â, ĉ = â·b)` with
///    the same `b` — four grade-school bilinear forms (the cross terms `a_1·b_0`, `b_1·a_0`,
///    `â_1·b_0`, `b_1·â_0`), `3(k+s)` ciphertexts and `3(k+s)` OTs, `2(k+s)(k+s+1)` terminal
///    multiplications. Flagged conversions are exchanged ([`FlagPolicy::Exchange`]) and triples
///    with a conversion both parties flagged are dropped; more are made until the order is filled.
/// 2. **Authentication**: `a, b, c, â, ĉ` by COPE under the MAC key of an [`OtPrep`] set up once
///    and used only for that ([`Authenticator::authenticate`], with SPDZ_2k's authentication
///    check).
/// 3. **Sacrifice** (SPDZ_2k's, as [`OtPrep`] does for its own triples): public random
///    `t ∈ Z_(2^s)` per triple from a coin toss after step 2, open `ρ = t·a − â` (uniform: `â`
///    masks it), open `z = t·c − ĉ − ρ·b` and require `z = 0`, then the MAC check on everything
///    opened. Aborts as `SacrificeFailed` or the MAC check's error.
///
/// # Security
///
/// * The HSS step is **semi-honest** (the paper's setting): the parties are trusted to encrypt
///   bits, to use their sampled bits in `Pi_L2S`, and to report the shares they computed. Its
///   privacy rests on DDH/circular security of the group (the real group only; the toy groups
///   are insecure) and the statistical masks of `Pi_L2S`; the flag exchange leaks which of each
///   party's conversions flagged (see the module docs).
/// * The authentication and sacrifice make the output **correct or abort** against an actively
///   malicious party: a party that changes its shares of `c` or `ĉ` (or makes the HSS products
///   wrong in any way that adds errors to them) passes the sacrifice with probability about
///   `2^−s` (SPDZ_2k's analysis over `Z_(2^(k+s))`, correctness mod `2^k`), and shares that do
///   not match their MACs fail the MAC check.
/// * What they do **not** give: privacy against a malicious party in the HSS step. Its errors
///   may depend on the honest party's bits, so whether the sacrifice aborts can leak about
///   them (a selective failure); only material from batches that pass is output, and an abort
///   ends the session. [`OtPrep`] additionally defends against this with its combine step;
///   `HssPrep` does not. Treat it as semi-honest-private, malicious-correct-with-abort.
///
/// Supports [`Kind::Triples`] only (other kinds are refused; an [`OtPrep`] with the same MAC
/// key, [`HssPrep::authenticator`], can make them).
///
/// # Example
///
/// ```
/// use coterie_hss::apps::correlated::{CorrOptions, HssPrep};
/// use coterie_hss::scheme::Params;
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
/// use coterie_spdz::{Kind, Order, Producer, Z2k};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let ring = Z2k::new(8, 8).unwrap(); // small ring for the example
/// let params = Params::insecure_toy(4, 16, 12); // insecure toy group
/// let mut tasks = Vec::new();
/// for mut mesh in InMemoryMesh::group(2, MeshOptions::default()) {
///     tasks.push(tokio::spawn(async move {
///         let mut p = HssPrep::setup(&mut mesh, ring, &params, CorrOptions::default()).await?;
///         assert!(!p.supports(Kind::Bits));
///         let prep = Producer::produce(&mut p, &mut mesh, &Order::new().with(Kind::Triples, 2))
///             .await?;
///         mesh.close().await?;
///         Ok::<_, coterie_spdz::Error>(prep)
///     }));
/// }
/// let mut preps = Vec::new();
/// for t in tasks {
///     preps.push(t.await.unwrap().unwrap());
/// }
/// coterie_spdz::verify::verify_material(&preps).unwrap();
/// # });
/// ```
pub struct HssPrep {
    ring: Z2k,
    me: PartyId,
    pk: PublicKey,
    ek: EvalKey,
    auth: OtPrep,
    opts: CorrOptions,
    rng: Csprng,
    batch: u64,
    dropped: u64,
}

impl HssPrep {
    /// Sets up both halves between the two parties of `mesh`: HSS keys by [`dkg`] with `params`
    /// and an [`OtPrep`] over `ring` for the MAC key and the authentication. `opts.d` overrides
    /// the pattern length; the flag policy is always [`FlagPolicy::Exchange`].
    pub async fn setup<M: Mesh>(
        mesh: &mut M,
        ring: Z2k,
        params: &Params,
        opts: CorrOptions,
    ) -> coterie_spdz::Result<Self> {
        let mut rng = Csprng::new();
        let (pk, ek) = dkg(mesh, params, &mut rng).await.map_err(spdz_err)?;
        let auth = OtPrep::setup(mesh, ring).await?;
        Self::from_parts(ring, pk, ek, auth, opts)
    }

    /// From existing HSS keys of this party and an [`OtPrep`] over `ring` of the same mesh.
    pub fn from_parts(
        ring: Z2k,
        pk: PublicKey,
        ek: EvalKey,
        auth: OtPrep,
        opts: CorrOptions,
    ) -> coterie_spdz::Result<Self> {
        if ek.party > 1 || Producer::<Z2k>::n(&auth) != 2 || *Producer::ring(&auth) != ring {
            return Err(coterie_spdz::Error::Invalid(
                "HssPrep needs two parties and an OtPrep over the same ring".into(),
            ));
        }
        let me = Producer::<Z2k>::party(&auth);
        if usize::from(ek.party) != me {
            return Err(coterie_spdz::Error::Invalid(
                "HSS key of another party".into(),
            ));
        }
        Ok(Self {
            ring,
            me,
            pk,
            ek,
            auth,
            opts: CorrOptions {
                d: opts.d,
                policy: FlagPolicy::Exchange,
            },
            rng: Csprng::new(),
            batch: 0,
            dropped: 0,
        })
    }

    /// The [`OtPrep`] holding the MAC key (to make other kinds of material under the same key).
    pub fn authenticator(&mut self) -> &mut OtPrep {
        &mut self.auth
    }

    /// Triples dropped so far because both parties flagged them.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Makes `count` authenticated, sacrificed triples (see the type docs).
    pub async fn triples<M: Mesh>(
        &mut self,
        mesh: &mut M,
        count: usize,
    ) -> coterie_spdz::Result<Vec<Triple<u128>>> {
        let mut out = Vec::with_capacity(count);
        while out.len() < count {
            let want = (count - out.len()).min(MAX_HSS_TRIPLE_BATCH);
            out.extend(self.batch(mesh, want).await?);
        }
        Ok(out)
    }

    /// One HSS batch of `t` triples, then authentication and sacrifice of those kept.
    async fn batch<M: Mesh>(
        &mut self,
        mesh: &mut M,
        t: usize,
    ) -> coterie_spdz::Result<Vec<Triple<u128>>> {
        let r = self.ring;
        let bits = r.k() + r.s();
        let raw = raw_triples(
            mesh,
            &self.pk,
            &self.ek,
            bits,
            t,
            true,
            &self.opts,
            &mut self.rng,
        )
        .await
        .map_err(spdz_err)?;
        let keep: Vec<usize> = (0..t).filter(|&i| !raw.discarded[i]).collect();
        self.dropped += (t - keep.len()) as u64;
        let kt = keep.len();
        if kt == 0 {
            return Ok(vec![]);
        }
        let mut all: Vec<u128> = [&raw.a, &raw.b, &raw.c, &raw.ah, &raw.ch]
            .iter()
            .flat_map(|v| keep.iter().map(|&i| v[i]))
            .collect();
        let mut shares = Authenticator::authenticate(&mut self.auth, mesh, &all).await?;
        all.zeroize();
        if shares.len() != 5 * kt {
            return Err(coterie_spdz::Error::Invalid(
                "authentication returned the wrong count".into(),
            ));
        }
        // Sacrifice: public t_i ∈ Z_2^s tossed after the shares are authenticated.
        let mut sd = [0u8; 32];
        self.rng.fill_bytes(&mut sd);
        let domain = format!("coterie-hss/hss-prep/sacrifice/{}", self.batch);
        self.batch += 1;
        let coins: Vec<[u8; 32]> = commit_open_all(mesh, &domain, &sd).await?;
        let mut h = blake3::Hasher::new_derive_key("coterie-hss 2026 hss-prep sacrifice v1");
        h.update(domain.as_bytes());
        for c in &coins {
            h.update(c);
        }
        let seed = *h.finalize().as_bytes();
        let mut xof = Xof::new(&seed, b"coterie-hss/sacrifice-t", 0);
        let ts: Vec<u128> = (0..kt).map(|_| r.random_key(&mut xof)).collect();
        let alpha = Authenticator::mac_key_share(&self.auth);
        let mut e = Engine::new(VecPrep::new(r, self.me, 2, alpha))
            .with_check_name("hss-triple-sacrifice-mac-check");
        let sh = |k: usize, i: usize| &shares[k * kt + i];
        let rho: Vec<Share<u128>> = (0..kt)
            .map(|i| e.sub(&e.mul_const(sh(0, i), &ts[i]), sh(3, i)))
            .collect();
        let rho_open = e.open_unmasked(mesh, &rho).await?;
        let z: Vec<Share<u128>> = (0..kt)
            .map(|i| {
                let x = e.sub(&e.mul_const(sh(2, i), &ts[i]), sh(4, i));
                e.sub(&x, &e.mul_const(sh(1, i), &rho_open[i]))
            })
            .collect();
        let z_open = e.open_unmasked(mesh, &z).await?;
        if z_open.iter().any(|v| *v != 0) {
            let err = coterie_spdz::Error::SacrificeFailed {
                detected_by: self.me,
            };
            mesh.abort(&err.to_string()).await;
            return Err(err);
        }
        e.check(mesh).await?;
        let out = (0..kt)
            .map(|i| Triple {
                a: sh(0, i).clone(),
                b: sh(1, i).clone(),
                c: sh(2, i).clone(),
            })
            .collect();
        shares.zeroize();
        Ok(out)
    }
}

impl Producer<Z2k> for HssPrep {
    fn ring(&self) -> &Z2k {
        &self.ring
    }
    fn party(&self) -> PartyId {
        self.me
    }
    fn n(&self) -> usize {
        2
    }
    fn mac_key_share(&self) -> u128 {
        Authenticator::mac_key_share(&self.auth)
    }
    fn supports(&self, kind: Kind) -> bool {
        kind == Kind::Triples
    }
    async fn produce<M: Mesh>(
        &mut self,
        mesh: &mut M,
        order: &Order,
    ) -> coterie_spdz::Result<VecPrep<Z2k>> {
        if mesh.id() != self.me || mesh.n() != 2 {
            return Err(coterie_spdz::Error::Invalid("mesh of another party".into()));
        }
        check_order(self, order)?;
        let mut p = VecPrep::new(
            self.ring,
            self.me,
            2,
            Authenticator::mac_key_share(&self.auth),
        );
        let t = self.triples(mesh, order.count(Kind::Triples)).await?;
        p.triples.extend(t);
        Ok(p)
    }
}
