"""Every server or child process a test starts: started here (or in ``tests/_processes.py``,
re-exported here), waited for by readiness, stopped.

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
  SIGKILL, for crash tests). ``skills_process(settings)``: ``lmcp skills serve`` the same way.
- ``child_process(cmd)`` / ``run_child(cmd)``: any other child, beside the test (a worker, the
  demo) or run to its end (a CLI, a script); ``holding_duckdb(path)``: another process holding
  a DuckDB file open (``tests/_processes.py``).
- ``running_seaweed()``: SeaweedFS (S3 gateway) on loopback.
- ``serving_app(app, name)``: any other ASGI app the same way.
- ``serving_stub(handler)``: a stdlib HTTP stub (a fake a test controls) in a thread.
- ``counting_listener()``: a loopback socket that records every connection's first bytes and
  answers 200 (a stand-in collector that counts at the socket level, across processes).

``lmcp mcp`` over stdio is spawned by the MCP SDK's own client (``tests/mcp/conftest.py``'s
``mcp_session``): its own process group, the whole tree stopped when the session ends, ready
once ``initialize`` is answered.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from pydantic import BaseModel, SecretStr
from pydantic_settings import BaseSettings

from cloudskills.app import create_app as create_skills_app
from cloudskills.settings import SkillsSettings
from collector.settings import CollectorSettings
from lakedev.seaweed import LoopbackSeaweed
from lmcp.apps import collector_app, collector_limits, uvicorn_config
from tests._processes import (
    GRACE_S,
    HANG_S,
    REPO,
    Child,
    alive,
    child_process,
    children_of,
    holding_duckdb,
    run_child,
    stop_group,
    wait_until,
)

__all__ = [
    "GRACE_S",
    "HANG_S",
    "REPO",
    "Child",
    "CollectorProcess",
    "alive",
    "child_process",
    "children_of",
    "collector_process",
    "counting_listener",
    "free_port",
    "holding_duckdb",
    "refused_port",
    "run_child",
    "running_collector",
    "running_seaweed",
    "running_skills",
    "serving_app",
    "serving_stub",
    "settings_env",
    "skills_process",
    "stop_group",
    "wait_ready",
    "wait_until",
]


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


@contextmanager
def counting_listener() -> Iterator[tuple[str, list[bytes]]]:
    """A loopback TCP server in a thread that records the first bytes of every connection and
    answers 200 (an ingestion's answer); yields its URL and what it saw."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(0.2)  # how soon the loop sees the stop, not a limit on any client
    seen: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(HANG_S)  # only a hang: a busy client sends late, not never
                try:
                    seen.append(conn.recv(65536))
                    body = b'{"accepted":1,"duplicates":0}'
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                        b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body)
                    )
                except OSError:
                    pass

    thread = threading.Thread(target=serve, name="listener-under-test", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}", seen
    finally:
        stop.set()
        thread.join(timeout=HANG_S)
        server.close()


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


def settings_env(settings: BaseSettings) -> dict[str, str]:
    """The variables (``LMCP_COLLECTOR_*``, ``LMCP_SKILLS_*``: the settings' prefix) that
    rebuild ``settings`` in another process."""
    prefix = str(type(settings).model_config.get("env_prefix") or "")
    env: dict[str, str] = {}
    for name in type(settings).model_fields:
        value = _plain(getattr(settings, name))
        if value is None:
            continue
        key = prefix + name.upper()
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
    environment: Mapping[str, str] | None = None,
    **popen_kwargs: Any,
) -> Iterator[CollectorProcess]:
    """``lmcp collector serve`` in a child process; yields once ``/readyz`` answers 200.
    ``environment``: more variables for the child (``TMPDIR``, ...)."""
    with _service_process(
        "collector", settings, port, log_path, log_level, environment, **popen_kwargs
    ) as handle:
        yield handle


@contextmanager
def skills_process(
    settings: SkillsSettings,
    *,
    port: int | None = None,
    log_path: Path | None = None,
    log_level: str = "warning",
    environment: Mapping[str, str] | None = None,
    **popen_kwargs: Any,
) -> Iterator[CollectorProcess]:
    """``lmcp skills serve`` in a child process; yields once ``/readyz`` answers 200."""
    with _service_process(
        "skills", settings, port, log_path, log_level, environment, **popen_kwargs
    ) as handle:
        yield handle


@contextmanager
def _service_process(
    service: str,
    settings: CollectorSettings | SkillsSettings,
    port: int | None,
    log_path: Path | None,
    log_level: str,
    environment: Mapping[str, str] | None,
    **popen_kwargs: Any,
) -> Iterator[CollectorProcess]:
    port = free_port() if port is None else port
    log_path = log_path or Path(settings.db_path).with_suffix(f".{port}.log")
    prefix = str(type(settings).model_config.get("env_prefix") or "")
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefix)}
    env.update(settings_env(settings))
    env.update(environment or {})
    cmd = [
        sys.executable, "-m", f"lmcp.{service}_cli", "serve",
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
