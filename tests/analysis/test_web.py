"""The triage API and the dashboard's HTTP surface, on a real collector over loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import httpx
import pytest

import analysis
from analysis import Filters, Question
from analysis._cells import CUBE_OF
from analysis._released import RELEASED_QUESTIONS, ask_released
from analysis._session import COOKIE_NAME, make_session, open_session
from collector.releases.cubes import CUBES
from contract.accountant import ReleasePlan
from tests._servers import HANG_S
from tests.analysis.conftest import TEAM_TOKEN

AUTH = {"Authorization": f"Bearer {TEAM_TOKEN}"}
PROBLEM = "application/problem+json"


@pytest.fixture(scope="module")
def http(collector_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=collector_url, trust_env=False, timeout=HANG_S) as client:
        yield client


def test_triage_needs_a_team_token(http: httpx.Client) -> None:
    missing = http.get("/v1/triage/top")
    assert missing.status_code == 401
    assert missing.headers["content-type"].startswith(PROBLEM)
    wrong = http.get("/v1/triage/top", headers={"Authorization": "Bearer not-the-token"})
    assert wrong.status_code == 403
    assert "not-the-token" not in wrong.text


@pytest.mark.parametrize("question", RELEASED_QUESTIONS)
def test_triage_answers_are_the_stored_releases(
    http: httpx.Client, synth_path: Path, question: Question
) -> None:
    params = {"start": "2026-05-01"}
    if CUBE_OF[question] in ("platforms", "daily"):
        params["platform"] = "windows"
    response = http.get(f"/v1/triage/{question.value}", params=params, headers=AUTH)
    assert response.status_code == 200, response.text
    with duckdb.connect(str(synth_path), read_only=True) as con:
        local = ask_released(con, question, Filters.parse(params), limit=20)
    assert analysis.answer_from_json(response.json()) == local
    assert response.json()["source"] == "released" and response.json()["k"] is None
    assert local.rows, "the test file releases something in every view"


def last_released_day_of_synth(http: httpx.Client) -> str:
    """The newest released period's last day, as the answers' own ``released_through``."""
    doc = http.get("/v1/triage/top", headers=AUTH).json()
    assert doc["period"]["end"] <= doc["released_through"]
    return str(doc["released_through"])


def test_triage_lists_its_released_questions_and_the_privacy_parameters(
    http: httpx.Client,
) -> None:
    body = http.get("/v1/triage", headers=AUTH).json()
    assert [q["name"] for q in body["questions"]] == [q.value for q in RELEASED_QUESTIONS]
    privacy = body["privacy"]
    long_run = ReleasePlan().long_run()
    assert privacy["long_run"] == {
        "days": long_run.days,
        "epsilon": long_run.epsilon,
        "delta": long_run.delta,
    }
    assert privacy["long_run"]["days"] == 90 and privacy["long_run"]["epsilon"] <= 8.5
    assert privacy["weekly_signal_limit"] == 8 and privacy["per_key_weekly_limit"] == 1
    assert {c["cube"] for c in privacy["cubes"]} == set(CUBES)
    assert body["released_through"] == last_released_day_of_synth(http)


@pytest.mark.parametrize(
    ("path", "params", "status", "code"),
    [
        ("/v1/triage/nope", {}, 404, "unknown_question"),
        ("/v1/triage/top", {"platform": "secret-value-123"}, 422, "invalid_filter"),
        ("/v1/triage/top", {"start": "secret-value-123"}, 422, "invalid_filter"),
        ("/v1/triage/top", {"version": "secret-value-123"}, 422, "invalid_filter"),
        ("/v1/triage/top", {"secret-value-123": "x"}, 422, "invalid_parameter"),
        ("/v1/triage/top", {"k": "2"}, 422, "invalid_parameter"),
        ("/v1/triage/top", {"version": "1.4"}, 422, "invalid_filter"),
        ("/v1/triage/apps", {"platform": "linux"}, 422, "invalid_filter"),
        ("/v1/triage/attempts", {"platform": "linux"}, 422, "invalid_filter"),
        ("/v1/triage/top", {"limit": "secret-value-123"}, 422, "invalid_parameter"),
        ("/v1/triage/top", {"start": "2026-05-02", "end": "2026-05-01"}, 422, "invalid_filter"),
    ],
)
def test_triage_errors_are_problems_that_echo_nothing(
    http: httpx.Client, path: str, params: dict[str, str], status: int, code: str
) -> None:
    response = http.get(path, params=params, headers=AUTH)
    assert response.status_code == status
    assert response.headers["content-type"].startswith(PROBLEM)
    assert response.json()["code"] == code
    assert "secret-value-123" not in response.text


def test_asking_again_returns_the_same_numbers(http: httpx.Client) -> None:
    first = http.get("/v1/triage/shapes", params={"limit": "1000"}, headers=AUTH).json()
    again = http.get("/v1/triage/shapes", params={"limit": "1000"}, headers=AUTH).json()
    assert first == again and first["rows"]


def test_dashboard_login_sets_a_strict_http_only_cookie(http: httpx.Client) -> None:
    first = http.get("/dashboard", follow_redirects=False)
    assert first.status_code == 303
    assert first.headers["location"] == "/dashboard/login"
    form = http.get("/dashboard/login")
    assert form.status_code == 200 and 'name="token"' in form.text
    bad = http.post("/dashboard/login", data={"token": "wrong-token"}, follow_redirects=False)
    assert bad.status_code == 303
    assert bad.headers["location"] == "/dashboard/login?failed=1"
    assert "wrong-token" not in bad.text
    assert "not valid" in http.get(bad.headers["location"]).text
    assert COOKIE_NAME not in bad.headers.get("set-cookie", "")
    good = http.post("/dashboard/login", data={"token": TEAM_TOKEN}, follow_redirects=False)
    assert good.status_code == 303
    cookie = good.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE_NAME}=") and cookie.split(";")[0].count(".") == 2
    lowered = cookie.lower()
    assert "httponly" in lowered and "samesite=strict" in lowered and "path=/dashboard" in lowered
    assert TEAM_TOKEN not in cookie


def _signed_in(collector_url: str) -> httpx.Client:
    client = httpx.Client(base_url=collector_url, trust_env=False, timeout=HANG_S)
    client.cookies.set(COOKIE_NAME, make_session(TEAM_TOKEN), path="/dashboard")
    return client


def test_dashboard_pages_are_self_contained(collector_url: str) -> None:
    with _signed_in(collector_url) as client:
        page = client.get("/dashboard")
        assert page.status_code == 200
        assert page.text.count("<svg") >= 5
        assert "differentially private" in page.text
        assert "<script" not in page.text
        assert "http://" not in page.text.replace("http://www.w3.org/", "")
        assert "https://" not in page.text
        csp = page.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src" not in csp
        drill = client.get("/dashboard/tool/read_note")
        assert drill.status_code == 200
        assert 'id="q-shapes"' in drill.text and 'id="q-ring"' in drill.text
        assert client.get("/dashboard/tool/secret-value-123").status_code == 404
        bad = client.get("/dashboard", params={"version": "secret-value-123"})
        assert bad.status_code == 422 and "secret-value-123" not in bad.text
        css = client.get("/dashboard/static/dashboard.css")
        assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
        assert client.get("/dashboard/static/../web.py").status_code == 404


def test_a_forged_or_expired_session_is_refused(collector_url: str) -> None:
    forged = make_session("some-other-token")
    expired = make_session(TEAM_TOKEN, now=1_000_000)
    for value in (forged, expired, "v1.9999999999.00", "garbage"):
        with httpx.Client(base_url=collector_url, trust_env=False, timeout=HANG_S) as client:
            client.cookies.set(COOKIE_NAME, value, path="/dashboard")
            assert client.get("/dashboard", follow_redirects=False).status_code == 303
    assert open_session(make_session(TEAM_TOKEN), [TEAM_TOKEN]) is not None
    assert open_session(make_session(TEAM_TOKEN), ["rotated-token"]) is None


def test_logout_clears_the_cookie(collector_url: str) -> None:
    with httpx.Client(base_url=collector_url, trust_env=False, timeout=HANG_S) as client:
        client.post("/dashboard/login", data={"token": TEAM_TOKEN}, follow_redirects=False)
        assert client.get("/dashboard", follow_redirects=False).status_code == 200
        out = client.post("/dashboard/logout", follow_redirects=False)
        assert out.status_code == 303
        assert f"{COOKIE_NAME}=" in out.headers["set-cookie"]
        assert client.get("/dashboard", follow_redirects=False).status_code == 303
