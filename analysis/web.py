"""The triage routes the collector mounts (``build_router(settings, db)``).

- ``GET /v1/triage`` lists the released questions and the privacy parameters;
  ``GET /v1/triage/{question}`` answers one as JSON. Both need a team bearer token
  (``service.auth.require_bearer`` over ``read_tokens``). Query parameters: ``start``,
  ``end``, ``platform``, ``version``, ``tool`` (filters a question's release can take) and
  ``limit``.
- Every figure is post-processing of the differentially private releases the collector
  stores (``analysis._released``); readers never release (the closed-period job does, once).
  No raw row and no exact count is read.
- ``/dashboard``: a login form (``analysis._signin``) sets an HttpOnly, SameSite=Strict
  session cookie (``analysis._session``); then the overview (``GET /dashboard``), one page
  per tool (``GET /dashboard/tool/{tool}``), with the same filters as query parameters, and
  one page per friction (``GET /dashboard/friction/{tool}/{error_class}/{friction_type}``,
  ``start`` and ``end`` only: ``analysis._friction_page``). A page opened without a session
  sends the browser to the form with the page as ``next``, where a sign-in lands. Assets
  come from ``analysis/static`` only; pages carry a strict CSP with no script at all.
- Request bodies: only the sign-in form takes one (``BODIES``, handed to the collector's
  body guard with the router).
- ``GET /dashboard/export/{question}.csv`` / ``.json``: a panel's figures as a file, behind the
  same session, with the page's filters (``analysis._export``); filters the panel cannot take
  answer 422 with the page's sentence, never an empty file. A friction's panels download at
  ``.../friction/{tool}/{error_class}/{friction_type}/export/{panel}.csv`` / ``.json``.

Errors are RFC 9457 problems (``ProblemError``) naming the parameter and the rule, never the
value. Every query runs on the collector's database thread (``Database.run``); charts render
in a worker thread.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, suppress
from importlib import resources
from types import MappingProxyType
from typing import Any, TypeVar
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from analysis._cells import CUBE_OF, NotReleased, last_released_day
from analysis._charts import warm_up
from analysis._dashboard import (
    View,
    answer_svg,
    filter_error_view,
    overview_answers,
    page_rest,
    page_title,
    render_svgs,
    tool_answers,
)
from analysis._export import DAY_KEYS, Downloads, not_covered_problem
from analysis._filters import FilterError, Filters, checked_filters
from analysis._friction import FrictionKey
from analysis._friction_page import (
    FrictionView,
    friction_error_view,
    friction_page_rest,
    friction_svgs,
    friction_title,
    friction_view,
)
from analysis._html import not_found_page, page_failed, page_start
from analysis._period import NotCovered
from analysis._prewarm import ViewCache, prewarm
from analysis._questions import DEFAULT_LIMIT, QUESTIONS, Answer, Question
from analysis._released import ask_released
from analysis._rows import Row
from analysis._signin import LOGIN, LOGIN_BODY_BYTES, SignIn
from collector.releases.published import privacy_json
from collector.releases.store import params_from_settings
from collector.settings import CollectorSettings
from contract.schema import ToolName
from service.auth import require_bearer
from service.db import Database
from service.errors import ProblemError

__all__ = ["BODIES", "MAX_LIMIT", "build_router"]

_FILTER_KEYS = frozenset({"start", "end", "platform", "version", "tool"})
_V = TypeVar("_V")
_STATIC = {"dashboard.css": "text/css; charset=utf-8"}
_CSP = (
    "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
_PAGE_HEADERS = {
    "Content-Security-Policy": _CSP,  # nosniff: on every response (lmcp.apps.uvicorn_config)
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
}
MAX_LIMIT = 1000
#: The request bodies these routes take (``service.bodies.BodyGuard``): the sign-in form's
#: only; every other route, sign-out included, takes none.
BODIES = MappingProxyType({("POST", LOGIN): LOGIN_BODY_BYTES})
logger = logging.getLogger(__name__)


def _filters(params: Mapping[str, str], allowed: frozenset[str]) -> Filters:
    unknown = [key for key in params if key not in allowed]
    if unknown:
        raise ProblemError(
            422, "invalid_parameter", "A query parameter is not one this route takes."
        )
    try:
        return Filters.parse({key: params[key] for key in params if key in _FILTER_KEYS})
    except FilterError as exc:
        raise ProblemError(422, "invalid_filter", str(exc)) from None


def _page_filters(
    params: Mapping[str, str], allowed: frozenset[str]
) -> tuple[Filters, FilterError | None]:
    """A page's filters; unusable ones become the defaults plus the error the page shows."""
    try:
        return checked_filters(params, allowed), None
    except FilterError as exc:
        return Filters(), exc


def _int_param(params: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    # ASCII only: str.isdigit() accepts "²", which int() refuses.
    if not (raw.isascii() and raw.isdigit()) or not low <= int(raw) <= high:
        raise ProblemError(
            422, "invalid_parameter", f"'{name}' must be an integer from {low} to {high}."
        )
    return int(raw)


def _released_through(con: Any) -> str | None:
    """The last day of the newest released period (None before the first release)."""
    day = last_released_day(con)
    return None if day is None else day.isoformat()


def build_router(settings: CollectorSettings, db: Database) -> APIRouter:
    """The triage API and the dashboard, reading through ``db``."""
    warm_up()  # the dashboard's first view must not wait for the chart engine to start
    pages: ViewCache[View] = ViewCache()
    frictions: ViewCache[FrictionView] = ViewCache()
    # Each chart is drawn as soon as its answer is derived, while the database thread derives
    # the next: the page then finds it drawn (analysis._charts: one drawing per spec).
    predraw = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dashboard-charts")

    def draw_early(answer: Answer[Row]) -> None:
        predraw.submit(answer_svg, answer)

    def first_view(con: Any) -> View:
        default = Filters()
        return pages.get(con, ("overview", default), lambda c: overview_answers(c, default))

    @asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        # The first view is computed and drawn at start and after each release, off any
        # request (analysis._prewarm).
        task = asyncio.create_task(prewarm(db, first_view, render_svgs))
        try:
            yield
        finally:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
            predraw.shutdown(wait=False, cancel_futures=True)

    router = APIRouter(lifespan=lifespan)
    require_team_token = require_bearer(settings.read_tokens)
    params = params_from_settings(settings)

    # Readers never release: the closed-period job is the one writer of releases.
    # -- JSON API -----------------------------------------------------------------------
    @router.get(
        "/v1/triage",
        tags=["triage"],
        summary="The triage questions",
        dependencies=[Depends(require_team_token)],
    )
    async def list_questions() -> dict[str, Any]:
        return {
            "privacy": privacy_json(params),
            "released_through": await db.run(_released_through),
            "questions": [
                {"name": q.value, "title": s.title, "summary": s.summary, "cube": CUBE_OF[q]}
                for q, s in QUESTIONS.items()
                if q in CUBE_OF
            ],
        }

    @router.get(
        "/v1/triage/{question}",
        tags=["triage"],
        summary="Answer one triage question from the released cells",
        dependencies=[Depends(require_team_token)],
    )
    async def triage(question: str, request: Request) -> dict[str, Any]:
        try:
            q = Question(question)
        except ValueError:
            raise ProblemError(
                404, "unknown_question", "No triage question by that name."
            ) from None
        query = dict(request.query_params)
        filters = _filters(query, _FILTER_KEYS | {"limit"})
        limit = _int_param(query, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)

        try:
            return await db.run(lambda con: ask_released(con, q, filters, limit=limit).to_json())
        except NotCovered as exc:  # the detail says which days the releases do cover
            raise not_covered_problem(str(exc)) from None
        except NotReleased:
            raise ProblemError(
                404, "not_released", "That question has no release for the team role."
            ) from None
        except FilterError as exc:
            raise ProblemError(422, "invalid_filter", str(exc)) from None

    # -- dashboard ----------------------------------------------------------------------
    signin = SignIn(settings.read_tokens, _PAGE_HEADERS)
    signin.add_routes(router)

    def render(
        title: str,
        compute: Callable[[Any], _V],
        draw: Callable[[_V], list[str | None]],
        rest: Callable[[_V, list[str | None]], str],
        status: int,
    ) -> Response:
        """Stream the page: its head and a loading notice at once, the figures when ready
        (reading the released cells and drawing the charts of a large release takes a moment;
        no page ever computes a release)."""

        async def body() -> AsyncIterator[str]:
            yield page_start(title)
            try:
                view = await db.run(compute)
                svgs = await run_in_threadpool(draw, view)
            except Exception as exc_:  # the status is sent: end the page with a message
                logger.error("unhandled %s in a dashboard page", type(exc_).__name__)
                yield page_failed()
                return
            yield rest(view, svgs)

        return StreamingResponse(
            body(), status_code=status, media_type="text/html; charset=utf-8",
            headers=_PAGE_HEADERS,
        )  # fmt: skip

    def view_page(
        compute: Callable[[Any], View], tool: ToolName | None, exc: FilterError | None,
        params: Mapping[str, str],
    ) -> Response:  # fmt: skip
        def computed(con: Any) -> View:
            view = compute(con)
            return view if exc is None else filter_error_view(view, exc, params)

        # An unusable filter is the person's to fix: the page says so above its form.
        status = 422 if exc is not None else 200
        return render(page_title(tool), computed, render_svgs, page_rest, status)

    @router.get("/dashboard", include_in_schema=False)
    async def overview(request: Request) -> Response:
        if not signin.signed_in(request):
            return signin.to_login(request)
        params = dict(request.query_params)
        filters, exc = _page_filters(params, _FILTER_KEYS)
        key = ("overview", filters)
        return view_page(
            lambda con: pages.get(con, key, lambda c: overview_answers(c, filters, draw_early)),
            None, exc, params,
        )  # fmt: skip

    @router.get("/dashboard/tool", include_in_schema=False)
    async def pick_tool(request: Request) -> Response:
        """The drill-down's tool picker (a GET form): redirect to the chosen tool's page, or to
        the overview for "any", keeping the other filters."""
        if not signin.signed_in(request):
            return signin.to_login(request)
        params = dict(request.query_params)
        tool = params.pop("tool", "")
        keep = {k: v for k, v in params.items() if k in _FILTER_KEYS and v}
        query = ("?" + urlencode(keep)) if keep else ""
        if tool in ToolName.__members__:
            target = f"/dashboard/tool/{tool}{query}"
        else:
            target = f"/dashboard{query}"
        return RedirectResponse(target, status_code=303, headers=_PAGE_HEADERS)

    @router.get("/dashboard/tool/{tool}", include_in_schema=False)
    async def drill_down(tool: str, request: Request) -> Response:
        if not signin.signed_in(request):
            return signin.to_login(request)
        try:
            name = ToolName(tool)
        except ValueError:
            return _not_found("No tool of the catalogue has that name.", None)
        params = dict(request.query_params)
        filters, exc = _page_filters(params, _FILTER_KEYS - {"tool"})
        key = ("tool", name, filters)
        return view_page(
            lambda con: pages.get(con, key, lambda c: tool_answers(c, name, filters, draw_early)),
            name, exc, params,
        )  # fmt: skip

    @router.get("/dashboard/friction/{tool}/{error_class}/{friction_type}", include_in_schema=False)
    async def friction(
        tool: str, error_class: str, friction_type: str, request: Request
    ) -> Response:
        if not signin.signed_in(request):
            return signin.to_login(request)
        key = FrictionKey.parse(tool, error_class, friction_type)
        if key is None:
            known = tool if tool in ToolName.__members__ else None
            return _not_found(
                "No friction by that name: its tool, error class or friction type is not one "
                "the catalogue knows.", known,
            )  # fmt: skip
        params = dict(request.query_params)
        filters, exc = _page_filters(params, DAY_KEYS)

        def compute(con: Any) -> FrictionView:
            view = frictions.get(con, (key, filters), lambda c: friction_view(c, key, filters))
            return view if exc is None else friction_error_view(view, exc, params)

        status = 422 if exc is not None else 200
        return render(friction_title(key), compute, friction_svgs, friction_page_rest, status)

    Downloads(db, signin, pages, frictions, _PAGE_HEADERS).add_routes(router)

    @router.get("/dashboard/static/{name}", include_in_schema=False)
    async def static(name: str) -> Response:
        media = _STATIC.get(name)
        if media is None:
            raise ProblemError(404, "not_found", "No such asset.")
        body = resources.files("analysis").joinpath("static", name).read_bytes()
        return Response(
            body,
            media_type=media,
            headers={"Cache-Control": "public, max-age=3600"},
        )

    @router.get("/dashboard/{rest:path}", include_in_schema=False)
    async def no_such_page(rest: str, request: Request) -> Response:
        """Any other dashboard link (registered last): a page saying so, with a way back."""
        if not signin.signed_in(request):
            return signin.to_login(request)
        return _not_found("There is no dashboard page at that address.", None)

    return router


def _not_found(message: str, tool: str | None) -> HTMLResponse:
    """A mistyped dashboard link: an HTML page in the dashboard's frame, with the ways back
    (the overview, and the tool's page when the link named a known tool); 404. The JSON API
    keeps its problem documents."""
    links = [("\u2190 overview", "/dashboard")]
    if tool is not None:
        links.append((f"\u2190 tool: {tool}", f"/dashboard/tool/{tool}"))
    return HTMLResponse(not_found_page(message, links), status_code=404, headers=_PAGE_HEADERS)
