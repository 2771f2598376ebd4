"""The dashboard's session cookie: stateless, signed with the team token that logged in.

Value: ``v1.<expiry unix seconds>.<hex HMAC-SHA256(token, "lmcp-dashboard|v1|<expiry>")>``.
It holds no token and no identity; it is valid while it has not expired, a configured read
token still signs it (removing a token from the settings ends its sessions too) and it was not
signed out: signing out revokes the value server-side (:class:`Revocations`, kept until the
value would have expired anyway). The cookie is HttpOnly, SameSite=Strict, scoped to
``/dashboard``, and Secure when served over HTTPS (directly or behind a TLS proxy).

Login CSRF: the login form carries a random token that must equal the one in a SameSite=Strict
cookie set with the form (double submit); a cross-site page can neither read nor send it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets as _random
import threading
import time
from collections.abc import Mapping, Sequence

__all__ = [
    "COOKIE_NAME",
    "CSRF_COOKIE",
    "SESSION_SECONDS",
    "Revocations",
    "csrf_valid",
    "make_session",
    "new_csrf",
    "secure_request",
    "session_valid",
]

COOKIE_NAME = "lmcp_dashboard"
CSRF_COOKIE = "lmcp_dashboard_csrf"
SESSION_SECONDS = 8 * 3600
CSRF_SECONDS = 3600
_MAX_COOKIE = 200
_MAX_REVOKED = 100_000


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


class Revocations:
    """Session values signed out on this server, each kept until it would have expired."""

    def __init__(self) -> None:
        self._until: dict[str, int] = {}
        self._guard = threading.Lock()

    def revoke(self, value: str | None, *, now: float | None = None) -> None:
        if not value or len(value) > _MAX_COOKIE:
            return
        parts = value.split(".")
        if len(parts) != 3 or not parts[1].isdigit():
            return
        current = int(now if now is not None else time.time())
        with self._guard:
            if len(self._until) >= _MAX_REVOKED:  # forget what expired; the bound holds
                self._until = {mac: t for mac, t in self._until.items() if t > current}
            if len(self._until) < _MAX_REVOKED:
                self._until[parts[2]] = int(parts[1])

    def revoked(self, value: str | None) -> bool:
        if not value:
            return False
        with self._guard:
            return value.rsplit(".", 1)[-1] in self._until


def new_csrf() -> str:
    return _random.token_urlsafe(32)


def csrf_valid(cookie: str | None, field: str | None) -> bool:
    """The login form's token equals the one set in its cookie (and is one we could make)."""
    if not cookie or not field or len(cookie) > 64 or len(field) > 64:
        return False
    return hmac.compare_digest(cookie.encode("ascii", "replace"), field.encode("ascii", "replace"))


def secure_request(scheme: str, headers: Mapping[str, str]) -> bool:
    """Whether the browser reached us over HTTPS: directly, or through a TLS proxy.

    Trusting ``X-Forwarded-Proto`` here is safe: a forged value can only add ``Secure``.
    """
    forwarded = headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
    return scheme == "https" or forwarded == "https"
