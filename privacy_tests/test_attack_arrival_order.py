"""Attack: read arrival order (and so arrival time) out of what is stored or traced.

Before: DuckDB's row order was arrival order, and with tracing on each ingest span paired one to
one with a stored row, giving a "day-only" signal a microsecond timestamp; adjacent rows with
overlapping rings linked one session's signals. Now the retention job rewrites every closed day
once in ``signal_id`` order (a random UUID4), ingestion has no per-request span, and no stored
column is finer than a UTC day.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid
from pathlib import Path

import duckdb
import httpx
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import SecretStr

from collector.db import migrate, signals_database
from collector.retention import RetentionJob
from collector.settings import CollectorSettings
from collector.store import flush_rows
from collector.telemetry import Telemetry
from contract.days import utc_today
from privacy_tests._release_world import D0, one_signal
from tests._servers import HANG_S, running_collector

ARRIVALS = 3_000


def _spearman(order: list[uuid.UUID], arrival: dict[uuid.UUID, int]) -> float:
    n = len(order)
    d2 = sum((pos - arrival[sid]) ** 2 for pos, sid in enumerate(order))
    return 1 - 6 * d2 / (n * (n * n - 1))


def _stored(db: Path) -> tuple[list[uuid.UUID], list[uuid.UUID]]:
    with duckdb.connect(str(db), read_only=True) as con:
        plain = [r[0] for r in con.execute("SELECT signal_id FROM signals").fetchall()]
        by_rowid = [
            r[0] for r in con.execute("SELECT signal_id FROM signals ORDER BY rowid").fetchall()
        ]
    return plain, by_rowid


def test_stored_order_of_a_closed_day_is_independent_of_arrival(tmp_path: Path) -> None:
    db = tmp_path / "signals.duckdb"
    arrived = [one_signal(D0, "read_note", "not_found") for _ in range(ARRIVALS)]
    with duckdb.connect(str(db)) as con:
        migrate(con)
        for start in range(0, ARRIVALS, 10):  # one small flush after another, as requests come
            flush_rows(con, [arrived[start : start + 10]], D0)
    arrival = {s.signal_id: i for i, s in enumerate(arrived)}
    plain, by_rowid = _stored(db)
    assert _spearman(plain, arrival) > 0.99, "before the job the file keeps arrival order"

    # The collector's real retention job, on the day after: D0 is closed.
    database = signals_database(db)
    database.open()
    try:
        job = RetentionJob(
            database,
            Telemetry.from_settings(CollectorSettings(db_path=db)),
            retention_days=36500,
            interval_s=3600,
            today=lambda: D0 + dt.timedelta(days=1),
            backfill_days=0,  # the reordering alone: no period to release
        )
        asyncio.run(job.run_once())
        asyncio.run(job.run_once())  # idempotent: each day is rewritten once
    finally:
        database.close()
    plain, by_rowid = _stored(db)
    assert sorted(plain) == sorted(arrival), "no row lost or added"
    for order in (plain, by_rowid):
        assert abs(_spearman(order, arrival)) < 0.1
        assert order == sorted(order, key=lambda u: u.bytes) or order == sorted(order)
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM reordered_days").fetchone() == (1,)


def test_ingestion_has_no_per_request_span(tmp_path: Path) -> None:
    spans = InMemorySpanExporter()
    settings = CollectorSettings(
        db_path=tmp_path / "signals.duckdb",
        read_tokens=[SecretStr("team-token-for-the-order-attack")],
        rate_limit_enabled=False,
    )
    with (
        running_collector(settings, span_exporter=spans) as url,
        httpx.Client(base_url=url, timeout=HANG_S) as h,
    ):
        for _ in range(5):
            body = '{"signals": [' + one_signal(utc_today()).model_dump_json() + "]}"
            r = h.post("/v1/signals", content=body, headers={"content-type": "application/json"})
            assert r.status_code == 200
        assert h.get("/healthz").status_code == 200
    names = [s.name for s in spans.get_finished_spans()]
    assert "GET /healthz" in names, "tracing is on (not vacuous)"
    assert not [n for n in names if "/v1/signals" in n or n == "POST"], names


def test_nothing_finer_than_a_day_is_stored_for_a_signal(tmp_path: Path) -> None:
    with duckdb.connect(str(tmp_path / "m.duckdb")) as con:
        migrate(con)
        rows = con.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_name IN ('signals', 'release_days', 'release_cells', "
            "'reordered_days', 'steward_audit')"
        ).fetchall()
    assert {r[0] for r in rows} >= {"signals", "release_cells", "steward_audit"}
    for table, column, data_type in rows:
        assert not any(t in str(data_type) for t in ("TIME", "INTERVAL")), (table, column)
        if str(data_type) == "DATE":
            assert column in ("day", "received_day", "read_day"), (table, column)
    signal_columns = [r[1] for r in rows if r[0] == "signals"]
    assert "rowid" not in signal_columns and not any("seq" in c for c in signal_columns)
