//! Shared helpers of the multi-key tests.
#![allow(dead_code)]

use coterie_math::prg::Csprng;
use coterie_tfhe::lwe::LweCiphertext;
use coterie_tfhe::mk::eval::{MkServerKey, embed};
use coterie_tfhe::mk::keygen::*;
use coterie_tfhe::mk::params::MkParams;
use coterie_tfhe::public_key::ProductMethod;

/// All parties' secrets and the evaluator key.
pub struct Setup {
    pub params: MkParams,
    pub sks: Vec<MkSecretKey>,
    pub ek: MkEvaluationKey,
    pub server: MkServerKey,
}

impl Setup {
    pub fn keys(&self) -> Vec<&MkSecretKey> {
        self.sks.iter().collect()
    }

    /// Party `slot` encrypts `bit`, embedded in dimension `k·n`.
    pub fn encrypt(&self, slot: usize, bit: bool, rng: &mut Csprng) -> LweCiphertext<u32> {
        let c = self.sks[slot]
            .encrypt_bool_local(&self.params, bit, rng)
            .unwrap();
        embed(&c, slot, self.sks.len()).unwrap()
    }
}

/// Static key generation of `k` parties in one process (seeded: the seed is the test's record).
pub fn setup(params: &MkParams, k: usize, seed: u8, method: ProductMethod) -> Setup {
    let mut rng = Csprng::insecure_from_seed_for_tests([seed; 32]);
    let crs = Crs {
        seed: [seed ^ 0x5a; 32],
    };
    let (sks, ek) = insecure_simulate_all_parties(params, k, &crs, method, &mut rng).unwrap();
    let server = MkServerKey::new(&ek).unwrap();
    Setup {
        params: params.clone(),
        sks,
        ek,
        server,
    }
}
