from __future__ import annotations

import os
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import client.apps as apps_module
from client.apps import FileAppProbe
from client.paths import LmcpHome
from client.tools._clock import make_get_datetime
from contract.schema import AppState, ErrorClass
from tests.tools.conftest import Call, set_apps


def test_get_datetime_local_and_zoned(call: Call) -> None:
    local = call("get_datetime")
    assert local.ok and set(local.result) >= {"iso", "date", "time", "timezone", "utc_offset"}
    tokyo = call("get_datetime", timezone="Asia/Tokyo")
    assert tokyo.result["utc_offset"] == "+09:00"


def test_get_datetime_is_exact_with_a_fixed_clock() -> None:
    fixed = datetime(2026, 3, 1, 12, 30, tzinfo=timezone(timedelta(hours=-5)))
    result = make_get_datetime(lambda: fixed)({"timezone": "UTC"})
    assert result["iso"] == "2026-03-01T17:30:00+00:00" and result["weekday"] == "Sunday"


def test_an_unknown_zone_is_refused_without_echo(call: Call) -> None:
    result = call("get_datetime", timezone="Mars/Olympus")
    assert result.error is not None and result.error.code == "unknown_timezone"
    assert "Mars" not in result.error.message


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ({"installed": False}, ErrorClass.app_not_installed),
        ({"installed": True, "permitted": False}, ErrorClass.permission_denied),
        ({"installed": True, "permitted": True, "running": False}, ErrorClass.app_not_running),
    ],
)
def test_app_state_from_the_probe_fails_the_call(
    call: Call, home: LmcpHome, state: dict[str, bool], expected: ErrorClass
) -> None:
    for app, tool in (("notes", "list_notes"), ("files", "list_files"), ("mail", "list_emails")):
        set_apps(home, {app: state})
        result = call(tool)
        assert result.error is not None and result.error.error_class is expected, tool


def test_a_permission_failure_is_kept_for_friction(call: Call, home: LmcpHome, host) -> None:  # type: ignore[no-untyped-def]
    set_apps(home, {"notes": {"installed": True, "permitted": False}})
    call("read_note", note_name="x")
    ctx = host.failure_for("read_note")
    assert ctx is not None and ctx.error_class is ErrorClass.permission_denied
    assert ctx.app.permitted is False


def test_the_probe_sees_every_rewrite_of_apps_json(home: LmcpHome) -> None:
    """Rewritten in place to the same size within one tick of the file system's clock (one
    app's name for another of the same length, the modification time as it was): same inode,
    size and time, and still the probe answers from the new content."""
    probe = FileAppProbe(home.apps)
    set_apps(home, {"notes": {"installed": False}})
    tick = os.stat(home.apps).st_mtime_ns
    for app, other in [("files", "notes"), ("notes", "files")] * 3:
        assert probe.state(other).installed is False
        set_apps(home, {app: {"installed": False}})
        os.utime(home.apps, ns=(tick, tick))
        assert probe.state(app).installed is False
        assert probe.state(other).installed is None


def test_a_settled_apps_json_is_parsed_once(
    home: LmcpHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_apps(home, {"notes": {"running": False}})
    old = time.time() - 60
    os.utime(home.apps, (old, old))  # written a minute ago: its stat identifies it
    parsed: list[object] = []
    real = apps_module._parse

    def counting(path: Path) -> dict[str, AppState]:
        parsed.append(path)
        return real(path)

    monkeypatch.setattr(apps_module, "_parse", counting)
    probe = FileAppProbe(home.apps)
    states = [probe.state("notes").running for _ in range(20)]
    assert states == [False] * 20 and len(parsed) == 1
    set_apps(home, {"notes": {"running": True}})  # a change of size: parsed again
    assert probe.state("notes").running is True and len(parsed) == 2
    home.apps.unlink()
    assert probe.state("notes") == AppState()
