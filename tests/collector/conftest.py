"""Fixtures for the collector tests: settings on a temporary DuckDB file, servers, row checks.

Signals come from ``tests/factories.py`` (re-exported here for the collector tests).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import httpx
import pytest
from pydantic import SecretStr

from collector.settings import CollectorSettings, StewardToken
from contract.schema import FrictionSignal
from tests._servers import HANG_S, running_collector

# The signal factory lives in tests/factories.py; the collector tests import it from here too.
from tests.factories import TODAY as TODAY
from tests.factories import batch_body as batch_body
from tests.factories import make_signal as make_signal
from tests.factories import signal_json as signal_json
from tests.factories import signals as signals

READ_TOKEN = "test-read-token-not-a-secret"
#: Raw rows and exact counts are the steward role's (docs/privacy.md); these tests read them.
STEWARD_TOKEN = "test-steward-token-not-a-secret"


@pytest.fixture
def settings(tmp_path: Path) -> CollectorSettings:
    return CollectorSettings(
        db_path=tmp_path / "signals.duckdb",
        read_tokens=[SecretStr(READ_TOKEN)],
        steward_tokens=[StewardToken(label="tests", token=SecretStr(STEWARD_TOKEN))],
        rate_limit_enabled=False,
    )


@pytest.fixture
def collector_url(settings: CollectorSettings) -> Iterator[str]:
    with running_collector(settings) as url:
        yield url


@pytest.fixture
def http(collector_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=collector_url, trust_env=False, timeout=HANG_S) as client:
        yield client


@pytest.fixture(scope="module")
def refusing_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    """One collector for a module's refusal tests: a refused request stores nothing, so every
    such test can check ``count == 0`` on the same server (starting one costs more than the test).
    """
    settings = CollectorSettings(
        db_path=tmp_path_factory.mktemp("refusals") / "signals.duckdb",
        read_tokens=[SecretStr(READ_TOKEN)],
        steward_tokens=[StewardToken(label="tests", token=SecretStr(STEWARD_TOKEN))],
        rate_limit_enabled=False,
    )
    with (
        running_collector(settings) as url,
        httpx.Client(base_url=url, trust_env=False, timeout=HANG_S) as client,
    ):
        yield client


def auth() -> dict[str, str]:
    """The steward's header: the raw-row and exact-count routes are the steward's."""
    return {"Authorization": f"Bearer {STEWARD_TOKEN}"}


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
        "attempts": val(signal.attempts),
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
