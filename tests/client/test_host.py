"""ToolHost: validation messages, classification, ring and FailureContext."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from client.apps import StaticAppProbe
from client.errors import ToolFailure
from client.host import Reply, ToolHost
from contract.schema import AppState, ArgName, ErrorClass, Outcome, ToolName
from tests._servers import HANG_S

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


# -- one refusal path: however a call fails, the same record is kept ----------------------------
def _handler_raising(failure: ToolFailure) -> Callable[[Mapping[str, Any]], Any]:
    def handler(args: Mapping[str, Any]) -> Any:
        raise failure

    return handler


#: (how the call fails, tool, arguments, error class, outcome, the ring's tool)
REFUSALS: list[tuple[str, str, Any, ErrorClass, Outcome, ToolName]] = [
    ("unknown tool", CANARY, {"x": CANARY}, ErrorClass.unknown_tool, Outcome.invalid,
     ToolName.other),
    ("unknown tool, arguments not an object", CANARY, [CANARY], ErrorClass.unknown_tool,
     Outcome.invalid, ToolName.other),
    ("arguments not an object", "read_note", [CANARY], ErrorClass.invalid_arguments,
     Outcome.invalid, ToolName.read_note),
    ("invalid arguments", "read_note", {"note_name": 5}, ErrorClass.invalid_arguments,
     Outcome.invalid, ToolName.read_note),
    ("no handler", "list_files", {}, ErrorClass.unavailable, Outcome.failed,
     ToolName.list_files),
    ("the tool failed", "read_note", {"note_name": CANARY}, ErrorClass.not_found,
     Outcome.failed, ToolName.read_note),
    ("the tool crashed", "create_note", {"note_name": CANARY}, ErrorClass.internal_error,
     Outcome.failed, ToolName.create_note),
]  # fmt: skip


@pytest.mark.parametrize(
    ("tool", "args", "error_class", "outcome", "ring_tool"),
    [r[1:] for r in REFUSALS],
    ids=[r[0] for r in REFUSALS],
)
def test_every_refusal_keeps_the_same_record(
    host: ToolHost,
    tool: str,
    args: Any,
    error_class: ErrorClass,
    outcome: Outcome,
    ring_tool: ToolName,
) -> None:
    """Ring, FailureContext and answer are the same shape whatever stopped the call, and no
    part of them holds what was passed (the canary)."""
    seen: list[object] = []
    host.add_failure_listener(seen.append)
    result = host.dispatch(tool, args)
    assert result.error is not None and result.error.error_class is error_class
    assert result.outcome is outcome and not result.ok and result.can_report_friction
    assert result.to_dict()["error"]["class"] == error_class.value
    last = host.ring.snapshot()[-1]
    assert (last.tool, last.outcome) == (ring_tool, outcome)
    ctx = host.last_failure
    assert ctx is not None and ctx.tool is ring_tool and ctx.error_class is error_class
    assert seen == [ctx]
    everything = repr((result, result.to_dict(), ctx, host.ring.snapshot()))
    assert CANARY not in everything


def test_a_handler_failure_keeps_its_own_code_and_outcome() -> None:
    failure = ToolFailure(
        ErrorClass.conflict, "already there", code="note_exists", outcome=Outcome.invalid
    )
    host = ToolHost({"create_note": _handler_raising(failure)})
    result = host.dispatch("create_note", {"note_name": "a"})
    assert result.error is not None
    assert (result.error.code, result.error.message, result.outcome) == (
        "note_exists",
        "already there",
        Outcome.invalid,
    )


# -- failure listeners off the call path --------------------------------------------------------
def test_off_the_call_path_a_call_answers_before_its_listener_runs(host: ToolHost) -> None:
    """A listener that cannot finish until the call has answered: run on the call path, it
    would hold the call until its guard gives up, and would see the call unanswered."""
    answered = threading.Event()
    saw_answer: list[bool] = []

    def slow(ctx: object) -> None:
        saw_answer.append(answered.wait(timeout=HANG_S))

    host.add_failure_listener(slow)
    with host.listeners_off_the_call_path():
        result = host.dispatch("read_note", {"note_name": "a"})
        answered.set()
    assert result.error is not None
    assert saw_answer == [True]


def test_leaving_the_lane_tells_the_latest_failure(host: ToolHost) -> None:
    """A burst of failures is told once it settles, at least its last one; on leaving, nothing
    kept is left untold."""
    told: list[ToolName] = []
    host.add_failure_listener(lambda ctx: told.append(ctx.tool))
    with host.listeners_off_the_call_path():
        for _ in range(50):
            host.dispatch("read_note", {"note_name": "a"})
        host.dispatch(CANARY, {})  # the last failure: an unknown tool
    assert 1 <= len(told) <= 51
    assert told[-1] is ToolName.other


def test_a_listener_that_raises_does_not_stop_the_lane(
    host: ToolHost, caplog: pytest.LogCaptureFixture
) -> None:
    told: list[ToolName] = []
    first_told = threading.Event()

    def flaky(ctx: Any) -> None:
        told.append(ctx.tool)
        first_told.set()
        if len(told) == 1:
            raise ValueError(CANARY)

    host.add_failure_listener(flaky)
    with host.listeners_off_the_call_path():
        host.dispatch("read_note", {"note_name": "a"})
        assert first_told.wait(HANG_S)
        host.dispatch(CANARY, {})
    assert told == [ToolName.read_note, ToolName.other]
    assert "ValueError" in caplog.text and CANARY not in caplog.text


def test_outside_the_lane_listeners_run_in_the_call(host: ToolHost) -> None:
    told: list[threading.Thread] = []
    host.add_failure_listener(lambda ctx: told.append(threading.current_thread()))
    host.dispatch("read_note", {"note_name": "a"})
    assert told == [threading.current_thread()]
