"""Retention: signals older than the window are deleted, at start and then on a schedule.

A signal is older than the window when the day it carries OR the day it arrived is before
``today - retention_days`` (a wrong client clock cannot keep a signal longer). Deleted rows are
gone from queries at once and from the file at the next checkpoint.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Callable

import duckdb

from collector._sql import load_sql
from collector.db import Database
from collector.telemetry import Telemetry

__all__ = ["START_DELAY_S", "RetentionJob", "first_kept_day", "purge_expired"]

#: The first run waits this long (or the interval, if shorter) after start: a purge holds the
#: database thread, and readiness (``/readyz``) must not queue behind it on a restart.
START_DELAY_S = 5.0

log = logging.getLogger("collector")


def first_kept_day(today: dt.date, retention_days: int) -> dt.date:
    """The oldest day still kept: ``retention_days`` days before ``today``."""
    return today - dt.timedelta(days=retention_days)


def purge_expired(con: duckdb.DuckDBPyConnection, today: dt.date, retention_days: int) -> int:
    """Delete the signals outside the window; return how many."""
    row = con.execute(load_sql("purge_expired"), [first_kept_day(today, retention_days)]).fetchone()
    return int(row[0]) if row else 0


class RetentionJob:
    """Runs ``purge_expired`` soon after start and every ``interval_s`` seconds after."""

    def __init__(
        self,
        db: Database,
        telemetry: Telemetry,
        *,
        retention_days: int,
        interval_s: float,
        today: Callable[[], dt.date],
    ) -> None:
        self._db = db
        self._telemetry = telemetry
        self._days = retention_days
        self._interval = interval_s
        self._today = today
        self._task: asyncio.Task[None] | None = None
        self.runs = 0

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="lmcp-retention")

    async def run_once(self) -> int:
        today = self._today()
        deleted = await self._db.run(lambda con: purge_expired(con, today, self._days))
        self.runs += 1
        if deleted:
            self._telemetry.purged.add(deleted)
            log.info("retention deleted %d signals older than %d days", deleted, self._days)
        return deleted

    async def _loop(self) -> None:
        await asyncio.sleep(min(self._interval, START_DELAY_S))
        while True:
            try:
                await self.run_once()
            except Exception as exc:  # keep the schedule; the next run tries again
                log.error("retention run failed: %s", type(exc).__name__)
            await asyncio.sleep(self._interval)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None
