//! AKÖ key generation and distributed decryption as protocols over a [`Mesh`] (party `i` of the
//! mesh is slot `i` of the multi-key ciphertexts), and key material on disk.
//!
//! # Key generation ([`keygen`]), `k = mesh.n()` parties
//! 1. **CRS**: every party commits to 32 random bytes, then all open; the seed is their XOR
//!    (uniform if one party is honest; commit-then-open stops a last party from choosing it).
//! 2. **Public-key shares** `b^(q)`, again commit-then-open (the paper's countermeasure against
//!    a last party choosing `b^(q) = 1/4 − Σ_{p≠q} b^(p)`, seed 003 §2.3 step 4); everyone sums
//!    them into the common public key `(a, B)`.
//! 3. **Blind-rotate-key rows and key-switching-key shares** (the long step, reported through
//!    [`KeygenOptions::progress`]): every party sends its shares to every other party; everyone checks their
//!    shapes, then an **echo round** compares digests of what each party received from each
//!    sender; everyone combines the evaluation key.
//! 4. **Self-test** (the paper's "dummy bootstraps" countermeasure): every party encrypts
//!    [`TESTS_PER_PARTY`] random bits (more for small `k`: at least [`MIN_SELF_TESTS`] in all), and every other party adds an encryption of zero under
//!    its own key to each (so the test ciphertexts have random masks in *every* slot and their
//!    blind rotations use every party's rows — a test bit under one key alone would skip the
//!    other parties' rows); everyone bootstraps all tests with the new key, the outputs are
//!    decrypted jointly (partial decryptions), and each party reveals its test bits; any
//!    mismatch aborts.
//!
//! # What is detected, and what is not
//! Detected (the protocol returns an error naming the party, and aborts the mesh):
//! * an opening that does not match its commitment (CRS contribution, public-key share);
//! * a malformed, oversized or wrong-shape message (bounded, validating decoders);
//! * **equivocation**: different shares sent to different parties, or a share changed in
//!   transit (echo round);
//! * a blind-rotate or key-switching share that does not encrypt the key the party uses, or is
//!   garbage: the self-test fails, with probability about `1 − 2^-(tests that touch it)`.
//!
//! **Not** detected (no zero-knowledge proofs in the paper or here; seed 003 §2.5 is a
//! semi-honest model): a share that encrypts the right key with more noise than specified
//! (it raises the error rate without failing the self-test); a share whose effect the self-test
//! misses by chance (probability about `2^-32` for garbage, higher for subtle errors that only
//! shift phases a little); a party that makes the protocol abort (no fairness or guaranteed
//! output) — any party can also make the self-test fail on purpose; and, at decryption time,
//! wrong partial decryptions, which are caught only if the result is checked.
//!
//! # On disk
//! [`save_key_material`] writes the party's secret key ([`StoredSecretKey`], kind 25) and the
//! evaluation key (kind 24) in the crate's versioned envelope; the loaders bound the input size
//! before decoding and validate the structure.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use coterie_base::progress::Progress;
use coterie_net::Mesh;
use coterie_net::commit::{Commitment, Opening, commit, verify};
use rand_core::CryptoRng;

use crate::lwe::LweCiphertext;
use crate::mk::decrypt::{
    PartialDecryption, combine_partial_decryptions, default_smudging_std, partial_decrypt,
};
use crate::mk::eval::{MkServerKey, embed};
use crate::mk::keygen::*;
use crate::mk::params::MkParams;
use crate::mk::wire::{StoredSecretKey, max_message_bytes};
use crate::public_key::ProductMethod;
use crate::serialization::{from_bytes, to_bytes};
use crate::torus::Torus;
use crate::{Error, Result};

/// Base of this module's wire tags (every tag below is `TAG_BASE + i`); public, with the
/// tags, so that cheating tests can select messages on a `coterie_net::tamper::TamperMesh`.
pub const TAG_BASE: u32 = 0x4D4B_0000;
/// Key generation, step 1: commitments to the CRS contributions.
pub const TAG_CRS_C: u32 = TAG_BASE + 1;
/// Key generation, step 1: openings of the CRS contributions.
pub const TAG_CRS_O: u32 = TAG_BASE + 2;
/// Key generation, step 2: commitments to the public-key shares.
pub const TAG_PK_C: u32 = TAG_BASE + 3;
/// Key generation, step 2: openings (the `Opening`, then the share as a length and chunks).
pub const TAG_PK_O: u32 = TAG_BASE + 4;
/// Key generation, step 3: blind-rotate-key shares (a length, then chunks).
pub const TAG_BSK: u32 = TAG_BASE + 5;
/// Key generation, step 3: key-switching-key shares (a length, then chunks).
pub const TAG_KSK: u32 = TAG_BASE + 6;
/// Key generation, step 3: the echo round's digests.
pub const TAG_ECHO: u32 = TAG_BASE + 7;
/// Key generation, step 4: self-test ciphertexts.
pub const TAG_TEST_CT: u32 = TAG_BASE + 8;
/// Key generation, step 4: revealed self-test bits.
pub const TAG_TEST_BITS: u32 = TAG_BASE + 9;
/// Decryption: partial decryptions.
pub const TAG_DEC: u32 = TAG_BASE + 10;
/// Decryption: the ciphertexts sent by their holder.
pub const TAG_DEC_CT: u32 = TAG_BASE + 11;

/// Chunk size of large messages (below the mesh's default 64 MiB frame limit).
const CHUNK: usize = 16 << 20;

/// Test bits each party contributes to the key-generation self-test (at least; the total is
/// raised to [`MIN_SELF_TESTS`]).
pub const TESTS_PER_PARTY: usize = 2;

/// Least number of self-test bootstraps: a garbage share passes all of them with probability
/// about `2^-32`.
pub const MIN_SELF_TESTS: usize = 32;

/// Options of [`keygen`].
#[derive(Clone, Debug, Default)]
pub struct KeygenOptions {
    /// Where the long step (the blind-rotate key) reports its progress (in key bits); the CLI
    /// turns it into a progress bar. [`Progress::none`] (the default) reports nothing.
    pub progress: Progress,
}

/// What a party holds after key generation.
#[derive(Debug)]
pub struct KeygenOutput {
    /// The parameters.
    pub params: MkParams,
    /// The jointly drawn CRS.
    pub crs: Crs,
    /// This party's secret key (slot = mesh id).
    pub key: MkSecretKey,
    /// The evaluation key (the same at every party).
    pub evaluation_key: MkEvaluationKey,
    /// Wall-clock time of each phase.
    pub timings: Vec<(&'static str, Duration)>,
}

async fn send_big<M: Mesh>(mesh: &mut M, to: usize, tag: u32, bytes: &[u8]) -> Result<()> {
    mesh.send_tagged(to, tag, &(bytes.len() as u64)).await?;
    for c in bytes.chunks(CHUNK) {
        mesh.send_bytes(to, tag, c).await?;
    }
    Ok(())
}

async fn recv_big<M: Mesh>(mesh: &mut M, from: usize, tag: u32, max: usize) -> Result<Vec<u8>> {
    let len: u64 = mesh.recv_tagged(from, tag).await?;
    if len > max as u64 {
        let e = coterie_net::Error::Protocol(format!(
            "party {from} announced a {len}-byte message (limit {max})"
        ));
        mesh.abort(&e.to_string()).await;
        return Err(e.into());
    }
    let len = len as usize;
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        let c = mesh.recv_bytes(from, tag).await?;
        if c.is_empty() || c.len() > CHUNK || out.len() + c.len() > len {
            let e = coterie_net::Error::Protocol(format!("party {from} sent a bad chunk"));
            mesh.abort(&e.to_string()).await;
            return Err(e.into());
        }
        out.extend_from_slice(&c);
    }
    Ok(out)
}

/// Aborts the mesh with `reason` naming `party` and returns the error.
async fn fail<M: Mesh>(mesh: &mut M, party: usize, reason: String) -> Error {
    let msg = format!("party {party}: {reason}");
    mesh.abort(&msg).await;
    Error::Protocol(msg)
}

/// Commit-then-open of `bytes`.
async fn commit_open<M: Mesh>(
    mesh: &mut M,
    domain: &str,
    tags: (u32, u32),
    bytes: &[u8],
    max: usize,
) -> Result<Vec<Vec<u8>>> {
    let me = mesh.id();
    let (c, r) = commit(domain, me, bytes);
    let cs: Vec<Commitment> = mesh.exchange_all_tagged(tags.0, &c).await?;
    let mut out = vec![Vec::new(); mesh.n()];
    for to in 0..mesh.n() {
        if to != me {
            mesh.send_tagged(to, tags.1, &r).await?;
            send_big(mesh, to, tags.1, bytes).await?;
        }
    }
    for from in 0..mesh.n() {
        if from == me {
            out[me] = bytes.to_vec();
            continue;
        }
        let r: Opening = mesh.recv_tagged(from, tags.1).await?;
        let m = recv_big(mesh, from, tags.1, max).await?;
        if !verify(domain, from, &m, &cs[from], &r) {
            let e = coterie_net::Error::CommitmentMismatch {
                party: from,
                domain: domain.to_string(),
            };
            mesh.abort(&e.to_string()).await;
            return Err(e.into());
        }
        out[from] = m;
    }
    Ok(out)
}

/// Joint key generation among the mesh's parties (see the module doc).
///
/// # Errors
/// On a network error, detected misbehaviour (naming the party) or a failed self-test; the
/// mesh is aborted so the other parties stop too.
///
/// # Example
///
/// Two parties over the in-memory mesh, **insecure** toy parameters; then a NAND of their
/// inputs, decrypted jointly with [`decrypt_bits`]:
///
/// ```
/// use coterie_math::prg::Csprng;
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
/// use coterie_tfhe::mk::decrypt::default_smudging_std;
/// use coterie_tfhe::mk::eval::{MkServerKey, embed};
/// use coterie_tfhe::mk::params::MkParams;
/// use coterie_tfhe::mk::protocol::{KeygenOptions, decrypt_bits, keygen};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let params = MkParams::insecure_toy(2);
/// let mut tasks = Vec::new();
/// for mut mesh in InMemoryMesh::group(2, MeshOptions::default()) {
///     let params = params.clone();
///     tasks.push(tokio::spawn(async move {
///         let mut rng = Csprng::new();
///         let out = keygen(&mut mesh, &params, &KeygenOptions::default(), &mut rng).await?;
///         // Each party encrypts `true` in its slot; every party evaluates the same NAND.
///         let mine = out.key.encrypt_bool_local(&params, true, &mut rng)?;
///         let all: Vec<_> = mesh.exchange_all_tagged(1, &mine).await?;
///         let server = MkServerKey::new(&out.evaluation_key)?;
///         let mut ev = server.evaluator()?;
///         let (a, b) = (embed(&all[0], 0, 2)?, embed(&all[1], 1, 2)?);
///         let c = ev.nand(&a, &b)?;
///         // Bootstrapping is not bit-reproducible across processes: party 0's output is used.
///         let cs: Vec<_> = mesh.exchange_all_tagged(2, &c).await?;
///         let sigma = default_smudging_std(&params, 2);
///         let bits = decrypt_bits(&mut mesh, &out.key, &cs[..1], sigma, &mut rng).await?;
///         mesh.close().await.ok();
///         Ok::<_, coterie_tfhe::Error>(bits)
///     }));
/// }
/// for t in tasks {
///     assert_eq!(t.await.unwrap().unwrap(), vec![false]);
/// }
/// # });
/// ```
pub async fn keygen<M: Mesh, R: CryptoRng + ?Sized>(
    mesh: &mut M,
    params: &MkParams,
    opts: &KeygenOptions,
    rng: &mut R,
) -> Result<KeygenOutput> {
    params.validate()?;
    let (me, k) = (mesh.id(), mesh.n());
    if k > params.parties {
        return Err(Error::InvalidParameter(format!(
            "{k} parties exceed the set's {}",
            params.parties
        )));
    }
    let mut timings = Vec::new();
    let t = Instant::now();
    // 1. CRS.
    let mut contrib = [0u8; 32];
    rng.fill_bytes(&mut contrib);
    let all = commit_open(
        mesh,
        "coterie-tfhe/mk/crs",
        (TAG_CRS_C, TAG_CRS_O),
        &contrib,
        32,
    )
    .await?;
    let mut seed = [0u8; 32];
    for (from, c) in all.iter().enumerate() {
        if c.len() != 32 {
            return Err(fail(mesh, from, "CRS contribution is not 32 bytes".into()).await);
        }
        for (s, x) in seed.iter_mut().zip(c) {
            *s ^= x;
        }
    }
    let crs = Crs { seed };
    // 2. Keys and public-key shares.
    let key = MkSecretKey::generate(params, me, rng)?;
    let share = public_key_share(params, &crs, &key, rng)?;
    let share_bytes = to_bytes(&share)?;
    let max_pk = params.polynomial_size * 10 + 1024;
    let raw = commit_open(
        mesh,
        "coterie-tfhe/mk/pk-share",
        (TAG_PK_C, TAG_PK_O),
        &share_bytes,
        max_pk,
    )
    .await?;
    let mut shares = Vec::with_capacity(k);
    for (from, b) in raw.iter().enumerate() {
        match from_bytes::<PublicKeyShare>(b, max_pk) {
            Ok(s) if s.party == from && s.body.len() == params.polynomial_size => shares.push(s),
            Ok(_) => return Err(fail(mesh, from, "public-key share of wrong shape".into()).await),
            Err(e) => return Err(fail(mesh, from, format!("public-key share: {e}")).await),
        }
    }
    let pk = combine_public_key(params, &crs, &shares)?;
    timings.push(("crs and public key", t.elapsed()));
    // 3. Blind-rotate and key-switching shares.
    let t = Instant::now();
    let task = opts.progress.task(
        format!("party {me}: blind-rotate key"),
        params.lwe_dimension as u64,
    );
    let bsk = bootstrap_key_share_with_method(params, &pk, &key, ProductMethod::Exact, rng, |j| {
        task.set(j as u64)
    })?;
    task.finish();
    let ksk = keyswitch_key_share(params, &key, rng)?;
    timings.push(("own shares", t.elapsed()));
    let t = Instant::now();
    let bsk_bytes = to_bytes(&bsk)?;
    let ksk_bytes = to_bytes(&ksk)?;
    let max_bsk = max_message_bytes(params, 1);
    for to in 0..k {
        if to == me {
            continue;
        }
        send_big(mesh, to, TAG_BSK, &bsk_bytes).await?;
        send_big(mesh, to, TAG_KSK, &ksk_bytes).await?;
    }
    let mut bsks = Vec::with_capacity(k);
    let mut ksks = Vec::with_capacity(k);
    let mut digests = Vec::with_capacity(k);
    for from in 0..k {
        let (bb, kb) = if from == me {
            (bsk_bytes.clone(), ksk_bytes.clone())
        } else {
            let bb = recv_big(mesh, from, TAG_BSK, max_bsk).await?;
            let kb = recv_big(mesh, from, TAG_KSK, max_bsk).await?;
            (bb, kb)
        };
        let mut h = blake3::Hasher::new_derive_key("coterie-tfhe mk keygen echo v1");
        h.update(&(bb.len() as u64).to_le_bytes());
        h.update(&bb);
        h.update(&kb);
        digests.push(*h.finalize().as_bytes());
        let b = match from_bytes::<BootstrapKeyShare>(&bb, max_bsk) {
            Ok(b) if b.party == from => b,
            Ok(_) => return Err(fail(mesh, from, "share names another party".into()).await),
            Err(e) => return Err(fail(mesh, from, format!("blind-rotate share: {e}")).await),
        };
        let s = match from_bytes::<KeySwitchKeyShare>(&kb, max_bsk) {
            Ok(s) if s.party == from => s,
            Ok(_) => return Err(fail(mesh, from, "share names another party".into()).await),
            Err(e) => return Err(fail(mesh, from, format!("key-switching share: {e}")).await),
        };
        bsks.push(b);
        ksks.push(s);
    }
    drop(bsk_bytes);
    // Echo: all parties must have received the same shares from every sender.
    let all: Vec<Vec<[u8; 32]>> = mesh.exchange_all_tagged(TAG_ECHO, &digests).await?;
    for (who, d) in all.iter().enumerate() {
        if d.len() != k {
            return Err(fail(mesh, who, "echo of wrong length".into()).await);
        }
        // A party does not check the echoes of its own shares: it holds what it sent, and
        // every receiver checks them (a share changed in transit is caught there).
        for sender in (0..k).filter(|&s| s != me) {
            if d[sender] != digests[sender] {
                let reason = format!(
                    "parties {me} and {who} received different key shares from party {sender} \
                     (equivocation or tampering in transit)"
                );
                return Err(fail(mesh, sender, reason).await);
            }
        }
    }
    let ek = match combine_evaluation_key(params, &bsks, &ksks) {
        Ok(ek) => ek,
        Err(e) => return Err(fail(mesh, me, format!("combining shares: {e}")).await),
    };
    drop((bsks, ksks));
    timings.push(("exchange and combine", t.elapsed()));
    // 4. Self-test.
    let t = Instant::now();
    let server = MkServerKey::new(&ek)?;
    // Test j belongs to party j / per_party, who encrypts a random bit; every other party
    // encrypts 0 (phase 0) for it, so the summed test ciphertext has random masks in every slot
    // and its bootstrap goes through every party's blind-rotate rows.
    let per_party = TESTS_PER_PARTY.max(MIN_SELF_TESTS.div_ceil(k));
    let total = k * per_party;
    let mut my_bits = vec![false; per_party];
    let noise = crate::noise::NoiseSampler::new(params.lwe_noise_std(), 32)?;
    let mut my_cts = Vec::with_capacity(total);
    for j in 0..total {
        let mut c = LweCiphertext::zero(params.lwe_dimension);
        let mu = if j / per_party == me {
            let b = u32::random(rng) & 1 == 1;
            my_bits[j % per_party] = b;
            if b {
                1u32 << 29
            } else {
                (1u32 << 29).wrapping_neg()
            }
        } else {
            0
        };
        crate::lwe::encrypt_lwe_ciphertext(key.lwe_key(), &mut c, mu, &noise, rng);
        my_cts.push(c);
    }
    let cts: Vec<Vec<LweCiphertext<u32>>> = mesh.exchange_all_tagged(TAG_TEST_CT, &my_cts).await?;
    for (from, v) in cts.iter().enumerate() {
        if v.len() != total || v.iter().any(|c| c.dimension() != params.lwe_dimension) {
            return Err(fail(mesh, from, "self-test ciphertexts of wrong shape".into()).await);
        }
    }
    // Party j bootstraps the tests of block j and shares the results; all decrypt them jointly.
    // Bootstrapping is not bit-reproducible across processes or machines (the FFT plan is chosen
    // by measurement, and one unit of difference in an extracted coefficient changes the
    // key-switching digits), so a joint decryption must be of one party's output, never of each
    // party's own re-evaluation. Splitting the blocks also spreads the work over the parties.
    let mut ev = server.evaluator()?;
    let mut got = Vec::with_capacity(total);
    for holder in 0..k {
        let block = if holder == me {
            let mut outs = Vec::with_capacity(per_party);
            for j in holder * per_party..(holder + 1) * per_party {
                let mut sum = LweCiphertext::zero(k * params.lwe_dimension);
                for (from, v) in cts.iter().enumerate() {
                    sum.add_assign(&embed(&v[j], from, k)?);
                }
                outs.push(ev.bootstrap(&sum)?);
            }
            Some(outs)
        } else {
            None
        };
        let sigma = default_smudging_std(params, k);
        got.extend(
            decrypt_bits_from(mesh, &key, holder, block.as_deref(), per_party, sigma, rng).await?,
        );
    }
    let bits: Vec<Vec<bool>> = mesh.exchange_all_tagged(TAG_TEST_BITS, &my_bits).await?;
    for (from, b) in bits.iter().enumerate() {
        let start = from * per_party;
        if b.len() != per_party || got.get(start..start + per_party) != Some(&b[..]) {
            let msg = format!(
                "key-generation self-test failed on party {from}'s test bits: some party's key \
                 shares are wrong"
            );
            mesh.abort(&msg).await;
            return Err(Error::Protocol(msg));
        }
    }
    timings.push(("self-test", t.elapsed()));
    Ok(KeygenOutput {
        params: params.clone(),
        crs,
        key,
        evaluation_key: ek,
        timings,
    })
}

/// Joint decryption of `cts` (multi-key ciphertexts of the mesh's parties, slot = mesh id) by
/// partial decryptions with smudging std `sigma` (see [`crate::mk::decrypt`] for what it does and
/// does not hide). Every party learns the bits.
///
/// Every party must pass bit-identical ciphertexts: bootstrapping is not bit-reproducible across
/// processes (the FFT plan is chosen by measurement), so the output of one evaluator is shared
/// (see [`decrypt_bits_from`]) rather than re-evaluated by each party. A digest of the
/// ciphertexts travels with the partial decryptions, and a mismatch is an error naming the party.
///
/// # Errors
/// On a network error, a malformed partial decryption or a ciphertext digest that differs from
/// ours (naming the party).
///
/// # Example
///
/// See the example of [`keygen`], which ends with a joint decryption.
pub async fn decrypt_bits<M: Mesh, R: CryptoRng + ?Sized>(
    mesh: &mut M,
    key: &MkSecretKey,
    cts: &[LweCiphertext<u32>],
    sigma: f64,
    rng: &mut R,
) -> Result<Vec<bool>> {
    let (me, k) = (mesh.id(), mesh.n());
    let mine = cts
        .iter()
        .map(|c| partial_decrypt(key, me, c, sigma, rng))
        .collect::<Result<Vec<_>>>()?;
    let digest = ciphertexts_digest(cts)?;
    let all: Vec<([u8; 32], Vec<PartialDecryption>)> =
        mesh.exchange_all_tagged(TAG_DEC, &(digest, mine)).await?;
    for (from, (d, v)) in all.iter().enumerate() {
        if *d != digest {
            return Err(fail(
                mesh,
                from,
                "partial decryptions of different ciphertexts (digest mismatch)".into(),
            )
            .await);
        }
        if v.len() != cts.len() || v.iter().any(|p| p.slot != from) {
            return Err(fail(mesh, from, "partial decryptions of wrong shape".into()).await);
        }
    }
    let all: Vec<Vec<PartialDecryption>> = all.into_iter().map(|(_, v)| v).collect();
    let mut out = Vec::with_capacity(cts.len());
    for (i, c) in cts.iter().enumerate() {
        let parts: Vec<_> = all.iter().map(|v| v[i]).collect();
        out.push(combine_partial_decryptions(c, k, &parts)?.0);
    }
    Ok(out)
}

/// Domain-separated digest of the ciphertexts a joint decryption is about.
fn ciphertexts_digest(cts: &[LweCiphertext<u32>]) -> Result<[u8; 32]> {
    let mut h = blake3::Hasher::new_derive_key("coterie mk-tfhe joint decryption ciphertexts v1");
    h.update(&(cts.len() as u64).to_le_bytes());
    for c in cts {
        h.update(&(c.as_slice().len() as u64).to_le_bytes());
        for w in c.as_slice() {
            h.update(&w.to_le_bytes());
        }
    }
    Ok(*h.finalize().as_bytes())
}

/// [`decrypt_bits`] where only party `holder` has the ciphertexts (e.g. the evaluator): it
/// sends them to the others first (bounded by `max_cts`).
///
/// # Errors
/// As [`decrypt_bits`], or if the received ciphertexts are too many or of the wrong dimension.
pub async fn decrypt_bits_from<M: Mesh, R: CryptoRng + ?Sized>(
    mesh: &mut M,
    key: &MkSecretKey,
    holder: usize,
    cts: Option<&[LweCiphertext<u32>]>,
    max_cts: usize,
    sigma: f64,
    rng: &mut R,
) -> Result<Vec<bool>> {
    let (me, k) = (mesh.id(), mesh.n());
    let dim = k * key.lwe_key().dimension();
    let cts: Vec<LweCiphertext<u32>> = if me == holder {
        let c = cts
            .ok_or_else(|| Error::InvalidParameter("the holder must pass ciphertexts".into()))?
            .to_vec();
        for to in 0..k {
            if to != me {
                mesh.send_tagged(to, TAG_DEC_CT, &c).await?;
            }
        }
        c
    } else {
        let c: Vec<LweCiphertext<u32>> = mesh.recv_tagged(holder, TAG_DEC_CT).await?;
        if c.len() > max_cts || c.iter().any(|x| x.dimension() != dim) {
            return Err(fail(mesh, holder, "ciphertexts to decrypt of wrong shape".into()).await);
        }
        c
    };
    decrypt_bits(mesh, key, &cts, sigma, rng).await
}

/// File names used by [`save_key_material`].
pub fn key_file_names(dir: &Path, party: usize) -> (PathBuf, PathBuf) {
    (
        dir.join(format!("mktfhe-party{party}.secret")),
        dir.join("mktfhe-evaluation.key"),
    )
}

/// Writes the party's secret key and the evaluation key under `dir` (versioned envelopes;
/// atomic durable writes through `coterie_base::fsio`, the secret key file with mode 0600 on
/// Unix). Returns the two paths.
///
/// # Errors
/// [`Error::Io`] on a file-system error.
pub fn save_key_material(dir: &Path, out: &KeygenOutput) -> Result<(PathBuf, PathBuf)> {
    let (sk_path, ek_path) = key_file_names(dir, out.key.party());
    std::fs::create_dir_all(dir).map_err(|e| Error::Io(e.to_string()))?;
    let stored = StoredSecretKey {
        params: out.params.clone(),
        key: out.key.clone(),
    };
    let mut sk_bytes = to_bytes(&stored)?;
    let res = coterie_base::fsio::write_atomic_private(&sk_path, &sk_bytes);
    zeroize::Zeroize::zeroize(&mut sk_bytes);
    res.map_err(|e| Error::Io(e.to_string()))?;
    coterie_base::fsio::write_atomic(&ek_path, &to_bytes(&out.evaluation_key)?)
        .map_err(|e| Error::Io(e.to_string()))?;
    Ok((sk_path, ek_path))
}

fn read_bounded(path: &Path, max: usize) -> Result<Vec<u8>> {
    coterie_base::fsio::read_bounded(path, max as u64).map_err(|e| match e {
        coterie_base::Error::TooLarge { .. } => Error::Malformed(e.to_string()),
        e => Error::Io(e.to_string()),
    })
}

/// Loads a secret key written by [`save_key_material`] (at most 1 MiB).
///
/// # Errors
/// [`Error::Io`] or [`Error::Malformed`].
pub fn load_secret_key(path: &Path) -> Result<StoredSecretKey> {
    let mut b = read_bounded(path, 1 << 20)?;
    let r = from_bytes(&b, 1 << 20);
    zeroize::Zeroize::zeroize(&mut b);
    r
}

/// Loads an evaluation key written by [`save_key_material`] for at most `max_parties` parties
/// of `params` (the size bound).
///
/// # Errors
/// [`Error::Io`] or [`Error::Malformed`] (also if the key's parameters differ from `params`).
pub fn load_evaluation_key(
    path: &Path,
    params: &MkParams,
    max_parties: usize,
) -> Result<MkEvaluationKey> {
    let max = max_message_bytes(params, max_parties);
    let b = read_bounded(path, max)?;
    let ek: MkEvaluationKey = from_bytes(&b, max)?;
    if &ek.params != params {
        return Err(Error::Malformed(
            "evaluation key of other parameters".into(),
        ));
    }
    Ok(ek)
}
