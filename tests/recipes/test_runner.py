"""recipe_run: strict params, step failures, references, waits, and the host's ring."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from client.host import ToolHost
from client.paths import LmcpHome
from client.recipes import Manifest, RunControl, ToolStep, WaitStep, recipe_filename, run_recipe
from contract.schema import ErrorClass, Outcome, RingEntry, ToolName
from tests._servers import HANG_S
from tests.recipes.conftest import Call, Save


@pytest.fixture
def typed(save: Save) -> str:
    save(
        {
            "name": "Typed",
            "params": [
                {"name": "n", "type": "int", "default": 2},
                {"name": "b", "type": "bool", "default": False},
                {"name": "s", "type": "string"},
            ],
            "steps": [
                {"tool": "list_notes", "args": {"limit": "${n}", "folder": "${s}"}},
                {"tool": "list_files", "args": {"recursive": "${b}"}, "optional": True},
            ],
        }
    )
    return "Typed"


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"s": "x", "n": 1.0}, "invalid_param"),
        ({"s": "x", "n": "01"}, "invalid_param"),
        ({"s": "x", "n": True}, "invalid_param"),
        ({"s": "x", "b": 1}, "invalid_param"),
        ({"s": "x", "b": "true"}, "invalid_param"),
        ({"s": 5}, "invalid_param"),
        ({}, "missing_param"),
        ({"s": "x", "extra_canary": 1}, "unknown_param"),
    ],
)
def test_params_are_checked_strictly_at_the_boundary(
    call: Call, typed: str, params: dict[str, Any], code: str
) -> None:
    refused = call("recipe_run", name=typed, params=params)
    assert refused.error is not None and refused.error.code == code
    assert refused.error.error_class is ErrorClass.invalid_arguments
    assert "canary" not in refused.error.message and "01" not in refused.error.message


def test_defaults_are_applied(call: Call, typed: str) -> None:
    call("create_note", note_name="a", folder="F")
    ran = call("recipe_run", name=typed, params={"s": "F"})
    assert ran.result["ok"] is True and ran.result["steps"][0]["result"]["count"] == 1


def test_a_non_optional_failure_stops_the_run(save: Save, call: Call, host: ToolHost) -> None:
    save(
        {
            "name": "Stops",
            "steps": [
                {"tool": "get_datetime"},
                {"tool": "read_file", "args": {"path": "missing.txt"}},
                {"tool": "get_datetime"},
            ],
        }
    )
    ran = call("recipe_run", name="Stops")
    assert ran.outcome is Outcome.failed and not ran.ok
    result = ran.result
    assert result["ok"] is False and result["stopped_at"] == 1
    assert [s["index"] for s in result["steps"]] == [0, 1]
    assert result["error"]["class"] == "not_found"
    assert result["friction"] == {"can_report": True, "tool_attempted": "read_file"}
    ctx = host.failure_for("read_file")
    assert ctx is not None and ctx.error_class is ErrorClass.not_found


def test_every_step_goes_through_the_host_ring(save: Save, call: Call, host: ToolHost) -> None:
    save(
        {
            "name": "Ring",
            "steps": [
                {"tool": "get_datetime"},
                {"tool": "read_note", "args": {"note_name": "none"}, "optional": True},
            ],
        }
    )
    host.ring.clear()
    call("recipe_run", name="Ring")
    assert host.ring.snapshot() == (
        RingEntry(tool=ToolName("get_datetime"), outcome=Outcome.ok),
        RingEntry(tool=ToolName("read_note"), outcome=Outcome.failed),
        RingEntry(tool=ToolName("recipe_run"), outcome=Outcome.ok),
    )


def test_a_bad_reference_is_not_covered_by_optional(save: Save, call: Call) -> None:
    save(
        {
            "name": "Ref",
            "steps": [
                {"tool": "get_datetime"},
                {
                    "tool": "read_note",
                    "args": {"note_name": "${steps[0].result.nope}"},
                    "optional": True,
                },
                {"tool": "get_datetime"},
            ],
        }
    )
    ran = call("recipe_run", name="Ref")
    assert ran.result["ok"] is False and ran.result["stopped_at"] == 1
    assert ran.result["error"]["code"] == "unresolved_reference"
    assert "steps[0].result.nope" in ran.result["error"]["message"]


def test_a_tool_outside_the_catalogue_is_refused_at_run_time(
    save: Save, call: Call, home: LmcpHome
) -> None:
    """A stored step naming a tool the catalogue does not hold (an older catalogue, or an edit
    on disk) is refused before anything runs, ``optional`` or not, confirmed or not: the steps
    before it never run either."""
    save({"name": "Gone", "steps": [{"tool": "get_datetime", "optional": True}]})
    path = home.recipes / recipe_filename("Gone")
    doc = json.loads(path.read_text("utf-8"))
    doc["manifest"]["steps"][0]["tool"] = "a_tool_from_an_older_catalogue"
    path.write_text(json.dumps(doc), "utf-8")
    for confirm in (False, True):
        ran = call("recipe_run", name="Gone", confirm=confirm)
        assert ran.outcome is Outcome.invalid or ran.outcome is Outcome.failed
        assert ran.error is not None and ran.error.code == "invalid_manifest"
        assert "steps[0].tool" in ran.error.message


def test_a_later_step_needing_a_preview_only_result_fails_clearly(save: Save, call: Call) -> None:
    save(
        {
            "name": "Needs",
            "steps": [
                {"tool": "send_email", "args": {"to": ["a@b.org"], "subject": "s", "body": "b"}},
                {"tool": "read_email", "args": {"message_id": "${steps[0].result.message_id}"}},
            ],
        }
    )
    ran = call("recipe_run", name="Needs", confirm=True)
    assert ran.result["steps"][0]["preview_only"] is True
    assert ran.result["stopped_at"] == 1
    assert ran.result["error"]["class"] == "needs_confirmation"
    assert "only returned a preview" in ran.result["error"]["message"]


def test_a_missing_recipe_is_not_found(call: Call) -> None:
    missing = call("recipe_run", name="Never saved")
    assert missing.error is not None and missing.error.error_class is ErrorClass.not_found
    assert "Never saved" not in missing.error.message


class _RecordedEvent(threading.Event):
    """A cancel event that records each wait on it: (seconds asked, whether the event ended it)."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[tuple[float | None, bool]] = []

    def wait(self, timeout: float | None = None) -> bool:
        ended_by_the_event = super().wait(timeout)
        self.waits.append((timeout, ended_by_the_event))
        return ended_by_the_event


def test_waits_are_real(host: ToolHost) -> None:
    # A real wait: the step's seconds on the cancel event, sat out to the end (not ended by it).
    cancel = _RecordedEvent()
    manifest = Manifest("w", (WaitStep(0.2), ToolStep("get_datetime")))
    result = run_recipe(manifest, host, control=RunControl(cancel))
    assert cancel.waits == [(0.2, False)] and result["ok"] is True


class _CancelledWhileWaiting(_RecordedEvent):
    """A cancel event set from outside (as the MCP server or Ctrl-C sets it) once a wait on it
    has begun, whenever that is on a busy machine."""

    def wait(self, timeout: float | None = None) -> bool:
        threading.Timer(0.05, self.set).start()
        return super().wait(timeout)


def test_waits_are_cancellable(host: ToolHost) -> None:
    cancel = _CancelledWhileWaiting()
    # A wait only a hang would sit out: the run ends when cancelled, long before it.
    manifest = Manifest("w", (ToolStep("get_datetime"), WaitStep(HANG_S), ToolStep("get_datetime")))
    reply = run_recipe(manifest, host, control=RunControl(cancel))
    assert cancel.waits == [(HANG_S, True)], "the wait was ended by the cancel"
    assert reply.outcome is Outcome.failed
    assert reply.result["cancelled"] is True and reply.result["stopped_at"] == 1
