"""The skills service's settings: values, passed in (``create_app(settings)``), never read at
import.

Environment variables carry the prefix ``LMCP_SKILLS_`` (``docs/cloud-skills.md`` lists them;
a test checks); list-valued settings take JSON
(``LMCP_SKILLS_PRINCIPALS='[{"token": "...", "principal": "ann", ...}]'``). The service has its
own database file: never the collector's signals file.
"""

from __future__ import annotations

from pathlib import Path

import platformdirs
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from cloudskills.limits import PROPOSAL_RETENTION_DAYS
from cloudskills.principals import SkillPrincipal

__all__ = ["SkillsSettings", "default_skills_db_path"]


def default_skills_db_path() -> Path:
    """A DuckDB file in the platform's per-user data directory (beside, never in, the
    collector's signals file)."""
    return platformdirs.user_data_path("lmcp-skills", appauthor=False) / "skills.duckdb"


class SkillsSettings(BaseSettings):
    """Everything the skills service can be told. Tokens are ``SecretStr``: never printed."""

    model_config = SettingsConfigDict(
        env_prefix="LMCP_SKILLS_", extra="forbid", frozen=True, validate_default=True
    )

    db_path: Path = Field(
        default_factory=default_skills_db_path,
        description="The DuckDB file the skills service owns (created with its folder if "
        "missing). Never the collector's signals file.",
    )
    host: str = Field(default="127.0.0.1", description="Address `lmcp skills serve` binds.")
    port: int = Field(default=8766, ge=1, le=65535, description="Port `lmcp skills serve` binds.")
    principals: list[SkillPrincipal] = Field(
        default_factory=list,
        description="Who may call the API: token, scopes, tier, teams (a JSON list). Empty: "
        "every call answers 401.",
    )
    proposal_retention_days: int = Field(
        default=PROPOSAL_RETENTION_DAYS,
        ge=1,
        description="A team proposal never approved or rejected is removed (its content purged) "
        "after this many days.",
    )
