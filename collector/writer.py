"""The group-commit writer: validated signals from concurrent requests, one INSERT per flush.

Requests ``submit`` their signals and wait. One background task flushes: it takes every pending
request (up to ``max_rows``; a request is never split), builds one Arrow table, and runs one
INSERT in one transaction on the database thread (duplicates of stored ids are skipped:
see ``_insert``). While a flush
runs, new requests gather for the next one, so the batch size follows the load by itself.

- A request's answer (``accepted``, ``duplicates``) is set only after its flush COMMITTED.
- Duplicates are counted right within a request, across requests of one flush (de-duplicated
  before the insert; the first occurrence wins) and across flushes (the primary key).
- A failed flush fails exactly the requests in it (``WriteError``), nothing else.
- ``close()`` stops taking requests and flushes everything pending before it returns.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

import duckdb
import pyarrow as pa

from client.schema import FrictionSignal
from collector._sql import load_sql
from collector.db import Database
from collector.errors import WriteError
from collector.rows import to_arrow
from collector.telemetry import Telemetry

__all__ = [
    "DiscardSink",
    "FlushPlan",
    "GroupCommitWriter",
    "SignalSink",
    "WriteResult",
    "flush_rows",
    "insert_table",
]

log = logging.getLogger("collector")


class WriteResult(NamedTuple):
    accepted: int
    duplicates: int


class SignalSink(Protocol):
    """Where validated signals go. The writer; a discarding sink for benchmarks."""

    async def submit(self, signals: Sequence[FrictionSignal]) -> WriteResult: ...


class DiscardSink:
    """Accepts everything and stores nothing (the benchmark's validate-and-discard baseline)."""

    async def submit(self, signals: Sequence[FrictionSignal]) -> WriteResult:
        return WriteResult(len(signals), 0)


def utc_today() -> dt.date:
    return dt.datetime.now(dt.UTC).date()


@dataclass(frozen=True, slots=True)
class FlushPlan:
    """The rows of one flush: each id once (first occurrence wins), and who sent what."""

    batch_sizes: list[int]
    #: Per batch, the ids it was first to carry in this flush.
    firsts: list[list[uuid.UUID]]
    unique: list[FrictionSignal]

    @classmethod
    def of(cls, batches: Sequence[Sequence[FrictionSignal]]) -> FlushPlan:
        seen: set[uuid.UUID] = set()
        unique: list[FrictionSignal] = []
        firsts: list[list[uuid.UUID]] = []
        for batch in batches:
            mine: list[uuid.UUID] = []
            for signal in batch:
                sid = signal.signal_id
                if sid not in seen:
                    seen.add(sid)
                    unique.append(signal)
                    mine.append(sid)
            firsts.append(mine)
        return cls([len(b) for b in batches], firsts, unique)

    @property
    def ids(self) -> list[uuid.UUID]:
        return [s.signal_id for s in self.unique]

    def results(self, inserted: set[uuid.UUID] | None) -> list[WriteResult]:
        """One result per batch; ``inserted=None`` means every unique id was inserted."""
        out = []
        for size, mine in zip(self.batch_sizes, self.firsts, strict=True):
            if inserted is None:
                accepted = len(mine)
            else:
                accepted = sum(1 for sid in mine if sid in inserted)
            out.append(WriteResult(accepted, size - accepted))
        return out


def flush_rows(
    con: duckdb.DuckDBPyConnection,
    batches: Sequence[Sequence[FrictionSignal]],
    received_day: dt.date,
) -> list[WriteResult]:
    """Write the batches in one INSERT; one result per batch, in order (all on one thread)."""
    plan = FlushPlan.of(batches)
    if not plan.unique:
        return plan.results(set())
    return plan.results(insert_table(con, to_arrow(plan.unique), plan.ids, received_day))


def _consume(future: asyncio.Future[WriteResult]) -> None:
    if not future.cancelled():
        future.exception()


def insert_table(
    con: duckdb.DuckDBPyConnection,
    table: pa.Table,
    ids: Sequence[uuid.UUID],
    received_day: dt.date,
) -> set[uuid.UUID] | None:
    """Insert rows with distinct ids in one transaction; None if all went in, else the ids that did.

    The fast path is a plain INSERT (``ON CONFLICT DO NOTHING`` costs ~4 ms more per statement
    in DuckDB, whatever the row count). When an id is already stored -- a client retrying a
    batch whose answer it lost -- the primary key refuses the statement; the transaction rolls
    back and the slow path inserts only the ids not stored yet. One thread owns the connection,
    so nothing can slip in between. Apart from that rare path this is all DuckDB work, which
    runs without the GIL: the event loop keeps validating meanwhile.
    """
    insert = load_sql("insert_signals")
    con.register("incoming", table)
    try:
        try:
            # One statement in auto-commit mode is one transaction: atomic, and one round trip
            # through the Python binding (each return to Python waits for the GIL).
            con.execute(insert, [received_day])
            return None
        except duckdb.ConstraintException:
            pass  # the statement rolled back as a whole
        con.execute("BEGIN TRANSACTION")
        try:
            stored = {row[0] for row in con.execute(load_sql("stored_ids")).fetchall()}
            fresh = [sid not in stored for sid in ids]
            con.unregister("incoming")
            con.register("incoming", table.filter(pa.array(fresh, pa.bool_())))
            con.execute(insert, [received_day])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return {sid for sid in ids if sid not in stored}
    finally:
        con.unregister("incoming")


@dataclass(slots=True)
class _Pending:
    signals: Sequence[FrictionSignal]
    future: asyncio.Future[WriteResult]


class GroupCommitWriter:
    """Gathers submitted signals and writes them with one INSERT per flush."""

    def __init__(
        self,
        db: Database,
        telemetry: Telemetry,
        *,
        max_rows: int = 10_000,
        linger_s: float = 0.0,
        today: Callable[[], dt.date] = utc_today,
    ) -> None:
        self._db = db
        self._telemetry = telemetry
        self._max_rows = max_rows
        self._linger = linger_s
        self._today = today
        self._pending: deque[_Pending] = deque()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done() and not self._closing

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="lmcp-group-commit")

    async def submit(self, signals: Sequence[FrictionSignal]) -> WriteResult:
        """Queue the signals; return once they are committed (or raise ``WriteError``)."""
        if not self.running:
            raise WriteError("the writer is not running")
        future: asyncio.Future[WriteResult] = asyncio.get_running_loop().create_future()
        # A client that went away leaves nobody to read a failure: mark it read.
        future.add_done_callback(_consume)
        self._pending.append(_Pending(signals, future))
        self._wake.set()
        return await asyncio.shield(future)

    async def close(self) -> None:
        """Stop taking signals, flush everything pending, and end the flush task."""
        self._closing = True
        self._wake.set()
        if self._task is not None:
            await self._task

    def _take(self) -> list[_Pending]:
        taken: list[_Pending] = []
        rows = 0
        while self._pending:
            size = len(self._pending[0].signals)
            if taken and rows + size > self._max_rows:
                break
            taken.append(self._pending.popleft())
            rows += size
        return taken

    async def _loop(self) -> None:
        while True:
            await self._wake.wait()
            if self._linger and not self._closing:
                await asyncio.sleep(self._linger)
            self._wake.clear()
            while self._pending:
                await self._flush(self._take())
            if self._closing:
                return

    async def _flush(self, taken: list[_Pending]) -> None:
        batches = [p.signals for p in taken]
        received_day = self._today()
        try:
            # Python work (de-duplication, the Arrow table) stays on the event loop; the
            # database thread then runs DuckDB only, which releases the GIL. Splitting it this
            # way avoids a GIL convoy between the two threads (measured: 3-8x slower flushes
            # when the table was built on the database thread while requests were validated).
            plan = FlushPlan.of(batches)
            table = to_arrow(plan.unique)
            ids = plan.ids
            inserted = await self._db.run(lambda con: insert_table(con, table, ids, received_day))
            results = plan.results(inserted)
        except Exception as exc:
            log.error("flush of %d requests failed: %s", len(taken), type(exc).__name__)
            self._telemetry.flush_failures.add(1)
            for p in taken:
                if not p.future.done():
                    p.future.set_exception(WriteError("the flush failed"))
            return
        rows = sum(len(b) for b in batches)
        self._telemetry.flush_rows.record(rows)
        accepted = sum(r.accepted for r in results)
        self._telemetry.accepted.add(accepted)
        self._telemetry.duplicates.add(rows - accepted)
        for p, result in zip(taken, results, strict=True):
            if not p.future.done():
                p.future.set_result(result)
