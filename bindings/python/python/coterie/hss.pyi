"""Type stub of :mod:`coterie.hss`: DDH homomorphic secret sharing (coterie-hss)."""

from typing import Callable, List, Optional, Sequence, Tuple, Union

from ._native import CoterieError as CoterieError

__all__: List[str]

class FlaggedError(CoterieError):
    """Both servers flagged a possible failure: the output may be wrong; evaluate again."""

class RmsError(ValueError):
    """An expression that no RMS program computes (e.g. a product of two computed values)."""

class Params:
    """HSS parameters: group, key base, key length, pattern length d, window R."""

    @staticmethod
    def table3(eps_log2: int, log_base: int, window: int) -> Params:
        """The paper's Table 3 row (group p1536, 160-bit key, failure 2^-eps_log2)."""
    @staticmethod
    def with_failure(
        group: str, key_bits: int, eps_log2: int, log_base: int, window: int
    ) -> Params:
        """Parameters on a named group for a per-multiplication failure 2^-eps_log2."""
    @staticmethod
    def insecure_toy(log_base: int, key_bits: int, d: int) -> Params:
        """Toy, insecure parameters on the 128-bit toy group (no security)."""
    @property
    def group(self) -> str:
        """The group's name ("p1536", "insecure_toy128", ...)."""
    @property
    def log_base(self) -> int:
        """log2 of the key base B."""
    @property
    def base(self) -> int:
        """The key base B (2, 4 or 16)."""
    @property
    def key_bits(self) -> int:
        """ElGamal key length in bits."""
    @property
    def stat_bits(self) -> int:
        """Statistical masking bits of the integer key shares."""
    @property
    def d(self) -> int:
        """Distinguished-point pattern length d."""
    @property
    def window(self) -> int:
        """Fixed-base window R."""
    @property
    def s(self) -> int:
        """Number of key digits."""
    @property
    def insecure(self) -> bool:
        """Whether these parameters carry no security claim."""
    @property
    def security(self) -> str:
        """The crate's security statement for these parameters."""
    def predicted_failure(self) -> float:
        """Table 2 failure estimate of one randomized RMS multiplication of bits."""
    def __eq__(self, other: object) -> bool: ...

class PublicKey:
    """The public key under which clients encrypt inputs."""

    @property
    def params(self) -> Params:
        """The parameters of this key."""
    def encrypt(self, x: int, *, insecure_seed: Optional[int] = None) -> EncryptedInput:
        """Enc(pk, x): the level-1 encoding of one integer (|x| <= 2^31)."""
    def encrypt_all(
        self, xs: Sequence[int], *, insecure_seed: Optional[int] = None
    ) -> List[EncryptedInput]:
        """Enc(pk, x) of each integer, in order."""
    def to_bytes(self) -> bytes:
        """The key in the coterie envelope (HSpk)."""
    @staticmethod
    def from_bytes(data: bytes) -> PublicKey:
        """Decodes and validates a key from to_bytes."""

class EvalKey:
    """One server's (secret) evaluation key."""

    @property
    def party(self) -> int:
        """The server index, 0 or 1."""
    def to_bytes(self) -> bytes:
        """The key in the coterie envelope (HSek). Secret."""
    @staticmethod
    def from_bytes(data: bytes) -> EvalKey:
        """Decodes a key from to_bytes."""

class SecretKey:
    """The ElGamal secret key (trusted dealer only), for secret-key HSS."""

    def share(
        self, xs: Sequence[int], *, insecure_seed: Optional[int] = None
    ) -> Tuple[ShareBatch, ShareBatch]:
        """Level-2 shares of each integer for server 0 and server 1."""

class EncryptedInput:
    """A level-1 encoding L1(x) of one input, sent to both servers."""

    @property
    def num_digits(self) -> int:
        """Number of digit ciphertexts E(x*c_i)."""
    def validate(self, pk: PublicKey) -> None:
        """Checks the input against pk (digit count, group membership)."""
    def to_bytes(self) -> bytes:
        """The input in the coterie envelope (HSl1)."""
    @staticmethod
    def from_bytes(data: bytes) -> EncryptedInput:
        """Decodes an input from to_bytes."""

class ShareBatch:
    """One server's level-2 shares of a client's inputs (secret-key HSS)."""

    def to_bytes(self) -> bytes:
        """The batch in the coterie envelope (HSl2)."""
    @staticmethod
    def from_bytes(data: bytes) -> ShareBatch:
        """Decodes a batch from to_bytes."""
    def __len__(self) -> int: ...

class ProgramBuilder:
    """The crate's RMS program builder; cell-defining methods return the cell index."""

    def __init__(self, num_inputs: int, magnitude_bound: int = 1) -> None: ...
    def load(self, input: int) -> int:
        """y <- x_input (one conversion, at the program's magnitude bound)."""
    def constant(self, value: int) -> int:
        """y <- value."""
    def add(self, a: int, b: int) -> int:
        """y <- a + b."""
    def sub(self, a: int, b: int) -> int:
        """y <- a - b."""
    def scale(self, a: int, k: int) -> int:
        """y <- k * a."""
    def mul(self, input: int, mem: int) -> int:
        """y <- x_input * mem (input times memory value)."""
    def terminal_mul(self, input: int, mem: int, beta: int) -> None:
        """Outputs x_input * mem mod beta with a terminal multiplication (one conversion)."""
    def output(self, mem: int, beta: int) -> None:
        """Outputs mem mod beta."""
    def build(self) -> Program:
        """The program, checked by the crate's Program.validate."""

class Program:
    """An RMS program of the crate."""

    @property
    def num_inputs(self) -> int:
        """Number of inputs."""
    @property
    def num_mem(self) -> int:
        """Number of memory cells."""
    @property
    def magnitude_bound(self) -> int:
        """The magnitude bound M_RMS."""
    @property
    def betas(self) -> List[int]:
        """The output moduli, in output order."""
    @property
    def multiplicative_size(self) -> int:
        """Loads, multiplications and terminal multiplications."""
    @property
    def instructions(self) -> List[Tuple[Union[str, int], ...]]:
        """The instructions as (name, operands...) tuples."""
    def eval_plain(self, inputs: Sequence[int]) -> List[int]:
        """The crate's plain evaluation (the reference), outputs mod their beta."""
    def to_bytes(self) -> bytes:
        """The program in the coterie envelope (HSpg)."""
    @staticmethod
    def from_bytes(data: bytes) -> Program:
        """Decodes and checks a program from to_bytes."""
    def __len__(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...

class OutputShare:
    """One server's output shares, flag, nonce and output moduli."""

    def __init__(
        self, party: int, values: Sequence[int], betas: Sequence[int], flagged: bool, nonce: int
    ) -> None: ...
    @property
    def party(self) -> int:
        """The server index, 0 or 1."""
    @property
    def values(self) -> List[int]:
        """The masked output shares, in [0, beta)."""
    @property
    def betas(self) -> List[int]:
        """The output moduli."""
    @property
    def flagged(self) -> bool:
        """Whether this server flagged a possible failure."""
    @property
    def nonce(self) -> int:
        """The evaluation nonce."""
    def __eq__(self, other: object) -> bool: ...

class Expr:
    """A symbolic value of an RMS program (inputs, +, -, integer constants and scalars,
    input * value)."""

    @property
    def is_input(self) -> bool:
        """Whether this expression is an input itself."""
    @property
    def index(self) -> int:
        """The input index of an input expression."""
    def __add__(self, other: Union[Expr, int]) -> Expr: ...
    def __radd__(self, other: Union[Expr, int]) -> Expr: ...
    def __sub__(self, other: Union[Expr, int]) -> Expr: ...
    def __rsub__(self, other: Union[Expr, int]) -> Expr: ...
    def __mul__(self, other: Union[Expr, int]) -> Expr: ...
    def __rmul__(self, other: int) -> Expr: ...
    def __pow__(self, k: int) -> Expr: ...
    def __neg__(self) -> Expr: ...
    def __pos__(self) -> Expr: ...

Outputs = Union[Expr, int, Sequence[Union[Expr, int]], Callable[..., object]]

def groups() -> List[Tuple[str, str]]:
    """The named groups with the crate's security statement of each."""

def keygen(
    params: Params, *, insecure_seed: Optional[int] = None
) -> Tuple[PublicKey, EvalKey, EvalKey]:
    """The crate's two-party key generation (dkg), both servers in-process."""

def insecure_keygen_trusted_dealer(
    params: Params, *, insecure_seed: Optional[int] = None
) -> Tuple[PublicKey, EvalKey, EvalKey, SecretKey]:
    """Key generation by one trusted dealer (insecure against the dealer)."""

def inputs(n: int) -> Tuple[Expr, ...]:
    """The n symbolic inputs x0 .. x(n-1) of a program."""

def program(
    outputs: Outputs,
    *,
    beta: Union[int, Sequence[int]] = 2,
    magnitude_bound: int = 1,
    num_inputs: Optional[int] = None,
    terminal: bool = True,
) -> Program:
    """Builds the crate's RMS program computing the given expressions mod beta."""

def evaluate(
    pk: PublicKey,
    ek: EvalKey,
    program: Program,
    inputs: Sequence[EncryptedInput],
    *,
    nonce: int = 0,
    l2: Optional[ShareBatch] = None,
    randomized: bool = False,
) -> OutputShare:
    """One server's evaluation of program on the encrypted inputs."""

def reconstruct(
    share0: OutputShare, share1: OutputShare, *, allow_flagged: bool = False
) -> List[int]:
    """The outputs O_0 - O_1 mod beta; FlaggedError if both servers flagged."""

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
    """Client and both servers in one process, retrying under fresh nonces when both flag."""
