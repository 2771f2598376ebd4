"""The lake's release job (``lmcp lake release``) sends the file mode's alerts: against a real
HTTP receiver on loopback, a newly released week's document is POSTed once, computed from the
lake's released cells; a later run that releases nothing sends nothing; a failing webhook is
reported without its URL and never fails the job."""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analysis.alerts import DOCUMENT_KIND, released_alerts
from collector.lake.jobs import compact
from collector.lake.releases import ReleaseResult, connect, released_pairs
from collector.lake.store import LakeStore, lake_rows
from collector.rows import rows_from_models
from lmcp.cli import app
from tests._servers import serving_stub
from tests.analysis.conftest import signal

pytestmark = pytest.mark.slow  # real releases (noise on every cell of every cube)

WEEK = dt.date(2026, 3, 16)  # a Monday
TODAY = dt.date(2026, 3, 25)  # the week of WEEK closed two days after its Sunday
WINDOW = 15  # reaches WEEK: its week and the days since 2026-03-10
SECRET_PATH = "/hooks/lmcp-secret-path"


@dataclass
class Receiver:
    url: str = ""
    status: int = 200
    bodies: list[bytes] = field(default_factory=list)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A real HTTP server on a loopback port, recording each POST's body."""
    state = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            state.bodies.append(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            self.send_response(state.status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    with serving_stub(Handler) as base:
        state.url = base + SECRET_PATH
        yield state


@pytest.fixture
def lake(tmp_path: Path) -> LakeStore:
    """3,000 signals of one friction over the week of WEEK, each received on its day,
    compacted: ready to release."""
    store = LakeStore(str(tmp_path / "lake"))
    for i in range(7):
        day = WEEK + dt.timedelta(days=i)
        batch = [signal(day) for _ in range(3000 // 7 + 1)]
        store.append(lake_rows(rows_from_models(batch), day))
    compact(store, TODAY)
    return store


def _release(store: LakeStore, url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("LMCP_COLLECTOR_ALERT_WEBHOOK_URL", url)
    monkeypatch.setenv("LMCP_COLLECTOR_RELEASE_BACKFILL_DAYS", str(WINDOW))
    args = ["lake", "release", "--lake", store.uri, "--today", str(TODAY), "--days", str(WINDOW)]
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output
    return out.output


def _stored_document(store: LakeStore) -> dict[str, object] | None:
    con = connect(store)
    try:
        report = released_alerts(con)
        return None if report is None else report.to_json()
    finally:
        con.close()


def test_a_lake_release_posts_the_new_week_once(
    lake: LakeStore, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _release(lake, receiver.url, monkeypatch)
    assert f"{WEEK}: released the week and the day" in first
    assert "alerts: sent to the webhook" in first
    assert len(receiver.bodies) == 1
    doc = json.loads(receiver.bodies[0])
    assert doc == _stored_document(lake), "the document of the lake's stored releases"
    assert doc["kind"] == DOCUMENT_KIND
    assert doc["period"] == {"start": WEEK.isoformat(), "end": "2026-03-22"}
    new = [a for a in doc["alerts"] if a["kind"] == "new_friction"]
    assert [(a["tool"], a["error_class"], a["friction_type"]) for a in new] == [
        ("read_note", "not_found", "cannot_complete")
    ]
    assert "*New friction*: `read_note`" in doc["text"]
    assert receiver.url not in first and SECRET_PATH not in first

    again = _release(lake, receiver.url, monkeypatch)
    assert "released 0 period(s)" in again and "alerts: none to send" in again
    assert len(receiver.bodies) == 1, "a week is alerted once"


def test_a_failing_webhook_never_fails_the_lake_job(
    lake: LakeStore,
    receiver: Receiver,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    receiver.status = 500
    with caplog.at_level(logging.WARNING, logger="collector"):
        out = _release(lake, receiver.url, monkeypatch)
    assert "alerts: not delivered" in out
    assert len(receiver.bodies) == 3, "three attempts, then given up"
    assert _stored_document(lake) is not None, "the releases are committed all the same"
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "alert webhook failed" in logged
    for secret in (SECRET_PATH, "127.0.0.1", "read_note"):
        assert secret not in logged and secret not in out


def test_only_this_runs_commits_are_alerted() -> None:
    results = [
        ReleaseResult(WEEK, "released", 10, ("friction", "daily")),
        ReleaseResult(WEEK + dt.timedelta(days=1), "taken", 0, ("daily",)),
    ]
    assert released_pairs(results) == [("friction", WEEK), ("daily", WEEK)]
    assert released_pairs(results[1:]) == []
