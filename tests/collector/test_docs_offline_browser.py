"""``/docs`` works with no network and ``/`` is a page for people.

Chromium with every non-loopback request blocked (and counted): Swagger UI must render the
collector's API from assets the collector serves itself, with no third-party request and no
console error (its CSP allows only its own script). ``/`` links the dashboard and the docs.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from tests._browser import CHROMIUM, CHROMIUM_ARGS
from tests._servers import HANG_S

pytestmark = [pytest.mark.browser, pytest.mark.slow]

if not CHROMIUM.exists():
    pytest.skip("Chromium is not installed at /usr/bin/chromium", allow_module_level=True)

from playwright.sync_api import Page, Route, sync_playwright  # noqa: E402


@pytest.fixture
def offline_page() -> Iterator[tuple[Page, list[str], list[str], list[str]]]:
    """A page whose non-loopback requests are refused; yields (page, blocked, seen, errors)."""
    blocked: list[str] = []
    seen: list[str] = []
    errors: list[str] = []

    def gate(route: Route) -> None:
        url = route.request.url
        seen.append(url)
        host = urlsplit(url).hostname
        if url.startswith("data:") or host in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            blocked.append(url)
            route.abort()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        context.route("**/*", gate)
        page = context.new_page()
        page.set_default_timeout(HANG_S * 1000)  # only a hang: a busy machine renders slowly
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        yield page, blocked, seen, errors
        context.close()
        browser.close()


def test_docs_render_offline_from_the_collectors_own_assets(
    offline_page: tuple[Page, list[str], list[str], list[str]], collector_url: str
) -> None:
    page, blocked, seen, errors = offline_page
    page.goto(f"{collector_url}/docs")
    title = page.locator(".swagger-ui .information-container .title")
    title.wait_for()
    assert "LMCP collector" in title.inner_text()
    assert page.locator(".opblock-summary-path", has_text="/v1/signals").first.is_visible()
    page.wait_for_load_state("networkidle")
    assert blocked == [], "no third-party request"
    assert all(u.startswith((collector_url, "data:")) for u in seen)
    assert errors == [], "no console error (and no CSP violation)"
    # The favicon is the collector's own.
    icon = page.locator("link[rel~=icon]").get_attribute("href")
    assert icon is not None and icon.startswith("/")
    answer = httpx.get(collector_url + icon, trust_env=False, timeout=HANG_S)
    assert answer.status_code == 200 and answer.headers["content-type"] == "image/png"


def test_docs_csp_allows_script_on_docs_only(collector_url: str) -> None:
    with httpx.Client(base_url=collector_url, trust_env=False, timeout=HANG_S) as http:
        docs = http.get("/docs").headers["content-security-policy"]
        script_src = next(d for d in docs.split(";") if d.strip().startswith("script-src"))
        assert "'sha256-" in script_src and "unsafe" not in script_src
        assert "connect-src 'self'" in docs
        for path in ("/", "/dashboard/login"):
            csp = http.get(path).headers["content-security-policy"]
            assert "script-src" not in csp and csp.startswith("default-src 'none'"), path


def test_root_is_a_page_linking_the_dashboard_and_the_docs(
    offline_page: tuple[Page, list[str], list[str], list[str]], collector_url: str
) -> None:
    page, blocked, _, errors = offline_page
    response = page.goto(f"{collector_url}/")
    assert response is not None and response.status == 200
    assert response.headers["content-type"].startswith("text/html")
    assert page.locator("a#api-docs").get_attribute("href") == "/docs"
    page.click("a#dashboard")
    page.wait_for_url(f"{collector_url}/dashboard/login")
    assert blocked == [] and errors == []
