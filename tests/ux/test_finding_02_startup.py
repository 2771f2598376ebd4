"""Finding 2: ``lmcp --help`` and ``lmcp signals status`` load no heavy dependency; ``--version``.

Each check runs the real entry point in a fresh interpreter: what a user's shell pays for.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from contract.version import package_version
from lmcp.cli import app
from tests._servers import HANG_S

HEAVY = ("mcp", "fastapi", "duckdb", "pyarrow", "opentelemetry", "uvicorn", "deltalake")

_PROBE = """
import sys
sys.argv = ["lmcp", *sys.argv[1:]]
from lmcp.cli import main
try:
    main()
except SystemExit:
    pass
sys.stderr.write("LOADED=" + ",".join(m for m in {heavy!r} if m in sys.modules) + "\\n")
"""


def _loaded(args: list[str], home: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(heavy=HEAVY), *args],
        capture_output=True,
        text=True,
        timeout=HANG_S,
        env={"LMCP_HOME": str(home), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    line = [x for x in done.stderr.splitlines() if x.startswith("LOADED=")]
    assert line, done.stderr
    return [m for m in line[0].removeprefix("LOADED=").split(",") if m]


@pytest.mark.slow
@pytest.mark.parametrize("args", [["--help"], ["signals", "status"], ["signals", "--help"]])
def test_startup_loads_no_heavy_dependency(args: list[str], tmp_path: Path) -> None:
    assert _loaded(args, tmp_path) == []


def test_version_prints_the_package_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert package_version() in result.output


def test_help_lists_every_command_without_loading_them() -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    for name in ("signals", "recipes", "mcp", "collector", "skills", "analysis", "lake"):
        assert name in result.output


def test_a_lazy_command_still_resolves_its_sub_commands() -> None:
    result = CliRunner().invoke(app, ["analysis", "--help"])
    assert result.exit_code == 0 and "synth" in result.output
