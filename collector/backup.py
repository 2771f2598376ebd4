"""A consistent copy of the collector's database file, write-ahead log included.

A DuckDB database is the ``.duckdb`` file plus its ``.wal``: committed rows may live only in the
log until the next checkpoint, so copying the file alone (after a crash, say) can lose whole
tables. ``backup_database`` opens the database (which replays the log), checkpoints it into the
file, closes it, and copies the file, which then holds everything committed.

DuckDB lets one process open a file, so the collector must be stopped: a file that another
process holds is refused (``BackupError``) rather than copied half-written.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb

__all__ = ["BackupError", "backup_database"]


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
