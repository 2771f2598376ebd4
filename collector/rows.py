"""Validated signals become rows: the ``signals`` row shape, and the pure core of the write path.

``SIGNAL_COLUMNS`` is the ONE definition of the ``signals`` row: every other place that names
its columns (the migration, the SQL files of the write and read paths, the synthetic data) is
compared with it by ``tests/collector/test_signal_columns.py``.

A flush is stored one of two ways, both exact (``tests/collector/test_rows.py`` stores every
legal spelling both ways):

- **From the request bodies** (``collector/sql/insert_bodies.sql``): DuckDB parses the very
  bodies pydantic validated with ``json_transform_strict`` and derives the stored columns in
  C++, which runs mostly without the GIL while the event loop keeps validating.
- **From the models** (``ROWS``, ``rows_from_models``): Python shapes the rows into Arrow
  columns and ``collector/sql/insert_rows.sql`` only casts, which DuckDB plans faster than the
  derivations. A flush whose bodies DuckDB refuses is written this way too.

The two parsers of the bodies path must agree on every value. Where pydantic and DuckDB could
read one body two ways, DuckDB refuses the body, and the flush is written from its models:

- **A repeated key.** pydantic keeps the last value; DuckDB refuses the object ("duplicate
  key"). The first value -- a smuggling attempt -- is never stored.
- **A key left out** (an optional field at its default): ``json_transform_strict`` refuses it.
- **Another spelling of a value.** DuckDB reads an id with braces, capitals or no hyphens as the
  same 128 bits (the same 32 hex digits pydantic read) and refuses ``urn:uuid:``; ``true`` and
  ``1.0`` for ``schema_version: 1`` are 1 for both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from contract.schema import FrictionSignal

__all__ = ["RECEIVED_DAY", "ROWS", "SIGNAL_COLUMNS", "rows_from_models", "uuid_array"]

_S = pa.string()
_UUID = pa.uuid()

#: The column the collector sets at insert (its UTC day), not shaped from a signal.
RECEIVED_DAY = "received_day"

#: The ``signals`` row, in table order: each column's name and its Arrow type (enum values as
#: their strings; DuckDB casts them to its ENUM types on insert). Add a column here, in a new
#: migration, and where the test of this tuple points.
SIGNAL_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("signal_id", _UUID),
    ("schema_version", pa.uint8()),
    ("day", pa.date32()),
    (RECEIVED_DAY, pa.date32()),
    ("friction_type", _S),
    ("error_category", _S),
    ("intent_category", _S),
    ("tool_attempted", _S),
    ("attempts", _S),
    ("error_class", _S),
    ("args", pa.list_(pa.struct([("name", _S), ("type", _S), ("size", _S)]))),
    ("ring", pa.list_(pa.struct([("tool", _S), ("outcome", _S)]))),
    ("prev1_tool", _S),
    ("prev1_outcome", _S),
    ("prev2_tool", _S),
    ("prev2_outcome", _S),
    ("app_installed", pa.bool_()),
    ("app_running", pa.bool_()),
    ("app_permitted", pa.bool_()),
    ("client_version_major", pa.uint16()),
    ("client_version_minor", pa.uint16()),
    ("client_version_patch", pa.uint16()),
    ("client_platform", _S),
)

#: The rows shaped in Python from the validated models (``rows_from_models``): every column of
#: ``SIGNAL_COLUMNS`` but ``RECEIVED_DAY``, which the INSERT adds.
ROWS = pa.schema([(name, kind) for name, kind in SIGNAL_COLUMNS if name != RECEIVED_DAY])


def _list_of_structs(
    offsets: list[int], fields: Sequence[tuple[str, list[Any]]], list_type: pa.DataType
) -> pa.Array:
    """A LIST(STRUCT) column from flat child columns and offsets (no per-row Python lists)."""
    children = pa.StructArray.from_arrays(
        [pa.array(values, _S) for _, values in fields], names=[name for name, _ in fields]
    )
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), children, type=list_type)


def rows_from_models(signals: Sequence[FrictionSignal]) -> pa.Table:
    """The rows of a small flush (``ROWS``), shaped from the validated models, in order.

    Built column by column from flat Python lists: the nested ``args`` and ``ring`` columns are
    flat child arrays plus offsets, and enum members go in as their plain ``str`` values
    (``_value_``), which pyarrow converts faster than a ``str`` subclass.
    """
    cols: list[list[Any]] = [[] for _ in ROWS.names]
    (
        ids, versions, days, friction, err_cat, intent, tool, attempts, err_class, _args, _ring,
        p1t, p1o, p2t, p2o, installed, running, permitted, major, minor, patch, platform,
    ) = cols  # fmt: skip
    arg_offsets, arg_names, arg_types, arg_sizes = [0], [], [], []
    ring_offsets, ring_tools, ring_outcomes = [0], [], []
    for s in signals:
        ids.append(s.signal_id.bytes)
        versions.append(s.schema_version)
        days.append(s.day)
        friction.append(s.friction_type._value_)
        err_cat.append(None if s.error_category is None else s.error_category._value_)
        intent.append(None if s.intent_category is None else s.intent_category._value_)
        tool.append(s.tool_attempted._value_)
        attempts.append(None if s.attempts is None else s.attempts._value_)
        err_class.append(s.error_class._value_)
        for a in s.args:
            arg_names.append(a.name._value_)
            arg_types.append(a.type._value_)
            arg_sizes.append(None if a.size is None else a.size._value_)
        arg_offsets.append(len(arg_names))
        entries = s.ring
        for e in entries:
            ring_tools.append(e.tool._value_)
            ring_outcomes.append(e.outcome._value_)
        ring_offsets.append(len(ring_tools))
        n = len(entries)
        if n >= 2:
            prev1 = entries[n - 2]
            p1t.append(prev1.tool._value_)
            p1o.append(prev1.outcome._value_)
        else:
            p1t.append(None)
            p1o.append(None)
        if n >= 3:
            prev2 = entries[n - 3]
            p2t.append(prev2.tool._value_)
            p2o.append(prev2.outcome._value_)
        else:
            p2t.append(None)
            p2o.append(None)
        app = s.app
        installed.append(app.installed)
        running.append(app.running)
        permitted.append(app.permitted)
        v_major, v_minor, v_patch = (int(part) for part in s.client.version.split("."))
        major.append(v_major)
        minor.append(v_minor)
        patch.append(v_patch)
        platform.append(s.client.platform._value_)
    fields = list(ROWS)
    nested = {
        "args": _list_of_structs(
            arg_offsets,
            (("name", arg_names), ("type", arg_types), ("size", arg_sizes)),
            ROWS.field("args").type,
        ),
        "ring": _list_of_structs(
            ring_offsets,
            (("tool", ring_tools), ("outcome", ring_outcomes)),
            ROWS.field("ring").type,
        ),
    }
    arrays = [
        nested[field.name] if field.name in nested else pa.array(col, field.type)
        for col, field in zip(cols[1:], fields[1:], strict=True)
    ]
    arrays.insert(0, uuid_array(ids))
    return pa.Table.from_arrays(arrays, schema=ROWS)


def uuid_array(ids: Sequence[bytes]) -> pa.ExtensionArray:
    """16-byte ids as Arrow's UUID type, which DuckDB reads as UUID without parsing text."""
    return pa.ExtensionArray.from_storage(_UUID, pa.array(ids, pa.binary(16)))
