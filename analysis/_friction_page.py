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

from analysis._cells import MemoSource, ReleasedSource, default_period, last_released_day
from analysis._charts import base_spec, chart_svg, spec_svg
from analysis._dashboard import HALF_CHART, WIDE_CHART, card, filter_message
from analysis._filters import FilterError, Filters, Period, form_day
from analysis._friction import PANELS, FrictionFigures, FrictionKey, friction_figures
from analysis._html import esc, kpis
from analysis._palette import PALETTE
from analysis._panels import FORMATS, panel_body, panel_card, scaled, weekly_spec
from analysis._rows import FrictionVersionRow, WeekRow

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

    figures: FrictionFigures
    released_through: dt.date | None
    #: How the asked period was widened to whole weeks, if it was.
    note: str | None = None
    #: A message for the person when the filters they chose could not be used.
    error: str | None = None
    submitted: Mapping[str, str] = field(default_factory=dict)

    @property
    def key(self) -> FrictionKey:
        return self.figures.key


def friction_title(key: FrictionKey) -> str:
    return f"Friction: {key.label}"


def friction_view(
    con: duckdb.DuckDBPyConnection, key: FrictionKey, filters: Filters
) -> FrictionView:
    """The page's data (on the database thread): released cells only."""
    try:
        asked = default_period(con, filters)
    except FilterError as exc:  # e.g. a start after the last released day: the default period
        return replace(friction_view(con, key, Filters()), error=_message(exc))
    figures = friction_figures(MemoSource(ReleasedSource(con)), key, asked)
    note = None
    if figures.period != asked:
        shown = f"{figures.period.start.isoformat()} to {figures.period.end.isoformat()}"
        note = f"aligned to whole weeks: {shown}"
    return FrictionView(figures, last_released_day(con), note)


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


def _panel_card(view: FrictionView, panel: str, svg: str | None) -> str:
    f = view.figures
    title, summary = PANELS[panel]
    downloads = {fmt: export_href(f.key, panel, fmt, f.period) for fmt in FORMATS}
    return panel_card(panel, title, summary, f.panel(panel), _ROW_TYPES[panel], svg,
                      empty=_EMPTY[panel], downloads=downloads, wide=panel == "trend")  # fmt: skip


def _tiles(f: FrictionFigures) -> str:
    now = f"{f.now.n:,} \u00b1 {f.now.moe:,}" + ("" if f.now.above else " (within noise)")
    tiles: list[tuple[str, str, str, str | None]] = [("signals", "in this period", now, None)]
    if f.before is None:
        tiles.append(("previous", "previous period", "no release", None))
    else:
        before = f"{f.before.n:,} \u00b1 {f.before.moe:,}"
        tiles.append(("previous", "previous period", before, None))
        pct = "" if f.change_pct is None else f" ({f.change_pct:+.1f} %)"
        tiles.append(("change", "change", f"{f.change:+,}{pct}", None))
    return kpis(tiles)


def _nav(view: FrictionView) -> str:
    f = view.figures
    prev = f.previous
    links = [f'<a id="previous" href="{esc(_href(f.key.path, prev))}">\u2190 previous period '
             f"({prev.start.isoformat()} to {prev.end.isoformat()})</a>"]  # fmt: skip
    through = view.released_through
    if through is not None and f.period.end < through:
        nxt = f.period.following()
        links.append(f'<a id="next" href="{esc(_href(f.key.path, nxt))}">next period '
                     f"({nxt.start.isoformat()} to {nxt.end.isoformat()}) \u2192</a>")  # fmt: skip
    return f'<nav class="periods">{" ".join(links)}</nav>'


def _form(view: FrictionView) -> str:
    f = view.figures
    start = form_day(view.submitted, "start", f.period.start.isoformat())
    end = form_day(view.submitted, "end", f.period.end.isoformat())
    return (
        f'<form method="get" action="{esc(f.key.path)}" class="filters" id="filters">'
        f'<label>From<input type="date" name="start" id="f-start" value="{esc(start)}"></label>'
        f'<label>To<input type="date" name="end" id="f-end" value="{esc(end)}"></label>'
        '<button type="submit" id="apply">Apply</button>'
        f'<a class="reset" href="{esc(f.key.path)}">Reset</a></form>'
    )


def friction_page_rest(view: FrictionView, svgs: Sequence[str | None]) -> str:
    """The page after ``analysis._html.page_start``; ``svgs`` from ``friction_svgs``."""
    f = view.figures
    days = "?" + urlencode(_days(f.period))
    through = "no release yet" if view.released_through is None else view.released_through
    described = (
        f"{f.period.start.isoformat()} to {f.period.end.isoformat()} \u00b7 differentially "
        f"private releases: each count \u00b1 its 95 % noise interval, released through {through}"
    )
    crumbs = (
        f'<a href="/dashboard{esc(days)}" id="back">\u2190 overview</a> '
        f'<a href="/dashboard/tool/{f.key.tool.value}{esc(days)}" id="tool">'
        f"\u2190 tool: {esc(f.key.tool.value)}</a>"
    )
    notes = [view.note] if view.note else []
    error = (f'<p class="error banner" role="alert" id="page-error">{esc(view.error)}</p>'
             if view.error else "")  # fmt: skip
    own = [_panel_card(view, p, svg) for p, svg in zip(PANELS, svgs, strict=False)]
    scope = f"(all of {f.key.tool.value}'s friction)"
    tool = [card(a, svg, days, f"{a.question.spec.title} {scope}")
            for a, svg in zip(f.tool_answers, svgs[2:], strict=True)]  # fmt: skip
    return (
        f"<header><div><h1>{esc(friction_title(f.key))}</h1><p>{esc(described)}</p></div>"
        f"<div>{crumbs}</div>"
        '<form method="post" action="/dashboard/logout"><button class="link" type="submit">'
        "Sign out</button></form></header>"
        + error
        + _form(view)
        + _nav(view)
        + "".join(f'<p class="note">{esc(n)}</p>' for n in notes)
        + _tiles(f)
        + f'<main class="grid">{"".join(own + tool)}</main></body></html>\n'
    )


# -- downloads ------------------------------------------------------------------------------


def _total(n: int, moe: int) -> dict[str, int]:
    return {"n": n, "moe": moe}


def friction_export(view: FrictionView, panel: str, fmt: str) -> tuple[str, str]:
    """A panel's download: (body, file name). The JSON names the friction, the period, the
    period before and the totals; the CSV is the panel's rows with every field."""
    f, through = view.figures, view.released_through
    title, summary = PANELS[panel]
    key = f.key
    name = f"lmcp-friction-{'-'.join(key.cell)}-{panel}-{f.period.start}-{f.period.end}.{fmt}"
    doc = {
        "friction": dict(zip(("tool", "error_class", "friction_type"), key.cell, strict=True)),
        "panel": panel,
        "title": title,
        "summary": summary,
        "period": _days(f.period),
        "previous_period": _days(f.previous),
        "source": f.source,
        "total": _total(f.now.n, f.now.moe),
        "previous": None if f.before is None else _total(f.before.n, f.before.moe),
        "released_through": None if through is None else through.isoformat(),
    }
    return panel_body(f.panel(panel), _ROW_TYPES[panel], fmt, doc), name
