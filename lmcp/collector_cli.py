"""``lmcp collector``: serve the collector, apply migrations, run retention now, back it up.

``lmcp collector serve --host 127.0.0.1 --port 8765 --db PATH`` runs it under uvicorn with the
access log OFF (an access log line carries the client's address) and no ``Server`` header.
Every other setting comes from ``LMCP_COLLECTOR_*`` environment variables
(``docs/configuration.md``).
"""

from __future__ import annotations

import logging
from pathlib import Path

import typer

from collector.settings import CollectorSettings
from lmcp._overrides import bind_overrides
from service.settings import load_settings

__all__ = ["app", "build_settings", "tune_serving_process"]

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
    return load_settings(CollectorSettings, **bind_overrides(host=host, port=port, db=db))


#: How long a thread may hold the GIL before another one asking for it gets it (CPython: 0.005).
GIL_SWITCH_INTERVAL_S = 0.0002
#: Allocations between two young-generation collections (CPython: 700).
GC_GEN0_THRESHOLD = 100_000


def tune_serving_process() -> None:
    """For the process that serves the collector (``serve``), once, at start.

    - The GIL is handed over sooner: the writer thread needs it briefly, many times per
      flush, while the event loop holds it to validate requests.
    - The cyclic garbage collector runs far less often, and never again over what start-up
      loaded (``gc.freeze``): validation allocates many short-lived, acyclic objects.

    What each setting measured: ``docs/write-path.md``.
    """
    import gc
    import sys

    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(GC_GEN0_THRESHOLD, gen1, gen2)


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

    from lmcp.apps import check_address_free, collector_app, uvicorn_config
    from service.serving import silence_access_log

    settings = build_settings(host=host, port=port, db=db)
    check_address_free(settings)
    if lake is not None:
        settings = settings.model_copy(update={"lake_uri": lake})
    _check_not_in_use(settings.db_path)
    for line in startup_lines(settings):
        typer.echo(line, err=True)
    tune_serving_process()
    logging.basicConfig(level=log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    silence_access_log()
    uvicorn.run(collector_app(settings), **uvicorn_config(settings, log_level=log_level))


def startup_lines(settings: CollectorSettings) -> list[str]:
    """What an operator needs at start-up: where the data goes, where the dashboard is, and
    whether anyone can read it (no token is ever printed, only how many are set)."""
    store = f"Delta table {settings.lake_uri}" if settings.lake_uri else str(settings.db_path)
    base = f"http://{settings.host}:{settings.port}"
    readers = len(settings.read_tokens)
    lines = [
        f"lmcp collector: database {store}",
        f"lmcp collector: dashboard {base}/dashboard  (API docs {base}/docs)",
    ]
    if readers:
        lines.append(
            f"lmcp collector: {readers} read token(s) set (LMCP_COLLECTOR_READ_TOKENS), "
            f"{len(settings.steward_tokens)} steward token(s)"
        )
    else:
        lines.append(
            "lmcp collector: no read token set (LMCP_COLLECTOR_READ_TOKENS): the read API and "
            "the dashboard refuse everyone; signals are still accepted"
        )
    return lines


def _check_not_in_use(path: Path) -> None:
    """Fail before uvicorn starts when another process holds the file: the lock error then
    reaches the command line as one line instead of a start-up traceback inside uvicorn."""
    if not path.is_file():
        return
    import duckdb

    duckdb.connect(str(path)).close()


@app.command()
def migrate(
    db: Path | None = typer.Option(None, help="The DuckDB file (default: the user data dir)."),
) -> None:
    """Apply pending schema migrations and exit."""
    from collector.db import signals_database

    settings = build_settings(db=db)
    database = signals_database(settings.db_path)
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
    from collector.db import signals_database
    from collector.retention import purge_expired
    from contract.days import utc_today

    settings = build_settings(db=db)
    database = signals_database(settings.db_path)
    database.open()
    try:
        deleted = database.run_sync(
            lambda con: purge_expired(con, utc_today(), settings.retention_days)
        )
    finally:
        database.close()
    typer.echo(f"deleted {deleted} signal(s) older than {settings.retention_days} days")


@app.command()
def backup(
    db: Path | None = typer.Option(None, help="The DuckDB file (default: the user data dir)."),
    to: Path | None = typer.Option(None, help="Where the copy goes (must not exist yet)."),
    url: str | None = typer.Option(
        None, help="A running collector's URL: it writes the copy into its backup_dir."
    ),
    token: str | None = typer.Option(
        None, envvar="LMCP_STEWARD_TOKEN", help="Steward token (for --url).", show_default=False
    ),
) -> None:
    """Copy the database consistently, its write-ahead log included.

    A stopped collector's file: ``--db PATH --to DEST``. A running collector (which holds the
    file): ``--url URL`` with a steward token (audited); the copy lands in its ``backup_dir``.
    """
    if url is not None:
        _backup_online(url, token)
        return
    if to is None:
        raise typer.BadParameter("--to is required (or --url for a running collector)")
    from collector.backup import BackupError, backup_database

    settings = build_settings(db=db)
    try:
        rows = backup_database(settings.db_path, to)
    except BackupError as exc:
        typer.echo(f"backup failed: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"copied {settings.db_path} to {to} ({rows} signal(s))")


def _backup_online(url: str, token: str | None) -> None:
    import httpx

    if not token:
        raise typer.BadParameter("--url needs a steward token (--token or LMCP_STEWARD_TOKEN)")
    response = httpx.post(
        url.rstrip("/") + "/v1/admin/backup",
        headers={"Authorization": f"Bearer {token}"},
        timeout=600,
        trust_env=False,
    )
    if response.status_code != 200:
        from service.problems import problem_of

        code, detail = problem_of(response.content)
        reason = f": {detail}" if detail else ""
        typer.echo(f"backup failed: {response.status_code} {code}{reason}", err=True)
        raise typer.Exit(1)
    result = response.json()
    typer.echo(f"the collector wrote {result['file']} ({result['signals']} signal(s))")


if __name__ == "__main__":
    app()
