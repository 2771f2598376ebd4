"""``lmcp collector``: serve the collector, apply migrations, run retention now.

``lmcp collector serve --host 127.0.0.1 --port 8765 --db PATH`` runs it under uvicorn with the
access log OFF (an access log line carries the client's address) and no ``Server`` header.
Every other setting comes from ``LMCP_COLLECTOR_*`` environment variables
(``docs/configuration.md``).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import typer

from collector.settings import CollectorSettings

__all__ = ["app", "build_settings", "uvicorn_config"]

app = typer.Typer(
    name="collector",
    help="The team's collector server (FastAPI + DuckDB).",
    no_args_is_help=True,
    add_completion=False,
)


def build_settings(
    *, host: str | None = None, port: int | None = None, db: Path | None = None
) -> CollectorSettings:
    """Settings from the environment, with the command-line options on top."""
    overrides: dict[str, Any] = {}
    if host is not None:
        overrides["host"] = host
    if port is not None:
        overrides["port"] = port
    if db is not None:
        overrides["db_path"] = db
    return CollectorSettings(**overrides)


def uvicorn_config(settings: CollectorSettings, **extra: Any) -> dict[str, Any]:
    """uvicorn options that keep the sender's address and user agent out of every log."""
    return {
        "host": settings.host,
        "port": settings.port,
        "access_log": False,
        "server_header": False,
        "proxy_headers": False,
        "timeout_graceful_shutdown": 10,
        **extra,
    }


@app.command()
def serve(
    host: str | None = typer.Option(None, help="Address to bind (default 127.0.0.1)."),
    port: int | None = typer.Option(None, help="Port to bind (default 8765)."),
    db: Path | None = typer.Option(None, help="The DuckDB file (default: the user data dir)."),
    log_level: str = typer.Option("info", help="uvicorn/collector log level."),
    lake: str | None = typer.Option(None, help="Append to this Delta table (folder or s3://)."),
) -> None:
    """Run the collector under uvicorn until interrupted."""
    import uvicorn

    from collector.app import silence_access_log, tune_serving_process
    from lmcp.apps import collector_app

    settings = build_settings(host=host, port=port, db=db)
    if lake is not None:
        settings = settings.model_copy(update={"lake_uri": lake})
    tune_serving_process()
    logging.basicConfig(level=log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    silence_access_log()
    uvicorn.run(collector_app(settings), **uvicorn_config(settings, log_level=log_level))


@app.command()
def migrate(
    db: Path | None = typer.Option(None, help="The DuckDB file (default: the user data dir)."),
) -> None:
    """Apply pending schema migrations and exit."""
    from collector.db import Database

    settings = build_settings(db=db)
    database = Database(settings.db_path)
    applied = database.open()
    database.close()
    typer.echo(
        f"applied {len(applied)} migration(s)" + (": " + ", ".join(applied) if applied else "")
    )


@app.command()
def purge(
    db: Path | None = typer.Option(None, help="The DuckDB file (default: the user data dir)."),
) -> None:
    """Delete the signals outside the retention window now (the collector must be stopped)."""
    from collector.db import Database
    from collector.retention import purge_expired
    from collector.writer import utc_today

    settings = build_settings(db=db)
    database = Database(settings.db_path)
    database.open()
    try:
        deleted = database.run_sync(
            lambda con: purge_expired(con, utc_today(), settings.retention_days)
        )
    finally:
        database.close()
    typer.echo(f"deleted {deleted} signal(s) older than {settings.retention_days} days")


if __name__ == "__main__":
    app()
