"""A tool's page has a trend: the ``friction`` cube's released cells of the tool summed per
week (the daily release has no tool), checked against the stored cells read with plain SQL,
equal to exact counts with the noise off, shown and downloaded on a real collector, and said
to be unavailable for filters its release cannot take."""

from __future__ import annotations

import csv
import datetime as dt
import html
import io
import math
from collections.abc import Iterator

import duckdb
import httpx
import pytest

from analysis._cells import ExactSource, ReleasedSource, coverage_of
from analysis._filters import Filters, Period
from analysis._friction import tool_trend
from analysis._period import Coverage
from analysis._session import COOKIE_NAME, make_session
from collector.releases.store import KEY_SEP
from contract.schema import ToolName
from tests._servers import HANG_S
from tests._synth import SYNTH_END
from tests.analysis.conftest import TEAM_TOKEN

WEEKS = Period(SYNTH_END - dt.timedelta(days=13), SYNTH_END)
TOOL = ToolName.search_files


def _covering(con: duckdb.DuckDBPyConnection) -> Coverage:
    return coverage_of(con, Filters(start=WEEKS.start, end=WEEKS.end))


def _stored_all(con: duckdb.DuckDBPyConnection) -> dict[dt.date, tuple[int, int]]:
    """Per released week: the tool's stored friction cells summed, and the 95 % margin of
    that sum (sigma squared per cell, summed), read with plain SQL."""
    rows = con.execute(
        "SELECT c.day, sum(c.n), count(*), any_value(p.scale) FROM release_cells c "
        "JOIN release_periods p ON p.cube = c.cube AND p.day = c.day "
        "WHERE c.cube = 'friction' AND c.key LIKE $1 AND c.day BETWEEN $2 AND $3 GROUP BY 1",
        [TOOL.value + KEY_SEP + "%", WEEKS.start, WEEKS.end],
    ).fetchall()
    return {
        day: (max(0, round(n)), math.ceil(1.96 * math.sqrt(cells * scale * scale)))
        for day, n, cells, scale in rows
    }


def test_the_trend_is_the_tools_stored_cells_summed_per_week(
    synth_con: duckdb.DuckDBPyConnection,
) -> None:
    rows = tool_trend(ReleasedSource(synth_con), TOOL, _covering(synth_con))
    overall = {r.week: (r.n, r.moe) for r in rows if r.series == "all"}
    assert overall == _stored_all(synth_con) and len(overall) == 2
    assert all(r.week_end == r.week + dt.timedelta(days=6) for r in rows)
    assert rows[0].series == "all", "the sum first, then each friction type"
    types = {r.series for r in rows} - {"all"}
    assert types, "the tool's friction types above their noise"


def test_with_the_noise_off_the_trend_is_the_exact_count(
    synth_con: duckdb.DuckDBPyConnection,
) -> None:
    rows = tool_trend(ExactSource(synth_con), TOOL, _covering(synth_con))
    counted = dict(
        synth_con.execute(
            "SELECT date_trunc('week', day)::DATE, count(*)::INT FROM signals "
            "WHERE tool_attempted::VARCHAR = $1 AND day BETWEEN $2 AND $3 GROUP BY 1",
            [TOOL.value, WEEKS.start, WEEKS.end],
        ).fetchall()
    )
    assert {r.week: r.n for r in rows if r.series == "all"} == counted
    by_type = dict(
        synth_con.execute(
            "SELECT friction_type::VARCHAR, count(*)::INT FROM signals "
            "WHERE tool_attempted::VARCHAR = $1 AND day BETWEEN $2 AND $3 GROUP BY 1",
            [TOOL.value, WEEKS.start, WEEKS.end],
        ).fetchall()
    )
    shown: dict[str, int] = {}
    for r in rows:
        if r.series != "all":
            shown[r.series] = shown.get(r.series, 0) + r.n
    assert shown == {t: n for t, n in by_type.items() if n > 0}


@pytest.fixture(scope="module")
def dashboard(collector_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=collector_url, trust_env=False, timeout=HANG_S) as client:
        client.cookies.set(COOKIE_NAME, make_session(TEAM_TOKEN), path="/dashboard")
        yield client


def test_the_tool_page_shows_and_downloads_its_trend(
    dashboard: httpx.Client, synth_con: duckdb.DuckDBPyConnection
) -> None:
    page = dashboard.get(f"/dashboard/tool/{TOOL.value}")
    assert page.status_code == 200
    card = page.text[page.text.index('id="q-weekly"') :]
    card = card[: card.index("</section>")]
    assert 'id="chart-weekly"><svg' in card
    expected = _stored_all(synth_con)
    for week, (n, moe) in expected.items():
        assert f"<td>{week.isoformat()}</td>" in card and f"{n:,} \u00b1 {moe:,}" in card
    assert page.text.index('id="q-top"') < page.text.index('id="q-weekly"'), "after its classes"
    assert 'id="q-trends"' not in page.text, "no panel saying the daily release has no tool"

    got = dashboard.get(f"/dashboard/tool/{TOOL.value}/export/trend.csv")
    assert got.status_code == 200
    assert got.headers["content-disposition"] == (
        f'attachment; filename="lmcp-tool-{TOOL.value}-trend-2026-06-15-2026-06-28.csv"'
    ), "the released weeks of the default period, named by the days they cover"
    table = list(csv.reader(io.StringIO(got.text, newline="")))
    assert table[0] == ["week", "week_end", "series", "n", "moe"]
    overall = {r[0]: (int(r[3]), int(r[4])) for r in table[1:] if r[2] == "all"}
    assert overall == {w.isoformat(): v for w, v in expected.items()}
    doc = dashboard.get(f"/dashboard/tool/{TOOL.value}/export/trend.json").json()
    assert doc["tool"] == TOOL.value and doc["source"] == "released"
    assert doc["period"] == {"start": "2026-06-15", "end": "2026-06-28"}
    assert doc["asked"] == {"start": "2026-06-01", "end": "2026-06-28", "default": True}
    assert doc["note"] and "the oldest released week starts 2026-06-15" in doc["note"]
    assert len(doc["rows"]) == len(table) - 1


def test_a_filter_its_release_cannot_take_is_said_not_hidden(dashboard: httpx.Client) -> None:
    page = dashboard.get(f"/dashboard/tool/{TOOL.value}", params={"platform": "linux"})
    assert page.status_code == 200
    card = page.text[page.text.index('id="q-weekly"') :]
    card = card[: card.index("</section>")]
    # Said with the card's own title, never an internal name.
    sentence = "\u201cTrend per week\u201d is released without a platform"
    assert html.escape(sentence) in card and 'class="export"' not in card
    refused = dashboard.get(
        f"/dashboard/tool/{TOOL.value}/export/trend.json", params={"platform": "linux"}
    )
    assert refused.status_code == 422 and sentence in refused.json()["detail"]
    for bad in ("/dashboard/tool/secret-value-123/export/trend.csv",
                f"/dashboard/tool/{TOOL.value}/export/top.csv",
                f"/dashboard/tool/{TOOL.value}/export/trend.xml"):  # fmt: skip
        assert dashboard.get(bad).status_code == 404, bad
