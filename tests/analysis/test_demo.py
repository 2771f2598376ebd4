"""``make demo`` as a smoke test: a real collector, a small fleet of real clients, the check."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from scripts import demo


@pytest.mark.slow
def test_demo_exits_clean_with_exactly_the_opted_in_signals(tmp_path: Path) -> None:
    code = demo.main(
        ["--exit", "--clients", "30", "--history", "100000", "--seed", "3", "--out", str(tmp_path)]
    )
    assert code == 0
    page = (tmp_path / "triage.html").read_text(encoding="utf-8")
    assert page.count("<svg") >= 8
    assert (tmp_path / "triage.md").is_file()
    with duckdb.connect(str(tmp_path / "signals.duckdb"), read_only=True) as con:
        row = con.execute("SELECT count(*), max(day) FROM signals").fetchone()
    assert row is not None and row[0] > 100_000  # the history plus the fleet's signals
    # Two services, two files: the skills service's file holds the author's skill.
    with duckdb.connect(str(tmp_path / "skills.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM skills").fetchone() == (1,)


def test_the_check_catches_a_signal_from_an_opted_out_client() -> None:
    from scripts._demo_fleet import ClientResult, plan_fleet

    plans = plan_fleet(40, seed=1)
    off = next(p for p in plans if not p.opted_in)
    on = next(p for p in plans if p.opted_in)
    good = [ClientResult(on, sent_ids=["a"], requests=1), ClientResult(off)]
    assert demo._verify({"h", "a"}, {"h"}, good) == []
    leaked = [ClientResult(on, sent_ids=["a"], requests=1), ClientResult(off, requests=1)]
    assert demo._verify({"h", "a"}, {"h"}, leaked) != []
    assert demo._verify({"h", "a", "x"}, {"h"}, good) != []
    assert demo._verify({"h"}, {"h"}, good) != []
