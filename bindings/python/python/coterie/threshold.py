"""coterie.threshold (being written)."""

__all__: list = []
