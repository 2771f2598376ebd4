"""What the writer tests share: a database on a temporary file, and writers that fail or wait
on cue around the real writer and store."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from collector.db import signals_database
from collector.flush import Flush
from collector.settings import CollectorSettings
from collector.store import DuckDBStore, SignalStore, TakeFlush, Written
from collector.telemetry import Telemetry
from collector.writer import GroupCommitWriter
from service.db import Database
from tests._servers import HANG_S

__all__ = ["MANY", "FailingOnceWriter", "HeldWriter", "db", "telemetry"]

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


def telemetry() -> Telemetry:
    return Telemetry.from_settings(CollectorSettings())


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
