"""A first view that has to wait shows that it is loading (issue 18, finding 6).

A collector started over a file whose 90 closed days are not released yet: the first page must
release them before it has figures. Chromium shows the page's loading notice at once, then the
figures replace it.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._servers import HANG_S
from tests.ux_dashboard.conftest import CHROMIUM, CHROMIUM_ARGS, TEAM_TOKEN

pytestmark = [pytest.mark.browser, pytest.mark.slow]

if not CHROMIUM.exists():
    pytest.skip("Chromium is not installed at /usr/bin/chromium", allow_module_level=True)

from playwright.sync_api import sync_playwright  # noqa: E402


@pytest.fixture
def unreleased_url(tmp_path: Path) -> Iterator[str]:
    from pydantic import SecretStr

    from analysis import synthesize
    from collector.settings import CollectorSettings
    from tests._servers import running_collector

    db_path = tmp_path / "signals.duckdb"
    synthesize(db_path, 100_000, end_day=dt.date(2026, 6, 30))
    settings = CollectorSettings(
        db_path=db_path,
        read_tokens=[SecretStr(TEAM_TOKEN)],
        retention_days=36500,
        rate_limit_enabled=False,
    )
    with running_collector(settings) as url:
        yield url


def test_the_first_view_shows_a_loading_state(unreleased_url: str) -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.set_default_timeout(HANG_S * 1000)  # only a hang: a busy machine renders slowly
        page.goto(f"{unreleased_url}/dashboard/login")
        page.fill("#token", TEAM_TOKEN)
        started = time.monotonic()
        page.click("button[type=submit]", no_wait_after=True)
        loading = page.locator("#loading")
        loading.wait_for(state="visible")
        shown_after = time.monotonic() - started
        assert page.locator("main").count() == 0, "the notice comes before the figures"
        page.locator("main.grid").wait_for()
        done_after = time.monotonic() - started
        assert not loading.is_visible(), "the figures replace the notice"
        assert page.locator("h1").inner_text() == "LMCP friction triage"
        assert shown_after < done_after
        browser.close()
