"""A service's DuckDB database: one connection, used from one dedicated worker thread.

DuckDB allows one writing process per file, and its work (inserts, automatic checkpoints that
stall for up to a second) must stay off the event loop. ``Database`` therefore owns the
connection and a single-thread executor; every use goes through ``run`` (async) or
``run_sync`` (start-up, CLI, tests), so its statements never interleave. A caller that needs
its own thread (the collector's group-commit writer) asks for a cursor and uses it there only.

Each service owns its file and its migrations folder (``collector/migrations``,
``cloudskills/migrations``): the ``NNNN_name.sql`` files, applied in file-name order at open,
each in its own transaction and recorded (name, SHA-256, day) in ``schema_migrations``. A
recorded migration whose file changed afterwards stops the start (``MigrationError``): a
migration, once shipped, is never edited; write a new one.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import duckdb

from contract.days import utc_today
from service.errors import MigrationError

__all__ = ["Database", "Migration", "apply_migrations", "discover_migrations"]

log = logging.getLogger("service")

T = TypeVar("T")

_LEDGER_DDL = (
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    "name VARCHAR PRIMARY KEY, sha256 VARCHAR NOT NULL, applied_day DATE NOT NULL)"
)


@dataclass(frozen=True, slots=True)
class Migration:
    name: str
    sql: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.sql.encode("utf-8")).hexdigest()


def discover_migrations(folder: Path) -> list[Migration]:
    """Every ``NNNN_name.sql`` in ``folder``, in file-name order."""
    files = sorted(p for p in folder.glob("*.sql") if p.name[:4].isdigit())
    return [Migration(p.name, p.read_text(encoding="utf-8")) for p in files]


def apply_migrations(
    con: duckdb.DuckDBPyConnection,
    migrations: Path | Sequence[Migration],
    *,
    logger: logging.Logger = log,
) -> list[str]:
    """Apply the migrations (a folder, or a list) not yet recorded; return the names applied.
    Each one applied is logged (its file name only) on ``logger``."""
    if isinstance(migrations, Path):
        migrations = discover_migrations(migrations)
    con.execute(_LEDGER_DDL)
    rows = con.execute("SELECT name, sha256 FROM schema_migrations").fetchall()
    recorded: dict[str, str] = {str(name): str(digest) for name, digest in rows}
    applied: list[str] = []
    for migration in migrations:
        digest = recorded.get(migration.name)
        if digest is not None:
            if digest != migration.sha256:
                raise MigrationError(f"migration {migration.name} changed after it was applied")
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(migration.sql)
            con.execute(
                "INSERT INTO schema_migrations VALUES ($1, $2, $3)",
                [migration.name, migration.sha256, utc_today()],
            )
            con.execute("COMMIT")
        except duckdb.Error as exc:
            con.execute("ROLLBACK")
            raise MigrationError(
                f"migration {migration.name} failed: {type(exc).__name__}"
            ) from exc
        applied.append(migration.name)
        logger.info("applied migration %s", migration.name)
    return applied


def _settled(fn: Callable[[duckdb.DuckDBPyConnection], T], con: duckdb.DuckDBPyConnection) -> T:
    try:
        return fn(con)
    finally:
        # A result left half-read (``fetchone()`` on a one-row result still counts) would make
        # the next ``register``/``cursor`` call of ANY caller fail with ResourceInUse.
        con.complete()


class Database:
    """The one DuckDB connection of a service process, on its own worker thread."""

    def __init__(
        self,
        path: Path | str,
        migrations: Path | Sequence[Migration],
        *,
        threads: int | None = None,
        logger: logging.Logger = log,
    ) -> None:
        """``migrations``: the service's migrations folder (or a list, for tests).
        ``threads``: DuckDB's worker threads (None: DuckDB's default, one per core).
        ``logger``: the owning service's logger (its operators read their service's records)."""
        self.path = Path(path)
        self._logger = logger
        self._migrations = migrations
        self._threads = threads
        self._executor: ThreadPoolExecutor | None = None
        self._con: duckdb.DuckDBPyConnection | None = None
        self._lock = threading.Lock()

    @property
    def is_open(self) -> bool:
        return self._con is not None

    def open(self) -> list[str]:
        """Connect, apply pending migrations; return the names applied. Idempotent."""
        with self._lock:
            if self._con is not None:
                return []
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lmcp-duckdb")
            try:
                return self._executor.submit(self._open).result()
            except BaseException:
                self._executor.shutdown(wait=True)
                self._executor = None
                raise

    def _open(self) -> list[str]:
        if str(self.path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        config: dict[str, str | bool | int | float | list[str]] = {}
        if self._threads is not None:
            config["threads"] = self._threads
        con = duckdb.connect(str(self.path), config=config)
        try:
            applied = apply_migrations(con, self._migrations, logger=self._logger)
        except BaseException:
            con.close()
            raise
        self._con = con
        return applied

    def _require(self) -> tuple[ThreadPoolExecutor, duckdb.DuckDBPyConnection]:
        executor, con = self._executor, self._con
        if executor is None or con is None:
            raise RuntimeError("the database is not open")
        return executor, con

    def run_sync(self, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """Run ``fn(connection)`` on the database thread and wait (not from the event loop)."""
        executor, con = self._require()
        return executor.submit(_settled, fn, con).result()

    async def run(self, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """Run ``fn(connection)`` on the database thread without blocking the event loop.

        ``fn`` must fetch what it needs before returning: any result it leaves half-read is
        run to its end afterwards (DuckDB 2 refuses new work on a connection with one pending).
        """
        executor, con = self._require()
        return await asyncio.wrap_future(executor.submit(_settled, fn, con))

    def close(self) -> None:
        """Checkpoint and close the connection, then stop the thread. Idempotent."""
        with self._lock:
            executor, con = self._executor, self._con
            if executor is None or con is None:
                return

            def _close() -> None:
                try:
                    con.execute("CHECKPOINT")
                finally:
                    con.close()

            try:
                executor.submit(_close).result()
            finally:
                self._con = None
                self._executor = None
                executor.shutdown(wait=True)
