//! `coterie party ... mktfhe` (and, through party processes, `coterie demo mktfhe`): multi-key
//! TFHE key generation, evaluation of `x > y` and joint decryption
//! (`coterie_tfhe::mk::demo::party_demo`), optionally followed by the flooding-free decryption
//! by MPC rounding (`coterie_threshold::mk_rounding`); this wires the two and prints.

use std::path::Path;
use std::time::Instant;

use coterie_net::Mesh;
use coterie_tfhe::mk::decrypt::to_mpc_rounding_form;
use coterie_tfhe::mk::demo::COMPARISON_BOOTSTRAPS;

/// Runs the demo at this party and prints what it did; with `mpc_rounding`, decrypts the result
/// once more by MPC rounding (no smudging; OT preprocessing included) and checks it too.
pub async fn party_demo<M: Mesh>(
    mesh: &mut M,
    x: u8,
    y: u8,
    dir: Option<&Path>,
    insecure_toy: bool,
    mpc_rounding: bool,
) -> Result<(), String> {
    let (me, k) = (mesh.id(), mesh.n());
    let progress = crate::progress::progress_bar(&format!("party {me}"));
    let r = coterie_tfhe::mk::demo::party_demo(mesh, x, y, dir, insecure_toy, progress)
        .await
        .map_err(|e| e.to_string())?;
    let p = &r.params;
    println!(
        "party {me}/{k}: parameters {} (n = {}, N = {}, {:.1} bits claimed), evaluation key {:.1} MB",
        p.name,
        p.lwe_dimension,
        p.polynomial_size,
        p.security_bits,
        p.key_bytes(k) as f64 / 1e6
    );
    let phases: Vec<String> = r
        .phases
        .iter()
        .map(|(n, d)| format!("{n} {:.0} ms", d.as_secs_f64() * 1e3))
        .collect();
    println!(
        "party {me}: key generation {:.0} ms ({})",
        r.keygen_ms,
        phases.join(", ")
    );
    if let Some((a, b)) = &r.saved {
        println!("party {me}: wrote {} and {}", a.display(), b.display());
    }
    if let Some(ev) = &r.eval {
        println!(
            "party 0: evaluated x > y ({COMPARISON_BOOTSTRAPS} bootstraps) in {:.0} ms ({:.1} ms per bootstrap; \
             Fourier key {:.0} ms)",
            ev.eval_ms,
            ev.eval_ms / COMPARISON_BOOTSTRAPS as f64,
            ev.fourier_ms
        );
    }
    println!(
        "party {me}: joint decryption {:.0} ms: ({x} > {y}) = {} (expected {})",
        r.decrypt_ms,
        r.result,
        x > y
    );
    if mpc_rounding {
        let t = Instant::now();
        let ct = r.ciphertext.as_ref().map(to_mpc_rounding_form);
        let segment: zeroize::Zeroizing<Vec<i64>> =
            zeroize::Zeroizing::new(r.key.lwe_key_segment().iter().map(|&x| x as i64).collect());
        let got =
            coterie_threshold::mk_rounding::decrypt_by_mpc_rounding(mesh, &segment, 0, ct.as_ref())
                .await
                .map_err(|e| e.to_string())?;
        println!(
            "party {me}: decryption by MPC rounding (no smudging; OT preprocessing included) {:.0} ms: ({x} > {y}) = {got} (expected {})",
            t.elapsed().as_secs_f64() * 1e3,
            x > y
        );
        if got != (x > y) {
            return Err(format!("party {me}: MPC rounding gave {got} for {x} > {y}"));
        }
    }
    if let Some(ev) = &r.eval {
        println!(
            "party 0: total {:.0} ms (keygen {:.0}, evaluation {:.0}, decryption {:.0})",
            r.keygen_ms + ev.eval_ms + r.decrypt_ms,
            r.keygen_ms,
            ev.eval_ms,
            r.decrypt_ms
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use coterie_net::{InMemoryMesh, Mesh, MeshOptions};

    /// The whole wiring in one process: the toy set, three parties, both decryptions.
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
}
