"""A friction's own page: one tool x error class x friction type, from released cells only.

The key is the ``friction`` cube's (``collector.releases.cubes``): its cells give the friction's
count per released week, with the noise of each. The releases are not crossed with each other
(a cube crossing every dimension would sum too much noise per figure), so the page's other
panels read the cube closest to the friction, and say so:

- **versions**: the ``versions`` cube (version x tool x error class), all friction types of
  the tool and error class, each version's count with its share of the version's signals, and
  the regressions view's label when it lists that version;
- **platforms**, **apps**, **shapes**: the tool's answers of those questions (the tool's page
  panels, the same figures), over the same weeks.

Every figure is a sum of released cells with its variance (``analysis._cells``); the same
derivations over ``ExactSource`` give the exact figures (sigma 0), so with the noise off they
equal the exact counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from analysis._cells import (
    Acc,
    CellSource,
    Noisy,
    above,
    aligned,
    idx_of,
    moe,
    series_by_day,
    share,
    shown,
    sum_by,
    vkey,
)
from analysis._filters import Filters, Period
from analysis._period import Coverage
from analysis._questions import Answer
from analysis._registry import Question
from analysis._released import derive, top_row
from analysis._rows import FrictionVersionRow, RegressionRow, Row, TopRow, WeekRow
from contract.catalogue._versions import OTHER_VERSION
from contract.days import PeriodKind, period_end
from contract.schema import ErrorClass, FrictionType, ToolName

__all__ = [
    "PANELS",
    "TOOL_PANELS",
    "FrictionFigures",
    "FrictionKey",
    "friction_figures",
    "tool_trend",
    "week_rows",
]

#: The friction's own panels: name -> (title, summary).
PANELS: dict[str, tuple[str, str]] = {
    "trend": (
        "Trend per week",
        "This friction's released count per week; the band: its 95 % noise interval.",
    ),
    "versions": (
        "Client versions",
        "Per version: this tool and error class (all friction types: the versions release "
        "has no friction type), with its share of the version's signals.",
    ),
}
#: The tool's panels shown on a friction's page (its tool page's figures, same weeks).
TOOL_PANELS = (Question.platforms, Question.apps, Question.shapes)
#: Rows a tool panel lists (the dashboard's page limit).
_TOOL_ROWS = 100
_ALL = 1 << 62


@dataclass(frozen=True, slots=True)
class FrictionKey:
    """One cell key of the ``friction`` cube: catalogue and enum names only."""

    tool: ToolName
    error_class: ErrorClass
    friction_type: FrictionType

    @classmethod
    def parse(cls, tool: str, error_class: str, friction_type: str) -> FrictionKey | None:
        """The key from path segments; None unless each is a known name."""
        try:
            return cls(ToolName(tool), ErrorClass(error_class), FrictionType(friction_type))
        except ValueError:
            return None

    @property
    def cell(self) -> tuple[str, str, str]:
        return self.tool.value, self.error_class.value, self.friction_type.value

    @property
    def path(self) -> str:
        """The page's path under the dashboard (enum values: nothing to quote)."""
        return "/dashboard/friction/" + "/".join(self.cell)

    @property
    def label(self) -> str:
        return f"{self.tool.value} \u00b7 {self.error_class.value} ({self.friction_type.value})"


@dataclass(frozen=True, slots=True)
class FrictionFigures:
    """Everything a friction's page shows (post-processing of one source's cells)."""

    key: FrictionKey
    #: The days covered and what they are compared with (``analysis._period``).
    coverage: Coverage
    source: str
    #: The friction's count, its count in ``coverage.previous`` and the change, with their
    #: margins: exactly its row of the top table (``top_row``). ``row.prev_n`` is None when
    #: the previous period is not all released.
    row: TopRow
    #: The count is above its noise (its 95 % interval excludes 0).
    above: bool
    trend: tuple[WeekRow, ...]
    versions: tuple[FrictionVersionRow, ...]
    #: The tool's answers of ``TOOL_PANELS`` over ``period``.
    tool_answers: tuple[Answer[Row], ...]

    @property
    def period(self) -> Period:
        return self.coverage.period

    @property
    def previous(self) -> Period:
        """The period of the same length before (released or not: the page links it)."""
        return self.coverage.period.previous()

    def panel(self, name: str) -> tuple[WeekRow, ...] | tuple[FrictionVersionRow, ...]:
        """The rows of one of ``PANELS``."""
        return self.trend if name == "trend" else self.versions


def _cells_of(src: CellSource, cov: Coverage, want: Sequence[str | None]) -> list[Noisy]:
    """The ``friction`` cube's cells of the covered weeks and of the compared ones whose (tool,
    error class, friction type) match ``want`` (None: any)."""
    at = idx_of("friction", "tool", "error_class", "friction_type")
    first = cov.period.start if cov.previous is None else cov.previous.start
    cells = src.cells("friction", first, cov.period.end)
    pairs = [(i, w) for i, w in zip(at, want, strict=True) if w is not None]
    return [c for c in cells if all(c.key[i] == w for i, w in pairs)]


def week_rows(cells: Iterable[Noisy], period: Period, *, overall: bool) -> list[WeekRow]:
    """Per friction type (and ``all``, their sum, when ``overall``), the cells of each week of
    ``period`` summed; a friction type whose period sum is within its noise is left out (as
    in ``top``), ``all`` never. Each week's ``all`` and its friction types follow the one
    clamping rule (``breakdown``: ``all`` is the sum of the week's cells, the types add up to
    it; hidden types count in it)."""
    (ft,) = idx_of("friction", "friction_type")
    weeks = series_by_day(cells, ft, since=period.start)
    if not overall:
        weeks.pop("all", None)
    rows: list[WeekRow] = []
    for series in sorted(weeks, key=lambda s: (s != "all", s)):
        days = weeks[series]
        total = Acc(sum(a.n for a in days.values()), sum(a.var for a in days.values()))
        if series != "all" and not above(total):
            continue
        rows += [WeekRow(day, period_end(PeriodKind.week, day), series, shown(a.n), moe(a.var))
                 for day, a in sorted(days.items())]  # fmt: skip
    return rows


def tool_trend(src: CellSource, tool: ToolName, cov: Coverage) -> tuple[WeekRow, ...]:
    """A tool's released weeks of the covered period: per friction type above its noise, and
    in all (the ``friction`` cube summed over error classes)."""
    cells = _cells_of(src, cov, (tool.value, None, None))
    return tuple(week_rows(cells, cov.period, overall=True))


def _trend(
    src: CellSource, key: FrictionKey, cov: Coverage
) -> tuple[list[WeekRow], Acc, Acc | None]:
    """The friction's cell of each released week of the covered period (every one, within
    noise or not), their sum, and the sum over the previous period of the same length (None
    when not all of it is released)."""
    cells = sorted(_cells_of(src, cov, key.cell), key=lambda c: c.day)
    now = [c for c in cells if c.day >= cov.period.start]
    earlier = [c for c in cells if c.day < cov.period.start]
    rows = [WeekRow(c.day, period_end(PeriodKind.week, c.day), key.friction_type.value,
                    shown(c.n), moe(c.var)) for c in now]  # fmt: skip
    before = None
    if cov.previous is not None:
        before = Acc(sum(c.n for c in earlier), sum(c.var for c in earlier))
    return rows, Acc(sum(c.n for c in now), sum(c.var for c in now)), before


def _regressions(src: CellSource, key: FrictionKey, cov: Coverage) -> dict[str, str]:
    """version -> ``new``/``growing`` where the regressions view lists this tool and class."""
    answer = derive(src, Question.regressions, Filters(tool=key.tool), cov, _ALL)
    return {
        r.version: r.status
        for r in answer.rows
        if isinstance(r, RegressionRow) and r.error_class == key.error_class.value
    }


def _versions(src: CellSource, key: FrictionKey, cov: Coverage) -> list[FrictionVersionRow]:
    cells = src.cells("versions", *aligned("versions", cov.period))
    v, tool, cls = idx_of("versions", "version", "tool", "error_class")
    totals = sum_by(cells, (v,))
    mine = sum_by((c for c in cells if (c.key[tool], c.key[cls]) == key.cell[:2]), (v,))
    labels = _regressions(src, key, cov)
    shown_versions = [k[0] for k, a in mine.items() if above(a)]
    # Newest first; the versions outside the catalogue's list last.
    shown_versions.sort(key=lambda s: (s == OTHER_VERSION, () if s == OTHER_VERSION else
                                       tuple(-p for p in vkey(s))))  # fmt: skip
    rows = []
    for version in shown_versions:
        a, total = mine[(version,)], totals[(version,)]
        rows.append(FrictionVersionRow(version, shown(a.n), moe(a.var), shown(total.n),
                                       moe(total.var), *share(a, total),
                                       labels.get(version)))  # fmt: skip
    return rows


def friction_figures(src: CellSource, key: FrictionKey, cov: Coverage) -> FrictionFigures:
    """The page's figures over the covered days ``cov`` from ``src``'s cells."""
    weeks, now, before = _trend(src, key, cov)
    tool = Filters(start=cov.period.start, end=cov.period.end, tool=key.tool)
    answers = tuple(derive(src, q, tool, cov, _TOOL_ROWS) for q in TOOL_PANELS)
    return FrictionFigures(
        key=key,
        coverage=cov,
        source=src.source,
        row=top_row(key.cell, now, before),
        above=above(now),
        trend=tuple(weeks),
        versions=tuple(_versions(src, key, cov)),
        tool_answers=answers,
    )
