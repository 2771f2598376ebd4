"""A collector's DuckDB file as the lake's spool: what the shipper reads, seals and clears.

In lake mode the collector writes exactly as in file mode (the group-commit writer, one
DuckDB transaction per flush, the answer after the commit): its file is the spool. This
module is the shipper's narrow view of that file, and it touches the writer's table in one
place only (``seal``):

- ``seal`` moves every row of ``signals`` into ``lake_outbox`` under the next batch number,
  in ONE DuckDB transaction: a row is in the table or in exactly one sealed batch, never
  both, never neither. A flush committing meanwhile keeps its rows for the next batch.
- A sealed batch never changes; its number is the version of the Delta transaction that
  ships it (``app_id``: the spool's own, made once). ``drop`` deletes it once the lake holds
  it. So a replay after a crash between the lake's commit and ``drop`` is recognised by the
  lake's transaction version and not appended again.

All calls go through ``run`` (the collector's database thread, or a private connection for a
stopped collector's file).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

import duckdb
import pyarrow as pa

from collector.lake.load import lake_rows_from_duckdb
from service.sql import load_sql

__all__ = ["SPOOL_SQL", "Runner", "Spool"]

T = TypeVar("T")


class Runner(Protocol):
    """Runs ``fn`` on the spool's connection (``Database.run_sync``)."""

    def __call__(self, fn: Callable[[duckdb.DuckDBPyConnection], T], /) -> T: ...


#: The shipper's statements (``service.sql.load_sql``).
SPOOL_SQL = Path(__file__).with_name("sql")


class Spool:
    """The shipper's view of a collector's file; ``run`` executes on its connection."""

    def __init__(self, run: Runner) -> None:
        self._call = run
        self.app_id = self._call(self._setup)

    @staticmethod
    def _setup(con: duckdb.DuckDBPyConnection) -> str:
        con.execute(load_sql(SPOOL_SQL, "spool_setup"))
        found = _rows(con, "spool_app_id")
        if not found:
            app_id = f"lmcp-spool-{uuid.uuid4()}"
            con.execute(load_sql(SPOOL_SQL, "spool_new"), {"app_id": app_id})
        else:
            app_id = str(found[0][0])
        if _rows(con, "spool_outbox_exists")[0][0] and not _rows(con, "spool_batches"):
            # Nothing waits: take the signals table's current columns (after a migration).
            con.execute("DROP TABLE lake_outbox")
        con.execute(load_sql(SPOOL_SQL, "spool_outbox"))
        return app_id

    def pending_rows(self) -> int:
        """Rows in ``signals`` not sealed yet."""
        return int(self._call(lambda con: _rows(con, "spool_pending"))[0][0])

    def seal(self) -> int | None:
        """Seal what ``signals`` holds as the next batch; its number, or None if empty."""

        def seal(con: duckdb.DuckDBPyConnection) -> int | None:
            con.execute("BEGIN TRANSACTION")
            try:
                if not _rows(con, "spool_pending")[0][0]:
                    con.execute("ROLLBACK")
                    return None
                con.execute(load_sql(SPOOL_SQL, "spool_seal"))
                number = int(_rows(con, "spool_sealed")[0][0])
                con.execute("COMMIT")
                return number
            except BaseException:
                con.execute("ROLLBACK")
                raise

        return self._call(seal)

    def batches(self) -> list[tuple[int, int]]:
        """Sealed batches not dropped yet, oldest first: (number, rows)."""
        found = self._call(lambda con: _rows(con, "spool_batches"))
        return [(int(n), int(c)) for n, c in found]

    def rows(self, batch: int) -> pa.Table:
        """Batch ``batch`` as lake rows, in ``signal_id`` order (never the order of arrival)."""
        return self._call(
            lambda con: lake_rows_from_duckdb(
                con, f"lake_batch = {int(batch)}", table="lake_outbox", order="signal_id"
            )
        )

    def drop(self, batch: int) -> None:
        """Forget batch ``batch`` (the lake holds it)."""
        self._call(lambda con: con.execute("DELETE FROM lake_outbox WHERE lake_batch = ?", [batch]))


def _rows(con: duckdb.DuckDBPyConnection, name: str) -> list[tuple[Any, ...]]:
    return con.execute(load_sql(SPOOL_SQL, name)).fetchall()
