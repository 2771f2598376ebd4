"""The database: migrations ledger, ENUMs mirroring the wire contract, one worker thread.

The generic ``service.db.Database`` is exercised through the collector's binding of it
(``collector.db.signals_database``) and with folders of its own.
"""

from __future__ import annotations

import asyncio
import threading
from enum import StrEnum
from pathlib import Path

import duckdb
import pytest

from collector.db import MIGRATIONS_DIR, signals_database
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
from service.db import Database, Migration, apply_migrations, discover_migrations
from service.errors import MigrationError

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
    names = [m.name for m in discover_migrations(MIGRATIONS_DIR)]
    assert names[0] == "0001_signals.sql"
    assert names == sorted(names)
    assert all(n[:4].isdigit() and n[4] == "_" for n in names)


@pytest.mark.parametrize("type_name", sorted(ENUMS))
def test_duckdb_enums_mirror_the_wire_contract(tmp_path: Path, type_name: str) -> None:
    db = signals_database(tmp_path / "x.duckdb")
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
    db = signals_database(path)
    applied = db.open()
    db.close()
    assert applied == [m.name for m in discover_migrations(MIGRATIONS_DIR)]
    again = signals_database(path)
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
    db = signals_database(tmp_path / "x.duckdb")
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

    db = signals_database(tmp_path / "x.duckdb")
    db.open()
    try:
        db.run_sync(lambda con: con.execute("SELECT * FROM range(10)").fetchone())
        db.run_sync(lambda con: con.register("t", pa.table({"a": [1]})))
        assert db.run_sync(lambda con: con.execute("SELECT a FROM t").fetchall()) == [(1,)]
    finally:
        db.close()


def test_a_database_applies_exactly_its_own_migrations_folder(tmp_path: Path) -> None:
    """Each service hands in its folder: nothing of another folder reaches its file."""
    folder = tmp_path / "migrations"
    folder.mkdir()
    (folder / "0001_own.sql").write_text("CREATE TABLE own (a INT);", encoding="utf-8")
    (folder / "notes.sql").write_text("CREATE TABLE not_a_migration (a INT);", encoding="utf-8")
    db = Database(tmp_path / "own.duckdb", folder)
    try:
        assert db.open() == ["0001_own.sql"]
        tables = db.run_sync(
            lambda con: con.execute("SELECT table_name FROM duckdb_tables()").fetchall()
        )
    finally:
        db.close()
    assert {t[0] for t in tables} == {"own", "schema_migrations"}
