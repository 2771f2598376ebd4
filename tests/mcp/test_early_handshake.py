"""``lmcp mcp`` answers ``initialize`` and the tool list while the MCP SDK is still loading.

The SDK's import is made to wait (a stand-in ``mcp`` package first on the path blocks until the
test lets it go): an answer that came through the SDK could then never arrive, so reading both
answers proves they were given early. No clock is involved; only a hang is bounded.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest

from tests._processes import HANG_S, child_process

pytestmark = pytest.mark.slow

#: The stand-in SDK: its import waits for the gate file, then fails (the test is over by then).
_BLOCKING_MCP = """
import os, time
while not os.path.exists(os.environ["LMCP_TEST_SDK_GATE"]):
    time.sleep(0.01)
raise ImportError("the stand-in SDK")
"""


def _line(stream: IO[bytes]) -> dict[str, Any]:
    ready, _, _ = select.select([stream], [], [], HANG_S)
    assert ready, "no answer while the SDK was loading"
    line = stream.readline()
    assert line, "the server closed the wire"
    answer: dict[str, Any] = json.loads(line)
    return answer


def test_the_handshake_and_tool_list_are_answered_before_the_sdk_loads(tmp_path: Path) -> None:
    stand_in = tmp_path / "stand_in" / "mcp"
    stand_in.mkdir(parents=True)
    (stand_in / "__init__.py").write_text(_BLOCKING_MCP)
    gate = tmp_path / "gate"
    env = {
        "LMCP_HOME": str(tmp_path / "home"),
        "PATH": os.environ["PATH"],
        "PYTHONPATH": str(stand_in.parent),
        "LMCP_TEST_SDK_GATE": str(gate),
    }
    wire = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "test-client", "version": "1.0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]  # fmt: skip
    command = [sys.executable, "-m", "client.mcp_stdio"]
    with child_process(
        command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    ) as child:
        stdin, stdout = child.popen.stdin, child.popen.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in wire))
            stdin.flush()
            initialized, listed = _line(stdout), _line(stdout)
        finally:
            gate.touch()  # the stand-in's import ends, and with it the server
    assert initialized["id"] == 1 and initialized["result"]["serverInfo"]["name"] == "lmcp"
    assert listed["id"] == 2 and {t["name"] for t in listed["result"]["tools"]} >= {
        "report_friction",
        "get_datetime",
    }
