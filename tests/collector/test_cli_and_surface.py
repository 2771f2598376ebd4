"""The collector's command line and its deliberate public surface."""

from __future__ import annotations

import datetime as dt
import importlib
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from collector.db import migrate
from collector.store import flush_rows
from lmcp.apps import uvicorn_config
from lmcp.collector_cli import app, build_settings
from tests.collector.conftest import make_signal

MODULES = [
    "collector.app",
    "lmcp.collector_cli",
    "lmcp.skills_cli",
    "lmcp.apps",
    "collector.db",
    "collector.errors",
    "collector.ingest",
    "collector.ingest_routes",
    "collector.ratelimit",
    "collector.read_routes",
    "collector.retention",
    "collector.rows",
    "collector.settings",
    "collector.telemetry",
    "collector.writer",
    "service.auth",
    "service.db",
    "service.errors",
    "service.serving",
    "service.sql",
    "contract.days",
    "cloudskills.app",
    "cloudskills.settings",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_names_exist_and_are_public(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__all__
    assert len(set(exported)) == len(exported)
    for member in exported:
        assert hasattr(module, member), f"{name}.{member} missing"
        assert not member.startswith("_")


@pytest.mark.slow
def test_migrate_then_purge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "cli.duckdb"
    runner = CliRunner()
    result = runner.invoke(app, ["migrate", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "0001_signals.sql" in result.output
    assert "applied 0 migration(s)" in runner.invoke(app, ["migrate", "--db", str(db)]).output
    con = duckdb.connect(str(db))
    migrate(con)
    today = dt.datetime.now(dt.UTC).date()
    flush_rows(
        con, [[make_signal(day=today - dt.timedelta(days=200)), make_signal(day=today)]], today
    )
    con.close()
    monkeypatch.setenv("LMCP_COLLECTOR_RETENTION_DAYS", "30")
    result = runner.invoke(app, ["purge", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "deleted 1 signal(s) older than 30 days" in result.output


def test_serve_options_keep_addresses_out_of_logs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LMCP_COLLECTOR_PORT", "9999")
    settings = build_settings(host="127.0.0.1", db=Path("x.duckdb"))
    assert settings.port == 9999 and settings.db_path == Path("x.duckdb")
    options = uvicorn_config(settings)
    assert options["access_log"] is False
    assert options["server_header"] is False
    assert options["proxy_headers"] is False
    assert (options["host"], options["port"]) == ("127.0.0.1", 9999)


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LMCP_COLLECTOR_READ_TOKENS", '["tok-a-fake", "tok-b-fake"]')
    settings = build_settings()
    assert [t.get_secret_value() for t in settings.read_tokens] == ["tok-a-fake", "tok-b-fake"]
    assert "tok-a-fake" not in repr(settings)
    assert settings.db_path.name == "signals.duckdb"
