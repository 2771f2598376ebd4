"""Issue 16, finding 10: ``lmcp collector backup`` copies what a crash left in the WAL."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from collector.db import Database
from lmcp.collector_cli import app
from tests._servers import REPO

ROWS = 2_000

_CRASH = textwrap.dedent(
    """
    import os, sys, duckdb
    con = duckdb.connect(sys.argv[1])
    con.execute("SET checkpoint_threshold='1GB'")
    con.execute(
        "INSERT INTO signals SELECT uuid(), 1, current_date, current_date, 'other', NULL, NULL,"
        " 'read_file', 1, 'timeout', [], [], NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1, 0, 0,"
        " 'linux' FROM range(?)",
        [int(sys.argv[2])],
    )
    os._exit(0)  # a crash: no checkpoint, no close
    """
)


def _crashed_database(tmp_path: Path) -> Path:
    path = tmp_path / "signals.duckdb"
    database = Database(path)
    database.open()
    database.close()
    subprocess.run([sys.executable, "-c", _CRASH, str(path), str(ROWS)], cwd=REPO, check=True)
    assert Path(f"{path}.wal").stat().st_size > 0
    return path


@pytest.mark.slow
def test_finding_10_backup_after_crash_has_every_row(tmp_path: Path) -> None:
    source = _crashed_database(tmp_path)
    dest = tmp_path / "backup" / "copy.duckdb"
    result = CliRunner().invoke(app, ["backup", "--db", str(source), "--to", str(dest)])
    assert result.exit_code == 0, result.output
    assert not Path(f"{dest}.wal").exists()
    con = duckdb.connect(str(dest), read_only=True)
    try:
        row = con.execute("SELECT count(*) FROM signals").fetchone()
    finally:
        con.close()
    assert row == (ROWS,)


@pytest.mark.slow
def test_finding_10_backup_refuses_a_database_in_use(tmp_path: Path) -> None:
    source = _crashed_database(tmp_path)
    holder = duckdb.connect(str(source))
    try:
        # Another process holds the file (as a running collector does).
        probe = subprocess.run(
            [sys.executable, "-m", "lmcp.collector_cli", "backup", "--db", str(source),
             "--to", str(tmp_path / "copy.duckdb")],
            cwd=REPO, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    finally:
        holder.close()
    assert probe.returncode == 1
    assert "in use" in probe.stderr
    assert not (tmp_path / "copy.duckdb").exists()
