"""What every triage answer shares: the ``Answer`` type, the thresholds of the derivations, and
the helper statements of ``analysis/sql`` (``run_sql``).

The derivations themselves (``ask_released``, the steward's ``ask``) are in
``analysis._released``; this module imports none of them, so the cells, the derivations and
their answers form no import circle.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import duckdb

from analysis._filters import Filters, Period
from analysis._period import Coverage, Released, coverage_json, days_text
from analysis._registry import QUESTIONS, Question, QuestionSpec
from analysis._rows import R, Row, row_from_json, row_to_json
from service.sql import load_sql

__all__ = [
    "DEFAULT_K",
    "DEFAULT_LIMIT",
    "QUESTIONS",
    "Answer",
    "Question",
    "QuestionSpec",
    "answer_from_json",
    "last_day",
    "signal_days",
    "load_query",
    "run_sql",
]

#: Groups with fewer signals than this are never shown (the collector may raise it).
DEFAULT_K = 5
DEFAULT_LIMIT = 20
#: A day is a spike at this multiple of the mean of the days before it.
SPIKE_RATIO = 2.0
#: A version's share must grow by this factor to count as a regression.
GROWTH = 1.5
#: ... and be above the earlier share by this many standard errors.
MIN_Z = 4.0
_PARAM = re.compile(r"\$([a-z_][a-z0-9_]*)")
_T = TypeVar("_T", bound=Row)


@dataclass(frozen=True, slots=True)
class Answer(Generic[R]):
    """A question's answer: the days it covers, where its figures come from, and the rows.

    ``source`` is ``released`` (post-processing of differentially private releases: the team
    role; ``k`` is None) or ``exact`` (raw rows with a k threshold: the steward role).
    ``coverage`` says which days were asked, which are covered and why they differ, and what a
    change is compared with (``analysis._period``); ``period`` is its covered days.
    """

    question: Question
    period: Period
    k: int | None
    filters: Filters
    rows: tuple[R, ...] = field(default=())
    source: str = "exact"
    #: Why the question cannot be answered with these filters (a ``FilterError``'s message):
    #: the page shows it instead of a blank panel. None for an answer.
    unavailable: str | None = None
    #: How the request's days were resolved (None for an answer built by hand).
    coverage: Coverage | None = None

    def __post_init__(self) -> None:
        if self.coverage is not None and self.coverage.period != self.period:
            raise ValueError("an answer's period is the days its coverage covers")

    @property
    def note(self) -> str | None:
        """Why the covered days differ from the asked ones (None when they do not)."""
        return None if self.coverage is None else self.coverage.note

    @property
    def comparison(self) -> str | None:
        """What the question's changes are measured against (None: it measures none)."""
        if self.coverage is None or not QUESTIONS[self.question].compares:
            return None
        return self.coverage.comparison

    @property
    def covers(self) -> str:
        """The covered days, as every view names them."""
        return f"{days_text(self.period)} ({self.period.days} days)"

    @property
    def provenance(self) -> str:
        """Where the figures come from, in a few words."""
        if self.source == "released":
            return "differentially private releases, each count with its 95 % noise interval"
        return f"exact, groups of fewer than {self.k} signals suppressed"

    @property
    def empty_text(self) -> str:
        if self.unavailable is not None:
            return f"Not available with these filters: {self.unavailable}."
        if self.source == "released":
            return "No released figure above its noise in this period."
        return f"No group reaches {self.k} signals."

    def narrow(self, row_type: type[_T]) -> Answer[_T]:
        """This answer typed by its question's row type (``TypeError`` for another type): the
        derivations give ``Row``s, the typed API promises one type."""
        rows = tuple(r for r in self.rows if isinstance(r, row_type))
        if len(rows) != len(self.rows):
            raise TypeError(f"{self.question.value} rows are not {row_type.__name__}")
        return Answer(self.question, self.period, self.k, self.filters, rows, self.source,
                      self.unavailable, self.coverage)  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        covered: dict[str, Any] = {"period": _days(self.period), "asked": None,
                                   "previous_period": None, "released_from": None,
                                   "released_through": None, "note": None}  # fmt: skip
        if self.coverage is not None:
            covered = coverage_json(self.coverage)
        return {
            "question": self.question.value,
            "title": QUESTIONS[self.question].title,
            **covered,
            "comparison": self.comparison,
            "source": self.source,
            "k": self.k,
            "filters": self.filters.as_strings(),
            "unavailable": self.unavailable,
            "rows": [row_to_json(row) for row in self.rows],
        }


def _days(period: Period) -> dict[str, str]:
    return {"start": period.start.isoformat(), "end": period.end.isoformat()}


def _period(doc: Mapping[str, Any] | None) -> Period | None:
    if doc is None:
        return None
    return Period(dt.date.fromisoformat(doc["start"]), dt.date.fromisoformat(doc["end"]))


def answer_from_json(doc: Mapping[str, Any]) -> Answer[Row]:
    """The inverse of ``Answer.to_json`` (for answers fetched from a collector)."""
    question = Question(doc["question"])
    row_type = QUESTIONS[question].row_type
    period = _period(doc["period"])
    assert period is not None
    source = str(doc.get("source", "exact"))
    coverage = None
    asked = _period(doc.get("asked"))
    first, through = doc.get("released_from"), doc.get("released_through")
    if asked is not None and first is not None and through is not None:
        released = Released(dt.date.fromisoformat(first), dt.date.fromisoformat(through),
                            exact=source == "exact")  # fmt: skip
        coverage = Coverage(asked, period, _period(doc.get("previous_period")), released,
                            default=bool(doc["asked"].get("default")))  # fmt: skip
    return Answer(
        question=question,
        period=period,
        k=None if doc.get("k") is None else int(doc["k"]),
        filters=Filters.parse(doc.get("filters", {})),
        rows=tuple(row_from_json(row_type, row) for row in doc["rows"]),
        source=source,
        unavailable=None if doc.get("unavailable") is None else str(doc["unavailable"]),
        coverage=coverage,
    )


#: The helper statements (bounds, synth, load_parquet).
_FOLDERS = (Path(__file__).parent / "sql",)


@functools.cache
def load_query(name: str) -> tuple[str, tuple[str, ...]]:
    """``service.sql.load_sql`` over analysis' two folders, plus the ``$name`` parameters the
    text uses (``run_sql`` binds exactly those); ``KeyError`` when neither folder has it."""
    for folder in _FOLDERS:
        try:
            text = load_sql(folder, name)
        except KeyError:
            continue
        return text, tuple(dict.fromkeys(_PARAM.findall(_strip_comments(text))))
    raise KeyError("no such query")


def _strip_comments(sql: str) -> str:
    return "\n".join(line.split("--", 1)[0] for line in sql.splitlines())


def run_sql(
    con: duckdb.DuckDBPyConnection, name: str, values: Mapping[str, Any]
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run a named query, binding exactly the parameters it uses (all must be given)."""
    text, params = load_query(name)
    missing = [p for p in params if p not in values]
    if missing:
        raise KeyError(f"query {name} needs parameter(s) {', '.join(missing)}")
    cur = con.cursor()
    try:
        cur.execute(text, {p: values[p] for p in params})
        columns = [d[0] for d in cur.description or ()]
        return columns, cur.fetchall()
    finally:
        cur.close()


def signal_days(con: duckdb.DuckDBPyConnection) -> tuple[dt.date, dt.date] | None:
    """The first and last day that hold signals (None for an empty table)."""
    _, rows = run_sql(con, "bounds", {})
    first, last = rows[0] if rows else (None, None)
    if isinstance(first, dt.date) and isinstance(last, dt.date):
        return first, last
    return None


def last_day(con: duckdb.DuckDBPyConnection) -> dt.date | None:
    """The last day that holds signals (None for an empty table)."""
    days = signal_days(con)
    return None if days is None else days[1]
