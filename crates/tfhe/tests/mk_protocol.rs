//! Multi-key key generation and decryption over an in-memory mesh: honest runs, key material
//! on disk, and tamper tests.

use coterie_math::prg::Csprng;
use coterie_net::tamper::{RuleCounter, Select, TamperMesh};
use coterie_net::{Blob, InMemoryMesh, Mesh, MeshOptions};
use coterie_tfhe::mk::decrypt::default_smudging_std;
use coterie_tfhe::mk::eval::{MkServerKey, embed};
use coterie_tfhe::mk::params::MkParams;
use coterie_tfhe::mk::protocol::*;

/// How a test makes one party cheat: it adds rules to that party's tampering mesh and returns
/// their counters (checked to have fired).
type Cheat = Box<dyn FnOnce(&mut TamperMesh<InMemoryMesh>) -> Vec<RuleCounter> + Send>;

fn run_keygen(
    params: MkParams,
    k: usize,
    cheat: Option<(usize, Cheat)>,
) -> Vec<coterie_tfhe::Result<KeygenOutput>> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let meshes = InMemoryMesh::group(k, MeshOptions::default());
        let mut tasks = Vec::new();
        let (cheater, mut rules) = match cheat {
            Some((p, f)) => (Some(p), Some(f)),
            None => (None, None),
        };
        for m in meshes {
            let mut m = TamperMesh::new(m);
            let counters = if Some(m.id()) == cheater {
                rules.take().map(|f| f(&mut m)).unwrap_or_default()
            } else {
                Vec::new()
            };
            let params = params.clone();
            let opts = KeygenOptions::default();
            tasks.push(tokio::spawn(async move {
                let mut rng = Csprng::new();
                let r = keygen(&mut m, &params, &opts, &mut rng).await;
                if r.is_ok() {
                    m.close().await.unwrap();
                }
                // At least one rule must have fired: a peer that detects the first tampered
                // message aborts the mesh, which can stop the cheater before it sends the
                // message another rule was waiting for (the cheater's sends are sequential).
                if !counters.is_empty() {
                    let fired: u64 = counters.iter().map(|c| c.fired()).sum();
                    assert!(fired > 0, "no tamper rule fired");
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

/// Flips bit 0 of a byte in the second half of `b` that has its top bit set: inside a share's
/// data words whatever their encoding (a varint byte stays a continuation byte), so the share
/// still decodes, with one word changed.
fn change_one_word(b: &mut Blob) {
    // Flip one bit inside a long postcard varint, which only a torus word can be: a run of four
    // continuation bytes (high bit set) encodes a value of at least 2^28, longer than any length
    // prefix of the toy sets' vectors, so the share still decodes and only its value changes.
    // (Flipping a bit of an arbitrary continuation byte could hit a length prefix and make the
    // share undecodable, which is another check than the echo this test is about.)
    let half = b.0.len() / 2;
    let pos = (half..b.0.len().saturating_sub(4))
        .find(|&i| b.0[i..i + 4].iter().all(|x| x & 0x80 != 0))
        .expect("a share holds long varints");
    b.0[pos + 1] ^= 1;
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
    let dir = coterie_base::fsio::unique_temp_dir("coterie-mk-test");
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

/// Party 1 opens its public-key-share commitment to a different share: its opening chunk
/// (message 2 of tag `TAG_PK_O` to each peer: the `Opening`, the length, the chunk) is changed
/// in transit.
#[test]
fn tampered_public_key_share_opening_is_detected() {
    let cheat: Cheat = Box::new(|m| {
        [0, 2]
            .into_iter()
            .map(|to| m.add(Select::to(to).tag(TAG_PK_O).nth(2).rewrite(change_one_word)))
            .collect()
    });
    let r = run_keygen(MkParams::insecure_toy(3), 3, Some((1, cheat)));
    assert_all_fail(&r, "party 1");
}

/// Party 0 sends a blind-rotate share with one word changed to the last party only (message 1
/// of tag `TAG_BSK` to party 2: the length, then the chunk).
#[test]
fn equivocated_bootstrap_share_is_detected() {
    let cheat: Cheat =
        Box::new(|m| vec![m.add(Select::to(2).tag(TAG_BSK).nth(1).rewrite(change_one_word))]);
    let r = run_keygen(MkParams::insecure_toy(3), 3, Some((0, cheat)));
    assert_all_fail(&r, "from party 0");
}

/// Party 2 sends the same shape-valid garbage blind-rotate share to everybody — a share made
/// for an unrelated key and public key — and claims it in the echo round, so the echo passes
/// and only the self-test can catch it.
#[test]
fn garbage_bootstrap_share_fails_the_self_test() {
    use coterie_tfhe::mk::keygen::{
        Crs, MkSecretKey, bootstrap_key_share, combine_public_key, public_key_share,
    };
    use coterie_tfhe::serialization::to_bytes;
    use std::sync::{Arc, Mutex};
    let params = MkParams::insecure_toy(3);
    let mut rng = Csprng::new();
    // The garbage: party 2's share under a fresh key set and CRS.
    let crs = Crs { seed: [7; 32] };
    let keys: Vec<MkSecretKey> = (0..3)
        .map(|i| MkSecretKey::generate(&params, i, &mut rng).unwrap())
        .collect();
    let shares: Vec<_> = keys
        .iter()
        .map(|k| public_key_share(&params, &crs, k, &mut rng).unwrap())
        .collect();
    let pk = combine_public_key(&params, &crs, &shares).unwrap();
    let garbage =
        to_bytes(&bootstrap_key_share(&params, &pk, &keys[2], &mut rng).unwrap()).unwrap();
    let cheat: Cheat =
        Box::new(move |m| {
            let ksk: Arc<Mutex<Vec<u8>>> = Arc::default();
            let seen = ksk.clone();
            let mut c = Vec::new();
            for to in [0, 1] {
                c.push(
                    m.add(
                        Select::to(to)
                            .tag(TAG_BSK)
                            .nth(0)
                            .replace(&(garbage.len() as u64)),
                    ),
                );
                c.push(
                    m.add(
                        Select::to(to)
                            .tag(TAG_BSK)
                            .nth(1)
                            .replace(&Blob(garbage.clone())),
                    ),
                );
            }
            // Record the (honest) key-switching share, then claim the garbage in the echo.
            c.push(
                m.add(
                    Select::to(0)
                        .tag(TAG_KSK)
                        .nth(1)
                        .rewrite(move |b: &mut Blob| {
                            *seen.lock().unwrap() = b.0.clone();
                        }),
                ),
            );
            c.push(m.add(Select::any().tag(TAG_ECHO).all().rewrite(
                move |d: &mut Vec<[u8; 32]>| {
                    let mut h = blake3::Hasher::new_derive_key("coterie-tfhe mk keygen echo v1");
                    h.update(&(garbage.len() as u64).to_le_bytes());
                    h.update(&garbage);
                    h.update(&ksk.lock().unwrap());
                    d[2] = *h.finalize().as_bytes();
                },
            )));
            c
        });
    let r = run_keygen(params, 3, Some((2, cheat)));
    assert_all_fail(&r, "self-test");
}
