"""The cells a triage answer is derived from, and the arithmetic of their noise.

A ``CellSource`` gives a cube's cells over whole periods: ``ReleasedSource`` the stored
releases (each cell with its period's sigma squared), ``ExactSource`` the same cells counted
from raw ``signals`` by the release's own SQL (sigma 0, the steward's view). Sums add
variances (the draws are independent); ``moe`` is the 95 % half-width of a sum. The
derivations themselves are in ``analysis._released``.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from operator import itemgetter
from typing import NamedTuple, Protocol

import duckdb

from analysis._filters import FilterError, Filters, Period, Version
from analysis._questions import last_day
from analysis._registry import Question
from collector.releases.cubes import CUBES
from collector.releases.store import count_period, last_released, read_noisy_cells
from contract.catalogue._versions import OTHER_VERSION
from contract.days import (
    PeriodKind,
    last_closed,
    period_end,
    period_start,
    periods_between,
    utc_today,
)

__all__ = [
    "CLOCK",
    "CUBES_OF",
    "CUBE_OF",
    "FILTERS_OF",
    "RELEASED_QUESTIONS",
    "Z95",
    "Acc",
    "CellSource",
    "ExactSource",
    "MemoSource",
    "NotReleased",
    "Noisy",
    "ReleasedSource",
    "above",
    "aligned",
    "check_filters",
    "default_period",
    "exact_period",
    "filtered",
    "idx_of",
    "last_released_day",
    "moe",
    "released_versions",
    "sd",
    "share",
    "shown",
    "sum_by",
    "version_matches",
    "vkey",
]

#: The two-sided 95 % normal quantile: ``moe = Z95 * sd``.
Z95 = 1.96
#: The cubes each released question reads (ring: ring2 for 2 calls, ring3 for 3).
CUBES_OF: Mapping[Question, tuple[str, ...]] = {
    Question.top: ("friction",),
    Question.trends: ("daily",),
    Question.regressions: ("versions",),
    Question.platforms: ("platforms",),
    Question.apps: ("apps",),
    Question.shapes: ("shapes",),
    Question.ring: ("ring2", "ring3"),
    Question.intents: ("intents",),
    Question.attempts: ("attempts",),
}
#: The first cube of each released question (its registry entry's ``cube``).
CUBE_OF: Mapping[Question, str] = {q: cubes[0] for q, cubes in CUBES_OF.items()}
RELEASED_QUESTIONS = tuple(CUBE_OF)
#: The filters each cube can answer: exactly the filter dimensions it has.
FILTERS_OF: Mapping[str, frozenset[str]] = {
    name: frozenset(d for d in ("platform", "version", "tool") if d in cube.dim_names)
    for name, cube in CUBES.items()
}
#: The cube the default period is read from: readers name its newest released period.
CLOCK = "friction"


class NotReleased(LookupError):
    """The question has no released cube."""


class Noisy(NamedTuple):
    """A cell (or a sum of cells) with its noise variance (a tuple: a view reads ~10^5)."""

    day: dt.date
    key: tuple[str, ...]
    n: float
    var: float


class CellSource(Protocol):
    """Where a derivation's cells come from: released (noisy) or exact (sigma 0)."""

    @property
    def source(self) -> str: ...

    def cells(self, cube: str, start: dt.date, end: dt.date) -> list[Noisy]: ...


@dataclass(frozen=True, slots=True)
class ReleasedSource:
    """The stored releases: each cell carries its period's sigma squared."""

    con: duckdb.DuckDBPyConnection
    source: str = "released"

    def cells(self, cube: str, start: dt.date, end: dt.date) -> list[Noisy]:
        return list(map(_as_noisy, read_noisy_cells(self.con, cube, start, end)))


@dataclass(frozen=True, slots=True)
class MemoSource:
    """``inner``'s cells, each (cube, start, end) read once: one page asks several questions
    of one cube (the versions cube: the regressions and the version filter)."""

    inner: CellSource
    memo: dict[tuple[str, dt.date, dt.date], list[Noisy]] = field(default_factory=dict)

    @property
    def source(self) -> str:
        return self.inner.source

    def cells(self, cube: str, start: dt.date, end: dt.date) -> list[Noisy]:
        key = (cube, start, end)
        if key not in self.memo:
            self.memo[key] = self.inner.cells(cube, start, end)
        return self.memo[key]


@dataclass(frozen=True, slots=True)
class ExactSource:
    """The same cells counted from raw ``signals`` by the release's own SQL, every cell of a
    known domain present (zeros included), with sigma 0. Steward role only."""

    con: duckdb.DuckDBPyConnection
    source: str = "exact"

    def cells(self, cube: str, start: dt.date, end: dt.date) -> list[Noisy]:
        c = CUBES[cube]
        out: list[Noisy] = []
        for day in periods_between(c.kind, start, end):
            counts = count_period(self.con, cube, day).counts
            if c.thresholded:
                out += [Noisy(day, k, float(counts[k]), 0.0) for k in sorted(counts)]
            else:
                get = counts.get
                out += [_new(Noisy, (day, k, float(get(k, 0)), 0.0)) for k in c.cells()]
        return out


# A Noisy from its four fields without a Python frame (``Noisy._make`` runs one per cell).
_new = tuple.__new__
_as_noisy = functools.partial(_new, Noisy)


def last_released_day(con: duckdb.DuckDBPyConnection) -> dt.date | None:
    """The last day of the newest released period (of the clock cube), None before any."""
    start = last_released(con, CLOCK)
    return None if start is None else period_end(CUBES[CLOCK].kind, start)


def default_period(
    con: duckdb.DuckDBPyConnection, filters: Filters, *, today: dt.date | None = None
) -> Period:
    """The period asked about: the filters' days, else the last 4 weeks ending at the newest
    released period (or, before any release, at the last closed week). Never releases."""
    end = last_released_day(con)
    if end is None:
        end = period_end(PeriodKind.week, last_closed(PeriodKind.week, today or utc_today()))
    return filters.resolve(end, today=max(end, today or utc_today()))


def exact_period(
    con: duckdb.DuckDBPyConnection, filters: Filters, *, today: dt.date | None = None
) -> Period:
    """The steward's default period on raw rows (a file may hold no release): the last 4 weeks
    ending at the week of the last signal, never past the last closed week -- the team's
    default whenever the releases are current."""
    now = today or utc_today()
    end = period_end(PeriodKind.week, last_closed(PeriodKind.week, now))
    data = last_day(con)
    if data is not None:
        end = min(end, period_end(PeriodKind.week, data))
    return filters.resolve(end, today=max(end, now))


def released_versions(src: CellSource, period: Period) -> tuple[str, ...]:
    """Versions of the versions cube whose count in the period is above its noise, newest
    first (for the dashboard's filter)."""
    cells = src.cells("versions", *aligned("versions", period))
    sums = sum_by(cells, (0,))
    seen = [k[0] for k, s in sums.items() if k[0] != OTHER_VERSION and s.n > Z95 * sd(s)]
    return tuple(sorted(seen, key=vkey, reverse=True))


def vkey(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def aligned(cube: str, period: Period) -> tuple[dt.date, dt.date]:
    """The first and last day of the whole periods of ``cube`` that cover ``period``."""
    kind = CUBES[cube].kind
    return period_start(kind, period.start), period_end(kind, period.end)


def check_filters(question: Question, filters: Filters) -> None:
    for cube in CUBES_OF[question]:
        allowed = FILTERS_OF[cube]
        for name in ("platform", "version", "tool"):
            if getattr(filters, name) is not None and name not in allowed:
                raise FilterError(
                    name, f"is not available for {question.value}: its release has no {name}"
                )


def version_matches(text: str, v: Version | None) -> bool:
    if v is None:
        return True
    if text == OTHER_VERSION:
        return False
    parts = vkey(text)
    want = (v.major, v.minor, v.patch)
    return all(w is None or w == p for w, p in zip(want, parts, strict=True))


def filtered(cube: str, cells: Iterable[Noisy], filters: Filters) -> list[Noisy]:
    """The cells whose tool and platform (those of the cube's dimensions) the filters take."""
    names = CUBES[cube].dim_names
    want = [(names.index(k), v.value) for k, v in (("tool", filters.tool),
            ("platform", filters.platform)) if v is not None and k in names]  # fmt: skip
    if not want:
        return list(cells)
    # itemgetter gives a tuple for two indexes, the bare value for one (a view reads ~10^5).
    pick = itemgetter(*(i for i, _ in want))
    target = tuple(v for _, v in want) if len(want) > 1 else want[0][1]
    return [c for c in cells if pick(c.key) == target]


def idx_of(cube: str, *names: str) -> tuple[int, ...]:
    dims = CUBES[cube].dim_names
    return tuple(dims.index(n) for n in names)


@dataclass(slots=True)
class Acc:
    n: float = 0.0
    var: float = 0.0


def sum_by(cells: Iterable[Noisy], idx: tuple[int, ...]) -> dict[tuple[str, ...], Acc]:
    """Cells summed by the dimensions at ``idx``; independent noise: variances add."""
    out: dict[tuple[str, ...], Acc] = {}
    get = out.get
    # A view sums ~10^5 cells: the key itself when ``idx`` is all of it (the ring's groups),
    # else itemgetter (a tuple for two indexes or more, the bare value for one).
    if not idx:
        raise ValueError("cells are summed by at least one dimension")
    pick = itemgetter(*idx) if len(idx) > 1 else None
    first = idx[0]
    whole: bool | None = None
    for _day, key, n, var in cells:
        if whole is None:
            whole = idx == tuple(range(len(key)))
        group: tuple[str, ...] = key if whole else pick(key) if pick else (key[first],)
        acc = get(group)
        if acc is None:
            out[group] = Acc(n, var)
        else:
            acc.n += n
            acc.var += var
    return out


def sd(a: Acc) -> float:
    return math.sqrt(a.var)


def shown(n: float) -> int:
    """A shown count: a whole number, never below 0 (noise can push a sum negative)."""
    return max(0, round(n))


def moe(var: float) -> int:
    return math.ceil(Z95 * math.sqrt(var)) if var > 0 else 0


def above(a: Acc) -> bool:
    """The count is above its own noise (its 95 % interval excludes 0)."""
    return a.n > Z95 * math.sqrt(a.var)  # sd(a), inlined: a view asks ~10^5 times


def share(part: Acc, total: Acc) -> tuple[float, float]:
    """A share in percent (1 decimal, in [0, 100]) and its 95 % half-width by the delta
    method: part and rest = total - part are independent, so
    Var(p) = (rest^2 var_part + part^2 var_rest) / total^4."""
    if total.n <= 0:
        return 0.0, 100.0
    p = min(1.0, max(0.0, part.n / total.n))
    rest_n, rest_var = total.n - part.n, max(0.0, total.var - part.var)
    var = (rest_n**2 * part.var + part.n**2 * rest_var) / total.n**4
    return round(100.0 * p, 1), round(min(100.0, 100.0 * Z95 * math.sqrt(var)), 1)
