"""The retention job: at start and then on a schedule, for the closed days.

1. Signals older than the window are deleted: a signal is older when the day it carries OR the
   day it arrived is before ``today - retention_days`` (a wrong client clock cannot keep a
   signal longer); releases older than the window go too. Deleted rows are gone from queries at
   once and from the file at the next checkpoint.
2. Every closed received day (before today, UTC) is rewritten ONCE in ``signal_id`` order (a
   random UUID4), so the stored order of its rows no longer reflects their arrival; a retry
   stored after its first copy's day had closed is dropped then.
3. Every closed release period in the window is released (``collector.releases.store``):
   counted on the database thread, its noise drawn off it, stored once, never redrawn.
4. With a webhook (``collector.webhook``), the alerts of what this run released are computed on
   the database thread (released cells only) and POSTed off it; a failure is only logged.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import logging
from collections.abc import Callable

import duckdb

from collector.db import SQL_DIR
from collector.releases.store import (
    count_period,
    draw_period,
    due_periods,
    purge_releases,
    store_period,
)
from collector.telemetry import Telemetry
from collector.webhook import Webhook, post_alerts
from contract.accountant import ReleasePlan
from service.db import Database
from service.sql import load_sql

__all__ = [
    "START_DELAY_S",
    "RetentionJob",
    "days_to_reorder",
    "first_kept_day",
    "purge_expired",
    "reorder_closed_days",
    "reorder_day",
]

#: The first run waits this long (or the interval, if shorter) after start: a purge holds the
#: database thread, and readiness (``/readyz``) must not queue behind it on a restart.
START_DELAY_S = 5.0

log = logging.getLogger("collector")


def first_kept_day(today: dt.date, retention_days: int) -> dt.date:
    """The oldest day still kept: ``retention_days`` days before ``today``."""
    return today - dt.timedelta(days=retention_days)


def purge_expired(con: duckdb.DuckDBPyConnection, today: dt.date, retention_days: int) -> int:
    """Delete the signals outside the window; return how many."""
    first = first_kept_day(today, retention_days)
    row = con.execute(load_sql(SQL_DIR, "purge_expired"), [first]).fetchone()
    purge_releases(con, first)
    return int(row[0]) if row else 0


def reorder_closed_days(con: duckdb.DuckDBPyConnection, today: dt.date) -> list[dt.date]:
    """Rewrite each closed received day not yet rewritten in ``signal_id`` order; return which."""
    days = days_to_reorder(con, today)
    for day in days:
        reorder_day(con, day)
    return days


def days_to_reorder(con: duckdb.DuckDBPyConnection, today: dt.date) -> list[dt.date]:
    rows = con.execute(
        "SELECT DISTINCT received_day FROM signals WHERE received_day < $1 "
        "EXCEPT SELECT day FROM reordered_days ORDER BY 1",
        [today],
    ).fetchall()
    return [r[0] for r in rows]


def reorder_day(con: duckdb.DuckDBPyConnection, day: dt.date) -> None:
    """Rewrite one closed received day in ``signal_id`` order, de-duplicated, once.

    Invariant: afterwards the stored order (and rowid) of that day's rows is the order of their
    random ids, independent of when each arrived, and none of its ids is stored on an earlier
    day (``collector/sql/reorder_day.sql``). The open day keeps arrival order until it closes;
    nothing exposes a row number.
    """
    con.execute("BEGIN TRANSACTION")
    try:
        done = con.execute("SELECT count(*) FROM reordered_days WHERE day = $1", [day]).fetchone()
        if done and done[0]:
            con.execute("ROLLBACK")
            return
        con.execute(load_sql(SQL_DIR, "reorder_day"), [day])
        con.execute("DELETE FROM signals WHERE received_day = $1", [day])
        con.execute("INSERT INTO signals SELECT * FROM lmcp_reorder ORDER BY signal_id")
        con.execute("DROP TABLE lmcp_reorder")
        con.execute("INSERT INTO reordered_days VALUES ($1)", [day])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def _reorder(con: duckdb.DuckDBPyConnection, *, day: dt.date) -> None:
    reorder_day(con, day)


class RetentionJob:
    """Runs the closed-day work soon after start (``START_DELAY_S``), then every ``interval_s``
    seconds.

    ``privacy``: the release plan (``settings.checked_release_plan()``; the defaults when not
    given). ``alerts``: the webhook told after each run that released something (None: none).
    """

    def __init__(
        self,
        db: Database,
        telemetry: Telemetry,
        *,
        retention_days: int,
        interval_s: float,
        today: Callable[[], dt.date],
        privacy: ReleasePlan | None = None,
        backfill_days: int = 90,
        alerts: Webhook | None = None,
    ) -> None:
        self._db = db
        self._telemetry = telemetry
        self._days = retention_days
        self._interval = interval_s
        self._today = today
        self._privacy = privacy or ReleasePlan()
        self._backfill = backfill_days
        self._alerts = alerts
        self._task: asyncio.Task[None] | None = None
        self.runs = 0

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="lmcp-retention")

    async def run_once(self) -> int:
        today = self._today()
        # One unit of work per database call, so reads and readiness checks interleave.
        deleted = await self._db.run(lambda con: purge_expired(con, today, self._days))
        for day in await self._db.run(lambda con: days_to_reorder(con, today)):
            await self._db.run(functools.partial(_reorder, day=day))
        due = await self._db.run(
            lambda con: due_periods(con, today, self._days, backfill_days=self._backfill)
        )
        released: list[tuple[str, dt.date]] = []
        for cube, day in due:
            exact = await self._db.run(functools.partial(count_period, cube=cube, day=day))
            # The noise (every cell of the domain sampled) is drawn off the database thread.
            drawn = await asyncio.to_thread(draw_period, exact, self._privacy)
            if await self._db.run(functools.partial(store_period, draw=drawn)):
                released.append((cube, day))
        if released and self._alerts is not None:
            await self._send_alerts(self._alerts, released)
        self.runs += 1
        if deleted:
            self._telemetry.purged.add(deleted)
            log.info("retention deleted %d signals older than %d days", deleted, self._days)
        return deleted

    async def _send_alerts(self, hook: Webhook, released: list[tuple[str, dt.date]]) -> None:
        """Only the periods this run stored are passed: a period is alerted at most once (a
        restart finds it released and stores nothing). The POST holds neither the event loop
        nor the database."""
        try:
            document = await self._db.run(lambda con: hook.source(con, released))
        except Exception as exc:  # the releases are stored: alerts never undo or fail them
            log.error("alerts not computed: %s", type(exc).__name__)
            return
        if document is not None:
            await asyncio.to_thread(post_alerts, hook, document)

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
