"""What the lake's release tests share: the closed week of ``DAY``, its window, the cubes by
period kind, a no-noise plan, and the release table read as records and cells."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from collector.lake.releases import LakeReleases
from collector.lake.store import LakeStore
from collector.releases.cubes import CUBES
from contract.accountant import ReleasePlan
from contract.days import PeriodKind
from tests.lake.conftest import DAY

__all__ = [
    "DAILY",
    "NO_NOISE",
    "WEEKLY",
    "WEEK_CLOSED",
    "WINDOW",
    "cells",
    "records",
    "week_periods",
]

#: DAY is a Monday: its week's last day is DAY + 6, closed once LATE_DAYS (2) more passed.
assert DAY.weekday() == 0
WEEK_CLOSED = DAY + dt.timedelta(days=9)
#: From WEEK_CLOSED, a window reaching DAY: the week of DAY and its seven days.
WINDOW = 9
WEEKLY = sorted(c for c in CUBES if CUBES[c].kind is PeriodKind.week)
DAILY = sorted(c for c in CUBES if CUBES[c].kind is PeriodKind.day)
#: A Gaussian of scale below 1e-4 on every cube: a draw equals the exact counts (the chance
#: of a rounding away from them is nil), so a lake release can be compared with a file's.
NO_NOISE = ReleasePlan(rho=1e12)


def week_periods(day: dt.date = DAY) -> list[tuple[str, dt.date]]:
    days = [day + dt.timedelta(days=i) for i in range(7)]
    return sorted([(c, day) for c in WEEKLY] + [(c, d) for c in DAILY for d in days])


def records(store: LakeStore) -> list[tuple[str, dt.date]]:
    table = LakeReleases(store).read()
    records = table.filter(pc.is_null(table.column("key")))
    cols = [records.column(c).to_pylist() for c in ("cube", "day")]
    return sorted(zip(*cols, strict=True))


def cells(table: pa.Table) -> list[tuple[Any, ...]]:
    cells = table.filter(pc.is_valid(table.column("key")))
    cols = [cells.column(c).to_pylist() for c in ("cube", "day", "key", "n")]
    return sorted(zip(*cols, strict=True))
