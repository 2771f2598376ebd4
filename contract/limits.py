"""The contribution bound: how many signals one installation sends per UTC day.

``contract.privacy`` publishes it with what it bounds (derived from the whole schema); it lives
here, apart, so that reading it needs no pydantic: ``lmcp signals status`` prints it and must
start at once.
"""

from __future__ import annotations

__all__ = ["DAILY_SIGNAL_LIMIT", "PER_KEY_DAILY_LIMIT"]

#: C: the most signals one installation sends in one UTC day (a user may only lower it).
DAILY_SIGNAL_LIMIT = 10
#: The most signals one installation sends per (tool, error class, friction type) per UTC day.
PER_KEY_DAILY_LIMIT = 1
