//! Secret keys inside the ABB: distributed generation from random bits (binary, ternary) with
//! public LWE samples, and import of an existing key that one holder secret-shares.

use coterie_math::prg::Xof;
use coterie_net::{Mesh, PartyId};
use coterie_spdz::{Engine, Preprocessing, Ring, Z2k};
use rand::Rng;
use zeroize::Zeroize;

use crate::ciphertext::LweCiphertext;
use crate::gates::Sh;
use crate::params::Params;
use crate::{Error, Result};

/// Distribution of the secret key coefficients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyDistribution {
    /// Uniform in `{0, 1}` (TFHE): one random bit per coefficient.
    Binary,
    /// `b1 - b2` for two random bits: `-1, 0, 1` with probabilities `1/4, 1/2, 1/4`.
    Ternary,
}

/// One party's shares of an LWE secret key `s ∈ Z^n`, stored exactly in `Z_{2^k}`. `Debug`
/// shows only the dimension.
pub struct SharedKey {
    /// Shares of the coefficients.
    pub coeffs: Vec<Sh>,
}

impl std::fmt::Debug for SharedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SharedKey {{ n: {}, .. }}", self.coeffs.len())
    }
}

impl Drop for SharedKey {
    fn drop(&mut self) {
        self.coeffs.iter_mut().for_each(Zeroize::zeroize);
    }
}

impl SharedKey {
    /// Checks the dimension against `params`.
    pub fn check(&self, params: &Params) -> Result<()> {
        if self.coeffs.len() != params.n {
            return Err(Error::Key(format!(
                "key of dimension {}, expected {}",
                self.coeffs.len(),
                params.n
            )));
        }
        Ok(())
    }

    /// Generates a key of dimension `n` inside the ABB from preprocessed random bits (local:
    /// no communication). Nobody learns the key.
    pub fn generate<P: Preprocessing<Z2k>>(
        eng: &mut Engine<Z2k, P>,
        n: usize,
        dist: KeyDistribution,
    ) -> Result<Self> {
        match dist {
            KeyDistribution::Binary => Ok(Self {
                coeffs: eng.rand_bits(n)?,
            }),
            KeyDistribution::Ternary => {
                let b = eng.rand_bits(2 * n)?;
                Ok(Self {
                    coeffs: b.chunks(2).map(|p| eng.sub(&p[0], &p[1])).collect(),
                })
            }
        }
    }

    /// Imports a key that exists elsewhere: the single holder `holder` passes its coefficients
    /// (signed, `|s_i| < 2^{k-1}`), the others `None`; the holder secret-shares them through
    /// the engine's input protocol. The holder learns nothing new, but it knew the key before:
    /// this migrates a key, it does not make it threshold-secure against its former holder.
    ///
    /// # Example
    ///
    /// Party 0 holds the key `sk` and imports it (two parties, **insecure** toy parameters and dealer
    /// material, tests only); then a decryption under it:
    ///
    /// ```
    /// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
    /// use coterie_spdz::{Counts, Engine, InsecureDealer, Z2k};
    /// use coterie_threshold::gates::{GatePool, prep_bundles};
    /// use coterie_threshold::keys::SharedKey;
    /// use coterie_threshold::online::decrypt;
    /// use coterie_threshold::{LweCiphertext, Params};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let p = Params::insecure_toy(4, 16, 2, 3).unwrap();
    /// let lt = p.lt().unwrap();
    /// let sk = [1i64, 0, 1, 1];
    /// let mut rng = rand::rng();
    /// let ct = LweCiphertext::encrypt_with_secret_key(&sk, 1, -70, 16, 2, &mut rng);
    /// let ring = Z2k::new(16, 64).unwrap();
    /// let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
    /// let counts = Counts {
    ///     triples: lt.mults_per_bundle(),
    ///     bits: lt.bits_per_bundle(),
    ///     randoms: 16,
    ///     masks_per_party: 4,
    /// };
    /// let mut tasks = Vec::new();
    /// let parties = InMemoryMesh::group(2, MeshOptions::default());
    /// for (mut mesh, prep) in parties.into_iter().zip(dealer.deal(counts, &mut rng)) {
    ///     let ct = ct.clone();
    ///     tasks.push(tokio::spawn(async move {
    ///         let mut eng = Engine::new(prep);
    ///         let mine = (mesh.id() == 0).then_some(&sk[..]);
    ///         let key = SharedKey::import_from_single_holder(&mut eng, &mut mesh, 0, mine, 4).await?;
    ///         let (bundles, _) = prep_bundles(&mut eng, &mut mesh, &lt, 1, 0).await?;
    ///         let mut pool = GatePool::new(lt);
    ///         pool.push(bundles)?;
    ///         let mu = decrypt(&mut eng, &mut mesh, &p, &key, &[ct], &mut pool).await?;
    ///         mesh.close().await.ok();
    ///         Ok::<_, coterie_threshold::Error>(mu)
    ///     }));
    /// }
    /// for t in tasks {
    ///     assert_eq!(t.await.unwrap().unwrap(), vec![1]);
    /// }
    /// # });
    /// ```
    pub async fn import_from_single_holder<P: Preprocessing<Z2k>, M: Mesh>(
        eng: &mut Engine<Z2k, P>,
        mesh: &mut M,
        holder: PartyId,
        key: Option<&[i64]>,
        n: usize,
    ) -> Result<Self> {
        let ring = *eng.ring();
        let half = 1i128 << (ring.k() - 1);
        let vals: Option<Vec<u128>> = match key {
            Some(k) => {
                if k.len() != n {
                    return Err(Error::Key(format!(
                        "{} coefficients, expected {n}",
                        k.len()
                    )));
                }
                if k.iter()
                    .any(|&x| i128::from(x) >= half || i128::from(x) < -half)
                {
                    return Err(Error::Key("coefficient out of range".into()));
                }
                Some(
                    k.iter()
                        .map(|&x| ring.sub(&(x as i128 as u128 & ((1u128 << ring.k()) - 1)), &0))
                        .collect(),
                )
            }
            None => None,
        };
        let mut vals = vals;
        let coeffs = eng.input(mesh, holder, vals.as_deref(), n).await;
        if let Some(v) = vals.as_mut() {
            v.zeroize();
        }
        Ok(Self { coeffs: coeffs? })
    }

    /// Key input for multi-key TFHE (issue 7): party `i` inputs its **own** LWE secret-key
    /// segment `s_i` (`lengths[i]` coefficients, signed, `|s_ij| < 2^{k-1}`; lengths may
    /// differ) into the ABB, and the shared key is the concatenation `s_0 ‖ s_1 ‖ … ‖ s_{n-1}`
    /// (dimension `Σ lengths`). An LWE ciphertext under the concatenated key (modulus `2^k`,
    /// `k` = 32 or 64 for TFHE) is then decrypted by MPC rounding ([`crate::online::decrypt`],
    /// [`crate::pipelined::decrypt_pipelined`]) without noise flooding, and no party learns
    /// another's segment. Each party passes `Some(its segment)`; `lengths` is public and the same
    /// everywhere. Uses the engine's input protocol (one input mask per coefficient of the owner).
    ///
    /// # Example
    ///
    /// Party `i` inputs its segment `sk[2i..2i + 2]` of the key (two parties, **insecure** toy
    /// parameters and dealer material, tests only); then a decryption under the concatenation:
    ///
    /// ```
    /// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
    /// use coterie_spdz::{Counts, Engine, InsecureDealer, Z2k};
    /// use coterie_threshold::gates::{GatePool, prep_bundles};
    /// use coterie_threshold::keys::SharedKey;
    /// use coterie_threshold::online::decrypt;
    /// use coterie_threshold::{LweCiphertext, Params};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let p = Params::insecure_toy(4, 16, 2, 3).unwrap();
    /// let lt = p.lt().unwrap();
    /// let sk = [1i64, 0, 1, 1];
    /// let mut rng = rand::rng();
    /// let ct = LweCiphertext::encrypt_with_secret_key(&sk, 1, -70, 16, 2, &mut rng);
    /// let ring = Z2k::new(16, 64).unwrap();
    /// let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
    /// let counts = Counts {
    ///     triples: lt.mults_per_bundle(),
    ///     bits: lt.bits_per_bundle(),
    ///     randoms: 16,
    ///     masks_per_party: 4,
    /// };
    /// let mut tasks = Vec::new();
    /// let parties = InMemoryMesh::group(2, MeshOptions::default());
    /// for (mut mesh, prep) in parties.into_iter().zip(dealer.deal(counts, &mut rng)) {
    ///     let ct = ct.clone();
    ///     tasks.push(tokio::spawn(async move {
    ///         let mut eng = Engine::new(prep);
    ///         let seg = &sk[2 * mesh.id()..2 * mesh.id() + 2];
    ///         let key = SharedKey::input_concatenated_segments(&mut eng, &mut mesh, seg, &[2, 2]).await?;
    ///         let (bundles, _) = prep_bundles(&mut eng, &mut mesh, &lt, 1, 0).await?;
    ///         let mut pool = GatePool::new(lt);
    ///         pool.push(bundles)?;
    ///         let mu = decrypt(&mut eng, &mut mesh, &p, &key, &[ct], &mut pool).await?;
    ///         mesh.close().await.ok();
    ///         Ok::<_, coterie_threshold::Error>(mu)
    ///     }));
    /// }
    /// for t in tasks {
    ///     assert_eq!(t.await.unwrap().unwrap(), vec![1]);
    /// }
    /// # });
    /// ```
    pub async fn input_concatenated_segments<P: Preprocessing<Z2k>, M: Mesh>(
        eng: &mut Engine<Z2k, P>,
        mesh: &mut M,
        my_segment: &[i64],
        lengths: &[usize],
    ) -> Result<Self> {
        let me = mesh.id();
        if lengths.len() != mesh.n() {
            return Err(Error::Key(format!(
                "{} segment lengths for {} parties",
                lengths.len(),
                mesh.n()
            )));
        }
        if lengths.iter().sum::<usize>() > crate::params::MAX_DIMENSION {
            return Err(Error::Key("concatenated key too long".into()));
        }
        if my_segment.len() != lengths[me] {
            return Err(Error::Key(format!(
                "segment of {} coefficients, the agreed length is {}",
                my_segment.len(),
                lengths[me]
            )));
        }
        let ring = *eng.ring();
        let half = 1i128 << (ring.k() - 1);
        if my_segment
            .iter()
            .any(|&x| i128::from(x) >= half || i128::from(x) < -half)
        {
            return Err(Error::Key("coefficient out of range".into()));
        }
        let mut mine: Vec<u128> = my_segment
            .iter()
            .map(|&x| ring.sub(&(x as i128 as u128 & ((1u128 << ring.k()) - 1)), &0))
            .collect();
        let mut coeffs = Vec::with_capacity(lengths.iter().sum());
        for (owner, &len) in lengths.iter().enumerate() {
            let vals = (owner == me).then_some(mine.as_slice());
            coeffs.extend(eng.input(mesh, owner, vals, len).await?);
        }
        mine.zeroize();
        Ok(Self { coeffs })
    }

    /// Encodes this party's key shares (**secret**; write with owner-only permissions): magic
    /// `b"CTSK"`, version 1, `n` as `u32`, then `(v, m)` per coefficient as little-endian `u128`s.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(9 + 32 * self.coeffs.len());
        out.extend_from_slice(b"CTSK");
        out.push(1);
        out.extend_from_slice(&(self.coeffs.len() as u32).to_le_bytes());
        for c in &self.coeffs {
            out.extend_from_slice(&c.v.to_le_bytes());
            out.extend_from_slice(&c.m.to_le_bytes());
        }
        out
    }

    /// Decodes [`SharedKey::to_bytes`] (length checked before allocating).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let bad = |s: &str| Error::Key(format!("key file: {s}"));
        if bytes.len() < 9 || &bytes[..4] != b"CTSK" {
            return Err(bad("bad header"));
        }
        if bytes[4] != 1 {
            return Err(bad("unsupported version"));
        }
        let n = u32::from_le_bytes([bytes[5], bytes[6], bytes[7], bytes[8]]) as usize;
        if n > crate::params::MAX_DIMENSION || bytes.len() != 9 + 32 * n {
            return Err(bad("length does not match"));
        }
        let coeffs = bytes[9..]
            .chunks_exact(32)
            .map(|c| {
                let mut v = [0u8; 16];
                let mut m = [0u8; 16];
                v.copy_from_slice(&c[..16]);
                m.copy_from_slice(&c[16..]);
                Sh {
                    v: u128::from_le_bytes(v),
                    m: u128::from_le_bytes(m),
                }
            })
            .collect();
        Ok(Self { coeffs })
    }
}

/// Public LWE samples `(a_i, b_i = <a_i, s> + e_i)` of a shared key: the public key of the
/// service, from which anyone encrypts. The `a_i` are expanded from a public 32-byte seed (a
/// common reference string the parties agreed on by a coin toss).
///
/// # Encryption (format 2) and its security
///
/// With `m` samples `A ∈ Z_q^{m×n}`, `b = A·s + e`, [`PublicKey::encrypt`] draws a binary
/// `r ∈ {0,1}^m` and uniform noise `e₁ ∈ Z^n`, `e₂` of the key's noise width and outputs
/// `(Aᵀr + e₁, bᵀr + e₂ + Δ·μ)` (the dual-style LWE public-key encryption of Lindner–Peikert,
/// CT-RSA 2011, without a ring). Security rests on two LWE instances: the key's own samples
/// (secret `s`, dimension `n`), and, once those are pseudorandom, the ciphertext (secret `r`,
/// dimension `m`, `n + 1` samples, same noise). [`PublicKey::secure_samples`] is therefore
/// `m = n`: both instances then have the same dimension and noise. Fewer samples are
/// **insecure**: format 1 (a subset sum of 64 samples without fresh noise) let anyone solve
/// the subset `r` from the `n` equations of the mask by linear algebra and strip the
/// plaintext; format-1 keys still decode (their nodes keep decrypting) but refuse to encrypt.
///
/// [`PublicKey::secure_noise_bits`] gives the noise width: uniform noise in
/// `[-2^{w-1}, 2^{w-1})` has `σ = 2^w/√12`; the 128-bit requirement on `log2(q/σ)` is
/// interpolated linearly in `n` between two estimator-backed 128-bit parameter sets with
/// binary secrets and `q = 2^64` — TFHE-rs 1.8's default `PARAM_MESSAGE_2_CARRY_2_KS_PBS`
/// (Gaussian, p_fail 2^-64): LWE `n = 833`, `σ = 3.616·10^-6·q` (`log2(q/σ) = 18.08`), and
/// GLWE `N = 2048`, `σ = 2.845·10^-15·q` (`log2(q/σ) = 48.32`) — plus two bits of margin. For the
/// paper's `(n, q) = (1024, 2^64)` this is `w = 45` (`σ = 2^43.2`, `log2(q/σ) = 20.8` against
/// the interpolated 22.8 allowed at 128 bits): **about 128-bit** security by that
/// interpolation (source: TFHE-rs's parameters, which its authors sized with the
/// lattice-estimator; no estimator was run here). The decryption noise is at most
/// `(m + n + 1)·2^{w-1}` (`< 2^55.01` for these parameters), far below `q/(2p) = 2^62`.
///
/// # Key fingerprint (format 3)
///
/// A service whose ciphertexts all come from elsewhere (an imported key's former holder,
/// TFHE-rs) needs no public key; [`PublicKey::fingerprint_generate`] makes only a few samples
/// (`coterie_threshold::node::FINGERPRINT_SAMPLES`) of the secure noise width. Their digest
/// identifies the key as a public key's does (the nodes compare it at every start, and their
/// decryption statements name it), and they cost `count·w` random bits instead of `n·w`. Fewer
/// LWE samples of the same noise reveal less about the key than the public key's `n` (the key
/// stays secure), but they are too few to encrypt with: [`PublicKey::encrypt`] refuses format 3.
///
/// Format: version 2, or 3 (a key fingerprint that refuses to encrypt); 1 still decodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    /// Format version: 2 (secure encryption), 3 (a key fingerprint, see the type's docs, that
    /// refuses to encrypt), or 1 (a legacy subset-sum key that refuses to encrypt).
    pub version: u8,
    /// `k`, `q = 2^k`.
    pub k: u32,
    /// Dimension `n`.
    pub n: usize,
    /// Seed of the `a_i`.
    pub seed: [u8; 32],
    /// The bodies `b_i`.
    pub b: Vec<u64>,
    /// Noise width `w`: `e_i` is uniform in `[-2^{w-1}, 2^{w-1})`, made from `w` random bits
    /// inside the ABB (`e = Σ_{j<w} 2^j·x_j − 2^{w-1}`); encryption adds fresh noise of the same
    /// width.
    pub noise_bits: u32,
}

/// `(n, log2(q/σ))` of the two 128-bit parameter sets the secure noise width is interpolated
/// between (TFHE-rs 1.8, `V1_1_PARAM_MESSAGE_2_CARRY_2_KS_PBS_GAUSSIAN_2M64`: the LWE key and
/// the GLWE key; binary secrets, `q = 2^64`).
const SECURITY_ANCHORS: [(f64, f64); 2] = [(833.0, 18.08), (2048.0, 48.32)];
/// Bits of noise width added above the interpolated minimum.
const NOISE_MARGIN_BITS: u32 = 2;

impl PublicKey {
    /// The number of public samples for a secure key: `n` (see the type's docs: the encryption
    /// randomness is an LWE secret of dimension `m`, which must be as large as the key's).
    pub fn secure_samples(params: &Params) -> usize {
        params.n
    }

    /// The noise width `w` (bits) of a secure public key for `params` (see the type's docs for
    /// the source and the interpolation), checked against decryption correctness:
    /// `(2n + 1)·2^{w-1} < 2^{k−m−1}`.
    ///
    /// # Errors
    /// `Error::Params` when `n < 833` (below the interpolation's range there is no documented
    /// secure width; larger `n` uses the `n = 2048` anchor, which is conservative), or when
    /// that much noise leaves no room for the message.
    pub fn secure_noise_bits(params: &Params) -> Result<u32> {
        let [(n0, r0), (n1, r1)] = SECURITY_ANCHORS;
        let n = params.n as f64;
        if n < n0 {
            return Err(Error::Params(format!(
                "no secure public-key noise is documented for n = {} (needs n >= {n0})",
                params.n
            )));
        }
        let allowed = r0 + (n.min(n1) - n0) * (r1 - r0) / (n1 - n0);
        // σ = 2^w/√12 ≥ q/2^allowed  ⇔  w ≥ k − allowed + log2(√12).
        let min_w = f64::from(params.k) - allowed + 12f64.sqrt().log2();
        let w = min_w.ceil().max(1.0) as u32 + NOISE_MARGIN_BITS;
        let room = params.k.saturating_sub(params.m + 1);
        // (2n + 1)·2^{w-1} < 2^{w + log2(2n+1) - 1}
        let bound_bits = u64::BITS - (2 * params.n as u64 + 1).leading_zeros() + w - 1;
        if bound_bits >= room {
            return Err(Error::Params(format!(
                "a secure public key needs {w}-bit noise, which leaves no room for a {}-bit message mod 2^{}",
                params.m, params.k
            )));
        }
        Ok(w)
    }

    /// The mask `a_i` of sample `i`.
    pub fn a(&self, i: usize) -> Vec<u64> {
        let mut x = Xof::new(&self.seed, b"coterie-threshold/public-key/a", i as u64);
        let mask = self.mask();
        (0..self.n).map(|_| x.next_u64() & mask).collect()
    }

    fn mask(&self) -> u64 {
        modulus_mask(self.k)
    }

    /// Computes the service's public key of `key` inside the ABB:
    /// [`PublicKey::secure_samples`] samples (`count` must be at least that) with uniform noise
    /// of `noise_bits` bits (at least [`PublicKey::secure_noise_bits`]) made from random bits,
    /// and opens the bodies (MAC-checked). Consumes `count·noise_bits` random bits (46,080 for
    /// the paper's parameters: `1024 · 45`).
    ///
    /// # Errors
    /// `Error::Params` for fewer samples or less noise than a secure key needs (tests with toy
    /// parameters use [`PublicKey::insecure_toy_generate`]); errors of the engine and mesh.
    pub async fn generate<P: Preprocessing<Z2k>, M: Mesh>(
        eng: &mut Engine<Z2k, P>,
        mesh: &mut M,
        params: &Params,
        key: &SharedKey,
        seed: [u8; 32],
        count: usize,
        noise_bits: u32,
    ) -> Result<Self> {
        Self::make_checked(eng, mesh, params, key, seed, count, noise_bits, false).await
    }

    /// A key fingerprint (format 3, see the type's docs): `count` samples (at least 1, fewer
    /// than [`PublicKey::secure_samples`]) of the secure noise width, made inside the ABB like
    /// [`PublicKey::generate`]'s; consumes `count·noise_bits` random bits.
    ///
    /// # Errors
    /// `Error::Params` for a count out of that range or less noise than a secure key needs;
    /// errors of the engine and mesh.
    pub async fn fingerprint_generate<P: Preprocessing<Z2k>, M: Mesh>(
        eng: &mut Engine<Z2k, P>,
        mesh: &mut M,
        params: &Params,
        key: &SharedKey,
        seed: [u8; 32],
        count: usize,
        noise_bits: u32,
    ) -> Result<Self> {
        Self::make_checked(eng, mesh, params, key, seed, count, noise_bits, true).await
    }

    /// [`PublicKey::generate`] (`fingerprint` false: at least the secure count of samples) or
    /// [`PublicKey::fingerprint_generate`] (true: 1 to fewer than that, format 3), both with at
    /// least the secure noise width.
    #[allow(clippy::too_many_arguments)]
    async fn make_checked<P: Preprocessing<Z2k>, M: Mesh>(
        eng: &mut Engine<Z2k, P>,
        mesh: &mut M,
        params: &Params,
        key: &SharedKey,
        seed: [u8; 32],
        count: usize,
        noise_bits: u32,
        fingerprint: bool,
    ) -> Result<Self> {
        let w = Self::secure_noise_bits(params)?;
        let m = Self::secure_samples(params);
        if fingerprint && (count == 0 || count >= m || noise_bits < w) {
            return Err(Error::Params(format!(
                "a key fingerprint has 1 to {} samples of at least {w}-bit noise, not {count} of {noise_bits}",
                m - 1
            )));
        }
        if !fingerprint && (count < m || noise_bits < w) {
            return Err(Error::Params(format!(
                "an insecure public key was asked for ({count} samples of {noise_bits}-bit noise; a secure one needs at least {m} samples of {w}-bit noise)"
            )));
        }
        let mut pk = Self::make(eng, mesh, params, key, seed, count, noise_bits).await?;
        if fingerprint {
            pk.version = 3;
        }
        Ok(pk)
    }

    /// Whether this is a key fingerprint (format 3) rather than a public key.
    pub fn is_fingerprint(&self) -> bool {
        self.version == 3
    }

    /// [`PublicKey::generate`] without the security checks: any `count` and `noise_bits`, for
    /// **insecure toy** parameters in tests and documentation only.
    ///
    /// # Example
    ///
    /// Two parties, **insecure** toy parameters and dealer material (tests only): a key made
    /// inside the ABB, its public samples, and an encryption under them.
    ///
    /// ```
    /// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
    /// use coterie_spdz::{Counts, Engine, InsecureDealer, Z2k};
    /// use coterie_threshold::keys::{KeyDistribution, PublicKey, SharedKey};
    /// use coterie_threshold::Params;
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let p = Params::insecure_toy(4, 16, 2, 3).unwrap();
    /// let mut rng = rand::rng();
    /// let ring = Z2k::new(16, 64).unwrap();
    /// let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
    /// let counts = Counts { triples: 64, bits: 128, randoms: 64, masks_per_party: 0 };
    /// let mut tasks = Vec::new();
    /// let parties = InMemoryMesh::group(2, MeshOptions::default());
    /// for (mut mesh, prep) in parties.into_iter().zip(dealer.deal(counts, &mut rand::rng())) {
    ///     tasks.push(tokio::spawn(async move {
    ///         let mut eng = Engine::new(prep);
    ///         let key = SharedKey::generate(&mut eng, 4, KeyDistribution::Binary)?;
    ///         let pk = PublicKey::insecure_toy_generate(&mut eng, &mut mesh, &p, &key, [5; 32], 8, 2)
    ///             .await?;
    ///         mesh.close().await.ok();
    ///         Ok::<_, coterie_threshold::Error>(pk)
    ///     }));
    /// }
    /// let mut pks = Vec::new();
    /// for t in tasks {
    ///     pks.push(t.await.unwrap().unwrap());
    /// }
    /// assert_eq!(pks[0].to_bytes(), pks[1].to_bytes());
    /// let ct = pks[0].encrypt(3, 2, &mut rng).unwrap();
    /// assert!(ct.check(&p).is_ok());
    /// # });
    /// ```
    pub async fn insecure_toy_generate<P: Preprocessing<Z2k>, M: Mesh>(
        eng: &mut Engine<Z2k, P>,
        mesh: &mut M,
        params: &Params,
        key: &SharedKey,
        seed: [u8; 32],
        count: usize,
        noise_bits: u32,
    ) -> Result<Self> {
        Self::make(eng, mesh, params, key, seed, count, noise_bits).await
    }

    async fn make<P: Preprocessing<Z2k>, M: Mesh>(
        eng: &mut Engine<Z2k, P>,
        mesh: &mut M,
        params: &Params,
        key: &SharedKey,
        seed: [u8; 32],
        count: usize,
        noise_bits: u32,
    ) -> Result<Self> {
        key.check(params)?;
        if count == 0
            || count > crate::params::MAX_DIMENSION
            || noise_bits == 0
            || noise_bits + 1 >= params.k
        {
            return Err(Error::Params(
                "public key size or noise out of range".into(),
            ));
        }
        let mut pk = Self {
            version: 2,
            k: params.k,
            n: params.n,
            seed,
            b: Vec::new(),
            noise_bits,
        };
        let masks: Vec<Vec<u64>> = (0..count).map(|i| pk.a(i)).collect();
        pk.b = noisy_samples(eng, mesh, key, &masks, noise_bits).await?;
        Ok(pk)
    }

    /// Encodes the public key: magic `b"CTPK"`, version (2, or 3 for a fingerprint), `k` `u8`, `n` `u32`, seed, noise
    /// bits `u8`, count `u32`, bodies as little-endian `u64`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(47 + 8 * self.b.len());
        out.extend_from_slice(b"CTPK");
        out.push(self.version);
        out.push(self.k as u8);
        out.extend_from_slice(&(self.n as u32).to_le_bytes());
        out.extend_from_slice(&self.seed);
        out.push(self.noise_bits as u8);
        out.extend_from_slice(&(self.b.len() as u32).to_le_bytes());
        for b in &self.b {
            out.extend_from_slice(&b.to_le_bytes());
        }
        out
    }

    /// Decodes [`PublicKey::to_bytes`] (versions 1 to 3; sizes bounded and checked before
    /// allocating).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let bad = |s: &str| Error::Key(format!("public key: {s}"));
        if bytes.len() < 47 || &bytes[..4] != b"CTPK" {
            return Err(bad("bad header"));
        }
        let version = bytes[4];
        if !(1..=3).contains(&version) {
            return Err(bad("unsupported version"));
        }
        let k = u32::from(bytes[5]);
        let n = u32::from_le_bytes([bytes[6], bytes[7], bytes[8], bytes[9]]) as usize;
        let mut seed = [0u8; 32];
        seed.copy_from_slice(&bytes[10..42]);
        let noise_bits = u32::from(bytes[42]);
        let count = u32::from_le_bytes([bytes[43], bytes[44], bytes[45], bytes[46]]) as usize;
        if !(2..=64).contains(&k)
            || n == 0
            || n > crate::params::MAX_DIMENSION
            || count > crate::params::MAX_DIMENSION
            || noise_bits == 0
            || noise_bits + 1 >= k
            || bytes.len() != 47 + 8 * count
        {
            return Err(bad("fields out of range or wrong length"));
        }
        let b = bytes[47..]
            .chunks_exact(8)
            .map(|c| {
                let mut x = [0u8; 8];
                x.copy_from_slice(c);
                u64::from_le_bytes(x)
            })
            .collect();
        Ok(Self {
            version,
            k,
            n,
            seed,
            b,
            noise_bits,
        })
    }

    /// Encrypts `mu ∈ [2^m]` (format 2, see the type's docs): `(Aᵀr + e₁, bᵀr + e₂ + 2^{k-m}·mu)`
    /// with `r ∈ {0,1}^count` and `e₁, e₂` uniform of the key's noise width, from `rng` (give it
    /// a cryptographic generator).
    ///
    /// # Errors
    /// `Error::Params` for a message out of range or one the noise bound
    /// `(count + n + 1)·2^{w-1} < 2^{k-m-1}` does not leave room for; `Error::Key` for a format-1
    /// key (insecure, see the type's docs) and for a key fingerprint (format 3).
    pub fn encrypt<G: Rng + ?Sized>(&self, mu: u64, m: u32, rng: &mut G) -> Result<LweCiphertext> {
        if self.is_fingerprint() {
            return Err(Error::Key(format!(
                "this file is the key's fingerprint ({} samples), not a public key: the service was started with --no-public-key, so it cannot encrypt; encrypt with the key's former holder or TFHE-rs, or start a service with a public key",
                self.b.len()
            )));
        }
        if self.version < 2 {
            return Err(Error::Key(
                "this public key has format 1, whose encryption is insecure (a subset sum of too few samples without fresh noise); the nodes must make a new public key".into(),
            ));
        }
        if m == 0 || m >= self.k || mu >> m != 0 {
            return Err(Error::Params("message out of range".into()));
        }
        let terms = (self.b.len() + self.n + 1) as u64;
        let bound_bits = u64::BITS - terms.leading_zeros() + self.noise_bits - 1;
        if bound_bits >= self.k - m - 1 {
            return Err(Error::Params(format!(
                "a {m}-bit message leaves too little room for this public key's noise (up to 2^{bound_bits}, mod 2^{})",
                self.k
            )));
        }
        let mask = self.mask();
        let w = self.noise_bits;
        let half = 1u64 << (w - 1);
        let wmask = (1u64 << w) - 1;
        let noise = |rng: &mut G| (rng.next_u64() & wmask).wrapping_sub(half);
        let mut a: Vec<u64> = (0..self.n).map(|_| noise(rng)).collect();
        let mut b = (mu << (self.k - m)).wrapping_add(noise(rng));
        let mut r = 0u64;
        for (i, bi) in self.b.iter().enumerate() {
            if i % 64 == 0 {
                r = rng.next_u64();
            }
            let take = r & 1 == 1;
            r >>= 1;
            if take {
                let mut x = Xof::new(&self.seed, b"coterie-threshold/public-key/a", i as u64);
                for ai in a.iter_mut() {
                    *ai = ai.wrapping_add(x.next_u64() & mask);
                }
                b = b.wrapping_add(*bi);
            }
        }
        for ai in a.iter_mut() {
            *ai &= mask;
        }
        a.push(b & mask);
        LweCiphertext::from_parts(a, self.k, m).map_err(|e| Error::Key(e.to_string()))
    }
}

/// Opens `<a_i, s> + e_i` for every mask `a_i` of `masks`, `e_i` uniform in
/// `[-2^{w-1}, 2^{w-1})` from `w` random bits each, MAC-checked: fresh LWE samples of the shared
/// key.
async fn noisy_samples<P: Preprocessing<Z2k>, M: Mesh>(
    eng: &mut Engine<Z2k, P>,
    mesh: &mut M,
    key: &SharedKey,
    masks: &[Vec<u64>],
    noise_bits: u32,
) -> Result<Vec<u64>> {
    let w = noise_bits as usize;
    let bits = eng.rand_bits(w * masks.len())?;
    let ring = *eng.ring();
    let offset = ring.neg(&(1u128 << (w - 1)));
    let mut vals = Vec::with_capacity(masks.len());
    for (a, bits) in masks.iter().zip(bits.chunks_exact(w)) {
        let terms: Vec<(u128, &Sh)> = a.iter().map(|&x| u128::from(x)).zip(&key.coeffs).collect();
        let mut acc = eng.lin_comb(&offset, &terms);
        for (j, bit) in bits.iter().enumerate() {
            acc = eng.add(&acc, &eng.mul_const(bit, &(1u128 << j)));
        }
        vals.push(acc);
    }
    let opened = eng.open(mesh, &vals).await?;
    eng.check(mesh).await?;
    Ok(opened.iter().map(|&x| x as u64).collect())
}

/// Encrypts public `messages` (each `< 2^m`) under the shared key inside the ABB, without a
/// public key: ciphertext `j` is a fresh LWE sample `(a_j, <a_j, s> + e_j + 2^{k-m}·μ_j)` with
/// `a_j` expanded from the public `seed` and `e_j` uniform of
/// [`PublicKey::secure_noise_bits`] bits, made from random bits (that many per ciphertext) and
/// MAC-checked. As secure as one sample of the public key; the parties know the messages. What
/// the demo uses to make its ciphertexts cheaply (a secure public key costs `n·w` random bits,
/// 46,080 for the paper's parameters, which dominate OT preprocessing for a short run).
///
/// # Errors
/// `Error::Params` for a message out of range or parameters without a secure noise width;
/// errors of the engine and mesh.
pub async fn encrypt_inside_abb<P: Preprocessing<Z2k>, M: Mesh>(
    eng: &mut Engine<Z2k, P>,
    mesh: &mut M,
    params: &Params,
    key: &SharedKey,
    seed: [u8; 32],
    messages: &[u64],
) -> Result<Vec<LweCiphertext>> {
    key.check(params)?;
    let w = PublicKey::secure_noise_bits(params)?;
    if messages.iter().any(|&mu| mu >> params.m != 0) {
        return Err(Error::Params("message out of range".into()));
    }
    let q_mask = modulus_mask(params.k);
    let masks: Vec<Vec<u64>> = (0..messages.len())
        .map(|j| {
            let mut x = Xof::new(&seed, b"coterie-threshold/abb-encrypt/a", j as u64);
            (0..params.n).map(|_| x.next_u64() & q_mask).collect()
        })
        .collect();
    let bodies = noisy_samples(eng, mesh, key, &masks, w).await?;
    masks
        .into_iter()
        .zip(bodies.iter().zip(messages))
        .map(|(mut a, (&b, &mu))| {
            a.push(b.wrapping_add(mu << (params.k - params.m)) & q_mask);
            LweCiphertext::from_parts(a, params.k, params.m).map_err(|e| Error::Key(e.to_string()))
        })
        .collect()
}

/// `2^k − 1` (all ones for `k = 64`): reduction modulo `q = 2^k` of a 64-bit word.
fn modulus_mask(k: u32) -> u64 {
    if k >= 64 { u64::MAX } else { (1u64 << k) - 1 }
}

impl SharedKey {
    /// **Insecure** trusted dealing of a key `sk` to every party (the dealer knows it). Only
    /// for tests and benchmarks of the online phase.
    pub fn insecure_deal<G: Rng + ?Sized>(
        dealer: &coterie_spdz::InsecureDealer<Z2k>,
        ring: &Z2k,
        sk: &[i64],
        rng: &mut G,
    ) -> Vec<Self> {
        let n = dealer.key_shares().len();
        let mut out: Vec<Vec<Sh>> = (0..n).map(|_| Vec::with_capacity(sk.len())).collect();
        for &x in sk {
            let v = if x < 0 {
                ring.neg(&(x.unsigned_abs() as u128))
            } else {
                x as u128
            };
            for (o, s) in out.iter_mut().zip(dealer.share(&v, rng)) {
                o.push(s);
            }
        }
        out.into_iter().map(|coeffs| Self { coeffs }).collect()
    }
}

/// Envelope tag of coterie's raw LWE secret-key file ([`lwe_key_file_to_bytes`]).
pub const LWE_KEY_FILE_TAG: [u8; 4] = *b"THlk";
/// Format version of coterie's raw LWE secret-key file.
pub const LWE_KEY_FILE_VERSION: u16 = 1;

/// Which format a key file read by [`read_lwe_key_file`] was in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LweKeyFileFormat {
    /// coterie's raw format ([`lwe_key_file_to_bytes`]).
    Coterie,
    /// A TFHE-rs 1.8 `LweSecretKey<Vec<u64>>` in one of its encodings
    /// ([`crate::tfhers::lwe_secret_key_from_tfhe_rs`]).
    TfheRs(crate::tfhers::TfheRsEncoding),
}

impl std::fmt::Display for LweKeyFileFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Coterie => f.write_str("coterie raw LWE key (THlk)"),
            Self::TfheRs(e) => write!(f, "{e} of an LweSecretKey"),
        }
    }
}

/// Encodes a binary LWE secret key as coterie's **raw key file**: a coterie envelope
/// (`coterie_base::envelope`, tag `THlk`, version 1) whose payload is the `n` coefficients as
/// little-endian `u64` words, each 0 or 1 (`8·n` bytes). The result is **secret** (wiped on
/// drop); write it with owner-only permissions and destroy it after an import.
///
/// # Errors
/// [`Error::Key`] for an empty key, one longer than `MAX_DIMENSION`, or a coefficient other
/// than 0 and 1.
///
/// ```
/// use coterie_threshold::keys::{LweKeyFileFormat, lwe_key_file_to_bytes, read_lwe_key_file};
/// let file = lwe_key_file_to_bytes(&[1, 0, 1]).unwrap();
/// let (bits, format) = read_lwe_key_file(&file).unwrap();
/// assert_eq!((&bits[..], format), (&[1u64, 0, 1][..], LweKeyFileFormat::Coterie));
/// assert!(lwe_key_file_to_bytes(&[2]).is_err());
/// ```
pub fn lwe_key_file_to_bytes(bits: &[u64]) -> Result<zeroize::Zeroizing<Vec<u8>>> {
    check_binary_key(bits)?;
    let mut payload = zeroize::Zeroizing::new(Vec::with_capacity(8 * bits.len()));
    bits.iter()
        .for_each(|b| payload.extend_from_slice(&b.to_le_bytes()));
    coterie_base::envelope::seal_bytes(LWE_KEY_FILE_TAG, LWE_KEY_FILE_VERSION, &payload)
        .map(zeroize::Zeroizing::new)
        .map_err(|e| Error::Key(format!("key file: {e}")))
}

fn check_binary_key(bits: &[u64]) -> Result<()> {
    if bits.is_empty() || bits.len() > crate::params::MAX_DIMENSION {
        return Err(Error::Key(format!(
            "key of dimension {}: out of range",
            bits.len()
        )));
    }
    // one pass over every coefficient, no early exit on the first non-binary one
    if bits.iter().fold(0u64, |acc, &w| acc | (w & !1)) != 0 {
        return Err(Error::Key(
            "a coefficient other than 0 and 1 (only binary keys are imported)".into(),
        ));
    }
    Ok(())
}

/// Reads an LWE secret-key file for an import ([`import_key_file`]), detecting its format:
/// coterie's raw key file ([`lwe_key_file_to_bytes`]; the bytes open with a coterie envelope)
/// or a TFHE-rs 1.8 `core_crypto::LweSecretKey<Vec<u64>>` in any of its encodings (safe
/// serialization, versioned or plain bincode; [`crate::tfhers`]). Returns the key's bits, wiped
/// on drop, and the format found.
///
/// # Errors
/// [`Error::Key`] for a file in neither format, a malformed one, or a key that is not binary.
///
/// ```
/// use coterie_threshold::keys::{LweKeyFileFormat, read_lwe_key_file};
/// use coterie_threshold::tfhers::TfheRsEncoding;
/// // bincode of a TFHE-rs LweSecretKey of dimension 2
/// let mut b = 2u64.to_le_bytes().to_vec();
/// b.extend(1u64.to_le_bytes());
/// b.extend(0u64.to_le_bytes());
/// let (bits, format) = read_lwe_key_file(&b).unwrap();
/// assert_eq!(&bits[..], &[1u64, 0][..]);
/// assert_eq!(format, LweKeyFileFormat::TfheRs(TfheRsEncoding::Unversioned));
/// assert!(read_lwe_key_file(b"neither").is_err());
/// ```
pub fn read_lwe_key_file(bytes: &[u8]) -> Result<(zeroize::Zeroizing<Vec<u64>>, LweKeyFileFormat)> {
    if bytes.starts_with(&coterie_base::envelope::MAGIC) {
        let max = 8 * crate::params::MAX_DIMENSION;
        let payload =
            coterie_base::envelope::open_bytes(LWE_KEY_FILE_TAG, LWE_KEY_FILE_VERSION, bytes, max)
                .map_err(|e| Error::Key(format!("coterie key file: {e}")))?;
        if payload.len() % 8 != 0 {
            return Err(Error::Key(
                "coterie key file: payload is not a whole number of u64 words".into(),
            ));
        }
        let bits = zeroize::Zeroizing::new(
            payload
                .chunks_exact(8)
                .map(|c| {
                    let mut w = [0u8; 8];
                    w.copy_from_slice(c);
                    let x = u64::from_le_bytes(w);
                    w.zeroize();
                    x
                })
                .collect::<Vec<u64>>(),
        );
        check_binary_key(&bits).map_err(|e| Error::Key(format!("coterie key file: {e}")))?;
        return Ok((bits, LweKeyFileFormat::Coterie));
    }
    match crate::tfhers::detect(bytes) {
        Some(enc) => {
            let bits = crate::tfhers::lwe_secret_key_from_tfhe_rs(bytes)?;
            Ok((bits, LweKeyFileFormat::TfheRs(enc)))
        }
        None => Err(Error::Key(
            "neither a coterie key file (THlk envelope) nor a TFHE-rs LweSecretKey<Vec<u64>> \
             (safe serialization or bincode, versioned or not)"
                .into(),
        )),
    }
}

/// An LWE secret key read from a file for an import by its single holder
/// ([`SharedKey::import_from_single_holder`]): checked to be binary and of the expected
/// dimension; the coefficients are wiped on drop. `Debug` shows only the dimension and format.
pub struct KeyToImport {
    coeffs: zeroize::Zeroizing<Vec<i64>>,
    format: LweKeyFileFormat,
}

impl std::fmt::Debug for KeyToImport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "KeyToImport {{ n: {}, format: {}, .. }}",
            self.coeffs.len(),
            self.format
        )
    }
}

impl KeyToImport {
    /// The coefficients (secret).
    pub fn coeffs(&self) -> &[i64] {
        &self.coeffs
    }

    /// The format the file was in.
    pub fn format(&self) -> LweKeyFileFormat {
        self.format
    }
}

/// Reads a key file ([`read_lwe_key_file`]: coterie's raw format or TFHE-rs, detected) and
/// checks that the key is binary and of dimension `n` (the service's `params.n`), so an
/// unusable key is refused before anything is sent. The file's bytes and every intermediate
/// copy of the key are wiped.
///
/// # Errors
/// [`Error::Key`] for a file in neither format, a malformed one, a non-binary key, or a key
/// whose dimension is not `n`.
///
/// ```
/// use coterie_threshold::keys::{import_key_file, lwe_key_file_to_bytes};
/// let file = lwe_key_file_to_bytes(&[1, 0, 1, 1]).unwrap();
/// assert_eq!(import_key_file(&file, 4).unwrap().coeffs(), &[1, 0, 1, 1]);
/// let e = import_key_file(&file, 1024).unwrap_err().to_string();
/// assert!(e.contains("dimension 4"), "{e}");
/// ```
pub fn import_key_file(bytes: &[u8], n: usize) -> Result<KeyToImport> {
    let (bits, format) = read_lwe_key_file(bytes)?;
    if bits.len() != n {
        return Err(Error::Key(format!(
            "the key in the file ({format}) has dimension {}, but the service's parameters need \
             n = {n}",
            bits.len()
        )));
    }
    let coeffs = zeroize::Zeroizing::new(bits.iter().map(|&b| b as i64).collect());
    Ok(KeyToImport { coeffs, format })
}

#[cfg(test)]
mod tests {
    use super::*;
    use coterie_net::{InMemoryMesh, MeshOptions};
    use coterie_spdz::{Counts, InsecureDealer};

    /// A format-2 public key of a plaintext binary key, made in the clear (tests only).
    fn plain_key(n: usize, w: u32, rng: &mut impl Rng) -> (Vec<u64>, PublicKey) {
        let s: Vec<u64> = (0..n).map(|_| rng.next_u64() & 1).collect();
        let mut pk = PublicKey {
            version: 2,
            k: 64,
            n,
            seed: rand::RngExt::random(rng),
            b: Vec::new(),
            noise_bits: w,
        };
        for i in 0..n {
            let e = (rng.next_u64() & ((1 << w) - 1)).wrapping_sub(1 << (w - 1));
            let dot = pk
                .a(i)
                .iter()
                .zip(&s)
                .fold(e, |acc, (a, s)| acc.wrapping_add(a.wrapping_mul(*s)));
            pk.b.push(dot);
        }
        (s, pk)
    }

    #[test]
    fn secure_public_key_size_for_the_paper() {
        let p = Params::paper();
        assert_eq!(PublicKey::secure_samples(&p), 1024);
        assert_eq!(PublicKey::secure_noise_bits(&p).unwrap(), 45);
        assert_eq!(crate::node::PK_SAMPLES, PublicKey::secure_samples(&p));
        assert_eq!(
            crate::node::PK_NOISE_BITS,
            PublicKey::secure_noise_bits(&p).unwrap()
        );
        assert_eq!(
            crate::demo::NOISE_BITS,
            PublicKey::secure_noise_bits(&p).unwrap()
        );
        // below the interpolation's range: no claim
        let toy = Params::insecure_toy(512, 64, 1, 8).unwrap();
        assert!(PublicKey::secure_noise_bits(&toy).is_err());
        // larger n needs less noise (monotone), never more than at n = 1024
        let big = Params::for_lwe(2048, 64, 1, 8).unwrap();
        assert!(PublicKey::secure_noise_bits(&big).unwrap() < 45);
        // too much noise for the message: a 40-bit message cannot fit
        let wide = Params::for_lwe(1024, 64, 40, 8);
        if let Ok(wide) = wide {
            assert!(PublicKey::secure_noise_bits(&wide).is_err());
        }
    }

    #[test]
    fn encryption_decrypts_with_fresh_noise_inside_the_bound() {
        let mut rng = rand::rng();
        let (n, w) = (1024, 45);
        let (s, pk) = plain_key(n, w, &mut rng);
        let bound = (2 * n as u64 + 1) << (w - 1);
        let mut largest = 0u64;
        for i in 0..40u64 {
            let mu = i % 2;
            let ct = pk.encrypt(mu, 1, &mut rng).unwrap();
            let dot = ct
                .mask()
                .iter()
                .zip(&s)
                .fold(0u64, |acc, (a, s)| acc.wrapping_add(a.wrapping_mul(*s)));
            let phase = ct.body().wrapping_sub(dot);
            let noise = phase.wrapping_sub(mu << 63) as i64;
            assert!(noise.unsigned_abs() < bound, "noise {noise} over the bound");
            assert_eq!(crate::round_p(phase, 64, 1), mu);
            largest = largest.max(noise.unsigned_abs());
        }
        // the noise is a sum of about (m + n)/2 + 1 uniform 45-bit terms: its standard deviation
        // is about 2^43.2 · √1025 ≈ 2^48.2; 40 samples all below 2^45 would mean it is missing
        assert!(largest > 1 << 45, "largest noise {largest} is too small");
    }

    #[test]
    fn format_1_decodes_but_refuses_to_encrypt() {
        let mut rng = rand::rng();
        let (_, mut pk) = plain_key(1024, 45, &mut rng);
        let bytes = pk.to_bytes();
        assert_eq!(bytes[4], 2);
        assert_eq!(PublicKey::from_bytes(&bytes).unwrap(), pk);
        pk.version = 1;
        let old = PublicKey::from_bytes(&pk.to_bytes()).unwrap();
        assert_eq!(old.version, 1);
        let e = old.encrypt(1, 1, &mut rng).unwrap_err().to_string();
        assert!(e.contains("format 1"), "{e}");
        let mut bad = bytes.clone();
        bad[4] = 4;
        assert!(PublicKey::from_bytes(&bad).is_err());
    }

    /// A key fingerprint (format 3) round-trips, has another digest than the same samples as
    /// a public key, and refuses to encrypt, saying why.
    #[test]
    fn a_fingerprint_decodes_and_refuses_to_encrypt() {
        let mut rng = rand::rng();
        let (_, mut pk) = plain_key(1024, 45, &mut rng);
        pk.b.truncate(16);
        let as_pk = pk.to_bytes();
        pk.version = 3;
        let bytes = pk.to_bytes();
        assert_eq!(bytes[4], 3);
        assert_ne!(blake3::hash(&bytes), blake3::hash(&as_pk));
        let fp = PublicKey::from_bytes(&bytes).unwrap();
        assert!(fp.is_fingerprint());
        let e = fp.encrypt(1, 1, &mut rng).unwrap_err().to_string();
        assert!(
            e.contains("fingerprint") && e.contains("--no-public-key"),
            "{e}"
        );
    }

    #[tokio::test]
    async fn generate_refuses_an_insecure_size() {
        let p = Params::paper();
        let mut rng = rand::rng();
        let dealer = InsecureDealer::insecure_new(Z2k::spdz2k_64(), 2, &mut rng).unwrap();
        let counts = Counts {
            triples: 0,
            bits: 0,
            randoms: 0,
            masks_per_party: 0,
        };
        let prep = dealer.deal(counts, &mut rng).remove(0);
        let mut eng = Engine::new(prep);
        let mut mesh = InMemoryMesh::group(2, MeshOptions::default()).remove(0);
        let key = SharedKey { coeffs: Vec::new() };
        for (count, w) in [(64, 45), (1024, 40)] {
            let e = PublicKey::generate(&mut eng, &mut mesh, &p, &key, [0; 32], count, w)
                .await
                .unwrap_err()
                .to_string();
            assert!(e.contains("insecure public key"), "{e}");
        }
        // a fingerprint has fewer samples than a public key, and the secure noise
        for (count, w) in [(0, 45), (1024, 45), (16, 40)] {
            let e =
                PublicKey::fingerprint_generate(&mut eng, &mut mesh, &p, &key, [0; 32], count, w)
                    .await
                    .unwrap_err()
                    .to_string();
            assert!(e.contains("key fingerprint has 1 to 1023 samples"), "{e}");
        }
    }
}
