"""The dashboard in a real Chromium (Debian's /usr/bin/chromium, driven by Playwright).

Log in, see the charts, apply a filter, drill down to a tool, and sign out, with no console
error and no request leaving the collector's origin. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._browser import CHROMIUM, CHROMIUM_ARGS
from tests._servers import HANG_S
from tests.analysis.conftest import TEAM_TOKEN

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

pytestmark = [pytest.mark.browser, pytest.mark.slow]

if not CHROMIUM.exists():
    pytest.skip(
        "Chromium is not installed at /usr/bin/chromium (make test installs it)",
        allow_module_level=True,
    )

from playwright.sync_api import Page, sync_playwright  # noqa: E402


@pytest.fixture(scope="module")
def browser_page() -> Iterator[Page]:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(HANG_S * 1000)  # only a hang: a busy machine renders slowly
        yield page
        context.close()
        browser.close()


def test_log_in_filter_drill_down(browser_page: Page, collector_url: str) -> None:
    page = browser_page
    ARTIFACTS.mkdir(exist_ok=True)
    problems: list[str] = []
    foreign: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.on(
        "request",
        lambda r: None if r.url.startswith((collector_url, "data:")) else foreign.append(r.url),
    )

    # Not signed in: the dashboard sends us to the login form.
    page.goto(f"{collector_url}/dashboard")
    assert page.url.endswith("/dashboard/login")
    page.fill("#token", "not-the-token")
    page.click("button[type=submit]")
    assert page.locator(".error").is_visible()
    page.fill("#token", TEAM_TOKEN)
    page.click("button[type=submit]")
    page.wait_for_url(f"{collector_url}/dashboard")

    # The overview: every chart of the first view is drawn.
    for name in ("top", "trends", "platforms", "apps", "intents"):
        assert page.locator(f"#chart-{name} svg").first.is_visible(), name
    assert page.locator(".kpi").count() >= 3
    page.screenshot(path=str(ARTIFACTS / "dashboard-overview.png"), full_page=True)

    # A platform filter keeps only the views whose release has a platform.
    page.select_option("#f-platform", "windows")
    page.click("#apply")
    page.wait_for_url("**/dashboard?**platform=windows**")
    assert page.locator("#f-platform").input_value() == "windows"
    assert page.locator("#chart-platforms svg").is_visible()
    assert page.locator("#chart-apps").count() == 0 and page.locator("#chart-top").count() == 0
    page.screenshot(path=str(ARTIFACTS / "dashboard-platform.png"), full_page=True)
    # A period filter: from May on, every view.
    page.select_option("#f-platform", "")
    page.fill("#f-start", "2026-05-01")
    page.click("#apply")
    page.wait_for_url("**/dashboard?**start=2026-05-01**")
    assert page.locator("#chart-top svg").is_visible()
    page.screenshot(path=str(ARTIFACTS / "dashboard-filtered.png"), full_page=True)

    # Drill down into the top tool: its error classes, shapes and ring patterns.
    link = page.locator("#q-top a.drill").first
    tool = link.inner_text()
    link.click()
    page.wait_for_url(f"**/dashboard/tool/{tool}?**")
    assert "start=2026-05-01" in page.url, "the filters follow the drill-down"
    assert page.locator("h1").inner_text() == f"Tool: {tool}"
    page.wait_for_load_state("load")  # the page streams: its cards arrive after its head
    assert page.locator("#chart-top svg").is_visible()
    for name in ("shapes", "ring"):
        # A drill-down view shows its chart, or says nothing was released for it: the noise
        # of a release may drop a rare group of one tool (docs/privacy.md).
        card = page.locator(f"#q-{name}")
        assert card.is_visible(), name
        shown = card.locator("svg").count() + card.locator("p.empty").count()
        assert shown >= 1, name
    page.screenshot(path=str(ARTIFACTS / "dashboard-drilldown.png"), full_page=True)

    # Back to the overview, then sign out: the dashboard is closed again.
    page.click("#back")
    page.wait_for_url("**/dashboard?**")
    page.click("text=Sign out")
    page.wait_for_url(f"{collector_url}/dashboard/login")
    page.goto(f"{collector_url}/dashboard")
    assert page.url.endswith("/dashboard/login")

    assert problems == []
    assert foreign == []


def test_the_report_renders_offline(browser_page: Page, synth_path: Path) -> None:
    import duckdb

    from analysis._released import RELEASED_QUESTIONS
    from analysis.report import answer_all, build_report, write_report

    with duckdb.connect(str(synth_path), read_only=True) as con:
        report = build_report(answer_all(con))
    out = ARTIFACTS / "report" / "triage-report.html"
    write_report(report, out)
    page = browser_page
    problems: list[str] = []
    foreign: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("request", lambda r: None if r.url.startswith("file:") else foreign.append(r.url))
    page.goto(out.resolve().as_uri())
    for question in RELEASED_QUESTIONS:
        assert page.locator(f"#q-{question.value} svg").is_visible(), question
    page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
    assert problems == []
    assert foreign == []
