import coterie


def test_version_and_error_type():
    assert isinstance(coterie.__version__, str) and coterie.__version__.count(".") == 2
    assert issubclass(coterie.CoterieError, Exception)


def test_submodules_load_lazily():
    import importlib

    for name in ("bfv", "tfhe", "hss", "threshold"):
        mod = importlib.import_module(f"coterie.{name}")
        assert getattr(coterie, name) is mod
