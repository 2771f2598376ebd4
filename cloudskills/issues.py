"""Validation issues: one broken rule each, value-free by construction.

An :class:`Issue` names a location (``instructions``, ``components[3].logical_path``) and a
rule, never the submitted value: a component is named by its index, not its path, and a secret
by its rule id. Its ``detail`` is built from constants only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from cloudskills.pii_checks import personal_data
from contract.secrets_scan import find_secrets
from service.errors import ServiceError

__all__ = [
    "InvalidSkill",
    "Issue",
    "IssueKind",
    "make_issue",
    "pii_issue",
    "pii_issues",
    "secret_issues",
    "utf8_size",
]
PII_CODE = "personal_data_detected"

IssueKind = Literal["validation", "component_validation"]


@dataclass(frozen=True, slots=True)
class Issue:
    """One broken rule. ``detail`` is built from constants only."""

    kind: IssueKind
    code: str
    location: str
    detail: str
    #: For ``secret_detected`` / ``personal_data_detected``: the id of the rule that matched.
    rule: str | None = None
    #: For ``personal_data_detected``: the offset of the first match in the field's text.
    offset: int | None = None

    @property
    def pointer(self) -> str:
        """RFC 6901 pointer into the request, ``components_json`` read as its parsed array."""
        if self.location == "body":
            return ""
        parts = re.sub(r"^components\[(\d+)\]", r"components_json.\1", self.location)
        return "/" + parts.replace(".", "/")

    def to_dict(self) -> dict[str, str]:
        """The services' error-entry shape (``pointer``, ``rule``, ``detail``) plus ``class``."""
        out = {"pointer": self.pointer, "rule": self.code, "detail": self.detail}
        out["class"] = self.kind
        if self.rule is not None:
            out["pii_rule" if self.code == PII_CODE else "secret_rule"] = self.rule
        if self.offset is not None:
            out["offset"] = str(self.offset)
        return out


class InvalidSkill(ServiceError):
    """The request breaks at least one rule; ``issues`` lists them all."""

    def __init__(self, issues: list[Issue]) -> None:
        super().__init__(f"{len(issues)} rule(s) broken")
        self.issues = issues


def utf8_size(text: str) -> int | None:
    """UTF-8 size of ``text``; ``None`` when it holds a lone surrogate (not encodable)."""
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return None


def make_issue(code: str, location: str, detail: str) -> Issue:
    """An issue whose class follows its location (``components...`` is component validation)."""
    kind: IssueKind = "component_validation" if location.startswith("component") else "validation"
    return Issue(kind, code, location, detail)


def secret_issues(text: str, location: str) -> list[Issue]:
    issues = []
    for rule in dict.fromkeys(hit.rule for hit in find_secrets(text)):
        issue = make_issue(
            "secret_detected", location, f"{location} holds a secret (rule '{rule}'); remove it"
        )
        issues.append(Issue(issue.kind, issue.code, issue.location, issue.detail, rule))
    return issues


def pii_issue(location: str, rule: str, offset: int) -> Issue:
    """Personal data at ``location``: the rule and the offset, never the value."""
    issue = make_issue(
        PII_CODE,
        location,
        f"{location} holds personal data (rule '{rule}' at offset {offset}); remove it",
    )
    return Issue(issue.kind, issue.code, issue.location, issue.detail, rule, offset)


def pii_issues(text: str, location: str) -> list[Issue]:
    """One issue per personal-data rule found in ``text`` (at its first offset)."""
    first: dict[str, int] = {}
    for hit in personal_data(text):
        first.setdefault(hit.rule, hit.start)
    return [pii_issue(location, rule, offset) for rule, offset in first.items()]
