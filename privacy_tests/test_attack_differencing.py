"""Attack: subtract two overlapping periods (or ask again) to learn one signal.

Before: asking for [S, D] and for [S, D-1] and subtracting recovered a single signal's intent,
attempts, app state and argument shape, each answer alone respecting k. Now every published
figure is a sum of stored released cells of whole periods: a period is widened to whole weeks,
so two periods that differ by a day inside one week give the same answer (the day cannot be
isolated), every listed figure is the stored sum, and the same question asked twice returns the
same numbers. The open period is not published at all.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from collector.releases.store import read_cells, release_closed_periods
from collector.settings import CollectorSettings
from contract.accountant import ReleasePlan
from privacy_tests._release_world import D0, fleet_day, one_signal, write_days
from tests._servers import HANG_S, running_collector

TEAM = "team-token-for-the-differencing-attack"
AUTH = {"Authorization": f"Bearer {TEAM}"}
DAYS = [D0 + dt.timedelta(days=i) for i in range(5)]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    db = tmp_path_factory.mktemp("differencing") / "signals.duckdb"
    # The target: one signal on the last day, in a cell of its own.
    target = one_signal(DAYS[-1], "recipe_import", "conflict", "task_abandoned", "linux")
    write_days(db, [(d, fleet_day(d, 3_000, seed=i)) for i, d in enumerate(DAYS[:-1])])
    write_days(db, [(DAYS[-1], [*fleet_day(DAYS[-1], 3_000, seed=9), target])])
    import duckdb

    with duckdb.connect(str(db)) as con:  # the release job, once the week is closed
        closed = DAYS[-1] + dt.timedelta(days=10)
        release_closed_periods(con, closed, ReleasePlan(), retention_days=36500, backfill_days=20)
    settings = CollectorSettings(
        db_path=db, read_tokens=[SecretStr(TEAM)], retention_days=36500, rate_limit_enabled=False
    )
    with running_collector(settings) as url:
        yield url, db


def _top(url: str, start: dt.date, end: dt.date) -> dict[tuple[str, str, str], int]:
    params = {"start": start.isoformat(), "end": end.isoformat(), "limit": "1000"}
    body = httpx.get(f"{url}/v1/triage/top", params=params, headers=AUTH, timeout=HANG_S).json()
    return {(r["tool"], r["error_class"], r["friction_type"]): r["n"] for r in body["rows"]}


def test_two_overlapping_periods_subtract_to_released_cells_only(
    world: tuple[str, Path],
) -> None:
    url, db = world
    whole = _top(url, DAYS[0], DAYS[-1])
    but_last = _top(url, DAYS[0], DAYS[-2])
    assert whole, "the fleet's common failures are released (not vacuous)"
    # Both periods are the same released week: their difference is zero, not the last day.
    assert whole == but_last


def test_every_period_figure_is_a_sum_of_stored_cells(world: tuple[str, Path]) -> None:
    url, db = world
    week = (DAYS[0], DAYS[0] + dt.timedelta(days=6))
    for start, end in [(DAYS[0], DAYS[-1]), (DAYS[1], DAYS[3]), (DAYS[2], DAYS[2])]:
        listed = _top(url, start, end)
        stored = _stored_sums(db, *week)
        assert listed and all(n == stored[key] for key, n in listed.items()), (start, end)


def test_asking_again_returns_identical_numbers(world: tuple[str, Path]) -> None:
    url, _ = world
    for question in ("top", "trends", "platforms", "apps", "intents", "regressions"):
        params = {"start": DAYS[0].isoformat(), "end": DAYS[-1].isoformat()}
        first = httpx.get(
            f"{url}/v1/triage/{question}", params=params, headers=AUTH, timeout=HANG_S
        ).json()
        again = httpx.get(
            f"{url}/v1/triage/{question}", params=params, headers=AUTH, timeout=HANG_S
        ).json()
        assert first == again, question


def test_the_open_day_is_not_published(world: tuple[str, Path]) -> None:
    """Today's signals (400 in one cell) do not show until their week is closed and released."""
    url, _ = world
    today = dt.datetime.now(dt.UTC).date()
    burst = [one_signal(today, "recipe_save", "conflict", "task_abandoned") for _ in range(480)]
    body = '{"signals": [' + ",".join(s.model_dump_json() for s in burst[:400]) + "]}"
    sent = httpx.post(
        f"{url}/v1/signals",
        content=body,
        headers={"content-type": "application/json"},
        timeout=HANG_S,
    )
    assert sent.status_code == 200, sent.text
    day = {"start": today.isoformat(), "end": today.isoformat()}
    body = httpx.get(f"{url}/v1/triage/top", params=day, headers=AUTH, timeout=HANG_S).json()
    assert body.get("rows", []) == [], body


def _stored_sums(db: Path, start: dt.date, end: dt.date) -> dict[tuple[str, str, str], int]:
    """What the collector stored for the friction cube, summed by (tool, class, type)."""
    import shutil
    import tempfile

    import duckdb

    with tempfile.TemporaryDirectory() as tmp:  # the live file is the server's: read a copy
        copy = Path(tmp) / "copy.duckdb"
        shutil.copy(db, copy)
        wal = db.with_name(db.name + ".wal")
        if wal.exists():
            shutil.copy(wal, copy.with_name(copy.name + ".wal"))
        with duckdb.connect(str(copy), read_only=True) as con:
            cells = read_cells(con, "friction", start, end)
    out: dict[tuple[str, str, str], int] = defaultdict(int)
    for cell in cells:
        out[(cell.key[0], cell.key[1], cell.key[2])] += cell.n
    return dict(out)
