"""``components_json``: parsing and checking a skill's typed components (pure, value-free).

Component validation failures of the spec: not a JSON array, a path that is empty / absolute /
traversing / reserved / duplicated, an invalid type, a content over 128 KiB; plus LMCP's rules
(see ``docs/cloud-skills.md``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import rfc8785

from cloudskills.hashing import content_hash
from cloudskills.issues import Issue, make_issue, pii_issue, pii_issues, secret_issues, utf8_size
from cloudskills.limits import (
    COMPONENT_FIELDS,
    COMPONENT_TYPES,
    DEFAULT_MIME_BY_SUFFIX,
    MAX_ARTIFACT_REF_CHARS,
    MAX_COMPONENT_BYTES,
    MAX_COMPONENTS,
    MAX_METADATA_BYTES,
    SCRIPT_INTERPRETERS,
)
from cloudskills.paths import path_key, path_problem
from cloudskills.pii_checks import personal_data_in_json
from contract.secrets_scan import scan_json

__all__ = ["Component", "ParsedComponents", "component_secrets", "parse_components"]

_MIME = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+-]{0,62}/[a-z0-9][a-z0-9!#$&^_.+-]{0,62}\Z")
_ARTIFACT_REF = re.compile(r"^[^\s\x00-\x1f\x7f]+\Z")


@dataclass(frozen=True, slots=True)
class Component:
    type: str
    logical_path: str
    mime_type: str
    metadata: Mapping[str, Any]
    content: str | None = None
    artifact_ref: str | None = None

    @property
    def size(self) -> int | None:
        """UTF-8 bytes of the content; ``None`` for an artifact reference."""
        return None if self.content is None else len(self.content.encode("utf-8"))

    @property
    def hash(self) -> str | None:
        return None if self.content is None else content_hash(self.content)

    def as_mapping(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "logical_path": self.logical_path,
            "mime_type": self.mime_type,
            "metadata": dict(self.metadata),
            "content": self.content,
            "artifact_ref": self.artifact_ref,
        }


@dataclass(frozen=True, slots=True)
class ParsedComponents:
    originals: tuple[Component, ...] = ()

    @property
    def sorted(self) -> tuple[Component, ...]:
        return tuple(sorted(self.originals, key=lambda c: c.logical_path))


def _reject_constant(_: str) -> Any:
    raise ValueError("NaN and Infinity are not JSON")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError("duplicate key")
        out[key] = value
    return out


def parse_components(issues: list[Issue], raw: Any) -> ParsedComponents:
    """Parse and check ``components_json``; append issues, return the valid components."""
    where = "components_json"
    if not isinstance(raw, str):
        issues.append(
            make_issue(
                "components_not_array", where, f"{where} must be a string holding a JSON array"
            )
        )
        return ParsedComponents()
    try:
        items = json.loads(
            raw, parse_constant=_reject_constant, object_pairs_hook=_no_duplicate_keys
        )
    except (ValueError, RecursionError):
        issues.append(
            make_issue(
                "components_not_array",
                where,
                f"{where} is not valid JSON (NaN, Infinity and duplicate keys are refused)",
            )
        )
        return ParsedComponents()
    if not isinstance(items, list):
        issues.append(make_issue("components_not_array", where, f"{where} must be a JSON array"))
        return ParsedComponents()
    if len(items) > MAX_COMPONENTS:
        issues.append(
            make_issue(
                "too_many_components",
                where,
                f"{where} must hold at most {MAX_COMPONENTS} components",
            )
        )
        return ParsedComponents()
    found: list[Component] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        component = _check_component(issues, index, item, seen)
        if component is not None:
            found.append(component)
    return ParsedComponents(tuple(found))


def _check_component(
    issues: list[Issue], index: int, item: Any, seen: set[str]
) -> Component | None:
    at = f"components[{index}]"
    if not isinstance(item, dict):
        issues.append(make_issue("component_not_object", at, f"{at} must be a JSON object"))
        return None
    before = len(issues)
    unknown = sum(1 for key in item if key not in COMPONENT_FIELDS)
    if unknown:
        issues.append(
            make_issue(
                "component_unknown_field",
                at,
                f"{at} holds {unknown} field(s) outside {', '.join(sorted(COMPONENT_FIELDS))}",
            )
        )
    kind = item.get("type")
    if not isinstance(kind, str) or kind not in COMPONENT_TYPES:
        issues.append(
            make_issue(
                "component_type_invalid",
                f"{at}.type",
                f"{at}.type must be one of {', '.join(sorted(COMPONENT_TYPES))}",
            )
        )
    path = item.get("logical_path", "")
    if not isinstance(path, str):
        issues.append(make_issue("component_field_type", f"{at}.logical_path", "must be a string"))
        path = ""
    elif utf8_size(path) is None:
        issues.append(make_issue("text_not_utf8", f"{at}.logical_path", "is not valid UTF-8"))
    else:
        problem = path_problem(path)
        if problem is not None:
            issues.append(make_issue(problem, f"{at}.logical_path", _PATH_DETAILS[problem]))
        elif path_key(path) in seen:
            issues.append(
                make_issue("path_duplicate", f"{at}.logical_path", _PATH_DETAILS["path_duplicate"])
            )
        else:
            seen.add(path_key(path))
    content, ref = item.get("content"), item.get("artifact_ref")
    if (content is None) == (ref is None):
        issues.append(
            make_issue(
                "component_content_xor_artifact_ref",
                at,
                f"{at} must hold exactly one of content and artifact_ref",
            )
        )
    elif content is not None:
        _check_content(issues, at, content)
    else:
        _check_ref(issues, at, ref)
    mime = _check_mime(issues, at, item.get("mime_type"), path, content is not None)
    metadata = _check_metadata(issues, at, item.get("metadata"))
    if kind == "script":
        if content is None:
            issues.append(
                make_issue("script_needs_content", at, f"{at}: a script must carry its content")
            )
        if mime not in SCRIPT_INTERPRETERS:
            issues.append(
                make_issue(
                    "script_interpreter_unsupported",
                    f"{at}.mime_type",
                    f"a script's mime_type must be one of {', '.join(sorted(SCRIPT_INTERPRETERS))}",
                )
            )
    if len(issues) != before:
        return None
    return Component(str(kind), path, mime, metadata, content, ref)


_PATH_DETAILS: dict[str, str] = {
    "path_empty": "logical_path is required and must not be empty",
    "path_too_long": "logical_path must be at most 512 characters",
    "path_backslash": "logical_path must use '/' separators, not backslashes",
    "path_absolute": "logical_path must be relative (no leading '/' or drive letter)",
    "path_traversal": "logical_path must not traverse directories ('..')",
    "path_not_normalized": "logical_path must not hold empty or '.' segments",
    "path_not_portable": (
        'logical_path must not hold control characters, any of <>:"|?*, or a segment ending '
        "in '.' or ' '"
    ),
    "path_reserved": (
        "logical_path is reserved (SKILL.md and manifest.json at the top level; device names "
        "such as CON, NUL, COM1 anywhere)"
    ),
    "path_duplicate": "logical_path duplicates an earlier component's (case-insensitively)",
}


def _check_content(issues: list[Issue], at: str, content: Any) -> None:
    if not isinstance(content, str):
        issues.append(make_issue("component_field_type", f"{at}.content", "must be a string"))
        return
    size = utf8_size(content)
    if size is None:
        issues.append(make_issue("text_not_utf8", f"{at}.content", "is not valid UTF-8 text"))
    elif size > MAX_COMPONENT_BYTES:
        issues.append(
            make_issue(
                "component_too_large",
                f"{at}.content",
                f"a component's content must be at most {MAX_COMPONENT_BYTES} bytes (UTF-8)",
            )
        )


def _check_ref(issues: list[Issue], at: str, ref: Any) -> None:
    if (
        not isinstance(ref, str)
        or not 1 <= len(ref) <= MAX_ARTIFACT_REF_CHARS
        or utf8_size(ref) is None
        or not _ARTIFACT_REF.match(ref)
    ):
        issues.append(
            make_issue(
                "artifact_ref_invalid",
                f"{at}.artifact_ref",
                f"artifact_ref must be 1 to {MAX_ARTIFACT_REF_CHARS} characters without spaces "
                "or control characters",
            )
        )


def _check_mime(issues: list[Issue], at: str, mime: Any, path: str, has_content: bool) -> str:
    if mime is None:
        suffix = "." + path.rsplit(".", 1)[1].lower() if "." in path.rsplit("/", 1)[-1] else ""
        fallback = "text/plain" if has_content else "application/octet-stream"
        return DEFAULT_MIME_BY_SUFFIX.get(suffix, fallback)
    if not isinstance(mime, str) or not _MIME.match(mime):
        issues.append(
            make_issue(
                "mime_type_invalid",
                f"{at}.mime_type",
                "mime_type must be a lowercase type/subtype without parameters",
            )
        )
        return ""
    return mime


def _check_metadata(issues: list[Issue], at: str, metadata: Any) -> Mapping[str, Any]:
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        issues.append(
            make_issue("metadata_invalid", f"{at}.metadata", "metadata must be an object")
        )
        return {}
    try:
        size = len(rfc8785.dumps(metadata))
    except (rfc8785.CanonicalizationError, UnicodeEncodeError, RecursionError, TypeError):
        issues.append(
            make_issue(
                "metadata_invalid",
                f"{at}.metadata",
                "metadata must be canonicalisable JSON (integers within +/-2^53, valid UTF-8)",
            )
        )
        return {}
    if size > MAX_METADATA_BYTES:
        issues.append(
            make_issue(
                "metadata_invalid",
                f"{at}.metadata",
                f"metadata must be at most {MAX_METADATA_BYTES} bytes as canonical JSON",
            )
        )
        return {}
    return metadata


def component_secrets(index: int, component: Component) -> list[Issue]:
    at = f"components[{index}]"
    issues: list[Issue] = []
    if component.content is not None:
        issues.extend(secret_issues(component.content, f"{at}.content"))
        issues.extend(pii_issues(component.content, f"{at}.content"))
    if component.artifact_ref is not None:
        issues.extend(secret_issues(component.artifact_ref, f"{at}.artifact_ref"))
        issues.extend(pii_issues(component.artifact_ref, f"{at}.artifact_ref"))
    first: dict[str, int] = {}
    for _, rule, offset in personal_data_in_json(dict(component.metadata)):
        first.setdefault(rule, offset)
    issues.extend(pii_issue(f"{at}.metadata", rule, offset) for rule, offset in first.items())
    # A metadata key may itself be a value the caller typed: name the field, not the key path.
    for rule in dict.fromkeys(rule for _, rule in scan_json(dict(component.metadata))):
        issues.append(
            Issue(
                "component_validation",
                "secret_detected",
                f"{at}.metadata",
                f"{at}.metadata holds a secret (rule '{rule}'); remove it",
                rule,
            )
        )
    return issues
