"""The triage report: one self-contained HTML page (and a Markdown twin) for every question.

Offline by construction: charts are Vega-Lite rendered to SVG by vl-convert and inlined; the
CSS is inline; there is no script and no external URL. By default every figure is
post-processing of the stored differentially private releases (``analysis._released``); the
exact view (a steward's, of a raw file they hold) is k-suppressed by its queries. Every value
is an enum name, a number or a day.
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path

import duckdb

from analysis._cells import RELEASED_QUESTIONS, coverage_of, refused_filter
from analysis._charts import chart_png, chart_svg
from analysis._filters import FilterError, Filters, unavailable_sentence
from analysis._period import days_text
from analysis._questions import DEFAULT_K, DEFAULT_LIMIT, QUESTIONS, Answer, Question
from analysis._released import ask, ask_released, unavailable
from analysis._rows import (
    MARGINS,
    FrictionVersionRow,
    PanelRow,
    Row,
    TopRow,
    TrendRow,
    WeekRow,
    figure_text,
)
from contract.days import utc_today

__all__ = [
    "CSS",
    "REPORT_CHART",
    "Report",
    "TABLE_ROWS",
    "answer_all",
    "build_report",
    "cell_text",
    "columns",
    "empty_text",
    "footnotes",
    "format_cell",
    "rows_table_html",
    "sentence",
    "table_html",
    "table_rows",
    "write_pngs",
    "write_report",
]

#: Rows shown per table (charts show fewer).
TABLE_ROWS = 25
#: Plot width of the report's charts (pixels; label columns come on top).
REPORT_CHART = 720

CSS = """
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif;
       margin: 0; color: #1d1d1f; background: #f5f5f7; }
header { background: #1d2b3a; color: #fff; padding: 18px 32px; }
header h1 { margin: 0 0 4px; font-size: 22px; }
header p { margin: 0; opacity: .85; }
nav { padding: 10px 32px; background: #fff; border-bottom: 1px solid #ddd; display: flex;
      flex-wrap: wrap; gap: 4px 16px; }
nav a { color: #0b57d0; text-decoration: none; white-space: nowrap; }
main { padding: 8px 32px 40px; max-width: 1180px; }
section { background: #fff; border: 1px solid #e3e3e8; border-radius: 8px; margin: 18px 0;
          padding: 16px 20px; }
section h2 { margin: 0 0 2px; font-size: 18px; }
section p.summary { margin: 0 0 10px; color: #555; }
/* Wide content scrolls inside its section, never the page: a chart keeps its size (its labels
   stay legible and apart), a table its columns. */
.chart { overflow-x: auto; }
.chart svg { display: block; }
table { border-collapse: collapse; margin-top: 10px; font-size: 13px; display: block;
        max-width: 100%; overflow-x: auto; }
th, td { padding: 3px 10px; border-bottom: 1px solid #eee; text-align: left; }
th { background: #fafafa; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.empty { color: #777; font-style: italic; }
.more { color: #777; font-size: 12px; }
.note { color: #555; font-size: 13px; margin: 8px 0 0; }
header p.note { color: #fff; opacity: .85; font-size: 14px; }
footer { color: #666; font-size: 12px; padding: 0 32px 24px; }
@media (max-width: 600px) {
  header, nav, main, footer { padding-left: 12px; padding-right: 12px; }
  section { padding: 12px; }
}
"""


@dataclass(frozen=True, slots=True)
class Report:
    html: str
    markdown: str
    #: question name -> SVG (the charts the Markdown links to)
    charts: dict[str, str]


def answer_all(
    con: duckdb.DuckDBPyConnection,
    filters: Filters | None = None,
    *,
    k: int = DEFAULT_K,
    questions: Sequence[Question] | None = None,
    exact: bool = False,
    limit: int = DEFAULT_LIMIT,
    today: dt.date | None = None,
) -> list[Answer[Row]]:
    """Every question's answer over one resolved period: from the stored releases (the team's
    view), or ``exact`` (the same derivations over exact cells, threshold ``k``: the steward's
    view of a file they hold, whose weeks are closed as of ``today``). A question whose cube
    cannot take a filter says so. ``NotCovered`` when no release (no closed week of the file)
    covers the filters' days."""
    filters = filters or Filters()
    cov = coverage_of(con, filters, exact=exact, today=today)
    out: list[Answer[Row]] = []
    for q in questions or RELEASED_QUESTIONS:
        try:
            if exact:
                out.append(ask(con, q, filters, k=k, limit=limit, coverage=cov))
            else:
                out.append(ask_released(con, q, filters, limit=limit, coverage=cov))
        except FilterError as exc:  # said in its section, never a silent gap
            out.append(unavailable(q, cov, filters, exc, source="exact" if exact else "released"))
    return out


def format_cell(value: object) -> str:
    """One answer value as plain text (the report, the Markdown and the CLI's tables)."""
    if value is None:
        return "\u2014"
    if isinstance(value, float):
        return f"{value:,.2f}".rstrip("0").rstrip(".")
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


#: The rows of a friction's own page (no link to a friction page from there).
_FRICTION_ROWS = (WeekRow, FrictionVersionRow)
#: Columns shown inside another: each figure's margin (``n +- moe``, ``share_pct +- share_moe``).
_FOLDED = frozenset(MARGINS.values())


def columns(answer: Answer[Row]) -> list[str]:
    """The columns a table shows (the margins are folded into their figures)."""
    return [f.name for f in fields(QUESTIONS[answer.question].row_type) if f.name not in _FOLDED]


def cell_text(row: PanelRow, column: str) -> str:
    """One shown cell, the same in every view: a figure with its margin (``figure_text``:
    marked "within noise" when its 95 % interval includes 0), a flag as its column's name
    when set (``spike``), anything else by ``format_cell``."""
    value = getattr(row, column)
    if column in MARGINS:
        return figure_text(row, column)
    if isinstance(value, bool):
        return column if value else ""
    return format_cell(value)


def sentence(text: str) -> str:
    """A clause as a sentence: capitalised, with its full stop."""
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def empty_text(answer: Answer[Row], title: str | None = None) -> str:
    """Why an answer has no row, in the words of the card or section titled ``title``."""
    name = refused_filter(answer.question, answer.filters)
    if answer.unavailable is not None and name is not None:
        title = title or QUESTIONS[answer.question].title
        return f"Not available with these filters: {unavailable_sentence(title, name)}."
    return answer.empty_text


def footnotes(answer: Answer[Row]) -> list[str]:
    """The sentences under an answer's table: what its changes compare, and what a bare
    \u2014 in it means."""
    if not answer.rows:  # nothing to compare, nor to explain
        return []
    out = [] if answer.comparison is None else [sentence(answer.comparison)]
    rows = [r for r in answer.rows if isinstance(r, TopRow)]
    if any(r.prev_n is not None and r.change_pct is None for r in rows):
        out.append(
            "change_pct \u2014: the previous count is within its noise, so a percentage of it "
            "would mean nothing (the change \u00b1 its noise is shown)."
        )
    return out


def table_rows(answer: Answer[Row]) -> tuple[Row, ...]:
    """The rows in table order: the trend's newest days first (its overall series first within
    a day); every other question keeps its answer's order."""
    if answer.question is not Question.trends:
        return answer.rows
    trend = [r for r in answer.rows if isinstance(r, TrendRow)]
    return tuple(sorted(trend, key=lambda r: (-r.day.toordinal(), r.series != "all", r.series)))


def _tbody(
    rows: Sequence[PanelRow],
    cols: Sequence[str],
    tool_href: Callable[[str], str | None] | None,
    friction_href: Callable[[Row], str | None] | None = None,
) -> str:
    body = []
    for row in rows:
        cells = []
        for c in cols:
            value = getattr(row, c)
            num = isinstance(value, int | float) and not isinstance(value, bool)
            cls = ' class="num"' if num else ""
            text = html.escape(cell_text(row, c))
            href = (
                tool_href(value) if tool_href and c == "tool" and isinstance(value, str) else None
            )
            if href is not None:
                text = f'<a class="drill" href="{html.escape(href)}">{text}</a>'
            page = None
            if friction_href and c == "error_class" and not isinstance(row, _FRICTION_ROWS):
                page = friction_href(row)
            if page is not None:
                text = (
                    f'<a class="friction" title="This friction\'s page" '
                    f'href="{html.escape(page)}">{text}</a>'
                )
            cells.append(f"<td{cls}>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return "".join(body)


def table_html(
    answer: Answer[Row],
    limit: int = TABLE_ROWS,
    *,
    tool_href: Callable[[str], str | None] | None = None,
    friction_href: Callable[[Row], str | None] | None = None,
    expandable: bool = False,
) -> str:
    """An HTML table of an answer's first ``limit`` rows (escaped); ``tool_href`` links tool
    cells, ``friction_href`` a row's error class. ``expandable`` puts the other rows behind a
    "show more" disclosure (no script)."""
    return rows_table_html(
        table_rows(answer), columns(answer), limit, tool_href=tool_href,
        friction_href=friction_href, expandable=expandable,
    )  # fmt: skip


def rows_table_html(
    rows: Sequence[PanelRow],
    cols: Sequence[str],
    limit: int = TABLE_ROWS,
    *,
    tool_href: Callable[[str], str | None] | None = None,
    friction_href: Callable[[Row], str | None] | None = None,
    expandable: bool = False,
) -> str:
    """``table_html`` for any rows a dashboard shows, with the columns ``cols``."""
    head = "<thead><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in cols) + "</tr></thead>"
    shown, rest = rows[:limit], rows[limit:]
    links = (tool_href, friction_href)
    out = f"<table>{head}<tbody>{_tbody(shown, cols, *links)}</tbody></table>"
    if rest and expandable:
        out += (
            f'<details class="more-rows"><summary>Show {len(rest)} more rows</summary>'
            f"<table>{head}<tbody>{_tbody(rest, cols, *links)}</tbody></table></details>"
        )
    elif rest:
        out += f'<p class="more">{len(rest)} more rows not shown.</p>'
    return out


def _describe(answer: Answer[Row]) -> str:
    shown = answer.filters.as_strings()
    shown.pop("start", None)
    shown.pop("end", None)
    parts = [answer.covers]
    parts += [f"{key} = {value}" for key, value in sorted(shown.items())]
    parts.append(answer.provenance)
    if answer.coverage is not None:
        released = answer.coverage.released
        parts.append(f"{released.what} cover {days_text(released.period)}")
    return " \u00b7 ".join(parts)


def build_report(
    answers: Sequence[Answer[Row]],
    *,
    title: str = "LMCP friction triage",
    generated: dt.date | None = None,
) -> Report:
    """Render the answers (already k-suppressed) as HTML and Markdown."""
    if not answers:
        raise ValueError("a report needs at least one answer")
    generated = generated or utc_today()
    described = _describe(answers[0])
    note = answers[0].note
    charts: dict[str, str] = {}
    sections: list[str] = []
    md = [f"# {title}", "", f"{described}. Generated {generated.isoformat()}.", ""]
    if note is not None:
        md += [f"_{sentence(note)}_", ""]
    nav = []
    for answer in answers:
        spec = QUESTIONS[answer.question]
        name = answer.question.value
        nav.append(f'<a href="#q-{name}">{html.escape(spec.title)}</a>')
        svg = chart_svg(answer, width=REPORT_CHART)
        if svg is not None:
            charts[name] = svg
        chart = (
            f'<div class="chart">{svg}</div>'
            if svg is not None
            else f'<p class="empty">{html.escape(empty_text(answer))}</p>'
        )
        table = table_html(answer) if answer.rows else ""
        notes = "".join(f'<p class="note">{html.escape(n)}</p>' for n in footnotes(answer))
        sections.append(
            f'<section id="q-{name}"><h2>{html.escape(spec.title)}</h2>'
            f'<p class="summary">{html.escape(spec.summary)}</p>{chart}{table}{notes}</section>'
        )
        md += [f"## {spec.title}", "", spec.summary, ""]
        md += _markdown_table(answer, name if svg is not None else None)
    head_note = "" if note is None else f'<p class="note">{html.escape(sentence(note))}</p>'
    page = (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">"
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>"
        f"<header><h1>{html.escape(title)}</h1><p>{html.escape(described)}</p>{head_note}"
        f"</header><nav>{''.join(nav)}</nav><main>{''.join(sections)}</main>"
        f"<footer>Generated {generated.isoformat()} from anonymous friction signals. "
        f"Every figure: {html.escape(answers[0].provenance)}.</footer></body></html>\n"
    )
    return Report(html=page, markdown="\n".join(md) + "\n", charts=charts)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def _markdown_table(answer: Answer[Row], chart: str | None) -> list[str]:
    out: list[str] = []
    if chart is not None:
        out += [f"![{chart}](CHARTS/{chart}.svg)", ""]
    if not answer.rows:
        return out + [f"_{empty_text(answer)}_", ""]
    cols = columns(answer)
    out.append("| " + " | ".join(cols) + " |")
    out.append("|" + "|".join("---" for _ in cols) + "|")
    for row in table_rows(answer)[:TABLE_ROWS]:
        out.append("| " + " | ".join(_md_cell(cell_text(row, c)) for c in cols) + " |")
    if len(answer.rows) > TABLE_ROWS:
        out.append(f"\n_{len(answer.rows) - TABLE_ROWS} more rows not shown._")
    out += [f"\n{n}" for n in footnotes(answer)]
    return out + [""]


def write_report(report: Report, html_path: Path, markdown_path: Path | None = None) -> list[Path]:
    """Write the HTML; the Markdown too, with its charts as SVG files in ``<stem>-charts/``."""
    html_path.parent.mkdir(parents=True, exist_ok=True)
    html_path.write_text(report.html, encoding="utf-8")
    written = [html_path]
    if markdown_path is not None:
        charts_dir = markdown_path.with_name(f"{markdown_path.stem}-charts")
        charts_dir.mkdir(parents=True, exist_ok=True)
        for name, svg in report.charts.items():
            (charts_dir / f"{name}.svg").write_text(svg, encoding="utf-8")
        markdown_path.write_text(
            report.markdown.replace("](CHARTS/", f"]({charts_dir.name}/"), encoding="utf-8"
        )
        written.append(markdown_path)
    return written


def write_pngs(
    answers: Sequence[Answer[Row]], folder: Path, *, prefix: str = "triage-"
) -> list[Path]:
    """Each chart as a PNG (for docs), one per answer: an empty one says why it is empty."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for answer in answers:
        path = folder / f"{prefix}{answer.question.value}.png"
        path.write_bytes(chart_png(answer))
        out.append(path)
    return out
