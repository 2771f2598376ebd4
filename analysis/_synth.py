"""Synthetic signals at scale, generated inside DuckDB (``sql/synth.sql``).

Used by ``lmcp analysis synth`` and the benchmarks. The table is created by the collector's
own migrations, so a synthetic file can be opened by the collector and by every query.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import duckdb

from analysis._questions import load_query
from contract.days import utc_today

__all__ = ["CHUNK_ROWS", "synthesize"]

#: Rows per INSERT: bounds memory, and lets a progress bar move at least every 100k rows.
CHUNK_ROWS = 100_000


def _migrate(con: duckdb.DuckDBPyConnection) -> None:
    from collector.db import migrate  # the collector's migrations, same ledger

    migrate(con)


def synthesize(
    path: Path | str,
    signals: int,
    *,
    end_day: dt.date | None = None,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Add ``signals`` synthetic signals to the DuckDB file at ``path`` (created if missing).

    Days span the 90 days up to ``end_day`` (default: today, UTC). ``progress`` is called with
    the number of rows written after each chunk. Returns the table's row count.
    """
    if signals < 0:
        raise ValueError("signals must be non-negative")
    end = end_day or utc_today()
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    text, _ = load_query("synth")
    con = duckdb.connect(str(target))
    try:
        con.execute("SET enable_progress_bar = false")
        _migrate(con)
        row = con.execute("SELECT count(*) FROM signals").fetchone()
        first = int(row[0]) if row else 0
        done = 0
        while done < signals:
            count = min(CHUNK_ROWS, signals - done)
            con.execute(text, {"first": first + done, "count": count, "end_day": end})
            done += count
            if progress is not None:
                progress(done)
        con.execute("CHECKPOINT")
        row = con.execute("SELECT count(*) FROM signals").fetchone()
        return int(row[0]) if row else 0
    finally:
        con.close()
