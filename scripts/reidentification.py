"""Re-identification risk, measured on synthetic data: ``python -m scripts.reidentification``.

1. Stored rows (what an operator with the disk, or a steward, holds): the share of signals whose
   combination of quasi-identifiers is UNIQUE in one day's data, and the share in a class
   smaller than k, for growing sets of quasi-identifiers (the fields an observer could know
   about a person's session).
2. Released cells (what the team sees): the share of released cells that rest on fewer than k
   INSTALLATIONS. Synthetic signals get synthetic installations (about three signals each,
   within the client's bound: one per (tool, error class, friction type), at most C a day);
   the day is released with the default parameters and each released cell's distinct
   installations are counted.

The installation ids exist only inside this script's temporary database: signals carry none.
Output: plain tables, published in docs/privacy.md.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import duckdb

__all__ = [
    "QI_SETS",
    "Risk",
    "ViewCheck",
    "cell_support",
    "check_published_views",
    "equivalence_risk",
    "main",
]

DAY = dt.date(2026, 11, 30)
SIZES = (10_000, 100_000)
KS = (5, 10)
SIGNALS_PER_INSTALLATION = 3

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
    """The steward's EXACT views (``--exact``: each question overall and for one tool, where
    its cube has a tool): every count they show against ``k``."""
    from analysis import QUESTIONS, Filters, ask
    from analysis._filters import FilterError
    from contract.schema import ToolName

    checks: list[ViewCheck] = []
    scopes = [("", Filters()), (" (tool=send_email)", Filters(tool=ToolName.send_email))]
    for suffix, filters in scopes:
        for question in QUESTIONS:
            try:  # the default period: the last 4 closed weeks holding signals
                answer = ask(con, question, filters, k=k)
            except FilterError:  # its cube has no tool (trends, intents, attempts)
                continue
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


def _fleet_day(path: Path, signals: int, cap: int) -> int:
    """One day of synthetic signals, each given a synthetic installation, bounded as the client
    bounds them; returns the signals kept. Installations live in ``installs`` only."""
    from analysis import synthesize

    synthesize(path, signals, end_day=DAY)
    installations = max(1, signals // SIGNALS_PER_INSTALLATION)
    with duckdb.connect(str(path)) as con:
        con.execute("UPDATE signals SET day = $1, received_day = $1", [DAY])
        con.execute(
            "CREATE TABLE installs AS SELECT signal_id, hash(signal_id) % $m AS inst FROM signals",
            {"m": installations},
        )
        con.execute(
            "DELETE FROM signals WHERE signal_id IN (SELECT signal_id FROM ("
            "SELECT s.signal_id, row_number() OVER (PARTITION BY i.inst, s.tool_attempted, "
            "s.error_class, s.friction_type ORDER BY s.signal_id) AS per_cell, "
            "row_number() OVER (PARTITION BY i.inst ORDER BY s.signal_id) AS per_day "
            "FROM signals s JOIN installs i USING (signal_id)) WHERE per_cell > 1 OR per_day > $c)",
            {"c": cap},
        )
        row = con.execute("SELECT count(*) FROM signals").fetchone()
    return int(row[0]) if row else 0


def cell_support(con: duckdb.DuckDBPyConnection, cube: str) -> list[tuple[int, int]]:
    """(noisy count, distinct installations) of each released cell of ``cube`` in the period
    holding ``DAY`` that rests on at least one installation (a known domain releases the
    empty cells too: noise alone)."""
    from collector.releases.cubes import CUBES, cube_rows_sql
    from collector.releases.store import KEY_SEP, read_cells
    from contract.days import period_end, period_start

    spec = CUBES[cube]
    start = period_start(spec.kind, DAY)
    keys = ", ".join(spec.dim_names)
    rows = con.execute(
        f"SELECT concat_ws('{KEY_SEP}', {keys}), count(DISTINCT inst) "
        f"FROM ({cube_rows_sql(spec)}) JOIN installs USING (signal_id) GROUP BY 1",
        {"start": start, "end": period_end(spec.kind, DAY)},
    ).fetchall()
    support = {str(key): int(n) for key, n in rows}
    return [
        (c.n, support[KEY_SEP.join(c.key)])
        for c in read_cells(con, cube, start, start)
        if KEY_SEP.join(c.key) in support
    ]


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def main(argv: Sequence[str] = ()) -> int:
    from collector.releases.cubes import CUBES
    from collector.releases.store import release_closed_periods
    from contract.accountant import ReleasePlan
    from scripts._table import table

    params = ReleasePlan()
    stored: list[list[object]] = []
    released: list[list[object]] = []
    for size in SIZES:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "fleet.duckdb"
            kept = _fleet_day(path, size, params.cap)
            with duckdb.connect(str(path)) as con:
                for label, columns in QI_SETS[:-1]:  # one day: "+ day" adds nothing
                    risk = equivalence_risk(con, columns, KS[0])
                    stored.append([f"{kept:,}", label, f"{risk.classes:,}",
                                   _pct(risk.unique_share), _pct(risk.below_k_share)])  # fmt: skip
                release_closed_periods(
                    con, DAY + dt.timedelta(days=10), params, retention_days=30, backfill_days=14
                )
                for cube in CUBES:
                    cells = cell_support(con, cube)
                    fewest = min((s for _, s in cells), default=None)
                    shares = [
                        _pct(sum(1 for _, s in cells if s < k) / len(cells)) if cells else "-"
                        for k in KS
                    ]
                    released.append([f"{kept:,}", cube, len(cells),
                                     "-" if fewest is None else fewest, *shares])  # fmt: skip
    table(
        f"Stored rows, one day: signals unique on their quasi-identifiers (k = {KS[0]})",
        ["signals", "quasi-identifiers", "classes", "unique", f"in a class < {KS[0]}"],
        stored,
    )
    table(
        f"Released cells holding one day's signals, default parameters (rho = {params.rho} over "
        f"90 days, C = {params.cap} a week): installations per non-empty released cell",
        ["signals", "cube", "released cells", "fewest installations",
         *(f"cells on < {k} installations" for k in KS)],
        released,
    )  # fmt: skip
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
