//! Multi-party tests of coterie-spdz, by subject: the engine against plaintext over the
//! in-memory mesh and TLS ([`engine`]), openings and MAC checks ([`openings`]), the F_p-only
//! operations ([`fp`]), the OT producer ([`ot_producer`]), cheating parties through
//! `coterie_net::tamper::TamperMesh` ([`cheating`]) and the on-disk store with the engine and the
//! command-line drivers ([`store`]). Unit tests of single modules live beside the code.

use std::future::Future;
use std::time::Duration;

use coterie_math::bigint::BigInt;
use coterie_net::local::run_parties;
use coterie_net::{InMemoryMesh, Mesh, MeshOptions};

use crate::*;

mod cheating;
mod engine;
mod fp;
mod lanes;
mod matmul;
mod openings;
mod ot_producer;
mod producers;
mod store;

pub(crate) fn opts() -> MeshOptions {
    MeshOptions {
        timeout: Duration::from_secs(20),
        ..MeshOptions::default()
    }
}
/// Runs `f(engine, mesh)` for every party over an in-memory mesh; returns the per-party results.
pub(crate) async fn run_mem<R, P, T, F, Fut>(preps: Vec<P>, f: F) -> Vec<Result<T>>
where
    R: Ring,
    P: Preprocessing<R> + 'static,
    T: Send + 'static,
    F: Fn(Engine<R, P>, InMemoryMesh) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<T>> + Send + 'static,
{
    let meshes = InMemoryMesh::group(preps.len(), opts());
    run_with(meshes, preps, f).await
}

pub(crate) async fn run_with<R, P, T, F, Fut, M>(
    meshes: Vec<M>,
    preps: Vec<P>,
    f: F,
) -> Vec<Result<T>>
where
    R: Ring,
    P: Preprocessing<R> + 'static,
    T: Send + 'static,
    M: Mesh + 'static,
    F: Fn(Engine<R, P>, M) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<T>> + Send + 'static,
{
    let mut preps = preps.into_iter();
    run_parties(meshes, |mesh| {
        let (f, prep) = (f.clone(), preps.next().expect("a preprocessing per party"));
        async move { f(Engine::new(prep), mesh).await }
    })
    .await
}

pub(crate) fn big_prime(bits: u32) -> BigInt {
    // the next prime above 2^(bits-1) + 12345
    let mut x = BigInt::from(1);
    x <<= bits - 1;
    x += 12345;
    x.next_prime()
}

pub(crate) mod tls {
    use coterie_net::TlsMesh;

    /// Connects `n` parties of a fresh PKI over loopback TLS, in this process.
    pub async fn tls_group(n: usize) -> Vec<TlsMesh> {
        coterie_net::local::tls_group(n, super::opts(), None)
            .await
            .unwrap()
            .0
    }
}
