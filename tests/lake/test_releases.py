"""The lake's release rules: each closed period released once, when the received days that can
hold its signals are compacted, never redrawn; a day released before its week keeps its rows;
nothing before the window; computed by ``collector.releases`` from the de-duplicated signals,
as the file computes it. The jobs beside it (a race, retention, serving, the commands) are in
``test_release_jobs.py``."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb

from collector.db import migrate
from collector.lake.jobs import compact
from collector.lake.releases import LakeReleases, release
from collector.lake.store import LakeStore
from collector.releases.store import release_closed_periods
from contract.accountant import ReleasePlan
from tests.lake._releases import (
    DAILY,
    NO_NOISE,
    WEEK_CLOSED,
    WINDOW,
    cells,
    records,
    week_periods,
)
from tests.lake.conftest import DAY, rows


def test_each_closed_period_is_released_once_its_days_are_compacted(
    folder_store: LakeStore,
) -> None:
    folder_store.append(rows(300))
    folder_store.append(rows(300))  # a retried batch
    folder_store.append(rows(40, seed=2, received_day=DAY + dt.timedelta(days=1)))
    # Before compaction only the daily periods whose received days (the day before to two
    # days after) hold no file are ready: released empty, as the calendar says.
    first = release(folder_store, WEEK_CLOSED, ReleasePlan(), retention_days=WINDOW)
    ready = [DAY + dt.timedelta(days=i) for i in range(3, 7)]
    assert [(r.day, r.status, r.kinds) for r in first] == [(d, "released", ("day",)) for d in ready]
    compact(folder_store, WEEK_CLOSED)
    second = release(folder_store, WEEK_CLOSED, ReleasePlan(), retention_days=WINDOW)
    assert [(r.day, r.kinds) for r in second] == [
        (DAY, ("week", "day")), (DAY + dt.timedelta(days=1), ("day",)),
        (DAY + dt.timedelta(days=2), ("day",)),
    ]  # fmt: skip
    assert records(folder_store) == week_periods()
    # every cell of a known domain is stored, noisy, negative ones too
    stored = LakeReleases(folder_store).read()
    assert any(n < 0 for *_, n in cells(stored))
    # idempotent, and a stored release is never drawn again
    assert release(folder_store, WEEK_CLOSED, ReleasePlan(), retention_days=WINDOW) == []
    assert LakeReleases(folder_store).read().equals(stored)


def test_a_day_released_before_its_week_keeps_its_rows(folder_store: LakeStore) -> None:
    folder_store.append(rows(200))
    compact(folder_store, DAY + dt.timedelta(days=1))
    early = DAY + dt.timedelta(days=3)  # the daily period of DAY is closed, its week is not
    done = release(folder_store, early, ReleasePlan(), retention_days=3)
    assert [(r.day, r.cubes) for r in done] == [(DAY, tuple(DAILY))]
    before = cells(LakeReleases(folder_store).read())
    release(folder_store, WEEK_CLOSED, ReleasePlan(), retention_days=WINDOW)
    after = cells(LakeReleases(folder_store).read())
    assert set(before) <= set(after)  # the daily cube's Monday was not committed over
    assert records(folder_store) == week_periods()


def test_a_period_before_the_window_is_never_released(folder_store: LakeStore) -> None:
    folder_store.append(rows(100))
    compact(folder_store, DAY + dt.timedelta(days=1))
    later = WEEK_CLOSED + dt.timedelta(days=31)  # a Saturday
    done = release(folder_store, later, ReleasePlan(), retention_days=30, backfill_days=8)
    # The window starts on a Friday: the closed week around it starts before it, so only the
    # days from that Friday are released (a straddling week would be a period before it).
    kept = later - dt.timedelta(days=8)
    assert kept.weekday() == 4
    assert done and all(r.day >= kept for r in done)
    assert min(day for _, day in records(folder_store)) >= kept
    assert {cube for cube, _ in records(folder_store)} == set(DAILY)


def test_the_release_reads_each_signal_once_as_the_file_does(
    folder_store: LakeStore, tmp_path: Path
) -> None:
    batch = rows(600)
    late = rows(80, seed=5, received_day=DAY + dt.timedelta(days=8), day=DAY + dt.timedelta(6))
    early = rows(60, seed=6, received_day=DAY - dt.timedelta(days=1), day=DAY)  # east of UTC
    folder_store.append(batch)
    folder_store.append(batch.slice(0, 250))  # stored twice, counted once
    folder_store.append(late)
    folder_store.append(early)
    compact(folder_store, WEEK_CLOSED)
    release(folder_store, WEEK_CLOSED, NO_NOISE, retention_days=WINDOW)
    file = duckdb.connect(str(tmp_path / "file.duckdb"))
    migrate(file)
    for i, part in enumerate((batch, late, early)):
        file.register(f"batch{i}", part.drop_columns(["compacted"]))
        file.execute(f"INSERT INTO signals BY NAME SELECT * REPLACE (CAST(hex(signal_id) AS "
                     f"UUID) AS signal_id) FROM batch{i}")  # fmt: skip
    release_closed_periods(file, WEEK_CLOSED, NO_NOISE, retention_days=WINDOW)
    on_file = file.execute("SELECT cube, day, key, n FROM release_cells").fetchall()
    lake_cells = cells(LakeReleases(folder_store).read())
    assert sum(n for cube, _, _, n in lake_cells if cube == "friction") == 600 + 80 + 60
    assert lake_cells == sorted(on_file)
    records = "SELECT cube, day, kind, scale, threshold, cells, params FROM release_periods"
    lake = duckdb.connect(":memory:")
    migrate(lake)
    from collector.lake.releases import load_releases

    load_releases(lake, LakeReleases(folder_store).read())
    assert sorted(lake.execute(records).fetchall()) == sorted(file.execute(records).fetchall())
