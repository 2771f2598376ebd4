"""The steward role: raw rows and exact counts, off by default, every read audited.

The team role (``settings.read_tokens``) sees differentially private releases only. A steward
token (``settings.steward_tokens``: a label and a token) may read what is exact; no steward
token configured means every steward route refuses (403 ``steward_off``), a team token on a
steward route is refused too (403 ``steward_only``). Before a steward route answers, one audit
row is written: the token's label (never the token, never an address), the UTC day of the
read, the route template and its validated filter. If the audit row cannot be written, the
read is refused.
"""

from __future__ import annotations

import datetime as dt
import hmac
from collections.abc import Mapping
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials

from collector.settings import CollectorSettings
from service.auth import bearer_scheme
from service.db import Database
from service.errors import ProblemError

__all__ = ["Steward", "audit_read", "require_steward", "steward_label"]


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


def _filter_text(filters: Mapping[str, object]) -> str:
    return "&".join(f"{k}={v}" for k, v in sorted(filters.items()) if v is not None)


async def audit_read(
    db: Database,
    steward: Steward,
    route: str,
    filters: Mapping[str, object],
    *,
    today: dt.date | None = None,
) -> None:
    """Record one steward read before it is served (validated values only)."""
    day = today or dt.datetime.now(dt.UTC).date()
    text = _filter_text(filters)
    try:
        await db.run(
            lambda con: con.execute(
                "INSERT INTO steward_audit VALUES ($1, $2, $3, $4)",
                [day, steward.label, route, text],
            )
        )
    except Exception:
        raise ProblemError(503, "audit_failed", "The read could not be audited.") from None
