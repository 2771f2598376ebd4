"""The dashboard's page parts shared by every page: escaping, the head, the sign-in form, the
loading notice, the tiles, the download links.

Pages are rendered on the server with no script; every value written into a page goes through
``esc`` (values are enums, catalogue names, numbers and days, escaped all the same).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

__all__ = [
    "download_links",
    "esc",
    "head",
    "kpis",
    "login_page",
    "not_covered_main",
    "not_found_page",
    "page_failed",
    "page_start",
]


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def head(title: str) -> str:
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<title>{esc(title)}</title><link rel="icon" href="data:,">'
        '<link rel="stylesheet" href="/dashboard/static/dashboard.css"></head>'
    )


def login_page(*, failed: bool = False, csrf: str = "", next_path: str | None = None) -> str:
    """The sign-in form; ``next_path`` (already checked by ``analysis._signin.safe_next``) is
    where a successful sign-in goes, posted back with the form."""
    message = '<p class="error" role="alert">That token is not valid.</p>' if failed else ""
    hidden = f'<input type="hidden" name="csrf" value="{esc(csrf)}">' if csrf else ""
    if next_path is not None:
        hidden += f'<input type="hidden" name="next" value="{esc(next_path)}">'
    return (
        head("LMCP triage - sign in")
        + '<body class="login"><form method="post" action="/dashboard/login" class="card">'
        "<h1>LMCP triage</h1><p>Sign in with a team read token.</p>"
        f"{message}{hidden}"
        '<label for="token">Team token</label>'
        '<input id="token" name="token" type="password" autocomplete="current-password" '
        'required maxlength="512" autofocus>'
        '<button type="submit">Sign in</button></form></body></html>\n'
    )


def page_start(title: str) -> str:
    """The first bytes of a page, sent before its figures are computed: a loading notice
    (the stylesheet hides it once the page's ``main`` has arrived)."""
    return (
        head(title)
        + '<body><p class="loading" id="loading" role="status">'
        + "Loading the released figures\u2026</p>"
    )


def page_failed() -> str:
    """The end of a page whose figures could not be computed (the start is already sent)."""
    return (
        '<main><p class="error banner" role="alert" id="page-error">The figures could not be '
        'computed. <a href="/dashboard">Try again</a>.</p></main></body></html>\n'
    )


def kpis(tiles: Sequence[tuple[str, str, str, str | None]]) -> str:
    """The tiles above the charts: (id, label, value, link or None) each."""

    def value(text: str, href: str | None) -> str:
        return esc(text) if href is None else f'<a href="{esc(href)}">{esc(text)}</a>'

    return (
        '<div class="kpis">'
        + "".join(
            f'<div class="kpi" id="kpi-{key}"><span>{value(v, href)}</span>'
            f"<small>{esc(label)}</small></div>"
            for key, label, v, href in tiles
        )
        + "</div>"
    )


def download_links(hrefs: Mapping[str, str]) -> str:
    """A panel's CSV and JSON links (format -> href)."""
    links = " ".join(
        f'<a class="export" data-format="{fmt}" href="{esc(href)}">{fmt.upper()}</a>'
        for fmt, href in hrefs.items()
    )
    return f'<p class="exports">Download: {links}</p>'


def not_covered_main(message: str, latest: str | None, label: str) -> str:
    """The end of a page no release covers: its sentence (what the releases do cover) and a
    link to the last released weeks (``latest``; None before any release)."""
    link = "" if latest is None else f' <a id="latest" href="{esc(latest)}">{esc(label)}</a>.'
    return (
        '<main class="grid"><p class="empty banner" id="not-covered" role="status">'
        f"{esc(message)}{link}</p></main></body></html>\n"
    )


def not_found_page(message: str, links: Sequence[tuple[str, str]]) -> str:
    """A dashboard page for a link that names nothing (a mistyped tool or friction): the
    dashboard's frame, the sentence (it never repeats the link's text), and the ways back
    (label, href)."""
    ways = " ".join(f'<a href="{esc(href)}">{esc(label)}</a>' for label, href in links)
    return (
        head("Not found - LMCP triage")
        + "<body><header><div><h1>Not found</h1><p>LMCP friction triage</p></div>"
        f'<div>{ways}</div><form method="post" action="/dashboard/logout">'
        '<button class="link" type="submit">Sign out</button></form></header>'
        f'<main class="grid"><p class="error banner" role="alert" id="not-found">{esc(message)}'
        f'</p><nav class="periods" id="ways-back">{ways}</nav></main></body></html>\n'
    )
