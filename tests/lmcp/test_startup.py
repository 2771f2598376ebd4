"""What each often-run command imports: nothing heavy it does not use.

Start-up time is what a user waits for on every command; it is measured in
``benchmarks/bench_startup.py`` (never here: a test checks what is imported, in a fresh
interpreter running the real entry point, as a user's shell does).
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from contract.version import package_version
from lmcp.cli import app
from tests._processes import run_child

#: Never needed by a command that reads a file or the state folder.
HEAVY = (
    "duckdb",
    "pyarrow",
    "fastapi",
    "starlette",
    "uvicorn",
    "opendp",
    "deltalake",
    "opentelemetry",
    "mcp",
    "mcp_types",
    "httpx",
    "vl_convert",
)
#: Not needed either by the commands that only read the state folder or print help: typer's
#: rich help and its pydantic coercion of an unset ``--help`` flag cost ~0.5 s together.
LIGHT_TOO = ("pydantic", "pydantic_core", "rich")

_PROBE = """
import sys
sys.argv = ["lmcp", *sys.argv[1:]]
from lmcp.cli import main
try:
    main()
except SystemExit:
    pass
top = {{name.split(".")[0] for name in sys.modules}}
sys.stderr.write("LOADED=" + ",".join(m for m in {watched!r} if m in top) + "\\n")
"""


def loaded(args: list[str], home: Path, watched: tuple[str, ...]) -> list[str]:
    """The ``watched`` top-level packages imported by ``lmcp ARGS`` in a fresh interpreter."""
    # The environment exactly as given: a user's shell sets no PYTHONPATH.
    done = run_child(
        [sys.executable, "-c", _PROBE.format(watched=watched), *args],
        env={"LMCP_HOME": str(home), "PATH": "/usr/bin:/bin"},
        repo_on_path=False,
    )
    line = [x for x in done.stderr.splitlines() if x.startswith("LOADED=")]
    assert line, done.stderr
    return [m for m in line[0].removeprefix("LOADED=").split(",") if m]


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["signals", "status"],
        ["signals", "status", "--json"],
        ["signals", "--help"],
        ["signals", "on"],
    ],
)
def test_state_and_help_commands_load_nothing_heavy(args: list[str], tmp_path: Path) -> None:
    assert loaded(args, tmp_path, HEAVY + LIGHT_TOO) == []


@pytest.fixture(scope="module")
def small_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small collector file with its closed periods released (what ``--db`` answers from)."""
    import duckdb

    from analysis import synthesize
    from collector.releases.store import release_closed_periods
    from contract.accountant import ReleasePlan

    path = tmp_path_factory.mktemp("startup") / "small.duckdb"
    end = dt.date(2026, 3, 29)  # a Sunday: its week closes LATE_DAYS later
    synthesize(path, 3_000, end_day=end)
    with duckdb.connect(str(path)) as con:
        release_closed_periods(con, end + dt.timedelta(days=3), ReleasePlan(), retention_days=36500)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("exact", [False, True], ids=["released", "exact"])
@pytest.mark.parametrize("question", ["top", "trends"])
def test_a_question_of_a_file_loads_only_duckdb(
    question: str, exact: bool, small_file: Path, tmp_path: Path
) -> None:
    args = ["analysis", question, "--db", str(small_file), "--format", "csv"]
    found = loaded([*args, *(["--exact"] if exact else [])], tmp_path, HEAVY)
    assert found == ["duckdb"]


@pytest.mark.slow
def test_the_mcp_server_loads_no_collector_part(tmp_path: Path) -> None:
    """``lmcp mcp`` needs the SDK (which brings its own HTTP parts); never the collector's
    FastAPI, DuckDB, Arrow, OpenDP or the lake."""
    found = loaded(["mcp"], tmp_path, HEAVY)  # stdin is empty: it serves, then stops
    assert "mcp" in found
    assert not {"duckdb", "pyarrow", "fastapi", "opendp", "deltalake", "vl_convert"} & set(found)


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
