"""One flush of the write path, before any store sees it: its requests, their ids, their rows.

A flush is the requests the writer took together (``Flush``): per request, its validated
signals and the body they were validated from. ``Flush.table`` is the Arrow rows of all its
signals (``collector.rows``), what a store writes when no id is repeated or stored;
``Flush.planned`` turns it into what a store writes otherwise -- each id once, the first
occurrence winning (``FlushPlan``) -- and ``FlushPlan.results`` turns the ids a store inserted
back into each request's answer. Nothing here touches a database or a thread.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import pyarrow as pa

from collector.rows import ValidSignal, rows_from_models

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
    """The rows of one flush: each id once (first occurrence wins), and who sent what."""

    batch_sizes: list[int]
    #: Per batch, the ids it was first to carry in this flush.
    firsts: list[list[uuid.UUID]]
    #: The ids to write, in order: each once.
    ids: list[uuid.UUID]
    #: Per signal of the flush, in order, whether it is written (None: all are).
    keep: list[bool] | None

    @classmethod
    def of(cls, batches: Sequence[Sequence[ValidSignal]]) -> FlushPlan:
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

    def unique(self, batches: Sequence[Sequence[ValidSignal]]) -> list[ValidSignal]:
        """The signals of ``batches`` (the ones planned) to write: each id once, in order."""
        signals = [s for batch in batches for s in batch]
        if self.keep is None:
            return signals
        return [s for s, kept in zip(signals, self.keep, strict=True) if kept]

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

    def table(self) -> pa.Table:
        """The rows (``ROWS``) of every signal of the flush, in order, repeated ids included:
        what a store writes when no id repeats (the fast path)."""
        return rows_from_models([s for batch in self.batches for s in batch])

    def planned(self) -> tuple[FlushPlan, pa.Table]:
        """Plan, unique, rows: who sent which id first, and the rows (``ROWS``) of each id once."""
        plan = FlushPlan.of(self.batches)
        return plan, rows_from_models(plan.unique(self.batches))
