"""``LakeStore``: the signals as one Delta Lake table, partitioned by ``received_day``.

- ``append`` is one Delta commit (delta-rs's optimistic concurrency: a commit creates
  ``_delta_log/<version>.json`` only if absent, and retries on the next version when another
  writer got there first). It returns only once the commit is durable.
- Retries of one batch may land on different collectors, so the table may hold an id more
  than once. Rows carry ``compacted``: False as appended, True once ``compact_day`` rewrote
  their day. Invariant: compacted rows hold each ``signal_id`` once across the whole table
  (``collector/lake/jobs.py``), so reads de-duplicate only the rows not compacted yet.
- ``signals_relation`` gives DuckDB a ``signals`` view with the collector table's columns and
  types (ENUMs included, from the migrations), so the same ``.sql`` files run on either mode.
"""

from __future__ import annotations

import datetime as dt
import functools
import threading
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import duckdb
import pyarrow as pa
from deltalake import (
    CommitProperties,
    DeltaTable,
    PostCommitHookProperties,
    Transaction,
    write_deltalake,
)
from deltalake.exceptions import CommitFailedError, TableNotFoundError

from collector.lake.files import PARTITION, LakeReader, lake_files
from collector.rows import ROWS

__all__ = [
    "LAKE_SCHEMA",
    "TABLE_CONFIGURATION",
    "LakeStore",
    "SignalColumns",
    "lake_rows",
    "shaped_columns",
    "signal_columns",
]

#: Delta has no unsigned integers and no UUID: ids are their 16 bytes (byte order is UUID
#: order), unsigned columns widen to the next signed type. ``compacted`` marks rewritten rows.
_WIDEN = {pa.uint8(): pa.int16(), pa.uint16(): pa.int32()}
LAKE_SCHEMA = pa.schema(
    [pa.field("signal_id", pa.binary(16), nullable=False)]
    + [pa.field(f.name, _WIDEN.get(f.type, f.type)) for f in list(ROWS)[1:]]
    + [pa.field("received_day", pa.date32()), pa.field("compacted", pa.bool_())]
)
#: The Delta log keeps per-file column statistics (min/max), and each commit's time to the
#: millisecond, for as long as the log is kept, also after compaction and VACUUM deleted the
#: files: a one-signal flush's min/max would be that signal's values at its arrival time.
#: Statistics are kept for ``compacted`` only (``lake_files`` reads it).
#: The log stays small: a checkpoint every ``delta.checkpointInterval`` versions (written by
#: ``LakeStore.maintain``, off the request path), and log entries older than the retention
#: and before the newest checkpoint deleted then. Two days: no reader needs an older
#: version (every job reads the newest), and the log's commit times age out with it.
TABLE_CONFIGURATION = {
    "delta.dataSkippingStatsColumns": "compacted",
    "delta.checkpointInterval": "100",
    "delta.logRetentionDuration": "interval 2 days",
    "delta.enableExpiredLogCleanup": "true",
}
#: Commits a writer may retry after losing the race for a version (3 busy collectors lose
#: several in a row; each retry re-reads only the new log entries).
MAX_COMMIT_RETRIES = 200
#: Appends tried again after a refusal for a stale read version (a job committed meanwhile).
STALE_RETRIES = 3
#: A commit writes no checkpoint and deletes no log entry itself: ``maintain`` does both,
#: timed, from the shipper or a job, never on a request's path.
NO_HOOKS = PostCommitHookProperties(create_checkpoint=False, cleanup_expired_logs=False)


def lake_rows(rows: pa.Table, received_day: dt.date, *, compacted: bool = False) -> pa.Table:
    """A flush's rows (``collector.rows.ROWS``) as ``LAKE_SCHEMA`` rows of ``received_day``."""
    ids = rows.column("signal_id")
    if isinstance(ids.type, pa.ExtensionType):
        ids = pa.chunked_array([c.storage for c in ids.chunks], ids.type.storage_type)
    arrays: list[Any] = [ids.cast(pa.binary(16))]
    for field in list(LAKE_SCHEMA)[1:-2]:
        arrays.append(rows.column(field.name).cast(field.type))
    n = rows.num_rows
    arrays.append(pa.array([received_day] * n, pa.date32()))
    arrays.append(pa.array([compacted] * n, pa.bool_()))
    return pa.Table.from_arrays(arrays, schema=LAKE_SCHEMA)


#: The collector's ``signals`` columns as (name, DuckDB type), and its ENUM types as (name,
#: values), in order.
SignalColumns = tuple[tuple[tuple[str, str], ...], tuple[tuple[str, tuple[str, ...]], ...]]


# Cached: the shape follows from the migrations shipped with the code, so it cannot change in
# a running process, and each reading costs a fresh in-memory database (every lake query asks).
@functools.cache
def signal_columns() -> SignalColumns:
    """The collector's ``signals`` columns with their DuckDB types, and its ENUM types with
    their values, in order (the queries cast to them by name), from the migrations."""
    from collector.db import migrate

    con = duckdb.connect(":memory:")
    try:
        migrate(con)
        rows = con.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = 'signals' ORDER BY ordinal_position"
        ).fetchall()
        names = [
            str(r[0])
            for r in con.execute(
                "SELECT type_name FROM duckdb_types() WHERE NOT internal AND logical_type = 'ENUM'"
            ).fetchall()
        ]
        enums: list[tuple[str, tuple[str, ...]]] = []
        for n in names:
            found = con.execute(f"SELECT enum_range(NULL::{n})").fetchone()
            enums.append((n, tuple(str(v) for v in (found[0] if found else []))))
    finally:
        con.close()
    return tuple((str(name), str(kind)) for name, kind in rows), tuple(enums)


def shaped_columns(con: duckdb.DuckDBPyConnection) -> str:
    """The SELECT list that turns ``LAKE_SCHEMA`` rows into the collector's ``signals`` columns
    and types (creating on ``con`` the ENUM types it casts to, if missing)."""
    cols, enums = signal_columns()
    known = {str(r[0]) for r in con.execute("SELECT type_name FROM duckdb_types()").fetchall()}
    for enum, values in enums:
        if enum not in known:
            listed = ", ".join("'" + v.replace("'", "''") + "'" for v in values)
            con.execute(f"CREATE TYPE {enum} AS ENUM ({listed})")
    return ", ".join(
        (
            "CAST(hex(signal_id) AS UUID) AS signal_id"
            if name == "signal_id"
            else f'CAST("{name}" AS {kind}) AS "{name}"'
        )
        for name, kind in cols
    )


@dataclass(frozen=True, slots=True)
class DayStatus:
    day: dt.date
    files: int
    rows: int
    bytes: int
    compacted: bool


class LakeStore:
    """One Delta table of signals at ``uri`` (a folder, or ``s3://bucket/prefix``)."""

    def __init__(self, uri: str, storage_options: Mapping[str, str] | None = None) -> None:
        self.uri = uri
        self.storage_options = dict(storage_options or {})
        self._created = False
        self._lock = threading.Lock()
        #: The table as this process last committed it: appending through it reads only the
        #: log entries added since (a fresh load re-reads the checkpoint and the log tail).
        self._live: DeltaTable | None = None
        self._loaded = 0
        self._interval = 100

    @property
    def is_local(self) -> bool:
        return "://" not in self.uri or self.uri.startswith("file://")

    def create(self, *, recheck: bool = False) -> None:
        """Create the table if it does not exist. Safe when several collectors start at once:
        creating version 0 is a conditional write too, and the losers find the table.
        ``recheck``: ask the store even if this process created or found it before."""
        with self._lock:
            if self._created and not recheck:
                return
            try:
                DeltaTable.create(
                    self.uri,
                    LAKE_SCHEMA,
                    mode="ignore",
                    partition_by=[PARTITION],
                    name="signals",
                    configuration=TABLE_CONFIGURATION,
                    storage_options=self.storage_options,
                )
            except Exception:
                if not DeltaTable.is_deltatable(self.uri, self.storage_options):
                    raise
            self._created = True

    def table(self) -> DeltaTable:
        """The table at its newest version."""
        return DeltaTable(self.uri, storage_options=self.storage_options)

    def append(
        self,
        table: pa.Table,
        *,
        metadata: Mapping[str, str] | None = None,
        txn: tuple[str, int] | None = None,
        check_txn: bool = True,
    ) -> int | None:
        """Append ``LAKE_SCHEMA`` rows in one commit; return its version once committed.

        ``txn`` (app_id, version): the commit also records that transaction (Delta's
        ``txn`` action); with ``check_txn``, an append whose transaction the table already
        holds at that version or later is not made again (None is returned): the check reads
        the log since the last checkpoint, so a caller that knows its previous append landed
        skips it (delta-rs still refuses a commit racing one of the same app id). No
        checkpoint is written here
        (``maintain`` does). One caller at a time (the shipper): the live table is not
        shared."""
        if table.num_rows == 0:
            return None
        live = self.live()
        rows = table.select(LAKE_SCHEMA.names).cast(LAKE_SCHEMA)
        apps = [] if txn is None else [Transaction(txn[0], txn[1])]
        for attempt in range(STALE_RETRIES + 1):
            if txn is not None and (check_txn or attempt):
                done = live.transaction_version(txn[0])
                if done is not None and done >= txn[1]:
                    return None
            try:
                write_deltalake(
                    live,
                    rows,
                    mode="append",
                    partition_by=[PARTITION],
                    storage_options=self.storage_options,
                    commit_properties=CommitProperties(
                        custom_metadata=dict(metadata or {}),
                        max_commit_retries=MAX_COMMIT_RETRIES,
                        app_transactions=apps,
                    ),
                    post_commithook_properties=NO_HOOKS,
                )
                return int(live.version())
            except CommitFailedError:
                # delta-rs refuses an append whose read version predates a commit that removed
                # files (compaction, retention), although an append reads nothing: read the
                # log up to now and append again (the refused attempt committed nothing).
                if attempt == STALE_RETRIES:
                    raise
                live.update_incremental()
            except Exception:
                # The store went away mid-commit: the commit may have landed. The next append
                # reloads the table, so its transaction check sees it (or creates it anew).
                self._live = None
                self._created = False
                raise
        raise AssertionError("unreachable")  # the last attempt returned or raised

    def checkpoint_interval(self, table: DeltaTable) -> int:
        """The table's ``delta.checkpointInterval`` (Delta's default: 100)."""
        return int(table.metadata().configuration.get("delta.checkpointInterval", "100"))

    def maintain(self, table: DeltaTable, version: int) -> bool:
        """After a commit at ``version``: on every ``checkpointInterval``-th version write a
        checkpoint (each version is committed by one writer, so one writer does it). Returns
        whether it did. The log's clean-up (``clean_log``) lists the whole log: the hourly
        job does it, not the shipper."""
        if version <= 0 or version % self.checkpoint_interval(table):
            return False
        if table.version() != version:
            table = DeltaTable(self.uri, version=version, storage_options=self.storage_options)
        table.create_checkpoint()
        self._live = None  # the next append lists from this checkpoint on
        return True

    def clean_log(self) -> None:
        """Delete the log entries older than the log's retention and before the newest
        checkpoint (``delta.logRetentionDuration``); one full listing of the log."""
        self.table().cleanup_metadata()

    def live(self) -> DeltaTable:
        """The table the appends go through (at the version last committed by this process).

        delta-rs lists the log from the checkpoint a table object was loaded at, before and
        after each commit: a table object kept for long lists ever more. So it is loaded
        afresh (from the newest checkpoint: one LIST page, no replay) once it is two
        checkpoint intervals past the version it was loaded at, and after ``maintain``."""
        self.create()
        live = self._live
        if live is not None and live.version() - self._loaded >= 2 * self._interval:
            live = None
        if live is None:
            live = self._live = self.table()
            self._loaded = int(live.version())
            self._interval = self.checkpoint_interval(live)
        return live

    def exists(self) -> bool:
        return DeltaTable.is_deltatable(self.uri, self.storage_options)

    def days(self, table: DeltaTable | None = None) -> list[DayStatus]:
        """Per ``received_day`` of ``table``'s version (default: the newest): files, rows,
        bytes, and whether every row is compacted."""
        try:
            files = lake_files(self.table() if table is None else table)
        except TableNotFoundError:
            return []
        out: dict[dt.date, list[Any]] = {}
        for f in files:
            entry = out.setdefault(f.day, [0, 0, 0, True])
            entry[0] += 1
            entry[1] += f.rows
            entry[2] += f.size
            entry[3] = entry[3] and f.compacted
        return [DayStatus(d, *v) for d, v in sorted(out.items())]

    def reader(self, table: DeltaTable | None = None) -> LakeReader:
        dtable = self.table() if table is None else table
        return LakeReader(dtable.table_uri, self.storage_options)

    def relation(
        self,
        con: duckdb.DuckDBPyConnection,
        name: str = "lake_rows",
        table: DeltaTable | None = None,
        days: Collection[dt.date] | None = None,
        *,
        lazy: bool = False,
    ) -> bool:
        """Views over the files of ``table`` (default: the newest version), rows as stored:
        ``name`` (all), ``{name}_compacted`` and ``{name}_open`` (not compacted yet); only the
        files of ``days`` when given. Returns whether any file is not compacted.

        On S3 the rows are copied into ``con`` unless ``lazy``: then a lazy Arrow dataset is
        registered (memory stays bounded, but only ``con`` itself sees it, not its cursors)."""
        self.create()
        dtable = self.table() if table is None else table
        files = [f for f in lake_files(dtable) if days is None or f.day in days]
        any_open = not all(f.compacted for f in files)
        reader = self.reader(dtable)
        groups = {
            name: files,
            f"{name}_compacted": [f for f in files if f.compacted],
            f"{name}_open": [f for f in files if not f.compacted],
        }
        if self.is_local:
            # Data files never change once written: their footers can be cached across queries.
            con.execute("SET parquet_metadata_cache = true")
            for view, group in groups.items():
                if not group:
                    self._copy(con, view, LAKE_SCHEMA.empty_table())
                    continue
                con.execute(f"CREATE OR REPLACE VIEW {view} AS {reader.parquet_sql(group)}")
        else:
            # DuckDB reads s3:// only through its httpfs extension, which is not installable
            # offline: Arrow reads the objects, and the rows are copied into the connection
            # (a registered Arrow object would be invisible to the connection's cursors).
            if lazy:
                con.register(name, reader.dataset(files, LAKE_SCHEMA))
            else:
                self._copy(con, name, reader.read(files, LAKE_SCHEMA))
            for view, flag in ((f"{name}_compacted", ""), (f"{name}_open", "NOT ")):
                con.execute(
                    f"CREATE OR REPLACE VIEW {view} AS SELECT * FROM {name} WHERE {flag}compacted"
                )
        return any_open

    @staticmethod
    def _copy(con: duckdb.DuckDBPyConnection, name: str, rows: object) -> None:
        con.register("_lake_scan", rows)
        try:
            con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM _lake_scan")
        finally:
            con.unregister("_lake_scan")

    def signals_relation(
        self,
        con: duckdb.DuckDBPyConnection,
        *,
        table: DeltaTable | None = None,
        days: Collection[dt.date] | None = None,
        lazy: bool = False,
    ) -> None:
        """Create the view ``signals``: the collector's columns and types, each id once.

        Compacted rows are unique across the table (``compact_day``) and read as they are; the
        rest are reduced to one row per id (the earliest ``received_day``), minus the ids
        already compacted. With every file compacted, the view is a plain projection.
        ``lazy``: see ``relation``.
        ``days`` restricts it to those received days, which is exact for days whose files are
        all compacted (the release job's); ``table`` pins a version.
        """
        any_open = self.relation(con, "lake_rows", table, days, lazy=lazy)
        shaped = shaped_columns(con)
        view = f"SELECT {shaped} FROM lake_rows_compacted"
        if any_open:
            view += f"""
            UNION ALL
            SELECT {shaped} FROM (
                SELECT * FROM lake_rows_open
                QUALIFY row_number() OVER (PARTITION BY signal_id ORDER BY {PARTITION}) = 1
            ) AS fresh
            WHERE NOT EXISTS (
                SELECT 1 FROM lake_rows_compacted AS c WHERE c.signal_id = fresh.signal_id
            )"""
        con.execute(f"CREATE OR REPLACE VIEW signals AS {view}")

    def count(self) -> int:
        """Rows stored (duplicates included): the sum of the current files' row counts."""
        return sum(d.rows for d in self.days())
