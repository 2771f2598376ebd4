"""A bare MCP server: the baseline ``lmcp mcp`` is measured against (``bench_mcp``).

What anyone would write with the ``mcp`` 2.x SDK's low-level ``Server`` (2.x has no FastMCP):
the same tool list (each catalogue tool, its input schema by hand from the catalogue), and the
tool's own work done inline in the handler, with the answer LMCP gives, and no host around it:
no argument validation, ring, capture, failure context, consent or worker thread. Like
``lmcp mcp`` it drops the SDK's OpenTelemetry middleware, so the difference is LMCP's own.

- ``read_note``: looks the note up in a real notes folder (``BARE_NOTES``) and, as the note is
  missing, fails with LMCP's ``isError`` answer;
- ``get_datetime``: LMCP's own clock function, and its ``ok`` answer.

Run as ``python -m benchmarks._bare_mcp`` (stdio); it serves until stdin closes. With
``BARE_STDIO=lmcp`` it serves over ``lmcp mcp``'s own stdio (``client.mcp_stdio.Bridge``)
instead of the SDK's: the same transport, so what remains between the two is the host.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from client.errors import ToolFailure
from client.mcp_identity import tool_entries
from client.mcp_stdio import Bridge, EarlyAnswers
from client.tools import NotesStore, make_get_datetime, notes_handlers
from contract.catalogue import load_catalogue


def _answer(payload: dict[str, Any], *, is_error: bool) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(payload, ensure_ascii=False))],
        structured_content=payload,
        is_error=is_error,
    )


def build() -> Server[Any]:
    tools = [types.Tool.model_validate(entry) for entry in tool_entries(load_catalogue())]
    notes = notes_handlers(NotesStore(Path(os.environ["BARE_NOTES"])))
    work = {"read_note": notes["read_note"], "get_datetime": make_get_datetime()}

    async def on_list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = params.arguments or {}
        try:
            result = work[params.name](args)
        except ToolFailure as failure:
            error = {
                "class": failure.error_class.value,
                "code": failure.code,
                "message": failure.message,
            }
            friction = {"can_report": True, "tool_attempted": params.name}
            payload = {"ok": False, "outcome": "failed", "error": error, "friction": friction}
            return _answer(payload, is_error=True)
        return _answer({"ok": True, "outcome": "ok", "result": result}, is_error=False)

    server: Server[Any] = Server(
        "bare", version="0", on_list_tools=on_list_tools, on_call_tool=on_call_tool
    )
    server.middleware = []
    return server


async def _serve(stdin: Any = None, stdout: Any = None) -> None:
    server = build()
    async with stdio_server(stdin, stdout) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main() -> None:
    if os.environ.get("BARE_STDIO") != "lmcp":
        anyio.run(_serve)
        return
    bridge = Bridge.take_wire(EarlyAnswers("0", list))
    bridge.serving.set()  # nothing is answered early: the SDK answers everything
    anyio.run(_serve, *bridge.sdk_streams())
    bridge.finish()


if __name__ == "__main__":
    main()
