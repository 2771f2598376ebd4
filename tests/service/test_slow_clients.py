"""Clients that read slowly, or never, cannot pin a service: the guarded protocol's answer side.

Against a real collector under uvicorn (``tests/_servers.running_collector``) with an extra
router serving a large answer, whole or streamed, as an export or a dashboard page is. Each
test is an attack: a socket whose receive buffer is 1 KiB and that never reads, or reads a
byte now and then; many of them from many loopback addresses; many large answers at once.
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import APIRouter
from fastapi.responses import Response, StreamingResponse

from collector.settings import CollectorSettings
from service.db import Database
from tests._servers import running_collector

pytestmark = pytest.mark.slow

SIZE = 8 * 1024 * 1024
BLOCK = b"x" * SIZE


def _large_answers(settings: CollectorSettings, db: Database) -> APIRouter:
    router = APIRouter()

    @router.get("/test/whole")
    async def whole() -> Response:
        return Response(BLOCK, media_type="application/octet-stream")

    @router.get("/test/streamed")
    async def streamed() -> StreamingResponse:
        async def chunks() -> AsyncIterator[bytes]:
            for at in range(0, SIZE, 64 * 1024):
                yield BLOCK[at : at + 64 * 1024]

        return StreamingResponse(chunks(), media_type="application/octet-stream")

    return router


@contextmanager
def _served(tmp_path: Path, **limits: Any) -> Iterator[int]:
    limits = {"max_buffered_bytes": SIZE * 64, **limits}
    settings = CollectorSettings(db_path=tmp_path / "s.duckdb", rate_limit_enabled=False, **limits)
    with running_collector(settings, routers=(_large_answers,)) as url:
        yield int(url.rsplit(":", 1)[1])


def _slow_reader(
    port: int, path: str, address: str = "127.0.0.1", pipelined: int = 1
) -> socket.socket:
    """A connection that asked for ``path`` whole (``pipelined`` times in a row) and reads
    nothing (1 KiB receive buffer)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    sock.bind((address, 0))
    sock.connect(("127.0.0.1", port))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode() * pipelined)
    return sock


class _Errors(logging.Handler):
    """Every record at WARNING or above, from the services and from uvicorn."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def _logged_errors() -> Iterator[_Errors]:
    handler = _Errors()
    # uvicorn's own loggers do not propagate to the root: listen on them too.
    loggers = [logging.getLogger(), logging.getLogger("uvicorn.error")]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        yield handler
    finally:
        for logger in loggers:
            logger.removeHandler(handler)


def _drain(sock: socket.socket) -> int:
    """Every byte the server still delivers on ``sock`` (until it closes or resets it)."""
    sock.settimeout(30)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)  # the test reads fast
    total = 0
    try:
        while chunk := sock.recv(1 << 20):
            total += len(chunk)
    except (ConnectionResetError, TimeoutError):
        pass
    finally:
        sock.close()
    return total


@pytest.mark.parametrize("path", ["/test/whole", "/test/streamed"])
def test_a_client_that_never_reads_is_dropped_at_the_write_timeout(
    tmp_path: Path, path: str
) -> None:
    with _served(tmp_path, write_timeout_s=0.5, response_timeout_s=600.0) as port:
        sock = _slow_reader(port, path)
        time.sleep(2.0)  # four write timeouts: the server must have given up by now
        assert _drain(sock) < SIZE  # the rest was dropped, not kept for a client that waits


def test_a_client_that_reads_a_byte_now_and_then_is_dropped_at_the_response_deadline(
    tmp_path: Path,
) -> None:
    with _served(tmp_path, write_timeout_s=600.0, response_timeout_s=1.0) as port:
        sock = _slow_reader(port, "/test/whole")
        for _ in range(30):  # progress, always: the write timeout never fires
            sock.recv(1)
            time.sleep(0.1)
        assert _drain(sock) < SIZE


def test_slow_readers_from_many_addresses_cannot_lock_out_a_new_client(tmp_path: Path) -> None:
    with _served(
        tmp_path, max_connections=64, write_timeout_s=600.0, response_timeout_s=600.0
    ) as port:
        held = [_slow_reader(port, "/test/streamed", f"127.0.0.{10 + n % 16}") for n in range(128)]
        try:
            with httpx.Client(trust_env=False, timeout=10) as client:
                answers = [client.get(f"http://127.0.0.1:{port}/healthz") for _ in range(10)]
            assert [a.status_code for a in answers] == [200] * 10
        finally:
            for sock in held:
                sock.close()


def test_answer_bytes_held_for_clients_that_do_not_read_are_bounded(tmp_path: Path) -> None:
    budget = 2 * SIZE
    with _served(
        tmp_path, max_buffered_bytes=budget, write_timeout_s=600.0, response_timeout_s=600.0
    ) as port:
        held = [_slow_reader(port, "/test/whole", f"127.0.0.{10 + n}") for n in range(16)]
        time.sleep(1.0)  # four sweeps
        whole = sum(_drain(sock) >= SIZE for sock in held)
        # what was kept fits the budget (the kernel's socket buffers hold a little more)
        assert whole <= budget // SIZE + 1, whole


@pytest.mark.parametrize("pipelined", [1, 4])
def test_dropping_slow_readers_is_expected_and_logs_no_error(
    tmp_path: Path, pipelined: int
) -> None:
    """A dropped connection is the defence working, not a failure of the application: no
    'ASGI callable returned without completing response', no 'unhandled RuntimeError'."""
    with (
        _logged_errors() as errors,
        _served(
            tmp_path, max_buffered_bytes=2 * SIZE, write_timeout_s=0.5, response_timeout_s=600.0
        ) as port,
    ):
        held = [
            _slow_reader(port, path, f"127.0.0.{10 + n % 16}", pipelined)
            for n in range(16)
            for path in ("/test/whole", "/test/streamed")
        ]
        time.sleep(2.0)  # four write timeouts: the server gives up on them meanwhile
        dropped = sum(_drain(sock) < SIZE * pipelined for sock in held)
        with httpx.Client(trust_env=False, timeout=10) as client:
            assert client.get(f"http://127.0.0.1:{port}/healthz").status_code == 200
    assert dropped > 0  # readers were dropped (on a busy machine perhaps not all yet)...
    assert [(r.name, r.getMessage()) for r in errors.records] == []  # ...and none is an error


def test_an_address_whose_readers_keep_being_dropped_is_refused_others_are_served(
    tmp_path: Path,
) -> None:
    """Each reader dropped for not taking its answer had cost a whole request's work: after 32
    such drops in 30 s its address gets no new connection, and other addresses are served."""
    with _served(tmp_path, write_timeout_s=0.3, response_timeout_s=600.0) as port:
        held = [_slow_reader(port, "/test/whole", "127.0.0.7") for _ in range(40)]
        time.sleep(2.0)  # several write timeouts: the server gives up on them meanwhile
        dropped = sum(_drain(sock) < SIZE for sock in held)
        assert dropped >= 32
        try:
            answered = _drain(_slow_reader(port, "/test/whole", "127.0.0.7"))
        except (ConnectionResetError, BrokenPipeError):
            answered = 0  # reset while it was still asking
        assert answered == 0  # refused before any work: not a byte of an answer
        with httpx.Client(trust_env=False, timeout=10) as client:
            assert client.get(f"http://127.0.0.1:{port}/healthz").status_code == 200
