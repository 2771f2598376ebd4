"""The floor of storing, for ``bench_collector``: what one stored signal costs beyond validating
it, step by step, in this process (no HTTP, no second thread), and the best collector /
validate+discard ratio that leaves.

A server that stores a signal pays at least its validation (what the discard server pays) plus
shaping its row and DuckDB's INSERT of it; whatever else it spends (HTTP, the writer thread)
only lowers the ratio further. So ``discard / (discard + rows + insert)`` bounds the ratio from
above, whatever the design, as long as the rows go through DuckDB's INSERT.
"""

from __future__ import annotations

import datetime as dt
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["floor"]

#: Rows per flush: the size of the collector's flushes at batch 100 and 500 under load.
FLUSH_ROWS = 4000
REPEAT = 7


def _cpu_us(fn: Callable[[], object], per: int) -> float:
    """Median thread CPU of ``fn`` over ``REPEAT`` calls, in microseconds per ``per`` items."""
    times = []
    for _ in range(REPEAT):
        started = time.thread_time()
        fn()
        times.append(time.thread_time() - started)
    return statistics.median(times) / per * 1e6


def steps(bodies: list[bytes]) -> dict[str, float]:
    """Microseconds of CPU per signal: validating ``bodies``, shaping their rows, inserting
    them (one flush per call, into a fresh file: the INSERT and its commit)."""
    import duckdb

    from collector.db import SQL_DIR, migrate
    from collector.ingest import validate_batch
    from collector.rows import signal_rows
    from collector.store import IncomingTable
    from service.sql import load_sql

    signals = [s for body in bodies for s in validate_batch(body).signals]
    count = len(signals)
    out = {
        "validate": _cpu_us(lambda: [validate_batch(body) for body in bodies], count),
        "rows": _cpu_us(lambda: signal_rows(signals), count),
    }
    tables = [signal_rows(signals)[0] for _ in range(REPEAT)]
    today = dt.datetime.now(dt.UTC).date()
    with tempfile.TemporaryDirectory(prefix="lmcp-bench-floor-") as tmp:
        con = duckdb.connect(str(Path(tmp) / "floor.duckdb"), config={"threads": 1})
        migrate(con)
        incoming = IncomingTable()
        con.register(IncomingTable.NAME, incoming)
        insert = load_sql(SQL_DIR, "insert_rows")

        def one() -> None:
            with incoming.holding(tables.pop()):
                con.execute(insert, [today])

        out["insert"] = _cpu_us(one, count)
        con.close()
    return out


def floor(discard_per_cpu_s: float, bodies: list[bytes]) -> list[list[str]]:
    """Rows for the targets table: each step's CPU per signal, and the ratio bound they set
    against the measured validate+discard server (``discard_per_cpu_s`` signals/CPU-s)."""
    step = steps(bodies)
    discard_us = 1e6 / discard_per_cpu_s
    bound = discard_us / (discard_us + step["rows"] + step["insert"])
    return [
        ["validate (this process)", f"{step['validate']:.2f} us/signal"],
        ["shape the rows (signal_rows)", f"{step['rows']:.2f} us/signal"],
        [f"DuckDB INSERT + commit, {FLUSH_ROWS:,}-row flushes", f"{step['insert']:.2f} us/signal"],
        ["discard server (measured above)", f"{discard_us:.2f} us/signal"],
        ["best collector / discard this leaves", f"{bound:.2f}x"],
    ]
