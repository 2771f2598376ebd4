"""``lmcp``: the command line for users and the team.

Sub-commands live beside the code they drive and are composed here, in the shell:
``signals`` (client/signals_cli.py, plus ``signals catalogue`` from lmcp/datacatalogue.py),
``recipes`` (client/recipes/cli.py), ``mcp`` (client/mcp_stdio.py), ``collector``
(lmcp/collector_cli.py), ``skills`` (lmcp/skills_cli.py), ``analysis`` (analysis/cli.py),
``lake`` (lmcp/lake_cli.py).

Each sub-command's module is imported only when that sub-command runs: ``lmcp --help`` and
``lmcp signals status`` never load the MCP SDK, FastAPI, DuckDB or Arrow (start-up time is what
a user waits for on every command). A command whose extra is not installed says which extra.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer

# Typer runs on its own copy of click: a command or context built here must be its type.
from typer import _click as click
from typer.core import TyperCommand, TyperGroup
from typer.exceptions import TyperException

from lmcp._errors import one_line

__all__ = ["app", "main"]


def _signals() -> click.Command:
    from client import signals_cli

    if "catalogue" not in {c.name for c in signals_cli.app.registered_commands}:
        signals_cli.app.command("catalogue")(_catalogue)
    return typer.main.get_command(signals_cli.app)


def _recipes() -> click.Command:
    from client.recipes import cli

    return typer.main.get_command(cli.app)


def _skills() -> click.Command:
    from client.skills import cli as own
    from lmcp._optional import import_optional

    service = import_optional("lmcp.skills_cli")  # None: the [skills] extra is absent
    if service is None:
        return typer.main.get_command(own.app)
    if "delete" not in {c.name for c in service.app.registered_commands}:
        service.app.command("delete")(own.delete)  # the author's own commands sit beside
    return typer.main.get_command(service.app)


def _module_app(module: str) -> click.Command:
    import importlib

    sub: typer.Typer = importlib.import_module(module).app
    return typer.main.get_command(sub)


def _mcp() -> click.Command:
    from client.mcp_stdio import serve_command

    one = typer.Typer(add_completion=False)
    one.command("mcp", help="Serve every LMCP tool over MCP stdio.")(serve_command)
    return typer.main.get_command(one)  # a Typer of one command is that command


#: name -> (loader, one-line help, extra that provides it). Loaded only when run or resolved.
_LAZY: dict[str, tuple[Callable[[], click.Command], str, str | None]] = {
    "signals": (_signals, "Anonymous friction signals: status, on/off, preview.", None),
    "recipes": (_recipes, "Saved multi-step workflows.", None),
    "mcp": (_mcp, "Serve every LMCP tool over MCP stdio.", "mcp"),
    "collector": (
        lambda: _module_app("lmcp.collector_cli"),
        "The team's collector server.",
        "collector",
    ),
    "skills": (_skills, "Cloud Skills: run the service; delete a skill you own.", None),
    "analysis": (
        lambda: _module_app("analysis.cli"),
        "Triage of the collected signals.",
        "analysis",
    ),
    "lake": (
        lambda: _module_app("lmcp.lake_cli"),
        "The Delta Lake table of a multi-collector deployment.",
        "lake",
    ),
}


class _LazyGroup(TyperGroup):
    """A group whose sub-commands are imported on first use; help lists them without loading."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *_LAZY})

    _listing = False  # True while help is formatted: list names, import nothing

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is not None or cmd_name not in _LAZY:
            return found
        loader, short, extra = _LAZY[cmd_name]
        if self._listing:
            return TyperCommand(cmd_name, help=short)
        try:
            command = loader()
        except ModuleNotFoundError as exc:
            if exc.name is None or exc.name.split(".")[0] in _OWN_PACKAGES:
                raise
            return _missing_extra(cmd_name, short, extra or "all", exc.name)
        command.name = cmd_name
        if isinstance(command, TyperGroup) and not command.help:
            command.help = short
        self.commands[cmd_name] = command
        return command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except Exception as exc:  # click's own exits and usage errors pass through unchanged
            if isinstance(exc, typer.Exit | typer.Abort | TyperException):
                raise
            message = one_line(exc)
            if message is None or ctx.params.get("debug"):
                raise  # a bug, or --debug: the full traceback
            typer.echo(f"error: {message} (--debug shows the traceback)", err=True)
            raise typer.Exit(1) from None

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # The short help comes from the table above: listing never imports a sub-command.
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


_OWN_PACKAGES = frozenset(
    {"contract", "service", "client", "collector", "cloudskills", "analysis", "lmcp"}
)


def _missing_extra(name: str, short: str, extra: str, module: str) -> click.Command:
    def explain() -> None:
        typer.echo(
            f"error: `lmcp {name}` needs the [{extra}] extra ({module} is not installed): "
            f"pip install 'lmcp[{extra}]'",
            err=True,
        )
        raise typer.Exit(1)

    return TyperCommand(
        name, help=short, callback=explain, context_settings={"ignore_unknown_options": True}
    )


app = typer.Typer(
    name="lmcp",
    cls=_LazyGroup,
    help="LMCP: local tools over MCP, anonymous friction signals, and their triage.",
    no_args_is_help=True,
    add_completion=False,
)


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
    from lmcp.datacatalogue import generate, render_json, render_markdown
    from lmcp.privacy_params import print_privacy, privacy_parameters

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
