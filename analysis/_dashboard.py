"""The dashboard's pages: plain server-rendered HTML with the charts inlined as SVG.

No script at all (the page works with a CSP of ``script-src 'none'``): filters are a GET form,
drill-down is a link per tool. The data of a view comes from ``overview_answers`` /
``tool_answers`` (one call on the database thread); the HTML from the ``*_page`` functions.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from urllib.parse import urlencode

import duckdb

from analysis._cells import (
    MemoSource,
    ReleasedSource,
    coverage_of,
    released_span,
    released_versions,
)
from analysis._charts import chart_svg, spec_svg
from analysis._filters import DEFAULT_DAYS, FILTER_LABELS, FilterError, Filters, Period, form_day
from analysis._friction import tool_trend
from analysis._html import download_links, esc, kpis, not_covered_main, page_start
from analysis._panels import scaled, tool_weekly_card, weekly_spec, weekly_unavailable
from analysis._period import Coverage, NotCovered, Released, days_text, resolve
from analysis._questions import QUESTIONS, Answer, Question
from analysis._registry import dashboard_questions
from analysis._released import ask_released, derive, unavailable
from analysis._rows import Row, TopRow, TrendRow, WeekRow
from analysis.report import empty_text, footnotes, sentence, table_html
from contract.schema import Platform, ToolName

__all__ = [
    "LATEST",
    "OVERVIEW",
    "TOOL_VIEW",
    "Headline",
    "OnAnswer",
    "View",
    "answer_svg",
    "card",
    "export_href",
    "filter_error_view",
    "filter_message",
    "headline",
    "friction_href",
    "page_rest",
    "page_title",
    "released_text",
    "panel_answer",
    "render_svgs",
    "overview_answers",
    "tool_answers",
    "view_page",
]

#: The questions of the first view, and of a tool's drill-down (the registry's placements).
OVERVIEW = dashboard_questions(tool_view=False)
TOOL_VIEW = dashboard_questions(tool_view=True)
#: Rows a table shows at first; the rest (up to ``_PAGE_ROWS``) open under "show more".
_TABLE_ROWS = 10
_PAGE_ROWS = 100
#: A limit no answer reaches: the regressions tile counts every regression.
_ALL = 1 << 62
#: The link of a page no release covers, to the default period.
LATEST = f"Show the last {DEFAULT_DAYS // 7} released weeks"
#: Plot widths: a full-row card, and a half-row one.
WIDE_CHART = 980
HALF_CHART = 400


@dataclass(frozen=True, slots=True)
class Headline:
    """The tiles above the charts: true aggregates over the view's released cells."""

    signals: int | None = None
    #: Distinct days on which any trend series spiked.
    spike_days: int | None = None
    #: The first row of ``top``: (tool, error class, friction type).
    top: tuple[str, str, str] | None = None
    #: Every regression in the period (not only the rows the page lists).
    regressions: int | None = None


@dataclass(frozen=True, slots=True)
class View:
    """Everything one dashboard page shows (post-processing of released cells only)."""

    #: The days the page covers and why they differ from the asked ones (``analysis._period``);
    #: None when no release covers the asked days (``uncovered`` says so).
    coverage: Coverage | None
    filters: Filters
    answers: tuple[Answer[Row], ...]
    #: Versions with a released cell in the period, for the filter.
    versions: tuple[str, ...]
    tool: ToolName | None = None
    headline: Headline = field(default_factory=Headline)
    #: A message for the person when the filters they chose could not be used.
    error: str | None = None
    #: What the form shows when ``error`` is set: the values as they were submitted.
    submitted: Mapping[str, str] = field(default_factory=dict)
    #: What the releases cover (None before the first release).
    released: Released | None = None
    #: A tool's page: the tool's weekly trend (``analysis._friction.tool_trend``), or why
    #: its release cannot take the filters.
    weekly: tuple[WeekRow, ...] = ()
    weekly_unavailable: str | None = None
    #: Why nothing is shown: no release covers the asked days (``NotCovered``'s sentence).
    uncovered: str | None = None

    @property
    def period(self) -> Period | None:
        """The covered days (None when ``uncovered``)."""
        return None if self.coverage is None else self.coverage.period

    @property
    def released_through(self) -> dt.date | None:
        return None if self.released is None else self.released.through


def headline(answers: Sequence[Answer[Row]], regressions: int | None) -> Headline:
    """The tiles of a view from its answers (and the full regression count)."""
    by_q = {a.question: a for a in answers}
    out = Headline(regressions=regressions if Question.regressions in by_q else None)
    trends = by_q.get(Question.trends)
    if trends is not None:
        rows = [r for r in trends.rows if isinstance(r, TrendRow)]
        total = sum(r.n for r in rows if r.series == "all")
        spikes = len({r.day for r in rows if r.spike})
        out = Headline(total, spikes, out.top, out.regressions)
    top = by_q.get(Question.top)
    if top is not None and top.rows and isinstance(top.rows[0], TopRow):
        first = top.rows[0]
        key = (first.tool, first.error_class, first.friction_type)
        out = Headline(out.signals, out.spike_days, key, out.regressions)
    return out


#: Called with each answer of a view as soon as it is derived (the web layer starts drawing
#: its chart then, while the next answer is derived).
OnAnswer = Callable[[Answer[Row]], object]


def _view(
    con: duckdb.DuckDBPyConnection,
    filters: Filters,
    questions: Sequence[Question],
    tool: ToolName | None,
    on_answer: OnAnswer | None = None,
) -> View:
    released = released_span(con)
    try:  # the page's days, resolved once for all its panels
        cov = resolve(filters, released)
    except NotCovered as exc:  # the page says which days the releases do cover
        return View(None, filters, (), (), tool, released=released, uncovered=sentence(str(exc)))
    answers: list[Answer[Row]] = []
    regressions: int | None = None
    src = MemoSource(ReleasedSource(con))  # each cube's cells read once for the whole page
    for q in questions:
        try:  # a question whose release cannot take a set filter says so on the page
            if q is Question.regressions:
                whole = derive(src, q, filters, cov, _ALL)
                regressions = len(whole.rows)
                answers.append(replace(whole, rows=whole.rows[:_PAGE_ROWS]))
            else:
                answers.append(derive(src, q, filters, cov, _PAGE_ROWS))
        except FilterError as exc:
            answers.append(unavailable(q, cov, filters, exc, source="released"))
        if on_answer is not None:
            on_answer(answers[-1])
    weekly: tuple[WeekRow, ...] = ()
    cannot = weekly_unavailable(filters)
    if tool is not None and cannot is None:
        weekly = tool_trend(src, tool, cov)
    return View(cov, filters, tuple(answers), released_versions(src, cov.period), tool,
                released=released, headline=headline(answers, regressions), weekly=weekly,
                weekly_unavailable=cannot if tool is not None else None)  # fmt: skip


def panel_answer(
    con: duckdb.DuckDBPyConnection, question: Question, filters: Filters
) -> Answer[Row]:
    """One panel's figures exactly as its page shows them (so also its exports): released cells
    only, the page's days and row limit. A filter the question's release cannot take gives
    the answer saying so; ``NotCovered`` when no release covers the filters' days."""
    cov = coverage_of(con, filters)
    try:
        return ask_released(con, question, filters, coverage=cov, limit=_PAGE_ROWS)
    except FilterError as exc:
        return unavailable(question, cov, filters, exc, source="released")


def released_text(released: Released | None) -> str:
    """What the releases cover, for a page's header."""
    if released is None:
        return "nothing released yet"
    return f"releases cover {days_text(released.period)}"


def filter_message(exc: FilterError) -> str:
    """A person's sentence for a filter error (names the field and the rule, not the value)."""
    rule = exc.rule.replace("'end'", "'To'").replace("'start'", "'From'")
    return f"'{FILTER_LABELS.get(exc.field, exc.field)}' {rule}."


def _message(exc: FilterError) -> str:
    return f"{filter_message(exc)} Showing the default filters instead."


def filter_error_view(view: View, exc: FilterError, submitted: Mapping[str, str]) -> View:
    """``view`` (of the default filters) with the person's error and submitted values."""
    return replace(view, error=_message(exc), submitted=dict(submitted))


def overview_answers(
    con: duckdb.DuckDBPyConnection, filters: Filters, on_answer: OnAnswer | None = None
) -> View:
    """The data of the first view (run on the database thread)."""
    return _view(con, filters, OVERVIEW, None, on_answer)


def tool_answers(
    con: duckdb.DuckDBPyConnection,
    tool: ToolName,
    filters: Filters,
    on_answer: OnAnswer | None = None,
) -> View:
    """The data of one tool's drill-down."""
    scoped = Filters(filters.start, filters.end, filters.platform, filters.version, tool)
    return _view(con, scoped, TOOL_VIEW, tool, on_answer)


def _select(name: str, label: str, options: Sequence[str], current: str | None) -> str:
    opts = ['<option value="">any</option>'] + [
        f'<option value="{esc(o)}"{" selected" if o == current else ""}>{esc(o)}</option>'
        for o in options
    ]
    select = f'<select name="{name}" id="f-{name}">{"".join(opts)}</select>'
    return f"<label>{esc(label)}{select}</label>"


def _filter_form(view: View) -> str:
    f = view.filters
    # The drill-down's tool picker submits to /dashboard/tool, which redirects to the tool's page.
    action = "/dashboard" if view.tool is None else "/dashboard/tool"
    versions = list(view.versions)
    current_version = None if f.version is None else str(f.version)
    if current_version and current_version not in versions:
        versions.insert(0, current_version)
    start, end = (form_day(view.submitted, name, _form_value(view, name))
                  for name in ("start", "end"))  # fmt: skip
    fields = [
        f'<label>From<input type="date" name="start" id="f-start" value="{esc(start)}"></label>',
        f'<label>To<input type="date" name="end" id="f-end" value="{esc(end)}"></label>',
        _select("platform", "Platform", [p.value for p in Platform],
                None if f.platform is None else f.platform.value),
        _select("version", "Version", versions, current_version),
    ]  # fmt: skip
    tools = [t.value for t in ToolName]
    current_tool = view.tool.value if view.tool is not None else None
    if current_tool is None and f.tool is not None:
        current_tool = f.tool.value
    label = "Tool" if view.tool is None else "Tool (any: the overview)"
    fields.append(_select("tool", label, tools, current_tool))
    reset = "/dashboard" if view.tool is None else f"/dashboard/tool/{view.tool.value}"
    return (
        f'<form method="get" action="{esc(action)}" class="filters" id="filters">'
        + "".join(fields)
        + '<button type="submit" id="apply">Apply</button>'
        + f'<a class="reset" href="{esc(reset)}">Reset</a></form>'
    )


def _form_value(view: View, name: str) -> str:
    """A date field's value: the asked day, its default filled in (the header says the covered
    days, and the note why they differ); as it was given when none is covered."""
    asked = view.filters if view.coverage is None else view.coverage.asked
    day = getattr(asked, name)
    return "" if day is None else day.isoformat()


def _query(view: View) -> str:
    keep = view.filters.as_strings()
    keep.pop("tool", None)
    return ("?" + urlencode(keep)) if keep else ""


def friction_href(key: tuple[str, str, str], filters: Filters) -> str:
    """A friction's own page (``analysis._friction``) over the same days as ``filters``."""
    days = {k: v for k, v in filters.as_strings().items() if k in ("start", "end")}
    return "/dashboard/friction/" + "/".join(key) + (("?" + urlencode(days)) if days else "")


def _tool_links(answer: Answer[Row], query: str) -> str:
    """The answer's table with each tool name linked to its drill-down, and each top friction's
    error class to the friction's own page."""

    def href(tool: str) -> str | None:
        return f"/dashboard/tool/{tool}{query}" if tool in ToolName.__members__ else None

    def friction(row: Row) -> str | None:
        if not isinstance(row, TopRow):
            return None
        return friction_href((row.tool, row.error_class, row.friction_type), answer.filters)

    return table_html(answer, _TABLE_ROWS, tool_href=href, friction_href=friction, expandable=True)


def _kpis(view: View) -> str:
    h = view.headline
    tiles: list[tuple[str, str, str, str | None]] = []
    days = "" if view.period is None else f" ({view.period.days} days)"
    if h.signals is not None and h.spike_days is not None:
        tiles += [("signals", f"signals released{days}", f"{h.signals:,}", None),
                  ("spikes", "spike days", f"{h.spike_days:,}", None)]  # fmt: skip
    if h.top is not None:
        label = f"{h.top[0]} \u00b7 {h.top[1]}"
        tiles.append(("top", "top friction", label, friction_href(h.top, view.filters)))
    if h.regressions is not None:
        tiles.append(("regressions", "regressions", f"{h.regressions:,}", None))
    return kpis(tiles)


def export_href(question: Question, fmt: str, filters: Filters) -> str:
    """The download of a panel's figures (``analysis.web``'s export route) for ``filters``."""
    keep = filters.as_strings()
    return f"/dashboard/export/{question.value}.{fmt}" + (("?" + urlencode(keep)) if keep else "")


def _exports(answer: Answer[Row]) -> str:
    """The panel's CSV and JSON links, with the view's filters; none when the panel has no
    answer for them (the export would only repeat the panel's message)."""
    if answer.unavailable is not None:
        return ""
    return download_links(
        {fmt: export_href(answer.question, fmt, answer.filters) for fmt in ("csv", "json")}
    )


def card(answer: Answer[Row], svg: str | None, query: str, title: str | None = None) -> str:
    """One panel of a question: its chart (or why there is none, in the words of the card's
    own title), its table with its footnotes (what a change compares), its downloads."""
    spec = QUESTIONS[answer.question]
    name = answer.question.value
    title = title or spec.title
    chart = (
        f'<div class="chart" id="chart-{name}">{svg}</div>'
        if svg is not None
        else f'<p class="empty">{esc(empty_text(answer, title))}</p>'
    )
    table = _tool_links(answer, query) if answer.rows else ""
    notes = "".join(f'<p class="note">{esc(n)}</p>' for n in footnotes(answer))
    wide = " wide" if spec.placement.wide else ""
    opened = " open" if spec.placement.opened else ""
    return (
        f'<section class="card{wide}" id="q-{name}"><h2>{esc(title)}</h2>'
        f'<p class="summary">{esc(spec.summary)}</p>{chart}{notes}'
        f"<details{opened}><summary>table</summary>{table}</details>{_exports(answer)}</section>"
    )


def page_title(tool: ToolName | None) -> str:
    return "LMCP friction triage" if tool is None else f"Tool: {tool.value}"


def _header(view: View) -> str:
    """The page's header: the covered days, where the figures come from, what is released."""
    title = page_title(view.tool)
    crumbs = "" if view.tool is None else (
        f'<a href="/dashboard{esc(_query(view))}" id="back">\u2190 overview</a>'
    )  # fmt: skip
    parts = [] if view.period is None else [f"{days_text(view.period)} ({view.period.days} days)"]
    parts += ["differentially private releases: each count \u00b1 its 95 % noise interval",
              released_text(view.released)]  # fmt: skip
    described = " \u00b7 ".join(parts)
    return (
        f'<header><div><h1>{esc(title)}</h1><p id="covers">{esc(described)}</p>'
        f"</div>{crumbs}"
        '<form method="post" action="/dashboard/logout"><button class="link" type="submit">'
        "Sign out</button></form></header>"
    )


def page_rest(view: View, svgs: Sequence[str | None]) -> str:
    """The rest of a page after ``page_start``; ``svgs`` match ``view.answers``."""
    query = _query(view)
    tool_view = view.tool is not None
    error = (
        f'<p class="error banner" role="alert" id="page-error">{esc(view.error)}</p>'
        if view.error
        else ""
    )
    note = view.coverage.note if view.coverage is not None else None
    noted = "" if note is None else f'<p class="note" id="period-note">{esc(sentence(note))}</p>'
    if view.uncovered is not None:  # say which days the releases do cover, and link them
        home = "/dashboard" if view.tool is None else f"/dashboard/tool/{view.tool.value}"
        latest = None if view.released is None else home
        rest = not_covered_main(view.uncovered, latest, LATEST)
        return _header(view) + error + _filter_form(view) + rest
    cards = [
        card(a, svg, query, a.question.spec.placement.tool_title if tool_view else None)
        for a, svg in zip(view.answers, svgs, strict=False)
    ]
    if view.tool is not None:  # its weekly trend, after its error classes
        weekly = svgs[len(view.answers)]
        cards.insert(1, tool_weekly_card(view.tool, view.filters, view.weekly,
                                         view.weekly_unavailable, weekly))  # fmt: skip
    return (
        _header(view)
        + error
        + _filter_form(view)
        + noted
        + _kpis(view)
        + f'<main class="grid">{"".join(cards)}</main></body></html>\n'
    )


def view_page(view: View, svgs: Sequence[str | None]) -> str:
    """The whole HTML of an overview or drill-down page."""
    return page_start(page_title(view.tool)) + page_rest(view, svgs)


def answer_svg(answer: Answer[Row]) -> str | None:
    """One panel's chart as the dashboard draws it (CPU work: off the event loop)."""
    return chart_svg(
        answer, width=WIDE_CHART if answer.question.spec.placement.wide else HALF_CHART
    )


def render_svgs(view: View) -> list[str | None]:
    """Every chart of a view, the answers' then a tool page's weekly trend (CPU work: call it
    off the event loop)."""
    out = [answer_svg(a) for a in view.answers]
    if view.tool is not None:
        out.append(spec_svg(scaled(weekly_spec(view.weekly), WIDE_CHART)) if view.weekly else None)
    return out
