"""Storage of the write path: one flush in, one transaction out (``SignalStore``).

The group-commit writer (``collector.writer``) decides WHEN a flush goes and WHO is in it; a
store decides HOW its rows are written. ``SignalStore`` is that boundary, and it is small on
purpose: a store is opened on the writer thread, used only there, one flush at a time, and
closed there.

``DuckDBStore`` is the collector's store. Each flush is ONE transaction of two statements: its
rows go into ``signals`` and its ids into ``open_ids`` (``collector/sql/insert_rows.sql``,
``insert_ids.sql``), both read from the flush's Arrow rows (``Flush.table``: built once) through
one ``IncomingTable`` registered once on the connection. duckdb-python runs them mostly without
the GIL while the event loop keeps validating.

De-duplication costs nothing that grows with the file: ``signals`` has no key, ``open_ids``
holds (with its key) only the ids of the received days not yet closed. A stored id (a client
retrying a batch whose answer it lost) or an id repeated in the flush fails the ids statement;
the transaction rolls back, and the flush is written again with each id once and only the ids
not stored yet. A retry that arrives after its first copy's day closed is stored, and dropped
when its own day is rewritten (``collector.retention.reorder_day``).
``docs/write-path.md`` explains each choice and what it measured.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import NamedTuple, Protocol

import duckdb
import pyarrow as pa

from collector.db import SQL_DIR
from collector.flush import Flush, WriteResult
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


class _Stream:
    """The rows of one streamed flush, taken when DuckDB first asks for them."""

    __slots__ = ("_started", "_take", "flush", "table")

    def __init__(self, take: TakeFlush) -> None:
        self._take = take
        self._started = False
        self.flush: Flush | None = None
        self.table: pa.Table = IncomingTable.EMPTY

    def batches(self) -> Iterator[pa.RecordBatch]:
        if self._started:  # the bind-time stream is never read; the flush is taken once
            return
        self._started = True
        self.flush = self._take()
        if self.flush is None:
            return
        self.table = self.flush.table()
        yield from self.table.to_batches()


def _all_accepted(flush: Flush) -> Written:
    return Written([WriteResult(len(batch), 0) for batch in flush.batches], False)


class DuckDBStore:
    """A ``SignalStore`` on one DuckDB connection, owned by one thread."""

    def __init__(self, con: duckdb.DuckDBPyConnection, *, owned: bool = False) -> None:
        """``owned``: ``close`` closes ``con`` (else it only unregisters ``incoming``)."""
        self._con = con
        self._owned = owned
        self._incoming = IncomingTable()
        self._registered = False

    @classmethod
    def opener(cls, db: Database) -> StoreOpener:
        """Opens a store on a cursor of the collector's database (for the writer thread)."""
        return lambda: cls(db.run_sync(lambda main: main.cursor()), owned=True)

    def write(self, flush: Flush, received_day: dt.date) -> Written:
        """The flush's rows and ids in one transaction (the fast path: no id stored or
        repeated), else ``_write_fresh``."""
        self._register()
        con, incoming = self._con, self._incoming
        table = flush.table()
        con.execute("BEGIN TRANSACTION")
        try:
            with incoming.holding(table):
                con.execute(load_sql(SQL_DIR, "insert_rows"), [received_day])
                con.execute(load_sql(SQL_DIR, "insert_ids"), [received_day])
            con.execute("COMMIT")
        except duckdb.ConstraintException:
            con.execute("ROLLBACK")
            return self._write_fresh(flush, received_day)
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return _all_accepted(flush)

    def write_streamed(self, received_day: dt.date, take: TakeFlush) -> Written:
        """The rows' INSERT starts at once and reads ``incoming`` as a stream: DuckDB parses,
        binds and plans it before it asks for the first rows, and only then is the flush
        taken. Planning thus overlaps the gathering of the requests instead of following it.
        The ids follow in the same transaction."""
        stream = _Stream(take)
        self._register()
        con, incoming = self._con, self._incoming
        con.execute("BEGIN TRANSACTION")
        try:
            with incoming.streaming(stream.batches):
                con.execute(load_sql(SQL_DIR, "insert_rows"), [received_day])
            if stream.flush is None:
                con.execute("ROLLBACK")
                return _NOTHING
            with incoming.holding(stream.table):
                con.execute(load_sql(SQL_DIR, "insert_ids"), [received_day])
            con.execute("COMMIT")
        except duckdb.ConstraintException:
            con.execute("ROLLBACK")
            if stream.flush is None:  # cannot happen: only the ids statement has a key
                raise
            return self._write_fresh(stream.flush, received_day)
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return _all_accepted(stream.flush)

    def close(self) -> None:
        if self._owned:
            self._con.close()
        elif self._registered:
            self._con.unregister(IncomingTable.NAME)
            self._registered = False

    def _register(self) -> None:
        if not self._registered:
            self._con.register(IncomingTable.NAME, self._incoming)
            self._registered = True

    def _write_fresh(self, flush: Flush, received_day: dt.date) -> Written:
        """The slow path, for retries: each id once (the first occurrence wins) and only the
        ids not stored on an open day, in one transaction; one thread owns the connection, so
        nothing slips in between the look-up and the INSERT."""
        plan, table = flush.planned()
        con, incoming = self._con, self._incoming
        con.execute("BEGIN TRANSACTION")
        try:
            with incoming.holding(table):
                stored = {row[0] for row in con.execute(load_sql(SQL_DIR, "stored_ids")).fetchall()}
            fresh = [sid not in stored for sid in plan.ids]
            with incoming.holding(table.filter(pa.array(fresh, pa.bool_()))):
                con.execute(load_sql(SQL_DIR, "insert_rows"), [received_day])
                con.execute(load_sql(SQL_DIR, "insert_ids"), [received_day])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return Written(plan.results({sid for sid in plan.ids if sid not in stored}), False)


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
