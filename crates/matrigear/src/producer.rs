//! MatriGear as a coterie-spdz [`Producer`] over `F_p` ([`FpBig`]): the engine and the
//! crash-safe store take its material without change.
//!
//! [`MatriGearProducer::setup`] runs the key generation and the MAC-key initialisation over a
//! mesh; [`MatriGearProducer::produce`] then makes scalar triples ([`Kind::Triples`]), random
//! values ([`Kind::Randoms`]) and `d × d` matrix triples ([`Kind::MatrixTriples`] with the
//! parameters' `d`) in whole proofs — `D` triples per ciphertext pair, `T = D/d` matrix triples
//! per batch — and keeps what an order did not take for the next order (in memory only: spare
//! material lost in a crash was never handed out, so nothing is reused).
//!
//! The party's long-term state (evaluation keys, its key share, its MAC key share and `ct_α`)
//! lives in one owner-only file ([`MatriGearProducer::save`] / [`MatriGearProducer::load`]), so
//! a restarted party keeps producing under the MAC key of its store.

use std::collections::VecDeque;
use std::path::Path;

use coterie_base::progress::Progress;
use coterie_math::prg::Csprng;
use coterie_net::{Mesh, PartyId};
use coterie_spdz::producer::check_order;
use coterie_spdz::{BigElem, FpBig, Kind, MatrixTriple, Order, Producer, Share, Triple, VecPrep};
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use crate::keys::{EvalKeys, KeyShare, distributed_keygen, insecure_dealer_keys};
use crate::params::ProtocolParams;
use crate::triple::{self, MacKey};
use crate::{Error, Result};

/// One party's MatriGear producer (see the module docs).
pub struct MatriGearProducer {
    pp: ProtocolParams,
    ring: FpBig,
    party: PartyId,
    keys: EvalKeys,
    key: KeyShare,
    mac: MacKey,
    rng: Csprng,
    progress: Progress,
    spare_triples: VecDeque<Triple<BigElem>>,
    spare_randoms: VecDeque<Share<BigElem>>,
    spare_matrices: VecDeque<MatrixTriple<BigElem>>,
}

#[derive(Serialize, Deserialize)]
struct StateFile {
    params: String,
    parties: u32,
    d: u32,
    party: u32,
    #[serde(with = "coterie_base::bytes")]
    keys: Vec<u8>,
    #[serde(with = "coterie_base::bytes")]
    key_share: Vec<u8>,
    #[serde(with = "coterie_base::bytes")]
    mac: Vec<u8>,
}

impl Drop for StateFile {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.key_share);
        zeroize::Zeroize::zeroize(&mut self.mac);
    }
}

coterie_base::versioned! {
    StateFile => b"MGst" v 1,
}

impl MatriGearProducer {
    /// A producer from keys and a MAC key already made.
    pub fn new(
        pp: ProtocolParams,
        party: PartyId,
        keys: EvalKeys,
        key: KeyShare,
        mac: MacKey,
    ) -> Result<Self> {
        if party >= pp.parties() {
            return Err(Error::Invalid(format!(
                "party {party} of {} parties",
                pp.parties()
            )));
        }
        let ring = FpBig::new(pp.p())?;
        Ok(MatriGearProducer {
            pp,
            ring,
            party,
            keys,
            key,
            mac,
            rng: Csprng::new(),
            progress: Progress::none(),
            spare_triples: VecDeque::new(),
            spare_randoms: VecDeque::new(),
            spare_matrices: VecDeque::new(),
        })
    }

    /// Key generation ([`distributed_keygen`], passively secure) and the MAC key
    /// ([`triple::init_mac_key`], with its Diag proof) over `mesh`.
    pub async fn setup<M: Mesh>(
        mesh: &mut M,
        pp: ProtocolParams,
        progress: &Progress,
    ) -> Result<Self> {
        check_mesh(mesh, &pp)?;
        let mut rng = Csprng::new();
        let (keys, key) = distributed_keygen(mesh, &pp, &mut rng, progress).await?;
        let mac = triple::init_mac_key(mesh, &pp, &keys, &mut rng).await?;
        let mut p = Self::new(pp, mesh.id(), keys, key, mac)?;
        p.progress = progress.clone();
        Ok(p)
    }

    /// **Insecure** setup for tests: the keys from a trusted dealer ([`insecure_dealer_keys`]
    /// with a shared `seed`, which every party runs and keeps its own share of), then the real
    /// MAC-key initialisation over `mesh`.
    pub async fn insecure_setup_with_dealer<M: Mesh>(
        mesh: &mut M,
        pp: ProtocolParams,
        seed: [u8; 32],
    ) -> Result<Self> {
        check_mesh(mesh, &pp)?;
        let mut dealer_rng = Csprng::insecure_from_seed_for_tests(seed);
        let (keys, mut shares) = insecure_dealer_keys(&pp, &mut dealer_rng)?;
        let key = shares.swap_remove(mesh.id());
        drop(shares);
        let mut rng = Csprng::new();
        let mac = triple::init_mac_key(mesh, &pp, &keys, &mut rng).await?;
        Self::new(pp, mesh.id(), keys, key, mac)
    }

    /// The protocol parameters.
    pub fn params(&self) -> &ProtocolParams {
        &self.pp
    }

    /// The evaluation keys.
    pub fn keys(&self) -> &EvalKeys {
        &self.keys
    }

    /// Writes this party's state (keys, key share, MAC key) to `path`, owner-only, atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        let state = StateFile {
            params: self.pp.context().params().name().to_string(),
            parties: self.pp.parties() as u32,
            d: self.pp.d() as u32,
            party: self.party as u32,
            keys: self.keys.to_bytes(),
            key_share: self.key.to_bytes(),
            mac: self.mac.to_bytes(&self.pp)?,
        };
        let bytes = Zeroizing::new(coterie_base::envelope::to_envelope(&state)?);
        coterie_base::fsio::write_atomic_private(path, &bytes)?;
        Ok(())
    }

    /// Reads a state written by [`MatriGearProducer::save`] for `pp` and `party`; a state of
    /// other parameters, party count, `d` or party is refused.
    pub fn load(path: &Path, pp: ProtocolParams, party: PartyId) -> Result<Self> {
        let ctx = pp.context();
        let element = ctx.degree() * (pp.log_q().ceil() as usize).div_ceil(8) + 64;
        let bound = (2 * ctx.max_level() + 8) * (pp.d() + 4) * element + (1 << 20);
        let bytes = Zeroizing::new(coterie_base::fsio::read_bounded(path, bound as u64)?);
        let s: StateFile = coterie_base::envelope::from_envelope(&bytes, bound)?;
        if s.params != ctx.params().name()
            || s.parties as usize != pp.parties()
            || s.d as usize != pp.d()
            || s.party as usize != party
        {
            return Err(Error::Protocol(format!(
                "state file {} is for {} with {} parties, d = {}, party {}; this run is {} with \
                 {} parties, d = {}, party {party}",
                path.display(),
                s.params,
                s.parties,
                s.d,
                s.party,
                ctx.params().name(),
                pp.parties(),
                pp.d()
            )));
        }
        let keys = EvalKeys::from_bytes(ctx, &s.keys)?;
        let key = KeyShare::from_bytes(ctx, &s.key_share)?;
        let mac = MacKey::from_bytes(&pp, &s.mac)?;
        Self::new(pp, party, keys, key, mac)
    }

    async fn fill_triples<M: Mesh>(&mut self, mesh: &mut M, count: usize) -> Result<()> {
        let per = self.pp.slots();
        let task = self.progress.task(
            format!("party {}: MatriGear triples", self.party),
            count as u64,
        );
        while self.spare_triples.len() < count {
            let need = count - self.spare_triples.len();
            let k = need.div_ceil(per).min(self.pp.max_scalar_pairs());
            let t = triple::scalar_triples(
                mesh,
                &self.pp,
                &self.keys,
                &self.key,
                &self.mac,
                k,
                &mut self.rng,
            )
            .await?;
            task.inc(t.len().min(need) as u64);
            self.spare_triples.extend(t);
        }
        Ok(())
    }

    async fn fill_randoms<M: Mesh>(&mut self, mesh: &mut M, count: usize) -> Result<()> {
        let per = self.pp.slots();
        while self.spare_randoms.len() < count {
            let need = count - self.spare_randoms.len();
            let k = need.div_ceil(per).min(2 * self.pp.max_scalar_pairs());
            let r = triple::random_values(
                mesh,
                &self.pp,
                &self.keys,
                &self.key,
                &self.mac,
                k,
                &mut self.rng,
            )
            .await?;
            self.spare_randoms.extend(r);
        }
        Ok(())
    }

    async fn fill_matrices<M: Mesh>(&mut self, mesh: &mut M, count: usize) -> Result<()> {
        let task = self.progress.task(
            format!("party {}: MatriGear {0}x{0} matrix triples", self.pp.d()),
            count as u64,
        );
        while self.spare_matrices.len() < count {
            let need = count - self.spare_matrices.len();
            let m = triple::matrix_triples(
                mesh,
                &self.pp,
                &self.keys,
                &self.key,
                &self.mac,
                &mut self.rng,
            )
            .await?;
            task.inc(m.len().min(need) as u64);
            self.spare_matrices.extend(m);
        }
        Ok(())
    }
}

fn check_mesh<M: Mesh>(mesh: &M, pp: &ProtocolParams) -> Result<()> {
    if mesh.n() != pp.parties() {
        return Err(Error::Invalid(format!(
            "a mesh of {} parties for parameters of {}",
            mesh.n(),
            pp.parties()
        )));
    }
    Ok(())
}

impl Producer<FpBig> for MatriGearProducer {
    fn ring(&self) -> &FpBig {
        &self.ring
    }
    fn party(&self) -> PartyId {
        self.party
    }
    fn n(&self) -> usize {
        self.pp.parties()
    }
    fn mac_key_share(&self) -> BigElem {
        BigElem(self.mac.share().clone())
    }
    fn supports(&self, kind: Kind) -> bool {
        match kind {
            Kind::Triples | Kind::Randoms => true,
            Kind::MatrixTriples(d) => d == self.pp.d(),
            Kind::Bits | Kind::InputMasks(_) => false,
        }
    }
    fn set_progress(&mut self, progress: Progress) {
        self.progress = progress;
    }
    async fn produce<M: Mesh>(
        &mut self,
        mesh: &mut M,
        order: &Order,
    ) -> coterie_spdz::Result<VecPrep<FpBig>> {
        check_order(self, order)?;
        let to_spdz = |e: Error| match e {
            Error::Spdz(e) => e,
            Error::Net(e) => coterie_spdz::Error::Net(e),
            other => coterie_spdz::Error::Producer(other.to_string()),
        };
        let mut out = VecPrep::new(
            self.ring.clone(),
            self.party,
            self.pp.parties(),
            self.mac_key_share(),
        );
        let (t, r) = (order.count(Kind::Triples), order.count(Kind::Randoms));
        let m = order.count(Kind::MatrixTriples(self.pp.d()));
        if t > 0 {
            self.fill_triples(mesh, t).await.map_err(to_spdz)?;
            out.triples.extend(self.spare_triples.drain(..t));
        }
        if r > 0 {
            self.fill_randoms(mesh, r).await.map_err(to_spdz)?;
            out.randoms.extend(self.spare_randoms.drain(..r));
        }
        if m > 0 {
            self.fill_matrices(mesh, m).await.map_err(to_spdz)?;
            out.matrix_triples
                .insert(self.pp.d(), self.spare_matrices.drain(..m).collect());
        }
        Ok(out)
    }
}
