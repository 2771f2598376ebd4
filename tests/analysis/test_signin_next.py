"""Signing in from a shared link lands on that link, and ``next`` is never an open redirect.

``safe_next`` keeps a page of this dashboard only: a fixed list of the known open-redirect and
header-injection spellings, and a property over generated strings (every kept value resolves
to this origin's dashboard from any base). Over HTTP on a real collector: each kind of page
remembers itself through the sign-in, and the form's ``next`` field cannot send a browser
elsewhere or split a header.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from analysis._filters import Filters
from analysis._registry import Question
from analysis._signin import MAX_NEXT, safe_next
from client._tls import tls_context
from contract.schema import ErrorClass, FrictionType, ToolName
from tests._servers import HANG_S
from tests.analysis.conftest import TEAM_TOKEN

ATTACKS = [
    "//evil.example",
    "///evil.example",
    "https://evil.example",
    "http:/evil.example",
    "HTTPS://evil.example/dashboard",
    "javascript:alert(1)",
    "data:text/html,x",
    "/\\evil.example",
    "\\/evil.example",
    "\\\\evil.example",
    "/dashboard\\..\\evil",
    "/dashboard/../../evil",
    "/dashboard/./tool",
    "/dashboard/%2e%2e/%2e%2e/evil",
    "/%2F%2Fevil.example",
    "%2F%2Fevil.example",
    "/dashboard/%2F%2Fevil.example",
    "/dashboard//evil.example",
    "/dashboard@evil.example",
    "/dashboard.evil.example",
    "/dashboard:evil",
    "/dashboardx",
    "/dashboard\r\nSet-Cookie: injected=1",
    "/dashboard\nLocation: https://evil.example",
    "/dashboard%0d%0aSet-Cookie:%20injected=1",
    "/dashboard\t/evil",
    "/dashboard\x00",
    " /dashboard",
    "/dashboard ",
    "/dashboard?next=//evil.example",
    "/dashboard?x=https://evil.example",
    "/dashboard#//evil.example",
    "/dashboard/login",
    "/dashboard/login?next=/dashboard/tool/read_note",
    "/dashboard/logout",
    "/dashboard/static/dashboard.css",
    "/\uff44ashboard",
    "/dashboard/\u2215evil.example",
    "/dashboard/tool/read_note\u3002evil",
    "/DASHBOARD",
    "/docs",
    "/",
    "",
    "/dashboard/" + "a" * MAX_NEXT,
    # Free text of the request is never echoed: only enum names and filter values.
    "/dashboard/tool/canary-jdoe-4471",
    "/dashboard/friction/read_note/canary4471/cannot_complete",
    "/dashboard/export/canary4471.csv",
    "/dashboard/tool/read_note/export/canary4471.csv",
    "/dashboard/tool/read_note/",
    "/dashboard?start=canary4471",
    "/dashboard?canary4471=1",
    "/dashboard?platform=canary4471",
    "/dashboard?start=2026-06-01&start=2026-06-08",
    "/dashboard?&",
]
PAGES = [
    "/dashboard",
    "/dashboard?start=2026-06-01&platform=linux",
    "/dashboard/tool/read_note?start=2026-06-01&version=1.4",
    "/dashboard/friction/read_note/not_found/cannot_complete?start=2026-06-15&end=2026-06-28",
    "/dashboard/export/top.csv?start=2026-06-01",
    "/dashboard/friction/read_note/not_found/cannot_complete/export/trend.json",
]


@pytest.mark.parametrize("attack", ATTACKS)
def test_no_open_redirect_or_header_split_is_kept(attack: str) -> None:
    assert safe_next(attack) is None


@pytest.mark.parametrize("page", PAGES)
def test_the_dashboard_own_links_are_kept(page: str) -> None:
    assert safe_next(page) == page


_TRICKY = st.sampled_from(
    ["/", "//", "\\", ".", "..", "%", "%2f", "%5c", "@", ":", "?", "#", "&", "=", "\t", "\r",
     "\n", " ", "\x00", "evil.example", "https:", "dashboard", "tool", "login", "a", "-", "_",
     "\u2215", "\uff0f", "\u3002", "read_note", "timeout", "cannot_complete", "friction",
     "export", "top.csv", "trend.json", "start", "2026-06-01", "platform", "linux"]
)  # fmt: skip
_CANDIDATES = st.one_of(
    st.text(max_size=60),
    st.lists(_TRICKY, max_size=12).map("".join),
    st.lists(_TRICKY, max_size=12).map(lambda parts: "/dashboard" + "".join(parts)),
)


#: The words a kept path may hold: the dashboard's own, and enum and catalogue names.
_WORDS = {"dashboard", "tool", "friction", "export"} | {
    m.value for enum in (ToolName, ErrorClass, FrictionType) for m in enum
}
_FILES = {f"{stem}.{fmt}" for stem in ["trend", "versions", *(q.value for q in Question)]
          for fmt in ("csv", "json")}  # fmt: skip


@given(_CANDIDATES)
def test_whatever_is_kept_resolves_to_this_dashboard(raw: str) -> None:
    kept = safe_next(raw)
    if kept is None:
        return
    assert kept == raw and kept.isascii() and kept.isprintable()
    path, _, query = kept.partition("?")
    assert set(path.split("/")[1:]) <= _WORDS | _FILES, "nothing of the request is echoed"
    Filters.parse(dict(parse_qsl(query, keep_blank_values=True)))
    assert not any(c in kept for c in "\\%@:#\t\r\n ")
    parts = urlsplit(kept)
    assert (parts.scheme, parts.netloc) == ("", "")
    for base in ("https://collector.example/dashboard/login", "http://127.0.0.1:8765/x/y"):
        target = urlsplit(urljoin(base, kept))
        assert target.netloc == urlsplit(base).netloc
        assert target.path == "/dashboard" or target.path.startswith("/dashboard/")
        assert "/../" not in target.path + "/" and "/./" not in target.path + "/"


# -- over HTTP ----------------------------------------------------------------------------------


@pytest.fixture
def browser(collector_url: str) -> Iterator[httpx.Client]:
    """A signed-out client that posts like a browser (Origin, the form's CSRF token)."""
    # The process's certificate store, not one parsed per client (a client per page asked).
    verify = tls_context(trust_env=False)
    with httpx.Client(
        base_url=collector_url, trust_env=False, timeout=HANG_S, verify=verify
    ) as client:
        yield client


def _sign_in(
    client: httpx.Client, form_url: str, token: str, next_value: str | None
) -> httpx.Response:
    form = client.get(form_url)
    assert form.status_code == 200
    csrf = re.search(r'name="csrf" value="([^"]+)"', form.text)
    assert csrf is not None
    data = {"token": token, "csrf": csrf.group(1)}
    if next_value is not None:
        data["next"] = next_value
    origin = {"Origin": str(client.base_url).rstrip("/")}
    return client.post("/dashboard/login", data=data, headers=origin, follow_redirects=False)


@pytest.mark.parametrize("page", PAGES)
def test_every_kind_of_page_survives_the_sign_in(browser: httpx.Client, page: str) -> None:
    asked = browser.get(page, follow_redirects=False)
    assert asked.status_code == 303
    expected = "/dashboard/login" + (
        "" if page == "/dashboard" else "?" + urlencode({"next": page})
    )
    assert asked.headers["location"] == expected
    form = browser.get(asked.headers["location"])
    shown = re.search(r'name="next" value="([^"]*)"', form.text)
    if page == "/dashboard":
        assert shown is None
    else:
        assert shown is not None and html.unescape(shown.group(1)) == page
    # A wrong token keeps the link for the next try.
    wrong = _sign_in(browser, asked.headers["location"], "not-the-token", page)
    assert wrong.status_code == 303
    assert wrong.headers["location"] == "/dashboard/login?" + urlencode(
        {"failed": "1", **({} if page == "/dashboard" else {"next": page})}
    )
    signed = _sign_in(browser, wrong.headers["location"], TEAM_TOKEN, page)
    assert signed.status_code == 303 and signed.headers["location"] == page
    assert browser.get(page, follow_redirects=False).status_code == 200


@pytest.mark.parametrize("attack", [a for a in ATTACKS if a != ""])
def test_a_forged_next_lands_on_the_overview(browser: httpx.Client, attack: str) -> None:
    form = browser.get("/dashboard/login", params={"next": attack})
    assert 'name="next"' not in form.text, "the form never carries a refused next"
    signed = _sign_in(browser, "/dashboard/login", TEAM_TOKEN, attack)
    assert signed.status_code == 303
    assert signed.headers["location"] == "/dashboard"
    names = [name.lower() for name, _ in signed.headers.multi_items()]
    assert names.count("location") == 1
    assert all("injected" not in value for _, value in signed.headers.multi_items())
    wrong = _sign_in(browser, "/dashboard/login", "not-the-token", attack)
    assert wrong.headers["location"] == "/dashboard/login?failed=1"
