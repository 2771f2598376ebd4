"""``lmcp mcp``: every catalogue tool served over MCP stdio (``mcp`` 2.x, low-level ``Server``).

The SDK's low-level server neither validates arguments nor hides exception text (it turns an
exception into a JSON-RPC error carrying ``str(exc)``, which may hold a value). So this module
answers every call itself:

- ``tools/list``: each catalogue tool with its exact hand-written input schema;
- ``tools/call`` of a catalogue tool: the ``ToolHost`` validates the arguments with
  ``jsonschema`` and dispatches (ring, FailureContext); invalid arguments or a failed tool give
  an ``isError`` result; the result is also ``structuredContent``;
- ``tools/call`` of an unknown name: recorded in the ring (as ``other``), then a protocol error;
- any exception: an ``isError`` result with a generic message (only the exception's TYPE is
  logged, to stderr).

``LMCP_HOME`` and ``LMCP_COLLECTOR_URL`` configure it (``client.settings.ClientSettings``). The
program and its stdio (the handshake answered before this module is even imported) are
``client/mcp_stdio.py``'s: ``python -m client.mcp_stdio``, or ``lmcp mcp``.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import AsyncIterable, Mapping
from typing import Any, Protocol, cast

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from client.host import ToolHost, ToolResult
from client.mcp_identity import INSTRUCTIONS, SERVER_NAME, tool_entries
from client.recipes import cancel_running
from contract.catalogue import Effect
from contract.schema import Outcome
from contract.version import package_version

__all__ = ["GENERIC_ERROR", "build_server", "list_tools", "serve", "to_call_result"]

log = logging.getLogger(__name__)

#: Read tools running at once beside the one-at-a-time calls (each holds a worker thread).
_READERS = 4
#: The one tool with a lane of its own: a report never waits for a tool, nor a tool for it.
_REPORT = "report_friction"
#: What an agent sees when LMCP itself broke: never the exception's text.
GENERIC_ERROR = "LMCP could not complete this call (an internal error). Nothing was changed."


def list_tools(host: ToolHost) -> list[types.Tool]:
    """Every catalogue tool, with its input schema exactly as the catalogue holds it."""
    return [types.Tool.model_validate(entry) for entry in tool_entries(host.catalogue)]


#: Built once: ``json.dumps`` with options builds a new encoder on every call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)


def _content(payload: Mapping[str, Any], *, is_error: bool) -> types.CallToolResult:
    text = _ENCODER.encode(payload)
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content=dict(payload),
        is_error=is_error,
    )


def to_call_result(result: ToolResult) -> types.CallToolResult:
    """The call's answer; ``isError`` only when it failed. An empty answer (no note, no match)
    is an answer: ``ok``, not an error, and still with its friction hint (nothing useful came
    back, which the agent may report)."""
    payload = result.to_dict()
    if result.outcome is Outcome.empty:
        payload["ok"] = True
    return _content(payload, is_error=not payload["ok"])


def build_server(host: ToolHost) -> Server[Any]:
    """A low-level MCP server over ``host``.

    Calls run in worker threads (tools do blocking file I/O, recipes pause), in three lanes:
    read tools change nothing and run side by side (at most ``_READERS`` at once), so a long
    walk of a folder never holds up the server's other answers; ``report_friction`` runs one
    at a time in its own lane, so a report waiting on the network never holds up a tool; every
    other call (write and send tools, recipes) runs one at a time. When the client cancels a
    call, a running recipe is told to stop; the worker keeps its lane's lock until it has, so
    the next call never overlaps it.
    """
    one_at_a_time = threading.Lock()
    readers = anyio.CapacityLimiter(_READERS)
    tools = list_tools(host)
    locks: dict[str, threading.Lock | None] = {
        t.name: None if t.effect is Effect.read else one_at_a_time for t in host.catalogue
    }
    locks[_REPORT] = threading.Lock()

    def dispatch(name: str, arguments: dict[str, Any]) -> ToolResult:
        lock = locks.get(name, one_at_a_time)
        if lock is None:
            return host.dispatch(name, arguments)
        with lock:
            return host.dispatch(name, arguments)

    async def in_worker(name: str, arguments: dict[str, Any]) -> ToolResult:
        limiter = readers if locks.get(name, one_at_a_time) is None else None
        try:
            return await anyio.to_thread.run_sync(
                dispatch, name, arguments, abandon_on_cancel=True, limiter=limiter
            )
        except anyio.get_cancelled_exc_class():
            cancel_running()
            raise

    async def on_list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        name = params.name
        arguments: dict[str, Any] = dict(params.arguments or {})
        if name not in host.catalogue:
            await in_worker(name, arguments)
            raise MCPError(
                code=types.INVALID_PARAMS, message="Unknown tool: not in LMCP's catalogue"
            )
        try:
            return to_call_result(await in_worker(name, arguments))
        except Exception as exc:  # never the text: it may hold a value
            log.error("tools/call failed with %s", type(exc).__name__)
            return _content(
                {
                    "ok": False,
                    "outcome": "failed",
                    "error": {
                        "class": "internal_error",
                        "code": "internal_error",
                        "message": GENERIC_ERROR,
                    },
                },
                is_error=True,
            )

    server: Server[Any] = Server(
        SERVER_NAME,
        version=package_version(),
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )
    # No spans: the SDK's default OpenTelemetry middleware would record tool names and request
    # details into whatever tracer the environment configures. LMCP emits nothing of the kind.
    server.middleware = []
    return server


class _Writer(Protocol):
    async def write(self, text: str, /) -> int: ...

    async def flush(self) -> None: ...


async def serve(
    host: ToolHost,
    stdin: AsyncIterable[str] | None = None,
    stdout: _Writer | None = None,
) -> None:
    """Serve ``host`` over stdio (this process's, or the given streams) until stdin closes.

    Failure listeners run off the call path meanwhile (``ToolHost.listeners_off_the_call_path``):
    a call answers before its failure is written down for ``lmcp signals preview``.
    """
    server = build_server(host)
    # stdio_server iterates stdin and awaits stdout.write/flush: any such pair will do.
    streams = stdio_server(cast(Any, stdin), cast(Any, stdout))
    with host.listeners_off_the_call_path():
        async with streams as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":  # pragma: no cover - the program is client/mcp_stdio.py
    raise SystemExit("run `lmcp mcp` or `python -m client.mcp_stdio`")
