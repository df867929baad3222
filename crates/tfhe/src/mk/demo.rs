//! The multi-key TFHE demo flow behind `coterie party ... mktfhe` (and `coterie demo mktfhe`),
//! run by every party of a mesh; the CLI wires it to a mesh and prints its [`DemoReport`].
//!
//! Each party runs the joint key generation ([`super::protocol::keygen`]; AKÖ, the smallest
//! Table 3 set for at least `K` parties, or the **insecure** toy set), optionally stores its key
//! material; party 0 encrypts the 8 bits of `x` and party 1 those of `y` under their own keys;
//! party 1 sends its ciphertexts to party 0, which evaluates `x > y` (29 multi-key bootstraps);
//! all parties then decrypt the result jointly with partial decryptions (smudging noise, see
//! [`super::decrypt`]) and check it against the plaintext (every party is given `x` and `y` for
//! this check; in a real computation only their owners would know them).
//!
//! The report keeps the party's key and (at party 0) the evaluated ciphertext, so a caller can
//! decrypt it once more by other means (the CLI's `--mpc-rounding`: coterie-threshold's
//! flooding-free MPC rounding on [`super::decrypt::to_mpc_rounding_form`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use coterie_math::prg::Csprng;
use coterie_net::Mesh;

use super::decrypt::default_smudging_std;
use super::eval::{MkServerKey, embed};
use super::keygen::MkSecretKey;
use super::params::MkParams;
use super::protocol::{KeygenOptions, decrypt_bits_from, keygen, save_key_material};
use crate::lwe::LweCiphertext;
use crate::{Error, Result};

const TAG_INPUTS: u32 = 0x4D4B_1001;

/// Bootstraps of the 8-bit comparison `x > y`.
pub const COMPARISON_BOOTSTRAPS: usize = 29;

/// Party 0's evaluation of `x > y`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EvalReport {
    /// Evaluation time, milliseconds.
    pub eval_ms: f64,
    /// Time to bring the evaluation key into the Fourier domain, milliseconds.
    pub fourier_ms: f64,
}

/// What one party did and saw in the demo.
#[derive(Debug)]
pub struct DemoReport {
    /// The parameter set used.
    pub params: MkParams,
    /// Key generation, milliseconds.
    pub keygen_ms: f64,
    /// Key generation phases and their wall time.
    pub phases: Vec<(&'static str, Duration)>,
    /// Where the key material was written (secret key, evaluation key), if asked.
    pub saved: Option<(PathBuf, PathBuf)>,
    /// The evaluation (party 0 only).
    pub eval: Option<EvalReport>,
    /// Joint decryption, milliseconds.
    pub decrypt_ms: f64,
    /// The decrypted `x > y` (checked against the plaintext).
    pub result: bool,
    /// This party's secret key (for a further joint decryption).
    pub key: MkSecretKey,
    /// The evaluated ciphertext of `x > y` (party 0 only).
    pub ciphertext: Option<LweCiphertext<u32>>,
}

/// Runs the demo at this party: key generation among the mesh's parties (at least 2),
/// `x > y` on inputs of parties 0 and 1, joint decryption with smudged partial decryptions,
/// check (an [`Error::Protocol`] if the result is wrong). `insecure_toy` uses the **insecure
/// toy** parameter set (fast; no security) instead of Table 3's; `dir` stores this party's key
/// material; `progress` reports key generation's progress.
///
/// # Example
///
/// Three parties over the in-memory mesh on the **insecure** toy set:
///
/// ```
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
/// use coterie_tfhe::mk::demo::party_demo;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let mut tasks = Vec::new();
/// for mut mesh in InMemoryMesh::group(3, MeshOptions::default()) {
///     tasks.push(tokio::spawn(async move {
///         let none = coterie_base::Progress::none();
///         let r = party_demo(&mut mesh, 9, 5, None, true, none).await;
///         mesh.close().await.ok();
///         r
///     }));
/// }
/// for t in tasks {
///     assert!(t.await.unwrap().unwrap().result);
/// }
/// # });
/// ```
pub async fn party_demo<M: Mesh>(
    mesh: &mut M,
    x: u8,
    y: u8,
    dir: Option<&Path>,
    insecure_toy: bool,
    progress: coterie_base::Progress,
) -> Result<DemoReport> {
    let (me, k) = (mesh.id(), mesh.n());
    if k < 2 {
        return Err(Error::InvalidParameter(
            "the multi-key demo needs at least 2 parties".into(),
        ));
    }
    let params = if insecure_toy {
        MkParams::insecure_toy(k)
    } else {
        MkParams::ako_at_least(k)?
    };
    let mut rng = Csprng::new();
    let t = Instant::now();
    let out = keygen(mesh, &params, &KeygenOptions { progress }, &mut rng).await?;
    let keygen_ms = t.elapsed().as_secs_f64() * 1e3;
    let saved = match dir {
        Some(d) => Some(save_key_material(d, &out)?),
        None => None,
    };
    // Inputs: party 0 encrypts x, party 1 encrypts y (8 bits each, least significant first).
    let encrypt = |v: u8, rng: &mut Csprng| -> Result<Vec<LweCiphertext<u32>>> {
        (0..8)
            .map(|i| out.key.encrypt_bool_local(&params, (v >> i) & 1 == 1, rng))
            .collect()
    };
    let mut result = None;
    let mut eval = None;
    if me == 1 {
        let ys = encrypt(y, &mut rng)?;
        mesh.send_tagged(0, TAG_INPUTS, &ys).await?;
    }
    if me == 0 {
        let xs = encrypt(x, &mut rng)?;
        let ys: Vec<LweCiphertext<u32>> = mesh.recv_tagged(1, TAG_INPUTS).await?;
        if ys.len() != 8 || ys.iter().any(|c| c.dimension() != params.lwe_dimension) {
            return Err(Error::Malformed(
                "party 1 sent malformed input ciphertexts".into(),
            ));
        }
        let t = Instant::now();
        let server = MkServerKey::new(&out.evaluation_key)?;
        let fourier_ms = t.elapsed().as_secs_f64() * 1e3;
        let mut ev = server.evaluator()?;
        let emb = |v: &[LweCiphertext<u32>], slot| {
            v.iter()
                .map(|c| embed(c, slot, k))
                .collect::<Result<Vec<_>>>()
        };
        let (xe, ye) = (emb(&xs, 0)?, emb(&ys, 1)?);
        let t = Instant::now();
        let gt = ev.greater_than(&xe, &ye)?;
        eval = Some(EvalReport {
            eval_ms: t.elapsed().as_secs_f64() * 1e3,
            fourier_ms,
        });
        result = Some(vec![gt]);
    }
    let t = Instant::now();
    let sigma = default_smudging_std(&params, k);
    let bits = decrypt_bits_from(mesh, &out.key, 0, result.as_deref(), 1, sigma, &mut rng).await?;
    let decrypt_ms = t.elapsed().as_secs_f64() * 1e3;
    let got = bits
        .first()
        .copied()
        .ok_or_else(|| Error::Internal("joint decryption gave no result".into()))?;
    if got != (x > y) {
        return Err(Error::Protocol(format!(
            "party {me}: wrong result {got} for {x} > {y}"
        )));
    }
    Ok(DemoReport {
        params,
        keygen_ms,
        phases: out.timings,
        saved,
        eval,
        decrypt_ms,
        result: got,
        key: out.key,
        ciphertext: result.and_then(|mut r| r.pop()),
    })
}

#[cfg(test)]
mod tests {
    use coterie_net::{InMemoryMesh, Mesh, MeshOptions};

    async fn run(k: usize, x: u8, y: u8, toy: bool) {
        let meshes = InMemoryMesh::group(k, MeshOptions::default());
        let mut tasks = Vec::new();
        for mut m in meshes {
            tasks.push(tokio::spawn(async move {
                let r = super::party_demo(&mut m, x, y, None, toy, coterie_base::Progress::none())
                    .await;
                m.close().await.unwrap();
                r
            }));
        }
        for (i, t) in tasks.into_iter().enumerate() {
            let r = t.await.unwrap().unwrap();
            assert_eq!(r.result, x > y);
            assert_eq!(r.eval.is_some(), i == 0, "only party 0 evaluates");
            assert_eq!(r.ciphertext.is_some(), i == 0);
            assert_eq!(r.key.party(), i);
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn demo_three_parties_toy() {
        run(3, 201, 37, true).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn demo_refuses_one_party() {
        let mut m = InMemoryMesh::group(1, MeshOptions::default()).remove(0);
        let r = super::party_demo(&mut m, 1, 2, None, true, coterie_base::Progress::none()).await;
        assert!(matches!(r, Err(crate::Error::InvalidParameter(_))), "{r:?}");
    }

    /// The same with Table 3's 2-party set (real parameters; ~10 s).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore]
    async fn demo_two_parties_ako_k2() {
        run(2, 3, 250, false).await;
    }

    /// Four parties with Table 3's 4-party set: key shares of ~60 MB go through the chunked
    /// transfer (~20 s).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore]
    async fn demo_four_parties_ako_k4() {
        run(4, 128, 127, false).await;
    }
}
