"""A FIFO in the files root hangs neither ``read_file`` nor ``search_files`` (regular files only,
reads bounded by a deadline). (Over MCP: ``tests/mcp/test_fifo_keeps_the_server_answering.py``.)"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from client.host import ToolResult
from client.paths import LmcpHome
from tests._servers import HANG_S
from tests.tools.conftest import Call

posix_only = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs mkfifo")


def _unblocked(call: Call, tool: str, **args: Any) -> ToolResult:
    """Run a tool call in a thread; fail (instead of hanging the suite) if it blocks. A read
    that waits for a FIFO's writer waits for ever, so only a hang reaches ``HANG_S``."""
    out: list[ToolResult] = []
    worker = threading.Thread(target=lambda: out.append(call(tool, **args)), daemon=True)
    worker.start()
    worker.join(HANG_S)
    assert out, f"{tool} blocked (for {HANG_S:.0f} s)"
    return out[0]


def _root_with_fifo(home: LmcpHome) -> Path:
    root = home.files_root
    root.mkdir(parents=True, exist_ok=True)
    (root / "notes.txt").write_text("the needle is here\n", encoding="utf-8")
    os.mkfifo(root / "pipe")
    return root


@posix_only
def test_fifo_in_files_root_read_file_refuses_without_blocking(home: LmcpHome, call: Call) -> None:
    _root_with_fifo(home)
    result = _unblocked(call, "read_file", path="pipe")
    assert result.error is not None and result.error.code == "not_a_regular_file"
    assert call("read_file", path="notes.txt").result["content"] == "the needle is here\n"


@posix_only
def test_fifo_in_files_root_search_files_skips_it(home: LmcpHome, call: Call) -> None:
    _root_with_fifo(home)
    result = _unblocked(call, "search_files", query="needle")
    assert [m["path"] for m in result.result["matches"]] == ["notes.txt"]
    assert _unblocked(call, "search_files", query="pipe").result["count"] == 1  # by name
