"""The rules of ``recipe_save``'s reference text on saving and running (both platforms, both
editions), one test each, named after the rule: purpose, the manifest, what a save returns,
optional steps, confirmation, a taken name, the macOS rules, permissions. The spec:
``/shared/spec/recipe_save.md`` (English rendering of the Dutch earlier edition and the Chinese
later edition); its canonical schemas and examples: ``test_spec_canonical_schemas.py``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from client.host import ToolHost
from client.paths import LmcpHome
from client.recipes import recipe_filename
from contract.schema import ErrorClass, Outcome
from tests.recipes.conftest import Call, Save, message, run_saved, set_apps


# -- Purpose (both platforms) ----------------------------------------------------------------
def test_purpose_saves_a_named_recipe_on_this_machine_rerun_with_recipe_run(
    save: Save, call: Call, home: LmcpHome
) -> None:
    assert save({"name": "Brief", "steps": [{"tool": "get_datetime"}]}).ok
    assert (home.recipes / recipe_filename("Brief")).is_file()
    for _ in range(2):  # re-run at any time
        ran = run_saved(call, "Brief")
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
    ran = run_saved(call, "Morning")
    assert ran.ok and ran.result["ok"] is True
    first, second = ran.result["steps"]
    assert first["ok"] is False and first["error"]["class"] == "not_found"
    assert ran.result["skipped_optional"] == [0]
    assert second["ok"] is True  # carried on with the next step


def test_optional_is_a_boolean_defaulting_to_false(save: Save, call: Call) -> None:
    refused = save({"name": "o", "steps": [{"tool": "get_datetime", "optional": "yes"}]})
    assert "steps[0].optional: must be true or false" in message(refused)
    save({"name": "Strict", "steps": [{"tool": "read_note", "args": {"note_name": "None"}}]})
    stopped = run_saved(call, "Strict")
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
    ran = run_saved(call, "Edited", confirm=True)
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
    ran = run_saved(call, "Acts", confirm=True)
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
    asked = run_saved(call, "Writer")
    assert asked.outcome is Outcome.preview and asked.result["preview"] is True
    assert [p["tool"] for p in asked.result["plan"]] == ["create_note", "create_note"]
    assert call("list_notes").outcome is Outcome.empty  # nothing ran
    done = run_saved(call, "Writer", confirm=True)  # ONE confirmation covers every step
    assert done.result["ok"] is True
    assert call("list_notes").result["count"] == 2


def test_macos_a_read_only_recipe_runs_without_confirmation(save: Save, call: Call) -> None:
    save({"name": "Reader", "steps": [{"tool": "get_datetime"}, {"tool": "list_notes"}]})
    assert run_saved(call, "Reader").result["ok"] is True


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
    assert run_saved(call, "Mailer").outcome is Outcome.preview
    assert run_saved(call, "Mailer", confirm=True).result["steps"][0]["preview_only"] is True
    assert not (home.maildir / "Outbox").exists()


def test_use_only_apps_the_user_authorized_on_this_platform(
    save: Save, call: Call, home: LmcpHome, host: ToolHost
) -> None:
    save({"name": "Notes", "steps": [{"tool": "list_notes"}]})
    set_apps(home, {"notes": {"installed": True, "permitted": False}})
    ran = run_saved(call, "Notes")
    assert ran.result["ok"] is False
    assert ran.result["steps"][0]["error"]["class"] == "permission_denied"
    ctx = host.failure_for("list_notes")
    assert ctx is not None and ctx.error_class is ErrorClass.permission_denied
