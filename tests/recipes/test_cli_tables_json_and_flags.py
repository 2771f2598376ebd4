"""``lmcp recipes`` speaks the command line's language: tables for people, ``--json`` with the
answer itself (no MCP envelope), flag names in messages, ``save FILE`` for a bare manifest, and
no ``friction.can_report`` hint no command could act on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lmcp.cli import app

runner = CliRunner()

MANIFEST = {
    "name": "Morning",
    "steps": [{"tool": "get_datetime"}, {"tool": "read_note", "args": {"note_name": "Nope"}}],
}


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        "LMCP_HOME": str(tmp_path / "home"),
        "LMCP_COLLECTOR_URL": "http://127.0.0.1:9",
        "DO_NOT_TRACK": "1",
    }


@pytest.fixture
def manifest_file(tmp_path: Path) -> Path:
    path = tmp_path / "morning.json"
    path.write_text(json.dumps(MANIFEST), "utf-8")
    return path


def test_save_a_bare_manifest_then_list_as_a_table_and_as_json(
    env: dict[str, str], manifest_file: Path
) -> None:
    saved = runner.invoke(app, ["recipes", "save", str(manifest_file)], env=env)
    assert saved.exit_code == 0, saved.output
    assert "saved 'Morning' (2 step(s))" in saved.output
    table = runner.invoke(app, ["recipes", "list"], env=env)
    assert "Morning" in table.output and '"ok"' not in table.output
    listed = json.loads(runner.invoke(app, ["recipes", "list", "--json"], env=env).output)
    assert [r["name"] for r in listed["recipes"]] == ["Morning"]
    assert "outcome" not in listed and "result" not in listed  # not the MCP envelope


def test_messages_name_the_flags(env: dict[str, str], manifest_file: Path) -> None:
    runner.invoke(app, ["recipes", "save", str(manifest_file)], env=env)
    again = runner.invoke(app, ["recipes", "save", str(manifest_file)], env=env)
    assert again.exit_code == 1
    assert "--overwrite" in again.output and "overwrite: true" not in again.output
    replaced = runner.invoke(app, ["recipes", "save", str(manifest_file), "--overwrite"], env=env)
    assert replaced.exit_code == 0 and "replaced 'Morning'" in replaced.output


def test_a_failed_run_shows_no_friction_hint(env: dict[str, str], manifest_file: Path) -> None:
    runner.invoke(app, ["recipes", "save", str(manifest_file)], env=env)
    failed = runner.invoke(app, ["recipes", "run", "Morning"], env=env)
    assert failed.exit_code == 1 and "error:" in failed.output
    as_json = runner.invoke(app, ["recipes", "run", "Morning", "--json"], env=env)
    assert as_json.exit_code == 1
    doc = json.loads(as_json.output)
    assert doc["ok"] is False and doc["steps"]
    for output in (failed.output, as_json.output):
        assert "can_report" not in output and "friction" not in output
