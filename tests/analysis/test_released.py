"""The team's answers are post-processing of stored cells: sums over weeks, additive in the
period, each with the noise of the cells it sums, and nothing that is not a stored cell
(property tests over random releases)."""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis import Filters, Question
from analysis._filters import Period
from analysis._released import ask_released
from analysis._rows import TopRow
from collector.db import migrate
from collector.releases.store import KEY_SEP
from tests.hypothesis_profiles import at_most

D0 = dt.date(2026, 3, 2)  # a Monday: friction is released per UTC week
SIGMA = 10.0
WEEK = dt.timedelta(days=7)
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
    for week in range(10):
        con.execute(
            "INSERT INTO release_periods VALUES ('friction', $1, 'week', $2, 0, 0, 'test')",
            [D0 + week * WEEK, SIGMA],
        )
    rows = [[D0 + o * WEEK, KEY_SEP.join(k), n] for (o, k), n in seen.items()]
    if rows:
        con.executemany("INSERT INTO release_cells VALUES ('friction', $1, $2, $3)", rows)
    return con


def _top(con: duckdb.DuckDBPyConnection, a: int, b: int) -> dict[tuple[str, ...], int]:
    """Top friction over weeks ``a`` to ``b``; checks each count's margin: the noise of the
    cells it sums (one per week holding the key)."""
    period = Period(D0 + a * WEEK, D0 + b * WEEK + dt.timedelta(days=6))
    answer = ask_released(con, Question.top, Filters(), limit=1000, period=period)
    assert answer.period == period and answer.note is None, "whole weeks need no alignment"
    rows = [r for r in answer.rows if isinstance(r, TopRow)]
    assert [r.n for r in rows] == sorted((r.n for r in rows), reverse=True)
    weeks: dict[tuple[str, str, str], set[dt.date]] = {
        (r.tool, r.error_class, r.friction_type): set() for r in rows
    }
    for week, _tool, _cls, _ft in con.execute(
        "SELECT day, split_part(key, '|', 1), split_part(key, '|', 2), split_part(key, '|', 3) "
        "FROM release_cells WHERE day BETWEEN $1 AND $2",
        [period.start, period.end],
    ).fetchall():
        weeks.setdefault((_tool, _cls, _ft), set()).add(week)
    for r in rows:
        cells = len(weeks[(r.tool, r.error_class, r.friction_type)])
        assert r.moe == math.ceil(1.96 * SIGMA * math.sqrt(cells))
    return {(r.tool, r.error_class, r.friction_type): r.n for r in rows}


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
        first_kept = D0 + 5 * WEEK
        purge_expired(con, first_kept + dt.timedelta(days=10), retention_days=10)
        left = con.execute(
            "SELECT day FROM release_cells UNION ALL SELECT day FROM release_periods"
        )
        assert {r[0] for r in left.fetchall()} >= {D0 + 9 * WEEK}
        for table in ("release_cells", "release_periods"):
            gone = con.execute(f"SELECT count(*) FROM {table} WHERE day < $1", [first_kept])
            assert gone.fetchone() == (0,), table
    finally:
        con.close()


_NOISY = st.lists(
    st.tuples(
        st.integers(0, 3),
        st.tuples(*(st.sampled_from("ab") for _ in range(4))),
        st.integers(-50, 500),
        st.sampled_from([0.0, 2.5, 100.0]),
    ),
    max_size=60,
)


@given(cells=_NOISY, idx=st.sampled_from([(0,), (2,), (0, 1), (1, 3), (0, 1, 2), (0, 1, 2, 3)]))
def test_sum_by_adds_each_groups_counts_and_variances(
    cells: list[tuple[int, tuple[str, ...], int, float]], idx: tuple[int, ...]
) -> None:
    """Every grouping a derivation uses (one dimension, several, the whole key) sums exactly
    the counts and the variances of its cells, groups in the order first met."""
    from analysis._cells import Noisy, sum_by

    noisy = [Noisy(D0 + dt.timedelta(days=d), key, float(n), var) for d, key, n, var in cells]
    want: dict[tuple[str, ...], list[float]] = {}
    for c in noisy:
        acc = want.setdefault(tuple(c.key[i] for i in idx), [0.0, 0.0])
        acc[0] += c.n
        acc[1] += c.var
    got = sum_by(noisy, idx)
    assert [(k, [a.n, a.var]) for k, a in got.items()] == list(want.items())


def test_sum_by_refuses_no_dimension() -> None:
    from analysis._cells import Noisy, sum_by

    with pytest.raises(ValueError, match="at least one dimension"):
        sum_by([Noisy(D0, ("a",), 1.0, 0.0)], ())
