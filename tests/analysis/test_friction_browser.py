"""A friction's page in a real Chromium (Debian's /usr/bin/chromium, driven by Playwright),
through a real collector: a shared link opened signed out lands there after the sign-in; the
page draws its trend and tables, walks to the previous period and back, downloads its trend
as the released figures, leads to its tool's page and weekly trend, fits a 390 px phone, and
is reached from the overview's top table,
with no console error and no request leaving the collector's origin."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests._browser import CHROMIUM, CHROMIUM_ARGS
from tests._servers import HANG_S
from tests.analysis.conftest import TEAM_TOKEN

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
AUTH = {"Authorization": f"Bearer {TEAM_TOKEN}"}

pytestmark = [pytest.mark.browser, pytest.mark.slow]

if not CHROMIUM.exists():
    pytest.skip(
        "Chromium is not installed at /usr/bin/chromium (make test installs it)",
        allow_module_level=True,
    )

from playwright.sync_api import Browser, Page, sync_playwright  # noqa: E402


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def _watched(page: Page, origin: str) -> tuple[list[str], list[str]]:
    problems: list[str] = []
    foreign: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.on(
        "request", lambda r: None if r.url.startswith((origin, "data:")) else foreign.append(r.url)
    )
    page.set_default_timeout(HANG_S * 1000)  # only a hang: a busy machine renders slowly
    return problems, foreign


def _top(collector_url: str, **params: str) -> dict[str, Any]:
    with httpx.Client(base_url=collector_url, trust_env=False, timeout=HANG_S) as client:
        doc = client.get("/v1/triage/top", params=params, headers=AUTH).json()
    first: dict[str, Any] = doc["rows"][0]
    return first


def _path(row: dict[str, Any]) -> str:
    return f"/dashboard/friction/{row['tool']}/{row['error_class']}/{row['friction_type']}"


def _sign_in(page: Page) -> None:
    page.fill("#token", TEAM_TOKEN)
    page.click("button[type=submit]")


def test_a_shared_friction_link_survives_the_sign_in(browser: Browser, collector_url: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    first = _top(collector_url, start="2026-06-22")
    link = f"{collector_url}{_path(first)}?start=2026-06-22"
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    problems, foreign = _watched(page, collector_url)

    page.goto(link)
    assert "/dashboard/login?next=" in page.url
    _sign_in(page)
    page.wait_for_url(link)
    page.wait_for_load_state("load")  # the page streams: its cards arrive after its head
    assert page.locator("h1").inner_text().startswith(f"Friction: {first['tool']}")
    assert page.locator("#chart-trend svg").is_visible()
    weeks = page.locator("#q-trend tbody tr")
    assert weeks.count() == 1, "the week asked for"
    total = f"{first['n']:,} \u00b1 {first['moe']:,}"
    assert page.locator("#kpi-signals span").inner_text() == total, "the top row's own figure"
    page.screenshot(path=str(ARTIFACTS / "dashboard-friction.png"), full_page=True)

    # The previous period of the same length, and back.
    page.click("#previous")
    page.wait_for_url("**start=2026-06-15&end=2026-06-21")
    page.wait_for_load_state("load")
    assert page.locator("#q-trend tbody tr").count() == 1
    assert page.locator("h1").inner_text().startswith(f"Friction: {first['tool']}")
    # The synthetic file keeps the two newest weeks only: the oldest has no week before it
    # to link, nor to compare with, and says so.
    assert page.locator("#previous").count() == 0
    assert page.locator("#kpi-previous span").inner_text() == "not all released"
    page.click("#next")
    page.wait_for_url("**start=2026-06-22&end=2026-06-28")
    page.wait_for_load_state("load")

    # The trend's CSV: the weeks the table shows, each count with its margin.
    with page.expect_download() as caught:
        page.click('#q-trend a.export[data-format="csv"]')
    download = caught.value
    saved = Path(download.path())
    rows = list(csv.reader(io.StringIO(saved.read_text(encoding="utf-8"), newline="")))
    assert rows[0] == ["week", "week_end", "series", "n", "moe"]
    shown = [r.inner_text().split("\t")[0] for r in weeks.all()]
    assert [r[0] for r in rows[1:]] == shown
    assert sum(int(r[3]) for r in rows[1:]) >= first["n"] - 2, "the weeks make the period"

    # Up to the tool's page: its own trend, per week.
    page.click("#tool")
    page.wait_for_url(f"**/dashboard/tool/{first['tool']}?**")
    page.wait_for_load_state("load")
    assert page.locator("#chart-weekly svg").is_visible()
    assert page.locator("#q-weekly tbody tr").count() >= 2

    assert problems == [] and foreign == []
    context.close()


def test_the_overview_links_each_top_friction_and_the_page_fits_a_phone(
    browser: Browser, collector_url: str
) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    problems, foreign = _watched(page, collector_url)
    page.goto(f"{collector_url}/dashboard")
    _sign_in(page)
    page.wait_for_url(f"{collector_url}/dashboard")
    page.wait_for_load_state("load")
    friction = page.locator("#q-top a.friction").first
    page.locator("#q-top details").first.evaluate("d => d.open = true")
    target = friction.get_attribute("href")
    assert target is not None and target.startswith("/dashboard/friction/")
    friction.click()
    page.wait_for_url(f"{collector_url}{target}")
    page.wait_for_load_state("load")
    assert page.locator("#chart-trend svg").is_visible()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, "nothing wider than the phone's screen"
    page.screenshot(path=str(ARTIFACTS / "dashboard-friction-phone.png"), full_page=True)
    assert problems == [] and foreign == []
    context.close()
