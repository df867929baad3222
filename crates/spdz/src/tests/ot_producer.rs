//! The OT-based SPDZ_2k producer: correct and authentic material for 2 to 4 parties, in memory
//! and over TLS, progress reports, uniform random bits, and material that drives the engine.

use std::sync::{Arc, Mutex};

use coterie_base::{Progress, ProgressEvent};
use coterie_net::{InMemoryMesh, Mesh};

use super::{opts, run_mem, tls};
use crate::*;

/// Runs the producer (default OT extension, through [`OtPrep::setup`]) for `counts` on every
/// mesh of `meshes` (one per party).
pub(super) async fn produce_on<M: Mesh + 'static>(
    meshes: Vec<M>,
    ring: Z2k,
    counts: Counts,
) -> Vec<Result<VecPrep<Z2k>>> {
    produce_on_with(meshes, ring, counts, None).await
}

/// Runs the producer with OT extension `ext` (`None`: [`OtPrep::setup`]'s default) for `counts`
/// on every mesh of `meshes`.
pub(super) async fn produce_on_with<M: Mesh + 'static>(
    meshes: Vec<M>,
    ring: Z2k,
    counts: Counts,
    ext: Option<OtExtension>,
) -> Vec<Result<VecPrep<Z2k>>> {
    let mut tasks = Vec::new();
    for mut mesh in meshes {
        tasks.push(tokio::spawn(async move {
            let mut p = match ext {
                None => OtPrep::setup(&mut mesh, ring).await?,
                Some(e) => {
                    let p = OtPrep::setup_with(&mut mesh, ring, e).await?;
                    assert_eq!(p.extension(), e);
                    p
                }
            };
            let out = p.produce(&mut mesh, counts).await?;
            mesh.close().await?;
            Ok(out)
        }));
    }
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

async fn produce(n: usize, ring: Z2k, counts: Counts) -> Vec<Result<VecPrep<Z2k>>> {
    produce_on(InMemoryMesh::group(n, opts()), ring, counts).await
}

fn open_share(ring: &Z2k, shares: &[&Share<u128>]) -> (u128, u128) {
    let v = shares.iter().fold(0, |a, s| ring.add(&a, &s.v));
    let m = shares.iter().fold(0, |a, s| ring.add(&a, &s.m));
    (v, m)
}

/// Checks the material against plaintext (`c = a·b` over all of `Z_{2^{k+s}}`, stricter than
/// [`crate::verify::verify_material`], which is also run).
pub(super) fn verify_material(ring: Z2k, preps: &[VecPrep<Z2k>], counts: Counts) {
    crate::verify::verify_material(preps).unwrap();
    let n = preps.len();
    let alpha = preps
        .iter()
        .fold(0u128, |a, p| ring.add(&a, &p.mac_key_share()));
    let authentic = |sh: Vec<&Share<u128>>| {
        let (v, m) = open_share(&ring, &sh);
        assert_eq!(m, ring.mul(&alpha, &v), "MAC does not match");
        v
    };
    for i in 0..counts.triples {
        let a = authentic(preps.iter().map(|p| &p.triples[i].a).collect());
        let b = authentic(preps.iter().map(|p| &p.triples[i].b).collect());
        let c = authentic(preps.iter().map(|p| &p.triples[i].c).collect());
        assert_eq!(c, ring.mul(&a, &b), "triple {i} is wrong");
    }
    let mut ones = 0;
    for i in 0..counts.bits {
        let b = authentic(preps.iter().map(|p| &p.bits[i]).collect());
        assert!(ring.to_value(&b) <= 1, "bit {i} = {b}");
        ones += ring.to_value(&b) as usize;
    }
    if counts.bits >= 16 {
        assert!(ones > 0 && ones < counts.bits);
    }
    for i in 0..counts.randoms {
        authentic(preps.iter().map(|p| &p.randoms[i]).collect());
    }
    for owner in 0..n {
        for i in 0..counts.masks_per_party {
            let r = authentic(preps.iter().map(|p| &p.masks[owner][i].share).collect());
            assert_eq!(preps[owner].masks[owner][i].value, Some(r));
            for (j, p) in preps.iter().enumerate() {
                assert_eq!(p.masks[owner][i].value.is_some(), j == owner);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ot_material_is_correct_and_authentic() {
    let counts = Counts {
        triples: 24,
        bits: 20,
        randoms: 10,
        masks_per_party: 4,
    };
    for (n, ring) in [(2, Z2k::spdz2k_64()), (3, Z2k::spdz2k_32())] {
        let res = produce(n, ring, counts).await;
        let preps: Vec<_> = res.into_iter().map(|r| r.unwrap()).collect();
        verify_material(ring, &preps, counts);
    }
    let small = Counts {
        triples: 5,
        bits: 3,
        randoms: 2,
        masks_per_party: 2,
    };
    let res = produce(4, Z2k::spdz2k_64(), small).await;
    let preps: Vec<_> = res.into_iter().map(|r| r.unwrap()).collect();
    verify_material(Z2k::spdz2k_64(), &preps, small);
}

/// Every OT extension (KOS and SoftSpokenOT with k = 1, 2, 4, 8) gives correct and authentic
/// material for 2 and 3 parties; the default is SoftSpokenOT.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_ot_extension_gives_correct_material() {
    assert!(matches!(
        OtExtension::default(),
        OtExtension::SoftSpoken { .. }
    ));
    let counts = Counts {
        triples: 6,
        bits: 3,
        randoms: 2,
        masks_per_party: 1,
    };
    let exts = [
        OtExtension::Kos,
        OtExtension::SoftSpoken { k: 1 },
        OtExtension::SoftSpoken { k: 2 },
        OtExtension::SoftSpoken { k: 4 },
        OtExtension::SoftSpoken { k: 8 },
    ];
    for ext in exts {
        for (n, ring) in [(2, Z2k::spdz2k_64()), (3, Z2k::spdz2k_32())] {
            let res =
                produce_on_with(InMemoryMesh::group(n, opts()), ring, counts, Some(ext)).await;
            let preps: Vec<_> = res
                .into_iter()
                .map(|r| r.unwrap_or_else(|e| panic!("{ext:?}, {n} parties: {e}")))
                .collect();
            verify_material(ring, &preps, counts);
        }
    }
}

/// COPE in digits with MAC keys whose size the block size does not divide: `s = 42` runs in
/// digits of 2 bits and `s = 33` in digits of 1 bit (`cope::digit_size`); the material is
/// correct and authentic for SoftSpokenOT with `k = 4` and `k = 8`, 2 parties.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cope_digits_fit_any_key_size() {
    let counts = Counts {
        triples: 4,
        bits: 2,
        randoms: 2,
        masks_per_party: 1,
    };
    for (k, s, p) in [(40, 42, 2), (16, 33, 1)] {
        let ring = Z2k::new(k, s).unwrap();
        assert_eq!(crate::cope::digit_size(4, s), p);
        assert_eq!(crate::cope::digit_size(8, s), p);
        for ext in [
            OtExtension::SoftSpoken { k: 4 },
            OtExtension::SoftSpoken { k: 8 },
        ] {
            let res =
                produce_on_with(InMemoryMesh::group(2, opts()), ring, counts, Some(ext)).await;
            let preps: Vec<_> = res
                .into_iter()
                .map(|r| r.unwrap_or_else(|e| panic!("{ext:?}, Z_2^{k}, s = {s}: {e}")))
                .collect();
            verify_material(ring, &preps, counts);
        }
    }
}

/// The traffic of a triple batch: SoftSpokenOT with block size `k` sends
/// `(128 − 128/k)·words·8` bytes less per peer than KOS (the extension message is `128/k`
/// columns instead of 128), and its COPE in digits of `p = k` bits sends
/// `Σ_{l<64} (128 − l) − Σ_{d<64/p} (128 − pd)` bits less for each of the `5t + 1` values it
/// authenticates (`a, b, c, â, ĉ` per triple and the check's mask); every other message is
/// the same size, up to a few bytes of length prefixes and variable-length encodings of
/// random values.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn softspoken_sends_128_over_k_bits_per_ot() {
    let t = 8;
    let ring = Z2k::spdz2k_64();
    let m = t * crate::ot_prep::combine_width(&ring);
    let words = crate::ot::kos_words(m);
    let sent = |ext: OtExtension| async move {
        let mut tasks = Vec::new();
        for mut mesh in InMemoryMesh::group(2, opts()) {
            tasks.push(tokio::spawn(async move {
                let mut p = OtPrep::setup_with(&mut mesh, ring, ext).await.unwrap();
                let b0 = mesh.stats().total_sent();
                assert_eq!(p.triples(&mut mesh, t).await.unwrap().len(), t);
                let b1 = mesh.stats().total_sent();
                mesh.close().await.unwrap();
                b1 - b0
            }));
        }
        let mut out = Vec::new();
        for x in tasks {
            out.push(x.await.unwrap());
        }
        out
    };
    let kos = sent(OtExtension::Kos).await;
    for k in [2u32, 4, 8] {
        let ss = sent(OtExtension::SoftSpoken { k }).await;
        let ext_saved = ((128 - 128 / k as usize) * words * 8) as u64;
        let values = (5 * t + 1) as u64;
        let cope_saved = (values * crate::cope::correction_bits(1, 64, 128)).div_ceil(8)
            - (values * crate::cope::correction_bits(k, 64, 128)).div_ceil(8);
        let saved = ext_saved + cope_saved;
        for party in 0..2 {
            let d = kos[party] - ss[party];
            assert!(
                d.abs_diff(saved) <= 16,
                "k {k} party {party}: {d} vs {saved}"
            );
        }
    }
}

/// With SoftSpokenOT the base-OT keys are wiped once the trees are set up (SoftSpokenOT's and
/// COPE's trees hold what they gave) and the producer still makes correct material; KOS keeps
/// them (its extension and bit-wise COPE use them every batch).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn softspoken_setup_wipes_the_base_ot_keys() {
    let ring = Z2k::spdz2k_64();
    for (ext, held) in [
        (OtExtension::SoftSpoken { k: 4 }, false),
        (OtExtension::Kos, true),
    ] {
        let mut tasks = Vec::new();
        for mut mesh in InMemoryMesh::group(2, opts()) {
            tasks.push(tokio::spawn(async move {
                let mut p = OtPrep::setup_with(&mut mesh, ring, ext).await.unwrap();
                let keys = p.base_keys_held();
                let t = p.triples(&mut mesh, 2).await.unwrap();
                mesh.close().await.unwrap();
                (keys, t.len())
            }));
        }
        for t in tasks {
            let (keys, made) = t.await.unwrap();
            assert_eq!(keys > 0, held, "{ext:?}: {keys} base-OT keys held");
            assert_eq!(made, 2);
        }
    }
}

/// Parties that disagree on the OT extension fail in the first setup round (they do not wait
/// for each other's different messages).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mismatched_ot_extensions_fail_at_setup() {
    let exts = [OtExtension::Kos, OtExtension::SoftSpoken { k: 4 }];
    let mut tasks = Vec::new();
    for (i, mut mesh) in InMemoryMesh::group(2, opts()).into_iter().enumerate() {
        tasks.push(tokio::spawn(async move {
            let r = OtPrep::setup_with(&mut mesh, Z2k::spdz2k_32(), exts[i]).await;
            r.map(|_| ())
        }));
    }
    // each party fails on the other's code, or (if the other failed first and left) on the
    // disconnection; at least one names the mismatch
    let mut named = 0;
    for (i, t) in tasks.into_iter().enumerate() {
        let r = tokio::time::timeout(std::time::Duration::from_secs(30), t)
            .await
            .expect("setup hangs")
            .unwrap();
        match r {
            Err(Error::Malformed { party, cause }) => {
                assert_eq!(party, 1 - i);
                assert!(cause.contains("OT extension"), "{cause}");
                named += 1;
            }
            Err(Error::Net(_)) => {}
            other => panic!("party {i}: {other:?}"),
        }
    }
    assert!(named >= 1);
}

/// A block size that does not divide 128 (or is above 8) is refused before anything is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_block_size_is_refused() {
    for k in [0, 3, 16] {
        let mut meshes = InMemoryMesh::group(2, opts());
        let r = OtPrep::setup_with(
            &mut meshes[0],
            Z2k::spdz2k_32(),
            OtExtension::SoftSpoken { k },
        )
        .await;
        assert!(r.is_err(), "k = {k} accepted");
        assert_eq!(meshes[0].stats().total_sent(), 0);
    }
}

/// The producer over TLS (3 parties): the material is correct and authentic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ot_producer_over_tls() {
    let counts = Counts {
        triples: 6,
        bits: 2,
        randoms: 2,
        masks_per_party: 1,
    };
    let ring = Z2k::spdz2k_64();
    let meshes = tls::tls_group(3).await;
    let mut tasks = Vec::new();
    for mut mesh in meshes {
        tasks.push(tokio::spawn(async move {
            let mut p = OtPrep::setup(&mut mesh, ring).await?;
            let out = p.produce(&mut mesh, counts).await?;
            mesh.close().await?;
            Ok::<_, Error>(out)
        }));
    }
    let mut preps = Vec::new();
    for t in tasks {
        preps.push(t.await.unwrap().unwrap());
    }
    verify_material(ring, &preps, counts);
}

/// The producer's progress reports end at `tools::ot_work_units` of the counts, in one task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_counts_all_work() {
    let counts = Counts {
        triples: 3,
        bits: 2,
        randoms: 4,
        masks_per_party: 1,
    };
    let n = 3;
    // Z_2^64's bits take one more authenticated value each (the lift) than Z_2^32's
    for ring in [Z2k::spdz2k_32(), Z2k::spdz2k_64()] {
        let meshes = InMemoryMesh::group(n, opts());
        let mut tasks = Vec::new();
        for mut mesh in meshes {
            tasks.push(tokio::spawn(async move {
                let mut p = OtPrep::setup(&mut mesh, ring).await?;
                let seen = Arc::new(Mutex::new(Vec::new()));
                let log = seen.clone();
                p.set_progress(Progress::new(move |e: &ProgressEvent| {
                    log.lock().unwrap().push(e.clone());
                }));
                p.produce(&mut mesh, counts).await?;
                mesh.close().await?;
                let events = seen.lock().unwrap().clone();
                Ok::<_, Error>(events)
            }));
        }
        let want = crate::tools::ot_work_units(&ring, counts, n);
        for t in tasks {
            assert_one_task_of(&t.await.unwrap().unwrap(), want);
        }
    }
}

/// The progress `events` of one party form one task of `want` units, all of them done.
pub(super) fn assert_one_task_of(events: &[ProgressEvent], want: u64) {
    assert!(matches!(events.first(), Some(ProgressEvent::Start { total, .. }) if *total == want));
    let last_done = events.iter().rev().find_map(|e| match e {
        ProgressEvent::Advance { done, .. } => Some(*done),
        _ => None,
    });
    assert_eq!(last_done, Some(want));
    assert!(matches!(events.last(), Some(ProgressEvent::Finish { .. })));
}

/// Random bits from the OT producer are bits and uniform (2 parties, 512 bits: the count of
/// ones and of the four patterns of consecutive pairs), over `Z_{2^32}` and `Z_{2^64}` (square
/// roots, the latter lifted).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ot_random_bits_are_uniform() {
    for ring in [Z2k::spdz2k_32(), Z2k::spdz2k_64()] {
        random_bits_are_uniform(ring).await;
    }
}

async fn random_bits_are_uniform(ring: Z2k) {
    let counts = Counts {
        bits: 512,
        ..Counts::default()
    };
    let preps: Vec<_> = produce(2, ring, counts)
        .await
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    let bits: Vec<u128> = (0..counts.bits)
        .map(|i| {
            let v = ring.add(&preps[0].bits[i].v, &preps[1].bits[i].v);
            ring.to_value(&v)
        })
        .collect();
    assert!(bits.iter().all(|b| *b <= 1));
    let ones = bits.iter().filter(|b| **b == 1).count() as f64;
    // binomial(512, 1/2): sd 11.3; 5 sd
    assert!((ones - 256.0).abs() < 57.0, "ones = {ones}");
    let mut pairs = [0usize; 4];
    for w in bits.chunks_exact(2) {
        pairs[(w[0] * 2 + w[1]) as usize] += 1;
    }
    let chi2: f64 = pairs
        .iter()
        .map(|&h| (h as f64 - 64.0).powi(2) / 64.0)
        .sum();
    // 3 degrees of freedom: 25 is far beyond the 0.9999 quantile (21.1)
    assert!(chi2 < 25.0, "chi2 = {chi2}, pairs {pairs:?}");
}

/// The material drives the online engine: inputs, a product, an opening, the MAC check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ot_material_drives_the_engine() {
    let counts = Counts {
        triples: 4,
        bits: 0,
        randoms: 4,
        masks_per_party: 4,
    };
    let preps: Vec<_> = produce(2, Z2k::spdz2k_64(), counts)
        .await
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    let res = run_mem(preps, |mut e, mut mesh| async move {
        let me = mesh.id();
        let v: Vec<u128> = vec![u64::MAX as u128, 2, 3, 1 << 40];
        let x = e
            .input(&mut mesh, 0, (me == 0).then_some(&v[..]), 4)
            .await?;
        let y = e
            .input(&mut mesh, 1, (me == 1).then_some(&v[..]), 4)
            .await?;
        let z = e.mul(&mut mesh, &x, &y).await?;
        let o = e.open_checked(&mut mesh, &z).await?;
        mesh.close().await?;
        Ok(o)
    })
    .await;
    let want: Vec<u128> = [u64::MAX as u128, 2, 3, 1 << 40]
        .iter()
        .map(|x| x.wrapping_mul(*x) & (u64::MAX as u128))
        .collect();
    for r in res {
        assert_eq!(r.unwrap(), want);
    }
}

/// The bit packing of the OT messages (coterie-base's packer, formerly a private one here):
/// values of every width from 0 to 128 bits, as COPE packs `u_l` in `k + s − l` bits, round
/// trip, and reading past the end of a short buffer fails instead of inventing bits.
#[test]
fn bit_packing_round_trip() {
    use coterie_base::bits::{BitReader, BitWriter, packed_len};
    use rand::Rng;
    let mut rng = coterie_math::prg::Csprng::insecure_from_seed_for_tests([3; 32]);
    let widths: Vec<u32> = (0..300).map(|i| (i * 37 % 129) as u32).collect();
    let vals: Vec<u128> = widths
        .iter()
        .map(|_| ((rng.next_u64() as u128) << 64) | rng.next_u64() as u128)
        .collect();
    let mut w = BitWriter::new();
    for (v, n) in vals.iter().zip(&widths) {
        w.put_u128(*v, *n);
    }
    let total: u64 = widths.iter().map(|n| *n as u64).sum();
    let b = w.finish();
    assert_eq!(b.len() as u64, total.div_ceil(8));
    assert_eq!(b.len(), packed_len(1, total as u32));
    let mut r = BitReader::new(&b);
    for (v, n) in vals.iter().zip(&widths) {
        let want = if *n == 128 {
            *v
        } else {
            v & ((1u128 << n) - 1)
        };
        assert_eq!(r.get_u128(*n), Some(want), "width {n}");
    }
    let mut short = BitReader::new(&b[..b.len() - 9]);
    let got: Option<Vec<u128>> = widths.iter().map(|n| short.get_u128(*n)).collect();
    assert!(got.is_none());
}
