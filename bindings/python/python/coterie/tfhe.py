"""Single-key and multi-key TFHE from coterie-tfhe: key generation, Boolean gates, an unsigned
integer comparison, lookup tables, and joint decryption of multi-key ciphertexts.

Everything is computed by the Rust crate ``coterie-tfhe``; calls that bootstrap or generate keys
release the GIL. Parameter sets come by name; ``insecure_toy_u32`` and
``MkParams.insecure_toy(k)`` are **insecure toy** sets for tests and experiments only.

Single key (:class:`TfheParams`, :class:`ClientKey`, :class:`ServerKey`, :class:`Ciphertext`):

>>> from coterie import tfhe
>>> ck = tfhe.ClientKey(tfhe.TfheParams.insecure_toy_u32())
>>> sk = tfhe.ServerKey(ck)
>>> ck.decrypt(sk.nand(ck.encrypt(True), ck.encrypt(True)))
False
>>> ck.decrypt(sk.greater_than(ck.encrypt_uint(9, 4), ck.encrypt_uint(5, 4)))
True

Multi-key (AKÖ, seed 003): every party has its own keys; the evaluation key is combined from
their shares; a ciphertext of ``k`` parties is decrypted jointly from one partial decryption per
party. Here all parties run in one process (**insecure**, for experiments: every key in one
place); the crate's ``mk::protocol`` (behind ``coterie party ... mktfhe``) runs the same steps
between parties over a network and is not wrapped here.

>>> params = tfhe.MkParams.insecure_toy(2)
>>> keys, ek = tfhe.insecure_simulate_all_parties(params, 2)
>>> server = tfhe.MkServerKey(ek)
>>> x = keys[0].encrypt_uint(200, 8, k=2)  # party 0's input
>>> y = keys[1].encrypt_uint(13, 8, k=2)   # party 1's input
>>> tfhe.joint_decrypt_in_process(keys, server.greater_than(x, y))
True

The same key generation step by step (each party's function, then the public combinations):

>>> crs = tfhe.Crs()
>>> parties = [tfhe.MkSecretKey(params, q) for q in range(2)]
>>> pk = tfhe.combine_public_key(params, crs, [p.public_key_share(crs) for p in parties])
>>> ek = tfhe.combine_evaluation_key(
...     params,
...     [p.bootstrap_key_share(pk) for p in parties],
...     [p.keyswitch_key_share() for p in parties],
... )
>>> a = tfhe.embed(parties[0].encrypt_bool(True), 0, 2)
>>> b = tfhe.embed(parties[1].encrypt_bool(False), 1, 2)
>>> c = tfhe.MkServerKey(ek).nand(a, b)
>>> partials = [p.partial_decrypt(c) for p in parties]  # one per party, smudged
>>> tfhe.combine_partial_decryptions(c, 2, partials)[0]
True

Errors: arguments of the wrong type raise ``TypeError`` (a gate input must be a ciphertext, a
bit a ``bool``); mismatches this binding checks before calling Rust (torus width, ciphertext
dimension at a client key, integer widths, party counts) raise ``ValueError``; everything the
crate reports (a gate on a ciphertext of another key set, a slot out of range, malformed bytes,
shares out of order) raises :class:`coterie.CoterieError` with the Rust message.
"""

from __future__ import annotations

from typing import Optional, Sequence

from ._native import tfhe as _n

TfheParams = _n.TfheParams
Ciphertext = _n.Ciphertext
ClientKey = _n.ClientKey
ServerKey = _n.ServerKey
MkParams = _n.MkParams
Crs = _n.Crs
MkCiphertext = _n.MkCiphertext
MkSecretKey = _n.MkSecretKey
PublicKeyShare = _n.PublicKeyShare
MkPublicKey = _n.MkPublicKey
BootstrapKeyShare = _n.BootstrapKeyShare
KeySwitchKeyShare = _n.KeySwitchKeyShare
MkEvaluationKey = _n.MkEvaluationKey
PartialDecryption = _n.PartialDecryption
MkServerKey = _n.MkServerKey
combine_public_key = _n.combine_public_key
combine_evaluation_key = _n.combine_evaluation_key
embed = _n.embed
sum_local_encryptions = _n.sum_local_encryptions
combine_partial_decryptions = _n.combine_partial_decryptions
default_smudging_std = _n.default_smudging_std
insecure_simulate_all_parties = _n.insecure_simulate_all_parties
decrypt_bool_with_all_keys = _n.decrypt_bool_with_all_keys

#: Gate names accepted by ``ServerKey.gate`` and ``MkServerKey.gate``.
GATES: tuple = tuple(_n.GATES)
#: Party counts with a Table 3 parameter set (``MkParams.ako(k)``).
TABLE3_PARTIES: tuple = tuple(_n.TABLE3_PARTIES)
#: Largest number of parties the crate accepts.
MAX_PARTIES: int = _n.MAX_PARTIES


def joint_decrypt_in_process(
    keys: Sequence[MkSecretKey], ct: MkCiphertext, sigma: Optional[float] = None
) -> bool:
    """Joint decryption of a ``len(keys)``-party ciphertext **in one process**, for experiments
    (every key in one place): party ``keys[slot]`` computes its smudged partial decryption of
    slot ``slot`` (``MkSecretKey.partial_decrypt``, default smudging
    ``default_smudging_std(params, k)`` unless ``sigma`` is given) and
    ``combine_partial_decryptions`` combines them. In a real deployment each party computes its
    own partial decryption and sends only that.

    >>> params = MkParams.insecure_toy(2)
    >>> keys, ek = insecure_simulate_all_parties(params, 2)
    >>> c = MkServerKey(ek).or_(embed(keys[0].encrypt_bool(False), 0, 2),
    ...                         embed(keys[1].encrypt_bool(True), 1, 2))
    >>> joint_decrypt_in_process(keys, c)
    True
    """
    k = len(keys)
    partials = [key.partial_decrypt(ct, slot, sigma) for slot, key in enumerate(keys)]
    return combine_partial_decryptions(ct, k, partials)[0]


def joint_decrypt_uint_in_process(
    keys: Sequence[MkSecretKey], bits: Sequence[MkCiphertext], sigma: Optional[float] = None
) -> int:
    """:func:`joint_decrypt_in_process` of every bit (least significant first) into an unsigned
    integer; in one process, for experiments.

    >>> params = MkParams.insecure_toy(2)
    >>> keys, ek = insecure_simulate_all_parties(params, 2)
    >>> joint_decrypt_uint_in_process(keys, keys[1].encrypt_uint(6, 3, k=2))
    6
    """
    return sum(int(joint_decrypt_in_process(keys, b, sigma)) << i for i, b in enumerate(bits))


__all__ = [
    "TfheParams",
    "Ciphertext",
    "ClientKey",
    "ServerKey",
    "MkParams",
    "Crs",
    "MkCiphertext",
    "MkSecretKey",
    "PublicKeyShare",
    "MkPublicKey",
    "BootstrapKeyShare",
    "KeySwitchKeyShare",
    "MkEvaluationKey",
    "PartialDecryption",
    "MkServerKey",
    "combine_public_key",
    "combine_evaluation_key",
    "embed",
    "sum_local_encryptions",
    "combine_partial_decryptions",
    "default_smudging_std",
    "insecure_simulate_all_parties",
    "decrypt_bool_with_all_keys",
    "joint_decrypt_in_process",
    "joint_decrypt_uint_in_process",
    "GATES",
    "TABLE3_PARTIES",
    "MAX_PARTIES",
]
