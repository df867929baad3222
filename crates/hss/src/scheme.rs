//! Keys, encodings and the core HSS algorithms (spec §2–§4.5, §4.8).
//!
//! * [`Params`] — group, key base `B ∈ {2, 4, 16}`, key length, pattern length `d`,
//!   fixed-base window `R`; [`Params::table3`] gives the paper's Table 3 rows.
//! * [`keygen_trusted_dealer_insecure`] — the paper's `Gen` run by one trusted party (tests and
//!   benchmarks; the distributed version is [`crate::protocol`]).
//! * [`Encryptor::encrypt`] — `Enc(pk, x)`: the level-1 encoding `L1(x) = (E(x), E(x·c_i)_i)`.
//! * [`Evaluator`] — one server's local evaluation: `Pair`, `PairConv`, `Mult`, `RandMult`,
//!   terminal multiplications, large inputs, outputs, with its failure flag `γ_b`.
//!
//! Level-2 shares are integers in the difference convention (`y_0 − y_1 = y`,
//! `(yc)_0 − (yc)_1 = y·c`). Each [`L2Share`] carries public bit bounds of its two shares; they
//! are functions of the program only, so both servers derive the same bounds, and `Pair` uses the
//! public offsets `2^bound` to make both exponents nonnegative:
//! `h_b = C^(y_b + 2^ky) · A^(2^kyc − (yc)_b)`, whose ratio is still `g^(x·y)` (the offsets
//! cancel). This avoids inversions and keeps exponents at about `ℓ + 2d` bits (spec §3.1).

use coterie_math::bigint::{self, BigInt};
use rand::Rng;
use serde::{Deserialize, Serialize};
use zeroize::Zeroize;

use crate::convert::{self, ConvertParams, ScanEngine};
use crate::group::{Elem, FixedBase, Group, GroupId};
use crate::{Error, FORMAT_VERSION, Result};

/// Scheme parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    /// The group.
    pub group: GroupId,
    /// `log₂ B` of the key base `B` (1, 2 or 4).
    pub log_base: u32,
    /// ElGamal key length ℓ in bits (160 in the paper: short-exponent ElGamal).
    pub key_bits: u32,
    /// Statistical masking of integer key shares (80: shares of 240 bits, spec §2).
    pub stat_bits: u32,
    /// Distinguished-point pattern length `d`.
    pub d: u32,
    /// Fixed-base window `R` of the pairing tables.
    pub window: u32,
    /// The conversion scan.
    pub engine: ScanEngine,
}

impl Params {
    /// The paper's Table 3 row for failure `ε = 2^−eps_log2`, base `2^log_base`, window `R`:
    /// group `p = 2^1536 − 11510609`, 160-bit key, `d = min{ d : (1 + s(B−1)/2)/2^(d+3) ≤ ε }`
    /// (Table 2 / Corollary 4.8; gives the paper's d = 9/14/19 for B = 4 and 11/16/21 for
    /// B = 16). Security: the paper's 80-bit target (1536-bit group, 160-bit short ElGamal
    /// key under circular security, spec §2).
    pub fn table3(eps_log2: u32, log_base: u32, window: u32) -> Result<Self> {
        Self::with_failure(GroupId::P1536, 160, eps_log2, log_base, window)
    }

    /// Parameters for a given per-multiplication failure target `2^−eps_log2` (randomized bit
    /// conversions, spec §8).
    pub fn with_failure(
        group: GroupId,
        key_bits: u32,
        eps_log2: u32,
        log_base: u32,
        window: u32,
    ) -> Result<Self> {
        if !matches!(log_base, 1 | 2 | 4) || key_bits == 0 || !key_bits.is_multiple_of(log_base) {
            return Err(Error::InvalidParameter(
                "B must be 2, 4 or 16 and divide the key length".into(),
            ));
        }
        let s = (key_bits / log_base) as f64;
        let b = (1u64 << log_base) as f64;
        let num = 1.0 + s * (b - 1.0) / 2.0;
        let mut d = 1u32;
        while num / 2f64.powi(d as i32 + 3) > 2f64.powi(-(eps_log2 as i32)) {
            d += 1;
        }
        Ok(Self {
            group,
            log_base,
            key_bits,
            stat_bits: 80,
            d,
            window,
            engine: ScanEngine::BitParallel,
        })
    }

    /// **Toy, insecure** parameters on the 128-bit toy group with a short key (for statistical
    /// tests where failures must be frequent). No security.
    pub fn toy_insecure(log_base: u32, key_bits: u32, d: u32) -> Self {
        Self {
            group: GroupId::Toy128Insecure,
            log_base,
            key_bits,
            stat_bits: 40,
            d,
            window: 4,
            engine: ScanEngine::BitParallel,
        }
    }

    /// Number of key digits `s = ⌈ℓ / log₂ B⌉`.
    pub fn s(&self) -> usize {
        self.key_bits.div_ceil(self.log_base) as usize
    }
    /// The base `B`.
    pub fn base(&self) -> u64 {
        1u64 << self.log_base
    }
    /// Bits of an integer key share (`ℓ + stat + 1`).
    pub fn key_share_bits(&self) -> u32 {
        self.key_bits + self.stat_bits + 1
    }
    /// Bit bound of a conversion output (`|out| ≤ 2^(d+7)`).
    pub fn conv_bits(&self) -> u32 {
        self.d + 8
    }
    /// Largest `A`-side exponent the pairing tables support (key-share size plus 12 bits of
    /// headroom for linear combinations).
    pub fn a_table_bits(&self) -> u32 {
        self.key_share_bits().max(self.key_bits + self.conv_bits()) + 12
    }
    /// Largest `C`-side exponent the pairing tables support.
    pub fn c_table_bits(&self) -> u32 {
        self.conv_bits().max(self.stat_bits + 9) + 12
    }
    /// The Table 2 failure estimate `(1 + s(B−1)/2)/2^(d+3)` for one randomized RMS
    /// multiplication of bits.
    pub fn predicted_failure(&self) -> f64 {
        let s = self.s() as f64;
        let b = self.base() as f64;
        (1.0 + s * (b - 1.0) / 2.0) / 2f64.powi(self.d as i32 + 3)
    }
    fn check(&self) -> Result<()> {
        if !matches!(self.log_base, 1 | 2 | 4)
            || self.key_bits == 0
            || !(2..=40).contains(&self.d)
            || !(1..=16).contains(&self.window)
        {
            return Err(Error::InvalidParameter("unsupported HSS parameters".into()));
        }
        Ok(())
    }
}

/// An ElGamal ciphertext `E(x) = (g^r, g^(r·c + x))`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ciphertext {
    /// `A = g^r`.
    pub a: Elem,
    /// `C = g^(r·c + x)`.
    pub c: Elem,
}

/// How the ElGamal key is assembled from its digits: `c ≡ Σ w_i c_i (mod q)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum KeyLayout {
    /// `w_i = B^(i−1)` (the standard base-B key).
    Base,
    /// Explicit weights (the information-theoretic key sharing against leakage, spec §4.7).
    Weights(#[serde(with = "serde_vec_bigint")] Vec<BigInt>),
}

/// The public key `pk = (G, g, h = g^c, (E(c_i))_i)`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PublicKey {
    /// Format version ([`FORMAT_VERSION`]).
    pub version: u16,
    /// Parameters.
    pub params: Params,
    /// `h = g^c`.
    pub h: Elem,
    /// Encryptions of the key digits `E(c_i)`.
    pub key_digits: Vec<Ciphertext>,
    /// Digit weights.
    pub layout: KeyLayout,
}

/// One server's evaluation key `ek_b`: integer shares of `c` and of each digit `c_i`
/// (difference convention), and the PRF key both servers share.
#[derive(Clone, Serialize, Deserialize)]
pub struct EvalKey {
    /// Format version.
    pub version: u16,
    /// Server index `b ∈ {0, 1}`.
    pub party: u8,
    /// `<c>_b`.
    #[serde(with = "coterie_math::bigint::serde_bigint")]
    pub c_share: BigInt,
    /// `<c_i>_b`.
    #[serde(with = "serde_vec_bigint")]
    pub digit_shares: Vec<BigInt>,
    /// Common PRF key (output masks, RandMult bits).
    pub prf_key: [u8; 32],
}

impl core::fmt::Debug for EvalKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "EvalKey {{ party: {}, .. }}", self.party)
    }
}

impl Drop for EvalKey {
    fn drop(&mut self) {
        wipe(&mut self.c_share);
        for x in &mut self.digit_shares {
            wipe(x);
        }
        self.prf_key.zeroize();
    }
}

/// The ElGamal secret key (held by nobody in the distributed setting; tests and secret-key HSS).
#[derive(Clone)]
pub struct SecretKey {
    /// `c`.
    pub c: BigInt,
    /// Digits `c_i`.
    pub digits: Vec<u64>,
}

impl Drop for SecretKey {
    fn drop(&mut self) {
        wipe(&mut self.c);
        self.digits.zeroize();
    }
}

/// Overwrites the limbs of a big integer with zeros and sets it to 0.
pub fn wipe(x: &mut BigInt) {
    // SAFETY: `size` limbs starting at `d` are initialized and owned by `x`.
    unsafe {
        let raw = x.as_raw_mut();
        let n = (*raw).size.unsigned_abs() as usize;
        if n > 0 {
            std::ptr::write_bytes((*raw).d.as_ptr(), 0, n);
        }
        (*raw).size = 0;
    }
}

impl SecretKey {
    /// `Dec(E(m)) = C / A^c = g^m`.
    pub fn decrypt_to_group(&self, group: &Group, ct: &Ciphertext) -> Result<Elem> {
        let ac = group.pow(&ct.a, &self.c);
        Ok(group.mul(&ct.c, &group.inv(&ac)?))
    }
}

/// Samples `<c>`, `<c_i>` (integer shares masking by `stat_bits`) for a key `c` (any integer
/// representative) and its digits.
pub(crate) fn sample_key_shares<R: Rng + ?Sized>(
    params: &Params,
    digits: &[u64],
    c: &BigInt,
    rng: &mut R,
) -> (EvalKey, EvalKey) {
    let mask_bits = c.significant_bits().max(params.key_bits) + params.stat_bits;
    let mask_c = bigint::random_below(rng, &(BigInt::from(1) << mask_bits)).unwrap_or_default();
    let dig_bits = params.log_base + params.stat_bits;
    let mut d0 = Vec::with_capacity(digits.len());
    let mut d1 = Vec::with_capacity(digits.len());
    for &ci in digits {
        let r = bigint::random_below(rng, &(BigInt::from(1) << dig_bits)).unwrap_or_default();
        d0.push(BigInt::from(&r + ci));
        d1.push(r);
    }
    let mut prf_key = [0u8; 32];
    rng.fill_bytes(&mut prf_key);
    let ek0 = EvalKey {
        version: FORMAT_VERSION,
        party: 0,
        c_share: BigInt::from(&mask_c + c),
        digit_shares: d0,
        prf_key,
    };
    let ek1 = EvalKey {
        version: FORMAT_VERSION,
        party: 1,
        c_share: mask_c,
        digit_shares: d1,
        prf_key,
    };
    prf_key.zeroize();
    (ek0, ek1)
}

/// The paper's `Gen` run by a single **trusted dealer** (insecure against the dealer: it sees
/// the key): random base-`B` digits `c_i`, `c = Σ B^(i−1) c_i`, `h = g^c`, `E(c_i)`, and integer
/// shares `<c>`, `<c_i>` for the two servers. Use [`crate::protocol::dkg`] in deployments.
pub fn keygen_trusted_dealer_insecure<R: Rng + ?Sized>(
    params: &Params,
    rng: &mut R,
) -> Result<(PublicKey, EvalKey, EvalKey, SecretKey)> {
    params.check()?;
    let group = Group::new(params.group);
    let s = params.s();
    let b = params.base();
    let digits: Vec<u64> = (0..s).map(|_| rng.next_u64() % b).collect();
    let c = digits
        .iter()
        .rev()
        .fold(BigInt::new(), |acc, &ci| (acc << params.log_base) + ci);
    let h = group.g_pow(&c);
    let enc = Encryptor::new_raw(&group, &h)?;
    let key_digits = digits
        .iter()
        .map(|&ci| enc.encrypt_value(&BigInt::from(ci), rng))
        .collect();
    let (ek0, ek1) = sample_key_shares(params, &digits, &c, rng);
    let pk = PublicKey {
        version: FORMAT_VERSION,
        params: *params,
        h,
        key_digits,
        layout: KeyLayout::Base,
    };
    Ok((pk, ek0, ek1, SecretKey { c, digits }))
}

impl PublicKey {
    /// The digit weights `w_i`.
    pub fn weights(&self) -> Vec<BigInt> {
        match &self.layout {
            KeyLayout::Base => (0..self.key_digits.len())
                .map(|i| BigInt::from(1) << (self.params.log_base * i as u32))
                .collect(),
            KeyLayout::Weights(w) => w.clone(),
        }
    }

    /// Bit bound of `Σ w_i` (for share bounds after a multiplication).
    pub fn weight_sum_bits(&self) -> u32 {
        let sum: BigInt = self.weights().iter().sum();
        sum.significant_bits()
    }

    /// Checks a deserialized public key: version, parameters, element validity and sizes.
    pub fn validate(&self) -> Result<()> {
        if self.version != FORMAT_VERSION {
            return Err(Error::Malformed("unsupported public key version".into()));
        }
        self.params.check()?;
        let group = Group::new(self.params.group);
        let expect = match &self.layout {
            KeyLayout::Base => self.params.s(),
            KeyLayout::Weights(w) => w.len(),
        };
        if self.key_digits.len() != expect || expect > 1 << 14 {
            return Err(Error::Malformed(
                "wrong number of key-digit ciphertexts".into(),
            ));
        }
        group.validate(&self.h)?;
        for ct in &self.key_digits {
            group.validate(&ct.a)?;
            group.validate(&ct.c)?;
        }
        Ok(())
    }

    /// Bits of the integer key shares `<c>_b` for this key layout.
    pub fn c_share_bits(&self) -> u32 {
        match self.layout {
            KeyLayout::Base => self.params.key_share_bits(),
            KeyLayout::Weights(_) => self.weight_sum_bits() + self.params.stat_bits + 1,
        }
    }

    /// Largest `A`-side pairing exponent for this key (covers explicit weights).
    pub fn a_table_bits(&self) -> u32 {
        self.params
            .a_table_bits()
            .max(self.c_share_bits() + 12)
            .max(self.weight_sum_bits() + self.params.conv_bits() + 12)
    }

    /// An encryptor (fixed-base tables for `g` and `h`).
    pub fn encryptor(&self) -> Result<Encryptor> {
        let group = Group::new(self.params.group);
        Encryptor::new_raw(&group, &self.h)
    }
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
    /// Format version.
    pub version: u16,
    /// `E(x)`.
    pub x: Ciphertext,
    /// `E(x·c_i)`.
    pub digits: Vec<Ciphertext>,
}

impl L1Input {
    /// Checks a decoded input against `pk`: version, digit count, every element in the group.
    pub fn validate(&self, pk: &PublicKey) -> Result<()> {
        if self.version != FORMAT_VERSION {
            return Err(Error::Malformed("unsupported L1 input version".into()));
        }
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

    /// `Enc(pk, x)`: `L1(x)` through the ElGamal homomorphism, `E(x·c_i) = E(c_i)^x·E(0)`.
    pub fn encrypt<R: Rng + ?Sized>(&self, pk: &PublicKey, x: &BigInt, rng: &mut R) -> L1Input {
        L1Input {
            version: FORMAT_VERSION,
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
    a: FixedBase,
    c: FixedBase,
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

/// One server's share of a level-2 value `L2(y) = (<y>, <y·c>)`, with public magnitude bounds.
///
/// The bounds are public functions of the program (both servers compute the same ones); they
/// bound both servers' shares: `|<y>_b| ≤ y_bound`, `|<y·c>_b| ≤ yc_bound`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct L2Share {
    /// `<y>_b`.
    #[serde(with = "coterie_math::bigint::serde_bigint")]
    pub y: BigInt,
    /// `<y·c>_b`.
    #[serde(with = "coterie_math::bigint::serde_bigint")]
    pub yc: BigInt,
    /// Public bound on `|<y>_b|`.
    #[serde(with = "coterie_math::bigint::serde_bigint")]
    pub y_bound: BigInt,
    /// Public bound on `|<y·c>_b|`.
    #[serde(with = "coterie_math::bigint::serde_bigint")]
    pub yc_bound: BigInt,
}

impl L2Share {
    /// Checks a decoded share: both shares within their public bounds, bounds of at most
    /// `max_bits` bits (a decoded share is otherwise an allocation and exponent-size bomb).
    /// Shares cross process boundaries inside versioned containers
    /// (e.g. [`crate::protocol::L2Batch`]).
    pub fn validate(&self, max_bits: u32) -> Result<()> {
        if self.y_bound.significant_bits() > max_bits
            || self.yc_bound.significant_bits() > max_bits
            || self.y.is_negative() && BigInt::from(-&self.y) > self.y_bound
            || !self.y.is_negative() && self.y > self.y_bound
            || self.yc.is_negative() && BigInt::from(-&self.yc) > self.yc_bound
            || !self.yc.is_negative() && self.yc > self.yc_bound
        {
            return Err(Error::Malformed("level-2 share outside its bounds".into()));
        }
        Ok(())
    }

    /// `self + other`.
    pub fn add(&self, o: &L2Share) -> L2Share {
        L2Share {
            y: BigInt::from(&self.y + &o.y),
            yc: BigInt::from(&self.yc + &o.yc),
            y_bound: BigInt::from(&self.y_bound + &o.y_bound),
            yc_bound: BigInt::from(&self.yc_bound + &o.yc_bound),
        }
    }
    /// `self − other`.
    pub fn sub(&self, o: &L2Share) -> L2Share {
        L2Share {
            y: BigInt::from(&self.y - &o.y),
            yc: BigInt::from(&self.yc - &o.yc),
            y_bound: BigInt::from(&self.y_bound + &o.y_bound),
            yc_bound: BigInt::from(&self.yc_bound + &o.yc_bound),
        }
    }
    /// `k·self` for a public integer `k`.
    pub fn scale(&self, k: i64) -> L2Share {
        let ka = k.unsigned_abs();
        L2Share {
            y: BigInt::from(&self.y * k),
            yc: BigInt::from(&self.yc * k),
            y_bound: BigInt::from(&self.y_bound * ka),
            yc_bound: BigInt::from(&self.yc_bound * ka),
        }
    }
    /// `⌊share/2⌋` of both components: halves a sharing of an even value (both shares have the
    /// same parity, so `⌊a/2⌋ − ⌊b/2⌋ = (a − b)/2`; used by the pads' `MMult`, spec §4.6).
    pub fn halve(&self) -> L2Share {
        L2Share {
            y: BigInt::from(&self.y >> 1u32),
            yc: BigInt::from(&self.yc >> 1u32),
            y_bound: BigInt::from(&self.y_bound >> 1u32) + 1u32,
            yc_bound: BigInt::from(&self.yc_bound >> 1u32) + 1u32,
        }
    }
}

/// Counters of one server's evaluation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EvalStats {
    /// Conversions run.
    pub conversions: u64,
    /// Conversion steps walked.
    pub steps: u64,
    /// Conversions that raised a flag.
    pub flags: u64,
}

/// One server's local evaluator: holds `ek_b`, the nonce of this evaluation (so different
/// evaluations have independent failures and masks), and the flag `γ_b`.
pub struct Evaluator<'a> {
    group: Group,
    params: Params,
    pk: &'a PublicKey,
    ek: &'a EvalKey,
    weights: Vec<BigInt>,
    wsum: BigInt,
    nonce: u64,
    counter: u64,
    flagged: bool,
    /// Counters.
    pub stats: EvalStats,
}

impl<'a> Evaluator<'a> {
    /// An evaluator for server `ek.party` under evaluation `nonce`.
    pub fn new(pk: &'a PublicKey, ek: &'a EvalKey, nonce: u64) -> Result<Self> {
        if ek.party > 1 || ek.digit_shares.len() != pk.key_digits.len() {
            return Err(Error::InvalidParameter(
                "evaluation key does not match pk".into(),
            ));
        }
        Ok(Self {
            group: Group::new(pk.params.group),
            params: pk.params,
            pk,
            ek,
            weights: pk.weights(),
            wsum: pk.weights().iter().sum(),
            nonce,
            counter: 0,
            flagged: false,
            stats: EvalStats::default(),
        })
    }

    /// This server's index.
    pub fn party(&self) -> u8 {
        self.ek.party
    }
    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }
    /// The group.
    pub fn group(&self) -> &Group {
        &self.group
    }
    /// `γ_b`: `true` (= ⊥) if any conversion of this server raised a flag.
    pub fn flagged(&self) -> bool {
        self.flagged
    }
    /// Resets the flag (start of a new output).
    pub fn clear_flag(&mut self) {
        self.flagged = false;
    }

    /// `L2(1) = ((1, 0), (ek_0, ek_1))`.
    pub fn one(&self) -> L2Share {
        L2Share {
            y: BigInt::from(u8::from(self.ek.party == 0)),
            yc: self.ek.c_share.clone(),
            y_bound: BigInt::from(1),
            yc_bound: BigInt::from(1) << self.pk.c_share_bits(),
        }
    }

    /// `L2(0)`.
    pub fn zero(&self) -> L2Share {
        L2Share {
            y: BigInt::new(),
            yc: BigInt::new(),
            y_bound: BigInt::new(),
            yc_bound: BigInt::new(),
        }
    }

    /// `L2(y + k)` for a public constant `k`.
    pub fn add_const(&self, y: &L2Share, k: i64) -> L2Share {
        y.add(&self.one().scale(k))
    }

    /// `Pair(b, E(x), L2(y)) = C^(y_b + 2^ky) · A^(2^kyc − (yc)_b)` (level 3: `h_0 = h_1·g^(x·y)`).
    pub fn pair(&self, ct: &PreparedCt, y: &L2Share) -> Result<Elem> {
        let g = &self.group;
        let ey = &y.y + (BigInt::from(1) << y.y_bound.significant_bits());
        let eyc = (BigInt::from(1) << y.yc_bound.significant_bits()) - &y.yc;
        if ey.is_negative() || eyc.is_negative() {
            return Err(Error::Program("share exceeds its public bound".into()));
        }
        let mut acc = g.one().0;
        let mut tmp = vec![0; g.limbs()];
        let mut s = g.scratch();
        ct.c.mul_pow_into(g, &mut acc, &ey, &mut tmp, &mut s)?;
        ct.a.mul_pow_into(g, &mut acc, &eyc, &mut tmp, &mut s)?;
        Ok(Elem(acc))
    }

    /// `PairConv`: `Convert*(Pair(·))` with payload bound `m`; records the flag.
    pub fn pair_conv(&mut self, ct: &PreparedCt, y: &L2Share, m: u64) -> Result<i64> {
        let h = self.pair(ct, y)?;
        self.convert(&h, m, None)
    }

    /// `Convert*` of a level-3 share `h` with payload bound `m`; records the flag.
    pub fn convert_level3(&mut self, h: &Elem, m: u64) -> Result<i64> {
        self.convert(h, m, None)
    }

    fn convert(&mut self, h: &Elem, m: u64, beta: Option<u64>) -> Result<i64> {
        let cp = ConvertParams::new(self.params.d, m);
        let r = match beta {
            None => convert::convert(&self.group, self.ek.party, h, &cp, self.params.engine)?,
            Some(bt) => convert::convert_terminal(
                &self.group,
                self.ek.party,
                h,
                &cp,
                self.params.engine,
                bt,
            )?,
        };
        self.stats.conversions += 1;
        self.stats.steps += r.steps;
        if r.flag {
            self.stats.flags += 1;
            self.flagged = true;
        }
        Ok(r.share)
    }

    fn mult_family(
        &mut self,
        x: &PreparedCt,
        digits: &[PreparedCt],
        y: &L2Share,
        m_rms: u64,
    ) -> Result<L2Share> {
        let xy = self.pair_conv(x, y, m_rms)?;
        let mdig = (self.params.base() - 1) * m_rms;
        let mut yc = BigInt::new();
        for (i, ct) in digits.iter().enumerate() {
            let o = self.pair_conv(ct, y, mdig)?;
            yc += BigInt::from(&self.weights[i] * o);
        }
        let cap = BigInt::from(1) << (self.params.conv_bits() - 1);
        Ok(L2Share {
            y: BigInt::from(xy),
            yc,
            yc_bound: BigInt::from(&self.wsum * &cap),
            y_bound: cap,
        })
    }

    /// `Mult(L1(x), L2(y)) → L2(x·y)` (spec §3.3) with `Convert*`; `x·y ∈ [0, 1]` (bits).
    pub fn mult(&mut self, x: &PreparedInput, y: &L2Share) -> Result<L2Share> {
        self.mult_family(&x.x, &x.digits, y, 1)
    }

    /// `Mult` for values up to `m_rms` (`x·y ∈ [0, m_rms]`), spec Remark 4.9 / `M_RMS > 1`.
    pub fn mult_bounded(&mut self, x: &PreparedInput, y: &L2Share, m_rms: u64) -> Result<L2Share> {
        self.mult_family(&x.x, &x.digits, y, m_rms)
    }

    /// The load instruction `y ← x`: `Mult(L1(x), L2(1))`.
    pub fn load(&mut self, x: &PreparedInput) -> Result<L2Share> {
        let one = self.one();
        self.mult(x, &one)
    }

    /// Next pair of common random bits `(b0, b1)` from the shared PRF key and the nonce.
    pub fn common_bits(&mut self) -> (bool, bool) {
        let v = self.prf(b"randmult");
        (v & 1 == 1, v & 2 == 2)
    }

    fn prf(&mut self, label: &[u8]) -> u64 {
        let mut h = blake3::Hasher::new_keyed(&self.ek.prf_key);
        h.update(b"coterie/hss/prf/v1");
        h.update(&(label.len() as u64).to_le_bytes());
        h.update(label);
        h.update(&self.nonce.to_le_bytes());
        h.update(&self.counter.to_le_bytes());
        self.counter += 1;
        let mut out = [0u8; 8];
        h.finalize_xof().fill(&mut out);
        u64::from_le_bytes(out)
    }

    /// `RandMult` (spec §4.5): multiplies bits `x` (given as `L1(x)` with its complemented
    /// family and `L2(x)`) and `y` after XOR-masking both with public common random bits
    /// `b0, b1`, so each conversion's payload is 0 with probability 3/4, then undoes the masking
    /// linearly at level 2:
    /// `L2(xy) = (−1)^(b0+b1)·(L2(x'y') − b0·b1·L2(1) − b0·(−1)^b1·L2(y) − b1·(−1)^b0·L2(x))`.
    /// (The spec's per-digit form uses shares the level-2 encoding does not hold and `2^(i−1)`
    /// where base `B` needs `B^(i−1)`; by linearity the correction is applied after
    /// recombination, as here.)
    pub fn rand_mult(&mut self, x: &PreparedInput, lx: &L2Share, y: &L2Share) -> Result<L2Share> {
        let (b0, b1) = self.common_bits();
        self.rand_mult_with(x, lx, y, b0, b1)
    }

    /// [`Evaluator::rand_mult`] with explicit masking bits.
    pub fn rand_mult_with(
        &mut self,
        x: &PreparedInput,
        lx: &L2Share,
        y: &L2Share,
        b0: bool,
        b1: bool,
    ) -> Result<L2Share> {
        let one = self.one();
        let yp = if b1 { one.sub(y) } else { y.clone() };
        let prod = if b0 {
            let (cx, cd) = x.complement.as_ref().ok_or_else(|| {
                Error::InvalidParameter("RandMult needs the complemented input family".into())
            })?;
            self.mult_family(cx, cd, &yp, 1)?
        } else {
            self.mult_family(&x.x, &x.digits, &yp, 1)?
        };
        let mut r = prod;
        if b0 && b1 {
            r = r.sub(&one);
        }
        if b0 {
            r = if b1 { r.add(y) } else { r.sub(y) };
        }
        if b1 {
            r = if b0 { r.add(lx) } else { r.sub(lx) };
        }
        if b0 ^ b1 {
            r = r.scale(-1);
        }
        Ok(r)
    }

    /// A **terminal** multiplication (spec §4.8): only the `<x·y>` conversion, output share
    /// mod `beta` with the mod-β flag cancellation. Returns this server's share (difference
    /// convention, not yet masked).
    pub fn terminal_mult(&mut self, x: &PreparedInput, y: &L2Share, beta: u64) -> Result<i64> {
        let h = self.pair(&x.x, y)?;
        self.convert(&h, 1, Some(beta))
    }

    /// Large input (spec §4.8): the unconverted pairing `Pair(E(K), L2(F))`; the two servers'
    /// values satisfy `h_0 = h_1·g^(K·F)`, so a receiver of both learns `g^K` iff `F = 1`.
    pub fn pair_large(&self, x: &PreparedInput, f: &L2Share) -> Result<Elem> {
        self.pair(&x.x, f)
    }

    /// `Output`: `O_b = <y>_b + r mod β` with `r` from the common PRF (fresh per call and
    /// nonce). Reconstruction: `O_0 − O_1 mod β = y` (difference convention; for `β = 2` this is
    /// `O_0 ⊕ O_1`).
    pub fn output(&mut self, y: &L2Share, beta: &BigInt) -> Result<BigInt> {
        self.output_value(&y.y, beta)
    }

    /// `Output` of a bare additive share (e.g. a terminal multiplication's result).
    pub fn output_value(&mut self, share: &BigInt, beta: &BigInt) -> Result<BigInt> {
        if *beta <= 0 {
            return Err(Error::InvalidParameter("beta must be positive".into()));
        }
        let mut seed = [0u8; 32];
        let a = self.prf(b"output-mask-0");
        let b = self.prf(b"output-mask-1");
        seed[..8].copy_from_slice(&a.to_le_bytes());
        seed[8..16].copy_from_slice(&b.to_le_bytes());
        seed[16..24].copy_from_slice(&self.prf(b"output-mask-2").to_le_bytes());
        seed[24..].copy_from_slice(&self.prf(b"output-mask-3").to_le_bytes());
        let r = BigInt::from_digits(&seed, rug::integer::Order::Lsf);
        seed.zeroize();
        bigint::reduce(&BigInt::from(share + &r), beta)
            .map_err(|e| Error::InvalidParameter(e.to_string()))
    }

    /// The public key this evaluator works under.
    pub fn public_key(&self) -> &PublicKey {
        self.pk
    }
    /// This server's evaluation key.
    pub fn eval_key(&self) -> &EvalKey {
        self.ek
    }
}

/// Secret-key HSS (spec §1.1 Remark 2.2, §3.4): a client holding the secret key hands the two
/// servers `L2(x)` directly, `<x> = (x + r, r)`, `<x·c> = (x·c + r', r')` with integer masks `r`,
/// `r'` that statistically hide `x` and `x·c` (`stat_bits` of slack), so a load costs nothing.
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

/// Reconstructs `y` from the two servers' outputs: `O_0 − O_1 mod β`.
pub fn reconstruct(o0: &BigInt, o1: &BigInt, beta: &BigInt) -> Result<BigInt> {
    bigint::reduce(&BigInt::from(o0 - o1), beta).map_err(|e| Error::InvalidParameter(e.to_string()))
}

/// Serde for `Vec<BigInt>` with a length bound.
pub mod serde_vec_bigint {
    use coterie_math::bigint::BigInt;
    use serde::de::{SeqAccess, Visitor};
    use serde::ser::SerializeSeq;
    use serde::{Deserializer, Serializer};

    /// Largest accepted vector length.
    pub const MAX_LEN: usize = 1 << 14;

    #[derive(serde::Serialize, serde::Deserialize)]
    struct W(#[serde(with = "coterie_math::bigint::serde_bigint")] BigInt);

    /// Serializes the vector.
    pub fn serialize<S: Serializer>(v: &[BigInt], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(v.len()))?;
        for x in v {
            seq.serialize_element(&W(x.clone()))?;
        }
        seq.end()
    }

    /// Deserializes at most [`MAX_LEN`] elements.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<BigInt>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Vec<BigInt>;
            fn expecting(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result {
                f.write_str("a bounded sequence of big integers")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::with_capacity(a.size_hint().unwrap_or(0).min(64));
                while let Some(W(x)) = a.next_element()? {
                    if out.len() >= MAX_LEN {
                        return Err(serde::de::Error::custom("too many big integers"));
                    }
                    out.push(x);
                }
                Ok(out)
            }
        }
        d.deserialize_seq(V)
    }
}

/// Encodes a value with postcard (versioned types carry their own tag).
pub fn to_bytes<T: Serialize>(v: &T) -> Result<Vec<u8>> {
    postcard::to_allocvec(v).map_err(|e| Error::Malformed(e.to_string()))
}

/// Largest accepted encoding for [`from_bytes`] (64 MiB).
pub const MAX_DECODE_BYTES: usize = 64 << 20;

/// Decodes a postcard value after checking the input size bound.
pub fn from_bytes<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    if bytes.len() > MAX_DECODE_BYTES {
        return Err(Error::Malformed("encoding exceeds the size bound".into()));
    }
    postcard::from_bytes(bytes).map_err(|e| Error::Malformed(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn rng(seed: u64) -> rand_chacha::ChaCha20Rng {
        rand_chacha::ChaCha20Rng::seed_from_u64(seed)
    }

    #[test]
    fn table3_d_column() {
        for (eps, lb, d) in [
            (5, 2, 9),
            (10, 2, 14),
            (15, 2, 19),
            (5, 4, 11),
            (10, 4, 16),
            (15, 4, 21),
        ] {
            assert_eq!(Params::table3(eps, lb, 8).unwrap().d, d);
        }
        assert_eq!(Params::table3(5, 1, 8).unwrap().s(), 160);
        assert_eq!(Params::table3(5, 2, 8).unwrap().s(), 80);
        assert_eq!(Params::table3(5, 4, 8).unwrap().s(), 40);
    }

    #[test]
    fn elgamal_and_digits() {
        let mut r = rng(10);
        for lb in [1, 2, 4] {
            let params = Params::toy_insecure(lb, 16, 8);
            let (pk, _, _, sk) = keygen_trusted_dealer_insecure(&params, &mut r).unwrap();
            let g = Group::new(params.group);
            let c: BigInt = sk
                .digits
                .iter()
                .enumerate()
                .map(|(i, &d)| BigInt::from(d) << (lb * i as u32))
                .sum();
            assert_eq!(c, sk.c);
            assert_eq!(pk.h, g.g_pow(&sk.c));
            for (ct, &d) in pk.key_digits.iter().zip(&sk.digits) {
                assert_eq!(sk.decrypt_to_group(&g, ct).unwrap(), g.g_pow(&d.into()));
            }
            let enc = pk.encryptor().unwrap();
            for x in [0u32, 1] {
                let l1 = enc.encrypt(&pk, &x.into(), &mut r);
                assert_eq!(sk.decrypt_to_group(&g, &l1.x).unwrap(), g.g_pow(&x.into()));
                for (ct, &d) in l1.digits.iter().zip(&sk.digits) {
                    let want = g.g_pow(&BigInt::from(d * x as u64));
                    assert_eq!(sk.decrypt_to_group(&g, ct).unwrap(), want);
                }
            }
        }
    }

    #[test]
    fn pair_gives_level3_shares() {
        let mut r = rng(11);
        let params = Params::toy_insecure(2, 16, 8);
        let (pk, ek0, ek1, _) = keygen_trusted_dealer_insecure(&params, &mut r).unwrap();
        let g = Group::new(params.group);
        let enc = pk.encryptor().unwrap();
        let e0 = Evaluator::new(&pk, &ek0, 1).unwrap();
        let e1 = Evaluator::new(&pk, &ek1, 1).unwrap();
        for x in [0u32, 1] {
            let inp = PreparedInput::new(&pk, &enc.encrypt(&pk, &x.into(), &mut r), false).unwrap();
            // y = 1 via L2(1); y = 5 via scaling.
            for k in [1i64, 5] {
                let (y0, y1) = (e0.one().scale(k), e1.one().scale(k));
                let h0 = e0.pair(&inp.x, &y0).unwrap();
                let h1 = e1.pair(&inp.x, &y1).unwrap();
                assert_eq!(h0, g.mul(&h1, &g.g_pow(&BigInt::from(x as i64 * k))));
            }
        }
    }

    /// Both servers' evaluators on the same nonce.
    fn both<'a>(
        pk: &'a PublicKey,
        e: (&'a EvalKey, &'a EvalKey),
    ) -> (Evaluator<'a>, Evaluator<'a>) {
        (
            Evaluator::new(pk, e.0, 7).unwrap(),
            Evaluator::new(pk, e.1, 7).unwrap(),
        )
    }

    fn rec(a: &L2Share, b: &L2Share) -> (BigInt, BigInt) {
        (BigInt::from(&a.y - &b.y), BigInt::from(&a.yc - &b.yc))
    }

    #[test]
    fn mult_truth_tables_all_bases() {
        let mut r = rng(12);
        for lb in [1, 2, 4] {
            let params = Params::toy_insecure(lb, 16, 10);
            let (pk, ek0, ek1, sk) = keygen_trusted_dealer_insecure(&params, &mut r).unwrap();
            let enc = pk.encryptor().unwrap();
            for x in [0u32, 1] {
                for y in [0u32, 1] {
                    let ix = PreparedInput::new(&pk, &enc.encrypt(&pk, &x.into(), &mut r), true)
                        .unwrap();
                    let iy = PreparedInput::new(&pk, &enc.encrypt(&pk, &y.into(), &mut r), false)
                        .unwrap();
                    let (mut a, mut b) = both(&pk, (&ek0, &ek1));
                    let ly = (a.load(&iy).unwrap(), b.load(&iy).unwrap());
                    let lx = (a.load(&ix).unwrap(), b.load(&ix).unwrap());
                    let p = (a.mult(&ix, &ly.0).unwrap(), b.mult(&ix, &ly.1).unwrap());
                    let (v, vc) = rec(&p.0, &p.1);
                    if !(a.flagged() && b.flagged()) {
                        assert_eq!(v, x * y, "B=2^{lb}");
                        assert_eq!(vc, BigInt::from(x * y) * &sk.c);
                    }
                    for (b0, b1) in [(false, false), (false, true), (true, false), (true, true)] {
                        let q0 = a.rand_mult_with(&ix, &lx.0, &ly.0, b0, b1).unwrap();
                        let q1 = b.rand_mult_with(&ix, &lx.1, &ly.1, b0, b1).unwrap();
                        let (v, vc) = rec(&q0, &q1);
                        if !(a.flagged() && b.flagged()) {
                            assert_eq!(v, x * y, "RandMult b0={b0} b1={b1}");
                            assert_eq!(vc, BigInt::from(x * y) * &sk.c);
                        }
                    }
                    // terminal multiplication and outputs
                    let t0 = a.terminal_mult(&ix, &ly.0, 2).unwrap();
                    let t1 = b.terminal_mult(&ix, &ly.1, 2).unwrap();
                    let beta = BigInt::from(2);
                    let o0 = a.output_value(&t0.into(), &beta).unwrap();
                    let o1 = b.output_value(&t1.into(), &beta).unwrap();
                    if !(a.flagged() && b.flagged()) {
                        assert_eq!(reconstruct(&o0, &o1, &beta).unwrap(), x * y);
                    }
                }
            }
        }
    }

    #[test]
    fn outputs_mod_beta_and_fresh_masks() {
        let mut r = rng(13);
        let params = Params::toy_insecure(4, 16, 8);
        let (pk, ek0, ek1, _) = keygen_trusted_dealer_insecure(&params, &mut r).unwrap();
        for beta in [BigInt::from(2), BigInt::from(256), BigInt::from(1) << 64] {
            let (mut a, mut b) = both(&pk, (&ek0, &ek1));
            let y = (a.one().scale(3), b.one().scale(3));
            let o0 = a.output(&y.0, &beta).unwrap();
            let o1 = b.output(&y.1, &beta).unwrap();
            assert_eq!(
                reconstruct(&o0, &o1, &beta).unwrap(),
                BigInt::from(3) % &beta
            );
            let mut c = Evaluator::new(&pk, &ek0, 8).unwrap();
            let o0b = c.output(&y.0, &beta).unwrap();
            if beta > 2 {
                assert_ne!(o0, o0b, "masks must differ across nonces");
            }
        }
    }

    #[test]
    fn large_input_revealed_iff_f_is_one() {
        let mut r = rng(14);
        let params = Params::toy_insecure(4, 16, 8);
        let (pk, ek0, ek1, _) = keygen_trusted_dealer_insecure(&params, &mut r).unwrap();
        let g = Group::new(params.group);
        let enc = pk.encryptor().unwrap();
        let k = BigInt::from(0xdead_beef_u64);
        let ik = PreparedInput::new(&pk, &enc.encrypt(&pk, &k, &mut r), false).unwrap();
        let (a, b) = both(&pk, (&ek0, &ek1));
        for f in [0i64, 1] {
            let (f0, f1) = (a.one().scale(f), b.one().scale(f));
            let h0 = a.pair_large(&ik, &f0).unwrap();
            let h1 = b.pair_large(&ik, &f1).unwrap();
            let ratio = g.mul(&h0, &g.inv(&h1).unwrap());
            let want = if f == 1 { g.g_pow(&k) } else { g.one() };
            assert_eq!(ratio, want);
        }
    }

    #[test]
    fn serialization_round_trips_and_bounds() {
        let mut r = rng(15);
        let params = Params::toy_insecure(4, 16, 8);
        let (pk, ek0, _, _) = keygen_trusted_dealer_insecure(&params, &mut r).unwrap();
        let bytes = to_bytes(&pk).unwrap();
        let back: PublicKey = from_bytes(&bytes).unwrap();
        back.validate().unwrap();
        assert_eq!(back.h, pk.h);
        let enc = pk.encryptor().unwrap();
        let l1 = enc.encrypt(&pk, &BigInt::from(1), &mut r);
        let l1b: L1Input = from_bytes(&to_bytes(&l1).unwrap()).unwrap();
        l1b.validate(&pk).unwrap();
        let mut l1bad = l1b.clone();
        l1bad.digits.pop();
        assert!(l1bad.validate(&pk).is_err());
        let ekb: EvalKey = from_bytes(&to_bytes(&ek0).unwrap()).unwrap();
        assert_eq!(ekb.c_share, ek0.c_share);
        // Corrupt an element: must be an error, not a panic.
        let mut bad = back.clone();
        bad.h = Elem(vec![u64::MAX; 2]);
        assert!(bad.validate().is_err());
        let mut bad2 = back.clone();
        bad2.version = 99;
        assert!(bad2.validate().is_err());
        assert!(from_bytes::<PublicKey>(&bytes[..bytes.len() / 2]).is_err());
    }
}
