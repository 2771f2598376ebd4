"""The group-commit writer's scheduling against a real DuckDB file: who shares a flush, when it
goes, what a failure, a close or a cancelled waiter does."""

from __future__ import annotations

import asyncio
import datetime as dt
import gc
from typing import Any

import pytest

from collector.errors import WriteError
from collector.flush import WriteResult
from collector.ingest import validate_batch
from collector.store import DuckDBStore
from collector.writer import FOLLOW_S, GroupCommitWriter
from service.db import Database
from tests._servers import HANG_S
from tests.collector._writers import MANY, FailingOnceWriter, HeldWriter, telemetry
from tests.collector._writers import db as db
from tests.collector.conftest import batch_body, expected_row, make_signal, read_rows


def test_concurrent_requests_share_flushes_and_a_failed_flush_fails_only_its_own(
    db: Database,
) -> None:
    writer: FailingOnceWriter | None = None

    async def scenario() -> tuple[list[Any], list[Any]]:
        nonlocal writer
        writer = FailingOnceWriter(db, telemetry(), max_rows=1000)
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
        writer = GroupCommitWriter(DuckDBStore.opener(db), telemetry(), linger_s=0.2)
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
        writer = HeldWriter(db, telemetry())
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
        writer = HeldWriter(db, telemetry())
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
    writer = HeldWriter(db, telemetry(), quiet_s=120, linger_s=240, in_flight_window_s=120)

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
        writer = GroupCommitWriter(DuckDBStore.opener(db), telemetry(), quiet_s=120, linger_s=240)
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
        db, telemetry(), quiet_s=120, linger_s=240, in_flight_window_s=120, follow_s=120
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


def test_received_day_comes_from_the_writer_clock(db: Database) -> None:
    day = dt.date(2026, 1, 2)

    async def scenario() -> None:
        writer = GroupCommitWriter(DuckDBStore.opener(db), telemetry(), today=lambda: day)
        writer.start()
        await writer.submit([make_signal()])
        await writer.close()

    asyncio.run(scenario())
    db.close()  # read_rows opens the file itself
    assert read_rows(db.path, "SELECT received_day FROM signals") == [{"received_day": day}]
