"""Hand-built datasets for the triage tests, written through the collector's real write path.

``signal(...)`` builds a FrictionSignal from a few keywords (with ``tests/factories.py``);
``write_signals`` applies the collector's migrations and writes through the collector's own
flush (``flush_rows``), so prev1/prev2 are derived exactly as at ingest.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import duckdb
import pytest

from collector.db import migrate
from collector.store import flush_rows
from contract.schema import FrictionSignal, attempts_bucket
from tests._synth import SYNTH_END, SYNTH_TODAY
from tests.factories import make_signal

__all__ = ["SYNTH_END", "SYNTH_TODAY"]

D0 = dt.date(2026, 3, 2)  # a Monday: days 1-7, 8-14, ... are the UTC weeks of the weekly cubes


def day(n: int) -> dt.date:
    """Day ``n`` of the test calendar (day 1 is Monday 2026-03-02)."""
    return D0 + dt.timedelta(days=n - 1)


def signal(
    when: dt.date = D0,
    *,
    tool: str = "read_note",
    error_class: str = "not_found",
    friction: str = "cannot_complete",
    platform: str = "macos",
    version: str = "1.0.0",
    ring: Sequence[tuple[str, str]] = (),
    args: Sequence[tuple[str, str, str | None]] = (),
    app: tuple[bool | None, bool | None, bool | None] = (None, None, None),
    intent: str | None = None,
    attempts: int | None = None,
) -> FrictionSignal:
    """A signal in the triage tests' shorthand (wire spellings), built by the one factory."""
    return make_signal(
        day=when,
        friction_type=friction,
        error_category=None,
        intent_category=intent,
        tool_attempted=tool,
        attempts=attempts_bucket(attempts),
        error_class=error_class,
        args=tuple({"name": n, "type": t, "size": s} for n, t, s in args),
        ring=tuple({"tool": t, "outcome": o} for t, o in ring),
        app={"installed": app[0], "running": app[1], "permitted": app[2]},
        client={"version": version, "platform": platform},
    )


def many(count: int, **kwargs: object) -> list[FrictionSignal]:
    return [signal(**kwargs) for _ in range(count)]  # type: ignore[arg-type]


def write_signals(con: duckdb.DuckDBPyConnection, signals: Sequence[FrictionSignal]) -> None:
    migrate(con)
    if not signals:
        return
    flush_rows(con, [signals], max(s.day for s in signals))


@pytest.fixture
def make_db(
    tmp_path: Path,
) -> Iterator[Callable[[Sequence[FrictionSignal]], duckdb.DuckDBPyConnection]]:
    """Write the signals to a fresh DuckDB file and open it read-only, as the CLI does."""
    opened: list[duckdb.DuckDBPyConnection] = []

    def make(signals: Sequence[FrictionSignal]) -> duckdb.DuckDBPyConnection:
        path = tmp_path / f"signals-{len(opened)}.duckdb"
        con = duckdb.connect(str(path))
        write_signals(con, signals)
        con.close()
        ro = duckdb.connect(str(path), read_only=True)
        opened.append(ro)
        return ro

    yield make
    for con in opened:
        con.close()


TEAM_TOKEN = "test-team-token-not-a-real-secret"
STEWARD_TOKEN = "test-steward-token-not-a-real-secret"


@pytest.fixture(scope="module")
def collector_url(tmp_path_factory: pytest.TempPathFactory, synth_path: Path) -> Iterator[str]:
    """A real collector (uvicorn on loopback) over a copy of the synthetic file."""
    import shutil

    from pydantic import SecretStr

    from collector.settings import CollectorSettings, StewardToken
    from tests._servers import running_collector

    db_path = tmp_path_factory.mktemp("collector") / "signals.duckdb"
    shutil.copy(synth_path, db_path)
    settings = CollectorSettings(
        db_path=db_path,
        read_tokens=[SecretStr(TEAM_TOKEN)],
        steward_tokens=[StewardToken(label="test-steward", token=SecretStr(STEWARD_TOKEN))],
        retention_days=36500,
        rate_limit_enabled=False,
    )
    with running_collector(settings) as url:
        yield url


@pytest.fixture(scope="session")
def headline_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The released headline dataset (``tests/analysis/_headline.py``): true headline figures
    that differ from what a capped query shows. Built once: only the browser tests use it."""
    from tests.analysis._headline import build_headline

    return build_headline(tmp_path_factory.mktemp("headline") / "headline.duckdb")


@pytest.fixture(scope="module")
def headline_url(tmp_path_factory: pytest.TempPathFactory, headline_path: Path) -> Iterator[str]:
    """A real collector over a copy of the released headline dataset."""
    import shutil

    from pydantic import SecretStr

    from collector.settings import CollectorSettings
    from tests._servers import running_collector

    db_path = tmp_path_factory.mktemp("headline-collector") / "signals.duckdb"
    shutil.copy(headline_path, db_path)
    settings = CollectorSettings(
        db_path=db_path,
        read_tokens=[SecretStr(TEAM_TOKEN)],
        retention_days=36500,
        rate_limit_enabled=False,
    )
    with running_collector(settings) as url:
        yield url
