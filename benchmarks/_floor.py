"""The floor of storing, for ``bench_collector``: what one stored signal costs beyond validating
it, step by step, in this process (no HTTP, no second thread), and the best collector /
validate+discard ratio that leaves.

A server that stores a signal pays at least its validation (what the discard server pays) plus
shaping its row, DuckDB's INSERT of it and the checkpoint that later moves it from the WAL into
the file (every stored row meets one: a server under load pays them as it goes, a one-flush
measure would leave them out); whatever else it spends (HTTP, the writer thread) only lowers the
ratio further. So ``discard / (discard + rows + insert + checkpoint)`` bounds the ratio from
above, whatever the design, as long as the rows go through DuckDB's INSERT. The collector's
measured cost beyond that sum is what running beside the event loop adds (``beyond``).

The same reasoning gives collector / peer at batch 100 and 500: the peer
(``benchmarks/_peer.py``) decodes with the collector's structs, shapes its rows with the
collector's ``signal_rows`` and runs the same INSERT behind the same HTTP server, so the two
differ by what each does alone -- the peer checks each signal's day and de-duplicates in a
Python loop, the collector checks each distinct day and claims a flush's ids at C speed (and
each checks every signal's argument names its own way). ``own`` measures both; ``peer /
(peer - peer's own + collector's own)`` is the ratio that difference alone gives (the
collector's per-request and per-flush machinery, ~0.01 us a signal at batch 500, is left out).
A run's measured ratio scatters around it with the machine's load.
"""

from __future__ import annotations

import datetime as dt
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["floor", "own"]

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
    them (one flush per call, into a fresh file: the INSERT and its commit), and the
    ``CHECKPOINT`` of all the rows inserted (their compression into the file)."""
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
        started = time.thread_time()
        con.execute("CHECKPOINT")
        out["checkpoint"] = (time.thread_time() - started) / (REPEAT * count) * 1e6
        con.close()
    return out


def own(bodies: list[bytes]) -> dict[str, float]:
    """Microseconds of CPU per signal of what each of the two servers does its own way with
    the batches of ``bodies``, taken as one flush: ``peer`` (each signal's day and argument
    names, the de-duplicating loop) and ``collector`` (``check_days``, ``check_args``,
    ``OpenIds.claim`` of the flush's ids)."""
    from benchmarks._peer import args_declared, fresh_signals, in_window
    from collector.ingest import check_args, check_days, validate_batch
    from collector.open_ids import OpenIds
    from contract.catalogue import load_catalogue

    batches = [validate_batch(body).signals for body in bodies]
    ids = [s.signal_id.int for batch in batches for s in batch]
    count = len(ids)
    today = dt.datetime.now(dt.UTC).date()
    carried = load_catalogue().signal_arg_names()

    def peer() -> None:
        for batch in batches:
            in_window(batch, today)
            args_declared(batch, carried)
        fresh_signals(batches, set())

    def collector() -> None:
        for batch in batches:
            check_days(batch, today, 90)
            check_args(batch, today, carried)
        OpenIds().claim(today, ids)

    return {"peer": _cpu_us(peer, count), "collector": _cpu_us(collector, count)}


def floor(
    discard_per_cpu_s: float,
    bodies: list[bytes],
    peer_per_cpu_s: dict[int, float],
    large_bodies: list[bytes],
    collector_per_cpu_s: float | None = None,
) -> list[list[str]]:
    """Rows for the targets table: each step's CPU per signal and the collector / discard bound
    they set against the measured validate+discard server (``discard_per_cpu_s``
    signals/CPU-s); the measured collector at the same batch size (``collector_per_cpu_s``)
    against their sum; each server's own work (``own``, on ``large_bodies``: bodies of the
    largest batch) and the collector / peer ratio it gives against the measured peer
    (``peer_per_cpu_s``: signals/CPU-s by batch size)."""
    step = steps(bodies)
    discard_us = 1e6 / discard_per_cpu_s
    stored_us = discard_us + step["rows"] + step["insert"] + step["checkpoint"]
    bound = discard_us / stored_us
    alone = own(large_bodies)
    rows = [
        ["validate (this process)", f"{step['validate']:.2f} us/signal"],
        ["shape the rows (signal_rows)", f"{step['rows']:.2f} us/signal"],
        [f"DuckDB INSERT + commit, {FLUSH_ROWS:,}-row flushes", f"{step['insert']:.2f} us/signal"],
        ["DuckDB CHECKPOINT of those rows", f"{step['checkpoint']:.2f} us/signal"],
        ["discard server (measured above)", f"{discard_us:.2f} us/signal"],
        ["discard + shape + insert + checkpoint", f"{stored_us:.2f} us/signal"],
        ["best collector / discard this leaves", f"{bound:.2f}x"],
        *(
            [
                [
                    "collector (measured above), beyond that sum",
                    f"{1e6 / collector_per_cpu_s:.2f} us/signal, "
                    f"{1e6 / collector_per_cpu_s - stored_us:+.2f}",
                ]
            ]
            if collector_per_cpu_s
            else []
        ),
        ["the peer's own work (day, arg names, de-duplication)", f"{alone['peer']:.2f} us/signal"],
        [
            "the collector's own work (day window, arg names, claim)",
            f"{alone['collector']:.2f} us/signal",
        ],
    ]
    for batch, per_cpu_s in sorted(peer_per_cpu_s.items()):
        peer_us = 1e6 / per_cpu_s
        ratio = peer_us / (peer_us - alone["peer"] + alone["collector"])
        rows.append([f"collector / peer their own work gives, batch {batch}", f"{ratio:.2f}x"])
    return rows
