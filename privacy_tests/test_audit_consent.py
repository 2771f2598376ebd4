"""Consent audit: with anonymous signals OFF, by any of the ways a user can turn them off, the same
workload of failing tool calls, recipe runs and friction reports opens ZERO sockets (guarded at
the socket layer), writes no outbox, no sent log and no latest-failure file, and queues nothing.
Turning signals off purges an outbox that holds signals.

The table is golang/telemetry's ``TestRun_ModeHandling`` at the socket layer: each mode gives the
expected (network attempts, files written)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from client.runtime import Runtime
from lmcp.cli import app as lmcp
from privacy_tests.audit.canaries import CanaryKind, canary_of
from privacy_tests.audit.sockets import SocketGuard
from tests._servers import counting_listener, run_child

REPO = Path(__file__).resolve().parent.parent
NOBODY = "http://127.0.0.1:9"  # discard port: never a collector; the guard refuses it anyway


def _settings(value: object) -> Callable[[Path], None]:
    def write(home: Path) -> None:
        (home / "settings.json").write_text(json.dumps({"anonymous_signals": value}))

    return write


def _unreadable(home: Path) -> None:
    (home / "settings.json").mkdir()  # reading a directory fails: fail closed


def _malformed(home: Path) -> None:
    (home / "settings.json").write_bytes(b'{"anonymous_signals": tru')


def _nothing(home: Path) -> None:
    return None


#: mode -> (prepare LMCP_HOME, extra environment)
OFF_MODES: dict[str, tuple[Callable[[Path], None], dict[str, str]]] = {
    "settings file says off": (_settings(False), {}),
    "no settings file": (_nothing, {}),
    "DO_NOT_TRACK=1 over a settings file that says on": (_settings(True), {"DO_NOT_TRACK": "1"}),
    "LMCP_ANONYMOUS_SIGNALS=0 over settings on": (_settings(True), {"LMCP_ANONYMOUS_SIGNALS": "0"}),
    "LMCP_ANONYMOUS_SIGNALS=yes (not 1)": (_settings(True), {"LMCP_ANONYMOUS_SIGNALS": "yes"}),
    "unreadable settings file": (_unreadable, {}),
    "malformed settings file": (_malformed, {}),
    "unknown setting": (_settings("true"), {}),
    # The environment can only restrict: "1" never turns signals on.
    "LMCP_ANONYMOUS_SIGNALS=1, settings off": (
        _settings("off"),
        {"LMCP_ANONYMOUS_SIGNALS": "1"},
    ),
    "LMCP_ANONYMOUS_SIGNALS=1 with no settings file": (_nothing, {"LMCP_ANONYMOUS_SIGNALS": "1"}),
}

STATE_FILES = ("outbox.json", "sent.jsonl", "last_failure.json", "outbox.corrupt.json")


def workload(rt: Runtime) -> list[dict[str, Any]]:
    """Failures of every kind a user meets, then the agent reports them, then a flush."""
    path = canary_of(CanaryKind.home_path_macos, "cnryconsent0path").text
    title = canary_of(CanaryKind.note_title, "cnryconsent0note").text
    host = rt.host
    host.dispatch("read_note", {"note_name": title})  # not found
    host.dispatch("read_file", {"path": path})  # escapes the root / not found
    host.dispatch("list_notes", {"limit": "many"})  # invalid type
    host.dispatch("no_such_tool", {"x": 1})  # unknown tool
    host.dispatch("recipe_run", {"name": "no such recipe", "params": {}})  # recipe failure
    host.dispatch("send_email", {"to": ["a@example.com"], "subject": "s", "body": "b"})  # preview
    replies = []
    for tool in ("read_note", "read_file", "recipe_run", None):
        args: dict[str, Any] = {"friction_type": "cannot_complete", "attempt_count": 2}
        if tool is not None:
            args["tool_attempted"] = tool
        replies.append(host.dispatch("report_friction", args).to_dict())
    replies.append({"flush": rt.reporter.flush()})
    return replies


def _home(tmp_path: Path, prepare: Callable[[Path], None]) -> Path:
    home = tmp_path / "lmcp-home"
    home.mkdir()
    prepare(home)
    return home


@pytest.mark.parametrize("mode", list(OFF_MODES))
def test_off_opens_no_socket_and_writes_nothing(tmp_path: Path, mode: str) -> None:
    prepare, extra = OFF_MODES[mode]
    home = _home(tmp_path, prepare)
    env = {"LMCP_HOME": str(home), "LMCP_COLLECTOR_URL": NOBODY, **extra}
    with SocketGuard(block=True) as guard:
        rt = Runtime.from_env(env)
        try:
            replies = workload(rt)
        finally:
            rt.close()
    assert guard.attempts == [], f"{mode}: network attempts with signals off: {guard.attempts}"
    reports = [r for r in replies if "flush" not in r]
    assert all(r["result"] == {"sent": False, "reason": "anonymous_signals_off"} for r in reports)
    assert replies[-1] == {"flush": {"delivered": 0, "rejected": 0, "pending": 0}}
    written = [name for name in STATE_FILES if (home / name).exists()]
    assert written == [], f"{mode}: signal state written with signals off: {written}"
    assert len(rt.outbox) == 0


def test_on_is_the_control_the_guard_sees_the_connection(tmp_path: Path) -> None:
    """The same workload with signals ON does try the network (refused by the guard) and queues:
    the guard and the file checks above can fail."""
    home = _home(tmp_path, _settings(True))
    env = {"LMCP_HOME": str(home), "LMCP_COLLECTOR_URL": NOBODY}
    with SocketGuard(block=True) as guard:
        rt = Runtime.from_env(env)
        rt.sender._sleep = lambda s: None  # noqa: SLF001 - no real back-off in a test
        try:
            replies = workload(rt)
        finally:
            rt.close()
    assert guard.count > 0
    assert any(r.get("result", {}).get("queued") for r in replies)
    assert (home / "outbox.json").exists() and (home / "last_failure.json").exists()


def _queued_home(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    home = _home(tmp_path, _settings(True))
    env = {"LMCP_HOME": str(home), "LMCP_COLLECTOR_URL": NOBODY}
    with SocketGuard(block=True):
        rt = Runtime.from_env(env)
        rt.sender._sleep = lambda s: None  # noqa: SLF001
        try:
            workload(rt)
        finally:
            rt.close()
    assert len(Runtime.from_env(env).outbox) >= 3, "the outbox should hold the queued reports"
    return home, env


def test_turning_off_purges_a_non_empty_outbox(tmp_path: Path) -> None:
    home, env = _queued_home(tmp_path)
    rt = Runtime.from_env(env)
    with SocketGuard(block=True) as guard:
        rt.consent.set_enabled(False)
        assert rt.reporter.flush() == {"delivered": 0, "rejected": 0, "pending": 0}
    rt.close()
    assert guard.attempts == []
    assert not (home / "outbox.json").exists() and not (home / "last_failure.json").exists()
    assert len(rt.outbox) == 0


@pytest.mark.slow
def test_lmcp_signals_off_purges_the_outbox(tmp_path: Path) -> None:
    home, env = _queued_home(tmp_path)
    with SocketGuard(block=True) as guard:
        result = CliRunner().invoke(lmcp, ["signals", "off"], env=env)
    assert result.exit_code == 0, result.output
    assert guard.attempts == []
    assert not (home / "outbox.json").exists()
    assert json.loads((home / "settings.json").read_text())["anonymous_signals"] == "off"


# -- the MCP server process: no connection reaches a listening "collector" --------------------


_MCP_SCRIPT = """
import anyio, json, sys
from mcp import Client
from mcp.client.stdio import StdioServerParameters

async def main():
    params = StdioServerParameters(command=sys.executable, args=["-m", "client.mcp_stdio"],
                                   env=json.loads(sys.argv[1]), cwd=sys.argv[2])
    async with Client(params) as client:
        await client.call_tool("read_note", {"note_name": "cnryconsentmcp0"})
        await client.call_tool("recipe_run", {"name": "cnryconsentmcp1", "params": {}})
        out = await client.call_tool("report_friction", {"friction_type": "cannot_complete"})
        print(json.dumps(out.structured_content))

anyio.run(main)
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "prepare", "extra", "connections"),
    [
        ("off: DO_NOT_TRACK=1", _settings(True), {"DO_NOT_TRACK": "1"}, 0),
        ("off: no settings file", _nothing, {}, 0),
        (
            "off: settings off, LMCP_ANONYMOUS_SIGNALS=1",
            _settings("off"),
            {"LMCP_ANONYMOUS_SIGNALS": "1"},
            0,
        ),
        ("on: the control", _settings(True), {}, 1),
    ],
    ids=["dnt", "no-settings", "env-cannot-turn-on", "on-control"],
)
def test_mcp_server_process_connects_only_when_on(
    tmp_path: Path,
    mode: str,
    prepare: Callable[[Path], None],
    extra: dict[str, str],
    connections: int,
) -> None:
    home = _home(tmp_path, prepare)
    with counting_listener() as (url, seen):
        env = {
            "LMCP_HOME": str(home),
            "LMCP_COLLECTOR_URL": url,
            "PYTHONPATH": str(REPO),
            "PATH": os.environ.get("PATH", ""),
            **extra,
        }
        out = run_child(
            [sys.executable, "-c", _MCP_SCRIPT, json.dumps(env), str(REPO)],
            env={**env, "DO_NOT_TRACK": ""},  # the driver itself; the server gets `env`
        )
        assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(seen) == connections, f"{mode}: {len(seen)} connection(s) reached the collector"
    if connections:
        # Delivered in the call, or queued and delivered by the background thread (the
        # connection count above is what reached the collector either way).
        assert result["result"].get("sent") is True or result["result"].get("queued") is True
    else:
        assert result["result"] == {"sent": False, "reason": "anonymous_signals_off"}
        assert not (home / "outbox.json").exists() and not (home / "last_failure.json").exists()
