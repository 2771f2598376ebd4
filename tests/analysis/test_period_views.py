"""What a person is shown about the days of an answer, through the real surfaces: the ``lmcp``
command (a child process, as a shell runs it) and a real collector's API and dashboard, over the
synthetic file (weeks 2026-06-15 and 2026-06-22 released; the open week after them is not).

- a range reaching into unreleased days is cut at the newest release, compared like for like,
  and says so in every view (the walkthrough's false drop);
- days no release covers say which days the releases do cover (exit 1, a 404 problem, a page);
- every figure comes with its noise, and every breakdown adds up;
- names: the ``--end`` default as it is, the spike column, the cards' own titles, HTML pages
  for mistyped dashboard links."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from analysis._rows import MARGINS
from analysis._session import COOKIE_NAME, make_session
from tests._processes import run_child
from tests._servers import HANG_S
from tests.analysis.conftest import TEAM_TOKEN

pytestmark = pytest.mark.slow  # child processes and a collector

AUTH = {"Authorization": f"Bearer {TEAM_TOKEN}"}
#: Reaches 5 days past the newest released week (it ends 2026-06-28).
INTO_OPEN = {"start": "2026-06-24", "end": "2026-07-03"}
NEVER = {"start": "2020-01-01", "end": "2020-02-01"}
RELEASED = "releases cover 2026-06-15 to 2026-06-28"


def lmcp(*args: str) -> tuple[int, str, str]:
    """``lmcp ARGS`` as a shell runs it (``python -m lmcp``: the installed entry point's
    ``main``), with its exit code, stdout and stderr."""
    done = run_child([sys.executable, "-m", "lmcp", *args])
    return done.returncode, done.stdout, done.stderr


def _top(synth: Path, *extra: str) -> tuple[int, str, str]:
    return lmcp("analysis", "top", "--db", str(synth), *extra)


def test_a_range_into_the_open_week_is_cut_and_compared_like_for_like(synth_path: Path) -> None:
    code, out, err = _top(synth_path, "--start", "2026-06-24", "--end", "2026-07-03",
                          "--format", "table")  # fmt: skip
    assert code == 0, err
    assert "Top friction  2026-06-22 to 2026-06-28 (7 days)" in out
    flat = " ".join(out.split())  # the title and caption wrap at the table's width
    assert (
        "Asked 2026-06-24 to 2026-07-03, covers 2026-06-22 to 2026-06-28 (7 days): answers are "
        "whole weeks, Monday to Sunday; the newest released week ends 2026-06-28"
    ) in flat
    assert "Compared with 2026-06-15 to 2026-06-21, the 7 days before." in flat
    code, out, err = _top(synth_path, *_args(INTO_OPEN), "--format", "json", "--limit", "1000")
    doc = json.loads(out)
    assert doc["period"] == {"start": "2026-06-22", "end": "2026-06-28"}
    assert doc["asked"] == {**INTO_OPEN, "default": False}
    assert doc["previous_period"] == {"start": "2026-06-15", "end": "2026-06-21"}
    assert (doc["released_from"], doc["released_through"]) == ("2026-06-15", "2026-06-28")
    assert "2026-06-22 to 2026-06-28" in doc["note"]
    # Like for like: each previous count is the week before's alone, as asking for it gives.
    _, before, _ = _top(synth_path, "--start", "2026-06-15", "--end", "2026-06-21", "--format",
                        "json", "--limit", "1000")  # fmt: skip
    week_before = {_key(r): (r["n"], r["moe"]) for r in json.loads(before)["rows"]}
    for row in doc["rows"]:
        if _key(row) in week_before:
            assert (row["prev_n"], row["prev_moe"]) == week_before[_key(row)], row
        assert row["change"] == row["n"] - row["prev_n"] and row["change_moe"] >= row["moe"]


def _args(params: dict[str, str]) -> list[str]:
    return [a for k, v in params.items() for a in (f"--{k}", v)]


def _key(row: dict[str, Any]) -> tuple[str, str, str]:
    return row["tool"], row["error_class"], row["friction_type"]


def test_days_no_release_covers_say_what_is_released(synth_path: Path) -> None:
    code, out, err = _top(synth_path, *_args(NEVER))
    assert code == 1 and out == ""
    assert err.strip() == f"error: no release covers 2020-01-01 to 2020-02-01; {RELEASED}"
    # A start after the last release, with no end: the same answer, not an inverted range.
    code, out, err = _top(synth_path, "--start", "2026-07-01")
    assert code == 1 and "must not be after" not in err
    assert f"no release covers the days from 2026-07-01; {RELEASED}" in err
    assert "the week 2026-06-29 to 2026-07-05 is released from 2026-07-08" in err
    # --end's help says what its default is.
    code, out, _ = lmcp("analysis", "top", "--help")
    assert code == 0 and "default: the last released day" in " ".join(out.split())


def test_every_figure_has_its_margin_and_the_spike_reads_spike(synth_path: Path) -> None:
    for question in ("top", "regressions", "apps", "platforms", "trends"):
        code, out, err = lmcp("analysis", question, "--db", str(synth_path), "--format", "csv")
        assert code == 0, err
        header = next(csv.reader(io.StringIO(out)))
        for figure, margin in MARGINS.items():
            if figure in header:
                assert header[header.index(figure) + 1] == margin, (question, header)
    assert {"share_moe", "base_moe", "base_share_moe"} <= set(
        next(
            csv.reader(
                io.StringIO(
                    lmcp("analysis", "regressions", "--db", str(synth_path), "--format", "csv")[1]
                )
            )
        )  # fmt: skip
    )
    code, out, _ = lmcp("analysis", "trends", "--db", str(synth_path), "--format", "json",
                        "--limit", "1000")  # fmt: skip
    rows = json.loads(out)["rows"]
    spiked = [r for r in rows if r["spike"]]
    code, table, _ = lmcp("analysis", "trends", "--db", str(synth_path), "--format", "table",
                          "--limit", "1000")  # fmt: skip
    assert table.count(" spike ") >= len(spiked), "the same word as the report's"
    assert "yes" not in table


def test_the_apps_of_a_tool_add_up_to_its_total(synth_path: Path) -> None:
    code, out, _ = lmcp("analysis", "apps", "--db", str(synth_path), "--tool", "search_files",
                        "--format", "json")  # fmt: skip
    rows = json.loads(out)["rows"]
    assert rows and {r["tool_n"] for r in rows} == {sum(r["n"] for r in rows)}
    assert abs(sum(r["share_pct"] for r in rows) - 100.0) <= 0.05 * len(rows)


# -- a real collector ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dashboard(collector_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=collector_url, trust_env=False, timeout=HANG_S) as client:
        client.cookies.set(COOKIE_NAME, make_session(TEAM_TOKEN), path="/dashboard")
        yield client


def _text(page: str) -> str:
    """The page's text, tags out, entities decoded, spaces collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def test_the_dashboard_says_which_days_it_covers(dashboard: httpx.Client) -> None:
    page = dashboard.get("/dashboard", params=INTO_OPEN)
    assert page.status_code == 200
    text = _text(page.text)
    assert "2026-06-22 to 2026-06-28 (7 days)" in text and RELEASED in text
    assert "Asked 2026-06-24 to 2026-07-03, covers 2026-06-22 to 2026-06-28" in text
    assert "Compared with 2026-06-15 to 2026-06-21, the 7 days before." in text
    # No day after the newest release in the trend; the tile covers the table's days.
    days = set(re.findall(r"<td>(2026-0[67]-\d\d)</td>", page.text))
    assert days and max(days) <= "2026-06-28" and min(days) >= "2026-06-22"
    trends = dashboard.get("/v1/triage/trends", params=INTO_OPEN, headers=AUTH).json()
    total = sum(r["n"] for r in trends["rows"] if r["series"] == "all")
    assert f"{total:,} signals released (7 days)" in text
    # The form keeps the asked days: the header and the note say what they cover.
    assert 'value="2026-06-24"' in page.text and 'value="2026-07-03"' in page.text


def test_days_no_release_covers_are_said_on_the_page_and_by_the_api(
    dashboard: httpx.Client,
) -> None:
    for params, asked in ((NEVER, "2020-01-01 to 2020-02-01"),
                          ({"start": "2026-07-01"}, "the days from 2026-07-01")):  # fmt: skip
        page = dashboard.get("/dashboard", params=params)
        assert page.status_code == 200
        text = _text(page.text)
        assert f"No release covers {asked}; {RELEASED}" in text
        assert "must not be after" not in text and 'class="kpis"' not in page.text
        assert 'id="latest" href="/dashboard"' in page.text
        api = dashboard.get("/v1/triage/top", params=params, headers=AUTH)
        assert api.status_code == 404 and api.json()["code"] == "not_covered"
        assert RELEASED in api.json()["detail"]
        export = dashboard.get("/dashboard/export/top.csv", params=params)
        assert export.status_code == 404 and RELEASED in export.json()["detail"]


def test_the_regressions_export_has_every_margin(dashboard: httpx.Client) -> None:
    got = dashboard.get("/dashboard/export/regressions.csv")
    assert got.status_code == 200
    header = next(csv.reader(io.StringIO(got.text)))
    for figure in ("n", "share_pct", "base_n", "base_share_pct"):
        assert header[header.index(figure) + 1] == MARGINS[figure], header


def test_a_card_names_an_unavailable_filter_by_its_own_title(dashboard: httpx.Client) -> None:
    page = dashboard.get("/dashboard/tool/read_note", params={"platform": "linux"})
    text = _text(page.text)
    assert "“Error classes” is released without a platform" in text
    assert "not available for top" not in text and "not available for shapes" not in text
    overview = _text(dashboard.get("/dashboard", params={"version": "1.4"}).text)
    assert "“Top friction” is released without a version" in overview


@pytest.mark.parametrize(
    ("path", "back"),
    [
        ("/dashboard/tool/nope", ["/dashboard"]),
        ("/dashboard/friction/read_note/nope/other", ["/dashboard", "/dashboard/tool/read_note"]),
        ("/dashboard/friction/nope/timeout/other", ["/dashboard"]),
        ("/dashboard/nope", ["/dashboard"]),
    ],
)
def test_a_mistyped_link_is_a_page_with_a_way_back(
    dashboard: httpx.Client, path: str, back: list[str]
) -> None:
    page = dashboard.get(path)
    assert page.status_code == 404
    assert page.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert 'id="not-found"' in page.text and "nope" not in page.text
    links = re.findall(r'<a href="([^"]+)"', page.text)
    assert all(href in links for href in back), links
    assert 'action="/dashboard/logout"' in page.text, "the dashboard's frame"
    api = dashboard.get("/v1/triage/nope", headers=AUTH)
    assert api.headers["content-type"].startswith("application/problem+json")
