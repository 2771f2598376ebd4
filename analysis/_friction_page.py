"""A friction's own page on the dashboard (``GET /dashboard/friction/{tool}/{class}/{type}``),
and its downloads.

The figures are ``analysis._friction``'s over the released cells (``ReleasedSource``): the
team role sees nothing else. The page takes the period (``start``, ``end``, widened to whole
weeks: the ``friction`` cube is weekly) and links the previous period of the same length, the
next one while it is released, the tool's page and the overview. Every panel has its CSV and
JSON downloads: the friction's own panels at ``.../export/{panel}.{csv|json}``, the tool's
panels at the dashboard's export route with the tool and the same days.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlencode

import duckdb

from analysis._cells import MemoSource, ReleasedSource, released_span
from analysis._charts import base_spec, chart_svg, spec_svg
from analysis._dashboard import (
    HALF_CHART,
    LATEST,
    WIDE_CHART,
    card,
    filter_message,
    released_text,
)
from analysis._filters import FilterError, Filters, Period, form_day
from analysis._friction import PANELS, FrictionFigures, FrictionKey, friction_figures
from analysis._html import esc, kpis, not_covered_main
from analysis._palette import PALETTE
from analysis._panels import FORMATS, panel_body, panel_card, scaled, weekly_spec
from analysis._period import NotCovered, Released, coverage_json, days_text, resolve
from analysis._rows import FrictionVersionRow, WeekRow, figure_text, within_noise
from analysis.report import sentence

__all__ = [
    "FORMATS",
    "FrictionView",
    "friction_error_view",
    "friction_export",
    "friction_page_rest",
    "friction_svgs",
    "friction_title",
    "friction_view",
]

_INTERVAL = "#1d2b3a"


@dataclass(frozen=True, slots=True)
class FrictionView:
    """Everything one friction's page shows."""

    key: FrictionKey
    #: None when no release covers the asked days (``uncovered`` says so).
    figures: FrictionFigures | None
    #: What the releases cover (None before the first release).
    released: Released | None
    #: Why nothing is shown: no release covers the asked days (``NotCovered``'s sentence).
    uncovered: str | None = None
    #: The asked filters (the form shows their days when none is covered).
    asked: Filters = field(default_factory=Filters)
    #: A message for the person when the filters they chose could not be used.
    error: str | None = None
    submitted: Mapping[str, str] = field(default_factory=dict)

    @property
    def note(self) -> str | None:
        """Why the covered days differ from the asked ones, if they do."""
        return None if self.figures is None else self.figures.coverage.note

    @property
    def released_through(self) -> dt.date | None:
        return None if self.released is None else self.released.through


def friction_title(key: FrictionKey) -> str:
    return f"Friction: {key.label}"


def friction_view(
    con: duckdb.DuckDBPyConnection, key: FrictionKey, filters: Filters
) -> FrictionView:
    """The page's data (on the database thread): released cells only, over the days resolved
    as for every view (``analysis._period``)."""
    released = released_span(con)
    try:
        cov = resolve(filters, released)
    except NotCovered as exc:
        return FrictionView(key, None, released, uncovered=sentence(str(exc)), asked=filters)
    return FrictionView(key, friction_figures(MemoSource(ReleasedSource(con)), key, cov), released)


def _message(exc: FilterError) -> str:
    return f"{filter_message(exc)} Showing the default period instead."


def friction_error_view(
    view: FrictionView, exc: FilterError, submitted: Mapping[str, str]
) -> FrictionView:
    return replace(view, error=_message(exc), submitted=dict(submitted))


def _days(period: Period) -> dict[str, str]:
    return {"start": period.start.isoformat(), "end": period.end.isoformat()}


def _href(path: str, period: Period) -> str:
    return f"{path}?{urlencode(_days(period))}"


# -- charts ---------------------------------------------------------------------------------


def _versions_spec(rows: Sequence[FrictionVersionRow]) -> dict[str, Any]:
    values = [{"version": r.version, "n": r.n, "lo": max(0, r.n - r.moe), "hi": r.n + r.moe,
               "status": r.regression or "not a regression"} for r in rows[:15]]  # fmt: skip
    spec = base_spec(values, max(60, 22 * len(values)))
    y = {"field": "version", "type": "nominal", "title": None, "sort": None}
    status = {**PALETTE["status"], "not a regression": "#7f7f7f"}
    present = [s for s in status if any(v["status"] == s for v in values)]
    spec["layer"] = [
        {"mark": {"type": "bar", "cornerRadiusEnd": 2},
         "encoding": {"y": y, "x": {"field": "n", "type": "quantitative", "title": "signals"},
                      "color": {"field": "status", "type": "nominal", "title": "regression",
                                "scale": {"domain": present,
                                          "range": [status[s] for s in present]}}}},
        {"mark": {"type": "rule", "color": _INTERVAL},
         "encoding": {"y": y, "x": {"field": "lo", "type": "quantitative"}, "x2": {"field": "hi"}}},
    ]  # fmt: skip
    return spec


def friction_svgs(view: FrictionView) -> list[str | None]:
    """The page's charts: trend, versions, then the tool's panels (CPU work: off the loop)."""
    f = view.figures
    if f is None:
        return []
    trend, versions = f.trend, f.versions
    out: list[str | None] = [
        spec_svg(scaled(weekly_spec(trend), WIDE_CHART)) if trend else None,
        spec_svg(scaled(_versions_spec(versions), HALF_CHART)) if versions else None,
    ]
    return out + [chart_svg(a, width=HALF_CHART) for a in f.tool_answers]


# -- the page -------------------------------------------------------------------------------


_ROW_TYPES: dict[str, type[WeekRow] | type[FrictionVersionRow]] = {
    "trend": WeekRow,
    "versions": FrictionVersionRow,
}
_EMPTY = {
    "trend": "No released week in this period.",
    "versions": "No version's count of this tool and error class is above its noise.",
}


def export_href(key: FrictionKey, panel: str, fmt: str, period: Period) -> str:
    return _href(f"{key.path}/export/{panel}.{fmt}", period)


def _panel_card(f: FrictionFigures, panel: str, svg: str | None) -> str:
    title, summary = PANELS[panel]
    downloads = {fmt: export_href(f.key, panel, fmt, f.period) for fmt in FORMATS}
    return panel_card(panel, title, summary, f.panel(panel), _ROW_TYPES[panel], svg,
                      empty=_EMPTY[panel], downloads=downloads, wide=panel == "trend")  # fmt: skip


def _tiles(f: FrictionFigures) -> str:
    """Its figures as its row of the top table shows them (``top_row``), each with its noise."""
    row, days = f.row, f.period.days
    tiles: list[tuple[str, str, str, str | None]] = [
        ("signals", f"in these {days} days", figure_text(row, "n"), None)
    ]
    if row.prev_n is None:
        tiles.append(("previous", f"the {days} days before", "not all released", None))
    else:
        tiles.append(("previous", f"the {days} days before", figure_text(row, "prev_n"), None))
        change = figure_text(row, "change", marked=False)
        if row.change_pct is not None:
            change += " \u00b7 " + figure_text(row, "change_pct", marked=False)
        label = "change, within noise" if within_noise(row, "change") else "change"
        tiles.append(("change", label, change, None))
    return kpis(tiles)


def _nav(view: FrictionView, f: FrictionFigures) -> str:
    """The periods of the same length before and after, while releases cover some of them."""
    released, links = view.released, []
    if released is not None and f.period.start > released.first:
        prev = f.previous
        links.append(f'<a id="previous" href="{esc(_href(f.key.path, prev))}">\u2190 previous '
                     f"period ({days_text(prev)})</a>")  # fmt: skip
    if released is not None and f.period.end < released.through:
        nxt = f.period.following()
        links.append(f'<a id="next" href="{esc(_href(f.key.path, nxt))}">next period '
                     f"({days_text(nxt)}) \u2192</a>")  # fmt: skip
    return f'<nav class="periods">{" ".join(links)}</nav>'


def _form(view: FrictionView) -> str:
    path, f = view.key.path, view.figures

    def day(name: str) -> str:  # as the dashboard's form: the asked day, its default filled in
        shown = getattr(view.asked if f is None else f.coverage.asked, name)
        return form_day(view.submitted, name, "" if shown is None else shown.isoformat())

    return (
        f'<form method="get" action="{esc(path)}" class="filters" id="filters">'
        f'<label>From<input type="date" name="start" id="f-start" value="{esc(day("start"))}">'
        f'</label><label>To<input type="date" name="end" id="f-end" value="{esc(day("end"))}">'
        '</label><button type="submit" id="apply">Apply</button>'
        f'<a class="reset" href="{esc(path)}">Reset</a></form>'
    )


def friction_page_rest(view: FrictionView, svgs: Sequence[str | None]) -> str:
    """The page after ``analysis._html.page_start``; ``svgs`` from ``friction_svgs``."""
    key, f = view.key, view.figures
    days = "" if f is None else "?" + urlencode(_days(f.period))
    parts = [] if f is None else [f"{days_text(f.period)} ({f.period.days} days)"]
    parts += ["differentially private releases: each count \u00b1 its 95 % noise interval",
              released_text(view.released)]  # fmt: skip
    described = " \u00b7 ".join(parts)
    crumbs = (
        f'<a href="/dashboard{esc(days)}" id="back">\u2190 overview</a> '
        f'<a href="/dashboard/tool/{key.tool.value}{esc(days)}" id="tool">'
        f"\u2190 tool: {esc(key.tool.value)}</a>"
    )
    error = (f'<p class="error banner" role="alert" id="page-error">{esc(view.error)}</p>'
             if view.error else "")  # fmt: skip
    head = (
        f'<header><div><h1>{esc(friction_title(key))}</h1><p id="covers">{esc(described)}</p>'
        f"</div><div>{crumbs}</div>"
        '<form method="post" action="/dashboard/logout"><button class="link" type="submit">'
        "Sign out</button></form></header>" + error + _form(view)
    )
    if f is None:
        latest = None if view.released is None else key.path
        return head + not_covered_main(view.uncovered or "", latest, LATEST)
    notes = [sentence(n) for n in (view.note, f.coverage.comparison) if n]
    own = [_panel_card(f, p, svg) for p, svg in zip(PANELS, svgs, strict=False)]
    scope = f"(all of {key.tool.value}'s friction)"
    tool = [card(a, svg, days, f"{a.question.spec.title} {scope}")
            for a, svg in zip(f.tool_answers, svgs[2:], strict=True)]  # fmt: skip
    return (
        head
        + _nav(view, f)
        + "".join(f'<p class="note">{esc(n)}</p>' for n in notes)
        + _tiles(f)
        + f'<main class="grid">{"".join(own + tool)}</main></body></html>\n'
    )


# -- downloads ------------------------------------------------------------------------------


def friction_export(view: FrictionView, panel: str, fmt: str) -> tuple[str, str]:
    """A panel's download: (body, file name). The JSON names the friction, the days it covers
    (``coverage_json``, as every answer), the comparison and the totals; the CSV is the panel's
    rows with every field. Only for a view with figures (the route answers 404 without)."""
    f = view.figures
    assert f is not None
    title, summary = PANELS[panel]
    key, row = f.key, f.row
    name = f"lmcp-friction-{'-'.join(key.cell)}-{panel}-{f.period.start}-{f.period.end}.{fmt}"
    doc = {
        "friction": dict(zip(("tool", "error_class", "friction_type"), key.cell, strict=True)),
        "panel": panel,
        "title": title,
        "summary": summary,
        **coverage_json(f.coverage),
        "comparison": f.coverage.comparison,
        "source": f.source,
        "total": {"n": row.n, "moe": row.moe},
        "previous": None if row.prev_n is None else {"n": row.prev_n, "moe": row.prev_moe},
    }
    return panel_body(f.panel(panel), _ROW_TYPES[panel], fmt, doc), name
