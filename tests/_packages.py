"""The project's packages, read from their one source: pyproject.toml's wheel ``packages``.

Every test that walks the product code takes its list from here; a tool whose configuration
must spell the list out (mypy, coverage, import-linter, ``lmcp/_optional.py``) is checked
against it by ``tests/test_one_package_list.py``."""

from __future__ import annotations

import tomllib
from pathlib import Path

__all__ = ["PACKAGES", "PYPROJECT", "REPO"]

REPO = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))

#: The product packages, in the wheel's order (the layers' order, ground first).
PACKAGES: tuple[str, ...] = tuple(
    PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
)
