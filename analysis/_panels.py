"""Dashboard panels that are not registry questions: the weekly trend of a tool or of a
friction (``WeekRow``s of the ``friction`` cube) and a friction's versions.

A panel is a card like a question's (``analysis._dashboard.card``): a chart (or why there is
none), its table with each count's margin, and its CSV and JSON downloads. The weekly chart
draws one line per series (friction types in the palette's colours, ``all`` in ink) and the
95 % noise band of the first series.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Any
from urllib.parse import urlencode

from analysis._charts import WIDTH, base_spec
from analysis._csv import write_rows_csv
from analysis._filters import Filters, unavailable_sentence
from analysis._html import download_links, esc
from analysis._palette import PALETTE
from analysis._rows import PanelRow, WeekRow, row_to_json
from analysis.report import rows_table_html
from contract.schema import ToolName

__all__ = [
    "FORMATS",
    "WEEKLY_SUMMARY",
    "WEEKLY_TITLE",
    "columns_of",
    "panel_body",
    "panel_card",
    "scaled",
    "tool_weekly_card",
    "weekly_href",
    "weekly_spec",
    "weekly_unavailable",
]

#: The download formats, by the name's suffix, with their media types.
FORMATS = {"csv": "text/csv; charset=utf-8", "json": "application/json"}
_TABLE_ROWS = 10
#: Margins are shown inside their figure (``n +- moe``), so not as columns of the table.
_FOLDED = frozenset({"moe", "share_moe"})
_INK = "#1d2b3a"


def columns_of(row_type: type[PanelRow]) -> list[str]:
    return [f.name for f in fields(row_type)]


def scaled(spec: dict[str, Any], width: int) -> dict[str, Any]:
    """``spec`` at a plot width of ``width`` (the charts' widths are given for ``WIDTH``)."""
    spec["width"] = int(spec["width"] * width / WIDTH)
    return spec


def weekly_spec(rows: Sequence[WeekRow]) -> dict[str, Any]:
    """Signals per week, a line per series, the first series' 95 % band around it."""
    values = [{"week": r.week.isoformat(), "series": r.series, "n": r.n,
               "lo": max(0, r.n - r.moe), "hi": r.n + r.moe} for r in rows]  # fmt: skip
    spec = base_spec(values, 200)
    # Ordinal weeks: one tick per released week, labelled by its Monday.
    x = {
        "field": "week",
        "type": "ordinal",
        "title": "week starting",
        "sort": None,
        "axis": {"labelAngle": 0, "labelExpr": "utcFormat(toDate(datum.value), '%b %d')"},
    }
    present = list(dict.fromkeys(r.series for r in rows))
    colours = {s: PALETTE["friction_type"].get(s, _INK) for s in present}
    band = present[0] if present else ""
    spec["layer"] = [
        {"transform": [{"filter": {"field": "series", "equal": band}}],
         "mark": {"type": "area", "opacity": 0.2, "color": colours.get(band, _INK)},
         "encoding": {"x": x, "y": {"field": "lo", "type": "quantitative"},
                      "y2": {"field": "hi"}}},
        {"mark": {"type": "line", "point": {"size": 36}, "strokeWidth": 2},
         "encoding": {"x": x,
                      "y": {"field": "n", "type": "quantitative", "title": "signals per week"},
                      "color": {"field": "series", "type": "nominal", "title": "series",
                                "scale": {"domain": present,
                                          "range": [colours[s] for s in present]}}}},
    ]  # fmt: skip
    return spec


def panel_card(
    name: str,
    title: str,
    summary: str,
    rows: Sequence[PanelRow],
    row_type: type[PanelRow],
    svg: str | None,
    *,
    empty: str,
    downloads: Mapping[str, str] | None,
    wide: bool,
) -> str:
    """The panel's card: ``svg`` (or ``empty``), the table, the downloads (None: no figure to
    download, as when the filters cannot be taken)."""
    chart = (f'<div class="chart" id="chart-{name}">{svg}</div>' if svg is not None
             else f'<p class="empty">{esc(empty)}</p>')  # fmt: skip
    shown = [c for c in columns_of(row_type) if c not in _FOLDED]
    table = rows_table_html(rows, shown, _TABLE_ROWS, expandable=True) if rows else ""
    links = download_links(downloads) if downloads is not None else ""
    return (
        f'<section class="card{" wide" if wide else ""}" id="q-{name}"><h2>{esc(title)}</h2>'
        f'<p class="summary">{esc(summary)}</p>{chart}'
        f"<details open><summary>table</summary>{table}</details>{links}</section>"
    )


def panel_body(
    rows: Sequence[PanelRow], row_type: type[PanelRow], fmt: str, doc: Mapping[str, Any]
) -> str:
    """A panel's download: CSV of its rows (every field, RFC 4180 line ends), or JSON of
    ``doc`` with the rows."""
    if fmt == "csv":
        out = io.StringIO()
        write_rows_csv(columns_of(row_type), rows, out, newline="\r\n")
        return out.getvalue()
    return json.dumps({**doc, "rows": [row_to_json(r) for r in rows]}, indent=2) + "\n"


# -- a tool's weekly trend (its page's second card) --------------------------------------------

WEEKLY_TITLE = "Trend per week"
WEEKLY_SUMMARY = (
    "The tool's signals per released week, per friction type and in all (its error classes "
    "summed; the band: the 95 % noise of all)."
)


def weekly_unavailable(filters: Filters) -> str | None:
    """Why a tool's weekly trend (the ``friction`` cube: tool, error class, friction type)
    cannot take the filters, in ``Answer.unavailable``'s words; None when it can."""
    for name in ("platform", "version"):
        if getattr(filters, name) is not None:
            return unavailable_sentence(WEEKLY_TITLE, name)
    return None


def weekly_href(tool: ToolName, fmt: str, filters: Filters) -> str:
    """The download of a tool's weekly trend for ``filters`` (``analysis._export``)."""
    keep = {k: v for k, v in filters.as_strings().items() if k != "tool"}
    query = ("?" + urlencode(keep)) if keep else ""
    return f"/dashboard/tool/{tool.value}/export/trend.{fmt}{query}"


def tool_weekly_card(
    tool: ToolName,
    filters: Filters,
    rows: Sequence[WeekRow],
    unavailable: str | None,
    svg: str | None,
) -> str:
    empty = (f"Not available with these filters: {unavailable}." if unavailable is not None
             else "No released week in this period.")  # fmt: skip
    downloads = None
    if unavailable is None:
        downloads = {fmt: weekly_href(tool, fmt, filters) for fmt in FORMATS}
    return panel_card("weekly", WEEKLY_TITLE, WEEKLY_SUMMARY, rows, WeekRow, svg,
                      empty=empty, downloads=downloads, wide=True)  # fmt: skip
