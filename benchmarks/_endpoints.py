"""The three collectors a client meets: up (a real collector), down (connection refused) and
black-holed (a listening socket that never answers). Used by the report_friction benchmark and
by ``tests/client/test_background_delivery.py``."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn

from collector.app import create_app
from collector.settings import CollectorSettings

__all__ = ["black_hole", "down_port", "half_sent_requests", "real_collector"]


def down_port() -> int:
    """A loopback port nothing listens on (connections are refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@contextmanager
def black_hole() -> Iterator[int]:
    """A port whose kernel completes every handshake and then nothing ever answers."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1024)  # never accepted, never read
        yield sock.getsockname()[1]


@contextmanager
def real_collector(db_path: Path, port: int = 0) -> Iterator[int]:
    """The collector app under uvicorn on loopback (on ``port``, or one the OS picks)."""
    settings = CollectorSettings(db_path=db_path, rate_limit_enabled=False)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    bound: int = sock.getsockname()[1]
    config = uvicorn.Config(
        create_app(settings), log_level="warning", access_log=False, server_header=False
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("collector did not start")
            time.sleep(0.01)
        yield bound
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def half_sent_requests(port: int, count: int) -> list[socket.socket]:
    """``count`` connections from 127.0.0.2 (one attacker's address) to ``port`` on
    127.0.0.1, each having sent half a request head and nothing more (slowloris). The
    caller closes them."""
    socks: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket()
            socks.append(sock)
            sock.bind(("127.0.0.2", 0))
            sock.setblocking(False)
            try:
                sock.connect(("127.0.0.1", port))
            except BlockingIOError:
                pass
        time.sleep(0.5)
        for sock in socks:
            try:
                sock.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            except OSError:
                pass
        time.sleep(0.5)
    except BaseException:
        for sock in socks:
            sock.close()
        raise
    return socks
