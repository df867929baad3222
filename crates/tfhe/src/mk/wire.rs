//! Versioned, size-bounded encodings of AKÖ key material and protocol messages (the crate's
//! [`crate::serialization`] envelope: magic, format version, kind tag; kinds 20–26, torus tag 0
//! because the material mixes the 32- and 64-bit tori). Every decoder validates the structure
//! after decoding; [`max_message_bytes`] gives the bound to pass to
//! [`crate::serialization::from_bytes`] for the largest message of a parameter set.

use serde::{Deserialize, Serialize};
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::bootstrap::LweBootstrapKey;
use crate::ggsw::GgswCiphertext;
use crate::glwe::GlweSecretKey;
use crate::lwe::{LweKeyswitchKey, LweSecretKey};
use crate::mk::keygen::{
    BootstrapKeyShare, KeySwitchKeyShare, MkEvaluationKey, MkSecretKey, PublicKeyShare,
};
use crate::mk::params::{MAX_PARTIES, MkParams};
use crate::params::MAX_LWE_DIMENSION;
use crate::serialization::Versioned;
use crate::{Error, Result};

fn malformed<X>(m: &str) -> Result<X> {
    Err(Error::Malformed(m.into()))
}

fn check_poly_size(n: usize) -> Result<()> {
    if !n.is_power_of_two()
        || !(crate::fourier::MIN_POLY_SIZE..=crate::fourier::MAX_POLY_SIZE).contains(&n)
    {
        return malformed("polynomial size out of range");
    }
    Ok(())
}

fn check_ggsw_list(
    g: &[GgswCiphertext<u64>],
    n_big: usize,
    base_log: u32,
    levels: u32,
) -> Result<()> {
    for x in g {
        if x.k != 1
            || x.n != n_big
            || x.base_log != base_log
            || x.levels != levels
            || x.data.len() != 4 * levels as usize * n_big
        {
            return malformed("RGSW shape differs from the parameters");
        }
    }
    Ok(())
}

/// Upper bound on the encoded size of the largest key-generation message (a blind-rotate key
/// share) or of a `k`-party evaluation key, with postcard's worst case of 10 bytes per 64-bit
/// word and 5 per 32-bit word, plus slack.
pub fn max_message_bytes(params: &MkParams, k: usize) -> usize {
    let bk = params.bootstrap_key_bytes(k) as usize / 8 * 10;
    let ks = params.keyswitch_key_bytes(k) as usize / 4 * 5;
    bk + ks + (1 << 16)
}

impl Versioned for MkParams {
    const KIND: u8 = 20;
    const TORUS_BITS: u8 = 0;
    type Wire = MkParams;
    fn to_wire(&self) -> Self::Wire {
        self.clone()
    }
    fn from_wire(w: Self::Wire) -> Result<Self> {
        w.validate()
            .map_err(|e| Error::Malformed(format!("parameters: {e}")))?;
        Ok(w)
    }
}

impl Versioned for PublicKeyShare {
    const KIND: u8 = 21;
    const TORUS_BITS: u8 = 0;
    type Wire = PublicKeyShare;
    fn to_wire(&self) -> Self::Wire {
        self.clone()
    }
    fn from_wire(w: Self::Wire) -> Result<Self> {
        check_poly_size(w.body.len())?;
        Ok(w)
    }
}

impl Versioned for BootstrapKeyShare {
    const KIND: u8 = 22;
    const TORUS_BITS: u8 = 0;
    type Wire = BootstrapKeyShare;
    fn to_wire(&self) -> Self::Wire {
        self.clone()
    }
    fn from_wire(w: Self::Wire) -> Result<Self> {
        let Some(first) = w.ggsw.first() else {
            return malformed("empty blind-rotate key share");
        };
        if w.ggsw.len() > MAX_LWE_DIMENSION {
            return malformed("blind-rotate key share too long");
        }
        check_poly_size(first.n)?;
        if first.levels == 0 || first.base_log == 0 || first.base_log * first.levels > 64 {
            return malformed("decomposition does not fit 64 bits");
        }
        check_ggsw_list(&w.ggsw, first.n, first.base_log, first.levels)?;
        Ok(w)
    }
}

impl Versioned for KeySwitchKeyShare {
    const KIND: u8 = 23;
    const TORUS_BITS: u8 = 0;
    type Wire = (usize, <LweKeyswitchKey<u32> as Versioned>::Wire);
    fn to_wire(&self) -> Self::Wire {
        (self.party, self.ksk.to_wire())
    }
    fn from_wire(w: Self::Wire) -> Result<Self> {
        Ok(KeySwitchKeyShare {
            party: w.0,
            ksk: LweKeyswitchKey::from_wire(w.1)?,
        })
    }
}

impl Versioned for MkEvaluationKey {
    const KIND: u8 = 24;
    const TORUS_BITS: u8 = 0;
    type Wire = MkEvaluationKey;
    fn to_wire(&self) -> Self::Wire {
        self.clone()
    }
    fn from_wire(w: Self::Wire) -> Result<Self> {
        let p = &w.params;
        p.validate()
            .map_err(|e| Error::Malformed(format!("parameters: {e}")))?;
        let k = w.parties.len();
        if k == 0 || k > MAX_PARTIES || w.parties.windows(2).any(|x| x[0] >= x[1]) {
            return malformed("party list");
        }
        let kn = k * p.lwe_dimension;
        let b: &LweBootstrapKey<u64> = &w.bsk;
        if b.ggsw.len() != kn
            || b.k != 1
            || b.n != p.polynomial_size
            || b.base_log != p.pbs_base_log
            || b.levels != p.pbs_level
        {
            return malformed("blind-rotate key shape");
        }
        check_ggsw_list(&b.ggsw, b.n, b.base_log, b.levels)?;
        let s = &w.ksk;
        if s.input_dimension != p.polynomial_size
            || s.output_dimension != kn
            || s.base_log != p.ks_base_log
            || s.levels != p.ks_level
            || s.data.len() != p.polynomial_size * p.ks_level as usize * (kn + 1)
        {
            return malformed("key-switching key shape");
        }
        Ok(w)
    }
}

/// Serialized form of a [`MkSecretKey`] (secret; zeroized on drop).
#[derive(Serialize, Deserialize, Zeroize, ZeroizeOnDrop)]
pub struct MkSecretKeyWire {
    #[zeroize(skip)]
    params: MkParams,
    party: usize,
    lwe: Vec<u32>,
    glwe: Vec<u64>,
}

/// A party's secret key together with its parameters (what a party stores on disk).
#[derive(Clone, Debug)]
pub struct StoredSecretKey {
    /// The parameters.
    pub params: MkParams,
    /// The key.
    pub key: MkSecretKey,
}

impl Versioned for StoredSecretKey {
    const KIND: u8 = 25;
    const TORUS_BITS: u8 = 0;
    type Wire = MkSecretKeyWire;
    fn to_wire(&self) -> Self::Wire {
        MkSecretKeyWire {
            params: self.params.clone(),
            party: self.key.party(),
            lwe: self.key.lwe_key().as_slice().to_vec(),
            glwe: self.key.glwe_key().as_slice().to_vec(),
        }
    }
    fn from_wire(mut w: Self::Wire) -> Result<Self> {
        w.params
            .validate()
            .map_err(|e| Error::Malformed(format!("parameters: {e}")))?;
        let n_big = w.params.polynomial_size;
        if w.glwe.len() != n_big || w.party >= MAX_PARTIES {
            return malformed("secret key shape");
        }
        let lwe = LweSecretKey::from_container(core::mem::take(&mut w.lwe));
        let glwe = GlweSecretKey::from_container(1, n_big, core::mem::take(&mut w.glwe))?;
        let key = MkSecretKey::from_parts(&w.params, w.party, lwe, glwe)?;
        Ok(StoredSecretKey {
            params: w.params.clone(),
            key,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mk::keygen::{Crs, insecure_simulate_all_parties};
    use crate::public_key::ProductMethod;
    use crate::serialization::{from_bytes, to_bytes};
    use coterie_math::prg::Csprng;

    #[test]
    fn key_material_roundtrip_and_rejections() {
        let p = MkParams::insecure_toy(2);
        let mut rng = Csprng::insecure_from_seed_for_tests([20; 32]);
        let crs = Crs { seed: [20; 32] };
        let (sks, ek) =
            insecure_simulate_all_parties(&p, 2, &crs, ProductMethod::Exact, &mut rng).unwrap();
        let max = max_message_bytes(&p, 2);
        let bytes = to_bytes(&ek).unwrap();
        assert!(bytes.len() <= max);
        let back: MkEvaluationKey = from_bytes(&bytes, max).unwrap();
        assert_eq!(back, ek);
        assert!(from_bytes::<MkEvaluationKey>(&bytes, bytes.len() - 1).is_err());
        assert!(from_bytes::<MkEvaluationKey>(&bytes[..bytes.len() - 7], max).is_err());
        // A wrong-shape key is rejected after decoding.
        let mut bad = ek.clone();
        bad.parties = vec![1, 0];
        assert!(from_bytes::<MkEvaluationKey>(&to_bytes(&bad).unwrap(), max).is_err());
        let mut bad = ek.clone();
        bad.ksk.data.pop();
        assert!(from_bytes::<MkEvaluationKey>(&to_bytes(&bad).unwrap(), max).is_err());
        // Kind confusion is rejected.
        assert!(from_bytes::<MkParams>(&bytes, max).is_err());
        // Secret keys.
        let s = StoredSecretKey {
            params: p.clone(),
            key: sks[1].clone(),
        };
        let b = to_bytes(&s).unwrap();
        let t: StoredSecretKey = from_bytes(&b, 1 << 20).unwrap();
        assert_eq!(t.key.party(), 1);
        assert_eq!(t.key.lwe_key(), sks[1].lwe_key());
        let mut w = s.to_wire();
        w.lwe[0] = 5;
        assert!(StoredSecretKey::from_wire(w).is_err());
        // Random garbage never panics.
        for len in [0, 1, 10, 100] {
            let g: Vec<u8> = (0..len).map(|i| (i * 37 % 251) as u8).collect();
            assert!(from_bytes::<MkEvaluationKey>(&g, max).is_err());
            assert!(from_bytes::<BootstrapKeyShare>(&g, max).is_err());
        }
    }
}
