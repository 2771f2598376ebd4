"""The dashboard's pages: plain server-rendered HTML with the charts inlined as SVG.

No script at all (the page works with a CSP of ``script-src 'none'``): filters are a GET form,
drill-down is a link per tool. The data of a view comes from ``overview_answers`` /
``tool_answers`` (one call on the database thread); the HTML from the ``*_page`` functions.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

import duckdb

from analysis._charts import chart_svg
from analysis._filters import FilterError, Filters, Period
from analysis._questions import QUESTIONS, Answer, Question
from analysis._registry import dashboard_questions
from analysis._released import ask_released, last_released_day, released_versions
from analysis._rows import Row, TopRow
from analysis.report import table_html
from contract.schema import Platform, ToolName

__all__ = [
    "OVERVIEW",
    "TOOL_VIEW",
    "View",
    "login_page",
    "render_svgs",
    "overview_answers",
    "tool_answers",
    "view_page",
]

#: The questions of the first view, and of a tool's drill-down (the registry's placements).
OVERVIEW = dashboard_questions(tool_view=False)
TOOL_VIEW = dashboard_questions(tool_view=True)
_TABLE_ROWS = 10
#: Plot widths: a full-row card, and a half-row one.
WIDE_CHART = 980
HALF_CHART = 400


@dataclass(frozen=True, slots=True)
class View:
    """Everything one dashboard page shows (post-processing of released cells only)."""

    period: Period
    filters: Filters
    answers: tuple[Answer[Row], ...]
    #: Versions with a released cell in the period, for the filter.
    versions: tuple[str, ...]
    tool: ToolName | None = None


def _view(
    con: duckdb.DuckDBPyConnection,
    filters: Filters,
    questions: Sequence[Question],
    tool: ToolName | None,
) -> View:
    period = filters.resolve(last_released_day(con))
    answers: list[Answer[Row]] = []
    for q in questions:
        try:  # a question whose release cannot take a set filter is left out of the page
            answers.append(ask_released(con, q, filters, period=period, limit=15))
        except FilterError:
            continue
    return View(period, filters, tuple(answers), released_versions(con, period), tool)


def overview_answers(con: duckdb.DuckDBPyConnection, filters: Filters) -> View:
    """The data of the first view (run on the database thread)."""
    return _view(con, filters, OVERVIEW, None)


def tool_answers(con: duckdb.DuckDBPyConnection, tool: ToolName, filters: Filters) -> View:
    """The data of one tool's drill-down."""
    scoped = Filters(filters.start, filters.end, filters.platform, filters.version, tool)
    return _view(con, scoped, TOOL_VIEW, tool)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _head(title: str) -> str:
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<title>{_e(title)}</title><link rel="icon" href="data:,">'
        '<link rel="stylesheet" href="/dashboard/static/dashboard.css"></head>'
    )


def login_page(*, failed: bool = False, csrf: str = "") -> str:
    message = '<p class="error" role="alert">That token is not valid.</p>' if failed else ""
    hidden = f'<input type="hidden" name="csrf" value="{_e(csrf)}">' if csrf else ""
    return (
        _head("LMCP triage - sign in")
        + '<body class="login"><form method="post" action="/dashboard/login" class="card">'
        "<h1>LMCP triage</h1><p>Sign in with a team read token.</p>"
        f"{message}{hidden}"
        '<label for="token">Team token</label>'
        '<input id="token" name="token" type="password" autocomplete="current-password" '
        'required maxlength="512" autofocus>'
        '<button type="submit">Sign in</button></form></body></html>\n'
    )


def _select(name: str, label: str, options: Sequence[str], current: str | None) -> str:
    opts = ['<option value="">any</option>'] + [
        f'<option value="{_e(o)}"{" selected" if o == current else ""}>{_e(o)}</option>'
        for o in options
    ]
    return f'<label>{_e(label)}<select name="{name}" id="f-{name}">{"".join(opts)}</select></label>'


def _filter_form(view: View) -> str:
    f = view.filters
    action = "/dashboard" if view.tool is None else f"/dashboard/tool/{view.tool.value}"
    versions = list(view.versions)
    current_version = None if f.version is None else str(f.version)
    if current_version and current_version not in versions:
        versions.insert(0, current_version)
    fields = [
        f'<label>From<input type="date" name="start" id="f-start" '
        f'value="{view.period.start.isoformat()}"></label>',
        f'<label>To<input type="date" name="end" id="f-end" '
        f'value="{view.period.end.isoformat()}"></label>',
        _select("platform", "Platform", [p.value for p in Platform],
                None if f.platform is None else f.platform.value),
        _select("version", "Version", versions, current_version),
    ]  # fmt: skip
    if view.tool is None:
        tools = [t.value for t in ToolName]
        fields.append(_select("tool", "Tool", tools, None if f.tool is None else f.tool.value))
    return (
        f'<form method="get" action="{_e(action)}" class="filters" id="filters">'
        + "".join(fields)
        + '<button type="submit" id="apply">Apply</button>'
        + f'<a class="reset" href="{_e(action)}">Reset</a></form>'
    )


def _query(view: View) -> str:
    keep = view.filters.as_strings()
    keep.pop("tool", None)
    return ("?" + urlencode(keep)) if keep else ""


def _tool_links(answer: Answer[Row], query: str) -> str:
    """The answer's table with each tool name linked to its drill-down."""

    def href(tool: str) -> str | None:
        return f"/dashboard/tool/{tool}{query}" if tool in ToolName.__members__ else None

    return table_html(answer, _TABLE_ROWS, tool_href=href)


def _kpis(view: View) -> str:
    by_q = {a.question: a for a in view.answers}
    tiles: list[tuple[str, str]] = []
    trends = by_q.get(Question.trends)
    if trends is not None:
        total = sum(r.n for r in trends.rows if getattr(r, "series", "") == "all")
        spikes = sum(1 for r in trends.rows if getattr(r, "spike", False))
        tiles += [("signals released", f"{total:,}"), ("spike days", str(spikes))]
    top = by_q.get(Question.top)
    if top is not None and top.rows:
        first = top.rows[0]
        assert isinstance(first, TopRow)
        tiles.append(("top friction", f"{first.tool} \u00b7 {first.error_class}"))
    reg = by_q.get(Question.regressions)
    if reg is not None:
        tiles.append(("regressions", str(len(reg.rows))))
    return (
        '<div class="kpis">'
        + "".join(
            f'<div class="kpi"><span>{_e(v)}</span><small>{_e(label)}</small></div>'
            for label, v in tiles
        )
        + "</div>"
    )


def _card(answer: Answer[Row], svg: str | None, query: str, title: str | None = None) -> str:
    spec = QUESTIONS[answer.question]
    name = answer.question.value
    chart = (
        f'<div class="chart" id="chart-{name}">{svg}</div>'
        if svg is not None
        else f'<p class="empty">{_e(answer.empty_text)}</p>'
    )
    table = _tool_links(answer, query) if answer.rows else ""
    wide = " wide" if spec.placement.wide else ""
    opened = " open" if spec.placement.opened else ""
    return (
        f'<section class="card{wide}" id="q-{name}"><h2>{_e(title or spec.title)}</h2>'
        f'<p class="summary">{_e(spec.summary)}</p>{chart}'
        f"<details{opened}><summary>table</summary>{table}</details></section>"
    )


def view_page(view: View, svgs: Sequence[str | None]) -> str:
    """The HTML of an overview or drill-down page; ``svgs`` match ``view.answers``."""
    query = _query(view)
    if view.tool is None:
        title = "LMCP friction triage"
        crumbs = ""
    else:
        title = f"Tool: {view.tool.value}"
        crumbs = f'<a href="/dashboard{_e(query)}" id="back">\u2190 overview</a>'
    described = (
        f"{view.period.start.isoformat()} to {view.period.end.isoformat()} \u00b7 "
        "differentially private daily releases: rare groups are not shown"
    )
    tool_view = view.tool is not None
    cards = "".join(
        _card(a, svg, query, a.question.spec.placement.tool_title if tool_view else None)
        for a, svg in zip(view.answers, svgs, strict=True)
    )
    return (
        _head(title)
        + "<body><header><div><h1>"
        + _e(title)
        + f"</h1><p>{_e(described)}</p></div>{crumbs}"
        + '<form method="post" action="/dashboard/logout"><button class="link" type="submit">'
        + "Sign out</button></form></header>"
        + _filter_form(view)
        + _kpis(view)
        + f'<main class="grid">{cards}</main></body></html>\n'
    )


def render_svgs(view: View) -> list[str | None]:
    """Every chart of a view (CPU work: call it off the event loop)."""
    return [
        chart_svg(a, width=WIDE_CHART if a.question.spec.placement.wide else HALF_CHART)
        for a in view.answers
    ]
