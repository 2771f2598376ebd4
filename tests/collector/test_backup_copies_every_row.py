"""``lmcp collector backup`` copies every row: what a crash left in the WAL too, through a running
collector (the steward's role only), and never from a database another process holds."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from collector.db import signals_database
from lmcp.collector_cli import app
from tests._servers import HANG_S, run_child

ROWS = 2_000

_CRASH = textwrap.dedent(
    """
    import os, sys, duckdb
    con = duckdb.connect(sys.argv[1])
    con.execute("SET checkpoint_threshold='1GB'")
    con.execute(
        "INSERT INTO signals SELECT uuid(), 2, current_date, current_date, 'other', NULL, NULL,"
        " 'read_file', NULL, 'timeout', [], [], NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1, 0, 0,"
        " 'linux' FROM range(?)",
        [int(sys.argv[2])],
    )
    os._exit(0)  # a crash: no checkpoint, no close
    """
)


def _crashed_database(tmp_path: Path) -> Path:
    path = tmp_path / "signals.duckdb"
    database = signals_database(path)
    database.open()
    database.close()
    run_child([sys.executable, "-c", _CRASH, str(path), str(ROWS)], check=True)
    assert Path(f"{path}.wal").stat().st_size > 0
    return path


@pytest.mark.slow
def test_backup_after_crash_has_every_row(tmp_path: Path) -> None:
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
def test_backup_refuses_a_database_in_use(tmp_path: Path) -> None:
    source = _crashed_database(tmp_path)
    holder = duckdb.connect(str(source))
    try:
        # Another process holds the file (as a running collector does).
        probe = run_child(
            [sys.executable, "-m", "lmcp.collector_cli", "backup", "--db", str(source),
             "--to", str(tmp_path / "copy.duckdb")],
        )  # fmt: skip
    finally:
        holder.close()
    assert probe.returncode == 1
    assert "in use" in probe.stderr
    assert not (tmp_path / "copy.duckdb").exists()


@pytest.mark.slow
def test_backup_through_a_running_collector(tmp_path: Path) -> None:
    import datetime as dt
    import json
    import uuid

    import httpx
    from pydantic import SecretStr

    from collector.settings import CollectorSettings, StewardToken
    from tests._servers import collector_process

    token = "team-token-backup"
    steward = "steward-token-backup"
    settings = CollectorSettings(
        db_path=tmp_path / "live.duckdb",
        read_tokens=[SecretStr(token)],
        steward_tokens=[StewardToken(label="ops", token=SecretStr(steward))],
        rate_limit_enabled=False,
        backup_dir=tmp_path / "backups",
    )
    today = dt.datetime.now(dt.UTC).date().isoformat()
    signal = {
        "schema_version": 2, "day": today, "friction_type": "other",
        "tool_attempted": "read_file", "error_class": "timeout",
        "client": {"version": "1.0.0", "platform": "linux"},
    }  # fmt: skip
    with collector_process(settings) as collector:
        with httpx.Client(base_url=collector.base_url, trust_env=False, timeout=HANG_S) as http:
            for _ in range(5):
                batch = [dict(signal, signal_id=str(uuid.uuid4())) for _ in range(100)]
                answer = http.post(
                    "/v1/signals",
                    content=json.dumps({"signals": batch}),
                    headers={"Content-Type": "application/json"},
                )
                assert answer.json() == {"accepted": 100, "duplicates": 0}
            assert http.post("/v1/admin/backup").status_code == 401
            # A copy holds raw rows: the team role may not make one.
            team = http.post("/v1/admin/backup", headers={"Authorization": f"Bearer {token}"})
            assert team.status_code == 403
        result = CliRunner().invoke(
            app, ["backup", "--url", collector.base_url], env={"LMCP_STEWARD_TOKEN": steward}
        )
        assert result.exit_code == 0, result.output
        assert "(500 signal(s))" in result.output
    (copy,) = (tmp_path / "backups").iterdir()
    con = duckdb.connect(str(copy), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM signals").fetchone() == (500,)
        assert con.execute("SELECT count(*) FROM schema_migrations").fetchone() != (0,)
    finally:
        con.close()
