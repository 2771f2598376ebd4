"""Dashboard sessions: a signed-out session no longer works (server-side revocation), the cookie
is Secure behind TLS, the login form carries a CSRF token (login CSRF refused), and each login
is a session of its own.

A real collector with the triage router on loopback.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from analysis._session import COOKIE_NAME, CSRF_COOKIE
from collector.settings import CollectorSettings
from tests._servers import HANG_S, running_collector

TEAM_TOKEN = "test-team-token-sessions"


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("sessions") / "collector.duckdb"
    settings = CollectorSettings(
        db_path=Path(db), read_tokens=[SecretStr(TEAM_TOKEN)], rate_limit_enabled=False
    )
    with running_collector(settings) as base:
        yield base


def _browser_login(client: httpx.Client, **headers: str) -> httpx.Response:
    """Log in as a browser does: get the form (its CSRF cookie and field), post it back."""
    form = client.get("/dashboard/login")
    field = re.search(r'name="csrf" value="([^"]+)"', form.text)
    assert field is not None
    origin = {"origin": str(client.base_url).rstrip("/"), **headers}
    data = {"token": TEAM_TOKEN, "csrf": field.group(1)}
    return client.post("/dashboard/login", data=data, headers=origin, follow_redirects=False)


def test_dashboard_session_revoked_server_side_on_sign_out(url: str) -> None:
    with httpx.Client(base_url=url, trust_env=False, timeout=HANG_S) as client:
        assert _browser_login(client).status_code == 303
        stolen = client.cookies.get(COOKIE_NAME)
        assert stolen and client.get("/dashboard", follow_redirects=False).status_code == 200
        client.post("/dashboard/logout", follow_redirects=False)
    with httpx.Client(base_url=url, trust_env=False, timeout=HANG_S) as replay:
        replay.cookies.set(COOKIE_NAME, stolen, path="/dashboard")
        assert replay.get("/dashboard", follow_redirects=False).status_code == 303


def test_dashboard_cookie_is_secure_behind_tls(url: str) -> None:
    with httpx.Client(base_url=url, trust_env=False, timeout=HANG_S) as client:
        plain = _browser_login(client)
        assert "secure" not in plain.headers["set-cookie"].lower()
    with httpx.Client(base_url=url, trust_env=False, timeout=HANG_S) as client:
        behind_tls = _browser_login(client, **{"x-forwarded-proto": "https"})
        cookies = behind_tls.headers.get_list("set-cookie")
        session = next(c for c in cookies if c.startswith(f"{COOKIE_NAME}="))
        assert "; secure" in session.lower()


def test_dashboard_login_csrf_is_refused(url: str) -> None:
    # The attacker's page posts its own token from another origin: no CSRF cookie, no field.
    with httpx.Client(base_url=url, trust_env=False, timeout=HANG_S) as victim:
        forged = victim.post(
            "/dashboard/login",
            data={"token": TEAM_TOKEN},
            headers={"origin": "https://evil.example", "sec-fetch-site": "cross-site"},
            follow_redirects=False,
        )
        assert forged.status_code == 403
        assert COOKIE_NAME not in forged.headers.get("set-cookie", "")
        # A field copied from the attacker's own form does not match the victim's cookie.
        victim.get("/dashboard/login")
        with httpx.Client(base_url=url, trust_env=False, timeout=HANG_S) as attacker:
            theirs = re.search(
                r'name="csrf" value="([^"]+)"', attacker.get("/dashboard/login").text
            )
        assert theirs is not None
        mixed = victim.post(
            "/dashboard/login",
            data={"token": TEAM_TOKEN, "csrf": theirs.group(1)},
            headers={"origin": "https://evil.example"},
            follow_redirects=False,
        )
        assert mixed.status_code == 403
        assert victim.cookies.get(CSRF_COOKIE) is not None


def test_two_logins_in_the_same_second_are_two_sessions_and_one_sign_out_ends_one(
    url: str,
) -> None:
    """Each login draws its own nonce: logins the server answered in the same second (its
    ``Date`` header) get different cookies, and signing one out leaves the other signed in."""
    clients: list[httpx.Client] = []
    answered: dict[str, list[httpx.Client]] = {}
    try:
        while len(clients) < 100 and max(map(len, answered.values()), default=0) < 2:
            client = httpx.Client(base_url=url, trust_env=False, timeout=HANG_S)
            clients.append(client)
            login = _browser_login(client)
            assert login.status_code == 303
            answered.setdefault(login.headers["date"], []).append(client)
        same_second = max(answered.values(), key=len)
        assert len(same_second) >= 2, "100 logins, none two in one second"
        first, second = same_second[:2]
        cookies = [c.cookies.get(COOKIE_NAME) for c in clients]
        assert len(set(cookies)) == len(cookies)  # every login its own cookie
        first.post("/dashboard/logout", follow_redirects=False)
        assert second.get("/dashboard", follow_redirects=False).status_code == 200
        assert first.get("/dashboard", follow_redirects=False).status_code == 303
    finally:
        for client in clients:
            client.close()
