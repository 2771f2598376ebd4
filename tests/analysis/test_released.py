"""The team's answers are post-processing of stored cells: sums over days, additive in the
period, and nothing that is not a stored cell (property tests over random releases)."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis import Filters, Question
from analysis._filters import Period
from analysis._released import ask_released
from collector.db import migrate
from collector.releases.store import KEY_SEP
from tests.hypothesis_profiles import at_most

D0 = dt.date(2026, 3, 1)
_KEYS = st.tuples(
    st.sampled_from(["read_note", "send_email", "read_file"]),
    st.sampled_from(["not_found", "timeout"]),
    st.sampled_from(["cannot_complete", "repeated_failure"]),
)
_CELLS = st.lists(st.tuples(st.integers(0, 9), _KEYS, st.integers(400, 5000)), max_size=40)


def _store(cells: list[tuple[int, tuple[str, str, str], int]]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    migrate(con)
    seen: dict[tuple[int, tuple[str, str, str]], int] = {}
    for offset, key, n in cells:
        seen[(offset, key)] = n  # one cell per (day, key), as a release stores it
    for day in range(10):
        con.execute(
            "INSERT INTO release_days VALUES ('friction', $1, 'test', 400, 0)",
            [D0 + dt.timedelta(days=day)],
        )
    rows = [[D0 + dt.timedelta(days=o), KEY_SEP.join(k), n] for (o, k), n in seen.items()]
    if rows:
        con.executemany("INSERT INTO release_cells VALUES ('friction', $1, $2, $3)", rows)
    return con


def _top(con: duckdb.DuckDBPyConnection, a: int, b: int) -> dict[tuple[str, ...], int]:
    period = Period(D0 + dt.timedelta(days=a), D0 + dt.timedelta(days=b))
    answer = ask_released(con, Question.top, Filters(), limit=1000, period=period)
    ns = [r.n for r in answer.rows]
    assert ns == sorted(ns, reverse=True)
    return {(r.tool, r.error_class, r.friction_type): r.n for r in answer.rows}  # type: ignore[union-attr]


@pytest.mark.slow
# Each example migrates and fills a DuckDB: 40 cover the cuts without a minute of CI.
@settings(max_examples=at_most(40), suppress_health_check=[HealthCheck.too_slow])
@given(cells=_CELLS, cut=st.integers(0, 8))
def test_period_answers_are_sums_of_stored_cells_and_add_up(
    cells: list[tuple[int, tuple[str, str, str], int]], cut: int
) -> None:
    con = _store(cells)
    try:
        expected: dict[tuple[str, ...], int] = defaultdict(int)
        for (_offset, cell_key), n in {(o, k): n for o, k, n in cells}.items():
            expected[cell_key] += n
        whole = _top(con, 0, 9)
        assert whole == dict(expected)
        first, second = _top(con, 0, cut), _top(con, cut + 1, 9)
        for key in whole:
            assert whole[key] == first.get(key, 0) + second.get(key, 0)
        assert _top(con, 0, 9) == whole, "asked again: the same numbers"
    finally:
        con.close()


def test_released_cells_leave_with_the_retention_window(tmp_path: object) -> None:
    from collector.retention import purge_expired

    con = _store([(0, ("read_note", "not_found", "cannot_complete"), 500),
                  (9, ("read_note", "not_found", "cannot_complete"), 700)])  # fmt: skip
    try:
        purge_expired(con, D0 + dt.timedelta(days=15), retention_days=10)  # keeps day 5 on
        left = con.execute("SELECT day FROM release_cells UNION ALL SELECT day FROM release_days")
        assert {r[0] for r in left.fetchall()} >= {D0 + dt.timedelta(days=9)}
        gone = con.execute(
            "SELECT count(*) FROM release_cells WHERE day < $1", [D0 + dt.timedelta(days=5)]
        )
        assert gone.fetchone() == (0,)
    finally:
        con.close()
