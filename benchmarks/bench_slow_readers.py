"""Slow readers against a real ``lmcp collector serve`` process, as issue 23 names the attack.

4,000 sockets from 16 loopback addresses (127.0.0.16-31), each with a 1 KiB receive buffer,
each sending one complete ``GET`` of the collector's largest static asset
(``/docs/assets/swagger-ui-bundle.js``, 1.5 MB) and never reading. While all 4,000 are held
open, 10 fresh ``/healthz`` are asked, one after another, each on a new connection from
127.0.0.1. Targets: 10 of 10 answered, p99 <= 50 ms (connect to last byte), and the
collector's RSS -- sampled every 20 ms from before the first attacker until the last probe --
below 2x its idle RSS. The collector runs with its deployed defaults (no timeout raised).

Also counted: the error lines the collector logs (a dropped reader is expected, not an
error). Printed beside the verdicts: how long opening the 4,000 took, how many the collector still
held when probed (it may drop them: that is the defence), how many of the attacker's sockets
it had closed, and the collector's CPU seconds during the attack. ``make bench
BENCH_ARGS=slow_readers`` runs this module alone; ``ROUNDS`` rounds, medians printed.
It needs 4,000 descriptors on each side: it raises its soft ``ulimit -n`` to the hard one.
"""

from __future__ import annotations

import os
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx

from benchmarks._serving import collector, cpu_s, fresh_healthz_ms, rss
from benchmarks._timing import percentile, table, verdict

READERS = 4000
ADDRESSES = 16
PROBES = 10
ASSET = "/docs/assets/swagger-ui-bundle.js"
P99_TARGET_MS = 50.0
RSS_RATIO = 2.0
ROUNDS = 3
MIB = 1024 * 1024


def _attacker(port: int, n: int) -> socket.socket | None:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    try:
        sock.bind((f"127.0.0.{16 + n % ADDRESSES}", 0))
        sock.connect(("127.0.0.1", port))
        sock.sendall(f"GET {ASSET} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    except OSError:
        sock.close()
        return None  # refused or reset at once: the server's caps at work
    return sock


def _closed_by_peer(sock: socket.socket) -> bool:
    """Whether the collector has closed or reset ``sock`` (a peek that never blocks)."""
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def _held_sockets(pid: int) -> int:
    count = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            count += os.readlink(fd).startswith("socket:")
        except OSError:
            pass
    return count


def _round(url: str, pid: int) -> dict[str, float]:
    port = int(url.rsplit(":", 1)[1])
    with httpx.Client(trust_env=False, timeout=10) as client:
        for _ in range(5):  # warm: the asset's route and the page cache
            client.get(url + ASSET)
    time.sleep(0.5)
    idle = statistics.median(rss(pid) for _ in range(5))
    peak = [idle]
    sampling = threading.Event()

    def sample() -> None:
        while not sampling.is_set():
            peak[0] = max(peak[0], rss(pid))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    cpu_before = cpu_s(pid)
    socks: list[socket.socket] = []
    latencies: list[float] = []
    try:
        started = time.monotonic()
        for n in range(READERS):
            sock = _attacker(port, n)
            if sock is not None:
                socks.append(sock)
        opened_s = time.monotonic() - started
        held = _held_sockets(pid)  # while every attacker socket is still open on our side
        for _ in range(PROBES):
            took = fresh_healthz_ms(port)
            latencies.append(5000.0 if took is None else took)
        closed = sum(_closed_by_peer(sock) for sock in socks)
    finally:
        sampling.set()
        sampler.join()
        for sock in socks:
            sock.close()
    cpu = cpu_s(pid) - cpu_before
    return {
        "answered": sum(ms < 5000.0 for ms in latencies),
        "p99_ms": percentile(latencies, 99),
        "median_ms": statistics.median(latencies),
        "idle_mib": idle / MIB,
        "peak_mib": peak[0] / MIB,
        "opened_s": opened_s,
        "connected": len(socks),
        "held": held,
        "closed": closed,
        "cpu_s": cpu,
    }


def run() -> None:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2 * READERS + 1024:  # the collector (a child) inherits it
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    rounds: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="lmcp-bench-") as tmp:
        for n in range(ROUNDS):  # a fresh collector each round: nothing left of the last
            log = Path(tmp) / f"r{n}.log"
            with collector(Path(tmp) / f"r{n}.duckdb", log=log) as (url, proc, _):
                figures = _round(url, proc.pid)
                time.sleep(2.0)  # the drops (and what they would log) are done
            text = log.read_text(errors="replace")
            figures["errors"] = text.count("ERROR") + text.count("Traceback")
            rounds.append(figures)
    figures = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
    worst_p99 = max(r["p99_ms"] for r in rounds)
    ratio = figures["peak_mib"] / figures["idle_mib"]
    table(
        f"slow readers (issue 23): {READERS:,} sockets from {ADDRESSES} addresses, "
        f"GET {ASSET}, never read; medians of {ROUNDS} rounds",
        ("what", "measured", "target", ""),
        [
            (
                f"fresh /healthz while all are held open: answered of {PROBES}",
                f"{figures['answered']:.0f} (worst round {min(r['answered'] for r in rounds):.0f})",
                f"{PROBES}",
                verdict(all(r["answered"] == PROBES for r in rounds)),
            ),
            (
                "  their p99, connect to last byte",
                f"{figures['p99_ms']:.1f} ms (worst round {worst_p99:.1f} ms)",
                f"<= {P99_TARGET_MS:.0f} ms",
                verdict(figures["p99_ms"] <= P99_TARGET_MS),
            ),
            (
                "  their median",
                f"{figures['median_ms']:.1f} ms",
                "",
                "",
            ),
            (
                "collector RSS, peak during the attack / idle",
                f"{figures['peak_mib']:.0f} / {figures['idle_mib']:.0f} MiB = {ratio:.2f}x",
                f"< {RSS_RATIO:.0f}x",
                verdict(ratio < RSS_RATIO),
            ),
            (
                "  attacker sockets connected; collector sockets held at the probes",
                f"{figures['connected']:,.0f}; {figures['held']:,.0f}",
                "",
                "",
            ),
            (
                "  attacker sockets seen closed by the collector after the probes (at least)",
                f"{figures['closed']:,.0f}",
                "",
                "",
            ),
            (
                "error lines the collector logged (a dropped reader is no error)",
                f"{sum(r['errors'] for r in rounds):.0f}",
                "0",
                verdict(all(r["errors"] == 0 for r in rounds)),
            ),
            (
                "  seconds to open the 4,000; collector CPU seconds meanwhile",
                f"{figures['opened_s']:.1f} s; {figures['cpu_s']:.1f} s",
                "",
                "",
            ),
        ],
    )
