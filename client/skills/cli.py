"""``lmcp skills``: Cloud Skills you own, from the command line (deleting one)."""

from __future__ import annotations

from typing import Annotated

import typer

from client.errors import ToolFailure
from client.settings import ClientSettings
from client.skills._http import SkillsApi, skill_path

app = typer.Typer(no_args_is_help=True)


@app.command()
def delete(
    slug: Annotated[str, typer.Argument(help="The skill to delete.")],
    team: Annotated[
        str | None, typer.Option(help="Its team (default: your personal skill).")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
) -> None:
    """Delete a skill you own: its content leaves the store (revisions keep only their hashes)."""
    where = f"team {team}" if team else "your personal skills"
    if not yes and not typer.confirm(f"Delete '{slug}' from {where}? This cannot be undone."):
        raise typer.Exit(1)
    try:
        answer = SkillsApi.from_settings(ClientSettings.from_process()).request(
            "DELETE", skill_path(slug), params={"team": team}
        )
    except ToolFailure as failure:
        typer.echo(f"not deleted: {failure.message} ({failure.code})", err=True)
        raise typer.Exit(1) from None
    purged = (answer.get("data") or {}).get("revisions_purged")
    typer.echo(f"deleted '{slug}': {purged} revision(s) purged")
