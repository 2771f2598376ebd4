from __future__ import annotations

import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

REPO = Path(__file__).resolve().parents[2]


def server_command() -> tuple[str, list[str]]:
    """``lmcp mcp`` as users register it (the venv's console script), else the module."""
    script = Path(sys.executable).with_name("lmcp")
    if script.exists() or shutil.which("lmcp"):
        return str(script if script.exists() else shutil.which("lmcp")), ["mcp"]
    return sys.executable, ["-m", "client.mcp_stdio"]


@asynccontextmanager
async def mcp_session(env: dict[str, str]) -> AsyncIterator[ClientSession]:
    """The MCP SDK's real client, talking to ``lmcp mcp`` spawned over stdio."""
    command, args = server_command()
    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(REPO))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session
