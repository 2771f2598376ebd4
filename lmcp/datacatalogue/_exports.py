"""The exports section of the data catalogue: the columns of ``/v1/signals/export`` as Parquet and
CSV, produced by running the export SQL and writers on the example database."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from lmcp.datacatalogue._model import CatalogueField, DataFormat
from lmcp.datacatalogue._text import sample, short


def arrow_kind(arrow_type: Any) -> str:
    import pyarrow as pa

    if pa.types.is_dictionary(arrow_type):
        return "enum"
    if pa.types.is_fixed_size_binary(arrow_type) and arrow_type.byte_width == 16:
        return "uuid"  # a UUID's 16 bytes (the lake's signal_id); any other binary is a blob
    if pa.types.is_binary(arrow_type) or pa.types.is_fixed_size_binary(arrow_type):
        return "blob"
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return "list"
    if pa.types.is_struct(arrow_type):
        return "object"
    if pa.types.is_boolean(arrow_type):
        return "boolean"
    if pa.types.is_date(arrow_type):
        return "date"
    if pa.types.is_timestamp(arrow_type):
        return "timestamp"
    if pa.types.is_integer(arrow_type):
        return "integer"
    if pa.types.is_floating(arrow_type):
        return "float"
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return "string"
    return "other"


def arrow_name(arrow_type: Any) -> str:
    import pyarrow as pa

    if pa.types.is_dictionary(arrow_type):
        return f"dictionary<{arrow_type.value_type}> (enum)"
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return f"list<{arrow_name(arrow_type.value_type)}>"
    if pa.types.is_struct(arrow_type):
        return (
            "struct<"
            + ", ".join(arrow_type.field(i).name for i in range(arrow_type.num_fields))
            + ">"
        )
    return str(arrow_type)


def export_formats(con: Any, stored: Sequence[DataFormat]) -> list[DataFormat]:
    import pyarrow.csv as pa_csv
    import pyarrow.parquet as pq

    from collector.db import SQL_DIR
    from service.sql import load_sql

    columns = {
        f.name: f.values for fmt in stored if fmt.key == "duckdb.signals" for f in fmt.fields
    }
    out: list[DataFormat] = []
    table = con.sql(load_sql(SQL_DIR, "export_parquet"), params=[None]).to_arrow_table()
    buf = io.BytesIO()
    pq.write_table(table, buf)
    buf.seek(0)
    schema = pq.read_schema(buf)
    buf.seek(0)
    rows = pq.read_table(buf).to_pylist()
    first = rows[0] if rows else None
    out.append(
        DataFormat(
            "export.parquet",
            "Export: Parquet",
            "GET /v1/signals/export?format=parquet (collector/sql/export_parquet.sql)",
            "The signals table with typed, nested columns.",
            tuple(
                CatalogueField(
                    f.name,
                    arrow_kind(f.type),
                    arrow_name(f.type),
                    f.nullable,
                    columns.get(f.name, ""),
                    sample(first[f.name]) if first else "",
                )
                for f in schema
            ),
        )
    )
    table = con.sql(load_sql(SQL_DIR, "export_csv"), params=[None]).to_arrow_table()
    sink = io.BytesIO()
    pa_csv.write_csv(table, sink)
    import csv

    parsed = list(csv.reader(io.StringIO(sink.getvalue().decode("utf-8"))))
    names = parsed[0]
    line = dict(zip(names, parsed[1], strict=True)) if len(parsed) > 1 else {}
    out.append(
        DataFormat(
            "export.csv",
            "Export: CSV",
            "GET /v1/signals/export?format=csv (collector/sql/export_csv.sql)",
            "The same rows as flat text; `args` and `ring` are JSON arrays.",
            tuple(
                CatalogueField(
                    name,
                    "list"
                    if name in ("args", "ring")
                    else arrow_kind(table.schema.field(name).type),
                    arrow_name(table.schema.field(name).type),
                    table.schema.field(name).nullable,
                    "JSON array" if name in ("args", "ring") else columns.get(name, ""),
                    short(line.get(name, "")) or "(empty: null)",
                )
                for name in names
            ),
        )
    )
    return out
