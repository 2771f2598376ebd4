"""Bearer tokens from settings, compared in constant time.

No ``Authorization`` header (or not ``Bearer``): 401 with ``WWW-Authenticate: Bearer``. A token
that matches none of the configured ones: 403. The token is never logged or echoed.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated

from fastapi import Depends
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import SecretStr

from service.errors import ProblemError

__all__ = ["bearer_scheme", "require_bearer", "token_matches"]

#: Declared for OpenAPI (``/docs`` shows the lock); errors are ours, not FastAPI's.
bearer_scheme = HTTPBearer(auto_error=False, description="A team read token.")


def token_matches(tokens: Sequence[SecretStr], token: str) -> bool:
    """Whether ``token`` is one of ``tokens``. Compares against every one, always, so the time
    taken does not say which one nearly matched."""
    given = token.encode("utf-8")
    found = False
    for candidate in tokens:
        if hmac.compare_digest(given, candidate.get_secret_value().encode("utf-8")):
            found = True
    return found


def require_bearer(tokens: Sequence[SecretStr]) -> Callable[..., Awaitable[None]]:
    """A FastAPI dependency: the request carries one of ``tokens`` as its bearer token."""
    allowed = tuple(tokens)

    async def dependency(
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)],
    ) -> None:
        if (
            credentials is None
            or credentials.scheme.lower() != "bearer"
            or not credentials.credentials
        ):
            raise ProblemError(
                401,
                "unauthorized",
                "A team bearer token is required.",
                headers={"WWW-Authenticate": "Bearer"},
            )
        if not token_matches(allowed, credentials.credentials):
            raise ProblemError(403, "forbidden", "The bearer token is not valid for this API.")

    return dependency
