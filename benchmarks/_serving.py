"""A real ``lmcp collector serve`` child process for the benchmarks, and what they read of it
(RSS, CPU seconds, one fresh ``/healthz``)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

__all__ = ["collector", "cpu_s", "free_port", "fresh_healthz_ms", "rss"]

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def collector(
    db: Path, *, log: Path | None = None, **env: str
) -> Iterator[tuple[str, subprocess.Popen[bytes], float]]:
    """``lmcp collector serve`` in a child; yields its URL, process and seconds to ready.

    ``log``: where its output goes (warnings and errors); else nothing is kept but errors."""
    port = free_port()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("LMCP_COLLECTOR_")}
    environ.update(
        LMCP_COLLECTOR_DB_PATH=str(db),
        LMCP_COLLECTOR_RATE_LIMIT_ENABLED="false",
        PYTHONPATH=str(REPO),
        **env,
    )
    level = "warning" if log is not None else "error"
    cmd = [sys.executable, "-m", "lmcp.collector_cli", "serve", "--port", str(port),
           "--log-level", level]  # fmt: skip
    started = time.monotonic()
    out = log.open("ab") if log is not None else None
    proc = subprocess.Popen(cmd, cwd=REPO, env=environ, stdout=out, stderr=out)
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(trust_env=False, timeout=1) as client:
            while True:
                try:
                    if client.get(url + "/readyz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if proc.poll() is not None or time.monotonic() - started > 60:
                    raise RuntimeError("collector did not start")
                time.sleep(0.01)
        yield url, proc, time.monotonic() - started
    finally:
        proc.terminate()
        proc.wait(30)
        if out is not None:
            out.close()


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def fresh_healthz_ms(port: int) -> float | None:
    """One ``/healthz`` on a new connection, connect to last byte (None: no answer in 5 s)."""
    started = time.perf_counter()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
    except OSError:
        return None
    return (time.perf_counter() - started) * 1000 if answer.startswith(b"HTTP/1.1 200") else None
