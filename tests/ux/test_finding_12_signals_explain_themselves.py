"""Finding 12: ``on`` says what is sent and how to see it; ``off`` says what queued signals were
discarded; ``signals --help`` names the environment; ``--limit`` is honoured by every triage
question; an invalid enum filter lists the allowed values."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from analysis import Filters
from analysis._filters import FilterError
from analysis._questions import Question
from client.outbox import Outbox
from client.paths import LmcpHome
from contract.schema import Platform
from lmcp.cli import app
from tests.factories import make_signal

runner = CliRunner()


def test_on_says_what_is_sent_and_how_to_see_it(tmp_path: Path) -> None:
    result = runner.invoke(app, ["signals", "on"], env={"LMCP_HOME": str(tmp_path)})
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for command in ("lmcp signals preview", "lmcp signals log", "lmcp signals catalogue"):
        assert command in text


@pytest.mark.parametrize("mode", ["off", "local"])
def test_leaving_on_says_how_many_queued_signals_were_discarded(mode: str, tmp_path: Path) -> None:
    env = {"LMCP_HOME": str(tmp_path)}
    runner.invoke(app, ["signals", "on"], env=env)
    Outbox(LmcpHome(tmp_path)).add([make_signal(), make_signal(), make_signal()])
    result = runner.invoke(app, ["signals", mode], env=env)
    assert result.exit_code == 0
    assert "3 queued signal(s) were discarded" in " ".join(result.output.split())


def test_signals_help_names_the_environment() -> None:
    result = runner.invoke(app, ["signals", "--help"])
    text = " ".join(result.output.split())
    for name in ("DO_NOT_TRACK", "LMCP_ANONYMOUS_SIGNALS", "LMCP_HOME", "only turn signals OFF"):
        assert name in text


def test_an_invalid_enum_filter_lists_the_allowed_values() -> None:
    with pytest.raises(FilterError) as caught:
        Filters.parse({"platform": "beos"})
    assert all(p.value in str(caught.value) for p in Platform)
    assert "beos" not in str(caught.value)  # the value given is never echoed


@pytest.mark.slow  # a synthetic DuckDB file
@pytest.mark.parametrize("question", list(Question))
def test_limit_is_honoured_by_every_question(question: Question, synth_path: Path) -> None:
    import csv
    import io

    args = ["analysis", question.value, "--db", str(synth_path), "--exact", "--format", "csv"]
    result = runner.invoke(app, [*args, "--limit", "2"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.output)))
    if question is Question.trends:
        assert len({r["day"] for r in rows}) <= 2
    else:
        assert len(rows) <= 2
    wide = list(csv.DictReader(io.StringIO(runner.invoke(app, args).output)))
    assert len(wide) >= len(rows)
