"""The dashboard as a person meets it, in a real Chromium.

Headline tiles equal a direct computation over the same released cells; an inverted date
range is an error inside the page; every category keeps one colour in every view and in the
report, spike markers have their own colour and legend entry; tables open beyond ten rows; the
drill-down has a tool picker; nothing is wider than a 390 px phone.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from analysis._filters import Filters
from analysis._palette import PALETTE, SPIKE
from analysis._questions import MIN_Z, SPIKE_RATIO, Question
from analysis._released import ask_released, last_released_day
from analysis._rows import TopRow
from collector.releases.store import read_cells, released_scales
from tests._browser import CHROMIUM, CHROMIUM_ARGS
from tests._servers import HANG_S
from tests.analysis.conftest import TEAM_TOKEN

pytestmark = [pytest.mark.browser, pytest.mark.slow]

if not CHROMIUM.exists():
    pytest.skip("Chromium is not installed at /usr/bin/chromium", allow_module_level=True)

from playwright.sync_api import Browser, Page, sync_playwright  # noqa: E402

#: label -> fill colour of every legend entry of the page's charts (symbol and label paired).
_LEGENDS_JS = """
() => [...document.querySelectorAll('g.role-legend')].map(legend =>
  [...legend.querySelectorAll('g.role-scope')].map(entry => {
    const symbol = entry.querySelector('g.role-legend-symbol path');
    const label = entry.querySelector('g.role-legend-label text');
    return symbol && label ? [label.textContent, symbol.getAttribute('fill')] : null;
  }).filter(Boolean))
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def _signed_in(browser: Browser, url: str, width: int = 1400) -> Page:
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(HANG_S * 1000)  # only a hang: a busy machine renders slowly
    page.goto(f"{url}/dashboard/login")
    page.fill("#token", TEAM_TOKEN)
    page.click("button[type=submit]")
    page.wait_for_url(f"{url}/dashboard")
    return page


def _tiles(page: Page) -> dict[str, str]:
    out = {}
    for tile in page.locator(".kpi").all():
        out[tile.locator("small").inner_text()] = tile.locator("span").inner_text()
    return out


def _expected_tiles(path: Path) -> dict[str, str]:
    """The tiles computed straight from the stored released cells (no dashboard code)."""
    with duckdb.connect(str(path), read_only=True) as con:
        end = last_released_day(con)
        assert end is not None
        start = end - dt.timedelta(days=27)
        first = start - dt.timedelta(days=7)
        sigma = released_scales(con, "daily", first, end)
        # (count, noise variance) per series and day: each cell adds its period's sigma^2.
        series: dict[str, dict[dt.date, list[float]]] = defaultdict(
            lambda: defaultdict(lambda: [0.0, 0.0])
        )
        for cell in read_cells(con, "daily", first, end):
            for name in (cell.key[0], "all"):
                series[name][cell.day][0] += cell.n
                series[name][cell.day][1] += sigma[cell.day] ** 2
        total = sum(int(nv[0]) for d, nv in series["all"].items() if d >= start)
        spike_days = set()
        for days in series.values():
            for day, (n, var) in days.items():
                before = [nv for d, nv in days.items() if day - dt.timedelta(days=7) <= d < day]
                if day < start or len(before) < 3:
                    continue
                mean = sum(b[0] for b in before) / len(before)
                var_mean = sum(b[1] for b in before) / len(before) ** 2
                # At SPIKE_RATIO x the mean, and clear of the noise of both (the docs' rule).
                if (n >= SPIKE_RATIO * max(mean, 0.0) and n >= MIN_Z * math.sqrt(var)
                        and n - mean >= MIN_Z * math.sqrt(var + var_mean)):  # fmt: skip
                    spike_days.add(day)
        regressions = ask_released(con, Question.regressions, Filters(), limit=10**9).rows
        top = ask_released(con, Question.top, Filters(), limit=1).rows[0]
        assert isinstance(top, TopRow)
    return {
        # The tile says how many days it sums: the page's covered days, every card's.
        f"signals released ({(end - start).days + 1} days)": f"{total:,}",
        "spike days": str(len(spike_days)),
        "top friction": f"{top.tool} \u00b7 {top.error_class}",
        "regressions": str(len(regressions)),
    }


def test_headline_tiles_equal_a_direct_computation(
    browser: Browser, headline_url: str, headline_path: Path
) -> None:
    expected = _expected_tiles(headline_path)
    # The dataset is built so a count of (day, series) pairs or a row limit would differ: more
    # regressions than a table shows before "more rows" (their exact number moves with the
    # release's noise: a version counts once it is above its noise in any week).
    assert expected["spike days"] == "2" and int(expected["regressions"]) > 10
    page = _signed_in(browser, headline_url)
    assert _tiles(page) == expected
    page.context.close()


def test_an_inverted_date_range_is_an_error_inside_the_page(
    browser: Browser, headline_url: str
) -> None:
    page = _signed_in(browser, headline_url)
    page.fill("#f-start", "2026-04-10")
    page.fill("#f-end", "2026-04-02")
    with page.expect_response(lambda r: "/dashboard?" in r.url) as answer:
        page.click("#apply")
    response = answer.value
    assert response.headers["content-type"].startswith("text/html")
    # The page streams (its head first): wait for the whole document, not only the response.
    page.wait_for_load_state("load")
    error = page.locator("#page-error")
    error.wait_for(state="visible")
    assert error.is_visible()
    assert "From" in error.inner_text() and "To" in error.inner_text()
    box, form = error.bounding_box(), page.locator("#filters").bounding_box()
    assert box is not None and form is not None and box["y"] < form["y"], "above the form"
    # The form keeps what was picked, so it can be corrected; the charts still show.
    assert page.locator("#f-start").input_value() == "2026-04-10"
    assert page.locator("#chart-trends svg").is_visible()
    # The same in a drill-down.
    page.goto(f"{headline_url}/dashboard/tool/read_note?start=2026-04-10&end=2026-04-02")
    assert page.locator("#page-error").is_visible()
    page.context.close()


def _legend_colours(page: Page) -> dict[str, set[str]]:
    seen: dict[str, set[str]] = defaultdict(set)
    for legend in page.evaluate(_LEGENDS_JS):
        for label, fill in legend:
            seen[label].add(fill.lower())
    return seen


def test_one_palette_in_every_view_and_the_report(
    browser: Browser, headline_url: str, headline_path: Path, tmp_path: Path
) -> None:
    from analysis.report import answer_all, build_report, write_report

    page = _signed_in(browser, headline_url)
    views = {"overview": _legend_colours(page)}
    for tool in ("read_note", "create_note"):
        page.goto(f"{headline_url}/dashboard/tool/{tool}")
        views[tool] = _legend_colours(page)
    page.goto(f"{headline_url}/dashboard?platform=linux")
    views["linux"] = _legend_colours(page)
    with duckdb.connect(str(headline_path), read_only=True) as con:
        out = write_report(build_report(answer_all(con)), tmp_path / "report.html")[0]
    page.goto(out.resolve().as_uri())
    views["report"] = _legend_colours(page)

    fixed = {value: colour for colours in PALETTE.values() for value, colour in colours.items()}
    colour_of: dict[str, str] = {}
    for name, legends in views.items():
        assert legends, f"{name}: the charts have legends"
        for label, fills in legends.items():
            if label == "spike":
                assert fills == {SPIKE}, f"{name}: spike markers have their own colour"
                continue
            assert len(fills) == 1, f"{name}: {label} has one colour"
            (fill,) = fills
            if label in fixed:  # category values are distinct across categories
                assert fill == fixed[label], f"{name}: {label} is not its palette colour"
            assert colour_of.setdefault(label, fill) == fill, f"{label} changes colour in {name}"
    # The spike markers have a legend entry, in a colour no trend series has.
    assert "spike" in views["overview"] and "spike" in views["report"]
    assert SPIKE not in PALETTE["friction_type"].values()
    page.context.close()


def test_tables_open_beyond_ten_rows(
    browser: Browser, headline_url: str, headline_path: Path
) -> None:
    rows = int(_expected_tiles(headline_path)["regressions"])
    assert rows > 10
    page = _signed_in(browser, headline_url)
    card = page.locator("#q-regressions")
    card.locator("summary", has_text="table").click()
    assert card.locator("tbody tr:visible").count() == 10
    more = card.locator("details.more-rows summary")
    assert more.inner_text() == f"Show {rows - 10} more rows"
    more.click()
    assert card.locator("tbody tr:visible").count() == rows
    page.context.close()


def test_the_drill_down_has_a_tool_picker(browser: Browser, headline_url: str) -> None:
    page = _signed_in(browser, headline_url)
    page.goto(f"{headline_url}/dashboard/tool/read_note?start=2026-04-02")
    assert page.locator("#f-tool").input_value() == "read_note"
    page.select_option("#f-tool", "create_note")
    page.click("#apply")
    page.wait_for_url("**/dashboard/tool/create_note?**")
    assert page.locator("h1").inner_text() == "Tool: create_note"
    assert "start=2026-04-02" in page.url, "the other filters follow"
    # "any" goes back to the overview with the same filters.
    page.select_option("#f-tool", "")
    page.click("#apply")
    page.wait_for_url("**/dashboard?start=2026-04-02**")
    assert page.locator("h1").inner_text() == "LMCP friction triage"
    page.context.close()


def test_every_page_fits_a_390_px_phone(browser: Browser, headline_url: str) -> None:
    page = _signed_in(browser, headline_url, width=390)
    inverted = "/dashboard?start=2026-04-09&end=2026-04-01"
    for path in ("/dashboard", "/dashboard/tool/read_note", inverted):
        page.goto(headline_url + path)
        for details in page.locator("details").all():  # open tables count too
            details.evaluate("d => d.open = true")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"{path} is {width} px wide"
    page.goto(f"{headline_url}/")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.context.close()
