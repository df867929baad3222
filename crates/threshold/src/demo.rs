//! The end-to-end demo run by every party (for `coterie demo threshold`): distributed key
//! generation inside the ABB, encryption of known messages inside the ABB
//! ([`crate::keys::encrypt_inside_abb`]: fresh LWE samples with secure noise), gate
//! preprocessing, batched decryption in both schedules, and a check of the results.
//!
//! The ciphertexts are made inside the ABB from a public seed (in a deployment a client
//! encrypts under the service's public key, which the service node makes; the demo skips the
//! public key because its `n·w = 46,080` random bits would dominate a short run's OT
//! preprocessing). The preprocessing source is whatever the caller passes: the tests and the CLI
//! demo use the **insecure** dealer of coterie-spdz.

use std::time::Instant;

use coterie_math::prg::Xof;
use coterie_net::Mesh;
use coterie_spdz::{Counts, Engine, Preprocessing, Z2k};

use crate::gates::{GatePool, prep_bundles};
use crate::keys::{KeyDistribution, SharedKey, encrypt_inside_abb};
use crate::online::decrypt;
use crate::params::Params;
use crate::pipelined::decrypt_pipelined;
use crate::{Error, LweCiphertext, Result};

/// Noise width of the demo's ciphertexts ([`crate::keys::PublicKey::secure_noise_bits`] of the
/// paper's parameters; checked in the tests).
pub(crate) const NOISE_BITS: u32 = 45;

/// What one party saw in the demo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoReport {
    /// The encrypted messages.
    pub messages: Vec<u64>,
    /// Strict-schedule decryptions.
    pub strict: Vec<u64>,
    /// Pipelined-schedule decryptions.
    pub pipelined: Vec<u64>,
    /// Milliseconds: key generation + encryption inside the ABB, gate preprocessing, strict,
    /// pipelined.
    pub millis: [u64; 4],
}

/// Preprocessing material one party needs for [`run_demo_party`] with `count` ciphertexts
/// (the paper's parameters).
pub fn demo_counts(count: usize) -> Result<Counts> {
    let p = Params::paper();
    let lt = p.lt()?;
    Ok(Counts {
        triples: 2 * count * lt.mults_per_bundle(),
        bits: 2 * count * lt.bits_per_bundle() + p.n + NOISE_BITS as usize * count,
        randoms: 8 * count + 64, // 64 for the MAC checks of key generation and encryption
        masks_per_party: 0,
    })
}

/// Runs the demo at one party with the paper's parameters and `count` ciphertexts; fails
/// (`Error::Invariant`) if a decryption differs from its message.
pub async fn run_demo_party<M: Mesh, P: Preprocessing<Z2k>>(
    mesh: &mut M,
    prep: P,
    count: usize,
) -> Result<DemoReport> {
    if count == 0 || count > 100_000 {
        return Err(Error::Params("demo needs 1..=100000 ciphertexts".into()));
    }
    let p = Params::paper();
    let lt = p.lt()?;
    let mut eng = Engine::new(prep);
    let t = Instant::now();
    let key = SharedKey::generate(&mut eng, p.n, KeyDistribution::Binary)?;
    let mut rng = Xof::new(&[0xde; 32], b"coterie-threshold/demo/messages", 0);
    let messages: Vec<u64> = (0..count)
        .map(|_| rand::Rng::next_u64(&mut rng) & 1)
        .collect();
    // the masks' seed is public (a common reference string), like the messages of the demo
    let cts: Vec<LweCiphertext> =
        encrypt_inside_abb(&mut eng, mesh, &p, &key, [0x5e; 32], &messages).await?;
    let t_key = t.elapsed();
    let t = Instant::now();
    let (bundles, _) = prep_bundles(&mut eng, mesh, &lt, 2 * count, 0).await?;
    let mut pool = GatePool::new(lt);
    pool.push(bundles)?;
    let t_prep = t.elapsed();
    let t = Instant::now();
    let strict = decrypt(&mut eng, mesh, &p, &key, &cts, &mut pool).await?;
    let t_strict = t.elapsed();
    let t = Instant::now();
    let pipelined = decrypt_pipelined(&mut eng, mesh, &p, &key, &cts, &mut pool, 0).await?;
    let t_pipe = t.elapsed();
    if strict != messages || pipelined != messages {
        return Err(Error::Invariant(
            "a decryption differs from its message".into(),
        ));
    }
    let ms = |d: std::time::Duration| d.as_millis() as u64;
    Ok(DemoReport {
        messages,
        strict,
        pipelined,
        millis: [ms(t_key), ms(t_prep), ms(t_strict), ms(t_pipe)],
    })
}
