"""The team's read API: bearer tokens from settings, compared in constant time.

No ``Authorization`` header (or not ``Bearer``): 401 with ``WWW-Authenticate: Bearer``. A token
that matches none of ``settings.read_tokens``: 403. The token is never logged or echoed.
"""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from collector.errors import ProblemError
from collector.settings import CollectorSettings

__all__ = ["bearer_scheme", "require_team_token", "token_matches"]

#: Declared for OpenAPI (``/docs`` shows the lock); errors are ours, not FastAPI's.
bearer_scheme = HTTPBearer(auto_error=False, description="A team read token.")


def token_matches(settings: CollectorSettings, token: str) -> bool:
    """Whether ``token`` is one of the read tokens. Compares against every one, always."""
    given = token.encode("utf-8")
    found = False
    for candidate in settings.read_tokens:
        if hmac.compare_digest(given, candidate.get_secret_value().encode("utf-8")):
            found = True
    return found


async def require_team_token(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)],
) -> None:
    """FastAPI dependency: the request carries a valid team bearer token."""
    if credentials is None or credentials.scheme.lower() != "bearer" or not credentials.credentials:
        raise ProblemError(
            401,
            "unauthorized",
            "A team bearer token is required.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    settings: CollectorSettings = request.app.state.settings
    if not token_matches(settings, credentials.credentials):
        raise ProblemError(403, "forbidden", "The bearer token is not valid for this API.")
