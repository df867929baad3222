//! The flows the command line runs as `coterie party … matrigear-prep` and
//! `coterie party … matrigear-product`, one party each, over any `Mesh`.
//!
//! A party directory holds `matrigear.state` (owner-only: evaluation keys, this party's key
//! share, its MAC key share and `ct_α`) and `store/` (coterie-spdz's crash-safe `F_p` store).
//! The first `prep` runs the key generation and the MAC key and writes the state; later runs load
//! it and append to the same store under the same MAC key. Every party must be in the same
//! situation — all with a state of the same keys, or none — which the parties check before
//! anything else (a crash in the middle of key generation leaves some parties without a state:
//! remove the directories and start again; the store holds nothing yet then).

use std::path::Path;
use std::time::Instant;

use coterie_base::progress::Progress;
use coterie_bfv::params::MatriGearSet;
use coterie_math::bigint::BigInt;
use coterie_net::Mesh;
use coterie_spdz::producer::produce_into_store;
use coterie_spdz::{BigElem, Engine, FpBig, Kind, Order, PrepStore, Preprocessing, Producer};

use crate::params::ProtocolParams;
use crate::producer::MatriGearProducer;
use crate::{Error, Result};

/// The state file of a party directory.
pub const STATE_FILE: &str = "matrigear.state";
/// The store directory of a party directory.
pub const STORE_DIR: &str = "store";

const TAG_STATE: u32 = 0x3A7E_0401;

/// Which parameters a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamChoice {
    /// Table 2's Params I or II at `log p` (118- and 128-bit).
    MatriGear {
        /// The set.
        set: MatriGearSet,
        /// `log p`, 128 … 4096.
        log_p: u32,
    },
    /// **Insecure** Toy-B (tests and quick demos only).
    InsecureToyB,
}

impl ParamChoice {
    /// The protocol parameters for `parties` parties and `d × d` matrices.
    pub fn params(&self, parties: usize, d: usize) -> Result<ProtocolParams> {
        match *self {
            ParamChoice::MatriGear { set, log_p } => {
                ProtocolParams::matrigear(set, log_p, parties, d)
            }
            ParamChoice::InsecureToyB => ProtocolParams::insecure_toy_b(parties, d),
        }
    }
}

/// What `prep` makes.
#[derive(Clone, Copy, Debug)]
pub struct PrepArgs {
    /// Parameters.
    pub params: ParamChoice,
    /// Matrix dimension `d` (divides `D`).
    pub d: usize,
    /// Scalar triples.
    pub triples: usize,
    /// Random authenticated values.
    pub randoms: usize,
    /// `d × d` matrix triples.
    pub matrix_triples: usize,
}

/// What one party did in `prep`.
#[derive(Clone, Debug)]
pub struct PrepReport {
    /// Whether keys and MAC key were made in this run (false: loaded from the state).
    pub setup: bool,
    /// Seconds of key generation and MAC key (0 when loaded).
    pub setup_secs: f64,
    /// Bytes this party sent during key generation and MAC key.
    pub setup_bytes: u64,
    /// Seconds of production.
    pub prep_secs: f64,
    /// Bytes this party sent during production.
    pub prep_bytes: u64,
    /// Items now available in the store: triples, randoms, matrix triples.
    pub available: (u64, u64, u64),
}

/// `coterie party … matrigear-prep`: keys and MAC key on the first run, then the order into
/// `dir/store` (see the module docs), with progress.
pub async fn prep<M: Mesh>(
    mesh: &mut M,
    dir: &Path,
    args: &PrepArgs,
    progress: &Progress,
) -> Result<PrepReport> {
    let (me, n) = (mesh.id(), mesh.n());
    let pp = args.params.params(n, args.d)?;
    std::fs::create_dir_all(dir).map_err(|e| Error::Protocol(format!("{}: {e}", dir.display())))?;
    let state = dir.join(STATE_FILE);
    let loaded = if state.exists() {
        Some(MatriGearProducer::load(&state, pp.clone(), me)?)
    } else {
        None
    };
    // Every party in the same situation, with the same keys.
    let mine: Option<[u8; 32]> = loaded
        .as_ref()
        .map(|p| *blake3::hash(&p.keys().to_bytes()).as_bytes());
    let all: Vec<Option<[u8; 32]>> = mesh.exchange_all_tagged(TAG_STATE, &mine).await?;
    if all.iter().any(|s| *s != mine) {
        let have: Vec<usize> = (0..n).filter(|&j| all[j].is_some()).collect();
        let e = Error::Protocol(format!(
            "the parties' states differ (parties with a {STATE_FILE}: {have:?}; the others have \
             none or other keys): a key generation was interrupted; remove every party's \
             directory and start again"
        ));
        mesh.abort(&e.to_string()).await;
        return Err(e);
    }
    let t0 = Instant::now();
    let b0 = mesh.stats().total_sent();
    let (mut producer, setup) = match loaded {
        Some(p) => (p, false),
        None => {
            let p = MatriGearProducer::setup(mesh, pp.clone(), progress).await?;
            p.save(&state)?;
            (p, true)
        }
    };
    let setup_secs = if setup {
        t0.elapsed().as_secs_f64()
    } else {
        0.0
    };
    let setup_bytes = mesh.stats().total_sent() - b0;
    producer.set_progress(progress.clone());
    let store_dir = dir.join(STORE_DIR);
    let ring = producer.ring().clone();
    let store = if store_dir.exists() {
        let s = PrepStore::open(&store_dir, ring, me, n)?;
        if s.mac_key_share() != producer.mac_key_share() {
            return Err(Error::Protocol(format!(
                "{} holds material under another MAC key than {}",
                store_dir.display(),
                state.display()
            )));
        }
        s
    } else {
        PrepStore::create(&store_dir, ring, me, n, producer.mac_key_share())?
    };
    let order = Order::new()
        .with(Kind::Triples, args.triples)
        .with(Kind::Randoms, args.randoms)
        .with(Kind::MatrixTriples(pp.d()), args.matrix_triples);
    let t1 = Instant::now();
    let b1 = mesh.stats().total_sent();
    if !order.is_empty() {
        // One store append per proof-sized chunk: up to 32 ciphertext pairs of D triples each
        // (a large proof amortizes its V commitments; 32 bounds the memory), at least a batch.
        let chunk = (pp.slots() * pp.max_scalar_pairs().min(32)).max(pp.batch());
        produce_into_store(&mut producer, mesh, &store, &order, chunk).await?;
    }
    Ok(PrepReport {
        setup,
        setup_secs,
        setup_bytes,
        prep_secs: t1.elapsed().as_secs_f64(),
        prep_bytes: mesh.stats().total_sent() - b1,
        available: (
            store.available(Kind::Triples)?,
            store.available(Kind::Randoms)?,
            store.available(Kind::MatrixTriples(pp.d()))?,
        ),
    })
}

/// The demo's public `d × d` input matrices (`A` from party 0, `B` from party 1; derived from
/// a fixed demo seed so that every party can check the product — a real application's inputs
/// stay with their owners).
pub fn demo_inputs(d: usize, p: &BigInt) -> (Vec<BigInt>, Vec<BigInt>) {
    let mut xof =
        coterie_math::prg::Xof::new(&[0x11; 32], b"coterie-matrigear demo inputs", d as u64);
    let mut draw = || {
        (0..d * d)
            .map(|_| coterie_math::bigint::random_below(&mut xof, p).expect("p > 0"))
            .collect::<Vec<_>>()
    };
    let a = draw();
    let b = draw();
    (a, b)
}

/// `A·B mod p` for row-major `d × d` matrices.
pub fn plain_matmul(d: usize, a: &[BigInt], b: &[BigInt], p: &BigInt) -> Vec<BigInt> {
    let mut c = Vec::with_capacity(d * d);
    for i in 0..d {
        for j in 0..d {
            let mut acc = BigInt::new();
            for k in 0..d {
                acc += BigInt::from(&a[i * d + k] * &b[k * d + j]);
            }
            c.push(acc % p);
        }
    }
    c
}

/// `coterie party … matrigear-product`: party 0 inputs `A`, party 1 inputs `B` (the demo
/// inputs), authenticated with random values from the store; their product by one matrix triple
/// of the store ([`coterie_spdz::Engine::matmul`]), opened, MAC-checked and compared with the
/// plaintext product by every party. Returns the product.
pub async fn product<M: Mesh>(
    mesh: &mut M,
    dir: &Path,
    params: ParamChoice,
    d: usize,
) -> Result<Vec<BigInt>> {
    let (me, n) = (mesh.id(), mesh.n());
    let pp = params.params(n, d)?;
    let p = pp.p();
    let ring = FpBig::new(p.clone())?;
    let store = PrepStore::open(&dir.join(STORE_DIR), ring, me, n)?;
    let mut e = Engine::new(store);
    let (a, b) = demo_inputs(d, &p);
    let zero = vec![BigInt::new(); d * d];
    let mut plain: Vec<BigElem> = Vec::with_capacity(2 * d * d);
    plain.extend(
        (if me == 0 { &a } else { &zero })
            .iter()
            .cloned()
            .map(BigElem),
    );
    plain.extend(
        (if me == 1 { &b } else { &zero })
            .iter()
            .cloned()
            .map(BigElem),
    );
    let xy = e.authenticate_shares(mesh, &plain).await?;
    let z = e.matmul(mesh, d, &xy[..d * d], &xy[d * d..]).await?;
    let out: Vec<BigInt> = e
        .open_checked(mesh, &z)
        .await?
        .into_iter()
        .map(|x| x.0.clone())
        .collect();
    let want = plain_matmul(d, &a, &b, &p);
    if out != want {
        return Err(Error::Protocol(format!(
            "party {me}: the opened product differs from A·B mod p"
        )));
    }
    Ok(out)
}
