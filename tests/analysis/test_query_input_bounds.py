"""What a triage query may ask is bounded and refused by name: an unknown enum value lists the
allowed ones (never the value given); integers are ASCII digits (Unicode digits are a 422, not
a number); the default period never ends after today, whatever day the data claims; ``--limit``
is honoured by every question."""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import Iterator
from pathlib import Path

import duckdb
import httpx
import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from analysis import Filters
from analysis._cells import coverage_of, exact_span
from analysis._filters import FilterError
from analysis._questions import Question
from collector.settings import CollectorSettings
from contract.schema import Platform
from lmcp.cli import app
from tests._servers import HANG_S, running_collector
from tests.analysis.conftest import TEAM_TOKEN

runner = CliRunner()


def test_an_invalid_enum_filter_lists_the_allowed_values() -> None:
    with pytest.raises(FilterError) as caught:
        Filters.parse({"platform": "beos"})
    assert all(p.value in str(caught.value) for p in Platform)
    assert "beos" not in str(caught.value)  # the value given is never echoed


def test_the_default_period_never_ends_after_today() -> None:
    """A signal dated far ahead (a client's clock) moves no period: the steward's exact view
    answers closed weeks only, as the team's answers released ones."""
    today = dt.date(2026, 12, 1)
    with duckdb.connect(":memory:") as con:
        con.execute("CREATE TABLE signals (day DATE)")
        con.execute("INSERT INTO signals VALUES ('2026-11-02'), ('9999-12-31')")
        span = exact_span(con, today=today)
        assert span is not None and span.through == dt.date(2026, 11, 22) < today
        assert coverage_of(con, Filters(), exact=True, today=today).period.end == span.through


@pytest.fixture
def team_url(tmp_path: Path) -> Iterator[str]:
    settings = CollectorSettings(
        db_path=tmp_path / "s.duckdb", read_tokens=[SecretStr(TEAM_TOKEN)], rate_limit_enabled=False
    )
    with running_collector(settings) as url:
        yield url


@pytest.mark.slow
def test_unicode_digits_in_a_triage_query_are_422(team_url: str) -> None:
    headers = {"Authorization": f"Bearer {TEAM_TOKEN}"}
    with httpx.Client(base_url=team_url, trust_env=False, timeout=HANG_S, headers=headers) as http:
        for query in ({"k": "²"}, {"limit": "٣"}, {"k": "５"}, {"limit": "1²"}):
            response = http.get("/v1/triage/top", params=query)
            assert response.status_code == 422, (query, response.status_code)
            assert response.headers["content-type"] == "application/problem+json"


@pytest.mark.slow  # a synthetic DuckDB file
@pytest.mark.parametrize("question", list(Question))
def test_limit_is_honoured_by_every_question(question: Question, synth_path: Path) -> None:
    args = ["analysis", question.value, "--db", str(synth_path), "--exact", "--format", "csv"]
    result = runner.invoke(app, [*args, "--limit", "2"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))  # the notes go to stderr
    if question is Question.trends:
        assert len({r["day"] for r in rows}) <= 2
    else:
        assert len(rows) <= 2
    wide = list(csv.DictReader(io.StringIO(runner.invoke(app, args).stdout)))
    assert len(wide) >= len(rows)
