"""Homomorphic secret sharing from DDH (coterie-hss: Boyle, Couteau, Gilboa, Ishai, Orrù,
CCS 2017).

A client encrypts integer inputs under a public key; two servers, each holding an evaluation
key, evaluate a *restricted-multiplication straight-line* (RMS) program on them **without
talking to each other**; each returns an output share and the client reconstructs the outputs
as ``O_0 - O_1 mod beta``. Correctness is Las Vegas: an output can only be wrong when **both**
servers flag a possible failure, which :func:`reconstruct` reports as :class:`FlaggedError`.

RMS programs are written as Python expressions over symbolic inputs: ``+``, ``-``, integer
constants, multiplication by an integer, and products of an **input** by a computed value
(never of two computed values). Everything is computed by the Rust crate; this module only
records the expression and hands it to the crate's ``ProgramBuilder``.

The conversions behind each multiplication handle payloads in ``[0, magnitude_bound]``: keep
every input and every product ``x * y`` of a program in that range (sums, differences and
scalings may be negative): outside it an output can be wrong without both flags.
:meth:`Program.eval_plain` (which :func:`run_in_process` calls first) refuses inputs that break
this rule: a negative load or product, a memory value above ``M_RMS`` in absolute value.

>>> from coterie import hss
>>> params = hss.Params.insecure_toy(4, 16, 10)   # toy group: no security
>>> pk, ek0, ek1 = hss.keygen(params, insecure_seed=1)
>>> prog = hss.program(lambda x, y, z: x * y + 3 * z, beta=8, magnitude_bound=4)
>>> prog.eval_plain([1, 1, 1])
[4]
>>> hss.run_in_process(prog, [1, 1, 1], pk, ek0, ek1)
[4]

The same by hand: the client encrypts, each server evaluates, the client reconstructs.

>>> cts = pk.encrypt_all([1, 0, 1], insecure_seed=2)
>>> s0 = hss.evaluate(pk, ek0, prog, cts, nonce=7)
>>> s1 = hss.evaluate(pk, ek1, prog, cts, nonce=7)
>>> hss.reconstruct(s0, s1)
[3]

A product of two computed values is not an RMS program:

>>> x, y, z, w = hss.inputs(4)
>>> (x + y) * (z + w)
Traceback (most recent call last):
...
coterie.hss.RmsError: an RMS program multiplies an input by a memory value; (x0 + x1) * (x2 + x3) multiplies two computed values
"""

from __future__ import annotations

import inspect
import operator
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

from ._native import CoterieError
from ._native import hss as _hss

Params = _hss.Params
PublicKey = _hss.PublicKey
EvalKey = _hss.EvalKey
SecretKey = _hss.SecretKey
EncryptedInput = _hss.EncryptedInput
ShareBatch = _hss.ShareBatch
ProgramBuilder = _hss.ProgramBuilder
Program = _hss.Program
OutputShare = _hss.OutputShare
FlaggedError = _hss.FlaggedError
groups = _hss.groups
keygen = _hss.keygen
insecure_keygen_trusted_dealer = _hss.insecure_keygen_trusted_dealer
evaluate = _hss.evaluate
reconstruct = _hss.reconstruct

__all__ = [
    "CoterieError",
    "FlaggedError",
    "RmsError",
    "Params",
    "PublicKey",
    "EvalKey",
    "SecretKey",
    "EncryptedInput",
    "ShareBatch",
    "ProgramBuilder",
    "Program",
    "OutputShare",
    "Expr",
    "groups",
    "keygen",
    "insecure_keygen_trusted_dealer",
    "inputs",
    "program",
    "evaluate",
    "reconstruct",
    "run_in_process",
]


class RmsError(ValueError):
    """An expression that no RMS program computes (e.g. a product of two computed values)."""


_RMS_RULE = "an RMS program multiplies an input by a memory value"

# Node kinds of an expression.
_INPUT, _CONST, _ADD, _SUB, _SCALE, _MUL = "input", "const", "add", "sub", "scale", "mul"


class Expr:
    """A symbolic value of an RMS program, built from :func:`inputs` with ``+``, ``-``,
    integer constants, ``k * e`` for an integer ``k``, and ``x * e`` for an input ``x`` and any
    expression ``e`` (``x ** k`` for an input too). Pass the result to :func:`program`.

    >>> x, y = inputs(2)
    >>> x * y - 2 * x + 1
    x0 * x1 - 2 * x0 + 1
    """

    __slots__ = ("_kind", "_args", "_n")

    def __init__(self, kind: str, args: tuple, n: int = 0) -> None:
        self._kind = kind
        self._args = args
        self._n = n  # number of inputs of the family this expression's inputs come from

    # -- construction helpers ---------------------------------------------------------------
    @staticmethod
    def _lift(v: object) -> "Expr":
        if isinstance(v, Expr):
            return v
        k = _as_int(v)
        if k is not None:
            return Expr(_CONST, (k,))
        raise TypeError(
            f"RMS expressions combine inputs and integers, not {type(v).__name__}"
        )

    @staticmethod
    def _n_of(*es: "Expr") -> int:
        return max(e._n for e in es)

    @property
    def is_input(self) -> bool:
        """Whether this expression is an input ``x_i`` itself."""
        return self._kind == _INPUT

    @property
    def index(self) -> int:
        """The input index of an input expression (``ValueError`` otherwise)."""
        if self._kind != _INPUT:
            raise ValueError(f"{self!r} is not an input")
        return self._args[0]

    # -- operators ------------------------------------------------------------------------
    def __add__(self, other: object) -> "Expr":
        if _as_int(other) == 0:
            return self
        try:
            o = Expr._lift(other)
        except TypeError:
            return NotImplemented
        return Expr(_ADD, (self, o), Expr._n_of(self, o))

    def __radd__(self, other: object) -> "Expr":
        if _as_int(other) == 0:
            return self  # so that sum([...]) works
        try:
            o = Expr._lift(other)
        except TypeError:
            return NotImplemented
        return Expr(_ADD, (o, self), Expr._n_of(self, o))

    def __sub__(self, other: object) -> "Expr":
        try:
            o = Expr._lift(other)
        except TypeError:
            return NotImplemented
        return Expr(_SUB, (self, o), Expr._n_of(self, o))

    def __rsub__(self, other: object) -> "Expr":
        try:
            o = Expr._lift(other)
        except TypeError:
            return NotImplemented
        return Expr(_SUB, (o, self), Expr._n_of(self, o))

    def __neg__(self) -> "Expr":
        return Expr(_SCALE, (self, -1), self._n)

    def __pos__(self) -> "Expr":
        return self

    def __mul__(self, other: object) -> "Expr":
        if isinstance(other, Expr):
            if other._kind == _INPUT:
                return Expr(_MUL, (other._args[0], self), Expr._n_of(self, other))
            if self._kind == _INPUT:
                return Expr(_MUL, (self._args[0], other), Expr._n_of(self, other))
            raise RmsError(
                f"{_RMS_RULE}; ({self!r}) * ({other!r}) multiplies two computed values"
            )
        return self.__rmul__(other)

    def __rmul__(self, other: object) -> "Expr":
        k = _as_int(other)
        if k is None:
            return NotImplemented
        if k == 1:
            return self
        return Expr(_SCALE, (self, k), self._n)

    def __pow__(self, k: object) -> "Expr":
        k = _as_int(k)
        if k is None or k < 0:
            return NotImplemented
        if k == 0:
            return Expr(_CONST, (1,), self._n)
        if k == 1:
            return self
        if self._kind != _INPUT:
            raise RmsError(
                f"{_RMS_RULE}; ({self!r}) ** {k} multiplies two computed values"
            )
        e: Expr = self
        for _ in range(k - 1):
            e = self * e
        return e

    def __bool__(self) -> bool:
        raise TypeError("an RMS expression has no truth value (it is symbolic)")

    # -- display --------------------------------------------------------------------------
    def __repr__(self) -> str:
        return _show(self)


def _as_int(v: object) -> Optional[int]:
    """``v`` as a Python int if it is an integer (``int``, ``bool``, numpy integers), else None."""
    if isinstance(v, (float, complex, str)):
        return None
    try:
        # int(): an exact int (Python 3.9's operator.index returns a bool as it is)
        return int(operator.index(v))  # type: ignore[arg-type]
    except TypeError:
        return None


def _show(e: Expr) -> str:
    # Precedence: 0 sum, 1 product, 2 atom. Built iteratively (expressions may be deep).
    memo: Dict[int, Tuple[str, int]] = {}
    stack: List[Tuple[Expr, bool]] = [(e, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in memo:
            continue
        kids = [a for a in node._args if isinstance(a, Expr)]
        if not done and kids:
            stack.append((node, True))
            stack.extend((k, False) for k in kids)
            continue
        k, a = node._kind, node._args
        if k == _INPUT:
            memo[id(node)] = (f"x{a[0]}", 2)
        elif k == _CONST:
            memo[id(node)] = (str(a[0]), 2 if a[0] >= 0 else 0)
        elif k in (_ADD, _SUB):
            ls, _ = memo[id(a[0])]
            rs, rp = memo[id(a[1])]
            if k == _SUB and rp == 0:
                rs = f"({rs})"
            op = " + " if k == _ADD else " - "
            memo[id(node)] = (ls + op + rs, 0)
        elif k == _SCALE:
            s, p = memo[id(a[0])]
            if a[1] == -1:
                memo[id(node)] = (f"-({s})" if p == 0 else f"-{s}", 0)
            else:
                memo[id(node)] = (f"{a[1]} * " + (f"({s})" if p == 0 else s), 1)
        else:  # _MUL: input a[0] times memory a[1]
            s, p = memo[id(a[1])]
            memo[id(node)] = ((f"({s})" if p == 0 else s) + f" * x{a[0]}", 1)
    s, _ = memo[id(e)]
    return s


def inputs(n: int) -> Tuple[Expr, ...]:
    """The ``n`` symbolic inputs ``x0 .. x(n-1)`` of a program.

    >>> x, y, z = inputs(3)
    >>> program(x * y + z, beta=16, magnitude_bound=2).num_inputs
    3
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError(f"the number of inputs must be a nonnegative integer, got {n!r}")
    return tuple(Expr(_INPUT, (i,), n) for i in range(n))


Outputs = Union[Expr, int, Sequence[Union[Expr, int]], Callable[..., object]]


def program(
    outputs: Outputs,
    *,
    beta: Union[int, Sequence[int]] = 2,
    magnitude_bound: int = 1,
    num_inputs: Optional[int] = None,
    terminal: bool = True,
) -> Program:
    """Builds the crate's RMS program computing ``outputs`` (one expression, a sequence of them,
    or a function of the inputs such as ``lambda x, y: x * y``), each output reduced mod its
    ``beta`` (an int for all, or one per output). ``magnitude_bound`` is the crate's ``M_RMS``:
    every memory value must stay within it. With ``terminal`` an output whose last step is a
    product uses a terminal multiplication (one conversion).
    ``num_inputs`` defaults to the size of the :func:`inputs` family used (or the function's
    number of parameters). Raises :class:`RmsError` for a non-RMS expression, ``TypeError`` for
    operands that are not expressions or integers, and ``CoterieError`` for what the crate's
    ``Program.validate`` refuses.

    >>> prog = program(lambda x, y: [x * y, x + y], beta=[2, 4], magnitude_bound=2)
    >>> prog.betas, prog.eval_plain([1, 1])
    ([2, 4], [1, 2])
    """
    if callable(outputs) and not isinstance(outputs, Expr):
        if num_inputs is None:
            sig = inspect.signature(outputs)
            kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
            ps = [p for p in sig.parameters.values() if p.kind in kinds]
            if any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in sig.parameters.values()):
                raise ValueError("pass num_inputs= for a function with *args")
            num_inputs = len(ps)
        outputs = outputs(*inputs(num_inputs))  # type: ignore[assignment]
    if isinstance(outputs, (Expr, int)):
        outs: List[Expr] = [Expr._lift(outputs)]
    elif isinstance(outputs, (list, tuple)):
        outs = [Expr._lift(o) for o in outputs]
    else:
        raise TypeError(
            f"program() takes expressions, a sequence of them or a function, not {type(outputs).__name__}"
        )
    if isinstance(beta, int):
        betas = [beta] * len(outs)
    else:
        betas = list(beta)
        if len(betas) != len(outs):
            raise ValueError(f"{len(betas)} moduli for {len(outs)} outputs")
    if num_inputs is None:
        num_inputs = max((o._n for o in outs), default=0)
    return _compile(outs, betas, num_inputs, magnitude_bound, terminal)


def _compile(
    outs: List[Expr], betas: List[int], num_inputs: int, m_rms: int, terminal: bool
) -> Program:
    b = ProgramBuilder(num_inputs, m_rms)
    cell: Dict[int, int] = {}  # id(expr) -> memory cell
    loads: Dict[int, int] = {}  # input index -> memory cell of its load
    used_as_memory: set = set()
    for o in outs:  # which nodes other nodes read (those must be computed, not terminal)
        stack = [o]
        seen: set = set()
        while stack:
            e = stack.pop()
            if id(e) in seen:
                continue
            seen.add(id(e))
            for a in e._args:
                if isinstance(a, Expr):
                    used_as_memory.add(id(a))
                    stack.append(a)

    def compute(root: Expr) -> int:
        stack: List[Tuple[Expr, bool]] = [(root, False)]
        while stack:
            e, done = stack.pop()
            if id(e) in cell:
                continue
            kids = [a for a in e._args if isinstance(a, Expr)]
            if not done and kids:
                stack.append((e, True))
                stack.extend((k, False) for k in kids)
                continue
            k, a = e._kind, e._args
            if k == _INPUT:
                if a[0] not in loads:
                    loads[a[0]] = b.load(a[0])
                v = loads[a[0]]
            elif k == _CONST:
                v = b.constant(a[0])
            elif k == _ADD:
                v = b.add(cell[id(a[0])], cell[id(a[1])])
            elif k == _SUB:
                v = b.sub(cell[id(a[0])], cell[id(a[1])])
            elif k == _SCALE:
                v = b.scale(cell[id(a[0])], a[1])
            else:
                v = b.mul(a[0], cell[id(a[1])])
            cell[id(e)] = v
        return cell[id(root)]

    for o, beta in zip(outs, betas):
        if (
            terminal
            and o._kind == _MUL
            and id(o) not in used_as_memory
            and id(o) not in cell
        ):
            b.terminal_mul(o._args[0], compute(o._args[1]), beta)
        else:
            b.output(compute(o), beta)
    return b.build()


def run_in_process(
    prog: Program,
    values: Sequence[int],
    pk: PublicKey,
    ek0: EvalKey,
    ek1: EvalKey,
    *,
    nonce: int = 0,
    randomized: bool = False,
    max_attempts: int = 8,
    insecure_seed: Optional[int] = None,
) -> List[int]:
    """Client and both servers in one process: checks ``values`` with the crate's
    :meth:`Program.eval_plain` (wrong count, magnitudes beyond ``M_RMS``), encrypts them,
    evaluates at server 0 and server 1 under ``nonce``, and reconstructs; when both servers
    flag, evaluates again under the next nonce, at most ``max_attempts`` times in all
    (then raises :class:`FlaggedError`).

    >>> params = Params.insecure_toy(4, 16, 10)
    >>> pk, ek0, ek1, _ = insecure_keygen_trusted_dealer(params, insecure_seed=3)
    >>> run_in_process(program(lambda x, y: x * y), [1, 1], pk, ek0, ek1)
    [1]
    """
    if max_attempts < 1:
        raise ValueError("max_attempts must be at least 1")
    prog.eval_plain(list(values))
    cts = pk.encrypt_all(list(values), insecure_seed=insecure_seed)
    last: Optional[FlaggedError] = None
    for attempt in range(max_attempts):
        n = nonce + attempt
        s0 = evaluate(pk, ek0, prog, cts, nonce=n, randomized=randomized)
        s1 = evaluate(pk, ek1, prog, cts, nonce=n, randomized=randomized)
        try:
            return reconstruct(s0, s1)
        except FlaggedError as e:
            last = e
    assert last is not None
    raise last
