"""``make help`` lists every target: each one carries the ``##`` comment help prints."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests._servers import run_child

MAKEFILE = Path(__file__).resolve().parent.parent / "Makefile"
TARGET = re.compile(r"^([a-zA-Z0-9_-]+):(?!=)")


def _targets() -> list[str]:
    return [m.group(1) for line in MAKEFILE.read_text().splitlines() if (m := TARGET.match(line))]


def _phony() -> set[str]:
    joined = MAKEFILE.read_text().replace("\\\n", " ")
    line = next(x for x in joined.splitlines() if x.startswith(".PHONY:"))
    return set(line.removeprefix(".PHONY:").split())


def test_every_target_has_a_help_line_and_is_phony() -> None:
    lines = MAKEFILE.read_text().splitlines()
    for target in _targets():
        line = next(x for x in lines if x.startswith(target + ":"))
        assert "## " in line, f"`make {target}` has no `## what it does` comment"
        assert target in _phony(), f"`make {target}` is not in .PHONY"


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
def test_make_help_prints_every_target() -> None:
    out = run_child(
        ["make", "--no-print-directory", "-f", str(MAKEFILE), "help"],
        check=True,
        cwd=MAKEFILE.parent,
    ).stdout
    listed = [line.split()[1] for line in out.splitlines() if line.startswith("make ")]
    assert listed == _targets()
