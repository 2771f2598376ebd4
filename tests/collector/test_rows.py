"""The write path stores exactly what pydantic validated, however the body spells it.

A large flush stores the bodies it validated, parsed a second time by Arrow; a small one is
shaped from the models (collector/rows.py). These tests write bodies in many legal spellings --
keys in any order, whitespace and line breaks, ``\\u`` escapes, omitted defaults, other UUID
spellings, ``true`` for ``schema_version``, a repeated key whose LAST value is the valid one --
validate them with the shared model as the endpoint does, store them through ``flush_rows``
both ways and read every column back from DuckDB: each row must be what the validated model
says, never what a first occurrence or another parser would have said.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from client.schema import FrictionSignal, SignalBatch
from collector.db import apply_migrations
from collector.rows import (
    BodyCountError,
    canonical_body,
    one_line,
    parse_bodies,
    wire_lists,
)
from collector.writer import WriteResult, flush_rows
from tests.collector.conftest import TODAY, expected_row, make_signal, signals

CANARY = "CANARY-d41d8cd98f00b204"

# ------------------------------------------------------------------ a JSON writer with options

Pairs = list[tuple[str, Any]]


class Obj:
    """A JSON object as ordered (key, value) pairs: keys may repeat."""

    def __init__(self, pairs: Pairs) -> None:
        self.pairs = pairs


def _string(text: str, escape: bool) -> str:
    if not escape:
        return json.dumps(text)
    return '"' + "".join(f"\\u{ord(c):04x}" if c.isalpha() else c for c in text) + '"'


def render(value: Any, *, escape: bool, newline: str) -> str:
    if isinstance(value, Obj):
        inner = ("," + newline).join(
            _string(k, escape) + ":" + render(v, escape=escape, newline=newline)
            for k, v in value.pairs
        )
        return "{" + newline + inner + newline + "}"
    if isinstance(value, list):
        return "[" + ",".join(render(v, escape=escape, newline=newline) for v in value) + "]"
    if isinstance(value, str):
        return _string(value, escape)
    return json.dumps(value)


def spelled(signal: FrictionSignal, draw: st.DrawFn) -> Obj:
    """One of the many bodies pydantic validates into ``signal``."""
    data: dict[str, Any] = signal.model_dump(mode="json")
    sid = str(signal.signal_id)
    data["signal_id"] = draw(
        st.sampled_from(
            [sid, sid.upper(), "{" + sid + "}", "urn:uuid:" + sid, sid.replace("-", "")]
        )
    )
    data["schema_version"] = draw(st.sampled_from([1, True, 1.0]))
    for key in ("error_category", "intent_category", "attempt_count"):
        if data[key] is None and draw(st.booleans()):
            del data[key]  # an omitted optional field is its default, None
    for key in ("args", "ring"):
        if not data[key] and draw(st.booleans()):
            del data[key]  # an omitted list is its default, ()
    if all(v is None for v in data["app"].values()) and draw(st.booleans()):
        del data["app"]  # an omitted app is its default, every flag unknown

    def obj(d: dict[str, Any]) -> Obj:
        return Obj([(k, obj(v) if isinstance(v, dict) else _lists(v)) for k, v in d.items()])

    def _lists(v: Any) -> Any:
        return [obj(x) if isinstance(x, dict) else x for x in v] if isinstance(v, list) else v

    top = obj(data)
    top.pairs = draw(st.permutations(top.pairs))
    if draw(st.booleans()):
        # A repeated key: the first value is a canary (the smuggling attempt), the last valid.
        key = draw(st.sampled_from(["tool_attempted", "friction_type", "error_class"]))
        top.pairs.insert(0, (key, CANARY))
    return top


@st.composite
def bodies(draw: st.DrawFn) -> tuple[bytes, list[FrictionSignal]]:
    batch = draw(st.lists(signals, min_size=1, max_size=6, unique_by=lambda s: s.signal_id))
    doc = Obj([("signals", [spelled(s, draw) for s in batch])])
    text = render(
        doc, escape=draw(st.booleans()), newline=draw(st.sampled_from(["", "\n", "\r\n", " "]))
    )
    return text.encode(), batch


@pytest.fixture
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect(":memory:")
    apply_migrations(connection)
    yield connection
    connection.close()


def _stored(con: duckdb.DuckDBPyConnection) -> dict[uuid.UUID, dict[str, Any]]:
    cur = con.execute("SELECT * EXCLUDE (received_day) FROM signals")
    names = [d[0] for d in cur.description or []]
    return {row[0]: dict(zip(names, row, strict=True)) for row in cur.fetchall()}


# ------------------------------------------------------------------ properties


@pytest.mark.parametrize("from_bodies", [True, False], ids=["parsed-bodies", "from-models"])
@settings(max_examples=100, deadline=None)
@given(requests=st.lists(bodies(), min_size=1, max_size=4))
def test_any_spelling_is_stored_as_the_model_validated_it(
    from_bodies: bool, requests: list[tuple[bytes, list[FrictionSignal]]]
) -> None:
    con = duckdb.connect(":memory:")
    apply_migrations(con)
    validated = [SignalBatch.model_validate_json(body, strict=True).signals for body, _ in requests]
    for got, (_, want) in zip(validated, requests, strict=True):
        assert list(got) == want  # the spelling is legal: pydantic reads the same signals
    ids = [s.signal_id for batch in validated for s in batch]
    fresh = [WriteResult(len(b), 0) for b in validated]
    raw = [b for b, _ in requests]
    results = flush_rows(con, validated, TODAY, raw, from_bodies=from_bodies)
    if len(set(ids)) == len(ids):
        assert results == fresh
    else:
        assert sum(r.accepted for r in results) == len(set(ids))
    stored = _stored(con)
    con.close()
    assert set(stored) == set(ids)
    for batch in validated:
        for signal in batch:
            assert stored[signal.signal_id] == expected_row(signal)
    assert CANARY not in repr(stored)


@settings(max_examples=100, deadline=None)
@given(st.lists(signals, min_size=1, max_size=8, unique_by=lambda s: s.signal_id))
def test_canonical_bodies_parse_without_fallback(batch: list[FrictionSignal]) -> None:
    body = canonical_body(batch)
    assert SignalBatch.model_validate_json(body, strict=True).signals == tuple(batch)
    lists, fallbacks = wire_lists([body], [len(batch)], lambda i: pytest.fail("no fallback"))
    assert fallbacks == 0
    assert len(lists) == 1 and len(lists.flatten()) == len(batch)


@given(st.binary(max_size=64))
def test_one_line_removes_only_line_breaks(body: bytes) -> None:
    flat = one_line(body)
    assert b"\n" not in flat and b"\r" not in flat
    assert len(flat) == len(body)
    assert all(a == b or (a in b"\r\n" and b == 32) for a, b in zip(body, flat, strict=True))


# ------------------------------------------------------------------ the fallback, by example


def test_a_repeated_key_falls_back_to_the_models_for_that_body_only() -> None:
    good = [make_signal(), make_signal()]
    bad_signal = make_signal()
    bad = canonical_body([bad_signal]).replace(
        b'"tool_attempted":', b'"tool_attempted":"' + CANARY.encode() + b'","tool_attempted":'
    )
    assert SignalBatch.model_validate_json(bad, strict=True).signals == (bad_signal,)
    with pytest.raises(pa.ArrowInvalid):
        parse_bodies([bad], [1])
    asked: list[int] = []

    def canonical(i: int) -> bytes:
        asked.append(i)
        return canonical_body([bad_signal])

    bodies_ = [canonical_body(good), bad]
    lists, fallbacks = wire_lists(bodies_, [2, 1], canonical)
    assert (fallbacks, asked) == (1, [1])
    assert lists.value_lengths().to_pylist() == [2, 1]
    signals = lists.flatten()
    assert signals.field("tool_attempted").to_pylist() == [
        str(s.tool_attempted) for s in [*good, bad_signal]
    ]
    assert CANARY not in repr(signals.to_pylist())


def test_a_body_that_does_not_hold_its_batch_is_refused() -> None:
    body = canonical_body([make_signal(), make_signal()])
    with pytest.raises(BodyCountError):
        parse_bodies([body], [3])
    with pytest.raises(BodyCountError):
        parse_bodies([body], [2, 1])


@pytest.mark.parametrize("from_bodies", [True, False, None])
def test_flush_rows_without_bodies_writes_the_models(
    con: duckdb.DuckDBPyConnection, from_bodies: bool | None
) -> None:
    batch = [make_signal(), make_signal(ring=()), make_signal(args=())]
    got = flush_rows(con, [batch, []], TODAY, from_bodies=from_bodies)
    assert got == [WriteResult(3, 0), WriteResult(0, 0)]
    stored = _stored(con)
    assert [stored[s.signal_id] for s in batch] == [expected_row(s) for s in batch]
