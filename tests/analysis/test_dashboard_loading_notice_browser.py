"""A page shows that it is loading until its figures arrive.

The page streams its head and a loading notice first and its figures after them; the
stylesheet hides the notice once the figures are there. No page computes a release (the
release job is their one writer), so the first view is never held up by one: the notice is
checked in the stream's order and in what Chromium shows at the end.
"""

from __future__ import annotations

import pytest

from tests._browser import CHROMIUM, CHROMIUM_ARGS
from tests._servers import HANG_S
from tests.analysis.conftest import TEAM_TOKEN

pytestmark = [pytest.mark.browser, pytest.mark.slow]

if not CHROMIUM.exists():
    pytest.skip("Chromium is not installed at /usr/bin/chromium", allow_module_level=True)

from playwright.sync_api import sync_playwright  # noqa: E402


def test_the_notice_comes_first_and_the_figures_replace_it(collector_url: str) -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.set_default_timeout(HANG_S * 1000)  # only a hang: a busy machine renders slowly
        page.goto(f"{collector_url}/dashboard/login")
        page.fill("#token", TEAM_TOKEN)
        page.click("button[type=submit]")
        page.locator("main.grid").wait_for()
        assert page.locator("#loading").count() == 1
        assert not page.locator("#loading").is_visible(), "the figures replace the notice"
        assert page.locator("h1").inner_text() == "LMCP friction triage"
        # The bytes as sent (the session's cookie): the notice streams before the figures.
        html = page.request.get(f"{collector_url}/dashboard").text()
        assert html.index('id="loading"') < html.index("<main"), "the notice comes first"
        browser.close()
