"""Validated signals become rows: the ``signals`` row shape, and the pure core of the write path.

``SIGNAL_COLUMNS`` is the ONE definition of the ``signals`` row: every other place that names
its columns (the migration, the SQL files of the write and read paths, the synthetic data) is
compared with it by ``tests/collector/test_signal_columns.py``.

Every flush is stored the same way: its validated signals become Arrow columns ONCE
(``rows_from_models``: one pass over the signals, one ``pa.array`` per column) and DuckDB reads
them in one INSERT (``collector/sql/insert_rows.sql``), which only casts the enum strings to
the ENUM types. The signals are those the collector validated -- the fast decoder's structs,
or pydantic's models for a body only pydantic accepts (``collector.ingest``) -- so no second
parser ever reads a body.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from collector import _wire
from contract.schema import SCHEMA_VERSION, FrictionSignal

__all__ = [
    "RECEIVED_DAY",
    "ROWS",
    "SIGNAL_COLUMNS",
    "ValidSignal",
    "rows_from_models",
    "uuid_array",
]

#: A validated signal in the current version: the fast decoder's struct (what ingestion
#: validates) or the pydantic model (what the code builds). Both carry the same fields.
ValidSignal = _wire.FrictionSignal | FrictionSignal

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


def rows_from_models(signals: Sequence[ValidSignal]) -> pa.Table:
    """The rows (``ROWS``) of validated signals, in order: the fast decoder's structs (the hot
    path) or the pydantic models (tests, tools).

    Built once per flush, column by column from flat Python lists: the nested ``args`` and
    ``ring`` columns are flat child arrays plus offsets. A struct's enum values are plain
    ``str``, which pyarrow converts fastest; a model's are ``StrEnum`` members (``str`` too).
    Every signal is in the current version (``current_batch``): ``schema_version`` is
    ``SCHEMA_VERSION``.
    """
    cols: list[list[Any]] = [[] for _ in ROWS.names]
    (
        ids, _versions, days, friction, err_cat, intent, tool, attempts, err_class, _args, _ring,
        p1t, p1o, p2t, p2o, installed, running, permitted, major, minor, patch, platform,
    ) = cols  # fmt: skip
    arg_offsets, arg_names, arg_types, arg_sizes = [0], [], [], []
    ring_offsets, ring_tools, ring_outcomes = [0], [], []
    for s in signals:
        ids.append(s.signal_id.bytes)
        days.append(s.day)
        friction.append(s.friction_type)
        err_cat.append(s.error_category)
        intent.append(s.intent_category)
        tool.append(s.tool_attempted)
        attempts.append(s.attempts)
        err_class.append(s.error_class)
        for a in s.args:
            arg_names.append(a.name)
            arg_types.append(a.type)
            arg_sizes.append(a.size)
        arg_offsets.append(len(arg_names))
        entries = s.ring
        for e in entries:
            ring_tools.append(e.tool)
            ring_outcomes.append(e.outcome)
        ring_offsets.append(len(ring_tools))
        n = len(entries)
        if n >= 2:
            prev1 = entries[n - 2]
            p1t.append(prev1.tool)
            p1o.append(prev1.outcome)
        else:
            p1t.append(None)
            p1o.append(None)
        if n >= 3:
            prev2 = entries[n - 3]
            p2t.append(prev2.tool)
            p2o.append(prev2.outcome)
        else:
            p2t.append(None)
            p2o.append(None)
        app = s.app
        installed.append(app.installed)
        running.append(app.running)
        permitted.append(app.permitted)
        v_major, v_minor, v_patch = s.client.version.split(".")
        major.append(int(v_major))
        minor.append(int(v_minor))
        patch.append(int(v_patch))
        platform.append(s.client.platform)
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
        "schema_version": pa.array([SCHEMA_VERSION] * len(ids), pa.uint8()),
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
