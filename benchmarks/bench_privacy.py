"""Utility of the differentially private releases at LMCP's real volume, at the defaults.

For each rate (signals a day) a fleet's 4 closed weeks of synthetic signals
(``analysis.synthesize``, each signal dated uniformly over the 28 days ending on a Sunday) are
released with the DEFAULT plan (``collector.releases``: rho = 1 over 90 days, epsilon 8.42 at
delta 1e-7) and every released view (``analysis._released``) is compared with the exact answer
the same derivation gives over the same rows (``analysis.ask`` with k = 1):

- top-10 overlap: how many of the exact ten largest groups are among the released ten;
- median relative error over the exact ten largest groups, |released - exact| / exact (a group
  the release does not list counts as an error of 100 %);
- for regressions, also the false ones: released regressions the exact answer does not list.

The trend is a series, not a ranking (its days are near-equal, so which ten are largest is a
coin toss even between two exact samples): every point of it is compared, and its false
findings are the spike days the release flags and the exact answer does not.

A view is usable when its overlap is at least 9 of 10 (all of them when it has fewer groups;
for the trend, 90 % of its points) and its median relative error at most 10 %. Targets
(issue 22): every view usable from 5k a day, ring from 10k, regressions from 20k. Each figure
is the median of ``DRAWS`` releases.
``LMCP_BENCH_PRIVACY_RATES=1000,5000`` chooses the rates.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb

from benchmarks._timing import table

__all__ = ["END", "TARGETS", "Utility", "measure", "rates", "run"]

#: A Sunday: the 4 weeks ending on it are closed on ``TODAY``.
END = dt.date(2026, 11, 29)
TODAY = END + dt.timedelta(days=3)
DAYS = 28
DRAWS = 5
TOP = 10
RATES = (1_000, 3_000, 5_000, 10_000, 20_000, 100_000)
#: The rate from which each view must be usable.
TARGETS = {"ring": 10_000, "regressions": 20_000}
DEFAULT_TARGET = 5_000
#: The fields of each row type that are counts or derived from counts (not the group's key).
_NOT_KEY = {"n", "moe", "prev_n", "prev_moe", "change", "change_pct", "share_pct", "share_moe",
            "platform_n", "tool_n", "base_n", "base_share_pct", "baseline", "spike", "status",
            "first_day", "within_noise"}  # fmt: skip


@dataclasses.dataclass(frozen=True, slots=True)
class Utility:
    view: str
    exact_groups: int
    released_groups: int
    overlap: int
    top: int
    median_rel_error: float
    false_listed: int


def rates() -> tuple[int, ...]:
    chosen = os.environ.get("LMCP_BENCH_PRIVACY_RATES")
    return tuple(int(r) for r in chosen.split(",")) if chosen else RATES


def _key(row: Any) -> tuple[object, ...]:
    return tuple(getattr(row, f.name) for f in dataclasses.fields(row) if f.name not in _NOT_KEY)


def _ranked(rows: tuple[object, ...]) -> dict[tuple[object, ...], int]:
    out: dict[tuple[object, ...], int] = {}
    for row in sorted(rows, key=lambda r: -int(getattr(r, "n"))):  # noqa: B009
        out.setdefault(_key(row), int(getattr(row, "n")))  # noqa: B009
    return out


def _fleet(path: Path, per_day: int) -> None:
    from analysis import synthesize

    synthesize(path, per_day * DAYS, end_day=END)
    with duckdb.connect(str(path)) as con:
        # Every signal inside the 4 weeks (the generator spreads its days over 90).
        con.execute(
            "UPDATE signals SET day = $end - CAST(hash(signal_id) % $days AS INTEGER), "
            "received_day = $end - CAST(hash(signal_id) % $days AS INTEGER)",
            {"end": END, "days": DAYS},
        )
        con.execute("CHECKPOINT")


def measure(con: duckdb.DuckDBPyConnection) -> list[Utility]:
    """One fresh release of the 4 weeks and every released view against its exact answer."""
    from analysis import Filters, ask
    from analysis._filters import Period
    from analysis._questions import Question
    from analysis._released import RELEASED_QUESTIONS, ask_released
    from collector.releases.store import release_closed_periods
    from contract.accountant import ReleasePlan

    con.execute("DELETE FROM release_cells")
    con.execute("DELETE FROM release_periods")
    release_closed_periods(con, TODAY, ReleasePlan(), retention_days=DAYS + 7)
    period = Period(END - dt.timedelta(days=DAYS - 1), END)
    out: list[Utility] = []
    for q in RELEASED_QUESTIONS:
        exact_rows = ask(con, q, Filters(), k=1, limit=100_000, period=period).rows
        released_rows = ask_released(con, q, Filters(), limit=100_000, period=period).rows
        exact, released = _ranked(exact_rows), _ranked(released_rows)
        series = q is Question.trends
        top = list(exact) if series else list(exact)[:TOP]
        if not top:
            continue
        shown = set(released) if series else set(list(released)[:TOP])
        overlap = len(set(top) & shown)
        errors = [abs(released.get(k, 0) - exact[k]) / max(1, exact[k]) for k in top]
        false = len(_spikes(released_rows) - _spikes(exact_rows)) if series else len(
            set(released) - set(exact))  # fmt: skip
        out.append(Utility(q.value, len(exact), len(released), overlap, len(top),
                           statistics.median(errors), false))  # fmt: skip
    return out


def _spikes(rows: tuple[object, ...]) -> set[tuple[object, ...]]:
    return {_key(r) for r in rows if getattr(r, "spike", False)}


def usable(u: Utility) -> bool:
    need = math.ceil(0.9 * u.top) if u.top > TOP else min(9, u.top)
    return u.overlap >= need and u.median_rel_error <= 0.10


def run() -> None:
    from contract.accountant import ReleasePlan

    rows: list[list[object]] = []
    for rate in rates():
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "fleet.duckdb"
            start = time.perf_counter()
            _fleet(path, rate)
            build = time.perf_counter() - start
            with duckdb.connect(str(path)) as con:
                draws = [measure(con) for _ in range(DRAWS)]
            sys.stdout.write(
                f"{rate:,} signals a day x {DAYS} days: synthesised in {build:.1f} s\n"
            )
        for i, first in enumerate(draws[0]):
            same = [d[i] for d in draws]
            med = Utility(
                first.view, first.exact_groups,
                int(statistics.median(u.released_groups for u in same)),
                int(statistics.median(u.overlap for u in same)), first.top,
                statistics.median(u.median_rel_error for u in same),
                int(statistics.median(u.false_listed for u in same)),
            )  # fmt: skip
            target = TARGETS.get(first.view, DEFAULT_TARGET)
            verdict = ("PASS" if usable(med) else "MISS") if rate >= target else (
                "usable" if usable(med) else "-")  # fmt: skip
            rows.append([f"{rate:,}", med.view, med.exact_groups, med.released_groups,
                         f"{med.overlap}/{med.top}", f"{100 * med.median_rel_error:.1f} %",
                         med.false_listed, f"{target:,}", verdict])  # fmt: skip
    lr = ReleasePlan().long_run()
    table(
        f"Released vs exact, 4 closed weeks, defaults: rho = 1 over 90 days = epsilon "
        f"{lr.epsilon:.2f} at delta {lr.delta:g} (median of {DRAWS} draws)",
        ["signals/day", "view", "exact groups", "released groups", f"top-{TOP} overlap",
         "median rel. error (top)", "false (listed, not exact)", "target from", "verdict"],
        rows,
    )  # fmt: skip
