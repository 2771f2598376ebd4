"""The layers are a contract: nothing imports a package above it, by name or by string.

    lmcp (the shell)  >  analysis  >  client | collector | cloudskills  >  service  >  contract

The layers are import-linter's ``layers`` contract in pyproject.toml (``tests/_packages.py``
reads them; ``tests/test_one_package_list.py`` checks they hold every package once).

By name: ``lint-imports`` (import-linter, configured in pyproject.toml; ``make check`` runs it)
is run on a temporary copy of the packages, untouched (it passes) and with one upward or
sideways import added (it must fail, naming it). By string: no package below the shell loads a
module dynamically (``import_module``, ``__import__``, ``import_optional``) or names a module of
a package above it or beside it in a string; only the shell composes optional parts
(``lmcp/_optional.py``).
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests._packages import LAYER, PACKAGES
from tests._servers import run_child

REPO = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    root.mkdir()
    for package in PACKAGES:
        shutil.copytree(
            REPO / package, root / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy2(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    # PYTHONPATH first: the copy is analysed, not the project installed in the venv.
    env = {**os.environ, "PYTHONPATH": str(root)}
    return run_child(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo"], cwd=root, env=env, repo_on_path=False
    )


@pytest.mark.slow
def test_lint_imports_passes_on_the_untouched_packages(tmp_path: Path) -> None:
    result = _lint(_copy(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("module", "line", "refusal"),
    [
        ("contract/schema/_models.py", "import lmcp", "contract is not allowed to import lmcp"),
        ("collector/app.py", "import analysis.web", "collector is not allowed to import analysis"),
        ("service/db.py", "import collector.db", "service is not allowed to import collector"),
        ("contract/days.py", "import service.sql", "contract is not allowed to import service"),
        ("collector/app.py", "import cloudskills.app", "collector is not allowed to import"),
        ("cloudskills/app.py", "from collector import db", "cloudskills is not allowed to import"),
        ("analysis/web.py", "from lmcp import apps", "analysis is not allowed to import lmcp"),
    ],
)
def test_lint_imports_fails_on_an_upward_or_sideways_import(
    tmp_path: Path, module: str, line: str, refusal: str
) -> None:
    root = _copy(tmp_path)
    target = root / module
    # A late import inside a function counts as much as one at the top.
    target.write_text(
        target.read_text(encoding="utf-8") + f"\n\ndef _sneaky() -> None:\n    {line}  # noqa\n",
        encoding="utf-8",
    )
    result = _lint(root)
    assert result.returncode != 0, result.stdout
    assert refusal in result.stdout, result.stdout


# -- by string ---------------------------------------------------------------------------------

#: Calls that load a module named by a string: only the shell may use them.
_DYNAMIC = ("import_module", "__import__", "import_optional", "find_spec", "load_module")


def _sources(package: str) -> list[Path]:
    return sorted(p for p in (REPO / package).rglob("*.py") if "__pycache__" not in p.parts)


def _forbidden(package: str) -> list[str]:
    """Packages ``package`` may never name: those above it and its siblings."""
    own = LAYER[package]
    return [p for p, layer in LAYER.items() if p != package and layer >= own]


def _is_module(dotted: str) -> bool:
    """Whether ``dotted`` (``pkg.mod`` or ``pkg.mod:attr``) names a module of this repo."""
    path = REPO.joinpath(*dotted.split(":")[0].split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _string_loads(path: Path, forbidden: list[str], root: Path = REPO) -> list[str]:
    """Dynamic loads, and strings naming a module of a ``forbidden`` package (a bare package
    name like "client" or "lmcp" is an ordinary word; a dotted name of a real module is not)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    where = path.relative_to(root)
    names = re.compile(rf"({'|'.join(forbidden)})(\.[A-Za-z_][A-Za-z0-9_]*)+(:[A-Za-z_]\w*)?")
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in _DYNAMIC:
                found.append(f"{where}:{node.lineno} calls {called}")
        elif isinstance(node, ast.ImportFrom) and node.module in ("importlib", "lmcp._optional"):
            imported = {alias.name for alias in node.names}
            if imported & {"import_module", "import_optional", "__import__"}:
                found.append(f"{where}:{node.lineno} imports a loader")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and forbidden
            and names.fullmatch(node.value)
            and _is_module(node.value)
        ):
            found.append(f"{where}:{node.lineno} names {node.value!r}")
    return found


@pytest.mark.parametrize("package", [p for p in PACKAGES if p != "lmcp"])
def test_no_package_below_the_shell_loads_a_module_by_string(package: str) -> None:
    found = [hit for path in _sources(package) for hit in _string_loads(path, _forbidden(package))]
    assert found == []


def test_the_string_check_sees_what_it_must(tmp_path: Path) -> None:
    """The check itself: each way of loading by string is caught (it would pass vacuously
    otherwise)."""
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text(
        "import importlib\n"
        "from importlib import import_module\n"
        "a = importlib.import_module('analysis.web')\n"
        "b = __import__('lmcp.cli')\n"
        "ROUTER = 'analysis.web:build_router'\n",
        encoding="utf-8",
    )
    hits = _string_loads(sneaky, _forbidden("collector"), root=tmp_path)
    assert len([h for h in hits if "calls" in h]) == 2
    assert any("imports a loader" in h for h in hits)
    assert any("'analysis.web'" in h for h in hits) and any("'lmcp.cli'" in h for h in hits)
    assert any("'analysis.web:build_router'" in h for h in hits)


def test_only_the_shell_composes_optional_parts() -> None:
    assert (REPO / "lmcp" / "_optional.py").is_file()
    assert not (REPO / "client" / "_optional.py").exists()
    users = [
        str(path.relative_to(REPO))
        for package in PACKAGES
        for path in _sources(package)
        if "import_optional" in path.read_text(encoding="utf-8")
    ]
    assert users and all(u.startswith("lmcp/") for u in users), users
