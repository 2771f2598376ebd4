"""The three Cloud Skill tools through ``lmcp mcp`` with the MCP SDK's real client (stdio), the
server process talking to the real skills service on loopback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest

from tests.mcp.conftest import mcp_session
from tests.skills.conftest import token_of

pytestmark = pytest.mark.slow  # every test here starts a process


def _payload(result: types.CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def test_save_recall_and_execute_a_cloud_skill_over_mcp(
    base_url: str, slug: str, tmp_path: Path
) -> None:
    env = {
        "LMCP_HOME": str(tmp_path / "home"),
        "LMCP_COLLECTOR_URL": "http://127.0.0.1:9",  # signals are off; nobody listens there
        "LMCP_SKILLS_URL": base_url,
        "LMCP_SKILLS_TOKEN": token_of("ann"),
    }
    script = "import sys\nprint('checked', *sys.argv[1:])\n"
    components = json.dumps([{"type": "script", "logical_path": "check.py", "content": script}])

    async def run() -> dict[str, types.CallToolResult]:
        out: dict[str, types.CallToolResult] = {}
        async with mcp_session(env) as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert set(tools["save_cloud_skill"].input_schema["properties"]) == {
                "name",
                "instructions",
                "slug",
                "description",
                "publish",
                "components_json",
            }
            out["save"] = await session.call_tool(
                "save_cloud_skill",
                {
                    "name": "Release check",
                    "instructions": "Run check.py and report.",
                    "slug": slug,
                    "description": f"mcp {slug}",
                    "components_json": components,
                },
            )
            saved = _payload(out["save"])["result"]["data"]
            out["discover"] = await session.call_tool("recall_cloud_skill", {"query": slug})
            out["root"] = await session.call_tool("recall_cloud_skill", {"slug": slug})
            pin = {
                "slug": slug,
                "revision_id": saved["revision_id"],
                "canonical_hash": saved["canonical_hash"],
                "logical_path": "check.py",
                "args": ["release-1"],
            }
            out["preview"] = await session.call_tool("execute_cloud_skill", pin)
            out["run"] = await session.call_tool("execute_cloud_skill", {**pin, "confirm": True})
            out["mismatch"] = await session.call_tool(
                "execute_cloud_skill", {**pin, "canonical_hash": "f" * 64, "confirm": True}
            )
            out["invalid"] = await session.call_tool(
                "save_cloud_skill", {"name": "", "instructions": "x", "slug": slug}
            )
        return out

    out = anyio.run(run)
    assert not out["save"].is_error
    saved = _payload(out["save"])["result"]
    assert (saved["object"], saved["render_status"]) == ("cloud_skill", "published")
    found = _payload(out["discover"])["result"]["data"]["results"]
    assert [r["slug"] for r in found] == [slug]
    assert _payload(out["root"])["result"]["data"]["manifest"][0]["path"] == "check.py"
    preview = _payload(out["preview"])
    assert (preview["outcome"], preview["result"]["preview"]) == ("preview", True)
    ran = _payload(out["run"])
    assert not out["run"].is_error and ran["result"]["stdout"] == "checked release-1\n"
    assert out["mismatch"].is_error
    assert _payload(out["mismatch"])["error"]["code"] == "revision_mismatch"
    invalid = _payload(out["invalid"])
    assert out["invalid"].is_error and invalid["error"]["code"] == "validation_failed"
    assert invalid["friction"] == {"can_report": True, "tool_attempted": "save_cloud_skill"}
