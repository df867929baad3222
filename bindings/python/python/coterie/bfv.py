"""BFV homomorphic encryption from Python, backed by the Rust crate coterie-bfv.

Parameter sets by name (:meth:`Params.by_name`, :meth:`Params.names`), keys, encoding to and
from numpy arrays, encryption, addition, multiplication with relinearization, rotations, and
serialization to bytes with the crate's versioned formats. Multi-key BFV (seed 001: a common
reference string, per-user keys, multi-key multiplication, threshold decryption) and threshold
proxy re-encryption are here as the crate's in-process functions: the caller moves the values
between the parties. Every computation runs in Rust with the GIL released; randomness is fresh
OS entropy.

Encodings (``encoding=``, default ``params.default_encoding``):

* ``"simd"``: batching (a prime ``t ≡ 1 mod 2N``): ``N`` slots as two rows of ``N/2``; sums and
  products act slot-wise, :func:`rotate` rotates both rows left.
* ``"coefficients"``: the coefficients of the plaintext polynomial mod ``t`` (any ``t``);
  products are negacyclic convolutions.
* ``"slots"`` (cyclotomic MatriGear sets, plaintext ring ``Z_p[X]/(X^D − b)``): ``D`` slots of
  values below ``p = b^M + 1``, given and returned as Python ints.

Example (an **insecure toy** parameter set, for examples and tests only):

>>> from coterie import bfv
>>> params = bfv.Params.by_name("insecure_toy", n=256, t=65537)
>>> keys = bfv.keygen(params, rotations=[1])
>>> x = bfv.encrypt(keys.public_key, [1, 2, 3])
>>> y = bfv.encrypt(keys.public_key, [4, 5, 6])
>>> z = bfv.multiply(bfv.add(x, y), y, keys.relin_key)
>>> bfv.decrypt(keys.secret_key, z)[:3]
array([20, 35, 54], dtype=uint64)
>>> bfv.decrypt(keys.secret_key, bfv.rotate(x, 1, keys.galois_keys))[:3]
array([2, 3, 0], dtype=uint64)
>>> ct = bfv.Ciphertext.from_bytes(params, z.to_bytes())
>>> int(bfv.decrypt(keys.secret_key, ct)[2])
54
"""

from typing import NamedTuple, Optional, Sequence, Union

import numpy as np

from . import _native
from ._native import CoterieError
from ._native.bfv import (
    Ciphertext,
    GaloisKeys,
    MaskingKey,
    MkCrs,
    MkRelinKey,
    Params,
    PartialDecryption,
    Plaintext,
    PublicKey,
    ReEncShare,
    ReEncryptedCiphertext,
    ReKeyShare,
    RelinKey,
    SecretKey,
    SharedRelinKey,
    Smudging,
    _rust_time_multiply,
    collective_public_key,
    collective_relin_key,
    decrypt_reencrypted,
    merge,
    mk_decrypt,
    mk_label,
    mk_noise_budget,
    paper_base_log,
    part_dec,
    reenc_combine,
    reenc_noise_budget,
    reenc_share,
    rekey_gen,
    rekey_shares,
)

__all__ = [
    # single-key BFV
    "Params",
    "Plaintext",
    "SecretKey",
    "PublicKey",
    "RelinKey",
    "GaloisKeys",
    "Ciphertext",
    "Keys",
    "keygen",
    "encode",
    "decode",
    "encrypt",
    "decrypt",
    "add",
    "sub",
    "multiply",
    "rotate",
    "swap_rows",
    # multi-key BFV
    "MkCrs",
    "MkRelinKey",
    "SharedRelinKey",
    "Smudging",
    "PartialDecryption",
    "paper_base_log",
    "mk_encrypt",
    "mk_label",
    "mk_decrypt",
    "mk_noise_budget",
    "part_dec",
    "merge",
    # threshold proxy re-encryption
    "MaskingKey",
    "ReKeyShare",
    "ReEncShare",
    "ReEncryptedCiphertext",
    "rekey_gen",
    "rekey_shares",
    "reenc_share",
    "reenc_combine",
    "decrypt_reencrypted",
    "reenc_noise_budget",
    # collective keys
    "collective_public_key",
    "collective_relin_key",
    "CoterieError",
]

Values = Union[Sequence[int], np.ndarray, Plaintext]


class Keys(NamedTuple):
    """The keys :func:`keygen` makes for one party."""

    secret_key: SecretKey
    public_key: PublicKey
    relin_key: RelinKey
    galois_keys: Optional[GaloisKeys]


def keygen(
    params: Params, rotations: Optional[Sequence[int]] = None, row_swap: bool = False
) -> Keys:
    """A fresh secret key with its public key, relinearization key and (if ``rotations`` or
    ``row_swap`` are given) the Galois keys for those rotations: of both batching rows for a
    scalar ``t``, of the ``D`` slots for a cyclotomic set.

    >>> keys = keygen(Params.by_name("insecure_toy"), rotations=[1, -1])
    >>> len(keys.galois_keys)
    2
    """
    sk = SecretKey.generate(params)
    galois = None
    if rotations or row_swap:
        steps = [int(k) for k in (rotations or [])]
        if params.cyclotomic is not None:
            if row_swap:
                raise ValueError("row_swap needs a scalar plaintext modulus (batching rows)")
            galois = sk.slot_rotation_keys(steps)
        else:
            galois = sk.galois_keys(steps, row_swap)
    return Keys(sk, sk.public_key(), sk.relin_key(), galois)


def encode(params: Params, values: Values, encoding: Optional[str] = None) -> Plaintext:
    """Encodes ``values`` (a 1-D sequence or numpy array of integers in ``[0, t)``, at most one
    per slot or coefficient; missing ones are zero) as a plaintext of ``params``.

    >>> decode(encode(Params.by_name("insecure_toy"), [7, 8]))[:3]
    array([7, 8, 0], dtype=uint64)
    """
    if isinstance(values, Plaintext):
        return values
    return Plaintext.encode(params, values, encoding)


def decode(pt: Plaintext, encoding: Optional[str] = None):
    """The values of a plaintext: a numpy ``uint64`` array of ``N`` entries (``"simd"`` and
    ``"coefficients"`` of a scalar set), or a list of ``D`` Python ints (cyclotomic sets)."""
    return pt.decode(encoding)


def encrypt(pk: PublicKey, values: Values, encoding: Optional[str] = None) -> Ciphertext:
    """Encrypts ``values`` (or a :class:`Plaintext`) under the public key ``pk``."""
    return pk.encrypt(encode(pk.params, values, encoding))


def decrypt(sk: SecretKey, ct: Ciphertext, encoding: Optional[str] = None):
    """Decrypts a single-key ciphertext and decodes it (see :func:`decode`)."""
    return sk.decrypt(ct).decode(encoding)


def add(a: Ciphertext, b: Union[Ciphertext, Plaintext]) -> Ciphertext:
    """``a + b`` for a ciphertext or plaintext ``b`` (multi-key: over the union of the users)."""
    if isinstance(b, Plaintext):
        return a.add_plain(b)
    return a.add(b)


def sub(a: Ciphertext, b: Union[Ciphertext, Plaintext]) -> Ciphertext:
    """``a − b`` for a ciphertext or plaintext ``b`` (multi-key: over the union of the users)."""
    if isinstance(b, Plaintext):
        return a.sub_plain(b)
    return a.sub(b)


def multiply(a: Ciphertext, b: Union[Ciphertext, Plaintext], keys=None, *, grouped: bool = True):
    """``a · b``. For two ciphertexts, relinearized with ``keys``: a :class:`RelinKey`
    (single-key), or for multi-key ciphertexts a :class:`SharedRelinKey` or the list of the
    users' :class:`MkRelinKey` (relinearization on the fly, ``grouped`` per user or not). A
    plaintext ``b`` needs no keys."""
    if isinstance(b, Plaintext):
        return a.mul_plain(b)
    if keys is None:
        raise TypeError("multiplying two ciphertexts needs relinearization keys")
    return a.multiply(b, keys, grouped=grouped)


def rotate(ct: Ciphertext, k: int, galois_keys: GaloisKeys) -> Ciphertext:
    """Rotates left by ``k`` (right for ``k < 0``): both batching rows of ``N/2`` slots for a
    scalar ``t`` (slot ``i`` of a row receives slot ``i + k`` of the same row, like
    ``np.roll(row, -k)``), or the ``D`` slots of a cyclotomic set."""
    if ct.params.cyclotomic is not None:
        return ct.rotate_slots(k, galois_keys)
    return ct.rotate_rows(k, galois_keys)


def swap_rows(ct: Ciphertext, galois_keys: GaloisKeys) -> Ciphertext:
    """Swaps the two batching rows (needs ``keygen(..., row_swap=True)``)."""
    return ct.swap_rows(galois_keys)


def mk_encrypt(pk: PublicKey, id: int, values: Values, encoding: Optional[str] = None) -> Ciphertext:
    """Multi-key BFV: encrypts ``values`` (or a :class:`Plaintext`) under user ``id``'s public
    key, as user ``id``'s multi-key ciphertext.

    Two users, a product, and threshold decryption (an **insecure toy** set; the paper's
    smudging, which is not statistically hiding):

    >>> params = Params.by_name("insecure_toy", n=256, t=256)
    >>> crs = MkCrs(params)
    >>> sks = [SecretKey.generate(params) for _ in range(2)]
    >>> rlks = [MkRelinKey.generate(sk, i + 1, crs) for i, sk in enumerate(sks)]
    >>> x = mk_encrypt(sks[0].public_key(), 1, [3])
    >>> y = mk_encrypt(sks[1].public_key(), 2, [5])
    >>> z = multiply(x, y, rlks)
    >>> z.key_ids
    [1, 2]
    >>> parts = [part_dec(sk, i + 1, z, Smudging.paper_sigma20()) for i, sk in enumerate(sks)]
    >>> int(decode(merge(z, parts))[0])
    15
    """
    return _native.bfv.mk_encrypt(pk, id, encode(pk.params, values, encoding))
