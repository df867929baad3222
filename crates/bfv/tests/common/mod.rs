//! Helpers shared by the multi-key BFV and re-encryption tests.
#![allow(dead_code)]

use coterie_bfv::encrypt::decrypt_multi_key;
use coterie_bfv::mk::{self, MkCrs, MkRelinKey};
use coterie_bfv::{Ciphertext, Context, Decomposition, Params, Plaintext, PublicKey, SecretKey};
use coterie_math::prg::Csprng;
use rand::Rng;

/// A deterministic test RNG.
pub fn rng(tag: u8) -> Csprng {
    Csprng::insecure_from_seed_for_tests([tag; 32])
}

/// Insecure toy parameters of degree `n` with `t = 256`.
pub fn toy(n: usize) -> Context {
    Context::new(Params::insecure_toy(n, 256).unwrap()).unwrap()
}

/// The negacyclic product of two coefficient vectors mod `t` (the reference for products).
pub fn negacyclic(a: &[u64], b: &[u64], t: u64) -> Vec<u64> {
    let n = a.len();
    let mut pos = vec![0u64; n];
    let mut neg = vec![0u64; n];
    for (i, &x) in a.iter().enumerate() {
        if x == 0 {
            continue;
        }
        let (lo, hi) = b.split_at(n - i);
        for (k, &y) in lo.iter().enumerate() {
            pos[i + k] += x * y;
        }
        for (k, &y) in hi.iter().enumerate() {
            neg[k] += x * y;
        }
    }
    pos.iter()
        .zip(&neg)
        .map(|(p, q)| (p % t + t - q % t) % t)
        .collect()
}

/// The coefficient-wise sum mod `t`.
pub fn add_pt(a: &[u64], b: &[u64], t: u64) -> Vec<u64> {
    a.iter().zip(b).map(|(x, y)| (x + y) % t).collect()
}

/// Every truncation, extension, tag/version change, other parameter set and byte flip of `good`
/// is an error or (for flips inside polynomial data) another valid value, never a panic.
pub fn malformed(
    ctx: &Context,
    other: &Context,
    good: &[u8],
    parse: impl Fn(&Context, &[u8]) -> coterie_bfv::Result<()>,
) {
    assert!(parse(ctx, good).is_ok());
    assert!(parse(other, good).is_err(), "another parameter set");
    for cut in [0, 1, 13, 14, 50, good.len() / 2, good.len() - 1] {
        assert!(parse(ctx, &good[..cut]).is_err(), "truncated to {cut}");
    }
    let mut longer = good.to_vec();
    longer.push(0);
    assert!(parse(ctx, &longer).is_err(), "trailing byte");
    for pos in [0usize, 4, 8, 9] {
        let mut b = good.to_vec();
        b[pos] ^= 0x5a;
        assert!(parse(ctx, &b).is_err(), "header byte {pos} flipped");
    }
    // Flips everywhere else: no panic (the result may be Ok for a flip inside a polynomial).
    let mut r = rng(99);
    for _ in 0..200 {
        let mut b = good.to_vec();
        let pos = (r.next_u64() % b.len() as u64) as usize;
        b[pos] ^= 1 << (r.next_u64() % 8);
        let _ = parse(ctx, &b);
    }
    assert!(parse(ctx, &[0xff; 64]).is_err());
}

/// Multi-key users: ids, secret, public and relinearization keys over one CRS.
pub struct Users {
    /// The context.
    pub ctx: Context,
    /// The users' ids.
    pub ids: Vec<u64>,
    /// Secret keys.
    pub sks: Vec<SecretKey>,
    /// Public keys.
    pub pks: Vec<PublicKey>,
    /// Relinearization keys over the CRS of `crs_seed`.
    pub rlks: Vec<MkRelinKey>,
}

impl Users {
    /// Keys for the users `ids` over the CRS of `crs_seed` with gadget `dec`.
    pub fn new(
        ctx: &Context,
        ids: &[u64],
        dec: Decomposition,
        crs_seed: u8,
        r: &mut Csprng,
    ) -> Users {
        let crs = MkCrs::new(ctx, &[crs_seed; 32], dec).unwrap();
        let sks: Vec<SecretKey> = ids.iter().map(|_| SecretKey::generate(ctx, r)).collect();
        let pks = sks.iter().map(|s| s.public_key(r)).collect();
        let rlks = sks
            .iter()
            .zip(ids)
            .map(|(s, &id)| MkRelinKey::generate(s, id, &crs, r).unwrap())
            .collect();
        Users {
            ctx: ctx.clone(),
            ids: ids.to_vec(),
            sks,
            pks,
            rlks,
        }
    }

    /// `(id, key)` pairs for decryption with all keys.
    pub fn keys(&self) -> Vec<(u64, &SecretKey)> {
        self.ids.iter().copied().zip(self.sks.iter()).collect()
    }

    /// User `user`'s encryption of the coefficients `m`.
    pub fn enc(&self, user: usize, m: &[u64], r: &mut Csprng) -> Ciphertext {
        let pt = Plaintext::encode_coefficients(&self.ctx, m).unwrap();
        mk::encrypt(&self.pks[user], self.ids[user], &pt, r).unwrap()
    }

    /// Decryption with all keys, as coefficients.
    pub fn dec(&self, ct: &Ciphertext) -> Vec<u64> {
        decrypt_multi_key(ct, &self.keys())
            .unwrap()
            .coefficients()
            .unwrap()
            .to_vec()
    }
}
