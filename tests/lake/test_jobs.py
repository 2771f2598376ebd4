"""The lake's reads and daily jobs: de-duplication, compaction, retention, the commands."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake.exceptions import CommitFailedError
from typer.testing import CliRunner

from collector.lake.jobs import compact, compact_day, retain
from collector.lake.store import LakeStore
from lmcp.cli import app
from tests.lake.conftest import DAY, rows

NEXT = DAY + dt.timedelta(days=1)


def _view(store: LakeStore) -> list[tuple[object, ...]]:
    con = duckdb.connect()
    store.signals_relation(con)
    return con.execute("SELECT signal_id, received_day FROM signals ORDER BY 1").fetchall()


def _day_files(store: LakeStore, day: dt.date) -> list[str]:
    return [u for u in store.table().file_uris() if f"received_day={day.isoformat()}" in u]


def test_reads_see_each_id_once_whatever_the_retries(folder_store: LakeStore) -> None:
    batch = rows(50)
    for _ in range(3):  # a batch retried on three collectors
        folder_store.append(batch)
    folder_store.append(rows(20, seed=2))
    assert folder_store.count() == 170
    view = _view(folder_store)
    assert len(view) == len({r[0] for r in view}) == 70


def test_a_retry_across_midnight_is_read_once(folder_store: LakeStore) -> None:
    batch = rows(30)
    folder_store.append(batch)
    column = batch.schema.get_field_index("received_day")
    folder_store.append(
        batch.set_column(column, "received_day", pa.array([NEXT] * 30, pa.date32()))
    )
    view = _view(folder_store)
    assert len(view) == 30 and {r[1] for r in view} == {DAY}  # the earliest copy
    compact(folder_store, NEXT + dt.timedelta(days=1))
    view = _view(folder_store)
    assert len(view) == 30 and folder_store.count() == 30  # stored once after compaction


def test_compaction_dedupes_orders_and_merges_files(folder_store: LakeStore) -> None:
    for seed in range(6):
        folder_store.append(rows(40, seed=seed))
    folder_store.append(rows(40, seed=3))  # a retry
    folder_store.append(rows(10, seed=9, received_day=NEXT))  # today: left alone
    before = len(_day_files(folder_store, DAY))
    results = compact(folder_store, NEXT)
    assert [r.day for r in results] == [DAY]
    assert (results[0].rows_before, results[0].rows_after) == (280, 240)
    files = _day_files(folder_store, DAY)
    assert before == 7 and len(files) == 1
    ids = pq.read_table(files[0].removeprefix("file://")).column("signal_id").to_pylist()
    assert ids == sorted(ids) and len(set(ids)) == 240
    assert len(_day_files(folder_store, NEXT)) == 1
    assert not [d for d in folder_store.days() if d.day == NEXT][0].compacted


def test_compaction_runs_once_per_day(folder_store: LakeStore) -> None:
    folder_store.append(rows(40))
    assert len(compact(folder_store, NEXT)) == 1
    version = folder_store.table().version()
    assert compact(folder_store, NEXT) == []
    assert folder_store.table().version() == version  # nothing rewritten, nothing committed


def test_compacted_files_do_not_depend_on_arrival(tmp_path: Path) -> None:
    """The same signals, arriving in other batches, orders and with other retries, compact
    into the same rows in the same order (the privacy issue's day rewrite needs this)."""
    whole = rows(120)
    a, b = LakeStore(str(tmp_path / "a")), LakeStore(str(tmp_path / "b"))
    a.append(whole)
    for start in (80, 0, 40, 0):
        b.append(whole.slice(start, 40))
    for store in (a, b):
        compact(store, NEXT)
    tables = [pq.read_table(_day_files(s, DAY)[0].removeprefix("file://")) for s in (a, b)]
    assert tables[0].equals(tables[1])


def test_a_write_to_the_day_being_compacted_fails_the_compaction_not_the_rows(
    folder_store: LakeStore,
) -> None:
    folder_store.append(rows(40))
    late = rows(5, seed=8)
    with pytest.raises(CommitFailedError):
        compact_day(folder_store, DAY, before_commit=lambda: folder_store.append(late))
    assert folder_store.count() == 45 and len(_view(folder_store)) == 45
    compact(folder_store, NEXT)  # the next run takes it in
    assert folder_store.count() == 45 and all(d.compacted for d in folder_store.days())


def test_a_write_to_another_day_does_not_stop_compaction(folder_store: LakeStore) -> None:
    folder_store.append(rows(40))
    today = rows(5, seed=8, received_day=NEXT)
    result = compact_day(folder_store, DAY, before_commit=lambda: folder_store.append(today))
    assert result.rows_after == 40 and folder_store.count() == 45


def test_retention_leaves_no_file_of_an_expired_day(folder_store: LakeStore) -> None:
    old, kept = DAY - dt.timedelta(days=40), DAY - dt.timedelta(days=2)
    for seed in range(3):
        folder_store.append(rows(20, seed=seed, received_day=old))
    folder_store.append(rows(20, seed=5, received_day=kept))
    compact(folder_store, NEXT)  # leaves tombstoned files behind too
    root = Path(folder_store.uri)
    assert list((root / f"received_day={old}").glob("*.parquet"))
    result = retain(folder_store, DAY, 30, grace_hours=0)
    assert result.rows_deleted == 60
    assert not list((root / f"received_day={old}").glob("*.parquet"))
    assert [d.day for d in folder_store.days()] == [kept]
    # every parquet file left is one the table references (the compaction leftovers are gone)
    on_disk = {str(p) for p in root.rglob("*.parquet")}
    assert on_disk == {u.removeprefix("file://") for u in folder_store.table().file_uris()}
    assert retain(folder_store, DAY, 30, grace_hours=0).rows_deleted == 0  # idempotent


def test_retention_keeps_files_within_the_grace(folder_store: LakeStore) -> None:
    old = DAY - dt.timedelta(days=40)
    folder_store.append(rows(20, received_day=old))
    root = Path(folder_store.uri)
    result = retain(folder_store, DAY, 30, grace_hours=1)
    assert result.rows_deleted == 20 and result.files_vacuumed == 0
    assert list((root / f"received_day={old}").glob("*.parquet"))  # a reader may scan it
    assert folder_store.days() == []


def test_the_view_has_the_collector_table_types(folder_store: LakeStore) -> None:
    folder_store.append(rows(10))
    lake = duckdb.connect()
    folder_store.signals_relation(lake)
    file = duckdb.connect()
    from collector.db import migrate

    migrate(file)
    shape = "SELECT column_name, column_type FROM (DESCRIBE signals)"
    assert lake.execute(shape).fetchall() == file.execute(shape).fetchall()


def test_lake_commands(folder_store: LakeStore) -> None:
    folder_store.append(rows(30))
    folder_store.append(rows(30))
    runner = CliRunner()
    uri = folder_store.uri
    out = runner.invoke(app, ["lake", "status", "--lake", uri])
    assert out.exit_code == 0 and "60 rows" in out.output and "open" in out.output
    out = runner.invoke(app, ["lake", "compact", "--lake", uri, "--today", str(NEXT)])
    assert out.exit_code == 0 and "60 rows in 2 files -> 30 rows in 1 files" in out.output
    out = runner.invoke(app, ["lake", "compact", "--lake", uri, "--today", str(NEXT)])
    assert "compacted 0 day(s)" in out.output
    out = runner.invoke(
        app, ["lake", "retain", "--lake", uri, "--today", "2027-06-01", "--grace-hours", "0"]
    )
    assert out.exit_code == 0 and "deleted 30 row(s)" in out.output
    assert not list(Path(uri).rglob("*.parquet"))


def test_lake_commands_without_a_table(tmp_path: Path) -> None:
    runner = CliRunner()
    for command in ("status", "compact", "retain"):
        out = runner.invoke(app, ["lake", command, "--lake", str(tmp_path / "none")])
        assert out.exit_code == 1 and "no table there yet" in out.output
    assert not (tmp_path / "none").exists()  # nothing created by looking


def test_the_log_holds_no_value_of_a_signal(folder_store: LakeStore) -> None:
    """A one-signal flush's column statistics would be that signal's values, kept in the log
    with the commit's millisecond after compaction and VACUUM deleted its file."""
    one = rows(1, seed=11)
    folder_store.append(one)
    compact(folder_store, NEXT)
    retain(folder_store, NEXT, 90, grace_hours=0)
    log = "".join(p.read_text() for p in (Path(folder_store.uri) / "_delta_log").glob("*.json"))
    values = {
        str(one.column(name)[0].as_py())
        for name in ("tool_attempted", "error_class", "client_platform", "friction_type")
    }
    assert len(values) == 4 and not [v for v in values if v in log]
