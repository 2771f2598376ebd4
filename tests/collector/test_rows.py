"""The write path stores exactly what pydantic validated, however the body spells it.

Bodies in many legal spellings (``tests/collector/_spellings.py``) are validated as the
endpoint does (``validate_batch``: the fast decoder, or pydantic for what it refuses), stored
through the store, and read back column by column: each row must be what the pydantic model
says, never what a first occurrence or another parser would have said. Then the store's own
rules: each id once per open day, the first occurrence winning, in one transaction.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import uuid
from collections.abc import Iterator
from typing import Any, get_args

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from collector.db import SQL_DIR, migrate
from collector.flush import Flush, WriteResult
from collector.ingest import validate_batch
from collector.retention import reorder_day
from collector.store import DuckDBStore, flush_rows
from contract.schema import FrictionSignal, SignalBatch
from service.sql import load_sql
from tests.collector._spellings import CANARY, bodies
from tests.collector.conftest import TODAY, batch_body, expected_row, make_signal, signals
from tests.hypothesis_profiles import at_most


@pytest.fixture
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect(":memory:")
    migrate(connection)
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def migrated() -> Iterator[duckdb.DuckDBPyConnection]:
    """One migrated database for the property tests, emptied per example by ``_emptied``:
    migrating a fresh database costs far more than emptying two tables."""
    connection = duckdb.connect(":memory:")
    migrate(connection)
    yield connection
    connection.close()


def _emptied(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """``con`` with no stored signal (each flush's store loads the open days' ids anew)."""
    con.execute("DELETE FROM signals")
    return con


def _stored(con: duckdb.DuckDBPyConnection) -> dict[uuid.UUID, dict[str, Any]]:
    cur = con.execute("SELECT * EXCLUDE (received_day) FROM signals")
    names = [d[0] for d in cur.description or []]
    return {row[0]: dict(zip(names, row, strict=True)) for row in cur.fetchall()}


# ------------------------------------------------------------------ properties


@pytest.mark.slow
@given(requests=st.lists(bodies(), min_size=1, max_size=4))
def test_any_spelling_is_stored_as_the_model_validated_it(
    migrated: duckdb.DuckDBPyConnection,
    requests: list[tuple[bytes, list[FrictionSignal]]],
) -> None:
    con = _emptied(migrated)
    for body, want in requests:  # the spelling is legal: pydantic reads the same signals
        assert list(SignalBatch.model_validate_json(body, strict=True).signals) == want
    validated = [validate_batch(body).signals for body, _ in requests]
    ids = [s.signal_id for batch in validated for s in batch]
    results = flush_rows(con, validated, TODAY)
    if len(set(ids)) == len(ids):
        assert results == [WriteResult(len(b), 0) for b in validated]
    else:
        assert sum(r.accepted for r in results) == len(set(ids))
    stored = _stored(con)
    assert set(stored) == set(ids)
    for _, want in requests:
        for signal in want:
            assert stored[signal.signal_id] == expected_row(signal)
    assert CANARY not in repr(stored)


# ------------------------------------------------------------------ by example


@pytest.mark.slow
# Each example migrates a database and flushes up to 30 rows: a quarter of the ci budget.
@settings(max_examples=at_most(25))
@given(batch=st.lists(signals, min_size=1, max_size=30, unique_by=lambda s: s.signal_id))
def test_rows_read_back_field_by_field(batch: list[FrictionSignal]) -> None:
    con = duckdb.connect(":memory:")
    migrate(con)
    got = flush_rows(con, [validate_batch(batch_body(batch)).signals], TODAY)
    assert got == [WriteResult(len(batch), 0)]
    cur = con.execute("SELECT * EXCLUDE (received_day) FROM signals")
    names = [d[0] for d in cur.description or []]
    stored = {row[0]: dict(zip(names, row, strict=True)) for row in cur.fetchall()}
    con.close()
    for signal in batch:
        assert stored[signal.signal_id] == expected_row(signal)


def test_a_repeated_key_stores_its_last_value_never_its_first() -> None:
    signal = make_signal()
    body = batch_body([signal]).replace(
        b'"tool_attempted":', b'"tool_attempted": "' + CANARY.encode() + b'", "tool_attempted":'
    )
    assert SignalBatch.model_validate_json(body, strict=True).signals == (signal,)
    con = duckdb.connect(":memory:")
    migrate(con)
    flush_rows(con, [validate_batch(body).signals], TODAY)
    stored = _stored(con)
    assert stored == {signal.signal_id: expected_row(signal)}
    assert CANARY not in repr(stored)


@pytest.mark.parametrize("streamed", [False, True], ids=["write", "write_streamed"])
def test_stored_and_repeated_ids_are_counted_as_duplicates(
    con: duckdb.DuckDBPyConnection, streamed: bool
) -> None:
    a, b, c = make_signal(), make_signal(), make_signal()
    store = DuckDBStore(con)
    assert flush_rows(con, [[a]], TODAY) == [WriteResult(1, 0)]
    work = Flush([[a, b], [b, c]], [None, None])  # a is stored, b twice in the flush
    if streamed:
        results, refused = store.write_streamed(TODAY, lambda: work)
    else:
        results, refused = store.write(work, TODAY)
    assert (results, refused) == ([WriteResult(1, 1), WriteResult(1, 1)], False)
    assert set(_stored(con)) == {a.signal_id, b.signal_id, c.signal_id}
    assert len(store.open_ids) == 3
    store.close()


def test_a_failed_flush_stores_nothing(con: duckdb.DuckDBPyConnection) -> None:
    good = make_signal()
    bad = make_signal().model_copy(update={"tool_attempted": "not_a_tool"})  # no ENUM value
    with pytest.raises(duckdb.Error):
        flush_rows(con, [[good, bad]], TODAY)
    assert _stored(con) == {}
    assert flush_rows(con, [[good]], TODAY) == [WriteResult(1, 0)]


def test_a_retry_after_its_day_closed_is_dropped_by_the_rewrite(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """Only the open days' ids are held: a retry after the rewrite of its first copy's day
    is stored, then dropped when its own day is rewritten (each id once, no arrival order)."""
    yesterday = TODAY - dt.timedelta(days=1)
    a, b = make_signal(day=yesterday), make_signal(day=yesterday)
    flush_rows(con, [[a, b]], yesterday)
    reorder_day(con, yesterday)
    assert len(DuckDBStore(con).open_ids) == 0
    fresh = make_signal()
    assert flush_rows(con, [[a, fresh]], TODAY) == [WriteResult(2, 0)]  # a is not indexed now
    assert flush_rows(con, [[a]], TODAY) == [WriteResult(0, 1)]  # but is on its open day
    reorder_day(con, TODAY)
    rows = con.execute("SELECT signal_id, received_day FROM signals ORDER BY rowid").fetchall()
    assert sorted(rows) == sorted(
        [(a.signal_id, yesterday), (b.signal_id, yesterday), (fresh.signal_id, TODAY)]
    )
    today = [sid for sid, day in rows if day == TODAY]
    assert today == sorted(today)  # the rewrite's order: the random ids'


@pytest.mark.parametrize(
    "spell",
    [str.upper, lambda sid: "{" + sid + "}", lambda sid: sid.replace("-", "")],
    ids=["capitals", "braces", "no-hyphens"],
)
def test_other_id_spellings_are_stored_as_the_same_id(
    con: duckdb.DuckDBPyConnection, spell: Any
) -> None:
    signal = make_signal()
    body = batch_body([signal]).replace(
        str(signal.signal_id).encode(), spell(str(signal.signal_id)).encode()
    )
    assert SignalBatch.model_validate_json(body, strict=True).signals == (signal,)
    flush_rows(con, [validate_batch(body).signals], TODAY)
    assert _stored(con) == {signal.signal_id: expected_row(signal)}


def test_flush_rows_writes_built_models(con: duckdb.DuckDBPyConnection) -> None:
    batch = [make_signal(), make_signal(ring=()), make_signal(args=())]
    got = flush_rows(con, [batch, []], TODAY)
    assert got == [WriteResult(3, 0), WriteResult(0, 0)]
    stored = _stored(con)
    assert [stored[s.signal_id] for s in batch] == [expected_row(s) for s in batch]


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
    model but not to ``insert_bodies.sql`` would be dropped silently by the lake's sink."""
    sql = load_sql(SQL_DIR, "insert_bodies")
    literal = re.search(r"json_transform_strict\(body, '(.*?)'\)", sql, re.S)
    assert literal is not None
    structure = json.loads(literal.group(1))
    assert _keys_of_structure(structure) == _keys_of_model(SignalBatch)
