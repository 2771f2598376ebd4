"""The project's packages are listed once, in pyproject.toml's wheel ``packages``
(``tests/_packages.py`` reads it for every test). A configuration that must spell the list out
for its tool is checked against that one list here, so a package added to the wheel and
forgotten by mypy, coverage, the layers or the shell fails at once."""

from __future__ import annotations

import ast

from lmcp import _optional
from tests._packages import DEV_PACKAGES, LAYER, PACKAGES, PYPROJECT, REPO


def test_every_package_of_the_tree_is_in_the_wheel_or_development_code() -> None:
    on_disk = {p.parent.name for p in REPO.glob("*/__init__.py")}
    assert set(PACKAGES) <= on_disk, set(PACKAGES) - on_disk
    assert set(DEV_PACKAGES) == {"benchmarks", "lakedev", "privacy_tests", "scripts", "tests"}


def test_mypy_checks_every_package() -> None:
    files = PYPROJECT["tool"]["mypy"]["files"]
    assert len(files) == len(set(files))
    assert set(files) == {*PACKAGES, *DEV_PACKAGES, "conftest.py"}


def test_coverage_measures_the_product_packages() -> None:
    assert PYPROJECT["tool"]["coverage"]["run"]["source"] == list(PACKAGES)


def test_the_layers_hold_every_package_once_ground_first() -> None:
    linter = PYPROJECT["tool"]["importlinter"]
    assert linter["root_packages"] == list(PACKAGES)
    assert sorted(LAYER) == sorted(PACKAGES)  # each once
    # The wheel's order is the layers' order, ground first: reading one tells the other.
    assert sorted(PACKAGES, key=lambda p: LAYER[p]) == list(PACKAGES)
    assert LAYER["contract"] == 0 and LAYER["lmcp"] == max(LAYER.values())


def test_the_shell_knows_our_own_packages() -> None:
    """``lmcp/_optional.py`` tells a missing extra from a bug of ours by this list."""
    assert _optional._OWN_PACKAGES == frozenset(PACKAGES)


def test_no_test_spells_the_package_list_out() -> None:
    """A literal of three or more product package names, outside ``tests/_packages.py``, is a
    second copy of the list."""
    copies = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        if path.name == "_packages.py" or "__pycache__" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Tuple | ast.List | ast.Set):
                names = {
                    e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in LAYER
                }
                if len(names) >= 3:
                    copies.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert copies == []
