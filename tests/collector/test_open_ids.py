"""De-duplication: each id stored once per open day, answered right, through restarts and crashes.

The store holds the open days' ids in memory (``collector.open_ids``), loaded from ``signals``
itself at open and added to after each commit. A design that kept them anywhere else, added
them before the commit, or did not reload them, fails here: restarts between a signal and its
retry, retries within one flush, flushes that fail half-way, days closed meanwhile -- checked
against a model of the rules, and for the memory held.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import duckdb
import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from collector import _wire
from collector.db import migrate
from collector.flush import Flush, FlushPlan, WriteResult
from collector.ingest import validate_batch
from collector.retention import reorder_day
from collector.rows import ValidSignal
from collector.store import DuckDBStore, TakeFlush, flush_rows
from tests.collector.conftest import TODAY, batch_body, make_signal

D0 = TODAY - dt.timedelta(days=3)


@pytest.fixture(scope="module")
def migrated() -> Iterator[duckdb.DuckDBPyConnection]:
    """One migrated database, emptied per example (migrating costs far more than emptying)."""
    connection = duckdb.connect(":memory:")
    migrate(connection)
    yield connection
    connection.close()


def _emptied(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    con.execute("DELETE FROM signals")
    con.execute("DELETE FROM reordered_days")
    return con


def _struct(signal: Any) -> _wire.FrictionSignal:
    """The fast decoder's struct of a model, as ingestion hands it to the writer."""
    return validate_batch(batch_body([signal])).signals[0]


def _broken(signal: Any) -> _wire.FrictionSignal:
    """A struct no ENUM of the table holds (built, not decoded): its INSERT fails."""
    return msgspec.structs.replace(_struct(signal), tool_attempted="not_a_tool")


def _stored(con: duckdb.DuckDBPyConnection) -> list[tuple[Any, dt.date]]:
    rows = con.execute("SELECT signal_id, received_day FROM signals").fetchall()
    return sorted(rows)


# ------------------------------------------------------------------ pure


@given(st.lists(st.lists(st.integers(0, 15), min_size=1, max_size=8), min_size=1, max_size=6))
def test_flush_plan_counts_each_id_once(id_batches: list[list[int]]) -> None:
    """Whatever the repetition within and across requests and whatever was stored before:
    each id is written once, by its first occurrence, never when stored; answers add up."""
    pool = {i: make_signal() for i in range(16)}
    batches = [[pool[i] for i in batch] for batch in id_batches]
    stored = {pool[i].signal_id.int for i in range(0, 16, 3)}
    plan = FlushPlan.of(batches, stored)
    flat = [pool[i] for batch in id_batches for i in batch]
    firsts = list({s.signal_id.int: s for s in flat}.values())  # each id at its first place
    assert plan.signals == [s for s in firsts if s.signal_id.int not in stored]
    assert plan.ids == {s.signal_id.int for s in plan.signals}
    assert [r.accepted + r.duplicates for r in plan.results] == [len(b) for b in batches]
    assert sum(r.accepted for r in plan.results) == len(plan.signals)
    fresh = FlushPlan.of(batches, set())
    assert sum(r.accepted for r in fresh.results) == len({s.signal_id for s in flat})


# ------------------------------------------------------------------ against a model


@dataclass
class Model:
    """The rules: an id is a duplicate when stored on a received day not closed, or earlier
    in the same flush; a failed flush changes nothing; a closed day keeps each id once and
    none stored on an earlier day."""

    rows: list[tuple[int, int]] = field(default_factory=list)  # (id, received day)
    closed: set[int] = field(default_factory=set)

    def flush(self, day: int, batches: list[list[int]]) -> list[WriteResult]:
        held = {i for i, d in self.rows if d not in self.closed}
        seen: set[int] = set()
        out = []
        for batch in batches:
            accepted = 0
            for i in batch:
                if i not in seen and i not in held:
                    seen.add(i)
                    self.rows.append((i, day))
                    accepted += 1
            out.append(WriteResult(accepted, len(batch) - accepted))
        return out

    def close(self, day: int) -> None:
        earlier = {i for i, d in self.rows if d < day}
        kept = {i for i, d in self.rows if d == day and i not in earlier}
        self.rows = [(i, d) for i, d in self.rows if d != day] + [(i, day) for i in kept]
        self.closed.add(day)


_BATCHES = st.lists(st.lists(st.integers(0, 11), min_size=1, max_size=5), min_size=1, max_size=3)
_STEP: st.SearchStrategy[tuple[str, int, list[list[int]]]] = st.one_of(
    st.tuples(st.just("flush"), st.integers(0, 1), _BATCHES),  # day: stay, or the next
    st.tuples(st.just("streamed"), st.integers(0, 1), _BATCHES),
    st.tuples(st.just("fail"), st.integers(0, 1), _BATCHES),  # the INSERT fails half-way
    st.tuples(st.just("restart"), st.just(0), st.just([])),
    st.tuples(st.just("close"), st.just(0), st.just([])),  # the earliest open day before today
)


def _taking(flush: Flush) -> TakeFlush:
    return lambda: flush


@pytest.mark.slow
@given(steps=st.lists(_STEP, min_size=1, max_size=14))
def test_answers_and_rows_follow_the_rules_through_restarts_and_failures(
    migrated: duckdb.DuckDBPyConnection, steps: list[tuple[str, int, list[list[int]]]]
) -> None:
    con = _emptied(migrated)
    model = Model()
    signals: dict[int, ValidSignal] = {}  # one signal per number, dated its first flush's day
    day = 0

    def signal(i: int) -> ValidSignal:
        if i not in signals:
            made = make_signal(day=D0 + dt.timedelta(days=day))
            signals[i] = _struct(made) if i % 2 else made  # structs and models alike
        return signals[i]

    def store() -> DuckDBStore:
        return DuckDBStore(con, prune_s=0)

    current = store()
    try:
        for kind, forward, batches in steps:
            if kind == "restart":
                current.close()
                current = store()
                continue
            if kind == "close":
                open_before = sorted({d for _, d in model.rows if d < day} - model.closed)
                if open_before:
                    reorder_day(con, D0 + dt.timedelta(days=open_before[0]))
                    model.close(open_before[0])
                continue
            day = min(day + forward, 3)
            received = D0 + dt.timedelta(days=day)
            work = Flush([[signal(i) for i in batch] for batch in batches], [None] * len(batches))
            if kind == "fail":
                doomed = Flush(
                    [*work.batches, [_broken(make_signal())]], [None] * (len(batches) + 1)
                )
                with pytest.raises(duckdb.Error):
                    current.write_streamed(received, _taking(doomed))
                continue
            if kind == "streamed":
                results = current.write_streamed(received, _taking(work)).results
            else:
                results = current.write(work, received).results
            assert results == model.flush(day, batches)
        number = {s.signal_id: i for i, s in signals.items()}
        got = sorted((number[sid], (d - D0).days) for sid, d in _stored(con))
        assert got == sorted(model.rows)
    finally:
        current.close()


# ------------------------------------------------------------------ by example


def test_flush_counts_duplicates_within_and_across(
    migrated: duckdb.DuckDBPyConnection,
) -> None:
    con = _emptied(migrated)
    a, b, c = make_signal(), make_signal(), make_signal()
    first = flush_rows(con, [[a, a, b], [b, c]], TODAY)
    second = flush_rows(con, [[a, c], [make_signal()]], TODAY)
    assert first == [WriteResult(2, 1), WriteResult(1, 1)]
    assert second == [WriteResult(0, 2), WriteResult(1, 0)]
    assert len(_stored(con)) == 4


def test_a_restart_between_a_signal_and_its_retry_answers_a_duplicate(tmp_path: Any) -> None:
    """The ids are loaded from the file's rows when a store opens: a retry after a restart
    (or a crash: the rows are what committed) is a duplicate, stored once."""
    path = str(tmp_path / "x.duckdb")
    first, second = [make_signal() for _ in range(3)], [make_signal() for _ in range(2)]
    with duckdb.connect(path) as con:
        migrate(con)
        assert flush_rows(con, [first], TODAY) == [WriteResult(3, 0)]
        assert flush_rows(con, [second], TODAY - dt.timedelta(days=1)) == [WriteResult(2, 0)]
    with duckdb.connect(path) as con:
        store = DuckDBStore(con)
        assert len(store.open_ids) == 5
        retry = Flush([[*first[:2], make_signal()], second], [None, None])
        assert store.write(retry, TODAY).results == [WriteResult(1, 2), WriteResult(0, 2)]
        store.close()
        assert con.execute("SELECT count(*) FROM signals").fetchall() == [(6,)]


@pytest.mark.parametrize("streamed", [False, True], ids=["write", "write_streamed"])
def test_a_failed_flush_stores_and_holds_none_of_its_ids(
    migrated: duckdb.DuckDBPyConnection, streamed: bool
) -> None:
    con = _emptied(migrated)
    store = DuckDBStore(con)
    good = [make_signal() for _ in range(4)]
    doomed = Flush([[_struct(s) for s in good], [_broken(make_signal())]], [None, None])
    with pytest.raises(duckdb.Error):
        if streamed:
            store.write_streamed(TODAY, lambda: doomed)
        else:
            store.write(doomed, TODAY)
    assert _stored(con) == [] and len(store.open_ids) == 0
    assert store.write(Flush([good], [None]), TODAY).results == [WriteResult(4, 0)]
    assert len(_stored(con)) == 4 and len(store.open_ids) == 4
    store.close()


def test_memory_is_bounded_by_the_open_days(migrated: duckdb.DuckDBPyConnection) -> None:
    """A day leaves memory once it is closed (rewritten) or its rows left the file (the lake's
    shipper moves them out); the day being written stays."""
    con = _emptied(migrated)
    store = DuckDBStore(con, prune_s=0)
    days = [TODAY - dt.timedelta(days=n) for n in (2, 1, 0)]
    for day in days:
        store.write(Flush([[make_signal(day=day) for _ in range(3)]], [None]), day)
    assert store.open_ids.days == days and len(store.open_ids) == 9
    reorder_day(con, days[0])  # closed
    con.execute("DELETE FROM signals WHERE received_day = $1", [days[1]])  # shipped
    assert store.open_ids.days == days  # until the next flush asks
    store.write(Flush([[make_signal()]], [None]), TODAY)
    assert store.open_ids.days == [TODAY] and len(store.open_ids) == 4
    store.close()
    assert DuckDBStore(con).open_ids.days == [TODAY]  # what a restart loads


def test_only_the_open_days_ids_are_loaded(migrated: duckdb.DuckDBPyConnection) -> None:
    con = _emptied(migrated)
    closed, open_ = TODAY - dt.timedelta(days=2), TODAY - dt.timedelta(days=1)
    batches = {day: [make_signal(day=day) for _ in range(4)] for day in (closed, open_, TODAY)}
    for day, batch in batches.items():
        flush_rows(con, [batch], day)
    reorder_day(con, closed)
    loaded = DuckDBStore(con).open_ids
    assert loaded.days == [open_, TODAY]
    every = [s.signal_id.int for s in batches[open_] + batches[TODAY]]
    assert loaded.held(every) == set(every)
    assert loaded.held(s.signal_id.int for s in batches[closed]) == set()
