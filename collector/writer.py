"""The group-commit writer: validated signals from concurrent requests, one INSERT per flush.

Requests ``submit`` their validated signals, with the body they were validated from, and wait.
A writer thread flushes: it takes the pending requests (up to ``max_rows``; a request is never
split; a small flush first waits a moment for company, see ``_gather``) and writes them with
one INSERT in one transaction (``collector.rows``: a large flush hands DuckDB the request
bodies it validated, a small one is shaped from the models; duplicates of stored ids are
skipped: see ``insert_table``). Under load, a small flush's INSERT starts as soon as the
previous flush committed, before its requests are in: DuckDB plans it while the event loop
answers and takes in the next requests, and reads its rows from a stream that ends when the
gather ends (``_stream_flush``).

The writer thread runs almost only C++ that releases the GIL, and touches Python as rarely as
it can: each time it does, it may wait for the GIL, which the event loop holds for a whole
pydantic call (~1.3 ms for a 100-signal batch). So a flush is one statement, and a large
flush is one call into DuckDB that parses and shapes the bodies itself, with no Python per
row. Even so, duckdb-python takes the GIL back 15-18 times during any statement (measured even
for ``SELECT 1``: it checks for Ctrl-C after every execution task), each time waiting for the
loop's current pydantic call: a 1,600-row flush takes ~30 ms of wall time for ~17 ms of CPU
beside a busy event loop. (Shaping columns with Arrow kernels called one by one from this
thread measured 40 ms instead of 1 ms.) While a flush runs, new requests gather for the next
one, so the batch size follows the load.

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
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Protocol, overload

import duckdb
import pyarrow as pa

from collector._sql import load_sql
from collector.db import Database
from collector.errors import WriteError
from collector.ingest import validate_batch
from collector.rows import ROWS, rows_from_models
from collector.telemetry import Telemetry
from contract.schema import FrictionSignal

if TYPE_CHECKING:
    from collector.lake.sink import LakeSink

__all__ = [
    "KEPT_MODELS_MAX",
    "BodyOnly",
    "DiscardSink",
    "FlushPlan",
    "FlushWork",
    "GroupCommitWriter",
    "IncomingTable",
    "SignalSink",
    "WriteResult",
    "flush_rows",
    "insert_bodies",
    "insert_table",
]

log = logging.getLogger("collector")


class WriteResult(NamedTuple):
    accepted: int
    duplicates: int


class SignalSink(Protocol):
    """Where validated signals go. The writer; a discarding sink for benchmarks.

    ``body`` is the request body the signals were validated from (after its content coding),
    or None when there is none (signals built in process).
    """

    async def submit(
        self, signals: Sequence[FrictionSignal], body: bytes | None = None
    ) -> WriteResult: ...


class DiscardSink:
    """Accepts everything and stores nothing (the benchmark's validate-and-discard baseline)."""

    async def submit(
        self, signals: Sequence[FrictionSignal], body: bytes | None = None
    ) -> WriteResult:
        return WriteResult(len(signals), 0)


def utc_today() -> dt.date:
    return dt.datetime.now(dt.UTC).date()


@dataclass(frozen=True, slots=True)
class FlushPlan:
    """The rows of one flush: each id once (first occurrence wins), and who sent what."""

    batch_sizes: list[int]
    #: Per batch, the ids it was first to carry in this flush.
    firsts: list[list[uuid.UUID]]
    #: The ids to write, in order: each once.
    ids: list[uuid.UUID]
    #: Per signal of the flush, in order, whether it is written (None: all are).
    keep: list[bool] | None

    @classmethod
    def of(cls, batches: Sequence[Sequence[FrictionSignal]]) -> FlushPlan:
        seen: set[uuid.UUID] = set()
        ids: list[uuid.UUID] = []
        keep: list[bool] = []
        firsts: list[list[uuid.UUID]] = []
        for batch in batches:
            mine: list[uuid.UUID] = []
            for signal in batch:
                sid = signal.signal_id
                fresh = sid not in seen
                keep.append(fresh)
                if fresh:
                    seen.add(sid)
                    ids.append(sid)
                    mine.append(sid)
            firsts.append(mine)
        return cls([len(b) for b in batches], firsts, ids, None if all(keep) else keep)

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


#: The writer's small flushes hold fewer rows than this: requests that kept their models,
#: written from them with a streamed INSERT (``GroupCommitWriter._stream_flush``). A flush that
#: starts with a request that kept only its body takes what is pending up to ``max_rows`` and
#: hands DuckDB the request bodies (``insert_bodies``), as ``FlushWork`` does from this many
#: rows on. Also the size from which a flush starts without waiting for company (``_gather``).
LARGE_FLUSH_ROWS = 500

#: Up to this many signals, a request's validated models wait with it for its flush; a larger
#: request waits as its body only (``BodyOnly``). Models kept alive across the wait cost the
#: event loop dearly: ~48 waiting 100-signal requests are ~150,000 live Python objects, which
#: the garbage collector walks again and again and which are freed later, from cold memory.
#: Dropping them right after validation measured 36,560 -> 52,400 signals/s at batch 100
#: (5 interleaved rounds, ``make bench`` cells). A one-signal request's models are a few dozen
#: objects, and a flush of such requests is written from its models (``insert_table``), ~2-3
#: ms cheaper than from its bodies.
KEPT_MODELS_MAX = 10

#: How long the writer remembers how many requests were in flight at once (``_gather``): the
#: most in this window or the one before it.
IN_FLIGHT_WINDOW_S = 0.5

_NOBODY = 1 << 62  # no gather is waiting for a number of requests

#: How long a small flush's INSERT, started right after the previous flush, waits for its
#: first request (``GroupCommitWriter._stream_flush``); if none comes, it ends empty.
FOLLOW_S = 0.02


class BodyOnly(Sequence[FrictionSignal]):
    """A request's validated signals, kept only as the body they were validated from.

    Its length is known; the models are validated again from the body (the same bytes, the
    same strict model: the same signals), on the writer thread, only when a flush needs them:
    a flush that DuckDB refused, or one forced to be written from its models.
    """

    __slots__ = ("_count", "_signals", "body")

    def __init__(self, body: bytes, count: int) -> None:
        self.body = body
        self._count = count
        self._signals: tuple[FrictionSignal, ...] | None = None

    def __len__(self) -> int:
        return self._count

    def _validated(self) -> tuple[FrictionSignal, ...]:
        if self._signals is None:
            signals = tuple(validate_batch(self.body).signals)
            if len(signals) != self._count:  # cannot happen: the same bytes, the same model
                raise WriteError("a body no longer holds the signals validated from it")
            self._signals = signals
        return self._signals

    @overload
    def __getitem__(self, index: int) -> FrictionSignal: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[FrictionSignal]: ...
    def __getitem__(self, index: int | slice) -> FrictionSignal | Sequence[FrictionSignal]:
        return self._validated()[index]

    def __iter__(self) -> Iterator[FrictionSignal]:
        return iter(self._validated())


#: What DuckDB raises when it refuses a flush's bodies: a stored or repeated id (the primary
#: key), or a body it would not read as pydantic did (``collector/rows.py``).
_REFUSED = (duckdb.ConstraintException, duckdb.InvalidInputException, duckdb.ConversionException)


@dataclass(frozen=True, slots=True)
class FlushWork:
    """One flush: its requests' signals, and the bodies they were validated from."""

    batches: Sequence[Sequence[FrictionSignal]]
    #: Per request, its body (None: signals built in process, written from the models).
    bodies: Sequence[bytes | None]

    @property
    def rows(self) -> int:
        return sum(len(batch) for batch in self.batches)

    def write(
        self,
        con: duckdb.DuckDBPyConnection,
        received_day: dt.date,
        incoming: IncomingTable | None = None,
        *,
        from_bodies: bool | None = None,
    ) -> tuple[list[WriteResult], bool]:
        """Insert and commit (the writer thread): per-request results, and whether DuckDB
        refused the bodies (the flush was then written from the models).

        ``from_bodies``: hand DuckDB the request bodies (True) or shape the rows from the
        models (False); None chooses: the bodies from ``LARGE_FLUSH_ROWS`` rows on, or when a
        request kept only its body (``BodyOnly``: its models would have to be validated
        again). Both store the same rows. A flush with a request without a body is written
        from the models.
        """
        if from_bodies is None:
            from_bodies = self.rows >= LARGE_FLUSH_ROWS or any(
                isinstance(batch, BodyOnly) for batch in self.batches
            )
        refused = conflict = False
        if from_bodies and None not in self.bodies:
            bodies = [body for body in self.bodies if body is not None]
            counts = [len(batch) for batch in self.batches]
            try:
                insert_bodies(con, bodies, counts, received_day)
                return [WriteResult(count, 0) for count in counts], False
            except _REFUSED as exc:  # never logged: a refusal may quote the body
                refused = True
                conflict = isinstance(exc, duckdb.ConstraintException)
        plan = FlushPlan.of(self.batches)
        unique = [s for batch in self.batches for s in batch]
        if plan.keep is not None:
            unique = [s for s, kept in zip(unique, plan.keep, strict=True) if kept]
        table = rows_from_models(unique)
        inserted = insert_table(
            con, table, plan.ids, received_day, incoming, known_conflict=conflict
        )
        return plan.results(inserted), refused


def insert_bodies(
    con: duckdb.DuckDBPyConnection,
    bodies: Sequence[bytes],
    counts: Sequence[int],
    received_day: dt.date,
) -> None:
    """Insert the signals of validated request bodies in one statement, one transaction.

    ``counts[i]``: the signals validated from ``bodies[i]``. DuckDB parses and shapes them in
    C++, mostly without the GIL (``collector/sql/insert_bodies.sql``); the one Python step is
    handing it the bodies as strings (a copy). Raises one of ``_REFUSED`` when DuckDB would not
    store exactly the validated signals or an id is stored or repeated; nothing is written then.
    """
    # A validated body is UTF-8 (pydantic refuses anything else).
    texts = [body.decode() for body in bodies]
    con.execute(load_sql("insert_bodies"), [received_day, texts, list(counts)])


def flush_rows(
    con: duckdb.DuckDBPyConnection,
    batches: Sequence[Sequence[FrictionSignal]],
    received_day: dt.date,
    bodies: Sequence[bytes | None] | None = None,
    *,
    from_bodies: bool | None = None,
) -> list[WriteResult]:
    """Write the batches in one INSERT; one result per batch, in order (all on one thread).

    ``bodies[i]`` is the request body batch ``i`` was validated from; without it, the batch is
    written from its models.
    """
    batches = list(batches)
    if not any(batches):
        return [WriteResult(0, 0) for _ in batches]
    work = FlushWork(batches, bodies if bodies is not None else [None] * len(batches))
    return work.write(con, received_day, from_bodies=from_bodies)[0]


class IncomingTable:
    """``incoming``: the Arrow table of the flush being written, registered ONCE on a connection.

    DuckDB scans it through the Arrow PyCapsule stream (``__arrow_c_stream__``), asked anew at
    every statement, so the writer only swaps the table between flushes. Registering and
    unregistering a table for every flush cost ~1 ms of DuckDB's Python glue per flush, a
    third of a small flush (measured).
    """

    NAME = "incoming"
    #: Shared (an Arrow table is immutable): building an empty one costs ~0.2 ms of GIL.
    EMPTY: pa.Table = ROWS.empty_table()

    def __init__(self) -> None:
        self._table: pa.Table = self.EMPTY
        self._batches: Callable[[], Iterator[pa.RecordBatch]] | None = None
        self._on: duckdb.DuckDBPyConnection | None = None

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        if self._batches is not None:
            reader = pa.RecordBatchReader.from_batches(ROWS, self._batches())
            return reader.__arrow_c_stream__(requested_schema)
        return self._table.__arrow_c_stream__(requested_schema)

    def register(self, con: duckdb.DuckDBPyConnection) -> None:
        """Register on ``con`` unless already done (one connection at a time)."""
        if self._on is not con:
            con.register(self.NAME, self)
            self._on = con

    @contextmanager
    def holding(self, table: pa.Table) -> Iterator[None]:
        """``incoming`` is ``table`` within the block, empty after it (no rows kept alive)."""
        self._table = table
        try:
            yield
        finally:
            self._table = self.EMPTY

    @contextmanager
    def streaming(self, batches: Callable[[], Iterator[pa.RecordBatch]]) -> Iterator[None]:
        """Within the block, ``incoming`` streams the batches of ``batches()`` (``ROWS``),
        which DuckDB pulls while it executes: the rows may be produced after the statement
        started. DuckDB asks for a stream at bind time too (for its schema) without reading
        it, so ``batches`` is called twice per statement; a generator's body runs only once
        its first batch is asked for."""
        self._batches = batches
        try:
            yield
        finally:
            self._batches = None


def insert_table(
    con: duckdb.DuckDBPyConnection,
    table: pa.Table,
    ids: Sequence[uuid.UUID],
    received_day: dt.date,
    incoming: IncomingTable | None = None,
    *,
    known_conflict: bool = False,
) -> set[uuid.UUID] | None:
    """Insert rows (``ROWS``) with distinct ids in one transaction; None if all went in, else
    the ids that did.

    ``incoming`` is the connection's registered ``IncomingTable``; without one, a table is
    registered for this call only.

    The fast path is a plain INSERT (``ON CONFLICT DO NOTHING`` costs ~4 ms more per statement
    in DuckDB, whatever the row count). When an id is already stored -- a client retrying a
    batch whose answer it lost -- the primary key refuses the statement; the transaction rolls
    back and the slow path inserts only the ids not stored yet. ``known_conflict`` (the
    primary key just refused these rows) goes straight to the slow path. One thread owns the
    connection, so nothing can slip in between. Apart from that rare path this is one DuckDB
    statement, which runs mostly without the GIL: the event loop keeps validating meanwhile.
    """
    if incoming is None:
        incoming = IncomingTable()
        incoming.register(con)
        try:
            return insert_table(
                con, table, ids, received_day, incoming, known_conflict=known_conflict
            )
        finally:
            con.unregister(IncomingTable.NAME)
    incoming.register(con)
    insert = load_sql("insert_rows")
    if not known_conflict:
        with incoming.holding(table):
            try:
                # One statement in auto-commit mode is one transaction: atomic, and one round
                # trip through the Python binding (each return to Python waits for the GIL).
                con.execute(insert, [received_day])
                return None
            except duckdb.ConstraintException:
                pass  # the statement rolled back as a whole
    con.execute("BEGIN TRANSACTION")
    try:
        with incoming.holding(table):
            stored = {row[0] for row in con.execute(load_sql("stored_ids")).fetchall()}
        fresh = [sid not in stored for sid in ids]
        with incoming.holding(table.filter(pa.array(fresh, pa.bool_()))):
            con.execute(insert, [received_day])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return {sid for sid in ids if sid not in stored}


@dataclass(slots=True)
class _Pending:
    signals: Sequence[FrictionSignal]
    body: bytes | None
    future: asyncio.Future[WriteResult]


class _StreamedFlush:
    """The rows of one streamed small flush (``GroupCommitWriter._stream_flush``)."""

    __slots__ = ("_started", "_writer", "plan", "table", "taken")

    def __init__(self, writer: GroupCommitWriter) -> None:
        self._writer = writer
        self._started = False
        self.taken: list[_Pending] = []
        self.plan = FlushPlan.of([])
        self.table: pa.Table = IncomingTable.EMPTY

    def batches(self) -> Iterator[pa.RecordBatch]:
        """The flush's rows, produced when DuckDB first asks for them (once per flush)."""
        if self._started:
            return
        self._started = True
        writer = self._writer
        if not writer._first_in():
            return
        writer._gather()
        self.taken = writer._take(small=True)
        batches = [p.signals for p in self.taken]
        self.plan = FlushPlan.of(batches)
        unique = [s for batch in batches for s in batch]
        if self.plan.keep is not None:
            unique = [s for s, kept in zip(unique, self.plan.keep, strict=True) if kept]
        self.table = rows_from_models(unique)
        yield from self.table.to_batches()


class GroupCommitWriter:
    """Gathers submitted signals and writes them with one INSERT per flush, on its own thread.

    The flushes run on a writer thread with its own DuckDB connection (a cursor of the
    database's), not as an event-loop task: a task would come back to the loop between a flush
    and the next and wait there behind every request queued for validation (~40 ms a flush at
    100-signal batches, measured), leaving the database idle meanwhile. Requests are answered
    on the event loop (``call_soon_threadsafe``).
    """

    def __init__(
        self,
        db: Database,
        telemetry: Telemetry,
        *,
        max_rows: int = 10_000,
        linger_s: float = 0.005,
        quiet_s: float = 0.001,
        in_flight_window_s: float = IN_FLIGHT_WINDOW_S,
        follow_s: float = FOLLOW_S,
        today: Callable[[], dt.date] = utc_today,
        lake: LakeSink | None = None,
    ) -> None:
        self._db = db
        self._lake = lake  # lake mode: each flush is one Delta commit (collector/lake/sink.py)
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
        self._incoming = IncomingTable()

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
        self, signals: Sequence[FrictionSignal], body: bytes | None = None
    ) -> WriteResult:
        """Queue the signals; return once they are committed (or raise ``WriteError``).

        ``body`` must be the bytes ``signals`` were validated from (the body of one request).
        A request of more than ``KEPT_MODELS_MAX`` signals waits as its body only: the caller
        should not hold on to ``signals`` while it waits either.
        """
        if not self.running:
            raise WriteError("the writer is not running")
        count = len(signals)
        kept = signals if body is None or count <= KEPT_MODELS_MAX else BodyOnly(body, count)
        del signals  # this frame waits below: it must not keep the models alive meanwhile
        future: asyncio.Future[WriteResult] = asyncio.get_running_loop().create_future()
        with self._lock:
            self._pending.append(_Pending(kept, body, future))
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
        con: duckdb.DuckDBPyConnection | None = None
        taken: list[_Pending] = []
        try:
            con = self._db.run_sync(lambda main: main.cursor())
            while True:
                self._wake.wait()
                self._wake.clear()
                follow = False  # start the next small flush's INSERT before anybody is in
                while self._pending or (follow and not self._closing):
                    if self._pending and (
                        self._lake is not None or isinstance(self._pending[0].signals, BodyOnly)
                    ):
                        self._gather()
                        taken = self._take()
                        self._flush(con, taken)
                        taken = []
                        follow = False
                    else:
                        follow = self._stream_flush(con) > 0
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
            if con is not None:
                con.close()
            self._call(self._set_stopped)

    def _take(self, *, small: bool = False) -> list[_Pending]:
        """Pending requests from the front, whole, up to ``max_rows`` rows (at least one).

        ``small``: only requests that kept their models (not ``BodyOnly``), fewer than
        ``LARGE_FLUSH_ROWS`` rows in all (at least one request): a flush written from its
        models. It stops at the first request that kept only its body.
        """
        limit = min(self._max_rows, LARGE_FLUSH_ROWS - 1) if small else self._max_rows
        taken: list[_Pending] = []
        rows = 0
        with self._lock:
            while self._pending:
                first = self._pending[0]
                if small and isinstance(first.signals, BodyOnly):
                    break
                size = len(first.signals)
                if taken and rows + size > limit:
                    break
                taken.append(self._pending.popleft())
                rows += size
            self._pending_rows -= rows
        return taken

    def _first_in(self) -> bool:
        """Wait up to ``follow_s`` (``FOLLOW_S``) for a request; whether one written from its
        models is first in line."""
        deadline = time.monotonic() + self._follow
        while not self._pending and not self._closing:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self._wake.wait(left)
            self._wake.clear()
        pending = self._pending
        return bool(pending) and not isinstance(pending[0].signals, BodyOnly)

    def _gather(self) -> None:
        """Wait while requests keep joining a small flush.

        Each INSERT costs a few milliseconds whatever its size, so one flush of 60 one-signal
        requests beats a flush of 1 followed by one of 59 -- which is what flushing at once
        does when requests stream in while the previous flush commits. The wait ends as soon
        as one of these holds:

        - the flush holds ``LARGE_FLUSH_ROWS`` rows (worth its fixed cost, a few hundred
          rows' worth);
        - as many requests are pending as were ever in flight at once lately (within
          ``IN_FLIGHT_WINDOW_S``): everybody is in. Senders that wait for their answer before
          they send again cannot join any more, so waiting on only delays them all. With 64
          one-signal senders this ends each wait ~1 ms earlier than quiet does (+20 %,
          4,813 -> 5,754 req/s over 4 interleaved rounds of ``make bench`` cells);
        - ``quiet`` passes with nobody new (fewer came than lately, or senders that do not
          wait for answers);
        - ``linger`` passes.

        Waiting for everybody (or quiet), rather than for as many requests as the previous
        flush held, lets a flush take every request in flight: with 64 one-signal senders,
        flushes of 32 alternating with the event loop's work (each slowed by the other: the
        writer waits for the GIL, both share two cores) settled at ~3,500-4,100 req/s;
        flushes of 64 while the loop is idle at ~4,400-4,900 (``make bench`` cells,
        interleaved runs).
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

    def _flush(self, con: duckdb.DuckDBPyConnection, taken: list[_Pending]) -> None:
        batches = [p.signals for p in taken]
        try:
            work = FlushWork(batches, [p.body for p in taken])
            if self._lake is not None:
                results, refused = self._lake.write(work, self._today()), False
            else:
                results, refused = work.write(con, self._today(), self._incoming)
        except Exception as exc:
            self._failed(taken, exc)
            return
        self._written(taken, results, refused=refused)

    def _stream_flush(self, con: duckdb.DuckDBPyConnection) -> int:
        """Write one small flush whose INSERT starts before its requests are in; return how
        many requests it held (0: none came within ``FOLLOW_S``, or a large one came first).

        The INSERT reads ``incoming`` as a stream (``IncomingTable.streaming``). Its first
        batch is asked for once DuckDB has parsed, bound and planned the statement (~1.5 ms
        of a ~3 ms INSERT): only then does the writer wait for the first request, gather
        (``_gather``), take the requests (``_take(small=True)``) and shape their rows. Called
        right after the previous flush committed, the planning overlaps the event loop's
        answering and taking in the next requests, instead of following them. With 64
        one-signal senders: 6,938 -> 8,189 and 7,439 -> 8,788 req/s (two runs of 4
        interleaved rounds of ``make bench`` cells); every round of it beat every round
        without it.

        An id already stored makes the primary key refuse the statement; the flush is then
        written again by ``insert_table``'s slow path. A statement that fails before it took
        any request (the database is gone) fails those waiting, who would have been in it.
        """
        flush = _StreamedFlush(self)
        day = self._today()
        try:
            self._incoming.register(con)
            conflict = False
            with self._incoming.streaming(flush.batches):
                try:
                    con.execute(load_sql("insert_rows"), [day])
                except duckdb.ConstraintException:
                    conflict = True  # the statement rolled back as a whole
            inserted = None
            if conflict:
                inserted = insert_table(
                    con, flush.table, flush.plan.ids, day, self._incoming, known_conflict=True
                )
        except Exception as exc:
            taken = flush.taken or self._take(small=True)
            self._failed(taken, exc)
            return len(taken)
        if flush.taken:
            self._written(flush.taken, flush.plan.results(inserted), refused=False)
        return len(flush.taken)

    def _failed(self, taken: list[_Pending], exc: Exception) -> None:
        log.error("flush of %d requests failed: %s", len(taken), type(exc).__name__)
        self._telemetry.flush_failures.add(1)
        self._answer(taken, None)

    def _written(self, taken: list[_Pending], results: list[WriteResult], *, refused: bool) -> None:
        rows = sum(len(p.signals) for p in taken)
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
