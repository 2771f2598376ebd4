"""The one clock of the pipeline: a UTC day, and the release periods made of days.

A signal is counted in the period holding its own ``day`` (the day its contribution was
claimed for on the client), never in the day it arrived: a backlog delivered at once still
lands in the periods it was bounded for. A period is closed -- released, and refused to any
later signal -- once ``LATE_DAYS`` days have passed after its last day.
"""

from __future__ import annotations

import datetime as dt
from enum import StrEnum

from contract.limits import LATE_DAYS

__all__ = [
    "PeriodKind",
    "accepts_day",
    "closed",
    "last_closed",
    "period_end",
    "period_start",
    "periods_between",
    "utc_today",
]

_ONE = dt.timedelta(days=1)


class PeriodKind(StrEnum):
    """How long one release period is: a UTC week (Monday to Sunday) or one UTC day."""

    week = "week"
    day = "day"


def utc_today() -> dt.date:
    """Today's date in UTC: the day a signal carries and the clock of every release."""
    return dt.datetime.now(dt.UTC).date()


def period_start(kind: PeriodKind, day: dt.date) -> dt.date:
    """The first day of the period holding ``day``."""
    return day - dt.timedelta(days=day.weekday()) if kind is PeriodKind.week else day


def period_end(kind: PeriodKind, day: dt.date) -> dt.date:
    """The last day of the period holding ``day``."""
    return period_start(kind, day) + (dt.timedelta(days=6) if kind is PeriodKind.week else 0 * _ONE)


def closed(kind: PeriodKind, day: dt.date, today: dt.date) -> bool:
    """Whether the period holding ``day`` is closed on ``today`` (late signals had their days)."""
    return period_end(kind, day) + dt.timedelta(days=LATE_DAYS) < today


def last_closed(kind: PeriodKind, today: dt.date) -> dt.date:
    """The first day of the newest period closed on ``today``."""
    start = period_start(kind, today - dt.timedelta(days=LATE_DAYS + 1))
    while not closed(kind, start, today):
        start = period_start(kind, start - _ONE)
    return start


def periods_between(kind: PeriodKind, first: dt.date, last: dt.date) -> list[dt.date]:
    """The first day of every period whose first day is in ``[first, last]``, in order."""
    step = dt.timedelta(days=7) if kind is PeriodKind.week else _ONE
    start = period_start(kind, first)
    if start < first:
        start += step
    out = []
    while start <= last:
        out.append(start)
        start += step
    return out


def accepts_day(day: dt.date, today: dt.date) -> bool:
    """Whether the collector still counts a signal dated ``day`` on ``today``: its day's
    period is not closed (``LATE_DAYS`` late at most), and it is at most one day ahead (a
    clock east of UTC)."""
    return today - dt.timedelta(days=LATE_DAYS) <= day <= today + _ONE
