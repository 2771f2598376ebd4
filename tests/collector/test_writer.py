"""The group-commit writer against a real DuckDB file."""

from __future__ import annotations

import asyncio
import datetime as dt
import gc
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collector.db import signals_database
from collector.errors import WriteError
from collector.flush import Flush, FlushPlan, WriteResult
from collector.ingest import validate_batch
from collector.settings import CollectorSettings
from collector.store import (
    DuckDBStore,
    SignalStore,
    TakeFlush,
    Written,
    flush_rows,
    write_when_taken,
)
from collector.telemetry import Telemetry
from collector.writer import FOLLOW_S, GroupCommitWriter
from contract.schema import FrictionSignal
from service.db import Database
from tests._servers import HANG_S
from tests.collector.conftest import (
    TODAY,
    batch_body,
    expected_row,
    make_signal,
    read_rows,
    signals,
)
from tests.hypothesis_profiles import at_most

#: A request of many signals (the writer treats every size alike).
MANY = 11


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    """An open collector database in ``tmp_path / "x.duckdb"``, closed at the end (closing twice
    is harmless: tests close it themselves before reading the file back)."""
    database = signals_database(tmp_path / "x.duckdb")
    database.open()
    try:
        yield database
    finally:
        database.close()


def _telemetry() -> Telemetry:
    return Telemetry.from_settings(CollectorSettings())


def test_flush_counts_duplicates_within_and_across(db: Database) -> None:
    a, b, c = make_signal(), make_signal(), make_signal()
    first = db.run_sync(lambda con: flush_rows(con, [[a, a, b], [b, c]], TODAY))
    second = db.run_sync(lambda con: flush_rows(con, [[a, c], [make_signal()]], TODAY))
    db.close()  # read_rows opens the file itself
    assert first == [WriteResult(2, 1), WriteResult(1, 1)]
    assert second == [WriteResult(0, 2), WriteResult(1, 0)]
    assert len(read_rows(db.path)) == 4


@pytest.mark.slow
# Each example migrates a database and flushes up to 30 rows: a quarter of the ci budget.
@settings(max_examples=at_most(25), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=st.lists(signals, min_size=1, max_size=30, unique_by=lambda s: s.signal_id))
def test_rows_read_back_field_by_field(tmp_path: Path, batch: list[FrictionSignal]) -> None:
    con = duckdb.connect(":memory:")
    from collector.db import migrate

    migrate(con)
    got = flush_rows(con, [validate_batch(batch_body(batch)).signals], TODAY)
    assert got == [WriteResult(len(batch), 0)]
    cur = con.execute("SELECT * EXCLUDE (received_day) FROM signals")
    names = [d[0] for d in cur.description or []]
    stored = {row[0]: dict(zip(names, row, strict=True)) for row in cur.fetchall()}
    con.close()
    for signal in batch:
        assert stored[signal.signal_id] == expected_row(signal)


class _BrokenStore:
    """A store whose flushes fail before they write anything (a disk error, say)."""

    def write(self, flush: Flush, received_day: dt.date) -> Written:
        raise OSError("disk full")

    def write_streamed(self, received_day: dt.date, take: TakeFlush) -> Written:
        raise OSError("disk full")

    def close(self) -> None:
        pass


class FailingOnceWriter(GroupCommitWriter):
    """The real writer on the real store, whose next flush fails; it counts its flushes."""

    fail_next = False

    def __init__(self, db: Database, *args: Any, **kwargs: Any) -> None:
        super().__init__(DuckDBStore.opener(db), *args, **kwargs)
        self.flushes: list[int] = []

    def _stream_flush(self, store: SignalStore) -> int:
        held = super()._stream_flush(self._next_store(store))
        if held:
            self.flushes.append(held)
        return held

    def _next_store(self, store: SignalStore) -> SignalStore:
        if self.fail_next:
            self.fail_next = False
            return _BrokenStore()
        return store


class HeldWriter(FailingOnceWriter):
    """The real writer, whose next flush starts gathering only once ``go`` is set."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.go = threading.Event()

    def _gather(self) -> None:
        self.go.wait(HANG_S)  # a regression must fail, not hang
        super()._gather()


def test_concurrent_requests_share_flushes_and_a_failed_flush_fails_only_its_own(
    db: Database,
) -> None:
    writer: FailingOnceWriter | None = None

    async def scenario() -> tuple[list[Any], list[Any]]:
        nonlocal writer
        writer = FailingOnceWriter(db, _telemetry(), max_rows=1000)
        writer.start()
        writer.fail_next = True
        doomed = await asyncio.gather(
            *(writer.submit([make_signal()]) for _ in range(5)), return_exceptions=True
        )
        fine = await asyncio.gather(
            *(writer.submit([make_signal(), make_signal()]) for _ in range(50))
        )
        await writer.close()
        return list(doomed), list(fine)

    doomed, fine = asyncio.run(scenario())
    db.close()  # read_rows opens the file itself
    assert writer is not None
    failed = writer.flushes[0]  # the requests of the first flush, and only they, failed
    assert failed >= 1
    assert all(isinstance(r, WriteError) for r in doomed[:failed])
    assert doomed[failed:] == [WriteResult(1, 0)] * (5 - failed)
    assert fine == [WriteResult(2, 0)] * 50
    assert len(writer.flushes) < 55  # grouped: far fewer flushes than requests
    assert len(read_rows(db.path)) == 100 + 5 - failed


def test_close_flushes_what_is_pending_and_refuses_new_work(db: Database) -> None:
    async def scenario() -> list[WriteResult]:
        writer = GroupCommitWriter(DuckDBStore.opener(db), _telemetry(), linger_s=0.2)
        writer.start()
        tasks = [asyncio.create_task(writer.submit([make_signal()])) for _ in range(30)]
        await asyncio.sleep(0)  # queued, not yet flushed (linger)
        await writer.close()
        with pytest.raises(WriteError):
            await writer.submit([make_signal()])
        return list(await asyncio.gather(*tasks))

    results = asyncio.run(scenario())
    db.close()  # read_rows opens the file itself
    assert results == [WriteResult(1, 0)] * 30
    assert len(read_rows(db.path)) == 30


@pytest.mark.parametrize("size", [MANY, 100])
def test_waiting_signals_cost_the_garbage_collector_nothing(db: Database, size: int) -> None:
    """Requests wait for their commit with their validated signals, which the garbage
    collector never walks (many live models waiting made it walk them again and again)."""
    built = [make_signal() for _ in range(size)]
    body = batch_body(built)
    want = {s.signal_id: expected_row(s) for s in built}

    async def scenario() -> tuple[list[bool], WriteResult]:
        writer = HeldWriter(db, _telemetry())
        writer.start()
        validated = validate_batch(body).signals
        task = asyncio.create_task(writer.submit(validated, body))
        await asyncio.sleep(0.05)  # queued; the flush is held
        gc.collect()  # tuples of untracked objects are untracked by a collection
        parts = [p for s in validated for p in (s, s.args, s.ring, s.app, s.client, *s.args)]
        tracked = [gc.is_tracked(p) for p in parts]
        assert not task.done()
        writer.go.set()
        result = await task
        await writer.close()
        return tracked, result

    tracked, result = asyncio.run(scenario())
    db.close()  # read_rows opens the file itself
    assert not any(tracked)
    assert result == WriteResult(size, 0)
    rows = read_rows(db.path, "SELECT * EXCLUDE (received_day) FROM signals")
    assert {row["signal_id"]: row for row in rows} == want


def test_a_cancelled_waiter_leaves_its_flush_whole(db: Database) -> None:
    """A request whose task is cancelled while it waits: its signals and its flush's are stored."""

    async def scenario() -> WriteResult:
        writer = HeldWriter(db, _telemetry())
        writer.start()
        doomed = asyncio.create_task(writer.submit([make_signal()]))
        kept = asyncio.create_task(writer.submit([make_signal()]))
        await asyncio.sleep(0.05)  # both queued; the flush is held
        doomed.cancel()
        writer.go.set()
        result = await asyncio.wait_for(kept, HANG_S)  # a regression must fail, not hang
        with pytest.raises(asyncio.CancelledError):
            await doomed
        await writer.close()
        return result

    result = asyncio.run(scenario())
    db.close()  # read_rows opens the file itself
    assert result == WriteResult(1, 0)
    assert len(read_rows(db.path)) == 2


def test_a_small_flush_goes_as_soon_as_everybody_in_flight_has_joined(db: Database) -> None:
    """Neither quiet nor linger (minutes here) ends these waits: the last sender's arrival does."""
    writer = HeldWriter(db, _telemetry(), quiet_s=120, linger_s=240, in_flight_window_s=120)

    async def scenario() -> tuple[list[WriteResult], bool]:
        writer.start()
        # Three senders in flight at once (their flush is held until all three are in).
        first = [asyncio.create_task(writer.submit([make_signal()])) for _ in range(3)]
        await asyncio.sleep(0.05)
        writer.go.set()
        results = list(await asyncio.wait_for(asyncio.gather(*first), HANG_S))
        # They send again. The first to come back waits for the other two...
        alone = asyncio.create_task(writer.submit([make_signal()]))
        await asyncio.sleep(0.2)
        waited = not alone.done()
        # ...whose arrival starts the flush.
        rest = [writer.submit([make_signal()]) for _ in range(2)]
        results += await asyncio.wait_for(asyncio.gather(alone, *rest), HANG_S)
        await writer.close()
        return results, waited

    results, waited = asyncio.run(scenario())
    db.close()  # read_rows opens the file itself
    assert waited
    assert results == [WriteResult(1, 0)] * 6
    assert writer.flushes == [3, 3]
    assert len(read_rows(db.path)) == 6


def test_a_lone_sender_is_not_kept_waiting_for_quiet(db: Database) -> None:
    async def scenario() -> list[WriteResult]:
        writer = GroupCommitWriter(DuckDBStore.opener(db), _telemetry(), quiet_s=120, linger_s=240)
        writer.start()
        results = []
        for pause in (0, FOLLOW_S * 3, 0, FOLLOW_S * 3):
            # At once: the INSERT started after the last flush takes it. After a pause: that
            # INSERT ended empty, and the writer waits for a request again.
            await asyncio.sleep(pause)
            results.append(await asyncio.wait_for(writer.submit([make_signal()]), HANG_S))
        await writer.close()
        return results

    results = asyncio.run(scenario())
    assert results == [WriteResult(1, 0)] * 4


class WatchedWriter(HeldWriter):
    """Records how many requests were pending when each flush's INSERT began to wait for them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pending_at_start: list[int] = []

    def _first_in(self) -> bool:
        self.pending_at_start.append(len(self._pending))
        return super()._first_in()


def test_under_load_the_next_insert_is_planned_before_its_requests_arrive(db: Database) -> None:
    writer = WatchedWriter(
        db, _telemetry(), quiet_s=120, linger_s=240, in_flight_window_s=120, follow_s=120
    )
    writer.go.set()

    async def scenario() -> list[WriteResult]:
        writer.start()
        results = [await asyncio.wait_for(writer.submit([make_signal()]), HANG_S)]
        await asyncio.sleep(0.5)  # the next INSERT is planned by now, waiting for a request
        results.append(await asyncio.wait_for(writer.submit([make_signal()]), HANG_S))
        await writer.close()
        return results

    results = asyncio.run(scenario())
    db.close()  # read_rows opens the file itself
    assert results == [WriteResult(1, 0)] * 2
    assert writer.flushes == [1, 1]
    # The first INSERT began once its request was pending; the second before its request came.
    assert writer.pending_at_start[:2] == [1, 0]
    assert len(read_rows(db.path)) == 2


def test_requests_of_any_size_share_one_flush_and_all_are_stored(db: Database) -> None:
    """Queued in order small, large, small: one flush takes them all."""
    large = [make_signal() for _ in range(MANY)]
    stored_before = make_signal()
    writer = HeldWriter(db, _telemetry())

    async def queued() -> list[WriteResult]:
        writer.start()
        body = batch_body(large)
        tasks = [
            asyncio.create_task(writer.submit([make_signal(), stored_before])),
            asyncio.create_task(writer.submit(validate_batch(body).signals, body)),
            asyncio.create_task(writer.submit([make_signal()])),
        ]
        await asyncio.sleep(0.05)  # all three queued; the flush is held
        writer.go.set()
        results = list(await asyncio.wait_for(asyncio.gather(*tasks), HANG_S))
        await writer.close()
        return results

    flush_rows(db.run_sync(lambda con: con.cursor()), [[stored_before]], TODAY)
    results = asyncio.run(queued())
    db.close()  # read_rows opens the file itself
    # The first request's second signal was already stored: the open days' ids refused the
    # streamed flush, and the slow path stored the rest.
    assert results == [WriteResult(1, 1), WriteResult(len(large), 0), WriteResult(1, 0)]
    assert writer.flushes == [3]
    assert len(read_rows(db.path)) == 1 + 1 + len(large) + 1


class _UnstreamedStore:
    """A ``SignalStore`` that cannot start before its rows exist (as a lakehouse store would):
    ``write_streamed`` is ``write_when_taken``. It counts what it was asked to write."""

    def __init__(self, inner: SignalStore) -> None:
        self._inner = inner
        self.flushes: list[int] = []

    def write(self, flush: Flush, received_day: dt.date) -> Written:
        self.flushes.append(len(flush.batches))
        return self._inner.write(flush, received_day)

    def write_streamed(self, received_day: dt.date, take: TakeFlush) -> Written:
        return write_when_taken(self, received_day, take)

    def close(self) -> None:
        self._inner.close()


def test_any_signal_store_serves_the_writer(db: Database) -> None:
    """The writer needs only the ``SignalStore`` protocol: small and large requests, repeated
    ids, through a store without the streamed INSERT, are each stored once and answered."""
    stores: list[_UnstreamedStore] = []

    def open_store() -> SignalStore:
        stores.append(_UnstreamedStore(DuckDBStore.opener(db)()))
        return stores[-1]

    repeated = make_signal()
    large = [make_signal() for _ in range(MANY)]
    body = batch_body(large)

    async def scenario() -> list[WriteResult]:
        writer = GroupCommitWriter(open_store, _telemetry())
        writer.start()
        results = await asyncio.gather(
            writer.submit([repeated, make_signal()]),
            writer.submit(validate_batch(body).signals, body),
            *(writer.submit([make_signal()]) for _ in range(20)),
        )
        results.append(await writer.submit([repeated]))
        await writer.close()
        return list(results)

    results = asyncio.run(scenario())
    db.close()  # read_rows opens the file itself
    assert results[:2] == [WriteResult(2, 0), WriteResult(len(large), 0)]
    assert results[2:] == [WriteResult(1, 0)] * 20 + [WriteResult(0, 1)]
    assert len(stores) == 1 and sum(stores[0].flushes) == 23
    assert len(read_rows(db.path)) == 2 + len(large) + 20


def test_received_day_comes_from_the_writer_clock(db: Database) -> None:
    day = dt.date(2026, 1, 2)

    async def scenario() -> None:
        writer = GroupCommitWriter(DuckDBStore.opener(db), _telemetry(), today=lambda: day)
        writer.start()
        await writer.submit([make_signal()])
        await writer.close()

    asyncio.run(scenario())
    db.close()  # read_rows opens the file itself
    assert read_rows(db.path, "SELECT received_day FROM signals") == [{"received_day": day}]


@given(st.lists(st.lists(st.integers(0, 15), min_size=1, max_size=8), min_size=1, max_size=6))
def test_flush_plan_counts_each_id_once(id_batches: list[list[int]]) -> None:
    """Pure: whatever the repetition within and across requests, each id is accepted once."""
    pool = {i: make_signal() for i in range(16)}
    batches = [[pool[i] for i in batch] for batch in id_batches]
    plan = FlushPlan.of(batches)
    flat = [s.signal_id for b in batches for s in b]
    assert plan.ids == list(dict.fromkeys(flat))
    keep = plan.keep if plan.keep is not None else [True] * len(flat)
    assert [sid for sid, kept in zip(flat, keep, strict=True) if kept] == plan.ids
    assert (plan.keep is None) == (len(set(flat)) == len(flat))
    all_new = plan.results(None)
    assert [r.accepted + r.duplicates for r in all_new] == [len(b) for b in batches]
    assert sum(r.accepted for r in all_new) == len(plan.ids)
    stored_before = {pool[i].signal_id for i in range(0, 16, 2)}
    inserted = {sid for sid in plan.ids if sid not in stored_before}
    some_old = plan.results(inserted)
    assert sum(r.accepted for r in some_old) == len(inserted)
    assert [r.accepted + r.duplicates for r in some_old] == [len(b) for b in batches]


_REQUEST = st.tuples(
    st.lists(st.integers(0, 40), min_size=1, max_size=MANY + 6),  # signal ids
    st.booleans(),  # validated from its body (structs) or sent as models
    st.sampled_from([0.0, 0.0, 0.001, 0.004]),  # when it is sent
)


@pytest.mark.slow
# Each example starts a writer thread on a fresh DuckDB file: a quarter of the ci budget.
@settings(max_examples=at_most(25), suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_REQUEST, min_size=1, max_size=40))
def test_concurrent_mixed_requests_store_each_id_once(
    requests: list[tuple[list[int], bool, float]],
) -> None:
    """Small and large requests, in any order and timing, some repeating ids, validated
    structs and built models: the streamed INSERT and the open days' ids' slow path together
    store each id once, and every request's answer adds up."""
    pool = {i: make_signal() for i in range(41)}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.duckdb"
        db = signals_database(path)
        db.open()

        async def send(
            writer: GroupCommitWriter, ids: list[int], with_body: bool, delay: float
        ) -> WriteResult:
            await asyncio.sleep(delay)
            signals = [pool[i] for i in ids]
            if with_body:
                body = batch_body(signals)
                return await writer.submit(validate_batch(body).signals, body)
            return await writer.submit(signals)

        async def scenario() -> list[WriteResult]:
            writer = GroupCommitWriter(DuckDBStore.opener(db), _telemetry())
            writer.start()
            results = await asyncio.wait_for(
                asyncio.gather(*(send(writer, *request) for request in requests)), HANG_S
            )
            await writer.close()
            return list(results)

        try:
            results = asyncio.run(scenario())
        finally:
            db.close()
        stored = [row["signal_id"] for row in read_rows(path, "SELECT signal_id FROM signals")]
    distinct = {pool[i].signal_id for ids, _, _ in requests for i in ids}
    assert sorted(stored) == sorted(distinct)
    assert [r.accepted + r.duplicates for r in results] == [len(ids) for ids, _, _ in requests]
    assert sum(r.accepted for r in results) == len(distinct)
