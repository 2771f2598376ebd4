"""The client's settings are documented field by field in docs/configuration.md (as datasette
checks its settings), and the pages' commands and numbers are the code's."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

from client.settings import ClientSettings, variables
from client.skills._execute import DEFAULT_LIMITS
from client.skills._token import HANDOVER_VAR

ROOT = Path(__file__).resolve().parents[2]
#: A variable's name as the docs and the code spell it.
_VARIABLE = re.compile(r"\b(LMCP_[A-Z0-9_]+|DO_NOT_TRACK)\b")


def _client_section() -> str:
    doc = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    start = doc.index("## Client settings")
    return doc[start : doc.index("### ", start)]


def _documented() -> dict[str, tuple[list[str], str]]:
    """Each row of the client settings table: setting -> (its variables, its default cell)."""
    rows: dict[str, tuple[list[str], str]] = {}
    for line in _client_section().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 4 and re.fullmatch(r"`\w+`", cells[0]):
            rows[cells[0].strip("`")] = (_VARIABLE.findall(cells[1]), cells[2])
    return rows


def test_every_setting_is_documented_with_its_variables() -> None:
    documented = _documented()
    assert sorted(documented) == sorted(f.name for f in fields(ClientSettings))
    for name, names in variables().items():
        assert documented[name][0] == list(names), name


def test_every_documented_default_is_the_code_s() -> None:
    documented = _documented()
    default = ClientSettings.from_env({})
    for field in fields(ClientSettings):
        value, cell = getattr(default, field.name), documented[field.name][1]
        if field.name == "skills_exec_timeout_s":  # unset: the sandbox's own limit
            assert value is None and cell == f"`{DEFAULT_LIMITS.timeout_s:g}`"
        elif isinstance(value, bool):
            assert cell == f"`{str(value).lower()}`", field.name
        elif isinstance(value, str):
            assert cell == f"`{value}`", field.name
        elif value is None:
            assert cell.startswith("unset"), field.name


def test_every_variable_the_client_names_is_a_setting_s_and_documented() -> None:
    """What the docs name and what the code names are the settings' variables (and the one
    hand-over variable, documented as not a setting)."""
    known = {name for names in variables().values() for name in names} | {HANDOVER_VAR}
    in_docs = set(_VARIABLE.findall(_client_section()))
    assert in_docs == known
    in_code: set[str] = set()
    for path in (ROOT / "client").rglob("*.py"):
        in_code |= set(re.findall(r'"((?:LMCP_[A-Z0-9_]+)|DO_NOT_TRACK)"', path.read_text()))
    in_code.discard("LMCP_APPS")  # a Python constant, not a variable
    assert in_code <= known, sorted(in_code - known)


def test_readme_shows_the_two_commands_first() -> None:
    readme = (ROOT / "README.md").read_text()
    head = readme[:900]
    assert "make demo" in head and "make test" in head
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / link).exists(), f"README links to a missing page: {link}"


def test_consent_page_commands_exist_and_parameters_match() -> None:
    """Every ``lmcp signals`` command docs/consent.md shows runs; its numbers are the code's."""
    from typer.testing import CliRunner

    from client.signals_cli import app
    from contract.limits import LATE_DAYS, PER_KEY_WEEKLY_LIMIT, WEEKLY_SIGNAL_LIMIT

    doc = (ROOT / "docs" / "consent.md").read_text()
    commands = set(re.findall(r"lmcp signals (\w+)", doc))
    assert {"off", "local", "on", "status", "preview", "log"} <= commands
    for command in commands:
        result = CliRunner().invoke(app, [command, "--help"])
        assert result.exit_code == 0, f"lmcp signals {command}: {result.output}"
    assert f"at most **C = {WEEKLY_SIGNAL_LIMIT}** signals per UTC week" in doc
    assert f"at most **{PER_KEY_WEEKLY_LIMIT}** signal per" in doc
    assert f"`LATE_DAYS` = {LATE_DAYS}" in doc
    for reason in ("weekly_duplicate", "weekly_limit", "clock_moved_back", "day_out_of_window"):
        assert f'"{reason}"' in doc or f"`{reason}`" in doc, reason
    # It says plainly what a local process that deletes the files can still do.
    assert "still reset the local bound" in " ".join(doc.split())
