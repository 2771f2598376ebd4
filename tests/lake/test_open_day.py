"""The open day folded as it grows, beside the collectors; compaction that waits and retries.

Attacks: an append landing while the fold writes (it must be neither lost nor block the
fold), a retry of an id already folded earlier that day or compacted the day before (it must
not become a second compacted copy), a fold repeated (nothing changes), and a concurrent
commit beating ``compact`` (it must wait and redo the day, not fail).
"""

from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path

import duckdb
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from collector.lake.files import lake_files
from collector.lake.jobs import compact, compact_day, fold_open_day
from collector.lake.store import LakeStore
from tests.hypothesis_profiles import at_most
from tests.lake.conftest import DAY, rows

YESTERDAY = DAY - dt.timedelta(days=1)


def _ids(store: LakeStore, where: str = "true") -> list[bytes]:
    con = duckdb.connect()
    try:
        store.relation(con)
        found = con.execute(f"SELECT signal_id FROM lake_rows WHERE {where}").fetchall()
        return [bytes(r[0]) for r in found]
    finally:
        con.close()


def _read_once(store: LakeStore) -> list[str]:
    con = duckdb.connect()
    try:
        store.signals_relation(con)
        return [str(r[0]) for r in con.execute("SELECT signal_id FROM signals").fetchall()]
    finally:
        con.close()


def test_an_append_during_the_fold_is_kept_and_does_not_stop_it(tmp_path: Path) -> None:
    store = LakeStore(str(tmp_path) + "/lake")
    for seed in range(5):
        store.append(rows(20, seed=seed))  # five collector commits of the open day
    late = rows(7, seed=50)
    result = fold_open_day(store, DAY, before_commit=lambda: store.append(late))
    assert (result.files_before, result.rows_before, result.rows_after) == (5, 100, 100)
    files = [f for f in lake_files(store.table()) if f.day == DAY]
    assert sorted(f.compacted for f in files) == [False, True]  # the append, and the fold
    assert sorted(_read_once(store)) == sorted(set(_read_once(store)))
    assert len(_read_once(store)) == 107
    again = fold_open_day(store, DAY)  # folds the late append only
    assert (again.rows_before, again.rows_after) == (7, 107)
    assert fold_open_day(store, DAY).rows_before == 0  # nothing new: nothing done


def _compacted_once(store: LakeStore) -> None:
    compacted = _ids(store, "compacted")
    assert len(compacted) == len(set(compacted))


@settings(max_examples=at_most(15), deadline=None)  # each example writes a Delta table
@given(
    arrivals=st.lists(
        st.tuples(st.sampled_from(["yesterday", "today"]), st.integers(0, 3)),
        min_size=1,
        max_size=6,
    ),
    folds=st.lists(st.booleans(), min_size=6, max_size=6),
)
def test_folded_and_compacted_rows_hold_each_id_once(
    arrivals: list[tuple[str, int]], folds: list[bool]
) -> None:
    """Retries of a few signals (seeds 0-3) arrive yesterday or today in any order, with
    folds of today and compactions of yesterday in between: compacted rows never hold an id
    twice, and the reads always see each id once."""
    store = LakeStore(tempfile.mkdtemp() + "/lake")
    sent: set[bytes] = set()
    for (when, seed), fold in zip(arrivals, folds, strict=False):
        day = YESTERDAY if when == "yesterday" else DAY
        batch = rows(4, seed=seed, received_day=day)
        sent.update(bytes(v) for v in batch.column("signal_id").to_pylist())
        store.append(batch)
        if fold:
            fold_open_day(store, DAY)
            if any(d.day == YESTERDAY for d in store.days()):
                compact_day(store, YESTERDAY)
        _compacted_once(store)
        read = _read_once(store)
        assert len(read) == len(set(read)) == len(sent)


def test_compact_waits_and_redoes_a_day_it_lost_a_race_for(tmp_path: Path) -> None:
    """A late append to the closed day lands while the first try writes: that try is refused
    (nothing changes), compact waits and redoes the day, and every row is compacted once."""
    store = LakeStore(str(tmp_path) + "/lake")
    store.append(rows(30, seed=1, received_day=YESTERDAY))
    waits: list[float] = []
    late: list[pa.Table] = [rows(3, seed=9, received_day=YESTERDAY)]

    def race() -> None:
        if late:
            store.append(late.pop())

    results = compact(store, DAY, sleep=waits.append, before_commit=race)
    assert waits == [1.0]
    assert [(r.day, r.rows_after, r.files_after) for r in results] == [(YESTERDAY, 33, 1)]
    assert all(d.compacted for d in store.days())
