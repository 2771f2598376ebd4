"""The collector's Cloud Skills error codes, mapped to LMCP's error classes and value-free texts.

The server's codes are its contract (``cloudskills/problems.py``); a test checks that every
one of them is mapped here. A message is built only from this table and from codes and JSON
pointers that pass a strict shape check: nothing the server sends is repeated verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from client.errors import ToolFailure
from contract.schema import ErrorClass, Outcome

__all__ = ["ISSUE_TOO_LARGE", "PROBLEM_CODES", "failure_from_problem"]

_E = ErrorClass
#: problem code -> (error class, message)
PROBLEM_CODES: MappingProxyType[str, tuple[ErrorClass, str]] = MappingProxyType(
    {
        "unauthenticated": (_E.permission_denied, "the skills token was not accepted"),
        "insufficient_scope": (
            _E.permission_denied,
            "the skills token lacks the scope this tool needs (memory:write to save, "
            "memory:read to recall or execute)",
        ),
        "tier_too_low": (
            _E.permission_denied,
            "save_cloud_skill needs an account of tier 'pro' or higher",
        ),
        "scope_forbidden": (
            _E.permission_denied,
            "the token cannot use that personal or team scope",
        ),
        "not_a_reviewer": (_E.permission_denied, "only a team reviewer can do this"),
        "self_review_forbidden": (
            _E.permission_denied,
            "a reviewer cannot decide on their own proposal",
        ),
        "validation_failed": (_E.invalid_arguments, "the skill breaks validation rules"),
        "component_validation_failed": (
            _E.invalid_arguments,
            "the skill's components break validation rules",
        ),
        "not_proposed": (_E.conflict, "only a proposed team revision can be reviewed"),
        "not_draft": (_E.conflict, "only a draft revision can be published"),
        "no_live_revision": (
            _E.conflict,
            "the skill has no published revision yet (drafts and proposals are not live)",
        ),
        "skill_not_found": (_E.not_found, "no such skill in your scopes"),
        "revision_not_found": (_E.not_found, "no such revision of this skill"),
        "resource_not_found": (_E.not_found, "no such resource in this revision"),
        "body_not_object": (_E.invalid_arguments, "the request was not a JSON object"),
        "body_too_large": (_E.too_large, "the skill is larger than the service accepts"),
        # The collector's generic problems.
        "invalid_request": (_E.invalid_arguments, "a parameter breaks its rule"),
        "not_found": (_E.not_found, "no such skill, revision or resource"),
        "rate_limited": (_E.unavailable, "the skills service is busy; try again later"),
        "internal_error": (_E.unavailable, "the skills service failed"),
        "unavailable": (_E.unavailable, "the skills service is unavailable"),
    }
)

#: Issue rules that mean a limit was exceeded (the call fails as ``too_large``).
ISSUE_TOO_LARGE: frozenset[str] = frozenset(
    {"instructions_too_large", "component_too_large", "too_many_components"}
)

_CODE = re.compile(r"^[a-z][a-z0-9_]{0,63}\Z")
_POINTER = re.compile(
    r"^(?:/(?:name|instructions|slug|description|publish|components_json))?"
    r"(?:/\d{1,3}(?:/[a-z_]{1,32})?)?\Z"
)


def _issues(body: Mapping[str, Any]) -> list[tuple[str, str, str | None]]:
    """(rule, pointer, secret rule) of each entry that passes the shape checks."""
    found: list[tuple[str, str, str | None]] = []
    errors = body.get("errors")
    if not isinstance(errors, list):
        return found
    for entry in errors:
        if not isinstance(entry, dict):
            continue
        rule, pointer, secret = entry.get("rule"), entry.get("pointer"), entry.get("secret_rule")
        if not (isinstance(rule, str) and _CODE.match(rule)):
            continue
        if not (isinstance(pointer, str) and _POINTER.match(pointer)):
            pointer = ""
        ok_secret = isinstance(secret, str) and _CODE.match(secret)
        found.append((rule, pointer, secret if ok_secret else None))
    return found


def failure_from_problem(status: int, body: Any) -> ToolFailure:
    """A :class:`ToolFailure` for an error response of the skills API."""
    code = body.get("code") if isinstance(body, dict) else None
    if not (isinstance(code, str) and _CODE.match(code)):
        code = "unavailable" if status >= 500 or status == 429 else "skills_error"
    error_class, message = PROBLEM_CODES.get(
        code, (_E.unavailable if status >= 500 else _E.invalid_arguments, "")
    )
    if not message:
        message = f"the skills service refused the request (HTTP {status})"
    issues = _issues(body) if isinstance(body, dict) else []
    if issues and code in ("validation_failed", "component_validation_failed"):
        parts = []
        for rule, pointer, secret in issues:
            text = rule + (f" (secret rule {secret})" if secret else "")
            parts.append(f"{text} at {pointer or '/'}")
        message = f"{message}: " + "; ".join(parts)
        if any(rule in ISSUE_TOO_LARGE for rule, _, _ in issues):
            error_class = _E.too_large
    outcome = Outcome.invalid if error_class is _E.invalid_arguments else Outcome.failed
    return ToolFailure(error_class, message, code=code, outcome=outcome)
