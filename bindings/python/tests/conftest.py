"""pytest configuration: the doctests of the package's modules run with the tests
(``--doctest-modules`` over python/coterie, see scripts/test.sh)."""
