"""The lake's releases: each closed, compacted day released ONCE, in a Delta table of its own.

Where: ``<lake>/_releases``, a Delta table partitioned by ``day`` (``collector.lake.side``).
One released day is ONE commit holding, per cube, a record row (``key`` NULL: the
calibration, the threshold and the number of cells, the file mode's ``release_days``) and the
day's cells (``release_cells``). A day with files in the table is released, whole.

Once only, with any number of jobs: ``release`` pins the table's version, skips a day that
version holds, computes the day with ``collector.releases`` (the file mode's code, over the
lake's ``signals`` view of that day) and commits an overwrite of the day's partition checked
against the version it read. A concurrent job that committed the day first makes delta-rs
refuse the commit ("a concurrent transaction added new data"): this job's draw is dropped,
never stored or shown. A version that already holds the day is never committed over, so a
stored release is never replaced (two draws of one day would let their difference be
averaged away).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
from deltalake import CommitProperties, DeltaTable, write_deltalake
from deltalake.exceptions import CommitFailedError, TableNotFoundError

from collector.db import migrate
from collector.lake.bounded import DEFAULT_MEMORY_LIMIT, bounded_connection
from collector.lake.side import SideTable
from collector.lake.store import MAX_COMMIT_RETRIES, LakeStore
from collector.releases.cubes import CUBES
from collector.releases.store import PrivacyParams, release_day
from collector.retention import first_kept_day

__all__ = [
    "RELEASES_DIR",
    "RELEASE_SCHEMA",
    "LakeReleases",
    "ReleaseResult",
    "connect",
    "load_releases",
    "release",
    "released_rows",
]

RELEASES_DIR = "_releases"
_DAY = "day"
#: ``key`` NULL marks a (cube, day) record (``n``: its number of cells); otherwise a cell.
RELEASE_SCHEMA = pa.schema(
    [
        pa.field("cube", pa.string()),
        pa.field("key", pa.string()),
        pa.field("n", pa.int64()),
        pa.field("threshold", pa.int64()),
        pa.field("params", pa.string()),
        pa.field(_DAY, pa.date32()),
    ]
)
_AS_ROWS = """
    SELECT cube, NULL::VARCHAR AS key, cells AS n, threshold, params, day FROM release_days
    UNION ALL
    SELECT cube, key, n, NULL::BIGINT, NULL::VARCHAR, day FROM release_cells
    ORDER BY day, cube, key NULLS FIRST
"""


@dataclass(frozen=True, slots=True)
class ReleaseResult:
    day: dt.date
    #: ``released`` by this job, or ``taken``: another job committed the day first.
    status: str
    cells: int


class LakeReleases(SideTable):
    """The releases table of the lake at ``store.uri``."""

    def __init__(self, store: LakeStore) -> None:
        super().__init__(store, RELEASES_DIR, RELEASE_SCHEMA, _DAY, "releases")

    def days(self, table: DeltaTable | None = None) -> set[dt.date]:
        """The released days of ``table``'s version (default: the newest)."""
        try:
            return {f.day for f in self.files(table or self.table())}
        except TableNotFoundError:
            return set()

    def retain(self, first_kept: dt.date, grace_hours: int) -> tuple[int, int]:
        """Delete the released cells before ``first_kept`` and VACUUM their files; return
        (rows deleted, files deleted)."""
        if not self.exists():
            return 0, 0
        metrics = self.table().delete(
            f"{_DAY} < '{first_kept.isoformat()}'",
            commit_properties=CommitProperties(custom_metadata={"lmcp.job": "retain"}),
        )
        vacuumed = self.table().vacuum(
            retention_hours=grace_hours, enforce_retention_duration=False, dry_run=False
        )
        return int(metrics.get("num_deleted_rows", 0) or 0), len(vacuumed)


def released_rows(
    store: LakeStore,
    table: DeltaTable,
    day: dt.date,
    params: PrivacyParams,
    *,
    memory_limit: str = DEFAULT_MEMORY_LIMIT,
) -> pa.Table:
    """One draw of every cube for ``day`` (all its files compacted) as ``RELEASE_SCHEMA``
    rows: ``collector.releases`` run over the lake's ``signals`` view of that day, scanned
    lazily (never copied in) by a connection that spills past ``memory_limit``."""
    with bounded_connection(memory_limit) as con:
        migrate(con)  # the release tables and the signals' ENUM types, as in the file
        con.execute("DROP TABLE signals")
        store.signals_relation(con, table=table, days=[day], lazy=True)
        for cube in CUBES:
            release_day(con, cube, day, params)
        return con.sql(_AS_ROWS).to_arrow_table().cast(RELEASE_SCHEMA)


def release(
    store: LakeStore,
    today: dt.date,
    params: PrivacyParams,
    *,
    retention_days: int,
    memory_limit: str = DEFAULT_MEMORY_LIMIT,
    before_commit: Callable[[dt.date], None] | None = None,
) -> list[ReleaseResult]:
    """Release every closed, compacted day in the retention window not released yet.

    A day before the window is never released: its releases may have been deleted by
    retention already, and releasing it again would be a second draw. ``before_commit`` runs
    after a day was computed and before its commit (tests race two jobs there). DuckDB holds
    at most ``memory_limit`` per day (``collector.lake.bounded``).
    """
    releases = LakeReleases(store)
    kept = first_kept_day(today, retention_days)
    table = store.table()  # one version of the signals: which days are ready, and their rows
    ready = [d.day for d in store.days(table) if kept <= d.day < today and d.compacted]
    if not ready:
        return []
    releases.create()
    out: list[ReleaseResult] = []
    for day in ready:
        pinned = releases.table()  # the version checked, and the one the commit is checked against
        if day in releases.days(pinned):
            continue
        rows = released_rows(store, table, day, params, memory_limit=memory_limit)
        if before_commit is not None:
            before_commit(day)
        try:
            write_deltalake(
                pinned,
                rows,
                mode="overwrite",
                predicate=f"{_DAY} = '{day.isoformat()}'",
                partition_by=[_DAY],
                commit_properties=CommitProperties(
                    custom_metadata={"lmcp.job": "release", "lmcp.day": day.isoformat()},
                    max_commit_retries=MAX_COMMIT_RETRIES,
                ),
            )
        except CommitFailedError:
            if day not in releases.days():
                raise
            out.append(ReleaseResult(day, "taken", 0))
            continue
        cells = rows.filter(pc.is_valid(rows.column("key"))).num_rows
        out.append(ReleaseResult(day, "released", cells))
    return out


def load_releases(con: duckdb.DuckDBPyConnection, rows: pa.Table) -> None:
    """Replace ``release_days`` and ``release_cells`` (the collector's migration tables) on
    ``con`` with ``rows`` (``LakeReleases.read``), in one transaction."""
    con.register("_lake_releases", rows)
    try:
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute("DELETE FROM release_cells")
            con.execute("DELETE FROM release_days")
            con.execute(
                "INSERT INTO release_days SELECT cube, day, params, threshold, n "
                "FROM _lake_releases WHERE key IS NULL"
            )
            con.execute(
                "INSERT INTO release_cells SELECT cube, day, key, n "
                "FROM _lake_releases WHERE key IS NOT NULL"
            )
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    finally:
        con.unregister("_lake_releases")


def connect(store: LakeStore, *, raw: bool = False) -> duckdb.DuckDBPyConnection:
    """An in-memory connection holding the lake's released cells as the file holds them
    (``release_days``, ``release_cells``); ``raw``: also the ``signals`` view (each id once)."""
    con = duckdb.connect(":memory:")
    try:
        con.execute("SET enable_progress_bar = false")
        migrate(con)  # the release tables and the ENUM types, as in a file
        con.execute("DROP TABLE signals")  # no raw row unless asked for
        load_releases(con, LakeReleases(store).read())
        if raw:
            store.signals_relation(con)
    except BaseException:
        con.close()
        raise
    return con
