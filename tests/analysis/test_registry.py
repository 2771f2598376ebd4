"""The registry is the one definition of a triage question: every ``.sql`` file has an entry and
every entry a file, and every surface (CLI, ``/v1/triage``, dashboard, report, charts, released
cubes) lists exactly the registry's questions, in its order."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import fields
from pathlib import Path

import duckdb
import httpx
import pytest

from analysis import _charts
from analysis._dashboard import OVERVIEW, TOOL_VIEW, overview_answers, render_svgs, view_page
from analysis._filters import Filters
from analysis._questions import QUESTIONS, Question
from analysis._registry import Bars, Custom, dashboard_questions
from analysis._released import _DERIVE, CUBE_OF, RELEASED_QUESTIONS
from analysis.cli import app as cli_app
from analysis.report import answer_all, build_report
from collector.releases.cubes import CUBES
from contract.schema import FrictionSignal
from tests._servers import HANG_S
from tests.analysis.conftest import TEAM_TOKEN

QUERIES = Path(__file__).resolve().parents[2] / "analysis" / "queries"
MakeDb = Callable[[Sequence[FrictionSignal]], duckdb.DuckDBPyConnection]
_SECTION = re.compile(r'<section [^>]*id="q-([a-z_]+)"')


def test_every_sql_file_has_an_entry_and_every_entry_a_file() -> None:
    assert sorted(p.stem for p in QUERIES.glob("*.sql")) == sorted(q.value for q in Question)


def test_every_question_filters_through_the_one_macro() -> None:
    for q in Question:
        text = (QUERIES / f"{q.value}.sql").read_text(encoding="utf-8")
        assert "triage_filter($platform, $tool, " in text, q
        assert "CAST($platform AS platform)" not in text, f"{q}: the filter written out again"


def test_the_question_list_is_the_registry_in_its_order() -> None:
    assert list(QUESTIONS) == list(Question)
    assert all(QUESTIONS[q] is q.spec for q in Question)
    assert len({q.spec.title for q in Question}) == len(Question)


def test_every_chart_choice_resolves_and_every_chart_builder_is_chosen() -> None:
    custom = {q.spec.chart.builder for q in Question if isinstance(q.spec.chart, Custom)}
    assert custom == set(_charts._BUILDERS)
    for q in Question:
        if isinstance(q.spec.chart, Bars):
            names = {f.name for f in fields(q.spec.row_type)}
            assert {q.spec.chart.label, "n"} <= names, q


def test_the_released_mapping_is_the_registry_cubes() -> None:
    assert CUBE_OF == {q: q.spec.cube for q in Question if q.spec.cube is not None}
    assert RELEASED_QUESTIONS == tuple(q for q in Question if q.spec.cube is not None)
    assert set(CUBE_OF.values()) <= set(CUBES)
    assert set(_DERIVE) == set(RELEASED_QUESTIONS), "each released question derives its rows"


def test_the_cli_has_one_command_per_question() -> None:
    commands = {
        c.name
        for c in cli_app.registered_commands
        if c.callback is not None and c.callback.__qualname__.startswith("_command.")
    }
    assert commands == {q.value for q in Question}


def test_dashboard_placement_is_the_registry_placement() -> None:
    for tool_view, shown in ((False, OVERVIEW), (True, TOOL_VIEW)):
        assert shown == dashboard_questions(tool_view=tool_view)
        positions = [
            p
            for q in shown
            if (p := q.spec.placement.tool_view if tool_view else q.spec.placement.overview)
            is not None
        ]
        assert len(positions) == len(shown)
        assert positions == sorted(positions) and len(set(positions)) == len(positions)
    placed = {
        q
        for q in Question
        if q.spec.placement.overview is not None or q.spec.placement.tool_view is not None
    }
    assert placed == set(OVERVIEW) | set(TOOL_VIEW)
    assert placed <= set(RELEASED_QUESTIONS), "the dashboard shows released answers only"


def test_the_dashboard_page_shows_exactly_the_placed_questions(make_db: MakeDb) -> None:
    con = make_db([])
    view = overview_answers(con, Filters())
    page = view_page(view, render_svgs(view))
    assert _SECTION.findall(page) == [q.value for q in OVERVIEW]


def test_the_report_has_one_section_per_registry_question(make_db: MakeDb) -> None:
    con = make_db([])
    released = build_report(answer_all(con)).html
    assert _SECTION.findall(released) == [q.value for q in RELEASED_QUESTIONS]
    exact = build_report(answer_all(con, exact=True)).html
    assert _SECTION.findall(exact) == [q.value for q in Question]


@pytest.mark.slow
def test_the_api_lists_exactly_the_released_registry_questions(collector_url: str) -> None:
    auth = {"Authorization": f"Bearer {TEAM_TOKEN}"}
    with httpx.Client(base_url=collector_url, trust_env=False, timeout=HANG_S) as http:
        body = http.get("/v1/triage", headers=auth).json()
        names = [q["name"] for q in body["questions"]]
        assert names == [q.value for q in RELEASED_QUESTIONS]
        assert [q["cube"] for q in body["questions"]] == [q.spec.cube for q in RELEASED_QUESTIONS]
        for q in Question:
            response = http.get(f"/v1/triage/{q.value}", headers=auth)
            if q in RELEASED_QUESTIONS:
                assert response.status_code == 200, q
            else:  # known to the route (not "unknown_question"), on the steward's view only
                assert response.json()["type"].endswith("/not_released"), q


_NEW_SQL = """-- Error classes: which classes of failure the signals report.
-- Privacy: a class is shown only with at least $k signals; the share is of shown classes only.
WITH groups AS (
    SELECT error_class, count(*) AS n
    FROM signals
    WHERE day BETWEEN $start AND $end
      AND triage_filter($platform, $tool, $v_major, $v_minor, $v_patch)
    GROUP BY ALL
    HAVING count(*) >= $k
)
SELECT CAST(error_class AS VARCHAR) AS error_class, n, round(100.0 * n / sum(n) OVER (), 1)
    AS share_pct
FROM groups
ORDER BY n DESC, error_class;
"""
_NEW_ROW = """@dataclasses.dataclass(frozen=True, slots=True)
class ErrorClassRow:
    error_class: str
    n: int
    share_pct: float


"""
_NEW_MEMBER = """    errors = "errors", QuestionSpec(
        "Error classes", "Which classes of failure the signals report.",
        ErrorClassRow, Bars("error_class"), None,
    )  # fmt: skip
"""
_ASK_THE_NEW_QUESTION = """
import json, sys
from pathlib import Path
import duckdb
from typer.testing import CliRunner
import analysis
from analysis.cli import app
from analysis.report import answer_all, build_report
from tests.analysis.conftest import many, write_signals

assert Path(analysis.__file__).parent == Path.cwd() / "analysis", analysis.__file__
path = Path.cwd() / "signals.duckdb"
with duckdb.connect(str(path)) as con:
    write_signals(con, many(6, error_class="not_found"))
cli = CliRunner().invoke(app, ["errors", "--db", str(path), "--exact", "--json"])
con = duckdb.connect(str(path), read_only=True)
report = build_report(answer_all(con, exact=True)).html
print(json.dumps({"cli": cli.output, "code": cli.exit_code, "report": report}))
"""


@pytest.mark.slow
def test_a_new_question_is_one_sql_file_and_one_registry_entry(tmp_path: Path) -> None:
    """Add a question to a copy of the package by writing exactly those two things: the CLI,
    the exact answer, its chart and its report section all follow."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    root = QUERIES.parents[1]
    copy = tmp_path / "analysis"
    shutil.copytree(root / "analysis", copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "queries" / "errors.sql").write_text(_NEW_SQL, encoding="utf-8")
    registry = (copy / "_registry.py").read_text(encoding="utf-8")
    for anchor, added in (
        ("#: Any question's row.", _NEW_ROW),
        ("    | AttemptRow\n)", None),
        ("#: Every question's entry", _NEW_MEMBER + "\n\n"),
    ):
        assert anchor in registry, anchor
        if added is None:  # the Row union
            registry = registry.replace(anchor, "    | AttemptRow\n    | ErrorClassRow\n)", 1)
        else:
            registry = registry.replace(anchor, added + anchor, 1)
    assert registry.count("ErrorClassRow") == 3
    (copy / "_registry.py").write_text(registry, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-c", _ASK_THE_NEW_QUESTION],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=HANG_S, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["code"] == 0, out["cli"]
    answer = json.loads(out["cli"])
    assert answer["question"] == "errors" and answer["title"] == "Error classes"
    assert answer["rows"] == [{"error_class": "not_found", "n": 6, "share_pct": 100.0}]
    assert _SECTION.findall(out["report"])[-1] == "errors"
    section = out["report"].split('id="q-errors"', 1)[1]
    assert "<svg" in section.split("</section>", 1)[0], "the generic chart is drawn"
