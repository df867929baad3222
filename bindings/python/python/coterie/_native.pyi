"""Type stub of the extension module ``coterie._native`` (the Rust side). Users import the
wrapper modules ``coterie.bfv``, ``coterie.tfhe``, ``coterie.hss`` and ``coterie.threshold``,
whose own stubs (``*.pyi`` beside them) describe the whole public API."""

from types import ModuleType

__version__: str

class CoterieError(Exception):
    """An error reported by coterie's Rust code; the message is the Rust error's."""

bfv: ModuleType
tfhe: ModuleType
hss: ModuleType
threshold: ModuleType
