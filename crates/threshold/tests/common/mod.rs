//! Helpers for the multi-party tests.
#![allow(dead_code)]

use std::future::Future;

use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
use coterie_spdz::{Counts, Engine, InsecureDealer, VecPrep, Z2k};
use coterie_threshold::{LtParams, Params};

pub type Eng = Engine<Z2k, VecPrep<Z2k>>;

/// Material for `bundles` gate bundles of shape `lt`, `decs` decryptions, `bits` extra bits,
/// `inputs` input masks per owner and `randoms` extra randoms, dealt by the **insecure**
/// test dealer.
pub fn counts(
    lt: &LtParams,
    bundles: usize,
    decs: usize,
    bits: usize,
    inputs: usize,
    randoms: usize,
) -> Counts {
    Counts {
        triples: bundles * lt.mults_per_bundle(),
        bits: bundles * lt.bits_per_bundle() + bits,
        randoms: 3 * decs + randoms,
        masks_per_party: inputs,
    }
}

pub fn deal(n: usize, k: u32, c: Counts) -> Vec<VecPrep<Z2k>> {
    let ring = Z2k::new(k, 64).unwrap();
    let mut rng = rand::rng();
    let dealer = InsecureDealer::new_insecure(ring, n, &mut rng).unwrap();
    dealer.deal(c, &mut rng)
}

/// Runs party `i`'s closure over an in-memory mesh for every party; returns the results.
pub async fn run_mem<T, F, Fut>(
    preps: Vec<VecPrep<Z2k>>,
    f: F,
) -> Vec<Result<T, coterie_threshold::Error>>
where
    T: Send + 'static,
    F: Fn(usize, Eng, InMemoryMesh) -> Fut,
    Fut: Future<Output = Result<T, coterie_threshold::Error>> + Send + 'static,
{
    run_mem_opts(preps, MeshOptions::default(), f).await
}

/// [`run_mem`] with mesh options.
pub async fn run_mem_opts<T, F, Fut>(
    preps: Vec<VecPrep<Z2k>>,
    opts: MeshOptions,
    f: F,
) -> Vec<Result<T, coterie_threshold::Error>>
where
    T: Send + 'static,
    F: Fn(usize, Eng, InMemoryMesh) -> Fut,
    Fut: Future<Output = Result<T, coterie_threshold::Error>> + Send + 'static,
{
    let n = preps.len();
    let meshes = InMemoryMesh::group(n, opts);
    let mut hs = Vec::new();
    for (i, (mesh, prep)) in meshes.into_iter().zip(preps).enumerate() {
        assert_eq!(mesh.id(), i);
        hs.push(tokio::spawn(f(i, Engine::new(prep), mesh)));
    }
    let mut out = Vec::new();
    for h in hs {
        out.push(h.await.unwrap());
    }
    out
}

pub fn params(n: usize, k: u32, m: u32, b: u32) -> Params {
    Params::toy(n, k, m, b).unwrap()
}
