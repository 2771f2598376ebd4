"""The database: migrations ledger, ENUMs mirroring the wire contract, one worker thread."""

from __future__ import annotations

import asyncio
import threading
from enum import StrEnum
from pathlib import Path

import duckdb
import pytest

from collector.db import Database, Migration, apply_migrations, discover_migrations
from collector.errors import MigrationError
from contract.schema import (
    ArgName,
    ArgType,
    ErrorCategory,
    ErrorClass,
    FrictionType,
    IntentCategory,
    Outcome,
    Platform,
    SizeBucket,
    ToolName,
)

ENUMS: dict[str, type[StrEnum]] = {
    "friction_type": FrictionType,
    "error_category": ErrorCategory,
    "intent_category": IntentCategory,
    "error_class": ErrorClass,
    "outcome": Outcome,
    "arg_type": ArgType,
    "size_bucket": SizeBucket,
    "platform": Platform,
    "tool_name": ToolName,
    "arg_name": ArgName,
}


def test_migrations_are_ordered_and_named() -> None:
    names = [m.name for m in discover_migrations()]
    assert names[0] == "0001_signals.sql"
    assert names == sorted(names)
    assert all(n[:4].isdigit() and n[4] == "_" for n in names)


@pytest.mark.parametrize("type_name", sorted(ENUMS))
def test_duckdb_enums_mirror_the_wire_contract(tmp_path: Path, type_name: str) -> None:
    db = Database(tmp_path / "x.duckdb")
    db.open()
    try:
        values = db.run_sync(
            lambda con: con.execute(f"SELECT enum_range(NULL::{type_name})").fetchone()
        )
    finally:
        db.close()
    assert values is not None
    assert list(values[0]) == [m.value for m in ENUMS[type_name]]


def test_migrations_apply_once_and_are_recorded(tmp_path: Path) -> None:
    path = tmp_path / "x.duckdb"
    db = Database(path)
    applied = db.open()
    db.close()
    assert applied == [m.name for m in discover_migrations()]
    again = Database(path)
    assert again.open() == []
    rows = again.run_sync(lambda con: con.execute("SELECT name FROM schema_migrations").fetchall())
    again.close()
    assert sorted(r[0] for r in rows) == applied


def test_an_edited_migration_stops_the_start(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "x.duckdb"))
    apply_migrations(con, [Migration("0001_t.sql", "CREATE TABLE t (a INT);")])
    with pytest.raises(MigrationError, match="changed after it was applied"):
        apply_migrations(con, [Migration("0001_t.sql", "CREATE TABLE t (a BIGINT);")])
    con.close()


def test_a_failing_migration_is_rolled_back(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "x.duckdb"))
    bad = [Migration("0001_a.sql", "CREATE TABLE a (x INT); CREATE TABLE a (x INT);")]
    with pytest.raises(MigrationError, match="0001_a.sql failed"):
        apply_migrations(con, bad)
    assert con.execute("SELECT count(*) FROM schema_migrations").fetchone() == (0,)
    tables = con.execute("SELECT table_name FROM duckdb_tables() WHERE table_name = 'a'").fetchall()
    assert tables == []
    con.close()


def test_all_work_runs_on_one_thread(tmp_path: Path) -> None:
    db = Database(tmp_path / "x.duckdb")
    db.open()

    async def many() -> set[int]:
        ids = await asyncio.gather(*(db.run(lambda _c: threading.get_ident()) for _ in range(20)))
        return set(ids)

    try:
        ids = asyncio.run(many())
        ids.add(db.run_sync(lambda _c: threading.get_ident()))
    finally:
        db.close()
    assert len(ids) == 1
    assert threading.get_ident() not in ids
    with pytest.raises(RuntimeError, match="not open"):
        db.run_sync(lambda _c: 1)


def test_a_half_read_result_does_not_block_the_next_caller(tmp_path: Path) -> None:
    """DuckDB 2 refuses work on a connection with a pending result; ``run`` settles it."""
    import pyarrow as pa

    db = Database(tmp_path / "x.duckdb")
    db.open()
    try:
        db.run_sync(lambda con: con.execute("SELECT * FROM range(10)").fetchone())
        db.run_sync(lambda con: con.register("t", pa.table({"a": [1]})))
        assert db.run_sync(lambda con: con.execute("SELECT a FROM t").fetchall()) == [(1,)]
    finally:
        db.close()
