"""The shell composes the groups of other modules without changing them, lists them with plain
help, and says which extra a group needs, by the distribution's real name."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from importlib.metadata import metadata
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from contract.version import DISTRIBUTION
from lmcp import cli
from lmcp.cli import app
from tests._packages import PACKAGES
from tests._processes import run_child

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()

#: Each group's own modules: the Typer apps the shell adds with ``add_typer``.
GROUP_MODULES = {
    "signals": ["client.signals_cli"],
    "recipes": ["client.recipes.cli"],
    "collector": ["lmcp.collector_cli"],
    "skills": ["client.skills.cli", "lmcp.skills_cli"],
    "analysis": ["analysis.cli"],
    "lake": ["lmcp.lake_cli"],
}


def _command_names(module: str) -> list[str]:
    sub: typer.Typer = importlib.import_module(module).app
    return [str(c.name or c.callback.__name__) for c in sub.registered_commands if c.callback]


def test_the_table_names_every_group() -> None:
    assert set(cli._GROUPS) == set(GROUP_MODULES)


@pytest.mark.parametrize("group", sorted(GROUP_MODULES))
def test_a_group_lists_its_modules_commands_and_leaves_their_apps_unchanged(group: str) -> None:
    before = {m: _command_names(m) for m in GROUP_MODULES[group]}
    result = runner.invoke(app, [group, "--help"])
    assert result.exit_code == 0, result.output
    for module, names in before.items():
        assert _command_names(module) == names, f"the shell added a command to {module}'s app"
        for name in names:
            assert name.replace("_", "-") in result.output or name in result.output


@pytest.mark.usefixtures("catalogue_command")
def test_the_shell_adds_its_own_command_to_its_own_group_only() -> None:
    result = runner.invoke(app, ["signals", "catalogue", "--json"])
    assert result.exit_code == 0 and result.output.startswith("{")
    assert "catalogue" not in _command_names("client.signals_cli")


def test_help_is_plain_text() -> None:
    """Click's help: no rich boxes (rich's help alone costs ~0.5 s of imports)."""
    for args in (["--help"], ["signals", "--help"], ["analysis", "top", "--help"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0
        assert "Usage: lmcp" in result.output
        assert not {"╭", "│", "─"} & set(result.output), result.output


def test_every_extra_the_shell_names_exists() -> None:
    extras = set(metadata(DISTRIBUTION).get_all("Provides-Extra") or [])
    named = {lazy.extra for lazy in cli._GROUPS.values() if lazy.extra is not None}
    assert named and named <= extras, named - extras
    assert "mcp" in extras  # ``lmcp mcp``'s


_BLOCKED = """
import sys
for name in {blocked!r}:
    sys.modules[name] = None  # as if that extra were not installed
sys.argv = ["lmcp", *sys.argv[1:]]
from lmcp.cli import main
main()
"""


def _without(blocked: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_child([sys.executable, "-c", _BLOCKED.format(blocked=blocked), *args], cwd=REPO)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("blocked", "args", "extra"),
    [
        (["fastapi"], ["collector", "serve"], "collector"),
        (["duckdb"], ["analysis", "top", "--db", "x.duckdb"], "analysis"),
        (["deltalake"], ["lake", "status"], "lake"),
        (["mcp"], ["mcp"], "mcp"),
    ],
)
def test_a_missing_extra_names_the_distribution_and_the_extra(
    blocked: list[str], args: list[str], extra: str
) -> None:
    done = _without(blocked, *args)
    assert done.returncode == 1, done.stderr
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert len(lines) == 1, lines
    assert f"pip install '{DISTRIBUTION}[{extra}]'" in lines[0]


@pytest.mark.slow
def test_a_missing_module_of_our_own_is_a_bug_not_an_extra() -> None:
    done = _without(["analysis._api"], "analysis", "top", "--db", "x.duckdb")
    assert done.returncode != 0
    assert "Traceback" in done.stderr and "pip install" not in done.stderr


def _typer_apps() -> list[Path]:
    """Every module of the packages that builds a Typer app."""
    found = []
    for package in (p for p in PACKAGES if p != "lmcp"):
        for path in sorted((REPO / package).rglob("*.py")):
            if "typer.Typer(" in path.read_text(encoding="utf-8"):
                found.append(path)
    return found + sorted((REPO / "lmcp").glob("*_cli.py"))


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return out


def test_cli_modules_live_where_contributing_says() -> None:
    """CONTRIBUTING.md, *Add a command*: ``cli.py`` or ``<topic>_cli.py`` beside its package;
    in the shell only when it needs the shell; and every one is a group the shell adds."""
    rule = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert "### Add a command" in rule
    apps = _typer_apps()
    modules = set()
    for path in apps:
        relative = path.relative_to(REPO)
        assert path.name == "cli.py" or path.name.endswith("_cli.py"), relative
        dotted = ".".join(relative.with_suffix("").parts)
        modules.add(dotted)
        if relative.parts[0] == "lmcp":
            shell = {m for m in _imports(path) if m.startswith("lmcp.")}
            assert shell, f"{relative} needs nothing of the shell: it belongs beside its package"
    assert modules == {m for ms in GROUP_MODULES.values() for m in ms}


#: Where a missing module's name is read: the shell's test (is it an extra's?), and the
#: collector's (is it deltalake, the lake's?), which the collector cannot borrow from above.
ABSENT_EXTRA_TESTS = {"lmcp/_optional.py", "collector/lake_errors.py"}


def _reads_a_missing_modules_name(source: str) -> list[int]:
    """Lines where the ``.name`` of a ``ModuleNotFoundError``/``ImportError`` is read: one
    caught by an ``except`` or taken as an annotated parameter."""

    def missing(annotation: ast.expr | None) -> bool:
        text = ast.unparse(annotation) if annotation is not None else ""
        return "ModuleNotFoundError" in text or "ImportError" in text

    scopes: list[tuple[str, list[ast.stmt]]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ExceptHandler) and node.name and missing(node.type):
            scopes.append((node.name, node.body))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            scopes += [(a.arg, node.body) for a in args if missing(a.annotation)]
    return sorted(
        inner.lineno
        for name, body in scopes
        for inner in ast.walk(ast.Module(body=body, type_ignores=[]))
        if isinstance(inner, ast.Attribute)
        and inner.attr == "name"
        and isinstance(inner.value, ast.Name)
        and inner.value.id == name
    )


def test_the_absent_extra_test_is_written_once() -> None:
    """Every other module asks ``absent_module`` (or ``lake_extra``), never ``exc.name``."""
    found = {
        f"{path.relative_to(REPO)}:{line}"
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
        if path.relative_to(REPO).as_posix() not in ABSENT_EXTRA_TESTS
        for line in _reads_a_missing_modules_name(path.read_text(encoding="utf-8"))
    }
    assert found == set()
    for place in ABSENT_EXTRA_TESTS:
        assert _reads_a_missing_modules_name((REPO / place).read_text(encoding="utf-8")), place


def test_the_check_sees_a_second_absent_extra_test() -> None:
    copy = (
        "try:\n    import duckdb\nexcept ModuleNotFoundError as exc:\n"
        "    if exc.name and exc.name.split('.')[0] == 'duckdb':\n        pass\n"
    )
    assert _reads_a_missing_modules_name(copy) == [4, 4]
    helper = "def absent(exc: ModuleNotFoundError) -> str | None:\n    return exc.name\n"
    assert _reads_a_missing_modules_name(helper) == [2]
