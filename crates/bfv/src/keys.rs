//! Secret, public and evaluation keys.
//!
//! * [`SecretKey`]: `s` (ternary or Gaussian, per the parameters), zeroized on drop.
//! * [`PublicKey`]: `(p0, p1) = (−p1·s + e, p1)` with `p1` expanded from a 32-byte seed.
//! * [`KeySwitchKey`]: the RNS-gadget key switching key from `s'` to `s`: for each prime `q_i`,
//!   `(b_i, a_i) = (−a_i·s + e_i + s'·g_i, a_i)` with `g_i = (Q/q_i)·[(Q/q_i)^{-1}]_{q_i}` the RNS
//!   gadget (seed 002 §2.4) and `a_i` expanded from a seed. Since `g_i ≡ 1 (mod q_i)` and
//!   `≡ 0 (mod q_j)`, `j ≠ i`, the key of the top level restricted to the first `l + 1` primes is
//!   exactly the key of level `l`: one key serves every level.
//! * [`RelinKey`] (switches `s²` to `s`) and [`GaloisKey`] (switches `σ_g(s)` to `s`).
//!
//! All keys live at the top level, in NTT form.

use crate::context::Context;
use crate::params::SecretDistribution;
use crate::{Error, Result};
use coterie_math::poly::{Poly, Representation};
use coterie_math::prg::Seed;
use coterie_math::sample::ternary_uniform;
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
    /// let ctx = Context::new(Params::toy_insecure(256, 65537).unwrap()).unwrap();
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
    pub fn from_coefficients(ctx: &Context, mut coeffs: Vec<i64>) -> Result<Self> {
        if coeffs.len() != ctx.degree() || coeffs.iter().any(|c| c.abs() >= 1 << 30) {
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

    /// A key switching key from `s_from` (top level, NTT form) to this key.
    pub fn key_switch_key<R: rand::CryptoRng + ?Sized>(
        &self,
        s_from: &Poly,
        rng: &mut R,
    ) -> Result<KeySwitchKey> {
        let ring = &self.ctx.top().ring;
        if s_from.context().moduli() != ring.moduli()
            || s_from.representation() != Representation::Ntt
        {
            return Err(Error::Mismatch(
                "key switching source must be a top-level NTT-form polynomial".into(),
            ));
        }
        let seed = seed_from(rng);
        let l = ring.limbs();
        let n = ring.degree();
        let mut a = Vec::with_capacity(l);
        let mut b = Vec::with_capacity(l);
        for i in 0..l {
            let ai = Poly::from_seed(ring, Representation::Ntt, &seed, &seed_label(b"ksk", i))?;
            let mut bi = self.rlwe_mask(&ai, rng);
            let m = &ring.moduli()[i];
            let src = &s_from.data()[i * n..(i + 1) * n];
            for (x, &y) in bi.limb_mut(i).iter_mut().zip(src) {
                *x = m.add(*x, y);
            }
            a.push(ai);
            b.push(bi);
        }
        Ok(KeySwitchKey {
            ctx: self.ctx.clone(),
            seed,
            b,
            a,
        })
    }

    /// The relinearization key (switches `s²` to `s`).
    pub fn relin_key<R: rand::CryptoRng + ?Sized>(&self, rng: &mut R) -> RelinKey {
        let mut s2 = &self.ntt * &self.ntt;
        let ksk = self
            .key_switch_key(&s2, rng)
            .expect("s² is a top-level NTT polynomial");
        s2.data_mut().zeroize();
        RelinKey { ksk }
    }

    /// The Galois key for `X → X^g` (`g` odd, taken mod 2N).
    pub fn galois_key<R: rand::CryptoRng + ?Sized>(
        &self,
        g: usize,
        rng: &mut R,
    ) -> Result<GaloisKey> {
        let two_n = 2 * self.ctx.degree();
        let g = g % two_n;
        if g.is_multiple_of(2) {
            return Err(Error::InvalidParameter(format!(
                "Galois element {g} is even"
            )));
        }
        let mut sg = self.ntt.automorphism(g)?;
        let ksk = self.key_switch_key(&sg, rng)?;
        sg.data_mut().zeroize();
        Ok(GaloisKey { g, ksk })
    }

    /// Galois keys for rotating the batching rows by each of `steps` (negative: right) and, with
    /// `row_swap`, for swapping the two rows.
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

/// The Galois element `5^k mod 2N` rotating both batching rows left by `k` (right for `k < 0`).
pub fn galois_element_for_rotation(n: usize, k: i64) -> usize {
    let half = (n / 2) as i64;
    let k = k.rem_euclid(half) as u64;
    let two_n = 2 * n as u64;
    let mut g = 1u64;
    let mut base = 5u64;
    let mut e = k;
    while e > 0 {
        if e & 1 == 1 {
            g = g * base % two_n;
        }
        base = base * base % two_n;
        e >>= 1;
    }
    g as usize
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

/// An RNS-gadget key switching key (see the [module documentation](self)).
#[derive(Clone, Debug)]
pub struct KeySwitchKey {
    pub(crate) ctx: Context,
    pub(crate) seed: Seed,
    pub(crate) b: Vec<Poly>,
    pub(crate) a: Vec<Poly>,
}

impl KeySwitchKey {
    /// The context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }
}

/// The relinearization key.
#[derive(Clone, Debug)]
pub struct RelinKey {
    pub(crate) ksk: KeySwitchKey,
}

impl RelinKey {
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
