"""Finding 8: off a terminal, rich tables are never cut to 80 columns (``friction_t…``).

Every ``lmcp`` table prints through ``client._console.make_console``; in a pipe (here: typer's
runner, whose output is not a terminal) each row keeps every cell whole.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from client._console import make_console
from lmcp.cli import app
from lmcp.datacatalogue import generate


def test_the_catalogue_table_in_a_pipe_keeps_every_cell_whole() -> None:
    output = CliRunner().invoke(app, ["signals", "catalogue"]).output
    rows = [line for line in output.splitlines() if line.startswith("│")]
    for fmt in generate().formats:
        for field in fmt.fields:
            # Each field's name, type and values stand whole on one row of its table.
            assert any(
                field.name in row and field.type in row and field.values in row for row in rows
            ), (fmt.key, field.name)


def test_a_console_off_a_terminal_is_wider_than_any_table() -> None:
    assert make_console().width > 1_000  # pytest captures stdout: not a terminal


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
