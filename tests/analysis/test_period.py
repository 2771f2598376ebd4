"""The days an answer covers, one rule for every view (``analysis._period``): whatever days are
asked and whatever is released, the covered days are all released whole weeks, a comparison
sets two periods of equal length against each other (both released), and the answer names the
days it covers -- and why they differ from the asked ones; when no release covers the asked
days, it says which days the releases do cover.

The first test is the pure rule; the second asks the real derivation (``ask_released``) of a
DuckDB holding random releases, so it checks what a person is shown."""

from __future__ import annotations

import datetime as dt

import duckdb
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from analysis import Filters, Question
from analysis._period import NotCovered, Released, days_text, resolve
from analysis._released import ask_released
from analysis._rows import TopRow
from collector.db import migrate
from collector.releases.store import KEY_SEP
from tests.hypothesis_profiles import at_most

D0 = dt.date(2026, 3, 2)  # a Monday
WEEK = dt.timedelta(days=7)
ONE = dt.timedelta(days=1)
_DAYS = st.integers(-30, 130).map(lambda i: D0 + i * ONE)


@st.composite
def _released(draw: st.DrawFn) -> Released:
    first = draw(st.integers(0, 8))
    weeks = draw(st.integers(1, 10))
    return Released(D0 + first * WEEK, D0 + (first + weeks) * WEEK - ONE)


@st.composite
def _asked(draw: st.DrawFn) -> Filters:
    start, end = draw(st.one_of(st.none(), _DAYS)), draw(st.one_of(st.none(), _DAYS))
    if start is not None and end is not None and start > end:
        start, end = end, start
    return Filters(start=start, end=end)


def _weeks(period: tuple[dt.date, dt.date]) -> bool:
    start, end = period
    return start.weekday() == 0 and end.weekday() == 6


@given(filters=_asked(), released=_released())
@example(  # the walkthrough: a range reaching into the open week (released through Nov 29)
    filters=Filters(start=dt.date(2026, 11, 25), end=dt.date(2026, 12, 4)),
    released=Released(dt.date(2026, 9, 7), dt.date(2026, 11, 29)),
)
def test_any_asked_days_against_any_releases(filters: Filters, released: Released) -> None:
    try:
        cov = resolve(filters, released)
    except NotCovered as exc:
        # Nothing released is in the asked days (widened to weeks); the answer says what is.
        asked_end = filters.end or released.through
        asked_start = filters.start or asked_end - 27 * ONE
        assert asked_start > released.through or asked_end < released.first
        assert f"releases cover {days_text(released.period)}" in str(exc)
        return
    period, previous = cov.period, cov.previous
    # Every covered day is released, in whole weeks, and every released asked week is covered.
    assert released.first <= period.start <= period.end <= released.through
    assert _weeks((period.start, period.end))
    widened_start = cov.asked.start - cov.asked.start.weekday() * ONE
    widened_end = cov.asked.end + (6 - cov.asked.end.weekday()) * ONE
    assert period.start == max(widened_start, released.first)
    assert period.end == min(widened_end, released.through)
    # A comparison: the same number of days, right before, every one released -- or none.
    if previous is None:
        assert period.start - period.days * ONE < released.first
        assert "no comparison" in cov.comparison and released.first.isoformat() in cov.comparison
    else:
        assert previous.days == period.days and previous.end + ONE == period.start
        assert released.first <= previous.start
        assert days_text(previous) in cov.comparison
    # The answer names the days it covers, and why they are not the asked ones.
    if period == cov.asked:
        assert cov.note is None
    else:
        assert cov.note is not None
        assert days_text(period) in cov.note and days_text(cov.asked) in cov.note
        if widened_end > released.through:
            assert f"newest released week ends {released.through.isoformat()}" in cov.note


def test_nothing_released_yet_says_so() -> None:
    with pytest.raises(NotCovered, match="nothing is released yet"):
        resolve(Filters(), None)


def _store(first: int, weeks: int, cells: list[tuple[int, str, int]]) -> duckdb.DuckDBPyConnection:
    """Released ``friction`` weeks ``first`` .. ``first + weeks - 1`` (sigma 0), holding the
    cells (week, tool, n) of the released weeks."""
    con = duckdb.connect(":memory:")
    migrate(con)
    for week in range(first, first + weeks):
        con.execute(
            "INSERT INTO release_periods VALUES ('friction', $1, 'week', 0.0, 0, 0, 'test')",
            [D0 + week * WEEK],
        )
    seen = {(w, tool): n for w, tool, n in cells if first <= w < first + weeks}
    rows = [[D0 + w * WEEK, KEY_SEP.join((tool, "timeout", "other")), n]
            for (w, tool), n in seen.items()]  # fmt: skip
    if rows:
        con.executemany("INSERT INTO release_cells VALUES ('friction', $1, $2, $3)", rows)
    return con


_CELLS = st.lists(
    st.tuples(st.integers(0, 12), st.sampled_from(["read_note", "send_email"]),
              st.integers(1, 500)),
    max_size=30,
)  # fmt: skip


@pytest.mark.slow
# Each example migrates a DuckDB: 60 cover the cuts without a minute of CI.
@settings(max_examples=at_most(60), suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(first=st.integers(0, 4), weeks=st.integers(1, 8), filters=_asked(), cells=_CELLS)
@example(  # asked into the week after the newest release: the false drop of the walkthrough
    first=0,
    weeks=3,
    filters=Filters(start=D0 + 16 * ONE, end=D0 + 25 * ONE),
    cells=[(w, "read_note", 100) for w in range(4)],
)
def test_the_top_answer_covers_released_days_and_compares_equal_lengths(
    first: int, weeks: int, filters: Filters, cells: list[tuple[int, str, int]]
) -> None:
    con = _store(first, weeks, cells)
    through = D0 + (first + weeks) * WEEK - ONE
    try:
        try:
            answer = ask_released(con, Question.top, filters, limit=100)
        except LookupError as exc:  # nothing released in the asked days: say what is
            assert f"{(D0 + first * WEEK).isoformat()} to {through.isoformat()}" in str(exc)
            return
        period = answer.period
        assert D0 + first * WEEK <= period.start and period.end <= through, "only released days"
        doc = answer.to_json()
        assert doc["period"] == {"start": period.start.isoformat(), "end": period.end.isoformat()}
        if (filters.start or period.start, filters.end or period.end) != (period.start, period.end):
            assert doc["note"] and days_text(period) in doc["note"], "says what it covers"
        stored = {(w, tool): n for w, tool, n in cells}
        for row in answer.narrow(TopRow).rows:
            if row.prev_n is None:  # no comparison: the days before are not all released
                assert period.start - period.days * ONE < D0 + first * WEEK
                continue
            before = range((period.start - D0).days // 7 - period.days // 7,
                           (period.start - D0).days // 7)  # fmt: skip
            assert min(before) >= first, "the compared weeks are released"
            assert len(before) * 7 == period.days, "both sides equally long"
            assert row.prev_n == sum(stored.get((w, row.tool), 0) for w in before)
    finally:
        con.close()
