//! Private RSS feed (spec §6.3, paper §5.2.2 and Figure 4).
//!
//! A client registers its interest tags encrypted, `w_i = 1` iff tag `i` interests it; for every
//! new record with tag bits `r` both servers evaluate the conjunction program `P[r]`, which is 1
//! iff `r_i = 1` for every `i` with `w_i = 1`, and keep their output share bit and flag; after
//! `N` records each server sends the client a digest (its share bits and flags under a digest
//! id), and the client XORs the two digests.
//!
//! # The conjunction program
//!
//! `P[r](w) = ∏_{i : r_i = 0} (1 − w_i)`: the record matches unless the client wants a tag the
//! record lacks. The servers build `L1(1 − w_i)` homomorphically from the client's `L1(w_i)`
//! ([`complement_input`]: `E(1 − w) = (1, g)/E(w)`, `E((1 − w)·c_j) = E(c_j)/E(w·c_j)` with
//! `E(c_j)` from the public key), so the program is a chain of multiplications by inputs:
//! `Y ← 1; Y ← (1 − w_i)·Y` for each zero of `r`, the last one terminal. A record with `k` zeros
//! costs `k − 1` non-terminal multiplications and one terminal one (the conjunction of 51
//! inputs: 50 + 1, spec §9 case 12); a record with every tag costs nothing (the output is 1).

use crate::group::Group;
use crate::program::{EvalOptions, Program, ProgramBuilder, eval};
use crate::scheme::{Ciphertext, Evaluator, L1Input, L2Share, PreparedInput, PublicKey, ct_div};
use crate::{Error, Result};

/// Largest number of interest tags.
pub const MAX_TAGS: usize = 4096;

/// `L1(1 − w)` from `L1(w)` (see the module docs), for a bit `w`.
///
/// # Example
///
/// ```
/// use coterie_hss::apps::feed::complement_input;
/// use coterie_hss::group::Group;
/// use coterie_hss::scheme::{Params, insecure_keygen_trusted_dealer};
/// use coterie_math::bigint::BigInt;
/// use rand::SeedableRng;
/// let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1); // insecure fixed seed
/// let params = Params::insecure_toy(4, 16, 10);
/// let (pk, _, _, sk) = insecure_keygen_trusted_dealer(&params, &mut rng).unwrap();
/// let w = pk.encryptor().unwrap().encrypt(&pk, &BigInt::from(0), &mut rng);
/// let not_w = complement_input(&pk, &w).unwrap();
/// let g = Group::new(params.group);
/// assert_eq!(sk.decrypt_to_group(&g, &not_w.x).unwrap(), g.g()); // g^(1 − 0)
/// ```
pub fn complement_input(pk: &PublicKey, w: &L1Input) -> Result<L1Input> {
    w.validate(pk)?;
    let group = Group::new(pk.params.group);
    let one = Ciphertext {
        a: group.one(),
        c: group.g(),
    };
    Ok(L1Input {
        x: ct_div(&group, &one, &w.x)?,
        digits: pk
            .key_digits
            .iter()
            .zip(&w.digits)
            .map(|(kd, wd)| ct_div(&group, kd, wd))
            .collect::<Result<_>>()?,
    })
}

/// The conjunction program `P[r]` over the complemented inputs `1 − w_i` (module docs), output
/// mod 2. Input `i` of the program is `L1(1 − w_i)`.
///
/// # Example
///
/// ```
/// use coterie_hss::apps::feed::conjunction_program;
/// // 51 tags, the record has none of them: 50 non-terminal multiplications and a terminal one.
/// let p = conjunction_program(&[false; 51]).unwrap();
/// assert_eq!(p.multiplicative_size(), 51);
/// // The client wants tags 0 and 3 (w = 1001...): complemented inputs 1 − w.
/// let record = [true, false, true, true];
/// let p = conjunction_program(&record).unwrap();
/// assert_eq!(p.eval_plain(&[0, 1, 1, 0]).unwrap(), vec![1]); // has tags 0 and 3
/// assert_eq!(p.eval_plain(&[0, 0, 1, 1]).unwrap(), vec![0]); // wants tag 1, which it lacks
/// ```
pub fn conjunction_program(record: &[bool]) -> Result<Program> {
    if record.is_empty() || record.len() > MAX_TAGS {
        return Err(Error::InvalidParameter(format!(
            "a record has 1 to {MAX_TAGS} tag bits"
        )));
    }
    let zeros: Vec<u32> = (0..record.len() as u32)
        .filter(|&i| !record[i as usize])
        .collect();
    let mut b = ProgramBuilder::new(record.len() as u32);
    let mut y = b.constant(1);
    match zeros.split_last() {
        None => b.output(y, 2),
        Some((&last, rest)) => {
            for &i in rest {
                y = b.mul(i, y);
            }
            b.terminal_mul(last, y, 2);
        }
    }
    Ok(b.build())
}

/// A registration's inputs prepared once for every record: `L1(1 − w_i)` with its complemented
/// family (for `RandMult`, spec §4.5) and `L2(1 − w_i)` loaded once (one `Mult` each), so each
/// record's multiplications are randomized conversions (8x lower failure for the same `d`,
/// [`super::vote::MultKind::RandMult`]).
#[derive(Debug, Clone)]
pub struct PreparedTags {
    /// Pairing tables of `L1(1 − w_i)`, complemented family included.
    pub inputs: Vec<PreparedInput>,
    /// `L2(1 − w_i)`.
    pub loads: Vec<L2Share>,
    /// A load raised this server's flag: every record's output is then flagged too (a failed
    /// load would make every record wrong, and Las Vegas soundness asks that a wrong output is
    /// flagged by both servers).
    pub flagged: bool,
}

/// The public key with the pattern length `d` of a registration's `n` loads (plain `Mult`s,
/// failure `2^−failure_log2` for all of them, once) and with the `d` of one record's program
/// (`n` randomized multiplications, failure `2^−failure_log2` per record), for
/// [`prepare_tags`] and [`eval_record`] ([`super::vote::choose_d`]).
pub fn load_and_record_keys(
    pk: &PublicKey,
    n: usize,
    failure_log2: u32,
) -> Result<(PublicKey, PublicKey)> {
    use super::vote::{MultKind, choose_d};
    let mut load = pk.clone();
    load.params.d = choose_d(&pk.params, &[(n, MultKind::Mult)], failure_log2)?;
    let mut rec = pk.clone();
    rec.params.d = choose_d(&pk.params, &[(n, MultKind::RandMult)], failure_log2)?;
    // The record evaluations use the load's tables, sized for the larger d.
    rec.params.d = rec.params.d.min(load.params.d);
    Ok((load, rec))
}

/// Prepares a registration's `L1(w_i)` on this server's evaluator (see [`PreparedTags`]).
pub fn prepare_tags(ev: &mut Evaluator<'_>, tags: &[L1Input]) -> Result<PreparedTags> {
    if tags.is_empty() || tags.len() > MAX_TAGS {
        return Err(Error::InvalidParameter(format!(
            "a registration has 1 to {MAX_TAGS} tags"
        )));
    }
    let pk = ev.public_key().clone();
    ev.clear_flag();
    let inputs = tags
        .iter()
        .map(|t| PreparedInput::new(&pk, &complement_input(&pk, t)?, true))
        .collect::<Result<Vec<_>>>()?;
    let loads = inputs
        .iter()
        .map(|x| ev.load(x))
        .collect::<Result<Vec<_>>>()?;
    Ok(PreparedTags {
        inputs,
        loads,
        flagged: ev.flagged(),
    })
}

/// One record's evaluation of the conjunction program with randomized multiplications: this
/// server's output share bit and flag. Both servers must use evaluators under the same nonce.
pub fn eval_record(
    ev: &mut Evaluator<'_>,
    tags: &PreparedTags,
    record: &[bool],
) -> Result<(bool, bool)> {
    if record.len() != tags.inputs.len() {
        return Err(Error::InvalidParameter(format!(
            "the record has {} tag bits, the registration {}",
            record.len(),
            tags.inputs.len()
        )));
    }
    let prog = conjunction_program(record)?;
    let out = eval(
        ev,
        &prog,
        &tags.inputs,
        Some(&tags.loads),
        EvalOptions { randomized: true },
    )?;
    let bit = out
        .outputs
        .first()
        .ok_or_else(|| Error::Program("no output".into()))?;
    Ok((*bit == 1, out.flagged || tags.flagged))
}
