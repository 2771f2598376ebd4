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
from itertools import repeat
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
    "signal_rows",
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
_ARGS = ROWS.field("args").type
_RING = ROWS.field("ring").type


def _list_of_structs(
    offsets: list[int], fields: Sequence[tuple[str, list[Any]]], list_type: pa.DataType
) -> pa.Array:
    """A LIST(STRUCT) column from flat child columns and offsets (no per-row Python lists)."""
    children = pa.StructArray.from_arrays(
        [pa.array(values, _S) for _, values in fields], names=[name for name, _ in fields]
    )
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), children, type=list_type)


def rows_from_models(signals: Sequence[ValidSignal]) -> pa.Table:
    """The rows (``ROWS``) of validated signals, in order (``signal_rows`` without the ids)."""
    return signal_rows(signals)[0]


def signal_rows(signals: Sequence[ValidSignal]) -> tuple[pa.Table, list[int]]:
    """The rows (``ROWS``) of validated signals, in order, and each row's id as an integer
    (``uuid.UUID.int``: the store de-duplicates on it). The signals are the fast decoder's
    structs (the hot path) or the pydantic models (tests, tools).

    Built once per flush, column by column from flat Python lists: the nested ``args`` and
    ``ring`` columns are flat child arrays plus offsets, the ids one buffer of 16-byte values.
    A struct's enum values are plain ``str``, which pyarrow converts fastest; a model's are
    ``StrEnum`` members (``str`` too). Every signal is in the current version
    (``current_batch``): ``schema_version`` is ``SCHEMA_VERSION``.
    """
    ids: list[int] = []
    days: list[Any] = []
    friction: list[Any] = []
    err_cat: list[Any] = []
    intent: list[Any] = []
    tool: list[Any] = []
    attempts: list[Any] = []
    err_class: list[Any] = []
    p1t: list[Any] = []
    p1o: list[Any] = []
    p2t: list[Any] = []
    p2o: list[Any] = []
    installed: list[bool | None] = []
    running: list[bool | None] = []
    permitted: list[bool | None] = []
    versions: list[str] = []
    platform: list[Any] = []
    arg_offsets: list[int] = [0]
    arg_names: list[Any] = []
    arg_types: list[Any] = []
    arg_sizes: list[Any] = []
    ring_offsets: list[int] = [0]
    ring_tools: list[Any] = []
    ring_outcomes: list[Any] = []
    # Bound once: the loop runs once per signal, its inner loops once per argument and entry.
    add_name, add_type, add_size = arg_names.append, arg_types.append, arg_sizes.append
    add_tool, add_outcome = ring_tools.append, ring_outcomes.append
    for s in signals:
        ids.append(s.signal_id.int)
        days.append(s.day)
        friction.append(s.friction_type)
        err_cat.append(s.error_category)
        intent.append(s.intent_category)
        tool.append(s.tool_attempted)
        attempts.append(s.attempts)
        err_class.append(s.error_class)
        for a in s.args:
            add_name(a.name)
            add_type(a.type)
            add_size(a.size)
        arg_offsets.append(len(arg_names))
        for e in s.ring:
            add_tool(e.tool)
            add_outcome(e.outcome)
        end = len(ring_tools)
        ring_offsets.append(end)
        n = end - ring_offsets[-2]
        # The two calls right before the last (failed) one; None when the ring is shorter.
        if n >= 2:
            p1t.append(ring_tools[end - 2])
            p1o.append(ring_outcomes[end - 2])
        else:
            p1t.append(None)
            p1o.append(None)
        if n >= 3:
            p2t.append(ring_tools[end - 3])
            p2o.append(ring_outcomes[end - 3])
        else:
            p2t.append(None)
            p2o.append(None)
        app = s.app
        installed.append(app.installed)
        running.append(app.running)
        permitted.append(app.permitted)
        client = s.client
        versions.append(client.version)
        platform.append(client.platform)
    count = len(ids)
    major, minor, patch = zip(*map(_version, versions), strict=True) if count else ((), (), ())
    arrays = [
        uuid_array(ids),
        pa.array([SCHEMA_VERSION] * count, pa.uint8()),
        pa.array(days, pa.date32()),
        *(pa.array(c, _S) for c in (friction, err_cat, intent, tool, attempts, err_class)),
        _list_of_structs(
            arg_offsets,
            (("name", arg_names), ("type", arg_types), ("size", arg_sizes)),
            _ARGS,
        ),
        _list_of_structs(ring_offsets, (("tool", ring_tools), ("outcome", ring_outcomes)), _RING),
        *(pa.array(c, _S) for c in (p1t, p1o, p2t, p2o)),
        *(pa.array(c, pa.bool_()) for c in (installed, running, permitted)),
        *(pa.array(c, pa.uint16()) for c in (major, minor, patch)),
        pa.array(platform, _S),
    ]
    return pa.Table.from_arrays(arrays, schema=ROWS), ids


#: Parsed client versions: a fleet runs a handful, so each is split once (bounded: a body may
#: carry any string the version pattern allows).
_VERSIONS: dict[str, tuple[int, int, int]] = {}
_VERSIONS_MAX = 4096


def _version(version: str) -> tuple[int, int, int]:
    """``major.minor.patch`` (the contract's pattern: three plain numbers) as integers."""
    parsed = _VERSIONS.get(version)
    if parsed is None:
        major, minor, patch = version.split(".")
        parsed = (int(major), int(minor), int(patch))
        if len(_VERSIONS) < _VERSIONS_MAX:
            _VERSIONS[version] = parsed
    return parsed


def uuid_array(ids: Sequence[int]) -> pa.ExtensionArray:
    """Ids given as integers (``uuid.UUID.int``) as Arrow's UUID type: one buffer of their
    16 big-endian bytes, built at C speed."""
    data = pa.py_buffer(b"".join(map(int.to_bytes, ids, repeat(16))))
    storage = pa.FixedSizeBinaryArray.from_buffers(pa.binary(16), len(ids), [None, data])
    return pa.ExtensionArray.from_storage(_UUID, storage)
