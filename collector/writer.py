"""The group-commit writer: concurrent requests' validated signals, one transaction per flush.

Requests ``submit`` their validated signals, with the body they were validated from, and wait.
A writer thread gathers them into flushes and hands each flush to a ``SignalStore``
(``collector.store``), which writes it in one transaction. This module is the scheduling:
when a flush goes, which requests it takes, and how each request learns its answer.

- A request's answer (``accepted``, ``duplicates``) is set only after its flush COMMITTED.
- Duplicates are counted right within a request, across requests of one flush (the first
  occurrence wins, ``collector.flush.FlushPlan``) and across flushes (``collector.store``).
- A failed flush fails exactly the requests in it (``WriteError``), nothing else.
- ``close()`` stops taking requests and flushes everything pending before it returns.

The flushes run on their own thread, not as event-loop tasks: a task would wait between
flushes behind every request queued for validation, leaving the database idle. A small flush
first waits a moment for company (``_gather``): each transaction has a fixed cost. Under load,
a small flush's INSERT starts as soon as the previous one committed, before its requests are
in (``SignalStore.write_streamed``). While a flush runs, new requests gather for the next one,
so the batch size follows the load. ``docs/write-path.md`` explains each rule and its figures.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from collector.errors import WriteError
from collector.flush import LARGE_FLUSH_ROWS, Flush, WriteResult
from collector.rows import ValidSignal
from collector.store import SignalStore, StoreOpener
from collector.telemetry import Telemetry
from contract.days import utc_today
from service.health import StoreHealth

__all__ = [
    "FOLLOW_S",
    "IN_FLIGHT_WINDOW_S",
    "GroupCommitWriter",
    "SignalSink",
]

log = logging.getLogger("collector")


class SignalSink(Protocol):
    """Where the ingestion endpoint hands validated signals: the writer (or a benchmark's sink).

    ``body`` is the request body the signals were validated from (after its content coding),
    or None when there is none (signals built in process).
    """

    async def submit(
        self, signals: Sequence[ValidSignal], body: bytes | None = None
    ) -> WriteResult: ...


#: How long the writer remembers how many requests were in flight at once (``_gather``): the
#: most in this window or the one before it.
IN_FLIGHT_WINDOW_S = 0.5

_NOBODY = 1 << 62  # no gather is waiting for a number of requests

#: How long a small flush's INSERT, started right after the previous flush, waits for its
#: first request (``GroupCommitWriter._stream_flush``); if none comes, it ends empty.
FOLLOW_S = 0.02


@dataclass(slots=True)
class _Pending:
    signals: Sequence[ValidSignal]
    body: bytes | None
    future: asyncio.Future[WriteResult]


def _flush_of(taken: Sequence[_Pending]) -> Flush:
    return Flush([p.signals for p in taken], [p.body for p in taken])


class GroupCommitWriter:
    """Gathers submitted signals and writes them one flush at a time, on its own thread.

    ``open_store`` opens the store on the writer thread as it starts (for DuckDB:
    ``DuckDBStore.opener(db)``, a cursor of the database's connection); the thread closes it
    as it ends. Requests are answered on the event loop (``call_soon_threadsafe``).
    """

    def __init__(
        self,
        open_store: StoreOpener,
        telemetry: Telemetry,
        *,
        max_rows: int = 10_000,
        linger_s: float = 0.005,
        quiet_s: float = 0.001,
        in_flight_window_s: float = IN_FLIGHT_WINDOW_S,
        follow_s: float = FOLLOW_S,
        today: Callable[[], dt.date] = utc_today,
        health: StoreHealth | None = None,
    ) -> None:
        #: Whether the store can be written: noted after every flush, read by ``/readyz``.
        self.health = health if health is not None else StoreHealth()
        self._open_store = open_store
        self._telemetry = telemetry
        self._max_rows = max_rows
        self._linger = linger_s
        self._quiet = quiet_s
        self._in_flight_window = in_flight_window_s
        self._follow = follow_s
        self._today = today
        self._lock = threading.Lock()
        self._pending: deque[_Pending] = deque()
        self._pending_rows = 0
        #: Requests queued so far (a clock for "did anybody join meanwhile?").
        self._joined = 0
        #: Requests submitted and not answered yet (pending, or in the flush being written).
        self._in_flight = 0
        #: The most requests in flight at once, in this window and in the one before it.
        self._most_in_flight = 0
        self._most_before = 0
        self._window_ends = 0.0
        #: While a small flush gathers: the number of pending requests that ends its wait.
        self._expected = _NOBODY
        self._all_in = threading.Event()
        self._wake = threading.Event()
        self._closing = False
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopped: asyncio.Future[None] | None = None

    @property
    def running(self) -> bool:
        # The thread sets _closing as it ends, whatever ends it.
        return self._thread is not None and not self._closing

    def start(self) -> None:
        """Start the writer thread (from the event loop that will submit)."""
        if self._thread is None:
            self._loop = asyncio.get_running_loop()
            self._stopped = self._loop.create_future()
            self._thread = threading.Thread(target=self._run, name="lmcp-writer", daemon=True)
            self._thread.start()

    async def submit(
        self, signals: Sequence[ValidSignal], body: bytes | None = None
    ) -> WriteResult:
        """Queue the signals; return once they are committed (or raise ``WriteError``).

        ``body`` must be the bytes ``signals`` were validated from (the body of one request).
        The signals wait as they are: the fast decoder's structs are not tracked by the
        garbage collector, so many waiting batches cost it nothing.
        """
        if not self.running:
            raise WriteError("the writer is not running")
        count = len(signals)
        future: asyncio.Future[WriteResult] = asyncio.get_running_loop().create_future()
        with self._lock:
            self._pending.append(_Pending(signals, body, future))
            self._pending_rows += count
            self._joined += 1
            self._in_flight += 1
            if self._in_flight > self._most_in_flight:
                self._most_in_flight = self._in_flight
            all_in = len(self._pending) >= self._expected
        if all_in:
            self._all_in.set()
        if not self._wake.is_set():  # the writer clears it before it reads what is pending
            self._wake.set()
        # Only the writer holds the signals now: they are freed on its thread, whose cache
        # holds them after the rows were built, not on the event loop's.
        del signals, body
        # Not shielded: a cancelled waiter cancels its own future, which the writer then
        # skips; its signals are written all the same.
        return await future

    async def close(self) -> None:
        """Stop taking signals, flush everything pending, and end the writer thread."""
        self._closing = True
        self._wake.set()
        if self._stopped is not None:
            await self._stopped

    # ------------------------------------------------------------ the writer thread

    def _run(self) -> None:
        store: SignalStore | None = None
        taken: list[_Pending] = []
        try:
            store = self._open_store()
            while True:
                self._wake.wait()
                self._wake.clear()
                follow = False  # start the next flush's INSERT before anybody is in
                while self._pending or (follow and not self._closing):
                    follow = self._stream_flush(store) > 0
                if self._closing and not self._pending:
                    return
        except Exception as exc:  # the database is gone, or a bug: nothing is left hanging
            log.error("the writer stopped: %s", type(exc).__name__)
            self._answer(taken, None)
        finally:
            self._closing = True
            with self._lock:  # whoever is still waiting (or slipped in while closing) fails
                stranded = list(self._pending)
                self._pending.clear()
            self._answer(stranded, None)
            if store is not None:
                try:
                    store.close()
                except Exception as exc:  # the thread must still report that it stopped
                    log.error("closing the store failed: %s", type(exc).__name__)
            self._call(self._set_stopped)

    def _take(self) -> list[_Pending]:
        """Pending requests from the front, whole, up to ``max_rows`` rows (at least one)."""
        limit = self._max_rows
        taken: list[_Pending] = []
        rows = 0
        with self._lock:
            while self._pending:
                size = len(self._pending[0].signals)
                if taken and rows + size > limit:
                    break
                taken.append(self._pending.popleft())
                rows += size
            self._pending_rows -= rows
        return taken

    def _first_in(self) -> bool:
        """Wait up to ``follow_s`` (``FOLLOW_S``) for a request; whether one came."""
        deadline = time.monotonic() + self._follow
        while not self._pending and not self._closing:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self._wake.wait(left)
            self._wake.clear()
        return bool(self._pending)

    def _gather(self) -> None:
        """Wait while requests keep joining a small flush.

        A transaction's cost is nearly fixed, so one flush of many requests beats several
        small ones. The wait ends as soon as one of these holds:

        - the flush holds ``LARGE_FLUSH_ROWS`` rows (worth its fixed cost);
        - as many requests are pending as were ever in flight at once lately (within
          ``IN_FLIGHT_WINDOW_S``): everybody is in. Senders that wait for their answer before
          they send again cannot join any more, so waiting on would only delay them all;
        - ``quiet`` passes with nobody new (fewer came than lately, or senders that do not
          wait for answers);
        - ``linger`` passes.
        """
        now = time.monotonic()
        if now >= self._window_ends:
            with self._lock:
                self._most_before, self._most_in_flight = self._most_in_flight, self._in_flight
            self._window_ends = now + self._in_flight_window
        expected = max(self._most_in_flight, self._most_before)
        deadline = now + self._linger
        self._expected = expected
        try:
            while not self._closing and self._pending_rows < LARGE_FLUSH_ROWS:
                self._all_in.clear()
                if len(self._pending) >= expected:
                    return
                wait = min(self._quiet, deadline - time.monotonic())
                if wait <= 0:
                    return
                joined = self._joined
                self._all_in.wait(wait)  # set by the submit that brings everybody in
                if self._joined == joined:
                    return
        finally:
            self._expected = _NOBODY

    def _stream_flush(self, store: SignalStore) -> int:
        """Write one flush whose INSERT starts before its requests are in; return how many
        requests it held (0: none came within ``FOLLOW_S``).

        The store calls ``take`` once it is ready for the rows: only then does the writer wait
        for the first request, gather and take the requests (``_take``). A
        statement that fails before it took any request (the database is gone) fails those
        waiting, who would have been in it.
        """
        taken: list[_Pending] = []

        def take() -> Flush | None:
            if not self._first_in():
                return None
            self._gather()
            taken.extend(self._take())
            return _flush_of(taken)

        try:
            written = store.write_streamed(self._today(), take)
        except Exception as exc:
            failed = taken or self._take()
            self._failed(failed, exc)
            return len(failed)
        if taken:
            self._written(taken, written.results, refused=written.refused_bodies)
        return len(taken)

    def _failed(self, taken: list[_Pending], exc: Exception) -> None:
        log.error("flush of %d requests failed: %s", len(taken), type(exc).__name__)
        self.health.failed("the last flush failed")
        self._telemetry.flush_failures.add(1)
        self._answer(taken, None)

    def _written(self, taken: list[_Pending], results: list[WriteResult], *, refused: bool) -> None:
        rows = sum(len(p.signals) for p in taken)
        self.health.succeeded()
        self._telemetry.flush_rows.record(rows)
        accepted = sum(r.accepted for r in results)
        self._telemetry.accepted.add(accepted)
        self._telemetry.duplicates.add(rows - accepted)
        if refused:
            self._telemetry.refused_bodies.add(1)
        self._answer(taken, results)

    def _answer(self, taken: list[_Pending], results: list[WriteResult] | None) -> None:
        """Settle the requests' futures on the event loop: results, or ``WriteError``."""
        with self._lock:
            self._in_flight -= len(taken)
        for p in taken:  # written or failed: the signals are freed here, not on the loop
            p.signals = ()

        def settle() -> None:
            for i, p in enumerate(taken):
                if p.future.done():
                    continue
                if results is None:
                    p.future.set_exception(WriteError("the flush failed"))
                    # Marked read: a client that went away leaves nobody to read it (its
                    # waiter, if any, still gets it). No done callback on the hot path.
                    p.future.exception()
                else:
                    p.future.set_result(results[i])

        self._call(settle)

    def _set_stopped(self) -> None:
        if self._stopped is not None and not self._stopped.done():
            self._stopped.set_result(None)

    def _call(self, fn: Callable[[], None]) -> None:
        if self._loop is None:
            return
        try:
            self._loop.call_soon_threadsafe(fn)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            pass
