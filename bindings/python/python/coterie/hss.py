"""coterie.hss (being written)."""

__all__: list = []
