"""One flush of the write path, before any store sees it: its requests, their ids, their rows.

A flush is the requests the writer took together (``Flush``): per request, its validated
signals and the body they were validated from. ``Flush.table`` is the Arrow rows of all its
signals (``collector.rows``), what a store writes when no id is repeated or stored;
``Flush.planned`` is what a store writes otherwise, given the ids already stored: each id once,
the first occurrence winning, with each request's answer (``FlushPlan``). Nothing here touches
a database or a thread.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import pyarrow as pa

from collector.rows import ValidSignal, rows_from_models, signal_rows

__all__ = ["LARGE_FLUSH_ROWS", "Flush", "FlushPlan", "WriteResult"]

#: A flush of this many rows or more starts without waiting for more requests: its fixed cost
#: is small beside its rows.
LARGE_FLUSH_ROWS = 500


class WriteResult(NamedTuple):
    """One request's answer: signals stored now, and signals that were already stored."""

    accepted: int
    duplicates: int


@dataclass(frozen=True, slots=True)
class FlushPlan:
    """What a flush writes when an id repeats in it or is stored already: each id once, the
    first occurrence winning, none stored before; and each request's answer."""

    #: One answer per request, in order.
    results: list[WriteResult]
    #: The signals to write, in order.
    signals: list[ValidSignal]
    #: Their ids (``uuid.UUID.int``).
    ids: set[int]

    @classmethod
    def of(cls, batches: Sequence[Sequence[ValidSignal]], stored: Container[int]) -> FlushPlan:
        """``stored``: the ids of ``batches`` already stored (they are duplicates)."""
        seen: set[int] = set()
        signals: list[ValidSignal] = []
        results: list[WriteResult] = []
        for batch in batches:
            accepted = 0
            for signal in batch:
                sid = signal.signal_id.int
                if sid in seen or sid in stored:
                    continue
                seen.add(sid)
                signals.append(signal)
                accepted += 1
            results.append(WriteResult(accepted, len(batch) - accepted))
        return cls(results, signals, seen)


@dataclass(frozen=True, slots=True)
class Flush:
    """The requests of one flush: per request, its signals and the body they came from."""

    batches: Sequence[Sequence[ValidSignal]]
    #: Per request, its body (None: signals built in process). No store of the collector
    #: reads it; a store that hands the bodies to another parser may.
    bodies: Sequence[bytes | None]

    @property
    def rows(self) -> int:
        return sum(len(batch) for batch in self.batches)

    def signals(self) -> list[ValidSignal]:
        """Every signal of the flush, in order, repeated ids included."""
        return [s for batch in self.batches for s in batch]

    def table(self) -> pa.Table:
        """The rows (``ROWS``) of every signal of the flush, in order, repeated ids included:
        what a store writes when no id repeats (the fast path)."""
        return rows_from_models(self.signals())

    def table_and_ids(self) -> tuple[pa.Table, list[int]]:
        """``table()``, and the id (``uuid.UUID.int``) of each of its rows."""
        return signal_rows(self.signals())

    def planned(self, stored: Container[int]) -> tuple[FlushPlan, pa.Table]:
        """The plan given the ids already ``stored``, and the rows (``ROWS``) it writes."""
        plan = FlushPlan.of(self.batches, stored)
        return plan, rows_from_models(plan.signals)
