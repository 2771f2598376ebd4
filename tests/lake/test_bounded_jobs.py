"""The lake's daily jobs in bounded memory: ``--memory-limit``, a day larger than the limit
compacted range by range with the same rows as in one piece, memory that does not grow with
the day, and the cross-day check reading only the days that may hold a copy -- exactly."""

from __future__ import annotations

import datetime as dt
import json
import random
import sys
import tempfile
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from collector.lake.bounded import (
    DEFAULT_MEMORY_LIMIT,
    bounded_connection,
    check_memory_limit,
    memory_bytes,
)
from collector.lake.compaction import (
    BATCH_ROWS,
    ROW_BYTES,
    id_range,
    may_hold_copies,
    range_bits,
    range_index,
)
from collector.lake.files import lake_files
from collector.lake.jobs import compact, compact_day
from collector.lake.releases import LakeReleases, release
from collector.lake.store import LAKE_SCHEMA, LakeStore
from contract.accountant import ReleasePlan
from lakedev.seaweed import LoopbackSeaweed
from lmcp.cli import app
from scripts.measure_compaction_memory import many_rows, write_day
from tests._servers import run_child
from tests.hypothesis_profiles import at_most
from tests.lake.conftest import DAY, rows

NEXT = DAY + dt.timedelta(days=1)
#: DAY's week (a Monday) is closed on this day; a window of 9 days reaches back to DAY.
WEEK_CLOSED, RELEASE_WINDOW = DAY + dt.timedelta(days=9), 9
ROOT = Path(__file__).resolve().parents[2]
SMALL = "64MB"


# -- the parameter ---------------------------------------------------------------------------


@given(st.integers(16, 10**6), st.sampled_from(["MB", "mb", "GB", "MiB", "GiB", "TB"]))
def test_a_memory_size_is_read_as_duckdb_reads_it(number: int, unit: str) -> None:
    base = 1024 if unit.lower().endswith("ib") else 1000
    power = 3 if unit[0].lower() == "g" else 4 if unit[0].lower() == "t" else 2
    value = f"{number}{unit}"
    assert memory_bytes(value) == number * base**power
    assert check_memory_limit(f" {value} ") == value
    con = duckdb.connect(config={"memory_limit": value})  # DuckDB takes what we take
    con.close()


@pytest.mark.parametrize("value", ["lots", "", "-1", "none", "80%", "1000", "2 G", "15MB", "1KB"])
def test_a_memory_limit_is_a_finite_size(value: str) -> None:
    """Never unlimited (``-1``, ``none``) nor a share of the RAM: the budget bounds the job."""
    with pytest.raises(ValueError):
        check_memory_limit(value)


def test_the_connection_holds_the_limit_and_removes_its_spill_folder() -> None:
    with bounded_connection(SMALL) as con:
        limit = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
        spill = Path(con.execute("SELECT current_setting('temp_directory')").fetchall()[0][0])
        assert limit == "61.0 MiB" and spill.is_dir()
        # a sort far larger than the limit spills instead of failing
        got = con.execute(
            "SELECT count(*) FROM (SELECT range AS i, repeat('x', 64) AS pad "
            "FROM range(2000000) ORDER BY hash(i))"
        ).fetchall()
        assert got == [(2_000_000,)]
    assert not spill.exists()


def test_memory_limit_option(folder_store: LakeStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LMCP_COLLECTOR_RELEASE_BACKFILL_DAYS", str(RELEASE_WINDOW))
    folder_store.append(rows(30))
    folder_store.append(rows(30))
    runner = CliRunner()
    uri, today = folder_store.uri, ["--today", str(NEXT)]
    out = runner.invoke(app, ["lake", "compact", "--lake", uri, *today, "--memory-limit", "lots"])
    assert out.exit_code == 2 and "--memory-limit" in out.output
    assert not folder_store.days()[0].compacted  # refused before any work
    out = runner.invoke(app, ["lake", "compact", "--lake", uri, *today, "--memory-limit", SMALL])
    assert out.exit_code == 0 and "60 rows in 2 files -> 30 rows in 1 files" in out.output
    # DAY's own daily period is closed three days on (its week is not): one period to draw.
    closed = ["--today", str(DAY + dt.timedelta(days=3)), "--days", "3", "--memory-limit", "1GB"]
    out = runner.invoke(app, ["lake", "release", "--lake", uri, *closed])
    assert out.exit_code == 0 and "released 1 period(s)" in out.output, out.output


# -- ranges of ids ---------------------------------------------------------------------------


@given(st.integers(1, 16), st.binary(min_size=16, max_size=16))
def test_every_id_is_in_exactly_one_range_in_order(bits: int, sid: bytes) -> None:
    inside = [
        i
        for i in range(1 << bits)
        if (id_range(i, bits)[0] or b"") <= sid
        and (id_range(i, bits)[1] is None or sid < (id_range(i, bits)[1] or b""))
    ]
    assert inside == [int.from_bytes(sid[:2], "big") >> (16 - bits)]


@given(st.integers(0, 10**9), st.sampled_from([16 * 10**6, 64 * 10**6, 2 * 10**9]))
def test_each_range_fits_in_the_budget(day_rows: int, budget: int) -> None:
    bits = range_bits(day_rows, budget)
    assert bits == 16 or day_rows * ROW_BYTES <= budget << bits  # fits
    assert bits == 0 or day_rows * ROW_BYTES > budget << (bits - 1)  # and no more ranges


def test_the_sql_range_is_the_python_range() -> None:
    rng = random.Random(3)
    ids = [rng.randbytes(16) for _ in range(5000)] + [b"\x00" * 16, b"\xff" * 16]
    con = duckdb.connect()
    con.register("t", pa.table({"signal_id": pa.array(ids, pa.binary(16))}))
    for bits in (1, 3, 7, 16):
        got = con.execute(f"SELECT signal_id, {range_index(bits)} FROM t").fetchall()
        for sid, index in got:
            low, high = id_range(index, bits)
            assert (low is None or sid >= low) and (high is None or sid < high)


# -- a day larger than the limit --------------------------------------------------------------


def _day(store: LakeStore, day: dt.date = DAY) -> pa.Table:
    table = store.table()
    files = [f for f in lake_files(table) if f.day == day]
    assert all(f.compacted for f in files)
    return store.reader(table).read(files, LAKE_SCHEMA)


def _write_with_conflicts(store: LakeStore, count: int) -> int:
    """``count`` rows in 3 appends, with retried copies, copies of a compacted previous day,
    and copies with other content under the same id (the choice must not depend on the
    path). Returns how many ids the day must keep."""
    before = many_rows(count // 10, seed=7, received_day=DAY - dt.timedelta(days=1))
    store.append(before)
    compact_day(LakeStore(store.uri, store.storage_options), DAY - dt.timedelta(days=1))
    fresh = many_rows(count, seed=8, received_day=DAY)
    third = count // 3
    store.append(fresh.slice(0, third))
    store.append(fresh.slice(third))
    other = fresh.slice(0, 500).set_column(
        LAKE_SCHEMA.get_field_index("tool_attempted"),
        "tool_attempted",
        pa.array(["other"] * 500, pa.string()),
    )
    crossed = before.slice(0, 300).set_column(
        LAKE_SCHEMA.get_field_index("received_day"),
        "received_day",
        pa.array([DAY] * 300, pa.date32()),
    )
    store.append(pa.concat_tables([fresh.slice(third, 1000), other, crossed]))
    return count


@pytest.mark.slow
def test_a_day_larger_than_the_limit_compacts_as_in_one_piece(tmp_path: Path) -> None:
    """64MB: the day (~75 MB as Arrow, ~300 MB for DuckDB to sort) is cut into ranges; the
    rows equal those of the same lake compacted in one piece (the default limit)."""
    count = 300_000
    small, whole = LakeStore(str(tmp_path / "small")), LakeStore(str(tmp_path / "whole"))
    for store in (small, whole):
        expected = _write_with_conflicts(store, count)
    assert range_bits(count, memory_bytes(SMALL)) >= 2
    assert range_bits(count, memory_bytes(DEFAULT_MEMORY_LIMIT)) == 0
    assert [r.rows_after for r in compact(small, NEXT, memory_limit=SMALL)] == [expected]
    assert [r.rows_after for r in compact(whole, NEXT)] == [expected]
    got = _day(small)
    assert got.nbytes > memory_bytes(SMALL)
    ids = got.column("signal_id").to_pylist()
    assert ids == sorted(ids) and len(set(ids)) == expected
    assert got.equals(_day(whole))


@pytest.mark.slow
def test_a_day_larger_than_the_limit_on_seaweedfs(seaweed: LoopbackSeaweed, tmp_path: Path) -> None:
    count = 100_000
    s3 = LakeStore(seaweed.uri("bounded"), seaweed.storage_options)
    folder = LakeStore(str(tmp_path / "whole"))
    for store in (s3, folder):
        expected = _write_with_conflicts(store, count)
    assert range_bits(count, memory_bytes(SMALL)) >= 1
    assert [r.rows_after for r in compact(s3, NEXT, memory_limit=SMALL)] == [expected]
    compact(folder, NEXT)
    assert _day(s3).equals(_day(folder))
    # the release job reads the day lazily under the same limit, with the same cells
    plan = ReleasePlan(rho=1e12)  # no noise: the two draws are the exact counts
    release(s3, WEEK_CLOSED, plan, retention_days=RELEASE_WINDOW, memory_limit=SMALL)
    release(folder, WEEK_CLOSED, plan, retention_days=RELEASE_WINDOW)
    cells = [LakeReleases(s).read().drop_columns(["params"]) for s in (s3, folder)]
    assert (
        cells[0]
        .sort_by([("day", "ascending"), ("cube", "ascending"), ("key", "ascending")])
        .equals(
            cells[1].sort_by([("day", "ascending"), ("cube", "ascending"), ("key", "ascending")])
        )
    )


def _growth_kb(rows_in_day: int, variant: str = "now") -> int:
    with tempfile.TemporaryDirectory() as folder:
        write_day(LakeStore(f"{folder}/lake"), rows_in_day, 4)
        out = run_child(
            [sys.executable, "scripts/measure_compaction_memory.py", "--child", variant,
             "--lake", f"{folder}/lake", "--memory-limit", SMALL],
            cwd=ROOT, check=True,
        ).stdout  # fmt: skip
    got = json.loads(out.strip().splitlines()[-1])
    return int(got["peak_kb"]) - int(got["baseline_kb"])


@pytest.mark.slow
def test_the_compaction_memory_does_not_grow_with_the_day() -> None:
    """Ten times the rows, about the same peak: the old compaction's peak grew by ~1 KB a row
    (``scripts/measure_compaction_memory.py``; with ``variant='before'`` this test fails)."""
    small, large = 100_000, 1_000_000
    arrow_kb = (many_rows(large, seed=1, received_day=DAY).nbytes - many_rows(
        small, seed=1, received_day=DAY).nbytes) // 1024  # fmt: skip
    grew = _growth_kb(large) - _growth_kb(small)
    assert grew < arrow_kb // 2, (grew, arrow_kb)


# -- the cross-day check -----------------------------------------------------------------------

WINDOW = 30  # the collectors' retention_days: day within [received - WINDOW, received + 1]


def _copies(received: dt.date, sid: bytes, day: dt.date) -> pa.Table:
    """One signal (``sid``, client-side ``day``) as received on ``received``."""
    one = rows(1, seed=int.from_bytes(sid[:4], "big"), received_day=received)
    one = one.set_column(0, LAKE_SCHEMA.field("signal_id"), pa.array([sid], pa.binary(16)))
    return one.set_column(LAKE_SCHEMA.get_field_index("day"), "day", pa.array([day], pa.date32()))


def _ids_compacted(store: LakeStore) -> list[bytes]:
    table = store.table()
    files = [f for f in lake_files(table) if f.compacted]
    ids = store.reader(table).read(files, LAKE_SCHEMA).column("signal_id").to_pylist()
    return [bytes(i) for i in ids]


def test_copies_at_both_ends_of_the_ingest_window_end_once(folder_store: LakeStore) -> None:
    """A signal of day ``d`` is accepted from ``d - 1`` (received the day before: east of
    UTC) to ``d + WINDOW``. Its copies at both ends, compacted in either order, end once."""
    d = DAY - dt.timedelta(days=WINDOW)
    first, last = d - dt.timedelta(days=1), d + dt.timedelta(days=WINDOW)
    early, late = b"\x01" * 16, b"\x02" * 16
    folder_store.append(_copies(first, early, d))
    compact(folder_store, first + dt.timedelta(days=1))  # the earliest copy, compacted first
    store = LakeStore(folder_store.uri)
    store.append(_copies(last, early, d))
    store.append(_copies(last, late, d))
    compact(store, last + dt.timedelta(days=1))
    assert sorted(_ids_compacted(store)) == [early, late]  # the invariant, at every step
    # a late append (a collector whose clock is behind) into the first day, compacted again
    # after the last day was: the copy there is already compacted
    store.append(_copies(first, late, d))
    compact(store, last + dt.timedelta(days=1))
    assert sorted(_ids_compacted(store)) == [early, late]


def test_the_check_reads_only_days_that_may_hold_a_copy(folder_store: LakeStore) -> None:
    for back in range(1, 8):
        folder_store.append(rows(5, seed=back, received_day=DAY - dt.timedelta(days=back)))
    compact(folder_store, DAY)
    store = LakeStore(folder_store.uri)
    oldest = DAY - dt.timedelta(days=3)
    store.append(_copies(DAY, b"\x09" * 16, oldest))
    store.append(rows(5, seed=20, received_day=DAY))
    table = store.table()
    with bounded_connection() as con:
        store.reader(table).scan(
            con, "day_rows", [f for f in lake_files(table) if f.day == DAY], LAKE_SCHEMA
        )
        read = sorted({f.day for f in may_hold_copies(con, lake_files(table), DAY)})
    assert read == [oldest - dt.timedelta(days=k) for k in (1, 0, -1, -2)]  # D-4 .. D-1


@st.composite
def _histories(draw: st.DrawFn) -> list[tuple[dt.date, int, dt.date]]:
    """Copies of a few signals: (received day, signal, its day), every one accepted by ingest
    (``day - 1 <= received <= day + WINDOW``), spread over the whole window."""
    out = []
    for sid in range(draw(st.integers(1, 3))):
        day = DAY - dt.timedelta(days=draw(st.integers(0, WINDOW)))
        edges = st.one_of(st.sampled_from([-1, WINDOW]), st.integers(-1, WINDOW))
        for offset in [0, *draw(st.lists(edges, max_size=3))]:
            received = day + dt.timedelta(days=offset)
            if received <= DAY:
                out.append((received, sid, day))
    return draw(st.permutations(out))


# Each example writes and compacts a Delta table several times.
@pytest.mark.slow
@settings(max_examples=at_most(10), suppress_health_check=[HealthCheck.too_slow])
@given(_histories(), st.randoms(use_true_random=False))
def test_any_arrivals_within_the_window_end_once(
    history: list[tuple[dt.date, int, dt.date]], rnd: random.Random
) -> None:
    """Copies arrive in any order, and days are compacted whenever a later day is reached
    (and again after late appends): every id is compacted once, whatever the days."""
    with tempfile.TemporaryDirectory() as root:
        uri = f"{root}/lake"
        for received, sid, day in history:
            LakeStore(uri).append(_copies(received, bytes([sid + 1]) * 16, day))
            if rnd.random() < 0.5:
                compact(LakeStore(uri), received)  # the days before this arrival
                ids = _ids_compacted(LakeStore(uri)) if LakeStore(uri).days() else []
                assert len(ids) == len(set(ids))  # the invariant, at every step
        compact(LakeStore(uri), DAY + dt.timedelta(days=1))
        ids = _ids_compacted(LakeStore(uri))
        assert sorted(ids) == sorted({bytes([s + 1]) * 16 for _, s, _ in history})


def test_a_collector_keeps_appending_after_a_compaction(folder_store: LakeStore) -> None:
    """The collector's table was loaded before the job rewrote a day: its next append must
    commit (it failed, for every later flush, until the collector restarted)."""
    folder_store.append(rows(10))
    compact(LakeStore(folder_store.uri), NEXT)
    folder_store.append(rows(10, seed=2, received_day=NEXT))
    assert folder_store.count() == 20


def test_a_day_of_many_batches_is_ordered_in_its_files(folder_store: LakeStore) -> None:
    """``write_deltalake`` interleaves the batches it is handed (one stream per core): the
    compacted files are written in order by the job itself."""
    day = many_rows(4 * BATCH_ROWS, seed=5, received_day=DAY)
    folder_store.append(day)
    compact(folder_store, NEXT)
    got = _day(folder_store)
    ids = got.column("signal_id").to_pylist()
    assert len(ids) == day.num_rows and ids == sorted(ids)
