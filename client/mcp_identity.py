"""What ``lmcp mcp`` says of itself: its name, its instructions, the handshake versions it
speaks, its capabilities and its tools.

The early answers (``client/mcp_stdio.py``, before the SDK has loaded) and the SDK's server
(``client/mcp_server.py``) both answer from here, so they cannot drift apart. SDK-free.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from contract.catalogue import Tool

__all__ = ["CAPABILITIES", "HANDSHAKE_VERSIONS", "INSTRUCTIONS", "SERVER_NAME", "tool_entries"]

SERVER_NAME = "lmcp"
INSTRUCTIONS = (
    "LMCP's local tools. When a tool fails, you may offer the user to send an anonymous "
    "friction signal with report_friction (enums only, never what was asked)."
)
#: The SDK's ``mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS``, oldest first (a test keeps
#: them equal): written out because importing the SDK is what the early answers must not wait for.
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
