"""Who may call the Cloud Skills API: principals, their tokens, scopes, tier and teams.

Configured in the collector's settings (``LMCP_COLLECTOR_SKILL_PRINCIPALS``, a JSON list).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

Scope = Literal["memory:read", "memory:write"]
Tier = Literal["free", "pro", "team", "enterprise"]
Role = Literal["member", "reviewer"]


class TeamMembership(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    team: str = Field(min_length=1, max_length=64, pattern=r"^[a-z0-9][a-z0-9-]{0,63}$")
    role: Role = "member"


class SkillPrincipal(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    token: SecretStr
    principal: str = Field(min_length=1, max_length=64, pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")
    scopes: frozenset[Scope] = frozenset({"memory:read"})
    tier: Tier = "free"
    teams: tuple[TeamMembership, ...] = ()
