"""``lmcp analysis``: every command on an exported copy, one against a running collector."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

import analysis
from analysis import Filters, Question
from analysis._released import RELEASED_QUESTIONS, ask_released
from analysis.cli import app
from tests._servers import HANG_S
from tests.analysis.conftest import STEWARD_TOKEN, SYNTH_END, TEAM_TOKEN

pytestmark = pytest.mark.slow  # every test here starts a process

runner = CliRunner()


@pytest.mark.parametrize("question", RELEASED_QUESTIONS)
def test_every_released_question_prints_a_table(synth_path: Path, question: Question) -> None:
    result = runner.invoke(app, [question.value, "--db", str(synth_path), "--format", "table"])
    assert result.exit_code == 0, result.output
    assert analysis.QUESTIONS[question].title in result.output
    assert "differentially" in result.output


@pytest.mark.parametrize("question", list(Question))
def test_every_question_prints_an_exact_table_for_the_steward(
    synth_path: Path, question: Question
) -> None:
    result = runner.invoke(
        app, [question.value, "--db", str(synth_path), "--exact", "--format", "table"]
    )
    assert result.exit_code == 0, result.output
    assert "exact" in result.output


def test_json_output_is_the_api_answer(synth_path: Path) -> None:
    result = runner.invoke(
        app,
        ["platforms", "--db", str(synth_path), "--json", "--platform", "linux"],
    )
    assert result.exit_code == 0, result.output
    with duckdb.connect(str(synth_path), read_only=True) as con:
        filters = Filters.parse({"platform": "linux"})
        local = ask_released(con, Question.platforms, filters, limit=20)
    # The command prints at most --limit rows (default 20) of every question.
    assert analysis.answer_from_json(json.loads(result.output)) == replace(
        local, rows=local.rows[:20]
    )
    assert local.rows and local.source == "released"


@pytest.mark.parametrize(
    "args",
    [
        ["top"],
        ["top", "--db", "x.duckdb", "--url", "http://127.0.0.1:1"],
        ["top", "--db", "does-not-exist.duckdb"],
        ["top", "--url", "http://127.0.0.1:1"],
        ["top", "--db", "SYNTH", "--tool", "secret-value-123"],
        ["top", "--db", "SYNTH", "--k", "1"],
        ["top", "--db", "SYNTH", "--version", "1.4"],
        ["attempts", "--db", "SYNTH", "--platform", "linux"],
        ["top", "--url", "http://127.0.0.1:1", "--exact"],
    ],
)
def test_usage_errors(synth_path: Path, args: list[str]) -> None:
    args = [str(synth_path) if a == "SYNTH" else a for a in args]
    result = runner.invoke(app, args, env={"LMCP_TEAM_TOKEN": ""})
    assert result.exit_code == 2
    assert "secret-value-123" not in result.output


def test_report_is_offline_and_complete(synth_path: Path, tmp_path: Path) -> None:
    html_path, md_path, pngs = tmp_path / "r.html", tmp_path / "r.md", tmp_path / "img"
    result = runner.invoke(
        app,
        ["report", "--db", str(synth_path), "--out", str(html_path), "--markdown",
         str(md_path), "--png-dir", str(pngs)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    page = html_path.read_text(encoding="utf-8")
    assert "<script" not in page
    assert "https://" not in page and "http://" not in page.replace("http://www.w3.org/", "")
    for question in RELEASED_QUESTIONS:
        assert analysis.QUESTIONS[question].title in page
    assert page.count("<svg") == len(RELEASED_QUESTIONS)
    markdown = md_path.read_text(encoding="utf-8")
    assert markdown.count("| tool |") >= 5
    assert (tmp_path / "r-charts" / "top.svg").is_file()
    assert "](r-charts/top.svg)" in markdown
    assert sorted(p.name for p in pngs.iterdir()) == sorted(
        f"triage-{q.value}.png" for q in RELEASED_QUESTIONS
    )


def test_synth_appends_distinct_signals(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    for expected in (1500, 3000):
        result = runner.invoke(
            app, ["synth", "--signals", "1500", "--db", str(path), "--end-day", "2026-01-31"]
        )
        assert result.exit_code == 0, result.output
        assert f"{expected:,} signals" in result.output
    with duckdb.connect(str(path), read_only=True) as con:
        row = con.execute(
            "SELECT count(DISTINCT signal_id), min(day), max(day), count(DISTINCT tool_attempted)"
            " FROM signals"
        ).fetchone()
    assert row is not None
    assert row[0] == 3000
    assert str(row[2]) == "2026-01-31" and (row[2] - row[1]).days <= 90
    assert row[3] >= 15


def test_against_a_running_collector(collector_url: str, synth_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "ring",
            "--url",
            collector_url,
            "--json",
            "--start",
            "2026-05-01",
            "--end",
            SYNTH_END.isoformat(),
        ],  # fmt: skip
        env={"LMCP_TEAM_TOKEN": TEAM_TOKEN},
    )
    assert result.exit_code == 0, result.output
    assert TEAM_TOKEN not in result.output
    with duckdb.connect(str(synth_path), read_only=True) as con:
        start = SYNTH_END.replace(month=5, day=1)
        local = ask_released(con, Question.ring, Filters(start=start, end=SYNTH_END), limit=20)
    got = analysis.answer_from_json(json.loads(result.output))
    assert got == replace(local, rows=local.rows[:20]), "at most --limit rows are printed"
    assert local.rows
    refused = runner.invoke(
        app, ["top", "--url", collector_url], env={"LMCP_TEAM_TOKEN": "wrong-token"}
    )
    assert refused.exit_code == 1
    assert "403" in refused.output and "wrong-token" not in refused.output


def test_a_steward_parquet_export_answers_the_same_exact_figures(
    collector_url: str, synth_path: Path, tmp_path: Path
) -> None:
    import httpx

    response = httpx.get(
        f"{collector_url}/v1/signals/export",
        params={"format": "parquet"},
        headers={"Authorization": f"Bearer {STEWARD_TOKEN}"},
        timeout=HANG_S,
    )
    assert response.status_code == 200
    export = tmp_path / "signals.parquet"
    export.write_bytes(response.content)
    result = runner.invoke(
        app, ["shapes", "--db", str(export), "--exact", "--json", "--limit", "1000"]
    )
    assert result.exit_code == 0, result.output
    with duckdb.connect(str(synth_path), read_only=True) as con:
        local = analysis.shapes(con, limit=1000)
    assert analysis.answer_from_json(json.loads(result.output)) == local


def test_release_shows_its_progress_is_idempotent_and_answers_do_not_change(
    tmp_path: Path,
) -> None:
    path = tmp_path / "r.duckdb"
    made = runner.invoke(
        app, ["synth", "--signals", "3000", "--db", str(path)]
    )  # the 90 days up to today: the release window holds them
    assert made.exit_code == 0, made.output
    first = runner.invoke(app, ["release", "--db", str(path)])
    assert first.exit_code == 0 and "released 0 " not in first.output, first.output
    # A run of a minute or more says how far it is: its bar ends at every (cube, period).
    released = re.search(r"released ([\d,]+) \(cube, period\) pairs", first.output)
    assert released is not None
    total = released.group(1).replace(",", "")
    bar = re.search(r"releasing .*? (\d+)/(\d+) ", first.output)
    assert bar is not None and bar.groups() == (total, total), first.output
    before = runner.invoke(app, ["intents", "--db", str(path), "--json"]).output
    assert json.loads(before)["rows"], before
    again = runner.invoke(app, ["release", "--db", str(path)])
    assert "released 0 (cube, period) pairs" in again.output
    assert runner.invoke(app, ["intents", "--db", str(path), "--json"]).output == before
