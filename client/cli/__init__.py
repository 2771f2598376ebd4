"""``lmcp``: the command line for users and the team.

Sub-commands live beside the code they drive and are added here:
``signals`` (client/cli/signals.py), ``recipes`` (client/recipes/cli.py), ``mcp``
(client/mcp_server.py), ``collector`` (collector/cli.py), ``analysis`` (analysis/cli.py).
The collector and analysis commands need their extras; without them they are simply absent.
"""

from __future__ import annotations

import typer

from client._optional import import_optional

__all__ = ["app", "main"]

app = typer.Typer(
    name="lmcp",
    help="LMCP: local tools over MCP, anonymous friction signals, and their triage.",
    no_args_is_help=True,
    add_completion=False,
)

_SUBCOMMANDS = (
    ("signals", "client.cli.signals", "Anonymous friction signals: status, on/off, preview."),
    ("recipes", "client.recipes.cli", "Saved multi-step workflows."),
    ("collector", "collector.cli", "The team's collector server."),
    ("analysis", "analysis.cli", "Triage of the collected signals."),
)

for _name, _module, _help in _SUBCOMMANDS:
    _sub = import_optional(_module)  # None: its extra is not installed
    if _sub is not None:
        app.add_typer(_sub.app, name=_name, help=_help)

_mcp = import_optional("client.mcp_server")
if _mcp is not None:
    app.command("mcp", help="Serve every LMCP tool over MCP stdio.")(_mcp.serve_command)


def main() -> None:
    app()
