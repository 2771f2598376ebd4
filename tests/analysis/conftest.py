"""Hand-built datasets for the triage tests, written through the collector's real write path.

``signal(...)`` builds a FrictionSignal from a few keywords; ``write_signals`` applies the
collector's migrations and writes through the collector's own flush (``flush_rows``), so
prev1/prev2 are derived exactly as at ingest.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import duckdb
import pytest

from collector.db import apply_migrations
from collector.writer import flush_rows
from contract.schema import (
    AppState,
    ArgShape,
    ClientInfo,
    FrictionSignal,
    RingEntry,
    attempts_bucket,
)

D0 = dt.date(2026, 3, 1)


def day(n: int) -> dt.date:
    """Day ``n`` of the test calendar (day 1 is 2026-03-01)."""
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
    return FrictionSignal.model_validate(
        {
            "schema_version": 2,
            "signal_id": uuid.uuid4(),
            "day": when,
            "friction_type": friction,
            "intent_category": intent,
            "tool_attempted": tool,
            "attempts": attempts_bucket(attempts),
            "error_class": error_class,
            "args": tuple(
                ArgShape.model_validate({"name": n, "type": t, "size": s}, strict=False)
                for n, t, s in args
            ),
            "ring": tuple(
                RingEntry.model_validate({"tool": t, "outcome": o}, strict=False) for t, o in ring
            ),
            "app": AppState(installed=app[0], running=app[1], permitted=app[2]),
            "client": ClientInfo.model_validate(
                {"version": version, "platform": platform}, strict=False
            ),
        },
        strict=False,
    )


def many(count: int, **kwargs: object) -> list[FrictionSignal]:
    return [signal(**kwargs) for _ in range(count)]  # type: ignore[arg-type]


def write_signals(con: duckdb.DuckDBPyConnection, signals: Sequence[FrictionSignal]) -> None:
    apply_migrations(con)
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


SYNTH_END = dt.date(2026, 6, 30)


@pytest.fixture(scope="session")
def synth_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small synthetic DuckDB file (5,000 signals over the 90 days up to ``SYNTH_END``)."""
    from analysis import synthesize

    path = tmp_path_factory.mktemp("synth") / "synth.duckdb"
    assert synthesize(path, 5_000, end_day=SYNTH_END) == 5_000
    return path


@pytest.fixture
def synth_con(synth_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect(str(synth_path), read_only=True)
    yield con
    con.close()


TEAM_TOKEN = "test-team-token-not-a-real-secret"


@pytest.fixture(scope="module")
def collector_url(tmp_path_factory: pytest.TempPathFactory, synth_path: Path) -> Iterator[str]:
    """A real collector (uvicorn on loopback) over a copy of the synthetic file."""
    import shutil

    from pydantic import SecretStr

    from collector.settings import CollectorSettings
    from tests._servers import running_collector

    db_path = tmp_path_factory.mktemp("collector") / "signals.duckdb"
    shutil.copy(synth_path, db_path)
    settings = CollectorSettings(
        db_path=db_path,
        read_tokens=[SecretStr(TEAM_TOKEN)],
        triage_k=5,
        retention_days=36500,
        rate_limit_enabled=False,
    )
    with running_collector(settings) as url:
        yield url
