//! Who talks to whom in an all-to-all step: the full mesh (everyone sends to everyone, `n(n−1)`
//! messages a round, one hop) or a star around a *king* (everyone sends to the king, who combines
//! or forwards and sends the result back: `2(n−1)` messages, two hops).
//!
//! The star trades latency for messages: it suits many parties or slow links, and openings of
//! authenticated shares (SPDZ), where a king that lies about the combined value is caught by the
//! MAC check that follows. Nothing here makes the king trustworthy: a protocol that cannot check
//! the king's result afterwards must use the full topology (or a consistency check such as
//! [`crate::commit::check_consistent`]).
//!
//! ```
//! use coterie_net::topology::{Topology, reduce};
//! use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let mut tasks = Vec::new();
//! for mut m in InMemoryMesh::group(4, MeshOptions::default()) {
//!     tasks.push(tokio::spawn(async move {
//!         // open a sum of shares through party 0
//!         let share = m.id() as u64 + 1;
//!         let sum = reduce(&mut m, Topology::Star { king: 0 }, 3, &share, |v: Vec<u64>| {
//!             Ok(v.iter().sum::<u64>())
//!         })
//!         .await?;
//!         let sent = m.stats().msgs_sent.iter().sum::<u64>();
//!         m.close().await?;
//!         Ok::<_, coterie_net::Error>((sum, sent))
//!     }));
//! }
//! let mut messages = 0;
//! for t in tasks {
//!     let (sum, sent) = t.await.unwrap().unwrap();
//!     assert_eq!(sum, 10);
//!     messages += sent;
//! }
//! assert_eq!(messages, 2 * 3); // 2(n-1), where the full mesh sends n(n-1) = 12
//! # });
//! ```

use std::future::Future;

use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::time::Instant;

use crate::frame::{self, HEADER_LEN, LEN_PREFIX};
use crate::{Error, Mesh, PartyId, Result};

/// The shape of an all-to-all step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Topology {
    /// Everyone sends to everyone: `n(n−1)` messages, one hop.
    #[default]
    Full,
    /// Everyone sends to `king`, who sends the combined (or collected) result back to everyone:
    /// `2(n−1)` messages, two hops.
    Star {
        /// The party in the middle.
        king: PartyId,
    },
}

/// Every party's value, indexed by party id, as [`Mesh::exchange_all_tagged`] returns it, over
/// `topology`. Over a star the king collects the values and sends the whole vector back (its
/// messages are `n` values long); a vector of the wrong length from the king is an error naming
/// it. Every party must call it with the same topology and tag.
pub fn exchange_all_with<'a, M, T>(
    mesh: &'a mut M,
    topology: Topology,
    tag: u32,
    msg: &T,
) -> impl Future<Output = Result<Vec<T>>> + Send + 'a
where
    M: Mesh,
    T: Serialize + DeserializeOwned + Send + 'a,
{
    let frame = frame::encode_data(tag, msg, mesh.options().max_frame);
    async move {
        let mut frame = frame?;
        match topology {
            Topology::Full => full(mesh, tag, &mut frame, Ok).await,
            Topology::Star { king } => {
                let n = mesh.n();
                let all: Vec<T> = star(mesh, king, tag, &mut frame, Ok).await?;
                if all.len() != n {
                    return Err(Error::Decode {
                        party: king,
                        cause: format!("{} values from the king where {n} were due", all.len()),
                    });
                }
                Ok(all)
            }
        }
    }
}

/// Combines every party's value with `combine` (given the values indexed by party id, this
/// party's own included) and returns the result, over `topology`. Over the full mesh every
/// party combines locally; over a star only the king does, and sends the result to the others.
/// An error from `combine` at the king aborts the session with its text. Every party must call it
/// with the same topology, tag and (in effect) combining function.
pub fn reduce<'a, M, T, R, F>(
    mesh: &'a mut M,
    topology: Topology,
    tag: u32,
    msg: &T,
    combine: F,
) -> impl Future<Output = Result<R>> + Send + 'a
where
    M: Mesh,
    T: Serialize + DeserializeOwned + Send + 'a,
    R: Serialize + DeserializeOwned + Send + 'a,
    F: FnOnce(Vec<T>) -> Result<R> + Send + 'a,
{
    let frame = frame::encode_data(tag, msg, mesh.options().max_frame);
    async move {
        let mut frame = frame?;
        match topology {
            Topology::Full => full(mesh, tag, &mut frame, combine).await,
            Topology::Star { king } => star(mesh, king, tag, &mut frame, combine).await,
        }
    }
}

/// [`reduce`] over the star around `king`: everyone sends `my_value` to the king, the king
/// combines all `n` values and sends the result back; `2(n−1)` messages.
///
/// # Example
///
/// ```
/// use coterie_net::topology::exchange_via_king;
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let mut tasks = Vec::new();
/// for mut m in InMemoryMesh::group(3, MeshOptions::default()) {
///     tasks.push(tokio::spawn(async move {
///         let mine = vec![m.id() as u8; 2];
///         let max = exchange_via_king(&mut m, 2, 0, &mine, |all: Vec<Vec<u8>>| {
///             Ok(all.into_iter().flatten().max())
///         })
///         .await?;
///         m.close().await?;
///         Ok::<_, coterie_net::Error>(max)
///     }));
/// }
/// for t in tasks {
///     assert_eq!(t.await.unwrap().unwrap(), Some(2));
/// }
/// # });
/// ```
pub fn exchange_via_king<'a, M, T, R, F>(
    mesh: &'a mut M,
    king: PartyId,
    tag: u32,
    my_value: &T,
    combine: F,
) -> impl Future<Output = Result<R>> + Send + 'a
where
    M: Mesh,
    T: Serialize + DeserializeOwned + Send + 'a,
    R: Serialize + DeserializeOwned + Send + 'a,
    F: FnOnce(Vec<T>) -> Result<R> + Send + 'a,
{
    reduce(mesh, Topology::Star { king }, tag, my_value, combine)
}

/// The payload of a received frame body.
fn payload_of(body: &[u8]) -> &[u8] {
    body.get(HEADER_LEN..).unwrap_or_default()
}

/// Decodes every party's value: this party's from its own `frame`, the others' from `bodies`.
fn decode_all<T: DeserializeOwned>(
    me: PartyId,
    frame: &[u8],
    bodies: &[Vec<u8>],
) -> Result<Vec<T>> {
    bodies
        .iter()
        .enumerate()
        .map(|(from, body)| {
            let p = if from == me {
                frame.get(LEN_PREFIX + HEADER_LEN..).unwrap_or_default()
            } else {
                payload_of(body)
            };
            frame::decode_payload(p).map_err(|cause| Error::Decode { party: from, cause })
        })
        .collect()
}

/// Receives one frame body from every other party under one deadline (an empty body at `me`).
async fn recv_all<M: Mesh>(mesh: &mut M, tag: u32) -> Result<Vec<Vec<u8>>> {
    let (me, n) = (mesh.id(), mesh.n());
    let deadline = Instant::now() + mesh.options().timeout;
    let mut bodies = Vec::with_capacity(n);
    for from in 0..n {
        bodies.push(if from == me {
            Vec::new()
        } else {
            mesh.recv_frame(from, tag, deadline).await?
        });
    }
    Ok(bodies)
}

/// The full mesh: `frame` to everyone, everyone's value back, combined here.
async fn full<M, T, R, F>(mesh: &mut M, tag: u32, frame: &mut [u8], combine: F) -> Result<R>
where
    M: Mesh,
    T: DeserializeOwned,
    F: FnOnce(Vec<T>) -> Result<R>,
{
    let me = mesh.id();
    for to in 0..mesh.n() {
        if to != me {
            mesh.send_frame(to, frame).await?;
        }
    }
    let bodies = recv_all(mesh, tag).await?;
    combine(decode_all(me, frame, &bodies)?)
}

/// The star: `frame` to the king, the king's combined result back.
async fn star<M, T, R, F>(
    mesh: &mut M,
    king: PartyId,
    tag: u32,
    frame: &mut [u8],
    combine: F,
) -> Result<R>
where
    M: Mesh,
    T: DeserializeOwned,
    R: Serialize + DeserializeOwned,
    F: FnOnce(Vec<T>) -> Result<R>,
{
    let (me, n) = (mesh.id(), mesh.n());
    if king >= n {
        return Err(Error::BadParty { party: king, n, me });
    }
    if me != king {
        mesh.send_frame(king, frame).await?;
        let deadline = Instant::now() + mesh.options().timeout;
        let body = mesh.recv_frame(king, tag, deadline).await?;
        return frame::decode_payload(payload_of(&body))
            .map_err(|cause| Error::Decode { party: king, cause });
    }
    let bodies = recv_all(mesh, tag).await?;
    // A value the king cannot decode or combine would leave the others waiting for its result:
    // abort, so that they learn why at once.
    let combined = decode_all(me, frame, &bodies)
        .and_then(combine)
        .and_then(|r| Ok((frame::encode_data(tag, &r, mesh.options().max_frame)?, r)));
    let (mut out, r) = match combined {
        Ok(x) => x,
        Err(e) => {
            return Err(mesh
                .abort(&format!("the king could not combine: {e}"))
                .await);
        }
    };
    for to in 0..n {
        if to != me {
            mesh.send_frame(to, &mut out).await?;
        }
    }
    Ok(r)
}
