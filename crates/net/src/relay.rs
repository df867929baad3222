//! All-to-all rounds relayed through a king party, authenticated end to end.
//!
//! [`KingMesh`] wraps any [`Mesh`] and changes one thing: [`Mesh::exchange_all_tagged`] (and so
//! [`Mesh::exchange_all`]) goes through a *king* instead of all-to-all. Every other party sends
//! its message to the king; the king sends every party one bundle holding all `n` messages. A
//! round costs `2(n−1)` messages instead of `n(n−1)` (16 parties: 30 instead of 240), and two
//! hops instead of one. Everything else (point-to-point sends and receives, broadcasts, aborts,
//! close, counters) passes straight through to the wrapped mesh, so a protocol runs unchanged
//! over either; [`Mesh::stats`] counts the wrapped mesh's real messages.
//!
//! | exchange over                 | messages per round | hops | sent by the king | by the others |
//! |-------------------------------|--------------------|------|------------------|---------------|
//! | the wrapped mesh (all-to-all) | `n(n−1)`           | 1    | `n−1`            | `n−1`         |
//! | [`KingMesh`]                  | `2(n−1)`           | 2    | `n−1`            | 1             |
//!
//! Set-up ([`KingMesh::new`]) costs one more round on the direct links: every ordered pair of
//! parties other than the king agrees on a fresh MAC key (`(n−1)(n−2)` messages, once).
//!
//! # Authentication, and why the king needs no trust
//!
//! The direct links of the wrapped mesh are authenticated (mutual TLS, or one process for the
//! in-memory mesh). A relayed message is not protected by them: the king could rewrite what an
//! honest party sent (a share, a commitment, a σ of a MAC check — e.g. make `Σσ` look like 0).
//! So when the wrapper is made, each party `i` draws a fresh random 32-byte key `k_{i→j}` for
//! every other non-king party `j` and sends it to `j` over their direct link. In every relayed
//! round `r` (counted by the wrapper from 0; every party calls the same rounds in the same order)
//! with protocol tag `tag`, party `i` attaches for every recipient `j`
//! `mac_{i→j} = BLAKE3_keyed(K_{i→j}; tag ‖ r ‖ n ‖ king ‖ i ‖ j ‖ BLAKE3(payload_i))`, with
//! `K_{i→j} = BLAKE3_keyed(k_{i→j}; domain)` derived once (`r` in 8 little-endian bytes, the
//! other integers in 4: the 60 bytes are one BLAKE3 block, one compression per tag).
//! The king forwards to `j` each payload with the tag meant for `j`; `j` checks every tag (in
//! constant time) and, on a mismatch, aborts the session naming the king and the sender. The
//! king's own message and everything sent to the king travel over direct links and need no
//! tag. What a malicious king (alone, or colluding with malicious parties) can then do:
//!
//! * **change, forge or replay an honest party's message**: it would need `k_{i→j}`, which it
//!   never sees; the tag binds tag, round, sender and recipient, so a message of another round,
//!   step or pair fails too. Caught, except with probability `2^{-256}` per forged message.
//! * **drop a message or refuse to forward**: the recipients time out or abort, an abort, as
//!   when a party stops in an all-to-all round.
//! * **send different values of its own to different parties, or relay a colluding sender's
//!   different messages to different parties**: a malicious sender can do exactly that in an
//!   all-to-all round (point-to-point links give no broadcast), so protocols written for the
//!   all-to-all mesh already deal with it (SPDZ: commitments and the MAC check in each party's
//!   own view, or [`crate::commit::check_consistent`]).
//! * **see the messages**: every party sees every message in an all-to-all round anyway.
//!
//! So an adversary controlling the king gets no power it would not have as a malicious party of
//! the all-to-all round, and an exchange over a [`KingMesh`] keeps the security of the same
//! exchange over the wrapped mesh, with the abort naming the king (or a sender whose tags are
//! wrong: with symmetric keys the recipient cannot tell a bad tag made by the sender from one
//! made by the king, so the abort names both). The messages are *not* summed at the king
//! ([`crate::topology::reduce`] does that): a summed opening leaves nothing to check of each
//! party's share, which is fine for openings of authenticated shares but not for the σ values of
//! a SPDZ MAC check, whose sum is the check itself.
//!
//! The king's uplink carries `(n−1)²` payloads per round instead of `n−1`: for large batches the
//! all-to-all mesh (or another king per round) may be faster on links of limited bandwidth.
//!
//! # Example
//!
//! ```
//! use coterie_net::relay::KingMesh;
//! use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let mut tasks = Vec::new();
//! for m in InMemoryMesh::group(4, MeshOptions::default()) {
//!     tasks.push(tokio::spawn(async move {
//!         let mut m = KingMesh::new(m, 0).await?;
//!         let before = m.stats().msgs_sent.iter().sum::<u64>();
//!         let all: Vec<u64> = m.exchange_all_tagged(9, &(m.id() as u64 * 10)).await?;
//!         let sent = m.stats().msgs_sent.iter().sum::<u64>() - before;
//!         m.close().await?;
//!         Ok::<_, coterie_net::Error>((all, sent))
//!     }));
//! }
//! let mut messages = 0;
//! for t in tasks {
//!     let (all, sent) = t.await.unwrap().unwrap();
//!     assert_eq!(all, [0, 10, 20, 30]);
//!     messages += sent;
//! }
//! assert_eq!(messages, 2 * 3); // 2(n−1), where all-to-all sends n(n−1) = 12
//! # });
//! ```

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize, Serializer};
use subtle::ConstantTimeEq;
use tokio::time::Instant;

use crate::frame::{self, BytesPayload, HEADER_LEN, LEN_PREFIX};
use crate::mesh::{MeshOptions, Stats};
use crate::{Blob, Error, Mesh, PartyId, Result};

/// Tag of the key set-up messages of [`KingMesh::new`] on the direct links.
pub const KEY_SETUP_TAG: u32 = 0x4B49_4E47;

/// Domain separation of the relay tags.
const MAC_DOMAIN: &[u8] = b"coterie-net 2026 king relay tag v2";

/// A MAC key or tag.
type Key = [u8; 32];

/// What a party other than the king sends the king in one relayed round.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contribution {
    /// The sender's message: the postcard encoding of its value (the payload it would send in an
    /// all-to-all round).
    pub payload: Blob,
    /// The tag of the message for each recipient, indexed by party id (`n` entries; the entries
    /// of the sender and of the king are zero and not checked). Encoded as one byte string of
    /// `32n` bytes.
    #[serde(with = "tag_list")]
    pub macs: Vec<[u8; 32]>,
}

/// `Vec<[u8; 32]>` as one byte string (postcard would write the tags byte by byte through serde,
/// which showed in the profile of 16 parties through the king).
mod tag_list {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(tags: &[[u8; 32]], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(tags.as_flattened())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<[u8; 32]>, D::Error> {
        let b = crate::Blob::deserialize(d)?;
        if b.0.len() % 32 != 0 {
            return Err(serde::de::Error::custom(format!(
                "{} bytes of tags are no whole number of 32-byte tags",
                b.0.len()
            )));
        }
        Ok(b.0
            .chunks_exact(32)
            .map(|c| c.try_into().expect("32 bytes"))
            .collect())
    }
}

/// `[u8; 32]` as a byte string (see [`tag_list`]).
mod tag_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(tag: &[u8; 32], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(tag)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[u8; 32], D::Error> {
        let b = crate::Blob::deserialize(d)?;
        b.0.as_slice()
            .try_into()
            .map_err(|_| serde::de::Error::custom(format!("a tag of {} bytes, not 32", b.0.len())))
    }
}

/// One party's message in a [`Bundle`], with the tag its sender made for the bundle's recipient.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The sender's payload (empty at the recipient's own index).
    pub payload: Blob,
    /// The sender's tag for the recipient (zero for the king's own message and at the
    /// recipient's own index). Encoded as a byte string.
    #[serde(with = "tag_bytes")]
    pub mac: [u8; 32],
}

/// What the king sends each other party in one relayed round: every party's message, indexed by
/// party id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bundle {
    /// `n` entries, one per party.
    pub entries: Vec<Entry>,
}

/// [`Entry`] by reference, encoded exactly like it (for the king, which builds `n−1` bundles
/// from the same payloads without copying them).
#[derive(Serialize)]
struct EntryRef<'a> {
    payload: BytesRef<'a>,
    mac: BytesRef<'a>,
}

/// [`Contribution`] by reference, encoded exactly like it (the sender's payload is not copied).
#[derive(Serialize)]
struct ContributionRef<'a> {
    payload: BytesRef<'a>,
    macs: BytesRef<'a>,
}

/// `&[u8]` serialized as one byte string, as [`Blob`] is.
struct BytesRef<'a>(&'a [u8]);

impl Serialize for BytesRef<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

/// [`Bundle`] by reference.
#[derive(Serialize)]
struct BundleRef<'a> {
    entries: Vec<EntryRef<'a>>,
}

/// The pairwise MAC keys of one party, wiped on drop.
struct Keys {
    /// `to[j] = k_{me→j}`.
    to: Vec<Key>,
    /// `from[i] = k_{i→me}`.
    from: Vec<Key>,
}

impl Drop for Keys {
    fn drop(&mut self) {
        for k in self.to.iter_mut().chain(self.from.iter_mut()) {
            zeroize::Zeroize::zeroize(k);
        }
    }
}

/// A [`Mesh`] whose all-to-all rounds go through a king, authenticated end to end; everything
/// else passes through to `M`. See the [module docs](self).
pub struct KingMesh<M> {
    inner: M,
    king: PartyId,
    keys: Keys,
    /// Relayed rounds so far (bound into every tag).
    round: u64,
}

impl<M: Mesh> KingMesh<M> {
    /// Wraps `inner` with party `king` as the relay, after agreeing on fresh pairwise MAC keys
    /// over the direct links (every party of the mesh must call it at the same point, with the
    /// same `king`; one round, `(n−1)(n−2)` messages with tag [`KEY_SETUP_TAG`]).
    ///
    /// # Errors
    /// [`Error::BadParty`] if `king` is not a party; any error of the key exchange.
    pub async fn new(mut inner: M, king: PartyId) -> Result<Self> {
        let (me, n) = (inner.id(), inner.n());
        if king >= n {
            return Err(Error::BadParty { party: king, n, me });
        }
        if u32::try_from(n).is_err() {
            return Err(Error::Config(format!(
                "a king relay takes at most 2^32 - 1 parties, not {n}"
            )));
        }
        let mut keys = Keys {
            to: vec![[0; 32]; n],
            from: vec![[0; 32]; n],
        };
        if me != king {
            let peers = || (0..n).filter(move |&j| j != me && j != king);
            for j in peers() {
                rand::fill(&mut keys.to[j]);
                inner.send_tagged(j, KEY_SETUP_TAG, &keys.to[j]).await?;
            }
            for i in peers() {
                keys.from[i] = inner.recv_tagged(i, KEY_SETUP_TAG).await?;
            }
            for k in keys.to.iter_mut().chain(keys.from.iter_mut()) {
                *k = derive_key(k);
            }
        }
        Ok(Self {
            inner,
            king,
            keys,
            round: 0,
        })
    }

    /// The king.
    pub fn king(&self) -> PartyId {
        self.king
    }

    /// Relayed rounds so far.
    pub fn rounds(&self) -> u64 {
        self.round
    }

    /// The wrapped mesh.
    pub fn inner(&self) -> &M {
        &self.inner
    }

    /// The wrapped mesh, mutably (its exchanges are all-to-all).
    pub fn inner_mut(&mut self) -> &mut M {
        &mut self.inner
    }

    /// Unwraps the mesh (the MAC keys are wiped).
    pub fn into_inner(self) -> M {
        self.inner
    }

    /// The tag of `payload_digest` sent by `from` to `to` in round `round` with `tag`, under the
    /// derived key `key` ([`derive_key`]): one BLAKE3 block (the module docs). Party ids and `n`
    /// fit in 4 bytes ([`KingMesh::new`] refuses larger meshes).
    #[allow(clippy::too_many_arguments)]
    fn mac(
        &self,
        key: &Key,
        tag: u32,
        round: u64,
        from: PartyId,
        to: PartyId,
        payload_digest: &blake3::Hash,
    ) -> Key {
        let mut m = [0u8; 60];
        m[..4].copy_from_slice(&tag.to_le_bytes());
        m[4..12].copy_from_slice(&round.to_le_bytes());
        for (at, x) in [self.inner.n(), self.king, from, to]
            .into_iter()
            .enumerate()
        {
            m[12 + 4 * at..16 + 4 * at].copy_from_slice(&(x as u32).to_le_bytes());
        }
        m[28..].copy_from_slice(payload_digest.as_bytes());
        *blake3::keyed_hash(key, &m).as_bytes()
    }

    /// Aborts the session for a relay failure and returns the error naming `party`.
    async fn fail(&mut self, party: PartyId, cause: String) -> Error {
        self.inner.abort(&cause).await;
        Error::UnexpectedMessage { party, cause }
    }

    /// One relayed round of this party's postcard payload `own`: as the king or as a subject,
    /// then the round counter moves on. Returns every party's payload (this party's entry
    /// unspecified).
    async fn relay_round(&mut self, tag: u32, own: &[u8]) -> Result<Vec<Vec<u8>>> {
        let payloads = if self.inner.id() == self.king {
            self.relay_as_king(tag, own).await
        } else {
            self.relay_as_subject(tag, own).await
        }?;
        self.round += 1;
        Ok(payloads)
    }

    /// One relayed round as a party other than the king: returns every party's payload (empty
    /// at this party's index).
    async fn relay_as_subject(&mut self, tag: u32, payload: &[u8]) -> Result<Vec<Vec<u8>>> {
        let (me, n, king, round) = (self.inner.id(), self.inner.n(), self.king, self.round);
        let digest = blake3::hash(payload);
        let macs: Vec<[u8; 32]> = (0..n)
            .map(|j| {
                if j == me || j == king {
                    [0; 32]
                } else {
                    self.mac(&self.keys.to[j], tag, round, me, j, &digest)
                }
            })
            .collect();
        let contribution = ContributionRef {
            payload: BytesRef(payload),
            macs: BytesRef(macs.as_flattened()),
        };
        self.inner.send_tagged(king, tag, &contribution).await?;
        let deadline = Instant::now() + self.inner.options().timeout;
        let body = self.inner.recv_frame(king, tag, deadline).await?;
        let bundle: Bundle = match frame::decode_payload(payload_of(&body)) {
            Ok(b) => b,
            Err(e) => {
                let cause = format!(
                    "relay round {round} (tag {tag}): bad bundle from the king (party {king}): {e}"
                );
                return Err(self.fail(king, cause).await);
            }
        };
        if bundle.entries.len() != n {
            let cause = format!(
                "relay round {round} (tag {tag}): the king (party {king}) sent {} messages where {n} were due",
                bundle.entries.len()
            );
            return Err(self.fail(king, cause).await);
        }
        let mut out = Vec::with_capacity(n);
        let mut bad = None;
        for (i, e) in bundle.entries.into_iter().enumerate() {
            if i != me && i != king {
                let want = self.mac(
                    &self.keys.from[i],
                    tag,
                    round,
                    i,
                    me,
                    &blake3::hash(&e.payload.0),
                );
                if !bool::from(want.ct_eq(&e.mac)) {
                    bad.get_or_insert(i);
                }
            }
            out.push(if i == me { Vec::new() } else { e.payload.0 });
        }
        if let Some(i) = bad {
            let cause = format!(
                "relay round {round} (tag {tag}): the message of party {i} relayed by the king (party {king}) fails its authentication tag (altered by the king or badly tagged by party {i})"
            );
            return Err(self.fail(king, cause).await);
        }
        Ok(out)
    }

    /// One relayed round as the king: collects every contribution, sends every party its bundle
    /// and returns every party's payload (empty at the king's index).
    async fn relay_as_king(&mut self, tag: u32, payload: &[u8]) -> Result<Vec<Vec<u8>>> {
        let (me, n, round) = (self.inner.id(), self.inner.n(), self.round);
        let deadline = Instant::now() + self.inner.options().timeout;
        let mut contributions = Vec::with_capacity(n);
        for i in 0..n {
            if i == me {
                contributions.push(Contribution::default());
                continue;
            }
            let body = self.inner.recv_frame(i, tag, deadline).await?;
            let c: Contribution = match frame::decode_payload(payload_of(&body)) {
                Ok(c) => c,
                Err(e) => {
                    let cause = format!(
                        "relay round {round} (tag {tag}): bad message from party {i} to the king: {e}"
                    );
                    return Err(self.fail(i, cause).await);
                }
            };
            if c.macs.len() != n {
                let cause = format!(
                    "relay round {round} (tag {tag}): party {i} sent the king {} tags where {n} were due",
                    c.macs.len()
                );
                return Err(self.fail(i, cause).await);
            }
            contributions.push(c);
        }
        let zero = [0u8; 32];
        let max = self.inner.options().max_frame;
        for j in 0..n {
            if j == me {
                continue;
            }
            let entries = contributions
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    if i == j {
                        EntryRef {
                            payload: BytesRef(&[]),
                            mac: BytesRef(&zero),
                        }
                    } else if i == me {
                        EntryRef {
                            payload: BytesRef(payload),
                            mac: BytesRef(&zero),
                        }
                    } else {
                        EntryRef {
                            payload: BytesRef(&c.payload.0),
                            mac: BytesRef(&c.macs[j]),
                        }
                    }
                })
                .collect();
            let mut f = match frame::encode_data(tag, &BundleRef { entries }, max) {
                Ok(f) => f,
                // e.g. n payloads over the frame bound: the others would wait for a bundle
                // that never comes, so abort and tell them why
                Err(e) => {
                    let cause = format!(
                        "relay round {round} (tag {tag}): the king cannot send its bundle: {e}"
                    );
                    self.inner.abort(&cause).await;
                    return Err(e);
                }
            };
            self.inner.send_frame(j, &mut f).await?;
        }
        Ok(contributions.into_iter().map(|c| c.payload.0).collect())
    }
}

/// `K = BLAKE3_keyed(k; domain)`: the tag key of an exchanged pairwise key `k` (the domain
/// separation, once per key instead of in every tag).
fn derive_key(k: &Key) -> Key {
    *blake3::keyed_hash(k, MAC_DOMAIN).as_bytes()
}

/// The payload of a received frame body.
fn payload_of(body: &[u8]) -> &[u8] {
    body.get(HEADER_LEN..).unwrap_or_default()
}

impl<M: Mesh> Mesh for KingMesh<M> {
    fn id(&self) -> PartyId {
        self.inner.id()
    }
    fn n(&self) -> usize {
        self.inner.n()
    }
    fn options(&self) -> &MeshOptions {
        self.inner.options()
    }
    fn set_timeout(&mut self, timeout: Duration) {
        self.inner.set_timeout(timeout)
    }
    fn stats(&self) -> &Stats {
        self.inner.stats()
    }

    async fn send_frame<'a>(&'a mut self, to: PartyId, frame: &'a mut [u8]) -> Result<()> {
        self.inner.send_frame(to, frame).await
    }

    async fn send_frame_parts<'a>(
        &'a mut self,
        to: PartyId,
        head: &'a mut [u8],
        body: &'a [u8],
    ) -> Result<()> {
        self.inner.send_frame_parts(to, head, body).await
    }

    async fn recv_frame(&mut self, from: PartyId, tag: u32, deadline: Instant) -> Result<Vec<u8>> {
        self.inner.recv_frame(from, tag, deadline).await
    }

    async fn abort(&mut self, reason: &str) -> Error {
        self.inner.abort(reason).await
    }

    async fn close(self) -> Result<()> {
        let Self { inner, keys, .. } = self;
        drop(keys);
        inner.close().await
    }

    /// Relayed through the king (see the [module docs](self)): `2(n−1)` messages, two hops.
    fn exchange_all_tagged<T: Serialize + DeserializeOwned>(
        &mut self,
        tag: u32,
        msg: &T,
    ) -> impl std::future::Future<Output = Result<Vec<T>>> + Send {
        // Encode before the future so that no `T` lives across an await (the future stays
        // `Send` for any `T`), as the default method does.
        let frame = frame::encode_data(tag, msg, self.inner.options().max_frame);
        async move {
            let frame = frame?;
            let own = frame.get(LEN_PREFIX + HEADER_LEN..).unwrap_or_default();
            let me = self.inner.id();
            let payloads = self.relay_round(tag, own).await?;
            payloads
                .iter()
                .enumerate()
                .map(|(from, p)| {
                    let p = if from == me { own } else { p };
                    frame::decode_payload(p).map_err(|cause| Error::Decode { party: from, cause })
                })
                .collect()
        }
    }

    /// Relayed through the king as [`Mesh::exchange_all_tagged`] relays a [`crate::Blob`] (the
    /// same payloads), so a protocol that exchanges byte strings is relayed too.
    async fn exchange_all_bytes(
        &mut self,
        tag: u32,
        bytes: &[u8],
    ) -> Result<Vec<Option<BytesPayload>>> {
        let mut own = Vec::with_capacity(bytes.len() + 10);
        frame::push_leb128(&mut own, bytes.len() as u64);
        own.extend_from_slice(bytes);
        let me = self.inner.id();
        let payloads = self.relay_round(tag, &own).await?;
        payloads
            .into_iter()
            .enumerate()
            .map(|(from, p)| {
                if from == me {
                    return Ok(None);
                }
                BytesPayload::from_payload(p)
                    .map(Some)
                    .map_err(|e| Error::Decode {
                        party: from,
                        cause: e.to_string(),
                    })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::InMemoryMesh;
    use crate::local::run_parties;

    fn opts() -> MeshOptions {
        MeshOptions {
            timeout: Duration::from_secs(5),
            ..MeshOptions::default()
        }
    }

    /// The by-reference encodings the relay sends are the owned types' encodings, the tags go
    /// as byte strings (32 bytes each), and tags of another length are refused.
    #[test]
    fn reference_encodings_match_and_tag_lengths_are_checked() {
        let macs = vec![[0u8; 32], [7; 32], [9; 32]];
        let owned = Contribution {
            payload: Blob(vec![1, 2, 3]),
            macs: macs.clone(),
        };
        let by_ref = ContributionRef {
            payload: BytesRef(&[1, 2, 3]),
            macs: BytesRef(macs.as_flattened()),
        };
        let bytes = postcard::to_allocvec(&owned).unwrap();
        assert_eq!(bytes, postcard::to_allocvec(&by_ref).unwrap());
        // payload (1 + 3 bytes) and tags (1 + 96 bytes: a one-byte varint length, then the tags)
        assert_eq!(bytes.len(), 4 + 1 + 96);
        assert_eq!(postcard::from_bytes::<Contribution>(&bytes).unwrap(), owned);
        let entry = Entry {
            payload: Blob(vec![4]),
            mac: [5; 32],
        };
        let bundle = Bundle {
            entries: vec![entry.clone(), Entry::default()],
        };
        let zero = [0u8; 32];
        let bundle_ref = BundleRef {
            entries: vec![
                EntryRef {
                    payload: BytesRef(&[4]),
                    mac: BytesRef(&[5; 32]),
                },
                EntryRef {
                    payload: BytesRef(&[]),
                    mac: BytesRef(&zero),
                },
            ],
        };
        let bytes = postcard::to_allocvec(&bundle).unwrap();
        assert_eq!(bytes, postcard::to_allocvec(&bundle_ref).unwrap());
        assert_eq!(postcard::from_bytes::<Bundle>(&bytes).unwrap(), bundle);
        // 31 bytes of tags, and a 31-byte entry tag: refused
        let short = postcard::to_allocvec(&ContributionRef {
            payload: BytesRef(&[]),
            macs: BytesRef(&[0; 31]),
        })
        .unwrap();
        assert!(postcard::from_bytes::<Contribution>(&short).is_err());
        let short = postcard::to_allocvec(&BundleRef {
            entries: vec![EntryRef {
                payload: BytesRef(&[]),
                mac: BytesRef(&[0; 31]),
            }],
        })
        .unwrap();
        assert!(postcard::from_bytes::<Bundle>(&short).is_err());
    }

    #[test]
    fn mac_binds_every_field() {
        let mut g = InMemoryMesh::group(3, opts());
        let m = g.pop().unwrap();
        let k = KingMesh {
            inner: m,
            king: 0,
            keys: Keys {
                to: vec![[1; 32]; 3],
                from: vec![[1; 32]; 3],
            },
            round: 0,
        };
        let d = blake3::hash(b"x");
        let base = k.mac(&[1; 32], 5, 0, 1, 2, &d);
        assert_eq!(base, k.mac(&[1; 32], 5, 0, 1, 2, &d));
        for other in [
            k.mac(&[2; 32], 5, 0, 1, 2, &d),
            k.mac(&[1; 32], 6, 0, 1, 2, &d),
            k.mac(&[1; 32], 5, 1, 1, 2, &d),
            k.mac(&[1; 32], 5, 0, 2, 1, &d),
            k.mac(&[1; 32], 5, 0, 1, 2, &blake3::hash(b"y")),
        ] {
            assert_ne!(base, other);
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn bad_king_is_refused_and_single_party_works() {
        let g = InMemoryMesh::group(2, opts());
        let r = run_parties(g, |m| async move { KingMesh::new(m, 2).await.err() }).await;
        for e in r {
            assert!(matches!(e, Some(Error::BadParty { party: 2, .. })), "{e:?}");
        }
        let g = InMemoryMesh::group(1, opts());
        let r = run_parties(g, |m| async move {
            let mut k = KingMesh::new(m, 0).await.unwrap();
            let v: Vec<u8> = k.exchange_all_tagged(1, &7u8).await.unwrap();
            k.close().await.unwrap();
            v
        })
        .await;
        assert_eq!(r, vec![vec![7u8]]);
    }
}
