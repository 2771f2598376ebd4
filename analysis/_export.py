"""The dashboard's downloads: one panel's released figures as CSV or JSON, behind the
dashboard's session, with the page's filters (``Downloads.add_routes``):

- ``GET /dashboard/export/{question}.csv`` / ``.json``: a question's panel
  (``analysis._dashboard.panel_answer``: released cells only, the page's period and row limit);
- ``GET /dashboard/tool/{tool}/export/trend.csv`` / ``.json``: a tool's weekly trend;
- ``GET /dashboard/friction/{tool}/{error_class}/{friction_type}/export/{panel}.csv`` /
  ``.json``: a friction's own panels (``analysis._friction_page.friction_export``).

Filters a panel cannot take answer 422 with the sentence its page shows, never an empty file;
days no release covers answer 404 (``not_covered``) with the sentence saying which days the
releases do cover.

- JSON is the document ``GET /v1/triage/{question}`` answers for the same filters and limit
  (``Answer.to_json()``: the covered days, the asked ones, the comparison, what the releases
  cover).
- CSV is ``analysis._csv.write_csv`` (the CLI's CSV, with RFC 4180's CRLF): a header of
  every field, ``n`` and its ``moe`` (a share and its ``share_moe``) as separate columns, the
  rows in the table's order.
"""

from __future__ import annotations

import io
import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from analysis._csv import write_csv
from analysis._dashboard import OVERVIEW, TOOL_VIEW, View, filter_message, panel_answer
from analysis._dashboard import tool_answers as tool_view
from analysis._filters import FilterError, Filters, checked_filters
from analysis._friction import PANELS, FrictionKey
from analysis._friction_page import FrictionView, friction_export, friction_view
from analysis._panels import FORMATS, WEEKLY_SUMMARY, WEEKLY_TITLE, panel_body
from analysis._period import NOT_COVERED, NotCovered, coverage_json
from analysis._prewarm import ViewCache
from analysis._questions import Answer, Question
from analysis._rows import Row, WeekRow
from analysis._signin import SignIn
from analysis.report import empty_text, sentence, table_rows
from contract.schema import ToolName
from service.db import Database
from service.errors import ProblemError

__all__ = [
    "DAY_KEYS",
    "TOOL_KEYS",
    "Downloads",
    "export_response",
    "export_target",
    "not_covered_problem",
]

#: The filters of a friction's page and downloads (its cube is keyed by the friction).
DAY_KEYS = frozenset({"start", "end"})
#: The filters of a tool's page (its tool is in the path).
TOOL_KEYS = frozenset({"start", "end", "platform", "version"})
#: A panel of a dashboard page: the questions there is an export of.
_PANELS = frozenset(OVERVIEW) | frozenset(TOOL_VIEW)


def export_target(name: str) -> tuple[Question, str]:
    """``top.csv`` -> (the panel's question, the format); a 404 problem for anything else."""
    stem, _, fmt = name.rpartition(".")
    try:
        question = Question(stem)
    except ValueError:
        question = None
    if question is None or question not in _PANELS or fmt not in FORMATS:
        raise ProblemError(404, "unknown_export", "No dashboard export by that name.")
    return question, fmt


def not_covered_problem(message: str) -> ProblemError:
    """The answer of a download (or an API request) over days no release covers."""
    return ProblemError(404, NOT_COVERED, sentence(message))


def export_response(answer: Answer[Row], fmt: str, headers: dict[str, str]) -> Response:
    """The file of ``answer`` in ``fmt``: an attachment named after the question and period."""
    if fmt == "json":
        doc: dict[str, Any] = answer.to_json()
        body = json.dumps(doc, indent=2) + "\n"
    else:
        out = io.StringIO()
        write_csv(answer, out, table_rows(answer), newline="\r\n")  # RFC 4180
        body = out.getvalue()
    period = answer.period
    filename = f"lmcp-{answer.question.value}-{period.start.isoformat()}-{period.end.isoformat()}"
    # The name holds an enum value and two ISO days only: nothing to quote or escape.
    disposition = {"Content-Disposition": f'attachment; filename="{filename}.{fmt}"'}
    return Response(body, media_type=FORMATS[fmt], headers={**headers, **disposition})


def _attachment(body: str, fmt: str, filename: str, headers: dict[str, str]) -> Response:
    # The name holds enum values and ISO days only: nothing to quote or escape.
    disposition = {"Content-Disposition": f'attachment; filename="{filename}"'}
    return Response(body, media_type=FORMATS[fmt], headers={**headers, **disposition})


def _split(name: str, panels: Collection[str]) -> tuple[str, str]:
    panel, _, fmt = name.rpartition(".")
    if panel not in panels or fmt not in FORMATS:
        raise ProblemError(404, "unknown_export", "No dashboard export by that name.")
    return panel, fmt


@dataclass(frozen=True, slots=True)
class Downloads:
    """The download routes, reading through the pages' caches (a download is the page's
    figures, computed once)."""

    db: Database
    signin: SignIn
    pages: ViewCache[View]
    frictions: ViewCache[FrictionView]
    headers: dict[str, str]

    def _filters(self, request: Request, allowed: frozenset[str] | None = None) -> Filters:
        try:  # the page's filters, refused with the sentence the page would show
            params = dict(request.query_params)
            return Filters.parse(params) if allowed is None else checked_filters(params, allowed)
        except FilterError as exc:
            raise ProblemError(422, "invalid_filter", filter_message(exc)) from None

    def add_routes(self, router: APIRouter) -> None:
        db, signin, headers = self.db, self.signin, self.headers

        @router.get("/dashboard/export/{name}", include_in_schema=False)
        async def export(name: str, request: Request) -> Response:
            if not signin.signed_in(request):
                return signin.to_login(request)
            question, fmt = export_target(name)
            filters = self._filters(request)

            try:
                answer = await db.run(lambda con: panel_answer(con, question, filters))
            except FilterError as exc:
                raise ProblemError(422, "invalid_filter", filter_message(exc)) from None
            except NotCovered as exc:
                raise not_covered_problem(str(exc)) from None
            if answer.unavailable is not None:  # the panel's own message, never an empty file
                raise ProblemError(422, "invalid_filter", empty_text(answer))
            return export_response(answer, fmt, headers)

        @router.get("/dashboard/tool/{tool}/export/{name}", include_in_schema=False)
        async def tool_download(tool: str, name: str, request: Request) -> Response:
            if not signin.signed_in(request):
                return signin.to_login(request)
            if tool not in ToolName.__members__:
                raise ProblemError(404, "unknown_tool", "No catalogue tool by that name.")
            _, fmt = _split(name, ("trend",))
            which = ToolName(tool)
            filters = self._filters(request, TOOL_KEYS)
            view = await db.run(lambda con: self.pages.get(
                con, ("tool", which, filters), lambda c: tool_view(c, which, filters)))  # fmt: skip
            if view.error is not None:  # never another period's file under this one's name
                raise ProblemError(422, "invalid_filter", view.error)
            if view.coverage is None:
                raise not_covered_problem(view.uncovered or "")
            if view.weekly_unavailable is not None:
                detail = f"Not available with these filters: {view.weekly_unavailable}."
                raise ProblemError(422, "invalid_filter", detail)
            period = view.coverage.period
            doc = {"tool": which.value, "panel": "trend", "title": WEEKLY_TITLE,
                   "summary": WEEKLY_SUMMARY, **coverage_json(view.coverage),
                   "source": "released", "filters": filters.as_strings()}  # fmt: skip
            body = panel_body(view.weekly, WeekRow, fmt, doc)
            filename = f"lmcp-tool-{which.value}-trend-{period.start}-{period.end}.{fmt}"
            return _attachment(body, fmt, filename, headers)

        @router.get(
            "/dashboard/friction/{tool}/{error_class}/{friction_type}/export/{name}",
            include_in_schema=False,
        )
        async def friction_download(
            tool: str, error_class: str, friction_type: str, name: str, request: Request
        ) -> Response:
            if not signin.signed_in(request):
                return signin.to_login(request)
            key = FrictionKey.parse(tool, error_class, friction_type)
            if key is None:
                raise ProblemError(404, "unknown_friction", "No friction by that name.")
            panel, fmt = _split(name, PANELS)
            filters = self._filters(request, DAY_KEYS)
            view = await db.run(lambda con: self.frictions.get(
                con, (key, filters), lambda c: friction_view(c, key, filters)))  # fmt: skip
            if view.error is not None:  # never another period's file under this one's name
                raise ProblemError(422, "invalid_filter", view.error)
            if view.figures is None:
                raise not_covered_problem(view.uncovered or "")
            body, filename = friction_export(view, panel, fmt)
            return _attachment(body, fmt, filename, headers)
