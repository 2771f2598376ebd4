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

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

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

__all__ = [
    "QUESTIONS",
    "Bars",
    "Custom",
    "Placement",
    "Question",
    "QuestionSpec",
    "dashboard_questions",
]

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
    #: Its rows compare the period with the one of the same length before it
    #: (``Coverage.previous``; the answer says which, or why there is none).
    compares: bool = False


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
        compares=True,
    )  # fmt: skip
    trends = "trends", QuestionSpec(
        "Trend per day",
        "Signals per day, per friction type and in all, with spikes flagged.",
        TrendRow, Custom("trends"), "daily",
        # A tool's page shows its weekly trend instead (the daily cube has no tool).
        Placement(overview=1, wide=True),
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
