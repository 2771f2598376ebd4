"""Computing and storing releases: once per (cube, closed received day), never redrawn.

A day is closed once it is before today (UTC). Cubes are keyed by the day a signal was
RECEIVED, so a late signal (its own ``day`` older) counts in the release of the day it arrived,
which is still open: a stored release never changes. ``release_closed_days`` is idempotent:
``release_days`` holds one row per (cube, day) with a primary key, written in the same
transaction as the cells, and days already there are skipped.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import duckdb

from collector.releases.cubes import CUBES, DEFAULT_SPLIT, Cube, cube_sql
from collector.releases.mechanism import Calibration, calibrate, release_counts

if TYPE_CHECKING:  # reading releases (triage) needs no settings model
    from collector.settings import CollectorSettings

__all__ = [
    "DEFAULT_CAP",
    "DEFAULT_DELTA",
    "DEFAULT_EPSILON",
    "Cell",
    "PrivacyParams",
    "params_from_settings",
    "pending_releases",
    "purge_releases",
    "read_cells",
    "release_closed_days",
    "release_day",
    "released_days",
]

DEFAULT_CAP = 10
DEFAULT_EPSILON = 1.0
DEFAULT_DELTA = 1e-6
#: Joins a cell's key values in ``release_cells.key`` (no enum label or version holds one).
KEY_SEP = "|"


@dataclass(frozen=True, slots=True)
class PrivacyParams:
    """The published privacy parameters: per installation per UTC day."""

    cap: int = DEFAULT_CAP
    epsilon_per_day: float = DEFAULT_EPSILON
    delta_per_day: float = DEFAULT_DELTA
    split: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_SPLIT))

    def __post_init__(self) -> None:
        if set(self.split) != set(CUBES) or any(v <= 0 for v in self.split.values()):
            raise ValueError("the split names every cube with a positive share")
        if abs(sum(self.split.values()) - 1.0) > 1e-9:
            raise ValueError("the split's shares sum to 1")

    def calibration(self, cube: str) -> Calibration:
        """The cube's noise scale and threshold: its share of epsilon and of delta."""
        share = self.split[cube]
        return calibrate(
            CUBES[cube].bounds(self.cap), self.epsilon_per_day * share, self.delta_per_day * share
        )


@dataclass(frozen=True, slots=True)
class Cell:
    day: dt.date
    key: tuple[str, ...]
    n: int


def _exact(con: duckdb.DuckDBPyConnection, cube: Cube, day: dt.date) -> dict[tuple[str, ...], int]:
    rows = con.execute(cube_sql(cube), {"day": day}).fetchall()
    return {tuple(str(v) for v in row[:-1]): int(row[-1]) for row in rows}


def release_day(
    con: duckdb.DuckDBPyConnection, cube_name: str, day: dt.date, params: PrivacyParams
) -> bool:
    """Release one cube for one closed day; False when it was already released."""
    cube = CUBES[cube_name]
    cal = params.calibration(cube_name)
    con.execute("BEGIN TRANSACTION")
    try:
        done = con.execute(
            "SELECT count(*) FROM release_days WHERE cube = $1 AND day = $2", [cube_name, day]
        ).fetchone()
        if done and done[0]:
            con.execute("ROLLBACK")
            return False
        noisy = release_counts(_exact(con, cube, day), cal)
        b = cal.bounds
        recorded = (
            f"epsilon={cal.epsilon:.6g} delta={cal.delta:.6g} scale={cal.scale:.6g} "
            f"cap={params.cap} l0={b.l0} l1={b.l1} linf={b.linf}"
        )
        con.execute(
            "INSERT INTO release_days VALUES ($1, $2, $3, $4, $5)",
            [cube_name, day, recorded, cal.threshold, len(noisy)],
        )
        if noisy:
            con.executemany(
                "INSERT INTO release_cells VALUES ($1, $2, $3, $4)",
                [[cube_name, day, KEY_SEP.join(key), n] for key, n in sorted(noisy.items())],
            )
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return True


def release_closed_days(
    con: duckdb.DuckDBPyConnection,
    today: dt.date,
    params: PrivacyParams,
    cubes: Iterable[str] = tuple(CUBES),
) -> list[tuple[str, dt.date]]:
    """Release every cube for every closed received day not yet released; return which."""
    return [
        (name, day)
        for name, day in pending_releases(con, today, cubes)
        if release_day(con, name, day, params)
    ]


def pending_releases(
    con: duckdb.DuckDBPyConnection, today: dt.date, cubes: Iterable[str] = tuple(CUBES)
) -> list[tuple[str, dt.date]]:
    """The (cube, closed received day) pairs holding signals and not yet released."""
    out: list[tuple[str, dt.date]] = []
    days = [
        r[0]
        for r in con.execute(
            "SELECT DISTINCT received_day FROM signals WHERE received_day < $1 ORDER BY 1", [today]
        ).fetchall()
    ]
    done = set(con.execute("SELECT cube, day FROM release_days").fetchall())
    for name in cubes:
        out += [(name, day) for day in days if (name, day) not in done]
    return out


def read_cells(
    con: duckdb.DuckDBPyConnection, cube: str, start: dt.date, end: dt.date
) -> list[Cell]:
    """The stored cells of one cube over an inclusive range of days (never recomputed)."""
    rows = con.execute(
        "SELECT day, key, n FROM release_cells WHERE cube = $1 AND day BETWEEN $2 AND $3 "
        "ORDER BY day, key",
        [cube, start, end],
    ).fetchall()
    return [Cell(day, tuple(str(key).split(KEY_SEP)), int(n)) for day, key, n in rows]


def released_days(con: duckdb.DuckDBPyConnection, cube: str) -> Sequence[dt.date]:
    rows = con.execute(
        "SELECT day FROM release_days WHERE cube = $1 ORDER BY day", [cube]
    ).fetchall()
    return [r[0] for r in rows]


def purge_releases(con: duckdb.DuckDBPyConnection, first_kept: dt.date) -> None:
    """Releases follow the signals' retention window."""
    con.execute("DELETE FROM release_cells WHERE day < $1", [first_kept])
    con.execute("DELETE FROM release_days WHERE day < $1", [first_kept])


def params_from_settings(settings: CollectorSettings) -> PrivacyParams:
    return PrivacyParams(
        cap=settings.release_contribution_cap,
        epsilon_per_day=settings.release_epsilon_per_day,
        delta_per_day=settings.release_delta_per_day,
        split=dict(settings.release_split),
    )
