"""Computing and storing releases: once per (cube, closed period), never redrawn.

Which periods: every closed period (``contract.days``) whose first day is inside the
retention window, empty ones too -- the calendar of releases depends on the date only, never
on the data, so one signal on an otherwise empty day moves no period. A signal counts in the
period of its own ``day``; the collector refuses a signal whose period is closed, so a stored
release never changes. ``release_periods`` holds one row per (cube, period) with a primary
key, written in the same transaction as the cells: a period already there is skipped.

The three steps of one release are apart so the retention job can draw the noise (the slow
part: OpenDP samples every cell of the domain) off the database thread: ``count_period``
reads the exact counts, ``draw_period`` adds the noise, ``store_period`` writes it if no one
did first.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import duckdb

from collector.releases.cubes import CUBES, Cube, cube_sql
from collector.releases.mechanism import Calibration, calibrate, noisy_map, noisy_vector
from contract.accountant import DEFAULT_WINDOW_DAYS, ReleasePlan
from contract.days import closed, period_end, periods_between

if TYPE_CHECKING:  # reading releases (triage) needs no settings model
    from collector.settings import CollectorSettings

__all__ = [
    "KEY_SEP",
    "Cell",
    "Draw",
    "Exact",
    "calibration",
    "count_period",
    "draw_period",
    "due_periods",
    "last_released",
    "params_from_settings",
    "purge_releases",
    "read_cells",
    "read_noisy_cells",
    "release_closed_periods",
    "release_period",
    "released_periods",
    "released_scales",
    "released_span",
    "store_period",
]

#: Joins a cell's key values in ``release_cells.key`` (no enum label or version holds one).
KEY_SEP = "|"


@dataclass(frozen=True, slots=True)
class Cell:
    """One released cell: its period's first day, its key, its noisy count."""

    day: dt.date
    key: tuple[str, ...]
    n: int


@dataclass(frozen=True, slots=True)
class Exact:
    """One period's exact counts of one cube (present cells only): never stored or shown."""

    cube: str
    day: dt.date
    counts: dict[tuple[str, ...], int]


@dataclass(frozen=True, slots=True)
class Draw:
    """One period's noisy cells, ready to store."""

    cube: str
    day: dt.date
    calibration: Calibration
    cells: list[tuple[tuple[str, ...], int]]


def calibration(cube: str, plan: ReleasePlan) -> Calibration:
    """The cube's noise for one period under ``plan`` (checked with OpenDP's maps)."""
    c = CUBES[cube]
    scale = plan.scale(cube, c.sensitivity(plan.cap))
    delta = plan.threshold_delta if c.thresholded else None
    return calibrate(c.bounds(plan.cap), scale, plan.cube_rho(cube), delta)


def count_period(con: duckdb.DuckDBPyConnection, cube: str, day: dt.date) -> Exact:
    c = CUBES[cube]
    end = period_end(c.kind, day)
    rows = con.execute(cube_sql(c), {"start": day, "end": end}).fetchall()
    return Exact(cube, day, {tuple(str(v) for v in row[:-1]): int(row[-1]) for row in rows})


def draw_period(exact: Exact, plan: ReleasePlan) -> Draw:
    """Noise on every cell of the domain (a known domain) or on the present cells, thresholded.
    A present key outside the known domain (a value the domain does not list) is not counted."""
    c: Cube = CUBES[exact.cube]
    cal = calibration(exact.cube, plan)
    if c.thresholded:
        cells = sorted(noisy_map(exact.counts, cal).items())
    else:
        domain = c.cells()
        noisy = noisy_vector([exact.counts.get(key, 0) for key in domain], cal)
        cells = list(zip(domain, noisy, strict=True))
    return Draw(exact.cube, exact.day, cal, cells)


def store_period(con: duckdb.DuckDBPyConnection, draw: Draw) -> bool:
    """Store ``draw``; False (nothing written) when its period was already released."""
    cal = draw.calibration
    con.execute("BEGIN TRANSACTION")
    try:
        done = con.execute(
            "SELECT count(*) FROM release_periods WHERE cube = $1 AND day = $2",
            [draw.cube, draw.day],
        ).fetchone()
        if done and done[0]:
            con.execute("ROLLBACK")
            return False
        b = cal.bounds
        recorded = (
            f"rho={cal.rho:.6g} delta={cal.delta:.6g} scale={cal.scale:.6g} "
            f"l0={b.l0} l1={b.l1} linf={b.linf} l2={b.l2:.6g}"
        )
        con.execute(
            "INSERT INTO release_periods VALUES ($1, $2, $3, $4, $5, $6, $7)",
            [draw.cube, draw.day, CUBES[draw.cube].kind.value, cal.scale, cal.threshold,
             len(draw.cells), recorded],
        )  # fmt: skip
        if draw.cells:
            import pyarrow as pa  # an Arrow insert: 43k cells in one statement, not 43k

            table = pa.table(
                {
                    "cube": [draw.cube] * len(draw.cells),
                    "day": pa.array([draw.day] * len(draw.cells), pa.date32()),
                    "key": [KEY_SEP.join(k) for k, _ in draw.cells],
                    "n": pa.array([n for _, n in draw.cells], pa.int64()),
                }
            )
            con.register("_draw", table)
            try:
                con.execute("INSERT INTO release_cells SELECT cube, day, key, n FROM _draw")
            finally:
                con.unregister("_draw")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return True


def release_period(
    con: duckdb.DuckDBPyConnection, cube: str, day: dt.date, plan: ReleasePlan
) -> bool:
    """Release one cube for one closed period; False when it was already released."""
    return store_period(con, draw_period(count_period(con, cube, day), plan))


def due_periods(
    con: duckdb.DuckDBPyConnection,
    today: dt.date,
    retention_days: int,
    cubes: Iterable[str] = tuple(CUBES),
    *,
    backfill_days: int = DEFAULT_WINDOW_DAYS,
) -> list[tuple[str, dt.date]]:
    """The (cube, period) pairs closed on ``today``, starting inside the retention window and
    at most ``backfill_days`` back (a collector keeping signals for years releases the recent
    periods, not a century of empty ones), not released yet."""
    first = today - dt.timedelta(days=min(retention_days, backfill_days))
    done = set(con.execute("SELECT cube, day FROM release_periods").fetchall())
    out: list[tuple[str, dt.date]] = []
    for name in cubes:
        kind = CUBES[name].kind
        out += [
            (name, day)
            for day in periods_between(kind, first, today)
            if closed(kind, day, today) and (name, day) not in done
        ]
    return out


def release_closed_periods(
    con: duckdb.DuckDBPyConnection,
    today: dt.date,
    plan: ReleasePlan,
    *,
    retention_days: int,
    cubes: Iterable[str] = tuple(CUBES),
    backfill_days: int = DEFAULT_WINDOW_DAYS,
    progress: Callable[[int, int], None] | None = None,
) -> list[tuple[str, dt.date]]:
    """Release every due period; return which. ``progress(done, total)`` after each."""
    due = due_periods(con, today, retention_days, cubes, backfill_days=backfill_days)
    out = []
    for i, (name, day) in enumerate(due, 1):
        if release_period(con, name, day, plan):
            out.append((name, day))
        if progress is not None:
            progress(i, len(due))
    return out


def read_cells(
    con: duckdb.DuckDBPyConnection, cube: str, start: dt.date, end: dt.date
) -> list[Cell]:
    """The stored cells of one cube whose period starts in ``[start, end]`` (never recomputed)."""
    rows = con.execute(
        "SELECT day, key, n FROM release_cells WHERE cube = $1 AND day BETWEEN $2 AND $3 "
        "ORDER BY day, key",
        [cube, start, end],
    ).fetchall()
    return [Cell(day, tuple(str(key).split(KEY_SEP)), int(n)) for day, key, n in rows]


def read_noisy_cells(
    con: duckdb.DuckDBPyConnection, cube: str, start: dt.date, end: dt.date
) -> list[tuple[dt.date, tuple[str, ...], float, float]]:
    """``read_cells`` with each cell's noise variance (its period's scale squared), as
    (day, key, n, variance) in the same order: what the analysis sums, in one read."""
    rows = con.execute(
        "SELECT c.day, c.key, CAST(c.n AS DOUBLE), coalesce(p.scale * p.scale, 0.0) "
        "FROM release_cells c LEFT JOIN release_periods p ON p.cube = c.cube AND p.day = c.day "
        "WHERE c.cube = $1 AND c.day BETWEEN $2 AND $3 ORDER BY c.day, c.key",
        [cube, start, end],
    ).fetchall()
    # A view reads ~10^5 cells, most keys once per period: each key is split once.
    keys: dict[str, tuple[str, ...]] = {}
    out = []
    for day, text, n, var in rows:
        key = keys.get(text)
        if key is None:
            key = keys[text] = tuple(str(text).split(KEY_SEP))
        out.append((day, key, n, var))
    return out


def released_scales(
    con: duckdb.DuckDBPyConnection, cube: str, start: dt.date, end: dt.date
) -> dict[dt.date, float]:
    """Each released period of ``cube`` starting in ``[start, end]``: its noise's std."""
    rows = con.execute(
        "SELECT day, scale FROM release_periods WHERE cube = $1 AND day BETWEEN $2 AND $3",
        [cube, start, end],
    ).fetchall()
    return {day: float(scale) for day, scale in rows}


def last_released(con: duckdb.DuckDBPyConnection, cube: str) -> dt.date | None:
    """The first day of ``cube``'s newest released period."""
    row = con.execute("SELECT max(day) FROM release_periods WHERE cube = $1", [cube]).fetchone()
    value = row[0] if row else None
    return value if isinstance(value, dt.date) else None


def released_span(con: duckdb.DuckDBPyConnection, cube: str) -> tuple[dt.date, dt.date] | None:
    """The first days of ``cube``'s oldest and newest released periods (None before any)."""
    row = con.execute(
        "SELECT min(day), max(day) FROM release_periods WHERE cube = $1", [cube]
    ).fetchone()
    if row is None or not isinstance(row[0], dt.date) or not isinstance(row[1], dt.date):
        return None
    return row[0], row[1]


def released_periods(con: duckdb.DuckDBPyConnection, cube: str) -> Sequence[dt.date]:
    rows = con.execute(
        "SELECT day FROM release_periods WHERE cube = $1 ORDER BY day", [cube]
    ).fetchall()
    return [r[0] for r in rows]


def purge_releases(con: duckdb.DuckDBPyConnection, first_kept: dt.date) -> None:
    """Releases follow the signals' retention window."""
    con.execute("DELETE FROM release_cells WHERE day < $1", [first_kept])
    con.execute("DELETE FROM release_periods WHERE day < $1", [first_kept])


def params_from_settings(settings: CollectorSettings) -> ReleasePlan:
    return settings.release_plan()
