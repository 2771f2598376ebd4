"""``lmcp analysis release`` and ``synth``: commands over a whole DuckDB file."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import duckdb
import typer

from client._console import make_console

if TYPE_CHECKING:
    from rich.progress import Progress

__all__ = ["register", "release_command", "synth_command", "synth_progress"]

console = make_console()
err = make_console(stderr=True)


def register(app: typer.Typer) -> None:
    app.command("release")(release_command)
    app.command("synth")(synth_command)


def release_command(
    db: Annotated[Path, typer.Option("--db", help="A DuckDB file with a signals table.")],
) -> None:
    """Release a file's closed periods as the collector's job does (once, at its settings)."""
    from collector.releases.store import release_closed_periods
    from collector.settings import CollectorSettings
    from contract.days import utc_today

    if not db.is_file():
        raise typer.BadParameter("--db: no file there")
    settings = CollectorSettings()
    with duckdb.connect(str(db)) as con, synth_progress() as progress:
        task = progress.add_task("releasing", total=None)
        done = release_closed_periods(
            con, utc_today(), settings.checked_release_plan(),
            retention_days=settings.retention_days,
            progress=lambda i, n: progress.update(task, completed=i, total=n),
        )  # fmt: skip
    console.print(f"released {len(done):,} (cube, period) pairs in {db}", soft_wrap=True)


def synth_command(
    signals: Annotated[int, typer.Option(min=1, help="How many signals to add.")],
    db: Annotated[Path, typer.Option("--db", help="The DuckDB file (created if missing).")],
    end_day: Annotated[
        str | None, typer.Option(help="Last day of the 90 generated days (default: today).")
    ] = None,
) -> None:
    """Add realistic, skewed synthetic signals to a DuckDB file (generated inside DuckDB)."""
    end = None
    if end_day is not None:
        try:
            end = dt.date.fromisoformat(end_day)
        except ValueError:
            raise typer.BadParameter("--end-day must be a date like 2026-01-31") from None
    from analysis._synth import synthesize

    with synth_progress() as progress:
        task = progress.add_task("synthesizing", total=signals)
        total = synthesize(
            db, signals, end_day=end, progress=lambda done: progress.update(task, completed=done)
        )
    console.print(f"{total:,} signals in {db}", soft_wrap=True)


def synth_progress() -> Progress:
    """The bar of ``synth``: rows written, elapsed and the time left (it moves once per chunk,
    ``analysis._synth.CHUNK_ROWS`` rows)."""
    from rich import progress as bar

    return bar.Progress(
        "[progress.description]{task.description}", bar.BarColumn(), bar.MofNCompleteColumn(),
        bar.TimeElapsedColumn(), "ETA", bar.TimeRemainingColumn(), console=err,
    )  # fmt: skip
