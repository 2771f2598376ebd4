"""Storage of the write path: one flush in, one transaction out (``SignalStore``).

The group-commit writer (``collector.writer``) decides WHEN a flush goes and WHO is in it; a
store decides HOW its rows are written. ``SignalStore`` is that boundary, and it is small on
purpose: a store is opened on the writer thread, used only there, one flush at a time, and
closed there.

``DuckDBStore`` is the collector's store. Each flush is ONE statement in auto-commit mode:
atomic, and one trip through duckdb-python, whose statements run mostly without the GIL while
the event loop keeps validating. It writes a flush one of two ways (``collector.rows``):

- from the request bodies (``insert_bodies``), when the flush is large or a request kept only
  its body: DuckDB parses and shapes them itself, with no Python per row;
- from the models (``_insert_table``), shaped into Arrow rows that DuckDB reads through one
  ``IncomingTable`` registered once on its connection.

A stored id (a client retrying a batch whose answer it lost) makes the primary key refuse the
statement; it rolls back, and the flush is written again with only the ids not stored yet.
``docs/write-path.md`` explains each choice and what it measured.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import NamedTuple, Protocol

import duckdb
import pyarrow as pa

from collector.db import SQL_DIR
from collector.flush import LARGE_FLUSH_ROWS, Flush, FlushPlan, WriteResult
from collector.rows import ROWS
from contract.schema import FrictionSignal
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


#: What DuckDB raises when it refuses a flush's bodies: a stored or repeated id (the primary
#: key), or a body it would not read as pydantic did (``collector/rows.py``).
_REFUSED = (duckdb.ConstraintException, duckdb.InvalidInputException, duckdb.ConversionException)


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

    __slots__ = ("_started", "_take", "flush", "plan", "table")

    def __init__(self, take: TakeFlush) -> None:
        self._take = take
        self._started = False
        self.flush: Flush | None = None
        self.plan = FlushPlan.of([])
        self.table: pa.Table = IncomingTable.EMPTY

    def batches(self) -> Iterator[pa.RecordBatch]:
        if self._started:  # the bind-time stream is never read; the flush is taken once
            return
        self._started = True
        self.flush = self._take()
        if self.flush is None:
            return
        self.plan, self.table = self.flush.planned()
        yield from self.table.to_batches()


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

    def write(
        self, flush: Flush, received_day: dt.date, *, from_bodies: bool | None = None
    ) -> Written:
        """``from_bodies``: hand DuckDB the request bodies (True) or the rows shaped from the
        models (False); None chooses the bodies from ``LARGE_FLUSH_ROWS`` rows on, or when a
        request kept only its body. Both store the same rows. A flush with a request without
        a body is written from the models."""
        if from_bodies is None:
            from_bodies = flush.rows >= LARGE_FLUSH_ROWS or flush.body_only
        refused = conflict = False
        if from_bodies and None not in flush.bodies:
            bodies = [body for body in flush.bodies if body is not None]
            counts = [len(batch) for batch in flush.batches]
            try:
                insert_bodies(self._con, bodies, counts, received_day)
                return Written([WriteResult(count, 0) for count in counts], False)
            except _REFUSED as exc:  # never logged: a refusal may quote the body
                refused = True
                conflict = isinstance(exc, duckdb.ConstraintException)
        plan, table = flush.planned()
        inserted = self._insert_table(table, plan.ids, received_day, known_conflict=conflict)
        return Written(plan.results(inserted), refused)

    def write_streamed(self, received_day: dt.date, take: TakeFlush) -> Written:
        """The INSERT from the models starts at once and reads ``incoming`` as a stream: DuckDB
        parses, binds and plans it before it asks for the first rows, and only then is the
        flush taken. Planning thus overlaps the gathering of the requests instead of following
        it."""
        stream = _Stream(take)
        self._register()
        conflict = False
        with self._incoming.streaming(stream.batches):
            try:
                self._con.execute(load_sql(SQL_DIR, "insert_rows"), [received_day])
            except duckdb.ConstraintException:
                conflict = True  # the statement rolled back as a whole
        if stream.flush is None:
            return _NOTHING
        inserted = None
        if conflict:
            inserted = self._insert_table(
                stream.table, stream.plan.ids, received_day, known_conflict=True
            )
        return Written(stream.plan.results(inserted), False)

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

    def _insert_table(
        self,
        table: pa.Table,
        ids: Sequence[uuid.UUID],
        received_day: dt.date,
        *,
        known_conflict: bool = False,
    ) -> set[uuid.UUID] | None:
        """Insert rows (``ROWS``) with distinct ids in one transaction; None if all went in,
        else the ids that did.

        The fast path is a plain INSERT: ``ON CONFLICT DO NOTHING`` costs more per statement
        whatever the row count, and conflicts are rare (retries). ``known_conflict`` (the
        primary key just refused these rows) goes straight to the slow path, which inserts
        only the ids not stored yet; one thread owns the connection, so nothing slips in
        between.
        """
        self._register()
        con, incoming = self._con, self._incoming
        insert = load_sql(SQL_DIR, "insert_rows")
        if not known_conflict:
            with incoming.holding(table):
                try:
                    con.execute(insert, [received_day])
                    return None
                except duckdb.ConstraintException:
                    pass  # the statement rolled back as a whole
        con.execute("BEGIN TRANSACTION")
        try:
            with incoming.holding(table):
                stored = {row[0] for row in con.execute(load_sql(SQL_DIR, "stored_ids")).fetchall()}
            fresh = [sid not in stored for sid in ids]
            with incoming.holding(table.filter(pa.array(fresh, pa.bool_()))):
                con.execute(insert, [received_day])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return {sid for sid in ids if sid not in stored}


def insert_bodies(
    con: duckdb.DuckDBPyConnection,
    bodies: Sequence[bytes],
    counts: Sequence[int],
    received_day: dt.date,
) -> None:
    """Insert the signals of validated request bodies in one statement, one transaction.

    ``counts[i]``: the signals validated from ``bodies[i]``. DuckDB parses and shapes them
    (``collector/sql/insert_bodies.sql``); the one Python step is handing it the bodies as
    strings. Raises one of ``_REFUSED`` when DuckDB would not store exactly the validated
    signals or an id is stored or repeated; nothing is written then.
    """
    # A validated body is UTF-8 (pydantic refuses anything else).
    texts = [body.decode() for body in bodies]
    con.execute(load_sql(SQL_DIR, "insert_bodies"), [received_day, texts, list(counts)])


def flush_rows(
    con: duckdb.DuckDBPyConnection,
    batches: Sequence[Sequence[FrictionSignal]],
    received_day: dt.date,
    bodies: Sequence[bytes | None] | None = None,
    *,
    from_bodies: bool | None = None,
) -> list[WriteResult]:
    """Write the batches in one INSERT on ``con``; one result per batch, in order.

    ``bodies[i]`` is the request body batch ``i`` was validated from; without it, the batch is
    written from its models. For callers outside the writer (tests, the data catalogue).
    """
    batches = list(batches)
    if not any(batches):
        return [WriteResult(0, 0) for _ in batches]
    flush = Flush(batches, bodies if bodies is not None else [None] * len(batches))
    store = DuckDBStore(con)
    try:
        return store.write(flush, received_day, from_bodies=from_bodies).results
    finally:
        store.close()
