//! Flooding-free joint decryption of a multi-key (TFHE) LWE ciphertext through the threshold
//! engine: every party holds its own segment of a concatenated LWE key (multi-key TFHE, seed
//! 003), and the parties decrypt one ciphertext under `s_0 ‖ s_1 ‖ … ‖ s_{K−1}` by MPC rounding
//! (seed 000) instead of smudged partial decryptions.
//!
//! This crate does not know TFHE: the caller passes its key segment as integers and the
//! ciphertext as the workspace's one LWE type on 64-bit words ([`LweCiphertext`]; for AKÖ
//! multi-key TFHE: `coterie_tfhe::mk::decrypt::to_mpc_rounding_form`, `q = 2^32`, `p = 4`).

use coterie_net::Mesh;
use coterie_spdz::{Counts, Engine, OtPrep, Z2k};

use crate::gates::prep_bundles;
use crate::pipelined::decrypt_pipelined;
use crate::{Error, GatePool, LweCiphertext, Params, Result, SharedKey};

/// Tag of the holder's ciphertext broadcast.
const TAG_MPC_CT: u32 = 0x4D4B_1002;

/// Digit width of the threshold gates used for multi-key ciphertexts (`q = 2^32`, `p = 4`).
pub const MPC_DIGIT_BITS: u32 = 6;

/// Input masks and random values the engine needs besides the gates (a few openings).
const RANDOMS: usize = 16;

/// Flooding-free joint decryption of one multi-key ciphertext (held by party `holder`, which
/// passes `Some(ct)`; the others pass `None` and receive it) by MPC rounding: every party inputs
/// its own LWE key segment `segment` (all segments of the same length, party-major like the
/// ciphertext's mask) into a SPDZ_2k (`Z_2^k`, `s = 64`, `k` the ciphertext's modulus bits)
/// engine ([`SharedKey::input_concatenated_segments`]), the gates are prepared, and the
/// pipelined 5-round decryption rounds the phase. The engine's triples, bits and masks come from
/// coterie-spdz's OT producer ([`OtPrep`], maliciously secure with abort), made here for this
/// one decryption. No smudging noise is added, so no party learns anything beyond the output
/// bit (seed 000, Theorem 1). Returns the message as a bit (`true` for 1); a message other than
/// 0 or 1 is an error.
///
/// # Example
///
/// Two parties over the in-memory mesh, each with its own (toy, **insecure**: tiny) key segment:
///
/// ```
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
/// use coterie_threshold::LweCiphertext;
/// use coterie_threshold::mk_rounding::decrypt_by_mpc_rounding;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let segments = [vec![1i64, 0, 1, 1], vec![0i64, 1, 1, 0]];
/// let key: Vec<i64> = segments.concat();
/// let ct = LweCiphertext::encrypt_with_secret_key(&key, 1, 5, 32, 2, &mut rand::rng());
/// let mut tasks = Vec::new();
/// for (mut mesh, seg) in InMemoryMesh::group(2, MeshOptions::default()).into_iter().zip(segments) {
///     let ct = (mesh.id() == 0).then(|| ct.clone());
///     tasks.push(tokio::spawn(async move {
///         let bit = decrypt_by_mpc_rounding(&mut mesh, &seg, 0, ct.as_ref()).await;
///         mesh.close().await.ok();
///         bit
///     }));
/// }
/// for t in tasks {
///     assert!(t.await.unwrap().unwrap());
/// }
/// # });
/// ```
pub async fn decrypt_by_mpc_rounding<M: Mesh>(
    mesh: &mut M,
    segment: &[i64],
    holder: usize,
    ct: Option<&LweCiphertext>,
) -> Result<bool> {
    let (me, k) = (mesh.id(), mesh.n());
    let n = segment.len();
    if holder >= k {
        return Err(Error::Params(format!(
            "holder {holder} is not one of the {k} parties"
        )));
    }
    let ct: LweCiphertext = if me == holder {
        let c = ct
            .ok_or_else(|| Error::Ciphertext("the holder must pass the ciphertext".into()))?
            .clone();
        let bytes = c.to_bytes();
        for to in (0..k).filter(|&j| j != me) {
            mesh.send_tagged(to, TAG_MPC_CT, &bytes)
                .await
                .map_err(coterie_spdz::Error::from)?;
        }
        c
    } else {
        let bytes: Vec<u8> = mesh
            .recv_tagged(holder, TAG_MPC_CT)
            .await
            .map_err(coterie_spdz::Error::from)?;
        LweCiphertext::from_bytes(&bytes).map_err(|e| Error::Malformed {
            party: holder,
            cause: e.to_string(),
        })?
    };
    if ct.dimension() != k * n {
        return Err(Error::Ciphertext(format!(
            "ciphertext of dimension {}, expected {}",
            ct.dimension(),
            k * n
        )));
    }
    let params = Params::for_lwe(k * n, ct.modulus_log(), ct.message_log(), MPC_DIGIT_BITS)?;
    ct.check(&params)
        .map_err(|e| Error::Ciphertext(e.to_string()))?;
    let lt = params.lt()?;
    let counts = Counts {
        triples: lt.mults_per_bundle(),
        bits: lt.bits_per_bundle(),
        randoms: RANDOMS,
        masks_per_party: n,
    };
    let ring = Z2k::new(ct.modulus_log(), 64)?;
    let mut producer = OtPrep::setup(mesh, ring).await?;
    let prep = producer.produce(mesh, counts).await?;
    let mut eng = Engine::new(prep);
    let lengths = vec![n; k];
    let shared = SharedKey::input_concatenated_segments(&mut eng, mesh, segment, &lengths).await?;
    let (bundles, _) = prep_bundles(&mut eng, mesh, &lt, 1, 0).await?;
    let mut pool = GatePool::new(lt);
    pool.push(bundles)?;
    let out = decrypt_pipelined(&mut eng, mesh, &params, &shared, &[ct], &mut pool, 1).await?;
    match out.as_slice() {
        [1] => Ok(true),
        [0] => Ok(false),
        other => Err(Error::Invariant(format!(
            "MPC rounding gave {other:?}, not a bit"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coterie_net::local::run_parties;
    use coterie_net::{InMemoryMesh, MeshOptions};

    async fn run(
        segments: Vec<Vec<i64>>,
        ct: Option<LweCiphertext>,
        holder: usize,
    ) -> Vec<Result<bool>> {
        let meshes = InMemoryMesh::group(segments.len(), MeshOptions::default());
        let mut segments = segments.into_iter();
        run_parties(meshes, |mut mesh| {
            let seg = segments.next().expect("a key segment per party");
            let ct = (mesh.id() == holder).then(|| ct.clone()).flatten();
            async move {
                let r = decrypt_by_mpc_rounding(&mut mesh, &seg, holder, ct.as_ref()).await;
                mesh.close().await.ok();
                r
            }
        })
        .await
    }

    /// Two parties, separate key segments, both messages, with noise of either sign: the same
    /// bit as the plaintext decryption under the concatenated key.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_parties_decrypt_both_bits() {
        let mut rng = rand::rng();
        let n = 24;
        let segments: Vec<Vec<i64>> = (0..2)
            .map(|_| (0..n).map(|_| i64::from(rand::random::<bool>())).collect())
            .collect();
        let key: Vec<i64> = segments.concat();
        for (mu, e) in [(1u64, 1 << 20), (0, -(1 << 20)), (1, -77), (0, 3)] {
            let ct = LweCiphertext::encrypt_with_secret_key(&key, mu, e, 32, 2, &mut rng);
            let got = run(segments.clone(), Some(ct), 1).await;
            for r in got {
                assert_eq!(r.unwrap(), mu == 1, "mu = {mu}, e = {e}");
            }
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn refuses_a_wrong_dimension_and_a_missing_ciphertext() {
        let mut rng = rand::rng();
        let segments = vec![vec![1i64, 0, 1], vec![0i64, 1, 1]];
        let short = LweCiphertext::encrypt_with_secret_key(&[1, 0, 1], 1, 0, 32, 2, &mut rng);
        for r in run(segments.clone(), Some(short), 0).await {
            assert!(matches!(r, Err(Error::Ciphertext(_))), "{r:?}");
        }
        let r = run(segments, None, 0).await;
        assert!(matches!(r[0], Err(Error::Ciphertext(_))), "{:?}", r[0]);
        assert!(r[1].is_err(), "the other party must not hang or succeed");
    }
}
