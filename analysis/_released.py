"""The team's answers: every figure is post-processing of released daily cells.

The collector stores, per closed UTC day and per cube, differentially private counts
(``collector.releases``). A question over a period only sums, divides, ranks and compares
those stored cells, so asking again gives the same numbers and two overlapping periods subtract
to released cells, never to a new fact about one signal. No raw row is read here.

Which filters a question takes follows from its cube: ``platforms`` has platform and tool,
``daily`` platform, ``versions`` version and tool, ``friction``/``context``/``shapes``/``ring``
tool only. A filter a cube
cannot answer raises ``FilterError`` (naming the filter).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping

import duckdb

from analysis._filters import FilterError, Filters, Period, Version
from analysis._questions import GROWTH, MIN_Z, SPIKE_RATIO, Answer, Question
from analysis._rows import (
    AppRow,
    AttemptRow,
    IntentRow,
    PlatformRow,
    RegressionRow,
    RingRow,
    Row,
    ShapeRow,
    TopRow,
    TrendRow,
)
from collector.releases.store import Cell, read_cells
from contract.schema import AttemptsBucket

__all__ = [
    "CUBE_OF",
    "NotReleased",
    "RELEASED_QUESTIONS",
    "ask_released",
    "last_released_day",
    "released_versions",
]

#: The cube each released question is derived from (its registry entry's ``cube``).
CUBE_OF: Mapping[Question, str] = {q: q.spec.cube for q in Question if q.spec.cube is not None}
RELEASED_QUESTIONS = tuple(CUBE_OF)
_FILTERS_OF = {
    "friction": {"tool"},
    "platforms": {"platform", "tool"},
    "daily": {"platform"},
    "versions": {"version", "tool"},
    "context": {"tool"},
    "shapes": {"tool"},
    "ring": {"tool"},
}


#: The attempts buckets in the order the steward's exact view shows them (attempts.sql).
_ATTEMPTS_ORDER = (*(b.value for b in AttemptsBucket), "unspecified")
#: The attempts key of a context cell released before that dimension existed.
_BEFORE_ATTEMPTS = "-"


class NotReleased(LookupError):
    """The question has no released cube."""


def last_released_day(con: duckdb.DuckDBPyConnection) -> dt.date | None:
    row = con.execute("SELECT max(day) FROM release_days").fetchone()
    value = row[0] if row else None
    return value if isinstance(value, dt.date) else None


def released_versions(con: duckdb.DuckDBPyConnection, period: Period) -> tuple[str, ...]:
    """Versions with a released cell in the period, newest first (for the dashboard's filter)."""
    seen = {c.key[0] for c in read_cells(con, "versions", period.start, period.end)}
    return tuple(sorted(seen, key=_vkey, reverse=True))


def _vkey(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def _check_filters(cube: str, filters: Filters) -> None:
    allowed = _FILTERS_OF[cube]
    for name in ("platform", "version", "tool"):
        if getattr(filters, name) is not None and name not in allowed:
            raise FilterError(name, "is not available for this question's release")


def _version_matches(text: str, v: Version | None) -> bool:
    if v is None:
        return True
    parts = _vkey(text)
    want = (v.major, v.minor, v.patch)
    return all(w is None or w == p for w, p in zip(want, parts, strict=True))


def _cells(
    con: duckdb.DuckDBPyConnection, cube: str, start: dt.date, end: dt.date, filters: Filters
) -> list[Cell]:
    tool = None if filters.tool is None else filters.tool.value
    platform = None if filters.platform is None else filters.platform.value
    out = []
    for cell in read_cells(con, cube, start, end):
        if cube == "context" and len(cell.key) == len(_DIMS[cube]) - 1:
            # Released before the attempts dimension: a marginal over attempts, kept as stored.
            cell = Cell(cell.day, (*cell.key, _BEFORE_ATTEMPTS), cell.n)
        d = dict(zip(_DIMS[cube], cell.key, strict=True))
        if tool is not None and d["tool"] != tool:
            continue
        if platform is not None and d.get("platform") != platform:
            continue
        out.append(cell)
    return out


def _dims() -> dict[str, tuple[str, ...]]:
    from collector.releases.cubes import CUBES

    return {name: cube.dim_names for name, cube in CUBES.items()}


_DIMS = _dims()


def _idx(cube: str, *names: str) -> tuple[int, ...]:
    return tuple(_DIMS[cube].index(n) for n in names)


def _sum(cells: Iterable[Cell], idx: tuple[int, ...]) -> dict[tuple[str, ...], int]:
    out: dict[tuple[str, ...], int] = defaultdict(int)
    for c in cells:
        out[tuple(c.key[i] for i in idx)] += c.n
    return out


def _pct(n: float, total: float, digits: int = 1) -> float:
    return round(100.0 * n / total, digits) if total else 0.0


def _top(cells: list[Cell], period: Period, limit: int) -> list[Row]:
    idx = _idx("friction", "tool", "error_class", "friction_type")
    now = _sum((c for c in cells if c.day >= period.start), idx)
    prev = _sum((c for c in cells if c.day < period.start), idx)
    rows: list[Row] = []
    for key, n in sorted(now.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]:
        p = prev.get(key)
        rows.append(
            TopRow(key[0], key[1], key[2], n, p, None if p is None else n - p,
                   None if p is None else round(100.0 * (n - p) / p, 1))
        )  # fmt: skip
    return rows


def _trends(cells: list[Cell], period: Period) -> list[Row]:
    (ft,) = _idx("daily", "friction_type")
    daily: dict[str, dict[dt.date, int]] = defaultdict(lambda: defaultdict(int))
    for c in cells:
        daily[c.key[ft]][c.day] += c.n
        daily["all"][c.day] += c.n
    rows: list[Row] = []
    for series in sorted(daily, key=lambda s: (s != "all", s)):
        days = daily[series]
        for day in sorted(days):
            if day < period.start:
                continue
            before = [days[d] for d in days if day - dt.timedelta(days=7) <= d < day]
            base = sum(before) / len(before) if before else None
            spike = base is not None and len(before) >= 3 and days[day] >= SPIKE_RATIO * base
            rows.append(TrendRow(day, series, days[day], None if base is None else round(base, 2),
                                 spike))  # fmt: skip
    return rows


def _platforms(cells: list[Cell]) -> list[Row]:
    groups = _sum(cells, _idx("platforms", "platform", "tool"))
    totals: dict[str, int] = defaultdict(int)
    for (plat, _), n in groups.items():
        totals[plat] += n
    ordered = sorted(groups.items(), key=lambda kv: (kv[0][0], -kv[1], kv[0][1]))
    return [PlatformRow(p, t, n, totals[p], _pct(n, totals[p])) for (p, t), n in ordered]


def _apps(cells: list[Cell]) -> list[Row]:
    groups = _sum(cells, _idx("context", "tool", "app_state"))
    totals: dict[str, int] = defaultdict(int)
    for (tool, _), n in groups.items():
        totals[tool] += n
    ordered = sorted(groups.items(), key=lambda kv: (-totals[kv[0][0]], kv[0][0], -kv[1], kv[0][1]))
    return [AppRow(t, s, n, totals[t], _pct(n, totals[t])) for (t, s), n in ordered]


def _intents(cells: list[Cell]) -> list[Row]:
    groups = _sum(cells, _idx("context", "intent"))
    total = sum(groups.values())
    ordered = sorted(groups.items(), key=lambda kv: (-kv[1], kv[0]))
    return [IntentRow(i, n, _pct(n, total)) for (i,), n in ordered]


def _attempts(cells: list[Cell]) -> list[Row]:
    groups = _sum(cells, _idx("context", "attempts"))
    groups.pop((_BEFORE_ATTEMPTS,), None)  # no bucket was released for those days
    total = sum(groups.values())
    ordered = sorted(groups.items(), key=lambda kv: _ATTEMPTS_ORDER.index(kv[0][0]))
    return [AttemptRow(a, n, _pct(n, total)) for (a,), n in ordered]


def _shapes(cells: list[Cell], limit: int) -> list[Row]:
    groups = _sum(cells, _idx("shapes", "tool", "arg", "arg_type", "size"))
    per_arg: dict[tuple[str, str], int] = defaultdict(int)
    for (tool, arg, _, _), n in groups.items():
        per_arg[(tool, arg)] += n
    ordered = sorted(groups.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    return [ShapeRow(t, a, ty, s, n, _pct(n, per_arg[(t, a)])) for (t, a, ty, s), n in ordered]


def _ring(cells: list[Cell], limit: int) -> list[Row]:
    groups = _sum(cells, tuple(range(len(_DIMS["ring"]))))
    rows: list[Row] = []
    for calls in ("2", "3"):
        mine = [(k, n) for k, n in groups.items() if k[0] == calls]
        for key, n in sorted(mine, key=lambda kv: (-kv[1], kv[0]))[:limit]:
            _, p2t, p2o, p1t, p1o, tool, cls = key
            rows.append(RingRow(int(calls), None if p2t == "-" else p2t,
                                None if p2o == "-" else p2o, p1t, p1o, tool, cls, n))  # fmt: skip
    return rows


def _regressions(cells: list[Cell], filters: Filters, limit: int) -> list[Row]:
    n_of: dict[tuple[str, str, str], int] = defaultdict(int)
    first: dict[str, dt.date] = {}
    for c in cells:
        version, tool, cls = c.key
        n_of[(version, tool, cls)] += c.n
        first[version] = min(first.get(version, c.day), c.day)
    totals: dict[str, int] = defaultdict(int)
    for (version, _, _), n in n_of.items():
        totals[version] += n
    order = sorted(totals, key=_vkey)
    rows: list[tuple[tuple[int, ...], bool, int, str, str, RegressionRow]] = []
    for i, version in enumerate(order):
        earlier = order[:i]
        base_total = sum(totals[v] for v in earlier)
        if not earlier or not _version_matches(version, filters.version):
            continue
        total = totals[version]
        for (v, tool, cls), n in n_of.items():
            if v != version:
                continue
            base_n = sum(n_of.get((e, tool, cls), 0) for e in earlier)
            p, p0 = n / total, base_n / base_total
            status = "new" if base_n == 0 else "growing"
            if base_n and not (
                p >= GROWTH * p0 and base_n < base_total
                and (p - p0) / ((p0 * (1 - p0) / total) ** 0.5) >= MIN_Z
            ):  # fmt: skip
                continue
            row = RegressionRow(version, first[version], tool, cls, n, _pct(n, total, 2), base_n,
                                _pct(base_n, base_total, 2), status)  # fmt: skip
            rows.append((_vkey(version), status == "new", n, tool, cls, row))
    rows.sort(key=lambda r: (tuple(-x for x in r[0]), not r[1], -r[2], r[3], r[4]))
    return [r[-1] for r in rows[:limit]]


_Derive = Callable[[list[Cell], Period, Filters, int], list[Row]]
#: How each released question's rows derive from its cube's cells (cells, period, filters,
#: limit); a test checks that every question with a cube in the registry has one.
_DERIVE: Mapping[Question, _Derive] = {
    Question.top: lambda cells, period, _filters, limit: _top(cells, period, limit),
    Question.trends: lambda cells, period, _filters, _limit: _trends(cells, period),
    Question.platforms: lambda cells, _period, _filters, _limit: _platforms(cells),
    Question.apps: lambda cells, _period, _filters, _limit: _apps(cells),
    Question.intents: lambda cells, _period, _filters, _limit: _intents(cells),
    Question.attempts: lambda cells, _period, _filters, _limit: _attempts(cells),
    Question.shapes: lambda cells, _period, _filters, limit: _shapes(cells, limit),
    Question.ring: lambda cells, _period, _filters, limit: _ring(cells, limit),
    Question.regressions: lambda cells, _period, filters, limit: _regressions(
        cells, filters, limit
    ),
}


def ask_released(
    con: duckdb.DuckDBPyConnection,
    question: Question,
    filters: Filters | None = None,
    *,
    limit: int,
    period: Period | None = None,
) -> Answer[Row]:
    """One question answered from released cells only (``NotReleased`` without a cube)."""
    filters = filters or Filters()
    cube = CUBE_OF.get(question)
    if cube is None:
        raise NotReleased(question.value)
    _check_filters(cube, filters)
    if period is None:
        period = filters.resolve(last_released_day(con))
    start = period.start
    if question is Question.top:  # the change against the previous period
        start = period.previous().start
    elif question is Question.trends:  # the 7 days before feed the spike baseline
        start = period.start - dt.timedelta(days=7)
    cells = _cells(con, cube, start, period.end, filters)
    rows = _DERIVE[question](cells, period, filters, limit)
    return Answer(question, period, None, filters, tuple(rows), source="released")
