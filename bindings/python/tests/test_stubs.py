"""The type stubs (``*.pyi`` beside each module) describe the whole public API: every name in a
module's ``__all__`` is declared in its stub, and so is every public method and property of every
exported class. The stubs ship inside the installed package (checked through ``__file__``)."""

import ast
import importlib
import inspect
from pathlib import Path

import pytest

MODULES = ["bfv", "tfhe", "hss", "threshold"]


def stub_names(path: Path):
    """Top-level names of a stub, and for each class the names it declares."""
    tree = ast.parse(path.read_text(), filename=str(path))
    top, classes = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            top.add(node.name)
        elif isinstance(node, ast.ClassDef):
            top.add(node.name)
            members = set()
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    members.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    members.add(item.target.id)
                elif isinstance(item, ast.Assign):
                    members.update(t.id for t in item.targets if isinstance(t, ast.Name))
            classes[node.name] = members
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            top.add(node.target.id)
        elif isinstance(node, ast.Assign):
            top.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            top.update((a.asname or a.name).split(".")[0] for a in node.names)
    return top, classes


def public_members(cls):
    """Public attributes a class defines itself (not those of object, Exception, Enum, ...)."""
    inherited = set()
    for base in cls.__mro__[1:]:
        if base.__module__ in ("builtins", "enum", "abc", "typing"):
            inherited.update(dir(base))
    return {n for n in dir(cls) if not n.startswith("_") and n not in inherited}


@pytest.mark.parametrize("name", MODULES)
def test_stub_declares_the_public_api(name):
    mod = importlib.import_module(f"coterie.{name}")
    stub = Path(mod.__file__).with_suffix(".pyi")
    assert stub.is_file(), f"no stub {stub} in the installed package"
    top, classes = stub_names(stub)
    exported = list(getattr(mod, "__all__", []))
    assert exported, f"coterie.{name} exports nothing (__all__ is empty)"
    missing = [n for n in exported if n not in top]
    assert not missing, f"coterie.{name}: not in {stub.name}: {missing}"
    for n in exported:
        obj = getattr(mod, n)
        if inspect.isclass(obj):
            undeclared = sorted(public_members(obj) - classes.get(n, set()))
            assert not undeclared, f"coterie.{name}.{n}: members not in the stub: {undeclared}"


def test_package_ships_py_typed():
    import coterie

    assert (Path(coterie.__file__).parent / "py.typed").is_file()
