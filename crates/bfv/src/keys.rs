//! Secret, public and evaluation keys.
//!
//! * [`SecretKey`]: `s` (ternary or Gaussian, per the parameters), zeroized on drop.
//! * [`PublicKey`]: `(p0, p1) = (−p1·s + e, p1)` with `p1` expanded from a 32-byte seed.
//! * [`GadgetCiphertext`] (alias [`KeySwitchKey`]): a gadget encryption of `m` under `s`, rows
//!   `(b_i, a_i) = (−a_i·s + e_i + m·g_i, a_i)` for a gadget vector `g` given by its
//!   [`Decomposition`]:
//!   * [`Decomposition::Rns`]: `g_i = (Q/q_i)·[(Q/q_i)^{-1}]_{q_i}`, one row per prime (seed 002
//!     §2.4). Since `g_i ≡ 1 (mod q_i)` and `≡ 0 (mod q_j)`, `j ≠ i`, the key of the top level
//!     restricted to the first `l + 1` primes is exactly the key of level `l`.
//!   * [`Decomposition::PowerOfTwo`]: `g_i = B^i`, `B = 2^β`, `⌈log Q / β⌉` rows (seed 001
//!     §2.3); `g` does not depend on the level, so the top-level key serves every level too.
//!
//!   With `m = s'` it is the key switching key from `s'` to `s`; the `a_i` are expanded from a
//!   seed (or, for collectively generated keys, stored).
//! * [`RelinKey`] (switches `s²` to `s`) and [`GaloisKey`] (switches `σ_g(s)` to `s`).
//!
//! All keys live at the top level, in NTT form.

use crate::context::Context;
use crate::params::SecretDistribution;
use crate::{Error, Result};
use coterie_math::poly::RingContext;
use coterie_math::poly::{Poly, Representation};
use coterie_math::prg::Seed;
use coterie_math::sample::ternary_uniform;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use zeroize::Zeroize;

/// Samples a small polynomial of the secret distribution into `out`.
pub(crate) fn sample_secret<R: rand::CryptoRng + ?Sized>(
    ctx: &Context,
    rng: &mut R,
    out: &mut [i64],
) {
    match ctx.params().secret_distribution() {
        SecretDistribution::Ternary => ternary_uniform(rng, out),
        SecretDistribution::Gaussian => ctx.gaussian().fill(rng, out),
    }
}

/// Samples an error polynomial (discrete Gaussian of width σ).
pub(crate) fn sample_error<R: rand::CryptoRng + ?Sized>(
    ctx: &Context,
    rng: &mut R,
    out: &mut [i64],
) {
    ctx.gaussian().fill(rng, out)
}

/// A 32-byte seed drawn from `rng`.
pub(crate) fn seed_from<R: rand::CryptoRng + ?Sized>(rng: &mut R) -> Seed {
    let mut s = [0u8; 32];
    rng.fill_bytes(&mut s);
    s
}

/// Label of the `i`-th uniform polynomial of a seeded object.
pub(crate) fn seed_label(kind: &[u8], i: usize) -> Vec<u8> {
    let mut l = b"coterie-bfv/".to_vec();
    l.extend_from_slice(kind);
    l.extend_from_slice(b"/v1/");
    l.extend_from_slice(&(i as u64).to_le_bytes());
    l
}

/// A BFV secret key `s`.
pub struct SecretKey {
    pub(crate) ctx: Context,
    pub(crate) coeffs: Vec<i64>,
    /// `s` at the top level in NTT form.
    pub(crate) ntt: Poly,
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretKey({}, ..)", self.ctx.params().name())
    }
}

impl Drop for SecretKey {
    fn drop(&mut self) {
        self.coeffs.zeroize();
        self.ntt.data_mut().zeroize();
    }
}

impl SecretKey {
    /// Samples a fresh secret key from the parameters' secret distribution.
    ///
    /// ```
    /// use coterie_bfv::{Context, Params, SecretKey};
    /// use coterie_math::prg::Csprng;
    /// let ctx = Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap();
    /// let sk = SecretKey::generate(&ctx, &mut Csprng::new());
    /// assert!(sk.norm_inf() <= 1);
    /// ```
    pub fn generate<R: rand::CryptoRng + ?Sized>(ctx: &Context, rng: &mut R) -> Self {
        let mut coeffs = vec![0i64; ctx.degree()];
        sample_secret(ctx, rng, &mut coeffs);
        Self::from_coefficients(ctx, coeffs).expect("sampled coefficients are in range")
    }

    /// A secret key from given small coefficients (`N` of them, each below `2^30` in absolute
    /// value), e.g. a key share assembled by a protocol.
    ///
    /// ```
    /// use coterie_bfv::{Context, Params, Plaintext, SecretKey};
    /// use coterie_math::prg::Csprng;
    /// let ctx = Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap();
    /// let mut rng = Csprng::new();
    /// let sk = SecretKey::generate(&ctx, &mut rng);
    /// let s2 = SecretKey::from_coefficients(&ctx, sk.coefficients().to_vec()).unwrap();
    /// assert_eq!(s2.norm_inf(), sk.norm_inf());
    /// assert!(SecretKey::from_coefficients(&ctx, vec![1 << 40; 256]).is_err());
    /// assert!(SecretKey::from_coefficients(&ctx, vec![i64::MIN; 256]).is_err()); // no overflow
    /// ```
    pub fn from_coefficients(ctx: &Context, mut coeffs: Vec<i64>) -> Result<Self> {
        if coeffs.len() != ctx.degree() || coeffs.iter().any(|c| c.unsigned_abs() >= 1 << 30) {
            coeffs.zeroize();
            return Err(Error::Malformed(
                "secret key needs N coefficients below 2^30".into(),
            ));
        }
        let mut ntt = Poly::from_signed(&ctx.top().ring, &coeffs)?;
        ntt.to_ntt();
        Ok(SecretKey {
            ctx: ctx.clone(),
            coeffs,
            ntt,
        })
    }

    /// The context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The coefficients of `s` (secret!).
    pub fn coefficients(&self) -> &[i64] {
        &self.coeffs
    }

    /// `‖s‖_∞`.
    pub fn norm_inf(&self) -> u64 {
        self.coeffs
            .iter()
            .map(|c| c.unsigned_abs())
            .max()
            .unwrap_or(0)
    }

    /// `−a·s + e` at the top level in NTT form, for a uniform `a` (NTT form).
    pub(crate) fn rlwe_mask<R: rand::CryptoRng + ?Sized>(&self, a: &Poly, rng: &mut R) -> Poly {
        let ring = &self.ctx.top().ring;
        let mut e = vec![0i64; self.ctx.degree()];
        sample_error(&self.ctx, rng, &mut e);
        let mut ep = Poly::from_signed(ring, &e).expect("N coefficients");
        e.zeroize();
        ep.to_ntt();
        let mut b = a * &self.ntt;
        b.neg_assign();
        b += &ep;
        ep.data_mut().zeroize();
        b
    }

    /// Generates the public key (fresh seed for `p1`).
    ///
    /// ```
    /// use coterie_bfv::{Context, Params, Plaintext, SecretKey};
    /// use coterie_math::prg::Csprng;
    /// let ctx = Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap();
    /// let mut rng = Csprng::new();
    /// let sk = SecretKey::generate(&ctx, &mut rng);
    /// let pk = sk.public_key(&mut rng);
    /// let pt = Plaintext::encode_simd(&ctx, &[1]).unwrap();
    /// assert_eq!(sk.decrypt(&pk.encrypt(&pt, &mut rng).unwrap()).unwrap(), pt);
    /// ```
    pub fn public_key<R: rand::CryptoRng + ?Sized>(&self, rng: &mut R) -> PublicKey {
        let seed = seed_from(rng);
        let p1 = Poly::from_seed(
            &self.ctx.top().ring,
            Representation::Ntt,
            &seed,
            &seed_label(b"pk", 0),
        )
        .expect("seed expansion for a valid ring");
        let p0 = self.rlwe_mask(&p1, rng);
        PublicKey {
            ctx: self.ctx.clone(),
            seed,
            p0,
            p1,
        }
    }

    /// A gadget encryption of `m` (top level, NTT form) under this key, with the gadget of
    /// `decomposition` (see the [module documentation](self)); the `a_i` come from a fresh seed.
    ///
    /// ```
    /// use coterie_bfv::{Context, Decomposition, Params, SecretKey};
    /// use coterie_math::prg::Csprng;
    /// let ctx = Context::new(Params::insecure_toy(256, 256).unwrap()).unwrap();
    /// let mut rng = Csprng::new();
    /// let sk = SecretKey::generate(&ctx, &mut rng);
    /// let ring = ctx.ring(ctx.max_level()).unwrap();
    /// let mut one = coterie_math::poly::Poly::from_signed(&ring, &[1]).unwrap();
    /// one.to_ntt();
    /// let g = sk.gadget_encrypt(&one, Decomposition::PowerOfTwo { base_log: 20 }, &mut rng).unwrap();
    /// assert_eq!(g.rows(), 6); // ⌈120 / 20⌉
    /// ```
    pub fn gadget_encrypt<R: rand::CryptoRng + ?Sized>(
        &self,
        m: &Poly,
        decomposition: Decomposition,
        rng: &mut R,
    ) -> Result<GadgetCiphertext> {
        let ring = &self.ctx.top().ring;
        if m.context().moduli() != ring.moduli() || m.representation() != Representation::Ntt {
            return Err(Error::Mismatch(
                "a gadget-encrypted message must be a top-level NTT-form polynomial".into(),
            ));
        }
        let rows = decomposition.rows(ring)?;
        let seed = seed_from(rng);
        let mut a = Vec::with_capacity(rows);
        let mut b = Vec::with_capacity(rows);
        for i in 0..rows {
            let ai = Poly::from_seed(ring, Representation::Ntt, &seed, &seed_label(b"ksk", i))?;
            let mut bi = self.rlwe_mask(&ai, rng);
            decomposition.add_gadget_multiple(&mut bi, m, i)?;
            a.push(ai);
            b.push(bi);
        }
        Ok(GadgetCiphertext {
            ctx: self.ctx.clone(),
            decomposition,
            seed: Some(seed),
            b,
            a,
        })
    }

    /// A key switching key (RNS gadget) from `s_from` (top level, NTT form) to this key.
    pub fn key_switch_key<R: rand::CryptoRng + ?Sized>(
        &self,
        s_from: &Poly,
        rng: &mut R,
    ) -> Result<KeySwitchKey> {
        self.gadget_encrypt(s_from, Decomposition::Rns, rng)
    }

    /// The relinearization key (switches `s²` to `s`), RNS gadget.
    pub fn relin_key<R: rand::CryptoRng + ?Sized>(&self, rng: &mut R) -> RelinKey {
        self.relin_key_with(Decomposition::Rns, rng)
            .expect("s² is a top-level NTT polynomial and the RNS gadget always applies")
    }

    /// The relinearization key with the gadget of `decomposition`.
    ///
    /// ```
    /// use coterie_bfv::Decomposition;
    /// use coterie_bfv::{Context, Params, Plaintext, SecretKey};
    /// use coterie_math::prg::Csprng;
    /// let ctx = Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap();
    /// let mut rng = Csprng::new();
    /// let sk = SecretKey::generate(&ctx, &mut rng);
    /// for dec in [Decomposition::Rns, Decomposition::PowerOfTwo { base_log: 30 }] {
    ///     let rlk = sk.relin_key_with(dec, &mut rng).unwrap();
    ///     assert_eq!(rlk.key_switch_key().decomposition(), dec);
    ///     let x = sk.encrypt_symmetric(&Plaintext::encode_simd(&ctx, &[6]).unwrap(), &mut rng).unwrap();
    ///     assert_eq!(sk.decrypt(&x.mul(&x, &rlk).unwrap()).unwrap().decode_simd().unwrap()[0], 36);
    /// }
    /// ```
    pub fn relin_key_with<R: rand::CryptoRng + ?Sized>(
        &self,
        decomposition: Decomposition,
        rng: &mut R,
    ) -> Result<RelinKey> {
        let mut s2 = &self.ntt * &self.ntt;
        let ksk = self.gadget_encrypt(&s2, decomposition, rng);
        s2.data_mut().zeroize();
        Ok(RelinKey { ksk: ksk? })
    }

    /// The Galois key for `X → X^g` (`g` odd, taken mod 2N), RNS gadget.
    pub fn galois_key<R: rand::CryptoRng + ?Sized>(
        &self,
        g: usize,
        rng: &mut R,
    ) -> Result<GaloisKey> {
        self.galois_key_with(g, Decomposition::Rns, rng)
    }

    /// The Galois key for `X → X^g` with the gadget of `decomposition`.
    pub fn galois_key_with<R: rand::CryptoRng + ?Sized>(
        &self,
        g: usize,
        decomposition: Decomposition,
        rng: &mut R,
    ) -> Result<GaloisKey> {
        let g = check_galois_element(self.ctx.degree(), g)?;
        let mut sg = self.ntt.automorphism(g)?;
        let ksk = self.gadget_encrypt(&sg, decomposition, rng);
        sg.data_mut().zeroize();
        Ok(GaloisKey { g, ksk: ksk? })
    }

    /// Galois keys for rotating the batching rows by each of `steps` (negative: right) and, with
    /// `row_swap`, for swapping the two rows.
    ///
    /// ```
    /// use coterie_bfv::{Context, Params, Plaintext, SecretKey};
    /// use coterie_math::prg::Csprng;
    /// let ctx = Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap();
    /// let mut rng = Csprng::new();
    /// let sk = SecretKey::generate(&ctx, &mut rng);
    /// let keys = sk.galois_keys(&[1, 2, -1], true, &mut rng).unwrap();
    /// assert_eq!(keys.elements().len(), 4);
    /// assert!(sk.galois_key(4, &mut rng).is_err()); // even elements are not automorphisms
    /// ```
    pub fn galois_keys<R: rand::CryptoRng + ?Sized>(
        &self,
        steps: &[i64],
        row_swap: bool,
        rng: &mut R,
    ) -> Result<GaloisKeys> {
        let mut keys = BTreeMap::new();
        for &k in steps {
            let g = galois_element_for_rotation(self.ctx.degree(), k);
            if let std::collections::btree_map::Entry::Vacant(v) = keys.entry(g) {
                v.insert(self.galois_key(g, rng)?);
            }
        }
        if row_swap {
            let g = 2 * self.ctx.degree() - 1;
            keys.insert(g, self.galois_key(g, rng)?);
        }
        Ok(GaloisKeys { keys })
    }
}

/// `g mod 2N`, or an error if it is even.
pub(crate) fn check_galois_element(n: usize, g: usize) -> Result<usize> {
    let g = g % (2 * n);
    if g.is_multiple_of(2) {
        return Err(Error::InvalidParameter(format!(
            "Galois element {g} is even"
        )));
    }
    Ok(g)
}

/// The Galois element `5^k mod 2N` rotating both batching rows left by `k` (right for `k < 0`).
pub fn galois_element_for_rotation(n: usize, k: i64) -> usize {
    let half = (n / 2) as i64;
    let k = k.rem_euclid(half) as u64;
    coterie_math::modulus::pow_mod_u64(5, k, 2 * n as u64) as usize
}

/// A BFV public key `(p0, p1)`.
#[derive(Clone, Debug)]
pub struct PublicKey {
    pub(crate) ctx: Context,
    pub(crate) seed: Seed,
    pub(crate) p0: Poly,
    pub(crate) p1: Poly,
}

impl PublicKey {
    /// The context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }
}

/// The gadget decomposition of a [`GadgetCiphertext`] (and of the gadget product with it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Decomposition {
    /// The RNS gadget: digit `i` is the residue mod `q_i` (centered), one row per prime.
    Rns,
    /// The power-of-two gadget `(1, B, …, B^{ℓ−1})`, `B = 2^base_log`, balanced digits.
    PowerOfTwo {
        /// `log2 B`, in `[1, 62]`.
        base_log: u32,
    },
}

impl Decomposition {
    /// Number of gadget rows over `ring`.
    pub(crate) fn rows(&self, ring: &RingContext) -> Result<usize> {
        match *self {
            Decomposition::Rns => Ok(ring.limbs()),
            Decomposition::PowerOfTwo { base_log } => {
                let d = coterie_math::gadget::PowerOfTwoRnsDecomposer::new(base_log)?;
                Ok(d.levels(ring.basis().bits()))
            }
        }
    }

    /// `target += m·g_row` (both over the same ring; `m` and `target` in the same
    /// representation).
    pub(crate) fn add_gadget_multiple(
        &self,
        target: &mut Poly,
        m: &Poly,
        row: usize,
    ) -> Result<()> {
        let ring = target.context().clone();
        let n = ring.degree();
        match *self {
            Decomposition::Rns => {
                let q = &ring.moduli()[row];
                let src = &m.data()[row * n..(row + 1) * n];
                for (x, &y) in target.limb_mut(row).iter_mut().zip(src) {
                    *x = q.add(*x, y);
                }
            }
            Decomposition::PowerOfTwo { base_log } => {
                let g = coterie_math::bigint::BigInt::from(1u32) << (base_log * row as u32);
                let g = ring.basis().decompose(&g);
                for (j, q) in ring.moduli().iter().enumerate() {
                    let (gj, gs) = (g[j], q.shoup(g[j]));
                    let src = &m.data()[j * n..(j + 1) * n];
                    for (x, &y) in target.limb_mut(j).iter_mut().zip(src) {
                        *x = q.add(*x, q.mul_shoup(y, gj, gs));
                    }
                }
            }
        }
        Ok(())
    }
}

/// A gadget ciphertext: rows `(b_i, a_i)` with `b_i + a_i·s ≈ m·g_i` at the top level, NTT form
/// (see the [module documentation](self)). As a key switching key ([`KeySwitchKey`]) `m` is the
/// source key.
#[derive(Clone, Debug)]
pub struct GadgetCiphertext {
    pub(crate) ctx: Context,
    pub(crate) decomposition: Decomposition,
    /// The seed the `a_i` are expanded from (`None`: the `a_i` are stored, e.g. a relinearization
    /// key from the two-round multiparty protocol).
    pub(crate) seed: Option<Seed>,
    pub(crate) b: Vec<Poly>,
    pub(crate) a: Vec<Poly>,
}

/// A key switching key: a [`GadgetCiphertext`] of the source key.
pub type KeySwitchKey = GadgetCiphertext;

impl GadgetCiphertext {
    /// Builds a gadget ciphertext from its rows (top-level NTT-form polynomials; as many as
    /// the decomposition has rows), e.g. one assembled by a protocol.
    pub fn from_rows(
        ctx: &Context,
        decomposition: Decomposition,
        b: Vec<Poly>,
        a: Vec<Poly>,
    ) -> Result<Self> {
        let ring = ctx.ring(ctx.max_level())?;
        let rows = decomposition.rows(&ring)?;
        if b.len() != rows || a.len() != rows {
            return Err(Error::Malformed(format!(
                "gadget ciphertext with {} / {} rows, expected {rows}",
                b.len(),
                a.len()
            )));
        }
        for p in b.iter().chain(&a) {
            if p.context().moduli() != ring.moduli() || p.representation() != Representation::Ntt {
                return Err(Error::Mismatch(
                    "gadget rows must be top-level NTT-form polynomials".into(),
                ));
            }
        }
        Ok(GadgetCiphertext {
            ctx: ctx.clone(),
            decomposition,
            seed: None,
            b,
            a,
        })
    }

    /// The context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The decomposition (gadget) it uses.
    pub fn decomposition(&self) -> Decomposition {
        self.decomposition
    }

    /// Number of gadget rows.
    pub fn rows(&self) -> usize {
        self.b.len()
    }

    /// The rows `(b_i, a_i)`.
    pub fn row(&self, i: usize) -> Option<(&Poly, &Poly)> {
        Some((self.b.get(i)?, self.a.get(i)?))
    }
}

/// The relinearization key.
#[derive(Clone, Debug)]
pub struct RelinKey {
    pub(crate) ksk: KeySwitchKey,
}

impl RelinKey {
    /// A relinearization key from a key switching key of `s²`.
    pub fn from_key_switch_key(ksk: KeySwitchKey) -> Self {
        RelinKey { ksk }
    }

    /// The underlying key switching key.
    pub fn key_switch_key(&self) -> &KeySwitchKey {
        &self.ksk
    }
}

/// A Galois key for `X → X^g`.
#[derive(Clone, Debug)]
pub struct GaloisKey {
    pub(crate) g: usize,
    pub(crate) ksk: KeySwitchKey,
}

impl GaloisKey {
    /// A Galois key for `X → X^g` from a key switching key of `σ_g(s)`.
    pub fn from_key_switch_key(g: usize, ksk: KeySwitchKey) -> Result<Self> {
        let g = check_galois_element(ksk.ctx.degree(), g)?;
        Ok(GaloisKey { g, ksk })
    }

    /// The underlying key switching key.
    pub fn key_switch_key(&self) -> &KeySwitchKey {
        &self.ksk
    }

    /// The Galois element `g`.
    pub fn element(&self) -> usize {
        self.g
    }
}

/// A set of Galois keys indexed by Galois element.
#[derive(Clone, Debug, Default)]
pub struct GaloisKeys {
    pub(crate) keys: BTreeMap<usize, GaloisKey>,
}

impl GaloisKeys {
    /// The key for element `g`, if present.
    pub fn get(&self, g: usize) -> Option<&GaloisKey> {
        self.keys.get(&g)
    }

    /// Adds a key.
    pub fn insert(&mut self, key: GaloisKey) {
        self.keys.insert(key.g, key);
    }

    /// The Galois elements held.
    pub fn elements(&self) -> Vec<usize> {
        self.keys.keys().copied().collect()
    }
}
