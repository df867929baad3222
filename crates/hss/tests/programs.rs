//! RMS programs, branching programs, formulas and threshold formulas evaluated by both servers on
//! the insecure toy group; outputs must match the plain evaluation unless both servers flag.

use coterie_hss::program::{
    BranchingProgram, EvalOptions, Formula, Program, ProgramBuilder, eval, eval_bp,
};
use coterie_hss::scheme::{
    Evaluator, L2Share, Params, PreparedInput, from_bytes, insecure_keygen_trusted_dealer,
    reconstruct, share_l2_secret_key, to_bytes,
};
use coterie_math::bigint::BigInt;
use rand::SeedableRng;

struct Setup {
    pk: coterie_hss::scheme::PublicKey,
    ek: (coterie_hss::scheme::EvalKey, coterie_hss::scheme::EvalKey),
    sk: coterie_hss::scheme::SecretKey,
    rng: rand_chacha::ChaCha20Rng,
}

fn setup(seed: u64, log_base: u32, d: u32) -> Setup {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let params = Params::insecure_toy(log_base, 16, d);
    let (pk, ek0, ek1, sk) = insecure_keygen_trusted_dealer(&params, &mut rng).unwrap();
    Setup {
        pk,
        ek: (ek0, ek1),
        sk,
        rng,
    }
}

fn inputs(st: &mut Setup, x: &[i64]) -> (Vec<PreparedInput>, Vec<L2Share>, Vec<L2Share>) {
    let enc = st.pk.encryptor().unwrap();
    let mut p = vec![];
    let mut s0 = vec![];
    let mut s1 = vec![];
    for &v in x {
        let l1 = enc.encrypt(&st.pk, &BigInt::from(v), &mut st.rng);
        p.push(PreparedInput::new(&st.pk, &l1, true).unwrap());
        let (a, b) = share_l2_secret_key(&st.pk.params, &st.sk, v, &mut st.rng);
        s0.push(a);
        s1.push(b);
    }
    (p, s0, s1)
}

#[test]
fn rms_program_builder_and_eval_both_modes() {
    let mut st = setup(20, 2, 10);
    // y = (x0·x1 + x2)·x3 ; outputs y mod 2, x0·x2 (terminal) mod 2, and constant 1 + x1 mod 4
    let mut b = ProgramBuilder::new(4);
    let a = b.load(0);
    let m = b.mul(1, a);
    let c = b.load(2);
    let s = b.add(m, c);
    let y = b.mul(3, s);
    b.output(y, 2);
    b.terminal_mul(0, c, 2);
    let one = b.constant(1);
    let l1 = b.load(1);
    let t = b.add(one, l1);
    b.output(t, 4);
    let prog = b.build();
    assert_eq!(prog.multiplicative_size(), 6);
    // bytes round trip
    let back: Program = from_bytes(&to_bytes(&prog).unwrap()).unwrap();
    assert_eq!(back, prog);
    for bits in 0..16u32 {
        let x: Vec<i64> = (0..4).map(|i| ((bits >> i) & 1) as i64).collect();
        let want = match prog.eval_plain(&x) {
            Ok(w) => w,
            Err(_) => continue, // x0·x1 + x2 = 2 exceeds M_RMS = 1
        };
        let (p, s0, s1) = inputs(&mut st, &x);
        for (sk_mode, randomized) in [(false, false), (false, true), (true, true)] {
            let mut e0 = Evaluator::new(&st.pk, &st.ek.0, bits as u64).unwrap();
            let mut e1 = Evaluator::new(&st.pk, &st.ek.1, bits as u64).unwrap();
            let opts = EvalOptions { randomized };
            let (l0, l1) = if sk_mode {
                (Some(&s0[..]), Some(&s1[..]))
            } else {
                (None, None)
            };
            let o0 = eval(&mut e0, &prog, &p, l0, opts).unwrap();
            let o1 = eval(&mut e1, &prog, &p, l1, opts).unwrap();
            if o0.flagged && o1.flagged {
                continue;
            }
            for (k, (a, b)) in o0.outputs.iter().zip(&o1.outputs).enumerate() {
                let beta = BigInt::from([2, 2, 4][k]);
                assert_eq!(
                    reconstruct(a, b, &beta).unwrap(),
                    want[k],
                    "x={x:?} out {k}"
                );
            }
        }
    }
}

#[test]
fn malformed_programs_are_errors() {
    let mut b = ProgramBuilder::new(1);
    let a = b.load(0);
    b.output(a, 2);
    let mut p = b.build();
    p.instrs.push(coterie_hss::program::Instr::Mul {
        dst: 9,
        input: 0,
        mem: 0,
    });
    assert!(p.validate().is_err());
    let mut q = p.clone();
    q.instrs.pop();
    q.instrs
        .push(coterie_hss::program::Instr::Add { dst: 1, a: 0, b: 5 });
    assert!(q.validate().is_err());
    assert!(from_bytes::<Program>(&[1, 2, 3]).is_err());
}

fn check_bp(st: &mut Setup, bp: &BranchingProgram, n: u32, secret_key: bool) -> usize {
    let mut mults = 0;
    for bits in 0..(1u32 << n) {
        let x: Vec<bool> = (0..n).map(|i| (bits >> i) & 1 == 1).collect();
        let xi: Vec<i64> = x.iter().map(|&b| b as i64).collect();
        let (p, s0, s1) = inputs(st, &xi);
        let mut e0 = Evaluator::new(&st.pk, &st.ek.0, 100 + bits as u64).unwrap();
        let mut e1 = Evaluator::new(&st.pk, &st.ek.1, 100 + bits as u64).unwrap();
        let (l0, l1) = if secret_key {
            (Some(&s0[..]), Some(&s1[..]))
        } else {
            (None, None)
        };
        let (o0, m0) = eval_bp(&mut e0, bp, &p, l0, 2).unwrap();
        let (o1, m1) = eval_bp(&mut e1, bp, &p, l1, 2).unwrap();
        assert_eq!(m0, m1);
        mults = m0;
        if o0.flagged && o1.flagged {
            continue;
        }
        let want = bp.eval_plain(&x).unwrap();
        let got = reconstruct(&o0.outputs[0], &o1.outputs[0], &BigInt::from(2)).unwrap();
        assert_eq!(got, u32::from(want), "x={x:?}");
    }
    mults
}

#[test]
fn small_branching_program_formula() {
    // x0 AND (x1 OR x2): 2 gates, 3 leaves.
    let f = Formula::And(
        Box::new(Formula::Var(0)),
        Box::new(Formula::Or(
            Box::new(Formula::Var(1)),
            Box::new(Formula::Var(2)),
        )),
    );
    let bp = BranchingProgram::from_formula(&f, 3).unwrap();
    for bits in 0..8u32 {
        let x: Vec<bool> = (0..3).map(|i| (bits >> i) & 1 == 1).collect();
        assert_eq!(bp.eval_plain(&x).unwrap(), f.eval(&x));
    }
    let mut st = setup(21, 4, 10);
    // secret-key HSS: exactly one multiplication per gate
    assert_eq!(check_bp(&mut st, &bp, 3, true), f.gates());
    // public-key HSS: one more (the source node's input conversion)
    assert_eq!(check_bp(&mut st, &bp, 3, false), f.gates() + 1);
}

#[test]
fn threshold_two_of_three() {
    let bp = BranchingProgram::threshold(2, 3).unwrap();
    assert_eq!(bp.mult_counts(), (3, 1));
    for bits in 0..8u32 {
        let x: Vec<bool> = (0..3).map(|i| (bits >> i) & 1 == 1).collect();
        assert_eq!(bp.eval_plain(&x).unwrap(), bits.count_ones() >= 2);
    }
    let mut st = setup(22, 2, 10);
    assert_eq!(check_bp(&mut st, &bp, 3, false), 4);
    // majority of 13: (N+1)^2/4 - 1 = 48 non-terminal + 1 terminal
    assert_eq!(
        BranchingProgram::threshold(7, 13).unwrap().mult_counts(),
        (48, 1)
    );
}

#[test]
fn conjunction_of_51_inputs() {
    let mut st = setup(23, 4, 10);
    let mut b = ProgramBuilder::new(51);
    let mut y = b.load(0);
    for i in 1..50 {
        y = b.mul(i, y);
    }
    b.terminal_mul(50, y, 2);
    let prog = b.build();
    assert_eq!(prog.multiplicative_size(), 51);
    for zero_at in [None, Some(17usize)] {
        let x: Vec<i64> = (0..51).map(|i| i64::from(Some(i) != zero_at)).collect();
        let (p, s0, s1) = inputs(&mut st, &x);
        let mut e0 = Evaluator::new(&st.pk, &st.ek.0, 5).unwrap();
        let mut e1 = Evaluator::new(&st.pk, &st.ek.1, 5).unwrap();
        let o0 = eval(
            &mut e0,
            &prog,
            &p,
            Some(&s0),
            EvalOptions { randomized: true },
        )
        .unwrap();
        let o1 = eval(
            &mut e1,
            &prog,
            &p,
            Some(&s1),
            EvalOptions { randomized: true },
        )
        .unwrap();
        if o0.flagged && o1.flagged {
            continue;
        }
        let got = reconstruct(&o0.outputs[0], &o1.outputs[0], &BigInt::from(2)).unwrap();
        assert_eq!(got, i64::from(zero_at.is_none()));
    }
}

/// Loads and terminal products convert at the program's bound `M_RMS`: an input of 2 under
/// `M_RMS = 2` (d = 6, where a conversion at bound 1 went wrong without a flag in about 7% of
/// the runs) must reconstruct correctly whenever not both servers flag. Public-key mode, so the
/// load goes through a conversion.
#[test]
fn inputs_above_one_load_and_multiply_at_the_program_bound() {
    let mut st = setup(41, 2, 6);
    let mut b = ProgramBuilder::new(2).magnitude_bound(2);
    let x = b.load(0);
    b.output(x, 4);
    let one = b.load(1);
    let y = b.mul(0, one);
    b.output(y, 4);
    b.terminal_mul(0, one, 4);
    let prog = b.build();
    let want = prog.eval_plain(&[2, 1]).unwrap();
    assert_eq!(want, vec![2, 2, 2]);
    let mut checked = 0;
    for nonce in 0..300u64 {
        let (p, _, _) = inputs(&mut st, &[2, 1]);
        let mut e0 = Evaluator::new(&st.pk, &st.ek.0, nonce).unwrap();
        let mut e1 = Evaluator::new(&st.pk, &st.ek.1, nonce).unwrap();
        let o0 = eval(&mut e0, &prog, &p, None, EvalOptions::default()).unwrap();
        let o1 = eval(&mut e1, &prog, &p, None, EvalOptions::default()).unwrap();
        if o0.flagged && o1.flagged {
            continue;
        }
        checked += 1;
        for (k, (a, b)) in o0.outputs.iter().zip(&o1.outputs).enumerate() {
            assert_eq!(
                reconstruct(a, b, &BigInt::from(4)).unwrap(),
                want[k],
                "nonce {nonce}, output {k}"
            );
        }
    }
    assert!(checked > 80, "only {checked} unflagged runs");
}

/// The plain reference refuses what a share conversion cannot carry: a negative load or product
/// (the distributed discrete log finds distances in [0, M_RMS] only) and i64 overflow.
#[test]
fn plain_evaluation_refuses_negative_conversions_and_overflow() {
    let mut b = ProgramBuilder::new(1).magnitude_bound(3);
    let x = b.load(0);
    b.output(x, 4);
    let prog = b.build();
    assert_eq!(prog.eval_plain(&[3]).unwrap(), vec![3]);
    let e = prog.eval_plain(&[-1]).unwrap_err().to_string();
    assert!(e.contains("negative"), "{e}");
    // a negative memory value is fine as long as no conversion takes it
    let mut b = ProgramBuilder::new(2).magnitude_bound(3);
    let x = b.load(0);
    let y = b.load(1);
    let d = b.sub(x, y);
    b.output(d, 4);
    let z = b.mul(0, d);
    b.output(z, 4);
    let prog = b.build();
    let e = prog.eval_plain(&[1, 2]).unwrap_err().to_string();
    assert!(e.contains("negative"), "{e}");
    let mut b = ProgramBuilder::new(1).magnitude_bound(u64::MAX);
    let x = b.load(0);
    let s = b.scale(x, i64::MAX);
    b.output(s, 2);
    let e = b.build().eval_plain(&[2]).unwrap_err().to_string();
    assert!(e.contains("overflow"), "{e}");
}
