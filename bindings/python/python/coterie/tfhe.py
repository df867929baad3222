"""coterie.tfhe (being written)."""

__all__: list = []
