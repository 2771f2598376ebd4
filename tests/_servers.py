"""Real services on loopback for end-to-end tests: a uvicorn thread, or a child process.

- ``running_collector(settings)`` serves the collector as the shell composes it
  (``lmcp.apps.collector_app``) with uvicorn on a free 127.0.0.1 port in a thread of this
  process and yields the base URL; shutdown is graceful (the writer flushes, the database
  closes).
- ``running_skills(settings)`` does the same for the Cloud Skills service
  (``cloudskills.app.create_app``), with its own database file.
- ``collector_process(settings, port=...)`` runs ``python -m lmcp.collector_cli serve`` in a child
  process (settings passed as ``LMCP_COLLECTOR_*`` variables) and yields a ``CollectorProcess``
  whose ``.kill()`` sends SIGKILL: for crash tests.
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
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from pydantic import BaseModel, SecretStr

from cloudskills.app import create_app as create_skills_app
from cloudskills.settings import SkillsSettings
from collector.settings import CollectorSettings
from lmcp.apps import collector_app, collector_limits, uvicorn_config

__all__ = [
    "CollectorProcess",
    "collector_process",
    "free_port",
    "running_collector",
    "running_skills",
    "settings_env",
    "wait_ready",
]

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_ready(
    base_url: str, *, timeout_s: float = 20.0, proc: subprocess.Popen[bytes] | None = None
) -> None:
    deadline = time.monotonic() + timeout_s
    with httpx.Client(trust_env=False, timeout=1.0) as client:
        while time.monotonic() < deadline:
            if proc is not None and proc.poll() is not None:
                raise RuntimeError(f"collector exited with {proc.returncode} before it was ready")
            try:
                if client.get(base_url + "/readyz").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
    raise TimeoutError(f"collector at {base_url} not ready within {timeout_s}s")


@contextmanager
def running_collector(settings: CollectorSettings, **app_kwargs: Any) -> Iterator[str]:
    """A real uvicorn server for ``collector_app(settings, **app_kwargs)``; yields its URL."""
    app = collector_app(settings, **app_kwargs)
    limits = {"limits": collector_limits(settings), "keep_alive_s": settings.keep_alive_timeout_s}
    with _serving(app, "collector", **limits) as url:
        yield url


@contextmanager
def running_skills(settings: SkillsSettings, **app_kwargs: Any) -> Iterator[str]:
    """A real uvicorn server for the skills service ``create_app(settings, **app_kwargs)``;
    yields its URL."""
    with _serving(create_skills_app(settings, **app_kwargs), "skills") as url:
        yield url


@dataclass(frozen=True, slots=True)
class _Loopback:
    host: str
    port: int


@contextmanager
def _serving(app: Any, name: str, **limits: Any) -> Iterator[str]:
    """``app`` under uvicorn on a free loopback port, in a thread; graceful shutdown.

    ``limits``: ``uvicorn_config``'s connection limits (the service's own settings)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
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
    base_url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while not server.started:
            if errors or not thread.is_alive():
                raise RuntimeError(f"{name} failed to start") from (errors[0] if errors else None)
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name} did not start")
            time.sleep(0.01)
        yield base_url
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
        if errors:
            raise RuntimeError(f"{name} crashed") from errors[0]


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
class CollectorProcess:
    base_url: str
    popen: subprocess.Popen[bytes]
    log_path: Path

    def kill(self) -> None:
        """SIGKILL: no shutdown, no flush, no checkpoint."""
        self.popen.send_signal(signal.SIGKILL)
        self.popen.wait(timeout=10)

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")


@contextmanager
def collector_process(
    settings: CollectorSettings, *, port: int | None = None, log_path: Path | None = None
) -> Iterator[CollectorProcess]:
    """``lmcp collector serve`` in a child process; yields once ``/readyz`` answers 200."""
    port = free_port() if port is None else port
    log_path = log_path or Path(settings.db_path).with_suffix(f".{port}.log")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LMCP_COLLECTOR_")}
    env.update(settings_env(settings))
    env["PYTHONPATH"] = str(REPO)
    cmd = [
        sys.executable, "-m", "lmcp.collector_cli", "serve",
        "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
    ]  # fmt: skip
    with log_path.open("ab") as log_file:
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log_file, stderr=subprocess.STDOUT)
    handle = CollectorProcess(f"http://127.0.0.1:{port}", proc, log_path)
    try:
        wait_ready(handle.base_url, proc=proc)
        yield handle
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
