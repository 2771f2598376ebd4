"""The synthetic DuckDB file of the triage tests (``synth_path`` in ``tests/conftest.py``).

Small on purpose: the fast tier builds it once per session, and its cost is the release of
every (closed day, cube) pair, so the file keeps a short retention window (the collector's own
``purge_expired``) of a denser set, rather than 90 days of a thin one. Every view still
releases something at ``TEST_EPSILON``.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb

__all__ = [
    "SYNTH_END",
    "SYNTH_RETENTION_DAYS",
    "SYNTH_SIGNALS",
    "TEST_EPSILON",
    "TEST_SPLIT",
    "build_synth",
]

SYNTH_END = dt.date(2026, 6, 30)
#: Signals synthesised over the 90 days up to ``SYNTH_END``; the window keeps about a third.
SYNTH_SIGNALS = 60_000
SYNTH_RETENTION_DAYS = 30
#: A large epsilon so a small synthetic file releases something in every view (the tests of
#: the plumbing); the privacy tests use the defaults.
TEST_EPSILON = 20.0
#: ... spent mostly where a small file has least (argument shapes).
TEST_SPLIT = {"friction": 0.2, "platforms": 0.1, "daily": 0.1, "versions": 0.1, "context": 0.1,
              "shapes": 0.3, "ring": 0.1}  # fmt: skip


def build_synth(path: Path) -> Path:
    """Synthesise, keep the retention window, release the closed days at ``TEST_EPSILON``
    and ``TEST_SPLIT``: the file as a collector with that window would have stored it."""
    from analysis import synthesize
    from collector.releases.store import PrivacyParams, release_closed_days
    from collector.retention import purge_expired

    assert synthesize(path, SYNTH_SIGNALS, end_day=SYNTH_END) == SYNTH_SIGNALS
    today = SYNTH_END + dt.timedelta(days=2)
    with duckdb.connect(str(path)) as con:
        purge_expired(con, today, SYNTH_RETENTION_DAYS)
        params = PrivacyParams(epsilon_per_day=TEST_EPSILON, split=TEST_SPLIT)
        release_closed_days(con, today, params)
    return path
