"""The group-commit writer with its stores: each id stored once and every answer right, whatever
the requests' sizes, timing and repetitions, through any ``SignalStore`` and across restarts."""

from __future__ import annotations

import asyncio
import datetime as dt
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collector.db import signals_database
from collector.flush import Flush, WriteResult
from collector.ingest import validate_batch
from collector.store import (
    DuckDBStore,
    SignalStore,
    TakeFlush,
    Written,
    flush_rows,
    write_when_taken,
)
from collector.writer import GroupCommitWriter
from contract.schema import FrictionSignal
from service.db import Database
from tests._servers import HANG_S
from tests.collector._writers import MANY, HeldWriter, telemetry
from tests.collector._writers import db as db
from tests.collector.conftest import TODAY, batch_body, make_signal, read_rows
from tests.hypothesis_profiles import at_most


def test_requests_of_any_size_share_one_flush_and_all_are_stored(db: Database) -> None:
    """Queued in order small, large, small: one flush takes them all."""
    large = [make_signal() for _ in range(MANY)]
    stored_before = make_signal()
    writer = HeldWriter(db, telemetry())

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


def test_a_retry_in_the_same_flush_is_a_duplicate(db: Database) -> None:
    """Two requests with the same signals in one flush: the first stores them, the second is
    answered as duplicates; a later retry too."""
    batch = [make_signal() for _ in range(MANY)]
    body = batch_body(batch)
    writer = HeldWriter(db, telemetry())

    async def scenario() -> list[WriteResult]:
        writer.start()
        tasks = [
            asyncio.create_task(writer.submit(validate_batch(body).signals, body)),
            asyncio.create_task(writer.submit(batch[:3])),
        ]
        await asyncio.sleep(0.05)  # both queued; the flush is held
        writer.go.set()
        results = list(await asyncio.wait_for(asyncio.gather(*tasks), HANG_S))
        results.append(await writer.submit(validate_batch(body).signals, body))
        await writer.close()
        return results

    results = asyncio.run(scenario())
    db.close()  # read_rows opens the file itself
    assert results == [WriteResult(MANY, 0), WriteResult(0, 3), WriteResult(0, MANY)]
    assert writer.flushes[0] == 2
    assert len(read_rows(db.path)) == MANY


def test_a_retry_after_a_restart_is_a_duplicate(tmp_path: Path) -> None:
    """The writer's store loads the open days' ids from the file when it opens: a client that
    lost its answer in a restart retries, and its signals are stored once."""
    path = tmp_path / "x.duckdb"
    batch = [make_signal() for _ in range(5)]

    async def send(signals: list[FrictionSignal]) -> WriteResult:
        writer = GroupCommitWriter(DuckDBStore.opener(database), telemetry())
        writer.start()
        try:
            return await writer.submit(signals)
        finally:
            await writer.close()

    results = []
    for signals in (batch, [*batch[:2], make_signal()]):
        database = signals_database(path)
        database.open()
        try:
            results.append(asyncio.run(send(signals)))
        finally:
            database.close()
    assert results == [WriteResult(5, 0), WriteResult(1, 2)]
    assert len(read_rows(path)) == 6


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
        writer = GroupCommitWriter(open_store, telemetry())
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
            writer = GroupCommitWriter(DuckDBStore.opener(db), telemetry())
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
