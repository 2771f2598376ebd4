"""Signing in to the dashboard, and back to the page that asked for it.

``GET /dashboard/login`` shows the form, ``POST /dashboard/login`` with a valid read token sets
the session cookie (``analysis._session``), ``POST /dashboard/logout`` ends it. A dashboard page
opened without a session redirects to the form with ``next``: the page's own path and query, so
a shared link survives the sign-in.

``next`` is an open-redirect vector, and it is echoed in a redirect, so it is never trusted:
``safe_next`` keeps only a page of this dashboard named by enum members and filter values.
Spelled in the few characters the dashboard's own links use (``/dashboard``, then segments of
letters, digits, ``_``, ``-`` and inner dots, then an optional query of the same plus ``=`` and
``&``), its path must be one of the dashboard's pages or downloads with every segment a
catalogue or enum name, and its query the page's filters with values ``Filters.parse`` takes:
no free text of the request is ever echoed. Anything else -- a scheme, ``//host``, a
backslash, a percent escape, whitespace or a control character (a header split), a dot
segment, an unknown name, the sign-in page itself -- is dropped and the sign-in lands on the
overview. It is checked when the form is shown and again when it is posted (the form's field
is the browser's to change).

The form is the one body an unauthenticated client may send the collector, so it is held
small: the router hands the body guard (``service.bodies.BodyGuard``) ``LOGIN_BODY_BYTES``,
refused by length before anything is read, and the form is parsed with explicit limits
(urlencoded only: no multipart, so no file part and nothing spooled to disk; three fields).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from urllib.parse import parse_qsl, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import SecretStr

from analysis._filters import FilterError, Filters
from analysis._html import login_page
from analysis._registry import Question
from analysis._session import (
    COOKIE_NAME,
    CSRF_COOKIE,
    CSRF_SECONDS,
    SESSION_SECONDS,
    Revocations,
    Session,
    csrf_valid,
    make_session,
    new_csrf,
    open_session,
    secure_request,
)
from contract.schema import ErrorClass, FrictionType, ToolName
from service.auth import token_matches
from service.errors import ProblemError

__all__ = ["HOME", "LOGIN", "LOGIN_BODY_BYTES", "MAX_NEXT", "SignIn", "safe_next"]

HOME = "/dashboard"
LOGIN = "/dashboard/login"
#: The longest ``next`` kept (a dashboard link with every filter is about 120 characters).
MAX_NEXT = 512
#: The largest sign-in form: every field at its longest (``next`` at ``MAX_NEXT``), in ASCII
#: percent-encoded (3 bytes a character), is 3.3 KB.
LOGIN_BODY_BYTES = 4 * 1024
#: The sign-in form's fields and the longest value each may have (a ``next`` longer than
#: ``MAX_NEXT`` is dropped by ``safe_next``, not refused).
_FIELDS = {"token": 512, "csrf": 64, "next": LOGIN_BODY_BYTES}
_FORM_MEDIA = "application/x-www-form-urlencoded"
_SEGMENT = r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*"
_NEXT = re.compile(rf"/dashboard(?:/{_SEGMENT})*(?:\?[A-Za-z0-9_.=&-]*)?")
_FILTERS = frozenset({"start", "end", "platform", "version", "tool"})
_FORMATS = ("csv", "json")


def _names(enum: type[StrEnum]) -> frozenset[str]:
    return frozenset(m.value for m in enum)


def _download(name: str, stems: Collection[str]) -> bool:
    stem, _, fmt = name.rpartition(".")
    return stem in stems and fmt in _FORMATS


def _page(segments: Sequence[str]) -> bool:
    """Whether the path segments after ``/dashboard`` name one of its pages or downloads."""
    tools, classes, types = _names(ToolName), _names(ErrorClass), _names(FrictionType)
    match segments:
        case []:
            return True
        case ["tool", tool]:
            return tool in tools
        case ["tool", tool, "export", name]:
            return tool in tools and _download(name, ("trend",))
        case ["friction", tool, error_class, friction_type]:
            return tool in tools and error_class in classes and friction_type in types
        case ["friction", tool, error_class, friction_type, "export", name]:
            known = tool in tools and error_class in classes and friction_type in types
            return known and _download(name, ("trend", "versions"))
        case ["export", name]:
            return _download(name, _names(Question))
    return False


def _filters(query: str) -> bool:
    """Whether ``query`` is filters a page takes, each once, with values it accepts."""
    pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys) or not set(keys) <= _FILTERS:
        return False
    try:
        Filters.parse(dict(pairs))
    except FilterError:
        return False
    return True


def safe_next(raw: str | None) -> str | None:
    """``raw`` when it is a page of this dashboard (see the module's docstring), else None."""
    if not raw or len(raw) > MAX_NEXT or _NEXT.fullmatch(raw) is None:
        return None
    path, _, query = raw.partition("?")
    try:
        if not (_page(path.split("/")[2:]) and _filters(query)):
            return None
    except ValueError:  # parse_qsl's strict parsing
        return None
    return raw


@dataclass
class SignIn:
    """The dashboard's sign-in routes and the session check of every other page."""

    #: The configured read tokens (the settings' list: a token removed ends its sessions).
    read_tokens: Sequence[SecretStr]
    #: The headers of every dashboard page (CSP, no-store, ...).
    headers: dict[str, str] = field(default_factory=dict)
    revocations: Revocations = field(default_factory=Revocations)

    def _secrets(self) -> list[str]:
        return [t.get_secret_value() for t in self.read_tokens]

    def session_of(self, request: Request) -> Session | None:
        """The request's session, when valid and not signed out."""
        session = open_session(request.cookies.get(COOKIE_NAME), self._secrets())
        return None if session is None or self.revocations.revoked(session) else session

    def signed_in(self, request: Request) -> bool:
        return self.session_of(request) is not None

    def to_login(self, request: Request | None = None) -> RedirectResponse:
        """The redirect to the sign-in form, remembering ``request``'s page when it is one
        ``safe_next`` keeps (and not the overview, the default)."""
        target = None
        if request is not None:
            query = request.url.query
            target = safe_next(request.url.path + (f"?{query}" if query else ""))
        return RedirectResponse(_login_url(target), status_code=303, headers=self.headers)

    def add_routes(self, router: APIRouter) -> None:
        headers = self.headers

        def page(body: str, status: int = 200) -> HTMLResponse:
            return HTMLResponse(body, status_code=status, headers=headers)

        def secure(request: Request) -> bool:
            return secure_request(request.url.scheme, request.headers)

        @router.get(LOGIN, include_in_schema=False)
        async def login_form(request: Request) -> Response:
            csrf = new_csrf()
            target = safe_next(request.query_params.get("next"))
            failed = request.query_params.get("failed") == "1"
            response = page(login_page(failed=failed, csrf=csrf, next_path=target))
            response.set_cookie(
                CSRF_COOKIE,
                csrf,
                max_age=CSRF_SECONDS,
                path="/dashboard",
                httponly=True,
                samesite="strict",
                secure=secure(request),
            )
            return response

        @router.post(LOGIN, include_in_schema=False)
        async def login(request: Request) -> Response:
            fields = await _sign_in_form(request)
            token, csrf = fields.get("token", ""), fields.get("csrf", "")
            target = safe_next(fields.get("next"))  # the form's field is the browser's
            # Login CSRF: a browser (it sends Origin or Sec-Fetch-Site with a form POST) must
            # post the form's token, equal to its SameSite=Strict cookie: a cross-site page
            # cannot.
            from_browser = "origin" in request.headers or "sec-fetch-site" in request.headers
            if from_browser and not csrf_valid(request.cookies.get(CSRF_COOKIE), csrf):
                return page(login_page(failed=True, csrf="", next_path=target), status=403)
            if not token or not token_matches(self.read_tokens, token):
                # Post/redirect/get: the form comes back with a message, nothing is echoed.
                return RedirectResponse(
                    _login_url(target, failed=True), status_code=303, headers=headers
                )
            response = RedirectResponse(target or HOME, status_code=303, headers=headers)
            response.set_cookie(
                COOKIE_NAME,
                make_session(token),
                max_age=SESSION_SECONDS,
                path="/dashboard",
                httponly=True,
                samesite="strict",
                secure=secure(request),
            )
            response.delete_cookie(CSRF_COOKIE, path="/dashboard", httponly=True, samesite="strict")
            return response

        @router.post("/dashboard/logout", include_in_schema=False)
        async def logout(request: Request) -> Response:
            # Server-side: this value stops working even if a copy of the cookie survives.
            # Only a valid session is recorded, so anonymous posts cannot fill the list.
            session = self.session_of(request)
            if session is not None:
                self.revocations.revoke(session)  # this login's nonce only
            response = self.to_login()
            response.delete_cookie(
                COOKIE_NAME, path="/dashboard", httponly=True, samesite="strict",
                secure=secure(request),
            )  # fmt: skip
            return response


async def _sign_in_form(request: Request) -> dict[str, str]:
    """The sign-in form's fields, parsed within explicit limits (the body itself is within
    ``LOGIN_BODY_BYTES``: the guard saw to it). Unknown fields are ignored, as a browser's
    extra inputs would be."""
    media = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media != _FORM_MEDIA:
        raise ProblemError(
            415, "unsupported_media_type", f"The sign-in form must be {_FORM_MEDIA}."
        )
    form = await request.form(max_files=0, max_fields=len(_FIELDS), max_part_size=LOGIN_BODY_BYTES)
    fields: dict[str, str] = {}
    for name, value in form.multi_items():
        limit = _FIELDS.get(name)
        if limit is None:
            continue
        if not isinstance(value, str) or len(value) > limit:
            raise ProblemError(422, "invalid_request", "A sign-in field is too long.")
        fields[name] = value
    return fields


def _login_url(target: str | None, *, failed: bool = False) -> str:
    query: dict[str, str] = {"failed": "1"} if failed else {}
    if target is not None and target != HOME:
        query["next"] = target
    return LOGIN + (f"?{urlencode(query)}" if query else "")
