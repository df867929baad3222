//! Seed 002 Table 6: one batched MatMul of `d × d` matrices (`d = 128` by default) on MatriGear's
//! named sets, one thread, timed once per repetition after one warm-up, with the product checked
//! against a big-integer reference on the first batched pair. Prints one JSON line per point
//! (`{"impl","op","ns","samples","set","logp","d","t"}`, the format `bench/benchrec.py nsjsonl`
//! reads; `t` = matrices per call) and a human line on stderr.
//!
//! With `--mac` it times Table 7 instead: the MatMul followed by the `d` products of its output
//! ciphertexts by an encrypted scalar (the MAC key α), as the reference code's benchmark does
//! (seed 002 §7.6), with the first pair's α·A·B checked; op `matmul_mac`.
//!
//! Usage: `matmul_bench [--quick] [--mac] [--d D] [--reps R] [SET/LOGP ...]`, e.g.
//! `II/1024 I/128` (default: II/1024 and I/128; `--quick`: II/1024 with d = 32).

use coterie_bfv::matmul::{diagonal_decode, diagonal_encode, matmul, shifted_diagonal_encode};
use coterie_bfv::params::MatriGearSet;
use coterie_bfv::{Context, Params, Plaintext, SecretKey};
use coterie_math::bigint::BigInt;
use coterie_math::prg::Csprng;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let mac = args.iter().any(|a| a == "--mac");
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .map(|v| v.parse::<usize>().expect("a number"))
    };
    let d = value("--d").unwrap_or(if quick { 32 } else { 128 });
    let reps = value("--reps").unwrap_or(1);
    let mut points: Vec<(MatriGearSet, u32)> = args
        .iter()
        .filter_map(|a| a.split_once('/'))
        .map(|(s, l)| {
            let set = match s {
                "I" => MatriGearSet::I,
                "II" => MatriGearSet::II,
                _ => panic!("set I or II, not {s}"),
            };
            (set, l.parse().expect("log p"))
        })
        .collect();
    if points.is_empty() {
        points = if quick {
            vec![(MatriGearSet::II, 1024)]
        } else {
            vec![(MatriGearSet::II, 1024), (MatriGearSet::I, 128)]
        };
    }
    for (set, logp) in points {
        let ctx = Context::new(Params::matrigear(set, logp).unwrap()).unwrap();
        let slots = ctx.slot_encoder().unwrap().slots();
        let p = ctx.slot_encoder().unwrap().modulus().clone();
        assert!(slots.is_multiple_of(d), "d = {d} must divide D = {slots}");
        let t = slots / d;
        let mut rng = Csprng::insecure_from_seed_for_tests([11; 32]);
        let sk = SecretKey::generate(&ctx, &mut rng);
        let pk = sk.public_key(&mut rng);
        let rlk = sk.relin_key(&mut rng);
        let rot = sk.matmul_rotation_keys(d, &mut rng).unwrap();
        let entry = |i: usize, j: usize, s: u64| BigInt::from((i * 131 + j * 7) as u64 + s) % &p;
        let a: Vec<Vec<BigInt>> = (0..d)
            .map(|i| (0..d).map(|j| entry(i, j, 1)).collect())
            .collect();
        let b: Vec<Vec<BigInt>> = (0..d)
            .map(|i| (0..d).map(|j| entry(j, i, 5)).collect())
            .collect();
        let enc = |vs: Vec<Vec<BigInt>>, rng: &mut Csprng| -> Vec<_> {
            vs.iter()
                .map(|v| {
                    pk.encrypt(&Plaintext::encode_slots(&ctx, v).unwrap(), rng)
                        .unwrap()
                })
                .collect()
        };
        let ca = enc(
            diagonal_encode(&vec![a.clone(); t], slots).unwrap(),
            &mut rng,
        );
        let cb = enc(
            shifted_diagonal_encode(&vec![b.clone(); t], slots).unwrap(),
            &mut rng,
        );
        // The MAC key α in every slot (Table 7 only).
        let alpha = BigInt::from(0x1234_5678_9abc_u64) % &p;
        let c_alpha = pk
            .encrypt(
                &Plaintext::encode_slots(&ctx, &vec![alpha.clone(); slots]).unwrap(),
                &mut rng,
            )
            .unwrap();
        let run = || {
            let cc = matmul(&ca, &cb, &rlk, &rot).unwrap();
            if !mac {
                return cc;
            }
            // ct_α lifted once for its d products (as coterie-matrigear's flows do).
            let lifted = c_alpha.extended().unwrap();
            cc.iter()
                .map(|c| c.mul_extended(&lifted, &rlk).unwrap())
                .collect()
        };
        let cc = run(); // warm-up, and the check below
        let diags: Vec<Vec<BigInt>> = cc
            .iter()
            .map(|c| sk.decrypt(c).unwrap().decode_slots().unwrap())
            .collect();
        let got = &diagonal_decode(&diags, 1).unwrap()[0];
        let scale = if mac {
            alpha.clone()
        } else {
            BigInt::from(1u32)
        };
        for (i, row) in got.iter().enumerate() {
            for (j, x) in row.iter().enumerate() {
                let mut s = BigInt::new();
                for k in 0..d {
                    s += BigInt::from(&a[i][k] * &b[k][j]);
                }
                assert_eq!(*x, (s * &scale) % &p, "MatMul entry ({i}, {j}) is wrong");
            }
        }
        let mut times = Vec::with_capacity(reps);
        for _ in 0..reps {
            let start = Instant::now();
            std::hint::black_box(run());
            times.push(start.elapsed().as_nanos() as f64);
        }
        times.sort_by(f64::total_cmp);
        let ns = times[times.len() / 2];
        let op = if mac { "matmul_mac" } else { "matmul" };
        eprintln!(
            "{op} {set:?}/{logp}: d = {d}, T = {t}: {:.2} s unit, {:.3} s per matrix (checked)",
            ns / 1e9,
            ns / 1e9 / t as f64
        );
        println!(
            "{{\"impl\": \"coterie\", \"op\": \"{op}\", \"ns\": {ns}, \"samples\": {reps}, \
             \"set\": \"{set:?}\", \"logp\": {logp}, \"d\": {d}, \"t\": {t}}}"
        );
    }
}
