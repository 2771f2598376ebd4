from __future__ import annotations

import os

import pytest

from client.paths import LmcpHome
from contract.schema import ErrorClass, Outcome
from tests.tools.conftest import Call


@pytest.fixture
def root(home: LmcpHome) -> LmcpHome:
    (home.files_root / "docs").mkdir(parents=True)
    (home.files_root / "docs" / "a.txt").write_text("alpha\nbeta needle here\n", "utf-8")
    (home.files_root / "b.md").write_text("nothing", "utf-8")
    return home


def test_list_read_and_search(call: Call, root: LmcpHome) -> None:
    listed = call("list_files", recursive=True)
    assert {e["path"] for e in listed.result["entries"]} == {"b.md", "docs", "docs/a.txt"}
    read = call("read_file", path="docs/a.txt")
    assert read.result["content"].startswith("alpha")
    found = call("search_files", query="NEEDLE")
    assert found.result["matches"] == [
        {"path": "docs/a.txt", "in": "content", "line": 2, "snippet": "beta needle here"}
    ]
    assert call("search_files", query="zzz").outcome is Outcome.empty


def test_read_respects_max_bytes(call: Call, root: LmcpHome) -> None:
    read = call("read_file", path="docs/a.txt", max_bytes=3)
    assert read.result["content"] == "alp" and read.result["truncated"] is True


def test_a_missing_file_is_not_found(call: Call, root: LmcpHome) -> None:
    result = call("read_file", path="docs/none.txt")
    assert result.error is not None and result.error.error_class is ErrorClass.not_found
    assert "none.txt" not in result.error.message


@pytest.mark.parametrize(
    "path", ["../outside.txt", "/etc/hostname", "docs/../../x", "C:\\Windows\\x", "\\\\srv\\x"]
)
def test_no_path_escapes_the_root(call: Call, root: LmcpHome, path: str) -> None:
    for result in (call("read_file", path=path), call("write_file", path=path, content="x")):
        assert result.error is not None
        assert result.error.error_class is ErrorClass.permission_denied
        assert path not in result.error.message
    assert not (root.root / "outside.txt").exists()


def test_a_symlink_leading_out_of_the_root_is_refused(
    call: Call, root: LmcpHome, tmp_path: os.PathLike[str]
) -> None:
    outside = root.root.parent / "outside-secret.txt"
    outside.write_text("do not read", "utf-8")
    (root.files_root / "link.txt").symlink_to(outside)
    (root.files_root / "linkdir").symlink_to(root.root.parent, target_is_directory=True)
    assert call("read_file", path="link.txt").error is not None
    assert call("write_file", path="linkdir/new.txt", content="x").error is not None
    listed = call("list_files", recursive=True).result["entries"]
    assert not any(e["path"].startswith("link") for e in listed)
    found = call("search_files", query="do not read")
    assert found.outcome is Outcome.empty
    assert outside.read_text("utf-8") == "do not read"


def test_a_symlink_inside_the_root_is_followed(call: Call, root: LmcpHome) -> None:
    (root.files_root / "alias.txt").symlink_to(root.files_root / "b.md")
    assert call("read_file", path="alias.txt").result["content"] == "nothing"


def test_write_new_file_needs_no_confirmation(call: Call, root: LmcpHome) -> None:
    made = call("write_file", path="new/dir/c.txt", content="hi")
    assert made.ok and made.result == {"path": "new/dir/c.txt", "size": 2, "replaced": False}
    assert (root.files_root / "new/dir/c.txt").read_text("utf-8") == "hi"


def test_replacing_a_file_previews_without_confirm(call: Call, root: LmcpHome) -> None:
    preview = call("write_file", path="b.md", content="changed")
    assert preview.outcome is Outcome.preview
    assert (root.files_root / "b.md").read_text("utf-8") == "nothing"
    done = call("write_file", path="b.md", content="changed", confirm=True)
    assert done.result["replaced"] is True
    assert (root.files_root / "b.md").read_text("utf-8") == "changed"


def test_folder_errors(call: Call, root: LmcpHome) -> None:
    assert call("list_files", path="missing").error.error_class is ErrorClass.not_found  # type: ignore[union-attr]
    assert call("list_files", path="b.md").error.code == "not_a_folder"  # type: ignore[union-attr]
    assert call("read_file", path="docs").error.code == "is_a_folder"  # type: ignore[union-attr]


def test_the_files_root_may_be_a_symlink_to_a_chosen_folder(call: Call, home: LmcpHome) -> None:
    chosen = home.root.parent / "Documents"
    chosen.mkdir()
    (chosen / "plan.txt").write_text("the plan", "utf-8")
    home.files_root.symlink_to(chosen, target_is_directory=True)
    assert call("read_file", path="plan.txt").result["content"] == "the plan"
    assert call("write_file", path="new.txt", content="x").ok
    assert (chosen / "new.txt").read_text("utf-8") == "x"
    assert call("read_file", path="../lmcp-home/apps.json").error is not None
