"""The typed Python API: one function per triage question, plus opening an exported copy.

    >>> con = open_db("signals.duckdb")
    >>> for row in top(con, Filters(platform=Platform.windows)).rows:
    ...     print(row.tool, row.error_class, row.n, row.change_pct)

Every function takes a DuckDB connection whose ``signals`` table follows the collector's
migrations (an exported copy, or the collector's own connection inside ``Database.run``).
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from analysis._filters import Filters, Period
from analysis._questions import DEFAULT_K, DEFAULT_LIMIT, Answer, run_sql
from analysis._registry import Question
from analysis._released import ask
from analysis._rows import (
    AppRow,
    AttemptRow,
    IntentRow,
    PlatformRow,
    RegressionRow,
    RingRow,
    ShapeRow,
    TopRow,
    TrendRow,
)

__all__ = [
    "apps",
    "attempts",
    "intents",
    "open_db",
    "open_lake",
    "platforms",
    "regressions",
    "ring",
    "shapes",
    "top",
    "trends",
]


def open_db(path: Path | str) -> duckdb.DuckDBPyConnection:
    """Open an exported copy: a DuckDB file (a stopped collector's, or a copy of it), read-only;
    or a Parquet export (``GET /v1/signals/export?format=parquet``), loaded into memory."""
    target = Path(path)
    if not target.is_file():
        raise FileNotFoundError("no file at the given path")
    if target.suffix.lower() == ".parquet":
        return _load_parquet(target)
    con = duckdb.connect(str(target), read_only=True)
    con.execute("SET enable_progress_bar = false")
    return con


def open_lake(
    uri: str, *, raw: bool = False, mirror: Path | None = None
) -> duckdb.DuckDBPyConnection:
    """Open a lake (a Delta table's folder or ``s3://`` URI; S3 credentials from the
    ``LMCP_COLLECTOR_LAKE_S3_*`` settings): an in-memory connection holding the lake's
    released cells (``release_periods``, ``release_cells``, as in a file; ``lmcp lake release``
    stores them). ``raw``: also ``signals``, a view over the table's current files, each id
    once (``collector/lake/store.py``), the steward's view. ``mirror`` (with ``raw``): the
    connection is on that local DuckDB copy of the compacted days instead, synced first
    (``collector/lake/mirror.py``; raises ``MirrorError`` for a file it must not touch)."""
    from collector.mode import open_lake_analysis  # the [lake] extra, behind the mode seam

    return open_lake_analysis(uri, raw=raw, mirror=mirror)


def _load_parquet(target: Path) -> duckdb.DuckDBPyConnection:
    from collector.db import migrate  # the same table, types and ENUMs

    con = duckdb.connect(":memory:")
    try:
        con.execute("SET enable_progress_bar = false")
        migrate(con)
        run_sql(con, "load_parquet", {"path": str(target)})
    except BaseException:
        con.close()
        raise
    return con


def top(
    con: duckdb.DuckDBPyConnection,
    filters: Filters | None = None,
    *,
    k: int = DEFAULT_K,
    limit: int = DEFAULT_LIMIT,
    period: Period | None = None,
) -> Answer[TopRow]:
    """Top friction (tool x error class x friction type) with the change against last period."""
    return ask(con, Question.top, filters, k=k, limit=limit, period=period).narrow(TopRow)


def trends(
    con: duckdb.DuckDBPyConnection,
    filters: Filters | None = None,
    *,
    k: int = DEFAULT_K,
    period: Period | None = None,
) -> Answer[TrendRow]:
    """Signals per day, per friction type and in all, with spikes flagged."""
    return ask(con, Question.trends, filters, k=k, period=period).narrow(TrendRow)


def regressions(
    con: duckdb.DuckDBPyConnection,
    filters: Filters | None = None,
    *,
    k: int = DEFAULT_K,
    limit: int = DEFAULT_LIMIT,
    period: Period | None = None,
) -> Answer[RegressionRow]:
    """Friction new or growing in a client version against the versions before it."""
    answer = ask(con, Question.regressions, filters, k=k, limit=limit, period=period)
    return answer.narrow(RegressionRow)


def platforms(
    con: duckdb.DuckDBPyConnection,
    filters: Filters | None = None,
    *,
    k: int = DEFAULT_K,
    period: Period | None = None,
) -> Answer[PlatformRow]:
    """Signals per platform and tool."""
    return ask(con, Question.platforms, filters, k=k, period=period).narrow(PlatformRow)


def apps(
    con: duckdb.DuckDBPyConnection,
    filters: Filters | None = None,
    *,
    k: int = DEFAULT_K,
    period: Period | None = None,
) -> Answer[AppRow]:
    """App not installed / not running / not permitted, against genuine tool failures."""
    return ask(con, Question.apps, filters, k=k, period=period).narrow(AppRow)


def shapes(
    con: duckdb.DuckDBPyConnection,
    filters: Filters | None = None,
    *,
    k: int = DEFAULT_K,
    limit: int = DEFAULT_LIMIT,
    period: Period | None = None,
) -> Answer[ShapeRow]:
    """Argument type x size-bucket combinations that fail, per tool."""
    answer = ask(con, Question.shapes, filters, k=k, limit=limit, period=period)
    return answer.narrow(ShapeRow)


def ring(
    con: duckdb.DuckDBPyConnection,
    filters: Filters | None = None,
    *,
    k: int = DEFAULT_K,
    limit: int = DEFAULT_LIMIT,
    period: Period | None = None,
) -> Answer[RingRow]:
    """The most common 2- and 3-call sequences ending in a failure (``limit`` each)."""
    return ask(con, Question.ring, filters, k=k, limit=limit, period=period).narrow(RingRow)


def intents(
    con: duckdb.DuckDBPyConnection,
    filters: Filters | None = None,
    *,
    k: int = DEFAULT_K,
    period: Period | None = None,
) -> Answer[IntentRow]:
    """What users were trying to do."""
    return ask(con, Question.intents, filters, k=k, period=period).narrow(IntentRow)


def attempts(
    con: duckdb.DuckDBPyConnection,
    filters: Filters | None = None,
    *,
    k: int = DEFAULT_K,
    period: Period | None = None,
) -> Answer[AttemptRow]:
    """How many attempts came before the report."""
    return ask(con, Question.attempts, filters, k=k, period=period).narrow(AttemptRow)
