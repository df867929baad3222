//! F_KeyGen (seed 002 §5.1, Fig. 5): the public key, the relinearization key and MatMul's `d − 1`
//! rotation keys of one secret `s = Σ_l s^(l)` held in additive shares.
//!
//! Two instantiations:
//!
//! * [`distributed_keygen`]: every party samples its own small secret `s^(l)` and the parties
//!   run the collective key generation of coterie-bfv's [`multiparty`] module (Lattigo's
//!   `multiparty` construction: public key, two-round relinearization key, Galois keys) over a
//!   common reference string tossed by commit-and-open. **Passively secure**: a malicious party
//!   can bias the keys (e.g. send a share that is not of the form `−a·s + e`); the paper puts an
//!   actively secure setup (Rotaru et al.) out of scope, and so do we. Everything after key
//!   generation (PoPK, DDec, the MAC check) is the paper's actively secure flow.
//! * [`insecure_dealer_keys`]: one process samples `s` and splits it, `s^(0)` uniform in `R_q`
//!   as in spec §8 case 16. **Insecure** (the dealer knows `s`): for tests only.
//!
//! [`multiparty`]: coterie_bfv::multiparty

use coterie_base::progress::Progress;
use coterie_bfv::keys::{GaloisKeys, PublicKey, RelinKey, SecretKey};
use coterie_bfv::matmul::matmul_galois_elements;
use coterie_bfv::multiparty::{
    GaloisKeyGen, GaloisKeyShare, PublicKeyGen, PublicKeyShare, RelinKeyGen, RelinKeyShare,
};
use coterie_bfv::{Context, Decomposition};
use coterie_math::poly::{Poly, Representation};
use coterie_net::Mesh;
use coterie_net::commit::commit_open_all;
use zeroize::Zeroize;

use crate::params::ProtocolParams;
use crate::{Error, Result};

/// Message tags of the key generation.
pub(crate) mod tags {
    /// Public-key shares.
    pub const PK: u32 = 0x3A7E_0101;
    /// Relinearization key shares, round 1.
    pub const RLK1: u32 = 0x3A7E_0102;
    /// Relinearization key shares, round 2.
    pub const RLK2: u32 = 0x3A7E_0103;
    /// Galois key shares.
    pub const GAL: u32 = 0x3A7E_0104;
}

/// One party's additive share `s^(l)` of the secret key (`Σ_l s^(l) = s` in `R_q`), in NTT
/// form at the top level. Secret: zeroized on drop, no `Debug` of its value.
pub struct KeyShare {
    pub(crate) s: Poly,
}

impl std::fmt::Debug for KeyShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeyShare(..)")
    }
}

impl Drop for KeyShare {
    fn drop(&mut self) {
        self.s.data_mut().zeroize();
    }
}

impl KeyShare {
    /// The share of a party whose own small secret is `sk`.
    pub fn from_secret_key(sk: &SecretKey) -> Result<Self> {
        let ring = sk.context().ring(sk.context().max_level())?;
        let mut s = Poly::from_signed(&ring, sk.coefficients())?;
        s.to_ntt();
        Ok(KeyShare { s })
    }

    /// The residues, for this party's owner-only state file.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.s.to_packed()
    }

    /// Reads a share written by [`KeyShare::to_bytes`] for `ctx` (length and range checked).
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let ring = ctx.ring(ctx.max_level())?;
        Ok(KeyShare {
            s: Poly::from_packed(&ring, Representation::Ntt, bytes)?,
        })
    }
}

/// The public keys of the protocol: the encryption key, the relinearization key and the
/// rotation keys of MatMul for the parameters' `d`.
#[derive(Clone, Debug)]
pub struct EvalKeys {
    /// `pk`.
    pub pk: PublicKey,
    /// `rlk` (RNS gadget).
    pub rlk: RelinKey,
    /// `rtk_{i·l}`, `i = 1 … d − 1`.
    pub rot: GaloisKeys,
}

impl EvalKeys {
    /// Encoding: three length-prefixed versioned encodings of coterie-bfv.
    pub fn to_bytes(&self) -> Vec<u8> {
        let ctx = self.pk.context();
        let mut out = Vec::new();
        for part in [
            self.pk.to_bytes(),
            self.rlk.to_bytes(),
            self.rot.to_bytes(ctx),
        ] {
            out.extend_from_slice(&(part.len() as u64).to_le_bytes());
            out.extend_from_slice(&part);
        }
        out
    }

    /// Bounded decoding for `ctx`.
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let mut rest = bytes;
        let mut next = || -> Result<&[u8]> {
            let (len, tail) = rest
                .split_first_chunk::<8>()
                .ok_or_else(|| Error::Malformed("truncated evaluation keys".into()))?;
            let len = usize::try_from(u64::from_le_bytes(*len))
                .ok()
                .filter(|&l| l <= tail.len())
                .ok_or_else(|| Error::Malformed("truncated evaluation keys".into()))?;
            let (part, tail) = tail.split_at(len);
            rest = tail;
            Ok(part)
        };
        let pk = PublicKey::from_bytes(ctx, next()?)?;
        let rlk = RelinKey::from_bytes(ctx, next()?)?;
        let rot = GaloisKeys::from_bytes(ctx, next()?)?;
        if !rest.is_empty() {
            return Err(Error::Malformed(
                "trailing bytes after evaluation keys".into(),
            ));
        }
        Ok(EvalKeys { pk, rlk, rot })
    }
}

/// **Insecure trusted dealer** (tests only): samples `s`, makes every key from it, and splits
/// `s` into `n` additive shares, all but the last uniform in `R_q`.
pub fn insecure_dealer_keys<R: rand::CryptoRng + ?Sized>(
    pp: &ProtocolParams,
    rng: &mut R,
) -> Result<(EvalKeys, Vec<KeyShare>)> {
    let ctx = pp.context();
    let sk = SecretKey::generate(ctx, rng);
    let keys = EvalKeys {
        pk: sk.public_key(rng),
        rlk: sk.relin_key(rng),
        rot: sk.matmul_rotation_keys(pp.d(), rng)?,
    };
    let ring = ctx.ring(ctx.max_level())?;
    let mut last = KeyShare::from_secret_key(&sk)?;
    let mut shares = Vec::with_capacity(pp.parties());
    for _ in 1..pp.parties() {
        let r = Poly::random(&ring, Representation::Ntt, rng);
        last.s.try_sub_assign(&r)?;
        shares.push(KeyShare { s: r });
    }
    shares.push(last);
    Ok((keys, shares))
}

/// The passively secure distributed key generation (see the module docs) for this party:
/// a CRS seed by commit-and-open coin tossing, then the public key, the relinearization key
/// (two rounds) and the `d − 1` rotation keys of MatMul, every share sent to every party and
/// aggregated by each. `progress` counts the keys made (`d + 1` of them).
pub async fn distributed_keygen<M: Mesh, R: rand::CryptoRng + ?Sized>(
    mesh: &mut M,
    pp: &ProtocolParams,
    rng: &mut R,
    progress: &Progress,
) -> Result<(EvalKeys, KeyShare)> {
    let ctx = pp.context();
    let mut mine = [0u8; 32];
    rand::Rng::fill_bytes(rng, &mut mine);
    let seeds: Vec<[u8; 32]> = commit_open_all(mesh, "coterie-matrigear/keygen/crs", &mine).await?;
    let mut h = blake3::Hasher::new_derive_key("coterie-matrigear keygen crs v1");
    for s in &seeds {
        h.update(s);
    }
    let crs = *h.finalize().as_bytes();
    let sk = SecretKey::generate(ctx, rng);
    let elements = matmul_galois_elements(ctx, pp.d())?;
    let task = progress.task(
        format!("party {}: MatriGear keys", mesh.id()),
        (2 + elements.len()) as u64,
    );

    // Public key.
    let ckg = PublicKeyGen::new(ctx);
    let crp = ckg.gen_crp(&crs)?;
    let share = ckg.gen_share(&sk, &crp, rng)?;
    let all = exchange(mesh, tags::PK, share.to_bytes()).await?;
    let shares = decode_all(&all, |b| PublicKeyShare::from_bytes(ctx, b))?;
    let pk = ckg.finalize(&ckg.aggregate(&shares)?, &crp)?;
    task.inc(1);

    // Relinearization key, two rounds.
    let rkg = RelinKeyGen::new(ctx, Decomposition::Rns)?;
    let crp = rkg.gen_crp(&crs)?;
    let (eph, r1) = rkg.gen_share_round_one(&sk, &crp, rng)?;
    let all = exchange(mesh, tags::RLK1, r1.to_bytes()).await?;
    let shares = decode_all(&all, |b| {
        RelinKeyShare::from_bytes(ctx, Decomposition::Rns, b)
    })?;
    let agg1 = rkg.aggregate(&shares)?;
    let r2 = rkg.gen_share_round_two(&eph, &sk, &agg1, rng)?;
    let all = exchange(mesh, tags::RLK2, r2.to_bytes()).await?;
    let shares = decode_all(&all, |b| {
        RelinKeyShare::from_bytes(ctx, Decomposition::Rns, b)
    })?;
    let rlk = rkg.finalize(&rkg.aggregate(&shares)?, &agg1)?;
    task.inc(1);

    // Rotation keys.
    let gkg = GaloisKeyGen::new(ctx, Decomposition::Rns)?;
    let mut rot = GaloisKeys::default();
    for &g in &elements {
        let crp = gkg.gen_crp(&crs, g)?;
        let share = gkg.gen_share(&sk, g, &crp, rng)?;
        let all = exchange(mesh, tags::GAL, share.to_bytes()).await?;
        let shares = decode_all(&all, |b| {
            GaloisKeyShare::from_bytes(ctx, Decomposition::Rns, b)
        })?;
        rot.insert(gkg.finalize(&gkg.aggregate(&shares)?, &crp)?);
        task.inc(1);
    }
    Ok((EvalKeys { pk, rlk, rot }, KeyShare::from_secret_key(&sk)?))
}

/// Sends `bytes` to every party and returns every party's bytes (own at own index).
pub(crate) async fn exchange<M: Mesh>(
    mesh: &mut M,
    tag: u32,
    bytes: Vec<u8>,
) -> Result<Vec<Vec<u8>>> {
    let (me, n) = (mesh.id(), mesh.n());
    for to in (0..n).filter(|&j| j != me) {
        mesh.send_bytes(to, tag, &bytes).await?;
    }
    let mut out = Vec::with_capacity(n);
    for from in 0..n {
        if from == me {
            out.push(Vec::new());
        } else {
            out.push(mesh.recv_bytes(from, tag).await?);
        }
    }
    out[me] = bytes;
    Ok(out)
}

/// Decodes every party's message with `f`; an error names the party.
fn decode_all<T>(all: &[Vec<u8>], f: impl Fn(&[u8]) -> coterie_bfv::Result<T>) -> Result<Vec<T>> {
    all.iter()
        .enumerate()
        .map(|(j, b)| f(b).map_err(|e| Error::Protocol(format!("party {j}'s key share: {e}"))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use coterie_bfv::Plaintext;
    use coterie_bfv::encrypt::decode_phase;
    use coterie_math::prg::Csprng;
    use coterie_net::local::run_parties;
    use coterie_net::{InMemoryMesh, MeshOptions};

    /// The phase `c0 + c1·Σ s^(l)` from the shares, decoded.
    fn joint_decrypt(ct: &coterie_bfv::Ciphertext, shares: &[&KeyShare]) -> Plaintext {
        let ctx = ct.context();
        let mut c1 = ct.parts()[1].clone();
        c1.to_ntt();
        let mut acc = Poly::zero(c1.context(), Representation::Ntt);
        for s in shares {
            acc.try_mul_acc(&c1, &s.s).unwrap();
        }
        acc.to_coeff();
        acc.try_add_assign(&ct.parts()[0]).unwrap();
        decode_phase(ctx, acc, ct.level()).unwrap()
    }

    #[test]
    fn dealer_keys_decrypt_under_the_shares() {
        let pp = ProtocolParams::insecure_toy_b(3, 4).unwrap();
        let mut rng = Csprng::new();
        let (keys, shares) = insecure_dealer_keys(&pp, &mut rng).unwrap();
        assert_eq!(keys.rot.elements().len(), 3);
        let ctx = pp.context();
        let vals: Vec<_> = (0..8u32).map(coterie_math::bigint::BigInt::from).collect();
        let pt = Plaintext::encode_slots(ctx, &vals).unwrap();
        let ct = keys.pk.encrypt(&pt, &mut rng).unwrap();
        let prod = ct.mul(&ct, &keys.rlk).unwrap();
        let refs: Vec<&KeyShare> = shares.iter().collect();
        assert_eq!(joint_decrypt(&ct, &refs), pt);
        let sq = joint_decrypt(&prod, &refs).decode_slots().unwrap();
        for (i, v) in sq.iter().enumerate() {
            assert_eq!(*v, coterie_math::bigint::BigInt::from(i * i));
        }
        // key shares and evaluation keys round-trip; truncation is refused
        let b = keys.to_bytes();
        let back = EvalKeys::from_bytes(ctx, &b).unwrap();
        assert_eq!(back.to_bytes(), b);
        assert!(EvalKeys::from_bytes(ctx, &b[..b.len() - 1]).is_err());
        let s = KeyShare::from_bytes(ctx, &shares[0].to_bytes()).unwrap();
        assert_eq!(s.s, shares[0].s);
        assert!(KeyShare::from_bytes(ctx, &[1, 2, 3]).is_err());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn distributed_keys_work_for_matmul_and_decrypt_jointly() {
        let pp = ProtocolParams::insecure_toy_b(3, 4).unwrap();
        let meshes = InMemoryMesh::group(3, MeshOptions::default());
        let pp2 = pp.clone();
        let res = run_parties(meshes, move |mut mesh| {
            let pp = pp2.clone();
            async move {
                let seen = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
                let log = seen.clone();
                let progress = Progress::new(move |e| {
                    if let coterie_base::ProgressEvent::Advance { done, .. } = e {
                        log.store(*done, std::sync::atomic::Ordering::Relaxed);
                    }
                });
                let out = distributed_keygen(&mut mesh, &pp, &mut Csprng::new(), &progress).await;
                mesh.close().await?;
                assert_eq!(seen.load(std::sync::atomic::Ordering::Relaxed), 5);
                out
            }
        })
        .await;
        let res: Vec<(EvalKeys, KeyShare)> = res.into_iter().map(|r| r.unwrap()).collect();
        for (k, _) in &res[1..] {
            assert_eq!(
                k.to_bytes(),
                res[0].0.to_bytes(),
                "parties agree on the keys"
            );
        }
        let ctx = pp.context();
        let keys = &res[0].0;
        // a 4x4 matrix product (two batched pairs) under the collective keys
        let a: Vec<Vec<Vec<_>>> = (0..2)
            .map(|t| {
                (0..4)
                    .map(|i| {
                        (0..4)
                            .map(|j| coterie_math::bigint::BigInt::from(t + i * 4 + j))
                            .collect()
                    })
                    .collect()
            })
            .collect();
        let enc = |vecs: Vec<Vec<coterie_math::bigint::BigInt>>| -> Vec<coterie_bfv::Ciphertext> {
            vecs.iter()
                .map(|v| {
                    keys.pk
                        .encrypt(
                            &Plaintext::encode_slots(ctx, v).unwrap(),
                            &mut Csprng::new(),
                        )
                        .unwrap()
                })
                .collect()
        };
        let ca = enc(coterie_bfv::matmul::diagonal_encode(&a, 8).unwrap());
        let cb = enc(coterie_bfv::matmul::shifted_diagonal_encode(&a, 8).unwrap());
        let cc = coterie_bfv::matmul::matmul(&ca, &cb, &keys.rlk, &keys.rot).unwrap();
        let refs: Vec<&KeyShare> = res.iter().map(|(_, s)| s).collect();
        let vecs: Vec<_> = cc
            .iter()
            .map(|c| joint_decrypt(c, &refs).decode_slots().unwrap())
            .collect();
        let got = coterie_bfv::matmul::diagonal_decode(&vecs, 2).unwrap();
        let p = pp.p();
        for (t, m) in a.iter().enumerate() {
            for i in 0..4 {
                for j in 0..4 {
                    let want = (0..4)
                        .map(|k| coterie_math::bigint::BigInt::from(&m[i][k] * &m[k][j]))
                        .sum::<coterie_math::bigint::BigInt>()
                        % &p;
                    assert_eq!(got[t][i][j], want);
                }
            }
        }
    }
}
