"""``lmcp``: the command line for users and the team.

Sub-commands live beside the code they drive and are added here:
``signals`` (client/cli/signals.py), ``recipes`` (client/recipes/cli.py), ``mcp``
(client/mcp_server.py), ``collector`` (collector/cli.py), ``analysis`` (analysis/cli.py).
The collector and analysis commands need their extras; without them they are simply absent.
"""

from __future__ import annotations

import importlib

import typer

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
    try:
        _sub = importlib.import_module(_module).app
    except ImportError:  # an extra that is not installed, or a part not built yet
        continue
    app.add_typer(_sub, name=_name, help=_help)

try:
    _mcp = importlib.import_module("client.mcp_server")
    app.command("mcp", help="Serve every LMCP tool over MCP stdio.")(_mcp.serve_command)
except ImportError:
    pass


def main() -> None:
    app()
