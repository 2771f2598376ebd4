"""What an attacker sends to ``POST /v1/signals`` is refused by name and by count (a bounded
number of errors, never one per item), against a real server: bodies that amplify into many
errors, a day outside the accepted window, a missing or unknown ``schema_version``; health
answers while the attack goes on. How many milliseconds it costs is the benchmark's figure
(benchmarks/bench_hardening.py): a timed test on a shared machine measures the machine."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from collector.ingest import validate_batch
from collector.settings import CollectorSettings
from contract.limits import LATE_DAYS
from tests._servers import HANG_S, running_collector

MIB = 1024 * 1024


def _items_body(item: bytes, size: int) -> bytes:
    count = (size - 20) // (len(item) + 1)
    return b'{"signals":[' + b",".join([item] * count) + b"]}"


def _signal(day: dt.date) -> dict[str, object]:
    return {
        "schema_version": 1,
        "signal_id": str(uuid.uuid4()),
        "day": day.isoformat(),
        "friction_type": "other",
        "tool_attempted": "read_file",
        "error_class": "timeout",
        "client": {"version": "1.0.0", "platform": "linux"},
    }


@pytest.fixture
def http(tmp_path: Path) -> Iterator[httpx.Client]:
    settings = CollectorSettings(db_path=tmp_path / "s.duckdb", rate_limit_enabled=False)
    with running_collector(settings) as url:
        with httpx.Client(base_url=url, trust_env=False, timeout=HANG_S) as client:
            yield client


def _post(http: httpx.Client, body: bytes, **headers: str) -> httpx.Response:
    return http.post(
        "/v1/signals", content=body, headers={"Content-Type": "application/json", **headers}
    )


@pytest.mark.slow
def test_a_mib_of_empty_objects_is_refused_by_its_count(http: httpx.Client) -> None:
    response = _post(http, _items_body(b"{}", MIB - 64))
    assert response.status_code == 413  # refused by its item count, before any validation
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["code"] == "too_many_signals"


@pytest.mark.slow
def test_a_gzip_of_4_mib_of_empty_objects_is_refused_by_its_count(http: httpx.Client) -> None:
    plain = _items_body(b"{}", 4 * MIB - 64)
    response = _post(http, gzip.compress(plain), **{"Content-Encoding": "gzip"})
    assert response.status_code == 413
    assert response.json()["code"] == "too_many_signals"


@pytest.mark.slow
def test_errors_are_capped_for_bodies_inside_every_bound(http: httpx.Client) -> None:
    # Inside every structural bound: 20,000 empty objects, then one signal whose args hold
    # thousands of empty objects. Each used to yield one error per item.
    for body in (
        _items_body(b"{}", 40_000),
        b'{"signals":[{"args":[' + b",".join([b"{}"] * 20_000) + b"]}]}",
    ):
        response = _post(http, body)
        assert response.status_code == 422, response.text
        problem = response.json()
        assert problem["error_count"] <= 20


def test_unknown_keys_are_refused_by_count() -> None:
    body = b'{"signals":[{' + b",".join([b'"k":0'] * 60_000) + b"}]}"
    from service.errors import ProblemError

    with pytest.raises(ProblemError) as caught:
        validate_batch(body)
    assert caught.value.status == 422
    assert len(caught.value.errors or []) <= 20


def test_a_valid_full_batch_still_passes_the_guard() -> None:
    # The byte-count guard must never refuse a valid batch at its limits, pretty-printed.
    today = dt.datetime.now(dt.UTC).date()
    signal = _signal(today)
    signal["args"] = [{"name": "path", "type": "string", "size": "1-16"}] * 32
    signal["ring"] = [{"tool": "read_file", "outcome": "ok"}] * 10
    signal["app"] = {"installed": True, "running": True, "permitted": True}
    signal.update(error_category="timeout", intent_category="read_file", attempt_count=3)
    signals = [dict(signal, signal_id=str(uuid.uuid4())) for _ in range(500)]
    body = json.dumps({"signals": signals}, indent=2).encode()
    assert len(validate_batch(body).signals) == 500


@pytest.mark.slow
def test_a_day_outside_the_window_is_refused_at_ingest(http: httpx.Client) -> None:
    today = dt.datetime.now(dt.UTC).date()
    # The window: LATE_DAYS back (a later day's period is released) to tomorrow (clock skew).
    late = today - dt.timedelta(LATE_DAYS + 1)
    refused = (dt.date(9999, 12, 31), today + dt.timedelta(days=2), late)
    for day in refused:
        response = _post(http, json.dumps({"signals": [_signal(day)]}).encode())
        assert response.status_code == 422
        problem = response.json()
        assert problem["code"] == "day_out_of_window"
        assert problem["errors"][0] == {
            "pointer": "/signals/0/day",
            "rule": "day_window",
            "detail": "day is outside the accepted window",
        }
        assert day.isoformat() not in response.text
    for day in (today + dt.timedelta(days=1), today - dt.timedelta(days=LATE_DAYS)):
        response = _post(http, json.dumps({"signals": [_signal(day)]}).encode())
        assert response.status_code == 200, response.text


def test_a_missing_schema_version_is_called_missing() -> None:
    from service.errors import ProblemError

    signal = _signal(dt.datetime.now(dt.UTC).date())
    del signal["schema_version"]
    with pytest.raises(ProblemError) as caught:
        validate_batch(json.dumps({"signals": [signal]}).encode())
    assert caught.value.code == "missing_schema_version"
    signal["schema_version"] = 7
    with pytest.raises(ProblemError) as caught:
        validate_batch(json.dumps({"signals": [signal]}).encode())
    assert caught.value.code == "unsupported_schema_version"


@pytest.mark.slow
def test_health_answers_while_20_attacking_bodies_arrive(
    http: httpx.Client,
) -> None:
    import threading

    body = _items_body(b"{}", MIB - 64)
    statuses: list[int] = []

    def attacker() -> None:
        with httpx.Client(base_url=str(http.base_url), trust_env=False, timeout=HANG_S) as client:
            for _ in range(3):
                response = client.post(
                    "/v1/signals", content=body, headers={"Content-Type": "application/json"}
                )
                statuses.append(response.status_code)

    threads = [threading.Thread(target=attacker) for _ in range(20)]
    for thread in threads:
        thread.start()
    # Health answers while the bodies arrive (how fast: the benchmark's health p99).
    while any(thread.is_alive() for thread in threads):
        assert http.get("/healthz").status_code == 200
        time.sleep(0.02)
    for thread in threads:
        thread.join()
    assert statuses == [413] * 60
