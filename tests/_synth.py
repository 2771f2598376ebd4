"""The synthetic DuckDB file of the triage tests (``synth_path`` in ``tests/conftest.py``).

Small on purpose: a test run builds it once (``tests/_once.py``), and what costs is the
release of every closed (cube, period) of the retention window and, in the tests, answering
the ring question over every released cell of its domain (tens of thousands a week). So the
file keeps a short window (the collector's own ``purge_expired``): the two newest closed weeks
and their days, of a dense set -- about 2.3k signals a day, inside the 1k-10k a day LMCP really
sees -- released at the DEFAULT privacy parameters. Shorter, and the regressions are left with
a single row and the report's trends chart no longer renders to PNG.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb

__all__ = [
    "SYNTH_END",
    "SYNTH_RETENTION_DAYS",
    "SYNTH_SIGNALS",
    "SYNTH_TODAY",
    "build_synth",
]

#: A Sunday: the last day of a week, so the newest closed week ends with the synthetic data.
SYNTH_END = dt.date(2026, 6, 28)
#: The day the file is released on: ``SYNTH_END``'s week is closed (LATE_DAYS after it).
SYNTH_TODAY = SYNTH_END + dt.timedelta(days=3)
#: Signals synthesised over the 90 days up to ``SYNTH_END``; the window keeps about a quarter.
SYNTH_SIGNALS = 150_000
SYNTH_RETENTION_DAYS = 17


def build_synth(path: Path) -> Path:
    """Synthesise, keep the retention window, rewrite the closed days in id order, release
    every closed period at the defaults: the file as a collector with that window would have
    stored it. (Unordered, each collector a test starts on a copy rewrites every day again,
    ~0.1 s of CPU a day.)"""
    from analysis import synthesize
    from collector.releases.store import release_closed_periods
    from collector.retention import purge_expired, reorder_closed_days
    from contract.accountant import ReleasePlan

    assert synthesize(path, SYNTH_SIGNALS, end_day=SYNTH_END) == SYNTH_SIGNALS
    with duckdb.connect(str(path)) as con:
        purge_expired(con, SYNTH_TODAY, SYNTH_RETENTION_DAYS)
        assert reorder_closed_days(con, SYNTH_TODAY)
        release_closed_periods(con, SYNTH_TODAY, ReleasePlan(), retention_days=SYNTH_RETENTION_DAYS)
    return path
