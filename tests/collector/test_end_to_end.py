"""End to end: the client's real sender -> a real uvicorn collector -> the DuckDB file."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import uuid

import httpx
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from client.sender import Delivery, Sender
from collector.settings import CollectorSettings
from contract.limits import LATE_DAYS
from contract.schema import FrictionSignal
from tests._servers import HANG_S, running_collector
from tests.collector.conftest import auth, expected_row, make_signal, read_rows, signals
from tests.factories import BARE
from tests.hypothesis_profiles import at_most


def test_sender_delivers_and_rows_match_field_by_field(settings: CollectorSettings) -> None:
    batch = [make_signal() for _ in range(3)] + [make_signal(**BARE)]
    with running_collector(settings) as url:
        sender = Sender(url)
        try:
            first = sender.send(batch)
            retried = sender.send(batch)  # a retry of the same batch stores nothing new
        finally:
            sender.close()
    assert first.status is Delivery.delivered and first.http_status == 200
    assert retried.status is Delivery.delivered
    rows = {r["signal_id"]: r for r in read_rows(settings.db_path)}
    assert len(rows) == len(batch)
    today = dt.datetime.now(dt.UTC).date()
    for signal in batch:
        row = dict(rows[signal.signal_id])
        assert row.pop("received_day") in {today, today - dt.timedelta(days=1)}
        assert row == expected_row(signal)


@pytest.mark.slow
# Each example is a real HTTP round trip through a running collector: five are enough.
@settings(max_examples=at_most(5), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(signals, min_size=1, max_size=40, unique_by=lambda s: s.signal_id))
def test_arbitrary_valid_signals_survive_the_trip(
    settings: CollectorSettings, batch: list[FrictionSignal]
) -> None:
    fresh = settings.model_copy(
        update={"db_path": settings.db_path.with_name(f"{uuid.uuid4()}.duckdb")}
    )
    # The collector takes days whose release period is open only (LATE_DAYS back at most).
    today = dt.datetime.now(dt.UTC).date()
    batch = [
        s.model_copy(update={"day": today - dt.timedelta(days=s.day.toordinal() % (LATE_DAYS + 1))})
        for s in batch
    ]
    with running_collector(fresh) as url:
        sender = Sender(url)
        try:
            assert sender.send(batch).status is Delivery.delivered
        finally:
            sender.close()
    got = {
        r["signal_id"]: r
        for r in read_rows(fresh.db_path, "SELECT * EXCLUDE (received_day) FROM signals")
    }
    assert got == {s.signal_id: expected_row(s) for s in batch}


def test_export_parquet_and_csv(settings: CollectorSettings) -> None:
    batch = [make_signal() for _ in range(5)]
    with (
        running_collector(settings) as url,
        httpx.Client(base_url=url, headers=auth(), timeout=HANG_S) as http,
    ):
        sender = Sender(url)
        assert sender.send(batch).status is Delivery.delivered
        sender.close()
        parquet = http.get("/v1/signals/export", params={"format": "parquet"})
        text = http.get("/v1/signals/export", params={"format": "csv"})
        later = http.get(
            "/v1/signals/export",
            params={"format": "csv", "since": (dt.date.today() + dt.timedelta(days=2)).isoformat()},
        )
        count = http.get("/v1/signals/count").json()
    assert count == {"count": 5}
    assert parquet.headers["content-type"] == "application/vnd.apache.parquet"
    table = pq.read_table(io.BytesIO(parquet.content))
    assert sorted(table.column("signal_id").to_pylist()) == sorted(str(s.signal_id) for s in batch)
    assert table.column("ring").to_pylist()[0] == expected_row(batch[0])["ring"]
    assert text.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(text.text)))
    by_id = {r["signal_id"]: r for r in rows}
    want = expected_row(batch[0])
    got = by_id[str(batch[0].signal_id)]
    assert json.loads(got["ring"]) == want["ring"]
    assert got["tool_attempted"] == want["tool_attempted"]
    assert list(csv.DictReader(io.StringIO(later.text))) == []
