"""The HTML report on a 390 px phone, in a real Chromium: nothing is wider than the screen, and
the top chart's axis labels stay legible and apart (opened from the file, no server)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from analysis._filters import Filters, Period
from analysis._questions import Answer, Question
from analysis._rows import Row, TopRow
from analysis.report import answer_all, build_report
from tests._browser import CHROMIUM, CHROMIUM_ARGS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

if not CHROMIUM.exists():
    pytest.skip("Chromium is not installed at /usr/bin/chromium", allow_module_level=True)

from playwright.sync_api import Browser, sync_playwright  # noqa: E402

#: Every visible tick label of a chart's axes: its box on the screen (hidden labels, which
#: the chart drops to avoid overlap, have opacity 0).
_LABELS_JS = """
(selector) => [...document.querySelectorAll(selector + ' g.role-axis')].map(axis =>
  [...axis.querySelectorAll('g.role-axis-label text')]
    .filter(t => t.getAttribute('opacity') !== '0' && getComputedStyle(t).opacity !== '0')
    .map(t => { const r = t.getBoundingClientRect();
                return {text: t.textContent, left: r.left, right: r.right,
                        top: r.top, bottom: r.bottom}; }))
"""
PHONE = 390
#: Rendered label height at least this (11 px text; a chart squeezed into a phone's width is
#: a few pixels high and unreadable).
LEGIBLE_PX = 9
#: Neighbouring labels of one axis keep this far apart: a browser font a quarter wider than
#: the one the chart was laid out with (vl-convert's) still leaves them apart.
APART_PX = 10


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def _top(largest: int) -> Answer[Row]:
    """A top-friction answer whose biggest bar is ``largest`` signals (wide tick labels)."""
    tools = ["search_files", "read_note", "send_email", "recipe_run", "get_datetime"]
    kinds = ["repeated_failure", "task_abandoned", "workaround_needed", "cannot_complete"]
    rows: list[Row] = [
        TopRow(tool, "timeout", kind, largest // (4 * (rank + 1)), 93, *(None,) * 6)
        for rank, tool in enumerate(tools)
        for kind in kinds
    ]
    period = Period(dt.date(2026, 1, 1), dt.date(2026, 1, 28))
    return Answer(Question.top, period, None, Filters(), tuple(rows), "released")


def _open(browser: Browser, html: str, tmp_path: Path, width: int) -> tuple[int, int, object]:
    page_file = tmp_path / f"report-{width}.html"
    page_file.write_text(html, encoding="utf-8")
    context = browser.new_context(viewport={"width": width, "height": 844})
    page = context.new_page()
    page.goto(page_file.as_uri())
    sizes = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    axes = [labels for labels in page.evaluate(_LABELS_JS, "#q-top .chart") if labels]
    context.close()
    return int(sizes[0]), int(sizes[1]), axes  # the axes that carry labels (a grid has none)


def _overlaps(axes: object) -> list[tuple[str, str]]:
    assert isinstance(axes, list)
    found = []
    for labels in axes:
        for i, a in enumerate(labels):
            for b in labels[i + 1 :]:
                if (
                    a["left"] < b["right"]
                    and b["left"] < a["right"]
                    and a["top"] < b["bottom"]
                    and b["top"] < a["bottom"]
                ):
                    found.append((a["text"], b["text"]))
    return found


@pytest.mark.parametrize("largest", [1_040, 6_380, 10_400, 64_100, 1_100_000])
@pytest.mark.parametrize("width", [PHONE, 1280])
def test_the_top_chart_labels_are_legible_and_apart(
    browser: Browser, tmp_path: Path, largest: int, width: int
) -> None:
    scroll, client, axes = _open(browser, build_report([_top(largest)]).html, tmp_path, width)
    assert scroll <= client, f"the page is {scroll} px wide on a {client} px screen"
    assert isinstance(axes, list) and len(axes) == 2  # x and y, both labelled
    assert _overlaps(axes) == []
    for labels in axes:
        for label in labels:
            assert label["bottom"] - label["top"] >= LEGIBLE_PX, label
    row = sorted((lab for lab in axes[0] + axes[1] if lab["text"][0].isdigit()),
                 key=lambda lab: lab["left"])  # fmt: skip
    gaps = [b["left"] - a["right"] for a, b in zip(row, row[1:], strict=False)]
    assert gaps and min(gaps) >= APART_PX, list(
        zip((lab["text"] for lab in row), gaps, strict=False)
    )


def test_a_whole_report_fits_a_phone(browser: Browser, tmp_path: Path) -> None:
    import duckdb

    from analysis import synthesize

    path = tmp_path / "report.duckdb"
    synthesize(path, 20_000, end_day=dt.date(2026, 3, 31))
    with duckdb.connect(str(path), read_only=True) as con:
        html = build_report(answer_all(con, exact=True)).html
    assert html.count('<div class="chart">') >= 5 and html.count("<table") >= 5
    scroll, client, axes = _open(browser, html, tmp_path, PHONE)
    assert scroll <= client, f"the page is {scroll} px wide on a {client} px screen"
    assert _overlaps(axes) == []
