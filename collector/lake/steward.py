"""The steward's routes on a lake collector: exact reads from the lake, one audit trail for all.

A lake collector's own DuckDB file holds no signal, so ``LakeSteward`` answers
``/v1/signals/count``, ``/v1/signals/export`` and ``/v1/admin/backup`` from the lake:

- **Per request, one version.** Each read opens a fresh in-memory DuckDB connection and builds
  the lake's ``signals`` view (each id once, ``LakeStore.signals_relation``) over the files of
  the version it loaded: the file list changes with every commit, so a view is never reused.
  On S3 the view is a lazy Arrow dataset (memory stays bounded; only that connection sees it,
  so the queries run on the connection itself, never on a cursor). The collector's ``.sql``
  files run on it unchanged, so the answers have the file mode's columns and types.
- **Pruning by ``since``.** Only the days from ``since`` on are read when every file of those
  days is compacted: compacted rows are unique across the table and win over any other copy,
  so no older row can change them. Otherwise (today's open files, typically) every day is read,
  because an open row's id may have been received earlier (a retry across midnight), and the
  file mode counts a signal on the day it was first received.
- **Backup** pins one version of the table and streams its view (INSERT ... SELECT) into a new
  DuckDB file with the collector's migrations, plus the lake's releases: ``lmcp analysis
  --db THATFILE`` opens it like a stopped collector's file.
- **One audit trail** (``LakeAudit``): every steward read of every lake collector is appended,
  one commit per read, before it is served, to the Delta table ``<lake>/_steward_audit``
  (a ``_`` folder: hidden from the signals table's readers and VACUUM, as ``_releases``).
  It records stewards, not users: the lake's retention job does not touch it.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import threading
import uuid
from collections.abc import Collection, Sequence
from pathlib import Path

import duckdb
import pyarrow as pa
from deltalake import CommitProperties, PostCommitHookProperties, write_deltalake

from collector.backup import BackupError, path_literal
from collector.db import migrate
from collector.lake.config import lake_from_settings
from collector.lake.files import LakeFile, lake_files
from collector.lake.releases import LakeReleases, load_releases
from collector.lake.side import SideTable
from collector.lake.store import MAX_COMMIT_RETRIES, LakeStore
from collector.read_routes import EXPORT_BATCH_ROWS, BatchStream, next_batch
from collector.roles import AuditRow, AuditTrail
from collector.settings import CollectorSettings

__all__ = [
    "AUDIT_DIR",
    "AUDIT_SCHEMA",
    "LakeAudit",
    "LakeSteward",
    "days_to_read",
    "lake_steward",
]

AUDIT_DIR = "_steward_audit"
_DAY = "read_day"
#: The columns of the file mode's ``steward_audit`` (migration 0101), in its order.
AUDIT_SCHEMA = pa.schema(
    [
        pa.field(_DAY, pa.date32(), nullable=False),
        pa.field("label", pa.string(), nullable=False),
        pa.field("route", pa.string(), nullable=False),
        pa.field("filter", pa.string(), nullable=False),
    ]
)


_AUDIT_HOOKS = PostCommitHookProperties(create_checkpoint=True, cleanup_expired_logs=False)


class LakeAudit(SideTable):
    """The steward audit table of the lake at ``store.uri``, partitioned by ``read_day``."""

    def __init__(self, store: LakeStore) -> None:
        super().__init__(store, AUDIT_DIR, AUDIT_SCHEMA, _DAY, "steward_audit")
        self._created = False
        self._lock = threading.Lock()

    def append(self, row: AuditRow) -> None:
        """Append ``row`` in one commit; return once it is committed, or raise."""
        with self._lock:
            if not self._created:
                self.create()
                self._created = True
        rows = pa.Table.from_pylist(
            [{_DAY: row.read_day, "label": row.label, "route": row.route, "filter": row.filter}],
            schema=AUDIT_SCHEMA,
        )
        write_deltalake(
            self.uri,
            rows,
            mode="append",
            partition_by=[_DAY],
            storage_options=self.storage_options,
            commit_properties=CommitProperties(max_commit_retries=MAX_COMMIT_RETRIES),
            # Checkpoints (a PUT), never the log's clean-up (DELETEs): a collector's
            # credential needs no delete right; the hourly job cleans the logs.
            post_commithook_properties=_AUDIT_HOOKS,
        )

    async def record(self, row: AuditRow) -> None:
        await asyncio.to_thread(self.append, row)

    def rows(self) -> list[AuditRow]:
        """Every recorded read, by day, label, route and filter (none: no table yet)."""
        out = [
            AuditRow(r[_DAY], r["label"], r["route"], r["filter"])
            for r in self.read().select(AUDIT_SCHEMA.names).to_pylist()
        ]
        return sorted(out, key=lambda r: (r.read_day, r.label, r.route, r.filter))


def days_to_read(files: Sequence[LakeFile], since: dt.date | None) -> Collection[dt.date] | None:
    """The received days a read of the rows received on or after ``since`` must read: those
    days when every file of them is compacted (exact, see the module), else None (all)."""
    if since is None:
        return None
    recent = [f for f in files if f.day >= since]
    if not all(f.compacted for f in recent):
        return None
    return {f.day for f in recent}


class _LakeStream:
    """An export's batches from its own connection; closing closes the connection. One
    operation at a time (a lock): a close waits for the batch being read."""

    def __init__(self, con: duckdb.DuckDBPyConnection, reader: pa.RecordBatchReader) -> None:
        self._con: duckdb.DuckDBPyConnection | None = con
        self._reader = reader
        self._lock = threading.Lock()

    @property
    def schema(self) -> pa.Schema:
        return self._reader.schema

    @property
    def closed(self) -> bool:
        return self._con is None

    def _next(self) -> pa.RecordBatch | None:
        with self._lock:
            return None if self._con is None else next_batch(self._reader)

    def _close(self) -> None:
        with self._lock:
            con, self._con = self._con, None
            if con is not None:
                self._reader.close()
                con.close()

    async def next_batch(self) -> pa.RecordBatch | None:
        return await asyncio.to_thread(self._next)

    async def close(self) -> None:
        await asyncio.to_thread(self._close)


class LakeSteward:
    """The steward's reads, export and backup from the lake; its audit in the lake."""

    def __init__(self, store: LakeStore, *, spill_dir: Path | None = None, threads: int = 1):
        self.store = store
        self.audit: AuditTrail = LakeAudit(store)
        self._spill_dir = spill_dir
        self._threads = threads

    def _connect(self) -> duckdb.DuckDBPyConnection:
        con = duckdb.connect(":memory:", config={"threads": self._threads})
        try:
            con.execute("SET enable_progress_bar = false")
            if self._spill_dir is not None:
                # A large sort spills beside the collector's file, in a folder of this
                # connection's own: DuckDB removes a folder it created when it closes.
                self._spill_dir.mkdir(parents=True, exist_ok=True)
                own = self._spill_dir / uuid.uuid4().hex
                con.execute(f"SET temp_directory = '{path_literal(own)}'")
        except BaseException:
            con.close()
            raise
        return con

    def view(self, con: duckdb.DuckDBPyConnection, since: dt.date | None) -> None:
        """Create ``signals`` on ``con``: the newest version, the days ``since`` needs."""
        table = self.store.table()  # one version for the whole read
        days = days_to_read(lake_files(table), since)
        self.store.signals_relation(con, table=table, days=days, lazy=True)

    def count_sync(self, sql: str, since: dt.date | None) -> int:
        con = self._connect()
        try:
            self.view(con, since)
            row = con.execute(sql, [since]).fetchone()
            return int(row[0]) if row else 0
        finally:
            con.close()

    async def count(self, sql: str, since: dt.date | None) -> int:
        return await asyncio.to_thread(self.count_sync, sql, since)

    def _start(self, sql: str, since: dt.date | None) -> _LakeStream:
        con = self._connect()
        try:
            self.view(con, since)
            reader = con.sql(sql, params=[since]).to_arrow_reader(EXPORT_BATCH_ROWS)
        except BaseException:
            con.close()
            raise
        return _LakeStream(con, reader)

    async def stream(self, sql: str, since: dt.date | None) -> BatchStream:
        return await asyncio.to_thread(self._start, sql, since)

    def backup_sync(self, dest: Path) -> int:
        """Write ``dest``: the collector's migrations, ``signals`` from ONE version of the
        lake (each id once), and the lake's releases; return the signals written."""
        partial = dest.with_name(dest.name + ".partial")
        if dest.exists() or partial.exists():
            raise BackupError(f"{dest} exists already")
        table = self.store.table()  # the version copied
        try:
            with duckdb.connect(str(partial)) as file:
                migrate(file)
                load_releases(file, LakeReleases(self.store).read())
            con = self._connect()
            try:
                self.store.signals_relation(con, table=table, lazy=True)
                con.execute(f"ATTACH '{path_literal(partial)}' AS lmcp_backup")
                try:
                    con.execute("INSERT INTO lmcp_backup.signals SELECT * FROM signals")
                    row = con.execute("SELECT count(*) FROM lmcp_backup.signals").fetchone()
                finally:
                    con.execute("DETACH lmcp_backup")
            finally:
                con.close()
            partial.replace(dest)
        except BaseException:
            for left in (partial, Path(f"{partial}.wal")):
                left.unlink(missing_ok=True)
            raise
        return int(row[0]) if row else 0

    async def backup(self, dest: Path) -> int:
        try:
            return await asyncio.to_thread(self.backup_sync, dest)
        except BackupError:
            raise
        except Exception:  # the lake or the disk failed: never a row in the message
            raise BackupError("the lake could not be copied") from None


def lake_steward(settings: CollectorSettings) -> LakeSteward:
    """The steward's source of a collector serving ``settings.lake_uri``: large sorts spill
    beside ``db_path`` (as the file mode's do), on the collector's DuckDB threads."""
    return LakeSteward(
        lake_from_settings(settings),
        spill_dir=Path(f"{settings.db_path}.steward.tmp"),
        threads=settings.duckdb_threads,
    )
