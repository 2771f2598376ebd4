"""Wire compatibility: the collector accepts the current signal version (2) and the previous one
(1), maps v1's raw ``attempt_count`` into v2's bucket before any row is built, and names a
missing or unknown version clearly. Through a real uvicorn collector and its DuckDB file."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any

import duckdb
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collector.db import MIGRATIONS_DIR
from collector.settings import CollectorSettings
from contract.schema import (
    MAX_ARGS,
    MAX_ATTEMPT_COUNT,
    ArgName,
    ArgShape,
    ArgType,
    FrictionSignal,
    FrictionSignalV1,
    attempts_bucket,
    size_bucket,
    upgrade,
)
from service.db import apply_migrations, discover_migrations
from tests._servers import HANG_S, running_collector
from tests.collector.conftest import TODAY, read_rows, signals
from tests.factories import arg_shapes
from tests.hypothesis_profiles import at_most

JSON = {"content-type": "application/json"}


def v1_signal(attempt_count: int | None) -> dict[str, Any]:
    """A signal exactly as a version-1 client (before this change) sent it."""
    return {
        "schema_version": 1,
        "signal_id": str(uuid.uuid4()),
        "day": TODAY.isoformat(),  # inside the accepted window
        "friction_type": "repeated_failure",
        "error_category": "not_found",
        "intent_category": "manage_note",
        "tool_attempted": "read_note",
        "attempt_count": attempt_count,
        "error_class": "not_found",
        "args": [{"name": "note_name", "type": "string", "size": "1-16"}],
        "ring": [{"tool": "read_note", "outcome": "failed"}],
        "app": {"installed": True, "running": True, "permitted": True},
        "client": {"version": "1.4.2", "platform": "macos"},
    }


def v2_signal(attempts: str | None) -> dict[str, Any]:
    doc = v1_signal(None)
    del doc["attempt_count"]
    doc.update(schema_version=2, attempts=attempts)
    return doc


def _post(url: str, signals: list[dict[str, Any]]) -> httpx.Response:
    body = json.dumps({"signals": signals}).encode()
    return httpx.post(
        url + "/v1/signals", content=body, headers=JSON, trust_env=False, timeout=HANG_S
    )


def _stored(settings: CollectorSettings) -> dict[str, tuple[int, str | None]]:
    rows = read_rows(
        settings.db_path, "SELECT signal_id, schema_version, attempts::VARCHAR AS a FROM signals"
    )
    return {str(r["signal_id"]): (r["schema_version"], r["a"]) for r in rows}


@pytest.mark.slow
def test_v1_and_v2_bodies_through_the_real_server(settings: CollectorSettings) -> None:
    counts = [None, 1, 2, 3, 5, 6, 10, 11, 100]
    v1 = [v1_signal(c) for c in counts]
    v2 = [v2_signal(b) for b in (None, "1", "2", "3-5", "6-10", "more")]
    # A large v1 batch too: the writer hands large flushes' bodies to DuckDB, which must never
    # store a v1 body as it is (it is refused there and written from the mapped models).
    big = [v1_signal(1 + i % 100) for i in range(500)]
    with running_collector(settings) as url:
        assert _post(url, v1).json() == {"accepted": len(v1), "duplicates": 0}
        assert _post(url, v2).json() == {"accepted": len(v2), "duplicates": 0}
        assert _post(url, v1[:2] + v2[:2]).json() == {"accepted": 0, "duplicates": 4}
        assert _post(url, big).json() == {"accepted": 500, "duplicates": 0}
    stored = _stored(settings)
    for doc in v1 + big:
        assert stored[doc["signal_id"]] == (2, _bucket(doc["attempt_count"]))
    for doc in v2:
        assert stored[doc["signal_id"]] == (2, doc["attempts"])
    columns = [r["column_name"] for r in read_rows(settings.db_path, "DESCRIBE signals")]
    assert "attempts" in columns and "attempt_count" not in columns  # the raw count is gone


def _bucket(count: int | None) -> str | None:
    bucket = attempts_bucket(count)
    return None if bucket is None else bucket.value


@pytest.mark.slow
@pytest.mark.parametrize(
    ("change", "code", "rule"),
    [
        ({"schema_version": 3}, "unsupported_schema_version", "supported"),
        ({"schema_version": 0}, "unsupported_schema_version", "supported"),
        ({"schema_version": "2"}, "unsupported_schema_version", "supported"),
        ({"schema_version": None}, "missing_schema_version", "missing"),
    ],
    ids=["future", "zero", "string", "missing"],
)
def test_a_missing_or_unknown_version_is_a_clear_422(
    settings: CollectorSettings, change: dict[str, Any], code: str, rule: str
) -> None:
    good = v2_signal("2")
    bad = v2_signal("2")
    bad.update(change)
    if change.get("schema_version", 0) is None:
        del bad["schema_version"]
    with running_collector(settings) as url:
        response = _post(url, [good, bad])
    assert response.status_code == 422
    problem = response.json()
    assert problem["code"] == code
    assert problem["errors"] == [
        {
            "pointer": "/signals/1/schema_version",
            "rule": rule,
            "detail": f"schema_version is {'missing' if rule == 'missing' else 'not supported'}",
        }
    ]
    assert "accepts versions 1, 2" in problem["detail"]
    assert _stored(settings) == {}


# Each example migrates a fresh DuckDB twice.
@pytest.mark.slow
@settings(max_examples=at_most(40))
@given(st.lists(st.none() | st.integers(1, MAX_ATTEMPT_COUNT), min_size=1, max_size=30))
def test_migration_maps_stored_counts_as_the_collector_maps_v1(counts: list[int | None]) -> None:
    """Rows stored before migration 0002 get the bucket ``upgrade`` gives a v1 signal."""
    migrations = discover_migrations(MIGRATIONS_DIR)
    before = [m for m in migrations if m.name < "0002"]
    con = duckdb.connect(":memory:")
    try:
        apply_migrations(con, before)
        for i, count in enumerate(counts):
            con.execute(
                "INSERT INTO signals (signal_id, schema_version, day, received_day, "
                "friction_type, tool_attempted, attempt_count, error_class, args, ring, "
                "client_version_major, client_version_minor, client_version_patch, "
                "client_platform) VALUES ($1, 1, $2, $2, 'other', 'read_note', $3, "
                "'not_found', [], [], 1, 0, 0, 'linux')",
                [uuid.UUID(int=i + 1, version=4), dt.date(2026, 11, 1), count],
            )
        apply_migrations(con, migrations)
        rows = con.execute(
            "SELECT attempts::VARCHAR, schema_version FROM signals ORDER BY signal_id"
        ).fetchall()
    finally:
        con.close()
    assert rows == [(_bucket(c), 2) for c in counts]


@given(
    signal=signals,
    count=st.none() | st.integers(1, MAX_ATTEMPT_COUNT),
    others=st.lists(arg_shapes.map(lambda a: a.model_copy(update={"name": ArgName.other}))),
)
def test_upgrade_keeps_every_shared_field_and_validates_as_v2(
    signal: FrictionSignal, count: int | None, others: list[ArgShape]
) -> None:
    """Every shared field is kept, but v1's ``other`` shapes (one per undeclared key, any type
    and size, ``others`` more of them here): they become v2's one, after the declared ones."""
    doc = signal.model_dump(mode="json")
    del doc["attempts"]
    v1_args = [*signal.args, *others][:MAX_ARGS]
    doc.update(
        schema_version=1, attempt_count=count, args=[a.model_dump(mode="json") for a in v1_args]
    )
    old = FrictionSignalV1.model_validate_json(json.dumps(doc))
    new = upgrade(old)
    assert new.attempts is attempts_bucket(count) and new.schema_version == 2
    declared = [a for a in v1_args if a.name is not ArgName.other]
    undeclared = len(v1_args) - len(declared)
    folded = [ArgShape(name=ArgName.other, type=ArgType.object, size=size_bucket(undeclared))]
    assert list(new.args) == declared + (folded if undeclared else [])
    for name in FrictionSignal.model_fields:
        if name not in ("schema_version", "attempts", "args"):
            assert getattr(new, name) == getattr(signal, name), name
    # The constructed model is a valid v2 signal: the same after a round trip through JSON.
    assert FrictionSignal.model_validate_json(new.model_dump_json()) == new
