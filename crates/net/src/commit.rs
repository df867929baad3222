//! Domain-separated hash commitments (BLAKE3) and the commit-then-open round used by MAC checks.
//!
//! `C = BLAKE3-derive-key("coterie-net 2025 commitment v1"; len(domain) ‖ domain ‖ sender ‖ r ‖
//! len(m) ‖ m)` with a fresh 256-bit `r` from the OS-seeded generator. Binding the sender's id
//! stops a party from replaying another party's commitment as its own; the caller's `domain`
//! (protocol, session and step) stops reuse across steps.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize as SerializeDerive};
use subtle::ConstantTimeEq;

use crate::{Error, Mesh, PartyId, Result};

const CONTEXT: &str = "coterie-net 2025 commitment v1";
/// Tag of the commitment round of [`commit_open_all`].
pub const TAG_COMMIT: u32 = 0xC07E_0001;
/// Tag of the opening round of [`commit_open_all`].
pub const TAG_OPEN: u32 = 0xC07E_0002;
/// Tag of the digest round of [`check_consistent`].
pub const TAG_ECHO: u32 = 0xC07E_0003;

/// A commitment: 32 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, SerializeDerive, Deserialize)]
pub struct Commitment(pub [u8; 32]);

/// The randomness that opens a commitment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, SerializeDerive, Deserialize)]
pub struct Opening(pub [u8; 32]);

/// Commits party `sender` to `msg` under `domain` with the given randomness.
pub fn commit_with(domain: &str, sender: PartyId, msg: &[u8], r: &Opening) -> Commitment {
    let mut h = blake3::Hasher::new_derive_key(CONTEXT);
    h.update(&(domain.len() as u64).to_le_bytes());
    h.update(domain.as_bytes());
    h.update(&(sender as u64).to_le_bytes());
    h.update(&r.0);
    h.update(&(msg.len() as u64).to_le_bytes());
    h.update(msg);
    Commitment(*h.finalize().as_bytes())
}

/// Commits party `sender` to `msg` under `domain` with fresh randomness.
pub fn commit(domain: &str, sender: PartyId, msg: &[u8]) -> (Commitment, Opening) {
    let mut r = [0u8; 32];
    rand::fill(&mut r);
    let r = Opening(r);
    (commit_with(domain, sender, msg, &r), r)
}

/// Checks an opening (constant-time comparison).
///
/// # Example
///
/// ```
/// use coterie_net::commit::{commit, verify};
/// let (c, r) = commit("demo step 1", 2, b"my value");
/// assert!(verify("demo step 1", 2, b"my value", &c, &r));
/// assert!(!verify("demo step 1", 2, b"another value", &c, &r));
/// assert!(!verify("demo step 1", 3, b"my value", &c, &r), "bound to the sender");
/// ```
pub fn verify(domain: &str, sender: PartyId, msg: &[u8], c: &Commitment, r: &Opening) -> bool {
    commit_with(domain, sender, msg, r).0.ct_eq(&c.0).into()
}

/// Commit-then-open all-to-all: every party commits to its value, all commitments are exchanged,
/// then all values and openings. Returns every party's value by id, or
/// [`Error::CommitmentMismatch`] naming a party whose opening fails (after aborting the mesh).
///
/// # Example
///
/// ```
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions, commit::commit_open_all};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let mut tasks = Vec::new();
/// for mut m in InMemoryMesh::group(3, MeshOptions::default()) {
///     tasks.push(tokio::spawn(async move {
///         let mine = m.id() as u64;
///         let coins: Vec<u64> = commit_open_all(&mut m, "demo coin", &mine).await?;
///         m.close().await?;
///         Ok::<_, coterie_net::Error>(coins)
///     }));
/// }
/// for t in tasks {
///     assert_eq!(t.await.unwrap().unwrap(), vec![0, 1, 2]);
/// }
/// # });
/// ```
pub async fn commit_open_all<M: Mesh, T: Serialize + DeserializeOwned>(
    mesh: &mut M,
    domain: &str,
    value: &T,
) -> Result<Vec<T>> {
    let me = mesh.id();
    let bytes = postcard::to_allocvec(value).map_err(|e| Error::Encode(e.to_string()))?;
    let (c, r) = commit(domain, me, &bytes);
    let cs: Vec<Commitment> = mesh.exchange_all_tagged(TAG_COMMIT, &c).await?;
    let opened: Vec<(Opening, Vec<u8>)> = mesh.exchange_all_tagged(TAG_OPEN, &(r, bytes)).await?;
    let mut out = Vec::with_capacity(opened.len());
    for (j, ((r, m), c)) in opened.into_iter().zip(&cs).enumerate() {
        if !verify(domain, j, &m, c, &r) {
            let e = Error::CommitmentMismatch {
                party: j,
                domain: domain.to_string(),
            };
            mesh.abort(&e.to_string()).await;
            return Err(e);
        }
        out.push(postcard::from_bytes(&m).map_err(|e| Error::Decode {
            party: j,
            cause: e.to_string(),
        })?);
    }
    Ok(out)
}

/// Echo check after a round of point-to-point "broadcasts": every party sends a digest of the
/// values it received (by sender) under `domain`; all digests must agree, else a party sent
/// different values to different parties and the mesh is aborted.
///
/// # Example
///
/// ```
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions, commit::check_consistent};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let mut tasks = Vec::new();
/// for mut m in InMemoryMesh::group(3, MeshOptions::default()) {
///     tasks.push(tokio::spawn(async move {
///         // party 0 "broadcasts" a value point to point; everyone checks they got the same
///         let v: u32 = if m.id() == 0 {
///             m.broadcast(&7u32).await?;
///             7
///         } else {
///             m.recv(0).await?
///         };
///         check_consistent(&mut m, "demo broadcast", &[v]).await?;
///         m.close().await
///     }));
/// }
/// for t in tasks {
///     t.await.unwrap().unwrap();
/// }
/// # });
/// ```
pub async fn check_consistent<M: Mesh, T: Serialize>(
    mesh: &mut M,
    domain: &str,
    values: &[T],
) -> Result<()> {
    let mut h = blake3::Hasher::new_derive_key("coterie-net 2025 broadcast echo v1");
    h.update(&(domain.len() as u64).to_le_bytes());
    h.update(domain.as_bytes());
    for v in values {
        let b = postcard::to_allocvec(v).map_err(|e| Error::Encode(e.to_string()))?;
        h.update(&(b.len() as u64).to_le_bytes());
        h.update(&b);
    }
    let mine = *h.finalize().as_bytes();
    let all: Vec<[u8; 32]> = mesh.exchange_all_tagged(TAG_ECHO, &mine).await?;
    if let Some(j) = all.iter().position(|d| !bool::from(d.ct_eq(&mine))) {
        let reason = format!("broadcast under {domain:?} inconsistent: party {j} saw other values");
        return Err(mesh.abort(&reason).await);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binding_and_domain_separation() {
        let (c, r) = commit("mac-check/1", 2, b"value");
        assert!(verify("mac-check/1", 2, b"value", &c, &r));
        assert!(!verify("mac-check/1", 2, b"valuf", &c, &r));
        assert!(!verify("mac-check/2", 2, b"value", &c, &r));
        assert!(!verify("mac-check/1", 3, b"value", &c, &r));
        let mut r2 = r;
        r2.0[0] ^= 1;
        assert!(!verify("mac-check/1", 2, b"value", &c, &r2));
        // no ambiguity between domain and message boundaries
        let z = Opening([0; 32]);
        assert_ne!(
            commit_with("ab", 0, b"c", &z),
            commit_with("a", 0, b"bc", &z)
        );
        // fresh randomness: two commitments to the same value differ
        assert_ne!(commit("d", 0, b"m").0, commit("d", 0, b"m").0);
    }
}
