"""report_friction: exactly the spec's schema, built from the FailureContext, sent in the call."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest

from client.runtime import Runtime
from contract.catalogue import load_catalogue
from contract.schema import AttemptsBucket, FrictionSignal

from .conftest import Recorder

MakeRuntime = Callable[..., tuple[Runtime, Recorder]]
SPEC_SCHEMA = {
    "properties": {
        "attempt_count": {
            "description": "How many times this was attempted (optional).",
            "type": "integer",
        },
        "error_category": {
            "description": "Category of what went wrong (optional).",
            "enum": [
                "permission",
                "timeout",
                "empty",
                "not_found",
                "parse",
                "wrong_result",
                "missing_capability",
                "crash",
                "other",
            ],
            "type": "string",
        },
        "friction_type": {
            "description": "What kind of friction you observed.",
            "enum": [
                "repeated_failure",
                "task_abandoned",
                "workaround_needed",
                "cannot_complete",
                "other",
            ],
            "type": "string",
        },
        "intent_category": {
            "description": "What the user was trying to do, chosen from this list (optional). Pick the closest one; do not describe the request.",  # noqa: E501
            "enum": [
                "find_email",
                "read_email",
                "send_email",
                "send_message",
                "read_messages",
                "schedule_event",
                "read_calendar",
                "manage_reminder",
                "manage_note",
                "manage_contact",
                "read_file",
                "write_file",
                "search_files",
                "document_work",
                "cloud_storage",
                "browse_web",
                "run_command",
                "other",
            ],
            "type": "string",
        },
        "tool_attempted": {
            "description": "Name of the LMCP tool involved (e.g. list_emails). Optional.",
            "type": "string",
        },
    },
    "required": ["friction_type"],
    "type": "object",
}


def sent(recorder: Recorder) -> list[FrictionSignal]:
    out = []
    for req in recorder.requests:
        for raw in json.loads(req.content)["signals"]:
            out.append(FrictionSignal.model_validate_json(json.dumps(raw)))
    return out


def test_catalogue_schema_is_the_spec_verbatim() -> None:
    tool = load_catalogue().get("report_friction")
    assert tool is not None and dict(tool.input_schema) == SPEC_SCHEMA
    assert tool.effect.value == "send" and not tool.requires_confirmation


def test_documentation_example_sends(make_runtime: MakeRuntime) -> None:
    rt, rec = make_runtime(mode="on")
    result = rt.host.dispatch("report_friction", {"friction_type": "cannot_complete"})
    assert result.ok and result.result["sent"] is True
    (signal,) = sent(rec)
    assert str(signal.signal_id) == result.result["signal_id"]
    assert signal.error_class.value == "no_failure" and signal.tool_attempted.value == "other"


def test_signal_is_built_from_the_failure_context(make_runtime: MakeRuntime) -> None:
    rt, rec = make_runtime(mode="on")
    rt.host.dispatch("get_datetime", {})
    rt.host.dispatch("read_note", {"note_name": "Quarterly plan for alice@example.com"})
    result = rt.host.dispatch(
        "report_friction",
        {
            "friction_type": "repeated_failure",
            "error_category": "not_found",
            "intent_category": "manage_note",
            "tool_attempted": "read_note",
            "attempt_count": 3,
        },
    )
    assert result.result["sent"] is True
    (s,) = sent(rec)
    assert (s.friction_type.value, s.error_category, s.intent_category) == (
        "repeated_failure",
        s.error_category,
        s.intent_category,
    )
    assert s.error_category is not None and s.error_category.value == "not_found"
    assert s.tool_attempted.value == "read_note" and s.attempts is AttemptsBucket.three_to_five
    assert [(a.name.value, a.type.value, a.size.value if a.size else None) for a in s.args] == [
        ("note_name", "string", "17-256")
    ]
    assert [r.tool.value for r in s.ring][-2:] == ["get_datetime", "read_note"]
    assert s.ring[-1].outcome.value == "failed"
    # A reported failure is not reported twice.
    assert rt.host.failure_for("read_note") is None


def test_latest_failure_is_used_when_no_tool_is_named(make_runtime: MakeRuntime) -> None:
    rt, rec = make_runtime(mode="on")
    rt.host.dispatch("read_note", {"note_name": "a"})
    rt.host.dispatch("no_such_tool", {})
    rt.host.dispatch("report_friction", {"friction_type": "other"})
    (s,) = sent(rec)
    assert s.tool_attempted.value == "other" and s.error_class.value == "unknown_tool"


def test_tool_outside_the_catalogue_becomes_other(make_runtime: MakeRuntime) -> None:
    rt, rec = make_runtime(mode="on")
    rt.host.dispatch(
        "report_friction", {"friction_type": "other", "tool_attempted": "alice's tool"}
    )
    (s,) = sent(rec)
    assert s.tool_attempted.value == "other"


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"friction_type": "angry"},
        {"friction_type": "other", "note": "free text"},
        {"friction_type": "other", "attempt_count": "3"},
        {"friction_type": "other", "attempt_count": 1.5},
        {"friction_type": "other", "attempt_count": 0},
        {"friction_type": "other", "error_category": "Permission"},
        {"friction_type": "other", "tool_attempted": 7},
    ],
)
def test_bad_input_is_a_clear_error_and_sends_nothing(
    make_runtime: MakeRuntime, args: dict[str, object]
) -> None:
    rt, rec = make_runtime(mode="on")
    result = rt.host.dispatch("report_friction", args)
    assert not result.ok and result.error is not None
    assert result.error.error_class.value == "invalid_arguments"
    assert "free text" not in result.error.message
    assert rec.requests == []
    # The reporter itself validates too (when called directly, not through the host).
    if args:
        from client.errors import ToolFailure

        with pytest.raises(ToolFailure):
            rt.reporter.prepare(args)


def test_huge_attempt_count_is_the_top_bucket(make_runtime: MakeRuntime) -> None:
    rt, rec = make_runtime(mode="on")
    rt.host.dispatch("report_friction", {"friction_type": "other", "attempt_count": 10**12})
    (s,) = sent(rec)
    assert s.attempts is AttemptsBucket.more
    assert b"attempt_count" not in rec.requests[0].content  # the raw count never leaves


@pytest.mark.parametrize(
    ("count", "bucket"),
    [(None, None), (1, "1"), (2, "2"), (3, "3-5"), (5, "3-5"), (6, "6-10"), (10, "6-10"),
     (11, "more"), (100, "more")],
)  # fmt: skip
def test_attempt_count_is_bucketed_at_the_client(
    make_runtime: MakeRuntime, count: int | None, bucket: str | None
) -> None:
    rt, rec = make_runtime(mode="on")
    args: dict[str, object] = {"friction_type": "other"}
    if count is not None:
        args["attempt_count"] = count
    rt.host.dispatch("report_friction", args)
    (raw,) = json.loads(rec.requests[0].content)["signals"]
    assert raw["schema_version"] == 2 and raw["attempts"] == bucket and "attempt_count" not in raw


def test_off_returns_without_building_anything(make_runtime: MakeRuntime) -> None:
    rt, rec = make_runtime()
    before = {p.name for p in rt.home.root.iterdir()}
    # Even invalid input is not looked at: consent comes first.
    assert rt.reporter.report({"friction_type": "nope"}) == {
        "sent": False,
        "reason": "anonymous_signals_off",
    }
    assert rec.requests == [] and {p.name for p in rt.home.root.iterdir()} == before


def test_unreachable_collector_queues_then_flush_delivers(make_runtime: MakeRuntime) -> None:
    down = [httpx.ConnectError("down")] * 4
    rt, rec = make_runtime(*down, mode="on")
    rt.sender._sleep = lambda s: None  # noqa: SLF001
    rt.host.dispatch("read_note", {"note_name": "a"})
    assert rt.reporter.report({"friction_type": "other"}) == {
        "sent": False,
        "queued": True,
        "reason": "collector_not_reached",
    }
    assert len(rt.outbox) == 1
    assert rt.reporter.flush() == {"delivered": 1, "rejected": 0, "pending": 0}
    assert len(rt.sent_log.entries()) == 1
    assert len(sent(rec)) == 5  # 4 failed attempts + the flush, one signal each


def test_rejected_signal_is_dropped_and_logged(make_runtime: MakeRuntime) -> None:
    rt, rec = make_runtime(httpx.Response(422), mode="on")
    result = rt.reporter.report({"friction_type": "other"})
    assert result == {"sent": False, "reason": "rejected_by_collector"}
    assert len(rt.outbox) == 0 and rt.sent_log.count("rejected") == 1


def test_preview_is_the_exact_signal_shape(make_runtime: MakeRuntime) -> None:
    rt, _ = make_runtime(mode="on")
    assert rt.reporter.preview() is None
    rt.host.dispatch("read_note", {"note_name": "secret title"})
    preview = rt.reporter.preview()
    assert preview is not None and preview.tool_attempted.value == "read_note"
    assert "secret" not in preview.model_dump_json()


def test_a_direct_call_never_echoes_an_unknown_key(make_runtime: MakeRuntime) -> None:
    from client.errors import ToolFailure

    rt, _ = make_runtime(mode="on")
    with pytest.raises(ToolFailure) as caught:
        rt.reporter.prepare({"friction_type": "other", "alice@example.com": 1})
    assert "alice" not in caught.value.message and "undeclared" in caught.value.message
