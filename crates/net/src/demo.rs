//! Two small protocols that exercise a mesh end to end (`coterie party ... echo` and `... sum`,
//! `coterie demo echo|sum`): the CLI wires them to a mesh and prints what they return.
//!
//! * [`echo`]: every party greets every other party, which echoes the greeting back; both
//!   directions are checked.
//! * [`sum`]: every party contributes a value in several all-to-all rounds, and all parties check
//!   that they computed the same sum ([`crate::commit::check_consistent`]).

use crate::{Mesh, Result, commit};

/// Tag of the echo replies (the greetings go untagged).
const TAG_ECHO: u32 = 1;

/// Every party sends `"hello from <me> to <j>"` to every other party `j`, checks the greetings
/// it receives, echoes each back and checks its own greetings' echoes. Aborts the mesh (an
/// error naming the peer) on a wrong message. Returns the number of peers.
///
/// # Example
///
/// ```
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let mut tasks = Vec::new();
/// for mut mesh in InMemoryMesh::group(3, MeshOptions::default()) {
///     tasks.push(tokio::spawn(async move {
///         let peers = coterie_net::demo::echo(&mut mesh).await;
///         mesh.close().await.ok();
///         peers
///     }));
/// }
/// for t in tasks {
///     assert_eq!(t.await.unwrap().unwrap(), 2);
/// }
/// # });
/// ```
pub async fn echo<M: Mesh>(mesh: &mut M) -> Result<usize> {
    let (id, n) = (mesh.id(), mesh.n());
    for j in (0..n).filter(|&j| j != id) {
        mesh.send(j, &format!("hello from {id} to {j}")).await?;
    }
    for j in (0..n).filter(|&j| j != id) {
        let m: String = mesh.recv(j).await?;
        if m != format!("hello from {j} to {id}") {
            return Err(mesh.abort(&format!("party {j} sent {m:?}")).await);
        }
        mesh.send_tagged(j, TAG_ECHO, &m).await?;
    }
    for j in (0..n).filter(|&j| j != id) {
        let m: String = mesh.recv_tagged(j, TAG_ECHO).await?;
        if m != format!("hello from {id} to {j}") {
            return Err(mesh.abort(&format!("party {j} echoed {m:?}")).await);
        }
    }
    Ok(n - 1)
}

/// The rounds `rounds` of [`sum`] alone (no consistency check): in each round every party sends
/// `value` to all and sums what it receives (wrapping). Returns the last round's sum (0 for no
/// rounds). A caller that stops after some rounds (e.g. a crash test) calls this with the rounds
/// it runs.
///
/// # Example
///
/// ```
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let mut tasks = Vec::new();
/// for mut mesh in InMemoryMesh::group(2, MeshOptions::default()) {
///     tasks.push(tokio::spawn(async move {
///         let v = mesh.id() as u64 + 1;
///         let s = coterie_net::demo::sum_rounds(&mut mesh, v, 0..2).await;
///         mesh.close().await.ok();
///         s
///     }));
/// }
/// for t in tasks {
///     assert_eq!(t.await.unwrap().unwrap(), 3);
/// }
/// # });
/// ```
pub async fn sum_rounds<M: Mesh>(
    mesh: &mut M,
    value: u64,
    rounds: std::ops::Range<u32>,
) -> Result<u64> {
    let mut sum = 0u64;
    for r in rounds {
        let all: Vec<u64> = mesh.exchange_all_tagged(r, &value).await?;
        sum = all.iter().fold(0u64, |a, b| a.wrapping_add(*b));
    }
    Ok(sum)
}

/// Every party contributes `value` in `rounds` all-to-all rounds ([`sum_rounds`]); then every
/// party checks that every other party computed the same sum. Returns the sum.
///
/// # Example
///
/// ```
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let mut tasks = Vec::new();
/// for mut mesh in InMemoryMesh::group(4, MeshOptions::default()) {
///     tasks.push(tokio::spawn(async move {
///         let v = mesh.id() as u64 + 1;
///         let s = coterie_net::demo::sum(&mut mesh, v, 3).await;
///         mesh.close().await.ok();
///         s
///     }));
/// }
/// for t in tasks {
///     assert_eq!(t.await.unwrap().unwrap(), 10);
/// }
/// # });
/// ```
pub async fn sum<M: Mesh>(mesh: &mut M, value: u64, rounds: u32) -> Result<u64> {
    let sum = sum_rounds(mesh, value, 0..rounds).await?;
    commit::check_consistent(mesh, "coterie demo sum", &[sum]).await?;
    Ok(sum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{InMemoryMesh, MeshOptions};

    /// A party that reports another sum than it computed makes every honest party fail the
    /// consistency check.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sum_detects_a_party_with_another_sum() {
        let mut tasks = Vec::new();
        for mut mesh in InMemoryMesh::group(3, MeshOptions::default()) {
            tasks.push(tokio::spawn(async move {
                let id = mesh.id();
                let r = if id == 2 {
                    match sum_rounds(&mut mesh, 3, 0..2).await {
                        Ok(s) => commit::check_consistent(&mut mesh, "coterie demo sum", &[s + 1])
                            .await
                            .map(|_| s),
                        Err(e) => Err(e),
                    }
                } else {
                    sum(&mut mesh, id as u64, 2).await
                };
                mesh.close().await.ok();
                r
            }));
        }
        let results: Vec<_> = futures_join(tasks).await;
        assert!(results[0].is_err() && results[1].is_err(), "{results:?}");
    }

    async fn futures_join(tasks: Vec<tokio::task::JoinHandle<Result<u64>>>) -> Vec<Result<u64>> {
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.unwrap());
        }
        out
    }
}
