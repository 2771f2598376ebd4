"""The one clock of the pipeline: a UTC day, never a finer time."""

from __future__ import annotations

import datetime as dt

__all__ = ["utc_today"]


def utc_today() -> dt.date:
    """Today's date in UTC: the day a signal carries and the day the collector files it under."""
    return dt.datetime.now(dt.UTC).date()
