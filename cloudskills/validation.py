"""Validation of a ``save_cloud_skill`` request: pure, total, value-free.

``validate_save(body)`` returns a :class:`SkillDraft` or raises :class:`InvalidSkill` holding
every :class:`Issue` found (components are checked by :mod:`cloudskills.components`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cloudskills.components import Component, component_secrets, parse_components
from cloudskills.hashing import canonical_hash
from cloudskills.issues import (
    InvalidSkill,
    Issue,
    IssueKind,
    make_issue,
    pii_issues,
    secret_issues,
    utf8_size,
)
from cloudskills.limits import (
    MAX_DESCRIPTION_CHARS,
    MAX_INSTRUCTIONS_BYTES,
    MAX_NAME_CHARS,
)
from cloudskills.slugs import derive_slug, is_valid_slug

__all__ = [
    "SAVE_PARAMETERS",
    "Component",
    "InvalidSkill",
    "Issue",
    "IssueKind",
    "SkillDraft",
    "validate_save",
]

#: The spec's parameters of ``save_cloud_skill``, exactly.
SAVE_PARAMETERS: tuple[str, ...] = (
    "name",
    "instructions",
    "slug",
    "description",
    "publish",
    "components_json",
)


@dataclass(frozen=True, slots=True)
class SkillDraft:
    """A valid save request, with defaults applied and components in canonical order."""

    name: str
    slug: str
    description: str
    instructions: str
    publish: bool
    components: tuple[Component, ...] = field(default=())

    @property
    def canonical_hash(self) -> str:
        return canonical_hash(
            name=self.name,
            description=self.description,
            instructions=self.instructions,
            components=[c.as_mapping() for c in self.components],
        )


def _optional(body: Mapping[str, Any], key: str, default: Any) -> Any:
    value = body.get(key)
    return default if value is None else value


def _check_text(
    issues: list[Issue], value: Any, location: str, *, required: bool, max_chars: int
) -> str:
    if not isinstance(value, str):
        issues.append(make_issue("field_type", location, f"{location} must be a string"))
        return ""
    if utf8_size(value) is None:
        issues.append(make_issue("text_not_utf8", location, f"{location} is not valid UTF-8 text"))
        return ""
    if required and not value.strip():
        issues.append(make_issue(f"{location}_empty", location, f"{location} must not be empty"))
    elif len(value) > max_chars:
        issues.append(
            make_issue(
                f"{location}_too_long",
                location,
                f"{location} must be at most {max_chars} characters",
            )
        )
    return value


def validate_save(body: Mapping[str, Any]) -> SkillDraft:
    """Check a save request against every rule of the spec; raise :class:`InvalidSkill`."""
    issues: list[Issue] = []
    unknown = sum(1 for key in body if key not in SAVE_PARAMETERS)
    if unknown:
        issues.append(
            make_issue(
                "field_unknown",
                "body",
                f"{unknown} field(s) are not parameters of save_cloud_skill "
                f"({', '.join(SAVE_PARAMETERS)})",
            )
        )
    if body.get("name") is None:
        issues.append(make_issue("name_empty", "name", "name is required"))
        name = ""
    else:
        name = _check_text(issues, body["name"], "name", required=True, max_chars=MAX_NAME_CHARS)
    if body.get("instructions") is None:
        issues.append(make_issue("instructions_empty", "instructions", "instructions is required"))
        instructions = ""
    else:
        instructions = _check_instructions(issues, body["instructions"])
    description = _check_text(
        issues,
        _optional(body, "description", ""),
        "description",
        required=False,
        max_chars=MAX_DESCRIPTION_CHARS,
    )
    slug = _check_slug(issues, body.get("slug"), name)
    publish = _optional(body, "publish", True)
    if not isinstance(publish, bool):
        issues.append(make_issue("field_type", "publish", "publish must be a boolean"))
        publish = False
    components = parse_components(issues, _optional(body, "components_json", "[]"))
    if not issues:
        for location, text in (
            ("name", name),
            ("description", description),
            ("instructions", instructions),
        ):
            issues.extend(secret_issues(text, location))
            issues.extend(pii_issues(text, location))
        for index, component in enumerate(components.originals):
            issues.extend(component_secrets(index, component))
    if issues:
        raise InvalidSkill(issues)
    return SkillDraft(name, slug, description, instructions, publish, components.sorted)


def _check_instructions(issues: list[Issue], value: Any) -> str:
    if not isinstance(value, str):
        issues.append(make_issue("field_type", "instructions", "instructions must be a string"))
        return ""
    size = utf8_size(value)
    if size is None:
        issues.append(
            make_issue("text_not_utf8", "instructions", "instructions is not valid UTF-8")
        )
    elif not value.strip():
        issues.append(
            make_issue("instructions_empty", "instructions", "instructions must not be empty")
        )
    elif size > MAX_INSTRUCTIONS_BYTES:
        issues.append(
            make_issue(
                "instructions_too_large",
                "instructions",
                f"instructions must be at most {MAX_INSTRUCTIONS_BYTES} bytes after UTF-8 encoding",
            )
        )
    return value


def _check_slug(issues: list[Issue], value: Any, name: str) -> str:
    if value is None:
        derived = derive_slug(name) if name.strip() else None
        if derived is None:
            if name.strip():
                issues.append(
                    make_issue(
                        "slug_underivable",
                        "slug",
                        "no slug can be derived from name (it has no ASCII letter or digit); "
                        "give a slug",
                    )
                )
            return ""
        return derived
    if not isinstance(value, str):
        issues.append(make_issue("field_type", "slug", "slug must be a string"))
        return ""
    if not is_valid_slug(value):
        issues.append(
            make_issue(
                "slug_invalid",
                "slug",
                "slug must be 1 to 64 characters: lowercase letters and digits in runs joined "
                "by single hyphens",
            )
        )
    return value
