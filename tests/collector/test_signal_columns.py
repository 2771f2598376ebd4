"""The ``signals`` row shape has ONE definition (``collector.rows.SIGNAL_COLUMNS``); every other
place that names its columns is compared with it here, so a column added in one place and not
in another fails this file instead of storing NULLs or failing at the first insert.

The places: the migrations' ``CREATE TABLE`` (read from a migrated DuckDB's ``DESCRIBE``), the
Arrow rows of the models path (``ROWS``), both INSERTs of the write path (matched BY NAME),
both exports, the synthetic data (``analysis/sql/synth.sql``, BY NAME), the Parquet loader
(``analysis/sql/load_parquet.sql``) and the tests' own expected row.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import duckdb
import pyarrow as pa
import pytest

from analysis._questions import load_query as load_analysis_sql
from collector.db import SQL_DIR, migrate
from collector.rows import RECEIVED_DAY, ROWS, SIGNAL_COLUMNS
from service.sql import load_sql
from tests.collector.conftest import TODAY, batch_body, expected_row, make_signal

NAMES = [name for name, _ in SIGNAL_COLUMNS]
BY_NAME = "INSERT INTO signals BY NAME"


@pytest.fixture(scope="module")
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect(":memory:")
    migrate(connection)
    yield connection
    connection.close()


def _without_enums(duckdb_type: str) -> str:
    """A column type with its ENUMs as VARCHAR (Arrow carries enum values as strings)."""
    return re.sub(r"ENUM\([^)]*\)", "VARCHAR", duckdb_type).replace('"', "")


def _select_of(sql: str) -> str:
    """The SELECT of an ``INSERT INTO signals BY NAME`` statement (it names the columns)."""
    body = "\n".join(line for line in sql.splitlines() if not line.startswith("--"))
    assert body.lstrip().startswith(BY_NAME), "expected a BY NAME insert"
    return body.lstrip()[len(BY_NAME) :]


def test_the_migrated_table_is_the_definition(con: duckdb.DuckDBPyConnection) -> None:
    described = con.execute("DESCRIBE signals").fetchall()
    assert [row[0] for row in described] == NAMES
    # The Arrow types, as DuckDB reads them, are the table's (enums aside: they are strings).
    arrow = pa.schema(list(SIGNAL_COLUMNS)).empty_table()
    con.register("shape_probe", arrow)
    try:
        read = con.execute("DESCRIBE shape_probe").fetchall()
    finally:
        con.unregister("shape_probe")
    assert [(n, t.replace('"', "")) for n, t, *_ in read] == [
        (n, _without_enums(t)) for n, t, *_ in described
    ]


def test_the_models_rows_are_the_definition_without_the_received_day() -> None:
    assert ROWS.names == [n for n in NAMES if n != RECEIVED_DAY]
    assert list(ROWS) == [pa.field(n, t) for n, t in SIGNAL_COLUMNS if n != RECEIVED_DAY]


def test_both_inserts_name_every_column_once(con: duckdb.DuckDBPyConnection) -> None:
    """BY NAME leaves a column it does not name NULL: each INSERT must name them all."""
    body = batch_body([make_signal()])
    bodies = con.execute(
        _select_of(load_sql(SQL_DIR, "insert_bodies")), [TODAY, [body.decode()], [1]]
    )
    bodies_names = [d[0] for d in bodies.description or []]
    bodies.fetchall()
    con.register("incoming", ROWS.empty_table())
    try:
        rows = con.execute(_select_of(load_sql(SQL_DIR, "insert_rows")), [TODAY])
        rows_names = [d[0] for d in rows.description or []]
        rows.fetchall()
    finally:
        con.unregister("incoming")
    for names in (bodies_names, rows_names):
        assert sorted(names) == sorted(NAMES)


@pytest.mark.parametrize("name", ["export_csv", "export_parquet"])
def test_the_exports_carry_every_column_in_order(con: duckdb.DuckDBPyConnection, name: str) -> None:
    relation = con.sql(load_sql(SQL_DIR, name), params=[None])
    assert relation.columns == NAMES
    if name == "export_csv":  # flat text: no ENUM (its own type) and no nested list is left
        flat = {"VARCHAR", "UTINYINT", "USMALLINT", "DATE", "BOOLEAN"}
        assert {str(t) for t in relation.types} <= flat


def test_the_synthetic_data_names_every_column(con: duckdb.DuckDBPyConnection) -> None:
    text, _ = load_analysis_sql("synth")
    params = {"first": 0, "count": 3, "end_day": TODAY}
    result = con.execute(_select_of(text), params)
    names = [d[0] for d in result.description or []]
    result.fetchall()
    assert sorted(names) == sorted(NAMES)


def test_the_parquet_loader_lists_every_column_in_order() -> None:
    text, _ = load_analysis_sql("load_parquet")
    listed = re.search(r"INSERT INTO signals \((.*?)\)", text, re.S)
    assert listed is not None
    assert [c.strip() for c in listed.group(1).split(",")] == NAMES


def test_the_tests_expected_row_is_the_definition() -> None:
    assert list(expected_row(make_signal())) == [n for n in NAMES if n != RECEIVED_DAY]
