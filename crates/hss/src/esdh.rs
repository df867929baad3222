//! ESDH ciphertext compression for public-key HSS (spec §4.3, paper Sec. 4.2, Lemma 4.5).
//!
//! The secret key is a digit vector `c ∈ {0..B−1}^t`; the public key holds `k` vectors
//! `v_1..v_k ∈ [0, 2^s)^t` (expanded from a 32-byte seed) and `h_j = g^(v_j·c)`. A ciphertext of
//! `x` encrypts the `t + 1` values `(x, x·c_1, …, x·c_t)` in groups of `k` consecutive values
//! sharing ONE random coin `g^r`; value number `m` (position `j = m mod k` in its group) is
//! `h_j^r·g^(value)`. Level-2 values become `(<y>, (<c_i·y>)_{i≤t})`, and pairing a component
//! encrypted under `h_j` uses `<(v_j·c)·y> = Σ_i v_j[i]·<c_i·y>`, computed locally.
//!
//! Sizes (this crate's choice of the OPEN `t`, `k` of spec §4.3): `r = ⌈√s⌉`, `t = s + r`,
//! `⌈(t + 1)/k⌉ = r` groups with `k = ⌈(t + 1)/r⌉` — so a ciphertext has
//! `(t + 1) + r = s + 2⌈√s⌉ + 1` elements: **187** for `s = 160` (35,904 B) and **55** for
//! `s = 40` (10,560 B, the paper's "10.6 kB"), against `2(s + 1)` uncompressed.
//!
//! `Enc` does not know `c`: the public key contains the compressed encryption of
//! `(1, c_1, …, c_t)`, and `Enc(x)` raises it to `x` and rerandomizes each group's coin.
//! Compression cannot be combined with the leakage-absorbing pads (paper Sec. 5).

use coterie_math::bigint::{self, BigInt};
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::convert::{self, ConvertParams};
use crate::group::{Elem, FixedBase, Group};
use crate::scheme::Params;
use crate::{Error, Result};

/// Shape of the compressed scheme for base parameters `params`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EsdhParams {
    /// The underlying scheme parameters (`s`, `B`, `d`, `R`, group).
    pub params: Params,
    /// Key digits `t = s + ⌈√s⌉`.
    pub t: usize,
    /// Values per coin (= number of key vectors) `k`.
    pub k: usize,
    /// Number of coins `⌈(t + 1)/k⌉`.
    pub coins: usize,
    /// Bits of each component of the `v_j` (`s`).
    pub v_bits: u32,
}

impl EsdhParams {
    /// The shape for `params` (see the module docs).
    pub fn new(params: Params) -> Self {
        let s = params.s();
        let r = (s as f64).sqrt().ceil() as usize;
        let t = s + r;
        let k = (t + 1).div_ceil(r);
        Self {
            params,
            t,
            k,
            coins: (t + 1).div_ceil(k),
            v_bits: s as u32,
        }
    }
    /// Group elements per ciphertext, `(t + 1) + coins`.
    pub fn ciphertext_elems(&self) -> usize {
        self.t + 1 + self.coins
    }
    /// Public key group elements: `h_1..h_k` plus the compressed key encryption.
    pub fn public_key_elems(&self) -> usize {
        self.k + self.ciphertext_elems()
    }
}

/// A compressed ciphertext: one coin `g^r` per group, one element per value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EsdhCiphertext {
    /// `g^(r_G)` per group.
    pub coins: Vec<Elem>,
    /// `h_j^(r_G)·g^(value_m)`, `m = 0..=t`.
    pub values: Vec<Elem>,
}

// Stored and sent in the coterie envelope as `HSEc` (a compressed ciphertext).
coterie_base::versioned! {
    EsdhCiphertext => b"HSEc" v 1,
}

impl EsdhCiphertext {
    /// Serialized payload size in bytes (elements × element size).
    pub fn byte_len(&self, group: &Group) -> usize {
        (self.coins.len() + self.values.len()) * group.elem_bytes()
    }
}

/// The compressed public key.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EsdhPublicKey {
    /// Shape.
    pub shape: EsdhParams,
    /// Seed of the vectors `v_j`.
    pub v_seed: [u8; 32],
    /// `h_j = g^(v_j·c)`.
    pub h: Vec<Elem>,
    /// Compressed encryption of `(1, c_1, …, c_t)`.
    pub key_ct: EsdhCiphertext,
}

// Stored and sent in the coterie envelope as `HSEp` (a compressed-scheme public key).
coterie_base::versioned! {
    EsdhPublicKey => b"HSEp" v 1,
}

/// A server's key: integer shares of each digit `<c_i>` (difference convention).
#[derive(Clone, Serialize, Deserialize)]
pub struct EsdhEvalKey {
    /// Server index.
    pub party: u8,
    /// `<c_i>_b`.
    #[serde(with = "crate::scheme::serde_vec_bigint")]
    pub digit_shares: Vec<BigInt>,
}

// Stored and sent in the coterie envelope as `HSEe` (a compressed-scheme evaluation key).
coterie_base::versioned! {
    EsdhEvalKey => b"HSEe" v 1,
}

impl Drop for EsdhEvalKey {
    fn drop(&mut self) {
        for x in &mut self.digit_shares {
            coterie_math::bigint::wipe(x);
        }
    }
}

/// The secret digit vector (tests only).
pub struct EsdhSecretKey {
    /// `c ∈ {0..B−1}^t`.
    pub digits: Vec<u64>,
}

/// The vectors `v_j ∈ [0, 2^v_bits)^t`, expanded from the seed with BLAKE3.
pub fn expand_vectors(shape: &EsdhParams, seed: &[u8; 32]) -> Vec<Vec<BigInt>> {
    let bytes_per = shape.v_bits.div_ceil(8) as usize;
    (0..shape.k)
        .map(|j| {
            let mut h = blake3::Hasher::new_keyed(seed);
            h.update(b"coterie/hss/esdh/v/v1");
            h.update(&(j as u64).to_le_bytes());
            let mut rd = h.finalize_xof();
            (0..shape.t)
                .map(|_| {
                    let mut buf = vec![0u8; bytes_per];
                    rd.fill(&mut buf);
                    let x = BigInt::from_digits(&buf, rug::integer::Order::Lsf);
                    x.keep_bits(shape.v_bits)
                })
                .collect()
        })
        .collect()
}

fn dot(v: &[BigInt], c: &[u64]) -> BigInt {
    v.iter().zip(c).map(|(a, &b)| BigInt::from(a * b)).sum()
}

/// Trusted-dealer key generation for the compressed scheme (**insecure** against the dealer;
/// tests and benchmarks).
///
/// # Example
///
/// ```
/// use coterie_hss::esdh::{EsdhEvaluator, EsdhParams, insecure_keygen_trusted_dealer};
/// use coterie_hss::scheme::Params;
/// use coterie_math::bigint::BigInt;
/// use rand::SeedableRng;
/// let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(11); // insecure fixed seed
/// let shape = EsdhParams::new(Params::insecure_toy(4, 16, 10));
/// let (pk, ek0, ek1, _) = insecure_keygen_trusted_dealer(&shape, &mut rng).unwrap();
/// let ct = pk.encrypt(true, &mut rng);
/// assert_eq!(ct.coins.len() + ct.values.len(), shape.ciphertext_elems());
/// let (mut e0, mut e1) = (EsdhEvaluator::new(&pk, &ek0).unwrap(), EsdhEvaluator::new(&pk, &ek1).unwrap());
/// let (p0, p1) = (e0.prepare(&ct).unwrap(), e1.prepare(&ct).unwrap());
/// let (l0, l1) = (e0.mult(&p0, &e0.one()).unwrap(), e1.mult(&p1, &e1.one()).unwrap());
/// if !(e0.flagged() && e1.flagged()) {
///     assert_eq!(BigInt::from(&l0.y - &l1.y), 1); // L2(x) with x = 1
/// }
/// ```
pub fn insecure_keygen_trusted_dealer<R: Rng + ?Sized>(
    shape: &EsdhParams,
    rng: &mut R,
) -> Result<(EsdhPublicKey, EsdhEvalKey, EsdhEvalKey, EsdhSecretKey)> {
    let p = &shape.params;
    let group = Group::new(p.group);
    let b = p.base();
    let digits: Vec<u64> = (0..shape.t).map(|_| rng.next_u64() % b).collect();
    let mut v_seed = [0u8; 32];
    rng.fill_bytes(&mut v_seed);
    let vs = expand_vectors(shape, &v_seed);
    let keys: Vec<BigInt> = vs.iter().map(|v| dot(v, &digits)).collect();
    let h: Vec<Elem> = keys.iter().map(|k| group.g_pow(k)).collect();
    let mut vals = vec![BigInt::from(1)];
    vals.extend(digits.iter().map(|&d| BigInt::from(d)));
    let key_ct = encrypt_values(&group, shape, &h, &vals, rng);
    let mut d0 = vec![];
    let mut d1 = vec![];
    for &ci in &digits {
        let r = bigint::random_below(rng, &(BigInt::from(1) << (p.log_base + p.stat_bits)))
            .unwrap_or_default();
        d0.push(BigInt::from(&r + ci));
        d1.push(r);
    }
    let pk = EsdhPublicKey {
        shape: *shape,
        v_seed,
        h,
        key_ct,
    };
    let ek0 = EsdhEvalKey {
        party: 0,
        digit_shares: d0,
    };
    let ek1 = EsdhEvalKey {
        party: 1,
        digit_shares: d1,
    };
    Ok((pk, ek0, ek1, EsdhSecretKey { digits }))
}

fn encrypt_values<R: Rng + ?Sized>(
    group: &Group,
    shape: &EsdhParams,
    h: &[Elem],
    vals: &[BigInt],
    rng: &mut R,
) -> EsdhCiphertext {
    let mut coins = vec![];
    let mut values = vec![];
    for (gi, chunk) in vals.chunks(shape.k).enumerate() {
        let _ = gi;
        let r = group.random_exponent(rng);
        coins.push(group.g_pow(&r));
        for (j, v) in chunk.iter().enumerate() {
            values.push(group.mul(&group.pow(&h[j], &r), &group.g_pow(v)));
        }
    }
    EsdhCiphertext { coins, values }
}

impl EsdhPublicKey {
    /// `Enc(pk, x)` for a bit `x`: `key_ct^x` with every coin rerandomized.
    pub fn encrypt<R: Rng + ?Sized>(&self, x: bool, rng: &mut R) -> EsdhCiphertext {
        let group = Group::new(self.shape.params.group);
        let k = self.shape.k;
        let mut coins = vec![];
        let mut values = vec![];
        for (gi, coin) in self.key_ct.coins.iter().enumerate() {
            let rho = group.random_exponent(rng);
            let gr = group.g_pow(&rho);
            coins.push(if x { group.mul(coin, &gr) } else { gr });
            let lo = gi * k;
            let hi = (lo + k).min(self.key_ct.values.len());
            for (j, val) in self.key_ct.values[lo..hi].iter().enumerate() {
                let hr = group.pow(&self.h[j], &rho);
                values.push(if x { group.mul(val, &hr) } else { hr });
            }
        }
        EsdhCiphertext { coins, values }
    }

    /// Checks a decoded key: shape, counts, element validity (the version is the envelope's).
    pub fn validate(&self) -> Result<()> {
        let sh = EsdhParams::new(self.shape.params);
        if sh != self.shape {
            return Err(Error::Malformed("bad ESDH public key header".into()));
        }
        let group = Group::new(self.shape.params.group);
        if self.h.len() != sh.k
            || self.key_ct.coins.len() != sh.coins
            || self.key_ct.values.len() != sh.t + 1
        {
            return Err(Error::Malformed("wrong ESDH key sizes".into()));
        }
        for e in self
            .h
            .iter()
            .chain(&self.key_ct.coins)
            .chain(&self.key_ct.values)
        {
            group.validate(e)?;
        }
        Ok(())
    }
}

impl EsdhSecretKey {
    /// Decrypts value `m` of a ciphertext to `g^(value)` with key `v_j·c`.
    pub fn decrypt_value(&self, pk: &EsdhPublicKey, ct: &EsdhCiphertext, m: usize) -> Result<Elem> {
        let group = Group::new(pk.shape.params.group);
        let vs = expand_vectors(&pk.shape, &pk.v_seed);
        let (gi, j) = (m / pk.shape.k, m % pk.shape.k);
        let coin = ct
            .coins
            .get(gi)
            .ok_or_else(|| Error::Malformed("no such value".into()))?;
        let val = ct
            .values
            .get(m)
            .ok_or_else(|| Error::Malformed("no such value".into()))?;
        let key = dot(&vs[j], &self.digits);
        let mask = group.pow(coin, &key);
        Ok(group.mul(val, &group.inv(&mask)?))
    }
}

/// A compressed level-2 value `(<y>, (<c_i·y>)_{i≤t})` with public bounds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EsdhL2Share {
    /// `<y>_b`.
    #[serde(with = "coterie_math::bigint::serde_bigint")]
    pub y: BigInt,
    /// `<c_i·y>_b`.
    #[serde(with = "crate::scheme::serde_vec_bigint")]
    pub cy: Vec<BigInt>,
    /// Public bound on `|<y>_b|`.
    pub y_bits: u32,
    /// Public bound on `|<c_i·y>_b|`.
    pub cy_bits: u32,
}

/// A compressed input prepared for pairing (fixed-base tables per coin and per value).
pub struct EsdhPrepared {
    coins: Vec<FixedBase>,
    values: Vec<FixedBase>,
}

/// One server's evaluator for the compressed scheme.
pub struct EsdhEvaluator<'a> {
    group: Group,
    pk: &'a EsdhPublicKey,
    ek: &'a EsdhEvalKey,
    vs: Vec<Vec<BigInt>>,
    flagged: bool,
}

impl<'a> EsdhEvaluator<'a> {
    /// An evaluator for server `ek.party`.
    pub fn new(pk: &'a EsdhPublicKey, ek: &'a EsdhEvalKey) -> Result<Self> {
        if ek.digit_shares.len() != pk.shape.t || ek.party > 1 {
            return Err(Error::InvalidParameter("ESDH key does not match".into()));
        }
        Ok(Self {
            group: Group::new(pk.shape.params.group),
            vs: expand_vectors(&pk.shape, &pk.v_seed),
            pk,
            ek,
            flagged: false,
        })
    }

    /// `γ_b`.
    pub fn flagged(&self) -> bool {
        self.flagged
    }

    /// `L2(1) = (<1>, (<c_i>)_i)`.
    pub fn one(&self) -> EsdhL2Share {
        let p = &self.pk.shape.params;
        EsdhL2Share {
            y: BigInt::from(u8::from(self.ek.party == 0)),
            cy: self.ek.digit_shares.clone(),
            y_bits: 1,
            cy_bits: p.log_base + p.stat_bits + 1,
        }
    }

    fn a_bits(&self) -> u32 {
        let p = &self.pk.shape.params;
        let t_bits = 64 - (self.pk.shape.t as u64).leading_zeros();
        self.pk.shape.v_bits + t_bits + (p.log_base + p.stat_bits + 1).max(p.conv_bits()) + 4
    }

    /// Pairing tables for a ciphertext.
    pub fn prepare(&self, ct: &EsdhCiphertext) -> Result<EsdhPrepared> {
        let sh = &self.pk.shape;
        if ct.coins.len() != sh.coins || ct.values.len() != sh.t + 1 {
            return Err(Error::Malformed("wrong ESDH ciphertext size".into()));
        }
        let p = &sh.params;
        let a_bits = self.a_bits();
        let c_bits = p.c_table_bits();
        Ok(EsdhPrepared {
            coins: ct
                .coins
                .iter()
                .map(|c| FixedBase::new(&self.group, c, p.window, a_bits))
                .collect::<Result<_>>()?,
            values: ct
                .values
                .iter()
                .map(|c| FixedBase::new(&self.group, c, p.window, c_bits))
                .collect::<Result<_>>()?,
        })
    }

    /// `Pair` of value `m` with `L2(y)`: `C_m^(y_b + K)·coin^(K' − Σ_i v_j[i]·<c_i·y>_b)`.
    pub fn pair(&self, ct: &EsdhPrepared, m: usize, y: &EsdhL2Share) -> Result<Elem> {
        let sh = &self.pk.shape;
        let (gi, j) = (m / sh.k, m % sh.k);
        let vcy: BigInt = self.vs[j]
            .iter()
            .zip(&y.cy)
            .map(|(a, b)| BigInt::from(a * b))
            .sum();
        let kb = sh.v_bits + 64 - (sh.t as u64).leading_zeros() + y.cy_bits;
        let ey = &y.y + (BigInt::from(1) << y.y_bits);
        let eyc = (BigInt::from(1) << kb) - vcy;
        if ey.is_negative() || eyc.is_negative() {
            return Err(Error::Program("share exceeds its public bound".into()));
        }
        let g = &self.group;
        let mut acc = g.one().0;
        let mut tmp = vec![0; g.limbs()];
        let mut s = g.scratch();
        ct.values[m].mul_pow_into(g, &mut acc, &ey, &mut tmp, &mut s)?;
        ct.coins[gi].mul_pow_into(g, &mut acc, &eyc, &mut tmp, &mut s)?;
        Ok(Elem(acc))
    }

    fn conv(&mut self, h: &Elem, m: u64) -> Result<i64> {
        let p = &self.pk.shape.params;
        let r = convert::convert(
            &self.group,
            self.ek.party,
            h,
            &ConvertParams::new(p.d, m),
            p.engine,
        )?;
        self.flagged |= r.flag;
        Ok(r.share)
    }

    /// `Mult(ct(x), L2(y)) → L2(x·y)` for bits: `t + 1` conversions, no recombination.
    pub fn mult(&mut self, ct: &EsdhPrepared, y: &EsdhL2Share) -> Result<EsdhL2Share> {
        let sh = self.pk.shape;
        let h0 = self.pair(ct, 0, y)?;
        let xy = self.conv(&h0, 1)?;
        let mut cy = Vec::with_capacity(sh.t);
        for m in 1..=sh.t {
            let h = self.pair(ct, m, y)?;
            cy.push(BigInt::from(self.conv(&h, sh.params.base() - 1)?));
        }
        Ok(EsdhL2Share {
            y: BigInt::from(xy),
            cy,
            y_bits: sh.params.conv_bits(),
            cy_bits: sh.params.conv_bits(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::group::GroupId;
    use rand::SeedableRng;

    #[test]
    fn sizes_match_the_spec() {
        let p160 = Params::table3(5, 1, 8).unwrap();
        let sh = EsdhParams::new(p160);
        assert_eq!(p160.s(), 160);
        assert_eq!(sh.ciphertext_elems(), 187);
        assert_eq!(sh.ciphertext_elems() * 192, 35_904);
        let p40 = Params::table3(5, 4, 8).unwrap();
        let sh = EsdhParams::new(p40);
        assert_eq!(sh.ciphertext_elems(), 55);
        assert_eq!(sh.ciphertext_elems() * 192, 10_560);
        // uncompressed 2(s + 1) for comparison
        assert!(2 * (p40.s() + 1) > 55);
    }

    #[test]
    fn compressed_round_trip_decrypt_and_mult() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(40);
        // s = 40 digits of base 16 (toy group, insecure): 55-element ciphertexts.
        let mut params = Params::insecure_toy(4, 160, 10);
        params.group = GroupId::InsecureToy128;
        let shape = EsdhParams::new(params);
        assert_eq!(shape.ciphertext_elems(), 55);
        let (pk, ek0, ek1, sk) = insecure_keygen_trusted_dealer(&shape, &mut rng).unwrap();
        pk.validate().unwrap();
        let g = Group::new(params.group);
        for x in [false, true] {
            let ct = pk.encrypt(x, &mut rng);
            assert_eq!(ct.coins.len() + ct.values.len(), 55);
            assert_eq!(ct.byte_len(&g), 55 * 16);
            // every component decrypts under v_j·c
            for m in 0..=shape.t {
                let want = if m == 0 {
                    u64::from(x)
                } else {
                    u64::from(x) * sk.digits[m - 1]
                };
                assert_eq!(
                    sk.decrypt_value(&pk, &ct, m).unwrap(),
                    g.g_pow(&want.into())
                );
            }
            let mut e0 = EsdhEvaluator::new(&pk, &ek0).unwrap();
            let mut e1 = EsdhEvaluator::new(&pk, &ek1).unwrap();
            let p0 = e0.prepare(&ct).unwrap();
            let p1 = e1.prepare(&ct).unwrap();
            // Pair gives {x·y} for y = 1.
            let h0 = e0.pair(&p0, 0, &e0.one()).unwrap();
            let h1 = e1.pair(&p1, 0, &e1.one()).unwrap();
            assert_eq!(h0, g.mul(&h1, &g.g_pow(&u64::from(x).into())));
            // Mult by 1 then by x again: L2(x), L2(x·x).
            let l0 = e0.mult(&p0, &e0.one()).unwrap();
            let l1 = e1.mult(&p1, &e1.one()).unwrap();
            let m0 = e0.mult(&p0, &l0).unwrap();
            let m1 = e1.mult(&p1, &l1).unwrap();
            if e0.flagged() && e1.flagged() {
                continue;
            }
            for (a, b) in [(&l0, &l1), (&m0, &m1)] {
                assert_eq!(BigInt::from(&a.y - &b.y), u64::from(x));
                for (i, (u, v)) in a.cy.iter().zip(&b.cy).enumerate() {
                    assert_eq!(BigInt::from(u - v), u64::from(x) * sk.digits[i]);
                }
            }
        }
        // serialization round trip, bounded decode
        let bytes = crate::scheme::to_bytes(&pk).unwrap();
        let back: EsdhPublicKey = crate::scheme::from_bytes(&bytes).unwrap();
        back.validate().unwrap();
        let mut bad = back.clone();
        bad.h.pop();
        assert!(bad.validate().is_err());
    }
}
