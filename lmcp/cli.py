"""``lmcp``: the command line for users and the team.

Sub-commands live beside the code they drive and are composed here, in the shell:
``signals`` (client/signals_cli.py, plus ``signals catalogue`` from lmcp/datacatalogue.py),
``recipes`` (client/recipes/cli.py), ``mcp`` (client/mcp_server.py), ``collector``
(lmcp/collector_cli.py), ``skills`` (lmcp/skills_cli.py), ``analysis`` (analysis/cli.py). The
collector, skills and analysis commands need their extras; without them they are simply absent.
"""

from __future__ import annotations

from typing import Annotated

import typer

from client import signals_cli
from client.recipes import cli as recipes_cli
from client.skills import cli as skills_client_cli
from lmcp._optional import import_optional

__all__ = ["app", "main"]

app = typer.Typer(
    name="lmcp",
    help="LMCP: local tools over MCP, anonymous friction signals, and their triage.",
    no_args_is_help=True,
    add_completion=False,
)


def _catalogue(
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print Markdown (docs/data-catalogue.md).")
    ] = False,
    raw: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Print the data catalogue: every field the pipeline sends or keeps, generated from code."""
    from rich.console import Console
    from rich.table import Table

    from lmcp.datacatalogue import generate, render_json, render_markdown
    from lmcp.privacy_params import print_privacy, privacy_parameters

    data = generate()
    if raw:
        typer.echo(render_json(data), nl=False)
    elif markdown:
        typer.echo(render_markdown(data), nl=False)
    else:
        for fmt in data.formats:
            table = Table("field", "type", "values", "example", title=f"{fmt.title} ({fmt.key})")
            for f in fmt.fields:
                table.add_row(f.name, f.type, f.values, f.example)
            Console().print(table)
        for omitted in data.omitted:
            Console().print(f"omitted: {omitted}")
        print_privacy(privacy_parameters())


# The client's commands need only the core dependencies: always present.
signals_cli.app.command("catalogue")(_catalogue)
app.add_typer(
    signals_cli.app, name="signals", help="Anonymous friction signals: status, on/off, preview."
)
app.add_typer(recipes_cli.app, name="recipes", help="Saved multi-step workflows.")

#: Commands whose extra may not be installed: (name, module, help).
_skills_added = False
_OPTIONAL_SUBCOMMANDS = (
    ("collector", "lmcp.collector_cli", "The team's collector server."),
    ("skills", "lmcp.skills_cli", "Cloud Skills: run the service; delete a skill you own."),
    ("analysis", "analysis.cli", "Triage of the collected signals."),
    ("lake", "lmcp.lake_cli", "The Delta Lake table of a multi-collector deployment."),
)

for _name, _module, _help in _OPTIONAL_SUBCOMMANDS:
    _sub = import_optional(_module)  # None: its extra is not installed
    if _sub is not None:
        if _name == "skills":  # the author's own commands sit beside the service's
            _sub.app.command("delete")(skills_client_cli.delete)
        app.add_typer(_sub.app, name=_name, help=_help)
        if _name == "skills":
            _skills_added = True
if not _skills_added:
    app.add_typer(skills_client_cli.app, name="skills", help="Cloud Skills you own.")

_mcp = import_optional("client.mcp_server")
if _mcp is not None:
    app.command("mcp", help="Serve every LMCP tool over MCP stdio.")(_mcp.serve_command)


def main() -> None:
    app()
