"""Ordinary mistakes end in one line saying what is wrong and what to do, exit 1;
``lmcp --debug`` shows the traceback instead."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from lmcp.cli import app
from tests._servers import holding_duckdb

runner = CliRunner()


def _one_line(args: list[str], env: dict[str, str] | None = None) -> str:
    result = runner.invoke(app, args, env=env)
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = [x for x in result.output.splitlines() if x.strip()]
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error: ") and "Traceback" not in result.output
    return lines[0]


def test_a_file_that_is_not_duckdb(tmp_path: Path) -> None:
    path = tmp_path / "notes.duckdb"
    path.write_text("hello\n")
    line = _one_line(["analysis", "top", "--db", str(path)])
    assert "not a DuckDB database" in line and str(path) in line


def test_a_bad_parquet_file(tmp_path: Path) -> None:
    path = tmp_path / "export.parquet"
    path.write_text("hello\n")
    assert "not a valid Parquet file" in _one_line(["analysis", "top", "--db", str(path)])


def test_settings_json_that_is_a_folder(tmp_path: Path) -> None:
    (tmp_path / "settings.json").mkdir()
    line = _one_line(["signals", "on"], env={"LMCP_HOME": str(tmp_path)})
    assert "settings.json is a folder" in line


def test_lmcp_home_that_is_a_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.write_text("")
    line = _one_line(["signals", "status"], env={"LMCP_HOME": str(home)})
    assert "LMCP_HOME" in line and "is a file" in line


@pytest.fixture
def held(tmp_path: Path) -> Iterator[Path]:
    """A DuckDB file held by another process, as a running collector holds its database."""
    path = tmp_path / "signals.duckdb"
    duckdb.connect(str(path)).close()
    with holding_duckdb(path):
        yield path


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [["analysis", "top", "--db"], ["collector", "purge", "--db"], ["collector", "serve", "--db"]],
    ids=["analysis", "purge", "serve"],
)
def test_a_database_in_use(held: Path, args: list[str]) -> None:
    line = _one_line([*args, str(held)])
    assert "is in use by another process" in line and str(held) in line


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    path = tmp_path / "notes.duckdb"
    path.write_text("hello\n")
    result = runner.invoke(app, ["--debug", "analysis", "top", "--db", str(path)])
    assert result.exit_code != 0
    assert result.exception is not None and not isinstance(result.exception, SystemExit)
