from __future__ import annotations

from client.paths import LmcpHome
from contract.schema import ErrorClass, Outcome
from tests.tools.conftest import Call


def test_create_then_read_by_title_and_by_local_id(call: Call) -> None:
    made = call("create_note", note_name="Groceries", body="milk", folder="Home")
    assert made.ok and made.result["note_name"] == "Groceries"
    by_name = call("read_note", note_name="groceries")  # titles compare case-insensitively
    assert by_name.result["body"] == "milk"
    by_id = call("read_note", note_id=made.result["note_id"])
    assert by_id.result["note_name"] == "Groceries"


def test_a_missing_note_is_a_not_found_failure(call: Call) -> None:
    result = call("read_note", note_name="Nothing here")
    assert result.outcome is Outcome.failed
    assert result.error is not None and result.error.error_class is ErrorClass.not_found
    assert "Nothing here" not in result.error.message
    assert result.can_report_friction


def test_a_title_is_unique(call: Call) -> None:
    assert call("create_note", note_name="Plan").ok
    again = call("create_note", note_name="PLAN")
    assert again.error is not None and again.error.code == "note_exists"


def test_append_adds_a_line(call: Call) -> None:
    call("create_note", note_name="Log", body="one")
    appended = call("append_to_note", note_name="Log", text="two")
    assert appended.ok
    assert call("read_note", note_name="Log").result["body"] == "one\ntwo"


def test_append_to_a_missing_note_fails_not_found(call: Call) -> None:
    result = call("append_to_note", note_name="Ghost", text="x")
    assert result.error is not None and result.error.error_class is ErrorClass.not_found


def test_delete_without_confirm_is_a_preview_and_changes_nothing(call: Call) -> None:
    call("create_note", note_name="Keep")
    preview = call("delete_note", note_name="Keep")
    assert preview.outcome is Outcome.preview and preview.result["preview"] is True
    assert call("read_note", note_name="Keep").ok
    done = call("delete_note", note_name="Keep", confirm=True)
    assert done.ok and done.result["deleted"] is True
    assert call("read_note", note_name="Keep").error is not None


def test_list_is_newest_first_filtered_and_limited(call: Call) -> None:
    for i in range(3):
        call("create_note", note_name=f"n{i}", folder="A" if i < 2 else "B")
    call("append_to_note", note_name="n0", text="touched")
    listed = call("list_notes", folder="A")
    assert [n["note_name"] for n in listed.result["notes"]][0] == "n0"
    assert {n["note_name"] for n in listed.result["notes"]} == {"n0", "n1"}
    assert call("list_notes", limit=1).result["truncated"] is True


def test_an_empty_list_is_an_empty_outcome(call: Call) -> None:
    assert call("list_notes").outcome is Outcome.empty


def test_note_files_are_not_named_by_their_title(call: Call, home: LmcpHome) -> None:
    call("create_note", note_name="Secret plans")
    names = [p.name for p in home.notes.iterdir()]
    assert names and not any("secret" in n.lower() for n in names)
