"""Off a terminal, rich tables are never cut to 80 columns (``friction_t…``).

Every ``lmcp`` table prints through ``client._console.make_console``; in a pipe (here: typer's
runner, whose output is not a terminal) each row keeps every cell whole.
"""

from __future__ import annotations

from typer.testing import CliRunner

from client._console import make_console
from lmcp.cli import app
from lmcp.datacatalogue import DataCatalogue


def test_the_catalogue_table_in_a_pipe_keeps_every_cell_whole(
    catalogue_command: DataCatalogue,
) -> None:
    output = CliRunner().invoke(app, ["signals", "catalogue"]).output
    rows = [line for line in output.splitlines() if line.startswith("│")]
    for fmt in catalogue_command.formats:
        for field in fmt.fields:
            # Each field's name, type and values stand whole on one row of its table.
            assert any(
                field.name in row and field.type in row and field.values in row for row in rows
            ), (fmt.key, field.name)


def test_a_console_off_a_terminal_is_wider_than_any_table() -> None:
    assert make_console().width > 1_000  # pytest captures stdout: not a terminal
