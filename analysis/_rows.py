"""Each triage question's row type, and rows in and out: a query's values or a JSON object to a
row, and back.

This is the one module that defines the row types (``analysis._registry`` names each
question's; the package re-exports them as its public API).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import typing
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

__all__ = [
    "AppRow",
    "AttemptRow",
    "FrictionVersionRow",
    "WeekRow",
    "IntentRow",
    "PanelRow",
    "PlatformRow",
    "R",
    "RegressionRow",
    "RingRow",
    "Row",
    "ShapeRow",
    "TopRow",
    "TrendRow",
    "row_from_json",
    "row_from_values",
    "row_to_json",
    "MARGINS",
    "PERCENTS",
    "SIGNED",
    "figure_text",
    "shown_count",
    "within_noise",
]

# -- each question's row ------------------------------------------------------------------
# Counts are ints, shares are percentages (floats), days are dates.


@dataclasses.dataclass(frozen=True, slots=True)
class TopRow:
    tool: str
    error_class: str
    friction_type: str
    n: int
    #: The 95 % half-width of ``n``'s noise (0 on the exact view).
    moe: int
    #: The count in the period of the same length before (``Coverage.previous``); None when
    #: that period is not all released (no comparison).
    prev_n: int | None
    prev_moe: int | None
    #: ``n - prev_n``, and the 95 % half-width of its noise (both periods' noise).
    change: int | None
    change_moe: int | None
    #: The change in percent of ``prev_n``: None unless the previous count is above its own
    #: noise (a percentage of a count lost in the noise would mean nothing).
    change_pct: float | None
    change_pct_moe: float | None


@dataclasses.dataclass(frozen=True, slots=True)
class TrendRow:
    day: dt.date
    #: A friction_type, or ``all``.
    series: str
    n: int
    moe: int
    #: Mean of the released days among the 7 before, a whole number; None when none.
    baseline: int | None
    baseline_moe: int | None
    spike: bool


@dataclasses.dataclass(frozen=True, slots=True)
class RegressionRow:
    version: str
    first_day: dt.date
    tool: str
    error_class: str
    n: int
    moe: int
    #: ``n``'s share of the version's signals, with its 95 % half-width.
    share_pct: float
    share_moe: float
    #: The same tool and error class in every earlier version, and its share of their signals.
    base_n: int
    base_moe: int
    base_share_pct: float
    base_share_moe: float
    #: ``new`` or ``growing``.
    status: str


@dataclasses.dataclass(frozen=True, slots=True)
class PlatformRow:
    platform: str
    tool: str
    n: int
    moe: int
    #: The platform's total: its rows add up to it (``analysis._cells.breakdown``).
    platform_n: int
    platform_moe: int
    share_pct: float
    #: The 95 % half-width of the share (delta method over the cells' noise).
    share_moe: float


@dataclasses.dataclass(frozen=True, slots=True)
class AppRow:
    tool: str
    #: ``not_installed``, ``not_running``, ``not_permitted`` or ``genuine``.
    app_state: str
    n: int
    moe: int
    #: The tool's total: its rows add up to it (``analysis._cells.breakdown``).
    tool_n: int
    tool_moe: int
    share_pct: float
    share_moe: float


@dataclasses.dataclass(frozen=True, slots=True)
class ShapeRow:
    tool: str
    arg: str
    arg_type: str
    #: A size bucket, or ``-`` for types without a size.
    size: str
    n: int
    moe: int
    share_pct: float
    share_moe: float


@dataclasses.dataclass(frozen=True, slots=True)
class RingRow:
    #: 2 (prev1 -> failure) or 3 (prev2 -> prev1 -> failure).
    calls: int
    prev2_tool: str | None
    prev2_outcome: str | None
    prev1_tool: str
    prev1_outcome: str
    tool: str
    error_class: str
    n: int
    moe: int


@dataclasses.dataclass(frozen=True, slots=True)
class IntentRow:
    intent: str
    n: int
    moe: int
    share_pct: float
    share_moe: float


@dataclasses.dataclass(frozen=True, slots=True)
class AttemptRow:
    attempts: str
    n: int
    moe: int
    share_pct: float
    share_moe: float


#: Any question's row.
Row = (
    TopRow
    | TrendRow
    | RegressionRow
    | PlatformRow
    | AppRow
    | ShapeRow
    | RingRow
    | IntentRow
    | AttemptRow
)
R = TypeVar("R", bound=Row)


# -- the weekly trends of a tool and of a friction (``analysis._friction``) -------------------


@dataclasses.dataclass(frozen=True, slots=True)
class WeekRow:
    """One released week of the ``friction`` cube's cells of a tool or of one friction."""

    week: dt.date
    #: The week's last day (a Sunday).
    week_end: dt.date
    #: A friction type, or ``all`` (their sum).
    series: str
    n: int
    moe: int


@dataclasses.dataclass(frozen=True, slots=True)
class FrictionVersionRow:
    """One client version's count of one tool x error class (the versions release has no
    friction type), with its share of the version's signals."""

    version: str
    n: int
    moe: int
    version_n: int
    version_moe: int
    share_pct: float
    share_moe: float
    #: ``new`` or ``growing`` when the regressions view lists it for this version, else None.
    regression: str | None


#: Any row a dashboard table shows.
PanelRow = Row | WeekRow | FrictionVersionRow


#: Each figure's 95 % margin: the field holding it. Every view folds a margin into its figure
#: (``n +- moe``); the CSV and the JSON keep it as its own column, right after the figure.
MARGINS: Mapping[str, str] = {
    "n": "moe",
    "prev_n": "prev_moe",
    "change": "change_moe",
    "change_pct": "change_pct_moe",
    "baseline": "baseline_moe",
    "platform_n": "platform_moe",
    "tool_n": "tool_moe",
    "version_n": "version_moe",
    "share_pct": "share_moe",
    "base_n": "base_moe",
    "base_share_pct": "base_share_moe",
}
#: Figures in percent (shown with a % sign), and those shown with their sign (changes).
PERCENTS = frozenset({"change_pct", "share_pct", "base_share_pct"})
SIGNED = frozenset({"change", "change_pct"})


def within_noise(row: PanelRow, column: str = "n") -> bool:
    """The figure is within noise: its 95 % interval (figure +- margin) includes 0."""
    value, margin = getattr(row, column), getattr(row, MARGINS[column], None)
    return value is not None and bool(margin) and abs(value) <= margin


def figure_text(row: PanelRow, column: str, *, marked: bool = True) -> str:
    """A figure with its margin, as every view shows it: ``1,267 +- 47``, ``-44.6 % +- 3.1``,
    ``5.8 % +- 1.2`` (the margin left out when it is 0: the exact view), marked "(within
    noise)" when its 95 % interval includes 0 (unless ``marked`` is false: the caller says
    it). ``-`` for a figure there is none of."""
    value = getattr(row, column)
    if value is None:
        return "\u2014"
    margin = getattr(row, MARGINS[column], None) or 0
    sign = "+" if column in SIGNED else ""
    if column in PERCENTS:
        text = f"{value:{sign},.1f} %" + (f" \u00b1 {margin:,.1f}" if margin else "")
    else:
        text = f"{value:{sign},}" + (f" \u00b1 {margin:,}" if margin else "")
    return f"{text} (within noise)" if marked and within_noise(row, column) else text


def shown_count(row: PanelRow) -> str:
    """``n +- moe`` (or ``n`` when exact), and "within noise" when the interval includes 0."""
    return figure_text(row, "n")


# -- conversions ---------------------------------------------------------------------------

_CONVERTERS: dict[type, tuple[tuple[str, Any], ...]] = {}


def _converters(row_type: type) -> tuple[tuple[str, Any], ...]:
    known = _CONVERTERS.get(row_type)
    if known is not None:
        return known
    hints = typing.get_type_hints(row_type)
    out = []
    for f in dataclasses.fields(row_type):
        base = {t for t in typing.get_args(hints[f.name]) if t is not type(None)} or {hints[f.name]}
        out.append((f.name, next(iter(base))))
    _CONVERTERS[row_type] = tuple(out)
    return _CONVERTERS[row_type]


def _coerce(kind: Any, value: Any) -> Any:
    if value is None:
        return None
    if kind is dt.date:
        return value if isinstance(value, dt.date) else dt.date.fromisoformat(str(value))
    if kind is float:
        return float(value)
    if kind is int:
        return int(value)
    if kind is bool:
        return bool(value)
    return str(value)


def row_from_values(row_type: type[R], values: Sequence[Any]) -> R:
    """A row from a query's values, in column order."""
    names = _converters(row_type)
    return row_type(*(_coerce(kind, v) for (_, kind), v in zip(names, values, strict=True)))


def row_from_json(row_type: type[R], doc: Mapping[str, Any]) -> R:
    """A row from its JSON object (see ``row_to_json``)."""
    return row_type(**{name: _coerce(kind, doc.get(name)) for name, kind in _converters(row_type)})


def row_to_json(row: PanelRow) -> dict[str, Any]:
    """A JSON object of a row: dates as ISO strings."""
    return {
        f.name: v.isoformat() if isinstance(v, dt.date) else v
        for f in dataclasses.fields(row)
        for v in (getattr(row, f.name),)
    }
