"""Triage at scale: every question at 1M and 10M synthetic signals, and the dashboard's first view.

Targets (this machine class: 2 shared cores): each question <= 0.5 s median at 10M; the data
of the dashboard's first view <= 1 s at 10M. Also reports the DuckDB file size per million
signals. The synthetic files are generated inside DuckDB once (about 10 s per million) and
cached in ``.bench-cache/`` (git-ignored ``*.duckdb``), keyed by the generator's hash.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import duckdb

from analysis import Filters, Period, Question, ask, synthesize
from analysis._charts import clear_chart_cache
from analysis._dashboard import View, overview_answers, render_svgs, tool_answers
from analysis._questions import DEFAULT_K, last_day, load_query
from benchmarks._timing import median, table, verdict
from contract.schema import ToolName

REPO = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("LMCP_BENCH_CACHE", REPO / ".bench-cache"))
SIZES = (1_000_000, 10_000_000)
END_DAY = dt.date(2026, 6, 30)
RUNS = 5
QUERY_TARGET_S = 0.5
FIRST_VIEW_TARGET_S = 1.0


def _synth_file(n: int) -> Path:
    text, _ = load_query("synth")
    digest = hashlib.sha256(text.encode()).hexdigest()[:10]
    path = CACHE / f"synth-{n}-{digest}.duckdb"
    if not path.exists():
        staging = path.with_name(f"{path.stem}.partial.duckdb")
        staging.unlink(missing_ok=True)
        start = time.perf_counter()
        synthesize(staging, n, end_day=END_DAY)
        staging.rename(path)
        print(f"generated {n:,} signals in {time.perf_counter() - start:.1f} s -> {path.name}")
    return path


def _median_s(fn: Callable[[], object], runs: int = RUNS) -> float:
    fn()  # warm: the first run reads the file into DuckDB's buffer pool
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return median(times)


def _render_uncached(view: View) -> None:
    clear_chart_cache()
    render_svgs(view)


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} cores"


def run() -> None:
    CACHE.mkdir(parents=True, exist_ok=True)
    print(f"before: {_load()}")
    query_rows: list[list[object]] = []
    size_rows: list[list[object]] = []
    first_view: list[list[object]] = []
    for n in SIZES:
        path = _synth_file(n)
        size_mb = path.stat().st_size / 1e6
        size_rows.append([f"{n:,}", f"{size_mb:,.0f} MB", f"{size_mb / (n / 1e6):.1f} MB"])
        con = duckdb.connect(str(path), read_only=True)
        con.execute("SET enable_progress_bar = false")
        try:
            last = last_day(con)
            assert last is not None
            # The asked days: 28 and 90 to the last signal (answered over their closed weeks).
            default = Period(last - dt.timedelta(days=27), last)
            full = Period(END_DAY - dt.timedelta(days=90), last)
            for question in Question:
                row: list[object] = [question.value, f"{n // 1_000_000}M"]
                for period in (default, full):
                    s = _median_s(partial(ask, con, question, k=DEFAULT_K, period=period))
                    row.append(f"{s * 1000:.0f} ms")
                    row.append(verdict(s <= QUERY_TARGET_S) if n == SIZES[-1] else "")
                query_rows.append(row)
            if n == SIZES[-1]:
                data_s = _median_s(partial(overview_answers, con, Filters()))
                data_full_s = _median_s(partial(overview_answers, con, Filters(start=full.start)))
                drill_s = _median_s(partial(tool_answers, con, ToolName.read_note, Filters()))
                view = overview_answers(con, Filters())
                svg_s = _median_s(partial(_render_uncached, view), runs=3)
                first_view.append(
                    [f"{n:,}", f"{data_s * 1000:.0f} ms", verdict(data_s <= FIRST_VIEW_TARGET_S),
                     f"{data_full_s * 1000:.0f} ms", f"{svg_s * 1000:.0f} ms",
                     f"{(data_s + svg_s) * 1000:.0f} ms", f"{drill_s * 1000:.0f} ms"]
                )  # fmt: skip
        finally:
            con.close()
    table(
        "triage queries, median of 5 warm runs (target <= 500 ms at 10M)",
        ["question", "signals", "28 days", "verdict", "90 days (all)", "verdict"],
        query_rows,
    )
    table(
        "dashboard first view at 10M (7 questions + versions; target <= 1 s for the data)",
        [
            "signals",
            "data (28 d)",
            "verdict",
            "data (90 d)",
            "7 charts to SVG",
            "page (28 d)",
            "drill-down data (read_note, 28 d)",
        ],
        first_view,
    )
    table("DuckDB file size", ["signals", "file", "per million"], size_rows)
    print(f"after: {_load()} (figures are inflated when other work shares the cores)")
