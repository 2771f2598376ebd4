"""Every error of the Cloud Skills API: a stable code, its class and its HTTP status.

Classes follow the spec's error list, plus ``not_found`` and ``request``::

    authorization          401/403  no or unknown token, scope or tier too low, scope not usable
    validation             422      name, instructions, slug, description, publish
    component_validation   422      components_json and each component
    scope_lifecycle        409      a life-cycle step that the revision's state does not allow
    not_found              404      no such skill, revision or resource in the caller's scopes
    request                400/413  the body is not a JSON object, or is too large

:class:`SkillProblem` is raised by the pure core and the store; the routes turn it into the
service's problem+json. ``detail`` is always one of the constant texts below (or a validation
issue's constant text): never a submitted value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from cloudskills.issues import Issue
from service.errors import ServiceError

__all__ = ["CODES", "ISSUE_CODES", "ProblemClass", "SkillProblem"]

ProblemClass = Literal[
    "authorization",
    "validation",
    "component_validation",
    "scope_lifecycle",
    "not_found",
    "request",
]


@dataclass(frozen=True, slots=True)
class CodeInfo:
    problem_class: ProblemClass
    status: int
    detail: str


CODES: MappingProxyType[str, CodeInfo] = MappingProxyType(
    {
        # authorization
        "unauthenticated": CodeInfo(
            "authorization", 401, "a valid bearer token is required for the Cloud Skills API"
        ),
        "insufficient_scope": CodeInfo(
            "authorization", 403, "the token lacks the scope this operation requires"
        ),
        "tier_too_low": CodeInfo(
            "authorization", 403, "save_cloud_skill needs a principal of tier 'pro' or higher"
        ),
        "scope_forbidden": CodeInfo(
            "authorization", 403, "the caller cannot use the resolved personal or team scope"
        ),
        "not_a_reviewer": CodeInfo(
            "authorization", 403, "only a reviewer of the team can approve or reject"
        ),
        "self_review_forbidden": CodeInfo(
            "authorization", 403, "a reviewer cannot approve or reject their own proposal"
        ),
        # validation (one problem for every issue found)
        "validation_failed": CodeInfo("validation", 422, "the skill breaks validation rules"),
        "component_validation_failed": CodeInfo(
            "component_validation", 422, "the skill's components break validation rules"
        ),
        # scope life cycle
        "not_proposed": CodeInfo(
            "scope_lifecycle", 409, "only a proposed team revision can be approved or rejected"
        ),
        "not_draft": CodeInfo("scope_lifecycle", 409, "only a draft revision can be published"),
        "no_live_revision": CodeInfo(
            "scope_lifecycle",
            409,
            "the skill has no published revision yet (drafts and proposals are not live)",
        ),
        # not found
        "skill_not_found": CodeInfo("not_found", 404, "no such skill in the caller's scopes"),
        "revision_not_found": CodeInfo("not_found", 404, "no such revision of this skill"),
        "resource_not_found": CodeInfo("not_found", 404, "no such resource in this revision"),
        # request
        "body_not_object": CodeInfo("request", 400, "the body must be a JSON object"),
        "body_too_large": CodeInfo("request", 413, "the body is larger than the skills limit"),
    }
)

#: Codes an :class:`Issue` can carry (inside ``errors`` of a 422).
ISSUE_CODES: frozenset[str] = frozenset(
    {
        "field_unknown",
        "field_type",
        "text_not_utf8",
        "name_empty",
        "name_too_long",
        "instructions_empty",
        "instructions_too_large",
        "description_too_long",
        "slug_invalid",
        "slug_underivable",
        "secret_detected",
        "components_not_array",
        "too_many_components",
        "component_not_object",
        "component_unknown_field",
        "component_field_type",
        "component_type_invalid",
        "component_content_xor_artifact_ref",
        "component_too_large",
        "artifact_ref_invalid",
        "mime_type_invalid",
        "metadata_invalid",
        "script_needs_content",
        "script_interpreter_unsupported",
        "path_empty",
        "path_too_long",
        "path_backslash",
        "path_absolute",
        "path_traversal",
        "path_not_normalized",
        "path_not_portable",
        "path_reserved",
        "path_duplicate",
    }
)


class SkillProblem(ServiceError):
    """A Cloud Skills error with a stable ``code`` (see :data:`CODES`)."""

    def __init__(self, code: str, *, issues: Sequence[Issue] = (), scope: str | None = None):
        info = CODES[code]
        super().__init__(code)
        self.code = code
        self.problem_class: ProblemClass = info.problem_class
        self.status = info.status
        self.detail = info.detail
        self.issues = tuple(issues)
        #: For ``insufficient_scope``: the OAuth scope that was missing.
        self.scope = scope

    @classmethod
    def from_issues(cls, issues: Sequence[Issue]) -> SkillProblem:
        """One 422 for every issue: ``validation_failed`` unless all are about components."""
        only_components = all(i.kind == "component_validation" for i in issues)
        code = "component_validation_failed" if only_components else "validation_failed"
        return cls(code, issues=issues)
