"""HTTP/1.1 spoken byte by byte, as an attacker speaks it, against a server on loopback.

httpx sends a request whole and reads its answer whole; the bounds tests need less polite
exchanges: a head that announces a body never sent, a body that never ends, bytes between
requests that start none. Nothing here has a wall-clock bound but the hang limit ``HANG_S``.

- ``Connection(url)``: one connection (a context manager) with ``send(bytes)`` (False once
  the server has closed or reset it), ``answer()`` (the next answer, a ``100 Continue``
  included, or None when the server closed the connection without one) and
  ``closed_by_server()`` (reads until the server closes it; False only after ``HANG_S``).
- ``head(method, path, headers)``: a request head, ``Host`` included; ``chunk(data)``: one
  chunk of a ``Transfer-Encoding: chunked`` body.
- ``routes(app)``: every ``(method, path template)`` an ASGI app routes (FastAPI's included
  routers flattened); ``concrete(template)``: a path the template matches.
"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from fastapi.routing import iter_route_contexts

from tests._processes import HANG_S

__all__ = [
    "Answer",
    "Connection",
    "assert_refused",
    "chunk",
    "chunks_past",
    "concrete",
    "head",
    "routes",
]


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    #: Lower-cased names; the last value of a repeated header.
    headers: Mapping[str, str]
    body: bytes


def head(method: str, path: str, headers: Mapping[str, str] | None = None) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


class Connection:
    """One connection to the server at ``url`` (``http://127.0.0.1:PORT``); the bytes it has
    received are kept between answers (a pipelined answer may follow another)."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        assert parts.hostname is not None and parts.port is not None
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=HANG_S)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buffer = b""

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *_: object) -> None:
        self.sock.close()

    def send(self, data: bytes) -> bool:
        """Send ``data``; False when the server has closed or reset the connection."""
        try:
            self.sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            return False
        return True

    def answer(self, *, method: str = "GET") -> Answer | None:
        """The next answer, or None when the server closed the connection first."""
        raw = self._until(b"\r\n\r\n")
        if raw is None:
            return None
        status_line, *header_lines = raw.decode("latin-1").split("\r\n")
        status = int(status_line.split()[1])
        headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if status < 200 or status in (204, 304) or method == "HEAD":
            return Answer(status, headers, b"")
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = self._chunked()
        else:
            body = self._exactly(int(headers.get("content-length", "0")))
        return None if body is None else Answer(status, headers, body)

    def closed_by_server(self) -> bool:
        """True once the server closes the connection (what it still sends first is
        dropped); False only if it holds the connection open for ``HANG_S``."""
        self._buffer = b""
        try:
            while self.sock.recv(65536):
                pass
        except TimeoutError:
            return False
        except (ConnectionResetError, BrokenPipeError):
            pass
        return True

    def _fill(self) -> bool:
        try:
            data = self.sock.recv(65536)
        except (ConnectionResetError, BrokenPipeError):
            data = b""
        self._buffer += data
        return bool(data)

    def _until(self, marker: bytes) -> bytes | None:
        while marker not in self._buffer:
            if not self._fill():
                return None
        found, _, self._buffer = self._buffer.partition(marker)
        return found

    def _exactly(self, size: int) -> bytes | None:
        while len(self._buffer) < size:
            if not self._fill():
                return None
        found, self._buffer = self._buffer[:size], self._buffer[size:]
        return found

    def _chunked(self) -> bytes | None:
        body = b""
        while (size_line := self._until(b"\r\n")) is not None:
            size = int(size_line.split(b";")[0], 16)
            data = self._exactly(size + 2)
            if data is None:
                return None
            if size == 0:
                return body
            body += data[:-2]
        return None


def routes(app: Any) -> set[tuple[str, str]]:
    """Every ``(method, path template)`` that ``app``'s router serves."""
    found: set[tuple[str, str]] = set()
    for route in iter_route_contexts(app.routes):
        methods: Iterable[str] = route.methods or ()
        path = route.path
        assert path is not None, f"a route without a path: {route!r}"
        found |= {(method, path) for method in methods}
    return found


def concrete(template: str) -> str:
    """A path ``template`` matches: each parameter (``{name}``, ``{name:path}``) as ``x``."""
    return re.sub(r"\{[^}]+\}", "x", template)


def assert_refused(answer: Answer | None, method: str, status: int, code: str) -> None:
    """A refusal before the body was asked for: ``status``, and (not for HEAD, which has no
    body) the problem+json ``code``."""
    assert answer is not None, "the server closed the connection without an answer"
    assert answer.status != 100, "the server asked for a body it must refuse"
    assert answer.status == status, answer
    if method != "HEAD":
        assert answer.headers["content-type"] == "application/problem+json"
        assert json.loads(answer.body)["code"] == code


def chunks_past(conn: Connection, budget: int, piece: int = 64 * 1024) -> None:
    """One byte past ``budget`` in chunks, and no last chunk (the server cannot wait for the
    end), for as long as the server takes them."""
    left = budget + 1
    while left and conn.send(chunk(b"a" * min(left, piece))):
        left -= min(left, piece)
