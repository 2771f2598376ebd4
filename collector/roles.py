"""The steward role: raw rows and exact counts, off by default, every read audited.

The team role (``settings.read_tokens``) sees differentially private releases only. A steward
token (``settings.steward_tokens``: a label and a token) may read what is exact; no steward
token configured means every steward route refuses (403 ``steward_off``), a team token on a
steward route is refused too (403 ``steward_only``). Before a steward route answers, one audit
row is written: the token's label (never the token, never an address), the UTC day of the
read, the route template and its validated filter. If the audit row cannot be written, the
read is refused.

Where the row goes is an ``AuditTrail``: the collector's file (``DatabaseAudit``: the
``steward_audit`` table), or in lake mode one Delta table shared by every collector
(``collector.lake.steward.LakeAudit``).
"""

from __future__ import annotations

import datetime as dt
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Protocol

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials

from collector.settings import CollectorSettings
from contract.days import utc_today
from service.auth import bearer_scheme
from service.db import Database
from service.errors import ProblemError

__all__ = [
    "AuditRow",
    "AuditTrail",
    "DatabaseAudit",
    "Steward",
    "audit_read",
    "require_steward",
    "steward_label",
]


def steward_label(settings: CollectorSettings, token: str) -> str | None:
    """The label of the steward token ``token`` (compared with every one, always)."""
    given = token.encode("utf-8")
    found: str | None = None
    for entry in settings.steward_tokens:
        if hmac.compare_digest(given, entry.token.get_secret_value().encode("utf-8")):
            found = entry.label
    return found


class Steward:
    """Who is reading: the label of a valid steward token."""

    def __init__(self, label: str) -> None:
        self.label = label


async def require_steward(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)],
) -> Steward:
    """FastAPI dependency: the request carries a valid steward token (and stewards are on)."""
    settings: CollectorSettings = request.app.state.settings
    if not settings.steward_tokens:
        raise ProblemError(403, "steward_off", "The steward role is not enabled on this collector.")
    if credentials is None or credentials.scheme.lower() != "bearer" or not credentials.credentials:
        raise ProblemError(
            401,
            "unauthorized",
            "A steward bearer token is required.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    label = steward_label(settings, credentials.credentials)
    if label is None:
        raise ProblemError(403, "steward_only", "This route is for the steward role only.")
    return Steward(label)


@dataclass(frozen=True, slots=True)
class AuditRow:
    """One steward read: the columns of ``steward_audit`` (migration 0101), in order."""

    read_day: dt.date
    label: str
    route: str
    filter: str


class AuditTrail(Protocol):
    """Where audit rows are kept; ``record`` returns once the row is durable, or raises."""

    async def record(self, row: AuditRow) -> None: ...


class DatabaseAudit:
    """The collector's own file: the ``steward_audit`` table."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def record(self, row: AuditRow) -> None:
        await self.db.run(
            lambda con: con.execute(
                "INSERT INTO steward_audit VALUES ($1, $2, $3, $4)",
                [row.read_day, row.label, row.route, row.filter],
            )
        )


def _filter_text(filters: Mapping[str, object]) -> str:
    return "&".join(f"{k}={v}" for k, v in sorted(filters.items()) if v is not None)


async def audit_read(
    trail: AuditTrail,
    steward: Steward,
    route: str,
    filters: Mapping[str, object],
    *,
    today: dt.date | None = None,
) -> None:
    """Record one steward read in ``trail`` before it is served (validated values only). Any
    failure to record refuses the read (503 ``audit_failed``)."""
    day = today or utc_today()
    try:
        await trail.record(AuditRow(day, steward.label, route, _filter_text(filters)))
    except Exception:
        raise ProblemError(503, "audit_failed", "The read could not be audited.") from None
