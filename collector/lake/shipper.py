"""The shipper: a collector's spool to the lake, in few, large, idempotent commits.

Every ``interval_s`` (or as soon as ``max_rows`` rows wait) it seals what the spool holds as
one batch (``collector.lake.spool``) and appends each sealed batch, oldest first, in ONE Delta
commit that also records the transaction (spool's ``app_id``, batch number); then it drops the
batch from the spool. A commit that landed but whose drop did not (a crash in between) is
recognised at the next try by the table's transaction version and not appended again.

So a collector makes at most one commit per interval whatever its traffic (plus one per
``max_rows`` rows, which bounds a batch's memory), its commit times are those of the interval,
not of any request, and a batch's rows are written in ``signal_id`` order, not arrival order.

Health: ``problem`` is None while the last attempt succeeded; otherwise a short reason (the
lake unreachable, a commit failing). The collector's readiness reads it through the mode
object. Failures are retried every ``retry_s``; the rows wait in the spool meanwhile.
Checkpoints and log clean-up run here, after a commit (``LakeStore.maintain``), timed.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from collector.db import signals_database
from collector.lake.files import lake_files
from collector.lake.metrics import LakeMetrics
from collector.lake.spool import Spool
from collector.lake.store import LakeStore
from contract.days import utc_today

__all__ = ["DEFAULT_INTERVAL_S", "DEFAULT_MAX_ROWS", "Shipper", "ship_file"]

log = logging.getLogger("collector")

#: One commit a minute per collector: 1,440 a day at most, whatever the request rate.
DEFAULT_INTERVAL_S = 60.0
#: A batch seals early past this many rows (its Arrow copy is ~200 B a row).
DEFAULT_MAX_ROWS = 250_000


class Shipper:
    """Ships ``spool`` to ``store`` from a thread of its own (``start``, ``stop``)."""

    def __init__(
        self,
        spool: Spool,
        store: LakeStore,
        metrics: LakeMetrics | None = None,
        *,
        interval_s: float = DEFAULT_INTERVAL_S,
        max_rows: int = DEFAULT_MAX_ROWS,
        retry_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        today: Callable[[], dt.date] = utc_today,
    ) -> None:
        self.spool = spool
        self.store = store
        self.metrics = metrics
        self.interval_s = interval_s
        self.max_rows = max_rows
        self.retry_s = min(interval_s, 5.0) if retry_s is None else retry_s
        self._clock = clock
        self._today = today
        #: None while the last attempt succeeded (and one has been made).
        self.problem: str | None = "the lake has not been reached yet"
        self._sealed_at = clock()
        #: Whether the last append's outcome is known (it returned): no check needed then.
        self._landed = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ one round

    def ship(self, *, seal: bool = True) -> int:
        """Seal (when ``seal``) and ship every sealed batch now; the rows shipped. Raises on
        failure (what was not shipped stays in the spool)."""
        if seal:
            self.spool.seal()
            self._sealed_at = self._clock()
        shipped = 0
        for batch, _count in self.spool.batches():
            shipped += self._ship_batch(batch)
        return shipped

    def _ship_batch(self, batch: int) -> int:
        rows = self.spool.rows(batch)
        live = self.store.live()
        before = live.version()
        began = self._clock()
        # The table's transaction check reads the log since its checkpoint: needed only when
        # an earlier attempt's fate is unknown (the first batch after a start or a failure).
        check, self._landed = not self._landed, False
        version = self.store.append(rows, txn=(self.spool.app_id, batch), check_txn=check)
        self._landed = True
        if version is not None and self.metrics is not None:
            self.metrics.commits.add(1)
            self.metrics.commit_seconds.record(self._clock() - began)
            self.metrics.rows.add(rows.num_rows)
            self.metrics.lost_races.add(max(0, version - before - 1))
        self.spool.drop(batch)
        if version is not None:
            self._maintain(version)
        return rows.num_rows if version is not None else 0

    def _maintain(self, version: int) -> None:
        live = self.store.live()
        began = self._clock()
        if self.store.maintain(live, version) and self.metrics is not None:
            self.metrics.checkpoint_seconds.record(self._clock() - began)
        if self.metrics is not None:
            today = self._today()
            self.metrics.open_day_files = sum(1 for f in lake_files(live) if f.day == today)
            self.metrics.log_tail = version % self.store.checkpoint_interval(live)

    def _round(self) -> None:
        if self.problem is not None:
            # Reach the lake before declaring it reachable, rows to ship or not.
            self.store.create(recheck=True)
        due = self._clock() - self._sealed_at >= self.interval_s
        waiting = self.spool.batches()
        if due or waiting or self.spool.pending_rows() >= self.max_rows:
            self.ship(seal=due or not waiting)
        self.problem = None

    # ------------------------------------------------------------ the thread

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="lmcp-shipper", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        poll = min(1.0, self.interval_s / 4)
        while not self._stop.is_set():
            try:
                self._round()
                wait = poll
            except Exception as exc:  # the lake down, a commit refused: retry, rows wait
                self.problem = f"shipping to the lake failed ({type(exc).__name__})"
                log.error("shipping to the lake failed: %s", type(exc).__name__)
                if self.metrics is not None:
                    self.metrics.failures.add(1)
                wait = self.retry_s
            self._lag()
            self._stop.wait(wait)

    def _lag(self) -> None:
        if self.metrics is None:
            return
        waiting = bool(self.spool.batches()) or self.spool.pending_rows() > 0
        if not waiting:
            self.metrics.lag_since = None
        elif self.metrics.lag_since is None:
            self.metrics.lag_since = self._clock()

    def stop(self, *, final: bool = True) -> None:
        """Stop the thread; with ``final``, ship what the spool holds once more (a failure is
        logged, and the rows stay in the spool for the next start)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if final:
            try:
                self.ship()
            except Exception as exc:
                log.error("the last ship failed, the spool keeps it: %s", type(exc).__name__)


def ship_file(path: Path, store: LakeStore) -> int:
    """Ship everything a stopped collector's file holds (``lmcp lake ship``); the rows
    appended now (0 for a batch the lake already held)."""
    db = signals_database(path, threads=1)
    db.open()
    try:
        return Shipper(Spool(db.run_sync), store).ship()
    finally:
        db.close()
