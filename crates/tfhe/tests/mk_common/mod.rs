//! Shared helpers of the multi-key tests: full key generation among `k` local parties.
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

/// Runs the static key generation of `k` parties locally (exact products unless `method` says
/// otherwise), recording the seed in the RNG.
pub fn setup(params: &MkParams, k: usize, seed: u8, method: ProductMethod) -> Setup {
    let mut rng = Csprng::from_seed_insecure_for_tests([seed; 32]);
    let crs = Crs {
        seed: [seed ^ 0x5a; 32],
    };
    let sks: Vec<_> = (0..k)
        .map(|q| MkSecretKey::generate(params, q, &mut rng).unwrap())
        .collect();
    let pks: Vec<_> = sks
        .iter()
        .map(|sk| public_key_share(params, &crs, sk, &mut rng).unwrap())
        .collect();
    let pk = combine_public_key(params, &crs, &pks).unwrap();
    let bsk: Vec<_> = sks
        .iter()
        .map(|sk| {
            bootstrap_key_share_with_method(params, &pk, sk, method, &mut rng, |_| {}).unwrap()
        })
        .collect();
    let ksk: Vec<_> = sks
        .iter()
        .map(|sk| keyswitch_key_share(params, sk, &mut rng).unwrap())
        .collect();
    let ek = combine_evaluation_key(params, &bsk, &ksk).unwrap();
    let server = MkServerKey::new(&ek).unwrap();
    Setup {
        params: params.clone(),
        sks,
        ek,
        server,
    }
}
