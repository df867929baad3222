"""coterie.bfv (being written)."""

__all__: list = []
