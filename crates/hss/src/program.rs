//! RMS programs (spec §1.2, §3.4), a builder so programs are written as code, and the program
//! classes of spec §4.9–§4.10: branching programs (one RMS multiplication per node), boolean
//! formulas (through their branching program) and threshold formulas.
//!
//! ```
//! use coterie_hss::program::ProgramBuilder;
//! // y = x0·x1 + x2, output mod 2
//! let mut b = ProgramBuilder::new(3);
//! let y0 = b.load(0);
//! let y1 = b.mul(1, y0);
//! let y2 = b.load(2);
//! let y3 = b.add(y1, y2);
//! b.output(y3, 2);
//! let prog = b.build();
//! assert_eq!(prog.multiplicative_size(), 3);
//! assert_eq!(prog.eval_plain(&[1, 1, 0]).unwrap(), vec![1]);
//! ```

use coterie_math::bigint::BigInt;
use serde::{Deserialize, Serialize};

use crate::scheme::{Evaluator, L2Share, PreparedInput};
use crate::{Error, Result};

/// Largest accepted program (instructions, memory cells, inputs) when decoding.
pub const MAX_PROGRAM_LEN: usize = 1 << 20;

/// A memory cell of a program.
pub type Var = u32;

/// One RMS instruction (sorted by position = id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Instr {
    /// `y_dst ← x_input` (`Mult(L1(x), L2(1))`).
    Load {
        /// Destination cell.
        dst: Var,
        /// Input index.
        input: u32,
    },
    /// `y_dst ← k` (public constant, free: `k·L2(1)`).
    Const {
        /// Destination cell.
        dst: Var,
        /// The constant.
        value: i64,
    },
    /// `y_dst ← y_a + y_b`.
    Add {
        /// Destination cell.
        dst: Var,
        /// First operand.
        a: Var,
        /// Second operand.
        b: Var,
    },
    /// `y_dst ← y_a − y_b`.
    Sub {
        /// Destination cell.
        dst: Var,
        /// First operand.
        a: Var,
        /// Second operand.
        b: Var,
    },
    /// `y_dst ← k·y_a` (public integer `k`).
    Scale {
        /// Destination cell.
        dst: Var,
        /// Operand.
        a: Var,
        /// The scalar.
        k: i64,
    },
    /// `y_dst ← x_input · y_mem` (never memory × memory).
    Mul {
        /// Destination cell.
        dst: Var,
        /// Input index.
        input: u32,
        /// Memory operand.
        mem: Var,
    },
    /// Output `x_input · y_mem mod β` through a terminal multiplication (one conversion).
    TerminalMul {
        /// Input index.
        input: u32,
        /// Memory operand.
        mem: Var,
        /// Output modulus.
        beta: u64,
    },
    /// Output `y_mem mod β`.
    Output {
        /// Memory operand.
        mem: Var,
        /// Output modulus.
        beta: u64,
    },
}

/// An RMS program with magnitude bound `M_RMS`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Program {
    /// Number of inputs.
    pub num_inputs: u32,
    /// Number of memory cells.
    pub num_mem: u32,
    /// Magnitude bound of memory values (1 for boolean programs).
    pub m_rms: u64,
    /// The instructions.
    pub instrs: Vec<Instr>,
}

// Stored and sent in the coterie envelope as `HSpg` (an RMS program).
coterie_base::versioned! {
    Program => b"HSpg" v 1,
}

/// Builds a [`Program`] instruction by instruction.
#[derive(Debug, Clone)]
pub struct ProgramBuilder {
    prog: Program,
}

impl ProgramBuilder {
    /// A program over `num_inputs` inputs, `M_RMS = 1`.
    pub fn new(num_inputs: u32) -> Self {
        Self {
            prog: Program {
                num_inputs,
                num_mem: 0,
                m_rms: 1,
                instrs: vec![],
            },
        }
    }
    /// Sets the magnitude bound `M_RMS`.
    pub fn magnitude_bound(mut self, m: u64) -> Self {
        self.prog.m_rms = m;
        self
    }
    fn fresh(&mut self) -> Var {
        self.prog.num_mem += 1;
        self.prog.num_mem - 1
    }
    /// `y ← x_input`.
    pub fn load(&mut self, input: u32) -> Var {
        let dst = self.fresh();
        self.prog.instrs.push(Instr::Load { dst, input });
        dst
    }
    /// `y ← k`.
    pub fn constant(&mut self, value: i64) -> Var {
        let dst = self.fresh();
        self.prog.instrs.push(Instr::Const { dst, value });
        dst
    }
    /// `y ← a + b`.
    pub fn add(&mut self, a: Var, b: Var) -> Var {
        let dst = self.fresh();
        self.prog.instrs.push(Instr::Add { dst, a, b });
        dst
    }
    /// `y ← a − b`.
    pub fn sub(&mut self, a: Var, b: Var) -> Var {
        let dst = self.fresh();
        self.prog.instrs.push(Instr::Sub { dst, a, b });
        dst
    }
    /// `y ← k·a`.
    pub fn scale(&mut self, a: Var, k: i64) -> Var {
        let dst = self.fresh();
        self.prog.instrs.push(Instr::Scale { dst, a, k });
        dst
    }
    /// `y ← x_input · mem`.
    pub fn mul(&mut self, input: u32, mem: Var) -> Var {
        let dst = self.fresh();
        self.prog.instrs.push(Instr::Mul { dst, input, mem });
        dst
    }
    /// Outputs `x_input · mem mod β` with a terminal multiplication.
    pub fn terminal_mul(&mut self, input: u32, mem: Var, beta: u64) {
        self.prog
            .instrs
            .push(Instr::TerminalMul { input, mem, beta });
    }
    /// Outputs `mem mod β`.
    pub fn output(&mut self, mem: Var, beta: u64) {
        self.prog.instrs.push(Instr::Output { mem, beta });
    }
    /// The program.
    pub fn build(self) -> Program {
        self.prog
    }
}

impl Program {
    /// Multiplicative size: loads, multiplications and terminal multiplications.
    pub fn multiplicative_size(&self) -> usize {
        self.instrs
            .iter()
            .filter(|i| {
                matches!(
                    i,
                    Instr::Load { .. } | Instr::Mul { .. } | Instr::TerminalMul { .. }
                )
            })
            .count()
    }

    /// Checks a (decoded) program: sizes, every reference defined before use, each
    /// cell written once, `β ≥ 1`.
    pub fn validate(&self) -> Result<()> {
        if self.instrs.len() > MAX_PROGRAM_LEN
            || self.num_mem as usize > MAX_PROGRAM_LEN
            || self.num_inputs as usize > MAX_PROGRAM_LEN
            || self.m_rms == 0
        {
            return Err(Error::Malformed("program too large or M_RMS = 0".into()));
        }
        let mut def = vec![false; self.num_mem as usize];
        let inp = |i: u32| -> Result<()> {
            if i >= self.num_inputs {
                return Err(Error::Program(format!("input {i} out of range")));
            }
            Ok(())
        };
        let used = |v: Var, def: &[bool]| -> Result<()> {
            if !def.get(v as usize).copied().unwrap_or(false) {
                return Err(Error::Program(format!("cell {v} used before definition")));
            }
            Ok(())
        };
        let set = |v: Var, def: &mut Vec<bool>| -> Result<()> {
            match def.get_mut(v as usize) {
                Some(x) if !*x => {
                    *x = true;
                    Ok(())
                }
                _ => Err(Error::Program(format!(
                    "cell {v} out of range or redefined"
                ))),
            }
        };
        for ins in &self.instrs {
            match *ins {
                Instr::Load { dst, input } => {
                    inp(input)?;
                    set(dst, &mut def)?;
                }
                Instr::Const { dst, .. } => set(dst, &mut def)?,
                Instr::Add { dst, a, b } | Instr::Sub { dst, a, b } => {
                    used(a, &def)?;
                    used(b, &def)?;
                    set(dst, &mut def)?;
                }
                Instr::Scale { dst, a, .. } => {
                    used(a, &def)?;
                    set(dst, &mut def)?;
                }
                Instr::Mul { dst, input, mem } => {
                    inp(input)?;
                    used(mem, &def)?;
                    set(dst, &mut def)?;
                }
                Instr::TerminalMul { input, mem, beta } => {
                    inp(input)?;
                    used(mem, &def)?;
                    if beta == 0 {
                        return Err(Error::Program("beta = 0".into()));
                    }
                }
                Instr::Output { mem, beta } => {
                    used(mem, &def)?;
                    if beta == 0 {
                        return Err(Error::Program("beta = 0".into()));
                    }
                }
            }
        }
        Ok(())
    }

    /// Plain evaluation on cleartext inputs (the reference). `Err` if a memory value exceeds
    /// `M_RMS` in absolute value, if a value that goes through a share conversion (a load, an
    /// input times a memory value) lies outside `[0, M_RMS]` — the distributed discrete log finds
    /// distances in `[0, M_RMS]` only, so a negative one would come out wrong without a flag — or
    /// if the arithmetic overflows `i64`.
    pub fn eval_plain(&self, inputs: &[i64]) -> Result<Vec<i64>> {
        self.validate()?;
        if inputs.len() != self.num_inputs as usize {
            return Err(Error::Program("wrong number of inputs".into()));
        }
        let mut mem = vec![0i64; self.num_mem as usize];
        let mut out = vec![];
        let m = i64::try_from(self.m_rms).unwrap_or(i64::MAX);
        let chk = |v: Option<i64>| -> Result<i64> {
            match v {
                Some(v) if v.unsigned_abs() <= m.unsigned_abs() => Ok(v),
                Some(_) => Err(Error::Program("memory value exceeds M_RMS".into())),
                None => Err(Error::Program("a value overflows 64-bit integers".into())),
            }
        };
        let conv = |v: Option<i64>| -> Result<i64> {
            match chk(v)? {
                v if v >= 0 => Ok(v),
                _ => Err(Error::Program(
                    "a converted value (a load, or an input times a memory value) is negative; \
                     share conversion needs it in [0, M_RMS]"
                        .into(),
                )),
            }
        };
        for ins in &self.instrs {
            match *ins {
                Instr::Load { dst, input } => {
                    mem[dst as usize] = conv(Some(inputs[input as usize]))?
                }
                Instr::Const { dst, value } => mem[dst as usize] = chk(Some(value))?,
                Instr::Add { dst, a, b } => {
                    mem[dst as usize] = chk(mem[a as usize].checked_add(mem[b as usize]))?
                }
                Instr::Sub { dst, a, b } => {
                    mem[dst as usize] = chk(mem[a as usize].checked_sub(mem[b as usize]))?
                }
                Instr::Scale { dst, a, k } => {
                    mem[dst as usize] = chk(mem[a as usize].checked_mul(k))?
                }
                Instr::Mul { dst, input, mem: y } => {
                    mem[dst as usize] = conv(inputs[input as usize].checked_mul(mem[y as usize]))?
                }
                Instr::TerminalMul {
                    input,
                    mem: y,
                    beta,
                } => {
                    let v = conv(inputs[input as usize].checked_mul(mem[y as usize]))?;
                    out.push(v.rem_euclid(beta as i64))
                }
                Instr::Output { mem: y, beta } => out.push(mem[y as usize].rem_euclid(beta as i64)),
            }
        }
        Ok(out)
    }
}

/// How a server evaluates a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EvalOptions {
    /// Use `RandMult` (spec §4.5) for multiplications of bits; needs `L2(x)` of each input used
    /// (taken from `input_l2` in secret-key mode, otherwise loaded once per input).
    pub randomized: bool,
}

/// Result of one server's evaluation: its output shares (masked, reduce as `O_0 − O_1 mod β`)
/// and its flag `γ_b` (`true` = ⊥, possible failure).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalOutput {
    /// Output shares, in instruction order.
    pub outputs: Vec<BigInt>,
    /// `γ_b`.
    pub flagged: bool,
}

/// `Eval(b, ek_b, (ct_i), P)`: one server's evaluation of `prog` on prepared inputs.
/// `input_l2` (secret-key HSS) supplies `L2(x_i)` shares, making loads free.
///
/// # Example
///
/// `y = x0·x1 + x2` on encrypted bits, evaluated by both servers, reconstructed mod 4.
///
/// ```
/// use coterie_hss::program::{EvalOptions, ProgramBuilder, eval};
/// use coterie_hss::scheme::{Evaluator, Params, PreparedInput, insecure_keygen_trusted_dealer, reconstruct};
/// use coterie_math::bigint::BigInt;
/// use rand::SeedableRng;
/// let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(5); // insecure fixed seed
/// let params = Params::insecure_toy(4, 16, 10);
/// let (pk, ek0, ek1, _) = insecure_keygen_trusted_dealer(&params, &mut rng).unwrap();
/// let mut b = ProgramBuilder::new(3);
/// let x0 = b.load(0);
/// let p = b.mul(1, x0);
/// let x2 = b.load(2);
/// let y = b.add(p, x2);
/// b.output(y, 4);
/// let prog = b.build();
/// let enc = pk.encryptor().unwrap();
/// let inputs: Vec<PreparedInput> = [1, 1, 1]
///     .iter()
///     .map(|&v| PreparedInput::new(&pk, &enc.encrypt(&pk, &BigInt::from(v), &mut rng), false).unwrap())
///     .collect();
/// let out: Vec<_> = [&ek0, &ek1]
///     .iter()
///     .map(|ek| {
///         let mut ev = Evaluator::new(&pk, ek, 1).unwrap();
///         eval(&mut ev, &prog, &inputs, None, EvalOptions::default()).unwrap()
///     })
///     .collect();
/// if !(out[0].flagged && out[1].flagged) {
///     let y = reconstruct(&out[0].outputs[0], &out[1].outputs[0], &BigInt::from(4)).unwrap();
///     assert_eq!(y, 2);
/// }
/// ```
pub fn eval(
    ev: &mut Evaluator<'_>,
    prog: &Program,
    inputs: &[PreparedInput],
    input_l2: Option<&[L2Share]>,
    opts: EvalOptions,
) -> Result<EvalOutput> {
    prog.validate()?;
    if inputs.len() != prog.num_inputs as usize || input_l2.is_some_and(|l| l.len() != inputs.len())
    {
        return Err(Error::Program("wrong number of inputs".into()));
    }
    ev.clear_flag();
    let mut mem: Vec<Option<L2Share>> = vec![None; prog.num_mem as usize];
    let mut loaded: Vec<Option<L2Share>> = match input_l2 {
        Some(l) => l.iter().cloned().map(Some).collect(),
        None => vec![None; inputs.len()],
    };
    let mut outputs = vec![];
    let get = |mem: &Vec<Option<L2Share>>, v: Var| -> Result<L2Share> {
        mem[v as usize]
            .clone()
            .ok_or_else(|| Error::Program("undefined cell".into()))
    };
    for ins in &prog.instrs {
        match *ins {
            Instr::Load { dst, input } => {
                let v = match &loaded[input as usize] {
                    Some(v) => v.clone(),
                    None => {
                        // at the program's bound: an input above 1 loaded at bound 1 would
                        // convert wrongly without a flag
                        let v = ev.load_bounded(&inputs[input as usize], prog.m_rms)?;
                        loaded[input as usize] = Some(v.clone());
                        v
                    }
                };
                mem[dst as usize] = Some(v);
            }
            Instr::Const { dst, value } => mem[dst as usize] = Some(ev.one().scale(value)),
            Instr::Add { dst, a, b } => mem[dst as usize] = Some(get(&mem, a)?.add(&get(&mem, b)?)),
            Instr::Sub { dst, a, b } => mem[dst as usize] = Some(get(&mem, a)?.sub(&get(&mem, b)?)),
            Instr::Scale { dst, a, k } => mem[dst as usize] = Some(get(&mem, a)?.scale(k)),
            Instr::Mul { dst, input, mem: y } => {
                let yv = get(&mem, y)?;
                let x = &inputs[input as usize];
                let r = if opts.randomized && prog.m_rms == 1 && x.complement.is_some() {
                    let lx = match &loaded[input as usize] {
                        Some(v) => v.clone(),
                        None => {
                            let v = ev.load(x)?;
                            loaded[input as usize] = Some(v.clone());
                            v
                        }
                    };
                    ev.rand_mult(x, &lx, &yv)?
                } else {
                    ev.mult_bounded(x, &yv, prog.m_rms)?
                };
                mem[dst as usize] = Some(r);
            }
            Instr::TerminalMul {
                input,
                mem: y,
                beta,
            } => {
                let yv = get(&mem, y)?;
                let share =
                    ev.terminal_mult_bounded(&inputs[input as usize], &yv, beta, prog.m_rms)?;
                outputs.push(ev.output_value(&BigInt::from(share), &BigInt::from(beta))?);
            }
            Instr::Output { mem: y, beta } => {
                let yv = get(&mem, y)?;
                outputs.push(ev.output(&yv, &BigInt::from(beta))?);
            }
        }
    }
    Ok(EvalOutput {
        outputs,
        flagged: ev.flagged(),
    })
}

/// A node of a layered deterministic branching program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum BpNode {
    /// Tests input `var`: goes to `on1` if it is 1, to `on0` otherwise (both later nodes).
    Test {
        /// Input index.
        var: u32,
        /// Successor when the input is 0.
        on0: u32,
        /// Successor when the input is 1.
        on1: u32,
    },
    /// The accepting sink.
    Accept,
    /// The rejecting sink.
    Reject,
}

/// A deterministic branching program; nodes in topological order, node 0 is the source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BranchingProgram {
    /// Number of inputs.
    pub num_inputs: u32,
    /// Nodes; every edge goes to a larger index.
    pub nodes: Vec<BpNode>,
}

// Stored and sent in the coterie envelope as `HSbp` (a branching program).
coterie_base::versioned! {
    BranchingProgram => b"HSbp" v 1,
}

impl BranchingProgram {
    /// Checks topological order, ranges and the presence of one accepting sink.
    pub fn validate(&self) -> Result<()> {
        if self.nodes.len() > MAX_PROGRAM_LEN {
            return Err(Error::Malformed("bad branching program header".into()));
        }
        let n = self.nodes.len() as u32;
        let mut accepts = 0;
        for (i, nd) in self.nodes.iter().enumerate() {
            match *nd {
                BpNode::Test { var, on0, on1 } => {
                    if var >= self.num_inputs
                        || on0 <= i as u32
                        || on1 <= i as u32
                        || on0 >= n
                        || on1 >= n
                    {
                        return Err(Error::Program(format!("bad edge at node {i}")));
                    }
                }
                BpNode::Accept => accepts += 1,
                BpNode::Reject => {}
            }
        }
        if accepts != 1 {
            return Err(Error::Program("need exactly one accepting sink".into()));
        }
        Ok(())
    }

    /// Plain evaluation.
    pub fn eval_plain(&self, x: &[bool]) -> Result<bool> {
        self.validate()?;
        let mut i = 0usize;
        loop {
            match self.nodes[i] {
                BpNode::Test { var, on0, on1 } => {
                    let v = *x
                        .get(var as usize)
                        .ok_or_else(|| Error::Program("missing input".into()))?;
                    i = if v { on1 } else { on0 } as usize;
                }
                BpNode::Accept => return Ok(true),
                BpNode::Reject => return Ok(false),
            }
        }
    }

    fn is_sink(&self, i: u32) -> bool {
        !matches!(self.nodes[i as usize], BpNode::Test { .. })
    }

    /// `(non-terminal, terminal)` RMS multiplications of [`eval_bp`] (one per test node; a node
    /// whose successors are both sinks is terminal).
    pub fn mult_counts(&self) -> (usize, usize) {
        let mut nt = 0;
        let mut t = 0;
        for nd in &self.nodes {
            if let BpNode::Test { on0, on1, .. } = *nd {
                if self.is_sink(on0) && self.is_sink(on1) {
                    t += 1;
                } else {
                    nt += 1;
                }
            }
        }
        (nt, t)
    }

    /// The branching program of a boolean formula (one test node per leaf).
    pub fn from_formula(f: &Formula, num_inputs: u32) -> Result<Self> {
        // Build children first (reverse topological order), then renumber.
        let mut rev: Vec<BpNode> = vec![BpNode::Accept, BpNode::Reject];
        fn build(f: &Formula, t: u32, fl: u32, rev: &mut Vec<BpNode>) -> Result<u32> {
            if rev.len() > MAX_PROGRAM_LEN {
                return Err(Error::Program("formula too large".into()));
            }
            Ok(match f {
                Formula::Var(v) => {
                    rev.push(BpNode::Test {
                        var: *v,
                        on0: fl,
                        on1: t,
                    });
                    (rev.len() - 1) as u32
                }
                Formula::Not(a) => build(a, fl, t, rev)?,
                Formula::And(a, b) => {
                    let sb = build(b, t, fl, rev)?;
                    build(a, sb, fl, rev)?
                }
                Formula::Or(a, b) => {
                    let sb = build(b, t, fl, rev)?;
                    build(a, t, sb, rev)?
                }
            })
        }
        let src = build(f, 0, 1, &mut rev)?;
        // Keep nodes reachable from src, in reverse creation order (creation order is a reverse
        // topological order because children are always built first).
        let n = rev.len();
        let mut reach = vec![false; n];
        reach[src as usize] = true;
        for i in (0..n).rev() {
            if reach[i]
                && let BpNode::Test { on0, on1, .. } = rev[i]
            {
                reach[on0 as usize] = true;
                reach[on1 as usize] = true;
            }
        }
        reach[0] = true;
        let order: Vec<usize> = (0..n).rev().filter(|&i| reach[i]).collect();
        let mut newid = vec![0u32; n];
        for (k, &i) in order.iter().enumerate() {
            newid[i] = k as u32;
        }
        let nodes = order
            .iter()
            .map(|&i| match rev[i] {
                BpNode::Test { var, on0, on1 } => BpNode::Test {
                    var,
                    on0: newid[on0 as usize],
                    on1: newid[on1 as usize],
                },
                ref s => s.clone(),
            })
            .collect();
        let bp = BranchingProgram { num_inputs, nodes };
        bp.validate()?;
        Ok(bp)
    }

    /// The natural branching program of the `n`-out-of-`big_n` threshold function: node
    /// `(ones j < n, zeros z < N − n + 1)` tests input `j + z`; `n(N − n + 1)` test nodes, of
    /// which `n(N − n + 1) − 1` are non-terminal and one terminal (spec §4.10; Sec. 4.5.3's
    /// `(N − n + 1)·n` non-terminal count is off by one).
    pub fn threshold(n: u32, big_n: u32) -> Result<Self> {
        if n == 0 || n > big_n || big_n as usize > 4096 {
            return Err(Error::InvalidParameter("need 1 ≤ n ≤ N ≤ 4096".into()));
        }
        let zmax = big_n - n + 1;
        // Order nodes by layer j + z so that edges go forward.
        let mut ids = std::collections::HashMap::new();
        let mut coords = vec![];
        for layer in 0..big_n {
            for j in 0..n {
                if layer >= j && layer - j < zmax {
                    ids.insert((j, layer - j), coords.len() as u32);
                    coords.push((j, layer - j));
                }
            }
        }
        let acc = coords.len() as u32;
        let rej = acc + 1;
        let mut nodes: Vec<BpNode> = coords
            .iter()
            .map(|&(j, z)| BpNode::Test {
                var: j + z,
                on1: if j + 1 == n { acc } else { ids[&(j + 1, z)] },
                on0: if z + 1 == zmax { rej } else { ids[&(j, z + 1)] },
            })
            .collect();
        nodes.push(BpNode::Accept);
        nodes.push(BpNode::Reject);
        let bp = BranchingProgram {
            num_inputs: big_n,
            nodes,
        };
        bp.validate()?;
        Ok(bp)
    }
}

/// A boolean formula over inputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Formula {
    /// Input `x_i`.
    Var(u32),
    /// Negation.
    Not(Box<Formula>),
    /// Conjunction.
    And(Box<Formula>, Box<Formula>),
    /// Disjunction.
    Or(Box<Formula>, Box<Formula>),
}

impl Formula {
    /// Plain evaluation.
    pub fn eval(&self, x: &[bool]) -> bool {
        match self {
            Formula::Var(i) => x.get(*i as usize).copied().unwrap_or(false),
            Formula::Not(a) => !a.eval(x),
            Formula::And(a, b) => a.eval(x) && b.eval(x),
            Formula::Or(a, b) => a.eval(x) || b.eval(x),
        }
    }
    /// Number of AND/OR gates.
    pub fn gates(&self) -> usize {
        match self {
            Formula::Var(_) => 0,
            Formula::Not(a) => a.gates(),
            Formula::And(a, b) | Formula::Or(a, b) => 1 + a.gates() + b.gates(),
        }
    }
}

/// `EvalBP` (spec §4.9): node value `N = Σ` over incoming edges; for each test node one RMS
/// multiplication `T = Mult(L1(x_v), L2(N))`, `F = L2(N) − T`, `T` to the 1-successor, `F` to
/// the 0-successor. Nodes whose successors are both sinks use a terminal multiplication (only
/// `<x·N>`, with the mod-β flag rule). With `input_l2` (secret-key HSS) the source node's
/// multiplication `Mult(L1(x), L2(1)) = L2(x)` is free, so a formula with `n` gates costs exactly
/// `n` multiplications. Returns the server's masked output share mod `β` of the accept value and
/// the number of RMS multiplications done.
pub fn eval_bp(
    ev: &mut Evaluator<'_>,
    bp: &BranchingProgram,
    inputs: &[PreparedInput],
    input_l2: Option<&[L2Share]>,
    beta: u64,
) -> Result<(EvalOutput, usize)> {
    bp.validate()?;
    if inputs.len() != bp.num_inputs as usize || input_l2.is_some_and(|l| l.len() != inputs.len()) {
        return Err(Error::Program("wrong number of inputs".into()));
    }
    ev.clear_flag();
    let n = bp.nodes.len();
    let mut val: Vec<Option<L2Share>> = vec![None; n];
    val[0] = Some(ev.one());
    let mut accept_y = BigInt::new();
    let mut mults = 0usize;
    let accept = bp
        .nodes
        .iter()
        .position(|x| matches!(x, BpNode::Accept))
        .ok_or_else(|| Error::Program("no accepting sink".into()))? as u32;
    let addto = |val: &mut Vec<Option<L2Share>>, acc_y: &mut BigInt, i: u32, v: L2Share| {
        if i == accept {
            *acc_y += &v.y;
        }
        let slot = &mut val[i as usize];
        *slot = Some(match slot.take() {
            Some(old) => old.add(&v),
            None => v,
        });
    };
    for i in 0..n {
        let BpNode::Test { var, on0, on1 } = bp.nodes[i] else {
            continue;
        };
        let Some(nv) = val[i].take() else {
            continue; // unreachable node
        };
        let x = &inputs[var as usize];
        let both_sinks = bp.is_sink(on0) && bp.is_sink(on1);
        if both_sinks {
            // Terminal: only the <x·N> part matters for the accept value.
            let t = if on1 == accept || on0 == accept {
                mults += 1;
                BigInt::from(ev.terminal_mult(x, &nv, beta)?)
            } else {
                BigInt::new()
            };
            if on1 == accept {
                accept_y += &t;
            }
            if on0 == accept {
                accept_y += BigInt::from(&nv.y - &t);
            }
            continue;
        }
        let t = match (i, input_l2) {
            (0, Some(l2)) => l2[var as usize].clone(),
            _ => {
                mults += 1;
                ev.mult(x, &nv)?
            }
        };
        let f = nv.sub(&t);
        addto(&mut val, &mut accept_y, on1, t);
        addto(&mut val, &mut accept_y, on0, f);
    }
    let out = ev.output_value(&accept_y, &BigInt::from(beta))?;
    Ok((
        EvalOutput {
            outputs: vec![out],
            flagged: ev.flagged(),
        },
        mults,
    ))
}
