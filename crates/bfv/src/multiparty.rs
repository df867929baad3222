//! Collective key generation from key shares over a common reference string, in the style of
//! Lattigo's `multiparty` package: `n` parties with secret keys `s_i` produce the keys of
//! `s = Σ s_i` without ever assembling `s`. No network here: each protocol is a set of local
//! steps, and the caller moves the shares.
//!
//! | protocol | steps |
//! |---|---|
//! | [`PublicKeyGen`] | `gen_crp(seed)` → `a`; `gen_share(s_i, a)` = `−a·s_i + e_i`; `aggregate`; `finalize` = `(Σ, a)` |
//! | [`RelinKeyGen`] (two rounds) | `gen_crp(seed)` → `a_j`; round 1: `(−u_i·a_j + s_i·g_j + e, s_i·a_j + e')`; round 2: `(s_i·h0_j + e, (u_i − s_i)·h1_j + e')`; `finalize` = `(h0' + h1', h1)` |
//! | [`GaloisKeyGen`] | `gen_crp(seed)` → `a_j`; `gen_share(s_i, g, a)` = `−a_j·s_i + σ_g(s_i)·g_j + e`; `aggregate`; `finalize` = `(Σ, a_j)` |
//!
//! The common random polynomials come from a 32-byte CRS seed through coterie-math's PRG, with a
//! sub-seed per protocol (and per Galois element), so two protocols never share `a`. Every share
//! serializes (coterie-base envelope) to exactly [`PublicKeyShare::encoded_len`] /
//! [`RelinKeyShare::encoded_len`] / [`GaloisKeyShare::encoded_len`] bytes: residues are
//! fixed-width.
//!
//! ```
//! use coterie_bfv::multiparty::PublicKeyGen;
//! use coterie_bfv::{Context, Params, Plaintext, SecretKey};
//! use coterie_math::prg::Csprng;
//! let ctx = Context::new(Params::insecure_toy(256, 256).unwrap()).unwrap();
//! let mut rng = Csprng::new();
//! let sks: Vec<SecretKey> = (0..3).map(|_| SecretKey::generate(&ctx, &mut rng)).collect();
//! let ckg = PublicKeyGen::new(&ctx);
//! let crp = ckg.gen_crp(&[7; 32]).unwrap();
//! let shares: Vec<_> = sks.iter().map(|sk| ckg.gen_share(sk, &crp, &mut rng).unwrap()).collect();
//! let pk = ckg.finalize(&ckg.aggregate(&shares).unwrap(), &crp).unwrap();
//! // The ideal secret key s = Σ s_i decrypts.
//! let sum: Vec<i64> = (0..256).map(|j| sks.iter().map(|s| s.coefficients()[j]).sum()).collect();
//! let sk = SecretKey::from_coefficients(&ctx, sum).unwrap();
//! let pt = Plaintext::encode_coefficients(&ctx, &[42]).unwrap();
//! assert_eq!(sk.decrypt(&pk.encrypt(&pt, &mut rng).unwrap()).unwrap(), pt);
//! ```

use crate::context::{Context, Fingerprint};
use crate::keys::{
    Decomposition, GadgetCiphertext, GaloisKey, PublicKey, RelinKey, SecretKey,
    check_galois_element, sample_error, sample_secret, seed_label,
};
use crate::serial::{check_params, decode, encode};
use crate::{Error, Result};
use coterie_math::poly::{Poly, Representation};
use coterie_math::prg::Seed;
use serde::{Deserialize, Serialize};
use zeroize::Zeroize;

/// The sub-seed of one protocol (and Galois element) from the CRS seed.
pub(crate) fn sub_seed(seed: &Seed, protocol: &[u8], g: u64) -> Seed {
    let mut h = blake3::Hasher::new_derive_key("coterie-bfv/multiparty/crs/v1");
    h.update(seed);
    h.update(&(protocol.len() as u64).to_le_bytes());
    h.update(protocol);
    h.update(&g.to_le_bytes());
    *h.finalize().as_bytes()
}

/// A fresh error polynomial at the top level, NTT form.
pub(crate) fn error_ntt<R: rand::CryptoRng + ?Sized>(ctx: &Context, rng: &mut R) -> Result<Poly> {
    let mut e = vec![0i64; ctx.degree()];
    sample_error(ctx, rng, &mut e);
    let p = Poly::from_signed(&ctx.top().ring, &e);
    e.zeroize();
    let mut p = p?;
    p.to_ntt();
    Ok(p)
}

fn check_owner(ctx: &Context, sk: &SecretKey) -> Result<()> {
    ctx.check_same(&sk.ctx)
}

/// Sums share vectors component by component (all of the same length).
fn sum_rows<'a>(rows: impl Iterator<Item = &'a [Poly]>) -> Result<Vec<Poly>> {
    let mut acc: Option<Vec<Poly>> = None;
    for r in rows {
        match &mut acc {
            None => acc = Some(r.to_vec()),
            Some(a) => {
                if a.len() != r.len() {
                    return Err(Error::Mismatch("shares of different sizes".into()));
                }
                for (x, y) in a.iter_mut().zip(r) {
                    x.try_add_assign(y)?;
                }
            }
        }
    }
    acc.ok_or_else(|| Error::InvalidParameter("no shares to aggregate".into()))
}

/// Wire form of every share: the fingerprint, the decomposition, the Galois element (fixed
/// width) and the polynomials packed at their primes' bit widths ([`Poly::to_packed`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShareWire {
    /// Parameter-set fingerprint.
    pub params: Fingerprint,
    /// The gadget decomposition (unused by public-key shares).
    pub decomposition: Decomposition,
    /// The Galois element, little-endian (0 unless a Galois key share).
    pub g: [u8; 8],
    /// The polynomials (top level, NTT form), packed.
    #[serde(with = "coterie_base::bytes::list")]
    pub polys: Vec<Vec<u8>>,
}

/// [`ShareWire`] under the public-key-share tag.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct PkShareWire(ShareWire);
/// [`ShareWire`] under the relinearization-key-share tag.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct RlkShareWire(ShareWire);
/// [`ShareWire`] under the Galois-key-share tag.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct GkShareWire(ShareWire);

coterie_base::versioned! {
    PkShareWire => b"BFVa" v 2,
    RlkShareWire => b"BFVb" v 2,
    GkShareWire => b"BFVe" v 2,
}

fn to_wire(ctx: &Context, decomposition: Decomposition, g: u64, polys: &[Poly]) -> ShareWire {
    ShareWire {
        params: *ctx.fingerprint(),
        decomposition,
        g: g.to_le_bytes(),
        polys: polys.iter().map(Poly::to_packed).collect(),
    }
}

fn from_wire(ctx: &Context, w: ShareWire, count: usize) -> Result<Vec<Poly>> {
    check_params(ctx, &w.params)?;
    if w.polys.len() != count {
        return Err(Error::Malformed(format!(
            "share of {} polynomials, expected {count}",
            w.polys.len()
        )));
    }
    let ring = ctx.ring(ctx.max_level())?;
    w.polys
        .into_iter()
        .map(|bytes| Ok(Poly::from_packed(&ring, Representation::Ntt, &bytes)?))
        .collect()
}

/// The exact encoded length of a share of `count` polynomials.
fn share_len(ctx: &Context, decomposition: Decomposition, count: usize) -> usize {
    let ring = ctx.top().ring.clone();
    let w = ShareWire {
        params: [0; 32],
        decomposition,
        g: [0; 8],
        polys: vec![Poly::zero(&ring, Representation::Ntt).to_packed(); count],
    };
    encode(&PkShareWire(w)).len()
}

// ---------------------------------------------------------------------------------------------
// Public key.

/// The common random polynomial of [`PublicKeyGen`] (with the seed it comes from).
#[derive(Clone, Debug)]
pub struct PublicKeyCrp {
    seed: Seed,
    a: Poly,
}

/// A party's share `−a·s_i + e_i` of the collective public key (or an aggregate of shares).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicKeyShare {
    ctx: Context,
    p0: Poly,
}

impl PublicKeyShare {
    /// The exact length of [`PublicKeyShare::to_bytes`] for `ctx`.
    pub fn encoded_len(ctx: &Context) -> usize {
        share_len(ctx, Decomposition::Rns, 1)
    }

    /// Envelope encoding (fixed size).
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&PkShareWire(to_wire(
            &self.ctx,
            Decomposition::Rns,
            0,
            std::slice::from_ref(&self.p0),
        )))
    }

    /// Bounded decoding for `ctx`.
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let w: PkShareWire = decode(bytes, Self::encoded_len(ctx))?;
        let mut polys = from_wire(ctx, w.0, 1)?;
        Ok(PublicKeyShare {
            ctx: ctx.clone(),
            p0: polys.remove(0),
        })
    }
}

/// Collective public-key generation: `pk = (Σ_i (−a·s_i + e_i), a)`.
#[derive(Clone, Debug)]
pub struct PublicKeyGen {
    ctx: Context,
}

impl PublicKeyGen {
    /// The protocol for `ctx`.
    pub fn new(ctx: &Context) -> Self {
        PublicKeyGen { ctx: ctx.clone() }
    }

    /// The common random polynomial `a` from the 32-byte CRS seed.
    pub fn gen_crp(&self, seed: &Seed) -> Result<PublicKeyCrp> {
        let seed = sub_seed(seed, b"ckg", 0);
        let a = Poly::from_seed(
            &self.ctx.top().ring,
            Representation::Ntt,
            &seed,
            &seed_label(b"pk", 0),
        )?;
        Ok(PublicKeyCrp { seed, a })
    }

    /// Party `i`'s share `−a·s_i + e_i`.
    pub fn gen_share<R: rand::CryptoRng + ?Sized>(
        &self,
        sk: &SecretKey,
        crp: &PublicKeyCrp,
        rng: &mut R,
    ) -> Result<PublicKeyShare> {
        check_owner(&self.ctx, sk)?;
        Ok(PublicKeyShare {
            ctx: self.ctx.clone(),
            p0: sk.rlwe_mask(&crp.a, rng),
        })
    }

    /// The sum of the shares.
    pub fn aggregate(&self, shares: &[PublicKeyShare]) -> Result<PublicKeyShare> {
        for s in shares {
            self.ctx.check_same(&s.ctx)?;
        }
        let mut sum = sum_rows(shares.iter().map(|s| std::slice::from_ref(&s.p0)))?;
        Ok(PublicKeyShare {
            ctx: self.ctx.clone(),
            p0: sum.remove(0),
        })
    }

    /// The collective public key `(aggregate, a)`.
    pub fn finalize(&self, aggregate: &PublicKeyShare, crp: &PublicKeyCrp) -> Result<PublicKey> {
        self.ctx.check_same(&aggregate.ctx)?;
        Ok(PublicKey {
            ctx: self.ctx.clone(),
            seed: crp.seed,
            p0: aggregate.p0.clone(),
            p1: crp.a.clone(),
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Gadget-shaped shares (relinearization and Galois keys).

/// The common random polynomials `a_j` (one per gadget row) of [`RelinKeyGen`] and
/// [`GaloisKeyGen`], with the seed they come from.
#[derive(Clone, Debug)]
pub struct GadgetCrp {
    seed: Seed,
    a: Vec<Poly>,
}

fn gadget_crp(ctx: &Context, decomposition: Decomposition, seed: Seed) -> Result<GadgetCrp> {
    let ring = &ctx.top().ring;
    let rows = decomposition.rows(ring)?;
    let a = (0..rows)
        .map(|i| Poly::from_seed(ring, Representation::Ntt, &seed, &seed_label(b"ksk", i)))
        .collect::<coterie_math::Result<Vec<_>>>()?;
    Ok(GadgetCrp { seed, a })
}

/// The round (1 or 2) of a [`RelinKeyShare`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelinRound {
    /// `(−u_i·a_j + s_i·g_j + e, s_i·a_j + e')`.
    One,
    /// `(s_i·h0_j + e, (u_i − s_i)·h1_j + e')`.
    Two,
}

/// A party's share of one round of [`RelinKeyGen`] (or an aggregate): two polynomials per
/// gadget row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelinKeyShare {
    ctx: Context,
    decomposition: Decomposition,
    round: RelinRound,
    h0: Vec<Poly>,
    h1: Vec<Poly>,
}

impl RelinKeyShare {
    /// The exact length of [`RelinKeyShare::to_bytes`] for `ctx` and `decomposition`.
    pub fn encoded_len(ctx: &Context, decomposition: Decomposition) -> Result<usize> {
        let rows = decomposition.rows(&ctx.top().ring)?;
        Ok(share_len(ctx, decomposition, 2 * rows))
    }

    /// The round.
    pub fn round(&self) -> RelinRound {
        self.round
    }

    /// Envelope encoding (fixed size; the round is stored in the Galois-element field: 1 or 2).
    pub fn to_bytes(&self) -> Vec<u8> {
        let polys: Vec<Poly> = self.h0.iter().chain(&self.h1).cloned().collect();
        let round = match self.round {
            RelinRound::One => 1,
            RelinRound::Two => 2,
        };
        encode(&RlkShareWire(to_wire(
            &self.ctx,
            self.decomposition,
            round,
            &polys,
        )))
    }

    /// Decoding for `ctx` of a share of the gadget `decomposition` (exactly
    /// [`RelinKeyShare::encoded_len`] bytes).
    pub fn from_bytes(ctx: &Context, decomposition: Decomposition, bytes: &[u8]) -> Result<Self> {
        let top = &ctx.top().ring;
        let w: RlkShareWire = decode(bytes, Self::encoded_len(ctx, decomposition)?)?;
        if w.0.decomposition != decomposition {
            return Err(Error::Mismatch(format!(
                "a share of the gadget {:?}, expected {decomposition:?}",
                w.0.decomposition
            )));
        }
        let rows = decomposition.rows(top)?;
        let round = match u64::from_le_bytes(w.0.g) {
            1 => RelinRound::One,
            2 => RelinRound::Two,
            r => return Err(Error::Malformed(format!("relinearization round {r}"))),
        };
        let mut polys = from_wire(ctx, w.0, 2 * rows)?;
        let h1 = polys.split_off(rows);
        Ok(RelinKeyShare {
            ctx: ctx.clone(),
            decomposition,
            round,
            h0: polys,
            h1,
        })
    }
}

/// A party's ephemeral secret `u_i` between the two rounds of [`RelinKeyGen`] (zeroized on
/// drop; never sent).
pub struct RelinEphemeral {
    u: Poly,
}

impl std::fmt::Debug for RelinEphemeral {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RelinEphemeral(..)")
    }
}

impl Drop for RelinEphemeral {
    fn drop(&mut self) {
        self.u.data_mut().zeroize();
    }
}

/// Collective relinearization-key generation, the two-round protocol of Lattigo's
/// `RelinearizationKeyGenProtocol` (Mouchet et al.): round 1 gives
/// `h0 = −u·a + s·g + e`, `h1 = s·a + e'`; round 2 gives `h0' = s·h0 + e`,
/// `h1' = (u − s)·h1 + e'`; the key is `(h0' + h1', h1)` with `(h0' + h1') + h1·s ≈ s²·g`.
///
/// ```
/// use coterie_bfv::multiparty::RelinKeyGen;
/// use coterie_bfv::{Context, Decomposition, Params, Plaintext, SecretKey};
/// use coterie_math::prg::Csprng;
/// let ctx = Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap();
/// let mut rng = Csprng::new();
/// let sks: Vec<SecretKey> = (0..3).map(|_| SecretKey::generate(&ctx, &mut rng)).collect();
/// let sum: Vec<i64> = (0..256).map(|j| sks.iter().map(|s| s.coefficients()[j]).sum()).collect();
/// let sk = SecretKey::from_coefficients(&ctx, sum).unwrap();
/// let rkg = RelinKeyGen::new(&ctx, Decomposition::Rns).unwrap();
/// let crp = rkg.gen_crp(&[3; 32]).unwrap();
/// let (eph, r1): (Vec<_>, Vec<_>) =
///     sks.iter().map(|s| rkg.gen_share_round_one(s, &crp, &mut rng).unwrap()).unzip();
/// let agg1 = rkg.aggregate(&r1).unwrap();
/// let r2: Vec<_> = sks.iter().zip(&eph)
///     .map(|(s, u)| rkg.gen_share_round_two(u, s, &agg1, &mut rng).unwrap()).collect();
/// let rlk = rkg.finalize(&rkg.aggregate(&r2).unwrap(), &agg1).unwrap();
/// let x = sk.encrypt_symmetric(&Plaintext::encode_simd(&ctx, &[9]).unwrap(), &mut rng).unwrap();
/// assert_eq!(sk.decrypt(&x.mul(&x, &rlk).unwrap()).unwrap().decode_simd().unwrap()[0], 81);
/// ```
#[derive(Clone, Debug)]
pub struct RelinKeyGen {
    ctx: Context,
    decomposition: Decomposition,
}

impl RelinKeyGen {
    /// The protocol for `ctx` with the gadget of `decomposition`.
    pub fn new(ctx: &Context, decomposition: Decomposition) -> Result<Self> {
        decomposition.rows(&ctx.top().ring)?;
        Ok(RelinKeyGen {
            ctx: ctx.clone(),
            decomposition,
        })
    }

    /// The common random polynomials `a_j` from the 32-byte CRS seed.
    pub fn gen_crp(&self, seed: &Seed) -> Result<GadgetCrp> {
        gadget_crp(&self.ctx, self.decomposition, sub_seed(seed, b"rkg", 0))
    }

    /// Round 1 of party `i`: its ephemeral `u_i` (kept) and its share (sent).
    pub fn gen_share_round_one<R: rand::CryptoRng + ?Sized>(
        &self,
        sk: &SecretKey,
        crp: &GadgetCrp,
        rng: &mut R,
    ) -> Result<(RelinEphemeral, RelinKeyShare)> {
        check_owner(&self.ctx, sk)?;
        let ring = &self.ctx.top().ring;
        let mut small = vec![0i64; self.ctx.degree()];
        sample_secret(&self.ctx, rng, &mut small);
        let u = Poly::from_signed(ring, &small);
        small.zeroize();
        let mut u = RelinEphemeral { u: u? };
        u.u.to_ntt();
        let mut h0 = Vec::with_capacity(crp.a.len());
        let mut h1 = Vec::with_capacity(crp.a.len());
        for (j, a) in crp.a.iter().enumerate() {
            // −u_i·a_j + e + s_i·g_j
            let mut x = a * &u.u;
            x.neg_assign();
            x += &error_ntt(&self.ctx, rng)?;
            self.decomposition.add_gadget_multiple(&mut x, &sk.ntt, j)?;
            h0.push(x);
            // s_i·a_j + e'  (= −(−a·s_i + e))
            let mut y = sk.rlwe_mask(a, rng);
            y.neg_assign();
            h1.push(y);
        }
        Ok((
            u,
            RelinKeyShare {
                ctx: self.ctx.clone(),
                decomposition: self.decomposition,
                round: RelinRound::One,
                h0,
                h1,
            },
        ))
    }

    /// Round 2 of party `i`, on the aggregate of the round-1 shares.
    pub fn gen_share_round_two<R: rand::CryptoRng + ?Sized>(
        &self,
        ephemeral: &RelinEphemeral,
        sk: &SecretKey,
        round_one: &RelinKeyShare,
        rng: &mut R,
    ) -> Result<RelinKeyShare> {
        check_owner(&self.ctx, sk)?;
        self.check_share(round_one, RelinRound::One)?;
        let mut u_minus_s = ephemeral.u.clone();
        u_minus_s.try_sub_assign(&sk.ntt)?;
        let mut h0 = Vec::with_capacity(round_one.h0.len());
        let mut h1 = Vec::with_capacity(round_one.h1.len());
        for (x0, x1) in round_one.h0.iter().zip(&round_one.h1) {
            let mut y0 = x0 * &sk.ntt;
            y0 += &error_ntt(&self.ctx, rng)?;
            h0.push(y0);
            let mut y1 = x1 * &u_minus_s;
            y1 += &error_ntt(&self.ctx, rng)?;
            h1.push(y1);
        }
        u_minus_s.data_mut().zeroize();
        Ok(RelinKeyShare {
            ctx: self.ctx.clone(),
            decomposition: self.decomposition,
            round: RelinRound::Two,
            h0,
            h1,
        })
    }

    fn check_share(&self, s: &RelinKeyShare, round: RelinRound) -> Result<()> {
        self.ctx.check_same(&s.ctx)?;
        if s.decomposition != self.decomposition || s.round != round {
            return Err(Error::Mismatch(format!(
                "a {:?} share of round {:?}, expected {:?} of round {round:?}",
                s.decomposition, s.round, self.decomposition
            )));
        }
        Ok(())
    }

    /// The sum of the shares of one round.
    pub fn aggregate(&self, shares: &[RelinKeyShare]) -> Result<RelinKeyShare> {
        let round = shares
            .first()
            .map(|s| s.round)
            .ok_or_else(|| Error::InvalidParameter("no shares to aggregate".into()))?;
        for s in shares {
            self.check_share(s, round)?;
        }
        Ok(RelinKeyShare {
            ctx: self.ctx.clone(),
            decomposition: self.decomposition,
            round,
            h0: sum_rows(shares.iter().map(|s| s.h0.as_slice()))?,
            h1: sum_rows(shares.iter().map(|s| s.h1.as_slice()))?,
        })
    }

    /// The relinearization key from the aggregates of round 2 and round 1:
    /// `(h0' + h1', h1)`.
    pub fn finalize(
        &self,
        round_two: &RelinKeyShare,
        round_one: &RelinKeyShare,
    ) -> Result<RelinKey> {
        self.check_share(round_two, RelinRound::Two)?;
        self.check_share(round_one, RelinRound::One)?;
        let b = round_two
            .h0
            .iter()
            .zip(&round_two.h1)
            .map(|(x, y)| {
                let mut z = x.clone();
                z.try_add_assign(y)?;
                Ok(z)
            })
            .collect::<Result<Vec<_>>>()?;
        let ksk =
            GadgetCiphertext::from_rows(&self.ctx, self.decomposition, b, round_one.h1.clone())?;
        Ok(RelinKey::from_key_switch_key(ksk))
    }
}

// ---------------------------------------------------------------------------------------------
// Galois keys.

/// A party's share `−a_j·s_i + σ_g(s_i)·g_j + e_j` of a collective Galois key (or an aggregate).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GaloisKeyShare {
    ctx: Context,
    decomposition: Decomposition,
    g: usize,
    b: Vec<Poly>,
}

impl GaloisKeyShare {
    /// The exact length of [`GaloisKeyShare::to_bytes`] for `ctx` and `decomposition`.
    pub fn encoded_len(ctx: &Context, decomposition: Decomposition) -> Result<usize> {
        let rows = decomposition.rows(&ctx.top().ring)?;
        Ok(share_len(ctx, decomposition, rows))
    }

    /// The Galois element.
    pub fn element(&self) -> usize {
        self.g
    }

    /// Envelope encoding (fixed size).
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&GkShareWire(to_wire(
            &self.ctx,
            self.decomposition,
            self.g as u64,
            &self.b,
        )))
    }

    /// Decoding for `ctx` of a share of the gadget `decomposition` (exactly
    /// [`GaloisKeyShare::encoded_len`] bytes).
    pub fn from_bytes(ctx: &Context, decomposition: Decomposition, bytes: &[u8]) -> Result<Self> {
        let top = &ctx.top().ring;
        let w: GkShareWire = decode(bytes, Self::encoded_len(ctx, decomposition)?)?;
        if w.0.decomposition != decomposition {
            return Err(Error::Mismatch(format!(
                "a share of the gadget {:?}, expected {decomposition:?}",
                w.0.decomposition
            )));
        }
        let rows = decomposition.rows(top)?;
        let g = u64::from_le_bytes(w.0.g);
        if g >= 2 * ctx.degree() as u64 {
            return Err(Error::Malformed(format!("Galois element {g}")));
        }
        let g = check_galois_element(ctx.degree(), g as usize)?;
        let b = from_wire(ctx, w.0, rows)?;
        Ok(GaloisKeyShare {
            ctx: ctx.clone(),
            decomposition,
            g,
            b,
        })
    }
}

/// Collective Galois-key generation: `K_g = (Σ_i (−a_j·s_i + σ_g(s_i)·g_j + e_j), a_j)`.
///
/// ```
/// use coterie_bfv::multiparty::GaloisKeyGen;
/// use coterie_bfv::{Context, Decomposition, Params, Plaintext, SecretKey};
/// use coterie_math::prg::Csprng;
/// let ctx = Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap();
/// let mut rng = Csprng::new();
/// let sks: Vec<SecretKey> = (0..3).map(|_| SecretKey::generate(&ctx, &mut rng)).collect();
/// let sum: Vec<i64> = (0..256).map(|j| sks.iter().map(|s| s.coefficients()[j]).sum()).collect();
/// let sk = SecretKey::from_coefficients(&ctx, sum).unwrap();
/// let gkg = GaloisKeyGen::new(&ctx, Decomposition::PowerOfTwo { base_log: 20 }).unwrap();
/// let crp = gkg.gen_crp(&[3; 32], 5).unwrap();
/// let shares: Vec<_> = sks.iter().map(|s| gkg.gen_share(s, 5, &crp, &mut rng).unwrap()).collect();
/// let gk = gkg.finalize(&gkg.aggregate(&shares).unwrap(), &crp).unwrap();
/// let x = sk.encrypt_symmetric(&Plaintext::encode_simd(&ctx, &[1, 2]).unwrap(), &mut rng).unwrap();
/// assert_eq!(sk.decrypt(&x.apply_galois(&gk).unwrap()).unwrap().decode_simd().unwrap()[0], 2);
/// ```
#[derive(Clone, Debug)]
pub struct GaloisKeyGen {
    ctx: Context,
    decomposition: Decomposition,
}

impl GaloisKeyGen {
    /// The protocol for `ctx` with the gadget of `decomposition`.
    pub fn new(ctx: &Context, decomposition: Decomposition) -> Result<Self> {
        decomposition.rows(&ctx.top().ring)?;
        Ok(GaloisKeyGen {
            ctx: ctx.clone(),
            decomposition,
        })
    }

    /// The common random polynomials `a_j` of the key for `X → X^g`, from the CRS seed.
    pub fn gen_crp(&self, seed: &Seed, g: usize) -> Result<GadgetCrp> {
        let g = check_galois_element(self.ctx.degree(), g)?;
        gadget_crp(
            &self.ctx,
            self.decomposition,
            sub_seed(seed, b"gkg", g as u64),
        )
    }

    /// Party `i`'s share of the key for `X → X^g`.
    pub fn gen_share<R: rand::CryptoRng + ?Sized>(
        &self,
        sk: &SecretKey,
        g: usize,
        crp: &GadgetCrp,
        rng: &mut R,
    ) -> Result<GaloisKeyShare> {
        check_owner(&self.ctx, sk)?;
        let g = check_galois_element(self.ctx.degree(), g)?;
        let mut sg = sk.ntt.automorphism(g)?;
        let b = crp
            .a
            .iter()
            .enumerate()
            .map(|(j, a)| {
                let mut x = sk.rlwe_mask(a, rng);
                self.decomposition.add_gadget_multiple(&mut x, &sg, j)?;
                Ok(x)
            })
            .collect::<Result<Vec<_>>>();
        sg.data_mut().zeroize();
        Ok(GaloisKeyShare {
            ctx: self.ctx.clone(),
            decomposition: self.decomposition,
            g,
            b: b?,
        })
    }

    /// The sum of the shares (all for the same element).
    pub fn aggregate(&self, shares: &[GaloisKeyShare]) -> Result<GaloisKeyShare> {
        let g = shares
            .first()
            .map(|s| s.g)
            .ok_or_else(|| Error::InvalidParameter("no shares to aggregate".into()))?;
        for s in shares {
            self.ctx.check_same(&s.ctx)?;
            if s.g != g || s.decomposition != self.decomposition {
                return Err(Error::Mismatch(
                    "Galois key shares of different elements or gadgets".into(),
                ));
            }
        }
        Ok(GaloisKeyShare {
            ctx: self.ctx.clone(),
            decomposition: self.decomposition,
            g,
            b: sum_rows(shares.iter().map(|s| s.b.as_slice()))?,
        })
    }

    /// The collective Galois key `(aggregate, a_j)`.
    pub fn finalize(&self, aggregate: &GaloisKeyShare, crp: &GadgetCrp) -> Result<GaloisKey> {
        self.ctx.check_same(&aggregate.ctx)?;
        let mut ksk = GadgetCiphertext::from_rows(
            &self.ctx,
            self.decomposition,
            aggregate.b.clone(),
            crp.a.clone(),
        )?;
        // The a_j re-expand from the sub-seed, so the key serializes in its seeded form.
        ksk.seed = Some(crp.seed);
        GaloisKey::from_key_switch_key(aggregate.g, ksk)
    }
}
