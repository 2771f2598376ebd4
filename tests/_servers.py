"""Every server or child process a test starts: started here, waited for by readiness, stopped.

Two rules hold for everything below, on a quiet machine and on a busy one alike:

- **Readiness, not deadlines.** A start is waited for by its own signal (``/readyz`` answering
  200, uvicorn's ``started`` flag, a store accepting a write) for as long as the process is
  alive; a process that exits fails the wait at once. ``HANG_S`` only catches a hang: it is far
  above any start on a loaded machine, so it never fails a slow one.
- **A guaranteed stop.** Each helper is a context manager whose ``finally`` stops what it
  started, when the test fails too; a child runs in its own process group, and the whole group
  is stopped (TERM, then KILL after ``GRACE_S``), so no grandchild outlives it.
  ``tests/_leaks.py`` (an autouse fixture) fails a test that leaves any child running anyway.

The helpers:

- ``running_collector(settings)`` / ``running_skills(settings)``: the collector as the shell
  composes it (``lmcp.apps.collector_app``) or the Cloud Skills service, under uvicorn on
  127.0.0.1 in a thread of this process; yields the base URL; graceful shutdown.
- ``collector_process(settings)``: ``python -m lmcp.collector_cli serve`` in a child process
  (settings as ``LMCP_COLLECTOR_*`` variables); yields a ``CollectorProcess`` (``.kill()`` is
  SIGKILL, for crash tests).
- ``child_process(cmd)``: any other child (a worker, the demo).
- ``holding_duckdb(path)``: another process holding a DuckDB file open, as a running
  collector holds its database.
- ``running_seaweed()``: SeaweedFS (S3 gateway) on loopback.
- ``serving_app(app, name)``: any other ASGI app the same way.
- ``serving_stub(handler)``: a stdlib HTTP stub (a fake a test controls) in a thread.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from pydantic import BaseModel, SecretStr

from cloudskills.app import create_app as create_skills_app
from cloudskills.settings import SkillsSettings
from collector.settings import CollectorSettings
from lakedev.seaweed import LoopbackSeaweed
from lmcp.apps import collector_app, collector_limits, uvicorn_config

__all__ = [
    "GRACE_S",
    "HANG_S",
    "REPO",
    "Child",
    "CollectorProcess",
    "child_process",
    "children_of",
    "collector_process",
    "free_port",
    "refused_port",
    "holding_duckdb",
    "running_collector",
    "running_seaweed",
    "running_skills",
    "serving_app",
    "serving_stub",
    "settings_env",
    "stop_group",
    "wait_ready",
    "wait_until",
]

REPO = Path(__file__).resolve().parent.parent
#: Only a hang takes this long: a collector child starts in about a second on a quiet machine
#: and within a minute at a load average of 20 on two cores.
HANG_S = 240.0
#: How long a graceful stop (SIGTERM: flush, close the database) may take before SIGKILL.
GRACE_S = 30.0


def free_port() -> int:
    """A loopback port free now (another process may take it before it is bound: prefer
    binding port 0 where the caller can)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def refused_port() -> Iterator[int]:
    """A loopback port that refuses connections for the whole block: bound, never listening,
    so no other process (another engineer's tests on a shared machine) can serve on it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


def wait_until(
    ready: Callable[[], bool],
    *,
    what: str,
    alive: Callable[[], bool] = lambda: True,
    hang_s: float = HANG_S,
    max_interval: float = 0.5,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Poll ``ready`` until it is true; return how many polls it took.

    Raises ``RuntimeError`` as soon as ``alive()`` is false (the process died: waiting longer
    cannot help) and ``TimeoutError`` only after ``hang_s``. The interval grows from 10 ms to
    ``max_interval``, so a slow start costs few polls and a fast one is seen at once."""
    deadline = clock() + hang_s
    interval = min(0.01, max_interval)
    polls = 0
    while True:
        polls += 1
        if ready():
            return polls
        if not alive():
            raise RuntimeError(f"{what} exited before it was ready")
        if clock() >= deadline:
            raise TimeoutError(f"{what} hung: not ready after {hang_s:.0f} s")
        sleep(interval)
        interval = min(interval * 1.5, max_interval)


def wait_ready(
    base_url: str, *, proc: subprocess.Popen[Any] | None = None, hang_s: float = HANG_S
) -> None:
    """Until ``base_url/readyz`` answers 200, while ``proc`` (if given) is running."""
    with httpx.Client(trust_env=False, timeout=5.0) as client:

        def ready() -> bool:
            try:
                return client.get(base_url + "/readyz").status_code == 200
            except httpx.TransportError:
                return False

        wait_until(
            ready,
            what=f"the server at {base_url}",
            alive=lambda: proc is None or proc.poll() is None,
            hang_s=hang_s,
        )


# -- servers in a thread of this process ----------------------------------------------------


@contextmanager
def running_collector(
    settings: CollectorSettings, *, port: int = 0, **app_kwargs: Any
) -> Iterator[str]:
    """A real uvicorn server for ``collector_app(settings, **app_kwargs)`` on ``port`` (0: one
    the OS picks); yields its URL."""
    app = collector_app(settings, **app_kwargs)
    limits = {"limits": collector_limits(settings), "keep_alive_s": settings.keep_alive_timeout_s}
    with serving_app(app, "collector", port=port, **limits) as url:
        yield url


@contextmanager
def running_skills(settings: SkillsSettings, **app_kwargs: Any) -> Iterator[str]:
    """A real uvicorn server for the skills service ``create_app(settings, **app_kwargs)``;
    yields its URL."""
    with serving_app(create_skills_app(settings, **app_kwargs), "skills") as url:
        yield url


@dataclass(frozen=True, slots=True)
class _Loopback:
    host: str
    port: int


@contextmanager
def serving_app(app: Any, name: str, *, port: int = 0, **limits: Any) -> Iterator[str]:
    """Any ASGI ``app`` under uvicorn on a loopback port (0: one the OS picks), in a thread;
    yields its URL; graceful shutdown.

    ``limits``: ``uvicorn_config``'s connection limits (the service's own settings)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    port = int(sock.getsockname()[1])
    options = uvicorn_config(_Loopback("127.0.0.1", port), log_level="warning", **limits)
    server = uvicorn.Server(uvicorn.Config(app, **options))
    errors: list[BaseException] = []

    def serve() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    thread = threading.Thread(target=serve, name=f"{name}-under-test", daemon=True)
    thread.start()
    try:
        try:
            wait_until(lambda: bool(server.started), what=name, alive=thread.is_alive)
        except RuntimeError as exc:
            raise RuntimeError(f"{name} failed to start") from (errors[0] if errors else exc)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=GRACE_S)
        if thread.is_alive():  # a request that never ends: stop waiting for it
            server.force_exit = True
            thread.join(timeout=GRACE_S)
        sock.close()
        if errors:
            raise RuntimeError(f"{name} crashed") from errors[0]


@contextmanager
def serving_stub(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A stdlib HTTP server for ``handler`` (a fake the test controls) on a loopback port, in a
    thread; yields its URL and shuts it down afterwards."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="stub-under-test", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=GRACE_S)


# -- child processes -------------------------------------------------------------------------


def stop_group(popen: subprocess.Popen[Any], grace_s: float = GRACE_S) -> int | None:
    """Stop ``popen``'s process group: SIGTERM, then SIGKILL after ``grace_s``; the exit code.

    The child leads its own group (``child_process`` starts it so), so whatever it started
    goes with it, even when the child itself is gone."""
    for signum, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, GRACE_S)):
        try:
            os.killpg(popen.pid, signum)
        except ProcessLookupError:  # the whole group is gone
            break
        try:
            popen.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            continue
        # The leader is gone; any member it left still gets the signal once more.
        try:
            os.killpg(popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        break
    return popen.poll()


@dataclass
class Child:
    """A child process started by ``child_process``: its own group, stopped with it."""

    popen: subprocess.Popen[Any]
    log_path: Path | None = None

    @property
    def pid(self) -> int:
        return self.popen.pid

    def kill(self) -> None:
        """SIGKILL to the group: no shutdown, no flush, no checkpoint."""
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.popen.wait(timeout=GRACE_S)

    def stop(self, grace_s: float = GRACE_S) -> int | None:
        return stop_group(self.popen, grace_s)

    def log(self) -> str:
        assert self.log_path is not None, "started without a log file"
        return self.log_path.read_text(encoding="utf-8", errors="replace")


def _as_from_a_terminal(then: Callable[[], object] | None) -> Callable[[], None]:
    """In the child, before it runs: SIGINT back to its default. A suite started as a
    background job (``make test &``, a CI runner) inherits SIGINT ignored, and Python then
    never raises KeyboardInterrupt: the child would not stop on Ctrl-C as a user's does."""

    def setup() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if then is not None:
            then()

    return setup


@contextmanager
def child_process(
    cmd: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path = REPO,
    log_path: Path | None = None,
    grace_s: float = GRACE_S,
    **popen_kwargs: Any,
) -> Iterator[Child]:
    """``cmd`` in a child process leading its own process group; stopped (the whole group)
    when the block ends, however it ends. ``log_path``: stdout and stderr go there; else
    ``popen_kwargs`` may route them (``stdout=subprocess.PIPE``, ``text=True``)."""
    full_env = dict(os.environ if env is None else env)
    paths = [str(REPO), *filter(None, [full_env.get("PYTHONPATH")])]
    full_env["PYTHONPATH"] = os.pathsep.join(paths)
    popen_kwargs["preexec_fn"] = _as_from_a_terminal(popen_kwargs.get("preexec_fn"))
    if log_path is not None:
        with log_path.open("ab") as log_file:
            popen = subprocess.Popen(
                list(cmd), cwd=cwd, env=full_env, stdout=log_file, stderr=subprocess.STDOUT,
                start_new_session=True, **popen_kwargs,
            )  # fmt: skip
    else:
        popen = subprocess.Popen(
            list(cmd), cwd=cwd, env=full_env, start_new_session=True, **popen_kwargs
        )
    try:
        yield Child(popen, log_path)
    finally:
        stop_group(popen, grace_s)
        for stream in (popen.stdin, popen.stdout, popen.stderr):
            if stream is not None:
                stream.close()


_HOLD = (
    "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print('ready', flush=True); "
    "sys.stdin.read()"
)


@contextmanager
def holding_duckdb(path: Path) -> Iterator[Child]:
    """A child process holding ``path`` open (DuckDB's lock), from its ``ready`` line (its
    own readiness signal) to the end of the block."""
    cmd = [sys.executable, "-c", _HOLD, str(path)]
    with child_process(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as child:
        assert child.popen.stdout is not None
        line = child.popen.stdout.readline()  # blocks until ready, or '' if it died
        assert line.strip() == "ready", f"the holder of {path} exited ({child.popen.wait()})"
        yield child


def children_of(pid: int) -> list[int]:
    """The live processes whose parent is ``pid`` (read from ``/proc``: Linux)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        if int(fields[1]) == pid and fields[0] != b"Z":
            out.append(int(name))
    return sorted(out)


def _plain(value: Any) -> Any:
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, BaseModel):
        return {k: _plain(getattr(value, k)) for k in type(value).model_fields}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    return value


def settings_env(settings: CollectorSettings) -> dict[str, str]:
    """``LMCP_COLLECTOR_*`` variables that rebuild ``settings`` in another process."""
    env: dict[str, str] = {}
    for name in type(settings).model_fields:
        value = _plain(getattr(settings, name))
        if value is None:
            continue
        key = "LMCP_COLLECTOR_" + name.upper()
        if isinstance(value, str | Path | int | float | bool):
            env[key] = str(value).lower() if isinstance(value, bool) else str(value)
        else:
            env[key] = json.dumps(value)
    return env


@dataclass
class CollectorProcess(Child):
    base_url: str = ""


@contextmanager
def collector_process(
    settings: CollectorSettings,
    *,
    port: int | None = None,
    log_path: Path | None = None,
    log_level: str = "warning",
    **popen_kwargs: Any,
) -> Iterator[CollectorProcess]:
    """``lmcp collector serve`` in a child process; yields once ``/readyz`` answers 200."""
    port = free_port() if port is None else port
    log_path = log_path or Path(settings.db_path).with_suffix(f".{port}.log")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LMCP_COLLECTOR_")}
    env.update(settings_env(settings))
    cmd = [
        sys.executable, "-m", "lmcp.collector_cli", "serve",
        "--host", "127.0.0.1", "--port", str(port), "--log-level", log_level,
    ]  # fmt: skip
    with child_process(cmd, env=env, log_path=log_path, **popen_kwargs) as child:
        handle = CollectorProcess(child.popen, log_path, f"http://127.0.0.1:{port}")
        wait_ready(handle.base_url, proc=child.popen)
        yield handle


@contextmanager
def running_seaweed(**kwargs: Any) -> Iterator[LoopbackSeaweed]:
    """SeaweedFS on loopback (``LoopbackSeaweed``), waited for until the bucket takes a write
    (as long as it is alive, up to ``HANG_S``), stopped with its process group."""
    server = LoopbackSeaweed(**kwargs)
    try:
        yield server.start(timeout_s=HANG_S)
    finally:
        server.stop()
