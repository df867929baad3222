//! The slots of MatriGear's cyclotomic plaintext ring (seed 002 §3.2–§3.3): `Z_p[X]/(X^D − b)
//! ≅ Z_p^D`, `p = b^M + 1`, `M ≥ 2`.
//!
//! * [`Plaintext::encode_slots`] is `Pack` (the twisted slot NTT of
//!   [`coterie_math::zp_ntt::SlotEncoder`], then the small lift `[μ]_R` with `‖·‖_∞ ≤ b/2`);
//!   [`Plaintext::decode_slots`] is `Unpack`. Sums and products of plaintexts and ciphertexts act
//!   slot by slot.
//! * `φ: X ↦ X^{5^{M/2}}` rotates the slots left by one; `φ^r` is the Galois element
//!   `5^{r·M/2} mod 2N` ([`slot_rotation_element`]), the only automorphisms of `R` that fix
//!   `X^D − b`. [`SecretKey::slot_rotation_keys`] makes the keys, [`Ciphertext::rotate_slots`]
//!   applies them. Diagonal plaintexts (all slots equal, the polynomials in `X^D`) are fixed by
//!   `φ`.
//!
//! ```
//! use coterie_bfv::{Context, Params, Plaintext, SecretKey};
//! use coterie_math::bigint::BigInt;
//! use coterie_math::prg::Csprng;
//! // Toy-B of seed 002 §8: N = 32, M = 4, D = 8, b = 132, p = 132^4 + 1 (toy, insecure).
//! let ctx = Context::new(Params::insecure_toy_cyclotomic(32, 132, 4).unwrap()).unwrap();
//! let mut rng = Csprng::new();
//! let sk = SecretKey::generate(&ctx, &mut rng);
//! let (pk, rlk) = (sk.public_key(&mut rng), sk.relin_key(&mut rng));
//! let keys = sk.slot_rotation_keys(&[1], &mut rng).unwrap();
//! let m: Vec<BigInt> = (1..=8).map(BigInt::from).collect();
//! let ct = pk.encrypt(&Plaintext::encode_slots(&ctx, &m).unwrap(), &mut rng).unwrap();
//! let sq = ct.mul(&ct, &rlk).unwrap().rotate_slots(1, &keys).unwrap();
//! let want: Vec<BigInt> = [4, 9, 16, 25, 36, 49, 64, 1].into_iter().map(BigInt::from).collect();
//! assert_eq!(sk.decrypt(&sq).unwrap().decode_slots().unwrap(), want);
//! ```

use coterie_math::bigint::BigInt;

use crate::keys::GaloisKeys;
use crate::{Ciphertext, Context, Error, Plaintext, Result, SecretKey};

impl Plaintext {
    /// `Pack`: the plaintext whose `D` slots hold `values` (fewer values leave the last slots at
    /// zero), each in `[0, p)`.
    ///
    /// # Errors
    /// [`Error::Unsupported`] without slots ([`Context::slot_encoder`]); [`Error::Malformed`]
    /// for more than `D` values or a value outside `[0, p)`.
    pub fn encode_slots(ctx: &Context, values: &[BigInt]) -> Result<Self> {
        let enc = ctx.slot_encoder()?;
        let d = enc.slots();
        if values.len() > d {
            return Err(Error::Malformed(format!(
                "{} values for {d} slots",
                values.len()
            )));
        }
        if let Some(i) = values.iter().position(|v| *v < 0 || v >= enc.modulus()) {
            return Err(Error::Malformed(format!(
                "slot value {i} is outside [0, p) (p has {} bits)",
                enc.modulus().significant_bits()
            )));
        }
        let mut slots = values.to_vec();
        slots.resize(d, BigInt::new());
        enc.pack_in_place(&mut slots)?;
        Plaintext::from_representative(ctx, &slots)
    }

    /// `Unpack`: the `D` slot values in `[0, p)`.
    ///
    /// # Errors
    /// [`Error::Unsupported`] without slots ([`Context::slot_encoder`]).
    pub fn decode_slots(&self) -> Result<Vec<BigInt>> {
        let enc = self.ctx.slot_encoder()?;
        let mut rep = self.representative();
        enc.unpack_in_place(&mut rep)?;
        Ok(rep)
    }
}

/// The Galois element `5^{r·M/2} mod 2N` of `φ^r`, which rotates the slots left by `r` (right for
/// `r < 0`; `r` is taken mod `D`).
///
/// # Errors
/// [`Error::Unsupported`] without slots ([`Context::slot_encoder`]) and for `M = 1`, which has
/// no cyclic rotation (seed 002 §3.1: its `X ↦ X^5` rotates two rows of `N/2` slots).
///
/// ```
/// use coterie_bfv::{Context, Params, slots::slot_rotation_element};
/// let ctx = Context::new(Params::insecure_toy_cyclotomic(32, 132, 4).unwrap()).unwrap();
/// assert_eq!(slot_rotation_element(&ctx, 1).unwrap(), 25); // 5^(M/2) = 5^2
/// assert_eq!(slot_rotation_element(&ctx, 8).unwrap(), 1); // D rotations: the identity
/// assert_eq!(slot_rotation_element(&ctx, -1).unwrap(), slot_rotation_element(&ctx, 7).unwrap());
/// ```
pub fn slot_rotation_element(ctx: &Context, r: i64) -> Result<usize> {
    let enc = ctx.slot_encoder()?;
    if enc.m() == 1 {
        return Err(Error::Unsupported(
            "M = 1 (ordinary BFV with t = p) has no cyclic slot rotation (seed 002 §3.1)".into(),
        ));
    }
    let r = r.rem_euclid(enc.slots() as i64) as usize;
    Ok(enc.galois_element(r) as usize)
}

impl SecretKey {
    /// Galois keys for rotating the slots by each of `steps` (negative: right), one key per
    /// distinct Galois element (a rotation by a multiple of `D` needs none).
    ///
    /// # Errors
    /// [`Error::Unsupported`] without slots ([`Context::slot_encoder`]).
    pub fn slot_rotation_keys<R: rand::CryptoRng + ?Sized>(
        &self,
        steps: &[i64],
        rng: &mut R,
    ) -> Result<GaloisKeys> {
        let mut keys = GaloisKeys::default();
        for &r in steps {
            let g = slot_rotation_element(&self.ctx, r)?;
            if g != 1 && keys.get(g).is_none() {
                keys.insert(self.galois_key(g, rng)?);
            }
        }
        Ok(keys)
    }
}

impl Ciphertext {
    /// Rotates the slots left by `r` (right for `r < 0`): `φ^r` and a key switch back to `s`.
    ///
    /// # Errors
    /// [`Error::Unsupported`] without slots; [`Error::MissingKey`] when `keys` lacks the element
    /// of `r`; the errors of [`Ciphertext::apply_galois`].
    pub fn rotate_slots(&self, r: i64, keys: &GaloisKeys) -> Result<Ciphertext> {
        let g = slot_rotation_element(&self.ctx, r)?;
        self.apply_galois_element(g, keys, || format!("a slot rotation by {r}"))
    }
}
