"""Re-identification risk: how many signals could single someone out, before and after k.

Over a realistic synthetic fleet (``analysis.synthesize``: Zipf-like tool popularity, version
waves, app states consistent with error classes, ring patterns dominated by retries), for growing
sets of quasi-identifiers -- the fields an observer could know about a person's session:

- base: tool, client version, platform, app state (installed / running / permitted);
- + the last two calls (the ring pattern the published views group by);
- + the whole ring (up to ten tool+outcome pairs);
- + argument shapes (name, type, size bucket of each argument);
- + the UTC day;

it prints the share of signals whose combination is UNIQUE in the fleet and the share in a group
smaller than k. That is the risk of the row-level data (the DuckDB file and the team's
token-protected Parquet/CSV export). Then, for every PUBLISHED view -- each triage question, as
served by ``/v1/triage``, the dashboard and the report, and a per-tool drill-down -- it checks
every published count against k and prints the smallest one: after the threshold no published
group is smaller than k, so no published figure singles anyone out.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import duckdb

from benchmarks._timing import table, verdict

__all__ = ["QI_SETS", "ViewCheck", "check_published_views", "equivalence_risk", "run"]

END_DAY = dt.date(2026, 11, 30)
FLEETS = (20_000, 200_000)
K = 5

_BASE = (
    "tool_attempted",
    "client_version_major",
    "client_version_minor",
    "client_version_patch",
    "client_platform",
    "app_installed",
    "app_running",
    "app_permitted",
)
#: (label, columns): each set adds to the one before.
QI_SETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("tool+version+platform+app", _BASE),
    ("+ last two calls", (*_BASE, "prev1_tool", "prev1_outcome", "prev2_tool", "prev2_outcome")),
    ("+ whole ring", (*_BASE, "ring")),
    ("+ arg shapes", (*_BASE, "ring", "args")),
    ("+ day", (*_BASE, "ring", "args", "day")),
)
#: Every count a published row carries (RegressionRow.base_n, PlatformRow.platform_n, ...).
_COUNT_FIELDS = ("n", "prev_n", "base_n", "platform_n", "tool_n")


@dataclasses.dataclass(frozen=True, slots=True)
class Risk:
    signals: int
    classes: int
    unique_share: float
    below_k_share: float


def equivalence_risk(
    con: duckdb.DuckDBPyConnection, columns: Sequence[str], k: int, where: str = "TRUE"
) -> Risk:
    """Shares of signals alone in their class, and in a class smaller than ``k``."""
    cols = ", ".join(columns)  # names from QI_SETS only, never user input
    row = con.execute(
        f"WITH g AS (SELECT count(*) AS n FROM signals WHERE {where} GROUP BY {cols}) "
        "SELECT coalesce(sum(n), 0), count(*), "
        "coalesce(sum(n) FILTER (WHERE n = 1), 0), coalesce(sum(n) FILTER (WHERE n < $k), 0) "
        "FROM g",
        {"k": k},
    ).fetchone()
    total, classes, unique, small = (int(x) for x in row) if row else (0, 0, 0, 0)
    return Risk(total, classes, unique / total if total else 0.0, small / total if total else 0.0)


@dataclasses.dataclass(frozen=True, slots=True)
class ViewCheck:
    view: str
    rows: int
    smallest: int | None
    below_k: int


def check_published_views(con: duckdb.DuckDBPyConnection, k: int) -> list[ViewCheck]:
    """Every triage question (overall and for one tool): each published count against ``k``."""
    from analysis import QUESTIONS, Filters, ask
    from analysis._questions import last_day
    from contract.schema import ToolName

    checks: list[ViewCheck] = []
    scopes = [("", Filters()), (" (tool=send_email)", Filters(tool=ToolName.send_email))]
    for suffix, filters in scopes:
        period = filters.resolve(last_day(con))
        for question in QUESTIONS:
            answer = ask(con, question, filters, k=k, period=period)
            # A count of 0 (e.g. a regression's empty base period) is an absence, not a group.
            counts = [
                value
                for row in answer.rows
                for name in _COUNT_FIELDS
                if isinstance(value := getattr(row, name, None), int) and value > 0
            ]
            checks.append(
                ViewCheck(
                    f"{question.value}{suffix}",
                    len(answer.rows),
                    min(counts) if counts else None,
                    sum(1 for n in counts if n < k),
                )
            )
    return checks


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def run() -> None:
    from analysis import synthesize

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fleet.duckdb"
        done = 0
        rows: list[list[object]] = []
        views: list[ViewCheck] = []
        busiest = ""
        for fleet in FLEETS:
            start = time.perf_counter()
            synthesize(path, fleet - done, end_day=END_DAY)
            done = fleet
            build_s = time.perf_counter() - start
            con = duckdb.connect(str(path), read_only=True)
            try:
                day = con.execute(
                    "SELECT day FROM signals GROUP BY day ORDER BY count(*) DESC LIMIT 1"
                ).fetchone()
                busiest = f"day = DATE '{day[0].isoformat()}'" if day else "TRUE"
                for label, columns in QI_SETS:
                    risk = equivalence_risk(con, columns, K)
                    rows.append(
                        [f"{fleet:,}", label, f"{risk.classes:,}", _pct(risk.unique_share),
                         _pct(risk.below_k_share)]
                    )  # fmt: skip
                one_day = equivalence_risk(con, QI_SETS[1][1], K, busiest)
                rows.append(
                    [f"{one_day.signals:,} (busiest day)", QI_SETS[1][0],
                     f"{one_day.classes:,}", _pct(one_day.unique_share),
                     _pct(one_day.below_k_share)]
                )  # fmt: skip
                if fleet == FLEETS[-1]:
                    views = check_published_views(con, K)
            finally:
                con.close()
            sys.stdout.write(f"fleet of {fleet:,} signals synthesised in {build_s:.1f} s\n")
        table(
            f"Row-level data (DuckDB file, team export): re-identification risk, k = {K}",
            ["signals", "quasi-identifiers", "classes", "unique", f"in a class < {K}"],
            rows,
        )
        table(
            f"Published views (triage API, dashboard, report) over {FLEETS[-1]:,} signals, k = {K}",
            ["view", "rows", "smallest count > 0", f"counts < {K}", "k applied"],
            [
                [
                    v.view,
                    v.rows,
                    "-" if v.smallest is None else v.smallest,
                    v.below_k,
                    verdict(v.below_k == 0),
                ]
                for v in views
            ],  # fmt: skip
        )
