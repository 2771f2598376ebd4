"""The collector's one choice of storage: the embedded file, or the file as a lake's spool.

Both modes write the same way (the group-commit writer into the collector's own DuckDB file,
an answer only after its transaction committed). What differs is all here, behind
``StorageMode``, chosen once by ``storage_mode(settings, ...)``:

- what the triage routes read (``released``: the file, or a copy of the lake's releases),
- what the steward reads, copies and is audited in (``reads``, ``copies``),
- the background work (``start``/``stop``: the file's retention job, or the lake's shipper),
- whether the store is healthy (``problem``: None, or why readiness should answer 503).

``open_lake_analysis`` is the analysis package's one door into a lake (the steward's view,
the released cells, the mirror; ``MirrorError``, from ``collector/lake_errors.py``, is what
it raises for a mirror file it must not touch); nothing above the collector imports
``collector.lake``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import duckdb

from collector.backup import DatabaseBackup, StewardBackup
from collector.lake_errors import MirrorError, lake_extra
from collector.read_routes import FileReads, StewardReads
from collector.retention import RetentionJob
from collector.settings import CollectorSettings
from collector.telemetry import Telemetry
from collector.webhook import AlertSource, Webhook
from service.db import Database

__all__ = [
    "FileMode",
    "MirrorError",
    "StorageMode",
    "open_lake_analysis",
    "storage_mode",
]


class StorageMode(Protocol):
    #: "file" or "lake".
    name: str
    #: What the handed-in routers (triage, the dashboard) read.
    released: Database
    reads: StewardReads
    copies: StewardBackup

    def open(self) -> None:
        """Open what ``released`` needs (before the app serves)."""
        ...

    async def start(self) -> None:
        """Start the background work (the writer is running)."""
        ...

    async def stop(self) -> None:
        """Stop it (the writer has flushed and stopped); ``close`` follows."""
        ...

    def close(self) -> None: ...

    def problem(self) -> str | None:
        """Why the store is not healthy now, or None."""
        ...


class FileMode:
    """The embedded file: signals stay in ``db``; retention and releases run in process."""

    name = "file"

    def __init__(
        self,
        settings: CollectorSettings,
        db: Database,
        telemetry: Telemetry,
        today: Callable[[], dt.date],
        alerts: AlertSource | None = None,
    ) -> None:
        self.released: Database = db
        self.reads: StewardReads = FileReads(db)
        self.copies: StewardBackup = DatabaseBackup(db)
        self.retention: RetentionJob | None = None
        self._settings, self._db, self._telemetry, self._today = settings, db, telemetry, today
        self._alerts = alerts

    def open(self) -> None:
        pass

    async def start(self) -> None:
        s = self._settings
        self.retention = RetentionJob(
            self._db,
            self._telemetry,
            retention_days=s.retention_days,
            interval_s=s.retention_interval_s,
            today=self._today,
            privacy=s.checked_release_plan(),
            backfill_days=s.release_backfill_days,
            alerts=None
            if s.alert_webhook_url is None or self._alerts is None
            else Webhook(str(s.alert_webhook_url), self._alerts),
        )
        self.retention.start()

    async def stop(self) -> None:
        if self.retention is not None:
            await self.retention.stop()

    def close(self) -> None:
        pass

    def problem(self) -> str | None:
        return None


def storage_mode(
    settings: CollectorSettings,
    db: Database,
    telemetry: Telemetry,
    today: Callable[[], dt.date],
    *,
    alerts: AlertSource | None = None,
) -> StorageMode:
    """The mode ``settings`` choose: the lake when ``lake_uri`` is set (``[lake]`` extra; its
    releases and their alerts are ``lmcp lake release``'s)."""
    if settings.lake_uri:
        with lake_extra():
            from collector.lake.mode import LakeMode
        return LakeMode(settings, db, telemetry, today)
    return FileMode(settings, db, telemetry, today, alerts)


def open_lake_analysis(
    uri: str, *, raw: bool = False, mirror: Path | None = None
) -> duckdb.DuckDBPyConnection:
    """A connection on the lake at ``uri`` (S3 settings from ``LMCP_COLLECTOR_LAKE_S3_*``):
    the released cells (``release_periods``, ``release_cells``); with ``raw`` also ``signals``,
    each id once (the steward's view); with ``mirror`` on that local copy of the compacted
    days, synced first (``MirrorError`` for a file it must not touch). ``FileNotFoundError``
    when no table is there."""
    with lake_extra():
        from collector.lake.analysis import open_lake
    return open_lake(uri, raw=raw, mirror=mirror)
