"""Validated signals become one Arrow table per flush: the pure core of the write path.

Two ways, both exact (``tests/collector/test_rows.py`` stores every legal spelling both ways):

- **A large flush** (``COLUMNS``): the collector stores the very bodies it validated with the
  shared strict model. Arrow's JSON reader parses all the bodies of the flush in one C++ call
  that releases the GIL (~5-7 µs a signal, on the writer thread), instead of Python walking
  the models (~6-10 µs a signal, holding the GIL that request validation needs);
  ``collector/sql/insert_signals.sql`` derives the stored columns in DuckDB.
- **A small flush** (``ROWS``, ``rows_from_models``): a few dozen rows, written while the event
  loop mostly waits for them. Python shapes them from the models in well under a millisecond,
  and ``collector/sql/insert_rows.sql`` only casts: DuckDB plans it ~2-3 ms faster, most of a
  small flush's cost.

The two parsers of the large path must agree on every value, and they do on a validated body,
with three exceptions that this module closes:

- **A repeated key.** pydantic keeps the last value; Arrow's reader refuses the body
  ("specified twice"). Such a body is stored from its validated models instead
  (``canonical_body``: pydantic's own serialisation, which cannot repeat a key).
- **Several spellings of one value.** pydantic accepts a UUID with braces, a ``urn:uuid:``
  prefix or no hyphens, and ``true`` or ``1.0`` for ``schema_version: 1``. The writer takes
  ``signal_id`` from the validated models (as 16 bytes), never from the text; a body Arrow
  cannot type with ``WIRE_SCHEMA`` (``true`` for an integer) falls back to its models.
- **Line breaks.** Arrow reads one JSON document per line; outside strings, a line break is
  only whitespace (inside one it is invalid JSON, and no enum, UUID, date or version holds
  one), so it becomes a space.

Anything else Arrow refuses also falls back to the models, body by body: the fallback changes
the cost, never the stored values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.json as pa_json
from pydantic import TypeAdapter

from client.schema import FrictionSignal

__all__ = [
    "COLUMNS",
    "ROWS",
    "SIGNAL_TYPE",
    "WIRE_SCHEMA",
    "BodyCountError",
    "canonical_body",
    "one_line",
    "parse_bodies",
    "rows_from_models",
    "to_columns",
    "uuid_array",
    "wire_lists",
]

_S = pa.string()

#: One signal as Arrow reads it from the wire: enum members stay strings (DuckDB casts them to
#: its ENUM types on insert and refuses anything else), ``day`` stays ISO text (the model
#: accepts ``YYYY-MM-DD`` only, which DuckDB casts exactly), nested objects stay nested.
SIGNAL_TYPE = pa.struct(
    [
        ("schema_version", pa.uint8()),
        ("signal_id", _S),
        ("day", _S),
        ("friction_type", _S),
        ("error_category", _S),
        ("intent_category", _S),
        ("tool_attempted", _S),
        ("attempt_count", pa.uint8()),
        ("error_class", _S),
        ("args", pa.list_(pa.struct([("name", _S), ("type", _S), ("size", _S)]))),
        ("ring", pa.list_(pa.struct([("tool", _S), ("outcome", _S)]))),
        (
            "app",
            pa.struct(
                [("installed", pa.bool_()), ("running", pa.bool_()), ("permitted", pa.bool_())]
            ),
        ),
        ("client", pa.struct([("version", _S), ("platform", _S)])),
    ]
)
#: A request body, ``{"signals": [...]}``.
WIRE_SCHEMA = pa.schema([("signals", pa.list_(SIGNAL_TYPE))])

#: What the writer hands DuckDB for one flush: each signal as parsed, and its id from the
#: validated models (the parsed ``signal_id`` text is ignored). ``insert_signals.sql`` derives
#: the stored columns from it in SQL, so the whole flush is one call into DuckDB, which runs
#: without the GIL.
COLUMNS = pa.schema([("signal_id", pa.uuid()), ("s", SIGNAL_TYPE)])

#: The rows of a small flush, shaped in Python from the validated models (``rows_from_models``):
#: the ``signals`` table's columns, enum members as their strings.
ROWS = pa.schema(
    [
        ("signal_id", pa.uuid()),
        ("schema_version", pa.uint8()),
        ("day", pa.date32()),
        ("friction_type", _S),
        ("error_category", _S),
        ("intent_category", _S),
        ("tool_attempted", _S),
        ("attempt_count", pa.uint8()),
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
    ]
)


_PARSE = pa_json.ParseOptions(explicit_schema=WIRE_SCHEMA, unexpected_field_behavior="error")
_UUID = pa.uuid()
_SIGNALS = TypeAdapter(tuple[FrictionSignal, ...])


class BodyCountError(ValueError):
    """A body did not yield as many signals as were validated from it."""


def canonical_body(signals: Sequence[FrictionSignal]) -> bytes:
    """The body pydantic writes for validated signals: one spelling per value, no repeated key."""
    return b'{"signals":' + _SIGNALS.dump_json(tuple(signals)) + b"}"


def one_line(body: bytes) -> bytes:
    """The body on one line: a line break outside a JSON string is whitespace."""
    if b"\n" in body or b"\r" in body:
        return body.replace(b"\n", b" ").replace(b"\r", b" ")
    return body


def _offsets(counts: Sequence[int]) -> pa.Array:
    ends = [0]
    for count in counts:
        ends.append(ends[-1] + count)
    return pa.array(ends, pa.int32())


def parse_bodies(bodies: Sequence[bytes], counts: Sequence[int]) -> pa.ListArray:
    """The bodies' ``signals``: one list per body, each item a ``SIGNAL_TYPE`` struct.

    One C++ parse for all the bodies, which releases the GIL. Raises ``pyarrow.ArrowInvalid``
    when Arrow refuses a body and ``BodyCountError`` when a body does not hold ``counts[i]``
    signals.
    """
    data = b"\n".join(one_line(b) for b in bodies)
    options = pa_json.ReadOptions(use_threads=False, block_size=max(len(data) + 1, 1 << 16))
    # A native buffer: reading a Python file object would take the GIL for every chunk.
    parsed = pa_json.read_json(pa.BufferReader(data), read_options=options, parse_options=_PARSE)
    column = parsed.column(0)
    lists = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    if lists.null_count or not lists.offsets.equals(_offsets(counts)):
        raise BodyCountError("a body does not hold the signals validated from it")
    return lists


def wire_lists(
    bodies: Sequence[bytes],
    counts: Sequence[int],
    canonical: Callable[[int], bytes],
) -> tuple[pa.ListArray, int]:
    """All the bodies' signals, and how many bodies had to be stored from their models.

    Tries one parse of everything first; if Arrow refuses any body, parses them one by one and
    replaces each refused body with ``canonical(i)``, the serialisation of its validated models.
    Few calls into Arrow on purpose: each one gives the GIL up and must wait to get it back,
    up to a switch interval when the event loop is busy validating.
    """
    try:
        return parse_bodies(bodies, counts), 0
    except (pa.ArrowInvalid, BodyCountError):
        pass
    parts: list[pa.ListArray] = []
    fallbacks = 0
    for index, (body, count) in enumerate(zip(bodies, counts, strict=True)):
        try:
            parts.append(parse_bodies([body], [count]))
        except (pa.ArrowInvalid, BodyCountError):
            fallbacks += 1
            parts.append(parse_bodies([canonical(index)], [count]))
    return pa.concat_arrays(parts), fallbacks


def to_columns(
    lists: pa.ListArray, ids: pa.ExtensionArray, keep: Sequence[bool] | None
) -> pa.Table:
    """The parsed signals beside their ids (``COLUMNS``), each id once.

    ``keep`` drops repeated ids (None: keep all); ``ids`` are the kept signals' ids.
    """
    signals = lists.flatten()
    if keep is not None:
        signals = signals.filter(pa.array(keep, pa.bool_()))
    return pa.Table.from_arrays([ids, signals], schema=COLUMNS)


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
    (``_value_``): pyarrow converts a ``str`` subclass ~4x slower than a ``str``.
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
        attempts.append(s.attempt_count)
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
