"""A lake cluster on loopback: collector processes writing one Delta table, and a load that
retries on the other collectors -- shared by ``make demo-lake``, the lake's end-to-end test
and ``benchmarks/bench_lake.py``.

``Collectors`` starts ``python -m lmcp.collector_cli serve --lake URI`` processes (their own
process groups, stopped on exit, also on failure). ``send_load`` posts batches of signals
from sender threads, each request to a collector in turn; a request that fails (refused
connection, reset, 5xx) is sent again, the same body, to the next collector, until one
answers 200. It returns the ids acknowledged.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from contract.schema import (
    AttemptsBucket,
    ErrorCategory,
    ErrorClass,
    FrictionType,
    IntentCategory,
    Outcome,
    Platform,
    ToolName,
)

__all__ = ["Collectors", "LoadResult", "random_signals", "send_load"]

REPO = Path(__file__).resolve().parent.parent


def random_signals(rng: random.Random, count: int, day: str) -> list[dict[str, Any]]:
    """``count`` valid signals (wire JSON) with fresh ids, skewed like a real fleet."""
    tools = list(ToolName)[:12]
    out = []
    for _ in range(count):
        tool = rng.choice(tools)
        ring = [
            {"tool": rng.choice(tools).value, "outcome": rng.choice(list(Outcome)).value}
            for _ in range(rng.randint(1, 4))
        ]
        out.append(
            {
                "schema_version": 2,
                "signal_id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                "day": day,
                "friction_type": rng.choice(list(FrictionType)).value,
                "error_category": rng.choice(list(ErrorCategory)).value,
                "intent_category": rng.choice(list(IntentCategory)).value,
                "tool_attempted": tool.value,
                "attempts": rng.choice(list(AttemptsBucket)).value,
                "error_class": rng.choice(list(ErrorClass)[:6]).value,
                "args": [],
                "ring": ring,
                "app": {"installed": True, "running": rng.random() < 0.5, "permitted": None},
                "client": {
                    "version": f"1.{rng.randint(0, 4)}.{rng.randint(0, 3)}",
                    "platform": rng.choice(list(Platform)).value,
                },
            }
        )
    return out


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Collector:
    url: str
    proc: subprocess.Popen[bytes]
    #: How to start it again on its own file and port (``Collectors.restart``).
    cmd: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    log: Path | None = None

    @property
    def address(self) -> str:
        """``host:port``, as a load balancer's server line names it."""
        return self.url.removeprefix("http://")

    def kill(self) -> None:
        """SIGKILL: no flush, no shutdown."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)


class Collectors:
    """``count`` collector processes appending to ``lake_uri`` (``env``: the S3 settings);
    ``lake_uri=None``: single-file collectors, each with its own DuckDB file."""

    def __init__(
        self, count: int, lake_uri: str | None, env: Mapping[str, str], root: Path
    ) -> None:
        self.count = count
        self.lake_uri = lake_uri
        self.env = dict(env)
        self.root = root
        self.members: list[Collector] = []

    @property
    def urls(self) -> list[str]:
        return [c.url for c in self.members]

    def start(self, *, ready: bool = True) -> Collectors:
        """Start every member and wait until each is ready (``ready=False``: alive only,
        for a collector expected to stay unready)."""
        base = {k: v for k, v in os.environ.items() if not k.startswith("LMCP_COLLECTOR_")}
        base.update(self.env)
        base["PYTHONPATH"] = str(REPO)
        base["LMCP_COLLECTOR_RATE_LIMIT_ENABLED"] = "false"  # one loopback address sends all
        try:
            for i in range(self.count):
                port = _free_port()
                env = dict(base, LMCP_COLLECTOR_DB_PATH=str(self.root / f"collector{i}.duckdb"))
                cmd = [
                    sys.executable, "-m", "lmcp.collector_cli", "serve", "--host", "127.0.0.1",
                    "--port", str(port), "--log-level", "warning",
                ]  # fmt: skip
                if self.lake_uri is not None:
                    cmd += ["--lake", self.lake_uri]
                log = self.root / f"collector{i}.log"
                member = Collector(f"http://127.0.0.1:{port}", _spawn(cmd, env, log), cmd, env, log)
                self.members.append(member)
            for member in self.members:
                _wait_ready(member, "/readyz" if ready else "/healthz")
        except BaseException:
            self.stop()
            raise
        return self

    def restart(self, index: int) -> Collector:
        """Start member ``index`` again (after ``kill``) on its own file and port; wait until
        it is ready (what its file still held is shipped by its shipper)."""
        old = self.members[index]
        member = Collector(old.url, _spawn(old.cmd, old.env, old.log), old.cmd, old.env, old.log)
        self.members[index] = member
        _wait_ready(member)
        return member

    def stop(self) -> None:
        """SIGTERM each (graceful: flush, close), SIGKILL what is left after 20 s."""
        for member in self.members:
            if member.proc.poll() is None:
                os.killpg(member.proc.pid, signal.SIGTERM)
        for member in self.members:
            try:
                member.proc.wait(20)
            except subprocess.TimeoutExpired:
                member.kill()

    def __enter__(self) -> Collectors:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _spawn(cmd: list[str], env: dict[str, str], log: Path | None) -> subprocess.Popen[bytes]:
    with (log or Path(os.devnull)).open("ab") as out:
        return subprocess.Popen(
            cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def _wait_ready(member: Collector, path: str = "/readyz") -> None:
    """Until ``path`` answers 200, for as long as the process lives (no fixed deadline:
    a busy machine only makes it slower)."""
    with httpx.Client(trust_env=False, timeout=5.0) as client:
        while True:
            if member.proc.poll() is not None:
                raise RuntimeError("a collector exited at start; see its log")
            try:
                if client.get(member.url + path).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)


@dataclass
class LoadResult:
    acknowledged: set[str] = field(default_factory=set)
    sent: set[str] = field(default_factory=set)
    retries: int = 0
    #: Why each retried request failed: an HTTP status, or the transport error's class.
    failures: Counter[str] = field(default_factory=Counter)
    requests: int = 0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)


def send_load(
    urls: list[str],
    *,
    signals: int,
    batch: int,
    senders: int,
    day: str,
    seed: int = 7,
    on_progress: Callable[[int], None] | None = None,
) -> LoadResult:
    """Send ``signals`` in batches from ``senders`` threads; retry each on the next collector.

    ``on_progress(requests_answered)`` runs after each answered request (the end-to-end test
    kills a collector from it).
    """
    rng = random.Random(seed)
    bodies = []
    result = LoadResult()
    for start in range(0, signals, batch):
        items = random_signals(rng, min(batch, signals - start), day)
        result.sent.update(s["signal_id"] for s in items)
        bodies.append((json.dumps({"signals": items}).encode(), [s["signal_id"] for s in items]))
    lock = threading.Lock()
    queue = list(reversed(bodies))

    def sender(index: int) -> None:
        turn = index
        with httpx.Client(trust_env=False, timeout=30.0) as client:
            while True:
                with lock:
                    if not queue:
                        return
                    body, ids = queue.pop()
                for attempt in range(60):
                    url = urls[turn % len(urls)] + "/v1/signals"
                    turn += 1
                    began = time.perf_counter()
                    try:
                        answer = client.post(
                            url, content=body, headers={"content-type": "application/json"}
                        )
                        ok, why = answer.status_code == 200, str(answer.status_code)
                    except httpx.TransportError as exc:
                        ok, why = False, type(exc).__name__
                    if ok:
                        with lock:
                            result.acknowledged.update(ids)
                            result.requests += 1
                            result.latencies.append(time.perf_counter() - began)
                            done = result.requests
                        if on_progress is not None:
                            on_progress(done)
                        break
                    with lock:
                        result.retries += 1
                        result.failures[why] += 1
                    time.sleep(min(0.05 * (attempt + 1), 0.5))
                else:
                    raise RuntimeError("a batch was refused by every collector 60 times")

    began = time.perf_counter()
    threads = [threading.Thread(target=sender, args=(i,)) for i in range(senders)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    result.seconds = time.perf_counter() - began
    return result


def temp_root() -> Path:
    return Path(tempfile.mkdtemp(prefix="lmcp-lake-"))
