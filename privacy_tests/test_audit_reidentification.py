"""Nobody singled out: the re-identification measure is right on a hand-made table, and every
published view (each triage question, overall and drilled down to a tool) applies the
k-threshold to every count it shows, over a synthetic fleet full of small groups."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import pytest

from analysis import synthesize
from scripts.reidentification import QI_SETS, check_published_views, equivalence_risk


def test_equivalence_risk_counts_unique_and_small_classes_exactly() -> None:
    con = duckdb.connect(":memory:")
    con.execute("CREATE TABLE signals (tool_attempted VARCHAR, day DATE)")
    # classes: a x6, b x3, c x1  -> unique 1/10, below 5: 4/10
    rows = [("a", "2026-11-30")] * 6 + [("b", "2026-11-30")] * 3 + [("c", "2026-11-29")]
    con.executemany("INSERT INTO signals VALUES (?, ?)", rows)
    risk = equivalence_risk(con, ["tool_attempted"], 5)
    assert (risk.signals, risk.classes) == (10, 3)
    assert risk.unique_share == pytest.approx(0.1)
    assert risk.below_k_share == pytest.approx(0.4)
    assert equivalence_risk(con, ["tool_attempted"], 5, "day = DATE '2026-11-29'").unique_share == 1


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fleet") / "fleet.duckdb"
    synthesize(path, 4_000, end_day=dt.date(2026, 11, 30))
    return path


@pytest.mark.parametrize("k", [2, 5, 11])
def test_every_published_view_applies_k(fleet: Path, k: int) -> None:
    con = duckdb.connect(str(fleet), read_only=True)
    try:
        checks = check_published_views(con, k)
        risk = equivalence_risk(con, QI_SETS[2][1], k)
    finally:
        con.close()
    # 9 questions overall, 6 with a tool (trends, intents and attempts have no tool).
    assert len(checks) >= 15 and any(c.rows for c in checks)
    assert [c.view for c in checks if c.below_k] == []
    assert all(c.smallest is None or c.smallest >= k for c in checks)
    # the row-level data DOES hold small classes: suppression is doing real work
    assert risk.below_k_share > 0.5


def test_the_signals_table_of_the_fleet_is_the_collectors(fleet: Path) -> None:
    con = duckdb.connect(str(fleet), read_only=True)
    try:
        migrations = con.execute("SELECT count(*) FROM schema_migrations").fetchone()
        cols = {r[0] for r in con.execute("DESCRIBE signals").fetchall()}
    finally:
        con.close()
    assert migrations is not None and migrations[0] >= 1
    for _, columns in QI_SETS:
        assert set(columns) <= cols, "a quasi-identifier the measure groups by is not stored"
