//! Policy-based file system (spec §6.2, paper §5.2.1).
//!
//! The paper gives an outline only ("details in the full version", spec §11 item 12): a data
//! owner `D` generates **secret-key** Las Vegas HSS keys, gives the two servers `S_0`, `S_1`
//! encrypted vectors saying how access is granted from a client's attribute vector, and puts
//! files `E_K(m)` in a public repository, `K` derived from a large value `r` that `D` encrypted;
//! an RMS program `P` decides access and handles `r` in a terminal multiplication with a large
//! input (spec §4.8, "Large inputs"). This module makes that outline concrete as follows.
//!
//! # The concrete reading
//!
//! **Policies.** A policy over `n` client attributes is a disjunction of *clauses*, each clause
//! a set of required attributes: a client with attribute vector `a ∈ {0,1}^n` is granted access
//! iff for some clause every required attribute `i` has `a_i = 1` ([`Policy`]; e.g. "(doctor ∧
//! cardiology) ∨ admin"). Every monotone access structure has this form (its minimal
//! authorized sets); the number of clauses may be exponential for some structures, which is
//! the price of the fixed public shape below. A clause with no required attribute admits
//! everybody; a policy with no clause admits nobody.
//!
//! **What is secret, what is public.** The policy's *shape* ([`PolicyShape`]: `n` and a number
//! of clause slots `m`) is public; the clauses themselves are secret. For slot `j` the data owner
//! encrypts `m·(n + 1)` bits as level-1 HSS inputs `L1(·)` ([`FileHeader::policy`]):
//! `e_j = 1` iff slot `j` holds a clause (so the number of real clauses is hidden up to `m`),
//! and `u_(j,i) = 1 − w_(j,i)` where `w_(j,i) = 1` iff clause `j` requires attribute `i` (`D`
//! knows the policy, so it encrypts the complements directly — the feed's
//! [`super::feed::complement_input`] is not needed). The client's attribute vector is **public**
//! to the servers (sent in a [`GrantRequest`]): the natural reading of "the vector of attributes
//! of some client" is a certified credential that the servers check, and the secret that needs
//! protecting is the owner's policy and the files. With public attributes the program is a
//! public function of `a` and only the `k` attributes the client *lacks* need a multiplication.
//!
//! **The access program** ([`access_program`]) is a branching program (spec §4.9, one RMS
//! multiplication per node) over the policy inputs, built from `a`: slot by slot, test `e_j`,
//! then `u_(j,i)` for every `i` with `a_i = 0`; a test that passes goes on within the slot (the
//! last one to *accept*), a test that fails goes to the next slot's first test (from the last
//! slot to *reject*). So `F = ∨_j (e_j ∧ ∧_(i : a_i = 0) u_(j,i))`, which is 1 iff an enabled
//! clause requires nothing the client lacks. It has `m·(k + 1)` test nodes.
//!
//! **Secret-key HSS.** Besides the `L1` inputs `D` hands each server its level-2 share of the
//! source test's bit `L2(e_0)` ([`ServerShare`], [`crate::scheme::share_l2_secret_key`]), so
//! the source node's multiplication `Mult(L1(e_0), L2(1))` is free (spec §3.4's free load) and
//! a request costs `m·(k + 1) − 1` RMS multiplications ([`PolicyShape::max_mults`] bounds it
//! over all clients by `m·(n + 1) − 1`).
//!
//! **The large input.** For every file `D` draws `r` uniform in `Z_q \ {0}` and gives the
//! servers `E(r)`, a bare ElGamal ciphertext (it is only paired, never converted, so it needs no
//! `E(r·c_i)`: the "short ciphertext" of §4.8). The accept value `F ∈ {0, 1}` is kept at level 2
//! (every policy multiplication is a full `Mult`: the only terminal multiplication is the one
//! by the large input) and each server answers with the
//! unconverted pairing `h_b = Pair(E(r), L2(F))` ([`crate::scheme::Evaluator::pair`]), so
//! `h_0 / h_1 = g^(r·F)`: `g^r` when access is granted, `1` otherwise. This last step has no
//! conversion and cannot fail, whatever the size of `r` (`r ≠ 0`, so `g^r ≠ 1` and a grant is
//! never mistaken for a denial).
//!
//! **Level-3 output mask.** Before answering, both servers multiply `h_b` by a common
//! pseudorandom `Z = g^z`, `z` from their common PRF key, the file id, the request nonce and the
//! attribute vector ([`GrantShare`]). The ratio is unchanged, and each `Z·h_b` alone is a
//! uniform-looking element, so the client's view is `(Z·h_1, g^(r·F))`: it learns `g^(r·F)` and
//! nothing else about the servers' level-2 shares (the multiplicative analog of the masked
//! `Output` of spec §3.4).
//!
//! **Files.** The file key is derived from `g^r` (BLAKE3 `derive_key` over the file id and the
//! element's canonical bytes), and the file is encrypted with encrypt-then-MAC built from BLAKE3
//! only (no new dependency): the keystream is the keyed-BLAKE3 XOF of an encryption subkey over
//! the file id, the tag a keyed-BLAKE3 hash under a separate MAC subkey over the file id, the
//! length and the ciphertext, compared in constant time ([`EncryptedFile`]). Each file has its
//! own `r`, hence its own key, used for one plaintext.
//!
//! # Flow
//!
//! 1. `D`: [`publish_file`] → a [`FileHeader`] for both servers, a [`ServerShare`] for each, and
//!    the [`EncryptedFile`] for the public repository.
//! 2. Client: sends the same [`GrantRequest`] (file id, attribute vector, a fresh nonce) to both
//!    servers.
//! 3. Server `b`: [`server_grant`] → a [`GrantShare`] (`Z·h_b` and its flag `γ_b`).
//! 4. Client: [`open_file`] (or [`open`]) → the plaintext, [`Access::Denied`] when
//!    `h_0 / h_1 = 1`, an error when the MAC fails, or [`Access::Rerun`].
//!
//! # Failures and re-runs
//!
//! The policy evaluation's conversions can fail (Las Vegas, spec §1.1): a server whose
//! conversions raised a flag reports `flagged`; the answer can be wrong only if **both** did.
//! Then the client still tries the key: the MAC authenticates it, so a verifying file is the
//! right one; otherwise ([`Access::Rerun`]) it re-sends the request with a new nonce (the
//! failures of different nonces are independent). When at most one server flagged the result is
//! reliable, and `h_0 / h_1 = 1` means *denied*. [`params_for`] picks `d` so that a request fails
//! with probability at most `2^−f` ([`super::vote::choose_d`], Lemma 4.7 for bits).
//!
//! **Independent failures across nonces.** A plain `Mult` uses no randomness: on the same
//! ciphertexts and shares it walks from the same points and fails the same way, so a re-run of
//! a fixed file header would repeat the failure forever (nothing in the header or the shares
//! changes between re-runs of one request; the nonce only feeds the PRF). Before each `Mult` both servers therefore add the same
//! pseudorandom offset `ρ < 2^stat` (from their common PRF key, the file id, the nonce and the
//! node) to their shares `<N>_b`: the value `N` is unchanged, each pairing is multiplied by the
//! same factor `C^ρ` on both sides (the ratio `g^(x·N)` is unchanged), and the conversions start
//! from fresh points, so the failures of different nonces are (pseudo)independent.
//!
//! # Security notes
//!
//! Semi-honest, non-colluding servers, as in the paper. Each server sees the `L1` inputs, its own
//! `L2(e_0)` share and `E(r)` (semantically secure under the HSS assumptions), the client's
//! public attributes, and nothing of `F`. A server that flagged may have learnt something about
//! a conversion's payload (a path bit of the policy evaluation): the leakage of spec §4.6, which
//! this module does not absorb (no pads: they need base `B = 2` and `MMult`; left out). A denied
//! client gets `Z·h_0 = Z·h_1`, independent of `r`. A granted client gets `g^r` and can open that
//! file forever (no revocation, below).
//!
//! # Left out (and why)
//!
//! * **Attribute certification.** How the attribute authority certifies `a` and how the servers
//!   check it is outside the HSS layer (a signature the flow layer checks); here `a` is taken as
//!   given. Hidden attributes (HSS-encrypted by an authority) are possible with a branching
//!   program testing `w_(j,i)` then `a_i` (`2n` nodes per clause instead of `k + 1`), but then
//!   someone must vouch for the encrypted attributes; not implemented.
//! * **Policy updates and revocation.** Changing a policy means publishing the file again (new
//!   `r`, new header); clients that already obtained `g^r` keep the old key, so revocation of
//!   content already read is impossible in this design, and re-keying old copies in the
//!   repository is the flow layer's job.
//! * **Client collusion.** Two clients can pool their keys `g^r` but cannot combine their
//!   attributes: each request is evaluated on one attribute vector, and the servers do not check
//!   who presents which vector (certification above). Collusion of a client with a server breaks
//!   policy privacy (the server learns `F` from the client's answer) but not other files' keys.
//! * **Distributed key generation, ESDH compression, pads, `RandMult`.** `D` plays the trusted
//!   dealer (it knows `c`: secret-key HSS); compression and pads are separate variants
//!   ([`crate::esdh`], [`crate::leakage`]) not wired in here, and the plain `Mult` is used.
//!
//! # Example
//!
//! ```
//! use coterie_hss::apps::fs::{Access, GrantRequest, Policy, PolicyShape, open_file, publish_file, server_grant};
//! use coterie_hss::scheme::{Params, insecure_keygen_trusted_dealer};
//! use rand::SeedableRng;
//! let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1); // insecure fixed seed
//! let (pk, ek0, ek1, sk) =
//!     insecure_keygen_trusted_dealer(&Params::insecure_toy(4, 16, 10), &mut rng).unwrap();
//! // Attributes 0 = doctor, 1 = cardiology, 2 = admin; policy (doctor ∧ cardiology) ∨ admin.
//! let shape = PolicyShape { num_attrs: 3, slots: 2 };
//! let policy = Policy::new(3, vec![vec![0, 1], vec![2]]).unwrap();
//! let p = publish_file(&pk, &sk, &shape, &policy, b"patient record", &mut rng).unwrap();
//! for (attrs, granted) in [(vec![true, true, false], true), (vec![true, false, false], false)] {
//!     let req = GrantRequest { file_id: p.header.file_id, attrs, nonce: 1 };
//!     let g0 = server_grant(&pk, &ek0, &p.header, &p.shares[0], &req).unwrap();
//!     let g1 = server_grant(&pk, &ek1, &p.header, &p.shares[1], &req).unwrap();
//!     match open_file(&pk, &g0, &g1, &p.file).unwrap() {
//!         Access::Granted(m) => { assert!(granted); assert_eq!(m, b"patient record") }
//!         Access::Denied => assert!(!granted),
//!         Access::Rerun => {} // both servers flagged: re-send with another nonce
//!     }
//! }
//! ```

use coterie_math::bigint::{self, BigInt};
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::vote::{MultKind, choose_d};
use crate::group::{Elem, Group, GroupId};
use crate::program::{BpNode, BranchingProgram};
use crate::scheme::{
    Ciphertext, EvalKey, Evaluator, L1Input, L2Share, Params, PreparedCt, PreparedInput, PublicKey,
    SecretKey, share_l2_secret_key,
};
use crate::{Error, Result};

/// Largest number of client attributes `n`.
pub const MAX_ATTRS: u32 = 128;

/// Largest number of clause slots `m`. With [`MAX_ATTRS`], a header holds at most
/// `16·129 = 2064` level-1 inputs: about 32 MB at `B = 16` on the 1536-bit group
/// (`41` ciphertexts of `384` bytes each), under the 64 MiB decoding bound
/// ([`crate::scheme::MAX_DECODE_BYTES`]).
pub const MAX_SLOTS: u32 = 16;

/// Largest file (plaintext and ciphertext), 64 MiB minus room for the envelope.
pub const MAX_FILE_BYTES: usize = (64 << 20) - 4096;

/// Bytes of a file id.
pub const FILE_ID_BYTES: usize = 16;

/// The public shape of a policy: `n` attributes and `m` clause slots (at most `m` clauses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyShape {
    /// Number of client attributes `n`.
    pub num_attrs: u32,
    /// Number of clause slots `m` (the number of real clauses, up to `m`, stays hidden).
    pub slots: u32,
}

impl PolicyShape {
    /// Checks `1 ≤ n ≤` [`MAX_ATTRS`] and `1 ≤ m ≤` [`MAX_SLOTS`].
    pub fn validate(&self) -> Result<()> {
        if !(1..=MAX_ATTRS).contains(&self.num_attrs) || !(1..=MAX_SLOTS).contains(&self.slots) {
            return Err(Error::InvalidParameter(format!(
                "a policy shape has 1 to {MAX_ATTRS} attributes and 1 to {MAX_SLOTS} slots \
                 (got {} and {})",
                self.num_attrs, self.slots
            )));
        }
        Ok(())
    }

    /// Number of encrypted policy bits `m·(n + 1)` (module docs).
    pub fn num_inputs(&self) -> usize {
        self.slots as usize * (self.num_attrs as usize + 1)
    }

    /// The most RMS multiplications of one request, `m·(n + 1) − 1` (a client with no attribute;
    /// the source multiplication is free).
    ///
    /// ```
    /// use coterie_hss::apps::fs::PolicyShape;
    /// assert_eq!(PolicyShape { num_attrs: 8, slots: 3 }.max_mults(), 26);
    /// ```
    pub fn max_mults(&self) -> usize {
        self.num_inputs().saturating_sub(1)
    }
}

/// A data owner's access policy: a disjunction of clauses, each the set of attributes it
/// requires (module docs). Kept by the data owner only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// Number of client attributes `n`.
    pub num_attrs: u32,
    /// The clauses: required attribute indices (an empty clause admits everybody).
    pub clauses: Vec<Vec<u32>>,
}

// Stored by the data owner in the coterie envelope as `HSfp` (a file-system policy).
coterie_base::versioned! {
    Policy => b"HSfp" v 1,
}

impl Policy {
    /// A checked policy.
    ///
    /// ```
    /// use coterie_hss::apps::fs::Policy;
    /// let p = Policy::new(3, vec![vec![0, 1], vec![2]]).unwrap(); // (a0 ∧ a1) ∨ a2
    /// assert!(p.allows(&[true, true, false]).unwrap());
    /// assert!(p.allows(&[false, false, true]).unwrap());
    /// assert!(!p.allows(&[true, false, false]).unwrap());
    /// assert!(Policy::new(3, vec![vec![3]]).is_err()); // no attribute 3
    /// ```
    pub fn new(num_attrs: u32, clauses: Vec<Vec<u32>>) -> Result<Self> {
        let p = Self { num_attrs, clauses };
        p.validate()?;
        Ok(p)
    }

    /// Checks sizes: `1 ≤ n ≤` [`MAX_ATTRS`], at most [`MAX_SLOTS`] clauses, indices below `n`,
    /// no clause longer than `n`.
    pub fn validate(&self) -> Result<()> {
        if !(1..=MAX_ATTRS).contains(&self.num_attrs) || self.clauses.len() > MAX_SLOTS as usize {
            return Err(Error::InvalidParameter(format!(
                "a policy has 1 to {MAX_ATTRS} attributes and at most {MAX_SLOTS} clauses"
            )));
        }
        for (j, c) in self.clauses.iter().enumerate() {
            if c.len() > self.num_attrs as usize || c.iter().any(|&i| i >= self.num_attrs) {
                return Err(Error::InvalidParameter(format!(
                    "clause {j} names an attribute outside 0..{}",
                    self.num_attrs
                )));
            }
        }
        Ok(())
    }

    /// The plain decision: some clause's required attributes are all present.
    pub fn allows(&self, attrs: &[bool]) -> Result<bool> {
        self.validate()?;
        check_attrs(self.num_attrs, attrs)?;
        Ok(self
            .clauses
            .iter()
            .any(|c| c.iter().all(|&i| attrs[i as usize])))
    }

    /// The plaintext policy bits for `shape` (module docs): per slot `j`, `e_j` then
    /// `u_(j,i) = 1 − w_(j,i)` for `i < n`; unused slots have `e_j = 0`, `u = 1`.
    ///
    /// ```
    /// use coterie_hss::apps::fs::{Policy, PolicyShape};
    /// let p = Policy::new(2, vec![vec![1]]).unwrap();
    /// let bits = p.encode(&PolicyShape { num_attrs: 2, slots: 2 }).unwrap();
    /// assert_eq!(bits, vec![true, true, false, false, true, true]);
    /// ```
    pub fn encode(&self, shape: &PolicyShape) -> Result<Vec<bool>> {
        self.validate()?;
        shape.validate()?;
        if shape.num_attrs != self.num_attrs || self.clauses.len() > shape.slots as usize {
            return Err(Error::InvalidParameter(format!(
                "a policy over {} attributes with {} clauses does not fit the shape \
                 ({} attributes, {} slots)",
                self.num_attrs,
                self.clauses.len(),
                shape.num_attrs,
                shape.slots
            )));
        }
        let n = shape.num_attrs as usize;
        let mut bits = vec![true; shape.num_inputs()];
        for j in 0..shape.slots as usize {
            let base = j * (n + 1);
            match self.clauses.get(j) {
                Some(c) => {
                    for &i in c {
                        bits[base + 1 + i as usize] = false;
                    }
                }
                None => bits[base] = false,
            }
        }
        Ok(bits)
    }
}

fn check_attrs(num_attrs: u32, attrs: &[bool]) -> Result<()> {
    if attrs.len() != num_attrs as usize {
        return Err(Error::InvalidParameter(format!(
            "{} attributes for a policy over {num_attrs}",
            attrs.len()
        )));
    }
    Ok(())
}

/// The access program for a client with public attributes `attrs` (module docs): a branching
/// program over the `m·(n + 1)` policy bits with `m·(k + 1)` test nodes (`k` = attributes the
/// client lacks), accepting iff the policy admits the client.
///
/// ```
/// use coterie_hss::apps::fs::{Policy, PolicyShape, access_program};
/// let shape = PolicyShape { num_attrs: 3, slots: 2 };
/// let policy = Policy::new(3, vec![vec![0, 1], vec![2]]).unwrap();
/// let bits = policy.encode(&shape).unwrap();
/// let attrs = [true, false, true];
/// let bp = access_program(&shape, &attrs).unwrap();
/// assert_eq!(bp.mult_counts().0 + bp.mult_counts().1, 2 * 2); // m·(k + 1), k = 1
/// assert_eq!(bp.eval_plain(&bits).unwrap(), policy.allows(&attrs).unwrap());
/// ```
pub fn access_program(shape: &PolicyShape, attrs: &[bool]) -> Result<BranchingProgram> {
    shape.validate()?;
    check_attrs(shape.num_attrs, attrs)?;
    let n = shape.num_attrs as usize;
    let m = shape.slots as usize;
    let lacking: Vec<usize> = (0..n).filter(|&i| !attrs[i]).collect();
    let per = lacking.len() + 1;
    let accept = (m * per) as u32;
    let reject = accept + 1;
    let mut nodes = Vec::with_capacity(m * per + 2);
    for j in 0..m {
        let base = j * (n + 1);
        let vars = std::iter::once(base).chain(lacking.iter().map(|&i| base + 1 + i));
        let on0 = if j + 1 == m {
            reject
        } else {
            ((j + 1) * per) as u32
        };
        for (t, var) in vars.enumerate() {
            let on1 = if t + 1 == per {
                accept
            } else {
                (j * per + t + 1) as u32
            };
            nodes.push(BpNode::Test {
                var: var as u32,
                on0,
                on1,
            });
        }
    }
    nodes.push(BpNode::Accept);
    nodes.push(BpNode::Reject);
    let bp = BranchingProgram {
        num_inputs: shape.num_inputs() as u32,
        nodes,
    };
    bp.validate()?;
    Ok(bp)
}

/// Parameters for policies of `shape` with request failure `δ = 2^−failure_log2`: base
/// `B = 16`, a 160-bit key, window `R`, and `d` by [`super::vote::choose_d`] over
/// [`PolicyShape::max_mults`] multiplications of bits (Lemma 4.7). On [`GroupId::P1536`] these
/// are the paper's 80-bit-security parameters; the toy groups are insecure.
///
/// ```
/// use coterie_hss::apps::fs::{PolicyShape, params_for};
/// use coterie_hss::group::GroupId;
/// let p = params_for(&PolicyShape { num_attrs: 16, slots: 4 }, 10, GroupId::P1536, 8).unwrap();
/// assert_eq!((p.log_base, p.s()), (4, 40));
/// assert!(params_for(&PolicyShape { num_attrs: 0, slots: 4 }, 10, GroupId::P1536, 8).is_err());
/// ```
pub fn params_for(
    shape: &PolicyShape,
    failure_log2: u32,
    group: GroupId,
    window: u32,
) -> Result<Params> {
    shape.validate()?;
    let mut p = Params::with_failure(group, 160, 1, 4, window)?;
    p.d = choose_d(&p, &[(shape.max_mults(), MultKind::Mult)], failure_log2)?;
    Ok(p)
}

/// What both servers hold for one file: the public shape, the encrypted policy bits and the
/// encrypted large value `E(r)` (module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileHeader {
    /// The file id (random, chosen by the data owner).
    pub file_id: [u8; FILE_ID_BYTES],
    /// The policy's public shape.
    pub shape: PolicyShape,
    /// `L1` of the `m·(n + 1)` policy bits ([`Policy::encode`] order).
    pub policy: Vec<L1Input>,
    /// `E(r)`.
    pub key_input: Ciphertext,
}

// Sent by the data owner to both servers in the coterie envelope as `HSfh` (a file header).
coterie_base::versioned! {
    FileHeader => b"HSfh" v 1,
}

impl FileHeader {
    /// The structural part of [`FileHeader::validate`]: the shape, one input per policy bit.
    pub fn check_shape(&self) -> Result<()> {
        self.shape
            .validate()
            .map_err(|e| Error::Malformed(format!("file header: {e}")))?;
        if self.policy.len() != self.shape.num_inputs() {
            return Err(Error::Malformed(format!(
                "file header has {} policy inputs, its shape needs {}",
                self.policy.len(),
                self.shape.num_inputs()
            )));
        }
        Ok(())
    }

    /// Checks a decoded header against `pk`: the shape, one input per policy bit, every input
    /// and `E(r)` in the group.
    ///
    /// Membership checks cost one exponentiation per element (`2·m·(n + 1)·(s + 1) + 2`), so a
    /// server runs this once when the header arrives; [`server_grant`] repeats only the cheap
    /// structural part (the elements it uses are still checked for size and range when their
    /// tables are built, so a bad element is an error, never a panic).
    pub fn validate(&self, pk: &PublicKey) -> Result<()> {
        self.check_shape()?;
        for l1 in &self.policy {
            l1.validate(pk)?;
        }
        let group = Group::new(pk.params.group);
        group.validate(&self.key_input.a)?;
        group.validate(&self.key_input.c)?;
        Ok(())
    }
}

/// One server's secret part for one file: its level-2 share of the source test's bit `e_0`
/// (secret-key HSS, module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerShare {
    /// The file id.
    pub file_id: [u8; FILE_ID_BYTES],
    /// The server `b ∈ {0, 1}` this share is for.
    pub party: u8,
    /// `<L2(e_0)>_b`.
    pub source: L2Share,
}

// Sent by the data owner to one server in the coterie envelope as `HSfk` (a server's file share).
coterie_base::versioned! {
    ServerShare => b"HSfk" v 1,
}

impl ServerShare {
    /// Checks a decoded share: party 0 or 1, the share within bounds of at most
    /// `ℓ + stat + 80` bits (what [`crate::scheme::share_l2_secret_key`] produces).
    pub fn validate(&self, pk: &PublicKey) -> Result<()> {
        if self.party > 1 {
            return Err(Error::Malformed(
                "a server share is for party 0 or 1".into(),
            ));
        }
        self.source
            .validate(pk.params.key_bits + pk.params.stat_bits + 80)
    }
}

/// A file in the public repository: `E_K(m)` with encrypt-then-MAC from BLAKE3 (module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EncryptedFile {
    /// The file id (binds the file to its header and is authenticated).
    pub file_id: [u8; FILE_ID_BYTES],
    /// The ciphertext (plaintext XOR keystream).
    #[serde(with = "coterie_base::bytes")]
    pub ciphertext: Vec<u8>,
    /// The MAC tag.
    pub tag: [u8; 32],
}

// Stored in the public repository in the coterie envelope as `HSfe` (an encrypted file).
coterie_base::versioned! {
    EncryptedFile => b"HSfe" v 1,
}

impl EncryptedFile {
    /// Checks the size (at most [`MAX_FILE_BYTES`]).
    pub fn validate(&self) -> Result<()> {
        if self.ciphertext.len() > MAX_FILE_BYTES {
            return Err(Error::Malformed(format!(
                "an encrypted file has at most {MAX_FILE_BYTES} bytes"
            )));
        }
        Ok(())
    }
}

/// What [`publish_file`] produces.
#[derive(Debug, Clone)]
pub struct Published {
    /// For both servers.
    pub header: FileHeader,
    /// `shares[b]` for server `b`.
    pub shares: [ServerShare; 2],
    /// For the public repository.
    pub file: EncryptedFile,
}

/// A client's request, the same to both servers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantRequest {
    /// The file asked for.
    pub file_id: [u8; FILE_ID_BYTES],
    /// The client's (certified, public) attribute vector.
    pub attrs: Vec<bool>,
    /// The evaluation nonce, fresh per request and re-run.
    pub nonce: u64,
}

// Sent by a client to both servers in the coterie envelope as `HSfq` (a file request).
coterie_base::versioned! {
    GrantRequest => b"HSfq" v 1,
}

impl GrantRequest {
    /// Checks the size (at most [`MAX_ATTRS`] attributes).
    pub fn validate(&self) -> Result<()> {
        if self.attrs.is_empty() || self.attrs.len() > MAX_ATTRS as usize {
            return Err(Error::Malformed(format!(
                "a request has 1 to {MAX_ATTRS} attributes"
            )));
        }
        Ok(())
    }
}

/// One server's answer: `Z·h_b` with `h_b = Pair(E(r), L2(F))` (module docs) and its flag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantShare {
    /// The file id of the request.
    pub file_id: [u8; FILE_ID_BYTES],
    /// The nonce of the request.
    pub nonce: u64,
    /// The answering server `b`.
    pub party: u8,
    /// `Z·h_b`.
    pub h: Elem,
    /// `γ_b = ⊥`: a conversion of this server raised a flag.
    pub flagged: bool,
    /// RMS multiplications done.
    pub mults: u32,
}

// Sent by a server to the client in the coterie envelope as `HSfg` (a file grant share).
coterie_base::versioned! {
    GrantShare => b"HSfg" v 1,
}

impl GrantShare {
    /// Checks a decoded answer: party 0 or 1, `h` in `pk`'s group.
    pub fn validate(&self, pk: &PublicKey) -> Result<()> {
        if self.party > 1 {
            return Err(Error::Malformed("a grant comes from server 0 or 1".into()));
        }
        Group::new(pk.params.group).validate(&self.h)
    }
}

/// What the client concludes from two answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// Access granted: the plaintext.
    Granted(Vec<u8>),
    /// `h_0 / h_1 = 1`: the policy does not admit the client.
    Denied,
    /// Both servers flagged and the key did not verify: re-send with a new nonce.
    Rerun,
}

const KDF_CONTEXT: &str = "coterie-hss 2026 fs file key v1";
const ENC_CONTEXT: &str = "coterie-hss 2026 fs encryption subkey v1";
const MAC_CONTEXT: &str = "coterie-hss 2026 fs mac subkey v1";
const MASK_LABEL: &[u8] = b"coterie-hss 2026 fs level-3 output mask v1";
const OFFSET_LABEL: &[u8] = b"coterie-hss 2026 fs conversion offset v1";

/// `(encryption subkey, MAC subkey)` from `g^r` and the file id.
fn file_keys(file_id: &[u8; FILE_ID_BYTES], gr: &Elem) -> ([u8; 32], [u8; 32]) {
    let mut h = blake3::Hasher::new_derive_key(KDF_CONTEXT);
    h.update(file_id);
    h.update(&(gr.limbs().len() as u64).to_le_bytes());
    for l in gr.limbs() {
        h.update(&l.to_le_bytes());
    }
    let k = h.finalize();
    (
        blake3::derive_key(ENC_CONTEXT, k.as_bytes()),
        blake3::derive_key(MAC_CONTEXT, k.as_bytes()),
    )
}

fn keystream_xor(enc_key: &[u8; 32], file_id: &[u8; FILE_ID_BYTES], data: &mut [u8]) {
    let mut h = blake3::Hasher::new_keyed(enc_key);
    h.update(file_id);
    let mut xof = h.finalize_xof();
    let mut buf = [0u8; 64];
    for chunk in data.chunks_mut(64) {
        xof.fill(&mut buf[..chunk.len()]);
        for (d, k) in chunk.iter_mut().zip(&buf) {
            *d ^= k;
        }
    }
}

fn mac(mac_key: &[u8; 32], file_id: &[u8; FILE_ID_BYTES], ct: &[u8]) -> blake3::Hash {
    let mut h = blake3::Hasher::new_keyed(mac_key);
    h.update(file_id);
    h.update(&(ct.len() as u64).to_le_bytes());
    h.update(ct);
    h.finalize()
}

/// The data owner's step: encrypts the policy bits and a fresh large value `r` for the servers,
/// hands each server its `L2(e_0)` share, and encrypts `plaintext` under the key derived from
/// `g^r` (module docs). `sk` is the owner's HSS secret key (secret-key HSS).
///
/// # Example
///
/// ```
/// use coterie_hss::apps::fs::{FileHeader, Policy, PolicyShape, publish_file};
/// use coterie_hss::scheme::{Params, from_bytes, insecure_keygen_trusted_dealer, to_bytes};
/// use rand::SeedableRng;
/// let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(2); // insecure fixed seed
/// let (pk, _, _, sk) =
///     insecure_keygen_trusted_dealer(&Params::insecure_toy(4, 16, 10), &mut rng).unwrap();
/// let shape = PolicyShape { num_attrs: 4, slots: 2 };
/// let policy = Policy::new(4, vec![vec![0, 3]]).unwrap();
/// let p = publish_file(&pk, &sk, &shape, &policy, b"hello", &mut rng).unwrap();
/// assert_eq!(p.header.policy.len(), 2 * 5);
/// assert_eq!(p.file.ciphertext.len(), 5);
/// let back: FileHeader = from_bytes(&to_bytes(&p.header).unwrap()).unwrap();
/// back.validate(&pk).unwrap();
/// ```
pub fn publish_file<R: Rng + ?Sized>(
    pk: &PublicKey,
    sk: &SecretKey,
    shape: &PolicyShape,
    policy: &Policy,
    plaintext: &[u8],
    rng: &mut R,
) -> Result<Published> {
    if plaintext.len() > MAX_FILE_BYTES {
        return Err(Error::InvalidParameter(format!(
            "a file has at most {MAX_FILE_BYTES} bytes"
        )));
    }
    let group = Group::new(pk.params.group);
    if group.g_pow(&sk.c) != pk.h {
        return Err(Error::InvalidParameter(
            "the secret key does not match the public key".into(),
        ));
    }
    let bits = policy.encode(shape)?;
    let enc = pk.encryptor()?;
    let mut file_id = [0u8; FILE_ID_BYTES];
    rng.fill_bytes(&mut file_id);
    let policy_inputs = bits
        .iter()
        .map(|&b| enc.encrypt(pk, &BigInt::from(u8::from(b)), rng))
        .collect();
    let mut r = group.random_exponent(rng);
    while r == 0 {
        r = group.random_exponent(rng);
    }
    let key_input = enc.encrypt_value(&r, rng);
    let gr = group.g_pow(&r);
    bigint::wipe(&mut r);
    let (s0, s1) = share_l2_secret_key(&pk.params, sk, i64::from(bits[0]), rng);
    let (enc_key, mac_key) = file_keys(&file_id, &gr);
    let mut ciphertext = plaintext.to_vec();
    keystream_xor(&enc_key, &file_id, &mut ciphertext);
    let tag = *mac(&mac_key, &file_id, &ciphertext).as_bytes();
    Ok(Published {
        header: FileHeader {
            file_id,
            shape: *shape,
            policy: policy_inputs,
            key_input,
        },
        shares: [
            ServerShare {
                file_id,
                party: 0,
                source: s0,
            },
            ServerShare {
                file_id,
                party: 1,
                source: s1,
            },
        ],
        file: EncryptedFile {
            file_id,
            ciphertext,
            tag,
        },
    })
}

/// The common level-3 mask `z mod q` of one request (module docs).
fn level3_mask(group: &Group, ek: &EvalKey, req: &GrantRequest) -> Result<BigInt> {
    let mut h = blake3::Hasher::new_keyed(&ek.prf_key);
    h.update(MASK_LABEL);
    h.update(&req.file_id);
    h.update(&req.nonce.to_le_bytes());
    h.update(&(req.attrs.len() as u64).to_le_bytes());
    let bytes: Vec<u8> = req.attrs.iter().map(|&a| u8::from(a)).collect();
    h.update(&bytes);
    let words = (group.q().significant_bits() as usize + 128).div_ceil(64);
    let mut xof = h.finalize_xof();
    let mut limbs = vec![0u64; words];
    let mut w = [0u8; 8];
    for l in &mut limbs {
        xof.fill(&mut w);
        *l = u64::from_le_bytes(w);
    }
    let mut z = bigint::from_le_limbs(&limbs);
    let out = bigint::reduce(&z, group.q()).map_err(|e| Error::InvalidParameter(e.to_string()));
    bigint::wipe(&mut z);
    out
}

/// Cheap checks (size, below `p`) of the elements a request uses; full membership is
/// [`FileHeader::validate`]'s, once per header.
fn check_canonical<'a>(group: &Group, cts: impl IntoIterator<Item = &'a Ciphertext>) -> Result<()> {
    for ct in cts {
        group.check_canonical(&ct.a)?;
        group.check_canonical(&ct.c)?;
    }
    Ok(())
}

/// The common offset `ρ < 2^bits` added to both servers' `<y>` before node `node`'s `Mult`
/// (module docs, "Failures and re-runs").
fn common_offset(ek: &EvalKey, req: &GrantRequest, node: usize, bits: u32) -> BigInt {
    let mut h = blake3::Hasher::new_keyed(&ek.prf_key);
    h.update(OFFSET_LABEL);
    h.update(&req.file_id);
    h.update(&req.nonce.to_le_bytes());
    h.update(&(node as u64).to_le_bytes());
    let mut xof = h.finalize_xof();
    let mut limbs = vec![0u64; (bits as usize).div_ceil(64).max(1)];
    let mut w = [0u8; 8];
    for l in &mut limbs {
        xof.fill(&mut w);
        *l = u64::from_le_bytes(w);
    }
    let rho = bigint::from_le_limbs(&limbs);
    rho.keep_bits(bits)
}

/// Adds `v` into node `to`.
fn add_into(vals: &mut [Option<L2Share>], to: usize, v: L2Share) {
    vals[to] = Some(match vals[to].take() {
        None => v,
        Some(old) => old.add(&v),
    });
}

/// Server `ek.party`'s step: evaluates the access program for the request's public attributes
/// on the encrypted policy (one `Mult` per test node after a common per-nonce offset, the
/// source node free from its [`ServerShare`]), keeps the accept value `L2(F)`, and answers `Z·Pair(E(r), L2(F))` with its
/// flag (module docs). Inputs are prepared when used (each policy bit is tested at most once).
///
/// # Example
///
/// ```
/// use coterie_hss::apps::fs::{GrantRequest, Policy, PolicyShape, publish_file, server_grant};
/// use coterie_hss::scheme::{Params, insecure_keygen_trusted_dealer};
/// use rand::SeedableRng;
/// let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3); // insecure fixed seed
/// let (pk, ek0, _, sk) =
///     insecure_keygen_trusted_dealer(&Params::insecure_toy(4, 16, 10), &mut rng).unwrap();
/// let shape = PolicyShape { num_attrs: 3, slots: 2 };
/// let p = publish_file(&pk, &sk, &shape, &Policy::new(3, vec![vec![1]]).unwrap(), b"x", &mut rng)
///     .unwrap();
/// let req = GrantRequest { file_id: p.header.file_id, attrs: vec![true, false, false], nonce: 9 };
/// let g0 = server_grant(&pk, &ek0, &p.header, &p.shares[0], &req).unwrap();
/// assert_eq!((g0.party, g0.nonce), (0, 9));
/// assert_eq!(g0.mults, 2 * 3 - 1); // m·(k + 1) − 1 with k = 2 missing attributes
/// let bad = GrantRequest { attrs: vec![true; 4], ..req };
/// assert!(server_grant(&pk, &ek0, &p.header, &p.shares[0], &bad).is_err()); // wrong length
/// ```
pub fn server_grant(
    pk: &PublicKey,
    ek: &EvalKey,
    header: &FileHeader,
    share: &ServerShare,
    req: &GrantRequest,
) -> Result<GrantShare> {
    req.validate()?;
    header.check_shape()?;
    share.validate(pk)?;
    if share.party != ek.party || share.file_id != header.file_id {
        return Err(Error::InvalidParameter(
            "the server share is for another server or file".into(),
        ));
    }
    if req.file_id != header.file_id {
        return Err(Error::InvalidParameter(
            "the request is for another file".into(),
        ));
    }
    let bp = access_program(&header.shape, &req.attrs)?;
    let accept = bp.nodes.len() - 2;
    let mut ev = Evaluator::new(pk, ek, req.nonce)?;
    ev.clear_flag();
    let group = ev.group().clone();
    check_canonical(&group, [&header.key_input])?;
    let mut vals: Vec<Option<L2Share>> = vec![None; bp.nodes.len()];
    vals[0] = Some(ev.one());
    let mut mults = 0u32;
    for i in 0..bp.nodes.len() {
        let BpNode::Test { var, on0, on1 } = bp.nodes[i] else {
            continue;
        };
        let Some(nv) = vals[i].take() else {
            continue;
        };
        let t = if i == 0 {
            // Mult(L1(e_0), L2(1)) = L2(e_0), handed out by the data owner.
            share.source.clone()
        } else {
            let l1 = &header.policy[var as usize];
            check_canonical(&group, std::iter::once(&l1.x).chain(&l1.digits))?;
            let x = PreparedInput::new(pk, l1, false)?;
            mults += 1;
            // The same offset on both shares: same value, fresh conversion points per nonce.
            let rho = common_offset(ek, req, i, pk.params.stat_bits);
            let shifted = L2Share {
                y: BigInt::from(&nv.y + &rho),
                y_bound: BigInt::from(&nv.y_bound + &rho),
                ..nv.clone()
            };
            ev.mult(&x, &shifted)?
        };
        let f = nv.sub(&t);
        for (to, v) in [(on1 as usize, t), (on0 as usize, f)] {
            if to <= accept {
                add_into(&mut vals, to, v);
            }
        }
    }
    let lf = vals[accept].take().unwrap_or_else(|| ev.zero());
    let er = PreparedCt::new(&group, pk, &header.key_input)?;
    let h = ev.pair(&er, &lf)?;
    let z = level3_mask(&group, ek, req)?;
    let h = group.mul(&h, &group.g_pow(&z));
    Ok(GrantShare {
        file_id: header.file_id,
        nonce: req.nonce,
        party: ek.party,
        h,
        flagged: ev.flagged(),
        mults,
    })
}

/// The client's step: `g^(r·F) = h_0 / h_1`; [`Access::Denied`] when it is 1 (and at most one
/// server flagged), otherwise the file key is derived and the MAC checked: a verifying file is
/// returned as [`Access::Granted`]. A MAC failure is an error (a corrupted file or answer)
/// unless both servers flagged, when it is [`Access::Rerun`] (module docs). Answers for
/// different files or nonces, or not one from each server, are an error.
///
/// # Example
///
/// ```
/// use coterie_hss::apps::fs::{Access, GrantRequest, Policy, PolicyShape, open_file, publish_file, server_grant};
/// use coterie_hss::scheme::{Params, insecure_keygen_trusted_dealer};
/// use rand::SeedableRng;
/// let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(4); // insecure fixed seed
/// let (pk, ek0, ek1, sk) =
///     insecure_keygen_trusted_dealer(&Params::insecure_toy(4, 16, 10), &mut rng).unwrap();
/// let shape = PolicyShape { num_attrs: 2, slots: 1 };
/// let p = publish_file(&pk, &sk, &shape, &Policy::new(2, vec![vec![0]]).unwrap(), b"memo", &mut rng)
///     .unwrap();
/// for nonce in 0..5 {
///     let req = GrantRequest { file_id: p.header.file_id, attrs: vec![true, false], nonce };
///     let g0 = server_grant(&pk, &ek0, &p.header, &p.shares[0], &req).unwrap();
///     let g1 = server_grant(&pk, &ek1, &p.header, &p.shares[1], &req).unwrap();
///     match open_file(&pk, &g0, &g1, &p.file).unwrap() {
///         Access::Granted(m) => { assert_eq!(m, b"memo"); break; }
///         Access::Denied => panic!("attribute 0 is present"),
///         Access::Rerun => continue, // re-send with a new nonce
///     }
/// }
/// ```
pub fn open_file(
    pk: &PublicKey,
    g0: &GrantShare,
    g1: &GrantShare,
    file: &EncryptedFile,
) -> Result<Access> {
    g0.validate(pk)?;
    g1.validate(pk)?;
    file.validate()?;
    if g0.party != 0 || g1.party != 1 {
        return Err(Error::Protocol(
            "need the answers of server 0 and server 1, in that order".into(),
        ));
    }
    if g0.file_id != g1.file_id || g0.nonce != g1.nonce {
        return Err(Error::Protocol(
            "the servers answered different requests (file id or nonce differ)".into(),
        ));
    }
    if g0.file_id != file.file_id {
        return Err(Error::Protocol(
            "the answers are for another file than the one given".into(),
        ));
    }
    let both_flagged = g0.flagged && g1.flagged;
    let group = Group::new(pk.params.group);
    let ratio = group.mul(&g0.h, &group.inv(&g1.h)?);
    if ratio == group.one() {
        return Ok(if both_flagged {
            Access::Rerun
        } else {
            Access::Denied
        });
    }
    let (enc_key, mac_key) = file_keys(&file.file_id, &ratio);
    if mac(&mac_key, &file.file_id, &file.ciphertext) != blake3::Hash::from_bytes(file.tag) {
        if both_flagged {
            return Ok(Access::Rerun);
        }
        return Err(Error::Protocol(
            "MAC check failed: the file or a server's answer is corrupted".into(),
        ));
    }
    let mut m = file.ciphertext.clone();
    keystream_xor(&enc_key, &file.file_id, &mut m);
    Ok(Access::Granted(m))
}

/// [`open_file`] with the denials as errors: `Err` "access denied" or "both servers flagged:
/// re-run with a new nonce".
///
/// # Example
///
/// ```
/// use coterie_hss::apps::fs::{GrantRequest, Policy, PolicyShape, open, publish_file, server_grant};
/// use coterie_hss::scheme::{Params, insecure_keygen_trusted_dealer};
/// use rand::SeedableRng;
/// let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(5); // insecure fixed seed
/// let (pk, ek0, ek1, sk) =
///     insecure_keygen_trusted_dealer(&Params::insecure_toy(4, 16, 10), &mut rng).unwrap();
/// let shape = PolicyShape { num_attrs: 2, slots: 1 };
/// let p = publish_file(&pk, &sk, &shape, &Policy::new(2, vec![vec![0, 1]]).unwrap(), b"m", &mut rng)
///     .unwrap();
/// let req = GrantRequest { file_id: p.header.file_id, attrs: vec![true, false], nonce: 1 };
/// let g0 = server_grant(&pk, &ek0, &p.header, &p.shares[0], &req).unwrap();
/// let g1 = server_grant(&pk, &ek1, &p.header, &p.shares[1], &req).unwrap();
/// let err = open(&pk, &g0, &g1, &p.file).unwrap_err().to_string();
/// assert!(err.contains("access denied") || err.contains("re-run"), "{err}");
/// ```
pub fn open(
    pk: &PublicKey,
    g0: &GrantShare,
    g1: &GrantShare,
    file: &EncryptedFile,
) -> Result<Vec<u8>> {
    match open_file(pk, g0, g1, file)? {
        Access::Granted(m) => Ok(m),
        Access::Denied => Err(Error::Protocol("access denied".into())),
        Access::Rerun => Err(Error::Protocol(
            "both servers flagged: re-run with a new nonce".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheme::{from_bytes, insecure_keygen_trusted_dealer, to_bytes};
    use rand::SeedableRng;

    type Keys = (PublicKey, EvalKey, EvalKey, SecretKey);

    fn keys(params: &Params, seed: u64) -> (Keys, rand_chacha::ChaCha20Rng) {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed); // insecure fixed seed
        let k = insecure_keygen_trusted_dealer(params, &mut rng).unwrap();
        (k, rng)
    }

    fn attrs_of(mask: u32, n: u32) -> Vec<bool> {
        (0..n).map(|i| mask >> i & 1 == 1).collect()
    }

    /// Both servers' answers to one request.
    fn grants(k: &Keys, p: &Published, attrs: &[bool], nonce: u64) -> (GrantShare, GrantShare) {
        let req = GrantRequest {
            file_id: p.header.file_id,
            attrs: attrs.to_vec(),
            nonce,
        };
        (
            server_grant(&k.0, &k.1, &p.header, &p.shares[0], &req).unwrap(),
            server_grant(&k.0, &k.2, &p.header, &p.shares[1], &req).unwrap(),
        )
    }

    #[test]
    fn access_program_matches_policy_on_all_attribute_vectors() {
        let n = 4;
        let policies = [
            vec![],                             // nobody
            vec![vec![]],                       // everybody
            vec![vec![0]],                      // a0
            vec![vec![0, 1, 2, 3]],             // all four
            vec![vec![0, 1], vec![2]],          // (a0 ∧ a1) ∨ a2
            vec![vec![3], vec![1, 2], vec![0]], // three clauses
        ];
        for clauses in policies {
            let policy = Policy::new(n, clauses.clone()).unwrap();
            for slots in [3u32, 5] {
                let shape = PolicyShape {
                    num_attrs: n,
                    slots,
                };
                let bits = policy.encode(&shape).unwrap();
                assert_eq!(bits.len(), shape.num_inputs());
                for mask in 0..16 {
                    let attrs = attrs_of(mask, n);
                    let bp = access_program(&shape, &attrs).unwrap();
                    let want = clauses.iter().any(|c| c.iter().all(|&i| attrs[i as usize]));
                    assert_eq!(policy.allows(&attrs).unwrap(), want);
                    assert_eq!(bp.eval_plain(&bits).unwrap(), want, "{clauses:?} {attrs:?}");
                    let k = attrs.iter().filter(|&&a| !a).count();
                    let (nt, t) = bp.mult_counts();
                    assert_eq!(nt + t, slots as usize * (k + 1));
                }
            }
        }
        // Too many clauses for the shape, or another attribute count.
        let p = Policy::new(2, vec![vec![0], vec![1]]).unwrap();
        assert!(
            p.encode(&PolicyShape {
                num_attrs: 2,
                slots: 1
            })
            .is_err()
        );
        assert!(
            p.encode(&PolicyShape {
                num_attrs: 3,
                slots: 2
            })
            .is_err()
        );
    }

    #[test]
    fn granted_and_denied_clients_against_the_plain_policy() {
        let ((pk, ek0, ek1, sk), mut rng) = keys(&Params::insecure_toy(4, 16, 10), 80);
        let k = (pk, ek0, ek1, sk);
        let n = 3;
        let shape = PolicyShape {
            num_attrs: n,
            slots: 2,
        };
        let mut granted = 0;
        let mut denied = 0;
        for (f, clauses) in [
            vec![vec![0u32, 1], vec![2]],
            vec![vec![1]],
            vec![],
            vec![vec![]],
        ]
        .into_iter()
        .enumerate()
        {
            let policy = Policy::new(n, clauses).unwrap();
            let text = format!("file {f}: the content").into_bytes();
            let p = publish_file(&k.0, &k.3, &shape, &policy, &text, &mut rng).unwrap();
            assert_ne!(p.file.ciphertext, text);
            for mask in 0..8 {
                let attrs = attrs_of(mask, n);
                let want = policy.allows(&attrs).unwrap();
                let (g0, g1) = grants(&k, &p, &attrs, u64::from(mask));
                match open_file(&k.0, &g0, &g1, &p.file).unwrap() {
                    Access::Granted(m) => {
                        assert!(want, "granted against the policy: {attrs:?}");
                        assert_eq!(m, text);
                        granted += 1;
                    }
                    Access::Denied => {
                        assert!(!want, "denied against the policy: {attrs:?}");
                        let e = open(&k.0, &g0, &g1, &p.file).unwrap_err();
                        assert!(e.to_string().contains("access denied"), "{e}");
                        denied += 1;
                    }
                    Access::Rerun => assert!(g0.flagged && g1.flagged),
                }
            }
        }
        // 4 policies × 8 vectors: 5 + 4 + 0 + 8 = 17 admitted, 15 not; few re-runs at d = 10.
        assert!(
            granted >= 15 && denied >= 13,
            "{granted} granted, {denied} denied"
        );
    }

    #[test]
    fn level3_shares_are_masked_and_denied_ratio_is_one() {
        let ((pk, ek0, ek1, sk), mut rng) = keys(&Params::insecure_toy(4, 16, 12), 81);
        let k = (pk, ek0, ek1, sk);
        let shape = PolicyShape {
            num_attrs: 2,
            slots: 1,
        };
        let p = publish_file(
            &k.0,
            &k.3,
            &shape,
            &Policy::new(2, vec![vec![0, 1]]).unwrap(),
            b"secret",
            &mut rng,
        )
        .unwrap();
        let (a0, a1) = grants(&k, &p, &[false, true], 1);
        let (b0, b1) = grants(&k, &p, &[false, true], 2);
        // d = 12: no failure expected with this seed, so the answers are reliable.
        assert!(!(a0.flagged && a1.flagged || b0.flagged && b1.flagged));
        // Denied: h_0 = h_1, but the answers change with the nonce (fresh mask Z).
        assert_eq!(a0.h, a1.h);
        assert_eq!(b0.h, b1.h);
        assert_ne!(a0.h, b0.h);
        // Each answer round-trips through its envelope and validates.
        let back: GrantShare = from_bytes(&to_bytes(&a0).unwrap()).unwrap();
        back.validate(&k.0).unwrap();
        assert_eq!(back, a0);
    }

    #[test]
    fn corrupted_file_or_grant_is_rejected_by_the_mac() {
        let ((pk, ek0, ek1, sk), mut rng) = keys(&Params::insecure_toy(4, 16, 12), 82);
        let k = (pk, ek0, ek1, sk);
        let shape = PolicyShape {
            num_attrs: 2,
            slots: 2,
        };
        let text = b"the quarterly numbers".to_vec();
        let p = publish_file(
            &k.0,
            &k.3,
            &shape,
            &Policy::new(2, vec![vec![1]]).unwrap(),
            &text,
            &mut rng,
        )
        .unwrap();
        let (mut g0, mut g1) = grants(&k, &p, &[false, true], 3);
        // Make sure the flags do not turn a MAC failure into a re-run.
        g0.flagged = false;
        g1.flagged = false;
        assert_eq!(open(&k.0, &g0, &g1, &p.file).unwrap(), text);
        let group = Group::new(k.0.params.group);
        let mac_err = |r: Result<Vec<u8>>| {
            let e = r.unwrap_err().to_string();
            assert!(e.contains("MAC"), "{e}");
        };
        for i in [0, 7, text.len() - 1] {
            let mut f = p.file.clone();
            f.ciphertext[i] ^= 1;
            mac_err(open(&k.0, &g0, &g1, &f));
        }
        let mut f = p.file.clone();
        f.tag[5] ^= 0x80;
        mac_err(open(&k.0, &g0, &g1, &f));
        let mut f = p.file.clone();
        f.ciphertext.pop();
        mac_err(open(&k.0, &g0, &g1, &f));
        // A grant multiplied by g: ratio g^(r+1), a wrong key.
        let mut bad = g1.clone();
        bad.h = group.mul(&g1.h, &group.g());
        mac_err(open(&k.0, &g0, &bad, &p.file));
        // Another file's id on the ciphertext: refused before any key is tried.
        let mut f = p.file.clone();
        f.file_id[0] ^= 1;
        assert!(open(&k.0, &g0, &g1, &f).is_err());
    }

    #[test]
    fn both_flagged_rerun_path() {
        // Synthetic flags: a denied answer with both flagged is a re-run, not a denial; a good
        // answer with both flagged is still opened (the MAC authenticates the key); a corrupted
        // one with both flagged is a re-run.
        let ((pk, ek0, ek1, sk), mut rng) = keys(&Params::insecure_toy(4, 16, 12), 83);
        let k = (pk, ek0, ek1, sk);
        let shape = PolicyShape {
            num_attrs: 2,
            slots: 1,
        };
        let p = publish_file(
            &k.0,
            &k.3,
            &shape,
            &Policy::new(2, vec![vec![0]]).unwrap(),
            b"abc",
            &mut rng,
        )
        .unwrap();
        let group = Group::new(k.0.params.group);
        let (mut d0, mut d1) = grants(&k, &p, &[false, true], 4);
        d0.flagged = true;
        d1.flagged = true;
        assert_eq!(
            d0.h, d1.h,
            "unflagged denial at d = 12 expected with this seed"
        );
        assert_eq!(open_file(&k.0, &d0, &d1, &p.file).unwrap(), Access::Rerun);
        let e = open(&k.0, &d0, &d1, &p.file).unwrap_err().to_string();
        assert!(e.contains("re-run"), "{e}");
        d1.flagged = false;
        assert_eq!(open_file(&k.0, &d0, &d1, &p.file).unwrap(), Access::Denied);
        let (mut o0, mut o1) = grants(&k, &p, &[true, false], 5);
        o0.flagged = true;
        o1.flagged = true;
        assert_eq!(
            open_file(&k.0, &o0, &o1, &p.file).unwrap(),
            Access::Granted(b"abc".to_vec())
        );
        o1.h = group.mul(&o1.h, &group.g());
        assert_eq!(open_file(&k.0, &o0, &o1, &p.file).unwrap(), Access::Rerun);

        // Real failures: a tiny pattern length d = 3 makes conversions fail often; re-running
        // with fresh nonces until an answer is reliable gives the right result every time.
        let ((pk, ek0, ek1, sk), mut rng) = keys(&Params::insecure_toy(1, 8, 3), 84);
        let k = (pk, ek0, ek1, sk);
        let shape = PolicyShape {
            num_attrs: 3,
            slots: 2,
        };
        let policy = Policy::new(3, vec![vec![0, 2], vec![1]]).unwrap();
        let p = publish_file(&k.0, &k.3, &shape, &policy, b"data", &mut rng).unwrap();
        let mut reruns = 0;
        let mut flags = 0;
        for mask in 0..8 {
            let attrs = attrs_of(mask, 3);
            let want = policy.allows(&attrs).unwrap();
            let mut nonce = u64::from(mask) << 32;
            let got = loop {
                let (g0, g1) = grants(&k, &p, &attrs, nonce);
                flags += usize::from(g0.flagged) + usize::from(g1.flagged);
                match open_file(&k.0, &g0, &g1, &p.file).unwrap() {
                    Access::Rerun => {
                        reruns += 1;
                        nonce += 1;
                        assert!(reruns < 200, "too many re-runs");
                    }
                    other => break other,
                }
            };
            match got {
                Access::Granted(m) => {
                    assert!(want, "{attrs:?}");
                    assert_eq!(m, b"data");
                }
                _ => assert!(!want, "{attrs:?}"),
            }
        }
        // With d = 3 both servers flag often: the re-run path was taken, and re-runs with new
        // nonces do end (the conversion offsets make failures independent across nonces).
        assert!(
            reruns > 0 && flags > reruns,
            "{reruns} re-runs, {flags} flags"
        );
    }

    #[test]
    fn bad_inputs_are_errors() {
        let ((pk, ek0, ek1, sk), mut rng) = keys(&Params::insecure_toy(4, 16, 10), 85);
        let k = (pk, ek0, ek1, sk);
        assert!(Policy::new(0, vec![]).is_err());
        assert!(Policy::new(MAX_ATTRS + 1, vec![]).is_err());
        assert!(Policy::new(2, vec![vec![0]; MAX_SLOTS as usize + 1]).is_err());
        assert!(Policy::new(2, vec![vec![0, 1, 0]]).is_err()); // longer than n
        assert!(
            PolicyShape {
                num_attrs: 2,
                slots: 0
            }
            .validate()
            .is_err()
        );
        let shape = PolicyShape {
            num_attrs: 2,
            slots: 1,
        };
        let policy = Policy::new(2, vec![vec![0]]).unwrap();
        assert!(policy.allows(&[true]).is_err());
        assert!(access_program(&shape, &[true, true, true]).is_err());
        // A secret key that does not match the public key.
        let ((_, _, _, other_sk), _) = keys(&Params::insecure_toy(4, 16, 10), 86);
        assert!(publish_file(&k.0, &other_sk, &shape, &policy, b"x", &mut rng).is_err());
        let p = publish_file(&k.0, &k.3, &shape, &policy, b"x", &mut rng).unwrap();
        let req = GrantRequest {
            file_id: p.header.file_id,
            attrs: vec![true, false],
            nonce: 1,
        };
        // Wrong attribute count, wrong file, share of the other server, truncated header.
        let mut r = req.clone();
        r.attrs.push(true);
        assert!(server_grant(&k.0, &k.1, &p.header, &p.shares[0], &r).is_err());
        let mut r = req.clone();
        r.attrs.clear();
        assert!(server_grant(&k.0, &k.1, &p.header, &p.shares[0], &r).is_err());
        let mut r = req.clone();
        r.file_id[3] ^= 1;
        assert!(server_grant(&k.0, &k.1, &p.header, &p.shares[0], &r).is_err());
        assert!(server_grant(&k.0, &k.1, &p.header, &p.shares[1], &req).is_err());
        let mut h = p.header.clone();
        h.policy.pop();
        assert!(h.validate(&k.0).is_err());
        assert!(server_grant(&k.0, &k.1, &h, &p.shares[0], &req).is_err());
        let mut h = p.header.clone();
        h.shape.slots = 2;
        assert!(h.validate(&k.0).is_err());
        // Malformed elements in a header are errors at request time, not panics.
        let mut h = p.header.clone();
        h.key_input.a = Elem(vec![1]);
        assert!(h.validate(&k.0).is_err());
        assert!(server_grant(&k.0, &k.1, &h, &p.shares[0], &req).is_err());
        let mut h = p.header.clone();
        h.policy[2].digits[0].c = Elem(vec![u64::MAX; 9]); // slot 0, attribute 1 (lacking)
        assert!(server_grant(&k.0, &k.1, &h, &p.shares[0], &req).is_err());
        let mut h = p.header.clone();
        h.policy[2].digits.pop();
        assert!(server_grant(&k.0, &k.1, &h, &p.shares[0], &req).is_err());
        let mut s = p.shares[0].clone();
        s.party = 2;
        assert!(s.validate(&k.0).is_err());
        let mut s = p.shares[0].clone();
        s.source.y_bound = BigInt::from(1) << 4000;
        assert!(s.validate(&k.0).is_err());

        // Answers: order, mismatched requests, elements outside the group, malformed bytes.
        let (g0, g1) = grants(&k, &p, &[true, false], 1);
        assert!(open(&k.0, &g1, &g0, &p.file).is_err());
        let mut g = g1.clone();
        g.nonce = 2;
        assert!(open(&k.0, &g0, &g, &p.file).is_err());
        let mut g = g1.clone();
        g.h = Elem(vec![0; Group::new(k.0.params.group).limbs()]);
        assert!(g.validate(&k.0).is_err());
        assert!(open(&k.0, &g0, &g, &p.file).is_err());
        let mut g = g1.clone();
        g.h = Elem(vec![1]);
        assert!(open(&k.0, &g0, &g, &p.file).is_err());
        let bytes = to_bytes(&g0).unwrap();
        assert!(from_bytes::<GrantShare>(&bytes[..bytes.len() - 1]).is_err());
        assert!(from_bytes::<EncryptedFile>(&bytes).is_err()); // another type's tag
        // The payload ends with `flagged` (a bool) and `mults` (one varint byte here).
        assert!(g0.mults < 128);
        let mut bad = bytes.clone();
        let at = bad.len() - 2;
        bad[at] = 2; // not a bool
        assert!(from_bytes::<GrantShare>(&bad).is_err());
        assert!(from_bytes::<GrantShare>(b"CTRE garbage").is_err());
        // The other envelopes round-trip.
        let h: FileHeader = from_bytes(&to_bytes(&p.header).unwrap()).unwrap();
        h.validate(&k.0).unwrap();
        let s: ServerShare = from_bytes(&to_bytes(&p.shares[1]).unwrap()).unwrap();
        s.validate(&k.0).unwrap();
        let f: EncryptedFile = from_bytes(&to_bytes(&p.file).unwrap()).unwrap();
        assert_eq!(f, p.file);
        let q: GrantRequest = from_bytes(&to_bytes(&req).unwrap()).unwrap();
        q.validate().unwrap();
        let pol: Policy = from_bytes(&to_bytes(&policy).unwrap()).unwrap();
        assert_eq!(pol, policy);
        assert!(params_for(&shape, 0, GroupId::P1536, 8).is_err());
    }
}
