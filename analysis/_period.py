"""The days an answer covers: one definition for every view (CLI, API, report, dashboard, alerts).

A question is asked about days (``start`` and ``end``, either or both left to their defaults)
and answered from whole release periods: UTC weeks, Monday to Sunday (the daily trend reads the
days of those weeks, so every view of one request covers the same days). ``resolve`` turns the
asked days and what is released (``Released``: every week from ``first`` through ``through``;
the collector releases every closed week of its retention window, empty ones too, so there is
no gap) into a ``Coverage``:

- ``period``: the asked days widened to whole weeks, then cut to the released weeks, so every
  covered day is released and the open week is never shown;
- ``previous``: the period of the same length right before, when every one of its days is
  released too, else None -- a change against fewer released days than the period holds would
  report a drop that is only a missing week;
- ``note``: why the covered days differ from the asked ones, in one sentence (None when not);
- ``NotCovered`` when no released day is in the asked period; its message names what the
  releases cover.

The steward's exact view of a raw file uses the same rule over the file's closed weeks that hold
signals (``Released(..., exact=True)``). Pure: the callers read ``Released`` from a connection.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from analysis._filters import DEFAULT_DAYS, Filters, Period
from contract.days import PeriodKind, period_end, period_start
from contract.limits import LATE_DAYS

__all__ = [
    "NOT_COVERED",
    "Coverage",
    "NotCovered",
    "Released",
    "coverage_json",
    "days_text",
    "resolve",
]

#: The problem code of a request no release covers (its detail: ``NotCovered``'s message).
NOT_COVERED = "not_covered"
_WEEK = PeriodKind.week
_DAY = dt.timedelta(days=1)


def days_text(period: Period) -> str:
    """A period in the words every view uses: ``2026-11-23 to 2026-11-29``."""
    return f"{period.start.isoformat()} to {period.end.isoformat()}"


@dataclass(frozen=True, slots=True)
class Released:
    """What answers can cover: every UTC week from the one starting ``first`` to the one ending
    ``through``. ``exact``: the steward's raw file (its closed weeks holding signals), not the
    team's releases."""

    first: dt.date
    through: dt.date
    exact: bool = False

    def __post_init__(self) -> None:
        if period_start(_WEEK, self.first) != self.first or period_end(_WEEK, self.through) != (
            self.through
        ):
            raise ValueError("released days are whole weeks, Monday to Sunday")
        if self.first > self.through:
            raise ValueError("the first released week is after the last")

    @property
    def period(self) -> Period:
        return Period(self.first, self.through)

    @property
    def what(self) -> str:
        """What covers days: releases, or (exact) the file's closed weeks."""
        return "the file's closed weeks" if self.exact else "releases"

    def covers(self, period: Period) -> bool:
        return self.first <= period.start and period.end <= self.through


class NotCovered(LookupError):
    """No released day is in the asked period (or nothing is released at all): the message
    names the asked days and what the releases cover, never anything but parsed days."""

    def __init__(
        self, start: dt.date | None, end: dt.date | None, released: Released | None, *,
        exact: bool = False,
    ) -> None:  # fmt: skip
        self.start, self.end, self.released = start, end, released
        super().__init__(_not_covered(start, end, released, exact=exact))


def _not_covered(
    start: dt.date | None, end: dt.date | None, released: Released | None, *, exact: bool
) -> str:
    if released is None:
        if exact:
            return "no closed week of this file holds a signal: there is nothing to answer yet"
        return (
            f"nothing is released yet: a week (Monday to Sunday, UTC) is released {LATE_DAYS} "
            "days after it ends"
        )
    if start is not None and end is not None:
        asked = f"{start.isoformat()} to {end.isoformat()}"
    elif start is not None:
        asked = f"the days from {start.isoformat()}"
    else:
        asked = f"the {DEFAULT_DAYS} days to {end.isoformat() if end else '?'}"
    what = released.what
    text = f"no {'closed week' if released.exact else 'release'} covers {asked}; "
    text += f"{what} cover {days_text(released.period)}"
    asked_after = (end or start or released.through) > released.through
    if asked_after and not released.exact:
        text += "; " + _next_week(released.through)
    return text


def _next_week(through: dt.date) -> str:
    """When the week after ``through`` is released (the collector's job runs after it)."""
    start, end = through + _DAY, through + 7 * _DAY
    ready = end + (LATE_DAYS + 1) * _DAY
    return f"the week {start.isoformat()} to {end.isoformat()} is released from {ready.isoformat()}"


@dataclass(frozen=True, slots=True)
class Coverage:
    """The days one request is answered over, and what it is compared with."""

    #: The asked days, the defaults filled in (``end``: the last released day; ``start``:
    #: ``DEFAULT_DAYS`` days before ``end``).
    asked: Period
    #: The covered days: whole weeks, every one released. Never empty.
    period: Period
    #: The period of the same length right before ``period``, every day of it released; None
    #: when some of it is not (a comparison would set a full period against a partial one).
    previous: Period | None
    released: Released
    #: Neither ``start`` nor ``end`` was given.
    default: bool = False

    @property
    def note(self) -> str | None:
        """Why the covered days differ from the asked ones (None when they do not)."""
        if self.period == self.asked:
            return None
        widened = Period(period_start(_WEEK, self.asked.start), period_end(_WEEK, self.asked.end))
        reasons: list[str] = []
        if widened != self.asked:
            reasons.append("answers are whole weeks, Monday to Sunday")
        r = self.released
        if widened.end > r.through:
            reasons.append(
                f"the newest closed week of the file ends {r.through.isoformat()}"
                if r.exact
                else f"the newest released week ends {r.through.isoformat()} (a week is "
                f"released {LATE_DAYS} days after it ends)"
            )
        if widened.start < r.first:
            reasons.append(
                f"the file's signals start in the week of {r.first.isoformat()}"
                if r.exact
                else f"the oldest released week starts {r.first.isoformat()}"
            )
        asked = "the default" if self.default else "asked"
        return (
            f"{asked} {days_text(self.asked)}, covers {days_text(self.period)} "
            f"({self.period.days} days): " + "; ".join(reasons)
        )

    @property
    def comparison(self) -> str:
        """What a change is measured against, or why there is no change."""
        before = self.period.previous()
        if self.previous is not None:
            return f"compared with {days_text(self.previous)}, the {before.days} days before"
        return (
            f"no comparison: the {before.days} days before ({days_text(before)}) are not all "
            f"covered ({self.released.what} start {self.released.first.isoformat()})"
        )


def _days(period: Period) -> dict[str, str]:
    return {"start": period.start.isoformat(), "end": period.end.isoformat()}


def coverage_json(cov: Coverage) -> dict[str, Any]:
    """The coverage as every JSON answer and download states it: the covered ``period``, the
    ``asked`` days (``default`` when none were given), the ``previous_period`` compared with
    (null: not all released), what the releases cover and the ``note``."""
    return {
        "period": _days(cov.period),
        "asked": {**_days(cov.asked), "default": cov.default},
        "previous_period": None if cov.previous is None else _days(cov.previous),
        "released_from": cov.released.first.isoformat(),
        "released_through": cov.released.through.isoformat(),
        "note": cov.note,
    }


def resolve(filters: Filters, released: Released | None, *, exact: bool = False) -> Coverage:
    """The coverage of ``filters``' days (see the module's docstring); ``NotCovered`` when no
    released day is in them (``exact``: the steward's file, whose message differs when it holds
    no closed week). A ``start`` after ``end`` is refused earlier, by ``Filters``."""
    start, end = filters.start, filters.end
    exact = exact or (released is not None and released.exact)
    if released is None:
        raise NotCovered(start, end, None, exact=exact)
    asked_end = end if end is not None else released.through
    asked_start = start if start is not None else asked_end - (DEFAULT_DAYS - 1) * _DAY
    if asked_start > asked_end:  # only a start after the last released day, with no end
        raise NotCovered(start, end, released, exact=exact)
    first = max(period_start(_WEEK, asked_start), released.first)
    last = min(period_end(_WEEK, asked_end), released.through)
    if first > last:
        raise NotCovered(start, end, released, exact=exact)
    period = Period(first, last)
    before = period.previous()
    previous = before if released.covers(before) else None
    asked = Period(asked_start, asked_end)
    return Coverage(asked, period, previous, released, default=start is None and end is None)
