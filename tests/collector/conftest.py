"""Fixtures for the collector tests: signals, settings on a temporary DuckDB file, servers."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import httpx
import pytest
from hypothesis import strategies as st
from pydantic import SecretStr

from collector.settings import CollectorSettings
from contract.schema import (
    MAX_ARGS,
    RING_SIZE,
    AppState,
    ArgName,
    ArgShape,
    ArgType,
    ClientInfo,
    ErrorCategory,
    ErrorClass,
    FrictionSignal,
    FrictionType,
    IntentCategory,
    Outcome,
    Platform,
    RingEntry,
    SizeBucket,
    ToolName,
)
from tests._servers import running_collector

READ_TOKEN = "test-read-token-not-a-secret"
# The real UTC day: a running collector refuses days outside [today - retention, today + 1].
TODAY = dt.datetime.now(dt.UTC).date()


def make_signal(**overrides: Any) -> FrictionSignal:
    fields: dict[str, Any] = {
        "schema_version": 1,
        "signal_id": uuid.uuid4(),
        "day": TODAY,
        "friction_type": FrictionType.cannot_complete,
        "error_category": ErrorCategory.timeout,
        "intent_category": IntentCategory.manage_note,
        "tool_attempted": ToolName.read_note,
        "attempt_count": 2,
        "error_class": ErrorClass.timeout,
        "args": (ArgShape(name=ArgName.note_name, type=ArgType.string, size=SizeBucket.up_to_16),),
        "ring": (
            RingEntry(tool=ToolName.list_notes, outcome=Outcome.ok),
            RingEntry(tool=ToolName.create_note, outcome=Outcome.preview),
            RingEntry(tool=ToolName.read_note, outcome=Outcome.failed),
        ),
        "app": AppState(installed=True, running=False, permitted=None),
        "client": ClientInfo(version="1.2.3", platform=Platform.macos),
    }
    fields.update(overrides)
    return FrictionSignal(**fields)


def signal_json(signal: FrictionSignal) -> dict[str, Any]:
    return signal.model_dump(mode="json")


def batch_body(signals: list[FrictionSignal] | list[dict[str, Any]]) -> bytes:
    import json

    items = [s if isinstance(s, dict) else signal_json(s) for s in signals]
    return json.dumps({"signals": items}).encode()


def _opt(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | strategy


ring_entries = st.builds(
    RingEntry, tool=st.sampled_from(ToolName), outcome=st.sampled_from(Outcome)
)

signals = st.builds(
    FrictionSignal,
    schema_version=st.just(1),
    signal_id=st.uuids(version=4),
    day=st.dates(dt.date(2020, 1, 1), dt.date(2030, 12, 31)),
    friction_type=st.sampled_from(FrictionType),
    error_category=_opt(st.sampled_from(ErrorCategory)),
    intent_category=_opt(st.sampled_from(IntentCategory)),
    tool_attempted=st.sampled_from(ToolName),
    attempt_count=_opt(st.integers(1, 100)),
    error_class=st.sampled_from(ErrorClass),
    args=st.lists(
        st.builds(
            ArgShape,
            name=st.sampled_from(ArgName),
            type=st.sampled_from(ArgType),
            size=_opt(st.sampled_from(SizeBucket)),
        ),
        max_size=min(MAX_ARGS, 4),
    ).map(tuple),
    ring=st.lists(ring_entries, max_size=RING_SIZE).map(tuple),
    app=st.builds(
        AppState,
        installed=_opt(st.booleans()),
        running=_opt(st.booleans()),
        permitted=_opt(st.booleans()),
    ),
    client=st.builds(
        ClientInfo,
        version=st.tuples(st.integers(0, 999), st.integers(0, 999), st.integers(0, 9999)).map(
            lambda t: f"{t[0]}.{t[1]}.{t[2]}"
        ),
        platform=st.sampled_from(Platform),
    ),
)


@pytest.fixture
def settings(tmp_path: Path) -> CollectorSettings:
    return CollectorSettings(
        db_path=tmp_path / "signals.duckdb",
        read_tokens=[SecretStr(READ_TOKEN)],
        rate_limit_enabled=False,
    )


@pytest.fixture
def collector_url(settings: CollectorSettings) -> Iterator[str]:
    with running_collector(settings) as url:
        yield url


@pytest.fixture
def http(collector_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=collector_url, trust_env=False, timeout=10) as client:
        yield client


def auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {READ_TOKEN}"}


def read_rows(db_path: Path, sql: str = "SELECT * FROM signals") -> list[dict[str, Any]]:
    """Rows of the (closed) collector database, as dicts."""
    with duckdb.connect(str(db_path), read_only=True) as con:
        cur = con.execute(sql)
        names = [d[0] for d in cur.description or []]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def expected_row(signal: FrictionSignal) -> dict[str, Any]:
    """What the signals table must hold for ``signal`` (received_day aside)."""
    ring = signal.ring
    major, minor, patch = (int(p) for p in signal.client.version.split("."))

    def val(x: Any) -> Any:
        return None if x is None else str(x)

    return {
        "signal_id": signal.signal_id,
        "schema_version": signal.schema_version,
        "day": signal.day,
        "friction_type": str(signal.friction_type),
        "error_category": val(signal.error_category),
        "intent_category": val(signal.intent_category),
        "tool_attempted": str(signal.tool_attempted),
        "attempt_count": signal.attempt_count,
        "error_class": str(signal.error_class),
        "args": [
            {"name": str(a.name), "type": str(a.type), "size": val(a.size)} for a in signal.args
        ],
        "ring": [{"tool": str(e.tool), "outcome": str(e.outcome)} for e in ring],
        "prev1_tool": str(ring[-2].tool) if len(ring) >= 2 else None,
        "prev1_outcome": str(ring[-2].outcome) if len(ring) >= 2 else None,
        "prev2_tool": str(ring[-3].tool) if len(ring) >= 3 else None,
        "prev2_outcome": str(ring[-3].outcome) if len(ring) >= 3 else None,
        "app_installed": signal.app.installed,
        "app_running": signal.app.running,
        "app_permitted": signal.app.permitted,
        "client_version_major": major,
        "client_version_minor": minor,
        "client_version_patch": patch,
        "client_platform": str(signal.client.platform),
    }


def assert_problem(
    response: httpx.Response, status: int, code: str | None = None
) -> dict[str, Any]:
    """The one error shape (RFC 9457) with a stable code."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    assert isinstance(body["code"], str) and body["code"]
    assert body["type"].endswith("/" + body["code"])
    assert isinstance(body["title"], str) and isinstance(body["detail"], str)
    assert "set-cookie" not in response.headers
    if code is not None:
        assert body["code"] == code, body
    return body


SignalFactory = Callable[..., FrictionSignal]
