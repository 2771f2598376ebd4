"""Rows of a collector's DuckDB ``signals`` table as lake rows (moving a file into a lake)."""

from __future__ import annotations

import duckdb
import pyarrow as pa

from collector.lake.store import LAKE_SCHEMA

__all__ = ["lake_rows_from_duckdb"]


def _select(name: str, kind: pa.DataType) -> str:
    if name == "signal_id":
        return "unhex(replace(CAST(signal_id AS VARCHAR), '-', '')) AS signal_id"
    if name == "compacted":
        return "false AS compacted"
    if pa.types.is_list(kind):
        struct = kind.value_type
        fields = ", ".join(f'"{f.name}" VARCHAR' for f in struct)
        return f'CAST("{name}" AS STRUCT({fields})[]) AS "{name}"'
    if kind == pa.string():
        return f'CAST("{name}" AS VARCHAR) AS "{name}"'
    return f'"{name}"'


def lake_rows_from_duckdb(
    con: duckdb.DuckDBPyConnection,
    where: str = "true",
    *,
    table: str = "signals",
    order: str | None = None,
) -> pa.Table:
    """Every row of ``table`` (default ``signals``; matching ``where``; ``order``: trusted SQL)
    as ``LAKE_SCHEMA`` rows, each with its own ``received_day``, not compacted."""
    cols = ", ".join(_select(f.name, f.type) for f in LAKE_SCHEMA)
    ordered = "" if order is None else f" ORDER BY {order}"
    rows = con.sql(f"SELECT {cols} FROM {table} WHERE {where}{ordered}").to_arrow_table()
    return rows.cast(LAKE_SCHEMA)
