"""The release calendar, the period a signal counts in, and the bounds the noise rests on.

Attacks on the old daily releases, each a test here: one signal on an otherwise empty day
moved the released days (the calendar was the data's); a backlog received on one day counted
in that day's release; the L1 bound calibrated noise a tighter L2 allows.
"""

from __future__ import annotations

import datetime as dt
import itertools

import duckdb
import pytest
from hypothesis import given
from hypothesis import strategies as st

from collector.db import migrate
from collector.ingest import check_days
from collector.releases.cubes import CUBES, Bounds
from collector.releases.store import (
    count_period,
    due_periods,
    read_cells,
    read_noisy_cells,
    release_closed_periods,
    released_scales,
)
from collector.settings import CollectorSettings
from collector.store import flush_rows
from contract.accountant import ReleasePlan, weeks_in_window
from contract.days import PeriodKind, accepts_day, closed, last_closed, period_start
from contract.limits import LATE_DAYS
from service.errors import ProblemError
from tests.factories import make_signal

TODAY = dt.date(2026, 12, 2)  # a Wednesday
WINDOW = 15
days_st = st.dates(dt.date(2025, 1, 1), dt.date(2028, 1, 1))


def _db() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    migrate(con)
    return con


def _periods(con: duckdb.DuckDBPyConnection) -> list[tuple[str, dt.date, int]]:
    return sorted(con.execute("SELECT cube, day, cells FROM release_periods").fetchall())


def test_every_closed_period_is_released_empty_ones_too_and_once() -> None:
    con = _db()
    released = release_closed_periods(con, TODAY, ReleasePlan(), retention_days=WINDOW)
    first = TODAY - dt.timedelta(days=WINDOW)
    for name, cube in CUBES.items():
        mine = sorted(day for n, day in released if n == name)
        assert mine, name
        assert all(closed(cube.kind, day, TODAY) and day >= first for day in mine)
        # Nothing closed inside the window is left out.
        newest = last_closed(cube.kind, TODAY)
        assert mine[-1] == newest
        if not cube.thresholded:  # a known domain: every cell, noisy, even with no signal
            cells = read_cells(con, name, newest, newest)
            assert len(cells) == len(cube.cells())
        # The analysis' one-pass read: the same cells, each with its period's variance.
        scales = released_scales(con, name, first, TODAY)
        assert read_noisy_cells(con, name, first, TODAY) == [
            (c.day, c.key, float(c.n), scales[c.day] * scales[c.day])
            for c in read_cells(con, name, first, TODAY)
        ]
    before = con.execute("SELECT * FROM release_cells ORDER BY ALL").fetchall()
    assert release_closed_periods(con, TODAY, ReleasePlan(), retention_days=WINDOW) == []
    assert con.execute("SELECT * FROM release_cells ORDER BY ALL").fetchall() == before


def test_one_signal_on_an_empty_day_changes_no_period_released() -> None:
    """The calendar is the date's: the same (cube, period) rows with and without it, for a
    weekly and the daily cube (the calendar is the kind's; ring2's 43k cells add nothing)."""
    empty, one = _db(), _db()
    lone_day = TODAY - dt.timedelta(days=9)
    flush_rows(one, [[make_signal(day=lone_day)]], lone_day)
    cubes = ("friction", "daily")
    assert {CUBES[c].kind for c in cubes} == set(PeriodKind)
    release_closed_periods(empty, TODAY, ReleasePlan(), retention_days=WINDOW, cubes=cubes)
    release_closed_periods(one, TODAY, ReleasePlan(), retention_days=WINDOW, cubes=cubes)
    assert _periods(empty) == _periods(one)
    assert {cube for cube, _, _ in _periods(one)} == set(cubes)


def test_a_signal_counts_in_the_period_of_its_own_day_not_of_its_arrival() -> None:
    con = _db()
    sunday = dt.date(2026, 11, 29)
    # Built on Sunday, delivered on Tuesday (two days late: still accepted).
    flush_rows(con, [[make_signal(day=sunday)]], sunday + dt.timedelta(days=LATE_DAYS))
    week = period_start(PeriodKind.week, sunday)
    assert sum(count_period(con, "friction", week).counts.values()) == 1
    next_week = week + dt.timedelta(days=7)
    assert count_period(con, "friction", next_week).counts == {}
    assert sum(count_period(con, "daily", sunday).counts.values()) == 1


@given(day=days_st, today=days_st)
def test_the_collector_accepts_a_day_exactly_while_its_periods_are_open(
    day: dt.date, today: dt.date
) -> None:
    signal = make_signal(day=day)
    try:
        check_days([signal], today, 90)  # type: ignore[list-item]
        accepted = True
    except ProblemError as exc:
        assert exc.status == 422
        accepted = False
    assert accepted == accepts_day(day, today)
    if day <= today:  # a day not in the future: accepted iff no period holding it is closed
        assert accepted == (not any(closed(k, day, today) for k in PeriodKind))


@given(today=days_st)
def test_last_closed_is_the_newest_closed_period(today: dt.date) -> None:
    for kind in PeriodKind:
        start = last_closed(kind, today)
        step = dt.timedelta(days=7 if kind is PeriodKind.week else 1)
        assert start == period_start(kind, start)
        assert closed(kind, start, today) and not closed(kind, start + step, today)


@given(days=st.integers(1, 120))
def test_weeks_in_window_is_the_most_weeks_any_window_touches(days: int) -> None:
    monday = dt.date(2026, 11, 30)
    touched = max(
        len({period_start(PeriodKind.week, monday + dt.timedelta(days=s + i)) for i in range(days)})
        for s in range(7)
    )
    assert weeks_in_window(days) == touched


@given(l0=st.integers(1, 4), linf=st.integers(1, 4), l1=st.integers(1, 8))
def test_l2_is_the_largest_norm_the_bounds_allow(l0: int, linf: int, l1: int) -> None:
    """Brute force over every vector of l0 cells, each 0..linf, summing to at most l1."""
    best = max(
        sum(x * x for x in v) for v in itertools.product(range(linf + 1), repeat=l0) if sum(v) <= l1
    )
    assert Bounds(l0=l0, linf=linf, l1=l1).l2 == pytest.approx(best**0.5)


def test_the_plan_is_validated_and_the_ceiling_names_its_setting() -> None:
    with pytest.raises(ValueError, match="clients' bound"):
        ReleasePlan(cap=7)
    with pytest.raises(ValueError, match="split"):
        ReleasePlan(split_items=(("friction", 1.0),))
    assert CollectorSettings().checked_release_plan().long_run().epsilon <= 8.5
    with pytest.raises(ValueError, match="LMCP_COLLECTOR_RELEASE_RHO"):
        CollectorSettings(release_rho=5.0).checked_release_plan()


def test_the_job_goes_back_no_further_than_its_backfill() -> None:
    con = _db()
    due = due_periods(con, TODAY, 36500, backfill_days=20)
    assert due and min(day for _, day in due) >= TODAY - dt.timedelta(days=20)
    assert due_periods(con, TODAY, 36500, backfill_days=0) == []
