"""The dashboard's first view over HTTP at 1M signals: what a person waits for after sign-in.

A real collector (uvicorn on loopback, the shell's app with triage mounted) over a copy of the
1M-signal synthetic file whose closed days are released (the retention job does it in the
background; its cost is printed too). Timed, wall clock and the process's CPU (all its
threads: the server, DuckDB, the chart engine) during the request:

- the first ``GET /dashboard`` of the process, asked right after the server started (the
  collector draws the first view at start: the request waits for what is left of it);
- a view nobody asked for yet (another period each time): its figures computed and its charts
  drawn on the request, a median;
- a view asked again (cached), a median.

Target: the first view <= 1 s at 1M, and a view asked for the first time too.
``LMCP_BENCH_DASHBOARD_SIGNALS`` picks another size.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import httpx
import uvicorn
from pydantic import SecretStr

from benchmarks._timing import median, table, verdict
from benchmarks.bench_analysis import END_DAY, _synth_file
from collector.releases.store import release_closed_periods
from collector.settings import CollectorSettings
from contract.accountant import ReleasePlan
from contract.limits import LATE_DAYS
from lmcp.apps import collector_app, uvicorn_config

SIGNALS = int(os.environ.get("LMCP_BENCH_DASHBOARD_SIGNALS", "1000000"))
RUNS = 5
FIRST_VIEW_TARGET_S = 1.0
_TOKEN = "bench-dashboard-token"


@contextmanager
def _serving(settings: CollectorSettings) -> Iterator[str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = collector_app(settings)
    config = uvicorn.Config(app, **uvicorn_config(settings), log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("collector did not start")
            time.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def _get(http: httpx.Client, params: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of one ``GET /dashboard``."""
    cpu, start = time.process_time(), time.perf_counter()
    response = http.get("/dashboard", params=params)
    elapsed, used = time.perf_counter() - start, time.process_time() - cpu
    if response.status_code != 200 or 'id="q-trends"' not in response.text:
        raise RuntimeError(f"the dashboard answered {response.status_code} without its views")
    return elapsed, used


def _periods(last: dt.date, runs: int) -> list[dict[str, str]]:
    """``runs`` 4-week periods ending a week apart before ``last``: each one's figures and
    charts differ from the others' and from the first view's."""
    out = []
    for k in range(1, runs + 1):
        end = last - dt.timedelta(days=7 * k)
        out.append({"start": (end - dt.timedelta(days=27)).isoformat(), "end": end.isoformat()})
    return out


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def run() -> None:
    source = _synth_file(SIGNALS)
    with tempfile.TemporaryDirectory(prefix="bench-dashboard-") as tmp:
        db_path = Path(tmp) / "signals.duckdb"
        shutil.copy(source, db_path)
        start = time.perf_counter()
        with duckdb.connect(str(db_path)) as con:
            today = END_DAY + dt.timedelta(days=LATE_DAYS + 1)
            released = release_closed_periods(con, today, ReleasePlan(), retention_days=36500)
        release_s = time.perf_counter() - start
        settings = CollectorSettings(
            db_path=db_path,
            read_tokens=[SecretStr(_TOKEN)],
            retention_days=36500,
            rate_limit_enabled=False,
        )
        last = END_DAY - dt.timedelta(days=(END_DAY.weekday() + 1) % 7)  # the last Sunday
        with _serving(settings) as url, httpx.Client(base_url=url, trust_env=False) as http:
            http.post("/dashboard/login", data={"token": _TOKEN})
            first = _get(http)
            charts = http.get("/dashboard").text.count('class="chart"')
            fresh = [_get(http, period) for period in _periods(last, RUNS)]
            cached = [_get(http) for _ in range(RUNS)]
    fresh_s, fresh_cpu = median([f[0] for f in fresh]), median([f[1] for f in fresh])
    table(
        f"dashboard first view over HTTP at {SIGNALS:,} signals, {charts} charts (target <= 1 s)",
        ["step", "wall", "CPU", "verdict"],
        [
            [f"release {len(released)} (cube, day) pairs, once (background job)",
             f"{release_s:.1f} s", "", ""],
            ["first GET /dashboard of the process, right after start", _ms(first[0]),
             _ms(first[1]), verdict(first[0] <= FIRST_VIEW_TARGET_S)],
            ["a view asked for the first time: computed and drawn (median)", _ms(fresh_s),
             _ms(fresh_cpu), verdict(fresh_s <= FIRST_VIEW_TARGET_S)],
            ["a view asked again (median)", _ms(median([c[0] for c in cached])),
             _ms(median([c[1] for c in cached])), ""],
        ],
    )  # fmt: skip
