"""``lmcp recipes show`` prints a step as it was written: brackets in an argument are text,
never rich markup."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from lmcp.cli import app


def test_a_recipe_step_is_shown_as_written_not_as_markup(tmp_path: Path) -> None:
    manifest = {
        "name": "Brackets",
        "steps": [
            {"tool": "list_files", "args": {}},
            {"tool": "read_file", "args": {"path": "${steps[0].result.files[0].path}"}},
        ],
    }
    file = tmp_path / "brackets.json"
    file.write_text(json.dumps(manifest), encoding="utf-8")
    env = {"LMCP_HOME": str(tmp_path / "home")}
    runner = CliRunner()
    assert runner.invoke(app, ["recipes", "save", str(file)], env=env).exit_code == 0
    shown = runner.invoke(app, ["recipes", "show", "Brackets"], env=env)
    assert shown.exit_code == 0, shown.output
    assert "${steps[0].result.files[0].path}" in shown.output
