"""Every environment variable the client reads is documented in docs/configuration.md."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_client_variable_is_documented() -> None:
    used: set[str] = set()
    for path in (ROOT / "client").rglob("*.py"):
        used |= set(re.findall(r'"((?:LMCP_[A-Z_]+)|DO_NOT_TRACK)"', path.read_text()))
    used.discard("LMCP_APPS")  # a Python constant, not a variable
    assert {"LMCP_HOME", "LMCP_COLLECTOR_URL", "LMCP_ANONYMOUS_SIGNALS", "DO_NOT_TRACK"} <= used
    doc = (ROOT / "docs" / "configuration.md").read_text()
    missing = sorted(v for v in used if f"`{v}`" not in doc)
    assert missing == [], f"undocumented client settings: {missing}"


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
