"""Every rule of ``recipe_save``'s reference text (both platforms, both editions), one test each,
named after the rule. The spec: ``/shared/spec/recipe_save.md`` (English rendering of the
Dutch earlier edition and the Chinese later edition)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from client.host import ToolHost, ToolResult
from client.paths import LmcpHome
from client.recipes import recipe_filename
from contract.schema import ErrorClass, Outcome
from tests.recipes.conftest import DOC_EXAMPLE, Call, message, set_apps

Save = Callable[..., ToolResult]


def _run(call: Call, name: str, **kw: Any) -> ToolResult:
    return call("recipe_run", name=name, **kw)


# -- Purpose (both platforms) ----------------------------------------------------------------
def test_purpose_saves_a_named_recipe_on_this_machine_rerun_with_recipe_run(
    save: Save, call: Call, home: LmcpHome
) -> None:
    assert save({"name": "Brief", "steps": [{"tool": "get_datetime"}]}).ok
    assert (home.recipes / recipe_filename("Brief")).is_file()
    for _ in range(2):  # re-run at any time
        ran = _run(call, "Brief")
        assert ran.ok and ran.result["ok"] is True and ran.result["steps"][0]["ok"] is True


def test_purpose_macos_saved_skills_can_be_shared_through_recipe_export(
    save: Save, call: Call
) -> None:
    save({"name": "Share me", "steps": [{"tool": "get_datetime"}]})
    exported = call("recipe_export", name="Share me")
    assert exported.ok and exported.result["document"]["manifest"]["name"] == "Share me"


def test_manifest_must_contain_a_name(save: Save) -> None:
    for manifest in ({"steps": [{"tool": "get_datetime"}]}, {"name": " ", "steps": []}):
        refused = save(manifest)
        assert refused.error is not None and refused.error.code == "invalid_manifest"
        assert "name:" in message(refused)


def test_manifest_must_contain_a_non_empty_steps_array(save: Save) -> None:
    cases: list[Any] = [None, [], {"tool": "get_datetime"}]
    for steps in cases:
        manifest: dict[str, Any] = {"name": "x"}
        if steps is not None:
            manifest["steps"] = steps
        refused = save(manifest)
        assert refused.error is not None and "steps: is required" in message(refused)


# -- Returns -----------------------------------------------------------------------------------
def test_returns_macos_name(save: Save) -> None:
    assert save({"name": "Mac", "steps": [{"tool": "get_datetime"}]}).result["name"] == "Mac"


def test_returns_windows_name_and_step_count(save: Save) -> None:
    saved = save({"name": "Win", "steps": [{"tool": "get_datetime"}, {"wait": 0}]})
    assert saved.result["name"] == "Win" and saved.result["step_count"] == 2


# -- Later edition (both platforms) -----------------------------------------------------------
def test_optional_step_failure_records_ok_false_error_lists_skipped_optional_and_carries_on(
    save: Save, call: Call
) -> None:
    save(
        {
            "name": "Morning",
            "steps": [
                {"tool": "read_note", "args": {"note_name": "Missing"}, "optional": True},
                {"tool": "get_datetime"},
            ],
        }
    )
    ran = _run(call, "Morning")
    assert ran.ok and ran.result["ok"] is True
    first, second = ran.result["steps"]
    assert first["ok"] is False and first["error"]["class"] == "not_found"
    assert ran.result["skipped_optional"] == [0]
    assert second["ok"] is True  # carried on with the next step


def test_optional_is_a_boolean_defaulting_to_false(save: Save, call: Call) -> None:
    refused = save({"name": "o", "steps": [{"tool": "get_datetime", "optional": "yes"}]})
    assert "steps[0].optional: must be true or false" in message(refused)
    save({"name": "Strict", "steps": [{"tool": "read_note", "args": {"note_name": "None"}}]})
    stopped = _run(call, "Strict")
    assert stopped.result["ok"] is False and stopped.result["stopped_at"] == 0


def test_a_step_cannot_confirm_itself_confirm_is_removed_when_saving_and_counted(
    save: Save, call: Call, home: LmcpHome
) -> None:
    saved = save(
        {
            "name": "Sender",
            "steps": [
                {
                    "tool": "send_email",
                    "args": {"to": ["a@b.org"], "subject": "s", "body": "b", "confirm": True},
                },
                {"tool": "delete_note", "args": {"note_name": "x", "confirm": True}},
                {"tool": "get_datetime"},
            ],
        }
    )
    assert saved.result["confirm_removed_steps"] == 2
    stored = json.loads((home.recipes / recipe_filename("Sender")).read_text("utf-8"))
    assert all("confirm" not in s.get("args", {}) for s in stored["manifest"]["steps"])


def test_a_step_cannot_confirm_itself_confirm_is_ignored_when_running(
    save: Save, call: Call, home: LmcpHome
) -> None:
    save(
        {
            "name": "Edited",
            "steps": [
                {"tool": "send_email", "args": {"to": ["a@b.org"], "subject": "s", "body": "b"}}
            ],
        }
    )
    path = home.recipes / recipe_filename("Edited")
    doc = json.loads(path.read_text("utf-8"))
    doc["manifest"]["steps"][0]["args"]["confirm"] = True  # a hand-edited file
    path.write_text(json.dumps(doc), "utf-8")
    ran = _run(call, "Edited", confirm=True)
    assert ran.result["steps"][0]["preview_only"] is True
    assert not (home.maildir / "Outbox").exists()


@pytest.mark.parametrize(
    ("step", "setup"),
    [
        ({"tool": "send_email", "args": {"to": ["a@b.org"], "subject": "s", "body": "b"}}, None),
        ({"tool": "delete_note", "args": {"note_name": "Keep"}}, "note"),
        ({"tool": "write_file", "args": {"path": "f.txt", "content": "new"}}, "file"),
    ],
    ids=["send", "delete", "replace_a_file"],
)
def test_a_step_whose_tool_requires_confirmation_only_returns_its_preview_and_is_not_executed(
    save: Save, call: Call, home: LmcpHome, step: dict[str, Any], setup: str | None
) -> None:
    if setup == "note":
        call("create_note", note_name="Keep", body="keep me")
    if setup == "file":
        call("write_file", path="f.txt", content="old")
    save({"name": "Acts", "steps": [step]})
    ran = _run(call, "Acts", confirm=True)
    record = ran.result["steps"][0]
    assert record["ok"] is True and record["preview_only"] is True
    assert record["result"]["preview"] is True
    assert not (home.maildir / "Outbox").exists()
    if setup == "note":
        assert call("read_note", note_name="Keep").ok
    if setup == "file":
        assert (home.files_root / "f.txt").read_text("utf-8") == "old"


def test_a_taken_name_is_refused_with_recipe_exists_and_nothing_is_written(
    save: Save, home: LmcpHome
) -> None:
    save({"name": "Taken", "description": "first", "steps": [{"tool": "get_datetime"}]})
    path = home.recipes / recipe_filename("Taken")
    before = path.read_bytes()
    for overwrite in ({}, {"overwrite": False}):
        refused = save(
            {"name": "taken", "description": "second", "steps": [{"tool": "list_notes"}]},
            **overwrite,
        )
        assert refused.error is not None and refused.error.code == "recipe_exists"
        assert refused.error.error_class is ErrorClass.conflict
    assert path.read_bytes() == before
    assert sorted(p.name for p in home.recipes.iterdir()) == [path.name]


def test_overwrite_true_replaces_the_recipe(save: Save, call: Call) -> None:
    save({"name": "Swap", "steps": [{"tool": "get_datetime"}]})
    replaced = save(
        {"name": "Swap", "steps": [{"tool": "list_notes"}, {"tool": "get_datetime"}]},
        overwrite=True,
    )
    assert replaced.ok and replaced.result["replaced"] is True
    assert call("recipe_list").result["recipes"][0]["step_count"] == 2


# -- macOS rules ------------------------------------------------------------------------------
def test_macos_recipe_run_asks_one_confirmation_when_the_recipe_has_state_changing_steps(
    save: Save, call: Call
) -> None:
    save(
        {
            "name": "Writer",
            "steps": [
                {"tool": "create_note", "args": {"note_name": "A"}},
                {"tool": "create_note", "args": {"note_name": "B"}},
            ],
        }
    )
    asked = _run(call, "Writer")
    assert asked.outcome is Outcome.preview and asked.result["preview"] is True
    assert [p["tool"] for p in asked.result["plan"]] == ["create_note", "create_note"]
    assert call("list_notes").outcome is Outcome.empty  # nothing ran
    done = _run(call, "Writer", confirm=True)  # ONE confirmation covers every step
    assert done.result["ok"] is True
    assert call("list_notes").result["count"] == 2


def test_macos_a_read_only_recipe_runs_without_confirmation(save: Save, call: Call) -> None:
    save({"name": "Reader", "steps": [{"tool": "get_datetime"}, {"tool": "list_notes"}]})
    assert _run(call, "Reader").result["ok"] is True


def test_macos_a_step_naming_a_note_with_note_id_and_note_name_is_saved_with_note_name_alone(
    save: Save, call: Call, home: LmcpHome
) -> None:
    note_id = call("create_note", note_name="Journal").result["note_id"]
    saved = save(
        {
            "name": "J",
            "steps": [{"tool": "read_note", "args": {"note_id": note_id, "note_name": "Journal"}}],
        }
    )
    assert saved.ok
    stored = json.loads((home.recipes / recipe_filename("J")).read_text("utf-8"))
    assert stored["manifest"]["steps"][0]["args"] == {"note_name": "Journal"}


def test_macos_a_note_id_alone_is_resolved_to_the_note_name_or_refused_clearly(
    save: Save, call: Call, home: LmcpHome
) -> None:
    note_id = call("create_note", note_name="Diary").result["note_id"]
    assert save({"name": "D", "steps": [{"tool": "read_note", "args": {"note_id": note_id}}]}).ok
    stored = json.loads((home.recipes / recipe_filename("D")).read_text("utf-8"))
    assert stored["manifest"]["steps"][0]["args"] == {"note_name": "Diary"}
    refused = save({"name": "E", "steps": [{"tool": "read_note", "args": {"note_id": "abc"}}]})
    assert "steps[0].args.note_id: names no note on this machine" in message(refused)
    assert "abc" not in message(refused)


# -- Permissions and confirmation -------------------------------------------------------------
def test_no_explicit_confirmation_parameter_gives_no_permission_to_act(
    save: Save, call: Call, home: LmcpHome
) -> None:
    """Saving a recipe that sends acts on nothing; running it needs the user's confirmation,
    and even then the send step only previews."""
    save(
        {
            "name": "Mailer",
            "steps": [
                {"tool": "send_email", "args": {"to": ["a@b.org"], "subject": "s", "body": "b"}}
            ],
        }
    )
    assert not (home.maildir / "Outbox").exists()
    assert _run(call, "Mailer").outcome is Outcome.preview
    assert _run(call, "Mailer", confirm=True).result["steps"][0]["preview_only"] is True
    assert not (home.maildir / "Outbox").exists()


def test_use_only_apps_the_user_authorized_on_this_platform(
    save: Save, call: Call, home: LmcpHome, host: ToolHost
) -> None:
    save({"name": "Notes", "steps": [{"tool": "list_notes"}]})
    set_apps(home, {"notes": {"installed": True, "permitted": False}})
    ran = _run(call, "Notes")
    assert ran.result["ok"] is False
    assert ran.result["steps"][0]["error"]["class"] == "permission_denied"
    ctx = host.failure_for("list_notes")
    assert ctx is not None and ctx.error_class is ErrorClass.permission_denied


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
    ran = _run(call, "Pauses")
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
    assert _run(call, "Out").result["outputs"] == [{"kind": "summary"}]
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
    ran = _run(call, "Greeting", params={"who": "Ann"}, confirm=True)
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
    ran = _run(call, "Count", params={"count": 2})
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
    ran = _run(call, "Chain", confirm=True)
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
    assert _run(call, "Maker").outcome is Outcome.preview
    assert call("read_note", note_name="New").error is not None
    assert _run(call, "Maker", confirm=True).result["ok"] is True
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
    assert _run(call, "Win brief").result["steps"][0]["result"]["timezone"] == "UTC"
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
    ran = _run(call, "Win later", params={"q": "anything"})
    assert ran.result["ok"] is True


# -- Documentation examples -------------------------------------------------------------------
@pytest.mark.parametrize("platform", ["macos", "windows"])
def test_documentation_example_saves_and_runs(save: Save, call: Call, platform: str) -> None:
    example = copy.deepcopy(DOC_EXAMPLE)
    saved = save(example["manifest"])
    assert saved.ok and saved.result["name"] == "Demo morning brief"
    if platform == "windows":
        assert saved.result["step_count"] == 1
    ran = _run(call, "Demo morning brief")
    assert ran.ok and ran.result["steps"][0]["tool"] == "get_datetime"
    assert "iso" in ran.result["steps"][0]["result"]
