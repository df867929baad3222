"""Type stub of :mod:`coterie.bfv` (BFV, multi-key BFV and threshold re-encryption from
coterie-bfv)."""

from typing import List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from ._native import CoterieError as CoterieError

Values = Union[Sequence[int], npt.NDArray[np.integer], "Plaintext"]
MulKeys = Union["RelinKey", "SharedRelinKey", Sequence["MkRelinKey"]]

class Params:
    """A BFV parameter set with its precomputed context."""

    @staticmethod
    def by_name(
        name: str,
        *,
        t: Optional[int] = None,
        n: Optional[int] = None,
        log_p: Optional[int] = None,
        b: Optional[int] = None,
        m: Optional[int] = None,
    ) -> Params:
        """A named set of ``names()``; ``t`` for he_std_* and insecure_toy (default 65537),
        ``log_p`` for matrigear_*, ``n``/``b``/``m`` for the insecure toys."""
    @staticmethod
    def names() -> List[str]:
        """The names ``by_name`` accepts."""
    @staticmethod
    def custom(
        name: str,
        n: int,
        t: int,
        *,
        log_q: Optional[int] = None,
        moduli: Optional[Sequence[int]] = None,
        sigma: float = 3.2,
        secret: str = "ternary",
        security: str,
    ) -> Params:
        """A set of the caller's choosing (scalar ``t``; ``log_q`` bits of NTT primes or ``moduli``)."""
    @property
    def name(self) -> str:
        """Name of the set (the Rust ``Params::name``)."""
    @property
    def degree(self) -> int:
        """Ring degree N."""
    @property
    def moduli(self) -> List[int]:
        """The ciphertext primes."""
    @property
    def log_q(self) -> int:
        """Total bit size of Q."""
    @property
    def plaintext_modulus(self) -> int:
        """``t``, or ``p = b^M + 1`` for a cyclotomic set."""
    @property
    def t(self) -> Optional[int]:
        """The scalar plaintext modulus (None for a cyclotomic set)."""
    @property
    def cyclotomic(self) -> Optional[Tuple[int, int, int]]:
        """``(D, b, M)`` of a cyclotomic plaintext modulus ``X^D - b`` (else None)."""
    @property
    def security(self) -> str:
        """Security statement and its source."""
    @property
    def sigma(self) -> float:
        """Error width σ."""
    @property
    def secret_distribution(self) -> str:
        """``"ternary"`` or ``"gaussian"``."""
    @property
    def supports_batching(self) -> bool:
        """Whether SIMD batching is available (prime ``t ≡ 1 mod 2N``)."""
    @property
    def slots(self) -> Optional[int]:
        """N with batching, D for a cyclotomic set, else None."""
    @property
    def default_encoding(self) -> str:
        """``"simd"``, ``"slots"`` or ``"coefficients"``."""
    @property
    def max_level(self) -> int:
        """The top level (fresh ciphertexts live there)."""
    @property
    def fingerprint(self) -> bytes:
        """32-byte fingerprint that serialized objects are checked against."""
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class Plaintext:
    """A plaintext of a parameter set."""

    @staticmethod
    def encode(params: Params, values: Values, encoding: Optional[str] = None) -> Plaintext:
        """Encodes values (``"simd"``, ``"coefficients"`` or ``"slots"``)."""
    def decode(self, encoding: Optional[str] = None) -> Union[npt.NDArray[np.uint64], List[int]]:
        """uint64 array of N values (scalar sets) or list of Python ints (cyclotomic sets)."""
    @property
    def params(self) -> Params:
        """The parameter set."""
    def to_bytes(self) -> bytes:
        """The crate's versioned encoding."""
    @staticmethod
    def from_bytes(params: Params, data: bytes) -> Plaintext:
        """Decodes ``to_bytes`` output (CoterieError if malformed)."""
    def __eq__(self, other: object) -> bool: ...

class SecretKey:
    """A secret key."""

    @staticmethod
    def generate(params: Params) -> SecretKey:
        """A fresh secret key."""
    @staticmethod
    def from_coefficients(params: Params, coefficients: Sequence[int]) -> SecretKey:
        """A secret key from its N small signed coefficients."""
    def coefficients(self) -> npt.NDArray[np.int64]:
        """The N coefficients of s (secret)."""
    def public_key(self) -> PublicKey:
        """A fresh public key."""
    def relin_key(self, base_log: Optional[int] = None) -> RelinKey:
        """A relinearization key (RNS gadget, or power-of-two of 2^base_log)."""
    def galois_keys(self, steps: Sequence[int], row_swap: bool = False) -> GaloisKeys:
        """Keys rotating both batching rows by each step (and swapping rows)."""
    def slot_rotation_keys(self, steps: Sequence[int]) -> GaloisKeys:
        """Keys rotating the D slots of a cyclotomic set."""
    def decrypt(self, ct: Ciphertext) -> Plaintext:
        """Decrypts a single-key ciphertext."""
    def encrypt_symmetric(self, pt: Plaintext) -> Ciphertext:
        """Symmetric-key encryption."""
    def noise_budget(self, ct: Ciphertext) -> float:
        """Noise budget in bits (decryption is correct while positive)."""
    @property
    def params(self) -> Params:
        """The parameter set."""
    def to_bytes(self) -> bytes:
        """The crate's versioned encoding (secret)."""
    @staticmethod
    def from_bytes(params: Params, data: bytes) -> SecretKey:
        """Decodes ``to_bytes`` output."""

class PublicKey:
    """A public key."""

    def encrypt(self, pt: Plaintext) -> Ciphertext:
        """Encrypts a plaintext."""
    @property
    def params(self) -> Params:
        """The parameter set."""
    def to_bytes(self) -> bytes:
        """The crate's versioned encoding."""
    @staticmethod
    def from_bytes(params: Params, data: bytes) -> PublicKey:
        """Decodes ``to_bytes`` output."""

class RelinKey:
    """A relinearization key."""

    @property
    def params(self) -> Params:
        """The parameter set."""
    @property
    def base_log(self) -> Optional[int]:
        """None for the RNS gadget, log2 B for a power-of-two one."""
    def to_bytes(self) -> bytes:
        """The crate's versioned encoding."""
    @staticmethod
    def from_bytes(params: Params, data: bytes) -> RelinKey:
        """Decodes ``to_bytes`` output."""

class GaloisKeys:
    """Galois keys, one per Galois element."""

    @property
    def elements(self) -> List[int]:
        """The Galois elements g held (X -> X^g)."""
    @property
    def params(self) -> Params:
        """The parameter set."""
    def __len__(self) -> int: ...
    def to_bytes(self) -> bytes:
        """The crate's versioned encoding."""
    @staticmethod
    def from_bytes(params: Params, data: bytes) -> GaloisKeys:
        """Decodes ``to_bytes`` output."""

class Ciphertext:
    """A single-key or multi-key BFV ciphertext."""

    @property
    def params(self) -> Params:
        """The parameter set."""
    @property
    def level(self) -> int:
        """The level."""
    @property
    def num_parts(self) -> int:
        """Number of polynomials."""
    @property
    def key_ids(self) -> Optional[List[int]]:
        """User ids of a multi-key ciphertext (None for single-key)."""
    @property
    def is_tensor(self) -> bool:
        """Whether this is an unrelinearized multi-key tensor."""
    def add(self, other: Ciphertext) -> Ciphertext:
        """self + other."""
    def sub(self, other: Ciphertext) -> Ciphertext:
        """self - other."""
    def neg(self) -> Ciphertext:
        """-self."""
    def add_plain(self, pt: Plaintext) -> Ciphertext:
        """self + pt."""
    def sub_plain(self, pt: Plaintext) -> Ciphertext:
        """self - pt."""
    def mul_plain(self, pt: Plaintext) -> Ciphertext:
        """self * pt."""
    def multiply(self, other: Ciphertext, keys: MulKeys, *, grouped: bool = True) -> Ciphertext:
        """self * other, relinearized."""
    def mul_no_relin(self, other: Ciphertext) -> Ciphertext:
        """Tensor product without relinearization."""
    def relinearize(self, keys: MulKeys, *, grouped: bool = True) -> Ciphertext:
        """Relinearizes a mul_no_relin result."""
    def rotate_rows(self, k: int, keys: GaloisKeys) -> Ciphertext:
        """Rotates both batching rows left by k."""
    def swap_rows(self, keys: GaloisKeys) -> Ciphertext:
        """Swaps the two batching rows."""
    def rotate_slots(self, r: int, keys: GaloisKeys) -> Ciphertext:
        """Rotates the D slots of a cyclotomic set left by r."""
    def mod_switch_to_next(self) -> Ciphertext:
        """Modulus switching to the next level."""
    def to_bytes(self) -> bytes:
        """The crate's versioned encoding."""
    @staticmethod
    def from_bytes(params: Params, data: bytes) -> Ciphertext:
        """Decodes ``to_bytes`` output."""
    def __add__(self, other: Union[Ciphertext, Plaintext]) -> Ciphertext: ...
    def __radd__(self, other: Union[Ciphertext, Plaintext]) -> Ciphertext: ...
    def __sub__(self, other: Union[Ciphertext, Plaintext]) -> Ciphertext: ...
    def __neg__(self) -> Ciphertext: ...
    def __mul__(self, other: Plaintext) -> Ciphertext: ...
    def __rmul__(self, other: Plaintext) -> Ciphertext: ...

class Keys(NamedTuple):
    """The keys keygen makes for one party."""

    secret_key: SecretKey
    public_key: PublicKey
    relin_key: RelinKey
    galois_keys: Optional[GaloisKeys]

def keygen(params: Params, rotations: Optional[Sequence[int]] = None, row_swap: bool = False) -> Keys:
    """Secret, public, relinearization and (optionally) Galois keys."""

def encode(params: Params, values: Values, encoding: Optional[str] = None) -> Plaintext:
    """Encodes values as a plaintext."""

def decode(pt: Plaintext, encoding: Optional[str] = None) -> Union[npt.NDArray[np.uint64], List[int]]:
    """Decodes a plaintext."""

def encrypt(pk: PublicKey, values: Values, encoding: Optional[str] = None) -> Ciphertext:
    """Encodes and encrypts values."""

def decrypt(sk: SecretKey, ct: Ciphertext, encoding: Optional[str] = None) -> Union[npt.NDArray[np.uint64], List[int]]:
    """Decrypts and decodes a single-key ciphertext."""

def add(a: Ciphertext, b: Union[Ciphertext, Plaintext]) -> Ciphertext:
    """a + b."""

def sub(a: Ciphertext, b: Union[Ciphertext, Plaintext]) -> Ciphertext:
    """a - b."""

def multiply(
    a: Ciphertext, b: Union[Ciphertext, Plaintext], keys: Optional[MulKeys] = None, *, grouped: bool = True
) -> Ciphertext:
    """a * b, relinearized with keys for two ciphertexts."""

def rotate(ct: Ciphertext, k: int, galois_keys: GaloisKeys) -> Ciphertext:
    """Rotates left by k (batching rows, or cyclotomic slots)."""

def swap_rows(ct: Ciphertext, galois_keys: GaloisKeys) -> Ciphertext:
    """Swaps the two batching rows."""

def _rust_time_multiply(
    a: Ciphertext, b: Ciphertext, keys: MulKeys, iterations: int, *, grouped: bool = True
) -> float:
    """Benchmark helper: seconds per multiply, timed in Rust (GIL released)."""

# Multi-key BFV.

class MkCrs:
    """Common reference string of multi-key BFV."""

    def __init__(self, params: Params, seed: Optional[bytes] = None, base_log: Optional[int] = None) -> None:
        """The CRS from a 32-byte seed (fresh if None)."""
    @property
    def seed(self) -> bytes:
        """The public seed."""
    @property
    def rows(self) -> int:
        """Number of gadget rows."""
    @property
    def base_log(self) -> Optional[int]:
        """None for the RNS gadget, log2 B for a power-of-two one."""
    @property
    def params(self) -> Params:
        """The parameter set."""

class MkRelinKey:
    """A user's public multi-key relinearization key."""

    @staticmethod
    def generate(sk: SecretKey, id: int, crs: MkCrs) -> MkRelinKey:
        """User id's key from its secret key over the CRS."""
    @property
    def id(self) -> int:
        """The user id."""
    @property
    def rows(self) -> int:
        """Number of gadget rows."""
    @property
    def base_log(self) -> Optional[int]:
        """None for the RNS gadget, log2 B for a power-of-two one."""
    @property
    def crs_seed(self) -> bytes:
        """Seed of the CRS the key was made over."""
    @property
    def params(self) -> Params:
        """The parameter set."""
    def to_bytes(self) -> bytes:
        """The crate's versioned encoding."""
    @staticmethod
    def from_bytes(params: Params, data: bytes) -> MkRelinKey:
        """Decodes ``to_bytes`` output."""

class SharedRelinKey:
    """Precomputed pairwise relinearization keys of a set of users."""

    def __init__(self, keys: Sequence[MkRelinKey]) -> None:
        """The keys of every ordered pair of the users of keys."""
    def __len__(self) -> int: ...

class Smudging:
    """Smudging distribution of partial decryptions and re-encryption shares."""

    @staticmethod
    def paper_sigma20() -> Smudging:
        """The paper's Gaussian of σ = 2^20 (NOT statistically hiding)."""
    @staticmethod
    def statistical(lambda_: int, noise_log2: int) -> Smudging:
        """Uniform in [-2^(noise_log2+λ), 2^(noise_log2+λ)) (statistically hiding)."""

class PartialDecryption:
    """A user's partial decryption of a multi-key ciphertext."""

    @property
    def id(self) -> int:
        """The user id."""
    def to_bytes(self) -> bytes:
        """The crate's versioned encoding."""
    @staticmethod
    def from_bytes(params: Params, data: bytes) -> PartialDecryption:
        """Decodes ``to_bytes`` output."""

def paper_base_log(users: int) -> int:
    """Seed 001 Table 2's gadget base log2 B for 2 to 8 users."""

def mk_encrypt(pk: PublicKey, id: int, values: Values, encoding: Optional[str] = None) -> Ciphertext:
    """Encrypts under user id's public key as a multi-key ciphertext."""

def mk_label(ct: Ciphertext, id: int) -> Ciphertext:
    """Labels a fresh single-key ciphertext as user id's."""

def mk_decrypt(ct: Ciphertext, keys: Sequence[Tuple[int, SecretKey]]) -> Plaintext:
    """Decrypts a multi-key ciphertext with all users' keys in one hand."""

def mk_noise_budget(ct: Ciphertext, keys: Sequence[Tuple[int, SecretKey]]) -> float:
    """Noise budget in bits of a multi-key ciphertext."""

def part_dec(sk: SecretKey, id: int, ct: Ciphertext, smudging: Smudging) -> PartialDecryption:
    """User id's partial decryption."""

def merge(ct: Ciphertext, partials: Sequence[PartialDecryption]) -> Plaintext:
    """Merges one partial decryption per user into the plaintext."""

# Threshold proxy re-encryption.

class MaskingKey:
    """Masking key r_{delegator->delegatee} (secret)."""

    @staticmethod
    def sample(params: Params, delegator: int, delegatee: int) -> MaskingKey:
        """A fresh masking key (by the delegatee)."""
    @property
    def delegator(self) -> int:
        """The delegator."""
    @property
    def delegatee(self) -> int:
        """The delegatee."""
    def to_bytes(self) -> bytes:
        """The crate's versioned encoding (secret)."""
    @staticmethod
    def from_bytes(params: Params, data: bytes) -> MaskingKey:
        """Decodes ``to_bytes`` output."""

class ReKeyShare:
    """A proxy's share of a re-encryption key (secret)."""

    @property
    def delegator(self) -> int:
        """The delegator."""
    @property
    def delegatee(self) -> int:
        """The delegatee."""
    @property
    def proxy(self) -> int:
        """The proxy index."""
    @property
    def proxies(self) -> int:
        """The number of proxies."""
    def to_bytes(self) -> bytes:
        """The crate's versioned encoding (secret)."""
    @staticmethod
    def from_bytes(params: Params, data: bytes) -> ReKeyShare:
        """Decodes ``to_bytes`` output."""

class ReEncShare:
    """A proxy's share of a re-encrypted c_0."""

    @property
    def proxy(self) -> int:
        """The proxy index."""
    @property
    def proxies(self) -> int:
        """The number of proxies."""
    @property
    def delegatee(self) -> int:
        """The delegatee."""
    def to_bytes(self) -> bytes:
        """The crate's versioned encoding."""
    @staticmethod
    def from_bytes(params: Params, data: bytes) -> ReEncShare:
        """Decodes ``to_bytes`` output."""

class ReEncryptedCiphertext:
    """A ciphertext re-encrypted for a delegatee."""

    @property
    def delegatee(self) -> int:
        """The delegatee."""
    @property
    def ciphertext(self) -> Ciphertext:
        """The parts as a multi-key ciphertext."""
    def to_bytes(self) -> bytes:
        """The crate's versioned encoding."""
    @staticmethod
    def from_bytes(params: Params, data: bytes) -> ReEncryptedCiphertext:
        """Decodes ``to_bytes`` output."""

def rekey_gen(sk: SecretKey, delegator: int, delegatee: int, proxies: int) -> Tuple[MaskingKey, List[ReKeyShare]]:
    """ReKeyGen in one call: the masking key and one share per proxy."""

def rekey_shares(sk: SecretKey, masking_key: MaskingKey, proxies: int) -> List[ReKeyShare]:
    """ReKeyGen step 2 (delegator): rk = s - r in additive shares."""

def reenc_share(
    proxy: int, delegatee: int, shares: Sequence[ReKeyShare], ct: Ciphertext, smudging: Smudging
) -> ReEncShare:
    """ReEnc step 1 (proxy)."""

def reenc_combine(ct: Ciphertext, shares: Sequence[ReEncShare]) -> ReEncryptedCiphertext:
    """ReEnc step 3 (delegatee): one share per proxy."""

def decrypt_reencrypted(masking_keys: Sequence[MaskingKey], rct: ReEncryptedCiphertext) -> Plaintext:
    """Decryption by the delegatee with its masking keys."""

def reenc_noise_budget(masking_keys: Sequence[MaskingKey], rct: ReEncryptedCiphertext) -> float:
    """Noise budget in bits of a re-encrypted ciphertext."""

# Collective keys.

def collective_public_key(secret_keys: Sequence[SecretKey], seed: Optional[bytes] = None) -> PublicKey:
    """Collective public key of the sum of the parties' secret keys."""

def collective_relin_key(
    secret_keys: Sequence[SecretKey], seed: Optional[bytes] = None, base_log: Optional[int] = None
) -> RelinKey:
    """Collective relinearization key (two-round protocol, in process)."""
