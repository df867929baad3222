"""coterie from Python: threshold and multi-key homomorphic encryption and homomorphic secret
sharing, backed by coterie's Rust crates (nothing is re-implemented here).

Submodules:

- :mod:`coterie.threshold`: client of the threshold decryption service (seed 000), encryption
  under its public key, and a local insecure-dealer service for experiments.
- :mod:`coterie.bfv`: BFV by named parameter set, numpy in and out.
- :mod:`coterie.tfhe`: single-key and multi-key TFHE gates and an integer comparison.
- :mod:`coterie.hss`: DDH homomorphic secret sharing of RMS programs.

Every error raised by the Rust side is a :class:`CoterieError` carrying the Rust message:

>>> import coterie
>>> issubclass(coterie.CoterieError, Exception)
True
"""

from ._native import CoterieError, __version__

__all__ = ["CoterieError", "__version__", "bfv", "tfhe", "hss", "threshold"]


def __getattr__(name: str):
    # Submodules load on first use (``coterie.bfv`` works without an explicit import).
    if name in ("bfv", "tfhe", "hss", "threshold"):
        import importlib

        return importlib.import_module(f"coterie.{name}")
    raise AttributeError(f"module 'coterie' has no attribute {name!r}")
