"""A long walk does not hold ``lmcp mcp``'s dispatch: while ``list_files`` walks a large tree,
the server keeps answering other calls (the MCP SDK's real client over stdio)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest

from client.paths import LmcpHome
from tests.mcp.conftest import mcp_session

pytestmark = [
    pytest.mark.slow,  # starts a process
    pytest.mark.skipif(os.name != "posix", reason="builds the tree with symlinks"),
]

#: Entries the walk examines (symlinks out of the root: examined, never listed, so the
#: ``limit`` never ends it): long enough to be under way across many answers.
_ENTRIES = 30_000


def test_other_calls_are_answered_while_list_files_walks(tmp_path: Path) -> None:
    home = LmcpHome(tmp_path / "home").ensure()
    tree = home.files_root / "big"
    tree.mkdir(parents=True)
    fd = os.open(tree, os.O_RDONLY)
    try:
        for n in range(_ENTRIES):
            os.symlink(str(tmp_path), f"out-{n:06d}", dir_fd=fd)
    finally:
        os.close(fd)
    env = {"LMCP_HOME": str(home.root), "LMCP_COLLECTOR_URL": "http://127.0.0.1:9"}

    async def run() -> tuple[types.CallToolResult, int]:
        walked: list[types.CallToolResult] = []
        async with mcp_session(env) as session, anyio.create_task_group() as tasks:

            async def walk() -> None:
                walked.append(await session.call_tool("list_files", {"recursive": True}))

            tasks.start_soon(walk)
            answered = 0
            while not walked:  # each answer waits for the one before: none can hide in a batch
                clock = await session.call_tool("get_datetime", {})
                assert not clock.is_error
                answered += 1 if not walked else 0
        return walked[0], answered

    walked, answered_meanwhile = anyio.run(run)
    result: dict[str, Any] = (walked.structured_content or {})["result"]
    # The walk ran to its end: the one folder, the symlinks out of the root skipped.
    assert (result["entries"], result["truncated"]) == (
        [{"path": "big", "type": "folder", "size": None}],
        False,
    )
    # The old server took one call at a time: at most the first call slipped in before the
    # walk took the lane. Now every call is answered while it walks.
    assert answered_meanwhile >= 3, answered_meanwhile
