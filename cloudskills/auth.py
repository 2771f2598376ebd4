"""Who is calling, and what they may do: bearer tokens to principals, scopes and tiers.

Pure functions over :class:`SkillPrincipal`; each refusal is a :class:`SkillProblem` of class
``authorization``. A token is compared in constant time against every configured token.
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence

from cloudskills.principals import Scope, SkillPrincipal, Tier
from cloudskills.problems import SkillProblem
from cloudskills.records import SkillScope

__all__ = [
    "SAVE_MIN_TIER",
    "Authenticator",
    "read_scope",
    "require_reviewer",
    "require_save",
    "require_scope",
    "write_scope",
]

#: ``save_cloud_skill`` is listed on the advanced surface with a minimum tier of ``pro`` (spec).
SAVE_MIN_TIER: Tier = "pro"


class Authenticator:
    """Maps an ``Authorization: Bearer <token>`` header to its principal."""

    def __init__(self, principals: Sequence[SkillPrincipal]) -> None:
        self._principals = tuple(
            (p.token.get_secret_value().encode("utf-8"), p) for p in principals
        )

    def authenticate(self, authorization: str | None) -> SkillPrincipal:
        if not authorization:
            raise SkillProblem("unauthenticated")
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise SkillProblem("unauthenticated")
        given = token.strip().encode("utf-8")
        found: SkillPrincipal | None = None
        for known, principal in self._principals:
            # Compare with every token, so the time taken does not say which one nearly matched.
            if hmac.compare_digest(known, given) and found is None:
                found = principal
        if found is None:
            raise SkillProblem("unauthenticated")
        return found


def require_scope(principal: SkillPrincipal, scope: Scope) -> None:
    if not principal.has_scope(scope):
        raise SkillProblem("insufficient_scope", scope=scope)


def require_save(principal: SkillPrincipal) -> SkillScope:
    """``memory:write`` and tier ``pro`` or higher; the scope the token writes to."""
    require_scope(principal, "memory:write")
    if not principal.tier_at_least(SAVE_MIN_TIER):
        raise SkillProblem("tier_too_low")
    return write_scope(principal)


def write_scope(principal: SkillPrincipal) -> SkillScope:
    """The token's authenticated scope: its ``team_scope`` team, else the personal scope."""
    if principal.team_scope is not None:
        if principal.role_in(principal.team_scope) is None:  # settings forbid it; stay closed
            raise SkillProblem("scope_forbidden")
        return SkillScope.team(principal.team_scope)
    return SkillScope.personal(principal.principal)


def read_scope(principal: SkillPrincipal, team: str | None) -> SkillScope:
    """The scope named by a request: the caller's personal scope, or a team they belong to."""
    if team is None:
        return SkillScope.personal(principal.principal)
    if principal.role_in(team) is None:
        raise SkillProblem("scope_forbidden")
    return SkillScope.team(team)


def require_reviewer(principal: SkillPrincipal, team: str | None) -> SkillScope:
    """``memory:write`` and the reviewer role in ``team``."""
    require_scope(principal, "memory:write")
    if team is None:
        raise SkillProblem("not_a_reviewer")
    role = principal.role_in(team)
    if role is None:
        raise SkillProblem("scope_forbidden")
    if role != "reviewer":
        raise SkillProblem("not_a_reviewer")
    return SkillScope.team(team)
