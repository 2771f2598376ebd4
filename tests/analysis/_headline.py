"""A released dataset whose true headline figures differ from what a capped query shows (the
``headline_path`` and ``headline_url`` fixtures of ``tests/analysis/conftest.py``).

Two days on which several trend series spike together (so spike (day, series) pairs outnumber
spike days) and a version that brings more regressions than any page limit. Signals are
written through the collector's real write path, one received day at a time, then released
as a collector would (``release_closed_periods``) at the default parameters. The last day is a
Sunday, so the default period (4 weeks to the newest released week) ends on it.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb

from contract.schema import ErrorClass, FrictionSignal, ToolName
from tests.analysis.conftest import signal

__all__ = ["HEADLINE_END", "build_headline"]

HEADLINE_END = dt.date(2026, 4, 12)  # a Sunday
#: The default 4 weeks and the 7 days of baseline before them: every released day the trend
#: reads holds data (an empty released day is noise around 0, and a jump from it a spike).
HEADLINE_START = HEADLINE_END - dt.timedelta(days=34)
assert HEADLINE_END.weekday() == 6
SPIKE_DAYS = (HEADLINE_END - dt.timedelta(days=1), HEADLINE_END)
#: Released versions (the versions cube's known domain, contract/catalogue/versions.json).
BASE_VERSION, NEW_VERSION = "1.3.1", "1.4.0"
#: Regressions the dataset is built to show (new (tool, class) pairs in NEW_VERSION), each large
#: enough that its share clears the regression test against the release noise of both
#: versions' totals (each a sum of every (tool, error class) cell of the version).
NEW_PAIRS = 24


def _day_signals(day: dt.date) -> list[FrictionSignal]:
    spike = day in SPIKE_DAYS
    out = [signal(day, friction="cannot_complete", platform="macos", version=BASE_VERSION)
           for _ in range(4800 if spike else 1200)]  # fmt: skip
    out += [signal(day, friction="repeated_failure", platform="linux", error_class="timeout",
                   version=BASE_VERSION)
            for _ in range(3600 if spike else 1000)]  # fmt: skip
    if day == HEADLINE_END:
        tools = [t.value for t in ToolName][:6]
        classes = [c.value for c in ErrorClass if c.value != "not_found"][:4]
        pairs = [(t, c) for t in tools for c in classes][:NEW_PAIRS]
        for tool, cls in pairs:
            out += [signal(day, tool=tool, error_class=cls, version=NEW_VERSION,
                           friction="workaround_needed") for _ in range(3000)]  # fmt: skip
    return out


def build_headline(path: Path) -> Path:
    """Write the dataset day by day through the collector's flush, then release it."""
    from collector.db import migrate
    from collector.releases.store import release_closed_periods
    from collector.store import flush_rows
    from contract.accountant import ReleasePlan
    from contract.limits import LATE_DAYS

    with duckdb.connect(str(path)) as con:
        migrate(con)
        day = HEADLINE_START
        while day <= HEADLINE_END:
            flush_rows(con, [_day_signals(day)], day)
            day += dt.timedelta(days=1)
        today = HEADLINE_END + dt.timedelta(days=LATE_DAYS + 1)
        release_closed_periods(con, today, ReleasePlan(), retention_days=36500)
    return path
