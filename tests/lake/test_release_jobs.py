"""The lake's release job beside the others: two jobs racing store one release (the loser's
draw never stored), retention removes expired released cells and their files, a lake collector
serves the releases table as it changes, and the ``lmcp lake`` commands run it."""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from collector.lake.jobs import compact, retain
from collector.lake.releases import LakeReleases, ReleaseResult, release
from collector.lake.served import ReleasedDatabase
from collector.lake.store import LakeStore
from collector.releases.cubes import CUBES
from collector.releases.store import last_released
from contract.accountant import ReleasePlan
from lakedev.seaweed import LoopbackSeaweed
from tests._processes import HANG_S
from tests.lake._releases import WEEK_CLOSED, WINDOW, cells, records, week_periods
from tests.lake.conftest import DAY, rows


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
    assert records(store) == week_periods()
    won = sum(r.cells for job in results for r in job if r.status == "released")
    assert len(cells(LakeReleases(store).read())) == won


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
        assert n is not None and n[0] == len(cells(LakeReleases(folder_store).read())) > 0
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
