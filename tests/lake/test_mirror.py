"""The steward's mirror of the lake (``--mirror``): the same answers as the file and as the
lake's own view, kept in step day by day, never outliving retention, never touching a file
that is not its own."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from analysis import Filters, open_db, open_lake
from collector.lake.jobs import compact, retain
from collector.lake.mirror import MirrorError, open_mirrored
from collector.lake.store import LakeStore
from contract.schema import Platform
from lakedev.seaweed import LoopbackSeaweed
from lmcp.cli import app
from tests._servers import holding_duckdb
from tests.lake.conftest import DAY, answers_of, rows, synthetic_pair

END = dt.date(2026, 11, 30)
NEXT = DAY + dt.timedelta(days=1)
#: The days the step-by-step test writes: its answers are over them (a wider period only adds
#: empty periods, the same on both sides, at ~43k exact cells a week each).
WRITTEN = Filters(start=DAY - dt.timedelta(days=2), end=DAY)


def _mirrored(store: LakeStore, path: Path) -> list[object]:
    return answers_of(open_mirrored(store, path)[0], WRITTEN)


def _stored(path: Path, sql: str) -> list[tuple[object, ...]]:
    """What the mirror FILE holds, read by a fresh connection (not the mirror's code)."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pa.Table]:
    return synthetic_pair(tmp_path_factory.mktemp("file"), 20_000, END)


@pytest.mark.slow
@pytest.mark.parametrize("filters", [None, Filters(platform=Platform.macos)], ids=["all", "macos"])
def test_mirror_answers_equal_the_file_before_and_after_compaction(
    synthetic: tuple[Path, pa.Table], tmp_path: Path, filters: Filters | None
) -> None:
    db, whole = synthetic
    store = LakeStore(str(tmp_path / "lake"))
    store.append(whole.slice(0, 12_000))
    store.append(whole.slice(12_000))
    store.append(whole.slice(3_000, 2_000))  # retries stored twice
    expected = answers_of(open_db(db), filters)
    assert any(a.rows for a in expected)  # type: ignore[attr-defined]
    mirror = tmp_path / "mirror.duckdb"
    con, done = open_mirrored(store, mirror)
    assert (done.rows_copied, done.open_rows) == (0, 20_000)  # nothing compacted: all open
    assert answers_of(con, filters) == expected
    compact(store, END + dt.timedelta(days=1))
    con, done = open_mirrored(store, mirror)
    assert (done.rows_copied, done.open_rows) == (20_000, 0)
    assert answers_of(con, filters) == expected
    assert _stored(mirror, "SELECT count(*), count(DISTINCT signal_id) FROM mirror_signals") == [
        (20_000, 20_000)
    ]


def test_a_day_is_copied_once_and_again_only_when_its_files_change(
    folder_store: LakeStore, tmp_path: Path
) -> None:
    days = [DAY - dt.timedelta(days=i) for i in range(3)]
    for seed, day in enumerate(days):
        folder_store.append(rows(40, seed=seed, received_day=day))
    compact(folder_store, NEXT)
    mirror = tmp_path / "mirror.duckdb"
    con, first = open_mirrored(folder_store, mirror)
    con.close()
    assert (first.days, first.days_copied, first.rows_copied) == (3, 3, 120)
    con, again = open_mirrored(folder_store, mirror)
    con.close()
    assert (again.days_copied, again.days_dropped, again.rows_copied) == (0, 0, 0)

    # A late append into a compacted day: a retried copy of a compacted id and one new signal.
    late = rows(40, seed=0, received_day=days[0])
    new = rows(41, seed=9, received_day=days[0]).slice(40)
    folder_store.append(pa.concat_tables([late.slice(0, 1), new]))
    con, step = open_mirrored(folder_store, mirror)
    con.close()
    assert (step.days_copied, step.open_rows) == (0, 1)  # only the new id, and only once
    assert _mirrored(folder_store, mirror) == answers_of(
        open_lake(folder_store.uri, raw=True), WRITTEN
    )

    compact(folder_store, NEXT)  # the day is rewritten: new files, copied again
    con, recopied = open_mirrored(folder_store, mirror)
    con.close()
    assert (recopied.days_copied, recopied.days_dropped, recopied.open_rows) == (1, 1, 0)
    assert recopied.rows_copied == 41
    assert _mirrored(folder_store, mirror) == answers_of(
        open_lake(folder_store.uri, raw=True), WRITTEN
    )
    assert _stored(mirror, "SELECT count(*) FROM mirror_signals") == [(121,)]


def test_retention_leaves_no_row_of_an_expired_day_in_the_mirror(
    folder_store: LakeStore, tmp_path: Path
) -> None:
    old, kept = DAY - dt.timedelta(days=40), DAY - dt.timedelta(days=2)
    folder_store.append(rows(30, seed=1, received_day=old))
    folder_store.append(rows(30, seed=2, received_day=kept))
    compact(folder_store, NEXT)
    mirror = tmp_path / "mirror.duckdb"
    open_mirrored(folder_store, mirror)[0].close()
    assert _stored(mirror, "SELECT DISTINCT received_day FROM mirror_signals ORDER BY 1") == [
        (old,),
        (kept,),
    ]
    retain(folder_store, DAY, 30, grace_hours=0)
    con, done = open_mirrored(folder_store, mirror)
    con.close()
    assert done.days_dropped == 1
    assert _stored(mirror, "SELECT DISTINCT received_day FROM mirror_signals") == [(kept,)]
    assert _stored(mirror, "SELECT day FROM mirror_days") == [(kept,)]


def test_the_mirror_never_touches_a_file_that_is_not_its_own(
    folder_store: LakeStore, tmp_path: Path
) -> None:
    folder_store.append(rows(10))
    other = LakeStore(str(tmp_path / "other"))
    other.append(rows(10, seed=3))
    signals_file = tmp_path / "signals.duckdb"
    con = duckdb.connect(str(signals_file))
    con.execute("CREATE TABLE signals (x INTEGER)")
    con.close()
    before = hashlib.sha256(signals_file.read_bytes()).hexdigest()
    with pytest.raises(MirrorError, match="not a mirror"):
        open_mirrored(folder_store, signals_file)
    assert hashlib.sha256(signals_file.read_bytes()).hexdigest() == before

    mirror = tmp_path / "mirror.duckdb"
    open_mirrored(folder_store, mirror)[0].close()
    with pytest.raises(MirrorError, match="another lake"):
        open_mirrored(other, mirror)
    text = tmp_path / "notes.txt"
    text.write_text("not a database")
    with pytest.raises(MirrorError, match="not a DuckDB file"):
        open_mirrored(folder_store, text)
    assert text.read_text() == "not a database"


def test_the_mirror_is_readable_by_its_owner_only(folder_store: LakeStore, tmp_path: Path) -> None:
    folder_store.append(rows(10))
    mirror = tmp_path / "deeper" / "mirror.duckdb"
    open_mirrored(folder_store, mirror)[0].close()
    assert mirror.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in mirror.parent.iterdir() if p.name.startswith(".lmcp")] == []


def test_a_mirror_in_use_by_another_process_is_refused(
    folder_store: LakeStore, tmp_path: Path
) -> None:
    folder_store.append(rows(10))
    mirror = tmp_path / "mirror.duckdb"
    open_mirrored(folder_store, mirror)[0].close()
    with holding_duckdb(mirror), pytest.raises(MirrorError, match="in use"):
        open_mirrored(folder_store, mirror)


def test_an_older_mirror_is_rebuilt_from_the_lake(folder_store: LakeStore, tmp_path: Path) -> None:
    folder_store.append(rows(25))
    compact(folder_store, NEXT)
    mirror = tmp_path / "mirror.duckdb"
    open_mirrored(folder_store, mirror)[0].close()
    con = duckdb.connect(str(mirror))
    con.execute("UPDATE lmcp_mirror SET fingerprint = 'an older shape'")
    con.execute("DELETE FROM mirror_signals")  # whatever an older shape held is not trusted
    con.close()
    con, done = open_mirrored(folder_store, mirror)
    con.close()
    assert (done.days_copied, done.rows_copied) == (1, 25)


def test_a_failed_sync_leaves_the_previous_mirror(folder_store: LakeStore, tmp_path: Path) -> None:
    first, second = DAY - dt.timedelta(days=1), DAY
    folder_store.append(rows(20, seed=1, received_day=first))
    compact(folder_store, DAY)
    mirror = tmp_path / "mirror.duckdb"
    open_mirrored(folder_store, mirror)[0].close()
    folder_store.append(rows(20, seed=2, received_day=second))
    compact(folder_store, NEXT)
    for lost in (Path(folder_store.uri) / f"received_day={second}").glob("*.parquet"):
        lost.unlink()  # the new day cannot be read: the copy fails half-way
    with pytest.raises(duckdb.Error):
        open_mirrored(folder_store, mirror)
    assert _stored(mirror, "SELECT day FROM mirror_days") == [(first,)]
    assert _stored(mirror, "SELECT count(*), min(received_day) FROM mirror_signals") == [
        (20, first)
    ]


@pytest.mark.slow
def test_cli_with_a_mirror(synthetic: tuple[Path, pa.Table], tmp_path: Path) -> None:
    db, whole = synthetic
    store = LakeStore(str(tmp_path / "lake"))
    store.append(whole)
    compact(store, END + dt.timedelta(days=1))
    mirror = tmp_path / "mirror.duckdb"
    runner = CliRunner()
    on_file = runner.invoke(app, ["analysis", "top", "--db", str(db), "--json", "--exact"])
    args = ["analysis", "top", "--lake", store.uri, "--json", "--exact", "--mirror", str(mirror)]
    on_mirror = runner.invoke(app, args)
    assert on_file.exit_code == 0 and on_mirror.exit_code == 0, on_mirror.output
    assert json.loads(on_mirror.output) == json.loads(on_file.output)
    report = tmp_path / "triage.html"
    made = runner.invoke(app, ["analysis", "report", "--lake", store.uri, "--exact",
                               "--mirror", str(mirror), "--out", str(report)])  # fmt: skip
    assert made.exit_code == 0 and report.stat().st_size > 0, made.output
    no_exact = runner.invoke(app, ["analysis", "top", "--lake", store.uri, "--mirror", str(mirror)])
    assert no_exact.exit_code == 2 and "--mirror needs --lake and --exact" in no_exact.output
    wrong = runner.invoke(
        app, ["analysis", "top", "--lake", store.uri, "--exact", "--mirror", str(db)]
    )
    assert wrong.exit_code == 2 and "not a mirror" in wrong.output


@pytest.mark.slow
def test_mirror_answers_equal_on_seaweedfs_s3(
    synthetic: tuple[Path, pa.Table], seaweed: LoopbackSeaweed, tmp_path: Path
) -> None:
    db, whole = synthetic
    store = LakeStore(seaweed.uri("mirror"), seaweed.storage_options)
    store.append(whole.slice(0, 15_000))
    store.append(whole.slice(15_000))
    store.append(whole.slice(0, 2_000))  # retries
    compact(store, END - dt.timedelta(days=3))  # most days compacted, the last ones open
    con, done = open_mirrored(store, tmp_path / "mirror.duckdb")
    assert done.rows_copied > 0 and done.open_rows > 0
    assert answers_of(con) == answers_of(open_db(db))
