"""Utility of the differentially private releases: how close what the team sees is to the truth.

For one UTC day of N synthetic signals (``analysis.synthesize``, every signal received that
day), the day is released with the default privacy parameters (``collector.releases``) and
every released view (``analysis._released``) is compared with the exact answer over the same
raw rows (``analysis.ask`` with k = 1):

- top-10 overlap: how many of the exact ten largest groups are among the released ten;
- median relative error: over the exact ten largest groups, |released - exact| / exact, where a
  group the release dropped counts as 0 (an error of 100 %).

Each figure is the median of ``DRAWS`` independent releases. N runs over 10k and 100k signals a
day, and 1M when ``LMCP_BENCH_PRIVACY_1M=1`` (it takes longer to synthesise).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb

from benchmarks._timing import table

__all__ = ["DAY", "Utility", "measure", "run", "sizes"]

DAY = dt.date(2026, 11, 30)
DRAWS = 3
TOP = 10
#: The fields of each row type that are counts or derived from counts (not the group's key).
_NOT_KEY = {"n", "prev_n", "change", "change_pct", "share_pct", "platform_n", "tool_n",
            "base_n", "base_share_pct", "baseline", "spike", "status", "first_day"}  # fmt: skip


@dataclasses.dataclass(frozen=True, slots=True)
class Utility:
    view: str
    exact_groups: int
    released_groups: int
    overlap: int
    top: int
    median_rel_error: float


def sizes() -> tuple[int, ...]:
    if os.environ.get("LMCP_BENCH_PRIVACY_1M") == "1":
        return (10_000, 100_000, 1_000_000)
    return (10_000, 100_000)


def _key(row: Any) -> tuple[object, ...]:
    return tuple(getattr(row, f.name) for f in dataclasses.fields(row) if f.name not in _NOT_KEY)


def _ranked(rows: tuple[object, ...]) -> dict[tuple[object, ...], int]:
    out: dict[tuple[object, ...], int] = {}
    for row in sorted(rows, key=lambda r: -int(getattr(r, "n"))):  # noqa: B009
        out.setdefault(_key(row), int(getattr(row, "n")))  # noqa: B009
    return out


def _one_day(path: Path, signals: int) -> None:
    from analysis import synthesize

    synthesize(path, signals, end_day=DAY)
    with duckdb.connect(str(path)) as con:
        con.execute("UPDATE signals SET day = $1, received_day = $1", [DAY])
        con.execute("CHECKPOINT")


def measure(con: duckdb.DuckDBPyConnection) -> list[Utility]:
    """One fresh release of ``DAY`` and every released view against its exact answer."""
    from analysis import Filters, ask
    from analysis._filters import Period
    from analysis._released import RELEASED_QUESTIONS, ask_released
    from collector.releases.store import PrivacyParams, release_closed_days

    con.execute("DELETE FROM release_cells")
    con.execute("DELETE FROM release_days")
    release_closed_days(con, DAY + dt.timedelta(days=1), PrivacyParams())
    period = Period(DAY, DAY)
    out: list[Utility] = []
    for q in RELEASED_QUESTIONS:
        exact = _ranked(ask(con, q, Filters(), k=1, limit=100_000, period=period).rows)
        released = _ranked(ask_released(con, q, Filters(), limit=100_000, period=period).rows)
        top = list(exact)[:TOP]
        if not top:
            continue
        overlap = len(set(top) & set(list(released)[:TOP]))
        errors = [abs(released.get(k, 0) - exact[k]) / exact[k] for k in top]
        out.append(
            Utility(
                q.value, len(exact), len(released), overlap, len(top), statistics.median(errors)
            )
        )
    return out


def run() -> None:
    rows: list[list[object]] = []
    for size in sizes():
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "day.duckdb"
            start = time.perf_counter()
            _one_day(path, size)
            build = time.perf_counter() - start
            with duckdb.connect(str(path)) as con:
                draws = [measure(con) for _ in range(DRAWS)]
            sys.stdout.write(f"{size:,} signals in one day: synthesised in {build:.1f} s\n")
        for i, first in enumerate(draws[0]):
            same = [d[i] for d in draws]
            rows.append(
                [f"{size:,}", first.view, first.exact_groups,
                 int(statistics.median(u.released_groups for u in same)),
                 f"{statistics.median(u.overlap for u in same):.0f}/{first.top}",
                 f"{100 * statistics.median(u.median_rel_error for u in same):.1f} %"]
            )  # fmt: skip
    from collector.releases.store import PrivacyParams

    params = PrivacyParams()
    table(
        f"Released vs exact, one day, epsilon = {params.epsilon_per_day} per installation-day, "
        f"C = {params.cap}, delta = {params.delta_per_day:g} (median of {DRAWS} draws)",
        ["signals/day", "view", "exact groups", "released groups", f"top-{TOP} overlap",
         "median rel. error (top)"],
        rows,
    )  # fmt: skip
