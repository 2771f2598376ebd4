"""Triage of the collected friction signals, for the LMCP team.

The team's answers are post-processing of the collector's differentially private releases
(``ask_released``, over the cells ``collector.releases`` stores per closed period, each count
with its noise margin). The exact answers -- the same derivations (``analysis._released``) over
the same cube cells counted from raw rows without noise, then the threshold ``k``, with a typed
API (``top``, ``trends``, ... or ``ask``) -- are the steward's view of a raw file.
Also: the CLI (``lmcp analysis``, in ``analysis.cli``); the offline HTML/Markdown report
(``analysis.report``); and the dashboard and ``/v1/triage`` routes the collector mounts
(``analysis.web``).
"""

from analysis._api import (
    apps,
    attempts,
    intents,
    open_db,
    open_lake,
    platforms,
    regressions,
    ring,
    shapes,
    top,
    trends,
)
from analysis._filters import DEFAULT_DAYS, FilterError, Filters, Period, Version
from analysis._period import Coverage, NotCovered
from analysis._questions import DEFAULT_K, DEFAULT_LIMIT, Answer, answer_from_json
from analysis._registry import QUESTIONS, Question, QuestionSpec
from analysis._released import RELEASED_QUESTIONS, ask, ask_released
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
from analysis._synth import synthesize

__all__ = [
    "DEFAULT_DAYS",
    "DEFAULT_K",
    "DEFAULT_LIMIT",
    "QUESTIONS",
    "RELEASED_QUESTIONS",
    "Answer",
    "AppRow",
    "AttemptRow",
    "Coverage",
    "FilterError",
    "Filters",
    "IntentRow",
    "NotCovered",
    "Period",
    "PlatformRow",
    "Question",
    "QuestionSpec",
    "RegressionRow",
    "RingRow",
    "Row",
    "ShapeRow",
    "TopRow",
    "TrendRow",
    "Version",
    "answer_from_json",
    "apps",
    "ask",
    "ask_released",
    "attempts",
    "intents",
    "open_db",
    "open_lake",
    "platforms",
    "regressions",
    "ring",
    "shapes",
    "synthesize",
    "top",
    "trends",
]
