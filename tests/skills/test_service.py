"""The skills service as a service: settings (documented, ``LMCP_SKILLS_*``, not the collector's),
``lmcp skills migrate``, health and readiness."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import httpx
import pytest
from typer.testing import CliRunner

from cloudskills.settings import SkillsSettings
from collector.settings import CollectorSettings
from lmcp.cli import app as lmcp
from tests._servers import HANG_S

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _section() -> str:
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    start = text.index("## Cloud Skills service settings")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def test_every_setting_is_documented_and_no_documented_one_is_gone() -> None:
    documented = set(re.findall(r"^\| `([a-z_0-9]+)` \|", _section(), re.MULTILINE))
    assert documented == set(SkillsSettings.model_fields)


def test_settings_come_from_the_environment_and_hide_tokens(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LMCP_SKILLS_PRINCIPALS", '[{"token": "t-fake-skills", "principal": "ada"}]')
    monkeypatch.setenv("LMCP_SKILLS_DB_PATH", str(tmp_path / "s.duckdb"))
    # The client's variables share the prefix: the service ignores them.
    monkeypatch.setenv("LMCP_SKILLS_URL", "http://127.0.0.1:1")
    monkeypatch.setenv("LMCP_SKILLS_TOKEN", "t-client-fake")
    settings = SkillsSettings()
    assert settings.principals[0].principal == "ada"
    assert settings.db_path == tmp_path / "s.duckdb"
    assert (settings.host, settings.port) == ("127.0.0.1", 8766)
    assert "t-fake-skills" not in repr(settings)


def test_the_default_files_differ_and_the_collector_has_no_skills_setting() -> None:
    assert SkillsSettings().db_path != CollectorSettings().db_path
    assert not [name for name in CollectorSettings.model_fields if "skill" in name]
    assert SkillsSettings().port != CollectorSettings().port


def test_lmcp_skills_migrate_creates_only_the_skills_tables(tmp_path: Path) -> None:
    db = tmp_path / "skills.duckdb"
    runner = CliRunner()
    first = runner.invoke(lmcp, ["skills", "migrate", "--db", str(db)])
    assert first.exit_code == 0, first.output
    assert "applied 1 migration(s): 0001_skills.sql" in first.output
    again = runner.invoke(lmcp, ["skills", "migrate", "--db", str(db)])
    assert "applied 0 migration(s)" in again.output
    with duckdb.connect(str(db), read_only=True) as con:
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    assert "skills" in tables and "signals" not in tables


def test_health_and_readiness(base_url: str) -> None:
    assert httpx.get(f"{base_url}/healthz", timeout=HANG_S).json() == {"status": "ok"}
    assert httpx.get(f"{base_url}/readyz", timeout=HANG_S).json() == {"status": "ready"}
    missing = httpx.get(f"{base_url}/no-such-route", timeout=HANG_S)
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/problem+json"
