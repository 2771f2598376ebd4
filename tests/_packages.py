"""The project's packages, read from their one source: pyproject.toml's wheel ``packages``.

Every test that walks the product code takes its list from here; a tool whose configuration
must spell the list out (mypy, coverage, import-linter, ``lmcp/_optional.py``) is checked
against it by ``tests/test_one_package_list.py``."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

__all__ = ["DEV_PACKAGES", "LAYER", "PACKAGES", "PYPROJECT", "REPO"]

REPO = Path(__file__).resolve().parent.parent
PYPROJECT: dict[str, Any] = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))

#: The product packages, in the wheel's order (the layers' order, ground first).
PACKAGES: tuple[str, ...] = tuple(
    PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
)

#: Every other package of the repository (tests, benchmarks, scripts, development code).
DEV_PACKAGES: tuple[str, ...] = tuple(
    sorted(
        path.parent.name for path in REPO.glob("*/__init__.py") if path.parent.name not in PACKAGES
    )
)


def _layers() -> dict[str, int]:
    """Each package's layer in import-linter's ``layers`` contract (0: the ground)."""
    (contract,) = [c for c in PYPROJECT["tool"]["importlinter"]["contracts"] if c["id"] == "layers"]
    top_first: list[str] = contract["layers"]
    return {
        package.strip(): len(top_first) - 1 - rank
        for rank, layer in enumerate(top_first)
        for package in layer.split("|")
    }


#: Each package's layer: a package imports only packages of a lower layer (never a sibling).
LAYER: dict[str, int] = _layers()
