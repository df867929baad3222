"""Type stub of :mod:`coterie.threshold`: the threshold decryption service's client, encryption
under its public key, LWE ciphertexts, and an insecure local service for experiments."""

import os
from pathlib import Path
from typing import Callable, Iterable, List, Optional, Tuple, Union

from . import CoterieError

_Path = Union[str, os.PathLike]
CiphertextLike = Union[bytes, bytearray, "Ciphertext"]

__all__: List[str]

class PublicKey:
    """The service's public key: public LWE samples of the key the nodes generated together."""

    def __eq__(self, other: object) -> bool: ...
    @staticmethod
    def from_bytes(data: bytes) -> "PublicKey":
        """Decodes `CTPK` bytes (`public-key.bin`); CoterieError if malformed."""
    @staticmethod
    def from_file(path: _Path) -> "PublicKey":
        """Reads a public key file (e.g. `<stores>/party-0/public-key.bin`)."""
    def to_bytes(self) -> bytes:
        """The encoded key (`CTPK` bytes)."""
    def encrypt(self, message: int) -> bytes:
        """Encrypts the bit `message` (0 or 1); returns CTLW ciphertext bytes."""
    @property
    def dimension(self) -> int:
        """LWE dimension n."""
    @property
    def modulus_bits(self) -> int:
        """k, with ciphertext modulus q = 2^k."""
    @property
    def samples(self) -> int:
        """Number of public samples."""
    @property
    def noise_bits(self) -> int:
        """Noise width of the samples, in bits."""
    @property
    def seed(self) -> bytes:
        """The 32-byte seed the samples' masks are expanded from."""

class Ciphertext:
    """An LWE ciphertext over Z_{2^k} with a message mod 2^m in its top bits (CTLW format)."""

    def __eq__(self, other: object) -> bool: ...
    @staticmethod
    def from_bytes(data: bytes) -> "Ciphertext":
        """Decodes CTLW bytes; CoterieError for anything malformed."""
    @staticmethod
    def from_body_last(words: Iterable[int], modulus_bits: int, message_bits: int) -> "Ciphertext":
        """From the words of a TFHE-rs core_crypto LWE container (mask then body) over 2^k."""
    @staticmethod
    def from_tfhe_rs(data: bytes, message_bits: int = 1) -> "Ciphertext":
        """From TFHE-rs 1.8 bincode bytes of a core_crypto LweCiphertext<Vec<u64>> (versioned or not)."""
    def to_bytes(self) -> bytes:
        """The CTLW bytes."""
    def check_service_shape(self) -> None:
        """CoterieError unless the shape is the service's (n = 1024, q = 2^64, p = 2)."""
    @property
    def dimension(self) -> int:
        """LWE dimension n (number of mask words)."""
    @property
    def modulus_bits(self) -> int:
        """k, with ciphertext modulus q = 2^k."""
    @property
    def message_bits(self) -> int:
        """m, with plaintext modulus p = 2^m."""
    @property
    def body(self) -> int:
        """The body b."""
    @property
    def mask(self) -> List[int]:
        """The mask a_0, ..., a_{n-1}."""
    @property
    def words(self) -> List[int]:
        """All words, mask then body."""

def encrypt(public_key: PublicKey, message: int) -> bytes:
    """Encrypts the bit `message` under `public_key`; returns CTLW bytes."""

class Client:
    """A client of node 0 over mutual TLS; each call opens its own connection."""

    def __init__(self, config: _Path, node: str, cert: _Path, key: _Path) -> None:
        """Connects once to check node 0's address and certificate and the client's files."""
    def decrypt(self, ciphertexts: Iterable[CiphertextLike]) -> List[int]:
        """Decrypts a batch; CoterieError naming the first ciphertext not decrypted."""
    def decrypt_results(self, ciphertexts: Iterable[CiphertextLike]) -> List[Union[int, CoterieError]]:
        """Decrypts a batch; per ciphertext the message or a CoterieError instance."""
    def decrypt_one(self, ciphertext: CiphertextLike) -> int:
        """Decrypts one ciphertext."""
    async def decrypt_async(self, ciphertexts: Iterable[CiphertextLike]) -> List[int]:
        """`decrypt` in a worker thread (never blocks the event loop)."""
    async def decrypt_one_async(self, ciphertext: CiphertextLike) -> int:
        """`decrypt_one` in a worker thread."""
    async def decrypt_results_async(
        self, ciphertexts: Iterable[CiphertextLike]
    ) -> List[Union[int, CoterieError]]:
        """`decrypt_results` in a worker thread."""
    def close(self) -> None:
        """Closes the client: later calls raise CoterieError."""
    @property
    def closed(self) -> bool:
        """Whether `close` was called."""
    @property
    def config(self) -> Path:
        """Path of the party config."""
    @property
    def node(self) -> str:
        """Address of node 0's client listener."""
    def __enter__(self) -> "Client": ...
    def __exit__(self, *args: object) -> bool: ...

class InsecureLocalService:
    """An INSECURE local service (dealer material; nodes as threads over loopback TLS)."""

    def __init__(
        self,
        directory: _Path,
        parties: int = 4,
        decryptions: int = 64,
        pool: int = 8,
        *,
        chunk: Optional[int] = None,
        max_batch: int = 1024,
        lanes: int = 1,
        timeout: float = 300.0,
        progress: Optional[Callable[[str, int, int], None]] = None,
    ) -> None:
        """Starts the service (see start_insecure_local_service)."""
    def client(self) -> Client:
        """A Client of this service with its client certificate."""
    def wait_for_pool(self, count: Optional[int] = None, timeout: float = 600.0) -> None:
        """Waits until node 0 has `count` gate bundles ready (default: the pool target)."""
    def stop(self, timeout: float = 60.0) -> None:
        """Stops every node cleanly; CoterieError if a node failed or did not stop in time."""
    @property
    def running(self) -> bool:
        """Whether every node is still running."""
    @property
    def directory(self) -> Path:
        """The service's directory."""
    @property
    def config(self) -> Path:
        """Path of the party config (certs/party.toml)."""
    @property
    def node(self) -> str:
        """Address of node 0's client listener."""
    @property
    def client_cert(self) -> Path:
        """Path of the client certificate (PEM)."""
    @property
    def client_key(self) -> Path:
        """Path of the client certificate's key (PEM)."""
    @property
    def public_key(self) -> PublicKey:
        """The service's public key."""
    @property
    def parties(self) -> int:
        """Number of nodes."""
    @property
    def available(self) -> Optional[int]:
        """Gate bundles node 0 reported ready last."""
    @property
    def batches(self) -> List[Tuple[int, float]]:
        """Node 0's decrypted batches as (size, seconds)."""
    @property
    def log(self) -> List[str]:
        """What the nodes reported, one line per event."""
    def __enter__(self) -> "InsecureLocalService": ...
    def __exit__(self, *args: object) -> bool: ...

def start_insecure_local_service(
    directory: _Path,
    parties: int = 4,
    decryptions: int = 64,
    pool: int = 8,
    *,
    chunk: Optional[int] = None,
    max_batch: int = 1024,
    lanes: int = 1,
    timeout: float = 300.0,
    progress: Optional[Callable[[str, int, int], None]] = None,
) -> InsecureLocalService:
    """Starts an INSECURE local service in `directory`; returns once node 0 serves clients."""

def _rust_time_decrypt(client: Client, ciphertexts: Iterable[CiphertextLike], iterations: int) -> float:
    """Benchmark helper: seconds per Client.decrypt round trip, timed inside Rust (GIL released)."""
