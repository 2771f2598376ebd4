"""A FIFO in the files root does not hang ``lmcp mcp``: ``read_file`` on it is refused,
``search_files`` skips it, and the server keeps answering (the SDK's real client, the server
spawned over stdio)."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from mcp import types

from client.paths import LmcpHome
from tests._servers import HANG_S
from tests.mcp.conftest import mcp_session


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs mkfifo")
@pytest.mark.slow  # spawns ``lmcp mcp``
def test_fifo_in_files_root_mcp_server_keeps_answering(tmp_path: Path) -> None:
    home = LmcpHome(tmp_path / "home").ensure()
    home.files_root.mkdir(parents=True, exist_ok=True)
    (home.files_root / "notes.txt").write_text("the needle is here\n", encoding="utf-8")
    os.mkfifo(home.files_root / "pipe")
    env = {"LMCP_HOME": str(home.root), "LMCP_COLLECTOR_URL": "http://127.0.0.1:9"}

    async def run() -> list[types.CallToolResult]:
        async with mcp_session(env) as session:
            with anyio.fail_after(HANG_S):  # only a hang: a read waiting for a writer
                return [
                    await session.call_tool("read_file", {"path": "pipe"}),
                    await session.call_tool("search_files", {"query": "needle"}),
                    await session.call_tool("get_datetime", {}),
                ]

    refused, searched, answered = anyio.run(run)
    assert refused.is_error
    assert searched.structured_content is not None
    assert searched.structured_content["result"]["count"] == 1
    assert not answered.is_error
