"""A consistent copy of the collector's database file, write-ahead log included.

A DuckDB database is the ``.duckdb`` file plus its ``.wal``: committed rows may live only in the
log until the next checkpoint, so copying the file alone (after a crash, say) can lose whole
tables. ``backup_database`` opens the database (which replays the log), checkpoints it into the
file, closes it, and copies the file, which then holds everything committed.

DuckDB lets one process open a file: a file that another process holds is refused
(``BackupError``) rather than copied half-written. A running collector copies its own database
instead (``copy_open_database``, behind ``POST /v1/admin/backup``): ``COPY FROM DATABASE`` reads
one snapshot of everything committed (the log included) while the writer goes on.

What the route copies is a ``StewardBackup``: the collector's file (``DatabaseBackup``), or in
lake mode one version of the lake (``collector.lake.steward.LakeSteward``).
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from typing import Annotated, Protocol

import duckdb
from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict

from collector.openapi import problem_response_doc
from collector.roles import AuditTrail, DatabaseAudit, Steward, audit_read, require_steward
from collector.settings import CollectorSettings
from service.db import Database
from service.errors import ProblemError

__all__ = [
    "BackupError",
    "BackupResult",
    "DatabaseBackup",
    "StewardBackup",
    "backup_database",
    "build_backup_router",
    "copy_open_database",
    "path_literal",
]


class BackupError(Exception):
    """The copy could not be made; the message names the reason, never a row."""


def backup_database(source: Path, dest: Path) -> int:
    """Copy ``source`` (with its log applied) to ``dest``; return the number of signals copied."""
    if not source.exists():
        raise BackupError(f"{source} does not exist")
    if dest.exists() or Path(f"{dest}.wal").exists():
        raise BackupError(f"{dest} exists already; choose a new name")
    try:
        con = duckdb.connect(str(source))
    except duckdb.IOException as exc:
        raise BackupError(
            "the database is in use (a running collector holds it); stop the collector first"
        ) from exc
    try:
        con.execute("CHECKPOINT")
    finally:
        con.close()
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".partial")
    shutil.copyfile(source, partial)
    partial.replace(dest)
    check = duckdb.connect(str(dest), read_only=True)
    try:
        row = check.execute("SELECT count(*) FROM signals").fetchone()
    except duckdb.Error as exc:
        raise BackupError("the copy has no signals table") from exc
    finally:
        check.close()
    return int(row[0]) if row else 0


def copy_open_database(con: duckdb.DuckDBPyConnection, dest: Path) -> int:
    """Copy the database ``con`` has open to a new file ``dest``; return the signals copied."""
    if dest.exists():
        raise BackupError(f"{dest} exists already")
    row = con.execute("SELECT current_database()").fetchone()
    source = str(row[0]) if row else ""
    quoted = source.replace('"', '""')
    con.execute(f"ATTACH '{path_literal(dest)}' AS lmcp_backup")
    try:
        con.execute(f'COPY FROM DATABASE "{quoted}" TO lmcp_backup')
        counted = con.execute("SELECT count(*) FROM lmcp_backup.signals").fetchone()
    finally:
        con.execute("DETACH lmcp_backup")
    return int(counted[0]) if counted else 0


def path_literal(path: Path) -> str:
    """``path`` inside a single-quoted SQL string."""
    return str(path).replace("'", "''")


class BackupResult(BaseModel):
    """Where the copy is (a file name inside the collector's ``backup_dir``) and its size."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str
    signals: int


class StewardBackup(Protocol):
    """What ``POST /v1/admin/backup`` copies, and where its reads are audited. ``backup``
    writes a new DuckDB file ``dest`` and returns the signals it holds; it raises
    ``BackupError`` (or ``duckdb.Error``) when the copy could not be made."""

    @property
    def audit(self) -> AuditTrail: ...

    async def backup(self, dest: Path) -> int: ...


class DatabaseBackup:
    """The collector's own file, copied while it runs (``copy_open_database``)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.audit: AuditTrail = DatabaseAudit(db)

    async def backup(self, dest: Path) -> int:
        return await self.db.run(lambda con: copy_open_database(con, dest))


def build_backup_router(settings: CollectorSettings, copier: StewardBackup) -> APIRouter:
    """``POST /v1/admin/backup`` (steward token, audited): a consistent copy of ``copier``
    into ``settings.backup_dir``; a copy holds raw rows, so it is the steward's.

    The file name is the collector's own (a UTC timestamp): a client never names a path.
    """
    router = APIRouter(tags=["admin"])

    @router.post(
        "/v1/admin/backup",
        response_model=BackupResult,
        summary="Copy the database consistently into the collector's backup folder",
        responses={
            404: problem_response_doc("Backups through the collector are off (no backup_dir)"),
            503: problem_response_doc("The copy could not be made"),
        },
    )
    async def backup(steward: Annotated[Steward, Depends(require_steward)]) -> BackupResult:
        folder = settings.backup_dir
        if folder is None:
            raise ProblemError(
                404, "backup_off", "Backups through the collector are off (no backup_dir)."
            )
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
        dest = folder / f"signals-{stamp}.duckdb"
        folder.mkdir(parents=True, exist_ok=True)
        await audit_read(copier.audit, steward, "/v1/admin/backup", {})
        try:
            signals = await copier.backup(dest)
        except (BackupError, duckdb.Error):
            raise ProblemError(503, "backup_failed", "The copy could not be made.") from None
        return BackupResult(file=dest.name, signals=signals)

    return router
