"""The canonical manifest schemas of ``recipe_save``'s reference text (macOS later edition,
Windows earlier edition) and its documentation example, one test each, named after the rule.
The spec: ``/shared/spec/recipe_save.md``; its rules on saving and running:
``test_spec_save_and_run_rules.py``."""

from __future__ import annotations

import copy

import pytest

from contract.schema import Outcome
from tests.recipes.conftest import DOC_EXAMPLE, Call, Save, message, run_saved


# -- Canonical schema, macOS (later edition) --------------------------------------------------
def test_macos_schema_params_are_string_int_or_bool_with_a_default_of_that_type(
    save: Save,
) -> None:
    ok = save(
        {
            "name": "P",
            "params": [
                {"name": "s", "type": "string", "default": "x"},
                {"name": "n", "type": "int", "default": 3},
                {"name": "b", "type": "bool", "default": False},
            ],
            "steps": [
                {"tool": "list_notes", "args": {"folder": "${s}", "limit": "${n}"}},
                {"tool": "list_files", "args": {"recursive": "${b}"}},
            ],
        }
    )
    assert ok.ok and ok.result["warnings"] == []
    for param in (
        {"name": "n", "type": "int", "default": 1.0},
        {"name": "n", "type": "int", "default": True},
        {"name": "b", "type": "bool", "default": 0},
        {"name": "s", "type": "string", "default": 5},
        {"name": "x", "type": "float"},
    ):
        refused = save({"name": "Q", "params": [param], "steps": [{"tool": "get_datetime"}]})
        assert refused.error is not None and "params[0]." in message(refused)


def test_macos_schema_a_step_is_a_tool_call_or_a_pause_wait_seconds_or_wait_n(
    save: Save, call: Call
) -> None:
    saved = save(
        {
            "name": "Pauses",
            "steps": [{"tool": "get_datetime"}, {"wait": {"seconds": 0.01}}, {"wait": 0}],
        }
    )
    assert saved.result["step_count"] == 3
    ran = run_saved(call, "Pauses")
    assert [s.get("wait") for s in ran.result["steps"]] == [None, 0.01, 0]
    for bad in (
        {"wait": -1},
        {"wait": "5"},
        {"wait": {"secs": 1}},
        {"wait": 1, "tool": "x"},
        {"wait": 10_000},
    ):
        assert save({"name": "Bad", "steps": [bad]}).error is not None


def test_macos_schema_outputs_are_kinds(save: Save, call: Call) -> None:
    assert save(
        {"name": "Out", "steps": [{"tool": "get_datetime"}], "outputs": [{"kind": "summary"}]}
    ).ok
    assert run_saved(call, "Out").result["outputs"] == [{"kind": "summary"}]
    assert (
        save({"name": "Out2", "steps": [{"tool": "get_datetime"}], "outputs": [{"kind": 3}]}).error
        is not None
    )


def test_macos_schema_any_arg_string_may_interpolate_a_declared_param(
    save: Save, call: Call
) -> None:
    save(
        {
            "name": "Greeting",
            "params": [{"name": "who", "type": "string"}],
            "steps": [
                {
                    "tool": "create_note",
                    "args": {"note_name": "Hello ${who}!", "body": "for ${who}"},
                }
            ],
        }
    )
    ran = run_saved(call, "Greeting", params={"who": "Ann"}, confirm=True)
    assert ran.result["ok"] is True
    assert call("read_note", note_name="Hello Ann!").result["body"] == "for Ann"


def test_macos_schema_an_arg_that_is_exactly_a_placeholder_keeps_the_params_type(
    save: Save, call: Call
) -> None:
    save(
        {
            "name": "Count",
            "params": [{"name": "count", "type": "int", "default": 1}],
            "steps": [{"tool": "list_notes", "args": {"limit": "${count}"}}],
        }
    )
    for i in range(3):
        call("create_note", note_name=f"n{i}")
    ran = run_saved(call, "Count", params={"count": 2})
    assert ran.result["steps"][0]["result"]["count"] == 2


def test_macos_schema_steps_run_in_order_and_a_later_step_consumes_an_earlier_steps_output(
    save: Save, call: Call
) -> None:
    call("create_note", note_name="Source", body="first line")
    save(
        {
            "name": "Chain",
            "steps": [
                {"tool": "list_notes"},
                {
                    "tool": "read_note",
                    "args": {"note_name": "${steps[0].result.notes[0].note_name}"},
                },
                {
                    "tool": "create_note",
                    "args": {"note_name": "Copy", "body": "${steps[1].result.body}"},
                },
            ],
        }
    )
    ran = run_saved(call, "Chain", confirm=True)
    assert [s["index"] for s in ran.result["steps"]] == [0, 1, 2]
    assert call("read_note", note_name="Copy").result["body"] == "first line"


def test_macos_schema_a_step_reference_must_name_an_earlier_step(save: Save) -> None:
    for ref in ("${steps[0].result.x}", "${steps[5].result}"):
        refused = save(
            {"name": "Fwd", "steps": [{"tool": "read_note", "args": {"note_name": ref}}]}
        )
        assert "is not an EARLIER step" in message(refused)


def test_macos_schema_overwrite_must_be_true_to_replace(save: Save) -> None:
    save({"name": "Same", "steps": [{"tool": "get_datetime"}]})
    wrong_type = save({"name": "Same", "steps": [{"tool": "get_datetime"}]}, overwrite="yes")
    assert wrong_type.error is not None and wrong_type.error.code == "invalid_arguments"


def test_earlier_macos_edition_a_state_changing_step_previews_first_unless_confirm_true(
    save: Save, call: Call
) -> None:
    save({"name": "Maker", "steps": [{"tool": "create_note", "args": {"note_name": "New"}}]})
    assert run_saved(call, "Maker").outcome is Outcome.preview
    assert call("read_note", note_name="New").error is not None
    assert run_saved(call, "Maker", confirm=True).result["ok"] is True
    assert call("read_note", note_name="New").ok


# -- Canonical schema, Windows (earlier edition) ----------------------------------------------
def test_windows_schema_manifest_with_schema_version_and_typed_params(
    save: Save, call: Call
) -> None:
    saved = save(
        {
            "name": "Win brief",
            "description": "d",
            "schema_version": 1,
            "params": [{"name": "zone", "type": "string", "default": "UTC"}],
            "steps": [{"tool": "get_datetime", "args": {"timezone": "${zone}"}}],
        }
    )
    assert saved.ok and saved.result["step_count"] == 1
    assert run_saved(call, "Win brief").result["steps"][0]["result"]["timezone"] == "UTC"
    assert save({"name": "W2", "schema_version": 2, "steps": [{"tool": "get_datetime"}]}).error
    # the Windows text types a param's "type" only as a string: the common spellings are taken
    aliased = save(
        {
            "name": "W3",
            "params": [
                {"name": "n", "type": "integer", "default": 1},
                {"name": "b", "type": "boolean", "default": True},
            ],
            "steps": [{"tool": "list_files", "args": {"limit": "${n}", "recursive": "${b}"}}],
        }
    )
    assert aliased.ok
    listed = call("recipe_list").result["recipes"]
    assert [p["type"] for r in listed if r["name"] == "W3" for p in r["params"]] == ["int", "bool"]


def test_windows_later_edition_returns_name_and_step_count_with_optional_and_interpolation(
    save: Save, call: Call
) -> None:
    saved = save(
        {
            "name": "Win later",
            "params": [{"name": "q", "type": "string"}],
            "steps": [
                {"tool": "search_files", "args": {"query": "${q}"}, "optional": True},
                {"tool": "get_datetime"},
            ],
        }
    )
    assert {"name", "step_count"} <= set(saved.result)
    ran = run_saved(call, "Win later", params={"q": "anything"})
    assert ran.result["ok"] is True


# -- Documentation examples -------------------------------------------------------------------
@pytest.mark.parametrize("platform", ["macos", "windows"])
def test_documentation_example_saves_and_runs(save: Save, call: Call, platform: str) -> None:
    example = copy.deepcopy(DOC_EXAMPLE)
    saved = save(example["manifest"])
    assert saved.ok and saved.result["name"] == "Demo morning brief"
    if platform == "windows":
        assert saved.result["step_count"] == 1
    ran = run_saved(call, "Demo morning brief")
    assert ran.ok and ran.result["steps"][0]["tool"] == "get_datetime"
    assert "iso" in ran.result["steps"][0]["result"]
