"""A friction's own page: its figures are sums of released cells (checked against the stored
cells read directly), the same as the top table's, and the exact counts with the noise off;
over HTTP on a real collector its page, links and downloads show exactly those figures."""

from __future__ import annotations

import csv
import datetime as dt
import html
import io
import json
import math
import re
from collections.abc import Iterator
from typing import Any

import duckdb
import httpx
import pytest

from analysis._cells import ExactSource, ReleasedSource, coverage_of
from analysis._filters import Filters, Period
from analysis._friction import FrictionKey, friction_figures
from analysis._period import Coverage
from analysis._registry import Question
from analysis._released import ask_released
from analysis._rows import FrictionVersionRow, TopRow, WeekRow
from analysis._session import COOKIE_NAME, make_session
from collector.releases.store import KEY_SEP
from tests._servers import HANG_S
from tests._synth import SYNTH_END
from tests.analysis.conftest import TEAM_TOKEN

#: The synthetic file's released weeks (its retention window keeps two).
WEEKS = Period(SYNTH_END - dt.timedelta(days=13), SYNTH_END)
#: The last week, whose previous week is released too.
LATE = Period(SYNTH_END - dt.timedelta(days=6), SYNTH_END)
AUTH = {"Authorization": f"Bearer {TEAM_TOKEN}"}


def _released_weeks(con: duckdb.DuckDBPyConnection, key: FrictionKey, period: Period) -> list[
    tuple[dt.date, int, int]
]:  # fmt: skip
    """The key's stored cell and sigma per released week of ``period``, read with plain SQL."""
    rows = con.execute(
        "SELECT c.day, c.n, p.scale FROM release_cells c JOIN release_periods p "
        "ON p.cube = c.cube AND p.day = c.day WHERE c.cube = 'friction' AND c.key = $1 "
        "AND c.day BETWEEN $2 AND $3 ORDER BY c.day",
        [KEY_SEP.join(key.cell), period.start, period.end],
    ).fetchall()
    return [(day, int(n), math.ceil(1.96 * float(scale))) for day, n, scale in rows]


def _covering(con: duckdb.DuckDBPyConnection, period: Period) -> Coverage:
    return coverage_of(con, Filters(start=period.start, end=period.end))


def _top_rows(con: duckdb.DuckDBPyConnection, period: Period) -> list[TopRow]:
    answer = ask_released(con, Question.top, Filters(), limit=1000, period=period)
    return list(answer.narrow(TopRow).rows)


def test_every_top_friction_has_the_same_figures_on_its_page(
    synth_con: duckdb.DuckDBPyConnection,
) -> None:
    rows = _top_rows(synth_con, LATE)
    assert len(rows) > 10
    for row in rows[:12]:
        key = FrictionKey.parse(row.tool, row.error_class, row.friction_type)
        assert key is not None
        figures = friction_figures(ReleasedSource(synth_con), key, _covering(synth_con, LATE))
        assert figures.row == row, "every figure, with its noise, as its top row shows it"
        assert row.prev_n is not None and row.prev_moe, "the week before is released"


def test_the_trend_is_the_stored_cells_of_each_week(synth_con: duckdb.DuckDBPyConnection) -> None:
    for row in _top_rows(synth_con, WEEKS)[:5]:
        key = FrictionKey.parse(row.tool, row.error_class, row.friction_type)
        assert key is not None
        figures = friction_figures(ReleasedSource(synth_con), key, _covering(synth_con, WEEKS))
        stored = _released_weeks(synth_con, key, WEEKS)
        assert len(stored) == 2
        weeks = [(r.week, r.n, r.moe) for r in figures.trend]
        assert weeks == [(day, max(0, n), moe) for day, n, moe in stored]
        assert all(r.week_end == r.week + dt.timedelta(days=6) for r in figures.trend)
        # The period's count sums the cells, and its noise the cells' variances.
        assert figures.row.n == max(0, sum(n for _, n, _ in stored))
        assert figures.row.prev_n is None, "the weeks before the window were never released"
        assert "no comparison" in figures.coverage.comparison


def test_with_the_noise_off_the_figures_are_the_exact_counts(
    synth_con: duckdb.DuckDBPyConnection,
) -> None:
    row = _top_rows(synth_con, WEEKS)[0]
    key = FrictionKey.parse(row.tool, row.error_class, row.friction_type)
    assert key is not None
    figures = friction_figures(ExactSource(synth_con), key, _covering(synth_con, WEEKS))
    weekly = dict(
        synth_con.execute(
            "SELECT date_trunc('week', day)::DATE, count(*)::INT FROM signals "
            "WHERE tool_attempted::VARCHAR = $1 AND error_class::VARCHAR = $2 "
            "AND friction_type::VARCHAR = $3 AND day BETWEEN $4 AND $5 GROUP BY 1",
            [*key.cell, WEEKS.start, WEEKS.end],
        ).fetchall()
    )
    assert {r.week: r.n for r in figures.trend if r.n} == weekly
    assert all(r.moe == 0 for r in figures.trend)
    assert figures.row.n == sum(weekly.values())
    versions = synth_con.execute(
        "SELECT format('{}.{}.{}', client_version_major, client_version_minor, "
        "client_version_patch) AS v, count(*) FILTER (WHERE tool_attempted::VARCHAR = $1 "
        "AND error_class::VARCHAR = $2)::INT, count(*)::INT FROM signals "
        "WHERE day BETWEEN $3 AND $4 GROUP BY v",
        [*key.cell[:2], WEEKS.start, WEEKS.end],
    ).fetchall()
    expected = {v: (n, total) for v, n, total in versions if n > 0}
    assert {r.version: (r.n, r.version_n) for r in figures.versions} == expected
    for r in figures.versions:
        assert r.share_pct == round(100 * r.n / r.version_n, 1) and r.share_moe == 0.0


def test_its_tool_panels_are_the_tool_page_answers(synth_con: duckdb.DuckDBPyConnection) -> None:
    row = _top_rows(synth_con, WEEKS)[0]
    key = FrictionKey.parse(row.tool, row.error_class, row.friction_type)
    assert key is not None
    figures = friction_figures(ReleasedSource(synth_con), key, _covering(synth_con, WEEKS))
    tool = Filters(start=WEEKS.start, end=WEEKS.end, tool=key.tool)
    for answer in figures.tool_answers:
        again = ask_released(synth_con, answer.question, tool, limit=100)
        assert answer.rows == again.rows and answer.rows
        assert {getattr(r, "tool", row.tool) for r in answer.rows} == {row.tool}


# -- over HTTP ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dashboard(collector_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=collector_url, trust_env=False, timeout=HANG_S) as client:
        client.cookies.set(COOKIE_NAME, make_session(TEAM_TOKEN), path="/dashboard")
        yield client


def _first_friction(client: httpx.Client, **params: str) -> dict[str, Any]:
    doc = client.get("/v1/triage/top", params=params, headers=AUTH).json()
    first: dict[str, Any] = doc["rows"][0]
    return first


def _path(row: dict[str, Any]) -> str:
    return f"/dashboard/friction/{row['tool']}/{row['error_class']}/{row['friction_type']}"


def test_the_top_table_and_tile_link_each_friction_to_its_page(dashboard: httpx.Client) -> None:
    overview = dashboard.get("/dashboard", params={"start": "2026-06-15"})
    assert overview.status_code == 200
    links = re.findall(r'<a class="friction"[^>]* href="([^"]+)"', overview.text)
    first = _first_friction(dashboard, start="2026-06-15")
    expected = html.escape(f"{_path(first)}?start=2026-06-15")
    assert links and links[0] == expected
    tile = re.search(r'id="kpi-top"><span><a href="([^"]+)"', overview.text)
    assert tile is not None and tile.group(1) == expected
    tool_page = dashboard.get(f"/dashboard/tool/{first['tool']}")
    assert html.escape(_path(first)) in tool_page.text, "the tool's error classes link too"


def test_the_page_shows_its_released_figures_and_links_the_periods(
    dashboard: httpx.Client, synth_path: Any
) -> None:
    first = _first_friction(dashboard, start="2026-06-22")
    page = dashboard.get(_path(first), params={"start": "2026-06-22"})
    assert page.status_code == 200
    text = page.text
    assert "<script" not in text and "default-src 'none'" in page.headers["content-security-policy"]
    key = FrictionKey.parse(first["tool"], first["error_class"], first["friction_type"])
    assert key is not None
    with duckdb.connect(str(synth_path), read_only=True) as con:
        stored = _released_weeks(con, key, LATE)
    for day, n, moe in stored:
        assert f"<td>{day.isoformat()}</td>" in text and f"{max(0, n):,} \u00b1 {moe:,}" in text
    assert f"{first['n']:,} \u00b1 {first['moe']:,}" in text, "the top row's count, its page's"
    assert f"{first['prev_n']:,} \u00b1 {first['prev_moe']:,}" in text, "and the week before"
    assert "Compared with 2026-06-15 to 2026-06-21, the 7 days before." in text
    previous = html.escape(f"{_path(first)}?start=2026-06-15&end=2026-06-21")
    assert f'id="previous" href="{previous}"' in text
    assert 'id="next"' not in text, "the period ends at the newest release"
    for section in ("trend", "versions", "platforms", "apps", "shapes"):
        assert f'id="q-{section}"' in text, section
    earlier = dashboard.get(_path(first), params={"start": "2026-06-15", "end": "2026-06-21"})
    assert earlier.status_code == 200
    nxt = html.escape(f"{_path(first)}?start=2026-06-22&end=2026-06-28")
    assert f'id="next" href="{nxt}"' in earlier.text
    assert 'id="previous"' not in earlier.text, "no release before the first week"
    assert "not all released" in earlier.text and "No comparison" in earlier.text
    # Days no release covers: said, with what the releases do cover and a way to them.
    never = dashboard.get(_path(first), params={"start": "2026-06-01", "end": "2026-06-14"})
    assert never.status_code == 200 and 'id="not-covered"' in never.text
    assert "releases cover 2026-06-15 to 2026-06-28" in never.text and 'id="latest"' in never.text
    gone = dashboard.get(f"{_path(first)}/export/trend.csv", params={"end": "2026-06-14"})
    assert gone.status_code == 404 and gone.json()["code"] == "not_covered"


@pytest.mark.parametrize("fmt", ["csv", "json"])
@pytest.mark.parametrize("panel", ["trend", "versions"])
def test_its_panels_download_exactly_the_figures_shown(
    dashboard: httpx.Client, synth_con: duckdb.DuckDBPyConnection, panel: str, fmt: str
) -> None:
    first = _first_friction(dashboard)
    key = FrictionKey.parse(first["tool"], first["error_class"], first["friction_type"])
    assert key is not None
    page = dashboard.get(_path(first))
    href = html.escape(f"{_path(first)}/export/{panel}.{fmt}?start=2026-06-15&end=2026-06-28")
    assert href in page.text, "the page links its download"
    got = dashboard.get(html.unescape(href))
    assert got.status_code == 200
    assert got.headers["content-disposition"] == (
        f'attachment; filename="lmcp-friction-{"-".join(key.cell)}-{panel}-2026-06-15-'
        f'2026-06-28.{fmt}"'
    )
    assert got.headers["cache-control"] == "no-store"
    figures = friction_figures(ReleasedSource(synth_con), key, _covering(synth_con, WEEKS))
    rows: tuple[WeekRow | FrictionVersionRow, ...] = figures.panel(panel)
    assert rows
    if fmt == "json":
        doc = got.json()
        assert doc["friction"] == dict(
            zip(("tool", "error_class", "friction_type"), key.cell, strict=True)
        )
        assert doc["source"] == "released" and doc["period"] == {
            "start": "2026-06-15", "end": "2026-06-28"
        }  # fmt: skip
        assert doc["previous_period"] is None and doc["previous"] is None, "none released"
        assert doc["total"] == {"n": first["n"], "moe": first["moe"]}
        assert len(doc["rows"]) == len(rows)
        assert all(
            r["n"] == x.n and r["moe"] == x.moe for r, x in zip(doc["rows"], rows, strict=True)
        )
    else:
        table = list(csv.reader(io.StringIO(got.text, newline="")))
        assert table[0][table[0].index("n") + 1] == "moe", "each count, then its margin"
        assert [int(r[table[0].index("n")]) for r in table[1:]] == [x.n for x in rows]
        assert got.text.endswith("\r\n")


def test_unknown_frictions_and_filters_are_refused(dashboard: httpx.Client) -> None:
    base = "/dashboard/friction"
    for path in (f"{base}/secret-value-123/timeout/cannot_complete",
                 f"{base}/read_note/secret-value-123/cannot_complete",
                 f"{base}/read_note/timeout/secret-value-123",
                 f"{base}/read_note/timeout/cannot_complete/export/top.csv",
                 f"{base}/read_note/timeout/cannot_complete/export/trend.xml"):  # fmt: skip
        refused = dashboard.get(path)
        assert refused.status_code == 404, path
        assert "secret-value-123" not in refused.text
    page = "/dashboard/friction/read_note/not_found/cannot_complete"
    # The friction cube has no platform: said on the page, above the form that keeps it.
    bad = dashboard.get(page, params={"platform": "linux"})
    assert bad.status_code == 422
    assert html.escape("'Platform' is not a filter.") in bad.text
    inverted = dashboard.get(page, params={"start": "2026-06-20", "end": "2026-06-10"})
    assert inverted.status_code == 422 and 'id="page-error"' in inverted.text
    download = dashboard.get(f"{page}/export/trend.json", params={"version": "1.4"})
    assert download.status_code == 422
    assert download.headers["content-type"].startswith("application/problem+json")
    assert json.loads(download.text)["code"] == "invalid_filter"


def _date_field(page: str, name: str) -> str:
    found = re.search(rf'name="{name}" id="f-{name}" value="([^"]*)"', page)
    assert found is not None, f"the form's {name} field"
    return html.unescape(found.group(1))


@pytest.mark.parametrize(
    "path", ["/dashboard/friction/read_note/not_found/cannot_complete", "/dashboard/tool/read_note"]
)
def test_the_form_keeps_a_day_as_typed_and_never_shows_back_free_text(
    dashboard: httpx.Client, path: str
) -> None:
    """A friction's page and a tool's page share the date form and its rule."""
    # An inverted range: two days, kept as typed so the person can correct them.
    inverted = dashboard.get(path, params={"start": "2026-06-20", "end": "2026-06-10"})
    assert inverted.status_code == 422
    assert _date_field(inverted.text, "start") == "2026-06-20"
    assert _date_field(inverted.text, "end") == "2026-06-10"
    # No day at all: refused above the form, which shows the default period instead.
    default = dashboard.get(path)
    for key in ("start", "end"):
        sent = f"free text {key} 91b7"
        refused = dashboard.get(path, params={key: sent})
        assert refused.status_code == 422 and 'id="page-error"' in refused.text
        assert "91b7" not in refused.text
        assert _date_field(refused.text, key) == _date_field(default.text, key)


def test_a_signed_out_friction_page_asks_to_sign_in_and_comes_back(collector_url: str) -> None:
    page = "/dashboard/friction/read_note/not_found/cannot_complete?start=2026-06-15"
    with httpx.Client(base_url=collector_url, trust_env=False, timeout=HANG_S) as client:
        first = client.get(page, follow_redirects=False)
        assert first.status_code == 303
        form = client.get(first.headers["location"])
        field = re.search(r'name="next" value="([^"]+)"', form.text)
        assert field is not None and html.unescape(field.group(1)) == page
        csrf = re.search(r'name="csrf" value="([^"]+)"', form.text)
        assert csrf is not None
        signed = client.post(
            "/dashboard/login",
            data={"token": TEAM_TOKEN, "csrf": csrf.group(1), "next": page},
            headers={"Origin": collector_url},
            follow_redirects=False,
        )
        assert signed.status_code == 303 and signed.headers["location"] == page
        assert client.get(page).status_code == 200
