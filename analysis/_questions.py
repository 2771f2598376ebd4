"""Asking a triage question: each is one ``.sql`` file and one entry of ``analysis._registry``.

``ask`` runs a question on a DuckDB connection (a file opened by the CLI, or the collector's own
connection inside ``Database.run``). Parameters are always bound, never formatted into SQL; the
privacy threshold ``k`` is one of them, so suppression happens inside the query.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic

import duckdb

from analysis._filters import Filters, Period
from analysis._registry import QUESTIONS, Question, QuestionSpec, R, Row
from analysis._rows import row_from_json, row_from_values, row_to_json
from service.sql import load_sql

__all__ = [
    "DEFAULT_K",
    "DEFAULT_LIMIT",
    "QUESTIONS",
    "Answer",
    "Question",
    "QuestionSpec",
    "answer_from_json",
    "ask",
    "load_query",
    "query_params",
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
MIN_Z = 3.0
_PARAM = re.compile(r"\$([a-z_][a-z0-9_]*)")
#: The triage filter (platform, tool, version), one macro every question calls.
_FILTER_MACRO = "triage_filter"
_FILTER_CALL = f"{_FILTER_MACRO}("


@dataclass(frozen=True, slots=True)
class Answer(Generic[R]):
    """A question's answer: the resolved period, where its figures come from, and the rows.

    ``source`` is ``released`` (post-processing of differentially private releases: the team
    role; ``k`` is None) or ``exact`` (raw rows with a k threshold: the steward role).
    """

    question: Question
    period: Period
    k: int | None
    filters: Filters
    rows: tuple[R, ...] = field(default=())
    source: str = "exact"

    @property
    def provenance(self) -> str:
        """Where the figures come from, in a few words."""
        if self.source == "released":
            return "differentially private daily releases"
        return f"exact, groups of fewer than {self.k} signals suppressed"

    @property
    def empty_text(self) -> str:
        if self.source == "released":
            return "No released cell in this period."
        return f"No group reaches {self.k} signals."

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question.value,
            "title": QUESTIONS[self.question].title,
            "period": {"start": self.period.start.isoformat(), "end": self.period.end.isoformat()},
            "source": self.source,
            "k": self.k,
            "filters": self.filters.as_strings(),
            "rows": [row_to_json(row) for row in self.rows],
        }


def answer_from_json(doc: Mapping[str, Any]) -> Answer[Row]:
    """The inverse of ``Answer.to_json`` (for answers fetched from a collector)."""
    question = Question(doc["question"])
    row_type = QUESTIONS[question].row_type
    period = doc["period"]
    return Answer(
        question=question,
        period=Period(dt.date.fromisoformat(period["start"]), dt.date.fromisoformat(period["end"])),
        k=None if doc.get("k") is None else int(doc["k"]),
        filters=Filters.parse(doc.get("filters", {})),
        rows=tuple(row_from_json(row_type, row) for row in doc["rows"]),
        source=str(doc.get("source", "exact")),
    )


#: Triage questions (one file each), then the helper statements (bounds, synth, ...).
_FOLDERS = (Path(__file__).parent / "queries", Path(__file__).parent / "sql")


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
        if _FILTER_CALL in text:  # a TEMP macro lives on one connection: each cursor is one
            cur.execute(load_query(_FILTER_MACRO)[0])
        cur.execute(text, {p: values[p] for p in params})
        columns = [d[0] for d in cur.description or ()]
        return columns, cur.fetchall()
    finally:
        cur.close()


def last_day(con: duckdb.DuckDBPyConnection) -> dt.date | None:
    """The last day that holds signals (None for an empty table)."""
    _, rows = run_sql(con, "bounds", {})
    value = rows[0][1] if rows else None
    return value if isinstance(value, dt.date) else None


def query_params(
    filters: Filters, period: Period, *, k: int, limit: int = DEFAULT_LIMIT
) -> dict[str, Any]:
    """Every parameter any question takes, for this period and these filters."""
    if k < 1:
        raise ValueError("k must be at least 1")
    version = filters.version
    return {
        "start": period.start,
        "end": period.end,
        "prev_start": period.previous().start,
        "baseline_start": period.start - dt.timedelta(days=7),
        "platform": None if filters.platform is None else filters.platform.value,
        "tool": None if filters.tool is None else filters.tool.value,
        "v_major": None if version is None else version.major,
        "v_minor": None if version is None else version.minor,
        "v_patch": None if version is None else version.patch,
        "k": k,
        "limit": limit,
        "spike_ratio": SPIKE_RATIO,
        "growth": GROWTH,
        "min_z": MIN_Z,
    }


def ask(
    con: duckdb.DuckDBPyConnection,
    question: Question,
    filters: Filters | None = None,
    *,
    k: int = DEFAULT_K,
    limit: int = DEFAULT_LIMIT,
    period: Period | None = None,
) -> Answer[Row]:
    """Answer one triage question. ``period`` skips resolving it from the data again."""
    filters = filters or Filters()
    if period is None:
        period = filters.resolve(last_day(con))
    spec = QUESTIONS[question]
    _, rows = run_sql(con, question.value, query_params(filters, period, k=k, limit=limit))
    return Answer(
        question=question,
        period=period,
        k=k,
        filters=filters,
        rows=tuple(row_from_values(spec.row_type, row) for row in rows),
    )
