//! The decryption service run by `coterie party --config F --id I threshold`: every node keeps
//! its pool of preprocessed gate bundles (an on-disk [`GateStore`]) topped up in the background
//! from the SPDZ_2k material in its store, and decrypts the ciphertexts clients send, batching
//! the requests that arrive together into one shared run of the pipelined 5-round Π_Decrypt.
//!
//! **Coordination.** Node 0 is the coordinator: it receives client requests, validates every
//! ciphertext (a malformed one is answered with an error at once and never reaches the other
//! nodes or spends a gate), and before each step sends every other node one [`Control`]
//! message: `Decrypt` (a batch of ciphertexts), `Prep` (make more gate bundles), `Idle` (a
//! heartbeat while there is nothing to do), or `Stop`. All nodes then run the step together on
//! the same mesh. The other nodes validate the batch again and abort on a malformed
//! ciphertext. The batch's hash is the session id of the decryption, which is bound into every
//! commitment of the run, so a coordinator that sends different batches to different nodes
//! only causes an abort.
//!
//! **Lanes.** With lanes ([`Node::coordinate_in_lanes`], `coterie party … threshold --lanes L`)
//! up to `L` batches are decrypted at once, each on a mesh of its own between the nodes ("lane"),
//! beside the control mesh, which keeps carrying the control messages and the gate
//! preprocessing. Every node takes a `Decrypt` step's gate bundles and random values from its
//! stores in step order, before the run, and runs the `d`-th `Decrypt` step on lane `d mod L`
//! after that lane's previous run: all nodes take the same items for a step and pair the same
//! steps on the same lane. Node 0 meanwhile gathers the next batch (up to `max_batch`: a stream
//! longer than that is cut into batches that overlap) and tops up the pool only while no lane
//! runs, or when the requests waiting need it. A run that fails on a lane ends the node as a
//! failed step does (its lane is aborted unless a peer was lost, and over TLS that abort reaches
//! the control mesh and every other lane at once; the other nodes' runs fail too). Without lanes
//! every step runs on the one mesh, one at a time.
//!
//! **Trust.** The coordinator sees the (public) ciphertexts and returns the (public) results to
//! the client; the decryption's integrity holds among the nodes (every node computes the same
//! MAC-checked result or aborts). So that a client need not trust node 0 to forward the result
//! honestly, every node signs **one** statement of the whole batch's results with its party TLS
//! key at the end of the `Decrypt` step: the root of a Merkle tree with one leaf per request
//! ([`crate::statement`]). The followers send theirs to node 0 (one [`StatementMsg`]-envelope
//! per batch, tag `THst` version 2: the signature, the message stated for each ciphertext, 8
//! bytes each, and the follower's certificate chain); node 0 rebuilds each node's tree from
//! those messages and attaches to each answer every node's message, signature and Merkle path
//! (one path shared by all nodes whose trees agree, [`crate::statement::attest_batch`]). The
//! client accepts a result only when every node's statement verifies and agrees with it, and
//! otherwise names the node at fault. Node 0 forwards what the followers send without judging
//! it (it only logs a disagreement): the client is the one who checks. Cost: one signature per
//! node per batch, whatever its size.
//!
//! **Versions.** The control message is at format version 4 (its encoding is version 3's, but a
//! `Decrypt` step now ends with one batch statement per node instead of one statement per
//! ciphertext; version 3's `Decrypt` was the first to carry the clients' nonces): a node of an
//! older build refuses a newer coordinator's control message (and vice versa) and aborts, naming
//! node 0, before any gate is spent.
//!
//! **Crash safety.** Gate bundles are taken from the store through its durable cursor *before*
//! the run starts, and the SPDZ_2k material through the PrepStore's durable cursors, so after
//! any crash and restart no gate bundle or triple is ever used twice (a run that fails discards
//! what it took). A node that loses a peer (a crash, a kill, a broken link: [`Error::lost_peer`])
//! returns an error naming it without aborting the mesh (the mesh itself tells the other nodes
//! which peer was lost); [`crate::node::run_node_reconnecting`] then reconnects and resumes from
//! the stores on disk. A failed check still aborts the mesh, naming the party.

use std::sync::Arc;
use std::time::Duration;

use coterie_base::envelope;
use coterie_net::Mesh;
use coterie_spdz::{Engine, Kind, PrepStore, Preprocessing, VecPrep, Z2k};
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};

use crate::gates::{GatePool, PackedBundles, prep_bundles};
use crate::keys::SharedKey;
use crate::params::{LtParams, Params};
use crate::pipelined::decrypt_pipelined;
use crate::statement::{Attestation, BatchStatement, Signer, attest_batch, ciphertext_hash};
use crate::store::GateStore;
use crate::{Error, LweCiphertext, Result};

/// Mesh tag of the control messages: byte frames holding a `ControlMsg` envelope (tag `THsc`,
/// format version 4; version 3 ended `Decrypt` with per-ciphertext statements, version 2 had no
/// nonces in `Decrypt`, version 1 carried a `version` byte in the message).
const TAG_CONTROL: u32 = 0x7E00_0001;
/// Mesh tag of a follower's signed statement of a batch: a byte frame holding a
/// [`StatementMsg`] envelope, sent to node 0 at the end of every `Decrypt` step.
pub const TAG_STATEMENTS: u32 = 0x7E00_0002;

/// One step all nodes run together, chosen by the coordinator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Control {
    /// Nothing to do (heartbeat).
    Idle,
    /// Make `count` more gate bundles.
    Prep {
        /// Bundles to make.
        count: u32,
    },
    /// Decrypt these ciphertexts (CTLW-encoded) in one shared run, and sign one statement of
    /// the batch's results ([`crate::statement`]).
    Decrypt {
        /// The batch.
        #[serde(with = "coterie_base::bytes::list")]
        batch: Vec<Vec<u8>>,
        /// The clients' nonce of each ciphertext (as many as `batch`).
        nonces: Vec<[u8; 32]>,
    },
    /// Shut down cleanly.
    Stop,
}

/// The coordinator's message before each step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct ControlMsg {
    seq: u64,
    control: Control,
}

/// A follower's signed statement of one batch, sent to node 0 with [`TAG_STATEMENTS`] (envelope
/// tag `THst`, format version 2; version 1 carried one signature and chain per ciphertext): one
/// signature of the batch's statement tree, the message stated for each ciphertext in batch
/// order, and the follower's certificate chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatementMsg {
    /// The step's sequence number (of its control message).
    pub seq: u64,
    /// The messages and their one signature ([`Signer::sign_batch`]).
    pub statement: BatchStatement,
    /// The follower's party certificate chain (DER, its certificate first).
    #[serde(with = "coterie_base::bytes::list")]
    pub chain: Vec<Vec<u8>>,
}

coterie_base::versioned! {
    ControlMsg => b"THsc" v 4,
    StatementMsg => b"THst" v 2,
}

/// Opens a control message (at most `max_len` bytes of payload). Anything else, another
/// format version included, is the coordinator's fault: the follower aborts.
fn open_control(bytes: &[u8], max_len: usize) -> Result<ControlMsg> {
    envelope::from_envelope(bytes, max_len).map_err(|e| {
        tracing::warn!(error = %e, "control message refused");
        Error::Abort {
            check: "control-message",
            party: 0,
        }
    })
}

/// Settings of a node.
#[derive(Debug, Clone, Copy)]
pub struct NodeConfig {
    /// Gate bundles to keep ready (the coordinator tops up below this).
    pub pool_target: u64,
    /// Bundles made per preprocessing step (a step blocks decryptions while it runs).
    pub prep_chunk: u32,
    /// Largest batch of ciphertexts per decryption run.
    pub max_batch: usize,
    /// Heartbeat interval while idle.
    pub idle: Duration,
    /// While requests keep arriving less than this apart, the coordinator keeps gathering them
    /// into the batch (up to [`NodeConfig::max_batch`] and [`NodeConfig::gather_max`]) instead
    /// of starting a run with whatever had arrived: a client streams a batch of ciphertexts as
    /// one request each, which without gathering ran as the pieces that happened to be there
    /// (1 + 87 + 412 for 500 in one measurement). Zero: no gathering.
    pub gather_gap: Duration,
    /// Longest time one batch is gathered (bounds the wait under a steady trickle of requests,
    /// and for requests a client announced ([`Request::more`]) and did not send: a client that
    /// announces more than it sends delays its batch, and the others gathered with it, by at
    /// most this).
    pub gather_max: Duration,
}

impl Default for NodeConfig {
    fn default() -> Self {
        Self {
            pool_target: 64,
            prep_chunk: 8,
            max_batch: 1024,
            idle: Duration::from_millis(200),
            gather_gap: Duration::from_micros(GATHER_GAP_US),
            gather_max: Duration::from_millis(GATHER_MAX_MS),
        }
    }
}

/// The default [`NodeConfig::gather_gap`] in microseconds (a lone request waits this long more).
pub const GATHER_GAP_US: u64 = 200;
/// The default [`NodeConfig::gather_max`] in milliseconds.
pub const GATHER_MAX_MS: u64 = 20;

/// A client request: one ciphertext, the client's nonce, and where to send its result.
#[derive(Debug)]
pub struct Request {
    /// The ciphertext, CTLW-encoded ([`LweCiphertext::to_bytes`]).
    pub ct: Vec<u8>,
    /// The client's fresh random nonce, bound into every node's statement of the result.
    pub nonce: [u8; 32],
    /// The decrypted message with every node's statement, or an error.
    pub reply: oneshot::Sender<Reply>,
    /// How many requests the client said it sends right after this one (a hint: while it is
    /// above zero the coordinator waits for the next request up to
    /// [`NodeConfig::gather_max`] instead of [`NodeConfig::gather_gap`], so a stream is not
    /// split at a pause of the client's; 0 when unknown).
    pub more: u32,
}

/// The coordinator's answer to a [`Request`]: the attested message, or why it was refused or
/// failed (node 0's word alone, see [`crate::statement`]).
pub type Reply = std::result::Result<Attested, String>;

/// A decrypted message with each node's signed statement of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attested {
    /// The message.
    pub message: u64,
    /// Every node's statement about this request ([`crate::statement::attest_batch`]; node
    /// `i`'s is `None` where node `i` sent none that node 0 could read, and the client then
    /// refuses the result, naming node `i`). Its chains are left out: see `chains`.
    pub attestation: Attestation,
    /// Node `i`'s certificate chain at position `i` (shared by the batch's results), which the
    /// client connection's response writer sends with the first response that needs it
    /// ([`crate::client::serve_clients`]); `None` where node 0 has none.
    pub chains: Vec<Option<Arc<Vec<Vec<u8>>>>>,
}

impl Attested {
    /// Node 0's answers to a batch: `messages[j]` (what node 0 decrypted) for the request sent
    /// with `nonces[j]` for the ciphertext with hash `ct_hashes[j]`, each with every node's
    /// statement ([`attest_batch`] of `statements`, node `i`'s at position `i`) and the nodes'
    /// certificate `chains`.
    ///
    /// ```no_run
    /// # fn f(signers: &[coterie_threshold::statement::Signer]) -> coterie_threshold::Result<()> {
    /// use std::sync::Arc;
    /// use coterie_threshold::service::Attested;
    /// use coterie_threshold::statement::ciphertext_hash;
    /// let (nonces, hashes, messages) = ([[1; 32]], [ciphertext_hash(b"ct")], [1]);
    /// let statements: Vec<_> = signers
    ///     .iter()
    ///     .map(|s| s.sign_batch(&nonces, &hashes, &messages).ok())
    ///     .collect();
    /// let chains = signers.iter().map(|s| Some(Arc::new(s.chain().to_vec()))).collect();
    /// let answers = Attested::for_batch(&messages, &nonces, &hashes, &statements, chains)?;
    /// assert_eq!(answers[0].message, 1);
    /// # Ok(()) }
    /// ```
    pub fn for_batch(
        messages: &[u64],
        nonces: &[[u8; 32]],
        ct_hashes: &[[u8; 32]],
        statements: &[Option<BatchStatement>],
        chains: Vec<Option<Arc<Vec<Vec<u8>>>>>,
    ) -> Result<Vec<Attested>> {
        if messages.len() != nonces.len() {
            return Err(Error::Invariant(format!(
                "{} messages for {} requests",
                messages.len(),
                nonces.len()
            )));
        }
        Ok(messages
            .iter()
            .zip(attest_batch(nonces, ct_hashes, statements)?)
            .map(|(&message, attestation)| Attested {
                message,
                attestation,
                chains: chains.clone(),
            })
            .collect())
    }
}

/// What a node reports as it works (for logs and the terminal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Gate bundles were made; `available` are ready now.
    Prepared {
        /// Bundles made in this step.
        made: u32,
        /// Bundles ready.
        available: u64,
    },
    /// A batch was decrypted.
    Decrypted {
        /// Ciphertexts in the batch.
        batch: usize,
        /// Bundles ready afterwards.
        available: u64,
        /// Wall time of the run, microseconds.
        micros: u64,
    },
    /// The SPDZ_2k store cannot make another preprocessing step (top-up paused).
    MaterialLow {
        /// Triples left.
        triples: u64,
        /// Random bits left.
        bits: u64,
    },
    /// SPDZ_2k material left in this node's store: reported when the service loop starts and
    /// after every preprocessing or decryption step (for metrics; not worth a log line).
    Material {
        /// Triples left.
        triples: u64,
        /// Random bits left.
        bits: u64,
        /// Random authenticated values left.
        randoms: u64,
    },
    /// The coordinator answered requests with an error instead of a result.
    Refused {
        /// Why.
        reason: Refusal,
        /// Requests refused for this reason at once.
        count: usize,
    },
    /// A step took the gate bundles with ids `first..end` from the gate store (durably, before
    /// using them; reported whether the step then succeeded or failed). Over a node's whole
    /// life, restarts and reconnections included, these ranges never overlap.
    GatesTaken {
        /// First bundle id taken.
        first: u64,
        /// One past the last bundle id taken.
        end: u64,
    },
}

/// Why the coordinator answered a request with an error ([`Event::Refused`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// The ciphertext did not decode or does not fit the parameters (refused before anything
    /// is spent).
    Malformed,
    /// No random authenticated values left in the SPDZ_2k store.
    NoRandoms,
    /// No gate bundles left and no material to make more.
    NoGates,
    /// The decryption run failed (the node aborts, or reconnects when a peer was lost).
    Aborted,
    /// The service is waiting for a lost node to reconnect
    /// ([`crate::node::run_node_reconnecting`]).
    Waiting,
}

impl Refusal {
    /// A short name (a metric label value): `malformed`, `no_randoms`, `no_gates`, `aborted`,
    /// `waiting`.
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::Malformed => "malformed",
            Refusal::NoRandoms => "no_randoms",
            Refusal::NoGates => "no_gates",
            Refusal::Aborted => "aborted",
            Refusal::Waiting => "waiting",
        }
    }
}

/// Mesh tag of [`sync_prep_cursors`] within [`Node::sync_at_start`].
const TAG_PREP_SYNC: u32 = 0x7E00_0010;
/// Mesh tag of the gate-store cursor exchange in [`Node::sync_at_start`] (every start-up
/// exchange has a tag of its own; they were shared with the key state and the control steps).
const TAG_GATE_SYNC: u32 = 0x7E00_0012;

/// Exchanges this node's start-up state `mine` (cursors) with every node under `tag`; aborts
/// (check `start-up state`) when a node sent a state of another length.
async fn exchange_state<M: Mesh>(mesh: &mut M, tag: u32, mine: &[u64]) -> Result<Vec<Vec<u64>>> {
    let all: Vec<Vec<u64>> = mesh
        .exchange_all_tagged(tag, &mine.to_vec())
        .await
        .map_err(coterie_spdz::Error::from)?;
    if all.iter().any(|v| v.len() != mine.len()) {
        let e = Error::Abort {
            check: "start-up state",
            party: 0,
        };
        mesh.abort(&e.to_string()).await;
        return Err(e);
    }
    Ok(all)
}

/// Brings this node's SPDZ_2k store cursors (triples, bits, randoms) to the furthest position
/// any node reached, exchanging them with `tag`: after a crash some nodes may have consumed
/// material (durably, before using it) that the others did not; everyone skips to the furthest
/// position, and the skipped items are discarded, never used. Runs at every start, before the
/// key step too (a first key step cut off half-way would otherwise be retried from misaligned
/// material and fail its MAC check at every retry). Returns one note per kind skipped
/// ("skipped 40 bits").
pub(crate) async fn sync_prep_cursors<M: Mesh>(
    eng: &mut Engine<Z2k, PrepStore<Z2k>>,
    mesh: &mut M,
    tag: u32,
) -> Result<Vec<String>> {
    let kinds = [Kind::Triples, Kind::Bits, Kind::Randoms];
    let mut mine = Vec::with_capacity(kinds.len());
    for k in kinds {
        mine.push(eng.prep_mut().consumed(k).map_err(Error::from)?);
    }
    let all = exchange_state(mesh, tag, &mine).await?;
    let mut notes = Vec::new();
    for (i, k) in kinds.iter().enumerate() {
        let furthest = all.iter().map(|v| v[i]).max().unwrap_or(0);
        let skip = (furthest - mine[i]) as usize;
        if skip > 0 {
            let p = eng.prep_mut();
            match k {
                Kind::Triples => drop(p.triples(skip).map_err(Error::from)?),
                Kind::Bits => drop(p.bits(skip).map_err(Error::from)?),
                _ => drop(p.randoms(skip).map_err(Error::from)?),
            }
            notes.push(format!("skipped {skip} {k}"));
        }
    }
    Ok(notes)
}

/// One decryption node: parameters, its key shares, its engine over its SPDZ_2k store, its
/// gate store, and its statement signer.
pub struct Node {
    params: Params,
    lt: LtParams,
    eng: Engine<Z2k, PrepStore<Z2k>>,
    key: Arc<SharedKey>,
    gates: GateStore,
    cfg: NodeConfig,
    signer: Arc<Signer>,
    seq: u64,
    /// Gate bundles ready as this node's latest take or preprocessing step left them (what a
    /// lane's run, which finishes later, reports as [`Event::Decrypted`]'s `available`).
    ready: u64,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Node {{ params: {:?}, .. }}", self.params)
    }
}

impl Node {
    /// A node on an engine over its SPDZ_2k store, its key shares and its gate store, signing
    /// its statements of each decryption with `signer` (its party key,
    /// [`Signer::from_config`]).
    pub fn new(
        params: Params,
        eng: Engine<Z2k, PrepStore<Z2k>>,
        key: SharedKey,
        gates: GateStore,
        cfg: NodeConfig,
        signer: Signer,
    ) -> Result<Self> {
        params.validate()?;
        key.check(&params)?;
        let lt = params.lt()?;
        // the buffer of a batch of the pool's size, mapped now rather than in the first request
        // (on the project's VMs that first touch took half the CPU of a first batch of 300)
        let typical = usize::try_from(cfg.pool_target).unwrap_or(usize::MAX);
        PackedBundles::prefault(&lt, typical.min(cfg.max_batch))?;
        Ok(Self {
            params,
            lt,
            eng,
            key: Arc::new(key),
            gates,
            cfg,
            signer: Arc::new(signer),
            seq: 0,
            ready: 0,
        })
    }

    /// Gate bundles ready.
    pub fn available(&self) -> Result<u64> {
        self.gates.available()
    }

    /// The gate store's cursor (bundles handed out so far, over all sessions).
    pub fn cursor(&self) -> Result<u64> {
        self.gates.cursor()
    }

    fn material_for(&mut self, count: u64) -> Result<bool> {
        let st = self.eng.prep_mut();
        let t = st.available(Kind::Triples).map_err(Error::from)?;
        let b = st.available(Kind::Bits).map_err(Error::from)?;
        Ok(t >= count * self.lt.mults_per_bundle() as u64
            && b >= count * self.lt.bits_per_bundle() as u64)
    }

    /// [`Event::Material`] for this node's store now.
    fn material(&mut self) -> Event {
        let st = self.eng.prep_mut();
        Event::Material {
            triples: st.available(Kind::Triples).unwrap_or(0),
            bits: st.available(Kind::Bits).unwrap_or(0),
            randoms: st.available(Kind::Randoms).unwrap_or(0),
        }
    }

    fn material_left(&mut self) -> (u64, u64) {
        let st = self.eng.prep_mut();
        (
            st.available(Kind::Triples).unwrap_or(0),
            st.available(Kind::Bits).unwrap_or(0),
        )
    }

    /// Brings every node to the same state at start-up: the same gate-bundle ids and the same
    /// positions in the SPDZ_2k material. After a crash some nodes may have consumed (durably)
    /// material or bundles the others did not; everyone then skips to the furthest position
    /// (the skipped items are discarded, never used), and if the gate stores disagree, every
    /// stored bundle is discarded and all continue from the largest id any node has seen.
    /// Returns a line describing what was done.
    pub async fn sync_at_start<M: Mesh>(&mut self, mesh: &mut M) -> Result<String> {
        let mine = vec![self.gates.cursor()?, self.gates.end()?];
        let all = exchange_state(mesh, TAG_GATE_SYNC, &mine).await?;
        let mut notes = Vec::new();
        if all.iter().any(|v| v[..] != mine[..]) {
            let target = all.iter().map(|v| v[0].max(v[1])).max().unwrap_or(0);
            self.gates.discard_to(target)?;
            notes.push(format!(
                "gate stores disagreed: all bundles discarded, continuing at id {target}"
            ));
        }
        notes.extend(sync_prep_cursors(&mut self.eng, mesh, TAG_PREP_SYNC).await?);
        Ok(if notes.is_empty() {
            "in step with every node".into()
        } else {
            notes.join("; ")
        })
    }

    /// Runs one step at this node (all nodes run the same step together).
    async fn step<M: Mesh>(
        &mut self,
        mesh: &mut M,
        c: &Control,
        seq: u64,
    ) -> Result<(Option<Vec<Attested>>, Option<Event>)> {
        match c {
            Control::Idle | Control::Stop => Ok((None, None)),
            Control::Prep { count } => {
                let first = self.gates.end()?;
                let (bundles, _) =
                    prep_bundles(&mut self.eng, mesh, &self.lt, *count as usize, first).await?;
                self.gates.append(&bundles)?;
                self.ready = self.gates.available()?;
                Ok((
                    None,
                    Some(Event::Prepared {
                        made: *count,
                        available: self.ready,
                    }),
                ))
            }
            Control::Decrypt { batch, nonces } => {
                let t = std::time::Instant::now();
                check_nonces(batch, nonces)?;
                let cts = parse_batch(&self.params, batch)?;
                // Durable: the cursor moves before the bundles are used.
                let (bundles, left) = self.gates.take_and_left(cts.len())?;
                self.ready = left;
                let run = DecryptRun {
                    params: &self.params,
                    lt: self.lt,
                    key: &self.key,
                    signer: &self.signer,
                    seq,
                };
                let out = run
                    .decrypt(&mut self.eng, mesh, &cts, batch, nonces, bundles)
                    .await?;
                Ok((
                    Some(out),
                    Some(Event::Decrypted {
                        batch: cts.len(),
                        available: left,
                        micros: t.elapsed().as_micros() as u64,
                    }),
                ))
            }
        }
    }

    /// Takes what the `Decrypt` step `seq` of `batch` needs from the stores, in step order (the
    /// gate bundles and the five random values per ciphertext, both durably), for a run on a
    /// lane ([`Lanes`]).
    fn take_lane_job(
        &mut self,
        batch: Vec<Vec<u8>>,
        nonces: Vec<[u8; 32]>,
        seq: u64,
        n: usize,
    ) -> Result<LaneJob> {
        check_nonces(&batch, &nonces)?;
        let (bundles, left) = self.gates.take_and_left(batch.len())?;
        self.ready = left;
        let ring = *self.eng.ring();
        let party = self.eng.party();
        let st = self.eng.prep_mut();
        let mut prep = VecPrep::new(ring, party, n, st.mac_key_share());
        prep.randoms = st.randoms(5 * batch.len()).map_err(Error::from)?.into();
        Ok(LaneJob {
            params: self.params,
            lt: self.lt,
            key: self.key.clone(),
            signer: self.signer.clone(),
            seq,
            batch,
            nonces,
            bundles,
            prep,
            replies: Vec::new(),
            left,
        })
    }

    /// The coordinator's loop (node 0): serves `requests` until the channel closes (then tells
    /// the other nodes to stop) or a step fails: a failed check aborts the mesh, a lost peer
    /// ([`Error::lost_peer`]) does not (see [`Node::coordinate`]); the error is returned.
    /// `events` receives progress reports.
    pub async fn run_coordinator<M: Mesh + 'static>(
        &mut self,
        mesh: &mut M,
        mut requests: mpsc::Receiver<Request>,
        events: &mut (dyn FnMut(Event) + Send),
    ) -> Result<()> {
        self.coordinate(mesh, &mut requests, events).await
    }

    /// [`Node::run_coordinator`] on a queue that outlives it (so a node that reconnects serves
    /// the same queue again, [`crate::node::run_node_reconnecting`]). Requests already taken
    /// from the queue when a step fails are answered with an error: for a lost peer, one that
    /// names it (`node i was lost ...; retry`); the gates taken for that step stay spent.
    /// Requests still in the queue stay there.
    pub async fn coordinate<M: Mesh + 'static>(
        &mut self,
        mesh: &mut M,
        requests: &mut mpsc::Receiver<Request>,
        events: &mut (dyn FnMut(Event) + Send),
    ) -> Result<()> {
        self.coordinate_in_lanes(mesh, Vec::new(), requests, events)
            .await
            .map(drop)
    }

    /// [`Node::coordinate`] with up to `lanes.len()` batches in flight, each decrypted on a lane
    /// mesh of its own (the module docs, "Lanes"; every node must pass the same number of lanes,
    /// connected in the same order, e.g. [`coterie_net::TlsMesh::connect_lanes`]); `mesh`
    /// carries the control messages and the gate preprocessing. No lanes: every step runs on
    /// `mesh`, one at a time. Returns the lanes' meshes after a clean stop, for their owner to
    /// close.
    pub async fn coordinate_in_lanes<M: Mesh + 'static>(
        &mut self,
        mesh: &mut M,
        lanes: Vec<M>,
        requests: &mut mpsc::Receiver<Request>,
        events: &mut (dyn FnMut(Event) + Send),
    ) -> Result<Vec<M>> {
        if mesh.id() != 0 {
            return Err(Error::Params("the coordinator is node 0".into()));
        }
        let mut lanes = Lanes::new(lanes);
        let mut pending: Vec<(LweCiphertext, Request)> = Vec::new();
        let mut closed = false;
        let mut warned_low = false;
        // the bundles left as the last step reported them (only this node's steps change the
        // store), so that the loop need not list the store's directory again
        let mut known: Option<u64> = None;
        events(self.material());
        loop {
            // Runs that have finished on their lanes (they answered their requests themselves).
            match lanes.finished().await {
                Ok(evs) => self.report_lane_events(evs, events),
                Err((e, count)) => {
                    return Err(self.lane_failed(mesh, &mut pending, e, count, events).await);
                }
            }
            // Take what has arrived; refuse malformed ciphertexts before anything is spent.
            closed |= self.gather(requests, &mut pending, events).await;
            let avail = match known.take() {
                Some(a) => a,
                None => self.gates.available()?,
            };
            // 5 random authenticated values per decryption (w, w' and three opening masks)
            let randoms = self
                .eng
                .prep_mut()
                .available(Kind::Randoms)
                .map_err(Error::from)?;
            if randoms < 5 * pending.len() as u64 {
                let keep = (randoms / 5) as usize;
                events(Event::Refused {
                    reason: Refusal::NoRandoms,
                    count: pending.len() - keep,
                });
                for (_, r) in pending.drain(keep..) {
                    let _ = r
                        .reply
                        .send(Err("no random values left in the SPDZ_2k store".into()));
                }
            }
            let control = if !pending.is_empty() && avail >= pending.len() as u64 {
                Control::Decrypt {
                    batch: pending.iter().map(|(_, r)| r.ct.clone()).collect(),
                    nonces: pending.iter().map(|(_, r)| r.nonce).collect(),
                }
            } else if (avail < pending.len() as u64
                || (avail < self.cfg.pool_target && !lanes.running()))
                && self.material_for(u64::from(self.cfg.prep_chunk))?
            {
                // The pool is topped up while no decryption runs on a lane (as without lanes,
                // where a top-up step runs between decryptions): a step started while a stream's
                // batches run would hold up its next batch. Gates the pending requests need
                // are made at once.
                warned_low = false;
                Control::Prep {
                    count: self.cfg.prep_chunk,
                }
            } else if !pending.is_empty() {
                // Fewer gates than pending requests (the first branch did not take them) and no
                // material to make more: the gates left serve the first requests, in the order
                // they came, and only the rest are refused (the last gates are not left unused).
                let keep = avail.min(pending.len() as u64) as usize;
                events(Event::Refused {
                    reason: Refusal::NoGates,
                    count: pending.len() - keep,
                });
                for (_, r) in pending.drain(keep..) {
                    let _ = r.reply.send(Err("no preprocessed gates left".into()));
                }
                if pending.is_empty() {
                    continue;
                }
                Control::Decrypt {
                    batch: pending.iter().map(|(_, r)| r.ct.clone()).collect(),
                    nonces: pending.iter().map(|(_, r)| r.nonce).collect(),
                }
            } else if closed {
                Control::Stop
            } else {
                if avail < self.cfg.pool_target && !warned_low && !lanes.running() {
                    let (triples, bits) = self.material_left();
                    events(Event::MaterialLow { triples, bits });
                    warned_low = true;
                }
                let (ended, running) = (lanes.ended(), lanes.running());
                let next = tokio::select! {
                    r = tokio::time::timeout(self.cfg.idle, requests.recv()) => r,
                    // a lane's run ended: report it, and top up the pool if it waits for that
                    () = ended.notified(), if running => continue,
                };
                match next {
                    Ok(Some(r)) => {
                        self.admit(r, &mut pending, events);
                        continue;
                    }
                    Ok(None) => {
                        closed = true;
                        continue;
                    }
                    Err(_) => Control::Idle,
                }
            };
            self.seq += 1;
            let msg = ControlMsg {
                seq: self.seq,
                control: control.clone(),
            };
            let bytes = envelope::to_envelope(&msg)
                .map_err(|e| Error::Invariant(format!("control message: {e}")))?;
            let me = mesh.id();
            for to in (0..mesh.n()).filter(|&to| to != me) {
                if let Err(e) = mesh.send_bytes(to, TAG_CONTROL, &bytes).await {
                    let e = Error::from(coterie_spdz::Error::from(e));
                    return Err(fail_pending(mesh, &mut pending, e, events).await);
                }
            }
            if control == Control::Stop {
                return match lanes.drain().await {
                    Ok(evs) => {
                        self.report_lane_events(evs, events);
                        Ok(lanes.into_meshes())
                    }
                    Err((e, count)) => {
                        Err(self.lane_failed(mesh, &mut pending, e, count, events).await)
                    }
                };
            }
            let before = self.gates.cursor()?;
            let control = match control {
                Control::Decrypt { batch, nonces } if lanes.active() => {
                    // On a lane: the take now, in step order; the run alongside this loop.
                    let job = self.take_lane_job(batch, nonces, self.seq, mesh.n());
                    self.report_taken(before, events);
                    let mut job = match job {
                        Ok(j) => j,
                        Err(e) => return Err(fail_pending(mesh, &mut pending, e, events).await),
                    };
                    known = Some(job.left);
                    job.replies = pending.drain(..).map(|(_, r)| r.reply).collect();
                    match lanes.dispatch(job).await {
                        Ok(evs) => self.report_lane_events(evs, events),
                        Err((e, count)) => {
                            return Err(self
                                .lane_failed(mesh, &mut pending, e, count, events)
                                .await);
                        }
                    }
                    continue;
                }
                other => other,
            };
            let res = self.step(mesh, &control, self.seq).await;
            self.report_taken(before, events);
            match res {
                Ok((out, ev)) => {
                    if let Some(out) = out {
                        for ((_, r), attested) in pending.drain(..).zip(out) {
                            let _ = r.reply.send(Ok(attested));
                        }
                    }
                    if let Some(ev) = ev {
                        if let Event::Decrypted { available, .. }
                        | Event::Prepared { available, .. } = ev
                        {
                            known = Some(available);
                        }
                        events(ev);
                        events(self.material());
                    }
                }
                Err(e) => return Err(fail_pending(mesh, &mut pending, e, events).await),
            }
        }
    }

    /// Reports the events of finished lane runs, each followed by the material left. A run's
    /// [`Event::Decrypted`] states the bundles ready now, not at its take: preprocessing steps
    /// and later takes may have run meanwhile (a stale count once left a client waiting for a
    /// pool that was already full).
    fn report_lane_events(
        &mut self,
        evs: impl IntoIterator<Item = Event>,
        events: &mut (dyn FnMut(Event) + Send),
    ) {
        for mut ev in evs {
            if let Event::Decrypted { available, .. } = &mut ev {
                *available = self.ready;
            }
            events(ev);
            events(self.material());
        }
    }

    /// Node 0's end after a lane's run failed with `e` (it answered its `count` requests
    /// itself): reports them, answers the requests still pending and aborts as
    /// [`fail_pending`] does; returns `e`.
    async fn lane_failed<M: Mesh>(
        &mut self,
        mesh: &mut M,
        pending: &mut Vec<(LweCiphertext, Request)>,
        e: Error,
        count: usize,
        events: &mut (dyn FnMut(Event) + Send),
    ) -> Error {
        if count > 0 {
            events(Event::Refused {
                reason: Refusal::Aborted,
                count,
            });
        }
        fail_pending(mesh, pending, e, events).await
    }

    /// Takes the requests that have arrived into `pending` (refusing malformed ciphertexts before
    /// anything is spent); if any is pending, keeps taking them while the next one arrives within
    /// [`NodeConfig::gather_gap`] of the last, up to [`NodeConfig::max_batch`] and
    /// [`NodeConfig::gather_max`] ([`gather_into`]). Returns whether the queue is closed.
    async fn gather(
        &self,
        requests: &mut mpsc::Receiver<Request>,
        pending: &mut Vec<(LweCiphertext, Request)>,
        events: &mut (dyn FnMut(Event) + Send),
    ) -> bool {
        let room = self.cfg.max_batch.saturating_sub(pending.len());
        let expecting = pending.last().is_some_and(|(_, r)| r.more > 0);
        gather_into(
            requests,
            room,
            !pending.is_empty(),
            expecting,
            self.cfg.gather_gap,
            self.cfg.gather_max,
            |r| {
                let more = r.more > 0;
                self.admit(r, pending, events);
                more
            },
        )
        .await
    }

    /// Reports the gate bundles a step took (the cursor moved from `before`), if any.
    fn report_taken(&self, before: u64, events: &mut (dyn FnMut(Event) + Send)) {
        if let Ok(end) = self.gates.cursor()
            && end > before
        {
            events(Event::GatesTaken { first: before, end });
        }
    }

    fn admit(
        &self,
        r: Request,
        pending: &mut Vec<(LweCiphertext, Request)>,
        events: &mut (dyn FnMut(Event) + Send),
    ) {
        match LweCiphertext::from_bytes(&r.ct).and_then(|ct| ct.check(&self.params).map(|()| ct)) {
            Ok(ct) => pending.push((ct, r)),
            Err(e) => {
                events(Event::Refused {
                    reason: Refusal::Malformed,
                    count: 1,
                });
                let _ = r
                    .reply
                    .send(Err(format!("malformed ciphertext refused: {e}")));
            }
        }
    }

    /// The loop of every other node: runs the coordinator's steps until `Stop` (Ok) or a
    /// failure: the error is returned, after aborting the mesh unless it is a lost peer
    /// ([`Error::lost_peer`]; the mesh has told the other nodes already).
    pub async fn run_follower<M: Mesh + 'static>(
        &mut self,
        mesh: &mut M,
        events: &mut (dyn FnMut(Event) + Send),
    ) -> Result<()> {
        self.follow_in_lanes(mesh, Vec::new(), events)
            .await
            .map(drop)
    }

    /// [`Node::run_follower`] with the coordinator's lanes ([`Node::coordinate_in_lanes`]: the
    /// same number, connected in the same order). Returns the lanes' meshes after a clean stop,
    /// for their owner to close.
    pub async fn follow_in_lanes<M: Mesh + 'static>(
        &mut self,
        mesh: &mut M,
        lanes: Vec<M>,
        events: &mut (dyn FnMut(Event) + Send),
    ) -> Result<Vec<M>> {
        let step_timeout = mesh.options().timeout;
        let mut last = 0u64;
        let mut lanes = Lanes::new(lanes);
        events(self.material());
        loop {
            // Runs that have finished on their lanes (a failed one ends this node as a failed
            // step does; its lane's mesh is aborted already, unless a peer was lost).
            match lanes.finished().await {
                Ok(evs) => self.report_lane_events(evs, events),
                Err((e, _)) => {
                    if e.lost_peer().is_none() {
                        mesh.abort(&e.to_string()).await;
                    }
                    return Err(e);
                }
            }
            // Waiting for the next step: the coordinator sends a heartbeat at least every
            // `idle`, so allow that plus the step timeout.
            mesh.set_timeout(step_timeout + self.cfg.idle * 4);
            let bytes = match mesh.recv_bytes(0, TAG_CONTROL).await {
                Ok(b) => b,
                Err(e) => {
                    let e = Error::from(coterie_spdz::Error::from(e));
                    if e.lost_peer().is_none() {
                        mesh.abort(&e.to_string()).await;
                    }
                    return Err(e);
                }
            };
            mesh.set_timeout(step_timeout);
            let msg = match open_control(&bytes, mesh.options().max_frame) {
                Ok(m) if m.seq == last + 1 => m,
                _ => {
                    let e = Error::Abort {
                        check: "control-message",
                        party: 0,
                    };
                    mesh.abort(&e.to_string()).await;
                    return Err(e);
                }
            };
            last = msg.seq;
            if msg.control == Control::Stop {
                return match lanes.drain().await {
                    Ok(evs) => {
                        self.report_lane_events(evs, events);
                        Ok(lanes.into_meshes())
                    }
                    Err((e, _)) => {
                        if e.lost_peer().is_none() {
                            mesh.abort(&e.to_string()).await;
                        }
                        Err(e)
                    }
                };
            }
            let before = self.gates.cursor()?;
            let control = match msg.control {
                Control::Decrypt { batch, nonces } if lanes.active() => {
                    let job = self.take_lane_job(batch, nonces, msg.seq, mesh.n());
                    self.report_taken(before, events);
                    let dispatched = match job {
                        Ok(job) => lanes.dispatch(job).await.map_err(|(e, _)| e),
                        Err(e) => Err(e),
                    };
                    match dispatched {
                        Ok(evs) => self.report_lane_events(evs, events),
                        Err(e) => {
                            if e.lost_peer().is_none() {
                                mesh.abort(&e.to_string()).await;
                            }
                            return Err(e);
                        }
                    }
                    continue;
                }
                other => other,
            };
            let res = self.step(mesh, &control, msg.seq).await;
            self.report_taken(before, events);
            match res {
                Ok((_, Some(ev))) => {
                    events(ev);
                    events(self.material());
                }
                Ok(_) => {}
                Err(e) => {
                    if e.lost_peer().is_none() {
                        mesh.abort(&e.to_string()).await;
                    }
                    return Err(e);
                }
            }
        }
    }
}

/// Checks that the coordinator sent one nonce per ciphertext.
fn check_nonces(batch: &[Vec<u8>], nonces: &[[u8; 32]]) -> Result<()> {
    if nonces.len() != batch.len() {
        return Err(Error::Malformed {
            party: 0,
            cause: format!(
                "the coordinator sent {} nonces for {} ciphertexts",
                nonces.len(),
                batch.len()
            ),
        });
    }
    Ok(())
}

/// Decodes and checks the coordinator's batch (a follower aborts on a malformed ciphertext).
fn parse_batch(params: &Params, batch: &[Vec<u8>]) -> Result<Vec<LweCiphertext>> {
    batch
        .iter()
        .enumerate()
        .map(|(i, b)| {
            LweCiphertext::from_bytes(b)
                .and_then(|ct| ct.check(params).map(|()| ct))
                .map_err(|e| Error::Ciphertext(format!("coordinator sent ciphertext {i}: {e}")))
        })
        .collect()
}

/// What one `Decrypt` step needs besides its mesh, engine, batch and gate bundles: the same for
/// a step run in place ([`Node::coordinate`]'s loop) and one run on a lane ([`Lanes`]).
struct DecryptRun<'a> {
    params: &'a Params,
    lt: LtParams,
    key: &'a SharedKey,
    signer: &'a Signer,
    /// The step's sequence number (of its control message).
    seq: u64,
}

impl DecryptRun<'_> {
    /// Decrypts the parsed batch `cts` (the coordinator's `batch` with `nonces`) with the gate
    /// `bundles` taken for it, and exchanges the statements: each result with every node's
    /// attestation at node 0, nothing at a follower.
    async fn decrypt<P: Preprocessing<Z2k>, M: Mesh>(
        &self,
        eng: &mut Engine<Z2k, P>,
        mesh: &mut M,
        cts: &[LweCiphertext],
        batch: &[Vec<u8>],
        nonces: &[[u8; 32]],
        bundles: PackedBundles,
    ) -> Result<Vec<Attested>> {
        // Each ciphertext is hashed once: its hash goes into the batch's hash (the session id)
        // and into this node's statement.
        let hashes: Vec<[u8; 32]> = batch.iter().map(|c| ciphertext_hash(c)).collect();
        let mut h = blake3::Hasher::new_derive_key("coterie-threshold 2026 service batch v2");
        h.update(&self.seq.to_le_bytes());
        for (ch, nonce) in hashes.iter().zip(nonces) {
            h.update(ch);
            h.update(nonce);
        }
        let sid = u64::from_le_bytes(
            h.finalize().as_bytes()[..8]
                .try_into()
                .map_err(|_| Error::Invariant("hash".into()))?,
        );
        let mut pool = GatePool::new(self.lt);
        pool.push(bundles)?;
        let out = decrypt_pipelined(eng, mesh, self.params, self.key, cts, &mut pool, sid).await?;
        self.statements(mesh, &hashes, nonces, &out).await
    }

    /// The end of a `Decrypt` step: this node signs one statement of the batch; a follower
    /// sends it with its messages and chain to node 0, node 0 gathers everyone's and assembles
    /// each request's attestation ([`attest_batch`]; a follower's message that node 0 cannot
    /// read, or that does not fit the batch, leaves that follower's statement missing: the
    /// clients refuse these results naming it). Returns each result with its attestation at
    /// node 0, nothing at a follower.
    async fn statements<M: Mesh>(
        &self,
        mesh: &mut M,
        hashes: &[[u8; 32]],
        nonces: &[[u8; 32]],
        out: &[u64],
    ) -> Result<Vec<Attested>> {
        let mine = self.signer.sign_batch(nonces, hashes, out)?;
        let (me, n) = (mesh.id(), mesh.n());
        let chain = Arc::new(self.signer.chain().to_vec());
        if me != 0 {
            let msg = StatementMsg {
                seq: self.seq,
                statement: mine.clone(),
                chain: chain.to_vec(),
            };
            let bytes = envelope::to_envelope(&msg)
                .map_err(|e| Error::Invariant(format!("statement message: {e}")))?;
            mesh.send_bytes(0, TAG_STATEMENTS, &bytes)
                .await
                .map_err(coterie_spdz::Error::from)?;
            return Ok(Vec::new());
        }
        let mut statements = vec![None; n];
        let mut chains = vec![None; n];
        statements[0] = Some(mine);
        chains[0] = Some(chain);
        for from in 1..n {
            let bytes = mesh
                .recv_bytes(from, TAG_STATEMENTS)
                .await
                .map_err(coterie_spdz::Error::from)?;
            match envelope::from_envelope::<StatementMsg>(&bytes, mesh.options().max_frame) {
                Ok(m) if m.seq == self.seq && m.statement.messages.len() == out.len() => {
                    if let Some(i) = m
                        .statement
                        .messages
                        .iter()
                        .zip(out)
                        .position(|(a, b)| a != b)
                    {
                        tracing::warn!(
                            node = from,
                            ciphertext = i,
                            "a follower's statement disagrees with the decryption"
                        );
                    }
                    statements[from] = Some(m.statement);
                    chains[from] = Some(Arc::new(m.chain));
                }
                Ok(m) => tracing::warn!(
                    node = from,
                    seq = m.seq,
                    messages = m.statement.messages.len(),
                    "a follower's statement does not fit the batch (left out)"
                ),
                Err(e) => tracing::warn!(
                    node = from,
                    error = %e,
                    "a follower's statement is unreadable (left out)"
                ),
            }
        }
        Attested::for_batch(out, nonces, hashes, &statements, chains)
    }
}

/// A lane's finished run: its mesh back, and the step's event or its error with the number of
/// requests it answered with that error (node 0).
type LaneResult<M> = (M, std::result::Result<Event, (Error, usize)>);

/// One `Decrypt` step handed to a lane, with everything it took at the step's turn.
struct LaneJob {
    params: Params,
    lt: LtParams,
    key: Arc<SharedKey>,
    signer: Arc<Signer>,
    seq: u64,
    batch: Vec<Vec<u8>>,
    nonces: Vec<[u8; 32]>,
    /// The gate bundles taken for the batch (durably).
    bundles: PackedBundles,
    /// The batch's random authenticated values, taken from the store (durably).
    prep: VecPrep<Z2k>,
    /// Node 0's: where each request's answer goes, in batch order.
    replies: Vec<oneshot::Sender<Reply>>,
    /// Gate bundles left after the take.
    left: u64,
}

/// Runs one `Decrypt` step on a lane's mesh and answers node 0's requests; on a failure other
/// than a lost peer the lane's mesh is aborted (telling the other nodes' runs on this lane).
async fn run_lane<M: Mesh>(mut mesh: M, job: LaneJob) -> LaneResult<M> {
    let LaneJob {
        params,
        lt,
        key,
        signer,
        seq,
        batch,
        nonces,
        bundles,
        prep,
        replies,
        left,
    } = job;
    let started = std::time::Instant::now();
    let res = async {
        let cts = parse_batch(&params, &batch)?;
        let run = DecryptRun {
            params: &params,
            lt,
            key: &key,
            signer: &signer,
            seq,
        };
        let mut eng = Engine::new(prep);
        run.decrypt(&mut eng, &mut mesh, &cts, &batch, &nonces, bundles)
            .await
    }
    .await;
    match res {
        Ok(out) => {
            for (r, attested) in replies.into_iter().zip(out) {
                let _ = r.send(Ok(attested));
            }
            let ev = Event::Decrypted {
                batch: batch.len(),
                available: left,
                micros: started.elapsed().as_micros() as u64,
            };
            (mesh, Ok(ev))
        }
        Err(e) => {
            let why = failure_reply(&e);
            let count = replies.len();
            for r in replies {
                let _ = r.send(Err(why.clone()));
            }
            if e.lost_peer().is_none() {
                mesh.abort(&e.to_string()).await;
            }
            (mesh, Err((e, count)))
        }
    }
}

/// `Decrypt` steps in flight on **lanes**: meshes of their own between the same nodes, beside
/// the control mesh. The control loop takes each step's gate bundles and random values from the
/// stores in step order (so every node takes the same items for the same step, as without
/// lanes), then hands the run to lane `d mod L` for the service's `d`-th `Decrypt` step, waiting
/// first for that lane's previous run: all nodes pair the same steps on the same lane. The
/// control loop meanwhile goes on (gathering requests, preprocessing gates on the control
/// mesh), so up to `L` batches are decrypted at once and their computing and transfers overlap.
/// Dropping it stops the runs still in flight (their requests get "node stopped").
struct Lanes<M: Mesh + 'static> {
    meshes: Vec<Option<M>>,
    running: Vec<Option<tokio::task::JoinHandle<LaneResult<M>>>>,
    next: usize,
    /// Signalled by every run as it ends.
    ended: Arc<tokio::sync::Notify>,
}

impl<M: Mesh + 'static> Drop for Lanes<M> {
    fn drop(&mut self) {
        for h in self.running.iter().flatten() {
            h.abort();
        }
    }
}

impl<M: Mesh + 'static> Lanes<M> {
    fn new(meshes: Vec<M>) -> Self {
        Self {
            running: meshes.iter().map(|_| None).collect(),
            meshes: meshes.into_iter().map(Some).collect(),
            next: 0,
            ended: Arc::new(tokio::sync::Notify::new()),
        }
    }

    /// What every run signals as it ends (`notified()` completes for a run that ended since the
    /// last wait, or that ends later).
    fn ended(&self) -> Arc<tokio::sync::Notify> {
        self.ended.clone()
    }

    /// Whether a run is in flight on any lane.
    fn running(&self) -> bool {
        self.running.iter().any(Option::is_some)
    }

    /// Whether `Decrypt` steps run on lanes (any lane mesh was given).
    fn active(&self) -> bool {
        !self.meshes.is_empty()
    }

    /// Waits for lane `l`'s run, if one is in flight, and takes its mesh back.
    async fn join(&mut self, l: usize) -> std::result::Result<Option<Event>, (Error, usize)> {
        let Some(h) = self.running[l].take() else {
            return Ok(None);
        };
        match h.await {
            Ok((mesh, r)) => {
                self.meshes[l] = Some(mesh);
                r.map(Some)
            }
            Err(e) => Err((
                Error::Invariant(format!("the decryption run on lane {l} failed: {e}")),
                0,
            )),
        }
    }

    /// The events of the runs that have finished, without waiting for the others; the first
    /// error of one.
    async fn finished(&mut self) -> std::result::Result<Vec<Event>, (Error, usize)> {
        let mut out = Vec::new();
        for l in 0..self.running.len() {
            if self.running[l].as_ref().is_some_and(|h| h.is_finished()) {
                out.extend(self.join(l).await?);
            }
        }
        Ok(out)
    }

    /// Waits for every run in flight; their events, or the first error.
    async fn drain(&mut self) -> std::result::Result<Vec<Event>, (Error, usize)> {
        let mut out = Vec::new();
        for l in 0..self.running.len() {
            out.extend(self.join(l).await?);
        }
        Ok(out)
    }

    /// Starts `job` on the next lane, after that lane's previous run; returns that run's event.
    /// When that run failed, `job` is not started: its requests get the same error (and are
    /// counted with the failed run's).
    async fn dispatch(
        &mut self,
        job: LaneJob,
    ) -> std::result::Result<Option<Event>, (Error, usize)> {
        let l = self.next;
        self.next = (l + 1) % self.meshes.len();
        let ev = match self.join(l).await {
            Ok(ev) => ev,
            Err((e, count)) => {
                let why = failure_reply(&e);
                let more = job.replies.len();
                for r in job.replies {
                    let _ = r.send(Err(why.clone()));
                }
                return Err((e, count + more));
            }
        };
        let mesh = self.meshes[l]
            .take()
            .ok_or_else(|| (Error::Invariant(format!("lane {l} has no mesh")), 0))?;
        let ended = self.ended.clone();
        self.running[l] = Some(tokio::spawn(async move {
            let r = run_lane(mesh, job).await;
            ended.notify_one();
            r
        }));
        Ok(ev)
    }

    /// The lanes' meshes, after [`Lanes::drain`] (to be closed by their owner).
    fn into_meshes(mut self) -> Vec<M> {
        self.meshes.iter_mut().filter_map(Option::take).collect()
    }
}

/// What node 0 answers a request whose step failed with `e`: for a lost peer
/// ([`Error::lost_peer`]) a message that names it and says to retry, otherwise the error.
fn failure_reply(e: &Error) -> String {
    match e.lost_peer() {
        Some(j) => format!(
            "node {j} was lost while this request was being served ({e}); the service reconnects, retry later (any gates taken for it are spent, never used again)"
        ),
        None => format!("decryption aborted: {e}"),
    }
}

/// Takes up to `room` items from `rx` into `take`: those already queued, then, if any was taken
/// or `waiting` (items taken earlier are waiting), more while each arrives within `gap` of the
/// previous one and `max_wait` has not passed since the call. While the last item taken said
/// that more follow (`take` returned true; `expecting` for the items taken earlier), the next
/// one is awaited until `max_wait` instead of `gap`. Within the gap it polls (yielding to other
/// tasks) instead of sleeping, because tokio's timers tick in milliseconds and the gap is a few
/// hundred microseconds; an announced item is awaited asleep (the sender needs the CPU to send
/// it). Returns whether `rx` is closed.
async fn gather_into<T>(
    rx: &mut mpsc::Receiver<T>,
    room: usize,
    waiting: bool,
    expecting: bool,
    gap: Duration,
    max_wait: Duration,
    mut take: impl FnMut(T) -> bool,
) -> bool {
    let start = std::time::Instant::now();
    let mut last = start;
    let mut taken = 0usize;
    let mut expecting = expecting;
    while taken < room {
        match rx.try_recv() {
            Ok(x) => {
                expecting = take(x);
                taken += 1;
                last = std::time::Instant::now();
            }
            Err(mpsc::error::TryRecvError::Empty) => {
                let now = std::time::Instant::now();
                if (taken == 0 && !waiting) || now - start >= max_wait {
                    return false;
                }
                if expecting {
                    match tokio::time::timeout(max_wait - (now - start), rx.recv()).await {
                        Ok(Some(x)) => {
                            expecting = take(x);
                            taken += 1;
                            last = std::time::Instant::now();
                        }
                        Ok(None) => return true,
                        Err(_) => return false,
                    }
                    continue;
                }
                if now - last >= gap {
                    return false;
                }
                tokio::task::yield_now().await;
            }
            Err(mpsc::error::TryRecvError::Disconnected) => return true,
        }
    }
    false
}

/// The coordinator's end after a failed step (or a control message that could not be sent):
/// answers the requests it had taken with an error — for a lost peer ([`Error::lost_peer`]) one
/// that names it, without aborting the mesh (the mesh has told the other nodes); otherwise the
/// error, after aborting the mesh — and returns `e`.
async fn fail_pending<M: Mesh>(
    mesh: &mut M,
    pending: &mut Vec<(LweCiphertext, Request)>,
    e: Error,
    events: &mut (dyn FnMut(Event) + Send),
) -> Error {
    if !pending.is_empty() {
        events(Event::Refused {
            reason: Refusal::Aborted,
            count: pending.len(),
        });
    }
    let why = failure_reply(&e);
    for (_, r) in pending.drain(..) {
        let _ = r.reply.send(Err(why.clone()));
    }
    if e.lost_peer().is_none() {
        mesh.abort(&e.to_string()).await;
    }
    e
}

/// SPDZ_2k material one node needs to make `bundles` gate bundles and decrypt that many
/// ciphertexts with the pipelined schedule, plus the key generation of [`Params::paper`]-size
/// keys with `samples` public samples of `noise_bits` bits (as (triples, bits, randoms); no
/// input masks). An imported key needs [`material_for_import`] instead.
pub fn material_for(
    params: &Params,
    bundles: usize,
    samples: usize,
    noise_bits: u32,
) -> Result<(usize, usize, usize)> {
    let lt = params.lt()?;
    Ok((
        bundles * lt.mults_per_bundle(),
        bundles * lt.bits_per_bundle() + params.n + samples * noise_bits as usize,
        5 * bundles + samples + 16,
    ))
}

/// SPDZ_2k material one node needs when the key is **imported** by one holder
/// ([`crate::node::StartOptions::import_key`]) instead of generated, for `bundles` gate bundles
/// and decryptions and `samples` public samples of `noise_bits` bits, as
/// `(triples, bits, randoms, input masks per owner)`. The key's `n` coefficients come in through
/// the holder's input masks instead of `n` random bits: the bits are [`material_for`]'s less
/// `n`, plus `n` input masks of the holder (producers make input masks for every owner alike,
/// so `masks_per_party = n`). At [`Params::paper`] with the secure public key's 1,024 samples of
/// 45 bits ([`crate::node::PK_SAMPLES`], [`crate::node::PK_NOISE_BITS`]): 46,080 bits and 1,024
/// masks for the key, against 47,104 bits to generate it.
///
/// ```
/// use coterie_threshold::Params;
/// use coterie_threshold::node::{PK_NOISE_BITS, PK_SAMPLES};
/// use coterie_threshold::service::{material_for, material_for_import};
/// let p = Params::paper();
/// let (t, b, r) = material_for(&p, 10, PK_SAMPLES, PK_NOISE_BITS).unwrap();
/// assert_eq!(b, 10 * 72 + 47_104);
/// assert_eq!(
///     material_for_import(&p, 10, PK_SAMPLES, PK_NOISE_BITS).unwrap(),
///     (t, b - 1024, r, 1024)
/// );
/// ```
pub fn material_for_import(
    params: &Params,
    bundles: usize,
    samples: usize,
    noise_bits: u32,
) -> Result<(usize, usize, usize, usize)> {
    let (triples, bits, randoms) = material_for(params, bundles, samples, noise_bits)?;
    Ok((triples, bits - params.n, randoms, params.n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use coterie_base::envelope::Versioned;

    /// A stream whose items come less than the gap apart is gathered whole; without the gap,
    /// only what had arrived; `room` and `max_wait` bound it; a closed queue is reported.
    #[test]
    fn gathering_takes_a_stream_within_its_bounds() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let stream = |n: usize, pause: Duration| {
                let (tx, rx) = mpsc::channel::<usize>(4096);
                std::thread::spawn(move || {
                    for i in 0..n {
                        if tx.blocking_send(i).is_err() {
                            return;
                        }
                        std::thread::sleep(pause);
                    }
                });
                rx
            };
            let ms = Duration::from_millis;
            // the first item awaited, then one gathering with `more(x)` as each item's
            // announcement; the items gathered and whether the channel closed
            async fn gathered(
                rx: &mut mpsc::Receiver<usize>,
                room: usize,
                expecting: bool,
                gap: Duration,
                max_wait: Duration,
                more: impl Fn(usize) -> bool,
            ) -> (Vec<usize>, bool) {
                let mut got = vec![rx.recv().await.unwrap()];
                let closed = gather_into(rx, room, true, expecting, gap, max_wait, |x| {
                    got.push(x);
                    more(x)
                })
                .await;
                (got, closed)
            }
            let never = |_| false;
            // items 100 µs apart, gap 20 ms: all 50 in one gathering (first one awaited)
            let mut rx = stream(50, Duration::from_micros(100));
            let (got, closed) = gathered(&mut rx, 1000, false, ms(20), ms(5000), never).await;
            assert_eq!(got, (0..50).collect::<Vec<_>>());
            assert!(closed || rx.recv().await.is_none());
            // gap zero: only what is queued already (nothing, right after the first)
            let mut rx = stream(50, ms(2));
            let (got, _) = gathered(&mut rx, 1000, false, Duration::ZERO, ms(5000), never).await;
            assert!(got.len() < 5, "{}", got.len());
            // room bounds the batch
            let mut rx = stream(50, Duration::from_micros(100));
            let (got, _) = gathered(&mut rx, 9, false, ms(20), ms(5000), never).await;
            assert_eq!(got.len(), 10);
            // max_wait bounds the time under a steady trickle
            let mut rx = stream(1000, ms(1));
            let t = std::time::Instant::now();
            let (got, _) = gathered(&mut rx, 1000, false, ms(50), ms(30), never).await;
            assert!(t.elapsed() < ms(500) && got.len() < 200, "{}", got.len());
            // items 2 ms apart, gap 200 µs: announced ("more follow" until the last), all 20
            // in one gathering; unannounced, only a few
            let gap = Duration::from_micros(200);
            let mut rx = stream(20, ms(2));
            let (got, _) = gathered(&mut rx, 1000, true, gap, ms(5000), |x| x < 19).await;
            assert_eq!(got, (0..20).collect::<Vec<_>>());
            let mut rx = stream(20, ms(2));
            let (got, _) = gathered(&mut rx, 1000, false, gap, ms(5000), never).await;
            assert!(got.len() < 10, "{}", got.len());
            // an announced item that never comes is awaited until max_wait, no longer
            let (_tx, mut rx) = mpsc::channel::<usize>(1);
            let t = std::time::Instant::now();
            assert!(!gather_into(&mut rx, 10, true, true, ms(1), ms(30), |_| true).await);
            assert!(
                t.elapsed() >= ms(30) && t.elapsed() < ms(500),
                "{:?}",
                t.elapsed()
            );
            // nothing queued and nothing waiting: returns at once
            let (_tx, mut rx) = mpsc::channel::<usize>(1);
            let t = std::time::Instant::now();
            assert!(!gather_into(&mut rx, 10, false, false, ms(1000), ms(1000), |_| false).await);
            assert!(t.elapsed() < ms(500));
        });
    }

    #[test]
    fn control_messages_are_envelopes_and_other_versions_abort() {
        let msg = ControlMsg {
            seq: 7,
            control: Control::Decrypt {
                batch: vec![vec![1, 2, 3], vec![]],
                nonces: vec![[1; 32], [2; 32]],
            },
        };
        let bytes = envelope::to_envelope(&msg).unwrap();
        assert_eq!(envelope::peek(&bytes).unwrap(), (*b"THsc", 4));
        assert_eq!(open_control(&bytes, 1 << 10).unwrap(), msg);
        // Another format version (1 carried a version byte in the message) aborts.
        let old = envelope::seal(ControlMsg::TAG, 1, &(1u8, 7u64, Control::Idle)).unwrap();
        let refused = |r: Result<ControlMsg>| {
            matches!(
                r,
                Err(Error::Abort {
                    check: "control-message",
                    party: 0
                })
            )
        };
        assert!(refused(open_control(&old, 1 << 10)));
        for prev in [2, 3] {
            let prev = envelope::seal(ControlMsg::TAG, prev, &msg).unwrap();
            assert!(refused(open_control(&prev, 1 << 10)));
        }
        let next = envelope::seal(ControlMsg::TAG, 5, &msg).unwrap();
        assert!(refused(open_control(&next, 1 << 10)));
        // So do another tag, a truncation, trailing bytes and a payload over the bound.
        let mut other = bytes.clone();
        other[4..8].copy_from_slice(b"THcq");
        assert!(refused(open_control(&other, 1 << 10)));
        assert!(refused(open_control(&bytes[..bytes.len() - 1], 1 << 10)));
        let mut long = bytes.clone();
        long.push(0);
        assert!(refused(open_control(&long, 1 << 10)));
        assert!(refused(open_control(&bytes, 4)));
    }
}
