"""The write path stores exactly what pydantic validated, however the body spells it.

A large flush hands DuckDB the bodies it validated, which DuckDB parses a second time; a small
one is shaped from the models (collector/rows.py). These tests write bodies in many legal
spellings -- keys in any order, whitespace and line breaks, ``\\u`` escapes, omitted defaults,
other UUID spellings, ``2.0`` for ``schema_version``, a repeated key whose LAST value is the
valid one -- validate them with the shared model as the endpoint does, store them through
``flush_rows`` both ways and read every column back from DuckDB: each row must be what the
validated model says, never what a first occurrence or another parser would have said.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from typing import Any, get_args

import duckdb
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from collector.db import SQL_DIR, migrate
from collector.flush import BodyOnly, Flush, WriteResult
from collector.store import DuckDBStore, flush_rows, insert_bodies
from contract.schema import FrictionSignal, SignalBatch
from service.sql import load_sql
from tests.collector.conftest import TODAY, batch_body, expected_row, make_signal, signals

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
    data["schema_version"] = draw(st.sampled_from([2, 2.0]))
    for key in ("error_category", "intent_category", "attempts"):
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
    migrate(connection)
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def migrated() -> Iterator[duckdb.DuckDBPyConnection]:
    """One migrated database for the property tests, emptied per example by ``_emptied``:
    migrating a fresh database costs far more than emptying a table."""
    connection = duckdb.connect(":memory:")
    migrate(connection)
    yield connection
    connection.close()


def _emptied(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """``con`` with no stored signal: the only table a flush writes is ``signals``."""
    con.execute("DELETE FROM signals")
    return con


def _stored(con: duckdb.DuckDBPyConnection) -> dict[uuid.UUID, dict[str, Any]]:
    cur = con.execute("SELECT * EXCLUDE (received_day) FROM signals")
    names = [d[0] for d in cur.description or []]
    return {row[0]: dict(zip(names, row, strict=True)) for row in cur.fetchall()}


# ------------------------------------------------------------------ properties


@pytest.mark.slow
@pytest.mark.parametrize(
    ("from_bodies", "body_only"),
    [(True, False), (False, False), (False, True)],
    ids=["parsed-bodies", "from-models", "models-validated-again"],
)
@given(requests=st.lists(bodies(), min_size=1, max_size=4))
def test_any_spelling_is_stored_as_the_model_validated_it(
    migrated: duckdb.DuckDBPyConnection,
    from_bodies: bool,
    body_only: bool,
    requests: list[tuple[bytes, list[FrictionSignal]]],
) -> None:
    """``models-validated-again``: requests that waited as their body only (``BodyOnly``)."""
    con = _emptied(migrated)
    validated = [SignalBatch.model_validate_json(body, strict=True).signals for body, _ in requests]
    for got, (_, want) in zip(validated, requests, strict=True):
        assert list(got) == want  # the spelling is legal: pydantic reads the same signals
    ids = [s.signal_id for batch in validated for s in batch]
    fresh = [WriteResult(len(b), 0) for b in validated]
    raw = [b for b, _ in requests]
    batches = (
        [BodyOnly(b, len(v)) for b, v in zip(raw, validated, strict=True)]
        if body_only
        else validated
    )
    results = flush_rows(con, batches, TODAY, raw, from_bodies=from_bodies)
    if len(set(ids)) == len(ids):
        assert results == fresh
    else:
        assert sum(r.accepted for r in results) == len(set(ids))
    stored = _stored(con)
    assert set(stored) == set(ids)
    for batch in validated:
        for signal in batch:
            assert stored[signal.signal_id] == expected_row(signal)
    assert CANARY not in repr(stored)


@pytest.mark.slow
@given(st.lists(signals, min_size=1, max_size=8, unique_by=lambda s: s.signal_id))
def test_a_client_body_goes_through_duckdb_without_refusal(
    migrated: duckdb.DuckDBPyConnection, batch: list[FrictionSignal]
) -> None:
    """The spelling the client sends (pydantic's own) is never refused: the fast path is taken."""
    body = batch_body(batch)
    assert SignalBatch.model_validate_json(body, strict=True).signals == tuple(batch)
    con = _emptied(migrated)
    insert_bodies(con, [body, batch_body([])], [len(batch), 0], TODAY)
    stored = _stored(con)
    assert stored == {s.signal_id: expected_row(s) for s in batch}


# ------------------------------------------------------------------ refusals, by example


def _refused(con: duckdb.DuckDBPyConnection, bodies: list[bytes], counts: list[int]) -> None:
    with pytest.raises(
        (duckdb.ConstraintException, duckdb.InvalidInputException, duckdb.ConversionException)
    ):
        insert_bodies(con, bodies, counts, TODAY)


@pytest.mark.parametrize("body_only", [False, True], ids=["models-kept", "body-only"])
def test_a_repeated_key_is_refused_and_the_flush_written_from_its_models(
    con: duckdb.DuckDBPyConnection, body_only: bool
) -> None:
    """``body-only``: requests that kept only their body (``BodyOnly``) choose the bodies path
    themselves, and the refusal's fallback validates them again."""
    good = [make_signal(), make_signal()]
    bad_signal = make_signal()
    bad = batch_body([bad_signal]).replace(
        b'"tool_attempted":', b'"tool_attempted": "' + CANARY.encode() + b'", "tool_attempted":'
    )
    assert SignalBatch.model_validate_json(bad, strict=True).signals == (bad_signal,)
    _refused(con, [batch_body(good), bad], [2, 1])
    assert _stored(con) == {}  # the refused statement wrote nothing
    if body_only:
        work = Flush([BodyOnly(batch_body(good), 2), BodyOnly(bad, 1)], [batch_body(good), bad])
        results, refused = DuckDBStore(con).write(
            work, TODAY
        )  # refused: the bodies path was taken first
    else:
        work = Flush([good, [bad_signal]], [batch_body(good), bad])
        results, refused = DuckDBStore(con).write(work, TODAY, from_bodies=True)
    assert (results, refused) == ([WriteResult(2, 0), WriteResult(1, 0)], True)
    stored = _stored(con)
    assert stored == {s.signal_id: expected_row(s) for s in [*good, bad_signal]}
    assert CANARY not in repr(stored)


def test_body_only_validates_only_when_its_signals_are_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import collector.flush as flush_module

    batch = [make_signal(), make_signal(), make_signal()]
    calls: list[bytes] = []

    def counting(body: bytes) -> SignalBatch:
        calls.append(body)
        return SignalBatch.model_validate_json(body, strict=True)

    monkeypatch.setattr(flush_module, "validate_batch", counting)
    waiting = BodyOnly(batch_body(batch), len(batch))
    assert len(waiting) == 3 and calls == []
    assert list(waiting) == batch and waiting[1] == batch[1] and list(waiting[1:]) == batch[1:]
    assert len(calls) == 1  # validated once, then kept for the rest of the flush


def test_a_body_that_does_not_hold_its_batch_is_refused(con: duckdb.DuckDBPyConnection) -> None:
    body = batch_body([make_signal(), make_signal()])
    _refused(con, [body], [3])
    _refused(con, [body], [1])
    assert _stored(con) == {}


def test_stored_and_repeated_ids_are_refused_then_counted_as_duplicates(
    con: duckdb.DuckDBPyConnection,
) -> None:
    a, b, c = make_signal(), make_signal(), make_signal()
    insert_bodies(con, [batch_body([a])], [1], TODAY)
    _refused(con, [batch_body([a, b])], [2])  # a is stored
    _refused(con, [batch_body([b]), batch_body([b, c])], [1, 2])  # b twice in one flush
    assert set(_stored(con)) == {a.signal_id}
    work = Flush([[a, b], [b, c]], [batch_body([a, b]), batch_body([b, c])])
    results, refused = DuckDBStore(con).write(work, TODAY, from_bodies=True)
    assert (results, refused) == ([WriteResult(1, 1), WriteResult(1, 1)], True)
    assert set(_stored(con)) == {a.signal_id, b.signal_id, c.signal_id}


@pytest.mark.parametrize(
    "spell",
    [str.upper, lambda sid: "{" + sid + "}", lambda sid: sid.replace("-", "")],
    ids=["capitals", "braces", "no-hyphens"],
)
def test_other_id_spellings_are_read_as_the_same_id(
    con: duckdb.DuckDBPyConnection, spell: Any
) -> None:
    signal = make_signal()
    body = batch_body([signal]).replace(
        str(signal.signal_id).encode(), spell(str(signal.signal_id)).encode()
    )
    assert SignalBatch.model_validate_json(body, strict=True).signals == (signal,)
    insert_bodies(con, [body], [1], TODAY)
    assert _stored(con) == {signal.signal_id: expected_row(signal)}


@pytest.mark.parametrize("from_bodies", [True, False, None])
def test_flush_rows_without_bodies_writes_the_models(
    con: duckdb.DuckDBPyConnection, from_bodies: bool | None
) -> None:
    batch = [make_signal(), make_signal(ring=()), make_signal(args=())]
    got = flush_rows(con, [batch, []], TODAY, from_bodies=from_bodies)
    assert got == [WriteResult(3, 0), WriteResult(0, 0)]
    stored = _stored(con)
    assert [stored[s.signal_id] for s in batch] == [expected_row(s) for s in batch]


def test_a_flush_with_a_request_without_body_is_written_from_models_not_refused(
    con: duckdb.DuckDBPyConnection,
) -> None:
    with_body, without = [make_signal()], [make_signal(), make_signal()]
    work = Flush([with_body, without], [batch_body(with_body), None])
    results, refused = DuckDBStore(con).write(work, TODAY, from_bodies=True)
    assert (results, refused) == ([WriteResult(1, 0), WriteResult(2, 0)], False)
    assert set(_stored(con)) == {s.signal_id for s in [*with_body, *without]}


def _keys_of_model(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON keys, nested as in a body (a list of models as one example item)."""

    def shape(annotation: Any) -> Any:
        for arg in (annotation, *get_args(annotation)):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                return _keys_of_model(arg) if arg is annotation else [_keys_of_model(arg)]
        return None

    return {name: shape(field.annotation) for name, field in model.model_fields.items()}


def _keys_of_structure(structure: Any) -> Any:
    if isinstance(structure, dict):
        return {key: _keys_of_structure(value) for key, value in structure.items()}
    if isinstance(structure, list):
        return [_keys_of_structure(structure[0])]
    return None


def test_the_bodies_insert_reads_exactly_the_models_keys() -> None:
    """``json_transform_strict`` ignores keys its structure lacks: a field added to the shared
    model but not to ``insert_bodies.sql`` would be dropped silently on the large path."""
    sql = load_sql(SQL_DIR, "insert_bodies")
    literal = re.search(r"json_transform_strict\(body, '(.*?)'\)", sql, re.S)
    assert literal is not None
    structure = json.loads(literal.group(1))
    assert _keys_of_structure(structure) == _keys_of_model(SignalBatch)
