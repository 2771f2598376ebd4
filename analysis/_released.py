"""The team's answers: every figure is post-processing of released cells, with its noise.

The collector stores, per closed period and per cube, differentially private counts
(``collector.releases``): every cell of a known domain each period, noisy, possibly negative.
A question only sums, divides, ranks and compares those stored cells, and carries their noise:
a sum of cells has the variance of the sum of their ``sigma**2`` (``released_scales``), so every
count comes with ``moe`` (the 95 % half-width). No raw row is read, no release is computed here.

The steward's exact view asks the *same* derivations of an exact source (``ExactSource``): the
same cube cells counted from ``signals`` by the release's own SQL, with sigma 0. So with the noise
off, the team's answer equals the exact one, question by question (a property test checks it).

Which filters a question takes follows from its cube's dimensions (``FILTERS_OF``); a filter a
cube cannot answer raises ``FilterError`` naming it, and the dashboard shows that message.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import replace

import duckdb

from analysis._cells import (
    CUBES_OF,
    RELEASED_QUESTIONS,
    Acc,
    CellSource,
    ExactSource,
    NotReleased,
    ReleasedSource,
    above,
    aligned,
    check_filters,
    default_period,
    exact_period,
    filtered,
    idx_of,
    last_released_day,
    moe,
    share,
    shown,
    sum_by,
    version_matches,
    vkey,
)
from analysis._filters import FilterError, Filters, Period
from analysis._questions import DEFAULT_K, DEFAULT_LIMIT, GROWTH, MIN_Z, SPIKE_RATIO, Answer
from analysis._registry import Question
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
from collector.releases.cubes import CUBES
from contract.catalogue._versions import OTHER_VERSION
from contract.days import PeriodKind

__all__ = [
    "DERIVE",
    "RELEASED_QUESTIONS",
    "ask",
    "ask_exact",
    "ask_released",
    "derive",
    "last_released_day",
    "unavailable",
]

# -- the derivations: (source, period, filters, limit) -> rows, the same for both roles -------


def _top(src: CellSource, period: Period, filters: Filters, limit: int) -> list[Row]:
    start, end = aligned("friction", period)
    prev_start, _ = aligned("friction", period.previous())
    cells = filtered("friction", src.cells("friction", prev_start, end), filters)
    idx = idx_of("friction", "tool", "error_class", "friction_type")
    now = sum_by((c for c in cells if c.day >= start), idx)
    prev = sum_by((c for c in cells if c.day < start), idx)
    ranked = sorted(((k, a) for k, a in now.items() if above(a)), key=lambda kv: (-kv[1].n, kv[0]))
    rows: list[Row] = []
    for key, a in ranked[:limit]:
        p = prev.get(key)
        n, pn = shown(a.n), None if p is None else shown(p.n)
        base = p is not None and above(p)
        pct = round(100.0 * (a.n - p.n) / p.n, 1) if base and p is not None else None
        change = None if pn is None else n - pn
        rows.append(TopRow(key[0], key[1], key[2], n, moe(a.var), pn, change, pct))
    return rows


def _trends(src: CellSource, period: Period, filters: Filters, _limit: int) -> list[Row]:
    # The 7 released days before each day feed its spike baseline.
    cells = filtered("daily", src.cells("daily", period.start - dt.timedelta(days=7),
                                         period.end), filters)  # fmt: skip
    (ft,) = idx_of("daily", "friction_type")
    daily: dict[str, dict[dt.date, Acc]] = defaultdict(lambda: defaultdict(Acc))
    for c in cells:
        for series in (c.key[ft], "all"):
            acc = daily[series][c.day]
            acc.n += c.n
            acc.var += c.var
    rows: list[Row] = []
    for series in sorted(daily, key=lambda s: (s != "all", s)):
        days = daily[series]
        for day in sorted(d for d in days if d >= period.start):
            before = [days[d] for d in days if day - dt.timedelta(days=7) <= d < day]
            base = sum(b.n for b in before) / len(before) if before else None
            a = days[day]
            # A spike: at SPIKE_RATIO x the baseline and MIN_Z noise sds above it and above 0
            # (at 1.96 sds, 1 in 40 days of an empty series would be a spike).
            var_base = sum(b.var for b in before) / len(before) ** 2 if before else 0.0
            spike = (base is not None and len(before) >= 3 and a.n >= SPIKE_RATIO * max(base, 0.0)
                     and a.n - base >= MIN_Z * math.sqrt(a.var + var_base)
                     and a.n >= MIN_Z * math.sqrt(a.var))  # fmt: skip
            rows.append(TrendRow(day, series, shown(a.n), moe(a.var),
                                 None if base is None else shown(base), spike))  # fmt: skip
    return rows


def _shares(
    src: CellSource, cube: str, period: Period, filters: Filters, group: str, item: str
) -> list[tuple[str, str, Acc, Acc]]:
    cells = filtered(cube, src.cells(cube, *aligned(cube, period)), filters)
    groups = sum_by(cells, idx_of(cube, group, item))
    totals: dict[str, Acc] = defaultdict(Acc)
    for (g, _), a in groups.items():
        totals[g].n += a.n
        totals[g].var += a.var
    return [(g, i, a, totals[g]) for (g, i), a in groups.items()]


def _platforms(src: CellSource, period: Period, filters: Filters, _limit: int) -> list[Row]:
    out = _shares(src, "platforms", period, filters, "platform", "tool")
    out.sort(key=lambda r: (r[0], -r[2].n, r[1]))
    return [PlatformRow(p, t, shown(a.n), moe(a.var), shown(tot.n), *share(a, tot))
            for p, t, a, tot in out]  # fmt: skip


def _apps(src: CellSource, period: Period, filters: Filters, _limit: int) -> list[Row]:
    out = _shares(src, "apps", period, filters, "tool", "app_state")
    out.sort(key=lambda r: (-r[3].n, r[0], -r[2].n, r[1]))
    return [AppRow(t, s, shown(a.n), moe(a.var), shown(tot.n), *share(a, tot))
            for t, s, a, tot in out]  # fmt: skip


def _single(src: CellSource, cube: str, period: Period) -> tuple[list[tuple[str, Acc]], Acc]:
    groups = sum_by(src.cells(cube, *aligned(cube, period)), (0,))
    total = Acc(sum(a.n for a in groups.values()), sum(a.var for a in groups.values()))
    return [(k[0], a) for k, a in groups.items()], total


def _intents(src: CellSource, period: Period, _filters: Filters, _limit: int) -> list[Row]:
    groups, total = _single(src, "intents", period)
    groups.sort(key=lambda kv: (-kv[1].n, kv[0]))
    return [IntentRow(i, shown(a.n), moe(a.var), *share(a, total)) for i, a in groups]


def _attempts(src: CellSource, period: Period, _filters: Filters, _limit: int) -> list[Row]:
    groups, total = _single(src, "attempts", period)
    order = CUBES["attempts"].dims[0].values
    groups.sort(key=lambda kv: order.index(kv[0]))
    return [AttemptRow(b, shown(a.n), moe(a.var), *share(a, total)) for b, a in groups]


def _shapes(src: CellSource, period: Period, filters: Filters, limit: int) -> list[Row]:
    cells = filtered("shapes", src.cells("shapes", *aligned("shapes", period)), filters)
    groups = sum_by(cells, idx_of("shapes", "tool", "arg", "arg_type", "size"))
    per_arg: dict[tuple[str, str], Acc] = defaultdict(Acc)
    for (tool, arg, _, _), a in groups.items():
        per_arg[(tool, arg)].n += a.n
        per_arg[(tool, arg)].var += a.var
    ranked = sorted(((k, a) for k, a in groups.items() if above(a)),
                    key=lambda kv: (-kv[1].n, kv[0]))[:limit]  # fmt: skip
    return [ShapeRow(t, arg, ty, s, shown(a.n), moe(a.var), *share(a, per_arg[(t, arg)]))
            for (t, arg, ty, s), a in ranked]  # fmt: skip


def _ring(src: CellSource, period: Period, filters: Filters, limit: int) -> list[Row]:
    rows: list[Row] = []
    for calls, cube in ((2, "ring2"), (3, "ring3")):
        cells = filtered(cube, src.cells(cube, *aligned(cube, period)), filters)
        groups = sum_by(cells, tuple(range(len(CUBES[cube].dims))))
        ranked = sorted(((k, a) for k, a in groups.items() if above(a)),
                        key=lambda kv: (-kv[1].n, kv[0]))[:limit]  # fmt: skip
        for key, a in ranked:
            p2t, p2o = (key[0], key[1]) if calls == 3 else (None, None)
            p1t, p1o, tool, cls = key[-4:]
            rows.append(RingRow(calls, p2t, p2o, p1t, p1o, tool, cls, shown(a.n), moe(a.var)))
    return rows


def _regressions(src: CellSource, period: Period, filters: Filters, limit: int) -> list[Row]:
    # Over all tools, then filtered: the overview and a tool's page list the same regressions.
    start, end = aligned("versions", period)
    cells = src.cells("versions", start, end)
    n_of = sum_by(cells, (0, 1, 2))
    totals = sum_by(cells, (0,))
    first: dict[str, dt.date] = {}
    by_day: dict[tuple[str, dt.date], Acc] = defaultdict(Acc)
    for c in cells:
        by_day[(c.key[0], c.day)].n += c.n
        by_day[(c.key[0], c.day)].var += c.var
    for (version, day), a in sorted(by_day.items(), key=lambda kv: kv[0][1]):
        if above(a):
            first.setdefault(version, day)
    # A version is in the order once its count is clearly above noise (first released period).
    order = sorted((v for (v,) in totals if v != OTHER_VERSION and v in first), key=vkey)
    found: list[tuple[tuple[int, ...], bool, float, str, str, RegressionRow]] = []
    for i, version in enumerate(order):
        earlier = order[:i]
        if not earlier:
            continue
        tot = totals[(version,)]
        base_tot = Acc(sum(totals[(e,)].n for e in earlier), sum(totals[(e,)].var for e in earlier))
        if tot.n <= 0 or base_tot.n <= 0:
            continue
        for (v, tool, cls), a in n_of.items():
            if v != version:
                continue
            prior = [n_of[(e, tool, cls)] for e in earlier if (e, tool, cls) in n_of]
            base = Acc(sum(b.n for b in prior), sum(b.var for b in prior))
            status = _status(a, tot, base, base_tot)
            if status is None:
                continue
            row = RegressionRow(version, first[version], tool, cls, shown(a.n), moe(a.var),
                                share(a, tot)[0], shown(base.n), share(base, base_tot)[0],
                                status)  # fmt: skip
            found.append((vkey(version), status == "new", a.n, tool, cls, row))
    found.sort(key=lambda r: (tuple(-x for x in r[0]), not r[1], -r[2], r[3], r[4]))
    rows = [r[-1] for r in found if version_matches(r[-1].version, filters.version)
            and (filters.tool is None or r[-1].tool == filters.tool.value)]  # fmt: skip
    return list(rows[:limit])


def _status(a: Acc, tot: Acc, base: Acc, base_tot: Acc) -> str | None:
    """A regression when the share grew GROWTH x and z = (p - p0) / sqrt(p(1-p)/T +
    p0(1-p0)/B + noise) >= MIN_Z, the noise terms being the shares' variances from the cells'
    noise; ``new`` when, besides, the baseline is within noise of 0, else ``growing``. The
    same test for both labels: a baseline lost in noise is not evidence of a new failure."""
    p = min(1.0, max(0.0, a.n / tot.n))
    p0 = min(1.0, max(0.0, base.n / base_tot.n))
    if not (p >= GROWTH * p0 and base.n < base_tot.n):
        return None
    noise = (a.var + p**2 * tot.var) / tot.n**2 + (base.var + p0**2 * base_tot.var) / base_tot.n**2
    var = p * (1 - p) / tot.n + p0 * (1 - p0) / base_tot.n + noise
    # No variance at all (exact shares of 0 or 1): any growth is certain.
    if not (p > p0 if var <= 0 else (p - p0) / math.sqrt(var) >= MIN_Z):
        return None
    return "growing" if above(base) else "new"


_Derive = Callable[[CellSource, Period, Filters, int], list[Row]]
#: How each released question's rows derive from its cubes' cells; both roles use these.
DERIVE: Mapping[Question, _Derive] = {
    Question.top: _top,
    Question.trends: _trends,
    Question.platforms: _platforms,
    Question.apps: _apps,
    Question.intents: _intents,
    Question.attempts: _attempts,
    Question.shapes: _shapes,
    Question.ring: _ring,
    Question.regressions: _regressions,
}


def _note(question: Question, period: Period) -> str | None:
    kinds = {CUBES[c].kind for c in CUBES_OF[question]}
    if PeriodKind.week not in kinds:
        return None
    start, end = aligned(CUBES_OF[question][0], period)
    if (start, end) == (period.start, period.end):
        return None
    return f"aligned to whole weeks: {start.isoformat()} to {end.isoformat()}"


def derive(
    src: CellSource, question: Question, filters: Filters, period: Period, limit: int
) -> Answer[Row]:
    """One question from one source: checks the filters, aligns the period, derives rows."""
    if question not in DERIVE:
        raise NotReleased(question.value)
    check_filters(question, filters)
    rows = DERIVE[question](src, period, filters, limit)
    shown = period
    if (note := _note(question, period)) is not None:
        shown = Period(*aligned(CUBES_OF[question][0], period))
    return Answer(question, shown, None, filters, tuple(rows), source=src.source, note=note)


def _suppressed(row: Row, k: int) -> Row:
    """A shown row's other exact counts under ``k`` hidden too (the previous period's count;
    a baseline of 0 means "none before" and is kept)."""
    if isinstance(row, TopRow) and row.prev_n is not None and row.prev_n < k:
        return replace(row, prev_n=None, change=None, change_pct=None)
    if isinstance(row, RegressionRow) and 0 < row.base_n < k:
        return replace(row, base_n=0, base_share_pct=0.0)
    return row


def unavailable(
    question: Question, period: Period, filters: Filters, exc: FilterError, *, source: str
) -> Answer[Row]:
    """An answer without rows saying which filter its release cannot take (for pages)."""
    return Answer(question, period, None, filters, (), source=source, unavailable=str(exc))


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
    if period is None:
        period = default_period(con, filters)
    return derive(ReleasedSource(con), question, filters, period, limit)


def ask_exact(
    con: duckdb.DuckDBPyConnection,
    question: Question,
    filters: Filters | None = None,
    *,
    limit: int,
    period: Period | None = None,
    k: int = 1,
) -> Answer[Row]:
    """The steward's exact answer: the same derivation over exact cells (sigma 0); rows whose
    count is below ``k`` are suppressed afterwards."""
    filters = filters or Filters()
    if period is None:
        period = exact_period(con, filters)
    if k < 1:
        raise ValueError("k must be at least 1")
    answer = derive(ExactSource(con), question, filters, period, limit)
    kept = tuple(_suppressed(r, k) for r in answer.rows if r.n >= k)
    return Answer(question, answer.period, k, filters, kept, source="exact", note=answer.note)


def ask(
    con: duckdb.DuckDBPyConnection,
    question: Question,
    filters: Filters | None = None,
    *,
    k: int = DEFAULT_K,
    limit: int = DEFAULT_LIMIT,
    period: Period | None = None,
) -> Answer[Row]:
    """The steward's exact answer (``ask_exact``) at the default threshold ``DEFAULT_K``."""
    return ask_exact(con, question, filters, limit=limit, period=period, k=k)
