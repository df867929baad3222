//! Signed decryption statements: how a client trusts no single node.
//!
//! After every decryption run each node signs, **per request**, a statement: "under the service
//! key with digest `K`, I, node `i`, decrypted the ciphertext with hash `H` for the client nonce
//! `N` to the message `m`". The signature is made with the node's **party TLS key** (the key
//! its party certificate certifies, from the party config), so a client that holds the party
//! config can check it without any other key distribution (a node signs with the certificate
//! and key its party config names, [`Signer::from_config`], as node 0's client listener already
//! uses them). The followers send their statements
//! to node 0 within the decryption step; node 0 attaches all `n` statements to each response
//! ([`crate::client::ClientResponse`]).
//!
//! The client ([`Verifier`]) accepts a message only when, for every node `i`, the statement in
//! position `i` (a) carries a certificate that the party config binds to party `i` (the pinned
//! certificate, or one chaining to the config's CA with the name `party-<i>.coterie`, exactly as
//! coterie-net binds party certificates), (b) verifies under that certificate's key, and (c)
//! gives the message node 0 returned, under the same service key as node 0's statement. A
//! statement that is missing, carries a foreign certificate or does not verify names its node;
//! a node whose valid signature gives another message is named with both messages, so a lying
//! follower and a lying coordinator are both caught (node 0 cannot forge a follower's signature
//! and must return what every node signed).
//!
//! The nonce is the client's fresh 32 random bytes per request: a statement cannot be replayed
//! from an earlier request of the same ciphertext, and it hides from other clients what a
//! statement says. Refusals (a malformed ciphertext, no gates left, an aborted run) are node 0's
//! word alone: no statement is needed to deny service, which node 0 can always do.
//!
//! Signed bytes: `"coterie-threshold decryption statement v1\0"` followed by the 32-byte BLAKE3
//! derived-key hash ([`statement_digest`]) of the node id, the key digest, the nonce, the
//! ciphertext's hash and the message. Schemes: those of TLS 1.3 the ring provider signs with
//! (Ed25519, ECDSA P-256/P-384 with SHA-2, RSA-PSS).

use std::path::Path;
use std::sync::Arc;

use coterie_net::Roster;
use coterie_net::config::{ConfigFile, load_cert_chain, load_key, party_name};
use rustls::SignatureScheme;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::ServerCertVerifier;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::sign::SigningKey;
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// BLAKE3 derive-key context of [`statement_digest`].
pub const STATEMENT_CONTEXT: &str = "coterie-threshold 2026 decryption statement v1";
/// What a node signs precedes the digest: a domain separator (no TLS signature starts so).
const SIGNED_PREFIX: &[u8] = b"coterie-threshold decryption statement v1\0";
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

/// One node's signed statement about one request (see the module docs). Its node is its
/// position in the list a response carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedStatement {
    /// Digest of the service's public key (BLAKE3 of its bytes), as this node holds it.
    pub key_digest: [u8; 32],
    /// The decrypted message this node states.
    pub message: u64,
    /// The node's party certificate chain (DER, its certificate first).
    pub chain: Vec<Vec<u8>>,
    /// The TLS signature scheme (its IANA code).
    pub scheme: u16,
    /// The signature over the statement.
    pub signature: Vec<u8>,
}

/// The digest a statement's signature covers: node `node` states that the ciphertext with hash
/// `ct_hash` ([`ciphertext_hash`] of the CTLW bytes as sent) requested with `nonce` decrypts to
/// `message` under the key with digest `key_digest`.
///
/// ```
/// use coterie_threshold::statement::{ciphertext_hash, statement_digest};
/// let h = ciphertext_hash(b"ct");
/// let d = statement_digest(1, &[7; 32], &[9; 32], &h, 1);
/// assert_ne!(d, statement_digest(2, &[7; 32], &[9; 32], &h, 1));
/// assert_ne!(d, statement_digest(1, &[7; 32], &[9; 32], &h, 0));
/// assert_ne!(d, statement_digest(1, &[7; 32], &[8; 32], &h, 1));
/// ```
pub fn statement_digest(
    node: usize,
    key_digest: &[u8; 32],
    nonce: &[u8; 32],
    ct_hash: &[u8; 32],
    message: u64,
) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key(STATEMENT_CONTEXT);
    h.update(&(node as u64).to_le_bytes());
    h.update(key_digest);
    h.update(nonce);
    h.update(ct_hash);
    h.update(&message.to_le_bytes());
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

/// A node's statement signer: its id, its party certificate chain and key, and the digest of
/// the service key it decrypts under.
pub struct Signer {
    node: usize,
    key_digest: [u8; 32],
    chain: Vec<Vec<u8>>,
    key: Arc<dyn SigningKey>,
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

    /// Signs "the ciphertext `ct` requested with `nonce` decrypts to `message`".
    pub fn sign(&self, nonce: &[u8; 32], ct: &[u8], message: u64) -> Result<SignedStatement> {
        let key_digest = &self.key_digest;
        let signer = self
            .key
            .choose_scheme(&SCHEMES)
            .ok_or_else(|| st_err("the party key lost its signature scheme"))?;
        let digest = statement_digest(self.node, key_digest, nonce, &ciphertext_hash(ct), message);
        let signature = signer
            .sign(&signed_bytes(&digest))
            .map_err(|e| st_err(format!("signing a decryption statement: {e}")))?;
        Ok(SignedStatement {
            key_digest: *key_digest,
            message,
            chain: self.chain.clone(),
            scheme: u16::from(signer.scheme()),
            signature,
        })
    }
}

/// The client's check of the statements on a response (see the module docs): which certificate
/// may speak for each node, from the party config.
#[derive(Debug)]
pub struct Verifier {
    n: usize,
    pinned: Vec<Option<CertificateDer<'static>>>,
    ca: Option<Arc<WebPkiServerVerifier>>,
    algs: rustls::crypto::WebPkiSupportedAlgorithms,
    /// The certificate already accepted for each node (chain checks are not repeated).
    accepted: Vec<Option<Vec<u8>>>,
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

    /// Whether `chain` may speak for node `node` (pinned certificate, or chained to the CA with
    /// the node's name); why not otherwise.
    fn authorize(&mut self, node: usize, chain: &[Vec<u8>]) -> std::result::Result<(), String> {
        let ee = chain.first().ok_or("no certificate")?;
        if self.accepted[node].as_deref() == Some(ee.as_slice()) {
            return Ok(());
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
        self.accepted[node] = Some(ee.clone());
        Ok(())
    }

    /// Whether `st` is node `node`'s valid signature of `digest`.
    fn signature_ok(
        st: &SignedStatement,
        algs: &rustls::crypto::WebPkiSupportedAlgorithms,
        digest: &[u8; 32],
    ) -> bool {
        let scheme = SignatureScheme::from(st.scheme);
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
        let Some(ee) = st.chain.first() else {
            return false;
        };
        let der = CertificateDer::from(ee.as_slice());
        webpki::EndEntityCert::try_from(&der)
            .and_then(|c| c.verify_signature(*alg, &signed_bytes(digest), &st.signature))
            .is_ok()
    }

    /// Checks the statements on node 0's answer `returned` for the ciphertext with hash
    /// `ct_hash` ([`ciphertext_hash`]; number `index` in the client's list, for messages) sent
    /// with `nonce`: one statement per node,
    /// in node order, each authorized and valid, all giving `returned` under node 0's key
    /// digest. The error names the node at fault.
    pub fn check(
        &mut self,
        index: usize,
        nonce: &[u8; 32],
        ct_hash: &[u8; 32],
        returned: u64,
        statements: &[Option<SignedStatement>],
    ) -> std::result::Result<(), String> {
        if statements.len() != self.n {
            return Err(format!(
                "node 0 returned {} statements for ciphertext {index} instead of one per node \
                 ({})",
                statements.len(),
                self.n
            ));
        }
        let key0 = statements[0].as_ref().map(|s| s.key_digest);
        // First every statement on its own (certificate, signature), then agreement.
        let mut said = Vec::with_capacity(self.n);
        for (node, st) in statements.iter().enumerate() {
            let Some(st) = st else {
                return Err(format!(
                    "node {node}'s statement for ciphertext {index} is missing"
                ));
            };
            self.authorize(node, &st.chain).map_err(|why| {
                format!("node {node}'s statement for ciphertext {index} carries {why}")
            })?;
            let digest = statement_digest(node, &st.key_digest, nonce, ct_hash, st.message);
            if !Self::signature_ok(st, &self.algs, &digest) {
                return Err(format!(
                    "node {node}'s statement for ciphertext {index}: its signature does not verify"
                ));
            }
            if Some(st.key_digest) != key0 {
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

    fn all_sign(
        signers: &[Signer],
        nonce: &[u8; 32],
        ct: &[u8],
        m: u64,
    ) -> Vec<Option<SignedStatement>> {
        signers
            .iter()
            .map(|s| Some(s.sign(nonce, ct, m).unwrap()))
            .collect()
    }

    #[test]
    fn every_node_must_sign_what_node_0_returned() {
        let f = fixture("check", 3);
        let mut v = Verifier::new(&f.roster).unwrap();
        let (nonce, ct) = ([5u8; 32], b"a ciphertext".to_vec());
        let h = ciphertext_hash(&ct);
        let honest = all_sign(&f.signers, &nonce, &ct, 1);
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
        let mut lie = honest.clone();
        lie[1] = Some(f.signers[1].sign(&nonce, &ct, 0).unwrap());
        let e = v.check(4, &nonce, &h, 1, &lie).unwrap_err();
        assert!(
            e.starts_with(
                "node 1's signed statement gives 0 for ciphertext 4 but node 0 returned 1"
            ),
            "{e}"
        );
        // node 0 signs and returns its lie: the honest followers' statements give it away
        let mut lie0 = honest.clone();
        lie0[0] = Some(f.signers[0].sign(&nonce, &ct, 0).unwrap());
        let e = v.check(4, &nonce, &h, 0, &lie0).unwrap_err();
        assert!(
            e.contains("node 1's signed statement gives 1")
                && e.contains("disagree with node 0: 1, 2"),
            "{e}"
        );
        // a missing statement names its node; so does a wrong count
        let mut missing = honest.clone();
        missing[2] = None;
        let e = v.check(4, &nonce, &h, 1, &missing).unwrap_err();
        assert!(
            e.contains("node 2's statement for ciphertext 4 is missing"),
            "{e}"
        );
        let e = v.check(4, &nonce, &h, 1, &honest[..2]).unwrap_err();
        assert!(e.contains("2 statements") && e.contains("(3)"), "{e}");
        // a message changed without re-signing, a statement for another nonce or ciphertext
        let mut flipped = honest.clone();
        if let Some(st) = flipped[2].as_mut() {
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
        if let Some(st) = scheme[1].as_mut() {
            st.scheme = 0xffff;
        }
        let e = v.check(4, &nonce, &h, 1, &scheme).unwrap_err();
        assert!(
            e.contains("node 1's statement") && e.contains("does not verify"),
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
        keyed[2] = Some(other_key.sign(&nonce, &ct, 1).unwrap());
        let e = v.check(4, &nonce, &h, 1, &keyed).unwrap_err();
        assert!(
            e.contains("node 2's signed statement") && e.contains("another service key"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&f.dir);
    }

    #[test]
    fn a_statement_must_come_with_the_certificate_the_config_binds_to_its_node() {
        let f = fixture("certs", 3);
        let stranger = fixture("certs-other", 3);
        let (nonce, ct) = ([1u8; 32], b"ct".to_vec());
        let h = ciphertext_hash(&ct);
        let honest = all_sign(&f.signers, &nonce, &ct, 0);
        // pinned certificates: another CA's party 2 (valid signature under its own key)
        let mut v = Verifier::new(&f.roster).unwrap();
        let mut foreign = honest.clone();
        foreign[2] = Some(stranger.signers[2].sign(&nonce, &ct, 0).unwrap());
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
        let mut imposter = honest.clone();
        imposter[2] = Some(as_two.sign(&nonce, &ct, 0).unwrap());
        let e = v.check(0, &nonce, &h, 0, &imposter).unwrap_err();
        assert!(
            e.contains("node 2's statement") && e.contains("does not bind"),
            "{e}"
        );
        // a statement without a certificate
        let mut bare = honest.clone();
        if let Some(st) = bare[1].as_mut() {
            st.chain.clear();
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
        let _ = std::fs::remove_dir_all(&f.dir);
    }
}
