"""The signals store: the shared ``Database`` bound to the collector's own migrations and SQL.

The collector's file holds anonymous signals only: no other service's table is ever migrated
into it, so nothing signed-in can be joined with the signals in one database.
"""

from __future__ import annotations

import logging
from pathlib import Path

import duckdb

from service.db import Database, apply_migrations

__all__ = ["MIGRATIONS_DIR", "SQL_DIR", "migrate", "signals_database"]

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
#: The collector's statements, loaded with ``service.sql.load_sql(SQL_DIR, name)``.
SQL_DIR = Path(__file__).with_name("sql")

log = logging.getLogger("collector")


def migrate(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Apply the collector's pending migrations on ``con``; return the names applied now."""
    return apply_migrations(con, MIGRATIONS_DIR, logger=log)


def signals_database(path: Path | str, *, threads: int | None = None) -> Database:
    """The collector's database at ``path`` (not yet open)."""
    return Database(path, MIGRATIONS_DIR, threads=threads, logger=log)
