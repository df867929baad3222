"""Type stub of :mod:`coterie.tfhe`: single-key and multi-key (AKÖ) TFHE from coterie-tfhe."""

from typing import Callable, Dict, List, Optional, Sequence, Tuple

ProgressCallback = Callable[[str, int, int], object]

GATES: tuple
"""Gate names accepted by ``ServerKey.gate`` and ``MkServerKey.gate``."""
TABLE3_PARTIES: tuple
"""Party counts with a Table 3 parameter set (``MkParams.ako(k)``)."""
MAX_PARTIES: int
"""Largest number of parties the crate accepts."""

# ---------------------------------------------------------------------------------------------
# Single key
# ---------------------------------------------------------------------------------------------

class TfheParams:
    """A named single-key TFHE parameter set (``insecure_toy_u32``: insecure toy, tests only)."""

    @staticmethod
    def names() -> List[str]:
        """The names of the crate's parameter sets."""
    @staticmethod
    def named(name: str) -> TfheParams:
        """The parameter set called ``name`` (ValueError if unknown)."""
    @staticmethod
    def tfhe_rs_boolean_default() -> TfheParams:
        """TFHE-rs 1.8.2's default boolean parameters (32-bit torus, 128 bits)."""
    @staticmethod
    def tfhe_rs_shortint_2_2_gaussian() -> TfheParams:
        """TFHE-rs 1.8.2's 2+2-bit shortint Gaussian set (64-bit torus)."""
    @staticmethod
    def seed003_ako_k2_single_key() -> TfheParams:
        """Seed 003 Table 3 row k = 2 with a single key (64-bit torus, about 100 bits)."""
    @staticmethod
    def seed003_ako_k16_single_key() -> TfheParams:
        """Seed 003 Table 3 row k = 16 with a single key (64-bit torus, about 100 bits)."""
    @staticmethod
    def insecure_toy_u32() -> TfheParams:
        """**Insecure toy** parameters for fast tests (security: none)."""
    @property
    def name(self) -> str:
        """Name of the set."""
    @property
    def torus_bits(self) -> int:
        """Torus width in bits (32 or 64)."""
    @property
    def lwe_dimension(self) -> int:
        """LWE dimension n of ciphertexts."""
    @property
    def glwe_dimension(self) -> int:
        """GLWE dimension k."""
    @property
    def polynomial_size(self) -> int:
        """Ring degree N."""
    @property
    def big_lwe_dimension(self) -> int:
        """k·N, the LWE dimension of extracted samples."""
    @property
    def lwe_noise_std(self) -> float:
        """Torus standard deviation of LWE noise."""
    @property
    def glwe_noise_std(self) -> float:
        """Torus standard deviation of GLWE noise."""
    @property
    def glwe_key(self) -> str:
        """GLWE key distribution: ``"binary"`` or ``"ternary"``."""
    @property
    def ternary_p(self) -> Optional[float]:
        """Probability of each of ±1 of a ternary GLWE key; None for a binary one."""
    @property
    def pbs_base_log(self) -> int:
        """Bootstrapping gadget base log."""
    @property
    def pbs_level(self) -> int:
        """Bootstrapping gadget levels."""
    @property
    def ks_base_log(self) -> int:
        """Key-switching gadget base log."""
    @property
    def ks_level(self) -> int:
        """Key-switching gadget levels."""
    @property
    def security_bits(self) -> float:
        """Claimed security level in bits (0 for the insecure toy set)."""
    def to_bytes(self) -> bytes:
        """The versioned encoding of the set."""
    @staticmethod
    def from_bytes(data: bytes) -> TfheParams:
        """Decodes ``to_bytes()`` output (CoterieError if malformed)."""
    def __eq__(self, other: object) -> bool: ...

class Ciphertext:
    """A single-key TFHE ciphertext (LWE sample under a client key's small key)."""

    @property
    def torus_bits(self) -> int:
        """Torus width in bits (32 or 64)."""
    @property
    def dimension(self) -> int:
        """LWE dimension n."""
    def to_bytes(self) -> bytes:
        """The versioned encoding."""
    @staticmethod
    def from_bytes(data: bytes) -> Ciphertext:
        """Decodes ``to_bytes()`` output of either torus width (CoterieError if malformed)."""
    def __eq__(self, other: object) -> bool: ...

class ClientKey:
    """Secret keys of single-key TFHE: ``ClientKey(params)`` generates fresh ones."""

    def __init__(self, params: TfheParams) -> None:
        """Fresh secret keys for ``params`` (GIL released)."""
    @property
    def params(self) -> TfheParams:
        """The parameter set."""
    def encrypt(self, bit: bool) -> Ciphertext:
        """Encrypts a boolean (``bool`` only)."""
    def decrypt(self, ct: Ciphertext) -> bool:
        """Decrypts a boolean."""
    def encrypt_uint(self, value: int, width: int) -> List[Ciphertext]:
        """Encrypts the ``width`` bits of ``value``, least significant first."""
    def decrypt_uint(self, bits: Sequence[Ciphertext]) -> int:
        """Decrypts 1 to 64 bits, least significant first, into an unsigned integer."""
    def encrypt_message(self, m: int, bits: int) -> Ciphertext:
        """Encrypts the ``bits``-bit message ``m`` (mod 2^bits) for ``ServerKey.apply_lut``."""
    def decrypt_message(self, ct: Ciphertext, bits: int) -> Optional[int]:
        """Decrypts a ``bits``-bit message; None if the padding bit is set."""
    def to_bytes(self) -> bytes:
        """The versioned encoding (secret)."""
    @staticmethod
    def from_bytes(data: bytes) -> ClientKey:
        """Decodes ``to_bytes()`` output (CoterieError if malformed)."""

class ServerKey:
    """Public evaluation keys of single-key TFHE: ``ServerKey(client_key)`` generates them."""

    def __init__(self, client_key: ClientKey) -> None:
        """Generates the bootstrapping and key-switching keys (GIL released)."""
    @property
    def params(self) -> TfheParams:
        """The parameter set."""
    def gate(self, name: str, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        """The two-input gate ``name`` (one of ``GATES``): one bootstrap."""
    def nand(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        """NOT (a AND b)."""
    def and_(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        """a AND b."""
    def or_(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        """a OR b."""
    def nor(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        """NOT (a OR b)."""
    def xor(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        """a XOR b."""
    def xnor(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        """NOT (a XOR b)."""
    def not_(self, a: Ciphertext) -> Ciphertext:
        """NOT a (negation, no bootstrap)."""
    def mux(self, c: Ciphertext, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        """``a if c else b`` (three bootstraps)."""
    def greater_than(self, x: Sequence[Ciphertext], y: Sequence[Ciphertext]) -> Ciphertext:
        """Encrypted unsigned ``x > y`` on equal-length bit lists, least significant first."""
    def apply_lut(self, ct: Ciphertext, table: Sequence[int]) -> Ciphertext:
        """Programmable bootstrapping: encrypts ``table[m] mod 2^bits`` (len(table) = 2^bits)."""
    def to_bytes(self) -> bytes:
        """The versioned encoding (public)."""
    @staticmethod
    def from_bytes(data: bytes) -> ServerKey:
        """Decodes ``to_bytes()`` output (CoterieError if malformed; GIL released)."""

# ---------------------------------------------------------------------------------------------
# Multi key (AKÖ)
# ---------------------------------------------------------------------------------------------

class MkParams:
    """An AKÖ multi-key parameter set: Table 3 by party count, or the insecure toy set."""

    @staticmethod
    def ako(k: int) -> MkParams:
        """Table 3's set for exactly ``k`` parties (CoterieError if there is no row)."""
    @staticmethod
    def ako_at_least(k: int) -> MkParams:
        """The smallest Table 3 set for at least ``k`` parties."""
    @staticmethod
    def insecure_toy(k: int) -> MkParams:
        """**Insecure toy** parameters for ``k`` parties (security: none)."""
    @property
    def name(self) -> str:
        """Name of the set."""
    @property
    def parties(self) -> int:
        """Number of parties the set is designed for."""
    @property
    def lwe_dimension(self) -> int:
        """Per-party LWE dimension n."""
    @property
    def lwe_noise_log2(self) -> float:
        """log2 of the LWE noise std."""
    @property
    def ks_base_log(self) -> int:
        """Key-switching base log."""
    @property
    def ks_level(self) -> int:
        """Key-switching levels."""
    @property
    def polynomial_size(self) -> int:
        """Ring degree N."""
    @property
    def glwe_noise_log2(self) -> float:
        """log2 of the RLWE noise std."""
    @property
    def pbs_base_log(self) -> int:
        """Blind-rotate-key base log."""
    @property
    def pbs_level(self) -> int:
        """Blind-rotate-key levels."""
    @property
    def ternary_p(self) -> float:
        """Ternary probability p of the RLWE keys."""
    @property
    def security_bits(self) -> float:
        """Security estimate in bits (0 for the insecure toy set)."""
    def noise(self, k: Optional[int] = None, dynamic: bool = False) -> Dict[str, float]:
        """Eq. (14)'s noise breakdown for ``k`` parties (v0, kappa, err1, err2, ...)."""
    def key_bytes(self, k: Optional[int] = None) -> int:
        """Evaluation-key size in bytes for ``k`` parties."""
    def to_bytes(self) -> bytes:
        """The versioned encoding of the set."""
    @staticmethod
    def from_bytes(data: bytes) -> MkParams:
        """Decodes ``to_bytes()`` output (CoterieError if malformed)."""
    def __eq__(self, other: object) -> bool: ...

class Crs:
    """Common reference string: a public 32-byte seed (fresh when none is given)."""

    def __init__(self, seed: Optional[bytes] = None) -> None:
        """A CRS from a 32-byte seed, or a fresh random one."""
    @property
    def seed(self) -> bytes:
        """The 32-byte seed."""
    def __eq__(self, other: object) -> bool: ...

class MkCiphertext:
    """A multi-key LWE ciphertext: party-local (dimension n) or of k parties (dimension k·n)."""

    @property
    def dimension(self) -> int:
        """LWE dimension."""
    def to_bytes(self) -> bytes:
        """The versioned encoding."""
    @staticmethod
    def from_bytes(data: bytes) -> MkCiphertext:
        """Decodes ``to_bytes()`` output (CoterieError if malformed)."""
    def __eq__(self, other: object) -> bool: ...

class PublicKeyShare:
    """A party's public-key share."""

    @property
    def party(self) -> int:
        """The sender's party index."""
    def to_bytes(self) -> bytes:
        """The versioned encoding."""
    @staticmethod
    def from_bytes(data: bytes) -> PublicKeyShare:
        """Decodes ``to_bytes()`` output (CoterieError if malformed)."""
    def __eq__(self, other: object) -> bool: ...

class MkPublicKey:
    """The common public key combined from all public-key shares."""

    def to_bytes(self) -> bytes:
        """The versioned encoding."""
    @staticmethod
    def from_bytes(data: bytes) -> MkPublicKey:
        """Decodes ``to_bytes()`` output (CoterieError if malformed)."""
    def __eq__(self, other: object) -> bool: ...

class BootstrapKeyShare:
    """A party's blind-rotate key rows."""

    @property
    def party(self) -> int:
        """The sender's party index."""
    def to_bytes(self) -> bytes:
        """The versioned encoding."""
    @staticmethod
    def from_bytes(data: bytes) -> BootstrapKeyShare:
        """Decodes ``to_bytes()`` output (CoterieError if malformed)."""
    def __eq__(self, other: object) -> bool: ...

class KeySwitchKeyShare:
    """A party's key-switching key share."""

    @property
    def party(self) -> int:
        """The sender's party index."""
    def to_bytes(self) -> bytes:
        """The versioned encoding."""
    @staticmethod
    def from_bytes(data: bytes) -> KeySwitchKeyShare:
        """Decodes ``to_bytes()`` output (CoterieError if malformed)."""
    def __eq__(self, other: object) -> bool: ...

class MkEvaluationKey:
    """The evaluation key of a set of parties."""

    @property
    def params(self) -> MkParams:
        """The parameter set."""
    @property
    def parties(self) -> List[int]:
        """The parties in slot order."""
    @property
    def size_bytes(self) -> int:
        """Size in bytes (blind-rotate key + key-switching key)."""
    def to_bytes(self) -> bytes:
        """The versioned encoding."""
    @staticmethod
    def from_bytes(data: bytes) -> MkEvaluationKey:
        """Decodes ``to_bytes()`` output (CoterieError if malformed)."""
    def __eq__(self, other: object) -> bool: ...

class PartialDecryption:
    """A party's smudged partial decryption of one multi-key ciphertext."""

    def __init__(self, slot: int, value: int) -> None:
        """A partial decryption from its parts (e.g. received from another party)."""
    @property
    def slot(self) -> int:
        """The party's slot in the ciphertext."""
    @property
    def value(self) -> int:
        """The value on the 32-bit torus."""
    def __eq__(self, other: object) -> bool: ...

class MkSecretKey:
    """One party's multi-key secret keys: ``MkSecretKey(params, party)`` generates them."""

    def __init__(self, params: MkParams, party: int) -> None:
        """Fresh keys of party ``party`` (GIL released)."""
    @property
    def party(self) -> int:
        """The party index."""
    @property
    def params(self) -> MkParams:
        """The parameter set."""
    def encrypt_bool(self, bit: bool) -> MkCiphertext:
        """Party-local encryption of a bit (dimension n); ``embed`` it for a computation."""
    def encrypt_uint(
        self, value: int, width: int, k: int, slot: Optional[int] = None
    ) -> List[MkCiphertext]:
        """The bits of ``value`` (least significant first) embedded at ``slot`` of k parties."""
    def public_key_share(self, crs: Crs) -> PublicKeyShare:
        """This party's public-key share."""
    def bootstrap_key_share(
        self, public_key: MkPublicKey, progress: Optional[ProgressCallback] = None
    ) -> BootstrapKeyShare:
        """This party's blind-rotate key rows (GIL released; progress per key bit)."""
    def keyswitch_key_share(self) -> KeySwitchKeyShare:
        """This party's key-switching key share."""
    def partial_decrypt(
        self, ct: MkCiphertext, slot: Optional[int] = None, sigma: Optional[float] = None
    ) -> PartialDecryption:
        """This party's smudged partial decryption of slot ``slot`` (default: its index)."""
    def to_bytes(self) -> bytes:
        """The versioned encoding of the key with its parameters (secret)."""
    @staticmethod
    def from_bytes(data: bytes) -> MkSecretKey:
        """Decodes ``to_bytes()`` output (CoterieError if malformed)."""

class MkServerKey:
    """The multi-key evaluator's key: ``MkServerKey(evaluation_key)``."""

    def __init__(self, evaluation_key: MkEvaluationKey) -> None:
        """Converts an evaluation key to the Fourier domain (GIL released)."""
    @property
    def params(self) -> MkParams:
        """The parameter set."""
    @property
    def parties(self) -> List[int]:
        """The parties in slot order."""
    @property
    def lwe_dimension(self) -> int:
        """Ciphertext dimension k·n."""
    def gate(self, name: str, a: MkCiphertext, b: MkCiphertext) -> MkCiphertext:
        """The two-input gate ``name`` (one of ``GATES``): one multi-key bootstrap."""
    def nand(self, a: MkCiphertext, b: MkCiphertext) -> MkCiphertext:
        """NOT (a AND b)."""
    def and_(self, a: MkCiphertext, b: MkCiphertext) -> MkCiphertext:
        """a AND b."""
    def or_(self, a: MkCiphertext, b: MkCiphertext) -> MkCiphertext:
        """a OR b."""
    def nor(self, a: MkCiphertext, b: MkCiphertext) -> MkCiphertext:
        """NOT (a OR b)."""
    def xor(self, a: MkCiphertext, b: MkCiphertext) -> MkCiphertext:
        """a XOR b (higher error rate with AKÖ parameters)."""
    def xnor(self, a: MkCiphertext, b: MkCiphertext) -> MkCiphertext:
        """NOT (a XOR b) (higher error rate with AKÖ parameters)."""
    def not_(self, a: MkCiphertext) -> MkCiphertext:
        """NOT a (negation, no bootstrap)."""
    def bootstrap(self, ct: MkCiphertext) -> MkCiphertext:
        """Gate bootstrapping of one ciphertext (fresh noise, same bit)."""
    def greater_than(self, x: Sequence[MkCiphertext], y: Sequence[MkCiphertext]) -> MkCiphertext:
        """Encrypted unsigned ``x > y`` on equal-length bit lists, least significant first."""
    def trivial(self, bit: bool) -> MkCiphertext:
        """A trivial (noiseless, keyless) k-party encryption of a constant bit."""

def combine_public_key(
    params: MkParams, crs: Crs, shares: Sequence[PublicKeyShare]
) -> MkPublicKey:
    """The common public key from all public-key shares (increasing party order)."""

def combine_evaluation_key(
    params: MkParams,
    bootstrap_shares: Sequence[BootstrapKeyShare],
    keyswitch_shares: Sequence[KeySwitchKeyShare],
) -> MkEvaluationKey:
    """The evaluation key from all parties' shares (same increasing party order)."""

def embed(ct: MkCiphertext, slot: int, k: int) -> MkCiphertext:
    """Embeds a party-local ciphertext at slot ``slot`` of a k-party ciphertext."""

def sum_local_encryptions(parts: Sequence[MkCiphertext]) -> MkCiphertext:
    """Sums party-local ciphertexts, one per slot, into a k-party ciphertext."""

def combine_partial_decryptions(
    ct: MkCiphertext, k: int, partials: Sequence[PartialDecryption]
) -> Tuple[bool, int]:
    """Combines one partial decryption per slot: ``(bit, phase)``."""

def default_smudging_std(params: MkParams, k: int) -> float:
    """The crate's default per-party smudging std for ``k`` parties."""

def insecure_simulate_all_parties(
    params: MkParams, k: int, crs: Optional[Crs] = None
) -> Tuple[List[MkSecretKey], MkEvaluationKey]:
    """**Insecure**: the whole key generation of parties 0..k in one process."""

def decrypt_bool_with_all_keys(keys: Sequence[MkSecretKey], ct: MkCiphertext) -> bool:
    """Decryption with all parties' keys in slot order (test oracle only)."""

def joint_decrypt_in_process(
    keys: Sequence[MkSecretKey], ct: MkCiphertext, sigma: Optional[float] = None
) -> bool:
    """Joint decryption in one process, for experiments (every key in one place)."""

def joint_decrypt_uint_in_process(
    keys: Sequence[MkSecretKey], bits: Sequence[MkCiphertext], sigma: Optional[float] = None
) -> int:
    """Joint decryption of bits (least significant first) into an integer, in one process."""
