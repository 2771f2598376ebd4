"""The dashboard's exports: each panel's released figures as CSV or JSON, on a real collector.

The JSON of a panel is the API's answer for the same question, filters and the page's row limit;
the CSV is its rows in the table's order with ``n`` and ``moe`` as separate columns. Exports
need the dashboard session, keep the page's filters, and refuse what the page refuses with the
page's sentence. One test downloads a panel's CSV in a real Chromium.
"""

from __future__ import annotations

import csv
import html
import io
import re
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from analysis import answer_from_json
from analysis._csv import write_csv
from analysis._dashboard import OVERVIEW, TOOL_VIEW
from analysis._registry import QUESTIONS, Question
from analysis._rows import TopRow
from analysis._session import COOKIE_NAME, make_session
from analysis.report import table_rows
from tests._browser import CHROMIUM, CHROMIUM_ARGS
from tests._servers import HANG_S
from tests.analysis.conftest import TEAM_TOKEN

AUTH = {"Authorization": f"Bearer {TEAM_TOKEN}"}
PROBLEM = "application/problem+json"
#: The rows a dashboard panel holds (its table and "show more"): the exports' limit too.
PAGE_ROWS = "100"
CARD = re.compile(r'<section class="card[^"]*" id="q-(\w+)">(.*?)</section>', re.S)
EXPORT_LINK = re.compile(r'<a class="export" data-format="\w+" href="([^"]+)">')


@pytest.fixture(scope="module")
def dashboard(collector_url: str) -> Iterator[httpx.Client]:
    """A client signed in to the dashboard (its session cookie, as the login sets it)."""
    with httpx.Client(base_url=collector_url, trust_env=False, timeout=HANG_S) as client:
        client.cookies.set(COOKIE_NAME, make_session(TEAM_TOKEN), path="/dashboard")
        yield client


def filters_for(question: Question) -> dict[str, str]:
    """Filters every released view takes; a platform for the cubes that have one."""
    params = {"start": "2026-05-01"}
    if question in (Question.platforms, Question.trends):
        params["platform"] = "windows"
    return params


def api_doc(client: httpx.Client, question: str, params: dict[str, str]) -> dict[str, Any]:
    response = client.get(
        f"/v1/triage/{question}", params={**params, "limit": PAGE_ROWS}, headers=AUTH
    )
    assert response.status_code == 200, response.text
    doc: dict[str, Any] = response.json()
    return doc


def expected_csv(doc: dict[str, Any]) -> list[list[str]]:
    """The API's answer as the CSV must hold it: every field, the table's row order."""
    answer = answer_from_json(doc)
    names = [f.name for f in fields(QUESTIONS[answer.question].row_type)]
    by_row = {id(r): j for r, j in zip(answer.rows, doc["rows"], strict=True)}

    def cell(value: object) -> str:
        if value is None:
            return ""
        return ("true" if value else "false") if isinstance(value, bool) else str(value)

    return [names] + [[cell(by_row[id(r)][n]) for n in names] for r in table_rows(answer)]


def parse_csv(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


@pytest.mark.parametrize("name", ["top.csv", "top.json", "trends.csv"])
def test_exports_need_the_dashboard_session(collector_url: str, name: str) -> None:
    url = f"/dashboard/export/{name}"
    forged = make_session("some-other-token")
    with httpx.Client(base_url=collector_url, trust_env=False, timeout=HANG_S) as client:
        for headers, cookie in (({}, None), (AUTH, None), ({}, forged), ({}, "garbage")):
            if cookie is not None:
                client.cookies.set(COOKIE_NAME, cookie, path="/dashboard")
            response = client.get(url, headers=headers, follow_redirects=False)
            assert response.status_code == 303, (headers, cookie)
            # The sign-in form, which brings the browser back to this download.
            target = "/dashboard/login?" + urlencode({"next": url})
            assert response.headers["location"] == target
            assert "content-disposition" not in response.headers
            client.cookies.clear()


@pytest.mark.parametrize("question", sorted(set(OVERVIEW) | set(TOOL_VIEW)))
def test_the_json_export_is_the_api_answer(dashboard: httpx.Client, question: Question) -> None:
    params = filters_for(question)
    export = dashboard.get(f"/dashboard/export/{question.value}.json", params=params)
    assert export.status_code == 200, export.text
    doc = api_doc(dashboard, question.value, params)
    assert export.json() == doc
    assert doc["source"] == "released" and doc["k"] is None and doc["released_through"]
    assert doc["filters"] == params
    if question in TOOL_VIEW:  # a tool's page: its filters include the tool
        scoped = {**params, "tool": "read_note"}
        api = dashboard.get(f"/v1/triage/{question.value}", params=scoped, headers=AUTH)
        export = dashboard.get(f"/dashboard/export/{question.value}.json", params=scoped)
        if api.status_code == 200:
            assert export.json() == api_doc(dashboard, question.value, scoped)
        else:  # the release cannot take a tool: refused by both
            assert (api.status_code, export.status_code) == (422, 422)


@pytest.mark.parametrize("question", sorted(set(OVERVIEW) | set(TOOL_VIEW)))
def test_the_csv_export_is_the_panel_table_with_its_margins(
    dashboard: httpx.Client, question: Question
) -> None:
    params = filters_for(question)
    export = dashboard.get(f"/dashboard/export/{question.value}.csv", params=params)
    assert export.status_code == 200, export.text
    rows = parse_csv(export.text)
    assert rows == expected_csv(api_doc(dashboard, question.value, params))
    assert {"n", "moe"} <= set(rows[0])
    assert rows[0].index("moe") == rows[0].index("n") + 1, "each count, then its margin"
    margins = {"moe", "share_moe"} & {f.name for f in fields(QUESTIONS[question].row_type)}
    assert margins <= set(rows[0]), "every margin the table folds is a column of its own"


def test_exports_keep_the_filters(dashboard: httpx.Client) -> None:
    def rows(question: str, **params: str) -> list[dict[str, Any]]:
        response = dashboard.get(f"/dashboard/export/{question}.json", params=params)
        assert response.status_code == 200, response.text
        assert response.json()["filters"] == params
        listed: list[dict[str, Any]] = response.json()["rows"]
        return listed

    everything = rows("top")
    tool = rows("top", tool="read_note")
    assert tool and {r["tool"] for r in tool} == {"read_note"}
    assert {r["tool"] for r in everything} > {"read_note"}
    windows = rows("platforms", start="2026-05-01", platform="windows")
    assert windows and {r["platform"] for r in windows} == {"windows"}
    may = dashboard.get("/dashboard/export/trends.json", params={"start": "2026-05-01"}).json()
    # Asked from May; the releases start in June: the file covers (and says) the released days.
    assert may["asked"]["start"] == "2026-05-01" and may["period"]["start"] == may["released_from"]
    assert may["released_from"] in may["note"] and "oldest released week" in may["note"]
    assert min(r["day"] for r in may["rows"]) >= may["period"]["start"]


def test_export_headers(dashboard: httpx.Client) -> None:
    for fmt, media in (("csv", "text/csv"), ("json", "application/json")):
        response = dashboard.get(f"/dashboard/export/top.{fmt}", params={"start": "2026-05-01"})
        assert response.status_code == 200
        period = dashboard.get("/dashboard/export/top.json", params={"start": "2026-05-01"})
        start, end = period.json()["period"]["start"], period.json()["period"]["end"]
        assert response.headers["content-type"].startswith(media)
        assert response.headers["content-disposition"] == (
            f'attachment; filename="lmcp-top-{start}-{end}.{fmt}"'
        )
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["cache-control"] == "no-store"


def test_a_filter_a_panel_cannot_take_is_refused_with_the_page_sentence(
    dashboard: httpx.Client,
) -> None:
    # The apps cube has no platform: the page says so on its panel, the export answers 422.
    for fmt in ("csv", "json"):
        refused = dashboard.get(f"/dashboard/export/apps.{fmt}", params={"platform": "linux"})
        assert refused.status_code == 422
        assert refused.headers["content-type"].startswith(PROBLEM)
        assert "content-disposition" not in refused.headers
        detail = refused.json()["detail"]
        assert detail.startswith("Not available with these filters")
    page = dashboard.get("/dashboard", params={"platform": "linux"})
    assert page.status_code == 200
    assert html.escape(detail, quote=True) in page.text


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"version": "secret-value-123"}, "'Version'"),
        ({"platform": "secret-value-123"}, "'Platform'"),
        ({"start": "2026-05-02", "end": "2026-05-01"}, "'From'"),
        ({"secret-value-123": "x"}, "'?'"),
        ({"limit": "5"}, "'limit'"),
    ],
)
def test_an_unusable_filter_is_refused_with_the_page_sentence(
    dashboard: httpx.Client, params: dict[str, str], field: str
) -> None:
    refused = dashboard.get("/dashboard/export/top.csv", params=params)
    assert refused.status_code == 422
    assert refused.headers["content-type"].startswith(PROBLEM)
    assert "secret-value-123" not in refused.text
    detail = refused.json()["detail"]
    assert detail.startswith(field)
    # The page shows the same sentence above its form (then the default filters).
    page = dashboard.get("/dashboard", params=params)
    assert page.status_code == 422
    assert html.escape(detail, quote=True) in page.text


@pytest.mark.parametrize("name", ["nope.csv", "top.xml", "top", "attempts.csv", "top.csv.json"])
def test_only_a_panel_has_an_export(dashboard: httpx.Client, name: str) -> None:
    assert dashboard.get(f"/dashboard/export/{name}").status_code == 404


def test_every_panel_links_its_exports_with_the_page_filters(dashboard: httpx.Client) -> None:
    def links(path: str, params: dict[str, str], query: str) -> dict[str, list[str]]:
        """Each card's export links; a card without an answer for the filters (it says so)
        has none: its export would be a 422."""
        page = dashboard.get(path, params=params)
        assert page.status_code == 200
        found: dict[str, list[str]] = {}
        for name, card in CARD.findall(page.text):
            found[name] = [html.unescape(href) for href in EXPORT_LINK.findall(card)]
            answered = "Not available with these filters" not in card
            wanted = [f"/dashboard/export/{name}.{f}{query}" for f in ("csv", "json")]
            if name == "weekly":  # a tool's weekly trend: the tool's own download
                days = query.replace("&tool=read_note", "")
                wanted = [f"{path}/export/trend.{f}{days}" for f in ("csv", "json")]
            assert found[name] == (wanted if answered else []), name
        return found

    overview = links("/dashboard", {"start": "2026-05-01"}, "?start=2026-05-01")
    assert set(overview) == {q.value for q in OVERVIEW} and all(overview.values())
    drill = links("/dashboard/tool/read_note", {"start": "2026-05-01"},
                  "?start=2026-05-01&tool=read_note")  # fmt: skip
    assert set(drill) == {q.value for q in TOOL_VIEW} | {"weekly"}
    assert drill["top"] and drill["shapes"] and drill["ring"]
    linux = links("/dashboard", {"platform": "linux"}, "?platform=linux")
    assert linux["apps"] == [] and linux["trends"] != []


def test_no_csv_cell_is_a_formula() -> None:
    def written(row: TopRow) -> list[str]:
        out = io.StringIO(newline="")
        write_csv(answer_from_json(_answer_doc()), out, [row], newline="\r\n")  # as exported
        header, cells = parse_csv(out.getvalue())
        return cells

    cells = written(TopRow("=HYPERLINK(1)", "+1", "-x", 5, 2, None, None, -3, 4, -37.5, 9.1))
    assert cells[:3] == ["'=HYPERLINK(1)", "'+1", "'-x"]
    assert cells[3:] == ["5", "2", "", "", "-3", "4", "-37.5", "9.1"], "numbers stay numbers"
    one = (1, 1, 1, 1, 0, 1, 0.0, 1.0)
    for text in ("@SUM(A1)", "\tx", "\rx", "\r\n=1"):
        assert written(TopRow(text, "a", "b", *one))[0] == "'" + text
    # A lone sign is no formula: the shapes' size of a sizeless type stays "-", as in the API.
    assert written(TopRow("read_note", "a-b", "-", *one))[:3] == ["read_note", "a-b", "-"]


def _answer_doc() -> dict[str, Any]:
    return {"question": "top", "period": {"start": "2026-05-01", "end": "2026-05-28"},
            "k": None, "source": "released", "rows": []}  # fmt: skip


@pytest.mark.browser
@pytest.mark.slow
def test_download_a_panel_csv_in_chromium(collector_url: str, tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        pytest.skip("Chromium is not installed at /usr/bin/chromium (make test installs it)")
    from playwright.sync_api import sync_playwright

    params = {"start": "2026-05-01"}
    problems: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(accept_downloads=True)
            page = context.new_page()
            page.set_default_timeout(HANG_S * 1000)  # only a hang: a busy machine is slow
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.goto(f"{collector_url}/dashboard/login")
            page.fill("#token", TEAM_TOKEN)
            page.click("button[type=submit]")
            page.wait_for_url(f"{collector_url}/dashboard")
            page.goto(f"{collector_url}/dashboard?start=2026-05-01")
            page.wait_for_load_state("load")  # the page streams: its cards come after its head
            downloads = {}
            for name in ("top", "trends"):
                with page.expect_download() as info:
                    page.click(f"#q-{name} a.export[data-format=csv]")
                download = info.value
                saved = tmp_path / download.suggested_filename
                download.save_as(saved)
                text = saved.read_bytes().decode("utf-8")
                downloads[name] = (download.suggested_filename, text)
            context.close()
        finally:
            browser.close()
    with httpx.Client(base_url=collector_url, trust_env=False, timeout=HANG_S) as client:
        for name, (filename, text) in downloads.items():
            doc = api_doc(client, name, params)
            period = doc["period"]
            assert filename == f"lmcp-{name}-{period['start']}-{period['end']}.csv"
            rows = parse_csv(text)
            assert rows == expected_csv(doc)
            assert len(rows) > 1 and "moe" in rows[0]
    assert problems == []
