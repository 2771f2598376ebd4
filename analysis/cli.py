"""``lmcp analysis``: the triage questions as rich tables, the report, and synthetic data.

Every question reads either a running collector (``--url`` plus a team token from ``--token``
or ``LMCP_TEAM_TOKEN``: the released figures, the team's view) or a DuckDB file (``--db``: the
releases stored in it; with ``--exact``, the same derivations over exact cells of its raw rows:
the steward's view of a file only a steward or the operator holds). The token is never printed.
What only some commands need (httpx, charts, progress bars) they import themselves.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import duckdb
import typer

from analysis._api import open_db, open_lake
from analysis._cli_remote import TokenOpt, UrlOpt, not_covered, remote_failed
from analysis._filters import FilterError, Filters
from analysis._period import NotCovered
from analysis._questions import DEFAULT_K, DEFAULT_LIMIT, QUESTIONS, Answer, Question
from analysis._released import ask
from analysis._rows import Row, TrendRow
from client._console import make_console

if TYPE_CHECKING:
    from rich.table import Table


__all__ = ["app", "answer_table"]

app = typer.Typer(
    help="Triage of the collected friction signals (from a DuckDB copy or a collector).",
    no_args_is_help=True,
    add_completion=False,
)
console = make_console()
err = make_console(stderr=True)

DbOpt = Annotated[
    Path | None,
    typer.Option(
        "--db", help="An exported copy: a DuckDB file, or a Parquet export.", dir_okay=False
    ),
]
LakeOpt = Annotated[
    str | None, typer.Option("--lake", help="A lake: a Delta table's folder or s3:// URI.")
]
StartOpt = Annotated[
    str | None, typer.Option(help="First day, YYYY-MM-DD (default: 4 weeks before the end).")
]
EndOpt = Annotated[
    str | None,
    typer.Option(
        help="Last day, YYYY-MM-DD (default: the last released day). The answer covers the "
        "whole released weeks of --start..--end, and says so when they differ."
    ),
]
PlatformOpt = Annotated[str | None, typer.Option(help="macos, windows or linux.")]
VersionOpt = Annotated[str | None, typer.Option("--version", help="1, 1.4 or 1.4.2.")]
ToolOpt = Annotated[str | None, typer.Option(help="A catalogue tool name.")]
KOpt = Annotated[int, typer.Option("--k", min=2, help="With --exact: hide groups smaller.")]
MirrorOpt = Annotated[
    Path | None,
    typer.Option(
        "--mirror",
        help="With --lake --exact: a local DuckDB copy of the compacted days, kept in step with "
        "the lake (created if absent; it holds raw rows).",
        dir_okay=False,
    ),
]
ExactOpt = Annotated[
    bool,
    typer.Option("--exact", help="With --db or --lake: exact figures from raw rows (the steward)."),
]
LimitOpt = Annotated[
    int, typer.Option(min=1, max=1000, help="Most rows (trends: the most recent days).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="The same as --format json.")]


class OutputFormat(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


FormatOpt = Annotated[
    OutputFormat | None,
    typer.Option(
        "--format",
        help="table, csv or json (default: table on a terminal, csv when piped or redirected).",
        show_default=False,
    ),
]

_STYLE = {"new": "bold red", "growing": "yellow", "spike": "bold red"}


def _filters(
    start: str | None, end: str | None, platform: str | None, version: str | None, tool: str | None
) -> Filters:
    try:
        return Filters.parse(
            {"start": start, "end": end, "platform": platform, "version": version, "tool": tool}
        )
    except FilterError as exc:
        raise typer.BadParameter(str(exc)) from None


def _fmt(row: Row, column: str) -> str:
    """``cell_text`` (every view's cell) with the terminal's emphasis (spikes, new and growing
    regressions, a figure there is none of)."""
    from rich.markup import escape

    from analysis.report import cell_text

    text = cell_text(row, column)
    if text == "\u2014":
        return "[dim]\u2014[/dim]"
    style = _STYLE.get(text)
    return f"[{style}]{escape(text)}[/{style}]" if style else escape(text)


def answer_table(answer: Answer[Row], *, max_rows: int | None = None) -> Table:
    """A rich table of an answer (also used by the demo)."""
    from rich.markup import escape
    from rich.table import Table

    from analysis.report import columns, empty_text, footnotes, sentence

    spec = QUESTIONS[answer.question]
    # The covered days first; then why they differ from the asked ones, and the comparison.
    lines = [f"{spec.title}  [dim]{answer.covers}, {answer.provenance}[/dim]"]
    if answer.note is not None:
        lines.append(f"[yellow]{escape(sentence(answer.note))}[/yellow]")
    table = Table(title="\n".join(lines), title_justify="left", header_style="bold cyan")

    names = columns(answer)
    for name in names:
        sample = next((getattr(r, name) for r in answer.rows if getattr(r, name) is not None), "")
        numeric = isinstance(sample, int | float) and not isinstance(sample, bool)
        table.add_column(name, justify="right" if numeric else "left")
    rows = answer.rows if max_rows is None else answer.rows[:max_rows]
    for row in rows:
        table.add_row(*(_fmt(row, n) for n in names))
    caption = [] if answer.rows else [empty_text(answer)]
    if max_rows is not None and len(answer.rows) > max_rows:
        caption.append(f"{len(answer.rows) - max_rows} more rows.")
    caption += footnotes(answer)
    if caption:
        table.caption = escape("\n".join(caption))
        table.caption_justify = "left"
    return table


def _open(
    db: Path | None, lake: str | None, *, exact: bool, mirror: Path | None
) -> duckdb.DuckDBPyConnection:
    """The connection ``--db`` or ``--lake`` (with ``--mirror``) names; one-line errors."""
    if mirror is not None and (lake is None or not exact):
        raise typer.BadParameter("--mirror needs --lake and --exact (it mirrors raw rows)")
    try:
        if lake is None:
            return open_db(db)  # type: ignore[arg-type]
        from collector.mode import MirrorError

        try:
            return open_lake(lake, raw=exact, mirror=mirror)
        except MirrorError as exc:
            raise typer.BadParameter(f"--mirror: {exc}") from None
    except FileNotFoundError:
        raise typer.BadParameter("--db/--lake: nothing there") from None


def _answer(
    question: Question,
    *,
    db: Path | None,
    url: str | None,
    token: str | None,
    filters: Filters,
    k: int,
    limit: int,
    exact: bool = False,
    lake: str | None = None,
    mirror: Path | None = None,
) -> Answer[Row]:
    if [db, url, lake].count(None) != 2:
        raise typer.BadParameter("give exactly one of --db, --url and --lake")
    if exact and db is None and lake is None:
        raise typer.BadParameter("--exact needs --db or --lake (a collector answers with releases)")
    if db is not None or lake is not None:
        from analysis._cells import NotReleased
        from analysis._released import ask_released

        con = _open(db, lake, exact=exact, mirror=mirror)
        try:
            if exact:
                return ask(con, question, filters, k=k, limit=limit)
            return ask_released(con, question, filters, limit=limit)
        except NotCovered as exc:
            not_covered(exc)
        except NotReleased:
            raise typer.BadParameter("that question has no release; use --exact") from None
        except FilterError as exc:
            raise typer.BadParameter(str(exc)) from None
        except duckdb.CatalogException:
            raise typer.BadParameter("--db: no releases in that file; use --exact") from None
        finally:
            con.close()
    if not token:
        raise typer.BadParameter("--url needs a team token (--token or LMCP_TEAM_TOKEN)")
    assert url is not None
    from analysis._remote import RemoteError, fetch_answer

    try:
        return fetch_answer(url, token, question, filters, limit=limit)
    except RemoteError as exc:
        remote_failed(url, exc)


def _limited(answer: Answer[Row], limit: int) -> Answer[Row]:
    """At most ``limit`` rows for every question; for trends, the ``limit`` most recent days."""
    if answer.question is Question.trends:
        trends = [r for r in answer.rows if isinstance(r, TrendRow)]
        keep = set(sorted({r.day for r in trends}, reverse=True)[:limit])
        return replace(answer, rows=tuple(r for r in trends if r.day in keep))
    return replace(answer, rows=answer.rows[:limit])


def emit(answer: Answer[Row], fmt: OutputFormat | None) -> None:
    """Print an answer: a table for people, CSV or JSON (never cut to a width) for machines."""
    chosen = fmt or (OutputFormat.table if console.is_terminal else OutputFormat.csv)
    if chosen is OutputFormat.json:
        typer.echo(json.dumps(answer.to_json(), indent=2))
    elif chosen is OutputFormat.csv:
        from analysis._csv import write_csv  # one CSV definition: the dashboard's exports too

        # The CSV is the rows only; what they cover goes to stderr, for the person running it.
        for line in (answer.note, answer.comparison):
            if line is not None:
                typer.echo(f"note: {line}", err=True)
        write_csv(answer, sys.stdout)
    else:
        console.print(answer_table(answer))


def _command(question: Question) -> Callable[..., None]:
    def command(
        db: DbOpt = None,
        url: UrlOpt = None,
        token: TokenOpt = None,
        start: StartOpt = None,
        end: EndOpt = None,
        platform: PlatformOpt = None,
        version: VersionOpt = None,
        tool: ToolOpt = None,
        k: KOpt = DEFAULT_K,
        limit: LimitOpt = DEFAULT_LIMIT,
        as_json: JsonOpt = False,
        exact: ExactOpt = False,
        lake: LakeOpt = None,
        mirror: MirrorOpt = None,
        fmt: FormatOpt = None,
    ) -> None:
        filters = _filters(start, end, platform, version, tool)
        answer = _answer(
            question,
            db=db,
            url=url,
            token=token,
            filters=filters,
            k=k,
            limit=limit,
            exact=exact,
            lake=lake,
            mirror=mirror,
        )
        emit(_limited(answer, limit), OutputFormat.json if as_json else fmt)

    command.__doc__ = QUESTIONS[question].summary
    return command


for _q in Question:
    app.command(_q.value, help=QUESTIONS[_q].summary)(_command(_q))


@app.command("report")
def report_command(
    db: DbOpt = None,
    url: UrlOpt = None,
    token: TokenOpt = None,
    out: Annotated[Path, typer.Option(help="The HTML file to write.")] = Path("triage.html"),
    markdown: Annotated[
        Path | None, typer.Option(help="Also write Markdown here (charts beside it as SVG).")
    ] = None,
    png_dir: Annotated[
        Path | None, typer.Option(help="Also write each chart as PNG into this folder.")
    ] = None,
    start: StartOpt = None,
    end: EndOpt = None,
    platform: PlatformOpt = None,
    version: VersionOpt = None,
    tool: ToolOpt = None,
    k: KOpt = DEFAULT_K,
    exact: ExactOpt = False,
    lake: LakeOpt = None,
    mirror: MirrorOpt = None,
) -> None:
    """Write the self-contained HTML triage report (offline: inline SVG charts, no script)."""
    from analysis._released import RELEASED_QUESTIONS
    from analysis._remote import RemoteError, fetch_answer
    from analysis.report import answer_all, build_report, write_pngs, write_report

    filters = _filters(start, end, platform, version, tool)
    if (db is None) != (lake is None) and url is None:
        con = _open(db, lake, exact=exact, mirror=mirror)
        try:
            answers = answer_all(con, filters, k=k, exact=exact)
        except NotCovered as exc:
            not_covered(exc)
        except duckdb.CatalogException:
            raise typer.BadParameter("--db: no releases in that file; use --exact") from None
        finally:
            con.close()
    else:
        answers = []
        for q in RELEASED_QUESTIONS:
            try:
                answers.append(
                    fetch_answer(str(url), str(token), q, filters, limit=DEFAULT_LIMIT)
                    if url and token and db is None
                    else _answer(q, db=db, url=url, token=token, filters=filters, k=k,
                                 limit=DEFAULT_LIMIT)
                )  # fmt: skip
            except RemoteError as exc:
                if exc.code != "invalid_filter":
                    remote_failed(str(url), exc)
    if not answers:
        raise typer.BadParameter("no released question takes those filters")
    report = build_report(answers)
    written = write_report(report, out, markdown)
    if png_dir is not None:
        written += write_pngs(answers, png_dir)
    for path in written:
        console.print(f"wrote [bold]{path}[/bold]", soft_wrap=True)


# The commands over a whole file (release, synth) live beside: this module keeps the questions.
from analysis._cli_data import register  # noqa: E402

register(app)
from analysis._cli_publish import register as register_publish  # noqa: E402

register_publish(app)

from analysis.alerts import register as register_alerts  # noqa: E402

register_alerts(app)
