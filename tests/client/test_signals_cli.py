"""``lmcp signals status --json`` says what ``status`` says, as data; ``preview`` shows the same
output for the same failure and says which fields are examples."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from client.outbox import Outbox
from client.paths import LmcpHome
from client.runtime import Runtime
from client.signals_cli import ENVELOPE_FIELDS, EXAMPLE_SIGNAL_ID, REPORTED_FIELDS
from contract.days import utc_today
from contract.schema import FrictionSignal
from lmcp.cli import app
from tests.factories import make_signal

runner = CliRunner()


def _status(env: dict[str, str]) -> dict[str, Any]:
    result = runner.invoke(app, ["signals", "status", "--json"], env=env)
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.output)
    return doc


def test_status_json_is_what_status_says(tmp_path: Path) -> None:
    env = {"LMCP_HOME": str(tmp_path), "LMCP_COLLECTOR_URL": "http://127.0.0.1:9"}
    assert runner.invoke(app, ["signals", "local"], env=env).exit_code == 0
    today = utc_today()
    queued = [make_signal(day=today, tool_attempted=t) for t in ("read_note", "list_notes")]
    Outbox(LmcpHome(tmp_path)).add(queued)
    doc = _status(env)
    assert doc["choice"] == "local" and doc["effective_mode"] == "local"
    assert doc["environment_restriction"] is None
    assert doc["queued"] == 2
    assert doc["today"] == today.isoformat()
    assert doc["weekly_bound"] == {
        "per_key": 1,
        "limit": 8,
        "week": (today - dt.timedelta(days=today.weekday())).isoformat(),
        "used_this_week": 2,  # the queued signals count, with or without contributions.json
        "latest_claimed_day": today.isoformat(),
    }
    assert doc["collector_url"] == "http://127.0.0.1:9"
    assert doc["collector_url_problem"] is None
    assert doc["state_folder"] == str(tmp_path)
    text = " ".join(runner.invoke(app, ["signals", "status"], env=env).output.split())
    for said in ("your choice (settings file): local", "queued in the outbox: 2", str(tmp_path)):
        assert said in text
    assert "per UTC week" in text and "used this week" in text and "2 / 8" in text


@pytest.mark.parametrize(
    ("extra", "restriction"),
    [({"DO_NOT_TRACK": "1"}, "DO_NOT_TRACK"), ({"LMCP_ANONYMOUS_SIGNALS": "0"}, None)],
)
def test_status_json_names_what_restricts_this_shell(
    tmp_path: Path, extra: dict[str, str], restriction: str | None
) -> None:
    env = {"LMCP_HOME": str(tmp_path), **extra}
    assert runner.invoke(app, ["signals", "on"], env=env).exit_code == 0
    doc = _status(env)
    assert doc["choice"] == "on" and doc["effective_mode"] == "off"
    assert doc["environment_restriction"] == (restriction or "LMCP_ANONYMOUS_SIGNALS")


def test_status_json_names_a_collector_url_that_cannot_work(tmp_path: Path) -> None:
    doc = _status({"LMCP_HOME": str(tmp_path), "LMCP_COLLECTOR_URL": "127.0.0.1:8765"})
    assert isinstance(doc["collector_url_problem"], str) and doc["collector_url_problem"]


def _failure(home: Path) -> None:
    """A failed call recorded as the latest failure, in local mode (no connection)."""
    env = {"LMCP_HOME": str(home)}
    assert runner.invoke(app, ["signals", "local"], env=env).exit_code == 0
    with Runtime.from_env(env) as rt:
        failed = rt.host.dispatch("read_note", {"note_name": "Does not exist"})
    assert not failed.ok


def _preview(home: Path) -> str:
    result = runner.invoke(app, ["signals", "preview"], env={"LMCP_HOME": str(home)})
    assert result.exit_code == 0, result.output
    return result.output


def test_preview_is_the_same_on_every_call(tmp_path: Path) -> None:
    _failure(tmp_path)
    first = _preview(tmp_path)
    assert first == _preview(tmp_path) == _preview(tmp_path)


def test_preview_says_which_fields_are_examples(tmp_path: Path) -> None:
    _failure(tmp_path)
    out = _preview(tmp_path)
    text, body = out[: out.index("{")], out[out.index("{") :]
    doc = json.loads(body)
    FrictionSignal.model_validate_json(body)  # what is shown is a valid signal
    assert doc["signal_id"] == EXAMPLE_SIGNAL_ID
    assert doc["tool_attempted"] == "read_note" and doc["error_class"] == "not_found"
    lines = text.splitlines()
    examples = next(line for line in lines if "shown as examples" in line)
    for name in REPORTED_FIELDS:
        assert name in examples
    assert "exact" not in text.lower()
    # Every field of the signal is named in the lines that explain it.
    explained = " ".join(line for line in lines if line.startswith("  "))
    for name in FrictionSignal.model_fields:
        assert re.search(rf"\b{name}\b", explained), name
    assert set(REPORTED_FIELDS) | set(ENVELOPE_FIELDS) <= set(FrictionSignal.model_fields)
