"""The response envelopes of the Cloud Skills API (spec: ``CloudSkillResponseEnvelope``).

Every response carries ``object``, ``schema_version`` (``xmemo.cloud_skill.v1``), ``kind``,
``warnings`` and ``data``. A root (``kind: "root"``, what ``save_cloud_skill`` returns) holds
exactly the spec's nine ``data`` fields; ``render_status`` is the life-cycle state of the
revision rendered: ``published`` (live), ``draft``, ``proposed`` (awaiting a team reviewer) or
``rejected``. Only ``published`` is live.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cloudskills.limits import SCHEMA_VERSION
from cloudskills.records import Resource, RevisionRecord, Summary

__all__ = [
    "ROOT_DATA_FIELDS",
    "SkillWarning",
    "discovery_envelope",
    "resource_envelope",
    "revisions_envelope",
    "root_envelope",
]

#: The spec's ``data`` fields of a root envelope, exactly.
ROOT_DATA_FIELDS: tuple[str, ...] = (
    "skill_id",
    "slug",
    "name",
    "description",
    "revision_id",
    "revision_number",
    "instructions",
    "canonical_hash",
    "manifest",
)


@dataclass(frozen=True, slots=True)
class SkillWarning:
    """A non-fatal remark: a stable code and a constant message."""

    code: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


UNCHANGED = SkillWarning(
    "unchanged",
    "the content's canonical hash equals the newest revision's: no revision was created",
)
PROPOSED = SkillWarning(
    "proposed_for_review",
    "team revisions are proposed, not published: a reviewer of the team must approve it",
)
DRAFT = SkillWarning("draft", "saved as a draft (publish: false): not live until published")
NOT_LIVE = SkillWarning(
    "not_live", "this pinned revision is not the skill's live published revision"
)


def _envelope(
    obj: str, kind: str, render_status: str, warnings: Sequence[SkillWarning], data: dict[str, Any]
) -> dict[str, Any]:
    return {
        "object": obj,
        "schema_version": SCHEMA_VERSION,
        "kind": kind,
        "render_status": render_status,
        "warnings": [w.to_dict() for w in warnings],
        "data": data,
    }


def root_envelope(
    revision: RevisionRecord, warnings: Sequence[SkillWarning] = ()
) -> dict[str, Any]:
    data = {
        "skill_id": revision.skill_id,
        "slug": revision.slug,
        "name": revision.name,
        "description": revision.description,
        "revision_id": revision.revision_id,
        "revision_number": revision.revision_number,
        "instructions": revision.instructions,
        "canonical_hash": revision.canonical_hash,
        "manifest": [entry.to_dict() for entry in revision.manifest],
    }
    return _envelope("cloud_skill", "root", revision.status, warnings, data)


def resource_envelope(resource: Resource) -> dict[str, Any]:
    revision = resource.revision
    item = resource.entry.to_dict()
    item["content"] = resource.content
    data = {
        "skill_id": revision.skill_id,
        "slug": revision.slug,
        "revision_id": revision.revision_id,
        "revision_number": revision.revision_number,
        "canonical_hash": revision.canonical_hash,
        "resource": item,
    }
    return _envelope("cloud_skill_resource", "resource", revision.status, (), data)


def discovery_envelope(results: Sequence[Summary], *, truncated: bool) -> dict[str, Any]:
    """Level 0 results (published revisions only); ``render_status`` says if more matched."""
    data = {"results": [r.to_dict() for r in results]}
    status = "truncated" if truncated else "complete"
    return _envelope("cloud_skill_list", "discovery", status, (), data)


def deletion_envelope(slug: str, scope: str, revisions_purged: int) -> dict[str, Any]:
    """A skill purged by its owner: what was removed, never what it held."""
    data = {"slug": slug, "scope": scope, "revisions_purged": revisions_purged}
    return _envelope("cloud_skill_deletion", "deletion", "deleted", (), data)


def revisions_envelope(revisions: Sequence[RevisionRecord]) -> dict[str, Any]:
    data = {
        "revisions": [
            {
                "revision_id": r.revision_id,
                "revision_number": r.revision_number,
                "canonical_hash": r.canonical_hash,
                "status": r.status,
                "author": r.author,
            }
            for r in revisions
        ]
    }
    return _envelope("cloud_skill_revisions", "revisions", "complete", (), data)
