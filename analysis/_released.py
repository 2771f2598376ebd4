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
    RELEASED_QUESTIONS,
    Z95,
    Acc,
    CellSource,
    ExactSource,
    NotReleased,
    ReleasedSource,
    above,
    aligned,
    breakdown,
    check_filters,
    coverage_of,
    filtered,
    idx_of,
    last_released_day,
    moe,
    series_by_day,
    share,
    shown,
    sum_by,
    version_matches,
    vkey,
)
from analysis._filters import FilterError, Filters, Period
from analysis._period import Coverage, NotCovered
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

__all__ = [
    "DERIVE",
    "NotCovered",
    "RELEASED_QUESTIONS",
    "ask",
    "ask_exact",
    "ask_released",
    "derive",
    "top_row",
    "last_released_day",
    "unavailable",
]

# -- the derivations: (source, coverage, filters, limit) -> rows, the same for both roles ----
# Each reads the cells of ``cov.period`` (whole weeks, every one released: ``analysis._period``)
# and, for a comparison, of ``cov.previous`` (the same length, released too, or None).


def _top(src: CellSource, cov: Coverage, filters: Filters, limit: int) -> list[Row]:
    period, previous = cov.period, cov.previous
    first = period.start if previous is None else previous.start
    cells = filtered("friction", src.cells("friction", first, period.end), filters)
    idx = idx_of("friction", "tool", "error_class", "friction_type")
    now = sum_by((c for c in cells if c.day >= period.start), idx)
    prev = sum_by((c for c in cells if c.day < period.start), idx)
    ranked = sorted(((k, a) for k, a in now.items() if above(a)), key=lambda kv: (-kv[1].n, kv[0]))
    return [top_row(key, a, None if previous is None else prev.get(key, Acc()))
            for key, a in ranked[:limit]]  # fmt: skip


def top_row(key: tuple[str, ...], a: Acc, p: Acc | None) -> TopRow:
    """A top row: the count, and against ``p`` (None: no comparison) the change with its noise
    (the two periods' variances add) and the change in percent, only against a previous count
    above its noise, with its margin by the delta method (Var(a/p) = var_a/p^2 + a^2 var_p/p^4)."""
    tool, cls, ft = key
    n = shown(a.n)
    if p is None:
        return TopRow(tool, cls, ft, n, moe(a.var), None, None, None, None, None, None)
    pn = shown(p.n)
    pct = pct_moe = None
    if above(p) and pn > 0:
        pct = round(100.0 * (n - pn) / pn, 1)
        var = a.var / p.n**2 + a.n**2 * p.var / p.n**4
        pct_moe = round(100.0 * Z95 * math.sqrt(var), 1)
    return TopRow(tool, cls, ft, n, moe(a.var), pn, moe(p.var), n - pn, moe(a.var + p.var),
                  pct, pct_moe)  # fmt: skip


def _trends(src: CellSource, cov: Coverage, filters: Filters, _limit: int) -> list[Row]:
    period = cov.period
    # The 7 released days before each day feed its spike baseline.
    cells = filtered("daily", src.cells("daily", period.start - dt.timedelta(days=7),
                                         period.end), filters)  # fmt: skip
    (ft,) = idx_of("daily", "friction_type")
    daily = series_by_day(cells, ft)
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
                                 None if base is None else shown(base),
                                 None if base is None else moe(var_base), spike))  # fmt: skip
    return rows


def _shares(
    src: CellSource, cube: str, period: Period, filters: Filters, group: str, item: str
) -> list[tuple[str, str, Acc, Acc]]:
    """(group, item, the item as shown, the group's total as shown: ``breakdown``)."""
    cells = filtered(cube, src.cells(cube, *aligned(cube, period)), filters)
    by_group: dict[str, dict[str, Acc]] = defaultdict(dict)
    for (g, i), a in sum_by(cells, idx_of(cube, group, item)).items():
        by_group[g][i] = a
    out: list[tuple[str, str, Acc, Acc]] = []
    for g, parts in by_group.items():
        shown_parts, total = breakdown(parts)
        out += [(g, i, a, total) for i, a in shown_parts.items()]
    return out


def _platforms(src: CellSource, cov: Coverage, filters: Filters, _limit: int) -> list[Row]:
    out = _shares(src, "platforms", cov.period, filters, "platform", "tool")
    out.sort(key=lambda r: (r[0], -r[2].n, r[1]))
    return [PlatformRow(p, t, shown(a.n), moe(a.var), shown(tot.n), moe(tot.var),
                        *share(a, tot)) for p, t, a, tot in out]  # fmt: skip


def _apps(src: CellSource, cov: Coverage, filters: Filters, _limit: int) -> list[Row]:
    out = _shares(src, "apps", cov.period, filters, "tool", "app_state")
    out.sort(key=lambda r: (-r[3].n, r[0], -r[2].n, r[1]))
    return [AppRow(t, s, shown(a.n), moe(a.var), shown(tot.n), moe(tot.var), *share(a, tot))
            for t, s, a, tot in out]  # fmt: skip


def _single(src: CellSource, cube: str, period: Period) -> tuple[list[tuple[str, Acc]], Acc]:
    groups = sum_by(src.cells(cube, *aligned(cube, period)), (0,))
    shown_parts, total = breakdown({k[0]: a for k, a in groups.items()})
    return list(shown_parts.items()), total


def _intents(src: CellSource, cov: Coverage, _filters: Filters, _limit: int) -> list[Row]:
    groups, total = _single(src, "intents", cov.period)
    groups.sort(key=lambda kv: (-kv[1].n, kv[0]))
    return [IntentRow(i, shown(a.n), moe(a.var), *share(a, total)) for i, a in groups]


def _attempts(src: CellSource, cov: Coverage, _filters: Filters, _limit: int) -> list[Row]:
    groups, total = _single(src, "attempts", cov.period)
    order = CUBES["attempts"].dims[0].values
    groups.sort(key=lambda kv: order.index(kv[0]))
    return [AttemptRow(b, shown(a.n), moe(a.var), *share(a, total)) for b, a in groups]


def _shapes(src: CellSource, cov: Coverage, filters: Filters, limit: int) -> list[Row]:
    cells = filtered("shapes", src.cells("shapes", *aligned("shapes", cov.period)), filters)
    per_arg: dict[tuple[str, str], dict[tuple[str, str], Acc]] = defaultdict(dict)
    for (tool, arg, ty, size), a in sum_by(cells, idx_of("shapes", "tool", "arg", "arg_type",
                                                          "size")).items():  # fmt: skip
        per_arg[(tool, arg)][(ty, size)] = a
    groups: list[tuple[tuple[str, str, str, str], Acc, Acc]] = []
    for (tool, arg), parts in per_arg.items():
        shown_parts, total = breakdown(parts)
        groups += [((tool, arg, ty, size), a, total) for (ty, size), a in shown_parts.items()]
    ranked = sorted((g for g in groups if above(g[1])), key=lambda g: (-g[1].n, g[0]))[:limit]
    return [ShapeRow(t, arg, ty, s, shown(a.n), moe(a.var), *share(a, total))
            for (t, arg, ty, s), a, total in ranked]  # fmt: skip


def _ring(src: CellSource, cov: Coverage, filters: Filters, limit: int) -> list[Row]:
    rows: list[Row] = []
    for calls, cube in ((2, "ring2"), (3, "ring3")):
        cells = filtered(cube, src.cells(cube, *aligned(cube, cov.period)), filters)
        groups = sum_by(cells, tuple(range(len(CUBES[cube].dims))))
        ranked = sorted(((k, a) for k, a in groups.items() if above(a)),
                        key=lambda kv: (-kv[1].n, kv[0]))[:limit]  # fmt: skip
        for key, a in ranked:
            p2t, p2o = (key[0], key[1]) if calls == 3 else (None, None)
            p1t, p1o, tool, cls = key[-4:]
            rows.append(RingRow(calls, p2t, p2o, p1t, p1o, tool, cls, shown(a.n), moe(a.var)))
    return rows


def _regressions(src: CellSource, cov: Coverage, filters: Filters, limit: int) -> list[Row]:
    # Over all tools, then filtered: the overview and a tool's page list the same regressions.
    start, end = aligned("versions", cov.period)
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
                                *share(a, tot), shown(base.n), moe(base.var),
                                *share(base, base_tot), status)  # fmt: skip
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


_Derive = Callable[[CellSource, Coverage, Filters, int], list[Row]]
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


def derive(
    src: CellSource, question: Question, filters: Filters, cov: Coverage, limit: int
) -> Answer[Row]:
    """One question from one source over the resolved days ``cov``: checks the filters,
    derives the rows."""
    if question not in DERIVE:
        raise NotReleased(question.value)
    check_filters(question, filters)
    rows = DERIVE[question](src, cov, filters, limit)
    return Answer(question, cov.period, None, filters, tuple(rows), source=src.source,
                  coverage=cov)  # fmt: skip


def _suppressed(row: Row, k: int) -> Row:
    """A shown row's other exact counts under ``k`` hidden too (the previous period's count;
    a baseline of 0 means "none before" and is kept)."""
    if isinstance(row, TopRow) and row.prev_n is not None and row.prev_n < k:
        return replace(row, prev_n=None, prev_moe=None, change=None, change_moe=None,
                       change_pct=None, change_pct_moe=None)  # fmt: skip
    if isinstance(row, RegressionRow) and 0 < row.base_n < k:
        return replace(row, base_n=0, base_share_pct=0.0)
    return row


def unavailable(
    question: Question, cov: Coverage, filters: Filters, exc: FilterError, *, source: str
) -> Answer[Row]:
    """An answer without rows saying which filter its release cannot take (for pages)."""
    return Answer(question, cov.period, None, filters, (), source=source,
                  unavailable=str(exc), coverage=cov)  # fmt: skip


def ask_released(
    con: duckdb.DuckDBPyConnection,
    question: Question,
    filters: Filters | None = None,
    *,
    limit: int,
    period: Period | None = None,
    coverage: Coverage | None = None,
) -> Answer[Row]:
    """One question answered from released cells only (``NotReleased`` without a cube), over
    the filters' days (or ``period``) cut to the released weeks -- or over ``coverage``, when
    a page has resolved it for all its questions. ``NotCovered`` when no release covers them."""
    filters = filters or Filters()
    cov = coverage or coverage_of(con, filters, period=period)
    return derive(ReleasedSource(con), question, filters, cov, limit)


def ask_exact(
    con: duckdb.DuckDBPyConnection,
    question: Question,
    filters: Filters | None = None,
    *,
    limit: int,
    period: Period | None = None,
    k: int = 1,
    today: dt.date | None = None,
    coverage: Coverage | None = None,
) -> Answer[Row]:
    """The steward's exact answer: the same derivation over exact cells (sigma 0), over the
    file's closed weeks (``coverage_of(exact=True)``); rows whose count is below ``k`` are
    suppressed afterwards."""
    filters = filters or Filters()
    if k < 1:
        raise ValueError("k must be at least 1")
    cov = coverage or coverage_of(con, filters, exact=True, period=period, today=today)
    answer = derive(ExactSource(con), question, filters, cov, limit)
    kept = tuple(_suppressed(r, k) for r in answer.rows if r.n >= k)
    return Answer(question, answer.period, k, filters, kept, source="exact", coverage=cov)


def ask(
    con: duckdb.DuckDBPyConnection,
    question: Question,
    filters: Filters | None = None,
    *,
    k: int = DEFAULT_K,
    limit: int = DEFAULT_LIMIT,
    period: Period | None = None,
    coverage: Coverage | None = None,
) -> Answer[Row]:
    """The steward's exact answer (``ask_exact``) at the default threshold ``DEFAULT_K``."""
    return ask_exact(con, question, filters, limit=limit, period=period, k=k, coverage=coverage)
