//! The end-to-end demo run by every party (for `coterie demo threshold`): distributed key
//! generation inside the ABB, public LWE samples, encryption of known messages, gate
//! preprocessing, batched decryption in both schedules, and a check of the results.
//!
//! The ciphertexts are made by every party from the same public seed (in a deployment a client
//! sends them). The preprocessing source is whatever the caller passes: the tests and the CLI
//! demo use the **insecure** dealer of coterie-spdz.

use std::time::Instant;

use coterie_math::prg::Xof;
use coterie_net::Mesh;
use coterie_spdz::{Counts, Engine, Preprocessing, Z2k};

use crate::gates::{GatePool, prep_bundles};
use crate::keys::{KeyDistribution, PublicKey, SharedKey};
use crate::online::decrypt;
use crate::params::Params;
use crate::pipelined::decrypt_pipelined;
use crate::{Error, LweCiphertext, Result};

const SAMPLES: usize = 64;
const NOISE_BITS: u32 = 40;

/// What one party saw in the demo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoReport {
    /// The encrypted messages.
    pub messages: Vec<u64>,
    /// Strict-schedule decryptions.
    pub strict: Vec<u64>,
    /// Pipelined-schedule decryptions.
    pub pipelined: Vec<u64>,
    /// Milliseconds: key generation + public key, gate preprocessing, strict, pipelined.
    pub millis: [u64; 4],
}

/// Preprocessing material one party needs for [`run_demo_party`] with `count` ciphertexts
/// (the paper's parameters).
pub fn demo_counts(count: usize) -> Result<Counts> {
    let p = Params::paper();
    let lt = p.lt()?;
    Ok(Counts {
        triples: 2 * count * lt.mults_per_bundle(),
        bits: 2 * count * lt.bits_per_bundle() + p.n + NOISE_BITS as usize * SAMPLES,
        randoms: 8 * count + SAMPLES,
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
    let pk = PublicKey::generate(&mut eng, mesh, &p, &key, [0x5e; 32], SAMPLES, NOISE_BITS).await?;
    let t_key = t.elapsed();
    let mut rng = Xof::new(&[0xde; 32], b"coterie-threshold/demo/messages", 0);
    let messages: Vec<u64> = (0..count)
        .map(|_| rand::Rng::next_u64(&mut rng) & 1)
        .collect();
    let cts = messages
        .iter()
        .map(|&m| pk.encrypt(m, p.m, &mut rng))
        .collect::<Result<Vec<LweCiphertext>>>()?;
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
