"""ToolHost: validation messages, classification, ring and FailureContext."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from client.apps import StaticAppProbe
from client.errors import ToolFailure
from client.host import Reply, ToolHost
from contract.schema import AppState, ArgName, ErrorClass, Outcome, ToolName

CANARY = "canary-7f3a@example.com"


def not_found(args: Mapping[str, Any]) -> Any:
    raise ToolFailure(ErrorClass.not_found, "no note with that title")


def crash(args: Mapping[str, Any]) -> Any:
    raise RuntimeError(f"boom with {args}")


@pytest.fixture
def host() -> ToolHost:
    probe = StaticAppProbe({"notes": AppState(installed=True, running=True, permitted=False)})
    return ToolHost(
        {
            "read_note": not_found,
            "get_datetime": lambda a: {"iso": "2026-01-01T00:00:00"},
            "list_notes": lambda a: Reply([], Outcome.empty),
            "create_note": crash,
            "delete_note": lambda a: Reply({"would_delete": 1}, Outcome.preview),
        },
        app_probe=probe,
    )


def test_ok_call_is_recorded(host: ToolHost) -> None:
    result = host.dispatch("get_datetime", {})
    assert result.ok and result.outcome is Outcome.ok
    assert [(e.tool, e.outcome) for e in host.ring.snapshot()] == [
        (ToolName.get_datetime, Outcome.ok)
    ]
    assert host.last_failure is None


def test_handler_failure_keeps_shapes_only(host: ToolHost) -> None:
    result = host.dispatch("read_note", {"note_name": CANARY})
    assert not result.ok and result.can_report_friction
    assert result.error is not None and result.error.error_class is ErrorClass.not_found
    ctx = host.failure_for("read_note")
    assert ctx is not None and ctx is host.last_failure
    assert ctx.tool is ToolName.read_note
    assert [(a.name, a.type.value, a.size.value if a.size else None) for a in ctx.args] == [
        (ArgName.note_name, "string", "17-256")
    ]
    assert ctx.app == AppState(installed=True, running=True, permitted=False)
    assert CANARY not in repr(ctx) and CANARY not in repr(result)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({}, "needs one of: 'note_name', 'note_id'"),
        ({"note_name": 5}, "argument 'note_name' breaks rule 'type': must be of type string"),
        ({"note_name": ""}, "argument 'note_name' breaks rule 'minLength'"),
        ({"note_name": "x", CANARY: 1}, "1 argument(s) not declared by tool 'read_note'"),
    ],
)
def test_invalid_arguments_name_the_rule_never_the_value(
    host: ToolHost, args: dict[str, Any], expected: str
) -> None:
    result = host.dispatch("read_note", args)
    assert result.outcome is Outcome.invalid
    assert result.error is not None and result.error.error_class is ErrorClass.invalid_arguments
    assert expected in result.error.message
    assert CANARY not in result.error.message


def test_invalid_value_is_not_echoed(host: ToolHost) -> None:
    result = host.dispatch("send_email", {"to": [CANARY], "subject": 1, "body": CANARY})
    assert result.error is not None
    assert "subject" in result.error.message and CANARY not in result.error.message


def test_unknown_tool_is_other(host: ToolHost) -> None:
    result = host.dispatch(CANARY, {"x": CANARY})
    assert result.tool == "other" and result.error is not None
    assert result.error.error_class is ErrorClass.unknown_tool
    assert host.ring.snapshot()[-1].tool is ToolName.other
    assert host.last_failure is not None and host.last_failure.tool is ToolName.other


def test_crash_is_generic_and_logged_by_type_only(
    host: ToolHost, caplog: pytest.LogCaptureFixture
) -> None:
    result = host.dispatch("create_note", {"note_name": CANARY})
    assert result.error is not None and result.error.error_class is ErrorClass.internal_error
    assert CANARY not in result.error.message
    assert "RuntimeError" in caplog.text and CANARY not in caplog.text


def test_missing_handler_is_unavailable(host: ToolHost) -> None:
    result = host.dispatch("list_files", {})
    assert result.error is not None and result.error.error_class is ErrorClass.unavailable


def test_empty_and_preview_outcomes(host: ToolHost) -> None:
    empty = host.dispatch("list_notes", {})
    assert empty.outcome is Outcome.empty and empty.can_report_friction
    ctx = host.failure_for("list_notes")
    assert ctx is not None and ctx.error_class is ErrorClass.empty_result
    preview = host.dispatch("delete_note", {"note_name": "x"})
    assert preview.outcome is Outcome.preview and preview.ok and not preview.can_report_friction


def test_report_friction_failures_are_not_kept(host: ToolHost) -> None:
    host.dispatch("read_note", {"note_name": "a"})
    host.dispatch("report_friction", {"friction_type": "nope"})
    assert host.last_failure is not None and host.last_failure.tool is ToolName.read_note


def test_ring_snapshot_in_context_ends_with_the_failure(host: ToolHost) -> None:
    for _ in range(12):
        host.dispatch("get_datetime", {})
    host.dispatch("read_note", {"note_name": "a"})
    ctx = host.last_failure
    assert ctx is not None and len(ctx.ring) == 10
    assert (ctx.ring[-1].tool, ctx.ring[-1].outcome) == (ToolName.read_note, Outcome.failed)


def test_listener_errors_never_break_the_host(host: ToolHost) -> None:
    def bad(ctx: object) -> None:
        raise ValueError("listener bug")

    host.add_failure_listener(bad)
    assert host.dispatch("read_note", {"note_name": "a"}).error is not None


def test_a_structured_failed_reply_keeps_a_failure_context() -> None:
    host = ToolHost({"recipe_run": lambda a: Reply({"ok": False, "stopped_at": 1}, Outcome.failed)})
    result = host.dispatch("recipe_run", {"name": CANARY})
    assert not result.ok and result.can_report_friction
    assert result.result == {"ok": False, "stopped_at": 1}
    ctx = host.failure_for("recipe_run")
    assert ctx is not None and ctx.error_class is ErrorClass.step_failed
    assert CANARY not in repr(ctx)
