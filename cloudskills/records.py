"""What the store hands back: scopes, revisions and their manifests (plain frozen data)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["ManifestEntry", "Resource", "RevisionRecord", "SkillScope", "Status", "Summary"]

Status = Literal["draft", "proposed", "published", "rejected"]
ScopeKind = Literal["personal", "team"]


@dataclass(frozen=True, slots=True)
class SkillScope:
    """Where a skill lives: a principal's personal scope or a team's."""

    kind: ScopeKind
    owner: str

    @classmethod
    def personal(cls, principal: str) -> SkillScope:
        return cls("personal", principal)

    @classmethod
    def team(cls, team: str) -> SkillScope:
        return cls("team", team)

    def to_dict(self) -> dict[str, str | None]:
        return {"kind": self.kind, "team": self.owner if self.kind == "team" else None}


@dataclass(frozen=True, slots=True)
class ManifestEntry:
    """One typed resource of a revision (its content is read separately)."""

    path: str
    type: str
    mime_type: str
    size: int | None
    hash: str | None
    artifact_ref: str | None
    metadata: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "type": self.type,
            "mime_type": self.mime_type,
            "size": self.size,
            "hash": self.hash,
            "metadata": dict(self.metadata),
        }
        if self.artifact_ref is not None:
            out["artifact_ref"] = self.artifact_ref
        return out


@dataclass(frozen=True, slots=True)
class RevisionRecord:
    skill_id: str
    slug: str
    scope: SkillScope
    revision_id: str
    revision_number: int
    name: str
    description: str
    instructions: str
    canonical_hash: str
    author: str
    status: Status
    manifest: tuple[ManifestEntry, ...]


@dataclass(frozen=True, slots=True)
class Resource:
    """One resource of a pinned revision, with its content (``None`` for an artifact)."""

    revision: RevisionRecord
    entry: ManifestEntry
    content: str | None


@dataclass(frozen=True, slots=True)
class Summary:
    """A Level 0 discovery result: the newest published revision of one skill."""

    skill_id: str
    slug: str
    scope: SkillScope
    revision_id: str
    revision_number: int
    name: str
    description: str
    canonical_hash: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "skill_id": self.skill_id,
            "slug": self.slug,
            "scope": self.scope.to_dict(),
            "name": self.name,
            "description": self.description,
            "revision_id": self.revision_id,
            "revision_number": self.revision_number,
            "canonical_hash": self.canonical_hash,
        }
