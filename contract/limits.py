"""The contribution bound: how many signals one installation sends per UTC week.

``contract.privacy`` publishes it with what it bounds (derived from the whole schema) and
``contract.accountant`` turns it into the releases' guarantee; it lives here, apart, so that
reading it needs no pydantic: ``lmcp signals status`` prints it and must start at once.
"""

from __future__ import annotations

__all__ = ["LATE_DAYS", "PER_KEY_WEEKLY_LIMIT", "WEEKLY_SIGNAL_LIMIT"]

#: C: the most signals one installation sends in one UTC week (a user may only lower it).
#: 8 a week kept 98 % of a modelled fleet's signals (docs/privacy.md).
WEEKLY_SIGNAL_LIMIT = 8
#: The most signals one installation sends per (tool, error class, friction type) per week.
PER_KEY_WEEKLY_LIMIT = 1
#: A signal dated ``day`` is counted only if it arrives by ``day + LATE_DAYS`` (UTC): after
#: that its period is closed and released, and the collector refuses it (the client drops it).
LATE_DAYS = 2
