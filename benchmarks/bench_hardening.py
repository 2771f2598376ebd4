"""Issue 16's limits as figures, against real collector processes on loopback.

- worst body: the slowest answer to each hostile 1 MiB body, and to each hostile body of 4 MiB
  once gzip-decoded (target: 100 ms);
- health under attack: ``/healthz`` p99 while 20 worst bodies arrive at once, again and again
  (target: 50 ms);
- slowloris: 500 half-sent requests from one address, then a new client's request (target:
  served within 1 s);
- slow readers: ``bench_slow_readers.py`` (``make bench BENCH_ARGS=slow_readers``);
- restart: from spawning ``lmcp collector serve`` to ``/readyz`` 200 (target: 3 s);
- ingestion throughput (batch 1, 64 connections, the DuckDB writer) with the guarded httptools
  protocol ``serve`` uses, and with uvicorn's plain httptools: the limits must cost nothing.
"""

from __future__ import annotations

import gzip
import multiprocessing as mp
import statistics
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import httpx

from benchmarks._endpoints import half_sent_requests
from benchmarks._serving import collector, free_port
from benchmarks._timing import percentile, table, verdict

REPO = Path(__file__).resolve().parent.parent
MIB = 1024 * 1024
WORST_TARGET_MS = 100.0
HEALTH_P99_TARGET_MS = 50.0
SLOWLORIS_TARGET_S = 1.0
READY_TARGET_S = 3.0
ATTACKERS = 20
ATTACK_S = 3.0
THROUGHPUT_S = 2.5
ROUNDS = 2


def _items(item: bytes, size: int) -> bytes:
    count = (size - 20) // (len(item) + 1)
    return b'{"signals":[' + b",".join([item] * count) + b"]}"


def _hostile(size: int) -> dict[str, bytes]:
    """Bodies that each cost the old collector seconds to minutes (``size`` bytes each)."""
    return {
        "empty objects": _items(b"{}", size),
        "numbers": _items(b"1", size),
        "empty arrays": _items(b"[]", size),
        "nesting": b"[" * size,
        "whitespace": b'{"signals":[' + b" " * (size - 20) + b"]}",
        "whitespace, 21 unknown keys": b'{"signals":[{'
        + b",".join(b'"k%d":0' % i for i in range(21))
        + b" " * (size - 400)
        + b"}]}",
        "one long string": b'{"signals":["' + b"a" * (size - 20) + b'"]}',
        "unknown keys": b'{"signals":[{' + b",".join([b'"k":0'] * ((size - 20) // 6)) + b"}]}",
        "20k objects (in bounds)": _items(b"{}", 44_000),
        "20k args (in bounds)": b'{"signals":[{"args":[' + b",".join([b"{}"] * 20_000) + b"]}]}",
        "duplicate keys": b'{"signals":[{'
        + b",".join([b'"k":0'] * 20 + [b'"day":0'] * ((size - 200) // 8))
        + b"}]}",
    }


def _post(client: httpx.Client, url: str, body: bytes, gz: bool) -> tuple[float, int]:
    headers = {"Content-Type": "application/json"}
    if gz:
        headers["Content-Encoding"] = "gzip"
        body = gzip.compress(body, 6)
    started = time.perf_counter()
    status = client.post(url + "/v1/signals", content=body, headers=headers).status_code
    return (time.perf_counter() - started) * 1000, status


def _worst_bodies(url: str) -> list[tuple[str, str, float, int]]:
    rows = []
    with httpx.Client(trust_env=False, timeout=120) as client:
        for gz, size in ((False, MIB - 64), (True, 4 * MIB - 64)):
            for name, body in _hostile(size).items():
                times = [_post(client, url, body, gz) for _ in range(3)]
                rows.append(
                    ("gzip 4 MiB" if gz else "1 MiB", name, min(t for t, _ in times), times[0][1])
                )
    return rows


def _attack(url: str, seconds: float) -> int:
    """``ATTACKERS`` threads posting the worst bodies for ``seconds`` (in a child process)."""
    bodies = list(_hostile(MIB - 64).values())
    stop = time.monotonic() + seconds
    sent = [0]

    def attacker(i: int) -> None:
        with httpx.Client(trust_env=False, timeout=120) as client:
            n = i
            while time.monotonic() < stop:
                _post(client, url, bodies[n % len(bodies)], False)
                sent[0] += 1
                n += 1

    threads = [threading.Thread(target=attacker, args=(i,)) for i in range(ATTACKERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sent[0]


def _health_under_attack(pool: ProcessPoolExecutor, url: str) -> tuple[float, int, int]:
    attack = pool.submit(_attack, url, ATTACK_S + 1.0)
    time.sleep(1.0)  # the attack is under way (the child imported and connected)
    latencies: list[float] = []
    stop = time.monotonic() + ATTACK_S
    with httpx.Client(trust_env=False, timeout=30) as client:
        while time.monotonic() < stop:
            started = time.perf_counter()
            client.get(url + "/healthz")
            latencies.append((time.perf_counter() - started) * 1000)
            time.sleep(0.01)
    return percentile(latencies, 99), len(latencies), attack.result()


def _slowloris(url: str) -> float:
    port = int(url.rsplit(":", 1)[1])
    socks = half_sent_requests(port, 500)
    try:
        started = time.perf_counter()
        with httpx.Client(trust_env=False, timeout=10) as client:
            client.get(url + "/healthz")
        return time.perf_counter() - started
    finally:
        for sock in socks:
            sock.close()


def _serve_plain_or_guarded(protocol: str, port: int, db: str) -> None:
    import logging

    import uvicorn

    logging.disable(logging.WARNING)
    from collector.settings import CollectorSettings
    from lmcp.apps import collector_app, uvicorn_config
    from lmcp.collector_cli import tune_serving_process

    tune_serving_process()
    settings = CollectorSettings(
        db_path=Path(db), host="127.0.0.1", port=port, rate_limit_enabled=False
    )
    options = uvicorn_config(settings)
    if protocol == "plain":
        options["http"] = "httptools"
    config = uvicorn.Config(collector_app(settings), log_level="error", loop="uvloop", **options)
    uvicorn.Server(config).run()


def _throughput(pool: ProcessPoolExecutor, protocol: str, db: Path) -> float:
    from benchmarks.bench_collector import _load

    port = free_port()
    proc = mp.get_context("spawn").Process(
        target=_serve_plain_or_guarded, args=(protocol, port, str(db)), daemon=True
    )
    proc.start()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.05)
        result = pool.submit(_load, port, 1, 64, THROUGHPUT_S).result()
        return float(result["requests"]) / float(result["seconds"])
    finally:
        proc.terminate()
        proc.join(30)


def run() -> None:
    with (
        tempfile.TemporaryDirectory(prefix="lmcp-bench-") as tmp,
        ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn")) as pool,
    ):
        with collector(Path(tmp) / "a.duckdb") as (url, _, ready_s):
            worst = _worst_bodies(url)
            health_p99, probes, bodies = _health_under_attack(pool, url)
        with collector(Path(tmp) / "b.duckdb") as (url, _, _):
            slowloris_s = _slowloris(url)
        with collector(Path(tmp) / "a.duckdb") as (url, _, restart_s):
            pass
        rows = [(f"{kind}: {name}", f"{ms:.1f} ms", status) for kind, name, ms, status in worst]
        table("worst bodies (fastest of 3 each)", ("body", "answered in", "status"), rows)
        worst_ms = max(ms for _, _, ms, _ in worst)
        rates: dict[str, list[float]] = {"guarded": [], "plain": []}
        for n in range(ROUNDS):
            # Interleaved, each order in turn: the shared machine drifts.
            for protocol in ("guarded", "plain") if n % 2 == 0 else ("plain", "guarded"):
                db = Path(tmp) / f"t-{protocol}-{n}.duckdb"
                rates[protocol].append(_throughput(pool, protocol, db))
    guarded, plain = statistics.median(rates["guarded"]), statistics.median(rates["plain"])
    table(
        "hardening (issue 16)",
        ("what", "measured", "target", ""),
        [
            (
                "worst body",
                f"{worst_ms:.1f} ms",
                f"<= {WORST_TARGET_MS:.0f} ms",
                verdict(worst_ms <= WORST_TARGET_MS),
            ),
            (
                f"/healthz p99, {ATTACKERS} worst bodies at once "
                f"({probes} probes, {bodies} bodies)",
                f"{health_p99:.1f} ms",
                f"<= {HEALTH_P99_TARGET_MS:.0f} ms",
                verdict(health_p99 <= HEALTH_P99_TARGET_MS),
            ),
            (
                "new client beside 500 slowloris sockets",
                f"{slowloris_s * 1000:.0f} ms",
                f"<= {SLOWLORIS_TARGET_S * 1000:.0f} ms",
                verdict(slowloris_s <= SLOWLORIS_TARGET_S),
            ),
            (
                "start to /readyz (fresh)",
                f"{ready_s:.2f} s",
                f"<= {READY_TARGET_S:.0f} s",
                verdict(ready_s <= READY_TARGET_S),
            ),
            (
                "restart to /readyz",
                f"{restart_s:.2f} s",
                f"<= {READY_TARGET_S:.0f} s",
                verdict(restart_s <= READY_TARGET_S),
            ),
            (
                "ingestion req/s, batch 1, guarded protocol",
                f"{guarded:,.0f}",
                f">= 0.95 x plain ({plain:,.0f})",
                verdict(guarded >= 0.95 * plain),
            ),
        ],  # fmt: skip
    )
