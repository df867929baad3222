//! Signed decryption statements: how a client trusts no single node.
//!
//! After every decryption run each node signs **one** statement per batch (format "v2"): "under
//! the service key with digest `K` (of the node's public-key file: the public key, or the key
//! fingerprint of a service started without one), I, node `i`, decrypted a batch of `B` requests whose
//! statement tree has root `R`". The tree ([`MerkleTree`]) is a binary Merkle tree over one leaf
//! per request of the batch, in batch order: `L_j = leaf_hash(N_j, H_j, m_j)` ([`leaf_hash`]) of
//! the client's nonce `N_j`, the ciphertext's hash `H_j` ([`ciphertext_hash`]) and the message
//! `m_j` the node states for it. The signature is made with the node's **party TLS key** (the key
//! its party certificate certifies, from the party config), so a client that holds the party
//! config can check it without any other key distribution ([`Signer::from_config`]; node 0's
//! client listener already uses the same certificate and key). A batch of `B` ciphertexts
//! therefore costs every node exactly one signature ([`Signer::sign_batch`]), whatever `B`.
//!
//! **Tree shape.** Level 0 is the `B ≥ 1` leaves. Each next level pairs the nodes of the level
//! below left to right, `inner_hash(left, right)` ([`inner_hash`]); an odd last node has no
//! partner and is **promoted unchanged** to the next level. The root is the single node of the
//! last level, so a batch of one has root = its leaf. Leaves and inner nodes hash under distinct
//! BLAKE3 derive-key contexts ([`LEAF_CONTEXT`], [`INNER_CONTEXT`]), and `B` is bound into the
//! signed digest, which fixes the shape: a path for position `j` of a batch of `B` is the list of
//! siblings met going up (none for a promoted node), at most `ceil(log2 B)` hashes
//! ([`fold_path`] recomputes the root).
//!
//! **Transport.** The followers send node 0 their [`BatchStatement`] (the signature plus the
//! message they state for each ciphertext, 8 bytes each) and their certificate chain, once per
//! batch. Node 0 rebuilds each node's tree from those messages ([`attest_batch`]) and answers
//! request `j` with an [`Attestation`]: per node `i`, the message node `i` stated for `j`, its
//! batch signature and an index into a list of Merkle paths for position `j`. Nodes whose trees
//! are equal (the honest case: all of them) share one path, so a response carries `n` ×
//! (message, path index, key digest, signature) plus one path of at most `ceil(log2 B)` 32-byte
//! hashes.
//! A node's certificate chain travels at most once per client connection: node 0's response
//! writer leaves out a chain it has already sent on that connection
//! ([`crate::client::serve_clients`]).
//!
//! **Check.** The client ([`Verifier`], one per connection) accepts a message only when, for
//! every node `i`, the statement in position `i` (a) comes from a certificate that the party
//! config binds to party `i` (the pinned certificate, or one chaining to the config's CA with the
//! name `party-<i>.coterie`, exactly as coterie-net binds party certificates; verified once per
//! connection and cached, a different chain later is verified afresh, and a statement with no
//! chain for a node whose chain never came on this connection is refused), (b) its path from the
//! leaf of the client's own nonce, ciphertext hash and node `i`'s stated message folds to a root
//! whose digest verifies under that certificate's key (each node's batch signature is verified
//! once and recognised by its bytes on the batch's other responses), and (c) the stated message
//! is the one node 0 returned, under the same service key as node 0's statement. A statement
//! that is missing, carries a foreign certificate, a wrong path or a signature that does not
//! verify names its node; a node whose valid signature gives another message is named with both
//! messages, so a lying follower and a lying coordinator are both caught (node 0 cannot forge a
//! follower's signature and must return what every node signed).
//!
//! The nonce is the client's fresh 32 random bytes per request: a statement cannot be replayed
//! from an earlier request of the same ciphertext, and it hides from other clients what a
//! statement says (a path reveals only hashes of other requests' leaves). Refusals (a malformed
//! ciphertext, no gates left, an aborted run) are node 0's word alone: no statement is needed to
//! deny service, which node 0 can always do.
//!
//! Signed bytes: `"coterie-threshold decryption statement v2\0"` followed by the 32-byte BLAKE3
//! derived-key hash ([`batch_digest`], context [`STATEMENT_CONTEXT`]) of the node id, the key
//! digest, the batch size and the root. Schemes: those of TLS 1.3 the ring provider signs with
//! (Ed25519, ECDSA P-256/P-384 with SHA-2, RSA-PSS). Version 1 (one signature and one
//! certificate chain per ciphertext and node) is no longer spoken.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use coterie_net::Roster;
use coterie_net::config::{ConfigFile, load_cert_chain, load_key, party_name};
use rustls::SignatureScheme;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::ServerCertVerifier;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::sign::SigningKey;
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// BLAKE3 derive-key context of [`batch_digest`].
pub const STATEMENT_CONTEXT: &str = "coterie-threshold 2026 decryption statement v2";
/// BLAKE3 derive-key context of a statement tree's leaves ([`leaf_hash`]).
pub const LEAF_CONTEXT: &str = "coterie-threshold 2026 decryption statement v2 leaf";
/// BLAKE3 derive-key context of a statement tree's inner nodes ([`inner_hash`]).
pub const INNER_CONTEXT: &str = "coterie-threshold 2026 decryption statement v2 inner";
/// What a node signs precedes the digest: a domain separator (no TLS signature starts so).
const SIGNED_PREFIX: &[u8] = b"coterie-threshold decryption statement v2\0";
/// The signature schemes statements use (all valid in TLS 1.3), in order of preference.
const SCHEMES: [SignatureScheme; 6] = [
    SignatureScheme::ED25519,
    SignatureScheme::ECDSA_NISTP256_SHA256,
    SignatureScheme::ECDSA_NISTP384_SHA384,
    SignatureScheme::RSA_PSS_SHA256,
    SignatureScheme::RSA_PSS_SHA384,
    SignatureScheme::RSA_PSS_SHA512,
];
/// Most certificates a statement's chain may carry.
const MAX_CHAIN: usize = 8;
/// Largest batch a statement may cover (a path then has at most 32 hashes).
pub const MAX_BATCH: u64 = 1 << 32;

/// A node's signature of one batch's statement tree (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchSignature {
    /// Digest of the service's public key (BLAKE3 of its bytes), as this node holds it.
    pub key_digest: [u8; 32],
    /// The TLS signature scheme (its IANA code).
    pub scheme: u16,
    /// The signature over [`batch_digest`].
    pub signature: Vec<u8>,
}

/// One node's statement of a whole batch: the message it states for each ciphertext, in batch
/// order, and its one signature of the tree over them ([`Signer::sign_batch`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchStatement {
    /// The message stated for each ciphertext of the batch.
    pub messages: Vec<u64>,
    /// The signature of the tree's root.
    pub signature: BatchSignature,
}

/// One node's statement about one request of a batch, as a response carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeStatement {
    /// The message this node states for the request.
    pub message: u64,
    /// Index into [`Attestation::paths`] of the Merkle path in this node's tree.
    pub path: u32,
    /// The node's signature of its batch's tree.
    pub signature: BatchSignature,
    /// The node's party certificate chain (DER, its certificate first), or `None` when node 0
    /// already sent that chain on this connection.
    pub chain: Option<Vec<Vec<u8>>>,
}

/// Every node's statement about one request: what a response with a message carries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attestation {
    /// Number of requests in the batch (bound into every signature).
    pub batch: u64,
    /// The request's position in the batch.
    pub index: u64,
    /// The distinct Merkle paths for position `index` (one when every node's tree is the same).
    pub paths: Vec<Vec<[u8; 32]>>,
    /// Node `i`'s statement at position `i`; `None` where node 0 has none from node `i`.
    pub nodes: Vec<Option<NodeStatement>>,
}

/// The leaf of a statement tree: the request sent with `nonce` for the ciphertext with hash
/// `ct_hash` ([`ciphertext_hash`] of the CTLW bytes as sent) decrypts to `message`.
///
/// ```
/// use coterie_threshold::statement::{ciphertext_hash, leaf_hash};
/// let h = ciphertext_hash(b"ct");
/// let l = leaf_hash(&[9; 32], &h, 1);
/// assert_ne!(l, leaf_hash(&[9; 32], &h, 0));
/// assert_ne!(l, leaf_hash(&[8; 32], &h, 1));
/// ```
pub fn leaf_hash(nonce: &[u8; 32], ct_hash: &[u8; 32], message: u64) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key(LEAF_CONTEXT);
    h.update(nonce);
    h.update(ct_hash);
    h.update(&message.to_le_bytes());
    *h.finalize().as_bytes()
}

/// An inner node of a statement tree over its `left` and `right` children.
pub fn inner_hash(left: &[u8; 32], right: &[u8; 32]) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key(INNER_CONTEXT);
    h.update(left);
    h.update(right);
    *h.finalize().as_bytes()
}

/// A statement tree over a batch's leaves (shape in the module docs: pairs left to right, an
/// odd last node promoted unchanged).
///
/// ```
/// use coterie_threshold::statement::{MerkleTree, fold_path, leaf_hash};
/// let leaves: Vec<[u8; 32]> = (0..5).map(|m| leaf_hash(&[0; 32], &[1; 32], m)).collect();
/// let t = MerkleTree::new(leaves.clone()).unwrap();
/// for (j, leaf) in leaves.iter().enumerate() {
///     let path = t.path(j);
///     assert!(path.len() <= 3);
///     assert_eq!(fold_path(leaf, j as u64, 5, &path), Some(t.root()));
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MerkleTree {
    /// Level 0 is the leaves; the last level is the root alone.
    levels: Vec<Vec<[u8; 32]>>,
}

impl MerkleTree {
    /// The tree over `leaves` (at least one).
    pub fn new(leaves: Vec<[u8; 32]>) -> Result<Self> {
        if leaves.is_empty() || leaves.len() as u64 > MAX_BATCH {
            return Err(st_err(format!(
                "a statement tree needs 1 to {MAX_BATCH} leaves, not {}",
                leaves.len()
            )));
        }
        let mut levels = vec![leaves];
        while let Some(last) = levels.last().filter(|l| l.len() > 1) {
            let next = last
                .chunks(2)
                .map(|p| match p {
                    [l, r] => inner_hash(l, r),
                    [only] => *only,
                    _ => unreachable!("chunks(2) yields one or two"),
                })
                .collect();
            levels.push(next);
        }
        Ok(Self { levels })
    }

    /// The tree of a batch: one [`leaf_hash`] per request, in batch order.
    pub fn of_batch(nonces: &[[u8; 32]], ct_hashes: &[[u8; 32]], messages: &[u64]) -> Result<Self> {
        if nonces.len() != ct_hashes.len() || nonces.len() != messages.len() {
            return Err(st_err(format!(
                "a batch of {} nonces, {} ciphertexts and {} messages",
                nonces.len(),
                ct_hashes.len(),
                messages.len()
            )));
        }
        Self::new(
            nonces
                .iter()
                .zip(ct_hashes)
                .zip(messages)
                .map(|((n, h), &m)| leaf_hash(n, h, m))
                .collect(),
        )
    }

    /// Number of leaves.
    pub fn size(&self) -> usize {
        self.levels[0].len()
    }

    /// The root.
    pub fn root(&self) -> [u8; 32] {
        self.levels.last().map(|l| l[0]).unwrap_or_default()
    }

    /// The path of leaf `index` (`< size`): its sibling at every level where it has one, from
    /// the bottom up. Empty for an index out of range.
    pub fn path(&self, index: usize) -> Vec<[u8; 32]> {
        let mut path = Vec::new();
        let mut pos = index;
        for level in &self.levels[..self.levels.len() - 1] {
            if pos >= level.len() {
                return Vec::new();
            }
            if let Some(sib) = level.get(pos ^ 1) {
                path.push(*sib);
            }
            pos /= 2;
        }
        path
    }
}

/// The root that `path` leads to from `leaf` at position `index` of a tree of `size` leaves, or
/// `None` when the path does not fit that position (too short, too long, an index out of range).
pub fn fold_path(leaf: &[u8; 32], index: u64, size: u64, path: &[[u8; 32]]) -> Option<[u8; 32]> {
    if size == 0 || size > MAX_BATCH || index >= size {
        return None;
    }
    let (mut node, mut pos, mut width) = (*leaf, index, size);
    let mut sibs = path.iter();
    while width > 1 {
        if pos ^ 1 < width {
            let sib = sibs.next()?;
            node = if pos & 1 == 0 {
                inner_hash(&node, sib)
            } else {
                inner_hash(sib, &node)
            };
        }
        pos /= 2;
        width = width.div_ceil(2);
    }
    sibs.next().is_none().then_some(node)
}

/// The digest a node's batch signature covers: node `node` states, under the key with digest
/// `key_digest`, the batch of `size` requests whose statement tree has root `root`.
///
/// ```
/// use coterie_threshold::statement::batch_digest;
/// let d = batch_digest(1, &[7; 32], 5, &[9; 32]);
/// assert_ne!(d, batch_digest(2, &[7; 32], 5, &[9; 32]));
/// assert_ne!(d, batch_digest(1, &[7; 32], 4, &[9; 32]));
/// assert_ne!(d, batch_digest(1, &[7; 32], 5, &[8; 32]));
/// ```
pub fn batch_digest(node: usize, key_digest: &[u8; 32], size: u64, root: &[u8; 32]) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key(STATEMENT_CONTEXT);
    h.update(&(node as u64).to_le_bytes());
    h.update(key_digest);
    h.update(&size.to_le_bytes());
    h.update(root);
    *h.finalize().as_bytes()
}

/// The hash of a ciphertext's CTLW bytes (as the client sent them) in a statement: BLAKE3.
pub fn ciphertext_hash(ct: &[u8]) -> [u8; 32] {
    *blake3::hash(ct).as_bytes()
}

fn signed_bytes(digest: &[u8; 32]) -> Vec<u8> {
    let mut m = SIGNED_PREFIX.to_vec();
    m.extend_from_slice(digest);
    m
}

fn st_err(what: impl std::fmt::Display) -> Error {
    Error::Client(what.to_string())
}

/// Node 0's assembly of a batch's attestations: `statements[i]` is node `i`'s statement of the
/// batch (`None` where node 0 has none, or one that does not fit the batch). Rebuilds each
/// node's tree from the messages it stated (once per distinct list of messages) and returns,
/// per request `j`, every node's message for `j`, its signature and its path index, with each
/// distinct path listed once. Chains are left out (`None`): the response writer adds them.
pub fn attest_batch(
    nonces: &[[u8; 32]],
    ct_hashes: &[[u8; 32]],
    statements: &[Option<BatchStatement>],
) -> Result<Vec<Attestation>> {
    let size = nonces.len();
    // Distinct message lists, their trees, and which tree each node uses.
    let mut trees: Vec<(&[u64], MerkleTree)> = Vec::new();
    let mut tree_of: Vec<Option<usize>> = Vec::with_capacity(statements.len());
    for st in statements {
        let Some(st) = st.as_ref().filter(|s| s.messages.len() == size) else {
            tree_of.push(None);
            continue;
        };
        let t = match trees.iter().position(|(m, _)| *m == st.messages.as_slice()) {
            Some(t) => t,
            None => {
                let tree = MerkleTree::of_batch(nonces, ct_hashes, &st.messages)?;
                trees.push((&st.messages, tree));
                trees.len() - 1
            }
        };
        tree_of.push(Some(t));
    }
    Ok((0..size)
        .map(|j| {
            let mut paths: Vec<Vec<[u8; 32]>> = Vec::new();
            let mut path_of = vec![0u32; trees.len()];
            for (t, (_, tree)) in trees.iter().enumerate() {
                let p = tree.path(j);
                path_of[t] = match paths.iter().position(|q| *q == p) {
                    Some(k) => k as u32,
                    None => {
                        paths.push(p);
                        (paths.len() - 1) as u32
                    }
                };
            }
            let nodes = statements
                .iter()
                .zip(&tree_of)
                .map(|(st, t)| {
                    let (st, t) = (st.as_ref()?, (*t)?);
                    Some(NodeStatement {
                        message: st.messages[j],
                        path: path_of[t],
                        signature: st.signature.clone(),
                        chain: None,
                    })
                })
                .collect();
            Attestation {
                batch: size as u64,
                index: j as u64,
                paths,
                nodes,
            }
        })
        .collect())
}

/// A node's statement signer: its id, its party certificate chain and key, and the digest of
/// the service key it decrypts under.
pub struct Signer {
    node: usize,
    key_digest: [u8; 32],
    chain: Vec<Vec<u8>>,
    key: Arc<dyn SigningKey>,
    signatures: AtomicU64,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Signer {{ node: {}, .. }}", self.node)
    }
}

impl Signer {
    /// A signer for node `node` with its certificate `chain` (its certificate first) and private
    /// `key`, stating decryptions under the service key with digest `key_digest`. Errors when
    /// the key is of a type ring cannot sign with, or signs with no scheme statements use.
    pub fn new(
        node: usize,
        chain: Vec<CertificateDer<'static>>,
        key: &PrivateKeyDer<'static>,
        key_digest: [u8; 32],
    ) -> Result<Self> {
        if chain.is_empty() || chain.len() > MAX_CHAIN {
            return Err(st_err(format!(
                "node {node}: a certificate chain of 1 to {MAX_CHAIN} certificates is needed"
            )));
        }
        let key = rustls::crypto::ring::sign::any_supported_type(key)
            .map_err(|e| st_err(format!("node {node}'s party key cannot sign: {e}")))?;
        if key.choose_scheme(&SCHEMES).is_none() {
            return Err(st_err(format!(
                "node {node}'s party key signs with none of the statement schemes ({:?})",
                key.algorithm()
            )));
        }
        Ok(Self {
            node,
            key_digest,
            chain: chain.into_iter().map(|c| c.to_vec()).collect(),
            key,
            signatures: AtomicU64::new(0),
        })
    }
    /// The signer of party `id` of the party `config`: the certificate (chain) file and key
    /// file the config names for it, or `cert` / `key` where given (as
    /// `coterie_net::TlsMesh::connect_with_config` resolves them).
    pub fn from_config(
        config: &Path,
        id: usize,
        cert: Option<&Path>,
        key: Option<&Path>,
        key_digest: [u8; 32],
    ) -> Result<Self> {
        let roster = Roster::load(config).map_err(st_err)?;
        let cf = ConfigFile::load(config).map_err(st_err)?;
        let base = config.parent().unwrap_or(Path::new("."));
        let entry = cf
            .parties
            .iter()
            .find(|p| p.id == id)
            .ok_or_else(|| st_err(format!("party {id} is not in the config")))?;
        let cert_path = match (cert, &entry.cert) {
            (Some(c), _) => c.to_path_buf(),
            (None, Some(c)) if c.is_absolute() => c.clone(),
            (None, Some(c)) => base.join(c),
            (None, None) => {
                return Err(st_err(format!(
                    "no certificate for party {id} to sign decryption statements with"
                )));
            }
        };
        let key_path = match (key, roster.keys.get(id).cloned().flatten()) {
            (Some(k), _) => k.to_path_buf(),
            (None, Some(k)) => k,
            (None, None) => {
                return Err(st_err(format!(
                    "no private key for party {id} to sign decryption statements with"
                )));
            }
        };
        let chain = load_cert_chain(&cert_path).map_err(st_err)?;
        let key = load_key(&key_path).map_err(st_err)?;
        Self::new(id, chain, &key, key_digest)
    }

    /// This signer's node id.
    pub fn node(&self) -> usize {
        self.node
    }

    /// The digest of the service key this signer states decryptions under.
    pub fn key_digest(&self) -> [u8; 32] {
        self.key_digest
    }

    /// This signer's certificate chain (DER, its certificate first).
    pub fn chain(&self) -> &[Vec<u8>] {
        &self.chain
    }

    /// Signatures this signer has made so far (one per [`Signer::sign_batch`]).
    pub fn signatures(&self) -> u64 {
        self.signatures.load(Ordering::Relaxed)
    }

    /// Signs the batch statement "the requests sent with `nonces` for the ciphertexts with hashes
    /// `ct_hashes` ([`ciphertext_hash`]) decrypt to `messages`": one signature of the tree's root
    /// ([`batch_digest`]), whatever the batch's size.
    ///
    /// ```no_run
    /// # fn f(s: &coterie_threshold::statement::Signer) -> coterie_threshold::Result<()> {
    /// use coterie_threshold::statement::ciphertext_hash;
    /// let st = s.sign_batch(&[[1; 32], [2; 32]], &[ciphertext_hash(b"a"), ciphertext_hash(b"b")], &[1, 0])?;
    /// assert_eq!(st.messages, vec![1, 0]);
    /// # Ok(()) }
    /// ```
    pub fn sign_batch(
        &self,
        nonces: &[[u8; 32]],
        ct_hashes: &[[u8; 32]],
        messages: &[u64],
    ) -> Result<BatchStatement> {
        let tree = MerkleTree::of_batch(nonces, ct_hashes, messages)?;
        let signer = self
            .key
            .choose_scheme(&SCHEMES)
            .ok_or_else(|| st_err("the party key lost its signature scheme"))?;
        let digest = batch_digest(
            self.node,
            &self.key_digest,
            tree.size() as u64,
            &tree.root(),
        );
        let signature = signer
            .sign(&signed_bytes(&digest))
            .map_err(|e| st_err(format!("signing a decryption statement: {e}")))?;
        self.signatures.fetch_add(1, Ordering::Relaxed);
        Ok(BatchStatement {
            messages: messages.to_vec(),
            signature: BatchSignature {
                key_digest: self.key_digest,
                scheme: u16::from(signer.scheme()),
                signature,
            },
        })
    }
}

/// The client's check of the statements on a connection's responses (see the module docs):
/// which certificate may speak for each node, from the party config, and the chains already
/// verified on this connection.
#[derive(Debug)]
pub struct Verifier {
    n: usize,
    pinned: Vec<Option<CertificateDer<'static>>>,
    ca: Option<Arc<WebPkiServerVerifier>>,
    algs: rustls::crypto::WebPkiSupportedAlgorithms,
    /// Per node, the chain accepted on this connection (its BLAKE3 hash) and its end-entity
    /// certificate, whose key verifies the node's signatures.
    accepted: Vec<Option<([u8; 32], Vec<u8>)>>,
    /// Per node, the last signature that verified: the digest it covers, the signature bytes and
    /// the hash of the end-entity certificate that verified it. Every response of one batch
    /// carries the same signature of the same root, so a client sending B ciphertexts in one
    /// batch verifies each node's signature once instead of B times.
    verified: Vec<Option<VerifiedSignature>>,
}

/// A signature [`Verifier`] checked: (digest, scheme, signature bytes, end-entity certificate
/// hash).
type VerifiedSignature = ([u8; 32], u16, Vec<u8>, [u8; 32]);

/// The hash by which a chain is recognised when it comes again.
fn chain_hash(chain: &[Vec<u8>]) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key("coterie-threshold 2026 statement chain");
    for c in chain {
        h.update(&(c.len() as u64).to_le_bytes());
        h.update(c);
    }
    *h.finalize().as_bytes()
}

impl Verifier {
    /// The verifier of the parties in `roster` (pinned certificates and the CA).
    pub fn new(roster: &Roster) -> Result<Self> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let ca = match &roster.ca {
            Some(ca) => {
                let mut roots = rustls::RootCertStore::empty();
                roots.add(ca.clone()).map_err(st_err)?;
                Some(
                    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                        .build()
                        .map_err(st_err)?,
                )
            }
            None => None,
        };
        Ok(Self {
            n: roster.n(),
            pinned: roster.certs.clone(),
            ca,
            algs: provider.signature_verification_algorithms,
            accepted: vec![None; roster.n()],
            verified: vec![None; roster.n()],
        })
    }

    /// The verifier of the parties of the party config file `config`.
    pub fn load(config: &Path) -> Result<Self> {
        Self::new(&Roster::load(config).map_err(st_err)?)
    }

    /// Number of nodes whose statements every response must carry.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Whether node `node` has a chain accepted on this connection.
    pub fn has_chain(&self, node: usize) -> bool {
        self.accepted.get(node).is_some_and(Option::is_some)
    }

    /// The end-entity certificate that speaks for node `node`: from `chain` when one came (kept
    /// for later when it is new and the config binds it to the node: the pinned certificate, or
    /// chained to the CA with the node's name), else the one accepted earlier on this
    /// connection; why not otherwise.
    fn authorize(
        &mut self,
        node: usize,
        chain: Option<&[Vec<u8>]>,
    ) -> std::result::Result<Vec<u8>, String> {
        let Some(chain) = chain else {
            return match &self.accepted[node] {
                Some((_, ee)) => Ok(ee.clone()),
                None => {
                    Err("no certificate chain, and none came earlier on this connection".into())
                }
            };
        };
        let ee = chain.first().ok_or("no certificate")?;
        let hash = chain_hash(chain);
        if let Some((h, ee)) = &self.accepted[node]
            && *h == hash
        {
            return Ok(ee.clone());
        }
        match self.pinned.get(node) {
            Some(Some(p)) if p.as_ref() == ee.as_slice() => {}
            Some(Some(_)) => return Err("not the certificate the config pins".into()),
            _ => {
                let ca = self
                    .ca
                    .as_ref()
                    .ok_or("the config names no CA and pins no certificate")?;
                if chain.len() > MAX_CHAIN {
                    return Err("a certificate chain too long".into());
                }
                let name = ServerName::try_from(party_name(node)).map_err(|e| e.to_string())?;
                let inter: Vec<CertificateDer<'_>> = chain[1..]
                    .iter()
                    .map(|c| CertificateDer::from(c.as_slice()))
                    .collect();
                ca.verify_server_cert(
                    &CertificateDer::from(ee.as_slice()),
                    &inter,
                    &name,
                    &[],
                    UnixTime::now(),
                )
                .map_err(|e| format!("a certificate the config does not bind to it: {e}"))?;
            }
        }
        self.accepted[node] = Some((hash, ee.clone()));
        Ok(ee.clone())
    }

    /// Whether `sig` is a valid signature of `digest` by the end-entity certificate `ee`.
    fn signature_ok(
        sig: &BatchSignature,
        ee: &[u8],
        algs: &rustls::crypto::WebPkiSupportedAlgorithms,
        digest: &[u8; 32],
    ) -> bool {
        let scheme = SignatureScheme::from(sig.scheme);
        if !SCHEMES.contains(&scheme) {
            return false;
        }
        let Some(alg) = algs
            .mapping
            .iter()
            .find(|(s, _)| *s == scheme)
            .and_then(|(_, a)| a.first())
        else {
            return false;
        };
        let der = CertificateDer::from(ee);
        webpki::EndEntityCert::try_from(&der)
            .and_then(|c| c.verify_signature(*alg, &signed_bytes(digest), &sig.signature))
            .is_ok()
    }

    /// Checks the attestation `att` on node 0's answer `returned` for the ciphertext with hash
    /// `ct_hash` ([`ciphertext_hash`]; number `index` in the client's list, for messages) sent
    /// with `nonce`: one statement per node, in node order, each from a certificate the config
    /// binds to its node (the chain in the statement, or the one accepted earlier on this
    /// connection), its path folding from the client's own leaf to a root whose digest the node
    /// signed, all giving `returned` under node 0's key digest. The error names the node at
    /// fault.
    pub fn check(
        &mut self,
        index: usize,
        nonce: &[u8; 32],
        ct_hash: &[u8; 32],
        returned: u64,
        att: &Attestation,
    ) -> std::result::Result<(), String> {
        let statements = &att.nodes;
        if statements.len() != self.n {
            return Err(format!(
                "node 0 returned {} statements for ciphertext {index} instead of one per node \
                 ({})",
                statements.len(),
                self.n
            ));
        }
        if att.batch == 0 || att.batch > MAX_BATCH || att.index >= att.batch {
            return Err(format!(
                "node 0 placed ciphertext {index} at position {} of a batch of {} (node 0 lies)",
                att.index, att.batch
            ));
        }
        let key0 = statements[0].as_ref().map(|s| s.signature.key_digest);
        // First every statement on its own (certificate, path, signature), then agreement.
        let mut said = Vec::with_capacity(self.n);
        for (node, st) in statements.iter().enumerate() {
            let Some(st) = st else {
                return Err(format!(
                    "node {node}'s statement for ciphertext {index} is missing"
                ));
            };
            let ee = self.authorize(node, st.chain.as_deref()).map_err(|why| {
                format!("node {node}'s statement for ciphertext {index} carries {why}")
            })?;
            let root = att
                .paths
                .get(st.path as usize)
                .and_then(|p| {
                    fold_path(
                        &leaf_hash(nonce, ct_hash, st.message),
                        att.index,
                        att.batch,
                        p,
                    )
                })
                .ok_or_else(|| {
                    format!(
                        "node {node}'s statement for ciphertext {index}: its Merkle path does \
                         not fit position {} of a batch of {}",
                        att.index, att.batch
                    )
                })?;
            let digest = batch_digest(node, &st.signature.key_digest, att.batch, &root);
            let ee_hash = *blake3::hash(&ee).as_bytes();
            let seen = self.verified[node]
                .as_ref()
                .is_some_and(|(d, scheme, sig, h)| {
                    *d == digest
                        && *scheme == st.signature.scheme
                        && *sig == st.signature.signature
                        && *h == ee_hash
                });
            if !seen {
                if !Self::signature_ok(&st.signature, &ee, &self.algs, &digest) {
                    return Err(format!(
                        "node {node}'s statement for ciphertext {index}: its signature does not \
                         verify"
                    ));
                }
                self.verified[node] = Some((
                    digest,
                    st.signature.scheme,
                    st.signature.signature.clone(),
                    ee_hash,
                ));
            }
            if Some(st.signature.key_digest) != key0 {
                return Err(format!(
                    "node {node}'s signed statement for ciphertext {index} is under another \
                     service key than node 0's"
                ));
            }
            said.push(st.message);
        }
        if said.iter().all(|&m| m == returned) {
            return Ok(());
        }
        let liars: Vec<String> = said
            .iter()
            .enumerate()
            .filter(|&(_, &m)| m != returned)
            .map(|(i, _)| i.to_string())
            .collect();
        if said[0] != returned {
            return Err(format!(
                "node 0 returned {returned} for ciphertext {index} but its own signed statement \
                 gives {} (the signed statements of nodes {} disagree with what node 0 returned: \
                 node 0 lies)",
                said[0],
                liars.join(", ")
            ));
        }
        let node = said.iter().position(|&m| m != returned).unwrap_or_default();
        Err(format!(
            "node {node}'s signed statement gives {} for ciphertext {index} but node 0 returned \
             {returned} (nodes that disagree with node 0: {})",
            said[node],
            liars.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coterie_net::certs;

    struct Fixture {
        dir: std::path::PathBuf,
        roster: Roster,
        signers: Vec<Signer>,
    }

    fn fixture(name: &str, n: usize) -> Fixture {
        let dir = coterie_base::fsio::unique_temp_dir(&format!("coterie-thr-statement-{name}"));
        let pki = certs::generate_pki(n).unwrap();
        let addrs = certs::loopback_addresses(n, 1);
        let config = certs::write_pki(&dir, &pki, &addrs).unwrap();
        let roster = Roster::load(&config).unwrap();
        let signers = (0..n)
            .map(|i| Signer::from_config(&config, i, None, None, [7; 32]).unwrap())
            .collect();
        Fixture {
            dir,
            roster,
            signers,
        }
    }

    /// A batch as node 0 answers it: `said[i]` is the list of messages node `i` signs (`None`:
    /// node `i` sent nothing); every node's chain on every attestation.
    fn attest(
        signers: &[Signer],
        nonces: &[[u8; 32]],
        hashes: &[[u8; 32]],
        said: &[Option<Vec<u64>>],
    ) -> Vec<Attestation> {
        let sts: Vec<Option<BatchStatement>> = signers
            .iter()
            .zip(said)
            .map(|(s, m)| m.as_ref().map(|m| s.sign_batch(nonces, hashes, m).unwrap()))
            .collect();
        let mut atts = attest_batch(nonces, hashes, &sts).unwrap();
        for a in &mut atts {
            for (st, s) in a.nodes.iter_mut().zip(signers) {
                if let Some(st) = st {
                    st.chain = Some(s.chain().to_vec());
                }
            }
        }
        atts
    }

    /// One request alone (a batch of one: the root is the leaf), every node saying `m`.
    fn one(signers: &[Signer], nonce: &[u8; 32], ct: &[u8], m: u64) -> Attestation {
        let said = vec![Some(vec![m]); signers.len()];
        attest(signers, &[*nonce], &[ciphertext_hash(ct)], &said).remove(0)
    }

    fn leaves(k: usize, salt: u8) -> Vec<[u8; 32]> {
        (0..k)
            .map(|j| leaf_hash(&[salt; 32], &[j as u8; 32], j as u64))
            .collect()
    }

    #[test]
    fn every_path_folds_to_the_root_and_every_leaf_changes_it() {
        for size in 1..=9usize {
            let ls = leaves(size, 0);
            let t = MerkleTree::new(ls.clone()).unwrap();
            assert_eq!(t.size(), size);
            let depth = (size as f64).log2().ceil() as usize;
            for (j, leaf) in ls.iter().enumerate() {
                let path = t.path(j);
                assert!(path.len() <= depth, "size {size} index {j}: {}", path.len());
                assert_eq!(
                    fold_path(leaf, j as u64, size as u64, &path),
                    Some(t.root())
                );
                // another position, size, leaf or path does not give the root
                for k in (0..size).filter(|&k| k != j) {
                    assert_ne!(
                        fold_path(leaf, k as u64, size as u64, &path),
                        Some(t.root())
                    );
                }
                // (a path may fold alike in a larger batch, e.g. the first 4 leaves of 5 and 6:
                // the batch size is bound into the signed digest, not the root)
                if size > 1 {
                    assert_ne!(
                        fold_path(&ls[(j + 1) % size], j as u64, size as u64, &path),
                        Some(t.root())
                    );
                }
                for (e, _) in path.iter().enumerate() {
                    let mut bad = path.clone();
                    bad[e][0] ^= 1;
                    assert_ne!(fold_path(leaf, j as u64, size as u64, &bad), Some(t.root()));
                }
                let mut long = path.clone();
                long.push([0; 32]);
                assert_eq!(fold_path(leaf, j as u64, size as u64, &long), None);
                if !path.is_empty() {
                    assert_eq!(fold_path(leaf, j as u64, size as u64, &path[1..]), None);
                }
            }
            assert_eq!(fold_path(&ls[0], size as u64, size as u64, &[]), None);
            // changing any leaf changes the root
            for j in 0..size {
                let mut other = ls.clone();
                other[j][31] ^= 1;
                assert_ne!(
                    MerkleTree::new(other).unwrap().root(),
                    t.root(),
                    "{size} {j}"
                );
            }
        }
        // a batch of one: the root is its leaf; the shape of 3 (the third leaf promoted)
        let ls = leaves(3, 1);
        assert_eq!(MerkleTree::new(ls[..1].to_vec()).unwrap().root(), ls[0]);
        assert_eq!(
            MerkleTree::new(ls.clone()).unwrap().root(),
            inner_hash(&inner_hash(&ls[0], &ls[1]), &ls[2])
        );
        assert!(MerkleTree::new(Vec::new()).is_err());
        assert!(MerkleTree::of_batch(&[[0; 32]], &[], &[1]).is_err());
        // leaves and inner nodes are hashed apart
        assert_ne!(
            inner_hash(&ls[0], &ls[1]),
            *blake3::Hasher::new_derive_key(LEAF_CONTEXT)
                .update(&ls[0])
                .update(&ls[1])
                .finalize()
                .as_bytes()
        );
    }

    #[test]
    fn every_node_must_sign_what_node_0_returned() {
        let f = fixture("check", 3);
        let mut v = Verifier::new(&f.roster).unwrap();
        let (nonce, ct) = ([5u8; 32], b"a ciphertext".to_vec());
        let h = ciphertext_hash(&ct);
        let honest = one(&f.signers, &nonce, &ct, 1);
        assert_eq!(v.check(4, &nonce, &h, 1, &honest), Ok(()));
        // node 0 returns another message than everyone signed (itself included)
        let e = v.check(4, &nonce, &h, 0, &honest).unwrap_err();
        assert!(
            e.contains("node 0 returned 0 for ciphertext 4")
                && e.contains("its own signed statement gives 1")
                && e.contains("node 0 lies"),
            "{e}"
        );
        // a follower signs another message (a valid signature): named
        let said = |m: [u64; 3]| m.map(|m| Some(vec![m])).to_vec();
        let lie = attest(&f.signers, &[nonce], &[h], &said([1, 0, 1])).remove(0);
        assert_eq!(lie.paths.len(), 1, "batches of one: every path is empty");
        let e = v.check(4, &nonce, &h, 1, &lie).unwrap_err();
        assert!(
            e.starts_with(
                "node 1's signed statement gives 0 for ciphertext 4 but node 0 returned 1"
            ),
            "{e}"
        );
        // node 0 signs and returns its lie: the honest followers' statements give it away
        let lie0 = attest(&f.signers, &[nonce], &[h], &said([0, 1, 1])).remove(0);
        let e = v.check(4, &nonce, &h, 0, &lie0).unwrap_err();
        assert!(
            e.contains("node 1's signed statement gives 1")
                && e.contains("disagree with node 0: 1, 2"),
            "{e}"
        );
        // a missing statement names its node; so does a wrong count
        let mut missing = honest.clone();
        missing.nodes[2] = None;
        let e = v.check(4, &nonce, &h, 1, &missing).unwrap_err();
        assert!(
            e.contains("node 2's statement for ciphertext 4 is missing"),
            "{e}"
        );
        let mut short = honest.clone();
        short.nodes.truncate(2);
        let e = v.check(4, &nonce, &h, 1, &short).unwrap_err();
        assert!(e.contains("2 statements") && e.contains("(3)"), "{e}");
        // a message changed without re-signing, a statement for another nonce or ciphertext
        let mut flipped = honest.clone();
        if let Some(st) = flipped.nodes[2].as_mut() {
            st.message = 0;
        }
        let e = v.check(4, &nonce, &h, 0, &flipped).unwrap_err();
        assert!(
            e.contains("node 2's statement") && e.contains("does not verify"),
            "{e}"
        );
        let e = v.check(4, &[6; 32], &h, 1, &honest).unwrap_err();
        assert!(
            e.contains("node 0's statement") && e.contains("does not verify"),
            "{e}"
        );
        let e = v
            .check(4, &nonce, &ciphertext_hash(b"other"), 1, &honest)
            .unwrap_err();
        assert!(e.contains("does not verify"), "{e}");
        // a signature with an unknown scheme code does not verify
        let mut scheme = honest.clone();
        if let Some(st) = scheme.nodes[1].as_mut() {
            st.signature.scheme = 0xffff;
        }
        let e = v.check(4, &nonce, &h, 1, &scheme).unwrap_err();
        assert!(
            e.contains("node 1's statement") && e.contains("does not verify"),
            "{e}"
        );
        // a batch size or position node 0 made up
        let mut size = honest.clone();
        size.batch = 2;
        let e = v.check(4, &nonce, &h, 1, &size).unwrap_err();
        assert!(
            e.contains("node 0's statement") && e.contains("Merkle path"),
            "{e}"
        );
        size.index = 2;
        let e = v.check(4, &nonce, &h, 1, &size).unwrap_err();
        assert!(
            e.contains("position 2 of a batch of 2") && e.contains("node 0 lies"),
            "{e}"
        );
        // a follower under another service key
        let other_key = Signer::new(
            2,
            vec![CertificateDer::from(f.signers[2].chain[0].clone())],
            &coterie_net::config::load_key(&f.dir.join("party2.key")).unwrap(),
            [8; 32],
        )
        .unwrap();
        let mut keyed = honest.clone();
        let st = other_key.sign_batch(&[nonce], &[h], &[1]).unwrap();
        if let Some(s) = keyed.nodes[2].as_mut() {
            s.signature = st.signature;
        }
        let e = v.check(4, &nonce, &h, 1, &keyed).unwrap_err();
        assert!(
            e.contains("node 2's signed statement") && e.contains("another service key"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&f.dir);
    }

    #[test]
    fn a_batch_is_one_signature_per_node_and_each_request_is_checked_on_its_own() {
        let f = fixture("batch", 3);
        let size = 5;
        let nonces: Vec<[u8; 32]> = (0..size).map(|j| [j as u8 + 1; 32]).collect();
        let hashes: Vec<[u8; 32]> = (0..size)
            .map(|j| ciphertext_hash(format!("ct {j}").as_bytes()))
            .collect();
        let truth = vec![1, 0, 0, 1, 1];
        let before: Vec<u64> = f.signers.iter().map(Signer::signatures).collect();
        let honest = attest(&f.signers, &nonces, &hashes, &vec![Some(truth.clone()); 3]);
        for (s, b) in f.signers.iter().zip(before) {
            assert_eq!(
                s.signatures(),
                b + 1,
                "one signature per node for a batch of 5"
            );
        }
        let mut v = Verifier::new(&f.roster).unwrap();
        for (j, a) in honest.iter().enumerate() {
            assert_eq!((a.batch, a.index), (5, j as u64));
            assert_eq!(a.paths.len(), 1, "equal trees share one path");
            assert!(a.paths[0].len() <= 3);
            assert!(a.nodes.iter().flatten().all(|s| s.path == 0));
            assert_eq!(v.check(j, &nonces[j], &hashes[j], truth[j], a), Ok(()));
            // another request's nonce, hash or position fails
            let k = (j + 1) % size;
            assert!(v.check(j, &nonces[k], &hashes[j], truth[j], a).is_err());
            assert!(v.check(j, &nonces[j], &hashes[k], truth[j], a).is_err());
            let mut moved = a.clone();
            moved.index = k as u64;
            assert!(
                v.check(j, &nonces[j], &hashes[j], truth[j], &moved)
                    .is_err()
            );
        }
        // node 1 states another message for request 3 only: its tree differs (its own paths),
        // requests 0..=2 and 4 still verify, request 3 names node 1
        let mut lied = truth.clone();
        lied[3] ^= 1;
        let said = vec![Some(truth.clone()), Some(lied), Some(truth.clone())];
        let atts = attest(&f.signers, &nonces, &hashes, &said);
        for (j, a) in atts.iter().enumerate() {
            assert_eq!(a.paths.len(), if j == 3 { 1 } else { 2 }, "request {j}");
            let r = v.check(j, &nonces[j], &hashes[j], truth[j], a);
            if j == 3 {
                let e = r.unwrap_err();
                assert!(
                    e.starts_with(&format!(
                        "node 1's signed statement gives {} for ciphertext 3",
                        truth[3] ^ 1
                    )),
                    "{e}"
                );
            } else {
                assert_eq!(r, Ok(()), "request {j}");
            }
        }
        // the same batch signature is verified once per node and then recognised; other bytes
        // under the same digest are verified again (and refused)
        assert!(v.verified.iter().all(Option::is_some));
        let mut forged = honest[4].clone();
        if let Some(st) = forged.nodes[1].as_mut() {
            st.signature.signature[0] ^= 1;
        }
        let e = v
            .check(4, &nonces[4], &hashes[4], truth[4], &forged)
            .unwrap_err();
        assert!(
            e.contains("node 1's statement for ciphertext 4") && e.contains("does not verify"),
            "{e}"
        );
        assert_eq!(
            v.check(4, &nonces[4], &hashes[4], truth[4], &honest[4]),
            Ok(())
        );
        // a tampered path (node 2's alone) is refused naming node 2
        let mut bad = honest[2].clone();
        let mut p = bad.paths[0].clone();
        p[0][5] ^= 0x40;
        bad.paths.push(p);
        if let Some(s) = bad.nodes[2].as_mut() {
            s.path = 1;
        }
        let e = v
            .check(2, &nonces[2], &hashes[2], truth[2], &bad)
            .unwrap_err();
        assert!(
            e.contains("node 2's statement for ciphertext 2") && e.contains("does not verify"),
            "{e}"
        );
        // a path index out of range, or a path of the wrong length, names the node too
        if let Some(s) = bad.nodes[1].as_mut() {
            s.path = 7;
        }
        let e = v
            .check(2, &nonces[2], &hashes[2], truth[2], &bad)
            .unwrap_err();
        assert!(
            e.contains("node 1's statement") && e.contains("Merkle path"),
            "{e}"
        );
        let mut long = honest[0].clone();
        long.paths[0].push([0; 32]);
        let e = v
            .check(0, &nonces[0], &hashes[0], truth[0], &long)
            .unwrap_err();
        assert!(
            e.contains("node 0's statement") && e.contains("Merkle path"),
            "{e}"
        );
        // a statement node 0 had none of (unreadable, or not fitting the batch) is missing
        let mut sts: Vec<Option<BatchStatement>> = f
            .signers
            .iter()
            .map(|s| Some(s.sign_batch(&nonces, &hashes, &truth).unwrap()))
            .collect();
        if let Some(s) = sts[1].as_mut() {
            s.messages.pop();
        }
        let atts = attest_batch(&nonces, &hashes, &sts).unwrap();
        assert!(
            atts.iter()
                .all(|a| a.nodes[1].is_none() && a.nodes[2].is_some())
        );
        let _ = std::fs::remove_dir_all(&f.dir);
    }

    #[test]
    fn a_chain_is_verified_once_per_connection_and_needed_before_it_can_be_left_out() {
        let f = fixture("chains", 3);
        let stranger = fixture("chains-other", 3);
        let (nonce, ct) = ([2u8; 32], b"ct".to_vec());
        let h = ciphertext_hash(&ct);
        let strip = |a: &Attestation| {
            let mut a = a.clone();
            for s in a.nodes.iter_mut().flatten() {
                s.chain = None;
            }
            a
        };
        let honest = one(&f.signers, &nonce, &ct, 1);
        let mut v = Verifier::new(&f.roster).unwrap();
        // no chain yet for node 1: refused naming node 1
        let mut no1 = honest.clone();
        if let Some(s) = no1.nodes[1].as_mut() {
            s.chain = None;
        }
        let e = v.check(0, &nonce, &h, 1, &no1).unwrap_err();
        assert!(
            e.contains("node 1's statement for ciphertext 0 carries no certificate chain"),
            "{e}"
        );
        assert!(v.has_chain(0) && !v.has_chain(1));
        // once every chain came, later statements need none
        assert_eq!(v.check(0, &nonce, &h, 1, &honest), Ok(()));
        let later = one(&f.signers, &[3; 32], &ct, 1);
        assert_eq!(v.check(1, &[3; 32], &h, 1, &strip(&later)), Ok(()));
        // a different chain later is verified afresh: a foreign one is refused
        let mut foreign = strip(&later);
        let st = stranger.signers[2]
            .sign_batch(&[[3; 32]], &[h], &[1])
            .unwrap();
        foreign.nodes[2] = Some(NodeStatement {
            message: 1,
            path: 0,
            signature: st.signature,
            chain: Some(stranger.signers[2].chain().to_vec()),
        });
        let e = v.check(1, &[3; 32], &h, 1, &foreign).unwrap_err();
        assert!(
            e.contains("node 2's statement") && e.contains("pins"),
            "{e}"
        );
        // a foreign key's signature without a chain is checked under the cached certificate
        if let Some(s) = foreign.nodes[2].as_mut() {
            s.chain = None;
        }
        let e = v.check(1, &[3; 32], &h, 1, &foreign).unwrap_err();
        assert!(
            e.contains("node 2's statement") && e.contains("does not verify"),
            "{e}"
        );
        // a new verifier (a new connection) needs the chains again
        let mut fresh = Verifier::new(&f.roster).unwrap();
        let e = fresh.check(1, &[3; 32], &h, 1, &strip(&later)).unwrap_err();
        assert!(
            e.contains("node 0's statement") && e.contains("no certificate chain"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&f.dir);
        let _ = std::fs::remove_dir_all(&stranger.dir);
    }

    #[test]
    fn a_statement_must_come_with_the_certificate_the_config_binds_to_its_node() {
        let f = fixture("certs", 3);
        let stranger = fixture("certs-other", 3);
        let (nonce, ct) = ([1u8; 32], b"ct".to_vec());
        let h = ciphertext_hash(&ct);
        let honest = one(&f.signers, &nonce, &ct, 0);
        // node 2's statement made by `s` (a valid signature under its own key)
        let as_node_2 = |s: &Signer| {
            let mut a = honest.clone();
            let st = s.sign_batch(&[nonce], &[h], &[0]).unwrap();
            a.nodes[2] = Some(NodeStatement {
                message: 0,
                path: 0,
                signature: st.signature,
                chain: Some(s.chain().to_vec()),
            });
            a
        };
        // pinned certificates: another CA's party 2
        let mut v = Verifier::new(&f.roster).unwrap();
        let foreign = as_node_2(&stranger.signers[2]);
        let e = v.check(0, &nonce, &h, 0, &foreign).unwrap_err();
        assert!(
            e.contains("node 2's statement") && e.contains("pins"),
            "{e}"
        );
        // CA only (nothing pinned): the chain and the name `party-<i>.coterie` decide
        let mut ca_only = f.roster.clone();
        ca_only.certs = vec![None; 3];
        let mut v = Verifier::new(&ca_only).unwrap();
        assert_eq!(v.check(0, &nonce, &h, 0, &honest), Ok(()));
        let e = v.check(0, &nonce, &h, 0, &foreign).unwrap_err();
        assert!(
            e.contains("node 2's statement") && e.contains("does not bind"),
            "{e}"
        );
        // party 1 signing as node 2 (its certificate is the CA's, but not for party 2)
        let as_two = Signer::new(
            2,
            vec![CertificateDer::from(f.signers[1].chain[0].clone())],
            &coterie_net::config::load_key(&f.dir.join("party1.key")).unwrap(),
            [7; 32],
        )
        .unwrap();
        let e = v.check(0, &nonce, &h, 0, &as_node_2(&as_two)).unwrap_err();
        assert!(
            e.contains("node 2's statement") && e.contains("does not bind"),
            "{e}"
        );
        // a statement with an empty chain
        let mut bare = honest.clone();
        if let Some(st) = bare.nodes[1].as_mut() {
            st.chain = Some(Vec::new());
        }
        let e = v.check(0, &nonce, &h, 0, &bare).unwrap_err();
        assert!(
            e.contains("node 1's statement") && e.contains("no certificate"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&f.dir);
        let _ = std::fs::remove_dir_all(&stranger.dir);
    }

    #[test]
    fn a_signer_needs_a_certificate_and_a_usable_key() {
        let f = fixture("signer", 2);
        let key = coterie_net::config::load_key(&f.dir.join("party0.key")).unwrap();
        assert!(Signer::new(0, vec![], &key, [0; 32]).is_err());
        let missing = Signer::from_config(&f.dir.join("party.toml"), 5, None, None, [0; 32]);
        assert!(missing.unwrap_err().to_string().contains("party 5"));
        assert_eq!(f.signers[1].node(), 1);
        assert_eq!(f.signers[1].key_digest(), [7; 32]);
        assert_eq!(f.signers[1].chain().len(), 1);
        assert!(f.signers[1].sign_batch(&[], &[], &[]).is_err());
        let _ = std::fs::remove_dir_all(&f.dir);
    }
}
