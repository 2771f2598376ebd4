"""One flush of the write path, before any store sees it: its requests, their ids, their rows.

A flush is the requests the writer took together (``Flush``): per request, its validated
signals and the body they were validated from. ``Flush.planned`` turns it into what a store
writes -- each id once, the first occurrence winning (``FlushPlan``) -- and the Arrow rows of
those signals (``collector.rows``); ``FlushPlan.results`` turns the ids a store inserted back
into each request's answer. Nothing here touches a database or a thread.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple, overload

import pyarrow as pa

from collector.errors import WriteError
from collector.ingest import validate_batch
from collector.rows import rows_from_models
from contract.schema import FrictionSignal

__all__ = ["LARGE_FLUSH_ROWS", "BodyOnly", "Flush", "FlushPlan", "WriteResult"]

#: A flush of this many rows or more is worth writing from its request bodies, and starts
#: without waiting for more requests: its fixed cost is small beside its rows.
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
    def of(cls, batches: Sequence[Sequence[FrictionSignal]]) -> FlushPlan:
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

    def unique(self, batches: Sequence[Sequence[FrictionSignal]]) -> list[FrictionSignal]:
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


class BodyOnly(Sequence[FrictionSignal]):
    """A request's validated signals, kept only as the body they were validated from.

    Its length is known; the models are validated again from the body (the same bytes, the
    same strict model: the same signals), on the writer thread, only when a flush needs them:
    a flush that DuckDB refused, or one forced to be written from its models.
    """

    __slots__ = ("_count", "_signals", "body")

    def __init__(self, body: bytes, count: int) -> None:
        self.body = body
        self._count = count
        self._signals: tuple[FrictionSignal, ...] | None = None

    def __len__(self) -> int:
        return self._count

    def _validated(self) -> tuple[FrictionSignal, ...]:
        if self._signals is None:
            signals = tuple(validate_batch(self.body).signals)
            if len(signals) != self._count:  # cannot happen: the same bytes, the same model
                raise WriteError("a body no longer holds the signals validated from it")
            self._signals = signals
        return self._signals

    @overload
    def __getitem__(self, index: int) -> FrictionSignal: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[FrictionSignal]: ...
    def __getitem__(self, index: int | slice) -> FrictionSignal | Sequence[FrictionSignal]:
        return self._validated()[index]

    def __iter__(self) -> Iterator[FrictionSignal]:
        return iter(self._validated())


@dataclass(frozen=True, slots=True)
class Flush:
    """The requests of one flush: per request, its signals and the body they came from."""

    batches: Sequence[Sequence[FrictionSignal]]
    #: Per request, its body (None: signals built in process, written from the models).
    bodies: Sequence[bytes | None]

    @property
    def rows(self) -> int:
        return sum(len(batch) for batch in self.batches)

    @property
    def body_only(self) -> bool:
        """Whether a request kept only its body (its models would be validated again)."""
        return any(isinstance(batch, BodyOnly) for batch in self.batches)

    def planned(self) -> tuple[FlushPlan, pa.Table]:
        """Plan, unique, rows: who sent which id first, and the rows (``ROWS``) of each id once."""
        plan = FlushPlan.of(self.batches)
        return plan, rows_from_models(plan.unique(self.batches))
