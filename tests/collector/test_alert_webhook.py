"""The release job's alert webhook, against a real HTTP receiver on loopback and the job on a
real DuckDB file: a released week's alerts are POSTed once; a webhook answering 500 or not
listening is logged (without its URL) and never breaks the job."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import duckdb
import pytest

from analysis.alerts import DOCUMENT_KIND, on_release, released_alerts
from collector.db import migrate, signals_database
from collector.retention import RetentionJob
from collector.settings import CollectorSettings
from collector.store import flush_rows
from collector.telemetry import Telemetry
from collector.webhook import Webhook
from contract.accountant import ReleasePlan
from tests.analysis.conftest import signal

TODAY = dt.date(2026, 3, 25)  # a Wednesday: the week of 2026-03-16 closed on Monday
WEEK = dt.date(2026, 3, 16)
WINDOW = 15  # the job releases the week of 2026-03-16 and the days since 2026-03-10


@dataclass
class Receiver:
    url: str
    status: int = 200
    bodies: list[bytes] = field(default_factory=list)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A real HTTP server on a loopback port the OS picks, recording each POST's body."""
    state = Receiver("")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            state.bodies.append(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            self.send_response(state.status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/lmcp-secret-path"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _file(path: Path) -> Path:
    """3,000 signals of one friction in the week of 2026-03-16, nothing before."""
    con = duckdb.connect(str(path))
    migrate(con)
    batch = [signal(WEEK + dt.timedelta(days=i % 7)) for i in range(3000)]
    flush_rows(con, [batch], WEEK + dt.timedelta(days=6))
    con.close()
    return path


def _run(path: Path, url: str, runs: int = 1) -> RetentionJob:
    db = signals_database(path)
    db.open()
    telemetry = Telemetry.from_settings(CollectorSettings(db_path=path))
    hook = Webhook(url, on_release, timeout_s=10.0, backoff_s=0.01)
    job = RetentionJob(db, telemetry, retention_days=WINDOW, interval_s=3600.0,
                       today=lambda: TODAY, privacy=ReleasePlan(), backfill_days=WINDOW,
                       alerts=hook)  # fmt: skip
    try:
        for _ in range(runs):
            asyncio.run(job.run_once())
    finally:
        db.close()
        telemetry.shutdown()
    return job


def _released(path: Path) -> tuple[int, dict[str, object] | None]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        row = con.execute("SELECT count(*) FROM release_periods").fetchone()
        report = released_alerts(con)
        return (0 if row is None else int(row[0])), None if report is None else report.to_json()
    finally:
        con.close()


@pytest.mark.slow  # releases real periods (OpenDP noise on every cell of the domain)
def test_a_released_week_is_posted_once_from_released_figures(
    tmp_path: Path, receiver: Receiver
) -> None:
    path = _file(tmp_path / "signals.duckdb")
    job = _run(path, receiver.url, runs=2)
    assert job.runs == 2
    assert len(receiver.bodies) == 1, "the second run released nothing, so it sends nothing"
    doc = json.loads(receiver.bodies[0])
    periods, expected = _released(path)
    assert periods > 0
    assert doc == expected  # the document of the stored releases, nothing else
    assert doc["kind"] == DOCUMENT_KIND
    assert doc["period"] == {"start": WEEK.isoformat(), "end": "2026-03-22"}
    new = [a for a in doc["alerts"] if a["kind"] == "new_friction"]
    assert [(a["tool"], a["error_class"], a["friction_type"]) for a in new] == [
        ("read_note", "not_found", "cannot_complete")
    ]
    assert isinstance(doc["text"], str) and "*New friction*: `read_note`" in doc["text"]


@pytest.mark.slow
@pytest.mark.parametrize("failure", ["answers 500", "is down"])
def test_a_failing_webhook_never_breaks_the_release_job(
    tmp_path: Path, receiver: Receiver, failure: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = _file(tmp_path / "signals.duckdb")
    receiver.status = 500
    # A port nothing listens on: the fixture's own, after a receiver there has stopped.
    url = receiver.url if failure == "answers 500" else _closed_url()
    with caplog.at_level(logging.WARNING, logger="collector"):
        job = _run(path, url)
    assert job.runs == 1
    periods, expected = _released(path)
    assert periods > 0 and expected is not None and expected["alerts"]
    if failure == "answers 500":
        assert len(receiver.bodies) == 3, "three attempts, then given up"
    failed = [r.getMessage() for r in caplog.records if "alert webhook failed" in r.getMessage()]
    assert len(failed) == 1
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "lmcp-secret-path" not in logged and "127.0.0.1" not in logged
    assert "read_note" not in logged, "no body in the log"


def _closed_url() -> str:
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = server.server_address[1]
    server.server_close()
    return f"http://127.0.0.1:{port}/hooks/lmcp-secret-path"


def test_the_setting_takes_an_http_url_and_defaults_to_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert CollectorSettings().alert_webhook_url is None
    monkeypatch.setenv("LMCP_COLLECTOR_ALERT_WEBHOOK_URL", "https://hooks.example.test/T/B/x")
    assert str(CollectorSettings().alert_webhook_url) == "https://hooks.example.test/T/B/x"
    monkeypatch.setenv("LMCP_COLLECTOR_ALERT_WEBHOOK_URL", "ftp://example.test/x")
    with pytest.raises(ValueError):
        CollectorSettings()


@pytest.mark.slow  # a real collector, its release job and a real receiver
def test_a_running_collector_with_the_setting_posts_its_release(
    tmp_path: Path, receiver: Receiver
) -> None:
    from tests._servers import HANG_S, running_collector

    path = _file(tmp_path / "signals.duckdb")
    settings = CollectorSettings(
        db_path=path, alert_webhook_url=receiver.url, retention_days=WINDOW,
        release_backfill_days=WINDOW, rate_limit_enabled=False,
    )  # fmt: skip
    with running_collector(settings, today=lambda: TODAY):
        # The job's first run comes a few seconds after start; only a hang bounds the wait.
        waited = 0.0
        while not receiver.bodies and waited < HANG_S:
            time.sleep(0.1)
            waited += 0.1
    assert len(receiver.bodies) == 1
    doc = json.loads(receiver.bodies[0])
    assert doc["kind"] == DOCUMENT_KIND and doc["period"]["start"] == WEEK.isoformat()
    assert doc == _released(path)[1]
