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
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from operator import itemgetter
from typing import NamedTuple, Protocol, TypeVar

import duckdb

from analysis._filters import FilterError, Filters, Period, Version
from analysis._period import Coverage, Released, resolve
from analysis._questions import signal_days
from analysis._registry import Question
from collector.releases.cubes import CUBES
from collector.releases.store import count_period, read_noisy_cells
from collector.releases.store import released_span as store_released_span
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
    "breakdown",
    "check_filters",
    "coverage_of",
    "exact_span",
    "filtered",
    "idx_of",
    "last_released_day",
    "moe",
    "refused_filter",
    "released_span",
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


def released_span(con: duckdb.DuckDBPyConnection) -> Released | None:
    """What the team's answers can cover: the weeks of the clock cube's oldest to newest
    released period (every closed week between is released, empty ones too). None before any
    release. Every weekly cube is released with the clock cube; the daily cube's days too."""
    span = store_released_span(con, CLOCK)
    if span is None:
        return None
    kind = CUBES[CLOCK].kind
    return Released(period_start(kind, span[0]), period_end(kind, span[1]))


def last_released_day(con: duckdb.DuckDBPyConnection) -> dt.date | None:
    """The last day of the newest released period (of the clock cube), None before any."""
    span = released_span(con)
    return None if span is None else span.through


def exact_span(con: duckdb.DuckDBPyConnection, *, today: dt.date | None = None) -> Released | None:
    """What the steward's exact answers of a raw file can cover: the weeks from the first
    signal's to the newest closed one holding signals (the open week is never answered, as
    for the team). None when no closed week holds a signal."""
    days = signal_days(con)
    if days is None:
        return None
    week = PeriodKind.week
    # The earlier of the two days first: a signal dated 9999-12-31 has no week end.
    closed = period_end(week, last_closed(week, today or utc_today()))
    through = period_end(week, min(closed, days[1]))
    first = period_start(week, days[0])
    return None if first > through else Released(first, through, exact=True)


def coverage_of(
    con: duckdb.DuckDBPyConnection,
    filters: Filters,
    *,
    exact: bool = False,
    period: Period | None = None,
    today: dt.date | None = None,
) -> Coverage:
    """The days a request is answered over (``analysis._period.resolve``, the one rule): the
    filters' days (or ``period``, when given) against the connection's releases -- or, for the
    steward's ``exact`` view, its file's closed weeks. ``NotCovered`` when none is in them.
    Never releases."""
    if period is not None:
        filters = replace(filters, start=period.start, end=period.end)
    return resolve(filters, exact_span(con, today=today) if exact else released_span(con),
                   exact=exact)  # fmt: skip


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


def refused_filter(question: Question, filters: Filters) -> str | None:
    """The first set filter a cube of ``question`` has no dimension for (None: it takes them
    all)."""
    for cube in CUBES_OF[question]:
        for name in ("platform", "version", "tool"):
            if getattr(filters, name) is not None and name not in FILTERS_OF[cube]:
                return name
    return None


def check_filters(question: Question, filters: Filters) -> None:
    """``FilterError`` naming the first filter ``question``'s release cannot take."""
    name = refused_filter(question, filters)
    if name is not None:
        raise FilterError(name, f"is not available for {question.value}: its release has no {name}")


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


_K = TypeVar("_K")


def breakdown(parts: Mapping[_K, Acc]) -> tuple[dict[_K, Acc], Acc]:
    """The one clamping rule, for every view showing parts beside their total (a tool's app
    states, a platform's tools, a day's friction types and ``all``, a tool's week, the shares
    of intents, attempts and argument shapes). Noise can push a released sum below 0:

    - the total is the sum of all its parts' cells, a whole number never below 0 -- never the
      sum of clamped parts, which would add the positive half of every empty part's noise;
    - the parts are the whole numbers never below 0 closest to their released sums (least
      squares) that add up to that total: a part below 0 shows 0, and what it takes away is
      taken evenly from the parts above (each moves by less than its noise), then each is
      rounded so that the sum stays the total (largest remainders).

    So a view's rows add up to the total it shows, their shares to 100 %, and the total is
    as unbiased as the cells. The variances are the cells' own: the rule removes no noise."""
    keys = list(parts)
    values = [parts[k].n for k in keys]
    target = shown(sum(values))
    if target == 0:
        whole = [0] * len(keys)
    else:
        tau = _shift(values, target)
        whole = _whole([max(0.0, v - tau) for v in values], target)
    out = {k: Acc(float(n), parts[k].var) for k, n in zip(keys, whole, strict=True)}
    return out, Acc(float(target), sum(a.var for a in parts.values()))


def series_by_day(
    cells: Iterable[Noisy], index: int, *, since: dt.date | None = None
) -> dict[str, dict[dt.date, Acc]]:
    """Per series -- the cells' key at ``index`` (a friction type), and ``all`` -- each day's
    (or week's) sum of the cells from ``since`` on, every day's parts and ``all`` following
    ``breakdown`` (``all`` the sum of the day's cells, its parts adding up to it)."""
    parts_of: dict[dt.date, dict[str, Acc]] = defaultdict(lambda: defaultdict(Acc))
    for c in cells:
        if since is None or c.day >= since:
            acc = parts_of[c.day][c.key[index]]
            acc.n += c.n
            acc.var += c.var
    series: dict[str, dict[dt.date, Acc]] = defaultdict(dict)
    for day, parts in parts_of.items():
        shown_parts, total = breakdown(parts)
        for name, a in shown_parts.items():
            series[name][day] = a
        series["all"][day] = total
    return series


def _shift(values: list[float], target: int) -> float:
    """The ``tau`` with ``sum(max(0, v - tau)) == target`` (``target > 0``): the Euclidean
    projection onto the non-negative parts of that sum (Duchi et al. 2008)."""
    tau, total = 0.0, 0.0
    for j, u in enumerate(sorted(values, reverse=True), 1):
        total += u
        if u - (total - target) / j <= 0:
            break
        tau = (total - target) / j
    return tau


def _whole(raw: list[float], target: int) -> list[int]:
    """``raw`` (adding up to ``target``) as whole numbers adding up to it: each rounded down,
    then one more for the largest remainders (the first on a tie)."""
    floors = [math.floor(x) for x in raw]
    left = max(0, min(len(raw), target - sum(floors)))
    order = sorted(range(len(raw)), key=lambda i: (floors[i] - raw[i], i))
    for i in order[:left]:
        floors[i] += 1
    return floors


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
