"""The collector under concurrent loopback load, side by side with a lean peer and a baseline.

For batches of 1, 100 and 500 signals, three servers take the same load in the same run:

- ``collector``: the real thing (validation, group-commit writer, a DuckDB file);
- ``peer``: a lean raw ASGI + msgspec + group-commit DuckDB server with the same rules, writing
  the collector's own table (``benchmarks/_peer.py``);
- ``discard``: the collector's app and endpoint, validating and then discarding (no storage).

Each server runs alone in its own process (uvicorn + uvloop + httptools, access log off); the
load comes from ANOTHER process: an asyncio client over raw keep-alive sockets (cheaper than
httpx, so the client is not the bottleneck), fresh signal ids in every request (each body built
with one ``bytes.join``: the load shares the two cores with the server), all on 127.0.0.1.
Rounds alternate the servers so drift hits them alike; figures are medians. Each server's
CPU time (all its threads, ``/proc``) is read over the measured window: signals per server
CPU-second is the figure that holds on a shared machine; per wall second is printed too.

Targets (issue 25): the collector >= 1.0x the peer at every batch size and >= 0.8x
validate+discard, per server CPU-second. Then what validating, shaping and inserting a signal
cost on their own, and the collector / discard ratio they leave at best (``floor``); what the
peer and the collector each do alone, and the collector / peer ratio that difference gives;
then the refusal of hostile bodies (``hostile``): the worst <= 5 ms of CPU.
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import os
import socket
import statistics
import tempfile
import time
import uuid
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks._floor import FLUSH_ROWS as FLOOR_ROWS
from benchmarks._floor import floor
from benchmarks._hostile import hostile
from benchmarks._timing import percentile, table, verdict
from collector.flush import WriteResult
from collector.rows import ValidSignal

BATCHES = (1, 100, 500)
CONNECTIONS = {1: 64, 100: 48, 500: 16}
TARGETS = ("collector", "peer", "discard")
DURATION_S = 2.5
WARMUP_S = 0.5
ROUNDS = 3


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# ---------------------------------------------------------------- servers (child processes)


def _bare_app() -> Any:
    from fastapi import FastAPI
    from starlette.responses import Response

    app = FastAPI()

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/v1/signals", status_code=204, response_class=Response, response_model=None)
    async def signals() -> Response:
        return Response(status_code=204)

    return app


class DiscardSink:
    """A ``collector.writer.SignalSink`` that accepts everything and stores nothing: the
    validate-and-discard baseline (a)."""

    async def submit(
        self, signals: Sequence[ValidSignal], body: bytes | None = None
    ) -> WriteResult:
        return WriteResult(len(signals), 0)


def _serve(kind: str, port: int, db_path: str) -> None:
    import logging

    import uvicorn

    logging.disable(logging.WARNING)
    from collector.settings import CollectorSettings
    from lmcp.apps import uvicorn_config
    from lmcp.collector_cli import tune_serving_process

    tune_serving_process()  # as `lmcp collector serve` does, for all three servers
    if kind == "bare":
        app = _bare_app()
    elif kind == "peer":
        from benchmarks._peer import peer_app

        app = peer_app(db_path)
    else:
        from collector.app import create_app

        settings = CollectorSettings(db_path=Path(db_path), rate_limit_enabled=False)
        app = create_app(settings, sink=DiscardSink() if kind == "discard" else None)
    # The options `lmcp collector serve` runs with (no access log, no proxy headers), for
    # all three servers.
    options = uvicorn_config(CollectorSettings(host="127.0.0.1", port=port))
    # options["http"]: the httptools protocol with its limits, as `serve` runs it.
    config = uvicorn.Config(app, log_level="error", loop="uvloop", **options)
    uvicorn.Server(config).run()


class _Server:
    def __init__(self, kind: str, db_path: Path) -> None:
        self.kind = kind
        self.port = _free_port()
        ctx = mp.get_context("spawn")
        self.proc = ctx.Process(target=_serve, args=(kind, self.port, str(db_path)), daemon=True)

    def __enter__(self) -> _Server:
        self.proc.start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and self.proc.is_alive():
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    if s.recv(64).startswith(b"HTTP/1.1 200"):
                        return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"{self.kind} server did not start")

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        self.proc.join(30)


# ---------------------------------------------------------------- load (a child process)


def _signal_template() -> tuple[bytes, bytes]:
    import datetime as dt

    from contract.schema import (
        AppState,
        ArgName,
        ArgShape,
        ArgType,
        AttemptsBucket,
        ClientInfo,
        ErrorCategory,
        ErrorClass,
        FrictionSignal,
        FrictionType,
        IntentCategory,
        Outcome,
        Platform,
        RingEntry,
        SizeBucket,
        ToolName,
    )

    marker = uuid.UUID("00000000-0000-4000-8000-000000000000")
    signal = FrictionSignal(
        schema_version=2,
        signal_id=marker,
        day=dt.datetime.now(dt.UTC).date(),  # inside the collector's day window
        friction_type=FrictionType.repeated_failure,
        error_category=ErrorCategory.not_found,
        intent_category=IntentCategory.read_email,
        tool_attempted=ToolName.read_email,
        attempts=AttemptsBucket.three_to_five,
        error_class=ErrorClass.not_found,
        # read_email declares message_id only: an undeclared key is the one ``other`` shape.
        args=(
            ArgShape(name=ArgName.message_id, type=ArgType.string, size=SizeBucket.up_to_256),
            ArgShape(name=ArgName.other, type=ArgType.object, size=SizeBucket.up_to_16),
        ),
        ring=tuple(
            RingEntry(tool=t, outcome=o)
            for t, o in [
                (ToolName.list_emails, Outcome.ok),
                (ToolName.read_email, Outcome.failed),
                (ToolName.list_emails, Outcome.empty),
                (ToolName.search_files, Outcome.ok),
                (ToolName.read_email, Outcome.failed),
            ]
        ),
        app=AppState(installed=True, running=True, permitted=True),
        client=ClientInfo(version="1.4.2", platform=Platform.macos),
    )
    pre, post = signal.model_dump_json().encode().split(str(marker).encode())
    return pre, post


class _Bodies:
    """Bodies of ``n`` signals, each with ids never sent before, built in one C call each.

    The load must cost the load process little: on this 2-core machine its CPU is taken from
    the server (a ``uuid4()`` per signal made the load process the costliest part of a
    100-signal request). Id ``i`` of request ``k`` of connection ``c`` is
    ``SSSSSSSS-iiii-4ccc-8000-kkkkkkkkkkkk`` (``S``: a random salt per connection object):
    a valid version-4 UUID, distinct across signals, requests and connections.
    """

    def __init__(self, pre: bytes, post: bytes, n: int, connection: int) -> None:
        salt = uuid.uuid4().hex[:8].encode()
        heads = [b"%s-%04x-4%03x-8000-" % (salt, i, connection % 4096) for i in range(n)]
        # The body is these parts joined by the request's counter (the ids' last group).
        self._parts = [
            b'{"signals":[' + pre + heads[0],
            *(post + b"," + pre + head for head in heads[1:]),
            post + b"]}",
        ]
        self._count = 0

    def next(self) -> bytes:
        self._count += 1
        return (b"%012x" % self._count).join(self._parts)


async def _connection(
    port: int,
    batch: int,
    stop_at: float,
    record_from: float,
    out: list[tuple[float, int]],
    number: int = 0,
) -> int:
    bodies = _Bodies(*_signal_template(), batch, number)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    errors = 0
    head = b"POST /v1/signals HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    try:
        while True:
            body = bodies.next()
            start = time.perf_counter()
            if start >= stop_at:
                break
            writer.write(head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
            response = await reader.readuntil(b"\r\n\r\n")
            status = int(response[9:12])
            length = 0
            for line in response.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            if length:
                await reader.readexactly(length)
            if start >= record_from:
                out.append((time.perf_counter() - start, status))
            if not 200 <= status < 300:
                errors += 1
    finally:
        writer.close()
    return errors


def _load(port: int, batch: int, connections: int, duration: float) -> dict[str, Any]:
    try:
        import uvloop

        uvloop.install()
    except ImportError:  # pragma: no cover - uvloop is a collector dependency
        pass

    async def main() -> dict[str, Any]:
        now = time.perf_counter()
        record_from, stop_at = now + WARMUP_S, now + WARMUP_S + duration
        samples: list[tuple[float, int]] = []
        await asyncio.gather(
            *(
                _connection(port, batch, stop_at, record_from, samples, c)
                for c in range(connections)
            )
        )
        ok = [lat for lat, status in samples if 200 <= status < 300]
        return {
            "requests": len(ok),
            "errors": len(samples) - len(ok),
            "latencies": ok,
            "seconds": duration,
        }

    return asyncio.run(main())


# ---------------------------------------------------------------- the run


@dataclass
class Figure:
    rps: list[float]
    p50: list[float]
    p99: list[float]
    #: Requests per server CPU-second, one per round.
    rpc: list[float] = field(default_factory=list)
    #: CPU seconds per request of the server's event-loop thread and of all its other threads
    #: (the writer's, DuckDB's), one per round.
    loop: list[float] = field(default_factory=list)
    others: list[float] = field(default_factory=list)
    errors: int = 0

    @property
    def req_s(self) -> float:
        return statistics.median(self.rps)

    @property
    def req_cpu_s(self) -> float:
        return statistics.median(self.rpc)


def cpu_seconds(pid: int, thread: int | None = None) -> float:
    """User + system CPU of process ``pid`` so far, all its threads (``/proc/<pid>/stat``), or
    of its thread ``thread`` only (``/proc/<pid>/task/<thread>/stat``; the main thread's id is
    ``pid``)."""
    path = f"/proc/{pid}/stat" if thread is None else f"/proc/{pid}/task/{thread}/stat"
    fields = Path(path).read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _measure(pool: ProcessPoolExecutor, kind: str, batch: int, db: Path, fig: Figure) -> None:
    with _Server(kind, db) as server:
        pid = server.proc.pid
        assert pid is not None
        pending = pool.submit(_load, server.port, batch, CONNECTIONS[batch], DURATION_S)
        time.sleep(WARMUP_S)
        cpu0, loop0 = cpu_seconds(pid), cpu_seconds(pid, pid)
        time.sleep(DURATION_S)
        cpu, loop = cpu_seconds(pid) - cpu0, cpu_seconds(pid, pid) - loop0
        result = pending.result()
    lat = result["latencies"]
    requests = max(result["requests"], 1)
    fig.rps.append(result["requests"] / result["seconds"])
    fig.rpc.append(result["requests"] / max(cpu, 1e-3))
    fig.loop.append(loop / requests)
    fig.others.append(max(cpu - loop, 0.0) / requests)  # /proc counts in clock ticks
    fig.p50.append(percentile(lat, 50) * 1000)
    fig.p99.append(percentile(lat, 99) * 1000)
    fig.errors += result["errors"]


def run() -> None:
    figures: dict[tuple[str, int], Figure] = {
        (k, b): Figure([], [], []) for k in TARGETS for b in BATCHES
    }
    started = time.monotonic()
    with (
        tempfile.TemporaryDirectory(prefix="lmcp-bench-") as tmp,
        ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn")) as pool,
    ):
        pool.submit(os.getpid).result()  # start the load process before timing anything
        for round_no in range(ROUNDS):
            for batch in BATCHES:
                order = TARGETS if round_no % 2 == 0 else tuple(reversed(TARGETS))
                for kind in order:
                    db = Path(tmp) / f"{kind}-{batch}-{round_no}.duckdb"
                    _measure(pool, kind, batch, db, figures[(kind, batch)])
    rows = []
    for batch in BATCHES:
        for kind in TARGETS:
            f = figures[(kind, batch)]
            rows.append(
                [
                    f"{kind} / batch {batch}",
                    f"{f.req_s * batch:,.0f}",
                    f"{f.req_cpu_s * batch:,.0f}",
                    f"{statistics.median(f.p50):.2f}",
                    f"{statistics.median(f.p99):.2f}",
                    f.errors,
                ]
            )
    table(
        f"collector: {ROUNDS} rounds x {DURATION_S}s per cell, medians "
        f"(connections: {CONNECTIONS}; one server process, load from another)",
        ["server / batch", "signals/s", "signals/CPU-s", "p50 ms", "p99 ms", "non-2xx"],
        rows,
    )
    checks = []
    for batch in BATCHES:
        c = figures[("collector", batch)]
        for base, target in (("peer", 1.0), ("discard", 0.8)):
            b = figures[(base, batch)]
            per_cpu, per_wall = c.req_cpu_s / b.req_cpu_s, c.req_s / b.req_s
            checks.append(
                [
                    f"batch {batch}: collector / {base}",
                    f"{per_cpu:.2f}x",
                    f"{per_wall:.2f}x",
                    f">= {target:.1f}x per CPU-s",
                    verdict(per_cpu >= target),
                ]
            )
    table(
        "collector targets (issue 25)",
        ["ratio", "per CPU-s", "per wall s", "target", "verdict"],
        checks,
    )
    table(
        "where each server's CPU goes: its event-loop thread and all its other threads "
        "(the writer's, DuckDB's), us per signal, medians",
        ["server / batch", "event loop", "other threads", "all"],
        [
            [
                f"{kind} / batch {batch}",
                f"{statistics.median(f.loop) / batch * 1e6:.2f}",
                f"{statistics.median(f.others) / batch * 1e6:.2f}",
                f"{1e6 / (f.req_cpu_s * batch):.2f}",
            ]
            for batch in BATCHES
            for kind in TARGETS
            for f in [figures[(kind, batch)]]
        ],
    )
    pre, post = _signal_template()
    bodies = [_Bodies(pre, post, 100, c).next() for c in range(FLOOR_ROWS // 100)]
    large = max(BATCHES)
    large_bodies = [_Bodies(pre, post, large, c).next() for c in range(FLOOR_ROWS // large)]
    # Not batch 1: there the collector gathers larger flushes than the peer, a difference of
    # design that the estimate (shared work, own work) leaves out.
    peers = {b: figures[("peer", b)].req_cpu_s * b for b in BATCHES if b >= 100}
    table(
        f"the floor of storing (batch 100) and the own work of each server (batch {large}): "
        "one thread of this process, medians",
        ["step", "CPU"],
        floor(
            figures[("discard", 100)].req_cpu_s * 100,
            bodies,
            peers,
            large_bodies,
            collector_per_cpu_s=figures[("collector", 100)].req_cpu_s * 100,
        ),
    )
    hostile()
    print(f"(collector benchmark took {time.monotonic() - started:.0f}s)")


if __name__ == "__main__":
    run()
