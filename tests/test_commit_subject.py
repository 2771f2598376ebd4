"""The ``commit-msg`` hook refuses a subject over 72 characters (CONTRIBUTING.md, *Commits*).

pre-commit's ``pygrep`` fails a file when its pattern matches; it compiles the pattern as
bytes, with ``re.MULTILINE`` under ``--multiline``, and searches the whole message file. This
test compiles the configured pattern the same way and runs it on messages."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
LIMIT = 72


def _config() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text("utf-8"))
    return loaded


def _hook() -> dict[str, Any]:
    (local,) = [r for r in _config()["repos"] if r["repo"] == "local"]
    (hook,) = [h for h in local["hooks"] if h["id"] == "commit-subject"]
    return dict(hook)


def _refused(message: str) -> bool:
    hook = _hook()
    flags = re.MULTILINE if "--multiline" in hook.get("args", []) else 0
    return re.compile(str(hook["entry"]).encode(), flags).search(message.encode()) is not None


def test_the_hook_is_local_and_runs_on_the_commit_message() -> None:
    hook = _hook()
    assert hook["language"] == "pygrep"  # pre-commit's own: nothing to download or install
    assert hook["stages"] == ["commit-msg"]
    assert "commit-msg" in _config()["default_install_hook_types"]
    assert _config()["default_stages"] == ["pre-commit"]  # the other hooks stay before commit


@pytest.mark.parametrize(
    ("subject", "refused"),
    [
        ("x" * LIMIT, False),
        ("x" * (LIMIT + 1), True),
        ("é" * LIMIT, False),  # characters, not bytes
        ("→" * (LIMIT + 1), True),
        ("lake: a short subject", False),
        ("", False),
    ],
)
def test_only_the_subject_is_measured(subject: str, refused: bool) -> None:
    body = "\n\nThe why, in a body whose lines may be as long as they need to be: " + "y" * 200
    assert _refused(subject + body) is refused
    assert _refused(subject + "\n") is refused


def test_contributing_states_the_rule() -> None:
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert f"at most {LIMIT} characters" in text and "commit-msg" in text
