"""The registry is the one definition of a triage question: every entry has one derivation
(``analysis._released.DERIVE``, shared by the team's and the steward's views) over cubes that
exist, and every surface (CLI, ``/v1/triage``, dashboard, report, charts, released cubes) lists
exactly the registry's questions, in its order."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import duckdb
import httpx
import pytest

from analysis import _charts
from analysis._cells import CUBE_OF, CUBES_OF, RELEASED_QUESTIONS
from analysis._dashboard import OVERVIEW, TOOL_VIEW, overview_answers, render_svgs, view_page
from analysis._filters import Filters
from analysis._questions import QUESTIONS, Question
from analysis._registry import Bars, Custom, dashboard_questions
from analysis._released import DERIVE
from analysis.cli import app as cli_app
from analysis.report import answer_all, build_report
from collector.releases.cubes import CUBES
from tests._servers import HANG_S
from tests.analysis.conftest import TEAM_TOKEN

ANALYSIS = Path(__file__).resolve().parents[2] / "analysis"
_SECTION = re.compile(r'<section [^>]*id="q-([a-z_]+)"')


def test_no_question_has_a_second_definition_in_sql() -> None:
    """The exact view derives from the same cube cells: no per-question SQL file is left."""
    assert not list(ANALYSIS.glob("queries/*.sql"))
    assert sorted(p.stem for p in ANALYSIS.glob("sql/*.sql")) == ["bounds", "load_parquet", "synth"]


def test_every_row_type_carries_its_noise() -> None:
    for q in Question:
        names = [f.name for f in fields(q.spec.row_type)]
        assert names[names.index("n") + 1] == "moe", q
        if "share_pct" in names and q is not Question.regressions:  # shares of versions
            assert "share_moe" in names, q


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
    assert {c for cubes in CUBES_OF.values() for c in cubes} == set(CUBES), "every cube is read"
    assert set(DERIVE) == set(RELEASED_QUESTIONS), "each released question derives its rows"


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


def test_the_dashboard_page_shows_exactly_the_placed_questions(
    synth_con: duckdb.DuckDBPyConnection,
) -> None:
    view = overview_answers(synth_con, Filters())
    page = view_page(view, render_svgs(view))
    assert _SECTION.findall(page) == [q.value for q in OVERVIEW]


def test_the_report_has_one_section_per_registry_question(
    synth_con: duckdb.DuckDBPyConnection,
) -> None:
    released = build_report(answer_all(synth_con)).html
    assert _SECTION.findall(released) == [q.value for q in RELEASED_QUESTIONS]
    exact = build_report(answer_all(synth_con, exact=True)).html
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
