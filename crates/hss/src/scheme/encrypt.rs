//! Encryption (spec §3.1–§3.4): ElGamal `E(x)`, the level-1 encoding `L1(x)` built by
//! [`Encryptor::encrypt`], inputs prepared for pairing (fixed-base tables), and the secret-key
//! sharing of level-2 values.

use coterie_math::bigint::{self, BigInt};
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::evaluator::L2Share;
use super::keys::{PublicKey, SecretKey};
use super::params::Params;
use crate::group::{Elem, FixedBase, Group};
use crate::{Error, Result};

/// An ElGamal ciphertext `E(x) = (g^r, g^(r·c + x))`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ciphertext {
    /// `A = g^r`.
    pub a: Elem,
    /// `C = g^(r·c + x)`.
    pub c: Elem,
}

/// `Enc` with fixed-base tables for `g` and `h` (window 8, full-size exponents).
#[derive(Debug, Clone)]
pub struct Encryptor {
    group: Group,
    g: FixedBase,
    h: FixedBase,
}

/// The level-1 encoding `L1(x) = (E(x), E(x·c_1), …, E(x·c_s))`, public to both servers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct L1Input {
    /// `E(x)`.
    pub x: Ciphertext,
    /// `E(x·c_i)`.
    pub digits: Vec<Ciphertext>,
}

// Stored and sent in the coterie envelope as `HSl1` (a level-1 input).
coterie_base::versioned! {
    L1Input => b"HSl1" v 1,
}

impl L1Input {
    /// Checks a decoded input against `pk`: digit count, every element in the group.
    pub fn validate(&self, pk: &PublicKey) -> Result<()> {
        if self.digits.len() != pk.key_digits.len() {
            return Err(Error::Malformed(
                "L1 input has the wrong number of digits".into(),
            ));
        }
        let group = Group::new(pk.params.group);
        for ct in std::iter::once(&self.x).chain(&self.digits) {
            group.validate(&ct.a)?;
            group.validate(&ct.c)?;
        }
        Ok(())
    }
}

impl Encryptor {
    pub(crate) fn new_raw(group: &Group, h: &Elem) -> Result<Self> {
        let bits = group.q().significant_bits();
        Ok(Self {
            group: group.clone(),
            g: FixedBase::new(group, &group.g(), 8, bits)?,
            h: FixedBase::new(group, h, 8, bits)?,
        })
    }

    /// `E(x) = (g^r, h^r·g^x)` with `r ← Z_q`.
    pub fn encrypt_value<R: Rng + ?Sized>(&self, x: &BigInt, rng: &mut R) -> Ciphertext {
        let r = self.group.random_exponent(rng);
        self.encrypt_with(x, &r)
    }

    fn encrypt_with(&self, x: &BigInt, r: &BigInt) -> Ciphertext {
        let g = &self.group;
        let mut xm = BigInt::from(x % g.q());
        if xm.is_negative() {
            xm += g.q();
        }
        // Exponents are reduced mod q, so they fit the tables.
        let a = self.g.pow(g, r).unwrap_or_else(|_| g.one());
        let hr = self.h.pow(g, r).unwrap_or_else(|_| g.one());
        let gx = self.g.pow(g, &xm).unwrap_or_else(|_| g.one());
        Ciphertext {
            a,
            c: g.mul(&hr, &gx),
        }
    }

    /// Rerandomized `E(v·m)` from `E(m)`: `(A^v, C^v)·(g^r, h^r)`.
    pub fn scale_rerandomize<R: Rng + ?Sized>(
        &self,
        ct: &Ciphertext,
        v: &BigInt,
        rng: &mut R,
    ) -> Ciphertext {
        let g = &self.group;
        let zero = self.encrypt_value(&BigInt::new(), rng);
        let (a, c) = if *v == 1 {
            (ct.a.clone(), ct.c.clone())
        } else if *v == 0 {
            (g.one(), g.one())
        } else {
            let mut vm = BigInt::from(v % g.q());
            if vm.is_negative() {
                vm += g.q();
            }
            (g.pow(&ct.a, &vm), g.pow(&ct.c, &vm))
        };
        Ciphertext {
            a: g.mul(&a, &zero.a),
            c: g.mul(&c, &zero.c),
        }
    }

    /// `Enc(pk, x)`: `L1(x)` through the ElGamal homomorphism, `E(x·c_i) = E(c_i)^x·E(0)` —
    /// how a client shares an input with the two servers (public-key HSS).
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_hss::scheme::{Params, PreparedInput, insecure_keygen_trusted_dealer};
    /// use coterie_math::bigint::BigInt;
    /// use rand::SeedableRng;
    /// let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(2); // insecure fixed seed
    /// let params = Params::insecure_toy(4, 16, 10);
    /// let (pk, _, _, sk) = insecure_keygen_trusted_dealer(&params, &mut rng).unwrap();
    /// let l1 = pk.encryptor().unwrap().encrypt(&pk, &BigInt::from(1), &mut rng);
    /// l1.validate(&pk).unwrap();
    /// assert_eq!(l1.digits.len(), params.s());
    /// let group = coterie_hss::group::Group::new(params.group);
    /// assert_eq!(sk.decrypt_to_group(&group, &l1.x).unwrap(), group.g());
    /// // Each server prepares the input's pairing tables once.
    /// let _prepared = PreparedInput::new(&pk, &l1, false).unwrap();
    /// ```
    pub fn encrypt<R: Rng + ?Sized>(&self, pk: &PublicKey, x: &BigInt, rng: &mut R) -> L1Input {
        L1Input {
            x: self.encrypt_value(x, rng),
            digits: pk
                .key_digits
                .iter()
                .map(|ct| self.scale_rerandomize(ct, x, rng))
                .collect(),
        }
    }
}

/// One ciphertext with fixed-base tables for both components (pairing-ready).
#[derive(Debug, Clone)]
pub struct PreparedCt {
    pub(super) a: FixedBase,
    pub(super) c: FixedBase,
}

impl PreparedCt {
    /// Tables for `A` and `C` sized for the key's exponent bounds.
    pub fn new(group: &Group, pk: &PublicKey, ct: &Ciphertext) -> Result<Self> {
        let params = &pk.params;
        Ok(Self {
            a: FixedBase::new(group, &ct.a, params.window, pk.a_table_bits())?,
            c: FixedBase::new(group, &ct.c, params.window, params.c_table_bits())?,
        })
    }
    /// Stored elements (both tables).
    pub fn table_len(&self) -> usize {
        self.a.table_len() + self.c.table_len()
    }
}

/// A level-1 input prepared for pairing: tables for `E(x)`, `E(x·c_i)` and, when requested, for
/// the complemented family `E(1 − x)`, `E(c_i − x·c_i)` used by `RandMult` with `b0 = 1` and by
/// the pads' `MPair` (computed once per input by inversion).
#[derive(Debug, Clone)]
pub struct PreparedInput {
    /// `E(x)`.
    pub x: PreparedCt,
    /// `E(x·c_i)`.
    pub digits: Vec<PreparedCt>,
    /// `E(1 − x)` and `E(c_i − x·c_i)`.
    pub complement: Option<(PreparedCt, Vec<PreparedCt>)>,
}

impl PreparedInput {
    /// Builds the tables (and the complemented family when `complement`).
    pub fn new(pk: &PublicKey, input: &L1Input, complement: bool) -> Result<Self> {
        let params = &pk.params;
        let group = Group::new(params.group);
        if input.digits.len() != pk.key_digits.len() {
            return Err(Error::Malformed(
                "input has the wrong number of digits".into(),
            ));
        }
        let x = PreparedCt::new(&group, pk, &input.x)?;
        let digits = input
            .digits
            .iter()
            .map(|ct| PreparedCt::new(&group, pk, ct))
            .collect::<Result<Vec<_>>>()?;
        let complement = if complement {
            let one = Ciphertext {
                a: group.one(),
                c: group.g(),
            };
            let cx = PreparedCt::new(&group, pk, &ct_div(&group, &one, &input.x)?)?;
            let cd = pk
                .key_digits
                .iter()
                .zip(&input.digits)
                .map(|(kd, xd)| PreparedCt::new(&group, pk, &ct_div(&group, kd, xd)?))
                .collect::<Result<Vec<_>>>()?;
            Some((cx, cd))
        } else {
            None
        };
        Ok(Self {
            x,
            digits,
            complement,
        })
    }

    /// Total stored table elements.
    pub fn table_len(&self) -> usize {
        self.x.table_len()
            + self.digits.iter().map(PreparedCt::table_len).sum::<usize>()
            + self.complement.as_ref().map_or(0, |(c, d)| {
                c.table_len() + d.iter().map(PreparedCt::table_len).sum::<usize>()
            })
    }
}

/// `E(u)/E(v) = E(u − v)` component-wise.
pub fn ct_div(group: &Group, u: &Ciphertext, v: &Ciphertext) -> Result<Ciphertext> {
    Ok(Ciphertext {
        a: group.mul(&u.a, &group.inv(&v.a)?),
        c: group.mul(&u.c, &group.inv(&v.c)?),
    })
}

/// Secret-key HSS (spec §1.1 Remark 2.2, §3.4): a client holding the secret key hands the two
/// servers `L2(x)` directly, `<x> = (x + r, r)`, `<x·c> = (x·c + r', r')` with integer masks `r`,
/// `r'` that statistically hide `x` and `x·c` (`stat_bits` of slack), so a load costs nothing.
///
/// # Example
///
/// ```
/// use coterie_hss::scheme::{Params, insecure_keygen_trusted_dealer, share_l2_secret_key};
/// use coterie_math::bigint::BigInt;
/// use rand::SeedableRng;
/// let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3); // insecure fixed seed
/// let params = Params::insecure_toy(4, 16, 10);
/// let (_, _, _, sk) = insecure_keygen_trusted_dealer(&params, &mut rng).unwrap();
/// let (s0, s1) = share_l2_secret_key(&params, &sk, 5, &mut rng);
/// assert_eq!(BigInt::from(&s0.y - &s1.y), 5);
/// assert_eq!(BigInt::from(&s0.yc - &s1.yc), BigInt::from(&sk.c * 5));
/// ```
pub fn share_l2_secret_key<R: Rng + ?Sized>(
    params: &Params,
    sk: &SecretKey,
    x: i64,
    rng: &mut R,
) -> (L2Share, L2Share) {
    let rb = params.stat_bits + 8;
    let rcb = params.key_bits + params.stat_bits + 8;
    let r = bigint::random_below(rng, &(BigInt::from(1) << rb)).unwrap_or_default();
    let rc = bigint::random_below(rng, &(BigInt::from(1) << rcb)).unwrap_or_default();
    let xc = BigInt::from(&sk.c * x);
    let yb = BigInt::from(1) << rb;
    let ycb = BigInt::from(1) << (sk.c.significant_bits().max(rcb) + 1 + 64);
    let s0 = L2Share {
        y: BigInt::from(&r + x),
        yc: BigInt::from(&rc + &xc),
        y_bound: BigInt::from(&yb + x.unsigned_abs()),
        yc_bound: ycb.clone(),
    };
    let s1 = L2Share {
        y: r,
        yc: rc,
        y_bound: BigInt::from(&yb + x.unsigned_abs()),
        yc_bound: ycb,
    };
    (s0, s1)
}
