"""The retention promise, end to end: a real collector deletes every signal older than its window
(default 90 days) at start and on its schedule; what is deleted is gone from the read API, the
exports and the database. Signals carry no identifier, so this window is the only deletion there
is (docs/privacy.md)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import httpx
import pytest
from pydantic import SecretStr

from collector.settings import CollectorSettings, StewardToken
from tests._servers import HANG_S, running_collector, wait_until
from tests.factories import BARE, signal_json

TOKEN = "retention-audit-token-not-a-secret"
D0 = dt.date(2026, 11, 30)
STEWARD = "retention-audit-steward-token-not-a-secret"
#: Counting and exporting raw rows is the steward's (docs/privacy.md).
TEAM = {"authorization": f"Bearer {STEWARD}"}


def _signal(day: dt.date) -> dict[str, object]:
    return signal_json(
        **BARE, day=day, error_class="not_found", client={"version": "0.1.0", "platform": "linux"}
    )


def _settings(path: Path, **extra: object) -> CollectorSettings:
    return CollectorSettings(
        db_path=path,
        read_tokens=[SecretStr(TOKEN)],
        steward_tokens=[StewardToken(label="retention-audit", token=SecretStr(STEWARD))],
        rate_limit_enabled=False,
        **extra,  # type: ignore[arg-type]
    )


def _count(base: str) -> int:
    with httpx.Client(base_url=base, trust_env=False, timeout=HANG_S) as http:
        return int(http.get("/v1/signals/count", headers=TEAM).json()["count"])


@pytest.mark.slow  # three collector starts on one file
def test_default_window_is_90_days_and_applies_soon_after_start(tmp_path: Path) -> None:
    path = tmp_path / "r.duckdb"
    settings = _settings(path)
    assert settings.retention_days == 90
    kept = _signal(D0)
    with running_collector(settings, today=lambda: D0) as base:
        with httpx.Client(base_url=base, trust_env=False, timeout=HANG_S) as http:
            response = http.post("/v1/signals", json={"signals": [kept]})
            assert response.is_success, response.text
        assert _count(base) == 1
    with running_collector(settings, today=lambda: D0 + dt.timedelta(days=90)) as base:
        assert _count(base) == 1, "a signal inside the window was deleted"
    with running_collector(settings, today=lambda: D0 + dt.timedelta(days=91)) as base:
        # The first run comes START_DELAY_S (collector.retention) after start: readiness
        # never queues behind it.
        wait_until(lambda: _count(base) == 0, what="the purge after a restart")
        with httpx.Client(base_url=base, trust_env=False, timeout=HANG_S) as http:
            csv = http.get("/v1/signals/export", params={"format": "csv"}, headers=TEAM)
        assert str(kept["signal_id"]).encode() not in csv.content
    con = duckdb.connect(str(path), read_only=True)
    try:
        rows = con.execute("SELECT count(*) FROM signals").fetchone()
    finally:
        con.close()
    assert rows == (0,)


def test_the_schedule_deletes_without_a_restart(tmp_path: Path) -> None:
    today = [D0]
    settings = _settings(tmp_path / "s.duckdb", retention_days=7, retention_interval_s=0.1)
    with running_collector(settings, today=lambda: today[0]) as base:
        with httpx.Client(base_url=base, trust_env=False, timeout=HANG_S) as http:
            # The oldest day the collector still counts: LATE_DAYS back.
            body = {"signals": [_signal(D0), _signal(D0 - dt.timedelta(days=2))]}
            assert http.post("/v1/signals", json=body).is_success
        assert _count(base) == 2
        today[0] = D0 + dt.timedelta(days=6)  # the older one (D0-2) is now 8 days old
        wait_until(lambda: _count(base) == 1, what="the scheduled purge of the expired signal")
        today[0] = D0 + dt.timedelta(days=8)
        wait_until(lambda: _count(base) == 0, what="the next scheduled purge")
