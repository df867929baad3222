//! `coterie ... mktfhe` (coterie-tfhe's `mk` module, issue 7): multi-key TFHE key generation,
//! evaluation and joint decryption at one party.
//!
//! For the lead to wire (`main.rs`): `coterie demo mktfhe --parties K` starts `K` party
//! processes (or an in-memory group), each running `coterie party --config F --id I mktfhe
//! [--x X --y Y] [--dir D] [--insecure-toy]`, which calls [`party_demo`]. Needs `K ≥ 2`.
//!
//! Each party runs the joint key generation (AKÖ, the smallest Table 3 set for at least `K`
//! parties; progress bar on a terminal), optionally stores its key material under `D`; party 0
//! encrypts the 8 bits of `x` and party 1 those of `y` under their own keys; party 1 sends its
//! ciphertexts to party 0, which evaluates `x > y` (29 multi-key bootstraps); all parties then
//! decrypt the result jointly with partial decryptions (smudging noise, see
//! `coterie_tfhe::mk::decrypt`) and check it against the plaintext (every party is given `x` and
//! `y` on the command line for this check; in a real computation only their owners would know
//! them). Timings are printed per phase.

use std::path::Path;
use std::time::Instant;

use coterie_math::prg::Csprng;
use coterie_net::Mesh;
use coterie_tfhe::lwe::LweCiphertext;
use coterie_tfhe::mk::decrypt::default_smudging_std;
use coterie_tfhe::mk::decrypt::to_mpc_rounding_form;
use coterie_tfhe::mk::eval::{MkServerKey, embed};
use coterie_tfhe::mk::keygen::MkSecretKey;
use coterie_tfhe::mk::params::MkParams;
use coterie_tfhe::mk::protocol::{KeygenOptions, decrypt_bits_from, keygen, save_key_material};

const TAG_INPUTS: u32 = 0x4D4B_1001;
const TAG_MPC_CT: u32 = 0x4D4B_1002;

/// Digit width of the threshold gates used for multi-key ciphertexts (`q = 2^32`, `p = 4`).
const MPC_DIGIT_BITS: u32 = 6;

/// Flooding-free joint decryption of one multi-key ciphertext (held by party `holder`) by
/// coterie-threshold's MPC rounding: the ciphertext is converted to `q = 2^32`, `p = 4`
/// ([`to_mpc_rounding_form`]), every party inputs its own LWE key segment into a SPDZ_2k
/// (`Z_2^32`, `s = 64`) engine ([`coterie_threshold::SharedKey::input_concatenated_segments`]),
/// the gates are prepared, and the pipelined 5-round decryption rounds the phase. The engine's
/// triples, bits and masks come from coterie-spdz's OT producer ([`coterie_spdz::OtPrep`],
/// maliciously secure with abort), made here for this one decryption. No smudging noise is
/// added, so no party learns anything beyond the output bit (seed 000, Theorem 1).
pub async fn decrypt_by_mpc_rounding<M: Mesh>(
    mesh: &mut M,
    key: &MkSecretKey,
    holder: usize,
    ct: Option<&LweCiphertext<u32>>,
) -> Result<bool, String> {
    use coterie_spdz::{Counts, Engine, OtPrep, Z2k};
    use coterie_threshold::gates::prep_bundles;
    use coterie_threshold::pipelined::decrypt_pipelined;
    use coterie_threshold::{GatePool, Params, SharedKey};
    let (me, k) = (mesh.id(), mesh.n());
    let n = key.lwe_key().dimension();
    let ct: LweCiphertext<u32> = if me == holder {
        let c = ct.ok_or("the holder must pass the ciphertext")?.clone();
        for to in (0..k).filter(|&j| j != me) {
            mesh.send_tagged(to, TAG_MPC_CT, &c)
                .await
                .map_err(|e| e.to_string())?;
        }
        c
    } else {
        mesh.recv_tagged(holder, TAG_MPC_CT)
            .await
            .map_err(|e| e.to_string())?
    };
    if ct.dimension() != k * n {
        return Err(format!(
            "ciphertext of dimension {}, expected {}",
            ct.dimension(),
            k * n
        ));
    }
    let tct = to_mpc_rounding_form(&ct);
    let params = Params::for_lwe(k * n, tct.modulus_log(), tct.message_log(), MPC_DIGIT_BITS)
        .map_err(|e| e.to_string())?;
    let lt = params.lt().map_err(|e| e.to_string())?;
    let counts = Counts {
        triples: lt.mults_per_bundle(),
        bits: lt.bits_per_bundle(),
        randoms: 16,
        masks_per_party: n,
    };
    let ring = Z2k::spdz2k_32();
    let mut producer = OtPrep::setup(mesh, ring).await.map_err(|e| e.to_string())?;
    let prep = producer
        .produce(mesh, counts)
        .await
        .map_err(|e| e.to_string())?;
    let mut eng = Engine::new(prep);
    let segment: Vec<i64> = key.lwe_key_segment().iter().map(|&x| x as i64).collect();
    let lengths = vec![n; k];
    let shared = SharedKey::input_concatenated_segments(&mut eng, mesh, &segment, &lengths)
        .await
        .map_err(|e| e.to_string())?;
    let (bundles, _) = prep_bundles(&mut eng, mesh, &lt, 1, 0)
        .await
        .map_err(|e| e.to_string())?;
    let mut pool = GatePool::new(lt);
    pool.push(bundles).map_err(|e| e.to_string())?;
    let out = decrypt_pipelined(&mut eng, mesh, &params, &shared, &[tct], &mut pool, 1)
        .await
        .map_err(|e| e.to_string())?;
    match out.as_slice() {
        [1] => Ok(true),
        [0] => Ok(false),
        other => Err(format!("MPC rounding gave {other:?}, not a bit")),
    }
}

/// Runs the demo at this party: key generation among the mesh's parties, `x > y` on inputs of
/// parties 0 and 1, joint decryption, check. `insecure_toy` uses the **insecure toy** parameter
/// set (fast; no security) instead of Table 3's.
pub async fn party_demo<M: Mesh>(
    mesh: &mut M,
    x: u8,
    y: u8,
    dir: Option<&Path>,
    insecure_toy: bool,
    mpc_rounding: bool,
) -> Result<(), String> {
    let (me, k) = (mesh.id(), mesh.n());
    if k < 2 {
        return Err("the multi-key demo needs at least 2 parties".into());
    }
    let params = if insecure_toy {
        MkParams::insecure_toy(k)
    } else {
        MkParams::ako_at_least(k).map_err(|e| e.to_string())?
    };
    let mut rng = Csprng::new();
    println!(
        "party {me}/{k}: parameters {} (n = {}, N = {}, {:.1} bits claimed), evaluation key {:.1} MB",
        params.name,
        params.lwe_dimension,
        params.polynomial_size,
        params.security_bits,
        params.key_bytes(k) as f64 / 1e6
    );
    let t = Instant::now();
    let out = keygen(
        mesh,
        &params,
        // TODO(lead): pass `coterie::progress_bar(..)` here once it lands (was an indicatif bar
        // inside coterie-tfhe).
        &KeygenOptions::default(),
        &mut rng,
    )
    .await
    .map_err(|e| e.to_string())?;
    let keygen_ms = t.elapsed().as_secs_f64() * 1e3;
    let phases: Vec<String> = out
        .timings
        .iter()
        .map(|(n, d)| format!("{n} {:.0} ms", d.as_secs_f64() * 1e3))
        .collect();
    println!(
        "party {me}: key generation {keygen_ms:.0} ms ({})",
        phases.join(", ")
    );
    if let Some(d) = dir {
        let (a, b) = save_key_material(d, &out).map_err(|e| e.to_string())?;
        println!("party {me}: wrote {} and {}", a.display(), b.display());
    }
    // Inputs: party 0 encrypts x, party 1 encrypts y (8 bits each, least significant first).
    let encrypt = |v: u8, rng: &mut Csprng| -> Result<Vec<LweCiphertext<u32>>, String> {
        (0..8)
            .map(|i| {
                out.key
                    .encrypt_bool_local(&params, (v >> i) & 1 == 1, rng)
                    .map_err(|e| e.to_string())
            })
            .collect()
    };
    let mut result = None;
    let mut eval_ms = 0.0;
    if me == 1 {
        let ys = encrypt(y, &mut rng)?;
        mesh.send_tagged(0, TAG_INPUTS, &ys)
            .await
            .map_err(|e| e.to_string())?;
    }
    if me == 0 {
        let xs = encrypt(x, &mut rng)?;
        let ys: Vec<LweCiphertext<u32>> = mesh
            .recv_tagged(1, TAG_INPUTS)
            .await
            .map_err(|e| e.to_string())?;
        if ys.len() != 8 || ys.iter().any(|c| c.dimension() != params.lwe_dimension) {
            return Err("party 1 sent malformed input ciphertexts".into());
        }
        let t = Instant::now();
        let server = MkServerKey::new(&out.evaluation_key).map_err(|e| e.to_string())?;
        let prep_ms = t.elapsed().as_secs_f64() * 1e3;
        let mut ev = server.evaluator().map_err(|e| e.to_string())?;
        let emb = |v: &[LweCiphertext<u32>], slot| {
            v.iter()
                .map(|c| embed(c, slot, k).map_err(|e| e.to_string()))
                .collect::<Result<Vec<_>, String>>()
        };
        let (xe, ye) = (emb(&xs, 0)?, emb(&ys, 1)?);
        let t = Instant::now();
        let gt = ev.greater_than(&xe, &ye).map_err(|e| e.to_string())?;
        eval_ms = t.elapsed().as_secs_f64() * 1e3;
        println!(
            "party 0: evaluated x > y (29 bootstraps) in {eval_ms:.0} ms ({:.1} ms per bootstrap; \
             Fourier key {prep_ms:.0} ms)",
            eval_ms / 29.0
        );
        result = Some(vec![gt]);
    }
    let t = Instant::now();
    let sigma = default_smudging_std(&params, k);
    let bits = decrypt_bits_from(mesh, &out.key, 0, result.as_deref(), 1, sigma, &mut rng)
        .await
        .map_err(|e| e.to_string())?;
    let dec_ms = t.elapsed().as_secs_f64() * 1e3;
    let got = bits.first().copied().ok_or("no result")?;
    println!(
        "party {me}: joint decryption {dec_ms:.0} ms: ({x} > {y}) = {got} (expected {})",
        x > y
    );
    if got != (x > y) {
        return Err(format!("party {me}: wrong result {got} for {x} > {y}"));
    }
    if mpc_rounding {
        let t = Instant::now();
        let got =
            decrypt_by_mpc_rounding(mesh, &out.key, 0, result.as_ref().and_then(|r| r.first()))
                .await?;
        println!(
            "party {me}: decryption by MPC rounding (no smudging; OT preprocessing included) {:.0} ms: ({x} > {y}) = {got} (expected {})",
            t.elapsed().as_secs_f64() * 1e3,
            x > y
        );
        if got != (x > y) {
            return Err(format!("party {me}: MPC rounding gave {got} for {x} > {y}"));
        }
    }
    if me == 0 {
        println!(
            "party 0: total {:.0} ms (keygen {keygen_ms:.0}, evaluation {eval_ms:.0}, decryption {dec_ms:.0})",
            keygen_ms + eval_ms + dec_ms
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use coterie_net::{InMemoryMesh, Mesh, MeshOptions};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn demo_three_parties_toy() {
        let meshes = InMemoryMesh::group(3, MeshOptions::default());
        let mut tasks = Vec::new();
        for mut m in meshes {
            tasks.push(tokio::spawn(async move {
                let r = super::party_demo(&mut m, 201, 37, None, true, true).await;
                m.close().await.unwrap();
                r
            }));
        }
        for t in tasks {
            t.await.unwrap().unwrap();
        }
    }

    /// The same with Table 3's 2-party set (real parameters; ~10 s).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore]
    async fn demo_two_parties_ako_k2() {
        let meshes = InMemoryMesh::group(2, MeshOptions::default());
        let mut tasks = Vec::new();
        for mut m in meshes {
            tasks.push(tokio::spawn(async move {
                let r = super::party_demo(&mut m, 3, 250, None, false, false).await;
                m.close().await.unwrap();
                r
            }));
        }
        for t in tasks {
            t.await.unwrap().unwrap();
        }
    }

    /// Four parties with Table 3's 4-party set: key shares of ~60 MB go through the chunked
    /// transfer (~20 s).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore]
    async fn demo_four_parties_ako_k4() {
        let meshes = InMemoryMesh::group(4, MeshOptions::default());
        let mut tasks = Vec::new();
        for mut m in meshes {
            tasks.push(tokio::spawn(async move {
                let r = super::party_demo(&mut m, 128, 127, None, false, false).await;
                m.close().await.unwrap();
                r
            }));
        }
        for t in tasks {
            t.await.unwrap().unwrap();
        }
    }
}
