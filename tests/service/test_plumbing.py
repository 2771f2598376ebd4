"""The shared plumbing of both services: one definition per concept, and ``load_sql`` never
leaves its folder."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

from service.sql import load_sql
from tests._packages import PACKAGES

REPO = Path(__file__).resolve().parents[2]


@cache
def _definitions() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef | ast.ClassDef):
                    where = f"{path.relative_to(REPO)}:{node.lineno}"
                    found.setdefault(node.name, []).append(where)
    return found


@pytest.mark.parametrize(
    "name",
    [
        "load_sql",
        "utc_today",
        "token_matches",
        "apply_migrations",
        "discover_migrations",
        "Database",
        "ProblemError",
        "install_error_handlers",
        "CatchAllMiddleware",
        "silence_access_log",
        "service_version",
        "uvicorn_config",
        "import_optional",
    ],
)
def test_one_definition_per_concept(name: str) -> None:
    where = _definitions().get(name, [])
    assert len(where) == 1, where


def test_load_sql_reads_a_named_file(tmp_path: Path) -> None:
    (tmp_path / "count_things.sql").write_text("SELECT 1", encoding="utf-8")
    assert load_sql(tmp_path, "count_things") == "SELECT 1"


@pytest.mark.parametrize(
    "name", ["../secret", "sub/file", "Count", "a.b", "", "name.sql", "..", "x\x00y"]
)
def test_load_sql_never_leaves_its_folder(tmp_path: Path, name: str) -> None:
    inner = tmp_path / "sql"
    inner.mkdir()
    (tmp_path / "secret.sql").write_text("SELECT 'outside'", encoding="utf-8")
    with pytest.raises(KeyError):
        load_sql(inner, name)


def test_a_missing_file_is_a_key_error(tmp_path: Path) -> None:
    with pytest.raises(KeyError):
        load_sql(tmp_path, "absent")
