"""Over MCP (the SDK's real client, ``lmcp mcp`` spawned), a call with a misnamed argument
names what the tool takes and what is required; a failing ``recipe_run`` carries ONE friction
hint, naming the step's tool."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest

from tests.mcp.conftest import mcp_session

CANARY = "canary-key-4471"


def _payload(result: types.CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def _hints(value: Any) -> list[dict[str, Any]]:
    """Every ``friction`` hint anywhere in an answer."""
    if isinstance(value, dict):
        found = [value["friction"]] if isinstance(value.get("friction"), dict) else []
        return found + [h for v in value.values() for h in _hints(v)]
    if isinstance(value, list):
        return [h for v in value for h in _hints(v)]
    return []


@pytest.mark.slow  # spawns ``lmcp mcp``
def test_mcp_answers_name_what_is_required_and_carry_one_hint(tmp_path: Path) -> None:
    env = {"LMCP_HOME": str(tmp_path / "home"), "LMCP_COLLECTOR_URL": "http://127.0.0.1:9"}

    async def run() -> tuple[dict[str, Any], dict[str, Any]]:
        async with mcp_session(env) as session:
            misnamed = await session.call_tool("read_note", {CANARY: "Today"})
            saved = await session.call_tool(
                "recipe_save",
                {
                    "manifest": {
                        "name": "Reads a missing note",
                        "steps": [{"tool": "read_note", "args": {"note_name": "Nope"}}],
                    }
                },
            )
            assert not saved.is_error, saved
            failed = await session.call_tool("recipe_run", {"name": "Reads a missing note"})
            return _payload(misnamed), _payload(failed)

    misnamed, failed = anyio.run(run)
    message = misnamed["error"]["message"]
    assert "'note_name'" in message and "'note_id'" in message  # what it takes
    assert CANARY not in json.dumps(misnamed)  # never the caller's key
    hints = _hints(failed)
    assert failed["ok"] is False and len(hints) == 1, failed
    assert hints[0]["tool_attempted"] == "read_note"
