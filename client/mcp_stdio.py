"""``lmcp mcp`` over stdio: the handshake answered at once, everything else by the MCP SDK.

Importing the SDK (its protocol types alone are hundreds of pydantic models) and building the
runtime take about a second, and an agent's client waits for ``initialize`` and the tool list
before it can do anything. So ``serve_command`` first takes the wire off the standard streams
(from then on fd 0 reads the null device and fd 1 writes to stderr, as the SDK's own stdio
transport arranges: nothing printed can reach the wire), starts two threads, then loads the SDK:

- the reader answers, until the SDK serves, the requests it can answer exactly as the SDK does
  (``EarlyAnswers``: ``initialize`` with a handshake version, then ``tools/list`` and ``ping``)
  and hands everything else, in order, to the SDK's event loop (``_Inbox``). ``initialize`` is
  also handed on, so the SDK's session is initialized as usual;
- the writer writes the early answers and the SDK's output to the wire, less the SDK's answer
  to that ``initialize``.

The SDK's stdio server reads and writes through these two threads directly (no pipe, and no
worker thread per line as with the process's own stdio): a message costs one thread hand-off
each way. Field for field, the early answers are the SDK's: ``tests/mcp/test_stdio.py`` compares
them for every handshake version. A tool call waits for the SDK; the runtime loads before it
serves.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import queue
import sys
import threading
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from client.mcp_identity import (
    CAPABILITIES,
    HANDSHAKE_VERSIONS,
    INSTRUCTIONS,
    SERVER_NAME,
    tool_entries,
)

__all__ = ["Bridge", "EarlyAnswers", "WireIn", "WireOut", "serve_command", "text_lines"]

log = logging.getLogger(__name__)
#: Bytes of requests waiting for the SDK before the reader stops reading the wire (as a full
#: pipe would hold it): a client that floods the server is held at the wire, not in memory.
_INBOX_BYTES = 1024 * 1024
#: Bytes of answers waiting for the wire before the SDK waits too (a client that stops reading).
_OUTBOX_BYTES = 1024 * 1024


class EarlyAnswers:
    """The answers given before the SDK serves (pure: no I/O, no thread).

    ``answer(message)`` is ``(reply, pass_on)``: the reply to write now (or None), and whether
    the SDK must see the message too. Only a well-formed ``initialize`` that is the wire's first
    request is answered (the first request decides, for the SDK, which era of the protocol the
    connection speaks), and after it only ``tools/list`` and ``ping`` without parameters.
    """

    def __init__(self, version: str, tools: Callable[[], list[dict[str, Any]]]) -> None:
        self._version = version
        self._tools = tools
        self._first_request_passed_on = False
        #: The id of the ``initialize`` answered here: the SDK's own answer to it is dropped.
        self.initialize_id: str | int | None = None

    def answer(self, message: object) -> tuple[dict[str, Any] | None, bool]:
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return None, True
        method, request_id = message.get("method"), message.get("id")
        if not isinstance(method, str) or not isinstance(request_id, str | int):
            return None, True  # a notification or a response: not a request
        if self._first_request_passed_on or isinstance(request_id, bool):
            self._first_request_passed_on = True
            return None, True
        params = message.get("params")
        if self.initialize_id is None:
            if method != "initialize" or not _handshake(params):
                self._first_request_passed_on = True  # the SDK answers everything from now on
                return None, True
            assert isinstance(params, dict)
            self.initialize_id = request_id
            asked = params["protocolVersion"]
            result = {
                "protocolVersion": asked if asked in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1],
                "capabilities": json.loads(json.dumps(CAPABILITIES)),
                "serverInfo": {"name": SERVER_NAME, "version": self._version},
                "instructions": INSTRUCTIONS,
            }
            return _reply(request_id, result), True
        if params is not None and not (isinstance(params, dict) and set(params) <= {"_meta"}):
            return None, True  # a cursor, or anything else: the SDK decides
        if method == "tools/list":
            return _reply(request_id, {"tools": self._tools()}), False
        if method == "ping":
            return _reply(request_id, {}), False
        return None, True


def _handshake(params: object) -> bool:
    """Whether ``initialize``'s params are what the SDK accepts: the version, the client's
    capabilities and its name and version (anything else is the SDK's to answer)."""
    if not isinstance(params, dict) or not isinstance(params.get("protocolVersion"), str):
        return False
    info = params.get("clientInfo")
    return (
        isinstance(params.get("capabilities"), dict)
        and isinstance(info, dict)
        and isinstance(info.get("name"), str)
        and isinstance(info.get("version"), str)
    )


def _reply(request_id: str | int, result: Mapping[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _take_wire() -> tuple[int, int]:
    """The wire's two ends, moved off fd 0 and 1 (which now read the null device and write to
    stderr), so that a stray read or print, ours, a library's or a child's, never touches it."""
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)  # not inherited by children
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return wire_in, wire_out


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def text_lines(raw: bytes) -> list[str]:
    """The lines the SDK's own stdin (UTF-8 text, ``errors="replace"``, universal newlines)
    reads from ``raw``, a line of the wire (it ends with ``\\n``, or the wire ended)."""
    text = raw.decode("utf-8", errors="replace")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


class _Inbox:
    """Wire lines from the reader thread to the SDK's event loop, in order; ``None`` ends them.

    ``put`` (the reader thread) waits while ``_INBOX_BYTES`` are waiting; ``get`` (the event
    loop) waits on a future the reader resolves with ``call_soon_threadsafe``.
    """

    def __init__(self) -> None:
        self._lines: deque[bytes | None] = deque()
        self._bytes = 0
        self._room = threading.Condition()
        self._waiter: asyncio.Future[None] | None = None

    def put(self, line: bytes | None) -> None:
        with self._room:
            while self._bytes >= _INBOX_BYTES:
                self._room.wait()
            self._lines.append(line)
            self._bytes += len(line or b"")
            waiter, self._waiter = self._waiter, None
        if waiter is not None:
            try:
                waiter.get_loop().call_soon_threadsafe(_wake, waiter)
            except RuntimeError:  # the loop has ended: nobody reads any more
                pass

    async def get(self) -> bytes | None:
        while True:
            with self._room:
                if self._lines:
                    line = self._lines.popleft()
                    self._bytes -= len(line or b"")
                    self._room.notify()
                    return line
                waiter = self._waiter = asyncio.get_running_loop().create_future()
            await waiter


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class WireIn:
    """The SDK's stdin (``stdio_server(stdin=...)`` iterates it): the wire's lines as text."""

    def __init__(self, inbox: _Inbox) -> None:
        self._inbox = inbox
        self._ready: deque[str] = deque()

    def __aiter__(self) -> WireIn:
        return self

    async def __anext__(self) -> str:
        while not self._ready:
            raw = await self._inbox.get()
            if raw is None:
                raise StopAsyncIteration
            self._ready.extend(text_lines(raw))
        return self._ready.popleft()


class WireOut:
    """The SDK's stdout (``stdio_server(stdout=...)`` writes and flushes it): each write is
    handed to the writer thread at once; the SDK waits only when the client stops reading."""

    def __init__(self, bridge: Bridge) -> None:
        self._bridge = bridge

    async def write(self, text: str) -> int:
        data = text.encode("utf-8")
        if not self._bridge.send_nowait(data):
            import anyio.to_thread

            await anyio.to_thread.run_sync(self._bridge.send, data)
        return len(text)

    async def flush(self) -> None:
        return None  # every write is handed on whole; the writer thread writes it out


class Bridge:
    """The two threads between the wire and the SDK's stdio server."""

    def __init__(self, wire_in: int, wire_out: int, early: EarlyAnswers) -> None:
        self._wire_in, self._wire_out, self._early = wire_in, wire_out, early
        self._inbox = _Inbox()
        #: What the writer writes: (data, whether it is an early answer); None ends it.
        self._out: queue.SimpleQueue[tuple[bytes, bool] | None] = queue.SimpleQueue()
        self._out_bytes = 0
        self._out_room = threading.Condition()
        #: Set when the SDK serves: from then on every message is its to answer.
        self.serving = threading.Event()
        self._reader = threading.Thread(target=self._read_wire, name="mcp-wire-in", daemon=True)
        self._writer = threading.Thread(target=self._copy_out, name="mcp-wire-out", daemon=True)

    @classmethod
    def take_wire(cls, early: EarlyAnswers) -> Bridge:
        """Move the wire off fd 0 and 1 and start both threads on it."""
        bridge = cls(*_take_wire(), early)
        bridge._reader.start()
        bridge._writer.start()
        return bridge

    def sdk_streams(self) -> tuple[WireIn, WireOut]:
        """The SDK's stdin and stdout."""
        return WireIn(self._inbox), WireOut(self)

    def finish(self) -> None:
        """After the SDK stopped: let the writer write out what is left, then stop it."""
        self._out.put(None)
        self._writer.join()

    def send_nowait(self, data: bytes) -> bool:
        """Queue ``data`` for the wire unless ``_OUTBOX_BYTES`` are waiting already."""
        with self._out_room:
            if self._out_bytes >= _OUTBOX_BYTES:
                return False
            self._out_bytes += len(data)
        self._out.put((data, False))
        return True

    def send(self, data: bytes, *, early: bool = False) -> None:
        """Queue ``data`` for the wire, waiting for room (never on the event loop); ``early``:
        an answer given before the SDK serves."""
        with self._out_room:
            while self._out_bytes >= _OUTBOX_BYTES:
                self._out_room.wait()
            self._out_bytes += len(data)
        self._out.put((data, early))

    def _read_wire(self) -> None:
        with os.fdopen(self._wire_in, "rb") as wire:
            for line in wire:
                if not self.serving.is_set():
                    try:
                        message = json.loads(line)
                    except ValueError:
                        message = None  # not JSON: the SDK answers with its parse error
                    reply, pass_on = self._early.answer(message)
                    if reply is not None:
                        data = json.dumps(reply, separators=(",", ":")).encode() + b"\n"
                        self.send(data, early=True)
                    if not pass_on:
                        continue
                self._inbox.put(line)
        self._inbox.put(None)  # the client closed the wire: the SDK reads its end and stops

    def _copy_out(self) -> None:
        dropped = False
        while (item := self._out.get()) is not None:
            data, early = item
            with self._out_room:
                self._out_bytes -= len(data)
                self._out_room.notify()
            # The SDK's own answer to the initialize answered early is dropped, never ours.
            if not early and not dropped and self._early.initialize_id is not None:
                try:
                    message = json.loads(data)
                except ValueError:
                    message = None
                if isinstance(message, dict) and "method" not in message:
                    if message.get("id") == self._early.initialize_id:
                        dropped = True  # answered already, the same way
                        if "error" in message:  # cannot happen for what _handshake accepts
                            log.error("the SDK refused the initialize answered early")
                        continue
            _write_all(self._wire_out, data)


def serve_command() -> None:
    """Serve every LMCP tool over MCP stdio (configure with LMCP_HOME, LMCP_COLLECTOR_URL)."""
    from client.skills._token import exec_without_token, handed_over_settings
    from contract.catalogue import load_catalogue
    from contract.version import package_version

    exec_without_token()  # a long-running process never keeps the skills token in its environ
    early = EarlyAnswers(package_version(), lambda: tool_entries(load_catalogue()))
    bridge = Bridge.take_wire(early)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)

    import anyio

    from client.mcp_server import serve  # the SDK: the slow import
    from client.runtime import Runtime

    stdin, stdout = bridge.sdk_streams()
    with Runtime.from_settings(handed_over_settings()) as runtime:
        bridge.serving.set()
        anyio.run(serve, runtime.host, stdin, stdout)
    bridge.finish()


if __name__ == "__main__":  # pragma: no cover - ``python -m client.mcp_stdio``
    serve_command()
