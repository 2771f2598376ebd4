"""The lake's releases: each closed, ready period released ONCE, in a Delta table of its own.

Where: ``<lake>/_releases``, a Delta table partitioned by ``day``, a period's first day
(``collector.lake.side``). A period is the file mode's (``collector.releases.store``): a UTC
week from its Monday for the weekly cubes, one UTC day for ``daily``; a signal counts in the
period of its own ``day``. Per cube a period is a record row (``key`` NULL: kind, scale,
threshold, number of cells and the accountant's figures, the file mode's
``release_periods``) and its cells (``release_cells``): every cell of a known domain, noisy,
possibly negative; ``ring3``'s cells above its threshold.

Which periods: every period closed on ``today`` (``contract.days.closed``) whose first day is
inside the retention window (and at most ``backfill_days`` back), empty ones too -- once every
received day of the lake that can hold its signals (its first day - 1, a clock east of UTC,
to its last day + ``LATE_DAYS``) is compacted: then the lake's ``signals`` view restricted to
those received days holds each of its signals once. A lake with no signals table releases
nothing (no collector ever wrote to it).

Once only, with any number of jobs: ``release`` pins the table's version, skips the (cube,
period) pairs that version holds, computes the rest of one first day with
``collector.releases`` (the file mode's code, one DuckDB connection for all its cubes) and
commits them as ONE overwrite of exactly those cubes' rows of that day, checked against the
version it read. A concurrent job that committed that day first makes delta-rs refuse the
commit ("a concurrent transaction ..."): this job's draw is dropped, never stored or shown.
A version that already holds a (cube, period) is never committed over, so a stored release
is never replaced (two draws of one period would let their difference be averaged away).

Alerts: after a run, ``send_lake_alerts`` POSTs the alerts of what that run committed to the
configured webhook (``collector.webhook``), computed from the lake's released cells; a day
another job committed first is that job's to alert, so each closed week is alerted once.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
from deltalake import CommitProperties, DeltaTable, write_deltalake
from deltalake.exceptions import CommitFailedError, TableNotFoundError

from collector.db import migrate
from collector.lake.bounded import DEFAULT_MEMORY_LIMIT, bounded_connection
from collector.lake.side import SideTable
from collector.lake.store import MAX_COMMIT_RETRIES, DayStatus, LakeStore
from collector.releases.cubes import CUBES
from collector.releases.store import count_period, draw_period, store_period
from collector.retention import first_kept_day
from collector.webhook import Webhook, send_alerts
from contract.accountant import DEFAULT_WINDOW_DAYS, ReleasePlan
from contract.days import closed, period_end, periods_between
from contract.limits import LATE_DAYS

__all__ = [
    "RELEASES_DIR",
    "RELEASE_SCHEMA",
    "LakeReleases",
    "ReleaseResult",
    "connect",
    "due_periods",
    "load_releases",
    "release",
    "released_pairs",
    "released_rows",
    "send_lake_alerts",
    "signal_days",
]

log = logging.getLogger("collector")
RELEASES_DIR = "_releases"
_DAY = "day"
_ONE = dt.timedelta(days=1)
#: ``key`` NULL marks a (cube, period) record (``n``: its number of cells; ``kind``,
#: ``scale``, ``threshold``, ``params`` as in ``release_periods``); otherwise a cell.
RELEASE_SCHEMA = pa.schema(
    [
        pa.field("cube", pa.string()),
        pa.field("key", pa.string()),
        pa.field("n", pa.int64()),
        pa.field("kind", pa.string()),
        pa.field("scale", pa.float64()),
        pa.field("threshold", pa.int64()),
        pa.field("params", pa.string()),
        pa.field(_DAY, pa.date32()),
    ]
)
_AS_ROWS = """
    SELECT cube, NULL::VARCHAR AS key, cells AS n, kind, scale, threshold, params, day
    FROM release_periods
    UNION ALL
    SELECT cube, key, n, NULL::VARCHAR, NULL::DOUBLE, NULL::BIGINT, NULL::VARCHAR, day
    FROM release_cells
    ORDER BY day, cube, key NULLS FIRST
"""


@dataclass(frozen=True, slots=True)
class ReleaseResult:
    """One commit: the periods starting on ``day`` of ``cubes``."""

    day: dt.date
    #: ``released`` by this job, or ``taken``: another job committed the day first.
    status: str
    cells: int
    cubes: tuple[str, ...] = ()

    @property
    def kinds(self) -> tuple[str, ...]:
        """The kinds of period committed (``week``, ``day``), each once, in order."""
        return tuple(sorted({CUBES[c].kind.value for c in self.cubes}, reverse=True))


class LakeReleases(SideTable):
    """The releases table of the lake at ``store.uri``."""

    def __init__(self, store: LakeStore) -> None:
        super().__init__(store, RELEASES_DIR, RELEASE_SCHEMA, _DAY, "releases")

    def days(self, table: DeltaTable | None = None) -> set[dt.date]:
        """The first days with a released period in ``table``'s version (default: newest)."""
        try:
            return {f.day for f in self.files(table or self.table())}
        except TableNotFoundError:
            return set()

    def periods(self, table: DeltaTable | None = None) -> set[tuple[str, dt.date]]:
        """The released (cube, first day) pairs of ``table``'s version (default: newest)."""
        try:
            dtable = table or self.table()
        except TableNotFoundError:
            return set()
        if not self.files(dtable):
            return set()
        records = dtable.to_pyarrow_dataset().to_table(
            columns=["cube", _DAY], filter=pc.field("key").is_null()
        )
        cols = [records.column(c).to_pylist() for c in ("cube", _DAY)]
        return set(zip(*cols, strict=True))

    def retain(self, first_kept: dt.date, grace_hours: int) -> tuple[int, int]:
        """Delete the released periods starting before ``first_kept`` and VACUUM their
        files; return (rows deleted, files deleted)."""
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


def signal_days(cube: str, day: dt.date) -> tuple[dt.date, dt.date]:
    """The received days that can hold signals of ``cube``'s period starting on ``day``:
    from the day before (a clock east of UTC) to ``LATE_DAYS`` after its last day."""
    return day - _ONE, period_end(CUBES[cube].kind, day) + dt.timedelta(days=LATE_DAYS)


def _received(days: Iterable[DayStatus], first: dt.date, last: dt.date) -> list[DayStatus]:
    return [d for d in days if first <= d.day <= last]


def due_periods(
    lake_days: Collection[DayStatus],
    done: Collection[tuple[str, dt.date]],
    today: dt.date,
    retention_days: int,
    *,
    backfill_days: int = DEFAULT_WINDOW_DAYS,
    cubes: Iterable[str] = tuple(CUBES),
) -> dict[dt.date, list[str]]:
    """Per first day, the cubes whose period is closed on ``today``, starts inside the
    window (at most ``backfill_days`` back), is not in ``done``, and whose received days
    (``signal_days``) present in ``lake_days`` are all compacted."""
    first = max(first_kept_day(today, retention_days), today - dt.timedelta(days=backfill_days))
    out: dict[dt.date, list[str]] = {}
    for name in cubes:
        kind = CUBES[name].kind
        for day in periods_between(kind, first, today):
            if not closed(kind, day, today) or (name, day) in done:
                continue
            if all(d.compacted for d in _received(lake_days, *signal_days(name, day))):
                out.setdefault(day, []).append(name)
    return dict(sorted(out.items()))


def released_rows(
    store: LakeStore,
    table: DeltaTable,
    day: dt.date,
    cubes: Iterable[str],
    plan: ReleasePlan,
    *,
    lake_days: Collection[DayStatus] | None = None,
    memory_limit: str = DEFAULT_MEMORY_LIMIT,
) -> pa.Table:
    """One draw of the periods of ``cubes`` starting on ``day`` (their received days all
    compacted) as ``RELEASE_SCHEMA`` rows: ``collector.releases`` run over the lake's
    ``signals`` view of those received days, scanned lazily (never copied in) by ONE
    connection that spills past ``memory_limit``."""
    names = list(cubes)
    present = store.days(table) if lake_days is None else lake_days
    received: set[dt.date] = set()
    for name in names:
        received |= {d.day for d in _received(present, *signal_days(name, day))}
    with bounded_connection(memory_limit) as con:
        migrate(con)  # the release tables and the signals' ENUM types, as in the file
        if received:  # none: the (empty) signals table of the migrations stays
            con.execute("DROP TABLE signals")
            store.signals_relation(con, table=table, days=received, lazy=True)
        for name in names:
            store_period(con, draw_period(count_period(con, name, day), plan))
        return con.sql(_AS_ROWS).to_arrow_table().cast(RELEASE_SCHEMA)


def _cube_list(cubes: Iterable[str]) -> str:
    return ", ".join(f"'{c}'" for c in cubes)  # cube names are identifiers: no quote


def release(
    store: LakeStore,
    today: dt.date,
    plan: ReleasePlan,
    *,
    retention_days: int,
    backfill_days: int = DEFAULT_WINDOW_DAYS,
    memory_limit: str = DEFAULT_MEMORY_LIMIT,
    before_commit: Callable[[dt.date], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[ReleaseResult]:
    """Release every due period (``due_periods``); one commit per first day.

    A period before the window is never released: its releases may have been deleted by
    retention already, and releasing it again would be a second draw. ``before_commit`` runs
    after a day was computed and before its commit (tests race two jobs there);
    ``progress(done, total)`` after each day. DuckDB holds at most ``memory_limit`` per day
    (``collector.lake.bounded``).
    """
    if not store.exists():
        return []
    releases = LakeReleases(store)
    table = store.table()  # one version of the signals: which periods are ready, and their rows
    lake_days = store.days(table)
    due = due_periods(
        lake_days, releases.periods(), today, retention_days, backfill_days=backfill_days
    )
    if not due:
        return []
    releases.create()
    out: list[ReleaseResult] = []
    for i, (day, wanted) in enumerate(due.items(), 1):
        pinned = releases.table()  # the version checked, and the one the commit is checked against
        done = releases.periods(pinned)
        cubes = [c for c in wanted if (c, day) not in done]
        if cubes:
            out.append(
                _commit(store, releases, table, pinned, day, cubes, plan, lake_days,
                        memory_limit, before_commit)
            )  # fmt: skip
        if progress is not None:
            progress(i, len(due))
    return out


def _commit(
    store: LakeStore,
    releases: LakeReleases,
    table: DeltaTable,
    pinned: DeltaTable,
    day: dt.date,
    cubes: list[str],
    plan: ReleasePlan,
    lake_days: Collection[DayStatus],
    memory_limit: str,
    before_commit: Callable[[dt.date], None] | None,
) -> ReleaseResult:
    rows = released_rows(
        store, table, day, cubes, plan, lake_days=lake_days, memory_limit=memory_limit
    )
    if before_commit is not None:
        before_commit(day)
    try:
        write_deltalake(
            pinned,
            rows,
            mode="overwrite",
            # Only these cubes' rows of the day: a day's other periods (the daily cube's
            # Monday, released days before its week) stay as committed.
            predicate=f"{_DAY} = '{day.isoformat()}' AND cube IN ({_cube_list(cubes)})",
            partition_by=[_DAY],
            commit_properties=CommitProperties(
                custom_metadata={
                    "lmcp.job": "release",
                    "lmcp.day": day.isoformat(),
                    "lmcp.cubes": ",".join(cubes),
                },
                max_commit_retries=MAX_COMMIT_RETRIES,
            ),
        )
    except CommitFailedError:
        if not releases.periods() & {(c, day) for c in cubes}:
            raise
        return ReleaseResult(day, "taken", 0, tuple(cubes))
    cells = rows.filter(pc.is_valid(rows.column("key"))).num_rows
    return ReleaseResult(day, "released", cells, tuple(cubes))


def load_releases(con: duckdb.DuckDBPyConnection, rows: pa.Table) -> None:
    """Replace ``release_periods`` and ``release_cells`` (the collector's migration tables)
    on ``con`` with ``rows`` (``LakeReleases.read``), in one transaction."""
    con.register("_lake_releases", rows)
    try:
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute("DELETE FROM release_cells")
            con.execute("DELETE FROM release_periods")
            con.execute(
                "INSERT INTO release_periods SELECT cube, day, kind, scale, threshold, n, params "
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
    (``release_periods``, ``release_cells``); ``raw``: also the ``signals`` view (each id once)."""
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


def released_pairs(results: Iterable[ReleaseResult]) -> list[tuple[str, dt.date]]:
    """The (cube, first day) pairs these results committed; a day another job committed
    first (``taken``) is that job's to alert."""
    return [(c, r.day) for r in results if r.status == "released" for c in r.cubes]


def send_lake_alerts(
    store: LakeStore, hook: Webhook, results: Iterable[ReleaseResult]
) -> bool | None:
    """The alerts of one ``release`` run, from the lake's released cells, POSTed to ``hook``
    (``collector.webhook.send_alerts``: None when there is nothing to send; never raises)."""
    released = released_pairs(results)
    if not released:
        return None
    try:
        con = connect(store)
    except Exception as exc:  # the releases are committed: an alert never fails the job
        log.error("alerts not computed: %s", type(exc).__name__)
        return False
    try:
        return send_alerts(hook, con, released)
    finally:
        con.close()
