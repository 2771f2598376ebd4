"""``lmcp mcp`` over stdio: the handshake answered at once, everything else by the MCP SDK.

Importing the SDK (its protocol types alone are hundreds of pydantic models) and building the
runtime take about a second, and an agent's client waits for ``initialize`` and the tool list
before it can do anything. So ``serve_command`` first takes the wire off the standard streams
(from then on fd 0 reads the null device and fd 1 writes to stderr, as the SDK's own stdio
transport arranges: nothing printed can reach the wire), starts two threads, then loads the SDK:

- the reader answers, until the SDK serves, the requests it can answer exactly as the SDK does
  (``EarlyAnswers``: ``initialize`` with a handshake version, then ``tools/list`` and ``ping``)
  and passes everything else on, in order. ``initialize`` is also passed on, so the SDK's
  session is initialized as usual;
- the writer copies the SDK's output to the wire, less its answer to that ``initialize``.

Field for field, the early answers are the SDK's: ``tests/mcp/test_stdio.py`` compares them for
every handshake version. A tool call waits for the SDK; the runtime loads before it serves.
"""

from __future__ import annotations

import io
import json
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from contract.catalogue import Tool

__all__ = [
    "CAPABILITIES",
    "HANDSHAKE_VERSIONS",
    "INSTRUCTIONS",
    "SERVER_NAME",
    "EarlyAnswers",
    "serve_command",
    "tool_entries",
]

log = logging.getLogger(__name__)
SERVER_NAME = "lmcp"
INSTRUCTIONS = (
    "LMCP's local tools. When a tool fails, you may offer the user to send an anonymous "
    "friction signal with report_friction (enums only, never what was asked)."
)
#: The SDK's ``mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS``, oldest first (a test keeps
#: them equal): written out because importing the SDK is what this module must not wait for.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
#: What the server offers (``Server.get_capabilities`` of a server with tools only).
CAPABILITIES: Mapping[str, Any] = {"tools": {"listChanged": False}}


def tool_entries(tools: Iterable[Tool]) -> list[dict[str, Any]]:
    """Each catalogue tool as ``tools/list`` lists it: its exact input schema, its summary and
    its hints (read-only, asks its own confirmation, sends)."""
    from contract.catalogue import Effect

    return [
        {
            "name": tool.name,
            "description": tool.summary,
            "inputSchema": json.loads(json.dumps(tool.input_schema)),
            "annotations": {
                "readOnlyHint": tool.effect is Effect.read,
                "destructiveHint": tool.requires_confirmation,
                "openWorldHint": tool.effect is Effect.send,
            },
        }
        for tool in tools
    ]


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


class _Bridge:
    """The two threads between the wire and the SDK's stdio (a pipe each way)."""

    def __init__(self, wire_in: int, wire_out: int, early: EarlyAnswers) -> None:
        self._wire_in, self._wire_out, self._early = wire_in, wire_out, early
        self._to_sdk_r, self._to_sdk_w = os.pipe()
        self._from_sdk_r, self._from_sdk_w = os.pipe()
        self._wire_lock = threading.Lock()
        #: Set when the SDK reads its stdin: from then on every message is its to answer.
        self.serving = threading.Event()
        self._reader = threading.Thread(target=self._read_wire, name="mcp-wire-in", daemon=True)
        self._writer = threading.Thread(target=self._copy_out, name="mcp-wire-out", daemon=True)

    def start(self) -> None:
        self._reader.start()
        self._writer.start()

    def sdk_streams(self) -> tuple[io.TextIOWrapper, io.TextIOWrapper]:
        """The SDK's stdin and stdout, as its stdio transport wraps the real ones."""
        stdin = io.TextIOWrapper(
            os.fdopen(self._to_sdk_r, "rb"), encoding="utf-8", errors="replace"
        )
        return stdin, io.TextIOWrapper(os.fdopen(self._from_sdk_w, "wb"), encoding="utf-8")

    def finish(self, stdout: io.TextIOWrapper) -> None:
        """After the SDK stopped: close its stdout, then let the writer drain it."""
        stdout.close()
        self._writer.join()

    def _send(self, data: bytes) -> None:
        with self._wire_lock:
            _write_all(self._wire_out, data)

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
                        self._send(json.dumps(reply, separators=(",", ":")).encode() + b"\n")
                    if not pass_on:
                        continue
                _write_all(self._to_sdk_w, line)
        os.close(self._to_sdk_w)  # the client closed the wire: the SDK reads EOF and stops

    def _copy_out(self) -> None:
        dropped = False
        with os.fdopen(self._from_sdk_r, "rb") as sdk:
            for line in sdk:
                if not dropped and self._early.initialize_id is not None:
                    try:
                        message = json.loads(line)
                    except ValueError:
                        message = None
                    if isinstance(message, dict) and "method" not in message:
                        if message.get("id") == self._early.initialize_id:
                            dropped = True  # answered already, the same way
                            if "error" in message:  # cannot happen for what _handshake accepts
                                log.error("the SDK refused the initialize answered early")
                            continue
                self._send(line)


def serve_command() -> None:
    """Serve every LMCP tool over MCP stdio (configure with LMCP_HOME, LMCP_COLLECTOR_URL)."""
    from client.skills._token import exec_without_token, handed_over_settings
    from contract.catalogue import load_catalogue
    from contract.version import package_version

    exec_without_token()  # a long-running process never keeps the skills token in its environ
    early = EarlyAnswers(package_version(), lambda: tool_entries(load_catalogue()))
    bridge = _Bridge(*_take_wire(), early)
    bridge.start()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)

    import anyio

    from client.mcp_server import serve  # the SDK: the slow import
    from client.runtime import Runtime

    stdin, stdout = bridge.sdk_streams()
    with Runtime.from_settings(handed_over_settings()) as runtime:
        bridge.serving.set()
        anyio.run(serve, runtime.host, anyio.wrap_file(stdin), anyio.wrap_file(stdout))
    bridge.finish(stdout)
