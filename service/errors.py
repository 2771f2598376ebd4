"""The services' errors, and the one shape every error of either service takes on the wire.

Hierarchy (a service adds its own below ``ServiceError``)::

    Exception
     └── ServiceError          anything a service raises on purpose
          ├── ProblemError     an HTTP problem: status, stable code, value-free detail
          ├── MigrationError   a migration failed, or an applied one was edited since
          ├── WriteError       (collector/errors.py) a flush failed: its requests answer 503
          ├── SkillProblem     (cloudskills/problems.py) a Cloud Skills refusal with a stable
          │                    code; its routes turn it into a ``ProblemError``
          └── InvalidSkill     (cloudskills/issues.py) a save breaks rules; carries them all

Every HTTP error -- a raised ``ProblemError``, Starlette's 404/405, request validation, and any
unhandled exception (a generic 500) -- answers RFC 9457 ``application/problem+json``::

    {"type": "https://lmcp.invalid/problems/<code>", "title": "Unprocessable Content",
     "status": 422, "detail": "...", "code": "<code>",
     "errors": [{"pointer": "/signals/0/day", "rule": "date_from_datetime_parsing", ...}]}

``detail`` and ``errors`` name fields and rules; they never echo a submitted value: messages come
from fixed tables in this module, never from the validator, and keys the client invented (an
extra field's name) are not repeated either.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic_core import ErrorDetails
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "MAX_LISTED_ERRORS",
    "PROBLEM_MEDIA_TYPE",
    "PROBLEM_TYPE_BASE",
    "CatchAllMiddleware",
    "MigrationError",
    "ProblemError",
    "ServiceError",
    "describe_errors",
    "install_error_handlers",
    "problem_body",
    "problem_response",
]

log = logging.getLogger("service")

PROBLEM_MEDIA_TYPE = "application/problem+json"
PROBLEM_TYPE_BASE = "https://lmcp.invalid/problems/"
#: At most this many entries in ``errors``; ``error_count`` gives the total.
MAX_LISTED_ERRORS = 20

#: Rule descriptions by pydantic error type. Anything not listed gets a generic description.
_RULES: Mapping[str, str] = {
    "missing": "required field is missing",
    "extra_forbidden": "field is not part of the schema",
    "enum": "not one of the allowed values",
    "literal_error": "not one of the allowed values",
    "string_type": "must be a string",
    "string_pattern_mismatch": "does not match the required pattern",
    "string_too_long": "string is too long",
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "bool_type": "must be a boolean",
    "greater_than_equal": "number is too small",
    "less_than_equal": "number is too large",
    "too_long": "too many items",
    "too_short": "too few items",
    "tuple_type": "must be an array",
    "list_type": "must be an array",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "dict_type": "must be an object",
    "uuid_type": "must be a UUID string",
    "uuid_parsing": "must be a UUID string",
    "uuid_version": "must be a version 4 UUID",
    "date_type": "must be a date (YYYY-MM-DD)",
    "date_parsing": "must be a date (YYYY-MM-DD)",
    "date_from_datetime_parsing": "must be a date (YYYY-MM-DD)",
    "date_from_datetime_inexact": "must be a date (YYYY-MM-DD)",
    "json_invalid": "body is not valid JSON",
    "json_type": "must be JSON",
    "none_required": "must be null",
    "frozen_instance": "field cannot be changed",
}

#: Stable codes for Starlette's own HTTP errors.
_HTTP_CODES: Mapping[int, str] = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "body_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
    500: "internal_error",
    503: "unavailable",
}


class ServiceError(Exception):
    """Base of every error a service raises on purpose."""


class ProblemError(ServiceError):
    """An HTTP problem. Raise it anywhere; it becomes a problem+json response.

    ``detail`` must be value-free: name fields and rules, never what was submitted.
    """

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        *,
        errors: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(f"{status} {code}")
        self.status = status
        self.code = code
        self.detail = detail
        self.errors = errors
        self.headers = headers


class MigrationError(ServiceError):
    """A migration failed, or a migration recorded as applied has been edited since."""


def _title(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def problem_body(
    status: int,
    code: str,
    detail: str,
    errors: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": PROBLEM_TYPE_BASE + code,
        "title": _title(status),
        "status": status,
        "detail": detail,
        "code": code,
    }
    if errors is not None:
        body["errors"] = list(errors[:MAX_LISTED_ERRORS])
        body["error_count"] = len(errors)
    return body


def problem_response(
    status: int,
    code: str,
    detail: str,
    *,
    errors: Sequence[Mapping[str, Any]] | None = None,
    headers: Mapping[str, str] | None = None,
) -> Response:
    content = json.dumps(problem_body(status, code, detail, errors), separators=(",", ":"))
    return Response(content, status, headers=dict(headers or {}), media_type=PROBLEM_MEDIA_TYPE)


def _pointer(loc: Sequence[int | str], error_type: str) -> str:
    parts = [str(p) for p in loc]
    if error_type == "extra_forbidden" and parts:
        # The key was invented by the client: it may carry a value. Name its parent only.
        parts[-1] = "*"
    # RFC 6901 escaping of "~" and "/" (only schema-defined keys remain here).
    return "/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts) if parts else ""


def describe_errors(errors: Sequence[ErrorDetails], *, loc_prefix: int = 0) -> list[dict[str, Any]]:
    """Value-free descriptions of validation errors: a JSON pointer, the rule, a fixed text.

    ``loc_prefix`` drops that many leading location parts (FastAPI's ``"query"`` etc. are kept
    as they are useful; pass 0).
    """
    out: list[dict[str, Any]] = []
    for err in errors:
        kind = err["type"]
        out.append(
            {
                "pointer": _pointer(err["loc"][loc_prefix:], kind),
                "rule": kind,
                "detail": _RULES.get(kind, "value is not allowed here"),
            }
        )
    return out


async def _problem_handler(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ProblemError)
    return problem_response(
        exc.status, exc.code, exc.detail, errors=exc.errors, headers=exc.headers
    )


async def _http_handler(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    status = exc.status_code
    code = _HTTP_CODES.get(status, f"http_{status}")
    # Starlette's own detail is a status phrase; a route's may not be value-free: use ours.
    return problem_response(status, code, _title(status), headers=exc.headers)


async def _validation_handler(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    errors = describe_errors(list(exc.errors()))
    return problem_response(
        422, "invalid_request", "The request's parameters are not valid.", errors=errors
    )


class CatchAllMiddleware:
    """Turn any exception escaping the app into a generic 500 problem.

    Logs the exception's TYPE only: a message could carry a value.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:
            log.error("unhandled %s in a request", type(exc).__name__)
            if started:
                return  # the response is cut short; the client sees an incomplete body
            response = problem_response(500, "internal_error", "An internal error occurred.")
            await response(scope, receive, send)


def install_error_handlers(app: FastAPI) -> None:
    """Make every error of ``app``'s routes answer one problem+json shape.

    The catch-all for what escapes them is ``CatchAllMiddleware``, which each service's
    ``create_app`` puts around every route.
    """
    app.add_exception_handler(ProblemError, _problem_handler)
    app.add_exception_handler(StarletteHTTPException, _http_handler)
    app.add_exception_handler(RequestValidationError, _validation_handler)
