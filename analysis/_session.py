"""The dashboard's session cookie: stateless, signed with the team token that logged in.

Value: ``v1.<expiry unix seconds>.<hex HMAC-SHA256(token, "lmcp-dashboard|v1|<expiry>")>``.
It holds no token and no identity; it is valid while it has not expired and a configured read
token still signs it, so removing a token from the settings ends its sessions too. The cookie is
HttpOnly, SameSite=Strict, scoped to ``/dashboard``, and Secure when served over HTTPS.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Sequence

__all__ = ["COOKIE_NAME", "SESSION_SECONDS", "make_session", "session_valid"]

COOKIE_NAME = "lmcp_dashboard"
SESSION_SECONDS = 8 * 3600
_MAX_COOKIE = 200


def _mac(secret: str, expiry: int) -> str:
    message = f"lmcp-dashboard|v1|{expiry}".encode("ascii")
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def make_session(secret: str, *, now: float | None = None) -> str:
    """A cookie value for a session opened with ``secret`` (a read token)."""
    expiry = int(now if now is not None else time.time()) + SESSION_SECONDS
    return f"v1.{expiry}.{_mac(secret, expiry)}"


def session_valid(value: str | None, secrets: Sequence[str], *, now: float | None = None) -> bool:
    """Whether ``value`` is an unexpired session signed by one of ``secrets``."""
    if not value or len(value) > _MAX_COOKIE:
        return False
    parts = value.split(".")
    if len(parts) != 3 or parts[0] != "v1" or not parts[1].isdigit():
        return False
    expiry = int(parts[1])
    current = now if now is not None else time.time()
    if expiry <= current or expiry > current + SESSION_SECONDS + 60:
        return False
    found = False
    for secret in secrets:  # compare with every token, always
        if hmac.compare_digest(_mac(secret, expiry), parts[2]):
            found = True
    return found
