"""Client of coterie's threshold decryption service (seed 000: threshold decryption of LWE
ciphertexts by MPC rounding, without noise flooding), encryption under the service's public key,
and an **insecure** local service for experiments. Everything calls coterie-threshold.

- :class:`Client` talks to node 0 over mutual TLS (a client certificate issued by the nodes'
  CA, node 0's certificate checked against it): :meth:`Client.decrypt` (many ciphertexts, one
  batch), :meth:`Client.decrypt_one`, :meth:`Client.decrypt_results` (per-item result or
  error), and their ``*_async`` twins for asyncio.
- :class:`PublicKey` (``public-key.bin``) and :func:`encrypt`: a bit encrypted under the
  service's key, as CTLW bytes (the crate's versioned ciphertext format: a coterie envelope
  tagged ``LWEc``).
- :class:`Ciphertext`: CTLW bytes decoded and validated; ``Ciphertext.from_tfhe_rs`` reads a
  ciphertext that TFHE-rs 1.8 serialized (a ``core_crypto::LweCiphertext<Vec<u64>>`` as bincode,
  versioned or not), ``Ciphertext.from_body_last`` the words of such a container (mask then
  body).
- :func:`start_insecure_local_service`: a whole service in this process (certificates,
  **insecure** dealer material, one thread per node over loopback TLS), for experiments only.

Long calls release the GIL; errors raised by the Rust side are :class:`coterie.CoterieError`
with the Rust message.

A 4-node service, a batch decrypted, then stopped (about 10 s):

>>> import tempfile
>>> from coterie import threshold
>>> with tempfile.TemporaryDirectory() as d:
...     with threshold.start_insecure_local_service(d, parties=4, decryptions=4, pool=2) as svc:
...         cts = [threshold.encrypt(svc.public_key, m) for m in (1, 0, 1)]
...         with svc.client() as client:
...             client.decrypt(cts)
[1, 0, 1]
"""

from __future__ import annotations

import asyncio
import os
from typing import Callable, Iterable, List, Optional, Union

from . import CoterieError
from ._native import threshold as _native

PublicKey = _native.PublicKey
Ciphertext = _native.Ciphertext
encrypt = _native.encrypt
# Benchmark helper (bench/python_binding.py), not part of the API.
_rust_time_decrypt = _native._rust_time_decrypt

__all__ = [
    "Client",
    "PublicKey",
    "Ciphertext",
    "encrypt",
    "InsecureLocalService",
    "start_insecure_local_service",
]

CiphertextLike = Union[bytes, bytearray, "Ciphertext"]


class Client(_native.Client):
    """A client of the decryption service's node 0 (mutual TLS).

    ``Client(config, node, cert, key)``: ``config`` is the nodes' party config (its CA checks
    node 0's certificate), ``node`` node 0's client address ``"host:port"``, ``cert``/``key``
    the client certificate and key (PEM) issued by the same CA (``coterie certs-client``, or
    :attr:`InsecureLocalService.client_cert`). The constructor connects once to check the
    address, node 0's certificate and the files (``CoterieError`` otherwise); node 0 checks the
    client certificate at the first request. Every call opens its own connection, so calls
    from several threads or asyncio tasks run side by side and node 0 batches what arrives
    together. Use it as a context manager, or call :meth:`close`.

    The ``*_async`` methods run the call in a worker thread (``asyncio.to_thread``), so the
    event loop is never blocked; cancelling the awaiting task does not cancel a request
    already sent.

    >>> import asyncio, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with start_insecure_local_service(d, parties=3, decryptions=4, pool=4) as svc:
    ...         cts = [svc.public_key.encrypt(m) for m in (0, 1, 1)]
    ...         client = Client(svc.config, svc.node, svc.client_cert, svc.client_key)
    ...         async def both():
    ...             return await asyncio.gather(
    ...                 client.decrypt_async(cts[:2]), client.decrypt_one_async(cts[2])
    ...             )
    ...         asyncio.run(both())
    [[0, 1], 1]
    """

    async def decrypt_async(self, ciphertexts: Iterable[CiphertextLike]) -> List[int]:
        """:meth:`decrypt` in a worker thread (asyncio-friendly)."""
        return await asyncio.to_thread(self.decrypt, list(ciphertexts))

    async def decrypt_one_async(self, ciphertext: CiphertextLike) -> int:
        """:meth:`decrypt_one` in a worker thread (asyncio-friendly)."""
        return await asyncio.to_thread(self.decrypt_one, ciphertext)

    async def decrypt_results_async(
        self, ciphertexts: Iterable[CiphertextLike]
    ) -> List[Union[int, CoterieError]]:
        """:meth:`decrypt_results` in a worker thread (asyncio-friendly)."""
        return await asyncio.to_thread(self.decrypt_results, list(ciphertexts))


class InsecureLocalService(_native.InsecureLocalService):
    """An **insecure** local decryption service for experiments (see
    :func:`start_insecure_local_service`): the nodes run as threads of this process, each a real
    TLS mesh party over loopback, on SPDZ_2k material from the **insecure** trusted dealer (one
    process saw every secret; never use it for real data). A context manager: leaving the block
    stops the service.
    """

    def client(self) -> Client:
        """A :class:`Client` of this service with its client certificate."""
        return Client(self.config, self.node, self.client_cert, self.client_key)


def start_insecure_local_service(
    directory: Union[str, os.PathLike],
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
    """Starts an **insecure** local decryption service in ``directory`` and returns it once
    node 0 serves clients.

    Writes a CA, the nodes' certificates, a party config (``certs/party.toml``) and a client
    certificate; deals SPDZ_2k material for ``decryptions`` decryptions (the paper's parameters:
    2351 triples and 72 random bits per decryption, plus the key generation's bits) with the
    **insecure** dealer into ``stores/party-<i>`` (about 0.25 MB per decryption and node); starts
    ``parties`` nodes that generate the key together (the public key is then
    :attr:`~InsecureLocalService.public_key`). Node 0 keeps ``pool`` gate bundles ready, made
    ``chunk`` at a time between requests (:meth:`~InsecureLocalService.wait_for_pool` waits for
    them). ``max_batch`` bounds a batch; ``lanes`` batches are decrypted at once (1: one at a
    time; 2 to 16: each on a connection of its own beside the control connection, so that one
    batch's computing overlaps another's transfers). ``progress(label, done, total)`` follows
    the dealing. ``directory`` must not already hold ``certs/`` or ``stores/``.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     svc = start_insecure_local_service(d, decryptions=2, pool=1)
    ...     print(svc.parties, svc.public_key.dimension, svc.running)
    ...     svc.stop()
    ...     print(svc.running)
    4 1024 True
    False
    """
    return InsecureLocalService(
        directory,
        parties,
        decryptions,
        pool,
        chunk=chunk,
        max_batch=max_batch,
        lanes=lanes,
        timeout=timeout,
        progress=progress,
    )
