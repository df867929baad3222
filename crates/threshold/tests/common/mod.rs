//! Helpers for the multi-party tests.
#![allow(dead_code)]

use std::future::Future;

use coterie_net::local::run_parties;
use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
use coterie_spdz::{Counts, Engine, InsecureDealer, VecPrep, Z2k};
use coterie_threshold::ciphertext::LweCiphertext;
use coterie_threshold::gates::{GatePool, prep_bundles};
use coterie_threshold::keys::SharedKey;
use coterie_threshold::online::decrypt;
use coterie_threshold::pipelined::{decrypt_pipelined, decrypt_strict_single_check};
use coterie_threshold::{Error, LtParams, Params};

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
    let dealer = InsecureDealer::insecure_new(ring, n, &mut rng).unwrap();
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
    let meshes = InMemoryMesh::group(preps.len(), opts);
    let mut preps = preps.into_iter();
    run_parties(meshes, |mesh| {
        let prep = preps.next().expect("a preprocessing per party");
        f(mesh.id(), Engine::new(prep), mesh)
    })
    .await
}

pub fn params(n: usize, k: u32, m: u32, b: u32) -> Params {
    Params::insecure_toy(n, k, m, b).unwrap()
}

/// Imports `sk` from party 0, prepares one bundle per ciphertext, decrypts.
pub async fn decrypt_imported(
    parties: usize,
    p: Params,
    sk: Vec<i64>,
    cts: Vec<LweCiphertext>,
) -> Vec<Result<Vec<u64>, Error>> {
    decrypt_imported_mode(parties, p, sk, cts, 0).await
}

pub async fn decrypt_imported_mode(
    parties: usize,
    p: Params,
    sk: Vec<i64>,
    cts: Vec<LweCiphertext>,
    mode: u8,
) -> Vec<Result<Vec<u64>, Error>> {
    let lt = p.lt().unwrap();
    let c = counts(&lt, cts.len(), cts.len(), 0, p.n, 2 * cts.len());
    run_mem(deal(parties, p.k, c), move |i, mut eng, mut mesh| {
        let (sk, cts) = (sk.clone(), cts.clone());
        async move {
            let key = SharedKey::import_from_single_holder(
                &mut eng,
                &mut mesh,
                0,
                (i == 0).then_some(&sk[..]),
                p.n,
            )
            .await?;
            let (b, _) = prep_bundles(&mut eng, &mut mesh, &lt, cts.len(), 0).await?;
            let mut pool = GatePool::new(lt);
            pool.push(b)?;
            let out = match mode {
                1 => decrypt_pipelined(&mut eng, &mut mesh, &p, &key, &cts, &mut pool, 1).await,
                2 => {
                    decrypt_strict_single_check(&mut eng, &mut mesh, &p, &key, &cts, &mut pool, 1)
                        .await
                }
                _ => decrypt(&mut eng, &mut mesh, &p, &key, &cts, &mut pool).await,
            };
            mesh.close().await.ok();
            out
        }
    })
    .await
}
