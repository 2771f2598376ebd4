"""Triage of the collected friction signals, for the LMCP team.

One ``.sql`` file per question (``analysis/queries/``), parameters bound, the privacy threshold
``k`` applied inside the SQL; a typed API over them (``top``, ``trends``, ... or ``ask``); the
CLI (``lmcp analysis``, in ``analysis.cli``); the offline HTML/Markdown report
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
from analysis._questions import (
    DEFAULT_K,
    DEFAULT_LIMIT,
    QUESTIONS,
    Answer,
    Question,
    QuestionSpec,
    answer_from_json,
    ask,
)
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
    "Answer",
    "AppRow",
    "AttemptRow",
    "FilterError",
    "Filters",
    "IntentRow",
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
