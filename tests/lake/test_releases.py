"""The lake's release job: each closed period released once, when the received days that can
hold its signals are compacted, never redrawn, even with two jobs racing; computed by
``collector.releases`` from the de-duplicated signals, as the file computes it; retention
removes expired released cells and their files; a lake collector serves them and draws none."""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from typer.testing import CliRunner

from collector.db import migrate
from collector.lake.jobs import compact, retain
from collector.lake.releases import LakeReleases, ReleaseResult, release
from collector.lake.served import ReleasedDatabase
from collector.lake.store import LakeStore
from collector.releases.cubes import CUBES
from collector.releases.store import last_released, release_closed_periods
from contract.accountant import ReleasePlan
from contract.days import PeriodKind
from lakedev.seaweed import LoopbackSeaweed
from tests.lake.conftest import DAY, rows

#: DAY is a Monday: its week's last day is DAY + 6, closed once LATE_DAYS (2) more passed.
assert DAY.weekday() == 0
WEEK_CLOSED = DAY + dt.timedelta(days=9)
#: From WEEK_CLOSED, a window reaching DAY: the week of DAY and its seven days.
WINDOW = 9
WEEKLY = sorted(c for c in CUBES if CUBES[c].kind is PeriodKind.week)
DAILY = sorted(c for c in CUBES if CUBES[c].kind is PeriodKind.day)
#: A Gaussian of scale below 1e-4 on every cube: a draw equals the exact counts (the chance
#: of a rounding away from them is nil), so a lake release can be compared with a file's.
NO_NOISE = ReleasePlan(rho=1e12)
#: How long a racing job waits for the other (a hang fails the test instead of the run).
HANG_S = 240.0


def _week_periods(day: dt.date = DAY) -> list[tuple[str, dt.date]]:
    days = [day + dt.timedelta(days=i) for i in range(7)]
    return sorted([(c, day) for c in WEEKLY] + [(c, d) for c in DAILY for d in days])


def _records(store: LakeStore) -> list[tuple[str, dt.date]]:
    table = LakeReleases(store).read()
    records = table.filter(pc.is_null(table.column("key")))
    cols = [records.column(c).to_pylist() for c in ("cube", "day")]
    return sorted(zip(*cols, strict=True))


def _cells(table: pa.Table) -> list[tuple[Any, ...]]:
    cells = table.filter(pc.is_valid(table.column("key")))
    cols = [cells.column(c).to_pylist() for c in ("cube", "day", "key", "n")]
    return sorted(zip(*cols, strict=True))


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
    assert _records(folder_store) == _week_periods()
    # every cell of a known domain is stored, noisy, negative ones too
    stored = LakeReleases(folder_store).read()
    assert any(n < 0 for *_, n in _cells(stored))
    # idempotent, and a stored release is never drawn again
    assert release(folder_store, WEEK_CLOSED, ReleasePlan(), retention_days=WINDOW) == []
    assert LakeReleases(folder_store).read().equals(stored)


def test_a_day_released_before_its_week_keeps_its_rows(folder_store: LakeStore) -> None:
    folder_store.append(rows(200))
    compact(folder_store, DAY + dt.timedelta(days=1))
    early = DAY + dt.timedelta(days=3)  # the daily period of DAY is closed, its week is not
    done = release(folder_store, early, ReleasePlan(), retention_days=3)
    assert [(r.day, r.cubes) for r in done] == [(DAY, tuple(DAILY))]
    before = _cells(LakeReleases(folder_store).read())
    release(folder_store, WEEK_CLOSED, ReleasePlan(), retention_days=WINDOW)
    after = _cells(LakeReleases(folder_store).read())
    assert set(before) <= set(after)  # the daily cube's Monday was not committed over
    assert _records(folder_store) == _week_periods()


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
    assert min(day for _, day in _records(folder_store)) >= kept
    assert {cube for cube, _ in _records(folder_store)} == set(DAILY)


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
    lake_cells = _cells(LakeReleases(folder_store).read())
    assert sum(n for cube, _, _, n in lake_cells if cube == "friction") == 600 + 80 + 60
    assert lake_cells == sorted(on_file)
    records = "SELECT cube, day, kind, scale, threshold, cells, params FROM release_periods"
    lake = duckdb.connect(":memory:")
    migrate(lake)
    from collector.lake.releases import load_releases

    load_releases(lake, LakeReleases(folder_store).read())
    assert sorted(lake.execute(records).fetchall()) == sorted(file.execute(records).fetchall())


def _race(store: LakeStore, plan: ReleasePlan) -> list[list[ReleaseResult]]:
    """Two release jobs that both read the table before either commits each day."""
    barrier = threading.Barrier(2, timeout=HANG_S)
    results: list[list[ReleaseResult]] = [[], []]
    errors: list[BaseException] = []

    def both_computed(_: dt.date) -> None:
        barrier.wait()

    def job(i: int) -> None:
        try:
            results[i] = release(
                store, WEEK_CLOSED, plan, retention_days=WINDOW, before_commit=both_computed
            )
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=job, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=HANG_S)
    assert not errors, errors
    return results


def _check_race(store: LakeStore, results: list[list[ReleaseResult]]) -> None:
    assert len(results[0]) == len(results[1]) == 7
    for a, b in zip(*results, strict=True):
        assert a.day == b.day and sorted((a.status, b.status)) == ["released", "taken"]
    # one record per (cube, period): the losers' draws were never stored
    assert _records(store) == _week_periods()
    won = sum(r.cells for job in results for r in job if r.status == "released")
    assert len(_cells(LakeReleases(store).read())) == won


def test_two_concurrent_jobs_store_one_release(folder_store: LakeStore) -> None:
    folder_store.append(rows(400))
    compact(folder_store, DAY + dt.timedelta(days=1))
    _check_race(folder_store, _race(folder_store, ReleasePlan()))


@pytest.mark.slow
def test_two_concurrent_jobs_store_one_release_on_seaweedfs(seaweed: LoopbackSeaweed) -> None:
    store = LakeStore(seaweed.uri("release-race"), seaweed.storage_options)
    store.append(rows(400))
    compact(store, DAY + dt.timedelta(days=1))
    _check_race(store, _race(store, ReleasePlan()))


def test_retention_removes_expired_released_cells_and_their_files(
    folder_store: LakeStore,
) -> None:
    old = DAY - dt.timedelta(days=7)  # a Monday: its week and days expire below
    folder_store.append(rows(200, received_day=old))
    folder_store.append(rows(200, seed=3))
    compact(folder_store, WEEK_CLOSED)
    release(folder_store, WEEK_CLOSED, ReleasePlan(), retention_days=WINDOW + 7)
    releases = LakeReleases(folder_store)
    assert old in releases.days() and DAY in releases.days()
    root = Path(releases.uri)
    assert list((root / f"day={old}").glob("*.parquet"))
    result = retain(folder_store, WEEK_CLOSED, WINDOW, grace_hours=0)
    assert result.released_rows_deleted > len(CUBES) and result.release_files_vacuumed >= 1
    first_kept = WEEK_CLOSED - dt.timedelta(days=WINDOW)
    assert min(releases.days()) == first_kept == DAY
    assert not list((root / f"day={old}").glob("*.parquet"))
    assert {d.day for d in folder_store.days()} == {DAY}
    # the expired periods are not released again, whatever is left of them
    assert release(folder_store, WEEK_CLOSED, ReleasePlan(), retention_days=WINDOW) == []


def test_the_served_copy_follows_the_releases_table(folder_store: LakeStore) -> None:
    folder_store.append(rows(200))
    compact(folder_store, DAY + dt.timedelta(days=1))
    served = ReleasedDatabase(LakeReleases(folder_store), refresh_s=0)
    served.open()
    try:
        assert served.run_sync(lambda con: last_released(con, "friction")) is None
        release(folder_store, WEEK_CLOSED, ReleasePlan(), retention_days=WINDOW)
        assert served.run_sync(lambda con: last_released(con, "friction")) == DAY
        assert served.run_sync(lambda con: last_released(con, "daily")) == DAY + dt.timedelta(6)
        count = "SELECT count(*) FROM release_cells"
        n = served.run_sync(lambda con: con.execute(count).fetchone())
        assert n is not None and n[0] == len(_cells(LakeReleases(folder_store).read())) > 0
    finally:
        served.close()


def test_release_and_status_commands(
    folder_store: LakeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lmcp.cli import app

    monkeypatch.setenv("LMCP_COLLECTOR_RELEASE_BACKFILL_DAYS", str(WINDOW))
    folder_store.append(rows(200))
    runner = CliRunner()
    uri = folder_store.uri
    today = ["--today", str(WEEK_CLOSED)]
    window = ["--days", str(WINDOW)]
    assert runner.invoke(app, ["lake", "compact", "--lake", uri, *today]).exit_code == 0
    out = runner.invoke(app, ["lake", "release", "--lake", uri, *today, *window])
    assert out.exit_code == 0 and f"{DAY}: released the week and the day" in out.output, out.output
    assert "released 8 period(s)" in out.output
    out = runner.invoke(app, ["lake", "release", "--lake", uri, *today, *window])
    assert out.exit_code == 0 and "released 0 period(s)" in out.output
    out = runner.invoke(app, ["lake", "status", "--lake", uri])
    assert f"released 1 week period(s), {DAY} to {DAY}" in out.output, out.output
    assert "released 7 day period(s)" in out.output
