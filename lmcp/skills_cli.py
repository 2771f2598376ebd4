"""``lmcp skills``: serve the Cloud Skills service, apply its migrations.

``lmcp skills serve --host 127.0.0.1 --port 8766 --db PATH`` runs it under uvicorn with the
access log OFF and no ``Server`` header. The principals and every other setting come from
``LMCP_SKILLS_*`` environment variables (``docs/cloud-skills.md``). Its database is its own
file, never the collector's.
"""

from __future__ import annotations

import logging
from pathlib import Path

import typer

from cloudskills.settings import SkillsSettings
from lmcp._overrides import bind_overrides
from service.settings import load_settings

__all__ = ["app", "build_settings"]

app = typer.Typer(
    name="skills",
    help="The Cloud Skills service (FastAPI + its own DuckDB file).",
    no_args_is_help=True,
    add_completion=False,
)


def build_settings(
    *, host: str | None = None, port: int | None = None, db: Path | None = None
) -> SkillsSettings:
    """Settings from the environment, with the command-line options on top."""
    return load_settings(SkillsSettings, **bind_overrides(host=host, port=port, db=db))


@app.command()
def serve(
    host: str | None = typer.Option(None, help="Address to bind (default 127.0.0.1)."),
    port: int | None = typer.Option(None, help="Port to bind (default 8766)."),
    db: Path | None = typer.Option(None, help="The DuckDB file (default: the user data dir)."),
    log_level: str = typer.Option("info", help="uvicorn/service log level."),
) -> None:
    """Run the skills service under uvicorn until interrupted."""
    import uvicorn

    from cloudskills.app import create_app
    from lmcp.apps import check_address_free, uvicorn_config
    from service.serving import silence_access_log

    settings = build_settings(host=host, port=port, db=db)
    check_address_free(settings)
    logging.basicConfig(level=log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    silence_access_log()
    uvicorn.run(create_app(settings), **uvicorn_config(settings, log_level=log_level))


@app.command()
def migrate(
    db: Path | None = typer.Option(None, help="The DuckDB file (default: the user data dir)."),
) -> None:
    """Apply the skills service's pending migrations and exit."""
    from cloudskills.store import skills_database

    database = skills_database(build_settings(db=db).db_path)
    applied = database.open()
    database.close()
    typer.echo(
        f"applied {len(applied)} migration(s)" + (": " + ", ".join(applied) if applied else "")
    )


if __name__ == "__main__":
    app()
