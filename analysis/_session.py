"""The dashboard's session cookie: a random nonce per login, signed and timed by ``itsdangerous``
with the team token that logged in.

Value: ``<nonce>.<timestamp>.<signature>``, an ``itsdangerous.TimestampSigner`` value (HMAC-
SHA256, salted for this use) over 128 random bits drawn at each login: two logins, even in the
same second, get different cookies, so signing one out never ends the other. It holds no token
and no identity; it is valid for ``SESSION_SECONDS`` after the login while a configured read
token still signs it (removing a token from the settings ends its sessions too) and its nonce
was not signed out: signing out revokes the nonce server-side (:class:`Revocations`, kept until
the session would have expired anyway). The cookie is HttpOnly, SameSite=Strict, scoped to
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
from dataclasses import dataclass

from itsdangerous import BadSignature, TimestampSigner

__all__ = [
    "COOKIE_NAME",
    "CSRF_COOKIE",
    "SESSION_SECONDS",
    "Revocations",
    "Session",
    "csrf_valid",
    "make_session",
    "new_csrf",
    "open_session",
    "secure_request",
]

COOKIE_NAME = "lmcp_dashboard"
CSRF_COOKIE = "lmcp_dashboard_csrf"
SESSION_SECONDS = 8 * 3600
CSRF_SECONDS = 3600
_SALT = "lmcp-dashboard-session"
_NONCE_BYTES = 16
_MAX_COOKIE = 200
_MAX_REVOKED = 100_000


class _Signer(TimestampSigner):
    """itsdangerous' timed signer, its clock given (so the tests can move it)."""

    def __init__(self, secret: str, now: float | None) -> None:
        super().__init__(secret, salt=_SALT, digest_method=hashlib.sha256)
        self._now = now

    def get_timestamp(self) -> int:
        return int(self._now if self._now is not None else time.time())


@dataclass(frozen=True, slots=True)
class Session:
    """A valid session: its login's nonce and when it expires (unix seconds)."""

    nonce: str
    expires: int


def make_session(secret: str, *, now: float | None = None) -> str:
    """A new cookie value for a login with ``secret`` (a read token): a fresh nonce, signed."""
    return _Signer(secret, now).sign(_random.token_urlsafe(_NONCE_BYTES)).decode("ascii")


def open_session(
    value: str | None, secrets: Sequence[str], *, now: float | None = None
) -> Session | None:
    """The session ``value`` holds when one of ``secrets`` signed it less than
    ``SESSION_SECONDS`` ago (and not in the future); else None."""
    if not value or len(value) > _MAX_COOKIE or not value.isascii():
        return None
    found: Session | None = None
    for secret in secrets:  # try every token, always: the time taken does not tell which
        signer = _Signer(secret, now)
        try:
            nonce, signed = signer.unsign(value, max_age=SESSION_SECONDS - 1, return_timestamp=True)
        except BadSignature:  # SignatureExpired and a future timestamp included
            continue
        found = Session(nonce.decode("ascii"), int(signed.timestamp()) + SESSION_SECONDS)
    return found


class Revocations:
    """Sessions signed out on this server (by nonce), each kept until it would have expired."""

    def __init__(self) -> None:
        self._until: dict[str, int] = {}
        self._guard = threading.Lock()

    def revoke(self, session: Session, *, now: float | None = None) -> None:
        current = int(now if now is not None else time.time())
        with self._guard:
            if len(self._until) >= _MAX_REVOKED:  # forget what expired; the bound holds
                self._until = {n: t for n, t in self._until.items() if t > current}
            if len(self._until) < _MAX_REVOKED:
                self._until[session.nonce] = session.expires

    def revoked(self, session: Session) -> bool:
        with self._guard:
            return session.nonce in self._until


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
