"""The attempts view is released: its figures are sums of the ``context`` cube's released cells
(the v2 attempts bucket is one of its dimensions); the steward's exact view reads the stored
``attempts`` column; context cells released before the dimension existed still answer the
other context views and never count as an attempts bucket."""

from __future__ import annotations

import datetime as dt
import uuid
from collections import defaultdict
from pathlib import Path

import duckdb
import pytest

from analysis import Filters, Question
from analysis._filters import Period
from analysis._questions import ask
from analysis._released import CUBE_OF, RELEASED_QUESTIONS, ask_released
from collector.db import migrate
from collector.releases.cubes import CUBES
from collector.releases.store import KEY_SEP, PrivacyParams, read_cells, release_closed_days
from collector.store import flush_rows
from contract.schema import FrictionSignal

D0 = dt.date(2025, 2, 3)
#: Signals per bucket: far above the context cube's threshold at the default epsilon.
_BUCKETS = {"1": 6000, "2": 4000, "3-5": 3000, None: 2500}


def _signal(attempts: str | None) -> FrictionSignal:
    doc = {
        "schema_version": 2,
        "signal_id": uuid.uuid4(),
        "day": D0,
        "friction_type": "repeated_failure",
        "tool_attempted": "read_note",
        "error_class": "not_found",
        "client": {"version": "1.4.0", "platform": "macos"},
    }
    if attempts is not None:
        doc["attempts"] = attempts
    return FrictionSignal.model_validate(doc, strict=False)


@pytest.fixture
def released(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(str(tmp_path / "signals.duckdb"))
    migrate(con)
    signals = [_signal(b) for b, n in _BUCKETS.items() for _ in range(n)]
    flush_rows(con, [signals], D0)
    release_closed_days(con, D0 + dt.timedelta(days=1), PrivacyParams(), cubes=["context"])
    return con


def test_attempts_is_a_context_dimension_and_a_released_question() -> None:
    assert "attempts" in CUBES["context"].dim_names
    assert CUBE_OF[Question.attempts] == "context"
    assert Question.attempts in RELEASED_QUESTIONS


@pytest.mark.slow  # a DuckDB file and a release
def test_attempts_view_answers_from_released_cells(released: duckdb.DuckDBPyConnection) -> None:
    period = Period(D0, D0)
    answer = ask_released(released, Question.attempts, Filters(), limit=100, period=period)
    assert answer.source == "released"
    rows = {r.attempts: r.n for r in answer.rows}  # type: ignore[union-attr]
    # Exactly the sums of the stored cells over the attempts key: post-processing only.
    idx = CUBES["context"].dim_names.index("attempts")
    stored: dict[str, int] = defaultdict(int)
    for cell in read_cells(released, "context", D0, D0):
        stored[cell.key[idx]] += cell.n
    assert rows == dict(stored)
    assert list(rows) == ["1", "2", "3-5", "unspecified"], "the exact view's order"
    for bucket, n in _BUCKETS.items():
        assert abs(rows[bucket or "unspecified"] - n) < 0.1 * n, "noisy, not made up"
    shares = [r.share_pct for r in answer.rows]  # type: ignore[union-attr]
    assert sum(shares) == pytest.approx(100, abs=0.5)
    # The steward's exact view reads the stored ``attempts`` column.
    exact = ask(released, Question.attempts, Filters(), k=2, period=period)
    assert {r.attempts: r.n for r in exact.rows} == {  # type: ignore[union-attr]
        (b or "unspecified"): n for b, n in _BUCKETS.items()
    }


def test_context_cells_released_before_the_attempts_dimension_still_answer() -> None:
    con = duckdb.connect(":memory:")
    migrate(con)
    con.execute("INSERT INTO release_days VALUES ('context', $1, 'test', 400, 2)", [D0])
    con.executemany(
        "INSERT INTO release_cells VALUES ('context', $1, $2, $3)",
        [
            [D0, KEY_SEP.join(("read_note", "genuine", "other")), 700],  # the old three keys
            [D0, KEY_SEP.join(("read_note", "genuine", "other", "2")), 500],
        ],
    )
    period = Period(D0, D0)
    apps = ask_released(con, Question.apps, Filters(), limit=10, period=period)
    assert [(r.tool, r.app_state, r.n) for r in apps.rows] == [("read_note", "genuine", 1200)]  # type: ignore[union-attr]
    attempts = ask_released(con, Question.attempts, Filters(), limit=10, period=period)
    assert [(r.attempts, r.n) for r in attempts.rows] == [("2", 500)]  # type: ignore[union-attr]
