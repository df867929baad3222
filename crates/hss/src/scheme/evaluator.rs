//! One server's local evaluation (spec §3.3–§4.5, §4.8): level-2 shares with their public
//! bounds, `Pair`, `PairConv`, `Mult`, `RandMult`, terminal multiplications, large inputs and
//! outputs, and the reconstruction of outputs.

use std::io::Write;

use coterie_math::bigint::{self, BigInt};
use serde::{Deserialize, Serialize};
use zeroize::Zeroize;

use super::encrypt::{PreparedCt, PreparedInput};
use super::keys::{EvalKey, PublicKey};
use super::params::Params;
use crate::convert::{self, ConvertParams};
use crate::group::{Elem, Group};
use crate::{Error, Result};

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

/// Statistical slack of the output masks over `β` (see [`Evaluator::output_value`]).
const OUTPUT_MASK_SLACK_BITS: u32 = 128;

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

    /// `y` with both servers' shares `<y>_b` moved by the same pseudorandom offset `ρ < 2^(d+7)`
    /// from the common PRF (this nonce, this call): `<y>` and the ratio `h_0/h_1` of the pairings
    /// are unchanged, but the conversions start from fresh points. Without it the conversions
    /// are a deterministic function of the ciphertexts and the shares, so an evaluation that
    /// failed would fail again when re-run under a new nonce.
    fn shifted(&mut self, y: &L2Share) -> L2Share {
        let bits = (self.params.conv_bits() - 1).min(63);
        let rho = BigInt::from(self.prf(b"conversion-start") & ((1u64 << bits) - 1));
        L2Share {
            y: BigInt::from(&y.y + &rho),
            yc: y.yc.clone(),
            y_bound: &y.y_bound + (BigInt::from(1) << bits),
            yc_bound: y.yc_bound.clone(),
        }
    }

    fn mult_family(
        &mut self,
        x: &PreparedCt,
        digits: &[PreparedCt],
        y: &L2Share,
        m_rms: u64,
    ) -> Result<L2Share> {
        let y = &self.shifted(y);
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

    /// The load instruction `y ← x` for a bit or a value up to 1: `Mult(L1(x), L2(1))`.
    pub fn load(&mut self, x: &PreparedInput) -> Result<L2Share> {
        self.load_bounded(x, 1)
    }

    /// The load instruction `y ← x` for `x ∈ [0, m_rms]`: `Mult(L1(x), L2(1))` with the
    /// conversion's search bound `m_rms` (a larger `x` at a smaller bound converts wrongly
    /// without a flag).
    pub fn load_bounded(&mut self, x: &PreparedInput, m_rms: u64) -> Result<L2Share> {
        let one = self.one();
        self.mult_bounded(x, &one, m_rms)
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
        self.terminal_mult_bounded(x, y, beta, 1)
    }

    /// [`Self::terminal_mult`] for a product `x·y ∈ [0, m_rms]` (the conversion's search bound).
    pub fn terminal_mult_bounded(
        &mut self,
        x: &PreparedInput,
        y: &L2Share,
        beta: u64,
        m_rms: u64,
    ) -> Result<i64> {
        let y = &self.shifted(y);
        let h = self.pair(&x.x, y)?;
        self.convert(&h, m_rms, Some(beta))
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
    ///
    /// The mask `r` has `max(256, bits(β) + 128)` bits (rounded up to 64-bit words, each from one
    /// PRF call), so `r mod β` is within `2^−127` of uniform for every `β`, also beyond 2^256
    /// (e.g. large prime fields); the word count depends on the public `β` only, so both servers
    /// stay in step. For `β < 2^128` this is the original 256-bit mask.
    pub fn output_value(&mut self, share: &BigInt, beta: &BigInt) -> Result<BigInt> {
        if *beta <= 0 {
            return Err(Error::InvalidParameter("beta must be positive".into()));
        }
        let words = ((beta.significant_bits() + OUTPUT_MASK_SLACK_BITS) as usize)
            .div_ceil(64)
            .max(4);
        let mut limbs = Vec::with_capacity(words);
        for i in 0..words {
            // The label `output-mask-{i}` written on the stack (no allocation per word).
            let mut label = [0u8; 32];
            let len = {
                let mut w = &mut label[..];
                let _ = write!(w, "output-mask-{i}");
                32 - w.len()
            };
            limbs.push(self.prf(&label[..len]));
        }
        let mut r = bigint::from_le_limbs(&limbs);
        limbs.zeroize();
        let out = bigint::reduce(&BigInt::from(share + &r), beta)
            .map_err(|e| Error::InvalidParameter(e.to_string()));
        bigint::wipe(&mut r);
        out
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

/// Reconstructs `y` from the two servers' outputs: `O_0 − O_1 mod β`.
///
/// # Example
///
/// Both servers multiply `x = 1` (an encrypted input) by `y = 1` (level 2) and output the
/// product mod 2; the client reconstructs it from their two outputs.
///
/// ```
/// use coterie_hss::scheme::{Evaluator, Params, PreparedInput, insecure_keygen_trusted_dealer, reconstruct};
/// use coterie_math::bigint::BigInt;
/// use rand::SeedableRng;
/// let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(4); // insecure fixed seed
/// let params = Params::insecure_toy(4, 16, 10);
/// let (pk, ek0, ek1, _) = insecure_keygen_trusted_dealer(&params, &mut rng).unwrap();
/// let l1 = pk.encryptor().unwrap().encrypt(&pk, &BigInt::from(1), &mut rng);
/// let x = PreparedInput::new(&pk, &l1, false).unwrap();
/// let beta = BigInt::from(2);
/// let mut outs = Vec::new();
/// let mut flags = Vec::new();
/// for ek in [&ek0, &ek1] {
///     // Each server on its own, with the same evaluation nonce.
///     let mut ev = Evaluator::new(&pk, ek, 7).unwrap();
///     let one = ev.one();
///     let xy = ev.mult(&x, &one).unwrap();
///     outs.push(ev.output(&xy, &beta).unwrap());
///     flags.push(ev.flagged());
/// }
/// if !(flags[0] && flags[1]) {
///     assert_eq!(reconstruct(&outs[0], &outs[1], &beta).unwrap(), 1);
/// }
/// ```
pub fn reconstruct(o0: &BigInt, o1: &BigInt, beta: &BigInt) -> Result<BigInt> {
    bigint::reduce(&BigInt::from(o0 - o1), beta).map_err(|e| Error::InvalidParameter(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheme::{EvalKey, Params, PublicKey, insecure_keygen_trusted_dealer};
    use rand::SeedableRng;

    fn rng(seed: u64) -> rand_chacha::ChaCha20Rng {
        rand_chacha::ChaCha20Rng::seed_from_u64(seed)
    }

    #[test]
    fn pair_gives_level3_shares() {
        let mut r = rng(11);
        let params = Params::insecure_toy(2, 16, 8);
        let (pk, ek0, ek1, _) = insecure_keygen_trusted_dealer(&params, &mut r).unwrap();
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
            let params = Params::insecure_toy(lb, 16, 10);
            let (pk, ek0, ek1, sk) = insecure_keygen_trusted_dealer(&params, &mut r).unwrap();
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
        let params = Params::insecure_toy(4, 16, 8);
        let (pk, ek0, ek1, _) = insecure_keygen_trusted_dealer(&params, &mut r).unwrap();
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
    fn output_masks_cover_large_moduli() {
        let mut r = rng(16);
        let params = Params::insecure_toy(4, 16, 8);
        let (pk, ek0, ek1, _) = insecure_keygen_trusted_dealer(&params, &mut r).unwrap();
        let beta = BigInt::from(1) << 1024;
        let (mut a, mut b) = both(&pk, (&ek0, &ek1));
        let y = (a.one().scale(5), b.one().scale(5));
        let o0 = a.output(&y.0, &beta).unwrap();
        let o1 = b.output(&y.1, &beta).unwrap();
        assert_eq!(reconstruct(&o0, &o1, &beta).unwrap(), 5);
        // A 256-bit mask would leave the output below 2^258; a full-size one almost never does.
        assert!(o0.significant_bits() > 512, "output mask shorter than β");
        // The next output of the same evaluators still reconstructs (both stayed in step).
        let o0 = a.output(&y.0, &BigInt::from(7)).unwrap();
        let o1 = b.output(&y.1, &BigInt::from(7)).unwrap();
        assert_eq!(reconstruct(&o0, &o1, &BigInt::from(7)).unwrap(), 5);
    }

    #[test]
    fn large_input_revealed_iff_f_is_one() {
        let mut r = rng(14);
        let params = Params::insecure_toy(4, 16, 8);
        let (pk, ek0, ek1, _) = insecure_keygen_trusted_dealer(&params, &mut r).unwrap();
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
}
