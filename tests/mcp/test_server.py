"""``lmcp mcp`` through the MCP SDK's real client over stdio, in a spawned process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import duckdb
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError

from client.host import ToolHost, ToolResult
from client.mcp_server import GENERIC_ERROR, build_server
from client.runtime import Runtime
from contract.catalogue import raw_catalogue
from tests.mcp.conftest import mcp_session

pytestmark = pytest.mark.slow  # every test here starts a process


def _env(tmp_path: Path, *, signals: str | None = None, **extra: str) -> dict[str, str]:
    """``signals``: the user's choice (off, local, on), written to the settings file first."""
    if signals is not None:
        home = tmp_path / "home"
        home.mkdir(parents=True, exist_ok=True)
        (home / "settings.json").write_text(json.dumps({"anonymous_signals": signals}))
    return {
        "LMCP_HOME": str(tmp_path / "home"),
        "LMCP_COLLECTOR_URL": "http://127.0.0.1:9",
        **extra,
    }


def _payload(result: types.CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict)
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    assert json.loads(text.text) == result.structured_content
    return result.structured_content


@pytest.fixture(scope="module")
def session_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """ONE spawned ``lmcp mcp`` (spawning costs seconds), the calls the tests below examine."""
    env = _env(tmp_path_factory.mktemp("mcp"))

    async def run() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with mcp_session(env) as session:
            out["tools"] = (await session.list_tools()).tools
            out["saved"] = await session.call_tool(
                "recipe_save",
                {
                    "manifest": {
                        "name": "Demo morning brief",
                        "params": [{"name": "title", "type": "string"}],
                        "steps": [
                            {"tool": "get_datetime"},
                            {
                                "tool": "create_note",
                                "args": {
                                    "note_name": "${title}",
                                    "body": "at ${steps[0].result.iso}",
                                },
                            },
                        ],
                    }
                },
            )
            args = {"name": "Demo morning brief", "params": {"title": "Today"}}
            out["preview"] = await session.call_tool("recipe_run", args)
            out["ran"] = await session.call_tool("recipe_run", {**args, "confirm": True})
            out["note"] = await session.call_tool("read_note", {"note_name": "Today"})
            out["invalid"] = await session.call_tool("read_note", {"note_name": 5})
            out["undeclared"] = await session.call_tool("get_datetime", {"canary-key": "x"})
            out["missing"] = await session.call_tool("read_note", {"note_name": "Nope-canary"})
            try:
                await session.call_tool("no_such_tool_canary", {})
            except MCPError as exc:
                out["unknown"] = exc
        return out

    return anyio.run(run)


def test_lists_every_catalogue_tool_with_its_exact_schema(session_results: dict[str, Any]) -> None:
    tools: list[types.Tool] = session_results["tools"]
    expected = {t["name"]: t["input_schema"] for t in raw_catalogue()["tools"]}
    assert {t.name: t.input_schema for t in tools} == expected
    by_name = {t.name: t for t in tools}
    assert by_name["read_note"].annotations.read_only_hint is True  # type: ignore[union-attr]
    assert by_name["send_email"].annotations.destructive_hint is True  # type: ignore[union-attr]


def test_a_recipe_saved_and_run_over_mcp(session_results: dict[str, Any]) -> None:
    saved, preview = session_results["saved"], session_results["preview"]
    ran, note = session_results["ran"], session_results["note"]
    assert not saved.is_error and _payload(saved)["result"]["step_count"] == 2
    assert not preview.is_error and _payload(preview)["outcome"] == "preview"
    assert not ran.is_error and _payload(ran)["result"]["ok"] is True
    assert _payload(note)["result"]["body"].startswith("at 20")


def test_invalid_arguments_are_an_is_error_result(session_results: dict[str, Any]) -> None:
    invalid, undeclared = session_results["invalid"], session_results["undeclared"]
    assert invalid.is_error and _payload(invalid)["error"]["class"] == "invalid_arguments"
    assert "argument 'note_name'" in _payload(invalid)["error"]["message"]
    assert undeclared.is_error and "canary" not in json.dumps(_payload(undeclared))


def test_a_tool_failure_is_an_is_error_result_offering_friction(
    session_results: dict[str, Any],
) -> None:
    missing = session_results["missing"]
    assert missing.is_error and _payload(missing)["error"]["class"] == "not_found"
    assert _payload(missing)["friction"] == {"can_report": True, "tool_attempted": "read_note"}
    assert "canary" not in json.dumps(_payload(missing)).lower()


def test_an_unknown_tool_is_a_protocol_error(session_results: dict[str, Any]) -> None:
    unknown = session_results.get("unknown")
    assert isinstance(unknown, MCPError)
    assert unknown.code == types.INVALID_PARAMS and "canary" not in unknown.message


class _Exploding(ToolHost):
    def dispatch(self, name: str, args: Any = None) -> ToolResult:
        raise RuntimeError("value CANARY-42 leaked into an exception")


def test_an_exception_becomes_is_error_with_a_generic_message() -> None:
    from mcp.client._memory import InMemoryTransport

    server = build_server(_Exploding())

    async def run() -> types.CallToolResult:
        async with InMemoryTransport(server) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return await s.call_tool("get_datetime", {})

    result = anyio.run(run)
    assert result.is_error
    assert _payload(result)["error"]["message"] == GENERIC_ERROR
    assert "CANARY" not in result.model_dump_json()


def test_a_tool_failure_reported_with_report_friction_reaches_a_real_collector(
    tmp_path: Path,
) -> None:
    from collector.settings import CollectorSettings
    from tests._servers import running_collector

    settings = CollectorSettings(db_path=tmp_path / "signals.duckdb")
    with running_collector(settings) as url:

        async def run() -> tuple[Any, Any]:
            env = _env(tmp_path, signals="on", LMCP_COLLECTOR_URL=url)
            async with mcp_session(env) as session:
                failed = await session.call_tool("read_note", {"note_name": "Diary CANARY-7"})
                reported = await session.call_tool(
                    "report_friction",
                    {
                        "friction_type": "cannot_complete",
                        "error_category": "not_found",
                        "intent_category": "manage_note",
                        "tool_attempted": "read_note",
                    },
                )
                return failed, reported

        failed, reported = anyio.run(run)
        outcome = _payload(reported)
        assert failed.is_error and not reported.is_error, outcome
        if outcome["result"].get("sent") is not True:
            # Queued (delivery is in the background): the server's delivery thread sends it,
            # at the latest when the server closes; a flush delivers whatever is left.
            assert outcome["result"].get("queued") is True, outcome
            env = _env(tmp_path, signals="on", LMCP_COLLECTOR_URL=url)
            with Runtime.from_env(env) as rt:
                assert rt.reporter.flush()["delivered"] in (0, 1)
    with duckdb.connect(str(settings.db_path), read_only=True) as con:
        rows = con.execute("SELECT tool_attempted, error_class FROM signals").fetchall()
    assert rows == [("read_note", "not_found")]
    assert b"CANARY" not in settings.db_path.read_bytes()


def test_a_cancelled_call_stops_the_recipe_waiting_in_it(tmp_path: Path) -> None:
    from mcp.client._memory import InMemoryTransport

    from client.apps import StaticAppProbe
    from client.paths import LmcpHome
    from client.recipes import recipe_handlers
    from client.tools import builtin_handlers

    home = LmcpHome(tmp_path / "home").ensure()
    host = ToolHost(app_probe=StaticAppProbe())
    host.register_all(builtin_handlers(home, host.app_probe))
    host.register_all(recipe_handlers(home, host))
    manifest = {"name": "Slow", "steps": [{"wait": 120}, {"tool": "get_datetime"}]}
    assert host.dispatch("recipe_save", {"manifest": manifest}).ok
    server = build_server(host)

    async def run() -> types.CallToolResult:
        async with InMemoryTransport(server) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            with pytest.raises(MCPError):  # the client times out and cancels the request
                await s.call_tool("recipe_run", {"name": "Slow"}, read_timeout_seconds=0.3)
            return await s.call_tool("get_datetime", {})  # waits for the dispatch lock

    after = anyio.run(run)
    assert not after.is_error
    # The recipe_run failed (cancelled in its pause): one sat out to its end would be ok.
    assert host.ring.snapshot()[-2].outcome.value == "failed"
