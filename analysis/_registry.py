"""The registry of triage questions: one entry per question, and every surface derives from it.

A triage question is one member of ``Question`` below and one derivation in
``analysis._released`` over one released cube (the team's noisy cells, or the steward's exact
cells counted by the same cube SQL). From that member come: the list of questions
(``QUESTIONS``), the CLI command (``lmcp analysis <name>``), the ``/v1/triage`` listing and
route, the chart (``chart``), the dashboard placement (``placement``), the report section and
the cube the answer is derived from (``cube``). ``tests/analysis/test_registry.py`` checks that
every surface lists exactly these questions.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

__all__ = [
    "QUESTIONS",
    "AppRow",
    "AttemptRow",
    "Bars",
    "Custom",
    "IntentRow",
    "Placement",
    "PlatformRow",
    "Question",
    "QuestionSpec",
    "RegressionRow",
    "RingRow",
    "Row",
    "ShapeRow",
    "TopRow",
    "TrendRow",
    "dashboard_questions",
    "shown_count",
    "within_noise",
]

# -- each question's row: the columns its ``.sql`` file returns, typed ----------------------
# Counts are ints, shares are percentages (floats), days are dates; a test checks that every
# query returns exactly these columns, in this order.


@dataclasses.dataclass(frozen=True, slots=True)
class TopRow:
    tool: str
    error_class: str
    friction_type: str
    n: int
    #: The 95 % half-width of ``n``'s noise (0 on the exact view).
    moe: int
    #: The previous period's count; None when the previous period has no cell.
    prev_n: int | None
    change: int | None
    #: None unless the previous count is above its own noise.
    change_pct: float | None


@dataclasses.dataclass(frozen=True, slots=True)
class TrendRow:
    day: dt.date
    #: A friction_type, or ``all``.
    series: str
    n: int
    moe: int
    #: Mean of the released days among the 7 before, a whole number; None when none.
    baseline: int | None
    spike: bool


@dataclasses.dataclass(frozen=True, slots=True)
class RegressionRow:
    version: str
    first_day: dt.date
    tool: str
    error_class: str
    n: int
    moe: int
    share_pct: float
    base_n: int
    base_share_pct: float
    #: ``new`` or ``growing``.
    status: str


@dataclasses.dataclass(frozen=True, slots=True)
class PlatformRow:
    platform: str
    tool: str
    n: int
    moe: int
    platform_n: int
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
    tool_n: int
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


def within_noise(row: Row) -> bool:
    """The row's count is within noise: its 95 % interval ``n +- moe`` includes 0."""
    return row.moe > 0 and row.n <= row.moe


def shown_count(row: Row) -> str:
    """``n +- moe`` (or ``n`` when exact), and "within noise" when the interval includes 0."""
    text = f"{row.n:,} \u00b1 {row.moe:,}" if row.moe else f"{row.n:,}"
    return f"{text} (within noise)" if within_noise(row) else text


# -- the entries ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Bars:
    """The generic chart: one horizontal bar per row, ``label`` against the row's ``n``."""

    label: str


@dataclass(frozen=True, slots=True)
class Custom:
    """A chart of its own, drawn by the builder of this name in ``analysis._charts``."""

    builder: str


@dataclass(frozen=True, slots=True)
class Placement:
    """Where the dashboard shows a question (lower positions first; None: not on that view)."""

    overview: int | None = None
    tool_view: int | None = None
    #: A full-row card (long labels, a time axis) instead of a half-row one.
    wide: bool = False
    #: The card's table is open when the page loads.
    opened: bool = False
    #: The card's title on a tool's drill-down, when the question's title does not fit there.
    tool_title: str | None = None


@dataclass(frozen=True, slots=True)
class QuestionSpec:
    """One triage question, for people (title, summary) and for every surface."""

    title: str
    summary: str
    #: The columns the ``.sql`` file returns (a test compares them).
    row_type: type[Row]
    chart: Bars | Custom
    #: The released cube (``collector.releases.cubes``) the team's answer derives from.
    cube: str | None
    placement: Placement = Placement()


class Question(StrEnum):
    """The triage questions: each member is the name of its ``.sql`` file and CLI command,
    and its entry (``spec``). Adding a question is adding a member here and its file."""

    spec: QuestionSpec

    def __new__(cls, name: str, spec: QuestionSpec | None = None) -> Question:
        # Only the members below are built here (lookups by name never reach this method).
        if spec is None:
            raise TypeError("a triage question is defined with its entry")
        member = str.__new__(cls, name)
        member._value_ = name
        member.spec = spec
        return member

    top = "top", QuestionSpec(
        "Top friction",
        "Tool x error class x friction type, with the change against the previous period.",
        TopRow, Custom("top"), "friction",
        Placement(overview=0, tool_view=0, wide=True, opened=True, tool_title="Error classes"),
    )  # fmt: skip
    trends = "trends", QuestionSpec(
        "Trend per day",
        "Signals per day, per friction type and in all, with spikes flagged.",
        TrendRow, Custom("trends"), "daily",
        Placement(overview=1, tool_view=1, wide=True),
    )  # fmt: skip
    regressions = "regressions", QuestionSpec(
        "Regressions by client version",
        "Friction that is new or growing in a version against the versions before it.",
        RegressionRow, Custom("regressions"), "versions",
        Placement(overview=2, tool_view=6),
    )  # fmt: skip
    platforms = "platforms", QuestionSpec(
        "Platform split",
        "Signals per platform and tool, with the tool's share of the platform.",
        PlatformRow, Custom("platforms"), "platforms",
        Placement(overview=3, tool_view=5),
    )  # fmt: skip
    apps = "apps", QuestionSpec(
        "App state against genuine failures",
        "Whether the app was not installed, not running or not permitted - or the tool failed.",
        AppRow, Custom("apps"), "apps",
        Placement(overview=4, tool_view=3),
    )  # fmt: skip
    shapes = "shapes", QuestionSpec(
        "Argument shapes",
        "Which argument type x size-bucket combinations fail, per tool.",
        ShapeRow, Custom("shapes"), "shapes",
        Placement(tool_view=2),
    )  # fmt: skip
    ring = "ring", QuestionSpec(
        "Ring patterns",
        "The most common 2- and 3-call sequences (with outcomes) ending in a failure.",
        RingRow, Custom("ring"), "ring2",
        Placement(tool_view=4, wide=True),
    )  # fmt: skip
    intents = "intents", QuestionSpec(
        "Intents",
        "What users were trying to do when the friction happened.",
        IntentRow, Bars("intent"), "intents",
        Placement(overview=5),
    )  # fmt: skip
    attempts = "attempts", QuestionSpec(
        "Attempts before reporting",
        "How many times the agent tried before the friction was reported.",
        AttemptRow, Custom("attempts"), "attempts",
    )  # fmt: skip


#: Every question's entry, in the registry's order (the order of every listing).
QUESTIONS: Mapping[Question, QuestionSpec] = {q: q.spec for q in Question}


def dashboard_questions(*, tool_view: bool) -> tuple[Question, ...]:
    """The questions of the dashboard's first view (or of a tool's drill-down), in order."""
    placed = [
        (pos, q)
        for q in Question
        if (pos := q.spec.placement.tool_view if tool_view else q.spec.placement.overview)
        is not None
    ]
    return tuple(q for _, q in sorted(placed))
