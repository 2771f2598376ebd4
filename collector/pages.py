"""The collector's two human pages: ``/`` (what is here) and ``/docs`` (the API, offline).

``/docs`` is Swagger UI with its script, stylesheet and favicon served by the collector from
the ``fastapi-offline`` package (``/docs/assets/...``): a team's browser makes no third-party
request, and the page works with no network. It is the one page with script: its CSP allows
only the collector's own script file and the hash of the page's one inline script. ``/`` has
no script at all and links the API docs and, when the shell mounted it, the dashboard.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections.abc import Sequence
from pathlib import Path

import fastapi_offline
from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Match

from service.errors import ProblemError

__all__ = ["DOCS_ASSETS", "build_pages_router"]

_ASSET_DIR = Path(fastapi_offline.__file__).parent / "static"
#: The files ``/docs`` needs, all from the installed package (nothing else is served).
DOCS_ASSETS = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "favicon.png": "image/png",
}
_COMMON = {  # nosniff: on every response (lmcp.apps.uvicorn_config)
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
_NO_SCRIPT_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def _docs_csp(page: str) -> str:
    """Script from this origin plus the page's own inline scripts, by hash; fetches stay here."""
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
        for s in _INLINE_SCRIPT.findall(page)
    )
    return (
        f"default-src 'none'; script-src 'self' {hashes}; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
        "form-action 'none'"
    )


def _serves(routes: Sequence[BaseRoute], path: str) -> bool:
    """Whether one of ``routes`` (included routers too) answers ``GET path``."""
    scope = {"type": "http", "method": "GET", "path": path, "root_path": "", "headers": []}
    return any(route.matches(scope)[0] is Match.FULL for route in routes)


def _home(title: str, dashboard: bool) -> str:
    links = ['<li><a href="/docs" id="api-docs">API documentation</a> (<code>/docs</code>, '
             'the OpenAPI document is <a href="/openapi.json">/openapi.json</a>)</li>']  # fmt: skip
    if dashboard:
        links.insert(0, '<li><a href="/dashboard" id="dashboard">Triage dashboard</a> '
                        "(sign in with a team read token)</li>")  # fmt: skip
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<title>{html.escape(title)}</title><link rel="icon" href="data:,">'
        "<style>body{font:15px/1.5 system-ui,sans-serif;margin:0 auto;max-width:40em;"
        "padding:24px 16px;color:#1d1d1f}a{color:#0b57d0}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>"
        "<p>This server collects anonymous friction signals and answers triage questions.</p>"
        f"<ul>{''.join(links)}</ul></body></html>\n"
    )


def build_pages_router(title: str, *, openapi_url: str = "/openapi.json") -> APIRouter:
    """``/``, ``/docs`` (and its assets and OAuth2 redirect) for an app named ``title``."""
    router = APIRouter()
    docs_body = get_swagger_ui_html(
        openapi_url=openapi_url,
        title=f"{title} - API documentation",
        swagger_js_url="/docs/assets/swagger-ui-bundle.js",
        swagger_css_url="/docs/assets/swagger-ui.css",
        swagger_favicon_url="/docs/assets/favicon.png",
        oauth2_redirect_url="/docs/oauth2-redirect",
        # No online validator badge: Swagger UI would fetch it from swagger.io.
        swagger_ui_parameters={"validatorUrl": None},
    ).body
    docs = bytes(docs_body).decode()

    @router.get("/", include_in_schema=False)
    async def home(request: Request) -> HTMLResponse:
        dashboard = _serves(request.app.routes, "/dashboard")
        headers = {**_COMMON, "Content-Security-Policy": _NO_SCRIPT_CSP}
        return HTMLResponse(_home(title, dashboard), headers=headers)

    @router.get("/docs", include_in_schema=False)
    async def swagger() -> HTMLResponse:
        return HTMLResponse(docs, headers={**_COMMON, "Content-Security-Policy": _docs_csp(docs)})

    @router.get("/docs/oauth2-redirect", include_in_schema=False)
    async def oauth2_redirect() -> HTMLResponse:
        page = get_swagger_ui_oauth2_redirect_html()
        body = bytes(page.body).decode()
        return HTMLResponse(body, headers={**_COMMON, "Content-Security-Policy": _docs_csp(body)})

    # Read once: one immutable copy (1.7 MB) that every answer shares, so a client that asks
    # for it and never reads costs a reference, not a fresh 1.5 MB read and buffer.
    assets = {name: (_ASSET_DIR / name).read_bytes() for name in DOCS_ASSETS}

    @router.get("/docs/assets/{name}", include_in_schema=False)
    async def asset(name: str) -> Response:
        media = DOCS_ASSETS.get(name)
        if media is None:
            raise ProblemError(404, "not_found", "No such asset.")
        return Response(
            assets[name],
            media_type=media,
            headers={"Cache-Control": "public, max-age=86400", **_COMMON},
        )

    return router
