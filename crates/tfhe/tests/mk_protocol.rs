//! Multi-key key generation and decryption over an in-memory mesh: honest runs, key material
//! on disk, and tamper tests.

use coterie_math::prg::Csprng;
use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
use coterie_tfhe::mk::decrypt::default_smudging_std;
use coterie_tfhe::mk::eval::{MkServerKey, embed};
use coterie_tfhe::mk::params::MkParams;
use coterie_tfhe::mk::protocol::*;

fn run_keygen(
    params: MkParams,
    k: usize,
    bad: Option<(usize, InsecureMisbehaviour)>,
) -> Vec<coterie_tfhe::Result<KeygenOutput>> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let meshes = InMemoryMesh::group(k, MeshOptions::default());
        let mut tasks = Vec::new();
        for mut m in meshes {
            let params = params.clone();
            let opts = KeygenOptions {
                progress: false,
                insecure_misbehaviour: bad.filter(|(p, _)| *p == m.id()).map(|(_, b)| b),
            };
            tasks.push(tokio::spawn(async move {
                let mut rng = Csprng::new();
                let r = keygen(&mut m, &params, &opts, &mut rng).await;
                if r.is_ok() {
                    m.close().await.unwrap();
                }
                r
            }));
        }
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.unwrap());
        }
        out
    })
}

#[test]
fn keygen_protocol_then_evaluate_and_decrypt_jointly() {
    let k = 3;
    let params = MkParams::insecure_toy(k);
    let outs: Vec<KeygenOutput> = run_keygen(params.clone(), k, None)
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    for o in &outs[1..] {
        assert_eq!(o.evaluation_key, outs[0].evaluation_key);
        assert_eq!(o.crs, outs[0].crs);
    }
    for (i, o) in outs.iter().enumerate() {
        assert_eq!(o.key.party(), i);
        assert_eq!(o.timings.len(), 4);
    }
    // Key material on disk, reloaded.
    let dir = std::env::temp_dir().join(format!("coterie-mk-test-{}", std::process::id()));
    let (skp, ekp) = save_key_material(&dir, &outs[1]).unwrap();
    let sk = load_secret_key(&skp).unwrap();
    assert_eq!(sk.key.lwe_key(), outs[1].key.lwe_key());
    let ek = load_evaluation_key(&ekp, &params, k).unwrap();
    assert_eq!(ek, outs[1].evaluation_key);
    assert!(load_evaluation_key(&ekp, &params, 1).is_err() || k == 1);
    std::fs::write(&skp, b"not a key").unwrap();
    assert!(load_secret_key(&skp).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
    // Evaluate NAND on inputs of parties 0 and 2, decrypt jointly over a mesh (party 0 holds
    // the result).
    let server = MkServerKey::new(&ek).unwrap();
    let mut ev = server.evaluator().unwrap();
    let mut rng = Csprng::new();
    let mut cts = Vec::new();
    let mut want = Vec::new();
    for (x, y) in [(false, false), (false, true), (true, false), (true, true)] {
        let a = embed(
            &outs[0]
                .key
                .encrypt_bool_local(&params, x, &mut rng)
                .unwrap(),
            0,
            k,
        )
        .unwrap();
        let b = embed(
            &outs[2]
                .key
                .encrypt_bool_local(&params, y, &mut rng)
                .unwrap(),
            2,
            k,
        )
        .unwrap();
        cts.push(ev.nand(&a, &b).unwrap());
        want.push(!(x && y));
    }
    let keys: Vec<_> = outs.into_iter().map(|o| o.key).collect();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let results = rt.block_on(async move {
        let meshes = InMemoryMesh::group(k, MeshOptions::default());
        let mut tasks = Vec::new();
        for (mut m, key) in meshes.into_iter().zip(keys) {
            let cts = cts.clone();
            let params = params.clone();
            tasks.push(tokio::spawn(async move {
                let mut rng = Csprng::new();
                let mine = (m.id() == 0).then_some(&cts[..]);
                let sigma = default_smudging_std(&params, k);
                let r = decrypt_bits_from(&mut m, &key, 0, mine, 16, sigma, &mut rng)
                    .await
                    .unwrap();
                m.close().await.unwrap();
                r
            }));
        }
        let mut v = Vec::new();
        for t in tasks {
            v.push(t.await.unwrap());
        }
        v
    });
    for r in results {
        assert_eq!(r, want);
    }
}

fn assert_all_fail(results: &[coterie_tfhe::Result<KeygenOutput>], needle: &str) {
    let mut named = false;
    for (i, r) in results.iter().enumerate() {
        match r {
            Ok(_) => panic!(
                "party {i} finished key generation despite tampering: {:?}",
                results
                    .iter()
                    .map(|r| r.as_ref().err().map(|e| e.to_string()))
                    .collect::<Vec<_>>()
            ),
            Err(e) => named |= e.to_string().contains(needle),
        }
    }
    assert!(named, "no party reported {needle:?}: {results:?}");
}

#[test]
fn tampered_public_key_share_opening_is_detected() {
    let r = run_keygen(
        MkParams::insecure_toy(3),
        3,
        Some((1, InsecureMisbehaviour::OpenDifferentPublicKeyShare)),
    );
    assert_all_fail(&r, "party 1");
}

#[test]
fn equivocated_bootstrap_share_is_detected() {
    let r = run_keygen(
        MkParams::insecure_toy(3),
        3,
        Some((0, InsecureMisbehaviour::EquivocateBootstrapShare)),
    );
    assert_all_fail(&r, "from party 0");
}

#[test]
fn garbage_bootstrap_share_fails_the_self_test() {
    let r = run_keygen(
        MkParams::insecure_toy(3),
        3,
        Some((2, InsecureMisbehaviour::GarbageBootstrapShare)),
    );
    assert_all_fail(&r, "self-test");
}
