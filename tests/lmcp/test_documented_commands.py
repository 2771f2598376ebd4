"""Every ``lmcp`` command shown in README.md and docs/ exists, with the options shown
(as datasette tests its documentation); no page runs the ``duckdb`` command-line tool, which
nothing installs; the README says how to run ``lmcp`` on a fresh machine."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest
import typer
from typer import _click as click
from typer.core import TyperGroup

from lmcp.cli import app
from tests._servers import run_child

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_FENCE = re.compile(r"^(\s*)```")
_SPAN = re.compile(r"`([^`\n]+)`")
_ENV = re.compile(r"^[A-Z_][A-Z0-9_]*=")


def _blocks(text: str) -> list[str]:
    """Lines of code blocks (continuations joined) and inline ``lmcp ...`` spans."""
    out: list[str] = []
    inside = False
    pending = ""
    for line in text.splitlines():
        if _FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            out += [s for s in _SPAN.findall(line) if s.startswith(("lmcp ", "duckdb "))]
            if line.startswith("    ") and line.strip().startswith(("lmcp ", "duckdb ")):
                out.append(line)  # an indented code block
        else:
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            out.append(pending + line)
            pending = ""
    return out


def _commands(page: Path) -> list[list[str]]:
    """Each shown command line that runs lmcp, from the word ``lmcp`` on."""
    found = []
    for line in _blocks(page.read_text("utf-8")):
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue
        while words and _ENV.match(words[0]):
            words = words[1:]
        for prefix in (["uv", "run"], ["python3", "-m", "uv", "run"]):
            if words[: len(prefix)] == prefix:
                words = words[len(prefix) :]
        if words and (words[0] == "lmcp" or words[0].endswith("/bin/lmcp")):
            found.append(words[1:])
    return found


def _options(command: click.Command) -> set[str]:
    names: set[str] = set()
    for param in command.params:
        names.update(getattr(param, "opts", []))
        names.update(getattr(param, "secondary_opts", []))
    return names | {"--help"}


def _check(words: list[str]) -> list[str]:
    """What in ``lmcp WORDS`` does not exist (an empty list: it all resolves)."""
    root = typer.main.get_command(app)
    command: click.Command = root
    ctx = root.make_context("lmcp", [], resilient_parsing=True)
    problems: list[str] = []
    for raw in words:
        word = raw.strip("[]()")
        if not word or word in {"|", "...", "…"}:
            continue
        if word.startswith("-"):
            name = word.split("=")[0]
            if name not in _options(command):
                problems.append(f"`{command.name}` has no option {name}")
            continue
        if isinstance(command, TyperGroup) and not word.isupper():
            subs = []
            for name in word.split("|"):
                sub = command.get_command(ctx, name)
                if sub is None:
                    problems.append(f"`{command.name}` has no command {name}")
                else:
                    subs.append(sub)
            if not subs:
                return problems
            command = subs[-1]
    return problems


SHOWN = [(page, words) for page in PAGES for words in _commands(page)]


def test_the_pages_show_lmcp_commands() -> None:
    assert len(SHOWN) >= 40
    assert {p.name for p, _ in SHOWN} >= {"README.md", "triage.md", "consent.md", "recipes.md"}


@pytest.mark.parametrize(
    ("page", "words"), SHOWN, ids=[f"{p.name}:{' '.join(w)[:60]}" for p, w in SHOWN]
)
def test_every_shown_command_exists_with_its_options(page: Path, words: list[str]) -> None:
    assert _check(words) == []


def test_the_check_sees_a_wrong_command_and_a_wrong_option() -> None:
    assert _check(["signals", "status"]) == []
    assert _check(["signals", "stauts"]) != []
    assert _check(["analysis", "top", "--db", "x", "--colour"]) != []
    assert _check(["analysis", "top|trends|nope"]) != []


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_no_page_runs_the_duckdb_command_line_tool(page: Path) -> None:
    shown = _blocks(page.read_text("utf-8"))
    assert not [line for line in shown if re.match(r"\s*(\$ )?duckdb(\s|$)", line)]
    assert "`duckdb " not in page.read_text("utf-8")


def test_the_readme_says_how_to_run_lmcp_on_a_fresh_machine() -> None:
    readme = (REPO / "README.md").read_text("utf-8")
    assert "## Use it" in readme
    use = readme.split("## Use it", 1)[1].split("\n## ", 1)[0]
    assert "make venv" in use and ".venv/bin/lmcp" in use
    # What the section relies on: `make venv` makes .venv, and the package installs `lmcp`.
    makefile = (REPO / "Makefile").read_text("utf-8")
    assert re.search(r"^VENV := \.venv$", makefile, re.M) and re.search(r"^venv:", makefile, re.M)
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]["scripts"]
    assert scripts["lmcp"] == "lmcp.cli:main"


@pytest.mark.slow  # a process
def test_the_installed_lmcp_runs() -> None:
    lmcp = REPO / ".venv" / "bin" / "lmcp"
    if not lmcp.exists():
        pytest.skip("no .venv here (make venv makes it)")
    done = run_child([str(lmcp), "--version"])
    assert done.returncode == 0 and done.stdout.startswith("lmcp ")
