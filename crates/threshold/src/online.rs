//! The online phase (seed 000 §6, §7): LTRand_{l,k}, Mod_{l,k}, ModLTZ_t and Π_Decrypt for a
//! batch of values or ciphertexts in shared rounds.
//!
//! Schedule: **strict**. Every opening is followed by the engine's MAC check before anything
//! depends on the opened value (table selection, the next opening, the output): 3 openings and
//! 3 checks per Π_Decrypt batch. Every opening of a `j`-bit value uses the truncated opening
//! (only the low `j` bits are revealed; seed 000 §9.2), and the final `k`-bit opening masks the
//! bits above `k` of the share ring. The MAC check here is coterie-spdz's batched check (4
//! rounds), so this schedule takes 15 rounds; [`crate::pipelined`] has the 9-round strict
//! schedule with per-value SingleChecks and the pipelined 5-round schedule.

use coterie_net::Mesh;
use coterie_spdz::{Engine, Preprocessing, Ring, Z2k};

use crate::ciphertext::LweCiphertext;
use crate::gates::{GateBundle, GatePool, Sh, ShareOps, Tables};
use crate::keys::SharedKey;
use crate::linmaps::LinOps;
use crate::params::{LtParams, Params};
use crate::{Error, Result};
use zeroize::Zeroize;

/// Output of LTRand for one input.
#[derive(Debug)]
pub struct LtRandOut {
    /// The public `z' = (z + r) mod 2^l`, uniform.
    pub z_open: u128,
    /// `[r]_k`, exact, zero above bit `l`.
    pub r: Sh,
    /// `[u]`, `u = (z' < r)`, an exact bit.
    pub u: Sh,
    /// The public `y' = (y + rM) mod 2^{d+1}` (uniform; exposed for tests and audits).
    pub y_open: u128,
}

fn check_count<T: Tables + ?Sized>(n: usize, gates: &T) -> Result<()> {
    if gates.count() != n {
        return Err(Error::Gate(format!(
            "{} inputs but {} gate bundles",
            n,
            gates.count()
        )));
    }
    if gates.any_downcast() {
        return Err(Error::Gate(
            "down-cast (stored) bundles need a per-value-check schedule (crate::pipelined)".into(),
        ));
    }
    Ok(())
}

fn check_bundles(lt: &LtParams, n: usize, gates: &[GateBundle]) -> Result<()> {
    check_count(n, gates)?;
    gates.iter().try_for_each(|g| g.check_shape(lt))
}

/// Bundle `j`'s composed mask `[r]_k = Σ_i B^i [r_i]_k` (`B = 2^b`) from its Sign gates' masks.
pub(crate) fn composed_mask<P: Preprocessing<Z2k>, T: Tables + ?Sized>(
    eng: &Engine<Z2k, P>,
    lt: &LtParams,
    gates: &T,
    j: usize,
) -> Result<Sh> {
    let ops = ShareOps(*eng.ring());
    gates.with_bundle(j, |g| {
        let mut acc = ops.zero();
        for i in 0..lt.d() as usize {
            let m = g.mask(i)?;
            acc = ops.add(&acc, &eng.mul_const(&m, &(1u128 << (lt.b as usize * i))));
        }
        Ok(acc)
    })
}

/// How many bundles ahead of its use a batch loop asks the CPU to fetch the table words it will
/// read (the reads of one bundle are a few scattered cache lines in 43 KB: without the hint every
/// one is a cache miss the loop waits for).
pub(crate) const PREFETCH_AHEAD: usize = 8;

/// A hint that bundle `j`'s Sign-gate masks are read soon ([`composed_mask`]); nothing for `j`
/// past the end.
pub(crate) fn prefetch_masks<T: Tables + ?Sized>(lt: &LtParams, gates: &T, j: usize) {
    if j < gates.count() {
        let _ = gates.with_bundle(j, |g| {
            (0..lt.d() as usize).for_each(|i| g.prefetch_mask(i));
            Ok(())
        });
    }
}

/// A hint that [`select_y`] reads bundle `j` with the opened `z_open` soon.
pub(crate) fn prefetch_y<T: Tables + ?Sized>(lt: &LtParams, gates: &T, j: usize, z_open: u128) {
    if j < gates.count() {
        let _ = gates.with_bundle(j, |g| {
            g.prefetch_mask(lt.d() as usize);
            for (i, x) in lt.digits_iter(z_open).enumerate() {
                g.prefetch_entry(i, x);
            }
            Ok(())
        });
    }
}

/// A hint that [`select_u`] reads bundle `j` with the opened `y_open` soon.
pub(crate) fn prefetch_u<T: Tables + ?Sized>(lt: &LtParams, gates: &T, j: usize, y_open: usize) {
    if j < gates.count() {
        let _ = gates.with_bundle(j, |g| {
            g.prefetch_entry(lt.d() as usize, y_open);
            Ok(())
        });
    }
}

/// LTRand steps 2–4 for bundle `j`: `[y + rM] = [rM] + Σ_i 2^i [F_i(x_i)]`, the Sign entries
/// selected by the digits `x_i` of the opened `z'`.
pub(crate) fn select_y<P: Preprocessing<Z2k>, T: Tables + ?Sized>(
    eng: &Engine<Z2k, P>,
    lt: &LtParams,
    gates: &T,
    j: usize,
    z_open: u128,
) -> Result<Sh> {
    let ops = ShareOps(*eng.ring());
    let d = lt.d() as usize;
    gates.with_bundle(j, |g| {
        let mut y = g.mask(d)?;
        for (i, x) in lt.digits_iter(z_open).enumerate() {
            let e = g.entry(i, x)?;
            y = ops.add(&y, &eng.mul_const(&e, &(1u128 << i)));
        }
        Ok(y)
    })
}

/// LTRand step 6 for bundle `j`: the ModLTZ entry `[u]` selected by the opened `y'`.
pub(crate) fn select_u<T: Tables + ?Sized>(
    lt: &LtParams,
    gates: &T,
    j: usize,
    y_open: usize,
) -> Result<Sh> {
    gates.with_bundle(j, |g| g.entry(lt.d() as usize, y_open))
}

/// LTRand_{l,k} (Procedure 3) for a batch: one truncated `l`-bit opening of `z + r` and one
/// truncated `(d+1)`-bit opening of `y + rM` for the whole batch, each MAC-checked before use.
/// Consumes one gate bundle per input.
pub async fn ltrand<P: Preprocessing<Z2k>, M: Mesh>(
    eng: &mut Engine<Z2k, P>,
    mesh: &mut M,
    lt: &LtParams,
    zs: &[Sh],
    gates: Vec<GateBundle>,
) -> Result<Vec<LtRandOut>> {
    check_bundles(lt, zs.len(), &gates)?;
    ltrand_with(eng, mesh, lt, zs, gates.as_slice()).await
}

async fn ltrand_with<P: Preprocessing<Z2k>, M: Mesh, T: Tables + ?Sized>(
    eng: &mut Engine<Z2k, P>,
    mesh: &mut M,
    lt: &LtParams,
    zs: &[Sh],
    gates: &T,
) -> Result<Vec<LtRandOut>> {
    check_count(zs.len(), gates)?;
    if lt.k > eng.ring().k() {
        return Err(Error::Params(
            "LTRand parameters exceed the engine ring".into(),
        ));
    }
    let ops = ShareOps(*eng.ring());
    let rs = (0..zs.len())
        .map(|j| composed_mask(eng, lt, gates, j))
        .collect::<Result<Vec<_>>>()?;
    // 1. z' = Open_l([z] + [r])
    let masked: Vec<Sh> = zs.iter().zip(&rs).map(|(z, r)| ops.add(z, r)).collect();
    let z_open = eng.open_truncated(mesh, &masked, lt.l).await?;
    eng.check(mesh).await?;
    // 2.-4. select the Sign entries and form y = Σ 2^i y_i; 5. y' = Open_{d+1}(y + rM)
    let t = lt.d() + 1;
    let ys = z_open
        .iter()
        .enumerate()
        .map(|(j, &zo)| select_y(eng, lt, gates, j, zo))
        .collect::<Result<Vec<_>>>()?;
    let y_open = eng.open_truncated(mesh, &ys, t).await?;
    eng.check(mesh).await?;
    let mut out = Vec::with_capacity(zs.len());
    for (j, (r, (&zo, &yo))) in rs.into_iter().zip(z_open.iter().zip(&y_open)).enumerate() {
        let u = select_u(lt, gates, j, yo as usize)?;
        out.push(LtRandOut {
            z_open: zo,
            r,
            u,
            y_open: yo,
        });
    }
    Ok(out)
}

/// Mod_{l,k} (Procedure 1) for a batch: `[z mod 2^l]_k` with full `k`-bit precision
/// (`e = z' - r + 2^l·u`).
pub async fn mod_lk<P: Preprocessing<Z2k>, M: Mesh>(
    eng: &mut Engine<Z2k, P>,
    mesh: &mut M,
    lt: &LtParams,
    zs: &[Sh],
    gates: Vec<GateBundle>,
) -> Result<Vec<Sh>> {
    check_bundles(lt, zs.len(), &gates)?;
    mod_lk_with(eng, mesh, lt, zs, gates.as_slice()).await
}

async fn mod_lk_with<P: Preprocessing<Z2k>, M: Mesh, T: Tables + ?Sized>(
    eng: &mut Engine<Z2k, P>,
    mesh: &mut M,
    lt: &LtParams,
    zs: &[Sh],
    gates: &T,
) -> Result<Vec<Sh>> {
    let outs = ltrand_with(eng, mesh, lt, zs, gates).await?;
    let two_l = 1u128 << lt.l;
    Ok(outs
        .iter()
        .map(|o| {
            let c = eng.constant(&o.z_open);
            let e = eng.sub(&c, &o.r);
            eng.add(&e, &eng.mul_const(&o.u, &two_l))
        })
        .collect())
}

/// ModLTZ_t (Procedure 2, with the errata §17.1–2) for a batch of values stored in the engine
/// ring and read modulo `2^t` (`2 ≤ t ≤ k`): returns the exact bits `[MSB_t(z)]`. Consumes one
/// bundle of shape `LtParams { k: t, l: t - 1, b }` per input and one random bit.
pub async fn modltz_t<P: Preprocessing<Z2k>, M: Mesh>(
    eng: &mut Engine<Z2k, P>,
    mesh: &mut M,
    lt: &LtParams,
    zs: &[Sh],
    gates: Vec<GateBundle>,
) -> Result<Vec<Sh>> {
    let t = lt.k;
    if lt.l + 1 != t {
        return Err(Error::Params(
            "ModLTZ_t needs bundles for Mod_{t-1,t}".into(),
        ));
    }
    let es = mod_lk(eng, mesh, lt, zs, gates).await?;
    let bbs = eng.rand_bits(zs.len())?;
    let half = 1u128 << (t - 1);
    let hs: Vec<Sh> = zs
        .iter()
        .zip(&es)
        .zip(&bbs)
        .map(|((z, e), bb)| eng.add(&eng.sub(z, e), &eng.mul_const(bb, &half)))
        .collect();
    let h_open = eng.open_truncated(mesh, &hs, t).await?;
    eng.check(mesh).await?;
    let one = eng.constant(&1);
    Ok(h_open
        .iter()
        .zip(bbs)
        .map(|(&h, bb)| {
            if h >> (t - 1) == 0 {
                bb
            } else {
                eng.sub(&one, &bb)
            }
        })
        .collect())
}

/// Each bundle's composed mask `[r]_k = Σ_i B^i [r_i]_k` (`B = 2^b`) from its Sign gates' masks
/// (seed 000 §7 LTRand step 1): local.
pub fn composed_masks<P: Preprocessing<Z2k>>(
    eng: &Engine<Z2k, P>,
    lt: &LtParams,
    gates: &[GateBundle],
) -> Vec<Sh> {
    let ops = ShareOps(*eng.ring());
    gates
        .iter()
        .map(|g| {
            g.signs.iter().enumerate().fold(ops.zero(), |acc, (i, s)| {
                ops.add(
                    &acc,
                    &eng.mul_const(&s.mask, &(1u128 << (lt.b as usize * i))),
                )
            })
        })
        .collect()
}

/// `[z]_k = b + 2^{l-1} - Σ a_i [s_i]` for a ciphertext `(a, b)` with `b = <a, s> + Δμ + e`
/// (seed 000 §6 step 1 with `c = (b, -a)`): local. The plain loop, the reference of
/// [`shifted_phases`].
pub fn shifted_phase<P: Preprocessing<Z2k>>(
    eng: &Engine<Z2k, P>,
    params: &Params,
    key: &SharedKey,
    ct: &LweCiphertext,
) -> Sh {
    // Σ a_i·[s_i] with 64-bit a_i (cheaper products), subtracted at the end; all arithmetic
    // wraps modulo 2^128 and is reduced into the share ring Z_{2^{k+s}} (a power of two ≤ 2^128).
    let (mut v, mut m) = (0u128, 0u128);
    for (a, s) in ct.mask().iter().zip(&key.coeffs) {
        let a = u128::from(*a);
        v = v.wrapping_add(a.wrapping_mul(s.v));
        m = m.wrapping_add(a.wrapping_mul(s.m));
    }
    finish_phase(eng, params, ct, v, m)
}

/// `[z]_k` from `Σ a_i [s_i]` (value and MAC sums modulo 2^128).
fn finish_phase<P: Preprocessing<Z2k>>(
    eng: &Engine<Z2k, P>,
    params: &Params,
    ct: &LweCiphertext,
    v: u128,
    m: u128,
) -> Sh {
    let ring = *eng.ring();
    let (v, m) = (v.wrapping_neg(), m.wrapping_neg());
    let acc = Sh {
        v: ring.add(&v, &0),
        m: ring.add(&m, &0),
    };
    let c = u128::from(ct.body()) + (1u128 << (params.l() - 1));
    eng.add_const(&acc, &ring.add(&c, &0))
}

/// The key's value and MAC shares split into 64-bit limbs, the layout of
/// [`coterie_math::dot::dot_u64_u128_pair`] (built once per batch, wiped on drop).
struct SplitKey {
    limbs: [Vec<u64>; 4],
}

impl SplitKey {
    fn new(key: &SharedKey) -> Self {
        let n = key.coeffs.len();
        let mut limbs: [Vec<u64>; 4] = std::array::from_fn(|_| Vec::with_capacity(n));
        for s in &key.coeffs {
            limbs[0].push(s.v as u64);
            limbs[1].push((s.v >> 64) as u64);
            limbs[2].push(s.m as u64);
            limbs[3].push((s.m >> 64) as u64);
        }
        Self { limbs }
    }
}

impl Drop for SplitKey {
    fn drop(&mut self) {
        self.limbs.iter_mut().for_each(Zeroize::zeroize);
    }
}

/// [`shifted_phase`] for every ciphertext of a batch, with the vectorized inner product of
/// [`coterie_math::dot`] (1.5x the plain loop here). A ciphertext whose mask is not as long as
/// the key is refused (the callers validate them against the parameters first).
pub fn shifted_phases<P: Preprocessing<Z2k>>(
    eng: &Engine<Z2k, P>,
    params: &Params,
    key: &SharedKey,
    cts: &[LweCiphertext],
) -> Result<Vec<Sh>> {
    let k = SplitKey::new(key);
    let [lo1, hi1, lo2, hi2] = &k.limbs;
    cts.iter()
        .map(|ct| {
            let (v, m) = coterie_math::dot::dot_u64_u128_pair(ct.mask(), lo1, hi1, lo2, hi2)
                .ok_or_else(|| {
                    Error::Key(format!(
                        "ciphertext of dimension {} for a key of dimension {}",
                        ct.mask().len(),
                        lo1.len()
                    ))
                })?;
            Ok(finish_phase(eng, params, ct, v, m))
        })
        .collect()
}

/// Π_Decrypt (Figure 3) for a batch of ciphertexts in shared rounds (strict schedule): returns
/// `round_p(b - <a, s>)` for every ciphertext, identically at every party, or an error (abort)
/// before any output is revealed if any MAC check fails.
///
/// Every ciphertext is validated against `params` first; a malformed one is refused before a
/// gate bundle is taken from `pool`. The bundles are consumed even if the run then fails (a
/// partially used bundle is never reused, seed 000 T10).
///
/// # Example
///
/// Two parties, **insecure** toy parameters and dealer material (tests only):
///
/// ```
/// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
/// use coterie_spdz::{Counts, Engine, InsecureDealer, Z2k};
/// use coterie_threshold::gates::{GatePool, prep_bundles};
/// use coterie_threshold::keys::SharedKey;
/// use coterie_threshold::online::decrypt;
/// use coterie_threshold::{LweCiphertext, Params};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let p = Params::insecure_toy(4, 16, 2, 3).unwrap();
/// let lt = p.lt().unwrap();
/// let sk = [1i64, 0, 1, 1];
/// let mut rng = rand::rng();
/// let ct = LweCiphertext::encrypt_with_secret_key(&sk, 2, 50, 16, 2, &mut rng);
/// let ring = Z2k::new(16, 64).unwrap();
/// let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
/// let counts = Counts {
///     triples: lt.mults_per_bundle(),
///     bits: lt.bits_per_bundle(),
///     randoms: 64,
///     masks_per_party: 0,
/// };
/// let keys = SharedKey::insecure_deal(&dealer, &ring, &sk, &mut rng);
/// let mut tasks = Vec::new();
/// let parties = InMemoryMesh::group(2, MeshOptions::default());
/// for ((mut mesh, prep), key) in parties.into_iter().zip(dealer.deal(counts, &mut rng)).zip(keys) {
///     let ct = ct.clone();
///     tasks.push(tokio::spawn(async move {
///         let mut eng = Engine::new(prep);
///         let (bundles, _) = prep_bundles(&mut eng, &mut mesh, &lt, 1, 0).await?;
///         let mut pool = GatePool::new(lt);
///         pool.push(bundles)?;
///         let mu = decrypt(&mut eng, &mut mesh, &p, &key, &[ct], &mut pool).await?;
///         mesh.close().await.ok();
///         Ok::<_, coterie_threshold::Error>(mu)
///     }));
/// }
/// for t in tasks {
///     assert_eq!(t.await.unwrap().unwrap(), vec![2]);
/// }
/// # });
/// ```
pub async fn decrypt<P: Preprocessing<Z2k>, M: Mesh>(
    eng: &mut Engine<Z2k, P>,
    mesh: &mut M,
    params: &Params,
    key: &SharedKey,
    cts: &[LweCiphertext],
    pool: &mut GatePool,
) -> Result<Vec<u64>> {
    params.validate()?;
    for (i, ct) in cts.iter().enumerate() {
        ct.check(params)
            .map_err(|e| Error::Ciphertext(format!("ciphertext {i}: {e}")))?;
    }
    if eng.ring().k() != params.k {
        return Err(Error::Params(format!(
            "engine over Z_2^{}, ciphertexts mod 2^{}",
            eng.ring().k(),
            params.k
        )));
    }
    key.check(params)?;
    let lt = params.lt()?;
    if *pool.lt() != lt {
        return Err(Error::Gate(
            "the pool holds bundles of other parameters".into(),
        ));
    }
    let gates = pool.take(cts.len())?;
    let zs = shifted_phases(eng, params, key, cts)?;
    let es = mod_lk_with(eng, mesh, &lt, &zs, &gates).await?;
    drop(gates);
    let diffs: Vec<Sh> = zs.iter().zip(&es).map(|(z, e)| eng.sub(z, e)).collect();
    let mus = eng.open(mesh, &diffs).await?;
    eng.check(mesh).await?;
    let l = params.l();
    mus.iter()
        .map(|&mu| {
            if mu & ((1u128 << l) - 1) != 0 {
                return Err(Error::Invariant("z - e is not a multiple of L".into()));
            }
            Ok((mu >> l) as u64)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use coterie_spdz::{Counts, InsecureDealer};

    /// The vectorized batch form gives every ciphertext the plain loop's shares, for the paper's
    /// share ring (k + s = 128) and a toy one (k + s = 80), and refuses a short ciphertext.
    #[test]
    fn shifted_phases_match_the_plain_loop() {
        let mut rng = rand::rng();
        for (p, ring) in [
            (Params::paper(), Z2k::spdz2k_64()),
            (
                Params::insecure_toy(37, 16, 2, 3).unwrap(),
                Z2k::new(16, 64).unwrap(),
            ),
        ] {
            let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
            let sk: Vec<i64> = (0..p.n)
                .map(|_| (rand::Rng::next_u64(&mut rng) & 1) as i64)
                .collect();
            let keys = SharedKey::insecure_deal(&dealer, &ring, &sk, &mut rng);
            let preps = dealer.deal(Counts::default(), &mut rng);
            let cts: Vec<LweCiphertext> = (0..5)
                .map(|j| LweCiphertext::encrypt_with_secret_key(&sk, j % 2, 3, p.k, p.m, &mut rng))
                .collect();
            for (key, prep) in keys.iter().zip(preps) {
                let eng = Engine::new(prep);
                let fast = shifted_phases(&eng, &p, key, &cts).unwrap();
                for (ct, f) in cts.iter().zip(&fast) {
                    assert_eq!(*f, shifted_phase(&eng, &p, key, ct));
                }
            }
            let eng = Engine::new(dealer.deal(Counts::default(), &mut rng).remove(0));
            let short = LweCiphertext::encrypt_with_secret_key(&sk[1..], 0, 3, p.k, p.m, &mut rng);
            assert!(shifted_phases(&eng, &p, &keys[0], &[short]).is_err());
        }
    }
}
