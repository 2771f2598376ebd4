"""``lmcp``: the command line for users and the team.

The shell only composes: every command group is a Typer app of the module that drives it
(where such a module lives: CONTRIBUTING.md, *Add a command*), added here with ``add_typer``:
``signals`` (client/signals_cli.py, plus ``catalogue`` below), ``recipes``
(client/recipes/cli.py), ``collector`` (lmcp/collector_cli.py), ``skills``
(client/skills/cli.py and lmcp/skills_cli.py), ``analysis`` (analysis/cli.py), ``lake``
(lmcp/lake_cli.py); ``mcp`` is one command (client/mcp_stdio.py).

A group's module is imported only when that group runs: ``lmcp --help`` lists the names and
short help given to ``add_typer`` and loads none of them, and ``lmcp signals status`` never
loads the MCP SDK, FastAPI, DuckDB, Arrow or pydantic (start-up time is what a user waits for
on every command; ``benchmarks/bench_startup.py`` measures it). Help is click's plain help
(typer's rich help alone imports ~0.5 s of modules). A group whose extra is not installed
says which extra, and how to install it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer

# Typer runs on its own copy of click: a command or context built here must be its type.
from typer import _click as click
from typer.core import TyperGroup
from typer.exceptions import TyperException

from lmcp._errors import one_line
from lmcp._optional import absent_module, import_optional

__all__ = ["app", "main"]


def _help_unset_is_false(command: click.Command, ctx: click.Context) -> None:
    """Typer coerces a flag left unset (None) through a pydantic TypeAdapter, and ``--help``
    is unset on every command that runs: that imports pydantic (~0.1 s) for nothing. A bool
    default skips the coercion (typer passes bools through)."""
    option = command.get_help_option(ctx)
    if option is not None and option.default is None:
        option.default = False


class _Group(TyperGroup):
    """Every group of the shell; commands it resolves get a help flag that costs nothing."""

    def get_help_option(self, ctx: click.Context) -> Any:
        option = super().get_help_option(ctx)
        if option is not None and option.default is None:
            option.default = False
        return option

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None and not isinstance(command, _Group):
            _help_unset_is_false(command, ctx)
        return command


def _typer(help_text: str) -> typer.Typer:
    """A group of the shell: plain help, no completion, help when run without a command."""
    return typer.Typer(
        cls=_Group,
        help=help_text,
        rich_markup_mode=None,
        no_args_is_help=True,
        add_completion=False,
    )


def _signals() -> TyperGroup:
    from client import signals_cli

    group = _typer(signals_cli.HELP)
    group.add_typer(signals_cli.app)  # no name: its commands are the group's
    group.command("catalogue")(_catalogue)
    return typer.main.get_group(group)


def _recipes() -> TyperGroup:
    from client.recipes import cli

    group = _typer("Saved multi-step workflows: list, show, save, run, export, import, delete.")
    group.add_typer(cli.app)
    return typer.main.get_group(group)


def _skills() -> TyperGroup:
    from client.skills import cli as own

    group = _typer("Cloud Skills: delete a skill you own; serve the service ([collector] extra).")
    group.add_typer(own.app)  # the author's own commands, with the core install
    service = import_optional("lmcp.skills_cli")  # None: the service's extra is absent
    if service is not None:
        group.add_typer(service.app, name=None)  # name=None: merged, not `skills skills`
    return typer.main.get_group(group)


def _module(module: str, help_text: str) -> Callable[[], TyperGroup]:
    """A group that is one module's app, its own callback included (the lake's checks its
    extra before any command runs; an app merged without a name would lose it)."""

    def build() -> TyperGroup:
        import importlib

        shell = typer.Typer(rich_markup_mode=None, add_completion=False)
        shell.add_typer(
            importlib.import_module(module).app, name="group", cls=_Group, help=help_text
        )
        group = typer.main.get_group(shell).commands["group"]
        assert isinstance(group, TyperGroup)
        return group

    return build


class _Lazy:
    """What the shell knows of a group before it is loaded: enough to list it in help."""

    def __init__(self, build: Callable[[], TyperGroup], short: str, extra: str | None) -> None:
        self.build, self.short, self.extra = build, short, extra


#: Every group: how to build it, its one line in ``lmcp --help``, the extra that provides it
#: (the extras are pyproject.toml's ``[project.optional-dependencies]``; a test checks them).
_GROUPS: dict[str, _Lazy] = {
    "signals": _Lazy(_signals, "Anonymous friction signals: status, on/off, preview.", None),
    "recipes": _Lazy(_recipes, "Saved multi-step workflows.", None),
    "collector": _Lazy(
        _module("lmcp.collector_cli", "The team's collector server (FastAPI + DuckDB)."),
        "The team's collector server.",
        "collector",
    ),
    "skills": _Lazy(_skills, "Cloud Skills: run the service; delete a skill you own.", None),
    "analysis": _Lazy(
        _module("analysis.cli", "Triage of the collected friction signals."),
        "Triage of the collected signals.",
        "analysis",
    ),
    "lake": _Lazy(
        _module("lmcp.lake_cli", "The Delta Lake table of a multi-collector deployment."),
        "The Delta Lake table of a multi-collector deployment.",
        "lake",
    ),
}


def _missing_extra(command: str, extra: str, module: str) -> typer.Exit:
    from contract.version import install_hint

    typer.echo(
        f"error: `lmcp {command}` needs the [{extra}] extra ({module} is not installed): "
        f"{install_hint(extra)}",
        err=True,
    )
    return typer.Exit(1)


class _LazyGroup(_Group):
    """A group whose commands are imported on first use (parsed, listed or its help shown).

    Typer builds it from ``add_typer(..., cls=_LazyGroup)`` with no commands; its name picks
    its entry in ``_GROUPS``."""

    _loaded = False

    def _load(self) -> None:
        if self._loaded:
            return
        lazy = _GROUPS[str(self.name)]
        try:
            group = lazy.build()
        except ModuleNotFoundError as exc:
            module = absent_module(exc)
            if module is None or lazy.extra is None:
                raise  # our own module, or the core install, is broken: a bug, with its traceback
            raise _missing_extra(str(self.name), lazy.extra, module) from None
        self.commands.update(group.commands)
        self.help, self.callback = group.help, group.callback
        self.params = [*group.params, *(p for p in self.params if p not in group.params)]
        self._loaded = True

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        self._load()  # before its options are parsed: the module's group may add some
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._load()
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        self._load()
        return super().get_command(ctx, cmd_name)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self._load()  # the group's own help text, not the one-line listing
        super().format_help(ctx, formatter)


class _Shell(_Group):
    """The root: an ordinary mistake is one line on stderr (``--debug``: the traceback)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(super().list_commands(ctx))

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ModuleNotFoundError as exc:  # a command that imports its extra's module late
            name = ctx.invoked_subcommand or ""
            module, lazy = absent_module(exc), _GROUPS.get(name)
            if module is None or lazy is None or lazy.extra is None or ctx.params.get("debug"):
                raise
            raise _missing_extra(name, lazy.extra, module) from None
        except Exception as exc:  # click's own exits and usage errors pass through unchanged
            if isinstance(exc, typer.Exit | typer.Abort | TyperException):
                raise
            message = one_line(exc)
            if message is None or ctx.params.get("debug"):
                raise  # a bug, or --debug: the full traceback
            typer.echo(f"error: {message} (--debug shows the traceback)", err=True)
            raise typer.Exit(1) from None


app = typer.Typer(
    name="lmcp",
    cls=_Shell,
    help="LMCP: local tools over MCP, anonymous friction signals, and their triage.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)
for _name, _lazy in _GROUPS.items():
    app.add_typer(
        typer.Typer(), name=_name, cls=_LazyGroup, short_help=_lazy.short, no_args_is_help=True
    )


@app.command("mcp", help="Serve every LMCP tool over MCP stdio.")
def _mcp() -> None:
    """Serve every LMCP tool over MCP stdio (configure with LMCP_HOME, LMCP_COLLECTOR_URL)."""
    import importlib.util

    # Asked before the server answers anything: it answers the handshake before the SDK loads.
    if importlib.util.find_spec("mcp") is None:
        raise _missing_extra("mcp", "mcp", "mcp")
    from client.mcp_stdio import serve_command

    serve_command()


def _version(value: bool) -> None:
    if value:
        from contract.version import DISTRIBUTION, package_version

        typer.echo(f"lmcp {package_version()} ({DISTRIBUTION})")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    debug: Annotated[
        bool, typer.Option("--debug", help="On an error, show the full traceback.")
    ] = False,
    show_version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """LMCP: local tools over MCP, anonymous friction signals, and their triage."""
    ctx.obj = {"debug": debug}


def _catalogue(
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print Markdown (docs/data-catalogue.md).")
    ] = False,
    raw: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Print the data catalogue: every field the pipeline sends or keeps, generated from code."""
    from rich.markup import escape
    from rich.table import Table

    from client._console import make_console
    from collector.releases.published import privacy_parameters
    from lmcp.datacatalogue import generate, render_json, render_markdown
    from lmcp.privacy_params import print_privacy

    data = generate()
    if raw:
        typer.echo(render_json(data), nl=False)
    elif markdown:
        typer.echo(render_markdown(data), nl=False)
    else:
        console = make_console()
        for fmt in data.formats:
            table = Table("field", "type", "values", "example", title=f"{fmt.title} ({fmt.key})")
            for f in fmt.fields:
                # Escaped: a type such as ``date32[day]`` is text, not rich markup.
                table.add_row(*(escape(cell) for cell in (f.name, f.type, f.values, f.example)))
            console.print(table)
        for omitted in data.omitted:
            console.print(f"omitted: {escape(omitted)}")
        print_privacy(privacy_parameters())


def main() -> None:
    app()
