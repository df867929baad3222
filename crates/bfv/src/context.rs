//! The precomputed context of a parameter set: ring contexts per level, base converters, exact
//! scale-and-round tables, Δ, the Gaussian sampler and the batching tables.

use crate::params::{AUX_PRIME_BITS, Params, PlaintextModulus, cyclotomic_p};
use crate::{Error, Result};
use coterie_math::bigint::BigInt;
use coterie_math::ntt::NttPlan;
use coterie_math::poly::{Poly, RingContext};
use coterie_math::primes::ntt_primes_excluding;
use coterie_math::rns::{BaseConverter, RnsBasis, ScaleRounder};
use coterie_math::sample::DiscreteGaussian;
use coterie_math::zp_ntt::SlotEncoder;
use std::sync::{Arc, OnceLock};

/// A 32-byte identifier of a parameter set (BLAKE3 of its defining values); every serialized
/// object carries it so that data of another set is rejected.
pub type Fingerprint = [u8; 32];

/// Per-level tables. Level `l` has `l + 1` ciphertext primes `q_0 … q_l`.
#[derive(Debug)]
pub(crate) struct Level {
    /// `Z_{Q_l}[X]/(X^N+1)`.
    pub ring: Arc<RingContext>,
    /// The auxiliary basis `P_l` (`P_l > t·N·Q_l`) for the tensor product.
    pub aux: Arc<RingContext>,
    /// Exact base extension `Q_l → P_l`.
    pub q_to_aux: BaseConverter,
    /// Exact `round(t·x/Q_l)` (scalar `t`) or `round(x/Q_l)` (cyclotomic, after the exact
    /// product by `X^D − b`) from `Q_l ∪ P_l` to `Q_l`.
    pub rounder: ScaleRounder,
    /// The plaintext-modulus-specific tables.
    pub plain: PlainLevel,
    /// Modulus-switching tables to each lower level, built on first use.
    pub switch: Vec<OnceLock<Switch>>,
}

/// Per-level tables of the plaintext modulus (one per level: the size difference of the
/// variants does not matter, and no box is put on the decryption path).
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub(crate) enum PlainLevel {
    /// Scalar `t`.
    Scalar(ScalarLevel),
    /// Cyclotomic `X^D − b`.
    Cyclotomic(CycloLevel),
}

/// Per-level tables of a scalar plaintext modulus `t`.
#[derive(Debug)]
pub(crate) struct ScalarLevel {
    /// `Δ = ⌊Q_l/t⌋ mod q_i`.
    pub delta: Vec<u64>,
    /// Exact conversion `Q_l → {t}` for decryption.
    pub dec_conv: BaseConverter,
    /// `t mod q_i` and `⌊Q_l/2⌋ mod q_i`.
    pub t_mod_q: Vec<u64>,
    pub half_q_mod_q: Vec<u64>,
    /// `⌊Q_l/2⌋ mod t` and `Q_l^{-1} mod t`.
    pub half_q_mod_t: u64,
    pub q_inv_mod_t: u64,
}

/// Per-level tables of a cyclotomic plaintext modulus `X^D − b`.
#[derive(Debug)]
pub(crate) struct CycloLevel {
    /// `Δ = round(−(Q_l/p)·Σ_k b^{M−1−k} X^{kD})` in NTT form.
    pub delta: Poly,
    /// `b mod q_i` and `b mod p_k` (auxiliary primes).
    pub b_mod_q: Vec<u64>,
    pub b_mod_aux: Vec<u64>,
}

/// Context-wide tables of a cyclotomic plaintext modulus.
#[derive(Debug)]
pub(crate) struct CycloTables {
    pub d: usize,
    pub m: usize,
    /// `p = b^M + 1`.
    pub p: BigInt,
    /// `b^k mod p`, `k < M`.
    pub b_pow: Vec<BigInt>,
    /// The slot maps (Pack/Unpack), built on first use (the root search costs a few modular
    /// powers of `p`); the error text when these parameters have none (`M = 1`).
    pub slots: OnceLock<std::result::Result<SlotEncoder, String>>,
}

/// Tables of the one-step modulus switch from `Q_l` to `Q_k` (`k < l`), `D = Q_l/Q_k`.
#[derive(Debug)]
pub(crate) struct Switch {
    /// Exact centered conversion from the dropped primes (basis `D`) to `Q_k`.
    pub conv: BaseConverter,
    /// `D^{-1} mod q_i` and its Shoup constant, for the kept primes.
    pub d_inv: Vec<(u64, u64)>,
}

/// Batching tables: the NTT over `Z_t` and which NTT slot holds which (row, column).
#[derive(Debug)]
pub(crate) struct BatchTables {
    pub plan: NttPlan,
    /// `index[r·N/2 + c]` is the NTT slot evaluating at `ζ^{±5^c}` (`+` for row 0, `−` for row 1).
    pub index: Vec<u32>,
}

#[derive(Debug)]
struct Inner {
    params: Params,
    fingerprint: Fingerprint,
    aux_primes: Vec<u64>,
    levels: Vec<OnceLock<Level>>,
    gaussian: DiscreteGaussian,
    batch: Option<BatchTables>,
    cyclo: Option<CycloTables>,
}

/// The context of one parameter set, shared by every key, plaintext and ciphertext made under it
/// (cheap to clone: an `Arc`). Lower levels' tables are built on first use.
#[derive(Clone, Debug)]
pub struct Context(Arc<Inner>);

impl PartialEq for Context {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.fingerprint == other.0.fingerprint
    }
}
impl Eq for Context {}

fn bits_of(moduli: &[u64]) -> u32 {
    moduli.iter().map(|q| 64 - q.leading_zeros()).sum()
}

/// Number of auxiliary primes so that `P > 2·t·N·Q` (the exact scale-and-round's requirement
/// `|t·x/Q| < P/2` for a tensor coefficient `|x| ≤ N·Q²/2`, with margin; `t` is replaced by
/// `b + 1` for a cyclotomic modulus, whose scale-and-round multiplies by `X^D − b`). The margin
/// of 4 bits covers tensor coefficients that sum up to 8 products.
fn aux_count(q_bits: u32, t_bits: u32, n: usize) -> usize {
    let need = q_bits + t_bits + n.trailing_zeros() + 4;
    need.div_ceil(AUX_PRIME_BITS - 1) as usize
}

impl Context {
    /// Validates the parameters and precomputes the top level.
    pub fn new(params: Params) -> Result<Self> {
        params.validate()?;
        let n = params.degree();
        let moduli = params.moduli().to_vec();
        let pm = params.plaintext_modulus().clone();
        let k = aux_count(bits_of(&moduli), pm.expansion_bits(), n);
        let aux_primes = ntt_primes_excluding(AUX_PRIME_BITS, n, k, &moduli)?;
        let gaussian = DiscreteGaussian::new(params.sigma())?;
        let batch = match pm {
            PlaintextModulus::Scalar(t) if params.supports_batching() => Some(batch_tables(n, t)?),
            _ => None,
        };
        let cyclo = match pm {
            PlaintextModulus::Cyclotomic { d, ref b, m } => {
                let p = cyclotomic_p(b, m);
                let mut b_pow = Vec::with_capacity(m);
                let mut x = BigInt::from(1u32);
                for _ in 0..m {
                    b_pow.push(x.clone());
                    x *= b;
                    x %= &p;
                }
                Some(CycloTables {
                    d,
                    m,
                    p,
                    b_pow,
                    slots: OnceLock::new(),
                })
            }
            PlaintextModulus::Scalar(_) => None,
        };
        let mut h = blake3::Hasher::new();
        h.update(b"coterie-bfv/params/v1");
        h.update(&(n as u64).to_le_bytes());
        h.update(&(moduli.len() as u64).to_le_bytes());
        for q in &moduli {
            h.update(&q.to_le_bytes());
        }
        match pm {
            // The scalar case hashes exactly what version 1 hashed.
            PlaintextModulus::Scalar(t) => h.update(&t.to_le_bytes()),
            PlaintextModulus::Cyclotomic { d, ref b, m } => {
                h.update(b"cyclotomic");
                h.update(&(d as u64).to_le_bytes());
                // A b below 2^64 hashes as the u64 it was before b became a big integer; a wider
                // one as its length and little-endian bytes.
                match b.to_u64() {
                    Some(w) => h.update(&w.to_le_bytes()),
                    None => {
                        let bytes = coterie_math::bigint::to_le_bytes(b)?;
                        h.update(b"wide");
                        h.update(&(bytes.len() as u64).to_le_bytes());
                        h.update(&bytes)
                    }
                };
                h.update(&(m as u64).to_le_bytes())
            }
        };
        h.update(&params.sigma().to_bits().to_le_bytes());
        h.update(&[params.secret_distribution() as u8]);
        // Only sets with a slot generator hash more than version 1 did.
        if let Some(g) = params.slot_generator() {
            let bytes = coterie_math::bigint::to_le_bytes(&g)?;
            h.update(b"slot-generator");
            h.update(&(bytes.len() as u64).to_le_bytes());
            h.update(&bytes);
        }
        let fingerprint = *h.finalize().as_bytes();
        let levels = (0..moduli.len()).map(|_| OnceLock::new()).collect();
        let ctx = Context(Arc::new(Inner {
            params,
            fingerprint,
            aux_primes,
            levels,
            gaussian,
            batch,
            cyclo,
        }));
        ctx.level(ctx.max_level())?;
        Ok(ctx)
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.0.params
    }

    /// The parameter fingerprint.
    pub fn fingerprint(&self) -> &Fingerprint {
        &self.0.fingerprint
    }

    /// Ring degree `N`.
    pub fn degree(&self) -> usize {
        self.0.params.degree()
    }

    /// The plaintext modulus.
    pub fn plaintext_modulus(&self) -> &PlaintextModulus {
        self.0.params.plaintext_modulus()
    }

    /// The scalar plaintext modulus `t`, or an error for a cyclotomic one.
    pub fn scalar_t(&self) -> Result<u64> {
        self.plaintext_modulus().scalar().ok_or_else(|| {
            Error::Unsupported(
                "this needs a scalar plaintext modulus t (the set is cyclotomic)".into(),
            )
        })
    }

    /// The top level `L − 1` (fresh ciphertexts live there).
    pub fn max_level(&self) -> usize {
        self.0.params.moduli().len() - 1
    }

    /// Number of SIMD slots (`N`, as two rows of `N/2`) or `None` without batching.
    pub fn slots(&self) -> Option<usize> {
        self.0.batch.as_ref().map(|_| self.degree())
    }

    /// The ring `Z_{Q_l}[X]/(X^N+1)` of level `l`.
    pub fn ring(&self, level: usize) -> Result<Arc<RingContext>> {
        Ok(self.level(level)?.ring.clone())
    }

    /// `Q_l` as a big integer.
    pub fn modulus_at(&self, level: usize) -> Result<BigInt> {
        Ok(self.level(level)?.ring.basis().product().clone())
    }

    pub(crate) fn gaussian(&self) -> &DiscreteGaussian {
        &self.0.gaussian
    }

    pub(crate) fn batch(&self) -> Result<&BatchTables> {
        self.0.batch.as_ref().ok_or_else(|| {
            Error::Unsupported(format!(
                "batching needs a scalar prime t ≡ 1 mod 2N; plaintext modulus {:?} (use \
                 coefficient encoding)",
                self.plaintext_modulus()
            ))
        })
    }

    /// The slot maps of a cyclotomic plaintext ring `Z_p[X]/(X^D − b)` (seed 002 §3.2):
    /// `Pack`/`Unpack` by the twisted `O(D log D)` NTT over `Z_p`, with the root `ξ` of the set's
    /// slot generator ([`Params::with_slot_generator`](crate::Params::with_slot_generator): the
    /// reference code's, for MatriGear's Params I and II) or else the one
    /// [`SlotEncoder::new`]'s deterministic search finds (so the slot order is a function of the
    /// parameters alone). Built on first use and shared by every clone of the context. For
    /// `M = 1` (ordinary BFV with `t = p`, Params III) the slots are the usual two rows of `N/2`
    /// and there is no cyclic rotation ([`crate::slots::slot_rotation_element`] refuses it).
    ///
    /// # Errors
    /// [`Error::Unsupported`] for a scalar plaintext modulus (its slots, where `t` is a prime
    /// `≡ 1 mod 2N`, are those of [`Plaintext::encode_simd`](crate::Plaintext::encode_simd)).
    ///
    /// ```
    /// use coterie_bfv::{Context, Params};
    /// let ctx = Context::new(Params::insecure_toy_cyclotomic(32, 132, 4).unwrap()).unwrap(); // Toy-B
    /// let enc = ctx.slot_encoder().unwrap();
    /// assert_eq!((enc.slots(), enc.modulus().to_u64()), (8, Some(303_595_777)));
    /// let scalar = Context::new(Params::insecure_toy(256, 65537).unwrap()).unwrap();
    /// assert!(scalar.slot_encoder().is_err());
    /// ```
    pub fn slot_encoder(&self) -> Result<&SlotEncoder> {
        let cy = self.cyclo().ok_or_else(|| {
            Error::Unsupported("slots of X^D − b need a cyclotomic plaintext modulus".into())
        })?;
        let built = cy.slots.get_or_init(|| {
            let PlaintextModulus::Cyclotomic { b, .. } = self.plaintext_modulus() else {
                return Err("not a cyclotomic plaintext modulus".into());
            };
            match self.params().slot_generator() {
                Some(g) => SlotEncoder::with_generator(b, cy.m, cy.d, &g),
                None => SlotEncoder::new(b, cy.m, cy.d),
            }
            .map_err(|e| e.to_string())
        });
        built.as_ref().map_err(|e| Error::Unsupported(e.clone()))
    }

    pub(crate) fn cyclo(&self) -> Option<&CycloTables> {
        self.0.cyclo.as_ref()
    }

    pub(crate) fn top(&self) -> &Level {
        self.level(self.max_level())
            .expect("the top level is built by Context::new")
    }

    pub(crate) fn level(&self, level: usize) -> Result<&Level> {
        let cell = self.0.levels.get(level).ok_or_else(|| {
            Error::Mismatch(format!(
                "level {level} does not exist (top level {})",
                self.0.levels.len() - 1
            ))
        })?;
        if let Some(l) = cell.get() {
            return Ok(l);
        }
        let built = self.build_level(level)?;
        Ok(cell.get_or_init(|| built))
    }

    /// The most products one tensor coefficient may sum at `level` before the exact
    /// scale-and-round can go wrong: a sum of `T` products of centered operands has
    /// `|x| ≤ T·N·Q²/4`, and the rounding is exact while `|(b+1)·x/Q| < P/2` (`t` for a scalar
    /// modulus), i.e. `T < 2P / ((b+1)·N·Q)`. From bit lengths (`Q` rounded up, `P` down, one bit
    /// of margin), at least 1 and at most `2^20`.
    pub(crate) fn tensor_capacity(&self, level: usize) -> Result<usize> {
        let p = &self.0.params;
        let moduli = p
            .moduli()
            .get(..=level)
            .ok_or_else(|| Error::InvalidParameter(format!("no level {level}")))?;
        let q_bits = i64::from(bits_of(moduli));
        let k = aux_count(
            bits_of(moduli),
            p.plaintext_modulus().expansion_bits(),
            p.degree(),
        );
        let p_bits: i64 = self.0.aux_primes[..k]
            .iter()
            .map(|&x| i64::from(63 - x.leading_zeros()))
            .sum();
        let t_bits = i64::from(p.plaintext_modulus().expansion_bits());
        let n_bits = i64::from(p.degree().trailing_zeros());
        let room = p_bits + 1 - (t_bits + n_bits + q_bits) - 1;
        Ok(1usize << room.clamp(0, 20))
    }

    fn build_level(&self, level: usize) -> Result<Level> {
        let p = &self.0.params;
        let n = p.degree();
        let pm = p.plaintext_modulus();
        let moduli = &p.moduli()[..=level];
        let k = aux_count(bits_of(moduli), pm.expansion_bits(), n);
        let aux_primes = &self.0.aux_primes[..k];
        let ring = RingContext::new(n, moduli)?;
        let aux = RingContext::new(n, aux_primes)?;
        let q_to_aux = BaseConverter::new(ring.basis(), aux.basis())?;
        let plain = match *pm {
            PlaintextModulus::Scalar(t) => PlainLevel::Scalar(scalar_level(&ring, t)?),
            PlaintextModulus::Cyclotomic { d, ref b, m } => {
                // Δ_{kD} = round(−Q·b^{M−1−k}/p) (seed 002 §3.4 with the q/p fix).
                let q = ring.basis().product();
                let pp = cyclotomic_p(b, m);
                let mut coeffs = vec![BigInt::new(); n];
                let mut bk = BigInt::from(1u32);
                for k in (0..m).rev() {
                    // bk = b^{M−1−k}
                    let num = BigInt::from(q * &bk);
                    let (mut quo, rem) = num.div_rem_euc(pp.clone());
                    if BigInt::from(&rem << 1u32) >= pp {
                        quo += 1u32;
                    }
                    coeffs[k * d] = -quo;
                    bk *= b;
                }
                let mut delta = Poly::from_bigints(&ring, &coeffs)?;
                delta.to_ntt();
                PlainLevel::Cyclotomic(CycloLevel {
                    delta,
                    b_mod_q: ring.basis().decompose(b),
                    b_mod_aux: aux.basis().decompose(b),
                })
            }
        };
        let numerator = match pm {
            PlaintextModulus::Scalar(t) => BigInt::from(*t),
            PlaintextModulus::Cyclotomic { .. } => BigInt::from(1u32),
        };
        let rounder = ScaleRounder::new(ring.basis(), aux.basis(), &numerator)?;
        Ok(Level {
            ring,
            aux,
            q_to_aux,
            rounder,
            plain,
            switch: (0..level).map(|_| OnceLock::new()).collect(),
        })
    }

    /// The one-step modulus-switching tables from `from` down to `to`.
    pub(crate) fn switch(&self, from: usize, to: usize) -> Result<&Switch> {
        let lv = self.level(from)?;
        let cell = lv
            .switch
            .get(to)
            .ok_or_else(|| Error::Mismatch(format!("no switch from level {from} to {to}")))?;
        if let Some(s) = cell.get() {
            return Ok(s);
        }
        let moduli = lv.ring.moduli();
        let kept: Vec<u64> = moduli[..=to].iter().map(|m| m.value()).collect();
        let dropped: Vec<u64> = moduli[to + 1..].iter().map(|m| m.value()).collect();
        let (kb, db) = (RnsBasis::new(&kept)?, RnsBasis::new(&dropped)?);
        let conv = BaseConverter::new(&db, &kb)?;
        let d_inv = kb
            .moduli()
            .iter()
            .map(|m| {
                let d = kb_mod(db.product(), m.value());
                let inv = m.inv(d)?;
                Ok((inv, m.shoup(inv)))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(cell.get_or_init(|| Switch { conv, d_inv }))
    }

    pub(crate) fn check_same(&self, other: &Context) -> Result<()> {
        if self != other {
            return Err(Error::Mismatch(format!(
                "objects of different parameter sets ({} vs {})",
                self.params().name(),
                other.params().name()
            )));
        }
        Ok(())
    }
}

/// The tables of a scalar plaintext modulus `t` at the level of `ring`.
fn scalar_level(ring: &RingContext, t: u64) -> Result<ScalarLevel> {
    let tb = BigInt::from(t);
    let q = ring.basis().product();
    let delta_big = BigInt::from(q / t);
    let delta = ring.basis().decompose(&delta_big);
    let t_basis = RnsBasis::new(&[t])?;
    let dec_conv = BaseConverter::new(ring.basis(), &t_basis)?;
    let half = BigInt::from(q >> 1u32);
    let to_t = |x: BigInt| -> Result<u64> {
        x.to_u64()
            .ok_or_else(|| Error::InvalidParameter("residue mod t".into()))
    };
    let half_q_mod_t = to_t(BigInt::from(&half % t))?;
    let q_inv_mod_t = to_t(
        BigInt::from(q % t)
            .invert(&tb)
            .map_err(|_| Error::InvalidParameter("Q is not invertible mod t".into()))?,
    )?;
    let t_mod_q = ring.basis().decompose(&tb);
    let half_q_mod_q = ring.basis().decompose(&half);
    Ok(ScalarLevel {
        delta,
        dec_conv,
        t_mod_q,
        half_q_mod_q,
        half_q_mod_t,
        q_inv_mod_t,
    })
}

/// `x mod m` for a non-negative big integer.
fn kb_mod(x: &BigInt, m: u64) -> u64 {
    BigInt::from(x % m).to_u64().unwrap_or(0)
}

/// The NTT over `Z_t` and the slot order: row 0 column `c` evaluates at `ζ^{5^c}`, row 1 column
/// `c` at `ζ^{−5^c}`, so `X → X^{5^k}` rotates both rows left by `k` and `X → X^{2N−1}` swaps them.
fn batch_tables(n: usize, t: u64) -> Result<BatchTables> {
    let plan = NttPlan::new(n, t)?;
    let two_n = 2 * n;
    let mut slot_of_exp = vec![u32::MAX; two_n];
    for (i, &e) in plan.slot_exponents().iter().enumerate() {
        slot_of_exp[e as usize] = i as u32;
    }
    let half = n / 2;
    let mut index = vec![0u32; n];
    let mut e = 1usize;
    for c in 0..half {
        index[c] = slot_of_exp[e];
        index[half + c] = slot_of_exp[two_n - e];
        e = (e * 5) % two_n;
    }
    if index.contains(&u32::MAX) {
        return Err(Error::InvalidParameter(
            "batching slot map incomplete".into(),
        ));
    }
    Ok(BatchTables { plan, index })
}
