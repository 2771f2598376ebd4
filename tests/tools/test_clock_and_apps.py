from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from client.paths import LmcpHome
from client.tools._clock import make_get_datetime
from contract.schema import ErrorClass
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
