"""``lmcp analysis synth`` shows a bar that moves at least every 100k rows, with an ETA; when
stdout is not a terminal, answers are CSV (or ``--format json``), never cut to a terminal's
width."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from rich.progress import TimeRemainingColumn
from typer.testing import CliRunner

from analysis import synthesize
from analysis._cli_data import synth_progress
from lmcp.cli import app

runner = CliRunner()


@pytest.mark.slow  # writes 250,000 rows
def test_synth_reports_progress_at_least_every_100k_rows(tmp_path: Path) -> None:
    seen: list[int] = []
    synthesize(tmp_path / "s.duckdb", 250_000, progress=seen.append)
    steps = [b - a for a, b in zip([0, *seen], seen, strict=False)]
    assert seen[-1] == 250_000 and max(steps) <= 100_000


def test_the_synth_bar_shows_the_time_left() -> None:
    assert any(isinstance(c, TimeRemainingColumn) for c in synth_progress().columns)


@pytest.mark.slow  # a synthetic DuckDB file
def test_not_a_terminal_means_csv_with_whole_columns(synth_path: Path) -> None:
    result = runner.invoke(app, ["analysis", "top", "--db", str(synth_path), "--exact"])
    assert result.exit_code == 0, result.output
    # stdout is the CSV alone; what the days cover goes to stderr, for the person.
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert rows[0][:3] == ["tool", "error_class", "friction_type"]
    assert "\u2026" not in result.output and len(rows) > 1
    assert result.stderr.startswith("note: the default "), result.stderr


@pytest.mark.slow  # a synthetic DuckDB file
def test_format_json_and_table_are_there_when_asked(synth_path: Path) -> None:
    base = ["analysis", "trends", "--db", str(synth_path), "--exact"]
    doc = json.loads(runner.invoke(app, [*base, "--format", "json"]).output)
    assert doc["question"] == "trends" and doc["rows"]
    table = runner.invoke(app, [*base, "--format", "table"]).output
    assert "Trends" in table or "trend" in table.lower()
