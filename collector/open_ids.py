"""The ids stored on the received days not closed yet, held in memory: the store's
de-duplication index (``collector.store``).

A retry (a client resending a batch whose answer it lost) must be stored once and answered as
duplicates. ``signals`` has no key (an index over every stored row made ingest slower as the
file grew), and a keyed table of the open days' ids cost a keyed INSERT per flush, as much as
the rows' own INSERT. So the store holds the open days' ids as Python integers
(``uuid.UUID.int``): one set per received day, checked and filled at C speed.

Invariant: ``OpenIds`` holds every id that ``signals`` holds on a received day that is not
closed (not in ``reordered_days``). It is loaded from ``signals`` itself when the store opens
(``load``); a flush's ids are held once it committed (claimed before its INSERT, released if
it fails): the file stays the one durable truth, and nothing separate can disagree with it
after a crash. It may hold more for a while -- the ids of a day closed (rewritten) or shipped
(lake mode) since -- until ``prune`` drops that day: so its memory is bounded by the open
days' signals (and a retry meanwhile is answered as the duplicate it is).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Iterable

import duckdb

from collector.db import SQL_DIR
from service.sql import load_sql

__all__ = ["PRUNE_S", "OpenIds"]

#: While a day before the current one is held, the store asks at most this often whether it
#: closed (one small query): until then a retry of its signals is answered as a duplicate.
PRUNE_S = 60.0

_EARLIEST = dt.date(1, 1, 1)


def _open_days(con: duckdb.DuckDBPyConnection, since: dt.date) -> set[dt.date]:
    rows = con.execute(load_sql(SQL_DIR, "open_days"), [since]).fetchall()
    return {row[0] for row in rows}


class OpenIds:
    """The open days' ids, by received day; used on the store's thread only."""

    def __init__(
        self,
        days: dict[dt.date, set[int]] | None = None,
        *,
        prune_s: float = PRUNE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._days: dict[dt.date, set[int]] = days if days is not None else {}
        self._prune_s = prune_s
        self._clock = clock
        self._next_prune = clock() + prune_s

    @classmethod
    def load(cls, con: duckdb.DuckDBPyConnection, *, prune_s: float = PRUNE_S) -> OpenIds:
        """The ids of the open days, read from ``signals`` (each id as two 64-bit halves: a
        128-bit column is slow to fetch into Python)."""
        days: dict[dt.date, set[int]] = {}
        found = _open_days(con, _EARLIEST)
        if found:
            table = con.sql(
                load_sql(SQL_DIR, "open_ids"), params=[min(found), sorted(found)]
            ).to_arrow_table()
            received = table.column("received_day").to_pylist()
            his = table.column("hi").to_pylist()
            los = table.column("lo").to_pylist()
            for day, hi, lo in zip(received, his, los, strict=True):
                ids = days.get(day)
                if ids is None:
                    ids = days[day] = set()
                ids.add(hi << 64 | lo)
        return cls(days, prune_s=prune_s)

    @property
    def days(self) -> list[dt.date]:
        """The received days held, in order."""
        return sorted(self._days)

    def __len__(self) -> int:
        return sum(len(ids) for ids in self._days.values())

    def claim(self, day: dt.date, ids: list[int]) -> bool:
        """Hold ``ids`` under received day ``day`` when none is held yet and none repeats (the
        fast path: one look-up and one insertion per id); else hold nothing and return False.
        The store claims a flush's ids before its INSERT and ``release``s them if it fails."""
        for held in self._days.values():
            if not held.isdisjoint(ids):
                return False
        mine = self._days.get(day)
        if mine is None:
            mine = self._days[day] = set()
        before = len(mine)
        mine.update(ids)
        if len(mine) - before != len(ids):  # an id repeats within the flush: none was held
            mine.difference_update(ids)
            return False
        return True

    def release(self, day: dt.date, ids: list[int]) -> None:
        """Undo ``claim(day, ids)`` (its flush failed)."""
        self._days.get(day, set()).difference_update(ids)

    def held(self, ids: Iterable[int]) -> set[int]:
        """Those of ``ids`` already held (stored on an open day)."""
        out: set[int] = set()
        for held in self._days.values():
            out |= held.intersection(ids)
        return out

    def add(self, day: dt.date, ids: set[int]) -> None:
        """Hold ``ids``, stored on received day ``day`` (after their flush committed)."""
        held = self._days.get(day)
        if held is None:
            self._days[day] = ids
        else:
            held |= ids

    def prune(self, con: duckdb.DuckDBPyConnection, today: dt.date) -> None:
        """Drop the days before ``today`` that are closed or no longer in ``signals``; asks the
        store only when such a day is held and ``PRUNE_S`` passed since it last asked."""
        now = self._clock()
        if now < self._next_prune:
            return
        self._next_prune = now + self._prune_s
        earlier = [day for day in self._days if day < today]
        if not earlier:
            return
        still_open = _open_days(con, min(earlier))
        for day in earlier:
            if day not in still_open:
                del self._days[day]
