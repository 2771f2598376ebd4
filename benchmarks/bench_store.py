"""A store whose cost does not grow with its size (issue 25): ingest p99 and bytes per signal.

1. A file of ``ROWS`` synthetic signals (``analysis.synthesize``, 90 closed days, marked
   rewritten as the closed-day job leaves them), in the collector's current schema.
2. The collector (``bench_collector``'s server: its own process, the options of ``lmcp
   collector serve``) takes the same batch-100 load on an empty file and on that file, rounds
   interleaved; the p99 of the answers on each. Target: full <= 1.5x empty.
3. Bytes per signal of the file (copied into a fresh file, as a long-lived file settles) against
   the same rows as zstd Parquet. Target: <= 2x.

``LMCP_BENCH_STORE_ROWS`` changes the size (default 10M: minutes to synthesize).
"""

from __future__ import annotations

import datetime as dt
import multiprocessing as mp
import os
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import duckdb

from benchmarks._timing import percentile, table, verdict
from benchmarks.bench_collector import _load, _Server

ROWS = int(os.environ.get("LMCP_BENCH_STORE_ROWS", "10000000"))
BATCH = 100
CONNECTIONS = 48
DURATION_S = 8.0
ROUNDS = 2


def _full_file(path: Path, rows: int) -> float:
    """Synthesize ``rows`` signals into ``path``, closed days marked rewritten; seconds taken."""
    from analysis import synthesize

    started = time.monotonic()
    yesterday = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)
    synthesize(path, rows, end_day=yesterday)
    with duckdb.connect(str(path)) as con:
        con.execute(
            "INSERT INTO reordered_days SELECT DISTINCT received_day FROM signals "
            "EXCEPT SELECT day FROM reordered_days"
        )
        con.execute("CHECKPOINT")
    return time.monotonic() - started


def _bytes_per_signal(path: Path, tmp: Path) -> tuple[float, float, int]:
    compact, parquet = tmp / "compact.duckdb", tmp / "signals.parquet"
    with duckdb.connect(str(path)) as con:
        count = int(con.execute("SELECT count(*) FROM signals").fetchall()[0][0])
        con.execute(f"ATTACH '{compact}' AS compact")
        con.execute(f'COPY FROM DATABASE "{path.stem}" TO compact')  # the file's own name
        con.execute("DETACH compact")
        con.execute(
            f"COPY (SELECT * FROM signals) TO '{parquet}' (FORMAT parquet, COMPRESSION zstd)"
        )
    return compact.stat().st_size / count, parquet.stat().st_size / count, count


def run() -> None:
    with (
        tempfile.TemporaryDirectory(prefix="lmcp-bench-store-") as name,
        ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn")) as pool,
    ):
        tmp = Path(name)
        full = tmp / "full.duckdb"
        took = _full_file(full, ROWS)
        p99: dict[str, list[float]] = {"empty": [], "full": []}
        rates: dict[str, list[float]] = {"empty": [], "full": []}
        for round_no in range(ROUNDS):
            for kind in ("empty", "full") if round_no % 2 == 0 else ("full", "empty"):
                db = full if kind == "full" else tmp / f"empty-{round_no}.duckdb"
                with _Server("collector", db) as server:
                    result = pool.submit(
                        _load, server.port, BATCH, CONNECTIONS, DURATION_S
                    ).result()
                p99[kind].append(percentile(result["latencies"], 99) * 1000)
                rates[kind].append(result["requests"] * BATCH / result["seconds"])
        empty, loaded = statistics.median(p99["empty"]), statistics.median(p99["full"])
        print(f"p99 empty {p99['empty']} ms, full {p99['full']} ms", flush=True)
        per_signal, parquet, count = _bytes_per_signal(full, tmp)
    empty, loaded = statistics.median(p99["empty"]), statistics.median(p99["full"])
    rows = [
        [
            "ingest p99, empty file",
            f"{empty:.1f} ms",
            f"{statistics.median(rates['empty']):,.0f}/s",
            "",
        ],
        [
            f"ingest p99, {count:,} stored",
            f"{loaded:.1f} ms",
            f"{statistics.median(rates['full']):,.0f}/s",
            f"{loaded / empty:.2f}x (<= 1.5x: {verdict(loaded <= 1.5 * empty)})",
        ],
        ["bytes per signal, the file", f"{per_signal:.1f} B", "", ""],
        [
            "bytes per signal, zstd Parquet",
            f"{parquet:.1f} B",
            "",
            f"file {per_signal / parquet:.2f}x (<= 2x: {verdict(per_signal <= 2 * parquet)})",
        ],
    ]
    table(
        f"store growth: batch {BATCH}, {CONNECTIONS} connections, {ROUNDS} rounds x "
        f"{DURATION_S:.0f}s, medians (file synthesized in {took:.0f}s)",
        ["what", "figure", "signals/s", "target"],
        rows,
    )
