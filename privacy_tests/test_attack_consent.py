"""Attack: override the user's ``off`` from the environment.

An MCP host's ``env`` block (the one the MCP docs suggest) starts LMCP with
``LMCP_ANONYMOUS_SIGNALS=1``. After the user ran ``lmcp signals off`` that server must send
nothing and open no connection -- counted at a real loopback collector, at a socket listener
across processes, and at the socket layer in-process -- and ``lmcp signals status`` must say what
such a server does. The environment can only restrict: ``off`` is final until ``lmcp signals on``.

Local-only mode (``lmcp signals local``, like ``go telemetry local``): failures become signals
kept for ``preview``/``log``, nothing is uploaded and no connection is opened; the user can then
opt in, and only what is reported after that is uploaded.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import duckdb
import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from client.runtime import Runtime
from collector.settings import CollectorSettings
from lmcp.cli import app as lmcp
from privacy_tests.audit.sockets import SocketGuard
from privacy_tests.test_audit_consent import _MCP_SCRIPT
from tests._delivery import accepted, deliver_queued
from tests._servers import counting_listener, run_child, running_collector

REPO = Path(__file__).resolve().parent.parent
OVERRIDE = {"LMCP_ANONYMOUS_SIGNALS": "1"}


def _cli(home: Path, *args: str, env: dict[str, str] | None = None) -> str:
    result = CliRunner().invoke(
        lmcp, ["signals", *args], env={"LMCP_HOME": str(home), **(env or {})}
    )
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def _workload(rt: Runtime) -> list[dict[str, object]]:
    rt.host.dispatch("read_note", {"note_name": "a private note title"})
    replies = [
        rt.host.dispatch("report_friction", {"friction_type": friction}).to_dict()["result"]
        for friction in ("cannot_complete", "repeated_failure")
    ]
    replies.append(rt.reporter.flush())
    return replies


def _stored(db: Path) -> int:
    if not db.exists():
        return 0
    with duckdb.connect(str(db), read_only=True) as con:
        row = con.execute("SELECT count(*) FROM signals").fetchone()
    return int(row[0]) if row else 0


def _collector(tmp_path: Path) -> CollectorSettings:
    return CollectorSettings(
        db_path=tmp_path / "signals.duckdb",
        read_tokens=[SecretStr("attack-consent-token")],
        rate_limit_enabled=False,
    )


@pytest.mark.slow
def test_env_cannot_turn_signals_back_on_after_off(tmp_path: Path) -> None:
    """In process, against a real loopback collector: nothing stored, no socket opened."""
    home = tmp_path / "home"
    _cli(home, "on")
    _cli(home, "off")
    settings = _collector(tmp_path)
    with running_collector(settings) as url:
        env = {"LMCP_HOME": str(home), "LMCP_COLLECTOR_URL": url, **OVERRIDE}
        with SocketGuard(block=False) as guard:
            with Runtime.from_env(env) as rt:
                replies = _workload(rt)
        assert guard.attempts == [], guard.attempts
        assert replies[:2] == [{"sent": False, "reason": "anonymous_signals_off"}] * 2
        # The control: after `lmcp signals on` the same server does send, to the same collector.
        _cli(home, "on")
        with Runtime.from_env(env) as rt:
            sent = _workload(rt)
            # Sent in the call, or queued when the machine is too busy to answer in time.
            assert [accepted(r) for r in sent[:2]] == [True, True], sent[:2]
            deliver_queued(rt)
    assert _stored(settings.db_path) == 2


@pytest.mark.slow
def test_an_mcp_server_with_the_override_in_its_env_sends_nothing(tmp_path: Path) -> None:
    """The MCP server as an app starts it (a child process with the env block): 0 connections
    reach the listening collector, where ``on`` (the control) makes exactly one."""
    seen_per_mode = {}
    for mode in ("off", "on"):
        home = tmp_path / mode
        _cli(home, mode)
        with counting_listener() as (url, seen):
            env = {
                "LMCP_HOME": str(home),
                "LMCP_COLLECTOR_URL": url,
                "PYTHONPATH": str(REPO),
                "PATH": os.environ.get("PATH", ""),
                **OVERRIDE,
            }
            out = run_child(
                [sys.executable, "-c", _MCP_SCRIPT, json.dumps(env), str(REPO)],
                env={**env, "DO_NOT_TRACK": ""},
            )
            assert out.returncode == 0, out.stderr[-2000:]
            seen_per_mode[mode] = len(seen)
        result = json.loads(out.stdout.strip().splitlines()[-1])["result"]
        if mode == "off":
            assert result == {"sent": False, "reason": "anonymous_signals_off"}
            assert not (home / "outbox.json").exists()
            assert not (home / "last_failure.json").exists()
            assert not (home / "contributions.json").exists()
    assert seen_per_mode == {"off": 0, "on": 1}


def test_status_tells_what_a_server_started_elsewhere_does(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _cli(home, "off")
    said = _cli(home, "status", env=OVERRIDE)
    assert "your choice (settings file): off" in said
    assert "can only turn signals off" in said
    assert "this shell's environment: restricts nothing" in said
    restricted = _cli(home, "status", env={"DO_NOT_TRACK": "1"})
    assert "this shell's environment: off by DO_NOT_TRACK" in restricted
    _cli(home, "on")
    assert "your choice (settings file): on" in _cli(home, "status", env={"DO_NOT_TRACK": "1"})
    # `on` from a restricted shell records the choice and says this shell stays off.
    assert "keeps them off here" in _cli(home, "on", env={"LMCP_ANONYMOUS_SIGNALS": "0"})


def test_local_mode_keeps_signals_for_preview_and_log_and_opens_no_connection(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    _cli(home, "local")
    env = {"LMCP_HOME": str(home), "LMCP_COLLECTOR_URL": "http://127.0.0.1:9", **OVERRIDE}
    with SocketGuard(block=True) as guard:
        with Runtime.from_env(env) as rt:
            replies = _workload(rt)
            kept = rt.sent_log.entries()
        preview = _cli(home, "preview")
        log = _cli(home, "log", "--json")
    assert guard.attempts == []
    assert [r["reason"] for r in replies[:2]] == ["local_only", "local_only"]
    assert replies[2] == {"delivered": 0, "rejected": 0, "pending": 0}
    assert [e.status for e in kept] == ["local", "local"]
    assert '"tool_attempted": "read_note"' in preview and '"schema_version": 2' in preview
    assert log.count('"status": "local"') == 2
    assert "private" not in preview + log
    assert not (home / "outbox.json").exists()
    # Opting in uploads what is reported from then on, never what was kept locally.
    _cli(home, "on")
    settings = _collector(tmp_path)
    with running_collector(settings) as url:
        with Runtime.from_env({**env, "LMCP_COLLECTOR_URL": url}) as rt:
            rt.host.dispatch("list_notes", {"limit": "many"})
            sent = rt.host.dispatch("report_friction", {"friction_type": "other"}).to_dict()
            assert accepted(sent["result"])
            deliver_queued(rt)
    assert _stored(settings.db_path) == 1
    # Off forgets the locally kept signals too.
    _cli(home, "off")
    with Runtime.from_env(env) as rt:
        assert [e.status for e in rt.sent_log.entries()] == ["delivered"]


def test_another_state_folder_cannot_lift_the_account_s_off(tmp_path: Path) -> None:
    """The user says off in a plain shell (the account's default folder). A server started with
    ``LMCP_HOME`` at another folder whose settings say ``on`` -- one the agent wrote with LMCP's
    own ``write_file`` into the files root, or one the user turned on long ago -- sends nothing,
    opens no connection, and ``lmcp signals status`` there says why."""
    plain = {"LMCP_HOME": None}  # the shell the user types in: no LMCP_HOME
    result = CliRunner().invoke(lmcp, ["signals", "off"], env=plain)
    assert result.exit_code == 0, result.output
    account = Path(os.environ["XDG_DATA_HOME"]) / "lmcp"  # the test's own account folder
    assert json.loads((account / "settings.json").read_text())["anonymous_signals"] == "off"
    with Runtime.from_env({"LMCP_COLLECTOR_URL": "http://127.0.0.1:9"}) as rt:
        planted = rt.host.dispatch(
            "write_file",
            {"path": "x/settings.json", "content": json.dumps({"anonymous_signals": "on"})},
        ).to_dict()
    assert planted["ok"] is True, planted
    elsewhere = account / "files" / "x"
    settings = _collector(tmp_path)
    with running_collector(settings) as url:
        env = {"LMCP_HOME": str(elsewhere), "LMCP_COLLECTOR_URL": url}
        with SocketGuard(block=False) as guard:
            with Runtime.from_env(env) as rt:
                replies = _workload(rt)
        assert guard.attempts == [], guard.attempts
    assert replies[:2] == [{"sent": False, "reason": "anonymous_signals_off"}] * 2
    assert _stored(settings.db_path) == 0
    said = _cli(elsewhere, "status")
    assert "your choice (settings file): on" in said
    assert f"this account's choice ({account}): off" in said
    assert "so a server with this state folder is off" in said
    # Only the user lifts it, where it was said: then that folder's own `on` holds again.
    assert CliRunner().invoke(lmcp, ["signals", "on"], env=plain).exit_code == 0
    with Runtime.from_env(
        {"LMCP_HOME": str(elsewhere), "LMCP_COLLECTOR_URL": "http://127.0.0.1:9"}
    ) as rt:
        assert rt.consent.enabled()
