"""Who may call the Cloud Skills API: principals, their tokens, scopes, tier and teams.

Configured in the skills service's settings (``LMCP_SKILLS_PRINCIPALS``, a JSON list).

A token authenticates ONE scope. ``save_cloud_skill`` has no scope parameter (the spec: "the
authenticated personal or team scope decides where the skill is stored"), so the scope of a save
is the token's: its principal's personal scope, or, when ``team_scope`` names a team the
principal belongs to, that team's scope. Someone who writes to both holds two tokens (two
entries with the same ``principal``). Reading (recall, discovery) covers the personal scope and
every team the principal is a member of, whichever token is used.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

__all__ = ["TIER_ORDER", "Role", "Scope", "SkillPrincipal", "TeamMembership", "Tier"]

Scope = Literal["memory:read", "memory:write"]
Tier = Literal["free", "pro", "team", "enterprise"]
Role = Literal["member", "reviewer"]

#: Tiers from lowest to highest; ``save_cloud_skill`` needs at least ``pro``.
TIER_ORDER: tuple[Tier, ...] = ("free", "pro", "team", "enterprise")

_TEAM_PATTERN = r"^[a-z0-9][a-z0-9-]{0,63}$"


class TeamMembership(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    team: str = Field(min_length=1, max_length=64, pattern=_TEAM_PATTERN)
    role: Role = "member"


class SkillPrincipal(BaseModel):
    """One token and what it may do."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    token: SecretStr
    principal: str = Field(min_length=1, max_length=64, pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")
    scopes: frozenset[Scope] = frozenset({"memory:read"})
    tier: Tier = "free"
    teams: tuple[TeamMembership, ...] = ()
    #: The scope this token writes to: ``None`` for the principal's personal scope, else a team
    #: the principal is a member of (its saves become PROPOSED revisions of that team).
    team_scope: str | None = Field(default=None, min_length=1, max_length=64, pattern=_TEAM_PATTERN)

    @model_validator(mode="after")
    def _team_scope_is_a_membership(self) -> SkillPrincipal:
        if self.team_scope is not None and self.role_in(self.team_scope) is None:
            raise ValueError("team_scope must name one of the principal's teams")
        teams = [m.team for m in self.teams]
        if len(teams) != len(set(teams)):
            raise ValueError("a team is listed twice in teams")
        return self

    def has_scope(self, scope: Scope) -> bool:
        return scope in self.scopes

    def tier_at_least(self, tier: Tier) -> bool:
        return TIER_ORDER.index(self.tier) >= TIER_ORDER.index(tier)

    def role_in(self, team: str) -> Role | None:
        """The principal's role in ``team``, or ``None`` when not a member."""
        for membership in self.teams:
            if membership.team == team:
                return membership.role
        return None
