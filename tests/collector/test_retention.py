"""Retention: signals older than the window are deleted, at start and on a schedule."""

from __future__ import annotations

import datetime as dt
import functools

import duckdb
import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from collector.db import migrate
from collector.retention import first_kept_day, purge_expired
from collector.settings import CollectorSettings
from collector.store import flush_rows
from contract.schema import FrictionSignal
from tests._servers import HANG_S, running_collector, wait_until
from tests.collector.conftest import auth, make_signal, read_rows

TODAY = dt.date(2026, 11, 30)


@functools.cache
def _shared() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    migrate(con)
    return con


def _db_with(days: list[tuple[dt.date, dt.date]]) -> duckdb.DuckDBPyConnection:
    """The shared in-memory database holding exactly these (day, received_day) signals."""
    con = _shared()
    con.execute("DELETE FROM signals")
    by_received: dict[dt.date, list[FrictionSignal]] = {}
    for day, received in days:
        by_received.setdefault(received, []).append(make_signal(day=day))
    for received, batch in by_received.items():
        flush_rows(con, [batch], received)
    return con


AGES = st.sampled_from([0, 1, 29, 30, 31, 89, 90, 91, 364, 365, 366])


@pytest.mark.slow
@given(
    st.lists(st.tuples(AGES, AGES), max_size=12),
    st.sampled_from([1, 30, 89, 90, 91, 365]),
)
def test_purge_keeps_exactly_the_window(ages: list[tuple[int, int]], window: int) -> None:
    days = [(TODAY - dt.timedelta(days=a), TODAY - dt.timedelta(days=b)) for a, b in ages]
    con = _db_with(days)
    expected_gone = sum(1 for a, b in ages if a > window or b > window)
    assert purge_expired(con, TODAY, window) == expected_gone
    left = con.execute("SELECT min(day), min(received_day), count(*) FROM signals").fetchone()
    assert left is not None
    assert left[2] == len(ages) - expected_gone
    if left[2]:
        assert left[0] >= first_kept_day(TODAY, window)
        assert left[1] >= first_kept_day(TODAY, window)


def test_default_window_is_90_days() -> None:
    assert CollectorSettings().retention_days == 90
    con = _db_with([(TODAY - dt.timedelta(days=90), TODAY), (TODAY - dt.timedelta(days=91), TODAY)])
    assert purge_expired(con, TODAY, 90) == 1


def test_the_running_collector_purges_on_its_schedule(settings: CollectorSettings) -> None:
    """Old rows are deleted by the job itself, at start and again on the interval."""
    day = {"today": TODAY}
    scheduled = settings.model_copy(update={"retention_days": 30, "retention_interval_s": 0.1})
    con = duckdb.connect(str(settings.db_path))
    migrate(con)
    flush_rows(con, [[make_signal(day=TODAY - dt.timedelta(days=40))]], TODAY)  # expired now
    flush_rows(con, [[make_signal(day=TODAY - dt.timedelta(days=20))]], TODAY)  # expires later
    con.close()
    with (
        running_collector(scheduled, today=lambda: day["today"]) as url,
        httpx.Client(base_url=url, headers=auth(), timeout=HANG_S) as http,
    ):

        def count() -> int:
            return int(http.get("/v1/signals/count").json()["count"])

        wait_until(lambda: count() == 1, what="the purge at start")
        day["today"] = TODAY + dt.timedelta(days=15)  # the second row is now 35 days old
        wait_until(lambda: count() == 0, what="the scheduled purge")
    assert read_rows(settings.db_path) == []
