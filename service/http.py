"""The HTTP/1.1 connection every service serves: uvicorn's httptools protocol, with limits.

uvicorn + httptools as shipped caps neither the request head nor the time a client may take to
send it, nor the connections one address holds. ``guarded_protocol(limits)`` returns a protocol
class (uvicorn's ``http=`` option) that adds, per connection:

- a cap on the request head (request line and headers): past ``max_header_bytes`` the
  connection answers 431 and closes, before the parser accumulates more;
- a header timeout (from the connection or the request's first byte to the end of its head)
  and a body timeout (from the end of the head to the last body byte): past either, the
  connection is closed (an idle connection between requests is uvicorn's ``timeout_keep_alive``);
- a cap on the connections of one address, and on the process: a new connection over the
  process cap evicts the oldest one still sending its request, of the address holding most;
- at shutdown, a connection still sending its request is closed at once (it could not be
  answered), so the server waits only for requests it has whole.

uvicorn's own 400 (a request that is not HTTP/1.1) is answered as problem+json too.
"""

from __future__ import annotations

import json
import resource
from asyncio import Transport
from asyncio.events import TimerHandle
from collections import Counter
from dataclasses import dataclass

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from service.errors import PROBLEM_MEDIA_TYPE, problem_body

__all__ = ["ServingLimits", "guarded_protocol", "problem_bytes"]

#: Descriptors kept free of connections (the database, logs, the listening socket).
_RESERVED_FDS = 64


@dataclass(frozen=True, slots=True)
class ServingLimits:
    """The defaults are the collector settings' defaults (``docs/operations.md``)."""

    max_header_bytes: int = 32 * 1024
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    max_connections: int = 4096
    max_connections_per_address: int = 256

    def process_cap(self) -> int:
        """``max_connections``, never more than the descriptors this process may open."""
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY:
            return self.max_connections
        return max(1, min(self.max_connections, soft - _RESERVED_FDS))


def problem_bytes(status: int, phrase: bytes, code: str, detail: str) -> bytes:
    """A complete HTTP/1.1 problem+json response that closes the connection."""
    body = json.dumps(problem_body(status, code, detail), separators=(",", ":")).encode()
    head = b"HTTP/1.1 %d %s\r\ncontent-type: %s\r\ncontent-length: %d\r\nconnection: close\r\n\r\n"
    return head % (status, phrase, PROBLEM_MEDIA_TYPE.encode(), len(body)) + body


_TOO_LARGE = problem_bytes(
    431, b"Request Header Fields Too Large", "headers_too_large", "The request head is too large."
)
_BAD_REQUEST = problem_bytes(400, b"Bad Request", "bad_request", "The request is not HTTP/1.1.")


def guarded_protocol(limits: ServingLimits) -> type[HttpToolsProtocol]:
    """A protocol class enforcing ``limits``; its connection counts are its own (one server)."""
    cap = limits.process_cap()
    per_address: Counter[str] = Counter()
    # Insertion-ordered: the oldest connection first.
    live: dict[GuardedProtocol, None] = {}

    sweep_every = min(1.0, limits.header_timeout_s / 2, limits.body_timeout_s / 2)
    sweeping: list[TimerHandle] = []

    def _sweep() -> None:
        # One timer per server, not two per request: each connection only notes its deadline.
        sweeping.clear()
        if not live:
            return
        first = next(iter(live))
        now = first.loop.time()
        for protocol in [p for p in live if p.deadline is not None and p.deadline <= now]:
            protocol.expire()
        sweeping.append(first.loop.call_later(sweep_every, _sweep))

    class GuardedProtocol(HttpToolsProtocol):
        _address = ""
        _counted = False
        _in_head = True
        _head_bytes = 0
        #: When (loop time) this connection must have sent its request's head or body.
        deadline: float | None = None

        def connection_made(self, transport: Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._address = self.client[0] if self.client else ""
            if per_address[self._address] >= limits.max_connections_per_address:
                transport.abort()
                return
            if len(live) >= cap:
                _evict(self._address)
                if len(live) >= cap:
                    transport.abort()
                    return
            per_address[self._address] += 1
            live[self] = None
            self._counted = True
            self.deadline = self.loop.time() + limits.header_timeout_s
            if not sweeping:
                sweeping.append(self.loop.call_later(sweep_every, _sweep))

        def connection_lost(self, exc: Exception | None) -> None:
            self._release()
            super().connection_lost(exc)

        def _release(self) -> None:
            self.deadline = None
            if self._counted:
                self._counted = False
                live.pop(self, None)
                per_address[self._address] -= 1
                if per_address[self._address] <= 0:
                    del per_address[self._address]

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._in_head and not self.transport.is_closing():
                self._head_bytes += len(data)
                if self._head_bytes > limits.max_header_bytes:
                    self.transport.write(_TOO_LARGE)
                    self.transport.close()

        def send_400_response(self, msg: str) -> None:
            self.transport.write(_BAD_REQUEST)
            self.transport.close()

        def on_message_begin(self) -> None:
            self._in_head = True
            self._head_bytes = 0
            self.deadline = self.loop.time() + limits.header_timeout_s
            super().on_message_begin()

        def on_headers_complete(self) -> None:
            self._in_head = False
            self.deadline = self.loop.time() + limits.body_timeout_s
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self.deadline = None
            super().on_message_complete()

        def shutdown(self) -> None:
            # A request still being sent cannot be answered before the server stops: closing
            # it now keeps the shutdown from waiting out its graceful timeout.
            if self.deadline is not None:
                self.expire()
                return
            super().shutdown()

        def expire(self) -> None:
            """Past its deadline: closed without an answer."""
            self._release()
            if not self.transport.is_closing():
                self.transport.abort()

    def _evict(newcomer: str) -> None:
        # The address holding most connections gives up its oldest one still sending.
        for address, _ in per_address.most_common():
            if address == newcomer and per_address[address] <= 1:
                continue
            for protocol in live:
                if protocol._address == address and protocol.deadline is not None:
                    protocol.expire()
                    return
            return

    return GuardedProtocol
