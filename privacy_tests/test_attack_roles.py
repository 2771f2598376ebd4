"""Attack: a token holder reads raw rows or exact counts.

Before: the token that read the k-suppressed views also exported every raw row
(``/v1/signals/export`` returned 20,001 of 20,001 rows), and ``/v1/signals/count?since=`` gave
exact per-day counts. Now the team role sees releases only; raw rows and exact counts belong to
the steward role, off by default, and every steward read is audited (label, day, route, filter:
never the token, never an address).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import duckdb
import httpx
from pydantic import SecretStr
from typer.testing import CliRunner

from analysis.cli import app as analysis_cli
from collector.releases.store import release_closed_periods
from collector.settings import CollectorSettings, StewardToken
from contract.accountant import ReleasePlan
from privacy_tests._release_world import D0, fleet_day, one_signal, write_days
from tests._servers import HANG_S, running_collector

TEAM = "team-token-for-the-roles-attack"
STEWARD = "steward-token-for-the-roles-attack"
RAW = ("/v1/signals/export", "/v1/signals/export?format=csv", "/v1/signals/count",
       f"/v1/signals/count?since={D0.isoformat()}")  # fmt: skip


def _settings(db: Path, **extra: object) -> CollectorSettings:
    return CollectorSettings(
        db_path=db,
        read_tokens=[SecretStr(TEAM)],
        retention_days=36500,
        rate_limit_enabled=False,
        **extra,  # type: ignore[arg-type]
    )


def test_the_team_token_reads_no_raw_row_and_no_exact_count(tmp_path: Path) -> None:
    """Steward off (the default): every raw route refuses, whatever token is shown."""
    db = tmp_path / "signals.duckdb"
    write_days(db, [(D0, fleet_day(D0, 200, seed=1))])
    with (
        running_collector(_settings(db)) as url,
        httpx.Client(base_url=url, timeout=HANG_S) as http,
    ):
        for path in RAW:
            for token in (TEAM, STEWARD):
                r = http.get(path, headers={"Authorization": f"Bearer {token}"})
                assert r.status_code == 403, (path, r.status_code)
                assert r.json()["code"] == "steward_off"
                assert b"signal_id" not in r.content
        assert http.get("/v1/triage", headers={"Authorization": f"Bearer {TEAM}"}).is_success


def test_steward_reads_are_audited_and_the_team_is_still_refused(tmp_path: Path) -> None:
    db = tmp_path / "signals.duckdb"
    write_days(db, [(D0, fleet_day(D0, 200, seed=2))])
    steward = StewardToken(label="alice-steward", token=SecretStr(STEWARD))
    with (
        running_collector(_settings(db, steward_tokens=[steward])) as url,
        httpx.Client(base_url=url, timeout=HANG_S) as http,
    ):
        for path in RAW:
            r = http.get(path, headers={"Authorization": f"Bearer {TEAM}"})
            assert r.status_code == 403 and r.json()["code"] == "steward_only", path
        for path in RAW:
            assert http.get(path, headers={"Authorization": f"Bearer {STEWARD}"}).is_success
        # The steward is a separate role: its token opens no team route.
        opened = http.get("/v1/triage", headers={"Authorization": f"Bearer {STEWARD}"})
        assert opened.status_code == 403
    with duckdb.connect(str(db), read_only=True) as con:
        audit = con.execute("SELECT read_day, label, route, filter FROM steward_audit").fetchall()
        dump = str(con.execute("SELECT * FROM steward_audit").fetchall())
    today = dt.datetime.now(dt.UTC).date()
    assert len(audit) == len(RAW), "one audit row per steward read, none for refused reads"
    assert {(r[0], r[1]) for r in audit} == {(today, "alice-steward")}
    assert sorted(r[2:] for r in audit) == sorted(
        [("/v1/signals/export", "format=parquet"), ("/v1/signals/export", "format=csv"),
         ("/v1/signals/count", ""), ("/v1/signals/count", f"since={D0.isoformat()}")]
    )  # fmt: skip
    assert STEWARD not in dump and TEAM not in dump and "127.0.0.1" not in dump


def test_a_local_copy_answers_with_releases_unless_the_steward_asks_exact(tmp_path: Path) -> None:
    """``lmcp analysis --db`` reads the stored releases; exact figures need ``--exact``."""
    db = tmp_path / "signals.duckdb"
    lone = [one_signal(D0, "recipe_export", "conflict", "task_abandoned") for _ in range(6)]
    write_days(db, [(D0, fleet_day(D0, 2_000, seed=3) + lone)])
    with duckdb.connect(str(db)) as con:  # once D0's week is closed
        release_closed_periods(con, D0 + dt.timedelta(days=10), ReleasePlan(), retention_days=14)
    runner = CliRunner()
    args = ["top", "--db", str(db), "--tool", "recipe_export", "--start", D0.isoformat(),
            "--end", D0.isoformat(), "--json"]  # fmt: skip
    released = runner.invoke(analysis_cli, args)
    assert released.exit_code == 0, released.output
    # Released: the cell's noisy count, with its noise (a lone group is within noise, usually
    # not listed); never the exact 6.
    rows = json.loads(released.output)["rows"]
    assert all(r["moe"] > 0 for r in rows), rows
    exact = runner.invoke(analysis_cli, [*args, "--exact"])
    assert exact.exit_code == 0 and '"recipe_export"' in exact.output
    assert [r["n"] for r in json.loads(exact.output)["rows"]] == [6]


def test_a_steward_read_that_cannot_be_audited_is_refused(tmp_path: Path) -> None:
    import asyncio

    import pytest

    from collector.db import signals_database
    from collector.roles import DatabaseAudit, Steward, audit_read
    from service.errors import ProblemError

    db = signals_database(tmp_path / "signals.duckdb")
    db.open()
    try:
        db.run_sync(lambda con: con.execute("DROP TABLE steward_audit"))
        with pytest.raises(ProblemError) as refused:
            asyncio.run(
                audit_read(DatabaseAudit(db), Steward("alice-steward"), "/v1/signals/count", {})
            )
        assert refused.value.status == 503
    finally:
        db.close()
