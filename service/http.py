"""The HTTP/1.1 connection every service serves: uvicorn's httptools protocol, with limits.

uvicorn + httptools as shipped caps neither the request head nor the time a client may take to
send it, nor the connections one address holds. ``guarded_protocol(limits)`` returns a protocol
class (uvicorn's ``http=`` option) that adds, per connection:

- a cap on the request head (request line and headers): past ``max_header_bytes`` the
  connection answers 431 and closes, before the parser accumulates more;
- a header timeout (from the connection or the request's first byte to the end of its head)
  and a body timeout (from the end of the head to the last body byte): past either, the
  connection is closed;
- an idle timeout (uvicorn's ``timeout_keep_alive``, from the moment a connection has answered
  every request it received whole): bytes that start no request (the CRLFs a parser skips
  between requests) leave it running, so a connection always has a deadline unless a request
  of its own is being answered (then the response deadline below holds);
- a response deadline (from the request's last byte until its answer has left the process,
  closing connections included) and a write timeout (answer bytes waiting that the client has
  not taken for ``write_timeout_s``): a client that never reads cannot hold a connection;
- a bound on the answer bytes all connections hold in the process (``max_buffered_bytes``):
  past it the connections holding the oldest unsent bytes are closed; each connection's own
  buffer pauses the application from ``_WRITE_HIGH`` bytes (uvicorn's flow control);
- a cap on the connections of one address, and on the process: a new connection over the
  process cap evicts the oldest connection, in any state, of the address holding most;
- strikes: an address whose connections were dropped 32 times in 30 s for not taking their
  answers gets no new connection for the rest of that window (each had cost a request's work);
- at shutdown, a connection still sending its request is closed at once (it could not be
  answered), so the server waits only for requests it has whole.

It subclasses uvicorn's ``HttpToolsProtocol`` (not a public API): the hooks it overrides are
checked against the installed uvicorn by ``tests/service/test_http_hooks.py``, and
``pyproject.toml`` allows only the uvicorn minor releases that test was run on
(``docs/operations.md``, *Why a protocol of our own*).

uvicorn's own 400 (a request that is not HTTP/1.1) is answered as problem+json too.
"""

from __future__ import annotations

import json
import resource
from asyncio import Transport
from asyncio.events import TimerHandle
from collections import Counter, deque
from dataclasses import dataclass

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from service.errors import PROBLEM_MEDIA_TYPE, problem_body

__all__ = ["ServingLimits", "guarded_protocol", "problem_bytes"]

#: Descriptors kept free of connections (the database, logs, the listening socket).
_RESERVED_FDS = 64
#: A connection's answer bytes past which the application waits (asyncio's default is 64 KiB).
_WRITE_HIGH = 16 * 1024
#: An address whose connections were dropped this many times for not taking their answers
#: within ``_STRIKE_WINDOW_S`` gets no new connection until the oldest of those drops is that
#: old: each such connection cost a whole request's work, and the next would cost the same.
_STRIKES = 32
_STRIKE_WINDOW_S = 30.0
#: Addresses remembered at most (a bound on the memory an attacker with many addresses costs).
_MAX_STRUCK = 65_536


@dataclass(frozen=True, slots=True)
class ServingLimits:
    """The defaults are the collector settings' defaults (``docs/operations.md``)."""

    max_header_bytes: int = 32 * 1024
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    max_connections: int = 4096
    max_connections_per_address: int = 256
    response_timeout_s: float = 60.0
    write_timeout_s: float = 10.0
    max_buffered_bytes: int = 64 * 1024 * 1024

    def process_cap(self) -> int:
        """``max_connections``, never more than the descriptors this process may open."""
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY:
            return self.max_connections
        return max(1, min(self.max_connections, soft - _RESERVED_FDS))


def problem_bytes(status: int, phrase: bytes, code: str, detail: str) -> bytes:
    """A complete HTTP/1.1 problem+json response that closes the connection."""
    body = json.dumps(problem_body(status, code, detail), separators=(",", ":")).encode()
    head = (
        b"HTTP/1.1 %d %s\r\ncontent-type: %s\r\ncontent-length: %d\r\n"
        b"x-content-type-options: nosniff\r\nconnection: close\r\n\r\n"
    )
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

    sweep_every = min(
        0.25,
        limits.header_timeout_s / 2,
        limits.body_timeout_s / 2,
        limits.write_timeout_s / 2,
        limits.response_timeout_s / 2,
    )
    sweeping: list[TimerHandle] = []
    strikes: dict[str, deque[float]] = {}

    def _strike(address: str, now: float) -> None:
        times = strikes.get(address)
        if times is None:
            if len(strikes) >= _MAX_STRUCK:  # forget addresses whose strikes are all old
                for old in [a for a, t in strikes.items() if now - t[-1] > _STRIKE_WINDOW_S]:
                    del strikes[old]
                if len(strikes) >= _MAX_STRUCK:
                    return
            times = strikes[address] = deque(maxlen=_STRIKES)
        times.append(now)

    def _struck(address: str, now: float) -> bool:
        times = strikes.get(address)
        return times is not None and len(times) == _STRIKES and now - times[0] <= _STRIKE_WINDOW_S

    def _sweep() -> None:
        # One timer per server, not two per request: each connection only notes its deadline.
        sweeping.clear()
        if not live:
            return
        first = next(iter(live))
        now = first.loop.time()
        held = 0
        for protocol in list(live):
            held += protocol.check(now)
        if held > limits.max_buffered_bytes:
            # Oldest first (insertion order): the connections holding bytes longest go.
            for protocol in [p for p in live if p.buffered()]:
                held -= protocol.buffered()
                _strike(protocol._address, now)
                protocol.expire()
                if held <= limits.max_buffered_bytes:
                    break
        sweeping.append(first.loop.call_later(sweep_every, _sweep))

    class GuardedProtocol(HttpToolsProtocol):
        _address = ""
        _counted = False
        _in_head = True
        _head_bytes = 0
        #: From a request's first byte to its last: its head and body deadlines hold.
        _in_message = False
        #: When (loop time) this connection must have sent its request's head or body.
        deadline: float | None = None
        #: When its answer must have left the process (None: no answer pending).
        respond_by: float | None = None
        #: Since when its unsent answer bytes have not shrunk, and how many there were.
        _stalled_since = 0.0
        _stalled_size = 0

        def connection_made(self, transport: Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._cycles: list[RequestResponseCycle] = []
            transport.set_write_buffer_limits(high=_WRITE_HIGH)
            self._address = self.client[0] if self.client else ""
            if per_address[self._address] >= limits.max_connections_per_address or _struck(
                self._address, self.loop.time()
            ):
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
            self._disconnect_cycles()
            super().connection_lost(exc)

        def _disconnect_cycles(self) -> None:
            # uvicorn marks only the newest request (``self.cycle``) as disconnected; with
            # pipelining the one answering is an earlier one, which would then write to the
            # closed transport (uvloop raises) and log errors for an expected drop.
            for cycle in self._cycles:
                if not cycle.response_complete:
                    cycle.disconnected = True
                    cycle.message_event.set()
            self._cycles.clear()

        def _release(self) -> None:
            self.deadline = None
            self.respond_by = None
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
            self._in_message = True
            self._in_head = True
            self._head_bytes = 0
            self.deadline = self.loop.time() + limits.header_timeout_s
            super().on_message_begin()

        def on_headers_complete(self) -> None:
            self._in_head = False
            self.deadline = self.loop.time() + limits.body_timeout_s
            super().on_headers_complete()
            # This connection's requests not yet answered (the running one and the queued).
            self._cycles = [c for c in self._cycles if not c.response_complete]
            if self.cycle is not None and self.cycle not in self._cycles:
                self._cycles.append(self.cycle)

        def on_message_complete(self) -> None:
            self._in_message = False
            self.deadline = None
            if self._answered():  # answered before its body ended (an error): idle from now
                self._idle()
            else:
                self.respond_by = self.loop.time() + limits.response_timeout_s
            super().on_message_complete()

        def on_response_complete(self) -> None:
            super().on_response_complete()  # starts the next pipelined request, if any
            self._idle()

        def _idle(self) -> None:
            # Every request received whole is answered and none has begun: the idle deadline.
            # uvicorn's own keep-alive timer is not enough: any bytes cancel it, and the
            # CRLFs its parser skips between requests begin no request that would set another.
            if not self._in_message and self._answered() and not self.transport.is_closing():
                self.deadline = self.loop.time() + self.timeout_keep_alive

        def buffered(self) -> int:
            """Answer bytes this connection holds in the process, not yet taken by the client."""
            return 0 if self.transport is None else self.transport.get_write_buffer_size()

        def check(self, now: float) -> int:
            """Expire this connection if it is past a deadline; else the bytes it holds."""
            size = self.buffered()
            if self.respond_by is not None and size == 0 and self._answered():
                self.respond_by = None
            if size == 0 or size < self._stalled_size:
                self._stalled_since = now
            self._stalled_size = size
            late = (self.deadline is not None and self.deadline <= now) or (
                self.respond_by is not None and self.respond_by <= now
            )
            stalled = size and now - self._stalled_since >= limits.write_timeout_s
            if late or stalled:
                if size:  # an answer the client did not take: a strike against its address
                    _strike(self._address, now)
                self.expire()
                return 0
            return size

        def _answered(self) -> bool:
            cycle = self.cycle
            return cycle is None or bool(cycle.response_complete)

        def shutdown(self) -> None:
            # A request still being sent cannot be answered before the server stops: closing
            # it now keeps the shutdown from waiting out its graceful timeout. (An idle
            # connection also has a deadline; uvicorn closes it after its last answer's bytes.)
            if self._in_message:
                self.expire()
                return
            super().shutdown()

        def expire(self) -> None:
            """Past a deadline or a bound: dropped at once, unsent bytes and all."""
            self._release()
            self._disconnect_cycles()  # what connection_lost will say: the apps stop writing
            self.transport.abort()  # also when closing: close() would wait for the client

    def _evict(newcomer: str) -> None:
        # The address holding most connections gives up its oldest one, whatever its state.
        for address, _ in per_address.most_common():
            if address == newcomer and per_address[address] <= 1:
                continue
            for protocol in live:
                if protocol._address == address:
                    protocol.expire()
                    return
            return

    return GuardedProtocol
