"""The lake's release job: each closed, compacted day released once, never redrawn, even with
two jobs racing; computed by ``collector.releases`` from the de-duplicated signals; retention
removes expired released cells and their files; a lake collector serves them and draws none."""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from typer.testing import CliRunner

from analysis._released import last_released_day
from collector.db import migrate
from collector.lake.jobs import compact, retain
from collector.lake.releases import LakeReleases, ReleaseResult, release
from collector.lake.served import ReleasedDatabase
from collector.lake.store import LakeStore
from collector.releases.cubes import CUBES
from collector.releases.store import PrivacyParams, release_closed_days
from lakedev.seaweed import LoopbackSeaweed
from lmcp.cli import app
from tests._servers import HANG_S
from tests.lake.conftest import DAY, rows

NEXT = DAY + dt.timedelta(days=1)
#: Noise of scale at most 0.0008 (every cube): a draw equals the exact counts above the
#: threshold (the chance of a non-zero draw is below e^-1000 per cell), so a lake release can
#: be compared with a file's.
NO_NOISE = PrivacyParams(epsilon_per_day=1e6)


def _records(store: LakeStore) -> list[tuple[str, dt.date]]:
    table = LakeReleases(store).read()
    records = table.filter(pc.is_null(table.column("key")))
    cols = [records.column(c).to_pylist() for c in ("cube", "day")]
    return sorted(zip(*cols, strict=True))


def _cells(table: pa.Table) -> list[tuple[object, ...]]:
    cells = table.filter(pc.is_valid(table.column("key")))
    cols = [cells.column(c).to_pylist() for c in ("cube", "day", "key", "n")]
    return sorted(zip(*cols, strict=True))


def test_each_closed_compacted_day_is_released_once(folder_store: LakeStore) -> None:
    folder_store.append(rows(300))
    folder_store.append(rows(300))  # a retried batch
    folder_store.append(rows(40, seed=2, received_day=NEXT))  # today: open
    assert release(folder_store, NEXT, PrivacyParams(), retention_days=90) == []  # not compacted
    compact(folder_store, NEXT)
    first = release(folder_store, NEXT, PrivacyParams(), retention_days=90)
    assert [(r.day, r.status) for r in first] == [(DAY, "released")]
    stored = LakeReleases(folder_store).read()
    assert _records(folder_store) == sorted((cube, DAY) for cube in CUBES)
    # idempotent, and a stored release is never drawn again
    assert release(folder_store, NEXT, PrivacyParams(), retention_days=90) == []
    assert LakeReleases(folder_store).read().equals(stored)
    assert NEXT not in LakeReleases(folder_store).days()  # the open day is never released


def test_a_day_before_the_window_is_never_released(folder_store: LakeStore) -> None:
    folder_store.append(rows(100))
    compact(folder_store, NEXT)
    later = DAY + dt.timedelta(days=31)
    assert release(folder_store, later, PrivacyParams(), retention_days=30) == []
    assert not LakeReleases(folder_store).exists()


def test_the_release_reads_each_signal_once_as_the_file_does(
    folder_store: LakeStore, tmp_path: Path
) -> None:
    batch = rows(600)
    folder_store.append(batch)
    folder_store.append(batch.slice(0, 250))  # stored twice, counted once
    compact(folder_store, NEXT)
    release(folder_store, NEXT, NO_NOISE, retention_days=90)
    file = duckdb.connect(str(tmp_path / "file.duckdb"))
    migrate(file)
    file.register("batch", batch.drop_columns(["compacted"]))
    file.execute("INSERT INTO signals BY NAME SELECT * REPLACE (CAST(hex(signal_id) AS UUID) "
                 "AS signal_id) FROM batch")  # fmt: skip
    release_closed_days(file, NEXT, NO_NOISE)
    on_file = file.execute("SELECT cube, day, key, n FROM release_cells").fetchall()
    lake_cells = _cells(LakeReleases(folder_store).read())
    assert len(lake_cells) > 100
    assert lake_cells == sorted(on_file)


def _race(store: LakeStore, params: PrivacyParams) -> list[list[ReleaseResult]]:
    """Two release jobs that both read the table before either commits."""
    barrier = threading.Barrier(2, timeout=HANG_S)
    results: list[list[ReleaseResult]] = [[], []]
    errors: list[BaseException] = []

    def both_computed(_: dt.date) -> None:
        barrier.wait()

    def job(i: int) -> None:
        try:
            results[i] = release(
                store, NEXT, params, retention_days=90, before_commit=both_computed
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


def test_two_concurrent_jobs_store_one_release(folder_store: LakeStore) -> None:
    folder_store.append(rows(400))
    compact(folder_store, NEXT)
    results = _race(folder_store, PrivacyParams(epsilon_per_day=5.0))
    assert sorted(r[0].status for r in results) == ["released", "taken"]
    # one record per cube: the loser's draw was never stored
    assert _records(folder_store) == sorted((cube, DAY) for cube in CUBES)
    winner = next(r[0] for r in results if r[0].status == "released")
    assert len(_cells(LakeReleases(folder_store).read())) == winner.cells


@pytest.mark.slow
def test_two_concurrent_jobs_store_one_release_on_seaweedfs(seaweed: LoopbackSeaweed) -> None:
    store = LakeStore(seaweed.uri("release-race"), seaweed.storage_options)
    store.append(rows(400))
    compact(store, NEXT)
    results = _race(store, PrivacyParams(epsilon_per_day=5.0))
    assert sorted(r[0].status for r in results) == ["released", "taken"]
    assert _records(store) == sorted((cube, DAY) for cube in CUBES)


def test_retention_removes_expired_released_cells_and_their_files(
    folder_store: LakeStore,
) -> None:
    old = DAY - dt.timedelta(days=40)
    folder_store.append(rows(200, received_day=old))
    folder_store.append(rows(200, seed=3))
    compact(folder_store, NEXT)
    release(folder_store, NEXT, NO_NOISE, retention_days=90)
    releases = LakeReleases(folder_store)
    assert releases.days() == {old, DAY}
    root = Path(releases.uri)
    assert list((root / f"day={old}").glob("*.parquet"))
    result = retain(folder_store, NEXT, 30, grace_hours=0)
    assert result.released_rows_deleted > len(CUBES) and result.release_files_vacuumed >= 1
    assert releases.days() == {DAY}
    assert not list((root / f"day={old}").glob("*.parquet"))
    assert {d.day for d in folder_store.days()} == {DAY}
    # the expired day is not released again, whatever is left of it
    assert release(folder_store, NEXT, NO_NOISE, retention_days=30) == []


def test_the_served_copy_follows_the_releases_table(folder_store: LakeStore) -> None:
    folder_store.append(rows(200))
    compact(folder_store, NEXT)
    served = ReleasedDatabase(LakeReleases(folder_store), refresh_s=0)
    served.open()
    try:
        assert served.run_sync(last_released_day) is None
        release(folder_store, NEXT, NO_NOISE, retention_days=90)
        assert served.run_sync(last_released_day) == DAY
        count = "SELECT count(*) FROM release_cells"
        n = served.run_sync(lambda con: con.execute(count).fetchone())
        assert n is not None and n[0] == len(_cells(LakeReleases(folder_store).read())) > 0
        # nothing on the served copy computes a release: it holds no signal
        assert served.run_sync(lambda con: release_closed_days(con, NEXT, NO_NOISE)) == []
    finally:
        served.close()


def test_release_and_status_commands(folder_store: LakeStore) -> None:
    folder_store.append(rows(200))
    runner = CliRunner()
    uri = folder_store.uri
    today = ["--today", str(NEXT)]
    assert runner.invoke(app, ["lake", "compact", "--lake", uri, *today]).exit_code == 0
    out = runner.invoke(app, ["lake", "release", "--lake", uri, *today])
    assert out.exit_code == 0 and f"{DAY}: released" in out.output, out.output
    assert "released 1 day(s)" in out.output
    out = runner.invoke(app, ["lake", "release", "--lake", uri, *today])
    assert out.exit_code == 0 and "released 0 day(s)" in out.output
    out = runner.invoke(app, ["lake", "status", "--lake", uri])
    assert "compacted, released" in out.output
