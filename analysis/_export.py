"""The dashboard's downloads: one panel's released figures as CSV or JSON.

``analysis.web`` serves them at ``GET /dashboard/export/{question}.csv`` and ``.json`` behind
the dashboard's session, with the page's filters; the figures are the panel's
(``analysis._dashboard.panel_answer``: released cells only, the page's period and row limit).

- JSON is the document ``GET /v1/triage/{question}`` answers for the same filters and limit
  (``Answer.to_json()`` plus ``released_through``).
- CSV is ``analysis._csv.write_csv`` (the CLI's CSV, with RFC 4180's CRLF): a header of
  every field, ``n`` and its ``moe`` (a share and its ``share_moe``) as separate columns, the
  rows in the table's order.
"""

from __future__ import annotations

import io
import json
from typing import Any

from fastapi.responses import Response

from analysis._csv import write_csv
from analysis._dashboard import OVERVIEW, TOOL_VIEW
from analysis._questions import Answer, Question
from analysis._rows import Row
from analysis.report import table_rows
from service.errors import ProblemError

__all__ = ["FORMATS", "export_response", "export_target"]

#: The download formats, by the name's suffix, with their media types.
FORMATS = {"csv": "text/csv; charset=utf-8", "json": "application/json"}
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


def export_response(
    answer: Answer[Row], released_through: str | None, fmt: str, headers: dict[str, str]
) -> Response:
    """The file of ``answer`` in ``fmt``: an attachment named after the question and period."""
    if fmt == "json":
        doc: dict[str, Any] = answer.to_json()
        doc["released_through"] = released_through
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
