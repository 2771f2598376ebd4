"""Storage of the write path: one flush in, one transaction out (``SignalStore``).

The group-commit writer (``collector.writer``) decides WHEN a flush goes and WHO is in it; a
store decides HOW its rows are written. ``SignalStore`` is that boundary, and it is small on
purpose: a store is opened on the writer thread, used only there, one flush at a time, and
closed there.

``DuckDBStore`` is the collector's store. Each flush is ONE statement, so one transaction
(autocommit: no BEGIN and COMMIT statements to pay for): its rows go into ``signals``
(``collector/sql/insert_rows.sql``), read from the flush's Arrow rows (``Flush.table``: built
once) through one ``IncomingTable`` registered once on the connection. duckdb-python runs it
mostly without the GIL while the event loop keeps validating.

De-duplication costs nothing that grows with the file and no statement: ``signals`` has no
key, and the store holds the ids of the received days not closed yet in memory
(``collector.open_ids``), loaded from ``signals`` when it opens and added to after each
commit. A flush whose ids are all new is written whole (the fast path); otherwise it is
written with each id once and none stored before (``FlushPlan``), in the same one statement.
A retry that arrives after its first copy's day closed is stored, and dropped when its own day
is rewritten (``collector.retention.reorder_day``).
``docs/write-path.md`` explains each choice and what it measured.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import NamedTuple, Protocol

import duckdb
import pyarrow as pa

from collector.db import SQL_DIR
from collector.flush import Flush, WriteResult
from collector.open_ids import PRUNE_S, OpenIds
from collector.rows import ROWS, ValidSignal
from service.db import Database
from service.sql import load_sql

__all__ = [
    "DuckDBStore",
    "IncomingTable",
    "SignalStore",
    "StoreOpener",
    "TakeFlush",
    "Written",
    "flush_rows",
    "insert_bodies",
    "write_when_taken",
]


class Written(NamedTuple):
    """What a store did with one flush."""

    #: One result per request of the flush, in order.
    results: list[WriteResult]
    #: Whether the store refused the request bodies and wrote the models instead (telemetry).
    refused_bodies: bool


#: Called by a store at most once per streamed flush, on the writer thread: it waits for the
#: flush's requests (it may block) and returns them, or None if none came.
TakeFlush = Callable[[], Flush | None]


class SignalStore(Protocol):
    """Where the writer's flushes go: all calls on the writer thread, one flush at a time.

    Each call writes its flush in ONE transaction and returns only after it committed; on
    failure it raises and nothing of the flush is stored (the writer then fails exactly the
    requests of that flush). Ids already stored count as duplicates, never as errors.
    """

    def write(self, flush: Flush, received_day: dt.date) -> Written:
        """Store ``flush`` (every signal with ``received_day``)."""
        ...

    def write_streamed(self, received_day: dt.date, take: TakeFlush) -> Written:
        """Start writing before the flush exists; ``take()`` supplies it (an empty ``Written``
        when it returns None). A store with nothing to prepare implements it with
        ``write_when_taken``."""
        ...

    def close(self) -> None:
        """Release what ``StoreOpener`` acquired (on the writer thread, after its last flush)."""
        ...


#: Opens the writer's store, on the writer thread, when the writer starts.
StoreOpener = Callable[[], SignalStore]

_NOTHING = Written([], False)


def write_when_taken(store: SignalStore, received_day: dt.date, take: TakeFlush) -> Written:
    """``write_streamed`` for a store that cannot start before its rows exist."""
    flush = take()
    return _NOTHING if flush is None else store.write(flush, received_day)


class IncomingTable:
    """``incoming``: the Arrow rows of the flush being written, registered ONCE on a connection.

    DuckDB scans it through the Arrow PyCapsule stream (``__arrow_c_stream__``), asked anew at
    every statement, so a store only swaps the rows between flushes: registering a table per
    flush would cost a round of DuckDB's Python glue every time.
    """

    NAME = "incoming"
    #: Shared (an Arrow table is immutable), so no flush pays for building an empty one.
    EMPTY: pa.Table = ROWS.empty_table()

    def __init__(self) -> None:
        self._table: pa.Table = self.EMPTY
        self._batches: Callable[[], Iterator[pa.RecordBatch]] | None = None

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        if self._batches is not None:
            reader = pa.RecordBatchReader.from_batches(ROWS, self._batches())
            return reader.__arrow_c_stream__(requested_schema)
        return self._table.__arrow_c_stream__(requested_schema)

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


class _Rows(NamedTuple):
    """What one flush writes and answers."""

    table: pa.Table
    results: list[WriteResult]
    #: The ids claimed for the whole flush (the fast path): released if the flush fails.
    claimed: list[int] | None
    #: Else the ids of the rows written (``uuid.UUID.int``), held once the flush committed.
    planned: set[int]


class _Stream:
    """The rows of one streamed flush, taken when DuckDB first asks for them."""

    __slots__ = ("_rows_of", "_started", "_take", "rows")

    def __init__(self, take: TakeFlush, rows_of: Callable[[Flush], _Rows]) -> None:
        self._take = take
        self._rows_of = rows_of
        self._started = False
        self.rows: _Rows | None = None

    def batches(self) -> Iterator[pa.RecordBatch]:
        if self._started:  # the bind-time stream is never read; the flush is taken once
            return
        self._started = True
        flush = self._take()
        if flush is None:
            return
        self.rows = self._rows_of(flush)
        yield from self.rows.table.to_batches()


class DuckDBStore:
    """A ``SignalStore`` on one DuckDB connection, owned by one thread."""

    def __init__(
        self, con: duckdb.DuckDBPyConnection, *, owned: bool = False, prune_s: float = PRUNE_S
    ) -> None:
        """``owned``: ``close`` closes ``con`` (else it only unregisters ``incoming``).
        ``prune_s``: how often the store asks whether an earlier day it holds ids of closed
        (``OpenIds.prune``)."""
        self._con = con
        self._owned = owned
        self._prune_s = prune_s
        self._incoming = IncomingTable()
        self._registered = False
        self._open: OpenIds | None = None

    @classmethod
    def opener(cls, db: Database) -> StoreOpener:
        """Opens a store on a cursor of the collector's database (for the writer thread)."""
        return lambda: cls(db.run_sync(lambda main: main.cursor()), owned=True)

    @property
    def open_ids(self) -> OpenIds:
        """The ids of the open days, loaded from ``signals`` on first use."""
        if self._open is None:
            self._open = OpenIds.load(self._con, prune_s=self._prune_s)
        return self._open

    def write(self, flush: Flush, received_day: dt.date) -> Written:
        """The flush's rows, each id once and none stored before, in one statement: one
        transaction, committed when ``execute`` returns (autocommit)."""
        self._prepare(received_day)
        rows = self._rows_of(flush, received_day)
        try:
            with self._incoming.holding(rows.table):
                self._con.execute(load_sql(SQL_DIR, "insert_rows"), [received_day])
        except BaseException:
            self._failed(rows, received_day)
            raise
        return self._committed(rows, received_day)

    def write_streamed(self, received_day: dt.date, take: TakeFlush) -> Written:
        """The rows' INSERT starts at once and reads ``incoming`` as a stream: DuckDB parses,
        binds and plans it before it asks for the first rows, and only then is the flush
        taken. Planning thus overlaps the gathering of the requests instead of following it."""
        self._prepare(received_day)
        stream = _Stream(take, functools.partial(self._rows_of, day=received_day))
        try:
            with self._incoming.streaming(stream.batches):
                self._con.execute(load_sql(SQL_DIR, "insert_rows"), [received_day])
        except BaseException:
            if stream.rows is not None:
                self._failed(stream.rows, received_day)
            raise
        if stream.rows is None:  # nobody came: the INSERT read no row
            return _NOTHING
        return self._committed(stream.rows, received_day)

    def close(self) -> None:
        if self._owned:
            self._con.close()
        elif self._registered:
            self._con.unregister(IncomingTable.NAME)
            self._registered = False

    def _prepare(self, received_day: dt.date) -> None:
        """Before a flush's transaction: ``incoming`` registered, the open days' ids loaded,
        and the closed days among them dropped."""
        if not self._registered:
            self._con.register(IncomingTable.NAME, self._incoming)
            self._registered = True
        self.open_ids.prune(self._con, received_day)

    def _rows_of(self, flush: Flush, day: dt.date) -> _Rows:
        """The fast path when no id of the flush repeats or is held (its ids claimed); else
        the plan."""
        table, ids = flush.table_and_ids()
        if self.open_ids.claim(day, ids):
            return _Rows(table, [WriteResult(len(b), 0) for b in flush.batches], ids, set())
        plan, table = flush.planned(self.open_ids.held(ids))
        return _Rows(table, plan.results, None, plan.ids)

    def _failed(self, rows: _Rows, received_day: dt.date) -> None:
        if rows.claimed is not None:
            self.open_ids.release(received_day, rows.claimed)

    def _committed(self, rows: _Rows, received_day: dt.date) -> Written:
        if rows.claimed is None:
            self.open_ids.add(received_day, rows.planned)
        return Written(rows.results, False)


def insert_bodies(
    con: duckdb.DuckDBPyConnection,
    bodies: Sequence[bytes],
    counts: Sequence[int],
    received_day: dt.date,
) -> None:
    """Insert the signals of validated request bodies in one statement, one transaction,
    parsed and shaped by DuckDB (``collector/sql/insert_bodies.sql``) on ``con``.

    ``counts[i]``: the signals validated from ``bodies[i]``. Not the collector's write path
    (which never parses a body twice): the lake's sink shapes large flushes with it. Raises a
    DuckDB error when DuckDB would not read exactly the validated signals; nothing is written
    then.
    """
    # A validated body is UTF-8 (pydantic refuses anything else).
    texts = [body.decode() for body in bodies]
    con.execute(load_sql(SQL_DIR, "insert_bodies"), [received_day, texts, list(counts)])


def flush_rows(
    con: duckdb.DuckDBPyConnection,
    batches: Sequence[Sequence[ValidSignal]],
    received_day: dt.date,
) -> list[WriteResult]:
    """Write the batches as one flush on ``con``; one result per batch, in order.

    For callers outside the writer (tests, the data catalogue).
    """
    batches = list(batches)
    if not any(batches):
        return [WriteResult(0, 0) for _ in batches]
    store = DuckDBStore(con)
    try:
        return store.write(Flush(batches, [None] * len(batches)), received_day).results
    finally:
        store.close()
