"""Everything the team's dashboard serves for the data, read as a signed-in person can: the sinks
of the audits and the pages the exact-count attack searches.

``read_dashboard(http, frictions)`` reads the overview, every catalogue tool's page (or the
``tools`` given), the page of every friction given (``(tool, error_class, friction_type)``) and
of every friction a page links (``/dashboard/friction/...``, once each), and every download any
of those pages links (``.../export/...``: the overview's, the tools' and the frictions' panels,
CSV and JSON). With ``hostile`` values it also asks for friction pages and downloads (and the
pages sharing their date form) with each value in every path segment and in the period, as a
signed-in person could: each answer must be a refusal (``not_refused``) that shows nothing back
(the ``sinks``, scanned for the values).
"""

from __future__ import annotations

import html
import re
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote, urlsplit

import httpx

from contract.schema import ToolName

__all__ = [
    "DashboardRead",
    "assert_downloads_read",
    "friction_path",
    "frictions_of",
    "read_dashboard",
]

_MEDIA = {"csv": "text/csv", "json": "application/json"}
_HREF = re.compile(r'href="(/dashboard/[^"]+)"')
#: A friction's page (its downloads are under it, ``.../export/...``).
_FRICTION = re.compile(r"/dashboard/friction/[^/?]+/[^/?]+/[^/?]+$")


def friction_path(tool: str, error_class: str, friction_type: str) -> str:
    return f"/dashboard/friction/{tool}/{error_class}/{friction_type}"


def frictions_of(rows: Iterable[Mapping[str, object]]) -> set[tuple[str, str, str]]:
    """The frictions of stored signals (an export's rows): a report without a tool has none."""
    keys = ("tool_attempted", "error_class", "friction_type")
    cells = (tuple(row.get(k) for k in keys) for row in rows)
    return {(t, e, f) for t, e, f in cells if isinstance(t, str) and isinstance(e, str)
            and isinstance(f, str)}  # fmt: skip


@dataclass
class DashboardRead:
    """What the dashboard answered, by URL (path and query): pages, downloads, hostile asks."""

    pages: dict[str, httpx.Response] = field(default_factory=dict)
    downloads: dict[str, httpx.Response] = field(default_factory=dict)
    hostile: dict[str, httpx.Response] = field(default_factory=dict)

    def friction_pages(self) -> dict[str, httpx.Response]:
        return {u: r for u, r in self.pages.items() if _FRICTION.match(urlsplit(u).path)}

    def downloads_of(self, kind: str) -> list[str]:
        """The downloads answered with a ``kind`` file (``csv``, ``json``)."""
        return [
            u for u, r in self.downloads.items()
            if r.status_code == 200 and r.headers.get("content-type", "").startswith(_MEDIA[kind])
        ]  # fmt: skip

    def failed(self) -> list[str]:
        """The pages and downloads answered other than 200 (each was linked or is the data's)."""
        answers = {**self.pages, **self.downloads}
        return sorted(f"{u}: {r.status_code}" for u, r in answers.items() if r.status_code != 200)

    def not_refused(self) -> list[str]:
        """The hostile asks answered other than a refusal (4xx)."""
        return sorted(f"{w}: {r.status_code}" for w, r in self.hostile.items()
                      if not 400 <= r.status_code < 500)  # fmt: skip

    def sinks(self) -> dict[str, bytes]:
        """One sink per kind of answer, each answer's status line, headers and body. A hostile
        answer is named by what was asked, never by its URL, which holds the value sent."""

        def joined(answers: dict[str, httpx.Response]) -> bytes:
            return b"\n".join(_answer_bytes(url, r) for url, r in sorted(answers.items()))

        friction = self.friction_pages()
        others = {u: r for u, r in self.pages.items() if u not in friction}
        return {
            "dashboard HTML (overview and tools)": joined(others),
            "dashboard HTML (friction pages)": joined(friction),
            "dashboard downloads (CSV and JSON)": joined(self.downloads),
            "dashboard answers to hostile requests": joined(self.hostile),
        }


def assert_downloads_read(read: DashboardRead) -> None:
    """Both kinds of download were read -- unless nothing is released yet (a live run: today's
    week is open): then every page says so and links none (a download of days no release
    covers is a 404 problem); the released world of ``test_attack_dashboard.py`` reads both."""
    if b"nothing is released yet" in read.pages["/dashboard"].content.lower():
        assert read.downloads == {}, "a page of days no release covers links no download"
        return
    assert read.downloads_of("csv") and read.downloads_of("json"), "no download read"


def _answer_bytes(url: str, response: httpx.Response) -> bytes:
    head = "\n".join(f"{k}: {v}" for k, v in response.headers.items())
    return f"{response.status_code} {url}\n{head}\n\n".encode() + response.content


def _links(page: httpx.Response) -> list[str]:
    return [html.unescape(href) for href in _HREF.findall(page.text)]


def read_dashboard(
    http: httpx.Client,
    frictions: Iterable[tuple[str, str, str]] = (),
    *,
    hostile: Sequence[str] = (),
    tools: Iterable[str] | None = None,
) -> DashboardRead:
    """Read every page and download of the dashboard for the data (``http`` signed in).
    ``tools``: the tools whose pages are read (None: every catalogue tool; a tool's page is
    the dearest the dashboard serves, and one with nothing stored shows no count)."""
    read = DashboardRead()
    given = [friction_path(*key) for key in sorted(set(frictions))]
    names = [t.value for t in ToolName] if tools is None else sorted(set(tools))
    queue = deque(["/dashboard", *(f"/dashboard/tool/{tool}" for tool in names), *given])
    # One page per friction (the first link met): each links its previous period, and following
    # those would walk back through every week there ever was.
    frictions_met = set(given)
    downloads: list[str] = []
    while queue:
        url = queue.popleft()
        read.pages[url] = page = http.get(url)
        for link in _links(page):
            path = urlsplit(link).path
            if "/export/" in path:
                if link not in downloads:
                    downloads.append(link)
            elif _FRICTION.match(path) and path not in frictions_met:
                frictions_met.add(path)
                queue.append(link)
    for url in downloads:
        read.downloads[url] = http.get(url)
    known = sorted(urlsplit(u).path for u in read.friction_pages()) or [_ANY_FRICTION]
    for i, value in enumerate(hostile):
        for what, url, params in _hostile_asks(value, known[0]):
            read.hostile[f"{what}, hostile value {i}"] = http.get(url, params=params)
    return read


#: A friction every catalogue names (a page that renders with no data): for the period asks.
_ANY_FRICTION = friction_path("read_note", "not_found", "cannot_complete")


def _hostile_asks(value: str, friction: str) -> list[tuple[str, str, dict[str, str]]]:
    """(what is asked, path, query) with ``value`` in each path segment and period parameter
    of the friction pages and the downloads (and of the pages sharing their date form).
    ``what`` never holds the value: it names the answer in a failure line."""
    seg = quote(value, safe="")
    tool, error_class, friction_type = friction.rsplit("/", 3)[1:]
    paths = {
        "friction page, tool segment": friction_path(seg, error_class, friction_type),
        "friction page, error class segment": friction_path(tool, seg, friction_type),
        "friction page, friction type segment": friction_path(tool, error_class, seg),
        "friction download, tool segment":
            friction_path(seg, error_class, friction_type) + "/export/trend.csv",
        "friction download, error class segment":
            friction_path(tool, seg, friction_type) + "/export/trend.json",
        "friction download, friction type segment":
            friction_path(tool, error_class, seg) + "/export/versions.csv",
        "friction download, panel segment": f"{friction}/export/{seg}.json",
        "panel download, question segment": f"/dashboard/export/{seg}.csv",
        "tool download, tool segment": f"/dashboard/tool/{seg}/export/trend.json",
        "tool download, panel segment": f"/dashboard/tool/{tool}/export/{seg}.csv",
    }  # fmt: skip
    asks: list[tuple[str, str, dict[str, str]]] = [(w, p, {}) for w, p in paths.items()]
    periods = {
        "friction page": friction,
        "friction download": f"{friction}/export/trend.csv",
        "panel download": "/dashboard/export/top.json",
        "tool download": f"/dashboard/tool/{tool}/export/trend.csv",
        "overview": "/dashboard",
        "tool page": f"/dashboard/tool/{tool}",
    }
    for what, path in periods.items():
        asks += [(f"{what}, {key} of the period", path, {key: value}) for key in ("start", "end")]
    return asks
